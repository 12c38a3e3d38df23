"""Where the time of the matrix form of soft-DTW (src/cuda/sdtw_mat.cuh) goes, and its knobs.

    python dev/gpu_sdtw_mat_probe.py [--peers DIR]

For B=32 N=512 D=64 and B=16 N=2048 D=16 (float32, uniform random, gamma 1): the wall time
of forward + backward through tswarp.torch.SoftDTW and the kernels' own time per call
(torch.profiler: cost tiles, wavefront forward / backward, gradient products), under the
developer knobs: the default choice, stripes of 256 and of 128 rows (TSWARP_SDTW_WF_SPLIT),
and the cost tiles by the direct form (TSWARP_SDTW_MAT_EXPAND=0). With --peers, each
peer's first failure on a small case is printed with its traceback.
"""
import argparse
import os
import statistics
import sys
import time
import traceback

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

from tswarp.torch import SoftDTW

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack


def wall(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    r = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        r.append((time.perf_counter() - t0) / reps)
    return statistics.median(r)


def probe(B, N, D, env):
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        x = torch.rand(B, N, D, device="cuda").requires_grad_()
        y = torch.rand(B, N, D, device="cuda").requires_grad_()
        f = SoftDTW(gamma=1.0)

        def step():
            x.grad = None
            y.grad = None
            f(x, y).sum().backward()

        t = wall(step)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                step()
            torch.cuda.synchronize()
        print(f"== B={B} N={N} D={D} {env or 'default'}: {t * 1e3:.3f} ms per call")
        rows = []
        for e in prof.key_averages():
            ct = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
            if ct > 0:
                rows.append((ct / 10, e.key[:90], e.count / 10))
        for ct, k, c in sorted(rows, reverse=True)[:9]:
            print(f"   {ct:9.1f} us  x{c:g}  {k}")
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def peers(folder):
    sys.path.insert(0, folder)
    x = torch.rand(4, 64, 3, device="cuda", requires_grad=True)
    y = torch.rand(4, 64, 3, device="cuda")
    for mod, make in (("softdtw_cuda", lambda m: m.SoftDTW(gamma=1.0, fused=False)),
                      ("soft_dtw_cuda", lambda m: m.SoftDTW(use_cuda=True, gamma=1.0))):
        try:
            m = __import__(mod)
            make(m)(x, y).sum().backward()
            print(f"{mod}: ok")
        except Exception:  # noqa: BLE001
            print(f"{mod}: failed")
            traceback.print_exc()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers")
    a = ap.parse_args()
    if a.peers:
        peers(a.peers)
    for B, N, D in ((32, 512, 64), (16, 2048, 16)):
        for env in ({}, {"TSWARP_SDTW_WF_SPLIT": "256"}, {"TSWARP_SDTW_WF_SPLIT": "128"},
                    {"TSWARP_SDTW_MAT_EXPAND": "0"}):
            probe(B, N, D, env)


if __name__ == "__main__":
    main()
