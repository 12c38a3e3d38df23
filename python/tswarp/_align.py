"""Alignment paths: dtw_path, subsequence DTW matches and segmental DTW, on top of the C
functions (``_tswarp.dtw_path``, ``_subsequence_dtw``, ``_segmental_dtw``).

GPU arrays (CuPy, PyTorch CUDA tensors, other CUDA arrays) are copied to the host, computed
on their GPU (device='auto' or 'cuda'; the CUDA driver takes host arrays) or wherever
`device` says, and the paths come back as arrays of their library on their GPU
(tswarp/_gpu.py, HostCopy). Host inputs (numpy, lists, torch CPU tensors) give numpy
paths, as the other functions give numpy results for them.
"""

from __future__ import annotations

import inspect

import numpy as np

from ._conventions import check_bool, check_int, check_layout
from ._tswarp import NoDeviceError, _segmental_dtw, _subsequence_dtw
from ._tswarp import dtw_path as _dtw_path

__all__ = ["Match", "dtw_path", "segmental_dtw", "subsequence_dtw"]


def _maybe_gpu(x):
    """Cheap pre-check (numpy arrays and lists never pay for _gpu): an object whose type has
    the CUDA array interface or DLPack may live on a GPU; _gpu.gpu_kind decides."""
    if isinstance(x, (np.ndarray, list, tuple, float, int)):
        return False
    tp = type(x)
    return hasattr(tp, "__cuda_array_interface__") or hasattr(tp, "__dlpack_device__")


def _host_copy(fname, named, device):
    """None for host inputs; else _gpu.HostCopy (the inputs on the host, the way back)."""
    for _, x in named:
        if _maybe_gpu(x):
            from . import _gpu
            return _gpu.align_inputs(fname, named, device)
    return None


def _on_device(h, call, device):
    """call(device) for host inputs (h None); else call(h.device), and with device='auto'
    the CPU where the inputs' GPU cannot do the work (NoDeviceError: no CUDA backend, no
    GPU seen; NotImplementedError: an option the GPU kernels lack, today Itakura windows;
    both raised before any work)."""
    if h is None or not h.auto:
        return call(device if h is None else h.device)
    try:
        return call(h.device)
    except (NoDeviceError, NotImplementedError):
        return call("cpu")


def dtw_path(a, b, **kwargs):
    if type(a) is np.ndarray and type(b) is np.ndarray:  # the common case, at C speed
        return _dtw_path(a, b, **kwargs)
    h = _host_copy("dtw_path", (("a", a), ("b", b)), kwargs.get("device"))
    if h is None:
        return _dtw_path(a, b, **kwargs)
    ha, hb = h.arrays
    kwargs.pop("device", None)
    path, cost = _on_device(h, lambda dev: _dtw_path(ha, hb, device=dev, **kwargs), None)
    return h.back(path), cost


dtw_path.__doc__ = _dtw_path.__doc__
dtw_path.__signature__ = inspect.signature(_dtw_path)  # type: ignore[attr-defined]

_VARIANTS = {"none": 0, "weak": 1, "strict": 2}
_INT64_MAX = 2**63 - 1


class Match(tuple):
    """One subsequence match: unpacks as ``start, end, cost``; ``.path`` holds its path.

    ``start`` and ``end`` are the reference indices of the path's first and last cells
    (inclusive); ``cost`` is the match's cost by :func:`tswarp.dtw_path`'s rule (the square
    root of the accumulated cost D(n-1, end) for the sqeuclidean cost unless
    ``accumulated=True``, else D(n-1, end)); ``path`` is an (L, 2) int64
    array of (query index, reference index) pairs, or None when ``return_path=False``.
    """

    def __new__(cls, start, end, cost, path=None):
        self = super().__new__(cls, (int(start), int(end), float(cost)))
        self.path = path
        return self

    def __getnewargs__(self):
        return (self[0], self[1], self[2], self.path)

    @property
    def start(self) -> int:
        return self[0]

    @property
    def end(self) -> int:
        return self[1]

    @property
    def cost(self) -> float:
        return self[2]

    def __repr__(self) -> str:
        return f"Match(start={self[0]}, end={self[1]}, cost={self[2]!r})"


