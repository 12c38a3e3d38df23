"""tswarp on a Dask cluster: batch calls as task graphs, computed block by block by tswarp
on the workers (each on its GPU when it has one, on its CPU otherwise).

Needs the ``dask`` extra (``pip install 'tswarp[dask]'``: dask, distributed, zarr). Any
Dask scheduler runs the graphs: the threaded default, ``dask.distributed.LocalCluster``,
``dask_cuda.LocalCUDACluster`` (one worker per GPU, the RAPIDS pattern: each worker sees
its GPU as ``cuda:0``) or a cluster's scheduler address::

    >>> import numpy as np, tswarp.dask
    >>> X = np.random.default_rng(0).normal(size=(60, 32))
    >>> D = tswarp.dask.cdist(X, block_size=16)      # a dask array, 4 x 4 blocks
    >>> bool(np.array_equal(D.compute(), tswarp.cdist(X)))
    True

* ``cdist``, ``pdist``, ``paired`` return dask arrays (``pdist``'s square form: each
  block of the triangle is computed once, the lower blocks are its transposes); with
  ``out=`` they write a store block by block instead (``.npy`` or zarr, as
  :mod:`tswarp.store` writes it, ``resume=True`` skipping finished blocks) and return it.
* ``knn`` returns dask arrays of the distances and indices: every (query block, series
  block) pair gives its top k and a tree reduction merges them, with the ties of
  :func:`tswarp.knn` (to the smaller index); compute the two together
  (``dask.compute(D, I)``) so that the merges run once.
* ``search`` cuts a long series (a numpy array, memmap or dask array) into chunks that
  overlap by the query's length - 1 points and returns :func:`tswarp.search`'s matches.

Inputs: numpy arrays, lists of series (any lengths), or dask arrays (n, len) / (n, len, d)
chunked along the series (the workers then read their own blocks: the way for data
larger than the client's memory). numpy and list inputs travel inside the graph. Every
block is computed with the whole call's dtype and parameters, so the values are those of
the in-process call, bit for bit. A worker lost mid-job only costs its blocks: Dask
computes them again elsewhere. Progress: Dask's own diagnostics (the dashboard,
``dask.diagnostics.ProgressBar``, ``distributed.progress``).

Threads: with ``n_jobs=None`` a task on a distributed worker uses the cores of its
process divided by the task threads of all the workers on its host, as the scheduler
reports them (one worker of one thread per machine gives tswarp every core; as many
single-thread workers as cores give each task one), so that the host is used without
oversubscription. GPU workers: give each two threads
(``LocalCUDACluster(threads_per_worker=2)``), so that one block computes on the GPU while
the other thread copies the previous block to the host and runs Dask's reductions; with
dask-cuda's default of one thread the GPU waits for that host work (bench/RESULTS.md: a
32,768-series matrix on 4 H200s took 3.3-3.5 s with two threads a worker, 4.2-5.4 s with
one, 3.6 s in one process).
"""

from __future__ import annotations

import operator
from typing import Any, List, Optional, Tuple

import numpy as np

from . import _blocks
from ._conventions import as_series, check_bool, check_int, check_layout

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
except ImportError as _e:  # pragma: no cover - the extra is missing
    raise ImportError("tswarp.dask needs Dask: pip install 'tswarp[dask]' (dask[array], "
                      "distributed, zarr)") from _e

__all__ = ["cdist", "pdist", "paired", "knn", "search"]


# ---- inputs --------------------------------------------------------------------------------


def _is_dask(x: Any) -> bool:
    return dask.is_dask_collection(x) and hasattr(x, "chunks")


