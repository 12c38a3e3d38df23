"""Nearest neighbours (issue 32): knn equals cdist + a stable sort, the lower bounds never
exceed the distance, search equals a brute force over every window, the estimators pass
scikit-learn's check_estimator, and 1-NN DTW on the UCR data sets aeon ships gives the
archive's published error rates. Random inputs come from the `rng` fixture (seed printed).
"""

import math

import numpy as np
import pytest

import tswarp
from conftest import outputs_by_simd_level
from tswarp.neighbors import KNeighborsTimeSeriesClassifier, KNeighborsTimeSeriesRegressor

CL = "channels_last"


def stable_topk(C, k):
    order = np.argsort(C, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(C, order, 1), order


def walks(rng, shape, dtype=np.float64):
    return rng.standard_normal(shape).cumsum(axis=1).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("dim", [1, 3])
@pytest.mark.parametrize("cost", ["sqeuclidean", "abs", "euclidean", "cosine"])
def test_knn_equals_cdist_and_stable_sort(rng, dtype, dim, cost):
    what = f"seed={rng.seed}"
    Q = walks(rng, (6, 30, dim), dtype)
    X = walks(rng, (150, 30, dim), dtype)
    X[40] = X[7]  # exact ties: the smaller index first
    X[99] = X[7]
    Q[2] = X[7]
    for kw in ({}, {"window": 0.0}, {"window": 0.1}, {"radius": 4}, {"itakura_max_slope": 2.0}):
        for k in (1, 5):
            D, I = tswarp.knn(Q, X, k, cost=cost, layout=CL, **kw)
            ref, order = stable_topk(tswarp.cdist(Q, X, cost=cost, layout=CL, _impl="reference",
                                                  **kw), k)
            assert D.dtype == dtype and I.dtype == np.int64 and D.shape == (6, k)
            np.testing.assert_array_equal(I, order, err_msg=f"{what} {kw} k={k}")
            np.testing.assert_array_equal(D, ref, err_msg=f"{what} {kw} k={k}")
            fast = tswarp.cdist(Q, X, cost=cost, layout=CL, **kw)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(D, np.take_along_axis(fast, order, 1), rtol=tol,
                                       atol=tol * float(np.abs(fast).max()), err_msg=what)
    if cost != "cosine" or dim > 1:  # (d = 1: every cosine cost is 0 or 2; ties abound)
        assert list(tswarp.knn(Q, X, 3, cost=cost, layout=CL)[1][2]) == [7, 40, 99]


def test_knn_lanes_equal_one_at_a_time_and_the_reference(rng, monkeypatch):
    """Univariate candidates of one length go through DTW in SIMD lanes that abandon together,
    with the diagonal paths capping the threshold (two channels: one at a time);
    TSWARP_KNN_LANES=0 computes them one at a time.
    Both give the reference's stable top k, bit for bit (near neighbours planted, so that
    groups both finish and abandon)."""
    for trial in range(6):
        dim = 1 if trial < 4 else 2
        dtype = np.float32 if trial % 2 else np.float64
        n = int(rng.integers(20, 90))
        Q = walks(rng, (12, n, dim), dtype)
        X = walks(rng, (int(rng.integers(40, 300)), n, dim), dtype)
        for i in range(0, len(X), 7):
            X[i] = (Q[i % len(Q)] + 0.3 * rng.standard_normal((n, dim))).astype(dtype)
        kw = [{"window": 0.1}, {"radius": 3}, {}, {"window": 0.0}, {"window": 0.2},
              {"itakura_max_slope": 2.0}][trial]
        cost = ["sqeuclidean", "abs", "euclidean"][trial % 3]
        k = int(rng.integers(1, 8))
        what = f"seed={rng.seed} trial={trial} {kw} {cost} k={k}"
        ref, order = stable_topk(tswarp.cdist(Q, X, cost=cost, layout=CL, _impl="reference",
                                              **kw), k)
        D, I = tswarp.knn(Q, X, k, cost=cost, layout=CL, **kw)
        monkeypatch.setenv("TSWARP_KNN_LANES", "0")
        D0, I0 = tswarp.knn(Q, X, k, cost=cost, layout=CL, **kw)
        monkeypatch.delenv("TSWARP_KNN_LANES")
        for got_d, got_i in ((D, I), (D0, I0)):
            np.testing.assert_array_equal(got_i, order, err_msg=what)
            np.testing.assert_array_equal(got_d, ref, err_msg=what)


@pytest.mark.parametrize("metric,params", [("twed", {}), ("twed", {"nu": 0.1, "lmbda": 0.5}),
                                           ("soft_dtw", {"gamma": 0.5}),
                                           ("soft_dtw", {"normalize": True})])
def test_knn_other_measures(rng, metric, params):
    Q, X = walks(rng, (5, 25)), walks(rng, (90, 25))
    X[30] = X[3]
    D, I = tswarp.knn(Q, X, 4, metric=metric, **params)
    C = tswarp.cdist(Q, X, metric=metric, _impl="reference", **params)
    ref, order = stable_topk(C, 4)
    np.testing.assert_array_equal(I, order, err_msg=f"seed={rng.seed}")
    np.testing.assert_allclose(D, ref, rtol=1e-12, atol=1e-12, err_msg=f"seed={rng.seed}")


def test_knn_ragged_and_thread_counts(rng):
    Q = [rng.standard_normal(n).cumsum() for n in (12, 30, 41)]
    X = [rng.standard_normal(int(n)).cumsum() for n in rng.integers(5, 50, 120)]
    for kw in ({}, {"window": 0.2}, {"radius": 3}, {"itakura_max_slope": 3.0}):
        ref, order = stable_topk(tswarp.cdist(Q, X, _impl="reference", **kw), 6)
        for n_jobs in (1, 2, 3):
            D, I = tswarp.knn(Q, X, 6, n_jobs=n_jobs, **kw)
            np.testing.assert_array_equal(I, order, err_msg=f"seed={rng.seed} {kw} {n_jobs}")
            np.testing.assert_array_equal(D, ref)


def test_knn_bad_input(rng):
    X = walks(rng, (10, 20))
    with pytest.raises(ValueError, match="k = 11"):
        tswarp.knn(X, X, 11)
    with pytest.raises(ValueError, match="k must be a positive int"):
        tswarp.knn(X, X, 0)
    with pytest.raises(TypeError, match="k must be an int"):
        tswarp.knn(X, X, 1.0)
    bad = X.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"X\[3\] contains NaN"):
        tswarp.knn(X, bad, 1)
    with pytest.raises(ValueError, match=r"Q\[3\] contains NaN"):
        tswarp.knn(bad, X, 1)
    with pytest.raises(ValueError, match="window"):
        tswarp.knn(X, X, 1, window=1.5)
    with pytest.raises(ValueError, match="dimension"):
        tswarp.knn(X, X[:, :, None].repeat(2, axis=2), 1)
    with pytest.raises(ValueError, match="empty"):
        tswarp.knn(X, [], 1)


