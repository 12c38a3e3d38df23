"""Alignment paths: tswarp.dtw_path, tswarp.subsequence_dtw, tswarp.plot.alignment, `tswarp align`.

Paths are compared cell for cell with
  - a brute-force dynamic program written here from the definition (D(0,0) = c(0,0),
    D(i,j) = min over steps of D(i-di, j-dj) + w c(i,j), ties to the first step in the
    pattern's order), on integer-valued inputs where exact ties are everywhere;
  - librosa.sequence.dtw with the same steps, weights and cost (its backtrace convention:
    the path comes end first, ties to the first step);
  - dtaidistance's warping_path (symmetric1, squared Euclidean) on continuous inputs (it
    breaks exact ties the other way round between (1,0) and (0,1)).
Every method (stored, linear memory with tiny blocks, auto) and thread count must give the
same path, the cost summed along the path must equal the returned cost, and subsequence DTW
must equal a brute force over every start column.
"""

import subprocess
import sys

import numpy as np
import pytest

import tswarp
from conftest import channels_last, unit_rows

# random series in tswarp's layout, any shape; costs compared as accumulated (conftest)
tswarp = channels_last(tswarp, accumulated=True)

STEPS = {"symmetric1": (((1, 1), (0, 1), (1, 0)), (1.0, 1.0, 1.0)),
         "p05": (((1, 1), (1, 2), (2, 1)), (2.0, 3.0, 3.0))}
COSTS = ("sqeuclidean", "euclidean", "abs", "cosine")


def local_costs(a, b, cost, dtype=np.float64):
    """c(i, j) for all cells, summed over the dims in order (as the library does)."""
    a = np.asarray(a, dtype).reshape(len(a), -1)
    b = np.asarray(b, dtype).reshape(len(b), -1)
    C = np.zeros((len(a), len(b)), dtype)
    if cost == "cosine":
        a, b = unit_rows(a, dtype), unit_rows(b, dtype)  # the library's unit vectors
        xx = np.zeros(len(a), dtype)
        yy = np.zeros(len(b), dtype)
        for k in range(a.shape[1]):
            C += np.multiply.outer(a[:, k], b[:, k])
            xx += a[:, k] * a[:, k]
            yy += b[:, k] * b[:, k]
        with np.errstate(divide="ignore", invalid="ignore"):
            C = dtype(1) - C / np.multiply.outer(np.sqrt(xx), np.sqrt(yy))
        C[np.logical_or.outer(xx == 0, yy == 0)] = 1
        C[np.logical_and.outer(xx == 0, yy == 0)] = 0
        return C
    for k in range(a.shape[1]):
        d = np.subtract.outer(a[:, k], b[:, k])
        C += np.abs(d) if cost == "abs" else d * d
    return np.sqrt(C) if cost == "euclidean" else C


def brute_force(C, step, subseq=False, admissible=None):
    """D and the path (end found by argmin in the last row for subsequence DTW)."""
    steps, weights = STEPS[step]
    n, m = C.shape
    dt = C.dtype.type
    inf = dt(np.inf)
    D = np.full((n, m), inf, C.dtype)
    code = np.zeros((n, m), np.int8)
    for i in range(n):
        for j in range(m):
            if admissible is not None and not admissible[i, j]:
                continue
            c = C[i, j]
            best, cd = inf, 0
            if i == 0 and (subseq or j == 0):
                best, cd = c, 3
            for s, ((di, dj), w) in enumerate(zip(steps, weights)):
                pi, pj = i - di, j - dj
                prev = D[pi, pj] if pi >= 0 and pj >= 0 else inf
                v = prev + dt(w) * c
                if v < best:
                    best, cd = v, s
            D[i, j] = best
            code[i, j] = cd
    end = int(np.argmin(D[-1])) if subseq else m - 1
    if not np.isfinite(D[-1, end]):
        return D, None
    path = [(n - 1, end)]
    i, j = n - 1, end
    while True:
        if subseq and i == 0:
            break
        s = code[i, j]
        if s == 3:
            break
        i, j = i - steps[s][0], j - steps[s][1]
        path.append((i, j))
    return D, np.array(path[::-1], dtype=np.int64)


