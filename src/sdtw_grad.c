/*
 * Public entry points of the soft-DTW gradients (tswarp.h "Soft-DTW gradients"): every
 * argument is checked here (parameters, shapes, size overflow, and for host arrays finite
 * values) before a backend runs, so the backends assume valid input. Device AUTO is the
 * CPU for these calls.
 */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* CUDA builds run the *_device calls and device = CUDA on cuda/sdtw_grad.cu. */
#if defined(TSWARP_WITH_CUDA)
#define TSW__SDG_CUDA 1
#else
#define TSW__SDG_CUDA 0
#endif

/* The GPU kernels take Sakoe-Chiba bands; Itakura gradients are computed on the CPU. */
static int tsw__sdg_gpu_window(const tsw_params *p)
{
    if (p->window == TSW_WINDOW_ITAKURA) {
        tsw__set_detail("soft-DTW gradients with an Itakura window are computed on the CPU "
                        "only (device = CPU or AUTO)");
        return TSW_ENOTSUP;
    }
    return TSW_OK;
}

static int tsw__sdg_check_common(const tsw_params *p, tsw_dtype dtype, const tsw_exec *ex,
                                 const void *values)
{
    int rc;
    if (!values)
        return TSW_EINVAL;
    if ((rc = tsw__check_params(p)) || (rc = tsw__check_exec(ex)))
        return rc;
    if (p->measure != TSW_SOFT_DTW)
        return TSW_EPARAM;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    /* float32 computes with gamma and 1 / gamma as floats: both must be finite there */
    if (dtype == TSW_F32 && (p->gamma > FLT_MAX || p->gamma < 1.0 / FLT_MAX))
        return TSW_EPARAM;
    return TSW_OK;
}

/* One collection: pointers, lengths, offsets, sizes; finite values when check_values. */
static int tsw__sdg_check_coll(tsw_dtype dtype, int64_t dim, const tsw_collection *c,
                               int check_values)
{
    if (!c || !c->values)
        return TSW_EINVAL;
    if (c->count < 1 || (!c->lengths && c->length < 1))
        return TSW_ESHAPE;
    if (c->lengths && !c->offsets)
        return TSW_EINVAL;
    int rce = tsw__check_extent(c, dim, tsw__dtype_size(dtype));
    if (rce)
        return rce;
    for (int64_t i = 0; i < c->count; ++i) { /* every span before any read (api.c) */
        int rc0 = tsw__check_span(c, i, dim, tsw__dtype_size(dtype));
        if (rc0)
            return rc0;
    }
    for (int64_t i = 0; i < c->count; ++i) {
        int64_t len = tsw__coll_len(c, i), off = tsw__coll_off(c, i);
        size_t nv, end;
        if (tsw__mul_size((size_t)len, (size_t)dim, &nv) || nv > (size_t)INT64_MAX / 8 ||
            tsw__mul_size((size_t)off + (size_t)len, (size_t)dim, &end) ||
            end > (size_t)INT64_MAX / 8)
            return TSW_EOVERFLOW;
        if (check_values) {
            const char *v = (const char *)c->values +
                            (size_t)off * (size_t)dim * tsw__dtype_size(dtype);
            int rc = tsw__check_finite(dtype, v, (int64_t)nv);
            if (rc)
                return rc;
        }
    }
    return TSW_OK;
}

static int tsw__sdg_check(const tsw_params *p, tsw_dtype dtype, int64_t dim,
                          const tsw_collection *x, const tsw_collection *y, const void *values,
                          const tsw_exec *ex, int on_host)
{
    int rc;
    if ((rc = tsw__sdg_check_common(p, dtype, ex, values)))
        return rc;
    if (dim < 1)
        return TSW_ESHAPE;
    if (!x || !y || !x->values || !y->values)
        return TSW_EINVAL;
    if (x->count < 1 || y->count < 1 || x->count != y->count)
        return TSW_ESHAPE;
    size_t bytes;
    if (tsw__mul_size((size_t)x->count, tsw__dtype_size(dtype), &bytes))
        return TSW_EOVERFLOW;
    if ((rc = tsw__sdg_check_coll(dtype, dim, x, on_host)) ||
        (rc = tsw__sdg_check_coll(dtype, dim, y, on_host)))
        return rc;
    return TSW_OK;
}

