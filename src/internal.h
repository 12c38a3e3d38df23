/* Internal declarations shared by the dispatch layer and the backends (tsw__ prefix). */
#ifndef TSW_INTERNAL_H
#define TSW_INTERNAL_H

#include "tswarp.h"
#include "common/finish.h" /* tsw__finish: a pair's last cell -> the returned value */

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One pair, pointers at the first value of each series; ta/tb may be NULL (1..n). */
/* Cancellation inside one long computation (one pair, one DP): the kernel calls
 * tsw__cancel_poll between blocks of work (a strip of rows); at most every ~50 ms that calls
 * the exec's progress callback from the calling thread, whose non-zero return stops the
 * kernel (stopped = 1; the caller returns TSW_ECANCELED). NULL: nothing is polled (the
 * batch drivers poll between pairs themselves). */
typedef struct tsw__cancel {
    tsw_progress_fn fn;
    void *user;
    int64_t total;   /* cells of the work, reported as progress */
    const int64_t *done_ref; /* NULL, or the count to report instead of the kernel's (a
                                batch's pairs done: its total is then the pair count) */
    int64_t next_ns; /* the next poll's time */
    int stopped;
} tsw__cancel;
void tsw__cancel_init(tsw__cancel *c, const tsw_exec *ex, int64_t total);
/* CLOCK_MONOTONIC in nanoseconds: the progress callbacks' pacing (exec.c). */
int64_t tsw__now_ns(void);
/* A parallel driver's poll (the CPU batch, knn and search drivers): the calling thread
 * (tid 0) calls the progress callback at most every 50 ms since *last with *done of total,
 * and a non-zero return sets *status to TSW_ECANCELED; *done and *status are shared and
 * read atomically. Returns non-zero once *status is not TSW_OK: every thread stops. */
int tsw__poll_parallel(const tsw_exec *ex, int tid, int64_t *last, const int64_t *done,
                       int64_t total, int *status);
int tsw__cancel_poll(tsw__cancel *c, int64_t done);

typedef struct tsw__pair {
    const void *a;
    const void *ta;
    int64_t n;
    const void *b;
    const void *tb;
    int64_t m;
    tsw__cancel *cancel; /* NULL, or polled once per strip of rows (single-pair calls) */
} tsw__pair;

/* Allocation through the replaceable hooks (alloc.c). Sizes in bytes; NULL on failure or
 * on a zero size. tsw__malloc_aligned gives 64-byte alignment. */
void *tsw__malloc(size_t size);
void tsw__free(void *ptr);
void *tsw__malloc_aligned(size_t size);
void tsw__free_aligned(void *ptr);

/* Checked size arithmetic: 0 on success, TSW_EOVERFLOW when the product overflows. */
int tsw__mul_size(size_t a, size_t b, size_t *out);

/* api.c's argument checks, shared with align.c: execution options (TSW_ENODEV for a CUDA
 * device in a build without CUDA), and one series (pointer, length, size, finite values,
 * and for twed its timestamps). */
int tsw__check_exec(const tsw_exec *e);
int tsw__check_params_f32(const tsw_params *p);
int tsw__threads(const tsw_exec *ex);
/* memcpy by up to threads threads (exec.c). */
void tsw__memcpy_parallel(void *dst, const void *src, size_t bytes, int threads);
int tsw__check_extent(const tsw_collection *c, int64_t dim, size_t esz);
int tsw__check_span(const tsw_collection *c, int64_t i, int64_t dim, size_t esz);
/* The `twed` argument of the series checks is a set of flags: TSW__CHK_TIMES checks the
 * timestamps (TWED), TSW__CHK_MIN3 asks for 3 points or more (DDTW, WDDTW). */
#define TSW__CHK_TIMES 1
#define TSW__CHK_MIN3 2
static inline int tsw__series_flags(const tsw_params *p)
{
    return (p->measure == TSW_TWED ? TSW__CHK_TIMES : 0) |
           (p->measure == TSW_DDTW || p->measure == TSW_WDDTW ? TSW__CHK_MIN3 : 0);
}
int tsw__check_series(tsw_dtype dtype, int64_t dim, const tsw_series *s, int twed);
/* tsw__check_series without reading the values (a series in device memory): values set,
 * length >= 1, length * dim addressable. */
int tsw__check_series_shape(int64_t dim, const tsw_series *s);
/* A whole collection (pointers, spans, then finite values and TWED times), and a batch
 * call's params, exec, dtype, dim and output pointer (api.c). */
