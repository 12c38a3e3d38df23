/*
 * Alignment paths (tsw_dtw_path, tsw_subsequence_dtw) against a brute-force dynamic program
 * written here from tswarp.h's definition (the whole D matrix and every cell's step, the
 * tie rule "first minimal candidate in the pattern's order"):
 *   - the path equals the brute force's backtrace, cell for cell, and the cost is equal,
 *     for both step patterns, every cost, windows, float and double, integer-valued inputs
 *     (many exact ties) and continuous ones;
 *   - the stored backtrace, the linear-memory recursion (blocks down to 16 cells, so it
 *     recurses deeply), AUTO and 1 or 2 threads all give that same path;
 *   - paths are monotone, made of the pattern's steps, from (0,0) to (n-1,m-1), and the
 *     cost summed along the path (c(0,0) + sum of w_s c) equals the returned cost exactly;
 *   - subsequence DTW equals the brute force over every start column; the best k matches
 *     are non-overlapping, in order of cost, each with a valid path of its cost;
 *   - bad inputs give their status before any work and leave the outputs untouched;
 *     cancellation through the progress callback; allocation failures give TSW_ENOMEM.
 */
#include "harness.h"

#include "common/band.h"

static const int DI[2][3] = {{1, 0, 1}, {1, 1, 2}};
static const int DJ[2][3] = {{1, 1, 0}, {1, 2, 1}};
static const double W[2][3] = {{1, 1, 1}, {2, 3, 3}};

/* ---- brute force ------------------------------------------------------------------------ */

typedef struct {
    int step, cost, subseq;
    int window;
    double radius, slope;
} bf_opts;

static int admissible(const bf_opts *o, int64_t n, int64_t m, int64_t i, int64_t j)
{
    if (o->window == TSW_WINDOW_NONE)
        return 1;
    tsw_band b = tsw_band_make(o->window, o->radius, o->slope, n, m);
    int64_t lo, hi;
    if (b.swap) {
        tsw_band_range(&b, j, &lo, &hi);
        return lo <= i && i < hi;
    }
    tsw_band_range(&b, i, &lo, &hi);
    return lo <= j && j < hi;
}

#define BF_DEFINE(T, SFX, SQRT, FABS, INF)                                                      \
    static T bf_cost_##SFX(int kind, const T *x, const T *y, int64_t dim)                      \
    {                                                                                          \
        T s = 0, xx = 0, yy = 0;                                                               \
        for (int64_t k = 0; k < dim; ++k) {                                                    \
            if (kind == TSW_COST_ABS) {                                                        \
                s += FABS(x[k] - y[k]);                                                        \
            } else if (kind == TSW_COST_COSINE) {                                              \
                s += x[k] * y[k];                                                              \
                xx += x[k] * x[k];                                                             \
                yy += y[k] * y[k];                                                             \
            } else {                                                                           \
                T d = x[k] - y[k];                                                             \
                s += d * d;                                                                    \
            }                                                                                  \
        }                                                                                      \
        if (kind == TSW_COST_EUCLIDEAN)                                                        \
            return SQRT(s);                                                                    \
        if (kind == TSW_COST_COSINE) {                                                         \
            if (xx == 0 && yy == 0)                                                            \
                return 0;                                                                      \
            if (xx == 0 || yy == 0)                                                            \
                return 1;                                                                      \
            return (T)1 - s / (SQRT(xx) * SQRT(yy));                                           \
        }                                                                                      \
        return s;                                                                              \
    }                                                                                          \
    /* D (n*m) and codes; returns D(n-1, m-1). */                                              \
    static void bf_dp_##SFX(const bf_opts *o, const T *a, int64_t n, const T *b, int64_t m,    \
                            int64_t dim, T *D, int *code)                                      \
    {                                                                                          \
        for (int64_t i = 0; i < n; ++i)                                                        \
            for (int64_t j = 0; j < m; ++j) {                                                  \
                T best = INF;                                                                  \
                int cd = 0;                                                                    \
                if (admissible(o, n, m, i, j)) {                                               \
                    T c = bf_cost_##SFX(o->cost, a + i * dim, b + j * dim, dim);               \
                    int start = i == 0 && (o->subseq || j == 0);                               \
                    if (start) {                                                               \
                        best = c;                                                              \
                        cd = 3;                                                                \
                    }                                                                          \
                    for (int s = 0; s < 3; ++s) {                                              \
                        int64_t pi = i - DI[o->step][s], pj = j - DJ[o->step][s];              \
                        T pd = (pi >= 0 && pj >= 0) ? D[pi * m + pj] : INF;                    \
                        T v = pd + (T)W[o->step][s] * c;                                       \
                        if (v < best) {                                                        \
                            best = v;                                                          \
                            cd = s;                                                            \
                        }                                                                      \
                    }                                                                          \
                }                                                                              \
                D[i * m + j] = best;                                                           \
                code[i * m + j] = cd;                                                          \
            }                                                                                  \
    }                                                                                          \
    /* cost of a path recomputed from its cells */                                             \
    static T bf_path_cost_##SFX(const bf_opts *o, const T *a, const T *b, int64_t dim,         \
                                const int64_t *path, int64_t len)                              \
    {                                                                                          \
        T s = bf_cost_##SFX(o->cost, a + path[0] * dim, b + path[1] * dim, dim);               \
        for (int64_t q = 1; q < len; ++q) {                                                    \
            int64_t di = path[2 * q] - path[2 * q - 2], dj = path[2 * q + 1] - path[2 * q - 1]; \
            int st = -1;                                                                       \
            for (int k = 0; k < 3; ++k)                                                        \
                if (DI[o->step][k] == di && DJ[o->step][k] == dj)                              \
                    st = k;                                                                    \
            if (st < 0)                                                                        \
                return -1;                                                                     \
            s = s + (T)W[o->step][st] *                                                        \
                        bf_cost_##SFX(o->cost, a + path[2 * q] * dim, b + path[2 * q + 1] * dim, \
                                      dim);                                                    \
        }                                                                                      \
        return s;                                                                              \
    }
BF_DEFINE(double, f64, sqrt, fabs, INFINITY)
BF_DEFINE(float, f32, sqrtf, fabsf, INFINITY)

