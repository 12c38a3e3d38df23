"""Several GPUs in one process (tsw_exec.n_devices): knn and the shapelet search (issue 34).

    python bench/multi_gpu.py --gpus 4 [--knn-n 100000] [--knn-length 128] [--osuleaf NPZ]

For g = 1, 2, 4, ... up to --gpus, in one run on one machine:
- knn: the k = 10 nearest of each of n float32 random walks among the same n (DTW, window
  0.1), `tswarp.knn(X, X, k=10, window=0.1, device=[0 .. g-1])`;
- shapelets: `find_shapelet` over every candidate of OSULeaf's train set (200 x 427,
  lengths 3..427, z-normalised; --osuleaf: the arrays saved by
  `bench/gpu_shapelets.py --save-osuleaf`, where aeon is installed).
Each call is timed once after a warm-up on small data (the CUDA contexts of the devices);
the results on g GPUs must equal one GPU's bit for bit (checked). Scaling efficiency =
t(1 GPU) / (g t(g GPUs)).
"""

import argparse
import time

import numpy as np

import tswarp
from tswarp.shapelets import find_shapelet


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def devices(g):
    return "cuda" if g == 1 else list(range(g))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--knn-n", type=int, default=100000)
    ap.add_argument("--knn-length", type=int, default=128)
    ap.add_argument("--osuleaf", metavar="NPZ")
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    sizes = [g for g in (1, 2, 4, 8) if g <= args.gpus]
    rng = np.random.default_rng(args.seed)
    rows = []

    # warm-up: every device's context
    small = rng.standard_normal((64, 32)).cumsum(axis=1).astype(np.float32)
    for g in sizes:
        tswarp.knn(small, small, k=2, window=0.1, device=devices(g))

    X = rng.standard_normal((args.knn_n, args.knn_length)).cumsum(axis=1).astype(np.float32)
    ref = None
    for g in sizes:
        t, (D, I) = timed(lambda: tswarp.knn(X, X, k=10, window=0.1, device=devices(g)))
        if ref is None:
            ref, t1 = (D, I), t
        else:
            assert np.array_equal(D, ref[0]) and np.array_equal(I, ref[1]), g
        rows.append((f"knn {args.knn_n:,} x {args.knn_n:,}, length {args.knn_length}, "
                     "k 10, window 0.1, float32", g, t, t1 / (g * t)))
        print(rows[-1], flush=True)
    del X, ref

    if args.osuleaf:
        d = np.load(args.osuleaf, allow_pickle=False)
        Xo, yo = d["X"], d["y"]
        find_shapelet(Xo[:6, :20], yo[:6], device=devices(sizes[-1]))
        ref = None
        for g in sizes:
            t, s = timed(lambda: find_shapelet(Xo, yo, min_length=3, device=devices(g)))
            key = (s.series, s.start, s.length, s.threshold, s.gain, s.gap)
            if ref is None:
                ref, t1 = key, t
            else:
                assert key == ref, (g, key, ref)
            rows.append(("find_shapelet, OSULeaf train 200 x 427, lengths 3..427", g, t,
                         t1 / (g * t)))
            print(rows[-1], flush=True)

    gpus = tswarp.info().get("gpus") or [{}]
    print(f"\n## Several GPUs in one process ({gpus[0].get('name', 'GPU')} x "
          f"{len(gpus)} visible)\n")
    print("| call | GPUs | s | scaling efficiency |")
    print("|---|---|---|---|")
    for how, g, t, eff in rows:
        print(f"| {how} | {g} | {t:.3f} | {eff:.2f} |")
    print("every result on several GPUs equals one GPU's bit for bit")


if __name__ == "__main__":
    main()
