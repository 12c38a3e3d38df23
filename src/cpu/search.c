/*
 * CPU subsequence search: the UCR Suite (Rakthanmanon et al., KDD 2012) for the k best
 * windows under DTW with a Sakoe-Chiba radius, z-normalised or raw, with an exclusion zone.
 *
 * The series is cut into chunks of windows (overlapping by query length - 1 points), taken
 * by the threads dynamically. In a chunk: running sums give each window's mean and std
 * (relative to the chunk's first value, which keeps them well conditioned), a prefix count
 * of value changes finds the constant windows (z-normalised values 0), and the data's
 * envelope is made where a window first needs it. Each window then meets the cascade:
 * LB_Kim's rings (first and last three), LB_Keogh on the query's envelope in order of the
 * query's magnitude, LB_Keogh on the data's envelope, and DTW that abandons with their
 * cumulative bounds (knn_impl.h); each step stops once it exceeds the pruning threshold.
 * Univariate series take the vectorised kernels of search_impl.h (portable and AVX2): the
 * windows' statistics and LB_Kim's first ring for the whole chunk at once, LB_Keogh in
 * blocks of 8 consecutive points (blocks in order of the query's magnitude).
 *
 * Seeds. The cascade prunes against the best distances found so far, so it works hardest
 * until a good match is found (a series scanned from its start meets its best match after
 * a third of it on average). Before the scan, every window is ranked by a proxy (the
 * distance of its piecewise means to the query's, O(16) a window from the prefix sums) and
 * the windows ranked best (mutually `exclusion` apart) are computed exactly: their
 * distances set the threshold the scan starts from. The proxy only orders the work; the
 * scan still sees every window once, so the result is the same as without seeds.
 *
 * The threshold with an exclusion zone: the greedy selection (best first, each kept when
 * far enough from those kept before) never picks above the (2k-1)-th greedy pick of any set
 * of windows, since each pick blocks at most two of a set of mutually distant windows. So
 * every thread keeps the windows it computed at or below the threshold, and the threshold
 * is the (2k-1)-th greedy pick of a thread's list (shared: the least of them), compared with
 * the slack of common/search.h that covers the running sums' rounding. At the end the kept windows are
 * recomputed exactly (two-pass mean and std) and selected greedily: the result does not
 * depend on the threads.
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/recurrence.h"
#include "../common/search.h"
#include "../internal.h"
#include "search.h"

#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define T double
#define SFX f64
#define INF TSW_INF_F64
#define SQRT sqrt
#include "knn_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT

#define TSW__SEARCH_ISA base
#include "search_impl.h"
#undef TSW__SEARCH_ISA

/* The per-chunk kernels' instance for this CPU. */
#if TSW_X86
#define TSW__SEARCH_PICK(name) (tsw__cpu_level() >= 2 ? name##_avx2 : name##_base)
#else
#define TSW__SEARCH_PICK(name) name##_base
#endif

#define TSW__CHUNK 8192            /* windows per chunk */
#define TSW__PROXY_BLOCK TSW__PROXY_MAXB /* windows a proxy call ranks */
#define TSW__PROXY_SEGS 16         /* the proxy's piecewise means */
#define TSW__KIM_DIM 16            /* LB_Kim for up to this many channels */

typedef struct tsw__hit {
    double d; /* raw DTW cost */
    int64_t start;
} tsw__hit;

typedef struct tsw__search {
    tsw_cost cost;
    tsw_dtype dt;
    int64_t dim, n, W, r, k, excl;
    int znorm;
    double slack_abs; /* common/search.h: 0 for raw windows (exact, ties by start) */
    const void *series;
    const double *qz, *qlo, *qhi; /* (n, dim) */
    const int64_t *order;         /* query points by decreasing magnitude */
    const int64_t *bo;            /* dim 1: LB_Keogh's blocks (their first points) by
                                     decreasing magnitude (nbo) */
    int64_t nbo;
    const int64_t *rlo, *rhi;     /* the band's spans (n) */
    const double *qp;             /* the query's piecewise means (nseg, dim): the proxy */
    int64_t nseg, ps, pg;         /* the proxy's segments; windows at multiples of ps
                                     points, segments of pg ps points */
    struct tsw__seed *seeds;      /* each thread's best-ranked windows (nt, nseed) */
    int64_t *nseeds;              /* (nt) */
    int64_t nseed;
    const tsw_exec *ex;
    double tau;                   /* shared threshold (raw), atomics */
    int64_t tau_start;
    int64_t done;
    int status;
} tsw__search;

