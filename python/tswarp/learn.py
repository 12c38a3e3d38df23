"""Estimators under soft-DTW with soft-DTW barycenters as centroids (scikit-learn style).

``SoftDTWNearestCentroid``: one barycenter per class; a series gets the class of the
nearest barycenter. ``SoftDTWKMeans``: Lloyd's iterations with soft-DTW assignments and
barycenter updates (tslearn's ``TimeSeriesKMeans(metric="softdtw")``).

Series are given as an array (n, len), (n, len, d) or a list of (len_i,) / (len_i, d)
arrays. scikit-learn is optional: when installed the estimators derive from its
BaseEstimator (get_params, set_params, clone, pipelines).
"""

import warnings

import numpy as np

from . import _tswarp
from ._conventions import FIRST, check_bool, check_int, check_layout, check_n_jobs
from ._progress import make_progress
from ._sdtw import _barycenter_series, _gamma, soft_dtw_barycenter

try:  # pragma: no cover - depends on the environment
    from sklearn.base import BaseEstimator as _Base, ClassifierMixin as _Clf, ClusterMixin as _Clu
    from sklearn.exceptions import NotFittedError
except ImportError:  # pragma: no cover
    class _Base:  # type: ignore[no-redef]
        pass

    class _Clf:  # type: ignore[no-redef]
        pass

    class _Clu:  # type: ignore[no-redef]
        pass

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """scikit-learn's exception for an estimator used before fit (a ValueError and an
        AttributeError, as there)."""

__all__ = ["SoftDTWNearestCentroid", "SoftDTWKMeans"]


def _soft_cdist(series, centers, gamma, normalize, n_jobs):
    # the series are in tswarp's layout already
    return _tswarp.cdist(series, centers, metric="soft_dtw", gamma=gamma, normalize=normalize,
                         n_jobs=n_jobs, layout="channels_last")


def _check_fitted(est, attr):
    if not hasattr(est, attr):
        raise NotFittedError(f"this {type(est).__name__} is not fitted yet: call fit first")


