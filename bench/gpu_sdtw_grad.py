"""Soft-DTW forward + backward on the GPU: tswarp.torch.SoftDTW against the issue's targets.

    python bench/gpu_sdtw_grad.py [--reps 30] [--markdown-out FILE]

Each case times ``loss = SoftDTW(gamma)(x, y); loss.sum().backward()`` on CUDA tensors
(random walks, float32, x and y requiring grad): wall time per call of --reps back-to-back
calls after warm-up, median of 5 rounds; the whole user-visible call (Python, the C call,
the kernels, autograd).
The peer figures are pytorch-softdtw-cuda's on the same H100 (measured 2026-11-22, quoted by
the issue; it fails at N = 1024 and cannot run N = 8192). Beside them, in the same run, a
plain PyTorch autograd soft-DTW (anti-diagonal loop, torch.logsumexp) shows what a user
gets without a custom kernel, for the cases where it finishes quickly.
Cells (for GCUPS): B * N * M per forward + backward.
The column "thread-per-row" times the same call with TSWARP_SDTW_WF=0 (the developer knob that
turns off the float32 wavefront kernel, src/cuda/sdtw_wf.cuh), in the same run; both columns
are the same kernel where the wavefront kernel does not apply (N > 2048).
The column "one wave" times it with TSWARP_SDTW_WF_BI=0: the wavefront kernel's forward sweep
and then its backward sweep, where small batches otherwise run both recursions at once
(src/cuda/sdtw_bi.cuh).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover
    sys.exit("gpu_sdtw_grad.py needs PyTorch")

import tswarp
from tswarp.torch import SoftDTW

CASES = [
    # B, N, M, d, target (s), peer (s) or None, peer label
    (512, 256, 256, 2, 0.60e-3, 6.19e-3, "pytorch-softdtw-cuda"),
    (64, 512, 512, 1, 0.45e-3, 4.63e-3, "pytorch-softdtw-cuda"),
    (16, 1024, 1024, 1, 1.0e-3, None, "pytorch-softdtw-cuda fails (out of resources)"),
    (4, 8192, 8192, 1, None, None, "pytorch-softdtw-cuda cannot run"),
]


def walks(B, N, d, gen):
    x = torch.randn(B, N, d, generator=gen, device="cuda", dtype=torch.float32)
    return torch.cumsum(x, dim=1) * 0.1


def time_it(fn, reps):
    """Median over 5 rounds of the wall time per call of `reps` back-to-back calls (a
    training loop's view: each call returns once its results are written)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - t0) / reps)
    return statistics.median(rounds)


class with_env:
    """Sets environment variables (tswarp's developer knobs) for a with-block."""

    def __init__(self, **kv):
        self.kv, self.old = kv, {}

    def __enter__(self):
        for k, v in self.kv.items():
            self.old[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def scan(gen, reps, gamma):
    """The split's stripe heights (TSWARP_SDTW_WF_SPLIT) on the small-batch cases, each
    against the default choice: time and whether the gradients are the same bits (they are
    where the default is itself a split, one row a lane; against a one-block default with
    two rows a lane, B=64, the column gradient's sums are added in another order)."""
    out = ["", "Split scan (fwd+bwd; 'same' = gradients bit-equal to the default choice):", "",
           "| case | rows/stripe | fwd+bwd | same |", "|---|---|---|---|"]
    for B, N, d in [(64, 512, 1), (16, 1024, 1), (4, 8192, 1)]:
        x = walks(B, N, d, gen).requires_grad_()
        y = walks(B, N, d, gen).requires_grad_()
        fn_mod = SoftDTW(gamma=gamma)

        def step():
            x.grad = None
            y.grad = None
            fn_mod(x, y).sum().backward()

        step()
        ref = (x.grad.clone(), y.grad.clone())
        r = reps if N <= 1024 else 2
        out.append(f"| B={B} N=M={N} | auto | {time_it(step, r) * 1e3:.3f} ms | ref |")
        for rows in (32, 64, 96, 128, 192, 256):
            if rows >= N:
                continue
            with with_env(TSWARP_SDTW_WF_SPLIT=str(rows)):
                t = time_it(step, r)
                same = torch.equal(x.grad, ref[0]) and torch.equal(y.grad, ref[1])
            out.append(f"| B={B} N=M={N} | {rows} | {t * 1e3:.3f} ms | "
                       f"{'yes' if same else 'NO'} |")
    return out


def torch_soft_dtw(x, y, gamma):
    """Plain autograd soft-DTW (squared Euclidean), anti-diagonal by anti-diagonal."""
    B, N, _ = x.shape
    M = y.shape[1]
    D = torch.cdist(x, y) ** 2
    inf = torch.tensor(float("inf"), device=x.device)
    R = [[None] * (M + 1) for _ in range(N + 1)]
    zero = torch.zeros(B, device=x.device)
    for i in range(N + 1):
        for j in range(M + 1):
            R[i][j] = zero if (i == 0 and j == 0) else inf.expand(B)
    for i in range(1, N + 1):
        for j in range(1, M + 1):
            r = torch.stack([R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]])
            R[i][j] = D[:, i - 1, j - 1] - gamma * torch.logsumexp(-r / gamma, dim=0)
    return R[N][M]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--markdown-out")
    ap.add_argument("--scan", action="store_true", help="also scan the split's stripe heights")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    gen = torch.Generator(device="cuda").manual_seed(1234)
    name = torch.cuda.get_device_name(0)
    rows = []
    for B, N, M, d, target, peer, peer_label in CASES:
        x = walks(B, N, d, gen).requires_grad_()
        y = walks(B, M, d, gen).requires_grad_()
        fn_mod = SoftDTW(gamma=args.gamma)

        def step():
            x.grad = None
            y.grad = None
            fn_mod(x, y).sum().backward()

        reps = args.reps if N <= 1024 else 2
        t = time_it(step, reps)
        with with_env(TSWARP_SDTW_WF="0"):
            t_old = time_it(step, reps)
        with with_env(TSWARP_SDTW_WF_BI="0"):
            t_one = time_it(step, reps)
        with torch.no_grad():
            tv = time_it(lambda: fn_mod(x, y), reps)
        # correctness spot check against the CPU backend (float64) on the first pair
        xc = x[:1].detach().double().cpu().numpy()[0]
        yc = y[:1].detach().double().cpu().numpy()[0]
        v_ref, gx_ref, _ = tswarp.soft_dtw_grad(xc, yc, gamma=args.gamma)
        x.grad = None
        fn_mod(x[:1], y[:1]).sum().backward()
        gx = x.grad[0].double().cpu().numpy()
        err = float(np.max(np.abs(gx - gx_ref)) / max(1.0, np.max(np.abs(gx_ref))))
        cells = B * N * M
        rows.append((f"B={B} N=M={N} d={d} f32", t, tv, cells / t / 1e9, target, peer,
                     peer_label, err, t_old, t_one))
    # the plain autograd baseline on a small case only (it is a Python double loop)
    xs = walks(8, 64, 2, gen).requires_grad_()
    ys = walks(8, 64, 2, gen).requires_grad_()
    t_plain = time_it(lambda: torch_soft_dtw(xs, ys, args.gamma).sum().backward(), 1)
    t_ours = time_it(lambda: SoftDTW(gamma=args.gamma)(xs, ys).sum().backward(), 20)

    out = [f"GPU: {name}; torch {torch.__version__}; tswarp {tswarp.__version__}; "
           f"gamma {args.gamma}; wall time per call, {args.reps} calls (N = 8192: fewer) "
           "x 5 rounds, median.", "",
           "| case | fwd+bwd | fwd only | GCUPS (fwd+bwd) | target | vs target | peer | "
           "vs peer | grad rel. err vs CPU f64 | fwd+bwd, thread-per-row kernel | "
           "fwd+bwd, one wave |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, t, tv, g, target, peer, plabel, err, t_old, t_one in rows:
        tgt = f"<= {target * 1e3:.2f} ms" if target else "report"
        met = ("met" if t <= target else "MISSED") if target else ""
        pr = f"{peer * 1e3:.2f} ms ({plabel})" if peer else plabel
        ratio = f"{peer / t:.1f}x" if peer else ""
        out.append(f"| {label} | {t * 1e3:.3f} ms | {tv * 1e3:.3f} ms | {g:.1f} | {tgt} | "
                   f"{met} | {pr} | {ratio} | {err:.1e} | {t_old * 1e3:.3f} ms | "
                   f"{t_one * 1e3:.3f} ms |")
    out.append("")
    out.append(f"Plain PyTorch autograd soft-DTW (anti-diagonal Python loop), B=8 N=M=64 d=2: "
               f"{t_plain * 1e3:.1f} ms; tswarp {t_ours * 1e3:.3f} ms "
               f"({t_plain / t_ours:.0f}x).")
    if args.scan:
        out += scan(gen, args.reps, args.gamma)
    text = "\n".join(out)
    print(text)
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
