"""The ``tswarp`` command line: distance, matrix, align, knn, shapelets, dataset and info.

Exit codes: 0 success, 2 bad input (unreadable or unparsable file, invalid option, measure error,
no CUDA device for --device cuda), 1 out of memory (host or GPU) or a CUDA runtime error, 130
interrupted (Ctrl-C). User errors print ``tswarp: error: ...`` on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
import time
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

import tswarp

from . import io as tsio
from ._conventions import as_collection, check_layout
from .datasets import load_gunpoint

__all__ = ["main", "build_parser", "knn_predict", "count_cells"]

# Which keyword arguments each measure accepts (besides ``device``), in the order of its
# signature. The CLI passes a measure only the options the user set that apply to it.
MEASURE_OPTIONS: Dict[str, Sequence[str]] = {
    "dtw": ("cost", "window", "radius", "itakura_max_slope", "accumulated"),
    "twed": ("nu", "lmbda", "p", "window", "radius", "itakura_max_slope"),
    "soft_dtw": ("gamma", "normalize", "window", "radius", "itakura_max_slope"),
    "wdtw": ("g", "window", "radius", "itakura_max_slope"),
    "ddtw": ("cost", "window", "radius", "itakura_max_slope", "accumulated"),
    "wddtw": ("g", "window", "radius", "itakura_max_slope"),
    "adtw": ("warp_penalty", "window", "radius", "itakura_max_slope"),
    "erp": ("g", "window", "radius", "itakura_max_slope"),
    "edr": ("epsilon", "window", "radius", "itakura_max_slope"),
    "lcss": ("epsilon", "window", "radius", "itakura_max_slope"),
    "msm": ("c", "dependent", "window", "radius", "itakura_max_slope"),
    "shape_dtw": ("reach", "descriptor", "paa_segments", "window", "radius",
                  "itakura_max_slope"),
}
_OPTION_FLAGS = {
    "cost": "--cost", "window": "--window", "radius": "--radius",
    "itakura_max_slope": "--itakura-max-slope",
    "accumulated": "--accumulated", "nu": "--nu", "lmbda": "--lmbda", "p": "--p",
    "gamma": "--gamma", "normalize": "--normalize", "g": "--g",
    "warp_penalty": "--warp-penalty", "epsilon": "--epsilon", "c": "--c",
    "dependent": "--dependent", "reach": "--reach", "descriptor": "--descriptor",
    "paa_segments": "--paa-segments",
}
COSTS = ("sqeuclidean", "euclidean", "abs", "cosine")


class UsageError(Exception):
    """A mistake in the command line or the inputs; main() prints it and exits with 2."""


# ---- helpers shared by the subcommands -------------------------------------------------------


def _window(text: str) -> float:
    """``--window``: a fraction of the shorter length in [0, 1] (aeon's window), whatever
    its spelling (1 and 1.0 are both the full band)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a fraction of the length in [0, 1] (0.1), got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"{text} is not a fraction in [0, 1]; for a radius in cells use --radius {text}")
    return value


def _radius(text: str) -> int:
    """``--radius``: a Sakoe-Chiba radius in cells, an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of cells (10), got {text!r}; for a fraction of the "
            f"length use --window") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _int_at_least(minimum: int, what: str):
    """argparse type: an integer >= minimum, described as ``what`` in the error."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value
    return parse


def _device(text: str):
    """``--device``: auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,... (several GPUs share
    the batch work; checked here, availability by tswarp)."""
    if not re.fullmatch(r"auto|cpu|cuda(:([0-9]+(,[0-9]+)*|all))?", text):
        raise argparse.ArgumentTypeError(
            f"expected auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,..., got {text!r}")
    if "," in text:
        return [f"cuda:{i}" for i in text[5:].split(",")]
    return text


_positive_int = _int_at_least(1, "a positive integer")
_nonneg_int = _int_at_least(0, "a non-negative integer")


def _measure_params(args, metric: str, strict: bool) -> dict:
    """Keyword arguments for ``metric`` from the options the user set.

    ``strict``: an option that the measure does not take is an error (a single ``--metric``);
    otherwise (``--metric all``) each measure just gets the options that apply to it.
    """
    params: Dict[str, Any] = {}
    for name, flag in _OPTION_FLAGS.items():
        value = getattr(args, name)
        if value is None or value is False:
            continue
        if name in MEASURE_OPTIONS[metric]:
            if name == "dependent":
                params["independent"] = False
            else:
                params[name] = value
        elif strict:
            takers = [m for m, opts in MEASURE_OPTIONS.items() if name in opts]
            raise UsageError(f"{flag} does not apply to --metric {metric} "
                             f"(it applies to {', '.join(takers)})")
    params["device"] = args.device
    params["layout"] = "channels_last"  # _read gave the series in tswarp's layout
    return params


def _lengths(series) -> np.ndarray:
    if isinstance(series, np.ndarray):
        return np.full(series.shape[0], series.shape[1], dtype=np.int64)
    return np.array([len(s) for s in series], dtype=np.int64)


def _dims(series) -> int:
    if isinstance(series, np.ndarray):
        return 1 if series.ndim == 2 else series.shape[2]
    first = series[0]
    return 1 if first.ndim == 1 else first.shape[1]


def _pair_cells(n: int, m: int, kind: int, value: float) -> int:
    """Cells of the (n, m) grid a window admits (include/tswarp.h's definitions)."""
    if kind == 0:
        return n * m
    if kind in (1, 2):
        r = int(value) if kind == 1 else int(np.floor(value * min(n, m)))
        lo, hi = -r - max(0, n - m), r + max(0, m - n)  # -lo <= j - i <= hi
        k = np.arange(max(lo, -(n - 1)), min(hi, m - 1) + 1, dtype=np.int64)
        # diagonal j - i = k holds min(n, m - k) - max(0, -k) cells
        return int(np.maximum(np.minimum(n, m - k) - np.maximum(0, -k), 0).sum())
    from .plot import _admissible
    return int(_admissible(n, m, None, None, value).sum())


