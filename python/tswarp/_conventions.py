"""tswarp's conventions, checked in one place: array layout, windows and parameter kinds.

Every public function, estimator and CLI subcommand reads its arguments through these
helpers (the C binding ``_tswarp.c`` applies the same rules, with the same messages, on
its fast path), so that a value means one thing everywhere:

* **Layout.** A series is ``(length, dim)``, a collection ``(n_series, length, dim)``
  (``layout="channels_last"``: tslearn's, dtaidistance's and the C API's layout). aeon's
  and sktime's ``(n_series, channels, length)`` is read with ``layout="channels_first"``.
  Without ``layout``, an array whose shape could be the other layout is refused: a series
  ``(r, c)`` or a collection ``(n, r, c)`` with ``c > 1`` and ``c >= r`` (as many dims as
  time points or more, e.g. aeon's univariate ``(n, 1, length)``), so that one layout can
  never be silently read as the other. 1-D series and 2-D collections ``(n, length)`` are
  univariate in both layouts.
* **Windows.** ``radius`` is a Sakoe-Chiba radius in cells (an int; tslearn's
  ``sakoe_chiba_radius``), ``window`` a fraction of the shorter length in [0, 1] (aeon's
  ``window``: 1 and 1.0 are both the full band), ``itakura_max_slope`` the Itakura
  parallelogram's slope. At most one of them; no parameter changes meaning with its type.
* **Parameter kinds.** Booleans are ``True``/``False`` (numpy's bool too), as scikit-learn
  takes them; integers refuse floats and bools; reals refuse bools, complex numbers and
  strings.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any, Optional, Tuple

import numpy as np

__all__ = [
    "LAYOUTS",
    "check_layout",
    "series_transpose",
    "collection_transpose",
    "as_series",
    "as_collection",
    "from_layout",
    "band",
    "check_bool",
    "check_int",
    "check_real",
    "check_n_jobs",
]

LAYOUTS = ("channels_last", "channels_first")

# layout codes, as the C binding uses them
GUARD, LAST, FIRST = 0, 1, 2


def check_layout(layout: Any) -> int:
    """None (the library's layout, ambiguous shapes refused), 'channels_last' or
    'channels_first' -> GUARD, LAST or FIRST."""
    if layout is None:
        return GUARD
    if not isinstance(layout, str):
        raise TypeError(f"layout must be None, 'channels_last' or 'channels_first', got "
                        f"{type(layout).__name__}")
    if layout == "channels_last":
        return LAST
    if layout == "channels_first":
        return FIRST
    raise ValueError(f"layout must be None, 'channels_last' (n_series, length, dim) or "
                     f"'channels_first' (n_series, channels, length), got {layout!r}")


def _ambiguous(label: str, shape: Tuple[int, ...], collection: bool) -> ValueError:
    if collection:
        n, r, c = shape
        read = f"{n} series of length {r} with {c} dims"
        ours = "(n_series, length, dim)"
        theirs = "(n_series, channels, length)"
    else:
        r, c = shape
        read = f"{r} time point{'s' if r != 1 else ''} of {c} dims"
        ours = "(length, dim)"
        theirs = "(channels, length)"
    return ValueError(
        f"{label} has shape {tuple(shape)}, which tswarp's layout {ours} reads as {read}. If "
        f"it is aeon/sktime's {theirs}, pass layout='channels_first'; if it is what it says, "
        f"pass layout='channels_last'")


def series_transpose(shape: Tuple[int, ...], label: str, code: int) -> bool:
    """Whether one series of this shape must be transposed to (length, dim); raises the
    layout error for an ambiguous 2-D shape when no layout was given."""
    if len(shape) != 2:
        return False
    if code == FIRST:
        return True
    if code == GUARD and shape[1] > 1 and shape[1] >= shape[0]:
        raise _ambiguous(label, tuple(shape), False)
    return False


def collection_transpose(shape: Tuple[int, ...], label: str, code: int) -> bool:
    """Whether a 3-D collection of this shape must be transposed to (n, length, dim)."""
    if len(shape) != 3:
        return False
    if code == FIRST:
        return True
    if code == GUARD and shape[2] > 1 and shape[2] >= shape[1]:
        raise _ambiguous(label, tuple(shape), True)
    return False


def as_series(x: Any, label: str, code: int) -> np.ndarray:
    """One series as an ndarray in tswarp's layout ((len,) or (len, dim)); values are
    not converted or checked here."""
    a = np.asarray(x)
    if series_transpose(a.shape, label, code):
        a = a.T
    return a


def as_collection(X: Any, label: str, code: int):
    """A collection in tswarp's layout: a 2-D/3-D ndarray (transposed to (n, length, dim)
    when needed), or a list of series each in (len,) / (len, dim). Shapes other than
    these are left for the caller's own checks."""
    ragged = isinstance(X, (list, tuple)) or (
        isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 1)
    if ragged:
        return [as_series(s, f"{label}[{i}]", code) for i, s in enumerate(X)]
    a = np.asarray(X)
    if collection_transpose(a.shape, label, code):
        a = a.transpose(0, 2, 1)
    return a


