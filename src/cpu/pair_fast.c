/* Fast single-pair kernels. Placeholder until the optimised kernels land: the reference. */
#include "../internal.h"

void tsw__pair_fast(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw__pair *pair, void *ws, double *out)
{
    tsw__pair_reference(params, dtype, dim, pair, ws, out);
}
