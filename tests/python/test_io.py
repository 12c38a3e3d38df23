"""tswarp.io readers and writers, and the shipped dataset.

Round trips write random collections (fresh per run, see conftest's `rng`) in every format and
read them back exactly; the .ts reader is also checked against aeon's own loader on the files
aeon bundles (univariate, multivariate, variable length). Every ParseError names file and line.
"""

import os
import pathlib
import stat

import numpy as np
import pytest

from tswarp import io as tsio
from tswarp.datasets import DATA_DIR, gunpoint_path, load_gunpoint

from conftest import peer


def fmt(v):
    return repr(float(v))


def write_text(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def assert_same_collection(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape
        assert a.dtype == np.float64
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------------------
# .npy
# ---------------------------------------------------------------------------------------
def test_npy_shapes_and_dtypes(tmp_path, rng):
    one = rng.standard_normal(17)
    np.save(tmp_path / "one.npy", one)
    X, y = tsio.read_series(tmp_path / "one.npy")
    assert y is None and X.shape == (1, 17)
    np.testing.assert_array_equal(X[0], one)

    uni = rng.standard_normal((5, 9))
    np.save(tmp_path / "uni.npy", uni)
    X, _ = tsio.read_series(tmp_path / "uni.npy")
    assert X.shape == (5, 9) and X.dtype == np.float64
    np.testing.assert_array_equal(X, uni)

    multi = rng.standard_normal((4, 7, 3)).astype(np.float32)
    np.save(tmp_path / "multi.npy", multi)
    X, _ = tsio.read_series(tmp_path / "multi.npy")
    assert X.shape == (4, 7, 3) and X.dtype == np.float32  # float32 stays float32

    np.save(tmp_path / "int.npy", np.arange(12).reshape(3, 4))
    X, _ = tsio.read_series(tmp_path / "int.npy")
    assert X.dtype == np.float64 and X[2, 3] == 11.0

    # Fortran order and negative strides are stored by np.save; reading gives C-contiguous data.
    np.save(tmp_path / "fortran.npy", np.asfortranarray(uni[:, ::-1]))
    X, _ = tsio.read_series(tmp_path / "fortran.npy")
    assert X.flags.c_contiguous
    np.testing.assert_array_equal(X, uni[:, ::-1])


@pytest.mark.parametrize("make, message", [
    (lambda p: np.save(p, np.zeros((2, 3, 4, 5))), "4 dimensions"),
    (lambda p: np.save(p, np.array(["a", "b"])), "not numeric"),
    (lambda p: np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True), "not a readable .npy"),
    (lambda p: np.save(p, np.zeros((0, 5))), "empty"),
    (lambda p: pathlib.Path(p).write_text("1,2,3\n"), "not a readable .npy"),
    (lambda p: (np.savez(f"{p}.npz", a=np.zeros(3)), os.replace(f"{p}.npz", p)), "holds an .npz archive"),
])
def test_npy_errors(tmp_path, make, message):
    path = tmp_path / "bad.npy"
    make(path)
    with pytest.raises(tsio.ParseError, match=message) as info:
        tsio.read_series(path)
    assert str(info.value).startswith(f"{path}: ")
    assert info.value.path == str(path) and info.value.line is None


def _npy_with_header(path, text, data=b""):
    """A .npy file whose header dict is `text` (padded as NumPy pads it)."""
    body = text.encode("latin1")
    pad = 64 - (10 + len(body) + 1) % 64
    header = body + b" " * pad + b"\n"
    pathlib.Path(path).write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                                   + header + data)


@pytest.mark.parametrize("text", [
    "{'descr': '<f8', 'fortran_order': False, 'sha",      # tokenize.TokenError in NumPy
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,",
    "{'descr': '<f8',\n  'fortran_order': False}",      # IndentationError / SyntaxError
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': [",
])
def test_npy_truncated_header_names_the_file(tmp_path, text):
    # issue 36 item 19: NumPy's header parser lets Python syntax errors out
    path = tmp_path / "cut.npy"
    _npy_with_header(path, text, b"\0" * 24)
    with pytest.raises(tsio.ParseError, match="header does not parse") as info:
        tsio.read_series(path)
    assert str(info.value).startswith(f"{path}: ")


