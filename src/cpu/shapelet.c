/*
 * Shapelet discovery on the CPU (include/tswarp.h, "Shapelets"): the CPU backend of
 * shapelet.c, which validates, standardises and builds the job (shapelet_job.h).
 *
 * Work is organised by candidate start: one item is (series i, a block of up to SHP_BLOCK
 * consecutive starts s), and evaluating it gives the squared distance of every candidate
 * (i, s, l), l in the length set, to every searched series, in mind2 (n_lengths, n_subset)
 * per start. Two ways fill mind2:
 *   - reference: eq. 2 literally, each window z-normalised from its own two-pass mean and
 *     std, O(l) per start u (O(N L^2) per candidate): what the tests trust;
 *   - fast: for each series j, the dot products acc[u] = sum_{t<l} a[t] b[u+t] of every
 *     start u grow by one term per length (eq. 5 extended in l, so no drift accumulates
 *     along a diagonal as eq. 6's recursion would), and the window stats come from prefix
 *     sums (eq. 7); each length then costs O(len x_j): O(N L) per candidate, as Algorithm 4,
 *     in a loop over u (AVX2 in shapelet_avx2.c, or vectorised by the compiler), the
 *     starts of a block sharing each row of series data.
 * Everything after mind2 (order line, split, ranking) is shared, so both ways give the same
 * shapelets as long as their distances agree to within TSW_SHAPELET_TIE. The order lines are
 * sorted by counted ranks (short ones) or heap sort: the same sorted values either way.
 *
 * Threads: tsw_shapelet_search spreads the items over OpenMP threads (dynamic schedule:
 * items near the end of a series have fewer lengths); each keeps its best and the bests are
 * reduced in a fixed order with a total order on candidates, so the result does not depend
 * on the thread count. tsw_shapelet_top gives each thread whole series (the non-overlap rule
 * is per series) and merges the per-series lists. A CUDA backend can replace the fill of
 * mind2 (the paper's Algorithm 4 per thread block) and reuse the rest.
 */
#include "shapelet_job.h"

#include "cpu/kernels.h"
#include "cpu/shapelet_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Largest 1/std table the fast path keeps (bytes); a variable so that the C tests can force
 * the per-item rows. */
double tsw__shapelet_table_bytes = 512.0 * 1024 * 1024;
/* Instruction set of the fast path's inner loops: -1 = the best the CPU has (AVX2 when
 * tsw__cpu_level() >= 2), 0 = the portable loops; a variable so that the C tests can check
 * that both give the same bits. */
int tsw__shapelet_simd = -1;
/* Order lines up to this many series are sorted by counting ranks (no branches to
 * mispredict, vectorised), longer ones by heap sort. */
#define SHP_RANK_SORT_MAX 160
/* Candidate starts per work item (shp_fill_fast: what they share is read once). */
#define SHP_BLOCK 8

static inline const double *shp_z(const tsw__shp_data *d, int64_t i) { return d->z + d->off[i]; }
static inline const double *shp_P(const tsw__shp_data *d, int64_t i) { return d->P + d->off[i] + i; }
static inline const double *shp_Q(const tsw__shp_data *d, int64_t i) { return d->Q + d->off[i] + i; }
static inline const int64_t *shp_run(const tsw__shp_data *d, int64_t i) { return d->run + d->off[i]; }

/* Mean and std of a window, two-pass (the reference's way). */
static void shp_stats_direct(const double *x, int64_t l, double *mean, double *sd)
{
    double m = 0.0, v = 0.0;
    for (int64_t t = 0; t < l; ++t)
        m += x[t];
    m /= (double)l;
    for (int64_t t = 0; t < l; ++t)
        v += (x[t] - m) * (x[t] - m);
    *mean = m;
    *sd = sqrt(v / (double)l);
}

static int shp_constant(const double *x, int64_t l)
{
    for (int64_t t = 1; t < l; ++t)
        if (x[t] != x[0])
            return 0;
    return 1;
}

/* Eq. 2 squared, literally: each window z-normalised on its own (constant -> 0); raw: the
 * mean squared difference of the values themselves. */
static double shp_d2_direct(int raw, const double *a, const double *b, int64_t l)
{
    if (raw) {
        double s = 0.0;
        for (int64_t t = 0; t < l; ++t)
            s += (a[t] - b[t]) * (a[t] - b[t]);
        return tsw_shp_snap(s / (double)l);
    }
    double ma, sa, mb, sb;
    shp_stats_direct(a, l, &ma, &sa);
    shp_stats_direct(b, l, &mb, &sb);
    int fa = shp_constant(a, l), fb = shp_constant(b, l);
    if (!fa && !fb && !(sa > 0.0 && sb > 0.0))
        return 2.0; /* tsw_shp_d2's convention for a spread lost in rounding */
    double ia = fa ? 0.0 : 1.0 / sa, ib = fb ? 0.0 : 1.0 / sb;
    double s = 0.0;
    for (int64_t t = 0; t < l; ++t) {
        double e = (a[t] - ma) * ia - (b[t] - mb) * ib;
        s += e * e;
    }
    return tsw_shp_snap(s / (double)l);
}

