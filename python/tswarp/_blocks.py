"""Batch calls cut into blocks, and result stores written block by block with resume.

The pieces that :mod:`tswarp.dask` runs as Dask tasks and :mod:`tswarp.store` runs in this
process, one block after another; none of them imports Dask:

* ``Coll``: a collection (array, list of series) with its TWED timestamps, converted once
  to the dtype the whole call computes in, so that a block gives bit for bit the values of
  the same rows of the whole call (a block of float32 series inside a float64 call would
  otherwise compute in float32);
* the block functions (``cdist_block``, ``pdist_block``, ``paired_block``, ``knn_block``,
  ``search_chunk``) and the exact merges (``merge_topk``, ``merge_search``);
* ``Store``: a ``.npy`` file (a memory map) or a zarr array written block by block; a
  block is marked done only once its values are on disk, so a rerun with ``resume=True``
  computes only the blocks an interruption (Ctrl-C, a crash, a killed machine) left
  undone. The marks and the job's fingerprint (function, metric, parameters, shapes,
  dtype, block size and a hash of the inputs) live beside the store in ``<out>.blocks/``;
  a rerun of another job over the same path is refused.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import os
import secrets
import shutil
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ._conventions import as_collection, check_int, check_layout
from ._knn import _host  # GPU arrays and torch tensors as numpy arrays

__all__ = ["Coll", "Spec", "Store", "KnnStore", "spans", "cdist_block", "pdist_block", "paired_block",
           "knn_block", "merge_topk", "search_chunk", "merge_search", "greedy"]

_OWN = ("metric", "device", "n_jobs", "tx", "ty", "layout", "progress")


def spans(n: int, size: int) -> List[Tuple[int, int]]:
    """[start, stop) of the blocks of ``size`` items covering ``n``."""
    return [(s, min(s + size, n)) for s in range(0, n, size)]


def check_block_size(block_size: Any) -> int:
    return check_int(block_size, "block_size", 1)


def _is_f32(dtype: Any) -> bool:
    return np.dtype(dtype).kind == "f" and np.dtype(dtype).itemsize <= 4


def check_real(dtype: Any, name: str) -> None:
    """A collection's dtype must be real numbers (float, int or bool)."""
    if np.dtype(dtype).kind not in "biuf":
        raise TypeError(f"{name} has dtype {dtype}; tswarp needs real numbers (float, int or "
                        f"bool)")


class Coll:
    """A collection in tswarp's layout that can be cut by series.

    ``values`` is an ndarray (n, len) / (n, len, d) or a list of series; ``times`` the
    matching TWED timestamps or None. ``f32`` tells whether every series is float32 (or
    narrower): the call computes in float32 only when all its collections are.
    """

    def __init__(self, X: Any, name: str, layout: Any, times: Any = None,
                 times_name: str = "tx"):
        if X is None:
            raise ValueError(f"{name} is None; expected a collection of series")
        code = check_layout(layout)
        X = _host(X)
        if hasattr(X, "dask") and hasattr(X, "chunks"):
            raise TypeError(f"{name}: a dask array is read by tswarp.dask, not here")
        C = as_collection(X, name, code)
        if isinstance(C, list):
            C = [np.asarray(s) for s in C]
            for i, s in enumerate(C):
                check_real(s.dtype, f"{name}[{i}]")
            self.f32 = all(_is_f32(s.dtype) for s in C)
        else:
            if C.ndim not in (2, 3):
                raise ValueError(f"{name} must be a 2-D array (n, len), a 3-D array (n, len, d) or "
                                 f"a list of series; got shape {C.shape}")
            check_real(C.dtype, name)
            self.f32 = _is_f32(C.dtype)
        if len(C) == 0:
            raise ValueError(f"{name} is empty (no series)")
        self.values = C
        self.name = name
        self.times = None
        if times is not None:
            T = _host(times)
            T = [np.asarray(t) for t in T] if isinstance(T, (list, tuple)) else np.asarray(T)
            if len(T) != len(C):
                raise ValueError(f"{times_name} holds {len(T)} series of timestamps but {name} "
                                 f"holds {len(C)} series")
            self.times = T

    def __len__(self) -> int:
        return len(self.values)

    def cast(self, f32: bool) -> "Coll":
        """The collection in the call's dtype (float32 or float64), converted once."""
        dt = np.float32 if f32 else np.float64

        def conv(v):
            if isinstance(v, list):
                return [np.asarray(s, dtype=dt) for s in v]
            return np.asarray(v, dtype=dt)
        self.values = conv(self.values)
        if self.times is not None:
            self.times = conv(self.times)
        return self

    def take(self, start: int, stop: int) -> Tuple[Any, Any]:
        t = None if self.times is None else self.times[start:stop]
        return self.values[start:stop], t

    def digest(self, h: "hashlib._Hash") -> None:
        """Feed the values (and timestamps) into a hash: the fingerprint of a stored job."""
        for part in (self.values, self.times):
            if part is None:
                h.update(b"none")
                continue
            items = part if isinstance(part, list) else [part]
            h.update(f"{type(part).__name__}:{len(items)}".encode())
            for a in items:
                a = np.ascontiguousarray(a)
                h.update(f"{a.dtype.str}{a.shape}".encode())
                h.update(a.reshape(-1).view(np.uint8).data)


