"""Nearest-neighbour benchmarks (issue 32): subsequence search and 1-NN, tswarp beside its
peers in the same run, on the same machine, at the same precision (float64).

    python bench/knn_bench.py                 # CPU: search and 1-NN (about 2 minutes)
    python bench/knn_bench.py --gpu           # also knn on the GPU beside cdist + argmin
    python bench/knn_bench.py --dtai-points 100000   # dtaidistance's search on this many points

Search: a length-128 query with a 5% window in a random walk, z-normalised (the UCR Suite's
setting): the match is checked against a brute force (every window's DTW through
tswarp.cdist in blocks) on the 10^6-point series, and the cascade's pruning is reported
as the UCR Suite paper does. dtaidistance's subsequence_search (its lower bounds on) runs
on --dtai-points points in the same run; the ratio is of windows per second.
1-NN: a UCR data set's test set against its training set with a 10% window: tswarp.knn,
tswarp.cdist + argmin and aeon's KNeighborsTimeSeriesClassifier.
"""

import argparse
import time

import numpy as np

import tswarp


def timed(f, repeat=1):
    best = None
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, out


def znorm(w):
    sd = w.std(axis=-1, keepdims=True)
    return np.where(sd > 0, (w - w.mean(axis=-1, keepdims=True)) / np.where(sd > 0, sd, 1), 0)


def brute_best(q, s, window):
    n = len(q)
    qz = znorm(q)
    best = (np.inf, -1)
    for a in range(0, len(s) - n + 1, 100_000):
        b = min(a + 100_000, len(s) - n + 1)
        W = np.lib.stride_tricks.sliding_window_view(s[a:b + n - 1], n)
        d = tswarp.cdist([qz], znorm(W), window=window)[0]
        i = int(np.argmin(d))
        if d[i] < best[0]:
            best = (float(d[i]), a + i)
    return best


def rate(stats):
    w = stats["windows"]
    return (f"Kim {100 * stats['kim'] / w:.1f}%, Keogh-EQ {100 * stats['keogh_query'] / w:.1f}%, "
            f"Keogh-EC {100 * stats['keogh_data'] / w:.2f}%, DTW {100 * stats['dtw'] / w:.3f}% "
            f"({stats['abandoned']} abandoned)")