int tsw__check_collection(tsw_dtype dtype, int64_t dim, const tsw_collection *c, int twed);
int tsw__check_batch(const tsw_params *params, tsw_dtype dtype, int64_t dim, tsw_exec *ex,
                     void *out);
/* The elastic family (TSW_WDTW .. TSW_MSM) runs on the CPU only: TSW_ENOTSUP (with its
 * detail) for device CUDA, AUTO turned into CPU; TSW_OK for the other measures (api.c). */
int tsw__family_device(const tsw_params *params, tsw_exec *ex);
/* TSW_DEVICE_AUTO retries on the CPU when the GPU is missing or too small (api.c). */
int tsw__cuda_fallback(const tsw_exec *ex, int rc);

/* cosine.c: copies whose points are unit vectors, for the cosine cost (freed with
 * tsw__free(*buf)); the inputs must have been validated. */
int tsw__unit_series(tsw_dtype dt, int64_t dim, const tsw_series *s, tsw_series *out, void **buf);
int tsw__unit_collection(tsw_dtype dt, int64_t dim, const tsw_collection *c,
                         tsw_collection *out, void **buf);
/* Unit copies of x and of y (y NULL: none; y == x: the same copy); each buffer freed with
 * tsw__free. */
int tsw__unit_pair(tsw_dtype dtype, int64_t dim, const tsw_collection *x,
                   const tsw_collection *y, tsw_collection *ux, tsw_collection *uy,
                   void **bx, void **by);

static inline size_t tsw__dtype_size(tsw_dtype dt) { return dt == TSW_F32 ? 4 : 8; }

/*
 * Pair kernels. `ws` is scratch of at least tsw__pair_ws_bytes(params, dtype, dim, n, m)
 * bytes (aligned to 64), owned by the caller so batches allocate it once per thread.
 * *out gets the raw measure: DTW's accumulated cost (the root is applied by the caller),
 * TWED's value, soft-DTW's value (normalisation is composed by the caller).
 */
size_t tsw__pair_ws_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim, int64_t n,
                          int64_t m);
void tsw__pair_reference(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw__pair *pair, void *ws, double *out);
/* The reference that gives up once every cell of a row of its program exceeds bound (DTW
 * and TWED; +inf then): the same value bit for bit otherwise. HUGE_VAL: no bound. */
void tsw__pair_reference_bounded(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw__pair *pair, void *ws, double bound, double *out);
/* The fast single-pair path (cpu/pair_fast*.c: anti-diagonal kernel, SIMD within the pair
 * at the level tsw__cpu_level() allows); same contract and workspace size. */
void tsw__pair_fast(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw__pair *pair, void *ws, double *out);
/* The elastic family's fast kernel (cpu/family.c; tsw__pair_fast calls it for those
 * measures): as tsw__pair_fast, and +inf once the value is known to exceed bound (HUGE_VAL:
 * none), NaN when pair->cancel stopped it. ws: tsw__family_ws_bytes. */
void tsw__family_pair(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw__pair *pair, void *ws, double bound, double *out);
size_t tsw__family_ws_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim, int64_t n,
                            int64_t m);
/* Shape DTW (cpu/shape_dtw.c): one pair's value (NaN when pair->cancel stopped it, +inf when
 * the window admits no alignment); ws: tsw__shape_ws_bytes (0: too large). */
void tsw__shape_pair(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw__pair *pair, void *ws, double *out);
size_t tsw__shape_ws_bytes(const tsw_params *params, int64_t dim, int64_t n, int64_t m);
/* Shape DTW's alignment path (aeon's shape_dtw_alignment_path: the min-return path of the
 * descriptors' DTW matrix); TSW_ENOMEM, TSW_ECANCELED. */
int tsw__shape_path(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                    const tsw_series *b, int64_t *path, int64_t *length, const tsw_exec *ex);
/* aeon's compute_min_return_path over a padded (n + 1) x (m + 1) matrix of doubles
 * (cpu/reference.c; the family's paths use it too); returns the path's length. */
int64_t tsw__min_return_path(const double *mat, int64_t n, int64_t m, int64_t *path);

/*
 * SIMD across pairs (cpu/lanes*.c): `count` pairs that all have lengths (n, m), computed
 * in SIMD lanes. Returns the number of pairs it handled from the front of the list (0 when
 * the measure/options/CPU have no lane kernel); the caller computes the rest one by one.
 * ws must hold tsw__lanes_ws_bytes(...) bytes.
 */
