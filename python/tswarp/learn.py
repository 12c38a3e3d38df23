"""Estimators under soft-DTW with soft-DTW barycenters as centroids (scikit-learn style).

``SoftDTWNearestCentroid``: one barycenter per class; a series gets the class of the
nearest barycenter. ``SoftDTWKMeans``: Lloyd's iterations with soft-DTW assignments and
barycenter updates (tslearn's ``TimeSeriesKMeans(metric="softdtw")``).

Series are given as an array (n, len), (n, len, d) or a list of (len_i,) / (len_i, d)
arrays. scikit-learn is optional: when installed the estimators derive from its
BaseEstimator (get_params, set_params, clone, pipelines).
"""

import numbers

import numpy as np

from . import _tswarp
from ._sdtw import _barycenter_series, _gamma, soft_dtw_barycenter

try:  # pragma: no cover - depends on the environment
    from sklearn.base import BaseEstimator as _Base, ClassifierMixin as _Clf, ClusterMixin as _Clu
except ImportError:  # pragma: no cover
    class _Base:
        pass

    class _Clf:
        pass

    class _Clu:
        pass

__all__ = ["SoftDTWNearestCentroid", "SoftDTWKMeans"]


def _soft_cdist(series, centers, gamma, normalize, n_jobs):
    return _tswarp.cdist(series, centers, metric="soft_dtw", gamma=gamma, normalize=normalize,
                         n_jobs=n_jobs)


def _check_fitted(est, attr):
    if not hasattr(est, attr):
        raise ValueError(f"this {type(est).__name__} is not fitted yet: call fit first")


class SoftDTWNearestCentroid(_Clf, _Base):
    """Nearest-centroid classifier whose centroids are soft-DTW barycenters.

    Parameters
    ----------
    gamma : float, default 1.0
        Soft-DTW smoothing of the barycenters and of the prediction.
    max_iter : int, default 30
        L-BFGS iterations per barycenter.
    normalize : bool, default True
        Predict with the soft-DTW divergence (>= 0, 0 for identical series), which compares
        centroids fairly; False uses the plain soft-DTW value.
    n_jobs : int, optional

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    centroids_ : list of ndarray (len, d), one per class
    """

    def __init__(self, gamma=1.0, max_iter=30, normalize=True, n_jobs=None):
        self.gamma = gamma
        self.max_iter = max_iter
        self.normalize = normalize
        self.n_jobs = n_jobs

    def fit(self, X, y):
        g = _gamma(self.gamma)
        series = _barycenter_series(X)
        y = np.asarray(y)
        if y.shape != (len(series),):
            raise ValueError(f"y must have one label per series ({len(series)}), got shape "
                             f"{y.shape}")
        self.classes_ = np.unique(y)
        self.centroids_ = [
            soft_dtw_barycenter([s for s, lab in zip(series, y) if lab == c], gamma=g,
                                max_iter=self.max_iter, n_jobs=self.n_jobs)
            for c in self.classes_
        ]
        self.centroids_ = [c[:, None] if c.ndim == 1 else c for c in self.centroids_]
        return self

    def decision_distances(self, X):
        """(n, n_classes) soft-DTW (divergence) of each series to each centroid."""
        _check_fitted(self, "centroids_")
        return _soft_cdist(_barycenter_series(X), self.centroids_, _gamma(self.gamma),
                           bool(self.normalize), self.n_jobs)

    def predict(self, X):
        return self.classes_[np.argmin(self.decision_distances(X), axis=1)]

    def score(self, X, y):
        return float(np.mean(self.predict(X) == np.asarray(y)))


