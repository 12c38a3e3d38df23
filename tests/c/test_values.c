/*
 * Values: hand-computed results for tiny inputs (the arithmetic is in the comments), a
 * brute-force full-matrix transcription of each recurrence for random inputs, and the
 * properties every variant must share (symmetry, d(x,x) = 0, precisions, batch layouts,
 * implementations and thread counts).
 */
#include "harness.h"

#include <float.h>

#define TOL64 1e-12
#define TOL32 1e-5

static const tsw_measure MEASURES[3] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW};

/* ---- helpers ---------------------------------------------------------------------------- */

/* tsw_distance on (n, dim) and (m, dim) float64 series; NaN when the call fails. */
static double dist_at(const char *file, int line, const tsw_params *p, int64_t dim,
                      const double *a, const double *ta, int64_t n, const double *b,
                      const double *tb, int64_t m, const tsw_exec *ex)
{
    tsw_series sa = {a, n, ta}, sb = {b, m, tb};
    double out = NAN;
    if (!CHECK_RC_AT(tsw_distance(p, TSW_F64, dim, &sa, &sb, &out, ex), TSW_OK, file, line))
        return NAN;
    return out;
}
#define DIST(p, dim, a, n, b, m)                                                               \
    dist_at(__FILE__, __LINE__, p, dim, a, NULL, n, b, NULL, m, NULL)
#define DIST_T(p, dim, a, ta, n, b, tb, m)                                                     \
    dist_at(__FILE__, __LINE__, p, dim, a, ta, n, b, tb, m, NULL)

/* The same pair in float32 (values and times narrowed). */
static double dist32_at(const char *file, int line, const tsw_params *p, int64_t dim,
                        const double *a, const double *ta, int64_t n, const double *b,
                        const double *tb, int64_t m)
{
    float *fa = malloc(sizeof(float) * (size_t)(n * dim + n));
    float *fb = malloc(sizeof(float) * (size_t)(m * dim + m));
    for (int64_t k = 0; k < n * dim; ++k)
        fa[k] = (float)a[k];
    for (int64_t k = 0; k < m * dim; ++k)
        fb[k] = (float)b[k];
    for (int64_t k = 0; ta && k < n; ++k)
        fa[n * dim + k] = (float)ta[k];
    for (int64_t k = 0; tb && k < m; ++k)
        fb[m * dim + k] = (float)tb[k];
    tsw_series sa = {fa, n, ta ? fa + n * dim : NULL}, sb = {fb, m, tb ? fb + m * dim : NULL};
    double out = NAN;
    if (!CHECK_RC_AT(tsw_distance(p, TSW_F32, dim, &sa, &sb, &out, NULL), TSW_OK, file, line))
        out = NAN;
    /* a float32 result is a float widened to double */
    CHECK_AT(isnan(out) || out == (double)(float)out, file, line);
    free(fa);
    free(fb);
    return out;
}
#define DIST32(p, dim, a, n, b, m) dist32_at(__FILE__, __LINE__, p, dim, a, NULL, n, b, NULL, m)

static void random_series(tsw_t_rng *r, double *v, int64_t count, double scale)
{
    for (int64_t k = 0; k < count; ++k)
        v[k] = tsw_t_uniform(r, -scale, scale);
}

/* Strictly increasing random timestamps. */
static void random_times(tsw_t_rng *r, double *t, int64_t n)
{
    double x = tsw_t_uniform(r, -2.0, 2.0);
    for (int64_t k = 0; k < n; ++k) {
        x += tsw_t_uniform(r, 0.05, 2.0);
        t[k] = x;
    }
}

/* ---- brute force: the full (n+1) x (m+1) matrix of each recurrence ------------------------
 */

static int brute_admissible(const tsw_params *p, int64_t n, int64_t m, int64_t i, int64_t j)
{
    int64_t r;
    if (p->window == TSW_WINDOW_SAKOE_CHIBA)
        r = (int64_t)p->window_radius;
    else if (p->window == TSW_WINDOW_SAKOE_CHIBA_FRACTION)
        r = (int64_t)floor(p->window_radius * (double)(n < m ? n : m));
    else
        return 1; /* no window (Itakura is not transcribed here) */
    int64_t lo = -r - (n > m ? n - m : 0), hi = r + (m > n ? m - n : 0);
    return j - i >= lo && j - i <= hi;
}

static double brute_cost(tsw_cost cost, const double *x, const double *y, int64_t dim)
{
    double sq = 0, l1 = 0, xy = 0, xx = 0, yy = 0;
    for (int64_t k = 0; k < dim; ++k) {
        sq += (x[k] - y[k]) * (x[k] - y[k]);
        l1 += fabs(x[k] - y[k]);
        xy += x[k] * y[k];
        xx += x[k] * x[k];
        yy += y[k] * y[k];
    }
    switch (cost) {
    case TSW_COST_EUCLIDEAN:
        return sqrt(sq);
    case TSW_COST_ABS:
        return l1;
    case TSW_COST_COSINE:
        if (xx == 0 && yy == 0)
            return 0;
        if (xx == 0 || yy == 0)
            return 1;
        return 1 - xy / (sqrt(xx) * sqrt(yy));
    default:
        return sq;
    }
}

/* |x - y|_p with NULL meaning the zero vector (TWED's padding point). */
static double brute_lp(const double *x, const double *y, int64_t dim, double p)
{
    double s = 0;
    for (int64_t k = 0; k < dim; ++k)
        s += pow(fabs((x ? x[k] : 0) - (y ? y[k] : 0)), p);
    return pow(s, 1 / p);
}

/* -gamma log(exp(-a/gamma) + exp(-b/gamma) + exp(-c/gamma)), the minimum factored out. */
static double brute_softmin(double a, double b, double c, double gamma)
{
    double mn = fmin(a, fmin(b, c));
    if (isinf(mn))
        return mn;
    return mn - gamma * log(exp(-(a - mn) / gamma) + exp(-(b - mn) / gamma) +
                            exp(-(c - mn) / gamma));
}

/* The raw measure (DTW's accumulated cost, TWED, soft-DTW without normalisation). */
static double brute_raw(const tsw_params *p, int64_t dim, const double *a, const double *ta,
                        int64_t n, const double *b, const double *tb, int64_t m)
{
    double *D = malloc(sizeof(double) * (size_t)((n + 1) * (m + 1)));
#define AT(i, j) D[(i) * (m + 1) + (j)]
    for (int64_t k = 0; k < (n + 1) * (m + 1); ++k)
        D[k] = INFINITY;
    AT(0, 0) = 0;
    for (int64_t i = 1; i <= n; ++i) {
        for (int64_t j = 1; j <= m; ++j) {
            if (!brute_admissible(p, n, m, i - 1, j - 1))
                continue;
            const double *x = a + (i - 1) * dim, *y = b + (j - 1) * dim;
            if (p->measure == TSW_DTW) {
                AT(i, j) = brute_cost(p->cost, x, y, dim) +
                           fmin(AT(i - 1, j - 1), fmin(AT(i - 1, j), AT(i, j - 1)));
            } else if (p->measure == TSW_SOFT_DTW) {
                AT(i, j) =
                    brute_cost(TSW_COST_SQEUCLIDEAN, x, y, dim) +
                    brute_softmin(AT(i - 1, j - 1), AT(i - 1, j), AT(i, j - 1), p->gamma);
            } else {
                /* Marteau: padded point 0 is the zero vector at time 0; point i of a is
                 * a[i-1] at time ta[i-1] (default i). */
                const double *xp = i > 1 ? x - dim : NULL, *yp = j > 1 ? y - dim : NULL;
                double txi = ta ? ta[i - 1] : (double)i,
                       txp = i > 1 ? (ta ? ta[i - 2] : i - 1) : 0;
                double tyj = tb ? tb[j - 1] : (double)j,
                       typ = j > 1 ? (tb ? tb[j - 2] : j - 1) : 0;
                double del_a =
                    AT(i - 1, j) + brute_lp(x, xp, dim, p->p) + p->nu * (txi - txp) + p->lmbda;
                double del_b =
                    AT(i, j - 1) + brute_lp(y, yp, dim, p->p) + p->nu * (tyj - typ) + p->lmbda;
                double match = AT(i - 1, j - 1) + brute_lp(x, y, dim, p->p) +
                               brute_lp(xp, yp, dim, p->p) +
                               p->nu * (fabs(txi - tyj) + fabs(txp - typ));
                AT(i, j) = fmin(match, fmin(del_a, del_b));
            }
        }
    }
    double v = AT(n, m);
#undef AT
    free(D);
    return v;
}

