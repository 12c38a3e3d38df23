"""tswarp.paired: X[k] against Y[k], the batched-loss form, equals the diagonal of cdist."""

import numpy as np
import pytest

import tswarp
from conftest import channels_last

tswarp = channels_last(tswarp)  # random series in tswarp's layout, any shape (conftest)


@pytest.mark.parametrize("metric,params", [
    ("dtw", {}),
    ("dtw", {"radius": 3, "cost": "abs"}),
    ("twed", {"nu": 0.01, "lmbda": 0.5}),
    ("soft_dtw", {"gamma": 0.3}),
    ("soft_dtw", {"gamma": 1.0, "normalize": True}),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_paired_is_cdist_diagonal(rng, metric, params, dtype):
    n = int(rng.integers(1, 12))
    d = int(rng.integers(1, 4))
    # variable lengths, so that neighbouring pairs differ in both lengths
    X = [rng.normal(size=(int(rng.integers(1, 40)), d)).astype(dtype) for _ in range(n)]
    Y = [rng.normal(size=(int(rng.integers(1, 40)), d)).astype(dtype) for _ in range(n)]
    got = tswarp.paired(X, Y, metric=metric, device="cpu", **params)
    assert got.shape == (n,) and got.dtype == dtype
    want = np.diagonal(tswarp.cdist(X, Y, metric=metric, device="cpu", **params))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"seed {rng.seed}")


def test_paired_equal_lengths_3d(rng):
    X = rng.normal(size=(20, 30, 2))
    Y = rng.normal(size=(20, 25, 2))
    got = tswarp.paired(X, Y, metric="dtw")
    want = [tswarp.dtw(x, y) for x, y in zip(X, Y)]
    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"seed {rng.seed}")


def test_paired_bad_input(rng):
    X = rng.normal(size=(4, 10))
    with pytest.raises(ValueError, match="as many"):
        tswarp.paired(X, X[:3])
    with pytest.raises(TypeError):
        tswarp.paired(X)  # Y is required
    bad = X.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="NaN|finite"):
        tswarp.paired(X, bad)
