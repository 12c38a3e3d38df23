/*
 * Public entry points of the alignment functions (tswarp.h "Alignment"): defaults,
 * validation in the order tsw_distance uses, the window turned into admissible columns per
 * row, the step pattern's reachability, and dispatch to the CPU kernels (cpu/path.c) or the GPU's (cuda/path.cu).
 * Every check runs before any work; outputs are written only on success.
 */
#include "common/band.h"
#include "common/elastic.h"
#include "common/path.h"
#include "internal.h"
#include "segmental.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#include <float.h>
#include <math.h>
#include <stdio.h>

#include <string.h>
#include <unistd.h>

#define TSW__MIB ((size_t)1 << 20)

void tsw_align_params_default(tsw_align_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof(*p));
    p->step = TSW_STEP_SYMMETRIC1;
    p->cost = TSW_COST_SQEUCLIDEAN;
    p->window = TSW_WINDOW_NONE;
    p->window_radius = 0;
    p->itakura_max_slope = 2.0;
    p->method = TSW_PATH_AUTO;
    p->memory_limit = 0;
}

int64_t tsw_path_max_length(int64_t n, int64_t m)
{
    if (n < 1 || m < 1 || n > INT64_MAX / 4 - m)
        return 0;
    return n + m - 1;
}

int64_t tsw_subsequence_path_max_length(int64_t n, int64_t m, int64_t k)
{
    if (n < 1 || m < 1 || k < 1 || n > INT64_MAX / 4 || m > INT64_MAX / 4)
        return 0;
    int64_t t;
    if (__builtin_mul_overflow(k, n - 1, &t) || t > INT64_MAX / 4 - m)
        return 0;
    return t + m;
}

/* Half the available physical memory, at least 1 MiB: the default for stored steps. */
static size_t tsw__auto_memory(void)
{
    long pages = -1, page = -1;
#ifdef _SC_AVPHYS_PAGES
    pages = sysconf(_SC_AVPHYS_PAGES);
#endif
    page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 256 * TSW__MIB;
    double half = 0.5 * (double)pages * (double)page;
    if (half > (double)(SIZE_MAX / 2))
        half = (double)(SIZE_MAX / 2);
    return half < (double)TSW__MIB ? TSW__MIB : (size_t)half;
}

static int tsw__check_align_params(const tsw_align_params *p)
{
    if (!p)
        return TSW_EINVAL;
    if (p->step != TSW_STEP_SYMMETRIC1 && p->step != TSW_STEP_P05 &&
        p->step != TSW_STEP_P05_QUERY)
        return TSW_EINVAL;
    if (p->method != TSW_PATH_AUTO && p->method != TSW_PATH_STORED &&
        p->method != TSW_PATH_LINEAR)
        return TSW_EINVAL;
    /* cost and window: the core's rules */
    tsw_params q;
    tsw_params_default(&q, TSW_DTW);
    q.cost = p->cost;
    q.window = p->window;
    q.window_radius = p->window_radius;
    q.itakura_max_slope = p->itakura_max_slope;
    return tsw__check_params(&q);
}

static int tsw__check_align_exec(const tsw_exec *e)
{
    int rc = tsw__check_exec(e);
    if (rc)
        return rc;
    return TSW_OK;
}

/* api.c's series check, plus the path's own limit (2 (n + m) int64 path entries). */
static int tsw__check_one(tsw_dtype dtype, int64_t dim, const tsw_series *s)
{
    if (s && s->values && s->length > INT64_MAX / 16)
        return TSW_EOVERFLOW;
    return tsw__check_series(dtype, dim, s, 0);
}

