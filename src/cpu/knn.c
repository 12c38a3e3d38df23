/*
 * CPU nearest neighbours: envelopes, lower bounds and the exact top k of tsw_knn.
 *
 * tsw_knn's work is tasks (query i, block of x), handed out dynamically in query order so
 * that the threads share each query's k-th best while they prune. A candidate goes
 * through the cascade of the UCR Suite (Rakthanmanon et al. 2012): LB_Kim's rings, LB_Keogh
 * with the query's envelope, LB_Keogh with its own envelope, then DTW that abandons with
 * the cumulative bounds of both (knn_impl.h). Pruning compares a bound with the k-th best
 * raw value times (1 + slack), slack covering the rounding of the float sums, and keeps
 * ties: the top k is then exactly the (value, index) order of the full matrix whatever the
 * threads did first.
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"
#include "../internal.h"
#include "kernels.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "knn_inst.h"

/* ---- windows as spans ------------------------------------------------------------------- */

/* The spans of the other axis: column c admits the rows r with lo[r] <= c < hi[r], an
 * interval since both bounds move forward. */
static void tsw__invert_spans(const int64_t *lo, const int64_t *hi, int64_t rows,
                              int64_t cols, int64_t *olo, int64_t *ohi)
{
    int64_t f = 0, l = 0;
    for (int64_t c = 0; c < cols; ++c) {
        while (f < rows && hi[f] <= c)
            ++f;
        while (l < rows && lo[l] <= c)
            ++l;
        olo[c] = f;
        ohi[c] = l > f ? l : f;
    }
}

void tsw__spans(const tsw_params *p, int64_t n, int64_t m, int64_t *rlo, int64_t *rhi,
                int64_t *clo, int64_t *chi)
{
    tsw_band b = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    if (!b.swap) {
        for (int64_t i = 0; i < n; ++i)
            tsw_band_range(&b, i, &rlo[i], &rhi[i]);
        tsw__invert_spans(rlo, rhi, n, m, clo, chi);
    } else {
        for (int64_t j = 0; j < m; ++j)
            tsw_band_range(&b, j, &clo[j], &chi[j]);
        tsw__invert_spans(clo, chi, m, n, rlo, rhi);
    }
}

/* ---- envelopes and lower bounds ----------------------------------------------------------- */

/* Scratch of one pair shape: spans, envelopes, per-point bounds, DP rows. */
typedef struct tsw__lbws {
    int64_t n, m;            /* the shape the spans were made for (-1: none) */
    int64_t *rlo, *rhi, *clo, *chi, *dq;
    void *qlo, *qhi;         /* the query's envelope over b's points (m, dim) */
    void *xlo, *xhi;         /* b's envelope over the query's points (n, dim) */
    void *proj;              /* LB_Improved: b projected onto the query's envelope (m, dim);
                                LB_Webb: the query-box bottoms b_j lies below (else -inf) */
    void *wtop;              /* LB_Webb: the query-box tops b_j lies above (else +inf) (m, dim) */
    void *wt, *ws, *wjunk;   /* LB_Webb: their envelopes over the rows (n, dim) */
    double *cq, *cbc;        /* (m + 1) */
    double *cx, *cbr;        /* (n + 1) */
    void *prev, *cur;        /* (m) */
    int64_t env_query;       /* the query whose envelope qlo/qhi hold (-1: none) */
    void *block;
    /* DTW of one shape in SIMD lanes (tsw__pair_lanes_ea): candidates that passed the
     * bounds wait in a group of vl, each with its rows' bound (gcb + l (n + 1)) */
    void *lws;               /* the lane workspace, or NULL: one candidate at a time */
    int vl, gn;
    int64_t gj[TSW__MAX_LANES];
    double *gcb;             /* rows' bounds ((n + 1) a lane), then columns' ((m + 1)) */
    int64_t gstride;         /* doubles a lane in gcb */
    const void *ga;          /* the query the lane workspace holds (NULL: none) */
} tsw__lbws;

static void tsw__lbws_free(tsw__lbws *w)
{
    tsw__free(w->block);
    tsw__free_aligned(w->lws);
    tsw__free(w->gcb);
    w->lws = NULL;
    w->gcb = NULL;
}

/* Scratch for shapes up to (nmax, mmax); 0 or TSW_ENOMEM. */
static int tsw__lbws_init(tsw__lbws *w, int64_t nmax, int64_t mmax, int64_t dim, size_t esz)
{
    memset(w, 0, sizeof(*w));
    w->n = w->m = -1;
    w->env_query = -1;
    int64_t L = (nmax > mmax ? nmax : mmax) + 1;
    double bytes = (double)L * (6 * 8 + 4 * 8) + (double)L * (double)dim * (double)esz * 9 +
                   2.0 * (double)L * (double)esz + 64.0 * 16;
    if (bytes > (double)SIZE_MAX / 2)
        return TSW_ENOMEM;
    unsigned char *p = tsw__malloc((size_t)bytes);
    if (!p)
        return TSW_ENOMEM;
    w->block = p;
    size_t li = (size_t)L * 8, lv = (size_t)L * (size_t)dim * esz, lr = (size_t)L * esz;
#define TSW__TAKE(ptr, sz)                                                                   \
    do {                                                                                     \
        (ptr) = (void *)p;                                                                   \
        p += (((sz) + 63) & ~(size_t)63);                                                    \
    } while (0)
    TSW__TAKE(w->rlo, li);
    TSW__TAKE(w->rhi, li);
    TSW__TAKE(w->clo, li);
    TSW__TAKE(w->chi, li);
    TSW__TAKE(w->dq, li);
    TSW__TAKE(w->cq, li);
    TSW__TAKE(w->cbc, li);
    TSW__TAKE(w->cx, li);
    TSW__TAKE(w->cbr, li);
    TSW__TAKE(w->qlo, lv);
    TSW__TAKE(w->qhi, lv);
    TSW__TAKE(w->xlo, lv);
    TSW__TAKE(w->xhi, lv);
    TSW__TAKE(w->proj, lv);
    TSW__TAKE(w->wtop, lv);
    TSW__TAKE(w->wt, lv);
    TSW__TAKE(w->ws, lv);
    TSW__TAKE(w->wjunk, lv);
    TSW__TAKE(w->prev, lr);
    TSW__TAKE(w->cur, lr);
#undef TSW__TAKE
    return TSW_OK;
}

