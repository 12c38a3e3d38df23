"""Readers for time-series collections and writers for distance matrices.

Every reader returns ``(series, labels)``:

- ``series`` has one of the shapes that :func:`tswarp.cdist` and :func:`tswarp.pdist` accept:
  a 2-D array ``(n, len)`` when all series are univariate and of one length, a 3-D array
  ``(n, len, d)`` when they are multivariate and of one length, otherwise a list of ``(len_i,)``
  (univariate) or ``(len_i, d)`` (multivariate) arrays. Values are float64, except that a
  ``.npy`` file of float32 stays float32 (tswarp computes in the input's precision).
- ``labels`` is a 1-D array (int64 when every label is an integer, else str) or ``None``.

Formats, chosen by file extension in :func:`read_series`:

``.npy``
    NumPy array: 1-D = one series, 2-D = ``(n, len)`` univariate, 3-D = ``(n, len, d)``. No labels.
``.csv``, ``.txt``, ``.data``
    One series a line, values separated by commas or by whitespace; with ``labels_first=True`` the
    first field of each line is its label. Lines may differ in length (variable-length
    collection); trailing empty or NaN fields are padding.
``.tsv``
    UCR archive layout: label in the first column, tab separated (lines without a tab may use
    commas or spaces, as the older archive did); trailing NaN padding marks shorter series.
``.ts``
    aeon/sktime format: ``@`` header lines up to ``@data``, then one case a line, dimensions
    separated by ``:``, values by ``,``, the class label (or regression target) last; ``?`` marks a
    missing value, and trailing ``?`` values make a series shorter (variable length). Univariate,
    multivariate and unequal length are supported; timestamped cases are not.

A file that does not parse raises :class:`ParseError` naming the file, the 1-based line and, where
it helps, the field. Missing values are accepted only as trailing padding, because no tswarp
measure is defined on series with holes; non-finite values are rejected for the same reason.

Writers (:func:`write_matrix`, ``.npy`` or ``.csv``) write to a temporary file in the target's
directory and rename it over the target, so an error or Ctrl-C never leaves a half-written file.
"""

from __future__ import annotations

import math
import os
import secrets
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = [
    "ParseError",
    "read_series",
    "read_npy",
    "atomic_write",
    "read_text",
    "read_ucr_tsv",
    "read_ts",
    "write_matrix",
    "write_npy",
    "write_csv",
    "csv_lines",
    "SERIES_EXTENSIONS",
    "MATRIX_EXTENSIONS",
]

PathLike = Union[str, "os.PathLike[str]"]
Series = Union[np.ndarray, List[np.ndarray]]

SERIES_EXTENSIONS = (".npy", ".csv", ".txt", ".data", ".tsv", ".ts")
MATRIX_EXTENSIONS = (".npy", ".csv", ".txt")


class ParseError(ValueError):
    """A data file does not parse.

    ``str(err)`` reads ``"<path>:<line>: <message>"`` (``"<path>: <message>"`` when the problem
    is not on one line); the parts are kept in ``path``, ``line`` (1-based or ``None``) and
    ``reason``.
    """

    def __init__(self, path: PathLike, line: Optional[int], reason: str):
        self.path = os.fspath(path)
        self.line = line
        self.reason = reason
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {reason}")


# ---- shared helpers ------------------------------------------------------------------------


def _where_value(k: int) -> str:
    return f"value {k + 1}"


def _where_in_dimension(j: int) -> Callable[[int], str]:
    def where(k: int) -> str:
        return f"dimension {j + 1}, value {k + 1}"
    return where


def _parse_floats(tokens: Sequence[str], path, lineno: int, where: Callable[[int], str]) -> np.ndarray:
    """Parse tokens into float64; empty tokens and '?' are missing values (NaN).

    ``where(k)`` names token k for error messages ("field 3", "dimension 2, value 7").
    """
    tokens = ["nan" if t == "" or t == "?" else t for t in tokens]
    try:
        # numpy parses a whole list of strings at C speed; only on failure do we walk the
        # tokens one by one to say which one is bad.
        return np.array(tokens, dtype=np.float64)
    except ValueError:
        for k, tok in enumerate(tokens):
            try:
                float(tok)
            except ValueError:
                raise ParseError(path, lineno, f"{where(k)}: could not parse {tok!r} as a number") from None
        raise


