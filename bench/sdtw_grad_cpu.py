"""Soft-DTW value + gradient on the CPU: tswarp vs tslearn, side by side in one run.

    .venv/bin/python bench/sdtw_grad_cpu.py [--pairs 100] [--length 256] [--gamma 1.0]
                                            [--repeat 3] [--threads N]

For d = 1 and d = 2: `pairs` random pairs (standard normal, seed 0) of `length` points;
every contender computes the value and the gradient with respect to x of each pair:
  - tswarp.soft_dtw_grad on the (pairs, length, d) batch (one C call, OpenMP over pairs;
    the gradient with respect to y comes too);
  - tswarp.torch.SoftDTW forward + backward on CPU tensors (the same C call behind autograd);
  - tslearn: soft_dtw_alignment per pair (value and E) plus SquaredEuclidean's
    jacobian_product (E to the gradient), its numpy/numba API;
  - tslearn.metrics.SoftDTWLossPyTorch forward + backward on the batch (its numba kernels).
The best of `repeat` runs after one warm-up (numba compilation not timed). Cells/s counts
n*m DP cells per pair (forward and backward together); ratio = contender time / tswarp time.

    .venv/bin/python bench/sdtw_grad_cpu.py --dims 1,16,64,96,128,256 [--pairs 8]

times tswarp.soft_dtw_grad at each feature dimension three ways in one run: the fused C
kernel (TSWARP_SDTW_MAT=0), the matrix form (=1: the costs by numpy's BLAS, the C
cost-matrix kernel, the gradients by products; tswarp/_sdtw.py) and the default choice,
beside tslearn's SoftDTWLossPyTorch forward + backward (the same float64 gradient).
"""

import argparse
import os
import platform
import time

import numpy as np


def best_of(fn, repeat):
    fn()  # warm-up: numba compilation, first-touch allocations
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=100)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="tswarp threads (default all)")
    ap.add_argument("--dims", help="comma-separated dims: the crossover table instead")
    args = ap.parse_args()
    if args.dims:
        return dims_table(args)

    import tswarp

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"tswarp {tswarp.__version__} ({tswarp.info()['simd']}, "
          f"{args.threads or tswarp.info()['threads']} threads), {args.pairs} pairs of "
          f"length {args.length}, gamma {args.gamma}")
    rows = []
    for d in (1, 2):
        rng = np.random.default_rng(0)
        X = rng.standard_normal((args.pairs, args.length, d))
        Y = rng.standard_normal((args.pairs, args.length, d))
        cells = args.pairs * args.length * args.length
        res = {}
        res["tswarp soft_dtw_grad"] = best_of(
            lambda: tswarp.soft_dtw_grad(X, Y, gamma=args.gamma, n_jobs=args.threads),
            args.repeat)
        try:
            import torch
            from tswarp.torch import SoftDTW

            fn = SoftDTW(gamma=args.gamma, n_jobs=args.threads)

            def tsw_torch():
                x = torch.tensor(X, requires_grad=True)
                fn(x, torch.tensor(Y)).sum().backward()

            res["tswarp.torch SoftDTW fwd+bwd"] = best_of(tsw_torch, args.repeat)
        except ImportError:
            torch = None
        try:
            from tslearn.metrics import SquaredEuclidean, soft_dtw_alignment

            def tsl_align():
                for k in range(args.pairs):
                    E, v = soft_dtw_alignment(X[k], Y[k], gamma=args.gamma)
                    SquaredEuclidean(X[k], Y[k]).jacobian_product(E)

            res["tslearn soft_dtw_alignment + jacobian"] = best_of(tsl_align, args.repeat)
            if torch is not None:
                from tslearn.metrics import SoftDTWLossPyTorch

                loss = SoftDTWLossPyTorch(gamma=args.gamma)

                def tsl_torch():
                    x = torch.tensor(X, requires_grad=True)
                    loss(x, torch.tensor(Y)).sum().backward()

                res["tslearn SoftDTWLossPyTorch fwd+bwd"] = best_of(tsl_torch, args.repeat)
        except ImportError:
            print("# tslearn not installed: peers skipped")
        base = res["tswarp soft_dtw_grad"]
        for name, t in res.items():
            rows.append((d, name, t, cells / t, t / base))
    print(f"| d | contender | time s | cells/s | ratio (time / tswarp) |")
    print(f"|--:|---|---:|---:|---:|")
    for d, name, t, cps, ratio in rows:
        print(f"| {d} | {name} | {t:.4f} | {cps:.3g} | {ratio:.1f}x |")


def dims_table(args):
    """The fused kernel, the matrix form and the default at each dim, one run."""
    import tswarp

    try:
        import torch
        from tslearn.metrics import SoftDTWLossPyTorch
    except ImportError:
        SoftDTWLossPyTorch = None
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, tswarp "
          f"{tswarp.__version__}, {args.pairs} pairs of length {args.length}, gamma "
          f"{args.gamma}, float64, best of {args.repeat}")
    print("| d | fused s | matrix s | default s | fused / matrix | tslearn s | "
          "tslearn / default |")
    print("|--:|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for d in (int(v) for v in args.dims.split(",")):
        X = rng.standard_normal((args.pairs, args.length, d))
        Y = rng.standard_normal((args.pairs, args.length, d))
        t = {}
        for label, knob in (("fused", "0"), ("matrix", "1"), ("default", None)):
            if knob is None:
                os.environ.pop("TSWARP_SDTW_MAT", None)
            else:
                os.environ["TSWARP_SDTW_MAT"] = knob
            t[label] = best_of(lambda: tswarp.soft_dtw_grad(
                X, Y, gamma=args.gamma, n_jobs=args.threads, layout="channels_last"),
                args.repeat)
        os.environ.pop("TSWARP_SDTW_MAT", None)
        tl = ""
        ratio = ""
        if SoftDTWLossPyTorch is not None:
            loss = SoftDTWLossPyTorch(gamma=args.gamma)

            def tsl():
                x = torch.tensor(X, requires_grad=True)
                loss(x, torch.tensor(Y)).sum().backward()

            tt = best_of(tsl, args.repeat)
            tl, ratio = f"{tt:.4f}", f"{tt / t['default']:.1f}x"
        print(f"| {d} | {t['fused']:.4f} | {t['matrix']:.4f} | {t['default']:.4f} | "
              f"{t['fused'] / t['matrix']:.2f} | {tl} | {ratio} |")


if __name__ == "__main__":
    main()
