"""DTW lower bounds (issue 32): how tight each is, and what each costs.

    python bench/lb_bench.py [--threads 2] [--datasets GunPoint ArrowHead OSULeaf]

Tightness: the mean of bound / DTW over the pairs (1 is the distance itself), float64, for
LB_Kim, LB_Keogh (query envelope), LB_Improved, LB_Enhanced (5 bands) and LB_Webb: random
walks of 256 points (the first against 300 others, windows 5%, 10%, 20%) and each UCR
data set's first test series against its training set (window 10%), with each bound's
time for the whole set (best of 3).
"""

import argparse
import time

import numpy as np

import tswarp

BOUNDS = [("LB_Kim", tswarp.lb_kim), ("LB_Keogh", tswarp.lb_keogh),
          ("LB_Improved", tswarp.lb_improved), ("LB_Enhanced", tswarp.lb_enhanced),
          ("LB_Webb", tswarp.lb_webb)]


def best_of(f, repeat=3):
    ts, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def tightness_row(label, q, X, window, threads):
    d = tswarp.cdist([q], X, window=window, n_jobs=threads)[0]
    keep = d > 0
    cells = []
    for _, f in BOUNDS:
        t, lb = best_of(lambda: f(q, X, window=window, n_jobs=threads))
        cells.append(f"{np.mean(lb[keep] / d[keep]):.3f} ({t * 1e3:.1f} ms)")
    print(f"| {label} | " + " | ".join(cells) + " |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--datasets", nargs="*", default=["GunPoint", "ArrowHead", "OSULeaf"])
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    print(f"tswarp {tswarp.__version__}, {tswarp.info()['simd']}, {args.threads} threads, "
          f"seed {args.seed}\n")
    rng = np.random.default_rng(args.seed)
    print("## Tightness: mean bound / DTW (time of the bound for the whole set)\n")
    print("| pairs | " + " | ".join(n for n, _ in BOUNDS) + " |")
    print("|---|" + "---|" * len(BOUNDS))
    q = rng.standard_normal(256).cumsum()
    X = rng.standard_normal((300, 256)).cumsum(axis=1)
    for w in (0.05, 0.1, 0.2):
        tightness_row(f"random walks 1 x 300 x 256, window {w}", q, X, w, args.threads)
    try:
        from aeon.datasets import load_classification
        for name in args.datasets:
            Xtr = np.ascontiguousarray(load_classification(name, split="train")[0][:, 0, :])
            Xte = np.ascontiguousarray(load_classification(name, split="test")[0][:, 0, :])
            tightness_row(f"{name}: test[0] x train ({len(Xtr)} x {Xtr.shape[1]}), window 0.1",
                          Xte[0], Xtr, 0.1, args.threads)
    except ImportError:
        print("(aeon is not installed: no UCR data sets)")


if __name__ == "__main__":
    main()
