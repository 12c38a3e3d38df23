/*
 * Private interface of the CPU alignment kernels (cpu/path.c, cpu/path_impl.h): the
 * dispatch layer (align.c) validates the arguments, builds a job and calls
 * tsw__cpu_dtw_path or tsw__cpu_subsequence, which pick the instantiation for the dtype
 * and the SIMD level.
 */
#ifndef TSW_CPU_PATH_H
#define TSW_CPU_PATH_H

#include "../internal.h"

#ifdef __cplusplus
extern "C" { /* cuda/path.cu shares tsw__subseq_pick */
#endif

typedef struct tsw__path_job {
    int step;              /* tsw_step                                                   */
    int cost;              /* tsw_cost                                                   */
    int subseq;            /* 1: row 0 is a start everywhere, paths end anywhere in row n-1 */
    int64_t dim, n, m;     /* a is (n, dim), b is (m, dim), of the job's dtype            */
    const void *a, *b;
    const int64_t *lo;     /* (n,) admissible columns [lo[i], hi[i]) of row i; NULL = all  */
    const int64_t *hi;
    size_t block_cells;    /* cells whose steps one stored block may hold (>= 16)        */
    int force_stored;      /* 1: one stored block for the whole grid, whatever its size   */
    int n_threads;         /* resolved, >= 1                                             */
    tsw_progress_fn progress;
    void *progress_user;
} tsw__path_job;

/* Optimal path from (0,0) to (n-1,m-1). On success path[0 .. 2 *length) holds the pairs
 * and *cost D(n-1, m-1); on failure nothing is written. TSW_ENOPATH when D(n-1,m-1) is
 * infinite (a window admitting no path), TSW_ENOMEM, TSW_ECANCELED. */
int tsw__cpu_dtw_path(const tsw__path_job *job, tsw_dtype dtype, int64_t *path,
                      int64_t *length, double *cost);

/* Subsequence DTW, best k non-overlapping matches (see tswarp.h). path may be NULL. */
int tsw__cpu_subsequence(const tsw__path_job *job, tsw_dtype dtype, int64_t k,
                         tsw_match *matches, int64_t *count, int64_t *path);

/* Subsequence DTW's matches from the last row: cost[j] = D(n-1, j) as a double (+inf where
 * no path ends), start[j] its start column; the best k (<= m) non-overlapping ones into
 * pick (tswarp.h's rule), their number into *count, path fields 0. Shared by the CPU and
 * CUDA kernels so both choose alike. TSW_ENOMEM. */
int tsw__subseq_pick(int64_t m, const double *cost, const int64_t *start, int64_t k,
                     tsw_match *pick, int64_t *count);

/* Segmental DTW's first pass over a subsequence job (subseq = 1): cost[j - from] =
 * D(n-1, j) as a double (+inf where no path ends) and start[j - from] = the start column of
 * the path ending at j (-1 where none), for j in [from, m). start may be NULL: no start
 * labels are carried (a faster pass). TSW_ENOMEM, TSW_ECANCELED. */
int tsw__cpu_subseq_lastrow(const tsw__path_job *job, tsw_dtype dtype, int64_t from,
                            double *cost, int64_t *start);

/* Instantiations: isa "base" (any x86-64 / other CPU) and "avx2" (path_avx2.c). */
#define TSW__PATH_DECL(sfx)                                                                   \
    int tsw__path_align_##sfx(const tsw__path_job *job, int64_t *path, int64_t *length,      \
                              double *cost);                                                  \
    int tsw__path_subseq_##sfx(const tsw__path_job *job, int64_t k, tsw_match *matches,      \
                               int64_t *count, int64_t *path);                                 \
    int tsw__path_lastrow_##sfx(const tsw__path_job *job, int64_t from, double *cost,       \
                                int64_t *start);
TSW__PATH_DECL(base_f64)
TSW__PATH_DECL(base_f32)
TSW__PATH_DECL(avx2_f64)
TSW__PATH_DECL(avx2_f32)
#undef TSW__PATH_DECL

#ifdef __cplusplus
}
#endif

#endif
