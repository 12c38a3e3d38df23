/*
 * Shapelet discovery on the CPU (include/tswarp.h, "Shapelets").
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
#include "common/shapelet.h"
#include "cpu/kernels.h"
#include "cpu/shapelet_kernels.h"
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SHP_PROGRESS_NS 50000000LL
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

static int64_t shp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void tsw_shapelet_params_default(tsw_shapelet_params *p)
{
    memset(p, 0, sizeof(*p));
    p->min_length = 3;
    p->max_length = 0;
    p->length_step = 1;
    p->n_classes = 0;
    p->logic = TSW_LOGIC_NONE;
    p->partner = NULL;
    p->dilation = 1;
    p->one_vs_rest = 0;
    p->raw = 0;
}

/* ---- standardised data ------------------------------------------------------------------ */

/* Every series of a collection standardised (mean 0, std 1) in double, with prefix sums P
 * (sum) and Q (sum of squares) and run lengths: series i has z[off[i] .. off[i]+len[i]),
 * P/Q[off[i] + i .. off[i] + i + len[i]] (len + 1 entries, P[0] = 0), and run[off[i] + t]
 * = how many values from t on equal x_i[t], so window [u, u+l) is constant iff run >= l.
 * raw (shapelets that are not z-normalised): z = (x - shift) / scale with one shift and
 * scale for the whole collection, the distances then in units of scale. */
typedef struct {
    int64_t count;
    int64_t *off, *len, *run;
    double *z, *P, *Q;
    int raw;
    double shift, scale;
} shp_data;

static void shp_data_free(shp_data *d)
{
    tsw__free(d->off);
    tsw__free(d->z);
    tsw__free(d->P);
    tsw__free(d->run);
    d->off = d->len = d->run = NULL;
    d->z = d->P = d->Q = NULL;
}

static double shp_value(tsw_dtype dt, const void *v, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)v)[k] : ((const double *)v)[k];
}

/* Mean and population std of all the values of a collection (std 0 -> 1): the shift and
 * scale of raw data. */
static void shp_coll_stats(tsw_dtype dt, const tsw_collection *c, double *shift, double *scale)
{
    const size_t esz = tsw__dtype_size(dt);
    double sum = 0.0, var = 0.0;
    int64_t rows = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        for (int64_t t = 0; t < n; ++t)
            sum += shp_value(dt, src, t);
        rows += n;
    }
    const double mean = rows > 0 ? sum / (double)rows : 0.0;
    for (int64_t i = 0; i < c->count; ++i) {
        const int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        for (int64_t t = 0; t < n; ++t) {
            const double v = shp_value(dt, src, t) - mean;
            var += v * v;
        }
    }
    const double sd = rows > 0 ? sqrt(var / (double)rows) : 0.0;
    *shift = mean;
    *scale = sd > 0.0 && sd <= DBL_MAX ? sd : 1.0;
}

/* Checks the collection (univariate, finite, lengths >= 1) and standardises it: each series
 * on its own, or, raw, all of them by ref[0] (shift) and ref[1] (scale), or by the
 * collection's own when ref is NULL. */
static int shp_data_make(tsw_dtype dt, const tsw_collection *c, shp_data *d, int raw,
                         const double *ref)
{
    memset(d, 0, sizeof(*d));
    if (!c || !c->values)
        return TSW_EINVAL;
    if (c->count < 1)
        return TSW_ESHAPE;
    if (dt != TSW_F32 && dt != TSW_F64)
        return TSW_EDTYPE;
    int64_t rows = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        int rc = tsw__check_span(c, i, 1, tsw__dtype_size(dt));
        if (rc)
            return rc == TSW_EINVAL ? TSW_ESHAPE : rc;
        int64_t n = tsw__coll_len(c, i);
        if (n > INT64_MAX / 16 - rows - c->count)
            return TSW_EOVERFLOW;
        rows += n;
    }
    size_t zb, pb, ob;
    if (tsw__mul_size((size_t)rows, sizeof(double), &zb) ||
        tsw__mul_size((size_t)(rows + c->count), 2 * sizeof(double), &pb) ||
        tsw__mul_size((size_t)c->count, 2 * sizeof(int64_t), &ob))
        return TSW_EOVERFLOW;
    d->count = c->count;
    d->off = tsw__malloc(ob);
    d->z = tsw__malloc(zb);
    d->P = tsw__malloc(pb);
    d->run = tsw__malloc(zb);
    if (!d->off || !d->z || !d->P || !d->run) {
        shp_data_free(d);
        return TSW_ENOMEM;
    }
    d->len = d->off + c->count;
    d->Q = d->P + (rows + c->count);
    d->raw = raw;
    d->shift = 0.0;
    d->scale = 1.0;
    const size_t esz = tsw__dtype_size(dt);
    for (int64_t i = 0; i < c->count; ++i) /* finite first: raw data's stats sum them all */
        if (tsw__check_finite(dt, (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz,
                              tsw__coll_len(c, i))) {
            shp_data_free(d);
            return TSW_ENONFINITE;
        }
    if (raw && ref) {
        d->shift = ref[0];
        d->scale = ref[1];
    } else if (raw) {
        shp_coll_stats(dt, c, &d->shift, &d->scale);
    }
    int64_t row = 0;
    for (int64_t i = 0; i < c->count; ++i) {
        int64_t n = tsw__coll_len(c, i);
        const char *src = (const char *)c->values + (size_t)tsw__coll_off(c, i) * esz;
        d->off[i] = row;
        d->len[i] = n;
        double mean = d->shift, inv = 1.0 / d->scale; /* raw: the collection's */
        if (!raw) { /* the series' own */
            double var = 0.0;
            mean = 0.0;
            for (int64_t t = 0; t < n; ++t)
                mean += shp_value(dt, src, t);
            mean /= (double)n;
            for (int64_t t = 0; t < n; ++t) {
                double v = shp_value(dt, src, t) - mean;
                var += v * v;
            }
            double sd = sqrt(var / (double)n);
            inv = sd > 0.0 ? 1.0 / sd : 0.0;
        }
        double *z = d->z + row, *P = d->P + row + i, *Q = d->Q + row + i;
        P[0] = Q[0] = 0.0;
        for (int64_t t = 0; t < n; ++t) {
            z[t] = (shp_value(dt, src, t) - mean) * inv;
            P[t + 1] = P[t] + z[t];
            Q[t + 1] = Q[t] + z[t] * z[t];
        }
        int64_t *run = d->run + row;
        run[n - 1] = 1;
        for (int64_t t = n - 1; t-- > 0;)
            run[t] = shp_value(dt, src, t) == shp_value(dt, src, t + 1) ? run[t + 1] + 1 : 1;
        row += n;
    }
    return TSW_OK;
}

static inline const double *shp_z(const shp_data *d, int64_t i) { return d->z + d->off[i]; }
static inline const double *shp_P(const shp_data *d, int64_t i) { return d->P + d->off[i] + i; }
static inline const double *shp_Q(const shp_data *d, int64_t i) { return d->Q + d->off[i] + i; }
static inline const int64_t *shp_run(const shp_data *d, int64_t i) { return d->run + d->off[i]; }

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

/* ---- one job ------------------------------------------------------------------------------ */