/* ---- the work of one item --------------------------------------------------------------- */

typedef struct {
    double *acc;    /* (block, max len) running dot products, fast path */
    double *row;    /* (max len) one row of 1/std when the job has no table */
    double *cstat;  /* (block, 2 nlen) each candidate's mean and std per length, fast path */
    double *mind2;  /* (block, nlen, ns): candidate b's at mind2 + b nlen ns */
    int64_t acc_stride; /* candidate b's dot products at acc + b acc_stride */
    double *dist;   /* (ns,) one order line */
    int32_t *lab;   /* (ns,) */
    int64_t *idx;   /* (ns,) sort permutation */
    int64_t *left;  /* (C,) */
    /* An item can take a second (eight starts against every series): the fill polls for
     * cancellation between series too, as the thread's loop does between items. */
    tsw__shp_job *job;
    int tid;
    int64_t last;
} shp_ws;

static int shp_ws_poll(shp_ws *w) { return tsw__shp_poll(w->job, w->tid, &w->last); }

/* mind2[li, jj] for every length index li < nl of candidate (i, s): eq. 2 directly. A
 * series shorter than the candidate (nj < l) slides along it: the least over the candidate's
 * windows of nj points against the whole series (include/tswarp.h). */
static void shp_fill_reference(const tsw__shp_job *J, int64_t i, int64_t s, int64_t nl,
                               double *mind2)
{
    const double *a = shp_z(J->d, i) + s;
    for (int64_t li = 0; li < nl; ++li) {
        int64_t l = J->minl + li * J->step;
        for (int64_t jj = 0; jj < J->ns; ++jj) {
            int64_t j = J->sub[jj], nj = J->d->len[j];
            const double *b = shp_z(J->d, j);
            double best = TSW_INF_F64;
            for (int64_t u = 0; u + l <= nj; ++u) {
                double v = shp_d2_direct(J->d->raw, a, b + u, l);
                best = v < best ? v : best;
            }
            for (int64_t u = 0; u + nj <= l && nj < l; ++u) {
                double v = shp_d2_direct(J->d->raw, a + u, b, nj);
                best = v < best ? v : best;
            }
            mind2[li * J->ns + jj] = best;
        }
    }
}

/* 1/std of every window of length l of searched series jj (0 when constant), and whether
 * one is constant: row (len - l + 1,). */
static int shp_isd_row(const tsw__shp_job *J, int64_t jj, int64_t l, double *row)
{
    const int64_t j = J->sub[jj], nu = J->d->len[j] - l + 1;
    const double *P = shp_P(J->d, j), *Q = shp_Q(J->d, j);
    const int64_t *run = shp_run(J->d, j);
    int has_flat = 0;
    if (J->d->raw) { /* the raw score's weight (tsw_shp_raw_d2_from_score) */
        for (int64_t u = 0; u < nu; ++u)
            row[u] = 1.0;
        return 0;
    }
    for (int64_t u = 0; u < nu; ++u) {
        row[u] = tsw_shp_inv_sd(P[u + l] - P[u], Q[u + l] - Q[u], l, run[u] >= l);
        has_flat |= run[u] >= l;
    }
    return has_flat;
}

/* The portable loop of shapelet_kernels.h: acc[u] += al[t] * bl[u + t], t = 0 .. k - 1 in
 * that order, for u < nu. */
static void shp_grow_k(double *acc, const double *al, int64_t k, const double *bl, int64_t nu)
{
    for (int64_t u = 0; u < nu; ++u) {
        double d = acc[u];
        for (int64_t t = 0; t < k; ++t)
            d += al[t] * bl[u + t];
        acc[u] = d;
    }
}

/* The portable loop of shapelet_kernels.h: acc grows by al * bl, then the largest score of
 * the windows of length l. Four running maxima keep the compares off one dependency chain. */
static double shp_grow_score(double *acc, double al, const double *bl, const double *P,
                             int64_t l, double ma, const double *isd, int64_t nu)
{
    double m0 = -TSW_INF_F64, m1 = -TSW_INF_F64, m2 = -TSW_INF_F64, m3 = -TSW_INF_F64;
    int64_t u = 0;
    for (; u + 4 <= nu; u += 4) {
        double d0 = acc[u] + al * bl[u], d1 = acc[u + 1] + al * bl[u + 1];
        double d2 = acc[u + 2] + al * bl[u + 2], d3 = acc[u + 3] + al * bl[u + 3];
        acc[u] = d0;
        acc[u + 1] = d1;
        acc[u + 2] = d2;
        acc[u + 3] = d3;
        double c0 = (d0 - ma * (P[u + l] - P[u])) * isd[u];
        double c1 = (d1 - ma * (P[u + 1 + l] - P[u + 1])) * isd[u + 1];
        double c2 = (d2 - ma * (P[u + 2 + l] - P[u + 2])) * isd[u + 2];
        double c3 = (d3 - ma * (P[u + 3 + l] - P[u + 3])) * isd[u + 3];
        m0 = c0 > m0 ? c0 : m0;
        m1 = c1 > m1 ? c1 : m1;
        m2 = c2 > m2 ? c2 : m2;
        m3 = c3 > m3 ? c3 : m3;
    }
    for (; u < nu; ++u) {
        double dd = acc[u] + al * bl[u];
        acc[u] = dd;
        double c = (dd - ma * (P[u + l] - P[u])) * isd[u];
        m0 = c > m0 ? c : m0;
    }
    return TSW_MAX(TSW_MAX(m0, m1), TSW_MAX(m2, m3));
}

