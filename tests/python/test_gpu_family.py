"""The elastic family on the GPU (issue 33): WDTW, DDTW, WDDTW, ADTW, ERP, EDR, LCSS, MSM.

The CUDA kernels (cuda/batch_engine.cuh's K_FAM programs, cuda/kernels_family.cu) take their
cells from common/elastic.h, as the CPU's do, with no contracted multiply-adds, so their values
are the CPU backend's bit for bit, except WDTW's and WDDTW's, whose weights the GPU computes
with its own exp (within an ulp of glibc's): those are held to 1e-13 (float64) and 1e-6
(float32) relative. Fresh random inputs (the `rng` fixture prints its seed): lengths 3 .. 90
and now and then several hundred (several stripes of a warp), dims 1 to 5, every window kind,
every measure's parameters and their edges; cdist, pdist (both layouts), paired, the pair
functions and knn; numpy inputs and, where CuPy or torch is present, device arrays (the
derivatives and EDR's per-series std staged on the device). Skipped without a GPU.
"""

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # series as (length, dim), tswarp's layout

INFO = tswarp.info()
HAS_GPU = bool(INFO["cuda_built"] and INFO["cuda_devices"] > 0)
pytestmark = pytest.mark.skipif(not HAS_GPU, reason=(
    f"no CUDA GPU: tswarp.info() reports cuda_built={INFO['cuda_built']}, "
    f"cuda_devices={INFO['cuda_devices']}"))

FAMILY = ("wdtw", "ddtw", "wddtw", "adtw", "erp", "edr", "lcss", "msm")
DTYPES = pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])


def rtol_of(metric, dtype):
    if metric in ("wdtw", "wddtw"):
        return 1e-13 if dtype == np.float64 else 1e-6
    return 0.0


def draw_params(rng, metric):
    edge = rng.random() < 0.2
    if metric in ("wdtw", "wddtw"):
        p = {"g": 0.0 if edge else float(rng.uniform(0, 2))}
    elif metric == "adtw":
        p = {"warp_penalty": 0.0 if edge else float(rng.uniform(0, 3))}
    elif metric == "erp":
        p = {"g": float(rng.normal())}
    elif metric in ("edr", "lcss"):
        p = {} if metric == "edr" and rng.random() < 0.3 else {
            "epsilon": 0.0 if edge else float(rng.uniform(0.05, 2))}
    elif metric == "msm":
        p = {"c": 0.0 if edge else float(rng.uniform(0, 3)),
             "independent": bool(rng.random() < 0.5)}
    else:
        p = {"accumulated": bool(rng.random() < 0.5)}
    k = int(rng.integers(0, 4))
    if k == 1:
        p["radius"] = int(rng.integers(0, 30))
    elif k == 2:
        p["window"] = float(rng.random())
    elif k == 3:
        p["itakura_max_slope"] = float(rng.uniform(1.0, 3.0))
    return p


def draw_len(rng, long):
    return int(rng.integers(200, 700)) if long else int(rng.integers(3, 91))


def draw_series(rng, n, d, dtype):
    # integers now and then: exact ties between distances and the epsilon tests' edges
    if rng.random() < 0.2:
        x = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    else:
        x = rng.normal(size=(n, d)) * float(rng.choice([0.3, 1.0, 4.0]))
    return x.astype(dtype)


def check(got, exp, rtol, what):
    got = np.asarray(got, dtype=np.float64)
    exp = np.asarray(exp, dtype=np.float64)
    assert got.shape == exp.shape, f"{what}: shape {got.shape} != {exp.shape}"
    with np.errstate(invalid="ignore"):
        ok = (got == exp) | (np.abs(got - exp) <= rtol * np.maximum(np.abs(got), np.abs(exp)))
    bad = np.argwhere(~ok)[:3].tolist()
    assert ok.all(), f"{what}: at {bad}: gpu {got[~ok][:3]} cpu {exp[~ok][:3]}"


@DTYPES
@pytest.mark.parametrize("metric", FAMILY)
def test_family_batches_on_gpu_equal_cpu(rng, metric, dtype):
    rtol = rtol_of(metric, dtype)
    for trial in range(10):
        long = trial % 5 == 4
        d = int(rng.choice([1, 1, 2, 3, 5]))
        p = draw_params(rng, metric)
        X = [draw_series(rng, draw_len(rng, long), d, dtype) for _ in range(int(rng.integers(2, 7)))]
        Y = [draw_series(rng, draw_len(rng, long), d, dtype) for _ in range(int(rng.integers(1, 6)))]
        if rng.random() < 0.4:  # one length: the arrays' fast plan
            n = len(X[0])
            X = np.stack([draw_series(rng, n, d, dtype) for _ in range(len(X))])
            Y = np.stack([draw_series(rng, n, d, dtype) for _ in range(len(Y))])
        what = f"seed={rng.seed} trial={trial} {metric} d={d} {p}"
        exp = tswarp.cdist(X, Y, metric=metric, device="cpu", **p)
        got = tswarp.cdist(X, Y, metric=metric, device="cuda", **p)
        assert got.dtype == dtype, what
        check(got, exp, rtol, f"cdist {what}")
        check(tswarp.pdist(X, metric=metric, device="cuda", **p),
              tswarp.pdist(X, metric=metric, device="cpu", **p), rtol, f"pdist {what}")
        check(tswarp.pdist(X, metric=metric, device="cuda", condensed=True, **p),
              tswarp.pdist(X, metric=metric, device="cpu", condensed=True, **p), rtol,
              f"pdist condensed {what}")
        k = min(len(X), len(Y))
        check(tswarp.paired(X[:k], Y[:k], metric=metric, device="cuda", **p),
              tswarp.paired(X[:k], Y[:k], metric=metric, device="cpu", **p), rtol,
              f"paired {what}")