static int tsw__hit_cmp(const void *pa, const void *pb)
{
    const tsw__hit *a = pa, *b = pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* Greedy selection over hits sorted by (d, start): indices of up to `want` picks into
 * pick[]; returns how many. */
static int64_t tsw__greedy(const tsw__hit *h, int64_t nh, int64_t excl, int64_t want,
                           int64_t *pick)
{
    int64_t np = 0;
    for (int64_t i = 0; i < nh && np < want; ++i) {
        int ok = 1;
        for (int64_t t = 0; t < np && ok; ++t) {
            int64_t d = h[i].start - h[pick[t]].start;
            ok = d >= excl || -d >= excl;
        }
        if (ok)
            pick[np++] = i;
    }
    return np;
}

/* The shared threshold alone: what the windows are pruned against. */
static double tsw__tau_only(tsw__search *s)
{
    double t;
    __atomic_load(&s->tau, &t, __ATOMIC_RELAXED);
    return t;
}

/* The threshold and the start of its window (ties at the threshold go to smaller starts). */
static double tsw__tau(tsw__search *s, int64_t *start)
{
    double t;
    __atomic_load(&s->tau, &t, __ATOMIC_RELAXED);
    *start = __atomic_load_n(&s->tau_start, __ATOMIC_RELAXED);
    return t;
}

/* A thread's list of hits; tsw__list_tidy sorts it, lowers the shared threshold from its
 * greedy picks and drops what can no longer be picked. */
typedef struct tsw__list {
    tsw__hit *h;
    int64_t n, cap, tidy_at;
    int64_t *pick;
    int64_t kim, kq, kd, dtw, ab; /* the cascade's counts */
} tsw__list;

static int tsw__list_push(tsw__list *l, double d, int64_t start)
{
    if (l->n == l->cap) {
        int64_t nc = l->cap ? 2 * l->cap : 256;
        tsw__hit *nh = tsw__malloc((size_t)nc * sizeof(tsw__hit));
        if (!nh)
            return TSW_ENOMEM;
        if (l->n)
            memcpy(nh, l->h, (size_t)l->n * sizeof(tsw__hit));
        tsw__free(l->h);
        l->h = nh;
        l->cap = nc;
    }
    l->h[l->n].d = d;
    l->h[l->n].start = start;
    ++l->n;
    return TSW_OK;
}

static void tsw__list_tidy(tsw__search *s, tsw__list *l)
{
    qsort(l->h, (size_t)l->n, sizeof(tsw__hit), tsw__hit_cmp);
    int64_t want = 2 * s->k - 1;
    int64_t np = tsw__greedy(l->h, l->n, s->excl, want, l->pick);
    int64_t ts;
    double tau;
#ifdef _OPENMP
#pragma omp critical(tsw_search_tau)
#endif
    {
        if (np == want) {
            const tsw__hit *last = &l->h[l->pick[np - 1]];
            if (last->d < s->tau || (last->d == s->tau && last->start < s->tau_start)) {
                double d = last->d; /* (a mutable copy: clang wants one for __atomic_store) */
                __atomic_store(&s->tau, &d, __ATOMIC_RELAXED);
                __atomic_store_n(&s->tau_start, last->start, __ATOMIC_RELAXED);
            }
        }
        tau = tsw__tau(s, &ts); /* the pair, read together */
    }
    double lim = tsw_search_limit(tau, s->slack_abs);
    int64_t w = 0;
    for (int64_t i = 0; i < l->n; ++i) {
        const tsw__hit *e = &l->h[i];
        if (e->d > lim || (!s->znorm && e->d == tau && e->start > ts))
            continue;
        l->h[w++] = *e;
    }
    l->n = w;
    l->tidy_at = 2 * w > 4 * s->k + 64 ? 2 * w : 4 * s->k + 64;
}

/* Per-thread scratch. */
typedef struct tsw__sws {
    const double *x;      /* the chunk's values: the series' own (float64) or xbuf */
    double *xbuf, *lo, *hi; /* chunk values as double and data envelope ((C + n - 1) dim) */
    double *s1, *s2;      /* prefix sums ((C + n) dim) */
    int64_t *ch;          /* prefix count of changes ((C + n) dim) */
    double *g, *h;        /* tsw__env_range's scratch (C + 3 n) */
    double *wmu, *winv;   /* every window's mean and 1 / std (C dim) */
    const double *mu, *inv; /* the current window's: views into wmu, winv */
    double *lb0;          /* dim 1: LB_Kim's first ring of every window (C) */
    double *pv;           /* the proxy of a block of windows (TSW__PROXY_BLOCK) */
    double *tz;           /* (n dim) */
    double *cq, *cx, *cbc, *cbr; /* (n + 1) */
    double *prev, *cur;   /* (n) */
    void *block;
} tsw__sws;

static int tsw__sws_init(tsw__sws *w, int64_t C, int64_t n, int64_t dim)
{
    int64_t P = C + n;
    size_t pd = (size_t)P * (size_t)dim;
    size_t bytes = pd * 8 * 8 + (size_t)(P + 2 * n + 1) * 16 + (size_t)n * (size_t)dim * 8 +
                   (size_t)(n + 1) * 8 * 6 + (size_t)(C + TSW__PROXY_BLOCK) * 8 + 64 * 24;
    unsigned char *p = tsw__malloc(bytes);
    if (!p)
        return TSW_ENOMEM;
    w->block = p;
#define TSW__TAKE(ptr, sz)                                                                   \
    do {                                                                                     \
        (ptr) = (void *)p;                                                                   \
        p += (((size_t)(sz) + 63) & ~(size_t)63);                                            \
    } while (0)
    TSW__TAKE(w->xbuf, pd * 8);
    TSW__TAKE(w->lo, pd * 8);
    TSW__TAKE(w->hi, pd * 8);
    TSW__TAKE(w->s1, pd * 8);
    TSW__TAKE(w->s2, pd * 8);
    TSW__TAKE(w->ch, pd * 8);
    TSW__TAKE(w->g, (size_t)(P + 2 * n + 1) * 8);
    TSW__TAKE(w->h, (size_t)(P + 2 * n + 1) * 8);
    TSW__TAKE(w->wmu, pd * 8);
    TSW__TAKE(w->winv, pd * 8);
    TSW__TAKE(w->tz, (size_t)n * (size_t)dim * 8);
    TSW__TAKE(w->cq, (size_t)(n + 1) * 8);
    TSW__TAKE(w->cx, (size_t)(n + 1) * 8);
    TSW__TAKE(w->cbc, (size_t)(n + 1) * 8);
    TSW__TAKE(w->cbr, (size_t)(n + 1) * 8);
    TSW__TAKE(w->prev, (size_t)n * 8);
    TSW__TAKE(w->cur, (size_t)n * 8);
    TSW__TAKE(w->lb0, (size_t)C * 8);
    TSW__TAKE(w->pv, (size_t)TSW__PROXY_BLOCK * 8);
#undef TSW__TAKE
    return TSW_OK;
}

/* LB_Kim's rings of window base (first and last three, within the band), stopping above
 * stop after each: the window's first and last points z-normalised once. */
static double tsw__search_kim(const tsw__search *s, const tsw__sws *w, int64_t base,
                              double stop)
{
    const int64_t n = s->n, dim = s->dim;
    double zf[3 * TSW__KIM_DIM], zb[3 * TSW__KIM_DIM];
    if (dim > TSW__KIM_DIM)
        return 0;
    int64_t rings = n == 1 ? 1 : n / 2 < 3 ? n / 2 : 3;
    for (int64_t t = 0; t < rings; ++t)
        for (int64_t c = 0; c < dim; ++c) {
            zf[t * dim + c] = (w->x[(base + t) * dim + c] - w->mu[c]) * w->inv[c];
            zb[t * dim + c] = (w->x[(base + n - 1 - t) * dim + c] - w->mu[c]) * w->inv[c];
        }
    const double *q = s->qz, *qb = s->qz + (n - 1) * dim;
    if (n == 1) /* the one cell */
        return tsw_cost_local_f64(s->cost, q, zf, dim);
    double lb = 0;
    for (int64_t t = 0; t < rings; ++t) {
        for (int back = 0; back < 2; ++back) {
            double best = HUGE_VAL;
            /* ring t: cells (t, u) and (u, t), u <= t, |i - j| <= r; the back ring mirrored:
             * query point n-1-i against window point n-1-j */
            for (int64_t u = 0; u <= t; ++u) {
                if (t - u > s->r)
                    continue;
                const double *qi = back ? qb - t * dim : q + t * dim;
                const double *zj = (back ? zb : zf) + u * dim;
                double c1 = tsw_cost_local_f64(s->cost, qi, zj, dim);
                best = c1 < best ? c1 : best;
                if (u < t) {
                    const double *qu = back ? qb - u * dim : q + u * dim;
                    const double *zt = (back ? zb : zf) + t * dim;
                    double c2 = tsw_cost_local_f64(s->cost, qu, zt, dim);
                    best = c2 < best ? c2 : best;
                }
            }
            lb += best;
            if (lb > stop)
                return lb;
        }
    }
    return lb;
}

/* The envelope of points [u, v) of x (P points, dim channels): lo/hi[t] = min/max of
 * x[t - r .. t + r] within [0, P), by van Herk and Gil-Werman's blocks of 2r + 1 (three
 * comparisons a point, no branches). g, h: scratch of v - u + 2r + 1 values. */
static void tsw__env_range(const double *x, int64_t P, int64_t dim, int64_t r, int64_t u,
                           int64_t v, double *lo, double *hi, double *g, double *h)
{
    const int64_t K = 2 * r + 1, L = v - u + 2 * r, base = u - r;
    for (int64_t c = 0; c < dim; ++c) {
        for (int pass = 0; pass < 2; ++pass) { /* 0: max, 1: min (negated values) */
            const double pad = -HUGE_VAL, sg = pass ? -1.0 : 1.0;
            for (int64_t i = 0; i < L; ++i) {
                int64_t t = base + i;
                double a = t >= 0 && t < P ? sg * x[t * dim + c] : pad;
                g[i] = (i % K) == 0 || !(g[i - 1] > a) ? a : g[i - 1];
            }
            for (int64_t i = L - 1; i >= 0; --i) {
                int64_t t = base + i;
                double a = t >= 0 && t < P ? sg * x[t * dim + c] : pad;
                h[i] = i == L - 1 || ((i + 1) % K) == 0 || !(h[i + 1] > a) ? a : h[i + 1];
            }
            double *out = pass ? lo : hi;
            for (int64_t i = 0; i < v - u; ++i) {
                double m = h[i] > g[i + K - 1] ? h[i] : g[i + K - 1];
                out[(u + i) * dim + c] = sg * m;
            }
        }
    }
}

/* Mean and 1 / std of each channel of v (n, dim), two passes; constant: 0 scale. */
static void tsw__znorm_stats(const double *v, int64_t n, int64_t dim, double *mu, double *inv)
{
    for (int64_t c = 0; c < dim; ++c)
        tsw_search_stats2(v + c, n, dim, mu + c, inv + c);
}

/* Points w->x at chunk c0's values (float32 copied to double) and computes its windows'
 * statistics (and, dim 1, LB_Kim's first ring); c: the chunk's view. */
static void tsw__search_load(const tsw__search *s, tsw__sws *w, int64_t c0, tsw__schunk *c)
{
    const int64_t n = s->n, dim = s->dim;
    const int64_t nw = c0 + TSW__CHUNK < s->W ? TSW__CHUNK : s->W - c0;
    const int64_t P = nw + n - 1; /* points of the chunk */
    const size_t esz = tsw__dtype_size(s->dt);
    const char *src = (const char *)s->series + (size_t)c0 * (size_t)dim * esz;
    if (s->dt == TSW_F32) {
        for (int64_t t = 0; t < P * dim; ++t)
            w->xbuf[t] = (double)((const float *)src)[t];
        w->x = w->xbuf;
    } else {
        w->x = (const double *)src;
    }
    c->n = n;
    c->dim = dim;
    c->nw = nw;
    c->P = P;
    c->znorm = s->znorm;
    c->cost = s->cost;
    c->x = w->x;
    c->s1 = w->s1;
    c->s2 = w->s2;
    c->ch = w->ch;
    c->wmu = w->wmu;
    c->winv = w->winv;
    c->lb0 = w->lb0;
    c->qz = s->qz;
    TSW__SEARCH_PICK(tsw__search_prep)(c);
    /* the windows whose variance the block sums could not resolve (search.h: winv -1): two
     * passes over their values (tz: 2 dim values, n >= 2 here, a one-point window being
     * constant) */
    if (s->znorm)
        for (int64_t t = 0; t < nw * dim; ++t)
            if (w->winv[t] < 0) {
                const int64_t b = t / dim, k = t % dim;
                tsw__znorm_stats(w->x + b * dim, n, dim, w->tz, w->tz + dim);
                w->wmu[t] = w->tz[k];
                w->winv[t] = w->tz[dim + k];
            }
    if (dim == 1)
        TSW__SEARCH_PICK(tsw__search_lb0)(c);
}

/* dim 1: LB_Kim's rings 1 and 2 of the window at xb (mean mu, 1 / std inv) added to its
 * first ring lb, stopping above stop after each. */
static double tsw__search_kim12(const tsw__search *s, const double *xb, double mu, double inv,
                                double lb, double stop)
{
    const int64_t n = s->n;
    const int64_t rings = n == 1 ? 1 : n / 2 < 3 ? n / 2 : 3;
    if (rings < 2)
        return lb;
    const int sq = s->cost == TSW_COST_SQEUCLIDEAN;
    const double *q = s->qz;
    double zf[3], zb[3];
    for (int64_t t = 0; t < rings; ++t) {
        zf[t] = (xb[t] - mu) * inv;
        zb[t] = (xb[n - 1 - t] - mu) * inv;
    }
#define TSW__C1(d) (sq ? (d) * (d) : fabs(d))
    for (int64_t t = 1; t < rings; ++t) {
        for (int back = 0; back < 2; ++back) {
            const double *z = back ? zb : zf;
            const double qt = back ? q[n - 1 - t] : q[t];
            double best = HUGE_VAL;
            for (int64_t u = 0; u <= t; ++u) {
                if (t - u > s->r)
                    continue;
                const double c1 = TSW__C1(qt - z[u]);
                best = c1 < best ? c1 : best;
                if (u < t) {
                    const double qu = back ? q[n - 1 - u] : q[u];
                    const double c2 = TSW__C1(qu - z[t]);
                    best = c2 < best ? c2 : best;
                }
            }
            lb += best;
            if (lb > stop)
                return lb;
        }
    }
#undef TSW__C1
    return lb;
}

/* Window b's cascade after LB_Kim (which it passed): LB_Keogh on the query's envelope and on
 * the data's (made up to *env_e as windows first need it), then DTW with their cumulative
 * bounds; a window at or below bsf joins the thread's list. */
static int tsw__search_window(tsw__search *s, tsw__sws *w, tsw__list *l, const tsw__schunk *c,
                              int64_t c0, int64_t b, double bsf, int64_t *env_e)
{
    const int64_t n = s->n, dim = s->dim, r = s->r;
    const double *qz = s->qz, *qlo = s->qlo, *qhi = s->qhi;
    const int64_t *order = s->order;
    const tsw_cost cost = s->cost;
    const double *mu = c->wmu + b * dim, *inv = c->winv + b * dim;
    if (dim == 1) {
        double lb1 = TSW__SEARCH_PICK(tsw__search_keogh_q1)(
            w->x + b, mu[0], inv[0], qlo, qhi, s->bo, s->nbo, n, cost, bsf, w->cq);
        if (lb1 > bsf) {
            ++l->kq;
            return TSW_OK;
        }
    } else {
        /* LB_Keogh, the query's envelope, largest query values first, in blocks of 8
         * points (independent sums, then one test) */
        double lb1 = 0;
        int pruned = 0;
        for (int64_t o = 0; o < n && !pruned; o += 8) {
            int64_t e = o + 8 < n ? o + 8 : n;
            double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int64_t t = o; t < e; ++t) {
                int64_t j = order[t];
                double acc = 0;
                for (int64_t k = 0; k < dim; ++k) {
                    double z = (w->x[(b + j) * dim + k] - mu[k]) * inv[k];
                    double e1 = z - qhi[j * dim + k], e2 = qlo[j * dim + k] - z;
                    acc += tsw_cost_term_f64(cost, (e1 > 0 ? e1 : 0) + (e2 > 0 ? e2 : 0));
                }
                acc = tsw_cost_total_f64(cost, acc);
                w->cq[j] = acc;
                part[t - o] = acc;
            }
            lb1 += ((part[0] + part[1]) + (part[2] + part[3])) +
                   ((part[4] + part[5]) + (part[6] + part[7]));
            pruned = lb1 > bsf;
        }
        if (pruned) {
            ++l->kq;
            return TSW_OK;
        }
    }
    /* LB_Keogh, the data's envelope: point t sees [t - r, t + r] of the chunk (a window's
     * own points within that range are all in the chunk, and more points only loosen the
     * bound), made when a window first needs it: it is made for the points before env_e */
    if (b + n > *env_e) {
        tsw__env_range(w->x, c->P, dim, r, b > *env_e ? b : *env_e, b + n, w->lo, w->hi, w->g,
                       w->h);
        *env_e = b + n;
    }
    if (dim == 1) {
        double lb2 = TSW__SEARCH_PICK(tsw__search_keogh_x1)(
            w->lo + b, w->hi + b, mu[0], inv[0], qz, s->bo, s->nbo, n, cost, bsf, w->cx);
        if (lb2 > bsf) {
            ++l->kd;
            return TSW_OK;
        }
    } else {
        double lb2 = 0;
        for (int64_t o = 0; o < n; ++o) {
            int64_t i = order[o];
            double acc = 0;
            for (int64_t k = 0; k < dim; ++k) {
                double lo = (w->lo[(b + i) * dim + k] - mu[k]) * inv[k];
                double hi = (w->hi[(b + i) * dim + k] - mu[k]) * inv[k];
                double q = qz[i * dim + k], d = 0;
                if (q > hi)
                    d = q - hi;
                else if (q < lo)
                    d = lo - q;
                acc += tsw_cost_term_f64(cost, d);
            }
            acc = tsw_cost_total_f64(cost, acc);
            w->cx[i] = acc;
            lb2 += acc;
            if (lb2 > bsf) {
                ++l->kd;
                return TSW_OK;
            }
        }
    }
    ++l->dtw;
    double a1 = 0, a2 = 0, f = 1 - TSW_SEARCH_SLACK;
    w->cbc[n] = w->cbr[n] = 0;
    for (int64_t t = n - 1; t >= 0; --t) {
        a1 += w->cq[t];
        a2 += w->cx[t];
        w->cbc[t] = a1 * f;
        w->cbr[t] = a2 * f;
    }
    for (int64_t t = 0; t < n * dim; ++t) {
        int64_t k = t % dim;
        w->tz[t] = (w->x[b * dim + t] - mu[k]) * inv[k];
    }
    double d = knn_ea_dtw_f64(cost, qz, n, w->tz, n, dim, s->rlo, s->rhi, w->cbr, w->cbc, bsf,
                              w->prev, w->cur);
    if (!(d <= bsf)) {
        ++l->ab;
        return TSW_OK;
    }
    if (tsw__list_push(l, d, c0 + b))
        return TSW_ENOMEM;
    /* a hit below the threshold may lower it: share it now (the list was tidied only once
     * it had grown, and a thread that met the match among few hits kept it to itself, so
     * the other pruned against the seeds' threshold for the rest of the scan) */
    if (l->n >= l->tidy_at || d < tsw__tau_only(s))
        tsw__list_tidy(s, l);
    return TSW_OK;
}

