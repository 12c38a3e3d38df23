/*
 * Several GPUs in one call (tsw_exec.n_devices, tsw_exec.devices): cdist, pdist, paired and
 * knn over host memory, their work cut into tiles that one host thread per device takes
 * from a shared queue.
 *
 * This is dispatch, above the backends: each tile is an ordinary one-device CUDA call
 * (tsw__cuda_cdist, tsw__cuda_pdist, tsw__cuda_paired, the one-device knn) on a view of the
 * collections, so a tile's values are the ones one GPU gives, bit for bit, and each device
 * keeps its own memory pool, streams and error handling.
 *
 * Tiles: cdist, paired and knn cut the rows of x (of q) into blocks of about equal cells (the
 * sum of the series' lengths; ragged collections balance by work, not by count); pdist cuts
 * x into blocks and takes each block pair of the upper triangle once (the diagonal blocks by
 * pdist, the others by cdist, written with their mirror: a finisher thread copies a tile
 * into the matrix while its device computes the next tile). There are about eight tiles a
 * device, ordered by cells, largest first, so that the queue ends with small tiles and the
 * devices finish together.
 *
 * The calling thread waits: every 10 ms it checks whether the devices are done and, at most
 * every 50 ms, calls the caller's progress callback with the pairs done on all devices
 * (summed from the devices' own progress reports). A nonzero return stops every device
 * (their one-device calls poll a shared flag through their progress callbacks, every 50 ms),
 * and so does the first device that fails: its status and detail become the call's.
 */
#include "internal.h"

static _Thread_local int64_t tsw__hint_count, tsw__hint_len;

void tsw__batch_hint(int64_t *count, int64_t *max_len)
{
    if (*count < tsw__hint_count)
        *count = tsw__hint_count;
    if (*max_len < tsw__hint_len)
        *max_len = tsw__hint_len;
}

#ifdef TSWARP_WITH_CUDA

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct tsw__mjob tsw__mjob;
typedef int (*tsw__tile_fn)(tsw__mjob *job, int64_t tile, const tsw_exec *ex);

struct tsw__mjob {
    const tsw_params *params;
    tsw_dtype dtype;
    int64_t dim;
    const tsw_collection *x, *y;
    void *out;
    void *gx, *gy; /* soft-DTW gradients: laid out like x's and y's values, or NULL */
    int64_t *index;
    int64_t k;
    tsw_pdist_layout layout;
    tsw__knn_fn knn_one;
    tsw__tile_fn fn;
    tsw__multi_fn ufn; /* a caller's own tiles (tsw__multi_tiles) */
    void *user;
    struct tsw__mworker *workers;
    const tsw_exec *caller;
    /* tiles */
    int64_t *cut;       /* block b of rows: [cut[b], cut[b + 1]) */
    int64_t nblocks;
    int64_t (*tile)[2]; /* block pair (I, J) of each tile (cdist, paired, knn: J unused) */
    double *pairs;      /* each tile's pairs (progress units) */
    int64_t ntiles;
    double total_pairs;
    int64_t hint_count, hint_len; /* the whole call's batch (tsw__batch_hint) */
    int lost_device; /* TSWARP_FAULT_DEVICE_LOST (tests): this device fails after a tile */
    /* search: the prepared query, the series, and the candidates gathered (under lock) */
    const double *qz, *qlo, *qhi;
    int64_t qn, r, excl;
    const tsw_series *series;
    int znorm;
    int64_t *cand, ncand, cap;
    tsw_search_stats st;
    /* the queue and the state */
    int64_t next;   /* atomic */
    int stop;       /* atomic: a device failed or the caller cancelled */
    int canceled;   /* the caller's progress returned nonzero */
    int finished;   /* atomic: threads done */
    pthread_mutex_t lock;
    double done_pairs; /* finished tiles (under lock) */
    int rc;            /* the first failure (under lock) */
    char detail[512];
};

struct tsw__mworker {
    tsw__mjob *job;
    int device;
    double tile_pairs; /* the current tile's pairs */
    double partial;    /* of them, done (under the job's lock) */
    pthread_t thread;
    /* pdist: a tile's values land in buf[which] (reused, two a device); the copy into the
     * caller's matrix runs in a finisher thread while the device computes the next tile */
    char *buf[2];
    size_t cap[2];
    int which;
    int fin_on;     /* a finisher was started and not yet joined */
    pthread_t fin;
    int64_t fin_tile;
    const char *fin_src;
};
typedef struct tsw__mworker tsw__mworker;

/* ---- tiles ---------------------------------------------------------------------------------- */

static int64_t tsw__len(const tsw_collection *c, int64_t i)
{
    return c->lengths ? c->lengths[i] : c->length;
}