static void tsw__lbws_shape(tsw__lbws *w, const tsw_params *p, int64_t n, int64_t m)
{
    if (w->n == n && w->m == m)
        return;
    tsw__spans(p, n, m, w->rlo, w->rhi, w->clo, w->chi);
    w->n = n;
    w->m = m;
    w->env_query = -1;
}

int tsw__cpu_envelope(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_series *s, int s_is_b, int64_t other_length, void *lower,
                      void *upper)
{
    int64_t n = s_is_b ? other_length : s->length, m = s_is_b ? s->length : other_length;
    size_t bytes = ((size_t)n + (size_t)m + 2) * 5 * sizeof(int64_t);
    int64_t *sp = tsw__malloc(bytes);
    if (!sp)
        return TSW_ENOMEM;
    int64_t *rlo = sp, *rhi = rlo + n + 1, *clo = rhi + n + 1, *chi = clo + m + 1,
            *dq = chi + m + 1;
    tsw__spans(params, n, m, rlo, rhi, clo, chi);
    /* s's points admitted by each point of the other series: s is a (rows), so the other
     * series' column j sees rows [clo[j], chi[j]); s is b, so row i sees [rlo[i], rhi[i]) */
    const int64_t *lo = s_is_b ? rlo : clo, *hi = s_is_b ? rhi : chi;
    if (dtype == TSW_F32)
        knn_envelope_f32(s->values, s->length, dim, lo, hi, other_length, lower, upper, dq);
    else
        knn_envelope_f64(s->values, s->length, dim, lo, hi, other_length, lower, upper, dq);
    tsw__free(sp);
    return TSW_OK;
}

/* LB_Keogh's sums (knn_boxes.h), the instance for this CPU. */
#define TSW__BOXES_ISA base
#include "knn_boxes.h"
#undef TSW__BOXES_ISA
#define TSW__BOXES_PICK(T, SFX)                                                              \
    static double tsw__lb_boxes_##SFX(tsw_cost cost, const T *v, const T *lo, const T *hi,  \
                                      int64_t j0, int64_t j1, int64_t dim, double stop,      \
                                      double *c)                                             \
    {                                                                                        \
        return TSW__BOXES_LEVEL(tsw__lb_boxes, SFX)(cost, v, lo, hi, j0, j1, dim, stop, c);  \
    }
#if TSW_X86
#define TSW__BOXES_LEVEL(name, SFX) (tsw__cpu_level() >= 2 ? name##_avx2_##SFX : name##_base_##SFX)
#else
#define TSW__BOXES_LEVEL(name, SFX) name##_base_##SFX
#endif
TSW__BOXES_PICK(double, f64)
TSW__BOXES_PICK(float, f32)
#undef TSW__BOXES_PICK
#undef TSW__BOXES_LEVEL

/*
 * The raw (unfinished) bound `kind` of a (n) against b (m) with the scratch's spans for
 * (n, m). For KEOGH, IMPROVED and ENHANCED the query's envelope must be in w->qlo/qhi
 * already (tsw__lb_query_env); KEOGH fills cq (per column), KEOGH_DATA cx (per row).
 * Stops early (returns a partial sum above stop) once the sum exceeds stop.
 */
