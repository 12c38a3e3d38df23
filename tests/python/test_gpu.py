"""GPU (CUDA) tests of the Python package.

Two groups:
- tests that run everywhere, GPU or not: info() keys, device= parsing, empty_cache()'s
  arguments, device='cuda' without a GPU (NoDeviceError), device='auto' falling back to the
  CPU, GPU-array detection that leaves host objects on the numpy path, no import of
  CuPy/torch by `import tswarp`;
- tests that need a GPU (skipped, with the reason, when tswarp.info() reports none), and for
  the array-library ones CuPy and/or PyTorch with CUDA: GPU against CPU on fresh random
  inputs of every measure, both precisions, uni- and multivariate, unequal lengths, windows,
  cdist/pdist in both layouts, lists of variable-length series; CuPy and torch inputs come
  back as the same kind of array on the same GPU; non-contiguous inputs; a non-default
  stream; dtype errors; out-of-memory requests; failing calls that must not leak device
  memory; concurrent calls from several threads; tswarp's memory pool (cached_memory,
  empty_cache, TSWARP_CUDA_CACHE_BYTES).

Tolerances against the CPU backend: float64 1e-12 relative, float32 1e-5 (DTW, TWED) and
1e-4 (Soft-DTW). Soft-DTW values can cancel to near zero, so as in test_properties.py they are
relative to |value| + gamma * (cells of a path) + the accumulated DTW cost of the pair.
"""

import gc
import math
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)

INFO = tswarp.info()
HAS_GPU = bool(INFO["cuda_built"] and INFO["cuda_devices"] > 0)
NO_GPU_REASON = (f"no CUDA GPU: tswarp.info() reports cuda_built={INFO['cuda_built']}, "
                 f"cuda_devices={INFO['cuda_devices']}")
needs_gpu = pytest.mark.skipif(not HAS_GPU, reason=NO_GPU_REASON)

METRICS = ("dtw", "twed", "soft_dtw")
FUNCS = {"dtw": tswarp.dtw, "twed": tswarp.twed, "soft_dtw": tswarp.soft_dtw}
DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


def rtol_of(metric, dtype):
    if dtype == np.float64:
        return 1e-12
    return 1e-4 if metric == "soft_dtw" else 1e-5


# ---------------------------------------------------------------------------------------
# random cases
# ---------------------------------------------------------------------------------------
def draw_len(rng, hi):
    return int(rng.integers(1, 4)) if rng.random() < 0.15 else int(rng.integers(1, hi + 1))


def times(rng, n):
    return rng.uniform(0.1, 2.0) + np.concatenate([[0.0], np.cumsum(rng.uniform(0.05, 2.0, n - 1))])


def random_params(rng, metric, twed_times=None):
    """Measure parameters and a random window; twed_times(rng) -> dict of timestamps."""
    params = {}
    if metric == "dtw":
        params["cost"] = str(rng.choice(["sqeuclidean", "euclidean", "abs", "cosine"]))
        if rng.random() < 0.2:
            params["accumulated"] = True
    elif metric == "twed":
        params.update(nu=float(rng.uniform(0, 1)), lmbda=float(rng.uniform(0, 2)),
                      p=float(rng.choice([1.0, 2.0, 3.0])))
        if twed_times is not None and rng.random() < 0.5:
            params.update(twed_times(rng))
    else:
        params["gamma"] = float(rng.choice([0.01, 0.1, 1.0, 10.0]))
        if rng.random() < 0.3:
            params["normalize"] = True
    k = rng.integers(0, 4)
    if k == 1:
        params["radius"] = int(rng.integers(0, 50))
    elif k == 2:
        params["window"] = float(rng.random())
    elif k == 3:
        params["itakura_max_slope"] = float(rng.uniform(1.0, 3.0))
    return params


def pair_case(rng, metric, trial):
    """(a, b, params): lengths 1..300, every 8th trial up to 2,000; dims 1 to 64."""
    long = trial % 8 == 7
    n, m = draw_len(rng, 2000 if long else 300), draw_len(rng, 2000 if long else 300)
    if rng.random() < 0.2:
        m = n
    d = int(rng.choice([1, 2, 3])) if long else int(rng.choice([1, 1, 2, 3, 8, 64]))
    a, b = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    if d == 1 and rng.random() < 0.5:
        a, b = a[:, 0], b[:, 0]
    params = random_params(rng, metric, lambda r: {"ta": times(r, n), "tb": times(r, m)})
    return a, b, params


def describe(params):
    return {k: (f"<{len(v)} stamps>" if isinstance(v, (np.ndarray, list)) else v)
            for k, v in params.items()}


def soft_scale(metric, params, la, lb, acc):
    """Extra scale for Soft-DTW comparisons (0 for the other measures)."""
    if metric != "soft_dtw":
        return 0.0
    return params.get("gamma", 1.0) * 2.0 * (la + lb) + acc


def assert_close(got, exp, rtol, scale, what):
    got = np.asarray(got, dtype=np.float64)
    exp = np.asarray(exp, dtype=np.float64)
    assert got.shape == exp.shape, f"{what}: shape {got.shape} != {exp.shape}"
    with np.errstate(invalid="ignore"):  # inf - inf where a window admits no path
        ok = (got == exp) | (np.abs(got - exp) <= rtol * (np.maximum(np.abs(got), np.abs(exp)) + scale))
    bad = np.argwhere(~ok)[:3].tolist()
    assert ok.all(), f"{what}: at {bad}: got {got[~ok][:3]} expected {exp[~ok][:3]}"


def cosine_scale(metric, params):
    """DTW with the cosine cost: each cell's 1 - cos carries a rounding error of about eps
    against its bound 2, not against its value (1-d series give exact 0s that come out as
    ~1e-8 in float32), so a path of up to n + m cells is compared on the scale n + m."""
    return metric == "dtw" and params.get("cost") == "cosine"


def pair_scale(metric, a, b, params):
    if cosine_scale(metric, params):
        return float(len(a) + len(b))
    if metric != "soft_dtw":
        return 0.0
    acc = tswarp.dtw(a, b, accumulated=True, device="cpu")
    return soft_scale(metric, params, len(a), len(b), acc if math.isfinite(acc) else 0.0)


def batch_scale(metric, X, Y, params):
    lx = np.array([len(x) for x in X])
    ly = lx if Y is None else np.array([len(y) for y in Y])
    if cosine_scale(metric, params):
        return (lx[:, None] + ly[None, :]).astype(np.float64)
    if metric != "soft_dtw":
        return 0.0
    acc = tswarp.cdist(X, X if Y is None else Y, accumulated=True, device="cpu")
    acc = np.where(np.isfinite(acc), acc, 0.0)
    return params.get("gamma", 1.0) * 2.0 * (lx[:, None] + ly[None, :]) + acc


def condensed(M):
    return M[np.triu_indices(M.shape[0], 1)]


def collections(rng, metric, trial, dtype):
    """(X, Y, tx, ty, params) for a batch: trial % 3 == 0 equal lengths as 3-D arrays,
    1 univariate 2-D arrays, 2 lists of series of different lengths."""
    kind = trial % 3
    d = 1 if kind == 1 else int(rng.choice([1, 2, 3, 8]))
    nx, ny = int(rng.integers(1, 30)), int(rng.integers(1, 20))
    if kind == 2:
        X = [rng.normal(size=(draw_len(rng, 120), d)).astype(dtype) for _ in range(nx)]
        Y = [rng.normal(size=(draw_len(rng, 120), d)).astype(dtype) for _ in range(ny)]
        tx = [times(rng, len(x)) for x in X]
        ty = [times(rng, len(y)) for y in Y]
    else:
        L = draw_len(rng, 150)
        shape = (L,) if kind == 1 else (L, d)
        X = rng.normal(size=(nx,) + shape).astype(dtype)
        Y = rng.normal(size=(ny,) + shape).astype(dtype)
        tx = np.stack([times(rng, L) for _ in range(nx)])
        ty = np.stack([times(rng, L) for _ in range(ny)])
    params = random_params(rng, metric)
    if metric != "twed" or rng.random() < 0.5:
        tx = ty = None
    return X, Y, tx, ty, params


def batch_expectations(metric, X, Y, tx, ty, params):
    tkw_c = {} if tx is None else {"tx": tx, "ty": ty}
    tkw_p = {} if tx is None else {"tx": tx}
    return (tswarp.cdist(X, Y, metric=metric, device="cpu", **tkw_c, **params),
            tswarp.pdist(X, metric=metric, device="cpu", **tkw_p, **params))


# ---------------------------------------------------------------------------------------
# GPU array libraries (CuPy, PyTorch) behind one small interface for the tests
# ---------------------------------------------------------------------------------------
class CupyLib:
    name = "cupy"

    def __init__(self, cp):
        self.cp = cp

    def put(self, a, dev=0):
        with self.cp.cuda.Device(dev):
            return self.cp.asarray(a)

    def get(self, x):
        return self.cp.asnumpy(x)

    def owns(self, x):
        return isinstance(x, self.cp.ndarray)

    def device(self, x):
        return x.device.id

    def dtype(self, x):
        return np.dtype(x.dtype)

    def permute(self, x, axes):
        return x.transpose(axes)

    def mem(self, dev=0):
        with self.cp.cuda.Device(dev):
            return self.cp.cuda.runtime.memGetInfo()

    def used(self):
        return self.cp.get_default_memory_pool().used_bytes()

    def sync(self):
        self.cp.cuda.runtime.deviceSynchronize()

    def alloc_bytes(self, n):
        return self.cp.empty(int(n), dtype=self.cp.uint8)

    def release(self):
        self.cp.get_default_memory_pool().free_all_blocks()


class TorchLib:
    name = "torch"

    def __init__(self, torch):
        self.t = torch

    def put(self, a, dev=0):
        # torch cannot wrap negative strides (X[::-1]): copy to a contiguous array first
        return self.t.as_tensor(np.ascontiguousarray(a), device=f"cuda:{dev}")

    def get(self, x):
        return x.detach().cpu().numpy()

    def owns(self, x):
        return isinstance(x, self.t.Tensor) and x.is_cuda

    def device(self, x):
        return x.device.index

    def dtype(self, x):
        return np.dtype(str(x.dtype).replace("torch.", ""))

    def permute(self, x, axes):
        return x.permute(axes)

    def mem(self, dev=0):
        return self.t.cuda.mem_get_info(dev)

    def used(self):
        return self.t.cuda.memory_allocated()

    def sync(self):
        self.t.cuda.synchronize()

    def alloc_bytes(self, n):
        return self.t.empty(int(n), dtype=self.t.uint8, device="cuda")

    def release(self):
        self.t.cuda.empty_cache()


def load_lib(name):
    if not HAS_GPU:
        pytest.skip(NO_GPU_REASON)
    mod = pytest.importorskip(name, reason=f"{name} is not installed")
    if name == "torch":
        if not mod.cuda.is_available():
            pytest.skip("torch is installed without CUDA")
        return TorchLib(mod)
    return CupyLib(mod)


