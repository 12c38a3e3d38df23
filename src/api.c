/* Public entry points: status table, defaults, validation and dispatch to a backend. */
#include "common/band.h"
#include "internal.h"

#include <math.h>
#include <string.h>

/* ---- status codes --------------------------------------------------------------------- */

const char *tsw_strerror(int status)
{
    if (status == TSW_OK)
        return "success";
#define TSW_XX_(name, value, msg)                                                             \
    if (status == value)                                                                      \
        return msg;
    TSW_ERRNO_MAP(TSW_XX_)
#undef TSW_XX_
    return "unknown error";
}

const char *tsw_err_name(int status)
{
    if (status == TSW_OK)
        return "TSW_OK";
#define TSW_XX_(name, value, msg)                                                             \
    if (status == value)                                                                      \
        return "TSW_" #name;
    TSW_ERRNO_MAP(TSW_XX_)
#undef TSW_XX_
    return "TSW_EUNKNOWN";
}

#define TSW_STR_(x) #x
#define TSW_STR(x) TSW_STR_(x)
const char *tsw_version_string(void)
{
    return TSW_STR(TSWARP_VERSION_MAJOR) "." TSW_STR(TSWARP_VERSION_MINOR) "." TSW_STR(
        TSWARP_VERSION_PATCH);
}

unsigned tsw_version(void) { return TSWARP_VERSION_HEX; }

/* ---- the elastic family's device ------------------------------------------------------- */

int tsw__family_device(const tsw_params *params, tsw_exec *ex)
{
    /* DTW .. soft-DTW and the elastic family run on either device, AUTO choosing by size.
     * Shape DTW runs on the GPU when asked (cuda/shape_dtw.cu); AUTO keeps it on the CPU:
     * its GPU kernel holds every pair's whole matrix and is not tuned to win on size. */
    if (params->measure == TSW_SHAPE_DTW && ex->device == TSW_DEVICE_AUTO)
        ex->device = TSW_DEVICE_CPU;
    return TSW_OK;
}

/* ---- defaults ------------------------------------------------------------------------- */

void tsw_params_default(tsw_params *p, tsw_measure measure)
{
    if (!p)
        return;
    memset(p, 0, sizeof(*p));
    p->measure = measure;
    p->window = TSW_WINDOW_NONE;
    p->window_radius = 0;
    p->itakura_max_slope = 2.0;
    p->cost = TSW_COST_SQEUCLIDEAN;
    p->accumulated = 0;
    p->nu = 0.001;
    p->lmbda = 1.0;
    p->p = 2.0;
    p->gamma = 1.0;
    p->normalize = 0;
    p->g = 0.05;
    p->warp_penalty = 1.0;
    p->erp_g = 0.0;
    p->epsilon = measure == TSW_EDR ? TSW_EPSILON_AUTO : 1.0;
    p->c = 1.0;
    p->msm_independent = 1;
    p->reach = 15;
    p->descriptor = TSW_SHAPE_IDENTITY;
    p->paa_segments = 5;
}

#ifdef TSWARP_WITH_CUDA
/* TSW_DEVICE_AUTO retries on the CPU when the GPU is missing or cannot hold the work
 * (nothing has been written then); an explicit TSW_DEVICE_CUDA reports the status. */
int tsw__cuda_fallback(const tsw_exec *ex, int rc)
{
    if (ex->device != TSW_DEVICE_AUTO)
        return 0;
    if (rc == TSW_ENODEV || rc == TSW_ENOMEM) {
        tsw__clear_detail();
        return 1;
    }
    return 0;
}
#endif

/* ---- one pair --------------------------------------------------------------------------- */

#ifdef TSWARP_WITH_CUDA
/* AUTO's size of one pair's work: the cells its window admits (a narrow band on a long pair
 * is a few cells a row, which the GPU's one-pair kernel does not run faster than the CPU's). */
static double tsw__pair_cells(const tsw_params *p, int64_t n, int64_t m)
{
    const tsw_band b = tsw_band_make((int)p->window, p->window_radius, p->itakura_max_slope, n, m);
    return tsw_band_cells(&b);
}
#endif