#define TSW__MAX_LANES 32
size_t tsw__lanes_ws_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim, int64_t n,
                           int64_t m);
int tsw__lanes_width(const tsw_params *params, tsw_dtype dtype, int64_t dim);
int64_t tsw__pair_lanes(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw__pair *pairs, int64_t count, void *ws, double *out);
/* DTW: one group of count <= tsw__lanes_width pairs (one shape, one a) that abandons early
 * (knn): rowb[l] ((n + 1) doubles) bounds what rows t .. n-1 of pair l add to a path, colb[l]
 * ((m + 1), or NULL) the columns c .. m-1; out[l] is the exact value (for one channel the
 * reference's bits), or +inf for all once no lane can end at or below thr. same_a: a is the previous call's on
 * this ws. Returns count, or 0 where there is no lane kernel (the caller then computes the
 * pairs one by one). */
int64_t tsw__pair_lanes_ea(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw__pair *pairs, int64_t count, void *ws, double *out,
                           const double *const *rowb, const double *const *colb, double thr,
                           int same_a);

/* tsw_distance keeps workspaces up to this size on the stack (no allocation for short
 * series); larger ones come from the allocator. */
#define TSW__STACK_WS_BYTES 8192


/* Validation helpers (api.c). */
int tsw__check_params(const tsw_params *params);
int tsw__check_finite(tsw_dtype dtype, const void *values, int64_t count);
int tsw__check_times(tsw_dtype dtype, const void *times, int64_t length);

/* CPU batch driver (cpu/batch.c). ys == NULL means pdist over xs. */
/* FastDTW of a and b (cpu/fastdtw.c): path (from (0, 0)), its length and the accumulated
 * local cost; inputs checked by tsw_fastdtw. */
int tsw__cpu_fastdtw(tsw_cost cost, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                     const tsw_series *b, int64_t radius, int64_t *path, int64_t *length,
                     double *total, const tsw_exec *ex);
int tsw__cpu_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                   const tsw_collection *x, const tsw_collection *y, void *out,
                   const tsw_exec *exec);
int tsw__cpu_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                   const tsw_collection *x, tsw_pdist_layout layout, void *out,
                   const tsw_exec *exec);
int tsw__cpu_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw_collection *x, const tsw_collection *y, void *out,
                    const tsw_exec *exec);

/* Nearest neighbours (cpu/knn.c, cpu/search.c): tsw_envelope, tsw_lower_bound, tsw_knn and
 * tsw_search after validation (neighbors.c). tsw__spans: a window as the admissible columns
 * [rlo[i], rhi[i]) of each row i < n and rows [clo[j], chi[j]) of each column j < m. */
void tsw__spans(const tsw_params *p, int64_t n, int64_t m, int64_t *rlo, int64_t *rhi,
                int64_t *clo, int64_t *chi);
int tsw__cpu_envelope(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_series *s, int s_is_b, int64_t other_length, void *lower,
                      void *upper);
int tsw__cpu_lower_bound(const tsw_params *params, tsw_lb kind, int64_t bands, tsw_dtype dtype,
                         int64_t dim, const tsw_series *query, const tsw_collection *x,
                         double *out, const tsw_exec *exec);
int tsw__cpu_knn(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                 const tsw_collection *q, const tsw_collection *x, int64_t k, void *distance,
                 int64_t *index, const tsw_exec *exec);
int tsw__cpu_search(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw_series *query, const tsw_series *series, int znorm,
                    int64_t exclusion, int64_t k, int64_t *starts, double *distances,
                    int64_t *count, tsw_search_stats *stats, const tsw_exec *exec);
/* The candidate windows (starts) recomputed exactly against the query as
 * tsw__search_query prepared it (qz, n points, radius r), then the greedy choice: the last
 * step of tsw_search whatever found the candidates (cpu/search.c). The windows' values come
 * from series, or from windows when it is not NULL (window i, as double, at windows + i n
 * dim: a series in device memory, tsw__cuda_search_windows). */
int tsw__search_exact(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const double *qz, int64_t n, int64_t r, const tsw_series *series,
                      const double *windows, int znorm, int64_t exclusion, int64_t k,
                      const int64_t *cand, int64_t ncand, int64_t *starts, double *distances,
                      int64_t *count);
/* CUDA search (cuda/search.cu): the candidate windows of tsw_search, a superset of those
 * the exact choice can pick: every window's lower bound on the GPU, DTW of the survivors
 * of a threshold from seed windows. *cand (tsw__malloc'd, freed by the caller) receives
 * *ncand starts; stats (may be NULL) the counts. */
