#!/usr/bin/env python3
"""CPU benchmark: tswarp against the peers users come from, side by side in one run.

Prints one table: case, implementation, time (median of repeats, peers' JIT warm-up
excluded), pairs computed, Gcells/s (cells = sum over computed pairs of len_a * len_b) and
the ratio peer time / tswarp time (> 1: tswarp is faster).

    python bench/cpu_bench.py [--threads N] [--repeats R] [--quick] [--markdown]

Every implementation gets the same thread count (--threads, default: all cores): tswarp
through n_jobs, dtaidistance and aeon through their own parameters, and OMP_NUM_THREADS /
NUMBA_NUM_THREADS are set before any peer is imported.
"""
import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYNTHETIC_CONTROL = ROOT.parent / "shared" / "data" / "synthetic_control.data"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of tswarp")
    ap.add_argument("--peer-repeats", type=int, default=1, help="timed runs of each peer")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--only", default="", help="comma-separated case prefixes to run")
    return ap.parse_args()


ARGS = parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
os.environ["NUMBA_NUM_THREADS"] = str(ARGS.threads)

import numpy as np  # noqa: E402

import tswarp  # noqa: E402


def timeit(fn, repeats, warmup=None):
    """Median of `repeats` timed calls of fn after one untimed call of warmup (default fn).

    Peers run tens of seconds at full size: they warm up (numba JIT) on a small input
    (warmup=...) and are timed once (--peer-repeats)."""
    (warmup or fn)()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


ROWS = []


def record(case, impl, seconds, pairs, cells, ref=None):
    ROWS.append(dict(case=case, impl=impl, t=seconds, pairs=pairs, cells=cells, ref=ref))


def random_walks(rng, n, length, dim=None, dtype=np.float64):
    shape = (n, length) if dim is None else (n, length, dim)
    return np.cumsum(rng.standard_normal(shape), axis=1).astype(dtype)


def want(name):
    return not ARGS.only or any(name.startswith(p) for p in ARGS.only.split(","))


def bench_dtw_cdist(rng):
    n, length = (60, 200) if ARGS.quick else (200, 500)
    case = f"DTW cdist {n}x{n} len {length}"
    if not want("dtw-cdist"):
        return
    from dtaidistance import dtw as ddtw

    X = random_walks(rng, n, length)
    Y = random_walks(rng, n, length)
    both = np.vstack([X, Y])
    pairs = n * n
    cells = pairs * length * length
    t_peer = timeit(lambda: ddtw.distance_matrix_fast(both, block=((0, n), (n, 2 * n)),
                                                      parallel=True, compact=True),
                    ARGS.peer_repeats, warmup=lambda: ddtw.distance_matrix_fast(both[:4]))
    record(case, "dtaidistance distance_matrix_fast (block)", t_peer, pairs, cells)
    small = np.vstack([X[:4], Y[:4]])
    D_peer = ddtw.distance_matrix_fast(small, block=((0, 4), (4, 8)), parallel=True)[:4, 4:]
    t = timeit(lambda: tswarp.cdist(X, Y, metric="dtw", n_jobs=ARGS.threads), ARGS.repeats)
    D = tswarp.cdist(X[:4], Y[:4], metric="dtw", n_jobs=ARGS.threads)
    assert np.allclose(D, D_peer, rtol=1e-9), "tswarp and dtaidistance disagree"
    record(case, "tswarp cdist float64", t, pairs, cells, ref=t_peer)
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    t = timeit(lambda: tswarp.cdist(X32, Y32, metric="dtw", n_jobs=ARGS.threads), ARGS.repeats)
    record(case, "tswarp cdist float32", t, pairs, cells, ref=t_peer)

    case = f"DTW pdist {n} len {length}"
    pairs = n * (n - 1) // 2
    cells = pairs * length * length
    t_peer = timeit(lambda: ddtw.distance_matrix_fast(X, parallel=True, compact=True),
                    ARGS.peer_repeats, warmup=lambda: ddtw.distance_matrix_fast(X[:4]))
    record(case, "dtaidistance distance_matrix_fast", t_peer, pairs, cells)
    t = timeit(lambda: tswarp.pdist(X, metric="dtw", condensed=True, n_jobs=ARGS.threads),
               ARGS.repeats)
    record(case, "tswarp pdist float64", t, pairs, cells, ref=t_peer)


def bench_twed_pdist(rng):
    if not want("twed"):
        return
    from aeon.distances import twe_pairwise_distance

    X = np.loadtxt(SYNTHETIC_CONTROL)
    if ARGS.quick:
        X = X[:200]
    n, length = X.shape
    pairs = n * (n - 1) // 2
    cells = pairs * length * length
    for nu, lmbda in ((0.001, 1.0), (1.0, 1.0)):
        case = f"TWED pdist synthetic_control {n}x{length} nu={nu} lmbda={lmbda}"
        D_peer = None

        def peer():
            nonlocal D_peer
            D_peer = twe_pairwise_distance(X, nu=nu, lmbda=lmbda, n_jobs=ARGS.threads)

        t_peer = timeit(peer, ARGS.peer_repeats,
                        warmup=lambda: twe_pairwise_distance(X[:4], nu=nu, lmbda=lmbda,
                                                             n_jobs=ARGS.threads))
        record(case, "aeon twe_pairwise_distance", t_peer, pairs, cells)
        t = timeit(lambda: tswarp.pdist(X, metric="twed", nu=nu, lmbda=lmbda,
                                        n_jobs=ARGS.threads), ARGS.repeats)
        D = tswarp.pdist(X, metric="twed", nu=nu, lmbda=lmbda, n_jobs=ARGS.threads)
        assert np.allclose(D, D_peer, rtol=1e-9), "tswarp and aeon disagree"
        record(case, "tswarp pdist float64", t, pairs, cells, ref=t_peer)


