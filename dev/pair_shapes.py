#!/usr/bin/env python3
"""Tuning run for the one-long-pair CUDA kernel: block shape R x C (rows x columns per lane
and step) against time, for the dim-1 DTW (sqeuclidean) and TWED (p = 2) kernels.

    python dev/pair_shapes.py [--shapes 2x4,4x4,4x8,8x4,8x8] [--repeats 5] [--quick] [--lag]

Each shape runs in its own process with TSWARP_CUDA_PAIR_SHAPE=RxC (the developer knob read
once by src/cuda/kernels_pair.cu; it needs a build configured with -DTSWARP_CUDA_TUNING=ON,
as tests/gpu/run.sh does: other builds run their default shape whatever the knob says). Cases: the issue's single pairs, plus "lone" rows (one
stripe of 32 C columns against n rows: the time of one warp's sweep, N / R steps, with no
neighbour to wait for) that separate the per-step time from the wavefront's fill. Every
shape's value on a 20,000 x 20,000 pair is checked against the CPU backend (rel. diff).
Inputs: random walks as CuPy arrays (zero-copy); time = median of CUDA-event timings after a
warm-up call.

Found (H100, 2026-11-22): 4 x 8 is the fastest shape for DTW float32 (23.4 ms for a
100,000-point pair) and TWED float32; 2 x 4 for TWED float64 (77 ms at 131,072 points).
The kernel's time is about (N / R + S x lag) x step time: one warp alone sweeps 100,000
rows in 9.5-11.6 ms, each further stripe adds 60-75 steps of hand-over lag; __nanosleep
back-off changed nothing and 16-row chunks were slower than 32 (bench/HISTORY.md).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def lag_worker(repeats):
    """DTW float32, N = 100,000 rows against S stripes (M = 32 C S): the time's slope in S
    is the hand-over lag of one stripe."""
    import cupy as cp
    import numpy as np

    import tswarp

    rng = np.random.default_rng(7)
    C = int(re.match(r"\d+x(\d+)", os.environ["TSWARP_CUDA_PAIR_SHAPE"]).group(1))
    a = cp.asarray(np.cumsum(rng.standard_normal(100_000)).astype(np.float32))
    out = []
    for S in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
        b = cp.asarray(np.cumsum(rng.standard_normal(32 * C * S)).astype(np.float32))
        f = lambda: tswarp.dtw(a, b, device="cuda")  # noqa: E731
        f()
        ts = []
        for _ in range(repeats):
            s0, e0 = cp.cuda.Event(), cp.cuda.Event()
            s0.record()
            f()
            e0.record()
            e0.synchronize()
            ts.append(cp.cuda.get_elapsed_time(s0, e0) / 1e3)
        out.append({"case": f"lag S={S}", "t": statistics.median(ts), "cells": 100_000 * 32 * C * S})
    print(json.dumps(out))


def worker(repeats, quick):
    import cupy as cp
    import numpy as np

    import tswarp

    rng = np.random.default_rng(7)
    out = []

    def walk(n, dt):
        return np.cumsum(rng.standard_normal(n)).astype(dt)

    def timed(fn):
        fn()
        cp.cuda.get_current_stream().synchronize()
        ts = []
        for _ in range(repeats):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
        return statistics.median(ts)

    C = int(re.match(r"\d+x(\d+)", os.environ["TSWARP_CUDA_PAIR_SHAPE"]).group(1))
    cases = [("dtw", "f32", 100_000, 100_000), ("dtw", "f32", 100_000, 32 * C),
             ("dtw", "f64", 100_000, 100_000), ("dtw", "f64", 100_000, 32 * C),
             ("twed", "f64", 65_536, 65_536), ("twed", "f64", 65_536, 32 * C),
             ("twed", "f64", 131_072, 131_072), ("twed", "f32", 131_072, 131_072),
             ("twed", "f32", 131_072, 32 * C)]
    if quick:
        cases = [(m, d, n // 8, k if k < 1000 else k // 8) for m, d, n, k in cases]
    for meas, dt, n, m in cases:
        npdt = np.float32 if dt == "f32" else np.float64
        a, b = cp.asarray(walk(n, npdt)), cp.asarray(walk(m, npdt))
        f = (lambda: tswarp.dtw(a, b, device="cuda")) if meas == "dtw" else \
            (lambda: tswarp.twed(a, b, nu=1.0, lmbda=1.0, device="cuda"))
        t = timed(f)
        out.append({"case": f"{meas} {dt} {n}x{m}", "t": t, "cells": n * m})
    # agreement with the CPU backend
    for meas, dt in (("dtw", np.float32), ("dtw", np.float64), ("twed", np.float64),
                     ("twed", np.float32)):
        n = 20_000 if not quick else 3_000
        a, b = walk(n, dt), walk(n + 77, dt)
        fn = tswarp.dtw if meas == "dtw" else tswarp.twed
        kw = {} if meas == "dtw" else {"nu": 1.0, "lmbda": 1.0}
        g = float(fn(cp.asarray(a), cp.asarray(b), device="cuda", **kw))
        c = float(fn(a, b, device="cpu", **kw))
        out.append({"case": f"check {meas} {np.dtype(dt).name}", "rel": abs(g - c) / abs(c)})
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="2x4,4x4,4x8,8x4,8x8",
                    help="RxC[c16] or RxC[c16]/sleep_ns (TSWARP_CUDA_PAIR_SLEEP), "
                         "comma-separated")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--lag", action="store_true", help="stripes-vs-time runs (DTW f32)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return lag_worker(args.repeats) if args.lag else worker(args.repeats, args.quick)
    rows = {}
    for spec in args.shapes.split(","):
        shape, _, sleep = spec.partition("/")  # RxC or RxC/sleep_ns
        env = dict(os.environ, TSWARP_CUDA_PAIR_SHAPE=shape)
        if sleep:
            env["TSWARP_CUDA_PAIR_SLEEP"] = sleep
        cmd = [sys.executable, __file__, "--worker", "--repeats", str(args.repeats)]
        if args.quick:
            cmd.append("--quick")
        if args.lag:
            cmd.append("--lag")
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"# shape {spec}: failed\n{r.stderr[-2000:]}")
            continue
        rows[spec] = json.loads(r.stdout.strip().splitlines()[-1])
    shapes = list(rows)
    if not shapes:
        return 1
    print("case".ljust(28) + "".join(s.rjust(18) for s in shapes))
    for i, row in enumerate(rows[shapes[0]]):
        line = row["case"].ljust(28)
        for s in shapes:
            x = rows[s][i]
            if "t" in x:
                line += f"{x['t'] * 1e3:9.2f}ms{x['cells'] / x['t'] / 1e9:6.0f}G".rjust(18)
            else:
                line += f"{x['rel']:.1e}".rjust(18)
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