def _trim_padding(values: np.ndarray, path, lineno: int, where: Callable[[int], str]) -> np.ndarray:
    """Drop trailing NaN padding; reject holes inside the series and infinite values."""
    nan = np.isnan(values)
    if nan.any():
        last = len(values) - int(np.argmin(nan[::-1])) if not nan.all() else 0
        inner = np.flatnonzero(nan[:last])
        if inner.size:
            raise ParseError(
                path, lineno,
                f"{where(int(inner[0]))}: missing value inside the series "
                "(only trailing padding is allowed; tswarp measures need complete series)")
        values = values[:last]
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise ParseError(path, lineno, f"{where(int(bad[0]))}: value {float(values[bad[0]])!r} is not finite")
    if values.size == 0:
        raise ParseError(path, lineno, "series has no values")
    return values


def _labels_array(labels: Sequence[str]) -> np.ndarray:
    """Integers when every label is one (``"1"``, ``"-1"``, ``"2.0"``), else strings."""
    try:
        as_float = np.array(labels, dtype=np.float64)
    except ValueError:
        return np.array(labels, dtype=str)
    if np.all(np.isfinite(as_float)) and np.all(as_float == np.round(as_float)) \
            and np.all(np.abs(as_float) < 2.0 ** 53):
        return as_float.astype(np.int64)
    return np.array(labels, dtype=str)


def _collect(rows: List[np.ndarray]) -> Series:
    """Stack equal-length series into one array, else keep the list (variable length)."""
    if rows and all(r.shape == rows[0].shape for r in rows):
        return np.stack(rows)
    return rows


def _lines(path: PathLike, keep_leading_tab: bool = False):
    """Yield (lineno, stripped line), turning a binary file into a ParseError.

    Lines are decoded one by one (a text-mode file decodes whole buffers, and would blame the
    wrong line); ``\\r\\n`` endings are stripped and a UTF-8 byte-order mark is dropped.
    With ``keep_leading_tab`` a tab that opens the line stays: it is an empty first field
    (a UCR line ``\\t1\\t2`` has no label).
    """
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                raise ParseError(path, lineno, "not a UTF-8 text file") from None
            if keep_leading_tab:
                stripped = line.rstrip().lstrip(" ")
                yield lineno, (stripped if stripped.strip() else "")
            else:
                yield lineno, line.strip()


# ---- readers -------------------------------------------------------------------------------


def _check_npy_header(path: PathLike) -> None:
    """Parse a .npy header before np.load reads anything: a header that does not parse is a
    ParseError naming the file (NumPy lets tokenize and syntax errors out of a truncated
    header), and a shape whose data the file cannot hold is refused before any allocation
    (a 200-byte file may claim a shape of hundreds of GiB)."""
    fmt = np.lib.format
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            if head[:4] == b"PK\x03\x04":
                return  # an .npz archive: np.load opens it and read_npy says so
            if head != fmt.MAGIC_PREFIX:
                return  # not a .npy at all: np.load's own message
            f.seek(0)
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, _fortran, dtype = fmt.read_array_header_1_0(f)
            else:
                shape, _fortran, dtype = fmt.read_array_header_2_0(f)
            offset = f.tell()
            size = os.fstat(f.fileno()).st_size
    except OSError:
        raise
    except Exception as e:  # SyntaxError, tokenize.TokenError, ValueError, EOFError, ...
        raise ParseError(path, None,
                         f"not a readable .npy array (its header does not parse: "
                         f"{type(e).__name__}: {e})") from None
    if dtype.hasobject:
        return  # refused by np.load(allow_pickle=False) with its message
    need = math.prod(int(k) for k in shape) * dtype.itemsize
    if need > size - offset:
        raise ParseError(path, None,
                         f"header claims an array of shape {tuple(shape)} ({need} bytes) but "
                         f"the file holds {max(size - offset, 0)} bytes of data (truncated?)")


