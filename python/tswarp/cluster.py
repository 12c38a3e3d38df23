"""Elastic k-means in scikit-learn's shape: ``TimeSeriesKMeans``.

Any measure of ``tswarp.METRICS`` assigns the series (one ``tswarp.cdist`` per iteration);
the centres are DTW barycenters (DBA) for metric 'dtw', the family's barycenters (aeon's
``elastic_barycenter_average``) for 'wdtw', 'adtw', 'msm' and 'edr', soft-DTW barycenters
for 'soft_dtw', or arithmetic means. With metric 'dtw' and averaging 'dba' the iterations
are tslearn's ``TimeSeriesKMeans(metric="dtw")``, with 'soft_dtw' and 'soft_dba' its
``metric="softdtw"``: the same clusters and centres from the same initial centres; with
the family and 'dba' they are aeon's ``TimeSeriesKMeans(averaging_method="ba")`` (the same
clusters and centres once the assignments settle). This
module imports scikit-learn when it is there (``import tswarp`` does not import it);
``tswarp.cluster`` loads on first use.
"""

from __future__ import annotations

import warnings
from typing import Any, List

import numpy as np

from . import _tswarp
from ._conventions import check_int, check_layout, check_real, from_layout
from ._dba import _BA_PATH_DEFAULTS, dtw_barycenter_averaging, elastic_barycenter_average
from ._sdtw import _barycenter_series, soft_dtw_barycenter
from .neighbors import _check_collection, _check_features

try:  # pragma: no cover - depends on the environment
    from sklearn.base import BaseEstimator as _Base, ClusterMixin as _Cluster
    from sklearn.base import TransformerMixin as _Transformer
    from sklearn.exceptions import NotFittedError
except ImportError:  # pragma: no cover
    class _Base:  # type: ignore[no-redef]
        pass

    class _Cluster:  # type: ignore[no-redef]
        pass

    class _Transformer:  # type: ignore[no-redef]
        pass

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """scikit-learn's exception for an estimator used before fit."""

__all__ = ["TimeSeriesKMeans", "TimeSeriesKMedoids", "EmptyClusterError"]


class EmptyClusterError(ValueError):
    """Every initialisation tried left a cluster without series."""


class _Empty(Exception):
    pass


_WINDOW_KEYS = ("window", "radius", "itakura_max_slope")


class _ElasticClusters(_Cluster, _Transformer, _Base):
    """What both estimators share: the fitted check, predict and fit_predict (transform,
    the distances to the centres, is each one's)."""

    def _check_fitted(self):
        if not hasattr(self, "labels_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")

    def transform(self, X):  # pragma: no cover - each estimator defines it
        raise NotImplementedError

    def _series(self, X, name="X", fitting=False):
        """The series of X as (len_i, d) arrays, X checked as scikit-learn checks an array
        (a list of series of any lengths stays one); n_features_in_ kept for 2-D arrays."""
        Xc = _check_collection(X, name)
        if fitting:
            if isinstance(Xc, np.ndarray) and Xc.ndim == 2:
                self.n_features_in_ = Xc.shape[1]
            elif hasattr(self, "n_features_in_"):
                del self.n_features_in_
        else:
            _check_features(self, Xc)
        return _barycenter_series(Xc, check_layout(self.layout), name)

    def predict(self, X):
        """The nearest centre of each series."""
        return self.transform(X).argmin(axis=1)

    def fit_predict(self, X, y=None):
        return self.fit(X).labels_


