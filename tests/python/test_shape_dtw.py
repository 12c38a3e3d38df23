"""Shape DTW (TSW_SHAPE_DTW): equal to aeon's shape_dtw_distance (identity descriptor; the
PAA descriptor through aeon's precomputed transforms, made by tslearn's PAA), in every
batch entry point bit for bit with the pair function, and its bad input."""
import math

import numpy as np
import pytest

import tswarp
from conftest import outputs_by_simd_level, peer


def aeon_shape(x, y, reach, window=None, paa=None):
    """aeon's value for channels-first x, y; paa: tslearn's PAA of every padded
    neighbourhood, given to aeon as its precomputed transform."""
    ad = peer("aeon.distances")
    w = {} if window is None else {"window": window}
    if paa is None:
        return ad.shape_dtw_distance(x, y, reach=reach, **w)
    from aeon.distances.elastic._shape_dtw import _pad_ts_edges
    PAA = peer("tslearn.piecewise").PiecewiseAggregateApproximation
    width = 2 * reach + 1

    def describe(z):
        zp = _pad_ts_edges(z, reach)
        out = np.zeros((z.shape[0] * paa, z.shape[1]))
        for i in range(z.shape[1]):
            for c in range(z.shape[0]):
                seg = PAA(n_segments=paa).fit_transform(zp[c, i:i + width][None, :, None])
                out[c * paa:(c + 1) * paa, i] = seg[0, :, 0]
        return out

    return ad.shape_dtw_distance(x, y, reach=reach, transformation_precomputed=True,
                                 transformed_x=describe(x), transformed_y=describe(y), **w)


def test_shape_dtw_equals_aeon(rng):
    for trial in range(150):
        d = int(rng.integers(1, 4))
        n = int(rng.integers(1, 40))
        m = n if trial % 2 else int(rng.integers(1, 40))
        # (windows on equal lengths: tswarp's fraction of unequal lengths is not aeon's)
        window = float(rng.choice([0.0, 0.1, 0.3, 1.0])) if n == m and rng.random() < 0.7 else None
        reach = int(rng.choice([0, 1, 2, 5, 15]))
        x = rng.normal(size=(d, n)).cumsum(1) * float(rng.choice([0.3, 1.0, 4.0]))
        y = rng.normal(size=(d, m)).cumsum(1) * float(rng.choice([0.3, 1.0, 4.0]))
        kw = {} if window is None else {"window": window}
        exp = aeon_shape(x, y, reach, window)
        got = tswarp.shape_dtw(x, y, reach=reach, layout="channels_first", **kw)
        assert math.isclose(got, exp, rel_tol=1e-9, abs_tol=1e-9), (
            f"seed={rng.seed} trial={trial} n={n} m={m} d={d} reach={reach} window={window}: "
            f"tswarp {got!r}, aeon {exp!r}")
    # the default reach, and aeon's docstring example
    x = rng.normal(size=(2, 50)).cumsum(1)
    y = rng.normal(size=(2, 44)).cumsum(1)
    assert math.isclose(tswarp.shape_dtw(x, y, layout="channels_first"), aeon_shape(x, y, 15),
                        rel_tol=1e-9), f"seed={rng.seed}"
    assert tswarp.shape_dtw(np.arange(1.0, 11), np.arange(11.0, 21)) == 1000.0


