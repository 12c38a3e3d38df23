/*
 * The float32 MUFU instructions, once, for every CUDA kernel that takes them directly:
 * exp2, log2 and reciprocal, about 2^-22 relative (of O(1) arguments), subnormals flushed.
 * The soft-DTW kernels' softmin uses them where exp2f/log2f would add the denormal scaling
 * around the MUFU (batch_engine.cuh, sdtw_wf_cell.cuh). CUDA device code only.
 */
#pragma once

__device__ __forceinline__ float mufu_ex2(float a)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}
__device__ __forceinline__ float mufu_lg2(float a)
{
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}
__device__ __forceinline__ float mufu_rcp(float a)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}