/* A view of series [i0, i1) of c. */
static void tsw__view(const tsw_collection *c, int64_t i0, int64_t i1, int64_t dim,
                      size_t esz, tsw_collection *v)
{
    *v = *c;
    v->count = i1 - i0;
    if (c->offsets) {
        v->offsets = c->offsets + i0; /* row offsets into the same values */
    } else {
        size_t shift = (size_t)i0 * (size_t)c->length;
        v->values = (const char *)c->values + shift * (size_t)dim * esz;
        if (c->times)
            v->times = (const char *)c->times + shift * esz;
    }
    if (c->lengths)
        v->lengths = c->lengths + i0;
}

/* Cut n items of weights w into at most nb (>= 1, <= n) consecutive blocks of about equal
 * weight: block b is [cut[b], cut[b + 1]), cut has nb + 1 entries. Returns the blocks. */
static int64_t tsw__cut_weights(const double *w, int64_t n, int64_t nb, int64_t *cut)
{
    double total = 0;
    for (int64_t i = 0; i < n; ++i)
        total += w[i];
    int64_t b = 0;
    double acc = 0;
    cut[0] = 0;
    for (int64_t i = 0; i < n && b < nb - 1; ++i) {
        acc += w[i];
        /* close block b once it holds its share, leaving an item for each block after it */
        if (acc >= total * (double)(b + 1) / (double)nb && n - (i + 1) >= nb - (b + 1))
            cut[++b] = i + 1;
    }
    cut[b + 1] = n;
    return b + 1;
}

/* Cut c's count series into nb blocks of about equal cells (lengths; with a second
 * collection's lengths added series by series for paired). */
static int tsw__cut(tsw__mjob *job, const tsw_collection *c, const tsw_collection *pair,
                    int64_t nb)
{
    if (nb > c->count)
        nb = c->count;
    if (nb < 1)
        nb = 1;
    job->cut = tsw__malloc((size_t)(nb + 1) * sizeof(int64_t));
    double *w = tsw__malloc((size_t)(c->count > 0 ? c->count : 1) * sizeof(double));
    if (!job->cut || !w) {
        tsw__free(w);
        return TSW_ENOMEM;
    }
    for (int64_t i = 0; i < c->count; ++i)
        w[i] = (double)tsw__len(c, i) + (pair ? (double)tsw__len(pair, i) : 0.0);
    job->nblocks = tsw__cut_weights(w, c->count, nb, job->cut);
    tsw__free(w);
    return TSW_OK;
}

static double tsw__block_cells(const tsw_collection *c, int64_t i0, int64_t i1)
{
    double s = 0;
    for (int64_t i = i0; i < i1; ++i)
        s += (double)tsw__len(c, i);
    return s;
}

typedef struct {
    double cells;
    int64_t i, j;
    double pairs;
} tsw__tinfo;

static int tsw__i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