/*
 * shp_fill_fast's lengths above len x_j = nj (length index li on, l = next): series j slides
 * along each candidate (i, s), whose distance is the least of e[a] = tsw_shp_window_d2 of the
 * window x_i[a .. a + nj) and the whole series, over a = s .. s + l - nj. e is computed once
 * for the block (in w->row: a + nj <= len x_i, so at most len x_i entries) and each
 * candidate's minimum grows with l.
 */
static void shp_fill_short(const tsw__shp_job *J, int64_t i, int64_t s0, int64_t nb,
                           const int64_t *lmaxb, int64_t jj, int64_t li, int64_t next,
                           shp_ws *w)
{
    const int64_t j = J->sub[jj], nj = J->d->len[j], ns = J->ns, nlen = J->nlen;
    const double *za = shp_z(J->d, i), *Pa = shp_P(J->d, i), *Qa = shp_Q(J->d, i);
    const int64_t *ra = shp_run(J->d, i);
    const double *zb = shp_z(J->d, j);
    const double Sb = shp_P(J->d, j)[nj], SQb = shp_Q(J->d, j)[nj];
    const int fb = shp_run(J->d, j)[0] >= nj;
    int64_t amax = s0;
    for (int64_t b = 0; b < nb; ++b)
        if (lmaxb[b] > nj)
            amax = TSW_MAX(amax, s0 + b + lmaxb[b] - nj);
    double *e = w->row;
    for (int64_t a = s0; a <= amax; ++a)
        e[a - s0] = tsw_shp_pair_d2(J->d->raw, za + a, Pa[a + nj] - Pa[a], Qa[a + nj] - Qa[a],
                                    ra[a] >= nj, zb, Sb, SQb, fb, nj);
    for (int64_t b = 0; b < nb && lmaxb[b] >= next; ++b) {
        double m = TSW_INF_F64;
        int64_t r = b; /* e[b .. r) taken */
        for (int64_t l = next, q = li; l <= lmaxb[b]; l += J->step, ++q) {
            for (; r <= b + l - nj; ++r)
                m = e[r] < m ? e[r] : m;
            w->mind2[(b * nlen + q) * ns + jj] = m;
        }
    }
}

/*
 * The same from running dot products (one more term per length) and prefix sums, for the nb
 * candidates (i, s0 + b), b < nb, of one work item at once (nl[b] lengths each, not
 * increasing in b). Per window and length: one multiply-add for the dot product, then
 * score = (dot - ma S) inv_sd with inv_sd from the job's table (computed once per call,
 * shared by the threads) or, when the table would be too large, computed here per (series,
 * length). Taking the candidates of a block together for each (series, length) reads that
 * row of the table (and of the prefix sums) once for all of them, from the L1 cache, instead
 * of streaming the whole table from memory once per candidate; each candidate's arithmetic
 * is unchanged.
 */
