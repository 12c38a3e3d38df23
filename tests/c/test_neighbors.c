/*
 * Nearest neighbours through the C API: tsw_knn against tsw_cdist (reference) and a stable
 * sort, tsw_lower_bound against tsw_distance, tsw_search against a plain loop over every
 * window, tsw_envelope, and the status codes of bad arguments. Fixed seeds (printed).
 */
#include "harness.h"

static uint64_t rng_state = 20261127;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0 - 0.5;
}

static void walk(double *x, int64_t n)
{
    double v = 0;
    for (int64_t i = 0; i < n; ++i)
        x[i] = v += urand();
}

static void test_knn(void)
{
    enum { NQ = 5, NX = 120, L = 40, K = 4 };
    static double q[NQ * L], x[NX * L], D[NQ * NX], dist[NQ * K];
    int64_t idx[NQ * K];
    walk(q, NQ * L);
    walk(x, NX * L);
    memcpy(x + 70 * L, x + 11 * L, L * sizeof(double)); /* a tie: index 11 first */
    memcpy(q + 2 * L, x + 11 * L, L * sizeof(double));
    tsw_collection cq = {q, NULL, NULL, L, NQ, NULL}, cx = {x, NULL, NULL, L, NX, NULL};
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    p.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    p.window_radius = 0.1;
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CPU;
    ex.impl = TSW_IMPL_REFERENCE;
    CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &cq, &cx, D, &ex), TSW_OK);
    ex.impl = TSW_IMPL_AUTO;
    CHECK_RC(tsw_knn(&p, TSW_F64, 1, &cq, &cx, K, dist, idx, &ex), TSW_OK);
    for (int i = 0; i < NQ; ++i) {
        /* the stable order of row i: repeatedly the smallest (value, index) not taken */
        int taken[NX] = {0};
        for (int r = 0; r < K; ++r) {
            int best = -1;
            for (int j = 0; j < NX; ++j)
                if (!taken[j] && (best < 0 || D[i * NX + j] < D[i * NX + best]))
                    best = j;
            taken[best] = 1;
            CHECK_EQ(idx[i * K + r], best);
            CHECK(dist[i * K + r] == D[i * NX + best]);
        }
    }
    CHECK_EQ(idx[2 * K], 11);
    CHECK_EQ(idx[2 * K + 1], 70);
    /* bad arguments */
    CHECK_RC(tsw_knn(&p, TSW_F64, 1, &cq, &cx, 0, dist, idx, &ex), TSW_EPARAM);
    CHECK_RC(tsw_knn(&p, TSW_F64, 1, &cq, &cx, NX + 1, dist, idx, &ex), TSW_EPARAM);
    CHECK_RC(tsw_knn(&p, TSW_F64, 1, &cq, &cx, K, dist, NULL, &ex), TSW_EINVAL);
    CHECK_RC(tsw_knn(&p, TSW_F64, 0, &cq, &cx, K, dist, idx, &ex), TSW_ESHAPE);
    x[5] = NAN;
    CHECK_RC(tsw_knn(&p, TSW_F64, 1, &cq, &cx, K, dist, idx, &ex), TSW_ENONFINITE);
    x[5] = 0;
}

static void test_bounds(void)
{
    enum { L = 30, NX = 40 };
    static double q[L], x[NX * L], lb[NX];
    walk(q, L);
    walk(x, NX * L);
    tsw_series sq = {q, L, NULL};
    tsw_collection cx = {x, NULL, NULL, L, NX, NULL};
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 3;
    for (int kind = TSW_LB_KIM; kind <= TSW_LB_WEBB; ++kind) {
        CHECK_RC(tsw_lower_bound(&p, (tsw_lb)kind, 2, TSW_F64, 1, &sq, &cx, lb, NULL), TSW_OK);
        for (int j = 0; j < NX; ++j) {
            tsw_series sb = {x + j * L, L, NULL};
            double d;
            CHECK_RC(tsw_distance(&p, TSW_F64, 1, &sq, &sb, &d, NULL), TSW_OK);
            CHECK(lb[j] <= d * (1 + 1e-12));
            CHECK(lb[j] >= 0);
        }
    }
    CHECK_RC(tsw_lower_bound(&p, TSW_LB_ENHANCED, 0, TSW_F64, 1, &sq, &cx, lb, NULL),
             TSW_EPARAM);
    CHECK_RC(tsw_lower_bound(&p, (tsw_lb)9, 1, TSW_F64, 1, &sq, &cx, lb, NULL), TSW_EPARAM);
    p.cost = TSW_COST_EUCLIDEAN; /* LB_Webb's and LB_Improved's costs: euclidean for dim 1 */
    CHECK_RC(tsw_lower_bound(&p, TSW_LB_WEBB, 1, TSW_F64, 1, &sq, &cx, lb, NULL), TSW_OK);
    tsw_series sq2 = {q, L / 2, NULL};
    tsw_collection cx2 = {x, NULL, NULL, L / 2, NX, NULL};
    CHECK_RC(tsw_lower_bound(&p, TSW_LB_WEBB, 1, TSW_F64, 2, &sq2, &cx2, lb, NULL),
             TSW_ENOTSUP);
    p.cost = TSW_COST_COSINE;
    CHECK_RC(tsw_lower_bound(&p, TSW_LB_KEOGH, 1, TSW_F64, 1, &sq, &cx, lb, NULL), TSW_ENOTSUP);
    tsw_params_default(&p, TSW_TWED);
    CHECK_RC(tsw_lower_bound(&p, TSW_LB_KIM, 1, TSW_F64, 1, &sq, &cx, lb, NULL), TSW_ENOTSUP);
    /* the envelope: sliding min and max of radius 3 */
    tsw_params_default(&p, TSW_DTW);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 3;
    double lo[L], hi[L];
    CHECK_RC(tsw_envelope(&p, TSW_F64, 1, &sq, 0, L, lo, hi), TSW_OK);
    for (int i = 0; i < L; ++i) {
        double mn = HUGE_VAL, mx = -HUGE_VAL;
        for (int t = i - 3; t <= i + 3; ++t)
            if (t >= 0 && t < L) {
                mn = q[t] < mn ? q[t] : mn;
                mx = q[t] > mx ? q[t] : mx;
            }
        CHECK(lo[i] == mn && hi[i] == mx);
    }
}

