"""The elastic family (issue 33): WDTW, DDTW, WDDTW, ADTW, ERP, EDR, LCSS and MSM.

  aeon      wdtw/ddtw/wddtw/adtw/lcss/msm (both forms)/erp _distance to 1e-9 on random
            inputs of random lengths, dims and parameters (the parameters' edges included),
            windows for equal lengths (aeon's window fraction is tswarp's `window`)
  tslearn   lcss (1 - its similarity)
  brute     ERP and EDR by the papers' recursions on the full matrix (aeon 1.6 differs at
            the boundary: see test_erp_edr_boundary_conventions)

The fast kernel (cpu/family.c) gives the reference's bits; cdist/pdist/paired/knn equal the
pair function, at any thread count. Random inputs: the `rng` fixture (seed printed).
"""

import math

import numpy as np
import pytest

import tswarp
from conftest import peer

FAMILY = ("wdtw", "ddtw", "wddtw", "adtw", "erp", "edr", "lcss", "msm")


def draw_params(rng, metric):
    """Random parameters of a metric, its edges drawn now and then."""
    edge = rng.random() < 0.2
    if metric in ("wdtw", "wddtw"):
        return {"g": 0.0 if edge else float(rng.uniform(0, 2))}
    if metric == "adtw":
        return {"warp_penalty": 0.0 if edge else float(rng.uniform(0, 3))}
    if metric == "erp":
        return {"g": float(rng.normal())}
    if metric in ("edr", "lcss"):
        if metric == "edr" and rng.random() < 0.3:
            return {}  # aeon's automatic epsilon
        return {"epsilon": 0.0 if edge else float(rng.uniform(0.05, 2))}
    if metric == "msm":
        return {"c": 0.0 if edge else float(rng.uniform(0, 3)),
                "independent": bool(rng.random() < 0.5)}
    return {"accumulated": bool(rng.random() < 0.5)}  # ddtw


def aeon_value(metric, x, y, kw, window):
    """aeon's value for channels-first x, y (tswarp's accumulated DDTW)."""
    ad = peer("aeon.distances")
    w = {} if window is None else {"window": window}
    if metric == "ddtw":
        return ad.ddtw_distance(x, y, **w)
    fn = {"wdtw": ad.wdtw_distance, "wddtw": ad.wddtw_distance, "adtw": ad.adtw_distance,
          "erp": ad.erp_distance, "lcss": ad.lcss_distance, "msm": ad.msm_distance}[metric]
    return fn(x, y, **kw, **w)


def test_family_equals_aeon(rng):
    for trial in range(120):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(3, 40))
        m = n if rng.random() < 0.5 else int(rng.integers(3, 40))
        window = float(rng.choice([0.0, 0.1, 0.3, 1.0])) if n == m and rng.random() < 0.7 else None
        x = rng.normal(size=(d, n)) * float(rng.choice([0.3, 1.0, 4.0]))
        y = rng.normal(size=(d, m)) * float(rng.choice([0.3, 1.0, 4.0]))
        for metric in ("wdtw", "ddtw", "wddtw", "adtw", "erp", "lcss", "msm"):
            kw = draw_params(rng, metric)
            if metric == "erp":
                # aeon puts the whole gap cost in every boundary cell: with g far from the
                # data, no best alignment starts with gaps and the conventions agree
                if n != m:
                    continue
                kw = {"g": 100.0}
            exp = aeon_value(metric, x, y, {k: v for k, v in kw.items() if k != "accumulated"},
                             window)
            tkw = dict(kw, accumulated=True) if metric == "ddtw" else kw
            got = tswarp.distance(x, y, metric=metric, layout="channels_first",
                                  **({} if window is None else {"window": window}), **tkw)
            assert math.isclose(got, exp, rel_tol=1e-9, abs_tol=1e-9), (
                f"seed={rng.seed} trial={trial} {metric} {kw} d={d} n={n} m={m} "
                f"window={window}: tswarp {got}, aeon {exp}")


