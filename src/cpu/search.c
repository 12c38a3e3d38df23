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

#define TSW__CHUNK 16384           /* windows per chunk */
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
    const double *qls, *qhs;      /* dim 1: qlo, qhi in the order of `order` */
    const int64_t *order;         /* query points by decreasing magnitude */
    const int64_t *rlo, *rhi;     /* the band's spans (n) */
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
    double *x, *lo, *hi;  /* chunk values and data envelope ((C + n - 1) dim) */
    double *s1, *s2;      /* prefix sums ((C + n) dim) */
    int64_t *ch;          /* prefix count of changes ((C + n) dim) */
    double *g, *h;        /* tsw__env_range's scratch (C + 3 n) */
    double *wmu, *winv;   /* every window's mean and 1 / std (C dim) */
    const double *mu, *inv; /* the current window's: views into wmu, winv */
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
                   (size_t)(n + 1) * 8 * 6 + 64 * 20;
    unsigned char *p = tsw__malloc(bytes);
    if (!p)
        return TSW_ENOMEM;
    w->block = p;
#define TSW__TAKE(ptr, sz)                                                                   \
    do {                                                                                     \
        (ptr) = (void *)p;                                                                   \
        p += (((size_t)(sz) + 63) & ~(size_t)63);                                            \
    } while (0)
    TSW__TAKE(w->x, pd * 8);
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

