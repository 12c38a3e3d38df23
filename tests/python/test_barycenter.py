"""Soft-DTW barycenters, nearest-centroid classification and k-means."""

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)
from conftest import peer


def shifted_sines(rng, count=8, length=60):
    t = np.linspace(0, 2 * np.pi, length)
    shifts = rng.uniform(-0.5, 0.5, count)
    return t, np.stack([np.sin(t + s) for s in shifts]), shifts


def test_barycenter_of_shifted_sines_is_a_sine(rng):
    t, X, shifts = shifted_sines(rng)
    z = tswarp.soft_dtw_barycenter(X, gamma=0.1, max_iter=100)
    assert z.shape == (60,)
    # the sine shifted by the mean shift, away from the ends where shifts truncate it;
    # tolerance 0.15 max abs (the amplitude is 1; the Euclidean mean of the shifted copies
    # is damped by cos(spread) and the soft-DTW barycenter is sharper than that)
    ref = np.sin(t + shifts.mean())
    inner = slice(6, -6)
    assert np.abs(z[inner] - ref[inner]).max() < 0.15, rng.seed
    assert np.abs(z).max() > 0.9  # not damped like the Euclidean mean


def test_barycenter_equals_tslearn(rng):
    bary = peer("tslearn.barycenters")
    X = rng.standard_normal((5, 20, 2)).cumsum(axis=1)
    init = X.mean(axis=0)
    ours = tswarp.soft_dtw_barycenter(X, gamma=1.0, max_iter=50, init=init)
    ref = bary.softdtw_barycenter(X, gamma=1.0, max_iter=50, init=init.copy())
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4, err_msg=f"seed {rng.seed}")


def test_barycenter_weights_and_ragged(rng):
    X = [rng.standard_normal(n) for n in (15, 20, 18)]
    init = X[0] + 0.3
    z = tswarp.soft_dtw_barycenter(X, gamma=0.5, weights=[1.0, 0.0, 0.0], max_iter=200,
                                   init=init)
    # zero weights drop the other (ragged) series: the same barycenter as X[0] alone ...
    z1 = tswarp.soft_dtw_barycenter([X[0]], gamma=0.5, max_iter=200, init=init)
    np.testing.assert_allclose(z, z1, rtol=1e-10, atol=1e-10, err_msg=f"seed {rng.seed}")
    # ... and the optimiser lowered the objective from its start. (Not "z approaches X[0]":
    # soft-DTW is not minimised at z = X[0], and L-BFGS may stop in a local minimum whose
    # divergence to X[0] is 0.57, seed 18179965446354051009.)
    assert tswarp.soft_dtw(z, X[0], gamma=0.5) < tswarp.soft_dtw(init, X[0], gamma=0.5), rng.seed
    with pytest.raises(ValueError, match="weights"):
        tswarp.soft_dtw_barycenter(X, weights=[1, 2])


def test_nearest_centroid_gunpoint():
    from tswarp.datasets import load_gunpoint
    from tswarp.learn import SoftDTWNearestCentroid

    Xtr, ytr = load_gunpoint("train")
    Xte, yte = load_gunpoint("test")
    clf = SoftDTWNearestCentroid(gamma=0.1, max_iter=20).fit(Xtr, ytr)
    assert set(clf.classes_) == {1, 2}
    acc = clf.score(Xte, yte)
    # about 0.87 here (0.64 with gamma=1, which smooths the centroids too much)
    assert acc >= 0.8, acc


def test_kmeans_separates_two_shapes(rng):
    from tswarp.learn import SoftDTWKMeans

    t = np.linspace(0, 1, 40)
    A = np.sin(2 * np.pi * t)[None] + 0.1 * rng.standard_normal((10, 40))
    B = np.sign(np.sin(4 * np.pi * t))[None] + 0.1 * rng.standard_normal((10, 40))
    X = np.concatenate([A, B])
    km = SoftDTWKMeans(n_clusters=2, gamma=0.5, max_iter=5, max_iter_barycenter=10,
                       random_state=int(rng.integers(2**31))).fit(X)
    assert km.cluster_centers_.shape == (2, 40, 1)
    labels = km.labels_
    assert len(set(labels[:10])) == 1 and len(set(labels[10:])) == 1
    assert labels[0] != labels[10]
    np.testing.assert_array_equal(km.predict(X), labels)
    assert np.isfinite(km.inertia_)