typedef struct {
    const tsw_shapelet_params *p;
    const shp_data *d;
    int64_t *sub; /* (ns,) the searched series (indices into d) */
    int64_t ns;
    /* Dilation gd: d holds the gd phases of each searched series (x_k[p], x_k[p + gd], ..),
     * sub[g gd + p] being phase p of the g-th; with gd = 1, d is the caller's collection.
     * The order lines have ng = ns / gd entries: group g's distance is the least of its
     * phases', its label glab[g], its index in the caller's collection orig[g]. */
    int64_t gd, ng;
    int64_t *orig;
    int32_t *glab;
    /* logical shapelets: the partner's distances in the data's units (divided by d->scale
     * for raw data; then a copy the job owns, partner_own) */
    const double *partner;
    double *partner_own;
    int64_t minl, maxl, step, nlen; /* the length set */
    int C;
    int64_t *total; /* (C,) class counts of the searched series */
    /* one-vs-rest (ovr): the two-class counts of class c against the rest, btot[2 c ..]
     * (rest, c), and their tsw_shp_nentropy, bnent[c] */
    int ovr;
    int64_t *btot;
    double *bnent;
    /* fast path: 1/std of every window, isd[isd_off[jj] + li * len_j + u], and whether
     * searched series jj has a constant window of length index li (NULL: too large) */
    double *isd;
    int64_t *isd_off;
    unsigned char *has_flat;
    double *ones; /* raw data: every weight 1, (longest searched series,) (NULL: per item) */
    double nent;
    double *xlogx; /* (ng + 1,) c log c */
    int reference;
    int avx2; /* the fast path's loops in shapelet_avx2.c */
    int64_t block; /* candidate starts per work item (shp_fill) */
    const tsw_exec *ex;
    int64_t done, work; /* progress, in candidates */
    int status;
} shp_job;

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
} shp_ws;

/* Longest length of the set usable at start s of series i (0: none). */
static int64_t shp_nlen_at(const shp_job *J, int64_t i, int64_t s)
{
    int64_t room = J->d->len[i] - s;
    int64_t lmax = room < J->maxl ? room : J->maxl;
    if (lmax < J->minl)
        return 0;
    return (lmax - J->minl) / J->step + 1;
}

/* mind2[li, jj] for every length index li < nl of candidate (i, s): eq. 2 directly. A
 * series shorter than the candidate (nj < l) slides along it: the least over the candidate's
 * windows of nj points against the whole series (include/tswarp.h). */