static void shp_fill_fast(const tsw__shp_job *J, int64_t i, int64_t s0, int64_t nb,
                          const int64_t *nl, shp_ws *w)
{
    const int64_t nlen = J->nlen, ns = J->ns, stride = w->acc_stride;
    for (int64_t b = 0; b < nb; ++b) { /* each candidate's stats, once per length */
        const double *Pa = shp_P(J->d, i) + s0 + b, *Qa = shp_Q(J->d, i) + s0 + b;
        double *cma = w->cstat + 2 * b * nlen, *csa = cma + nlen;
        for (int64_t li = 0; li < nl[b]; ++li) {
            const int64_t l = J->minl + li * J->step;
            if (J->d->raw) { /* the score's weight and the candidate's sum of squares */
                cma[li] = 0.5;
                csa[li] = Qa[l] - Qa[0];
            } else {
                tsw_shp_stats(Pa[l] - Pa[0], Qa[l] - Qa[0], l, cma + li, csa + li);
            }
        }
    }
    const double *a = shp_z(J->d, i) + s0;
    const int64_t *ra = shp_run(J->d, i) + s0;
    int64_t lmaxb[SHP_BLOCK]; /* each candidate's longest length (0: none) */
    for (int64_t b = 0; b < nb; ++b)
        lmaxb[b] = nl[b] > 0 ? J->minl + (nl[b] - 1) * J->step : 0;
    const int64_t lmax = lmaxb[0];
    for (int64_t jj = 0; jj < ns; ++jj) {
        if ((jj & 7) == 7 && shp_ws_poll(w))
            return; /* cancelled: the item's distances are dropped */
        const int64_t j = J->sub[jj], nj = J->d->len[j];
        /* raw: the windows' sums of squares take the place of their sums in the score */
        const double *bz = shp_z(J->d, j), *P = J->d->raw ? shp_Q(J->d, j) : shp_P(J->d, j);
        for (int64_t b = 0; b < nb; ++b)
            memset(w->acc + b * stride, 0, (size_t)nj * sizeof(double));
        int64_t li = 0, next = J->minl; /* the next searched length and its index */
        int64_t active = nb;            /* candidates b < active reach length l */
        const int64_t lcap = TSW_MIN(lmax, nj); /* longer ones: shp_fill_short */
        for (int64_t l = 1; next <= lcap; ++l) { /* l <= next: a window of x_j remains */
            const double *bl = bz + (l - 1);
            const int64_t nu = nj - l + 1;
            while (lmaxb[active - 1] < l) /* b = 0 reaches lmax: active stays >= 1 */
                --active;
            if (l != next) {
                /* the lengths l .. l + k - 1 up to the next searched one are not searched:
                 * their k terms in one pass over each candidate's acc (the same additions
                 * in the same order as k passes, so the same bits), for the windows that
                 * remain at length l + k - 1 (the others are never scored again) */
                const int64_t k = TSW_MIN(next - l, TSW_SHP_FUSE);
                for (int64_t b = 0; b < active; ++b) {
                    const int64_t kb = TSW_MIN(k, lmaxb[b] - l + 1); /* >= 1: b is active */
                    double *acc = w->acc + b * stride;
                    const double *al = a + b + l - 1;
                    const int64_t nub = nu - (kb - 1);
#if TSW_X86
                    if (J->avx2) {
                        tsw__shp_grow_k_avx2(acc, al, kb, bl, nub);
                        continue;
                    }
#endif
                    shp_grow_k(acc, al, kb, bl, nub);
                }
                l += k - 1;
                continue;
            }
            const double *isd;
            int has_flat;
            if (J->ones) {
                isd = J->ones;
                has_flat = 0;
            } else if (J->isd) {
                isd = J->isd + J->isd_off[jj] + li * nj;
                has_flat = J->has_flat[jj * nlen + li];
            } else {
                has_flat = shp_isd_row(J, jj, l, w->row);
                isd = w->row;
            }
            double best[SHP_BLOCK];
            int64_t b = 0;
#if TSW_X86
            if (J->avx2) {
                for (; b + 4 <= active; b += 4) { /* four candidates per pass over the row */
                    double *acc4[4], al4[4], ma4[4];
                    for (int k = 0; k < 4; ++k) {
                        acc4[k] = w->acc + (b + k) * stride;
                        al4[k] = a[b + k + l - 1];
                        ma4[k] = w->cstat[2 * (b + k) * nlen + li];
                    }
                    tsw__shp_grow_score4_avx2(acc4, al4, ma4, bl, P, l, isd, nu, best + b);
                }
                for (; b < active; ++b)
                    best[b] = tsw__shp_grow_score_avx2(w->acc + b * stride, a[b + l - 1], bl, P,
                                                       l, w->cstat[2 * b * nlen + li], isd, nu);
            }
#endif
            for (; b < active; ++b)
                best[b] = shp_grow_score(w->acc + b * stride, a[b + l - 1], bl, P, l,
                                         w->cstat[2 * b * nlen + li], isd, nu);
            for (b = 0; b < active; ++b)
                w->mind2[(b * nlen + li) * ns + jj] =
                    tsw_shp_best_d2(J->d->raw, best[b], l, w->cstat[2 * b * nlen + nlen + li],
                                    ra[b] >= l, has_flat);
            ++li;
            next += J->step;
        }
        if (next <= lmax)
            shp_fill_short(J, i, s0, nb, lmaxb, jj, li, next, w);
    }
}

/* Sift idx[root] down the max-heap idx[0..end) keyed by dist. */
static void shp_sift(int64_t *idx, const double *dist, int64_t root, int64_t end)
{
    for (;;) {
        int64_t c = 2 * root + 1;
        if (c >= end)
            return;
        if (c + 1 < end && dist[idx[c]] < dist[idx[c + 1]])
            ++c;
        if (!(dist[idx[root]] < dist[idx[c]]))
            return;
        int64_t t = idx[root];
        idx[root] = idx[c];
        idx[c] = t;
        root = c;
    }
}

/* idx = the permutation sorting dist: insertion sort for short order lines, heap sort for
 * long ones (no qsort_r, which is not portable, and no allocation). The order inside ties
 * does not matter: no split falls inside one. */
