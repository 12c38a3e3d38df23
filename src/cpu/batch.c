/*
 * CPU batch driver: cdist and pdist, parallel over pairs with OpenMP.
 *
 * Work items are row segments: series x_i against up to TSW__TILE consecutive partners
 * (all y_j for cdist, the j > i for pdist, so each unordered pair is computed once). Items
 * are handed out dynamically; inside an item, runs of partners of equal length go to the
 * SIMD lane kernels (several pairs per instruction) and the rest to the single-pair kernel.
 * Each thread allocates its workspace once per call. The calling thread (OpenMP thread 0)
 * reports progress and turns a non-zero callback return into cancellation; every thread
 * checks the shared stop flag before each item.
 */
#include "../internal.h"

#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define TSW__TILE 64

typedef void (*tsw__pair_fn)(const tsw_params *, tsw_dtype, int64_t, const tsw__pair *,
                             void *, double *);

typedef struct tsw__job {
    const tsw_params *p;
    tsw_dtype dt;
    int64_t dim;
    const tsw_collection *x, *y; /* y == x for pdist */
    int pdist;
    int paired; /* out[k] = d(x_k, y_k) */
    tsw_pdist_layout layout;
    void *out;
    const double *self_x, *self_y; /* soft-DTW divergence: sdtw(x_i, x_i), sdtw(y_j, y_j) */
    int64_t n_items;
    int64_t items_per_row;  /* cdist */
    const int64_t *row_start; /* pdist: first item of row i, (n + 1,) */
    tsw__pair_fn kernel;
    int use_lanes;
    size_t ws_bytes;
    const tsw_exec *ex;
    int64_t total;
    /* shared state, accessed with __atomic builtins */
    int64_t done;
    int status;
} tsw__job;

static tsw__pair tsw__make_pair(const tsw_collection *x, int64_t i, const tsw_collection *y,
                                int64_t j, int64_t dim, size_t esz, int twed)
{
    tsw__pair pr = {0};
    int64_t oi = tsw__coll_off(x, i), oj = tsw__coll_off(y, j);
    pr.a = (const char *)x->values + (size_t)oi * (size_t)dim * esz;
    pr.n = tsw__coll_len(x, i);
    pr.ta = (twed && x->times) ? (const char *)x->times + (size_t)oi * esz : NULL;
    pr.b = (const char *)y->values + (size_t)oj * (size_t)dim * esz;
    pr.m = tsw__coll_len(y, j);
    pr.tb = (twed && y->times) ? (const char *)y->times + (size_t)oj * esz : NULL;
    return pr;
}

static void tsw__store(const tsw__job *job, int64_t i, int64_t j, double v)
{
    int64_t ny = job->y->count;
    if (job->dt == TSW_F32) {
        float *o = job->out, fv = (float)v;
        if (!job->pdist) {
            o[i * ny + j] = fv;
        } else if (job->layout == TSW_PDIST_FULL) {
            o[i * ny + j] = fv;
            o[j * ny + i] = fv;
        } else {
            /* condensed index of (i, j), i < j, as scipy.spatial.distance.squareform */
            o[ny * i - i * (i + 1) / 2 + (j - i - 1)] = fv;
        }
    } else {
        double *o = job->out;
        if (!job->pdist) {
            o[i * ny + j] = v;
        } else if (job->layout == TSW_PDIST_FULL) {
            o[i * ny + j] = v;
            o[j * ny + i] = v;
        } else {
            o[ny * i - i * (i + 1) / 2 + (j - i - 1)] = v;
        }
    }
}

