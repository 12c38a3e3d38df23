"""One array layout everywhere, and the conventions that must never flip meaning.

tswarp's layout is channels_last: a series (len, d), a collection (n, len, d) (tslearn's,
dtaidistance's, the C API's). aeon's and sktime's (n, channels, len) is read with
layout='channels_first', and without a layout a shape that may be the other one is a
ValueError naming the argument: the trap of aeon's univariate (n, 1, len) silently read as
one-point series of len dims cannot happen.

Every public function and estimator that takes series is run here on the same random data
in both layouts (the results must be identical, and come back in the caller's layout), and
on the ambiguous shapes. The windows: ``window`` is a fraction whatever its type, ``radius``
a count of cells, and the C binding and the Python helpers give the same messages.
"""

import functools

import numpy as np
import pytest

import tswarp
from tswarp import _conventions as conv
from tswarp.learn import SoftDTWKMeans, SoftDTWNearestCentroid
from tswarp.shapelets import (ShapeletTransform, ShapeletTreeClassifier, find_shapelet,
                              shapelet_distances)

LAST, FIRST = "channels_last", "channels_first"


def _data(rng, n=6, length=24, d=3):
    X = rng.standard_normal((n, length, d)).cumsum(axis=1)
    return X, X.transpose(0, 2, 1).copy()


# ---- the pair and batch functions --------------------------------------------------------
PAIR = [
    ("dtw", {}), ("dtw", {"radius": 3}), ("twed", {"nu": 0.1}), ("soft_dtw", {"gamma": 0.5}),
]


@pytest.mark.parametrize("name,params", PAIR, ids=[p[0] + str(i) for i, p in enumerate(PAIR)])
def test_pair_functions_both_layouts(rng, name, params):
    X, Xf = _data(rng)
    f = getattr(tswarp, name)
    want = f(X[0], X[1], **params)
    assert f(Xf[0], Xf[1], layout=FIRST, **params) == want, rng.seed
    assert f(X[0], X[1], layout=LAST, **params) == want
    assert tswarp.distance(Xf[0], Xf[1], metric=name, layout=FIRST, **params) == want
    with pytest.raises(ValueError, match=r"a has shape \(3, 24\).*layout='channels_first'"):
        f(Xf[0], Xf[1], **params)


@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
def test_batch_functions_both_layouts(rng, metric):
    X, Xf = _data(rng)
    for call in (lambda A, **k: tswarp.cdist(A, A[:4], metric=metric, **k),
                 lambda A, **k: tswarp.pdist(A, metric=metric, **k),
                 lambda A, **k: tswarp.pdist(A, metric=metric, condensed=True, **k),
                 lambda A, **k: tswarp.paired(A, A[::-1], metric=metric, **k)):
        want = call(X)
        np.testing.assert_array_equal(call(Xf, layout=FIRST), want)
        np.testing.assert_array_equal(call(list(Xf), layout=FIRST), want)  # a list of (d, len)
        np.testing.assert_array_equal(call(list(X)), want)
        with pytest.raises(ValueError, match=r"X has shape \(6, 3, 24\)"):
            call(Xf)
        with pytest.raises(ValueError, match=r"X\[0\] has shape \(3, 24\)"):
            call(list(Xf))


def test_ambiguous_shapes(rng):
    """Refused without a layout: a time axis no longer than a last axis of more than 1
    (aeon's univariate (n, 1, len); a square (n, 5, 5)); accepted with either layout."""
    for shape in [(5, 1, 30), (5, 4, 30), (5, 5, 5), (5, 2, 3)]:
        X = rng.standard_normal(shape)
        with pytest.raises(ValueError, match="layout"):
            tswarp.cdist(X)
        for lay in (LAST, FIRST):
            tswarp.cdist(X, layout=lay)
    # never ambiguous: 2-D collections are univariate, 1-D series, one dim or one point each
    for shape in [(5, 30), (5, 30, 1), (5, 30, 29), (5, 1, 1)]:
        tswarp.cdist(rng.standard_normal(shape))
    tswarp.dtw(rng.standard_normal(30), rng.standard_normal(20))
    with pytest.raises(ValueError, match=r"a has shape \(1, 30\).*1 time point of 30 dims"):
        tswarp.dtw(rng.standard_normal((1, 30)), rng.standard_normal(20))
    with pytest.raises(ValueError, match="layout must be"):
        tswarp.dtw(rng.standard_normal(3), rng.standard_normal(3), layout="ncl")
    with pytest.raises(TypeError, match="layout must be"):
        conv.check_layout(1)