static void shp_sort(int64_t *idx, const double *dist, int64_t n)
{
    for (int64_t k = 0; k < n; ++k)
        idx[k] = k;
    if (n <= 64) {
        for (int64_t k = 1; k < n; ++k) {
            int64_t v = idx[k];
            int64_t m = k;
            while (m > 0 && dist[idx[m - 1]] > dist[v]) {
                idx[m] = idx[m - 1];
                --m;
            }
            idx[m] = v;
        }
        return;
    }
    /* Heap sort: O(n log n), no recursion, no allocation. */
    for (int64_t start = n / 2; start-- > 0;)
        shp_sift(idx, dist, start, n);
    for (int64_t end = n - 1; end > 0; --end) {
        int64_t t = idx[0];
        idx[0] = idx[end];
        idx[end] = t;
        shp_sift(idx, dist, 0, end);
    }
}

/* below[k] = how many raw[m] < raw[k] (m < n): O(n^2) compares without a branch, in a loop
 * over k that the compiler vectorises. */
static void shp_count_below(const double *raw, int64_t n, int64_t *below)
{
    for (int64_t k = 0; k < n; ++k)
        below[k] = 0;
    for (int64_t m = 0; m < n; ++m) {
        const double x = raw[m];
        for (int64_t k = 0; k < n; ++k)
            below[k] += x < raw[k];
    }
}

/* Order line of length index li from mind2 (logic applied) and its best split; own: the
 * class of the candidate's series with one-vs-rest, else -1. */
static int shp_split(const tsw__shp_job *J, const double *mind2, int64_t li, int32_t own,
                     shp_ws *w, double *gain, double *gap, double *thr)
{
    const int64_t ns = J->ng;
    const double *m2 = mind2 + li * J->ns;
    double *line = w->dist; /* sorted distances go to dist after the permutation */
    double *raw = w->acc;   /* free after the fill: (max len) >= ns is ensured */
    for (int64_t jj = 0; jj < ns; ++jj) {
        double v = sqrt(tsw_shp_group_d2(m2, jj, J->gd));
        if (J->p->logic == TSW_LOGIC_AND)
            v = TSW_MAX(v, J->partner[jj]);
        else if (J->p->logic == TSW_LOGIC_OR)
            v = TSW_MIN(v, J->partner[jj]);
        raw[jj] = v;
    }
    if (ns <= SHP_RANK_SORT_MAX) {
        /* position of raw[k]: the number of values below it, plus the slots already taken
         * by equal values (the order inside ties does not matter, see shp_sort) */
        int64_t *below = w->idx;
#if TSW_X86
        if (J->avx2)
            tsw__shp_count_below_avx2(raw, ns, below);
        else
#endif
            shp_count_below(raw, ns, below);
        for (int64_t k = 0; k < ns; ++k)
            w->lab[k] = -1;
        for (int64_t k = 0; k < ns; ++k) {
            int64_t r = below[k];
            while (w->lab[r] >= 0)
                ++r;
            line[r] = raw[k];
            w->lab[r] = tsw_shp_line_label(J->glab[k], own);
        }
    } else {
        shp_sort(w->idx, raw, ns);
        for (int64_t k = 0; k < ns; ++k) {
            line[k] = raw[w->idx[k]];
            w->lab[k] = tsw_shp_line_label(J->glab[w->idx[k]], own);
        }
    }
    return tsw_shp_line_split(line, w->lab, ns, own, J->C, J->total, J->nent, J->btot,
                              J->bnent, J->xlogx, w->left, gain, gap, thr);
}

static int shp_ws_alloc(const tsw__shp_job *J, shp_ws *w)
{
    int64_t maxlen = J->ns;
    for (int64_t jj = 0; jj < J->ns; ++jj)
        maxlen = TSW_MAX(maxlen, J->d->len[J->sub[jj]]);
    memset(w, 0, sizeof(*w));
    const size_t nb = (size_t)J->block;
    size_t b1, b2, b3;
    if (tsw__mul_size((size_t)J->nlen, (size_t)J->ns + 2, &b1) ||
        tsw__mul_size(b1, nb * sizeof(double), &b1) ||
        tsw__mul_size((size_t)maxlen, nb + 1, &b3) ||
        tsw__mul_size(b3 + 2 * (size_t)J->ns + (size_t)J->C, sizeof(double), &b2))
        return TSW_EOVERFLOW;
    w->mind2 = tsw__malloc(b1);
    w->acc = tsw__malloc(b2 + (size_t)J->ns * sizeof(int32_t));
    if (!w->mind2 || !w->acc) {
        tsw__free(w->mind2);
        tsw__free(w->acc);
        return TSW_ENOMEM;
    }
    w->cstat = w->mind2 + J->block * J->nlen * J->ns;
    w->acc_stride = maxlen;
    w->dist = w->acc + J->block * maxlen;
    w->idx = (int64_t *)(w->dist + J->ns);
    w->left = w->idx + J->ns;
    w->row = (double *)(w->left + J->C);
    w->lab = (int32_t *)(w->row + maxlen);
    return TSW_OK;
}

