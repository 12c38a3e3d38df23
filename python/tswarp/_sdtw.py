"""Soft-DTW values with gradients, and soft-DTW barycenters (numpy front end).

The computation is the C library's (``tsw_soft_dtw_grad``), reached through the raw-address
binding ``_tswarp._soft_dtw_grad_raw`` that ``tswarp.torch`` shares.
"""

import os

import numpy as np

from . import _tswarp
from ._conventions import (FIRST, as_collection, as_series, band, check_bool, check_int,
                           check_layout, check_n_jobs, check_real, from_layout)

__all__ = ["soft_dtw_grad", "soft_dtw_barycenter"]


def _gamma(gamma):
    return check_real(gamma, "gamma", low=0.0, strict=True)


def _window(window=None, radius=None, itakura_max_slope=None):
    """(kind, value) for the binding (tswarp/_conventions.py band)."""
    return band(window, radius, itakura_max_slope)


def _n_jobs(n_jobs):
    return check_n_jobs(n_jobs)


def _as_batch(v, name, code):
    """(count, len, dim) float array in tswarp's layout and whether the input was one
    series (code: the layout, tswarp/_conventions.py)."""
    if isinstance(v, (str, bytes)) or v is None:
        raise TypeError(f"{name} must be an array of numbers, got {type(v).__name__}")
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = as_series(a, name, code) if a.ndim == 2 else as_collection(a, name, code)
    if a.ndim == 1:
        a, single = a[None, :, None], True
    elif a.ndim == 2:
        a, single = a[None], True
    elif a.ndim == 3:
        single = False
    else:
        raise ValueError(f"{name} must be (len,), (len, d) or (batch, len, d), got shape {a.shape}")
    if 0 in a.shape:
        raise ValueError(f"{name} is empty (shape {a.shape})")
    return a, single


# The matrix form on the CPU from this many features on (the GPU's crossover is its own,
# src/cuda/sdtw_mat.cuh): the costs of a batch by numpy's BLAS, the C library's soft-DTW on
# them, the gradients by products from E. On the VM (2 cores, bench/RESULTS.md, 8 pairs of
# 256 points) it was 0.41x the fused kernel at D = 16, 1.15x at 32, 3.1x at 64, 5.0x at 256.
_MAT_MIN_DIM = 32


def _matrix_form(d):
    """Whether soft_dtw_grad takes the matrix form: TSWARP_SDTW_MAT=0 never, 1 always (the
    developer knob the GPU shares), else from _MAT_MIN_DIM features."""
    knob = os.environ.get("TSWARP_SDTW_MAT", "")
    if knob[:1] in ("0", "1"):
        return knob[:1] == "1"
    return d >= _MAT_MIN_DIM


def _sqeuclid_costs(P, Q):
    """(count, n, m) squared Euclidean costs of P (count, n, d) against Q (count, m, d), in
    float64 by the expansion (the BLAS product), clamped at 0: the cancellation leaves about
    1e-16 of the norms, below the C kernels' own rounding of long sums."""
    C = np.matmul(P, Q.transpose(0, 2, 1))
    C *= -2.0
    C += np.einsum("knd,knd->kn", P, P)[:, :, None]
    C += np.einsum("kmd,kmd->km", Q, Q)[:, None, :]
    np.maximum(C, 0.0, out=C)
    return C