def from_layout(a: np.ndarray, code: int) -> np.ndarray:
    """A series (2-D) or a collection (3-D) in tswarp's layout back in the caller's."""
    if code != FIRST or a.ndim < 2:
        return a
    return a.T if a.ndim == 2 else a.transpose(0, 2, 1)


# ---- windows -------------------------------------------------------------------------------

# band kinds, as tsw_window numbers them
BAND_NONE, BAND_RADIUS, BAND_FRACTION, BAND_ITAKURA = 0, 1, 2, 3


def band(window: Any = None, radius: Any = None,
         itakura_max_slope: Any = None) -> Tuple[int, float]:
    """(kind, value) of the global constraint: (0, 0) none, (1, r) radius in cells,
    (2, f) fraction, (3, s) Itakura slope."""
    given = [n for n, v in (("window", window), ("radius", radius),
                            ("itakura_max_slope", itakura_max_slope)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give at most one of window (a fraction), radius (cells) and "
                         f"itakura_max_slope; got {' and '.join(given)}")
    if itakura_max_slope is not None:
        s = check_real(itakura_max_slope, "itakura_max_slope", low=1.0)
        return BAND_ITAKURA, s
    if radius is not None:
        if isinstance(radius, (bool, np.bool_)) or not isinstance(radius, numbers.Real):
            raise TypeError(f"radius must be an int (a Sakoe-Chiba radius in cells), got "
                            f"{type(radius).__name__}")
        r = float(radius)
        if isinstance(radius, numbers.Integral):
            r = int(radius)
        elif not (math.isfinite(r) and r == math.floor(r)):
            raise ValueError(f"radius={radius!r}: a radius is a whole number of cells; for a "
                             f"fraction of the length pass window={radius!r}")
        if r < 0:
            raise ValueError(f"radius must be >= 0 (cells), got {radius!r}")
        if r >= 2**53:
            return BAND_NONE, 0.0  # beyond any length: no constraint
        return BAND_RADIUS, float(r)
    if window is not None:
        if isinstance(window, (bool, np.bool_)) or not isinstance(window, numbers.Real):
            raise TypeError(f"window must be a real number in [0, 1] (a fraction of the "
                            f"shorter length), got {type(window).__name__}")
        f = float(window)
        if not 0.0 <= f <= 1.0:
            raise ValueError(f"window={window!r}: window is a fraction of the shorter length in "
                             f"[0, 1] (aeon's window); for a Sakoe-Chiba radius in cells pass "
                             f"radius={window!r}")
        return BAND_FRACTION, f
    return BAND_NONE, 0.0


# ---- parameter kinds ----------------------------------------------------------------------


def check_bool(value: Any, name: str) -> bool:
    """True/False (numpy's bool too); anything else is a TypeError (a string such as 'no'
    is not a bool, and neither is 1)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")


def check_int(value: Any, name: str, low: Optional[int] = None,
              high: Optional[int] = None) -> int:
    """An int (numpy's too; bool and float refused) in [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    v = int(value)
    if low is not None and v < low:
        raise ValueError(f"{name} must be >= {low}, got {v}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high}, got {v}")
    return v


def check_real(value: Any, name: str, low: Optional[float] = None, strict: bool = False,
               high: Optional[float] = None) -> float:
    """A finite real (int or float, numpy's too; bool, complex and str refused) >= low
    (> low when strict) and <= high."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    v = float(value)
    bound = ""
    if low is not None:
        bound = f" {'>' if strict else '>='} {low:g}"
    if high is not None:
        bound += f"{' and' if bound else ''} <= {high:g}"
    if not math.isfinite(v) or (low is not None and (v < low or (strict and v == low))) or (
            high is not None and v > high):
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return v


def check_n_jobs(n_jobs: Any, name: str = "n_jobs") -> int:
    """None or -1: every core (0 for the C library); else an int >= 1, clamped to the
    cores this process may use (more threads than that only slow a call down, and a huge
    count would exhaust the OpenMP runtime)."""
    if n_jobs is None:
        return 0
    v = check_int(n_jobs, name)
    if v == -1:
        return 0
    if v < 1:
        raise ValueError(f"{name} must be None, -1 (all cores) or an int >= 1, got {v}")
    return min(v, _cores())


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
