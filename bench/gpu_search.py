"""GPU subsequence search (issue 32): a length-128 query with a 5% window in a z-normalised
random walk of 10^6 to 10^8 points, the series from a numpy array and already on the GPU
(a PyTorch CUDA tensor, float64 and float32), beside tswarp's CPU search on all the
machine's cores, in the same run; every column must give the same match.

    python bench/gpu_search.py                 # the table
    python bench/gpu_search.py --profile       # also the GPU kernels' times at 10^8 points

Two queries: one taken from the series with noise (the UCR Suite's setting: a good match
exists, the CPU bench's query) and one random walk from outside the series (no good match:
the bounds prune less). Times are the best of --repeat calls after a warm-up call. A host
series of 64 MiB and more travels through page-locked pieces that several host threads
fill; --stage-compare times that against pageable copies (TSWARP_SEARCH_STAGE=0) in the
same run.
"""

import argparse
import os
import time

import numpy as np

import tswarp


def best_of(f, repeat):
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=float, nargs="*", default=[1e6, 1e7, 1e8])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--stage-compare", action="store_true",
                    help="the largest host series through page-locked pieces and pageable")
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    import torch

    rng = np.random.default_rng(args.seed)
    print(f"tswarp {tswarp.__version__}, {torch.cuda.get_device_name(0)}, seed {args.seed}")
    print("\n| points | query | numpy -> GPU s | on GPU f64 s | on GPU f32 s | CPU s (all cores) "
          "| match | DTW started |")
    print("|---|---|---|---|---|---|---|---|")
    outside = rng.standard_normal(128).cumsum()
    kw = dict(window=0.05)
    tswarp.search(outside, rng.standard_normal(10**5).cumsum(), 1, device="cuda", **kw)
    for N in (int(p) for p in args.points):
        s = rng.standard_normal(N).cumsum()
        inside = s[N // 3:N // 3 + 128] + 0.1 * rng.standard_normal(128)
        d64 = torch.from_numpy(s).cuda()
        d32 = d64.float()
        torch.cuda.synchronize()
        for name, q in (("from the series", inside), ("from outside", outside)):
            tswarp.search(q, d64, 1, **kw)  # warm-up (the pool's memory)
            th, (sh, dh, st) = best_of(lambda: tswarp.search(q, s, 1, device="cuda",
                                                             return_stats=True, **kw),
                                       args.repeat)
            tg, (sg, dg) = best_of(lambda: tswarp.search(q, d64, 1, **kw), args.repeat)
            tf, (sf, df) = best_of(lambda: tswarp.search(q, d32, 1, **kw), args.repeat)
            same = sg[0] == sh[0] and dg[0] == dh[0]
            tc = "-"
            if not args.no_cpu:
                tcs, (sc, dc) = best_of(lambda: tswarp.search(q, s, 1, device="cpu", **kw), 1)
                tc = f"{tcs:.3f}"
                same = same and sc[0] == sh[0] and dc[0] == dh[0]
            f32 = "" if sf[0] == sh[0] else f" (f32 {sf[0]})"
            print(f"| {N:.0e} | {name} | {th:.4f} | {tg:.4f} | {tf:.4f} | {tc} | {sh[0]} "
                  f"{'same' if same else 'DIFFER'}{f32} | "
                  f"{100 * st['dtw'] / st['windows']:.3f}% |", flush=True)
        del d64, d32
    if args.stage_compare:
        N = int(max(args.points))
        s = rng.standard_normal(N).cumsum()
        q = s[N // 3:N // 3 + 128] + 0.1 * rng.standard_normal(128)
        print(f"\n| {N:.0e} points from numpy | TSWARP_SEARCH_STAGE | s | match |")
        print("|---|---|---|---|")
        for mode in ("1", "0", "1", "0"):
            os.environ["TSWARP_SEARCH_STAGE"] = mode
            t, (st_, d_) = best_of(lambda: tswarp.search(q, s, 1, device="cuda", **kw),
                                   args.repeat)
            print(f"| | {mode} | {t:.4f} | {st_[0]} |", flush=True)
        del os.environ["TSWARP_SEARCH_STAGE"]
        # the link's own rates in this run: the same array to the GPU by PyTorch, pageable
        # and from page-locked memory (the pinning itself not timed)
        import torch
        t_page, _ = best_of(lambda: torch.from_numpy(s).cuda().sum().item(), args.repeat)
        pinned = torch.from_numpy(s).pin_memory()
        t_pin, _ = best_of(lambda: pinned.cuda().sum().item(), args.repeat)
        for name, t in (("pageable", t_page), ("page-locked", t_pin)):
            print(f"| torch .cuda() of the array | {name} | {t:.4f} | "
                  f"{s.nbytes / t / 1e9:.1f} GB/s |")
        del pinned
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        N = int(max(args.points))
        s = torch.from_numpy(rng.standard_normal(N).cumsum()).cuda()
        q = s[N // 3:N // 3 + 128].cpu().numpy() + 0.1 * rng.standard_normal(128)
        tswarp.search(q, s, 1, **kw)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            tswarp.search(q, s, 1, **kw)
        print(f"\nkernels of one search of {N:.0e} points on the GPU (torch.profiler):\n")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))
        h = s.cpu().numpy()
        tswarp.search(q, h, 1, device="cuda", **kw)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            tswarp.search(q, h, 1, device="cuda", **kw)
        print(f"\none search of {N:.0e} points from numpy (torch.profiler):\n")
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12))


if __name__ == "__main__":
    main()