def path_cost(C, path, step):
    steps, weights = STEPS[step]
    total = C[path[0][0], path[0][1]]
    for (i0, j0), (i1, j1) in zip(path[:-1], path[1:]):
        s = steps.index((int(i1 - i0), int(j1 - j0)))
        total = total + C.dtype.type(weights[s]) * C[i1, j1]
    return total


def p05_lengths(rng, nmax):
    n = int(rng.integers(1, nmax))
    m = int(rng.integers((n + 2) // 2, 2 * n))
    return n, max(m, 1)


# ---- against the brute force -------------------------------------------------------------

@pytest.mark.parametrize("step", ["symmetric1", "p05"])
@pytest.mark.parametrize("cost", COSTS)
def test_brute_force_ties(step, cost):
    rng = np.random.default_rng(hash((step, cost)) % 2**32)
    for _ in range(12):
        n, m = p05_lengths(rng, 25) if step == "p05" else rng.integers(1, 25, 2)
        d = int(rng.integers(1, 4))
        a = rng.integers(0, 3, (n, d)).astype(float)
        b = rng.integers(0, 3, (m, d)).astype(float)
        C = local_costs(a, b, cost)
        D, want = brute_force(C, step)
        for kw in ({"method": "stored"}, {"method": "linear", "memory_limit": 4},
                   {"method": "auto", "n_jobs": 1}, {"method": "linear", "memory_limit": 37, "n_jobs": 2}):
            path, c = tswarp.dtw_path(a, b, step=step, cost=cost, **kw)
            assert path.dtype == np.int64 and path.shape == want.shape, kw
            np.testing.assert_array_equal(path, want, err_msg=str(kw))
            assert c == D[-1, -1]
            assert path_cost(C, path, step) == c


def test_float32_brute_force():
    rng = np.random.default_rng(3)
    for step in STEPS:
        a = rng.integers(0, 4, (30, 2)).astype(np.float32)
        b = rng.integers(0, 4, (40, 2)).astype(np.float32)
        C = local_costs(a, b, "sqeuclidean", np.float32)
        D, want = brute_force(C, step)
        path, c = tswarp.dtw_path(a, b, step=step)
        np.testing.assert_array_equal(path, want)
        assert c == float(D[-1, -1])


def admissible_cells(mask):
    """tslearn's masks: boolean True = admissible (recent versions), or 0 / inf (older)."""
    mask = np.asarray(mask)
    return mask if mask.dtype == bool else mask == 0


def test_window_brute_force():
    rng = np.random.default_rng(4)
    from_tslearn = pytest.importorskip("tslearn.metrics")
    for trial in range(10):
        n, m = int(rng.integers(5, 30)), int(rng.integers(5, 30))
        a, b = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
        if trial % 2:
            radius = int(rng.integers(0, 4))
            mask = admissible_cells(from_tslearn.sakoe_chiba_mask(n, m, radius))
            kw = {"radius": radius}
        else:
            slope = float(rng.uniform(1.5, 3))
            try:
                mask = admissible_cells(from_tslearn.itakura_mask(n, m, slope))
            except RuntimeWarning:  # tslearn: no admissible path for these sizes
                with pytest.raises(ValueError, match="no alignment path"):
                    tswarp.dtw_path(a, b, itakura_max_slope=slope)
                continue
            kw = {"itakura_max_slope": slope}
        C = local_costs(a, b, "sqeuclidean")
        D, want = brute_force(C, "symmetric1", admissible=mask)
        if want is None:
            with pytest.raises(ValueError, match="no alignment path"):
                tswarp.dtw_path(a, b, **kw)
            continue
        path, c = tswarp.dtw_path(a, b, **kw)
        np.testing.assert_array_equal(path, want)
        assert c == D[-1, -1]
        assert mask[path[:, 0], path[:, 1]].all()
        # equals the core's DTW distance with the same window
        assert np.isclose(c, tswarp.dtw(a, b, accumulated=True, **kw), rtol=1e-12)


# ---- against librosa and dtaidistance ----------------------------------------------------------

def librosa_path(a, b, step, metric):
    librosa = pytest.importorskip("librosa")
    kw = {}
    if step == "p05":
        kw = dict(step_sizes_sigma=np.array([[1, 1], [1, 2], [2, 1]]), weights_mul=np.array([2, 3, 3]))
    D, wp = librosa.sequence.dtw(np.atleast_2d(a.T), np.atleast_2d(b.T), metric=metric, **kw)
    return wp[::-1].astype(np.int64), D[-1, -1]


@pytest.mark.parametrize("step", ["symmetric1", "p05"])
@pytest.mark.parametrize("cost,metric,integers", [("sqeuclidean", "sqeuclidean", True),
                                                  ("abs", "cityblock", True),
                                                  ("euclidean", "euclidean", False),
                                                  ("cosine", "cosine", False)])
def test_librosa(step, cost, metric, integers):
    rng = np.random.default_rng(11)
    for _ in range(6):
        n, m = p05_lengths(rng, 60) if step == "p05" else rng.integers(2, 60, 2)
        d = int(rng.integers(1, 13))
        if integers:
            a, b = rng.integers(0, 3, (n, d)).astype(float), rng.integers(0, 3, (m, d)).astype(float)
        else:
            a, b = rng.random((n, d)), rng.random((m, d))
        want, wcost = librosa_path(a, b, step, metric)
        path, c = tswarp.dtw_path(a, b, step=step, cost=cost)
        np.testing.assert_array_equal(path, want)
        assert c == pytest.approx(wcost, rel=1e-12, abs=1e-12)


def test_dtaidistance():
    dtw = pytest.importorskip("dtaidistance.dtw")
    dtw_ndim = pytest.importorskip("dtaidistance.dtw_ndim")
    rng = np.random.default_rng(12)
    for _ in range(8):
        n, m = rng.integers(2, 80, 2)
        a, b = rng.normal(size=n), rng.normal(size=m)
        want = np.array(dtw.warping_path(a, b), dtype=np.int64)
        path, c = tswarp.dtw_path(a, b)
        np.testing.assert_array_equal(path, want)
        assert np.sqrt(c) == pytest.approx(dtw.distance(a, b), rel=1e-12)
        A, B = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
        want = np.array(dtw_ndim.warping_path(A, B), dtype=np.int64)
        np.testing.assert_array_equal(tswarp.dtw_path(A, B)[0], want)


# ---- properties ---------------------------------------------------------------------------------

def test_methods_and_threads_agree_large():
    rng = np.random.default_rng(5)
    for step, (n, m) in (("symmetric1", (900, 1300)), ("p05", (1200, 1500))):
        a = rng.integers(0, 3, (n, 3)).astype(float)
        b = rng.integers(0, 3, (m, 3)).astype(float)
        ref, c0 = tswarp.dtw_path(a, b, step=step, method="stored", n_jobs=1)
        steps = STEPS[step][0]
        assert tuple(ref[0]) == (0, 0) and tuple(ref[-1]) == (n - 1, m - 1)
        assert all(tuple(d) in steps for d in np.diff(ref, axis=0))
        C = local_costs(a, b, "sqeuclidean")
        assert path_cost(C, ref, step) == c0
        for kw in ({"method": "linear", "memory_limit": 1000}, {"method": "linear", "memory_limit": 1},
                   {"method": "auto", "n_jobs": 2}, {"method": "stored", "n_jobs": 3}):
            path, c = tswarp.dtw_path(a, b, step=step, **kw)
            np.testing.assert_array_equal(path, ref, err_msg=str(kw))
            assert c == c0


@pytest.mark.parametrize("step", ["p05", "symmetric1"])
def test_windowed_paths_do_not_depend_on_threads(rng, step):
    """Wide grids (m >= 2100: the forward pass cuts the columns into one block of >= 1024
    per thread) with Itakura and Sakoe-Chiba windows: 2 to 4 threads give the 1-thread path,
    call after call. Regression: a row whose window starts right of a thread's block was
    filled with +inf past the block, over the step codes the next thread had not packed yet
    (a race: Itakura paths of equal cost but other cells, a few calls in ten)."""
    for trial in range(3):
        n = int(rng.integers(1200, 1500))
        m = int(rng.integers(2100, int(1.8 * n)))  # a slope of 2.5 or more admits a path
        dim = int(rng.choice([1, 3]))
        a = rng.integers(0, 3, (n, dim)).astype(float)
        b = rng.integers(0, 3, (m, dim)).astype(float)
        kw = ({"itakura_max_slope": float(rng.uniform(2.5, 3.5))} if trial < 2 else
              {"radius": int(rng.integers(20, 300))})
        what = f"seed={rng.seed} trial={trial} n={n} m={m} dim={dim} {kw}"
        ref, c0 = tswarp.dtw_path(a, b, step=step, method="stored", n_jobs=1, **kw)
        assert path_cost(local_costs(a, b, "sqeuclidean"), ref, step) == c0, what
        for rep in range(12):
            path, c = tswarp.dtw_path(a, b, step=step, method="stored", n_jobs=2 + rep % 3, **kw)
            np.testing.assert_array_equal(path, ref, err_msg=f"{what} call {rep}")
            assert c == c0, what


def test_symmetric1_equals_dtw():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(70, 2)), rng.normal(size=(50, 2))
    for cost in COSTS:
        _, c = tswarp.dtw_path(a, b, cost=cost)
        assert c == pytest.approx(tswarp.dtw(a, b, cost=cost, accumulated=True), rel=1e-12)


def test_progress_callable_counts_cells():
    calls = []
    a, b = np.random.default_rng(7).normal(size=(400, 2)), np.random.default_rng(8).normal(size=(300, 2))
    tswarp.dtw_path(a, b, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]
    assert all(d <= t for d, t in calls)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tswarp.dtw_path(a, b, progress=stop)


# ---- subsequence DTW ------------------------------------------------------------------------------

@pytest.mark.parametrize("step", ["symmetric1", "p05"])
def test_subsequence_brute_force(step):
    rng = np.random.default_rng(21)
    for trial in range(10):
        n, m = int(rng.integers(1, 10)), int(rng.integers(10, 40))
        q = rng.integers(0, 3, (n, 2)).astype(float)
        r = rng.integers(0, 3, (m, 2)).astype(float)
        C = local_costs(q, r, "sqeuclidean")
        # brute force over every start column s: a full DTW of q against r[s:]
        best = np.full(m, np.inf)
        for s in range(m):
            Ds, _ = brute_force(C[:, s:], step)
            best[s:] = np.minimum(best[s:], Ds[-1])
        D, want = brute_force(C, step, subseq=True)
        np.testing.assert_array_equal(D[-1], best)
        match = tswarp.subsequence_dtw(q, r, step=step, method="linear" if trial % 2 else "auto",
                                       memory_limit=3 if trial % 2 else None)
        start, end, cost = match
        assert end == int(np.argmin(best)) and cost == best[end]
        np.testing.assert_array_equal(match.path, want)
        assert start == want[0, 1] and match.path[-1, 1] == end
        assert path_cost(C, match.path, step) == cost


def test_subsequence_librosa_and_k():
    librosa = pytest.importorskip("librosa")
    rng = np.random.default_rng(22)
    q = rng.random((20, 3))
    r = np.concatenate([rng.random((50, 3)), q + 0.01, rng.random((30, 3)), q[::-1], rng.random((40, 3))])
    D, wp = librosa.sequence.dtw(q.T, r.T, subseq=True, metric="euclidean")
    m = tswarp.subsequence_dtw(q, r, cost="euclidean")
    np.testing.assert_array_equal(m.path, wp[::-1])
    assert m.cost == pytest.approx(D[-1].min(), rel=1e-12)
    assert m.start == 50
    matches = tswarp.subsequence_dtw(q, r, cost="euclidean", k=4)
    assert len(matches) == 4 and matches[0] == m
    costs = [x.cost for x in matches]
    assert costs == sorted(costs)
    for i, x in enumerate(matches):
        assert x.path[0, 0] == 0 and x.path[-1, 0] == len(q) - 1
        assert (x.path[0, 1], x.path[-1, 1]) == (x.start, x.end)
        for y in matches[:i]:
            assert x.end < y.start or x.start > y.end
    no_paths = tswarp.subsequence_dtw(q, r, cost="euclidean", k=4, return_path=False)
    assert [tuple(x) for x in no_paths] == [tuple(x) for x in matches]
    assert all(x.path is None for x in no_paths)


# ---- bad inputs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,exc,match", [
    ({"step": "p10"}, ValueError, "step"),
    ({"step": 1}, TypeError, "step"),
    ({"cost": "l7"}, ValueError, "cost"),
    ({"method": "fast"}, ValueError, "method"),
    ({"memory_limit": 0}, ValueError, "memory_limit"),
    ({"memory_limit": 1.5}, TypeError, "memory_limit"),
    ({"window": -1}, ValueError, "window"),
    ({"window": 2}, ValueError, "radius=2"),
    ({"radius": -1}, ValueError, "radius"),
    ({"radius": 0.5}, ValueError, "window=0.5"),
    ({"accumulated": "no"}, TypeError, "accumulated"),
    ({"layout": "ncl"}, ValueError, "layout"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
    ({"device": "tpu"}, ValueError, "device"),
    ({"progress": 3}, TypeError, "progress"),
    ({"gamma": 1.0}, TypeError, "gamma"),
])
def test_bad_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        tswarp.dtw_path([0.0, 1.0], [1.0, 2.0], **kwargs)


