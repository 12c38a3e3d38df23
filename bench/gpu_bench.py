#!/usr/bin/env python3
"""GPU benchmark: the CUDA backend on the cases of issue 3's performance table.

Prints one table: case, input kind, time (median of the timed calls after 0.3 s of warm-up calls,
measured with CUDA events), GCUPS (cells = sum of len_a * len_b over the pairs computed), the
peer figure the issue quotes (measured on the same H100) and peer/tswarp, the issue's target
with PASS/MISS, the CPU backend's GCUPS on this machine (all cores, on the same or a smaller
case) with the GPU/CPU ratio, and a check of the GPU values against the CPU backend.

    python bench/gpu_bench.py [--repeats R] [--quick] [--markdown] [--markdown-out FILE]
                              [--only PREFIXES] [--no-cpu] [--lib cupy|torch] [--seed S]

Inputs are random walks (cumulative sums of N(0, 1) steps) that live on the GPU as CuPy
arrays (else PyTorch tensors), passed zero-copy, so host-device transfers are excluded;
rows marked "numpy" take numpy arrays (transfers and the result's copy back included).
Exit status: 0, or 1 when a case failed or its values disagree with the CPU backend
(a MISS of a performance target is not an error).
"""
import argparse
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = [ROOT / "bench" / "data" / "synthetic_control.data",
        ROOT.parent / "shared" / "data" / "synthetic_control.data"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10, help="timed calls per case (median)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    ap.add_argument("--markdown-out", default="", help="also write the markdown table here")
    ap.add_argument("--only", default="", help="comma-separated case-name prefixes")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU backend column")
    ap.add_argument("--lib", choices=("auto", "cupy", "torch"), default="auto")
    ap.add_argument("--seed", type=int, default=20261122)
    return ap.parse_args()


ARGS = parse_args()

import numpy as np  # noqa: E402

import tswarp  # noqa: E402

THREADS = os.cpu_count() or 1


# ---- GPU arrays and CUDA events -----------------------------------------------------------------

class Gpu:
    """The array library inputs live in, and CUDA-event timing on its current stream."""

    def __init__(self, which):
        self.name, self.mod = None, None
        order = ("cupy", "torch") if which == "auto" else (which,)
        for name in order:
            try:
                if name == "cupy":
                    import cupy
                    cupy.cuda.runtime.getDeviceCount()
                    cupy.zeros(1).sum()
                    self.name, self.mod = "cupy", cupy
                else:
                    import torch
                    if not torch.cuda.is_available():
                        continue
                    self.name, self.mod = "torch", torch
                break
            except Exception as e:  # not installed or no device
                print(f"# note: {name} unusable: {type(e).__name__}: {e}", file=sys.stderr)

    @property
    def version(self):
        return f"{self.name} {self.mod.__version__}" if self.mod else "no GPU array library"

    def put(self, a):
        a = np.ascontiguousarray(a)
        if self.name == "cupy":
            return self.mod.asarray(a)
        return self.mod.from_numpy(a).cuda()

    def sync(self):
        if self.name == "cupy":
            self.mod.cuda.runtime.deviceSynchronize()
        elif self.name == "torch":
            self.mod.cuda.synchronize()

    def events(self):
        if self.name == "cupy":
            return self.mod.cuda.Event(), self.mod.cuda.Event()
        return (self.mod.cuda.Event(enable_timing=True), self.mod.cuda.Event(enable_timing=True))

    def elapsed(self, start, end):
        end.synchronize()
        if self.name == "cupy":
            return self.mod.cuda.get_elapsed_time(start, end) / 1e3
        return start.elapsed_time(end) / 1e3

    def time(self, fn):
        """Median seconds of timed calls after 0.3 s of warm-up calls (fewer repeats for slow
        calls, more for calls under 10 ms), CUDA events around each call; host clock without
        a GPU library."""
        # warm-up: calls for at least 0.3 s, so that the timed calls run at the GPU's working
        # clocks (a GPU idle before the case ramps its clocks up over the first milliseconds:
        # ten calls of 0.3 ms right after idling measured 1.5x slower than later ones)
        t_end = time.perf_counter() + 0.3
        while True:
            t0 = time.perf_counter()
            fn()
            self.sync()
            warm = time.perf_counter() - t0
            if t0 + warm >= t_end:
                break
        repeats = max(3, min(ARGS.repeats, int(6.0 / max(warm, 1e-6))))
        if warm < 0.01:  # fast calls: timed over >= 0.1 s (<= 200 calls), so that a burst of
            # host noise of a few ms cannot move the median (a 0.3 ms case read 2x slow once)
            repeats = max(repeats, min(200, int(0.1 / max(warm, 1e-6))))
        times = []
        for _ in range(repeats):
            if self.mod is None:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
                continue
            start, end = self.events()
            start.record()
            fn()
            end.record()
            times.append(self.elapsed(start, end))
        return statistics.median(times), repeats


GPU = Gpu(ARGS.lib)


def host(x):
    """numpy float64 view of a result (float, numpy, CuPy array or torch tensor)."""
    if GPU.name == "cupy" and isinstance(x, GPU.mod.ndarray):
        x = GPU.mod.asnumpy(x)
    elif GPU.name == "torch" and isinstance(x, GPU.mod.Tensor):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def walks(rng, count, length, dim=None, dtype=np.float64):
    shape = (count, length) if dim is None else (count, length, dim)
    return np.cumsum(rng.standard_normal(shape), axis=1).astype(dtype)


# ---- rows ---------------------------------------------------------------------------------------

ROWS = []
ERRORS = []


def fmt_time(t):
    if t is None:
        return ""
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e6:.1f} us"


