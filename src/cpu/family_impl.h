/*
 * The fast CPU kernel of the elastic family (common/elastic.h): one pair, rows over the
 * outer series, only the window's cells of each row visited (O(n r) time for a band of
 * radius r, O(m) memory), the per-point terms (WDTW's weights, ERP's gap costs) computed
 * once per pair, rows abandoned above a bound, Ctrl-C polled every 64 rows. The cells are
 * the reference's (the same functions in the same order), so both give the same bits.
 * Included by family.c once per precision with T, SFX, INF, SQRT and FABS defined.
 */

#define TSW_CAT_(a, b) a##_##b
#define TSW_CAT(a, b) TSW_CAT_(a, b)
#define TSW_F(name) TSW_CAT(name, SFX)

/* Rows between polls of the progress callback. */
#define TSW__FAM_POLL 64

typedef struct TSW_F(fam_ctx) {
    const tsw_params *p;
    const tsw_band *band;
    int64_t dim, step; /* values per point compared; stride between points */
    const T *a, *b;
    T eps;             /* EDR, LCSS */
    T sqeps;           /* EDR, LCSS: tsw_sq_bound of eps (the match test on squares) */
    int erp_abs;       /* ERP, one channel: |x - y| is its root's bits (elastic.h) */
    const T *w;        /* WDTW: w[k], k = |i - j| */
    const T *ga, *gb;  /* ERP: the gap cost of every point of a and of b */
    T *prev, *cur;
    double bound;
    tsw__cancel *cx;
} TSW_F(fam_ctx);