/* The returned distance: DTW's root, soft-DTW's divergence. */
static double brute(const tsw_params *p, int64_t dim, const double *a, const double *ta,
                    int64_t n, const double *b, const double *tb, int64_t m)
{
    double v = brute_raw(p, dim, a, ta, n, b, tb, m);
    if (p->measure == TSW_DTW && !p->accumulated && p->cost == TSW_COST_SQEUCLIDEAN)
        return sqrt(v);
    if (p->measure == TSW_SOFT_DTW && p->normalize)
        return v - 0.5 * (brute_raw(p, dim, a, NULL, n, a, NULL, n) +
                          brute_raw(p, dim, b, NULL, m, b, NULL, m));
    return v;
}

/* ---- hand-computed values ---------------------------------------------------------------- */

static void test_dtw_by_hand(void)
{
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);

    /* a = [0, 1, 2], b = [0, 3]; squared costs c(i,j) = (a_i - b_j)^2:
     *        b=0  b=3
     *   a=0   0    9      D = 0   9
     *   a=1   1    4          1   4 + min(0, 9, 1) = 4
     *   a=2   4    1          5   1 + min(1, 4, 5) = 2
     * accumulated 2, DTW sqrt(2). */
    const double a1[3] = {0, 1, 2}, b1[2] = {0, 3};
    CHECK_NEAR(DIST(&p, 1, a1, 3, b1, 2), sqrt(2.0), TOL64);
    CHECK_NEAR(DIST(&p, 1, b1, 2, a1, 3), sqrt(2.0), TOL64);
    CHECK_NEAR(DIST32(&p, 1, a1, 3, b1, 2), sqrt(2.0), TOL32);
    p.accumulated = 1;
    CHECK_NEAR(DIST(&p, 1, a1, 3, b1, 2), 2.0, TOL64);

    /* 2-d: a = [(1,0), (0,1), (1,1)], b = [(1,0), (2,2)]. With costs c_ij and all costs
     * >= 0 the table is D11 = c11, D21 = c11 + c21, D22 = c22 + c11, D31 = D21 + c31,
     * D32 = c32 + min(D21, D22, D31).
     *             c11  c21  c22      c31      c32
     *   sqeucl     0    2    5        1        2     D32 = 2 + min(2, 5, 3) = 4 -> sqrt 2
     *   eucl       0   √2   √5        1       √2     D32 = √2 + √2 = 2√2
     *   abs        0    2    3        1        2     D32 = 2 + min(2, 3, 3) = 4
     *   cosine     0    1  1-1/√2  1-1/√2      0     D32 = 0 + min(1, 1-1/√2, 2-1/√2)
     * (cosine: <(0,1),(2,2)> = 2, |(2,2)| = √8, 1 - 2/√8 = 1 - 1/√2; (1,1) vs (2,2) is 0.) */
    const double a2[6] = {1, 0, 0, 1, 1, 1}, b2[4] = {1, 0, 2, 2};
    const tsw_cost costs[4] = {TSW_COST_SQEUCLIDEAN, TSW_COST_EUCLIDEAN, TSW_COST_ABS,
                               TSW_COST_COSINE};
    const double want[4] = {2.0, 2 * sqrt(2.0), 4.0, 1 - 1 / sqrt(2.0)};
    const double want_acc[4] = {4.0, 2 * sqrt(2.0), 4.0, 1 - 1 / sqrt(2.0)};
    for (int k = 0; k < 4; ++k) {
        tsw_params_default(&p, TSW_DTW);
        p.cost = costs[k];
        CHECK_NEAR(DIST(&p, 2, a2, 3, b2, 2), want[k], TOL64);
        CHECK_NEAR(DIST(&p, 2, b2, 2, a2, 3), want[k], TOL64);
        CHECK_NEAR(DIST32(&p, 2, a2, 3, b2, 2), want[k], TOL32);
        p.accumulated = 1;
        CHECK_NEAR(DIST(&p, 2, a2, 3, b2, 2), want_acc[k], TOL64);
    }

    /* Windows. a = [0, 0, 2], b = [0, 2, 2]: the diagonal costs 0 + 4 + 0 = 4, while with
     * one step of slack a_1 -> b_0, a_2 -> b_1, b_2 costs 0 (path (0,0) (1,0) (2,1) (2,2)). */
    const double a3[3] = {0, 0, 2}, b3[3] = {0, 2, 2};
    tsw_params_default(&p, TSW_DTW);
    CHECK_NEAR(DIST(&p, 1, a3, 3, b3, 3), 0.0, TOL64);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 0;
    CHECK_NEAR(DIST(&p, 1, a3, 3, b3, 3), 2.0, TOL64); /* sqrt(4) */
    p.window_radius = 1;
    CHECK_NEAR(DIST(&p, 1, a3, 3, b3, 3), 0.0, TOL64);
    p.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    p.window_radius = 0.33; /* floor(0.99) = 0 */
    CHECK_NEAR(DIST(&p, 1, a3, 3, b3, 3), 2.0, TOL64);
    p.window_radius = 0.34; /* floor(1.02) = 1 */
    CHECK_NEAR(DIST(&p, 1, a3, 3, b3, 3), 0.0, TOL64);
    /* tslearn's Itakura mask for (3, 3), slope 2, admits rows [0, 1) of column 0: a_1
     * cannot meet b_0, so only the diagonal remains. */
    p.window = TSW_WINDOW_ITAKURA;
    p.itakura_max_slope = 2;
    CHECK_NEAR(DIST(&p, 1, a3, 3, b3, 3), 2.0, TOL64);

    /* Unequal lengths keep a path under radius 0 (tslearn widens the band by |n - m|):
     * [0, 1, 2] vs [0, 3] has band j - i in [-1, 0], which holds the optimum above. */
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 0;
    CHECK_NEAR(DIST(&p, 1, a1, 3, b1, 2), sqrt(2.0), TOL64);

    /* One point each: the local cost itself. */
    const double x = 1.5, y = -2.5;
    tsw_params_default(&p, TSW_DTW);
    CHECK_NEAR(DIST(&p, 1, &x, 1, &y, 1), 4.0, TOL64); /* sqrt(16) */
}

