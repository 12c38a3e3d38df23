/*
 * Segmental DTW's orchestration (segmental.c), part of the dispatch layer: align.c
 * validates the arguments of tsw_segmental_dtw, asks tsw__segmental_check for the checks
 * that need the fragment split, builds a tsw__path_job for the whole call and calls
 * tsw__segmental. The frame-level work goes to one backend's path kernels (tsw__cpu_* or
 * tsw__cuda_* in internal.h); the segment DP runs on the host.
 */
#ifndef TSW_SEGMENTAL_H
#define TSW_SEGMENTAL_H

#include "internal.h"

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
 * tsw_segmental_path_max_length pairs; segments may be NULL. gpu: NULL runs every
 * frame-level pass on the CPU kernels (n_chunks: the caller's M, 0 = auto); else on the
 * GPU of gpu->device (TSWARP_WITH_CUDA builds; one chunk per fragment, the same results
 * for every M; params gives the paths' method and memory_limit). Outputs are written only
 * on success. */
int tsw__segmental(const tsw__path_job *job, const tsw_align_params *params, tsw_dtype dtype,
                   const tsw_exec *gpu, tsw_segmental variant, int64_t n_fragments,
                   int64_t n_chunks, int64_t *path, int64_t *length, tsw_match *segments);

#endif
