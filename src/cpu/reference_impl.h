/*
 * The plain CPU reference of the three measures: straightforward row-by-row dynamic
 * programs in two rolling rows (O(m) memory), no tricks. It defines correctness; every
 * faster path is tested against it. Included by reference.c once per precision with
 * T (float or double) and SFX (f32 or f64) defined.
 *
 * Indexing: the rolling rows hold D(i, 0..M) of the (N+1) x (M+1) matrix whose row and
 * column 0 are the boundary (D(0,0) = 0, the rest of the boundary +inf).
 */

#define TSW_CAT_(a, b) a##_##b
#define TSW_CAT(a, b) TSW_CAT_(a, b)
#define TSW_F(name) TSW_CAT(name, SFX)

/* min of row[lo, hi) (+inf when empty) */
static double TSW_F(ref_row_min)(const T *row, int64_t lo, int64_t hi)
{
    double mn = (double)INF;
    for (int64_t j = lo; j < hi; ++j)
        mn = (double)row[j] < mn ? (double)row[j] : mn;
    return mn;
}

/* DTW and soft-DTW share the loop; only the cell differs. */
/* bound: +inf, or (DTW, TWED) a value beyond which the caller needs no answer: once every
 * cell of a row exceeds it, so does the last cell (costs are >= 0), and the DP returns +inf
 * (k-nearest-neighbour search abandons that way; soft-DTW, not monotone, ignores it). */
static T TSW_F(ref_dtw_like)(const tsw_params *p, const tsw_band *band, int64_t dim,
                             const T *a, const T *b, T *prev, T *cur, double bound)
{
    const int64_t N = band->rows, M = band->cols;
    const T inf = INF;
    const T gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma);
    for (int64_t j = 0; j <= M; ++j)
        prev[j] = inf;
    prev[0] = 0;
    for (int64_t i = 1; i <= N; ++i) {
        int64_t lo, hi;
        tsw_band_range(band, i - 1, &lo, &hi);
        for (int64_t j = 0; j <= M; ++j)
            cur[j] = inf;
        for (int64_t j = lo + 1; j <= hi; ++j) {
            const T *x = a + (i - 1) * dim, *y = b + (j - 1) * dim;
            if (p->measure == TSW_SOFT_DTW) {
                T c = TSW_F(tsw_cost_sqeuclidean)(x, y, dim);
                cur[j] = TSW_F(tsw_sdtw_cell)(c, prev[j - 1], prev[j], cur[j - 1], gamma,
                                              inv_gamma);
            } else {
                T c = TSW_F(tsw_cost_local)(p->cost, x, y, dim);
                cur[j] = TSW_F(tsw_dtw_cell)(c, prev[j - 1], prev[j], cur[j - 1]);
            }
        }
        if (bound < (double)inf && p->measure != TSW_SOFT_DTW &&
            TSW_F(ref_row_min)(cur, lo + 1, hi + 1) > bound)
            return inf;
        T *t = prev;
        prev = cur;
        cur = t;
    }
    return prev[M];
}

/* Timestamp of padded point i (0 = the boundary point at time 0; default times 1..n). */
static T TSW_F(ref_time)(const T *t, int64_t i)
{
    if (i == 0)
        return 0;
    return t ? t[i - 1] : (T)i;
}

/* TWED on padded sequences: point 0 is the zero vector at time 0, point i is a[i-1].
 * full (the alignment path's): NULL, or the whole (N+1) x (M+1) matrix, its rows in place
 * of the rolling ones, cancel polled once a row (NaN when it stops). */