int tsw__cuda_search(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const double *qz, const double *qlo, const double *qhi, int64_t n,
                     int64_t r, const tsw_series *series, int znorm, int64_t exclusion,
                     int64_t k, int on_device, int64_t **cand, int64_t *ncand,
                     tsw_search_stats *stats, const tsw_exec *exec);
/* A series in device memory (tsw_search_device): TSW_ENONFINITE for a NaN or infinity among
 * its count values; the candidate windows' values copied to the host as double (ncand n dim
 * values into out) for tsw__search_exact (cuda/search.cu). */
int tsw__cuda_check_finite(tsw_dtype dtype, const void *values, int64_t count,
                           const tsw_exec *exec);
int tsw__cuda_search_windows(tsw_dtype dtype, int64_t dim, const tsw_series *series, int64_t n,
                             const int64_t *cand, int64_t ncand, double *out,
                             const tsw_exec *exec);
/* CUDA knn for DTW with a pruning bound (cuda/knn.cu): TSW_ENOTSUP outside its cases
 * (ragged collections, Itakura, the cosine cost, k > 16), where the dispatch runs the batch
 * kernels over tiles instead. */
int tsw__cuda_knn_dtw(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_collection *q, const tsw_collection *x, int64_t k,
                      void *distance, int64_t *index, const tsw_exec *exec);
/* The query as the search compares it: z-normalised (znorm) or as given, in double, and its
 * envelope under the radius r the params give; qz, qlo, qhi: (n, dim) (cpu/search.c). */
int tsw__search_query(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_series *query, int znorm, double *qz, double *qlo,
                      double *qhi, int64_t *r);

/* max |x_i| over count values of the dtype (0 for none): the scale checks of soft-DTW's
 * linear domain (cpu/) and of overflowing path costs (align.c). */
static inline double tsw__absmax(tsw_dtype dtype, const void *x, int64_t count)
{
    double mx = 0;
    if (dtype == TSW_F32) {
        const float *v = (const float *)x;
        float f = 0;
        for (int64_t i = 0; i < count; ++i)
            f = fabsf(v[i]) > f ? fabsf(v[i]) : f;
        mx = f;
    } else {
        const double *v = (const double *)x;
        for (int64_t i = 0; i < count; ++i)
            mx = fabs(v[i]) > mx ? fabs(v[i]) : mx;
    }
    return mx;
}

/* Series i of a collection. */
static inline int64_t tsw__coll_len(const tsw_collection *c, int64_t i)
{
    return c->lengths ? c->lengths[i] : c->length;
}
static inline int64_t tsw__coll_off(const tsw_collection *c, int64_t i)
{
    return c->offsets ? c->offsets[i] : i * c->length;
}
/* The longest series of a collection. */
static inline int64_t tsw__coll_maxlen(const tsw_collection *c)
{
    if (!c->lengths)
        return c->length;
    int64_t mx = 0;
    for (int64_t i = 0; i < c->count; ++i)
        mx = c->lengths[i] > mx ? c->lengths[i] : mx;
    return mx;
}
/* Series i's first value (values are (length, dim) rows of esz bytes). */
static inline const void *tsw__coll_row(const tsw_collection *c, int64_t i, int64_t dim,
                                        size_t esz)
{
    return (const char *)c->values + (size_t)tsw__coll_off(c, i) * (size_t)dim * esz;
}

/* CPU feature level (cpu/simd.c): 2 = AVX2+FMA, 1 = SSE2, 0 = none. */
int tsw__cpu_level(void);

/* ---- alignments (align.c validates and builds the job; cpu/path.c, cuda/path.cu) ------ */

typedef struct tsw__path_job {
    int step;              /* tsw_step                                                   */
    int cost;              /* tsw_cost                                                   */
    int subseq;            /* 1: row 0 is a start everywhere, paths end anywhere in row n-1 */
    int64_t dim, n, m;     /* a is (n, dim), b is (m, dim), of the job's dtype            */
    const void *a, *b;
    const int64_t *lo;     /* (n,) admissible columns [lo[i], hi[i]) of row i; NULL = all  */
    const int64_t *hi;
    double cells;          /* the window's cells (n m without one): AUTO's size of the work */
    size_t block_cells;    /* cells whose steps one stored block may hold (>= 16)        */
    int force_stored;      /* 1: one stored block for the whole grid, whatever its size   */
    int n_threads;         /* resolved, >= 1                                             */
    tsw_progress_fn progress;
    void *progress_user;
} tsw__path_job;