@pytest.fixture(params=["cupy", "torch"])
def xp(request):
    return load_lib(request.param)


def put_params(xp, params):
    """Timestamps go to the GPU with the series."""
    return {k: (xp.put(v) if k in ("ta", "tb") else v) for k, v in params.items()}


def put_coll(xp, C):
    if C is None:
        return None
    return [xp.put(c) for c in C] if isinstance(C, list) else xp.put(C)


def assert_gpu_result(xp, got, shape, dtype, dev=0):
    assert xp.owns(got), f"expected a {xp.name} GPU array, got {type(got)}"
    assert tuple(got.shape) == tuple(shape), (tuple(got.shape), shape)
    assert xp.dtype(got) == np.dtype(dtype), (xp.dtype(got), dtype)
    assert xp.device(got) == dev


# =======================================================================================
# Tests that run everywhere (CI has no GPU)
# =======================================================================================
def test_info_keys():
    info = tswarp.info()
    types = {"version": str, "simd": str, "threads": int, "cuda_built": bool, "cuda_devices": int,
             "cuda_archs": str, "cuda_runtime": int, "cuda_driver": int, "gpus": list}
    for key, typ in types.items():
        assert isinstance(info[key], typ), (key, info[key])
    assert len(info["gpus"]) == info["cuda_devices"]
    if not info["cuda_built"]:
        assert info["cuda_archs"] == "" and info["gpus"] == []
        assert info["cuda_runtime"] == info["cuda_driver"] == 0
    else:
        assert re.fullmatch(r"((sm|compute)_\d+a? ?)+", info["cuda_archs"]), info["cuda_archs"]
    for i, g in enumerate(info["gpus"]):
        assert set(g) == {"index", "name", "compute_capability", "multiprocessors",
                          "total_memory", "free_memory", "cached_memory", "runnable"}
        assert g["index"] == i and isinstance(g["name"], str) and g["name"]
        major, minor = g["compute_capability"]
        assert major >= 3 and minor >= 0 and g["multiprocessors"] > 0
        assert 0 <= g["free_memory"] <= g["total_memory"] and isinstance(g["runnable"], bool)
        assert 0 <= g["cached_memory"] <= g["total_memory"]
    assert issubclass(tswarp.CudaError, RuntimeError)
    assert issubclass(tswarp.NoDeviceError, ValueError)


def test_empty_cache_arguments():
    # None: every GPU, and nothing at all without the CUDA backend (torch.cuda.empty_cache())
    assert tswarp.empty_cache() is None
    assert tswarp.empty_cache(None) is None
    assert tswarp.empty_cache(device=None) is None
    for bad in ("cuda", "cuda:0", 0.0, b"0", [0], True):
        with pytest.raises(TypeError, match="device must be an int or None"):
            tswarp.empty_cache(bad)
    for bad in (-1, -(2 ** 70)):
        with pytest.raises(ValueError, match="device must be a GPU index") as e:
            tswarp.empty_cache(bad)
        assert not isinstance(e.value, tswarp.NoDeviceError)
    n = INFO["cuda_devices"]
    for bad in (n, n + 3, np.int64(n), 2 ** 70):
        with pytest.raises(tswarp.NoDeviceError, match=re.escape(f"device={bad!r}")):
            tswarp.empty_cache(bad)
    with pytest.raises(TypeError):
        tswarp.empty_cache(None, None)
    with pytest.raises(TypeError, match="unexpected keyword"):
        tswarp.empty_cache(index=0)
    assert "empty_cache" in tswarp.__all__ and tswarp.empty_cache.__module__ == "tswarp"


def _all_calls(a, b, X, Y, metric, **kw):
    return [
        lambda: FUNCS[metric](a, b, **kw),
        lambda: tswarp.distance(a, b, metric=metric, **kw),
        lambda: tswarp.cdist(X, Y, metric=metric, **kw),
        lambda: tswarp.cdist(X, metric=metric, **kw),
        lambda: tswarp.pdist(X, metric=metric, **kw),
        lambda: tswarp.pdist(X, metric=metric, condensed=True, **kw),
    ]


@pytest.mark.skipif(HAS_GPU, reason="a CUDA GPU is present: device='cuda' computes there")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:3"])
@pytest.mark.parametrize("metric", METRICS)
def test_device_cuda_without_gpu_raises(rng, metric, device):
    a, b = rng.normal(size=9), rng.normal(size=(7,))
    X, Y = rng.normal(size=(4, 6, 2)), [rng.normal(size=(k, 2)) for k in (3, 5)]
    for call in _all_calls(a, b, X, Y, metric, device=device):
        with pytest.raises(tswarp.NoDeviceError, match=re.escape(f"device='{device}'")) as e:
            call()
        assert "CUDA" in str(e.value).upper()


def test_device_index_out_of_range_raises(rng):
    a = rng.normal(size=5)
    device = f"cuda:{INFO['cuda_devices'] + 3}"
    with pytest.raises(tswarp.NoDeviceError, match="device"):
        tswarp.dtw(a, a, device=device)
    with pytest.raises(tswarp.NoDeviceError, match="device"):
        tswarp.pdist([a, a], device=device)


@pytest.mark.parametrize("metric", METRICS)
def test_device_auto_falls_back_to_cpu(rng, metric):
    """Without a GPU, 'auto' is the CPU result exactly; with one it may run on the GPU (large
    work), within the GPU tolerances."""
    a, b = rng.normal(size=(40, 2)), rng.normal(size=(33, 2))
    small = [rng.normal(size=(int(rng.integers(1, 30)), 2)) for _ in range(6)]
    big = rng.normal(size=(160, 64))  # larger work, where "auto" may pick a GPU if present
    for dtype in (np.float64, np.float32):
        rtol = 0.0 if not HAS_GPU else rtol_of(metric, dtype)
        A, B = a.astype(dtype), b.astype(dtype)
        exp = FUNCS[metric](A, B, device="cpu")
        assert_close(FUNCS[metric](A, B, device="auto"), exp, rtol, pair_scale(metric, A, B, {}), "pair")
        assert FUNCS[metric](A, B) == FUNCS[metric](A, B, device="auto")
        for X in (small, big.astype(dtype)):
            exp = tswarp.pdist(X, metric=metric, device="cpu")
            got = tswarp.pdist(X, metric=metric, device="auto")
            assert isinstance(got, np.ndarray) and got.dtype == exp.dtype
            assert_close(got, exp, rtol, batch_scale(metric, X, None, {}), f"pdist auto {dtype}")
            got = tswarp.cdist(X, X[:5], metric=metric)  # the default is auto
            assert_close(got, tswarp.cdist(X, X[:5], metric=metric, device="cpu"), rtol,
                         batch_scale(metric, X, X[:5], {}), f"cdist auto {dtype}")


@pytest.mark.parametrize("device", ["cuda:x", "cuda:", "cuda:-1", "cuda:1:2", "cuda0", "CUDA",
                                    "gpu", "cuda:0 ", " cpu", "", "cuda:1.0"])
def test_malformed_device_is_value_error(device):
    a = np.arange(4.0)
    for call in _all_calls(a, a, [a, a], [a], "dtw", device=device):
        with pytest.raises(ValueError, match="device must be 'auto', 'cpu', 'cuda', 'cuda:N'") as e:
            call()
        assert not isinstance(e.value, tswarp.NoDeviceError)


@pytest.mark.parametrize("device, error, match", [
    ([], ValueError, "a list of 1 to 64 GPUs"), (["gpu0"], ValueError, r"device\[0\] must be"),
    ([0, "cuda:x"], ValueError, r"device\[1\] must be"), ([True], TypeError, r"device\[0\]"),
    ([-1], ValueError, r"device\[0\]"), ([0, "cuda:0"], ValueError, "listed twice"),
    ((1.0,), TypeError, r"device\[0\]")])
def test_malformed_device_list(device, error, match):
    """A list of GPUs is checked entry by entry before the GPUs are looked for: the same error
    with or without a GPU."""
    a = np.arange(6.0).reshape(2, 3)
    from tswarp.shapelets import find_shapelet
    X, y = np.arange(24.0).reshape(4, 6), np.array([0, 1, 0, 1])
    for call in (lambda: tswarp.cdist(a, device=device), lambda: tswarp.knn(a, a, device=device),
                 lambda: tswarp.dtw(a[0], a[1], device=device),
                 lambda: find_shapelet(X, y, device=device)):
        with pytest.raises(error, match=match):
            call()


@needs_gpu
def test_shapelet_search_on_several_devices_equals_one(rng):
    """find_shapelet and the shapelet list of ShapeletTransform on 'cuda:all' and a list of
    GPUs: one GPU's shapelets (the candidates split by series over the devices)."""
    from tswarp.shapelets import ShapeletTransform, find_shapelet
    n = INFO["cuda_devices"]
    X = rng.standard_normal((40, 60)).cumsum(axis=1)
    y = np.arange(40) % 3
    one = find_shapelet(X, y, min_length=3, max_length=20, device="cuda")
    st1 = ShapeletTransform(n_shapelets=6, min_length=3, max_length=20, device="cuda").fit(X, y)
    for dev in ("cuda:all", list(reversed(range(n)))):
        got = find_shapelet(X, y, min_length=3, max_length=20, device=dev)
        assert (got.series, got.start, got.length, got.threshold, got.gain, got.gap) == \
            (one.series, one.start, one.length, one.threshold, one.gain, one.gap), dev
        st = ShapeletTransform(n_shapelets=6, min_length=3, max_length=20, device=dev).fit(X, y)
        assert [(s.series, s.start, s.length) for s in st.shapelets_] == \
            [(s.series, s.start, s.length) for s in st1.shapelets_], dev