#define TSW__LB_DEFINE(T, SFX)                                                               \
    static void tsw__lb_query_env_##SFX(tsw__lbws *w, const T *a, int64_t n, int64_t m,      \
                                        int64_t dim)                                         \
    {                                                                                        \
        knn_envelope_##SFX(a, n, dim, w->clo, w->chi, m, (T *)w->qlo, (T *)w->qhi, w->dq);   \
    }                                                                                        \
    static double tsw__lb_keogh_q_##SFX(const tsw__lbws *w, tsw_cost cost, const T *b,       \
                                        int64_t j0, int64_t j1, int64_t dim, double stop)    \
    {                                                                                        \
        return tsw__lb_boxes_##SFX(cost, b, (const T *)w->qlo, (const T *)w->qhi, j0, j1, dim, \
                                   stop, w->cq);                                             \
    }                                                                                        \
    /* LB_Keogh on b's envelope over the query's rows: lo/hi given (the job's, made once a   \
     * series), or NULL: made here into the scratch */                                       \
    static double tsw__lb_keogh_x_##SFX(tsw__lbws *w, tsw_cost cost, const T *a, int64_t n,  \
                                        const T *b, int64_t m, int64_t dim, const T *lo,     \
                                        const T *hi, double stop)                            \
    {                                                                                        \
        if (!lo) {                                                                           \
            knn_envelope_##SFX(b, m, dim, w->rlo, w->rhi, n, (T *)w->xlo, (T *)w->xhi, w->dq); \
            lo = (const T *)w->xlo;                                                          \
            hi = (const T *)w->xhi;                                                          \
        }                                                                                    \
        return tsw__lb_boxes_##SFX(cost, a, lo, hi, 0, n, dim, stop, w->cx);                 \
    }                                                                                        \
    /* LB_Webb's second part (the query's envelope in qlo/qhi): for each row i and channel,  \
     * a_i's cost to b's box over its columns beyond what KEOGH charged the column it is     \
     * aligned with (tswarp.h, TSW_LB_WEBB). A column j with b_j below the query's box was   \
     * charged cost(b_j, qlo_j); aligned with an a_i above u = xhi_i (so b_j <= u, qlo_j <=  \
     * a_i), the pair costs at least that plus cost(a_i, u) - cost(max(qlo_j, u), u) (for   \
     * the squared and the absolute difference: decreasing in b_j and qlo_j); T_i, the       \
     * largest such qlo_j over i's columns, bounds every partner. A column b_j above the     \
     * query's box cannot be aligned with an a_i above b's box (b_j <= u < a_i <= qhi_j).    \
     * Each row and each column charges one cell of the path, so the sums add up. */         \
    static double tsw__lb_webb_rows_##SFX(tsw__lbws *w, tsw_cost cost, const T *a, int64_t n, \
                                          const T *b, int64_t m, int64_t dim)                \
    {                                                                                        \
        const T *qlo = (const T *)w->qlo, *qhi = (const T *)w->qhi;                          \
        T *bot = (T *)w->proj, *top = (T *)w->wtop;                                          \
        for (int64_t t = 0; t < m * dim; ++t) {                                              \
            bot[t] = b[t] < qlo[t] ? qlo[t] : -(T)HUGE_VAL;                                  \
            top[t] = b[t] > qhi[t] ? qhi[t] : (T)HUGE_VAL;                                   \
        }                                                                                    \
        T *xlo = (T *)w->xlo, *xhi = (T *)w->xhi, *tmax = (T *)w->wt, *smin = (T *)w->ws;    \
        knn_envelope_##SFX(b, m, dim, w->rlo, w->rhi, n, xlo, xhi, w->dq);                   \
        knn_envelope_##SFX(bot, m, dim, w->rlo, w->rhi, n, (T *)w->wjunk, tmax, w->dq);      \
        knn_envelope_##SFX(top, m, dim, w->rlo, w->rhi, n, smin, (T *)w->wjunk, w->dq);      \
        double s = 0;                                                                        \
        for (int64_t t = 0; t < n * dim; ++t) {                                              \
            const double v = (double)a[t];                                                   \
            double edge, cut;                                                                \
            if (v > (double)xhi[t]) {                                                        \
                edge = (double)xhi[t];                                                       \
                cut = (double)tmax[t] > edge ? (double)tmax[t] : edge;                       \
            } else if (v < (double)xlo[t]) {                                                 \
                edge = (double)xlo[t];                                                       \
                cut = (double)smin[t] < edge ? (double)smin[t] : edge;                       \
            } else {                                                                         \
                continue;                                                                    \
            }                                                                                \
            /* an empty span (edge infinite): the row admits no cell, the distance is inf */ \
            s += tsw_cost_total_f64(cost, tsw_cost_term_f64(cost, v - edge)) -               \
                 (cut == edge ? 0.0                                                          \
                              : tsw_cost_total_f64(cost, tsw_cost_term_f64(cost, cut - edge))); \
        }                                                                                    \
        return s;                                                                            \
    }                                                                                        \
    static double tsw__lb_raw_##SFX(tsw__lbws *w, const tsw_params *p, tsw_lb kind,          \
                                    int64_t bands, const T *a, int64_t n, const T *b,        \
                                    int64_t m, int64_t dim)                                  \
    {                                                                                        \
        const tsw_cost cost = p->cost;                                                       \
        switch (kind) {                                                                      \
        case TSW_LB_KIM:                                                                     \
            return knn_rings_##SFX(cost, a, n, b, m, dim, w->rlo, w->rhi, 3, HUGE_VAL);      \
        case TSW_LB_KEOGH:                                                                   \
            return tsw__lb_keogh_q_##SFX(w, cost, b, 0, m, dim, HUGE_VAL);                   \
        case TSW_LB_KEOGH_DATA:                                                              \
            return tsw__lb_keogh_x_##SFX(w, cost, a, n, b, m, dim, NULL, NULL, HUGE_VAL);    \
        case TSW_LB_IMPROVED: {                                                              \
            double s = tsw__lb_keogh_q_##SFX(w, cost, b, 0, m, dim, HUGE_VAL);               \
            const T *lo = (const T *)w->qlo, *hi = (const T *)w->qhi;                        \
            T *pr = (T *)w->proj;                                                            \
            for (int64_t t = 0; t < m * dim; ++t)                                            \
                pr[t] = b[t] < lo[t] ? lo[t] : b[t] > hi[t] ? hi[t] : b[t];                  \
            return s + tsw__lb_keogh_x_##SFX(w, cost, a, n, pr, m, dim, NULL, NULL, HUGE_VAL); \
        }                                                                                    \
        case TSW_LB_WEBB:                                                                    \
            return tsw__lb_keogh_q_##SFX(w, cost, b, 0, m, dim, HUGE_VAL) +                  \
                   tsw__lb_webb_rows_##SFX(w, cost, a, n, b, m, dim);                        \
        default: { /* ENHANCED */                                                            \
            int64_t mx = n > m ? n : m, v = bands < mx / 2 ? bands : mx / 2;                 \
            if (mx == 1)                                                                     \
                return knn_rings_##SFX(cost, a, n, b, m, dim, w->rlo, w->rhi, 1, HUGE_VAL);  \
            double s = knn_rings_##SFX(cost, a, n, b, m, dim, w->rlo, w->rhi, v, HUGE_VAL);  \
            if (m - v > v)                                                                   \
                s += tsw__lb_keogh_q_##SFX(w, cost, b, v, m - v, dim, HUGE_VAL);             \
            return s;                                                                        \
        }                                                                                    \
        }                                                                                    \
    }
TSW__LB_DEFINE(double, f64)
TSW__LB_DEFINE(float, f32)

int tsw__cpu_lower_bound(const tsw_params *params, tsw_lb kind, int64_t bands, tsw_dtype dtype,
                         int64_t dim, const tsw_series *query, const tsw_collection *x,
                         double *out, const tsw_exec *exec)
{
    const size_t esz = tsw__dtype_size(dtype);
    const int64_t n = query->length, mmax = tsw__coll_maxlen(x);
    int nt = tsw__threads(exec);
    if (x->count < nt)
        nt = (int)x->count;
    int rc = TSW_OK;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        tsw__lbws w = {0};
        int ok = tsw__lbws_init(&w, n, mmax, dim, esz) == TSW_OK;
        if (!ok) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            rc = TSW_ENOMEM;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16)