/* Optimal path from (0,0) to (n-1,m-1). On success path[0 .. 2 *length) holds the pairs
 * and *cost D(n-1, m-1); on failure nothing is written. TSW_ENOPATH when D(n-1,m-1) is
 * infinite (a window admitting no path), TSW_ENOMEM, TSW_ECANCELED. */
/* An elastic-family pair's alignment path by aeon's rule (cpu/reference.c; the pair and the
 * parameters checked by the caller). */
int tsw__cpu_elastic_path(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw_series *a, const tsw_series *b, int64_t *path,
                          int64_t *length, const tsw_exec *ex);
int tsw__cpu_dtw_path(const tsw__path_job *job, tsw_dtype dtype, int64_t *path,
                      int64_t *length, double *cost);

/* DBA's alignment step in SIMD lanes (cpu/dba_lanes*.c): the paths of `count` series of
 * one length against the barycenter z, each the SYMMETRIC1 squared-Euclidean path of
 * tsw_dtw_path (the same pairs and cost), the series the rows with series_rows, else z.
 * The grid is n x m (rows x columns); lo/hi its window rows (NULL: none). Out: path[l]
 * (capacity n + m - 1 pairs), plen[l], cost[l] (+inf and plen 0: no finite path, for
 * tsw_dtw_path to explain). work: tsw__cpu_dba_work_bytes(n, m, dim) bytes. */
#define TSW__DBA_MAXL 8
typedef struct tsw__dba_group {
    int64_t dim, n, m;
    int count, series_rows;
    const void *z;
    const void *s[TSW__DBA_MAXL];
    const int64_t *lo, *hi;
    int64_t *path[TSW__DBA_MAXL];
    int64_t plen[TSW__DBA_MAXL];
    double cost[TSW__DBA_MAXL];
} tsw__dba_group;
int tsw__cpu_dba_lanes(int level, tsw_dtype dtype); /* series a call at that level */
size_t tsw__cpu_dba_work_bytes(int64_t n, int64_t m, int64_t dim);
int tsw__cpu_dba_paths(int level, tsw_dtype dtype, tsw__dba_group *g, void *work);

/* Subsequence DTW, best k non-overlapping matches (see tswarp.h). path may be NULL. */
int tsw__cpu_subsequence(const tsw__path_job *job, tsw_dtype dtype, int64_t k,
                         tsw_match *matches, int64_t *count, int64_t *path);

/* Subsequence DTW's matches from the last row (matches.c): cost[j] = D(n-1, j) as a double
 * (+inf where no path ends), start[j] its start column; the best k (<= m) non-overlapping
 * ones into pick (tswarp.h's rule), their number into *count, path fields 0. Shared by the
 * CPU and CUDA kernels so both choose alike. TSW_ENOMEM. */
int tsw__subseq_pick(int64_t m, const double *cost, const int64_t *start, int64_t k,
                     tsw_match *pick, int64_t *count);

/* Segmental DTW's first pass over a subsequence job (subseq = 1): cost[j - from] =
 * D(n-1, j) as a double (+inf where no path ends) and start[j - from] = the start column of
 * the path ending at j (-1 where none), for j in [from, m). start may be NULL: no start
 * labels are carried (a faster pass). TSW_ENOMEM, TSW_ECANCELED. */
int tsw__cpu_subseq_lastrow(const tsw__path_job *job, tsw_dtype dtype, int64_t from,
                            double *cost, int64_t *start);


/*
 * CUDA backend (cuda/backend.cu), built with TSWARP_WITH_CUDA. Host-memory entry points
 * called by api.c after validation; they copy inputs in, compute, copy results out.
 * TSW_ENODEV when no usable device exists (api.c then falls back to the CPU for
 * TSW_DEVICE_AUTO).
 */
#ifdef TSWARP_WITH_CUDA
int tsw__cuda_distance(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                       const tsw_series *a, const tsw_series *b, double *out,
                       const tsw_exec *exec);
int tsw__cuda_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw_collection *x, const tsw_collection *y, void *out,
                    const tsw_exec *exec);
int tsw__cuda_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw_collection *x, tsw_pdist_layout layout, void *out,
                    const tsw_exec *exec);
int tsw__cuda_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, const tsw_collection *y, void *out,
                     const tsw_exec *exec);
