"""Nearest neighbours: tswarp.knn, tswarp.search, the lower bounds and envelopes (defined in
tswarp._knn, re-exported here), and k-NN estimators in scikit-learn's shape:
``KNeighborsTimeSeriesClassifier`` and ``KNeighborsTimeSeriesRegressor``.

This module imports scikit-learn (optional: without it the estimators are plain classes),
so ``import tswarp`` does not import it; ``tswarp.neighbors`` loads on first use.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from ._conventions import check_int
from ._knn import (_host, envelope, knn, lb_enhanced, lb_improved, lb_keogh, lb_kim, lb_webb,
                   search)

try:  # pragma: no cover - depends on the environment
    from sklearn.base import BaseEstimator as _Base, ClassifierMixin as _Clf, RegressorMixin as _Reg
    from sklearn.exceptions import DataConversionWarning as _DataConversionWarning
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.multiclass import check_classification_targets as _check_targets
    from sklearn.utils.validation import check_array as _check_array
except ImportError:  # pragma: no cover
    _check_array = None  # type: ignore[assignment]
    _DataConversionWarning = None  # type: ignore[assignment,misc]
    _check_targets = None  # type: ignore[assignment]

    class _Base:  # type: ignore[no-redef]
        pass

    class _Clf:  # type: ignore[no-redef]
        pass

    class _Reg:  # type: ignore[no-redef]
        pass

    class NotFittedError(ValueError, AttributeError):  # type: ignore[no-redef]
        """scikit-learn's exception for an estimator used before fit."""

__all__ = ["knn", "search", "envelope", "lb_kim", "lb_keogh", "lb_improved", "lb_enhanced",
           "lb_webb",
           "KNeighborsTimeSeriesClassifier", "KNeighborsTimeSeriesRegressor"]


# ---- estimators ---------------------------------------------------------------------------

def _weights_of(dist: np.ndarray, weights: Any) -> np.ndarray:
    if weights == "uniform" or weights is None:
        return np.ones_like(dist, dtype=float)
    if weights == "distance":
        d = dist.astype(float)
        with np.errstate(divide="ignore"):
            w = 1.0 / d
        inf = np.isinf(w)
        rows = inf.any(axis=1)
        w[rows] = inf[rows]  # exact matches take all the weight, as scikit-learn does
        return w
    if callable(weights):
        w = np.asarray(weights(dist), dtype=float)
        if w.shape != dist.shape:
            raise ValueError(f"weights returned shape {w.shape}; expected {dist.shape}")
        return w
    raise ValueError(f"weights must be 'uniform', 'distance' or a callable, got {weights!r}")


def _check_collection(X, name="X"):
    """A list of series stays a list (series of any lengths); an array is checked as
    scikit-learn checks one (2-D (n, len) or 3-D (n, len, d), finite, real)."""
    X = _host(X)
    if isinstance(X, (list, tuple)) and X and not isinstance(X[0], numbers.Number):
        return list(X)
    if _check_array is not None:
        a = _check_array(X, allow_nd=True, dtype="numeric", input_name=name)
    else:  # pragma: no cover - without scikit-learn
        a = np.asarray(X, dtype=float)
        if a.ndim not in (2, 3) or a.shape[0] == 0 or a.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-D array (n, len) or 3-D array "
                             f"(n, len, d); got shape {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"{name} contains NaN or infinity")
    if a.ndim > 3:
        raise ValueError(f"{name} must be 2-D (n, len) or 3-D (n, len, d); got shape "
                         f"{a.shape}")
    return a


def _check_features(est, Xc):
    """A 2-D array given after fitting on 2-D arrays has the fitted length (scikit-learn's
    n_features_in_ rule; series of other lengths come as lists)."""
    nf = getattr(est, "n_features_in_", None)
    if isinstance(Xc, np.ndarray) and Xc.ndim == 2 and nf is not None and Xc.shape[1] != nf:
        raise ValueError(f"X has {Xc.shape[1]} features, but {type(est).__name__} is "
                         f"expecting {nf} features as input (series of another length: pass "
                         f"a list of series)")


