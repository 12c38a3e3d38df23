/*
 * Argument checks shared by every entry point (the dispatch files api.c, align.c,
 * segmental.c, sdtw_grad.c, shapelet.c) and by the CUDA backend's device-memory calls:
 * parameters, exec options, values and timestamps, and the spans of collections.
 */
#include "internal.h"

#include <float.h>
#include <math.h>

/* ---- validation ----------------------------------------------------------------------- */

static int tsw__finite(double x) { return isfinite(x); }

/* Every refusal names the field and its valid range (tsw_last_error_detail). */
#define TSW__BAD(rc, ...)                                                                     \
    do {                                                                                      \
        tsw__set_detail(__VA_ARGS__);                                                         \
        return (rc);                                                                          \
    } while (0)

int tsw__check_params(const tsw_params *p)
{
    if (!p)
        TSW__BAD(TSW_EINVAL, "params is NULL");
    if ((int)p->measure < TSW_DTW || (int)p->measure > TSW_SHAPE_DTW)
        TSW__BAD(TSW_EINVAL, "measure %d is not a tsw_measure", (int)p->measure);
    switch (p->window) {
    case TSW_WINDOW_NONE:
        break;
    case TSW_WINDOW_SAKOE_CHIBA:
        if (!tsw__finite(p->window_radius) || p->window_radius < 0 ||
            p->window_radius != floor(p->window_radius) || p->window_radius > 9.0e18)
            TSW__BAD(TSW_EPARAM, "radius must be a whole number of cells in [0, 9e18], got %g",
                     p->window_radius);
        break;
    case TSW_WINDOW_SAKOE_CHIBA_FRACTION:
        if (!tsw__finite(p->window_radius) || p->window_radius < 0 || p->window_radius > 1)
            TSW__BAD(TSW_EPARAM, "window must be a fraction in [0, 1], got %g", p->window_radius);
        break;
    case TSW_WINDOW_ITAKURA:
        if (!tsw__finite(p->itakura_max_slope) || p->itakura_max_slope < 1)
            TSW__BAD(TSW_EPARAM, "itakura_max_slope must be a finite number >= 1, got %g",
                     p->itakura_max_slope);
        break;
    default:
        TSW__BAD(TSW_EINVAL, "window %d is not a tsw_window", (int)p->window);
    }
    switch (p->measure) {
    case TSW_DDTW:
    case TSW_DTW:
        if (p->cost < TSW_COST_SQEUCLIDEAN || p->cost > TSW_COST_COSINE)
            TSW__BAD(TSW_EINVAL, "cost %d is not a tsw_cost", (int)p->cost);
        if (p->accumulated != 0 && p->accumulated != 1)
            TSW__BAD(TSW_EINVAL, "accumulated must be 0 or 1, got %d", p->accumulated);
        break;
    case TSW_TWED:
        if (!tsw__finite(p->nu) || p->nu < 0)
            TSW__BAD(TSW_EPARAM, "nu must be a finite number >= 0, got %g", p->nu);
        if (!tsw__finite(p->lmbda) || p->lmbda < 0)
            TSW__BAD(TSW_EPARAM, "lmbda must be a finite number >= 0, got %g", p->lmbda);
        if (!tsw__finite(p->p) || p->p < 1)
            TSW__BAD(TSW_EPARAM, "p must be a finite number >= 1, got %g", p->p);
        break;
    case TSW_SOFT_DTW:
        /* Below the smallest normal number 1/gamma overflows; above TSW_GAMMA_MAX the value
         * -gamma log(number of paths) overflows for series of ordinary lengths and the
         * divergence would subtract infinities. */
        if (!tsw__finite(p->gamma) || p->gamma < DBL_MIN || p->gamma > TSW_GAMMA_MAX)
            TSW__BAD(TSW_EPARAM, "gamma must be in [%g, %g] (float64), got %g", DBL_MIN,
                     TSW_GAMMA_MAX, p->gamma);
        if (p->normalize != 0 && p->normalize != 1)
            TSW__BAD(TSW_EINVAL, "normalize must be 0 or 1, got %d", p->normalize);
        break;
    case TSW_WDTW:
    case TSW_WDDTW:
        if (!tsw__finite(p->g) || p->g < 0)
            TSW__BAD(TSW_EPARAM, "g must be a finite number >= 0, got %g", p->g);
        break;
    case TSW_ADTW:
        if (!tsw__finite(p->warp_penalty) || p->warp_penalty < 0)
            TSW__BAD(TSW_EPARAM, "warp_penalty must be a finite number >= 0, got %g",
                     p->warp_penalty);
        break;
    case TSW_ERP:
        if (!tsw__finite(p->erp_g))
            TSW__BAD(TSW_EPARAM, "g must be a finite number, got %g", p->erp_g);
        break;
    case TSW_EDR:
        if (p->epsilon == TSW_EPSILON_AUTO)
            break;
        /* fall through */
    case TSW_LCSS:
        if (!tsw__finite(p->epsilon) || p->epsilon < 0)
            TSW__BAD(TSW_EPARAM, "epsilon must be a finite number >= 0, got %g", p->epsilon);
        break;
    case TSW_MSM:
        if (!tsw__finite(p->c) || p->c < 0)
            TSW__BAD(TSW_EPARAM, "c must be a finite number >= 0, got %g", p->c);
        if (p->msm_independent != 0 && p->msm_independent != 1)
            TSW__BAD(TSW_EINVAL, "msm_independent must be 0 or 1, got %d", p->msm_independent);
        break;
    case TSW_SHAPE_DTW:
        if (p->reach < 0 || p->reach > 100000)
            TSW__BAD(TSW_EPARAM, "reach must be in [0, 100000], got %lld", (long long)p->reach);
        if (p->descriptor != TSW_SHAPE_IDENTITY && p->descriptor != TSW_SHAPE_PAA)
            TSW__BAD(TSW_EPARAM, "descriptor must be TSW_SHAPE_IDENTITY or TSW_SHAPE_PAA, got %d",
                     p->descriptor);
        if (p->descriptor == TSW_SHAPE_PAA &&
            (p->paa_segments < 1 || p->paa_segments > 2 * p->reach + 1))
            TSW__BAD(TSW_EPARAM, "paa_segments must be in [1, 2 reach + 1] = [1, %lld], got %lld",
                     (long long)(2 * p->reach + 1), (long long)p->paa_segments);
        break;
    default:
        break;
    }
    return TSW_OK;
}

