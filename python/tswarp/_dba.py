"""DTW barycenter averaging (Petitjean et al. 2011) in the majorize-minimize form of
tslearn's ``dtw_barycenter_averaging``: the same barycenter for the same initialisation,
iterations and constraint. Each iteration is one C call (tsw_dba_step): every series' DTW
path to the barycenter (threads over the series) and the sums of the points aligned to each
barycenter point, in series order (the same bits for any thread count).
"""

import warnings

import numpy as np

from . import _tswarp
from ._conventions import band, check_int, check_layout, check_n_jobs, check_real
from ._sdtw import _barycenter_out, _barycenter_series, _start_series, _weights

__all__ = ["dtw_barycenter_averaging", "elastic_barycenter_average"]


def _init_mean(series, size):
    """tslearn's initial barycenter: the mean over the series present at each time index
    (the dataset padded with NaN to the longest), linearly resampled to `size` points."""
    L = max(s.shape[0] for s in series)
    d = series[0].shape[1]
    total = np.zeros((L, d))
    count = np.zeros((L, 1))
    for s in series:
        total[: s.shape[0]] += s
        count[: s.shape[0]] += 1
    avg = total / count
    if size == L:
        return avg
    src = np.linspace(0, 1, L)
    dst = np.linspace(0, 1, size)
    return np.stack([np.interp(dst, src, avg[:, k]) for k in range(d)], axis=1)