static T TSW_F(ref_twed)(const tsw_params *p, const tsw_band *band, int64_t dim, const T *a,
                         const T *ta, const T *b, const T *tb, T *prev, T *cur,
                         double bound, T *full, tsw__cancel *cancel)
{
    const int64_t N = band->rows, M = band->cols;
    const T inf = INF, nu = (T)p->nu, lmbda = (T)p->lmbda, pp = (T)p->p;
    if (full)
        prev = full;
    for (int64_t j = 0; j <= M; ++j)
        prev[j] = inf;
    prev[0] = 0;
    for (int64_t i = 1; i <= N; ++i) {
        int64_t lo, hi;
        tsw_band_range(band, i - 1, &lo, &hi);
        if (full)
            cur = full + i * (M + 1);
        for (int64_t j = 0; j <= M; ++j)
            cur[j] = inf;
        const T *ai = a + (i - 1) * dim;
        const T *ai1 = i > 1 ? a + (i - 2) * dim : NULL; /* NULL: the zero boundary point */
        T tai = TSW_F(ref_time)(ta, i), tai1 = TSW_F(ref_time)(ta, i - 1);
        for (int64_t j = lo + 1; j <= hi; ++j) {
            const T *bj = b + (j - 1) * dim;
            const T *bj1 = j > 1 ? b + (j - 2) * dim : NULL;
            T tbj = TSW_F(ref_time)(tb, j), tbj1 = TSW_F(ref_time)(tb, j - 1);
            /* deletion in a: a_{i-1} -> a_i */
            T del_a = prev[j] + TSW_F(tsw_lp)(ai, ai1, dim, pp) + nu * (tai - tai1) + lmbda;
            /* deletion in b */
            T del_b = cur[j - 1] + TSW_F(tsw_lp)(bj, bj1, dim, pp) + nu * (tbj - tbj1) + lmbda;
            /* match: both current points and both previous points */
            T d_prev;
            if (ai1 && bj1)
                d_prev = TSW_F(tsw_lp)(ai1, bj1, dim, pp);
            else if (ai1)
                d_prev = TSW_F(tsw_lp)(ai1, NULL, dim, pp);
            else if (bj1)
                d_prev = TSW_F(tsw_lp)(bj1, NULL, dim, pp);
            else
                d_prev = 0;
            T match = prev[j - 1] + TSW_F(tsw_lp)(ai, bj, dim, pp) + d_prev +
                      nu * (FABS(tai - tbj) + FABS(tai1 - tbj1));
            cur[j] = TSW_F(tsw_twed_cell)(del_a, del_b, match);
        }
        if (bound < (double)inf && TSW_F(ref_row_min)(cur, lo + 1, hi + 1) > bound)
            return inf;
        if (full && tsw__cancel_poll(cancel, i * M))
            return (T)NAN;
        T *t = prev;
        prev = cur;
        cur = t;
    }
    return prev[M];
}

/*
 * One cell of the elastic family (common/elastic.h), 1-based (i, j) of the padded matrix:
 * x and y the two points (`dim` values, point stride `step`: MSM's independent form runs one
 * channel at a time with dim 1), diag/up/left the three neighbours, L the longer length
 * (WDTW's weight). DDTW here is DTW's cell on the derivatives (the distance itself runs
 * ref_dtw_like; the alignment path's matrix runs this).
 */
static T TSW_F(ref_family_cell)(const tsw_params *p, int64_t i, int64_t j, int64_t L,
                                int64_t dim, int64_t step, const T *x, const T *y, T eps,
                                T diag, T up, T left)
{
    const T inf = INF;
    switch (p->measure) {
    case TSW_DDTW:
        return TSW_F(tsw_dtw_cell)(TSW_F(tsw_cost_sqeuclidean)(x, y, dim), diag, up, left);
    case TSW_WDTW:
    case TSW_WDDTW: {
        T w = TSW_F(tsw_wdtw_weight)(p->g, i > j ? i - j : j - i, L);
        return TSW_F(tsw_dtw_cell)(TSW_F(tsw_cost_sqeuclidean)(x, y, dim) * w, diag, up, left);
    }
    case TSW_ADTW:
        return TSW_ADTW_CELL(TSW_F(tsw_cost_sqeuclidean)(x, y, dim), diag, up, left,
                             (T)p->warp_penalty, TSW_MIN, TSW__S_ADD);
    case TSW_ERP:
        return TSW_EDIT_CELL(diag + TSW_F(tsw_euclid)(x, y, dim),
                             up + TSW_F(tsw_erp_gap)(x, dim, (T)p->erp_g),
                             left + TSW_F(tsw_erp_gap)(y, dim, (T)p->erp_g), TSW_MIN);
    case TSW_EDR:
        return TSW_EDIT_CELL(diag + TSW_EDR_SUBST(TSW_F(tsw_euclid)(x, y, dim), eps, (T)0,
                                                  (T)1, TSW__E_LT, TSW__E_SEL),
                             up + (T)1, left + (T)1, TSW_MIN);
    case TSW_LCSS:
        return TSW_LCSS_CELL(TSW_F(tsw_euclid)(x, y, dim), eps, diag, up, left, (T)1,
                             TSW__E_LE, TSW__E_SEL, TSW_MAX, TSW__E_ADD);
    default: { /* TSW_MSM */
        const T c = (T)p->c;
        T mv, su = inf, sl = inf;
        if (p->msm_independent) {
            mv = FABS(x[0] - y[0]);
            if (i > 1)
                su = TSW_F(tsw_msm_split)(x[0], x[-step], y[0], c);
            if (j > 1)
                sl = TSW_F(tsw_msm_split)(y[0], x[0], y[-step], c);
        } else {
            mv = TSW_F(tsw_cost_sqeuclidean)(x, y, dim);
            if (i > 1)
                su = TSW_F(tsw_msm_split_dep)(x, x - step, y, dim, c);
            if (j > 1)
                sl = TSW_F(tsw_msm_split_dep)(y, x, y - step, dim, c);
        }
        return TSW_EDIT_CELL(diag + mv, up + su, left + sl, TSW_MIN);
    }
    }
}

