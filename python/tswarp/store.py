"""Distance matrices larger than memory, written to disk block by block, with resume.

``tswarp.store.cdist(X, Y, out="D.zarr")`` computes the matrix one block of
``block_size`` x ``block_size`` series at a time (each block with every thread, or on the
GPU) and writes each block to ``out`` as soon as it is done: a ``.npy`` file (through a
memory map) or a zarr array whose chunks are the blocks. With ``resume=True`` a rerun of
the same job skips the blocks already on disk, so an interrupted job (Ctrl-C, a crash, a
killed machine) loses only the block in flight::

    >>> import numpy as np, tswarp.store, tempfile, os
    >>> X = np.random.default_rng(0).normal(size=(50, 40))
    >>> path = os.path.join(tempfile.mkdtemp(), "D.npy")
    >>> D = tswarp.store.pdist(X, out=path, block_size=16)
    >>> bool(np.allclose(D, tswarp.pdist(X)))
    True

The same jobs run on a Dask cluster through :mod:`tswarp.dask` (``out=`` and ``resume=``
there write the same stores: a job started on a cluster can be finished here and the
other way round). Nothing here needs Dask; zarr stores need the ``zarr`` package.

A store is refused for another job: the function, metric, parameters, shapes, dtype,
block size and a hash of the inputs are kept beside it in ``<out>.blocks/`` (with one
empty file per finished block) and must match for ``resume=True``; ``resume=False``
(the default) replaces whatever is at ``out``.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from . import _blocks
from ._progress import make_progress

__all__ = ["cdist", "pdist", "paired", "knn", "open"]

_open = open


def _run(function: str, X: Any, Y: Any, out: Any, metric: Any, block_size: Any,
         resume: Any, device: Any, n_jobs: Any, progress: Any, layout: Any, tx: Any, ty: Any,
         params: dict) -> Any:
    from ._conventions import check_bool
    resume = check_bool(resume, "resume")
    size = _blocks.check_block_size(block_size)
    if function == "cdist" and Y is None:  # X against itself: each block pair once
        function = "pdist"
    if out is None:
        raise ValueError("out: a file name is needed (a .npy file or a zarr store)")
    spec = _blocks.Spec(metric, params, device, n_jobs)
    cx = _blocks.Coll(X, "X", layout, tx, "tx")
    cy = None if Y is None else _blocks.Coll(Y, "Y", layout, ty, "ty")
    if function == "paired" and len(cx) != len(cy):  # type: ignore[arg-type]
        raise ValueError(f"X and Y must hold as many series for paired, got {len(cx)} and "
                         f"{len(cy)}")  # type: ignore[arg-type]
    f32 = cx.f32 and (cy is None or cy.f32)
    cx.cast(f32)
    if cy is not None:
        cy.cast(f32)
    store = store_for(function, out, len(cx), None if cy is None else len(cy), size, spec, f32)
    job = _blocks.fingerprint(function, spec, _blocks.inputs_hash([cx, cy]), size)
    store.open(job, resume)
    other = cy if cy is not None else cx
    blocks = _blocks.plan(function, len(cx), len(other), size, spec,
                          lambda i, a, b: cx.take(a, b), lambda i, a, b: other.take(a, b))
    return _execute(store, blocks, f"tswarp.store.{function}", progress,
                    lambda b: _blocks.write_block(store, b[0], b[1], b[2], *b[3]))


def _execute(store: "_blocks.Store", blocks: list, desc: str, progress: Any, write: Any) -> Any:
    """Write the blocks the store does not hold yet, one after another, with a progress bar
    counted in blocks; the stored result."""
    todo = [b for b in blocks if not store.done(b[0])]
    bar = make_progress(progress, desc, unit="blocks")
    try:
        done = len(blocks) - len(todo)
        if bar is not None:
            bar(done, len(blocks))
        for b in todo:
            write(b)
            done += 1
            if bar is not None:
                bar(done, len(blocks))
    finally:
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return store.read()


def store_for(function: str, out: Any, nx: int, ny: Optional[int], size: int,
              spec: "_blocks.Spec", f32: bool) -> "_blocks.Store":
    dtype = _blocks.out_dtype(spec, f32)
    if function == "paired":
        return _blocks.Store(out, (nx,), dtype, (size,))
    return _blocks.Store(out, (nx, nx if ny is None else ny), dtype, (size, size))


def cdist(X: Any, Y: Any = None, *, out: Any, metric: Any = "dtw", block_size: int = 1024,
          resume: bool = False, device: Any = "auto", n_jobs: Optional[int] = None,
          progress: Any = False, layout: Any = None, tx: Any = None, ty: Any = None,
          **params: Any) -> Any:
    """:func:`tswarp.cdist` into a file, block by block.

    Parameters
    ----------
    X, Y, metric, device, n_jobs, layout, tx, ty, **params
        As in :func:`tswarp.cdist` (Y None: X against itself, every block computed).
    out : str or path
        ``*.npy``: a NumPy file (memory-mapped while written); any other name (``*.zarr``):
        a zarr array chunked by blocks, unwritten chunks NaN.
    block_size : int, default 1024
        Series per block side; a block's work is block_size² pairs.
    resume : bool, default False
        Keep the blocks a previous run of this same job finished; False starts afresh.
    progress : bool or callable(done, total), counted in blocks.

    Returns
    -------
    The stored matrix, read-only: a ``numpy.memmap`` or a ``zarr.Array``.
    """
    return _run("cdist", X, Y, out, metric, block_size, resume, device, n_jobs, progress,
                layout, tx, ty, params)


def pdist(X: Any, *, out: Any, metric: Any = "dtw", block_size: int = 1024,
          resume: bool = False, device: Any = "auto", n_jobs: Optional[int] = None,
          progress: Any = False, layout: Any = None, tx: Any = None, **params: Any) -> Any:
    """:func:`tswarp.pdist` (the square form) into a file: each block of the upper triangle
    is computed once and written with its mirror. Arguments as in :func:`cdist`."""
    return _run("pdist", X, None, out, metric, block_size, resume, device, n_jobs, progress,
                layout, tx, None, params)


def paired(X: Any, Y: Any, *, out: Any, metric: Any = "dtw", block_size: int = 1024,
           resume: bool = False, device: Any = "auto", n_jobs: Optional[int] = None,
           progress: Any = False, layout: Any = None, tx: Any = None, ty: Any = None,
           **params: Any) -> Any:
    """:func:`tswarp.paired` into a file, ``block_size`` pairs at a time. Arguments as in
    :func:`cdist`."""
    return _run("paired", X, Y, out, metric, block_size, resume, device, n_jobs, progress,
                layout, tx, ty, params)


def knn(Q: Any, X: Any, k: int = 1, *, out: Any, metric: Any = "dtw", block_size: int = 1024,
        resume: bool = False, device: Any = "auto", n_jobs: Optional[int] = None,
        progress: Any = False, layout: Any = None, tx: Any = None, ty: Any = None,
        **params: Any) -> Any:
    """:func:`tswarp.knn` into a zarr group, ``block_size`` queries at a time.

    ``out`` (a ``.zarr`` name) receives two arrays (len(Q), k): ``distances`` and
    ``indices``, written block of queries by block; ``resume=True`` keeps the blocks a
    previous run of the same job finished. The other arguments as in :func:`tswarp.knn`
    and :func:`cdist` (``tx``: the queries' TWED timestamps, ``ty``: X's).

    Returns
    -------
    (distances, indices) : the stored zarr arrays, read-only.
    """
    from ._conventions import check_bool
    resume = check_bool(resume, "resume")
    size = _blocks.check_block_size(block_size)
    if out is None:
        raise ValueError("out: a .zarr name is needed")
    spec = _blocks.Spec(metric, params, device, n_jobs)
    cq = _blocks.Coll(Q, "Q", layout, tx, "tx")
    cx = _blocks.Coll(X, "X", layout, ty, "ty")
    k = _blocks.check_k(k, len(cx))
    f32 = cq.f32 and cx.f32
    cq.cast(f32)
    cx.cast(f32)
    store = _blocks.KnnStore(out, len(cq), k, _blocks.out_dtype(spec, f32), size)
    store.open(_blocks.fingerprint("knn", spec, _blocks.inputs_hash([cq, cx]), size,
                                   {"k": k}), resume)
    blocks = [((i,), [(slice(a, b), slice(None))]) for i, (a, b) in
              enumerate(_blocks.spans(len(cq), size))]
    return _execute(store, blocks, "tswarp.store.knn", progress,
                    lambda blk: store.write(blk[0], blk[1], _blocks.knn_rows(
                        *cq.take(blk[1][0][0].start, blk[1][0][0].stop), cx, k, spec)))


def open(out: Any) -> Any:  # noqa: A001 - the store's own verb
    """A store written by this module or :mod:`tswarp.dask`, read-only, and whether every
    block is done: ``(array, complete)`` (a knn store's array is the pair (distances,
    indices))."""
    import json
    import os
    path = os.path.abspath(os.fspath(out))
    try:
        with _open(os.path.join(path + ".blocks", "job.json"), encoding="utf-8") as f:
            job = json.load(f)
    except (OSError, ValueError):
        raise ValueError(f"out: {path!r} is not a tswarp store (no {path}.blocks/job.json)") \
            from None
    size = job["chunks"][0]
    n = job["shape"][0]
    nb = -(-n // size)
    store: _blocks.Store
    if job["function"] == "knn":
        store = _blocks.KnnStore(path, n, job["shape"][1], job["dtype"], size)
    else:
        store = _blocks.Store(path, job["shape"], job["dtype"], job["chunks"])
    keys: List[Tuple[int, ...]]
    if job["function"] in ("paired", "knn"):
        keys = [(i,) for i in range(nb)]
    elif job["function"] == "pdist":
        keys = [(i, j) for i in range(nb) for j in range(i, nb)]
    else:
        mb = -(-job["shape"][1] // size)
        keys = [(i, j) for i in range(nb) for j in range(mb)]
    return store.read(), all(store.done(k) for k in keys)
