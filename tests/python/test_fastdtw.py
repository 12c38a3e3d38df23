"""tswarp.fastdtw against the fastdtw package (0.3.4): the same path and cost for the same
radius on random inputs (1 to 3 dims, lengths 1 to 400, radius 0 to 5), with its default
distance (cost='abs') and its dist=2 (cost='euclidean'); exact DTW's cost once the radius
covers the series; errors. Random inputs: the `rng` fixture (seed printed).
"""

import numpy as np
import pytest

import tswarp
from conftest import peer


def test_equals_the_fastdtw_package(rng):
    peer("fastdtw")
    # its pure-Python module: the package's definition (its optional Cython build, where
    # present, crashes where the Python one raises IndexError)
    # (import_module: the package's __init__ shadows the module's name with its function)
    import importlib
    fd = importlib.import_module("fastdtw.fastdtw")
    compared = 0
    for trial in range(150):
        n, m = (int(v) for v in rng.integers(1, 400 if trial % 10 == 0 else 80, size=2))
        d = int(rng.choice([1, 1, 2, 3]))
        r = int(rng.integers(0, 6))
        a = rng.normal(size=(n, d)).cumsum(0)
        b = rng.normal(size=(m, d)).cumsum(0)
        euclid = bool(rng.random() < 0.4)
        pa, pb = (a[:, 0], b[:, 0]) if d == 1 else (a, b)
        try:
            exp_cost, exp_path = fd.fastdtw(pa, pb, radius=r, **({"dist": 2} if euclid else {}))
        except IndexError:
            # the package fails with radius 0 where a level has an odd length (a row or
            # column no coarse cell covers); tswarp still returns a path
            assert r == 0, f"seed={rng.seed} trial={trial}: the package failed at radius {r}"
            path, _ = tswarp.fastdtw(a, b, r, cost="abs", layout="channels_last")
            assert tuple(path[0]) == (0, 0) and tuple(path[-1]) == (n - 1, m - 1)
            assert (np.diff(path, axis=0) >= 0).all() and (np.diff(path, axis=0) <= 1).all()
            continue
        path, cost = tswarp.fastdtw(a, b, r, cost="euclidean" if euclid else "abs",
                                    layout="channels_last")
        what = f"seed={rng.seed} trial={trial} n={n} m={m} d={d} radius={r} euclid={euclid}"
        np.testing.assert_array_equal(path, np.array(exp_path, dtype=np.int64).reshape(-1, 2),
                                      err_msg=what)
        assert abs(cost - exp_cost) <= 1e-9 * max(1.0, abs(exp_cost)), what
        compared += 1
    assert compared > 100


def test_wide_radius_is_exact_dtw(rng):
    for trial in range(20):
        n, m = (int(v) for v in rng.integers(1, 60, size=2))
        a, b = rng.normal(size=n), rng.normal(size=m)
        path, cost = tswarp.fastdtw(a, b, max(n, m), cost="abs")
        exact = tswarp.dtw(a, b, cost="abs")
        assert abs(cost - exact) <= 1e-12 * max(1.0, exact), f"seed={rng.seed} trial={trial}"
        # the default cost follows dtw_path's rule: the root of the accumulated cost
        _, c2 = tswarp.fastdtw(a, b, max(n, m))
        assert abs(c2 - tswarp.dtw(a, b)) <= 1e-12 * max(1.0, c2), f"seed={rng.seed}"
        _, c3 = tswarp.fastdtw(a, b, max(n, m), accumulated=True)
        assert abs(c3 - c2 * c2) <= 1e-9 * max(1.0, c3)


def test_float32(rng):
    a = rng.normal(size=300).astype(np.float32)
    b = rng.normal(size=250).astype(np.float32)
    p32, c32 = tswarp.fastdtw(a, b, 2, cost="abs")
    p64, c64 = tswarp.fastdtw(a.astype(np.float64), b.astype(np.float64), 2, cost="abs")
    assert abs(c32 - c64) <= 1e-4 * c64, f"seed={rng.seed}"
    assert p32[0].tolist() == [0, 0] and p32[-1].tolist() == [299, 249]


def test_example():
    path, cost = tswarp.fastdtw([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 3.0, 4.0], cost="abs")
    assert cost == 2.0
    assert path.tolist() == [[0, 0], [1, 0], [2, 1], [3, 2], [4, 2]]


def test_bad_input():
    with pytest.raises(ValueError, match="radius must be an int >= 0"):
        tswarp.fastdtw([0.0, 1.0], [0.0], -1)
    with pytest.raises(TypeError, match="radius must be an int"):
        tswarp.fastdtw([0.0, 1.0], [0.0], 1.5)
    with pytest.raises(TypeError, match="radius must be an int"):
        tswarp.fastdtw([0.0, 1.0], [0.0], True)
    with pytest.raises(ValueError, match="cost must be"):
        tswarp.fastdtw([0.0, 1.0], [0.0], cost="cosine")
    with pytest.raises(TypeError):
        tswarp.fastdtw([0.0, 1.0], [0.0], window=0.1)  # radius is its own band
    with pytest.raises(ValueError, match="NaN"):
        tswarp.fastdtw([0.0, float("nan")], [0.0])
    with pytest.raises(ValueError):
        tswarp.fastdtw([], [0.0])
    with pytest.raises(ValueError, match="dimension"):
        tswarp.fastdtw(np.zeros((3, 2)), np.zeros((3, 3)), layout="channels_last")
    with pytest.raises(ValueError, match="CPU|cuda|CUDA|backend"):
        tswarp.fastdtw([0.0, 1.0], [0.0], device="cuda")


def test_ctrl_c_callback_stops_it(rng):
    a = rng.normal(size=200_000)
    calls = []

    def stop(done, total):
        calls.append(done)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tswarp.fastdtw(a, a[::-1].copy(), 200, progress=stop)
    assert calls
