"""Shapelets: exhaustive discovery, shapelet decision trees, logical shapelets, the transform.

A shapelet is a subsequence of a training series; its distance to a series is the smallest
length-normalised, z-normalised Euclidean distance to any window of that series (eq. 2 of
Chang et al., "Efficient Pattern-Based Time Series Classification on GPU", 2012)::

    d(a, b) = sqrt(1/l * sum_t (za_t - zb_t)^2),   za = (a - mean a) / std a

Every candidate (each training series, each start, each length in ``min_length ..
max_length`` by ``length_step``) is evaluated exactly, in C (OpenMP threads), with running
dot products so that a candidate costs O(N L). A candidate splits the series on the order
line of its distances at the midpoint between two neighbours; the best split maximises the
information gain (natural log), ties going to the larger separation gap
``mean(d right) - mean(d left)``. Conventions (see ``include/tswarp.h``, "Shapelets"):

* a constant window (all values equal) z-normalises to zeros: d = 0 between two constant
  windows, d = 1 between a constant and a varying one; never NaN;
* distances closer than 1e-7 are equal on the order line (no threshold between them);
  d < 1e-6 counts as an exact match (0);
* remaining ties go to the smaller (series, start, length).

Series may have different lengths (a list of 1-D arrays). A series shorter than a shapelet
slides along it instead: its distance is the least over the shapelet's windows of the series'
length (as aeon's ShapeletTransform compares them), so shapelets may be as long as the
longest training series (the default ``max_length``) and any series can be transformed or
classified.

>>> from tswarp.shapelets import ShapeletTreeClassifier, ShapeletTransform, find_shapelet
>>> from tswarp.datasets import load_gunpoint
>>> X, y = load_gunpoint("train")
>>> best = find_shapelet(X, y, min_length=20, max_length=40, length_step=10)
>>> clf = ShapeletTreeClassifier(min_length=20, max_length=40, length_step=10).fit(X, y)
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np
from ._optional import require

require("sklearn", "tswarp.shapelets")
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin  # noqa: E402
from sklearn.utils.multiclass import check_classification_targets  # noqa: E402
from sklearn.utils.validation import check_is_fitted, column_or_1d  # noqa: E402

from . import _tswarp
from ._conventions import FIRST, as_collection, as_series, check_bool, check_int, check_layout
from ._progress import make_progress


def _close(bar):
    if bar is not None and hasattr(bar, "close"):
        bar.close()


def _label(v):
    """A class label as Python shows it: 2, 'Gun' (not np.int64(2))."""
    return v.item() if isinstance(v, np.generic) else v


class _Share:
    """Progress of a part of a longer task: (done, total) of one C call mapped onto
    [start, start + width) of the task's total (`outer` a callable or None)."""

    def __init__(self, outer, total):
        self.outer, self.total, self.start, self.width = outer, float(total), 0.0, 0.0

    def part(self, start, width):
        self.start, self.width = float(start), float(width)
        return self if self.outer is not None else None

    def __call__(self, done, total):
        frac = done / total if total > 0 else 1.0
        self.outer(min(int(self.start + frac * self.width), int(self.total) - 1),
                   int(self.total))

__all__ = ["Shapelet", "find_shapelet", "shapelet_distances", "ShapeletTreeClassifier",
           "ShapeletTransform"]

_LOGIC = {None: 0, "and": 1, "or": 2}


@dataclass(frozen=True)
class Shapelet:
    """A shapelet found in the training data and its best split.

    Attributes
    ----------
    values : ndarray (length,)
        The subsequence X[series][start:start + span:dilation], span = (length - 1) *
        dilation + 1.
    series, start, length : int
        Where it comes from (series indexes the training X).
    threshold : float
        Series with distance <= threshold go left.
    gain : float
        Information gain of the split (nats).
    gap : float
        Separation gap mean(d right) - mean(d left).
    channel : int
        The channel it comes from and is compared with (0 for univariate series;
        ShapeletTransform on multivariate X).
    dilation : int
        Spacing of its points in the series, and of the windows it is compared with (1:
        contiguous; RDST's dilated shapelets).
    normalized : bool
        True: compared z-normalised (its shape only, eq. 2 of Chang et al.); False:
        compared as it is, the length-normalised Euclidean distance of the values (its
        level and scale too; RDST's non-normalised shapelets).
    label : object
        The class of the training series it comes from (None when not known).
    """

    values: np.ndarray
    series: int
    start: int
    length: int
    threshold: float
    gain: float
    gap: float
    channel: int = 0
    dilation: int = 1
    normalized: bool = True
    label: Any = None


# ---- input handling --------------------------------------------------------------------


class _Series:
    """Univariate series back to back in one float64 buffer (the C collection layout)."""

    __slots__ = ("values", "offsets", "lengths")

    def __init__(self, values, offsets, lengths):
        self.values, self.offsets, self.lengths = values, offsets, lengths

    def __len__(self):
        return len(self.lengths)

    def subset(self, idx):
        idx = np.asarray(idx, dtype=np.int64)
        return _Series(self.values, self.offsets[idx], self.lengths[idx])

    def series(self, i):
        o = int(self.offsets[i])
        return self.values[o:o + int(self.lengths[i])]