static void test_itakura_infeasible(void)
{
    /* tslearn's Itakura mask for (n, m) = (2, 10), slope 2: with s = n / m = 0.2 the band
     * over b's point j is [ceil(max(j s / 2, 1 - 9 (2 s) + j (2 s))),
     * floor(min(2 s j, 1 - 9 s / 2 + j s / 2) + 1)); at j = 1 that is [ceil(0.1), floor(1.2))
     * = [1, 1), empty: no path, so +inf, for every measure and both orders. */
    double a[2] = {0, 1}, b[10];
    for (int k = 0; k < 10; ++k)
        b[k] = 0.1 * k;
    for (int mi = 0; mi < 3; ++mi) {
        tsw_params p;
        tsw_params_default(&p, MEASURES[mi]);
        p.window = TSW_WINDOW_ITAKURA;
        p.itakura_max_slope = 2;
        double v = DIST(&p, 1, a, 2, b, 10);
        CHECK(isinf(v) && v > 0);
        v = DIST(&p, 1, b, 10, a, 2);
        CHECK(isinf(v) && v > 0);
        v = DIST32(&p, 1, a, 2, b, 10);
        CHECK(isinf(v) && v > 0);
        if (MEASURES[mi] == TSW_SOFT_DTW) {
            p.normalize = 1;
            v = DIST(&p, 1, a, 2, b, 10);
            CHECK(isinf(v) && v > 0);
        }
        /* tslearn: (5, 10) admits a path at slope 2; (9, 10) admits none at slope 1,
         * where the band is the single line of slope 9/10. */
        p.normalize = 0;
        CHECK(isfinite(DIST(&p, 1, b, 5, b, 10)));
        CHECK(isfinite(DIST(&p, 1, b, 10, b, 5)));
        p.itakura_max_slope = 1;
        v = DIST(&p, 1, b, 9, b, 10);
        CHECK(isinf(v) && v > 0);
        CHECK(isfinite(DIST(&p, 1, b, 10, b, 10))); /* equal lengths: the diagonal */
    }
}

static void test_twed_by_hand(void)
{
    tsw_params p;
    tsw_params_default(&p, TSW_TWED);
    p.nu = 0.5;
    p.lmbda = 1;

    /* a = [1, 2], b = [3, 1], padded with the point 0 at time 0; default times 1, 2.
     *   D11 = match: |1-3| + |0-0| + nu (|1-1| + |0-0|)                       = 2
     *   D12 = del_b: D11 + |1-3| + nu (2-1) + lmbda = 2 + 2 + 0.5 + 1          = 5.5
     *   D21 = del_a: D11 + |2-1| + nu (2-1) + lmbda = 2 + 1 + 0.5 + 1          = 4.5
     *   D22 = min(del_a: D12 + 1 + 0.5 + 1 = 8, del_b: D21 + 2 + 0.5 + 1 = 8,
     *             match: D11 + |2-1| + |1-3| + nu (0 + 0) = 5)                  = 5 */
    const double a[2] = {1, 2}, b[2] = {3, 1};
    CHECK_NEAR(DIST(&p, 1, a, 2, b, 2), 5.0, TOL64);
    CHECK_NEAR(DIST(&p, 1, b, 2, a, 2), 5.0, TOL64);
    CHECK_NEAR(DIST32(&p, 1, a, 2, b, 2), 5.0, TOL32);
    /* the default timestamps are 1..n */
    const double t12[2] = {1, 2};
    CHECK(DIST_T(&p, 1, a, t12, 2, b, t12, 2) == DIST(&p, 1, a, 2, b, 2));

    /* explicit times ta = [1, 3], tb = [2, 4]:
     *   D11 = |1-3| + 0 + nu (|1-2| + |0-0|)           = 2.5
     *   D12 = D11 + |1-3| + nu (4-2) + 1 = 2.5 + 2 + 1 + 1 = 6.5
     *   D21 = D11 + |2-1| + nu (3-1) + 1 = 2.5 + 1 + 1 + 1 = 5.5
     *   D22 = min(6.5 + 3 = 9.5, 5.5 + 4 = 9.5,
     *             2.5 + |2-1| + |1-3| + nu (|3-4| + |1-2|) = 6.5)       = 6.5 */
    const double ta[2] = {1, 3}, tb[2] = {2, 4};
    CHECK_NEAR(DIST_T(&p, 1, a, ta, 2, b, tb, 2), 6.5, TOL64);
    CHECK_NEAR(DIST_T(&p, 1, b, tb, 2, a, ta, 2), 6.5, TOL64);
    CHECK_NEAR(dist32_at(__FILE__, __LINE__, &p, 1, a, ta, 2, b, tb, 2), 6.5, TOL32);

    /* Deletion only: a = [1, 2], b = [3] (one path, D11 = 2 then del_a 2 + 1 + 0.5 + 1). */
    CHECK_NEAR(DIST(&p, 1, a, 2, b, 1), 4.5, TOL64);

    /* R^2 with the Lp root: (3,4) vs (0,0) is one match |(3,4)|_p + |0 - 0|. */
    const double u[2] = {3, 4}, z[2] = {0, 0};
    tsw_params_default(&p, TSW_TWED);
    CHECK_NEAR(DIST(&p, 2, u, 1, z, 1), 5.0, TOL64);
    p.p = 1;
    CHECK_NEAR(DIST(&p, 2, u, 1, z, 1), 7.0, TOL64);
    p.p = 3;
    CHECK_NEAR(DIST(&p, 2, u, 1, z, 1), cbrt(27.0 + 64.0), TOL64);
}