class _DColl:
    """A collection as the graph's blocks: numpy / list data (a Coll) or a dask array."""

    def __init__(self, X: Any, name: str, layout: Any, times: Any, times_name: str):
        self.name = name
        if _is_dask(X):
            code = check_layout(layout)
            if X.ndim not in (2, 3):
                raise ValueError(f"{name} must be a dask array (n, len) or (n, len, d); got "
                                 f"{X.ndim} dimensions")
            _blocks.check_real(X.dtype, name)
            if X.ndim == 3:
                from ._conventions import collection_transpose
                if collection_transpose(X.shape, name, code):
                    X = X.transpose(0, 2, 1)
            if X.shape[0] == 0:
                raise ValueError(f"{name} is empty (no series)")
            self.dask: Any = X
            self.coll: Optional[_blocks.Coll] = None
            self.f32 = _blocks._is_f32(X.dtype)
            if times is not None:
                times = np.asarray(times) if not _is_dask(times) else times
                if len(times) != X.shape[0]:
                    raise ValueError(f"{times_name} holds {len(times)} series of timestamps "
                                     f"but {name} holds {X.shape[0]} series")
            self.times = times
            self.n = int(X.shape[0])
        else:
            self.dask = None
            self.coll = _blocks.Coll(X, name, layout, times, times_name)
            self.f32 = self.coll.f32
            self.n = len(self.coll)
        self._blocks: dict = {}

    def cast(self, f32: bool) -> None:
        dt = np.float32 if f32 else np.float64
        if self.coll is not None:
            self.coll.cast(f32)
        else:
            self.dask = self.dask.astype(dt)
            if self.times is not None:
                self.times = self.times.astype(dt)

    def token(self) -> str:
        if self.coll is not None:
            return _blocks.inputs_hash([self.coll])
        return tokenize(self.dask.name, None if self.times is None else tokenize(self.times))

    def take(self, i: int, start: int, stop: int) -> Tuple[Any, Any]:
        """Block i's (values, times) as graph objects, made once per block."""
        key = (start, stop)
        if key not in self._blocks:
            if self.coll is not None:
                v, t = self.coll.take(start, stop)
                # traverse=False: a list of series is data, not a list of tasks
                dv = dask.delayed(v, pure=True, traverse=False)
                dt = None if t is None else dask.delayed(t, pure=True, traverse=False)
            else:
                dv = self.dask[start:stop]
                dt = None if self.times is None else self.times[start:stop]
            self._blocks[key] = (dv, dt)
        return self._blocks[key]


def _colls(function: str, X: Any, Y: Any, layout: Any, tx: Any, ty: Any
           ) -> Tuple[_DColl, Optional[_DColl], bool]:
    cx = _DColl(X, "X", layout, tx, "tx")
    cy = None if Y is None else _DColl(Y, "Y", layout, ty, "ty")
    if function == "paired" and cy is not None and cx.n != cy.n:
        raise ValueError(f"X and Y must hold as many series for paired, got {cx.n} and {cy.n}")
    f32 = cx.f32 and (cy is None or cy.f32)
    cx.cast(f32)
    if cy is not None:
        cy.cast(f32)
    return cx, cy, f32


def _scheduler(scheduler: Any) -> Any:
    """A scheduler address ('tcp://host:8786') becomes a distributed Client; anything else
    goes to dask.compute as is (None: the current default, an active Client included)."""
    if isinstance(scheduler, str) and "://" in scheduler:
        from distributed import Client
        return Client(scheduler)
    return scheduler


def _compute(scheduler: Any, *objs: Any) -> Any:
    sched = _scheduler(scheduler)
    try:
        return dask.compute(*objs, scheduler=sched)
    finally:
        if sched is not scheduler:
            sched.close()


# ---- matrices ------------------------------------------------------------------------------