/* One program; the last cell (LCSS: S, EDR: the count), +inf when abandoned, NaN when
 * cancelled. Inlined twice by fam_dp: with dim the constant 1 (univariate series and MSM's
 * channels, whose point loops then vanish) and with the pair's dim. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline T TSW_F(fam_dp_dim)(const TSW_F(fam_ctx) *c, const int64_t dim)
{
    const tsw_params *p = c->p;
    const int64_t N = c->band->rows, M = c->band->cols, step = c->step;
    const int measure = p->measure;
    const int lcss = measure == TSW_LCSS;
    const T inf = INF, outside = lcss ? (T)0 : inf;
    T *prev = c->prev, *cur = c->cur;
    int64_t lo, hi;
    tsw_band_range(c->band, 0, &lo, &hi);
    /* the boundary row as far as the first row reads it */
    prev[0] = 0;
    for (int64_t j = 1; j <= hi; ++j)
        prev[j] = measure == TSW_ERP ? prev[j - 1] + c->gb[j - 1]
                  : measure == TSW_EDR ? (T)j
                                        : outside;
    int64_t phi = hi; /* prev[0..phi] hold the previous row (outside its window: sentinels) */
    T col = 0;
    const T pen = (T)p->warp_penalty, mc = (T)p->c;
    for (int64_t i = 1; i <= N; ++i) {
        tsw_band_range(c->band, i - 1, &lo, &hi);
        for (int64_t j = phi + 1; j <= hi; ++j)
            prev[j] = outside;
        phi = hi;
        const T *x = c->a + (i - 1) * step;
        col = measure == TSW_ERP ? col + c->ga[i - 1] : measure == TSW_EDR ? (T)i : outside;
        cur[lo] = lo == 0 ? col : outside;
        const T *y = c->b + lo * step;
        switch (measure) {
        case TSW_DDTW: /* DTW on the derivatives, under p->cost */
            for (int64_t j = lo + 1; j <= hi; ++j, y += step)
                cur[j] = TSW_F(tsw_dtw_cell)(TSW_F(tsw_cost_local)(p->cost, x, y, dim),
                                             prev[j - 1], prev[j], cur[j - 1]);
            break;
        case TSW_WDTW:
        case TSW_WDDTW:
            for (int64_t j = lo + 1; j <= hi; ++j, y += step) {
                const T w = c->w[i > j ? i - j : j - i];
                cur[j] = TSW_F(tsw_dtw_cell)(TSW_F(tsw_cost_sqeuclidean)(x, y, dim) * w,
                                             prev[j - 1], prev[j], cur[j - 1]);
            }
            break;
        case TSW_ADTW:
            for (int64_t j = lo + 1; j <= hi; ++j, y += step)
                cur[j] = TSW_ADTW_CELL(TSW_F(tsw_cost_sqeuclidean)(x, y, dim), prev[j - 1],
                                       prev[j], cur[j - 1], pen, TSW_MIN, TSW__S_ADD);
            break;
        case TSW_ERP: {
            const T gx = c->ga[i - 1];
            if (dim == 1 && c->erp_abs)
                for (int64_t j = lo + 1; j <= hi; ++j, y += step)
                    cur[j] = TSW_EDIT_CELL(prev[j - 1] + FABS(x[0] - y[0]), prev[j] + gx,
                                           cur[j - 1] + c->gb[j - 1], TSW_MIN);
            else
                for (int64_t j = lo + 1; j <= hi; ++j, y += step)
                    cur[j] = TSW_EDIT_CELL(prev[j - 1] + TSW_F(tsw_euclid)(x, y, dim),
                                           prev[j] + gx, cur[j - 1] + c->gb[j - 1], TSW_MIN);
            break;
        }
        case TSW_EDR: /* root < eps  <=>  square < sqeps (tsw_sq_bound) */
            for (int64_t j = lo + 1; j <= hi; ++j, y += step)
                cur[j] = TSW_EDIT_CELL(
                    prev[j - 1] + TSW_EDR_SUBST(TSW_F(tsw_cost_sqeuclidean)(x, y, dim), c->sqeps,
                                                (T)0, (T)1, TSW__E_LT, TSW__E_SEL),
                    prev[j] + (T)1, cur[j - 1] + (T)1, TSW_MIN);
            break;
        case TSW_LCSS: /* root <= eps  <=>  square < sqeps (tsw_sq_bound, inclusive) */
            for (int64_t j = lo + 1; j <= hi; ++j, y += step)
                cur[j] = TSW_LCSS_CELL(TSW_F(tsw_cost_sqeuclidean)(x, y, dim), c->sqeps,
                                       prev[j - 1], prev[j], cur[j - 1], (T)1, TSW__E_LT,
                                       TSW__E_SEL,
                                       TSW_MAX, TSW__E_ADD);
            break;
        default: /* TSW_MSM */
            if (p->msm_independent) {
                for (int64_t j = lo + 1; j <= hi; ++j, y += step) {
                    const T su = i > 1 ? TSW_F(tsw_msm_split)(x[0], x[-step], y[0], mc) : inf;
                    const T sl = j > 1 ? TSW_F(tsw_msm_split)(y[0], x[0], y[-step], mc) : inf;
                    cur[j] = TSW_EDIT_CELL(prev[j - 1] + FABS(x[0] - y[0]), prev[j] + su,
                                           cur[j - 1] + sl, TSW_MIN);
                }
            } else {
                for (int64_t j = lo + 1; j <= hi; ++j, y += step) {
                    const T su =
                        i > 1 ? TSW_F(tsw_msm_split_dep)(x, x - step, y, dim, mc) : inf;
                    const T sl =
                        j > 1 ? TSW_F(tsw_msm_split_dep)(y, x, y - step, dim, mc) : inf;
                    cur[j] = TSW_EDIT_CELL(prev[j - 1] + TSW_F(tsw_cost_sqeuclidean)(x, y, dim),
                                           prev[j] + su, cur[j - 1] + sl, TSW_MIN);
                }
            }
            break;
        }
        if (c->bound < (double)inf && !lcss) {
            double mn = (double)inf;
            for (int64_t j = lo == 0 ? 0 : lo + 1; j <= hi; ++j)
                mn = (double)cur[j] < mn ? (double)cur[j] : mn;
            if (measure == TSW_EDR)
                mn /= (double)(N > M ? N : M);
            if (mn > c->bound)
                return inf;
        }
        T *t = prev;
        prev = cur;
        cur = t;
        if (c->cx && i % TSW__FAM_POLL == 0 && tsw__cancel_poll(c->cx, i * M))
            return (T)NAN;
    }
    return phi >= M ? prev[M] : outside;
}