def add_row(case, inp, t, cells, reps=0, peer=None, peer_label="", target=None, check="",
            cpu_gcups=None, note=""):
    """target: ('time', seconds) or ('gcups', value) or None."""
    g = cells / t / 1e9 if t else None
    result = ""
    if target and t:
        kind, val = target
        ok = t <= val if kind == "time" else g >= val
        result = ("PASS" if ok else "MISS") if not ARGS.quick else "n/a (quick)"
    tgt = ""
    if target:
        tgt = f"<= {fmt_time(target[1])}" if target[0] == "time" else f">= {target[1]:,.0f} GCUPS"
    ROWS.append(dict(
        case=case, inp=inp, time=fmt_time(t) + (f" ({reps}x)" if reps else ""),
        gcups=f"{g:,.1f}" if g else "",
        peer=f"{peer_label} {fmt_time(peer)}".strip() if peer or peer_label else "",
        ratio=f"{peer / t:.1f}x" if peer and t else "",
        target=tgt, result=result,
        cpu=f"{cpu_gcups:.2f}" if cpu_gcups else "",
        gpu_cpu=f"{g / cpu_gcups:.0f}x" if cpu_gcups and g else "",
        check=check, note=note))
    print(f"#   {case} [{inp}]: {fmt_time(t)}  {ROWS[-1]['gcups']} GCUPS  {result}  {check}",
          file=sys.stderr, flush=True)


def agree(got, ref, f32, soft=False):
    """The test suite's tolerance: 1e-12 (float64), 1e-5 (float32; soft-DTW 1e-4),
    relative to max(1, |ref|); +inf must match exactly."""
    got, ref = host(got).ravel(), np.asarray(ref, dtype=np.float64).ravel()
    tol = (1e-4 if soft else 1e-5) if f32 else 1e-12
    inf = np.isinf(ref) | np.isinf(got)
    if np.any(got[inf] != ref[inf]) or np.any(np.isnan(got)):
        ERRORS.append("inf/nan mismatch")
        return "DIFF (inf/nan)"
    fin = ~inf
    if not fin.any():
        return "ok (all inf)"
    err = float(np.max(np.abs(got[fin] - ref[fin]) / np.maximum(1.0, np.abs(ref[fin]))))
    if err > tol:
        ERRORS.append(f"values differ: {err:.2e} > {tol:g}")
        return f"DIFF {err:.1e} > {tol:g}"
    return f"ok ({err:.0e})"


def cpu_gcups(fn, cells):
    """GCUPS of the CPU backend (all cores) on fn, best of 2 after a warm-up."""
    if ARGS.no_cpu:
        return None
    fn()
    best = min(_timed(fn) for _ in range(2))
    return cells / best / 1e9


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def want(name):
    return not ARGS.only or any(name.startswith(p) for p in ARGS.only.split(","))


