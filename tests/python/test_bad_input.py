"""Bad input: each mistake raises the right exception type with a message that names the
argument or the problem, and unusual but valid memory layouts compute the right value.

Values and shapes -> ValueError, non-numeric dtypes -> TypeError, unknown keywords ->
TypeError (as Python does), a CUDA request without CUDA -> tswarp.NoDeviceError, which is
a ValueError.
"""

import numpy as np
import pytest

import tswarp

PAIR_FUNCS = {"dtw": tswarp.dtw, "twed": tswarp.twed, "soft_dtw": tswarp.soft_dtw}
METRICS = list(PAIR_FUNCS)


@pytest.fixture
def pair(rng):
    return rng.normal(size=(12, 2)), rng.normal(size=(9, 2))


@pytest.fixture
def coll(rng):
    return rng.normal(size=(5, 10, 2)), [rng.normal(size=(k, 2)) for k in (4, 7, 9)]


def batch_calls(metric, X, Y=None, **kw):
    """cdist and pdist calls on X (and Y) as zero-argument callables."""
    calls = [lambda: tswarp.cdist(X, Y, metric=metric, **kw)]
    if Y is None:
        calls.append(lambda: tswarp.pdist(X, metric=metric, **kw))
    return calls


# ---------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_values(metric, bad, pair, coll):
    a, b = pair
    f = PAIR_FUNCS[metric]
    for which in ("a", "b"):
        aa, bb = a.copy(), b.copy()
        (aa if which == "a" else bb)[3, 1] = bad
        with pytest.raises(ValueError, match=r"(?i)nan|inf|finite"):
            f(aa, bb)
    X, L = coll
    X = X.copy()
    X[4, 9, 0] = bad
    for call in batch_calls(metric, X) + batch_calls(metric, L, X):
        with pytest.raises(ValueError, match=r"(?i)nan|inf|finite"):
            call()
    L = [x.copy() for x in L]
    L[1][0, 0] = bad
    for call in batch_calls(metric, L):
        with pytest.raises(ValueError, match=r"(?i)nan|inf|finite"):
            call()


@pytest.mark.parametrize("metric", METRICS)
def test_empty_series(metric, pair):
    a, b = pair
    f = PAIR_FUNCS[metric]
    for empty in (np.empty(0), np.empty((0, 2)), []):
        with pytest.raises(ValueError, match=r"(?i)empty|length"):
            f(empty, b)
        with pytest.raises(ValueError, match=r"(?i)empty|length"):
            f(a if np.ndim(empty) == 2 else a[:, 0], empty)
    for X in (np.empty((3, 0)), np.empty((3, 0, 2)), [a, np.empty((0, 2))]):
        for call in batch_calls(metric, X):
            with pytest.raises(ValueError, match=r"(?i)empty|length"):
                call()


@pytest.mark.parametrize("metric", METRICS)
def test_mismatched_dims(metric, rng):
    f = PAIR_FUNCS[metric]
    with pytest.raises(ValueError, match=r"(?i)dim"):
        f(rng.normal(size=(5, 2)), rng.normal(size=(5, 3)))
    with pytest.raises(ValueError, match=r"(?i)dim"):
        f(rng.normal(size=5), rng.normal(size=(5, 3)))
    with pytest.raises(ValueError, match=r"(?i)dim"):
        tswarp.cdist(rng.normal(size=(3, 5, 2)), rng.normal(size=(2, 5, 3)), metric=metric)
    mixed = [rng.normal(size=(5, 2)), rng.normal(size=(4, 3))]
    for call in batch_calls(metric, mixed):
        with pytest.raises(ValueError, match=r"(?i)dim"):
            call()


@pytest.mark.parametrize("metric", METRICS)
def test_wrong_ndim(metric, pair, rng):
    a, b = pair
    f = PAIR_FUNCS[metric]
    for bad in (np.array(1.0), 1.0, rng.normal(size=(3, 4, 2))):
        with pytest.raises(ValueError, match=r"(?i)dim|shape"):
            f(bad, b)
        with pytest.raises(ValueError, match=r"(?i)dim|shape"):
            f(a, bad)
    # a collection is (n, len), (n, len, d) or a list of series, not one series or a 4-D array
    for X in (rng.normal(size=7), rng.normal(size=(2, 3, 4, 5)), [rng.normal(size=(3, 4, 2))]):
        for call in batch_calls(metric, X):
            with pytest.raises(ValueError, match=r"(?i)dim|shape"):
                call()


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("kind", ["object", "str", "complex", "bytes"])
def test_non_numeric_dtypes(metric, kind, pair):
    a, b = pair
    bad = {
        "object": a.astype(object),
        "str": a.astype(str),
        "complex": a.astype(np.complex128),
        "bytes": a.astype("S8"),
    }[kind]
    f = PAIR_FUNCS[metric]
    with pytest.raises(TypeError, match=r"(?i)dtype|type"):
        f(bad, b)
    with pytest.raises(TypeError, match=r"(?i)dtype|type"):
        f(b, bad)
    X = np.stack([a, a])
    badX = X.astype(bad.dtype)
    for call in batch_calls(metric, badX) + batch_calls(metric, X, badX) + batch_calls(metric, [a, bad]):
        with pytest.raises(TypeError, match=r"(?i)dtype|type"):
            call()


