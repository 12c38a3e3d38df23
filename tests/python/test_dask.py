"""tswarp.store (block-by-block stores with resume) and tswarp.dask (the batch calls as
Dask graphs): equal to the in-process calls bit for bit, on the threaded scheduler and on
a LocalCluster of two processes; resume after Ctrl-C, after a killed process and after a
lost worker."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tswarp
import tswarp.store as tstore

dask = pytest.importorskip("dask")
td = pytest.importorskip("tswarp.dask")
da = pytest.importorskip("dask.array")
zarr = pytest.importorskip("zarr")


def _ragged(rng, n, lo=5, hi=30, dim=1, dtype=np.float64):
    shape = (lambda m: (m,)) if dim == 1 else (lambda m: (m, dim))
    return [rng.normal(size=shape(int(rng.integers(lo, hi)))).astype(dtype) for _ in range(n)]


# ---- tswarp.store --------------------------------------------------------------------------

@pytest.mark.parametrize("ext", [".npy", ".zarr"])
@pytest.mark.parametrize("metric", ["dtw", "twed", "msm", "soft_dtw"])
def test_store_equals_direct(rng, tmp_path, ext, metric):
    X = _ragged(rng, int(rng.integers(10, 40)))
    Y = rng.normal(size=(int(rng.integers(5, 25)), 17)).astype(np.float32)
    size = int(rng.integers(3, 12))
    path = tmp_path / ("D" + ext)
    msg = f"seed {rng.seed}, block {size}"
    D = tstore.cdist(X, Y, out=path, metric=metric, block_size=size)
    np.testing.assert_array_equal(np.asarray(D[:]), tswarp.cdist(X, Y, metric=metric), msg)
    P = tstore.pdist(list(Y), out=path, metric=metric, block_size=size)
    assert P.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(P[:]), tswarp.pdist(Y, metric=metric), msg)
    n = min(len(X), len(Y))
    Q = tstore.paired(X[:n], Y[:n], out=path, metric=metric, block_size=size)
    np.testing.assert_array_equal(np.asarray(Q[:]), tswarp.paired(X[:n], Y[:n], metric=metric),
                                  msg)
    arr, complete = tstore.open(path)
    assert complete and arr.shape == (n,)


def test_store_multivariate_twed_times(rng, tmp_path):
    X = _ragged(rng, 13, dim=3)
    tx = [np.cumsum(rng.uniform(0.5, 2, size=len(x))) for x in X]
    D = tstore.pdist(X, out=tmp_path / "D.npy", metric="twed", tx=tx, block_size=4, nu=0.1)
    np.testing.assert_array_equal(D, tswarp.pdist(X, metric="twed", tx=tx, nu=0.1))


def test_store_mixed_dtypes_compute_as_the_whole_call(rng, tmp_path):
    # float32 series in a float64 call: every block computes in float64, as the whole call
    X = _ragged(rng, 12, dtype=np.float32) + _ragged(rng, 1)
    D = tstore.pdist(X, out=tmp_path / "D.npy", block_size=4)
    assert D.dtype == np.float64
    np.testing.assert_array_equal(D, tswarp.pdist(X))


@pytest.mark.parametrize("ext", [".npy", ".zarr"])
def test_store_resume_skips_finished_blocks(rng, tmp_path, ext):
    X = _ragged(rng, 20)
    path = tmp_path / ("D" + ext)
    seen = []

    def stop_after_two(done, total):
        seen.append(done)
        if done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tstore.cdist(X, out=path, block_size=6, progress=stop_after_two)
    arr, complete = tstore.open(path)
    assert not complete
    marks = sorted(f for f in os.listdir(str(path) + ".blocks") if f != "job.json")
    assert marks == ["b0_0", "b0_1"]
    # a sentinel in a finished block survives the resume: the block is not computed again
    if ext == ".npy":
        m = np.load(path, mmap_mode="r+")
        m[0, 0] = -7.0
        m.flush()
        del m
    else:
        zarr.open_array(str(path), mode="r+")[0, 0] = -7.0
    D = np.array(tstore.cdist(X, out=path, block_size=6, resume=True)[:])
    want = tswarp.cdist(X)
    assert D[0, 0] == -7.0
    D[0, 0] = want[0, 0]
    np.testing.assert_array_equal(D, want)
    assert tstore.open(path)[1]
    # resume=False starts afresh
    np.testing.assert_array_equal(tstore.cdist(X, out=path, block_size=6), want)


def test_store_refuses_another_job(rng, tmp_path):
    X = _ragged(rng, 9)
    path = tmp_path / "D.npy"
    tstore.pdist(X, out=path, block_size=4)
    for kwargs, word in (({"metric": "twed"}, "metric"), ({"block_size": 5}, "block_size"),
                         ({"window": 0.1}, "params")):
        args = dict({"block_size": 4}, **kwargs)
        with pytest.raises(ValueError, match=f"another job.*{word}"):
            tstore.pdist(X, out=path, resume=True, **args)
    Z = [x + 1 for x in X]
    with pytest.raises(ValueError, match="inputs"):
        tstore.pdist(Z, out=path, block_size=4, resume=True)


def test_store_bad_input(rng, tmp_path):
    X = _ragged(rng, 5)
    with pytest.raises(ValueError, match="block_size"):
        tstore.cdist(X, out=tmp_path / "D.npy", block_size=0)
    with pytest.raises(TypeError, match="block_size"):
        tstore.cdist(X, out=tmp_path / "D.npy", block_size=2.0)
    with pytest.raises(TypeError, match="resume"):
        tstore.cdist(X, out=tmp_path / "D.npy", resume="yes")
    with pytest.raises(ValueError, match="not a directory"):
        tstore.cdist(X, out=tmp_path / "nowhere" / "D.npy")
    with pytest.raises(ValueError, match="as many series"):
        tstore.paired(X, X[:3], out=tmp_path / "D.npy")
    with pytest.raises(ValueError, match="out"):
        tstore.cdist(X, out=None)
    with pytest.raises(ValueError, match="not a tswarp store"):
        tstore.open(tmp_path / "missing.npy")
    folder = tmp_path / "keep.zarr"
    folder.mkdir()
    (folder / "precious.txt").write_text("x")
    with pytest.raises(ValueError, match="not a zarr store"):
        tstore.cdist(X, out=folder)
    assert (folder / "precious.txt").exists()
    with pytest.raises(ValueError, match="NaN"):
        tstore.cdist([np.array([1.0, np.nan])] + X, out=tmp_path / "D.npy")


def test_store_resume_after_killed_process(rng, tmp_path):
    """SIGKILL mid-job (no cleanup at all): the rerun with resume=True finishes the job with
    the blocks the killed run marked done, and the matrix equals the direct call."""
    seed = int(rng.integers(1 << 31))
    path = tmp_path / "D.npy"
    script = textwrap.dedent(f"""
        import numpy as np, tswarp.store, time
        rng = np.random.default_rng({seed})
        X = rng.normal(size=(60, 150))
        def slow(done, total):
            time.sleep(0.2)
        tswarp.store.pdist(X, out={str(path)!r}, block_size=10, progress=slow, resume=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", script])
    marks = str(path) + ".blocks"
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.path.isdir(marks) and sum(f.startswith("b") for f in os.listdir(marks)) >= 3:
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert p.returncode == -signal.SIGKILL
    arr, complete = tstore.open(path)
    assert not complete, "the job ended before it was killed: make it longer"
    X = np.random.default_rng(seed).normal(size=(60, 150))
    D = tstore.pdist(X, out=path, block_size=10, resume=True)
    np.testing.assert_array_equal(D, tswarp.pdist(X))


# ---- tswarp.dask on the threaded scheduler -------------------------------------------------

@pytest.mark.parametrize("metric", ["dtw", "twed", "erp", "soft_dtw"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dask_matrices_equal_direct(rng, metric, dtype):
    X = _ragged(rng, int(rng.integers(8, 40)), dim=int(rng.integers(1, 3)), dtype=dtype)
    Y = _ragged(rng, int(rng.integers(4, 20)), dim=X[0].shape[1] if X[0].ndim == 2 else 1,
                dtype=dtype)
    size = int(rng.integers(2, 12))
    msg = f"seed {rng.seed}, block {size}"
    D = td.cdist(X, Y, metric=metric, block_size=size)
    assert D.shape == (len(X), len(Y)) and D.dtype == dtype
    np.testing.assert_array_equal(D.compute(scheduler="threads"),
                                  tswarp.cdist(X, Y, metric=metric), msg)
    P = td.pdist(X, metric=metric, block_size=size)
    np.testing.assert_array_equal(P.compute(), tswarp.pdist(X, metric=metric), msg)
    n = min(len(X), len(Y))
    Q = td.paired(X[:n], Y[:n], metric=metric, block_size=size)
    np.testing.assert_array_equal(Q.compute(), tswarp.paired(X[:n], Y[:n], metric=metric), msg)


def test_dask_pdist_computes_each_block_once(rng):
    X = rng.normal(size=(30, 12))
    P = td.pdist(X, block_size=7)
    names = [k if isinstance(k, str) else k[0] for k in dict(P.__dask_graph__())]
    calls = [k for k in names if k.startswith("cdist_block-")]
    diag = [k for k in names if k.startswith("pdist_block-")]
    nb = 5  # ceil(30 / 7)
    assert len(diag) == nb and len(calls) == nb * (nb - 1) // 2


def test_dask_array_inputs(rng):
    A = rng.normal(size=(41, 19, 2))
    X = da.from_array(A, chunks=(6, 19, 2))
    Y = rng.normal(size=(13, 11, 2)).astype(np.float32)
    D = td.cdist(X, Y, block_size=9, window=0.2)
    assert D.dtype == np.float64  # one float64 collection: float64
    np.testing.assert_array_equal(D.compute(), tswarp.cdist(A, Y, window=0.2))
    # aeon's layout (n, channels, length), lazily transposed
    XF = da.from_array(A.transpose(0, 2, 1), chunks=(10, 2, 19))
    np.testing.assert_array_equal(td.pdist(XF, layout="channels_first", block_size=8).compute(),
                                  tswarp.pdist(A))


@pytest.mark.parametrize("metric", ["dtw", "twed", "lcss"])
def test_dask_knn_equals_knn(rng, metric):
    Q = _ragged(rng, int(rng.integers(3, 30)))
    X = _ragged(rng, int(rng.integers(3, 40)))
    # ties: repeated series in X must go to the smaller index across blocks
    X = X + [X[0].copy(), X[1].copy()]
    k = int(rng.integers(1, min(6, len(X)) + 1))
    size = int(rng.integers(1, 10))
    D, I = td.knn(Q, X, k, metric=metric, block_size=size, split_every=int(rng.integers(2, 5)))
    D, I = dask.compute(D, I)
    RD, RI = tswarp.knn(Q, X, k, metric=metric)
    msg = f"seed {rng.seed}, k {k}, block {size}"
    np.testing.assert_array_equal(D, RD, msg)
    np.testing.assert_array_equal(I, RI, msg)


@pytest.mark.parametrize("znorm", [True, False])
def test_dask_search_equals_search(rng, znorm):
    N = int(rng.integers(3000, 20000))
    s = np.cumsum(rng.normal(size=N))
    n = int(rng.integers(8, 64))
    start = int(rng.integers(0, N - n))
    q = s[start:start + n] + rng.normal(size=n) * 0.1
    for k in (1, 3, 7):
        for exclusion in (None, 1, int(rng.integers(2, 2 * n))):
            chunk = int(rng.integers(50, 4000))
            got = td.search(q, s, k, chunk_size=chunk, exclusion=exclusion, window=0.1,
                            znorm=znorm)
            want = tswarp.search(q, s, k, exclusion=exclusion, window=0.1, znorm=znorm)
            msg = f"seed {rng.seed}, k {k}, exclusion {exclusion}, chunk {chunk}"
            np.testing.assert_array_equal(got[0], want[0], msg)
            np.testing.assert_array_equal(got[1], want[1], msg)
    # a dask array series, chunked on its own
    got = td.search(q, da.from_array(s, chunks=777), 2, chunk_size=1000, znorm=znorm)
    want = tswarp.search(q, s, 2, znorm=znorm)
    np.testing.assert_array_equal(got[0], want[0])


def test_dask_search_ties_across_chunks():
    # a periodic series: many windows at exactly the same distance, in every chunk
    s = np.tile(np.sin(np.linspace(0, 2 * np.pi, 50, endpoint=False)), 80)
    q = s[:50].copy()
    for k in (1, 4, 9):
        got = td.search(q, s, k, chunk_size=137, exclusion=3)
        want = tswarp.search(q, s, k, exclusion=3)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_dask_bad_input(rng):
    X = _ragged(rng, 6)
    with pytest.raises(ValueError, match="k must be between 1 and the 6"):
        td.knn(X, X, 7)
    with pytest.raises(ValueError, match="split_every"):
        td.knn(X, X, 1, split_every=1)
    with pytest.raises(ValueError, match="block_size"):
        td.cdist(X, block_size=-1)
    with pytest.raises(ValueError, match="as many series"):
        td.paired(X, X[:2])
    with pytest.raises(ValueError, match="empty"):
        td.cdist([], X)
    with pytest.raises(TypeError, match="dtype"):
        td.cdist(da.from_array(np.array([["a", "b"]])), X)
    with pytest.raises(ValueError, match="fewer than the query"):
        td.search(np.ones(10), np.ones(5))
    with pytest.raises(ValueError, match="k must be at most"):
        td.search(np.ones(3), np.arange(5.0), 4)
    with pytest.raises(ValueError, match="chunk_size"):
        td.search(np.ones(3), np.arange(50.0), chunk_size=0)
    with pytest.raises(TypeError, match="'progress' is an argument"):
        td.cdist(X, **{"tx": None, "metric": "dtw", "progress": True})  # progress: refused
    # errors of the measure surface at compute time with tswarp's message
    with pytest.raises(ValueError, match="nu"):
        td.cdist(X, metric="twed", nu=-1.0).compute()


# ---- a LocalCluster of two processes -------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as c:
        with distributed.Client(c) as client:
            yield client


def test_cluster_equals_direct(rng, cluster, tmp_path):
    X = _ragged(rng, 45)
    Y = rng.normal(size=(17, 20))
    D = td.cdist(X, Y, block_size=8, window=0.3)
    np.testing.assert_array_equal(cluster.compute(D).result(), tswarp.cdist(X, Y, window=0.3))
    Dk, Ik = td.knn(Y, X, 3, block_size=10)
    Dk, Ik = cluster.gather(cluster.compute([Dk, Ik]))
    RD, RI = tswarp.knn(Y, X, 3)
    np.testing.assert_array_equal(Dk, RD)
    np.testing.assert_array_equal(Ik, RI)
    S = td.pdist(X, block_size=8, out=tmp_path / "P.zarr", scheduler=cluster)
    np.testing.assert_array_equal(S[:], tswarp.pdist(X))
    # a scheduler's address, as a multi-node cluster is reached (a Client of its own)
    address = cluster.scheduler.address
    assert address.startswith("tcp://")
    S = td.cdist(X, Y, block_size=8, out=tmp_path / "C.npy", scheduler=address)
    np.testing.assert_array_equal(S, tswarp.cdist(X, Y))
    s = np.cumsum(rng.normal(size=5000))
    got = td.search(s[100:164], s, 3, chunk_size=900, scheduler=cluster)
    want = tswarp.search(s[100:164], s, 3)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_cluster_task_threads_share_the_host(cluster):
    """n_jobs=None on a worker: the host's cores divided among all its workers' task threads
    (2 single-thread workers here), never each task every core."""
    from tswarp import _blocks
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    got = cluster.submit(_blocks._threads, None, pure=False).result()
    assert got == max(1, cores // 2)
    assert cluster.submit(_blocks._threads, 3, pure=False).result() == 3
    assert _blocks._threads(None) is None  # not on a worker: tswarp's default


def test_cluster_lost_worker(rng, cluster, tmp_path):
    """A worker killed (SIGKILL) mid-job: Dask computes its blocks again and the result is
    the direct call's."""
    X = rng.normal(size=(160, 300))
    D = td.cdist(X, block_size=20)  # 64 blocks of about 50 ms
    future = cluster.compute(D)
    deadline = time.time() + 60
    while time.time() < deadline and cluster.run_on_scheduler(
            lambda dask_scheduler: sum(ts.state == "memory"
                                       for ts in dask_scheduler.tasks.values())) < 4:
        time.sleep(0.02)
    assert not future.done(), "the job ended before a worker could be killed: make it longer"
    victim = sorted(cluster.scheduler_info()["workers"])[0]
    pid = cluster.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    result = future.result(timeout=300)
    np.testing.assert_array_equal(result, tswarp.cdist(X))
    # the pool heals (the nanny restarts the worker) for the next tests
    cluster.wait_for_workers(2, timeout=60)
    # the same with a store: the lost blocks are written by another worker
    out = tmp_path / "D.zarr"
    S = td.cdist(X, block_size=20, out=out, scheduler=cluster)
    assert tstore.open(out)[1]
    np.testing.assert_array_equal(S[:], tswarp.cdist(X))


def test_cluster_resume_between_engines(rng, cluster, tmp_path):
    """A job stopped in this process is finished on the cluster (and the other way)."""
    X = _ragged(rng, 30)
    out = tmp_path / "D.npy"

    def stop(done, total):
        if done >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tstore.cdist(X, out=out, block_size=7, progress=stop)
    assert not tstore.open(out)[1]
    D = td.cdist(X, out=out, block_size=7, resume=True, scheduler=cluster)
    np.testing.assert_array_equal(D, tswarp.cdist(X))


# ---- the command line ----------------------------------------------------------------------

def _cli(capsys, *argv):
    from tswarp import cli
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_matrix_blocks_and_resume(rng, tmp_path, capsys):
    X = rng.normal(size=(40, 25))
    Y = rng.normal(size=(13, 20))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "Y.npy", Y)
    for out in ("D.npy", "D.zarr"):
        path = tmp_path / out
        code, text, _ = _cli(capsys, "matrix", tmp_path / "X.npy", "--out", path,
                             "--block-size", 9, "--window", 0.2)
        assert code == 0 and "blocks of 9" in text
        np.testing.assert_array_equal(np.asarray(tstore.open(path)[0][:]),
                                      tswarp.pdist(X, window=0.2))
        # a finished job resumes to nothing; the matrix stays
        code, text, _ = _cli(capsys, "matrix", tmp_path / "X.npy", "--out", path,
                             "--block-size", 9, "--window", 0.2, "--resume")
        assert code == 0 and "resumed" in text
        assert tstore.open(path)[1]
        # another job over it is refused with --resume
        code, _, err = _cli(capsys, "matrix", tmp_path / "X.npy", "--out", path,
                            "--block-size", 9, "--resume")
        assert code != 0 and "another job" in err
    code, _, _ = _cli(capsys, "matrix", tmp_path / "X.npy", tmp_path / "Y.npy", "--out",
                      tmp_path / "C.zarr")
    np.testing.assert_array_equal(tstore.open(tmp_path / "C.zarr")[0][:], tswarp.cdist(X, Y))
    # a Dask scheduler, the matrix to stdout
    code, text, _ = _cli(capsys, "matrix", tmp_path / "X.npy", tmp_path / "Y.npy",
                         "--scheduler", "threads", "--block-size", 7)
    D = np.array([[float(v) for v in line.split(",")] for line in text.splitlines()])
    np.testing.assert_array_equal(D, tswarp.cdist(X, Y))
    for argv, word in ((("--out", tmp_path / "D.csv", "--resume"), ".zarr store"),
                       (("--resume",), "give --out"),
                       (("--condensed", "--out", tmp_path / "E.zarr"), "square form")):
        code, _, err = _cli(capsys, "matrix", tmp_path / "X.npy", *argv)
        assert code == 2 and word in err, err


def test_cli_knn_on_a_scheduler(capsys):
    code, text, _ = _cli(capsys, "knn", "--scheduler", "threads", "--block-size", 40)
    code2, text2, _ = _cli(capsys, "knn")
    rows = [line.split()[:3] for line in text.splitlines() if line.startswith("dtw")]
    rows2 = [line.split()[:3] for line in text2.splitlines() if line.startswith("dtw")]
    assert code == code2 == 0 and rows == rows2 and rows


# ---- GPUs: dask_cuda's LocalCUDACluster (one worker per GPU) -------------------------------

def _gpus():
    try:
        return tswarp.info()["cuda_devices"]
    except Exception:
        return 0


@pytest.mark.skipif(not _gpus(), reason="needs an NVIDIA GPU and the CUDA backend")
def test_local_cuda_cluster_equals_in_process(rng):
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    X = rng.normal(size=(700, 128)).astype(np.float32)
    Y = rng.normal(size=(300, 128)).astype(np.float32)
    with dask_cuda.LocalCUDACluster(dashboard_address=None, silence_logs=40) as c, \
            distributed.Client(c) as client:
        workers = client.scheduler_info()["workers"]
        assert len(workers) == _gpus()
        D = client.compute(td.cdist(X, Y, block_size=256, device="cuda")).result()
        np.testing.assert_array_equal(D, tswarp.cdist(X, Y, device="cuda"))
        np.testing.assert_allclose(D, tswarp.cdist(X, Y, device="cpu"), rtol=1e-5)
        P = client.compute(td.pdist(X, block_size=256, device="cuda", window=0.1)).result()
        np.testing.assert_array_equal(P, tswarp.pdist(X, device="cuda", window=0.1))
        Dk, Ik = td.knn(Y, X, 5, block_size=256, device="cuda", window=0.1)
        Dk, Ik = client.gather(client.compute([Dk, Ik]))
        RD, RI = tswarp.knn(Y, X, 5, device="cpu", window=0.1)
        np.testing.assert_array_equal(Ik, RI)
        np.testing.assert_array_equal(Dk, RD)


# ---- neighbours into a store ---------------------------------------------------------------

def test_store_knn_and_dask_knn_out(rng, tmp_path):
    Q = _ragged(rng, int(rng.integers(5, 40)))
    X = _ragged(rng, int(rng.integers(5, 40)))
    k = int(rng.integers(1, min(5, len(X)) + 1))
    size = int(rng.integers(2, 9))
    RD, RI = tswarp.knn(Q, X, k, window=0.2)
    path = tmp_path / "nn.zarr"
    D, I = tstore.knn(Q, X, k, out=path, block_size=size, window=0.2)
    np.testing.assert_array_equal(D[:], RD, f"seed {rng.seed}")
    np.testing.assert_array_equal(I[:], RI, f"seed {rng.seed}")
    assert tstore.open(path)[1]
    # stopped after one block, finished by Dask from the same store
    calls = []

    def stop(done, total):
        calls.append(done)
        if done >= 1:
            raise KeyboardInterrupt

    if len(Q) > size:
        with pytest.raises(KeyboardInterrupt):
            tstore.knn(Q, X, k, out=path, block_size=size, window=0.2, progress=stop)
        assert not tstore.open(path)[1]
    D, I = td.knn(Q, X, k, out=path, block_size=size, resume=True, window=0.2,
                  scheduler="threads")
    np.testing.assert_array_equal(D[:], RD)
    np.testing.assert_array_equal(I[:], RI)
    with pytest.raises(ValueError, match="zarr"):
        tstore.knn(Q, X, k, out=tmp_path / "nn.npy")
    with pytest.raises(ValueError, match="another job"):
        tstore.knn(Q, X, k, out=path, block_size=size, resume=True)  # no window: another job


def test_cli_knn_out_and_resume(tmp_path, capsys):
    out = tmp_path / "nn.zarr"
    code, text, _ = _cli(capsys, "knn", "--out", out, "-k", 3, "--block-size", 40)
    assert code == 0
    code2, text2, _ = _cli(capsys, "knn", "-k", 3)
    rows = [line.split()[:3] for line in text.splitlines() if line.startswith("dtw")]
    rows2 = [line.split()[:3] for line in text2.splitlines() if line.startswith("dtw")]
    assert rows == rows2 and rows
    from tswarp.datasets import load_gunpoint
    Xtr, _ = load_gunpoint("train")
    Xte, _ = load_gunpoint("test")
    D, I = tstore.open(out)[0]
    RD, RI = tswarp.knn(Xte, Xtr, 3)
    np.testing.assert_array_equal(I[:], RI)
    code, _, _ = _cli(capsys, "knn", "--out", out, "-k", 3, "--block-size", 40, "--resume")
    assert code == 0
    for argv, word in ((("--out", out, "--metric", "all"), "one measure"),
                       (("--resume",), "give --out"),
                       (("--out", tmp_path / "nn.npy"), ".zarr store")):
        code, _, err = _cli(capsys, "knn", *argv)
        assert code == 2 and word in err, err