/* Shared checks of both entry points, in tsw_distance's order. */
static int tsw__check_common(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw_series *a, const tsw_series *b, const tsw_exec *ex)
{
    int rc;
    if ((rc = tsw__check_align_params(params)) || (rc = tsw__check_align_exec(ex)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dim < 1)
        return TSW_ESHAPE;
    if ((rc = tsw__check_one(dtype, dim, a)) || (rc = tsw__check_one(dtype, dim, b)))
        return rc;
    return TSW_OK;
}

/*
 * Admissible columns [lo[i], hi[i]) of every row i of a for the window (band.h). Sakoe-
 * Chiba rows run over a already. The Itakura band runs its rows over b (swap): its column
 * range [L_j, H_j) over a has both ends non-decreasing in j (kernels.h), so for row i the
 * columns j with L_j <= i < H_j are one interval [J0(i), J1(i)): J1 = the first j with
 * L_j > i, J0 = the first j with H_j > i, both non-decreasing in i (two pointers).
 */
static void tsw__window_rows(const tsw_align_params *p, int64_t n, int64_t m, int64_t *lo,
                             int64_t *hi)
{
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    if (!band.swap) {
        for (int64_t i = 0; i < n; ++i)
            tsw_band_range(&band, i, &lo[i], &hi[i]);
        return;
    }
    int64_t j0 = 0, j1 = 0, l, h;
    for (int64_t i = 0; i < n; ++i) {
        while (j0 < m && (tsw_band_range(&band, j0, &l, &h), h <= i))
            ++j0;
        while (j1 < m && (tsw_band_range(&band, j1, &l, &h), l <= i))
            ++j1;
        lo[i] = j0;
        hi[i] = j1 > j0 ? j1 : j0;
    }
}

/* The job for a call: thread count, block size, window rows (allocated into *rows). */
static int tsw__make_job(tsw__path_job *job, const tsw_align_params *params, int64_t dim,
                         const tsw_series *a, const tsw_series *b, int subseq,
                         const tsw_exec *ex, int64_t **rows)
{
    memset(job, 0, sizeof(*job));
    job->step = params->step;
    job->cost = params->cost;
    job->subseq = subseq;
    job->dim = dim;
    job->n = a->length;
    job->m = b->length;
    job->a = a->values;
    job->b = b->values;
    size_t limit = params->memory_limit ? params->memory_limit : tsw__auto_memory();
    job->block_cells = limit > SIZE_MAX / 4 ? SIZE_MAX : limit * 4;
    if (job->block_cells < 16)
        job->block_cells = 16;
    if (params->method == TSW_PATH_AUTO && params->memory_limit == 0 &&
        job->block_cells < 64 * 1024 * 4)
        job->block_cells = 64 * 1024 * 4;
    job->force_stored = params->method == TSW_PATH_STORED;
    job->n_threads = tsw__threads(ex);
    job->progress = ex->progress;
    job->progress_user = ex->progress_user;
    job->cells = (double)a->length * (double)b->length;
    *rows = NULL;
    if (params->window != TSW_WINDOW_NONE) {
        size_t bytes;
        if (tsw__mul_size((size_t)a->length, 2 * sizeof(int64_t), &bytes))
            return TSW_EOVERFLOW;
        int64_t *r = tsw__malloc(bytes);
        if (!r)
            return TSW_ENOMEM;
        tsw__window_rows(params, a->length, b->length, r, r + a->length);
        job->lo = r;
        job->hi = r + a->length;
        *rows = r;
        double band = 0;
        for (int64_t i = 0; i < a->length; ++i)
            band += (double)(r[a->length + i] - r[i]);
        job->cells = band;
        /* AUTO with a narrow window: the stored steps are kept per rectangle (n m / 4 bytes
         * for a band of n (2r + 1) cells), so blocks stay small and the recursion of the
         * linear method, which only enters the band's regions, does the rest: O(n r) time */
        if (params->method == TSW_PATH_AUTO && params->memory_limit == 0 &&
            band * 8 < (double)a->length * (double)b->length &&
            job->block_cells > 64 * 1024 * 4)
            job->block_cells = 64 * 1024 * 4;
    }
    return TSW_OK;
}

/* Infinite costs, one rule (tswarp.h "Infinite costs"): a value (tsw_distance, the cost of
 * a path) that overflows is +inf; a call that must return a path or a match has none of
 * finite cost and returns TSW_ERANGE. After a kernel found no finite end, this tells an
 * overflow (the largest local cost times the path length passes the type's range) from a
 * window that admits no path. */
static int tsw__path_overflows(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                               const tsw_series *a, const tsw_series *b)
{
    if (params->cost == TSW_COST_COSINE)
        return 0; /* local costs in [0, 2] */
    const double s = tsw__absmax(dtype, a->values, a->length * dim) +
                     tsw__absmax(dtype, b->values, b->length * dim);
    double cmax = (double)dim * s;
    if (params->cost == TSW_COST_SQEUCLIDEAN)
        cmax *= s;
    const double limit = dtype == TSW_F32 ? (double)FLT_MAX : DBL_MAX;
    /* a path has at most n + m cells (p05: fewer); a margin of 4 for the rounding */
    return !(cmax * (double)(a->length + b->length) < limit / 4);
}

static void tsw__overflow_detail(tsw_dtype dtype)
{
    tsw__set_detail("the local costs are too large for %s (the accumulated cost of every path "
                    "is +inf); rescale the series",
                    dtype == TSW_F32 ? "float32" : "float64");
}

/* The checks of a call that returns one path (tsw_dtw_path, tsw_fastdtw), in tsw_distance's
 * order, with *ex the caller's exec or the default. */
static int tsw__path_call_checks(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_series *a, const tsw_series *b, const int64_t *path,
                                 int64_t capacity, const int64_t *length, const double *cost,
                                 const tsw_exec *exec, tsw_exec *ex)
{
    int rc;
    tsw__clear_detail();
    if (exec)
        *ex = *exec;
    else
        tsw_exec_default(ex);
    if (!path || !length || !cost)
        return TSW_EINVAL;
    if ((rc = tsw__check_common(params, dtype, dim, a, b, ex)))
        return rc;
    int64_t need = tsw_path_max_length(a->length, b->length);
    if (need == 0)
        return TSW_EOVERFLOW;
    if (capacity < need)
        return TSW_EINVAL;
    return TSW_OK;
}

static int tsw__dtw_path(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                 const tsw_series *a, const tsw_series *b, int64_t *path, int64_t capacity,
                 int64_t *length, double *cost, const tsw_exec *exec)
{
    tsw_exec ex;
    int rc = tsw__path_call_checks(params, dtype, dim, a, b, path, capacity, length, cost,
                                   exec, &ex);
    if (rc)
        return rc;
    if (!tsw_path_reachable(params->step, a->length, b->length)) {
        tsw__set_detail("step pattern p05 reaches (n-1, m-1) only if m <= 2n-1 and n <= 2m-1 "
                        "(n = %lld, m = %lld)",
                        (long long)a->length, (long long)b->length);
        return TSW_ENOPATH;
    }
    tsw__path_job job;
    int64_t *rows;
    if ((rc = tsw__make_job(&job, params, dim, a, b, 0, &ex, &rows)))
        return rc;
    if (rows) {
        const int64_t n = a->length, m = b->length;
        if (!(rows[0] == 0 && rows[n] > 0) || !(rows[n - 1] <= m - 1 && rows[2 * n - 1] > m - 1)) {
            tsw__free(rows);
            tsw__set_detail("the window excludes the first or the last cell");
            return TSW_ENOPATH;
        }
    }
    rc = TSW_ENODEV;
#ifdef TSWARP_WITH_CUDA
    /* the GPU for device = CUDA, and for AUTO on large grids (the CPU when it has no
     * device or cannot hold the work); every window: the GPU reads the same rows lo/hi.
     * (Itakura was kept off the GPU after 6 of 400 H100 runs differed from the CPU: the
     * CPU was wrong, a race of its threaded forward pass, fixed in cpu/path_impl.h.) */
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, job.cells)))
        rc = tsw__cuda_dtw_path(&job, params, dtype, &ex, path, length, cost);
    if (ex.device == TSW_DEVICE_AUTO && (rc == TSW_ENODEV || rc == TSW_ENOMEM))
        rc = TSW_ENODEV;