static void shp_fill_reference(const shp_job *J, int64_t i, int64_t s, int64_t nl,
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
static int shp_isd_row(const shp_job *J, int64_t jj, int64_t l, double *row)
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
static void shp_fill_short(const shp_job *J, int64_t i, int64_t s0, int64_t nb,
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
static void shp_fill_fast(const shp_job *J, int64_t i, int64_t s0, int64_t nb,
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
static int shp_split(const shp_job *J, const double *mind2, int64_t li, int32_t own,
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

/* Total order on candidates: quality, then the smaller (series, start, length). */
static int shp_cand_better(const tsw_shapelet *a, const tsw_shapelet *b)
{
    if (tsw_shp_better(a->gain, a->gap, b->gain, b->gap) ||
        tsw_shp_better(b->gain, b->gap, a->gain, a->gap))
        return tsw_shp_better(a->gain, a->gap, b->gain, b->gap);
    if (a->series != b->series)
        return a->series < b->series;
    if (a->start != b->start)
        return a->start < b->start;
    return a->length < b->length;
}

static int shp_ws_alloc(const shp_job *J, shp_ws *w)
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

/* Poll between items: only the calling thread calls the user's callback (tswarp.h). */
static int shp_poll(shp_job *J, int tid, int64_t *last)
{
    if (tid == 0 && J->ex->progress) {
        int64_t now = shp_now_ns();
        if (now - *last >= SHP_PROGRESS_NS) {
            *last = now;
            int64_t dn = __atomic_load_n(&J->done, __ATOMIC_RELAXED);
            if (J->ex->progress(J->ex->progress_user, dn, J->work))
                __atomic_store_n(&J->status, TSW_ECANCELED, __ATOMIC_RELAXED);
        }
    }
    return __atomic_load_n(&J->status, __ATOMIC_RELAXED) != TSW_OK;
}

static int shp_threads(const tsw_exec *ex) { return tsw__threads(ex); }

/* One work item: the candidates at starts s0 .. s0 + nb - 1 of series i, nl[b] lengths each
 * (not increasing in b; nl[0] >= 1); candidate b's distances go to shp_mind2(J, w, b). */
static void shp_fill(const shp_job *J, int64_t i, int64_t s0, int64_t nb, const int64_t *nl,
                     shp_ws *w)
{
    if (J->reference) {
        for (int64_t b = 0; b < nb && nl[b] > 0; ++b)
            shp_fill_reference(J, i, s0 + b, nl[b], w->mind2 + b * J->nlen * J->ns);
    } else {
        shp_fill_fast(J, i, s0, nb, nl, w);
    }
}

static const double *shp_mind2(const shp_job *J, const shp_ws *w, int64_t b)
{
    return w->mind2 + b * J->nlen * J->ns;
}

/* The lengths of the block of starts s0 .. s0 + nb - 1 of series i: nl[b], and their sum. */
static int64_t shp_block_lengths(const shp_job *J, int64_t i, int64_t s0, int64_t nb,
                                 int64_t *nl)
{
    int64_t sum = 0;
    for (int64_t b = 0; b < nb; ++b)
        sum += nl[b] = shp_nlen_at(J, i, s0 + b);
    return sum;
}

/* ---- validation shared by search and top --------------------------------------------------- */

/* The gd phases of each series orig[g] (g < ng) of x, in double, back to back: phase p of
 * series g is row g gd + p of the collection pc, whose buffers *vals and *offs (offsets, then
 * lengths) the caller frees. */
static int shp_phases(tsw_dtype dt, const tsw_collection *x, const int64_t *orig, int64_t ng,
                      int64_t gd, tsw_collection *pc, double **vals, int64_t **offs)
{
    int64_t rows = 0;
    for (int64_t g = 0; g < ng; ++g)
        rows += tsw__coll_len(x, orig[g]); /* checked against overflow by the caller */
    size_t ob;
    if (tsw__mul_size((size_t)ng, 2 * (size_t)gd * sizeof(int64_t), &ob))
        return TSW_EOVERFLOW;
    *vals = tsw__malloc((size_t)rows * sizeof(double));
    *offs = tsw__malloc(ob);
    if (!*vals || !*offs) {
        tsw__free(*vals);
        tsw__free(*offs);
        *vals = NULL;
        *offs = NULL;
        return TSW_ENOMEM;
    }
    int64_t *off = *offs, *len = off + ng * gd, row = 0;
    for (int64_t g = 0; g < ng; ++g) {
        const int64_t n = tsw__coll_len(x, orig[g]);
        const char *src = (const char *)x->values +
                          (size_t)tsw__coll_off(x, orig[g]) * tsw__dtype_size(dt);
        for (int64_t ph = 0; ph < gd; ++ph) {
            off[g * gd + ph] = row;
            len[g * gd + ph] = (n - ph + gd - 1) / gd; /* >= 1: n >= gd */
            for (int64_t t = ph; t < n; t += gd)
                (*vals)[row++] = shp_value(dt, src, t);
        }
    }
    memset(pc, 0, sizeof(*pc));
    pc->values = *vals;
    pc->offsets = off;
    pc->lengths = len;
    pc->count = ng * gd;
    return TSW_OK;
}

static void shp_job_free(shp_job *J, shp_data *d);

static int shp_job_make(const tsw_shapelet_params *p, tsw_dtype dt, const tsw_collection *x,
                        const int32_t *labels, const int64_t *subset, int64_t n_subset,
                        const tsw_exec *exec, shp_job *J, shp_data *d)
{
    int rc;
    memset(J, 0, sizeof(*J));
    memset(d, 0, sizeof(*d));
    if (!p || !x || !labels)
        return TSW_EINVAL;
    if ((rc = tsw__check_exec(exec)))
        return rc;
    if (p->n_classes < 2 || p->min_length < 2 || p->length_step < 1 || p->max_length < 0 ||
        (p->max_length && p->max_length < p->min_length) || p->dilation < 1 ||
        (p->one_vs_rest != 0 && p->one_vs_rest != 1) || (p->raw != 0 && p->raw != 1) ||
        (p->logic != TSW_LOGIC_NONE && p->logic != TSW_LOGIC_AND && p->logic != TSW_LOGIC_OR))
        return TSW_EPARAM;
    if (p->logic != TSW_LOGIC_NONE && !p->partner)
        return TSW_EINVAL;
    if (!x->values)
        return TSW_EINVAL;
    if (x->count < 2 || (subset && n_subset < 2))
        return TSW_ESHAPE;
    if (dt != TSW_F32 && dt != TSW_F64)
        return TSW_EDTYPE;
    const int64_t ng = subset ? n_subset : x->count, gd = p->dilation;
    int64_t longest = 0;
    for (int64_t k = 0; k < ng; ++k) {
        int64_t j = subset ? subset[k] : k;
        if (j < 0 || j >= x->count)
            return TSW_EINVAL;
        if (labels[j] < 0 || labels[j] >= p->n_classes)
            return TSW_EINVAL;
        if (p->logic != TSW_LOGIC_NONE && !(p->partner[k] >= 0.0 && p->partner[k] < TSW_INF_F64))
            return TSW_EINVAL;
        int rc = tsw__check_span(x, j, 1, sizeof(double));
        if (rc)
            return rc == TSW_EINVAL ? TSW_ESHAPE : rc;
        int64_t n = tsw__coll_len(x, j);
        if (n < gd) /* n >= 1, and no phase is empty */
            return TSW_ESHAPE;
        longest = n > longest ? n : longest;
    }
    /* every phase of the longest series holds the longest candidate; shorter series slide
     * along the candidates they cannot hold (shp_fill_reference) */
    const int64_t room = longest / gd;
    int64_t maxl = p->max_length ? p->max_length : room;
    if (p->min_length > room || maxl > room)
        return TSW_ESHAPE;
    const int64_t ns = ng * gd;
    size_t bytes;
    if (ns / gd != ng || tsw__mul_size((size_t)ns, sizeof(int64_t), &bytes) ||
        tsw__mul_size((size_t)ng, 2 * sizeof(int64_t) + sizeof(int32_t), &bytes) ||
        tsw__mul_size((size_t)p->n_classes, sizeof(int64_t), &bytes))
        return TSW_EOVERFLOW;
    J->sub = tsw__malloc(((size_t)ns + (size_t)p->n_classes + (size_t)ng) * sizeof(int64_t));
    J->glab = tsw__malloc((size_t)ng * sizeof(int32_t));
    J->xlogx = tsw__malloc(((size_t)ng + 1) * sizeof(double));
    J->btot = tsw__malloc(2 * (size_t)p->n_classes * sizeof(int64_t));
    J->bnent = tsw__malloc((size_t)p->n_classes * sizeof(double));
    if (!J->sub || !J->glab || !J->xlogx || !J->btot || !J->bnent) {
        shp_job_free(J, d);
        return TSW_ENOMEM;
    }
    J->total = J->sub + ns;
    J->orig = J->total + p->n_classes;
    for (int64_t c = 0; c <= ng; ++c)
        J->xlogx[c] = tsw_shp_xlogx(c);
    for (int c = 0; c < p->n_classes; ++c)
        J->total[c] = 0;
    for (int64_t k = 0; k < ng; ++k) {
        J->orig[k] = subset ? subset[k] : k;
        J->glab[k] = labels[J->orig[k]];
        J->total[J->glab[k]] += 1;
    }
    for (int c = 0; c < p->n_classes; ++c) {
        J->btot[2 * c] = ng - J->total[c];
        J->btot[2 * c + 1] = J->total[c];
        J->bnent[c] = tsw_shp_nentropy(J->btot + 2 * c, 2, ng);
    }
    /* distinct indices: a repeated series would be counted twice */
    for (int64_t k = 1; subset && k < ng; ++k)
        for (int64_t m = 0; m < k; ++m)
            if (J->orig[m] == J->orig[k]) {
                shp_job_free(J, d);
                return TSW_EINVAL;
            }
    if (gd == 1) {
        memcpy(J->sub, J->orig, (size_t)ng * sizeof(int64_t));
        rc = shp_data_make(dt, x, d, p->raw, NULL);
    } else {
        /* only the searched series are split: sub is every row of the phase collection */
        tsw_collection pc;
        double *vals = NULL;
        int64_t *offs = NULL;
        for (int64_t k = 0; k < ns; ++k)
            J->sub[k] = k;
        rc = shp_phases(dt, x, J->orig, ng, gd, &pc, &vals, &offs);
        if (rc == TSW_OK) {
            rc = shp_data_make(TSW_F64, &pc, d, p->raw, NULL); /* which keeps its own copy */
            tsw__free(vals);
            tsw__free(offs);
        }
    }
    if (rc) {
        shp_job_free(J, d);
        return rc;
    }
    J->partner = p->partner;
    if (p->logic != TSW_LOGIC_NONE && d->raw) {
        J->partner_own = tsw__malloc((size_t)ng * sizeof(double));
        if (!J->partner_own) {
            shp_job_free(J, d);
            return TSW_ENOMEM;
        }
        for (int64_t k = 0; k < ng; ++k)
            J->partner_own[k] = p->partner[k] / d->scale;
        J->partner = J->partner_own;
    }
    J->p = p;
    J->d = d;
    J->ns = ns;
    J->ng = ng;
    J->gd = gd;
    J->minl = p->min_length;
    J->maxl = maxl;
    /* A step past the longest length is the one length minl: capped so that no loop over
     * lengths (l += step, here and in the CUDA search) can overflow. */
    J->step = p->length_step > maxl - J->minl + 1 ? maxl - J->minl + 1 : p->length_step;
    J->nlen = (maxl - J->minl) / J->step + 1;
    J->C = p->n_classes;
    J->ovr = p->one_vs_rest;
    J->nent = tsw_shp_nentropy(J->total, J->C, ng);
    /* starts per work item: SHP_BLOCK, fewer when their distances would pass 16 MiB */
    J->block = SHP_BLOCK;
    while (J->block > 1 && (double)J->block * (double)J->nlen * (double)ns * 8.0 > 16777216.0)
        J->block /= 2;
    J->reference = exec->impl == TSW_IMPL_REFERENCE;
#if TSW_X86
    J->avx2 = tsw__shapelet_simd != 0 && tsw__cpu_level() >= 2;
#endif
    J->ex = exec;
    J->status = TSW_OK;
    for (int64_t k = 0; k < ns; ++k)
        for (int64_t s = 0; s < d->len[J->sub[k]]; ++s)
            J->work += shp_nlen_at(J, J->sub[k], s);
    return TSW_OK;
}

/* Candidate (sub[k], start s, length index li) in the caller's terms: its series, and its
 * start in that series (phase k % gd, s steps of gd on). */
static tsw_shapelet shp_cand(const shp_job *J, int64_t k, int64_t s, int64_t li)
{
    tsw_shapelet c;
    c.series = J->orig[k / J->gd];
    c.start = k % J->gd + s * J->gd;
    c.length = J->minl + li * J->step;
    c.threshold = c.gain = c.gap = 0.0;
    c.dilation = J->gd;
    return c;
}

/* The 1/std table of the CPU fast path, when it takes at most tsw__shapelet_table_bytes (else
 * each item recomputes its rows: a sqrt and a division per window and length); raw data: one
 * row of ones for every series and length. */
static void shp_job_table(shp_job *J)
{
    const shp_data *d = J->d;
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
#pragma omp parallel for schedule(dynamic, 1) num_threads(shp_threads(exec))
                for (int64_t k = 0; k < ns; ++k)
                    for (int64_t li = 0; li < J->nlen; ++li)
                        J->has_flat[k * J->nlen + li] = (unsigned char)shp_isd_row(
                            J, k, J->minl + li * J->step,
                            J->isd + J->isd_off[k] + li * d->len[J->sub[k]]);
            }
        }
    }
}

static void shp_job_free(shp_job *J, shp_data *d)
{
    tsw__free(J->partner_own);
    J->partner_own = NULL;
    tsw__free(J->ones);
    J->ones = NULL;
    tsw__free(J->isd);
    tsw__free(J->isd_off);
    tsw__free(J->has_flat);
    tsw__free(J->xlogx);
    tsw__free(J->bnent);
    tsw__free(J->btot);
    tsw__free(J->glab);
    tsw__free(J->sub);
    J->isd = NULL;
    J->isd_off = NULL;
    J->has_flat = NULL;
    J->xlogx = NULL;
    J->bnent = NULL;
    J->btot = NULL;
    J->glab = NULL;
    J->sub = NULL;
    shp_data_free(d);
}

/* ---- the GPU (cuda/shapelet.cu) --------------------------------------------------------- */

static int shp_cmp_cand(const void *x, const void *y);

/* Thresholds and gaps of raw data back in the data's units (the search's are in units of
 * the collection's scale). */
static void shp_units(const shp_job *J, tsw_shapelet *c, int64_t n)
{
    for (int64_t k = 0; J->d->raw && k < n; ++k) {
        c[k].threshold *= J->d->scale;
        c[k].gap *= J->d->scale;
    }
}

/* Points of a series a candidate spans, first to last. */
static int64_t shp_span(const tsw_shapelet *c) { return (c->length - 1) * c->dilation + 1; }

/* One series' candidates (any order) -> its greedy list of at most per ones whose spans do
 * not overlap, best first, in mine; returns how many. The total order makes the list
 * independent of the candidates' order, so the CPU and GPU drivers give the same lists. */
static int64_t shp_top_series(tsw_shapelet *cand, int64_t nc, int64_t per, tsw_shapelet *mine)
{
    qsort(cand, (size_t)nc, sizeof(*cand), shp_cmp_cand);
    int64_t nk = 0;
    for (int64_t c = 0; c < nc && nk < per; ++c) {
        int overlap = 0;
        for (int64_t m = 0; m < nk && !overlap; ++m)
            overlap = cand[c].start < mine[m].start + shp_span(&mine[m]) &&
                      mine[m].start < cand[c].start + shp_span(&cand[c]);
        if (!overlap)
            mine[nk++] = cand[c];
    }
    return nk;
}

#ifdef TSWARP_WITH_CUDA
/* Does this call run on the GPU? device CUDA: yes (whatever exec->impl: the GPU computes the
 * fast path's values); AUTO: for the fast path, when a device is there and the work (window
 * evaluations) is worth it; the CPU otherwise. */
static int shp_on_gpu(const shp_job *J)
{
    if (J->ex->device == TSW_DEVICE_CUDA)
        return 1;
    if (J->ex->device == TSW_DEVICE_AUTO && !J->reference) {
        double windows = 0.0;
        for (int64_t k = 0; k < J->ns; ++k)
            windows += (double)J->d->len[J->sub[k]];
        return tsw__cuda_auto(J->ex, windows * (double)J->work);
    }
    return 0;
}

/* AUTO goes back to the CPU when the GPU is missing or too small (as api.c does). */
static int shp_gpu_fallback(const shp_job *J, int rc)
{
    if (J->ex->device != TSW_DEVICE_AUTO || (rc != TSW_ENODEV && rc != TSW_ENOMEM))
        return 0;
    tsw__clear_detail();
    return 1;
}

static tsw__shp_gpu_data shp_gpu_data(const shp_data *d)
{
    tsw__shp_gpu_data g;
    g.count = d->count;
    g.rows = d->count ? d->off[d->count - 1] + d->len[d->count - 1] : 0;
    g.off = d->off;
    g.len = d->len;
    g.run = d->run;
    g.z = d->z;
    g.P = d->P;
    g.Q = d->Q;
    g.raw = d->raw;
    return g;
}

typedef struct {
    shp_job *J;
    int64_t last;            /* progress clock */
    tsw_shapelet best;       /* search */
    int64_t per, cur, nc;    /* top: list length, current series, its candidates so far */
    tsw_shapelet *cand, *kept;
    int64_t *nkept;
} shp_gpu_ctx;

/* Progress between chunks (the calling thread), as the CPU threads report it. */
static int shp_gpu_progress(shp_gpu_ctx *x, int64_t n, const int64_t *items)
{
    for (int64_t t = 0; t < n; ++t)
        x->J->done += items[4 * t + 2];
    return shp_poll(x->J, 0, &x->last) ? x->J->status : TSW_OK;
}

/* Length li of item it (tsw__shp_visit) with its split r. */
static tsw_shapelet shp_gpu_cand(const shp_job *J, const int64_t *it, int64_t li,
                                 const tsw__shp_split *r)
{
    tsw_shapelet c = shp_cand(J, it[0], it[1], li);
    c.threshold = r->threshold;
    c.gain = r->gain;
    c.gap = r->gap;
    return c;
}

static int shp_gpu_search_visit(void *ctx, int64_t n, const int64_t *items,
                                const tsw__shp_split *res)
{
    shp_gpu_ctx *x = ctx;
    const shp_job *J = x->J;
    for (int64_t t = 0; t < n; ++t) {
        const int64_t *it = items + 4 * t;
        for (int64_t li = 0; li < it[2]; ++li) {
            const tsw__shp_split *r = res + it[3] + li;
            if (!r->found)
                continue;
            const tsw_shapelet c = shp_gpu_cand(J, it, li, r);
            if (x->best.series < 0 || shp_cand_better(&c, &x->best))
                x->best = c;
        }
    }
    return shp_gpu_progress(x, n, items);
}

static void shp_gpu_top_flush(shp_gpu_ctx *x)
{
    if (x->cur >= 0)
        x->nkept[x->cur] = shp_top_series(x->cand, x->nc, x->per, x->kept + x->cur * x->per);
    x->nc = 0;
}

static int shp_gpu_top_visit(void *ctx, int64_t n, const int64_t *items,
                             const tsw__shp_split *res)
{
    shp_gpu_ctx *x = ctx;
    const shp_job *J = x->J;
    for (int64_t t = 0; t < n; ++t) {
        const int64_t *it = items + 4 * t;
        if (it[0] / J->gd != x->cur) { /* items come series (and phase) after series */
            shp_gpu_top_flush(x);
            x->cur = it[0] / J->gd;
        }
        for (int64_t li = 0; li < it[2]; ++li) {
            const tsw__shp_split *r = res + it[3] + li;
            if (!r->found)
                continue;
            x->cand[x->nc++] = shp_gpu_cand(J, it, li, r);
        }
    }
    return shp_gpu_progress(x, n, items);
}

/* Runs the job on the GPU with visitor fn. */
static int shp_gpu_run(shp_job *J, tsw__shp_visit fn, shp_gpu_ctx *x)
{
    tsw__shp_gpu_job g;
    g.d = shp_gpu_data(J->d);
    g.sub = J->sub;
    g.lab = J->glab;
    g.ns = J->ns;
    g.ng = J->ng;
    g.gd = J->gd;
    g.minl = J->minl;
    g.maxl = J->maxl;
    g.step = J->step;
    g.nlen = J->nlen;
    g.C = J->C;
    g.total = J->total;
    g.nent = J->nent;
    g.xlogx = J->xlogx;
    g.logic = J->p->logic;
    g.partner = J->p->logic != TSW_LOGIC_NONE ? J->partner : NULL;
    g.ovr = J->ovr;
    g.btot = J->btot;
    g.bnent = J->bnent;
    x->J = J;
    x->last = shp_now_ns();
    return tsw__cuda_shapelet_run(&g, J->ex, fn, x);
}
#endif

/* ---- tsw_shapelet_search --------------------------------------------------------------- */

int tsw_shapelet_search(const tsw_shapelet_params *params, tsw_dtype dtype,
                        const tsw_collection *x, const int32_t *labels, const int64_t *subset,
                        int64_t n_subset, tsw_shapelet *best, const tsw_exec *exec)
{
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    if (!best)
        return TSW_EINVAL;
    shp_job J;
    shp_data d;
    int rc = shp_job_make(params, dtype, x, labels, subset, n_subset, exec, &J, &d);
    if (rc)
        return rc;
#ifdef TSWARP_WITH_CUDA
    if (shp_on_gpu(&J)) {
        shp_gpu_ctx g;
        memset(&g, 0, sizeof(g));
        g.best = (tsw_shapelet){-1, 0, 0, 0.0, 0.0, 0.0, 0};
        rc = shp_gpu_run(&J, shp_gpu_search_visit, &g);
        if (!shp_gpu_fallback(&J, rc)) {
            if (rc == TSW_OK && exec->progress &&
                exec->progress(exec->progress_user, J.work, J.work))
                rc = TSW_ECANCELED;
            if (rc == TSW_OK) {
                *best = g.best;
                shp_units(&J, best, best->series >= 0);
            }
            shp_job_free(&J, &d);
            return rc;
        }
        J.done = 0;
        J.status = TSW_OK;
    }
#endif
    shp_job_table(&J);
    /* Items: (series k of the subset, block of J.block starts from s0), numbered through
     * per-series prefix counts. */
    int64_t *first = tsw__malloc(((size_t)J.ns + 1) * sizeof(int64_t));
    int nt = shp_threads(exec);
    tsw_shapelet *tbest = tsw__malloc((size_t)nt * sizeof(tsw_shapelet));
    if (!first || !tbest) {
        tsw__free(first);
        tsw__free(tbest);
        shp_job_free(&J, &d);
        return TSW_ENOMEM;
    }
    first[0] = 0;
    for (int64_t k = 0; k < J.ns; ++k)
        first[k + 1] = first[k] + (d.len[J.sub[k]] + J.block - 1) / J.block;
    const int64_t n_items = first[J.ns];
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
        int64_t last = shp_now_ns();
        int ok = shp_ws_alloc(&J, &w) == TSW_OK;
        if (!ok)
            __atomic_store_n(&alloc_fail, 1, __ATOMIC_RELAXED);
        tsw_shapelet mine = {-1, 0, 0, 0.0, 0.0, 0.0, 0};
#pragma omp for schedule(dynamic, 1)
        for (int64_t it = 0; it < n_items; ++it) {
            if (!ok || shp_poll(&J, tid, &last))
                continue;
            int64_t lo = 0, hi = J.ns - 1; /* the series of item it */
            while (lo < hi) {
                int64_t mid = (lo + hi + 1) / 2;
                if (first[mid] <= it)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            const int64_t i = J.sub[lo], s0 = (it - first[lo]) * J.block;
            const int32_t own = J.ovr ? J.glab[lo / J.gd] : -1;
            const int64_t nb = TSW_MIN(J.block, d.len[i] - s0);
            int64_t nl[SHP_BLOCK];
            const int64_t n_cand = shp_block_lengths(&J, i, s0, nb, nl);
            if (n_cand == 0)
                continue;
            shp_fill(&J, i, s0, nb, nl, &w);
            for (int64_t b = 0; b < nb; ++b)
                for (int64_t li = 0; li < nl[b]; ++li) {
                    tsw_shapelet c = shp_cand(&J, lo, s0 + b, li);
                    if (!shp_split(&J, shp_mind2(&J, &w, b), li, own, &w, &c.gain, &c.gap,
                                   &c.threshold))
                        continue;
                    if (mine.series < 0 || shp_cand_better(&c, &mine))
                        mine = c;
                }
            __atomic_fetch_add(&J.done, n_cand, __ATOMIC_RELAXED);
        }
        tbest[tid] = mine;
        if (ok)
            shp_ws_free(&w);
    }

    rc = alloc_fail ? TSW_ENOMEM : J.status;
    if (rc == TSW_OK && exec->progress && exec->progress(exec->progress_user, J.work, J.work))
        rc = TSW_ECANCELED;
    if (rc == TSW_OK) {
        tsw_shapelet r = {-1, 0, 0, 0.0, 0.0, 0.0, 0};
        for (int t = 0; t < nt; ++t)
            if (tbest[t].series >= 0 && (r.series < 0 || shp_cand_better(&tbest[t], &r)))
                r = tbest[t];
        *best = r;
        shp_units(&J, best, r.series >= 0);
    }
    tsw__free(first);
    tsw__free(tbest);
    shp_job_free(&J, &d);
    return rc;
}

/* ---- tsw_shapelet_top -------------------------------------------------------------------- */

static int shp_cmp_cand(const void *x, const void *y)
{
    const tsw_shapelet *a = x, *b = y;
    if (shp_cand_better(a, b))
        return -1;
    if (shp_cand_better(b, a))
        return 1;
    return 0;
}

/* One-vs-rest: the best-first list kept (n) -> out, at most max(1, k / C') from the series
 * of each class (C' the classes present), at most k in all: *take. */
static int shp_top_balanced(const shp_job *J, const int32_t *labels, const tsw_shapelet *kept,
                            int64_t n, int64_t k, tsw_shapelet *out, int64_t *take)
{
    int64_t *used = tsw__malloc((size_t)J->C * sizeof(int64_t)), present = 0;
    if (!used)
        return TSW_ENOMEM;
    for (int c = 0; c < J->C; ++c) {
        used[c] = 0;
        present += J->total[c] > 0;
    }
    const int64_t kc = TSW_MAX(1, k / present);
    *take = 0;
    for (int64_t m = 0; m < n && *take < k; ++m) {
        const int32_t c = labels[kept[m].series];
        if (used[c] < kc) {
            used[c] += 1;
            out[(*take)++] = kept[m];
        }
    }
    tsw__free(used);
    return TSW_OK;
}

int tsw_shapelet_top(const tsw_shapelet_params *params, tsw_dtype dtype,
                     const tsw_collection *x, const int32_t *labels, const int64_t *subset,
                     int64_t n_subset, int64_t k, tsw_shapelet *out, int64_t *count,
                     const tsw_exec *exec)
{
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    if (!out || !count || k < 1)
        return TSW_EINVAL;
    if (params && params->logic != TSW_LOGIC_NONE)
        return TSW_EPARAM;
    shp_job J;
    shp_data d;
    int rc = shp_job_make(params, dtype, x, labels, subset, n_subset, exec, &J, &d);
    if (rc)
        return rc;
    /* Each series keeps at most k candidates: the global greedy keeps, in every series, a
     * prefix of that series' own greedy list, so merging those lists is exact. A series is
     * a group of gd phases (one with gd = 1). */
    int64_t per = k;
    int64_t maxcand = 0;
    for (int64_t g = 0; g < J.ng; ++g) {
        int64_t n = 0;
        for (int64_t jj = g * J.gd; jj < (g + 1) * J.gd; ++jj)
            for (int64_t s = 0, i = J.sub[jj]; s < d.len[i]; ++s)
                n += shp_nlen_at(&J, i, s);
        maxcand = TSW_MAX(maxcand, n);
    }
    per = TSW_MIN(per, maxcand);
    int nt = shp_threads(exec);
    size_t kept_bytes, cand_bytes;
    if (tsw__mul_size((size_t)J.ng, (size_t)(per > 0 ? per : 1) * sizeof(tsw_shapelet),
                      &kept_bytes) ||
        tsw__mul_size((size_t)(maxcand > 0 ? maxcand : 1), sizeof(tsw_shapelet), &cand_bytes)) {
        shp_job_free(&J, &d);
        return TSW_EOVERFLOW;
    }
    tsw_shapelet *kept = tsw__malloc(kept_bytes);
    int64_t *nkept = tsw__malloc((size_t)J.ng * sizeof(int64_t));
    if (!kept || !nkept) {
        tsw__free(kept);
        tsw__free(nkept);
        shp_job_free(&J, &d);
        return TSW_ENOMEM;
    }
    int alloc_fail = 0, done_gpu = 0;
#ifdef TSWARP_WITH_CUDA
    if (shp_on_gpu(&J)) {
        shp_gpu_ctx g;
        memset(&g, 0, sizeof(g));
        g.per = per;
        g.cur = -1;
        g.kept = kept;
        g.nkept = nkept;
        g.cand = tsw__malloc(cand_bytes);
        for (int64_t gg = 0; gg < J.ng; ++gg)
            nkept[gg] = 0;
        rc = g.cand ? shp_gpu_run(&J, shp_gpu_top_visit, &g) : TSW_ENOMEM;
        if (rc == TSW_OK)
            shp_gpu_top_flush(&g);
        tsw__free(g.cand);
        done_gpu = !shp_gpu_fallback(&J, rc);
        if (!done_gpu) {
            J.done = 0;
            J.status = TSW_OK;
        }
    }
#endif
    if (!done_gpu)
        shp_job_table(&J);

#pragma omp parallel num_threads(nt) if (!done_gpu)
    if (!done_gpu) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        shp_ws w;
        int64_t last = shp_now_ns();
        tsw_shapelet *cand = tsw__malloc(cand_bytes);
        int ok = cand && shp_ws_alloc(&J, &w) == TSW_OK;
        if (!ok) {
            tsw__free(cand);
            cand = NULL;
            __atomic_store_n(&alloc_fail, 1, __ATOMIC_RELAXED);
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t g = 0; g < J.ng; ++g) {
            nkept[g] = 0;
            if (!ok)
                continue;
            int64_t nc = 0;
            const int32_t own = J.ovr ? J.glab[g] : -1;
            for (int64_t jj = g * J.gd; jj < (g + 1) * J.gd; ++jj) {
                const int64_t i = J.sub[jj];
                for (int64_t s0 = 0; s0 < d.len[i]; s0 += J.block) {
                    if (shp_poll(&J, tid, &last))
                        break;
                    const int64_t nb = TSW_MIN(J.block, d.len[i] - s0);
                    int64_t nl[SHP_BLOCK];
                    const int64_t n_cand = shp_block_lengths(&J, i, s0, nb, nl);
                    if (n_cand == 0)
                        break; /* later starts have no room either */
                    shp_fill(&J, i, s0, nb, nl, &w);
                    for (int64_t b = 0; b < nb; ++b)
                        for (int64_t li = 0; li < nl[b]; ++li) {
                            tsw_shapelet c = shp_cand(&J, jj, s0 + b, li);
                            if (shp_split(&J, shp_mind2(&J, &w, b), li, own, &w, &c.gain,
                                          &c.gap, &c.threshold))
                                cand[nc++] = c;
                        }
                    __atomic_fetch_add(&J.done, n_cand, __ATOMIC_RELAXED);
                }
            }
            nkept[g] = shp_top_series(cand, nc, per, kept + g * per);
        }
        if (ok) {
            tsw__free(cand);
            shp_ws_free(&w);
        }
    }

    if (!done_gpu)
        rc = alloc_fail ? TSW_ENOMEM : J.status;
    if (rc == TSW_OK && exec->progress && exec->progress(exec->progress_user, J.work, J.work))
        rc = TSW_ECANCELED;
    if (rc == TSW_OK) {
        /* compact the per-series lists, sort, take k */
        int64_t n = 0;
        for (int64_t g = 0; g < J.ng; ++g)
            for (int64_t m = 0; m < nkept[g]; ++m)
                kept[n++] = kept[g * per + m];
        qsort(kept, (size_t)n, sizeof(*kept), shp_cmp_cand);
        int64_t take = n < k ? n : k;
        if (J.ovr)
            rc = shp_top_balanced(&J, labels, kept, n, k, out, &take);
        else
            memcpy(out, kept, (size_t)take * sizeof(*out));
        shp_units(&J, out, take);
        *count = take;
    }
    tsw__free(kept);
    tsw__free(nkept);
    shp_job_free(&J, &d);
    return rc;
}