/* The elastic family on short series whose programs are worked by hand. */
static void test_family_by_hand(void)
{
    tsw_params p;
    /* WDTW with g = 0 weighs every cell 1/2: [0, 2] vs [0, 0] is 0 + 4/2 on the diagonal. */
    tsw_params_default(&p, TSW_WDTW);
    p.g = 0;
    const double w1[2] = {0, 2}, w2[2] = {0, 0};
    CHECK_NEAR(DIST(&p, 1, w1, 2, w2, 2), 2.0, TOL64);
    CHECK_NEAR(DIST32(&p, 1, w1, 2, w2, 2), 2.0, TOL32);
    /* ADTW: [0, 1, 2] vs [0, 1, 1, 2] needs one warping step, which costs the penalty. */
    tsw_params_default(&p, TSW_ADTW);
    p.warp_penalty = 0.5;
    const double a3[3] = {0, 1, 2}, b4[4] = {0, 1, 1, 2};
    CHECK_NEAR(DIST(&p, 1, a3, 3, b4, 4), 0.5, TOL64);
    CHECK_NEAR(DIST(&p, 1, b4, 4, a3, 3), 0.5, TOL64);
    /* ERP, g = 0: [1, 100] vs [100] deletes 1 (|1 - 0|) and matches 100 with 100; the
     * boundary holds the cumulative gap cost 1 after the first point (aeon 1.6: 101). */
    tsw_params_default(&p, TSW_ERP);
    const double e1[2] = {1, 100}, e2[1] = {100};
    CHECK_NEAR(DIST(&p, 1, e1, 2, e2, 1), 1.0, TOL64);
    CHECK_NEAR(DIST(&p, 1, e2, 1, e1, 2), 1.0, TOL64);
    CHECK_NEAR(DIST32(&p, 1, e1, 2, e2, 1), 1.0, TOL32);
    /* EDR and LCSS, epsilon 0.5: three of four points match. */
    const double q1[4] = {0, 1, 2, 3}, q2[4] = {0, 1, 2, 9};
    tsw_params_default(&p, TSW_EDR);
    p.epsilon = 0.5;
    CHECK_NEAR(DIST(&p, 1, q1, 4, q2, 4), 0.25, TOL64);
    tsw_params_default(&p, TSW_LCSS);
    p.epsilon = 0.5;
    CHECK_NEAR(DIST(&p, 1, q1, 4, q2, 4), 0.25, TOL64);
    CHECK_NEAR(DIST32(&p, 1, q1, 4, q2, 4), 0.25, TOL32);
    /* EDR's leading gaps cost 1 each: [5, 0, 1, 2] vs [0, 1, 2] is one deletion of four. */
    tsw_params_default(&p, TSW_EDR);
    p.epsilon = 0.5;
    const double r1[4] = {5, 0, 1, 2}, r2[3] = {0, 1, 2};
    CHECK_NEAR(DIST(&p, 1, r1, 4, r2, 3), 0.25, TOL64);
    /* MSM: [1, 2, 3] vs [1, 2, 2, 3] splits the 2 once: c, in both forms. */
    tsw_params_default(&p, TSW_MSM);
    const double m1[3] = {1, 2, 3}, m2[4] = {1, 2, 2, 3};
    CHECK_NEAR(DIST(&p, 1, m1, 3, m2, 4), 1.0, TOL64);
    p.c = 0.25;
    CHECK_NEAR(DIST(&p, 1, m1, 3, m2, 4), 0.25, TOL64);
    p.msm_independent = 0;
    CHECK_NEAR(DIST(&p, 1, m1, 3, m2, 4), 0.25, TOL64);
    /* MSM of [0] vs [3]: one move, |0 - 3| (dependent: its square). */
    const double z1[1] = {0}, z3[1] = {3};
    CHECK_NEAR(DIST(&p, 1, z1, 1, z3, 1), 9.0, TOL64);
    p.msm_independent = 1;
    CHECK_NEAR(DIST(&p, 1, z1, 1, z3, 1), 3.0, TOL64);
    /* DDTW: [0, 0, 0] and [0, 1, 2] have the derivatives [0] and [(1 + 2/2) / 2] = [1]. */
    tsw_params_default(&p, TSW_DDTW);
    const double d1[3] = {0, 0, 0}, d2[3] = {0, 1, 2};
    CHECK_NEAR(DIST(&p, 1, d1, 3, d2, 3), 1.0, TOL64);
    p.accumulated = 1;
    CHECK_NEAR(DIST(&p, 1, d1, 3, d2, 3), 1.0, TOL64);
    /* WDDTW, g = 0: the same one cell weighed 1/2. */
    tsw_params_default(&p, TSW_WDDTW);
    p.g = 0;
    CHECK_NEAR(DIST(&p, 1, d1, 3, d2, 3), 0.5, TOL64);
}

static void test_soft_dtw_by_hand(void)
{
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    /* One point each: R11 = c + softmin(0, inf, inf) = c, the squared distance:
     * (1,2) vs (4,6): 9 + 16 = 25, for any gamma. */
    const double x[2] = {1, 2}, y[2] = {4, 6};
    const double gammas[4] = {1e-4, 0.1, 1.0, 10.0};
    for (int k = 0; k < 4; ++k) {
        p.gamma = gammas[k];
        p.normalize = 0;
        CHECK_NEAR(DIST(&p, 2, x, 1, y, 1), 25.0, TOL64);
        CHECK_NEAR(DIST32(&p, 2, x, 1, y, 1), 25.0, TOL32);
        /* divergence: sdtw(x,x) = sdtw(y,y) = 0 for one point, so still 25 */
        p.normalize = 1;
        CHECK_NEAR(DIST(&p, 2, x, 1, y, 1), 25.0, TOL64);
    }

    /* a = b = [0, 1]: costs [[0, 1], [1, 0]]; R11 = 0, R12 = R21 = 1 + 0 = 1,
     * R22 = 0 + softmin_gamma(0, 1, 1) = -gamma log(1 + 2 exp(-1/gamma)). */
    const double a[2] = {0, 1};
    p.normalize = 0;
    p.gamma = 1.0;
    CHECK_NEAR(DIST(&p, 1, a, 2, a, 2), -log(1 + 2 / exp(1.0)), TOL64);
    CHECK_NEAR(DIST32(&p, 1, a, 2, a, 2), -log(1 + 2 / exp(1.0)), TOL32);
    p.gamma = 0.5;
    CHECK_NEAR(DIST(&p, 1, a, 2, a, 2), -0.5 * log(1 + 2 * exp(-2.0)), TOL64);
    /* the divergence of a series with itself is 0 */
    p.normalize = 1;
    CHECK_NEAR(DIST(&p, 1, a, 2, a, 2), 0.0, TOL64);
}

/* Soft-DTW is stable for tiny gamma and large values: softmin lies in
 * [min - gamma log 3, min], so DTW_acc - gamma log(3) (n + m) <= sdtw <= DTW_acc. */
static void test_soft_dtw_stability(void)
{
    tsw_t_rng r = {42};
    const int64_t n = 50, m = 37;
    double a[50], b[37];
    random_series(&r, a, n, 1e6);
    random_series(&r, b, m, 1e6);
    tsw_params dtw, sd;
    tsw_params_default(&dtw, TSW_DTW);
    dtw.accumulated = 1;
    double acc = DIST(&dtw, 1, a, n, b, m);
    const double gammas[3] = {1e-4, 1.0, 1e3};
    for (int k = 0; k < 3; ++k) {
        tsw_params_default(&sd, TSW_SOFT_DTW);
        sd.gamma = gammas[k];
        double v = DIST(&sd, 1, a, n, b, m);
        CHECK(isfinite(v));
        CHECK(v <= acc * (1 + 1e-12));
        CHECK(v >= acc * (1 - 1e-12) - gammas[k] * log(3.0) * (double)(n + m));
        double v32 = DIST32(&sd, 1, a, n, b, m);
        CHECK(isfinite(v32));
        CHECK_NEAR(v32, v, 1e-4);
    }
}

/* Extreme gamma against values: tiny gamma with ordinary values, ordinary gamma with values
 * near 1e140 (the exponents -R / gamma of the AVX2 kernels' linear domain pass 1e299 there:
 * those pairs run in the log domain). The value stays finite, within soft-DTW's bounds
 * [acc - gamma ln 3 (n + m), acc], and equal to the reference. */
