"""tswarp.soft_dtw_grad: values and gradients against tslearn, finite differences, a plain
numpy reference for bands with unequal lengths, float32 vs float64, extreme gamma, the
divergence, and batches against per-pair calls."""

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)
from conftest import peer


def numpy_sdtw(a, b, gamma, radius=None):
    """Plain soft-DTW value (Cuturi and Blondel, Algorithm 1) with tslearn's band rule."""
    a, b = np.atleast_2d(a.T).T, np.atleast_2d(b.T).T
    n, m = len(a), len(b)
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if radius is not None and not (
                    -radius - max(0, n - m) <= (j - 1) - (i - 1) <= radius + max(0, m - n)):
                continue
            r = np.array([R[i - 1, j - 1], R[i - 1, j], R[i, j - 1]])
            lo = r.min()
            s = lo - gamma * np.log(np.exp(-(r - lo) / gamma).sum())
            R[i, j] = ((a[i - 1] - b[j - 1]) ** 2).sum() + s
    return R[n, m]


def tslearn_value_grad(a, b, gamma):
    metrics = peer("tslearn.metrics")
    D = metrics.SquaredEuclidean(a, b)
    sdtw = metrics.SoftDTW(D, gamma=gamma)
    value = sdtw.compute()
    E = sdtw.grad()
    return value, D.jacobian_product(E), metrics.SquaredEuclidean(b, a).jacobian_product(E.T)


@pytest.mark.parametrize("gamma", [0.01, 0.1, 1.0, 10.0])
def test_equals_tslearn(rng, gamma):
    n, m, d = rng.integers(5, 40), rng.integers(5, 40), rng.integers(1, 4)
    a, b = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    v, ga, gb = tswarp.soft_dtw_grad(a, b, gamma=gamma)
    vt, gat, gbt = tslearn_value_grad(a, b, gamma)
    assert v == pytest.approx(vt, rel=1e-10, abs=1e-10), rng.seed
    np.testing.assert_allclose(ga, gat, rtol=1e-8, atol=1e-10, err_msg=f"seed {rng.seed}")
    np.testing.assert_allclose(gb, gbt, rtol=1e-8, atol=1e-10, err_msg=f"seed {rng.seed}")
    metrics = peer("tslearn.metrics")
    assert v == pytest.approx(metrics.soft_dtw(a, b, gamma=gamma), rel=1e-10)


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("band", [{}, {"radius": 2}, {"window": 0.3},
                                  {"itakura_max_slope": 2.0}], ids=["none", "r2", "f0.3", "ita"])
def test_finite_differences(rng, normalize, band):
    a, b = rng.standard_normal((12, 2)), rng.standard_normal((9, 2))
    v, ga, gb = tswarp.soft_dtw_grad(a, b, gamma=0.5, normalize=normalize, **band)
    assert v == pytest.approx(tswarp.soft_dtw(a, b, gamma=0.5, normalize=normalize, **band),
                              rel=1e-12), rng.seed
    h = 1e-6
    for arr, g in ((a, ga), (b, gb)):
        for _ in range(5):
            idx = tuple(rng.integers(s) for s in arr.shape)
            keep = arr[idx]
            arr[idx] = keep + h
            vp = tswarp.soft_dtw_grad(a, b, gamma=0.5, normalize=normalize, **band)[0]
            arr[idx] = keep - h
            vm = tswarp.soft_dtw_grad(a, b, gamma=0.5, normalize=normalize, **band)[0]
            arr[idx] = keep
            assert (vp - vm) / (2 * h) == pytest.approx(g[idx], rel=1e-5, abs=1e-6), rng.seed