def test_lcss_equals_tslearn(rng):
    ts = peer("tslearn.metrics")
    for trial in range(30):
        d = int(rng.integers(1, 4))
        a = rng.normal(size=(int(rng.integers(1, 30)), d))
        b = rng.normal(size=(int(rng.integers(1, 30)), d))
        eps = float(rng.uniform(0.1, 2))
        exp = 1.0 - ts.lcss(a, b, eps=eps)
        got = tswarp.lcss(a, b, epsilon=eps, layout="channels_last")
        assert math.isclose(got, exp, rel_tol=1e-12, abs_tol=1e-12), f"seed={rng.seed} {trial}"


def band_of(n, m, window):
    if window is None:
        return np.ones((n, m), dtype=bool)
    from aeon.distances.elastic._bounding_matrix import create_bounding_matrix
    return create_bounding_matrix(n, m, window)


def brute_erp(x, y, g, band):
    """Chen and Ng's ERP on the full matrix (points are rows)."""
    return brute_erp_matrix(x, y, g, band)[len(x), len(y)]


def brute_erp_matrix(x, y, g, band):
    """ERP's padded (n+1) x (m+1) matrix."""
    n, m = len(x), len(y)
    gx = np.sqrt(((x - g) ** 2).sum(1))
    gy = np.sqrt(((y - g) ** 2).sum(1))
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    D[1:, 0] = np.cumsum(gx)
    D[0, 1:] = np.cumsum(gy)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if band[i - 1, j - 1]:
                D[i, j] = min(D[i - 1, j - 1] + math.sqrt(((x[i - 1] - y[j - 1]) ** 2).sum()),
                              D[i - 1, j] + gx[i - 1], D[i, j - 1] + gy[j - 1])
    return D


def brute_edr(x, y, eps, band):
    """Chen, Ozsu and Oria's EDR on the full matrix, divided by max(n, m)."""
    return brute_edr_matrix(x, y, eps, band)[len(x), len(y)] / max(len(x), len(y))


def brute_edr_matrix(x, y, eps, band):
    """EDR's padded (n+1) x (m+1) matrix of edit counts."""
    n, m = len(x), len(y)
    D = np.full((n + 1, m + 1), np.inf)
    D[:, 0] = np.arange(n + 1)
    D[0, :] = np.arange(m + 1)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if band[i - 1, j - 1]:
                s = 0.0 if math.sqrt(((x[i - 1] - y[j - 1]) ** 2).sum()) < eps else 1.0
                D[i, j] = min(D[i - 1, j - 1] + s, D[i - 1, j] + 1, D[i, j - 1] + 1)
    return D


def test_erp_edr_equal_the_papers_recursions(rng):
    for trial in range(60):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(1, 25))
        m = n if rng.random() < 0.5 else int(rng.integers(1, 25))
        window = float(rng.choice([0.0, 0.2, 1.0])) if n == m and rng.random() < 0.6 else None
        x = rng.normal(size=(n, d))
        y = rng.normal(size=(m, d))
        band = band_of(n, m, window)
        wk = {} if window is None else {"window": window}
        g = float(rng.normal())
        got = tswarp.erp(x, y, g=g, layout="channels_last", **wk)
        exp = brute_erp(x, y, g, band)
        assert math.isclose(got, exp, rel_tol=1e-12, abs_tol=1e-12), (
            f"seed={rng.seed} trial={trial} erp n={n} m={m} d={d} g={g} window={window}")
        if rng.random() < 0.3:
            eps = max(float(np.std(x)), float(np.std(y))) / 4  # the automatic epsilon
            got = tswarp.edr(x, y, layout="channels_last", **wk)
        else:
            eps = float(rng.uniform(0.05, 2))
            got = tswarp.edr(x, y, epsilon=eps, layout="channels_last", **wk)
        exp = brute_edr(x, y, eps, band)
        assert math.isclose(got, exp, rel_tol=1e-12, abs_tol=1e-12), (
            f"seed={rng.seed} trial={trial} edr n={n} m={m} d={d} eps={eps} window={window}")