def read_npy(path: PathLike) -> Tuple[np.ndarray, None]:
    """Read a ``.npy`` array: 1-D = one series, 2-D = (n, len), 3-D = (n, len, d)."""
    _check_npy_header(path)
    try:
        a = np.load(path, allow_pickle=False)
    except (ValueError, EOFError) as e:
        # np.load says "Cannot load file containing pickled data..." or "... not a npy file".
        raise ParseError(path, None, f"not a readable .npy array ({e})") from None
    if not isinstance(a, np.ndarray):  # np.load opened an .npz archive (renamed to .npy)
        a.close()
        raise ParseError(path, None, "holds an .npz archive, not one .npy array")
    if a.dtype.kind not in "biuf":
        raise ParseError(path, None, f"array of dtype {a.dtype} is not numeric")
    if a.ndim == 1:
        a = a[np.newaxis, :]
    elif a.ndim not in (2, 3):
        raise ParseError(path, None,
                         f"array has {a.ndim} dimensions; "
                         "expected 1 (one series), 2 (n, len) or 3 (n, len, d)")
    if 0 in a.shape:
        raise ParseError(path, None, f"array of shape {a.shape} is empty")
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    return np.ascontiguousarray(a), None


def _split_delimited(line: str, tab_first: bool) -> List[str]:
    if tab_first and "\t" in line:
        return [t.strip() for t in line.split("\t")]
    if "," in line:
        return [t.strip() for t in line.split(",")]
    return line.split()


def _read_rows(path: PathLike, labels_first: bool, tab_first: bool, what: str):
    rows: List[np.ndarray] = []
    labels: List[str] = []
    for lineno, line in _lines(path, keep_leading_tab=labels_first and tab_first):
        if not line or line.startswith("#"):
            continue
        tokens = _split_delimited(line, tab_first)
        offset = 1
        if labels_first:
            label = tokens.pop(0)
            if label in ("", "?"):
                raise ParseError(path, lineno, "field 1: missing label")
            labels.append(label)
            offset = 2
        where = lambda k, o=offset: f"field {k + o}"  # noqa: E731
        try:
            values = _parse_floats(tokens, path, lineno, where)
        except ParseError as e:
            if not rows and not labels_first:
                # The first line of a csv is often a header; say so.
                hint = " (a header line? remove it or start it with '#')"
                raise ParseError(path, lineno, e.reason + hint) from None
            raise
        rows.append(_trim_padding(values, path, lineno, where))
    if not rows:
        raise ParseError(path, None, f"no series found (expected {what})")
    return _collect(rows), (_labels_array(labels) if labels_first else None)


def read_text(path: PathLike, *, labels_first: bool = False) -> Tuple[Series, Optional[np.ndarray]]:
    """Read ``.csv``/``.txt``: one univariate series a line, comma or whitespace separated.

    Blank lines and lines starting with ``#`` are skipped. With ``labels_first`` the first field of
    each line is its label.
    """
    return _read_rows(path, labels_first, tab_first=False,
                      what="one series a line, values separated by commas or whitespace")


def read_ucr_tsv(path: PathLike) -> Tuple[Series, np.ndarray]:
    """Read a UCR archive ``.tsv``: label first, then the values, tab separated, NaN padded."""
    return _read_rows(path, labels_first=True, tab_first=True,
                      what="one series a line: label, then values, tab separated")


_TS_BOOL_KEYS = ("@timestamps", "@missing", "@univariate", "@equallength")


def _ts_bool(path, lineno, key, tokens) -> bool:
    if len(tokens) < 2 or tokens[1].lower() not in ("true", "false"):
        raise ParseError(path, lineno, f"{key} must be followed by true or false")
    return tokens[1].lower() == "true"