def test_alignments_both_layouts(rng):
    X, Xf = _data(rng, n=2, length=40, d=2)
    p, c = tswarp.dtw_path(X[0], X[1])
    p2, c2 = tswarp.dtw_path(Xf[0], Xf[1], layout=FIRST)
    np.testing.assert_array_equal(p, p2)
    assert c == c2
    m = tswarp.subsequence_dtw(X[0][:10], X[1], k=2)
    m2 = tswarp.subsequence_dtw(Xf[0][:, :10], Xf[1], k=2, layout=FIRST)
    assert [tuple(x) for x in m] == [tuple(x) for x in m2]
    s = tswarp.segmental_dtw(X[0], X[1], 4)
    np.testing.assert_array_equal(s, tswarp.segmental_dtw(Xf[0], Xf[1], 4, layout=FIRST))
    with pytest.raises(ValueError, match=r"a has shape \(2, 40\)"):
        tswarp.dtw_path(Xf[0], Xf[1])
    with pytest.raises(ValueError, match=r"query has shape \(2, 10\)"):
        tswarp.subsequence_dtw(Xf[0][:, :10], Xf[1])
    with pytest.raises(ValueError, match=r"a has shape \(2, 40\)"):
        tswarp.segmental_dtw(Xf[0], Xf[1], 4)


def test_alignment_costs_follow_dtw(rng):
    """dtw_path's cost is what dtw returns (tslearn's dtw_path does the same): the square
    root of the accumulated cost for sqeuclidean, the accumulated cost otherwise and with
    accumulated=True; the subsequence and segmental costs follow the same rule."""
    a, b = rng.standard_normal(30), rng.standard_normal(25)
    _, c = tswarp.dtw_path(a, b)
    assert c == pytest.approx(tswarp.dtw(a, b), rel=1e-14)
    _, acc = tswarp.dtw_path(a, b, accumulated=True)
    assert acc == pytest.approx(tswarp.dtw(a, b, accumulated=True), rel=1e-14)
    assert c == pytest.approx(np.sqrt(acc), rel=1e-14)
    _, ca = tswarp.dtw_path(a, b, cost="abs")
    assert ca == tswarp.dtw_path(a, b, cost="abs", accumulated=True)[1]
    m, ma = tswarp.subsequence_dtw(a[:8], b), tswarp.subsequence_dtw(a[:8], b, accumulated=True)
    assert (m.start, m.end) == (ma.start, ma.end)
    assert m.cost == pytest.approx(np.sqrt(ma.cost), rel=1e-14)
    _, segs = tswarp.segmental_dtw(a, b, 3, return_segments=True)
    _, sega = tswarp.segmental_dtw(a, b, 3, return_segments=True, accumulated=True)
    for s, t in zip(segs, sega):
        assert s.cost == pytest.approx(np.sqrt(t.cost), rel=1e-14)


# ---- soft-DTW gradients, barycenters, estimators --------------------------------------------
def test_soft_dtw_grad_and_barycenter_both_layouts(rng):
    X, Xf = _data(rng, n=4, length=20, d=2)
    v, ga, gb = tswarp.soft_dtw_grad(X, X[::-1], gamma=0.5)
    vf, gaf, gbf = tswarp.soft_dtw_grad(Xf, Xf[::-1], gamma=0.5, layout=FIRST)
    np.testing.assert_array_equal(v, vf)
    np.testing.assert_array_equal(gaf, ga.transpose(0, 2, 1))  # in the caller's layout
    np.testing.assert_array_equal(gbf, gb.transpose(0, 2, 1))
    v1, g1, _ = tswarp.soft_dtw_grad(Xf[0], Xf[1], gamma=0.5, layout=FIRST)
    assert g1.shape == (2, 20) and v1 == tswarp.soft_dtw(X[0], X[1], gamma=0.5)
    z = tswarp.soft_dtw_barycenter(X, gamma=0.5, max_iter=5)
    zf = tswarp.soft_dtw_barycenter(Xf, gamma=0.5, max_iter=5, layout=FIRST)
    np.testing.assert_array_equal(zf, z.T)
    with pytest.raises(ValueError, match="layout"):
        tswarp.soft_dtw_grad(Xf, Xf, gamma=0.5)
    with pytest.raises(ValueError, match="layout"):
        tswarp.soft_dtw_barycenter(Xf, gamma=0.5, max_iter=1)