static int tsw__search_chunk(tsw__search *s, tsw__sws *w, tsw__list *l, int64_t c0,
                             int64_t tid, int64_t *last)
{
    const int64_t n = s->n, dim = s->dim, r = s->r;
    const int64_t nw = c0 + TSW__CHUNK < s->W ? TSW__CHUNK : s->W - c0;
    const int64_t P = nw + n - 1; /* points of the chunk */
    const size_t esz = tsw__dtype_size(s->dt);
    const char *src = (const char *)s->series + (size_t)c0 * (size_t)dim * esz;
    if (s->dt == TSW_F32)
        for (int64_t t = 0; t < P * dim; ++t)
            w->x[t] = (double)((const float *)src)[t];
    else
        memcpy(w->x, src, (size_t)(P * dim) * sizeof(double));
    /* the data's envelope: point t sees [t - r, t + r] of the chunk (a window's own points
     * within that range are all in the chunk, and more points only loosen the bound), made
     * when a window first needs it: it is made for the points before env_e */
    int64_t env_e = 0;
    if (!s->znorm) {
        for (int64_t t = 0; t < nw * dim; ++t) {
            w->wmu[t] = 0;
            w->winv[t] = 1;
        }
    } else {
        for (int64_t c = 0; c < dim; ++c) {
            double x0 = w->x[c], a1 = 0, a2 = 0;
            int64_t nc = 0;
            w->s1[c] = w->s2[c] = 0;
            w->ch[c] = 0;
            for (int64_t t = 0; t < P; ++t) {
                double v = w->x[t * dim + c] - x0;
                a1 += v;
                a2 += v * v;
                if (t > 0 && w->x[t * dim + c] != w->x[(t - 1) * dim + c])
                    ++nc;
                w->s1[(t + 1) * dim + c] = a1;
                w->s2[(t + 1) * dim + c] = a2;
                w->ch[(t + 1) * dim + c] = nc;
            }
        }
    }
    /* every window's mean and 1 / std per channel, in one pass the compiler vectorises */
    for (int64_t c = 0; c < dim && s->znorm; ++c) {
        const double x0 = w->x[c], rn = 1.0 / (double)n;
        for (int64_t b = 0; b < nw; ++b) {
            double m1 = (w->s1[(b + n) * dim + c] - w->s1[b * dim + c]) * rn;
            double m2 = (w->s2[(b + n) * dim + c] - w->s2[b * dim + c]) * rn;
            double var = m2 - m1 * m1;
            w->wmu[b * dim + c] = m1 + x0;
            w->winv[b * dim + c] = var > 0 ? 1 / sqrt(var) : 0;
        }
        for (int64_t b = 0; b < nw; ++b)
            if (w->ch[(b + n) * dim + c] - w->ch[(b + 1) * dim + c] == 0) {
                w->wmu[b * dim + c] = w->x[b * dim + c]; /* constant: z = 0 */
                w->winv[b * dim + c] = 0;
            }
    }
    const double *qz = s->qz, *qlo = s->qlo, *qhi = s->qhi;
    const double *qls = s->qls, *qhs = s->qhs; /* dim 1: the envelope in the order's order */
    const int64_t *order = s->order;
    const tsw_cost cost = s->cost;
    for (int64_t b = 0; b < nw; ++b) {
        if ((b & 1023) == 0 &&
            tsw__poll_parallel(s->ex, (int)tid, last, &s->done, s->W, &s->status))
            return TSW_OK;
        const double bsf = tsw_search_limit(tsw__tau_only(s), s->slack_abs);
        w->mu = w->wmu + b * dim; /* the window's mean and 1 / std (raw: 0 and 1) */
        w->inv = w->winv + b * dim;
        if (tsw__search_kim(s, w, b, bsf) > bsf) {
            ++l->kim;
            continue;
        }
        /* LB_Keogh, the query's envelope, largest query values first, in blocks of 8
         * points (independent sums, then one test) */
        double lb1 = 0;
        int pruned = 0;
        for (int64_t o = 0; o < n && !pruned; o += 8) {
            int64_t e = o + 8 < n ? o + 8 : n;
            double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            if (dim == 1) {
                const double mu = w->mu[0], inv = w->inv[0], *xb = w->x + b;
                for (int64_t t = o; t < e; ++t) {
                    int64_t j = order[t];
                    double z = (xb[j] - mu) * inv;
                    double e1 = z - qhs[t], e2 = qls[t] - z;
                    double d = (e1 > 0 ? e1 : 0) + (e2 > 0 ? e2 : 0); /* one of them is 0 */
                    double cst = cost == TSW_COST_SQEUCLIDEAN ? d * d : d;
                    w->cq[j] = cst;
                    part[t - o] = cst;
                }
            } else {
                for (int64_t t = o; t < e; ++t) {
                    int64_t j = order[t];
                    double acc = 0;
                    for (int64_t c = 0; c < dim; ++c) {
                        double z = (w->x[(b + j) * dim + c] - w->mu[c]) * w->inv[c];
                        double e1 = z - qhi[j * dim + c], e2 = qlo[j * dim + c] - z;
                        acc += tsw_cost_term_f64(cost, (e1 > 0 ? e1 : 0) + (e2 > 0 ? e2 : 0));
                    }
                    acc = tsw_cost_total_f64(cost, acc);
                    w->cq[j] = acc;
                    part[t - o] = acc;
                }
            }
            lb1 += ((part[0] + part[1]) + (part[2] + part[3])) +
                   ((part[4] + part[5]) + (part[6] + part[7]));
            pruned = lb1 > bsf;
        }
        if (pruned) {
            ++l->kq;
            continue;
        }
        /* LB_Keogh, the data's envelope */
        if (b + n > env_e) {
            tsw__env_range(w->x, P, dim, r, b > env_e ? b : env_e, b + n, w->lo, w->hi, w->g,
                           w->h);
            env_e = b + n;
        }
        double lb2 = 0;
        for (int64_t o = 0; o < n; ++o) {
            int64_t i = order[o];
            double acc = 0;
            for (int64_t c = 0; c < dim; ++c) {
                double lo = (w->lo[(b + i) * dim + c] - w->mu[c]) * w->inv[c];
                double hi = (w->hi[(b + i) * dim + c] - w->mu[c]) * w->inv[c];
                double q = qz[i * dim + c], d = 0;
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
                pruned = 1;
                break;
            }
        }
        if (pruned) {
            ++l->kd;
            continue;
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
            int64_t c = t % dim;
            w->tz[t] = (w->x[b * dim + t] - w->mu[c]) * w->inv[c];
        }
        double d = knn_ea_dtw_f64(cost, qz, n, w->tz, n, dim, s->rlo, s->rhi, w->cbr, w->cbc,
                                  bsf, w->prev, w->cur);
        if (!(d <= bsf))
            ++l->ab;
        if (d <= bsf) {
            if (tsw__list_push(l, d, c0 + b))
                return TSW_ENOMEM;
            if (l->n >= l->tidy_at)
                tsw__list_tidy(s, l);
        }
    }
    return TSW_OK;
}

