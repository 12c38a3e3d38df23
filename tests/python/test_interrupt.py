"""Long calls: Ctrl-C stops them within a second with KeyboardInterrupt, progress=True
draws a bar on stderr, and a progress callable sees (done, total) up to done == total. The
batch functions, the alignments, the shapelet estimators, soft-DTW k-means and barycenters,
DBA.
"""

import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tswarp
from conftest import popen_interruptible

# A child that starts a batch call far longer than the test (about 10^11 DTW cells) and
# reports how it ended. It prints "started" just before the call, so the parent signals
# a running computation, not the import.
CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import tswarp

    op = sys.argv[1]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 1500))
    y = np.arange(300) % 3
    if op in ("tree", "transform"):
        from tswarp.shapelets import ShapeletTransform, ShapeletTreeClassifier
    if op in ("kmeans",):
        from tswarp.learn import SoftDTWKMeans
    print("started", flush=True)
    t0 = time.monotonic()
    try:
        if op == "cdist":
            tswarp.cdist(X, X[::-1], metric="dtw", device="cpu")
        elif op == "pdist":
            tswarp.pdist(X, metric="twed", device="cpu")
        elif op == "dtw_path":
            tswarp.dtw_path(rng.normal(size=40000), rng.normal(size=40000), device="cpu")
        elif op == "segmental":
            tswarp.segmental_dtw(rng.normal(size=40000), rng.normal(size=40000), 4,
                                 device="cpu")
        elif op == "tree":
            ShapeletTreeClassifier(progress=True, device="cpu").fit(X[:, :600], y)
        elif op == "transform":
            ShapeletTransform(progress=True, device="cpu").fit(X[:, :600], y)
        elif op == "kmeans":
            SoftDTWKMeans(n_clusters=3, progress=True).fit(X)
        elif op == "barycenter":
            tswarp.soft_dtw_barycenter(X, progress=True)
        elif op == "dba":  # one C call an iteration (tsw_dba_step), polled between series
            tswarp.dtw_barycenter_averaging(X, progress=True)
        else:
            tswarp.cdist(list(X), metric="soft_dtw", progress=True, device="cpu")
    except KeyboardInterrupt:
        print("interrupted after %.3f s" % (time.monotonic() - t0), flush=True)
        sys.exit(3)
    print("finished after %.3f s" % (time.monotonic() - t0), flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
@pytest.mark.parametrize("op", ["cdist", "pdist", "cdist_list_progress", "dtw_path",
                                "segmental", "tree", "transform", "kmeans", "barycenter",
                                "dba"])
def test_ctrl_c_stops_a_running_call(op, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = popen_interruptible(
        [sys.executable, str(script), op],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        line = proc.stdout.readline()
        assert line.strip() == "started", line + proc.stderr.read()
        time.sleep(0.5)
        assert proc.poll() is None, "the batch call ended before the signal: make it longer"
        proc.send_signal(signal.SIGINT)
        t_signal = time.monotonic()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{op}: still running 10 s after SIGINT")
        elapsed = time.monotonic() - t_signal
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.returncode == 3, f"{op}: exit status {proc.returncode}\nstdout: {out}\nstderr: {err[-2000:]}"
        assert "interrupted" in out, out
        assert elapsed < 1.0, f"{op}: exited {elapsed:.3f} s after SIGINT (limit 1 s)"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_progress_bar_on_stderr(capfd, rng):
    X = rng.normal(size=(37, 120))
    Y = rng.normal(size=(41, 120))
    capfd.readouterr()
    D = tswarp.cdist(X, Y, metric="dtw", progress=True)
    out, err = capfd.readouterr()
    assert out == ""
    assert err.strip(), "progress=True wrote nothing to stderr"
    total = 37 * 41
    assert "100%" in err or f"{total}/{total}" in err, f"no completed bar in {err[-300:]!r}"
    np.testing.assert_array_equal(D, tswarp.cdist(X, Y, metric="dtw"))
    # and silence by default
    tswarp.cdist(X, Y, metric="dtw")
    tswarp.pdist(X, metric="twed")
    out, err = capfd.readouterr()
    assert out == "" and err == "", f"output without progress=True: {out!r} {err!r}"


def test_progress_bar_pdist(capfd, rng):
    X = [rng.normal(size=int(k)) for k in rng.integers(20, 200, size=30)]
    capfd.readouterr()
    tswarp.pdist(X, metric="soft_dtw", progress=True)
    _, err = capfd.readouterr()
    assert err.strip(), "progress=True wrote nothing to stderr"
    assert "100%" in err or re.search(r"\b(\d+)/\1\b", err), f"no completed bar in {err[-300:]!r}"


@pytest.mark.parametrize("op", ["cdist", "pdist"])
def test_progress_callable(op, rng):
    calls = []

    def progress(done, total):
        calls.append((done, total))

    X = rng.normal(size=(40, 300))
    Y = rng.normal(size=(30, 300))
    if op == "cdist":
        D = tswarp.cdist(X, Y, metric="dtw", progress=progress)
        np.testing.assert_array_equal(D, tswarp.cdist(X, Y, metric="dtw"))
        expected_total = 40 * 30
    else:
        D = tswarp.pdist(X, metric="dtw", progress=progress)
        np.testing.assert_array_equal(D, tswarp.pdist(X, metric="dtw"))
        expected_total = None
    assert calls, "the progress callable was never called"
    dones = [c[0] for c in calls]
    totals = {c[1] for c in calls}
    assert len(totals) == 1, f"total changed during the call: {totals}"
    total = totals.pop()
    if expected_total is not None:
        assert total == expected_total
    else:
        # pairs i < j, with or without the diagonal
        assert total in (40 * 39 // 2, 40 * 41 // 2), total
    assert all(0 <= d <= total for d in dones), dones
    assert dones == sorted(dones), f"done went backwards: {dones}"
    assert calls[-1] == (total, total), f"last call {calls[-1]}, total {total}"
    assert all(isinstance(v, int) for c in calls for v in c)


def test_exception_in_progress_callable_propagates(rng):
    X = rng.normal(size=(30, 100))

    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop(f"{done}/{total}")

    with pytest.raises(Stop):
        tswarp.cdist(X, metric="dtw", progress=progress)
    # the library is usable afterwards
    assert tswarp.cdist(X[:3], metric="dtw").shape == (3, 3)


def test_progress_bars_of_the_estimators(capfd, rng):
    """progress=True on the estimators and the long Python-driven calls: one bar on stderr
    that ends complete (done == total), with an ETA; nothing without it."""
    from tswarp.learn import SoftDTWKMeans
    from tswarp.shapelets import ShapeletTransform, ShapeletTreeClassifier, find_shapelet

    X = rng.normal(size=(20, 40)).cumsum(axis=1)
    y = np.arange(20) % 2
    X[y == 1, 10:20] += 3
    kw = dict(min_length=5, max_length=15, length_step=5)
    runs = {
        "ShapeletTreeClassifier": lambda p: ShapeletTreeClassifier(progress=p, **kw).fit(X, y),
        "ShapeletTransform": lambda p: ShapeletTransform(progress=p, **kw).fit(X, y),
        "find_shapelet": lambda p: find_shapelet(X, y, progress=p, **kw),
        "SoftDTWKMeans": lambda p: SoftDTWKMeans(n_clusters=2, max_iter=3, max_iter_barycenter=3,
                                                 random_state=0, progress=p).fit(X),
        "soft_dtw_barycenter": lambda p: tswarp.soft_dtw_barycenter(X, max_iter=4, progress=p),
        "dtw_path": lambda p: tswarp.dtw_path(X[0], X[1], progress=p),
    }
    for name, run in runs.items():
        capfd.readouterr()
        run(True)
        out, err = capfd.readouterr()
        assert out == "", name
        assert err.startswith("\r" + name) and "eta" in err, f"{name}: {err[-300:]!r}"
        assert re.search(r"\b(\d+)/\1\b", err) and err.endswith("\n"), f"{name}: {err[-300:]!r}"
        calls = []
        run(lambda done, total: calls.append((done, total)))
        assert calls and calls[-1][0] == calls[-1][1], f"{name}: {calls[-3:]}"
        assert all(0 <= d <= t for d, t in calls), name
        run(False)
        out, err = capfd.readouterr()
        assert out == "" and err == "", f"{name} without progress: {err!r}"


def test_kmeans_never_leaves_a_cluster_empty(rng):
    """Three identical series and a fourth apart, three clusters from random seeds: two
    seeds are often the same series, whose assignment ties go to the first; the empty
    cluster is re-seeded with a warning and every cluster keeps a series."""
    from tswarp.learn import SoftDTWKMeans

    base = rng.normal(size=30)
    X = np.stack([base, base, base, base + 5])
    warned = 0
    for seed in range(8):
        with _maybe_warns() as w:
            km = SoftDTWKMeans(n_clusters=3, init="random", max_iter=4, max_iter_barycenter=2,
                               random_state=seed).fit(X)
        warned += len(w)
        assert sorted(set(km.labels_.tolist())) == [0, 1, 2], (seed, km.labels_)
        assert isinstance(km.cluster_centers_, np.ndarray)
        assert km.cluster_centers_.shape == (3, 30, 1)
    assert warned > 0, "no seed produced an empty cluster: the test no longer tests it"


class _maybe_warns:
    """Collects UserWarnings (any number, none included)."""

    def __enter__(self):
        import warnings
        self._cm = warnings.catch_warnings(record=True)
        self.list = self._cm.__enter__()
        warnings.simplefilter("always", UserWarning)
        return self.list

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)
