/*
 * The pieces of nearest-neighbour search and subsequence search, once per precision
 * (included by cpu/knn.c and cpu/search.c with T, SFX and INF defined): envelopes by Lemire's streaming
 * min/max, the cost of a point to a box, LB_Kim's rings, and DTW that abandons early.
 *
 * Windows come as spans: row i of the program (a point of the first series a) admits the
 * columns [rlo[i], rhi[i]), column j (a point of b) the rows [clo[j], chi[j]); the bounds
 * of both ends move forward (cpu/knn.c, tsw__spans), which is all the streaming min/max
 * needs, whatever the window.
 */

#define TSW_CAT_(a, b) a##_##b
#define TSW_CAT(a, b) TSW_CAT_(a, b)
#define TSW_F(name) TSW_CAT(name, SFX)

/* lower[k], upper[k] (each dim values) = min / max of s over the points [lo[k], hi[k]),
 * channel by channel; an empty span gives +inf / -inf. dq: scratch of len int64. */
static inline void TSW_F(knn_envelope)(const T *s, int64_t len, int64_t dim, const int64_t *lo,
                                const int64_t *hi, int64_t count, T *lower, T *upper,
                                int64_t *dq)
{
    for (int64_t c = 0; c < dim; ++c) {
        for (int pass = 0; pass < 2; ++pass) { /* 0: max, 1: min */
            T *out = pass ? lower : upper;
            int64_t head = 0, tail = 0, t = 0;
            for (int64_t k = 0; k < count; ++k) {
                int64_t h = hi[k] < len ? hi[k] : len;
                for (; t < h; ++t) {
                    T v = s[t * dim + c];
                    if (pass)
                        while (tail > head && s[dq[tail - 1] * dim + c] >= v)
                            --tail;
                    else
                        while (tail > head && s[dq[tail - 1] * dim + c] <= v)
                            --tail;
                    dq[tail++] = t;
                }
                while (head < tail && dq[head] < lo[k])
                    ++head;
                out[k * dim + c] = head < tail && lo[k] < h ? s[dq[head] * dim + c]
                                                            : (pass ? INF : -INF);
            }
        }
    }
}

/* Cost of the point x to the box [lo, hi] (its nearest point), in double. */
static inline double TSW_F(knn_box)(tsw_cost cost, const T *x, const T *lo, const T *hi,
                                    int64_t dim)
{
    double s = 0;
    for (int64_t k = 0; k < dim; ++k) {
        double v = (double)x[k], d = 0;
        if (v < (double)lo[k])
            d = (double)lo[k] - v;
        else if (v > (double)hi[k])
            d = v - (double)hi[k];
        s += tsw_cost_term_f64(cost, d);
    }
    return tsw_cost_total_f64(cost, s);
}

/* The cheapest admissible cell of ring t: the cells with max(i, j) = t (back = 0) or
 * max(n-1-i, m-1-j) = t (back = 1); +inf when the window admits none. */
static inline double TSW_F(knn_ring)(tsw_cost cost, const T *a, int64_t n, const T *b, int64_t m,
                              int64_t dim, const int64_t *rlo, const int64_t *rhi, int64_t t,
                              int back)
{
    double best = HUGE_VAL;
    /* row t, columns 0..t; then column t, rows 0..t-1 (mirrored for the back) */
    for (int part = 0; part < 2; ++part) {
        int64_t fixed = t, cnt = part ? t : t + 1;
        if (fixed >= (part ? m : n))
            continue;
        for (int64_t u = 0; u < cnt; ++u) {
            int64_t i = part ? u : fixed, j = part ? fixed : u;
            if (i >= n || j >= m)
                break;
            if (back) {
                i = n - 1 - i;
                j = m - 1 - j;
            }
            if (j < rlo[i] || j >= rhi[i])
                continue;
            double c = (double)TSW_F(tsw_cost_local)(cost, a + i * dim, b + j * dim, dim);
            best = c < best ? c : best;
        }
    }
    return best;
}

/* Rings 0 .. rings-1 at both ends, the sum of their cheapest cells, stopping once above
 * stop. rings is cut to max(n, m) / 2 so that no cell counts twice; a 1 x 1 grid is its
 * one cell. */
static inline double TSW_F(knn_rings)(tsw_cost cost, const T *a, int64_t n, const T *b, int64_t m,
                               int64_t dim, const int64_t *rlo, const int64_t *rhi,
                               int64_t rings, double stop)
{
    int64_t mx = n > m ? n : m;
    if (mx == 1)
        return rlo[0] == 0 && rhi[0] > 0 ? (double)TSW_F(tsw_cost_local)(cost, a, b, dim) : HUGE_VAL;
    if (rings > mx / 2)
        rings = mx / 2;
    double s = 0;
    for (int64_t t = 0; t < rings && s <= stop; ++t) {
        s += TSW_F(knn_ring)(cost, a, n, b, m, dim, rlo, rhi, t, 0);
        s += TSW_F(knn_ring)(cost, a, n, b, m, dim, rlo, rhi, t, 1);
    }
    return s;
}