def test_bad_inputs():
    with pytest.raises(ValueError, match="a contains NaN"):
        tswarp.dtw_path([0.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="b contains NaN"):
        tswarp.dtw_path([0.0, 1.0], [np.inf, 2.0])
    with pytest.raises(ValueError, match="a is empty"):
        tswarp.dtw_path([], [1.0, 2.0])
    with pytest.raises(ValueError, match="dimension"):
        tswarp.dtw_path(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(TypeError, match="a has dtype"):
        tswarp.dtw_path(np.array(["x", "y"]), [1.0, 2.0])
    # p05 cannot reach the end: m <= 2n - 1 and n <= 2m - 1
    with pytest.raises(ValueError, match="no alignment path"):
        tswarp.dtw_path(np.zeros(3), np.zeros(6), step="p05")
    tswarp.dtw_path(np.zeros(3), np.zeros(5), step="p05")
    with pytest.raises(ValueError, match="no alignment path"):
        tswarp.subsequence_dtw(np.zeros(6), np.zeros(3), step="p05")
    with pytest.raises(TypeError, match="window"):  # no windows for subsequence DTW
        tswarp.subsequence_dtw([0.0, 1.0], [1.0, 2.0, 3.0], window=1)
    with pytest.raises(TypeError, match="radius"):
        tswarp.subsequence_dtw([0.0, 1.0], [1.0, 2.0, 3.0], radius=1)
    with pytest.raises(ValueError, match="k"):
        tswarp.subsequence_dtw([0.0, 1.0], [1.0, 2.0, 3.0], k=0)
    with pytest.raises(ValueError, match="query contains NaN"):
        tswarp.subsequence_dtw([np.nan], [1.0, 2.0, 3.0])


# ---- plot and CLI ----------------------------------------------------------------------------------

def test_import_does_not_load_matplotlib():
    code = "import sys, tswarp; tswarp.dtw_path([0.0], [1.0]); print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_align(tmp_path):
    pytest.importorskip("matplotlib")
    from tswarp.cli import main

    rng = np.random.default_rng(10)
    a, b = rng.normal(size=(1, 80, 3)), rng.normal(size=(1, 100, 3))
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    out, png = tmp_path / "p.csv", tmp_path / "p.png"
    rc = main(["align", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--step", "p05", "--cost",
               "cosine", "--out", str(out), "--plot", str(png)])
    assert rc == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "i,j"
    got = np.array([[int(v) for v in line.split(",")] for line in lines[1:]])
    want, _ = tswarp.dtw_path(a[0], b[0], step="p05", cost="cosine")
    np.testing.assert_array_equal(got, want)
    assert png.stat().st_size > 1000
    assert main(["align", str(tmp_path / "missing.npy"), str(tmp_path / "b.npy")]) == 2
    assert main(["align", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--out", str(tmp_path / "x.txt2")]) == 2
