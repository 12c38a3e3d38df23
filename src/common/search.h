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

#endif
