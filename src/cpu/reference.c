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
    if (dtype == TSW_F32)
        *out = ref_pair_f32(params, dim, pair, ws, bound);
    else
        *out = ref_pair_f64(params, dim, pair, ws, bound);
}