/* Backtrace of the brute force from (n-1, ej): reversed into path; returns the length. */
static int64_t bf_trace(const bf_opts *o, const int *code, int64_t m, int64_t ei, int64_t ej,
                        int64_t *path)
{
    int64_t len = 0, i = ei, j = ej;
    int64_t *tmp = malloc(sizeof(int64_t) * 2 * (size_t)(ei + ej + 2));
    for (;;) {
        tmp[2 * len] = i;
        tmp[2 * len + 1] = j;
        len++;
        if (o->subseq && i == 0)
            break;
        int s = code[i * m + j];
        if (s == 3)
            break;
        i -= DI[o->step][s];
        j -= DJ[o->step][s];
        if (i < 0 || j < 0)
            break;
    }
    for (int64_t q = 0; q < len; ++q) {
        path[2 * q] = tmp[2 * (len - 1 - q)];
        path[2 * q + 1] = tmp[2 * (len - 1 - q) + 1];
    }
    free(tmp);
    return len;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static void fill(tsw_t_rng *r, double *v, int64_t count, int integers)
{
    for (int64_t q = 0; q < count; ++q)
        v[q] = integers ? (double)tsw_t_int(r, 0, 3) : tsw_t_uniform(r, -1, 1);
}

static int check_shape(const bf_opts *o, const int64_t *path, int64_t len, int64_t n,
                       int64_t m)
{
    if (len < 1)
        return 0;
    if (!o->subseq && (path[0] != 0 || path[1] != 0))
        return 0;
    if (o->subseq && path[0] != 0)
        return 0;
    if (path[2 * len - 2] != n - 1 || (!o->subseq && path[2 * len - 1] != m - 1))
        return 0;
    for (int64_t q = 1; q < len; ++q) {
        int64_t di = path[2 * q] - path[2 * q - 2], dj = path[2 * q + 1] - path[2 * q - 1];
        int ok = 0;
        for (int k = 0; k < 3; ++k)
            ok |= DI[o->step][k] == di && DJ[o->step][k] == dj;
        if (!ok)
            return 0;
    }
    return 1;
}

static tsw_align_params align_params(const bf_opts *o, tsw_path_method method, size_t limit)
{
    tsw_align_params p;
    tsw_align_params_default(&p);
    p.step = (tsw_step)o->step;
    p.cost = (tsw_cost)o->cost;
    p.window = (tsw_window)o->window;
    p.window_radius = o->radius;
    p.itakura_max_slope = o->slope;
    p.method = method;
    p.memory_limit = limit;
    return p;
}

/* ---- full paths against the brute force --------------------------------------------------- */

/* src/cosine.c's unit vectors, computed the same way (double arithmetic, then the dtype):
 * rows of x (double) into u, or of xf (float) into uf. */
static void unit_rows(const double *x, const float *xf, int64_t rows, int64_t dim, double *u,
                      float *uf)
{
    for (int64_t r = 0; r < rows; ++r) {
        double mx = 0.0, s = 0.0;
        for (int64_t k = 0; k < dim; ++k)
            mx = fmax(mx, fabs(x ? x[r * dim + k] : (double)xf[r * dim + k]));
        for (int64_t k = 0; k < dim; ++k) {
            const double w = mx > 0.0 ? (x ? x[r * dim + k] : (double)xf[r * dim + k]) / mx : 0.0;
            s += w * w;
        }
        const double inv = s > 0.0 ? 1.0 / sqrt(s) : 0.0;
        for (int64_t k = 0; k < dim; ++k) {
            const double v = x ? x[r * dim + k] : (double)xf[r * dim + k];
            const double w = mx > 0.0 ? v / mx * inv : 0.0;
            if (x)
                u[r * dim + k] = w;
            else
                uf[r * dim + k] = (float)w;
        }
    }
}

static void one_case(tsw_t_rng *r, int f32, int step, int cost, int window, int64_t n, int64_t m,
                     int64_t dim, int integers, const char *file, int line)
{
    bf_opts o = {step, cost, 0, window, 0, 2.0};
    if (window == TSW_WINDOW_SAKOE_CHIBA)
        o.radius = (double)tsw_t_int(r, 0, 4);
    else if (window == TSW_WINDOW_SAKOE_CHIBA_FRACTION)
        o.radius = tsw_t_uniform(r, 0, 1);
    else if (window == TSW_WINDOW_ITAKURA)
        o.slope = tsw_t_uniform(r, 1.2, 4);
    double *a = malloc(sizeof(double) * (size_t)(n * dim));
    double *b = malloc(sizeof(double) * (size_t)(m * dim));
    fill(r, a, n * dim, integers);
    fill(r, b, m * dim, integers);
    if (cost == TSW_COST_COSINE && integers) { /* some zero points */
        for (int64_t k = 0; k < dim; ++k)
            a[k] = 0;
        for (int64_t k = 0; k < dim; ++k)
            b[(m / 2) * dim + k] = 0;
    }
    float *af = malloc(sizeof(float) * (size_t)(n * dim)), *bff = malloc(sizeof(float) * (size_t)(m * dim));
    for (int64_t q = 0; q < n * dim; ++q)
        af[q] = (float)a[q];
    for (int64_t q = 0; q < m * dim; ++q)
        bff[q] = (float)b[q];
    const void *va = f32 ? (const void *)af : (const void *)a;
    const void *vb = f32 ? (const void *)bff : (const void *)b;

    /* the cosine cost is defined on unit vectors (src/cosine.c): the brute force reads the
     * points normalised the same way, the library the originals */
    double *ua = malloc(sizeof(double) * (size_t)(n * dim)), *ub = malloc(sizeof(double) * (size_t)(m * dim));
    float *uaf = malloc(sizeof(float) * (size_t)(n * dim)), *ubf = malloc(sizeof(float) * (size_t)(m * dim));
    unit_rows(a, NULL, n, dim, ua, NULL);
    unit_rows(b, NULL, m, dim, ub, NULL);
    unit_rows(NULL, af, n, dim, NULL, uaf);
    unit_rows(NULL, bff, m, dim, NULL, ubf);
    const int cosine = cost == TSW_COST_COSINE;
    const double *ba = cosine ? ua : a, *bb = cosine ? ub : b;
    const float *baf = cosine ? uaf : af, *bbf = cosine ? ubf : bff;
    double *D = malloc(sizeof(double) * (size_t)(n * m));
    float *Df = malloc(sizeof(float) * (size_t)(n * m));
    int *code = malloc(sizeof(int) * (size_t)(n * m));
    double want_cost;
    if (f32) {
        bf_dp_f32(&o, baf, n, bbf, m, dim, Df, code);
        want_cost = Df[n * m - 1];
    } else {
        bf_dp_f64(&o, ba, n, bb, m, dim, D, code);
        want_cost = D[n * m - 1];
    }
    int64_t cap = n + m - 1;
    int64_t *want = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    int64_t *got = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    int64_t want_len = isinf(want_cost) ? 0 : bf_trace(&o, code, m, n - 1, m - 1, want);

    tsw_series sa = {va, n, NULL}, sb = {vb, m, NULL};
    const tsw_path_method methods[] = {TSW_PATH_STORED, TSW_PATH_LINEAR, TSW_PATH_LINEAR,
                                       TSW_PATH_AUTO};
    const size_t limits[] = {0, 4, 1 + (size_t)tsw_t_int(r, 0, 200), 0};
    for (int v = 0; v < 4; ++v) {
        for (int threads = 1; threads <= 2; ++threads) {
            tsw_align_params p = align_params(&o, methods[v], limits[v]);
            tsw_exec e;
            tsw_exec_default(&e);
            e.n_threads = threads;
            int64_t len = -7;
            double c = -7;
            int rc = tsw_dtw_path(&p, f32 ? TSW_F32 : TSW_F64, dim, &sa, &sb, got, cap, &len, &c, &e);
            if (isinf(want_cost)) {
                if (!CHECK_RC_AT(rc, TSW_ENOPATH, file, line))
                    TSW_T_NOTE("  n %lld m %lld step %d window %d\n", (long long)n, (long long)m, step, window);
                CHECK_AT(len == -7 && c == -7, file, line);
                continue;
            }
            if (!CHECK_RC_AT(rc, TSW_OK, file, line)) {
                TSW_T_NOTE("  n %lld m %lld step %d cost %d window %d method %d\n", (long long)n,
                           (long long)m, step, cost, window, v);
                continue;
            }
            int same = len == want_len && memcmp(got, want, sizeof(int64_t) * 2 * (size_t)len) == 0;
            if (!CHECK_AT(same, file, line))
                TSW_T_NOTE("  path differs: n %lld m %lld dim %lld step %d cost %d window %d f32 %d "
                           "method %d limit %zu threads %d len %lld vs %lld\n",
                           (long long)n, (long long)m, (long long)dim, step, cost, window, f32,
                           v, limits[v], threads, (long long)len, (long long)want_len);
            if (!CHECK_AT(c == want_cost, file, line))
                TSW_T_NOTE("  cost %.17g vs %.17g: n %lld m %lld dim %lld step %d cost %d "
                           "window %d f32 %d method %d threads %d\n",
                           c, want_cost, (long long)n, (long long)m, (long long)dim, step, cost,
                           window, f32, v, threads);
            CHECK_AT(check_shape(&o, got, len, n, m), file, line);
            double pc = f32 ? (double)bf_path_cost_f32(&o, baf, bbf, dim, got, len)
                            : bf_path_cost_f64(&o, ba, bb, dim, got, len);
            if (!CHECK_AT(pc == c, file, line))
                TSW_T_NOTE("  path cost %.17g vs %.17g\n", pc, c);
        }
    }
    free(a), free(b), free(af), free(bff), free(D), free(Df), free(code), free(want), free(got);
    free(ua), free(ub), free(uaf), free(ubf);
}

static void test_paths(void)
{
    tsw_t_rng r = {2024};
    const int quick = tsw_t_quick();
    const int rounds = quick ? 40 : 300;
    for (int t = 0; t < rounds; ++t) {
        int step = (int)tsw_t_int(&r, 0, 1);
        int64_t n = tsw_t_int(&r, 1, quick ? 24 : 60), m;
        if (step == 1) { /* p05 needs m in [(n+1)/2, 2n-1] */
            int64_t lo = (n + 2) / 2, hi = 2 * n - 1;
            m = tsw_t_int(&r, lo < 1 ? 1 : lo, hi < 1 ? 1 : hi);
        } else {
            m = tsw_t_int(&r, 1, quick ? 24 : 60);
        }
        int cost = (int)tsw_t_int(&r, 0, 3);
        int window = tsw_t_int(&r, 0, 3) == 0 ? (int)tsw_t_int(&r, 1, 3) : 0;
        int64_t dim = tsw_t_int(&r, 1, 4);
        int integers = (int)tsw_t_int(&r, 0, 1);
        int f32 = tsw_t_int(&r, 0, 3) == 0;
        one_case(&r, f32, step, cost, window, n, m, dim, integers, __FILE__, __LINE__);
    }
    /* wide grids: several thread blocks (>= 1024 columns each) and the row pipeline */
    const int64_t big = quick ? 300 : 2500;
    one_case(&r, 0, 0, TSW_COST_SQEUCLIDEAN, 0, 40, big, 2, 1, __FILE__, __LINE__);
    one_case(&r, 0, 1, TSW_COST_COSINE, 0, big / 2 + 5, big, 3, 0, __FILE__, __LINE__);
    one_case(&r, 1, 1, TSW_COST_ABS, 0, big, big - 7, 2, 1, __FILE__, __LINE__);
    one_case(&r, 0, 0, TSW_COST_EUCLIDEAN, TSW_WINDOW_SAKOE_CHIBA, 60, big, 1, 0, __FILE__, __LINE__);
}

/* Deep recursion on a larger grid: stored and linear paths identical (no brute force). */
static void test_linear_large(void)
{
    const int64_t n = tsw_t_quick() ? 150 : 700, m = n + 37, dim = 3;
    tsw_t_rng r = {77};
    double *a = malloc(sizeof(double) * (size_t)(n * dim)), *b = malloc(sizeof(double) * (size_t)(m * dim));
    fill(&r, a, n * dim, 1);
    fill(&r, b, m * dim, 1);
    tsw_series sa = {a, n, NULL}, sb = {b, m, NULL};
    int64_t cap = n + m - 1;
    int64_t *p0 = malloc(sizeof(int64_t) * 2 * (size_t)cap), *p1 = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    for (int step = 0; step < 2; ++step) {
        tsw_align_params p;
        tsw_align_params_default(&p);
        p.step = (tsw_step)step;
        p.method = TSW_PATH_STORED;
        int64_t l0 = 0, l1 = 0;
        double c0 = 0, c1 = 0;
        CHECK_RC(tsw_dtw_path(&p, TSW_F64, dim, &sa, &sb, p0, cap, &l0, &c0, NULL), TSW_OK);
        const size_t limits[] = {1, 100, 5000};
        for (int q = 0; q < 3; ++q) {
            p.method = TSW_PATH_LINEAR;
            p.memory_limit = limits[q];
            CHECK_RC(tsw_dtw_path(&p, TSW_F64, dim, &sa, &sb, p1, cap, &l1, &c1, NULL), TSW_OK);
            CHECK_EQ(l1, l0);
            CHECK(c1 == c0);
            CHECK(l1 == l0 && memcmp(p0, p1, sizeof(int64_t) * 2 * (size_t)l0) == 0);
        }
    }
    free(a), free(b), free(p0), free(p1);
}

/* ---- subsequence DTW ----------------------------------------------------------------------- */

static void test_subsequence(void)
{
    tsw_t_rng r = {99};
    const int rounds = tsw_t_quick() ? 20 : 120;
    for (int t = 0; t < rounds; ++t) {
        bf_opts o = {(int)tsw_t_int(&r, 0, 1), (int)tsw_t_int(&r, 0, 3), 1, 0, 0, 2};
        int64_t n = tsw_t_int(&r, 1, 12), m = tsw_t_int(&r, 1, 50), dim = tsw_t_int(&r, 1, 3);
        if (o.step == 1 && n - 1 > 2 * (m - 1))
            m = n; /* fits */
        int integers = (int)tsw_t_int(&r, 0, 1);
        double *a = malloc(sizeof(double) * (size_t)(n * dim)), *b = malloc(sizeof(double) * (size_t)(m * dim));
        fill(&r, a, n * dim, integers);
        fill(&r, b, m * dim, integers);
        /* the brute force reads the cosine cost's unit vectors (src/cosine.c) */
        double *ua = malloc(sizeof(double) * (size_t)(n * dim)), *ub = malloc(sizeof(double) * (size_t)(m * dim));
        unit_rows(a, NULL, n, dim, ua, NULL);
        unit_rows(b, NULL, m, dim, ub, NULL);
        const double *ba = o.cost == TSW_COST_COSINE ? ua : a, *bb = o.cost == TSW_COST_COSINE ? ub : b;
        /* brute force over every start column: D_s with only (0, s) a start */
        double *best = malloc(sizeof(double) * (size_t)m);
        for (int64_t j = 0; j < m; ++j)
            best[j] = INFINITY;
        double *D = malloc(sizeof(double) * (size_t)(n * m));
        int *code = malloc(sizeof(int) * (size_t)(n * m));
        bf_opts fixed = o;
        fixed.subseq = 0;
        for (int64_t s = 0; s < m; ++s) {
            /* the grid of b[s..]: a full DTW from (0, s) */
            bf_dp_f64(&fixed, ba, n, bb + s * dim, m - s, dim, D, code);
            for (int64_t j = s; j < m; ++j)
                if (D[(n - 1) * (m - s) + (j - s)] < best[j])
                    best[j] = D[(n - 1) * (m - s) + (j - s)];
        }
        /* the library's brute force twin: the subsequence DP itself */
        bf_dp_f64(&o, ba, n, bb, m, dim, D, code);
        for (int64_t j = 0; j < m; ++j)
            CHECK_NEAR(D[(n - 1) * m + j], best[j], 1e-12);
        int64_t k = tsw_t_int(&r, 1, 4);
        int64_t cap = tsw_subsequence_path_max_length(n, m, k);
        int64_t *path = malloc(sizeof(int64_t) * 2 * (size_t)cap);
        tsw_match *mt = malloc(sizeof(tsw_match) * (size_t)k);
        int64_t count = -1;
        tsw_series sq = {a, n, NULL}, sr = {b, m, NULL};
        tsw_align_params p = align_params(&o, t % 2 ? TSW_PATH_LINEAR : TSW_PATH_AUTO, t % 2 ? 3 : 0);
        tsw_exec e;
        tsw_exec_default(&e);
        e.n_threads = 1 + t % 2;
        if (!CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, dim, &sq, &sr, k, mt, &count, path, cap, &e),
                      TSW_OK))
            goto next;
        CHECK(count >= 1 && count <= k);
        /* the best match: the first minimum of the brute force */
        int64_t arg = 0;
        for (int64_t j = 1; j < m; ++j)
            if (best[j] < best[arg])
                arg = j;
        CHECK_EQ(mt[0].end, arg);
        CHECK_NEAR(mt[0].cost, best[arg], 1e-12);
        for (int64_t q = 0; q < count; ++q) {
            const int64_t *pp = path + 2 * mt[q].path_offset;
            int64_t len = mt[q].path_length;
            CHECK(check_shape(&o, pp, len, n, m));
            CHECK_EQ(pp[1], mt[q].start);
            CHECK_EQ(pp[2 * len - 1], mt[q].end);
            CHECK(bf_path_cost_f64(&o, ba, bb, dim, pp, len) == mt[q].cost);
            CHECK_NEAR(mt[q].cost, best[mt[q].end], 1e-12);
            /* equals the brute force's own backtrace from that end */
            int64_t *bt = malloc(sizeof(int64_t) * 2 * (size_t)(n + m));
            int64_t bl = bf_trace(&o, code, m, n - 1, mt[q].end, bt);
            CHECK(bl == len && memcmp(bt, pp, sizeof(int64_t) * 2 * (size_t)len) == 0);
            free(bt);
            if (q > 0)
                CHECK(mt[q].cost >= mt[q - 1].cost);
            for (int64_t u = 0; u < q; ++u) /* non-overlapping */
                CHECK(mt[q].end < mt[u].start || mt[q].start > mt[u].end);
        }
        /* no paths asked: same matches */
        {
            tsw_match *m2 = malloc(sizeof(tsw_match) * (size_t)k);
            int64_t c2 = -1;
            CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, dim, &sq, &sr, k, m2, &c2, NULL, 0, &e), TSW_OK);
            CHECK_EQ(c2, count);
            for (int64_t q = 0; q < c2 && q < count; ++q) {
                CHECK_EQ(m2[q].start, mt[q].start);
                CHECK_EQ(m2[q].end, mt[q].end);
                CHECK(m2[q].cost == mt[q].cost);
                CHECK_EQ(m2[q].path_length, 0);
            }
            free(m2);
        }
    next:
        free(a), free(b), free(best), free(D), free(code), free(path), free(mt), free(ua), free(ub);
    }
}

