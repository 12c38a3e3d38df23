/*
 * Fast single-pair kernels: workspace layout, dispatch by CPU level, and the scalar and
 * SSE2 instantiations of the anti-diagonal kernel (pair_diag_impl.h). The AVX2 + FMA
 * instantiation lives in pair_fast_avx2.c (compiled with -mavx2 -mfma).
 *
 * Every measure, cost, window, precision and dim goes through the same anti-diagonal
 * kernel; the one exception is TWED with an Lp order p other than 1 or 2, whose pow() per
 * cell has no vector form here: it runs in the scalar instantiation.
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"
#include "kernels.h"

#include <math.h>

/* ---- workspace ------------------------------------------------------------------------- */

/* off += count * size, checked. */
static int tsw__grow(size_t *off, size_t count, size_t size)
{
    size_t b;
    if (tsw__mul_size(count, size, &b) || *off > SIZE_MAX - b)
        return TSW_EOVERFLOW;
    *off += b;
    return TSW_OK;
}

int tsw__diag_layout_make(const tsw_params *p, int64_t dim, int64_t rows, int64_t cols,
                          size_t esz, tsw__diag_layout *lay)
{
    size_t off = 0;
    /* row-indexed arrays carry TSW__ALIGN_SH elements of slack in front (pair_diag_impl.h:
     * DG_SH aligns the anti-diagonal's stores) */
    const size_t sa = tsw__round_line((size_t)rows + 1 + TSW__PAD(esz) + TSW__ALIGN_SH, esz);
    const size_t sb = tsw__round_line((size_t)cols + TSW__PAD(esz), esz);
    const size_t strip = TSW__STRIP_BYTES / esz;
    const size_t dl = tsw__round_line(
        ((size_t)rows < strip ? (size_t)rows : strip) + 2 + TSW__PAD(esz) + TSW__ALIGN_SH, esz);
    const size_t rl = tsw__round_line((size_t)cols + 1 + TSW__PAD(esz), esz);
    *lay = (tsw__diag_layout){0};
    lay->sa = sa;
    lay->sb = sb;
    lay->a = off;
    if (tsw__grow(&off, (size_t)dim, sa))
        return TSW_EOVERFLOW;
    lay->br = off;
    if (tsw__grow(&off, (size_t)dim, sb))
        return TSW_EOVERFLOW;
    if (p->measure == TSW_DTW && p->cost == TSW_COST_COSINE) {
        lay->na = off;
        off += sa;
        lay->nbr = off;
        off += sb;
    }
    if (p->measure == TSW_TWED) {
        lay->da = off;
        off += sa;
        lay->dbr = off;
        off += sb;
        lay->ta = off;
        off += sa;
        lay->tbr = off;
        off += sb;
    }
    for (int b = 0; b < 3; ++b) {
        lay->d[b] = off;
        off += dl;
    }
    /* second values: TWED's local terms, soft-DTW's binary exponents (linear domain) */
    const int second = p->measure == TSW_TWED || p->measure == TSW_SOFT_DTW;
    for (int b = 0; b < 3; ++b) {
        lay->l[b] = off;
        if (second)
            off += dl;
    }
    lay->row = off;
    off += rl;
    lay->lrow = off;
    if (second)
        off += rl;
    lay->total = off;
    return off > SIZE_MAX / 8 ? TSW_EOVERFLOW : TSW_OK;
}

size_t tsw__diag_ws_bytes(const tsw_params *p, tsw_dtype dtype, int64_t dim, int64_t n,
                          int64_t m)
{
    /* Itakura swaps rows and columns: size for the longer length on both axes. */
    int64_t len = n > m ? n : m;
    tsw__diag_layout lay;
    size_t bytes;
    const size_t esz = tsw__dtype_size(dtype);
    if (tsw__diag_layout_make(p, dim, len, len, esz, &lay) ||
        tsw__mul_size(lay.total, esz, &bytes))
        return 0;
    return bytes;
}

/* ---- instantiations: scalar (every CPU) and SSE2 (every x86-64) ------------------------- */

#define TSW_V_ISA 0
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "pair_diag_impl.h"
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "pair_diag_impl.h"
#undef TSW_V_DOUBLE
#undef TSW_V_ISA

#if TSW_X86
#define TSW_V_ISA 1
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "pair_diag_impl.h"
static void tsw__vmath_sse2_f64(int fn, const double *in, double *out, int64_t n)
{
    V_NAME(tsw_vmath_apply)(fn, in, out, n);
}
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "pair_diag_impl.h"
static void tsw__vmath_sse2_f32(int fn, const float *in, float *out, int64_t n)
{
    V_NAME(tsw_vmath_apply)(fn, in, out, n);
}
#undef TSW_V_DOUBLE
#undef TSW_V_ISA

void tsw__vmath_sse2(tsw_dtype dtype, int fn, const void *in, void *out, int64_t count)
{
    if (dtype == TSW_F32)
        tsw__vmath_sse2_f32(fn, in, out, count);
    else
        tsw__vmath_sse2_f64(fn, in, out, count);
}
#endif

/* ---- dispatch ----------------------------------------------------------------------------- */

void tsw__vmath_apply(int level, tsw_dtype dtype, int fn, const void *in, void *out,
                      int64_t count)
{
    if (level > tsw__cpu_level())
        level = tsw__cpu_level();
#if TSW_X86
    if (level >= 2) {
        tsw__vmath_avx2(dtype, fn, in, out, count);
        return;
    }
    if (level >= 1) {
        tsw__vmath_sse2(dtype, fn, in, out, count);
        return;
    }
#endif
    if (dtype == TSW_F32)
        tsw_vmath_apply_scalar_f32(fn, in, out, count);
    else
        tsw_vmath_apply_scalar_f64(fn, in, out, count);
}

void tsw__pair_fast_level(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw__pair *pair, void *ws, double *out, int level)
{
    if (TSW_IS_FAMILY(params->measure)) { /* the elastic family: its own kernel (family.c) */
        tsw__family_pair(params, dtype, dim, pair, ws, HUGE_VAL, out);
        return;
    }
    if (params->measure == TSW_SHAPE_DTW) { /* its fast fill (shape_dtw.c) */
        tsw__shape_pair_fast(params, dtype, dim, pair, ws, out, level);
        return;
    }
    if (level > tsw__cpu_level())
        level = tsw__cpu_level();
    if (params->measure == TSW_TWED && params->p != 1.0 && params->p != 2.0)
        level = 0; /* pow() per cell: scalar only */
    if (params->measure == TSW_SOFT_DTW && level >= 2 &&
        !tsw__sdtw_pair_lin_fits(params, dtype, dim, pair))
        level = 1; /* beyond the linear domain: the log-domain kernel */
    const int f32 = dtype == TSW_F32;
#if TSW_X86
    if (level >= 2) {
        *out = f32 ? tsw__diag_pair_avx2_f32(params, dim, pair, ws)
                   : tsw__diag_pair_avx2_f64(params, dim, pair, ws);
        return;
    }
    if (level >= 1) {
        *out = f32 ? tsw__diag_pair_sse2_f32(params, dim, pair, ws)
                   : tsw__diag_pair_sse2_f64(params, dim, pair, ws);
        return;
    }
#endif
    *out = f32 ? tsw__diag_pair_scalar_f32(params, dim, pair, ws)
               : tsw__diag_pair_scalar_f64(params, dim, pair, ws);
}

void tsw__pair_fast(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw__pair *pair, void *ws, double *out)
{
    tsw__pair_fast_level(params, dtype, dim, pair, ws, out, tsw__cpu_level());
}