def test_shape_dtw_paa_equals_aeon_with_tslearn_paa(rng):
    for trial in range(40):
        d = int(rng.integers(1, 3))
        n, m = (int(v) for v in rng.integers(1, 25, 2))
        reach = int(rng.integers(0, 6))
        segs = int(rng.integers(1, 2 * reach + 2))
        x = rng.normal(size=(d, n)).cumsum(1)
        y = rng.normal(size=(d, m)).cumsum(1)
        exp = aeon_shape(x, y, reach, paa=segs)
        got = tswarp.shape_dtw(x, y, reach=reach, descriptor="paa", paa_segments=segs,
                               layout="channels_first")
        assert math.isclose(got, exp, rel_tol=1e-9, abs_tol=1e-9), (
            f"seed={rng.seed} trial={trial} n={n} m={m} reach={reach} segments={segs}: "
            f"tswarp {got!r}, aeon {exp!r}")
    # the default of 5 segments, cut to the neighbourhood's 2 reach + 1 points
    x, y = rng.normal(size=(2, 20)).cumsum(1)
    assert tswarp.shape_dtw(x, y, reach=1, descriptor="paa") == tswarp.shape_dtw(
        x, y, reach=1, descriptor="paa", paa_segments=3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_shape_dtw_batches_equal_the_pair_function(rng, dtype):
    X = [rng.normal(size=(int(rng.integers(3, 30)), 2)).cumsum(0).astype(dtype) for _ in range(7)]
    Y = [rng.normal(size=(int(rng.integers(3, 30)), 2)).cumsum(0).astype(dtype) for _ in range(5)]
    for kw in ({}, {"reach": 3, "radius": 4}, {"reach": 2, "descriptor": "paa", "paa_segments": 2}):
        exp = np.array([[tswarp.shape_dtw(x, y, layout="channels_last", **kw) for y in Y]
                        for x in X])
        for n_jobs in (1, 3):
            got = tswarp.cdist(X, Y, metric="shape_dtw", n_jobs=n_jobs, layout="channels_last",
                               **kw)
            np.testing.assert_array_equal(got, exp.astype(got.dtype),
                                          err_msg=f"seed={rng.seed} {kw}")
        P = tswarp.pdist(X, metric="shape_dtw", layout="channels_last", **kw)
        selfd = np.array([[tswarp.shape_dtw(x, y, layout="channels_last", **kw) for y in X]
                          for x in X])
        np.fill_diagonal(selfd, 0.0)
        np.testing.assert_array_equal(P, selfd.astype(P.dtype), err_msg=f"seed={rng.seed} {kw}")
        pr = tswarp.paired(X[:5], Y, metric="shape_dtw", layout="channels_last", **kw)
        np.testing.assert_array_equal(pr, np.diag(exp[:5]).astype(pr.dtype))
        D, I = tswarp.knn(Y, X, k=3, metric="shape_dtw", layout="channels_last", **kw)
        order = np.argsort(exp.T, axis=1, kind="stable")[:, :3]
        np.testing.assert_array_equal(I, order, err_msg=f"seed={rng.seed} {kw} knn")
        np.testing.assert_array_equal(D, np.take_along_axis(exp.T, order, 1).astype(D.dtype))
    if dtype == np.float32:  # computed in double, rounded once: close to the float64 value
        a, b = X[0].astype(np.float64), Y[0].astype(np.float64)
        assert math.isclose(tswarp.shape_dtw(X[0], Y[0], layout="channels_last"),
                            tswarp.shape_dtw(a, b, layout="channels_last"), rel_tol=1e-6)


def _fast_vs_reference_cases(rng, count):
    """Random pairs and parameters: lengths 1-90 (beyond a 16-cell block and its tail), dims
    1-3, both descriptors, every kind of window (radius, fraction, Itakura, none)."""
    for trial in range(count):
        d = int(rng.integers(1, 4))
        n, m = (int(v) for v in rng.integers(1, 90, 2))
        dtype = np.float32 if trial % 3 == 0 else np.float64
        a = (rng.normal(size=(n, d)).cumsum(0) * float(rng.choice([0.01, 1.0, 300.0])))
        b = (rng.normal(size=(m, d)).cumsum(0) * float(rng.choice([0.01, 1.0, 300.0])))
        if trial % 7 == 0:  # integer values: exact ties between the trace's candidates
            a, b = np.round(a), np.round(b)
        reach = int(rng.choice([0, 1, 3, 8, 15, 40]))
        kw = {"reach": reach}
        if rng.random() < 0.4:
            kw.update(descriptor="paa", paa_segments=int(rng.integers(1, 2 * reach + 2)))
        win = int(rng.integers(0, 4))
        if win == 1:
            kw["radius"] = int(rng.integers(0, 12))
        elif win == 2:
            kw["window"] = float(rng.choice([0.05, 0.3, 0.77]))
        elif win == 3:
            kw["itakura_max_slope"] = float(rng.choice([1.5, 2.0, 4.0]))
        yield trial, a.astype(dtype), b.astype(dtype), kw


def test_shape_dtw_fast_kernel_equals_reference(rng):
    """cpu/shape_dtw_impl.h's ring of squared-difference rows sums every cell's taps in the
    reference's order: the same matrix, path and value bit for bit (this process' SIMD
    level; the next test covers the other)."""
    for trial, a, b, kw in _fast_vs_reference_cases(rng, 120):
        got = tswarp.distance(a, b, metric="shape_dtw", layout="channels_last", **kw)
        exp = tswarp.distance(a, b, metric="shape_dtw", layout="channels_last",
                              _impl="reference", **kw)
        assert got == exp, (f"seed={rng.seed} trial={trial} n={len(a)} m={len(b)} "
                            f"d={a.shape[1]} {a.dtype} {kw}: fast {got!r}, reference {exp!r}")
    X = [rng.normal(size=int(rng.integers(20, 70))).cumsum() for _ in range(6)]
    for kw in ({"reach": 4}, {"reach": 5, "window": 0.2}):
        np.testing.assert_array_equal(
            tswarp.pdist(X, metric="shape_dtw", **kw),
            tswarp.pdist(X, metric="shape_dtw", _impl="reference", **kw),
            err_msg=f"seed={rng.seed} {kw}")


def test_shape_dtw_same_bits_on_every_simd_level(rng, tmp_path):
    """The fast fill runs as AVX2 or baseline code by the CPU (TSWARP_SIMD caps it): both
    give the reference's bits."""
    cases = list(_fast_vs_reference_cases(rng, 30))
    np.save(tmp_path / "cases.npy", np.array([(a, b, kw) for _, a, b, kw in cases],
                                             dtype=object), allow_pickle=True)
    code = ("import numpy as np, tswarp\n"
            f"cases = np.load({str(tmp_path / 'cases.npy')!r}, allow_pickle=True)\n"
            "out = [tswarp.distance(a, b, metric='shape_dtw', layout='channels_last', **kw)"
            " for a, b, kw in cases]\n"
            "print(tswarp.info()['simd'], np.array(out).tobytes().hex())\n")
    outs = outputs_by_simd_level(code, ("", "sse2", "scalar"))
    ref = np.array([tswarp.distance(a, b, metric="shape_dtw", layout="channels_last",
                                    _impl="reference", **kw) for _, a, b, kw in cases])
    assert "sse2" in outs, outs
    for level, hexes in outs.items():
        assert hexes.strip() == ref.tobytes().hex(), f"seed={rng.seed} level={level}"


def test_shape_dtw_bad_input(rng):
    a, b = rng.normal(size=20), rng.normal(size=25)
    for bad, exc in ((-1, ValueError), (100001, ValueError), (1.0, TypeError),
                     (True, TypeError), ("3", TypeError)):
        with pytest.raises(exc, match="reach"):
            tswarp.shape_dtw(a, b, reach=bad)
    with pytest.raises(ValueError, match="descriptor"):
        tswarp.shape_dtw(a, b, descriptor="sax")
    with pytest.raises(ValueError, match="paa_segments"):
        tswarp.shape_dtw(a, b, reach=2, descriptor="paa", paa_segments=6)
    with pytest.raises(ValueError, match="paa_segments"):
        tswarp.shape_dtw(a, b, reach=2, descriptor="paa", paa_segments=0)
    with pytest.raises(TypeError, match="paa_segments"):
        tswarp.shape_dtw(a, b, paa_segments=3)
    with pytest.raises(TypeError, match="not a parameter of metric 'shape_dtw'"):
        tswarp.cdist([a], [b], metric="shape_dtw", g=1.0)
    with pytest.raises(TypeError, match="not a parameter of metric 'dtw'"):
        tswarp.cdist([a], [b], reach=3)
    with pytest.raises(ValueError, match="NaN"):
        tswarp.shape_dtw(np.array([1.0, np.nan, 2.0]), b)
    info = tswarp.info()
    if info["cuda_built"] and info["cuda_devices"] > 0:  # the GPU kernel: the CPU's value
        assert tswarp.shape_dtw(a, b, device="cuda") == tswarp.shape_dtw(a, b, device="cpu")
    else:  # no GPU to run it on: a clear error, not the CPU behind the caller's back
        with pytest.raises(ValueError):
            tswarp.shape_dtw(a, b, device="cuda")
    # a window that admits no alignment: +inf, as the other measures
    assert tswarp.shape_dtw(a[:5], b, itakura_max_slope=1.0) == math.inf


def test_shape_dtw_alignment_path_equals_aeon(rng):
    """aeon's shape_dtw_alignment_path: the min-return path of the descriptors' DTW matrix,
    and the shape DTW value."""
    ad = peer("aeon.distances")
    for trial in range(60):
        n, m = (int(v) for v in rng.integers(1, 30, 2))
        d = int(rng.integers(1, 3))
        reach = int(rng.integers(0, 6))
        x = rng.normal(size=(d, n)).cumsum(1)
        y = rng.normal(size=(d, m)).cumsum(1)
        pa, va = ad.shape_dtw_alignment_path(x, y, reach=reach)
        pt, vt = tswarp.alignment_path(x, y, "shape_dtw", reach=reach, layout="channels_first")
        what = f"seed={rng.seed} trial={trial} n={n} m={m} d={d} reach={reach}"
        assert [tuple(p) for p in np.asarray(pt).tolist()] == [tuple(p) for p in pa], what
        assert math.isclose(vt, va, rel_tol=1e-9, abs_tol=1e-9), what
        assert vt == tswarp.shape_dtw(x, y, reach=reach, layout="channels_first"), what