def _as_series(X, name="X") -> _Series:
    """X: a (n, len) array or a list of 1-D series of any lengths (univariate, in tswarp's
    layout: _channels has converted other shapes)."""
    if X is None:
        raise ValueError(f"{name} is None; expected series")
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{name}: sparse input is not supported; pass dense series")
    ragged = isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype == object
                                              and X.ndim == 1)
    if ragged:
        rows = []
        for i, s in enumerate(X):
            a = _as_float(s, f"{name}[{i}]")
            if a.ndim == 2 and 1 in a.shape:
                a = a.reshape(-1)
            if a.ndim != 1:
                raise ValueError(f"{name}[{i}] must be one univariate series (len,); got shape "
                                 f"{a.shape} (ShapeletTransform takes multivariate series, "
                                 "each (len, channels))")
            rows.append(a)
    else:
        a = _as_float(X, name)
        if a.ndim == 2 and a.shape[1] == 0:
            raise ValueError(f"{name} has 0 feature(s) (shape={a.shape}) while a minimum of 1 "
                             "is required.")
        if a.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (n_series, length), (n, length, 1), "
                             f"or a list of 1-D series; got shape {a.shape}. Reshape your data "
                             "with array.reshape(-1, 1) if it holds one series per row of "
                             "one time point, or array.reshape(1, -1) for one series.")
        rows = list(a)
    if len(rows) == 0:
        raise ValueError(f"{name} holds 0 samples (series); at least one is required")
    lengths = np.array([len(r) for r in rows], dtype=np.int64)
    for i, n in enumerate(lengths):
        if n == 0:
            raise ValueError(f"{name}[{i}] is empty")
    values = np.ascontiguousarray(np.concatenate(rows), dtype=np.float64)
    if not np.all(np.isfinite(values)):
        bad = next(i for i, r in enumerate(rows) if not np.all(np.isfinite(r)))
        raise ValueError(f"{name}[{bad}] contains NaN or infinity")
    offsets = np.zeros(len(rows), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return _Series(values, offsets, lengths)


def _as_float(x, name):
    try:
        a = np.asarray(x)
    except Exception as e:  # ragged nested lists and the like
        raise ValueError(f"{name} cannot be read as an array: {e}") from None
    if np.iscomplexobj(a):
        raise ValueError(f"{name}: Complex data not supported")
    if a.dtype == object:
        try:
            a = a.astype(np.float64)
        except TypeError as e:  # numpy's own message names the offending value's type
            raise TypeError(f"{name}: {e}") from None
        except ValueError as e:
            raise ValueError(f"{name} holds values that are not numbers: {e}") from None
    if a.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    return np.asarray(a, dtype=np.float64)


def _lengths_arg(min_length, max_length, length_step, longest):
    for nm, v in (("min_length", min_length), ("length_step", length_step)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{nm} must be an int, got {type(v).__name__}")
    if max_length is not None and (isinstance(max_length, bool)
                                   or not isinstance(max_length, numbers.Integral)):
        raise TypeError(f"max_length must be None or an int, got {type(max_length).__name__}")
    if min_length < 2:
        raise ValueError(f"min_length must be >= 2 (a window of 1 point is always constant), "
                         f"got {min_length}")
    if length_step < 1:
        raise ValueError(f"length_step must be >= 1, got {length_step}")
    if max_length is not None and max_length < min_length:
        raise ValueError(f"min_length={min_length} is greater than max_length={max_length}")
    if min_length > longest:
        raise ValueError(f"min_length={min_length} is longer than the longest series "
                         f"({longest} feature(s), i.e. time points)")
    if max_length is not None and max_length > longest:
        raise ValueError(f"max_length={max_length} is longer than the longest series "
                         f"({longest} time points)")
    return int(min_length), int(max_length or 0), int(length_step)


def _set_n_features(est, X, Xs):
    """scikit-learn's n_features_in_: the common length when every series has it. It is
    informative only: series of other lengths remain valid inputs to predict/transform."""
    if int(Xs.lengths.min()) == int(Xs.lengths.max()):
        est.n_features_in_ = int(Xs.lengths[0])
    elif hasattr(est, "n_features_in_"):
        del est.n_features_in_


def _encode(y, n):
    if y is None:
        raise ValueError("shapelets: this estimator requires y to be passed, but the target y "
                         "is None")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)  # DataConversionWarning, as scikit-learn does
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per series), got shape {y.shape}")
    if len(y) != n:
        raise ValueError(f"X holds {n} series but y holds {len(y)} labels")
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.astype(np.int32).ravel()


def _check_two(X: _Series, y_codes, classes):
    if len(X) < 2:
        raise ValueError(f"X holds 1 sample (series): shapelet discovery needs at least two")
    if len(classes) < 2:
        raise ValueError(f"y holds only one class ({classes[0]!r}): shapelet discovery needs "
                         "at least two classes")


def _device(device):
    """'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all' or a list of GPU ordinals (several GPUs
    share the search: the same shapelets as one); the C binding checks the rest."""
    if isinstance(device, (list, tuple)):
        return list(device)
    if device not in ("auto", "cpu") and not (isinstance(device, str) and device.startswith("cuda")):
        raise ValueError("device must be 'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all' or a list "
                         f"of GPUs, got {device!r}")
    return device


def _search(X: _Series, codes, n_classes, lengths, subset=None, logic=None, partner=None,
            device="auto", n_jobs=None, _impl="auto", dilation=1, normalize=True,
            progress=None):
    minl, maxl, step = lengths
    r = _tswarp._shapelet_search(X.values, X.offsets, X.lengths, codes, n_classes, minl, maxl,
                                 step, subset=subset, logic=_LOGIC[logic], partner=partner,
                                 device=device, _impl=_impl, n_jobs=n_jobs, dilation=dilation,
                                 raw=not normalize, progress=progress)
    return r  # (series, start, length, threshold, gain, gap, dilation)


def _to_shapelet(X: _Series, r, channel=0, normalized=True, labels=None) -> Optional[Shapelet]:
    """labels: the training labels (its series' label is the shapelet's class)."""
    series, start, length, thr, gain, gap, dil = r
    if series < 0:
        return None
    values = X.series(series)[start:start + (length - 1) * dil + 1:dil].copy()
    label = None if labels is None else _label(labels[series])
    return Shapelet(values, int(series), int(start), int(length), float(thr), float(gain),
                    float(gap), int(channel), int(dil), bool(normalized), label)


def _normalize_arg(normalize):
    """ShapeletTransform's normalize: True, False or 'both' -> the tuple of flags searched."""
    if isinstance(normalize, str):
        if normalize != "both":
            raise ValueError(f"normalize must be True, False or 'both', got {normalize!r}")
        return (True, False)
    if not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"normalize must be True, False or 'both', got "
                        f"{type(normalize).__name__}")
    return (bool(normalize),)