#endif
        for (int64_t i = 0; i < x->count; ++i) {
            if (!ok)
                continue;
            int64_t m = tsw__coll_len(x, i);
            const void *b = tsw__coll_row(x, i, dim, esz);
            tsw__lbws_shape(&w, params, n, m);
            double v;
            if (dtype == TSW_F32) {
                if (kind != TSW_LB_KIM && kind != TSW_LB_KEOGH_DATA && w.env_query != 0) {
                    tsw__lb_query_env_f32(&w, query->values, n, m, dim);
                    w.env_query = 0;
                }
                v = tsw__lb_raw_f32(&w, params, kind, bands, query->values, n, b, m, dim);
            } else {
                if (kind != TSW_LB_KIM && kind != TSW_LB_KEOGH_DATA && w.env_query != 0) {
                    tsw__lb_query_env_f64(&w, query->values, n, m, dim);
                    w.env_query = 0;
                }
                v = tsw__lb_raw_f64(&w, params, kind, bands, query->values, n, b, m, dim);
            }
            out[i] = tsw__finish(params, v);
        }
        if (ok)
            tsw__lbws_free(&w);
    }
    return rc;
}

/* ---- the k nearest neighbours ----------------------------------------------------------- */

#define TSW__KNN_BLOCK 256

typedef struct tsw__nb {
    double key; /* the returned value (float-rounded for float32): the order */
    double raw; /* the DP's last cell */
    int64_t idx;
} tsw__nb;

typedef struct tsw__knn_job {
    const tsw_params *p;
    tsw_dtype dt;
    int64_t dim, k;
    const tsw_collection *q, *x;
    const tsw_exec *ex;
    const double *self_q, *self_x; /* soft-DTW divergence: self values */
    tsw__nb *best;                  /* (q->count, k), sorted by (key, idx) */
    int64_t *have;                  /* entries of each row */
    double *thr;                    /* the k-th raw value times (1 + slack), +inf until full */
    int64_t nblocks, block, total;
    int cascade;                    /* DTW with a cost the box bounds hold for */
    int lanes;                      /* cascade, one length each: DTW in SIMD lanes */
    int diag;                       /* cascade, all of one length: the diagonal paths cap the
                                       thresholds */
    void *xlo, *xhi;                /* cascade, one length each: every series' envelope over
                                       the queries' rows ((x->count, n, dim)), or NULL */
    int64_t done;                   /* atomics */
    int status;
} tsw__knn_job;

static int tsw__knn_poll(tsw__knn_job *job, int tid, int64_t *last)
{
    return tsw__poll_parallel(job->ex, tid, last, &job->done, job->total, &job->status);
}

static double tsw__knn_thr(const tsw__knn_job *job, int64_t qi)
{
    double t;
    __atomic_load(&job->thr[qi], &t, __ATOMIC_RELAXED);
    return t;
}

/* Slack of the pruning threshold: the float sums of a path of n + m cells and of a bound
 * may round apart by a relative (n + m) u each way. */
static double tsw__knn_slack(tsw_dtype dt, int64_t n, int64_t m)
{
    double u = dt == TSW_F32 ? FLT_EPSILON : DBL_EPSILON;
    return 4.0 * (double)(n + m + 8) * u;
}

/* Offer (raw, j) to query qi's top k. */
static void tsw__knn_offer(tsw__knn_job *job, int64_t qi, int64_t j, double raw, double slack)
{
    double v = raw;
    if (job->self_q)
        v -= 0.5 * (job->self_q[qi] + job->self_x[j]);
    double key = tsw__finish(job->p, v);
    if (job->dt == TSW_F32)
        key = (double)(float)key;
    if (key != key)
        key = HUGE_VAL;
    tsw__nb *row = job->best + qi * job->k;
#ifdef _OPENMP
#pragma omp critical(tsw_knn_offer)
#endif
    {
        int64_t h = job->have[qi];
        int enter = h < job->k || key < row[h - 1].key ||
                    (key == row[h - 1].key && j < row[h - 1].idx);
        if (enter) {
            int64_t pos = h < job->k ? h : h - 1;
            while (pos > 0 && (row[pos - 1].key > key ||
                               (row[pos - 1].key == key && row[pos - 1].idx > j))) {
                row[pos] = row[pos - 1];
                --pos;
            }
            row[pos].key = key;
            row[pos].raw = raw;
            row[pos].idx = j;
            if (h < job->k)
                job->have[qi] = ++h;
            if (h == job->k && !job->self_q) {
                double t = row[h - 1].raw * (1 + slack);
                /* a raw value above the k-th's can still round to its key (sqrt, float):
                 * the slack keeps it */
                __atomic_store(&job->thr[qi], &t, __ATOMIC_RELAXED);
            }
        }
    }
}

/* The waiting group of query qi's candidates (tsw__lbws: lws), computed in lanes that
 * abandon together; each value at or below the threshold (read now) is offered. */
#define TSW__KNN_FLUSH(T, SFX)                                                               \
    static void tsw__knn_flush_##SFX(tsw__knn_job *job, tsw__lbws *w, int64_t qi,            \
                                     const T *a, int64_t n)                                  \
    {                                                                                        \
        const int64_t dim = job->dim, g = w->gn;                                             \
        if (g == 0)                                                                          \
            return;                                                                          \
        w->gn = 0;                                                                           \
        tsw__pair pairs[TSW__MAX_LANES];                                                     \
        const double *rowb[TSW__MAX_LANES], *colb[TSW__MAX_LANES];                           \
        double out[TSW__MAX_LANES];                                                          \
        const int64_t m = tsw__coll_len(job->x, w->gj[0]);                                   \
        for (int64_t l = 0; l < g; ++l) {                                                    \
            pairs[l] = (tsw__pair){0};                                                       \
            pairs[l].a = a;                                                                  \
            pairs[l].n = n;                                                                  \
            pairs[l].b = tsw__coll_row(job->x, w->gj[l], dim, sizeof(T));                    \
            pairs[l].m = m;                                                                  \
            rowb[l] = w->gcb + l * w->gstride;                                               \
            colb[l] = rowb[l] + n + 1;                                                       \
        }                                                                                    \
        const double thr = tsw__knn_thr(job, qi), slack = tsw__knn_slack(job->dt, n, m);     \
        const int same = w->ga == (const void *)a;                                           \
        w->ga = a;                                                                           \
        if (tsw__pair_lanes_ea(job->p, job->dt, dim, pairs, g, w->lws, out, rowb, colb, thr, \
                               same) != g) {                                                 \
            w->ga = NULL;                                                                    \
            for (int64_t l = 0; l < g; ++l) /* no lane kernel here: one at a time */         \
                out[l] = knn_ea_dtw_##SFX(job->p->cost, a, n, (const T *)pairs[l].b, m, dim, \
                                          w->rlo, w->rhi, rowb[l], colb[l], thr,             \
                                          (T *)w->prev, (T *)w->cur);                        \
        }                                                                                    \
        for (int64_t l = 0; l < g; ++l)                                                      \
            if (out[l] <= thr || thr == HUGE_VAL)                                            \
                tsw__knn_offer(job, qi, w->gj[l], out[l], slack);                            \
    }