class Spec:
    """What every block of one call computes with: the metric, its keywords, device and
    threads. An opaque object to Dask (its graphs walk lists and dicts)."""

    def __init__(self, metric: Any, params: Dict[str, Any], device: Any, n_jobs: Any):
        for key in _OWN:
            if key in params:
                raise TypeError(f"{key!r} is an argument of its own here, not a measure's "
                                f"parameter")
        self.metric = metric
        self.params = dict(params)
        self.device = device
        self.n_jobs = n_jobs

    def kwargs(self) -> Dict[str, Any]:
        kw = dict(self.params)
        kw["metric"] = self.metric
        kw["device"] = self.device
        kw["n_jobs"] = _threads(self.n_jobs)
        kw["layout"] = "channels_last"  # Coll holds tswarp's layout
        return kw

    def describe(self) -> Dict[str, Any]:
        """JSON-able description for a store's fingerprint (device and threads left out:
        they do not change the values)."""
        metric = self.metric if isinstance(self.metric, str) else (
            f"{getattr(self.metric, '__module__', '?')}.{getattr(self.metric, '__qualname__', '?')}")
        return {"metric": metric, "params": {k: repr(v) for k, v in sorted(self.params.items())}}


_HOST_THREADS: Dict[str, Any] = {"at": -1e9, "threads": None}


def _host_threads(worker: Any) -> int:
    """The task threads of every worker on this worker's host (the scheduler's view, asked
    at most every 30 s); the worker's own when the scheduler cannot be asked."""
    import time
    now = time.monotonic()
    if now - _HOST_THREADS["at"] > 30 or _HOST_THREADS["threads"] is None:
        threads = worker.state.nthreads
        try:
            from distributed import get_client  # type: ignore[import-not-found]
            host = worker.address.split("://")[-1].rsplit(":", 1)[0]
            info = get_client().scheduler_info()
            here = [w.get("nthreads", 0) for w in info["workers"].values()
                    if w.get("host") == host]
            if here:
                threads = sum(here)
        except Exception:  # no scheduler to ask: this worker's threads alone
            pass
        _HOST_THREADS.update(at=now, threads=max(1, int(threads)))
    return int(_HOST_THREADS["threads"])


def _threads(n_jobs: Any) -> Any:
    """Threads for one block. Given: as given. None: on a Dask worker, the cores this process
    may use divided among the task threads of all the workers on its host (a host of one
    worker of one thread gives each task every core; LocalCluster's default of as many
    single-thread workers as cores gives each task one, where dask's OMP_NUM_THREADS=1
    would have left it); elsewhere tswarp's default (all cores)."""
    if n_jobs is not None:
        return n_jobs
    try:
        from distributed import get_worker  # type: ignore[import-not-found]
        worker = get_worker()
    except Exception:  # not on a worker (or no distributed): tswarp's default
        return None
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // _host_threads(worker))