def _dilations_arg(dilation, shortest, longest, min_length):
    """dilation: an int >= 1 or a sequence of them -> sorted distinct tuple; each must leave
    min_length points in every phase of the longest series (floor(longest / d)) and be at
    most the shortest series (no empty phase)."""
    ds = [dilation] if isinstance(dilation, numbers.Integral) and not isinstance(
        dilation, bool) else dilation
    try:
        ds = list(ds)
    except TypeError:
        raise TypeError(f"dilation must be an int or a sequence of ints, got "
                        f"{type(dilation).__name__}") from None
    if not ds:
        raise ValueError("dilation is empty")
    for d in ds:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral):
            raise TypeError(f"dilation must hold ints, got {d!r}")
        if d < 1:
            raise ValueError(f"dilation must be >= 1, got {d}")
        if longest // d < min_length:
            raise ValueError(f"dilation={d} leaves {longest // d} points (floor({longest} / "
                             f"{d})) of the longest series for min_length={min_length}")
        if d > shortest:
            raise ValueError(f"dilation={d} is more than the shortest series ({shortest} time "
                             f"points): a phase of it would be empty")
    return tuple(sorted(set(int(d) for d in ds)))


def _channels(X, code, name="X"):
    """X in the layout `code` (tswarp/_conventions.py) split by channel: (None, [X']) for
    univariate series (X' a (n, len) array or a list of 1-D series, for _as_series), else
    (C, [X_0, .., X_{C-1}]) with X_c the channel's (n, len) array or list of 1-D series.
    X: a (n, len) array, a (n, len, d) array (d = 1: univariate), or a list of (len_i,) or
    (len_i, d) series of one d; with layout='channels_first' (n, d, len) and (d, len_i)
    (aeon's layout and its unequal-length collections)."""
    if X is None:
        raise ValueError(f"{name} is None; expected series")
    if hasattr(X, "toarray") or type(X).__module__.startswith("scipy.sparse"):
        raise TypeError(f"{name}: sparse input is not supported; pass dense series")
    ragged = isinstance(X, (list, tuple)) or (isinstance(X, np.ndarray) and X.dtype == object
                                              and X.ndim == 1)
    if not ragged:
        a = _as_float(X, name)
        if a.ndim != 3:
            return None, [a]
        a = as_collection(a, name, code)
        if a.shape[2] == 1:
            return None, [a[:, :, 0]]
        return a.shape[2], [a[:, :, c] for c in range(a.shape[2])]
    items = []
    for i, x in enumerate(X):
        label = f"{name}[{i}]"
        a = as_series(_as_float(x, label), label, code)
        if a.ndim not in (1, 2):
            raise ValueError(f"{label} must be one series (len,) or (len, channels); got shape "
                             f"{a.shape}")
        items.append(a)
    dims = [1 if a.ndim == 1 else a.shape[1] for a in items]
    if all(d == 1 for d in dims):
        return None, [[a.reshape(-1) for a in items]]
    C = next(d for d in dims if d > 1)
    for i, d in enumerate(dims):
        if d != C:
            raise ValueError(f"{name}[{i}] has {d} channel(s); the multivariate series of "
                             f"{name} must all have the same channels ({C}, as in the others)")
    return C, [[a[:, c] for a in items] for c in range(C)]


def _univariate(X, code, name="X"):
    """X's univariate series as a _Series (the trees, find_shapelet, distances)."""
    chans, parts = _channels(X, code, name)
    if chans is not None:
        raise ValueError(f"{name}: multivariate series ({chans} channels) are not supported "
                         "here; pass univariate series (ShapeletTransform takes multivariate "
                         "ones)")
    return _as_series(parts[0], name)


def _channel_series(parts, chans, code, name="X"):
    """One _Series per channel of _channels' parts, named as the caller indexes the channel
    (X[:, :, c], or X[:, c, :] for channels_first) in errors."""
    if chans is None:
        return [_as_series(parts[0], name)]
    where = "{}[:, {}, :]" if code == FIRST else "{}[:, :, {}]"
    return [_as_series(Xc, where.format(name, c)) for c, Xc in enumerate(parts)]


