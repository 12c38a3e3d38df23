/*
 * Public entry points on device memory and about the devices (tswarp.h, "CUDA"; and the
 * CPU's SIMD level): the dispatch layer's side of cuda/backend.cu. With the CUDA backend each one forwards to its
 * tsw__cuda_* twin after the checks that need no device; without it every one reports
 * TSW_ENODEV after those checks, so programs link and run the same against either build.
 */
#include "internal.h"

#include <string.h>

#ifdef TSWARP_WITH_CUDA
#define TSW__HAS_CUDA 1
#define TSW__ARCHS TSWARP_CUDA_ARCHS_STRING
#else
#define TSW__HAS_CUDA 0
#define TSW__ARCHS ""
/* The backend's twins in a build without it: no device, nothing done. */
static int tsw__no_device(void)
{
    tsw__clear_detail();
    return TSW_ENODEV;
}
#endif

/* The SIMD level the CPU kernels run at (cpu/simd.c chooses it once). */
const char *tsw_cpu_simd(void)
{
    switch (tsw__cpu_level()) {
    case 2:
        return "avx2";
    case 1:
        return "sse2";
    default:
        return "scalar";
    }
}

int tsw_has_cuda(void) { return TSW__HAS_CUDA; }

const char *tsw_cuda_archs(void) { return TSW__ARCHS; }

int tsw_cuda_device_count(int *count)
{
    if (!count)
        return TSW_EINVAL;
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_device_count(count);
#else
    *count = 0;
    return tsw__no_device();
#endif
}

int tsw_cuda_device_info(int index, tsw_cuda_device *info)
{
    if (!info)
        return TSW_EINVAL;
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_device_info(index, info);
#else
    (void)index;
    memset(info, 0, sizeof(*info));
    return tsw__no_device();
#endif
}

int tsw_cuda_versions(int *runtime, int *driver)
{
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_versions(runtime, driver);
#else
    if (runtime)
        *runtime = 0;
    if (driver)
        *driver = 0;
    return tsw__no_device();
#endif
}

int tsw_cuda_cached_bytes(int device, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_cached_bytes(device, bytes);
#else
    tsw__no_device();
    tsw__set_detail("device %d: this tswarp was built without the CUDA backend", device);
    return TSW_ENODEV;
#endif
}

int tsw_cuda_empty_cache(int device)
{
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_empty_cache(device);
#else
    tsw__no_device();
    tsw__set_detail("device %d: this tswarp was built without the CUDA backend", device);
    return TSW_ENODEV;
#endif
}

/* ---- distances of arrays in device memory ------------------------------------------------- */

#ifdef TSWARP_WITH_CUDA
/* ---- several devices for arrays in device memory (exec->n_devices >= 2) --------------------
 * Host staging: the inputs are copied to host memory (in order on the caller's stream), the
 * host-memory call computes them on the devices (multi.c: tiles, a shared queue, one host
 * thread per device, exactly as for host arrays, so the values are one device's bit for
 * bit), and the results are copied back to the caller's device. Such a call returns when
 * the results are there (cuda_async does not apply); bench/multi_gpu.py --cupy measures the
 * staging against the compute and against peer copies. */

/* The rows c's values span, every span checked without reading a value. */
int tsw__stage_rows(const tsw_collection *c, int64_t dim, size_t esz, int64_t *rows)
{
    if (!c || !c->values)
        return TSW_EINVAL;
    if (c->count < 1 || (!c->lengths && c->length < 1) || dim < 1)
        return TSW_ESHAPE;
    if (c->lengths && !c->offsets)
        return TSW_EINVAL;
    int rc = tsw__check_extent(c, dim, esz);
    if (rc)
        return rc;
    int64_t r = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        if ((rc = tsw__check_span(c, i, dim, esz)))
            return rc;
        int64_t end = tsw__coll_off(c, i) + tsw__coll_len(c, i);
        if (end > r)
            r = end;
    }
    *rows = r;
    return TSW_OK;
}

void *tsw__stage_alloc(size_t bytes)
{
    void *p = tsw__malloc(bytes ? bytes : 1);
    if (!p)
        tsw__set_detail("several devices: staging %zu bytes of device arrays in host memory "
                        "failed", bytes);
    return p;
}