/* One row of knn_ea_dtw for the cost expression COST(x, y): the cells that the kept
 * cells above feed ([lo, pe], where diag and up are read), then those that only the left
 * neighbour feeds, until it is pruned. */
#define TSW_EA_CELL(COST, diag, up)                                                          \
    do {                                                                                     \
        const T *y = b + j * dim;                                                            \
        T v = TSW_F(tsw_dtw_cell)(COST, (diag), (up), left);                                 \
        double rest = cbc && cbc[j + 1] > rrow ? cbc[j + 1] : rrow;                          \
        if ((double)v + rest > thr) {                                                        \
            v = inf;                                                                         \
        } else {                                                                             \
            if (cs < 0)                                                                      \
                cs = j;                                                                      \
            ce = j;                                                                          \
        }                                                                                    \
        cur[j] = v;                                                                          \
        left = v;                                                                            \
    } while (0)

#define TSW_EA_BODY(COST)                                                                    \
    for (int64_t i = 0; i < n; ++i) {                                                        \
        int64_t lo = rlo[i], hi = rhi[i], j = 0;                                             \
        const double rrow = cbr ? cbr[i + 1] : 0;                                            \
        const T *x = a + i * dim;                                                            \
        int64_t cs = -1, ce = -1;                                                            \
        T left = inf;                                                                        \
        if (i == 0) {                                                                        \
            for (j = lo; j < hi; ++j) {                                                      \
                if (j > 0 && left == inf)                                                    \
                    break;                                                                   \
                TSW_EA_CELL(COST, j == 0 ? (T)0 : inf, inf);                                 \
            }                                                                                \
        } else {                                                                             \
            if (lo < ps)                                                                     \
                lo = ps; /* left of the first kept cell above, nothing can be reached */     \
            const int64_t fed = hi < pe + 1 ? hi : pe + 1;                                   \
            j = lo;                                                                          \
            if (j < fed && j == ps) { /* no diag */                                          \
                TSW_EA_CELL(COST, inf, j < pe ? prev[j] : inf);                              \
                ++j;                                                                         \
            }                                                                                \
            for (; j < fed && j < pe; ++j)                                                   \
                TSW_EA_CELL(COST, prev[j - 1], prev[j]);                                     \
            if (j < fed) { /* j == pe: diag only */                                          \
                TSW_EA_CELL(COST, prev[j - 1], inf);                                         \
                ++j;                                                                         \
            }                                                                                \
            for (; j < hi && left != inf; ++j) /* only the left neighbour feeds */           \
                TSW_EA_CELL(COST, inf, inf);                                                 \
        }                                                                                    \
        if (cs < 0)                                                                          \
            return HUGE_VAL;                                                                 \
        ps = cs;                                                                             \
        pe = ce + 1;                                                                         \
        T *t = prev;                                                                         \
        prev = cur;                                                                          \
        cur = t;                                                                             \
    }

/*
 * DTW's accumulated cost (the raw value) of a (n rows) and b (m columns) within the spans,
 * abandoning what cannot end at or below thr (PrunedDTW, Silva and Batista 2016, with the
 * UCR Suite's cumulative bounds): a cell whose value plus a bound of the rest of any path
 * through it exceeds thr is +inf, and the rest of a path from (i, j) covers the rows after
 * i and the columns after j, so rest = max(cbr[i + 1], cbc[j + 1]) (either array may be
 * NULL: 0). Only the cells reachable from a kept cell are visited. Returns the exact value
 * (bit for bit the reference's: the same cells, costs and additions; a pruned cell never
 * lies on a path of cost <= thr) when it is <= thr, else something > thr or +inf.
 * prev, cur: m values each. The cost of one channel is written out (the same operations
 * as cost.h's loop: 0 + d * d and 0 + |d| round alike).
 */
static inline double TSW_F(knn_ea_dtw)(tsw_cost cost, const T *a, int64_t n, const T *b,
                                       int64_t m, int64_t dim, const int64_t *rlo,
                                       const int64_t *rhi, const double *cbr, const double *cbc,
                                       double thr, T *prev, T *cur)
{
    const T inf = INF;
    int64_t ps = 0, pe = 0; /* the previous row's kept cells lie in [ps, pe) */
    if (dim == 1 && cost == TSW_COST_SQEUCLIDEAN) {
        TSW_EA_BODY(((x[0] - y[0]) * (x[0] - y[0])))
    } else if (dim == 1 && cost == TSW_COST_ABS) {
        TSW_EA_BODY((x[0] - y[0] < 0 ? y[0] - x[0] : x[0] - y[0]))
    } else {
        TSW_EA_BODY(TSW_F(tsw_cost_local)(cost, x, y, dim))
    }
    return pe == m ? (double)prev[m - 1] : HUGE_VAL;
}

#undef TSW_EA_BODY
#undef TSW_EA_CELL

#undef TSW_F
#undef TSW_CAT
#undef TSW_CAT_