def count_cells(len_x: np.ndarray, len_y: Optional[np.ndarray] = None, window=None,
                radius=None, itakura_max_slope=None) -> int:
    """DP cells of a cdist (over all pairs) or, with one collection, of a pdist, where each
    pair i < j is computed once: the full grid n m of each pair, or with a window the cells
    it admits (what the kernels compute, the basis of cells-per-second figures)."""
    from ._conventions import band
    kind, value = band(window, radius, itakura_max_slope)
    len_x = np.asarray(len_x, dtype=np.int64)
    if kind == 0:
        sx = int(np.sum(len_x, dtype=np.int64))
        if len_y is not None:
            return sx * int(np.sum(np.asarray(len_y), dtype=np.int64))
        return (sx * sx - int(np.sum(len_x ** 2))) // 2
    ux, cx = np.unique(len_x, return_counts=True)
    if len_y is not None:
        uy, cy = np.unique(np.asarray(len_y, dtype=np.int64), return_counts=True)
        return sum(int(a) * int(b) * _pair_cells(int(n), int(m), kind, value)
                   for n, a in zip(ux, cx) for m, b in zip(uy, cy))
    total = 0
    for i, (n, a) in enumerate(zip(ux, cx)):  # pairs i < j: unordered pairs of lengths
        total += int(a) * (int(a) - 1) // 2 * _pair_cells(int(n), int(n), kind, value)
        for m, b in zip(ux[i + 1:], cx[i + 1:]):
            total += int(a) * int(b) * _pair_cells(int(n), int(m), kind, value)
    return total


def _describe(series) -> str:
    lengths = _lengths(series)
    lo, hi = int(lengths.min()), int(lengths.max())
    length = f"length {lo}" if lo == hi else f"lengths {lo}..{hi}"
    d = _dims(series)
    return f"{len(lengths)} series, {length}, {d} dim{'s' if d > 1 else ''}"


def _check_finite(X, role: str, path: str) -> None:
    """NaN or infinity in a file is named with the file, series and point (the library would
    say 'X[3] contains NaN' without the file)."""
    if isinstance(X, np.ndarray) and np.isfinite(X).all():
        return  # one pass for an array; the loop below only finds the first bad point
    for i, x in enumerate(X):
        bad = ~np.isfinite(np.asarray(x))
        if bad.any():
            j = int(np.argwhere(bad)[0][0])
            raise UsageError(f"{role} {path!r}: series {i} holds NaN or infinity at point {j} "
                             "(tswarp's measures need finite values)")


def _read(args, path: str, role: str):
    """The series of a file in tswarp's layout, and its labels (or None). A 3-D .npy is read
    with --layout (None: tswarp's (n, len, d), ambiguous shapes refused); the text formats
    say what they hold."""
    try:
        X, y = tsio.read_series(path, labels_first=args.labels_first)
        if isinstance(X, np.ndarray) and X.ndim == 3:
            X = np.ascontiguousarray(as_collection(X, role, check_layout(args.layout)))
        _check_finite(X, role, path)
        return X, y
    except FileNotFoundError:
        raise UsageError(f"{role} {path!r}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{role} {path!r} is a directory, not a file") from None
    except ValueError as e:
        # read_series names the argument 'path'; here the user knows it as TRAIN, X, ...
        msg = str(e)
        if "layout=" in msg:  # the layout check: the option is --layout here
            msg = (f"{role} {path!r}: " + msg.replace("pass layout='channels_first'",
                                                      "pass --layout channels_first")
                   .replace("pass layout='channels_last'", "pass --layout channels_last"))
        raise UsageError(msg.replace("path: ", f"{role}: ", 1) if msg.startswith("path: ") else msg) from None


def _pick(series, index: Optional[int], path: str, flag: str) -> np.ndarray:
    n = len(series)
    if index is None:
        if n != 1:
            raise UsageError(f"{path} holds {n} series; pick one with {flag} I (0-based)")
        index = 0
    if index >= n:
        raise UsageError(f"{flag} {index} is out of range: {path} holds {n} series (0..{n - 1})")
    return np.asarray(series[index])


def _rate(cells: int, seconds: float) -> float:
    return cells / seconds / 1e9 if seconds > 0 else float("inf")


# ---- subcommands -------------------------------------------------------------------------


def cmd_distance(args) -> int:
    params = _measure_params(args, args.metric, strict=True)
    row_a = args.row_a if args.row_a is not None else args.row
    row_b = args.row_b if args.row_b is not None else args.row
    A, _ = _read(args, args.a, "A")
    B, _ = _read(args, args.b, "B")
    a = _pick(A, row_a, args.a, "--row-a" if args.row is None else "--row")
    b = _pick(B, row_b, args.b, "--row-b" if args.row is None else "--row")
    value = tswarp.distance(a, b, metric=args.metric, **params)
    print(repr(float(value)))
    return 0


def _blocked(args) -> bool:
    """Whether tswarp matrix runs block by block (tswarp.store, or tswarp.dask with
    --scheduler)."""
    return bool(args.resume or args.scheduler or args.block_size is not None or
                (args.out is not None and args.out.lower().endswith(".zarr")))


def cmd_matrix(args) -> int:
    params = _measure_params(args, args.metric, strict=True)
    if args.condensed and args.y is not None:
        raise UsageError("--condensed applies to one collection (pdist), not to X against Y")
    blocked = _blocked(args)
    if blocked:
        if args.condensed:
            raise UsageError("--condensed: the block-by-block matrix (--resume, --block-size, "
                             "--scheduler, a .zarr --out) is the square form")
        if args.out is None and not args.scheduler:
            raise UsageError("--resume and --block-size write block by block: give --out "
                             "(a .npy file or a .zarr store)")
        _check_out_path("--out", args.out, (".npy", ".zarr"),
                        "a .npy file or a .zarr store (block by block)")
    else:
        _check_out_path("--out", args.out, tuple(tsio.MATRIX_EXTENSIONS),
                        "a .npy, .csv or .zarr file name")
    X, _ = _read(args, args.x, "X")
    Y = None
    if args.y is not None:
        Y, _ = _read(args, args.y, "Y")

    start = time.perf_counter()
    if blocked:
        D, engine = _matrix_blocks(args, X, Y, params)
    elif Y is None:
        D = tswarp.pdist(X, metric=args.metric, condensed=args.condensed, n_jobs=args.jobs,
                         progress=args.progress, **params)
    else:
        D = tswarp.cdist(X, Y, metric=args.metric, n_jobs=args.jobs, progress=args.progress, **params)
    if Y is None:
        cells = count_cells(_lengths(X))
        what = f"pdist {args.metric}: X {_describe(X)}"
    else:
        cells = count_cells(_lengths(X), _lengths(Y))
        what = f"cdist {args.metric}: X {_describe(X)}; Y {_describe(Y)}"
    if blocked:
        what += f"; {engine}"
    seconds = time.perf_counter() - start

    shape = f"condensed {D.shape[0]}" if D.ndim == 1 else f"{D.shape[0]} x {D.shape[1]}"
    summary = (f"{what}\nmatrix {shape} {D.dtype}, {seconds:.3f} s, {cells:,} cells, "
               f"{_rate(cells, seconds):.3f} Gcells/s")
    if blocked and args.out is not None:
        print(f"{summary}\nwrote {args.out}")
    elif args.out is not None:
        tsio.write_matrix(args.out, D)
        print(f"{summary}\nwrote {args.out}")
    else:
        # No --out: the matrix goes to stdout as csv (pipeable), the summary to stderr.
        sys.stdout.writelines(tsio.csv_lines(np.asarray(D)))
        print(summary, file=sys.stderr)
    return 0