/* ---- bad inputs --------------------------------------------------------------------------- */

static void test_errors(void)
{
    double a[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, b[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    tsw_series sa = {a, 6, NULL}, sb = {b, 6, NULL};
    tsw_align_params p;
    tsw_align_params_default(&p);
    int64_t path[64], len = -7;
    double c = -7;
#define CALL(pp, dt, dim, A, B, P, CAP, L, C, E) tsw_dtw_path(pp, dt, dim, A, B, P, CAP, L, C, E)
    CHECK_RC(CALL(NULL, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, NULL), TSW_EINVAL);
    CHECK_RC(CALL(&p, TSW_F64, 1, NULL, &sb, path, 64, &len, &c, NULL), TSW_EINVAL);
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &sb, NULL, 64, &len, &c, NULL), TSW_EINVAL);
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &sb, path, 64, NULL, &c, NULL), TSW_EINVAL);
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &sb, path, 64, &len, NULL, NULL), TSW_EINVAL);
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &sb, path, 10, &len, &c, NULL), TSW_EINVAL); /* < 11 */
    CHECK_RC(CALL(&p, (tsw_dtype)7, 1, &sa, &sb, path, 64, &len, &c, NULL), TSW_EDTYPE);
    CHECK_RC(CALL(&p, TSW_F64, 0, &sa, &sb, path, 64, &len, &c, NULL), TSW_ESHAPE);
    tsw_series empty = {a, 0, NULL};
    CHECK_RC(CALL(&p, TSW_F64, 1, &empty, &sb, path, 64, &len, &c, NULL), TSW_ESHAPE);
    tsw_align_params bad = p;
    bad.step = (tsw_step)5;
    CHECK_RC(CALL(&bad, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, NULL), TSW_EINVAL);
    bad = p;
    bad.method = (tsw_path_method)9;
    CHECK_RC(CALL(&bad, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, NULL), TSW_EINVAL);
    bad = p;
    bad.cost = (tsw_cost)9;
    CHECK_RC(CALL(&bad, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, NULL), TSW_EINVAL);
    bad = p;
    bad.window = TSW_WINDOW_SAKOE_CHIBA;
    bad.window_radius = -1;
    CHECK_RC(CALL(&bad, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, NULL), TSW_EPARAM);
    double nan_a[6] = {0, 1, NAN, 3, 4, 5};
    tsw_series sn = {nan_a, 6, NULL};
    CHECK_RC(CALL(&p, TSW_F64, 1, &sn, &sb, path, 64, &len, &c, NULL), TSW_ENONFINITE);
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CUDA;
#ifdef TSWARP_WITH_CUDA
    {
        /* the GPU computes it (tests/gpu/test_cuda_path.c compares it to the CPU's); no
         * device: TSW_ENODEV, never a silent CPU run */
        int rc = CALL(&p, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, &e);
        int count = 0;
        tsw_cuda_device_count(&count);
        CHECK_RC(rc, count > 0 ? TSW_OK : TSW_ENODEV);
    }
