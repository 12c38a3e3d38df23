"""Properties every measure must have, and consistency between tswarp's own entry points.

Mathematical properties: symmetry, d(x,x) = 0 (DTW, TWED), TWED's triangle inequality,
window monotonicity, soft-DTW's limit gamma -> 0 and its numerical stability, the
soft-DTW divergence's sign. Consistency: the plain reference, the scalar fast path and the
default (SIMD) path agree; cdist, pdist and per-pair calls agree for every input layout
and thread count.
"""

import math

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)

LOG3 = math.log(3.0)


def series(rng, n, d, scale=1.0):
    return rng.normal(size=(n, d)) * scale


def draw_len(rng, hi=40):
    return int(rng.integers(1, 4)) if rng.random() < 0.2 else int(rng.integers(1, hi + 1))


def times(rng, n):
    return rng.uniform(0.1, 2.0) + np.concatenate([[0.0], np.cumsum(rng.uniform(0.05, 2.0, n - 1))])


def close(x, y, rtol, scale=0.0):
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= rtol * (max(abs(x), abs(y)) + scale)


def random_case(rng, metric, n, m, d, itakura=True):
    """(a, b, params) for a metric, with a random window (Itakura only if itakura)."""
    a, b = series(rng, n, d), series(rng, m, d)
    params = {}
    if metric == "dtw":
        params["cost"] = str(rng.choice(["sqeuclidean", "euclidean", "abs", "cosine"]))
    elif metric == "twed":
        params.update(nu=float(rng.uniform(0, 1)), lmbda=float(rng.uniform(0, 2)),
                      p=float(rng.choice([1.0, 2.0, 3.0])))
        if rng.random() < 0.5:
            params.update(ta=times(rng, n), tb=times(rng, m))
    else:
        params["gamma"] = float(rng.choice([0.01, 0.1, 1.0, 10.0]))
    k = rng.integers(0, 4)
    if k == 1:
        params["radius"] = int(rng.integers(0, max(n, m) + 1))
    elif k == 2:
        params["window"] = float(rng.random())
    elif k == 3 and itakura:
        params["itakura_max_slope"] = float(rng.uniform(1.0, 3.0))
    return a, b, params


def swapped(params):
    p = dict(params)
    if "ta" in p:
        p["ta"], p["tb"] = params["tb"], params["ta"]
    return p


FUNCS = {"dtw": tswarp.dtw, "twed": tswarp.twed, "soft_dtw": tswarp.soft_dtw}