#endif
    if (rc == TSW_ENODEV && ex.device != TSW_DEVICE_CUDA)
        rc = tsw__cpu_dtw_path(&job, dtype, path, length, cost);
    tsw__free(rows);
    if (rc == TSW_ENOPATH && tsw__path_overflows(params, dtype, dim, a, b)) {
        tsw__overflow_detail(dtype);
        rc = TSW_ERANGE;
    } else if (rc == TSW_ENOPATH) {
        tsw__set_detail("the window admits no path with this step pattern");
    }
    return rc;
}

static int tsw__subsequence_dtw(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw_series *query, const tsw_series *reference, int64_t k,
                        tsw_match *matches, int64_t *count, int64_t *path, int64_t capacity,
                        const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if (!matches || !count || k < 1)
        return TSW_EINVAL;
    if ((rc = tsw__check_common(params, dtype, dim, query, reference, &ex)))
        return rc;
    if (params->window != TSW_WINDOW_NONE)
        return TSW_EPARAM;
    if (path) {
        int64_t need = tsw_subsequence_path_max_length(query->length, reference->length, k);
        if (need == 0)
            return TSW_EOVERFLOW;
        if (capacity < need)
            return TSW_EINVAL;
    }
    if (!tsw_path_subseq_reachable(params->step, query->length, reference->length)) {
        tsw__set_detail("step pattern p05 fits a query of n points only in a reference of at "
                        "least (n + 1) / 2 points (n = %lld, m = %lld)",
                        (long long)query->length, (long long)reference->length);
        return TSW_ENOPATH;
    }
    tsw__path_job job;
    int64_t *rows;
    if ((rc = tsw__make_job(&job, params, dim, query, reference, 1, &ex, &rows)))
        return rc;
    rc = TSW_ENODEV;
#ifdef TSWARP_WITH_CUDA
    /* as tsw_dtw_path: the GPU for CUDA, and for AUTO on large grids (else the CPU) */
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, (double)query->length * (double)reference->length)))
        rc = tsw__cuda_subsequence(&job, dtype, &ex, k, matches, count, path);
    if (ex.device == TSW_DEVICE_AUTO && (rc == TSW_ENODEV || rc == TSW_ENOMEM))
        rc = TSW_ENODEV;
