"""Clustering (issue 33): tswarp.cluster beside the peers in the same run, on the same
machine, float64, the same initial centres, the same thread count.

    python bench/cluster_bench.py [--dataset GunPoint] [--k 2] [--threads 2]

DTW k-means with DBA centres: tswarp.cluster.TimeSeriesKMeans against tslearn's
TimeSeriesKMeans(metric="dtw") from the first k series as initial centres, max_iter 10.
k-medoids: tswarp.cluster.TimeSeriesKMedoids against aeon's TimeSeriesKMedoids (PAM and
alternate, init 'build', MSM). The clusters are compared too. The data set is train + test
of one aeon ships (GunPoint: 200 series of 150 points).
"""

import argparse
import os
import platform
import time
import warnings

import numpy as np

import tswarp
from tswarp.cluster import TimeSeriesKMeans, TimeSeriesKMedoids


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="GunPoint")
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    from aeon.clustering import TimeSeriesKMedoids as AeonKMedoids
    from aeon.datasets import load_classification
    from tslearn.clustering import TimeSeriesKMeans as TslearnKMeans

    Xtr, _ = load_classification(args.dataset, split="train")
    Xte, _ = load_classification(args.dataset, split="test")
    X = np.ascontiguousarray(np.concatenate([Xtr, Xte]), dtype=np.float64)  # (n, d, len)
    Xl = np.ascontiguousarray(X.transpose(0, 2, 1))  # (n, len, d): tslearn's layout
    k = args.k
    print(f"tswarp {tswarp.__version__}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; {args.dataset} train + test {X.shape[0]} x {X.shape[2]} "
          f"x {X.shape[1]}; k {k}; {args.threads} threads; float64")
    print()
    print("| task | peer | peer s | tswarp s | ratio | same clusters |")
    print("|---|---|---|---|---|---|")
    init = Xl[:k].copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TslearnKMeans(n_clusters=k, metric="dtw", init=Xl[:k].copy(), max_iter=1).fit(Xl[:8])
        tp, p = timed(lambda: TslearnKMeans(n_clusters=k, metric="dtw", init=init.copy(),
                                            max_iter=10, n_jobs=args.threads).fit(Xl))
    tt, t = timed(lambda: TimeSeriesKMeans(n_clusters=k, metric="dtw", init=init.copy(),
                                           max_iter=10, n_jobs=args.threads,
                                           layout="channels_last").fit(Xl))
    same = np.array_equal(p.labels_, t.labels_) and np.allclose(p.cluster_centers_,
                                                                t.cluster_centers_, atol=1e-9)
    print(f"| DTW k-means + DBA, 10 iterations | tslearn | {tp:.2f} | {tt:.3f} | {tp / tt:.0f}x "
          f"| {'yes' if same else 'NO'} |")
    for method in ("pam", "alternate"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            AeonKMedoids(n_clusters=k, distance="msm", method=method, init="build",
                         n_init=1).fit(X[:8])
            tp, p = timed(lambda: AeonKMedoids(n_clusters=k, distance="msm", method=method,
                                               init="build", n_init=1).fit(X))
        tt, t = timed(lambda: TimeSeriesKMedoids(n_clusters=k, metric="msm", method=method,
                                                 init="build", n_jobs=args.threads,
                                                 layout="channels_first").fit(X))
        same = np.array_equal(p.labels_, t.labels_)
        print(f"| MSM k-medoids, {method}, build | aeon | {tp:.2f} | {tt:.3f} | "
              f"{tp / tt:.0f}x | {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