static int tsw__search_chunk(tsw__search *s, tsw__sws *w, tsw__list *l, int64_t c0,
                             int64_t tid, int64_t *last)
{
    const int64_t dim = s->dim;
    tsw__schunk c;
    tsw__search_load(s, w, c0, &c);
    int64_t env_e = 0;
    if (dim == 1) {
        /* most windows stop at LB_Kim's first ring: a block's loop tests them against the
         * threshold read at its start (a larger limit than the current: it prunes less, never
         * wrongly), and reads the threshold again for those that pass */
        int64_t passed = 0;
        for (int64_t b0 = 0; b0 < c.nw; b0 += 1024) {
            if (tsw__poll_parallel(s->ex, (int)tid, last, &s->done, s->W, &s->status))
                return TSW_OK;
            const int64_t b1 = b0 + 1024 < c.nw ? b0 + 1024 : c.nw;
            double bsf = tsw_search_limit(tsw__tau_only(s), s->slack_abs);
            for (int64_t b = b0; b < b1; ++b) {
                if (c.lb0[b] > bsf)
                    continue;
                bsf = tsw_search_limit(tsw__tau_only(s), s->slack_abs);
                if (c.lb0[b] > bsf ||
                    tsw__search_kim12(s, w->x + b, c.wmu[b], c.winv[b], c.lb0[b], bsf) > bsf)
                    continue;
                ++passed;
                int rc = tsw__search_window(s, w, l, &c, c0, b, bsf, &env_e);
                if (rc)
                    return rc;
            }
        }
        l->kim += c.nw - passed;
        return TSW_OK;
    }
    for (int64_t b = 0; b < c.nw; ++b) {
        if ((b & 1023) == 0 &&
            tsw__poll_parallel(s->ex, (int)tid, last, &s->done, s->W, &s->status))
            return TSW_OK;
        const double bsf = tsw_search_limit(tsw__tau_only(s), s->slack_abs);
        w->mu = c.wmu + b * dim; /* the window's mean and 1 / std (raw: 0 and 1) */
        w->inv = c.winv + b * dim;
        if (tsw__search_kim(s, w, b, bsf) > bsf) {
            ++l->kim;
            continue;
        }
        int rc = tsw__search_window(s, w, l, &c, c0, b, bsf, &env_e);
        if (rc)
            return rc;
    }
    return TSW_OK;
}

