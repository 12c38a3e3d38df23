"""Alignment accuracy of DTW and segmental DTW (NSDTW, WSDTW, SSDTW) against a known warp.

    .venv/bin/python bench/align_accuracy.py [--length 3000] [--pairs 3] [--jobs 1]

The study of Yang, Shaw and Tsai (TASLP 2022, Fig. 6 and 7) on synthetic pairs with a known
ground truth instead of the Mazurka beat annotations:
  - a base sequence A of `length` frames, of one of two kinds:
      smooth   1-d Gaussian noise low-passed by a Gaussian kernel (sd 6 frames), unit
               variance; cost sqeuclidean;
      chroma   12-d chroma-like features: a run of "chords" (3-4 active pitch classes with
               random weights, 8-60 frames each), a slow drift, smoothed over 5 frames,
               each frame scaled to a maximum of 1; cost cosine (the paper's);
  - a random monotone time warp: B frame k shows A at position tau(k), tau' = a tempo that
    wanders smoothly (a low-passed random walk of the log-tempo) within [0.625, 1.6] (inside
    the slopes 1/2..2 the p05 steps allow), len(B) = len(A) / mean tempo; B = A linearly
    interpolated at tau, then white Gaussian noise at SNR 20, 10, 0, -10 dB of B's power
    (clean-noisy pairs as in Fig. 7);
  - ground truth: A frame i sits at tau^-1(i) in B. Annotated positions: every 4th frame of
    A (the paper's "beats"). A method's prediction for row i: the mean column of its path
    cells in row i, linearly interpolated over rows the path skips ((2,1) steps skip one).
    Error rate at tolerance t: the share of annotated positions predicted more than t frames
    from the truth.
Methods: DTW (tswarp.dtw_path, step p05: the paper's baseline, weights 2, 3, 3), FastDTW
(tswarp.fastdtw, the fastdtw package's algorithm and symmetric1 steps, radius 1, 10 and 100;
chroma frames scaled to unit length, whose squared distance is twice the cosine cost) and
segmental_dtw with the paper's steps (p05_query, weights 1, 1, 2), variants weak, strict and
none, N in {2, 4, 8, 16, 32}. A method that finds no ordered placement (SSDTW can) counts
every position of that pair as an error, and the failures are counted. Each call is timed
(wall clock, --jobs threads, default 1: the total computation, as the paper's Table II,
and robust on a shared machine where a busy core stalls a multi-threaded wavefront); times
are per pair, medians over pairs.
Seeded (0): the same data on every run.
"""

import argparse
import os
import platform
import sys
import time

import numpy as np

import tswarp

SNRS = (20, 10, 0, -10)
NS = (2, 4, 8, 16, 32)
TOLS = (1, 2, 5, 10, 20, 50)
KINDS = ("smooth", "chroma")


def smooth_signal(rng, n):
    x = rng.normal(size=n + 80)
    k = np.exp(-0.5 * (np.arange(-30, 31) / 6.0) ** 2)
    y = np.convolve(x, k / k.sum(), mode="same")[40:40 + n]
    return ((y - y.mean()) / y.std())[:, None]


def chroma_like(rng, n):
    out = np.empty((n, 12))
    t = 0
    while t < n:
        dur = int(rng.integers(8, 61))
        chord = np.full(12, 0.05)
        notes = rng.choice(12, size=int(rng.integers(3, 5)), replace=False)
        chord[notes] += rng.uniform(0.4, 1.0, size=len(notes))
        seg = chord + 0.03 * np.cumsum(rng.normal(size=(dur, 12)), axis=0) / np.sqrt(dur)
        out[t:t + dur] = seg[:n - t]
        t += dur
    k = np.ones(5) / 5
    out = np.stack([np.convolve(out[:, c], k, mode="same") for c in range(12)], 1)
    out = np.clip(out, 0.0, None)
    return out / out.max(axis=1, keepdims=True)


def warp(rng, n):
    """tau (len m, increasing, tau[0] = 0, tau[-1] = n - 1) with tau' in [0.625, 1.6]."""
    m0 = int(n / rng.uniform(0.85, 1.18))
    walk = np.cumsum(rng.normal(scale=0.08, size=m0 + 200))
    k = np.exp(-0.5 * (np.arange(-60, 61) / 20.0) ** 2)
    logt = np.convolve(walk - walk.mean(), k / k.sum(), mode="same")[100:100 + m0]
    tempo = np.clip(np.exp(logt), 0.625, 1.6)
    for _ in range(50):  # scale to end at n - 1, keeping the tempo inside its bounds
        tau = np.concatenate([[0.0], np.cumsum(tempo[1:])])
        tempo = np.clip(tempo * (n - 1) / tau[-1], 0.625, 1.6)
    tau = np.concatenate([[0.0], np.cumsum(tempo[1:])])
    tau *= (n - 1) / tau[-1]
    return tau


