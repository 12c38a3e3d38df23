/*
 * SIMD across pairs: workspace layout, dispatch by CPU level, and the SSE2 instantiation
 * of the lane kernels (lanes_impl.h: 2 double or 4 float pairs per vector). The AVX2 + FMA
 * instantiation (4 double or 8 float pairs) lives in lanes_avx2.c. Without SSE2 (non-x86)
 * there is no lane kernel: tsw__lanes_width returns 0 and batches use the single-pair path.
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"
#include "kernels.h"

#include <math.h>

/* ---- workspace ------------------------------------------------------------------------- */

int tsw__lanes_layout_make(const tsw_params *p, int64_t dim, int64_t rows, int64_t cols,
                           int vl, size_t esz, tsw__lanes_layout *lay)
{
    size_t off = 0, pts_a, pts_b, per_a, per_b, per_row;
    *lay = (tsw__lanes_layout){0};
    /* points x dim x lanes, checked; the per-point arrays (x lanes) are smaller */
    if (tsw__mul_size((size_t)rows, (size_t)dim, &pts_a) ||
        tsw__mul_size(pts_a, (size_t)vl, &pts_a) ||
        tsw__mul_size((size_t)cols, (size_t)dim, &pts_b) ||
        tsw__mul_size(pts_b, (size_t)vl, &pts_b))
        return TSW_EOVERFLOW;
    pts_a = tsw__round_line(pts_a, esz);
    pts_b = tsw__round_line(pts_b, esz);
    per_a = tsw__round_line((size_t)rows * (size_t)vl, esz);
    per_b = tsw__round_line((size_t)cols * (size_t)vl, esz);
    per_row = tsw__round_line(((size_t)cols + 1) * (size_t)vl, esz);
    if (pts_a > SIZE_MAX / 16 || pts_b > SIZE_MAX / 16)
        return TSW_EOVERFLOW;
    lay->a = off;
    off += pts_a;
    lay->b = off;
    off += pts_b;
    if (p->measure == TSW_DTW && p->cost == TSW_COST_COSINE) {
        lay->na = off;
        off += per_a;
        lay->nb = off;
        off += per_b;
    }
    /* a value per point: ERP's gap costs, TWED's deletion costs, MSM's |x_i - x_{i-1}|
     * (one-channel programs); a second one: TWED's timestamps, MSM's sign flips of the
     * split (lanes_impl.h, ln_msm_neigh) */
    const int msm1 = p->measure == TSW_MSM && p->msm_independent;
    if (p->measure == TSW_ERP || p->measure == TSW_TWED || msm1) {
        lay->da = off;
        off += per_a;
        lay->db = off;
        off += per_b;
    }
    if (p->measure == TSW_TWED || msm1) {
        lay->ta = off;
        off += per_a;
        lay->tb = off;
        off += per_b;
    }
    lay->row = off;
    off += per_row;
    lay->lrow = off;
    if (p->measure == TSW_TWED || p->measure == TSW_SOFT_DTW) /* TWED local terms, soft-DTW k */
        off += per_row;
    if (p->measure == TSW_DTW) { /* early abandoning's bounds (knn): rows', then columns' */
        lay->eab = off;
        off += tsw__round_line(((size_t)rows + (size_t)cols + 2) * (size_t)vl, esz);
    }
    const size_t longer = (size_t)(rows > cols ? rows : cols);
    if (p->measure == TSW_WDTW || p->measure == TSW_WDDTW) {
        lay->w = off;
        off += tsw__round_line(longer, esz);
    }
    if (p->measure == TSW_EDR || p->measure == TSW_LCSS) {
        lay->eps = off;
        off += tsw__round_line((size_t)vl, esz);
    }
    if (TSW_IS_DERIVATIVE(p->measure)) { /* rows, cols: the derivatives' lengths */
        lay->dv = off;
        off += tsw__round_line(longer * (size_t)dim, esz);
    }
    lay->total = off;
    return TSW_OK;
}

/* Widest lane count of a dtype over the levels (the workspace serves any level). */
static int tsw__lanes_max_vl(tsw_dtype dtype) { return dtype == TSW_F32 ? 8 : 4; }

size_t tsw__lanes_ws_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim, int64_t n,
                           int64_t m)
{
    /* Itakura swaps rows and columns: size for the longer length on both axes. */
    int64_t len = n > m ? n : m;
    const size_t esz = tsw__dtype_size(dtype);
    tsw__lanes_layout lay;
    size_t bytes;
    if (tsw__lanes_layout_make(params, dim, len, len, tsw__lanes_max_vl(dtype), esz, &lay) ||
        tsw__mul_size(lay.total, esz, &bytes))
        return 0;
    return bytes;
}