#else
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, &e), TSW_ENODEV);
#endif
    e.device = TSW_DEVICE_CPU;
    e.n_threads = -1;
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &sb, path, 64, &len, &c, &e), TSW_EINVAL);
    /* p05 reachability: exactly m <= 2n - 1 and n <= 2m - 1 */
    p.step = TSW_STEP_P05;
    for (int64_t n = 1; n <= 7; ++n)
        for (int64_t m = 1; m <= 12; ++m) {
            tsw_series x = {a, n, NULL}, y = {b, m, NULL};
            int ok = m <= 2 * n - 1 && n <= 2 * m - 1;
            len = -7;
            int rc = CALL(&p, TSW_F64, 1, &x, &y, path, 64, &len, &c, NULL);
            CHECK_RC(rc, ok ? TSW_OK : TSW_ENOPATH);
            if (!ok)
                CHECK_EQ(len, -7);
        }
    CHECK(strlen(tsw_last_error_detail()) == 0); /* the last call succeeded */
    /* an Itakura window that admits no path (lengths too different) */
    p.step = TSW_STEP_SYMMETRIC1;
    p.window = TSW_WINDOW_ITAKURA;
    p.itakura_max_slope = 1.0;
    tsw_series s2 = {a, 2, NULL};
    len = -7;
    CHECK_RC(CALL(&p, TSW_F64, 1, &sa, &s2, path, 64, &len, &c, NULL), TSW_ENOPATH);
    CHECK_EQ(len, -7);
    CHECK(strlen(tsw_last_error_detail()) > 0);