class TimeSeriesKMeans(_ElasticClusters):
    """k-means with an elastic measure.

    Parameters
    ----------
    n_clusters : int, default 3
    metric : str, default 'dtw'
        Any of ``tswarp.METRICS``; its parameters in `metric_params`.
    metric_params : dict, optional
        Keyword arguments of the measure (e.g. ``{"radius": 5}``, ``{"c": 0.5}``).
    averaging : {'auto', 'dba', 'soft_dba', 'mean'}, default 'auto'
        The centre of a cluster: 'dba' (barycenter averaging, Petitjean's form: for
        'dtw' tslearn's DTW k-means, each update starting from the current centre; for
        'wdtw', 'adtw', 'msm' and 'edr' aeon's ``averaging_method="ba"``,
        :func:`tswarp.elastic_barycenter_average` of the members from their mean, with
        the metric's parameters), 'soft_dba' (the soft-DTW barycenter
        from the current centre, ``soft_dtw_barycenter`` with the metric's gamma and
        window, as tslearn's softdtw k-means; metric 'soft_dtw' only), 'mean' (the
        arithmetic mean of the series, equal lengths only); 'auto' is 'dba' for 'dtw',
        'wdtw', 'adtw', 'msm' and 'edr' (aeon's default ``averaging_method="ba"``),
        'soft_dba' for 'soft_dtw' and 'mean' otherwise.
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
        DBA (or soft-DTW barycenter L-BFGS) iterations per update.
    random_state : int, RandomState or None
    n_jobs : int, optional
        Threads (None or -1: all cores).
    device : {'auto', 'cpu', 'cuda'}, default 'auto'
        Where the assignments' distances are computed; 'cuda' also runs DTW's DBA
        alignments there (:func:`tswarp.dtw_barycenter_averaging`'s device).
    layout : {None, 'channels_last', 'channels_first'}

    Attributes
    ----------
    cluster_centers_ : ndarray (n_clusters, len, d), in the data's layout
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
            if self.metric == "dtw" or self.metric in _BA_PATH_DEFAULTS:
                return "dba"
            return "soft_dba" if self.metric == "soft_dtw" else "mean"
        if avg not in ("dba", "soft_dba", "mean"):
            raise ValueError(f"averaging must be 'auto', 'dba', 'soft_dba' or 'mean', got {avg!r}")
        if avg == "dba" and self.metric != "dtw" and self.metric not in _BA_PATH_DEFAULTS:
            raise ValueError("averaging='dba' is barycenter averaging: metric must be 'dtw' or "
                             f"one of {sorted(_BA_PATH_DEFAULTS)}, got {self.metric!r}")
        if avg == "soft_dba" and self.metric != "soft_dtw":
            raise ValueError("averaging='soft_dba' is the soft-DTW barycenter: metric must be "
                             "'soft_dtw'")
        return avg

    def _dba_device(self):
        """DBA's alignments: on the GPU when device names one ('auto': the CPU)."""
        dev = self.device
        return dev if isinstance(dev, str) and dev.startswith("cuda") else "cpu"

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
            if avg == "dba" and self.metric != "dtw":
                # aeon's k-means: the members' barycenter from their mean, every update
                z = elastic_barycenter_average(np.stack(members), self.metric,
                                               max_iter=self.max_iter_barycenter,
                                               layout="channels_last", **mp)
                out.append(np.asarray(z).reshape(centers[c].shape))
            elif avg == "dba":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # DBA's rising cost stop
                    z = dtw_barycenter_averaging(
                        members, init_barycenter=centers[c], max_iter=self.max_iter_barycenter,
                        method="petitjean", n_jobs=self.n_jobs, layout="channels_last",
                        device=self._dba_device(), **window_kw)
                out.append(z.reshape(centers[c].shape))
            elif avg == "soft_dba":
                # tslearn's softdtw_barycenter from the centre, as its softdtw k-means
                z = soft_dtw_barycenter(members, gamma=mp.get("gamma", 1.0), init=centers[c],
                                        max_iter=self.max_iter_barycenter, n_jobs=self.n_jobs,
                                        layout="channels_last", **window_kw)
                out.append(np.asarray(z).reshape(centers[c].shape))
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

    # ---- scikit-learn API ------------------------------------------------------------------

    def fit(self, X, y=None):
        k = check_int(self.n_clusters, "n_clusters", 1)
        n_init = check_int(self.n_init, "n_init", 1)
        check_int(self.max_iter_barycenter, "max_iter_barycenter", 0)
        check_real(self.tol, "tol", low=0.0)
        if not isinstance(self.metric, str):
            raise ValueError(f"metric must be one of tswarp.METRICS, got {self.metric!r}")
        avg = self._averaging()
        series = self._series(X, fitting=True)
        if len(series) < k:
            raise ValueError(f"n_clusters={k} is more than the {len(series)} series")
        if (avg == "mean" or (avg == "dba" and self.metric != "dtw")) and \
                len({s.shape[0] for s in series}) > 1:
            raise ValueError(f"averaging={avg!r} with metric={self.metric!r} needs series of "
                             "one length")
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
        self.cluster_centers_ = from_layout(np.stack(centers), check_layout(self.layout))
        self.labels_ = self._cdist(series, centers).argmin(axis=1)
        self.inertia_ = inertia
        self.n_iter_ = iters
        self._centers = centers
        return self

    def transform(self, X):
        """Distances (n, n_clusters) of the series to the centres under the metric."""
        self._check_fitted()
        return self._cdist(self._series(X), self._centers)