def test_npy_shape_larger_than_file_refused_before_allocation(tmp_path):
    path = tmp_path / "huge.npy"
    _npy_with_header(path, "{'descr': '<f8', 'fortran_order': False, 'shape': (80000, 80000, 10), }",
                     b"\0" * 100)
    assert path.stat().st_size < 300
    with pytest.raises(tsio.ParseError, match=r"shape \(80000, 80000, 10\) \(512000000000 bytes\)"):
        tsio.read_series(path)
    # a file cut inside its data
    full = tmp_path / "full.npy"
    np.save(full, np.arange(100.0))
    cut = tmp_path / "cut.npy"
    cut.write_bytes(full.read_bytes()[:300])
    with pytest.raises(tsio.ParseError, match="truncated"):
        tsio.read_series(cut)


def test_ucr_empty_label_field(tmp_path):
    # issue 36 item 12: the first value must not become the label
    bad = write_text(tmp_path / "nolabel.tsv", "1\t0.5\t0.25\n\t1\t2\t3\n")
    with pytest.raises(tsio.ParseError, match=r"nolabel\.tsv:2: field 1: missing label"):
        tsio.read_series(bad)


# ---------------------------------------------------------------------------------------
# .csv / .txt
# ---------------------------------------------------------------------------------------
def test_csv_round_trip_random(tmp_path, rng):
    n = int(rng.integers(1, 12))
    lengths = rng.integers(1, 40, size=n)
    rows = [rng.standard_normal(k) * 10 ** rng.uniform(-5, 5) for k in lengths]
    comma = write_text(tmp_path / "c.csv", "".join(",".join(map(fmt, r)) + "\n" for r in rows))
    space = write_text(tmp_path / "s.txt", "".join(" \t".join(map(fmt, r)) + "  \n" for r in rows))
    for path in (comma, space):
        X, y = tsio.read_series(path)
        assert y is None
        assert_same_collection(X, rows)
        if len(set(lengths.tolist())) == 1:
            assert isinstance(X, np.ndarray) and X.shape == (n, lengths[0])
        else:
            assert isinstance(X, list)


def test_csv_labels_padding_comments(tmp_path):
    path = write_text(tmp_path / "d.csv",
                      "# a comment line\n"
                      "\n"
                      "1, 0.5, 1.5, 2.5\n"
                      "2, 1, 2,,\n"          # trailing empty fields are padding
                      "1, 3, NaN, nan\n")    # and so is trailing NaN
    X, y = tsio.read_text(path, labels_first=True)
    assert isinstance(X, list) and [len(x) for x in X] == [3, 2, 1]
    np.testing.assert_array_equal(X[1], [1.0, 2.0])
    assert y.dtype == np.int64 and y.tolist() == [1, 2, 1]

    path = write_text(tmp_path / "s.csv", "cat,1,2\ndog,3,4\n")
    X, y = tsio.read_series(path, labels_first=True)
    assert X.shape == (2, 2) and y.tolist() == ["cat", "dog"]


def test_csv_parse_errors_name_file_line_field(tmp_path):
    path = write_text(tmp_path / "data.csv", "1,2,3\n4,5,6\n\n7,abc,9\n")
    with pytest.raises(tsio.ParseError) as info:
        tsio.read_series(path)
    assert str(info.value) == f"{path}:4: field 2: could not parse 'abc' as a number"
    assert info.value.line == 4
    assert isinstance(info.value, ValueError)

    path = write_text(tmp_path / "header.csv", "a,b,c\n1,2,3\n")
    with pytest.raises(tsio.ParseError, match=r"header\.csv:1: field 1: could not parse 'a' .*header line"):
        tsio.read_series(path)

    path = write_text(tmp_path / "hole.csv", "1,2,3\n4,,6\n")
    with pytest.raises(tsio.ParseError, match=r"hole\.csv:2: field 2: missing value inside the series"):
        tsio.read_series(path)

    path = write_text(tmp_path / "inf.txt", "1 2 3\n4 5 inf\n")
    with pytest.raises(tsio.ParseError, match=r"inf\.txt:2: field 3: value inf is not finite"):
        tsio.read_series(path)

    path = write_text(tmp_path / "lab.csv", "x,1,2\ny\n")
    with pytest.raises(tsio.ParseError, match=r"lab\.csv:2: series has no values"):
        tsio.read_series(path, labels_first=True)

    path = write_text(tmp_path / "empty.csv", "# nothing\n\n")
    with pytest.raises(tsio.ParseError, match=r"empty\.csv: no series found"):
        tsio.read_series(path)

    path = tmp_path / "binary.txt"
    path.write_bytes(b"1,2\n\xff\xfe\x00\x01\n")
    with pytest.raises(tsio.ParseError, match=r"binary\.txt:2: not a UTF-8 text file"):
        tsio.read_series(path)


