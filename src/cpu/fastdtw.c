/* FastDTW on the CPU (see fastdtw_impl.h): the levels, their windows and the memory. */
#include "../common/cost.h"
#include "../internal.h"

#include <string.h>

#define T double
#define SFX f64
#include "fastdtw_impl.h"
#undef T
#undef SFX
#define T float
#define SFX f32
#include "fastdtw_impl.h"
#undef T
#undef SFX

/*
 * The fine window of a level from the coarse path cp (len cells, from (0, 0)) of the
 * (n / 2) x (m / 2) grid, widened by r: fine rows 2R and 2R + 1 get the columns
 * [2 (cmin - r), 2 (cmax + r) + 1], cmin..cmax the columns of the coarse path cells in rows
 * R - r .. R + r; clipped to the grid, the start never below the row above's.
 */
static void tsw__fd_expand(const int64_t *cp, int64_t len, int64_t r, int64_t n, int64_t m,
                           int64_t *lo, int64_t *hi)
{
    int64_t first = 0, last = -1; /* the path cells with rows in [R - r, R + r] */
    for (int64_t i = 0; i < n; ++i) {
        const int64_t R = i / 2;
        if ((i & 1) == 0) {
            while (first < len && cp[2 * first] < R - r)
                ++first;
            while (last + 1 < len && cp[2 * (last + 1)] <= R + r)
                ++last;
        }
        int64_t l = -1, h = -1;
        if (first <= last && first < len) {
            const int64_t cmin = cp[2 * first + 1], cmax = cp[2 * last + 1];
            l = 2 * (cmin - r);
            h = 2 * (cmax + r) + 1;
            l = l < 0 ? 0 : l;
            h = h > m - 1 ? m - 1 : h;
        }
        if (i > 0 && l < lo[i - 1])
            l = lo[i - 1]; /* the package scans from the row above's start */
        if (l < 0 || l > h) {
            /* uncovered (the package fails here): the row above's interval */
            l = i > 0 ? lo[i - 1] : 0;
            h = i > 0 ? hi[i - 1] : 0;
        }
        lo[i] = l;
        hi[i] = h;
    }
    hi[n - 1] = m - 1; /* the last cell is always in the window */
}

int tsw__cpu_fastdtw(tsw_cost cost, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                     const tsw_series *b, int64_t radius, int64_t *path, int64_t *length,
                     double *total, const tsw_exec *ex)
{
    const size_t esz = tsw__dtype_size(dtype);
    const int64_t minsize = radius > INT64_MAX - 2 ? INT64_MAX : radius + 2;
    /* the levels: lengths n[0] = a's, halved while both stay >= radius + 2 */
    int64_t ns[64], ms[64];
    int levels = 1;
    ns[0] = a->length;
    ms[0] = b->length;
    while (levels < 64 && ns[levels - 1] >= minsize && ms[levels - 1] >= minsize) {
        ns[levels] = ns[levels - 1] / 2;
        ms[levels] = ms[levels - 1] / 2;
        ++levels;
    }
    /* memory: the coarser series of both, every level's rows, two rows of values, the
     * coarse path, and the moves of a level's window (grown as the levels need: a window
     * is about 4 r + 4 cells a row where the path runs diagonally, wider where it runs
     * along a row) */
    size_t series_elems = 0, rows = 0, moves = 0, width;
    for (int l = 1; l < levels; ++l)
        series_elems += (size_t)(ns[l] + ms[l]) * (size_t)dim;
    int64_t nmax = ns[0] > ms[0] ? ns[0] : ms[0];
    rows = (size_t)ns[0];
    width = (size_t)radius * 4 + 6;
    if (width > (size_t)ms[0])
        width = (size_t)ms[0];
    size_t bytes_series, bytes_rows, bytes_two, bytes_path;
    if (tsw__mul_size(series_elems, esz, &bytes_series) ||
        tsw__mul_size(rows, 3 * sizeof(int64_t), &bytes_rows) ||
        tsw__mul_size((size_t)nmax + 1, 2 * esz, &bytes_two) ||
        tsw__mul_size((size_t)(ns[0] + ms[0]), 2 * sizeof(int64_t), &bytes_path))
        return TSW_EOVERFLOW;
    char *series = bytes_series ? tsw__malloc(bytes_series) : NULL;
    int64_t *lo = tsw__malloc(bytes_rows), *hi = lo ? lo + rows : NULL,
            *rowoff = lo ? lo + 2 * rows : NULL;
    unsigned char *mv = NULL;
    void *two = tsw__malloc(bytes_two);
    int64_t *cpath = tsw__malloc(bytes_path);
    int rc = TSW_OK;
    if ((bytes_series && !series) || !lo || !two || !cpath) {
        rc = TSW_ENOMEM;
        goto done;
    }
    /* the coarser series */
    const void *xa[64], *xb[64];
    xa[0] = a->values;
    xb[0] = b->values;
    {
        char *at = series;
        for (int l = 1; l < levels; ++l) {
            xa[l] = at;
            at += (size_t)ns[l] * (size_t)dim * esz;
            xb[l] = at;
            at += (size_t)ms[l] * (size_t)dim * esz;
            if (dtype == TSW_F32) {
                fd_shrink_f32(xa[l - 1], ns[l - 1], dim, (float *)xa[l]);
                fd_shrink_f32(xb[l - 1], ms[l - 1], dim, (float *)xb[l]);
            } else {
                fd_shrink_f64(xa[l - 1], ns[l - 1], dim, (double *)xa[l]);
                fd_shrink_f64(xb[l - 1], ms[l - 1], dim, (double *)xb[l]);
            }
        }
    }
    tsw__cancel cancel;
    int64_t cells = 0;
    for (int l = 0; l < levels; ++l) /* progress: about the cells of every level */
        cells += ns[l] * (l == levels - 1 ? ms[l] : (int64_t)width);
    tsw__cancel_init(&cancel, ex, cells);
    int64_t done = 0, clen = 0;
    for (int l = levels - 1; l >= 0; --l) {
        const int64_t n = ns[l], m = ms[l];
        if (l == levels - 1) { /* the coarsest: the whole grid */
            for (int64_t i = 0; i < n; ++i) {
                lo[i] = 0;
                hi[i] = m - 1;
            }
        } else {
            tsw__fd_expand(cpath, clen, radius, n, m, lo, hi);
        }
        size_t off = 0;
        for (int64_t i = 0; i < n; ++i) {
            rowoff[i] = (int64_t)off;
            off += (size_t)(hi[i] - lo[i] + 1);
        }
        if (off > moves) {
            tsw__free(mv);
            moves = off;
            if (!(mv = tsw__malloc(moves))) {
                rc = TSW_ENOMEM;
                goto done;
            }
        }
        int64_t *out = l == 0 ? path : cpath;
        double cost_l = 0;
        if (dtype == TSW_F32)
            rc = fd_window_dtw_f32(xa[l], n, xb[l], m, dim, cost, lo, hi, rowoff, mv,
                                   (float *)two, (float *)two + nmax + 1, out, &clen, &cost_l,
                                   &cancel, &done);
        else
            rc = fd_window_dtw_f64(xa[l], n, xb[l], m, dim, cost, lo, hi, rowoff, mv,
                                   (double *)two, (double *)two + nmax + 1, out, &clen,
                                   &cost_l, &cancel, &done);
        if (rc != TSW_OK)
            goto done;
        if (l == 0) {
            *length = clen;
            *total = cost_l;
        }
    }
done:
    tsw__free(series);
    tsw__free(lo);
    tsw__free(mv);
    tsw__free(two);
    tsw__free(cpath);
    return rc;
}
