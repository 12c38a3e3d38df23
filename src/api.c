/* Public entry points: status table, defaults, validation and dispatch to a backend. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

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
}

void tsw_exec_default(tsw_exec *e)
{
    if (!e)
        return;
    memset(e, 0, sizeof(*e));
    e->n_threads = 0;
    e->device = TSW_DEVICE_AUTO;
    e->device_index = 0;
    e->impl = TSW_IMPL_AUTO;
}

int64_t tsw_pdist_size(int64_t n, tsw_pdist_layout layout)
{
    if (n < 0 || n > 3037000499LL) /* n * n must fit in int64 */
        return 0;
    return layout == TSW_PDIST_CONDENSED ? n * (n - 1) / 2 : n * n;
}

/* ---- information ---------------------------------------------------------------------- */

#ifndef TSWARP_WITH_CUDA
/* Without the CUDA backend every CUDA entry point reports TSW_ENODEV (after the argument
 * checks that need no device), so programs link and run the same against either build. */
int tsw_has_cuda(void) { return 0; }
int tsw_cuda_device_count(int *count)
{
    if (!count)
        return TSW_EINVAL;
    *count = 0;
    return TSW_ENODEV;
}
int tsw_cuda_device_info(int index, tsw_cuda_device *info)
{
    (void)index;
    return info ? TSW_ENODEV : TSW_EINVAL;
}
const char *tsw_cuda_archs(void) { return ""; }
int tsw_cuda_versions(int *runtime, int *driver)
{
    if (runtime)
        *runtime = 0;
    if (driver)
        *driver = 0;
    return TSW_ENODEV;
}
int tsw_cuda_cached_bytes(int device, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
    tsw__set_detail("device %d: this tswarp was built without the CUDA backend", device);
    return TSW_ENODEV;
}
int tsw_cuda_empty_cache(int device)
{
    tsw__set_detail("device %d: this tswarp was built without the CUDA backend", device);
    return TSW_ENODEV;
}
int tsw_distance_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw_series *a, const tsw_series *b, void *out,
                        const tsw_exec *exec)
{
    (void)params, (void)dtype, (void)dim, (void)a, (void)b, (void)out, (void)exec;
    tsw__clear_detail();
    return TSW_ENODEV;
}
int tsw_cdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, const tsw_collection *y, void *out,
                     const tsw_exec *exec)
{
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)out, (void)exec;
    tsw__clear_detail();
    return TSW_ENODEV;
}
int tsw_pdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, tsw_pdist_layout layout, void *out,
                     const tsw_exec *exec)
{
    (void)params, (void)dtype, (void)dim, (void)x, (void)layout, (void)out, (void)exec;
    tsw__clear_detail();
    return TSW_ENODEV;
}
int tsw_paired_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_collection *x, const tsw_collection *y, void *out,
                      const tsw_exec *exec)
{
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)out, (void)exec;
    tsw__clear_detail();
    return TSW_ENODEV;
}
int tsw_paired_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                              const tsw_collection *x, const tsw_collection *y,
                              const tsw_exec *exec, size_t *bytes)
{
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)exec;
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
    return TSW_ENODEV;
}
int tsw_distance_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                const tsw_series *a, const tsw_series *b,
                                const tsw_exec *exec, size_t *bytes)
{
    (void)params, (void)dtype, (void)dim, (void)a, (void)b, (void)exec;
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
    return TSW_ENODEV;
}
int tsw_cdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_collection *x, const tsw_collection *y,
                             const tsw_exec *exec, size_t *bytes)
{
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)exec;
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
    return TSW_ENODEV;
}
int tsw_pdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_collection *x, tsw_pdist_layout layout,
                             const tsw_exec *exec, size_t *bytes)
{
    (void)params, (void)dtype, (void)dim, (void)x, (void)layout, (void)exec;
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
    return TSW_ENODEV;
}
#endif

/* ---- details of the last failure (thread-local) ---------------------------------------- */

static _Thread_local char tsw__detail_buf[512];

void tsw__set_detail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tsw__detail_buf, sizeof(tsw__detail_buf), fmt, ap);
    va_end(ap);
}

void tsw__clear_detail(void) { tsw__detail_buf[0] = 0; }

const char *tsw_last_error_detail(void) { return tsw__detail_buf; }

int tsw_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int64_t tsw__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define TSW__CANCEL_NS 50000000LL /* 50 ms between polls */

void tsw__cancel_init(tsw__cancel *c, const tsw_exec *ex, int64_t total)
{
    c->fn = ex ? ex->progress : NULL;
    c->user = ex ? ex->progress_user : NULL;
    c->total = total;
    c->done_ref = NULL;
    c->next_ns = c->fn ? tsw__now_ns() + TSW__CANCEL_NS : 0;
    c->stopped = 0;
}

