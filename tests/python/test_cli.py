"""The tswarp command line: outputs, written files and exit codes.

Most tests call ``tswarp.cli.main(argv)`` in-process (fast, output through capsys); a few run
the installed console script and ``python -m tswarp`` as subprocesses, including Ctrl-C.
Exit codes: 0 ok, 2 bad input, 130 interrupted; a user error never prints a traceback.
"""

import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tswarp
from tswarp import cli
from tswarp.datasets import load_gunpoint
from conftest import popen_interruptible


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def knn_rows(out):
    """{measure: (accuracy, error rate)} from the table that `tswarp knn` prints."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["measure", "accuracy"])
    rows = {}
    for line in lines[start + 1:]:
        name, acc, err, seconds, rate = line.split()
        assert float(seconds) >= 0 and float(rate) > 0
        rows[name] = (float(acc), float(err))
    return rows


def write_tsv(path, X, y):
    with open(path, "w") as f:
        for x, label in zip(X, y):
            f.write("\t".join([str(label)] + [repr(float(v)) for v in x]) + "\n")
    return path


@pytest.fixture(scope="module")
def gunpoint():
    return load_gunpoint("train") + load_gunpoint("test")


@pytest.fixture
def small_gunpoint(tmp_path, gunpoint):
    """A subset of GunPoint as UCR .tsv files (short series keep the tests fast)."""
    X, y, Xt, yt = gunpoint
    train = write_tsv(tmp_path / "train.tsv", X[:20, ::3], y[:20])
    test = write_tsv(tmp_path / "test.tsv", Xt[:30, ::3], yt[:30])
    return train, test, (X[:20, ::3], y[:20], Xt[:30, ::3], yt[:30])


# ---------------------------------------------------------------------------------------
# help and info
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sub", [[], ["distance"], ["matrix"], ["knn"], ["info"]])
def test_help_on_every_subcommand(capsys, sub):
    code, out, _ = run(capsys, *sub, "--help")
    assert code == 0
    assert out.startswith("usage: tswarp")
    if sub and sub[0] != "info":
        for flag in ("--metric", "--window", "--radius", "--layout", "--device", "--nu",
                     "--gamma", "--cost"):
            assert flag in out


def test_info(capsys):
    code, out, _ = run(capsys, "info")
    assert code == 0
    info = tswarp.info()
    fields = dict(line.split(":", 1) for line in out.splitlines())
    assert fields["version"].strip() == tswarp.__version__
    assert fields["SIMD"].strip() == str(info["simd"])
    assert fields["threads"].strip() == str(info["threads"])
    assert fields["CUDA backend"].strip() == ("compiled in" if info["cuda_built"] else "not compiled in")
    assert "GPUs found" in fields


def test_usage_errors_exit_2(capsys):
    code, _, err = run(capsys)
    # one line that says what is wrong and where to read more, not the whole usage text
    assert code == 2 and "arguments are required: COMMAND" in err and "tswarp --help" in err
    assert len(err.strip().splitlines()) == 2
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err
    code, _, err = run(capsys, "knn", "--window", "-3")
    assert code == 2 and "--window: -3 is not a fraction in [0, 1]" in err
    code, _, err = run(capsys, "knn", "--window", "10")  # a fraction, never a radius
    assert code == 2 and "use --radius 10" in err
    code, _, err = run(capsys, "knn", "--radius", "-1")
    assert code == 2 and "--radius: must be >= 0" in err
    code, _, err = run(capsys, "knn", "--radius", "0.1")
    assert code == 2 and "for a fraction of the length use --window" in err
    code, _, err = run(capsys, "knn", "--k", "0")
    assert code == 2 and "positive integer" in err
    code, out, _ = run(capsys, "--version")
    assert code == 0 and tswarp.__version__ in out


# ---------------------------------------------------------------------------------------
# distance
# ---------------------------------------------------------------------------------------
def test_distance_two_files(tmp_path, capsys, rng):
    a = rng.standard_normal((int(rng.integers(4, 40)), 3))
    b = rng.standard_normal((int(rng.integers(4, 40)), 3))
    np.save(tmp_path / "a.npy", a[None])  # (1, len, d): one multivariate series
    np.save(tmp_path / "b.npy", b[None])
    cases = [
        ([], tswarp.dtw(a, b)),
        (["--radius", "3", "--cost", "abs"], tswarp.dtw(a, b, radius=3, cost="abs")),
        (["--window", "1"], tswarp.dtw(a, b)),  # the full band
        (["--window", "0.5", "--accumulated"], tswarp.dtw(a, b, window=0.5, accumulated=True)),
        (["--metric", "twed", "--nu", "0.1", "--lmbda", "0.5"], tswarp.twed(a, b, nu=0.1, lmbda=0.5)),
        (["--metric", "soft_dtw", "--gamma", "0.1", "--normalize"],
         tswarp.soft_dtw(a, b, gamma=0.1, normalize=True)),
    ]
    for options, want in cases:
        code, out, err = run(capsys, "distance", tmp_path / "a.npy", tmp_path / "b.npy", *options)
        assert code == 0, err
        assert float(out) == want  # printed with repr: exact


def test_distance_rows_of_collections(tmp_path, capsys, rng):
    X = [rng.standard_normal(k) for k in (5, 9, 7)]
    (tmp_path / "X.csv").write_text("".join(",".join(map(repr, x.tolist())) + "\n" for x in X))
    path = tmp_path / "X.csv"
    code, out, _ = run(capsys, "distance", path, path, "--row-a", 0, "--row-b", 2)
    assert code == 0 and float(out) == tswarp.dtw(X[0], X[2])
    code, out, _ = run(capsys, "distance", path, path, "--row", 1)
    assert code == 0 and float(out) == 0.0

    code, _, err = run(capsys, "distance", path, path)
    assert code == 2 and err == f"tswarp: error: {path} holds 3 series; pick one with --row-a I (0-based)\n"
    code, _, err = run(capsys, "distance", path, path, "--row", 3)
    assert code == 2 and "--row 3 is out of range" in err


def test_distance_errors(tmp_path, capsys):
    np.save(tmp_path / "a.npy", np.arange(5.0))
    np.save(tmp_path / "nan.npy", np.array([1.0, np.nan]))
    a = tmp_path / "a.npy"
    code, _, err = run(capsys, "distance", a, a, "--nu", "0.1")
    assert code == 2 and err == "tswarp: error: --nu does not apply to --metric dtw (it applies to twed)\n"
    code, _, err = run(capsys, "distance", a, a, "--metric", "soft_dtw", "--gamma", "-1")
    assert code == 2 and err.startswith("tswarp: error:") and "gamma" in err
    code, _, err = run(capsys, "distance", a, tmp_path / "nan.npy")
    assert code == 2 and err.startswith("tswarp: error:")
    code, _, err = run(capsys, "distance", a, tmp_path / "missing.npy")
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "distance", a, tmp_path)
    assert code == 2 and err.startswith("tswarp: error:")
    code, _, err = run(capsys, "distance", a, tmp_path / "b.xyz")
    assert code == 2 and "B: cannot tell the format" in err
    (tmp_path / "bad.csv").write_text("1,2\n3,x\n")
    code, _, err = run(capsys, "distance", a, tmp_path / "bad.csv", "--row-b", 0)
    bad = tmp_path / "bad.csv"
    assert code == 2 and err == f"tswarp: error: {bad}:2: field 2: could not parse 'x' as a number\n"


def test_device_cuda_without_gpu(tmp_path, capsys):
    info = tswarp.info()
    if info["cuda_built"] and info["cuda_devices"]:
        pytest.skip("a GPU is present")
    np.save(tmp_path / "a.npy", np.arange(5.0))
    code, _, err = run(capsys, "distance", tmp_path / "a.npy", tmp_path / "a.npy", "--device", "cuda")
    assert code == 2 and err.startswith("tswarp: error:") and "CUDA" in err.upper()


# ---------------------------------------------------------------------------------------
# matrix
# ---------------------------------------------------------------------------------------
def test_matrix_pdist_and_cdist_files(tmp_path, capsys, rng):
    X = rng.standard_normal((6, 20, 2))
    Y = [rng.standard_normal((k, 2)) for k in (5, 11, 8)]
    np.save(tmp_path / "X.npy", X)
    with open(tmp_path / "Y.ts", "w") as f:
        f.write("@problemName y\n@univariate false\n@dimensions 2\n@equalLength false\n"
                "@classLabel false\n@data\n")
        for y in Y:
            f.write(":".join(",".join(map(repr, y[:, j].tolist())) for j in range(2)) + "\n")

    code, out, err = run(capsys, "matrix", tmp_path / "X.npy", "--out", tmp_path / "P.npy", "--radius", "4")
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "P.npy"), tswarp.pdist(X, radius=4))
    cells = (6 * 20) ** 2 // 2 - 6 * 20 * 20 // 2  # pairs i < j, 20 x 20 cells each
    assert "matrix 6 x 6 float64" in out and f"{cells:,} cells" in out and "Gcells/s" in out

    code, out, err = run(capsys, "matrix", tmp_path / "X.npy", tmp_path / "Y.ts", "--metric", "twed",
                         "-o", tmp_path / "C.csv", "--jobs", "1", "--p", "1")
    assert code == 0, err
    want = tswarp.cdist(X, Y, metric="twed", p=1.0)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "C.csv", delimiter=",", ndmin=2), want)
    assert "matrix 6 x 3" in out and f"{120 * 24:,} cells" in out

    code, out, err = run(capsys, "matrix", tmp_path / "X.npy", "--condensed", "--metric", "soft_dtw")
    assert code == 0
    np.testing.assert_array_equal(np.array(out.strip().split(","), dtype=float),
                                  tswarp.pdist(X, metric="soft_dtw", condensed=True))
    assert "condensed 15" in err  # summary on stderr when the matrix goes to stdout


def test_matrix_errors_write_nothing(tmp_path, capsys, monkeypatch):
    np.save(tmp_path / "X.npy", np.ones((3, 4)))
    X = tmp_path / "X.npy"
    code, _, err = run(capsys, "matrix", X, X, "--condensed")
    assert code == 2 and "--condensed applies to one collection" in err
    code, _, err = run(capsys, "matrix", X, "--out", tmp_path / "D.xlsx")
    assert code == 2 and "expected a .npy, .csv or .zarr" in err
    code, _, err = run(capsys, "matrix", X, "--out", tmp_path / "no" / "D.npy")
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, "matrix", X, "--metric", "twed", "--nu", "-1", "--out", tmp_path / "D.npy")
    assert code == 2 and "nu" in err

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tswarp, "pdist", interrupted)
    code, _, err = run(capsys, "matrix", X, "--out", tmp_path / "D.npy")
    assert code == 130 and "interrupted" in err
    assert sorted(os.listdir(tmp_path)) == ["X.npy"]


# ---------------------------------------------------------------------------------------
# knn
# ---------------------------------------------------------------------------------------
def python_1nn(X_train, y_train, X_test, **params):
    """1-NN written as plain loops over tswarp.dtw: the nearest training series, first on ties."""
    predictions = []
    for a in X_test:
        best, label = float("inf"), None
        for b, lab in zip(X_train, y_train):
            d = tswarp.dtw(a, b, **params)
            if d < best:
                best, label = d, lab
        predictions.append(label)
    return np.array(predictions)


def test_knn_shipped_gunpoint_equals_python_loop(capsys, gunpoint):
    X, y, Xt, yt = gunpoint
    code, out, err = run(capsys, "knn")
    assert code == 0, err
    assert out.startswith("GunPoint (shipped): train 50 series, length 150, 1 dim; test 150 series")
    accuracy, error = knn_rows(out)["dtw"]
    want = float(np.mean(python_1nn(X, y, Xt) == yt))
    assert accuracy == round(want, 4) and error == round(1 - want, 4)
    # The UCR archive's published 1-NN DTW (full window) error rate for GunPoint is 0.093.
    assert round(1 - want, 3) == 0.093

    D = tswarp.cdist(Xt, X)
    np.testing.assert_array_equal(cli.knn_predict(D, y, 1), python_1nn(X, y, Xt))


def test_knn_files_all_metrics(capsys, small_gunpoint):
    train, test, (X, y, Xt, yt) = small_gunpoint
    code, out, err = run(capsys, "knn", train, test, "--metric", "all", "--window", "0.2", "--nu", "0.01")
    assert code == 0, err
    rows = knn_rows(out)
    assert list(rows) == list(tswarp.METRICS)
    for metric in tswarp.METRICS:
        params = {"window": 0.2, **({"nu": 0.01} if metric == "twed" else {})}
        pred = cli.knn_predict(tswarp.cdist(Xt, X, metric=metric, **params), y)
        assert rows[metric][0] == round(float(np.mean(pred == yt)), 4), metric
    # the window's cells: radius floor(0.2 * 50) = 10 on 50 x 50 grids
    band = sum(min(50, 50 - k) - max(0, -k) for k in range(-10, 11))
    assert f"{30 * 20 * band:,} cells per measure (in the window)" in out

    code, out, _ = run(capsys, "knn", train, test, "--k", "3", "--metric", "twed")
    assert code == 0
    pred = cli.knn_predict(tswarp.cdist(Xt, X, metric="twed"), y, 3)
    assert knn_rows(out)["twed"][0] == round(float(np.mean(pred == yt)), 4)


def test_knn_family_options(capsys, small_gunpoint):
    train, test, (X, y, Xt, yt) = small_gunpoint
    for args, metric, params in (
            (("--metric", "msm", "--c", "0.5", "--dependent"), "msm",
             {"c": 0.5, "independent": False}),
            (("--metric", "erp", "--g", "0.3"), "erp", {"g": 0.3}),
            (("--metric", "wdtw", "--g", "0.3"), "wdtw", {"g": 0.3}),
            (("--metric", "adtw", "--warp-penalty", "0.2"), "adtw", {"warp_penalty": 0.2}),
            (("--metric", "lcss", "--epsilon", "0.4"), "lcss", {"epsilon": 0.4}),
            (("--metric", "edr",), "edr", {})):
        code, out, err = run(capsys, "knn", train, test, *args)
        assert code == 0, err
        pred = cli.knn_predict(tswarp.cdist(Xt, X, metric=metric, **params), y)
        assert knn_rows(out)[metric][0] == round(float(np.mean(pred == yt)), 4), args
    code, _, err = run(capsys, "knn", train, test, "--epsilon", "0.5")
    assert code == 2 and "--epsilon does not apply to --metric dtw (it applies to edr, lcss)" in err
    code, _, err = run(capsys, "knn", train, test, "--metric", "lcss", "--dependent")
    assert code == 2 and "--dependent does not apply to --metric lcss" in err


def test_knn_input_errors(tmp_path, capsys, small_gunpoint):
    train, test, (X, *_rest) = small_gunpoint
    code, _, err = run(capsys, "knn", train)
    assert code == 2 and "give both TRAIN and TEST" in err
    np.savetxt(tmp_path / "plain.csv", X, delimiter=",")
    code, _, err = run(capsys, "knn", train, tmp_path / "plain.csv")
    assert code == 2 and "has no labels" in err
    code, out, err = run(capsys, "knn", train, test, "--labels-first", "--gamma", "0.5")
    assert code == 2 and "--gamma does not apply to --metric dtw" in err


def test_knn_predict_votes_and_ties():
    y = np.array(["a", "b", "b", "c"])
    D = np.array([
        [0.0, 1.0, 2.0, 3.0],   # k=3: a, b, b -> b (majority)
        [5.0, 1.0, 4.0, 2.0],   # k=3: b, c, b -> b
        [1.0, 1.0, 9.0, 2.0],   # k=3: a, b (equal distances: training order), c -> tie -> a (nearest)
        [3.0, 9.0, 9.0, 1.0],   # k=3: c, a, b -> tie -> c (nearest)
    ])
    assert cli.knn_predict(D, y, 1).tolist() == ["a", "b", "a", "c"]
    assert cli.knn_predict(D, y, 3).tolist() == ["b", "b", "a", "c"]
    assert cli.knn_predict(D, y, 10).tolist() == ["b", "b", "b", "b"]  # k capped at n_train
    with pytest.raises(ValueError, match="D: expected shape"):
        cli.knn_predict(D[:, :2], y)


def test_count_cells():
    assert cli.count_cells(np.array([2, 3]), np.array([5])) == 25
    assert cli.count_cells(np.array([2, 3, 4])) == 2 * 3 + 2 * 4 + 3 * 4


# ---------------------------------------------------------------------------------------
# as a program
# ---------------------------------------------------------------------------------------
def script():
    path = shutil.which("tswarp", path=os.path.dirname(sys.executable))
    if path is None:
        pytest.skip("the tswarp console script is not installed next to this python")
    return path


def test_console_script_and_module(tmp_path):
    result = subprocess.run([script(), "info"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith(f"version:      {tswarp.__version__}")
    result = subprocess.run([sys.executable, "-m", "tswarp", "info"], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path)
    assert result.returncode == 0 and "SIMD" in result.stdout

    (tmp_path / "bad.ts").write_text("@classLabel true 1\n@data\n1,2,oops:1\n")
    result = subprocess.run([script(), "knn", tmp_path / "bad.ts", tmp_path / "bad.ts"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    bad = tmp_path / "bad.ts"
    assert result.stderr == f"tswarp: error: {bad}:3: value 3: could not parse 'oops' as a number\n"
    result = subprocess.run([script(), "matrix"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_ctrl_c_exits_130_and_writes_nothing(tmp_path, rng):
    # 300 x 1000: 4.5e10 DTW cells, seconds of work even on fast kernels. The library checks
    # for cancellation between work items; the CLI must turn the KeyboardInterrupt into exit
    # code 130 with no output file and no temporary file left.
    np.save(tmp_path / "X.npy", rng.standard_normal((300, 1000)))
    # --device cpu: on a GPU machine device=auto would finish this in milliseconds
    proc = popen_interruptible([script(), "matrix", tmp_path / "X.npy", "--metric", "dtw",
                             "--device", "cpu", "--progress", "--out", tmp_path / "D.npy"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stderr.read(1)  # the progress bar has started: pdist is running
        assert first, "no progress output"
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        elapsed = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode == 0:
        pytest.skip("pdist finished before the signal arrived")
    assert proc.returncode == 130
    assert err.decode().rstrip().endswith("tswarp: interrupted")
    assert b"Traceback" not in err
    assert elapsed < 5.0
    assert os.listdir(tmp_path) == ["X.npy"]


def test_sigterm_exits_143_and_leaves_no_temporary(tmp_path, rng):
    # issue 36 item 17: SIGTERM during `tswarp matrix --out` removed nothing; it now
    # unwinds as Ctrl-C does
    np.save(tmp_path / "X.npy", rng.standard_normal((300, 1000)))
    proc = popen_interruptible([script(), "matrix", tmp_path / "X.npy", "--metric", "dtw",
                                "--device", "cpu", "--progress", "--out", tmp_path / "D.csv"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stderr.read(1), "no progress output"
        sent = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        elapsed = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err.decode()[-2000:]
    assert err.decode().rstrip().endswith("tswarp: terminated")
    assert elapsed < 5.0
    assert os.listdir(tmp_path) == ["X.npy"]


def test_outputs_checked_before_the_work(tmp_path, capsys):
    # issue 36 item 15: a bad --plot or --out fails at once, before the (long) work
    from tswarp.datasets import gunpoint_path
    train = str(gunpoint_path("train"))
    a = tmp_path / "a.npy"
    np.save(a, np.arange(5.0))
    for argv in (["align", a, a, "--out", tmp_path / "p.csv", "--plot", tmp_path / "p.xyz"],
                 ["align", a, a, "--out", tmp_path / "nodir" / "p.csv"],
                 ["matrix", a, "--out", tmp_path / "nodir" / "D.npy"],
                 ["shapelets", train, train, "--plot", "/nonexistent/x.png"]):
        t = time.perf_counter()
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.startswith("tswarp: error:"), (argv, err)
        assert time.perf_counter() - t < 5, argv
    assert sorted(os.listdir(tmp_path)) == ["a.npy"]


def test_nan_in_an_input_names_the_file(tmp_path, capsys):
    x = np.arange(6.0).reshape(2, 3)
    x[1, 2] = np.nan
    np.save(tmp_path / "X.npy", x)
    code, _, err = run(capsys, "matrix", tmp_path / "X.npy")
    assert code == 2
    assert f"{tmp_path / 'X.npy'}" in err and "series 1" in err and "point 2" in err, err


def test_knn_k_window_cells_and_labels_for_npy(tmp_path, capsys, rng):
    """-k larger than TRAIN is refused; the cell count counts the window's cells; .npy
    collections take their labels from --labels."""
    from tswarp.cli import count_cells
    X, y = load_gunpoint("train")
    Xt, yt = load_gunpoint("test")
    np.save(tmp_path / "X.npy", X[:20])
    np.save(tmp_path / "Xt.npy", Xt[:10])
    np.save(tmp_path / "y.npy", y[:20])
    (tmp_path / "yt.txt").write_text("".join(f"{v}\n" for v in yt[:10]))
    code, out, err = run(capsys, "knn", tmp_path / "X.npy", tmp_path / "Xt.npy", "--labels",
                         tmp_path / "y.npy", tmp_path / "yt.txt", "--radius", "5")
    assert code == 0, err
    cells = count_cells(np.full(10, 150), np.full(20, 150), radius=5)
    assert f"{cells:,} cells per measure (in the window)" in out
    assert cells == 200 * sum(min(150, 150 - k) - max(0, -k) for k in range(-5, 6))
    D = tswarp.cdist(Xt[:10], X[:20], radius=5)
    acc = float(np.mean(y[:20][np.argmin(D, axis=1)] == yt[:10]))
    assert f"{acc:>9.4f}" in out
    code, _, err = run(capsys, "knn", tmp_path / "X.npy", tmp_path / "Xt.npy")
    assert code == 2 and "--labels" in err
    code, _, err = run(capsys, "knn", tmp_path / "X.npy", tmp_path / "Xt.npy", "--labels",
                       tmp_path / "yt.txt", tmp_path / "yt.txt")
    assert code == 2 and "holds 10 labels but TRAIN holds 20 series" in err
    code, _, err = run(capsys, "knn", "-k", "51")  # GunPoint's TRAIN holds 50
    assert code == 2 and "-k 51 is more than the 50 TRAIN series" in err
    # windows: the fraction, Itakura, ragged lengths, pdist, against a brute count
    for kw in ({"window": 0.1}, {"itakura_max_slope": 2.0}, {"radius": 0}):
        lens = rng.integers(5, 30, 7)
        from tswarp.plot import _admissible
        brute = sum(int(_admissible(int(n), int(m), **{**dict(window=None, radius=None,
                                                             itakura_max_slope=None), **kw}
                                    ).sum()) for n in lens for m in lens[:4])
        assert count_cells(lens, lens[:4], **kw) == brute, kw
        brute = sum(int(_admissible(int(lens[i]), int(lens[j]),
                                    **{**dict(window=None, radius=None,
                                              itakura_max_slope=None), **kw}).sum())
                    for i in range(7) for j in range(i + 1, 7))
        assert count_cells(lens, **kw) == brute, kw