def run_case(name, fn):
    if not want(name):
        return
    try:
        fn()
    except Exception as e:  # one broken case must not hide the others
        msg = f"{type(e).__name__}: {e}".replace("\n", " ")[:160]
        ERRORS.append(f"{name}: {msg}")
        ROWS.append(dict(case=name, inp="", time="", gcups="", peer="", ratio="", target="",
                         result="ERROR", cpu="", gpu_cpu="", check=msg, note=""))
        print(f"# {name}: {msg}", file=sys.stderr, flush=True)


# ---- inputs: GPU arrays when the library takes them -------------------------------------------

GPU_ARRAYS = False


def probe_gpu_arrays():
    """Whether tswarp takes GPU arrays (device='cuda'); else numpy inputs are timed."""
    global GPU_ARRAYS
    if GPU.mod is None:
        return "no CuPy/PyTorch: numpy inputs (transfers included)"
    a = GPU.put(np.arange(8.0))
    try:
        v = tswarp.dtw(a, a, device="cuda")
        GPU_ARRAYS = float(host(v)) == 0.0
        return "" if GPU_ARRAYS else "GPU-array call gave a wrong value: numpy inputs"
    except Exception as e:
        return f"tswarp does not take {GPU.name} arrays ({type(e).__name__}: {e}): numpy inputs"


def g(a):
    return GPU.put(a) if GPU_ARRAYS else a


def INP():
    return GPU.name if GPU_ARRAYS else "numpy"


# ---- cases --------------------------------------------------------------------------------------

def twed_pair(n, dtype, peer, target):
    def case():
        rng = np.random.default_rng(ARGS.seed)
        a, b = walks(rng, 2, n, dtype=dtype)
        A, B = g(a), g(b)
        f32 = dtype == np.float32
        kw = dict(nu=1.0, lmbda=1.0)
        t, reps = GPU.time(lambda: tswarp.twed(A, B, device="cuda", **kw))
        k = min(n, 4096)  # check: a prefix, the long-pair kernel still (4096^2 >= 2^22)
        got = tswarp.twed(g(a[:k]), g(b[:k]), device="cuda", **kw)
        check = agree(got, tswarp.twed(a[:k], b[:k], device="cpu", **kw), f32) + f" n={k}"
        kc = min(n, 8192 if ARGS.quick else 16384)
        cg = cpu_gcups(lambda: tswarp.twed(a[:kc], b[:kc], device="cpu", **kw), kc * kc)
        add_row(f"TWED one pair n={n:,} {'f32' if f32 else 'f64'}", INP(), t, n * n, reps,
                peer=peer, peer_label="cuTWED", target=("time", target), check=check,
                cpu_gcups=cg, note=f"CPU: one pair n={kc}")
    return case


def twed_synthetic():
    path = next((p for p in DATA if p.exists()), None)
    if path is not None:
        X = np.loadtxt(path)
        src = "synthetic_control"
    else:
        X = walks(np.random.default_rng(ARGS.seed), 600, 60)
        src = "random walks 600x60 (synthetic_control.data not found)"
    if ARGS.quick:
        X = X[:200]
    n, length = X.shape
    Xg = g(X)
    kw = dict(metric="twed", nu=1.0, lmbda=1.0)
    t, reps = GPU.time(lambda: tswarp.pdist(Xg, device="cuda", **kw))
    ref = tswarp.pdist(X, device="cpu", **kw)
    check = agree(tswarp.pdist(Xg, device="cuda", **kw), ref, False)
    pairs = n * (n - 1) // 2
    cg = cpu_gcups(lambda: tswarp.pdist(X, device="cpu", **kw), pairs * length * length)
    add_row(f"TWED pdist (all {n}x{n} pairs, each once) {src}, f64 nu=1 lmbda=1", INP(), t,
            pairs * length * length, reps, peer=0.625, peer_label="cuTWED batch",
            target=("time", 0.005), check=check, cpu_gcups=cg,
            note="cells: the n(n-1)/2 pairs computed")
    t, reps = GPU.time(lambda: tswarp.cdist(Xg, Xg, device="cuda", **kw))
    add_row(f"TWED cdist {n}x{n} (full matrix, every pair) {src}, f64", INP(), t,
            n * n * length * length, reps, peer=0.625, peer_label="cuTWED batch")