static int tsw__distance(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw_series *a, const tsw_series *b, double *out,
                         const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if (!out)
        return TSW_EINVAL;
    if ((rc = tsw__check_params(params)) || (rc = tsw__check_exec(&ex)) ||
        (rc = tsw__family_device(params, &ex)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dtype == TSW_F32 && (rc = tsw__check_params_f32(params)))
        return rc;
    if (dim < 1)
        return TSW_ESHAPE;
    int twed = tsw__series_flags(params);
    if ((rc = tsw__check_series(dtype, dim, a, twed)) ||
        (rc = tsw__check_series(dtype, dim, b, twed)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, tsw__pair_cells(params, a->length, b->length) * (double)dim))) {
        rc = tsw__cuda_distance(params, dtype, dim, a, b, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif

    /* Small problems use a stack buffer: no allocation on the latency-critical path. */
    _Alignas(64) unsigned char stack_ws[TSW__STACK_WS_BYTES];
    size_t ws_bytes = tsw__pair_ws_bytes(params, dtype, dim, a->length, b->length);
    if (ws_bytes == 0)
        return TSW_EOVERFLOW;
    void *ws = stack_ws;
    void *heap = NULL;
    if (ws_bytes > sizeof(stack_ws)) {
        heap = tsw__malloc_aligned(ws_bytes);
        if (!heap)
            return TSW_ENOMEM;
        ws = heap;
    }
    void (*kernel)(const tsw_params *, tsw_dtype, int64_t, const tsw__pair *, void *,
                   double *) =
        ex.impl == TSW_IMPL_REFERENCE ? tsw__pair_reference : tsw__pair_fast;

    /* a long pair polls exec->progress between strips of rows: Ctrl-C stops it too */
    tsw__cancel cancel;
    const int64_t cells = a->length > INT64_MAX / b->length ? INT64_MAX : a->length * b->length;
    tsw__cancel_init(&cancel, &ex, cells);
    tsw__pair ab = {a->values, (twed & TSW__CHK_TIMES) ? a->times : NULL, a->length,
                    b->values, (twed & TSW__CHK_TIMES) ? b->times : NULL, b->length, &cancel};
    double v;
    kernel(params, dtype, dim, &ab, ws, &v);
    if (params->measure == TSW_SOFT_DTW && params->normalize && !cancel.stopped) {
        double vaa = 0, vbb = 0; /* (a cancelled call adds them, then drops the sum) */
        tsw__pair aa = {a->values, NULL, a->length, a->values, NULL, a->length, &cancel};
        tsw__pair bb = {b->values, NULL, b->length, b->values, NULL, b->length, &cancel};
        kernel(params, dtype, dim, &aa, ws, &vaa);
        if (!cancel.stopped)
            kernel(params, dtype, dim, &bb, ws, &vbb);
        v = v - 0.5 * (vaa + vbb);
    }
    tsw__free_aligned(heap);
    if (cancel.stopped)
        return TSW_ECANCELED;
    /* Computed in the input's precision: a float32 result is exactly representable. */
    *out = tsw__finish(params, v);
    if (dtype == TSW_F32)
        *out = (double)(float)*out;
    return TSW_OK;
}

/* ---- batches ---------------------------------------------------------------------------- */

/* Pointer and count of a collection: checked before the output size, which needs count. */
static int tsw__check_collection_count(const tsw_collection *c)
{
    if (!c || !c->values)
        return TSW_EINVAL;
    if (c->count < 1)
        return TSW_ESHAPE;
    return TSW_OK;
}

int tsw__check_collection(tsw_dtype dtype, int64_t dim, const tsw_collection *c,
                                 int twed)
{
    int rc0 = tsw__check_collection_count(c);
    if (rc0)
        return rc0;
    if (!c->lengths && c->length < 1)
        return TSW_ESHAPE;
    if (c->lengths && !c->offsets)
        return TSW_EINVAL; /* ragged lengths need explicit offsets */
    int rce = tsw__check_extent(c, dim, tsw__dtype_size(dtype));
    if (rce)
        return rce;
    /* every span first, then the values: nothing is read while any span is invalid or its
     * byte extent overflows (a later series' overflow must not follow a read of an earlier
     * series whose claimed extent the caller never allocated) */
    for (int64_t i = 0; i < c->count; ++i) {
        int rc = tsw__check_span(c, i, dim, tsw__dtype_size(dtype));
        if (rc)
            return rc;
    }
    for (int64_t i = 0; i < c->count; ++i) {
        int rc;
        int64_t len = tsw__coll_len(c, i), off = tsw__coll_off(c, i);
        size_t n;
        if (tsw__mul_size((size_t)len, (size_t)dim, &n) || n > (size_t)INT64_MAX / 8)
            return TSW_EOVERFLOW;
        rc = tsw__check_finite(dtype, (const char *)c->values +
                                          (size_t)off * (size_t)dim * tsw__dtype_size(dtype),
                               (int64_t)n);
        if (rc)
            return rc;
        if ((twed & TSW__CHK_MIN3) && len < 3) {
            tsw__set_detail("series %lld has %lld points: DDTW and WDDTW need at least 3",
                            (long long)i, (long long)len);
            return TSW_ESHAPE;
        }
        if ((twed & TSW__CHK_TIMES) && c->times) {
            rc = tsw__check_times(dtype,
                                  (const char *)c->times + (size_t)off * tsw__dtype_size(dtype),
                                  len);
            if (rc)
                return rc;
        }
    }
    return TSW_OK;
}

#ifdef TSWARP_WITH_CUDA
/* Sum of the lengths of a collection: with another collection's sum, the product is the
 * number of DP cells of a cdist (the device=auto decision). */
static double tsw__cells(const tsw_collection *c)
{
    if (!c->lengths)
        return (double)c->length * (double)c->count;
    double s = 0;
    for (int64_t i = 0; i < c->count; ++i)
        s += (double)c->lengths[i];
    return s;
}
#endif

int tsw__check_batch(const tsw_params *params, tsw_dtype dtype, int64_t dim, tsw_exec *ex,
                     void *out)
{
    int rc;
    if (!out)
        return TSW_EINVAL;
    if ((rc = tsw__check_params(params)) || (rc = tsw__check_exec(ex)) ||
        (rc = tsw__family_device(params, ex)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dtype == TSW_F32 && (rc = tsw__check_params_f32(params)))
        return rc;
    if (dim < 1)
        return TSW_ESHAPE;
    return TSW_OK;
}

static int tsw__cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
              const tsw_collection *y, void *out, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__check_batch(params, dtype, dim, &ex, out)))
        return rc;
    int twed = tsw__series_flags(params);
    /* The output size first: an impossible count must not start an O(count) scan of
     * series the caller cannot have provided. */
    if ((rc = tsw__check_collection_count(x)) || (rc = tsw__check_collection_count(y)))
        return rc;
    size_t cells;
    if (tsw__mul_size((size_t)x->count, (size_t)y->count, &cells) ||
        tsw__mul_size(cells, tsw__dtype_size(dtype), &cells))
        return TSW_EOVERFLOW;
    if ((rc = tsw__check_collection(dtype, dim, x, twed)) ||
        (rc = tsw__check_collection(dtype, dim, y, twed)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, tsw__cells(x) * tsw__cells(y) * (double)dim))) {
        rc = tsw__multi(&ex) ? tsw__multi_cdist(params, dtype, dim, x, y, out, &ex)
                             : tsw__cuda_cdist(params, dtype, dim, x, y, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_cdist(params, dtype, dim, x, y, out, &ex);
}

static int tsw__pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
              tsw_pdist_layout layout, void *out, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__check_batch(params, dtype, dim, &ex, out)))
        return rc;
    if (layout != TSW_PDIST_FULL && layout != TSW_PDIST_CONDENSED)
        return TSW_EINVAL;
    if ((rc = tsw__check_collection_count(x)))
        return rc;
    /* Output elements and bytes, before the O(count) scan of the series (see tsw_cdist). */
    int64_t elems = tsw_pdist_size(x->count, layout);
    size_t bytes;
    if ((elems == 0 && x->count > 1) ||
        tsw__mul_size((size_t)elems, tsw__dtype_size(dtype), &bytes))
        return TSW_EOVERFLOW;
    if ((rc = tsw__check_collection(dtype, dim, x, tsw__series_flags(params))))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, 0.5 * tsw__cells(x) * tsw__cells(x) * (double)dim))) {
        rc = tsw__multi(&ex) ? tsw__multi_pdist(params, dtype, dim, x, layout, out, &ex)
                             : tsw__cuda_pdist(params, dtype, dim, x, layout, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_pdist(params, dtype, dim, x, layout, out, &ex);
}

static int tsw__paired(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
               const tsw_collection *y, void *out, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if ((rc = tsw__check_batch(params, dtype, dim, &ex, out)))
        return rc;
    if ((rc = tsw__check_collection_count(x)) || (rc = tsw__check_collection_count(y)))
        return rc;
    if (x->count != y->count)
        return TSW_ESHAPE;
    size_t bytes;
    if (tsw__mul_size((size_t)x->count, tsw__dtype_size(dtype), &bytes))
        return TSW_EOVERFLOW;
    int twed = tsw__series_flags(params);
    if ((rc = tsw__check_collection(dtype, dim, x, twed)) ||
        (rc = tsw__check_collection(dtype, dim, y, twed)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, tsw__cells(x) * tsw__cells(y) / (double)x->count * (double)dim))) {
        rc = tsw__multi(&ex) ? tsw__multi_paired(params, dtype, dim, x, y, out, &ex)
                             : tsw__cuda_paired(params, dtype, dim, x, y, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_paired(params, dtype, dim, x, y, out, &ex);
}

/* ---- the cosine cost: unit vectors in (cosine.c), then the calls above ------------------ */

static int tsw__is_cosine(const tsw_params *p, tsw_dtype dtype, int64_t dim)
{
    return p && p->measure == TSW_DTW && p->cost == TSW_COST_COSINE && dim >= 1 &&
           (dtype == TSW_F32 || dtype == TSW_F64) && tsw__check_params(p) == TSW_OK;
}

int tsw_distance(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                 const tsw_series *b, double *out, const tsw_exec *exec)
{
    if (!out || !tsw__is_cosine(params, dtype, dim) || tsw__check_series(dtype, dim, a, 0) ||
        tsw__check_series(dtype, dim, b, 0))
        return tsw__distance(params, dtype, dim, a, b, out, exec); /* (its errors) */
    tsw_series ua, ub;
    void *ba = NULL, *bb = NULL;
    int rc = tsw__unit_series(dtype, dim, a, &ua, &ba);
    if (!rc)
        rc = tsw__unit_series(dtype, dim, b, &ub, &bb);
    if (!rc)
        rc = tsw__distance(params, dtype, dim, &ua, &ub, out, exec);
    tsw__free(ba);
    tsw__free(bb);
    return rc;
}


int tsw_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
              const tsw_collection *y, void *out, const tsw_exec *exec)
{
    if (!out || !tsw__is_cosine(params, dtype, dim) || tsw__check_collection(dtype, dim, x, 0) ||
        tsw__check_collection(dtype, dim, y, 0))
        return tsw__cdist(params, dtype, dim, x, y, out, exec);
    tsw_collection ux, uy;
    void *bx = NULL, *by = NULL;
    int rc = tsw__unit_pair(dtype, dim, x, y, &ux, &uy, &bx, &by);
    if (!rc)
        rc = tsw__cdist(params, dtype, dim, &ux, &uy, out, exec);
    tsw__free(bx);
    tsw__free(by);
    return rc;
}

int tsw_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
              tsw_pdist_layout layout, void *out, const tsw_exec *exec)
{
    if (!out || !tsw__is_cosine(params, dtype, dim) || tsw__check_collection(dtype, dim, x, 0))
        return tsw__pdist(params, dtype, dim, x, layout, out, exec);
    tsw_collection ux;
    void *bx = NULL;
    int rc = tsw__unit_collection(dtype, dim, x, &ux, &bx);
    if (!rc)
        rc = tsw__pdist(params, dtype, dim, &ux, layout, out, exec);
    tsw__free(bx);
    return rc;
}

int tsw_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
               const tsw_collection *y, void *out, const tsw_exec *exec)
{
    if (!out || !tsw__is_cosine(params, dtype, dim) || tsw__check_collection(dtype, dim, x, 0) ||
        tsw__check_collection(dtype, dim, y, 0))
        return tsw__paired(params, dtype, dim, x, y, out, exec);
    tsw_collection ux, uy;
    void *bx = NULL, *by = NULL;
    int rc = tsw__unit_pair(dtype, dim, x, y, &ux, &uy, &bx, &by);
    if (!rc)
        rc = tsw__paired(params, dtype, dim, &ux, &uy, out, exec);
    tsw__free(bx);
    tsw__free(by);
    return rc;
}
