"""Soft-DTW forward + backward on the GPU at every feature dimension, beside the peers.

    python bench/gpu_sdtw_grad.py [--peers DIR] [--reps 10] [--markdown-out FILE]
                                  [--dtw] [--scan]

Each case times ``loss = f(x, y); loss.sum().backward()`` on CUDA tensors (B pairs of N x D
against M x D, uniform random in [0, 1), float32, x and y requiring grad, gamma 1): the wall
time per call of back-to-back calls after warm-up, median of 5 rounds; the whole
user-visible call (Python, the C call, the kernels, autograd). Every implementation runs in
this process on this GPU at float32:
  tswarp             tswarp.torch.SoftDTW, its own choice of kernels
  tswarp fused       the same with TSWARP_SDTW_MAT=0: the cost of every cell formed inside the
                     recursion (the only kernels before the matrix form, src/cuda/sdtw_mat.cuh)
  sdtw-cuda-torch    BGU-CS-VIL's softdtw_cuda.SoftDTW(fused=False) (cost tensor, Numba)
  pytorch-softdtw-cuda  Maghoumi's SoftDTW(use_cuda=True) (cost tensor, Numba; N <= 1024)
The peers are not on PyPI: --peers DIR names a folder holding `soft_dtw_cuda.py` (Maghoumi)
and the `softdtw_cuda` package (BGU-CS-VIL), fetched from their public repositories (never
committed here). numpy 2 removed `numpy.row_stack`; it is aliased to `numpy.vstack` here,
before they are imported, for any of their code that still calls it. The GPU machine's Numba
(numba 0.68.0 with numba-cuda 0.30.4, 2026-11-28) fails to compile Python's builtin max and
min of two numbers inside a CUDA kernel ("TypeError: Signature mismatch: 2 argument types
given, but function takes 1 arguments", the same with a fresh numba-cuda wheel), which both
peers' kernels call: before their first call, their modules' names max and min are bound to
two-argument functions of the same meaning (numba's register_jitable: plain Python on the
host, compiled in kernels). Their code is not changed.
Peak memory: torch.cuda.max_memory_allocated over one call above what was allocated before
it (tswarp takes its device workspace from PyTorch's allocator, so it is counted too).
Error: each implementation's values and x-gradients on the first four pairs against
tswarp's float64 GPU kernel on the same pairs (float64 throughout; it equals the CPU
backend to 1e-9 in tests/gpu/test_cuda_sdtw.c), relative to the largest entry.
--dtw adds DTW cdist of 4096 x 4096 series of length 256 at D = 1, 16 and 64 (cells/s).
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover
    sys.exit("gpu_sdtw_grad.py needs PyTorch")

import tswarp
from tswarp.torch import SoftDTW

if not hasattr(np, "row_stack"):  # numpy 2: the peers' alias
    np.row_stack = np.vstack

# B, N (= M), D, target fwd+bwd (s) or None
CASES = [
    (32, 512, 64, 0.5e-3),
    (16, 2048, 16, 10e-3),
    (512, 256, 2, 0.40e-3),
    (64, 512, 1, 0.30e-3),
    (32, 512, 1, None),
    (32, 512, 2, None),
    (32, 512, 16, None),
    (32, 512, 256, None),
    (16, 1024, 64, None),
    (8, 4096, 16, None),
    (4, 4096, 64, None),
    (4, 4096, 256, None),
]


def walks(B, N, d, gen):
    x = torch.randn(B, N, d, generator=gen, device="cuda", dtype=torch.float32)
    return torch.cumsum(x, dim=1) * 0.1


def time_it(fn, reps):
    """Median over 5 rounds of the wall time per call of `reps` back-to-back calls (a
    training loop's view: each call returns once its results are written)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - t0) / reps)
    return statistics.median(rounds)


class with_env:
    """Sets environment variables (tswarp's developer knobs) for a with-block."""

    def __init__(self, **kv):
        self.kv, self.old = kv, {}

    def __enter__(self):
        for k, v in self.kv.items():
            self.old[k] = os.environ.get(k)
            os.environ[k] = v

    def __exit__(self, *exc):
        for k, v in self.old.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def scan(gen, reps, gamma):
    """The split's stripe heights (TSWARP_SDTW_WF_SPLIT) on the small-batch cases, each
    against the default choice: time and whether the gradients are the same bits (they are
    where the default is itself a split, one row a lane; against a one-block default with
    two rows a lane, B=64, the column gradient's sums are added in another order)."""
    out = ["", "Split scan (fwd+bwd; 'same' = gradients bit-equal to the default choice):", "",
           "| case | rows/stripe | fwd+bwd | same |", "|---|---|---|---|"]
    for B, N, d in [(64, 512, 1), (16, 1024, 1), (4, 8192, 1)]:
        x = walks(B, N, d, gen).requires_grad_()
        y = walks(B, N, d, gen).requires_grad_()
        fn_mod = SoftDTW(gamma=gamma)

        def step():
            x.grad = None
            y.grad = None
            fn_mod(x, y).sum().backward()

        step()
        ref = (x.grad.clone(), y.grad.clone())
        r = reps if N <= 1024 else 2
        out.append(f"| B={B} N=M={N} | auto | {time_it(step, r) * 1e3:.3f} ms | ref |")
        for rows in (32, 64, 96, 128, 192, 256):
            if rows >= N:
                continue
            with with_env(TSWARP_SDTW_WF_SPLIT=str(rows)):
                t = time_it(step, r)
                same = torch.equal(x.grad, ref[0]) and torch.equal(y.grad, ref[1])
            out.append(f"| B={B} N=M={N} | {rows} | {t * 1e3:.3f} ms | "
                       f"{'yes' if same else 'NO'} |")
    return out


def two_arg_min_max(*modules):
    """Binds max and min in the peers' modules to two-argument versions that this machine's
    Numba compiles in CUDA kernels (see the docstring); plain Python elsewhere."""
    from numba.extending import register_jitable

    @register_jitable
    def max2(a, b):
        return a if a > b else b

    @register_jitable
    def min2(a, b):
        return a if a < b else b

    for mod in modules:
        mod.max, mod.min = max2, min2


def load_peers(folder):
    """The peers' SoftDTW factories found under folder: {label: f(gamma) -> module}."""
    peers = {}
    if not folder:
        return peers
    sys.path.insert(0, folder)
    try:
        import softdtw_cuda  # BGU-CS-VIL/sdtw-cuda-torch
        import softdtw_cuda.cuda.kernels as bgu_kernels

        two_arg_min_max(bgu_kernels)
        peers["sdtw-cuda-torch"] = lambda g: softdtw_cuda.SoftDTW(gamma=g, fused=False)
    except Exception as e:  # noqa: BLE001 (report and go on)
        print(f"sdtw-cuda-torch not loaded: {type(e).__name__}: {e}")
    try:
        import soft_dtw_cuda  # Maghoumi/pytorch-softdtw-cuda

        two_arg_min_max(soft_dtw_cuda)
        peers["pytorch-softdtw-cuda"] = lambda g: soft_dtw_cuda.SoftDTW(use_cuda=True, gamma=g)
    except Exception as e:  # noqa: BLE001
        print(f"pytorch-softdtw-cuda not loaded: {type(e).__name__}: {e}")
    return peers


def reference(x, y, gamma, P):
    """tswarp's float64 GPU values and x-gradients of the first P pairs."""
    xd = x[:P].detach().double().requires_grad_()
    yd = y[:P].detach().double()
    with with_env(TSWARP_SDTW_MAT="0"):
        v = SoftDTW(gamma=gamma)(xd, yd)
        v.sum().backward()
    return v.detach(), xd.grad.detach()


def run_one(fn, x, y, reps, P):
    """Time, peak memory, values and x-gradients of the first P pairs (or the error)."""
    def step():
        x.grad = None
        y.grad = None
        fn(x, y).sum().backward()

    try:
        x.grad = None
        v = fn(x, y)
        v.sum().backward()
        vals, gx = v.detach()[:P].double(), x.grad[:P].double()
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        one = time.perf_counter() - t0
        r = max(1, min(reps, int(0.25 / max(one, 1e-6))))
        return time_it(step, r), peak, vals, gx, None
    except Exception as e:  # noqa: BLE001 (a peer that fails is reported as failing)
        torch.cuda.empty_cache()
        msg = str(e).splitlines()[0] if str(e) else ""
        return None, None, None, None, f"fails: {type(e).__name__} {msg[:60]}"


def dtw_rates(gen):
    """DTW cdist of 4096 x 4096 series of length 256 at D = 1, 16, 64: time and cells/s."""
    out = ["", "DTW cdist, 4096 x 4096 series of length 256, float32, no window "
           "(tswarp.cdist, device='cuda', host arrays in and out):", "",
           "| D | time | cells/s | vs D = 1 |", "|---|---|---|---|"]
    base = None
    for d in (1, 16, 64):
        X = torch.rand(4096, 256, d, generator=gen, device="cuda").cpu().numpy()
        tswarp.cdist(X[:64], X[:64], metric="dtw", device="cuda")
        t0 = time.perf_counter()
        tswarp.cdist(X, X, metric="dtw", device="cuda")
        t = time.perf_counter() - t0
        rate = 4096 * 4096 * 256 * 256 / t
        base = base or rate
        out.append(f"| {d} | {t:.3f} s | {rate / 1e12:.2f} T | {rate / base:.2f} |")
    return out


def fmt_ms(t):
    return f"{t * 1e3:.3f} ms" if t is not None else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--peers", help="folder with the peers' sources (see the docstring)")
    ap.add_argument("--only", help="comma-separated case indices")
    ap.add_argument("--markdown-out")
    ap.add_argument("--dtw", action="store_true", help="also DTW cdist at D = 1, 16, 64")
    ap.add_argument("--scan", action="store_true", help="also scan the split's stripe heights")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    gen = torch.Generator(device="cuda").manual_seed(1234)
    name = torch.cuda.get_device_name(0)
    peers = load_peers(args.peers)
    impls = [("tswarp", lambda g: SoftDTW(gamma=g), {}),
             ("tswarp fused", lambda g: SoftDTW(gamma=g), {"TSWARP_SDTW_MAT": "0"})]
    impls += [(k, f, {}) for k, f in peers.items()]
    P = 4
    out = [f"GPU: {name}; torch {torch.__version__}; tswarp {tswarp.__version__}; "
           f"gamma {args.gamma}; float32; fwd+bwd wall time per call, median of 5 rounds.", "",
           "| B, N=M, D | implementation | fwd+bwd | cells/s | peak memory | "
           "its time / tswarp's | value err | grad err | target |",
           "|---|---|---|---|---|---|---|---|---|"]
    only = {int(k) for k in args.only.split(",")} if args.only else None
    for ci, (B, N, D, target) in enumerate(CASES):
        if only is not None and ci not in only:
            continue
        x = torch.rand(B, N, D, generator=gen, device="cuda").requires_grad_()
        y = torch.rand(B, N, D, generator=gen, device="cuda").requires_grad_()
        v_ref, g_ref = reference(x, y, args.gamma, P)
        gscale = float(g_ref.abs().max())
        t_ts = None
        for label, make, env in impls:
            if label == "pytorch-softdtw-cuda" and N > 1024:
                out.append(f"| {B}, {N}, {D} | {label} | cannot run (N > 1024) | | | | | | |")
                continue
            with with_env(**env):
                t, peak, vals, gx, err = run_one(make(args.gamma), x, y, args.reps, P)
            if err:
                out.append(f"| {B}, {N}, {D} | {label} | {err} | | | | | | |")
                continue
            if label == "tswarp":
                t_ts = t
            verr = float(((vals - v_ref).abs() / v_ref.abs().clamp(min=1)).max())
            gerr = float((gx - g_ref).abs().max()) / gscale
            ratio = f"{t / t_ts:.1f}x" if t_ts and label != "tswarp" else ""
            tgt = ""
            if label == "tswarp" and target:
                tgt = f"<= {target * 1e3:.2f} ms: {'met' if t <= target else 'MISSED'}"
            out.append(f"| {B}, {N}, {D} | {label} | {fmt_ms(t)} | "
                       f"{B * N * N / t / 1e9:.1f} G | {peak / 2**20:.0f} MiB | {ratio} | "
                       f"{verr:.1e} | {gerr:.1e} | {tgt} |")
            print(out[-1], flush=True)
        del x, y
        torch.cuda.empty_cache()
    if args.dtw:
        out += dtw_rates(gen)
    if args.scan:
        out += scan(gen, args.reps, args.gamma)
    text = "\n".join(out)
    print(text)
    if args.markdown_out:
        with open(args.markdown_out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
