"""tswarp.dtw_barycenter_averaging against tslearn's dtw_barycenter_averaging (the same
initialisation, iterations and constraint give the same barycenter, to 1e-9) on random
walks of random sizes, dims, windows, weights, ragged lengths, explicit initial
barycenters and sizes; errors. Random inputs: the `rng` fixture (seed printed)."""

import warnings

import numpy as np
import pytest

import tswarp
from conftest import peer


def tslearn_dba(X, **kw):
    tb = peer("tslearn.barycenters")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tb.dtw_barycenter_averaging(X, **kw)


def tswarp_dba(X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rising-cost warning, as tslearn's
        return tswarp.dtw_barycenter_averaging(X, **kw)


def test_equals_tslearn(rng):
    for trial in range(16):
        n = int(rng.integers(1, 12))
        L = int(rng.integers(2, 40))
        d = int(rng.choice([1, 2, 3]))
        X = rng.normal(size=(n, L, d)).cumsum(1)
        c = trial % 4
        kw, mp = {}, {}
        if c == 1:
            r = int(rng.integers(0, 6))
            kw, mp = {"radius": r}, {"global_constraint": 2, "sakoe_chiba_radius": r}
        elif c == 2:
            kw, mp = {"itakura_max_slope": 2.0}, {"global_constraint": 1,
                                                  "itakura_max_slope": 2.0}
        w = rng.uniform(0.1, 2.0, size=n) if trial % 3 == 0 else None
        it = int(rng.integers(1, 25))  # (tslearn returns None for 0 iterations)
        exp = tslearn_dba(X, max_iter=it, weights=w, metric_params=mp or None)
        got = tswarp_dba(X, max_iter=it, weights=w, layout="channels_last", n_jobs=1 + trial % 3,
                         **kw)
        np.testing.assert_allclose(got.reshape(exp.shape), exp, rtol=1e-9, atol=1e-9,
                                   err_msg=f"seed={rng.seed} trial={trial} n={n} L={L} d={d} "
                                           f"{kw} iters={it}")


def test_ragged_init_and_size_equal_tslearn(rng):
    to_time_series_dataset = peer("tslearn.utils").to_time_series_dataset
    X = [rng.normal(size=int(rng.integers(4, 30))).cumsum() for _ in range(7)]
    exp = tslearn_dba(to_time_series_dataset(X), max_iter=10)
    np.testing.assert_allclose(tswarp_dba(X, max_iter=10), exp[:, 0], rtol=1e-9, atol=1e-9,
                               err_msg=f"seed={rng.seed} ragged")
    exp = tslearn_dba(to_time_series_dataset(X), max_iter=10, barycenter_size=12)
    np.testing.assert_allclose(tswarp_dba(X, max_iter=10, barycenter_size=12), exp[:, 0],
                               rtol=1e-9, atol=1e-9, err_msg=f"seed={rng.seed} size")
    z0 = rng.normal(size=15).cumsum()
    exp = tslearn_dba(to_time_series_dataset(X), max_iter=10, init_barycenter=z0[:, None])
    np.testing.assert_allclose(tswarp_dba(X, max_iter=10, init_barycenter=z0), exp[:, 0],
                               rtol=1e-9, atol=1e-9, err_msg=f"seed={rng.seed} init")


def test_no_iteration_is_the_initial_barycenter(rng):
    X = rng.normal(size=(4, 10, 2))
    z = tswarp.dtw_barycenter_averaging(X, max_iter=0, layout="channels_last")
    np.testing.assert_allclose(z, X.mean(0), rtol=1e-12, atol=1e-12, err_msg=f"seed={rng.seed}")


def test_identical_series_are_their_own_barycenter(rng):
    x = rng.normal(size=(25, 2))
    z = tswarp.dtw_barycenter_averaging([x, x, x], layout="channels_last")
    np.testing.assert_allclose(z, x, rtol=0, atol=1e-12)
    zf = tswarp.dtw_barycenter_averaging(np.stack([x.T, x.T]), layout="channels_first")
    np.testing.assert_allclose(zf, x.T, rtol=0, atol=1e-12)


def test_progress_and_interrupt(rng):
    X = rng.normal(size=(5, 30)).cumsum(1)
    seen = []
    tswarp.dtw_barycenter_averaging(X, max_iter=3, tol=0.0,
                                    progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[0] == (1, 3)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tswarp.dtw_barycenter_averaging(X, max_iter=3, progress=stop)


def test_bad_input():
    X = np.zeros((3, 5))
    with pytest.raises(ValueError, match="weights"):
        tswarp.dtw_barycenter_averaging(X, weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="weights has 2 entries"):
        tswarp.dtw_barycenter_averaging(X, weights=[1.0, 1.0])
    with pytest.raises(ValueError, match="max_iter"):
        tswarp.dtw_barycenter_averaging(X, max_iter=-1)
    with pytest.raises(ValueError, match="NaN"):
        tswarp.dtw_barycenter_averaging([[0.0, np.nan, 1.0]])
    with pytest.raises(ValueError, match="init_barycenter"):
        tswarp.dtw_barycenter_averaging(np.zeros((3, 5, 2)), init_barycenter=np.zeros((4, 3)),
                                        layout="channels_last")
    with pytest.raises(ValueError, match="radius"):
        tswarp.dtw_barycenter_averaging(X, radius=-2)
    with pytest.raises(ValueError):
        tswarp.dtw_barycenter_averaging([])


def test_elastic_barycenter_average_equals_aeon(rng):
    """tswarp.elastic_barycenter_average against aeon's elastic_barycenter_average
    (method 'petitjean') for wdtw, adtw and msm (both forms): random series, parameters,
    windows, weights and iteration counts, the same barycenter to 1e-9. (EDR's paths follow
    the paper's boundary where aeon's differs: test_family.py.)"""
    avg = peer("aeon.clustering.averaging")
    for trial in range(6):
        n, d, L = int(rng.integers(2, 8)), int(rng.integers(1, 3)), int(rng.integers(5, 25))
        X = rng.normal(size=(n, d, L)).cumsum(-1)
        weights = rng.uniform(0.2, 2, size=n) if rng.random() < 0.4 else None
        iters = int(rng.integers(1, 12))
        for metric, kw in (("wdtw", {"g": float(rng.uniform(0, 0.5))}), ("wdtw", {}),
                           ("adtw", {"warp_penalty": float(rng.uniform(0, 2))}),
                           ("msm", {"c": float(rng.uniform(0.1, 2)),
                                    "independent": bool(rng.random() < 0.5)})):
            if rng.random() < 0.3:
                kw = dict(kw, window=float(rng.choice([0.2, 0.5])))
            exp = avg.elastic_barycenter_average(X, distance=metric, max_iters=iters,
                                                 weights=weights, **kw)
            got = tswarp.elastic_barycenter_average(X, metric, max_iter=iters, weights=weights,
                                                    layout="channels_first", **kw)
            assert got.shape == exp.shape
            np.testing.assert_allclose(got, exp, rtol=1e-9, atol=1e-9, err_msg=(
                f"seed={rng.seed} trial={trial} {metric} {kw} n={n} d={d} L={L} "
                f"iters={iters} weighted={weights is not None}"))


def test_elastic_barycenter_average_bad_input():
    X = np.zeros((3, 10)) + np.arange(10.0)
    assert tswarp.elastic_barycenter_average(X, "msm").tolist() == list(np.arange(10.0))
    for metric in ("dtw", "ddtw", "wddtw", "nope"):
        with pytest.raises(ValueError, match="metric"):
            tswarp.elastic_barycenter_average(X, metric)
    with pytest.raises(ValueError, match="one length"):
        tswarp.elastic_barycenter_average([np.arange(5.0), np.arange(6.0)], "msm")
    with pytest.raises(ValueError, match="weights"):
        tswarp.elastic_barycenter_average(X, "msm", weights=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError):
        tswarp.elastic_barycenter_average(X, "msm", c=-1.0)
    with pytest.raises(TypeError):
        tswarp.elastic_barycenter_average(X, "msm", epsilon=1.0)


_INFO = tswarp.info()
_HAS_GPU = bool(_INFO["cuda_built"] and _INFO["cuda_devices"] > 0)


@pytest.mark.skipif(not _HAS_GPU, reason="needs a CUDA GPU (tswarp.info() reports none)")
def test_dba_on_the_gpu_equals_cpu(rng):
    """device='cuda': every series' path in one GPU batch (cuda/dba.cu); the same paths as
    the CPU's, so the same barycenter bit for bit: ragged and equal lengths, 1-3 channels,
    windows, both methods, weights, small integers (ties everywhere) and random walks,
    float64 (the only precision of dtw_barycenter_averaging)."""
    for trial in range(24):
        n = int(rng.integers(1, 40))
        d = int(rng.integers(1, 4))
        ragged = trial % 3 == 0
        ints = trial % 2 == 1
        lens = rng.integers(2, 60, size=n) if ragged else np.full(n, int(rng.integers(2, 60)))
        X = [(rng.integers(0, 4, size=(int(k), d)).astype(float) if ints
              else rng.normal(size=(int(k), d)).cumsum(0)) for k in lens]
        kw = dict(max_iter=int(rng.integers(1, 6)),
                  method=str(rng.choice(["mm", "petitjean"])), layout="channels_last")
        if trial % 4 == 2:
            kw["radius"] = int(rng.integers(0, 10))
        if trial % 5 == 3:
            kw["weights"] = rng.uniform(0.1, 2.0, size=n)
        if trial % 4 == 1:
            kw["window"] = float(rng.uniform(0.1, 1.0))
        try:
            want = tswarp_dba(X, device="cpu", **kw)
        except ValueError:  # a window without a path for some series: the same error
            with pytest.raises(ValueError):
                tswarp_dba(X, device="cuda", **kw)
            continue
        got = tswarp_dba(X, device="cuda", **kw)
        np.testing.assert_array_equal(got, want, err_msg=f"seed={rng.seed} trial={trial} "
                                                         f"{kw} lens={list(lens)} d={d}")


@pytest.mark.skipif(not _HAS_GPU, reason="needs a CUDA GPU (tswarp.info() reports none)")
def test_dba_on_the_gpu_limits_and_kmeans():
    """Grids of more rows than the batch's shared memory holds: NotImplementedError naming
    the CPU; TimeSeriesKMeans(device='cuda') runs its DBA there (tslearn's clusters)."""
    X = np.random.default_rng(5).normal(size=(3, 2100)).cumsum(1)
    with pytest.raises(NotImplementedError, match="CPU"):
        tswarp.dtw_barycenter_averaging(X, max_iter=1, device="cuda")
    from tswarp.cluster import TimeSeriesKMeans
    Y = np.random.default_rng(6).normal(size=(30, 40)).cumsum(1) + np.repeat([0, 8, 16], 10)[:, None]
    init = Y[[0, 10, 20]][:, :, None]
    a = TimeSeriesKMeans(n_clusters=3, init=init, device="cuda").fit(Y)
    b = TimeSeriesKMeans(n_clusters=3, init=init, device="cpu").fit(Y)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


@pytest.mark.skipif(_HAS_GPU, reason="a CUDA GPU is present: device='cuda' computes there")
def test_dba_cuda_without_a_gpu_is_a_clear_error():
    X = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]])
    with pytest.raises(tswarp.NoDeviceError):
        tswarp.dtw_barycenter_averaging(X, max_iter=1, device="cuda")
    with pytest.raises(ValueError, match="device"):
        tswarp.dtw_barycenter_averaging(X, max_iter=1, device="gpu")
    # auto and cpu are the CPU's
    np.testing.assert_array_equal(tswarp.dtw_barycenter_averaging(X, device="auto"),
                                  tswarp.dtw_barycenter_averaging(X, device="cpu"))