def dtw_pair():
    n = 20000 if ARGS.quick else 100000
    rng = np.random.default_rng(ARGS.seed + 1)
    a, b = walks(rng, 2, n, dtype=np.float32)
    A, B = g(a), g(b)
    t, reps = GPU.time(lambda: tswarp.dtw(A, B, device="cuda"))
    k = min(n, 20000)
    check = agree(tswarp.dtw(g(a[:k]), g(b[:k]), device="cuda"),
                  tswarp.dtw(a[:k], b[:k], device="cpu"), True) + f" n={k}"
    cg = cpu_gcups(lambda: tswarp.dtw(a[:k], b[:k], device="cpu"), k * k)
    add_row(f"DTW one pair n={n:,} d=1 f32", INP(), t, n * n, reps, peer=2.99,
            peer_label="ParDTW (d=12 f64 path)", target=("time", 0.025), check=check,
            cpu_gcups=cg, note=f"CPU: one pair n={k}")


def dtw_cdist():
    count, length = (1024, 256) if ARGS.quick else (4096, 256)
    rng = np.random.default_rng(ARGS.seed + 2)
    X = walks(rng, count, length, dtype=np.float32)
    Y = walks(rng, count, length, dtype=np.float32)
    Xg, Yg = g(X), g(Y)
    cells = count * count * length * length
    t, reps = GPU.time(lambda: tswarp.cdist(Xg, Yg, metric="dtw", device="cuda"))
    D = tswarp.cdist(Xg, Yg, metric="dtw", device="cuda")
    check = agree(host(D)[:16, :16], tswarp.cdist(X[:16], Y[:16], metric="dtw", device="cpu"),
                  True) + " 16x16 block"
    kc = 256
    cg = cpu_gcups(lambda: tswarp.cdist(X[:kc], Y[:kc], metric="dtw", device="cpu"),
                   kc * kc * length * length)
    add_row(f"DTW cdist {count}x{count} len {length} f32", INP(), t, cells, reps,
            peer_label="(cuDTW-class: 2-4 TCUPS)", target=("gcups", 2000), check=check,
            cpu_gcups=cg, note=f"CPU: cdist {kc}x{kc}")
    if GPU_ARRAYS:  # the same with numpy in and out: transfers included
        t, reps = GPU.time(lambda: tswarp.cdist(X, Y, metric="dtw", device="cuda"))
        add_row(f"DTW cdist {count}x{count} len {length} f32", "numpy", t, cells, reps,
                target=("gcups", 2000), note="host arrays: copies in and out included")


def soft_batch():
    count, length, dim = 512, 256, 2
    rng = np.random.default_rng(ARGS.seed + 3)
    X = walks(rng, count, length, dim, dtype=np.float32)
    Y = walks(rng, count, length, dim, dtype=np.float32)
    Xg, Yg = g(X), g(Y)
    cells = count * length * length
    kw = dict(metric="soft_dtw", gamma=1.0)
    paired = getattr(tswarp, "paired", None)
    done = False
    if paired is not None:
        try:
            t, reps = GPU.time(lambda: paired(Xg, Yg, device="cuda", **kw))
            ref = paired(X, Y, device="cpu", **kw)
            check = agree(paired(Xg, Yg, device="cuda", **kw), ref, True, soft=True)
            cg = cpu_gcups(lambda: paired(X, Y, device="cpu", **kw), cells)
            add_row(f"Soft-DTW values, {count} pairs (x_k, y_k) {length}x{length} d={dim} f32",
                    INP(), t, cells, reps, peer=2.60e-3, peer_label="pytorch-softdtw-cuda",
                    target=("time", 0.30e-3), check=check, cpu_gcups=cg,
                    note="tswarp.paired")
            done = True
        except Exception as e:
            print(f"# tswarp.paired failed ({type(e).__name__}: {e}); cdist proxy",
                  file=sys.stderr)
    if not done:
        # no elementwise-pairs call: x_0 against all 512 y is the same work (512 pairs of
        # 256 x 256, d=2) through cdist
        X1g = g(X[:1])
        t, reps = GPU.time(lambda: tswarp.cdist(X1g, Yg, device="cuda", **kw))
        ref = tswarp.cdist(X[:1], Y, device="cpu", **kw)
        check = agree(tswarp.cdist(X1g, Yg, device="cuda", **kw), ref, True, soft=True)
        cg = cpu_gcups(lambda: tswarp.cdist(X[:1], Y, device="cpu", **kw), cells)
        add_row(f"Soft-DTW values, {count} pairs {length}x{length} d={dim} f32 (cdist 1x{count})",
                INP(), t, cells, reps, peer=2.60e-3, peer_label="pytorch-softdtw-cuda",
                target=("time", 0.30e-3), check=check, cpu_gcups=cg,
                note="no tswarp.paired: cdist(X[:1], Y), the same pairs' work")
    # throughput: every x against every y
    t, reps = GPU.time(lambda: tswarp.cdist(Xg, Yg, device="cuda", **kw))
    add_row(f"Soft-DTW cdist {count}x{count} {length}x{length} d={dim} f32", INP(), t,
            count * cells, reps, note=f"{count}x the work of the row above")