# ---------------------------------------------------------------------------------------
# UCR .tsv
# ---------------------------------------------------------------------------------------
def test_ucr_tsv_variable_length(tmp_path, rng):
    rows = [rng.standard_normal(k) for k in (6, 3, 6, 1)]
    labels = ["1", "-1", "2", "1"]
    width = max(len(r) for r in rows)
    text = "".join(
        "\t".join([lab] + [fmt(v) for v in r] + ["NaN"] * (width - len(r))) + "\n"
        for lab, r in zip(labels, rows))
    X, y = tsio.read_series(write_text(tmp_path / "u.tsv", text))
    assert_same_collection(X, rows)
    assert y.dtype == np.int64 and y.tolist() == [1, -1, 2, 1]

    bad = write_text(tmp_path / "bad.tsv", "1\t0.5\t0.25\n2\t0.5\tx\n")
    with pytest.raises(tsio.ParseError, match=r"bad\.tsv:2: field 3: could not parse 'x' as a number"):
        tsio.read_series(bad)


def test_ucr_tsv_gunpoint_equals_shipped_ts():
    aeon = peer("aeon")
    tsv = pathlib.Path(aeon.__file__).parent / "datasets" / "data" / "GunPoint" / "GunPoint_TRAIN.tsv"
    if not tsv.is_file():
        pytest.skip("aeon does not bundle GunPoint_TRAIN.tsv")
    X, y = tsio.read_ucr_tsv(tsv)
    X2, y2 = load_gunpoint("train")
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


# ---------------------------------------------------------------------------------------
# aeon/sktime .ts
# ---------------------------------------------------------------------------------------
TS_HEADER = """# comment
@problemName Toy
@timeStamps false
@missing true
@univariate {uni}
{dims}@equalLength {eq}
@classLabel true a b
@data
"""


def ts_text(cases, labels, equal):
    d = 1 if cases[0].ndim == 1 else cases[0].shape[1]
    head = TS_HEADER.format(uni=str(d == 1).lower(), dims="" if d == 1 else f"@dimensions {d}\n",
                            eq=str(equal).lower())
    width = max(len(c) for c in cases)
    lines = []
    for c, lab in zip(cases, labels):
        cols = c[:, None] if c.ndim == 1 else c
        dims = [",".join([fmt(v) for v in cols[:, j]] + ["?"] * (width - len(c))) for j in range(d)]
        lines.append(":".join(dims + [lab]))
    return head + "\n".join(lines) + "\n"


@pytest.mark.parametrize("dim", [1, 3])
@pytest.mark.parametrize("equal", [True, False])
def test_ts_round_trip_random(tmp_path, rng, dim, equal):
    n = int(rng.integers(1, 10))
    lengths = [12] * n if equal else rng.integers(1, 30, size=n).tolist()
    cases = [rng.standard_normal((k, dim)) if dim > 1 else rng.standard_normal(k) for k in lengths]
    labels = rng.choice(["a", "b"], size=n).tolist()
    X, y = tsio.read_series(write_text(tmp_path / "t.ts", ts_text(cases, labels, equal)))
    assert_same_collection(X, cases)
    assert y.tolist() == labels
    if equal:
        assert isinstance(X, np.ndarray) and X.shape == ((n, 12) if dim == 1 else (n, 12, dim))


def test_ts_regression_target_and_no_labels(tmp_path):
    text = "@problemName R\n@univariate true\n@targetLabel true\n@data\n1,2,3:0.5\n4,5:1.25\n"
    X, y = tsio.read_ts(write_text(tmp_path / "r.ts", text))
    assert [len(x) for x in X] == [3, 2] and y.dtype == np.float64 and y.tolist() == [0.5, 1.25]

    text = "@problemName U\n@univariate false\n@classLabel false\n@data\n1,2:3,4\n5,6:7,8\n"
    X, y = tsio.read_ts(write_text(tmp_path / "u.ts", text))
    assert y is None and X.shape == (2, 2, 2)
    np.testing.assert_array_equal(X[1], [[5, 7], [6, 8]])