def _out_layout(z, code):
    """A (len, d) center (or a (k, len, d) stack) in the caller's layout."""
    if code != FIRST:
        return z
    return z.T if z.ndim == 2 else z.transpose(0, 2, 1)


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
    layout : {None, 'channels_last', 'channels_first'}
        How X is laid out (see :func:`tswarp.cdist`); the centroids use the same layout.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
    centroids_ : list of ndarray (len, d) (or (d, len) for channels_first), one per class
    """

    def __init__(self, gamma=1.0, max_iter=30, normalize=True, n_jobs=None, layout=None):
        self.gamma = gamma
        self.max_iter = max_iter
        self.normalize = normalize
        self.n_jobs = n_jobs
        self.layout = layout

    def fit(self, X, y):
        g = _gamma(self.gamma)
        code = check_layout(self.layout)
        check_int(self.max_iter, "max_iter", 0)
        check_bool(self.normalize, "normalize")
        series = _barycenter_series(X, code)
        y = np.asarray(y)
        if y.shape != (len(series),):
            raise ValueError(f"y must have one label per series ({len(series)}), got shape "
                             f"{y.shape}")
        self.classes_ = np.unique(y)
        cents = [
            soft_dtw_barycenter([s for s, lab in zip(series, y) if lab == c], gamma=g,
                                max_iter=self.max_iter, n_jobs=self.n_jobs,
                                layout="channels_last")
            for c in self.classes_
        ]
        self._centroids = [c[:, None] if c.ndim == 1 else c for c in cents]
        self.centroids_ = [_out_layout(c, code) for c in self._centroids]
        return self

    def decision_distances(self, X):
        """(n, n_classes) soft-DTW (divergence) of each series to each centroid."""
        _check_fitted(self, "centroids_")
        code = check_layout(self.layout)
        return _soft_cdist(_barycenter_series(X, code), self._centroids, _gamma(self.gamma),
                           check_bool(self.normalize, "normalize"), self.n_jobs)

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
    progress : bool or callable, default False
        True draws a bar of the Lloyd iterations (over all runs) on stderr; a callable is
        called as ``progress(done, total)``. Ctrl-C stops the fit within a second either
        way (KeyboardInterrupt).
    layout : {None, 'channels_last', 'channels_first'}
        How X is laid out (see :func:`tswarp.cdist`); the centers use the same layout.

    A cluster left empty by an assignment is re-seeded with the series that its current
    center fits worst (as scikit-learn's KMeans relocates empty clusters), with a
    ``UserWarning``, so every cluster keeps at least one series.

    Attributes
    ----------
    cluster_centers_ : ndarray (n_clusters, len, d) ((n_clusters, d, len) for
        channels_first); with series of different lengths, where the centers keep the
        lengths of the series they were seeded with, a list of (len_c, d) arrays
    labels_ : ndarray (n,)
    inertia_ : float, sum over the series of the soft-DTW value to their center
    n_iter_ : int
    """

    def __init__(self, n_clusters=3, gamma=1.0, max_iter=30, max_iter_barycenter=30,
                 init="k-means++", n_init=1, random_state=None, n_jobs=None, progress=False,
                 layout=None):
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.max_iter = max_iter
        self.max_iter_barycenter = max_iter_barycenter
        self.init = init
        self.n_init = n_init
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.progress = progress
        self.layout = layout

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

    @staticmethod
    def _fill_empty(D, labels, k, centers, series):
        """Move the worst-fitted series into each empty cluster (sklearn's relocation): the
        series whose distance to its own center is largest, taken from a cluster that keeps
        at least one other series. Updates labels and centers in place."""
        n = len(labels)
        for c in range(k):
            if np.any(labels == c):
                continue
            counts = np.bincount(labels, minlength=k)
            fit = D[np.arange(n), labels].copy()
            fit[counts[labels] <= 1] = -np.inf  # never empty another cluster
            worst = int(np.argmax(fit))
            warnings.warn(f"SoftDTWKMeans: cluster {c} became empty; re-seeded with series "
                          f"{worst}, the one its center fitted worst", UserWarning, stacklevel=4)
            labels[worst] = c
            centers[c] = series[worst].copy()

    def _run(self, series, k, rng, g, tick):
        centers = self._seed(series, k, rng, g)
        labels = None
        it = 0
        max_iter = check_int(self.max_iter, "max_iter", 1)
        for it in range(1, max_iter + 1):
            D = _soft_cdist(series, centers, g, False, self.n_jobs)
            new = np.argmin(D, axis=1)
            self._fill_empty(D, new, k, centers, series)
            tick()
            if labels is not None and np.array_equal(new, labels):
                break
            labels = new
            for c in range(k):
                members = [s for s, lab in zip(series, labels) if lab == c]
                z = soft_dtw_barycenter(members, gamma=g, max_iter=self.max_iter_barycenter,
                                        init=centers[c], n_jobs=self.n_jobs,
                                        layout="channels_last")
                centers[c] = z[:, None] if z.ndim == 1 else z
        D = _soft_cdist(series, centers, g, False, self.n_jobs)
        labels = np.argmin(D, axis=1)
        self._fill_empty(D, labels, k, centers, series)
        inertia = float(D[np.arange(len(series)), labels].sum())
        return centers, labels, inertia, it

    def fit(self, X, y=None):
        g = _gamma(self.gamma)
        code = check_layout(self.layout)
        series = _barycenter_series(X, code)
        k = check_int(self.n_clusters, "n_clusters", 1, len(series))
        n_init = check_int(self.n_init, "n_init", 1)
        max_iter = check_int(self.max_iter, "max_iter", 1)
        check_int(self.max_iter_barycenter, "max_iter_barycenter", 0)
        check_n_jobs(self.n_jobs)
        rng = (self.random_state if isinstance(self.random_state, np.random.Generator)
               else np.random.default_rng(self.random_state))
        bar = make_progress(self.progress, "SoftDTWKMeans", "iterations")
        total = n_init * max_iter
        done = [0]

        def tick():
            done[0] += 1
            if bar is not None:
                bar(min(done[0], total), total)

        best = None
        try:
            for r in range(n_init):
                run = self._run(series, k, rng, g, tick)
                done[0] = (r + 1) * max_iter  # a run that converged early skips the rest
                if bar is not None:
                    bar(done[0], total)
                if best is None or run[2] < best[2]:
                    best = run
        finally:
            if bar is not None and hasattr(bar, "close"):
                bar.close()
        centers, self.labels_, self.inertia_, self.n_iter_ = best
        lens = {c.shape[0] for c in centers}
        self._centers = centers
        if len(lens) == 1:
            self.cluster_centers_ = _out_layout(np.stack(centers), code)
        else:
            self.cluster_centers_ = [_out_layout(c, code) for c in centers]
        return self

    def predict(self, X):
        _check_fitted(self, "cluster_centers_")
        code = check_layout(self.layout)
        D = _soft_cdist(_barycenter_series(X, code), list(self._centers), _gamma(self.gamma),
                        False, self.n_jobs)
        return np.argmin(D, axis=1)

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_