/* The family's boundary: row 0's cell j (ERP: the running gap sum, given the cell before),
 * and column 0's value of row i. */
static T TSW_F(ref_family_edge)(const tsw_params *p, int64_t k, const T *pt, int64_t dim,
                                T before)
{
    if (p->measure == TSW_ERP)
        return k == 0 ? (T)0 : before + TSW_F(tsw_erp_gap)(pt, dim, (T)p->erp_g);
    if (p->measure == TSW_EDR)
        return (T)k;
    return k == 0 ? (T)0 : (p->measure == TSW_LCSS ? (T)0 : INF);
}

/*
 * The elastic family (common/elastic.h) on the padded (N+1) x (M+1) matrix, rows over a:
 * one plain program, the measure chosen per cell (ref_family_cell). `dim` values per point,
 * point stride `step` (MSM's independent form runs one channel at a time: dim 1, step the
 * real dim). Returns the last cell (LCSS: the similarity S; EDR: the edit count).
 */
static T TSW_F(ref_family_dp)(const tsw_params *p, const tsw_band *band, int64_t dim,
                              int64_t step, const T *a, const T *b, T eps, T *prev, T *cur,
                              double bound)
{
    const int64_t N = band->rows, M = band->cols, L = N > M ? N : M;
    const int lcss = p->measure == TSW_LCSS;
    const T outside = lcss ? (T)0 : INF;
    /* the boundary row */
    for (int64_t j = 0; j <= M; ++j)
        prev[j] = TSW_F(ref_family_edge)(p, j, j ? b + (j - 1) * step : b, dim,
                                         j ? prev[j - 1] : (T)0);
    T col = 0; /* the boundary column's value of the current row */
    for (int64_t i = 1; i <= N; ++i) {
        int64_t lo, hi;
        tsw_band_range(band, i - 1, &lo, &hi);
        const T *x = a + (i - 1) * step;
        col = TSW_F(ref_family_edge)(p, i, x, dim, col);
        for (int64_t j = 0; j <= M; ++j)
            cur[j] = j == 0 ? col : outside;
        for (int64_t j = lo + 1; j <= hi; ++j)
            cur[j] = TSW_F(ref_family_cell)(p, i, j, L, dim, step, x, b + (j - 1) * step, eps,
                                            prev[j - 1], prev[j], cur[j - 1]);
        if (bound < (double)INF && !lcss) {
            double mn = TSW_F(ref_row_min)(cur, lo + 1, hi + 1);
            if (lo == 0 && (double)cur[0] < mn)
                mn = (double)cur[0];
            if (p->measure == TSW_EDR)
                mn /= (double)(N > M ? N : M);
            if (mn > bound)
                return INF;
        }
        T *t = prev;
        prev = cur;
        cur = t;
    }
    return prev[M];
}

/* A family pair (a: n points outer, b: m inner after the band's swap): the finished value
 * (EDR and LCSS normalised here; the others' last cell). */
static T TSW_F(ref_family)(const tsw_params *p, const tsw_band *band, int64_t dim, const T *a,
                           const T *b, T *prev, T *cur, double bound)
{
    const int64_t N = band->rows, M = band->cols;
    if (p->measure == TSW_MSM && p->msm_independent) {
        T total = 0;
        for (int64_t k = 0; k < dim; ++k) {
            /* the bound applies to the sum: a channel alone may not abandon above it unless
             * the others are counted, so each channel runs in full */
            total += TSW_F(ref_family_dp)(p, band, 1, dim, a + k, b + k, 0, prev, cur,
                                          (double)INF);
        }
        return total;
    }
    T eps = 0;
    if (p->measure == TSW_EDR || p->measure == TSW_LCSS)
        eps = TSW_F(tsw_pair_epsilon)(p->epsilon, a, N, b, M, dim);
    T v = TSW_F(ref_family_dp)(p, band, dim, dim, a, b, eps, prev, cur, bound);
    if (p->measure == TSW_EDR)
        return v / (T)(N > M ? N : M);
    if (p->measure == TSW_LCSS) {
        T d = (T)1 - v / (T)(N < M ? N : M);
        return d < 0 ? (T)0 : d;
    }
    return v;
}

