/*
 * The elastic family on the GPU (tsw_measure TSW_WDTW .. TSW_MSM): the many-pairs engine's
 * K_FAM kernels (batch_engine.cuh: one warp a pair, the measure's program chosen per pair,
 * its cells from common/elastic.h) and the staging of what the family needs from a
 * collection before its pairs run (kernels.h: tsw__family_prep). A file of its own so
 * that the build compiles it beside kernels_batch.cu. Compiled with -fmad=false, as the
 * CPU kernels never contract a multiply and an add: the derivatives, gap costs, weights
 * and cells then round as the CPU's do.
 */
#include "kernels.h"

#include <math.h>

#include "batch_engine.cuh"
#include "common/elastic.h"

using namespace tsw_batch;

namespace {

typedef void (*KernelFn)(const Args);

template <typename T, bool DIM1> KernelFn fam_c(int C)
{
    switch (C) {
    case 1:
        return batch_kernel<T, K_FAM, 1, DIM1>;
    case 2:
        return batch_kernel<T, K_FAM, 2, DIM1>;
    case 4:
        return batch_kernel<T, K_FAM, 4, DIM1>;
    case 8:
        if constexpr (DIM1)
            return batch_kernel<T, K_FAM, 8, DIM1>;
        else
            return nullptr;
    default:
        return nullptr;
    }
}

/* DDTW's and WDDTW's derivatives: elastic.h's tsw_derivative, one thread a series. */
template <typename T>
__global__ void derivative_kernel(const T *values, const int64_t *off, const int64_t *len,
                                  int64_t count, int64_t dim, T *out)
{
    const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count)
        return;
    const int64_t o = off[s];
    if (sizeof(T) == 4)
        tsw_derivative_f32((const float *)values + o * dim, len[s], dim, (float *)out + o * dim);
    else
        tsw_derivative_f64((const double *)values + o * dim, len[s], dim,
                           (double *)out + o * dim);
}

/* EDR's automatic epsilon: each series' std over all its values, in order (one thread a
 * series: elastic.h's tsw_std_all, whose sums are sequential). */
template <typename T>
__global__ void std_kernel(const T *values, const int64_t *off, const int64_t *len,
                           int64_t count, int64_t dim, double *out)
{
    const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count)
        return;
    const T *x = values + off[s] * dim;
    if (sizeof(T) == 4)
        out[s] = tsw_std_all_f32((const float *)x, len[s] * dim);
    else
        out[s] = tsw_std_all_f64((const double *)x, len[s] * dim);
}

/* ERP: each series' gap costs summed in order (the CPU's boundary row and column, bit for
 * bit: the same additions) and, at dim 1, whether |x - y| is the match cost's bits. */
template <typename T>
__global__ void erp_kernel(const T *values, const int64_t *off, const int64_t *len,
                           int64_t count, int64_t dim, double g, T *cum, double *flag)
{
    const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count)
        return;
    const int64_t o = off[s], n = len[s];
    const T *x = values + o * dim;
    if (cum) {
        T run = T(0);
        for (int64_t i = 0; i < n; ++i) {
            if (sizeof(T) == 4)
                run += (T)tsw_erp_gap_f32((const float *)x + i * dim, dim, (float)g);
            else
                run += (T)tsw_erp_gap_f64((const double *)x + i * dim, dim, g);
            cum[o + i] = run;
        }
    }
    int exact = 0;
    if (dim == 1)
        exact = sizeof(T) == 4 ? tsw_root_square_exact_f32((const float *)x, n)
                               : tsw_root_square_exact_f64((const double *)x, n);
    flag[s] = exact ? 1.0 : 0.0;
}

} // namespace

const void *tsw__family_kernel(int dtype, int C, int dim1)
{
    KernelFn f;
    if (dtype == 0)
        f = dim1 ? fam_c<float, true>(C) : fam_c<float, false>(C);
    else
        f = dim1 ? fam_c<double, true>(C) : fam_c<double, false>(C);
    return (const void *)f;
}

int tsw__family_needs(const tsw_params *p)
{
    if (TSW_IS_DERIVATIVE(p->measure))
        return 1;
    if (p->measure == TSW_EDR && p->epsilon < 0)
        return 2;
    if (p->measure == TSW_ERP)
        return 3;
    return 0;
}

cudaError_t tsw__family_prep(const tsw_params *p, tsw_dtype dtype, int64_t dim,
                             const tsw__dcoll *c, void *deriv, double *stat,
                             cudaStream_t stream)
{
    const int need = tsw__family_needs(p);
    if (!need || c->count < 1)
        return cudaSuccess;
    const unsigned blocks = (unsigned)((c->count + 127) / 128);
    if (need == 1) {
        if (dtype == TSW_F32)
            derivative_kernel<float><<<blocks, 128, 0, stream>>>(
                (const float *)c->values, c->offsets, c->lengths, c->count, dim,
                (float *)deriv);
        else
            derivative_kernel<double><<<blocks, 128, 0, stream>>>(
                (const double *)c->values, c->offsets, c->lengths, c->count, dim,
                (double *)deriv);
    } else if (need == 3) {
        if (dtype == TSW_F32)
            erp_kernel<float><<<blocks, 128, 0, stream>>>((const float *)c->values, c->offsets,
                                                          c->lengths, c->count, dim, p->erp_g,
                                                          (float *)deriv, stat);
        else
            erp_kernel<double><<<blocks, 128, 0, stream>>>((const double *)c->values,
                                                           c->offsets, c->lengths, c->count,
                                                           dim, p->erp_g, (double *)deriv,
                                                           stat);
    } else {
        if (dtype == TSW_F32)
            std_kernel<float><<<blocks, 128, 0, stream>>>((const float *)c->values,
                                                          c->offsets, c->lengths, c->count,
                                                          dim, stat);
        else
            std_kernel<double><<<blocks, 128, 0, stream>>>((const double *)c->values,
                                                           c->offsets, c->lengths, c->count,
                                                           dim, stat);
    }
    return cudaGetLastError();
}