TSW__KNN_FLUSH(double, f64)
TSW__KNN_FLUSH(float, f32)

#define TSW__KNN_CAND(T, SFX)                                                                \
    static void tsw__knn_cand_##SFX(tsw__knn_job *job, tsw__lbws *w, int64_t qi,             \
                                    const T *a, int64_t n, int64_t j)                        \
    {                                                                                        \
        const size_t esz = sizeof(T);                                                        \
        const int64_t dim = job->dim, m = tsw__coll_len(job->x, j);                          \
        const T *b = (const T *)tsw__coll_row(job->x, j, dim, esz);                          \
        const tsw_cost cost = job->p->cost;                                                  \
        const double slack = tsw__knn_slack(job->dt, n, m);                                  \
        double thr = tsw__knn_thr(job, qi);                                                  \
        tsw__lbws_shape(w, job->p, n, m);                                                    \
        /* the bounds of the rows and columns still to come: into the scratch, or straight  \
         * into the candidate's slot of the waiting group (lanes) */                        \
        double *rb = w->cbr, *cb = w->cbc;                                                   \
        if (w->lws) {                                                                        \
            rb = w->gcb + (int64_t)w->gn * w->gstride;                                       \
            cb = rb + n + 1;                                                                 \
        }                                                                                    \
        int bounded = 0;                                                                     \
        if (thr < HUGE_VAL && !job->cascade) {                                               \
            if (knn_rings_##SFX(cost, a, n, b, m, dim, w->rlo, w->rhi, 3, thr) > thr)        \
                return;                                                                      \
        } else if (thr < HUGE_VAL) {                                                         \
            /* (LB_Keogh on the query's envelope ordered the block: at most thr here) */     \
            const T *xl = job->xlo ? (const T *)job->xlo + j * n * dim : NULL;               \
            const T *xh = job->xhi ? (const T *)job->xhi + j * n * dim : NULL;               \
            if (tsw__lb_keogh_x_##SFX(w, cost, a, n, b, m, dim, xl, xh, thr) > thr)          \
                return;                                                                      \
            if (w->env_query != qi) {                                                        \
                tsw__lb_query_env_##SFX(w, a, n, m, dim);                                    \
                w->env_query = qi;                                                           \
            }                                                                                \
            if (tsw__lb_keogh_q_##SFX(w, cost, b, 0, m, dim, HUGE_VAL) > thr)                \
                return;                                                                      \
            /* scaled down by the slack for the sums' own rounding */                        \
            const double f = 1 - slack;                                                      \
            double s = 0;                                                                    \
            cb[m] = 0;                                                                       \
            for (int64_t t = m - 1; t >= 0; --t)                                             \
                cb[t] = (s += w->cq[t]) * f;                                                 \
            s = 0;                                                                           \
            rb[n] = 0;                                                                       \
            for (int64_t t = n - 1; t >= 0; --t)                                             \
                rb[t] = (s += w->cx[t]) * f;                                                 \
            bounded = 1;                                                                     \
        }                                                                                    \
        if (w->lws) { /* to the waiting group (without bounds: 0) */                         \
            if (!bounded) {                                                                  \
                for (int64_t t = 0; t <= n; ++t)                                             \
                    rb[t] = 0;                                                               \
                for (int64_t t = 0; t <= m; ++t)                                             \
                    cb[t] = 0;                                                               \
            }                                                                                \
            w->gj[w->gn++] = j;                                                              \
            if (w->gn == w->vl)                                                              \
                tsw__knn_flush_##SFX(job, w, qi, a, n);                                      \
            return;                                                                          \
        }                                                                                    \
        double raw = knn_ea_dtw_##SFX(cost, a, n, b, m, dim, w->rlo, w->rhi,                 \
                                      bounded ? rb : NULL, bounded ? cb : NULL, thr,         \
                                      (T *)w->prev, (T *)w->cur);                            \
        if (raw <= thr || thr == HUGE_VAL)                                                   \
            tsw__knn_offer(job, qi, j, raw, slack);                                          \
    }
TSW__KNN_CAND(double, f64)
TSW__KNN_CAND(float, f32)

/* A candidate's bound for the order of a block (raw units): LB_Keogh on the query's
 * envelope where the cascade runs (O(m), vectorised: much tighter than LB_Kim, so the
 * nearest come first and the block's loop stops at the first bound above the threshold),
 * else LB_Kim (O(1)). */
#define TSW__KNN_LB(T, SFX)                                                                  \
    static double tsw__knn_lb_##SFX(tsw__knn_job *job, tsw__lbws *w, int64_t qi, const T *a, \
                                    int64_t n, int64_t j)                                    \
    {                                                                                        \
        const int64_t dim = job->dim, m = tsw__coll_len(job->x, j);                          \
        const T *b = (const T *)tsw__coll_row(job->x, j, dim, sizeof(T));                    \
        tsw__lbws_shape(w, job->p, n, m);                                                    \
        if (!job->cascade)                                                                   \
            return knn_rings_##SFX(job->p->cost, a, n, b, m, dim, w->rlo, w->rhi, 3,          \
                                   HUGE_VAL);                                                \
        if (w->env_query != qi) {                                                            \
            tsw__lb_query_env_##SFX(w, a, n, m, dim);                                        \
            w->env_query = qi;                                                               \
        }                                                                                    \
        return tsw__lb_keogh_q_##SFX(w, job->p->cost, b, 0, m, dim, HUGE_VAL);               \
    }