BOUNDS = {
    "kim": lambda q, X, **kw: tswarp.lb_kim(q, X, **kw),
    "keogh": lambda q, X, **kw: tswarp.lb_keogh(q, X, **kw),
    "keogh_data": lambda q, X, **kw: tswarp.lb_keogh(q, X, envelope="data", **kw),
    "improved": lambda q, X, **kw: tswarp.lb_improved(q, X, **kw),
    "enhanced": lambda q, X, **kw: tswarp.lb_enhanced(q, X, bands=3, **kw),
    "webb": lambda q, X, **kw: tswarp.lb_webb(q, X, **kw),
}


@pytest.mark.parametrize("bound", list(BOUNDS))
def test_lower_bounds_never_exceed_the_distance(rng, bound):
    for trial in range(24):
        dim = int(rng.integers(1, 4))
        n = int(rng.integers(1, 40))
        q = rng.standard_normal((n, dim)).cumsum(axis=0)
        X = [rng.standard_normal((int(rng.integers(1, 40)), dim)).cumsum(axis=0)
             for _ in range(20)]
        kw = [{}, {"window": float(rng.uniform(0, 1))}, {"radius": int(rng.integers(0, 6))},
              {"itakura_max_slope": float(rng.uniform(1, 4))}][trial % 4]
        for cost in ("sqeuclidean", "abs", "euclidean"):
            if bound in ("improved", "webb") and cost == "euclidean" and dim > 1:
                with pytest.raises(NotImplementedError,
                                   match="LB_Improved" if bound == "improved" else "LB_Webb"):
                    BOUNDS[bound](q, X, cost=cost, layout=CL, **kw)
                continue
            for acc in (False, True):
                d = np.array([tswarp.dtw(q, x, cost=cost, accumulated=acc, layout=CL, **kw)
                              for x in X])
                lb = BOUNDS[bound](q, X, cost=cost, accumulated=acc, layout=CL, **kw)
                assert lb.shape == (20,) and (lb >= 0).all()
                assert (lb <= d * (1 + 1e-12) + 1e-12).all(), \
                    f"seed={rng.seed} trial={trial} {kw} {cost} {lb} {d}"


def test_lower_bounds_float32_and_tightness(rng):
    q = rng.standard_normal(128).cumsum()
    X = rng.standard_normal((40, 128)).cumsum(axis=1)
    d = tswarp.cdist([q], X, window=0.1)[0]
    keogh = tswarp.lb_keogh(q, X, window=0.1)
    assert (tswarp.lb_improved(q, X, window=0.1) >= keogh - 1e-12).all()
    assert (keogh <= d).all() and np.mean(keogh / d) > 0.3  # a bound that prunes
    lb32 = tswarp.lb_keogh(q.astype(np.float32), X.astype(np.float32), window=0.1)
    d32 = tswarp.cdist([q.astype(np.float32)], X.astype(np.float32), window=0.1)[0]
    assert (lb32 <= d32 * (1 + 1e-5)).all(), f"seed={rng.seed}"
    assert isinstance(tswarp.lb_kim(q, X[0]), float)
    assert tswarp.lb_kim(q, q) == 0.0
    with pytest.raises(NotImplementedError, match="cosine"):
        tswarp.lb_keogh(q, X, cost="cosine")
    assert (tswarp.lb_kim(q, X, cost="cosine") <= tswarp.cdist([q], X, cost="cosine")[0]).all()