static int tsw__sdg_check_cost(const tsw_params *p, tsw_dtype dtype, int64_t count, int64_t n,
                               int64_t m, const int64_t *lx, const int64_t *ly,
                               const void *cost, const void *values, const tsw_exec *ex,
                               int on_host)
{
    int rc;
    if ((rc = tsw__sdg_check_common(p, dtype, ex, values)))
        return rc;
    if (!cost)
        return TSW_EINVAL;
    if (p->normalize)
        return TSW_EPARAM; /* the divergence needs the series, not one cost matrix */
    if (count < 1 || n < 1 || m < 1)
        return TSW_ESHAPE;
    size_t cells;
    if (tsw__mul_size((size_t)count, (size_t)n, &cells) || tsw__mul_size(cells, (size_t)m, &cells) ||
        cells > (size_t)INT64_MAX / 8)
        return TSW_EOVERFLOW;
    for (int64_t k = 0; k < count; ++k) {
        int64_t nk = lx ? lx[k] : n, mk = ly ? ly[k] : m;
        if (nk < 1 || nk > n || mk < 1 || mk > m)
            return TSW_ESHAPE;
        if (!on_host)
            continue;
        /* only the block a pair uses must be finite: padding may hold anything */
        const char *blk = (const char *)cost + (size_t)k * (size_t)n * (size_t)m *
                                                   tsw__dtype_size(dtype);
        for (int64_t i = 0; i < nk; ++i)
            if ((rc = tsw__check_finite(dtype, blk + (size_t)i * (size_t)m * tsw__dtype_size(dtype),
                                        mk)))
                return rc;
    }
    return TSW_OK;
}

static void tsw__sdg_exec(const tsw_exec *exec, tsw_exec *ex)
{
    if (exec)
        *ex = *exec;
    else
        tsw_exec_default(ex);
}

int tsw_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_collection *x, const tsw_collection *y, void *values,
                      void *grad_x, void *grad_y, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    tsw__sdg_exec(exec, &ex);
    int rc = tsw__sdg_check(params, dtype, dim, x, y, values, &ex, 1);
    if (rc)
        return rc;
    if (ex.device == TSW_DEVICE_CUDA) {
        if ((rc = tsw__sdg_gpu_window(params)))
            return rc;
#if TSW__SDG_CUDA
        if (tsw__multi(&ex))
            return tsw__multi_sdtw_grad(params, dtype, dim, x, y, values, grad_x, grad_y, &ex);
        return tsw__cuda_soft_dtw_grad(params, dtype, dim, x, y, values, grad_x, grad_y, &ex, 0);
#else
        tsw__set_detail("this build has no CUDA soft-DTW gradients");
        return TSW_ENODEV;
#endif
    }
    return tsw__cpu_soft_dtw_grad(params, dtype, dim, x, y, values, grad_x, grad_y, &ex);
}

int tsw_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count, int64_t n,
                           int64_t m, const int64_t *lengths_x, const int64_t *lengths_y,
                           const void *cost, void *values, void *grad_cost,
                           const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    tsw__sdg_exec(exec, &ex);
    int rc = tsw__sdg_check_cost(params, dtype, count, n, m, lengths_x, lengths_y, cost, values,
                                 &ex, 1);
    if (rc)
        return rc;
    if (ex.device == TSW_DEVICE_CUDA) {
        if ((rc = tsw__sdg_gpu_window(params)))
            return rc;
#if TSW__SDG_CUDA
        return tsw__cuda_soft_dtw_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y,
                                            cost, values, grad_cost, &ex, 0);
#else
        tsw__set_detail("this build has no CUDA soft-DTW gradients");
        return TSW_ENODEV;
#endif
    }
    return tsw__cpu_soft_dtw_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y, cost,
                                       values, grad_cost, &ex);
}

#if TSW__SDG_CUDA
/* tsw_soft_dtw_grad_device on several devices: staged through host memory (device.c). The
 * gradients' host buffers start as copies of the caller's (rows outside every series stay
 * as they were). */
static int tsw__sdg_staged(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, const tsw_collection *y, void *values,
                           void *grad_x, void *grad_y, const tsw_exec *exec)
{
    const size_t esz = tsw__dtype_size(dtype);
    void *mem[4] = {NULL, NULL, NULL, NULL}, *hv = NULL, *hg[2] = {NULL, NULL};
    void *dg[2] = {grad_x, grad_y};
    size_t gb[2] = {0, 0};
    tsw_collection h[2];
    const tsw_collection *c[2] = {x, y};
    int rc = TSW_OK;
    for (int s = 0; s < 2 && !rc; ++s) {
        int64_t rows = 0;
        if ((rc = tsw__stage_rows(c[s], dim, esz, &rows)))
            break;
        gb[s] = (size_t)rows * (size_t)dim * esz;
        if ((rc = tsw__stage_in(c[s], rows, dim, esz, exec, &h[s], mem + 2 * s)))
            break;
        if (dg[s]) {
            if (!(hg[s] = tsw__stage_alloc(gb[s])))
                rc = TSW_ENOMEM;
            else
                rc = tsw__cuda_copy(exec->device_index, exec->cuda_stream, hg[s], dg[s], gb[s],
                                    0);
        }
    }
    const size_t vb = (size_t)x->count * esz;
    if (!rc && !(hv = tsw__stage_alloc(vb)))
        rc = TSW_ENOMEM;
    if (!rc) {
        tsw_exec ex = tsw__staged_exec(exec);
        rc = tsw_soft_dtw_grad(params, dtype, dim, &h[0], &h[1], hv, hg[0], hg[1], &ex);
    }
    if (!rc)
        rc = tsw__cuda_copy(exec->device_index, exec->cuda_stream, values, hv, vb, 1);
    for (int s = 0; s < 2 && !rc; ++s)
        if (dg[s])
            rc = tsw__cuda_copy(exec->device_index, exec->cuda_stream, dg[s], hg[s], gb[s], 1);
    for (int i = 0; i < 4; ++i)
        tsw__free(mem[i]);
    tsw__free(hv);
    tsw__free(hg[0]);
    tsw__free(hg[1]);
    return rc;
}
#endif

