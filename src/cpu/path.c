/*
 * CPU alignment kernels, baseline instruction set (path_impl.h through path_inst.h), and
 * the choice of instantiation for the dtype and the SIMD level.
 */
#define TSW__PATH_ISA base
#include "path_inst.h"
#include "kernels.h"

int tsw__cpu_dtw_path(const tsw__path_job *job, tsw_dtype dtype, int64_t *path,
                      int64_t *length, double *cost)
{
#if TSW_X86
    if (tsw__cpu_level() >= 2)
        return dtype == TSW_F32 ? tsw__path_align_avx2_f32(job, path, length, cost)
                                : tsw__path_align_avx2_f64(job, path, length, cost);
#endif
    return dtype == TSW_F32 ? tsw__path_align_base_f32(job, path, length, cost)
                            : tsw__path_align_base_f64(job, path, length, cost);
}

int tsw__cpu_subsequence(const tsw__path_job *job, tsw_dtype dtype, int64_t k,
                         tsw_match *matches, int64_t *count, int64_t *path)
{
#if TSW_X86
    if (tsw__cpu_level() >= 2)
        return dtype == TSW_F32 ? tsw__path_subseq_avx2_f32(job, k, matches, count, path)
                                : tsw__path_subseq_avx2_f64(job, k, matches, count, path);
#endif
    return dtype == TSW_F32 ? tsw__path_subseq_base_f32(job, k, matches, count, path)
                            : tsw__path_subseq_base_f64(job, k, matches, count, path);
}

int tsw__cpu_subseq_lastrow(const tsw__path_job *job, tsw_dtype dtype, int64_t from,
                            double *cost, int64_t *start)
{
#if TSW_X86
    if (tsw__cpu_level() >= 2)
        return dtype == TSW_F32 ? tsw__path_lastrow_avx2_f32(job, from, cost, start)
                                : tsw__path_lastrow_avx2_f64(job, from, cost, start);
#endif
    return dtype == TSW_F32 ? tsw__path_lastrow_base_f32(job, from, cost, start)
                            : tsw__path_lastrow_base_f64(job, from, cost, start);
}