def _matrix_blocks(args, X, Y, params):
    """The matrix block by block: on a Dask scheduler (--scheduler), else in this process
    (tswarp.store); --out with --resume keeps the blocks a previous run finished."""
    size = args.block_size if args.block_size is not None else 1024
    kw = dict(params, metric=args.metric, block_size=size, n_jobs=args.jobs)
    if args.scheduler:
        try:
            import tswarp.dask as tdask
        except ImportError as e:
            raise UsageError(f"--scheduler: {e}") from None
        kw.update(out=args.out, resume=args.resume, scheduler=args.scheduler)
        D = tdask.pdist(X, **kw) if Y is None else tdask.cdist(X, Y, **kw)
        if args.out is None:
            D = D.compute(scheduler=tdask._scheduler(args.scheduler))
        engine = f"blocks of {size} on the Dask scheduler {args.scheduler}"
    else:
        import tswarp.store as tstore
        kw.update(out=args.out, resume=args.resume, progress=args.progress)
        D = tstore.pdist(X, **kw) if Y is None else tstore.cdist(X, Y, **kw)
        engine = f"blocks of {size}" + (", resumed" if args.resume else "")
    return D, engine


def _path_csv_lines(path: np.ndarray):
    yield "i,j\n"
    for i, j in path.tolist():
        yield f"{i},{j}\n"


def _check_out_path(flag: str, path: Optional[str], exts: Sequence[str], what: str) -> None:
    """An output file name is checked before any work: its extension, and a folder that
    exists and can be written."""
    if path is None:
        return
    ext = os.path.splitext(path)[1].lower()
    if ext not in exts:
        raise UsageError(f"{flag} {path!r}: expected {what}")
    out_dir = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(out_dir):
        raise UsageError(f"{flag} {path!r}: directory {out_dir!r} does not exist")
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path!r}: directory {out_dir!r} is not writable")


def cmd_align(args) -> int:
    """Optimal warping path between two series (tswarp.dtw_path)."""
    _check_out_path("--out", args.out, (".csv", ".txt", ".npy"), "a .csv, .txt or .npy file name")
    _check_plot_path("--plot", args.plot)
    row_a = args.row_a if args.row_a is not None else args.row
    row_b = args.row_b if args.row_b is not None else args.row
    A, _ = _read(args, args.a, "A")
    B, _ = _read(args, args.b, "B")
    a = _pick(A, row_a, args.a, "--row-a" if args.row is None else "--row")
    b = _pick(B, row_b, args.b, "--row-b" if args.row is None else "--row")
    step = args.step or ("p05_query" if args.segmental else "symmetric1")
    kwargs = {"step": step, "method": args.method, "device": args.device, "n_jobs": args.jobs,
              "progress": args.progress, "layout": "channels_last",
              "accumulated": args.accumulated}
    for name in ("cost", "window", "radius", "itakura_max_slope", "memory_limit"):
        if getattr(args, name) is not None:
            kwargs[name] = getattr(args, name)
    if args.segmental and ({"window", "radius", "itakura_max_slope"} & set(kwargs)):
        raise UsageError("--segmental takes no --window, --radius or --itakura-max-slope")
    start = time.perf_counter()
    segs = None
    if args.segmental:  # the cost printed: the sum of the fragments' subsequence costs
        path, segs = tswarp.segmental_dtw(a, b, args.fragments, args.segmental,
                                          return_segments=True, **kwargs)
        cost = float(sum(sg.cost for sg in segs))
        step = f"{step} {args.segmental} segmental, {args.fragments} fragments,"
    else:
        path, cost = tswarp.dtw_path(a, b, **kwargs)
    seconds = time.perf_counter() - start
    cells = len(a) * len(b)
    cost_name = args.cost or "sqeuclidean"
    summary = (f"align {step} {cost_name}: a {len(a)} points, b {len(b)} points, "
               f"{a.shape[1] if a.ndim == 2 else 1} dims\npath {len(path)} cells, cost {cost!r}, "
               f"{seconds:.3f} s, {cells:,} cells, {_rate(cells, seconds):.3f} Gcells/s")
    if args.out is not None:
        if args.out.lower().endswith(".npy"):
            tsio.atomic_write(args.out, True, lambda f: np.save(f, path, allow_pickle=False))
        else:
            tsio.atomic_write(args.out, False, lambda f: f.writelines(_path_csv_lines(path)))
    if args.plot is not None:
        from . import plot
        row = lambda r: "" if r is None else f"[{r}]"  # noqa: E731
        title = (f"{os.path.basename(args.a)}{row(row_a)} / {os.path.basename(args.b)}"
                 f"{row(row_b)}: {step} steps, {cost_name} cost, cost {cost:.6g}")
        if segs is not None:
            fig = plot.segmental(a, b, path, segs, cost=cost_name, step=args.step or "p05_query",
                                 title=title, layout="channels_last")
        else:
            band = {k: getattr(args, k) for k in ("window", "radius", "itakura_max_slope")
                    if getattr(args, k) is not None}
            fig = plot.cost_matrix(a, b, path, cost=cost_name, step=args.step or "symmetric1",
                                   title=title, layout="channels_last", **band)
        _save_figure(fig, args.plot)
    if args.out is None:
        # No --out: the path goes to stdout as csv (pipeable), the summary to stderr.
        sys.stdout.writelines(_path_csv_lines(path))
        print(summary, file=sys.stderr)
    else:
        print(f"{summary}\nwrote {args.out}" + (f" and {args.plot}" if args.plot else ""))
    return 0


def knn_predict(D: np.ndarray, y_train: np.ndarray, k: int = 1) -> np.ndarray:
    """k-NN labels from a (n_test, n_train) distance matrix.

    Majority vote among the k nearest; a tie between classes goes to the tied class of the
    nearest neighbour; equal distances keep training order (the first index wins), as
    ``np.argmin`` does for k = 1.
    """
    D = np.asarray(D)
    y_train = np.asarray(y_train)
    if D.ndim != 2 or D.shape[1] != len(y_train):
        raise ValueError(f"D: expected shape (n_test, {len(y_train)}), got {D.shape}")
    k = min(k, D.shape[1])
    if k == 1:
        return y_train[np.argmin(D, axis=1)]
    nearest = np.argsort(D, axis=1, kind="stable")[:, :k]
    out = []
    for row in nearest:
        labels = y_train[row].tolist()
        votes = Counter(labels)
        best = max(votes.values())
        out.append(next(lab for lab in labels if votes[lab] == best))
    return np.array(out, dtype=y_train.dtype)


