"""Several GPUs in one process (tsw_exec.n_devices): knn, the shapelet search, GPU arrays (issue 34).

    python bench/multi_gpu.py --gpus 4 [--knn-n 100000] [--knn-length 128] [--osuleaf NPZ]
                              [--cupy N] [--torch B]

For g = 1, 2, 4, ... up to --gpus, in one run on one machine:
- knn: the k = 10 nearest of each of n float32 random walks among the same n (DTW, window
  0.1), `tswarp.knn(X, X, k=10, window=0.1, device=[0 .. g-1])`;
- shapelets: `find_shapelet` over every candidate of OSULeaf's train set (200 x 427,
  lengths 3..427, z-normalised; --osuleaf: the arrays saved by
  `bench/gpu_shapelets.py --save-osuleaf`, where aeon is installed).
- --cupy N: DTW cdist of two N x 256 float32 CuPy arrays on GPU 0, in place on GPU 0
  (device='cuda') and on g GPUs (device=[0 .. g-1]: staged through host memory, the result
  back on GPU 0), beside the same call on numpy arrays; then what moving the matrix costs
  each way: host staging (device -> host -> device, as the staged call does) against one
  peer copy (cudaMemcpyPeer, GPU 1 -> GPU 0), the same bytes;
- --torch B: tswarp.torch.SoftDTW values and gradients of B pairs of float32 CUDA tensors
  of length 256 (gamma 0.1) on GPU 0, on 1 and on g GPUs (device=[0 .. g-1]).
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


def sync_all(cp, sizes):
    for d in range(max(sizes)):
        with cp.cuda.Device(d):
            cp.cuda.Device(d).synchronize()


def bench_cupy(args, sizes, rng):
    import cupy as cp
    n, L = args.cupy, 256
    Xh = rng.standard_normal((n, L)).cumsum(axis=1).astype(np.float32)
    Yh = rng.standard_normal((n, L)).cumsum(axis=1).astype(np.float32)
    with cp.cuda.Device(0):
        X, Y = cp.asarray(Xh), cp.asarray(Yh)
    rows, label = [], f"cdist {n:,} x {n:,}, length {L}, float32"
    for g in sizes:  # warm-up: contexts, pools
        tswarp.cdist(X[:64], Y[:64], device=devices(g))
    sync_all(cp, sizes)
    ref, t1 = None, None
    for g in sizes:
        def call():
            out = tswarp.cdist(X, Y, device=devices(g))
            out.device.synchronize()
            return out
        t, D = timed(call)
        Dh = cp.asnumpy(D)
        del D
        if ref is None:
            ref, t1 = Dh, t
        else:
            assert np.array_equal(Dh, ref), g
        how = "in place on GPU 0" if g == 1 else "staged through the host"
        rows.append((f"{label}, CuPy arrays on GPU 0, {how}", g, t, t1 / (g * t)))
        print(rows[-1], flush=True)
        th, Dn = timed(lambda: tswarp.cdist(Xh, Yh, device=devices(g)))
        assert np.array_equal(Dn, ref), g
        del Dn
        rows.append((f"{label}, numpy arrays", g, th, t1 / (g * th)))
        print(rows[-1], flush=True)
    del ref
    # moving the n x n float32 matrix: host staging against a peer copy
    nbytes = n * n * 4
    with cp.cuda.Device(0):
        dst = cp.empty(n * n, dtype=cp.float32)
    host = np.empty(n * n, dtype=np.float32)
    th0 = time.perf_counter()
    cp.asnumpy(dst, out=host)
    with cp.cuda.Device(0):
        dst.set(host)
        cp.cuda.Device(0).synchronize()
    th = time.perf_counter() - th0
    rows.append((f"move {nbytes / 2**30:.2f} GiB: GPU 0 -> host -> GPU 0 (host staging)", 1, th,
                 float("nan")))
    print(rows[-1], flush=True)
    if max(sizes) >= 2:
        with cp.cuda.Device(1):
            src = cp.empty(n * n, dtype=cp.float32)
        sync_all(cp, sizes)
        tp0 = time.perf_counter()
        cp.cuda.runtime.memcpyPeer(dst.data.ptr, 0, src.data.ptr, 1, nbytes)
        sync_all(cp, sizes)
        tp = time.perf_counter() - tp0
        rows.append((f"move {nbytes / 2**30:.2f} GiB: GPU 1 -> GPU 0 (peer copy)", 2, tp,
                     float("nan")))
        print(rows[-1], flush=True)
    return rows


def bench_torch(args, sizes, rng):
    import torch
    from tswarp.torch import SoftDTW
    B, L = args.torch, 256
    x0 = torch.tensor(rng.standard_normal((B, L, 1)), dtype=torch.float32, device="cuda:0")
    y0 = torch.tensor(rng.standard_normal((B, L, 1)), dtype=torch.float32, device="cuda:0")
    rows, ref, t1 = [], None, None
    for g in sizes:
        fn = SoftDTW(gamma=0.1, device=None if g == 1 else list(range(g)))
        fn(x0[:8].clone().requires_grad_(True), y0[:8])  # warm-up
        x = x0.clone().requires_grad_(True)
        torch.cuda.synchronize(0)

        def step():
            v = fn(x, y0)
            v.sum().backward()
            torch.cuda.synchronize(0)
            return v.detach().cpu().numpy(), x.grad.cpu().numpy()
        t, got = timed(step)
        if ref is None:
            ref, t1 = got, t
        else:
            assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1]), g
        rows.append((f"SoftDTW forward + backward, {B:,} pairs of length {L}, float32 CUDA "
                     "tensors on GPU 0", g, t, t1 / (g * t)))
        print(rows[-1], flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--knn-n", type=int, default=100000)
    ap.add_argument("--knn-length", type=int, default=128)
    ap.add_argument("--osuleaf", metavar="NPZ")
    ap.add_argument("--cupy", type=int, default=0, metavar="N")
    ap.add_argument("--torch", type=int, default=0, metavar="B")
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
    for g in sizes if args.knn_n else []:
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

    if args.cupy:
        rows += bench_cupy(args, sizes, rng)
    if args.torch:
        rows += bench_torch(args, sizes, rng)

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