@needs_gpu
def test_several_devices_equal_one(rng):
    """device='cuda:all' and lists of GPUs: cdist, pdist, paired and knn give one GPU's values
    bit for bit (with one GPU the list is that GPU; the C test test_cuda's 'multi' section
    runs the tiles on one device too)."""
    n = INFO["cuda_devices"]
    lists = ["cuda:all", list(range(n)), [f"cuda:{i}" for i in reversed(range(n))]]
    for dtype in (np.float32, np.float64):
        X = [rng.standard_normal(int(rng.integers(20, 90))).astype(dtype) for _ in range(70)]
        Y = rng.standard_normal((40, 64)).astype(dtype)
        for metric in METRICS:
            one = {"cdist": tswarp.cdist(X, Y, metric=metric, device="cuda"),
                   "pdist": tswarp.pdist(X, metric=metric, device="cuda"),
                   "condensed": tswarp.pdist(X, metric=metric, device="cuda", condensed=True),
                   "paired": tswarp.paired(X[:40], Y, metric=metric, device="cuda"),
                   "knn": tswarp.knn(X, Y, 3, metric=metric, device="cuda")}
            for dev in lists:
                got = {"cdist": tswarp.cdist(X, Y, metric=metric, device=dev),
                       "pdist": tswarp.pdist(X, metric=metric, device=dev),
                       "condensed": tswarp.pdist(X, metric=metric, device=dev, condensed=True),
                       "paired": tswarp.paired(X[:40], Y, metric=metric, device=dev),
                       "knn": tswarp.knn(X, Y, 3, metric=metric, device=dev)}
                walk = rng.standard_normal(300_000).cumsum().astype(dtype)
                got["search"] = tswarp.search(walk[:100], walk, 3, window=0.1, device=dev)
                one["search"] = tswarp.search(walk[:100], walk, 3, window=0.1, device="cuda")
                for key in one:
                    want, have = one[key], got[key]
                    if key in ("knn", "search"):
                        np.testing.assert_array_equal(have[0], want[0], f"{metric} {dev} {key}")
                        np.testing.assert_array_equal(have[1], want[1], f"{metric} {dev} {key}")
                    else:
                        np.testing.assert_array_equal(have, want, f"{metric} {dev} {key}")


@needs_gpu
def test_gpu_arrays_on_several_devices_equal_one(xp, rng):
    """CuPy arrays and CUDA tensors with device='cuda:all' or a list of GPUs: staged through
    the host onto every listed GPU, the results back on the arrays' GPU as arrays of their
    library, one GPU's values bit for bit (also when the list leaves the arrays' GPU out)."""
    n = INFO["cuda_devices"]
    src = n - 1  # the arrays on the last GPU, the lists below start elsewhere
    lists = ["cuda:all", list(range(n)), [f"cuda:{i}" for i in reversed(range(n))]]
    if n >= 3:
        lists.append(list(range(n - 1)))  # every GPU but the arrays'
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((60, 50, 2)).astype(dtype)
        Y = rng.standard_normal((35, 40, 2)).astype(dtype)
        P = rng.standard_normal((60, 45, 2)).astype(dtype)
        gx, gy, gp = xp.put(X, src), xp.put(Y, src), xp.put(P, src)
        for metric in METRICS:
            calls = {"cdist": lambda d: tswarp.cdist(gx, gy, metric=metric, device=d),
                     "pdist": lambda d: tswarp.pdist(gx, metric=metric, device=d),
                     "condensed": lambda d: tswarp.pdist(gx, metric=metric, device=d,
                                                         condensed=True),
                     "paired": lambda d: tswarp.paired(gx, gp, metric=metric, device=d)}
            for key, call in calls.items():
                want = call(f"cuda:{src}")
                for dev in lists:
                    got = call(dev)
                    assert xp.owns(got) and xp.device(got) == src, (key, dev)
                    np.testing.assert_array_equal(xp.get(got), xp.get(want),
                                                  f"{metric} {dev} {key}")


@pytest.mark.parametrize("device", [0, b"cuda", 1.5])
def test_non_str_device_is_type_error(device):
    with pytest.raises(TypeError, match="device must be a str"):
        tswarp.dtw([1.0], [2.0], device=device)


def test_import_tswarp_imports_no_gpu_library():
    code = ("import sys, numpy as np, tswarp; tswarp.dtw(np.ones(3), np.ones(4));"
            "tswarp.cdist([np.ones(3), np.ones(5)], device='auto'); tswarp.info();"
            "bad = [m for m in ('cupy', 'torch', 'tswarp._gpu') if m in sys.modules];"
            "assert not bad, bad")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


class HostDLPack:
    """A host array of some other library: __dlpack_device__ says CPU, numpy reads __array__."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class FakeCudaArray:
    """Looks like a CUDA array (__cuda_array_interface__) but points at host memory. Only
    used where tswarp must refuse it before reading the pointer."""

    def __init__(self, a):
        self.a = a

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.a.shape, "typestr": self.a.dtype.str, "version": 3,
                "data": (self.a.ctypes.data, False), "strides": None, "stream": 1}


def test_host_objects_with_gpu_protocols_take_the_numpy_path(rng):
    a, b = rng.normal(size=12), rng.normal(size=(9,))
    assert tswarp.dtw(HostDLPack(a), HostDLPack(b)) == tswarp.dtw(a, b)
    assert tswarp.twed(HostDLPack(a), b, ta=HostDLPack(np.arange(1.0, 13.0))) == tswarp.twed(a, b)
    X = [a, b, a[:4]]
    np.testing.assert_array_equal(tswarp.pdist([HostDLPack(x) for x in X]), tswarp.pdist(X))
    np.testing.assert_array_equal(tswarp.cdist(HostDLPack(np.stack([a, a])), [b]),
                                  tswarp.cdist(np.stack([a, a]), [b]))


def test_gpu_array_beside_host_array_names_the_argument(rng):
    a = rng.normal(size=8)
    with pytest.raises(ValueError, match=r"^dtw\(\): a is in host memory \(numpy.ndarray\) but b is a GPU array"):
        tswarp.dtw(a, FakeCudaArray(a))
    with pytest.raises(ValueError, match=r"^twed\(\): tb is in host memory \(list\)"):
        tswarp.twed(FakeCudaArray(a), FakeCudaArray(a), tb=list(range(1, 9)))
    with pytest.raises(ValueError, match=r"^pdist\(\): X\[1\] is in host memory"):
        tswarp.pdist([FakeCudaArray(a), a])
    with pytest.raises(ValueError, match=r"^cdist\(\): Y is in host memory"):
        tswarp.cdist(FakeCudaArray(a[None]), a[None])


@pytest.mark.skipif(HAS_GPU, reason="a CUDA GPU is present")
def test_gpu_array_without_gpu_raises_no_device(rng):
    a = rng.normal(size=8)
    with pytest.raises(tswarp.NoDeviceError, match=r"^dtw\(\): a is a GPU array"):
        tswarp.dtw(FakeCudaArray(a), FakeCudaArray(a))
    with pytest.raises(tswarp.NoDeviceError, match=r"^cdist\(\): X\[0\] is a GPU array"):
        tswarp.cdist([FakeCudaArray(a)], [FakeCudaArray(a)])


def _cli(capsys, *args):
    from tswarp.cli import main
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_device_option_and_info(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.arange(6.0))
    code, _, err = _cli(capsys, "distance", tmp_path / "a.npy", tmp_path / "a.npy", "--device", "cuda:x")
    assert code == 2 and "--device" in err and "cuda:N" in err
    code, out, _ = _cli(capsys, "distance", tmp_path / "a.npy", tmp_path / "a.npy", "--device", "cpu")
    assert code == 0 and float(out) == 0.0
    code, out, _ = _cli(capsys, "info")
    assert code == 0
    fields = dict(line.split(":", 1) for line in out.splitlines())
    assert fields["GPUs found"].strip() == str(INFO["cuda_devices"])
    for g in INFO["gpus"]:
        assert g["name"] in fields[f"GPU {g['index']}"]
    if INFO["cuda_built"]:
        assert fields["CUDA archs"].strip() == (INFO["cuda_archs"] or "none")


# =======================================================================================
# numpy inputs computed on the GPU (device='cuda': the C library copies them)
# =======================================================================================
@needs_gpu
@DTYPES
@pytest.mark.parametrize("metric", METRICS)
def test_numpy_pairs_on_gpu_match_cpu(rng, metric, dtype):
    f, rtol = FUNCS[metric], rtol_of(metric, dtype)
    for trial in range(24):
        a, b, params = pair_case(rng, metric, trial)
        a, b = a.astype(dtype), b.astype(dtype)
        what = f"seed={rng.seed} trial={trial} {metric} {a.shape} {b.shape} {describe(params)}"
        exp = f(a, b, device="cpu", **params)
        got = f(a, b, device="cuda", **params)
        assert isinstance(got, float), what
        assert_close(got, exp, rtol, pair_scale(metric, a, b, params), what)
        assert_close(f(a, b, device="cuda:0", **params), exp, rtol, pair_scale(metric, a, b, params), what)


@needs_gpu
@DTYPES
@pytest.mark.parametrize("metric", METRICS)
def test_numpy_batches_on_gpu_match_cpu(rng, metric, dtype):
    rtol = rtol_of(metric, dtype)
    for trial in range(6):
        X, Y, tx, ty, params = collections(rng, metric, trial, dtype)
        what = f"seed={rng.seed} trial={trial} {metric} {describe(params)} times={tx is not None}"
        exp_c, exp_p = batch_expectations(metric, X, Y, tx, ty, params)
        tc = {} if tx is None else {"tx": tx, "ty": ty}
        tp = {} if tx is None else {"tx": tx}
        got = tswarp.cdist(X, Y, metric=metric, device="cuda", **tc, **params)
        assert isinstance(got, np.ndarray) and got.dtype == dtype, what
        assert_close(got, exp_c, rtol, batch_scale(metric, X, Y, params), f"cdist {what}")
        sp = batch_scale(metric, X, None, params)
        got = tswarp.pdist(X, metric=metric, device="cuda", **tp, **params)
        assert_close(got, exp_p, rtol, sp, f"pdist {what}")
        got = tswarp.pdist(X, metric=metric, device="cuda", condensed=True, **tp, **params)
        assert_close(got, condensed(exp_p), rtol, sp if np.isscalar(sp) else condensed(sp),
                     f"pdist condensed {what}")


# =======================================================================================
# CuPy arrays and torch tensors, used in place
# =======================================================================================
@DTYPES
@pytest.mark.parametrize("metric", METRICS)
def test_gpu_array_pairs(rng, xp, metric, dtype):
    f, rtol = FUNCS[metric], rtol_of(metric, dtype)
    for trial in range(12):
        a, b, params = pair_case(rng, metric, trial)
        a, b = a.astype(dtype), b.astype(dtype)
        what = f"seed={rng.seed} trial={trial} {xp.name} {metric} {a.shape} {b.shape} {describe(params)}"
        exp = f(a, b, device="cpu", **params)
        got = f(xp.put(a), xp.put(b), **put_params(xp, params))
        assert_gpu_result(xp, got, (), dtype)
        assert_close(xp.get(got), exp, rtol, pair_scale(metric, a, b, params), what)
        got = tswarp.distance(xp.put(a), xp.put(b), metric=metric, device="cuda", **put_params(xp, params))
        assert_gpu_result(xp, got, (), dtype)
        assert_close(xp.get(got), exp, rtol, pair_scale(metric, a, b, params), what)


@DTYPES
@pytest.mark.parametrize("metric", METRICS)
def test_gpu_array_batches(rng, xp, metric, dtype):
    rtol = rtol_of(metric, dtype)
    for trial in range(6):
        X, Y, tx, ty, params = collections(rng, metric, trial, dtype)
        what = f"seed={rng.seed} trial={trial} {xp.name} {metric} {describe(params)} times={tx is not None}"
        exp_c, exp_p = batch_expectations(metric, X, Y, tx, ty, params)
        gX, gY, gtx, gty = (put_coll(xp, C) for C in (X, Y, tx, ty))
        tc = {} if tx is None else {"tx": gtx, "ty": gty}
        tp = {} if tx is None else {"tx": gtx}
        got = tswarp.cdist(gX, gY, metric=metric, **tc, **params)
        assert_gpu_result(xp, got, exp_c.shape, dtype)
        assert_close(xp.get(got), exp_c, rtol, batch_scale(metric, X, Y, params), f"cdist {what}")
        sp = batch_scale(metric, X, None, params)
        for call in (lambda: tswarp.pdist(gX, metric=metric, **tp, **params),
                     lambda: tswarp.cdist(gX, metric=metric, **tp, **params)):
            got = call()
            assert_gpu_result(xp, got, exp_p.shape, dtype)
            assert_close(xp.get(got), exp_p, rtol, sp, f"pdist {what}")
        got = tswarp.pdist(gX, metric=metric, condensed=True, device="cuda:0", **tp, **params)
        assert_gpu_result(xp, got, (len(X) * (len(X) - 1) // 2,), dtype)
        assert_close(xp.get(got), condensed(exp_p), rtol, sp if np.isscalar(sp) else condensed(sp),
                     f"pdist condensed {what}")


def test_gpu_mixed_precision_computes_in_float64(rng, xp):
    a32 = rng.normal(size=(30, 2)).astype(np.float32)
    b64 = rng.normal(size=(25, 2))
    got = tswarp.dtw(xp.put(a32), xp.put(b64))
    assert_gpu_result(xp, got, (), np.float64)
    assert_close(xp.get(got), tswarp.dtw(a32, b64, device="cpu"), 1e-12, 0.0, "mixed pair")
    got = tswarp.cdist([xp.put(a32)], [xp.put(b64), xp.put(a32)])
    assert_gpu_result(xp, got, (1, 2), np.float64)
    assert_close(xp.get(got), tswarp.cdist([a32], [b64, a32], device="cpu"), 1e-12, 0.0, "mixed cdist")


def test_gpu_noncontiguous_inputs(rng, xp):
    base = rng.normal(size=(9, 40, 6))
    G = xp.put(base)
    view = G[:, ::2, 1:4]
    exp = tswarp.pdist(np.ascontiguousarray(base[:, ::2, 1:4]), device="cpu")
    assert_close(xp.get(tswarp.pdist(view)), exp, 1e-12, 0.0, "strided 3-D view")
    T = xp.put(np.ascontiguousarray(base.transpose(1, 0, 2)))
    assert_close(xp.get(tswarp.cdist(xp.permute(T, (1, 0, 2)), G[:3])),
                 tswarp.cdist(base, base[:3], device="cpu"), 1e-12, 0.0, "transposed")
    got = tswarp.dtw(G[0, ::3, 0], G[1, 1::2, 2])
    assert_close(xp.get(got), tswarp.dtw(base[0, ::3, 0], base[1, 1::2, 2], device="cpu"), 1e-12, 0.0, "pair")
    L = [G[i, : 5 + 3 * i, ::2] for i in range(5)]
    exp = tswarp.pdist([base[i, : 5 + 3 * i, ::2] for i in range(5)], metric="twed", device="cpu")
    assert_close(xp.get(tswarp.pdist(L, metric="twed")), exp, 1e-12, 0.0, "list of views")
    ta = xp.put(np.arange(1.0, 81.0))[::2]  # strided timestamps
    got = tswarp.twed(G[0, :, 0], G[1, :, 0], ta=ta, tb=ta, nu=0.3)
    exp = tswarp.twed(base[0, :, 0], base[1, :, 0], ta=np.arange(1.0, 81.0, 2), tb=np.arange(1.0, 81.0, 2), nu=0.3)
    assert_close(xp.get(got), exp, 1e-12, 0.0, "strided timestamps")


@DTYPES
@pytest.mark.parametrize("metric", METRICS)
def test_gpu_whole_arrays_fast_plan_equals_general_plan(rng, xp, metric, dtype, monkeypatch):
    """Whole contiguous arrays take _gpu._batch_fast; its results equal the general plan's
    bit for bit (paired, cdist, pdist) and the CPU's within the tolerance."""
    from tswarp import _gpu
    rtol = rtol_of(metric, dtype)
    for shape_x, shape_y in (((7, 33), (7, 21)), ((5, 18, 3), (5, 25, 3))):
        X = rng.normal(size=shape_x).cumsum(axis=1).astype(dtype)
        Y = rng.normal(size=shape_y).cumsum(axis=1).astype(dtype)
        gX, gY = xp.put(X), xp.put(Y)
        assert _gpu._batch_fast("paired", gX, gY, 2, 0, _gpu._DEVICE_AUTO, -1, 1) is not None
        sc, sp = batch_scale(metric, X, Y, {}), batch_scale(metric, X, None, {})
        calls = {
            "paired": (lambda: tswarp.paired(gX, gY, metric=metric),
                       tswarp.paired(X, Y, metric=metric, device="cpu"),
                       sc if np.isscalar(sc) else np.diagonal(sc)),
            "cdist": (lambda: tswarp.cdist(gX, gY, metric=metric),
                      tswarp.cdist(X, Y, metric=metric, device="cpu"), sc),
            "pdist": (lambda: tswarp.pdist(gX, metric=metric, condensed=True),
                      tswarp.pdist(X, metric=metric, device="cpu", condensed=True),
                      sp if np.isscalar(sp) else condensed(sp)),
        }
        for name, (call, exp, scale) in calls.items():
            what = f"{name} {xp.name} {metric} {shape_x} {shape_y}"
            fast = call()
            assert_gpu_result(xp, fast, exp.shape, dtype)
            with monkeypatch.context() as m:
                m.setattr(_gpu, "_batch_fast", lambda *a: None)
                general = call()
            np.testing.assert_array_equal(xp.get(fast), xp.get(general), err_msg=what)
            assert_close(xp.get(fast), exp, rtol, scale, what)
    # what the fast plan leaves to the general one (which then checks and converts)
    g2 = xp.put(X)
    cases = {
        "strided": (xp.permute(xp.put(np.ascontiguousarray(X.transpose(1, 0, 2))), (1, 0, 2)), gY),
        "mixed dtypes": (xp.put(X.astype(np.float64 if dtype == np.float32 else np.float32)), gY),
        "1-D": (xp.put(X[0, :, 0]), gY),
        "int": (xp.put(np.arange(12, dtype=np.int32).reshape(3, 4)), gY),
        "other dim": (g2, xp.put(Y[:, :, :2].copy())),
    }
    for name, (a, b) in cases.items():
        assert _gpu._batch_fast("cdist", a, b, 0, 0, _gpu._DEVICE_AUTO, -1, 1) is None, name
    assert _gpu._batch_fast("cdist", g2, gY, 0, 0, _gpu._DEVICE_CPU, -1, 1) is None
    assert _gpu._batch_fast("cdist", g2, gY, 0, 0, _gpu._DEVICE_CUDA, 1, 2) is None
    assert _gpu._batch_fast("paired", g2, xp.put(Y[:3]), 2, 0, _gpu._DEVICE_AUTO, -1, 1) is None
    with pytest.raises(ValueError, match="paired"):
        tswarp.paired(g2, xp.put(Y[:3]), metric=metric)