def _n_candidates(lengths, grid, dils):
    """How many candidates the search of every dilation weighs (an upper bound: every
    series, start and length of the grid that fits; the count of one channel)."""
    minl, maxl, step = grid
    total = 0
    for d in dils:
        top = min(maxl or int(lengths.max()), int(lengths.max()) // d)
        for ln in range(minl, top + 1, step):
            span = (ln - 1) * d + 1
            total += int(np.maximum(lengths - span + 1, 0).sum())
    return max(total, 1)


def _rank_key(r):
    """The C library's order of candidates (series, start, length, threshold, gain, gap):
    gain, then gap on its 1e-9 grid (include/tswarp.h), then the smaller (series, start,
    length). sorted() with this key puts the best first."""
    series, start, length, _, gain, gap, dil = r
    return (-gain, -math.floor(gap * 1e9 + 0.5), series, start, length, dil)


def _distances(shapelets: List[np.ndarray], X: _Series, device="auto", n_jobs=None,
               _impl="auto", thresholds=None, dilations=None, normalized=None, progress=None):
    """(n_series, n_shapelets) distances and best-match starts, and with thresholds (one per
    shapelet) the counts of windows within them; dilations: one per shapelet, or None (1);
    normalized: one bool per shapelet, or None (all z-normalised)."""
    sl = np.array([len(s) for s in shapelets], dtype=np.int64)
    so = np.zeros(len(shapelets), dtype=np.int64)
    np.cumsum(sl[:-1], out=so[1:])
    sv = np.ascontiguousarray(np.concatenate(shapelets), dtype=np.float64)
    shortest = int(X.lengths.min())
    dl = np.ones(len(sl), dtype=np.int64) if dilations is None else np.asarray(dilations,
                                                                               np.int64)
    if dl.max() > shortest:  # a series shorter than a shapelet slides along it, but every
        k = int(np.argmax(dl))  # phase of a dilated shapelet's series needs a point
        raise ValueError(f"X holds a series of {shortest} time points, fewer than the "
                         f"dilation of shapelet {k} ({int(dl[k])})")
    raw = None if normalized is None or all(normalized) else \
        np.array([not v for v in normalized], dtype=np.int32)
    return _tswarp._shapelet_distances(sv, so, sl, X.values, X.offsets, X.lengths,
                                       device=device, _impl=_impl, n_jobs=n_jobs,
                                       thresholds=thresholds,
                                       dilations=None if dilations is None else dl, raw=raw,
                                       progress=progress)


# ---- functions -----------------------------------------------------------------------------


def find_shapelet(X, y, *, min_length=3, max_length=None, length_step=1, dilation=1,
                  normalize=True, device="auto", n_jobs=None, progress=False,
                  layout=None) -> Shapelet:
    """The best shapelet of (X, y) over every candidate, with its split.

    Parameters
    ----------
    X : (n, len) or (n, len, 1) array, or a list of 1-D series (lengths may differ)
    y : (n,) labels of any type (at least two classes)
    min_length, max_length, length_step : int
        Candidate lengths min_length, min_length + step, ... <= max_length (default: the
        longest series, over the dilation; shorter series slide along longer candidates).
    dilation : int, default 1
        Candidates X[i][s], X[i][s + d], .., compared with windows spaced alike (RDST's
        dilated shapelets, Guillaume et al. 2022); lengths up to floor(longest / d).
    normalize : bool, default True
        True: the z-normalised distance (eq. 2 of Chang et al.: shapes, whatever their level
        and scale). False: the length-normalised Euclidean distance of the values themselves,
        sqrt(mean((a - b)^2)) (RDST's non-normalised shapelets), for classes that differ in
        level or amplitude; thresholds and gaps are then in the data's units.
    device : 'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all' or a list of GPUs (several GPUs
        share the candidates; the same shapelet as one)
        'cuda' gives the same result as 'cpu', bit for bit; 'auto' takes a GPU for large
        searches when one is present.
    n_jobs : int, optional
        CPU threads (None or -1: all cores).
    progress : bool or callable, default False
        True draws a bar of the candidates evaluated on stderr; a callable is called as
        ``progress(done, total)``. Ctrl-C stops the search within a second either way.
    layout : {None, 'channels_last', 'channels_first'}
        How a 3-D X is laid out (see :func:`tswarp.cdist`): (n, len, 1) is univariate in
        tswarp's layout; aeon's (n, 1, len) needs ``layout='channels_first'``.

    Returns
    -------
    Shapelet, or raises ValueError when no candidate splits the data (every series constant).
    """
    Xs = _univariate(X, check_layout(layout))
    bar = make_progress(progress, "find_shapelet", "candidates")
    classes, codes = _encode(y, len(Xs))
    _check_two(Xs, codes, classes)
    shortest, longest = int(Xs.lengths.min()), int(Xs.lengths.max())
    lengths = _lengths_arg(min_length, max_length, length_step, longest)
    if isinstance(dilation, bool) or not isinstance(dilation, numbers.Integral):
        raise TypeError(f"dilation must be an int, got {type(dilation).__name__}")
    (dil,) = _dilations_arg(dilation, shortest, longest, min_length)
    if max_length is not None and max_length > longest // dil:
        raise ValueError(f"max_length={max_length} is longer than floor({longest} / "
                         f"dilation={dil}) = {longest // dil}")
    norm = check_bool(normalize, "normalize")
    try:
        r = _search(Xs, codes, len(classes), lengths, device=_device(device), n_jobs=n_jobs,
                    dilation=dil, normalize=norm, progress=bar)
    finally:
        _close(bar)
    s = _to_shapelet(Xs, r, normalized=norm, labels=classes[codes])
    if s is None:
        raise ValueError("no candidate splits X: every candidate is at the same distance from "
                         "every series")
    return s


def shapelet_distances(shapelets, X, *, return_positions=False, thresholds=None,
                       dilations=None, normalize=True, device="auto", n_jobs=None,
                       progress=False, layout=None):
    """Distances (n_series, n_shapelets) of shapelets (1-D arrays) to every series of X.

    dilations: one int >= 1 per shapelet (``Shapelet.dilation``), or None (all 1): shapelet
    k is compared with the windows X[j][u], X[j][u + d_k], .. (the positions are u).
    normalize: a bool for all the shapelets, or one per shapelet (``Shapelet.normalized``):
    True the z-normalised distance, False that of the values themselves (find_shapelet).
    With return_positions, also the start of each best match (the first on ties; -u <= 0
    for a series shorter than the shapelet, lying along the shapelet's window at u). With
    thresholds (one per shapelet, finite and >= 0, e.g. each Shapelet's ``threshold``),
    also the occurrences: how many windows of each series lie within the threshold (``d <=
    threshold``, the same distance), the "shapelet occurrence" feature of RDST (Guillaume et
    al. 2022). Returns D, (D, P), (D, C) or (D, P, C). X and ``layout`` as in
    :func:`find_shapelet`; ``progress`` counts (series, shapelet) pairs.
    """
    code = check_layout(layout)
    if isinstance(shapelets, np.ndarray) and shapelets.ndim == 1:
        shapelets = [shapelets]
    sh = [_as_float(s, f"shapelets[{i}]").ravel() for i, s in enumerate(shapelets)]
    if not sh:
        raise ValueError("shapelets is empty")
    for i, s in enumerate(sh):
        if len(s) < 2:
            raise ValueError(f"shapelets[{i}] has {len(s)} point(s); at least 2 are needed")
        if not np.all(np.isfinite(s)):
            raise ValueError(f"shapelets[{i}] contains NaN or infinity")
    if thresholds is not None:
        thresholds = _as_float(thresholds, "thresholds").ravel()
        if len(thresholds) != len(sh):
            raise ValueError(f"thresholds holds {len(thresholds)} values for {len(sh)} "
                             f"shapelets")
        if not np.all(np.isfinite(thresholds)) or np.any(thresholds < 0):
            raise ValueError("thresholds must be finite and >= 0")
    if dilations is not None:
        dl = np.asarray(dilations).ravel() if not np.isscalar(dilations) else None
        if dl is None or len(dl) != len(sh):
            raise ValueError(f"dilations must hold one int per shapelet ({len(sh)})")
        if dl.dtype.kind not in "iu":
            raise TypeError(f"dilations must hold ints, got dtype {dl.dtype}")
        if np.any(dl < 1):
            raise ValueError("dilations must be >= 1")
        dilations = dl
    if isinstance(normalize, (bool, np.bool_)):
        normalized = [bool(normalize)] * len(sh)
    else:
        try:
            normalized = list(normalize)
        except TypeError:
            raise TypeError(f"normalize must be a bool or a sequence of bools, got "
                            f"{type(normalize).__name__}") from None
        if len(normalized) != len(sh):
            raise ValueError(f"normalize must hold one bool per shapelet ({len(sh)})")
        normalized = [check_bool(v, "normalize") for v in normalized]
    Xs = _univariate(X, code)
    bar = make_progress(progress, "shapelet_distances", "pairs")
    try:
        r = _distances(sh, Xs, device=_device(device), n_jobs=n_jobs, thresholds=thresholds,
                       dilations=dilations, normalized=normalized, progress=bar)
    finally:
        _close(bar)
    D, P = r[0], r[1]
    if thresholds is None:
        return (D, P) if return_positions else D
    return (D, P, r[2]) if return_positions else (D, r[2])


# ---- the tree --------------------------------------------------------------------------------


class ShapeletTreeClassifier(ClassifierMixin, BaseEstimator):
    """Shapelet decision tree (Ye and Keogh 2009; Algorithm 2 of Chang et al. 2012).

    Each node takes the best shapelet of the series that reach it (exhaustive search) and
    sends the series at distance <= threshold left, the others right, recursively, until a
    node is pure, holds fewer than ``min_samples_split`` series, reaches ``max_depth`` or no
    split gains information. A leaf predicts its majority class (ties: the first class in
    sorted order); ``predict_proba`` gives the leaf's class frequencies.

    With ``logical=True`` each node may use a logical shapelet (Mueen, Keogh and Young 2011):
    after the best single shapelet s1 is found, the search runs again for the best s2 under
    ``s1 AND s2`` (distance max(d1, d2): both must match) and ``s1 OR s2`` (min(d1, d2)), and
    the node keeps whichever of the three splits best (gain, then gap; the single shapelet on
    ties).

    Parameters
    ----------
    min_length, max_length, length_step : int
        Candidate lengths (max_length None: the longest training series; a node searches
        lengths up to its longest series).
    logical : bool, default False
    max_depth : int, optional
    min_samples_split : int, default 2
    normalize : bool, default True
        z-normalised shapelets (True) or shapelets compared as they are (False), as
        find_shapelet's ``normalize``.
    device : 'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all' or a list of GPUs (the same tree on
        every device)
    n_jobs : int, optional
    progress : bool or callable, default False
        True draws a bar on stderr while fit() runs: the share of the training series
        settled in leaves, the running node's search counted in; a callable is called as
        ``progress(done, total)``. Ctrl-C stops fit() within a second either way.
    layout : {None, 'channels_last', 'channels_first'}
        How a 3-D X is laid out (see :func:`find_shapelet`).

    Attributes
    ----------
    classes_ : ndarray, the labels in sorted order
    shapelets_ : list of dict, one per internal node in preorder: ``node``, ``depth``,
        ``shapelets`` (list of Shapelet), ``op`` (None, 'and', 'or'), ``threshold``,
        ``gain``, ``gap``
    tree_ : list of dict, every node (internal: 'rule' index into ``shapelets_``, 'left',
        'right'; leaves: 'counts')

    Notes on scikit-learn's check_estimator: every check passes except two, which the tests
    skip with this reason: series of any length are valid inputs to predict, so a number of
    time points other than in fit is not an error, while
    ``check_n_features_in_after_fitting`` and ``check_classifiers_train`` require one
    (``n_features_in_`` is set, when the training series share one length, for
    information). The rest of check_classifiers_train (accuracy on its blobs, shapes of
    predict/predict_proba) is exercised in tests/python/test_shapelets.py.
    """

    def __init__(self, min_length=3, max_length=None, length_step=1, logical=False,
                 max_depth=None, min_samples_split=2, normalize=True, device="auto",
                 n_jobs=None, progress=False, layout=None):
        self.min_length = min_length
        self.max_length = max_length
        self.length_step = length_step
        self.logical = logical
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.normalize = normalize
        self.device = device
        self.n_jobs = n_jobs
        self.progress = progress
        self.layout = layout

    def fit(self, X, y):
        Xs = _univariate(X, check_layout(self.layout))
        classes, codes = _encode(y, len(Xs))
        _check_two(Xs, codes, classes)
        lengths = _lengths_arg(self.min_length, self.max_length, self.length_step,
                               int(Xs.lengths.max()))
        if self.max_depth is not None:
            check_int(self.max_depth, "max_depth", 1)
        check_int(self.min_samples_split, "min_samples_split", 2)
        device = _device(self.device)
        norm = check_bool(self.normalize, "normalize")
        logical = check_bool(self.logical, "logical")
        bar = make_progress(self.progress, "ShapeletTreeClassifier", "series")
        share = _Share(bar, len(Xs))
        settled = [0]
        self.classes_ = classes
        self.n_classes_ = len(classes)
        _set_n_features(self, X, Xs)
        self.shapelets_ = []
        self.tree_ = []
        C = len(classes)

        def leaf(idx):
            self.tree_.append({"counts": np.bincount(codes[idx], minlength=C)})
            settled[0] += len(idx)
            if bar is not None and settled[0] < len(Xs):
                bar(settled[0], len(Xs))
            return len(self.tree_) - 1

        def build(idx, depth):
            counts = np.bincount(codes[idx], minlength=C)
            if (np.count_nonzero(counts) < 2 or len(idx) < self.min_samples_split
                    or (self.max_depth is not None and depth >= self.max_depth)):
                return leaf(idx)
            sub = np.ascontiguousarray(idx, dtype=np.int64)
            top = int(Xs.lengths[sub].max())  # the node's lengths fit its longest series
            if lengths[0] > top:
                return leaf(idx)
            nl = (lengths[0], min(lengths[1], top) if lengths[1] else 0, lengths[2])
            # the node's searches count as its series: 1 search, or 3 when logical
            width = len(idx) / (3 if logical else 1)
            r1 = _search(Xs, codes, C, nl, subset=sub, device=device, n_jobs=self.n_jobs,
                         normalize=norm, progress=share.part(settled[0], width))
            s1 = _to_shapelet(Xs, r1, normalized=norm, labels=classes[codes])
            if s1 is None or s1.gain <= 0:
                return leaf(idx)
            Xsub = Xs.subset(sub)
            d1 = _distances([s1.values], Xsub, device, self.n_jobs, normalized=[norm])[0][:, 0]
            rule = {"shapelets": [s1], "op": None, "threshold": s1.threshold,
                    "gain": s1.gain, "gap": s1.gap}
            dist = d1
            if logical:
                for i, op in enumerate(("and", "or")):
                    r2 = _search(Xs, codes, C, nl, subset=sub, logic=op,
                                 partner=np.ascontiguousarray(d1), device=device,
                                 n_jobs=self.n_jobs, normalize=norm,
                                 progress=share.part(settled[0] + (i + 1) * width, width))
                    s2 = _to_shapelet(Xs, r2, normalized=norm, labels=classes[codes])
                    if s2 is None:
                        continue
                    better = s2.gain > rule["gain"] or (
                        s2.gain == rule["gain"] and round(s2.gap * 1e9) > round(rule["gap"] * 1e9))
                    if better:
                        d2 = _distances([s2.values], Xsub, device, self.n_jobs,
                                        normalized=[norm])[0][:, 0]
                        rule = {"shapelets": [s1, s2], "op": op, "threshold": s2.threshold,
                                "gain": s2.gain, "gap": s2.gap}
                        dist = np.maximum(d1, d2) if op == "and" else np.minimum(d1, d2)
            go_left = dist <= rule["threshold"]
            if go_left.all() or not go_left.any():  # cannot happen for a valid split
                return leaf(idx)
            rule["node"] = len(self.tree_)
            rule["depth"] = depth
            self.shapelets_.append(rule)
            node = {"rule": len(self.shapelets_) - 1, "left": None, "right": None}
            self.tree_.append(node)
            node["left"] = build(idx[go_left], depth + 1)
            node["right"] = build(idx[~go_left], depth + 1)
            return rule["node"]

        try:
            build(np.arange(len(Xs), dtype=np.int64), 0)
            if bar is not None:
                bar(len(Xs), len(Xs))
        finally:
            _close(bar)
        return self

    def _rule_distance(self, rule, Xs):
        D = _distances([s.values for s in rule["shapelets"]], Xs, _device(self.device),
                       self.n_jobs, normalized=[s.normalized for s in rule["shapelets"]])[0]
        if rule["op"] == "and":
            return D.max(axis=1)
        if rule["op"] == "or":
            return D.min(axis=1)
        return D[:, 0]

    def _leaf_counts(self, X):
        check_is_fitted(self, "tree_")
        Xs = _univariate(X, check_layout(self.layout))
        out = np.zeros((len(Xs), self.n_classes_), dtype=np.float64)

        def walk(node_id, idx):
            node = self.tree_[node_id]
            if "counts" in node:
                c = node["counts"].astype(np.float64)
                out[idx] = c / c.sum()
                return
            d = self._rule_distance(self.shapelets_[node["rule"]], Xs.subset(idx))
            left = d <= self.shapelets_[node["rule"]]["threshold"]
            if left.any():
                walk(node["left"], idx[left])
            if (~left).any():
                walk(node["right"], idx[~left])

        walk(0, np.arange(len(Xs), dtype=np.int64))
        return out

    def predict_proba(self, X):
        return self._leaf_counts(X)

    def predict(self, X):
        counts = self._leaf_counts(X)  # checks that the tree is fitted first
        return self.classes_[np.argmax(counts, axis=1)]

    def export_text(self) -> str:
        """The tree as indented text: each rule with its shapelets' origins and threshold."""
        check_is_fitted(self, "tree_")
        lines = []

        def walk(node_id, indent):
            node = self.tree_[node_id]
            pad = "|   " * indent
            if "counts" in node:
                k = int(np.argmax(node["counts"]))
                lines.append(f"{pad}class {_label(self.classes_[k])!r} "
                             f"(counts {node['counts'].tolist()})")
                return
            rule = self.shapelets_[node["rule"]]
            names = [f"X[{s.series}][{s.start}:{s.start + s.length}]" for s in rule["shapelets"]]
            expr = f" {rule['op'].upper()} ".join(names) if rule["op"] else names[0]
            fn = "dist" if rule["shapelets"][0].normalized else "rawdist"
            lines.append(f"{pad}{fn}({expr}) <= {rule['threshold']:.6g}   "
                         f"(gain {rule['gain']:.4f}, gap {rule['gap']:.4f})")
            walk(node["left"], indent + 1)
            lines.append(f"{pad}else")
            walk(node["right"], indent + 1)

        walk(0, 0)
        return "\n".join(lines)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


# ---- the transform -------------------------------------------------------------------------


def _room(lengths, shp):
    """(n, k) the last start of each shapelet in each series: len - span, < 0 when the series
    is shorter than the shapelet's span (it then lies along the shapelet)."""
    span = np.array([(s.length - 1) * s.dilation + 1 for s in shp], dtype=np.int64)
    return np.asarray(lengths, np.int64)[:, None] - span[None, :]


def _alignments(lengths, shp):
    """(n, k) how many places each shapelet has in each series, the count the C library's
    occurrences are out of: per phase of the series (d of them, n = q d + r: r phases of
    q + 1 points, d - r of q), |phase - length| + 1 (a window of the phase, or a place of a
    shorter phase along the shapelet). len - span + 1 when every phase holds the shapelet."""
    n = np.asarray(lengths, np.int64)[:, None]
    ln = np.array([s.length for s in shp], dtype=np.int64)[None, :]
    d = np.array([s.dilation for s in shp], dtype=np.int64)[None, :]
    q, r = n // d, n % d
    return (r * (np.abs(q + 1 - ln) + 1) + (d - r) * (np.abs(q - ln) + 1)).astype(np.float64)


class ShapeletTransform(TransformerMixin, BaseEstimator):
    """Distances to the k best diverse shapelets, as features.

    fit() ranks every candidate by its best split (information gain, then gap) and keeps the
    ``n_shapelets`` best with no two overlapping in the same training series, all found in
    one pass over the candidates. transform(X) gives the (n_series, ``n_shapelets_``) matrix of
    distances of every series to every kept shapelet (fewer columns when fewer candidates
    split the data).

    Parameters
    ----------
    n_shapelets : int or 'auto', default 'auto'
        How many shapelets to keep; 'auto': 10 per training series, at most 1000 (the rule
        of aeon's ShapeletTransformClassifier for its max_shapelets). A linear classifier
        on standardised features (e.g. StandardScaler + RidgeClassifierCV) copes with
        many more features than series; in bench/shapelets_cpu.py a fixed 100 cost
        ArrowHead 7 points of test accuracy against 'auto' and helped no dataset
        (bench/RESULTS.md, "Shapelets, CPU").
    min_length, max_length, length_step : int
    dilation : int or sequence of int, default 1
        The candidates' dilations (RDST's dilated shapelets, Guillaume et al. 2022): with
        dilation d a candidate is X[i][s], X[i][s + d], .. and is compared with windows
        spaced alike, a pattern at a coarser time scale. Each dilation is searched over the
        lengths of the grid that fit (at most floor(longest / d)); the k best of all of
        them are kept (no two overlapping spans of the same dilation in a series).
    one_vs_rest : bool, default False
        The binary shapelets of Bostrom and Bagnall (2017), as aeon's
        ShapeletTransformClassifier selects them: each candidate is judged on the split of
        its own series' class against all the other classes together (its information
        gain on a two-class order line), and at most ``n_shapelets // C`` (at least 1) are
        kept from the series of each of the C classes, so that every class has its own
        shapelets. The same single pass over the candidates; with two classes only the
        balance changes.
    normalize : True, False or 'both', default True
        True: z-normalised shapelets (shapes, as aeon's ShapeletTransformClassifier); False:
        shapelets compared as they are, by the length-normalised Euclidean distance of the
        values (level and scale too: RDST's non-normalised shapelets, e.g. JapaneseVowels,
        whose channels' levels tell its classes apart); 'both': both kinds searched and the
        k best of all kept (``Shapelet.normalized`` says which each is).
    features : str or sequence of str, default 'distance'
        What transform() gives for each shapelet, one block of ``n_shapelets_`` columns per
        name, in the order given:

        - 'distance': the distance to the series (the shapelet transform of Hills et al.);
        - 'occurrence': the share of the series' windows within the shapelet's threshold
          (``d <= threshold``, the split found in fit), in [0, 1]: how often the pattern
          appears, where the distance says how well it appears once (RDST's "shapelet
          occurrence", Guillaume et al. 2022, normalised by the number of windows so
          that series of different lengths compare; a series shorter than the shapelet
          counts its places along the shapelet);
        - 'position': the start of the best match over the last possible start, in [0, 1]
          (in [-1, 0] for a series shorter than the shapelet: where it lies along it).

        ('distance', 'occurrence') gives a linear classifier what it cannot draw from
        distances alone on series where a pattern recurs; in bench/shapelets_cpu.py it
        was chosen by cross-validation on the training sets (bench/RESULTS.md).

    Multivariate series: X of shape (n, len, channels) (tswarp's layout), or a list of
    (len_i, channels) arrays of any lengths; aeon's (n, channels, len) and its
    unequal-length collections of (channels, len_i) arrays (e.g. JapaneseVowels) with
    ``layout='channels_first'``. Every channel is searched on its own and the k best
    shapelets of all channels are kept (no two overlapping in the same series and channel),
    each compared with its own channel (``Shapelet.channel``), as aeon's
    ShapeletTransformClassifier does with its channel-specific shapelets.
    device : 'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all' or a list of GPUs (the same
        shapelets on every device)
    n_jobs : int, optional
    progress : bool or callable, default False
        True draws a bar of the candidates evaluated (every dilation, kind and channel) on
        stderr while fit() runs; a callable is called as ``progress(done, total)``. Ctrl-C
        stops fit() within a second either way.
    layout : {None, 'channels_last', 'channels_first'}
        How a 3-D X (or a list of 2-D series) is laid out (see :func:`tswarp.cdist`). None
        reads tswarp's layout and refuses a shape that may be the other one, such as aeon's
        univariate (n, 1, len).

    Attributes
    ----------
    shapelets_ : list of Shapelet, best first
    n_shapelets_ : int
    features_ : tuple of str, the feature blocks of transform()
    n_channels_ : int, 1 for univariate series
    classes_ : ndarray

    Notes on scikit-learn's check_estimator: every check passes except
    ``check_n_features_in_after_fitting`` and ``check_transformer_general``, which require an
    error for a number of time points other than in fit (see ShapeletTreeClassifier:
    series of any length are valid inputs); the rest of the latter is exercised in
    tests/python/test_shapelets.py.
    """

    _FEATURES = ("distance", "occurrence", "position")

    def __init__(self, n_shapelets="auto", min_length=3, max_length=None, length_step=1,
                 dilation=1, one_vs_rest=False, normalize=True, features="distance",
                 device="auto", n_jobs=None, progress=False, layout=None):
        self.n_shapelets = n_shapelets
        self.min_length = min_length
        self.max_length = max_length
        self.length_step = length_step
        self.dilation = dilation
        self.one_vs_rest = one_vs_rest
        self.normalize = normalize
        self.features = features
        self.device = device
        self.n_jobs = n_jobs
        self.progress = progress
        self.layout = layout

    def _feature_names(self):
        f = self.features
        names = (f,) if isinstance(f, str) else f
        try:
            names = tuple(names)
        except TypeError:
            raise TypeError(f"features must be a str or a sequence of str, got "
                            f"{type(f).__name__}") from None
        bad = [n for n in names if not isinstance(n, str) or n not in self._FEATURES]
        if not names or bad or len(set(names)) != len(names):
            raise ValueError(f"features must name one or more of {self._FEATURES}, each once; "
                             f"got {f!r}")
        return names

    def fit(self, X, y):
        features = self._feature_names()
        code = check_layout(self.layout)
        chans, parts = _channels(X, code)
        Xcs = _channel_series(parts, chans, code)
        Xs = Xcs[0]
        classes, codes = _encode(y, len(Xs))
        _check_two(Xs, codes, classes)
        shortest, longest = int(Xs.lengths.min()), int(Xs.lengths.max())
        lengths = _lengths_arg(self.min_length, self.max_length, self.length_step, longest)
        dils = _dilations_arg(self.dilation, shortest, longest, self.min_length)
        k = self.n_shapelets
        if isinstance(k, str) and k == "auto":
            k = min(10 * len(Xs), 1000)
        elif isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"n_shapelets must be a positive int or 'auto', got {k!r}")
        # the k best are kept out of the candidates: more than there are asks for memory
        # (k entries) to no purpose
        k = min(int(k), _n_candidates(Xs.lengths, lengths, dils))
        ovr = check_bool(self.one_vs_rest, "one_vs_rest")
        norms = _normalize_arg(self.normalize)
        minl, maxl, step = lengths
        # (rank key, kind, channel, result): the k best of each kind (normalised or not),
        # dilation and channel, then the k best of all (the non-overlap rule is per kind and
        # dilation)
        found = []
        runs = list(itertools.product(dils, norms, range(len(Xcs))))
        # progress in candidates: each search weighs the candidates of its dilation
        weights = [_n_candidates(Xcs[c].lengths, lengths, (d,)) for d, _, c in runs]
        starts = np.concatenate([[0], np.cumsum(weights)]).tolist()
        bar = make_progress(self.progress, "ShapeletTransform", "candidates")
        share = _Share(bar, starts[-1])
        try:
            for i, (d, norm, c) in enumerate(runs):
                # the grid's lengths that fit this dilation
                top = min(maxl or longest, longest // d)
                top = minl + (top - minl) // step * step
                Xc = Xcs[c]
                for r in _tswarp._shapelet_top(Xc.values, Xc.offsets, Xc.lengths, codes,
                                               len(classes), minl, top, step,
                                               device=_device(self.device),
                                               n_jobs=self.n_jobs, k=int(k), dilation=d,
                                               one_vs_rest=ovr, raw=not norm,
                                               progress=share.part(starts[i], weights[i])):
                    found.append((_rank_key(r), not norm, c, r))
            if bar is not None:
                bar(int(starts[-1]), int(starts[-1]))
        finally:
            _close(bar)
        if not found:
            raise ValueError("no candidate splits X: every candidate is at the same distance "
                             "from every series")
        found = sorted(found)  # ties between channels: the lower channel first
        if ovr:  # each call kept at most k // C of a class: the same cap over all of them
            per, used = max(1, int(k) // len(classes)), np.zeros(len(classes), np.int64)
            keep = []
            for f in found:
                c = codes[f[3][0]]
                if used[c] < per:
                    used[c] += 1
                    keep.append(f)
            found = keep
        found = found[:int(k)]
        self.classes_ = classes
        _set_n_features(self, X, Xs)
        self.shapelets_ = [_to_shapelet(Xcs[c], r, c, not raw, classes[codes])
                           for _, raw, c, r in found]
        self.n_shapelets_ = len(self.shapelets_)
        self.n_channels_ = len(Xcs)
        self.features_ = features
        return self

    def transform(self, X):
        check_is_fitted(self, "shapelets_")
        code = check_layout(self.layout)
        chans, parts = _channels(X, code)
        fitted = getattr(self, "n_channels_", 1)
        got = 1 if chans is None else chans
        if got != fitted:
            raise ValueError(f"X has {got} channel(s) but this ShapeletTransform was fitted on "
                             f"{fitted}")
        Xcs = _channel_series(parts, chans, code)
        shp = self.shapelets_
        n, k = len(Xcs[0]), len(shp)
        occ = "occurrence" in self.features_
        D, P = np.empty((n, k)), np.empty((n, k), dtype=np.int64)
        Cnt = np.empty((n, k), dtype=np.int64) if occ else None
        for c, Xc in enumerate(Xcs):  # each channel's shapelets against that channel
            cols = [j for j, s in enumerate(shp) if s.channel == c]
            if not cols:
                continue
            thr = np.array([shp[j].threshold for j in cols]) if occ else None
            dil = [shp[j].dilation for j in cols]
            r = _distances([shp[j].values for j in cols], Xc, _device(self.device),
                           self.n_jobs, thresholds=thr,
                           dilations=None if max(dil) == 1 else dil,
                           normalized=[shp[j].normalized for j in cols])
            D[:, cols], P[:, cols] = r[0], r[1]
            if occ:
                Cnt[:, cols] = r[2]
        blocks = {"distance": lambda: D,
                  "occurrence": lambda: Cnt / _alignments(Xcs[0].lengths, shp),
                  "position": lambda: P / np.maximum(np.abs(_room(Xcs[0].lengths, shp)), 1.0)}
        return np.hstack([blocks[f]() for f in self.features_])

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "shapelets_")
        suffix = {"distance": "", "occurrence": "_occurrence", "position": "_position"}
        return np.array([f"shapelet{i}{suffix[f]}" for f in self.features_
                         for i in range(self.n_shapelets_)], dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.required = True
        return tags