static T TSW_F(fam_dp)(const TSW_F(fam_ctx) *c)
{
    return c->dim == 1 ? TSW_F(fam_dp_dim)(c, 1) : TSW_F(fam_dp_dim)(c, c->dim);
}

/* One pair: the finished value (EDR and LCSS normalised), +inf when abandoned above bound,
 * NaN when cancelled. ws: tsw__family_ws_bytes(p, dtype, dim, n, m) bytes. */
static double TSW_F(fam_pair)(const tsw_params *p, int64_t dim, const tsw__pair *pr, void *ws,
                              double bound)
{
    const T *a = (const T *)pr->a, *b = (const T *)pr->b;
    int64_t n = pr->n, m = pr->m;
    const int64_t len = (n > m ? n : m) + 1;
    T *prev = (T *)ws, *cur = prev + len, *extra = cur + len;
    if (TSW_IS_DERIVATIVE(p->measure))
        extra = TSW_F(tsw_derivative_pair)(&a, &n, &b, &m, dim, extra);
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    if (band.swap) {
        const T *t = a;
        a = b;
        b = t;
    }
    const int64_t N = band.rows, M = band.cols, L = N > M ? N : M;
    TSW_F(fam_ctx) c = {p, &band, dim, dim, a, b, 0, 0, 0, NULL, NULL, NULL, prev, cur, bound,
                        pr->cancel};
    if (p->measure == TSW_WDTW || p->measure == TSW_WDDTW) {
        T *w = extra;
        for (int64_t k = 0; k < L; ++k)
            w[k] = TSW_F(tsw_wdtw_weight)(p->g, k, L);
        c.w = w;
    } else if (p->measure == TSW_ERP) {
        T *ga = extra, *gb = extra + N;
        for (int64_t i = 0; i < N; ++i)
            ga[i] = TSW_F(tsw_erp_gap)(a + i * dim, dim, (T)p->erp_g);
        for (int64_t j = 0; j < M; ++j)
            gb[j] = TSW_F(tsw_erp_gap)(b + j * dim, dim, (T)p->erp_g);
        c.ga = ga;
        c.gb = gb;
        c.erp_abs = dim == 1 && TSW_F(tsw_root_square_exact)(a, N) &&
                    TSW_F(tsw_root_square_exact)(b, M);
    } else if (p->measure == TSW_EDR || p->measure == TSW_LCSS) {
        c.eps = TSW_F(tsw_pair_epsilon)(p->epsilon, a, N, b, M, dim);
        c.sqeps = TSW_F(tsw_sq_bound)(c.eps, p->measure == TSW_LCSS);
    }
    if (p->measure == TSW_MSM && p->msm_independent) {
        /* one univariate program per channel, summed (each in full: the bound is on the sum) */
        double total = 0;
        c.dim = 1;
        c.bound = (double)INF;
        for (int64_t k = 0; k < dim; ++k) {
            c.a = a + k;
            c.b = b + k;
            T v = TSW_F(fam_dp)(&c);
            if (v != v)
                return NAN;
            total = (double)((T)total + v);
        }
        return total;
    }
    T v = TSW_F(fam_dp)(&c);
    if (v != v)
        return NAN;
    if (p->measure == TSW_EDR)
        return (double)(v / (T)L);
    if (p->measure == TSW_LCSS) {
        T d = (T)1 - v / (T)(N < M ? N : M);
        return (double)(d < 0 ? (T)0 : d);
    }
    return (double)v;
}

#undef TSW__FAM_POLL
#undef TSW_F
#undef TSW_CAT
#undef TSW_CAT_