# ---------------------------------------------------------------------------------------
# symmetry, identity, triangle inequality
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_symmetry(rng, metric, dtype):
    """d(a, b) = d(b, a) for every window but Itakura's: tslearn's Itakura mask, which
    tswarp follows (test_bruteforce checks it cell by cell), rounds its bounds to two
    decimals and is not symmetric, not even for n = m (itakura_mask(26, 26, 2.1986) is not
    its own transpose), so Itakura distances are not symmetric either."""
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for trial in range(60):
        n = draw_len(rng)
        m = n if rng.random() < 0.3 else draw_len(rng)
        d = int(rng.choice([1, 2, 5]))
        a, b, params = random_case(rng, metric, n, m, d, itakura=False)
        a, b = a.astype(dtype), b.astype(dtype)
        if metric == "soft_dtw" and rng.random() < 0.3:
            params["normalize"] = True
        f = FUNCS[metric]
        ab, ba = f(a, b, **params), f(b, a, **swapped(params))
        # soft-DTW adds its three exponentials in the other order once transposed
        scale = params.get("gamma", 0.0) * (n + m) + tswarp.dtw(a, b, accumulated=True)
        assert close(ab, ba, rtol, scale), (
            f"seed={rng.seed} trial={trial} {metric} n={n} m={m} d={d} {params}: {ab} vs {ba}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_identity_is_zero(rng, dtype):
    """d(x, x) = 0 for DTW (every cost, every window) and TWED (any nu, lmbda, p, times)."""
    for trial in range(40):
        n, d = draw_len(rng), int(rng.choice([1, 3, 16]))
        x = series(rng, n, d).astype(dtype)
        _, _, params = random_case(rng, "dtw", n, n, d)
        got = tswarp.dtw(x, x, **params)
        if params["cost"] == "cosine":
            # 1 - <x,x>/(|x||x|) is zero up to rounding (of either sign)
            assert abs(got) <= (1e-12 if dtype == np.float64 else 1e-5) * n, f"seed={rng.seed} {params}: {got}"
        else:
            assert got == 0.0, f"seed={rng.seed} trial={trial} dtw(x, x) {params} = {got}"
        _, _, params = random_case(rng, "twed", n, n, d)
        params.pop("tb", None)
        if "ta" in params:
            params["tb"] = params["ta"]
        got = tswarp.twed(x, x, **params)
        assert got == 0.0, f"seed={rng.seed} trial={trial} twed(x, x) {params} = {got}"


def test_pdist_diagonal(rng):
    """pdist's diagonal holds d(x_i, x_i): 0 for DTW and TWED, sdtw(x, x) for soft-DTW."""
    X = [series(rng, draw_len(rng), 2) for _ in range(7)]
    for metric in ("dtw", "twed"):
        D = tswarp.pdist(X, metric=metric)
        assert np.all(np.diag(D) == 0.0), f"seed={rng.seed} {metric}: {np.diag(D)}"
    D = tswarp.pdist(X, metric="soft_dtw", gamma=0.5)
    diag = [tswarp.soft_dtw(x, x, gamma=0.5) for x in X]
    assert_matrix_close(np.diag(D), np.array(diag), {"gamma": 0.5}, X, msg=f"seed={rng.seed}")


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_twed_triangle_inequality(rng, p):
    """TWED is a metric for nu > 0, lmbda >= 0: check every triple of random collections
    (unequal lengths, their own irregular timestamps)."""
    for trial in range(4):
        k = 14
        d = int(rng.choice([1, 2, 4]))
        X = [series(rng, draw_len(rng, 25), d, scale=float(rng.choice([0.1, 1, 10]))) for _ in range(k)]
        T = [times(rng, len(x)) if rng.random() < 0.7 else np.arange(1.0, len(x) + 1) for x in X]
        nu = float(rng.choice([1e-3, rng.uniform(1e-3, 2)]))
        lmbda = float(rng.choice([0.0, 1.0, rng.uniform(0, 3)]))
        D = np.empty((k, k))
        for i in range(k):
            for j in range(k):
                D[i, j] = tswarp.twed(X[i], X[j], ta=T[i], tb=T[j], nu=nu, lmbda=lmbda, p=p)
        # D[i, l] <= D[i, j] + D[j, l] for all i, j, l
        lhs = D[:, None, :]
        rhs = D[:, :, None] + D[None, :, :]
        slack = rhs - lhs + 1e-9 * (np.abs(rhs) + 1.0)
        bad = np.argwhere(slack < 0)
        assert bad.size == 0, (
            f"seed={rng.seed} trial={trial} nu={nu} lmbda={lmbda} p={p}: triangle violated at "
            f"(i, j, l) = {bad[:3].tolist()}, e.g. {D[tuple(bad[0][[0, 2]])]} > "
            f"{D[tuple(bad[0][[0, 1]])]} + {D[tuple(bad[0][[1, 2]])]}")


# ---------------------------------------------------------------------------------------
# windows
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_window_monotonicity(rng, metric):
    """A wider band admits more paths: the distance does not increase with the radius
    (nor with the fraction); no window equals any band that covers the whole matrix."""
    f = FUNCS[metric]
    for trial in range(25):
        n, m = draw_len(rng, 50), draw_len(rng, 50)
        d = int(rng.choice([1, 3]))
        a, b, params = random_case(rng, metric, n, m, d)
        params.pop("window", None)
        params.pop("radius", None)
        params.pop("itakura_max_slope", None)
        # soft-DTW: softmin over more paths is smaller, up to rounding of the exponentials
        tol = 1e-12 * (params.get("gamma", 0.0) * (n + m) + tswarp.dtw(a, b, accumulated=True) + 1)
        vals = [f(a, b, radius=r, **params) for r in range(0, max(n, m) + 2)]
        what = f"seed={rng.seed} trial={trial} {metric} n={n} m={m} {params}"
        for r in range(1, len(vals)):
            assert vals[r] <= vals[r - 1] + tol, f"{what}: radius {r - 1} -> {vals[r - 1]}, {r} -> {vals[r]}"
        full = f(a, b, **params)
        assert close(full, vals[-1], 1e-12, tol), f"{what}: no window {full} vs huge radius {vals[-1]}"
        assert close(full, f(a, b, radius=10**9, **params), 1e-12, tol), what
        assert close(full, f(a, b, radius=2**80, **params), 1e-12, tol), what
        assert close(full, f(a, b, window=1.0, **params), 1e-12, tol), f"{what}: fraction 1.0"
        # one meaning whatever the type: the int 1 is the full band too, 0 the diagonal
        assert f(a, b, window=1, **params) == f(a, b, window=1.0, **params), what
        assert f(a, b, window=0, **params) == f(a, b, radius=0, **params), what
        assert f(a, b, radius=3.0, **params) == f(a, b, radius=3, **params), what
        fracs = np.sort(rng.random(6))
        fvals = [f(a, b, window=float(x), **params) for x in fracs]
        for k in range(1, len(fvals)):
            assert fvals[k] <= fvals[k - 1] + tol, f"{what}: fractions {fracs} -> {fvals}"
        # a fraction is the radius floor(f * min(n, m))
        x = float(fracs[3])
        assert f(a, b, window=x, **params) == f(a, b, radius=math.floor(x * min(n, m)), **params), what


# ---------------------------------------------------------------------------------------
# soft-DTW: limit and stability
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_soft_dtw_tends_to_dtw(rng, dtype):
    """DTW - gamma log(3) (n + m) <= soft-DTW <= DTW (accumulated squared Euclidean)."""
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for trial in range(30):
        n, m, d = draw_len(rng), draw_len(rng), int(rng.choice([1, 2, 6]))
        a, b = series(rng, n, d).astype(dtype), series(rng, m, d).astype(dtype)
        win = {"radius": int(rng.integers(0, 10))} if rng.random() < 0.3 else {}
        acc = tswarp.dtw(a, b, accumulated=True, **win)
        for gamma in (1e-4, 1e-2, 1.0):
            s = tswarp.soft_dtw(a, b, gamma=gamma, **win)
            slack = rtol * (acc + gamma * (n + m)) + 1e-300
            what = f"seed={rng.seed} trial={trial} n={n} m={m} d={d} gamma={gamma} {win}: sdtw {s} dtw {acc}"
            assert s <= acc + slack, what
            assert s >= acc - gamma * LOG3 * (n + m) - slack, what


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_soft_dtw_stable_for_tiny_gamma_and_huge_values(rng, dtype):
    """gamma = 1e-4 with values up to 1e6: exponents of size 1e16 must be factored out."""
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for trial in range(10):
        n, m = draw_len(rng, 60), draw_len(rng, 60)
        a = rng.uniform(-1e6, 1e6, size=(n, 1)).astype(dtype)
        b = rng.uniform(-1e6, 1e6, size=(m, 1)).astype(dtype)
        for gamma in (1e-4, 1e-2):
            s = tswarp.soft_dtw(a, b, gamma=gamma)
            acc = tswarp.dtw(a, b, accumulated=True)
            what = f"seed={rng.seed} trial={trial} n={n} m={m} gamma={gamma}: sdtw {s} dtw {acc}"
            assert math.isfinite(s), what
            assert acc - gamma * LOG3 * (n + m) - rtol * acc <= s <= acc + rtol * acc, what
            div = tswarp.soft_dtw(a, b, gamma=gamma, normalize=True)
            assert math.isfinite(div), what
    # large gamma with small values: exponents near zero, sums of many terms
    a, b = rng.normal(size=(30, 2)).astype(dtype) * 1e-3, rng.normal(size=(25, 2)).astype(dtype) * 1e-3
    s = tswarp.soft_dtw(a, b, gamma=1e3)
    assert math.isfinite(s) and s < 0, f"seed={rng.seed} gamma=1e3: {s}"


def test_soft_dtw_divergence(rng):
    """The divergence is >= 0 (Blondel et al. 2021, squared Euclidean cost), symmetric,
    and 0 for identical inputs."""
    for trial in range(40):
        n, m, d = draw_len(rng), draw_len(rng), int(rng.choice([1, 3]))
        a, b = series(rng, n, d), series(rng, m, d)
        gamma = float(rng.choice([0.01, 0.1, 1.0, 10.0]))
        scale = tswarp.dtw(a, b, accumulated=True) + gamma * (n + m)
        div = tswarp.soft_dtw(a, b, gamma=gamma, normalize=True)
        what = f"seed={rng.seed} trial={trial} n={n} m={m} d={d} gamma={gamma}: {div}"
        assert div >= -1e-12 * scale, what
        assert close(div, tswarp.soft_dtw(b, a, gamma=gamma, normalize=True), 1e-12, scale), what
        assert abs(tswarp.soft_dtw(a, a, gamma=gamma, normalize=True)) <= 1e-12 * scale, what


# ---------------------------------------------------------------------------------------
# implementations agree: reference, scalar fast path, default (SIMD) path
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_impls_agree_on_pairs(rng, metric, dtype):
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    f = FUNCS[metric]
    for trial in range(30):
        # a few long pairs, where the fast path runs along anti-diagonals
        hi = 700 if trial % 6 == 0 else 60
        n, m, d = draw_len(rng, hi), draw_len(rng, hi), int(rng.choice([1, 2, 4, 16]))
        a, b, params = random_case(rng, metric, n, m, d)
        a, b = a.astype(dtype), b.astype(dtype)
        ref = f(a, b, _impl="reference", **params)
        scale = params.get("gamma", 0.0) * (n + m) + tswarp.dtw(a, b, accumulated=True, _impl="reference")
        what = f"seed={rng.seed} trial={trial} {metric} n={n} m={m} d={d} {params}"
        for impl in ("scalar", "auto"):
            got = f(a, b, _impl=impl, **params)
            assert close(got, ref, rtol, scale), f"{what}: {impl} {got} vs reference {ref}"


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_impls_agree_on_batches(rng, metric, dtype):
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for trial in range(3):
        d = int(rng.choice([1, 3]))
        _, _, params = random_case(rng, metric, 20, 20, d)
        params.pop("ta", None), params.pop("tb", None)
        if trial == 0:  # equal lengths, many series: full SIMD lanes plus a remainder
            L = int(rng.integers(1, 80))
            X = rng.normal(size=(int(rng.integers(9, 30)), L, d)).astype(dtype)
            Y = rng.normal(size=(int(rng.integers(1, 20)), L, d)).astype(dtype)
        else:
            X = [rng.normal(size=(draw_len(rng, 80), d)).astype(dtype) for _ in range(int(rng.integers(1, 25)))]
            Y = [rng.normal(size=(draw_len(rng, 80), d)).astype(dtype) for _ in range(int(rng.integers(1, 12)))]
        ref = tswarp.cdist(X, Y, metric=metric, _impl="reference", **params)
        acc = tswarp.cdist(X, Y, metric="dtw", accumulated=True, _impl="reference")
        scale = acc + params.get("gamma", 0.0) * 160
        for impl in ("scalar", "auto"):
            got = tswarp.cdist(X, Y, metric=metric, _impl=impl, **params)
            with np.errstate(invalid="ignore"):  # inf - inf where Itakura admits no path
                ok = (np.abs(got - ref) <= rtol * (np.abs(ref) + scale)) | (got == ref)
            assert ok.all(), (f"seed={rng.seed} trial={trial} cdist {metric} {params} impl={impl}: "
                              f"{np.argwhere(~ok)[:3].tolist()} {got[~ok][:3]} vs {ref[~ok][:3]}")
            gotp = tswarp.pdist(X, metric=metric, _impl=impl, **params)
            refp = tswarp.pdist(X, metric=metric, _impl="reference", **params)
            np.testing.assert_allclose(gotp, refp, rtol=rtol, atol=rtol * float(scale.max()),
                                       err_msg=f"seed={rng.seed} pdist {metric} impl={impl} {params}")


# ---------------------------------------------------------------------------------------
# cdist, pdist and per-pair calls
# ---------------------------------------------------------------------------------------
def loop_cdist(metric, X, Y, **params):
    return np.array([[FUNCS[metric](x, y, **params) for y in Y] for x in X])


def assert_matrix_close(got, exp, params, X, Y=None, rtol=1e-12, msg=""):
    """Entries agree to rtol relative to the matrix scale. Soft-DTW values may cancel to
    near zero, so its scale also counts gamma per cell of a path."""
    lens = [len(x) for x in X] + [len(y) for y in (X if Y is None else Y)]
    scale = float(np.max(np.abs(exp))) + params.get("gamma", 0.0) * 2 * max(lens)
    np.testing.assert_allclose(got, exp, rtol=rtol, atol=rtol * scale, err_msg=msg)


METRIC_PARAMS = {
    "dtw": {"radius": 5},
    "twed": {"nu": 0.05, "lmbda": 0.5},
    "soft_dtw": {"gamma": 0.3},
}


@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_pdist_layouts(rng, metric):
    from scipy.spatial.distance import squareform

    params = METRIC_PARAMS[metric]
    X = [series(rng, draw_len(rng), 2) for _ in range(int(rng.integers(2, 12)))]
    n = len(X)
    full = tswarp.pdist(X, metric=metric, **params)
    assert full.shape == (n, n)
    # each unordered pair is computed once and mirrored: exactly symmetric
    assert np.array_equal(full, full.T), f"seed={rng.seed}: pdist not exactly symmetric"
    assert_matrix_close(full, loop_cdist(metric, X, X, **params), params, X, msg=f"seed={rng.seed} pdist vs loop")
    cond = tswarp.pdist(X, metric=metric, condensed=True, **params)
    assert cond.shape == (n * (n - 1) // 2,)
    sq = squareform(cond, checks=False)  # scipy's layout: pairs i < j in row order
    off = ~np.eye(n, dtype=bool)
    assert_matrix_close(sq[off], full[off], params, X, msg=f"seed={rng.seed}: condensed layout differs from scipy's")
    # cdist with Y=None is the full pdist
    assert_matrix_close(tswarp.cdist(X, metric=metric, **params), full, params, X, msg=f"seed={rng.seed} cdist(X)")
    assert_matrix_close(tswarp.cdist(X, X, metric=metric, **params), full, params, X, msg=f"seed={rng.seed} cdist(X, X)")


def test_pdist_single_series(rng):
    x = [series(rng, 5, 1)]
    assert tswarp.pdist(x).shape == (1, 1)
    assert tswarp.pdist(x, condensed=True).shape == (0,)


@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_variable_length_lists_match_pair_loop(rng, metric):
    params = METRIC_PARAMS[metric]
    d = int(rng.choice([1, 3]))
    X = [series(rng, draw_len(rng, 60), d) for _ in range(int(rng.integers(1, 9)))]
    Y = [series(rng, draw_len(rng, 60), d) for _ in range(int(rng.integers(1, 9)))]
    got = tswarp.cdist(X, Y, metric=metric, **params)
    assert_matrix_close(got, loop_cdist(metric, X, Y, **params), params, X, Y,
                        msg=f"seed={rng.seed} lengths {[len(x) for x in X]} {[len(y) for y in Y]}")


def test_twed_timestamps_in_batches(rng):
    """tx/ty give each series its timestamps; cdist equals the per-pair loop with ta/tb."""
    X = [series(rng, draw_len(rng, 30), 2) for _ in range(5)]
    Y = [series(rng, draw_len(rng, 30), 2) for _ in range(4)]
    TX, TY = [times(rng, len(x)) for x in X], [times(rng, len(y)) for y in Y]
    got = tswarp.cdist(X, Y, metric="twed", tx=TX, ty=TY, nu=0.1)
    exp = np.array([[tswarp.twed(x, y, ta=tx, tb=ty, nu=0.1) for y, ty in zip(Y, TY)] for x, tx in zip(X, TX)])
    np.testing.assert_allclose(got, exp, rtol=1e-12, err_msg=f"seed={rng.seed}")
    # timestamps matter: the default ones give another matrix
    assert not np.allclose(got, tswarp.cdist(X, Y, metric="twed", nu=0.1))
    # equal lengths as a 3-D array, timestamps (n, len)
    X3, T3 = rng.normal(size=(6, 12, 1)), np.stack([times(rng, 12) for _ in range(6)])
    got = tswarp.pdist(X3, metric="twed", tx=T3, nu=0.1)
    exp = np.array([[tswarp.twed(x, y, ta=tx, tb=ty, nu=0.1) for y, ty in zip(X3, T3)] for x, tx in zip(X3, T3)])
    np.testing.assert_allclose(got, exp, rtol=1e-12, err_msg=f"seed={rng.seed}")


@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_input_conventions(rng, metric):
    """2-D (n, len) = n univariate series; 3-D (n, len, d); lists of (len,) or (len, d)."""
    params = METRIC_PARAMS[metric]
    X2 = rng.normal(size=(6, 17))
    Y2 = rng.normal(size=(4, 17))
    ref = loop_cdist(metric, X2, Y2, **params)
    for X, Y in [(X2, Y2), (X2[:, :, None], Y2[:, :, None]), (list(X2), list(Y2)),
                 ([x[:, None] for x in X2], [y[:, None] for y in Y2]), (X2, list(Y2[:, :, None]))]:
        assert_matrix_close(tswarp.cdist(X, Y, metric=metric, **params), ref, params, X2, Y2,
                            msg=f"seed={rng.seed} {type(X)} {np.shape(X[0])}")
    X3, Y3 = rng.normal(size=(5, 9, 3)), rng.normal(size=(3, 9, 3))
    assert_matrix_close(tswarp.cdist(X3, Y3, metric=metric, **params), loop_cdist(metric, X3, Y3, **params),
                        params, X3, Y3, msg=f"seed={rng.seed} 3-D")
    # a pair: (n,) and (n, 1) are the same univariate series
    a, b = X2[0], Y2[1]
    v = FUNCS[metric](a, b, **params)
    assert FUNCS[metric](a[:, None], b, **params) == v
    assert FUNCS[metric](a, b[:, None], **params) == v
    # python lists of numbers are coerced like np.asarray
    assert FUNCS[metric](a.tolist(), b.tolist(), **params) == v


@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_n_jobs_do_not_change_results(rng, metric):
    params = METRIC_PARAMS[metric]
    X = [series(rng, draw_len(rng, 50), 2) for _ in range(23)]
    Y = rng.normal(size=(11, 31, 2))
    base = tswarp.cdist(X, Y, metric=metric, n_jobs=1, **params)
    base_p = tswarp.pdist(X, metric=metric, n_jobs=1, **params)
    # -1 means all cores, as in scikit-learn
    for n_jobs in (None, 2, -1):
        assert_matrix_close(tswarp.cdist(X, Y, metric=metric, n_jobs=n_jobs, **params), base, params, X, Y,
                            msg=f"seed={rng.seed} n_jobs={n_jobs}")
        assert_matrix_close(tswarp.pdist(X, metric=metric, n_jobs=n_jobs, **params), base_p, params, X,
                            msg=f"seed={rng.seed} pdist n_jobs={n_jobs}")


def test_dtypes_follow_numpy(rng):
    """Computed in the input precision; the output dtype follows numpy's promotion."""
    X64 = rng.normal(size=(4, 20))
    X32 = X64.astype(np.float32)
    assert tswarp.cdist(X32, X32).dtype == np.float32
    assert tswarp.pdist(X32).dtype == np.float32
    assert tswarp.pdist(X32, condensed=True).dtype == np.float32
    assert tswarp.cdist(X64, X64).dtype == np.float64
    assert tswarp.cdist(X32, X64).dtype == np.float64
    Xi = (X64 * 10).astype(np.int64)
    D = tswarp.cdist(Xi)
    assert D.dtype == np.float64
    np.testing.assert_array_equal(D, tswarp.cdist(Xi.astype(np.float64)))
    v = tswarp.dtw(X32[0], X32[1])
    assert type(v) is float
    # float32 really computes in float32: close to, but not bitwise, the float64 result
    np.testing.assert_allclose(tswarp.cdist(X32, X32), tswarp.cdist(X32.astype(np.float64)), rtol=1e-5)
    # a float32 / float64 pair computes in float64
    assert tswarp.dtw(X32[0], X64[1]) == tswarp.dtw(X32[0].astype(np.float64), X64[1])


@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_distance_dispatch_and_device_cpu(rng, metric):
    assert metric in tswarp.METRICS
    a, b = series(rng, 13, 2), series(rng, 9, 2)
    params = METRIC_PARAMS[metric]
    v = FUNCS[metric](a, b, **params)
    assert tswarp.distance(a, b, metric=metric, **params) == v
    assert FUNCS[metric](a, b, device="cpu", **params) == v
    assert_matrix_close(tswarp.cdist([a], [b], metric=metric, device="cpu", **params), [[v]], params, [a], [b])


def test_info():
    info = tswarp.info()
    assert info["version"] == tswarp.__version__
    assert isinstance(info["threads"], int) and info["threads"] >= 1
    assert info["simd"] in ("avx2", "sse2", "scalar")
    assert isinstance(info["cuda_built"], bool)
    assert isinstance(info["cuda_devices"], int) and info["cuda_devices"] >= 0