def test_gpu_wrong_dtype_names_the_argument(xp):
    f = xp.put(np.arange(10.0))
    with pytest.raises(TypeError, match=r"^b has dtype int32 on the GPU"):
        tswarp.dtw(f, xp.put(np.arange(10, dtype=np.int32)))
    with pytest.raises(TypeError, match=r"^X\[1\] has dtype float16 on the GPU"):
        tswarp.pdist([f, xp.put(np.arange(10, dtype=np.float16))])
    with pytest.raises(TypeError, match=r"^Y has dtype int64 on the GPU"):
        tswarp.cdist(xp.put(np.ones((2, 3))), xp.put(np.ones((2, 3), dtype=np.int64)))
    # integer timestamps are fine (converted to the series' dtype), as on the host
    got = tswarp.twed(f, f, ta=xp.put(np.arange(1, 11)), tb=xp.put(np.arange(2, 12)))
    exp = tswarp.twed(np.arange(10.0), np.arange(10.0), ta=np.arange(1, 11), tb=np.arange(2, 12))
    assert_close(xp.get(got), exp, 1e-12, 0.0, "integer timestamps")


def test_gpu_device_rules(rng, xp):
    a = rng.normal(size=(12, 2))
    g = xp.put(a)
    exp = tswarp.dtw(a, a[::-1], device="cpu")
    for device in (None, "auto", "cuda", "cuda:0"):
        kw = {} if device is None else {"device": device}
        got = tswarp.dtw(g, xp.put(a[::-1]), **kw)
        assert_gpu_result(xp, got, (), np.float64)
        assert_close(xp.get(got), exp, 1e-12, 0.0, f"device={device}")
    with pytest.raises(ValueError, match=r"^dtw\(\): a is in host memory \(numpy.ndarray\) but b is a GPU array"):
        tswarp.dtw(a, g)
    with pytest.raises(ValueError, match=r"^twed\(\): ta is in host memory"):
        tswarp.twed(g, g, ta=np.arange(1.0, 13.0))
    with pytest.raises(ValueError, match=r"^cdist\(\): Y\[1\] is in host memory"):
        tswarp.cdist([g], [g, a])
    with pytest.raises(ValueError, match=r"^dtw\(\): device='cpu' but a is a GPU array on cuda:0"):
        tswarp.dtw(g, g, device="cpu")
    with pytest.raises(ValueError, match=r"^pdist\(\): device='cpu' but X is a GPU array"):
        tswarp.pdist(xp.put(rng.normal(size=(3, 5))), device="cpu")
    if INFO["cuda_devices"] >= 2:
        with pytest.raises(ValueError, match=r"device='cuda:1' but a is on cuda:0"):
            tswarp.dtw(g, g, device="cuda:1")
    else:
        with pytest.raises(tswarp.NoDeviceError, match="device"):
            tswarp.dtw(g, g, device="cuda:1")


@pytest.mark.skipif(INFO["cuda_devices"] < 2, reason="needs two GPUs")
def test_gpu_arrays_on_a_second_gpu(rng, xp):
    X = rng.normal(size=(6, 30, 2))
    g1 = xp.put(X, dev=1)
    got = tswarp.pdist(g1)
    assert_gpu_result(xp, got, (6, 6), np.float64, dev=1)
    assert_close(xp.get(got), tswarp.pdist(X, device="cpu"), 1e-12, 0.0, "cuda:1")
    got = tswarp.dtw(g1[0], g1[1], device="cuda:1")
    assert_gpu_result(xp, got, (), np.float64, dev=1)
    with pytest.raises(ValueError, match=r"b is on cuda:1 but a is on cuda:0"):
        tswarp.dtw(xp.put(X[0]), g1[1])
    with pytest.raises(ValueError, match=r"device='cuda:0' but X is on cuda:1"):
        tswarp.pdist(g1, device="cuda:0")