static void znorm(const double *v, int64_t n, double *out)
{
    double s = 0, ss = 0;
    int constant = 1;
    for (int64_t i = 0; i < n; ++i) {
        s += v[i];
        constant &= v[i] == v[0];
    }
    double m = s / (double)n;
    for (int64_t i = 0; i < n; ++i)
        ss += (v[i] - m) * (v[i] - m);
    double sd = sqrt(ss / (double)n);
    for (int64_t i = 0; i < n; ++i)
        out[i] = constant ? 0 : (v[i] - m) / sd;
}

static void test_search(void)
{
    enum { N = 3000, L = 32 };
    static double s[N], q[L], qz[L], wz[L];
    walk(s, N);
    for (int i = 0; i < L; ++i)
        q[i] = 2 * s[1234 + i] + 7 + 0.01 * urand();
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 2;
    tsw_series sq = {q, L, NULL}, ss = {s, N, NULL};
    int64_t st[3], count = 0;
    double d[3];
    tsw_search_stats stats;
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CPU;
    CHECK_RC(tsw_search(&p, TSW_F64, 1, &sq, &ss, 1, L, 3, st, d, &count, &stats, &ex), TSW_OK);
    CHECK_EQ(count, 3);
    CHECK_EQ(st[0], 1234);
    CHECK_EQ(stats.windows, N - L + 1);
    /* the best window by a plain loop */
    znorm(q, L, qz);
    double best = HUGE_VAL;
    int64_t bi = -1;
    for (int64_t w = 0; w + L <= N; ++w) {
        znorm(s + w, L, wz);
        tsw_series a = {qz, L, NULL}, b = {wz, L, NULL};
        double v;
        tsw_distance(&p, TSW_F64, 1, &a, &b, &v, NULL);
        if (v < best) {
            best = v;
            bi = w;
        }
    }
    CHECK_EQ(st[0], bi);
    CHECK_NEAR(d[0], best, 1e-9);
    for (int i = 1; i < 3; ++i)
        for (int j = 0; j < i; ++j)
            CHECK(st[i] - st[j] >= L || st[j] - st[i] >= L);
    /* bad arguments */
    tsw_series longq = {s, N + 0, NULL}, shorts = {s, L - 1, NULL};
    CHECK_RC(tsw_search(&p, TSW_F64, 1, &longq, &shorts, 1, L, 1, st, d, &count, NULL, &ex),
             TSW_ESHAPE);
    CHECK_RC(tsw_search(&p, TSW_F64, 1, &sq, &ss, 1, 0, 1, st, d, &count, NULL, &ex), TSW_EPARAM);
    CHECK_RC(tsw_search(&p, TSW_F64, 1, &sq, &ss, 1, L, 0, st, d, &count, NULL, &ex), TSW_EPARAM);
    CHECK_RC(tsw_search(&p, TSW_F64, 1, &sq, &ss, 1, L, N, st, d, &count, NULL, &ex), TSW_EPARAM);
    /* tsw_search_device checks its arguments before it touches a device (these pointers are
     * host memory: they must never reach the GPU) */
    CHECK_RC(tsw_search_device(&p, TSW_F64, 1, &longq, &shorts, 1, L, 1, st, d, &count, NULL,
                               &ex),
             TSW_ESHAPE);
    CHECK_RC(tsw_search_device(&p, TSW_F64, 1, &sq, &ss, 1, 0, 1, st, d, &count, NULL, &ex),
             TSW_EPARAM);
    CHECK_RC(tsw_search_device(&p, TSW_F64, 1, &sq, &ss, 1, L, N, st, d, &count, NULL, &ex),
             TSW_EPARAM);
    CHECK_RC(tsw_search_device(&p, TSW_F64, 1, &sq, &ss, 2, L, 1, st, d, &count, NULL, &ex),
             TSW_EINVAL);
    int ndev = 0;
    if (tsw_cuda_device_count(&ndev) != TSW_OK || ndev == 0)
        CHECK_RC(tsw_search_device(&p, TSW_F64, 1, &sq, &ss, 1, L, 1, st, d, &count, NULL, &ex),
                 TSW_ENODEV);
    p.window = TSW_WINDOW_ITAKURA;
    p.itakura_max_slope = 2;
    CHECK_RC(tsw_search(&p, TSW_F64, 1, &sq, &ss, 1, L, 1, st, d, &count, NULL, &ex),
             TSW_ENOTSUP);
    CHECK_RC(tsw_search_device(&p, TSW_F64, 1, &sq, &ss, 1, L, 1, st, d, &count, NULL, &ex),
             TSW_ENOTSUP);
}

int main(void)
{
    printf("seed 20261127 (fixed)\n");
    test_knn();
    test_bounds();
    test_search();
    return TSW_TEST_END();
}
