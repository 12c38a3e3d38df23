#!/usr/bin/env python3
"""Where the fixed cost of a small GPU call goes: wall time per call of tswarp.paired (and
cdist of one tiny pair) on CuPy arrays, and a cProfile of the Python side.

    python dev/gpu_overhead.py [--calls 300] [--profile]

Run it under `nsys profile --stats=true` to see the CUDA API calls per call as well.

Found: the Python side of a small call is a few microseconds (1.22 us per tswarp.dtw
call of two 16-point series on the CPU, bench/RESULTS.md); the rest of a GPU call's fixed
cost is the CUDA API calls that nsys lists (bench/HISTORY.md).
"""
import argparse
import cProfile
import pstats
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    import cupy as cp
    import numpy as np

    import tswarp

    rng = np.random.default_rng(1)
    X = cp.asarray(rng.standard_normal((512, 256, 2)).astype(np.float32))
    Y = cp.asarray(rng.standard_normal((512, 256, 2)).astype(np.float32))
    x1 = cp.asarray(rng.standard_normal((1, 4)).astype(np.float32))
    cases = {
        "paired soft 512x256x256 d2": lambda: tswarp.paired(X, Y, metric="soft_dtw", device="cuda"),
        "cdist 1x1 len 4": lambda: tswarp.cdist(x1, x1, metric="dtw", device="cuda"),
    }
    stream = cp.cuda.get_current_stream()
    for name, fn in cases.items():
        for _ in range(20):
            fn()
        stream.synchronize()
        walls, gpu = [], []
        for _ in range(args.calls):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            t0 = time.perf_counter()
            s.record()
            fn()
            e.record()
            e.synchronize()
            walls.append(time.perf_counter() - t0)
            gpu.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
        print(f"{name:30s} wall median {statistics.median(walls) * 1e6:8.1f} us   "
              f"events median {statistics.median(gpu) * 1e6:8.1f} us")
        if args.profile:
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(args.calls):
                fn()
            stream.synchronize()
            pr.disable()
            st = pstats.Stats(pr)
            st.sort_stats("tottime").print_stats(14)
    return 0


if __name__ == "__main__":
    sys.exit(main())