/* Item k -> row i and partner range [j0, j1). */
static void tsw__item_range(const tsw__job *job, int64_t k, int64_t *i, int64_t *j0,
                            int64_t *j1)
{
    int64_t ny = job->y->count;
    if (!job->pdist) {
        *i = k / job->items_per_row;
        *j0 = (k % job->items_per_row) * TSW__TILE;
        *j1 = *j0 + TSW__TILE < ny ? *j0 + TSW__TILE : ny;
        return;
    }
    /* binary search for the row whose item range holds k */
    int64_t lo = 0, hi = job->x->count - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (job->row_start[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    *i = lo;
    *j0 = lo + 1 + (k - job->row_start[lo]) * TSW__TILE;
    *j1 = *j0 + TSW__TILE < ny ? *j0 + TSW__TILE : ny;
}

/* Cancellation and progress between pairs, not only between items: an item of 64 long
 * pairs can take seconds, and Ctrl-C in Python must stop a call within a second. Every
 * thread sees the stop flag; only the calling thread (tid 0) calls the user's callback.
 * Returns non-zero when the job must stop. */
static int tsw__poll(tsw__job *job, int tid, int64_t *last)
{
    return tsw__poll_parallel(job->ex, tid, last, &job->done, job->total, &job->status);
}

static void tsw__run_item(tsw__job *job, int64_t k, void *ws, int tid, int64_t *last)
{
    const int twed = job->p->measure == TSW_TWED;
    const size_t esz = tsw__dtype_size(job->dt);
    int64_t i, j0, j1;
    tsw__pair pairs[TSW__TILE];
    double vals[TSW__TILE];
    if (job->paired) { /* pairs (x_k, y_k) for k in [j0, j1) */
        i = -1;
        j0 = k * TSW__TILE;
        j1 = j0 + TSW__TILE < job->x->count ? j0 + TSW__TILE : job->x->count;
    } else {
        tsw__item_range(job, k, &i, &j0, &j1);
    }
    int64_t cnt = j1 - j0;
    for (int64_t t = 0; t < cnt; ++t)
        pairs[t] = job->paired
                       ? tsw__make_pair(job->x, j0 + t, job->y, j0 + t, job->dim, esz, twed)
                       : tsw__make_pair(job->x, i, job->y, j0 + t, job->dim, esz, twed);
    int64_t t = 0;
    while (t < cnt) {
        if (tsw__poll(job, tid, last))
            return; /* a cancelled call's output may be partly written (tswarp.h) */
        int64_t run = 1;
        if (job->use_lanes) {
            while (t + run < cnt && pairs[t + run].m == pairs[t].m &&
                   pairs[t + run].n == pairs[t].n) /* n varies in paired items */
                ++run;
            int64_t h = run > 1 ? tsw__pair_lanes(job->p, job->dt, job->dim, pairs + t, run,
                                                  ws, vals + t)
                                : 0;
            if (h > 0) {
                t += h;
                continue;
            }
        }
        job->kernel(job->p, job->dt, job->dim, &pairs[t], ws, &vals[t]);
        ++t;
    }
    for (t = 0; t < cnt; ++t) {
        double v = vals[t];
        int64_t row = job->paired ? j0 + t : i;
        if (job->self_x)
            v -= 0.5 * (job->self_x[row] + job->self_y[j0 + t]);
        v = tsw__finish(job->p, v);
        if (!job->paired)
            tsw__store(job, i, j0 + t, v);
        else if (job->dt == TSW_F32)
            ((float *)job->out)[j0 + t] = (float)v;
        else
            ((double *)job->out)[j0 + t] = v;
    }
    __atomic_fetch_add(&job->done, cnt, __ATOMIC_RELAXED);
}

static int tsw__n_threads(const tsw_exec *ex, int64_t n_items)
{
    int nt = tsw__threads(ex);
    if (n_items < nt)
        nt = (int)(n_items > 0 ? n_items : 1);
    return nt;
}

/*
 * One block holding nt workspaces of ws_bytes each (64-byte aligned slices), allocated by
 * the calling thread before the parallel region: a failure then surfaces before anything
 * is written to the output (which must stay untouched on error), and the allocations of a
 * call happen in a fixed order (allocation-failure tests fail them one at a time).
 */
static unsigned char *tsw__ws_block(size_t ws_bytes, int nt, size_t *stride)
{
    size_t total;
    *stride = (ws_bytes + 63) & ~(size_t)63;
    if (*stride < ws_bytes || tsw__mul_size(*stride, (size_t)nt, &total))
        return NULL;
    return tsw__malloc_aligned(total);
}

/* Run items [0, n_items) of job in parallel; returns the job status. */
static int tsw__run(tsw__job *job)
{
    int nt = tsw__n_threads(job->ex, job->n_items);
    size_t stride;
    unsigned char *block = tsw__ws_block(job->ws_bytes, nt, &stride);
    if (!block)
        return TSW_ENOMEM;
    job->done = 0;
    job->status = TSW_OK;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        void *ws = block + (size_t)tid * stride;
        int64_t last = tsw__now_ns();
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t k = 0; k < job->n_items; ++k) {
            if (__atomic_load_n(&job->status, __ATOMIC_RELAXED) != TSW_OK)
                continue;
            tsw__run_item(job, k, ws, tid, &last);
        }
    }
    tsw__free_aligned(block);
    if (job->status == TSW_OK && job->ex->progress &&
        job->ex->progress(job->ex->progress_user, job->total, job->total))
        job->status = TSW_ECANCELED;
    return job->status;
}

/* Self values sdtw(c_i, c_i) for the soft-DTW divergence, in parallel. */
static int tsw__self_values(tsw__job *job, const tsw_collection *c, double *self)
{
    int64_t mx = tsw__coll_maxlen(c);
    size_t ws_bytes = tsw__pair_ws_bytes(job->p, job->dt, job->dim, mx, mx);
    int nt = tsw__n_threads(job->ex, c->count);
    const size_t esz = tsw__dtype_size(job->dt);
    size_t stride;
    unsigned char *block = tsw__ws_block(ws_bytes, nt, &stride);
    if (!block)
        return TSW_ENOMEM;
    job->status = TSW_OK;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        void *ws = block + (size_t)tid * stride;
        int64_t last = tsw__now_ns();
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
        for (int64_t i = 0; i < c->count; ++i) {
            /* the self values of long series take seconds too: stay cancellable */
            if (tsw__poll(job, tid, &last))
                continue;
            tsw__pair pr = tsw__make_pair(c, i, c, i, job->dim, esz, 0);
            job->kernel(job->p, job->dt, job->dim, &pr, ws, &self[i]);
        }
    }
    tsw__free_aligned(block);
    return job->status;
}

