"""tswarp against brute-force references written here from the definitions.

Each reference fills the full (n+1) x (m+1) dynamic-programming matrix in plain Python
(local costs vectorised with numpy), with no rolling rows, bands or other tricks, so that a
shared mistake between the C reference and the fast kernels cannot hide. Float64 results
must agree to 1e-12 relative to the scale of the matrix; float32 inputs, which tswarp
computes in float32, are compared with the float64 reference on the same rounded values.

The windows are written from their documented definitions: Sakoe-Chiba radius r (cells)
with tslearn's rule for unequal lengths, fraction f -> r = floor(f * min(n, m)), and
tslearn's Itakura mask transcribed below.
"""

import math

import numpy as np
import pytest

import tswarp
from conftest import channels_last, unit_rows

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)

F64_TOL = 1e-12
F32_TOL = 1e-4


# ---------------------------------------------------------------------------------------
# windows
# ---------------------------------------------------------------------------------------
def sakoe_chiba_mask(n, m, radius):
    """Cell (i, j) is admissible iff -r - max(0, n-m) <= j - i <= r + max(0, m-n)."""
    i = np.arange(n)[:, None]
    j = np.arange(m)[None, :]
    return (j - i >= -radius - max(0, n - m)) & (j - i <= radius + max(0, m - n))


def _round2(x):
    # numpy's round(x, decimals=2), which tslearn's mask uses
    return np.rint(x * 100.0) / 100.0


def itakura_mask(n, m, max_slope):
    """tslearn.metrics.itakura_mask(n, m, max_slope): column j admits rows [lo_j, hi_j)."""
    min_s = (1.0 / max_slope) * (n / m)
    max_s = max_slope * (n / m)
    j = np.arange(m, dtype=np.float64)
    lo = np.ceil(np.maximum(_round2(min_s * j), _round2((n - 1) - max_s * (m - 1) + max_s * j)))
    hi = np.floor(np.minimum(_round2(max_s * j), _round2((n - 1) - min_s * (m - 1) + min_s * j)) + 1)
    mask = np.zeros((n, m), dtype=bool)
    for col in range(m):
        mask[max(int(lo[col]), 0) : max(int(hi[col]), 0), col] = True
    return mask


def window_mask(n, m, window=None, radius=None, itakura_max_slope=None):
    if itakura_max_slope is not None:
        return itakura_mask(n, m, itakura_max_slope)
    if window is not None:  # a fraction of the shorter length, whatever its type
        return sakoe_chiba_mask(n, m, math.floor(window * min(n, m)))
    if radius is not None:
        return sakoe_chiba_mask(n, m, radius)
    return np.ones((n, m), dtype=bool)