TS_ERRORS = [
    ("@problemName x\n@classLabel true 1 2\n1,2:1\n", 3, "expected a header line starting with '@'"),
    ("@problemName x\n@classLabel true 1 2\n", None, "no @data line found"),
    ("@problemName x\n@classLabel true 1 2\n@data\n", None, "no cases after @data"),
    ("@classLabel true 1 2\n@bogus 3\n@data\n1,2:1\n", 2, "unknown header keyword '@bogus'"),
    ("@timeStamps true\n@data\n(0,1),(1,2):1\n", 1, "timestamped .ts data .* not supported"),
    ("@classLabel false\n@data\n(0,1),(1,2)\n", 3, "timestamped .ts data .* not supported"),
    ("@univariate maybe\n@data\n", 1, "@univariate must be followed by true or false"),
    ("@dimensions 0\n@data\n", 1, "positive integer"),
    ("@classLabel true\n@data\n", 1, "must list the class labels"),
    ("@classLabel true 1 2\n@data\n1,2,3:1\n4,x,6:2\n", 4, "value 2: could not parse 'x' as a number"),
    ("@dimensions 2\n@classLabel true 1 2\n@data\n1,2:3,4:1\n1,2:3,y:2\n", 5,
     "dimension 2, value 2: could not parse 'y'"),
    ("@dimensions 2\n@classLabel true 1 2\n@data\n1,2:3,4:1\n1,2:2\n", 5,
     "case has 1 dimensions, expected 2 .from @dimensions 2"),
    ("@classLabel true 1 2\n@data\n1,2:3,4:1\n1,2:2\n", 4,
     r"case has 1 dimensions, expected 2 \(from line 3\)"),
    ("@classLabel true 1 2\n@data\n1,2,3:7\n", 3, "label '7' is not one of the classes declared"),
    ("@classLabel true 1 2\n@data\n1,?,3:1\n", 3, "value 2: missing value inside the series"),
    ("@classLabel true 1 2\n@data\n?,?:1\n", 3, "series has no values"),
    ("@dimensions 2\n@classLabel true 1 2\n@data\n1,2,3:4,5,?:1\n", 4,
     r"dimensions of one case differ in length \(3, 2\)"),
    ("@equalLength true\n@classLabel true 1 2\n@data\n1,2:1\n1,2,3:2\n", 5,
     "@equalLength true, but this case has length 3"),
    ("@targetLabel true\n@data\n1,2:high\n", 3, "target 'high' is not a number"),
]


@pytest.mark.parametrize("text, line, message", TS_ERRORS)
def test_ts_parse_errors(tmp_path, text, line, message):
    path = write_text(tmp_path / "bad.ts", text)
    with pytest.raises(tsio.ParseError, match=message) as info:
        tsio.read_series(path)
    assert info.value.line == line
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(info.value).startswith(prefix), str(info.value)


@pytest.mark.parametrize("name", [
    "GunPoint/GunPoint_TEST.ts",
    "BasicMotions/BasicMotions_TRAIN.ts",                    # multivariate, string labels
    "JapaneseVowels/JapaneseVowels_TRAIN.ts",                # multivariate, variable length
    "PickupGestureWiimoteZ/PickupGestureWiimoteZ_TRAIN.ts",  # univariate, variable length
])
def test_ts_equals_aeon_loader(name):
    aeon = peer("aeon")
    from aeon.datasets import load_from_ts_file

    path = pathlib.Path(aeon.__file__).parent / "datasets" / "data" / name
    if not path.is_file():
        pytest.skip(f"aeon does not bundle {name}")
    X, y = tsio.read_ts(path)
    Xa, ya = load_from_ts_file(str(path))  # (n, d, len) array or list of (d, len_i)
    want = [x[0] if x.shape[0] == 1 else x.T for x in Xa]
    assert_same_collection(X, want)
    # aeon lower-cases the header it checks labels against; compare case-insensitively.
    assert [str(v).lower() for v in y] == [str(v).lower() for v in ya]


# ---------------------------------------------------------------------------------------
# dispatch
# ---------------------------------------------------------------------------------------
def test_read_series_dispatch(tmp_path):
    path = write_text(tmp_path / "x.json", "[1, 2]")
    with pytest.raises(ValueError, match=r"path: cannot tell the format .*x\.json"):
        tsio.read_series(path)
    path = write_text(tmp_path / "x.dat", "1 2 3\n")
    X, _ = tsio.read_series(path, fmt="text")
    assert X.shape == (1, 3)
    with pytest.raises(ValueError, match="fmt:"):
        tsio.read_series(path, fmt="xml")
    with pytest.raises(FileNotFoundError):
        tsio.read_series(tmp_path / "missing.csv")


# ---------------------------------------------------------------------------------------
# writers
# ---------------------------------------------------------------------------------------
def test_write_npy_csv_round_trip(tmp_path, rng):
    D = rng.standard_normal((5, 7)) * 10 ** rng.uniform(-8, 8)
    tsio.write_matrix(tmp_path / "D.npy", D)
    np.testing.assert_array_equal(np.load(tmp_path / "D.npy"), D)
    tsio.write_matrix(tmp_path / "D.csv", D)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "D.csv", delimiter=",", ndmin=2), D)  # exact

    D32 = D.astype(np.float32)
    tsio.write_matrix(tmp_path / "D32.csv", D32)
    np.testing.assert_array_equal(
        np.loadtxt(tmp_path / "D32.csv", delimiter=",", ndmin=2).astype(np.float32), D32)

    condensed = rng.standard_normal(10)
    tsio.write_matrix(tmp_path / "c.csv", condensed)
    lines = (tmp_path / "c.csv").read_text().splitlines()
    assert len(lines) == 1
    np.testing.assert_array_equal(np.array(lines[0].split(","), dtype=float), condensed)
    assert sorted(os.listdir(tmp_path)) == ["D.csv", "D.npy", "D32.csv", "c.csv"]