def lb_webb_reference(q, x, r, cost):
    """LB_Webb written from its definition for a Sakoe-Chiba radius r and equal lengths, one
    channel at a time, by brute-force windows: LB_Keogh of x's points on the query's
    envelope, plus each query point's cost to x's box beyond what LB_Keogh charged."""
    n = len(q)
    term = (lambda d: d * d) if cost == "sqeuclidean" else abs
    total = 0.0
    for c in range(q.shape[1]):
        a, b = q[:, c], x[:, c]
        win = [range(max(0, k - r), min(n, k + r + 1)) for k in range(n)]
        qlo = np.array([min(a[i] for i in w) for w in win])
        qhi = np.array([max(a[i] for i in w) for w in win])
        for j in range(n):
            total += term(qlo[j] - b[j]) if b[j] < qlo[j] else \
                term(b[j] - qhi[j]) if b[j] > qhi[j] else 0.0
        for i in range(n):
            lo, hi = min(b[j] for j in win[i]), max(b[j] for j in win[i])
            if a[i] > hi:  # KEOGH charged the columns below the query's box up to qlo
                cut = max([qlo[j] for j in win[i] if b[j] < qlo[j]] + [hi])
                total += term(a[i] - hi) - term(cut - hi)
            elif a[i] < lo:
                cut = min([qhi[j] for j in win[i] if b[j] > qhi[j]] + [lo])
                total += term(lo - a[i]) - term(lo - cut)
    return total


def test_lb_webb_equals_its_definition_and_tightens_keogh(rng):
    """LB_Webb against a brute-force reference (Sakoe-Chiba, equal lengths), >= LB_Keogh
    always, and strictly tighter on average over random walks (its second part counts)."""
    for trial in range(30):
        n, dim, r = int(rng.integers(2, 40)), int(rng.integers(1, 3)), int(rng.integers(0, 8))
        q = rng.standard_normal((n, dim)).cumsum(axis=0)
        X = [rng.standard_normal((n, dim)).cumsum(axis=0) for _ in range(6)]
        for cost in ("sqeuclidean", "abs"):
            got = tswarp.lb_webb(q, X, radius=r, cost=cost, accumulated=True, layout=CL)
            want = [lb_webb_reference(q, x, r, cost) for x in X]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"seed={rng.seed} trial={trial} {cost}")
    q = rng.standard_normal(128).cumsum()
    X = rng.standard_normal((200, 128)).cumsum(axis=1)
    d = tswarp.cdist([q], X, window=0.1)[0]
    keogh = tswarp.lb_keogh(q, X, window=0.1)
    webb = tswarp.lb_webb(q, X, window=0.1)
    assert (webb >= keogh).all() and (webb <= d * (1 + 1e-12)).all(), f"seed={rng.seed}"
    assert np.mean(webb / d) > np.mean(keogh / d) + 0.02, f"seed={rng.seed}"
    w32 = tswarp.lb_webb(q.astype(np.float32), X.astype(np.float32), window=0.1)
    d32 = tswarp.cdist([q.astype(np.float32)], X.astype(np.float32), window=0.1)[0]
    assert (w32 <= d32 * (1 + 1e-5)).all(), f"seed={rng.seed}"


def test_envelope_is_the_sliding_min_and_max(rng):
    x = rng.standard_normal(60)
    for r in (0, 1, 5, 100):
        lo, hi = tswarp.envelope(x, radius=r)
        want_lo = [x[max(0, i - r): i + r + 1].min() for i in range(60)]
        want_hi = [x[max(0, i - r): i + r + 1].max() for i in range(60)]
        np.testing.assert_array_equal(lo, want_lo)
        np.testing.assert_array_equal(hi, want_hi)
    lo, hi = tswarp.envelope(rng.standard_normal((30, 2)), window=0.1, layout=CL)
    assert lo.shape == hi.shape == (30, 2) and (lo <= hi).all()
    lo, hi = tswarp.envelope(x, radius=2, length=80)
    assert lo.shape == (80,)


def znorm(w):
    out = np.empty_like(w, dtype=float)
    for c in range(w.shape[1]):
        v = w[:, c].astype(float)
        out[:, c] = 0 if np.ptp(v) == 0 else (v - v.mean()) / v.std()
    return out


def brute_search(q, s, k, excl, zn, **kw):
    n = len(q)
    qz = znorm(q) if zn else q.astype(float)
    W = len(s) - n + 1
    d = np.array([tswarp.dtw(qz, znorm(s[i:i + n]) if zn else s[i:i + n].astype(float),
                             layout=CL, **kw) for i in range(W)])
    picks = []
    for i in np.lexsort((np.arange(W), d)):
        if all(abs(i - p) >= excl for p in picks):
            picks.append(i)
        if len(picks) == k:
            break
    return np.array(picks, dtype=np.int64), d[picks]


