/*
 * CUDA alignment paths, the entry points of internal.h: tsw__cuda_dtw_path,
 * tsw__cuda_subsequence and tsw__cuda_subseq_lastrow (called by align.c and segmental
 * DTW). The kernels and drivers are path.cuh's, instantiated per precision in path_f32.cu
 * and path_f64.cu; this file selects the device and the precision.
 */
#include <cuda_runtime.h>

#include "cuda/host.cuh"
#include "internal.h"

using tsw__cu::DeviceGuard;

extern "C" {
int tsw__cuda_dtw_path_f32(const struct tsw__path_job *job, const tsw_align_params *ap,
                           const tsw_exec *ex, int64_t *path, int64_t *length, double *cost);
int tsw__cuda_dtw_path_f64(const struct tsw__path_job *job, const tsw_align_params *ap,
                           const tsw_exec *ex, int64_t *path, int64_t *length, double *cost);
int tsw__cuda_subsequence_f32(const struct tsw__path_job *job, const tsw_exec *ex, int64_t k,
                              tsw_match *matches, int64_t *count, int64_t *path, int64_t from,
                              double *lcost, int64_t *lstart);
int tsw__cuda_subsequence_f64(const struct tsw__path_job *job, const tsw_exec *ex, int64_t k,
                              tsw_match *matches, int64_t *count, int64_t *path, int64_t from,
                              double *lcost, int64_t *lstart);
}

extern "C" int tsw__cuda_dtw_path(const struct tsw__path_job *job, const tsw_align_params *ap,
                                  tsw_dtype dtype, const tsw_exec *ex, int64_t *path,
                                  int64_t *length, double *cost)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    /* job->subseq (segmental DTW's fragment paths): row 0 free, the trace stops there */
    return dtype == TSW_F32 ? tsw__cuda_dtw_path_f32(job, ap, ex, path, length, cost)
                            : tsw__cuda_dtw_path_f64(job, ap, ex, path, length, cost);
}

extern "C" int tsw__cuda_subsequence(const struct tsw__path_job *job, tsw_dtype dtype,
                                     const tsw_exec *ex, int64_t k, tsw_match *matches,
                                     int64_t *count, int64_t *path)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    return dtype == TSW_F32
               ? tsw__cuda_subsequence_f32(job, ex, k, matches, count, path, 0, nullptr, nullptr)
               : tsw__cuda_subsequence_f64(job, ex, k, matches, count, path, 0, nullptr, nullptr);
}

extern "C" int tsw__cuda_subseq_lastrow(const struct tsw__path_job *job, tsw_dtype dtype,
                                        const tsw_exec *ex, int64_t from, double *cost,
                                        int64_t *start)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    return dtype == TSW_F32
               ? tsw__cuda_subsequence_f32(job, ex, 1, nullptr, nullptr, nullptr, from, cost, start)
               : tsw__cuda_subsequence_f64(job, ex, 1, nullptr, nullptr, nullptr, from, cost, start);
}