def test_erp_edr_boundary_conventions():
    """The documented difference from aeon 1.6: its ERP boundary holds the whole gap cost
    in every cell, its EDR boundary 0 (free leading gaps); tswarp follows the papers."""
    ad = peer("aeon.distances")
    a, b = np.array([1.0, 100.0]), np.array([100.0])
    assert tswarp.erp(a, b) == 1.0  # delete 1 (|1 - 0|), match 100 with 100
    assert ad.erp_distance(a, b) == 101.0
    a, b = np.array([5.0, 0.0, 1.0, 2.0]), np.array([0.0, 1.0, 2.0])
    assert tswarp.edr(a, b, epsilon=0.5) == 0.25  # one deletion of four points
    assert ad.edr_distance(a, b, epsilon=0.5) == 0.0


def draw_pair(rng, dtype, n=None, m=None, d=None):
    d = int(rng.integers(1, 4)) if d is None else d
    n = int(rng.integers(3, 60)) if n is None else n
    m = int(rng.integers(3, 60)) if m is None else m
    return (rng.normal(size=(n, d)).astype(dtype), rng.normal(size=(m, d)).astype(dtype))


def draw_window(rng):
    u = rng.random()
    if u < 0.3:
        return {}
    if u < 0.55:
        return {"window": float(rng.choice([0.0, 0.1, 0.5, 1.0]))}
    if u < 0.8:
        return {"radius": int(rng.integers(0, 8))}
    return {"itakura_max_slope": float(rng.choice([1.0, 1.5, 2.0, 3.0]))}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fast_kernel_equals_reference(rng, dtype):
    """cpu/family.c visits only the window's cells and precomputes per-point terms; its
    cells are the reference's, so the bits are the same."""
    for trial in range(40):
        a, b = draw_pair(rng, dtype)
        win = draw_window(rng)
        for metric in FAMILY:
            kw = dict(draw_params(rng, metric), **win)
            got = tswarp.distance(a, b, metric=metric, layout="channels_last", **kw)
            exp = tswarp.distance(a, b, metric=metric, layout="channels_last", _impl="reference",
                                  **kw)
            assert got == exp or (math.isinf(got) and math.isinf(exp)), (
                f"seed={rng.seed} trial={trial} {metric} {kw} n={len(a)} m={len(b)} "
                f"d={a.shape[1]} {dtype.__name__}: fast {got!r}, reference {exp!r}")


def test_float32_close_to_float64(rng):
    for trial in range(20):
        a, b = draw_pair(rng, np.float64)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        for metric in ("wdtw", "ddtw", "wddtw", "adtw", "erp", "msm"):
            kw = draw_params(rng, metric)
            v64 = tswarp.distance(a32.astype(np.float64), b32.astype(np.float64), metric=metric,
                                  layout="channels_last", **kw)
            v32 = tswarp.distance(a32, b32, metric=metric, layout="channels_last", **kw)
            assert math.isclose(v32, v64, rel_tol=2e-4, abs_tol=1e-4), (
                f"seed={rng.seed} trial={trial} {metric} {kw}: {v32} vs {v64}")