#endif
    if (rc == TSW_ENODEV && ex.device != TSW_DEVICE_CUDA)
        rc = tsw__cpu_subsequence(&job, dtype, k, matches, count, path);
    tsw__free(rows);
    if (rc == TSW_OK && *count == 0) {
        /* the pattern fits (checked above), so every end's cost overflowed */
        tsw__overflow_detail(dtype);
        rc = TSW_ERANGE;
    }
    return rc;
}

/* ---- segmental DTW (tswarp.h "Segmental DTW"; the work is in segmental.c) ---------- */

void tsw_segmental_params_default(tsw_segmental_params *seg)
{
    if (!seg)
        return;
    memset(seg, 0, sizeof(*seg));
    seg->variant = TSW_SEGMENTAL_WEAK;
    seg->n_fragments = 32;
    seg->n_chunks = 0;
}

int64_t tsw_segmental_path_max_length(tsw_step step, int64_t n, int64_t m, int64_t n_fragments)
{
    if (n < 1 || m < 1 || n_fragments < 1 || n_fragments > n || n > INT64_MAX / 16 ||
        m > INT64_MAX / 16)
        return 0;
    if (step != TSW_STEP_SYMMETRIC1)
        return n;
    int64_t t;
    if (__builtin_mul_overflow(n_fragments, m - 1, &t) || t > INT64_MAX / 16 - n)
        return 0;
    return n + t;
}

static int tsw__segmental_dtw(const tsw_align_params *params, const tsw_segmental_params *seg,
                      tsw_dtype dtype, int64_t dim, const tsw_series *a, const tsw_series *b,
                      int64_t *path, int64_t capacity, int64_t *length, tsw_match *segments,
                      const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if (!path || !length || !seg)
        return TSW_EINVAL;
    if (seg->variant != TSW_SEGMENTAL_NONE && seg->variant != TSW_SEGMENTAL_WEAK &&
        seg->variant != TSW_SEGMENTAL_STRICT)
        return TSW_EINVAL;
    if (seg->n_chunks < 0)
        return TSW_EPARAM;
    if ((rc = tsw__check_common(params, dtype, dim, a, b, &ex)))
        return rc;
    if (params->window != TSW_WINDOW_NONE)
        return TSW_EPARAM;
    if ((rc = tsw__segmental_check(params->step, seg->variant, a->length, b->length,
                                   seg->n_fragments)))
        return rc;
    int64_t need = tsw_segmental_path_max_length(params->step, a->length, b->length,
                                                 seg->n_fragments);
    if (need == 0)
        return TSW_EOVERFLOW;
    if (capacity < need)
        return TSW_EINVAL;
    tsw__path_job job;
    int64_t *rows;
    if ((rc = tsw__make_job(&job, params, dim, a, b, 1, &ex, &rows)))
        return rc;
    rc = TSW_ENODEV;
#ifdef TSWARP_WITH_CUDA
    if (ex.device == TSW_DEVICE_CUDA ||
        (ex.device == TSW_DEVICE_AUTO &&
         tsw__cuda_auto(&ex, 2.0 * (double)a->length * (double)b->length)))
        rc = tsw__segmental(&job, params, dtype, &ex, seg->variant, seg->n_fragments, 1, path,
                            length, segments);
    if (ex.device == TSW_DEVICE_AUTO && (rc == TSW_ENODEV || rc == TSW_ENOMEM))
        rc = TSW_ENODEV;
#endif
    if (rc == TSW_ENODEV && ex.device != TSW_DEVICE_CUDA)
        rc = tsw__segmental(&job, params, dtype, NULL, seg->variant, seg->n_fragments,
                            seg->n_chunks, path, length, segments);
    tsw__free(rows);
    return rc;
}

/* ---- the cosine cost: unit vectors in (cosine.c; api.c does the same) ------------------- */

/* unit copies of a and b when the cost is cosine and both are valid: 1 (copies made), 0
 * (call with the inputs as they are: not cosine, or invalid, which the call reports), or a
 * negative error */