@pytest.mark.parametrize("radius", [0, 1, 3])
def test_band_unequal_lengths_numpy_reference(rng, radius):
    n, m = 11, 17
    if rng.integers(2):
        n, m = m, n
    a, b = rng.standard_normal(n), rng.standard_normal(m)
    v = tswarp.soft_dtw_grad(a, b, gamma=0.3, radius=radius)[0]
    assert np.isfinite(v)
    assert v == pytest.approx(numpy_sdtw(a, b, 0.3, radius), rel=1e-10), rng.seed
    assert v == pytest.approx(tswarp.soft_dtw(a, b, gamma=0.3, radius=radius), rel=1e-12)


def test_divergence(rng):
    a, b = rng.standard_normal((20, 3)), rng.standard_normal((15, 3))
    v, ga, gb = tswarp.soft_dtw_grad(a, b, gamma=1.0, normalize=True)
    vab, vaa, vbb = (tswarp.soft_dtw(p, q, gamma=1.0) for p, q in ((a, b), (a, a), (b, b)))
    assert v == pytest.approx(vab - 0.5 * (vaa + vbb), rel=1e-10)
    assert v >= 0
    v0, g0, h0 = tswarp.soft_dtw_grad(a, a, gamma=1.0, normalize=True)
    assert v0 == pytest.approx(0, abs=1e-9)
    np.testing.assert_allclose(g0 + h0, 0, atol=1e-9)  # d/da of div(a, a) (both arguments)


@pytest.mark.parametrize("gamma", [1e-4, 1e3])
def test_extreme_gamma_finite(rng, gamma):
    for dt in (np.float32, np.float64):
        a = (rng.standard_normal((64, 2)) * 10).astype(dt)
        b = (rng.standard_normal((50, 2)) * 10).astype(dt)
        for normalize in (False, True):
            v, ga, gb = tswarp.soft_dtw_grad(a, b, gamma=gamma, normalize=normalize)
            assert np.isfinite(v) and np.isfinite(ga).all() and np.isfinite(gb).all()
            assert ga.dtype == dt


@pytest.mark.parametrize("gamma", [1e-4, 1e-2, 1.0, 1e3])
def test_float32_close_to_float64(rng, gamma):
    # the CPU computes float32 inputs in float64: 1e-4 over the whole range of gamma
    a = rng.standard_normal((100, 2)).astype(np.float32)
    b = rng.standard_normal((80, 2)).astype(np.float32)
    v32, g32, h32 = tswarp.soft_dtw_grad(a, b, gamma=gamma, radius=30)
    v64, g64, h64 = tswarp.soft_dtw_grad(a.astype(np.float64), b.astype(np.float64),
                                         gamma=gamma, radius=30)
    assert g32.dtype == np.float32
    assert v32 == pytest.approx(v64, rel=1e-4)
    scale = max(np.abs(g64).max(), np.abs(h64).max())
    assert np.abs(g32 - g64).max() <= 1e-4 * scale, rng.seed
    assert np.abs(h32 - h64).max() <= 1e-4 * scale, rng.seed


def test_batch_equals_pairs(rng):
    A, B = rng.standard_normal((7, 30, 2)), rng.standard_normal((7, 22, 2))
    v, ga, gb = tswarp.soft_dtw_grad(A, B, gamma=0.7, radius=5, normalize=True)
    assert v.shape == (7,) and ga.shape == A.shape and gb.shape == B.shape
    for k in range(7):
        vk, gak, gbk = tswarp.soft_dtw_grad(A[k], B[k], gamma=0.7, radius=5, normalize=True)
        assert v[k] == pytest.approx(vk, rel=1e-12)
        np.testing.assert_allclose(ga[k], gak, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gb[k], gbk, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v, tswarp.paired(A, B, metric="soft_dtw", gamma=0.7, radius=5,
                                                normalize=True), rtol=1e-12)


def test_long_series_and_memory_error():
    # N = M = 8,192 is memory permitting (512 MiB here, float64); a too large request is a
    # MemoryError stating the bytes
    a = np.zeros(3_000_000)
    with pytest.raises(MemoryError, match="bytes"):
        tswarp.soft_dtw_grad(a, a[:2_000_000], gamma=1.0)


