"""tswarp against the peer libraries on fresh random inputs of many shapes.

  tslearn       dtw (no window, Sakoe-Chiba radius, Itakura slope), soft_dtw, cdist_dtw,
                cdist_soft_dtw
  aeon          twe_distance, twe_pairwise_distance, dtw_distance (the accumulated cost,
                window fraction for equal lengths)
  dtaidistance  dtw.distance, dtw.distance_fast, dtw_ndim.distance, dtw.distance_matrix_fast
                (its window w is our radius w - 1)

Lengths run from 1 to 2000 (long ones sparingly: the peers are slow), dims from 1 to 16,
unequal lengths, windows, float64 and float32. A float32 input is computed by tswarp in
float32 and compared with the peer run in float64 on the same rounded values.
"""

import math
import warnings

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)

RTOL = {np.float64: 1e-10, np.float32: 1e-4}


def draw_len(rng, cap=600):
    """Mostly short, some medium, a few long lengths, at most cap."""
    u = rng.random()
    if u < 0.12:
        lo, hi = 1, 3
    elif u < 0.75:
        lo, hi = 4, 64
    elif u < 0.97:
        lo, hi = 65, 300
    else:
        lo, hi = 301, cap
    hi = min(hi, cap)
    return int(rng.integers(min(lo, hi), hi + 1))


def draw_dim(rng):
    return int(rng.choice([1, 1, 1, 2, 3, 4, 7, 16]))


def draw_pair(rng, dtype, n=None, m=None, d=None):
    """(a, b) as tswarp gets them and (a64, b64): the same values in float64 for a peer."""
    n = draw_len(rng) if n is None else n
    m = draw_len(rng) if m is None else m
    d = draw_dim(rng) if d is None else d
    scale = float(rng.choice([0.1, 1.0, 5.0]))
    a = (rng.normal(size=(n, d)) * scale).astype(dtype)
    b = (rng.normal(size=(m, d)) * scale + rng.normal() * 0.3).astype(dtype)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def agree(got, exp, dtype, what, scale=0.0):
    if math.isinf(exp) or math.isinf(got):
        assert got == exp, f"{what}: tswarp {got} peer {exp}"
        return
    rtol = RTOL[dtype]
    assert abs(got - exp) <= rtol * (abs(exp) + scale), (
        f"{what}: tswarp {got!r} peer {exp!r} (rel diff {abs(got - exp) / max(abs(exp), 1e-300):.2e})")


DTYPES = [np.float64, np.float32]
DTYPE_IDS = ["f64", "f32"]


# ---------------------------------------------------------------------------------------
# tslearn
# ---------------------------------------------------------------------------------------
def tslearn_dtw(tm, a, b, radius=None, itakura_max_slope=None):
    """tslearn's value, or +inf where tslearn refuses an Itakura slope that admits no path."""
    if itakura_max_slope is not None:
        try:
            return float(tm.dtw(a, b, global_constraint="itakura", itakura_max_slope=itakura_max_slope))
        except (RuntimeWarning, ValueError) as e:
            assert "unfeasible" in str(e), e
            return math.inf
    if radius is not None:
        return float(tm.dtw(a, b, global_constraint="sakoe_chiba", sakoe_chiba_radius=radius))
    return float(tm.dtw(a, b))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_dtw_vs_tslearn(rng, tslearn_metrics, dtype):
    for trial in range(70):
        a, b, a64, b64 = draw_pair(rng, dtype)
        n, m = len(a), len(b)
        kind = trial % 3
        kw = {}
        if kind == 1:
            kw = {"radius": int(rng.integers(0, max(n, m) + 1))}
        elif kind == 2:
            kw = {"itakura_max_slope": float(rng.choice([1.0, rng.uniform(1.0, 5.0)]))}
        exp = tslearn_dtw(tslearn_metrics, a64, b64, **kw)
        got = tswarp.dtw(a, b, **kw)
        agree(got, exp, dtype, f"seed={rng.seed} trial={trial} dtw n={n} m={m} d={a.shape[1]} {kw}")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_soft_dtw_vs_tslearn(rng, tslearn_metrics, dtype):
    for trial in range(50):
        a, b, a64, b64 = draw_pair(rng, dtype)
        n, m = len(a), len(b)
        gamma = float(10 ** rng.uniform(-2, 1))
        exp = float(tslearn_metrics.soft_dtw(a64, b64, gamma=gamma))
        got = tswarp.soft_dtw(a, b, gamma=gamma)
        # values can cancel to near zero: errors are relative to the entries of the matrix
        scale = tswarp.dtw(a64, b64, accumulated=True) + gamma * (n + m)
        what = f"seed={rng.seed} trial={trial} soft_dtw n={n} m={m} d={a.shape[1]} gamma={gamma}"
        agree(got, exp, dtype, what, scale)
        if trial % 5 == 0:
            aa = float(tslearn_metrics.soft_dtw(a64, a64, gamma=gamma))
            bb = float(tslearn_metrics.soft_dtw(b64, b64, gamma=gamma))
            div = tswarp.soft_dtw(a, b, gamma=gamma, normalize=True)
            agree(div, exp - (aa + bb) / 2, dtype, what + " normalize", 2 * scale)


