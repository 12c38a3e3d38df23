#!/usr/bin/env python3
"""GPU benchmark of the elastic family (issue 33): cdist of N x N series of length L in
float32 for every measure, in cells per second beside DTW's, measured in the same run.

    python bench/gpu_family_bench.py [--n 4096] [--length 256] [--repeats 3] [--markdown]

Inputs: random walks (cumulative sums of N(0, 1) steps, z-normalised), float32, on the GPU as
CuPy arrays (else torch tensors) read in place, so no transfer is timed. Each measure: one
warm-up call, then the median of --repeats calls, timed with a device synchronisation. The
check column compares a 48 x 48 corner with the CPU backend (the same values bit for bit,
WDTW and WDDTW within 1e-6: their weights come from the GPU's exp). Cells: n * m per pair
(DDTW and WDDTW: (L - 2)^2, the derivatives' grid). The target: within 2x of DTW's rate.
Shape DTW (reach 15: 31 values a descriptor, in double, every pair's whole matrix) runs a
--shape-n x --shape-n cdist; its cells/s counts the matrix's cells, as for the others.
"""
import argparse
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import tswarp

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--n", type=int, default=4096)
ap.add_argument("--length", type=int, default=256)
ap.add_argument("--repeats", type=int, default=3)
ap.add_argument("--shape-n", type=int, default=256,
                help="series in shape DTW's cdist (its kernel holds every pair's matrix)")
ap.add_argument("--only", default="", help="comma-separated measures (dtw always runs)")
ap.add_argument("--markdown", action="store_true")
ap.add_argument("--seed", type=int, default=20261202)
args = ap.parse_args()

try:
    import cupy

    put, sync, lib = cupy.asarray, cupy.cuda.Device().synchronize, f"cupy {cupy.__version__}"
except ImportError:
    import torch

    put = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
    sync, lib = torch.cuda.synchronize, f"torch {torch.__version__}"

rng = np.random.default_rng(args.seed)
X = rng.normal(size=(args.n, args.length)).cumsum(1)
X = ((X - X.mean(1, keepdims=True)) / X.std(1, keepdims=True)).astype(np.float32)
Xg = put(X)

CASES = [("dtw", {}), ("wdtw", {}), ("ddtw", {}), ("wddtw", {}), ("adtw", {}), ("erp", {}),
         ("edr", {}), ("edr", {"epsilon": 0.25}), ("lcss", {}), ("msm", {}),
         ("msm", {"independent": False}), ("shape_dtw", {})]
if args.only:
    keep = set(args.only.split(",")) | {"dtw"}
    CASES = [c for c in CASES if c[0] in keep]


def time_it(fn):
    fn()
    sync()
    ts = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


rows = []
dtw_rate = None
for metric, kw in CASES:
    L = args.length - 2 if metric in ("ddtw", "wddtw") else args.length
    n = args.shape_n if metric == "shape_dtw" else args.n
    cells = float(n) * n * L * L
    t = time_it(lambda: tswarp.cdist(Xg[:n], Xg[:n], metric=metric, device="cuda", **kw))
    rate = cells / t
    if metric == "dtw":
        dtw_rate = rate
    k = 48
    got = tswarp.cdist(X[:k], X[:k], metric=metric, device="cuda", **kw)
    exp = tswarp.cdist(X[:k], X[:k], metric=metric, device="cpu", **kw)
    tol = 1e-6 if metric in ("wdtw", "wddtw") else 0.0
    ok = np.all((got == exp) | (np.abs(got - exp) <= tol * np.abs(exp)))
    name = metric + ("" if not kw else " " + ",".join(f"{a}={b}" for a, b in kw.items()))
    if n != args.n:
        name += f" ({n} x {n})"
    rows.append((name, t, rate, rate / dtw_rate, "PASS" if rate * 2 >= dtw_rate else "MISS",
                 "same" if ok else "DIFFERS"))

gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
print(f"# {gpu}; tswarp {tswarp.__version__}; {lib}; numpy {np.__version__}; "
      f"python {platform.python_version()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
print(f"# cdist of {args.n} x {args.n} random walks of length {args.length}, float32, "
      f"device arrays; median of {args.repeats} after a warm-up")
hdr = ("measure", "time (s)", "cells/s", "rate / DTW's", "within 2x", "vs CPU")
if args.markdown:
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for r in rows:
        print(f"| {r[0]} | {r[1]:.3f} | {r[2] / 1e12:.2f} T | {r[3]:.2f} | {r[4]} | {r[5]} |")
else:
    print(f"{hdr[0]:<22}{hdr[1]:>10}{hdr[2]:>12}{hdr[3]:>14}{hdr[4]:>11}{hdr[5]:>9}")
    for r in rows:
        print(f"{r[0]:<22}{r[1]:>10.3f}{r[2] / 1e12:>10.2f} T{r[3]:>14.2f}{r[4]:>11}{r[5]:>9}")
sys.exit(0 if all(r[5] == "same" for r in rows) else 1)
