#!/usr/bin/env python3
"""Where the time of a small GPU batch goes: tswarp.paired on CuPy arrays for batch sizes
1..4096 and lengths 32..256 (soft-DTW d=2 f32 and DTW d=1 f32), CUDA-event medians. The
B=1 rows are the fixed cost of a call (Python, checks, launches); the slope is the kernel.

    python dev/gpu_latency.py

Found (H100, 2026-11-22): the fixed cost of a call is about 0.14 ms (the B=1 rows); the
kernels' slope takes over from B of a few hundred (bench/HISTORY.md, "Latency of small
batches").
"""
import sys
import time

import numpy as np

try:
    import cupy as cp
except ImportError:  # pragma: no cover - needs a GPU machine
    sys.exit("gpu_latency.py needs CuPy")
import tswarp


def timed(fn, reps=30):
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    return float(np.median(ts))


def main():
    rng = np.random.default_rng(0)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  "
          f"{tswarp.info()['gpus'][0]['name']}")
    print(f"{'metric':9} {'B':>5} {'N':>4} {'d':>2} {'time us':>9} {'GCUPS':>7}")
    for metric, d in (("soft_dtw", 2), ("dtw", 1)):
        for n in (32, 256):
            for B in (1, 64, 512, 4096):
                X = cp.asarray(rng.standard_normal((B, n, d)).cumsum(1), dtype=cp.float32)
                Y = cp.asarray(rng.standard_normal((B, n, d)).cumsum(1), dtype=cp.float32)
                t = timed(lambda: tswarp.paired(X, Y, metric=metric))
                print(f"{metric:9} {B:5d} {n:4d} {d:2d} {t:9.1f} {B * n * n / t / 1e3:7.1f}")
    # the C call alone, without the Python planning: a numpy-free CuPy cdist of one pair
    X = cp.asarray(rng.standard_normal((1, 4, 1)), dtype=cp.float32)
    print(f"cdist 1x1 len 4 (fixed cost): {timed(lambda: tswarp.cdist(X, X)):.1f} us")


if __name__ == "__main__":
    main()