/*
 * The family's whole padded matrix (band orientation: rows over a), into mat ((N+1) x (M+1)
 * values), by ref_family_dp's boundary and cells. Polls cancel once a row (done: cells of
 * the call so far, advanced here). Returns 0, or 1 when cancel stopped it.
 */
static int TSW_F(ref_family_fill)(const tsw_params *p, const tsw_band *band, int64_t dim,
                                  int64_t step, const T *a, const T *b, T eps, T *mat,
                                  tsw__cancel *cancel, int64_t *done)
{
    const int64_t N = band->rows, M = band->cols, L = N > M ? N : M, W = M + 1;
    const T outside = p->measure == TSW_LCSS ? (T)0 : INF;
    for (int64_t j = 0; j <= M; ++j)
        mat[j] = TSW_F(ref_family_edge)(p, j, j ? b + (j - 1) * step : b, dim,
                                        j ? mat[j - 1] : (T)0);
    for (int64_t i = 1; i <= N; ++i) {
        int64_t lo, hi;
        tsw_band_range(band, i - 1, &lo, &hi);
        const T *x = a + (i - 1) * step;
        T *cur = mat + i * W, *prev = cur - W;
        cur[0] = TSW_F(ref_family_edge)(p, i, x, dim, prev[0]);
        for (int64_t j = 1; j <= M; ++j)
            cur[j] = outside;
        for (int64_t j = lo + 1; j <= hi; ++j)
            cur[j] = TSW_F(ref_family_cell)(p, i, j, L, dim, step, x, b + (j - 1) * step, eps,
                                            prev[j - 1], prev[j], cur[j - 1]);
        *done += M;
        if (tsw__cancel_poll(cancel, *done))
            return 1;
    }
    return 0;
}

/* A path traced from its last cell, put in order from its first. */
static void TSW_F(ref_path_reverse)(int64_t *path, int64_t len)
{
    for (int64_t k = 0; k < len / 2; ++k) {
        const int64_t ti = path[2 * k], tj = path[2 * k + 1];
        path[2 * k] = path[2 * (len - 1 - k)];
        path[2 * k + 1] = path[2 * (len - 1 - k) + 1];
        path[2 * (len - 1 - k)] = ti;
        path[2 * (len - 1 - k) + 1] = tj;
    }
}

/* aeon's compute_min_return_path over the n x m cells of the padded matrix mat (rows of W
 * values; swap: stored transposed, the band's orientation): from (n - 1, m - 1) to the least
 * of the diagonal, up and left neighbours, the first of that order on ties (numpy's argmin),
 * straight along the first row or column. path receives the (i, j) pairs in order; returns
 * the length. */
static int64_t TSW_F(ref_min_return_path)(const T *mat, int64_t W, int swap, int64_t n,
                                          int64_t m, int64_t *path)
{
#define C(i, j) (swap ? mat[(j) * W + (i)] : mat[(i) * W + (j)])
    int64_t len = 0, i = n - 1, j = m - 1;
    while (i > 0 || j > 0) {
        path[2 * len] = i;
        path[2 * len + 1] = j;
        ++len;
        if (i == 0) {
            --j;
        } else if (j == 0) {
            --i;
        } else {
            const T d = C(i, j), u = C(i, j + 1), l = C(i + 1, j);
            if (d <= u && d <= l) {
                --i;
                --j;
            } else if (u <= l) {
                --i;
            } else {
                --j;
            }
        }
    }
#undef C
    path[2 * len] = 0;
    path[2 * len + 1] = 0;
    ++len;
    TSW_F(ref_path_reverse)(path, len);
    return len;
}

/*
 * The alignment path of a family pair by aeon's rule (tsw_elastic_path): a (n points), b
 * (m: DDTW and WDDTW their derivatives), the whole padded matrix in mat ((N+1) (M+1)
 * values; MSM's independent form the channels' matrices summed, chan a second matrix), then
 * back from the last cell in the pair's own orientation (the band's swap transposes the
 * matrix: C reads it back). path receives (i, j) pairs in order. Returns the path's length,
 * or -1 when cancel stopped it.
 */