def _matrix(function: str, X: Any, Y: Any, metric: Any, block_size: Any, out: Any,
            resume: Any, scheduler: Any, device: Any, n_jobs: Any, layout: Any, tx: Any,
            ty: Any, params: dict) -> Any:
    size = _blocks.check_block_size(block_size)
    resume = check_bool(resume, "resume")
    if function == "cdist" and Y is None:  # X against itself: each block pair once
        function = "pdist"
    spec = _blocks.Spec(metric, params, device, n_jobs)
    cx, cy, f32 = _colls(function, X, Y, layout, tx, ty)
    if function == "paired" and cy is None:
        raise ValueError("Y is None; paired needs two collections")
    other = cy if cy is not None else cx
    dtype = _blocks.out_dtype(spec, f32)
    blocks = _blocks.plan(function, cx.n, other.n, size, spec, cx.take, other.take)

    if out is not None:
        from .store import store_for
        store = store_for(function, out, cx.n, None if cy is None else cy.n, size, spec, f32)
        store.open(_blocks.fingerprint(function, spec, _inputs_token(cx, cy), size), resume)
        tasks = [dask.delayed(_blocks.write_block, pure=False)(store, index, regions, fn,
                                                                *args)
                 for index, regions, fn, args in blocks if not store.done(index)]
        if tasks:
            _compute(scheduler, *tasks)
        return store.read()

    grid: dict = {}
    for index, regions, fn, args in blocks:
        value = dask.delayed(fn, pure=True)(*args)
        shape = tuple(r.stop - r.start for r in regions[0])
        grid[index] = da.from_delayed(value, shape=shape, dtype=dtype)
        if len(regions) > 1:  # pdist: the mirror block is the same task's transpose
            grid[index[::-1]] = grid[index].T
    if function == "paired":
        return da.concatenate([grid[(i,)] for i in range(len(grid))])
    nb = len(_blocks.spans(cx.n, size))
    mb = len(_blocks.spans(other.n, size))
    return da.block([[grid[(i, j)] for j in range(mb)] for i in range(nb)])


def _inputs_token(cx: _DColl, cy: Optional[_DColl]) -> str:
    """The stored job's hash of its inputs: the same hash tswarp.store takes of numpy and
    list inputs (so either can resume the other's job), Dask's token of a dask array."""
    if all(c is None or c.coll is not None for c in (cx, cy)):
        return _blocks.inputs_hash([None if c is None else c.coll for c in (cx, cy)])
    return tokenize(cx.token(), None if cy is None else cy.token())


def cdist(X: Any, Y: Any = None, *, metric: Any = "dtw", block_size: int = 1024,
          out: Any = None, resume: bool = False, scheduler: Any = None, device: Any = "auto",
          n_jobs: Optional[int] = None, layout: Any = None, tx: Any = None, ty: Any = None,
          **params: Any) -> Any:
    """:func:`tswarp.cdist` as a Dask graph of block_size x block_size blocks.

    Parameters
    ----------
    X, Y : array_like, list of series or dask array
        As in :func:`tswarp.cdist`; a dask array (n, len) or (n, len, d).
    metric, device, n_jobs, layout, tx, ty, **params
        As in :func:`tswarp.cdist`, applied to every block on its worker (device='auto':
        the worker's GPU for large blocks when it has one).
    block_size : int, default 1024
        Series per block side.
    out : str or path, optional
        Write the matrix to this ``.npy`` file or zarr store block by block (see
        :mod:`tswarp.store`; every worker must see the path) and return it. None: return
        the lazy dask array.
    resume : bool, default False
        With ``out``: skip the blocks an earlier run of the same job finished.
    scheduler : optional
        With ``out`` (the work runs now): what ``dask.compute`` runs on; a Client, a
        scheduler address ('tcp://...'), 'threads', 'processes', 'sync'; None: Dask's
        default (the active Client, if any).

    Returns
    -------
    dask.array.Array (len(X), len(Y)), or with ``out`` the stored array (read-only
    ``numpy.memmap`` or ``zarr.Array``).
    """
    return _matrix("cdist", X, Y, metric, block_size, out, resume, scheduler, device, n_jobs,
                   layout, tx, ty, params)


def pdist(X: Any, *, metric: Any = "dtw", block_size: int = 1024, out: Any = None,
          resume: bool = False, scheduler: Any = None, device: Any = "auto",
          n_jobs: Optional[int] = None, layout: Any = None, tx: Any = None,
          **params: Any) -> Any:
    """:func:`tswarp.pdist`'s square form as a Dask graph: each block of the upper triangle
    once (the diagonal blocks by ``pdist``), the lower blocks as their transposes.
    Arguments as in :func:`cdist`. For scipy's condensed vector of a result that fits in
    memory: ``scipy.spatial.distance.squareform(D.compute(), checks=False)``."""
    return _matrix("pdist", X, None, metric, block_size, out, resume, scheduler, device,
                   n_jobs, layout, tx, None, params)


