"""The shipped GunPoint data set: 1-NN classification through cdist equals a pure-Python
loop of pair calls, and DTW's error rate equals the UCR archive's published figure.
"""

import numpy as np
import pytest

import tswarp
from tswarp.datasets import load_gunpoint

# UCR time series classification archive (Dau et al. 2018), GunPoint, 1-NN with DTW and
# an unconstrained window ("DTW (w=100)"): test error rate 0.093, i.e. 14 of 150 wrong.
UCR_GUNPOINT_DTW_FULL_ERROR = 0.093

CASES = {
    "dtw": (tswarp.dtw, {}),
    "twed": (tswarp.twed, {"nu": 0.001, "lmbda": 1.0}),
    "soft_dtw": (tswarp.soft_dtw, {"gamma": 1.0}),
}

# Test series checked by the pure-Python loop (cdist always runs on all 150): TWED and
# soft-DTW cost several times DTW's per cell, and the suite must stay within minutes.
LOOP_ROWS = {"dtw": 150, "twed": 60, "soft_dtw": 25}
LOOP_PAIRS = {"dtw": 1225, "twed": 600, "soft_dtw": 250}


@pytest.fixture(scope="module")
def gunpoint():
    Xtr, ytr = load_gunpoint("train")
    Xte, yte = load_gunpoint("test")
    return np.asarray(Xtr), np.asarray(ytr), np.asarray(Xte), np.asarray(yte)


def test_shipped_data_is_gunpoint(gunpoint):
    Xtr, ytr, Xte, yte = gunpoint
    # UCR's GunPoint: 50 train and 150 test series of length 150, two classes
    assert Xtr.shape == (50, 150) and Xte.shape == (150, 150)
    assert Xtr.dtype == np.float64 and Xte.dtype == np.float64
    assert ytr.shape == (50,) and yte.shape == (150,)
    assert len(np.unique(np.concatenate([ytr, yte]))) == 2
    assert np.isfinite(Xtr).all() and np.isfinite(Xte).all()


def nn_predict(D, ytr):
    return ytr[np.argmin(D, axis=1)]


@pytest.mark.parametrize("metric", list(CASES))
def test_cdist_1nn_equals_pair_loop(gunpoint, metric, rng):
    Xtr, ytr, Xte, yte = gunpoint
    f, params = CASES[metric]
    D = tswarp.cdist(Xte, Xtr, metric=metric, **params)
    assert D.shape == (150, 50)
    rows = np.sort(rng.choice(len(Xte), LOOP_ROWS[metric], replace=False))
    loop = np.empty((len(rows), len(Xtr)))
    for r, i in enumerate(rows):
        for j, y in enumerate(Xtr):
            loop[r, j] = f(Xte[i], y, **params)
    what = f"seed={rng.seed} {metric}"
    np.testing.assert_allclose(D[rows], loop, rtol=1e-12, atol=1e-12 * np.abs(loop).max(), err_msg=what)
    pred, pred_loop = nn_predict(D[rows], ytr), nn_predict(loop, ytr)
    # the two may only disagree where two training series are at exactly tied distances
    for r in np.flatnonzero(pred != pred_loop):
        j, k = np.argmin(D[rows[r]]), np.argmin(loop[r])
        assert loop[r, j] == pytest.approx(loop[r, k], rel=1e-12), f"{what}: test series {rows[r]} not a tie"
    acc = np.mean(nn_predict(D, ytr) == yte)
    assert 0.5 < acc <= 1.0, f"{metric} 1-NN accuracy {acc}"


@pytest.mark.parametrize("metric", list(CASES))
def test_pdist_of_training_set_equals_pair_loop(gunpoint, metric, rng):
    Xtr = gunpoint[0]
    f, params = CASES[metric]
    P = tswarp.pdist(Xtr, metric=metric, condensed=True, **params)
    i, j = np.triu_indices(len(Xtr), 1)
    pick = np.sort(rng.choice(len(i), LOOP_PAIRS[metric], replace=False))
    loop = np.array([f(Xtr[a], Xtr[b], **params) for a, b in zip(i[pick], j[pick])])
    np.testing.assert_allclose(P[pick], loop, rtol=1e-12, atol=1e-12 * np.abs(loop).max(),
                               err_msg=f"seed={rng.seed} {metric}")


def test_dtw_1nn_error_rate_matches_ucr(gunpoint):
    Xtr, ytr, Xte, yte = gunpoint
    D = tswarp.cdist(Xte, Xtr, metric="dtw")
    err = float(np.mean(nn_predict(D, ytr) != yte))
    # 14/150 = 0.0933; 13 or 15 errors would be 0.087 or 0.100
    assert round(err, 3) == UCR_GUNPOINT_DTW_FULL_ERROR, f"error rate {err} ({round(err * 150)} of 150)"