# ---- block functions -----------------------------------------------------------------------


def _times_kw(tx: Any, ty: Any) -> Dict[str, Any]:
    kw = {}
    if tx is not None:
        kw["tx"] = tx
    if ty is not None:
        kw["ty"] = ty
    return kw


def cdist_block(xv: Any, xt: Any, yv: Any, yt: Any, spec: Spec) -> np.ndarray:
    import tswarp
    return np.asarray(tswarp.cdist(xv, yv, **_times_kw(xt, yt), **spec.kwargs()))


def pdist_block(xv: Any, xt: Any, spec: Spec) -> np.ndarray:
    import tswarp
    return np.asarray(tswarp.pdist(xv, condensed=False, **_times_kw(xt, None), **spec.kwargs()))


def paired_block(xv: Any, xt: Any, yv: Any, yt: Any, spec: Spec) -> np.ndarray:
    import tswarp
    return np.asarray(tswarp.paired(xv, yv, **_times_kw(xt, yt), **spec.kwargs()))


def knn_block(qv: Any, qt: Any, xv: Any, xt: Any, x0: int, k: int,
              spec: Spec) -> Tuple[np.ndarray, np.ndarray]:
    """The top min(k, len) of one block of X for a block of queries, indices made global."""
    import tswarp
    kk = min(k, len(xv))
    D, I = tswarp.knn(qv, xv, kk, **_times_kw(qt, xt), **spec.kwargs())
    return np.asarray(D), np.asarray(I, dtype=np.int64) + x0


def write_block(store: "Store", index: Tuple[int, ...], regions: Sequence[Tuple[slice, ...]],
                fn: Any, *args: Any) -> int:
    """Compute one block (fn(*args)) and write it to its region of the store (a pdist block
    off the diagonal also to its mirror, transposed), then mark it done. Returns the
    number of values written."""
    values = fn(*args)
    parts = [values] + [np.asarray(values).T for _ in regions[1:]]
    return store.write(index, regions, parts)


def merge_topk(parts: Sequence[Tuple[np.ndarray, np.ndarray]], k: int
               ) -> Tuple[np.ndarray, np.ndarray]:
    """The top k of several candidate lists per row: distance ascending, ties to the smaller
    index (a stable sort of the whole row, as tswarp.knn orders)."""
    D = np.concatenate([p[0] for p in parts], axis=1)
    I = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((I, D), axis=1)[:, :k]
    return np.take_along_axis(D, order, axis=1), np.take_along_axis(I, order, axis=1)


def search_chunk(query: Any, chunk: Any, offset: int, want: int,
                 kwargs: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray, bool]:
    """The ``want`` best windows of one chunk (no exclusion: every window is a candidate),
    starts made global, and whether they are all the chunk's windows."""
    import tswarp
    chunk = np.asarray(_host(chunk))
    n_windows = chunk.shape[0] - len(query) + 1
    want = min(want, n_windows)
    st, d = tswarp.search(query, chunk, want, exclusion=1, **kwargs)
    return np.asarray(st, dtype=np.int64) + offset, np.asarray(d), want == n_windows


def greedy(starts: np.ndarray, dist: np.ndarray, exclusion: int, k: int
           ) -> Tuple[np.ndarray, np.ndarray]:
    """tswarp.search's choice: windows by distance (ties to the smaller start), each kept
    when at least ``exclusion`` points from every start kept before."""
    order = np.lexsort((starts, dist))
    kept: List[int] = []
    for i in order:
        s = starts[i]
        if all(abs(int(s) - int(starts[j])) >= exclusion for j in kept):
            kept.append(int(i))
            if len(kept) == k:
                break
    idx = np.array(kept, dtype=np.int64)
    return starts[idx], dist[idx]