# ---------------------------------------------------------------------------------------
# memory layouts: accepted, and equal to the contiguous result
# ---------------------------------------------------------------------------------------
def layouts(x):
    """Views of x's values with other strides: the contiguous copy must give the same."""
    big = np.repeat(x, 2, axis=0)
    rev = np.ascontiguousarray(x[::-1])
    out = {
        "every_other_row": big[::2],
        "negative_stride": rev[::-1],
        "fortran": np.asfortranarray(x),
        "readonly": x.copy(),
    }
    out["readonly"].flags.writeable = False
    if x.ndim == 2:
        wide = np.concatenate([x, x], axis=1)
        out["column_slice"] = wide[:, ::2] if x.shape[1] == 1 else wide[:, : x.shape[1]]
        out["reversed_columns"] = np.ascontiguousarray(x[:, ::-1])[:, ::-1]
    return out


@pytest.mark.parametrize("metric", METRICS)
def test_strided_pairs(metric, rng):
    f = PAIR_FUNCS[metric]
    for d in (1, 3):
        a, b = rng.normal(size=(15, d)), rng.normal(size=(11, d))
        expected = f(a, b)
        for name, view in layouts(a).items():
            assert np.array_equal(view, a)
            assert f(view, b) == expected, f"seed={rng.seed} {name} d={d}"
            for bname, bview in layouts(b).items():
                assert f(view, bview) == expected, f"seed={rng.seed} {name}/{bname} d={d}"
        # a 1-D strided view of a univariate series
        m = rng.normal(size=(15, 4))
        assert f(m[:, 2], b[:, 0]) == f(m[:, 2].copy(), b[:, 0].copy())
        assert f(m[::-1, 2], b[:, 0]) == f(m[::-1, 2].copy(), b[:, 0].copy())


def test_strided_timestamps(rng):
    a, b = rng.normal(size=8), rng.normal(size=6)
    ta = np.cumsum(rng.uniform(0.1, 1, 8))
    tb = np.cumsum(rng.uniform(0.1, 1, 6))
    expected = tswarp.twed(a, b, ta=ta, tb=tb)
    ta_neg = np.ascontiguousarray(ta[::-1])[::-1]
    tb_strided = np.repeat(tb, 3)[::3]
    assert tswarp.twed(a, b, ta=ta_neg, tb=tb_strided) == expected
    tx = np.stack([ta, ta + 1.0])
    X = np.stack([a, a[::-1]])
    exp = tswarp.cdist(X, [b], metric="twed", tx=tx, ty=[tb])
    got = tswarp.cdist(X, [b], metric="twed", tx=np.asfortranarray(tx), ty=[tb_strided])
    np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("metric", METRICS)
def test_strided_collections(metric, rng):
    X = rng.normal(size=(6, 14, 2))
    Y = rng.normal(size=(4, 14, 2))
    exp = tswarp.cdist(X, Y, metric=metric)
    expp = tswarp.pdist(X, metric=metric)
    Xbig = np.repeat(X, 2, axis=1)
    views = {
        "time_stride": Xbig[:, ::2],
        "negative_series_stride": np.ascontiguousarray(X[::-1])[::-1],
        "negative_time_stride": np.ascontiguousarray(X[:, ::-1])[:, ::-1],
        "fortran": np.asfortranarray(X),
        "channel_slice": np.concatenate([X, X], axis=2)[:, :, 2:],
        "list_of_views": list(Xbig[:, ::2]),
    }
    # soft-DTW may differ in the last bits between kernels (lists take the ragged path,
    # a transposed call sums its exponentials in another order): compare to 1e-12
    atol = 1e-12 * (np.abs(exp).max() + 28)
    for name, V in views.items():
        assert np.array_equal(np.asarray(V), X)
        np.testing.assert_allclose(tswarp.cdist(V, Y, metric=metric), exp, rtol=1e-12, atol=atol,
                                   err_msg=f"seed={rng.seed} {name}")
        np.testing.assert_allclose(tswarp.cdist(Y, V, metric=metric), exp.T, rtol=1e-12, atol=atol,
                                   err_msg=f"seed={rng.seed} {name} as Y")
        np.testing.assert_allclose(tswarp.pdist(V, metric=metric), expp, rtol=1e-12, atol=atol,
                                   err_msg=f"seed={rng.seed} {name} pdist")
    # 2-D univariate collection with a column stride
    U = rng.normal(size=(5, 30))
    np.testing.assert_array_equal(tswarp.cdist(U[:, ::3], metric=metric),
                                  tswarp.cdist(U[:, ::3].copy(), metric=metric))