static void shp_ws_free(shp_ws *w)
{
    tsw__free(w->mind2);
    tsw__free(w->acc);
}

/* One work item: the candidates at starts s0 .. s0 + nb - 1 of series i, nl[b] lengths each
 * (not increasing in b; nl[0] >= 1); candidate b's distances go to shp_mind2(J, w, b).
 * Returns 1 when the call was cancelled meanwhile (mind2 is then incomplete). */
static int shp_fill(const tsw__shp_job *J, int64_t i, int64_t s0, int64_t nb, const int64_t *nl,
                    shp_ws *w)
{
    if (J->reference) {
        for (int64_t b = 0; b < nb && nl[b] > 0; ++b) {
            if (shp_ws_poll(w))
                return 1;
            shp_fill_reference(J, i, s0 + b, nl[b], w->mind2 + b * J->nlen * J->ns);
        }
        return shp_ws_poll(w);
    }
    shp_fill_fast(J, i, s0, nb, nl, w);
    return shp_ws_poll(w);
}

static const double *shp_mind2(const tsw__shp_job *J, const shp_ws *w, int64_t b)
{
    return w->mind2 + b * J->nlen * J->ns;
}

/* The lengths of the block of starts s0 .. s0 + nb - 1 of series i: nl[b], and their sum. */
static int64_t shp_block_lengths(const tsw__shp_job *J, int64_t i, int64_t s0, int64_t nb,
                                 int64_t *nl)
{
    int64_t sum = 0;
    for (int64_t b = 0; b < nb; ++b)
        sum += nl[b] = tsw__shp_nlen_at(J, i, s0 + b);
    return sum;
}

/* The 1/std table of the CPU fast path, when it takes at most tsw__shapelet_table_bytes (else
 * each item recomputes its rows: a sqrt and a division per window and length); raw data: one
 * row of ones for every series and length; the block size and the instruction set. Tables
 * that cannot be allocated are recomputed per item instead. */
static int shp_prepare(tsw__shp_job *J)
{
    /* starts per work item: SHP_BLOCK, fewer when their distances would pass 16 MiB */
    J->block = SHP_BLOCK;
    while (J->block > 1 && (double)J->block * (double)J->nlen * (double)J->ns * 8.0 > 16777216.0)
        J->block /= 2;
    J->avx2 = 0;
#if TSW_X86
    J->avx2 = tsw__shapelet_simd != 0 && tsw__cpu_level() >= 2;
#endif
    const tsw__shp_data *d = J->d;
    const int64_t ns = J->ns;
    if (!J->reference && d->raw) {
        int64_t longest = 0;
        for (int64_t k = 0; k < ns; ++k)
            longest = TSW_MAX(longest, d->len[J->sub[k]]);
        if ((double)longest * sizeof(double) <= tsw__shapelet_table_bytes) /* else per item */
            J->ones = tsw__malloc((size_t)longest * sizeof(double)); /* NULL: the same */
        for (int64_t u = 0; J->ones && u < longest; ++u)
            J->ones[u] = 1.0;
    }
    const tsw_exec *exec = J->ex;
    if (!J->reference && !d->raw) { /* raw: every weight is 1 (shp_isd_row) */
        double cells = 0.0;
        for (int64_t k = 0; k < ns; ++k)
            cells += (double)d->len[J->sub[k]] * (double)J->nlen;
        if (cells * sizeof(double) <= tsw__shapelet_table_bytes) {
            J->isd = tsw__malloc((size_t)cells * sizeof(double));
            J->isd_off = tsw__malloc((size_t)ns * sizeof(int64_t));
            J->has_flat = tsw__malloc((size_t)ns * (size_t)J->nlen);
            if (!J->isd || !J->isd_off || !J->has_flat) {
                tsw__free(J->isd);
                tsw__free(J->isd_off);
                tsw__free(J->has_flat);
                J->isd = NULL; /* fall back to rows computed per item */
                J->isd_off = NULL;
                J->has_flat = NULL;
            } else {
                int64_t o = 0;
                for (int64_t k = 0; k < ns; ++k) {
                    J->isd_off[k] = o;
                    o += d->len[J->sub[k]] * J->nlen;
                }
#pragma omp parallel for schedule(dynamic, 1) num_threads(tsw__threads(exec))
                for (int64_t k = 0; k < ns; ++k)
                    for (int64_t li = 0; li < J->nlen; ++li)
                        J->has_flat[k * J->nlen + li] = (unsigned char)shp_isd_row(
                            J, k, J->minl + li * J->step,
                            J->isd + J->isd_off[k] + li * d->len[J->sub[k]]);
            }
        }
    }
    return TSW_OK;
}