static int64_t TSW_F(ref_family_path)(const tsw_params *p, int64_t dim, const T *a,
                                      const T *ta, int64_t n, const T *b, const T *tb,
                                      int64_t m, T *mat, T *chan, int64_t *path,
                                      tsw__cancel *cancel)
{
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    const T *A = band.swap ? b : a, *B = band.swap ? a : b;
    const int64_t N = band.rows, M = band.cols, W = M + 1;
    int64_t done = 0;
    T eps = 0;
    if (p->measure == TSW_EDR || p->measure == TSW_LCSS)
        eps = TSW_F(tsw_pair_epsilon)(p->epsilon, A, N, B, M, dim);
    if (p->measure == TSW_TWED) {
        /* TWED's matrix (aeon's twe_cost_matrix, the padded point 0 included) */
        const T *TA = band.swap ? tb : ta, *TB = band.swap ? ta : tb;
        if (isnan(TSW_F(ref_twed)(p, &band, dim, A, TA, B, TB, NULL, NULL, (double)INF, mat,
                                  cancel)))
            return -1;
    } else if (p->measure == TSW_MSM && p->msm_independent) {
        for (int64_t k = 0; k < dim; ++k) {
            T *dst = k == 0 ? mat : chan;
            if (TSW_F(ref_family_fill)(p, &band, 1, dim, A + k, B + k, 0, dst, cancel, &done))
                return -1;
            if (k > 0)
                for (int64_t c = 0; c < (N + 1) * W; ++c)
                    mat[c] += chan[c];
        }
    } else if (TSW_F(ref_family_fill)(p, &band, dim, dim, A, B, eps, mat, cancel, &done)) {
        return -1;
    }
    /* C(i, j): the padded matrix's cell of the pair's 1-based (i, j) */
#define C(i, j) (band.swap ? mat[(j) * W + (i)] : mat[(i) * W + (j)])
    int64_t len = 0;
    if (p->measure == TSW_LCSS) {
        /* aeon's compute_lcss_return_path: a cell in the window whose points match steps
         * diagonally and is on the path; any other steps up when S(i-1, j) > S(i, j-1),
         * else left (aeon loops for ever on a cell outside the window; tswarp steps) */
        int64_t i = n, j = m;
        while (i > 0 && j > 0) {
            int64_t r = band.swap ? j - 1 : i - 1, c = band.swap ? i - 1 : j - 1, lo, hi;
            tsw_band_range(&band, r, &lo, &hi);
            if (c >= lo && c < hi &&
                TSW_F(tsw_euclid)(a + (i - 1) * dim, b + (j - 1) * dim, dim) <= eps) {
                path[2 * len] = i - 1;
                path[2 * len + 1] = j - 1;
                ++len;
                --i;
                --j;
            } else if (C(i - 1, j) > C(i, j - 1)) {
                --i;
            } else {
                --j;
            }
        }
    } else {
#undef C
        return TSW_F(ref_min_return_path)(mat, W, band.swap, n, m, path);
    }
#undef C
    TSW_F(ref_path_reverse)(path, len);
    return len;
}

static double TSW_F(ref_pair)(const tsw_params *p, int64_t dim, const tsw__pair *pr, void *ws,
                              double bound)
{
    const T *a = (const T *)pr->a, *b = (const T *)pr->b;
    const T *ta = (const T *)pr->ta, *tb = (const T *)pr->tb;
    int64_t n = pr->n, m = pr->m;
    const int64_t len = (n > m ? n : m) + 1;
    T *prev = (T *)ws, *cur = prev + len;
    if (TSW_IS_DERIVATIVE(p->measure)) /* the derivatives, kept after the two rows */
        TSW_F(tsw_derivative_pair)(&a, &n, &b, &m, dim, cur + len);
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    if (band.swap) {
        const T *t = a;
        a = b;
        b = t;
        t = ta;
        ta = tb;
        tb = t;
    }
    if (p->measure == TSW_TWED)
        return (double)TSW_F(ref_twed)(p, &band, dim, a, ta, b, tb, prev, cur, bound, NULL,
                                       NULL);
    if (TSW_IS_FAMILY(p->measure) && p->measure != TSW_DDTW)
        return (double)TSW_F(ref_family)(p, &band, dim, a, b, prev, cur, bound);
    return (double)TSW_F(ref_dtw_like)(p, &band, dim, a, b, prev, cur, bound);
}

#undef TSW_F
#undef TSW_CAT
#undef TSW_CAT_