int tsw_soft_dtw_grad_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_collection *x, const tsw_collection *y, void *values,
                             void *grad_x, void *grad_y, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    tsw__sdg_exec(exec, &ex);
    ex.device = TSW_DEVICE_AUTO; /* ignored by *_device calls: they always run on the GPU */
    int rc = tsw__sdg_check(params, dtype, dim, x, y, values, &ex, 0);
    if (rc)
        return rc;
#if TSW__SDG_CUDA
    if ((rc = tsw__sdg_gpu_window(params)))
        return rc;
    if (tsw__staged_multi(&ex))
        return tsw__sdg_staged(params, dtype, dim, x, y, values, grad_x, grad_y, &ex);
    return tsw__cuda_soft_dtw_grad(params, dtype, dim, x, y, values, grad_x, grad_y, &ex, 1);
#else
    (void)grad_x, (void)grad_y;
    tsw__set_detail("this build has no CUDA soft-DTW gradients");
    return TSW_ENODEV;
#endif
}

int tsw_soft_dtw_cost_grad_device(const tsw_params *params, tsw_dtype dtype, int64_t count,
                                  int64_t n, int64_t m, const int64_t *lengths_x,
                                  const int64_t *lengths_y, const void *cost, void *values,
                                  void *grad_cost, const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    tsw__sdg_exec(exec, &ex);
    ex.device = TSW_DEVICE_AUTO;
    int rc = tsw__sdg_check_cost(params, dtype, count, n, m, lengths_x, lengths_y, cost, values,
                                 &ex, 0);
    if (rc)
        return rc;
#if TSW__SDG_CUDA
    if ((rc = tsw__sdg_gpu_window(params)))
        return rc;
    return tsw__cuda_soft_dtw_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y, cost,
                                        values, grad_cost, &ex, 1);
#else
    (void)grad_cost;
    tsw__set_detail("this build has no CUDA soft-DTW gradients");
    return TSW_ENODEV;
#endif
}

/* The workspace queries check what the calls would check, except the values (which may be
 * NULL here: a placeholder stands for them). */
int tsw_soft_dtw_grad_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                     const tsw_collection *x, const tsw_collection *y,
                                     int want_grad_x, int want_grad_y, const tsw_exec *exec,
                                     size_t *bytes)
{
    static const double placeholder;
    tsw__clear_detail();
    if (!bytes || !x || !y)
        return TSW_EINVAL;
    tsw_exec ex;
    tsw__sdg_exec(exec, &ex);
    ex.device = TSW_DEVICE_AUTO;
    tsw_collection cx = *x, cy = *y;
    cx.values = &placeholder;
    cy.values = &placeholder;
    int rc = tsw__sdg_check(params, dtype, dim, &cx, &cy, &placeholder, &ex, 0);
    if (rc)
        return rc;
#if TSW__SDG_CUDA
    if ((rc = tsw__sdg_gpu_window(params)))
        return rc;
    if (tsw__staged_multi(&ex)) {
        *bytes = 0; /* several devices: staged through host memory */
        return TSW_OK;
    }
    return tsw__cuda_soft_dtw_grad_workspace(params, dtype, dim, &cx, &cy, want_grad_x,
                                             want_grad_y, &ex, bytes);
#else
    (void)want_grad_x, (void)want_grad_y;
    tsw__set_detail("this build has no CUDA soft-DTW gradients");
    return TSW_ENODEV;
#endif
}

int tsw_soft_dtw_cost_grad_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                          int64_t count, int64_t n, int64_t m,
                                          const int64_t *lengths_x, const int64_t *lengths_y,
                                          int want_grad, const tsw_exec *exec, size_t *bytes)
{
    static const double placeholder;
    tsw__clear_detail();
    if (!bytes)
        return TSW_EINVAL;
    tsw_exec ex;
    tsw__sdg_exec(exec, &ex);
    ex.device = TSW_DEVICE_AUTO;
    int rc = tsw__sdg_check_cost(params, dtype, count, n, m, lengths_x, lengths_y, &placeholder,
                                 &placeholder, &ex, 0);
    if (rc)
        return rc;
#if TSW__SDG_CUDA
    if ((rc = tsw__sdg_gpu_window(params)))
        return rc;
    return tsw__cuda_soft_dtw_cost_grad_workspace(params, dtype, count, n, m, lengths_x,
                                                  lengths_y, want_grad, &ex, bytes);
#else
    (void)want_grad;
    tsw__set_detail("this build has no CUDA soft-DTW gradients");
    return TSW_ENODEV;
#endif
}
