"""Segmental DTW against DTW on the CPU: time per pair and cell updates per second.

    PYTHONPATH=<site> .venv/bin/python bench/segmental_cpu.py [--length 3000] [--jobs 1]
        [--repeats 5]

One pair of 12-d chroma-like features (cosine cost, the paper's setting) A of `length`
frames and B = A under a tempo of 0.97 plus noise (len(B) ~ 1.03 length). DTW is
`tswarp.dtw_path(step="p05")` (forward pass with 2-bit codes stored, then the backtrace);
segmental is `tswarp.segmental_dtw(step="p05_query")` for each variant and N. Cells: n m
(the first pass's grid) for every method, so "Mcells/s" compares the wall time only. Times
are the median of `repeats` calls (wall clock, `--jobs` threads: one by default, the paper's
total-computation measure and robust on a shared machine). Seeded: the same data every run.
"""

import argparse
import os
import platform
import statistics
import time

import numpy as np

import tswarp


def pair(length, seed=0):
    rng = np.random.default_rng(seed)
    a = np.abs(rng.normal(size=(length, 12))).cumsum(axis=0) % 7.0
    m = int(length / 0.97)
    b = a[(np.arange(m) * 0.97).astype(np.int64)] + 0.1 * rng.normal(size=(m, 12))
    return a, np.abs(b)


def timed(fn, repeats):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=int, default=3000)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    a, b = pair(args.length)
    cells = len(a) * len(b)
    kw = dict(cost="cosine", n_jobs=args.jobs, device="cpu")
    rows = [("DTW (dtw_path p05)", timed(lambda: tswarp.dtw_path(a, b, step="p05", **kw),
                                         args.repeats))]
    for variant, label in (("none", "NSDTW"), ("weak", "WSDTW"), ("strict", "SSDTW")):
        for N in (8, 32):
            rows.append((f"{label}-{N}", timed(lambda: tswarp.segmental_dtw(
                a, b, N, variant, step="p05_query", **kw), args.repeats)))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"tswarp {tswarp.__version__} ({tswarp.info()['simd']}), {args.jobs} thread(s), "
          f"{len(a)} x {len(b)} x 12 cosine, median of {args.repeats}")
    print("| method | time (s) | Mcells/s | ratio to DTW |")
    print("|---|---:|---:|---:|")
    t0 = rows[0][1]
    for name, t in rows:
        print(f"| {name} | {t:.4f} | {cells / t / 1e6:.0f} | {t / t0:.2f} |")


if __name__ == "__main__":
    main()
