"""One long pair in a narrow Sakoe-Chiba band, tswarp against dtaidistance, same run.

A band of radius r must cost O(n r): the time should grow linearly with n. Each case is
the best of `--repeat` calls (after one warm-up call), float64, one thread for both
(dtaidistance's distance_fast is single-threaded; tswarp's one-pair kernel too). The
values are checked to agree first (dtaidistance's window w is tswarp's radius w - 1).

    python bench/band_cpu.py [--radius 10] [--lengths 100000,200000,400000,1000000]
                             [--repeat 5] [--markdown]
"""

import argparse
import platform
import time

import numpy as np

import tswarp


def best(fn, repeat):
    fn()
    t = float("inf")
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - s)
    return t


def band_args(doc, repeat):
    """The band benchmarks' command line (--radius, --lengths, --repeat, --markdown)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--radius", type=int, default=10)
    ap.add_argument("--lengths", default="100000,200000,400000,1000000")
    ap.add_argument("--repeat", type=int, default=repeat)
    ap.add_argument("--markdown", action="store_true")
    return ap.parse_args()


def dtai_or_none():
    """dtaidistance's dtw module, the CPU peer, when it is installed."""
    try:
        from dtaidistance import dtw as dtai
    except ImportError:
        return None
    return dtai


def band_pairs(lengths, r):
    """(n, a, b, cells) for each length: two float64 random walks (seed 0, in order) and
    the cells of the radius-r band."""
    rng = np.random.default_rng(0)
    for n in (int(x) for x in lengths.split(",")):
        a, b = rng.standard_normal(n).cumsum(), rng.standard_normal(n).cumsum()
        yield n, a, b, sum(min(n, n - k) - max(0, -k) for k in range(-r, r + 1))


def main():
    args = band_args(__doc__, 5)
    dtai = dtai_or_none()
    r = args.radius
    rows = []
    for n, a, b, cells in band_pairs(args.lengths, r):
        got = tswarp.dtw(a, b, radius=r)
        t = best(lambda: tswarp.dtw(a, b, radius=r), args.repeat)
        row = {"n": n, "tswarp": t, "cells": cells}
        if dtai is not None:
            want = dtai.distance_fast(a, b, window=r + 1, use_pruning=False)
            assert abs(got - want) <= 1e-9 * max(1.0, abs(want)), (n, got, want)
            row["dtai"] = best(lambda: dtai.distance_fast(a, b, window=r + 1), args.repeat)
        rows.append(row)
    print(f"# one pair, Sakoe-Chiba radius {r} (dtaidistance window {r + 1}), float64, "
          f"best of {args.repeat}; {platform.processor() or platform.machine()}, "
          f"tswarp {tswarp.__version__} ({tswarp.info()['simd']})")
    head = "| n | cells | tswarp | Gcells/s | dtaidistance distance_fast | Gcells/s | dtai/tswarp | tswarp time / n |"
    if args.markdown:
        print(head)
        print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        d = row.get("dtai")
        cells = [f"{row['n']:,}", f"{row['cells']:,}", f"{row['tswarp'] * 1e3:.2f} ms",
                 f"{row['cells'] / row['tswarp'] / 1e9:.3f}",
                 f"{d * 1e3:.2f} ms" if d else "-",
                 f"{row['cells'] / d / 1e9:.3f}" if d else "-",
                 f"{d / row['tswarp']:.2f}x" if d else "-",
                 f"{row['tswarp'] / row['n'] * 1e9:.1f} ns"]
        print(("| " + " | ".join(cells) + " |") if args.markdown else "  ".join(cells))


if __name__ == "__main__":
    main()