def knn_vote(nearest: np.ndarray, y_train: np.ndarray) -> np.ndarray:
    """Labels from the (n_test, k) indices of the nearest training series, nearest first:
    knn_predict's vote (majority; a tie goes to the tied class of the nearest)."""
    y_train = np.asarray(y_train)
    out = []
    for row in np.asarray(nearest):
        labels = y_train[row].tolist()
        votes = Counter(labels)
        best = max(votes.values())
        out.append(next(lab for lab in labels if votes[lab] == best))
    return np.array(out, dtype=y_train.dtype)


def _accuracy(pred, y_test) -> float:
    """Fraction of equal labels. Readers give int64 labels when every label of a file is an
    integer and str otherwise, so TRAIN and TEST may differ in kind: then compare as text."""
    pred, y_test = np.asarray(pred), np.asarray(y_test)
    if pred.dtype.kind != y_test.dtype.kind:
        pred, y_test = pred.astype(str), y_test.astype(str)
    return float(np.mean(pred == y_test))


def _knn_dask(args, X_test, X_train, metric, params):
    """tswarp.dask.knn on the scheduler given by --scheduler: the indices of the k nearest."""
    try:
        import tswarp.dask as tdask
    except ImportError as e:
        raise UsageError(f"--scheduler: {e}") from None
    size = args.block_size if args.block_size is not None else 1024
    D, I = tdask.knn(X_test, X_train, args.k, metric=metric, block_size=size, n_jobs=args.jobs,
                     **params)
    _, nearest = tdask._compute(args.scheduler, D, I)
    return nearest


def _knn_store(args, X_test, X_train, metric, params):
    """The neighbours written to --out (a zarr group, block of TEST series by block; with
    --resume the blocks an interrupted run wrote are kept), on --scheduler when given."""
    size = args.block_size if args.block_size is not None else 1024
    kw = dict(params, metric=metric, block_size=size, n_jobs=args.jobs, out=args.out,
              resume=args.resume)
    if args.scheduler:
        try:
            import tswarp.dask as tdask
        except ImportError as e:
            raise UsageError(f"--scheduler: {e}") from None
        _, I = tdask.knn(X_test, X_train, args.k, scheduler=args.scheduler, **kw)
    else:
        import tswarp.store as tstore
        _, I = tstore.knn(X_test, X_train, args.k, progress=args.progress, **kw)
    return np.asarray(I[:])


def cmd_knn(args) -> int:
    if (args.train is None) != (args.test is None):
        raise UsageError("give both TRAIN and TEST, or neither to use the shipped GunPoint")
    if args.train is None:
        X_train, y_train = load_gunpoint("train")
        X_test, y_test = load_gunpoint("test")
        name = "GunPoint (shipped)"
    else:
        X_train, y_train = _labelled(args, args.train, "TRAIN")
        X_test, y_test = _labelled(args, args.test, "TEST")
        name = f"{args.train} / {args.test}"
    if args.k > len(y_train):
        raise UsageError(f"-k {args.k} is more than the {len(y_train)} TRAIN series")
    if args.out is not None:
        if args.metric == "all":
            raise UsageError("--out holds the neighbours of one measure: give --metric")
        _check_out_path("--out", args.out, (".zarr",), "a .zarr store (distances and indices)")
    elif args.resume:
        raise UsageError("--resume keeps the blocks of an --out store: give --out")
    metrics = list(tswarp.METRICS) if args.metric == "all" else [args.metric]
    params = {m: _measure_params(args, m, strict=args.metric != "all") for m in metrics}
    # Fail before the table starts: one tiny pair per measure surfaces a bad parameter, a
    # dimension mismatch between TRAIN and TEST or an unavailable device.
    probe_a, probe_b = np.asarray(X_test[0])[:3], np.asarray(X_train[0])[:3]
    for metric in metrics:
        tswarp.distance(probe_a, probe_b, metric=metric, **params[metric])

    band = {k: getattr(args, k) for k in ("window", "radius", "itakura_max_slope")
            if getattr(args, k) is not None}
    cells = count_cells(_lengths(X_test), _lengths(X_train), **band)
    n_classes = len(set(np.asarray(y_train).tolist()))
    threads = args.jobs if args.jobs is not None else tswarp.info().get("threads")
    print(f"{name}: train {_describe(X_train)}; test {_describe(X_test)}; {n_classes} classes")
    plural = "" if threads == 1 else "s"
    within = " (in the window)" if band else ""
    print(f"{args.k}-NN, {cells:,} cells per measure{within}, {threads} thread{plural}, "
          f"device {args.device}")
    print(f"{'measure':<10} {'accuracy':>9} {'error rate':>11} {'time s':>9} {'Gcells/s':>9}")
    for metric in metrics:
        start = time.perf_counter()
        # tswarp.knn: the top k without the matrix (DTW prunes with its lower bounds)
        if args.out is not None:
            nearest = _knn_store(args, X_test, X_train, metric, params[metric])
        elif args.scheduler:
            nearest = _knn_dask(args, X_test, X_train, metric, params[metric])
        else:
            _, nearest = tswarp.knn(X_test, X_train, args.k, metric=metric, n_jobs=args.jobs,
                                    progress=args.progress, **params[metric])
        seconds = time.perf_counter() - start
        pred = knn_vote(nearest, y_train)
        accuracy = _accuracy(pred, y_test)
        print(f"{metric:<10} {accuracy:>9.4f} {1 - accuracy:>11.4f} {seconds:>9.3f} "
              f"{_rate(cells, seconds):>9.3f}", flush=True)
    return 0


_PLOT_EXTENSIONS = (".png", ".pdf", ".svg", ".jpg", ".jpeg")


def _check_plot_path(flag: str, path: Optional[str]) -> None:
    """--plot is checked before any work: its folder exists, its format is one matplotlib
    writes, and matplotlib is installed."""
    if path is None:
        return
    ext = os.path.splitext(path)[1].lower()
    if ext not in _PLOT_EXTENSIONS:
        raise UsageError(f"{flag} {path!r}: expected an image file name ending in "
                         f"{', '.join(_PLOT_EXTENSIONS)}")
    out_dir = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(out_dir):
        raise UsageError(f"{flag} {path!r}: directory {out_dir!r} does not exist")
    _headless_matplotlib(flag)