static int tsw__tinfo_cmp(const void *pa, const void *pb)
{
    const tsw__tinfo *a = pa, *b = pb;
    if (a->cells != b->cells)
        return a->cells > b->cells ? -1 : 1;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

/* The tiles from the blocks: one per block, or each (I, J) with I <= J (pdist); largest
 * first. */
static int tsw__tiles(tsw__mjob *job, int triangle)
{
    int64_t nb = job->nblocks;
    int64_t nt = triangle ? nb * (nb + 1) / 2 : nb;
    tsw__tinfo *t = tsw__malloc((size_t)nt * sizeof(tsw__tinfo));
    job->tile = tsw__malloc((size_t)nt * sizeof(*job->tile));
    job->pairs = tsw__malloc((size_t)nt * sizeof(double));
    if (!t || !job->tile || !job->pairs) {
        tsw__free(t);
        return TSW_ENOMEM;
    }
    double ycells = job->y ? tsw__block_cells(job->y, 0, job->y->count) : 0;
    int64_t n = 0;
    job->total_pairs = 0;
    for (int64_t i = 0; i < nb; ++i) {
        int64_t i0 = job->cut[i], i1 = job->cut[i + 1];
        double ci = tsw__block_cells(job->x, i0, i1), ni = (double)(i1 - i0);
        if (!triangle) {
            double ny = job->y ? (double)job->y->count : 0;
            t[n].cells = job->k < 0 ? ci : ci * ycells;
            t[n].i = i;
            t[n].j = i;
            t[n].pairs = job->k < 0 ? ni : ni * ny; /* paired: one pair a row */
            ++n;
            continue;
        }
        for (int64_t j = i; j < nb; ++j) {
            int64_t j0 = job->cut[j], j1 = job->cut[j + 1];
            double cj = tsw__block_cells(job->x, j0, j1), nj = (double)(j1 - j0);
            t[n].cells = i == j ? 0.5 * ci * ci : ci * cj;
            t[n].i = i;
            t[n].j = j;
            t[n].pairs = i == j ? 0.5 * ni * (ni - 1) : ni * nj;
            ++n;
        }
    }
    qsort(t, (size_t)n, sizeof(tsw__tinfo), tsw__tinfo_cmp);
    for (int64_t s = 0; s < n; ++s) {
        job->tile[s][0] = t[s].i;
        job->tile[s][1] = t[s].j;
        job->pairs[s] = t[s].pairs;
        job->total_pairs += t[s].pairs;
    }
    job->ntiles = n;
    tsw__free(t);
    return TSW_OK;
}

/* ---- the tile functions ------------------------------------------------------------------- */

static int tsw__tile_cdist(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    int64_t b = job->tile[tile][0], i0 = job->cut[b], i1 = job->cut[b + 1];
    size_t esz = tsw__dtype_size(job->dtype);
    tsw_collection xv;
    tsw__view(job->x, i0, i1, job->dim, esz, &xv);
    char *out = (char *)job->out + (size_t)i0 * (size_t)job->y->count * esz;
    return tsw__cuda_cdist(job->params, job->dtype, job->dim, &xv, job->y, out, ex);
}

static int tsw__tile_paired(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    int64_t b = job->tile[tile][0], i0 = job->cut[b], i1 = job->cut[b + 1];
    size_t esz = tsw__dtype_size(job->dtype);
    tsw_collection xv, yv;
    tsw__view(job->x, i0, i1, job->dim, esz, &xv);
    tsw__view(job->y, i0, i1, job->dim, esz, &yv);
    char *out = (char *)job->out + (size_t)i0 * esz;
    return tsw__cuda_paired(job->params, job->dtype, job->dim, &xv, &yv, out, ex);
}

/* Whether c's series lie in order, none overlapping the next (each tile's rows are then
 * its own): always without offsets. */
static int tsw__rows_in_order(const tsw_collection *c)
{
    for (int64_t i = 0; c->offsets && i + 1 < c->count; ++i)
        if (c->offsets[i] + tsw__len(c, i) > c->offsets[i + 1])
            return 0;
    return 1;
}

/* A view of series [i0, i1) of c holding only their rows (offsets rebased into off, i1 - i0
 * values): the one-device call copies its gradients' rows in and out whole, so a tile must
 * see no row of another tile's. Returns the first row (the gradients' shift). */
static int64_t tsw__view_rows(const tsw_collection *c, int64_t i0, int64_t i1, int64_t dim,
                              size_t esz, int64_t *off, tsw_collection *v)
{
    tsw__view(c, i0, i1, dim, esz, v);
    if (!c->offsets)
        return i0 * c->length;
    const int64_t lo = c->offsets[i0]; /* rows in order: the least */
    for (int64_t i = i0; i < i1; ++i)
        off[i - i0] = c->offsets[i] - lo;
    v->offsets = off;
    v->values = (const char *)c->values + (size_t)lo * (size_t)dim * esz;
    if (c->times)
        v->times = (const char *)c->times + (size_t)lo * esz;
    return lo;
}

static int tsw__tile_sdtw_grad(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    int64_t b = job->tile[tile][0], i0 = job->cut[b], i1 = job->cut[b + 1];
    size_t esz = tsw__dtype_size(job->dtype), row = (size_t)job->dim * esz;
    int64_t *off = tsw__malloc(2 * (size_t)(i1 - i0) * sizeof(int64_t));
    if (!off)
        return TSW_ENOMEM;
    tsw_collection xv, yv;
    int64_t rx = tsw__view_rows(job->x, i0, i1, job->dim, esz, off, &xv);
    int64_t ry = tsw__view_rows(job->y, i0, i1, job->dim, esz, off + (i1 - i0), &yv);
    int rc = tsw__cuda_soft_dtw_grad(
        job->params, job->dtype, job->dim, &xv, &yv, (char *)job->out + (size_t)i0 * esz,
        job->gx ? (char *)job->gx + (size_t)rx * row : NULL,
        job->gy ? (char *)job->gy + (size_t)ry * row : NULL, ex, 0);
    tsw__free(off);
    return rc;
}

static int tsw__tile_knn(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    int64_t b = job->tile[tile][0], i0 = job->cut[b], i1 = job->cut[b + 1];
    size_t esz = tsw__dtype_size(job->dtype);
    tsw_collection qv;
    tsw__view(job->x, i0, i1, job->dim, esz, &qv);
    char *dist = (char *)job->out + (size_t)i0 * (size_t)job->k * esz;
    return job->knn_one(job->params, job->dtype, job->dim, &qv, job->y, job->k, dist,
                        job->index + i0 * job->k, ex);
}

/* Condensed index of (i, j), i < j, among n series. */
static size_t tsw__cidx(int64_t n, int64_t i, int64_t j)
{
    return (size_t)(i * n - i * (i + 1) / 2 + (j - i - 1));
}

/* out[(r0 + c) * ld + c0 + a] = src[a * nj + c] for the ni x nj block src, in squares of
 * 32 (both sides stay in cache). */
#define TSW__TRANSPOSE(NAME, T)                                                               \
    static void NAME(const T *src, int64_t ni, int64_t nj, T *out, int64_t ld, int64_t r0,    \
                     int64_t c0)                                                              \
    {                                                                                         \
        for (int64_t a0 = 0; a0 < ni; a0 += 32)                                               \
            for (int64_t b0 = 0; b0 < nj; b0 += 32) {                                         \
                int64_t a1 = a0 + 32 < ni ? a0 + 32 : ni, b1 = b0 + 32 < nj ? b0 + 32 : nj;   \
                for (int64_t b = b0; b < b1; ++b) {                                           \
                    T *row = out + (size_t)(r0 + b) * (size_t)ld + (size_t)c0;                \
                    for (int64_t a = a0; a < a1; ++a)                                         \
                        row[a] = src[(size_t)a * (size_t)nj + (size_t)b];                     \
                }                                                                             \
            }                                                                                 \
    }
TSW__TRANSPOSE(tsw__transpose_f32, float)
TSW__TRANSPOSE(tsw__transpose_f64, double)

/* Tile `tile` of a pdist, its ni x nj values in src (row-major), into the caller's matrix:
 * the block's rows and, for FULL off the diagonal, its mirror. */
static void tsw__pdist_place(const tsw__mjob *job, int64_t tile, const char *src)
{
    int64_t I = job->tile[tile][0], J = job->tile[tile][1];
    int64_t i0 = job->cut[I], i1 = job->cut[I + 1], j0 = job->cut[J], j1 = job->cut[J + 1];
    int64_t ni = i1 - i0, nj = j1 - j0, n = job->x->count;
    size_t esz = tsw__dtype_size(job->dtype);
    char *out = job->out;
    for (int64_t a = 0; a < ni; ++a) { /* the block's rows: contiguous runs */
        int64_t r = i0 + a, c0 = 0;
        const char *row = src + (size_t)a * (size_t)nj * esz;
        if (job->layout == TSW_PDIST_FULL) {
            memcpy(out + ((size_t)r * (size_t)n + (size_t)j0) * esz, row, (size_t)nj * esz);
            continue;
        }
        if (I == J)
            c0 = a + 1; /* the condensed row r holds the columns after r */
        if (c0 < nj)
            memcpy(out + tsw__cidx(n, r, j0 + c0) * esz, row + (size_t)c0 * esz,
                   (size_t)(nj - c0) * esz);
    }
    if (job->layout == TSW_PDIST_FULL && I != J) { /* the mirror, transposed */
        if (esz == 4)
            tsw__transpose_f32((const float *)src, ni, nj, (float *)out, n, j0, i0);
        else
            tsw__transpose_f64((const double *)src, ni, nj, (double *)out, n, j0, i0);
    }
}

static void *tsw__pdist_finisher(void *arg)
{
    tsw__mworker *w = arg;
    tsw__pdist_place(w->job, w->fin_tile, w->fin_src);
    return NULL;
}

/* Waits for w's finisher, if one runs. */
static void tsw__finish_wait(tsw__mworker *w)
{
    if (w->fin_on) {
        pthread_join(w->fin, NULL);
        w->fin_on = 0;
    }
}

static int tsw__tile_pdist(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    tsw__mworker *w = ex->progress_user;
    int64_t I = job->tile[tile][0], J = job->tile[tile][1];
    int64_t i0 = job->cut[I], i1 = job->cut[I + 1], j0 = job->cut[J], j1 = job->cut[J + 1];
    int64_t ni = i1 - i0, nj = j1 - j0;
    size_t esz = tsw__dtype_size(job->dtype), need = (size_t)ni * (size_t)nj * esz;
    /* buf[which] is free: its finisher was joined before the other buffer's started */
    int b = w->which;
    if (w->cap[b] < need) {
        tsw__free(w->buf[b]);
        w->cap[b] = 0;
        if (!(w->buf[b] = tsw__malloc(need))) {
            tsw__set_detail("needs %zu bytes of host memory for a tile of %lld x %lld pairs",
                            need, (long long)ni, (long long)nj);
            return TSW_ENOMEM;
        }
        w->cap[b] = need;
    }
    char *tmp = w->buf[b];
    tsw_collection xi, xj;
    tsw__view(job->x, i0, i1, job->dim, esz, &xi);
    tsw__view(job->x, j0, j1, job->dim, esz, &xj);
    int rc = I == J ? tsw__cuda_pdist(job->params, job->dtype, job->dim, &xi, TSW_PDIST_FULL,
                                      tmp, ex)
                    : tsw__cuda_cdist(job->params, job->dtype, job->dim, &xi, &xj, tmp, ex);
    tsw__finish_wait(w);
    if (rc != TSW_OK)
        return rc;
    /* the copy into the matrix overlaps the device's next tile (in this thread when no
     * thread can be started) */
    w->fin_tile = tile;
    w->fin_src = tmp;
    w->which = 1 - b;
    if (pthread_create(&w->fin, NULL, tsw__pdist_finisher, w) == 0)
        w->fin_on = 1;
    else
        tsw__pdist_place(job, tile, tmp);
    return TSW_OK;
}

/* A chunk of windows [w0, w1) of the series: its candidates (every window at or below the
 * chunk's own threshold, which is at least the whole series'), made global and gathered. */
static int tsw__tile_search(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    int64_t b = job->tile[tile][0], w0 = job->cut[b], w1 = job->cut[b + 1];
    size_t esz = tsw__dtype_size(job->dtype);
    tsw_series v = *job->series;
    v.values = (const char *)job->series->values + (size_t)w0 * (size_t)job->dim * esz;
    v.times = NULL;
    v.length = (w1 - w0) + job->qn - 1;
    int64_t *cand = NULL, ncand = 0;
    tsw_search_stats st;
    memset(&st, 0, sizeof(st));
    int rc = tsw__cuda_search(job->params, job->dtype, job->dim, job->qz, job->qlo, job->qhi,
                              job->qn, job->r, &v, job->znorm, job->excl, job->k, 0, &cand,
                              &ncand, &st, ex);
    if (rc == TSW_OK) {
        pthread_mutex_lock(&job->lock);
        if (job->ncand + ncand > job->cap) {
            int64_t cap = 2 * (job->ncand + ncand) + 64;
            int64_t *nc = tsw__malloc((size_t)cap * sizeof(int64_t));
            if (!nc) {
                rc = TSW_ENOMEM;
            } else {
                if (job->ncand)
                    memcpy(nc, job->cand, (size_t)job->ncand * sizeof(int64_t));
                tsw__free(job->cand);
                job->cand = nc;
                job->cap = cap;
            }
        }
        if (rc == TSW_OK) {
            for (int64_t i = 0; i < ncand; ++i)
                job->cand[job->ncand++] = cand[i] + w0;
            job->st.windows += st.windows;
            job->st.kim += st.kim;
            job->st.keogh_query += st.keogh_query;
            job->st.keogh_data += st.keogh_data;
            job->st.dtw += st.dtw;
            job->st.abandoned += st.abandoned;
        }
        pthread_mutex_unlock(&job->lock);
    }
    tsw__free(cand);
    return rc;
}

/* A caller's tile: its function on the tile's items, with the worker's slot. */
static int tsw__tile_user(tsw__mjob *job, int64_t tile, const tsw_exec *ex)
{
    const tsw__mworker *w = ex->progress_user;
    return job->ufn(job->user, job->cut[tile], job->cut[tile + 1], (int)(w - job->workers), ex);
}

/* ---- the threads ---------------------------------------------------------------------------- */

static int tsw__mprogress(void *user, int64_t done, int64_t total)
{
    tsw__mworker *w = user;
    tsw__mjob *job = w->job;
    pthread_mutex_lock(&job->lock);
    w->partial = total > 0 ? w->tile_pairs * (double)done / (double)total : 0.0;
    pthread_mutex_unlock(&job->lock);
    return __atomic_load_n(&job->stop, __ATOMIC_RELAXED);
}

/* Records w's failure rc as the call's when it is the first (a device stopped by another's
 * is not one), and stops the other devices. */
static void tsw__mfail(tsw__mjob *job, const tsw__mworker *w, int rc)
{
    pthread_mutex_lock(&job->lock);
    if (!(rc == TSW_ECANCELED && __atomic_load_n(&job->stop, __ATOMIC_RELAXED)) &&
        job->rc == TSW_OK) {
        job->rc = rc;
        const char *d = tsw_last_error_detail();
        snprintf(job->detail, sizeof(job->detail), "device %d: %s", w->device,
                 d && *d ? d : tsw_strerror(rc));
    }
    pthread_mutex_unlock(&job->lock);
    __atomic_store_n(&job->stop, 1, __ATOMIC_RELAXED);
}

/* The test hook's loss (TSWARP_FAULT_DEVICE_LOST): the status a device that fell off the bus
 * gives its next CUDA call. */
static int tsw__lost(void)
{
    tsw__set_detail("cudaErrorDevicesUnavailable: the device was lost (injected by "
                    "TSWARP_FAULT_DEVICE_LOST)");
    return TSW_ECUDA;
}

static void *tsw__mthread(void *arg)
{
    tsw__mworker *w = arg;
    tsw__mjob *job = w->job;
    tsw_exec ex = *job->caller;
    ex.device = TSW_DEVICE_CUDA;
    ex.device_index = w->device;
    ex.devices = NULL;
    ex.n_devices = 0;
    ex.progress = tsw__mprogress;
    ex.progress_user = w;
    ex.cuda_stream = NULL;
    ex.cuda_workspace = NULL;
    ex.cuda_workspace_bytes = 0;
    ex.cuda_async = 0;
    tsw__clear_detail();
    tsw__hint_count = job->hint_count;
    tsw__hint_len = job->hint_len;
    /* the test hook: this device computes its first tile, then is lost (at its next tile,
     * or when the queue is empty: a lost device fails whatever it does next) */
    const int lost = w->device == job->lost_device;
    for (int64_t done = 0;; ++done) {
        if (__atomic_load_n(&job->stop, __ATOMIC_RELAXED))
            break;
        int64_t t = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
        if (t >= job->ntiles) {
            if (lost)
                tsw__mfail(job, w, tsw__lost());
            break;
        }
        pthread_mutex_lock(&job->lock);
        w->tile_pairs = job->pairs[t];
        w->partial = 0;
        pthread_mutex_unlock(&job->lock);
        int rc = lost && done > 0 ? tsw__lost() : job->fn(job, t, &ex);
        pthread_mutex_lock(&job->lock);
        w->partial = 0;
        if (rc == TSW_OK)
            job->done_pairs += job->pairs[t];
        pthread_mutex_unlock(&job->lock);
        if (rc != TSW_OK) {
            tsw__mfail(job, w, rc);
            break;
        }
    }
    tsw__finish_wait(w);
    for (int b = 0; b < 2; ++b)
        tsw__free(w->buf[b]);
    tsw__hint_count = tsw__hint_len = 0;
    __atomic_fetch_add(&job->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void tsw__sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* The devices of ex: the list, or every visible one; each checked to exist. */
static int tsw__devices(const tsw_exec *ex, int *devs, int *ndev)
{
    int count = 0;
    int rc = tsw__cuda_device_count(&count);
    if (rc)
        return rc;
    if (count < 1) {
        tsw__set_detail("no CUDA device was found");
        return TSW_ENODEV;
    }
    if (ex->cuda_stream || ex->cuda_workspace) {
        tsw__set_detail("several devices take no cuda_stream or cuda_workspace (each device "
                        "uses its own)");
        return TSW_EINVAL;
    }
    if (ex->n_devices == TSW_ALL_DEVICES) {
        *ndev = count < TSW__MAX_DEVICES ? count : TSW__MAX_DEVICES;
        for (int i = 0; i < *ndev; ++i)
            devs[i] = i;
        return TSW_OK;
    }
    for (int i = 0; i < ex->n_devices; ++i)
        if (ex->devices[i] >= count) {
            tsw__set_detail("devices[%d] is device %d, but only %d CUDA device(s) are visible",
                            i, ex->devices[i], count);
            return TSW_ENODEV;
        }
    *ndev = ex->n_devices;
    memcpy(devs, ex->devices, (size_t)*ndev * sizeof(int));
    return TSW_OK;
}

/* Blocks per device: about eight tiles a device. */
#define TSW__TILES_PER_DEVICE 8

static int tsw__mrun(tsw__mjob *job, const tsw_exec *ex, int triangle, int ndev,
                     const int *devs, const tsw_collection *rows, const tsw_collection *pair)
{
    int64_t nb = (int64_t)TSW__TILES_PER_DEVICE * ndev;
    if (triangle) { /* nb (nb + 1) / 2 tiles >= 8 a device */
        nb = 1;
        while (nb * (nb + 1) / 2 < (int64_t)TSW__TILES_PER_DEVICE * ndev)
            ++nb;
    }
    int rc = TSW_OK;
    if (rows) { /* else the caller made the tiles (search) */
        rc = tsw__cut(job, rows, pair, nb);
        if (!rc)
            rc = tsw__tiles(job, triangle);
        if (rc)
            return rc;
    }
    job->hint_count = (int64_t)job->total_pairs;
    job->hint_len = 0;
    for (int s = 0; s < 2 && rows; ++s) {
        const tsw_collection *c = s == 0 ? job->x : job->y;
        for (int64_t i = 0; c && i < c->count; ++i)
            if (tsw__len(c, i) > job->hint_len)
                job->hint_len = tsw__len(c, i);
    }
    /* A test hook: TSWARP_FAULT_DEVICE_LOST=N makes device N fail after its first tile as a
     * lost device does (TSW_ECUDA; tsw__mthread), to test that the others stop, free their
     * memory and stay usable; a real loss cannot be provoked on purpose. */
    const char *lost = getenv("TSWARP_FAULT_DEVICE_LOST");
    char *end = NULL;
    long lv = lost && *lost ? strtol(lost, &end, 10) : -1;
    job->lost_device = end && *end == '\0' && lv >= 0 && lv < 1 << 20 ? (int)lv : -1;
    tsw__mworker *w = tsw__malloc((size_t)ndev * sizeof(tsw__mworker));
    if (!w)
        return TSW_ENOMEM;
    memset(w, 0, (size_t)ndev * sizeof(tsw__mworker));
    job->workers = w;
    pthread_mutex_init(&job->lock, NULL);
    int started = 0;
    for (; started < ndev; ++started) {
        w[started].job = job;
        w[started].device = devs[started];
        if (pthread_create(&w[started].thread, NULL, tsw__mthread, &w[started]) != 0) {
            __atomic_store_n(&job->stop, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&job->lock);
            if (job->rc == TSW_OK) {
                job->rc = TSW_ENOMEM;
                snprintf(job->detail, sizeof(job->detail),
                         "could not start the host thread of device %d", devs[started]);
            }
            pthread_mutex_unlock(&job->lock);
            break;
        }
    }
    int64_t last = tsw__now_ns();
    while (__atomic_load_n(&job->finished, __ATOMIC_ACQUIRE) < started) {
        tsw__sleep_ms(10);
        int64_t now = tsw__now_ns();
        if (ex->progress && now - last >= 50000000LL &&
            !__atomic_load_n(&job->stop, __ATOMIC_RELAXED)) {
            last = now;
            pthread_mutex_lock(&job->lock);
            double done = job->done_pairs;
            for (int i = 0; i < started; ++i)
                done += w[i].partial;
            pthread_mutex_unlock(&job->lock);
            if (ex->progress(ex->progress_user, (int64_t)done, (int64_t)job->total_pairs)) {
                job->canceled = 1;
                __atomic_store_n(&job->stop, 1, __ATOMIC_RELAXED);
            }
        }
    }
    for (int i = 0; i < started; ++i)
        pthread_join(w[i].thread, NULL);
    pthread_mutex_destroy(&job->lock);
    tsw__free(w);
    if (job->rc != TSW_OK) {
        tsw__set_detail("%s", job->detail);
        return job->rc;
    }
    if (job->canceled)
        return TSW_ECANCELED;
    if (ex->progress)
        (void)ex->progress(ex->progress_user, (int64_t)job->total_pairs,
                           (int64_t)job->total_pairs);
    return TSW_OK;
}

static void tsw__mjob_init(tsw__mjob *job, const tsw_params *params, tsw_dtype dtype,
                           int64_t dim, const tsw_exec *ex, const tsw_collection *x,
                           const tsw_collection *y, void *out, tsw__tile_fn fn)
{
    memset(job, 0, sizeof(*job));
    job->params = params;
    job->dtype = dtype;
    job->dim = dim;
    job->caller = ex;
    job->x = x;
    job->y = y;
    job->out = out;
    job->fn = fn;
}

static void tsw__mjob_free(tsw__mjob *job)
{
    tsw__free(job->cand);
    tsw__free(job->cut);
    tsw__free(job->tile);
    tsw__free(job->pairs);
}

/* The devices of ex, then the call's tiles on them; frees the job. */
static int tsw__multi_go(tsw__mjob *job, const tsw_exec *ex, int triangle,
                         const tsw_collection *rows, const tsw_collection *pair)
{
    int devs[TSW__MAX_DEVICES], ndev = 0;
    int rc = tsw__devices(ex, devs, &ndev);
    if (!rc)
        rc = tsw__mrun(job, ex, triangle, ndev, devs, rows, pair);
    tsw__mjob_free(job);
    return rc;
}

int tsw__multi_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, const tsw_collection *y, void *out,
                     const tsw_exec *ex)
{
    tsw__mjob job;
    tsw__mjob_init(&job, params, dtype, dim, ex, x, y, out, tsw__tile_cdist);
    return tsw__multi_go(&job, ex, 0, x, NULL);
}

int tsw__multi_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_collection *x, const tsw_collection *y, void *out,
                      const tsw_exec *ex)
{
    tsw__mjob job;
    tsw__mjob_init(&job, params, dtype, dim, ex, x, y, out, tsw__tile_paired);
    job.k = -1; /* one pair a row */
    return tsw__multi_go(&job, ex, 0, x, y);
}

int tsw__multi_sdtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw_collection *x, const tsw_collection *y, void *values,
                         void *grad_x, void *grad_y, const tsw_exec *ex)
{
    if (!tsw__rows_in_order(x) || !tsw__rows_in_order(y)) {
        /* series out of order or sharing rows: tiles would share gradient rows; one device
         * (the list's first) computes the call */
        int devs[TSW__MAX_DEVICES], ndev = 0;
        int rc = tsw__devices(ex, devs, &ndev);
        if (rc)
            return rc;
        tsw_exec one = *ex;
        one.n_devices = 0;
        one.devices = NULL;
        one.device_index = devs[0];
        return tsw__cuda_soft_dtw_grad(params, dtype, dim, x, y, values, grad_x, grad_y, &one, 0);
    }
    tsw__mjob job;
    tsw__mjob_init(&job, params, dtype, dim, ex, x, y, values, tsw__tile_sdtw_grad);
    job.gx = grad_x;
    job.gy = grad_y;
    job.k = -1; /* one pair a row */
    return tsw__multi_go(&job, ex, 0, x, y);
}