/* Frees what shp_prepare allocated. */
static void shp_release(tsw__shp_job *J)
{
    tsw__free(J->ones);
    tsw__free(J->isd);
    tsw__free(J->isd_off);
    tsw__free(J->has_flat);
    J->ones = NULL;
    J->isd = NULL;
    J->isd_off = NULL;
    J->has_flat = NULL;
}

/* ---- tsw_shapelet_search's candidates --------------------------------------------------- */

int tsw__cpu_shapelet_search(tsw__shp_job *J, tsw_shapelet *best)
{
    int rc = shp_prepare(J);
    if (rc)
        return rc;
    /* Items: (series k of the subset, block of J->block starts from s0), numbered through
     * per-series prefix counts. */
    int64_t *first = tsw__malloc(((size_t)J->ns + 1) * sizeof(int64_t));
    int nt = tsw__threads(J->ex);
    tsw_shapelet *tbest = tsw__malloc((size_t)nt * sizeof(tsw_shapelet));
    if (!first || !tbest) {
        tsw__free(first);
        tsw__free(tbest);
        shp_release(J);
        return TSW_ENOMEM;
    }
    first[0] = 0;
    for (int64_t k = 0; k < J->ns; ++k)
        first[k + 1] = first[k] + (J->d->len[J->sub[k]] + J->block - 1) / J->block;
    const int64_t n_items = first[J->ns];
    for (int t = 0; t < nt; ++t)
        tbest[t] = (tsw_shapelet){-1, 0, 0, 0.0, 0.0, 0.0, 0};
    int alloc_fail = 0;

#pragma omp parallel num_threads(nt)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        shp_ws w;
        int64_t last = tsw__shp_now_ns();
        int ok = shp_ws_alloc(J, &w) == TSW_OK;
        if (!ok)
            __atomic_store_n(&alloc_fail, 1, __ATOMIC_RELAXED);
        w.job = J;
        w.tid = tid;
        w.last = last;
        tsw_shapelet mine = {-1, 0, 0, 0.0, 0.0, 0.0, 0};
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < n_items; ++it) {
            if (!ok || tsw__shp_poll(J, tid, &last))
                continue;
            int64_t lo = 0, hi = J->ns - 1; /* the series of item it */
            while (lo < hi) {
                int64_t mid = (lo + hi + 1) / 2;
                if (first[mid] <= it)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            const int64_t i = J->sub[lo], s0 = (it - first[lo]) * J->block;
            const int32_t own = J->ovr ? J->glab[lo / J->gd] : -1;
            const int64_t nb = TSW_MIN(J->block, J->d->len[i] - s0);
            int64_t nl[SHP_BLOCK];
            const int64_t n_cand = shp_block_lengths(J, i, s0, nb, nl);
            if (n_cand == 0)
                continue;
            if (shp_fill(J, i, s0, nb, nl, &w))
                continue;
            for (int64_t b = 0; b < nb; ++b)
                for (int64_t li = 0; li < nl[b]; ++li) {
                    tsw_shapelet c = tsw__shp_cand(J, lo, s0 + b, li);
                    if (!shp_split(J, shp_mind2(J, &w, b), li, own, &w, &c.gain, &c.gap,
                                   &c.threshold))
                        continue;
                    if (mine.series < 0 || tsw__shp_cand_better(&c, &mine))
                        mine = c;
                }
            __atomic_fetch_add(&J->done, n_cand, __ATOMIC_RELAXED);
        }
        tbest[tid] = mine;
        if (ok)
            shp_ws_free(&w);
    }

    rc = alloc_fail ? TSW_ENOMEM : J->status;
    if (rc == TSW_OK) {
        tsw_shapelet r = {-1, 0, 0, 0.0, 0.0, 0.0, 0};
        for (int t = 0; t < nt; ++t)
            if (tbest[t].series >= 0 && (r.series < 0 || tsw__shp_cand_better(&tbest[t], &r)))
                r = tbest[t];
        *best = r;
    }
    tsw__free(first);
    tsw__free(tbest);
    shp_release(J);
    return rc;
}

/* ---- tsw_shapelet_top's per-series lists ------------------------------------------------- */

