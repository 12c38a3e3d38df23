/*
 * Private interface of segmental DTW on the CPU (cpu/segmental.c): the dispatch layer
 * (align.c) validates the arguments, asks tsw__segmental_check for the checks that need
 * the fragment split, builds a tsw__path_job for the whole call and calls
 * tsw__cpu_segmental. The frame-level work goes through the path kernels (cpu/path.h).
 */
#ifndef TSW_CPU_SEGMENTAL_H
#define TSW_CPU_SEGMENTAL_H

#include "path.h"

/* First row of fragment f of N over n rows: floor(f n / N) (f = N gives n). */
static inline int64_t tsw__seg_row(int64_t n, int64_t n_fragments, int64_t f)
{
    return (int64_t)(((__int128)f * n) / n_fragments);
}

/* d_f: the fewest reference columns a subsequence path of an l-point fragment spans with
 * step pattern `step`: SYMMETRIC1 1 (a vertical path); the p05 geometry floor(l / 2) + 1
 * (ceil((l - 1) / 2) steps of (2,1) or (1,1), one column each). */
static inline int64_t tsw__seg_span(int step, int64_t l)
{
    return step == TSW_STEP_SYMMETRIC1 ? 1 : l / 2 + 1;
}

/* Checks that need the split, before any work: TSW_EPARAM (n_fragments out of range,
 * fragments too short for the step pattern), TSW_ENOPATH (no ordered placement can
 * exist), each with a detail. */
int tsw__segmental_check(int step, tsw_segmental variant, int64_t n, int64_t m,
                         int64_t n_fragments);

/* The whole call: job describes a (n rows), b (m columns), the step, cost, method,
 * threads and progress (job->subseq and the window are ignored). path has room for
 * tsw_segmental_path_max_length pairs; segments may be NULL. n_chunks: the caller's M
 * (0 = auto). Outputs are written only on success. */
int tsw__cpu_segmental(const tsw__path_job *job, tsw_dtype dtype, tsw_segmental variant,
                       int64_t n_fragments, int64_t n_chunks, int64_t *path, int64_t *length,
                       tsw_match *segments);

/* The same on the GPU (TSWARP_WITH_CUDA): every fragment's first pass and path by
 * cuda/path.cu (exec: the device, stream and progress), the segment DP on the host; the
 * same results as tsw__cpu_segmental. params: the method and memory_limit of the paths. */
int tsw__cuda_segmental(const tsw__path_job *job, const tsw_align_params *params,
                        tsw_dtype dtype, const tsw_exec *exec, tsw_segmental variant,
                        int64_t n_fragments, int64_t *path, int64_t *length,
                        tsw_match *segments);

#endif