def read_ts(path: PathLike) -> Tuple[Series, Optional[np.ndarray]]:
    """Read the aeon/sktime ``.ts`` format (univariate, multivariate, unequal length).

    Header keys are case-insensitive (``@timeStamps`` and ``@timestamps`` both occur in the
    wild). Labels come from ``@classLabel true ...`` (checked against the declared classes) or
    ``@targetLabel true`` (a float regression target).
    """
    header: Dict[str, Any] = {}
    class_labels: Optional[List[str]] = None
    has_label = False
    is_target = False
    in_data = False
    n_dims: Optional[int] = None
    dims_source = ""
    rows: List[np.ndarray] = []
    labels: List[str] = []

    for lineno, line in _lines(path):
        if not line or line.startswith("#"):
            continue
        if not in_data:
            if not line.startswith("@"):
                raise ParseError(path, lineno, "expected a header line starting with '@' before @data, "
                                               f"got {line[:40]!r}")
            tokens = line.split()
            key = tokens[0].lower()
            if key in _TS_BOOL_KEYS:
                header[key] = _ts_bool(path, lineno, tokens[0], tokens)
                if key == "@timestamps" and header[key]:
                    raise ParseError(path, lineno,
                                     "timestamped .ts data ('@timeStamps true') is not supported")
            elif key in ("@dimensions", "@dimension", "@serieslength"):
                try:
                    header[key] = int(tokens[1])
                    if header[key] < 1:
                        raise ValueError
                except (IndexError, ValueError):
                    raise ParseError(path, lineno,
                                     f"{tokens[0]} must be followed by a positive integer") from None
                if key != "@serieslength":
                    n_dims, dims_source = header[key], f"{tokens[0]} {header[key]}"
            elif key == "@classlabel":
                has_label = _ts_bool(path, lineno, tokens[0], tokens)
                class_labels = tokens[2:] if has_label else None
                if has_label and not class_labels:
                    raise ParseError(path, lineno, "@classLabel true must list the class labels")
            elif key == "@targetlabel":
                has_label = is_target = _ts_bool(path, lineno, tokens[0], tokens)
            elif key == "@problemname":
                header[key] = " ".join(tokens[1:])
            elif key == "@data":
                in_data = True
                if header.get("@univariate") and n_dims is None:
                    n_dims, dims_source = 1, "@univariate true"
            else:
                raise ParseError(path, lineno, f"unknown header keyword {tokens[0]!r}")
            continue

        # One case: dim_1 ':' dim_2 ':' ... [':' label].
        fields = line.split(":")
        if has_label:
            if len(fields) < 2:
                raise ParseError(path, lineno, "expected values and a label separated by ':'")
            label = fields.pop().strip()
            if class_labels is not None and label not in class_labels:
                raise ParseError(path, lineno,
                                 f"label {label!r} is not one of the classes declared in @classLabel "
                                 f"({' '.join(class_labels)})")
            if is_target:
                try:
                    float(label)
                except ValueError:
                    raise ParseError(path, lineno, f"target {label!r} is not a number") from None
            labels.append(label)
        if n_dims is None:
            n_dims, dims_source = len(fields), f"line {lineno}"
        elif len(fields) != n_dims:
            raise ParseError(path, lineno,
                             f"case has {len(fields)} dimensions, expected {n_dims} (from {dims_source})")

        dims = []
        for j, field in enumerate(fields):
            field = field.strip()
            if field.startswith("("):
                raise ParseError(path, lineno, "timestamped .ts data '(time,value)' is not supported")
            where = _where_in_dimension(j) if n_dims > 1 else _where_value
            values = _parse_floats([t.strip() for t in field.split(",")], path, lineno, where)
            dims.append(_trim_padding(values, path, lineno, where))
        lengths = {len(v) for v in dims}
        if len(lengths) > 1:
            raise ParseError(path, lineno,
                             "dimensions of one case differ in length ("
                             + ", ".join(str(len(v)) for v in dims) + ")")
        series = dims[0] if n_dims == 1 else np.stack(dims, axis=1)  # (len,) or (len, d)
        if header.get("@equallength") and rows and len(series) != len(rows[0]):
            raise ParseError(path, lineno,
                             f"@equalLength true, but this case has length {len(series)} "
                             f"and the first has {len(rows[0])}")
        rows.append(series)

    if not in_data:
        raise ParseError(path, None, "no @data line found (not an aeon/sktime .ts file?)")
    if not rows:
        raise ParseError(path, None, "no cases after @data")
    if not has_label:
        y = None
    elif is_target:
        y = np.array(labels, dtype=np.float64)
    else:
        y = _labels_array(labels)
    return _collect(rows), y


_READERS = {
    ".npy": "npy", ".csv": "text", ".txt": "text", ".data": "text", ".tsv": "tsv", ".ts": "ts",
}


