/* The fast CPU kernel of the elastic family (see family_impl.h), float and double. */
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
#define FABS fabs
#include "family_impl.h"
#undef T
#undef SFX
#undef INF
#undef FABS

#define T float
#define SFX f32
#define INF TSW_INF_F32
#define FABS fabsf
#include "family_impl.h"
#undef T
#undef SFX
#undef INF
#undef FABS

size_t tsw__family_ws_bytes(const tsw_params *p, tsw_dtype dtype, int64_t dim, int64_t n,
                            int64_t m)
{
    /* two rows of max(n, m) + 1; the derivatives of both series (DDTW, WDDTW); WDTW's
     * weights or ERP's gap costs (n + m values at most) */
    const size_t len = (size_t)(n > m ? n : m) + 1;
    size_t elems, deriv = 0, bytes;
    if (tsw__mul_size(len, 4, &elems))
        return 0;
    if (TSW_IS_DERIVATIVE(p->measure) &&
        tsw__mul_size((size_t)n + (size_t)m, (size_t)dim, &deriv))
        return 0;
    if (elems > SIZE_MAX - deriv || tsw__mul_size(elems + deriv, tsw__dtype_size(dtype), &bytes))
        return 0;
    return bytes;
}

void tsw__family_pair(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw__pair *pair, void *ws, double bound, double *out)
{
    if (dtype == TSW_F32)
        *out = fam_pair_f32(params, dim, pair, ws, bound);
    else
        *out = fam_pair_f64(params, dim, pair, ws, bound);
}