static void test_soft_dtw_extreme(void)
{
    tsw_t_rng r = {7};
    const int64_t n = 40, m = 33;
    double a0[40], b0[33], a[40], b[33];
    random_series(&r, a0, n, 1.0);
    random_series(&r, b0, m, 1.0);
    const double cases[][2] = {{1e-300, 1}, {DBL_MIN, 1}, {1e-20, 1e140}, {1, 1e140},
                               {1e-100, 1e100}, {1e300, 1}, {1e-300, 1e-100}};
    tsw_exec ref;
    tsw_exec_default(&ref);
    ref.impl = TSW_IMPL_REFERENCE;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
        for (int64_t k = 0; k < n; ++k)
            a[k] = a0[k] * cases[c][1];
        for (int64_t k = 0; k < m; ++k)
            b[k] = b0[k] * cases[c][1];
        tsw_params dtw, sd;
        tsw_params_default(&dtw, TSW_DTW);
        dtw.accumulated = 1;
        const double acc = DIST(&dtw, 1, a, n, b, m);
        tsw_params_default(&sd, TSW_SOFT_DTW);
        sd.gamma = cases[c][0];
        const double v = DIST(&sd, 1, a, n, b, m);
        const double vr = dist_at(__FILE__, __LINE__, &sd, 1, a, NULL, n, b, NULL, m, &ref);
        const double lo = acc - sd.gamma * log(3.0) * (double)(n + m);
        if (!CHECK(isfinite(v) && v <= acc * (1 + 1e-12) && v >= lo - fabs(lo) * 1e-12))
            printf("  gamma %g scale %g: %.17g, acc %.17g\n", cases[c][0], cases[c][1], v, acc);
        CHECK_NEAR(v, vr, 1e-9);
        /* the self pair and the divergence too */
        CHECK(isfinite(DIST(&sd, 1, a, n, a, n)));
        sd.normalize = 1;
        CHECK(isfinite(DIST(&sd, 1, a, n, b, m)));
    }
    /* float32: gamma down to FLT_MIN */
    for (int64_t k = 0; k < n; ++k)
        a[k] = a0[k];
    for (int64_t k = 0; k < m; ++k)
        b[k] = b0[k];
    tsw_params sd;
    tsw_params_default(&sd, TSW_SOFT_DTW);
    const double g32[] = {FLT_MIN, 1e-30, 1e-20};
    for (size_t c = 0; c < 3; ++c) {
        sd.gamma = g32[c];
        CHECK_NEAR(DIST32(&sd, 1, a, n, b, m), DIST(&sd, 1, a, n, b, m), 1e-5);
    }
}

/* Itakura with a huge max_slope (found by tests/fuzz/fuzz_api: the band's row ends near
 * 1e138 were converted to int64, undefined behaviour): fast kernels equal the reference. */
static void test_itakura_huge_slope(void)
{
    tsw_t_rng r = {11};
    double a[17], b[13];
    random_series(&r, a, 17, 1.0);
    random_series(&r, b, 13, 1.0);
    tsw_exec ref;
    tsw_exec_default(&ref);
    ref.impl = TSW_IMPL_REFERENCE;
    const double slopes[] = {1e10, 1e140, 1.7e308};
    for (int k = 0; k < 3; ++k)
        for (int mi = 0; mi < 3; ++mi) {
            tsw_params p;
            tsw_params_default(&p, MEASURES[mi]);
            p.window = TSW_WINDOW_ITAKURA;
            p.itakura_max_slope = slopes[k];
            const double v = DIST(&p, 1, a, 17, b, 13);
            const double w = dist_at(__FILE__, __LINE__, &p, 1, a, NULL, 17, b, NULL, 13, &ref);
            CHECK(!isnan(v));
            CHECK_NEAR(v, w, 1e-9);
        }
}

/* Issue 36 item 8: the cosine cost is scale invariant over the type's whole range (unit
 * vectors first, src/cosine.c): points near 1e200 gave NaN, points near 1e-170 cost 0. */
static void test_cosine_scale_invariant(void)
{
    tsw_t_rng r = {13};
    const int64_t n = 9, m = 7, dim = 3;
    double a[27], b[21], as[27], bs[21];
    random_series(&r, a, n * dim, 1.0);
    random_series(&r, b, m * dim, 1.0);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    p.cost = TSW_COST_COSINE;
    const double base = DIST(&p, dim, a, n, b, m);
    CHECK(base > 0);
    const double scales[][2] = {{1e200, 1e-200}, {1e300, 1}, {1e-170, 1e-170}, {1e154, 1e154}};
    for (int k = 0; k < 4; ++k) {
        for (int q = 0; q < n * dim; ++q)
            as[q] = a[q] * scales[k][0];
        for (int q = 0; q < m * dim; ++q)
            bs[q] = b[q] * scales[k][1];
        const double v = DIST(&p, dim, as, n, bs, m);
        if (!CHECK(fabs(v - base) <= 1e-12 * base))
            printf("  scales %g %g: %.17g vs %.17g\n", scales[k][0], scales[k][1], v, base);
        tsw_collection cx = {as, NULL, NULL, n, 1, NULL}, cy = {bs, NULL, NULL, m, 1, NULL};
        double out = 0;
        CHECK_RC(tsw_cdist(&p, TSW_F64, dim, &cx, &cy, &out, NULL), TSW_OK);
        CHECK(fabs(out - base) <= 1e-12 * base);
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.cost = TSW_COST_COSINE;
        int64_t path[2 * 16], len = 0;
        double c = 0;
        tsw_series sa = {as, n, NULL}, sb = {bs, m, NULL};
        CHECK_RC(tsw_dtw_path(&ap, TSW_F64, dim, &sa, &sb, path, 16, &len, &c, NULL), TSW_OK);
        CHECK(fabs(c - base) <= 1e-12 * base);
    }
    /* float32: 1e19 (squares overflow float) and 1e-25 (squares underflow) */
    for (int q = 0; q < n * dim; ++q)
        as[q] = a[q] * 1e19;
    for (int q = 0; q < m * dim; ++q)
        bs[q] = b[q] * 1e-25;
    CHECK_NEAR(DIST32(&p, dim, as, n, bs, m), base, 1e-5);
}

/* TWED's Lp distance at extreme p: no overflow (p = 700, d = 3) nor underflow (p = 100,
 * d = 1e-5); one component gives |d| for every p. */
static void test_twed_extreme_p(void)
{
    tsw_params p;
    tsw_params_default(&p, TSW_TWED);
    p.nu = 0;
    p.lmbda = 0;
    const double a1[2] = {0, 3}, b1[2] = {0, 0}, a2[2] = {0, 1e-5};
    const double ps[] = {1, 2, 3.5, 100, 700, 1e6};
    p.p = 1;
    const double ref3 = DIST(&p, 1, a1, 2, b1, 2), ref5 = DIST(&p, 1, a2, 2, b1, 2);
    CHECK(ref3 > 0 && ref5 > 0);
    for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); ++k) {
        p.p = ps[k];
        CHECK_NEAR(DIST(&p, 1, a1, 2, b1, 2), ref3, 1e-12);
        CHECK_NEAR(DIST(&p, 1, a2, 2, b1, 2), ref5, 1e-12);
        CHECK_NEAR(DIST32(&p, 1, a1, 2, b1, 2), ref3, 1e-6);
    }
    /* two components (3, 4): |d|_p falls from 5 (p = 2) towards 4 */
    const double x[4] = {0, 0, 3, 4}, z[4] = {0, 0, 0, 0};
    double prev = 5.0 + 1e-12;
    for (size_t k = 1; k < sizeof(ps) / sizeof(ps[0]); ++k) {
        p.p = ps[k];
        const double v = DIST(&p, 2, x, 2, z, 2);
        if (!CHECK(isfinite(v) && v >= 4 * (1 - 1e-12) && v <= prev))
            printf("  p %g: %.17g\n", ps[k], v);
        prev = v + 1e-12;
    }
}

/* ---- random inputs against the brute force ---------------------------------------------- */