int tsw__cpu_shapelet_top(tsw__shp_job *J, int64_t per, size_t cand_bytes, tsw_shapelet *kept,
                          int64_t *nkept)
{
    int rc = shp_prepare(J), alloc_fail = 0;
    if (rc)
        return rc;
    const int nt = tsw__threads(J->ex);

#pragma omp parallel num_threads(nt)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        shp_ws w;
        int64_t last = tsw__shp_now_ns();
        tsw_shapelet *cand = tsw__malloc(cand_bytes);
        int ok = cand && shp_ws_alloc(J, &w) == TSW_OK;
        if (!ok) {
            tsw__free(cand);
            cand = NULL;
            __atomic_store_n(&alloc_fail, 1, __ATOMIC_RELAXED);
        }
        w.job = J;
        w.tid = tid;
        w.last = last;
#pragma omp for schedule(dynamic, 1)
        for (int64_t g = 0; g < J->ng; ++g) {
            nkept[g] = 0;
            if (!ok)
                continue;
            int64_t nc = 0;
            const int32_t own = J->ovr ? J->glab[g] : -1;
            for (int64_t jj = g * J->gd; jj < (g + 1) * J->gd; ++jj) {
                const int64_t i = J->sub[jj];
                for (int64_t s0 = 0; s0 < J->d->len[i]; s0 += J->block) {
                    if (tsw__shp_poll(J, tid, &last))
                        break;
                    const int64_t nb = TSW_MIN(J->block, J->d->len[i] - s0);
                    int64_t nl[SHP_BLOCK];
                    const int64_t n_cand = shp_block_lengths(J, i, s0, nb, nl);
                    if (n_cand == 0)
                        break; /* later starts have no room either */
                    if (shp_fill(J, i, s0, nb, nl, &w))
                        break;
                    for (int64_t b = 0; b < nb; ++b)
                        for (int64_t li = 0; li < nl[b]; ++li) {
                            tsw_shapelet c = tsw__shp_cand(J, jj, s0 + b, li);
                            if (shp_split(J, shp_mind2(J, &w, b), li, own, &w, &c.gain,
                                          &c.gap, &c.threshold))
                                cand[nc++] = c;
                        }
                    __atomic_fetch_add(&J->done, n_cand, __ATOMIC_RELAXED);
                }
            }
            nkept[g] = tsw__shp_top_series(cand, nc, per, kept + g * per);
        }
        if (ok) {
            tsw__free(cand);
            shp_ws_free(&w);
        }
    }

    shp_release(J);
    return alloc_fail ? TSW_ENOMEM : J->status;
}

/* ---- tsw_shapelet_features' distances --------------------------------------------------- */

/*
 * Shapelet k of S against series j of X: the least d^2 over the alignments, the first best
 * in *where (the shapelet's start in the series: u >= 0, or -u when the series is shorter
 * and lies at offset u of the shapelet) and, thr >= 0, in *near how many alignments lie
 * within thr. The windows have min(l, n) points: the shorter of the two is taken whole.
 */
static double shp_feature_pair(const tsw__shp_data *S, int64_t k, const tsw__shp_data *X, int64_t j,
                               int reference, double thr, int64_t *where, int64_t *near)
{
    const int64_t l = S->len[k], n = X->len[j], m = TSW_MIN(l, n), nu = TSW_MAX(l, n) - m + 1;
    const double *a = shp_z(S, k), *Pa = shp_P(S, k), *Qa = shp_Q(S, k);
    const double *b = shp_z(X, j), *Pb = shp_P(X, j), *Qb = shp_Q(X, j);
    const int64_t *ra = shp_run(S, k), *rb = shp_run(X, j);
    double best = TSW_INF_F64;
    int64_t at = 0, cnt = 0;
    for (int64_t u = 0; u < nu; ++u) {
        const int64_t ua = n < l ? u : 0, ub = n < l ? 0 : u;
        const double v =
            reference ? shp_d2_direct(S->raw, a + ua, b + ub, m)
                      : tsw_shp_pair_d2(S->raw, a + ua, Pa[ua + m] - Pa[ua], Qa[ua + m] - Qa[ua],
                                        ra[ua] >= m, b + ub, Pb[ub + m] - Pb[ub],
                                        Qb[ub + m] - Qb[ub], rb[ub] >= m, m);
        if (v < best) {
            best = v;
            at = u;
        }
        if (thr >= 0.0)
            cnt += sqrt(v) <= thr;
    }
    *where = n < l ? -at : at;
    *near = cnt;
    return best;
}

int tsw__cpu_shapelet_features(const tsw__shp_data *S, const double *thresholds,
                               const tsw__shp_data *X, int reference, double *dist,
                               int64_t *pos, int64_t *count, const tsw_exec *exec)
{
    const int64_t nsh = S->count;
    const int raw = S->raw;
    tsw__shp_job J; /* progress bookkeeping only */
    memset(&J, 0, sizeof(J));
    J.ex = exec;
    J.work = X->count * nsh;
    J.status = TSW_OK;
    int nt = tsw__threads(exec);

#pragma omp parallel num_threads(nt)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        int64_t last = tsw__shp_now_ns();
#pragma omp for schedule(dynamic, 1)
        for (int64_t j = 0; j < X->count; ++j) {
            if (tsw__shp_poll(&J, tid, &last))
                continue;
            for (int64_t k = 0; k < nsh; ++k) {
                int64_t where, near;
                const double best = shp_feature_pair(S, k, X, j, reference,
                                                     count ? thresholds[k] : -1.0, &where,
                                                     &near);
                dist[j * nsh + k] = raw ? sqrt(best) * S->scale : sqrt(best);
                if (pos)
                    pos[j * nsh + k] = where;
                if (count)
                    count[j * nsh + k] = near;
            }
            __atomic_fetch_add(&J.done, nsh, __ATOMIC_RELAXED);
        }
    }
    return J.status;
}