TSW__KNN_LB(double, f64)
TSW__KNN_LB(float, f32)

/* The cost of the diagonal path of a (n) and x_j (n points too): an upper bound of their
 * DTW (the diagonal lies in every window of equal lengths), in double. */
#define TSW__KNN_DIAG(T, SFX)                                                                \
    static double tsw__knn_diag_##SFX(const tsw__knn_job *job, const T *a, int64_t n,        \
                                      int64_t j)                                             \
    {                                                                                        \
        const int64_t dim = job->dim;                                                        \
        const T *b = (const T *)tsw__coll_row(job->x, j, dim, sizeof(T));                    \
        double s = 0;                                                                        \
        for (int64_t i = 0; i < n; ++i) {                                                    \
            double t = 0;                                                                    \
            for (int64_t k = 0; k < dim; ++k)                                                \
                t += tsw_cost_term_f64(job->p->cost,                                         \
                                       (double)a[i * dim + k] - (double)b[i * dim + k]);     \
            s += tsw_cost_total_f64(job->p->cost, t);                                        \
        }                                                                                    \
        return s;                                                                            \
    }
TSW__KNN_DIAG(double, f64)
TSW__KNN_DIAG(float, f32)

/* Lowers query qi's threshold to ub (never raises it). */
static void tsw__knn_cap(tsw__knn_job *job, int64_t qi, double ub)
{
#ifdef _OPENMP
#pragma omp critical(tsw_knn_offer)
#endif
    {
        if (ub < job->thr[qi])
            __atomic_store(&job->thr[qi], &ub, __ATOMIC_RELAXED);
    }
}

typedef struct tsw__lbj {
    double lb;
    int64_t j;
} tsw__lbj;

/* (lb, j) order: the bound, ties to the lower index */
static inline int tsw__lbj_less(const tsw__lbj *a, const tsw__lbj *b)
{
    return a->lb < b->lb || (a->lb == b->lb && a->j < b->j);
}

/* A binary min-heap of cnt candidates in h[0 .. cnt): the block's order is taken from it one
 * candidate at a time, since the loop over the block mostly stops after a few (a sort of
 * the whole block cost more than the bounds that feed it on small data sets). */
static void tsw__lbj_sift(tsw__lbj *h, int64_t cnt, int64_t at)
{
    const tsw__lbj e = h[at];
    for (;;) {
        int64_t c = 2 * at + 1;
        if (c >= cnt)
            break;
        if (c + 1 < cnt && tsw__lbj_less(&h[c + 1], &h[c]))
            ++c;
        if (!tsw__lbj_less(&h[c], &e))
            break;
        h[at] = h[c];
        at = c;
    }
    h[at] = e;
}

static void tsw__lbj_heapify(tsw__lbj *h, int64_t cnt)
{
    for (int64_t at = cnt / 2 - 1; at >= 0; --at)
        tsw__lbj_sift(h, cnt, at);
}

/* The least candidate, removed; *cnt > 0. */
static tsw__lbj tsw__lbj_pop(tsw__lbj *h, int64_t *cnt)
{
    const tsw__lbj top = h[0];
    h[0] = h[--*cnt];
    if (*cnt > 1)
        tsw__lbj_sift(h, *cnt, 0);
    return top;
}

/* Other measures: the reference, abandoning TWED's rows above the threshold; the elastic
 * family's kernel, abandoning rows above it (LCSS, not a min-plus program, in full);
 * soft-DTW in full (its cells are not monotone). */
static void tsw__knn_cand_other(tsw__knn_job *job, void *ws, int64_t qi, const void *a,
                                int64_t n, int64_t j)
{
    const size_t esz = tsw__dtype_size(job->dt);
    const int64_t m = tsw__coll_len(job->x, j);
    tsw__pair pr = {0};
    int64_t oq = tsw__coll_off(job->q, qi), ox = tsw__coll_off(job->x, j);
    pr.a = a;
    pr.n = n;
    pr.b = tsw__coll_row(job->x, j, job->dim, esz);
    pr.m = m;
    if (job->p->measure == TSW_TWED) {
        pr.ta = job->q->times ? (const char *)job->q->times + (size_t)oq * esz : NULL;
        pr.tb = job->x->times ? (const char *)job->x->times + (size_t)ox * esz : NULL;
    }
    double slack = tsw__knn_slack(job->dt, n, m), thr = tsw__knn_thr(job, qi), raw;
    if (job->p->measure == TSW_SOFT_DTW && job->ex->impl != TSW_IMPL_REFERENCE)
        tsw__pair_fast(job->p, job->dt, job->dim, &pr, ws, &raw);
    else if (TSW_IS_FAMILY(job->p->measure) && job->ex->impl != TSW_IMPL_REFERENCE)
        tsw__family_pair(job->p, job->dt, job->dim, &pr, ws, thr, &raw);
    else if (job->p->measure == TSW_SHAPE_DTW && job->ex->impl == TSW_IMPL_REFERENCE)
        tsw__shape_pair(job->p, job->dt, job->dim, &pr, ws, &raw); /* (no bound: its value */
    else if (job->p->measure == TSW_SHAPE_DTW) /* is no DP's minimum) */
        tsw__shape_pair_fast(job->p, job->dt, job->dim, &pr, ws, &raw, tsw__cpu_level());
    else
        tsw__pair_reference_bounded(job->p, job->dt, job->dim, &pr, ws, thr, &raw);
    if (job->p->measure == TSW_SOFT_DTW || raw <= thr || thr == HUGE_VAL)
        tsw__knn_offer(job, qi, j, raw, slack);
}