def test_write_errors(tmp_path):
    with pytest.raises(ValueError, match="path: .*expected a .npy or .csv"):
        tsio.write_matrix(tmp_path / "D.xlsx", np.zeros((2, 2)))
    with pytest.raises(ValueError, match="D: expected a 2-D matrix"):
        tsio.write_matrix(tmp_path / "D.npy", np.zeros((2, 2, 2)))
    with pytest.raises(TypeError, match="D: expected a numeric array"):
        tsio.write_matrix(tmp_path / "D.csv", np.array([["a"]]))
    with pytest.raises(FileNotFoundError):
        tsio.write_matrix(tmp_path / "no" / "such" / "D.npy", np.zeros((2, 2)))
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("ext", [".npy", ".csv"])
@pytest.mark.parametrize("exc", [KeyboardInterrupt, OSError])
def test_write_interrupted_leaves_nothing_half_written(tmp_path, monkeypatch, ext, exc):
    target = tmp_path / f"D{ext}"
    target.write_text("previous contents")
    D = np.arange(6.0).reshape(2, 3)

    def boom(*args, **kwargs):
        raise exc("interrupted while writing")

    # Fail inside the writer: np.save for .npy, the per-value formatting (a module-level
    # name shadows the builtin repr) for .csv.
    if ext == ".npy":
        monkeypatch.setattr(np, "save", boom)
    else:
        monkeypatch.setattr(tsio, "repr", boom, raising=False)
    with pytest.raises(exc):
        tsio.write_matrix(target, D)
    assert target.read_text() == "previous contents"
    assert os.listdir(tmp_path) == [target.name]


def test_written_file_mode_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        tsio.write_matrix(tmp_path / "D.npy", np.zeros((2, 2)))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "D.npy").st_mode) == 0o644


def test_write_keeps_mode_and_writes_through_symlinks(tmp_path):
    # issue 36 item 18: a 0600 target stays 0600; an --out symlink stays a link to the
    # rewritten file
    target = tmp_path / "D.npy"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    link = tmp_path / "link.npy"
    link.symlink_to(target)
    tsio.write_matrix(link, np.eye(2))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    np.testing.assert_array_equal(np.load(target), np.eye(2))
    assert sorted(os.listdir(tmp_path)) == ["D.npy", "link.npy"]


def test_write_upper_case_npy_suffix(tmp_path):
    # issue 36 item 16: path.NPY is written as path.NPY (np.save would append .npy)
    tsio.write_matrix(tmp_path / "D.NPY", np.eye(3))
    assert os.listdir(tmp_path) == ["D.NPY"]
    np.testing.assert_array_equal(np.load(tmp_path / "D.NPY"), np.eye(3))


def test_write_failure_names_the_target_not_the_temporary(tmp_path, monkeypatch):
    # a full disk: the OSError from the write names the file asked for
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as info:
        tsio.write_matrix(tmp_path / "D.csv", np.eye(2))
    assert info.value.filename == str(tmp_path / "D.csv") and info.value.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------
# shipped dataset
# ---------------------------------------------------------------------------------------
def test_load_gunpoint():
    X, y = load_gunpoint("train")
    assert X.shape == (50, 150) and X.dtype == np.float64
    assert y.dtype == np.int64 and sorted(set(y.tolist())) == [1, 2]
    Xt, yt = load_gunpoint("test")
    assert Xt.shape == (150, 150) and len(yt) == 150
    # z-normalised series, as the UCR archive ships them
    np.testing.assert_allclose(X.mean(axis=1), 0, atol=1e-6)
    np.testing.assert_allclose(X.std(axis=1), 1, atol=1e-2)
    assert gunpoint_path("test").parent == DATA_DIR / "GunPoint"
    with pytest.raises(ValueError, match="split must be 'train' or 'test'"):
        load_gunpoint("validation")


def test_gunpoint_ships_inside_the_installed_package():
    import tswarp

    assert DATA_DIR == pathlib.Path(tswarp.__file__).resolve().parent / "data"
    assert gunpoint_path("train").is_file()