/* A float32 computation narrows the parameters to float: they must stay finite there, and
 * gamma a normal float with a finite reciprocal, or valid double parameters would give NaN
 * or inf. */
int tsw__check_params_f32(const tsw_params *p)
{
    if (p->measure == TSW_TWED) {
        if (p->nu > FLT_MAX)
            TSW__BAD(TSW_EPARAM, "nu must be <= %g for float32 inputs, got %g", FLT_MAX, p->nu);
        if (p->lmbda > FLT_MAX)
            TSW__BAD(TSW_EPARAM, "lmbda must be <= %g for float32 inputs, got %g", FLT_MAX,
                     p->lmbda);
        if (p->p > FLT_MAX)
            TSW__BAD(TSW_EPARAM, "p must be <= %g for float32 inputs, got %g", FLT_MAX, p->p);
    }
    if (p->measure == TSW_ADTW && p->warp_penalty > FLT_MAX)
        TSW__BAD(TSW_EPARAM, "warp_penalty must be <= %g for float32 inputs, got %g",
                 (double)FLT_MAX, p->warp_penalty);
    if (p->measure == TSW_ERP && fabs(p->erp_g) > FLT_MAX)
        TSW__BAD(TSW_EPARAM, "g must be within +-%g for float32 inputs, got %g",
                 (double)FLT_MAX, p->erp_g);
    if ((p->measure == TSW_LCSS || p->measure == TSW_EDR) && p->epsilon > FLT_MAX)
        TSW__BAD(TSW_EPARAM, "epsilon must be <= %g for float32 inputs, got %g",
                 (double)FLT_MAX, p->epsilon);
    if (p->measure == TSW_MSM && p->c > FLT_MAX)
        TSW__BAD(TSW_EPARAM, "c must be <= %g for float32 inputs, got %g", (double)FLT_MAX,
                 p->c);
    if (p->measure == TSW_SOFT_DTW && (p->gamma > TSW_GAMMA_MAX_F32 || p->gamma < FLT_MIN))
        TSW__BAD(TSW_EPARAM, "gamma must be in [%g, %g] for float32 inputs, got %g",
                 (double)FLT_MIN, TSW_GAMMA_MAX_F32, p->gamma);
    return TSW_OK;
}