int tsw__multi_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                     const tsw_collection *x, tsw_pdist_layout layout, void *out,
                     const tsw_exec *ex)
{
    tsw__mjob job;
    tsw__mjob_init(&job, params, dtype, dim, ex, x, NULL, out, tsw__tile_pdist);
    job.layout = layout;
    return tsw__multi_go(&job, ex, 1, x, NULL);
}

int tsw__multi_knn(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                   const tsw_collection *q, const tsw_collection *x, int64_t k, void *distance,
                   int64_t *index, const tsw_exec *ex, tsw__knn_fn knn_one)
{
    tsw__mjob job;
    tsw__mjob_init(&job, params, dtype, dim, ex, q, x, distance, tsw__tile_knn);
    job.index = index;
    job.k = k;
    job.knn_one = knn_one;
    return tsw__multi_go(&job, ex, 0, q, NULL);
}

int tsw__multi_count(const tsw_exec *ex, int *ndev)
{
    int devs[TSW__MAX_DEVICES];
    return tsw__devices(ex, devs, ndev);
}

int tsw__multi_tiles(int64_t nitems, const double *weight, tsw__multi_fn fn, void *user,
                     const tsw_exec *ex)
{
    int devs[TSW__MAX_DEVICES], ndev = 0;
    int rc = tsw__devices(ex, devs, &ndev);
    if (rc)
        return rc;
    tsw__mjob job;
    tsw__mjob_init(&job, NULL, TSW_F64, 0, ex, NULL, NULL, NULL, tsw__tile_user);
    job.ufn = fn;
    job.user = user;
    int64_t nb = (int64_t)TSW__TILES_PER_DEVICE * ndev;
    nb = nb < nitems ? nb : nitems > 0 ? nitems : 1;
    job.cut = tsw__malloc((size_t)(nb + 1) * sizeof(int64_t));
    job.pairs = tsw__malloc((size_t)nb * sizeof(double));
    if (!job.cut || !job.pairs) {
        tsw__mjob_free(&job);
        return TSW_ENOMEM;
    }
    job.ntiles = tsw__cut_weights(weight, nitems, nb, job.cut);
    for (int64_t t = 0; t < job.ntiles; ++t) {
        job.pairs[t] = 0;
        for (int64_t i = job.cut[t]; i < job.cut[t + 1]; ++i)
            job.pairs[t] += weight[i];
        job.total_pairs += job.pairs[t];
    }
    rc = tsw__mrun(&job, ex, 0, ndev, devs, NULL, NULL);
    tsw__mjob_free(&job);
    return rc;
}