def paired(X: Any, Y: Any, *, metric: Any = "dtw", block_size: int = 1024, out: Any = None,
           resume: bool = False, scheduler: Any = None, device: Any = "auto",
           n_jobs: Optional[int] = None, layout: Any = None, tx: Any = None, ty: Any = None,
           **params: Any) -> Any:
    """:func:`tswarp.paired` as a Dask graph of block_size pairs per task. Arguments as in
    :func:`cdist`."""
    return _matrix("paired", X, Y, metric, block_size, out, resume, scheduler, device,
                   n_jobs, layout, tx, ty, params)


# ---- nearest neighbours --------------------------------------------------------------------


def knn(Q: Any, X: Any, k: int = 1, *, metric: Any = "dtw", block_size: int = 1024,
        split_every: int = 8, out: Any = None, resume: bool = False, scheduler: Any = None,
        device: Any = "auto", n_jobs: Optional[int] = None, layout: Any = None,
        tx: Any = None, ty: Any = None, **params: Any) -> Tuple[Any, Any]:
    """:func:`tswarp.knn` as a Dask graph: the k nearest series of X for every query.

    Every (query block, X block) pair is one :func:`tswarp.knn` call (with its lower
    bounds and early abandoning inside the block); the per-block top k of each query block
    are merged by a tree reduction, ``split_every`` lists at a time.

    Parameters
    ----------
    Q, X : as in :func:`cdist` (Q the queries; ``tx``/``ty`` their TWED timestamps).
    k : int, 1 <= k <= len(X).
    block_size : int, default 1024
        Series per block, for the queries and for X.
    split_every : int, default 8
        Lists merged per reduction task (at least 2).
    out : str or path, optional
        A ``.zarr`` name: write the neighbours there block of queries by block (as
        :func:`tswarp.store.knn` does; every worker must see the path) and return the two
        stored arrays. None: return dask arrays.
    resume, scheduler : as in :func:`cdist` (with ``out``).

    Returns
    -------
    distances, indices : dask arrays (len(Q), k), or the stored zarr arrays with ``out``
        As :func:`tswarp.knn` returns them (ties to the smaller index). Compute them
        together: ``D, I = dask.compute(D, I)``.
    """
    size = _blocks.check_block_size(block_size)
    split_every = check_int(split_every, "split_every", 2)
    spec = _blocks.Spec(metric, params, device, n_jobs)
    cq = _DColl(Q, "Q", layout, tx, "tx")
    cx = _DColl(X, "X", layout, ty, "ty")
    k = _blocks.check_k(k, cx.n)
    f32 = cq.f32 and cx.f32
    cq.cast(f32)
    cx.cast(f32)
    dtype = _blocks.out_dtype(spec, f32)
    xs = _blocks.spans(cx.n, size)
    store = None
    if out is not None:
        resume = check_bool(resume, "resume")
        store = _blocks.KnnStore(out, cq.n, k, dtype, size)
        store.open(_blocks.fingerprint("knn", spec, _inputs_token(cq, cx), size, {"k": k}),
                   resume)
    Ds: List[Any] = []
    Is: List[Any] = []
    writes: List[Any] = []
    for qi, (q0, q1) in enumerate(_blocks.spans(cq.n, size)):
        if store is not None and store.done((qi,)):
            continue
        qv, qt = cq.take(qi, q0, q1)
        parts = [dask.delayed(_blocks.knn_block, pure=True)(qv, qt, *cx.take(j, a, b), a, k,
                                                            spec)
                 for j, (a, b) in enumerate(xs)]
        while len(parts) > 1:
            parts = [dask.delayed(_blocks.merge_topk, pure=True)(parts[i:i + split_every], k)
                     if len(parts[i:i + split_every]) > 1 else parts[i]
                     for i in range(0, len(parts), split_every)]
        top = parts[0]
        if store is not None:
            writes.append(dask.delayed(_blocks.write_knn, pure=False)(
                store, (qi,), (slice(q0, q1), slice(None)), top))
            continue
        Ds.append(da.from_delayed(dask.delayed(operator.getitem)(top, 0), shape=(q1 - q0, k),
                                  dtype=dtype))
        Is.append(da.from_delayed(dask.delayed(operator.getitem)(top, 1), shape=(q1 - q0, k),
                                  dtype=np.int64))
    if store is not None:
        if writes:
            _compute(scheduler, *writes)
        return store.read()
    return da.concatenate(Ds), da.concatenate(Is)


