"""Elastic k-means in scikit-learn's shape: ``TimeSeriesKMeans``.

Any measure of ``tswarp.METRICS`` assigns the series (one ``tswarp.cdist`` per iteration);
the centres are DTW barycenters (DBA) for metric 'dtw' or arithmetic means. With metric
'dtw' and averaging 'dba' the iterations are tslearn's ``TimeSeriesKMeans(metric="dtw")``:
the same clusters and centres from the same initial centres. This module imports
scikit-learn when it is there (``import tswarp`` does not import it); ``tswarp.cluster``
loads on first use.
"""

from __future__ import annotations

import warnings
from typing import Any, List

import numpy as np

from . import _tswarp
from ._conventions import check_int, check_layout, check_real
from ._dba import dtw_barycenter_averaging
from ._sdtw import _barycenter_series

try:  # pragma: no cover - depends on the environment
    from sklearn.base import BaseEstimator as _Base, ClusterMixin as _Cluster
    from sklearn.exceptions import NotFittedError
except ImportError:  # pragma: no cover
    class _Base:  # type: ignore[no-redef]
        pass

    class _Cluster:  # type: ignore[no-redef]
        pass

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """scikit-learn's exception for an estimator used before fit."""

__all__ = ["TimeSeriesKMeans", "EmptyClusterError"]


class EmptyClusterError(ValueError):
    """Every initialisation tried left a cluster without series."""


class _Empty(Exception):
    pass


_WINDOW_KEYS = ("window", "radius", "itakura_max_slope")