def test_search_equals_brute_force(rng):
    for t in range(30):
        dim = int(rng.integers(1, 3))
        n = int(rng.integers(4, 25))
        N = int(rng.integers(n, 300))
        s = rng.standard_normal((N, dim)).cumsum(axis=0)
        if t % 5 == 0 and N > 120:
            s[50:120] = 3.0  # constant windows: z-normalised to 0
        q = rng.standard_normal((n, dim)).cumsum(axis=0) if t % 3 else s[N - n:].copy()
        k = min(int(rng.integers(1, 6)), N - n + 1)
        excl = int(rng.integers(1, n + 3))
        zn = bool(t % 4)
        kw = [{}, {"window": 0.1}, {"radius": 2}, {"radius": 0}][t % 4]
        cost = ["sqeuclidean", "abs", "euclidean"][t % 3]
        st, d = tswarp.search(q, s, k, exclusion=excl, znorm=zn, cost=cost, layout=CL,
                              n_jobs=int(rng.integers(1, 4)), **kw)
        bs, bd = brute_search(q, s, k, excl, zn, cost=cost, **kw)
        what = f"seed={rng.seed} trial={t}"
        np.testing.assert_array_equal(st, bs, err_msg=what)
        np.testing.assert_allclose(d, bd, rtol=1e-9, atol=1e-9, err_msg=what)


def brute_search_blocks(q, s, k, excl, zn, **kw):
    """brute_search through cdist over every window (series of many chunks)."""
    n = len(q)
    qz = znorm(q) if zn else q.astype(float)
    W = np.lib.stride_tricks.sliding_window_view(s.astype(float), n, axis=0)
    W = np.moveaxis(W, -1, 1)  # (windows, n, dim)
    if zn:
        mu = W.mean(axis=1, keepdims=True)
        sd = W.std(axis=1, keepdims=True)
        flat = np.ptp(W, axis=1, keepdims=True) == 0
        W = np.where(flat, 0.0, (W - mu) / np.where(flat, 1.0, sd))
    d = np.concatenate([tswarp.cdist(qz[None], W[a:a + 20000], layout=CL, **kw)[0]
                        for a in range(0, len(W), 20000)])
    picks = []
    for i in np.lexsort((np.arange(len(d)), d)):
        if all(abs(i - p) >= excl for p in picks):
            picks.append(i)
        if len(picks) == k:
            break
    return np.array(picks, dtype=np.int64), d[picks]


def test_search_many_chunks_equals_brute_force(rng):
    """Series of several chunks (8192 windows each): the seeds ranked by the proxy, the
    vectorised univariate cascade and the general one against every window's distance;
    the answer does not depend on the thread count, and float32 series read as double."""
    for t in range(6):
        dim = 1 if t < 4 else 2
        n = int(rng.integers(8, 90))
        N = int(rng.integers(20_000, 40_000))
        s = rng.standard_normal((N, dim)).cumsum(axis=0)
        if t % 3 == 0:
            s[3000:3400] = s[3000]  # constant windows: z-normalised to 0
        if t % 2:  # a query from the series, planted again further on (with its own noise:
            # an exact copy ties, and rounding orders ties), and its neighbours
            a = int(rng.integers(0, N - 2 * n))
            q = s[a:a + n] + 0.05 * rng.standard_normal((n, dim))
            b = int(rng.integers(0, N - n))
            s[b:b + n] = 2.0 * s[a:a + n] - 1.0 + 0.02 * rng.standard_normal((n, dim))
        else:
            q = rng.standard_normal((n, dim)).cumsum(axis=0)
        dtype = np.float32 if t == 2 else np.float64
        s = s.astype(dtype)
        k = int(rng.integers(1, 6))
        excl = int(rng.integers(1, 2 * n))
        zn = t != 3
        kw = [{"window": 0.1}, {"radius": 3}, {}, {"radius": 0}, {"window": 0.05}, {}][t]
        cost = ["sqeuclidean", "abs", "euclidean"][t % 3]
        what = f"seed={rng.seed} trial={t}"
        bs, bd = brute_search_blocks(q.astype(dtype), s, k, excl, zn, cost=cost, **kw)
        for n_jobs in (1, 2):
            st, d = tswarp.search(q.astype(dtype), s, k, exclusion=excl, znorm=zn, cost=cost,
                                  layout=CL, n_jobs=n_jobs, **kw)
            np.testing.assert_array_equal(st, bs, err_msg=what)
            np.testing.assert_allclose(d, bd, rtol=1e-9, atol=1e-9, err_msg=what)


def test_search_same_answer_on_every_simd_level(rng, tmp_path):
    """The per-chunk kernels run as AVX2 or portable code, by the CPU (TSWARP_SIMD caps it):
    both give the same matches and distances (they only prune; the answer is exact), and the
    same LB_Keogh sums and knn answers bit for bit (one order of operations in both)."""
    s = rng.standard_normal(60_000).cumsum()
    q = s[41_000:41_100] + 0.1 * rng.standard_normal(100)
    np.save(tmp_path / "s.npy", s)
    np.save(tmp_path / "q.npy", q)
    code = ("import numpy as np, tswarp, sys\n"
            f"s = np.load({str(tmp_path / 's.npy')!r}); q = np.load({str(tmp_path / 'q.npy')!r})\n"
            "st, d = tswarp.search(q, s, 4, window=0.1, exclusion=50)\n"
            "X = s[:60_000 - 60_000 % 97].reshape(-1, 97)\n"
            "lb = tswarp.lb_keogh(X[3], X, window=0.1).tobytes().hex()\n"
            "lb32 = tswarp.lb_keogh(X[3].astype('f4'), X.astype('f4'), radius=2,"
            " cost='abs').tobytes().hex()\n"
            "D, I = tswarp.knn(X[:40], X[40:], 3, window=0.1)\n"
            "print(tswarp.info()['simd'], list(st), repr(list(d)), lb, lb32,"
            " D.tobytes().hex(), I.tobytes().hex())\n")
    outs = outputs_by_simd_level(code, ("", "sse2"))
    assert "sse2" in outs, outs
    assert len(set(outs.values())) == 1, f"seed={rng.seed} {outs}"
    st, d = tswarp.search(q, s, 4, window=0.1, exclusion=50)
    assert st[0] == 41_000, f"seed={rng.seed}"