def test_soft_dtw_estimators_both_layouts(rng):
    X, Xf = _data(rng, n=8, length=16, d=2)
    y = np.repeat([0, 1], 4)
    a = SoftDTWNearestCentroid(max_iter=3).fit(X, y)
    b = SoftDTWNearestCentroid(max_iter=3, layout=FIRST).fit(Xf, y)
    np.testing.assert_array_equal(a.decision_distances(X), b.decision_distances(Xf))
    np.testing.assert_array_equal(b.centroids_[0], a.centroids_[0].T)
    k1 = SoftDTWKMeans(n_clusters=2, max_iter=3, max_iter_barycenter=3, random_state=1).fit(X)
    k2 = SoftDTWKMeans(n_clusters=2, max_iter=3, max_iter_barycenter=3, random_state=1,
                       layout=FIRST).fit(Xf)
    np.testing.assert_array_equal(k1.labels_, k2.labels_)
    np.testing.assert_array_equal(k2.cluster_centers_, k1.cluster_centers_.transpose(0, 2, 1))
    assert isinstance(k1.cluster_centers_, np.ndarray) and k1.cluster_centers_.shape == (2, 16, 2)
    np.testing.assert_array_equal(k1.predict(X), k2.predict(Xf))
    with pytest.raises(ValueError, match="layout"):
        SoftDTWKMeans(n_clusters=2).fit(Xf)


