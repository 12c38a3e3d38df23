"""Exhaustive shapelet discovery on the GPU against the issue's targets (issue 6).

    python bench/gpu_shapelets.py [--quick] [--reps 3] [--markdown-out FILE] [--no-cpu]
                                  [--normalize {z,raw,both}]

find_shapelet over every candidate of every length min_length..len (step 1) of the training
set: GunPoint train (50 x 150, shipped with tswarp) and OSULeaf train (200 x 427, aeon's
bundled copy; skipped with the reason when aeon is missing). Device "cuda" is timed after a
warm-up call (the first CUDA call of a process creates the context), median of --reps runs
(OSULeaf: one run unless --reps is given); the CPU (all cores, the same process) is timed on
GunPoint, and its answer must be the GPU's, bit for bit (the "same" column).
Windows (for the rate): sum over candidates (i, s, l) and series j of the len_j - l + 1
window starts, i.e. the eq. 2 distances an exhaustive search evaluates.
--quick: OSULeaf cut to its first 60 series (a smoke run; no target then).
--normalize: z (default) the z-normalised search the targets are set for; raw the search of
shapelets that are not normalised (normalize=False), timed against the same targets; both:
the two, row after row.
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

import tswarp
from tswarp.shapelets import find_shapelet

MIN_LENGTH = 3


def windows(lengths, minl):
    """Window evaluations of an exhaustive search over lengths minl .. shortest."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = 0
    for l in range(minl, int(lengths.min()) + 1):
        starts = np.maximum(lengths - l + 1, 0)
        total += int(starts.sum()) * int(starts.sum())
    return total


def time_call(fn, reps):
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def key(s):
    return (s.series, s.start, s.length, s.threshold, s.gain, s.gap)


def load_osuleaf(npz=None):
    """aeon's OSULeaf train set; or, on a machine without aeon (the GPU machine has no
    package registry), the same arrays saved by `--save-osuleaf FILE` where aeon is."""
    if npz:
        d = np.load(npz, allow_pickle=False)
        return d["X"], d["y"]
    from aeon.datasets import load_classification
    X, y = load_classification("OSULeaf", split="train")
    return np.asarray(X)[:, 0, :], np.asarray(y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--osuleaf", metavar="NPZ", help="OSULeaf train as saved by --save-osuleaf")
    ap.add_argument("--save-osuleaf", metavar="NPZ", help="save aeon's OSULeaf train and exit")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU timing on GunPoint")
    ap.add_argument("--markdown-out", default=None)
    ap.add_argument("--normalize", choices=("z", "raw", "both"), default="z")
    args = ap.parse_args()
    if args.save_osuleaf:
        X, y = load_osuleaf()
        np.savez(args.save_osuleaf, X=X, y=y.astype(str))
        return 0

    info = tswarp.info()
    if not (info["cuda_built"] and info["cuda_devices"] > 0):
        sys.exit(f"# tswarp has no usable GPU here: cuda_built={info['cuda_built']}, "
                 f"cuda_devices={info['cuda_devices']}")
    gpu = info["gpus"][0]["name"] if info.get("gpus") else "?"
    print(f"# GPU {gpu}; {os.cpu_count()} CPU cores; tswarp {tswarp.__version__}")

    from tswarp.datasets import load_gunpoint
    cases = []
    Xg, yg = load_gunpoint("train")
    cases.append(("GunPoint train", Xg, yg, 0.05, args.reps or 3, not args.no_cpu))
    try:
        Xo, yo = load_osuleaf(args.osuleaf)
        target = 20.0
        if args.quick:
            Xo, yo, target = Xo[:60], yo[:60], None
        cases.append(("OSULeaf train" + (" (60)" if args.quick else ""), Xo, yo, target,
                      args.reps or 1, False))
    except Exception as e:  # noqa: BLE001
        print(f"# OSULeaf not available offline ({type(e).__name__}: {e}): skipped")

    # warm-up: context creation and module load, not part of any timing
    find_shapelet(Xg[:6, :20], yg[:6], device="cuda")

    kinds = {"z": [True], "raw": [False], "both": [True, False]}[args.normalize]
    rows = []
    for (name, X, y, target, reps, with_cpu), norm in [(c, k) for c in cases for k in kinds]:
        n, L = X.shape
        w = windows([L] * n, MIN_LENGTH)
        if not norm:
            name = name + " (not normalised)"
        t_gpu, s_gpu = time_call(lambda: find_shapelet(X, y, min_length=MIN_LENGTH,
                                                       normalize=norm, device="cuda"), reps)
        verdict = "-" if target is None else ("PASS" if t_gpu <= target else "MISS")
        rows.append((name, f"{n} x {L}", "cuda", t_gpu, target, w / t_gpu, verdict, "-",
                     key(s_gpu)))
        print(f"{name}: cuda {t_gpu:.4f} s, {w / t_gpu:.3g} windows/s -> {key(s_gpu)}")
        if with_cpu:
            t_cpu, s_cpu = time_call(lambda: find_shapelet(X, y, min_length=MIN_LENGTH,
                                                           normalize=norm, device="cpu"), 1)
            same = "yes" if key(s_cpu) == key(s_gpu) else "NO"
            rows.append((name, f"{n} x {L}", f"cpu ({os.cpu_count()} cores)", t_cpu, None,
                         w / t_cpu, "-", same, key(s_cpu)))
            print(f"{name}: cpu {t_cpu:.3f} s ({t_cpu / t_gpu:.1f}x the GPU time); same "
                  f"answer: {same}")

    lines = ["| dataset | size | device | time (s) | target (s) | windows/s | vs target | "
             "same as GPU | shapelet (series, start, length) gain |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, size, dev, t, target, rate, verdict, same, k in rows:
        lines.append(f"| {name} | {size} | {dev} | {t:.4g} | "
                     f"{'-' if target is None else f'<= {target:g}'} | {rate:.3g} | "
                     f"{verdict} | {same} | ({k[0]}, {k[1]}, {k[2]}) {k[4]:.6f} |")
    table = "\n".join(lines)
    print()
    print(f"Exhaustive shapelet search, lengths {MIN_LENGTH}..len step 1 "
          f"(python bench/gpu_shapelets.py{' --quick' if args.quick else ''}):")
    print(table)
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(table + "\n")
    if any(r[6] == "MISS" for r in rows) or any(r[7] == "NO" for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
