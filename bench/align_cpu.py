"""Exact DTW path of two long feature sequences on the CPU: tswarp vs librosa vs dtaidistance.

    .venv/bin/python bench/align_cpu.py [--n 20000] [--dim 12] [--skip-librosa]

Two random (n, dim) sequences (uniform [0, 1), seed 0, like chroma features). Each contender
runs in its own subprocess, so that its peak RSS (ru_maxrss of that process, which includes
the interpreter and the imports: about 100-200 MiB) is its own:
  - tswarp.dtw_path, step p05 ((1,1),(1,2),(2,1), weights 2,3,3), cosine cost; also
    symmetric1 + sqeuclidean (dtaidistance's pattern and cost), and the linear-memory method;
  - librosa.sequence.dtw with step_sizes_sigma=[[1,1],[1,2],[2,1]], weights_mul=[2,3,3],
    metric='cosine' (numba; one warm-up call on a small pair first, not timed);
  - dtaidistance.dtw_ndim.warping_path (its C library, use_c=True): symmetric1 steps and the
    squared Euclidean cost, the only pattern it has.
Wall time of the alignment call only (inputs made before the clock starts). Prints one table.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import numpy as np
which, n, dim = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
a, b = rng.random((n, dim)), rng.random((n, dim))
if which.startswith("tswarp"):
    import tswarp
    _, kind, cost, method = which.split(":")
    tswarp.dtw_path(a[:50], b[:50], step=kind, cost=cost)
    t = time.perf_counter()
    limit = 16 << 20 if method == "linear" else None  # linear: force the recursion (16 MiB blocks)
    path, c = tswarp.dtw_path(a, b, step=kind, cost=cost, method=method, memory_limit=limit)
    t = time.perf_counter() - t
elif which == "librosa":
    import librosa
    kw = dict(step_sizes_sigma=np.array([[1, 1], [1, 2], [2, 1]]), weights_mul=np.array([2, 3, 3]), metric="cosine")
    librosa.sequence.dtw(a[:50].T, b[:50].T, **kw)  # numba compilation, not timed
    t = time.perf_counter()
    D, wp = librosa.sequence.dtw(a.T, b.T, **kw)
    t = time.perf_counter() - t
    path, c = wp[::-1], D[-1, -1]
else:
    from dtaidistance import dtw_ndim
    dtw_ndim.warping_path(a[:50], b[:50], use_c=True)
    t = time.perf_counter()
    path, d = dtw_ndim.warping_path(a, b, use_c=True, include_distance=True)
    t = time.perf_counter() - t
    c = d * d
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps({"seconds": t, "cost": float(c), "length": len(path), "rss_mib": rss,
                  "path_tail": [list(map(int, p)) for p in list(path)[-3:]]}))
"""


def run(which, n, dim):
    out = subprocess.run([sys.executable, "-c", CHILD, which, str(n), str(dim)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--dim", type=int, default=12)
    ap.add_argument("--skip-librosa", action="store_true")
    args = ap.parse_args()
    import tswarp

    info = tswarp.info()
    print(f"# {args.n} x {args.dim} random features; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, tswarp {tswarp.__version__} ({info['simd']}, {info['threads']} threads); "
          f"{time.strftime('%Y-%m-%d')}")
    rows = [("tswarp p05 cosine (stored)", "tswarp:p05:cosine:stored"),
            ("tswarp p05 cosine (linear, 16 MiB blocks)", "tswarp:p05:cosine:linear"),
            ("tswarp symmetric1 sqeuclidean", "tswarp:symmetric1:sqeuclidean:auto"),
            ("dtaidistance symmetric1 sqeuclidean", "dtai")]
    if not args.skip_librosa:
        rows.append(("librosa p05 cosine", "librosa"))
    results = {}
    print(f"{'contender':<38} {'time s':>9} {'peak RSS MiB':>13} {'path len':>9} {'cost':>16}")
    for label, which in rows:
        r = run(which, args.n, args.dim)
        results[which] = r
        if "error" in r:
            print(f"{label:<38} failed: {r['error']}")
            continue
        print(f"{label:<38} {r['seconds']:>9.3f} {r['rss_mib']:>13.0f} {r['length']:>9} {r['cost']:>16.6f}", flush=True)
    t = results.get("tswarp:p05:cosine:stored", {}).get("seconds")
    ts = results.get("tswarp:symmetric1:sqeuclidean:auto", {}).get("seconds")
    if t and "seconds" in results.get("librosa", {}):
        print(f"speed-up over librosa (p05 cosine): {results['librosa']['seconds'] / t:.1f}x")
    if "seconds" in results.get("dtai", {}):
        if t:
            print(f"speed-up over dtaidistance (tswarp p05 cosine vs its symmetric1): {results['dtai']['seconds'] / t:.1f}x")
        if ts:
            print(f"speed-up over dtaidistance (same steps and cost): {results['dtai']['seconds'] / ts:.1f}x")


if __name__ == "__main__":
    main()