def _dataset(series):
    from tslearn.utils import to_time_series_dataset

    return to_time_series_dataset([s.astype(np.float64) for s in series])  # NaN-padded


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_cdist_dtw_vs_tslearn(rng, tslearn_metrics, dtype):
    d = draw_dim(rng)
    X = [rng.normal(size=(draw_len(rng, 120), d)).astype(dtype) for _ in range(int(rng.integers(1, 12)))]
    Y = [rng.normal(size=(draw_len(rng, 120), d)).astype(dtype) for _ in range(int(rng.integers(1, 9)))]
    r = int(rng.integers(0, 20))
    exp = tslearn_metrics.cdist_dtw(_dataset(X), _dataset(Y), global_constraint="sakoe_chiba", sakoe_chiba_radius=r)
    got = tswarp.cdist(X, Y, metric="dtw", radius=r)
    np.testing.assert_allclose(got, exp, rtol=RTOL[dtype], err_msg=f"seed={rng.seed} radius={r}")
    exp = tslearn_metrics.cdist_dtw(_dataset(X))
    np.testing.assert_allclose(tswarp.pdist(X, metric="dtw"), exp, rtol=RTOL[dtype], atol=0,
                               err_msg=f"seed={rng.seed} pdist")
    # equal lengths as a 3-D array
    X3 = rng.normal(size=(int(rng.integers(2, 15)), int(rng.integers(1, 90)), d)).astype(dtype)
    np.testing.assert_allclose(tswarp.cdist(X3, metric="dtw"), tslearn_metrics.cdist_dtw(X3.astype(np.float64)),
                               rtol=RTOL[dtype], err_msg=f"seed={rng.seed} 3-D")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_cdist_soft_dtw_vs_tslearn(rng, tslearn_metrics, dtype):
    d = draw_dim(rng)
    X = [rng.normal(size=(draw_len(rng, 100), d)).astype(dtype) for _ in range(int(rng.integers(1, 10)))]
    Y = [rng.normal(size=(draw_len(rng, 100), d)).astype(dtype) for _ in range(int(rng.integers(1, 8)))]
    gamma = float(10 ** rng.uniform(-2, 1))
    exp = tslearn_metrics.cdist_soft_dtw(_dataset(X), _dataset(Y), gamma=gamma)
    got = tswarp.cdist(X, Y, metric="soft_dtw", gamma=gamma)
    scale = tswarp.cdist(X, Y, metric="dtw", accumulated=True).max() + gamma * 200
    np.testing.assert_allclose(got, exp, rtol=RTOL[dtype], atol=RTOL[dtype] * scale,
                               err_msg=f"seed={rng.seed} gamma={gamma}")
    exp = tslearn_metrics.cdist_soft_dtw(_dataset(X), gamma=gamma)
    np.testing.assert_allclose(tswarp.pdist(X, metric="soft_dtw", gamma=gamma), exp, rtol=RTOL[dtype],
                               atol=RTOL[dtype] * scale, err_msg=f"seed={rng.seed} pdist gamma={gamma}")


