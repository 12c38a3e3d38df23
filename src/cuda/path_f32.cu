/*
 * The alignment path kernels of path.cuh instantiated for float inputs: the forward pass, the
 * backtrace and subsequence DTW of one precision (path.cu picks the precision).
 */
#include "cuda/path.cuh"

extern "C" int tsw__cuda_dtw_path_f32(const struct tsw__path_job *job,
                                      const tsw_align_params *ap, const tsw_exec *ex,
                                      int64_t *path, int64_t *length, double *cost)
{
    return path_dispatch<float>(job, ap, ex, path, length, cost);
}

extern "C" int tsw__cuda_subsequence_f32(const struct tsw__path_job *job, const tsw_exec *ex,
                                         int64_t k, tsw_match *matches, int64_t *count,
                                         int64_t *path, int64_t from, double *lcost,
                                         int64_t *lstart)
{
    return subseq_dispatch<float>(job, ex, k, matches, count, path, from, lcost, lstart);
}