/* The public device entry points' twins (device.c forwards after its null checks). */
/* DBA's alignment step on the GPU (cuda/dba.cu): the paths, lengths and costs of every
 * series as tsw__cpu_dba_paths gives them (plen 0, cost +inf: no finite path), into the
 * caller's buffers (path k at pairs poff[k]); the window rows of series k at woff[k] in
 * wlo/whi (wrows in all; woff NULL: no window). TSW_ENOTSUP for grids of more rows than
 * its shared memory holds. */
int tsw__cuda_dba_paths(tsw_dtype dtype, int64_t dim, const tsw_series *z,
                        const tsw_collection *x, int series_rows, const int64_t *woff,
                        const int64_t *wlo, const int64_t *whi, int64_t wrows,
                        const int64_t *poff, int64_t *paths, int64_t *plen, double *pcost,
                        const tsw_exec *ex);
int tsw__cuda_device_count(int *count);
int tsw__cuda_device_info(int index, tsw_cuda_device *info);
int tsw__cuda_versions(int *runtime, int *driver);
int tsw__cuda_cached_bytes(int device, size_t *bytes);
int tsw__cuda_empty_cache(int device);
int tsw__cuda_copy(int device, void *stream, void *dst, const void *src, size_t bytes,
                   int to_device);
int tsw__cuda_distance_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                              const tsw_series *a, const tsw_series *b, void *out,
                              const tsw_exec *exec);
int tsw__cuda_cdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, const tsw_collection *y, void *out,
                           const tsw_exec *exec);
int tsw__cuda_pdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, tsw_pdist_layout layout, void *out,
                           const tsw_exec *exec);
int tsw__cuda_paired_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_collection *x, const tsw_collection *y, void *out,
                            const tsw_exec *exec);
int tsw__cuda_distance_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                      const tsw_series *a, const tsw_series *b,
                                      const tsw_exec *exec, size_t *bytes);
int tsw__cuda_cdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                   const tsw_collection *x, const tsw_collection *y,
                                   const tsw_exec *exec, size_t *bytes);
int tsw__cuda_pdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                   const tsw_collection *x, tsw_pdist_layout layout,
                                   const tsw_exec *exec, size_t *bytes);
int tsw__cuda_paired_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                    const tsw_collection *x, const tsw_collection *y,
                                    const tsw_exec *exec, size_t *bytes);
/* 1 when TSW_DEVICE_AUTO should take the GPU for `cells` DP cells in all. */
int tsw__cuda_auto(const tsw_exec *exec, double cells);
/* Alignment path on the GPU (cuda/path.cu), for align.c after its checks: the job above
 * (host arrays), the same path, length and cost as tsw__cpu_dtw_path. */
int tsw__cuda_dtw_path(const struct tsw__path_job *job, const tsw_align_params *params,
                       tsw_dtype dtype, const tsw_exec *exec, int64_t *path, int64_t *length,
                       double *cost);
/* Subsequence DTW on the GPU (cuda/path.cu), for align.c after its checks: the same
 * matches, costs and paths as tsw__cpu_subsequence (TSW_ENOMEM when the grid's stored codes,
 * n m / 4 bytes, do not fit the device). */
int tsw__cuda_subsequence(const struct tsw__path_job *job, tsw_dtype dtype,
                          const tsw_exec *exec, int64_t k, tsw_match *matches, int64_t *count,
                          int64_t *path);
/* Segmental DTW's first pass on the GPU: tsw__cpu_subseq_lastrow's outputs. */
int tsw__cuda_subseq_lastrow(const struct tsw__path_job *job, tsw_dtype dtype,
                             const tsw_exec *exec, int64_t from, double *cost, int64_t *start);
#endif

/* Soft-DTW gradients (sdtw_grad.c validates, then calls a backend). CPU: cpu/sdtw_grad.c.
 * CUDA (cuda/sdtw_grad.cu): on_device = 1 for the *_device entry points (every array in
 * device memory, exec->cuda_stream), 0 for host arrays copied in and out. */
int tsw__cpu_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, const tsw_collection *y, void *values,
                           void *grad_x, void *grad_y, const tsw_exec *exec);
int tsw__cpu_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count,
                                int64_t n, int64_t m, const int64_t *lengths_x,
                                const int64_t *lengths_y, const void *cost, void *values,
                                void *grad_cost, const tsw_exec *exec);
#ifdef TSWARP_WITH_CUDA
int tsw__cuda_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_collection *x, const tsw_collection *y, void *values,
                            void *grad_x, void *grad_y, const tsw_exec *exec, int on_device);
