"""Regressions of the hostile probe (issue 36): calls that crashed, hung or ignored Ctrl-C.

Each runs in a child process, so that a crash (a segfault, an abort inside the OpenMP
runtime) or a hang fails the test instead of taking pytest down: the child must finish (or,
for the Ctrl-C cases, stop within a second of SIGINT) with the expected outcome.
"""

import math
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tswarp
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


# ---- issue 36, silent wrong values: each case below gave inf, NaN, 0 or a wrong message ----

def test_soft_dtw_extreme_gamma_is_finite_or_refused():
    a, b = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 2.0, 2.0, 4.0, 5.0])
    acc = tswarp.dtw(a, b) ** 2
    for g in (1e-298, 1e-300, 2.3e-308):
        v = tswarp.soft_dtw(a, b, gamma=g)
        assert math.isfinite(v) and abs(v - acc) <= 1e-12 * acc, (g, v)
        assert tswarp.soft_dtw(a, a, gamma=g) == 0.0
        assert math.isfinite(tswarp.soft_dtw(a, b, gamma=g, normalize=True))
    for g in (1e-309, 5e-324, 1e301, 1e308):
        with pytest.raises(ValueError, match=r"gamma must be in \[2\.22507e-308, 1e\+300\]"):
            tswarp.soft_dtw(a, b, gamma=g, normalize=True)
    with pytest.raises(ValueError, match="gamma must be in .* for float32"):
        tswarp.soft_dtw(a.astype(np.float32), b.astype(np.float32), gamma=1e-39)
    v32 = tswarp.soft_dtw(a.astype(np.float32), b.astype(np.float32), gamma=1.2e-38)
    assert math.isclose(v32, acc, rel_tol=1e-6)
    # values near 1e140 with gamma 1 (the linear domain's exponents pass 1e299 there)
    s = 1e140
    v = tswarp.soft_dtw(a * s, b * s, gamma=1.0)
    assert math.isclose(v, acc * s * s, rel_tol=1e-12)
    D = tswarp.cdist(np.stack([a[:4], b[:4]]) * s, metric="soft_dtw", gamma=1.0, normalize=True)
    assert np.isfinite(D).all() and np.all(np.diag(D) == 0)


def test_twed_extreme_p():
    assert tswarp.twed([0.0, 3.0], [0.0, 0.0], p=700) == tswarp.twed([0.0, 3.0], [0.0, 0.0], p=1)
    assert tswarp.twed([0.0, 1e-5], [0.0, 0.0], p=100) > 0
    x = np.array([[0.0, 0.0], [3.0, 4.0]])
    z = np.zeros((2, 2))
    vals = [tswarp.twed(x, z, p=p, nu=0.0, lmbda=0.0, layout="channels_last")
            for p in (2, 10, 100, 500, 1000)]
    assert all(math.isfinite(v) for v in vals) and vals == sorted(vals, reverse=True)
    assert vals[-1] >= 4.0 * (1 - 1e-12)


def test_cosine_cost_is_scale_invariant():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3, 8, 3))
    base = tswarp.cdist(X, metric="dtw", cost="cosine")
    for s in (1e200, 1e-170, 1e154):
        np.testing.assert_allclose(tswarp.cdist(X * s, metric="dtw", cost="cosine"), base,
                                   rtol=1e-12, atol=1e-15)
        _, c = tswarp.dtw_path(X[0] * s, X[1], cost="cosine")
        assert math.isclose(c, base[0, 1], rel_tol=1e-12)
    X32 = X.astype(np.float32)
    np.testing.assert_allclose(tswarp.cdist(X32 * np.float32(1e19), metric="dtw", cost="cosine"),
                               base, rtol=1e-5, atol=1e-5)


def test_overflowing_costs_one_rule():
    assert tswarp.dtw([1e200, -1e200], [0.0, 1.0, 2.0]) == math.inf
    with pytest.raises(ValueError, match="too large for float64"):
        tswarp.dtw_path([1e200, -1e200], [0.0, 1.0, 2.0])
    for k in (None, 2):
        with pytest.raises(ValueError, match="too large for float64"):
            tswarp.subsequence_dtw([1e200], [0.0, 1.0], k=k)


def test_parameter_errors_name_the_parameter():
    with pytest.raises(ValueError) as info:
        tswarp.segmental_dtw(np.arange(10.0), np.arange(20.0), n_fragments=11)
    assert "n_fragments" in str(info.value) and "gamma" not in str(info.value)