# ---------------------------------------------------------------------------------------
# measure parameters
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("gamma", [0.0, -1.0, np.nan])
def test_gamma(gamma, pair, coll):
    a, b = pair
    with pytest.raises(ValueError, match="gamma"):
        tswarp.soft_dtw(a, b, gamma=gamma)
    with pytest.raises(ValueError, match="gamma"):
        tswarp.distance(a, b, metric="soft_dtw", gamma=gamma)
    for call in batch_calls("soft_dtw", coll[0], gamma=gamma):
        with pytest.raises(ValueError, match="gamma"):
            call()


@pytest.mark.parametrize("name,value", [
    ("nu", -0.1), ("nu", np.nan),
    ("lmbda", -1.0), ("lmbda", np.nan),
    ("p", 0.5), ("p", 0.0), ("p", -2.0), ("p", np.nan),
])
def test_twed_params(name, value, pair, coll):
    a, b = pair
    pattern = r"\bp\b" if name == "p" else name
    with pytest.raises(ValueError, match=pattern):
        tswarp.twed(a, b, **{name: value})
    for call in batch_calls("twed", coll[0], **{name: value}):
        with pytest.raises(ValueError, match=pattern):
            call()


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("window", [-1, -0.1, 1.5, np.nan, -(2**40)])
def test_bad_window(metric, window, pair, coll):
    a, b = pair
    with pytest.raises(ValueError, match="window"):
        PAIR_FUNCS[metric](a, b, window=window)
    for call in batch_calls(metric, coll[0], window=window):
        with pytest.raises(ValueError, match="window"):
            call()


@pytest.mark.parametrize("metric", METRICS)
def test_window_and_itakura_exclusive(metric, pair, coll):
    a, b = pair
    with pytest.raises(ValueError, match="itakura") as info:
        PAIR_FUNCS[metric](a, b, window=3, itakura_max_slope=2.0)
    assert "window" in str(info.value)
    for call in batch_calls(metric, coll[0], window=0.5, itakura_max_slope=2.0):
        with pytest.raises(ValueError, match="itakura"):
            call()


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("slope", [0.999, 0.0, -1.0, np.nan])
def test_bad_itakura_slope(metric, slope, pair, coll):
    a, b = pair
    with pytest.raises(ValueError, match="itakura"):
        PAIR_FUNCS[metric](a, b, itakura_max_slope=slope)
    for call in batch_calls(metric, coll[0], itakura_max_slope=slope):
        with pytest.raises(ValueError, match="itakura"):
            call()


def test_itakura_slope_one_is_valid(pair):
    a, b = pair
    # the smallest valid slope; for unequal lengths it admits no path -> +inf, as in tslearn
    assert tswarp.dtw(a, a, itakura_max_slope=1.0) == 0.0
    assert tswarp.dtw(a, b, itakura_max_slope=1.0) == np.inf


# ---------------------------------------------------------------------------------------
# timestamps
# ---------------------------------------------------------------------------------------
def _bad_times(n):
    good = np.arange(1.0, n + 1)
    swapped = good.copy()
    swapped[[3, 4]] = swapped[[4, 3]]
    repeated = good.copy()
    repeated[5] = repeated[4]
    with_nan = good.copy()
    with_nan[2] = np.nan
    with_inf = good.copy()
    with_inf[-1] = np.inf
    return {
        "decreasing_pair": swapped,
        "repeated": repeated,
        "reversed": good[::-1],
        "nan": with_nan,
        "inf": with_inf,
        "too_short": good[:-1],
        "too_long": np.arange(1.0, n + 2),
        "2d": good[:, None],
        "empty": np.empty(0),
    }


@pytest.mark.parametrize("case", list(_bad_times(9)))
def test_bad_timestamps(case, pair):
    a, b = pair  # len(a) = 12, len(b) = 9
    good_a = np.arange(1.0, 13)
    bad_b = _bad_times(9)[case]
    with pytest.raises(ValueError, match=r"\btb\b"):
        tswarp.twed(a, b, ta=good_a, tb=bad_b)
    bad_a = _bad_times(12)[case]
    with pytest.raises(ValueError, match=r"\bta\b"):
        tswarp.twed(a, b, ta=bad_a, tb=np.arange(1.0, 10))