# ---------------------------------------------------------------------------------------
# aeon (arrays are (n_channels, n_timepoints) there)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_twed_vs_aeon(rng, aeon_distances, dtype):
    for trial in range(50):
        kw = {}
        if trial % 3 == 2:
            # aeon's Sakoe-Chiba band equals ours (r = floor(f n)) for equal lengths
            kw = {"window": float(rng.choice([0.0, 1.0, rng.random(), rng.random() * 0.2]))}
            n = draw_len(rng)
            a, b, a64, b64 = draw_pair(rng, dtype, n, n)
        else:
            a, b, a64, b64 = draw_pair(rng, dtype)
        n, m = len(a), len(b)
        nu = float(rng.choice([0.001, rng.uniform(0, 1)]))
        lmbda = float(rng.choice([1.0, rng.uniform(0, 3)]))
        exp = float(aeon_distances.twe_distance(a64.T, b64.T, nu=nu, lmbda=lmbda, **kw))
        got = tswarp.twed(a, b, nu=nu, lmbda=lmbda, **kw)
        agree(got, exp, dtype, f"seed={rng.seed} trial={trial} twed n={n} m={m} d={a.shape[1]} nu={nu} lmbda={lmbda} {kw}")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_twed_pairwise_vs_aeon(rng, aeon_distances, dtype):
    d = draw_dim(rng)
    nu, lmbda = float(rng.uniform(0, 0.5)), float(rng.uniform(0, 2))
    X = rng.normal(size=(int(rng.integers(2, 20)), int(rng.integers(1, 80)), d)).astype(dtype)
    Y = rng.normal(size=(int(rng.integers(1, 10)), X.shape[1], d)).astype(dtype)
    X64, Y64 = X.astype(np.float64).transpose(0, 2, 1), Y.astype(np.float64).transpose(0, 2, 1)
    exp = aeon_distances.twe_pairwise_distance(X64, nu=nu, lmbda=lmbda)
    np.testing.assert_allclose(tswarp.pdist(X, metric="twed", nu=nu, lmbda=lmbda), exp, rtol=RTOL[dtype],
                               err_msg=f"seed={rng.seed} pdist")
    exp = aeon_distances.twe_pairwise_distance(X64, Y64, nu=nu, lmbda=lmbda)
    np.testing.assert_allclose(tswarp.cdist(X, Y, metric="twed", nu=nu, lmbda=lmbda), exp, rtol=RTOL[dtype],
                               err_msg=f"seed={rng.seed} cdist")
    # variable lengths
    L = [rng.normal(size=(draw_len(rng, 90), d)).astype(dtype) for _ in range(int(rng.integers(2, 9)))]
    exp = aeon_distances.twe_pairwise_distance([np.ascontiguousarray(x.astype(np.float64).T) for x in L], nu=nu, lmbda=lmbda)
    np.testing.assert_allclose(tswarp.pdist(L, metric="twed", nu=nu, lmbda=lmbda), exp, rtol=RTOL[dtype],
                               err_msg=f"seed={rng.seed} ragged pdist lengths {[len(x) for x in L]}")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_dtw_accumulated_vs_aeon(rng, aeon_distances, dtype):
    for trial in range(40):
        a, b, a64, b64 = draw_pair(rng, dtype)
        kw = {}
        if trial % 2:
            # aeon's `window` fraction equals ours for equal lengths
            b = (rng.normal(size=a.shape)).astype(dtype)
            b64 = b.astype(np.float64)
            kw = {"window": float(rng.choice([0.0, 1.0, rng.random(), rng.random() * 0.2]))}
        exp = float(aeon_distances.dtw_distance(a64.T, b64.T, **kw))
        got = tswarp.dtw(a, b, accumulated=True, **kw)
        agree(got, exp, dtype, f"seed={rng.seed} trial={trial} dtw acc n={len(a)} m={len(b)} d={a.shape[1]} {kw}")