class SoftDTWKMeans(_Clu, _Base):
    """k-means under soft-DTW, with soft-DTW barycenters as centers.

    Parameters
    ----------
    n_clusters : int, default 3
    gamma : float, default 1.0
    max_iter : int, default 30
        Lloyd iterations (stops earlier when the labels stop changing).
    max_iter_barycenter : int, default 30
        L-BFGS iterations of each center update (started from the current center).
    init : {"k-means++", "random"}, default "k-means++"
        k-means++ samples each new seed with probability proportional to its soft-DTW
        divergence to the nearest seed so far (the divergence is >= 0, as k-means++ needs).
    n_init : int, default 1
        Runs from different seeds; the one of least inertia is kept.
    random_state : None, int or numpy.random.Generator
    n_jobs : int, optional

    Attributes
    ----------
    cluster_centers_ : ndarray (n_clusters, len, d) (lengths are equal: every center keeps
        the length of the series it was seeded with, so with ragged inputs a list)
    labels_ : ndarray (n,)
    inertia_ : float, sum over the series of the soft-DTW value to their center
    n_iter_ : int
    """

    def __init__(self, n_clusters=3, gamma=1.0, max_iter=30, max_iter_barycenter=30,
                 init="k-means++", n_init=1, random_state=None, n_jobs=None):
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.max_iter = max_iter
        self.max_iter_barycenter = max_iter_barycenter
        self.init = init
        self.n_init = n_init
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _seed(self, series, k, rng, g):
        n = len(series)
        if self.init == "random":
            return [series[i].copy() for i in rng.choice(n, size=k, replace=False)]
        if self.init != "k-means++":
            raise ValueError(f"init must be 'k-means++' or 'random', got {self.init!r}")
        centers = [series[int(rng.integers(n))].copy()]
        best = np.maximum(_soft_cdist(series, centers, g, True, self.n_jobs)[:, 0], 0)
        while len(centers) < k:
            total = best.sum()
            i = int(rng.choice(n, p=best / total)) if total > 0 else int(rng.integers(n))
            centers.append(series[i].copy())
            d = np.maximum(_soft_cdist(series, [centers[-1]], g, True, self.n_jobs)[:, 0], 0)
            best = np.minimum(best, d)
        return centers

    def _run(self, series, k, rng, g):
        centers = self._seed(series, k, rng, g)
        labels = None
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            D = _soft_cdist(series, centers, g, False, self.n_jobs)
            new = np.argmin(D, axis=1)
            if labels is not None and np.array_equal(new, labels):
                break
            labels = new
            for c in range(k):
                members = [s for s, lab in zip(series, labels) if lab == c]
                if not members:  # empty cluster: restart it at the worst-fitted series
                    worst = int(np.argmax(D[np.arange(len(series)), labels]))
                    centers[c] = series[worst].copy()
                    continue
                z = soft_dtw_barycenter(members, gamma=g, max_iter=self.max_iter_barycenter,
                                        init=centers[c], n_jobs=self.n_jobs)
                centers[c] = z[:, None] if z.ndim == 1 else z
        D = _soft_cdist(series, centers, g, False, self.n_jobs)
        labels = np.argmin(D, axis=1)
        inertia = float(D[np.arange(len(series)), labels].sum())
        return centers, labels, inertia, it

    def fit(self, X, y=None):
        g = _gamma(self.gamma)
        series = _barycenter_series(X)
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= len(series):
            raise ValueError(f"n_clusters must be an int in [1, {len(series)}], got {k!r}")
        if isinstance(self.n_init, bool) or not isinstance(self.n_init, numbers.Integral) \
                or self.n_init < 1:
            raise ValueError(f"n_init must be an int >= 1, got {self.n_init!r}")
        rng = (self.random_state if isinstance(self.random_state, np.random.Generator)
               else np.random.default_rng(self.random_state))
        best = None
        for _ in range(int(self.n_init)):
            run = self._run(series, int(k), rng, g)
            if best is None or run[2] < best[2]:
                best = run
        centers, self.labels_, self.inertia_, self.n_iter_ = best
        lens = {c.shape[0] for c in centers}
        self.cluster_centers_ = np.stack(centers) if len(lens) == 1 else centers
        return self

    def predict(self, X):
        _check_fitted(self, "cluster_centers_")
        D = _soft_cdist(_barycenter_series(X), list(self.cluster_centers_), _gamma(self.gamma),
                        False, self.n_jobs)
        return np.argmin(D, axis=1)

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_
