"""tswarp.dask against the direct call, in the same run on the same machine (issue 34).

    python bench/dask_bench.py --cpu [--n 2000] [--length 256] [--threads 2]
    python bench/dask_bench.py --gpu 4 [--n 16384] [--length 256] [--block 4096]
                               [--cluster-gpus 4] [--cluster-threads 1 2]
                               [--cluster-blocks 4096 2048] [--in-process-gpus 1 4]

--cpu: DTW cdist of n x n random series (float64), the direct tswarp.cdist(n_jobs=threads)
against tswarp.dask.cdist on a distributed.LocalCluster (one worker of one thread whose
tasks use every core, and threads workers of one thread each using one), the result
gathered into the client as the direct call returns it; the overhead is the ratio.

--gpu N: DTW cdist of n x n series (float32) on one GPU in this process
(tswarp.cdist(device='cuda'), the matrix in host memory), on 2, 4, ... N GPUs in this process
(device=[0, 1, ...]: tsw_exec.n_devices), and tswarp.dask.cdist on a
dask_cuda.LocalCUDACluster of 1, 2, ... N workers (one per GPU), the blocks persisted on the
workers (the matrix stays distributed, Dask's result; gathering 4 GiB to one process through
Dask's TCP comms is a different measurement, reported as well for the largest cluster; the
timed runs reduce the blocks on the workers, D.sum(), so that nothing stays between runs).
Scaling efficiency = t(1 GPU in-process) / (N t(N workers)).

Every timing is the median of --repeat runs after one warm-up; each table's rows come from
one run of this script.
"""

import argparse
import os
import platform
import time

import numpy as np

import tswarp


def median_time(f, repeat):
    f()  # warm-up (and the workers' imports)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def bench_cpu(args):
    import dask.array  # noqa: F401 - the extra is there
    import tswarp.dask as td
    from distributed import Client, LocalCluster
    rng = np.random.default_rng(args.seed)
    X = rng.standard_normal((args.n, args.length))
    Y = rng.standard_normal((args.n, args.length))
    cells = args.n * args.n * args.length * args.length
    direct = median_time(lambda: tswarp.cdist(X, Y, n_jobs=args.threads), args.repeat)
    want = tswarp.cdist(X, Y, n_jobs=args.threads)
    rows = [("direct tswarp.cdist", "-", direct, 1.0)]
    for workers, threads, n_jobs in ((1, 1, args.threads), (args.threads, 1, 1)):
        with LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                          dashboard_address=None, silence_logs=40) as c, Client(c) as client:
            for block in args.blocks:
                D = td.cdist(X, Y, block_size=block, n_jobs=n_jobs)
                got = client.compute(D).result()
                assert np.array_equal(got, want), "dask result differs from the direct call"
                t = median_time(lambda: client.compute(D).result(), args.repeat)
                rows.append((f"LocalCluster {workers} worker(s) x {threads} thread, "
                             f"n_jobs {n_jobs}", str(block), t, t / direct))
    print(f"## CPU: DTW cdist {args.n} x {args.n}, length {args.length}, float64, "
          f"{args.threads} cores ({platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs)\n")
    print("| how | block | s | Gcells/s | time / direct |")
    print("|---|---|---|---|---|")
    for how, block, t, ratio in rows:
        print(f"| {how} | {block} | {t:.3f} | {cells / t / 1e9:.2f} | {ratio:.3f} |")
    print("\nthe Dask results equal the direct call's bit for bit")