def test_bad_batch_timestamps(coll):
    X, L = coll  # X: 5 series of length 10; L: lengths 4, 7, 9
    tx_good = np.tile(np.arange(1.0, 11), (5, 1))
    bad = tx_good.copy()
    bad[2, 6] = bad[2, 5]
    for tx in (bad, tx_good[:4], tx_good[:, :9], [np.arange(1.0, 11)] * 4):
        with pytest.raises(ValueError, match=r"\btx\b"):
            tswarp.cdist(X, metric="twed", tx=tx)
        with pytest.raises(ValueError, match=r"\btx\b"):
            tswarp.pdist(X, metric="twed", tx=tx)
    ty_bad = [np.arange(1.0, 5), np.arange(1.0, 8)[::-1], np.arange(1.0, 10)]
    with pytest.raises(ValueError, match=r"\bty\b"):
        tswarp.cdist(X, L, metric="twed", ty=ty_bad)


def test_timestamps_only_for_twed(pair):
    a, b = pair
    with pytest.raises(TypeError, match="ta"):
        tswarp.distance(a, b, metric="dtw", ta=np.arange(1.0, 13))


# ---------------------------------------------------------------------------------------
# names, devices, threads
# ---------------------------------------------------------------------------------------
def test_unknown_names(pair, coll):
    a, b = pair
    with pytest.raises(ValueError, match="metric"):
        tswarp.distance(a, b, metric="dwt")
    with pytest.raises(ValueError, match="metric"):
        tswarp.cdist(coll[0], metric="euclid")
    with pytest.raises(ValueError, match="metric"):
        tswarp.pdist(coll[0], metric="")
    with pytest.raises(ValueError, match="cost"):
        tswarp.dtw(a, b, cost="chebyshev")
    with pytest.raises(ValueError, match="cost"):
        tswarp.cdist(coll[0], metric="dtw", cost="l3")
    for f in PAIR_FUNCS.values():
        with pytest.raises(ValueError, match="device"):
            f(a, b, device="gpu")
    with pytest.raises(ValueError, match="device"):
        tswarp.cdist(coll[0], device="tpu")


def test_unknown_keyword(pair, coll):
    a, b = pair
    with pytest.raises(TypeError, match="bogus"):
        tswarp.distance(a, b, metric="twed", bogus=1.0)
    with pytest.raises(TypeError, match="bogus"):
        tswarp.cdist(coll[0], metric="dtw", bogus=1.0)
    with pytest.raises(TypeError, match="bogus"):
        tswarp.dtw(a, b, bogus=1.0)


def test_n_jobs_zero(coll):
    with pytest.raises(ValueError, match="n_jobs"):
        tswarp.cdist(coll[0], n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs"):
        tswarp.pdist(coll[0], n_jobs=0)


def _cuda_usable():
    info = tswarp.info()
    return info["cuda_built"] and info["cuda_devices"] > 0


@pytest.mark.parametrize("metric", METRICS)
def test_cuda_without_cuda_raises(metric, pair, coll):
    if _cuda_usable():
        pytest.skip("a CUDA device is present: device='cuda' is tested on the GPU machine")
    assert issubclass(tswarp.NoDeviceError, ValueError)
    a, b = pair
    with pytest.raises(tswarp.NoDeviceError, match="(?i)cuda"):
        PAIR_FUNCS[metric](a, b, device="cuda")
    for call in batch_calls(metric, coll[0], device="cuda") + batch_calls(metric, coll[1], coll[0], device="cuda"):
        with pytest.raises(tswarp.NoDeviceError, match="(?i)cuda"):
            call()


@pytest.mark.parametrize("metric", METRICS)
def test_device_auto_works(metric, pair, coll):
    a, b = pair
    f = PAIR_FUNCS[metric]
    assert f(a, b, device="auto") == f(a, b, device="cpu") == f(a, b)
    np.testing.assert_array_equal(tswarp.cdist(coll[0], metric=metric, device="auto"),
                                  tswarp.cdist(coll[0], metric=metric, device="cpu"))


def test_errors_leave_no_partial_state(coll, rng):
    """A failed batch call raises and a following valid call is unaffected."""
    X = coll[0]
    expected = tswarp.cdist(X, metric="dtw")
    bad = X.copy()
    bad[-1, -1, -1] = np.nan
    with pytest.raises(ValueError):
        tswarp.cdist(bad, metric="dtw")
    np.testing.assert_array_equal(tswarp.cdist(X, metric="dtw"), expected)