def test_shapelet_functions_and_estimators_both_layouts(rng):
    n, L = 12, 30
    y = np.repeat([0, 1], n // 2)
    X = rng.standard_normal((n, L)).cumsum(axis=1)
    X[y == 1, 10:16] += 4
    Xl, Xa = X[:, :, None], X[:, None, :]  # (n, len, 1) tswarp's; (n, 1, len) aeon's
    kw = dict(min_length=4, max_length=8)
    s = find_shapelet(X, y, **kw)
    key = lambda t: (t.series, t.start, t.length, t.threshold, t.gain, t.values.tolist())  # noqa
    assert key(find_shapelet(Xl, y, **kw)) == key(s)
    assert key(find_shapelet(Xa, y, layout=FIRST, **kw)) == key(s)
    with pytest.raises(ValueError, match=r"X has shape \(12, 1, 30\)"):
        find_shapelet(Xa, y, **kw)
    D = shapelet_distances([s.values], X)
    np.testing.assert_array_equal(shapelet_distances([s.values], Xa, layout=FIRST), D)
    with pytest.raises(ValueError, match="layout"):
        shapelet_distances([s.values], Xa)
    t = ShapeletTreeClassifier(**kw).fit(X, y)
    ta = ShapeletTreeClassifier(layout=FIRST, **kw).fit(Xa, y)
    assert t.export_text() == ta.export_text()
    np.testing.assert_array_equal(t.predict_proba(X), ta.predict_proba(Xa))
    with pytest.raises(ValueError, match="layout"):
        ShapeletTreeClassifier(**kw).fit(Xa, y)
    st = ShapeletTransform(n_shapelets=3, **kw).fit(Xl, y)
    sa = ShapeletTransform(n_shapelets=3, layout=FIRST, **kw).fit(Xa, y)
    np.testing.assert_array_equal(st.transform(Xl), sa.transform(Xa))
    with pytest.raises(ValueError, match="layout"):
        ShapeletTransform(n_shapelets=3, **kw).fit(Xa, y)


def test_torch_both_layouts(rng):
    torch = pytest.importorskip("torch")
    from tswarp.torch import SoftDTW, soft_dtw
    X, Xf = _data(rng, n=3, length=12, d=2)
    x = torch.tensor(X, requires_grad=True)
    xf = torch.tensor(Xf, requires_grad=True)
    v = SoftDTW(gamma=0.5)(x, x.flip(0))
    vf = SoftDTW(gamma=0.5, layout=FIRST)(xf, xf.flip(0))
    torch.testing.assert_close(v, vf, rtol=0, atol=0)
    v.sum().backward()
    vf.sum().backward()
    torch.testing.assert_close(xf.grad, x.grad.transpose(1, 2), rtol=0, atol=0)
    with pytest.raises(ValueError, match="layout"):
        soft_dtw(xf, xf)


def test_cli_layout(tmp_path, capsys, rng):
    from tswarp import cli
    X, Xf = _data(rng, n=4, length=20, d=3)
    np.save(tmp_path / "last.npy", X)
    np.save(tmp_path / "first.npy", Xf)
    assert cli.main(["matrix", str(tmp_path / "last.npy"), "-o", str(tmp_path / "a.npy")]) == 0
    assert cli.main(["matrix", str(tmp_path / "first.npy"), "--layout", FIRST, "-o",
                     str(tmp_path / "b.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    capsys.readouterr()
    assert cli.main(["matrix", str(tmp_path / "first.npy")]) == 2
    err = capsys.readouterr().err
    assert "--layout channels_first" in err and "first.npy" in err


# ---- windows: one meaning per parameter ------------------------------------------------------
def test_window_is_a_fraction_radius_is_cells(rng):
    a, b = rng.standard_normal(40), rng.standard_normal(40)
    full = tswarp.dtw(a, b)
    assert tswarp.dtw(a, b, window=1) == tswarp.dtw(a, b, window=1.0) == full  # aeon's window=1
    assert tswarp.dtw(a, b, window=np.float32(1.0)) == full
    assert tswarp.dtw(a, b, window=0.25) == tswarp.dtw(a, b, radius=10)
    assert tswarp.dtw(a, b, radius=1) != full
    assert tswarp.dtw(a, b, radius=np.int64(1)) == tswarp.dtw(a, b, radius=1.0)
    for bad, exc, msg in [({"window": 10}, ValueError, "radius=10"),
                          ({"window": 1.5}, ValueError, "radius=1.5"),
                          ({"radius": 0.5}, ValueError, "window=0.5"),
                          ({"radius": -1}, ValueError, "radius must be >= 0"),
                          ({"window": True}, TypeError, "window"),
                          ({"window": np.bool_(True)}, TypeError, "window"),
                          ({"radius": True}, TypeError, "radius"),
                          ({"radius": "3"}, TypeError, "radius"),
                          ({"window": 0.1, "radius": 3}, ValueError, "at most one"),
                          ({"radius": 3, "itakura_max_slope": 2.0}, ValueError, "at most one")]:
        with pytest.raises(exc, match=msg):
            tswarp.dtw(a, b, **bad)
        with pytest.raises(exc, match=msg):  # the Python helper says the same
            conv.band(**bad)
        with pytest.raises(exc, match=msg):
            tswarp.cdist([a, b], **bad)


def test_parameter_kinds():
    a, b = np.arange(5.0), np.arange(6.0)
    for bad in ("no", "False", 1, 0, None, 1.0):
        with pytest.raises(TypeError, match="accumulated must be a bool"):
            tswarp.dtw(a, b, accumulated=bad)
        with pytest.raises(TypeError, match="normalize must be a bool"):
            tswarp.soft_dtw(a, b, normalize=bad)
        with pytest.raises(TypeError, match="condensed must be a bool"):
            tswarp.pdist([a, b], condensed=bad)
        with pytest.raises(TypeError, match="must be a bool"):
            conv.check_bool(bad, "x")
    assert tswarp.dtw(a, b, accumulated=np.bool_(True)) == tswarp.dtw(a, b, accumulated=True)
    for bad in (1 + 5j, np.complex128(1 + 5j), True, "1"):
        with pytest.raises(TypeError, match="nu must be a real number"):
            tswarp.twed(a, b, nu=bad)
        with pytest.raises(TypeError, match="must be a real number"):
            conv.check_real(bad, "nu")


# ---- a callable metric, torch CPU tensors -----------------------------------------------------
def test_callable_metric(rng):
    X = [rng.standard_normal(int(n)) for n in rng.integers(5, 20, 5)]
    Y = [rng.standard_normal(int(n)) for n in rng.integers(5, 20, 3)]
    f = functools.partial(tswarp.dtw, radius=2)
    want = tswarp.cdist(X, Y, radius=2)
    np.testing.assert_allclose(tswarp.cdist(X, Y, metric=f), want, rtol=1e-15)
    np.testing.assert_allclose(tswarp.pdist(X, metric=f), tswarp.pdist(X, radius=2), rtol=1e-15)
    np.testing.assert_allclose(tswarp.pdist(X, metric=f, condensed=True),
                               tswarp.pdist(X, radius=2, condensed=True), rtol=1e-15)
    np.testing.assert_allclose(tswarp.paired(X[:3], Y, metric=f),
                               tswarp.paired(X[:3], Y, radius=2), rtol=1e-15)
    assert tswarp.distance(X[0], Y[0], metric=f) == tswarp.dtw(X[0], Y[0], radius=2)
    seen = []
    tswarp.cdist(X, Y, metric=f, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (15, 15)
    with pytest.raises(TypeError, match="'radius' is not a parameter of a callable metric"):
        tswarp.cdist(X, Y, metric=f, radius=2)
    with pytest.raises(ValueError, match="callable metric runs in Python on the CPU"):
        tswarp.cdist(X, Y, metric=f, device="cuda")
    with pytest.raises(TypeError, match="must return a real number"):
        tswarp.cdist(X, Y, metric=lambda a, b: "x")
    with pytest.raises(ValueError, match=r"X\[1\] contains NaN"):
        tswarp.cdist([X[0], np.array([np.nan, 1.0])], metric=f)


def test_torch_cpu_tensor_that_requires_grad(rng):
    torch = pytest.importorskip("torch")
    a = torch.tensor(rng.standard_normal(20), requires_grad=True)
    b = torch.tensor(rng.standard_normal(15))
    assert tswarp.dtw(a, b) == tswarp.dtw(a.detach().numpy(), b.numpy())
    np.testing.assert_array_equal(tswarp.cdist([a, b]), tswarp.cdist([a.detach().numpy(),
                                                                      b.numpy()]))
