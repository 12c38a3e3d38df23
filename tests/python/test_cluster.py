"""tswarp.cluster.TimeSeriesKMeans: DTW k-means with DBA equals tslearn's
TimeSeriesKMeans(metric="dtw") from the same initial centres (labels, centres to 1e-9,
inertia, iterations); the family with 'dba' equals aeon's ba k-means; any measure with mean
centres; initialisations, empty clusters,
errors. Random inputs: the `rng` fixture (seed printed).

tslearn's DTW k-means passes `metric_params` to its DBA's njit path function, which does not
understand the global constraint names, so with a window its centres ignore the window
while its assignments use it: the comparison runs without windows."""

import warnings

import numpy as np
import pytest

import tswarp
from conftest import peer


def make_data(rng, n=30, k=3, d=1):
    L = int(rng.integers(8, 40))
    X = rng.normal(size=(n, L, d)).cumsum(1) + (np.arange(n) % k)[:, None, None] * 3.0
    return X


def test_dtw_kmeans_equals_tslearn(rng):
    tc = peer("tslearn.clustering")
    from tswarp.cluster import TimeSeriesKMeans
    for trial in range(6):
        k = int(rng.integers(2, 5))
        X = make_data(rng, n=int(rng.integers(k + 5, 40)), k=k, d=int(rng.choice([1, 2])))
        init = X[rng.choice(len(X), k, replace=False)].copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = tc.TimeSeriesKMeans(n_clusters=k, metric="dtw", init=init.copy(),
                                      max_iter=15).fit(X)
        got = TimeSeriesKMeans(n_clusters=k, metric="dtw", init=init.copy(), max_iter=15,
                               layout="channels_last").fit(X)
        what = f"seed={rng.seed} trial={trial} k={k} shape={X.shape}"
        np.testing.assert_array_equal(got.labels_, exp.labels_, err_msg=what)
        np.testing.assert_allclose(got.cluster_centers_, exp.cluster_centers_, rtol=1e-9,
                                   atol=1e-9, err_msg=what)
        assert abs(got.inertia_ - exp.inertia_) <= 1e-9 * max(1.0, exp.inertia_), what
        assert got.n_iter_ == exp.n_iter_, what