@DTYPES
@pytest.mark.parametrize("metric", FAMILY)
def test_family_pairs_on_gpu_equal_cpu(rng, metric, dtype):
    rtol = rtol_of(metric, dtype)
    for trial in range(12):
        d = int(rng.choice([1, 2, 4]))
        a = draw_series(rng, draw_len(rng, trial % 6 == 5), d, dtype)
        b = draw_series(rng, draw_len(rng, trial % 6 == 5), d, dtype)
        p = draw_params(rng, metric)
        what = f"seed={rng.seed} trial={trial} {metric} {a.shape} {b.shape} {p}"
        exp = tswarp.distance(a, b, metric=metric, device="cpu", **p)
        got = tswarp.distance(a, b, metric=metric, device="cuda", **p)
        assert isinstance(got, float), what
        check(got, exp, rtol, what)


@pytest.mark.parametrize("metric", FAMILY)
def test_family_knn_on_gpu_equals_cpu(rng, metric):
    Q = rng.normal(size=(7, 40, 2)).cumsum(1)
    X = rng.normal(size=(30, 40, 2)).cumsum(1)
    p = {k: v for k, v in draw_params(rng, metric).items() if k != "itakura_max_slope"}
    what = f"seed={rng.seed} {metric} {p}"
    dc, ic = tswarp.knn(Q, X, k=4, metric=metric, device="cpu", **p)
    dg, ig = tswarp.knn(Q, X, k=4, metric=metric, device="cuda", **p)
    check(dg, dc, rtol_of(metric, np.float64), what)
    if rtol_of(metric, np.float64) == 0.0:
        assert (ig == ic).all(), what


def test_family_edges_on_gpu(rng):
    """One-point series, lengths 3 (DDTW's least), windows that leave no path, EDR's and
    LCSS's epsilon on exact ties, MSM's dependent form at dim 1."""
    one = np.array([[1.0]])
    for metric in ("wdtw", "adtw", "erp", "edr", "lcss", "msm"):
        for b in (one, np.array([[2.0], [0.0], [3.0]])):
            assert tswarp.distance(one, b, metric=metric, device="cuda") == \
                tswarp.distance(one, b, metric=metric, device="cpu"), metric
    x3 = np.array([[0.0], [1.0], [3.0]])
    for metric in ("ddtw", "wddtw"):
        assert tswarp.distance(x3, x3[::-1], metric=metric, device="cuda") == \
            tswarp.distance(x3, x3[::-1], metric=metric, device="cpu")
        with pytest.raises(ValueError, match="at least 3"):
            tswarp.cdist([x3[:2]], [x3], metric=metric, device="cuda")
    a, b = np.arange(12.0)[:, None], np.arange(12.0)[::-1, None]
    for metric in ("edr", "lcss"):
        for eps in (0.0, 1.0, 2.0, 3.0):  # integer differences: the test's edge exactly
            assert tswarp.distance(a, b, metric=metric, epsilon=eps, device="cuda") == \
                tswarp.distance(a, b, metric=metric, epsilon=eps, device="cpu"), (metric, eps)
    X = rng.normal(size=(5, 30, 1))
    for indep in (True, False):
        np.testing.assert_array_equal(
            tswarp.pdist(X, metric="msm", independent=indep, device="cuda"),
            tswarp.pdist(X, metric="msm", independent=indep, device="cpu"))
    # a window too narrow for unequal lengths: no path (inf; LCSS: nothing matched, 1)
    u, v = rng.normal(size=(10, 1)), rng.normal(size=(30, 1))
    for metric in ("wdtw", "erp", "edr", "lcss", "msm"):
        assert tswarp.distance(u, v, metric=metric, radius=0, device="cuda") == \
            tswarp.distance(u, v, metric=metric, radius=0, device="cpu"), metric


def _xp():
    out = []
    try:
        import cupy  # noqa: F401
        out.append("cupy")
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            out.append("torch")
    except Exception:
        pass
    return out