int tsw__check_finite(tsw_dtype dtype, const void *values, int64_t count)
{
    /* x - x is 0 for finite x and NaN otherwise, and sums of exact zeros stay 0 while a NaN
     * stays NaN: eight independent sums (in any order, the same answer) that the compiler
     * vectorises, where a comparison per value compiles to a branchy scalar loop. */
    int bad = 0;
    int64_t i = 0;
    if (dtype == TSW_F32) {
        const float *v = values;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (; i + 8 <= count; i += 8)
            for (int t = 0; t < 8; ++t)
                acc[t] += v[i + t] - v[i + t];
        for (; i < count; ++i)
            acc[0] += v[i] - v[i];
        for (int t = 0; t < 8; ++t)
            bad |= !(acc[t] == 0.0f);
    } else {
        const double *v = values;
        double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (; i + 8 <= count; i += 8)
            for (int t = 0; t < 8; ++t)
                acc[t] += v[i + t] - v[i + t];
        for (; i < count; ++i)
            acc[0] += v[i] - v[i];
        for (int t = 0; t < 8; ++t)
            bad |= !(acc[t] == 0.0);
    }
    return bad ? TSW_ENONFINITE : TSW_OK;
}

int tsw__check_times(tsw_dtype dtype, const void *times, int64_t length)
{
    if (!times)
        return TSW_OK;
    if (tsw__check_finite(dtype, times, length))
        return TSW_ETIMES;
    if (dtype == TSW_F32) {
        const float *t = times;
        for (int64_t i = 1; i < length; ++i)
            if (!(t[i] > t[i - 1]))
                return TSW_ETIMES;
    } else {
        const double *t = times;
        for (int64_t i = 1; i < length; ++i)
            if (!(t[i] > t[i - 1]))
                return TSW_ETIMES;
    }
    return TSW_OK;
}

int tsw__check_exec(const tsw_exec *e)
{
    if (e->n_threads < 0 || e->device_index < 0)
        return TSW_EINVAL;
    if (e->device != TSW_DEVICE_AUTO && e->device != TSW_DEVICE_CPU &&
        e->device != TSW_DEVICE_CUDA)
        return TSW_EINVAL;
    if (e->impl != TSW_IMPL_AUTO && e->impl != TSW_IMPL_REFERENCE && e->impl != TSW_IMPL_SCALAR)
        return TSW_EINVAL;
    if (e->cuda_async != 0 && e->cuda_async != 1)
        return TSW_EINVAL;
    if (e->n_devices < TSW_ALL_DEVICES || e->n_devices > TSW__MAX_DEVICES) {
        tsw__set_detail("n_devices must be TSW_ALL_DEVICES (-1), 0, 1 or a count of devices up "
                        "to %d, got %d", TSW__MAX_DEVICES, e->n_devices);
        return TSW_EINVAL;
    }
    if (e->n_devices >= 2) {
        if (!e->devices) {
            tsw__set_detail("n_devices is %d but devices is NULL", e->n_devices);
            return TSW_EINVAL;
        }
        for (int i = 0; i < e->n_devices; ++i) {
            if (e->devices[i] < 0) {
                tsw__set_detail("devices[%d] is %d: device ordinals are >= 0", i, e->devices[i]);
                return TSW_EINVAL;
            }
            for (int j = 0; j < i; ++j)
                if (e->devices[j] == e->devices[i]) {
                    tsw__set_detail("devices[%d] and devices[%d] are both device %d", j, i,
                                    e->devices[i]);
                    return TSW_EINVAL;
                }
        }
    }
#ifndef TSWARP_WITH_CUDA
    if (e->device == TSW_DEVICE_CUDA)
        return TSW_ENODEV;
#endif
    return TSW_OK;
}

