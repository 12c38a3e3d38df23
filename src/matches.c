/*
 * Subsequence DTW's choice of matches from the last row of its dynamic program: the best k
 * non-overlapping ends, best first, ties to the lower end (tswarp.h). Both backends call
 * it on the host with the same (cost, start) arrays, so the CPU and the GPU choose alike.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct tsw__end {
    double cost;
    int64_t j;
} tsw__end;

static int tsw__end_cmp(const void *pa, const void *pb)
{
    const tsw__end *a = pa, *b = pb;
    if (a->cost < b->cost)
        return -1;
    if (a->cost > b->cost)
        return 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

int tsw__subseq_pick(int64_t m, const double *cost, const int64_t *start, int64_t k,
                     tsw_match *pick, int64_t *count)
{
    /* ends sorted by cost (a float's value is exact as a double: same order, same ties) */
    tsw__end *ends = tsw__malloc(sizeof(tsw__end) * (size_t)(m > 0 ? m : 1));
    int64_t *sorted = tsw__malloc(sizeof(int64_t) * 2 * (size_t)(k > 0 ? k : 1));
    if (!ends || !sorted) {
        tsw__free(ends);
        tsw__free(sorted);
        return TSW_ENOMEM;
    }
    int64_t ne = 0;
    for (int64_t j = 0; j < m; ++j) {
        if (cost[j] < TSW_INF_F64) {
            ends[ne].cost = cost[j];
            ends[ne].j = j;
            ne++;
        }
    }
    qsort(ends, (size_t)ne, sizeof(tsw__end), tsw__end_cmp);
    /* greedy: best ends first, kept when [start, end] overlaps no kept range */
    int64_t got = 0;
    for (int64_t q = 0; q < ne && got < k; ++q) {
        int64_t e = ends[q].j, s = start[e];
        /* kept ranges sorted by start in sorted[2*r], sorted[2*r+1]: the last one starting
         * at or before e is the only candidate for an overlap */
        int64_t lo = 0, hi = got;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (sorted[2 * mid] <= e)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && sorted[2 * (lo - 1) + 1] >= s)
            continue;
        memmove(sorted + 2 * (lo + 1), sorted + 2 * lo, sizeof(int64_t) * 2 * (size_t)(got - lo));
        sorted[2 * lo] = s;
        sorted[2 * lo + 1] = e;
        pick[got].start = s;
        pick[got].end = e;
        pick[got].cost = ends[q].cost;
        pick[got].path_offset = 0;
        pick[got].path_length = 0;
        got++;
    }
    *count = got;
    tsw__free(ends);
    tsw__free(sorted);
    return TSW_OK;
}