static int tsw__unit_ab(const tsw_align_params *p, tsw_dtype dtype, int64_t dim,
                        const tsw_series *a, const tsw_series *b, tsw_series *ua, tsw_series *ub,
                        void **ba, void **bb)
{
    *ba = *bb = NULL;
    if (!p || p->cost != TSW_COST_COSINE || dim < 1 || (dtype != TSW_F32 && dtype != TSW_F64) ||
        tsw__check_series(dtype, dim, a, 0) || tsw__check_series(dtype, dim, b, 0))
        return 0;
    int rc = tsw__unit_series(dtype, dim, a, ua, ba);
    if (!rc)
        rc = tsw__unit_series(dtype, dim, b, ub, bb);
    if (rc) {
        tsw__free(*ba);
        tsw__free(*bb);
        *ba = *bb = NULL;
        return rc;
    }
    return 1;
}

int tsw_dtw_path(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                 const tsw_series *a, const tsw_series *b, int64_t *path, int64_t capacity,
                 int64_t *length, double *cost, const tsw_exec *exec)
{
    tsw_series ua, ub;
    void *ba, *bb;
    int u = tsw__unit_ab(params, dtype, dim, a, b, &ua, &ub, &ba, &bb);
    if (u < 0)
        return u;
    int rc = tsw__dtw_path(params, dtype, dim, u ? &ua : a, u ? &ub : b, path, capacity, length,
                           cost, exec);
    tsw__free(ba);
    tsw__free(bb);
    return rc;
}

int tsw_fastdtw(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                const tsw_series *a, const tsw_series *b, int64_t radius, int64_t *path,
                int64_t capacity, int64_t *length, double *cost, const tsw_exec *exec)
{
    tsw_exec ex;
    int rc = tsw__path_call_checks(params, dtype, dim, a, b, path, capacity, length, cost,
                                   exec, &ex);
    if (rc)
        return rc;
    if (params->step != TSW_STEP_SYMMETRIC1 || params->window != TSW_WINDOW_NONE ||
        params->cost == TSW_COST_COSINE) {
        tsw__set_detail("FastDTW takes the symmetric1 step, no window (radius is its own) and "
                        "the sqeuclidean, euclidean or abs cost");
        return TSW_EPARAM;
    }
    if (radius < 0) {
        tsw__set_detail("radius must be >= 0, got %lld", (long long)radius);
        return TSW_EPARAM;
    }
    if (ex.device == TSW_DEVICE_CUDA) {
        tsw__set_detail("FastDTW runs on the CPU only (it is a baseline: exact DTW paths of "
                        "long series are tsw_dtw_path's, on either device)");
        return TSW_ENOTSUP;
    }
    /* the kernel writes the path only once the finest level has succeeded (the coarser
     * ones go to its own buffer): every error leaves path, length and cost untouched */
    int64_t len = 0;
    double total = 0;
    rc = tsw__cpu_fastdtw(params->cost, dtype, dim, a, b, radius, path, &len, &total, &ex);
    if (rc == TSW_OK) {
        *length = len;
        *cost = dtype == TSW_F32 ? (double)(float)total : total;
    }
    return rc;
}

int tsw_elastic_path(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_series *a, const tsw_series *b, int64_t *path,
                     int64_t capacity, int64_t *length, double *value, const tsw_exec *exec)
{
    tsw__clear_detail();
    if (!params || !path || !length || !value)
        return TSW_EINVAL;
    if (!TSW_IS_FAMILY(params->measure) && params->measure != TSW_TWED &&
        params->measure != TSW_SHAPE_DTW) {
        tsw__set_detail("tsw_elastic_path takes TWED, the elastic family (TSW_WDTW .. "
                        "TSW_MSM) and TSW_SHAPE_DTW; DTW's paths are tsw_dtw_path's");
        return TSW_EPARAM;
    }
    /* the paths run on the CPU (the value too: the path and its value agree bit for bit) */
    if (exec && exec->device == TSW_DEVICE_CUDA) {
        tsw__set_detail("alignment paths of TWED and the elastic family run on the CPU only");
        return TSW_ENOTSUP;
    }
    /* every check of the pair and the parameters, and the value, as tsw_distance has them */
    double v;
    int rc = tsw_distance(params, dtype, dim, a, b, &v, exec);
    if (rc)
        return rc;
    const int64_t need = tsw_path_max_length(a->length, b->length);
    if (need == 0)
        return TSW_EOVERFLOW;
    if (capacity < need) {
        tsw__set_detail("capacity %lld < n + m - 1 = %lld", (long long)capacity, (long long)need);
        return TSW_EINVAL;
    }
    if (isinf(v)) {
        tsw__set_detail("the window admits no alignment of the two series (the value is +inf)");
        return TSW_ENOPATH;
    }
    tsw_exec ex;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    int64_t len = 0;
    if ((rc = params->measure == TSW_SHAPE_DTW
                  ? tsw__shape_path(params, dtype, dim, a, b, path, &len, &ex)
                  : tsw__cpu_elastic_path(params, dtype, dim, a, b, path, &len, &ex)))
        return rc;
    *length = len;
    *value = v;
    return TSW_OK;
}