def _headless_matplotlib(feature: str) -> None:
    """matplotlib with a backend that needs no display, or a UsageError naming the extra."""
    from ._optional import MissingDependency, require
    try:
        require("matplotlib", feature).use("Agg")
    except MissingDependency as e:
        raise UsageError(str(e)) from None


def _read_labels(path: str, role: str, count: int) -> np.ndarray:
    """--labels: a 1-D .npy array, or a text file of one label a line (ints when every one
    is an integer, else str), with one label per series of the collection."""
    try:
        if path.lower().endswith(".npy"):
            y = np.load(path, allow_pickle=False)
            if y.ndim != 1 or y.dtype.kind not in "biufU":
                raise ValueError(f"expected a 1-D array of numbers or strings, got {y.dtype} "
                                 f"of shape {y.shape}")
        else:
            with open(path, encoding="utf-8") as f:
                y = tsio._labels_array([line.strip() for line in f if line.strip()])
    except FileNotFoundError:
        raise UsageError(f"--labels {path!r}: no such file") from None
    except ValueError as e:
        raise UsageError(f"--labels {path!r}: {e}") from None
    if len(y) != count:
        raise UsageError(f"--labels {path!r} holds {len(y)} labels but {role} holds {count} "
                         "series")
    return y


def _labelled(args, path: str, role: str):
    X, y = _read(args, path, role)
    given = getattr(args, "labels", None)
    if given:
        file = given[0] if role == "TRAIN" else given[1]
        if y is not None:
            raise UsageError(f"{role} {path!r} has labels of its own; --labels is for files "
                             "without (.npy)")
        y = _read_labels(file, role, len(X))
    if y is None:
        raise UsageError(f"{role} {path!r} has no labels (use .ts or UCR .tsv, or "
                         "--labels-first for .csv/.txt, or --labels for .npy)")
    return X, y


def cmd_shapelets(args) -> int:
    """A shapelet tree, or the shapelet transform with a ridge classifier, fitted on TRAIN
    and scored on TEST."""
    from ._optional import MissingDependency
    _check_plot_path("--plot", args.plot)
    try:
        from . import shapelets as shp  # imports scikit-learn: only here
    except MissingDependency as e:
        raise UsageError(str(e).replace("tswarp.shapelets", "tswarp shapelets")) from None
    X_train, y_train = _labelled(args, args.train, "TRAIN")
    X_test, y_test = _labelled(args, args.test, "TEST")
    if _dims(X_train) != _dims(X_test):
        raise UsageError(f"TRAIN has {_dims(X_train)} channel(s) but TEST has {_dims(X_test)}")
    multivariate = _dims(X_train) > 1
    if args.model == "tree" and multivariate:
        raise UsageError("the shapelet tree takes univariate series; for multivariate ones "
                         "use --model transform")
    norm = {"z": True, "raw": False, "both": "both"}[args.normalize]
    common = dict(min_length=args.min_length, max_length=args.max_length,
                  length_step=args.length_step, device=args.device, n_jobs=args.jobs,
                  progress=args.progress, layout="channels_last")
    if args.model == "tree":
        if norm == "both":
            raise UsageError("--normalize both applies to --model transform")
        flat = lambda X: [np.asarray(s, dtype=np.float64).reshape(-1) for s in X]  # noqa: E731
        X_train, X_test = flat(X_train), flat(X_test)
        clf = shp.ShapeletTreeClassifier(logical=args.logical, max_depth=args.max_depth,
                                         normalize=norm, **common)
        model = clf
    else:
        from sklearn.linear_model import RidgeClassifierCV
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        if args.logical or args.max_depth is not None:
            raise UsageError("--logical and --max-depth apply to --model tree")
        model = shp.ShapeletTransform(
            n_shapelets=args.n_shapelets if args.n_shapelets is not None else "auto",
            dilation=tuple(args.dilation) if args.dilation else 1,
            one_vs_rest=args.one_vs_rest, normalize=norm, features=tuple(args.features),
            **common)
        clf = make_pipeline(model, StandardScaler(),
                            RidgeClassifierCV(alphas=np.logspace(-3, 3, 10)))
    print(f"{args.train} / {args.test}: train {_describe(X_train)}; test {_describe(X_test)}; "
          f"{args.model}")
    start = time.perf_counter()
    clf.fit(X_train, y_train)
    fit_s = time.perf_counter() - start
    if args.model == "tree":
        print(clf.export_text())
        what = f"{len(clf.shapelets_)} rules"
    else:
        shown = model.shapelets_[:10]
        print(f"{model.n_shapelets_} shapelets kept, features {', '.join(model.features_)}; "
              f"the {len(shown)} best:")
        for s in shown:
            span = (s.length - 1) * s.dilation + 1
            step = f":{s.dilation}" if s.dilation > 1 else ""
            ch = f" channel {s.channel}" if multivariate else ""
            kind = "" if s.normalized else " raw"
            print(f"  X[{s.series}][{s.start}:{s.start + span}{step}]{ch}{kind}  gain "
                  f"{s.gain:.4f}  gap {s.gap:.4f}  threshold {s.threshold:.6g}")
        what = f"{model.n_shapelets_} shapelets"
    start = time.perf_counter()
    pred = clf.predict(X_test)
    predict_s = time.perf_counter() - start
    accuracy = _accuracy(pred, y_test)
    print(f"accuracy {accuracy:.4f}  error rate {1 - accuracy:.4f}  fit {fit_s:.3f} s  "
          f"predict {predict_s:.3f} s  ({what})")
    if args.plot:
        if not model.shapelets_:
            raise UsageError("--plot: the tree is a single leaf, it has no shapelets")
        from .plot import shapelet as plot_shapelet
        fig = plot_shapelet(model, X_test, index=0, layout="channels_last",
                            title=f"{os.path.basename(args.train)}: shapelets on "
                                  f"{os.path.basename(args.test)}[0] (class "
                                  f"{_label_text(y_test[0])})")
        _save_figure(fig, args.plot)
        print(f"wrote {args.plot}")
    return 0


def _label_text(v) -> str:
    return str(v.item() if isinstance(v, np.generic) else v)


