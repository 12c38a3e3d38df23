"""Alignment paths: subsequence DTW matches and segmental DTW, on top of the C functions.

``tswarp.dtw_path`` is the extension's own function; this module adds the Python-level
pieces: :class:`Match` and :func:`subsequence_dtw` (which wraps ``_subsequence_dtw``).
"""

from __future__ import annotations

from ._tswarp import _subsequence_dtw

__all__ = ["Match", "subsequence_dtw"]


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