def make_pair(rng, kind, n, snr):
    A = smooth_signal(rng, n) if kind == "smooth" else chroma_like(rng, n)
    tau = warp(rng, n)
    B = np.stack([np.interp(tau, np.arange(n), A[:, c]) for c in range(A.shape[1])], 1)
    noise = rng.normal(size=B.shape)
    power = np.mean(B ** 2)
    B = B + noise * np.sqrt(power / 10 ** (snr / 10))
    truth = np.interp(np.arange(n), tau, np.arange(len(tau)))  # tau^-1(i)
    return A, B, truth


def predicted(path, n):
    rows, inv = np.unique(path[:, 0], return_inverse=True)
    sums = np.bincount(inv, weights=path[:, 1])
    counts = np.bincount(inv)
    return np.interp(np.arange(n), rows, sums / counts)


FASTDTW_RADII = (1, 10, 100)


def methods():
    yield "DTW", None, None
    for r in FASTDTW_RADII:
        yield f"FastDTW-{r}", "fastdtw", r
    for v, name in (("weak", "WSDTW"), ("strict", "SSDTW"), ("none", "NSDTW")):
        for N in NS:
            yield f"{name}-{N}", v, N


def run(args):
    rng = np.random.default_rng(0)
    names = [m[0] for m in methods()]
    # errors[kind][snr][name] = list of per-pair arrays of |error|; None when it failed
    res = {k: {s: {nm: [] for nm in names} for s in SNRS} for k in KINDS}
    times = {nm: [] for nm in names}
    for kind in KINDS:
        cost = "sqeuclidean" if kind == "smooth" else "cosine"
        for snr in SNRS:
            for p in range(args.pairs):
                A, B, truth = make_pair(rng, kind, args.length, snr)
                beats = np.arange(0, args.length, 4)
                for name, variant, N in methods():
                    t = time.perf_counter()
                    try:
                        if variant is None:
                            path, _ = tswarp.dtw_path(A, B, step="p05", cost=cost,
                                                      n_jobs=args.jobs)
                        elif variant == "fastdtw":
                            # symmetric1 steps (the package's); for chroma the frames scaled
                            # to unit length, whose squared distance is twice the cosine cost
                            Af, Bf = A, B
                            if cost == "cosine":
                                Af = A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True),
                                                    1e-300)
                                Bf = B / np.maximum(np.linalg.norm(B, axis=1, keepdims=True),
                                                    1e-300)
                            path, _ = tswarp.fastdtw(Af, Bf, N, layout="channels_last")
                        else:
                            path = tswarp.segmental_dtw(A, B, N, variant, step="p05_query",
                                                        cost=cost, n_jobs=args.jobs)
                    except ValueError as e:
                        if "TSW_ENOPATH" not in str(e):
                            raise
                        path = None
                    times[name].append(time.perf_counter() - t)
                    if path is None:
                        res[kind][snr][name].append(None)
                    else:
                        err = np.abs(predicted(path, args.length)[beats] - truth[beats])
                        res[kind][snr][name].append(err)
                print(f"  {kind} snr {snr:+d} pair {p} done", file=sys.stderr, flush=True)
    return res, times, names


def rate(errs, tol):
    """Error rate (%) over every annotated position of every pair; failures count fully."""
    bad = tot = 0
    for e in errs:
        if e is None:
            continue
        bad += int(np.sum(e > tol))
        tot += len(e)
    fails = sum(e is None for e in errs)
    if fails:
        n_each = max((len(e) for e in errs if e is not None), default=1)
        bad += fails * n_each
        tot += fails * n_each
    return 100.0 * bad / max(tot, 1), fails


def report(res, times, names, args):
    out = []
    out.append(f"length {args.length} frames, {args.pairs} pairs per kind and SNR, "
               f"positions every 4 frames; error rate in % (failed alignments counted fully)")
    for kind in KINDS:
        for snr in SNRS:
            out.append("")
            out.append(f"### {kind}, SNR {snr:+d} dB")
            out.append("")
            out.append("| method | " + " | ".join(f"<= {t}" for t in TOLS) + " | failed |")
            out.append("|---|" + "---:|" * (len(TOLS) + 1))
            for nm in names:
                rs = [rate(res[kind][snr][nm], t) for t in TOLS]
                out.append(f"| {nm} | " + " | ".join(f"{r[0]:.1f}" for r in rs) +
                           f" | {rs[0][1]} |")
    out.append("")
    out.append(f"### time per pair (median over all pairs, seconds, {args.jobs} thread(s))")
    out.append("")
    out.append("| method | seconds | ratio to DTW |")
    out.append("|---|---:|---:|")
    t0 = np.median(times["DTW"])
    for nm in names:
        out.append(f"| {nm} | {np.median(times[nm]):.4f} | {np.median(times[nm]) / t0:.2f} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--length", type=int, default=3000)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1, help="threads per call (default 1)")
    args = ap.parse_args()
    info = tswarp.info()
    print(f"# tswarp {tswarp.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, threads {info.get('threads')}, simd {info.get('simd')}")
    t = time.perf_counter()
    res, times, names = run(args)
    print(report(res, times, names, args))
    print(f"\n(total {time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
