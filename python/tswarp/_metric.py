"""A Python callable as ``metric`` (tslearn's and aeon's convention), for cdist, pdist,
paired and distance.

The C extension hands such calls here (``_tswarp.c``: a callable ``metric``), so that a
user's own measure sits beside the built-in ones with the same arguments and outputs. It
runs one Python call per pair, so it is slow (microseconds of interpreter per pair before
the measure's own work): the built-in metrics run in C, in parallel.

The callable gets two series as numpy arrays in tswarp's layout, each as the collection
holds it: a 1-D (len,) array for a 2-D collection (n, len) or a list of 1-D series, a
(len, d) array otherwise; the keyword arguments the call gave beyond tswarp's own are
passed on to it (aeon's ``pairwise_distance(X, metric=f, **kwargs)``). It must return a
real number; the result is float64.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Dict, List

import numpy as np

from ._conventions import as_collection, as_series, check_layout
from ._progress import make_progress

__all__ = ["pair", "batch"]


def _series_list(X: Any, name: str, code: int) -> List[np.ndarray]:
    if X is None:
        raise ValueError(f"{name} is None; expected series")
    C = as_collection(X, name, code)
    if isinstance(C, list):
        items = C
    elif C.ndim in (2, 3):
        items = [C[i] for i in range(C.shape[0])]
    else:
        raise ValueError(f"{name} must be a 2-D array (n, len), a 3-D array (n, len, d) or a "
                         f"list of series; got shape {np.shape(C)}")
    if not items:
        raise ValueError(f"{name} is empty (no series)")
    out = []
    for i, s in enumerate(items):
        a = np.asarray(s)
        if a.dtype.kind not in "biuf":
            raise TypeError(f"{name}[{i}] has dtype {a.dtype}; tswarp needs real numbers")
        if a.ndim not in (1, 2) or a.shape[0] == 0 or (a.ndim == 2 and a.shape[1] == 0):
            raise ValueError(f"{name}[{i}] must be a non-empty series (len,) or (len, d); got "
                             f"shape {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"{name}[{i}] contains NaN or infinity")
        out.append(a)
    return out


def _value(fn: Callable, a: np.ndarray, b: np.ndarray, params: Dict[str, Any],
           where: str) -> float:
    v = fn(a, b, **params)
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"metric returned {type(v).__name__} for {where}; it must return a "
                        f"real number")
    return float(v)


def pair(fn: Callable, a: Any, b: Any, params: Dict[str, Any], layout: Any) -> float:
    """distance(a, b, metric=fn, **params)."""
    code = check_layout(layout)
    A, B = as_series(a, "a", code), as_series(b, "b", code)
    for x, name in ((A, "a"), (B, "b")):
        if x.dtype.kind not in "biuf":
            raise TypeError(f"{name} has dtype {x.dtype}; tswarp needs real numbers")
        if x.size == 0:
            raise ValueError(f"{name} is empty")
        if not np.isfinite(x).all():
            raise ValueError(f"{name} contains NaN or infinity")
    return _value(fn, A, B, params, "(a, b)")


def batch(fn: Callable, X: Any, Y: Any, kind: int, condensed: bool, params: Dict[str, Any],
          layout: Any, progress: Any, fname: str) -> np.ndarray:
    """cdist (kind 0), pdist (1: each unordered pair once, d(x_i, x_j) for i < j mirrored,
    the diagonal d(x_i, x_i)) or paired (2) with a callable metric."""
    code = check_layout(layout)
    xs = _series_list(X, "X", code)
    ys = xs if kind == 1 else _series_list(Y, "Y", code)
    nx, ny = len(xs), len(ys)
    if kind == 2 and nx != ny:
        raise ValueError(f"{fname}(): X has {nx} series but Y has {ny}: paired() needs as many "
                         "of each")
    if kind == 0:
        total = nx * ny
    elif kind == 1:
        total = nx * (nx - 1) // 2 + (0 if condensed else nx)
    else:
        total = nx
    bar = make_progress(progress, fname, "pairs")
    done = 0

    def tick():
        nonlocal done
        done += 1
        if bar is not None and (done == total or done % 64 == 0):
            bar(done, total)

    try:
        if kind == 2:
            out = np.empty(nx)
            for k in range(nx):
                out[k] = _value(fn, xs[k], ys[k], params, f"(X[{k}], Y[{k}])")
                tick()
        elif kind == 0:
            out = np.empty((nx, ny))
            for i in range(nx):
                for j in range(ny):
                    out[i, j] = _value(fn, xs[i], ys[j], params, f"(X[{i}], Y[{j}])")
                    tick()
        else:
            D = np.zeros((nx, nx))
            for i in range(nx):
                if not condensed:
                    D[i, i] = _value(fn, xs[i], xs[i], params, f"(X[{i}], X[{i}])")
                    tick()
                for j in range(i + 1, nx):
                    D[i, j] = D[j, i] = _value(fn, xs[i], xs[j], params, f"(X[{i}], X[{j}])")
                    tick()
            out = D[np.triu_indices(nx, 1)] if condensed else D
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return out