@pytest.mark.parametrize("metric", FAMILY)
def test_batches_equal_the_pair_function(rng, metric):
    d = int(rng.integers(1, 3))
    X = [rng.normal(size=(int(rng.integers(3, 25)), d)) for _ in range(7)]
    Y = [rng.normal(size=(int(rng.integers(3, 25)), d)) for _ in range(5)]
    kw = draw_params(rng, metric)
    pair = getattr(tswarp, metric)
    exp = np.array([[pair(x, y, layout="channels_last", **kw) for y in Y] for x in X])
    for n_jobs in (1, 2, 3):
        got = tswarp.cdist(X, Y, metric=metric, n_jobs=n_jobs, layout="channels_last", **kw)
        np.testing.assert_array_equal(got, exp, err_msg=f"seed={rng.seed} {kw} n_jobs={n_jobs}")
    P = tswarp.pdist(X, metric=metric, layout="channels_last", **kw)
    selfd = np.array([[pair(x, y, layout="channels_last", **kw) for y in X] for x in X])
    np.fill_diagonal(selfd, 0.0)
    np.testing.assert_array_equal(P, selfd, err_msg=f"seed={rng.seed} {kw} pdist")
    pr = tswarp.paired(X[:5], Y, metric=metric, layout="channels_last", **kw)
    np.testing.assert_array_equal(pr, np.diag(exp[:5]), err_msg=f"seed={rng.seed} {kw} paired")
    # knn: the top 3 of cdist, ties to the lower index, whatever the thread count
    k = 3
    for n_jobs in (1, 3):
        D, I = tswarp.knn(Y, X, k=k, metric=metric, n_jobs=n_jobs, layout="channels_last", **kw)
        full = exp.T
        order = np.argsort(full, axis=1, kind="stable")[:, :k]
        np.testing.assert_array_equal(I, order, err_msg=f"seed={rng.seed} {kw} knn")
        np.testing.assert_array_equal(D, np.take_along_axis(full, order, 1),
                                      err_msg=f"seed={rng.seed} {kw} knn")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lanes_equal_the_pair_function(rng, dtype):
    """Series of one length run in SIMD lanes across pairs (family_lanes.c), whose cells are
    family.c's: cdist, pdist and paired give the pair function's bits, for every measure,
    window, dim and parameters (MSM of several channels or dependent: one pair at a time)."""
    for trial in range(12):
        n = int(rng.integers(3, 40))
        m = n if trial % 3 else int(rng.integers(3, 40))
        d = int(rng.integers(1, 4))
        X = rng.normal(size=(11, n, d)).cumsum(1).astype(dtype)
        Y = rng.normal(size=(9, m, d)).cumsum(1).astype(dtype)
        win = draw_window(rng)
        for metric in FAMILY:
            kw = dict(draw_params(rng, metric), **win)
            pair = getattr(tswarp, metric)
            exp = np.array([[pair(x, y, layout="channels_last", **kw) for y in Y] for x in X])
            got = tswarp.cdist(X, Y, metric=metric, layout="channels_last", **kw)
            what = f"seed={rng.seed} trial={trial} {metric} {kw} n={n} m={m} d={d}"
            np.testing.assert_array_equal(got, exp.astype(got.dtype), err_msg=what)
            P = tswarp.pdist(X, metric=metric, layout="channels_last", **kw)
            selfd = np.array([[pair(x, y, layout="channels_last", **kw) for y in X] for x in X])
            np.fill_diagonal(selfd, 0.0)
            np.testing.assert_array_equal(P, selfd.astype(P.dtype), err_msg=what + " pdist")


def test_knn_abandoning_is_exact(rng):
    """The family's knn abandons rows above the k-th best: the same answer as the
    reference, which computes every pair in full, on series where most pairs abandon."""
    base = rng.normal(size=60).cumsum()
    X = np.stack([base + rng.normal(size=60) * s for s in rng.uniform(0.05, 3, 200)])
    Q = X[:6] + rng.normal(size=(6, 60)) * 0.1
    for metric in ("wdtw", "adtw", "erp", "edr", "msm", "ddtw", "wddtw"):
        kw = draw_params(rng, metric)
        D, I = tswarp.knn(Q, X, k=4, metric=metric, window=0.2, **kw)
        Dr, Ir = tswarp.knn(Q, X, k=4, metric=metric, window=0.2, _impl="reference", **kw)
        np.testing.assert_array_equal(I, Ir, err_msg=f"seed={rng.seed} {metric} {kw}")
        np.testing.assert_array_equal(D, Dr, err_msg=f"seed={rng.seed} {metric} {kw}")