def subsequence_dtw(query, reference, *, step="symmetric1", cost="sqeuclidean", k=None,
                    return_path=True, accumulated=False, method="auto", memory_limit=None,
                    device="auto", n_jobs=None, progress=False, layout=None):
    """Subsequence DTW: where ``query`` best matches a stretch of ``reference``.

    The path may start and end at any reference index (Mueller, Fundamentals of Music
    Processing 7.2; ``librosa.sequence.dtw(query, reference, subseq=True)`` with the same
    steps and costs gives the same best match and path).

    Parameters
    ----------
    query : array-like, shape (n,) or (n, d)
    reference : array-like, shape (m,) or (m, d)
        Host arrays, or CuPy arrays / PyTorch CUDA tensors on one GPU (copied to the host;
        the paths come back as arrays of their library on their GPU).
    step, cost, accumulated, method, memory_limit, device, n_jobs, progress, layout
        As in :func:`tswarp.dtw_path` (no windows): with the default sqeuclidean cost a
        match's ``cost`` is the square root of its accumulated cost D(n-1, end) unless
        ``accumulated=True`` (librosa's ``D[-1, end]``); the matches do not depend on it.
    k : int, optional
        None (default): the best match. An int: a list of up to k matches whose reference
        ranges [start, end] do not overlap, best first (each end in order of cost, kept
        when its range overlaps none kept before).
    return_path : bool, default True
        Compute each match's path (one more pass over columns 0..end per match).

    Returns
    -------
    Match or list of Match
        ``start, end, cost = match`` (Python ints and float); ``match.path`` is the (L, 2)
        int64 path (None without return_path): numpy for host inputs, an array of the
        inputs' library on their GPU for GPU inputs.

    Examples
    --------
    >>> import numpy as np, tswarp
    >>> ref = np.array([5.0, 5.0, 0.0, 1.0, 2.0, 5.0])
    >>> start, end, cost = tswarp.subsequence_dtw([0.0, 1.0, 2.0], ref)
    >>> (start, end, cost)
    (2, 4, 0.0)
    """
    kk = 1 if k is None else k
    h = _host_copy("subsequence_dtw", (("query", query), ("reference", reference)), device)
    if h is not None:
        query, reference = h.arrays
    starts, ends, costs, path, offsets, lengths = _on_device(h, lambda dev: _subsequence_dtw(
        query, reference, step=step, cost=cost, k=kk, return_path=return_path, method=method,
        memory_limit=memory_limit, device=dev, n_jobs=n_jobs, progress=progress, layout=layout,
        accumulated=accumulated), device)
    out = []
    for q in range(len(starts)):
        p = None
        if path is not None:
            p = path[offsets[q]:offsets[q] + lengths[q]].copy()
            if h is not None:
                p = h.back(p)
        out.append(Match(starts[q], ends[q], costs[q], p))
    if k is None:
        return out[0]
    return out