int tsw__cancel_poll(tsw__cancel *c, int64_t done)
{
    if (!c || !c->fn)
        return 0;
    if (c->stopped)
        return 1;
    int64_t now = tsw__now_ns();
    if (now < c->next_ns)
        return 0;
    c->next_ns = now + TSW__CANCEL_NS;
    if (c->done_ref)
        done = __atomic_load_n(c->done_ref, __ATOMIC_RELAXED);
    if (c->fn(c->user, done < c->total ? done : c->total, c->total))
        c->stopped = 1;
    return c->stopped;
}

/* The threads a CPU call runs: exec->n_threads (0: tsw_max_threads()), at most the
 * processors this process may use (omp_get_num_procs(): more threads only slow a call down,
 * and a count such as INT_MAX makes the OpenMP runtime overflow its stack or ask for
 * hundreds of GB), at least 1. */
int tsw__threads(const tsw_exec *ex)
{
#ifdef _OPENMP
    int nt = ex && ex->n_threads > 0 ? ex->n_threads : omp_get_max_threads();
    int procs = omp_get_num_procs();
    if (procs < 1)
        procs = 1;
    if (nt > procs)
        nt = procs;
    return nt < 1 ? 1 : nt;
#else
    (void)ex;
    return 1;
#endif
}

/* ---- validation ----------------------------------------------------------------------- */

static int tsw__finite(double x) { return isfinite(x); }

int tsw__check_params(const tsw_params *p)
{
    if (!p)
        return TSW_EINVAL;
    if (p->measure != TSW_DTW && p->measure != TSW_TWED && p->measure != TSW_SOFT_DTW)
        return TSW_EINVAL;
    switch (p->window) {
    case TSW_WINDOW_NONE:
        break;
    case TSW_WINDOW_SAKOE_CHIBA:
        if (!tsw__finite(p->window_radius) || p->window_radius < 0 ||
            p->window_radius != floor(p->window_radius) || p->window_radius > 9.0e18)
            return TSW_EPARAM;
        break;
    case TSW_WINDOW_SAKOE_CHIBA_FRACTION:
        if (!tsw__finite(p->window_radius) || p->window_radius < 0 || p->window_radius > 1)
            return TSW_EPARAM;
        break;
    case TSW_WINDOW_ITAKURA:
        if (!tsw__finite(p->itakura_max_slope) || p->itakura_max_slope < 1)
            return TSW_EPARAM;
        break;
    default:
        return TSW_EINVAL;
    }
    switch (p->measure) {
    case TSW_DTW:
        if (p->cost < TSW_COST_SQEUCLIDEAN || p->cost > TSW_COST_COSINE)
            return TSW_EINVAL;
        if (p->accumulated != 0 && p->accumulated != 1)
            return TSW_EINVAL;
        break;
    case TSW_TWED:
        if (!tsw__finite(p->nu) || p->nu < 0 || !tsw__finite(p->lmbda) || p->lmbda < 0 ||
            !tsw__finite(p->p) || p->p < 1)
            return TSW_EPARAM;
        break;
    case TSW_SOFT_DTW:
        if (!tsw__finite(p->gamma) || p->gamma <= 0)
            return TSW_EPARAM;
        if (p->normalize != 0 && p->normalize != 1)
            return TSW_EINVAL;
        break;
    }
    return TSW_OK;
}

/* A float32 computation narrows the parameters to float: they must stay finite there, and
 * gamma keep a finite reciprocal, or valid double parameters would give NaN or inf. */
static int tsw__check_params_f32(const tsw_params *p)
{
    if (p->measure == TSW_TWED && (p->nu > FLT_MAX || p->lmbda > FLT_MAX || p->p > FLT_MAX))
        return TSW_EPARAM;
    if (p->measure == TSW_SOFT_DTW && (p->gamma > FLT_MAX || p->gamma < 1.0 / FLT_MAX))
        return TSW_EPARAM;
    return TSW_OK;
}

