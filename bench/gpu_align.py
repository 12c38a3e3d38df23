#!/usr/bin/env python3
"""GPU benchmark: exact DTW alignment paths (tswarp.dtw_path, src/cuda/path.cu) against the targets.

    python bench/gpu_align.py [--quick] [--markdown] [--skip-1m] [--seed S]

Cases (random (n, 12) sequences, uniform [0, 1) like chroma features; float32):
  - 100k x 12, cosine cost, step p05 ((1,1),(1,2),(2,1), weights 2,3,3), device='cuda'
    (method auto: the stored 2-bit backtrace, 2.5 GB): target <= 0.10 s (ParDTW: 2.99 s);
    the same forced to the linear-memory method, and symmetric1 + sqeuclidean;
  - 1M x 12, cosine, p05, device='cuda' (no stored backtrace fits 80 GB: auto picks the
    linear-memory method, checkpoint rows and recomputed blocks): target <= 20 s;
  - the CPU backend (all cores) on 20k x 12 cosine p05, for the GPU/CPU ratio in GCUPS,
    and a check: GPU path == CPU path (array_equal, cost ==) on 20k x 12 (and 4k x 12 f64).
Time: wall clock of the dtw_path call (numpy in, path out: transfers included) after one
untimed warm-up call (CUDA context, module load); for the 100k cases the median of 3 to 5
calls after a first one, which also grows tswarp's memory pool to the call's size (its
time is in the notes); GCUPS = n m / time / 1e9 (cells of one
forward pass; the linear method does more work than that). Ratio = time / target
(<= 1 meets it). Exit status 1 when a check fails (a missed target is not an error).
"""
import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--skip-1m", action="store_true", help="skip the 1,000,000-long case")
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


ARGS = parse_args()

import numpy as np  # noqa: E402
import tswarp  # noqa: E402

ROWS = []
FAILED = []


def data(n, dim, dtype=np.float32, seed=None):
    rng = np.random.default_rng(ARGS.seed if seed is None else seed)
    return rng.random((n, dim)).astype(dtype), rng.random((n, dim)).astype(dtype)


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def add(case, device, t, cells, target=None, note=""):
    g = cells / t / 1e9 if t > 0 else float("nan")
    ratio = f"{t / target:.2f}" if target else ""
    verdict = ("PASS" if t <= target else "MISS") if target else ""
    ROWS.append([case, device, f"{t:.3f} s", f"{g:.1f}", f"{target:g} s" if target else "",
                 ratio, verdict, note])
    print(f"  {case:44s} {device:5s} {t:9.3f} s {g:8.1f} GCUPS {ratio:>6s} {verdict} {note}",
          flush=True)


def gpu_case(case, n, step, cost, method="auto", target=None, dtype=np.float32, reps=1):
    """reps > 1: the first call (it grows tswarp's memory pool to the call's size) and then
    the median of reps more, which is the time reported."""
    a, b = data(n, 12, dtype)

    def call():
        return tswarp.dtw_path(a, b, step=step, cost=cost, method=method, device="cuda")

    t, (path, c) = timed(call)
    note = f"path {len(path)} cells, cost {c:.6g}"
    if reps > 1:
        first = t
        t = float(np.median([timed(call)[0] for _ in range(reps)]))
        note += f"; median of {reps} calls after a first of {first:.3f} s"
    add(case, "cuda", t, float(n) * n, target, note)
    return t


def check(case, n, step, cost, dtype, method="auto"):
    a, b = data(n, 12, dtype, seed=ARGS.seed + 1)
    ref, c0 = tswarp.dtw_path(a, b, step=step, cost=cost, device="cpu")
    got, c = tswarp.dtw_path(a, b, step=step, cost=cost, method=method, device="cuda")
    ok = np.array_equal(got, ref) and c == c0
    print(f"  check {case}: GPU path {'==' if ok else '!='} CPU path "
          f"({len(got)} / {len(ref)} cells, cost {c!r} / {c0!r})", flush=True)
    if not ok:
        FAILED.append(case)
    return ok


def main():
    info = tswarp.info()
    gpus = info.get("gpus") or []
    if not info.get("cuda_built") or not gpus:
        print("no CUDA GPU (tswarp.info(): cuda_built=%s, gpus=%d): nothing to run"
              % (info.get("cuda_built"), len(gpus)))
        return 0
    print(f"tswarp {info['version']} on {gpus[0]['name']}, CPU {platform.processor() or platform.machine()} "
          f"x {os.cpu_count()} threads, numpy {np.__version__}")
    quick = ARGS.quick
    big = 20000 if quick else 100000
    huge = 200000 if quick else 1000000
    # warm-up: the CUDA context and the module, not timed
    w = data(300, 12)
    tswarp.dtw_path(*w, step="p05", cost="cosine", device="cuda")

    print("checks (GPU == CPU):")
    check("20k x 12 f32 cosine p05", 4000 if quick else 20000, "p05", "cosine", np.float32)
    check("20k x 12 f32 sqeuclidean symmetric1", 4000 if quick else 20000, "symmetric1",
          "sqeuclidean", np.float32)
    check("4k x 12 f64 cosine p05 linear", 4000, "p05", "cosine", np.float64, method="linear")

    print("timings:")
    label = f"{big // 1000}k x 12"
    gpu_case(f"{label} f32 cosine p05 (auto: stored)", big, "p05", "cosine",
             target=0.10 if not quick else None, reps=5)
    gpu_case(f"{label} f32 cosine p05 (linear)", big, "p05", "cosine", method="linear", reps=3)
    gpu_case(f"{label} f32 sqeuclidean symmetric1 (auto)", big, "symmetric1", "sqeuclidean",
             reps=3)
    if not ARGS.skip_1m:
        gpu_case(f"{huge // 1000}k x 12 f32 cosine p05 (auto: linear)", huge, "p05", "cosine",
                 target=20.0 if not quick else None)
    n_cpu = 5000 if quick else 20000
    a, b = data(n_cpu, 12)
    t, _ = timed(lambda: tswarp.dtw_path(a, b, step="p05", cost="cosine", device="cpu"))
    add(f"{n_cpu // 1000}k x 12 f32 cosine p05 (CPU, {tswarp.info()['threads']} threads)",
        "cpu", t, float(n_cpu) * n_cpu)

    if ARGS.markdown:
        print()
        print("| case | device | time | GCUPS | target | time/target | | notes |")
        print("|---|---|---|---|---|---|---|---|")
        for r in ROWS:
            print("| " + " | ".join(r) + " |")
    if FAILED:
        print("FAILED checks: " + ", ".join(FAILED))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
