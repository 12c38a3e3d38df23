/*
 * The soft-DTW wavefront kernel's cells (sdtw_wf.cuh), in a header of their own so that
 * bench/gpu_sdtw_step_probe.cu times the same code: the float32 MUFU helpers, the forward
 * cell with probabilities (R in double) and the value-only cell (R in float32). Needs
 * common/recurrence.h and common/sdtw_grad.h first; CUDA only.
 */
#pragma once

/* float32 MUFU exp2, log2 and reciprocal (about 2^-22 relative, of O(1) arguments here) */
__device__ __forceinline__ float wf_ex2(float a)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}
__device__ __forceinline__ float wf_lg2(float a)
{
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}
__device__ __forceinline__ float wf_rcp(float a)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}

/*
 * One forward cell: R = c + softmin_gamma(d, u, l) (recurrence.h's stages, in base 2: k2 =
 * log2(e) / gamma, gl = gamma ln 2, both float32) and the probabilities of the diagonal and
 * up predecessors. All three predecessors +inf: R = +inf and probabilities 0. Per cell: two
 * exponentials, one logarithm and one reciprocal on the MUFU units, three float64 <-> float32
 * conversions (the differences of R, the log term), no float64 multiply.
 */
__device__ __forceinline__ void wf_cell(double d, double u, double l, double c, float k2,
                                        float gl, double &r, float &pd, float &pu)
{
    const double lo = TSW_MIN(TSW_MIN(d, u), l);
    const bool dead = lo == TSW_INF_F64;
    const double lz = dead ? 0.0 : lo;
    /* the minimum's term is exp2(0) = 1 exactly (recurrence.h, TSW_SOFTMIN3_SORTED): only
     * the other two predecessors, oa and ob, need an exponential */
    const bool dmin = d == lo, umin = !dmin && u == lo;
    const double oa = dmin ? u : d, ob = dmin || umin ? l : u;
    /* the differences in double (R is large, its neighbours close), then float32 for the
     * exponent: O(1) arguments */
#define WF_SUB(a, b) ((a) - (b))
#define WF_ADD(a, b) ((a) + (b))
#define WF_MUL(a, b) ((a) * (b))
#define WF_ARG(x) ((float)WF_SUB(lz, (x)) * k2)
    const float ea = wf_ex2(WF_ARG(oa)), eb = wf_ex2(WF_ARG(ob));
    const float sum = TSW_SOFTMIN3_SUM(ea, eb, 1.f, WF_ADD);
    /* TSW_SOFTMIN3_OUT with gamma ln 2 times log2(sum) in float32 (at most gamma ln 3) */
    r = dead ? TSW_INF_F64 : c + WF_SUB(lz, (double)(gl * wf_lg2(sum)));
    const float inv = wf_rcp(sum);
    const float ed = dmin ? 1.f : ea, eu = dmin ? ea : umin ? 1.f : eb;
    pd = dead ? 0.f : TSW_SDTW_PROB(ed, inv, WF_MUL);
    pu = dead ? 0.f : TSW_SDTW_PROB(eu, inv, WF_MUL);
#undef WF_ARG
#undef WF_SUB
#undef WF_ADD
#undef WF_MUL
}

/*
 * One forward cell of the value-only variant (VAL, soft-DTW values without gradients): R in
 * float32 as the many-pairs engine keeps it for float32 (batch_engine.cuh), the sorted
 * softmin of recurrence.h (TSW_SOFTMIN3_SORTED: two exponentials, the smallest term's
 * exp(0) = 1 being exact), in base 2. No probabilities are kept.
 */
__device__ __forceinline__ float wf_cell_val(float d, float u, float l, float c, float k2,
                                             float gl)
{
    const float pre = TSW_MIN(d, u), hi = TSW_MAX(d, u);
    const float lo = TSW_MIN(pre, l), mid = TSW_MAX(pre, l);
#define WF_SUB(a, b) __fsub_rn((a), (b))
#define WF_ADD(a, b) __fadd_rn((a), (b))
#define WF_MUL(a, b) __fmul_rn((a), (b))
    const float sm = TSW_SOFTMIN3_SORTED(lo, mid, hi, gl, k2, 1.f, WF_ADD, WF_SUB, WF_MUL,
                                         wf_ex2, wf_lg2);
    return lo == TSW_INF_F32 ? TSW_INF_F32 : WF_ADD(c, sm);
#undef WF_SUB
#undef WF_ADD
#undef WF_MUL
}
