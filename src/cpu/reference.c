/* The plain CPU reference of every measure (see reference_impl.h). */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"
#include "../internal.h"
#include "kernels.h"

#include <math.h>

#define T double
#define SFX f64
#define INF TSW_INF_F64
#define SQRT sqrt
#define FABS fabs
#include "reference_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT
#undef FABS

#define T float
#define SFX f32
#define INF TSW_INF_F32
#define SQRT sqrtf
#define FABS fabsf
#include "reference_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT
#undef FABS

int64_t tsw__min_return_path(const double *mat, int64_t n, int64_t m, int64_t *path)
{
    return ref_min_return_path_f64(mat, m + 1, 0, n, m, path);
}

size_t tsw__pair_ws_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim, int64_t n,
                          int64_t m)
{
    /* The reference needs two rows of max(n, m) + 1 (Itakura swaps the axes); the fast
     * single-pair kernels (cpu/pair_fast.c) their anti-diagonal layout. The larger of the
     * two serves both, so one workspace fits whichever kernel the caller picks. */
    size_t len = (size_t)(n > m ? n : m) + 1, ref, fast;
    if (tsw__mul_size(len, 2 * tsw__dtype_size(dtype), &ref))
        return 0;
    if (TSW_IS_FAMILY(params->measure)) {
        /* the elastic family (cpu/family.c and the reference): two rows and the per-point
         * arrays of tsw__family_ws_bytes, the derivatives of DDTW and WDDTW among them */
        return tsw__family_ws_bytes(params, dtype, dim, n, m);
    }
    if (params->measure == TSW_SHAPE_DTW) /* descriptors and the whole matrix */
        return tsw__shape_ws_bytes(params, dim, n, m);
    fast = tsw__diag_ws_bytes(params, dtype, dim, n, m);
    if (fast == 0)
        return 0;
    return ref > fast ? ref : fast;
}

void tsw__pair_reference(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw__pair *pair, void *ws, double *out)
{
    tsw__pair_reference_bounded(params, dtype, dim, pair, ws, HUGE_VAL, out);
}

void tsw__pair_reference_bounded(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw__pair *pair, void *ws, double bound, double *out)
{
    if (params->measure == TSW_SHAPE_DTW) { /* its plain fill (shape_dtw.c) */
        (void)bound;
        tsw__shape_pair(params, dtype, dim, pair, ws, out);
        return;
    }
    if (dtype == TSW_F32)
        *out = ref_pair_f32(params, dim, pair, ws, bound);
    else
        *out = ref_pair_f64(params, dim, pair, ws, bound);
}

int tsw__cpu_elastic_path(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw_series *a, const tsw_series *b, int64_t *path,
                          int64_t *length, const tsw_exec *ex)
{
    int64_t n = a->length, m = b->length;
    const int deriv = TSW_IS_DERIVATIVE(params->measure);
    const int chans = params->measure == TSW_MSM && params->msm_independent && dim > 1;
    const size_t es = tsw__dtype_size(dtype);
    const int64_t pn = deriv ? n - 2 : n, pm = deriv ? m - 2 : m;
    size_t cells, bytes, dbytes = 0;
    if (pn < 1 || pm < 1 || tsw__mul_size((size_t)pn + 1, (size_t)pm + 1, &cells) ||
        tsw__mul_size(cells, es * (size_t)(chans ? 2 : 1), &bytes))
        return TSW_EOVERFLOW;
    if (deriv && (tsw__mul_size((size_t)(n + m - 4), (size_t)dim * es, &dbytes) ||
                  bytes > SIZE_MAX - dbytes))
        return TSW_EOVERFLOW;
    unsigned char *buf = (unsigned char *)tsw__malloc(bytes + dbytes);
    if (!buf) {
        tsw__set_detail("the alignment path's matrix needs %zu bytes", bytes + dbytes);
        return TSW_ENOMEM;
    }
    tsw__cancel cancel;
    tsw__cancel_init(&cancel, ex, (chans ? dim : 1) * pn * pm);
    int64_t len;
    if (dtype == TSW_F32) {
        const float *av = (const float *)a->values, *bv = (const float *)b->values;
        if (deriv)
            tsw_derivative_pair_f32(&av, &n, &bv, &m, dim, (float *)(buf + bytes));
        float *mat = (float *)buf;
        len = ref_family_path_f32(params, dim, av, (const float *)a->times, n, bv,
                                  (const float *)b->times, m, mat, chans ? mat + cells : NULL,
                                  path, &cancel);
    } else {
        const double *av = (const double *)a->values, *bv = (const double *)b->values;
        if (deriv)
            tsw_derivative_pair_f64(&av, &n, &bv, &m, dim, (double *)(buf + bytes));
        double *mat = (double *)buf;
        len = ref_family_path_f64(params, dim, av, (const double *)a->times, n, bv,
                                  (const double *)b->times, m, mat, chans ? mat + cells : NULL,
                                  path, &cancel);
    }
    tsw__free(buf);
    if (len < 0)
        return TSW_ECANCELED;
    *length = len;
    return TSW_OK;
}

