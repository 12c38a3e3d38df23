/*
 * The CPU search's per-chunk kernels (search_impl.h), shared by cpu/search.c (the driver,
 * the portable instance) and cpu/search_avx2.c (the AVX2 instance, the same C vectorised
 * 4 doubles wide by the compiler). Entered through tsw__search_prep / _proxy / _keogh_q1 /
 * _keogh_x1 in search.c, which pick the instance by tsw__cpu_level().
 *
 * A chunk is nw consecutive windows of the series (P = nw + n - 1 points, dim channels),
 * its values in double. Every statistic is relative to the chunk's first value x0 (which
 * keeps the running sums well conditioned); the search recomputes its final candidates
 * exactly (tsw__search_exact), so these running values only prune, against a limit with
 * the slack of common/search.h.
 */
#ifndef TSW_CPU_SEARCH_H
#define TSW_CPU_SEARCH_H

#include "kernels.h"
#include "../common/search.h"

#include <math.h>

typedef struct tsw__schunk {
    int64_t n, dim, nw, P; /* query points, channels, windows, points of the chunk */
    int znorm;
    tsw_cost cost;
    const double *x;   /* (P, dim) */
    double *s1, *s2;   /* scratch: a block's prefix sums of x - x0 and of its squares
                          (TSW__SBLK + n values) */
    int64_t *ch;       /* scratch: the block's prefix count of value changes */
    double *wmu, *winv; /* each window's mean and 1 / std per channel (nw, dim); raw: 0, 1;
                           a constant window: its value and 0 (z-normalised values 0) */
    double *lb0;       /* dim 1: LB_Kim's ring 0 of each window (nw): the cost of its first
                          point to the query's first plus that of the last points */
    const double *qz;  /* the query as compared ((n, dim), z-normalised when znorm) */
} tsw__schunk;

/* prep: every window's wmu and winv (winv -1: not resolved by the block sums, to be
 * computed in two passes by the caller); lb0: dim 1, LB_Kim's first ring from them. */
#define TSW__SEARCH_DECLARE(isa)                                                             \
    void tsw__search_prep_##isa(tsw__schunk *c);                                             \
    void tsw__search_lb0_##isa(tsw__schunk *c);                                              \
    void tsw__search_proxy_##isa(const double *ps1, const double *ps2, const double *x0,     \
                                 int64_t dim, int64_t S, int64_t G, int64_t nseg, int znorm, \
                                 const double *qp, int64_t u0, int64_t u1, double *out);     \
    double tsw__search_keogh_q1_##isa(const double *xb, double mu, double inv,               \
                                      const double *qlo, const double *qhi,                  \
                                      const int64_t *bo, int64_t nbo, int64_t n,             \
                                      tsw_cost cost, double stop, double *cq);               \
    double tsw__search_keogh_x1_##isa(const double *lob, const double *hib, double mu,       \
                                      double inv, const double *q, const int64_t *bo,        \
                                      int64_t nbo, int64_t n, tsw_cost cost, double stop,    \
                                      double *cx);
TSW__SEARCH_DECLARE(base)
#if TSW_X86
TSW__SEARCH_DECLARE(avx2)
#endif
#undef TSW__SEARCH_DECLARE

/* Points of a block of LB_Keogh in the dim-1 kernels (the blocks are taken in the order of
 * the query's magnitude; the sum is tested once a block). */
#define TSW__SBLOCK 8

/* The windows' statistics come from running sums over blocks of TSW__SBLK windows (their
 * points from the block's first value); a window those sums cannot resolve
 * (tsw_search_cond, common/search.h) is computed again in two passes (search.c). */
#define TSW__SBLK 512

static inline double tsw__search_cond(int64_t n)
{
    return tsw_search_cond(TSW__SBLK, n);
}

/* Windows one proxy call ranks at most. */
#define TSW__PROXY_MAXB 256

#endif