/* c (device memory, spanning `rows` rows: tsw__stage_rows) as a host collection h whose
 * values (and times) live in mem[0..1]. */
int tsw__stage_in(const tsw_collection *c, int64_t rows, int64_t dim, size_t esz,
                  const tsw_exec *ex, tsw_collection *h, void **mem)
{
    int rc;
    const size_t vb = (size_t)rows * (size_t)dim * esz, tb = (size_t)rows * esz;
    *h = *c;
    if (!(mem[0] = tsw__stage_alloc(vb)) || (c->times && !(mem[1] = tsw__stage_alloc(tb))))
        return TSW_ENOMEM;
    h->values = mem[0];
    if ((rc = tsw__cuda_copy(ex->device_index, ex->cuda_stream, mem[0], c->values, vb, 0)))
        return rc;
    if (c->times) {
        h->times = mem[1];
        rc = tsw__cuda_copy(ex->device_index, ex->cuda_stream, mem[1], c->times, tb, 0);
    }
    return rc;
}

/* The host-memory call's exec for a staged call: the caller's devices, progress and
 * threads, on the GPUs, without the caller's stream, workspace or asynchrony. */
tsw_exec tsw__staged_exec(const tsw_exec *exec)
{
    tsw_exec ex = *exec;
    ex.device = TSW_DEVICE_CUDA;
    ex.cuda_stream = NULL;
    ex.cuda_workspace = NULL;
    ex.cuda_workspace_bytes = 0;
    ex.cuda_async = 0;
    return ex;
}

/* Whether exec names several devices that exist (a list or TSW_ALL_DEVICES seeing two or
 * more): else the one-device call runs, on exec->device_index. */
int tsw__staged_multi(const tsw_exec *exec)
{
    int ndev = 0;
    if (!exec || !tsw__multi(exec))
        return 0;
    if (exec->n_devices == TSW_ALL_DEVICES)
        return tsw__multi_count(exec, &ndev) == TSW_OK && ndev >= 2;
    return 1; /* a list: checked (and refused when wrong) by the host call */
}

/* op 0 cdist, 1 pdist, 2 paired of device arrays on several devices, staged. */
static int tsw__staged_batch(int op, const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_collection *x, const tsw_collection *y,
                             tsw_pdist_layout layout, void *out, const tsw_exec *exec)
{
    tsw__clear_detail();
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (!out || !x || (op != 1 && !y))
        return TSW_EINVAL;
    if (op == 1 && layout != TSW_PDIST_FULL && layout != TSW_PDIST_CONDENSED)
        return TSW_EINVAL;
    int rc = tsw__check_exec(exec);
    if (rc)
        return rc;
    const size_t esz = tsw__dtype_size(dtype);
    void *mem[4] = {NULL, NULL, NULL, NULL}, *hout = NULL;
    tsw_collection hx, hy;
    size_t elems = 0, bytes = 0;
    int64_t rx = 0, ry = 0; /* (every span checked before any copy) */
    if ((rc = tsw__stage_rows(x, dim, esz, &rx)) ||
        (op != 1 && (rc = tsw__stage_rows(y, dim, esz, &ry))))
        return rc;
    if (op == 0) {
        if (tsw__mul_size((size_t)x->count, (size_t)y->count, &elems))
            return TSW_EOVERFLOW;
    } else if (op == 1) {
        const int64_t e = tsw_pdist_size(x->count, layout);
        if (e == 0 && x->count > 1)
            return TSW_EOVERFLOW;
        elems = (size_t)e;
    } else {
        if (x->count != y->count)
            return TSW_ESHAPE;
        elems = (size_t)x->count;
    }
    if (tsw__mul_size(elems, esz, &bytes))
        return TSW_EOVERFLOW;
    if ((rc = tsw__stage_in(x, rx, dim, esz, exec, &hx, mem)) ||
        (op != 1 && (rc = tsw__stage_in(y, ry, dim, esz, exec, &hy, mem + 2))))
        goto done;
    if (!(hout = tsw__stage_alloc(bytes))) {
        rc = TSW_ENOMEM;
        goto done;
    }
    tsw_exec ex = tsw__staged_exec(exec);
    rc = op == 0   ? tsw_cdist(params, dtype, dim, &hx, &hy, hout, &ex)
         : op == 1 ? tsw_pdist(params, dtype, dim, &hx, layout, hout, &ex)
                   : tsw_paired(params, dtype, dim, &hx, &hy, hout, &ex);
    if (rc == TSW_OK && bytes)
        rc = tsw__cuda_copy(exec->device_index, exec->cuda_stream, out, hout, bytes, 1);
done:
    for (int i = 0; i < 4; ++i)
        tsw__free(mem[i]);
    tsw__free(hout);
    return rc;
}
#endif