static void test_against_brute(void)
{
    tsw_t_rng r = {7};
    const int iters = tsw_t_quick() ? 40 : 300;
    for (int it = 0; it < iters; ++it) {
        int64_t n = tsw_t_int(&r, 1, 40), m = tsw_t_int(&r, 1, 40), dim = tsw_t_int(&r, 1, 4);
        double *a = malloc(sizeof(double) * (size_t)(n * dim)),
               *b = malloc(sizeof(double) * (size_t)(m * dim));
        double *ta = malloc(sizeof(double) * (size_t)n),
               *tb = malloc(sizeof(double) * (size_t)m);
        random_series(&r, a, n * dim, 2.0);
        random_series(&r, b, m * dim, 2.0);
        random_times(&r, ta, n);
        random_times(&r, tb, m);
        tsw_params p;
        tsw_params_default(&p, MEASURES[it % 3]);
        switch (tsw_t_int(&r, 0, 2)) {
        case 1:
            p.window = TSW_WINDOW_SAKOE_CHIBA;
            p.window_radius = (double)tsw_t_int(&r, 0, 6);
            break;
        case 2:
            p.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
            p.window_radius = tsw_t_uniform(&r, 0, 1);
            break;
        default:
            break;
        }
        int timed = 0;
        if (p.measure == TSW_DTW) {
            p.cost = (tsw_cost)tsw_t_int(&r, 0, 3);
            p.accumulated = (int)tsw_t_int(&r, 0, 1);
        } else if (p.measure == TSW_TWED) {
            p.nu = tsw_t_uniform(&r, 0, 1);
            p.lmbda = tsw_t_uniform(&r, 0, 2);
            const double ps[3] = {1, 2, 2.5};
            p.p = ps[tsw_t_int(&r, 0, 2)];
            timed = (int)tsw_t_int(&r, 0, 1);
        } else {
            p.gamma = tsw_t_uniform(&r, 0.01, 2);
            p.normalize = (int)tsw_t_int(&r, 0, 1);
        }
        const double *tta = timed ? ta : NULL, *ttb = timed ? tb : NULL;
        double want = brute(&p, dim, a, tta, n, b, ttb, m);
        double got = dist_at(__FILE__, __LINE__, &p, dim, a, tta, n, b, ttb, m, NULL);
        if (!CHECK_NEAR(got, want, 1e-10))
            TSW_T_NOTE("  measure %d window %d radius %g n %lld m %lld dim %lld\n",
                       (int)p.measure, (int)p.window, p.window_radius, (long long)n,
                       (long long)m, (long long)dim);
        /* symmetry (timestamps travel with their series) */
        CHECK_NEAR(dist_at(__FILE__, __LINE__, &p, dim, b, ttb, m, a, tta, n, NULL), got,
                   1e-10);
        /* float32 agrees with float64 */
        double got32 = dist32_at(__FILE__, __LINE__, &p, dim, a, tta, n, b, ttb, m);
        CHECK_NEAR(got32, got, p.measure == TSW_SOFT_DTW ? 1e-4 : TOL32);
        free(a);
        free(b);
        free(ta);
        free(tb);
    }
}

/* d(x, x) = 0 for DTW (every cost, every window) and TWED (any timestamps). */
static void test_identity(void)
{
    tsw_t_rng r = {11};
    for (int it = 0; it < 50; ++it) {
        int64_t n = tsw_t_int(&r, 1, 60), dim = tsw_t_int(&r, 1, 3);
        double *a = malloc(sizeof(double) * (size_t)(n * dim)),
               *ta = malloc(sizeof(double) * (size_t)n);
        random_series(&r, a, n * dim, 3.0);
        random_times(&r, ta, n);
        tsw_params p;
        tsw_params_default(&p, TSW_DTW);
        p.cost = (tsw_cost)(it % 4);
        p.window = (tsw_window)(it % 4);
        p.window_radius = p.window == TSW_WINDOW_SAKOE_CHIBA ? 2 : 0.1;
        CHECK_NEAR(DIST(&p, dim, a, n, a, n), 0.0, 1e-12);
        CHECK_NEAR(DIST32(&p, dim, a, n, a, n), 0.0, 1e-6 * (double)n); /* cosine rounds */
        tsw_params_default(&p, TSW_TWED);
        p.window = (tsw_window)(it % 4);
        p.window_radius = p.window == TSW_WINDOW_SAKOE_CHIBA ? 2 : 0.1;
        CHECK(DIST(&p, dim, a, n, a, n) == 0.0);
        CHECK(DIST_T(&p, dim, a, ta, n, a, ta, n) == 0.0);
        free(a);
        free(ta);
    }
}

/* Widening a Sakoe-Chiba band never increases DTW or TWED (more paths to choose from). */
static void test_window_monotone(void)
{
    tsw_t_rng r = {23};
    for (int it = 0; it < 20; ++it) {
        int64_t n = tsw_t_int(&r, 5, 50), m = tsw_t_int(&r, 5, 50);
        double a[50], b[50];
        random_series(&r, a, n, 1.0);
        random_series(&r, b, m, 1.0);
        tsw_params p;
        tsw_params_default(&p, it % 2 ? TSW_TWED : TSW_DTW);
        p.window = TSW_WINDOW_SAKOE_CHIBA;
        double prev = INFINITY;
        for (int rad = 0; rad <= 50; rad += 5) {
            p.window_radius = rad;
            double v = DIST(&p, 1, a, n, b, m);
            CHECK(v <= prev);
            prev = v;
        }
        p.window = TSW_WINDOW_NONE;
        CHECK(DIST(&p, 1, a, n, b, m) == prev); /* radius 50 covers everything */
    }
}

/* ---- batches ------------------------------------------------------------------------------
 */

/* A ragged collection: count series of random lengths in [1, max_len], stored in a shuffled
 * order with gaps between them, with strictly increasing times per series. */
typedef struct {
    tsw_collection c;
    double *v64, *t64;
    float *v32, *t32;
    int64_t *off, *len;
    int64_t dim;
} ragged;