def merge_search(parts: Sequence[Tuple[np.ndarray, np.ndarray, bool]], exclusion: int,
                 k: int) -> Tuple[Optional[Tuple[np.ndarray, np.ndarray]], List[int]]:
    """The exact matches from the chunks' best windows, or the chunks that must give more.

    Each chunk gave its best windows in order. The greedy choice over the whole series
    never picks a window above the (2k-1)-th greedy pick of any set of windows (each pick
    blocks at most two of a set of mutually distant windows), so tau, the least over the
    chunks of their own (2k-1)-th greedy pick, bounds every match; the chunks' lists are
    enough once each holds every window of its chunk at or below tau (its last entry above
    tau, or all its windows). Returns (starts, distances) then, else the chunks to ask
    again with longer lists.
    """
    tau = np.inf
    for st, d, _ in parts:
        if len(st) == 0:
            continue
        pst, pd = greedy(st, d, exclusion, 2 * k - 1)
        if len(pst) == 2 * k - 1:
            tau = min(tau, float(pd[-1]))
    short = [i for i, (st, d, complete) in enumerate(parts)
             if not complete and (len(d) == 0 or not float(d[-1]) > tau)]
    if short:
        return None, short
    st = np.concatenate([p[0] for p in parts])
    d = np.concatenate([p[1] for p in parts])
    keep = d <= tau
    return greedy(st[keep], d[keep], exclusion, k), []


# ---- stores --------------------------------------------------------------------------------


