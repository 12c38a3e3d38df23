"""Nearest neighbours: exact top-k search, lower bounds, envelopes, subsequence search, and
k-NN estimators in scikit-learn's shape.

``knn(Q, X, k)`` finds the k nearest series of X for every query of Q without the full
distance matrix: for DTW a cascade of lower bounds (LB_Kim, LB_Keogh on the query's and on
the candidate's envelope) prunes the candidates that cannot enter the top k, and the DTW
that remains abandons early (the UCR Suite's cumulative bound inside PrunedDTW), exactly:
the result is what ``cdist`` followed by a stable sort of each row gives, ties to the
smaller index, for any thread count.

``search(query, series, k)`` finds the k best windows of a long series (the UCR Suite of
Rakthanmanon et al. 2012): z-normalised windows by default, an exclusion zone between
matches.

The lower bounds are public (``lb_kim``, ``lb_keogh``, ``lb_improved``, ``lb_enhanced``,
``lb_webb``), in the units of :func:`tswarp.dtw` with the same parameters, and ``envelope``
gives the Sakoe-Chiba (or any window's) envelope by Lemire's streaming min/max.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional, Tuple

import numpy as np

from . import _tswarp
from ._conventions import check_int

__all__ = ["knn", "search", "envelope", "lb_kim", "lb_keogh", "lb_improved", "lb_enhanced",
           "lb_webb"]


def _host(x: Any) -> Any:
    """GPU arrays (CuPy, PyTorch CUDA) and torch CPU tensors as numpy arrays; the rest as is
    (lists keep their ragged form)."""
    if isinstance(x, (np.ndarray, list, tuple)):
        return x
    mod = type(x).__module__
    if mod.startswith("cupy"):
        return x.get()
    if mod.startswith("torch"):
        return x.detach().cpu().numpy()
    return x


def _on_gpu(x: Any) -> bool:
    """Whether x is a GPU array (CuPy, PyTorch CUDA, a CUDA array interface or DLPack one),
    without importing either library."""
    tp = type(x)
    if not (hasattr(tp, "__cuda_array_interface__") or hasattr(tp, "__dlpack_device__")):
        return False
    from ._gpu import gpu_kind
    return gpu_kind(x) is not None


def knn(Q: Any, X: Any, k: int = 1, *, metric: str = "dtw", device: Any = "auto",
        n_jobs: Optional[int] = None, progress: Any = False, layout: Any = None,
        **params: Any) -> Tuple[np.ndarray, np.ndarray]:
    """The k nearest neighbours in X of every series of Q.

    Parameters
    ----------
    Q, X : array_like or list of array_like
        Collections of series as :func:`tswarp.cdist` takes them: (n, len), (n, len, d) or
        lists of (len_i,) / (len_i, d) series of any lengths.
    k : int, default 1
        Neighbours per query, 1 <= k <= len(X).
    metric : {'dtw', 'twed', 'soft_dtw'}
        The measure, with its parameters as keywords (window, radius, itakura_max_slope,
        cost, accumulated, nu, lmbda, p, tx, ty, gamma, normalize), as in ``cdist``.
    device : {'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all'} or a list of GPUs
        Several GPUs ('cuda:all', [0, 1]) share the queries. 'cuda': for DTW (a box cost, a Sakoe-Chiba window or none, one length per
        collection, k <= 16) the GPU bounds every pair (LB_Keogh), sets each query's
        threshold from its k least-bounded series and runs DTW only where the bound does
        not exceed it, with the CPU reference's values; otherwise the batch kernels over
        tiles of X with the top k kept on the host. 'auto' takes the GPU on large work
        (for DTW in the pruned kernels' cases only; else the CPU's cascade).
    n_jobs, progress, layout
        As in ``cdist``; progress counts (query, candidate) pairs.

    Returns
    -------
    distances : ndarray (len(Q), k)
        float32 when both collections are float32, else float64; row i ascending.
    indices : ndarray (len(Q), k) of int64
        Indices into X; ties go to the smaller index, as a stable sort of cdist's row.

    Notes
    -----
    DTW prunes with LB_Kim, LB_Keogh on the query's envelope and LB_Keogh on the
    candidate's envelope, then computes DTW that abandons once no path can end below the
    k-th best (with the bounds of the rows and columns still to come). TWED abandons a
    candidate once a whole row of its program exceeds the k-th best; soft-DTW, whose values
    are not monotone along a path, is computed in full. The distances are the CPU
    reference's values, bit for bit, for DTW and TWED (``cdist(..., _impl='reference')``);
    the fast ``cdist`` kernels agree to the last bits. Memory is O(points + len(Q) k).
    """
    return _tswarp._knn(_host(Q), _host(X), k=k, metric=metric, device=device, n_jobs=n_jobs,
                        progress=progress, layout=layout, **params)


def search(query: Any, series: Any, k: int = 1, *, znorm: bool = True,
           exclusion: Optional[int] = None, window: Any = None, radius: Any = None,
           itakura_max_slope: Any = None, cost: str = "sqeuclidean", device: Any = "auto",
           accumulated: bool = False, n_jobs: Optional[int] = None,
           progress: Any = False, layout: Any = None, return_stats: bool = False) -> Any:
    """The k best matches of a query in a long series under DTW (the UCR Suite).

    Parameters
    ----------
    query : array_like (n,) or (n, d)
        The pattern; a list of such series searches each and returns a list of results.
    series : array_like (N,) or (N, d), N >= n
        The recording (a numpy memmap streams from disk chunk by chunk).
    k : int, default 1
        Matches wanted, at most the N - n + 1 windows.
    znorm : bool, default True
        z-normalise the query and every window (each channel on its own; a constant
        window's values are 0), the UCR Suite's default; False compares raw values.
    exclusion : int, optional
        Two matches start at least this many points apart; default n (matches do not
        overlap). 1 allows neighbouring windows.
    window, radius : Sakoe-Chiba band as in :func:`tswarp.dtw` (a fraction of n, or cells);
        none: the full window. radius=0 is the Euclidean distance.
    cost, accumulated : as in :func:`tswarp.dtw` ('sqeuclidean', 'euclidean' or 'abs').
    device : {'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all'} or a list of GPUs
        'cuda': the GPU bounds every window and computes DTW for the survivors of a
        threshold set by the best-bounded window of each block; the CPU then recomputes the
        candidates exactly, so both devices give the same matches and distances. 'auto'
        takes the GPU for long series (about 10^6 windows per thread and more). Several
        GPUs ('cuda:all', [0, 1]): chunks of the windows spread over them, the same result.
        A series already on a GPU (a CuPy array or a PyTorch CUDA tensor, float32 or
        float64) is searched there in place ('auto', 'cuda' or 'cuda:N' naming its GPU;
        'cpu' is a ValueError): only the candidate windows come to the host, and the
        results are numpy arrays, as for a host series.
    n_jobs : int, optional
        Threads; the series is cut into chunks that overlap by n - 1 points.
    progress : bool or callable(done, total), counted in windows.
    return_stats : bool, default False
        Also return a dict of what the cascade did: 'windows', and how many windows
        'kim', 'keogh_query' and 'keogh_data' pruned, 'dtw' started and 'abandoned'.

    Returns
    -------
    starts : ndarray (m,) of int64, m <= k
        Start of each match, best first.
    distances : ndarray (m,) of float64
        DTW between the (z-normalised) query and window, as :func:`tswarp.dtw` computes it
        on the z-normalised copies (float64).

    Matches are chosen greedily: windows in order of distance (ties to the smaller start),
    each kept when at least ``exclusion`` points from every start kept before, the rule of
    :func:`tswarp.subsequence_dtw`. The cascade: LB_Kim (first and last three points),
    LB_Keogh on the query's envelope in order of the query's magnitude, LB_Keogh on the
    series' envelope, and DTW that abandons with the bounds' cumulative sums.
    """
    if isinstance(query, list) and query and not isinstance(query[0], numbers.Number):
        return [search(q, series, k, znorm=znorm, exclusion=exclusion, window=window,
                       radius=radius, itakura_max_slope=itakura_max_slope, cost=cost,
                       device=device, accumulated=accumulated, n_jobs=n_jobs,
                       progress=progress, layout=layout, return_stats=return_stats)
                for q in query]
    if not isinstance(series, np.ndarray) and _on_gpu(series):
        from . import _gpu
        from ._conventions import check_layout
        info = _tswarp.info()
        found = _gpu.search_series("search", series, check_layout(layout), device,
                                   -1 if not info["cuda_built"] else info["cuda_devices"])
        if found is not None:
            keep, desc = found  # keep: the series' array on its GPU, alive during the call
            st, d, stats = _tswarp._search_device(
                _host(query), desc, k=k, znorm=znorm, exclusion=exclusion, window=window,
                radius=radius, itakura_max_slope=itakura_max_slope, cost=cost,
                accumulated=accumulated, n_jobs=n_jobs, progress=progress, layout=layout)
            del keep
            return (st, d, stats) if return_stats else (st, d)
    st, d, stats = _tswarp._search(_host(query), _host(series), k=k, znorm=znorm,
                                   exclusion=exclusion, window=window, radius=radius,
                                   itakura_max_slope=itakura_max_slope, cost=cost, device=device,
                                   accumulated=accumulated, n_jobs=n_jobs, progress=progress,
                                   layout=layout)
    return (st, d, stats) if return_stats else (st, d)


_BOUNDS = {"kim": 0, "keogh": 1, "keogh_data": 2, "improved": 3, "enhanced": 4, "webb": 5}


def _lb(kind: int, query: Any, X: Any, window: Any, radius: Any, itakura_max_slope: Any,
        cost: str, accumulated: bool, n_jobs: Any, layout: Any, bands: int = 5) -> Any:
    Xh = _host(X)
    single = isinstance(Xh, np.ndarray) and Xh.ndim == (np.ndim(_host(query)))
    if single:  # one series against one series: a float
        Xh = [Xh]
    out = _tswarp._lower_bound(_host(query), Xh, bound=kind, bands=bands, window=window,
                               radius=radius, itakura_max_slope=itakura_max_slope, cost=cost,
                               accumulated=accumulated, n_jobs=n_jobs, layout=layout)
    return float(out[0]) if single else out


_LB_DOC = """

    Parameters
    ----------
    query : array_like (n,) or (n, d)
    X : one series like query (the bound is then a float), or a collection as
        :func:`tswarp.cdist` takes it (the bounds are then an (len(X),) array).
    window, radius, itakura_max_slope, cost, accumulated
        DTW's parameters, as in :func:`tswarp.dtw`: the bound is in the same units and holds
        for any window (bound <= tswarp.dtw(query, x, same parameters)).
    n_jobs, layout : as in ``cdist``.
    """


def lb_kim(query: Any, X: Any, *, window: Any = None, radius: Any = None,
           itakura_max_slope: Any = None, cost: str = "sqeuclidean", accumulated: bool = False,
           n_jobs: Optional[int] = None, layout: Any = None) -> Any:
    return _lb(0, query, X, window, radius, itakura_max_slope, cost, accumulated, n_jobs, layout)


lb_kim.__doc__ = ("LB_Kim in the UCR Suite's hierarchical form: the cheapest admissible cell "
                  "of the first and of the last three rings of cells (max(i, j) = t), which "
                  "every path crosses. Holds for every cost, the cosine cost included." + _LB_DOC)


def lb_keogh(query: Any, X: Any, *, envelope: str = "query", window: Any = None,
             radius: Any = None, itakura_max_slope: Any = None, cost: str = "sqeuclidean",
             accumulated: bool = False, n_jobs: Optional[int] = None, layout: Any = None) -> Any:
    if envelope not in ("query", "data"):
        raise ValueError(f"envelope must be 'query' or 'data', got {envelope!r}")
    return _lb(1 if envelope == "query" else 2, query, X, window, radius, itakura_max_slope,
               cost, accumulated, n_jobs, layout)


lb_keogh.__doc__ = ("LB_Keogh (Keogh and Ratanamahatana 2005): with envelope='query', the cost "
                    "of each point of x to the query's envelope (the box of the query's points "
                    "admissible with it); with envelope='data', of each query point to x's "
                    "envelope. Multivariate series use each channel's box (LB_Keogh-EI)."
                    + _LB_DOC)


def lb_improved(query: Any, X: Any, *, window: Any = None, radius: Any = None,
                itakura_max_slope: Any = None, cost: str = "sqeuclidean",
                accumulated: bool = False, n_jobs: Optional[int] = None,
                layout: Any = None) -> Any:
    return _lb(3, query, X, window, radius, itakura_max_slope, cost, accumulated, n_jobs, layout)


lb_improved.__doc__ = ("LB_Improved (Lemire 2009): LB_Keogh on the query's envelope plus "
                       "LB_Keogh of the query against the envelope of x projected onto the "
                       "query's envelope. For the sqeuclidean and abs costs (and euclidean "
                       "with d = 1)." + _LB_DOC)


def lb_enhanced(query: Any, X: Any, *, bands: int = 5, window: Any = None, radius: Any = None,
                itakura_max_slope: Any = None, cost: str = "sqeuclidean",
                accumulated: bool = False, n_jobs: Optional[int] = None,
                layout: Any = None) -> Any:
    check_int(bands, "bands", 1)
    return _lb(4, query, X, window, radius, itakura_max_slope, cost, accumulated, n_jobs, layout,
               bands)


lb_enhanced.__doc__ = ("LB_Enhanced (Tan, Petitjean and Webb 2019) with `bands` rings at each "
                       "end (the cheapest admissible cell of each) and LB_Keogh on the query's "
                       "envelope over the points between them; at least LB_Kim's first "
                       "`bands` rings and usually close to LB_Keogh or above." + _LB_DOC)


def lb_webb(query: Any, X: Any, *, window: Any = None, radius: Any = None,
            itakura_max_slope: Any = None, cost: str = "sqeuclidean", accumulated: bool = False,
            n_jobs: Optional[int] = None, layout: Any = None) -> Any:
    return _lb(5, query, X, window, radius, itakura_max_slope, cost, accumulated, n_jobs, layout)


lb_webb.__doc__ = ("LB_Webb (Webb and Petitjean 2021, 'Tight lower bounds for Dynamic Time "
                   "Warping'): LB_Keogh on the query's envelope plus, for each query point "
                   "outside the envelope of x, the cost it owes beyond what LB_Keogh already "
                   "charged the point of x it is aligned with. At least LB_Keogh (usually "
                   "well above it at no more than twice its cost), for any window and any "
                   "lengths (the paper's form takes equal lengths and a Sakoe-Chiba band); "
                   "for the sqeuclidean and abs costs (and euclidean with d = 1)." + _LB_DOC)


def envelope(x: Any, *, window: Any = None, radius: Any = None, itakura_max_slope: Any = None,
             length: Optional[int] = None, as_b: bool = False,
             layout: Any = None) -> Tuple[np.ndarray, np.ndarray]:
    """Lower and upper envelope of a series under a DTW window (Lemire's streaming min/max).

    lower[k], upper[k] are the min and max of x (per channel) over the points admissible
    with point k of a series of ``length`` points (default len(x)): with a Sakoe-Chiba
    radius r and equal lengths, x[k - r .. k + r]. ``as_b``: x is the second argument of
    the distance (columns) rather than the first, which matters for unequal lengths and
    Itakura windows. Returns two arrays shaped like x (length points).
    """
    return _tswarp._envelope(_host(x), window=window, radius=radius,
                             itakura_max_slope=itakura_max_slope, length=length, as_b=as_b,
                             layout=layout)


