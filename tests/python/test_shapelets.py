"""Shapelets: find_shapelet against a brute force written here (eq. 2 computed directly, the
order line scanned in plain Python), a hand-checked tree, logical shapelets on constructed
AND/OR problems, the transform, bad inputs, scikit-learn's estimator checks, plot and CLI."""

import math

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

from tswarp import _tswarp  # noqa: E402
from tswarp.datasets import gunpoint_path, load_gunpoint  # noqa: E402
from tswarp.shapelets import (  # noqa: E402
    ShapeletTransform,
    ShapeletTreeClassifier,
    find_shapelet,
    shapelet_distances,
)

TIE = 1e-7


# ---- brute force --------------------------------------------------------------------------


def _z(w):
    """z-normalise a window; a constant window (all values equal) becomes zeros."""
    if np.all(w == w[0]):
        return np.zeros_like(w)
    return (w - w.mean()) / w.std()


def _pairs(shape, ph):
    """(position in the phase, shapelet part, phase part) of every alignment: the windows of
    the phase when it holds the shape, else the phase against each window of the shape of
    its length (position -u: the phase lies along the shape's window at u)."""
    l, m = len(shape), len(ph)
    if m >= l:
        return [(u, shape, ph[u:u + l]) for u in range(m - l + 1)]
    return [(-u, shape[u:u + m], ph) for u in range(l - m + 1)]


def _d2(a, b, raw=False):
    d2 = float(np.mean((a - b) ** 2)) if raw else float(np.mean((_z(a) - _z(b)) ** 2))
    return 0.0 if d2 < 1e-12 else d2


def brute_distance(shape, x, d=1, raw=False):
    """The least, over the phases x[p], x[p + d], .. of x and their alignments with the shape
    (_pairs), of sqrt(mean((z(a) - z(b))^2)), or with raw of sqrt(mean((a - b)^2)) (the
    shapelets that are not normalised); d^2 < 1e-12 is 0."""
    shape = np.asarray(shape, dtype=np.float64)
    best = math.inf
    for p in range(d):
        for _, a, b in _pairs(shape, np.asarray(x[p::d], dtype=np.float64)):
            best = min(best, _d2(a, b, raw))
    return math.sqrt(best)


def fast_tol(shape, x, d=1):
    """The fast path's error bound on a distance near 0 (tswarp.h, shapelet conventions): a
    window's variance from prefix sums of its series (standardised as a whole) loses about
    (mean / std)^2 ulps, so d^2 = 2 (1 - corr) is off by up to ~m eps (ka + kb), k the
    worst (mean / std)^2 of the windows compared; plus the 1e-7 every path keeps."""
    shape = _z(np.asarray(shape, dtype=np.float64))
    worst = 1.0
    for p in range(d):
        ph = _z(np.asarray(x[p::d], dtype=np.float64))
        for _, a, b in _pairs(shape, ph):
            for w in (a, b):
                var = float(np.var(w))
                if var > 0:
                    worst = max(worst, float(np.mean(w)) ** 2 / var + 1)
    m = min(len(shape), max(len(x[p::d]) for p in range(d)))
    return 1e-7 + math.sqrt(32 * m * np.finfo(np.float64).eps * 2 * worst)


def brute_at(shape, x, d, pos):
    """The distance at a reported position: phase pos mod d, alignment pos // d there."""
    p = pos % d
    u = (pos - p) // d
    shape = np.asarray(shape, dtype=np.float64)
    ph = np.asarray(x[p::d], dtype=np.float64)
    [(_, a, b)] = [t for t in _pairs(shape, ph) if t[0] == u]
    return math.sqrt(_d2(a, b))


def _xlogx(c):
    return c * math.log(c) if c > 0 else 0.0


def _gap_key(g):
    return math.floor(g * 1e9 + 0.5)


def best_split(d, lab, C):
    """(gain, gap, threshold) of the best split of an order line, or None."""
    order = sorted(range(len(d)), key=lambda k: d[k])
    d = [d[k] for k in order]
    lab = [lab[k] for k in order]
    n = len(d)
    total = [lab.count(c) for c in range(C)]
    nent = _xlogx(n) - sum(_xlogx(t) for t in total)
    best = None
    left = [0] * C
    for k in range(n - 1):
        left[lab[k]] += 1
        if not d[k + 1] - d[k] > TIE:
            continue
        nl = k + 1
        s = 0.0
        for c in range(C):
            s += _xlogx(left[c]) + _xlogx(total[c] - left[c])
        gain = (nent - ((_xlogx(nl) + _xlogx(n - nl)) - s)) / n
        gap = sum(d[nl:]) / (n - nl) - sum(d[:nl]) / nl
        if best is None or gain > best[0] or (gain == best[0] and _gap_key(gap) > _gap_key(best[1])):
            best = (gain, gap, 0.5 * (d[k] + d[k + 1]))
    return best


def brute_force(X, codes, C, lengths, dil=1, ovr=False, raw=False):
    """Every candidate (series, start, length): the best by gain, gap, then index order;
    ovr: each judged on its own series' class against the rest; raw: distances of the values
    themselves."""
    best = None
    for i, xi in enumerate(X):
        for s in range(len(xi)):
            for l in lengths:
                if s + (l - 1) * dil >= len(xi):
                    continue
                d = [brute_distance(xi[s:s + (l - 1) * dil + 1:dil], xj, dil, raw) for xj in X]
                r = best_split(d, [int(c == codes[i]) for c in codes], 2) if ovr else \
                    best_split(d, codes, C)
                if r is None:
                    continue
                cand = (r[0], r[1], r[2], i, s, l)
                if best is None or r[0] > best[0] or (
                        r[0] == best[0] and _gap_key(r[1]) > _gap_key(best[1])):
                    best = cand
    return best


def _random_problem(rng, n, lo, hi, C, labels=None):
    X = [rng.standard_normal(int(rng.integers(lo, hi + 1))) for _ in range(n)]
    codes = np.arange(n) % C
    rng.shuffle(codes)
    for i in range(n):  # a class-specific bump, so that good shapelets exist
        p = int(rng.integers(0, len(X[i]) - 3))
        X[i][p:p + 3] += (codes[i] + 1) * np.array([1.0, 2.0, 1.0])
    if labels is None:
        return X, codes
    return X, np.asarray(labels)[codes]


@pytest.mark.parametrize("C", [2, 3])
def test_find_shapelet_equals_brute_force(rng, C):
    labels = ["gun", "point", "other"][:C]
    for _ in range(3):
        n = int(rng.integers(5, 9))
        X, y = _random_problem(rng, n, 8, 13, C, labels)
        minl = int(rng.integers(2, 4))
        step = int(rng.integers(1, 3))
        # (length 2 alone cannot split noise: every series has an up and a down step); up
        # to the longest series, which the shorter ones slide along
        maxl = int(rng.integers(minl + 2, max(len(x) for x in X) + 1))
        lengths = list(range(minl, maxl + 1, step))
        classes, codes = np.unique(y, return_inverse=True)
        gain, gap, thr, i, s, l = brute_force(X, list(codes), C, lengths)
        got = find_shapelet(X, y, min_length=minl, max_length=maxl, length_step=step)
        msg = f"seed {rng.seed}"
        assert (got.series, got.start, got.length) == (i, s, l), msg
        assert got.gain == pytest.approx(gain, rel=0, abs=1e-12), msg
        assert got.threshold == pytest.approx(thr, abs=1e-7), msg
        assert got.gap == pytest.approx(gap, abs=1e-7), msg
        np.testing.assert_array_equal(got.values, X[i][s:s + l])
        # the reference implementation (eq. 2 directly, in C) agrees too
        Xs_v = np.concatenate(X)
        lens = np.array([len(x) for x in X], dtype=np.int64)
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        ref = _tswarp._shapelet_search(Xs_v, offs, lens, codes.astype(np.int32), C, minl, maxl,
                                       step, _impl="reference")
        assert ref[:3] == (i, s, l), msg
        assert ref[4] == got.gain