def _matrix_grad(A, B, g, wk, wv, normalize, nj):
    """Values and gradients of soft_dtw_grad's batch by the matrix form (float64): for each
    kind of pair ((a, b), and for the divergence (a, a) and (b, b) at -1/2) the costs, E =
    dR / dC from the C library's cost-matrix kernel (tsw_soft_dtw_cost_grad), then
    grad_a = 2 (rowsum(E) a - E b) and grad_b = 2 (colsum(E) b - E^T a)."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    kinds = [(A, B, 1.0, 0, 1)]
    if normalize:
        kinds += [(A, A, -0.5, 0, 0), (B, B, -0.5, 1, 1)]
    values = np.zeros(A.shape[0])
    grads = [np.zeros_like(A), np.zeros_like(B)]
    for P, Q, coef, gp, gq in kinds:
        C = _sqeuclid_costs(P, Q)
        count, n, m = C.shape
        v = np.empty(count)
        E = np.empty_like(C)
        _tswarp._soft_dtw_cost_grad_raw(C.ctypes.data, v.ctypes.data, E.ctypes.data, 1, count,
                                        n, m, 0, 0, g, wk, wv, False, 0, 0, nj)
        values += coef * v
        grads[gp] += (2.0 * coef) * (E.sum(axis=2)[:, :, None] * P - np.matmul(E, Q))
        grads[gq] += (2.0 * coef) * (E.sum(axis=1)[:, :, None] * Q -
                                     np.matmul(E.transpose(0, 2, 1), P))
    return values, grads[0], grads[1]


def soft_dtw_grad(a, b, *, gamma=1.0, window=None, radius=None, itakura_max_slope=None,
                  normalize=False, n_jobs=None, layout=None):
    """Soft-DTW value and its gradients with respect to both series.

    Parameters
    ----------
    a, b : array_like, shape (n,), (n, d) or (batch, n, d) and (m,), (m, d), (batch, m, d)
        One pair, or a batch of pairs a[k], b[k] (same batch size, same d).
    gamma : float, default 1.0
        Smoothing > 0; stable from 1e-4 to 1e3 and beyond.
    window, radius, itakura_max_slope : optional
        The global constraint, as in :func:`tswarp.soft_dtw`: ``window`` a fraction of the
        shorter length in [0, 1], ``radius`` a Sakoe-Chiba radius in cells (widened by
        ``abs(n - m)`` for unequal lengths as in tslearn), or an Itakura parallelogram
        (computed on the full-matrix kernel).
    normalize : bool
        The soft-DTW divergence sdtw(a, b) - (sdtw(a, a) + sdtw(b, b)) / 2 (Blondel, Mensch
        and Vert 2021), which is >= 0 and 0 for a == b.
    n_jobs : int, optional
        CPU threads (None or -1: all cores; more than the cores available are not used).
        From 32 features on, the costs and the gradients are matrix products by numpy's
        BLAS (its own threads) around the C kernel (``TSWARP_SDTW_MAT=0`` keeps the fused
        kernel for every dim, ``1`` takes the products for every dim).
    layout : {None, 'channels_last', 'channels_first'}
        As in :func:`tswarp.cdist`; the gradients come back in the inputs' layout.

    Returns
    -------
    value : float or ndarray (batch,)
    grad_a, grad_b : ndarray shaped like a and b
        float32 when both inputs are float32, else float64.

    Equals ``tslearn.metrics.soft_dtw_alignment`` (value) and the gradient of tslearn's
    ``SoftDTW(SquaredEuclidean(a, b)).grad()`` chained through the cost.
    """
    g = _gamma(gamma)
    wk, wv = _window(window, radius, itakura_max_slope)
    code = check_layout(layout)
    normalize = check_bool(normalize, "normalize")
    nj = _n_jobs(n_jobs)
    A, sa = _as_batch(a, "a", code)
    B, sb = _as_batch(b, "b", code)
    if sa != sb:
        raise ValueError("a and b must both be single series or both batches")
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"a and b have different batch sizes: {A.shape[0]} and {B.shape[0]}")
    if A.shape[2] != B.shape[2]:
        raise ValueError(f"a and b have different dimensions: {A.shape[2]} and {B.shape[2]}")
    dt = np.float32 if (A.dtype == np.float32 and B.dtype == np.float32) else np.float64
    A = np.ascontiguousarray(A, dtype=dt)
    B = np.ascontiguousarray(B, dtype=dt)
    for arr, name in ((A, "a"), (B, "b")):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or infinity")
    count, n, d = A.shape
    m = B.shape[1]
    if _matrix_form(d):
        values, ga, gb = _matrix_grad(A, B, g, wk, wv, normalize, nj)
        values, ga, gb = values.astype(dt), ga.astype(dt), gb.astype(dt)
    else:
        values = np.empty(count, dtype=dt)
        ga = np.empty_like(A)
        gb = np.empty_like(B)
        _tswarp._soft_dtw_grad_raw(
            A.ctypes.data, B.ctypes.data, values.ctypes.data, ga.ctypes.data, gb.ctypes.data,
            0 if dt == np.float32 else 1, d, count, n, m, 0, 0, g, wk, wv, normalize,
            False, 0, 0, nj)
    if sa:
        shape_a, shape_b = np.shape(a), np.shape(b)
        if code == FIRST and len(shape_a) == 2:
            return float(values[0]), ga[0].T.reshape(shape_a), gb[0].T.reshape(shape_b)
        return float(values[0]), ga[0].reshape(shape_a), gb[0].reshape(shape_b)
    return values, from_layout(ga, code), from_layout(gb, code)


def _barycenter_series(X, code=0, name="X"):
    """List of (len_i, d) float64 arrays in tswarp's layout from a (n, len, d)/(n, len)
    array or a list of series (code: the layout, tswarp/_conventions.py)."""
    if isinstance(X, (str, bytes)) or X is None:
        raise TypeError(f"{name} must be series of numbers, got {type(X).__name__}")
    if isinstance(X, np.ndarray) and X.ndim in (2, 3):
        arr = as_collection(X, name, code)
        arr = arr[:, :, None] if arr.ndim == 2 else arr
        series = [np.asarray(s, dtype=np.float64) for s in arr]
    else:
        series = []
        for i, s in enumerate(as_collection(list(X), name, code)):
            s = np.asarray(s)
            if s.dtype.kind not in "biuf":
                raise TypeError(f"{name}[{i}] must hold real numbers, got dtype {s.dtype}")
            s = s.astype(np.float64)
            if s.ndim == 1:
                s = s[:, None]
            if s.ndim != 2 or s.shape[0] == 0 or s.shape[1] == 0:
                raise ValueError(f"{name}[{i}] must be a non-empty (len,) or (len, d) series, "
                                 f"got shape {s.shape}")
            series.append(s)
    if not series:
        raise ValueError(f"{name} holds no series")
    if any(0 in s.shape for s in series):
        raise ValueError(f"{name} holds empty series (shape {np.shape(X)})")
    d = series[0].shape[1]
    for i, s in enumerate(series):
        if s.shape[1] != d:
            raise ValueError(f"{name}[{i}] has dimension {s.shape[1]}, {name}[0] has {d}")
        if not np.isfinite(s).all():
            raise ValueError(f"{name}[{i}] contains NaN or infinity")
    return series


def _barycenter_out(z, flat, code):
    """A barycenter (len, d) as the caller gave the series: (len,) for a (n, len) array of
    1-D series, else in their layout."""
    if flat and z.shape[1] == 1:
        return z[:, 0].copy()
    return from_layout(z, code)


def _weights(weights, count):
    """The weights of `count` series as float64 (None: all 1), finite and >= 0."""
    if weights is None:
        return np.ones(count)
    w = np.asarray(weights)
    if w.dtype.kind not in "biuf":
        raise TypeError(f"weights must hold real numbers, got dtype {w.dtype}")
    w = w.astype(np.float64).reshape(-1)
    if w.shape[0] != count:
        raise ValueError(f"weights has {w.shape[0]} entries for {count} series")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise ValueError("weights must be finite and >= 0")
    return w


def _start_series(init, name, code, d):
    """A barycenter's starting series as a fresh (len, d) float64 array, finite."""
    z = np.asarray(as_series(init, name, code))
    if z.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {z.dtype}")
    z = z.astype(np.float64)
    if z.ndim == 1:
        z = z[:, None]
    if z.ndim != 2 or z.shape[1] != d or z.shape[0] == 0:
        raise ValueError(f"{name} must be (len, {d}), got shape {np.shape(init)}")
    if not np.isfinite(z).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return z.copy()