/* ---- tsw_shapelet_distances, tsw_shapelet_features ----------------------------------------- */

/*
 * Shapelet k of S against series j of X: the least d^2 over the alignments, the first best
 * in *where (the shapelet's start in the series: u >= 0, or -u when the series is shorter
 * and lies at offset u of the shapelet) and, thr >= 0, in *near how many alignments lie
 * within thr. The windows have min(l, n) points: the shorter of the two is taken whole.
 */
static double shp_feature_pair(const shp_data *S, int64_t k, const shp_data *X, int64_t j,
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

int tsw_shapelet_distances(tsw_dtype dtype, const tsw_collection *shapelets,
                           const tsw_collection *x, double *dist, int64_t *pos,
                           const tsw_exec *exec)
{
    return tsw_shapelet_features(dtype, shapelets, NULL, x, dist, pos, NULL, exec);
}

static int shp_features(tsw_dtype dtype, const tsw_collection *shapelets,
                        const double *thresholds, const tsw_collection *x, double *dist,
                        int64_t *pos, int64_t *count, const tsw_exec *exec, int raw);

int tsw_shapelet_features(tsw_dtype dtype, const tsw_collection *shapelets,
                          const double *thresholds, const tsw_collection *x, double *dist,
                          int64_t *pos, int64_t *count, const tsw_exec *exec)
{
    return shp_features(dtype, shapelets, thresholds, x, dist, pos, count, exec, 0);
}

/* tsw_shapelet_features, of raw shapelets when raw: the series shifted and scaled by the
 * shapelets' mean and std, thresholds and distances in the data's units. */
static int shp_features(tsw_dtype dtype, const tsw_collection *shapelets,
                        const double *thresholds, const tsw_collection *x, double *dist,
                        int64_t *pos, int64_t *count, const tsw_exec *exec, int raw)
{
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    int rc;
    if (!dist || !shapelets || !x || !thresholds != !count)
        return TSW_EINVAL;
    if ((rc = tsw__check_exec(exec)))
        return rc;
    if (thresholds) /* count > 0 checked by shp_data_make below; read only what exists */
        for (int64_t k = 0; k < (shapelets->count > 0 ? shapelets->count : 0); ++k)
            if (!(thresholds[k] >= 0.0 && thresholds[k] <= DBL_MAX))
                return TSW_EPARAM;
    shp_data S, X;
    if ((rc = shp_data_make(dtype, shapelets, &S, raw, NULL)))
        return rc;
    const double ref[2] = {S.shift, S.scale};
    if ((rc = shp_data_make(dtype, x, &X, raw, ref))) {
        shp_data_free(&S);
        return rc;
    }
    size_t cells;
    double *thr_raw = NULL; /* raw: the thresholds in units of the scale */
    if (tsw__mul_size((size_t)X.count, (size_t)S.count, &cells)) {
        rc = TSW_EOVERFLOW;
    } else {
        for (int64_t k = 0; k < S.count; ++k)
            if (S.len[k] < 2)
                rc = TSW_ESHAPE;
    }
    if (!rc && raw && thresholds) {
        thr_raw = tsw__malloc((size_t)S.count * sizeof(double));
        if (!thr_raw)
            rc = TSW_ENOMEM;
        for (int64_t k = 0; thr_raw && k < S.count; ++k)
            thr_raw[k] = thresholds[k] / S.scale;
        thresholds = thr_raw;
    }
    if (rc) {
        tsw__free(thr_raw);
        shp_data_free(&S);
        shp_data_free(&X);
        return rc;
    }
    const int reference = exec->impl == TSW_IMPL_REFERENCE;
    const int64_t nsh = S.count;
#ifdef TSWARP_WITH_CUDA
    double sl = 0.0, xl = 0.0; /* multiply-adds of the dot products */
    for (int64_t k = 0; k < nsh; ++k)
        sl += (double)S.len[k];
    for (int64_t j = 0; j < X.count; ++j)
        xl += (double)X.len[j];
    if (exec->device == TSW_DEVICE_CUDA ||
        (exec->device == TSW_DEVICE_AUTO && !reference && tsw__cuda_auto(exec, sl * xl))) {
        tsw__shp_gpu_data gs = shp_gpu_data(&S), gx = shp_gpu_data(&X);
        rc = tsw__cuda_shapelet_distances(&gs, thresholds, &gx, dist, pos, count, exec);
        if (exec->device != TSW_DEVICE_AUTO || (rc != TSW_ENODEV && rc != TSW_ENOMEM)) {
            if (rc == TSW_OK && exec->progress &&
                exec->progress(exec->progress_user, X.count * nsh, X.count * nsh))
                rc = TSW_ECANCELED;
            for (size_t c = 0; rc == TSW_OK && raw && c < cells; ++c)
                dist[c] *= S.scale;
            tsw__free(thr_raw);
            shp_data_free(&S);
            shp_data_free(&X);
            return rc;
        }
        tsw__clear_detail();
    }
#endif
    shp_job J; /* progress bookkeeping only */
    memset(&J, 0, sizeof(J));
    J.ex = exec;
    J.work = X.count * nsh;
    J.status = TSW_OK;
    int nt = shp_threads(exec);

#pragma omp parallel num_threads(nt)
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        int64_t last = shp_now_ns();
#pragma omp for schedule(dynamic, 1)
        for (int64_t j = 0; j < X.count; ++j) {
            if (shp_poll(&J, tid, &last))
                continue;
            for (int64_t k = 0; k < nsh; ++k) {
                int64_t where, near;
                const double best = shp_feature_pair(&S, k, &X, j, reference,
                                                     count ? thresholds[k] : -1.0, &where,
                                                     &near);
                dist[j * nsh + k] = raw ? sqrt(best) * S.scale : sqrt(best);
                if (pos)
                    pos[j * nsh + k] = where;
                if (count)
                    count[j * nsh + k] = near;
            }
            __atomic_fetch_add(&J.done, nsh, __ATOMIC_RELAXED);
        }
    }
    rc = J.status;
    if (rc == TSW_OK && exec->progress && exec->progress(exec->progress_user, J.work, J.work))
        rc = TSW_ECANCELED;
    tsw__free(thr_raw);
    shp_data_free(&S);
    shp_data_free(&X);
    return rc;
}