def segmental_dtw(a, b, n_fragments=32, variant="weak", *, step="p05_query",
                  cost="sqeuclidean", n_chunks=None, method="auto", memory_limit=None,
                  device="auto", n_jobs=None, progress=False, return_segments=False,
                  accumulated=False, layout=None):
    """Segmental DTW: an approximate alignment of ``a`` and ``b`` from independent pieces.

    ``a`` is cut into ``n_fragments`` fragments (fragment f holds rows
    ``floor(f n / N) .. floor((f + 1) n / N) - 1``), each is aligned to all of ``b`` by
    subsequence DTW, and the fragments' end positions in ``b`` are chosen by ``variant``
    (Yang, Shaw and Tsai, "A study of parallelizable alternatives to dynamic time warping
    for aligning long sequences", TASLP 2022):

    - ``"none"`` (NSDTW): each fragment's best match, no ordering (jumps either way);
    - ``"weak"`` (WSDTW): a dynamic program over the fragments' end costs with ends at least
      ``floor(l / 2) + 1`` columns apart (``l`` the fragment's length; the paper's
      ``L_A / 2N``): ends strictly increase, short backward jumps remain possible;
    - ``"strict"`` (SSDTW): each fragment starts at or after the column where the previous
      one ended: the path is monotone.

    The path is the concatenation of the fragments' subsequence paths. See tswarp.h
    "Segmental DTW" for the exact recurrences and tie rules.

    Parameters
    ----------
    a, b : array-like, shape (n,) or (n, d) and (m,) or (m, d)
        Host arrays, or CuPy arrays / PyTorch CUDA tensors on one GPU (copied to the host;
        the paths come back as arrays of their library on their GPU).
    n_fragments : int, default 32
        N, in [1, len(a)]; with the p05 steps every fragment needs 2 points (N <= len(a) / 2).
    variant : {"weak", "strict", "none"}
    step : {"p05_query", "p05", "symmetric1"}, default "p05_query"
        The fragments' step pattern; "p05_query" is the paper's: steps (1,1), (1,2), (2,1)
        with weights 1, 1, 2 (librosa ``weights_mul=[1, 1, 2]``).
    cost : str, default "sqeuclidean"
        As in :func:`tswarp.dtw_path` ("cosine" is the paper's, for chroma features).
    n_chunks : int, optional
        Overlapping chunks of ``b`` per fragment in the first pass (the paper's M); None
        chooses from the thread count. Does not change the result.
    method, memory_limit, device, n_jobs, progress
        As in :func:`tswarp.dtw_path`; ``device="cuda"`` computes every fragment's passes on
        the GPU (the same result as the CPU; ``n_chunks`` is not used there).
    return_segments : bool, default False
        Also return one :class:`Match` per fragment (its start, end and cost in ``b``, and
        its ``path`` with the indices of ``a`` and ``b``).
    accumulated : bool, default False
        The segments' costs by :func:`tswarp.dtw_path`'s rule (square roots of the
        accumulated costs for the sqeuclidean cost unless True).
    layout : {None, 'channels_last', 'channels_first'}
        As in :func:`tswarp.dtw_path`.

    Returns
    -------
    path : ndarray of int64, shape (L, 2)
        (index of a, index of b) pairs, fragment after fragment (for GPU inputs an array of
        their library on their GPU, as every segment's path).
    segments : list of Match
        Only with ``return_segments=True``.

    Examples
    --------
    >>> import numpy as np, tswarp
    >>> x = np.sin(np.linspace(0, 12, 200))
    >>> path = tswarp.segmental_dtw(x, x, n_fragments=4, variant="strict")
    >>> bool((path[:, 0] == path[:, 1]).all())
    True
    """
    n_fragments = check_int(n_fragments, "n_fragments", 1, _INT64_MAX)
    chunks = 0 if n_chunks is None else check_int(n_chunks, "n_chunks", 1, _INT64_MAX)
    code = check_layout(layout)
    acc = check_bool(accumulated, "accumulated")
    return_segments = check_bool(return_segments, "return_segments")
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, got {type(variant).__name__}")
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be 'weak', 'strict' or 'none', got {variant!r}")
    h = _host_copy("segmental_dtw", (("a", a), ("b", b)), device)
    if h is not None:
        a, b = h.arrays
    path, starts, ends, costs, offsets, lengths = _on_device(h, lambda dev: _segmental_dtw(
        a, b, n_fragments, _VARIANTS[variant], chunks, step, cost, method, memory_limit,
        dev, n_jobs, progress, code, int(acc)), device)
    back = (lambda x: x) if h is None else h.back
    if not return_segments:
        return back(path)
    segs = [Match(starts[f], ends[f], costs[f],
                  back(path[offsets[f]:offsets[f] + lengths[f]].copy()))
            for f in range(len(starts))]
    return back(path), segs
