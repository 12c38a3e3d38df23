/*
 * Global constraints (windows) as a row range per row of the dynamic program.
 *
 * The DP runs over `rows` outer points and `cols` inner points; row r admits the columns
 * [lo, hi) (possibly empty). For Sakoe-Chiba the outer series is a and the inner b. For
 * Itakura, tslearn defines the admissible rows of a per point of b, so the DP runs with b
 * outer and a inner (swap = 1): the recurrences and local costs are symmetric in (a, b),
 * so the transposed program over the same admissible cells gives the same value. (The
 * Itakura mask itself is not symmetric: tslearn's mask for (n, m) is not the transpose of
 * the one for (m, n), so Itakura distances, like tslearn's, depend on the argument order.)
 */
#ifndef TSW_COMMON_BAND_H
#define TSW_COMMON_BAND_H

#include "tsw_hd.h"

enum { TSW_BAND_NONE = 0, TSW_BAND_DIAG = 1, TSW_BAND_ITAKURA = 2 };

typedef struct tsw_band {
    int kind;
    int swap;       /* 1: rows run over b, columns over a */
    int64_t rows;   /* outer length */
    int64_t cols;   /* inner length */
    int64_t below;  /* DIAG: admissible iff -below <= c - r <= above */
    int64_t above;
    double min_slope; /* ITAKURA (already scaled by cols/rows as tslearn does) */
    double max_slope;
} tsw_band;

/* numpy's round(x, 2): rint(x * 100) / 100, as tslearn's Itakura mask uses. */
TSW_HD double tsw__round2(double x) { return rint(x * 100.0) / 100.0; }

/*
 * window: 0 none, 1 Sakoe-Chiba radius in cells, 2 radius as a fraction of min(n, m),
 * 3 Itakura (tsw_window values). n = len(a), m = len(b). Parameters are assumed validated.
 */
TSW_HD tsw_band tsw_band_make(int window, double radius, double max_slope, int64_t n,
                              int64_t m)
{
    tsw_band b;
    b.kind = TSW_BAND_NONE;
    b.swap = 0;
    b.rows = n;
    b.cols = m;
    b.below = 0;
    b.above = 0;
    b.min_slope = 0;
    b.max_slope = 0;
    if (window == 1 || window == 2) {
        int64_t r;
        if (window == 1) {
            r = (int64_t)radius;
        } else {
            int64_t mn = n < m ? n : m;
            r = (int64_t)floor(radius * (double)mn);
        }
        b.kind = TSW_BAND_DIAG;
        b.below = r + (n > m ? n - m : 0);
        b.above = r + (m > n ? m - n : 0);
        if (b.below >= n - 1 && b.above >= m - 1)
            b.kind = TSW_BAND_NONE; /* the band covers everything */
    } else if (window == 3) {
        /* tslearn itakura_mask(sz1 = n, sz2 = m, max_slope): per column j of the (n, m)
         * mask, rows [lo_j, hi_j). We iterate over j as the outer index. */
        b.kind = TSW_BAND_ITAKURA;
        b.swap = 1;
        b.rows = m;
        b.cols = n;
        b.min_slope = (1.0 / max_slope) * ((double)n / (double)m);
        b.max_slope = max_slope * ((double)n / (double)m);
    }
    return b;
}

/* About how many cells the band admits (dispatch's size of the work): Sakoe-Chiba's rows
 * times their width at most, every cell for Itakura and no window. */
TSW_HD double tsw_band_cells(const tsw_band *b)
{
    const double all = (double)b->rows * (double)b->cols;
    if (b->kind != TSW_BAND_DIAG)
        return all;
    const double w = (double)b->rows * ((double)b->below + (double)b->above + 1);
    return w < all ? w : all;
}

/* Admissible columns [*lo, *hi) of outer row r. */
TSW_HD void tsw_band_range(const tsw_band *b, int64_t r, int64_t *lo, int64_t *hi)
{
    int64_t l = 0, h = b->cols;
    if (b->kind == TSW_BAND_DIAG) {
        l = r - b->below;
        h = r + b->above + 1;
    } else if (b->kind == TSW_BAND_ITAKURA) {
        double sz1 = (double)b->cols, sz2 = (double)b->rows, j = (double)r;
        double l0 = tsw__round2(b->min_slope * j);
        double l1 = tsw__round2((sz1 - 1) - b->max_slope * (sz2 - 1) + b->max_slope * j);
        double u0 = tsw__round2(b->max_slope * j);
        double u1 = tsw__round2((sz1 - 1) - b->min_slope * (sz2 - 1) + b->min_slope * j);
        double lf = ceil(TSW_MAX(l0, l1));
        double uf = floor(TSW_MIN(u0, u1) + 1);
        /* numpy slicing clamps to [0, sz1]; clamp both ends in double before converting (a
         * huge max_slope puts them near 1e138: converting that to int64 is undefined) */
        lf = TSW_MIN(TSW_MAX(lf, 0.0), sz1);
        uf = TSW_MIN(TSW_MAX(uf, 0.0), sz1);
        l = (int64_t)lf;
        h = (int64_t)uf;
    }
    if (l < 0)
        l = 0;
    if (h > b->cols)
        h = b->cols;
    if (h < l)
        h = l;
    *lo = l;
    *hi = h;
}

/* Whether cell (i, j) of the (n, m) grid is admissible, i indexing a and j indexing b
 * (whatever the band's swap). */
TSW_HD int tsw_band_admits(const tsw_band *b, int64_t i, int64_t j)
{
    int64_t lo, hi;
    if (b->kind == TSW_BAND_NONE)
        return 1;
    if (b->swap) {
        tsw_band_range(b, j, &lo, &hi);
        return i >= lo && i < hi;
    }
    tsw_band_range(b, i, &lo, &hi);
    return j >= lo && j < hi;
}

#endif