int tsw__cuda_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count,
                                 int64_t n, int64_t m, const int64_t *lengths_x,
                                 const int64_t *lengths_y, const void *cost, void *values,
                                 void *grad_cost, const tsw_exec *exec, int on_device);
/* Soft-DTW values of the pairs (x_k, y_k) on the gradient wavefront kernel's value-only
 * float32 variant (cuda/sdtw_wf.cuh), for the paired calls of cuda/backend.cu: TSW_ENOTSUP,
 * before anything is done, when that kernel does not cover the call (then the many-pairs
 * engine runs it). The inputs are validated by the caller; query: the workspace size only. */
int tsw__cuda_soft_dtw_paired_wf(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_collection *x, const tsw_collection *y,
                                 void *values, const tsw_exec *exec, int on_device,
                                 size_t *query);
/* Bytes of device memory the *_device call needs when given a workspace (cuda/sdtw_grad.cu). */
int tsw__cuda_soft_dtw_grad_workspace(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                      const tsw_collection *x, const tsw_collection *y,
                                      int want_grad_x, int want_grad_y, const tsw_exec *exec,
                                      size_t *bytes);
int tsw__cuda_soft_dtw_cost_grad_workspace(const tsw_params *params, tsw_dtype dtype,
                                           int64_t count, int64_t n, int64_t m,
                                           const int64_t *lengths_x, const int64_t *lengths_y,
                                           int want_grad, const tsw_exec *exec, size_t *bytes);
#endif

/* Shapelets on the GPU (cuda/shapelet.cu) for cpu/shapelet.c, which validates and
 * standardises (its shp_data: series i has z[off[i] ..], P/Q[off[i] + i ..] (len + 1 prefix
 * sums), run[off[i] ..] run lengths). The GPU computes what the CPU fast path and its order
 * line compute, with the same operations in the same order, so the results are identical. */
typedef struct tsw__shp_gpu_data {
    int64_t count, rows;
    const int64_t *off, *len, *run;
    const double *z, *P, *Q; /* z (rows,), P and Q (rows + count,) */
    int raw;                 /* not z-normalised (tsw_shapelet_params.raw) */
} tsw__shp_gpu_data;

typedef struct tsw__shp_gpu_job {
    tsw__shp_gpu_data d;
    const int64_t *sub; /* (ns,) searched rows: ng groups of gd phases, group g rows g gd .. */
    const int32_t *lab; /* (ng,) the groups' labels */
    int64_t ns, ng, gd, minl, maxl, step, nlen;
    int64_t k0, k1; /* candidates of the rows sub[k0 .. k1) only (several GPUs split them);
                       every candidate is still ranked on all ns rows */
    int C;
    const int64_t *total; /* (C,) class counts of the groups */
    double nent;          /* tsw_shp_nentropy(total) */
    const double *xlogx;  /* (ng + 1,) tsw_shp_xlogx(0 .. ng), the host's (no device log) */
    int logic;            /* tsw_shapelet_logic */
    const double *partner; /* (ng,) or NULL */
    /* one-vs-rest: each candidate's order line is its series' class against the rest, with
     * the two-class counts btot (2 C) and their entropies bnent (C) (cpu/shapelet.c) */
    int ovr;
    const int64_t *btot;
    const double *bnent;
} tsw__shp_gpu_job;

/* The best split of one candidate (tsw_shp_best_split's outputs). */
typedef struct tsw__shp_split {
    double gain, gap, threshold;
    int64_t found;
} tsw__shp_split;

/* Receives the candidates of n items: items[4 t ..] = (k, s, nl, c0), series sub[k] at start
 * s with lengths min_length + li step, li < nl, whose splits are res[c0 + li]. A non-zero
 * return stops the run with that status. */
typedef int (*tsw__shp_visit)(void *ctx, int64_t n, const int64_t *items,
                              const tsw__shp_split *res);

#ifdef TSWARP_WITH_CUDA
/* Every item (k, s) with at least one length, in order (k, then s), chunk after chunk. */
int tsw__cuda_shapelet_run(const tsw__shp_gpu_job *job, const tsw_exec *exec,
                           tsw__shp_visit visit, void *ctx);
/* tsw_shapelet_features' fast path: dist/pos/count (X count, S count); thresholds and
 * count both NULL or both given. */
int tsw__cuda_shapelet_distances(const tsw__shp_gpu_data *S, const double *thresholds,
                                 const tsw__shp_gpu_data *X, double *dist, int64_t *pos,
                                 int64_t *count, const tsw_exec *exec);