def _save_figure(fig, path: str) -> None:
    """Write a figure through a temporary file in the target's folder, renamed into place
    (a full disk or Ctrl-C never leaves a truncated image)."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    tsio.atomic_write(path, True, lambda f: fig.savefig(f, format=ext, dpi=110))


def cmd_dataset(args) -> int:
    """A problem of the UCR/UEA archives into a folder (the shipped GunPoint, a local
    archive, the cache, or a download), with a summary of its splits."""
    import shutil
    from . import datasets
    out = args.dir
    if not os.path.isdir(out):
        raise UsageError(f"--dir {out!r}: no such directory")
    for split in ("train", "test"):
        src = datasets.dataset_path(args.name, split, data_home=args.data_home,
                                    download=not args.no_download, progress=args.progress)
        dst = os.path.join(out, src.name)
        if os.path.abspath(dst) != os.path.abspath(src):
            tsio.atomic_write(dst, True, lambda f: f.write(src.read_bytes()))
        X, y = tsio.read_series(dst)
        classes = len(set(np.asarray(y).tolist())) if y is not None else 0
        print(f"{dst}: {_describe(X)}, {classes} classes")
    return 0


def _version(v: int) -> str:
    """CUDA's 13000 -> '13.0'."""
    return f"{v // 1000}.{v % 1000 // 10}" if v else "unknown"


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def cmd_info(args) -> int:
    info = tswarp.info()
    gpus = info.get("gpus") or []
    rows = [
        ("version", info.get("version", tswarp.__version__)),
        ("SIMD", info.get("simd")),
        ("threads", info.get("threads")),
        ("CUDA backend", "compiled in" if info.get("cuda_built") else "not compiled in"),
    ]
    if info.get("cuda_built"):
        rows += [
            ("CUDA archs", info.get("cuda_archs") or "none"),
            ("CUDA runtime", f"{_version(info.get('cuda_runtime', 0))}, driver "
                             f"{_version(info.get('cuda_driver', 0))}"),
        ]
    rows.append(("GPUs found", str(info.get("cuda_devices", len(gpus)))))
    for g in gpus:
        major, minor = g["compute_capability"]
        note = "" if g["runnable"] else " - NOT RUNNABLE: this build has no code for it"
        rows.append((f"GPU {g['index']}",
                     f"{g['name']}, compute capability {major}.{minor}, "
                     f"{g['multiprocessors']} SMs, {_gib(g['total_memory'])} "
                     f"({_gib(g['free_memory'])} free){note}"))
    for key, value in rows:
        print(f"{key + ':':<14}{value}")
    return 0


# ---- parser --------------------------------------------------------------------------------


def _add_measure_options(p: argparse.ArgumentParser, allow_all: bool) -> None:
    choices = list(tswarp.METRICS) + (["all"] if allow_all else [])
    g = p.add_argument_group("measure options (the measure each applies to is in brackets)")
    g.add_argument("--metric", choices=choices, default="dtw",
                   help="measure (default dtw)" + ("; 'all' runs each one in turn" if allow_all else ""))
    g.add_argument("--cost", choices=COSTS, help="[dtw] local cost (default sqeuclidean)")
    g.add_argument("--window", type=_window, metavar="F",
                   help="[all] Sakoe-Chiba band as a fraction of the shorter length in [0, 1] "
                        "(aeon's window: 0.1; 1 is the full band)")
    g.add_argument("--radius", type=_radius, metavar="R",
                   help="[all] Sakoe-Chiba radius in cells (tslearn's sakoe_chiba_radius; "
                        "dtaidistance's window is R + 1)")
    g.add_argument("--itakura-max-slope", type=float, metavar="S", dest="itakura_max_slope",
                   help="[all] Itakura parallelogram with this maximum slope (>= 1)")
    g.add_argument("--accumulated", action="store_true",
                   help="[dtw] return the accumulated cost instead of its square root (aeon's dtw_distance)")
    g.add_argument("--nu", type=float, help="[twed] stiffness (default 0.001)")
    g.add_argument("--lmbda", type=float, help="[twed] deletion penalty (default 1.0)")
    g.add_argument("--p", type=float, help="[twed] order of the Lp local distance (default 2)")
    g.add_argument("--gamma", type=float, help="[soft_dtw] smoothing, > 0 (default 1.0)")
    g.add_argument("--normalize", action="store_true",
                   help="[soft_dtw] soft-DTW divergence sdtw(x,y) - (sdtw(x,x) + sdtw(y,y)) / 2")
    g.add_argument("--g", type=float,
                   help="[wdtw, wddtw] weight steepness (default 0.05); [erp] gap value "
                        "(default 0)")
    g.add_argument("--warp-penalty", type=float, dest="warp_penalty",
                   help="[adtw] penalty of a warping step (default 1.0)")
    g.add_argument("--epsilon", type=float,
                   help="[edr, lcss] match threshold (lcss default 1.0; edr default "
                        "max(std(a), std(b)) / 4)")
    g.add_argument("--c", type=float, help="[msm] split/merge cost (default 1.0)")
    g.add_argument("--dependent", action="store_true",
                   help="[msm] the dependent multivariate form (default: independent)")
    g.add_argument("--reach", type=_nonneg_int,
                   help="[shape_dtw] half width of a point's neighbourhood (default 15)")
    g.add_argument("--descriptor", choices=("identity", "paa"),
                   help="[shape_dtw] the neighbourhood's descriptor (default identity)")
    g.add_argument("--paa-segments", type=_nonneg_int, dest="paa_segments",
                   help="[shape_dtw, --descriptor paa] means per neighbourhood (default 5)")
    g.add_argument("--device", type=_device, default="auto", metavar="{auto,cpu,cuda,cuda:N,cuda:all}",
                   help="where to compute (default auto: a GPU when tswarp was built with CUDA, "
                        "one is found and the work is large enough; else the CPU)")


def _add_input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--labels-first", action="store_true",
                   help="in .csv/.txt inputs the first field of each line is the label")
    p.add_argument("--layout", choices=("channels_last", "channels_first"), default=None,
                   help="how a 3-D .npy is laid out: channels_last (n, len, d), tswarp's and "
                        "tslearn's, or channels_first (n, d, len), aeon's (default: "
                        "channels_last, with shapes that may be the other layout refused)")


def _add_labels_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--labels", nargs=2, metavar=("Y_TRAIN", "Y_TEST"),
                   help="the labels of TRAIN and TEST when their files hold none (.npy): two "
                        "files, each a 1-D .npy array or one label a line")


def _add_batch_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-j", "--jobs", type=_positive_int, metavar="N", help="CPU threads (default all cores)")
    p.add_argument("--progress", action="store_true", help="draw a progress bar on stderr")


FORMATS_HELP = ("input files: .npy (1-D one series, 2-D (n, len), 3-D (n, len, d)), .csv/.txt/.data "
                "(one series a line), UCR .tsv (label first), aeon/sktime .ts (multivariate and "
                "variable length included)")