#undef CALL
    /* subsequence */
    tsw_align_params_default(&p);
    tsw_match mt[4];
    int64_t count = -7;
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &sa, &sb, 0, mt, &count, NULL, 0, NULL), TSW_EINVAL);
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &sa, &sb, 2, NULL, &count, NULL, 0, NULL), TSW_EINVAL);
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &sa, &sb, 2, mt, NULL, NULL, 0, NULL), TSW_EINVAL);
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &sa, &sb, 2, mt, &count, path, 5, NULL), TSW_EINVAL);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 2;
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &sa, &sb, 2, mt, &count, NULL, 0, NULL), TSW_EPARAM);
    tsw_align_params_default(&p);
    p.step = TSW_STEP_P05;
    tsw_series q5 = {a, 5, NULL}, r2 = {b, 2, NULL}, r3 = {b, 3, NULL};
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &q5, &r2, 1, mt, &count, NULL, 0, NULL), TSW_ENOPATH);
    CHECK_EQ(count, -7);
    CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &q5, &r3, 1, mt, &count, NULL, 0, NULL), TSW_OK);
    CHECK_EQ(count, 1);
    CHECK_EQ(tsw_path_max_length(3, 4), 6);
    CHECK_EQ(tsw_path_max_length(0, 4), 0);
    CHECK_EQ(tsw_subsequence_path_max_length(3, 10, 2), 14);
    CHECK_STR(tsw_err_name(TSW_ENOPATH), "TSW_ENOPATH");
}

/* ---- progress, cancellation, allocation failure ------------------------------------------ */

typedef struct {
    int64_t calls, last_done, total, cancel_at;
    int bad;
} prog_rec;

static int on_progress(void *user, int64_t done, int64_t total)
{
    prog_rec *r = user;
    r->calls++;
    r->bad |= done > total || done < r->last_done || (r->total >= 0 && total != r->total);
    r->last_done = done;
    r->total = total;
    return r->cancel_at && r->calls >= r->cancel_at;
}

static void test_progress(void)
{
    const int64_t n = tsw_t_quick() ? 300 : 1500, m = n, dim = 4;
    tsw_t_rng r = {5};
    double *a = malloc(sizeof(double) * (size_t)(n * dim)), *b = malloc(sizeof(double) * (size_t)(m * dim));
    fill(&r, a, n * dim, 0);
    fill(&r, b, m * dim, 0);
    tsw_series sa = {a, n, NULL}, sb = {b, m, NULL};
    int64_t cap = n + m - 1, *path = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    for (int method = 1; method <= 2; ++method) {
        tsw_align_params p;
        tsw_align_params_default(&p);
        p.method = (tsw_path_method)method;
        p.memory_limit = method == 2 ? 1000 : 0;
        prog_rec rec = {0, 0, -1, 0, 0};
        tsw_exec e;
        tsw_exec_default(&e);
        e.progress = on_progress;
        e.progress_user = &rec;
        int64_t len = 0;
        double c = 0;
        CHECK_RC(tsw_dtw_path(&p, TSW_F64, dim, &sa, &sb, path, cap, &len, &c, &e), TSW_OK);
        CHECK(rec.calls >= 1 && !rec.bad && rec.last_done == rec.total);
        /* cancel at the first report: TSW_ECANCELED, outputs untouched */
        prog_rec cr = {0, 0, -1, 1, 0};
        e.progress_user = &cr;
        for (int64_t q = 0; q < 2 * cap; ++q)
            path[q] = -5;
        len = -7;
        c = -7;
        int rc = tsw_dtw_path(&p, TSW_F64, dim, &sa, &sb, path, cap, &len, &c, &e);
        CHECK_EQ(cr.calls, 1); /* the first row reports, and nothing after the cancel */
        {
            CHECK_RC(rc, TSW_ECANCELED);
            CHECK_EQ(len, -7);
            CHECK(c == -7);
            int untouched = 1;
            for (int64_t q = 0; q < 2 * cap; ++q)
                untouched &= path[q] == -5;
            CHECK(untouched);
        }
    }
    free(a), free(b), free(path);
}