def bench_search(args, rng):
    print("\n## search: query 128, window 5%, z-normalised, float64,"
          f" {args.threads} threads\n")
    print("| series | points | tswarp s | windows/s | match | pruning (UCR Suite paper's table) |")
    print("|---|---|---|---|---|---|")
    q = rng.standard_normal(128).cumsum()
    for kind, N in (("random walk", 10**6), ("random walk", 10**7), ("white noise", 10**6),
                    ("random walk, query from outside", 10**7)):
        if kind == "white noise":
            s = rng.standard_normal(N)
        else:
            s = rng.standard_normal(N).cumsum()
        qq = q if "outside" in kind else s[N // 3: N // 3 + 128] + 0.1 * rng.standard_normal(128)
        t, (st, d, stats) = timed(lambda: tswarp.search(qq, s, 1, window=0.05,
                                                        n_jobs=args.threads,
                                                        return_stats=True), 2)
        check = ""
        if N == 10**6:
            bd, bi = brute_best(qq, s, 0.05)
            check = " = brute force" if bi == st[0] and abs(bd - d[0]) < 1e-9 else \
                f" BRUTE FORCE DIFFERS ({bi}, {bd})"
        print(f"| {kind} | {N:.0e} | {t:.3f} | {stats['windows'] / t:.3g} | {st[0]}"
              f"{check} | {rate(stats)} |", flush=True)
    # growth with the query length and the window (10^6-point walk)
    s = rng.standard_normal(10**6).cumsum()
    print("\n| query | window | tswarp s | windows/s | DTW started |")
    print("|---|---|---|---|---|")
    for n in (64, 128, 256, 512):
        for w in (0.0, 0.05, 0.1, 0.2):
            qq = rng.standard_normal(n).cumsum()
            t, (st, d, stats) = timed(lambda: tswarp.search(qq, s, 1, window=w,
                                                            n_jobs=args.threads,
                                                            return_stats=True))
            print(f"| {n} | {w} | {t:.3f} | {stats['windows'] / t:.3g} | "
                  f"{100 * stats['dtw'] / stats['windows']:.3f}% |", flush=True)
    if args.dtai_points:
        try:
            from dtaidistance.subsequence.subsequencesearch import subsequence_search
        except ImportError:
            print("\ndtaidistance is not installed: no peer row")
            return
        N = args.dtai_points
        s = rng.standard_normal(N).cumsum()
        qq = s[N // 2: N // 2 + 128] + 0.1 * rng.standard_normal(128)
        W = N - 127
        # dtaidistance takes the windows themselves: z-normalised beforehand (not timed: in
        # its favour); its window w admits |i - j| < w, so w = 8 is radius 7
        Z = znorm(np.lib.stride_tricks.sliding_window_view(s, 128))
        t0 = time.perf_counter()
        ss = subsequence_search(znorm(qq), Z, dists_options={"window": 8}, use_lb=True,
                                use_c=True)
        best = ss.best_match()
        td = time.perf_counter() - t0
        t, (st, d) = timed(lambda: tswarp.search(qq, s, 1, radius=7, n_jobs=args.threads), 3)
        print(f"\n## dtaidistance {__import__('dtaidistance').__version__} subsequence_search"
              f" (use_lb, use_c) vs tswarp.search, {N:.0e} points, query 128, radius 7\n")
        print("| | seconds | windows/s | match |")
        print("|---|---|---|---|")
        print(f"| dtaidistance | {td:.2f} | {W / td:.3g} | {best.idx} |")
        print(f"| tswarp ({args.threads} threads) | {t:.4f} | {W / t:.3g} | {st[0]} |")
        print(f"| ratio | | {td / t:.0f}x | |")


def bench_1nn(args):
    from aeon.datasets import load_classification
    print(f"\n## 1-NN DTW, window 10%, float64, {args.threads} threads\n")
    print("| data set | train x test x length | tswarp.knn s | tswarp cdist+argmin s | "
          "aeon KNN s | knn vs cdist | knn vs aeon | error (all three) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.datasets:
        Xtr, ytr = load_classification(name, split="train")
        Xte, yte = load_classification(name, split="test")
        Xtr, Xte = np.ascontiguousarray(Xtr[:, 0, :]), np.ascontiguousarray(Xte[:, 0, :])
        tk, (_, I) = timed(lambda: tswarp.knn(Xte, Xtr, 1, window=0.1, n_jobs=args.threads), 3)
        tc, D = timed(lambda: tswarp.cdist(Xte, Xtr, window=0.1, n_jobs=args.threads), 3)
        e1 = np.mean(ytr[I[:, 0]] != yte)
        e2 = np.mean(ytr[np.argmin(D, axis=1)] != yte)
        try:
            from aeon.classification.distance_based import KNeighborsTimeSeriesClassifier as A
            clf = A(distance="dtw", distance_params={"window": 0.1}, n_jobs=args.threads)
            ta, pred = timed(lambda: clf.fit(Xtr[:, None, :], ytr).predict(Xte[:, None, :]))
            e3 = np.mean(pred != yte)
            aeon_s, ratio = f"{ta:.3f}", f"{ta / tk:.1f}x"
        except ImportError:
            aeon_s, ratio, e3 = "-", "-", float("nan")
        print(f"| {name} | {len(Xtr)} x {len(Xte)} x {Xtr.shape[1]} | {tk:.3f} | {tc:.3f} | "
              f"{aeon_s} | {tc / tk:.1f}x | {ratio} | {e1:.3f} {e2:.3f} {e3:.3f} |", flush=True)


def bench_gpu_search(args, rng):
    print("\n## GPU search: query 128, window 5%, z-normalised, float64 (series from numpy)\n")
    print("| points | tswarp GPU s | tswarp CPU s (all cores) | match (both) | GPU DTW share |")
    print("|---|---|---|---|---|")
    q = rng.standard_normal(128).cumsum()
    for N in (10**6, 10**7, 10**8):
        s = rng.standard_normal(N).cumsum()
        tswarp.search(q, s[:10**5], 1, window=0.05, device="cuda")  # warm up
        tg, (sg, dg, st) = timed(lambda: tswarp.search(q, s, 1, window=0.05, device="cuda",
                                                       return_stats=True), 2)
        tc, (sc, dc) = timed(lambda: tswarp.search(q, s, 1, window=0.05, device="cpu"))
        same = "same" if sg[0] == sc[0] and dg[0] == dc[0] else f"DIFFER {sg} {sc}"
        print(f"| {N:.0e} | {tg:.3f} | {tc:.3f} | {sg[0]} {same} | "
              f"{100 * st['dtw'] / st['windows']:.3f}% |", flush=True)


def bench_gpu(args, rng):
    print("\n## GPU: 1-NN, length 128, window 10%, float32 and float64\n")
    print("| n queries x n series | dtype | knn(device='cuda') s | cdist(cuda)+argmin s | "
          "knn(device='cpu') s | knn/cdist |")
    print("|---|---|---|---|---|---|")
    for n in (2000, 10000, 30000):
        for dt in (np.float32, np.float64):
            Q = rng.standard_normal((n, 128)).cumsum(axis=1).astype(dt)
            X = rng.standard_normal((n, 128)).cumsum(axis=1).astype(dt)
            tswarp.knn(Q[:10], X[:100], 1, window=0.1, device="cuda")  # warm up
            tg, (_, Ig) = timed(lambda: tswarp.knn(Q, X, 1, window=0.1, device="cuda"), 2)
            tc, D = timed(lambda: tswarp.cdist(Q, X, window=0.1, device="cuda"), 2)
            t0 = time.perf_counter()
            Ia = np.argmin(D, axis=1)
            tc += time.perf_counter() - t0
            tcpu, (_, Ic) = timed(lambda: tswarp.knn(Q, X, 1, window=0.1, device="cpu"))
            same = "" if (Ig[:, 0] == Ia).all() else " (argmin differs)"
            print(f"| {n} x {n} | {np.dtype(dt).name} | {tg:.3f} | {tc:.3f} | {tcpu:.3f} | "
                  f"{tc / tg:.2f}x{same} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--dtai-points", type=int, default=0)
    ap.add_argument("--no-search", action="store_true")
    ap.add_argument("--datasets", nargs="*", default=["GunPoint", "ArrowHead", "OSULeaf",
                                                     "ACSF1"])
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"tswarp {tswarp.__version__}, {tswarp.info().get('simd')}, seed {args.seed}")
    if not args.no_cpu:
        if not args.no_search:
            bench_search(args, rng)
        bench_1nn(args)
    if args.gpu:
        bench_gpu_search(args, rng)
        bench_gpu(args, rng)


if __name__ == "__main__":
    main()