def test_hand_values():
    assert tswarp.wdtw([0.0, 2.0], [0.0, 0.0], g=0.0) == 2.0  # w = 1/2 everywhere
    assert tswarp.adtw([0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0], warp_penalty=0.5) == 0.5
    assert tswarp.adtw([0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0], warp_penalty=0.0) == 0.0
    assert tswarp.ddtw([0.0, 1.0, 2.0, 3.0], [5.0, 6.0, 7.0, 8.0]) == 0.0
    assert tswarp.lcss([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 9.0], epsilon=0.5) == 0.25
    assert tswarp.msm([1.0, 2.0, 3.0], [1.0, 2.0, 2.0, 3.0]) == 1.0  # one split of 2
    assert tswarp.msm([1.0, 2.0, 3.0], [1.0, 2.0, 2.0, 3.0], c=0.25) == 0.25
    assert tswarp.erp([1.0, 2.0], [1.0, 2.0], g=7.0) == 0.0
    # an empty window: no alignment, +inf (LCSS: no common points, 1)
    assert math.isinf(tswarp.wdtw(np.zeros(3), np.zeros(9), itakura_max_slope=1.0))
    assert tswarp.lcss(np.zeros(3), np.zeros(9), itakura_max_slope=1.0) == 1.0


@pytest.mark.parametrize("metric,kw,match", [
    ("wdtw", {"g": -1.0}, "g must be"),
    ("wdtw", {"g": float("nan")}, "g must be"),
    ("adtw", {"warp_penalty": -0.1}, "warp_penalty"),
    ("erp", {"g": float("inf")}, "g must be"),
    ("edr", {"epsilon": -1.0}, "epsilon"),
    ("lcss", {"epsilon": float("nan")}, "epsilon"),
    ("msm", {"c": -2.0}, "c must be"),
])
def test_bad_parameters(metric, kw, match):
    with pytest.raises(ValueError, match=match):
        tswarp.distance([0.0, 1.0, 2.0], [0.0, 1.0], metric=metric, **kw)
    with pytest.raises(ValueError, match=match):
        tswarp.cdist([[0.0, 1.0, 2.0]], metric=metric, **kw)