static int64_t alloc_left;
static void *failing_malloc(size_t size)
{
    if (__atomic_sub_fetch(&alloc_left, 1, __ATOMIC_RELAXED) < 0)
        return NULL;
    return malloc(size);
}

static void test_alloc_failure(void)
{
    double a[40], b[30];
    tsw_t_rng r = {8};
    fill(&r, a, 40, 0);
    fill(&r, b, 30, 0);
    tsw_series sa = {a, 20, NULL}, sb = {b, 15, NULL};
    int64_t path[2 * 64], len;
    double c;
    tsw_match mt[3];
    int64_t count;
    for (int which = 0; which < 2; ++which) {
        for (int64_t k = 0; k < 20; ++k) {
            tsw_align_params p;
            tsw_align_params_default(&p);
            p.method = TSW_PATH_LINEAR;
            p.memory_limit = 8;
            p.window = which ? TSW_WINDOW_NONE : TSW_WINDOW_SAKOE_CHIBA;
            p.window_radius = 3;
            alloc_left = k;
            tsw_replace_allocator(failing_malloc, free);
            int rc = which == 0 ? tsw_dtw_path(&p, TSW_F64, 2, &sa, &sb, path, 64, &len, &c, NULL)
                                : tsw_subsequence_dtw(&p, TSW_F64, 2, &sb, &sa, 3, mt, &count, path, 64, NULL);
            tsw_replace_allocator(NULL, NULL);
            if (rc == TSW_OK)
                break;
            CHECK_RC(rc, TSW_ENOMEM);
        }
    }
}

/* Infinite costs: tsw_distance gives +inf, the path and match calls TSW_ERANGE (not "no
 * path" for a window that admits one, nor zero matches), on both dtypes. */
static void test_overflow(void)
{
    const double a[2] = {1e200, -1e200}, b[3] = {0, 1, 2}, q[1] = {1e200};
    const float af[2] = {1e30f, -1e30f}, bf[3] = {0, 1, 2};
    tsw_series sa = {a, 2, NULL}, sb = {b, 3, NULL}, sq = {q, 1, NULL};
    tsw_series fa = {af, 2, NULL}, fb = {bf, 3, NULL};
    tsw_align_params p;
    tsw_align_params_default(&p);
    int64_t path[16], len = -7, count = -7;
    double c = -7;
    CHECK_RC(tsw_dtw_path(&p, TSW_F64, 1, &sa, &sb, path, 16, &len, &c, NULL), TSW_ERANGE);
    CHECK(strstr(tsw_last_error_detail(), "float64") != NULL);
    CHECK_EQ(len, -7);
    CHECK_RC(tsw_dtw_path(&p, TSW_F32, 1, &fa, &fb, path, 16, &len, &c, NULL), TSW_ERANGE);
    CHECK(strstr(tsw_last_error_detail(), "float32") != NULL);
    tsw_match mt[2];
    for (int64_t k = 1; k <= 2; ++k)
        CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, 1, &sq, &sb, k, mt, &count, NULL, 0, NULL),
                 TSW_ERANGE);
    tsw_params dp;
    tsw_params_default(&dp, TSW_DTW);
    double v = 0;
    CHECK_RC(tsw_distance(&dp, TSW_F64, 1, &sa, &sb, &v, NULL), TSW_OK);
    CHECK(isinf(v) && v > 0);
    /* finite but large values still align */
    const double big[2] = {1e150, -1e150};
    tsw_series sbig = {big, 2, NULL};
    CHECK_RC(tsw_dtw_path(&p, TSW_F64, 1, &sbig, &sb, path, 16, &len, &c, NULL), TSW_OK);
    CHECK(isfinite(c));
}

/* FastDTW: the fastdtw package's docstring example, exact DTW once the radius covers the
 * series, a long pair whose path stays a path, and the errors. */
static void test_fastdtw(void)
{
    tsw_align_params p;
    tsw_align_params_default(&p);
    p.cost = TSW_COST_ABS;
    const double x[5] = {1, 2, 3, 4, 5}, y[3] = {2, 3, 4};
    tsw_series sa = {x, 5, NULL}, sb = {y, 3, NULL};
    int64_t path[2 * 7], len = -1;
    double cost = -1;
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, 1, path, 7, &len, &cost, NULL), TSW_OK);
    const int64_t want[10] = {0, 0, 1, 0, 2, 1, 3, 2, 4, 2};
    CHECK(len == 5 && cost == 2.0);
    for (int k = 0; k < 10 && len == 5; ++k)
        CHECK(path[k] == want[k]);
    /* a radius as long as the series: the exact DTW cost */
    enum { N = 300, M = 211 };
    static double a[N], b[M];
    static int64_t lp[2 * (N + M)];
    for (int i = 0; i < N; ++i)
        a[i] = sin(0.05 * i) + 0.01 * (i % 7);
    for (int j = 0; j < M; ++j)
        b[j] = sin(0.07 * j + 0.3);
    tsw_series la = {a, N, NULL}, lb = {b, M, NULL};
    double exact = 0, fast = 0;
    tsw_params q;
    tsw_params_default(&q, TSW_DTW);
    q.cost = TSW_COST_ABS;
    CHECK_RC(tsw_distance(&q, TSW_F64, 1, &la, &lb, &exact, NULL), TSW_OK);
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &la, &lb, N, lp, N + M, &len, &fast, NULL), TSW_OK);
    CHECK(fabs(fast - exact) <= 1e-12 * exact);
    /* radius 1: a path from (0, 0) to the corner, steps of at most one, cost >= exact */
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &la, &lb, 1, lp, N + M, &len, &fast, NULL), TSW_OK);
    CHECK(fast >= exact - 1e-12);
    CHECK(lp[0] == 0 && lp[1] == 0 && lp[2 * len - 2] == N - 1 && lp[2 * len - 1] == M - 1);
    for (int64_t k = 1; k < len; ++k) {
        const int64_t di = lp[2 * k] - lp[2 * k - 2], dj = lp[2 * k + 1] - lp[2 * k - 1];
        CHECK(di >= 0 && dj >= 0 && di <= 1 && dj <= 1 && di + dj >= 1);
    }
    /* errors, with the outputs untouched */
    len = -7;
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, -1, path, 7, &len, &cost, NULL), TSW_EPARAM);
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, 1, path, 6, &len, &cost, NULL), TSW_EINVAL);
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, 1, NULL, 7, &len, &cost, NULL), TSW_EINVAL);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 2;
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, 1, path, 7, &len, &cost, NULL), TSW_EPARAM);
    tsw_align_params_default(&p);
    p.cost = TSW_COST_COSINE;
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, 1, path, 7, &len, &cost, NULL), TSW_EPARAM);
    p.cost = TSW_COST_ABS;
    p.step = TSW_STEP_P05;
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sa, &sb, 1, path, 7, &len, &cost, NULL), TSW_EPARAM);
    CHECK(len == -7);
    /* overflow of every path's cost: TSW_ERANGE */
    tsw_align_params_default(&p);
    const double big[3] = {1e200, -1e200, 1e200}, zero[3] = {0, 0, 0};
    tsw_series sbig = {big, 3, NULL}, szero = {zero, 3, NULL};
    CHECK_RC(tsw_fastdtw(&p, TSW_F64, 1, &sbig, &szero, 1, path, 7, &len, &cost, NULL),
             TSW_ERANGE);
}

