"""Alignment paths: subsequence DTW matches and segmental DTW, on top of the C functions.

``tswarp.dtw_path`` is the extension's own function; this module adds the Python-level
pieces: :class:`Match` and :func:`subsequence_dtw` (which wraps ``_subsequence_dtw``).
"""

from __future__ import annotations

import operator

from ._tswarp import _segmental_dtw, _subsequence_dtw

__all__ = ["Match", "segmental_dtw", "subsequence_dtw"]

_VARIANTS = {"none": 0, "weak": 1, "strict": 2}


class Match(tuple):
    """One subsequence match: unpacks as ``start, end, cost``; ``.path`` holds its path.

    ``start`` and ``end`` are the reference indices of the path's first and last cells
    (inclusive); ``cost`` is the accumulated cost D(n-1, end); ``path`` is an (L, 2) int64
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
                    return_path=True, method="auto", memory_limit=None, device="auto",
                    n_jobs=None, progress=False):
    """Subsequence DTW: where ``query`` best matches a stretch of ``reference``.

    The path may start and end at any reference index (Mueller, Fundamentals of Music
    Processing 7.2; ``librosa.sequence.dtw(query, reference, subseq=True)`` with the same
    steps and costs gives the same best match and path).

    Parameters
    ----------
    query : array-like, shape (n,) or (n, d)
    reference : array-like, shape (m,) or (m, d)
    step, cost, method, memory_limit, device, n_jobs, progress
        As in :func:`tswarp.dtw_path` (no windows).
    k : int, optional
        None (default): the best match. An int: a list of up to k matches whose reference
        ranges [start, end] do not overlap, best first (each end in order of cost, kept
        when its range overlaps none kept before).
    return_path : bool, default True
        Compute each match's path (one more pass over columns 0..end per match).

    Returns
    -------
    Match or list of Match
        ``start, end, cost = match``; ``match.path`` is the (L, 2) int64 path (None
        without return_path).

    Examples
    --------
    >>> import numpy as np, tswarp
    >>> ref = np.array([5.0, 5.0, 0.0, 1.0, 2.0, 5.0])
    >>> start, end, cost = tswarp.subsequence_dtw([0.0, 1.0, 2.0], ref)
    >>> (start, end, cost)
    (2, 4, 0.0)
    """
    kk = 1 if k is None else k
    starts, ends, costs, path, offsets, lengths = _subsequence_dtw(
        query, reference, step=step, cost=cost, k=kk, return_path=return_path, method=method,
        memory_limit=memory_limit, device=device, n_jobs=n_jobs, progress=progress)
    out = []
    for q in range(len(starts)):
        p = None
        if path is not None:
            p = path[offsets[q]:offsets[q] + lengths[q]].copy()
        out.append(Match(starts[q], ends[q], costs[q], p))
    if k is None:
        return out[0]
    return out


def _count(value, name, minimum):
    """An int argument (bool and float refused) of at least ``minimum``."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    v = operator.index(value)
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def segmental_dtw(a, b, n_fragments=32, variant="weak", *, step="p05_query",
                  cost="sqeuclidean", n_chunks=None, method="auto", memory_limit=None,
                  device="auto", n_jobs=None, progress=False, return_segments=False):
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

    Returns
    -------
    path : ndarray of int64, shape (L, 2)
        (index of a, index of b) pairs, fragment after fragment.
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
    n_fragments = _count(n_fragments, "n_fragments", 1)
    chunks = 0 if n_chunks is None else _count(n_chunks, "n_chunks", 1)
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, got {type(variant).__name__}")
    if variant not in _VARIANTS:
        raise ValueError(f"variant must be 'weak', 'strict' or 'none', got {variant!r}")
    path, starts, ends, costs, offsets, lengths = _segmental_dtw(
        a, b, n_fragments, _VARIANTS[variant], chunks, step, cost, method, memory_limit,
        device, n_jobs, progress)
    if not return_segments:
        return path
    segs = [Match(starts[f], ends[f], costs[f], path[offsets[f]:offsets[f] + lengths[f]].copy())
            for f in range(len(starts))]
    return path, segs