int tsw_subsequence_dtw(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                        const tsw_series *query, const tsw_series *reference, int64_t k,
                        tsw_match *matches, int64_t *count, int64_t *path, int64_t capacity,
                        const tsw_exec *exec)
{
    tsw_series ua, ub;
    void *ba, *bb;
    int u = tsw__unit_ab(params, dtype, dim, query, reference, &ua, &ub, &ba, &bb);
    if (u < 0)
        return u;
    int rc = tsw__subsequence_dtw(params, dtype, dim, u ? &ua : query, u ? &ub : reference, k,
                                  matches, count, path, capacity, exec);
    tsw__free(ba);
    tsw__free(bb);
    return rc;
}

int tsw_segmental_dtw(const tsw_align_params *params, const tsw_segmental_params *seg,
                      tsw_dtype dtype, int64_t dim, const tsw_series *a, const tsw_series *b,
                      int64_t *path, int64_t capacity, int64_t *length, tsw_match *segments,
                      const tsw_exec *exec)
{
    tsw_series ua, ub;
    void *ba, *bb;
    int u = tsw__unit_ab(params, dtype, dim, a, b, &ua, &ub, &ba, &bb);
    if (u < 0)
        return u;
    int rc = tsw__segmental_dtw(params, seg, dtype, dim, u ? &ua : a, u ? &ub : b, path,
                                capacity, length, segments, exec);
    tsw__free(ba);
    tsw__free(bb);
    return rc;
}

/* ---- DBA: one update of a barycenter (tswarp.h, tsw_dba_step) ------------------------------ */