/* tsw_dba_step: the sums of each series' tsw_dtw_path, made here one path at a time in
 * series order, bit for bit, in both path orders, for 1 and 3 threads and ragged series of
 * 2 channels; bad weights and a cancelled call leave the outputs untouched. */
static void test_dba_step(void)
{
    enum { K = 9, L = 23, D = 2, MAXN = 40 };
    tsw_t_rng r = {31};
    static double vals[K * MAXN * D], z[L * D], tot[L * D], val[L], want_t[L * D], want_v[L];
    static int64_t path[2 * (MAXN + L)];
    int64_t off[K], len[K], row = 0;
    double w[K];
    for (int k = 0; k < K; ++k) {
        len[k] = tsw_t_int(&r, 1, MAXN);
        off[k] = row;
        row += len[k];
        w[k] = k == 3 ? 0.0 : tsw_t_uniform(&r, 0.1, 2);
    }
    fill(&r, vals, row * D, 0);
    fill(&r, z, L * D, 0);
    tsw_series sz = {z, L, NULL};
    tsw_collection cx = {vals, off, len, 0, K, NULL};
    tsw_align_params p;
    tsw_align_params_default(&p);
    p.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    p.window_radius = 0.5;
    for (int rows = 0; rows < 2; ++rows) {
        double want_c = 0, cost = -1;
        memset(want_t, 0, sizeof(want_t));
        memset(want_v, 0, sizeof(want_v));
        for (int k = 0; k < K; ++k) {
            tsw_series s = {vals + off[k] * D, len[k], NULL};
            int64_t pl = 0, cnt[L] = {0};
            double c = 0;
            CHECK_RC(rows ? tsw_dtw_path(&p, TSW_F64, D, &s, &sz, path, MAXN + L, &pl, &c, NULL)
                          : tsw_dtw_path(&p, TSW_F64, D, &sz, &s, path, MAXN + L, &pl, &c, NULL),
                     TSW_OK);
            want_c += c * w[k];
            for (int64_t t = 0; t < pl; ++t) {
                const int64_t i = path[2 * t + rows], j = path[2 * t + 1 - rows];
                ++cnt[i];
                for (int d = 0; d < D; ++d)
                    want_t[i * D + d] += vals[(off[k] + j) * D + d] * w[k];
            }
            for (int i = 0; i < L; ++i)
                want_v[i] += (double)cnt[i] * w[k];
        }
        for (int threads = 1; threads <= 3; threads += 2) {
            tsw_exec e;
            tsw_exec_default(&e);
            e.n_threads = threads;
            CHECK_RC(tsw_dba_step(&p, TSW_F64, D, &sz, &cx, w, rows, tot, val, &cost, &e),
                     TSW_OK);
            CHECK(memcmp(tot, want_t, sizeof(tot)) == 0);
            CHECK(memcmp(val, want_v, sizeof(val)) == 0);
            CHECK(cost == want_c);
        }
    }
    /* errors: the outputs untouched */
    memset(tot, 0x5A, sizeof(tot));
    double cost = -3;
    w[2] = -1;
    CHECK_RC(tsw_dba_step(&p, TSW_F64, D, &sz, &cx, w, 0, tot, val, &cost, NULL), TSW_EPARAM);
    w[2] = NAN;
    CHECK_RC(tsw_dba_step(&p, TSW_F64, D, &sz, &cx, w, 0, tot, val, &cost, NULL), TSW_EPARAM);
    w[2] = 1;
    CHECK_RC(tsw_dba_step(&p, TSW_F64, D, &sz, &cx, w, 0, NULL, val, &cost, NULL), TSW_EINVAL);
    vals[3] = NAN;
    CHECK_RC(tsw_dba_step(&p, TSW_F64, D, &sz, &cx, w, 0, tot, val, &cost, NULL),
             TSW_ENONFINITE);
    vals[3] = 0;
    p.window_radius = 2; /* a fraction above 1 */
    CHECK(tsw_dba_step(&p, TSW_F64, D, &sz, &cx, w, 0, tot, val, &cost, NULL) != TSW_OK);
    CHECK(cost == -3);
    for (size_t q = 0; q < sizeof(tot); ++q)
        CHECK(((unsigned char *)tot)[q] == 0x5A);
}

/* tsw_dba_step in SIMD lanes (cpu/dba_lanes*.c): runs of series of one length (so the
 * lanes hold 1 to 8 series), float32 and float64, 1 to 3 channels, no window, Sakoe-Chiba
 * and Itakura, small integer values (ties of the rounded sums everywhere) and uniform ones:
 * the sums equal those of each series' tsw_dtw_path bit for bit, both path orders. */