def test_soft_dtw_kmeans_equals_tslearn(rng):
    """metric 'soft_dtw' with soft-DTW barycenters ('auto' = 'soft_dba'): tslearn's
    TimeSeriesKMeans(metric='softdtw') from the same initial centres. Both run scipy's
    L-BFGS on the same objective; the centres agree as the barycenters do (test_barycenter:
    1e-4), the labels exactly on these separated clusters. gamma 0.1 is left out: there a
    1e-13 difference in the objective (the two soft-DTW implementations' roundings) can send
    L-BFGS's line search down another branch after a few k-means iterations (seed 23:
    equal labels, one centre 0.6 apart), a property of the optimiser, not of either side."""
    tc = peer("tslearn.clustering")
    from tswarp.cluster import TimeSeriesKMeans
    for trial in range(3):
        k = int(rng.integers(2, 4))
        X = make_data(rng, n=int(rng.integers(k + 5, 24)), k=k, d=int(rng.choice([1, 2])))
        init = X[rng.choice(len(X), k, replace=False)].copy()
        gamma = float(rng.choice([0.5, 1.0]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = tc.TimeSeriesKMeans(n_clusters=k, metric="softdtw", init=init.copy(),
                                      metric_params={"gamma": gamma}, max_iter=5,
                                      max_iter_barycenter=10).fit(X)
        got = TimeSeriesKMeans(n_clusters=k, metric="soft_dtw", metric_params={"gamma": gamma},
                               init=init.copy(), max_iter=5, max_iter_barycenter=10,
                               layout="channels_last").fit(X)
        what = f"seed={rng.seed} trial={trial} k={k} gamma={gamma} shape={X.shape}"
        np.testing.assert_array_equal(got.labels_, exp.labels_, err_msg=what)
        np.testing.assert_allclose(got.cluster_centers_, exp.cluster_centers_, rtol=1e-3,
                                   atol=1e-3, err_msg=what)
        assert abs(got.inertia_ - exp.inertia_) <= 1e-3 * max(1.0, abs(exp.inertia_)), what
    with pytest.raises(ValueError, match="metric must be 'soft_dtw'"):
        TimeSeriesKMeans(n_clusters=2, metric="dtw", averaging="soft_dba").fit(X)


@pytest.mark.parametrize("metric,params,d", [
    ("msm", {"c": 0.5}, 1), ("msm", {"c": 1.0, "window": 0.3}, 1),
    ("msm", {"c": 0.7, "independent": False}, 2), ("wdtw", {"g": 0.1}, 1),
    ("wdtw", {"g": 0.05}, 2), ("adtw", {"warp_penalty": 0.5}, 1)])
def test_family_kmeans_equals_aeon(rng, metric, params, d):
    """averaging='dba' with the family: aeon's TimeSeriesKMeans(averaging_method='ba') from
    the same initial centres (the same parameters for its distances and its barycenters),
    labels and centres to 1e-9. tol=0 runs every iteration (aeon's tol is on the sum of
    distances, tswarp's on tslearn's mean squared distance); aeon's max_iter counts
    assignments, the last without an update, tswarp's (tslearn's) updates, each followed by
    an assignment: aeon's it + 1 is tswarp's it. EDR is left out: its
    paths follow the paper's boundary, not aeon 1.6's (tswarp.edr)."""
    peer("aeon.clustering")
    from aeon.clustering import TimeSeriesKMeans as AeonKMeans
    from tswarp.cluster import TimeSeriesKMeans
    from tswarp.cluster import EmptyClusterError
    k = 3
    X = make_data(rng, n=int(rng.integers(12, 24)), k=k, d=d)
    it = int(rng.integers(2, 8))
    # a start that empties no cluster: the two differ there by design (aeon moves a far
    # series into the empty cluster, tswarp tries another start, as tslearn)
    for _ in range(50):
        init = X[rng.choice(len(X), k, replace=False)].copy()
        try:
            got = TimeSeriesKMeans(n_clusters=k, metric=metric, metric_params=params,
                                   averaging="dba", init=init, max_iter=it, tol=0,
                                   layout="channels_last").fit(X)
        except EmptyClusterError:
            continue
        if np.bincount(got.labels_, minlength=k).min() > 0:
            break
    else:
        pytest.fail(f"seed={rng.seed}: 50 starts all emptied a cluster")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = AeonKMeans(n_clusters=k, init=init.transpose(0, 2, 1).copy(), distance=metric,
                         distance_params=dict(params), averaging_method="ba",
                         average_params=dict(params), max_iter=it + 1, tol=0,
                         random_state=0).fit(X.transpose(0, 2, 1).copy())
    what = f"seed={rng.seed} {metric} {params} shape={X.shape} max_iter={it}"
    np.testing.assert_array_equal(got.labels_, exp.labels_, err_msg=what)
    np.testing.assert_allclose(got.cluster_centers_, exp.cluster_centers_.transpose(0, 2, 1),
                               rtol=1e-9, atol=1e-9, err_msg=what)


@pytest.mark.parametrize("metric,params", [("msm", {"c": 0.5}), ("wdtw", {"g": 0.1}),
                                           ("adtw", {"warp_penalty": 0.5}), ("edr", {}),
                                           ("erp", {"g": 0.1}), ("twed", {})])
def test_auto_averaging_is_aeons_default(rng, metric, params):
    """averaging='auto' is barycenter averaging where tswarp has it for the measure (aeon's
    TimeSeriesKMeans defaults to averaging_method='ba'), the mean elsewhere."""
    from tswarp.cluster import TimeSeriesKMeans
    X = make_data(rng, n=15)
    kw = dict(n_clusters=2, metric=metric, metric_params=params, init="random", max_iter=3,
              random_state=int(rng.integers(1 << 30)), layout="channels_last")
    auto = TimeSeriesKMeans(averaging="auto", **kw).fit(X)
    same = "mean" if metric in ("erp", "twed") else "dba"
    exp = TimeSeriesKMeans(averaging=same, **kw).fit(X)
    what = f"seed={rng.seed} {metric}"
    np.testing.assert_array_equal(auto.labels_, exp.labels_, err_msg=what)
    np.testing.assert_array_equal(auto.cluster_centers_, exp.cluster_centers_, err_msg=what)
    if metric in ("msm", "wdtw"):  # and not the mean: the centres differ from it
        mean = TimeSeriesKMeans(averaging="mean", **kw).fit(X)
        assert not np.array_equal(auto.cluster_centers_, mean.cluster_centers_), what


@pytest.mark.parametrize("metric,params", [("msm", {"c": 0.5}), ("erp", {"g": 0.1}),
                                           ("dtw", {"radius": 2}), ("twed", {})])
def test_other_measures_with_mean_centres(rng, metric, params):
    from tswarp.cluster import TimeSeriesKMeans
    X = make_data(rng)
    km = TimeSeriesKMeans(n_clusters=3, metric=metric, metric_params=params, averaging="mean",
                          init="random", random_state=int(rng.integers(1 << 30)),
                          layout="channels_last").fit(X)
    D = tswarp.cdist(X, km.cluster_centers_, metric=metric, layout="channels_last", **params)
    np.testing.assert_array_equal(km.labels_, D.argmin(1), err_msg=f"seed={rng.seed}")
    np.testing.assert_array_equal(km.predict(X), km.labels_, err_msg=f"seed={rng.seed}")
    assert km.transform(X).shape == (len(X), 3)
    assert sorted(np.bincount(km.labels_, minlength=3).tolist())[0] > 0


def test_random_state_reproduces(rng):
    from tswarp.cluster import TimeSeriesKMeans
    X = make_data(rng)
    for init in ("random", "k-means++"):
        a = TimeSeriesKMeans(n_clusters=3, init=init, random_state=7, max_iter=5,
                             layout="channels_last").fit(X)
        b = TimeSeriesKMeans(n_clusters=3, init=init, random_state=7, max_iter=5,
                             layout="channels_last").fit(X)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_well_separated_clusters_are_found(rng):
    from tswarp.cluster import TimeSeriesKMeans
    t = np.linspace(0, 6, 50)
    X = np.concatenate([np.sin(t + rng.normal(size=(10, 1)) * 0.1) + 5 * c
                        for c in range(3)])
    y = np.repeat(np.arange(3), 10)
    for metric in ("dtw", "msm", "wdtw", "lcss"):
        km = TimeSeriesKMeans(n_clusters=3, metric=metric, init="k-means++", n_init=3,
                              random_state=int(rng.integers(1 << 30))).fit(X)
        # the same partition up to the clusters' names
        assert len({(a, b) for a, b in zip(km.labels_, y)}) == 3, (metric, f"seed={rng.seed}")


def test_empty_clusters_and_errors():
    from tswarp.cluster import EmptyClusterError, TimeSeriesKMeans
    X = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.1], [9.0, 9.0, 9.0]])
    init = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # two equal centres: one stays empty
    with pytest.raises(EmptyClusterError):
        TimeSeriesKMeans(n_clusters=2, init=init).fit(X)
    with pytest.raises(ValueError, match="n_clusters=5 is more than"):
        TimeSeriesKMeans(n_clusters=5).fit(X)
    with pytest.raises(ValueError, match="metric must be 'dtw' or one of"):
        TimeSeriesKMeans(n_clusters=2, metric="lcss", averaging="dba").fit(X)
    with pytest.raises(ValueError, match="one length"):
        TimeSeriesKMeans(n_clusters=2, metric="msm", averaging="dba").fit(
            [[0.0, 1.0], [0.0, 1.0, 2.0], [5.0, 5.0]])
    with pytest.raises(ValueError, match="averaging must be"):
        TimeSeriesKMeans(n_clusters=2, averaging="median").fit(X)
    with pytest.raises(ValueError, match="one length"):
        TimeSeriesKMeans(n_clusters=2, averaging="mean").fit([[0.0, 1.0], [0.0, 1.0, 2.0],
                                                              [5.0, 5.0]])
    with pytest.raises(ValueError, match="init must be"):
        TimeSeriesKMeans(n_clusters=2, init="first").fit(X)
    with pytest.raises(ValueError, match="init must be an array"):
        TimeSeriesKMeans(n_clusters=2, init=np.zeros((3, 3))).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        TimeSeriesKMeans(n_clusters=2).fit([[0.0, np.nan], [1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="n_clusters"):
        TimeSeriesKMeans(n_clusters=0).fit(X)
    from tswarp.cluster import NotFittedError
    with pytest.raises(NotFittedError):
        TimeSeriesKMeans().predict(X)


@pytest.mark.parametrize("method", ["pam", "alternate"])
def test_kmedoids_equals_aeon(rng, method):
    peer("aeon.clustering")
    from aeon.clustering import TimeSeriesKMedoids as AeonKMedoids
    from tswarp.cluster import TimeSeriesKMedoids
    for trial in range(4):
        n, k = int(rng.integers(12, 40)), int(rng.integers(2, 5))
        X = rng.normal(size=(n, 1, 20)).cumsum(2) + (np.arange(n) % k)[:, None, None] * 2.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exp = AeonKMedoids(n_clusters=k, distance="msm", method=method, init="build",
                               n_init=1).fit(X)
        got = TimeSeriesKMedoids(n_clusters=k, metric="msm", method=method, init="build",
                                 layout="channels_first").fit(X)
        what = f"seed={rng.seed} trial={trial} n={n} k={k} {method}"
        np.testing.assert_array_equal(got.labels_, exp.labels_, err_msg=what)
        np.testing.assert_allclose(got.cluster_centers_, exp.cluster_centers_, rtol=0, atol=0,
                                   err_msg=what)
        assert abs(got.inertia_ - exp.inertia_) <= 1e-9 * exp.inertia_, what
        assert got.n_iter_ == exp.n_iter_, what


def test_kmedoids_random_init_and_errors(rng):
    from tswarp.cluster import TimeSeriesKMedoids
    X = make_data(rng)
    a = TimeSeriesKMedoids(n_clusters=3, random_state=3, layout="channels_last").fit(X)
    b = TimeSeriesKMedoids(n_clusters=3, random_state=3, layout="channels_last").fit(X)
    np.testing.assert_array_equal(a.medoid_indices_, b.medoid_indices_)
    D = tswarp.cdist(X, X[a.medoid_indices_])
    np.testing.assert_array_equal(a.labels_, D.argmin(1), err_msg=f"seed={rng.seed}")
    np.testing.assert_array_equal(a.predict(X), a.labels_)
    with pytest.raises(ValueError, match="init must be 3 distinct"):
        TimeSeriesKMedoids(n_clusters=3, init=np.array([0, 0, 1])).fit(X)
    with pytest.raises(ValueError, match="method must be"):
        TimeSeriesKMedoids(n_clusters=3, method="clara").fit(X)
    with pytest.raises(ValueError, match="more than"):
        TimeSeriesKMedoids(n_clusters=99).fit(X)


@pytest.mark.parametrize("name", ["TimeSeriesKMeans", "TimeSeriesKMedoids"])
def test_sklearn_check_estimator(name):
    peer("sklearn")
    from sklearn.utils.estimator_checks import check_estimator
    import tswarp.cluster as tc
    est = getattr(tc, name)(n_clusters=2, random_state=0,
                            **({"max_iter": 3, "init": "random"} if name.endswith("Means")
                               else {"n_init": 2}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed, failed
