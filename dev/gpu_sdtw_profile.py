"""Where the time of one tswarp.torch.SoftDTW forward + backward goes on the GPU.

    python dev/gpu_sdtw_profile.py [B N d]

torch.profiler over a few warm calls: the kernels' own time against the CUDA API calls
(allocation, copies, synchronisation) and the Python side, printed as torch's table.

Found (H100, 2026-11-22): 525 us of kernel time per call at B=512 (731 us at B=64)
against 0.87 ms of wall time: about 0.34 ms a call is fixed cost (Python, the workspace
query, the index upload, the check kernels, the final synchronisation).
"""
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from tswarp.torch import SoftDTW

B, N, d = (int(v) for v in sys.argv[1:4]) if len(sys.argv) >= 4 else (512, 256, 2)
x = torch.cumsum(torch.randn(B, N, d, device="cuda"), 1).mul_(0.1).requires_grad_()
y = torch.cumsum(torch.randn(B, N, d, device="cuda"), 1).mul_(0.1).requires_grad_()
f = SoftDTW(gamma=1.0)
for _ in range(5):
    f(x, y).sum().backward()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(10):
        f(x, y).sum().backward()
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=18))
print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=8))
