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
/* The elastic family has no CUDA kernels yet: its device-memory calls are refused. */
static int tsw__family_device_only(void)
{
    tsw__set_detail("the elastic family beyond DTW, TWED and soft-DTW has no CUDA kernels yet");
    return TSW_ENOTSUP;
}
#endif

int tsw_distance_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw_series *a, const tsw_series *b, void *out,
                        const tsw_exec *exec)
{
#ifdef TSWARP_WITH_CUDA
    if (params && (int)params->measure > TSW_SOFT_DTW)
        return tsw__family_device_only();
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
    if (params && (int)params->measure > TSW_SOFT_DTW)
        return tsw__family_device_only();
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
    if (params && (int)params->measure > TSW_SOFT_DTW)
        return tsw__family_device_only();
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
    if (params && (int)params->measure > TSW_SOFT_DTW)
        return tsw__family_device_only();
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
    return tsw__cuda_paired_workspace_size(params, dtype, dim, x, y, exec, bytes);
#else
    (void)params, (void)dtype, (void)dim, (void)x, (void)y, (void)exec;
    return TSW_ENODEV;
#endif
}
