/*
 * The shapelet job: the interface between the dispatch file shapelet.c (validation, the
 * standardised data, the job, the GPU's glue, merging and ranking the results) and the CPU
 * backend (cpu/shapelet.c, the search and distance loops). The GPU backend sees the job
 * through internal.h's tsw__shp_gpu_job, which shapelet.c fills from this one. The small
 * helpers below are what both sides compute alike: the candidates' total order, the
 * per-series greedy lists, the lengths a start admits and the progress polls.
 */
#ifndef TSW_SHAPELET_JOB_H
#define TSW_SHAPELET_JOB_H

#include "common/shapelet.h"
#include "internal.h"

#include <stdlib.h>
#include <time.h>

/* The user's progress callback is called at most this often (ns). */
#define TSW__SHP_PROGRESS_NS 50000000LL

/* Every series of a collection standardised (mean 0, std 1) in double, with prefix sums P
 * (sum) and Q (sum of squares) and run lengths: series i has z[off[i] .. off[i]+len[i]),
 * P/Q[off[i] + i .. off[i] + i + len[i]] (len + 1 entries, P[0] = 0), and run[off[i] + t]
 * = how many values from t on equal x_i[t], so window [u, u+l) is constant iff run >= l.
 * raw (shapelets that are not z-normalised): z = (x - shift) / scale with one shift and
 * scale for the whole collection, the distances then in units of scale. */
typedef struct tsw__shp_data {
    int64_t count;
    int64_t *off, *len, *run;
    double *z, *P, *Q;
    int raw;
    double shift, scale;
} tsw__shp_data;

typedef struct tsw__shp_job {
    const tsw_shapelet_params *p;
    const tsw__shp_data *d;
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
    double nent;
    double *xlogx; /* (ng + 1,) c log c */
    int reference; /* exec->impl is TSW_IMPL_REFERENCE: eq. 2 literally (the CPU only) */
    const tsw_exec *ex;
    int64_t done, work; /* progress, in candidates (the backends add to done) */
    int status;         /* TSW_ECANCELED once the user's callback said stop */
    /* The CPU backend's state, set and freed inside its calls (cpu/shapelet.c): the fast
     * path's 1/std of every window, isd[isd_off[jj] + li * len_j + u], and whether searched
     * series jj has a constant window of length index li (NULL: too large); raw data's row
     * of ones (NULL: per item); the AVX2 loops; the candidate starts per work item. */
    double *isd;
    int64_t *isd_off;
    unsigned char *has_flat;
    double *ones;
    int avx2;
    int64_t block;
} tsw__shp_job;

static inline int64_t tsw__shp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Longest length of the set usable at start s of series i (0: none). */
static inline int64_t tsw__shp_nlen_at(const tsw__shp_job *J, int64_t i, int64_t s)
{
    int64_t room = J->d->len[i] - s;
    int64_t lmax = room < J->maxl ? room : J->maxl;
    if (lmax < J->minl)
        return 0;
    return (lmax - J->minl) / J->step + 1;
}

/* Candidate (sub[k], start s, length index li) in the caller's terms: its series, and its
 * start in that series (phase k % gd, s steps of gd on). */
static inline tsw_shapelet tsw__shp_cand(const tsw__shp_job *J, int64_t k, int64_t s, int64_t li)
{
    tsw_shapelet c;
    c.series = J->orig[k / J->gd];
    c.start = k % J->gd + s * J->gd;
    c.length = J->minl + li * J->step;
    c.threshold = c.gain = c.gap = 0.0;
    c.dilation = J->gd;
    return c;
}

/* Total order on candidates: quality, then the smaller (series, start, length). */
static inline int tsw__shp_cand_better(const tsw_shapelet *a, const tsw_shapelet *b)
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

static inline int tsw__shp_cmp_cand(const void *x, const void *y)
{
    const tsw_shapelet *a = x, *b = y;
    if (tsw__shp_cand_better(a, b))
        return -1;
    if (tsw__shp_cand_better(b, a))
        return 1;
    return 0;
}

/* Points of a series a candidate spans, first to last. */
static inline int64_t tsw__shp_span(const tsw_shapelet *c) { return (c->length - 1) * c->dilation + 1; }

/* One series' candidates (any order) -> its greedy list of at most per ones whose spans do
 * not overlap, best first, in mine; returns how many. The total order makes the list
 * independent of the candidates' order, so the CPU and GPU drivers give the same lists. */
static inline int64_t tsw__shp_top_series(tsw_shapelet *cand, int64_t nc, int64_t per, tsw_shapelet *mine)
{
    qsort(cand, (size_t)nc, sizeof(*cand), tsw__shp_cmp_cand);
    int64_t nk = 0;
    for (int64_t c = 0; c < nc && nk < per; ++c) {
        int overlap = 0;
        for (int64_t m = 0; m < nk && !overlap; ++m)
            overlap = cand[c].start < mine[m].start + tsw__shp_span(&mine[m]) &&
                      mine[m].start < cand[c].start + tsw__shp_span(&cand[c]);
        if (!overlap)
            mine[nk++] = cand[c];
    }
    return nk;
}

/* Poll between items: only the calling thread calls the user's callback (tswarp.h). */
static inline int tsw__shp_poll(tsw__shp_job *J, int tid, int64_t *last)
{
    /* once stopped, the callback is not called again (the caller's "stop" stands) */
    if (tid == 0 && J->ex->progress &&
        __atomic_load_n(&J->status, __ATOMIC_RELAXED) == TSW_OK) {
        int64_t now = tsw__shp_now_ns();
        if (now - *last >= TSW__SHP_PROGRESS_NS) {
            *last = now;
            int64_t dn = __atomic_load_n(&J->done, __ATOMIC_RELAXED);
            if (J->ex->progress(J->ex->progress_user, dn, J->work))
                __atomic_store_n(&J->status, TSW_ECANCELED, __ATOMIC_RELAXED);
        }
    }
    return __atomic_load_n(&J->status, __ATOMIC_RELAXED) != TSW_OK;
}

/* ---- the CPU backend (cpu/shapelet.c); J comes from shapelet.c, validated -------------- */

/* The best candidate of the job (series -1: no split anywhere), in the job's units; the
 * status: TSW_ECANCELED (J->status), TSW_ENOMEM. Progress through J->done. */
int tsw__cpu_shapelet_search(tsw__shp_job *J, tsw_shapelet *best);

/* Each group g's greedy list of at most per candidates whose spans do not overlap, best
 * first, in kept[g per ..], its length in nkept[g] (tsw__shp_top_series); cand_bytes: room
 * for one group's candidates. TSW_ECANCELED, TSW_ENOMEM. */
int tsw__cpu_shapelet_top(tsw__shp_job *J, int64_t per, size_t cand_bytes, tsw_shapelet *kept,
                          int64_t *nkept);

/* tsw_shapelet_features on standardised data: dist[j nsh + k] = the least distance of
 * shapelet k of S to series j of X (times S->scale for raw data), pos and count as
 * tswarp.h says (either may be NULL; thresholds with count, in S's units). reference: eq. 2
 * literally. TSW_ECANCELED. */
int tsw__cpu_shapelet_features(const tsw__shp_data *S, const double *thresholds,
                               const tsw__shp_data *X, int reference, double *dist,
                               int64_t *pos, int64_t *count, const tsw_exec *exec);

#endif