/* Subsequence search on several GPUs: the windows cut into chunks (four a device, each
 * overlapping the next by n - 1 points), each chunk's candidates found by the one-device GPU
 * search; *cand (sorted, the caller frees it) holds every window that can be a match, since
 * each chunk keeps every window at or below its own threshold and the series' threshold is
 * the least of them. The caller recomputes them exactly (tsw__search_exact). */
int tsw__multi_search(const tsw_params *params, tsw_dtype dtype, int64_t dim, const double *qz,
                      const double *qlo, const double *qhi, int64_t n, int64_t r,
                      const tsw_series *series, int znorm, int64_t exclusion, int64_t k,
                      int64_t **cand, int64_t *ncand, tsw_search_stats *stats,
                      const tsw_exec *ex)
{
    int devs[TSW__MAX_DEVICES], ndev = 0;
    int rc = tsw__devices(ex, devs, &ndev);
    if (rc)
        return rc;
    tsw__mjob job;
    tsw__mjob_init(&job, params, dtype, dim, ex, NULL, NULL, NULL, tsw__tile_search);
    job.qz = qz;
    job.qlo = qlo;
    job.qhi = qhi;
    job.qn = n;
    job.r = r;
    job.series = series;
    job.znorm = znorm;
    job.excl = exclusion;
    job.k = k;
    const int64_t W = series->length - n + 1;
    int64_t nb = 4 * (int64_t)ndev;
    if (nb > W)
        nb = W;
    job.cut = tsw__malloc((size_t)(nb + 1) * sizeof(int64_t));
    job.tile = tsw__malloc((size_t)nb * sizeof(*job.tile));
    job.pairs = tsw__malloc((size_t)nb * sizeof(double));
    if (!job.cut || !job.tile || !job.pairs) {
        tsw__mjob_free(&job);
        return TSW_ENOMEM;
    }
    job.nblocks = nb;
    for (int64_t b = 0; b <= nb; ++b)
        job.cut[b] = (int64_t)((double)W * (double)b / (double)nb);
    job.cut[nb] = W;
    for (int64_t b = 0; b < nb; ++b) {
        job.tile[b][0] = job.tile[b][1] = b;
        job.pairs[b] = (double)(job.cut[b + 1] - job.cut[b]);
    }
    job.ntiles = nb;
    job.total_pairs = (double)W;
    rc = tsw__mrun(&job, ex, 0, ndev, devs, NULL, NULL);
    if (rc == TSW_OK) {
        qsort(job.cand, (size_t)job.ncand, sizeof(int64_t), tsw__i64_cmp);
        *cand = job.cand;
        *ncand = job.ncand;
        job.cand = NULL;
        if (stats)
            *stats = job.st;
    }
    tsw__mjob_free(&job);
    return rc;
}

#endif /* TSWARP_WITH_CUDA */