int tsw_distance_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw_series *a, const tsw_series *b, void *out,
                        const tsw_exec *exec)
{
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_distance_device(params, dtype, dim, a, b, out, exec);
#else
    (void)params, (void)dtype, (void)dim, (void)a, (void)b, (void)out, (void)exec;
    return tsw__no_device();
#endif
}

int tsw_cdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, const tsw_collection *y, void *out,
                     const tsw_exec *exec)
{
#ifdef TSWARP_WITH_CUDA
    if (!y)
        return TSW_EINVAL;
    if (tsw__staged_multi(exec))
        return tsw__staged_batch(0, params, dtype, dim, x, y, TSW_PDIST_FULL, out, exec);
    return tsw__cuda_cdist_device(params, dtype, dim, x, y, out, exec);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)out, (void)exec;
    return tsw__no_device();
#endif
}

int tsw_pdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, tsw_pdist_layout layout, void *out,
                     const tsw_exec *exec)
{
#ifdef TSWARP_WITH_CUDA
    if (tsw__staged_multi(exec))
        return tsw__staged_batch(1, params, dtype, dim, x, NULL, layout, out, exec);
    return tsw__cuda_pdist_device(params, dtype, dim, x, layout, out, exec);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)layout, (void)out, (void)exec;
    return tsw__no_device();
#endif
}

int tsw_paired_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_collection *x, const tsw_collection *y, void *out,
                      const tsw_exec *exec)
{
#ifdef TSWARP_WITH_CUDA
    if (!y)
        return TSW_EINVAL;
    if (tsw__staged_multi(exec))
        return tsw__staged_batch(2, params, dtype, dim, x, y, TSW_PDIST_FULL, out, exec);
    return tsw__cuda_paired_device(params, dtype, dim, x, y, out, exec);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)out, (void)exec;
    return tsw__no_device();
#endif
}

/* ---- the device memory those calls need --------------------------------------------------- */

int tsw_distance_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                const tsw_series *a, const tsw_series *b,
                                const tsw_exec *exec, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
#ifdef TSWARP_WITH_CUDA
    return tsw__cuda_distance_workspace_size(params, dtype, dim, a, b, exec, bytes);
#else
    (void)params, (void)dtype, (void)dim, (void)a, (void)b, (void)exec;
    return TSW_ENODEV;
#endif
}

int tsw_cdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_collection *x, const tsw_collection *y,
                             const tsw_exec *exec, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
#ifdef TSWARP_WITH_CUDA
    if (!y)
        return TSW_EINVAL;
    if (tsw__staged_multi(exec))
        return TSW_OK; /* several devices: staged through host memory */
    return tsw__cuda_cdist_workspace_size(params, dtype, dim, x, y, exec, bytes);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)exec;
    return TSW_ENODEV;
#endif
}

int tsw_pdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_collection *x, tsw_pdist_layout layout,
                             const tsw_exec *exec, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
#ifdef TSWARP_WITH_CUDA
    if (tsw__staged_multi(exec))
        return TSW_OK; /* several devices: staged through host memory */
    return tsw__cuda_pdist_workspace_size(params, dtype, dim, x, layout, exec, bytes);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)layout, (void)exec;
    return TSW_ENODEV;
#endif
}

int tsw_paired_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                              const tsw_collection *x, const tsw_collection *y,
                              const tsw_exec *exec, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
#ifdef TSWARP_WITH_CUDA
    if (!y)
        return TSW_EINVAL;
    if (tsw__staged_multi(exec))
        return TSW_OK; /* several devices: staged through host memory */
    return tsw__cuda_paired_workspace_size(params, dtype, dim, x, y, exec, bytes);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)exec;
    return TSW_ENODEV;
#endif
}