/* Mean and 1 / std of each channel of v (n, dim), two passes; constant: 0 scale. */
static void tsw__znorm_stats(const double *v, int64_t n, int64_t dim, double *mu, double *inv)
{
    for (int64_t c = 0; c < dim; ++c) {
        double s = 0, q = 0;
        int constant = 1;
        for (int64_t t = 0; t < n; ++t) {
            s += v[t * dim + c];
            constant &= v[t * dim + c] == v[c];
        }
        double m = s / (double)n;
        for (int64_t t = 0; t < n; ++t) {
            double d = v[t * dim + c] - m;
            q += d * d;
        }
        double sd = sqrt(q / (double)n);
        mu[c] = constant ? v[c] : m;
        inv[c] = constant || !(sd > 0) ? 0 : 1 / sd;
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

/* The last step of every device's search: the candidate windows' distances recomputed
 * exactly (the query and each window z-normalised with a two-pass mean and std, DTW in
 * double precision), then the greedy choice with the exclusion zone. */
int tsw__search_exact(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                      const double *qz, int64_t n, int64_t r, const tsw_series *series,
                      int znorm, int64_t exclusion, int64_t k, const int64_t *cand,
                      int64_t ncand, int64_t *starts, double *distances, int64_t *count)
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
        tsw__load(series->values, dtype, cand[i] * dim, (int64_t)nd, win);
        if (znorm) {
            tsw__znorm_stats(win, n, dim, mu, inv);
            for (size_t u = 0; u < nd; ++u)
                win[u] = (win[u] - mu[u % (size_t)dim]) * inv[u % (size_t)dim];
        }
        all[i].d = knn_ea_dtw_f64(params->cost, qz, n, win, n, dim, rlo, rhi, NULL, NULL,
                                  HUGE_VAL, prev, cur);
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
    double *qbuf = tsw__malloc(nd * 3 * sizeof(double) + (size_t)dim * 2 * sizeof(double) +
                               (size_t)n * 2 * sizeof(double));
    int64_t *ibuf = tsw__malloc((size_t)n * 5 * sizeof(int64_t) + sizeof(int64_t));
    tsw__ord *ord = tsw__malloc((size_t)n * sizeof(tsw__ord));
    tsw__list *lists = NULL;
    int nt = tsw__threads(exec);
    int64_t nchunks = (s.W + TSW__CHUNK - 1) / TSW__CHUNK;
    if (nchunks < nt)
        nt = (int)nchunks;
    if (!qbuf || !ibuf || !ord) {
        rc = TSW_ENOMEM;
        goto out;
    }
    double *qz = qbuf, *qlo = qz + nd, *qhi = qlo + nd, *mu = qhi + nd, *inv = mu + dim;
    int64_t *order = ibuf, *rlo = order + n, *rhi = rlo + n, *clo = rhi + n, *chi = clo + n;
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
    qsort(ord, (size_t)n, sizeof(tsw__ord), tsw__ord_cmp);
    double *qls = inv + dim, *qhs = qls + n;
    for (int64_t i = 0; i < n; ++i) {
        order[i] = ord[i].i;
        qls[i] = qlo[order[i] * dim];
        qhs[i] = qhi[order[i] * dim];
    }
    s.qls = qls;
    s.qhs = qhs;
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
        rc = tsw__search_exact(params, dtype, dim, qz, n, s.r, series, znorm, exclusion, k, cand,
                               na, starts, distances, count);
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
    return rc;
}