static int tsw__knn_self(const tsw_params *p, tsw_dtype dt, int64_t dim,
                         const tsw_collection *c, double *self, const tsw_exec *ex)
{
    int64_t mx = tsw__coll_maxlen(c);
    size_t ws_bytes = tsw__pair_ws_bytes(p, dt, dim, mx, mx);
    int rc = TSW_OK;
    const size_t esz = tsw__dtype_size(dt);
#ifdef _OPENMP
#pragma omp parallel num_threads(tsw__threads(ex))
#endif
    {
        void *ws = tsw__malloc_aligned(ws_bytes);
        if (!ws) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            rc = TSW_ENOMEM;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 4)
#endif
        for (int64_t i = 0; i < c->count; ++i) {
            if (!ws)
                continue;
            tsw__pair pr = {0};
            pr.a = pr.b = tsw__coll_row(c, i, dim, esz);
            pr.n = pr.m = tsw__coll_len(c, i);
            if (ex->impl == TSW_IMPL_REFERENCE)
                tsw__pair_reference(p, dt, dim, &pr, ws, &self[i]);
            else
                tsw__pair_fast(p, dt, dim, &pr, ws, &self[i]);
        }
        tsw__free_aligned(ws);
    }
    return rc;
}

/* Every series' envelope over the rows of a query of n points (x's series all m points):
 * made once a call rather than once a (query, candidate) pair. Where the 2 (count n dim)
 * values do not fit (over 1 GiB, or the allocation fails), job->xlo stays NULL and the
 * cascade makes each envelope when it needs it. */
static int tsw__knn_envelopes(tsw__knn_job *job, int64_t n, int64_t m, size_t esz)
{
    const tsw_collection *x = job->x;
    const int64_t dim = job->dim;
    double bytes = 2.0 * (double)x->count * (double)n * (double)dim * (double)esz;
    if (bytes > (double)(1ull << 30))
        return TSW_OK;
    unsigned char *env = tsw__malloc((size_t)bytes);
    if (!env)
        return TSW_OK;
    const size_t half = (size_t)bytes / 2;
    int rc = TSW_OK, nt = tsw__threads(job->ex);
    if (x->count < nt)
        nt = (int)x->count;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        size_t sb = ((size_t)n + (size_t)m + 2) * 5 * sizeof(int64_t);
        int64_t *sp = tsw__malloc(sb);
        if (!sp) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            rc = TSW_ENOMEM;
        } else {
            tsw__spans(job->p, n, m, sp, sp + n + 1, sp + 2 * n + 2, sp + 2 * n + m + 3);
        }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t j = 0; j < x->count; ++j) {
            if (!sp)
                continue;
            const int64_t *rlo = sp, *rhi = rlo + n + 1;
            int64_t *dq = sp + 2 * n + 2 * m + 4;
            const void *b = tsw__coll_row(x, j, dim, esz);
            size_t off = (size_t)j * (size_t)n * (size_t)dim * esz;
            if (job->dt == TSW_F32)
                knn_envelope_f32(b, m, dim, rlo, rhi, n, (float *)(env + off),
                                 (float *)(env + half + off), dq);
            else
                knn_envelope_f64(b, m, dim, rlo, rhi, n, (double *)(env + off),
                                 (double *)(env + half + off), dq);
        }
        tsw__free(sp);
    }
    if (rc) {
        tsw__free(env);
        return rc;
    }
    job->xlo = env;
    job->xhi = env + half;
    return TSW_OK;
}