int tsw__check_series_shape(int64_t dim, const tsw_series *s)
{
    size_t n;
    if (!s || !s->values)
        return TSW_EINVAL;
    if (s->length < 1)
        return TSW_ESHAPE;
    if (tsw__mul_size((size_t)s->length, (size_t)dim, &n) || n > (size_t)INT64_MAX / 8)
        return TSW_EOVERFLOW;
    return TSW_OK;
}

int tsw__check_series(tsw_dtype dtype, int64_t dim, const tsw_series *s, int twed)
{
    int rc = tsw__check_series_shape(dim, s);
    if (rc)
        return rc;
    rc = tsw__check_finite(dtype, s->values, s->length * dim);
    if (rc)
        return rc;
    if ((twed & TSW__CHK_MIN3) && s->length < 3) {
        tsw__set_detail("a series has %lld points: DDTW and WDDTW need at least 3",
                        (long long)s->length);
        return TSW_ESHAPE;
    }
    return (twed & TSW__CHK_TIMES) ? tsw__check_times(dtype, s->times, s->length) : TSW_OK;
}

/* Series i of a collection lies in addressable memory: checked before any of its values is
 * read (an offset such as 1 << 60 would otherwise make the byte address overflow and a
 * read land anywhere). Its row offset (i * length without offsets) and length give the byte
 * range [off dim esz, (off + len) dim esz), which must fit in int64. TSW_EINVAL for a
 * negative offset, TSW_ESHAPE for a length below 1, TSW_EOVERFLOW otherwise. */
/* A collection without offsets spans count * length rows: refused in O(1) when that byte
 * extent overflows, before any loop over its count (a count near 2^61 with length 4 looped
 * for ever, found by tests/fuzz/fuzz_api). */
int tsw__check_extent(const tsw_collection *c, int64_t dim, size_t esz)
{
    if (c->offsets || c->count < 1 || c->length < 1 || dim < 1)
        return TSW_OK; /* explicit offsets: checked series by series; the rest: the callers */
    size_t rows, bytes;
    if (tsw__mul_size((size_t)c->count, (size_t)c->length, &rows) ||
        tsw__mul_size(rows, (size_t)dim, &bytes) || tsw__mul_size(bytes, esz, &bytes) ||
        bytes > (size_t)INT64_MAX)
        return TSW_EOVERFLOW;
    return TSW_OK;
}

int tsw__check_span(const tsw_collection *c, int64_t i, int64_t dim, size_t esz)
{
    if (!c->offsets && c->length > 0 && i > INT64_MAX / c->length)
        return TSW_EOVERFLOW;
    const int64_t off = tsw__coll_off(c, i), len = tsw__coll_len(c, i);
    size_t bytes;
    if (len < 1)
        return TSW_ESHAPE;
    if (off < 0)
        return TSW_EINVAL;
    if (dim < 1 || off > INT64_MAX - len ||
        tsw__mul_size((size_t)(off + len), (size_t)dim, &bytes) ||
        tsw__mul_size(bytes, esz, &bytes) || bytes > (size_t)INT64_MAX)
        return TSW_EOVERFLOW;
    return TSW_OK;
}