static void test_dba_step_lanes(void)
{
    enum { K = 21, MAXL = 30, MAXN = 30 };
    tsw_t_rng r = {77};
    static double vals[K * MAXN * 3], z[MAXL * 3], tot[MAXL * 3], val[MAXL], wt[MAXL * 3];
    static double wv[MAXL];
    static float fv[K * MAXN * 3], fz[MAXL * 3];
    static int64_t path[2 * (MAXN + MAXL)];
    for (int trial = 0; trial < 120; ++trial) {
        const int D = tsw_t_int(&r, 1, 3), L = tsw_t_int(&r, 1, MAXL);
        const int f32 = trial % 2, integers = (trial / 2) % 2, win = (trial / 4) % 3;
        const tsw_dtype dt = f32 ? TSW_F32 : TSW_F64;
        int64_t off[K], len[K], row = 0;
        int64_t cur = tsw_t_int(&r, 1, MAXN);
        for (int k = 0; k < K; ++k) { /* runs of one length */
            if (tsw_t_int(&r, 0, 5) == 0)
                cur = tsw_t_int(&r, 1, MAXN);
            len[k] = cur;
            off[k] = row;
            row += len[k];
        }
        fill(&r, vals, row * D, integers);
        fill(&r, z, L * D, integers);
        for (int64_t q = 0; q < row * D; ++q)
            fv[q] = (float)vals[q];
        for (int q = 0; q < L * D; ++q)
            fz[q] = (float)z[q];
        const void *xv = f32 ? (const void *)fv : (const void *)vals;
        const void *zv = f32 ? (const void *)fz : (const void *)z;
        tsw_series sz = {zv, L, NULL};
        tsw_collection cx = {xv, off, len, 0, K, NULL};
        tsw_align_params p;
        tsw_align_params_default(&p);
        if (win == 1) {
            p.window = TSW_WINDOW_SAKOE_CHIBA;
            p.window_radius = tsw_t_int(&r, 0, 8);
        } else if (win == 2) {
            p.window = TSW_WINDOW_ITAKURA;
            p.itakura_max_slope = tsw_t_uniform(&r, 1.2, 3);
        }
        for (int rows = 0; rows < 2; ++rows) {
            double want_c = 0, cost = -1;
            int wrc = TSW_OK;
            memset(wt, 0, sizeof(wt));
            memset(wv, 0, sizeof(wv));
            for (int k = 0; k < K && wrc == TSW_OK; ++k) {
                tsw_series s = {f32 ? (const void *)(fv + off[k] * D)
                                    : (const void *)(vals + off[k] * D),
                                len[k], NULL};
                int64_t pl = 0, cnt[MAXL] = {0};
                double c = 0;
                wrc = rows ? tsw_dtw_path(&p, dt, D, &s, &sz, path, MAXN + MAXL, &pl, &c, NULL)
                           : tsw_dtw_path(&p, dt, D, &sz, &s, path, MAXN + MAXL, &pl, &c, NULL);
                want_c += c;
                for (int64_t t = 0; t < pl; ++t) {
                    const int64_t i = path[2 * t + rows], j = path[2 * t + 1 - rows];
                    ++cnt[i];
                    for (int d = 0; d < D; ++d)
                        wt[i * D + d] += f32 ? (double)fv[(off[k] + j) * D + d]
                                             : vals[(off[k] + j) * D + d];
                }
                for (int i = 0; i < L; ++i)
                    wv[i] += (double)cnt[i];
            }
            const int got = tsw_dba_step(&p, dt, D, &sz, &cx, NULL, rows, tot, val, &cost,
                                         NULL);
            if (wrc != TSW_OK) { /* a window without a path for some series: the same error */
                CHECK_RC(got, wrc);
                continue;
            }
            CHECK_RC(got, TSW_OK);
            int same = memcmp(tot, wt, sizeof(double) * (size_t)(L * D)) == 0 &&
                       memcmp(val, wv, sizeof(double) * (size_t)L) == 0 && cost == want_c;
            if (!same)
                printf("  dba lanes: trial %d f32 %d integers %d window %d D %d L %d rows %d\n",
                       trial, f32, integers, win, D, L, rows);
            CHECK(same);
        }
    }
}

/* tsw_elastic_path: hand-checked paths (aeon's msm_alignment_path docstring; ERP by the
 * paper's boundary, worked out in the comment) and its errors. The random agreement with
 * aeon is tests/python/test_family.py's. */
static void test_elastic_path(void)
{
    int64_t path[2 * 16], len = -1;
    double v = -1;
    tsw_params p;
    tsw_params_default(&p, TSW_MSM);
    const double a[] = {1, 2, 3, 6}, b[] = {1, 2, 3, 4};
    tsw_series sa = {a, 4, NULL}, sb = {b, 4, NULL};
    if (CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &sa, &sb, path, 16, &len, &v, NULL),
                 TSW_OK)) {
        CHECK(len == 4 && v == 2.0);
        for (int64_t k = 0; k < len && k < 4; ++k)
            CHECK(path[2 * k] == k && path[2 * k + 1] == k);
    }
    /* ERP, g = 0: a = (1, 100), b = (100): D(1,0) = 1, D(2,0) = 101, D(0,1) = 100,
     * D(1,1) = min(0 + 99, 100 + 1, 1 + 100) = 99, D(2,1) = min(1 + 0, 99 + 100, 101 + 100)
     * = 1: the path (0,0) -> (1,0) along the only column, the value 1 */
    tsw_params_default(&p, TSW_ERP);
    const double e1[] = {1, 100}, e2[] = {100};
    tsw_series s1 = {e1, 2, NULL}, s2 = {e2, 1, NULL};
    if (CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &s1, &s2, path, 16, &len, &v, NULL),
                 TSW_OK))
        CHECK(len == 2 && v == 1.0 && path[0] == 0 && path[1] == 0 && path[2] == 1 &&
              path[3] == 0);
    /* errors: outputs untouched */
    len = -7;
    CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &s1, &s2, NULL, 16, &len, &v, NULL), TSW_EINVAL);
    CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &s1, &s2, path, 1, &len, &v, NULL), TSW_EINVAL);
    CHECK(len == -7);
    tsw_params_default(&p, TSW_DTW);
    CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &s1, &s2, path, 16, &len, &v, NULL), TSW_EPARAM);
    tsw_params_default(&p, TSW_MSM);
    p.c = -1;
    CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &sa, &sb, path, 16, &len, &v, NULL), TSW_EPARAM);
    /* an Itakura window that admits no alignment of 2 and 10 points */
    tsw_params_default(&p, TSW_WDTW);
    p.window = TSW_WINDOW_ITAKURA;
    p.itakura_max_slope = 1.5;
    const double t[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    tsw_series st = {t, 10, NULL};
    CHECK_RC(tsw_elastic_path(&p, TSW_F64, 1, &s1, &st, path, 16, &len, &v, NULL),
             TSW_ENOPATH);
    CHECK(len == -7);
    /* the family runs on the CPU */
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CUDA;
    tsw_params_default(&p, TSW_MSM);
    CHECK(tsw_elastic_path(&p, TSW_F64, 1, &sa, &sb, path, 16, &len, &v, &ex) != TSW_OK);
    CHECK(len == -7);
}

int main(void)
{
    test_elastic_path();
    test_dba_step();
    test_dba_step_lanes();
    test_fastdtw();
    test_overflow();
    test_paths();
    test_linear_large();
    test_subsequence();
    test_errors();
    test_progress();
    test_alloc_failure();
    return TSW_TEST_END();
}