def bench_gpu(args):
    import dask
    import tswarp.dask as td
    from dask_cuda import LocalCUDACluster
    from distributed import Client
    rng = np.random.default_rng(args.seed)
    X = rng.standard_normal((args.n, args.length)).astype(np.float32)
    cells = args.n * args.n * args.length * args.length
    one = median_time(lambda: tswarp.cdist(X, device="cuda"), args.repeat)
    want = tswarp.cdist(X, device="cuda")
    rows = [("in-process, 1 GPU (matrix on the host)", 1, one, 1.0)]
    print(rows[-1], flush=True)  # each row as it comes: a run cut short keeps its rows
    sizes = [g for g in (1, 2, 4, 8) if g <= args.gpu]
    for g in [g for g in (args.in_process_gpus or sizes) if g > 1]:
        # one process, several GPUs (tsw_exec.n_devices): device=[0, ..]
        devs = list(range(g))
        got = tswarp.cdist(X, device=devs)
        assert np.array_equal(got, want), "several GPUs differ from one"
        t = median_time(lambda: tswarp.cdist(X, device=devs), args.repeat)
        rows.append((f"in-process, {g} GPUs (device=[0..{g - 1}])", g, t, one / (g * t)))
        print(rows[-1], flush=True)
    gathered = None
    csizes = args.cluster_gpus or sizes
    for g, threads, block in [(g, th, b) for g in csizes for th in args.cluster_threads
                              for b in (args.cluster_blocks or [args.block])]:
        with LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(map(str, range(g))),
                              threads_per_worker=threads, dashboard_address=None,
                              silence_logs=40) as c, Client(c) as client:
            D = td.cdist(X, block_size=block, device="cuda")
            got = client.compute(D).result()
            assert np.array_equal(got, want), "dask result differs from the in-process GPU's"
            del got
            # the blocks computed on the workers and reduced there (nothing kept between runs)
            t = median_time(lambda: client.compute(D.sum()).result(), args.repeat)
            rows.append((f"LocalCUDACluster, {g} GPU(s) x {threads} thread(s), block {block} "
                         "(blocks on the workers)", g, t, one / (g * t)))
            print(rows[-1], flush=True)
            if g == max(csizes) and gathered is None:
                gathered = median_time(lambda: client.compute(D).result(), 1)
    print(f"## GPU: DTW cdist {args.n} x {args.n}, length {args.length}, float32, block "
          f"{args.block} ({tswarp.info()['gpus'][0]['name'] if tswarp.info().get('gpus') else 'GPU'})\n")
    print("| how | GPUs | s | TCUPS | scaling efficiency |")
    print("|---|---|---|---|---|")
    for how, g, t, eff in rows:
        print(f"| {how} | {g} | {t:.3f} | {cells / t / 1e12:.2f} | {eff:.2f} |")
    if gathered is not None:
        print(f"\nthe same on {max(csizes)} GPU(s) with the matrix gathered into the client: "
              f"{gathered:.3f} s")
    print("every Dask result equals the in-process GPU's bit for bit")
    del dask


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--gpu", type=int, default=0, metavar="N")
    ap.add_argument("--n", type=int)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--block", type=int, default=4096)
    ap.add_argument("--cluster-gpus", type=int, nargs="+", metavar="N",
                    help="--gpu: the LocalCUDACluster sizes to time (default 1, 2, 4, ... N)")
    ap.add_argument("--cluster-threads", type=int, nargs="+", default=[1], metavar="T",
                    help="--gpu: threads_per_worker of the LocalCUDACluster (dask-cuda's "
                         "default 1; 2 lets a block's host work overlap the next block)")
    ap.add_argument("--cluster-blocks", type=int, nargs="+", metavar="B",
                    help="--gpu: block sizes of the cluster rows (default --block)")
    ap.add_argument("--in-process-gpus", type=int, nargs="+", metavar="N",
                    help="--gpu: the in-process GPU counts to time (default 1, 2, 4, ... N)")
    ap.add_argument("--blocks", type=int, nargs="+", default=[500, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    print(f"tswarp {tswarp.__version__}, {tswarp.info()['simd']}, seed {args.seed}\n")
    if args.cpu:
        args.n = args.n or 2000
        bench_cpu(args)
    if args.gpu:
        args.n = args.n or 16384
        bench_gpu(args)
    if not args.cpu and not args.gpu:
        ap.error("give --cpu and/or --gpu N")


if __name__ == "__main__":
    main()