# ---- header, table -----------------------------------------------------------------------------

def machine():
    gpu = ""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20).stdout.strip().splitlines()[0]
        name, drv, mem = [s.strip() for s in gpu.split(",")]
        gpu = f"{name} ({mem}), driver {drv}"
    except Exception:
        if GPU.name == "torch":
            gpu = GPU.mod.cuda.get_device_name(0)
        elif GPU.name == "cupy":
            gpu = GPU.mod.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return gpu or "unknown GPU"


COLS = [("case", "case"), ("inp", "input"), ("time", "time (median)"), ("gcups", "GCUPS"),
        ("peer", "peer on H100"), ("ratio", "peer/tswarp"), ("target", "target"),
        ("result", "result"), ("cpu", "CPU GCUPS"), ("gpu_cpu", "GPU/CPU"),
        ("check", "vs CPU"), ("note", "note")]


def markdown():
    lines = ["| " + " | ".join(h for _, h in COLS) + " |", "|" + "---|" * len(COLS)]
    for r in ROWS:
        lines.append("| " + " | ".join(r[k] for k, _ in COLS) + " |")
    return "\n".join(lines)


def plain():
    cols = [(k, h) for k, h in COLS if k != "note"]
    widths = [max([len(h)] + [len(r[k]) for r in ROWS]) for k, h in cols]
    out = ["  ".join(h.ljust(w) for (_, h), w in zip(cols, widths)),
           "  ".join("-" * w for w in widths)]
    for r in ROWS:
        out.append("  ".join(r[k].ljust(w) for (k, _), w in zip(cols, widths)))
    notes = [f"  {r['case']} [{r['inp']}]: {r['note']}" for r in ROWS if r["note"]]
    return "\n".join(out + (["notes:"] + notes if notes else []))


def main():
    info = tswarp.info()
    cpu = platform.processor() or platform.machine()
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"# tswarp {info.get('version')} GPU benchmark | {machine()} | {GPU.version} | "
          f"numpy {np.__version__} | {THREADS} CPU threads ({cpu}) | "
          f"python {platform.python_version()} | {date}")
    print(f"# command: python bench/gpu_bench.py {shlex.join(sys.argv[1:])}".rstrip())
    print(f"# tswarp.info(): {info}")
    if not info.get("cuda_built") or not info.get("cuda_devices"):
        print("# tswarp has no usable CUDA backend here (cuda_built / cuda_devices above): "
              "nothing to time")
        return 1
    note = probe_gpu_arrays()
    print("# inputs: random walks, " + (f"{GPU.name} arrays on the GPU (zero-copy, transfers "
          "excluded)" if GPU_ARRAYS else note) + f"; times: median of up to {ARGS.repeats} "
          "calls (calls under 10 ms: over >= 0.1 s, up to 200) after 0.3 s of warm-up calls, "
          "CUDA events" + (" (quick sizes)" if ARGS.quick else ""))
    sys.stdout.flush()

    q = ARGS.quick
    run_case("twed-65536", twed_pair(16384 if q else 65536, np.float64, 0.670, 0.030))
    run_case("twed-131072-f64", twed_pair(16384 if q else 131072, np.float64, 1.702, 0.080))
    run_case("twed-131072-f32", twed_pair(16384 if q else 131072, np.float32, 1.524, 0.040))
    run_case("twed-synthetic", twed_synthetic)
    run_case("dtw-pair", dtw_pair)
    run_case("dtw-cdist", dtw_cdist)
    run_case("soft", soft_batch)

    table = markdown() if ARGS.markdown else plain()
    print(table)
    if ARGS.markdown_out:
        Path(ARGS.markdown_out).write_text(markdown() + "\n")
    if ERRORS:
        print("# errors: " + "; ".join(ERRORS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
