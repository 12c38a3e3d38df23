/*
 * The cosine cost's inputs as unit vectors (dispatch, above both backends): every host entry
 * point that computes DTW with cost = TSW_COST_COSINE (tsw_distance, tsw_cdist, tsw_pdist,
 * tsw_paired, tsw_dtw_path, tsw_subsequence_dtw, tsw_segmental_dtw) hands the kernels a copy
 * of its series whose points are x / |x| (zero points stay zero), |x| computed with the point
 * first scaled by its largest component. The cost 1 - <x,y> / (|x| |y|) (common/cost.h) of
 * unit vectors is that of the original points, but no square overflows (|x| near 1e154 in
 * float64, 1e19 in float32 gave NaN) or underflows (points near 1e-160 counted as zero):
 * the cost is scale invariant over the whole range of the type. The device-memory entry
 * points read the caller's GPU buffers as they are (tswarp.h says so).
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static double tsw__at(tsw_dtype dt, const void *x, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)x)[k] : ((const double *)x)[k];
}

/* the point x (dim values) as a unit vector into u; dim == 1 gives its sign */
static void tsw__unit_point(tsw_dtype dt, int64_t dim, const void *x, void *u)
{
    double mx = 0.0, s = 0.0;
    for (int64_t k = 0; k < dim; ++k)
        mx = fmax(mx, fabs(tsw__at(dt, x, k)));
    for (int64_t k = 0; k < dim; ++k) {
        const double w = mx > 0.0 ? tsw__at(dt, x, k) / mx : 0.0;
        s += w * w;
    }
    const double inv = s > 0.0 ? 1.0 / sqrt(s) : 0.0;
    for (int64_t k = 0; k < dim; ++k) {
        const double w = mx > 0.0 ? tsw__at(dt, x, k) / mx * inv : 0.0;
        if (dt == TSW_F32)
            ((float *)u)[k] = (float)w;
        else
            ((double *)u)[k] = w;
    }
}

static void tsw__unit_rows(tsw_dtype dt, int64_t dim, const void *x, int64_t rows, void *u)
{
    const size_t step = (size_t)dim * tsw__dtype_size(dt);
    for (int64_t r = 0; r < rows; ++r)
        tsw__unit_point(dt, dim, (const char *)x + (size_t)r * step, (char *)u + (size_t)r * step);
}

int tsw__unit_series(tsw_dtype dt, int64_t dim, const tsw_series *s, tsw_series *out, void **buf)
{
    size_t bytes;
    if (tsw__mul_size((size_t)s->length, (size_t)dim, &bytes) ||
        tsw__mul_size(bytes, tsw__dtype_size(dt), &bytes))
        return TSW_EOVERFLOW;
    *buf = tsw__malloc(bytes);
    if (!*buf)
        return TSW_ENOMEM;
    tsw__unit_rows(dt, dim, s->values, s->length, *buf);
    *out = *s;
    out->values = *buf;
    out->times = NULL; /* cosine is a DTW cost: no timestamps */
    return TSW_OK;
}

int tsw__unit_collection(tsw_dtype dt, int64_t dim, const tsw_collection *c,
                         tsw_collection *out, void **buf)
{
    /* a compact copy: the series back to back, with their own offsets */
    int64_t rows = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        if (n > INT64_MAX - rows)
            return TSW_EOVERFLOW;
        rows += n;
    }
    size_t vbytes, obytes;
    if (tsw__mul_size((size_t)rows, (size_t)dim, &vbytes) ||
        tsw__mul_size(vbytes, tsw__dtype_size(dt), &vbytes) ||
        tsw__mul_size((size_t)c->count, sizeof(int64_t), &obytes) ||
        vbytes > SIZE_MAX - obytes - 64)
        return TSW_EOVERFLOW;
    const size_t voff = (obytes + 63) / 64 * 64;
    *buf = tsw__malloc(voff + vbytes);
    if (!*buf)
        return TSW_ENOMEM;
    int64_t *offsets = *buf;
    char *values = (char *)*buf + voff;
    const size_t row_bytes = (size_t)dim * tsw__dtype_size(dt);
    int64_t r = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        offsets[i] = r;
        tsw__unit_rows(dt, dim, (const char *)c->values + (size_t)tsw__coll_off(c, i) * row_bytes,
                       n, values + (size_t)r * row_bytes);
        r += n;
    }
    *out = *c;
    out->values = values;
    out->offsets = offsets;
    out->times = NULL;
    return TSW_OK;
}

int tsw__unit_pair(tsw_dtype dtype, int64_t dim, const tsw_collection *x,
                   const tsw_collection *y, tsw_collection *ux, tsw_collection *uy,
                   void **bx, void **by)
{
    int rc = tsw__unit_collection(dtype, dim, x, ux, bx);
    if (!rc && y && y != x)
        rc = tsw__unit_collection(dtype, dim, y, uy, by);
    else if (!rc && y)
        *uy = *ux;
    return rc;
}