# ---------------------------------------------------------------------------------------
# dtaidistance (univariate dtw.*, multivariate dtw_ndim.*)
# ---------------------------------------------------------------------------------------
def dtai_window(rng, n, m):
    """dtaidistance window w (None: no window) and the matching tswarp keywords."""
    if rng.random() < 0.4:
        return None, {}
    w = int(rng.integers(1, max(n, m) + 2))
    return w, {"radius": w - 1}


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_dtw_vs_dtaidistance(rng, dtaidistance, dtype):
    from dtaidistance import dtw, dtw_ndim

    has_c = dtw.try_import_c(verbose=False)
    for trial in range(50):
        # the pure-Python dtaidistance functions are slow: keep their pairs short
        short = trial % 2 == 0
        n = int(rng.integers(1, 70)) if short else draw_len(rng)
        m = int(rng.integers(1, 70)) if short else draw_len(rng)
        a, b, a64, b64 = draw_pair(rng, dtype, n, m, 1)
        w, kw = dtai_window(rng, n, m)
        got = tswarp.dtw(a[:, 0], b[:, 0], **kw)
        what = f"seed={rng.seed} trial={trial} n={n} m={m} dtai window={w}"
        if short:
            agree(got, float(dtw.distance(a64[:, 0], b64[:, 0], window=w)), dtype, what + " dtw.distance")
        if has_c:
            # distance_fast prunes by default with the Euclidean distance as an upper bound,
            # which is no bound for unequal lengths (it then returns inf): prune off
            fast = dtw.distance_fast(np.ascontiguousarray(a64[:, 0]), np.ascontiguousarray(b64[:, 0]),
                                     window=w, use_pruning=False)
            agree(got, float(fast), dtype, what + " dtw.distance_fast")
        if short:
            d = int(rng.integers(1, 17))
            a, b, a64, b64 = draw_pair(rng, dtype, n, m, d)
            agree(tswarp.dtw(a, b, **kw), float(dtw_ndim.distance(a64, b64, window=w)), dtype,
                  what + f" d={d} dtw_ndim.distance")


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_distance_matrix_fast_vs_dtaidistance(rng, dtaidistance, dtype):
    from dtaidistance import dtw

    if not dtw.try_import_c(verbose=False):
        pytest.skip("dtaidistance was installed without its C library")
    for variable in (False, True):
        k = int(rng.integers(2, 25))
        if variable:
            S = [rng.normal(size=draw_len(rng, 200)).astype(dtype) for _ in range(k)]
        else:
            S = list(rng.normal(size=(k, int(rng.integers(1, 200)))).astype(dtype))
        maxlen = max(len(s) for s in S)
        w, kw = dtai_window(rng, maxlen, maxlen)
        exp = dtw.distance_matrix_fast([s.astype(np.float64) for s in S], window=w, use_pruning=False)
        got = tswarp.pdist(S if variable else np.stack(S), metric="dtw", **kw)
        iu = np.triu_indices(k, 1)
        np.testing.assert_allclose(got[iu], exp[iu], rtol=RTOL[dtype],
                                   err_msg=f"seed={rng.seed} variable={variable} window={w}")


# ---------------------------------------------------------------------------------------
# long pairs: all peers at once, lengths up to 2000
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_long_pairs(rng, tslearn_metrics, aeon_distances, dtaidistance, dtype):
    from dtaidistance import dtw

    n = 2000
    m = int(rng.integers(1500, 2001))
    d = int(rng.choice([1, 3]))
    a, b, a64, b64 = draw_pair(rng, dtype, n, m, d)
    what = f"seed={rng.seed} long n={n} m={m} d={d}"
    got = tswarp.dtw(a, b)
    agree(got, float(tslearn_metrics.dtw(a64, b64)), dtype, what + " tslearn dtw")
    if d == 1 and dtw.try_import_c(verbose=False):
        fast = dtw.distance_fast(a64[:, 0].copy(), b64[:, 0].copy(), use_pruning=False)
        agree(got, float(fast), dtype, what + " dtaidistance")
    r = int(rng.integers(0, 300))
    agree(tswarp.dtw(a, b, radius=r),
          float(tslearn_metrics.dtw(a64, b64, global_constraint="sakoe_chiba", sakoe_chiba_radius=r)),
          dtype, what + f" radius={r}")
    agree(tswarp.dtw(a, b, accumulated=True), float(aeon_distances.dtw_distance(a64.T, b64.T)), dtype,
          what + " aeon dtw")
    agree(tswarp.twed(a, b), float(aeon_distances.twe_distance(a64.T, b64.T)), dtype, what + " aeon twe")
    gamma = float(rng.choice([0.1, 1.0]))
    scale = tswarp.dtw(a64, b64, accumulated=True) + gamma * (n + m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = float(tslearn_metrics.soft_dtw(a64, b64, gamma=gamma))
    agree(tswarp.soft_dtw(a, b, gamma=gamma), exp, dtype, what + f" soft_dtw gamma={gamma}", scale)