# ---------------------------------------------------------------------------------------
# brute-force references: return (value, scale) where scale = max |finite matrix entry|
# ---------------------------------------------------------------------------------------
def local_costs(a, b, cost):
    """(n, m) matrix of local costs between the points of a (n, d) and b (m, d)."""
    diff = a[:, None, :] - b[None, :, :]
    if cost == "sqeuclidean":
        return (diff**2).sum(-1)
    if cost == "euclidean":
        return np.sqrt((diff**2).sum(-1))
    if cost == "abs":
        return np.abs(diff).sum(-1)
    if cost == "cosine":
        a, b = unit_rows(a, np.float64), unit_rows(b, np.float64)  # the library's unit vectors
        dot = a @ b.T
        na = np.sqrt((a**2).sum(-1))[:, None]
        nb = np.sqrt((b**2).sum(-1))[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            c = 1.0 - dot / (na * nb)
        za, zb = na == 0, nb == 0
        c = np.where(za & zb, 0.0, np.where(za | zb, 1.0, c))
        return c
    raise AssertionError(cost)


def _scale(D):
    finite = D[np.isfinite(D)]
    return float(np.abs(finite).max()) if finite.size else 1.0


def dtw_brute(a, b, cost, mask):
    """Accumulated DTW cost: D(i,j) = c(i,j) + min(D(i-1,j-1), D(i-1,j), D(i,j-1))."""
    C = local_costs(a, b, cost).tolist()
    n, m = len(a), len(b)
    D = [[math.inf] * (m + 1) for _ in range(n + 1)]
    D[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if mask[i - 1, j - 1]:
                D[i][j] = C[i - 1][j - 1] + min(D[i - 1][j - 1], D[i - 1][j], D[i][j - 1])
    return D[n][m], _scale(np.array(D))


def soft_dtw_brute(a, b, gamma, mask):
    """Soft-DTW with the textbook soft minimum -gamma log sum exp(-r/gamma) (no max trick)."""
    C = local_costs(a, b, "sqeuclidean").tolist()
    n, m = len(a), len(b)
    R = [[math.inf] * (m + 1) for _ in range(n + 1)]
    R[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if mask[i - 1, j - 1]:
                s = sum(math.exp(-r / gamma) for r in (R[i - 1][j - 1], R[i - 1][j], R[i][j - 1]))
                R[i][j] = C[i - 1][j - 1] - gamma * math.log(s) if s > 0 else math.inf
    return R[n][m], _scale(np.array(R))


def twed_brute(a, b, ta, tb, nu, lmbda, p, mask):
    """Marteau's TWED, transcribed from the paper's padded recurrence.

    Both series are padded in front with the point 0 at time 0; with A, B, TA, TB the
    padded arrays, D(0,0) = 0, D(i,0) = D(0,j) = inf and for i, j >= 1:
      delete_a = D(i-1,j) + |A_i - A_{i-1}|_p + nu |TA_i - TA_{i-1}| + lmbda
      delete_b = D(i,j-1) + |B_j - B_{j-1}|_p + nu |TB_j - TB_{j-1}| + lmbda
      match    = D(i-1,j-1) + |A_i - B_j|_p + |A_{i-1} - B_{j-1}|_p
                            + nu (|TA_i - TB_j| + |TA_{i-1} - TB_{j-1}|)
    and D(i,j) = min of the three, over the cells the window admits.
    """
    d = a.shape[1]
    A = np.vstack([np.zeros((1, d)), a])
    B = np.vstack([np.zeros((1, d)), b])
    TA = np.concatenate([[0.0], ta]).tolist()
    TB = np.concatenate([[0.0], tb]).tolist()

    def lp(x, y):
        return (np.abs(x - y) ** p).sum(-1) ** (1.0 / p)

    DA = [0.0] + lp(A[1:], A[:-1]).tolist()
    DB = [0.0] + lp(B[1:], B[:-1]).tolist()
    M = lp(A[:, None, :], B[None, :, :]).tolist()  # (n+1, m+1): every padded pair
    n, m = len(a), len(b)
    D = [[math.inf] * (m + 1) for _ in range(n + 1)]
    D[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if not mask[i - 1, j - 1]:
                continue
            delete_a = D[i - 1][j] + DA[i] + nu * abs(TA[i] - TA[i - 1]) + lmbda
            delete_b = D[i][j - 1] + DB[j] + nu * abs(TB[j] - TB[j - 1]) + lmbda
            match = (
                D[i - 1][j - 1]
                + M[i][j]
                + M[i - 1][j - 1]
                + nu * (abs(TA[i] - TB[j]) + abs(TA[i - 1] - TB[j - 1]))
            )
            D[i][j] = min(delete_a, delete_b, match)
    return D[n][m], _scale(np.array(D))


# ---------------------------------------------------------------------------------------
# random cases
# ---------------------------------------------------------------------------------------
def draw_length(rng, max_len):
    # short lengths (1, 2, 3) are where boundaries and bands go wrong: draw them often
    if rng.random() < 0.2:
        return int(rng.integers(1, 4))
    return int(rng.integers(1, max_len + 1))


def draw_series(rng, n, d, zero_rows=False):
    x = rng.normal(size=(n, d)) * rng.choice([0.1, 1.0, 10.0]) + rng.normal() * rng.choice([0.0, 3.0])
    if zero_rows and n > 0:
        # exact zero vectors (cosine's special cases), and repeated points
        rows = rng.random(n) < 0.3
        x[rows] = 0.0
    if n > 2 and rng.random() < 0.2:
        x[1] = x[0]
    return x


def draw_window(rng, n, m, allow_itakura=True):
    """Window keywords: none, a radius in cells, a fraction, or an Itakura slope."""
    kind = rng.integers(0, 4 if allow_itakura else 3)
    if kind == 0:
        return {}
    if kind == 1:
        return {"radius": int(rng.integers(0, max(n, m) + 2))}
    if kind == 2:
        # a fraction whatever its type: the ints 0 and 1 are the diagonal and the full band
        f = [0, 1, 0.0, 1.0, float(rng.random()), float(rng.random())][int(rng.integers(6))]
        return {"window": f}
    return {"itakura_max_slope": float(rng.choice([1.0, rng.uniform(1.0, 4.0)]))}


def precise(x, dtype):
    """x as tswarp receives it, and the same rounded values in float64 for the reference."""
    xd = x.astype(dtype)
    return xd, xd.astype(np.float64)


def check(actual, expected, scale, dtype, what):
    tol = F64_TOL if dtype == np.float64 else F32_TOL
    if math.isinf(expected):
        assert actual == expected, what
        return
    assert math.isfinite(actual), what
    assert abs(actual - expected) <= tol * abs(expected) + tol * scale, (
        f"{what}: tswarp {actual!r} reference {expected!r} (diff {actual - expected:.3e}, scale {scale:.3e})"
    )


DTYPES = [np.float64, np.float32]
COSTS = ["sqeuclidean", "euclidean", "abs", "cosine"]


# ---------------------------------------------------------------------------------------
# DTW
# ---------------------------------------------------------------------------------------
def dtw_expected(acc, cost, accumulated):
    # tswarp returns sqrt(accumulated) for the default squared Euclidean cost unless
    # accumulated=True; the other costs always return the accumulated cost.
    if cost == "sqeuclidean" and not accumulated:
        return math.sqrt(acc)
    return acc


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("cost", COSTS)
def test_dtw_matches_bruteforce(rng, cost, dtype):
    for trial in range(40):
        n, m = draw_length(rng, 40), draw_length(rng, 40)
        d = int(rng.choice([1, 1, 2, 3, 5, 16]))
        a, a64 = precise(draw_series(rng, n, d, zero_rows=cost == "cosine"), dtype)
        b, b64 = precise(draw_series(rng, m, d, zero_rows=cost == "cosine"), dtype)
        win = draw_window(rng, n, m)
        acc, scale = dtw_brute(a64, b64, cost, window_mask(n, m, **win))
        accumulated = bool(rng.integers(0, 2))
        # univariate series are passed as (n,) half the time, as users do
        aa = a[:, 0] if d == 1 and trial % 2 else a
        bb = b[:, 0] if d == 1 and trial % 2 else b
        got = tswarp.dtw(aa, bb, cost=cost, accumulated=accumulated, **win)
        what = f"seed={rng.seed} trial={trial} dtw n={n} m={m} d={d} cost={cost} acc={accumulated} {win}"
        check(got, dtw_expected(acc, cost, accumulated), scale, dtype, what)


@pytest.mark.parametrize("cost", COSTS)
def test_dtw_long_pair_matches_bruteforce(rng, cost):
    """Long pairs take the anti-diagonal path of the fast kernels."""
    n, m = int(rng.integers(280, 360)), int(rng.integers(280, 360))
    d = int(rng.choice([1, 3]))
    a = draw_series(rng, n, d, zero_rows=cost == "cosine")
    b = draw_series(rng, m, d, zero_rows=cost == "cosine")
    win = {"radius": int(rng.integers(0, 60))} if rng.random() < 0.5 else {}
    acc, scale = dtw_brute(a, b, cost, window_mask(n, m, **win))
    got = tswarp.dtw(a, b, cost=cost, accumulated=True, **win)
    check(got, acc, scale, np.float64, f"seed={rng.seed} long dtw n={n} m={m} d={d} cost={cost} {win}")


def test_dtw_cosine_zero_vectors():
    """Cosine cost: 0 between two zero vectors, 1 between a zero and a non-zero vector."""
    z = np.zeros((1, 3))
    x = np.array([[1.0, -2.0, 0.5]])
    assert tswarp.dtw(z, z, cost="cosine") == 0.0
    assert tswarp.dtw(z, x, cost="cosine") == 1.0
    assert tswarp.dtw(x, z, cost="cosine") == 1.0
    # a path through zero and non-zero points sums those cases
    a = np.array([[0.0, 0.0], [1.0, 0.0]])
    b = np.array([[0.0, 0.0], [0.0, 0.0], [2.0, 0.0]])
    acc, _ = dtw_brute(a, b, "cosine", np.ones((2, 3), bool))
    assert tswarp.dtw(a, b, cost="cosine") == pytest.approx(acc, rel=1e-15, abs=1e-15)


# ---------------------------------------------------------------------------------------
# TWED
# ---------------------------------------------------------------------------------------
def draw_times(rng, n):
    """Strictly increasing, irregular timestamps starting after the boundary time 0."""
    steps = rng.choice([rng.uniform(0.01, 3.0, n), rng.exponential(1.0, n) + 1e-3, np.ones(n)])
    return rng.uniform(0.01, 5.0) + np.concatenate([[0.0], np.cumsum(steps[1:])])


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_twed_matches_paper_recurrence(rng, p, dtype):
    for trial in range(30):
        n, m = draw_length(rng, 35), draw_length(rng, 35)
        d = int(rng.choice([1, 1, 2, 4, 16]))
        a, a64 = precise(draw_series(rng, n, d), dtype)
        b, b64 = precise(draw_series(rng, m, d), dtype)
        nu = float(rng.choice([0.0, 0.001, rng.uniform(0, 2)]))
        lmbda = float(rng.choice([0.0, 1.0, rng.uniform(0, 3)]))
        kw = {}
        if rng.random() < 0.6:
            ta, ta64 = precise(draw_times(rng, n), dtype)
            tb, tb64 = precise(draw_times(rng, m), dtype)
            kw = {"ta": ta, "tb": tb}
        else:
            # default timestamps are 1..n
            ta64, tb64 = np.arange(1.0, n + 1), np.arange(1.0, m + 1)
        win = draw_window(rng, n, m) if rng.random() < 0.3 else {}
        exp, scale = twed_brute(a64, b64, ta64, tb64, nu, lmbda, p, window_mask(n, m, **win))
        got = tswarp.twed(a, b, nu=nu, lmbda=lmbda, p=p, **kw, **win)
        what = (
            f"seed={rng.seed} trial={trial} twed n={n} m={m} d={d} nu={nu} lmbda={lmbda} p={p} "
            f"times={'given' if kw else 'default'} {win}"
        )
        check(got, exp, scale, dtype, what)


def test_twed_long_pair_matches_paper_recurrence(rng):
    n, m = int(rng.integers(250, 330)), int(rng.integers(250, 330))
    a, b = draw_series(rng, n, 2), draw_series(rng, m, 2)
    ta, tb = draw_times(rng, n), draw_times(rng, m)
    exp, scale = twed_brute(a, b, ta, tb, 0.01, 0.5, 2.0, np.ones((n, m), bool))
    got = tswarp.twed(a, b, nu=0.01, lmbda=0.5, ta=ta, tb=tb)
    check(got, exp, scale, np.float64, f"seed={rng.seed} long twed n={n} m={m}")


def test_twed_timestamps_not_after_the_boundary(rng):
    """Timestamps at or before the boundary time 0 (negative times).

    Marteau's recurrence takes |t_i - t_{i-1}|; the first deletion then costs nu |t_1 - 0|.
    tswarp must either compute exactly that or refuse the timestamps naming `ta`/`tb`;
    a value that differs from the paper's would be silent nonsense.
    """
    n, m = 6, 5
    a, b = draw_series(rng, n, 1), draw_series(rng, m, 1)
    ta = -10.0 + np.cumsum(rng.uniform(0.5, 2.0, n))
    tb = -3.0 + np.cumsum(rng.uniform(0.5, 2.0, m))
    try:
        got = tswarp.twed(a, b, nu=0.5, lmbda=0.1, ta=ta, tb=tb)
    except ValueError as e:
        assert "ta" in str(e) or "tb" in str(e), str(e)
        return
    exp, scale = twed_brute(a, b, ta, tb, 0.5, 0.1, 2.0, np.ones((n, m), bool))
    check(got, exp, scale, np.float64, f"seed={rng.seed} twed negative timestamps ta={ta} tb={tb}")


# ---------------------------------------------------------------------------------------
# Soft-DTW
# ---------------------------------------------------------------------------------------
def draw_gamma(rng, a, b):
    """A gamma for which the naive log-sum-exp neither underflows nor overflows.

    exp(-r/gamma) underflows past r/gamma ~ 745; every matrix entry lies between
    -gamma log(3) (n+m) and (n+m) max c, so gamma is raised until max/gamma < 600.
    """
    gamma = float(rng.choice([0.1, 0.5, 1.0, 2.0, 10.0]))
    n, m = len(a), len(b)
    cmax = float(local_costs(a, b, "sqeuclidean").max())
    return max(gamma, (n + m) * cmax / 600.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_soft_dtw_matches_naive_logsumexp(rng, dtype):
    for trial in range(60):
        n, m = draw_length(rng, 30), draw_length(rng, 30)
        d = int(rng.choice([1, 1, 2, 3, 8]))
        a, a64 = precise(draw_series(rng, n, d), dtype)
        b, b64 = precise(draw_series(rng, m, d), dtype)
        gamma = draw_gamma(rng, a64, b64)
        win = draw_window(rng, n, m) if rng.random() < 0.4 else {}
        exp, scale = soft_dtw_brute(a64, b64, gamma, window_mask(n, m, **win))
        got = tswarp.soft_dtw(a, b, gamma=gamma, **win)
        what = f"seed={rng.seed} trial={trial} soft_dtw n={n} m={m} d={d} gamma={gamma} {win}"
        check(got, exp, scale, dtype, what)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_soft_dtw_divergence_matches_naive(rng, dtype):
    for trial in range(20):
        n, m = draw_length(rng, 25), draw_length(rng, 25)
        d = int(rng.choice([1, 2, 4]))
        a, a64 = precise(draw_series(rng, n, d), dtype)
        b, b64 = precise(draw_series(rng, m, d), dtype)
        gamma = max(draw_gamma(rng, a64, b64), draw_gamma(rng, a64, a64), draw_gamma(rng, b64, b64))
        ab, s1 = soft_dtw_brute(a64, b64, gamma, np.ones((n, m), bool))
        aa, s2 = soft_dtw_brute(a64, a64, gamma, np.ones((n, n), bool))
        bb, s3 = soft_dtw_brute(b64, b64, gamma, np.ones((m, m), bool))
        got = tswarp.soft_dtw(a, b, gamma=gamma, normalize=True)
        what = f"seed={rng.seed} trial={trial} sdtw divergence n={n} m={m} d={d} gamma={gamma}"
        check(got, ab - (aa + bb) / 2, max(s1, s2, s3), dtype, what)


def test_soft_dtw_long_pair_matches_naive(rng):
    # n + m <= 600 keeps exp(-R/gamma) <= 3^(n+m) below the float64 overflow
    n, m = int(rng.integers(200, 300)), int(rng.integers(200, 300))
    a, b = draw_series(rng, n, 1) * 0.1, draw_series(rng, m, 1) * 0.1
    gamma = draw_gamma(rng, a, b)
    exp, scale = soft_dtw_brute(a, b, gamma, np.ones((n, m), bool))
    got = tswarp.soft_dtw(a, b, gamma=gamma)
    check(got, exp, scale, np.float64, f"seed={rng.seed} long soft_dtw n={n} m={m} gamma={gamma}")


# ---------------------------------------------------------------------------------------
# batch paths (SIMD lanes across pairs) against the same references
# ---------------------------------------------------------------------------------------
def _brute_pair(metric, a, b, params, mask):
    if metric == "dtw":
        cost = params.get("cost", "sqeuclidean")
        acc, scale = dtw_brute(a, b, cost, mask)
        if cost == "cosine":
            # 1 - <x,y>/(|x||y|) cancels for nearly parallel points: its rounding error is
            # absolute, an ulp of 1 per cell, not relative to the (tiny) cost. A float32
            # pair of 2-D points 0.003 rad apart costs 4.5e-6 with an error of 9e-8 (found
            # by replaying seeds of this test: it failed about once in a thousand runs)
            scale = max(scale, float(len(a) + len(b)))
        return dtw_expected(acc, cost, False), scale
    if metric == "twed":
        n, m = len(a), len(b)
        return twed_brute(a, b, np.arange(1.0, n + 1), np.arange(1.0, m + 1),
                          params["nu"], params["lmbda"], 2.0, mask)
    return soft_dtw_brute(a, b, params["gamma"], mask)


METRIC_PARAMS = {
    "dtw": [{}, {"cost": "abs"}, {"cost": "cosine"}],
    "twed": [{"nu": 0.001, "lmbda": 1.0}, {"nu": 0.3, "lmbda": 0.0}],
    "soft_dtw": [{"gamma": 1.0}, {"gamma": 0.3}],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_cdist_matches_bruteforce(rng, metric, dtype):
    for layout in ("equal", "ragged"):
        params = dict(METRIC_PARAMS[metric][rng.integers(len(METRIC_PARAMS[metric]))])
        d = int(rng.choice([1, 2, 3]))
        nx, ny = int(rng.integers(1, 11)), int(rng.integers(1, 8))
        if layout == "equal":
            L = int(rng.integers(1, 30))
            X = draw_series(rng, nx * L, d).reshape(nx, L, d).astype(dtype)
            Y = draw_series(rng, ny * L, d).reshape(ny, L, d).astype(dtype)
            xs, ys = list(X), list(Y)
        else:
            xs = [draw_series(rng, draw_length(rng, 30), d).astype(dtype) for _ in range(nx)]
            ys = [draw_series(rng, draw_length(rng, 30), d).astype(dtype) for _ in range(ny)]
            X, Y = xs, ys
        if metric == "soft_dtw":
            params["gamma"] = max([params["gamma"]] + [draw_gamma(rng, x, y) for x in xs for y in ys])
        win = draw_window(rng, 20, 20, allow_itakura=False) if rng.random() < 0.5 else {}
        got = tswarp.cdist(X, Y, metric=metric, **params, **win)
        assert got.shape == (nx, ny)
        for i, x in enumerate(xs):
            for j, y in enumerate(ys):
                x64, y64 = x.astype(np.float64), y.astype(np.float64)
                exp, scale = _brute_pair(metric, x64, y64, params, window_mask(len(x), len(y), **win))
                what = (f"seed={rng.seed} cdist {metric} {layout} ({i},{j}) "
                        f"n={len(x)} m={len(y)} d={d} {params} {win}")
                check(float(got[i, j]), exp, scale, dtype, what)


@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_skewed_long_pairs_match_bruteforce(rng, metric, dtype):
    """One series long, the other short (n/m from 10 to 500): the long-pair kernels must
    handle anti-diagonals much longer than the short side, in both orders."""
    for trial in range(4):
        n, m = int(rng.integers(300, 1001)), int(rng.integers(2, 41))
        if trial % 2:
            n, m = m, n
        d = int(rng.choice([1, 3]))
        a, a64 = precise(draw_series(rng, n, d), dtype)
        b, b64 = precise(draw_series(rng, m, d), dtype)
        full = np.ones((n, m), bool)
        what = f"seed={rng.seed} trial={trial} skewed {metric} n={n} m={m} d={d}"
        if metric == "dtw":
            cost = str(rng.choice(COSTS))
            exp, scale = dtw_brute(a64, b64, cost, full)
            check(tswarp.dtw(a, b, cost=cost, accumulated=True), exp, scale, dtype, f"{what} cost={cost}")
        elif metric == "twed":
            ta, ta64 = precise(draw_times(rng, n), dtype)
            tb, tb64 = precise(draw_times(rng, m), dtype)
            exp, scale = twed_brute(a64, b64, ta64, tb64, 0.01, 1.0, 2.0, full)
            check(tswarp.twed(a, b, ta=ta, tb=tb, nu=0.01), exp, scale, dtype, what)
        else:
            # with m <= 40 the entries stay above -gamma m log(e (n + m) / m), far from overflow
            gamma = draw_gamma(rng, a64, b64)
            exp, scale = soft_dtw_brute(a64, b64, gamma, full)
            check(tswarp.soft_dtw(a, b, gamma=gamma), exp, scale, dtype, f"{what} gamma={gamma}")


def test_cosine_float32_error_is_absolute():
    """The pair that made test_cdist_matches_bruteforce[dtw-f32] fail once in about a
    thousand runs: nearly parallel float32 points, whose cosine cost 1 - cos cancels."""
    x = np.array([[[1.0, 0.0]]], dtype=np.float32)
    y = np.array([[[1.0, 3e-3]]], dtype=np.float32)
    got = float(tswarp.cdist(x, y, metric="dtw", cost="cosine", layout="channels_last")[0, 0])
    exp, scale = _brute_pair("dtw", x[0].astype(np.float64), y[0].astype(np.float64),
                             {"cost": "cosine"}, np.ones((1, 1), bool))
    assert abs(got - exp) > F32_TOL * abs(exp) * 2  # the relative error alone is too strict
    check(got, exp, scale, np.float32, "nearly parallel float32 points")
    assert abs(got - exp) <= 4 * np.finfo(np.float32).eps  # an ulp or so of 1