def test_find_shapelet_dilated_equals_brute_force(rng):
    """Dilation d: candidates and windows x[s], x[s + d], ..: the best shapelet, its split
    and its distances as written out here; the reference path in C agrees."""
    for trial in range(3):
        d = 2 + trial % 2
        n = int(rng.integers(5, 8))
        X, y = _random_problem(rng, n, 5 * d, 10 * d, 2)
        longest = max(len(x) for x in X)
        lengths = list(range(3, min(7, longest // d) + 1))
        gain, gap, thr, i, s, l = brute_force(X, list(y), 2, lengths, d)
        got = find_shapelet(X, y, min_length=3, max_length=lengths[-1], dilation=d)
        msg = f"seed {rng.seed}"
        assert (got.series, got.start, got.length, got.dilation) == (i, s, l, d), msg
        assert got.gain == pytest.approx(gain, rel=0, abs=1e-12), msg
        assert got.threshold == pytest.approx(thr, abs=1e-7), msg
        assert got.gap == pytest.approx(gap, abs=1e-7), msg
        np.testing.assert_array_equal(got.values, X[i][s:s + (l - 1) * d + 1:d])
        D, P = shapelet_distances([got.values], X, dilations=[d], return_positions=True)
        for j, x in enumerate(X):
            assert D[j, 0] == pytest.approx(brute_distance(got.values, x, d), abs=1e-7), msg
            assert brute_at(got.values, x, d, int(P[j, 0])) == pytest.approx(D[j, 0], abs=1e-7)
        Xs_v = np.concatenate(X)
        lens = np.array([len(x) for x in X], dtype=np.int64)
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        ref = _tswarp._shapelet_search(Xs_v, offs, lens, np.asarray(y, np.int32), 2, 3,
                                       lengths[-1], 1, _impl="reference", dilation=d)
        assert ref[:3] == (i, s, l) and ref[4] == got.gain and ref[6] == d, msg
    # dilation 1 is the plain search; bad dilations are refused by name
    X, y = _random_problem(rng, 6, 12, 14, 2)
    a, b = find_shapelet(X, y, max_length=5), find_shapelet(X, y, max_length=5, dilation=1)
    assert (a.series, a.start, a.length, a.gain, a.threshold, a.dilation) == \
        (b.series, b.start, b.length, b.gain, b.threshold, 1)
    np.testing.assert_array_equal(a.values, b.values)
    for bad, err in ((0, ValueError), (5, ValueError), (2.0, TypeError), ([2], TypeError)):
        with pytest.raises(err, match="dilation"):
            find_shapelet(X, y, dilation=bad)
    with pytest.raises(ValueError, match="max_length"):
        find_shapelet(X, y, max_length=max(len(x) for x in X) // 2 + 1, dilation=2)


def test_transform_dilations(rng):
    """ShapeletTransform over dilations (1, 2, 3): the k best of every dilation's list, each
    compared with windows spaced by its own dilation; no two spans overlap within a series
    and dilation."""
    X, y = _random_problem(rng, 8, 24, 30, 2)
    T = ShapeletTransform(n_shapelets=12, min_length=3, max_length=6, dilation=(3, 1, 2),
                          features=("distance", "occurrence", "position")).fit(X, y)
    shp = T.shapelets_
    assert len(shp) == 12 and {s.dilation for s in shp} <= {1, 2, 3}
    longest = max(len(x) for x in X)
    for s in shp:
        assert 3 <= s.length <= min(6, longest // s.dilation)
    ranked = []  # the k best of each dilation's own list, merged
    for d in (1, 2, 3):
        Td = ShapeletTransform(n_shapelets=12, min_length=3, max_length=6, dilation=d).fit(X, y)
        assert all(s.dilation == d for s in Td.shapelets_)
        ranked += [(-s.gain, -_gap_key(s.gap), s.series, s.start, s.length, d)
                   for s in Td.shapelets_]
    assert [(s.series, s.start, s.length, s.dilation) for s in shp] == \
        [r[2:] for r in sorted(ranked)[:12]]
    for a in range(len(shp)):
        for b in range(a):
            sa, sb = shp[a], shp[b]
            if sa.series == sb.series and sa.dilation == sb.dilation:
                span = (sa.length - 1) * sa.dilation + 1
                assert sa.start + span <= sb.start or sb.start + (sb.length - 1) * sb.dilation \
                    + 1 <= sa.start
    F = T.transform(X)
    k = len(shp)
    for j, x in enumerate(X):
        for c, s in enumerate(shp):
            span = (s.length - 1) * s.dilation + 1
            assert F[j, c] == pytest.approx(brute_distance(s.values, x, s.dilation), abs=1e-7)
            near = sum(brute_distance(s.values, x[u:u + span:s.dilation]) <= s.threshold
                       for u in range(len(x) - span + 1))
            assert F[j, k + c] == pytest.approx(near / (len(x) - span + 1), abs=1 / len(x))
            assert 0.0 <= F[j, 2 * k + c] <= 1.0
    with pytest.raises(ValueError, match="dilation"):
        ShapeletTransform(dilation=(1, 40)).fit(X, y)
    with pytest.raises(ValueError, match="dilation"):
        ShapeletTransform(dilation=()).fit(X, y)


def test_distances_equal_brute_force(rng):
    X = [rng.standard_normal(int(rng.integers(10, 30))) for _ in range(6)]
    X[2][3:9] = 1.5  # constant stretch: distance 0 to a constant shapelet, 1 to others
    shapes = [rng.standard_normal(4), X[0][2:7], np.full(3, 2.0), rng.standard_normal(9)]
    D, P = shapelet_distances(shapes, X, return_positions=True)
    assert D.shape == (6, 4) and P.shape == (6, 4)
    for j, x in enumerate(X):
        for k, s in enumerate(shapes):
            assert D[j, k] == pytest.approx(brute_distance(s, x), abs=1e-7)
            w = x[P[j, k]:P[j, k] + len(s)]
            assert brute_distance(s, w) == pytest.approx(D[j, k], abs=1e-7)
    assert D[0, 1] == 0.0 and P[0, 1] == 2
    assert D[2, 2] == 0.0  # constant shapelet, constant window
    assert not np.isnan(D).any()


@pytest.mark.parametrize("dil", [1, 2])
def test_find_shapelet_raw_equals_brute_force(rng, dil):
    """normalize=False (distances of the values themselves) against the brute force. The
    library shifts and scales the collection as a whole (include/tswarp.h), so the brute
    force runs on the data so standardised and its thresholds and gaps, times the data's
    std, are the ones reported; the distances are in the data's units."""
    for _ in range(3):
        n = int(rng.integers(5, 8))
        X, y = _random_problem(rng, n, 6 * dil, 11 * dil, 2)
        X = [50.0 + 4.0 * x + 1.5 * c for x, c in zip(X, y)]  # the classes' levels differ
        allv = np.concatenate(X)
        mu, sd = allv.mean(), allv.std()
        longest = max(len(x) for x in X)
        lengths = list(range(2, min(6, longest // dil) + 1))
        gain, gap, thr, i, s, l = brute_force([(x - mu) / sd for x in X], list(y), 2, lengths,
                                              dil, raw=True)
        got = find_shapelet(X, y, min_length=2, max_length=lengths[-1], dilation=dil,
                            normalize=False)
        msg = f"seed {rng.seed}"
        assert (got.series, got.start, got.length, got.normalized) == (i, s, l, False), msg
        assert got.gain == pytest.approx(gain, rel=0, abs=1e-12), msg
        assert got.threshold == pytest.approx(thr * sd, abs=1e-7 * sd), msg
        assert got.gap == pytest.approx(gap * sd, abs=1e-7 * sd), msg
        D = shapelet_distances([got.values], X, dilations=[dil], normalize=False)[:, 0]
        for j, x in enumerate(X):
            assert D[j] == pytest.approx(brute_distance(got.values, x, dil, raw=True),
                                         abs=1e-9 * sd), msg
        left = D <= got.threshold
        assert left.any() and not left.all()
        Dz = shapelet_distances([got.values], X, dilations=[dil])[:, 0]
        assert not np.allclose(Dz, D)  # the z-normalised distance is another one


def test_transform_normalize(rng):
    """normalize=False: every shapelet compared as it is (features as the brute force's);
    'both': the k best of the two kinds' lists merged, each compared its own way."""
    X, y = _random_problem(rng, 8, 18, 24, 2)
    X = [x + 2.0 * c for x, c in zip(X, y)]
    kw = dict(n_shapelets=10, min_length=3, max_length=6, features=("distance", "occurrence"))
    Tr = ShapeletTransform(normalize=False, **kw).fit(X, y)
    shp = Tr.shapelets_
    assert len(shp) == 10 and not any(s.normalized for s in shp)
    F = Tr.transform(X)
    for j, x in enumerate(X):
        for c, s in enumerate(shp):
            assert F[j, c] == pytest.approx(brute_distance(s.values, x, raw=True), abs=1e-7)
            near = sum(brute_distance(s.values, x[u:u + s.length], raw=True) <= s.threshold
                       for u in range(len(x) - s.length + 1))
            assert F[j, 10 + c] == pytest.approx(near / (len(x) - s.length + 1),
                                                 abs=1 / len(x))
    Tz = ShapeletTransform(normalize=True, **kw).fit(X, y)
    Tb = ShapeletTransform(normalize="both", **kw).fit(X, y)
    ranked = sorted([(-s.gain, -_gap_key(s.gap), s.series, s.start, s.length, not s.normalized)
                     for s in Tz.shapelets_ + shp])[:10]
    assert [(s.series, s.start, s.length, not s.normalized) for s in Tb.shapelets_] == \
        [r[2:] for r in ranked]
    Fb = Tb.transform(X)
    for j, x in enumerate(X):
        for c, s in enumerate(Tb.shapelets_):
            want = brute_distance(s.values, x, raw=not s.normalized)
            assert Fb[j, c] == pytest.approx(want, abs=1e-7)
    for bad, err in (("yes", ValueError), (1, TypeError), (None, TypeError)):
        with pytest.raises(err, match="normalize"):
            ShapeletTransform(normalize=bad).fit(X, y)
    with pytest.raises(TypeError, match="normalize"):
        find_shapelet(X, y, normalize="both")
    with pytest.raises(ValueError, match="normalize"):
        shapelet_distances([X[0][:4]], X, normalize=[True, False])


def test_tree_raw_sees_levels(rng):
    """Classes that differ in level only: z-normalised shapelets see noise, shapelets
    compared as they are separate the classes (the tree on fresh series)."""
    def draw(n):
        y = np.arange(n) % 2
        return [rng.standard_normal(20) + 5.0 * c for c in y], y

    X, y = draw(20)
    Xt, yt = draw(40)
    raw = ShapeletTreeClassifier(min_length=3, max_length=8, normalize=False).fit(X, y)
    z = ShapeletTreeClassifier(min_length=3, max_length=8).fit(X, y)
    assert raw.score(Xt, yt) == 1.0
    assert z.score(Xt, yt) < 1.0
    assert all(not s.normalized for r in raw.shapelets_ for s in r["shapelets"])
    with pytest.raises(TypeError, match="normalize"):
        ShapeletTreeClassifier(normalize="no").fit(X, y)


def brute_windows(shape, x):
    """Every window's distance (eq. 2 computed directly)."""
    l = len(shape)
    zs = _z(np.asarray(shape, dtype=np.float64))
    return np.array([math.sqrt(float(np.mean((zs - _z(x[u:u + l])) ** 2)))
                     for u in range(len(x) - l + 1)])


def test_occurrences_equal_brute_force(rng):
    """Counts of windows within each threshold: d <= threshold counted directly (windows
    within 1e-7 of the threshold may go either way), on both implementations; a count is
    positive exactly when the distance is within the threshold."""
    for trial in range(4):
        X = [rng.standard_normal(int(rng.integers(12, 40))).cumsum() for _ in range(7)]
        X[1][2:10] = 0.5  # a constant stretch
        shapes = [X[0][3:9], X[4][1:5], np.full(4, 1.0), rng.standard_normal(7)]
        thr = rng.uniform(0.0, 1.2, size=4)
        thr[0] = 0.0  # exact matches only
        for impl in ("reference", "auto"):
            from tswarp.shapelets import _as_series, _distances
            D, P, Cnt = _distances(shapes, _as_series(X), device="cpu", _impl=impl,
                                   thresholds=thr)
            for j, x in enumerate(X):
                for k, s in enumerate(shapes):
                    w = brute_windows(s, x)
                    lo, hi = np.sum(w <= thr[k] - TIE), np.sum(w <= thr[k] + TIE)
                    assert lo <= Cnt[j, k] <= hi, (trial, impl, j, k, Cnt[j, k], lo, hi)
                    assert (Cnt[j, k] > 0) == (D[j, k] <= thr[k])
            assert Cnt[0, 0] >= 1  # the shapelet's own window
    D1 = shapelet_distances(shapes, X)
    D2, C2 = shapelet_distances(shapes, X, thresholds=thr)
    D3, P3, C3 = shapelet_distances(shapes, X, thresholds=thr, return_positions=True)
    np.testing.assert_array_equal(D1, D2)
    np.testing.assert_array_equal(C2, C3)
    for bad in ([0.1, 0.2], [0.1, 0.2, np.nan, 0.3], [0.1, -0.2, 0.1, 0.1], [1, 2, 3, np.inf]):
        with pytest.raises(ValueError, match="thresholds"):
            shapelet_distances(shapes, X, thresholds=bad)


def test_transform_features(rng):
    X, y = load_gunpoint("train")
    st = ShapeletTransform(n_shapelets=6, min_length=20, max_length=60, length_step=20,
                           features=("distance", "occurrence", "position")).fit(X, y)
    T = st.transform(X)
    k = st.n_shapelets_
    assert T.shape == (len(X), 3 * k) and st.features_ == ("distance", "occurrence", "position")
    names = st.get_feature_names_out()
    assert list(names[:2]) == ["shapelet0", "shapelet1"]
    assert names[k] == "shapelet0_occurrence" and names[2 * k] == "shapelet0_position"
    D, P, Cnt = shapelet_distances([s.values for s in st.shapelets_], X,
                                   thresholds=[s.threshold for s in st.shapelets_],
                                   return_positions=True)
    room = X.shape[1] - np.array([s.length for s in st.shapelets_])
    np.testing.assert_array_equal(T[:, :k], D)
    np.testing.assert_allclose(T[:, k:2 * k], Cnt / (room + 1))
    np.testing.assert_allclose(T[:, 2 * k:], P / room)
    assert np.all((T[:, k:2 * k] > 0) == (D <= [s.threshold for s in st.shapelets_]))
    assert 0 <= T[:, k:].min() and T[:, k:].max() <= 1
    # the order given is the order of the blocks; the default is the distances alone
    T2 = st.set_params(features=["occurrence", "distance"]).fit(X, y).transform(X)
    np.testing.assert_array_equal(T2, np.hstack([T[:, k:2 * k], T[:, :k]]))
    np.testing.assert_array_equal(st.set_params(features="distance").fit(X, y).transform(X), D)
    for bad in ("mean", (), ("distance", "distance"), ("distance", 3)):
        with pytest.raises(ValueError, match="features"):
            ShapeletTransform(features=bad).fit(X, y)
    with pytest.raises(TypeError, match="features"):
        ShapeletTransform(features=3).fit(X, y)


def test_transform_multivariate(rng):
    """(n, channels, len): every channel searched on its own; the k kept are the k best of
    all channels' lists (the C library's order), each compared with its own channel."""
    n, L = 24, 40
    y = np.repeat(["a", "b", "c"], n // 3)
    X = 0.3 * rng.standard_normal((n, 3, L)).cumsum(axis=2)
    bump = np.sin(np.linspace(0, np.pi, 9)) * 8
    for i in range(n):  # class-specific patterns in channels 1 and 2 only
        s = int(rng.integers(0, L - 9))
        if y[i] == "b":
            X[i, 1, s:s + 9] += bump
        elif y[i] == "c":
            X[i, 2, s:s + 9] -= bump
    kw = dict(min_length=5, max_length=15, length_step=5, n_shapelets=12)
    feats = ("distance", "occurrence", "position")
    st = ShapeletTransform(features=feats, layout="channels_first", **kw).fit(X, y)
    assert st.n_channels_ == 3 and st.n_shapelets_ == 12
    # tswarp's layout (n, len, channels) gives the same shapelets and features
    Xt = X.transpose(0, 2, 1)
    st2 = ShapeletTransform(features=feats, **kw).fit(Xt, y)
    assert [(s.series, s.start, s.length, s.channel) for s in st2.shapelets_] == \
        [(s.series, s.start, s.length, s.channel) for s in st.shapelets_]
    np.testing.assert_array_equal(st2.transform(Xt), st.transform(X))
    with pytest.raises(ValueError, match="layout='channels_first'"):  # aeon's, not said
        ShapeletTransform(features=feats, **kw).fit(X[:, :, :3], y)
    # the merge: the k best of the channels' own top-k lists, by gain then gap then position
    per = []
    for c in range(3):
        u = ShapeletTransform(**kw).fit(X[:, c, :], y)
        assert u.n_channels_ == 1
        per += [(-s.gain, -math.floor(s.gap * 1e9 + 0.5), s.series, s.start, s.length, c)
                for s in u.shapelets_]
    want = sorted(per)[:12]
    got = [(-s.gain, -math.floor(s.gap * 1e9 + 0.5), s.series, s.start, s.length, s.channel)
           for s in st.shapelets_]
    assert got == want
    assert st.shapelets_[0].channel in (1, 2)  # the best splits on a pattern, not on noise
    for s in st.shapelets_:
        np.testing.assert_array_equal(s.values, X[s.series, s.channel, s.start:s.start + s.length])
    # transform: each column from its own channel
    T = st.transform(X)
    k = st.n_shapelets_
    for j, s in enumerate(st.shapelets_):
        D, P, Cnt = shapelet_distances([s.values], X[:, s.channel, :], thresholds=[s.threshold],
                                       return_positions=True)
        np.testing.assert_array_equal(T[:, j], D[:, 0])
        np.testing.assert_allclose(T[:, k + j], Cnt[:, 0] / (L - s.length + 1))
        np.testing.assert_allclose(T[:, 2 * k + j], P[:, 0] / (L - s.length))
    with pytest.raises(ValueError, match="2 channel"):
        st.transform(X[:, :2, :])
    with pytest.raises(ValueError, match="1 channel"):
        st.transform(X[:, 0, :])
    u = ShapeletTransform(**kw).fit(X[:, 0, :], y)
    with pytest.raises(ValueError, match="fitted on 1"):
        u.transform(Xt)
    Xn = X.copy()
    Xn[3, 2, 5] = np.nan
    with pytest.raises(ValueError, match=r"X\[:, 2, :\]\[3\] contains NaN"):
        ShapeletTransform(layout="channels_first", **kw).fit(Xn, y)
    with pytest.raises(ValueError, match=r"X\[:, :, 2\]\[3\] contains NaN"):
        ShapeletTransform(**kw).fit(Xn.transpose(0, 2, 1), y)
    with pytest.raises(ValueError, match="multivariate"):  # the tree: univariate only
        ShapeletTreeClassifier(min_length=5).fit(Xt, y)


def test_transform_multivariate_ragged(rng):
    """A list of (channels, len_i) arrays (aeon's unequal-length collections): the same
    search per channel as the channel's own list of series, each column from its channel."""
    y = np.repeat(["a", "b"], 8)
    X = [rng.standard_normal((2, int(m))).cumsum(axis=1) for m in rng.integers(20, 41, 16)]
    bump = np.sin(np.linspace(0, np.pi, 7)) * 6
    for i in np.flatnonzero(y == "b"):
        s = int(rng.integers(0, X[i].shape[1] - 7))
        X[i][1, s:s + 7] += bump
    kw = dict(min_length=4, max_length=None, length_step=6, n_shapelets=8,
              features=("distance", "occurrence"))
    with pytest.raises(ValueError, match="layout='channels_first'"):  # aeon's, not said
        ShapeletTransform(**kw).fit(X, y)
    kwf = dict(kw, layout="channels_first")
    st = ShapeletTransform(**kwf).fit(X, y)
    # the same data in tswarp's layout, (len_i, channels) each: the same transform
    st2 = ShapeletTransform(**kw).fit([x.T for x in X], y)
    np.testing.assert_array_equal(st2.transform([x.T for x in X]), st.transform(X))
    assert st.n_channels_ == 2 and not hasattr(st, "n_features_in_")
    per = []
    for c in range(2):
        u = ShapeletTransform(**kw).fit([x[c] for x in X], y)
        per += [(-s.gain, -math.floor(s.gap * 1e9 + 0.5), s.series, s.start, s.length, c)
                for s in u.shapelets_]
    got = [(-s.gain, -math.floor(s.gap * 1e9 + 0.5), s.series, s.start, s.length, s.channel)
           for s in st.shapelets_]
    assert got == sorted(per)[:8]
    Xt = [rng.standard_normal((2, int(m))).cumsum(axis=1) for m in (12, 30, 55)]
    T, k = st.transform(Xt), st.n_shapelets_
    for j, s in enumerate(st.shapelets_):
        D, _, Cnt = shapelet_distances([s.values], [x[s.channel] for x in Xt],
                                       thresholds=[s.threshold], return_positions=True)
        np.testing.assert_array_equal(T[:, j], D[:, 0])
        # the share of its places: windows, or places along the shapelet of a shorter series
        places = np.abs(np.array([x.shape[1] for x in Xt]) - s.length) + 1
        np.testing.assert_allclose(T[:, k + j], Cnt[:, 0] / places)
        assert np.all((T[:, k + j] >= 0) & (T[:, k + j] <= 1))
    # equal lengths: the list gives what the (n, channels, len) array gives
    Xe = np.stack([x[:, :20] for x in X])
    a, b = ShapeletTransform(**kwf).fit(Xe, y), ShapeletTransform(**kwf).fit(list(Xe), y)
    np.testing.assert_array_equal(a.transform(Xe), b.transform(list(Xe)))
    with pytest.raises(ValueError, match=r"X\[3\] has 3 channel\(s\)"):
        st.fit(X[:3] + [np.zeros((3, 25))] + X[4:], y)
    with pytest.raises(ValueError, match="1 channel"):
        st.transform([x[0] for x in Xt])
    bad = [x.copy() for x in X]
    bad[5][1, 3] = np.inf
    with pytest.raises(ValueError, match=r"\[5\] contains NaN or infinity"):
        ShapeletTransform(**kwf).fit(bad, y)
    with pytest.raises(ValueError, match="ShapeletTransform takes multivariate"):
        find_shapelet(X, y, min_length=4, layout="channels_first")


# ---- the tree ----------------------------------------------------------------------------


def _hand_problem():
    # length-2 windows z-normalise to (-1, 1) (up), (1, -1) (down) or (0, 0) (flat): the
    # distance is 0 for the same kind, 1 flat vs step, 2 up vs down.
    X = np.array([[0, 0, 1, 1, 1],  # A: up and flat
                  [5, 5, 5, 7, 7],  # A
                  [1, 1, 0, 0, 0],  # B: down and flat
                  [3, 2, 2, 2, 2],  # B
                  [0, 1, 2, 3, 4],  # C: up only
                  [9, 10, 11, 12, 13]], dtype=float)
    y = np.array(["A", "A", "B", "B", "C", "C"])
    return X, y


def test_tree_hand_checked():
    X, y = _hand_problem()
    clf = ShapeletTreeClassifier(min_length=2, max_length=2).fit(X, y)
    # Root: a down-step (A at 1, B at 0, C at 2) splits {B} | {A, C} with gain
    # log 3 - 2/3 log 2 and gap 1.5, beating the up-step (gap 1); the first down-step is
    # X[2][1:3]; the threshold is the smaller of the two tied splits, 0.5.
    root = clf.shapelets_[0]
    s = root["shapelets"][0]
    assert (s.series, s.start, s.length) == (2, 1, 2)
    assert root["gain"] == pytest.approx(math.log(3) - 2 / 3 * math.log(2), abs=1e-12)
    assert root["gap"] == pytest.approx(1.5, abs=1e-7)
    assert root["threshold"] == pytest.approx(0.5, abs=1e-7)
    # Then {A, C}: a flat window (0 to A, 1 to C), the first being X[0][0:2].
    second = clf.shapelets_[1]
    s2 = second["shapelets"][0]
    assert (s2.series, s2.start, s2.length) == (0, 0, 2)
    assert second["gain"] == pytest.approx(math.log(2), abs=1e-12)
    assert len(clf.shapelets_) == 2
    assert clf.score(X, y) == 1.0
    test = [[2, 2, 2, 3, 3], [4, 3, 3, 3, 3], [1, 2, 3, 4, 5]]
    assert clf.predict(test).tolist() == ["A", "B", "C"]
    text = clf.export_text()
    assert "X[2][1:3]" in text and "X[0][0:2]" in text
    # depth 1: one rule, the leaf on the right holds A and C (ties to the first class)
    one = ShapeletTreeClassifier(min_length=2, max_length=2, max_depth=1).fit(X, y)
    assert len(one.shapelets_) == 1
    assert one.predict(test).tolist() == ["A", "B", "A"]
    np.testing.assert_allclose(one.predict_proba(test)[2], [0.5, 0, 0.5])


def _logic_problem(rng, n, op):
    """A shared smooth background (its windows are at distance ~0 from every series, so they
    split nothing) with pattern P and/or pattern Q planted apart. AND: class 1 iff both; OR:
    class 1 iff at least one. (Pure-noise backgrounds would not do: z-normalised noise
    windows are random shapes that split small training sets by chance.)"""
    P = np.array([0.0, 2.0, 4.0, 2.0, 0.0, 0.0])
    Q = np.array([0.0, 3.0, 3.0, -3.0, -3.0, 0.0])
    t = np.arange(48)
    X, y = [], []
    for k in range(n):
        x = np.sin(2 * np.pi * t / 48) + 0.01 * rng.standard_normal(48)
        kind = k % 4  # 0: P, 1: Q, 2: both, 3: neither (AND: both twice)
        if op == "and" and kind == 3:
            kind = 2
        if kind in (0, 2):
            x[4:10] += P
        if kind in (1, 2):
            x[28:34] += Q
        X.append(x)
        y.append(int(kind == 2) if op == "and" else int(kind != 3))
    return np.array(X), np.array(y)


@pytest.mark.parametrize("op", ["and", "or"])
def test_logical_shapelets_improve_or_match(rng, op):
    # 64 training series: on 24, a chance split of background windows (their tiny distances
    # come in random order) beat the single P or Q split once in 40 seeds (seed 27)
    X, y = _logic_problem(rng, 64, op)
    Xt, yt = _logic_problem(rng, 40, op)
    kw = dict(min_length=6, max_length=6, max_depth=1)
    plain = ShapeletTreeClassifier(**kw).fit(X, y)
    logic = ShapeletTreeClassifier(logical=True, **kw).fit(X, y)
    msg = f"seed {rng.seed}"
    assert logic.shapelets_[0]["gain"] >= plain.shapelets_[0]["gain"], msg
    # (not always 1.0: the greedy pair search of the paper starts from the best single
    # shapelet, which a chance split of background windows can still be: seed 54 of 120)
    assert logic.score(X, y) >= plain.score(X, y), msg
    assert logic.score(Xt, yt) >= plain.score(Xt, yt), msg
    if op == "and":  # one shapelet cannot express "P and Q" in one node
        assert plain.score(X, y) < 1.0, msg
        assert logic.shapelets_[0]["gain"] > plain.shapelets_[0]["gain"], msg
        # (either operator may do it: "far from A or far from B" is "not (A and B)")
        assert logic.shapelets_[0]["op"] in ("and", "or"), msg


def test_tree_variable_length_and_gunpoint():
    X, y = load_gunpoint("train")
    Xt, yt = load_gunpoint("test")
    clf = ShapeletTreeClassifier(min_length=20, max_length=40, length_step=10).fit(X, y)
    assert clf.score(Xt, yt) >= 0.85
    # variable lengths: trimmed copies, every series still longer than the shapelets
    ragged = [x[: 100 + (i % 7) * 5] for i, x in enumerate(X)]
    clf2 = ShapeletTreeClassifier(min_length=20, max_length=40, length_step=10).fit(ragged, y)
    assert clf2.predict([x[:120] for x in Xt]).shape == (len(Xt),)


# ---- the transform -----------------------------------------------------------------------


def test_transform_top_k(rng):
    X, y = _random_problem(rng, 8, 10, 14, 2)
    k = 6
    T = ShapeletTransform(n_shapelets=k, min_length=3, max_length=5)
    F = T.fit_transform(X, y)
    assert F.shape == (8, T.n_shapelets_) and T.n_shapelets_ == k
    best = find_shapelet(X, y, min_length=3, max_length=5)
    first = T.shapelets_[0]
    assert (first.series, first.start, first.length) == (best.series, best.start, best.length)
    gains = [s.gain for s in T.shapelets_]
    assert gains == sorted(gains, reverse=True)
    for a in range(k):  # no two overlap in the same series
        for b in range(a):
            sa, sb = T.shapelets_[a], T.shapelets_[b]
            assert (sa.series != sb.series or sa.start + sa.length <= sb.start
                    or sb.start + sb.length <= sa.start)
    for j, x in enumerate(X):
        for c, s in enumerate(T.shapelets_):
            assert F[j, c] == pytest.approx(brute_distance(s.values, x), abs=1e-7)
    # the greedy rule, checked against every candidate ranked in Python
    codes = np.asarray(y)
    ranked = []
    for i, xi in enumerate(X):
        for s in range(len(xi)):
            for l in (3, 4, 5):
                if s + l <= len(xi):
                    r = best_split([brute_distance(xi[s:s + l], xj) for xj in X], list(codes), 2)
                    if r is not None:
                        ranked.append((-r[0], -_gap_key(r[1]), i, s, l))
    ranked.sort()
    kept = []
    for _, _, i, s, l in ranked:
        if all(i != i2 or s + l <= s2 or s2 + l2 <= s for i2, s2, l2 in kept):
            kept.append((i, s, l))
        if len(kept) == k:
            break
    assert [(s.series, s.start, s.length) for s in T.shapelets_] == kept


def test_one_vs_rest_equals_brute_force(rng):
    """One-vs-rest (STC's binary shapelets): the search against the brute force with each
    candidate judged on its class against the rest; the transform's list against every
    candidate ranked in Python, kept greedily with at most k // C from each class."""
    C, k = 3, 7
    for _ in range(2):
        X, y = _random_problem(rng, int(rng.integers(6, 9)), 9, 12, C)
        codes = np.asarray(y)
        lengths = [3, 4, 5]
        gain, gap, thr, i, s, l = brute_force(X, list(codes), C, lengths, ovr=True)
        v = np.concatenate(X)
        lens = np.array([len(x) for x in X], dtype=np.int64)
        offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        msg = f"seed {rng.seed}"
        for impl in ("auto", "reference"):
            got = _tswarp._shapelet_search(v, offs, lens, codes.astype(np.int32), C, 3, 5, 1,
                                           _impl=impl, one_vs_rest=True)
            assert got[:3] == (i, s, l), msg
            assert got[4] == pytest.approx(gain, rel=0, abs=1e-12), msg
            assert got[3] == pytest.approx(thr, abs=1e-7), msg
            assert got[5] == pytest.approx(gap, abs=1e-7), msg
        T = ShapeletTransform(n_shapelets=k, min_length=3, max_length=5, one_vs_rest=True)
        F = T.fit(X, y).transform(X)
        ranked = []
        for i, xi in enumerate(X):
            for s in range(len(xi)):
                for l in lengths:
                    if s + l <= len(xi):
                        d = [brute_distance(xi[s:s + l], xj) for xj in X]
                        r = best_split(d, [int(c == codes[i]) for c in codes], 2)
                        if r is not None:
                            ranked.append((-r[0], -_gap_key(r[1]), i, s, l))
        ranked.sort()
        kept, used = [], [0] * C
        for _, _, i, s, l in ranked:
            if used[codes[i]] < k // C and all(i != i2 or s + l <= s2 or s2 + l2 <= s
                                               for i2, s2, l2 in kept):
                kept.append((i, s, l))
                used[codes[i]] += 1
        assert [(t.series, t.start, t.length) for t in T.shapelets_] == kept, msg
        assert F.shape == (len(X), len(kept)) and len(kept) == C * (k // C)
        # with two classes the gains are the plain search's; only the balance differs
        X2, y2 = _random_problem(rng, 8, 10, 12, 2)
        a = ShapeletTransform(n_shapelets=4, min_length=3, max_length=4, one_vs_rest=True)
        b = ShapeletTransform(n_shapelets=1000, min_length=3, max_length=4)
        a.fit(X2, y2)
        b.fit(X2, y2)
        want = [t for c in (0, 1) for t in
                [t for t in b.shapelets_ if y2[t.series] == c][:2]]
        want.sort(key=lambda t: (-t.gain, -_gap_key(t.gap), t.series, t.start, t.length))
        assert [(t.series, t.start, t.length, t.gain) for t in a.shapelets_] == \
            [(t.series, t.start, t.length, t.gain) for t in want]
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="one_vs_rest"):
            ShapeletTransform(one_vs_rest=bad).fit(X, y)


def test_transform_linear_classifier_gunpoint():
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.pipeline import make_pipeline

    X, y = load_gunpoint("train")
    Xt, yt = load_gunpoint("test")
    pipe = make_pipeline(ShapeletTransform(n_shapelets=10, min_length=20, max_length=60,
                                           length_step=20), RidgeClassifierCV())
    assert pipe.fit(X, y).score(Xt, yt) >= 0.85


def test_transform_auto_count(rng):
    # 'auto' (the default): 10 shapelets per training series, at most 1000, fewer when fewer
    # non-overlapping candidates split the data
    X, y = _random_problem(rng, 6, 12, 16, 2)
    T = ShapeletTransform(min_length=4, max_length=6).fit(X, y)
    assert T.get_params()["n_shapelets"] == "auto"
    every = ShapeletTransform(n_shapelets=10**6, min_length=4, max_length=6).fit(X, y)
    assert T.n_shapelets_ == min(60, every.n_shapelets_)
    assert [(s.series, s.start, s.length) for s in T.shapelets_] == [
        (s.series, s.start, s.length) for s in every.shapelets_[:T.n_shapelets_]]
    with pytest.raises(ValueError, match="n_shapelets"):
        ShapeletTransform(n_shapelets="all", min_length=4).fit(X, y)


def _trace_slice(per_class, length):
    """tslearn's offline copy of Trace (4 classes, 275 points; the file that
    tslearn.datasets.CachedDatasets().load_dataset("Trace") reads, read here without
    importing tslearn, which takes seconds): per_class series of each class from the
    training set, their first `length` points; the test set in full."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("tslearn")
    path = spec and os.path.join(os.path.dirname(spec.origin), ".cached_datasets", "Trace.npz")
    if not path or not os.path.exists(path):
        pytest.skip("tslearn's cached Trace is not installed")
    with np.load(path) as f:
        Xtr, ytr, Xte, yte = f["X_train"], f["y_train"], f["X_test"], f["y_test"]
    idx = np.concatenate([np.flatnonzero(ytr == c)[:per_class] for c in np.unique(ytr)])
    return Xtr[idx, :length, 0], ytr[idx], Xte[:, :, 0], yte


def test_trace_slice_fast_equals_reference():
    # a real dataset (smooth plateaus and steps with noise) rather than random walks
    X, y, _, _ = _trace_slice(2, 40)
    codes = np.unique(y, return_inverse=True)[1].astype(np.int32)
    from tswarp.shapelets import _as_series, _search
    Xs = _as_series(X)
    fast = _search(Xs, codes, 4, (3, 20, 3), device="cpu")
    ref = _search(Xs, codes, 4, (3, 20, 3), device="cpu", _impl="reference")
    assert fast[:3] == ref[:3] and fast[4] == ref[4]
    assert fast[3] == pytest.approx(ref[3], abs=1e-7) and fast[5] == pytest.approx(ref[5], abs=1e-7)
    assert fast[4] > 0


def test_trace_slice_classifiers():
    X, y, Xt, yt = _trace_slice(4, 275)  # 16 series
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    tree = ShapeletTreeClassifier(min_length=30, max_length=90, length_step=30).fit(X, y)
    pipe = make_pipeline(ShapeletTransform(min_length=30, max_length=90, length_step=30),
                         StandardScaler(), RidgeClassifierCV()).fit(X, y)
    assert set(tree.predict(Xt)) <= set(np.unique(y))
    assert tree.score(Xt, yt) >= 0.7
    assert pipe.score(Xt, yt) >= 0.9


def test_grid_search_cv_chooses_settings():
    """The study's protocol as a user runs it (bench/RESULTS.md): GridSearchCV over the
    transform's settings in a pipeline; its CV scores are those of a loop written out."""
    from sklearn.base import clone
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, Xt, yt = _trace_slice(6, 275)  # 24 series
    pipe = make_pipeline(ShapeletTransform(min_length=20, length_step=40), StandardScaler(),
                         RidgeClassifierCV())
    grid = {"shapelettransform__features": [("distance",), ("distance", "occurrence")],
            "shapelettransform__min_length": [20, 40]}
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(pipe, grid, cv=folds).fit(X, y)
    for params, got in zip(search.cv_results_["params"], search.cv_results_["mean_test_score"]):
        scores = [clone(pipe).set_params(**params).fit(X[tr], y[tr]).score(X[te], y[te])
                  for tr, te in folds.split(X, y)]
        assert got == pytest.approx(np.mean(scores), abs=1e-12)
    best = search.best_estimator_[0]
    assert best.transform(Xt[:2]).shape == (2, best.n_shapelets_ * len(best.features_))
    assert search.score(Xt, yt) >= 0.9


# ---- bad input ----------------------------------------------------------------------------


def test_bad_input():
    X, y = _hand_problem()
    with pytest.raises(ValueError, match="one class"):
        find_shapelet(X, ["A"] * 6)
    with pytest.raises(ValueError, match="1 sample"):
        find_shapelet(X[:1], y[:1])
    Xn = X.copy()
    Xn[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X\[3\] contains NaN"):
        find_shapelet(Xn, y)
    with pytest.raises(ValueError, match="greater than max_length"):
        find_shapelet(X, y, min_length=4, max_length=3)
    with pytest.raises(ValueError, match="longer than the longest series"):
        find_shapelet(X, y, min_length=6)
    with pytest.raises(ValueError, match="longer than the longest series"):
        find_shapelet(X, y, min_length=2, max_length=9)
    # a series shorter than the lengths is compared along them, not refused
    find_shapelet([x for x in X[:5]] + [X[5][:2]], y, min_length=3)
    with pytest.raises(ValueError, match="dilation=2 is more than the shortest series"):
        find_shapelet([x for x in X[:5]] + [X[5][:1]], y, min_length=2, dilation=2)
    with pytest.raises(ValueError, match="min_length must be >= 2"):
        find_shapelet(X, y, min_length=1)
    with pytest.raises(TypeError, match="min_length must be an int"):
        find_shapelet(X, y, min_length=2.5)
    with pytest.raises(ValueError, match="X holds 6 series but y holds 5"):
        find_shapelet(X, y[:5])
    with pytest.raises(ValueError, match="multivariate"):
        find_shapelet(np.zeros((6, 5, 2)), y)
    with pytest.raises(ValueError, match="device"):
        find_shapelet(X, y, device="gpu")
    with pytest.raises(ValueError, match="no candidate splits"):
        find_shapelet(np.repeat(np.arange(6.0)[:, None], 5, axis=1), y)
    import tswarp

    info = tswarp.info()
    if not (info["cuda_built"] and info["cuda_devices"] > 0):  # test_gpu.py covers a GPU
        with pytest.raises((NotImplementedError, tswarp.NoDeviceError)):
            find_shapelet(X, y, device="cuda")
    T = ShapeletTransform(n_shapelets=2, min_length=2, dilation=2).fit(X, y)
    with pytest.raises(ValueError, match="fewer than the dilation"):
        T.transform([[1.0]])
    with pytest.raises(ValueError, match="n_shapelets"):
        ShapeletTransform(n_shapelets=0, min_length=2).fit(X, y)


# ---- scikit-learn -------------------------------------------------------------------------

# Checks that cannot pass, and why (also listed in the classes' docstrings):
_VARLEN = "series of any length are valid inputs after fit"
_SKIP = {
    ShapeletTreeClassifier: {
        # Series of any length are valid inputs to predict, so a number of time points other
        # than in fit is not an error; both checks require one.
        "check_n_features_in_after_fitting": _VARLEN,
        "check_classifiers_train": _VARLEN,
    },
    # check_transformer_general also requires an error for another number of time points;
    # the rest of it is test_transformer_general_like_sklearn below
    ShapeletTransform: {"check_n_features_in_after_fitting": _VARLEN,
                        "check_transformer_general": _VARLEN},
}


@pytest.mark.parametrize("Est", [ShapeletTreeClassifier, ShapeletTransform])
def test_sklearn_check_estimator(Est):
    from sklearn.utils.estimator_checks import check_estimator

    # max_length None: the longest series (the checks use data of 2 to 20 time points)
    est = Est(min_length=2) if Est is ShapeletTreeClassifier else Est(n_shapelets=5,
                                                                      min_length=2)
    results = check_estimator(est, on_fail=None, expected_failed_checks=_SKIP[Est])
    failed = [r for r in results if r["status"] == "failed"]
    assert not failed, [(r["check_name"], str(r["exception"])[:300]) for r in failed]


def test_transformer_general_like_sklearn(rng):
    """What check_transformer_general checks besides an error for another number of time
    points: fit_transform equals fit then transform, the same twice, one row per series;
    and series of another length (shorter than some shapelets, too) transform to features
    in their ranges."""
    X, y = _random_problem(rng, 12, 20, 20, 3)
    X = np.array(X)
    feats = ("distance", "occurrence", "position")
    T = ShapeletTransform(n_shapelets=6, min_length=3, features=feats)
    F1 = T.fit_transform(X, y)
    F2 = ShapeletTransform(n_shapelets=6, min_length=3, features=feats).fit(X, y).transform(X)
    np.testing.assert_array_equal(F1, F2)
    np.testing.assert_array_equal(T.transform(X), F1)
    assert F1.shape == (12, 3 * T.n_shapelets_)
    G = T.transform(X[:, :7])
    k = T.n_shapelets_
    assert G.shape == (12, 3 * k) and np.all(np.isfinite(G))
    assert np.all((G[:, :k] >= 0) & (G[:, :k] <= 2)) and np.all((G[:, k:2 * k] >= 0)
                                                                 & (G[:, k:2 * k] <= 1))
    assert np.all(np.abs(G[:, 2 * k:]) <= 1)


def test_short_series_equal_brute_force(rng):
    """A series shorter than a shapelet slides along it: distances, positions (-u) and
    occurrences as written out here, for plain and dilated shapelets, on the CPU's fast and
    reference paths; the transform's occurrence shares are out of the places counted here."""
    for trial in range(4):
        X, y = _random_problem(rng, 7, 6, 16, 2)
        sh = [X[int(np.argmax([len(x) for x in X]))][:14], rng.standard_normal(9),
              X[0][:5]]
        dil = [1, 1, 1] if trial % 2 == 0 else [1, 2, 3]
        thr = [0.6, 0.9, 0.4]
        for impl in ("auto", "reference"):
            sv = np.concatenate(sh)
            sl = np.array([len(s) for s in sh], dtype=np.int64)
            so = np.concatenate([[0], np.cumsum(sl)[:-1]]).astype(np.int64)
            lens = np.array([len(x) for x in X], dtype=np.int64)
            offs = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
            D, P, Cn = _tswarp._shapelet_distances(sv, so, sl, np.concatenate(X), offs, lens,
                                                   _impl=impl, thresholds=np.array(thr),
                                                   dilations=np.array(dil, np.int64))
            for j, x in enumerate(X):
                for k, s in enumerate(sh):
                    d = dil[k]
                    msg = f"seed {rng.seed} trial {trial} {impl} series {j} shapelet {k}"
                    # the reference is exact to 1e-7; the fast path within its bound near 0
                    # (seeds 459, 1148, 1335: 7e-5 on a 2-point window of the shapelet whose
                    # values differ by 1e-3 of their size)
                    tol = 1e-7 if impl == "reference" else fast_tol(s, x, d)
                    assert D[j, k] == pytest.approx(brute_distance(s, x, d), abs=tol), msg
                    assert brute_at(s, x, d, int(P[j, k])) == pytest.approx(D[j, k], abs=tol)
                    ds = [math.sqrt(_d2(a, b)) for p in range(d)
                          for _, a, b in _pairs(np.asarray(s), np.asarray(x[p::d]))]
                    lo = sum(v <= thr[k] - 1e-7 for v in ds)
                    hi = sum(v <= thr[k] + 1e-7 for v in ds)
                    assert lo <= Cn[j, k] <= hi, msg
    # the transform: a shapelet longer than some series; shares out of the places counted
    X, y = _random_problem(rng, 10, 8, 30, 2)
    T = ShapeletTransform(n_shapelets=8, min_length=20, features=("distance", "occurrence"))
    F = T.fit(X, y).transform(X)
    k = T.n_shapelets_
    assert any(s.length > min(len(x) for x in X) for s in T.shapelets_)
    for j, x in enumerate(X):
        for q, s in enumerate(T.shapelets_):
            ds = [math.sqrt(_d2(a, b)) for _, a, b in _pairs(np.asarray(s.values), x)]
            assert F[j, q] == pytest.approx(min(ds), abs=1e-7)
            near = F[j, k + q] * len(ds)
            assert near == pytest.approx(round(near)) and 0 <= round(near) <= len(ds)


def test_classifier_train_like_sklearn(rng):
    """What check_classifiers_train checks besides the feature count: fit/predict shapes,
    predict_proba rows summing to 1, training accuracy on separable classes."""
    n, L = 30, 20
    X = rng.standard_normal((n, L)) * 0.2
    y = np.repeat(np.array(["a", "b", "c"]), n // 3)
    X[y == "b", 5:9] += [0, 3, 0, -3]
    X[y == "c", 12:16] += [0, -3, 3, 0]
    clf = ShapeletTreeClassifier(min_length=4, max_length=4).fit(X, y)
    pred = clf.predict(X)
    assert pred.shape == (n,) and set(pred) <= {"a", "b", "c"}
    P = clf.predict_proba(X)
    assert P.shape == (n, 3)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(pred == y) >= 0.83, f"seed {rng.seed}"
    assert clf.n_features_in_ == L


# ---- plot and CLI -------------------------------------------------------------------------


def test_plot_shapelet():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import tswarp.plot

    X, y = _hand_problem()
    clf = ShapeletTreeClassifier(min_length=2, max_length=2).fit(X, y)
    fig = tswarp.plot.shapelet(clf, X, index=1)
    ax = fig.axes[0]
    assert len(ax.lines) == 1 + 2  # the series and the two rules' shapelets
    import matplotlib.pyplot as plt

    plt.close(fig)
    # a dilated shapelet is drawn on its spaced points, where it matches
    rng = np.random.default_rng(0)
    Xd, yd = _random_problem(rng, 6, 20, 24, 2)
    T = ShapeletTransform(n_shapelets=2, min_length=3, max_length=5, dilation=3).fit(Xd, yd)
    fig = tswarp.plot.shapelet(T, Xd, index=0)
    D, P = shapelet_distances([s.values for s in T.shapelets_], [Xd[0]], return_positions=True,
                              dilations=[3, 3])
    for k, s in enumerate(T.shapelets_):
        xs = fig.axes[0].lines[1 + k].get_xdata()
        np.testing.assert_array_equal(xs, P[0, k] + 3 * np.arange(s.length))
    plt.close(fig)
    # a shapelet that is not normalised is drawn as it is, where its raw distance is least
    T = ShapeletTransform(n_shapelets=2, min_length=3, max_length=5, normalize=False).fit(Xd, yd)
    fig = tswarp.plot.shapelet(T, Xd, index=0)
    D, P = shapelet_distances([s.values for s in T.shapelets_], [Xd[0]], return_positions=True,
                              normalize=False)
    for k, s in enumerate(T.shapelets_):
        line = fig.axes[0].lines[1 + k]
        np.testing.assert_array_equal(line.get_xdata(), P[0, k] + np.arange(s.length))
        np.testing.assert_array_equal(line.get_ydata(), s.values)
    plt.close(fig)
    with pytest.raises(TypeError):
        tswarp.plot.shapelet(object(), X)


def test_cli_shapelets(tmp_path, capsys):
    from tswarp.cli import main

    train, test = str(gunpoint_path("train")), str(gunpoint_path("test"))
    png = tmp_path / "s.png"
    rc = main(["shapelets", train, test, "--min-length", "30", "--max-length", "40",
               "--length-step", "10", "--plot", str(png)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "accuracy" in out and "dist(X[" in out
    acc = float(out.split("accuracy ")[1].split()[0])
    assert acc >= 0.8
    assert png.stat().st_size > 1000
    rc = main(["shapelets", train, test, "--min-length", "30", "--max-length", "40",
               "--length-step", "10", "--normalize", "raw"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "rawdist(X[" in out and "accuracy" in out
    rc = main(["shapelets", train, test, "--min-length", "500"])
    assert rc == 2
    # the plot's path is checked before the fit
    rc = main(["shapelets", train, test, "--plot", str(tmp_path / "no" / "s.png")])
    assert rc == 2 and "does not exist" in capsys.readouterr().err


def test_cli_shapelets_transform_multivariate(tmp_path, capsys, rng):
    """--model transform: ShapeletTransform + ridge, on multivariate .npy collections with
    --labels, equal to the same pipeline in Python; the tree refuses multivariate series."""
    from sklearn.linear_model import RidgeClassifierCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from tswarp.cli import main
    n, L = 24, 40
    y = np.repeat([0, 1, 2], n // 3)
    X = 0.3 * rng.standard_normal((n, L, 2)).cumsum(axis=1)
    for i in range(n):
        s = int(rng.integers(0, L - 8))
        X[i, s:s + 8, y[i] % 2] += (y[i] + 1) * np.sin(np.linspace(0, np.pi, 8))
    np.save(tmp_path / "X.npy", X[::2])
    np.save(tmp_path / "Xt.npy", X[1::2])
    np.save(tmp_path / "y.npy", y[::2])
    np.save(tmp_path / "yt.npy", y[1::2])
    args = ["shapelets", str(tmp_path / "X.npy"), str(tmp_path / "Xt.npy"), "--labels",
            str(tmp_path / "y.npy"), str(tmp_path / "yt.npy"), "--min-length", "5",
            "--max-length", "10", "--model", "transform", "--n-shapelets", "6",
            "--features", "distance", "occurrence", "--plot", str(tmp_path / "m.png")]
    rc = main(args)
    out = capsys.readouterr().out
    assert rc == 0, out
    model = make_pipeline(ShapeletTransform(n_shapelets=6, min_length=5, max_length=10,
                                            features=("distance", "occurrence")),
                          StandardScaler(), RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))
    acc = float(np.mean(model.fit(X[::2], y[::2]).predict(X[1::2]) == y[1::2]))
    assert f"accuracy {acc:.4f}" in out and "6 shapelets kept" in out and " channel " in out
    assert (tmp_path / "m.png").stat().st_size > 1000
    rc = main(args[:6])  # the tree
    assert rc == 2 and "--model transform" in capsys.readouterr().err


@pytest.mark.parametrize("scale", [1e154, 1e-160, 2.0**600, 1e300])
def test_extreme_scales_give_the_unit_scale_result(rng, scale):
    # issue 36 item 14: values near 1e154 gave "no candidate splits" and distances of
    # sqrt(2) everywhere (the sums of squares of the z-normalisation overflowed); the
    # search now scales each series (and, raw, the collection) by a power of two first
    X = rng.standard_normal((8, 24))
    X[4:, 8:14] += 3.0
    y = np.array([0] * 4 + [1] * 4)
    base = find_shapelet(X, y, min_length=4, max_length=8, device="cpu")
    big = find_shapelet(X * scale, y, min_length=4, max_length=8, device="cpu")
    assert (big.series, big.start, big.length) == (base.series, base.start, base.length), rng.seed
    assert math.isclose(big.gain, base.gain, rel_tol=1e-9)
    shp = [X[4, 8:14], X[0, 2:9]]
    D = shapelet_distances(shp, X, device="cpu")
    Ds = shapelet_distances([s * scale for s in shp], X * scale, device="cpu")
    np.testing.assert_allclose(Ds, D, rtol=1e-9, atol=1e-12)
    assert not np.allclose(Ds, math.sqrt(2))
    # raw (non-normalised) shapelets: distances in the data's units
    Dr = shapelet_distances(shp, X, normalize=False, device="cpu")
    Drs = shapelet_distances([s * scale for s in shp], X * scale, normalize=False, device="cpu")
    np.testing.assert_allclose(Drs, Dr * scale, rtol=1e-9)
