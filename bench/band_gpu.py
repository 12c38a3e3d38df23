"""One long pair in a narrow Sakoe-Chiba band on the GPU, beside the CPU, same run.

A band of radius r must cost O(n r) on every device (issue 36, item 5): each row of the
table is one length, each column one call, timed in the same process on the same machine,
float64 (the GPU's one-pair kernels and the CPU's), best of `--repeat` after a warm-up.
Soft-DTW's gradient goes through tswarp.torch (value and backward, CPU tensors against CUDA
tensors) when PyTorch is installed.
The CPU columns use one thread (tswarp's one-pair distance kernels are single-threaded;
`dtw_path` gets n_jobs=1). dtaidistance's `distance_fast` (window r + 1) is the CPU peer
when it is installed. Values and paths are checked equal between the devices first.

    python bench/band_gpu.py [--radius 10] [--lengths 100000,200000,400000,1000000]
                             [--repeat 3] [--markdown]
"""

import platform

import numpy as np

import tswarp
# the same command line, pairs, peer and timing rule (bench/ is the script's folder)
from band_cpu import band_args, band_pairs, best, dtai_or_none


try:
    import torch
    import tswarp.torch as tsw_torch
except ImportError:  # the gradient columns need PyTorch
    torch = None


def sdtw_grad(a, b, r, device):
    """Soft-DTW's value and gradient through tswarp.torch on one device (float64)."""
    x = torch.tensor(a, device=device).view(1, -1, 1).requires_grad_()
    y = torch.tensor(b, device=device).view(1, -1, 1)
    tsw_torch.soft_dtw(x, y, radius=r).sum().backward()
    return x.grad.view(-1).cpu().numpy()


def main():
    args = band_args(__doc__, 3)
    dtai = dtai_or_none()
    r = args.radius
    rows = []
    for n, a, b, cells in band_pairs(args.lengths, r):
        row = {"n": n, "cells": cells}
        # values equal across devices first (the GPU's one-pair kernels give the CPU's bits
        # for DTW; soft-DTW to 1e-12 relative)
        d_cpu = tswarp.dtw(a, b, radius=r, device="cpu")
        d_gpu = tswarp.dtw(a, b, radius=r, device="cuda")
        assert d_cpu == d_gpu, (n, d_cpu, d_gpu)
        s_cpu = tswarp.soft_dtw(a, b, radius=r, device="cpu")
        s_gpu = tswarp.soft_dtw(a, b, radius=r, device="cuda")
        assert abs(s_cpu - s_gpu) <= 1e-12 * abs(s_cpu), (n, s_cpu, s_gpu)
        p_cpu, c_cpu = tswarp.dtw_path(a, b, radius=r, device="cpu", n_jobs=1)
        p_gpu, c_gpu = tswarp.dtw_path(a, b, radius=r, device="cuda")
        assert c_cpu == c_gpu and np.array_equal(p_cpu, p_gpu), n
        row["dtw cpu"] = best(lambda: tswarp.dtw(a, b, radius=r, device="cpu"), args.repeat)
        row["dtw gpu"] = best(lambda: tswarp.dtw(a, b, radius=r, device="cuda"), args.repeat)
        row["sdtw cpu"] = best(lambda: tswarp.soft_dtw(a, b, radius=r, device="cpu"),
                               args.repeat)
        row["sdtw gpu"] = best(lambda: tswarp.soft_dtw(a, b, radius=r, device="cuda"),
                               args.repeat)
        row["path cpu"] = best(lambda: tswarp.dtw_path(a, b, radius=r, device="cpu",
                                                       n_jobs=1), 1)
        row["path gpu"] = best(lambda: tswarp.dtw_path(a, b, radius=r, device="cuda"),
                               args.repeat)
        if torch is not None:
            g_cpu, g_gpu = sdtw_grad(a, b, r, "cpu"), sdtw_grad(a, b, r, "cuda")
            # the devices' exp and log differ in the last bits: relative to the largest entry
            row["grad diff"] = float(np.abs(g_cpu - g_gpu).max()) / float(np.abs(g_cpu).max())
            assert row["grad diff"] <= 1e-6, (n, row["grad diff"])
            row["grad cpu"] = best(lambda: sdtw_grad(a, b, r, "cpu"), 1)
            row["grad gpu"] = best(lambda: sdtw_grad(a, b, r, "cuda"), args.repeat)
        if dtai is not None:
            want = dtai.distance_fast(a, b, window=r + 1, use_pruning=False)
            assert abs(d_cpu - want) <= 1e-9 * max(1.0, abs(want)), (n, d_cpu, want)
            row["dtai"] = best(lambda: dtai.distance_fast(a, b, window=r + 1), args.repeat)
        rows.append(row)
        print(f"  n={n}: done", flush=True)
    gpus = tswarp.info()["gpus"]
    dev = gpus[0].get("name", "GPU") if gpus and isinstance(gpus[0], dict) else "GPU"
    print(f"# one pair, Sakoe-Chiba radius {r}, float64, best of {args.repeat} (CPU path: one "
          f"run); {platform.processor() or platform.machine()} + {dev}, tswarp "
          f"{tswarp.__version__}")
    cols = ["dtw cpu", "dtw gpu", "sdtw cpu", "sdtw gpu", "grad cpu", "grad gpu", "path cpu",
            "path gpu", "dtai"]
    head = ["n", "cells"] + cols + ["gpu ns/point (dtw, sdtw, grad, path)", "grad gpu-cpu"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for row in rows:
        out = [f"{row['n']:,}", f"{row['cells']:,}"]
        for c in cols:
            out.append(f"{row[c] * 1e3:.2f} ms" if c in row else "-")
        out.append(", ".join(f"{row[c] / row['n'] * 1e9:.0f}" if c in row else "-"
                             for c in ("dtw gpu", "sdtw gpu", "grad gpu", "path gpu")))
        out.append(f"{row['grad diff']:.1e}" if "grad diff" in row else "-")
        print(("| " + " | ".join(out) + " |") if args.markdown else "  ".join(out))


if __name__ == "__main__":
    main()