def test_torch_tensor_requiring_grad_is_read_detached(rng):
    xp = load_lib("torch")
    a, b = rng.normal(size=(20, 3)), rng.normal(size=(15, 3))
    ga = xp.put(a).requires_grad_(True)
    got = tswarp.soft_dtw(ga, xp.put(b), gamma=0.5)
    assert not got.requires_grad
    assert_close(xp.get(got), tswarp.soft_dtw(a, b, gamma=0.5, device="cpu"), 1e-12,
                 pair_scale("soft_dtw", a, b, {"gamma": 0.5}), "requires_grad")


def test_mixed_libraries_follow_the_first_argument(rng):
    cp, th = load_lib("cupy"), load_lib("torch")
    a, b = rng.normal(size=(20, 2)), rng.normal(size=(17, 2))
    exp = tswarp.dtw(a, b, device="cpu")
    got = tswarp.dtw(cp.put(a), th.put(b))
    assert_gpu_result(cp, got, (), np.float64)
    assert_close(cp.get(got), exp, 1e-12, 0.0, "cupy first")
    got = tswarp.cdist([th.put(a)], [cp.put(b)])
    assert_gpu_result(th, got, (1, 1), np.float64)
    assert_close(th.get(got), [[exp]], 1e-12, 0.0, "torch first")


class CAIOnly:
    """Some other library's CUDA array: only __cuda_array_interface__."""

    def __init__(self, arr):
        self._arr = arr

    @property
    def __cuda_array_interface__(self):
        return self._arr.__cuda_array_interface__