def test_search_level_shifts_inside_a_chunk(rng):
    """Windows whose values are tiny beside others of their block (a level of 1e8 before a
    walk scaled by 1e-3, a flat stretch of 1e-9 noise beside values of 1e3, isolated spikes):
    running sums from the block's first value cancel their variance; those windows are
    computed again in two passes, so the matches stay a brute force's (the GPU's too)."""
    devices = ["cpu"] + (["cuda"] if HAS_GPU else [])
    for t in range(3):
        N = int(rng.integers(20_000, 30_000))
        s = rng.standard_normal(N).cumsum()
        if t == 0:
            s *= 1e-3
            s[:8000] += 1e8
            a = 8100
        elif t == 1:
            s *= 1e3
            s[5000:9000] = 7.0 + 1e-9 * rng.standard_normal(4000)
            a = 6000
        else:
            s[rng.integers(0, N, 40)] = 1e9
            a = int(rng.integers(0, N - 200))
            s[a:a + 70] = rng.standard_normal(70).cumsum()  # no spike inside the match
        q = s[a:a + 64] + 1e-3 * np.std(s[a:a + 64]) * rng.standard_normal(64)
        bs, bd = brute_search_blocks(q[:, None], s[:, None], 2, 64, True, window=0.1)
        for dev in devices:
            st, d = tswarp.search(q, s, 2, window=0.1, device=dev)
            what = f"seed={rng.seed} trial={t} {dev}"
            np.testing.assert_array_equal(st, bs, err_msg=what)
            # (z-normalising 1e-9 of noise on 7.0, or windows that meet the level of 1e8,
            # is itself good to about 1e-6 only: numpy's and tswarp's two passes differ there)
            np.testing.assert_allclose(d, bd, rtol=1e-4, atol=1e-9, err_msg=what)


def test_search_exact_repeats_tie_at_zero(rng):
    """A query found verbatim many times: every repeat's exact distance is 0, the running
    sums' z-normalisation puts some a few ulps above it. The pruning limit once was purely
    relative (0 at a threshold of 0) and dropped repeats that tie the best: the matches must
    be the repeats with the smallest starts, as a brute force orders them."""
    period = int(rng.integers(20, 60))
    s = np.tile(np.sin(np.linspace(0, 2 * np.pi, period, endpoint=False))
                + rng.normal(size=period) * 0.1, 60)[:, None]
    q = s[:period].copy()
    for k, excl in ((4, 3), (12, 1), (5, period)):
        for n_jobs in (1, 2):
            st, d = tswarp.search(q, s, k, exclusion=excl, n_jobs=n_jobs, layout=CL)
            bs, bd = brute_search(q, s, k, excl, True)
            what = f"seed={rng.seed} k={k} exclusion={excl}"
            np.testing.assert_array_equal(st, bs, err_msg=what)
            np.testing.assert_array_equal(d, bd, err_msg=what)
    if tswarp.info()["cuda_devices"]:
        st, d = tswarp.search(q, s, 6, exclusion=2, device="cuda", layout=CL)
        np.testing.assert_array_equal(st, brute_search(q, s, 6, 2, True)[0])


def test_search_finds_a_planted_pattern_across_chunks(rng):
    s = rng.standard_normal(100_000).cumsum()
    q = s[70_000:70_128] * 3.0 + 5.0  # z-normalisation removes scale and offset
    st, d, stats = tswarp.search(q, s, 3, window=0.05, return_stats=True, n_jobs=2)
    assert st[0] == 70_000 and d[0] < 1e-6, f"seed={rng.seed}"
    assert stats["windows"] == 100_000 - 127
    pruned = stats["kim"] + stats["keogh_query"] + stats["keogh_data"]
    assert pruned + stats["dtw"] == stats["windows"]
    assert pruned > 0.5 * stats["windows"]
    st1, d1 = tswarp.search(q, s, 3, window=0.05, n_jobs=1)
    np.testing.assert_array_equal(st, st1)
    np.testing.assert_array_equal(d, d1)
    raw_st, _ = tswarp.search(s[500:600], s, 1, znorm=False, radius=0)
    assert raw_st[0] == 500
    many = tswarp.search([q, s[10:138]], s, 1, window=0.05)
    assert many[0][0][0] == 70_000 and many[1][0][0] == 10


def test_search_bad_input(rng):
    s = rng.standard_normal(50)
    with pytest.raises(ValueError, match="longer than the series"):
        tswarp.search(rng.standard_normal(60), s)
    with pytest.raises(ValueError, match="windows"):
        tswarp.search(s[:10], s, k=42)
    bad = s.copy()
    bad[7] = np.inf
    with pytest.raises(ValueError, match="series contains NaN"):
        tswarp.search(s[:10], bad)
    with pytest.raises(ValueError, match="itakura"):
        tswarp.search(s[:10], s, itakura_max_slope=2.0)
    with pytest.raises(ValueError, match="exclusion"):
        tswarp.search(s[:10], s, exclusion=0)
    with pytest.raises(ValueError, match="cosine"):
        tswarp.search(s[:10], s, cost="cosine")


