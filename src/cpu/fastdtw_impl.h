/*
 * FastDTW (Salvador and Chan 2007) as the `fastdtw` package (0.3.4) computes it, so that the
 * same inputs and radius give the same path and cost:
 *   - a level shrinks both series by averaging pairs of points ((x[2k] + x[2k+1]) / 2, an
 *     odd last point dropped) until one has fewer than radius + 2 points, where DTW runs on
 *     the whole grid;
 *   - the coarser path, widened by radius cells on every side and projected onto the finer
 *     grid (each coarse cell its 2 x 2 fine cells), gives every fine row one interval of
 *     columns (the path is monotone, so the union is one interval), whose start never
 *     decreases (the package scans each row from the previous row's start);
 *   - DTW inside that window: each cell adds its local cost to every predecessor (up, left,
 *     diagonal) and keeps the first smallest in that order (Python's min), the path is the
 *     chain of kept predecessors from the last cell.
 * Where the package fails (radius 0 where a level has an odd length: a last row or column
 * that no coarse cell covers, an IndexError there) the uncovered rows take the row above's
 * interval and the last row reaches the last column. Included by fastdtw.c with T and SFX defined.
 */

#define TSW_CAT_(a, b) a##_##b
#define TSW_CAT(a, b) TSW_CAT_(a, b)
#define TSW_F(name) TSW_CAT(name, SFX)

/* The next coarser series: m = n / 2 points, each the mean of a pair. */
static void TSW_F(fd_shrink)(const T *x, int64_t n, int64_t dim, T *out)
{
    for (int64_t i = 0; i + 1 < n; i += 2)
        for (int64_t k = 0; k < dim; ++k)
            out[(i / 2) * dim + k] = (x[i * dim + k] + x[(i + 1) * dim + k]) / (T)2;
}

/*
 * DTW of a (n points) and b (m) inside the window rows [lo[i], hi[i]] (inclusive; lo non-
 * decreasing), the moves of its cells kept in `moves` (row i at rowoff[i]); the path into
 * `path` (from (0, 0)) and its cost. prev and cur: m + 1 values each. TSW_ENOPATH when the
 * window holds no path, TSW_ECANCELED when the progress callback stops it.
 */
static int TSW_F(fd_window_dtw)(const T *a, int64_t n, const T *b, int64_t m, int64_t dim,
                                int cost, const int64_t *lo, const int64_t *hi,
                                const int64_t *rowoff, unsigned char *moves, T *prev, T *cur,
                                int64_t *path, int64_t *length, double *total,
                                tsw__cancel *cx, int64_t *done)
{
    const T inf = (T)TSW_INF_F64;
    /* index j + 1 holds column j; index 0 is column -1 (D(-1, -1) = 0 above row 0) */
    for (int64_t j = 0; j <= m; ++j)
        prev[j] = inf;
    prev[0] = 0;
    int64_t phi = m - 1; /* prev's columns beyond phi are stale (the boundary row: none) */
    for (int64_t i = 0; i < n; ++i) {
        const int64_t l = lo[i], h = hi[i];
        for (int64_t j = phi + 1; j <= h; ++j)
            prev[j + 1] = inf;
        phi = h;
        cur[l] = inf; /* column l - 1 */
        unsigned char *mv = moves + rowoff[i] - l;
        const T *x = a + i * dim;
        for (int64_t j = l; j <= h; ++j) {
            const T c = TSW_F(tsw_cost_local)(cost, x, b + j * dim, dim);
            T best = prev[j + 1] + c; /* up */
            unsigned char step = 0;
            const T left = cur[j] + c, diag = prev[j] + c;
            if (left < best) {
                best = left;
                step = 1;
            }
            if (diag < best) {
                best = diag;
                step = 2;
            }
            cur[j + 1] = best;
            mv[j] = step;
        }
        if (i == 0)
            prev[0] = inf; /* D(-1, -1) feeds row 0 only */
        cur[0] = inf;
        T *t = prev;
        prev = cur;
        cur = t;
        *done += h - l + 1;
        if (cx && (i & 63) == 63 && tsw__cancel_poll(cx, *done))
            return TSW_ECANCELED;
    }
    if (hi[n - 1] != m - 1)
        return TSW_ENOPATH;
    if (!(prev[m] < inf)) {
        tsw__set_detail("the local costs are too large for %s: every path's cost overflows",
                        sizeof(T) == 4 ? "float32" : "float64");
        return TSW_ERANGE;
    }
    *total = (double)prev[m];
    /* the chain of kept predecessors, from the last cell back to (0, 0) */
    int64_t i = n - 1, j = m - 1, len = 0;
    for (;;) {
        path[2 * len] = i;
        path[2 * len + 1] = j;
        ++len;
        const unsigned char s = moves[rowoff[i] + j - lo[i]];
        if (s == 2) {
            if (i == 0 && j == 0)
                break;
            --i;
            --j;
        } else if (s == 1) {
            --j;
        } else {
            --i;
        }
    }
    for (int64_t k = 0; k < len / 2; ++k) { /* reversed: from (0, 0) */
        int64_t t0 = path[2 * k], t1 = path[2 * k + 1];
        path[2 * k] = path[2 * (len - 1 - k)];
        path[2 * k + 1] = path[2 * (len - 1 - k) + 1];
        path[2 * (len - 1 - k)] = t0;
        path[2 * (len - 1 - k) + 1] = t1;
    }
    *length = len;
    return TSW_OK;
}

#undef TSW_F
#undef TSW_CAT
#undef TSW_CAT_