class DLPackOnly:
    """Some other library's CUDA array: only DLPack."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, *args, **kwargs):
        return self._arr.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_foreign_cuda_arrays_through_cai_and_dlpack(rng):
    """Other GPU arrays are viewed through CuPy when it is installed, else torch; the result is
    an array of that library."""
    if not HAS_GPU:
        pytest.skip(NO_GPU_REASON)
    try:
        lib = load_lib("cupy")
    except pytest.skip.Exception:
        lib = load_lib("torch")
    X = rng.normal(size=(5, 20, 2))
    exp = tswarp.pdist(X, device="cpu")
    gX = lib.put(X)
    for wrap in (CAIOnly, DLPackOnly):
        got = tswarp.pdist(wrap(gX))
        assert_gpu_result(lib, got, (5, 5), np.float64)
        assert_close(lib.get(got), exp, 1e-12, 0.0, wrap.__name__)
        got = tswarp.dtw(wrap(gX[0]), wrap(gX[1]))
        assert_gpu_result(lib, got, (), np.float64)


def _busy(xp):
    """Keep the current stream busy for a while (about 0.1 s)."""
    if isinstance(xp, TorchLib) and hasattr(xp.t.cuda, "_sleep"):
        xp.t.cuda._sleep(200_000_000)
        return
    m = xp.put(np.full((2048, 2048), 1e-3, dtype=np.float32))
    for _ in range(40):
        m = m @ m


def test_non_default_stream_orders_the_work(rng, xp):
    """Inputs written on a non-blocking stream just before the call: tswarp must run on that
    stream (the library's current one) to see them."""
    X = rng.normal(size=(48, 96, 2)).astype(np.float32)
    exp = tswarp.pdist(X, device="cpu")
    src = xp.put(X)
    xp.sync()
    if isinstance(xp, TorchLib):
        stream = xp.t.cuda.Stream()  # PyTorch's pool streams do not sync with the legacy stream
        ctx = xp.t.cuda.stream(stream)
    else:
        stream = xp.cp.cuda.Stream(non_blocking=True)
        ctx = stream
    with ctx:
        dst = src * 0
        _busy(xp)
        dst += src
        got = tswarp.pdist(dst)
        got_pair = tswarp.dtw(dst[0], dst[1])
    assert_close(xp.get(got), exp, 1e-5, 0.0, f"{xp.name} non-default stream")
    assert_close(xp.get(got_pair), exp[0, 1], 1e-5, 0.0, "pair on a non-default stream")


def _hog(xp, leave):
    """Allocate all but about `leave` bytes of free device memory; the buffer or None."""
    free, _ = xp.mem()
    for k in range(40):
        size = free - leave - k * (64 << 20)
        if size <= 0:
            return None
        try:
            return xp.alloc_bytes(size)
        except Exception:
            continue
    return None


def test_output_larger_than_gpu_memory_is_memory_error(rng, xp):
    free, _ = xp.mem()
    n = math.isqrt(10 * free // 4) + 1  # a float32 n x n matrix: 10x the free memory
    X = xp.put(np.zeros((n, 1), dtype=np.float32))
    with pytest.raises(MemoryError, match=r"\d+ bytes") as e:
        tswarp.cdist(X, X)
    assert str(n * n * 4) in str(e.value), str(e.value)
    with pytest.raises(MemoryError, match=r"\d+ bytes"):
        tswarp.pdist(X)
    del X
    small = rng.normal(size=(7, 25, 2)).astype(np.float32)
    got = tswarp.pdist(xp.put(small))
    assert_close(xp.get(got), tswarp.pdist(small, device="cpu"), 1e-5, 0.0, "after MemoryError")


def test_gpu_full_gives_memory_error_or_chunks(rng, xp):
    """With almost no device memory left, a call either succeeds (the library splits the work
    into chunks that fit) or raises MemoryError saying how many bytes it needed; afterwards
    the device is usable."""
    X = rng.normal(size=(3000, 64)).astype(np.float32)  # a 36 MB result
    exp = tswarp.cdist(X[:50], X, device="cpu")
    gX = xp.put(X)
    xp.sync()
    hog = _hog(xp, 16 << 20)
    if hog is None:
        pytest.skip("could not fill the device memory")
    try:
        for name, call, get in (("numpy", lambda: tswarp.cdist(X, X, device="cuda"), np.asarray),
                                (xp.name, lambda: tswarp.cdist(gX, gX), xp.get)):
            try:
                out = call()
            except MemoryError as e:
                assert re.search(r"\d+ bytes", str(e)), f"{name}: {e}"
            else:
                assert_close(get(out)[:50], exp, 1e-5, 0.0, f"{name} with the GPU nearly full")
                del out
    finally:
        del hog
        xp.sync()
        xp.release()
    got = tswarp.cdist(gX[:50], gX)
    assert_close(xp.get(got), exp, 1e-5, 0.0, "after freeing the memory")
    assert_close(tswarp.cdist(X[:50], X, device="cuda"), exp, 1e-5, 0.0, "numpy after freeing")


def test_failing_calls_do_not_leak_device_memory(rng, xp):
    X = rng.normal(size=(40, 64, 2))
    X[7, 3, 1] = np.nan
    gX = xp.put(X)
    T = np.tile(np.arange(1.0, 65.0), (40, 1))
    T[5, 10] = T[5, 9]
    gT = xp.put(T)
    calls = [
        (lambda: tswarp.pdist(gX), r"^X\[7\] contains NaN or infinity"),
        (lambda: tswarp.cdist(gX[:5], gX, metric="soft_dtw"), r"^Y\[7\] contains NaN"),
        (lambda: tswarp.cdist([gX[i] for i in range(9)], metric="twed"), r"^X\[7\] contains NaN"),
        (lambda: tswarp.dtw(gX[7], gX[0]), r"^a contains NaN"),
        (lambda: tswarp.twed(gX[0], gX[1], ta=gT[5], tb=gT[0]),
         r"^ta must be strictly increasing, but ta\[10\]"),
        (lambda: tswarp.pdist(gX[:, :, 0][:7], metric="twed", tx=gT[:7]),
         r"^tx\[5\] must be strictly increasing"),
        (lambda: tswarp.cdist(X, X[:3], device="cuda"), r"^X\[7\] contains NaN"),
        (lambda: tswarp.soft_dtw(X[0], X[7], device="cuda"), r"^b contains NaN"),
    ]

    def run(count):
        for i in range(count):
            call, pattern = calls[i % len(calls)]
            with pytest.raises(ValueError, match=pattern):
                call()

    run(2 * len(calls))  # pools and caches reach their steady state
    gc.collect()  # tracebacks of the caught errors hold the call's buffers until collected
    xp.sync()
    tswarp.empty_cache()  # tswarp's own pool (host-input calls): a leaked block would stay
    free0, used0 = xp.mem()[0], xp.used()
    run(200)
    gc.collect()
    xp.sync()
    tswarp.empty_cache()
    free1, used1 = xp.mem()[0], xp.used()
    assert used1 <= used0, f"{xp.name} allocator: {used1 - used0} bytes more in use after 200 failing calls"
    assert free0 - free1 <= (4 << 20), f"device free memory fell by {free0 - free1} bytes"
    good = np.nan_to_num(X[:6])
    assert_close(xp.get(tswarp.pdist(xp.put(good))), tswarp.pdist(good, device="cpu"), 1e-12, 0.0, "after failures")


def test_concurrent_calls_from_threads(rng, xp):
    X = rng.normal(size=(40, 120, 3)).astype(np.float32)
    L = [rng.normal(size=(int(rng.integers(5, 150)), 3)) for _ in range(12)]
    gX, gL = xp.put(X), [xp.put(x) for x in L]
    jobs = [
        lambda: xp.get(tswarp.pdist(gX)),
        lambda: xp.get(tswarp.cdist(gX, gX[:7], metric="twed", nu=0.1)),
        lambda: xp.get(tswarp.pdist(gL, metric="soft_dtw", gamma=0.1, condensed=True)),
        lambda: xp.get(tswarp.dtw(gX[0], gX[1], radius=10)),
        lambda: tswarp.cdist(X, L, device="cuda", metric="twed"),
        lambda: tswarp.soft_dtw(L[0], L[1], device="cuda"),
    ]
    ref = [job() for job in jobs]
    n_threads, rounds = 4, 5
    results = [[] for _ in range(n_threads)]
    errors = []
    barrier = threading.Barrier(n_threads)

    def worker(t):
        try:
            barrier.wait()
            for r in range(rounds):
                for k in range(len(jobs)):
                    k = (k + t + r) % len(jobs)  # threads run different calls at once
                    results[t].append((k, jobs[k]()))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for t in range(n_threads):
        assert len(results[t]) == rounds * len(jobs)
        for k, got in results[t]:
            np.testing.assert_array_equal(got, ref[k], err_msg=f"thread {t} job {k}")


@needs_gpu
def test_info_lists_the_gpus():
    assert INFO["cuda_built"] and INFO["cuda_archs"]
    assert INFO["cuda_runtime"] > 0 and INFO["cuda_driver"] > 0
    assert len(INFO["gpus"]) == INFO["cuda_devices"] >= 1
    assert any(g["runnable"] for g in INFO["gpus"]), INFO["gpus"]


def _cached(index=0):
    return tswarp.info()["gpus"][index]["cached_memory"]


@needs_gpu
def test_empty_cache_returns_what_the_pool_keeps(rng):
    """Host-input calls keep their GPU block in tswarp's pool (up to the cap); the next
    call of the size reuses it, empty_cache gives it back, and the results stay the same."""
    X = rng.normal(size=(64, 2000, 4))
    tswarp.empty_cache()
    assert all(g["cached_memory"] == 0 for g in tswarp.info()["gpus"])
    exp = tswarp.cdist(X, X[:8], device="cuda:0")
    kept = _cached()
    if os.environ.get("TSWARP_CUDA_CACHE_BYTES") == "0":
        assert kept == 0
    else:
        assert kept > 0
    np.testing.assert_array_equal(tswarp.cdist(X, X[:8], device="cuda:0"), exp)
    assert _cached() == kept  # reused: the pool did not grow
    tswarp.empty_cache(0)
    assert _cached() == 0
    np.testing.assert_array_equal(tswarp.cdist(X, X[:8], device="cuda:0"), exp)
    tswarp.empty_cache()
    assert _cached() == 0


@needs_gpu
def test_cuda_cache_bytes_zero_keeps_nothing():
    code = ("import numpy as np, tswarp; X = np.random.default_rng(0).normal(size=(64, 2000, 4));"
            "tswarp.cdist(X, X[:8], device='cuda:0');"
            "print(tswarp.info()['gpus'][0]['cached_memory'])")
    for value, keeps in (("0", False), ("not a number", True)):
        env = dict(os.environ, TSWARP_CUDA_CACHE_BYTES=value)
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        assert (int(proc.stdout.split()[-1]) > 0) == keeps, (value, proc.stdout)


# =======================================================================================
# alignment paths on the GPU (src/cuda/path.cu): the CPU's path, pair for pair
# =======================================================================================
@needs_gpu
@DTYPES
@pytest.mark.parametrize("step", ["symmetric1", "p05"])
def test_dtw_path_on_gpu_equals_cpu(rng, step, dtype):
    for trial in range(12):
        n = int(rng.integers(1, 700))
        m = int(rng.integers(n // 2 + 1, 2 * n)) if step == "p05" else int(rng.integers(1, 700))
        dim = int(rng.choice([1, 3, 12, 20]))
        cost = str(rng.choice(["sqeuclidean", "euclidean", "abs", "cosine"]))
        kw = dict(step=step, cost=cost)
        if trial % 3 == 1:
            kw["radius"] = int(rng.integers(0, max(n, m) // 3 + 2))
        a = rng.standard_normal((n, dim)).cumsum(axis=0).astype(dtype)
        b = rng.standard_normal((m, dim)).cumsum(axis=0).astype(dtype)
        what = f"seed={rng.seed} trial={trial} {a.shape} {b.shape} {kw}"
        ref, c0 = tswarp.dtw_path(a, b, device="cpu", **kw)
        for method, limit in (("stored", None), ("linear", 1 << 16), ("auto", None)):
            got, c = tswarp.dtw_path(a, b, device="cuda", method=method, memory_limit=limit, **kw)
            np.testing.assert_array_equal(got, ref, err_msg=f"{what} {method}")
            assert c == c0, f"{what} {method}: cost {c!r} != {c0!r}"


@needs_gpu
@DTYPES
@pytest.mark.parametrize("step", ["symmetric1", "p05", "p05_query"])
def test_subsequence_dtw_on_gpu_equals_cpu(rng, step, dtype):
    for trial in range(10):
        m = int(rng.integers(1, 1500))
        n = int(rng.integers(1, min(m, 400) + 1))
        dim = int(rng.choice([1, 3, 12, 20]))
        cost = str(rng.choice(["sqeuclidean", "euclidean", "abs", "cosine"]))
        k = int(rng.integers(1, 6))
        b = rng.standard_normal((m, dim)).cumsum(axis=0).astype(dtype)
        off = int(rng.integers(0, m - n + 1))
        a = (b[off:off + n] + 0.1 * rng.standard_normal((n, dim))).astype(dtype)
        what = f"seed={rng.seed} trial={trial} {a.shape} {b.shape} {cost} k={k}"
        ref = tswarp.subsequence_dtw(a, b, step=step, cost=cost, k=k, device="cpu")
        got = tswarp.subsequence_dtw(a, b, step=step, cost=cost, k=k, device="cuda")
        assert len(got) == len(ref) >= 1, what
        for q, (g, r) in enumerate(zip(got, ref)):
            assert (g.start, g.end, g.cost) == (r.start, r.end, r.cost), f"{what} match {q}"
            np.testing.assert_array_equal(g.path, r.path, err_msg=f"{what} match {q}")


@needs_gpu
@DTYPES
@pytest.mark.parametrize("variant", ["none", "weak", "strict"])
def test_segmental_dtw_on_gpu_equals_cpu(rng, variant, dtype):
    for trial in range(6):
        n = int(rng.integers(64, 1200))
        m = int(rng.integers(n // 2 + 2, n + n // 2))
        dim = int(rng.choice([1, 12]))
        step = str(rng.choice(["p05_query", "p05", "symmetric1"]))
        cost = str(rng.choice(["sqeuclidean", "cosine"]))
        N = int(rng.integers(1, 33))
        a = rng.standard_normal((n, dim)).cumsum(axis=0).astype(dtype)
        b = (a[np.arange(m) * n // m] + 0.2 * rng.standard_normal((m, dim))).astype(dtype)
        kw = dict(variant=variant, step=step, cost=cost, return_segments=True)
        what = f"seed={rng.seed} trial={trial} {a.shape} {b.shape} N={N} {kw}"
        try:
            ref, rseg = tswarp.segmental_dtw(a, b, N, device="cpu", **kw)
        except ValueError as e:  # no ordered placement (SSDTW) or fragments too short
            with pytest.raises(ValueError, match=re.escape(str(e))):
                tswarp.segmental_dtw(a, b, N, device="cuda", **kw)
            continue
        got, gseg = tswarp.segmental_dtw(a, b, N, device="cuda", **kw)
        np.testing.assert_array_equal(got, ref, err_msg=what)
        assert len(gseg) == len(rseg) == N, what
        for f, (g, r) in enumerate(zip(gseg, rseg)):
            assert (g.start, g.end, g.cost) == (r.start, r.end, r.cost), f"{what} fragment {f}"
            np.testing.assert_array_equal(g.path, r.path, err_msg=f"{what} fragment {f}")


# =======================================================================================
# GPU arrays as inputs of the alignment functions (tswarp/_align.py, _gpu.align_inputs):
# copied to the host, computed on their GPU (or where `device` says), the paths back on
# their GPU as arrays of their library; costs, starts and ends as Python numbers
# =======================================================================================
def _align_case(rng, dtype, step="p05"):
    n = int(rng.integers(2, 400))
    m = int(rng.integers((n + 1) // 2 + 1, 2 * n)) if step != "symmetric1" else int(rng.integers(1, 400))
    dim = int(rng.choice([1, 3, 12]))
    a = rng.standard_normal((n, dim)).cumsum(axis=0).astype(dtype)
    b = rng.standard_normal((m, dim)).cumsum(axis=0).astype(dtype)
    if dim == 1 and rng.random() < 0.5:
        a, b = a[:, 0], b[:, 0]
    return a, b


def _all_alignments(a, b, wrap=lambda x: x, **kw):
    """(dtw_path p05, dtw_path symmetric1 with a window, subsequence_dtw k=3, segmental_dtw
    with its segments) of the numpy pair a, b, passed as wrap(a), wrap(b)."""
    n, m = len(a), len(b)
    q, a, b = wrap(a[: max(1, n // 3)]), wrap(a), wrap(b)
    out = {"p05": tswarp.dtw_path(a, b, step="p05", cost="cosine", **kw),
           "sym1": tswarp.dtw_path(a, b, radius=max(3, abs(n - m) + 2), **kw),
           "subseq": tswarp.subsequence_dtw(q, b, step="p05_query", k=3, **kw)}
    N = max(1, min(4, n // 4))
    out["seg"] = tswarp.segmental_dtw(a, b, N, "weak", step="symmetric1", return_segments=True, **kw)
    return out


def _check_alignments(got, exp, get, owns, what):
    """got (GPU-array paths through get/owns, or numpy when owns is None) equals exp."""
    def path(x, label):
        if owns is None:
            assert type(x) is np.ndarray, f"{what} {label}: {type(x)}"
        else:
            assert owns(x), f"{what} {label}: expected a GPU array, got {type(x)}"
        h = get(x)
        assert h.dtype == np.int64, f"{what} {label}: dtype {h.dtype}"
        return h
    for key in ("p05", "sym1"):
        (gp, gc_), (ep, ec) = got[key], exp[key]
        np.testing.assert_array_equal(path(gp, key), ep, err_msg=f"{what} {key}")
        assert type(gc_) is float and gc_ == ec, f"{what} {key}: cost {gc_!r} != {ec!r}"
    assert len(got["subseq"]) == len(exp["subseq"]) >= 1, what
    for q, (g, e) in enumerate(zip(got["subseq"], exp["subseq"])):
        assert (g.start, g.end, g.cost) == (e.start, e.end, e.cost), f"{what} match {q}"
        assert type(g.start) is int and type(g.cost) is float, what
        np.testing.assert_array_equal(path(g.path, f"match {q}"), e.path, err_msg=f"{what} match {q}")
    (gp, gs), (ep, es) = got["seg"], exp["seg"]
    np.testing.assert_array_equal(path(gp, "segmental"), ep, err_msg=f"{what} segmental")
    assert len(gs) == len(es), what
    for f, (g, e) in enumerate(zip(gs, es)):
        assert (g.start, g.end, g.cost) == (e.start, e.end, e.cost), f"{what} fragment {f}"
        np.testing.assert_array_equal(path(g.path, f"fragment {f}"), e.path,
                                      err_msg=f"{what} fragment {f}")


@DTYPES
def test_alignment_of_torch_cpu_tensors_gives_numpy_results(rng, dtype):
    """Host tensors are host arrays, as for cdist: numpy paths, the numpy inputs' result."""
    torch = pytest.importorskip("torch")
    for trial in range(3):
        a, b = _align_case(rng, dtype)
        exp = _all_alignments(a, b, device="cpu")
        got = _all_alignments(a, b, torch.from_numpy)
        _check_alignments(got, exp, lambda x: x, None, f"seed={rng.seed} trial={trial}")


def test_alignment_host_objects_with_gpu_protocols_take_the_numpy_path(rng):
    a, b = _align_case(rng, np.float64)
    _check_alignments(_all_alignments(a, b, HostDLPack), _all_alignments(a, b),
                      lambda x: x, None, f"seed={rng.seed}")


def test_alignment_gpu_array_beside_host_array_names_the_argument(rng):
    a = rng.normal(size=8)
    with pytest.raises(ValueError, match=r"^dtw_path\(\): a is in host memory \(numpy.ndarray\) "
                                         r"but b is a GPU array"):
        tswarp.dtw_path(a, FakeCudaArray(a))
    with pytest.raises(ValueError, match=r"^subsequence_dtw\(\): reference is in host memory "
                                         r"\(list\) but query is a GPU array"):
        tswarp.subsequence_dtw(FakeCudaArray(a), list(a))
    with pytest.raises(ValueError, match=r"^segmental_dtw\(\): b is in host memory"):
        tswarp.segmental_dtw(FakeCudaArray(a), a, 2)


@pytest.mark.skipif(HAS_GPU, reason="a CUDA GPU is present")
def test_alignment_unreadable_gpu_array_is_no_device_error(rng):
    """A CUDA array (here a fake one) where no library can reach a GPU: NoDeviceError
    naming the argument (TypeError when neither CuPy nor torch is installed)."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None and torch.cuda.is_available():
        pytest.skip("torch sees a GPU: it would read the fake array's host pointer")
    cupy_ok = False
    try:
        import cupy  # noqa: F401
        cupy_ok = True
    except Exception:
        pass
    a = rng.normal(size=8)
    expected = tswarp.NoDeviceError if (torch is not None or cupy_ok) else TypeError
    for call in (lambda: tswarp.dtw_path(FakeCudaArray(a), FakeCudaArray(a)),
                 lambda: tswarp.subsequence_dtw(FakeCudaArray(a[:3]), FakeCudaArray(a)),
                 lambda: tswarp.segmental_dtw(FakeCudaArray(a), FakeCudaArray(a), 2)):
        with pytest.raises(expected, match=r"^(dtw_path|subsequence_dtw|segmental_dtw)\(\): "
                                           r"(a|query) is a GPU array"):
            call()


class _FakeGPU:
    """A stand-in for a GPU array of a stand-in library (_FakeLib): host data, a device id."""

    def __init__(self, a, dev=0):
        self.a, self.dev = np.asarray(a), dev

    @property
    def __cuda_array_interface__(self):  # only its presence on the type matters here
        raise AttributeError


class _FakeLib:
    name = "fake"

    def __init__(self):
        self.copies = 0

    def adopt(self, x):
        return x

    def device(self, x):
        return x.dev

    def use(self, dev):
        import contextlib
        return contextlib.nullcontext()

    def dtype(self, x):
        return x.a.dtype

    def host(self, x):
        self.copies += 1
        return x.a

    def to_device(self, x, dev):
        return _FakeGPU(x.copy(), dev)


def test_alignment_gpu_array_plumbing_with_a_stand_in_library(rng, monkeypatch):
    """The Python side of GPU inputs, everywhere: a stand-in array library whose "GPU"
    arrays hold host data. Paths come back as its arrays on the inputs' device, equal to
    the numpy result; 'auto' falls back to the CPU where the GPU cannot compute (no CUDA
    backend here); 'cpu' works; two devices are a ValueError."""
    from tswarp import _gpu
    lib = _FakeLib()
    real_kind = _gpu.gpu_kind
    monkeypatch.setattr(_gpu, "gpu_kind", lambda x: "fake" if isinstance(x, _FakeGPU) else real_kind(x))
    monkeypatch.setattr(_gpu, "_lib", lambda name: lib if name == "fake" else None)
    owns = lambda x: isinstance(x, _FakeGPU) and x.dev == 1  # noqa: E731
    for dtype in (np.float64, np.float32):
        a, b = _align_case(rng, dtype)
        exp = _all_alignments(a, b, device="cpu")
        for kw in ({}, {"device": "auto"}, {"device": "cpu"}):
            got = _all_alignments(a, b, lambda x: _FakeGPU(x, 1), **kw)
            _check_alignments(got, exp, lambda x: x.a, owns, f"seed={rng.seed} {dtype} {kw}")
    assert lib.copies > 0
    # Itakura: host 'auto' computes it on the CPU; GPU inputs with 'auto' too (lengths
    # within a factor 2, so a slope of 3 admits a path)
    a, b = _align_case(rng, np.float64)
    ep, ec = tswarp.dtw_path(a, b, itakura_max_slope=3.0, device="cpu")
    gp, gc_ = tswarp.dtw_path(_FakeGPU(a, 1), _FakeGPU(b, 1), itakura_max_slope=3.0)
    assert owns(gp) and gc_ == ec
    np.testing.assert_array_equal(gp.a, ep)
    if not HAS_GPU:  # an explicit GPU request does not fall back
        with pytest.raises(tswarp.NoDeviceError, match="device='cuda:1'"):
            tswarp.dtw_path(_FakeGPU(a, 1), _FakeGPU(b, 1), device="cuda")
    with pytest.raises(ValueError, match=r"b is on cuda:0 but a is on cuda:1"):
        tswarp.dtw_path(_FakeGPU(a, 1), _FakeGPU(b, 0))
    with pytest.raises(ValueError, match="device must be"):
        tswarp.subsequence_dtw(_FakeGPU(a, 1), _FakeGPU(b, 1), device="gpu")
    with pytest.raises(TypeError, match="unexpected keyword|invalid keyword|bogus"):
        tswarp.dtw_path(_FakeGPU(a, 1), _FakeGPU(b, 1), bogus=1)


@DTYPES
def test_alignment_of_gpu_arrays_equals_host(rng, xp, dtype):
    """CuPy arrays / torch CUDA tensors: the paths of the numpy inputs, bit for bit, as
    arrays of the inputs' library on their GPU, for device 'auto', 'cuda' and 'cpu'."""
    for trial in range(4):
        a, b = _align_case(rng, dtype)
        what = f"seed={rng.seed} trial={trial} {a.shape} {b.shape}"
        exp = _all_alignments(a, b, device="cpu")
        for kw in ({}, {"device": "cuda"}, {"device": "cpu"}):
            got = _all_alignments(a, b, xp.put, **kw)
            _check_alignments(got, exp, xp.get, lambda x: xp.owns(x) and xp.device(x) == 0,
                              f"{what} {kw}")
    # non-contiguous inputs (a transposed view), and Itakura (computed on the GPU; lengths
    # within a factor 2, so a slope of 3 admits a path)
    a, b = _align_case(rng, dtype)
    a2, b2 = np.atleast_2d(a.T).T, np.atleast_2d(b.T).T
    gt = xp.permute(xp.put(np.ascontiguousarray(a2.T)), (1, 0))
    ep, ec = tswarp.dtw_path(a2, b2, device="cpu")
    gp, gc_ = tswarp.dtw_path(gt, xp.put(b2))
    np.testing.assert_array_equal(xp.get(gp), ep)
    assert gc_ == ec
    ep, ec = tswarp.dtw_path(a2, b2, itakura_max_slope=3.0, device="cpu")
    gp, gc_ = tswarp.dtw_path(xp.put(a2), xp.put(b2), itakura_max_slope=3.0)
    assert xp.owns(gp)
    np.testing.assert_array_equal(xp.get(gp), ep)
    assert gc_ == ec
    gp, gc_ = tswarp.dtw_path(xp.put(a2), xp.put(b2), itakura_max_slope=3.0, device="cuda")
    np.testing.assert_array_equal(xp.get(gp), ep)
    assert gc_ == ec
    with pytest.raises(ValueError, match=r"^dtw_path\(\): a is in host memory"):
        tswarp.dtw_path(a2, xp.put(b2))


@pytest.mark.skipif(INFO["cuda_devices"] < 2, reason="needs two GPUs")
def test_alignment_of_gpu_arrays_on_a_second_gpu(rng, xp):
    a, b = _align_case(rng, np.float64)
    exp = _all_alignments(a, b, device="cpu")
    for kw in ({}, {"device": "cuda:0"}):  # computed on GPU 1, or on GPU 0: back on GPU 1
        got = _all_alignments(a, b, lambda x: xp.put(x, dev=1), **kw)
        _check_alignments(got, exp, xp.get, lambda x: xp.owns(x) and xp.device(x) == 1,
                          f"seed={rng.seed} {kw}")


# =======================================================================================
# shapelet discovery on the GPU (src/cuda/shapelet.cu): the CPU's shapelets, bit for bit
# =======================================================================================
def _shapelet_problem(rng, trial):
    """Ragged series, 2-4 classes; odd trials small integers (constant windows, ties)."""
    n = int(rng.integers(6, 30))
    C = 2 + trial % 3
    y = np.array([f"c{k % C}" for k in range(C)] +
                 [f"c{int(rng.integers(0, C))}" for _ in range(n - C)])
    lens = rng.integers(12, 60, size=n)
    if trial % 2:
        X = [rng.integers(-1, 2, size=int(m)).astype(np.float64) for m in lens]
    else:
        X = [rng.standard_normal(int(m)).cumsum() for m in lens]
    return X, y


@needs_gpu
@DTYPES
def test_find_shapelet_on_gpu_equals_cpu(rng, dtype):
    from tswarp.shapelets import find_shapelet, shapelet_distances
    for trial in range(8):
        X, y = _shapelet_problem(rng, trial)
        X = [x.astype(dtype) for x in X]
        shortest, longest = min(len(x) for x in X), max(len(x) for x in X)
        # lengths up to the longest series (the default): shorter ones slide along them
        kw = dict(min_length=int(rng.integers(2, 6)), length_step=int(rng.integers(1, 4)))
        if trial % 4 == 3:
            kw["max_length"] = int(rng.integers(kw["min_length"], longest + 1))
        what = f"seed={rng.seed} trial={trial} n={len(X)} {kw}"
        try:
            ref = find_shapelet(X, y, device="cpu", **kw)
        except ValueError as e:
            # small integer series and one short length: every series may hold every kind
            # of window, so that no candidate splits; the GPU must say so too
            assert "no candidate splits" in str(e), what
            with pytest.raises(ValueError, match="no candidate splits"):
                find_shapelet(X, y, device="cuda", **kw)
            continue
        got = find_shapelet(X, y, device="cuda", **kw)
        assert (got.series, got.start, got.length) == (ref.series, ref.start, ref.length), what
        assert (got.threshold, got.gain, got.gap) == (ref.threshold, ref.gain, ref.gap), what
        np.testing.assert_array_equal(got.values, ref.values, err_msg=what)
        sh = [ref.values, X[0][: min(5, shortest)], rng.standard_normal(3),
              rng.standard_normal(longest)]
        d0, p0 = shapelet_distances(sh, X, return_positions=True, device="cpu")
        d1, p1 = shapelet_distances(sh, X, return_positions=True, device="cuda")
        np.testing.assert_array_equal(d1, d0, err_msg=what)
        np.testing.assert_array_equal(p1, p0, err_msg=what)


@needs_gpu
def test_shapelet_models_on_gpu_equal_cpu(rng):
    from tswarp.datasets import load_gunpoint
    from tswarp.shapelets import ShapeletTransform, ShapeletTreeClassifier, find_shapelet
    X, y = load_gunpoint("train")
    X = X[:, ::3][:30]  # 30 series of 50 points: quick, still a real dataset
    y = y[:30]
    kw = dict(min_length=5, max_length=30, length_step=5)
    cpu = ShapeletTreeClassifier(logical=True, device="cpu", **kw).fit(X, y)
    gpu = ShapeletTreeClassifier(logical=True, device="cuda", **kw).fit(X, y)
    assert gpu.export_text() == cpu.export_text()
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    t0 = ShapeletTransform(n_shapelets=8, device="cpu", **kw).fit(X, y)
    t1 = ShapeletTransform(n_shapelets=8, device="cuda", **kw).fit(X, y)
    np.testing.assert_array_equal(t1.transform(X), t0.transform(X))
    feats = ("distance", "occurrence", "position")
    t0.set_params(features=feats).fit(X, y)
    t1.set_params(features=feats).fit(X, y)
    T0, T1 = t0.transform(X), t1.transform(X)
    np.testing.assert_array_equal(T1, T0)  # counts too: the same d^2 bit for bit
    k = t0.n_shapelets_
    assert T0[:, k:2 * k].max() > 0
    # multivariate (n, channels, len): the same shapelets and features on both devices
    M = np.stack([X, X[:, ::-1] ** 2, rng.standard_normal(X.shape).cumsum(axis=1)], axis=1)
    m0 = ShapeletTransform(n_shapelets=8, device="cpu", features=feats,
                           layout="channels_first", **kw).fit(M, y)
    m1 = ShapeletTransform(n_shapelets=8, device="cuda", features=feats,
                           layout="channels_first", **kw).fit(M, y)
    assert [(s.channel, s.series, s.start, s.length) for s in m1.shapelets_] == \
        [(s.channel, s.series, s.start, s.length) for s in m0.shapelets_]
    np.testing.assert_array_equal(m1.transform(M), m0.transform(M))
    # multivariate series of unequal lengths (a list of (channels, len_i) arrays), some
    # shorter than the longest shapelets
    R = [m[:, :int(n)] for m, n in zip(M, rng.integers(20, 51, len(M)))]
    r0 = ShapeletTransform(n_shapelets=8, device="cpu", features=feats,
                           layout="channels_first", **kw).fit(R, y)
    r1 = ShapeletTransform(n_shapelets=8, device="cuda", features=feats,
                           layout="channels_first", **kw).fit(R, y)
    assert [(s.channel, s.series, s.start, s.length) for s in r1.shapelets_] == \
        [(s.channel, s.series, s.start, s.length) for s in r0.shapelets_]
    np.testing.assert_array_equal(r1.transform(R), r0.transform(R))
    # dilated shapelets: the same search (the order lines take the least over a series'
    # phases on the GPU too), distances and occurrences on both devices
    d0 = ShapeletTransform(n_shapelets=12, device="cpu", features=feats, dilation=(1, 2, 3),
                           **kw).fit(X, y)
    assert {s.dilation for s in d0.shapelets_} != {1}
    d1 = ShapeletTransform(n_shapelets=12, device="cuda", features=feats, dilation=(1, 2, 3),
                           **kw).fit(X, y)
    got = [(s.series, s.start, s.length, s.dilation, s.gain, s.threshold) for s in d1.shapelets_]
    assert got == [(s.series, s.start, s.length, s.dilation, s.gain, s.threshold)
                   for s in d0.shapelets_]
    np.testing.assert_array_equal(d1.transform(X), d0.transform(X))
    kd = dict(min_length=5, max_length=25, length_step=5)  # floor(50 / 2) = 25 at most
    b0 = find_shapelet(X, y, dilation=2, device="cpu", **kd)
    b1 = find_shapelet(X, y, dilation=2, device="cuda", **kd)
    assert (b1.series, b1.start, b1.length, b1.dilation, b1.gain, b1.gap, b1.threshold) == \
        (b0.series, b0.start, b0.length, b0.dilation, b0.gain, b0.gap, b0.threshold)
    # shapelets that are not z-normalised, alone and beside z-normalised ones: the same
    # shapelets, thresholds and features on both devices; the logical tree on raw shapelets
    for norm in (False, "both"):
        n0 = ShapeletTransform(n_shapelets=10, device="cpu", features=feats, normalize=norm,
                               layout="channels_first", **kw).fit(M, y)
        n1 = ShapeletTransform(n_shapelets=10, device="cuda", features=feats, normalize=norm,
                               layout="channels_first", **kw).fit(M, y)
        got = [(s.channel, s.series, s.start, s.length, s.normalized, s.gain, s.threshold)
               for s in n1.shapelets_]
        assert got == [(s.channel, s.series, s.start, s.length, s.normalized, s.gain,
                        s.threshold) for s in n0.shapelets_]
        np.testing.assert_array_equal(n1.transform(M), n0.transform(M))
    assert not any(s.normalized for s in
                   ShapeletTransform(n_shapelets=4, normalize=False, layout="channels_first",
                                     **kw).fit(M, y).shapelets_)
    cpu = ShapeletTreeClassifier(logical=True, normalize=False, device="cpu", **kw).fit(X, y)
    gpu = ShapeletTreeClassifier(logical=True, normalize=False, device="cuda", **kw).fit(X, y)
    assert gpu.export_text() == cpu.export_text()
    U = [x[:int(n)] for x, n in zip(X, rng.integers(20, 51, len(X)))]  # ragged, univariate
    r0 = find_shapelet(U, y, normalize=False, dilation=2, min_length=5, length_step=5,
                       device="cpu")
    r1 = find_shapelet(U, y, normalize=False, dilation=2, min_length=5, length_step=5,
                       device="cuda")
    assert (r1.series, r1.start, r1.length, r1.gain, r1.gap, r1.threshold) == \
        (r0.series, r0.start, r0.length, r0.gain, r0.gap, r0.threshold)


@needs_gpu
def test_gpu_arrays_in_both_layouts(rng, xp):
    """CuPy arrays and torch tensors in aeon's layout: layout='channels_first' transposes
    them on their GPU (one pair, whole arrays past the fast plan, lists); without a layout an
    ambiguous shape is the same ValueError as for numpy."""
    real = tswarp._module  # the library itself: no layout given for us (conftest)
    X = rng.standard_normal((6, 40, 3)).cumsum(axis=1)
    Xf = np.ascontiguousarray(X.transpose(0, 2, 1))
    gX, gXf = xp.put(X), xp.put(Xf)
    want = real.cdist(X, X[:4], device="cpu")
    np.testing.assert_allclose(xp.get(real.cdist(gXf, xp.put(Xf[:4]), layout="channels_first")),
                               want, rtol=1e-12)
    np.testing.assert_allclose(xp.get(real.cdist(gX, xp.put(X[:4]))), want, rtol=1e-12)
    np.testing.assert_allclose(xp.get(real.pdist([xp.put(x) for x in Xf],
                                                 layout="channels_first")),
                               real.pdist(X, device="cpu"), rtol=1e-12)
    np.testing.assert_allclose(float(xp.get(real.dtw(gXf[0], gXf[1], layout="channels_first"))),
                               real.dtw(X[0], X[1]), rtol=1e-12)
    with pytest.raises(ValueError, match=r"X has shape \(6, 3, 40\)"):
        real.cdist(gXf)
    with pytest.raises(ValueError, match=r"a has shape \(3, 40\)"):
        real.dtw(gXf[0], gXf[1])
    with pytest.raises(ValueError, match=r"X\[0\] has shape \(3, 40\)"):
        real.cdist([xp.put(x) for x in Xf])


# =======================================================================================
# extreme parameters on the GPU (issue 36): the CPU's values, never inf or NaN
# =======================================================================================
@needs_gpu
@pytest.mark.parametrize("gamma, scale", [(1e-300, 1.0), (2.3e-308, 1.0), (1.0, 1e140),
                                          (1e-20, 1e140), (1e300, 1.0)])
def test_gpu_soft_dtw_extreme_gamma(rng, gamma, scale):
    a = rng.standard_normal((40, 1)) * scale
    b = rng.standard_normal((33, 1)) * scale
    what = f"seed={rng.seed} gamma={gamma} scale={scale}"
    exp = tswarp.soft_dtw(a, b, gamma=gamma, device="cpu")
    assert np.isfinite(exp), what
    got = tswarp.soft_dtw(a, b, gamma=gamma, device="cuda")
    assert math.isclose(got, exp, rel_tol=1e-9, abs_tol=1e-9 * (abs(exp) + gamma * 73)), what
    X = np.stack([a[:33], b])
    got = tswarp.cdist(X, X, metric="soft_dtw", gamma=gamma, device="cuda")
    ref = tswarp.cdist(X, X, metric="soft_dtw", gamma=gamma, device="cpu")
    assert np.isfinite(got).all(), what
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * (np.abs(ref).max() + gamma * 66))


@needs_gpu
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_twed_extreme_p(rng, dtype):
    # the CUDA engines' general-p Lp distance is cost.h's scaled one
    a = np.array([[0.0, 0.0], [3.0, 4.0]], dtype=dtype)
    z = np.zeros((2, 2), dtype=dtype)
    for p in (3.5, 100.0, 700.0):
        exp = tswarp.twed(a, z, p=p, nu=0.0, lmbda=0.0, device="cpu", layout="channels_last")
        assert np.isfinite(exp) and exp >= 4 * (1 - 1e-6)
        got = tswarp.twed(a, z, p=p, nu=0.0, lmbda=0.0, device="cuda", layout="channels_last")
        assert math.isclose(got, exp, rel_tol=1e-6), (p, got, exp)
        X = np.stack([a, z, a * 1e-5])
        kw = dict(metric="twed", p=p, nu=0.0, lmbda=0.0, layout="channels_last")
        got = tswarp.cdist(X, X, device="cuda", **kw)
        ref = tswarp.cdist(X, X, device="cpu", **kw)
        np.testing.assert_allclose(got, ref, rtol=1e-5)
        assert (got[0, 1] > 0) and (got[2, 1] > 0), got


@needs_gpu
def test_gpu_itakura_huge_slope_matches_cpu(rng):
    a, b = rng.standard_normal((17, 1)), rng.standard_normal((13, 1))
    for slope in (1e10, 1e140):
        for f in (tswarp.dtw, tswarp.soft_dtw):
            exp = f(a, b, itakura_max_slope=slope, device="cpu")
            got = f(a, b, itakura_max_slope=slope, device="cuda")
            assert math.isclose(got, exp, rel_tol=1e-9), (f.__name__, slope, got, exp)