def test_estimators_check_estimator():
    sk = pytest.importorskip("sklearn.utils.estimator_checks")
    for est in (KNeighborsTimeSeriesClassifier(), KNeighborsTimeSeriesRegressor()):
        failed = [(r["check_name"], str(r["exception"])[:200])
                  for r in sk.check_estimator(est, on_fail=None) if r["status"] == "failed"]
        assert failed == [], failed


def test_estimators_match_knn_and_weights(rng):
    Xtr, Xte = walks(rng, (60, 40)), walks(rng, (20, 40))
    ytr = rng.integers(0, 3, 60)
    clf = KNeighborsTimeSeriesClassifier(n_neighbors=3, metric_params={"window": 0.1}).fit(Xtr, ytr)
    D, I = tswarp.knn(Xte, Xtr, 3, window=0.1)
    np.testing.assert_array_equal(clf.kneighbors(Xte)[1], I)
    votes = np.array([np.bincount(ytr[row], minlength=3) for row in I])
    np.testing.assert_array_equal(clf.predict(Xte), np.argmax(votes, axis=1))
    P = KNeighborsTimeSeriesClassifier(3, weights="distance").fit(Xtr, ytr).predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1)
    reg = KNeighborsTimeSeriesRegressor(n_neighbors=4).fit(Xtr, ytr.astype(float))
    D4, I4 = tswarp.knn(Xte, Xtr, 4)
    np.testing.assert_allclose(reg.predict(Xte), ytr[I4].mean(axis=1))
    # neighbours of the training series among the others
    Dn, In = clf.kneighbors(None, 2)
    assert (In != np.arange(60)[:, None]).all()
    # ragged series as lists
    clf2 = KNeighborsTimeSeriesClassifier().fit([x[:int(rng.integers(20, 40))] for x in Xtr], ytr)
    assert clf2.predict([Xte[0][:25], Xte[1]]).shape == (2,)


# The UCR archive (Dau et al. 2018), 1-NN DTW test error rates: "DTW (w=100)" (full window)
# and "DTW (learned_w)" with its learned window w (% of the length; radius round(w L / 100)).
UCR = {
    "GunPoint": (0.093, 0, 0.087),
    "ItalyPowerDemand": (0.050, 0, 0.045),
    "ArrowHead": (0.297, 0, 0.200),
    "OSULeaf": (0.409, 7, 0.388),
    "ACSF1": (0.360, 4, 0.380),
}


@pytest.mark.parametrize("name", list(UCR))
def test_ucr_1nn_dtw_error_rates(name):
    datasets = pytest.importorskip("aeon.datasets")
    Xtr, ytr = datasets.load_classification(name, split="train")
    Xte, yte = datasets.load_classification(name, split="test")
    Xtr, Xte = Xtr[:, 0, :], Xte[:, 0, :]
    full, w, learned = UCR[name]
    _, I = tswarp.knn(Xte, Xtr, 1)
    assert round(float(np.mean(ytr[I[:, 0]] != yte)), 3) == full
    r = round(w * Xtr.shape[1] / 100)
    _, I = tswarp.knn(Xte, Xtr, 1, radius=r)
    assert round(float(np.mean(ytr[I[:, 0]] != yte)), 3) == learned
    if name == "GunPoint":
        clf = KNeighborsTimeSeriesClassifier().fit(Xtr, ytr)
        assert round(1 - clf.score(Xte, yte), 3) == full
    assert not math.isnan(full)


_INFO = tswarp.info()
HAS_GPU = bool(_INFO["cuda_built"] and _INFO["cuda_devices"] > 0)


@pytest.mark.skipif(not HAS_GPU, reason=f"no CUDA GPU: cuda_built={_INFO['cuda_built']}, "
                    f"cuda_devices={_INFO['cuda_devices']}")
