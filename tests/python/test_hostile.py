"""Regressions of the hostile probe (issue 36): calls that crashed, hung or ignored Ctrl-C.

Each runs in a child process, so that a crash (a segfault, an abort inside the OpenMP
runtime) or a hang fails the test instead of taking pytest down: the child must finish (or,
for the Ctrl-C cases, stop within a second of SIGINT) with the expected outcome.
"""

import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import popen_interruptible

PRELUDE = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import tswarp
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 40)).cumsum(axis=1)
    y = np.arange(12) % 2
    X[y == 1, 10:18] += 3
    """
)


def _run(code, timeout=120):
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


HUGE_JOBS = [
    ("find_shapelet", "from tswarp.shapelets import find_shapelet\n"
                      "find_shapelet(X, y, min_length=5, max_length=9, n_jobs=J)"),
    ("tree", "from tswarp.shapelets import ShapeletTreeClassifier\n"
             "ShapeletTreeClassifier(min_length=5, max_length=9, n_jobs=J).fit(X, y)"),
    ("transform", "from tswarp.shapelets import ShapeletTransform\n"
                  "ShapeletTransform(min_length=5, max_length=9, n_jobs=J).fit(X, y)"),
    ("shapelet_distances", "from tswarp.shapelets import shapelet_distances\n"
                           "shapelet_distances([X[0, :6]], X, n_jobs=J)"),
    ("soft_dtw_grad", "tswarp.soft_dtw_grad(X[:3, :, None], X[3:6, :, None], n_jobs=J)"),
    ("soft_dtw_barycenter", "tswarp.soft_dtw_barycenter(X, max_iter=3, n_jobs=J)"),
    ("SoftDTW", "import torch\nfrom tswarp.torch import SoftDTW\n"
                "SoftDTW(n_jobs=J)(torch.tensor(X[:3]), torch.tensor(X[3:6]))"),
    ("cdist", "tswarp.cdist(X, n_jobs=J)"),
    ("dtw_path", "tswarp.dtw_path(X[0], X[1], n_jobs=J)"),
    ("segmental", "tswarp.segmental_dtw(X[0], X[1], 4, n_jobs=J)"),
]


@pytest.mark.parametrize("jobs", ["100000", "10**6", "sys.maxsize"])
@pytest.mark.parametrize("name,code", HUGE_JOBS, ids=[h[0] for h in HUGE_JOBS])
def test_huge_n_jobs_is_clamped(name, code, jobs):
    """More threads than cores are never started (n_jobs is clamped to the cores this
    process may use): no stack overflow in libgomp, no 481 GB allocation."""
    if name == "SoftDTW":
        pytest.importorskip("torch")
    rc, out, err = _run(f"J = {jobs}\n{code}\nprint('ok')")
    assert rc == 0 and out.strip().endswith("ok"), f"exit {rc}\n{err[-2000:]}"


def test_huge_length_step_terminates():
    """length_step far beyond the longest series is one length; it used to overflow a
    signed loop counter and loop forever, deaf to Ctrl-C."""
    rc, out, err = _run(
        """
        from tswarp.shapelets import find_shapelet, ShapeletTransform
        s = find_shapelet(X, y, min_length=5, length_step=2**63 - 1)
        assert s.length == 5
        t = ShapeletTransform(min_length=5, length_step=2**63 - 1).fit(X, y)
        assert {x.length for x in t.shapelets_} == {5}
        print("ok")
        """, timeout=60)
    assert rc == 0 and "ok" in out, f"exit {rc}\n{err[-2000:]}"


def test_cli_huge_jobs_and_step(tmp_path):
    from tswarp.datasets import gunpoint_path
    train, test = str(gunpoint_path("train")), str(gunpoint_path("test"))
    for extra in (["-j", "100000"], ["--length-step", str(2**63 - 1)]):
        r = subprocess.run([sys.executable, "-m", "tswarp", "shapelets", train, test,
                            "--min-length", "30", "--max-length", "40"] + extra,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]


# device="cpu": the CPU kernels' polling is what is tested (on a GPU machine device="auto"
# sends a 200k x 200k pair to the GPU, which finishes it before the signal; seen on an H200)
SINGLE_PAIRS = [
    ("dtw", "tswarp.dtw(a, b, device='cpu')"),
    ("twed", "tswarp.twed(a, b, device='cpu')"),
    ("soft_dtw", "tswarp.soft_dtw(a, b, device='cpu')"),
    ("soft_dtw_grad", "tswarp.soft_dtw_grad(a[:12000], b[:12000])"),  # numpy: the CPU
    ("dtw_radius", "tswarp.dtw(np.tile(a, 40), np.tile(b, 40), radius=2000, device='cpu')"),
]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child is POSIX")
@pytest.mark.parametrize("name,call", SINGLE_PAIRS, ids=[s[0] for s in SINGLE_PAIRS])
def test_ctrl_c_stops_a_single_pair(name, call):
    """One long pair (200k x 200k cells: seconds to minutes) stops within a second of
    Ctrl-C, as the batch calls do."""
    code = PRELUDE + textwrap.dedent(
        f"""
        a = rng.standard_normal(200_000)
        b = rng.standard_normal(200_000)
        print("started", flush=True)
        t0 = time.monotonic()
        try:
            {call}
        except KeyboardInterrupt:
            print("interrupted after %.3f s" % (time.monotonic() - t0), flush=True)
            sys.exit(3)
        print("finished after %.3f s" % (time.monotonic() - t0), flush=True)
        """)
    proc = popen_interruptible([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(0.7)
        assert proc.poll() is None, f"{name} ended before the signal: make it longer"
        proc.send_signal(signal.SIGINT)
        t = time.monotonic()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{name}: still running 10 s after SIGINT")
        elapsed = time.monotonic() - t
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.returncode == 3, f"{name}: exit {proc.returncode}\n{out}\n{err[-2000:]}"
        assert elapsed < 1.0, f"{name}: exited {elapsed:.3f} s after SIGINT"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_stops_the_cli_distance(tmp_path):
    import numpy as np
    rng = np.random.default_rng(1)
    np.save(tmp_path / "a.npy", rng.standard_normal(200_000))
    np.save(tmp_path / "b.npy", rng.standard_normal(200_000))
    proc = popen_interruptible([sys.executable, "-m", "tswarp", "distance", str(tmp_path / "a.npy"),
                             str(tmp_path / "b.npy"), "--device", "cpu"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)  # the interpreter, numpy and tswarp load, then the pair runs
        assert proc.poll() is None, "the distance ended before the signal"
        proc.send_signal(signal.SIGINT)
        t = time.monotonic()
        proc.wait(timeout=10)
        assert time.monotonic() - t < 1.0
        assert proc.returncode == 130, proc.stderr.read()[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
