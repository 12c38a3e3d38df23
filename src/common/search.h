/*
 * Subsequence search's pruning limit, shared by the CPU (cpu/search.c) and the GPU
 * (cuda/search.cu) cascades.
 *
 * Both prune and keep windows by distances computed with running sums (each window's mean
 * and std from the chunk's prefix sums), then recompute the kept windows exactly. Those
 * running values differ from the exact ones by a rounding that a purely relative slack does
 * not cover when the threshold is 0 (a query found verbatim several times: the exact
 * distances are 0, the running ones a few ulps of the z-normalised values above): windows
 * whose exact distance ties the threshold were pruned. So the limit is relative plus, for
 * z-normalised windows (values of order 1, DTW costs of order n dim), an absolute part of the
 * same relative size; raw windows are computed exactly and need only the relative part, which
 * covers the bounds' own sums.
 */
#ifndef TSW_COMMON_SEARCH_H
#define TSW_COMMON_SEARCH_H

#include "tsw_hd.h"

#include <math.h>
#include <stdint.h>

#define TSW_SEARCH_SLACK 1e-7 /* relative */

/* The absolute part for a query of n points of dim channels. */
TSW_HD double tsw_search_slack_abs(int znorm, int64_t n, int64_t dim)
{
    return znorm ? TSW_SEARCH_SLACK * (double)n * (double)dim : 0.0;
}

/* Windows whose running distance is above this can not be at or below tau exactly. */
TSW_HD double tsw_search_limit(double tau, double slack_abs)
{
    return tau * (1 + TSW_SEARCH_SLACK) + slack_abs;
}

/* Both sides take a block's windows' statistics from running sums over the block's points
 * (block + n - 1 of them, from the block's first value). Where a window's variance var is
 * not above tsw_search_cond(block, n) times the block's sum of squares up to the window's
 * end, the sums' rounding (at most (2 L / n + 4 (L / n)^1.5) eps of it for L points, the
 * worst case of L additions in any order) could exceed 1e-8 of var: the window's mean and
 * std are then computed again in two passes over its own values. A level shift inside a
 * block (1e8 beside values of 1e-3, a flat stretch of tiny noise beside large values)
 * cancels the sums' digits and would otherwise prune wrongly. */
TSW_HD double tsw_search_cond(int64_t block, int64_t n)
{
    const double L = (double)(block + n - 1), r = L / (double)n;
    return 1e8 * 2.220446049250313e-16 * (2 * r + 4 * r * sqrt(r));
}

/* One channel's mean and 1 / std of a window of n points (v[t * stride]) in two passes: a
 * constant window has its value as mean and 1 / std 0 (z-normalised to zeros). */
TSW_HD void tsw_search_stats2(const double *v, int64_t n, int64_t stride, double *mu,
                              double *inv)
{
    double s = 0, q = 0;
    int constant = 1;
    for (int64_t t = 0; t < n; ++t) {
        s += v[t * stride];
        constant &= v[t * stride] == v[0];
    }
    const double m = s / (double)n;
    for (int64_t t = 0; t < n; ++t) {
        const double d = v[t * stride] - m;
        q += d * d;
    }
    const double sd = sqrt(q / (double)n);
    *mu = constant ? v[0] : m;
    *inv = constant || !(sd > 0) ? 0 : 1 / sd;
}

#endif
