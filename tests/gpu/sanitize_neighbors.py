"""knn and search on the GPU in small, for compute-sanitizer (memcheck with leak check and
racecheck), as run on 2026-11-27:

    compute-sanitizer --tool memcheck --leak-check full --error-exitcode 7 \\
        python tests/gpu/sanitize_neighbors.py
    compute-sanitizer --tool racecheck --error-exitcode 7 python tests/gpu/sanitize_neighbors.py
"""
import numpy as np

import tswarp

rng = np.random.default_rng(3)
for dt in (np.float32, np.float64):
    Q = rng.standard_normal((7, 33, 2)).cumsum(1).astype(dt)
    X = rng.standard_normal((300, 33, 2)).cumsum(1).astype(dt)
    D, I = tswarp.knn(Q, X, 3, window=0.1, device="cuda", layout="channels_last")
    R = tswarp.cdist(Q, X, window=0.1, _impl="reference", layout="channels_last")
    assert (I == np.argsort(R, axis=1, kind="stable")[:, :3]).all()
    tswarp.knn(Q[:, :20], X, 2, radius=0, device="cuda", cost="abs", layout="channels_last")
s = rng.standard_normal(50000).cumsum()
q = s[1000:1100]
st, d = tswarp.search(q, s, 3, window=0.05, device="cuda")
assert st[0] == 1000
tswarp.search(q.astype(np.float32), s.astype(np.float32), 2, radius=3, device="cuda",
              znorm=False)
# windows the bound kernel's block sums cannot resolve (a level of 1e8 beside a walk of
# 1e-3: their two-pass fallback), the host series through the page-locked pieces
import os  # noqa: E402

os.environ["TSWARP_SEARCH_STAGE"] = "1"
s3 = s * 1e-3
s3[:20000] += 1e8
st3, d3 = tswarp.search(s3[30000:30064], s3, 2, window=0.1, device="cuda")
h3, hd3 = tswarp.search(s3[30000:30064], s3, 2, window=0.1, device="cpu")
assert (st3 == h3).all() and (d3 == hd3).all()
tswarp.search(q.astype(np.float32), s.astype(np.float32), 2, window=0.05, device="cuda")
del os.environ["TSWARP_SEARCH_STAGE"]
# a series already on the GPU (read in place, float32 widened on the device)
import torch  # noqa: E402

for dt in (np.float64, np.float32):
    ds = torch.from_numpy(s.astype(dt)).cuda()
    st2, d2 = tswarp.search(q.astype(dt), ds, 3, window=0.05)
    h2, hd = tswarp.search(q.astype(dt), s.astype(dt), 3, window=0.05, device="cpu")
    assert (st2 == h2).all() and (d2 == hd).all()
del ds
torch.cuda.empty_cache()  # (torch's cached blocks would read as leaks)
print("ok")