int tsw_dba_step(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                 const tsw_series *z, const tsw_collection *x, const double *weights,
                 int series_rows, double *total, double *valence, double *cost,
                 const tsw_exec *exec)
{
    tsw__clear_detail();
    tsw_exec ex;
    int rc;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    if (!params || !z || !x || !total || !valence || !cost)
        return TSW_EINVAL;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if ((rc = tsw__check_exec(&ex)) || (rc = tsw__check_series(dtype, dim, z, 0)) ||
        (rc = tsw__check_collection(dtype, dim, x, 0)))
        return rc;
    for (int64_t k = 0; weights && k < x->count; ++k)
        if (!(weights[k] >= 0 && weights[k] < HUGE_VAL)) {
            tsw__set_detail("weights[%lld] is %g; weights must be finite and >= 0",
                            (long long)k, weights[k]);
            return TSW_EPARAM;
        }
    const int64_t L = z->length, count = x->count;
    const size_t esz = tsw__dtype_size(dtype);
    /* each series' path in its own slice of one buffer (the paths come in parallel, the
     * sums in series order, so every thread count gives the same bits) */
    int64_t *poff = tsw__malloc((size_t)(count + 1) * sizeof(int64_t));
    int64_t *plen = tsw__malloc((size_t)count * sizeof(int64_t));
    double *pcost = tsw__malloc((size_t)count * sizeof(double));
    int64_t *cnt = tsw__malloc((size_t)L * sizeof(int64_t));
    int64_t *paths = NULL;
    if (!poff || !plen || !pcost || !cnt) {
        rc = TSW_ENOMEM;
        goto done;
    }
    poff[0] = 0;
    for (int64_t k = 0; k < count; ++k) {
        const int64_t cap = tsw_path_max_length(tsw__coll_len(x, k), L);
        if (cap == 0 || poff[k] > (INT64_MAX / 32) - cap) {
            rc = TSW_EOVERFLOW;
            goto done;
        }
        poff[k + 1] = poff[k] + cap;
    }
    if (!(paths = tsw__malloc((size_t)poff[count] * 2 * sizeof(int64_t)))) {
        tsw__set_detail("the paths of %lld series need %.3g bytes", (long long)count,
                        16.0 * (double)poff[count]);
        rc = TSW_ENOMEM;
        goto done;
    }
    /* The SYMMETRIC1 squared-Euclidean paths (DBA's) in SIMD lanes, up to `lanes` series
     * of one length a call (cpu/dba_lanes*.c: tsw_dtw_path's pairs and costs); other
     * parameters, grids whose step codes would pass 32 MiB, and any series the lanes find
     * no finite path for go through tsw_dtw_path, one series at a time. */
    const int level = tsw__cpu_level();
    int lanes = 0;
    int64_t smax = 0, ngroups = 0;
    for (int64_t k = 0; k < count; ++k)
        smax = tsw__coll_len(x, k) > smax ? tsw__coll_len(x, k) : smax;
    if (params->step == TSW_STEP_SYMMETRIC1 && params->cost == TSW_COST_SQEUCLIDEAN &&
        tsw__check_align_params(params) == TSW_OK && (double)smax * (double)L * 2 <= 32e6)
        lanes = tsw__cpu_dba_lanes(level, dtype);
    int64_t *gstart = tsw__malloc((size_t)(count + 1) * sizeof(int64_t));
    if (!gstart) {
        rc = TSW_ENOMEM;
        goto done;
    }
    for (int64_t k = 0; k < count; ++ngroups) { /* groups: runs of one length, <= lanes */
        int64_t e = k + 1;
        while (lanes && e < count && e - k < lanes && tsw__coll_len(x, e) == tsw__coll_len(x, k))
            ++e;
        gstart[ngroups] = k;
        k = e;
    }
    gstart[ngroups] = count;
    const int64_t gn = series_rows ? smax : L, gm = series_rows ? L : smax;
    int status = TSW_OK, nt = tsw__threads(&ex);
    int on_gpu = 0; /* device = CUDA: every path from the GPU's batch (cuda/dba.cu) */
    if (ex.device == TSW_DEVICE_CUDA) {
#ifdef TSWARP_WITH_CUDA
        if (params->step != TSW_STEP_SYMMETRIC1 || params->cost != TSW_COST_SQEUCLIDEAN) {
            tsw__set_detail("DBA on the GPU takes the SYMMETRIC1 step and the squared "
                            "Euclidean cost");
            rc = TSW_ENOTSUP;
        } else if ((rc = tsw__check_align_params(params)) == TSW_OK) {
            int64_t *woff = NULL, *wlo = NULL, wrows = 0;
            if (params->window != TSW_WINDOW_NONE) {
                woff = tsw__malloc(sizeof(int64_t) * (size_t)count);
                for (int64_t k = 0; woff && k < count; ++k) {
                    woff[k] = wrows;
                    wrows += series_rows ? tsw__coll_len(x, k) : L;
                }
                wlo = woff ? tsw__malloc(sizeof(int64_t) * 2 * (size_t)wrows) : NULL;
                for (int64_t k = 0; wlo && k < count; ++k) {
                    const int64_t n = series_rows ? tsw__coll_len(x, k) : L;
                    const int64_t m = series_rows ? L : tsw__coll_len(x, k);
                    tsw__window_rows(params, n, m, wlo + woff[k], wlo + wrows + woff[k]);
                }
                if (!wlo)
                    rc = TSW_ENOMEM;
            }
            if (rc == TSW_OK)
                rc = tsw__cuda_dba_paths(dtype, dim, z, x, series_rows, woff, wlo,
                                         wlo ? wlo + wrows : NULL, wrows, poff, paths, plen,
                                         pcost, &ex);
            tsw__free(woff);
            tsw__free(wlo);
        }
        if (rc != TSW_OK) {
            tsw__free(gstart);
            goto done;
        }
        on_gpu = 1;
        nt = 1;
#else
        tsw__set_detail("this build of tswarp has no CUDA backend");
        tsw__free(gstart);
        rc = TSW_ENODEV;
        goto done;
#endif
    }
    int64_t done_n = 0, last = tsw__now_ns();
    char detail[384] = "";
    if (ngroups < nt)
        nt = (int)ngroups;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
        const int tid = omp_get_thread_num();
#else
        const int tid = 0;
#endif
        tsw_exec one = ex;
        one.device = TSW_DEVICE_CPU;
        one.n_threads = 1;
        one.progress = NULL; /* (polled here, from the calling thread) */
        one.progress_user = NULL;
        const int use = lanes && !on_gpu;
        void *work = use ? tsw__malloc(tsw__cpu_dba_work_bytes(gn, gm, dim)) : NULL;
        int64_t *wrow = use && params->window != TSW_WINDOW_NONE
                            ? tsw__malloc(sizeof(int64_t) * 2 * (size_t)gn)
                            : NULL;
        if (use && (!work || (params->window != TSW_WINDOW_NONE && !wrow))) {
            int expect = TSW_OK;
            __atomic_compare_exchange_n(&status, &expect, TSW_ENOMEM, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t q = 0; q < ngroups; ++q) {
            if (__atomic_load_n(&status, __ATOMIC_RELAXED) != TSW_OK)
                continue;
            const int64_t k0 = gstart[q], k1 = gstart[q + 1];
            int fin[TSW__DBA_MAXL] = {0}; /* lanes: 1 where the lanes found the path */
            if (on_gpu) { /* the GPU's paths; the CPU says why where it found none */
                for (int64_t k = k0; k < k1; ++k)
                    fin[k - k0] = plen[k] > 0;
            } else if (lanes) {
                tsw__dba_group g;
                memset(&g, 0, sizeof(g));
                g.dim = dim;
                g.n = series_rows ? tsw__coll_len(x, k0) : L;
                g.m = series_rows ? L : tsw__coll_len(x, k0);
                g.count = (int)(k1 - k0);
                g.series_rows = series_rows != 0;
                g.z = z->values;
                if (wrow) {
                    tsw__window_rows(params, g.n, g.m, wrow, wrow + g.n);
                    g.lo = wrow;
                    g.hi = wrow + g.n;
                }
                for (int l = 0; l < g.count; ++l) {
                    g.s[l] = tsw__coll_row(x, k0 + l, dim, esz);
                    g.path[l] = paths + 2 * poff[k0 + l];
                }
                tsw__cpu_dba_paths(level, dtype, &g, work);
                for (int l = 0; l < g.count; ++l) {
                    fin[l] = g.plen[l] > 0;
                    plen[k0 + l] = g.plen[l];
                    pcost[k0 + l] = g.cost[l];
                }
            }
            for (int64_t k = k0; k < k1; ++k) {
                if (fin[k - k0])
                    continue;
                tsw_series s = {tsw__coll_row(x, k, dim, esz), tsw__coll_len(x, k), NULL};
                int64_t *p = paths + 2 * poff[k], cap = poff[k + 1] - poff[k];
                int r = series_rows ? tsw_dtw_path(params, dtype, dim, &s, z, p, cap, &plen[k],
                                                   &pcost[k], &one)
                                    : tsw_dtw_path(params, dtype, dim, z, &s, p, cap, &plen[k],
                                                   &pcost[k], &one);
                if (r != TSW_OK) {
                    int expect = TSW_OK;
                    if (__atomic_compare_exchange_n(&status, &expect, r, 0, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
                        const char *d = tsw_last_error_detail();
                        snprintf(detail, sizeof(detail), "series %lld: %s", (long long)k,
                                 d && *d ? d : tsw_strerror(r));
                    }
                    break;
                }
            }
            __atomic_fetch_add(&done_n, k1 - k0, __ATOMIC_RELAXED);
            (void)tsw__poll_parallel(&ex, tid, &last, &done_n, count, &status);
        }
        tsw__free(work);
        tsw__free(wrow);
    }
    tsw__free(gstart);
    if (status != TSW_OK) {
        rc = status;
        if (*detail)
            tsw__set_detail("%s", detail);
        goto done;
    }
    memset(total, 0, (size_t)L * (size_t)dim * sizeof(double));
    memset(valence, 0, (size_t)L * sizeof(double));
    *cost = 0;
    for (int64_t k = 0; k < count; ++k) {
        const double w = weights ? weights[k] : 1.0;
        const char *row0 = (const char *)tsw__coll_row(x, k, dim, esz);
        const int64_t *p = paths + 2 * poff[k];
        memset(cnt, 0, (size_t)L * sizeof(int64_t));
        *cost += pcost[k] * w;
        for (int64_t t = 0; t < plen[k]; ++t) {
            const int64_t r = p[2 * t + (series_rows != 0)], j = p[2 * t + (series_rows == 0)];
            ++cnt[r];
            const char *v = row0 + (size_t)j * (size_t)dim * esz;
            for (int64_t c = 0; c < dim; ++c)
                total[r * dim + c] += (dtype == TSW_F32 ? (double)((const float *)v)[c]
                                                        : ((const double *)v)[c]) * w;
        }
        for (int64_t r = 0; r < L; ++r)
            valence[r] += (double)cnt[r] * w;
    }
    if (ex.progress) /* the final report: a request to stop comes too late to matter */
        (void)ex.progress(ex.progress_user, count, count);
done:
    tsw__free(poff);
    tsw__free(plen);
    tsw__free(pcost);
    tsw__free(cnt);
    tsw__free(paths);
    return rc;
}