def test_bad_input():
    a = np.zeros((5, 2))
    with pytest.raises(ValueError, match="gamma"):
        tswarp.soft_dtw_grad(a, a, gamma=0)
    with pytest.raises(TypeError, match="gamma"):
        tswarp.soft_dtw_grad(a, a, gamma="1")
    with pytest.raises(ValueError, match="window"):
        tswarp.soft_dtw_grad(a, a, window=-1)
    with pytest.raises(ValueError, match="radius=3"):  # a window is a fraction
        tswarp.soft_dtw_grad(a, a, window=3)
    with pytest.raises(ValueError, match="at most one"):
        tswarp.soft_dtw_grad(a, a, radius=3, itakura_max_slope=2.0)
    with pytest.raises(TypeError, match="normalize"):
        tswarp.soft_dtw_grad(a, a, normalize="False")
    with pytest.raises(ValueError, match="dimensions"):
        tswarp.soft_dtw_grad(a, np.zeros((5, 3)))
    bad = a.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="b contains NaN"):
        tswarp.soft_dtw_grad(a, bad)
    with pytest.raises(ValueError, match="empty"):
        tswarp.soft_dtw_grad(np.zeros((0, 2)), a)


@pytest.mark.parametrize("d", [1, 3, 70])
def test_matrix_form_equals_fused_kernel(rng, monkeypatch, d):
    """soft_dtw_grad's CPU matrix form (the costs by numpy's BLAS, the C cost-matrix kernel,
    the gradients by products: _sdtw._matrix_grad; TSWARP_SDTW_MAT=1) against the fused C
    kernel in float64 (=0) on the same values: random pairs and batches, unequal lengths,
    every window kind, the divergence, float32 and float64 inputs (the matrix form computes
    in float64 and rounds once: within 1e-9, and float32's rounding, of the reference)."""
    for trial in range(12):
        dt = np.float32 if rng.random() < 0.3 else np.float64
        count, n, m = int(rng.integers(1, 5)), int(rng.integers(2, 40)), int(rng.integers(2, 40))
        a = rng.normal(size=(count, n, d)).astype(dt)
        b = rng.normal(size=(count, m, d)).astype(dt)
        kw = {"gamma": float(rng.choice([0.01, 0.1, 1.0, 10.0])),
              "normalize": bool(rng.random() < 0.3), "layout": "channels_last"}
        w = int(rng.integers(0, 4))
        if w == 1:
            kw["radius"] = int(rng.integers(0, 8))
        elif w == 2:
            kw["window"] = float(rng.uniform(0, 1))
        elif w == 3:
            kw["itakura_max_slope"] = float(rng.uniform(1, 3))
        monkeypatch.setenv("TSWARP_SDTW_MAT", "0")
        v0, ga0, gb0 = tswarp.soft_dtw_grad(a.astype(np.float64), b.astype(np.float64), **kw)
        monkeypatch.setenv("TSWARP_SDTW_MAT", "1")
        v1, ga1, gb1 = tswarp.soft_dtw_grad(a, b, **kw)
        ctx = f"seed={rng.seed} trial={trial} d={d} {dt.__name__} n={n} m={m} {kw}"
        assert v1.dtype == dt and ga1.dtype == dt and gb1.dtype == dt, ctx
        tol = 1e-9 if dt == np.float64 else 2e-7
        fin = np.isfinite(v0)
        assert (np.isfinite(v1) == fin).all(), ctx
        np.testing.assert_allclose(v1[fin], v0[fin], rtol=tol, atol=tol, err_msg=ctx)
        for g0, g1 in ((ga0, ga1), (gb0, gb1)):
            scale = max(1.0, float(np.abs(g0[fin]).max(initial=0)))
            np.testing.assert_allclose(g1[fin], g0[fin], rtol=0, atol=tol * scale, err_msg=ctx)