static void tsw__job_init(tsw__job *job, const tsw_params *p, tsw_dtype dt, int64_t dim,
                          const tsw_collection *x, const tsw_collection *y, void *out,
                          const tsw_exec *ex)
{
    memset(job, 0, sizeof(*job));
    job->p = p;
    job->dt = dt;
    job->dim = dim;
    job->x = x;
    job->y = y;
    job->out = out;
    job->ex = ex;
    job->kernel = ex->impl == TSW_IMPL_REFERENCE ? tsw__pair_reference : tsw__pair_fast;
    job->use_lanes = ex->impl == TSW_IMPL_AUTO && tsw__lanes_width(p, dt, dim) > 1;
    int64_t mn = tsw__coll_maxlen(x), mm = tsw__coll_maxlen(y);
    size_t a = tsw__pair_ws_bytes(p, dt, dim, mn, mm);
    size_t b = job->use_lanes ? tsw__lanes_ws_bytes(p, dt, dim, mn, mm) : 0;
    job->ws_bytes = a > b ? a : b;
}

/* Runs a job over two collections (cdist, paired): for the soft-DTW divergence, the self
 * values of both first. */
static int tsw__run_two(tsw__job *job, const tsw_collection *x, const tsw_collection *y)
{
    double *self = NULL;
    int rc = TSW_OK;
    if (job->p->measure == TSW_SOFT_DTW && job->p->normalize) {
        self = tsw__malloc((size_t)(x->count + y->count) * sizeof(double));
        if (!self)
            return TSW_ENOMEM;
        if ((rc = tsw__self_values(job, x, self)) ||
            (rc = tsw__self_values(job, y, self + x->count)))
            goto fail_self;
        job->self_x = self;
        job->self_y = self + x->count;
    }
    rc = tsw__run(job);
fail_self:
    tsw__free(self);
    return rc;
}

int tsw__cpu_cdist(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_collection *x,
                   const tsw_collection *y, void *out, const tsw_exec *ex)
{
    tsw__job job;
    tsw__job_init(&job, p, dt, dim, x, y, out, ex);
    if (job.ws_bytes == 0)
        return TSW_EOVERFLOW;
    job.items_per_row = (y->count + TSW__TILE - 1) / TSW__TILE;
    job.n_items = x->count * job.items_per_row;
    job.total = x->count * y->count;
    return tsw__run_two(&job, x, y);
}

int tsw__cpu_pdist(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_collection *x,
                   tsw_pdist_layout layout, void *out, const tsw_exec *ex)
{
    tsw__job job;
    const int64_t n = x->count;
    int rc = TSW_OK;
    tsw__job_init(&job, p, dt, dim, x, x, out, ex);
    if (job.ws_bytes == 0)
        return TSW_EOVERFLOW;
    job.pdist = 1;
    job.layout = layout;
    job.total = n * (n - 1) / 2;

    int64_t *row_start = tsw__malloc((size_t)(n + 1) * sizeof(int64_t));
    if (!row_start)
        return TSW_ENOMEM;
    row_start[0] = 0;
    for (int64_t i = 0; i < n; ++i)
        row_start[i + 1] = row_start[i] + (n - 1 - i + TSW__TILE - 1) / TSW__TILE;
    job.row_start = row_start;
    job.n_items = row_start[n];

    double *self = NULL;
    if (p->measure == TSW_SOFT_DTW && (p->normalize || layout == TSW_PDIST_FULL)) {
        /* The diagonal of soft-DTW is not zero: sdtw(x_i, x_i) (0 for the divergence).
         * A condensed plain soft-DTW needs no self values. */
        self = tsw__malloc((size_t)n * sizeof(double));
        if (!self) {
            rc = TSW_ENOMEM;
            goto fail_rows;
        }
        if ((rc = tsw__self_values(&job, x, self)))
            goto fail_self;
        if (p->normalize) {
            job.self_x = self;
            job.self_y = self;
        }
    }
    if (job.n_items > 0 && (rc = tsw__run(&job)))
        goto fail_self;
    if (job.n_items == 0 && ex->progress && ex->progress(ex->progress_user, 0, 0)) {
        rc = TSW_ECANCELED;
        goto fail_self;
    }
    if (layout == TSW_PDIST_FULL) {
        for (int64_t i = 0; i < n; ++i) {
            double v = (self && !p->normalize) ? self[i] : 0.0;
            if (dt == TSW_F32)
                ((float *)out)[i * n + i] = (float)v;
            else
                ((double *)out)[i * n + i] = v;
        }
    }
fail_self:
    tsw__free(self);
fail_rows:
    tsw__free(row_start);
    return rc;
}

int tsw__cpu_paired(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_collection *x,
                    const tsw_collection *y, void *out, const tsw_exec *ex)
{
    tsw__job job;
    tsw__job_init(&job, p, dt, dim, x, y, out, ex);
    if (job.ws_bytes == 0)
        return TSW_EOVERFLOW;
    job.paired = 1;
    job.n_items = (x->count + TSW__TILE - 1) / TSW__TILE;
    job.total = x->count;
    return tsw__run_two(&job, x, y);
}
