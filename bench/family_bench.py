"""The elastic family (issue 33) on the CPU: pdist of a data set aeon ships, tswarp beside
aeon's <measure>_pairwise_distance in the same run, on the same machine, float64, the same
thread count.

    python bench/family_bench.py                       # GunPoint (train + test), 2 threads
    python bench/family_bench.py --dataset ArrowHead --threads 2 --window 0.1

aeon's first call of each measure compiles it (numba): it runs once on two series before
the timing. The table gives each implementation's best of --repeat runs, the cells per
second (pairs x n x m, the whole grid, whatever the window) and tswarp's speed-up. The
values are compared too: equal to 1e-9 except ERP and EDR, whose boundary conventions
differ from aeon 1.6 (tswarp follows the papers; see tswarp.erp and tswarp.edr), for which
the largest difference is reported.
"""

import argparse
import os
import platform
import time

import numpy as np

import tswarp

MEASURES = {
    "wdtw": {"g": 0.05},
    "ddtw": {},
    "wddtw": {"g": 0.05},
    "adtw": {"warp_penalty": 1.0},
    "erp": {"g": 0.0},
    "edr": {},
    "lcss": {"epsilon": 1.0},
    "msm": {"c": 1.0},
    "shape_dtw": {"reach": 15},
}


def best_of(f, repeat):
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="GunPoint")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--window", type=float, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--measures", nargs="*", default=list(MEASURES))
    args = ap.parse_args()

    from aeon import distances as ad
    from aeon.datasets import load_classification

    Xtr, _ = load_classification(args.dataset, split="train")
    Xte, _ = load_classification(args.dataset, split="test")
    X = np.ascontiguousarray(np.concatenate([Xtr, Xte]), dtype=np.float64)  # (n, d, len)
    n, d, length = X.shape
    pairs = n * (n - 1) // 2
    cells = pairs * float(length) * float(length)
    win = {} if args.window is None else {"window": args.window}
    print(f"tswarp {tswarp.__version__}, {tswarp.info().get('cpu_simd', '?')}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{args.dataset} train + test: {n} series x {d} dims x {length} points, "
          f"{pairs} pairs, window {args.window}, {args.threads} threads, float64")
    print()
    print("| measure | aeon s | tswarp s | aeon cells/s | tswarp cells/s | ratio | values |")
    print("|---|---|---|---|---|---|---|")
    for m in args.measures:
        kw = MEASURES[m]
        fn = getattr(ad, f"{m}_pairwise_distance")
        fn(X[:2], n_jobs=args.threads, **win, **kw)  # numba compiles here
        ta, A = best_of(lambda: fn(X, n_jobs=args.threads, **win, **kw), args.repeat)
        tkw = dict(kw, accumulated=True) if m == "ddtw" else kw
        tt, T = best_of(lambda: tswarp.pdist(X, metric=m, n_jobs=args.threads,
                                             layout="channels_first", **win, **tkw),
                        args.repeat)
        diff = float(np.max(np.abs(A - T)))
        if m in ("erp", "edr"):
            same = f"max diff {diff:.3g} (boundary convention)"
        else:
            ok = np.allclose(T, A, rtol=1e-9, atol=1e-9)
            same = "equal (1e-9)" if ok else f"DIFFER: max {diff:.3g}"
        print(f"| {m} | {ta:.3f} | {tt:.3f} | {cells / ta:.3g} | {cells / tt:.3g} | "
              f"{ta / tt:.1f}x | {same} |")


if __name__ == "__main__":
    main()