static void ragged_make(ragged *g, tsw_t_rng *r, int64_t count, int64_t max_len, int64_t dim,
                        int equal)
{
    g->dim = dim;
    g->off = malloc(sizeof(int64_t) * (size_t)count);
    g->len = malloc(sizeof(int64_t) * (size_t)count);
    int64_t *order = malloc(sizeof(int64_t) * (size_t)count);
    int64_t rows = 0;
    int64_t common = tsw_t_int(r, 1, max_len);
    for (int64_t i = 0; i < count; ++i) {
        g->len[i] = equal ? common : tsw_t_int(r, 1, max_len);
        order[i] = i;
    }
    for (int64_t i = count - 1; i > 0; --i) { /* Fisher-Yates */
        int64_t j = tsw_t_int(r, 0, i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int64_t k = 0; k < count; ++k) {
        int64_t i = order[k];
        rows += tsw_t_int(r, 0, 2); /* a gap */
        g->off[i] = rows;
        rows += g->len[i];
    }
    g->v64 = malloc(sizeof(double) * (size_t)(rows * dim));
    g->t64 = malloc(sizeof(double) * (size_t)rows);
    g->v32 = malloc(sizeof(float) * (size_t)(rows * dim));
    g->t32 = malloc(sizeof(float) * (size_t)rows);
    random_series(r, g->v64, rows * dim, 1.5);
    for (int64_t k = 0; k < rows; ++k)
        g->t64[k] = NAN; /* gaps: never read */
    for (int64_t i = 0; i < count; ++i)
        random_times(r, g->t64 + g->off[i], g->len[i]);
    for (int64_t k = 0; k < rows * dim; ++k)
        g->v32[k] = (float)g->v64[k];
    for (int64_t k = 0; k < rows; ++k)
        g->t32[k] = (float)g->t64[k];
    memset(&g->c, 0, sizeof(g->c));
    g->c.values = g->v64;
    g->c.offsets = g->off;
    g->c.lengths = g->len;
    g->c.count = count;
    g->c.times = g->t64;
    free(order);
}

static void ragged_free(ragged *g)
{
    free(g->v64);
    free(g->t64);
    free(g->v32);
    free(g->t32);
    free(g->off);
    free(g->len);
}

static tsw_collection ragged_view(const ragged *g, tsw_dtype dt, int timed)
{
    tsw_collection c = g->c;
    c.values = dt == TSW_F32 ? (const void *)g->v32 : (const void *)g->v64;
    c.times = !timed ? NULL : dt == TSW_F32 ? (const void *)g->t32 : (const void *)g->t64;
    return c;
}

/* tsw_distance of series i of x and j of y, through the series API. */
static double pair_value(const tsw_params *p, tsw_dtype dt, const ragged *x, int64_t i,
                         const ragged *y, int64_t j, int timed)
{
    size_t esz = dt == TSW_F32 ? 4 : 8;
    const char *xv = dt == TSW_F32 ? (const char *)x->v32 : (const char *)x->v64;
    const char *yv = dt == TSW_F32 ? (const char *)y->v32 : (const char *)y->v64;
    const char *xt = dt == TSW_F32 ? (const char *)x->t32 : (const char *)x->t64;
    const char *yt = dt == TSW_F32 ? (const char *)y->t32 : (const char *)y->t64;
    tsw_series a = {xv + (size_t)(x->off[i] * x->dim) * esz, x->len[i],
                    timed ? xt + (size_t)x->off[i] * esz : NULL};
    tsw_series b = {yv + (size_t)(y->off[j] * y->dim) * esz, y->len[j],
                    timed ? yt + (size_t)y->off[j] * esz : NULL};
    double out = NAN;
    CHECK_RC(tsw_distance(p, dt, x->dim, &a, &b, &out, NULL), TSW_OK);
    return out;
}

static double out_at(const void *out, tsw_dtype dt, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)out)[k] : ((const double *)out)[k];
}

static void random_params(tsw_t_rng *r, tsw_params *p, tsw_measure measure)
{
    tsw_params_default(p, measure);
    int w = (int)tsw_t_int(r, 0, 3);
    p->window = (tsw_window)w;
    p->window_radius =
        w == TSW_WINDOW_SAKOE_CHIBA ? (double)tsw_t_int(r, 0, 5) : tsw_t_uniform(r, 0, 1);
    p->itakura_max_slope = tsw_t_uniform(r, 1, 4);
    if (measure == TSW_DTW)
        p->cost = (tsw_cost)tsw_t_int(r, 0, 3);
    else if (measure == TSW_SOFT_DTW) {
        p->gamma = tsw_t_uniform(r, 0.05, 2);
        p->normalize = (int)tsw_t_int(r, 0, 1);
    } else {
        p->nu = tsw_t_uniform(r, 0, 0.5);
        p->lmbda = tsw_t_uniform(r, 0, 2);
    }
}

/* cdist against a loop of tsw_distance; pdist full vs condensed vs cdist(X, X). */
static void test_batches(void)
{
    tsw_t_rng r = {99};
    const int iters = tsw_t_quick() ? 12 : 48;
    for (int it = 0; it < iters; ++it) {
        tsw_measure measure = MEASURES[it % 3];
        tsw_dtype dt = (it / 3) % 2 ? TSW_F32 : TSW_F64;
        double tol = dt == TSW_F32 ? (measure == TSW_SOFT_DTW ? 1e-4 : TOL32) : 1e-10;
        int equal = (it / 6) % 2; /* equal lengths exercise the SIMD-lane path */
        int64_t dim = tsw_t_int(&r, 1, 3);
        int64_t nx = tsw_t_int(&r, 1, 20), ny = tsw_t_int(&r, 1, 70);
        ragged x, y;
        ragged_make(&x, &r, nx, 30, dim, equal);
        ragged_make(&y, &r, ny, 30, dim, equal);
        tsw_params p;
        random_params(&r, &p, measure);
        int timed = measure == TSW_TWED && tsw_t_int(&r, 0, 1);
        tsw_collection cx = ragged_view(&x, dt, timed), cy = ragged_view(&y, dt, timed);
        size_t esz = dt == TSW_F32 ? 4 : 8;

        /* cdist == loop of tsw_distance */
        void *out = malloc(esz * (size_t)(nx * ny));
        CHECK_RC(tsw_cdist(&p, dt, dim, &cx, &cy, out, NULL), TSW_OK);
        int bad = 0;
        for (int64_t i = 0; i < nx; ++i)
            for (int64_t j = 0; j < ny; ++j)
                bad += !CHECK_NEAR(out_at(out, dt, i * ny + j),
                                   pair_value(&p, dt, &x, i, &y, j, timed), tol);
        if (bad)
            TSW_T_NOTE("  cdist: measure %d dtype %d window %d timed %d\n", (int)measure,
                       (int)dt, (int)p.window, timed);

        /* paired: (x_k, y_k) for k < min(nx, ny) == the loop of tsw_distance */
        {
            int64_t np = nx < ny ? nx : ny;
            tsw_collection px = cx, py = cy;
            px.count = py.count = np;
            void *po = malloc(esz * (size_t)np);
            CHECK_RC(tsw_paired(&p, dt, dim, &px, &py, po, NULL), TSW_OK);
            for (int64_t k2 = 0; k2 < np; ++k2)
                bad += !CHECK_NEAR(out_at(po, dt, k2), pair_value(&p, dt, &x, k2, &y, k2, timed),
                                   tol);
            if (np > 1) {
                px.count = np - 1; /* counts must agree */
                CHECK_RC(tsw_paired(&p, dt, dim, &px, &py, po, NULL), TSW_ESHAPE);
            }
            free(po);
        }

        /* pdist: full (symmetric, each pair once), condensed, cdist(X, X), the diagonal.
         * pdist mirrors d(x_i, x_j), i < j, as tslearn's cdist_dtw(X) does: compare with
         * the upper triangle of cdist(X, X), since tslearn's Itakura mask for (n, m) is
         * not the transpose of the one for (m, n), so d(a, b) != d(b, a) there. */
        void *full = malloc(esz * (size_t)(ny * ny));
        void *cond = malloc(esz * (size_t)(ny * ny)); /* >= condensed size, >= 1 element */
        void *self = malloc(esz * (size_t)(ny * ny));
        CHECK_RC(tsw_pdist(&p, dt, dim, &cy, TSW_PDIST_FULL, full, NULL), TSW_OK);
        CHECK_RC(tsw_pdist(&p, dt, dim, &cy, TSW_PDIST_CONDENSED, cond, NULL), TSW_OK);
        CHECK_RC(tsw_cdist(&p, dt, dim, &cy, &cy, self, NULL), TSW_OK);
        int64_t k = 0;
        bad = 0;
        for (int64_t i = 0; i < ny; ++i) {
            for (int64_t j = 0; j < ny; ++j) {
                double f = out_at(full, dt, i * ny + j);
                bad += !CHECK(f == out_at(full, dt, j * ny + i));
                int64_t lo = i < j ? i : j, hi = i < j ? j : i;
                bad += !CHECK_NEAR(f, out_at(self, dt, lo * ny + hi), tol);
                if (p.window != TSW_WINDOW_ITAKURA)
                    bad += !CHECK_NEAR(out_at(self, dt, j * ny + i),
                                       out_at(self, dt, i * ny + j), tol);
                if (j > i)
                    bad += !CHECK(out_at(cond, dt, k++) == f);
            }
            double diag = out_at(full, dt, i * ny + i);
            if (measure == TSW_SOFT_DTW && !p.normalize)
                bad += !CHECK_NEAR(diag, pair_value(&p, dt, &y, i, &y, i, timed), tol);
            else if (measure == TSW_SOFT_DTW || measure == TSW_TWED ||
                     p.cost != TSW_COST_COSINE)
                bad += !CHECK(diag == 0.0); /* exactly: divergence, TWED, DTW */
            else
                bad += !CHECK_NEAR(diag, 0.0, tol);
        }
        CHECK_EQ(k, tsw_pdist_size(ny, TSW_PDIST_CONDENSED));
        if (bad)
            TSW_T_NOTE("  pdist: measure %d dtype %d window %d timed %d\n", (int)measure,
                       (int)dt, (int)p.window, timed);
        free(out);
        free(full);
        free(cond);
        free(self);
        ragged_free(&x);
        ragged_free(&y);
    }
}