class _Parser(argparse.ArgumentParser):
    """argparse with short errors: the one line that is wrong and where to read more, not the
    whole usage text (which can run to twenty lines)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Python code runs (the library polls for signals during long
    calls): the same unwinding as Ctrl-C, so temporary files are removed (io.atomic_write)."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tswarp",
        description="Elastic time-series measures (DTW, TWED, Soft-DTW) from the shell.",
        epilog=FORMATS_HELP)
    parser.add_argument("--version", action="version", version=f"tswarp {tswarp.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("distance", help="distance between two series",
                       description="Print the distance between two series. A and B each hold one "
                                   "series, or pick one of a collection with --row/--row-a/--row-b "
                                   "(a 2-D .npy is n univariate series: save one multivariate series "
                                   "as (1, len, d)).",
                       epilog=FORMATS_HELP)
    p.add_argument("a", metavar="A", help="file holding the first series")
    p.add_argument("b", metavar="B", help="file holding the second series")
    p.add_argument("--row", type=_nonneg_int, metavar="I", help="use series I (0-based) of both A and B")
    p.add_argument("--row-a", type=_nonneg_int, metavar="I", help="use series I (0-based) of A")
    p.add_argument("--row-b", type=_nonneg_int, metavar="I", help="use series I (0-based) of B")
    _add_input_options(p)
    _add_measure_options(p, allow_all=False)
    p.set_defaults(func=cmd_distance)

    p = sub.add_parser("matrix", help="distance matrix of one collection (pdist) or two (cdist)",
                       description="Distance matrix of every pair in X (each pair computed once, "
                                   "full symmetric matrix unless --condensed) or of X against Y. "
                                   "With --out the matrix is written there and a summary printed; "
                                   "without, the matrix goes to stdout as csv and the summary to stderr.",
                       epilog=FORMATS_HELP)
    p.add_argument("x", metavar="X", help="collection of series")
    p.add_argument("y", metavar="Y", nargs="?", help="second collection (cdist of X against Y)")
    p.add_argument("--out", "-o", metavar="FILE",
                   help="write the matrix to FILE (.npy or .csv; a .zarr store is written block "
                        "by block)")
    p.add_argument("--condensed", action="store_true",
                   help="pdist only: the upper triangle as a vector (scipy's condensed form)")
    p.add_argument("--block-size", type=_positive_int, metavar="N", dest="block_size",
                   help="compute and write the matrix in blocks of N x N series (default 1024 "
                        "when blocks are used: with --resume, --scheduler or a .zarr --out)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: keep the blocks an interrupted run of the same job wrote "
                        "and compute the rest")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="compute the blocks on this Dask scheduler (tcp://host:8786; needs "
                        "tswarp[dask]); with --out every worker must see the file")
    _add_batch_options(p)
    _add_input_options(p)
    _add_measure_options(p, allow_all=False)
    p.set_defaults(func=cmd_matrix)

    p = sub.add_parser("align", help="optimal warping path between two series (dtw_path)",
                       description="Optimal DTW path between two series and its accumulated cost "
                                   "(tswarp.dtw_path). With --out the path is written there (csv "
                                   "lines i,j or .npy) and a summary printed; without, the path goes "
                                   "to stdout as csv and the summary to stderr.",
                       epilog=FORMATS_HELP)
    p.add_argument("a", metavar="A", help="file holding the first series")
    p.add_argument("b", metavar="B", help="file holding the second series")
    p.add_argument("--row", type=_nonneg_int, metavar="I", help="use series I (0-based) of both A and B")
    p.add_argument("--row-a", type=_nonneg_int, metavar="I", help="use series I (0-based) of A")
    p.add_argument("--row-b", type=_nonneg_int, metavar="I", help="use series I (0-based) of B")
    p.add_argument("--step", choices=("symmetric1", "p05", "p05_query"), default=None,
                   help="step pattern: symmetric1 = (1,1),(0,1),(1,0); p05 = (1,1),(1,2),(2,1) "
                        "weights 2,3,3; p05_query = the same steps, weights 1,1,2 (default "
                        "symmetric1; p05_query with --segmental)")
    p.add_argument("--segmental", choices=("weak", "strict", "none"),
                   help="segmental DTW of that variant (tswarp.segmental_dtw): WSDTW, SSDTW or "
                        "NSDTW, an approximate path from independent fragments of A")
    p.add_argument("--fragments", type=_positive_int, default=32, metavar="N",
                   help="with --segmental: cut A into N fragments (default 32)")
    p.add_argument("--cost", choices=COSTS, help="local cost (default sqeuclidean)")
    p.add_argument("--window", type=_window, metavar="F",
                   help="Sakoe-Chiba band as a fraction of the shorter length in [0, 1]")
    p.add_argument("--radius", type=_radius, metavar="R",
                   help="Sakoe-Chiba radius in cells")
    p.add_argument("--itakura-max-slope", type=float, metavar="S", dest="itakura_max_slope",
                   help="Itakura parallelogram with this maximum slope (>= 1)")
    p.add_argument("--accumulated", action="store_true",
                   help="print the accumulated cost D(n-1, m-1) (librosa's) instead of its "
                        "square root for the sqeuclidean cost (the value of tswarp distance)")
    p.add_argument("--method", choices=("auto", "stored", "linear"), default="auto",
                   help="stored backtrace (2 bits per cell), linear memory, or auto (default)")
    p.add_argument("--memory-limit", type=_positive_int, metavar="BYTES", dest="memory_limit",
                   help="bytes for stored steps (default half the available memory)")
    p.add_argument("--out", "-o", metavar="FILE", help="write the path to FILE (.csv or .npy)")
    p.add_argument("--plot", metavar="PNG",
                   help="draw the accumulated-cost matrix with the path and the series (.png, "
                        ".pdf, .svg); with --segmental the fragments' boundaries too")
    p.add_argument("--device", type=_device, default="auto", metavar="{auto,cpu,cuda,cuda:N,cuda:all}",
                   help="where to compute (default auto)")
    _add_batch_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_align)

    p = sub.add_parser("knn", help="k-NN classification of TEST against TRAIN (default: shipped GunPoint)",
                       description="Classify each TEST series by its k nearest TRAIN series (majority "
                                   "vote, ties to the nearest) and print accuracy, error rate, time "
                                   "and giga cells per second (cells = sum over pairs of len_i * len_j). "
                                   "Without TRAIN and TEST, uses the shipped GunPoint dataset.",
                       epilog=FORMATS_HELP + "; TRAIN and TEST need labels")
    p.add_argument("train", metavar="TRAIN", nargs="?", help="labelled training collection")
    p.add_argument("test", metavar="TEST", nargs="?", help="labelled test collection")
    p.add_argument("-k", "--k", type=_positive_int, default=1, help="neighbours (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="search on this Dask scheduler (tcp://host:8786; needs tswarp[dask]): "
                        "blocks of TEST x TRAIN, the top k merged by a tree reduction")
    p.add_argument("--block-size", type=_positive_int, metavar="N", dest="block_size",
                   help="with --scheduler or --out: series per block (default 1024)")
    p.add_argument("--out", "-o", metavar="STORE",
                   help="write the neighbours (distances and indices, TEST x k) to this .zarr "
                        "store, block of TEST series by block (one --metric)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: keep the blocks an interrupted run of the same job wrote")
    _add_labels_option(p)
    _add_batch_options(p)
    _add_input_options(p)
    _add_measure_options(p, allow_all=True)
    p.set_defaults(func=cmd_knn)

    p = sub.add_parser("shapelets", help="shapelets: a tree or the transform + a classifier, "
                                         "trained on TRAIN, scored on TEST",
                       description="Fit a shapelet model on TRAIN (exhaustive search over every "
                                   "candidate subsequence) and score it on TEST: --model tree "
                                   "(a shapelet decision tree, printed; univariate series) or "
                                   "--model transform (the distances to the k best shapelets, "
                                   "standardised, into a ridge classifier; multivariate series "
                                   "too, each channel searched on its own).",
                       epilog=FORMATS_HELP + "; TRAIN and TEST need labels")
    p.add_argument("train", metavar="TRAIN", help="labelled training collection")
    p.add_argument("test", metavar="TEST", help="labelled test collection")
    p.add_argument("--model", choices=("tree", "transform"), default="tree",
                   help="tree (default) or transform (ShapeletTransform + StandardScaler + "
                        "RidgeClassifierCV)")
    p.add_argument("--min-length", type=_positive_int, default=3, dest="min_length",
                   help="shortest candidate (default 3)")
    p.add_argument("--max-length", type=_positive_int, default=None, dest="max_length",
                   help="longest candidate (default: the longest TRAIN series)")
    p.add_argument("--length-step", type=_positive_int, default=1, dest="length_step",
                   help="candidate lengths min, min + step, ... (default 1)")
    p.add_argument("--normalize", choices=("z", "raw", "both"), default="z",
                   help="z-normalised shapelets (z, default), compared as they are (raw: their "
                        "level and scale count too; the tree prints rawdist), or both kinds "
                        "(transform)")
    p.add_argument("--logical", action="store_true",
                   help="[tree] allow AND/OR of two shapelets per node")
    p.add_argument("--max-depth", type=_positive_int, default=None, dest="max_depth",
                   help="[tree] deepest node")
    p.add_argument("--n-shapelets", type=_positive_int, default=None, dest="n_shapelets",
                   help="[transform] shapelets kept (default 10 per training series, at most "
                        "1000)")
    p.add_argument("--dilation", type=_positive_int, nargs="+", metavar="D",
                   help="[transform] dilations searched (default 1)")
    p.add_argument("--features", nargs="+", choices=("distance", "occurrence", "position"),
                   default=["distance"], help="[transform] feature blocks (default distance)")
    p.add_argument("--one-vs-rest", action="store_true", dest="one_vs_rest",
                   help="[transform] judge each candidate on its class against the rest")
    p.add_argument("--plot", metavar="PNG",
                   help="draw the model's shapelets on the first TEST series (.png, .pdf, .svg)")
    _add_labels_option(p)
    p.add_argument("--device", type=_device, default="auto", metavar="{auto,cpu,cuda,cuda:N,cuda:all}",
                   help="where to compute (default auto)")
    _add_batch_options(p)
    _add_input_options(p)
    p.set_defaults(func=cmd_shapelets)

    p = sub.add_parser("dataset", help="copy a UCR/UEA archive problem's TRAIN and TEST files "
                                       "into a folder (downloading it when needed)",
                       description="Copy NAME_TRAIN and NAME_TEST of a problem of the UCR or "
                                   "UEA archive into --dir: the shipped GunPoint, a local "
                                   "archive folder (--data-home or TSWARP_DATA), the cache "
                                   "(~/.cache/tswarp/datasets), or a download from "
                                   "timeseriesclassification.com, checked and cached "
                                   "(tswarp.datasets.load_ucr).")
    p.add_argument("name", metavar="NAME", help="the problem, e.g. GunPoint, ECG200, BasicMotions")
    p.add_argument("--dir", default=".", help="where to copy the files (default .)")
    p.add_argument("--data-home", dest="data_home", metavar="DIR",
                   help="a local copy of the archive to read from")
    p.add_argument("--no-download", action="store_true", dest="no_download",
                   help="only local files; no network")
    p.add_argument("--progress", action="store_true", help="a bar of the download")
    p.set_defaults(func=cmd_dataset)

    p = sub.add_parser("info", help="version, SIMD level, threads, CUDA backend and GPUs",
                       description="Show the tswarp version, the SIMD level in use, the default "
                                   "thread count, whether the CUDA backend was compiled in and "
                                   "the GPUs found.")
    p.set_defaults(func=cmd_info)
    return parser


def _error(message: str) -> None:
    print(f"tswarp: error: {message}", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit status (the console script passes it to exit)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) and usage errors (2) from argparse
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return args.func(args)
    except _Terminated:
        print("\ntswarp: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("\ntswarp: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (tswarp matrix X | head): stop quietly. Point stdout at devnull so
        # the interpreter's final flush does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except MemoryError as e:
        # The GPU path's messages say how many bytes were needed and how many were free.
        _error(f"out of memory: {e}" if str(e) else "out of memory")
        return 1
    except tswarp.CudaError as e:
        _error(str(e))
        return 1
    except (UsageError, ValueError, TypeError) as e:
        # ParseError and tswarp.NoDeviceError are ValueErrors; the binding reports bad
        # parameters and inputs as ValueError/TypeError naming the argument.
        _error(str(e))
        return 2
    except (ConnectionError, FileNotFoundError) as e:  # the dataset loader's, self-explaining
        if isinstance(e, FileNotFoundError) and e.filename:
            _error(f"cannot access {e.filename!r}: {e.strerror or e}")
        else:
            _error(str(e))
        return 2
    except OSError as e:
        name = f" {e.filename!r}" if e.filename else ""
        _error(f"cannot access{name}: {e.strerror or e}")
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)