#endif

/* ---- several GPUs in one call (multi.c) ---------------------------------------------- */
#define TSW__MAX_DEVICES 64

/* A caller's own work on several GPUs (multi.c): nitems items of weights weight[i] cut
 * into consecutive tiles of about equal weight (eight a device, as the row tiles); tile
 * [i0, i1) runs as fn(user, i0, i1, slot, ex) on one host thread per device, slot the
 * thread's index (0 .. ndev - 1: per-device state), ex that device's exec, whose progress
 * callback takes the tile's own (done, total) and returns nonzero when the call must stop;
 * a tile's weight is its share of the caller's progress. The first failure stops the
 * others and is the call's status. */
typedef int (*tsw__multi_fn)(void *user, int64_t i0, int64_t i1, int slot,
                             const tsw_exec *ex);
int tsw__multi_tiles(int64_t nitems, const double *weight, tsw__multi_fn fn, void *user,
                     const tsw_exec *ex);
/* The number of devices exec names (checked to exist). */
int tsw__multi_count(const tsw_exec *ex, int *ndev);

/* Whether exec asks for several devices (n_devices >= 2 or TSW_ALL_DEVICES). */
static inline int tsw__multi(const tsw_exec *ex)
{
    return ex->n_devices >= 2 || ex->n_devices == TSW_ALL_DEVICES;
}

/* While a device computes a tile of a call on several devices, the whole call's batch (pairs
 * and longest series); 0 and 0 elsewhere. The CUDA kernels whose choice depends on the batch
 * (soft-DTW's float32 wavefront kernel against the thread-per-row one) decide with it, so a
 * tile keeps the bits the one-device call gives. Raises *count and *max_len to it. */
void tsw__batch_hint(int64_t *count, int64_t *max_len);

#ifdef TSWARP_WITH_CUDA
/* Several devices for arrays in device memory (device.c): host staging. Whether exec names
 * several devices; the host call's exec (no stream, workspace or asynchrony); the rows c
 * spans (every span checked, nothing read); a host buffer (the detail set when there is
 * none); c, of those rows, copied to host memory (mem[0] values, mem[1] times, the caller
 * frees them) as the host collection h, in order on exec's stream. */
int tsw__staged_multi(const tsw_exec *exec);
tsw_exec tsw__staged_exec(const tsw_exec *exec);
int tsw__stage_rows(const tsw_collection *c, int64_t dim, size_t esz, int64_t *rows);
void *tsw__stage_alloc(size_t bytes);
int tsw__stage_in(const tsw_collection *c, int64_t rows, int64_t dim, size_t esz,
                  const tsw_exec *ex, tsw_collection *h, void **mem);
#endif

#ifdef TSWARP_WITH_CUDA
int tsw__multi_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, const tsw_collection *y, void *out,
                     const tsw_exec *ex);
/* tsw_soft_dtw_grad's pairs cut into tiles over the devices (the series must not share
 * rows: each tile writes its own series' gradient rows) */
int tsw__multi_sdtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw_collection *x, const tsw_collection *y, void *values,
                         void *grad_x, void *grad_y, const tsw_exec *ex);
int tsw__multi_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, tsw_pdist_layout layout, void *out,
                     const tsw_exec *ex);
int tsw__multi_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_collection *x, const tsw_collection *y, void *out,
                      const tsw_exec *ex);
/* knn_one: the one-device knn of neighbors.c, run on each device's block of queries. */
typedef int (*tsw__knn_fn)(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *q, const tsw_collection *x, int64_t k,
                           void *distance, int64_t *index, const tsw_exec *ex);
int tsw__multi_search(const tsw_params *params, tsw_dtype dtype, int64_t dim, const double *qz,
                      const double *qlo, const double *qhi, int64_t n, int64_t r,
                      const tsw_series *series, int znorm, int64_t exclusion, int64_t k,
                      int64_t **cand, int64_t *ncand, tsw_search_stats *stats,
                      const tsw_exec *ex);
int tsw__multi_knn(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                   const tsw_collection *q, const tsw_collection *x, int64_t k, void *distance,
                   int64_t *index, const tsw_exec *ex, tsw__knn_fn knn_one);
#endif

/* Thread-local detail of the last failure (api.c); printf-like. */
void tsw__set_detail(const char *fmt, ...);
void tsw__clear_detail(void);

#ifdef __cplusplus
}
#endif

#endif