class TimeSeriesKMeans(_Cluster, _Base):
    """k-means with an elastic measure.

    Parameters
    ----------
    n_clusters : int, default 3
    metric : str, default 'dtw'
        Any of ``tswarp.METRICS``; its parameters in `metric_params`.
    metric_params : dict, optional
        Keyword arguments of the measure (e.g. ``{"radius": 5}``, ``{"c": 0.5}``).
    averaging : {'auto', 'dba', 'mean'}, default 'auto'
        The centre of a cluster: 'dba' (DTW barycenter averaging, Petitjean's form as
        tslearn's DTW k-means; metric 'dtw' only), 'mean' (the arithmetic mean of the
        series, equal lengths only); 'auto' is 'dba' for 'dtw' and 'mean' otherwise.
    max_iter : int, default 50
    tol : float, default 1e-6
        Stop when the inertia changes by less.
    n_init : int, default 1
        Initialisations kept (the lowest inertia wins); one that empties a cluster is
        retried, up to max(n_init, 10) attempts, as tslearn.
    init : {'k-means++', 'random'} or array (n_clusters, len, d), default 'k-means++'
        'random': n_clusters distinct series; 'k-means++': D^2 sampling under the metric;
        an array: the initial centres.
    max_iter_barycenter : int, default 30
        DBA iterations per update.
    random_state : int, RandomState or None
    n_jobs : int, optional
        Threads (None or -1: all cores).
    device : {'auto', 'cpu', 'cuda'}, default 'auto'
        Where the assignments' distances are computed.
    layout : {None, 'channels_last', 'channels_first'}

    Attributes
    ----------
    cluster_centers_ : ndarray (n_clusters, len, d)
    labels_ : ndarray (n,)
    inertia_ : float
        The mean squared distance of the series to their centres at the last assignment.
    n_iter_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from tswarp.cluster import TimeSeriesKMeans
    >>> X = np.array([[0.0, 0.0, 1.0], [0.0, 0.1, 1.0], [5.0, 5.0, 4.0], [5.0, 5.1, 4.0]])
    >>> TimeSeriesKMeans(n_clusters=2, init="random", random_state=0).fit(X).labels_.tolist()
    [0, 0, 1, 1]
    """

    def __init__(self, n_clusters=3, metric="dtw", metric_params=None, averaging="auto",
                 max_iter=50, tol=1e-6, n_init=1, init="k-means++", max_iter_barycenter=30,
                 random_state=None, n_jobs=None, device="auto", layout=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.metric_params = metric_params
        self.averaging = averaging
        self.max_iter = max_iter
        self.tol = tol
        self.n_init = n_init
        self.init = init
        self.max_iter_barycenter = max_iter_barycenter
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.device = device
        self.layout = layout

    # ---- helpers --------------------------------------------------------------------------

    def _averaging(self):
        avg = self.averaging
        if avg == "auto":
            return "dba" if self.metric == "dtw" else "mean"
        if avg not in ("dba", "mean"):
            raise ValueError(f"averaging must be 'auto', 'dba' or 'mean', got {avg!r}")
        if avg == "dba" and self.metric != "dtw":
            raise ValueError("averaging='dba' is DTW barycenter averaging: metric must be 'dtw'")
        return avg

    def _cdist(self, A: List[np.ndarray], B: List[np.ndarray]) -> np.ndarray:
        return _tswarp.cdist(A, B, metric=self.metric, n_jobs=self.n_jobs, device=self.device,
                             layout="channels_last", **dict(self.metric_params or {}))

    def _rng(self):
        rs = self.random_state
        if isinstance(rs, np.random.RandomState):
            return rs
        return np.random.RandomState(rs)

    def _initial(self, series, rs) -> List[np.ndarray]:
        k, n = self.n_clusters, len(series)
        init = self.init
        if hasattr(init, "__array__"):
            c = np.asarray(init, dtype=np.float64)
            d = series[0].shape[1]
            if c.ndim == 2 and d == 1:
                c = c[:, :, None]
            if c.ndim != 3 or c.shape[0] != k or c.shape[2] != d or c.shape[1] == 0:
                raise ValueError(f"init must be an array (n_clusters={k}, len, {d}), got shape "
                                 f"{np.shape(init)}")
            if not np.isfinite(c).all():
                raise ValueError("init contains NaN or infinity")
            return [x.copy() for x in c]
        if init == "random":
            idx = rs.choice(n, k, replace=False)
            return [series[i].copy() for i in idx]
        if init == "k-means++":
            idx = [int(rs.randint(n))]
            closest = self._cdist(series, [series[idx[0]]])[:, 0] ** 2
            for _ in range(1, k):
                total = closest.sum()
                if not np.isfinite(total) or total <= 0:
                    rest = np.setdiff1d(np.arange(n), idx)
                    nxt = int(rs.choice(rest))
                else:
                    nxt = int(rs.choice(n, p=closest / total))
                idx.append(nxt)
                closest = np.minimum(closest, self._cdist(series, [series[nxt]])[:, 0] ** 2)
            return [series[i].copy() for i in idx]
        raise ValueError(f"init must be 'k-means++', 'random' or an array, got {init!r}")

    def _update(self, series, labels, centers, avg):
        mp = dict(self.metric_params or {})
        window_kw = {key: mp[key] for key in _WINDOW_KEYS if key in mp}
        out = []
        for c in range(self.n_clusters):
            members = [series[i] for i in np.flatnonzero(labels == c)]
            if avg == "dba":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # DBA's rising cost stop
                    z = dtw_barycenter_averaging(
                        members, init_barycenter=centers[c], max_iter=self.max_iter_barycenter,
                        method="petitjean", n_jobs=self.n_jobs, layout="channels_last",
                        **window_kw)
                out.append(z.reshape(centers[c].shape))
            else:
                out.append(np.mean(np.stack(members), axis=0))
        return out

    def _fit_one(self, series, rs, avg):
        centers = self._initial(series, rs)
        old = np.inf
        inertia = np.inf
        it = 0
        for it in range(check_int(self.max_iter, "max_iter", 1)):
            D = self._cdist(series, centers)
            labels = D.argmin(axis=1)
            if np.bincount(labels, minlength=self.n_clusters).min() == 0:
                raise _Empty()
            inertia = float(np.mean(D[np.arange(len(series)), labels] ** 2))
            centers = self._update(series, labels, centers, avg)
            if abs(old - inertia) < self.tol:
                break
            old = inertia
        return centers, inertia, it + 1

    def _series(self, X, name="X"):
        code = check_layout(self.layout)
        return _barycenter_series(X, code, name)

    # ---- scikit-learn API ------------------------------------------------------------------

    def fit(self, X, y=None):
        k = check_int(self.n_clusters, "n_clusters", 1)
        n_init = check_int(self.n_init, "n_init", 1)
        check_int(self.max_iter_barycenter, "max_iter_barycenter", 0)
        check_real(self.tol, "tol", low=0.0)
        if not isinstance(self.metric, str):
            raise ValueError(f"metric must be one of tswarp.METRICS, got {self.metric!r}")
        avg = self._averaging()
        series = self._series(X)
        if len(series) < k:
            raise ValueError(f"n_clusters={k} is more than the {len(series)} series")
        if avg == "mean" and len({s.shape[0] for s in series}) > 1:
            raise ValueError("averaging='mean' needs series of one length")
        rs = self._rng()
        best = None
        done = attempts = 0
        while done < n_init and attempts < max(n_init, 10):
            attempts += 1
            try:
                centers, inertia, iters = self._fit_one(series, rs, avg)
            except _Empty:
                continue
            done += 1
            if best is None or inertia < best[1]:
                best = (centers, inertia, iters)
        if best is None:
            raise EmptyClusterError(f"every initialisation ({attempts}) left a cluster empty")
        centers, inertia, iters = best
        self.cluster_centers_ = np.stack(centers)
        self.labels_ = self._cdist(series, centers).argmin(axis=1)
        self.inertia_ = inertia
        self.n_iter_ = iters
        self._centers = centers
        return self

    def _check_fitted(self):
        if not hasattr(self, "cluster_centers_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")

    def transform(self, X):
        """Distances (n, n_clusters) of the series to the centres under the metric."""
        self._check_fitted()
        return self._cdist(self._series(X), self._centers)

    def predict(self, X):
        """The nearest centre of each series."""
        return self.transform(X).argmin(axis=1)

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_