def dtw_barycenter_averaging(X, *, barycenter_size=None, init_barycenter=None, max_iter=30,
                             tol=1e-5, weights=None, method="mm", window=None, radius=None,
                             itakura_max_slope=None, n_jobs=None, device="auto", progress=False,
                             layout=None):
    """DTW barycenter averaging (DBA): the series z minimising sum_i w_i dtw(z, X_i)^2.

    Each iteration aligns every series to the barycenter by DTW (the squared Euclidean
    cost, the given window) and moves each barycenter point to the weighted mean of the
    points aligned to it; it stops after `max_iter` iterations, when the cost changes by
    less than `tol`, or when it rises (a ConvergenceWarning-like ``UserWarning``), as
    ``tslearn.barycenters.dtw_barycenter_averaging`` does, whose result it equals for the
    same initialisation.

    Parameters
    ----------
    X : array (n, len, d) or (n, len), or a list of (len_i, d) / (len_i,) series
    barycenter_size : int, optional
        Points of the barycenter; default the longest series' length.
    init_barycenter : array (len, d) or (len,), optional
        The starting barycenter (its length is the result's). Default: the mean over the
        series present at each time index, resampled to `barycenter_size` (tslearn's).
    max_iter : int, default 30
    tol : float, default 1e-5
    weights : array (n,), optional
        Non-negative weights; default all 1.
    method : {'mm', 'petitjean'}, default 'mm'
        'mm': tslearn's ``dtw_barycenter_averaging`` (paths of the barycenter against each
        series); 'petitjean': its ``dtw_barycenter_averaging_petitjean`` (paths of each
        series against the barycenter, the weighted mean of the points aligned to each
        barycenter point), which tslearn's DTW k-means uses. They differ only where a DTW
        path has ties.
    window, radius, itakura_max_slope : optional
        The DTW constraint (as in :func:`tswarp.dtw`; tslearn's ``metric_params``
        ``sakoe_chiba_radius`` is `radius`).
    n_jobs : int, optional
        Threads over the series (None or -1: all cores).
    device : {'auto', 'cpu', 'cuda', 'cuda:N'}, default 'auto'
        Where the alignments are computed: 'auto' and 'cpu' on the CPU (series of one
        length in SIMD lanes), 'cuda' every series' path in one batch on the GPU (grids of
        up to 2048 rows; the same paths, so the same barycenter); the sums stay on the CPU.
    progress : bool or callable, default False
        True draws a bar of the iterations on stderr; a callable is called as
        ``progress(done, max_iter)`` after each. Ctrl-C stops the fit (KeyboardInterrupt).
    layout : {None, 'channels_last', 'channels_first'}
        As in :func:`tswarp.cdist`; the barycenter comes back in that layout.

    Returns
    -------
    ndarray, shape (len, d) (or (len,) when every series is 1-D), float64

    Examples
    --------
    >>> import numpy as np, tswarp
    >>> X = np.array([[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]])
    >>> tswarp.dtw_barycenter_averaging(X).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    from ._progress import make_progress

    code = check_layout(layout)
    max_iter = check_int(max_iter, "max_iter", 0)
    tol = check_real(tol, "tol", low=0.0)
    nj = check_n_jobs(n_jobs)
    if method not in ("mm", "petitjean"):
        raise ValueError(f"method must be 'mm' or 'petitjean', got {method!r}")
    petitjean = method == "petitjean"
    window_kw = {k: v for k, v in (("window", window), ("radius", radius),
                                   ("itakura_max_slope", itakura_max_slope)) if v is not None}
    flat = (isinstance(X, np.ndarray) and X.ndim == 2) or (
        not isinstance(X, np.ndarray) and all(np.ndim(s) == 1 for s in X))
    series = _barycenter_series(X, code)
    count, d = len(series), series[0].shape[1]
    w = _weights(weights, count)
    if w.sum() <= 0:
        raise ValueError("weights must not all be 0")
    if init_barycenter is None:
        size = max(s.shape[0] for s in series)
        if barycenter_size is not None:
            size = check_int(barycenter_size, "barycenter_size", 1)
        z = _init_mean(series, size)
    else:
        z = _start_series(init_barycenter, "init_barycenter", code, d)
    L = z.shape[0]
    # the constraint is checked once, here, with tswarp's own messages
    _tswarp.dtw(z, series[0], layout="channels_last", **window_kw)

    # the series back to back (float64, C order) with their offsets and lengths: one C call
    # an iteration aligns them all (petitjean: the series the rows of each path)
    lengths = np.array([s.shape[0] for s in series], dtype=np.int64)
    offsets = np.zeros(count, dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    values = np.ascontiguousarray(np.concatenate(series), dtype=np.float64)
    wk = np.ascontiguousarray(w, dtype=np.float64)
    kind, wval = band(window, radius, itakura_max_slope)
    total = np.zeros((L, d))
    valence = np.zeros(L)

    bar = make_progress(progress, "dtw_barycenter_averaging", "iterations")
    try:
        cost_prev = np.inf
        for it in range(max_iter):
            z = np.ascontiguousarray(z, dtype=np.float64)
            cost = _tswarp._dba_step_raw(
                z.ctypes.data, L, d, values.ctypes.data, offsets.ctypes.data,
                lengths.ctypes.data, count, wk.ctypes.data, kind, wval, petitjean,
                nj, total.ctypes.data, valence.ctypes.data, device)
            cost /= w.sum()
            if (valence == 0).any():  # only with weights of 0 where a row has no other
                raise ValueError("a barycenter point is aligned to series of weight 0 only")
            z = total / valence[:, None] if petitjean else total * (1.0 / valence)[:, None]
            if bar is not None:
                bar(it + 1, max_iter)
            if abs(cost_prev - cost) < tol:
                break
            if cost_prev < cost:
                warnings.warn("DBA loss is increasing while it should not be. Stopping "
                              "optimization.", UserWarning, stacklevel=2)
                break
            cost_prev = cost
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return _barycenter_out(z, flat, code)


# aeon's defaults of the barycenter's own alignment step (_ba_one_iter_petitjean), which
# differ from the distances' for wdtw/wddtw (g 0.0 against 0.05); its costs keep the
# distances' defaults
_BA_PATH_DEFAULTS = {"wdtw": {"g": 0.0}, "adtw": {"warp_penalty": 1.0},
                     "msm": {"c": 1.0, "independent": True}, "edr": {}}


def elastic_barycenter_average(X, metric, *, max_iter=30, tol=1e-5, init_barycenter=None,
                               weights=None, window=None, radius=None, itakura_max_slope=None,
                               progress=False, layout=None, **metric_params):
    """Barycenter averaging under an elastic measure: aeon's
    ``elastic_barycenter_average(X, distance=metric, method="petitjean")``.

    Each iteration aligns every series to the barycenter by :func:`tswarp.alignment_path`
    (the series the rows, aeon's rule) and moves each barycenter point to the weighted mean
    of the points aligned to it; the cost is the sum of the unweighted distances of the
    series to the barycenter. It stops after `max_iter` iterations, when the cost changes
    by less than `tol`, or when it rises (then the barycenter before that iteration is
    kept), as aeon's does, whose result it equals for the same start.

    Conventions (aeon's): the alignment step takes aeon's barycenter defaults for the
    parameters not given (wdtw: ``g=0.0``; adtw: ``warp_penalty=1.0``; msm: ``c=1.0``,
    ``independent=True``), the cost the distances' own (wdtw: ``g=0.05``), and the
    starting cost, against which the first iteration is kept or undone, the metric's
    defaults without the window or the parameters given. EDR's matrix has the paper's
    boundary where aeon 1.6's differs (:func:`tswarp.edr`), so EDR's barycenters equal
    aeon's only where the paths do. DDTW and WDDTW are not taken: their paths index the
    derivatives (len - 2 points), and aeon 1.6 adds the series' raw points along them,
    leaving the barycenter's last two points with nothing aligned (NaN); there is no aeon
    result to equal. DTW's averaging is :func:`tswarp.dtw_barycenter_averaging`
    (tslearn's). The alignments run on the CPU, one series after another.

    Parameters
    ----------
    X : array (n, len, d) or (n, len)
        Series of one length (tswarp's layout; layout='channels_first' reads aeon's
        (n, d, len)).
    metric : {'wdtw', 'adtw', 'edr', 'msm'}
    max_iter : int, default 30
    tol : float, default 1e-5
    init_barycenter : array (len, d) or (len,), optional
        The start; default the mean of the series (aeon's "mean").
    weights : array (n,), optional
        Non-negative weights of the alignment sums; default all 1.
    window, radius, itakura_max_slope, **metric_params
        The measure's window and parameters, as in :func:`tswarp.distance`.
    progress : bool or callable, default False
        As in :func:`dtw_barycenter_averaging`.
    layout : {None, 'channels_last', 'channels_first'}
        The layout of X; the barycenter comes back in it.

    Returns
    -------
    ndarray, shape (len, d) (or (len,) for (n, len) input), float64

    Examples
    --------
    >>> import numpy as np, tswarp
    >>> X = np.array([[0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]])
    >>> tswarp.elastic_barycenter_average(X, "msm").tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    from . import alignment_path, cdist, distance
    from ._progress import make_progress

    if metric not in _BA_PATH_DEFAULTS:
        raise ValueError(f"metric must be one of {sorted(_BA_PATH_DEFAULTS)} (DTW: "
                         f"dtw_barycenter_averaging; DDTW and WDDTW: see the docstring), got "
                         f"{metric!r}")
    code = check_layout(layout)
    max_iter = check_int(max_iter, "max_iter", 0)
    tol = check_real(tol, "tol", low=0.0)
    window_kw = {k: v for k, v in (("window", window), ("radius", radius),
                                   ("itakura_max_slope", itakura_max_slope)) if v is not None}
    flat = isinstance(X, np.ndarray) and X.ndim == 2
    series = _barycenter_series(X, code)
    count, d = len(series), series[0].shape[1]
    if len({s.shape[0] for s in series}) != 1:
        raise ValueError("X must hold series of one length (aeon's barycenter averaging)")
    data = np.stack(series)
    w = _weights(weights, count)
    if w.sum() <= 0:
        raise ValueError("weights must not all be 0")
    z = data.mean(axis=0) if init_barycenter is None else _start_series(
        init_barycenter, "init_barycenter", code, d)
    path_kw = dict(_BA_PATH_DEFAULTS[metric], **metric_params, **window_kw)
    cost_kw = dict(metric_params, **window_kw)

    def cost_of(center, /, **kw):
        return float(cdist(data, center[None], metric=metric, layout="channels_last",
                           **kw).sum())

    # the parameters checked once, on one pair, with tswarp's messages (the starting cost
    # below does not see them)
    distance(data[0], z, metric=metric, layout="channels_last", **cost_kw)
    # the starting cost by the metric's defaults, no window: aeon 1.6's _ba_setup computes
    # it without the caller's parameters
    cost_prev = cost_of(z)
    bar = make_progress(progress, "elastic_barycenter_average", "iterations")
    try:
        for it in range(max_iter):
            total = np.zeros_like(z)
            valence = np.zeros(z.shape[0])
            for i in range(count):
                path, _ = alignment_path(data[i], z, metric, layout="channels_last", **path_kw)
                np.add.at(total, path[:, 1], data[i][path[:, 0]] * w[i])
                np.add.at(valence, path[:, 1], w[i])
            with np.errstate(invalid="ignore", divide="ignore"):
                new = total / valence[:, None]
            cost = cost_of(new, **cost_kw)
            if bar is not None:
                bar(it + 1, max_iter)
            if abs(cost_prev - cost) < tol:
                if cost <= cost_prev:
                    z = new
                break
            if cost_prev < cost:
                break
            z, cost_prev = new, cost
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return _barycenter_out(z, flat, code)