/* Equal-length collections without offsets or lengths (the 3-D array layout), and the
 * implementations and thread counts: REFERENCE ~ SCALAR ~ AUTO, 1 thread == 2 threads. */
static void test_impls_and_threads(void)
{
    tsw_t_rng r = {5};
    const int64_t n = tsw_t_quick() ? 9 : 24, len = tsw_t_quick() ? 16 : 32, dim = 2;
    double *v64 = malloc(sizeof(double) * (size_t)(n * len * dim));
    float *v32 = malloc(sizeof(float) * (size_t)(n * len * dim));
    random_series(&r, v64, n * len * dim, 1.0);
    for (int64_t k = 0; k < n * len * dim; ++k)
        v32[k] = (float)v64[k];
    for (int it = 0; it < 12; ++it) {
        tsw_dtype dt = it % 2 ? TSW_F32 : TSW_F64;
        size_t esz = dt == TSW_F32 ? 4 : 8;
        tsw_collection c = {
            dt == TSW_F32 ? (const void *)v32 : (const void *)v64, NULL, NULL, len, n, NULL};
        tsw_params p;
        random_params(&r, &p, MEASURES[(it / 2) % 3]);
        double tol = dt == TSW_F32 ? 1e-4 : 1e-10;
        void *ref = malloc(esz * (size_t)(n * n)), *out = malloc(esz * (size_t)(n * n));
        void *one = malloc(esz * (size_t)(n * n)), *two = malloc(esz * (size_t)(n * n));
        tsw_exec e;
        tsw_exec_default(&e);
        e.impl = TSW_IMPL_REFERENCE;
        CHECK_RC(tsw_cdist(&p, dt, dim, &c, &c, ref, &e), TSW_OK);
        const tsw_impl impls[2] = {TSW_IMPL_SCALAR, TSW_IMPL_AUTO};
        for (int k = 0; k < 2; ++k) {
            e.impl = impls[k];
            CHECK_RC(tsw_cdist(&p, dt, dim, &c, &c, out, &e), TSW_OK);
            int bad = 0;
            for (int64_t q = 0; q < n * n; ++q)
                bad += !CHECK_NEAR(out_at(out, dt, q), out_at(ref, dt, q), tol);
            if (bad)
                TSW_T_NOTE("  impl %d measure %d dtype %d window %d\n", (int)impls[k],
                           (int)p.measure, (int)dt, (int)p.window);
        }
        /* the thread count changes the schedule, never a value */
        for (int layout = 0; layout < 3; ++layout) {
            tsw_exec_default(&e);
            e.n_threads = 1;
            memset(one, 0, esz * (size_t)(n * n));
            memset(two, 0, esz * (size_t)(n * n));
            if (layout == 2) {
                CHECK_RC(tsw_cdist(&p, dt, dim, &c, &c, one, &e), TSW_OK);
                e.n_threads = 2;
                CHECK_RC(tsw_cdist(&p, dt, dim, &c, &c, two, &e), TSW_OK);
            } else {
                CHECK_RC(tsw_pdist(&p, dt, dim, &c, (tsw_pdist_layout)layout, one, &e), TSW_OK);
                e.n_threads = 2;
                CHECK_RC(tsw_pdist(&p, dt, dim, &c, (tsw_pdist_layout)layout, two, &e), TSW_OK);
            }
            CHECK(memcmp(one, two, esz * (size_t)(n * n)) == 0);
        }
        /* exec NULL means tsw_exec_default() */
        tsw_exec_default(&e);
        CHECK_RC(tsw_cdist(&p, dt, dim, &c, &c, one, &e), TSW_OK);
        CHECK_RC(tsw_cdist(&p, dt, dim, &c, &c, two, NULL), TSW_OK);
        CHECK(memcmp(one, two, esz * (size_t)(n * n)) == 0);
        free(ref);
        free(out);
        free(one);
        free(two);
    }
    free(v64);
    free(v32);
}

/* A collection of one series: pdist full is its diagonal, condensed writes nothing. */
static void test_single_series(void)
{
    const double v[4] = {0, 1, 3, 2};
    tsw_collection c = {v, NULL, NULL, 4, 1, NULL};
    tsw_series s = {v, 4, NULL};
    for (int mi = 0; mi < 3; ++mi) {
        tsw_params p;
        tsw_params_default(&p, MEASURES[mi]);
        double self_value;
        CHECK_RC(tsw_distance(&p, TSW_F64, 1, &s, &s, &self_value, NULL), TSW_OK);
        double full = -1, cond = -1, cd = -1;
        CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &c, TSW_PDIST_FULL, &full, NULL), TSW_OK);
        CHECK_NEAR(full, self_value, TOL64);
        CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &c, TSW_PDIST_CONDENSED, &cond, NULL), TSW_OK);
        CHECK(cond == -1); /* zero elements: untouched */
        CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &c, &c, &cd, NULL), TSW_OK);
        CHECK_NEAR(cd, self_value, TOL64);
        if (MEASURES[mi] == TSW_SOFT_DTW)
            CHECK(self_value < 0); /* sdtw(x, x) < 0 for gamma > 0 and n > 1 */
    }
}

int main(void)
{
    test_soft_dtw_extreme();
    test_twed_extreme_p();
    test_itakura_huge_slope();
    test_cosine_scale_invariant();
    test_dtw_by_hand();
    test_itakura_infeasible();
    test_twed_by_hand();
    test_family_by_hand();
    test_soft_dtw_by_hand();
    test_soft_dtw_stability();
    test_against_brute();
    test_identity();
    test_window_monotone();
    test_batches();
    test_impls_and_threads();
    test_single_series();
    return TSW_TEST_END();
}