# ---- subsequence search --------------------------------------------------------------------


def search(query: Any, series: Any, k: int = 1, *, chunk_size: int = 1 << 22,
           scheduler: Any = None, znorm: bool = True, exclusion: Optional[int] = None,
           window: Any = None, radius: Any = None, itakura_max_slope: Any = None,
           cost: str = "sqeuclidean", accumulated: bool = False, device: Any = "auto",
           n_jobs: Optional[int] = None, layout: Any = None) -> Tuple[np.ndarray, np.ndarray]:
    """:func:`tswarp.search` over a long series cut into chunks, on a Dask cluster.

    The series (a numpy array, a memmap or a dask array; (N,) or (N, d)) is cut into
    chunks of ``chunk_size`` windows that overlap by len(query) - 1 points; each chunk
    gives its best windows (the UCR Suite's cascade on its worker), and the matches are
    chosen from them exactly as :func:`tswarp.search` chooses: the same starts and
    distances. A chunk gives (2k - 1)(2 exclusion - 1) windows at first, which always
    holds the (2k - 1) greedy picks that bound the matches; a chunk whose list is not yet
    below that bound is asked again with a list twice as long (rare: ties at the bound).

    Parameters
    ----------
    query, k, znorm, exclusion, window, radius, itakura_max_slope, cost, accumulated,
    device, n_jobs, layout : as in :func:`tswarp.search`.
    chunk_size : int, default 4194304
        Windows per chunk (per task).
    scheduler : as in :func:`cdist` (the work runs now).

    Returns
    -------
    starts, distances : ndarrays (m,), m <= k, best first.
    """
    size = check_int(chunk_size, "chunk_size", 1)
    code = check_layout(layout)
    q = as_series(_blocks._host(query), "query", code)
    if q.ndim not in (1, 2) or q.shape[0] == 0:
        raise ValueError(f"query must be one non-empty series (n,) or (n, d); got shape "
                         f"{q.shape}")
    n = int(q.shape[0])
    if not _is_dask(series):
        series = as_series(_blocks._host(series), "series", code)
    elif series.ndim == 2 and code == 2:  # channels_first (d, N)
        series = series.T
    N = int(series.shape[0])
    if N < n:
        raise ValueError(f"series has {N} points, fewer than the query's {n}")
    n_windows = N - n + 1
    k = check_int(k, "k", 1)
    if k > n_windows:
        raise ValueError(f"k must be at most the {n_windows} windows of series, got {k}")
    exclusion = n if exclusion is None else check_int(exclusion, "exclusion", 1)
    kwargs = {"znorm": znorm, "window": window, "radius": radius,
              "itakura_max_slope": itakura_max_slope, "cost": cost, "accumulated": accumulated,
              "device": device, "n_jobs": n_jobs, "layout": "channels_last"}
    chunks = [(s, min(s + size, n_windows)) for s in range(0, n_windows, size)]
    want = [min(b - a, (2 * k - 1) * (2 * exclusion - 1)) for a, b in chunks]
    parts: List[Any] = [None] * len(chunks)
    ask = list(range(len(chunks)))
    qd = dask.delayed(q, pure=True, traverse=False)
    while True:
        tasks = []
        for c in ask:
            a, b = chunks[c]
            piece = series[a:b + n - 1]
            if not _is_dask(piece):
                piece = dask.delayed(piece, pure=True, traverse=False)
            tasks.append(dask.delayed(_blocks.search_chunk, pure=True)(qd, piece, a, want[c],
                                                                       kwargs))
        for c, r in zip(ask, _compute(scheduler, *tasks)):
            parts[c] = r
        result, ask = _blocks.merge_search(parts, exclusion, k)
        if result is not None:
            return result
        for c in ask:
            want[c] = min(chunks[c][1] - chunks[c][0], 2 * want[c])