def _resample(s, length):
    """Linear interpolation of a (len, d) series to `length` points (tslearn's resampler)."""
    if s.shape[0] == length:
        return s
    src = np.linspace(0, 1, s.shape[0])
    dst = np.linspace(0, 1, length)
    return np.stack([np.interp(dst, src, s[:, k]) for k in range(s.shape[1])], axis=1)


def soft_dtw_barycenter(X, *, gamma=1.0, weights=None, max_iter=100, tol=1e-3, init=None,
                        window=None, radius=None, itakura_max_slope=None, n_jobs=None,
                        progress=False, layout=None):
    """Soft-DTW barycenter: argmin_z sum_i w_i sdtw(z, X_i) by L-BFGS (Cuturi and Blondel).

    Parameters
    ----------
    X : array (n, len, d) or (n, len), or a list of (len_i, d) / (len_i,) series
    gamma : float, default 1.0
    weights : array (n,), optional
        Non-negative weights (default: all 1, as tslearn).
    max_iter : int, default 100
        L-BFGS iterations (0 returns the initial barycenter).
    tol : float, default 1e-3
        scipy.optimize.minimize's tol.
    init : array (len, d) or (len,), optional
        Starting barycenter; default the Euclidean mean of the series (resampled to the
        longest length when they differ), as tslearn does. Its length is the result's.
    window, radius, itakura_max_slope : optional
        The global constraint of the soft-DTW terms (see :func:`soft_dtw_grad`).
    n_jobs : int, optional
    progress : bool or callable, default False
        True draws a bar of the L-BFGS iterations on stderr; a callable is called as
        ``progress(done, total)`` after each iteration. Ctrl-C stops the fit within a
        second either way (KeyboardInterrupt).
    layout : {None, 'channels_last', 'channels_first'}
        As in :func:`tswarp.cdist`; the barycenter comes back in that layout.

    Returns
    -------
    ndarray, shape (len, d) (or (len,) when every series is 1-D)
        float64. The objective and its gradient come from one batched C call per
        iteration (every series against z).
    """
    from ._optional import require
    from ._progress import make_progress

    minimize = require("scipy.optimize", "soft_dtw_barycenter").minimize

    g = _gamma(gamma)
    wk, wv = _window(window, radius, itakura_max_slope)
    code = check_layout(layout)
    max_iter = check_int(max_iter, "max_iter", 0)
    tol = check_real(tol, "tol", low=0.0)
    nj = _n_jobs(n_jobs)
    bar = make_progress(progress, "soft_dtw_barycenter", "iterations")
    flat = (isinstance(X, np.ndarray) and X.ndim == 2) or (
        not isinstance(X, np.ndarray) and all(np.ndim(s) == 1 for s in X))
    series = _barycenter_series(X, code)
    count, d = len(series), series[0].shape[1]
    w = _weights(weights, count)
    if init is None:
        L = max(s.shape[0] for s in series)
        z0 = sum(wi * _resample(s, L) for wi, s in zip(w, series)) / max(w.sum(), 1e-300)
    else:
        z0 = _start_series(init, "init", code, d)
    L = z0.shape[0]
    lengths = np.array([s.shape[0] for s in series], dtype=np.int64)
    M = int(lengths.max())
    Y = np.zeros((count, M, d))
    for k, s in enumerate(series):
        Y[k, : s.shape[0]] = s
    Z = np.empty((count, L, d))
    values = np.empty(count)
    gz = np.empty_like(Z)
    ragged = 0 if (lengths == M).all() else lengths.ctypes.data

    def f(zflat):
        Z[:] = zflat.reshape(L, d)
        _tswarp._soft_dtw_grad_raw(
            Z.ctypes.data, Y.ctypes.data, values.ctypes.data, gz.ctypes.data, 0, 1, d, count,
            L, M, 0, ragged, g, wk, wv, False, False, 0, 0, nj)
        return float(w @ values), np.tensordot(w, gz, axes=1).ravel()

    z = z0
    try:
        if max_iter > 0:
            it = [0]

            def step(_):
                it[0] += 1
                if bar is not None:
                    bar(it[0], max_iter)

            res = minimize(f, z0.ravel(), method="L-BFGS-B", jac=True, tol=tol,
                           options=dict(maxiter=max_iter), callback=step)
            z = res.x.reshape(L, d)
        if bar is not None:
            bar(max_iter, max_iter)
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return _barycenter_out(z, flat, code)