class Store:
    """A matrix (or vector) on disk, written block by block, with resume.

    ``path`` ending in ``.npy``: a NumPy file, written through a memory map (one machine,
    or a file system every worker shares with POSIX semantics); any other name (``.zarr``
    recommended): a zarr array whose chunks are the blocks (needs the ``zarr`` package;
    any file system the workers share). Picklable: Dask workers open it by path.
    """

    def __init__(self, path: Any, shape: Tuple[int, ...], dtype: Any,
                 chunks: Tuple[int, ...]):
        self.path = os.path.abspath(os.fspath(path))
        self.kind = "npy" if self.path.lower().endswith(".npy") else "zarr"
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype).str
        self.chunks = tuple(int(c) for c in chunks)
        self.marks = self.path + ".blocks"

    # -- the job ---------------------------------------------------------------------
    def open(self, job: Dict[str, Any], resume: bool) -> None:
        """Create the store for ``job``, or with ``resume`` reuse one made for the same job
        (then the blocks marked done are kept)."""
        if self.kind == "zarr":
            _zarr("out")
        parent = os.path.dirname(self.path)
        if not os.path.isdir(parent):
            raise ValueError(f"out: {parent!r} is not a directory")
        job = dict(job, shape=list(self.shape), dtype=self.dtype, chunks=list(self.chunks),
                   format=self.kind)
        if resume:
            old = self._job()
            if old is not None and os.path.exists(self.path):
                if old != job:
                    diff = sorted(k for k in set(old) | set(job) if old.get(k) != job.get(k))
                    raise ValueError(
                        f"out: {self.path!r} holds another job (its {', '.join(diff)} "
                        f"differ{'s' if len(diff) == 1 else ''}); pass resume=False to "
                        f"overwrite it")
                return
        self._remove()
        os.makedirs(self.marks)
        self._create()
        _atomic_text(os.path.join(self.marks, "job.json"), json.dumps(job, sort_keys=True))

    def _create(self) -> None:
        if self.kind == "npy":
            m = np.lib.format.open_memmap(self.path, mode="w+", dtype=np.dtype(self.dtype),
                                          shape=self.shape)
            m.flush()
            del m
        else:
            _zarr("out").create_array(store=self.path, shape=self.shape, chunks=self.chunks,
                                      dtype=np.dtype(self.dtype), fill_value=np.nan,
                                      overwrite=True)

    def _job(self) -> Optional[Dict[str, Any]]:
        try:
            with open(os.path.join(self.marks, "job.json"), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def _remove(self) -> None:
        if os.path.isdir(self.path) and not os.path.islink(self.path):
            if self.kind == "zarr" and not _looks_like_zarr(self.path):
                raise ValueError(f"out: {self.path!r} is a directory that is not a zarr store; "
                                 f"refusing to replace it")
            shutil.rmtree(self.path)
        elif os.path.lexists(self.path):
            os.unlink(self.path)
        if os.path.isdir(self.marks):
            shutil.rmtree(self.marks)

    # -- blocks ----------------------------------------------------------------------
    @staticmethod
    def key(index: Tuple[int, ...]) -> str:
        return "b" + "_".join(str(i) for i in index)

    def done(self, index: Tuple[int, ...]) -> bool:
        return os.path.exists(os.path.join(self.marks, self.key(index)))

    def write(self, index: Tuple[int, ...], regions: Sequence[Tuple[slice, ...]],
              parts: Sequence[np.ndarray]) -> int:
        """Write one block's values (each part to its region) and mark the block done, once
        they are on disk."""
        dt = np.dtype(self.dtype)
        if self.kind == "npy":
            m = np.load(self.path, mmap_mode="r+")
            for region, values in zip(regions, parts):
                m[region] = np.asarray(values, dtype=dt)
            m.flush()  # msync: the values are on disk before the mark
            del m
        else:
            a = _zarr("out").open_array(self.path, mode="r+")
            for region, values in zip(regions, parts):
                a[region] = np.asarray(values, dtype=dt)
        _atomic_text(os.path.join(self.marks, self.key(index)), "")
        return int(sum(np.size(p) for p in parts))

    def read(self) -> Any:
        """The stored array: a read-only memory map (.npy) or the zarr array."""
        if self.kind == "npy":
            return np.load(self.path, mmap_mode="r")
        return _zarr("out").open_array(self.path, mode="r")


class KnnStore(Store):
    """The k nearest neighbours on disk, block of queries by block: a zarr group of two
    arrays (nq, k), ``distances`` (NaN until written) and ``indices`` (int64, -1 until
    written), chunked by query blocks; resume and fingerprint as :class:`Store`."""

    def __init__(self, path: Any, nq: int, k: int, dtype: Any, chunk: int):
        super().__init__(path, (nq, k), dtype, (chunk, k))
        if self.kind != "zarr":
            raise ValueError(f"out: {self.path!r}: the neighbours are a zarr group (distances and "
                             f"indices); give a .zarr name")

    def _create(self) -> None:
        g = _zarr("out").open_group(self.path, mode="w")
        g.create_array("distances", shape=self.shape, chunks=self.chunks,
                       dtype=np.dtype(self.dtype), fill_value=np.nan)
        g.create_array("indices", shape=self.shape, chunks=self.chunks, dtype=np.int64,
                       fill_value=-1)

    def write(self, index: Tuple[int, ...], regions: Sequence[Tuple[slice, ...]],
              parts: Sequence[np.ndarray]) -> int:
        """parts: (distances, indices) of the block of queries in regions[0]."""
        g = _zarr("out").open_group(self.path, mode="r+")
        g["distances"][regions[0]] = np.asarray(parts[0], dtype=np.dtype(self.dtype))
        g["indices"][regions[0]] = np.asarray(parts[1], dtype=np.int64)
        _atomic_text(os.path.join(self.marks, self.key(index)), "")
        return int(np.size(parts[0]))

    def read(self) -> Any:
        """(distances, indices), read-only zarr arrays."""
        g = _zarr("out").open_group(self.path, mode="r")
        return g["distances"], g["indices"]


def write_knn(store: KnnStore, index: Tuple[int, ...], region: Tuple[slice, ...],
              top: Tuple[np.ndarray, np.ndarray]) -> int:
    """Write one block of queries' neighbours (a Dask task after the merge)."""
    return store.write(index, [region], top)


def knn_rows(qv: Any, qt: Any, X: "Coll", k: int, spec: Spec) -> Tuple[np.ndarray, np.ndarray]:
    """The k nearest of all of X for a block of queries (tswarp.store's block)."""
    xv, xt = X.take(0, len(X))
    return knn_block(qv, qt, xv, xt, 0, k, spec)


def _zarr(name: str) -> Any:
    try:
        import zarr  # type: ignore[import-not-found]
    except ImportError:
        raise ImportError(f"{name}: a zarr store needs the zarr package (pip install "
                          f"'tswarp[dask]'); a .npy file name needs nothing") from None
    return zarr


def _looks_like_zarr(path: str) -> bool:
    return any(os.path.exists(os.path.join(path, f)) for f in ("zarr.json", ".zarray", ".zgroup"))


def _atomic_text(path: str, text: str) -> None:
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def inputs_hash(colls: Sequence[Optional[Coll]]) -> str:
    """The hash of a job's inputs (None: an absent collection)."""
    h = hashlib.sha256()
    for c in colls:
        if c is None:
            h.update(b"-")
        else:
            c.digest(h)
    return h.hexdigest()


def fingerprint(function: str, spec: Spec, inputs: str, block_size: int,
                extra: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """A stored job's description (Store.open adds the shape, dtype, chunks and format);
    inputs: inputs_hash of its collections (or Dask's token of dask arrays)."""
    job = {"function": function, "block_size": int(block_size), "inputs": inputs}
    job.update(spec.describe())
    if extra:
        job.update(extra)
    return job


def check_k(k: Any, n: int, name: str = "X") -> int:
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    k = int(k)
    if k < 1 or k > n:
        raise ValueError(f"k must be between 1 and the {n} series of {name}, got {k}")
    return k


# ---- plans ---------------------------------------------------------------------------------

Block = Tuple[Tuple[int, ...], List[Tuple[slice, ...]], Any, Tuple[Any, ...]]


def plan(function: str, nx: int, ny: int, size: int, spec: Spec, take_x: Any,
         take_y: Any) -> List[Block]:
    """The blocks of a cdist (nx x ny), pdist (nx x nx, the triangle's blocks once: a block
    off the diagonal also fills its mirror) or paired (nx) call: (index, regions, function,
    arguments). ``take_x(i, start, stop)`` gives block i's (values, times) as the runner
    holds them (arrays in this process, Dask objects on a cluster)."""
    out: List[Block] = []
    xs = spans(nx, size)
    if function == "paired":
        for i, (a0, a1) in enumerate(xs):
            out.append(((i,), [(slice(a0, a1),)], paired_block,
                        (*take_x(i, a0, a1), *take_y(i, a0, a1), spec)))
        return out
    if function == "pdist":
        for i, (a0, a1) in enumerate(xs):
            for j in range(i, len(xs)):
                b0, b1 = xs[j]
                if i == j:
                    out.append(((i, i), [(slice(a0, a1), slice(a0, a1))], pdist_block,
                                (*take_x(i, a0, a1), spec)))
                else:
                    out.append(((i, j), [(slice(a0, a1), slice(b0, b1)),
                                         (slice(b0, b1), slice(a0, a1))], cdist_block,
                                (*take_x(i, a0, a1), *take_x(j, b0, b1), spec)))
        return out
    for i, (a0, a1) in enumerate(xs):
        for j, (b0, b1) in enumerate(spans(ny, size)):
            out.append(((i, j), [(slice(a0, a1), slice(b0, b1))], cdist_block,
                        (*take_x(i, a0, a1), *take_y(j, b0, b1), spec)))
    return out


def out_dtype(spec: Spec, f32: bool) -> np.dtype:
    """float32 when every collection is float32 and the metric is tswarp's own (a Python
    callable's values are float64)."""
    return np.dtype(np.float32 if f32 and isinstance(spec.metric, str) else np.float64)