def bench_soft_dtw(rng):
    if not want("soft"):
        return
    from tslearn.metrics import cdist_soft_dtw

    n, length = (30, 128) if ARGS.quick else (100, 256)
    case = f"Soft-DTW cdist {n}x{n} len {length} gamma=1"
    X = random_walks(rng, n, length, 1)
    Y = random_walks(rng, n, length, 1)
    pairs = n * n
    cells = pairs * length * length
    D_peer = None

    def peer():
        nonlocal D_peer
        D_peer = cdist_soft_dtw(X, Y, gamma=1.0)

    t_peer = timeit(peer, ARGS.peer_repeats, warmup=lambda: cdist_soft_dtw(X[:2], Y[:2]))
    record(case, "tslearn cdist_soft_dtw", t_peer, pairs, cells)
    t = timeit(lambda: tswarp.cdist(X, Y, metric="soft_dtw", gamma=1.0, n_jobs=ARGS.threads),
               ARGS.repeats)
    D = tswarp.cdist(X, Y, metric="soft_dtw", gamma=1.0, n_jobs=ARGS.threads)
    assert np.allclose(D, D_peer, rtol=1e-8), "tswarp and tslearn disagree"
    record(case, "tswarp cdist float64", t, pairs, cells, ref=t_peer)
    t = timeit(lambda: tswarp.cdist(X.astype(np.float32), Y.astype(np.float32),
                                    metric="soft_dtw", gamma=1.0, n_jobs=ARGS.threads),
               ARGS.repeats)
    record(case, "tswarp cdist float32", t, pairs, cells, ref=t_peer)


def bench_long_pair(rng):
    if not want("long"):
        return
    from dtaidistance import dtw as ddtw

    n = 5000 if ARGS.quick else 20000
    case = f"DTW one pair n={n}"
    a = np.cumsum(rng.standard_normal(n))
    b = np.cumsum(rng.standard_normal(n))
    cells = n * n
    t_peer = timeit(lambda: ddtw.distance_fast(a, b, use_pruning=False), ARGS.peer_repeats)
    record(case, "dtaidistance distance_fast", t_peer, 1, cells)
    t = timeit(lambda: tswarp.dtw(a, b), ARGS.repeats)
    assert np.isclose(tswarp.dtw(a, b), ddtw.distance_fast(a, b), rtol=1e-9)
    record(case, "tswarp dtw float64", t, 1, cells, ref=t_peer)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    t = timeit(lambda: tswarp.dtw(a32, b32), ARGS.repeats)
    record(case, "tswarp dtw float32", t, 1, cells, ref=t_peer)


def bench_overhead(rng):
    if not want("overhead"):
        return
    import timeit as _timeit

    from dtaidistance import dtw as ddtw
    from tslearn.metrics import dtw as tdtw

    a = rng.standard_normal(16)
    b = rng.standard_normal(16)
    case = "Python call, two length-16 series"
    calls = 20000

    def per_call(stmt):
        tdtw(a, b)  # JIT warm-up
        best = min(_timeit.repeat(stmt, number=calls, repeat=5))
        return best / calls

    t_peer = per_call(lambda: ddtw.distance_fast(a, b))
    record(case, "dtaidistance distance_fast", t_peer, 1, 256)
    record(case, "tslearn dtw", per_call(lambda: tdtw(a, b)), 1, 256)
    t = per_call(lambda: tswarp.dtw(a, b))
    record(case, "tswarp dtw", t, 1, 256, ref=t_peer)


def fmt_time(t):
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.2f} us"


def print_table():
    header = ["case", "implementation", "time", "pairs", "Gcells/s", "peer/tswarp"]
    lines = []
    for r in ROWS:
        ratio = f"{r['ref'] / r['t']:.1f}x" if r["ref"] else ""
        lines.append([r["case"], r["impl"], fmt_time(r["t"]), str(r["pairs"]),
                      f"{r['cells'] / r['t'] / 1e9:.3f}", ratio])
    if ARGS.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for ln in lines:
            print("| " + " | ".join(ln) + " |")
        return
    widths = [max(len(h), *(len(ln[i]) for ln in lines)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for ln in lines:
        print("  ".join(c.ljust(w) for c, w in zip(ln, widths)))


def main():
    info = tswarp.info()
    print(f"# tswarp {info['version']} | simd {info['simd']} | threads {ARGS.threads} | "
          f"{platform.processor() or platform.machine()} | python {platform.python_version()} | "
          f"{time.strftime('%Y-%m-%d')}", flush=True)
    rng = np.random.default_rng(12345)
    for bench in (bench_dtw_cdist, bench_twed_pdist, bench_soft_dtw, bench_long_pair,
                  bench_overhead):
        bench(rng)
        print(f"  done: {bench.__name__}", file=sys.stderr, flush=True)
    print_table()


if __name__ == "__main__":
    main()