@pytest.mark.parametrize("lib", _xp() or ["none"])
@pytest.mark.parametrize("metric", ("ddtw", "wddtw", "edr", "erp", "msm"))
def test_family_device_arrays_equal_cpu(rng, lib, metric):
    """Device arrays read in place: the derivatives and EDR's std staged on the device."""
    if lib == "none":
        pytest.skip("neither CuPy nor torch with CUDA is installed")
    X = rng.normal(size=(6, 50, 2))
    Y = rng.normal(size=(4, 50, 2))
    if lib == "cupy":
        import cupy
        to, back = cupy.asarray, cupy.asnumpy
    else:
        import torch
        to, back = (lambda a: torch.as_tensor(a, device="cuda")), (lambda t: t.cpu().numpy())
    exp = tswarp.cdist(X, Y, metric=metric, device="cpu")
    got = tswarp.cdist(to(X), to(Y), metric=metric)
    check(back(got), exp, rtol_of(metric, np.float64), f"seed={rng.seed} {lib} {metric} cdist")
    exp = tswarp.pdist(X, metric=metric, device="cpu")
    got = tswarp.pdist(to(X), metric=metric)
    check(back(got), exp, rtol_of(metric, np.float64), f"seed={rng.seed} {lib} {metric} pdist")
    a, b = X[0], Y[1]
    got = tswarp.distance(to(a), to(b), metric=metric)
    check(float(got), tswarp.distance(a, b, metric=metric, device="cpu"),
          rtol_of(metric, np.float64), f"seed={rng.seed} {lib} {metric} pair")


def draw_shape_params(rng, L):
    p = {"reach": int(rng.choice([0, 1, 3, 15]))}
    if rng.random() < 0.4:
        p["descriptor"] = "paa"
        p["paa_segments"] = int(rng.integers(1, 2 * p["reach"] + 2))
    k = int(rng.integers(0, 4))
    if k == 1:
        p["radius"] = int(rng.integers(0, 12))
    elif k == 2:
        p["window"] = float(rng.random())
    elif k == 3:
        p["itakura_max_slope"] = float(rng.uniform(1.0, 3.0))
    return p


@DTYPES
def test_shape_dtw_on_gpu_equals_cpu(rng, dtype):
    """Shape DTW's GPU kernel (cuda/shape_dtw.cu): the CPU's values bit for bit in cdist,
    pdist (both layouts), paired, single pairs and knn, identity and PAA descriptors, every
    window, dims 1-3, unequal lengths (integers now and then: exact ties in the trace)."""
    for trial in range(8):
        d = int(rng.choice([1, 1, 2, 3]))
        p = draw_shape_params(rng, 0)
        X = [draw_series(rng, int(rng.integers(1, 70)), d, dtype) for _ in range(int(rng.integers(2, 6)))]
        Y = [draw_series(rng, int(rng.integers(1, 70)), d, dtype) for _ in range(int(rng.integers(1, 5)))]
        what = f"seed={rng.seed} trial={trial} shape_dtw d={d} {p}"
        got = tswarp.cdist(X, Y, metric="shape_dtw", device="cuda", **p)
        assert got.dtype == dtype, what
        check(got, tswarp.cdist(X, Y, metric="shape_dtw", device="cpu", **p), 0.0, f"cdist {what}")
        for cond in (False, True):
            check(tswarp.pdist(X, metric="shape_dtw", device="cuda", condensed=cond, **p),
                  tswarp.pdist(X, metric="shape_dtw", device="cpu", condensed=cond, **p), 0.0,
                  f"pdist condensed={cond} {what}")
        k = min(len(X), len(Y))
        check(tswarp.paired(X[:k], Y[:k], metric="shape_dtw", device="cuda", **p),
              tswarp.paired(X[:k], Y[:k], metric="shape_dtw", device="cpu", **p), 0.0,
              f"paired {what}")
        # (length, dim) said outright: a pair of d points, e.g. (3, 3), is otherwise refused
        got = tswarp.shape_dtw(X[0], Y[0], device="cuda", layout="channels_last", **p)
        assert isinstance(got, float), what
        check(got, tswarp.shape_dtw(X[0], Y[0], device="cpu", layout="channels_last", **p),
              0.0, f"pair {what}")
    Q = rng.normal(size=(5, 40, 2)).cumsum(1)
    D = rng.normal(size=(20, 40, 2)).cumsum(1)
    dc, ic = tswarp.knn(Q, D, k=3, metric="shape_dtw", reach=5, device="cpu")
    dg, ig = tswarp.knn(Q, D, k=3, metric="shape_dtw", reach=5, device="cuda")
    check(dg, dc, 0.0, f"seed={rng.seed} knn")
    assert (ig == ic).all(), f"seed={rng.seed} knn"


def test_shape_dtw_on_gpu_long_and_mutation(rng):
    """Pairs of several hundred points (many anti-diagonals a block, slots of MiBs), and a
    check that the comparison can fail: a changed reach changes the values."""
    X = rng.normal(size=(3, 400, 1)).cumsum(1)
    Y = rng.normal(size=(2, 300, 1)).cumsum(1)
    exp = tswarp.cdist(X, Y, metric="shape_dtw", device="cpu")
    got = tswarp.cdist(X, Y, metric="shape_dtw", device="cuda")
    check(got, exp, 0.0, f"seed={rng.seed} long")
    other = tswarp.cdist(X, Y, metric="shape_dtw", reach=14, device="cuda")
    assert (other != exp).any(), f"seed={rng.seed}: reach 14 gave reach 15's values"