/* ---- dilated shapelets: tsw_shapelet_features_dilated ------------------------------------ */

/* The user's progress callback over several calls: done counts from base, of total. */
typedef struct {
    tsw_progress_fn fn;
    void *user;
    int64_t base, total;
} shp_prog;

static int shp_prog_cb(void *user, int64_t done, int64_t total)
{
    shp_prog *p = user;
    (void)total;
    return p->fn(p->user, p->base + done, p->total);
}

/* Shapelets K (nk of them, all of dilation gd, all raw or none) against the phases of x:
 * their columns of dist/pos/count (x->count, nsh). */
static int shp_features_one(tsw_dtype dt, const tsw_collection *sh, const int64_t *K,
                            int64_t nk, int64_t nsh, int64_t gd, int raw,
                            const double *thresholds, const tsw_collection *x, double *dist,
                            int64_t *pos, int64_t *count, const tsw_exec *ex)
{
    const size_t esz = tsw__dtype_size(dt);
    int64_t srows = 0, n = x->count;
    for (int64_t q = 0; q < nk; ++q)
        srows += tsw__coll_len(sh, K[q]);
    size_t cells, pbytes;
    if (tsw__mul_size((size_t)n, (size_t)gd, &cells) || tsw__mul_size(cells, (size_t)nk, &cells) ||
        tsw__mul_size(cells, sizeof(int64_t) * (count ? 2 : 1), &pbytes))
        return TSW_EOVERFLOW;
    /* the shapelets in double, back to back; the phases of every series of x */
    double *sv = tsw__malloc((size_t)srows * sizeof(double) + (size_t)nk * sizeof(double));
    int64_t *so = tsw__malloc((size_t)nk * 2 * sizeof(int64_t));
    int64_t *all = tsw__malloc((size_t)n * sizeof(int64_t));
    double *d2 = tsw__malloc(cells * sizeof(double));
    int64_t *p2 = tsw__malloc(pbytes);
    double *pv = NULL;
    int64_t *poffs = NULL;
    int rc = TSW_OK;
    if (!sv || !so || !all || !d2 || !p2) {
        rc = TSW_ENOMEM;
        goto done;
    }
    double *thr = sv + srows;
    int64_t row = 0;
    for (int64_t q = 0; q < nk; ++q) {
        const int64_t l = tsw__coll_len(sh, K[q]);
        const char *src = (const char *)sh->values + (size_t)tsw__coll_off(sh, K[q]) * esz;
        so[q] = row;
        so[nk + q] = l;
        for (int64_t t = 0; t < l; ++t)
            sv[row++] = shp_value(dt, src, t);
        if (thresholds)
            thr[q] = thresholds[K[q]];
    }
    for (int64_t j = 0; j < n; ++j)
        all[j] = j; /* every series holds >= gd points (the caller): no phase is empty */
    tsw_collection sc = {sv, so, so + nk, 0, nk, NULL}, pc;
    if ((rc = shp_phases(dt, x, all, n, gd, &pc, &pv, &poffs)))
        goto done;
    int64_t *c2 = count ? p2 + cells : NULL;
    if ((rc = shp_features(TSW_F64, &sc, thresholds ? thr : NULL, &pc, d2, p2, c2, ex, raw)))
        goto done;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t q = 0; q < nk; ++q) {
            double best = TSW_INF_F64;
            int64_t where = 0, near = 0;
            for (int64_t ph = 0; ph < gd; ++ph) {
                const size_t c = ((size_t)(j * gd + ph)) * (size_t)nk + (size_t)q;
                const int64_t u = ph + p2[c] * gd; /* the start in the series */
                if (d2[c] < best || (d2[c] == best && u < where)) {
                    best = d2[c];
                    where = u;
                }
                if (count)
                    near += c2[c];
            }
            dist[j * nsh + K[q]] = best;
            if (pos)
                pos[j * nsh + K[q]] = where;
            if (count)
                count[j * nsh + K[q]] = near;
        }