class TimeSeriesKMedoids(_ElasticClusters):
    """k-medoids with an elastic measure: the centres are series of the data.

    The distances between every pair are computed once (``tswarp.pdist``); both methods
    then follow aeon's ``TimeSeriesKMedoids`` step by step, so that the same initial
    medoids give the same clusters.

    Parameters
    ----------
    n_clusters : int, default 8
    metric : str, default 'dtw'
        Any of ``tswarp.METRICS``; its parameters in `metric_params`.
    metric_params : dict, optional
    method : {'pam', 'alternate'}, default 'pam'
        'pam': the best swap of a medoid and a non-medoid per iteration (aeon's PAM, its
        bookkeeping included); 'alternate': assign, then each cluster's medoid is its series
        of least total distance (Voronoi iteration).
    init : {'random', 'build'} or array of n_clusters indices, default 'random'
        'build': PAM's BUILD (deterministic); 'random': n_clusters distinct series.
    n_init : int, default 10
        Initialisations kept (the lowest inertia wins; 1 with 'build').
    max_iter : int, default 300
    tol : float, default 1e-6
    random_state : int, RandomState or None
    n_jobs : int, optional
    device : {'auto', 'cpu', 'cuda'}, default 'auto'
    layout : {None, 'channels_last', 'channels_first'}

    Attributes
    ----------
    medoid_indices_ : ndarray (n_clusters,)
    cluster_centers_ : ndarray (n_clusters, len, d), in the data's layout (a list when the
        medoids have several lengths)
    labels_ : ndarray (n,)
    inertia_ : float
        The sum of the distances of the series to their medoids (aeon's).
    n_iter_ : int
    """

    def __init__(self, n_clusters=8, metric="dtw", metric_params=None, method="pam",
                 init="random", n_init=10, max_iter=300, tol=1e-6, random_state=None,
                 n_jobs=None, device="auto", layout=None):
        self.n_clusters = n_clusters
        self.metric = metric
        self.metric_params = metric_params
        self.method = method
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.device = device
        self.layout = layout

    def _initial(self, D, rs):
        k, n = self.n_clusters, D.shape[0]
        init = self.init
        if isinstance(init, str) and init == "random":
            return rs.choice(n, k, replace=False)
        if isinstance(init, str) and init == "build":
            med = np.zeros(k, dtype=np.int64)
            med[0] = int(np.argmin(D.sum(axis=1)))
            rest = np.delete(np.arange(n), med[0])
            Dj = D[med[0]].copy()
            for m in range(1, k):
                best_gain, pick = 0.0, (0, 0)
                for pos, i in enumerate(rest):
                    gain = np.cumsum(np.maximum(0.0, Dj[rest] - D[i, rest]))[-1]
                    if gain >= best_gain:
                        best_gain, pick = gain, (i, pos)
                med[m] = pick[0]
                rest = np.delete(rest, pick[1])
                Dj = np.minimum(Dj, D[:, pick[0]])
            return med
        if not isinstance(init, str) and hasattr(init, "__len__"):
            idx = np.asarray(init)
            if idx.dtype.kind not in "iu" or idx.shape != (k,) or len(set(idx.tolist())) != k \
                    or idx.min() < 0 or idx.max() >= n:
                raise ValueError(f"init must be {k} distinct series indices in [0, {n}), got "
                                 f"{init!r}")
            return idx.astype(np.int64).copy()
        raise ValueError(f"init must be 'random', 'build' or an array of indices, got {init!r}")

    @staticmethod
    def _assign(D, med):
        sub = D[:, med]
        return sub.argmin(axis=1), float(sub.min(axis=1).sum())

    def _alternate(self, D, med):
        old_inertia, old_labels = np.inf, None
        i = 0
        for i in range(self.max_iter):
            labels, inertia = self._assign(D, med)
            if abs(old_inertia - inertia) < self.tol:
                break
            old_inertia = inertia
            if old_labels is not None and np.array_equal(labels, old_labels):
                break
            old_labels = labels
            new = []
            for c in range(self.n_clusters):
                members = np.flatnonzero(labels == c)
                new.append(members[int(np.argmin(D[np.ix_(members, members)].sum(axis=0)))])
            med = np.array(new)
        labels, inertia = self._assign(D, med)
        return med, labels, inertia, i + 1

    def _pam(self, D, med):
        n, k = D.shape[0], self.n_clusters
        med = med.copy()
        srt = np.sort(D[med], axis=0)
        near, second = srt[0], srt[1] if k > 1 else np.full(n, np.inf)
        nonmed = np.delete(np.arange(n), med)  # (as aeon: fixed before the swaps)
        old_inertia = np.inf
        i = 0
        for i in range(self.max_iter):
            old = med.copy()
            best = (1, 1, 0.0)
            kk = nonmed
            for id_i in nonmed:
                dik = D[id_i, kk]
                dki = D[kk, id_i]
                for id_j in med:
                    in_j = D[id_j, kk] == near[kk]
                    term = np.where(in_j & (dik < second[kk]), dki - near[kk],
                                    np.where(in_j, second[kk] - near[kk],
                                             np.where(dki < near[kk], dki - near[kk], 0.0)))
                    cost = np.cumsum(np.concatenate(([0.0], term)))[-1]
                    cost += D[id_j, id_i] if D[id_i, id_j] < second[id_j] else second[id_j]
                    if cost < best[2]:
                        best = (id_j, id_i, cost)
            inertia = np.inf
            if best[2] < 0:
                med[med == best[0]] = best[1]
                srt = np.sort(D[med], axis=0)
                near, second = srt[0], srt[1] if k > 1 else np.full(n, np.inf)
                inertia = float(np.sum(near))
            if np.array_equal(old, med) or abs(old_inertia - inertia) < self.tol:
                break
            old_inertia = inertia
        labels, inertia = self._assign(D, med)
        return med, labels, inertia, i + 1

    def fit(self, X, y=None):
        k = check_int(self.n_clusters, "n_clusters", 1)
        n_init = check_int(self.n_init, "n_init", 1)
        check_int(self.max_iter, "max_iter", 1)
        check_real(self.tol, "tol", low=0.0)
        if self.method not in ("pam", "alternate"):
            raise ValueError(f"method must be 'pam' or 'alternate', got {self.method!r}")
        if not isinstance(self.metric, str):
            raise ValueError(f"metric must be one of tswarp.METRICS, got {self.metric!r}")
        series = self._series(X, fitting=True)
        n = len(series)
        if k > n:
            raise ValueError(f"n_clusters={k} is more than the {n} series")
        D = _tswarp.pdist(series, metric=self.metric, n_jobs=self.n_jobs, device=self.device,
                          layout="channels_last", **dict(self.metric_params or {}))
        rs = self.random_state if isinstance(self.random_state, np.random.RandomState) \
            else np.random.RandomState(self.random_state)
        if isinstance(self.init, str) and self.init == "build":
            n_init = 1
        fit = self._pam if self.method == "pam" else self._alternate
        best = None
        for _ in range(n_init):
            result = fit(D, self._initial(D, rs))
            if best is None or result[2] < best[2]:
                best = result
        med, labels, inertia, iters = best
        self.medoid_indices_ = np.asarray(med, dtype=np.int64)
        self.labels_ = labels
        self.inertia_ = inertia
        self.n_iter_ = iters
        self._centers = [series[i] for i in self.medoid_indices_]
        code = check_layout(self.layout)
        if len({s.shape[0] for s in self._centers}) == 1:
            self.cluster_centers_ = from_layout(np.stack(self._centers), code)
        else:  # series of several lengths: a list, each in the caller's layout
            self.cluster_centers_ = [from_layout(s, code) for s in self._centers]
        return self

    def transform(self, X):
        """Distances (n, n_clusters) of the series to the medoids under the metric."""
        self._check_fitted()
        return _tswarp.cdist(self._series(X), self._centers,
                             metric=self.metric, n_jobs=self.n_jobs, device=self.device,
                             layout="channels_last", **dict(self.metric_params or {}))
