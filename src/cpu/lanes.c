/* SIMD across pairs: dispatcher. */
#include "../internal.h"

size_t tsw__lanes_ws_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim, int64_t n,
                           int64_t m)
{
    (void)params; (void)dtype; (void)dim; (void)n; (void)m;
    return 0;
}

int tsw__lanes_width(const tsw_params *params, tsw_dtype dtype, int64_t dim)
{
    (void)params; (void)dtype; (void)dim;
    return 0;
}

int64_t tsw__pair_lanes(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw__pair *pairs, int64_t count, void *ws, double *out)
{
    (void)params; (void)dtype; (void)dim; (void)pairs; (void)count; (void)ws; (void)out;
    return 0;
}