class _KNeighborsBase(_Base):
    def __init__(self, n_neighbors=1, weights="uniform", metric="dtw", metric_params=None,
                 n_jobs=None, device="auto", layout=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.device = device
        self.layout = layout

    def _collection(self, X, name="X"):
        return _check_collection(X, name)

    def fit(self, X, y):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None")
        Xc = self._collection(X)
        n = len(Xc)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1 and isinstance(self, _Clf):
            if _DataConversionWarning is not None:
                warnings.warn("A column-vector y was passed when a 1d array was expected",
                              _DataConversionWarning, stacklevel=2)
            y = y.ravel()
        if y.ndim == 0 or y.shape[0] != n:
            raise ValueError(f"y must have one target per series ({n}), got shape {y.shape}")
        if isinstance(self, _Clf):
            if _check_targets is not None:
                _check_targets(y)
        else:
            if _check_array is not None:
                y = _check_array(y, ensure_2d=False, dtype="numeric", input_name="y")
            elif not np.isfinite(np.asarray(y, dtype=float)).all():  # pragma: no cover
                raise ValueError("y contains NaN or infinity")
        check_int(self.n_neighbors, "n_neighbors", 1)
        if isinstance(Xc, np.ndarray) and Xc.ndim == 2:
            self.n_features_in_ = Xc.shape[1]
        self._fit_X = Xc
        self._fit_y = y
        self.n_samples_fit_ = n
        return self

    def _check_fitted(self):
        if not hasattr(self, "_fit_X"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit first")

    def _params(self):
        mp = dict(self.metric_params or {})
        if not isinstance(self.metric, str):
            raise ValueError(f"metric must be 'dtw', 'twed' or 'soft_dtw', got {self.metric!r}")
        return mp

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Distances and indices (into the training set) of the nearest neighbours, nearest
        first. X=None: the neighbours of each training series among the others."""
        self._check_fitted()
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        check_int(k, "n_neighbors", 1)
        n = self.n_samples_fit_
        mp = self._params()
        if X is None:
            if k > n - 1:
                raise ValueError(f"n_neighbors = {k} but only {n - 1} other training series")
            D, Ix = knn(self._fit_X, self._fit_X, k + 1, metric=self.metric, device=self.device,
                        n_jobs=self.n_jobs, layout=self.layout, **mp)
            rows = np.arange(n)[:, None]
            keep = Ix != rows
            # drop each row's own index (or its last entry when a tie pushed it out)
            drop_last = keep.all(axis=1)
            keep[drop_last, -1] = False
            D = D[keep].reshape(n, k)
            Ix = Ix[keep].reshape(n, k)
        else:
            Xc = self._collection(X)
            _check_features(self, Xc)
            if k > n:
                raise ValueError(f"n_neighbors = {k} but the training set has {n} series")
            D, Ix = knn(Xc, self._fit_X, k, metric=self.metric, device=self.device,
                        n_jobs=self.n_jobs, layout=self.layout, **mp)
        return (D, Ix) if return_distance else Ix


class KNeighborsTimeSeriesClassifier(_Clf, _KNeighborsBase):
    """k-nearest-neighbour classifier under an elastic measure (tslearn's and aeon's
    ``KNeighborsTimeSeriesClassifier``), exact and pruned by :func:`tswarp.knn`.

    Parameters
    ----------
    n_neighbors : int, default 1
    weights : {'uniform', 'distance'} or callable, default 'uniform'
        'distance' weighs a neighbour by 1 / d (exact matches take all the weight).
    metric : {'dtw', 'twed', 'soft_dtw'}, default 'dtw'
    metric_params : dict, optional
        The measure's parameters, e.g. {'window': 0.1} (see :func:`tswarp.cdist`).
    n_jobs : int, optional
    device : {'auto', 'cpu', 'cuda', 'cuda:N'}
    layout : {None, 'channels_last', 'channels_first'}

    Attributes
    ----------
    classes_ : ndarray
    n_samples_fit_ : int

    Ties among the votes go to the first class in ``classes_`` (sorted), as scikit-learn's.
    """

    def fit(self, X, y):
        super().fit(X, y)
        self.classes_, self._codes = np.unique(self._fit_y, return_inverse=True)
        self._codes = self._codes.ravel()
        return self

    def predict_proba(self, X):
        D, Ix = self.kneighbors(X)
        w = _weights_of(D, self.weights)
        P = np.zeros((D.shape[0], len(self.classes_)))
        codes = self._codes[Ix]
        for c in range(len(self.classes_)):
            P[:, c] = np.sum(w * (codes == c), axis=1)
        s = P.sum(axis=1, keepdims=True)
        s[s == 0] = 1
        return P / s

    def predict(self, X):
        P = self.predict_proba(X)  # (raises NotFittedError before classes_ is read)
        return self.classes_[np.argmax(P, axis=1)]


class KNeighborsTimeSeriesRegressor(_Reg, _KNeighborsBase):
    """k-nearest-neighbour regressor under an elastic measure: the (weighted) mean of the
    neighbours' targets (y of shape (n,) or (n, n_outputs)). Parameters as
    :class:`KNeighborsTimeSeriesClassifier`."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def predict(self, X):
        D, Ix = self.kneighbors(X)
        w = _weights_of(D, self.weights)
        y = np.asarray(self._fit_y, dtype=float)
        Y = y[Ix]
        if Y.ndim == 3:  # multi-output
            return np.einsum("nk,nkt->nt", w, Y) / w.sum(axis=1, keepdims=True)
        return np.sum(w * Y, axis=1) / w.sum(axis=1)