/* ---- seeds ------------------------------------------------------------------------------ */

typedef struct tsw__seed {
    double p; /* the proxy */
    int64_t start;
} tsw__seed;

static int tsw__seed_cmp(const void *pa, const void *pb)
{
    const tsw__seed *a = pa, *b = pb;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

/* Offer window st (proxy p) to a thread's seeds (*cnt of cap, the worst at *worst): a seed
 * within `excl` of it keeps the better of the two; otherwise it replaces the worst. */
static void tsw__seed_offer(tsw__seed *sd, int64_t *cnt, int64_t cap, int64_t *worst,
                            int64_t excl, double p, int64_t st)
{
    int64_t at = -1;
    for (int64_t i = 0; i < *cnt; ++i) {
        int64_t d = sd[i].start - st;
        if (d < excl && -d < excl) {
            if (!(p < sd[i].p))
                return;
            at = i;
            break;
        }
    }
    if (at < 0)
        at = *cnt < cap ? (*cnt)++ : *worst;
    sd[at].p = p;
    sd[at].start = st;
    int64_t wi = 0;
    for (int64_t i = 1; i < *cnt; ++i)
        if (sd[i].p > sd[wi].p)
            wi = i;
    *worst = wi;
}

/* The windows of chunk c0 that start at multiples of s->ps ranked by the proxy into the
 * thread's seeds. The proxy's sums come straight from the series, a block of ps points at
 * a time. */
static void tsw__seed_chunk(tsw__search *s, tsw__sws *w, int tid, int64_t c0)
{
    const int64_t n = s->n, dim = s->dim, S = s->ps;
    const int64_t nw = c0 + TSW__CHUNK < s->W ? TSW__CHUNK : s->W - c0;
    const int64_t P = nw + n - 1, V = P / S;
    const size_t esz = tsw__dtype_size(s->dt);
    const char *src = (const char *)s->series + (size_t)c0 * (size_t)dim * esz;
    double *ps1 = w->s1, *ps2 = w->s2, *x0 = w->wmu; /* x0: each channel's first value */
    for (int64_t k = 0; k < dim; ++k) {
        const double v0 = s->dt == TSW_F32 ? (double)((const float *)src)[k]
                                           : ((const double *)src)[k];
        x0[k] = v0;
        double a1 = 0, a2 = 0;
        ps1[k] = ps2[k] = 0;
        for (int64_t v = 0; v < V; ++v) {
            double b1 = 0, b2 = 0;
            for (int64_t t = v * S; t < (v + 1) * S; ++t) {
                const double e = (s->dt == TSW_F32 ? (double)((const float *)src)[t * dim + k]
                                                   : ((const double *)src)[t * dim + k]) - v0;
                b1 += e;
                b2 += e * e;
            }
            a1 += b1;
            a2 += b2;
            ps1[(v + 1) * dim + k] = a1;
            ps2[(v + 1) * dim + k] = a2;
        }
    }
    tsw__seed *sd = s->seeds + (int64_t)tid * s->nseed;
    int64_t *cnt = &s->nseeds[tid], worst = 0;
    for (int64_t i = 1; i < *cnt; ++i)
        if (sd[i].p > sd[worst].p)
            worst = i;
    const int64_t nu = (nw + S - 1) / S; /* windows 0, S, 2 S, .. of the chunk */
    for (int64_t u0 = 0; u0 < nu; u0 += TSW__PROXY_BLOCK) {
        int64_t u1 = u0 + TSW__PROXY_BLOCK < nu ? u0 + TSW__PROXY_BLOCK : nu;
        TSW__SEARCH_PICK(tsw__search_proxy)(ps1, ps2, x0, dim, S, s->pg, s->nseg, s->znorm,
                                            s->qp, u0, u1, w->pv);
        for (int64_t u = u0; u < u1; ++u) {
            double p = w->pv[u - u0];
            if (*cnt < s->nseed || p < sd[worst].p)
                tsw__seed_offer(sd, cnt, s->nseed, &worst, s->excl, p, c0 + u * S);
        }
    }
}

static void tsw__load(const void *src, tsw_dtype dt, int64_t off, int64_t count, double *dst)
{
    if (dt == TSW_F32)
        for (int64_t t = 0; t < count; ++t)
            dst[t] = (double)((const float *)src)[off + t];
    else
        memcpy(dst, (const double *)src + off, (size_t)count * sizeof(double));
}

typedef struct {
    int64_t i;
    double mag;
} tsw__ord;

static int tsw__ord_cmp(const void *pa, const void *pb)
{
    const tsw__ord *a = pa, *b = pb;
    if (a->mag != b->mag)
        return a->mag > b->mag ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

int tsw__search_query(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const tsw_series *query, int znorm, double *qz, double *qlo,
                      double *qhi, int64_t *r)
{
    const int64_t n = query->length;
    const size_t nd = (size_t)n * (size_t)dim;
    tsw_band band = tsw_band_make(params->window, params->window_radius,
                                  params->itakura_max_slope, n, n);
    *r = band.kind == TSW_BAND_DIAG ? band.above : n - 1;
    double *st = tsw__malloc((size_t)dim * 2 * sizeof(double));
    int64_t *ib = tsw__malloc((size_t)n * 5 * sizeof(int64_t));
    if (!st || !ib) {
        tsw__free(st);
        tsw__free(ib);
        return TSW_ENOMEM;
    }
    tsw__load(query->values, dtype, 0, (int64_t)nd, qz);
    if (znorm) {
        tsw__znorm_stats(qz, n, dim, st, st + dim);
        for (size_t u = 0; u < nd; ++u)
            qz[u] = (qz[u] - st[u % (size_t)dim]) * st[dim + u % (size_t)dim];
    }
    tsw_params bp = *params;
    bp.window = TSW_WINDOW_SAKOE_CHIBA;
    bp.window_radius = (double)*r;
    tsw__spans(&bp, n, n, ib, ib + n, ib + 2 * n, ib + 3 * n);
    knn_envelope_f64(qz, n, dim, ib + 2 * n, ib + 3 * n, n, qlo, qhi, ib + 4 * n);
    tsw__free(st);
    tsw__free(ib);
    return TSW_OK;
}

/* The exact raw distance of the window at point start of values (of dtype): its values
 * z-normalised with a two-pass mean and std (znorm), DTW in double; above thr it may be
 * abandoned (then > thr). win: (n, dim); prev, cur: n; mu, inv: dim. */
static double tsw__search_exact_one(tsw_cost cost, tsw_dtype dtype, int64_t dim,
                                    const double *qz, int64_t n, const int64_t *rlo,
                                    const int64_t *rhi, const void *values, int znorm,
                                    int64_t start, double thr, double *win, double *prev,
                                    double *cur, double *mu, double *inv)
{
    const size_t nd = (size_t)n * (size_t)dim;
    tsw__load(values, dtype, start * dim, (int64_t)nd, win);
    if (znorm) {
        tsw__znorm_stats(win, n, dim, mu, inv);
        for (size_t u = 0; u < nd; ++u)
            win[u] = (win[u] - mu[u % (size_t)dim]) * inv[u % (size_t)dim];
    }
    return knn_ea_dtw_f64(cost, qz, n, win, n, dim, rlo, rhi, NULL, NULL, thr, prev, cur);
}

/* The seeds' windows computed exactly, in order of their proxy (every thread's seeds
 * merged, mutually `exclusion` apart), into a list whose greedy picks set the threshold
 * (tsw__list_tidy). Only the threshold is kept: the scan meets these windows again. */
static int tsw__search_seed_eval(tsw__search *s, const tsw_series *series, int nt)
{
    const int64_t n = s->n, dim = s->dim, k = s->k;
    int64_t total = 0;
    for (int t = 0; t < nt; ++t)
        total += s->nseeds[t];
    tsw__seed *all = tsw__malloc((size_t)(total + 1) * sizeof(tsw__seed));
    double *fb = tsw__malloc(((size_t)n * (size_t)dim + (size_t)n * 2 + (size_t)dim * 2) *
                             sizeof(double));
    tsw__list sl;
    memset(&sl, 0, sizeof(sl));
    sl.pick = tsw__malloc((size_t)(2 * k) * sizeof(int64_t));
    int rc = TSW_OK;
    if (!all || !fb || !sl.pick) {
        rc = TSW_ENOMEM;
        goto out;
    }
    int64_t na = 0;
    for (int t = 0; t < nt; ++t)
        for (int64_t i = 0; i < s->nseeds[t]; ++i)
            all[na++] = s->seeds[(int64_t)t * s->nseed + i];
    qsort(all, (size_t)na, sizeof(tsw__seed), tsw__seed_cmp);
    double *win = fb, *prev = win + n * dim, *cur = prev + n, *mu = cur + n, *inv = mu + dim;
    int64_t used = 0; /* the seeds kept are all[0 .. used) */
    for (int64_t i = 0; i < na && used < s->nseed; ++i) {
        int ok = 1;
        for (int64_t j = 0; j < used && ok; ++j) { /* exclusion apart from those kept */
            int64_t d = all[j].start - all[i].start;
            ok = d >= s->excl || -d >= s->excl;
        }
        if (!ok)
            continue;
        all[used++] = all[i];
        /* the best window lies within ps / 2 of the ranked start nearest it */
        const int64_t h = s->ps / 2;
        for (int64_t st = all[used - 1].start - h; st <= all[used - 1].start + h; ++st) {
            if (st < 0 || st >= s->W)
                continue;
            const double lim = tsw_search_limit(tsw__tau_only(s), s->slack_abs);
            double d = tsw__search_exact_one(s->cost, s->dt, dim, s->qz, n, s->rlo, s->rhi,
                                             series->values, s->znorm, st, lim, win, prev,
                                             cur, mu, inv);
            if (!(d <= lim))
                continue;
            if ((rc = tsw__list_push(&sl, d, st)))
                goto out;
            tsw__list_tidy(s, &sl);
        }
    }
out:
    tsw__free(all);
    tsw__free(fb);
    tsw__free(sl.h);
    tsw__free(sl.pick);
    return rc;
}

/* The last step of every device's search: the candidate windows' distances recomputed
 * exactly (the query and each window z-normalised with a two-pass mean and std, DTW in
 * double precision), then the greedy choice with the exclusion zone. */
int tsw__search_exact(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const double *qz, int64_t n, int64_t r, const tsw_series *series,
                      const double *windows, int znorm, int64_t exclusion, int64_t k,
                      const int64_t *cand, int64_t ncand, int64_t *starts, double *distances,
                      int64_t *count)
{
    const size_t nd = (size_t)n * (size_t)dim;
    tsw_params bp = *params;
    bp.window = TSW_WINDOW_SAKOE_CHIBA;
    bp.window_radius = (double)r;
    double *fb = tsw__malloc((nd + (size_t)n * 2 + (size_t)dim * 2) * sizeof(double));
    int64_t *ib = tsw__malloc((size_t)n * 4 * sizeof(int64_t));
    tsw__hit *all = tsw__malloc((size_t)(ncand + 1) * sizeof(tsw__hit));
    int64_t *pick = tsw__malloc((size_t)k * sizeof(int64_t));
    int rc = TSW_OK;
    if (!fb || !ib || !all || !pick) {
        rc = TSW_ENOMEM;
        goto out;
    }
    double *win = fb, *prev = win + nd, *cur = prev + n, *mu = cur + n, *inv = mu + dim;
    int64_t *rlo = ib, *rhi = rlo + n, *clo = rhi + n, *chi = clo + n;
    tsw__spans(&bp, n, n, rlo, rhi, clo, chi);
    for (int64_t i = 0; i < ncand; ++i) {
        all[i].d = windows ? tsw__search_exact_one(params->cost, TSW_F64, dim, qz, n, rlo, rhi,
                                                   windows, znorm, i * n, HUGE_VAL, win, prev,
                                                   cur, mu, inv)
                           : tsw__search_exact_one(params->cost, dtype, dim, qz, n, rlo, rhi,
                                                   series->values, znorm, cand[i], HUGE_VAL,
                                                   win, prev, cur, mu, inv);
        all[i].start = cand[i];
    }
    qsort(all, (size_t)ncand, sizeof(tsw__hit), tsw__hit_cmp);
    int64_t np = tsw__greedy(all, ncand, exclusion, k, pick);
    for (int64_t i = 0; i < np; ++i) {
        starts[i] = all[pick[i]].start;
        distances[i] = tsw__finish(params, all[pick[i]].d);
    }
    *count = np;
out:
    tsw__free(fb);
    tsw__free(ib);
    tsw__free(all);
    tsw__free(pick);
    return rc;
}

int tsw__cpu_search(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                    const tsw_series *query, const tsw_series *series, int znorm,
                    int64_t exclusion, int64_t k, int64_t *starts, double *distances,
                    int64_t *count, tsw_search_stats *stats, const tsw_exec *exec)
{
    tsw__search s;
    memset(&s, 0, sizeof(s));
    const int64_t n = query->length, N = series->length;
    s.cost = params->cost;
    s.dt = dtype;
    s.dim = dim;
    s.n = n;
    s.W = N - n + 1;
    s.k = k;
    s.excl = exclusion;
    s.znorm = znorm;
    s.slack_abs = tsw_search_slack_abs(znorm, n, dim);
    s.series = series->values;
    s.ex = exec;
    s.tau = HUGE_VAL;
    s.tau_start = INT64_MAX;
    s.status = TSW_OK;
    int rc = TSW_OK;
    size_t nd = (size_t)n * (size_t)dim;
    tsw__list *lists = NULL;
    int nt = tsw__threads(exec);
    int64_t nchunks = (s.W + TSW__CHUNK - 1) / TSW__CHUNK;
    if (nchunks < nt)
        nt = (int)nchunks;
    const size_t nseed = (size_t)(4 * k + 4);
    double *qbuf = tsw__malloc(nd * 3 * sizeof(double) + (size_t)dim * 2 * sizeof(double) +
                               (size_t)TSW__PROXY_SEGS * (size_t)dim * sizeof(double));
    int64_t *ibuf = tsw__malloc((size_t)n * 6 * sizeof(int64_t) + sizeof(int64_t) +
                                (size_t)nt * sizeof(int64_t));
    tsw__ord *ord = tsw__malloc((size_t)n * 2 * sizeof(tsw__ord));
    tsw__seed *seeds = tsw__malloc((size_t)nt * nseed * sizeof(tsw__seed));
    if (!qbuf || !ibuf || !ord || !seeds) {
        rc = TSW_ENOMEM;
        goto out;
    }
    double *qz = qbuf, *qlo = qz + nd, *qhi = qlo + nd, *mu = qhi + nd, *inv = mu + dim,
           *qp = inv + dim;
    int64_t *order = ibuf, *rlo = order + n, *rhi = rlo + n, *clo = rhi + n, *chi = clo + n,
            *bo = chi + n, *nseeds = bo + n;
    tsw__ord *bord = ord + n;
    for (int t = 0; t < nt; ++t)
        nseeds[t] = 0;
    if ((rc = tsw__search_query(params, dtype, dim, query, znorm, qz, qlo, qhi, &s.r)))
        goto out;
    /* the band as spans (equal lengths: rows and columns alike) */
    tsw_params bp = *params;
    bp.window = TSW_WINDOW_SAKOE_CHIBA;
    bp.window_radius = (double)s.r;
    tsw__spans(&bp, n, n, rlo, rhi, clo, chi);
    for (int64_t i = 0; i < n; ++i) {
        double mag = 0;
        for (int64_t c = 0; c < dim; ++c)
            mag += fabs(qz[i * dim + c]);
        ord[i].i = i;
        ord[i].mag = mag;
    }
    if (!znorm) { /* raw values: the magnitude about the query's mean */
        tsw__znorm_stats(qz, n, dim, mu, inv);
        for (int64_t i = 0; i < n; ++i) {
            double mag = 0;
            for (int64_t c = 0; c < dim; ++c)
                mag += fabs(qz[i * dim + c] - mu[c]);
            ord[i].mag = mag;
        }
    }
    /* dim 1: LB_Keogh's blocks of TSW__SBLOCK points by their summed magnitude (ord[] is
     * still in point order here) */
    s.nbo = (n + TSW__SBLOCK - 1) / TSW__SBLOCK;
    for (int64_t o = 0; o < s.nbo; ++o) {
        double mag = 0;
        for (int64_t j = o * TSW__SBLOCK; j < n && j < (o + 1) * TSW__SBLOCK; ++j)
            mag += ord[j].mag;
        bord[o].i = o * TSW__SBLOCK;
        bord[o].mag = mag;
    }
    qsort(bord, (size_t)s.nbo, sizeof(tsw__ord), tsw__ord_cmp);
    for (int64_t o = 0; o < s.nbo; ++o)
        bo[o] = bord[o].i;
    qsort(ord, (size_t)n, sizeof(tsw__ord), tsw__ord_cmp);
    for (int64_t i = 0; i < n; ++i)
        order[i] = ord[i].i;
    /* the proxy: nseg segments of L points (at least 4 where the query has them), windows
     * sampled every ps points, ps the largest of 4, 2, 1 dividing L; the query's piecewise
     * means z-normalised over the segments' points as the windows' are (znorm) */
    {
        s.nseg = n / 4 < 1 ? 1 : n / 4 < TSW__PROXY_SEGS ? n / 4 : TSW__PROXY_SEGS;
        const int64_t L = n / s.nseg, A = L * s.nseg;
        s.ps = L % 4 == 0 ? 4 : L % 2 == 0 ? 2 : 1;
        s.pg = L / s.ps;
        if (znorm) /* (mu, inv: free again here) */
            tsw__znorm_stats(qz, A, dim, mu, inv);
        for (int64_t c = 0; c < dim; ++c) {
            const double m = znorm ? mu[c] : 0, sc = znorm ? inv[c] : 1;
            for (int64_t g = 0; g < s.nseg; ++g) {
                double a = 0;
                for (int64_t t = g * L; t < (g + 1) * L; ++t)
                    a += qz[t * dim + c];
                qp[g * dim + c] = (a / (double)L - m) * sc;
            }
        }
    }
    s.qp = qp;
    s.bo = bo;
    s.nseed = 4 * k + 4;
    s.seeds = seeds;
    s.nseeds = nseeds;
    s.qz = qz;
    s.qlo = qlo;
    s.qhi = qhi;
    s.order = order;
    s.rlo = rlo;
    s.rhi = rhi;
    lists = tsw__malloc((size_t)nt * sizeof(tsw__list));
    if (!lists) {
        rc = TSW_ENOMEM;
        goto out;
    }
    memset(lists, 0, (size_t)nt * sizeof(tsw__list));
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        tsw__list *l = &lists[tid];
        l->tidy_at = 4 * k + 64;
        l->pick = tsw__malloc((size_t)(2 * k) * sizeof(int64_t));
        tsw__sws w = {0};
        int ok = l->pick && tsw__sws_init(&w, TSW__CHUNK, n, dim) == TSW_OK;
        if (!ok)
            __atomic_store_n(&s.status, TSW_ENOMEM, __ATOMIC_RELAXED);
        int64_t last = tsw__now_ns();
        /* the seeds: every window ranked by the proxy, the best computed exactly */
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t ch = 0; ch < nchunks; ++ch) {
            if (!ok || tsw__poll_parallel(exec, tid, &last, &s.done, s.W, &s.status))
                continue;
            tsw__seed_chunk(&s, &w, tid, ch * TSW__CHUNK);
        }
#ifdef _OPENMP
#pragma omp single
#endif
        {
            if (__atomic_load_n(&s.status, __ATOMIC_RELAXED) == TSW_OK &&
                tsw__search_seed_eval(&s, series, nt))
                __atomic_store_n(&s.status, TSW_ENOMEM, __ATOMIC_RELAXED);
        }
        /* the scan */
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t ch = 0; ch < nchunks; ++ch) {
            if (!ok || __atomic_load_n(&s.status, __ATOMIC_RELAXED) != TSW_OK)
                continue;
            if (tsw__search_chunk(&s, &w, l, ch * TSW__CHUNK, tid, &last))
                __atomic_store_n(&s.status, TSW_ENOMEM, __ATOMIC_RELAXED);
            int64_t nw = (ch + 1) * TSW__CHUNK < s.W ? TSW__CHUNK : s.W - ch * TSW__CHUNK;
            __atomic_fetch_add(&s.done, nw, __ATOMIC_RELAXED);
        }
        if (ok)
            tsw__free(w.block);
    }
    rc = s.status;
    if (rc == TSW_OK && exec->progress && exec->progress(exec->progress_user, s.W, s.W))
        rc = TSW_ECANCELED;
    if (rc)
        goto out;
    {
        /* every thread's hits at or below the final threshold, recomputed exactly */
        int64_t total = 0, ts;
        for (int t = 0; t < nt; ++t) {
            tsw__list_tidy(&s, &lists[t]);
            total += lists[t].n;
        }
        double tau = tsw__tau(&s, &ts), lim = tsw_search_limit(tau, s.slack_abs);
        int64_t *cand = tsw__malloc((size_t)(total + 1) * sizeof(int64_t)), na = 0;
        if (!cand) {
            rc = TSW_ENOMEM;
            goto out;
        }
        for (int t = 0; t < nt; ++t)
            for (int64_t i = 0; i < lists[t].n; ++i) {
                const tsw__hit *e = &lists[t].h[i];
                if (!(e->d > lim || (!znorm && e->d == tau && e->start > ts)))
                    cand[na++] = e->start;
            }
        rc = tsw__search_exact(params, dtype, dim, qz, n, s.r, series, NULL, znorm, exclusion, k,
                               cand, na, starts, distances, count);
        tsw__free(cand);
        if (!rc && stats) {
            memset(stats, 0, sizeof(*stats));
            stats->windows = s.W;
            for (int t = 0; t < nt; ++t) {
                stats->kim += lists[t].kim;
                stats->keogh_query += lists[t].kq;
                stats->keogh_data += lists[t].kd;
                stats->dtw += lists[t].dtw;
                stats->abandoned += lists[t].ab;
            }
        }
    }
out:
    if (lists)
        for (int t = 0; t < nt; ++t) {
            tsw__free(lists[t].h);
            tsw__free(lists[t].pick);
        }
    tsw__free(lists);
    tsw__free(qbuf);
    tsw__free(ibuf);
    tsw__free(ord);
    tsw__free(seeds);
    return rc;
}