/* ---- SSE2 instantiation ---------------------------------------------------------------- */

#if TSW_X86
#define TSW_V_ISA 1
#include "lanes_inst.h"
#undef TSW_V_ISA
#endif

/* ---- dispatch ----------------------------------------------------------------------------- */

int tsw__lanes_width_level(const tsw_params *params, tsw_dtype dtype, int64_t dim, int level)
{
    (void)dim;
    if (level > tsw__cpu_level())
        level = tsw__cpu_level();
    if (params->measure == TSW_TWED && params->p != 1.0 && params->p != 2.0)
        return 0; /* pow() per cell: no vector form */
    if (params->measure == TSW_SHAPE_DTW)
        return 0; /* its own fill, a pair at a time (shape_dtw.c) */
    if (params->measure == TSW_DDTW && params->cost == TSW_COST_COSINE)
        return 0; /* (the lanes keep no norms of the derivatives) */
    if (!TSW_X86 || level < 1)
        return 0;
    int vl = level >= 2 ? 32 : 16; /* vector bytes */
    return vl / (int)tsw__dtype_size(dtype);
}

int tsw__lanes_width(const tsw_params *params, tsw_dtype dtype, int64_t dim)
{
    return tsw__lanes_width_level(params, dtype, dim, tsw__cpu_level());
}

int64_t tsw__pair_lanes_level(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                              const tsw__pair *pairs, int64_t count, void *ws, double *out,
                              int level)
{
    if (level > tsw__cpu_level())
        level = tsw__cpu_level();
    if (tsw__lanes_width_level(params, dtype, dim, level) == 0)
        return 0;
    const int f32 = dtype == TSW_F32;
    if (params->measure == TSW_SOFT_DTW && level >= 2)
        for (int64_t t = 0; t < count; ++t)
            if (!tsw__sdtw_pair_lin_fits(params, dtype, dim, &pairs[t]))
                return 0; /* beyond the linear domain: one pair at a time (tsw__pair_fast) */
#if TSW_X86
    if (TSW_IS_FAMILY(params->measure)) {
        if (level >= 2)
            return f32 ? tsw__fam_lanes_run_avx2_f32(params, dim, pairs, count, ws, out)
                       : tsw__fam_lanes_run_avx2_f64(params, dim, pairs, count, ws, out);
        return f32 ? tsw__fam_lanes_run_sse2_f32(params, dim, pairs, count, ws, out)
                   : tsw__fam_lanes_run_sse2_f64(params, dim, pairs, count, ws, out);
    }
    if (level >= 2)
        return f32 ? tsw__lanes_run_avx2_f32(params, dim, pairs, count, ws, out)
                   : tsw__lanes_run_avx2_f64(params, dim, pairs, count, ws, out);
    return f32 ? tsw__lanes_run_sse2_f32(params, dim, pairs, count, ws, out)
               : tsw__lanes_run_sse2_f64(params, dim, pairs, count, ws, out);
#else
    (void)f32;
    (void)pairs;
    (void)count;
    (void)ws;
    (void)out;
    return 0;
#endif
}

int64_t tsw__pair_lanes_ea(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw__pair *pairs, int64_t count, void *ws, double *out,
                           const double *const *rowb, const double *const *colb, double thr,
                           int same_a)
{
    if (params->measure != TSW_DTW || tsw__lanes_width(params, dtype, dim) == 0)
        return 0;
#if TSW_X86
    const int f32 = dtype == TSW_F32;
    if (tsw__cpu_level() >= 2)
        return f32 ? tsw__lanes_run_ea_avx2_f32(params, dim, pairs, count, ws, out, rowb, colb,
                                                thr, same_a)
                   : tsw__lanes_run_ea_avx2_f64(params, dim, pairs, count, ws, out, rowb, colb,
                                                thr, same_a);
    return f32 ? tsw__lanes_run_ea_sse2_f32(params, dim, pairs, count, ws, out, rowb, colb, thr,
                                            same_a)
               : tsw__lanes_run_ea_sse2_f64(params, dim, pairs, count, ws, out, rowb, colb, thr,
                                            same_a);
#else
    (void)pairs;
    (void)count;
    (void)ws;
    (void)out;
    (void)rowb;
    (void)colb;
    (void)thr;
    (void)same_a;
    return 0;
#endif
}

int64_t tsw__pair_lanes(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw__pair *pairs, int64_t count, void *ws, double *out)
{
    return tsw__pair_lanes_level(params, dtype, dim, pairs, count, ws, out, tsw__cpu_level());
}