@pytest.mark.parametrize("metric", ["dtw", "twed", "soft_dtw"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_knn_on_the_gpu_equals_its_cdist(rng, metric, dtype):
    Q, X = walks(rng, (9, 40), dtype), walks(rng, (700, 40), dtype)
    X[500] = X[3]
    kw = {"window": 0.1} if metric == "dtw" else {}
    D, I = tswarp.knn(Q, X, 5, metric=metric, device="cuda", **kw)
    if metric == "dtw":  # the pruned GPU kernel rounds as the CPU reference does
        ref, order = stable_topk(tswarp.cdist(Q, X, _impl="reference", **kw), 5)
    else:  # the batch kernels over tiles
        ref, order = stable_topk(tswarp.cdist(Q, X, metric=metric, device="cuda", **kw), 5)
    np.testing.assert_array_equal(I, order, err_msg=f"seed={rng.seed}")
    np.testing.assert_array_equal(D, ref)
    Dc, Ic = tswarp.knn(Q, X, 5, metric=metric, device="cpu", **kw)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(D, Dc, rtol=tol, atol=tol)


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_knn_dtw_on_the_gpu_equals_the_reference(rng, dtype):
    for t in range(12):
        dim = 1 + t % 3
        n, m = int(rng.integers(5, 60)), int(rng.integers(5, 60))
        Q = walks(rng, (int(rng.integers(1, 40)), n, dim), dtype)
        X = walks(rng, (int(rng.integers(20, 900)), m, dim), dtype)
        X[-1] = X[0]
        k = int(rng.integers(1, 18))  # above 16: the batch kernels over tiles
        k = min(k, len(X))
        kw = [{}, {"window": 0.1}, {"radius": 3}, {"radius": 0}][t % 4]
        cost = ["sqeuclidean", "abs", "euclidean"][t % 3]
        D, I = tswarp.knn(Q, X, k, device="cuda", cost=cost, layout=CL, **kw)
        ref, order = stable_topk(tswarp.cdist(Q, X, _impl="reference", cost=cost, layout=CL,
                                              **kw), k)
        what = f"seed={rng.seed} trial={t} {kw} {cost} k={k}"
        np.testing.assert_array_equal(I, order, err_msg=what)
        if k <= 16:
            np.testing.assert_array_equal(D, ref, err_msg=what)
        else:
            tol = 1e-4 if dtype == np.float32 else 1e-10
            np.testing.assert_allclose(D, ref, rtol=tol, atol=tol, err_msg=what)


def test_import_tswarp_stays_light():
    # the estimators' module (scikit-learn) loads on first use only: the command line and
    # `import tswarp` start in a fraction of a second
    import subprocess
    import sys
    code = ("import sys, tswarp; heavy = [m for m in ('sklearn', 'scipy') if m in sys.modules]; "
            "print(heavy); tswarp.neighbors.KNeighborsTimeSeriesClassifier")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def gpu_search_trial(rng, t, max_points, f32):
    """Trial t of the GPU search tests: a walk of up to max_points points (one or two
    channels, a constant stretch in some), a query from outside it or from it, k and the
    search's keywords."""
    dim = 1 + t % 2
    n = int(rng.integers(4, 150))
    N = int(rng.integers(n, max_points))
    s = rng.standard_normal((N, dim)).cumsum(axis=0)
    if t % 4 == 0 and N > 3000:
        s[1000:3000] = -2.0
    s = s.astype(np.float32 if f32 else np.float64)
    q = rng.standard_normal((n, dim)).cumsum(axis=0) if t % 3 else s[N // 2:N // 2 + n]
    q = q[:min(n, N)]
    k = min(int(rng.integers(1, 8)), N - len(q) + 1)
    kw = dict(exclusion=int(rng.integers(1, 2 * n)), znorm=bool(t % 4 != 1),
              cost=["sqeuclidean", "abs", "euclidean"][t % 3],
              **[{}, {"window": 0.05}, {"radius": 3}, {"radius": 0}][t % 4])
    return dim, N, s, q, k, kw


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
@pytest.mark.parametrize("stage", ["auto", "1"])
def test_search_on_the_gpu_equals_the_cpu(rng, monkeypatch, stage):
    # stage "1": host series through the page-locked pieces whatever their size (else only
    # series of 64 MiB and more take them)
    if stage != "auto":
        monkeypatch.setenv("TSWARP_SEARCH_STAGE", stage)
    for t in range(16):
        _, N, s, q, k, kw = gpu_search_trial(rng, t, 60_000, t % 5 == 0)
        kw["layout"] = CL
        sc, dc = tswarp.search(q, s, k, device="cpu", **kw)
        sg, dg, st = tswarp.search(q, s, k, device="cuda", return_stats=True, **kw)
        what = f"seed={rng.seed} trial={t} {kw}"
        np.testing.assert_array_equal(sg, sc, err_msg=what)
        np.testing.assert_array_equal(dg, dc, err_msg=what)
        assert st["windows"] == N - len(q) + 1
    with pytest.raises(ValueError, match="itakura"):
        tswarp.search(q, s, device="cuda", itakura_max_slope=2.0, layout=CL)


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
@pytest.mark.parametrize("stage", ["auto", "1"])
def test_gpu_search_past_its_first_chunk_equals_the_cpu(rng, monkeypatch, stage):
    """Past the GPU's first chunk (2^20 windows) the bound kernel skips LB_Keogh above the
    threshold the chunks before set and abandons it there: series of up to 3e6 points, level
    shifts and a flat stretch of tiny noise beyond the first chunk, queries from the series
    and from outside, both costs: the CPU's matches and distances, bit for bit. Stage "1":
    the host series through the page-locked pieces (else only from 64 MiB)."""
    if stage != "auto":
        monkeypatch.setenv("TSWARP_SEARCH_STAGE", stage)
    for t in range(6):
        # at least 1.6e6 points: the flat stretch below ends at 1,505,000 (shorter draws
        # made its assignment an empty slice and the test fail)
        N = int(rng.integers(1_600_000, 3_000_000))
        s = rng.standard_normal(N).cumsum()
        if t % 2 == 0:
            s[1_100_000:1_100_000 + 300_000] *= 1e-6
            s[1_100_000:1_100_000 + 300_000] += 1e8
            s[1_500_000:1_500_000 + 5000] = 3.0 + 1e-9 * rng.standard_normal(5000)
        n = int(rng.integers(16, 300))
        a = int(rng.integers(1_050_000, N - n))
        q = (s[a:a + n] + 1e-2 * rng.standard_normal(n)) if t % 3 else \
            rng.standard_normal(n).cumsum()
        k = int(rng.integers(1, 6))
        kw = dict(window=[0.05, 0.1, 0.0][t % 3], cost=["sqeuclidean", "abs"][t % 2])
        sc, dc = tswarp.search(q, s, k, device="cpu", **kw)
        sg, dg = tswarp.search(q, s, k, device="cuda", **kw)
        what = f"seed={rng.seed} trial={t} N={N} n={n} a={a} {kw}"
        np.testing.assert_array_equal(sg, sc, err_msg=what)
        np.testing.assert_array_equal(dg, dc, err_msg=what)
    # the GPU checks a host series' values chunk by chunk as they arrive: a NaN or an
    # infinity in the first chunk, in a later one, or in the last point is still an error
    s = rng.standard_normal(2_500_000).cumsum()
    for at, bad in ((123, np.nan), (2_000_000, np.inf), (len(s) - 1, -np.inf)):
        for dt in (np.float64, np.float32):
            x = s.astype(dt)
            x[at] = bad
            with pytest.raises(ValueError, match="series contains NaN"):
                tswarp.search(s[:100].astype(dt), x, 1, device="cuda", window=0.05)


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU")
def test_search_of_a_series_on_the_gpu_equals_the_cpu(rng):
    """A series already on the GPU (CuPy, PyTorch) is searched in place, float32 or float64,
    one or two channels, both layouts: the CPU's matches and distances, bit for bit."""
    libs = []
    for name in ("cupy", "torch"):
        try:
            libs.append(__import__(name))
        except ImportError:
            pass
    assert libs, "the GPU machine has neither CuPy nor PyTorch"
    for t in range(12):
        lib = libs[t % len(libs)]
        dim, N, s, q, k, kw = gpu_search_trial(rng, t, 80_000, t % 3 == 0)
        first = t % 5 == 4 and dim == 2
        host = np.ascontiguousarray(s.T) if first else s
        dev = lib.asarray(host) if lib.__name__ == "cupy" else lib.from_numpy(host).cuda()
        lay = "channels_first" if first else CL
        sc, dc = tswarp.search(q.astype(s.dtype), s, k, device="cpu", layout=CL, **kw)
        sg, dg, st = tswarp.search(np.ascontiguousarray(q.T) if first else q, dev, k,
                                   return_stats=True, layout=lay, **kw)
        what = f"seed={rng.seed} trial={t} {lib.__name__} {s.dtype} {kw}"
        np.testing.assert_array_equal(sg, sc, err_msg=what)
        np.testing.assert_array_equal(dg, dc, err_msg=what)
        assert isinstance(sg, np.ndarray) and st["windows"] == N - len(q) + 1
    lib = libs[0]
    s = rng.standard_normal(5000).cumsum()
    bad = s.copy()
    bad[4321] = np.nan
    dbad = lib.asarray(bad) if lib.__name__ == "cupy" else lib.from_numpy(bad).cuda()
    with pytest.raises(ValueError, match="series contains NaN"):
        tswarp.search(s[:50], dbad)
    dgood = lib.asarray(s) if lib.__name__ == "cupy" else lib.from_numpy(s).cuda()
    with pytest.raises(ValueError, match="device='cpu'"):
        tswarp.search(s[:50], dgood, device="cpu")
    with pytest.raises(ValueError, match="longer than the series"):
        tswarp.search(np.zeros(6000), dgood)


def test_search_of_a_gpu_series_without_a_gpu(rng):
    """Without a GPU tswarp can use, a series on the GPU is a clear error (raised before any
    array library is imported), not a crash; a host series works as ever."""
    s = rng.standard_normal(300).cumsum()

    class FakeCuda:  # quacks like a CUDA array, as a foreign library's would
        __cuda_array_interface__ = {"shape": (300,), "typestr": "<f8", "data": (1, False),
                                    "version": 3}

    if not HAS_GPU:
        with pytest.raises(tswarp.NoDeviceError, match="copy it to the host"):
            tswarp.search(s[:20], FakeCuda())
    st, d = tswarp.search(s[:20], s, 1)
    assert st[0] == 0 and d[0] < 1e-9, f"seed={rng.seed}"


def test_search_reads_a_memmap_and_knn_search_stop_on_interrupt(rng, tmp_path):
    import time
    N = 1_000_000
    m = np.lib.format.open_memmap(tmp_path / "s.npy", mode="w+", dtype=np.float64, shape=(N,))
    m[:] = rng.standard_normal(N).cumsum()
    m.flush()
    s = np.load(tmp_path / "s.npy", mmap_mode="r")
    st, d = tswarp.search(np.array(s[654_321:654_449]), s, 1, window=0.05)
    assert st[0] == 654_321 and d[0] < 1e-6, f"seed={rng.seed}"

    def stop(done, total):
        raise KeyboardInterrupt

    noise = rng.standard_normal(3_000_000)  # prunes badly: seconds of work
    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tswarp.search(rng.standard_normal(128), noise, 1, window=0.1, progress=stop,
                      device="cpu")
    assert time.monotonic() - t < 1.0
    t = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tswarp.knn(rng.standard_normal((50, 2000)), rng.standard_normal((400, 2000)), 1,
                   progress=stop, device="cpu")
    assert time.monotonic() - t < 1.0