def read_series(path: PathLike, *, labels_first: bool = False,
                fmt: Optional[str] = None) -> Tuple[Series, Optional[np.ndarray]]:
    """Read a collection of series, choosing the reader by extension (or ``fmt``).

    ``fmt`` is one of ``"npy"``, ``"text"`` (csv/txt), ``"tsv"`` (UCR) or ``"ts"`` (aeon/sktime).
    ``labels_first`` applies to csv/txt only (UCR .tsv always has the label first).
    """
    if fmt is None:
        ext = os.path.splitext(os.fspath(path))[1].lower()
        fmt = _READERS.get(ext)
        if fmt is None:
            raise ValueError(f"path: cannot tell the format of {os.fspath(path)!r} from its extension "
                             f"(expected one of {', '.join(SERIES_EXTENSIONS)})")
    if fmt == "npy":
        return read_npy(path)
    if fmt == "text":
        return read_text(path, labels_first=labels_first)
    if fmt == "tsv":
        return read_ucr_tsv(path)
    if fmt == "ts":
        return read_ts(path)
    raise ValueError(f"fmt: expected 'npy', 'text', 'tsv' or 'ts', got {fmt!r}")


# ---- writers -------------------------------------------------------------------------------


def atomic_write(path: PathLike, binary: bool, write: Callable) -> None:
    """Write through ``write(file)`` into a temporary sibling, then rename it over ``path``.

    The temporary file lives in the target's directory so that ``os.replace`` is a rename on one
    file system (atomic on POSIX); a new file is created with mode 0666 so the umask applies as
    for a plain ``open``, and an existing target keeps its mode. A symbolic link is written
    through: its target is replaced, the link stays. Any exception, KeyboardInterrupt
    included (the CLI turns SIGTERM into one), removes the temporary file, so an
    interrupted write or a full disk never leaves a truncated file behind.
    """
    path = os.path.realpath(os.fspath(path))  # through symlinks: the file they point to
    directory, base = os.path.split(path)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as e:  # name the file asked for, not the temporary one
        raise OSError(e.errno, e.strerror, path) from None
    try:
        text_args: Dict[str, Any] = {} if binary else {"encoding": "utf-8", "newline": "\n"}
        with os.fdopen(fd, "wb" if binary else "w", **text_args) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and e.filename in (None, tmp):
            # a full disk (ENOSPC from write or fsync) names no file: say which one
            raise OSError(e.errno, e.strerror, path) from None
        raise


def _check_matrix(D) -> np.ndarray:
    D = np.asarray(D)
    if D.ndim not in (1, 2):
        raise ValueError(f"D: expected a 2-D matrix or a 1-D condensed vector, got {D.ndim} dimensions")
    if D.dtype.kind not in "biuf":
        raise TypeError(f"D: expected a numeric array, got dtype {D.dtype}")
    return D


def write_npy(path: PathLike, D) -> None:
    """Write an array to ``.npy`` atomically (never a half-written file)."""
    D = _check_matrix(D)
    atomic_write(path, True, lambda f: np.save(f, D, allow_pickle=False))


def csv_lines(D):
    """Yield the csv lines of a matrix (a 1-D condensed vector is one line), newline included.

    float64 values are written in their shortest round-trip form (``repr``), float32 with 9
    significant digits, which round-trips float32.
    """
    D = _check_matrix(D)
    rows = D.reshape(1, -1) if D.ndim == 1 else D
    if D.dtype == np.float32:
        for row in rows:
            yield ",".join("%.9g" % v for v in row.tolist()) + "\n"
    else:
        for row in rows:
            yield ",".join(map(repr, row.tolist())) + "\n"


def write_csv(path: PathLike, D) -> None:
    """Write a matrix as csv (see :func:`csv_lines`) atomically."""
    D = _check_matrix(D)
    atomic_write(path, False, lambda f: f.writelines(csv_lines(D)))


def write_matrix(path: PathLike, D) -> None:
    """Write a distance matrix to ``.npy`` or ``.csv``/``.txt``, chosen by extension."""
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext == ".npy":
        write_npy(path, D)
    elif ext in (".csv", ".txt"):
        write_csv(path, D)
    else:
        raise ValueError(f"path: cannot write {os.fspath(path)!r}: expected a .npy or .csv file name")