int tsw__check_finite(tsw_dtype dtype, const void *values, int64_t count)
{
    /* Sum-free check: x - x is 0 for finite x and NaN otherwise; OR-reducing the
     * comparison keeps the loop branch-free so it vectorises. */
    int bad = 0;
    if (dtype == TSW_F32) {
        const float *v = values;
        for (int64_t i = 0; i < count; ++i)
            bad |= !(v[i] - v[i] == 0.0f);
    } else {
        const double *v = values;
        for (int64_t i = 0; i < count; ++i)
            bad |= !(v[i] - v[i] == 0.0);
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
#ifndef TSWARP_WITH_CUDA
    if (e->device == TSW_DEVICE_CUDA)
        return TSW_ENODEV;
#endif
    return TSW_OK;
}

int tsw__check_series(tsw_dtype dtype, int64_t dim, const tsw_series *s, int twed)
{
    size_t n;
    if (!s || !s->values)
        return TSW_EINVAL;
    if (s->length < 1)
        return TSW_ESHAPE;
    if (tsw__mul_size((size_t)s->length, (size_t)dim, &n) || n > (size_t)INT64_MAX / 8)
        return TSW_EOVERFLOW;
    int rc = tsw__check_finite(dtype, s->values, (int64_t)n);
    if (rc)
        return rc;
    return twed ? tsw__check_times(dtype, s->times, s->length) : TSW_OK;
}

double tsw__finish(const tsw_params *p, double raw)
{
    if (p->measure == TSW_DTW && !p->accumulated && p->cost == TSW_COST_SQEUCLIDEAN)
        return sqrt(raw);
    return raw;
}

#ifdef TSWARP_WITH_CUDA
/* TSW_DEVICE_AUTO retries on the CPU when the GPU is missing or cannot hold the work
 * (nothing has been written then); an explicit TSW_DEVICE_CUDA reports the status. */
static int tsw__cuda_fallback(const tsw_exec *ex, int rc)
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

int tsw_distance(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                 const tsw_series *b, double *out, const tsw_exec *exec)
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
    if ((rc = tsw__check_params(params)) || (rc = tsw__check_exec(&ex)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dtype == TSW_F32 && (rc = tsw__check_params_f32(params)))
        return rc;
    if (dim < 1)
        return TSW_ESHAPE;
    int twed = params->measure == TSW_TWED;
    if ((rc = tsw__check_series(dtype, dim, a, twed)) ||
        (rc = tsw__check_series(dtype, dim, b, twed)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, (double)a->length * (double)b->length * (double)dim))) {
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
    tsw__pair ab = {a->values, twed ? a->times : NULL, a->length,
                    b->values, twed ? b->times : NULL, b->length, &cancel};
    double v;
    kernel(params, dtype, dim, &ab, ws, &v);
    if (params->measure == TSW_SOFT_DTW && params->normalize && !cancel.stopped) {
        double vaa, vbb;
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

/* Series i of a collection lies in addressable memory: checked before any of its values is
 * read (an offset such as 1 << 60 would otherwise make the byte address overflow and a
 * read land anywhere). Its row offset (i * length without offsets) and length give the byte
 * range [off dim esz, (off + len) dim esz), which must fit in int64. TSW_EINVAL for a
 * negative offset, TSW_ESHAPE for a length below 1, TSW_EOVERFLOW otherwise. */
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

static int tsw__check_collection(tsw_dtype dtype, int64_t dim, const tsw_collection *c,
                                 int twed)
{
    int rc0 = tsw__check_collection_count(c);
    if (rc0)
        return rc0;
    if (!c->lengths && c->length < 1)
        return TSW_ESHAPE;
    if (c->lengths && !c->offsets)
        return TSW_EINVAL; /* ragged lengths need explicit offsets */
    for (int64_t i = 0; i < c->count; ++i) {
        int rc = tsw__check_span(c, i, dim, tsw__dtype_size(dtype));
        if (rc)
            return rc;
        int64_t len = tsw__coll_len(c, i), off = tsw__coll_off(c, i);
        size_t n;
        if (tsw__mul_size((size_t)len, (size_t)dim, &n) || n > (size_t)INT64_MAX / 8)
            return TSW_EOVERFLOW;
        rc = tsw__check_finite(dtype, (const char *)c->values +
                                          (size_t)off * (size_t)dim * tsw__dtype_size(dtype),
                               (int64_t)n);
        if (rc)
            return rc;
        if (twed && c->times) {
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

static int tsw__check_batch(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_exec *ex, void *out)
{
    int rc;
    if (!out)
        return TSW_EINVAL;
    if ((rc = tsw__check_params(params)) || (rc = tsw__check_exec(ex)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dtype == TSW_F32 && (rc = tsw__check_params_f32(params)))
        return rc;
    if (dim < 1)
        return TSW_ESHAPE;
    return TSW_OK;
}

int tsw_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
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
    int twed = params->measure == TSW_TWED;
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
        rc = tsw__cuda_cdist(params, dtype, dim, x, y, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_cdist(params, dtype, dim, x, y, out, &ex);
}

int tsw_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
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
    if ((rc = tsw__check_collection(dtype, dim, x, params->measure == TSW_TWED)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, 0.5 * tsw__cells(x) * tsw__cells(x) * (double)dim))) {
        rc = tsw__cuda_pdist(params, dtype, dim, x, layout, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_pdist(params, dtype, dim, x, layout, out, &ex);
}

int tsw_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
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
    int twed = params->measure == TSW_TWED;
    if ((rc = tsw__check_collection(dtype, dim, x, twed)) ||
        (rc = tsw__check_collection(dtype, dim, y, twed)))
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, tsw__cells(x) * tsw__cells(y) / (double)x->count * (double)dim))) {
        rc = tsw__cuda_paired(params, dtype, dim, x, y, out, &ex);
        if (!tsw__cuda_fallback(&ex, rc))
            return rc;
    }
#endif
    return tsw__cpu_paired(params, dtype, dim, x, y, out, &ex);
}