done:
    tsw__free(sv);
    tsw__free(so);
    tsw__free(all);
    tsw__free(d2);
    tsw__free(p2);
    tsw__free(pv);
    tsw__free(poffs);
    return rc;
}

int tsw_shapelet_features_dilated(tsw_dtype dtype, const tsw_collection *shapelets,
                                  const int64_t *dilations, const int32_t *raw,
                                  const double *thresholds, const tsw_collection *x,
                                  double *dist, int64_t *pos, int64_t *count,
                                  const tsw_exec *exec)
{
    int rc;
    if (!dilations && !raw)
        return tsw_shapelet_features(dtype, shapelets, thresholds, x, dist, pos, count, exec);
    if (!dist || !shapelets || !x || !thresholds != !count || !shapelets->values || !x->values)
        return TSW_EINVAL;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (shapelets->count < 1 || x->count < 1)
        return TSW_ESHAPE;
    tsw_exec defaults;
    if (!exec) {
        tsw_exec_default(&defaults);
        exec = &defaults;
    }
    if ((rc = tsw__check_exec(exec)))
        return rc;
    const int64_t nsh = shapelets->count;
    int64_t shortest = INT64_MAX, *K = NULL, *dl = NULL;
    for (int64_t j = 0; j < x->count; ++j) {
        int rc1 = tsw__check_span(x, j, 1, tsw__dtype_size(dtype)); /* read below, before */
        if (rc1)                                            /* tsw_shapelet_features checks */
            return rc1 == TSW_EINVAL ? TSW_ESHAPE : rc1;
        shortest = TSW_MIN(shortest, tsw__coll_len(x, j));
    }
    for (int64_t k = 0; k < nsh; ++k) {
        int rc1 = tsw__check_span(shapelets, k, 1, tsw__dtype_size(dtype));
        if (rc1)
            return rc1 == TSW_EINVAL ? TSW_ESHAPE : rc1;
        if ((dilations && dilations[k] < 1) || (raw && raw[k] != 0 && raw[k] != 1))
            return TSW_EPARAM;
        if (thresholds && !(thresholds[k] >= 0.0 && thresholds[k] <= DBL_MAX))
            return TSW_EPARAM;
        const int64_t l = tsw__coll_len(shapelets, k);
        if (l < 2 || shortest < (dilations ? dilations[k] : 1)) /* no phase is empty */
            return TSW_ESHAPE;
    }
    size_t kb;
    if (tsw__mul_size((size_t)nsh, 3 * sizeof(int64_t), &kb))
        return TSW_EOVERFLOW;
    K = tsw__malloc(kb);
    if (!K)
        return TSW_ENOMEM;
    dl = K + nsh;
    int64_t *rw = dl + nsh;
    /* the distinct (dilation, raw) groups, in order of first appearance */
    int64_t nd = 0, work = 0;
    for (int64_t k = 0; k < nsh; ++k) {
        const int64_t dk = dilations ? dilations[k] : 1, rk = raw ? raw[k] : 0;
        int64_t m = 0;
        while (m < nd && (dl[m] != dk || rw[m] != rk))
            ++m;
        if (m == nd) {
            dl[nd] = dk;
            rw[nd++] = rk;
        }
        work += x->count * dk;
    }
    if (nd == 1 && dl[0] == 1) { /* one group, contiguous: no phases to make */
        tsw__free(K);
        return shp_features(dtype, shapelets, thresholds, x, dist, pos, count, exec,
                            (int)rw[0]);
    }
    tsw_exec inner = *exec;
    shp_prog pr = {exec->progress, exec->progress_user, 0, work};
    if (exec->progress) {
        inner.progress = shp_prog_cb;
        inner.progress_user = &pr;
    }
    for (int64_t m = 0; m < nd && rc == TSW_OK; ++m) {
        int64_t nk = 0;
        for (int64_t k = 0; k < nsh; ++k)
            if ((dilations ? dilations[k] : 1) == dl[m] && (raw ? raw[k] : 0) == rw[m])
                K[nk++] = k;
        rc = shp_features_one(dtype, shapelets, K, nk, nsh, dl[m], (int)rw[m], thresholds, x,
                              dist, pos, count, &inner);
        pr.base += nk * x->count * dl[m];
    }
    tsw__free(K);
    return rc;
}
