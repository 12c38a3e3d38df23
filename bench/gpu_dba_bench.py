#!/usr/bin/env python3
"""DBA's alignment step on the GPU against the CPU's lanes (issue 33): the time of
dtw_barycenter_averaging with max_iter iterations on device='cuda' and device='cpu' in the
same process, float64, and whether the barycenters are equal bit for bit.

    python bench/gpu_dba_bench.py [--iters 5] [--markdown]

Cases: GunPoint train + test (200 x 150, shipped), and random walks of N series of length
L (z-normalised). Cells: series x len x barycenter length per iteration. Best of 3 after a
warm-up call; the CPU with every core the machine has (n_jobs=-1)."""
import argparse
import os
import platform
import time

import numpy as np

import tswarp
from tswarp.datasets import load_gunpoint

ap = argparse.ArgumentParser()
ap.add_argument("--iters", type=int, default=5)
ap.add_argument("--markdown", action="store_true")
args = ap.parse_args()


def best(f, r=3):
    f()
    ts = []
    for _ in range(r):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


rng = np.random.default_rng(0)
cases = []
X, _ = load_gunpoint("train")
Xt, _ = load_gunpoint("test")
cases.append(("GunPoint 200 x 150", np.concatenate([np.asarray(X), np.asarray(Xt)]).reshape(200, -1)))
for n, L in ((4096, 150), (2048, 512)):
    W = rng.normal(size=(n, L)).cumsum(1)
    cases.append((f"random walks {n} x {L}", (W - W.mean(1, keepdims=True)) / W.std(1, keepdims=True)))

print(f"# {platform.node() or 'host'}; {os.cpu_count()} cores; tswarp {tswarp.__version__}; "
      f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {args.iters} DBA iterations, float64")
rows = []
for name, S in cases:
    cells = float(S.shape[0]) * S.shape[1] * S.shape[1] * args.iters
    kw = dict(max_iter=args.iters, tol=0.0)
    tc = best(lambda: tswarp.dtw_barycenter_averaging(S, device="cpu", n_jobs=-1, **kw))
    tg = best(lambda: tswarp.dtw_barycenter_averaging(S, device="cuda", **kw))
    same = np.array_equal(tswarp.dtw_barycenter_averaging(S, device="cpu", **kw),
                          tswarp.dtw_barycenter_averaging(S, device="cuda", **kw))
    rows.append((name, tc, tg, cells / tc, cells / tg, tc / tg, "yes" if same else "NO"))
hdr = ("case", "CPU s", "GPU s", "CPU cells/s", "GPU cells/s", "CPU/GPU", "same barycenter")
if args.markdown:
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
for r in rows:
    vals = (r[0], f"{r[1]:.4f}", f"{r[2]:.4f}", f"{r[3]:.3g}", f"{r[4]:.3g}", f"{r[5]:.1f}x", r[6])
    print(("| " + " | ".join(vals) + " |") if args.markdown else "  ".join(vals))