int tsw__cpu_knn(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                 const tsw_collection *q, const tsw_collection *x, int64_t k, void *distance,
                 int64_t *index, const tsw_exec *exec)
{
    tsw__knn_job job;
    memset(&job, 0, sizeof(job));
    const size_t esz = tsw__dtype_size(dtype);
    const int64_t nq = q->count, nmax = tsw__coll_maxlen(q), mmax = tsw__coll_maxlen(x);
    job.p = params;
    job.dt = dtype;
    job.dim = dim;
    job.k = k;
    job.q = q;
    job.x = x;
    job.ex = exec;
    job.cascade = params->measure == TSW_DTW && params->cost != TSW_COST_COSINE;
    {
        /* TSWARP_KNN_LANES=0: the candidates one at a time and no diagonal cap, as before
         * (the benchmark's knob) */
        const char *kl = getenv("TSWARP_KNN_LANES");
        /* one channel: the lanes' costs round as the reference's (several channels' sums
         * may fuse their products there, and tsw_knn returns the reference's bits) */
        job.lanes = job.cascade && dim == 1 && !q->lengths && !x->lengths &&
                    exec->impl != TSW_IMPL_REFERENCE &&
                    tsw__lanes_width(params, dtype, dim) > 0 && !(kl && strcmp(kl, "0") == 0);
        job.diag = job.cascade && !q->lengths && !x->lengths && q->length == x->length &&
                   !(kl && strcmp(kl, "0") == 0);
    }
    {
        /* a query's candidates in few blocks (each sorted by its bound: the best come
         * first and bring the threshold down), yet enough tasks for the threads */
        int64_t nt0 = tsw__threads(exec), per_q = (4 * nt0 + nq - 1) / nq;
        per_q = per_q < 1 ? 1 : per_q;
        job.block = (x->count + per_q - 1) / per_q;
        job.block = job.block < TSW__KNN_BLOCK ? TSW__KNN_BLOCK : job.block;
        job.nblocks = (x->count + job.block - 1) / job.block;
    }
    job.total = nq * x->count;
    int rc = TSW_OK;
    double *self = NULL;
    size_t nb_bytes;
    if (tsw__mul_size((size_t)nq * (size_t)k, sizeof(tsw__nb), &nb_bytes))
        return TSW_EOVERFLOW;
    job.best = tsw__malloc(nb_bytes);
    job.have = tsw__malloc((size_t)nq * sizeof(int64_t));
    job.thr = tsw__malloc((size_t)nq * sizeof(double));
    if (!job.best || !job.have || !job.thr) {
        rc = TSW_ENOMEM;
        goto out;
    }
    for (int64_t i = 0; i < nq; ++i) {
        job.have[i] = 0;
        job.thr[i] = HUGE_VAL;
    }
    if (params->measure == TSW_SOFT_DTW && params->normalize) {
        self = tsw__malloc((size_t)(nq + x->count) * sizeof(double));
        if (!self) {
            rc = TSW_ENOMEM;
            goto out;
        }
        if ((rc = tsw__knn_self(params, dtype, dim, q, self, exec)) ||
            (rc = tsw__knn_self(params, dtype, dim, x, self + nq, exec)))
            goto out;
        job.self_q = self;
        job.self_x = self + nq;
    }
    if (job.cascade && !q->lengths && !x->lengths &&
        (rc = tsw__knn_envelopes(&job, q->length, x->length, esz)))
        goto out;
    int64_t ntasks = nq * job.nblocks;
    int nt = tsw__threads(exec);
    if (ntasks < nt)
        nt = (int)ntasks;
    size_t ws_bytes = tsw__pair_ws_bytes(params, dtype, dim, nmax, mmax);
    job.status = TSW_OK;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        tsw__lbws w = {0};
        void *ws = NULL;
        int ok = tsw__lbws_init(&w, nmax, mmax, dim, esz) == TSW_OK;
        if (ok && params->measure != TSW_DTW && !(ws = tsw__malloc_aligned(ws_bytes))) {
            tsw__lbws_free(&w);
            ok = 0;
        }
        tsw__lbj *ord = NULL, *first = NULL; /* the block's heap; its first k taken */
        if (ok && params->measure == TSW_DTW &&
            !(ord = tsw__malloc((size_t)(job.block + (k < job.block ? k : job.block)) *
                                sizeof(tsw__lbj)))) {
            tsw__lbws_free(&w);
            ok = 0;
        }
        if (ok && job.lanes) { /* one shape: candidates in SIMD lanes (else one at a time) */
            size_t lb = tsw__lanes_ws_bytes(params, dtype, dim, nmax, mmax);
            w.vl = tsw__lanes_width(params, dtype, dim);
            w.gstride = nmax + mmax + 2;
            w.lws = lb ? tsw__malloc_aligned(lb) : NULL;
            w.gcb = tsw__malloc((size_t)w.vl * (size_t)w.gstride * sizeof(double));
            if (!w.lws || !w.gcb) {
                tsw__free_aligned(w.lws);
                tsw__free(w.gcb);
                w.lws = NULL;
                w.gcb = NULL;
            }
        }
        if (ord)
            first = ord + job.block;
        if (!ok)
            __atomic_store_n(&job.status, TSW_ENOMEM, __ATOMIC_RELAXED);
        int64_t last = tsw__now_ns();
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t t = 0; t < ntasks; ++t) {
            if (__atomic_load_n(&job.status, __ATOMIC_RELAXED) != TSW_OK)
                continue;
            int64_t qi = t / job.nblocks, b0 = (t % job.nblocks) * job.block;
            int64_t b1 = b0 + job.block < x->count ? b0 + job.block : x->count;
            int64_t n = tsw__coll_len(q, qi);
            const void *a = tsw__coll_row(q, qi, dim, esz);
            if (params->measure != TSW_DTW) {
                for (int64_t j = b0; j < b1; ++j) {
                    if ((j & 7) == 0 && tsw__knn_poll(&job, tid, &last))
                        break;
                    tsw__knn_cand_other(&job, ws, qi, a, n, j);
                }
            } else {
                /* the block in order of its bounds: the nearest come first, and once a
                 * bound exceeds the threshold so do all that follow */
                for (int64_t j = b0; j < b1; ++j) {
                    ord[j - b0].j = j;
                    ord[j - b0].lb = dtype == TSW_F32 ? tsw__knn_lb_f32(&job, &w, qi, a, n, j)
                                                      : tsw__knn_lb_f64(&job, &w, qi, a, n, j);
                }
                /* the block in (bound, index) order from a heap; the first k taken
                 * before the loop (ord[0 .. k)) */
                int64_t hn = b1 - b0, taken = 0;
                tsw__lbj_heapify(ord, hn);
                if (job.diag && b1 - b0 >= k) {
                    /* the k least-bounded candidates' diagonal paths: at least k series are
                     * within the largest of them, so the k-th best is too (the slack covers
                     * the DP's own rounding) */
                    double ub = 0;
                    for (; taken < k; ++taken) {
                        first[taken] = tsw__lbj_pop(ord, &hn);
                        const int64_t j = first[taken].j;
                        double v = dtype == TSW_F32 ? tsw__knn_diag_f32(&job, a, n, j)
                                                    : tsw__knn_diag_f64(&job, a, n, j);
                        ub = v > ub ? v : ub;
                    }
                    tsw__knn_cap(&job, qi, ub * (1 + 2 * tsw__knn_slack(dtype, n, n)));
                }
                for (int64_t o = 0; o < b1 - b0; ++o) {
                    if ((o & 7) == 0 && tsw__knn_poll(&job, tid, &last))
                        break;
                    const tsw__lbj e = o < taken ? first[o] : tsw__lbj_pop(ord, &hn);
                    if (e.lb > tsw__knn_thr(&job, qi))
                        break;
                    if (dtype == TSW_F32)
                        tsw__knn_cand_f32(&job, &w, qi, a, n, e.j);
                    else
                        tsw__knn_cand_f64(&job, &w, qi, a, n, e.j);
                }
                if (dtype == TSW_F32) /* the group still waiting */
                    tsw__knn_flush_f32(&job, &w, qi, a, n);
                else
                    tsw__knn_flush_f64(&job, &w, qi, a, n);
            }
            __atomic_fetch_add(&job.done, b1 - b0, __ATOMIC_RELAXED);
        }
        if (ok) {
            tsw__lbws_free(&w);
            tsw__free_aligned(ws);
            tsw__free(ord);
        }
    }
    rc = job.status;
    if (rc == TSW_OK && exec->progress &&
        exec->progress(exec->progress_user, job.total, job.total))
        rc = TSW_ECANCELED;
    if (rc == TSW_OK) {
        for (int64_t i = 0; i < nq; ++i)
            for (int64_t r = 0; r < k; ++r) {
                const tsw__nb *e = &job.best[i * k + r];
                if (dtype == TSW_F32)
                    ((float *)distance)[i * k + r] = (float)e->key;
                else
                    ((double *)distance)[i * k + r] = e->key;
                index[i * k + r] = e->idx;
            }
    }
out:
    tsw__free(job.xlo);
    tsw__free(self);
    tsw__free(job.best);
    tsw__free(job.have);
    tsw__free(job.thr);
    return rc;
}