def test_bad_input():
    with pytest.raises(TypeError, match="independent must be a bool"):
        tswarp.msm([0.0, 1.0], [0.0], independent=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'epsilon'"):
        tswarp.wdtw([0.0, 1.0], [0.0], epsilon=1.0)
    with pytest.raises(TypeError, match="'epsilon' is not a parameter of metric 'wdtw'"):
        tswarp.distance([0.0, 1.0], [0.0], metric="wdtw", epsilon=1.0)
    with pytest.raises(TypeError, match="'g' is not a parameter of metric 'msm'"):
        tswarp.cdist([[0.0, 1.0]], metric="msm", g=1.0)
    with pytest.raises(TypeError):
        tswarp.lcss([0.0, 1.0], [0.0], epsilon=None)  # None means automatic for EDR only
    with pytest.raises(ValueError, match="at least 3"):
        tswarp.ddtw([0.0, 1.0], [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="at least 3"):
        tswarp.cdist([[0.0, 1.0, 2.0], [0.0, 1.0]], metric="wddtw")
    with pytest.raises(ValueError, match="NaN|finite"):
        tswarp.erp([0.0, float("nan")], [0.0])
    with pytest.raises(ValueError):
        tswarp.edr([], [0.0])
    with pytest.raises(ValueError, match="metric must be one of"):
        tswarp.cdist([[0.0]], metric="erp2")


def test_device_cuda_without_a_gpu_is_a_clear_error():
    """The family runs on the GPU (tests/python/test_gpu_family.py holds it to the CPU);
    without one, device='cuda' is NoDeviceError naming the device."""
    info = tswarp.info()
    if info["cuda_built"] and info["cuda_devices"] > 0:
        pytest.skip("a CUDA GPU is present: test_gpu_family.py runs the family there")
    for metric in FAMILY:
        with pytest.raises(tswarp.NoDeviceError, match="device='cuda'"):
            tswarp.distance([0.0, 1.0, 2.0], [0.0, 2.0, 1.0], metric=metric, device="cuda")
        with pytest.raises(tswarp.NoDeviceError, match="device='cuda'"):
            tswarp.cdist([[0.0, 1.0, 2.0]], metric=metric, device="cuda")
    # auto runs small work on the CPU
    assert tswarp.msm([0.0, 1.0], [0.0, 1.0], device="auto") == 0.0


def test_estimator_takes_the_family(rng):
    peer("sklearn")
    from tswarp.neighbors import KNeighborsTimeSeriesClassifier

    X = rng.normal(size=(24, 20)).cumsum(1)
    y = np.arange(24) % 3
    Xt = X[:9] + rng.normal(size=(9, 20)) * 0.5
    for metric, params in (("msm", {"c": 0.5}), ("erp", {"g": 0.2}), ("wddtw", {"g": 0.1})):
        clf = KNeighborsTimeSeriesClassifier(n_neighbors=1, metric=metric,
                                             metric_params=params).fit(X, y)
        D = tswarp.cdist(Xt, X, metric=metric, **params)
        np.testing.assert_array_equal(clf.predict(Xt), y[np.argmin(D, axis=1)],
                                      err_msg=f"seed={rng.seed} {metric}")


def test_alignment_path_equals_aeon(rng):
    """tswarp.alignment_path against aeon's <metric>_alignment_path (the same path; the value
    tswarp.distance's), random inputs, lengths, dims, parameters and windows (equal lengths;
    none for LCSS, whose aeon rule loops for ever on a cell outside the window)."""
    ad = peer("aeon.distances")
    fns = {"wdtw": ad.wdtw_alignment_path, "ddtw": ad.ddtw_alignment_path,
           "wddtw": ad.wddtw_alignment_path, "adtw": ad.adtw_alignment_path,
           "lcss": ad.lcss_alignment_path, "msm": ad.msm_alignment_path}
    for trial in range(60):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(3, 30))
        m = n if rng.random() < 0.5 else int(rng.integers(3, 30))
        x = rng.normal(size=(d, n)) * float(rng.choice([0.3, 1.0, 4.0]))
        y = rng.normal(size=(d, m)) * float(rng.choice([0.3, 1.0, 4.0]))
        for metric, fn in fns.items():
            kw = {k: v for k, v in draw_params(rng, metric).items() if k != "accumulated"}
            window = (float(rng.choice([0.1, 0.3, 1.0]))
                      if n == m and metric != "lcss" and rng.random() < 0.5 else None)
            w = {} if window is None else {"window": window}
            exp_path, _ = fn(x, y, **kw, **w)
            path, value = tswarp.alignment_path(x, y, metric, layout="channels_first", **kw, **w)
            ctx = f"seed={rng.seed} trial={trial} {metric} {kw} d={d} n={n} m={m} {w}"
            assert path.dtype == np.int64 and path.shape == (len(exp_path), 2), ctx
            assert [tuple(p) for p in path.tolist()] == list(exp_path), ctx
            assert value == tswarp.distance(x, y, metric=metric, layout="channels_first",
                                            **kw, **w), ctx


def test_alignment_path_twed_equals_aeon(rng):
    """TWED's path against aeon's twe_alignment_path (default timestamps), windows too; with
    timestamps, the value is twed()'s and the path runs from (0, 0) to the last cell."""
    ad = peer("aeon.distances")
    for trial in range(60):
        d, n = int(rng.integers(1, 3)), int(rng.integers(2, 25))
        m = n if rng.random() < 0.5 else int(rng.integers(2, 25))
        x, y = rng.normal(size=(d, n)), rng.normal(size=(d, m))
        kw = {"nu": float(rng.uniform(0, 1)), "lmbda": float(rng.uniform(0, 2))}
        if n == m and rng.random() < 0.4:
            kw["window"] = float(rng.choice([0.2, 0.5, 1.0]))
        exp, _ = ad.twe_alignment_path(x, y, **kw)
        path, value = tswarp.alignment_path(x, y, "twed", layout="channels_first", **kw)
        ctx = f"seed={rng.seed} trial={trial} n={n} m={m} {kw}"
        assert [tuple(p) for p in path.tolist()] == list(exp), ctx
        assert value == tswarp.twed(x, y, layout="channels_first", **kw), ctx
    a, b = rng.normal(size=8), rng.normal(size=6)
    ta, tb = np.cumsum(rng.uniform(0.5, 2, 8)), np.cumsum(rng.uniform(0.5, 2, 6))
    path, value = tswarp.alignment_path(a, b, "twed", ta=ta, tb=tb, nu=0.5)
    assert value == tswarp.twed(a, b, ta=ta, tb=tb, nu=0.5)
    assert path[0].tolist() == [0, 0] and path[-1].tolist() == [7, 5]
    with pytest.raises(ValueError, match="ta"):
        tswarp.alignment_path(a, b, "twed", ta=ta[::-1])


def test_alignment_path_erp_edr_follow_the_papers_matrices(rng):
    """ERP and EDR (whose boundaries differ from aeon 1.6: test_erp_edr_boundary_conventions):
    the path equals aeon's min-return rule (compute_min_return_path) on the papers' matrix."""
    from aeon.distances.elastic._alignment_paths import compute_min_return_path
    for trial in range(40):
        d = int(rng.integers(1, 3))
        n, m = int(rng.integers(2, 25)), int(rng.integers(2, 25))
        a, b = rng.normal(size=(n, d)), rng.normal(size=(m, d))
        band = band_of(n, m, None)
        g = float(rng.normal())
        D = brute_erp_matrix(a, b, g, band)
        path, _ = tswarp.alignment_path(a, b, "erp", g=g, layout="channels_last")
        assert [tuple(p) for p in path.tolist()] == compute_min_return_path(D[1:, 1:]), (
            f"seed={rng.seed} trial={trial} erp")
        eps = float(rng.uniform(0.2, 1.5))
        D = brute_edr_matrix(a, b, eps, band)
        path, _ = tswarp.alignment_path(a, b, "edr", epsilon=eps, layout="channels_last")
        assert [tuple(p) for p in path.tolist()] == compute_min_return_path(D[1:, 1:]), (
            f"seed={rng.seed} trial={trial} edr")


def test_alignment_path_bad_input():
    a, b = np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0])
    with pytest.raises(ValueError, match="dtw_path"):
        tswarp.alignment_path(a, b, "dtw")
    with pytest.raises(ValueError, match="metric"):
        tswarp.alignment_path(a, b, "nope")
    with pytest.raises(ValueError, match="NaN"):
        tswarp.alignment_path(np.array([0.0, np.nan, 1.0]), b, "msm")
    with pytest.raises(TypeError, match="epsilon"):
        tswarp.alignment_path(a, b, "erp", epsilon=1.0)  # not an ERP parameter
    with pytest.raises(ValueError):
        tswarp.alignment_path(a, b, "msm", c=-1.0)
    with pytest.raises((ValueError, NotImplementedError)):
        tswarp.alignment_path(a, b, "msm", device="cuda")
    path, value = tswarp.alignment_path(a, np.array([50.0]), "lcss", epsilon=0.5)
    assert path.shape == (0, 2) and value == 1.0  # nothing matches: an empty path

