/*
 * The soft-DTW wavefront kernel's cells (sdtw_wf.cuh), in a header of their own so that
 * dev/gpu_sdtw_step_probe.cu times the same code: the forward cell with probabilities (R in
 * double) and the value-only cell (R in float32), on mufu.cuh's float32 MUFU helpers. Needs
 * common/recurrence.h and common/sdtw_grad.h first; CUDA only.
 */
#pragma once

#include "cuda/mufu.cuh"

/*
 * One forward cell: R = c + softmin_gamma(d, u, l) (recurrence.h's stages, in base 2: k2 =
 * log2(e) / gamma, gl = gamma ln 2, both float32) and the probabilities of the diagonal and
 * up predecessors. All three predecessors +inf: R = +inf and probabilities 0.
 * In two stages (TSW_SOFTMIN3_SUM2): d and l are known a step ahead (the diagonal is the up
 * neighbour of the step before, l the row's own cell), u arrives from the row above in the
 * step itself, so only u - min(d, l), one exponential, the sum, the logarithm and two
 * additions follow it; the minimum's tests and the probabilities are off that chain.
 * Per cell: two exponentials, one logarithm and one reciprocal on the MUFU units, three
 * float64 -> float32 conversions (differences of R: O(1) arguments), one back.
 */
__device__ __forceinline__ void wf_cell(double d, double u, double l, double c, float k2,
                                        float gl, double &r, float &pd, float &pu)
{
    /* stage 1, d and l: m = min(d, l), e_ab = exp2((m - max(d, l)) k2) in [0, 1] (0 when
     * the larger is +inf, so also when both are) */
    const double m = TSW_MIN(d, l), mx = TSW_MAX(d, l);
    const bool dm = d <= l; /* d is the minimum of the two */
    const float eab = mx == TSW_INF_F64 ? 0.f : mufu_ex2((float)(m - mx) * k2);
    const float sab = 1.f + eab;
    /* stage 2, u: t = exp2(-|u - m| k2) (0 when one of them is +inf) */
    const bool ulo = u < m;
    const double lo = ulo ? u : m, clo = c + lo;
    const bool dead = m == TSW_INF_F64 && u == TSW_INF_F64;
    const float t = mufu_ex2(-fabsf((float)(u - m)) * k2);
#define WF_ADD(a, b) ((a) + (b))
#define WF_FMA(a, b, c) fmaf((a), (b), (c))
#define WF_MUL(a, b) ((a) * (b))
    const float sum = TSW_SOFTMIN3_SUM2(t, sab, ulo, 1.f, WF_ADD, WF_FMA);
    /* TSW_SOFTMIN3_OUT with gamma ln 2 times log2(sum) in float32 (at most gamma ln 3) */
    r = dead ? TSW_INF_F64 : clo - (double)(gl * mufu_lg2(sum));
    const float inv = mufu_rcp(sum);
    /* the terms of u and d relative to lo */
    const float ed_m = dm ? 1.f : eab, ed = ulo ? t * ed_m : ed_m, eu = ulo ? 1.f : t;
    pd = dead ? 0.f : TSW_SDTW_PROB(ed, inv, WF_MUL);
    pu = dead ? 0.f : TSW_SDTW_PROB(eu, inv, WF_MUL);
#undef WF_ADD
#undef WF_FMA
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
                                         mufu_ex2, mufu_lg2);
    return lo == TSW_INF_F32 ? TSW_INF_F32 : WF_ADD(c, sm);
#undef WF_SUB
#undef WF_ADD
#undef WF_MUL
}
