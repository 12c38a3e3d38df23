/*
 * Soft-DTW gradients (tsw_soft_dtw_grad, tsw_soft_dtw_cost_grad): the fast kernel against
 * the full-matrix reference, both against central finite differences, values against
 * tsw_paired, the cost-matrix form against the series form, float32 against float64,
 * extreme gamma, argument errors and allocation failures.
 */
#include "harness.h"

#include "common/cost.h"
#include "cpu/sdtw_grad_diag.h"

static tsw_t_rng rng = {20240611};

static void fill(double *v, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        v[i] = tsw_t_uniform(&rng, -1.5, 1.5);
}

/* One pair through the batch API: value, gradients; impl and dtype chosen. */
static int grad1(const tsw_params *p, tsw_impl impl, int64_t dim, const double *x, int64_t n,
                 const double *y, int64_t m, double *v, double *gx, double *gy)
{
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.impl = impl;
    tsw_collection cx = {x, NULL, NULL, n, 1, NULL}, cy = {y, NULL, NULL, m, 1, NULL};
    return tsw_soft_dtw_grad(p, TSW_F64, dim, &cx, &cy, v, gx, gy, &ex);
}

static double max_abs(const double *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
        s = fabs(v[i]) > s ? fabs(v[i]) : s;
    return s;
}

/* fast = reference, both = finite differences, value = tsw_paired (the distance engine,
 * written apart). window 3 (Itakura): radius is the slope. */
static void check_pair(double gamma, int window, double radius, int normalize, int64_t n,
                       int64_t m, int64_t dim)
{
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = gamma;
    p.window = (tsw_window)window;
    if (window == TSW_WINDOW_ITAKURA)
        p.itakura_max_slope = radius;
    else
        p.window_radius = radius;
    p.normalize = normalize;
    double *x = malloc(sizeof(double) * (size_t)(n * dim)), *y = malloc(sizeof(double) * (size_t)(m * dim));
    double *gx = calloc((size_t)(n * dim), sizeof(double)), *gy = calloc((size_t)(m * dim), sizeof(double));
    double *rx = calloc((size_t)(n * dim), sizeof(double)), *ry = calloc((size_t)(m * dim), sizeof(double));
    fill(x, n * dim);
    fill(y, m * dim);
    double v = NAN, vr = NAN, vp = NAN;
    CHECK_RC(grad1(&p, TSW_IMPL_AUTO, dim, x, n, y, m, &v, gx, gy), TSW_OK);
    CHECK_RC(grad1(&p, TSW_IMPL_REFERENCE, dim, x, n, y, m, &vr, rx, ry), TSW_OK);
    tsw_collection cx = {x, NULL, NULL, n, 1, NULL}, cy = {y, NULL, NULL, m, 1, NULL};
    CHECK_RC(tsw_paired(&p, TSW_F64, dim, &cx, &cy, &vp, NULL), TSW_OK);
    CHECK_NEAR(v, vr, 1e-10);
    CHECK_NEAR(v, vp, 1e-10);
    double scale = max_abs(rx, n * dim) + max_abs(ry, m * dim);
    int bad = 0;
    for (int64_t k = 0; k < n * dim; ++k)
        bad += !(fabs(gx[k] - rx[k]) <= 1e-9 * (1 + scale));
    for (int64_t k = 0; k < m * dim; ++k)
        bad += !(fabs(gy[k] - ry[k]) <= 1e-9 * (1 + scale));
    if (!CHECK(bad == 0))
        TSW_T_NOTE("  fast vs reference: %d gradient entries differ (gamma %g n %ld m %ld)\n",
                   bad, gamma, (long)n, (long)m);
    /* central differences on a few coordinates of each input */
    const double h = 1e-6;
    for (int t = 0; t < 4; ++t) {
        int which = t & 1;
        double *s = which ? y : x, *g = which ? gy : gx;
        int64_t len = (which ? m : n) * dim, k = tsw_t_int(&rng, 0, len - 1);
        double keep = s[k], vp1, vm1;
        s[k] = keep + h;
        grad1(&p, TSW_IMPL_AUTO, dim, x, n, y, m, &vp1, NULL, NULL);
        s[k] = keep - h;
        grad1(&p, TSW_IMPL_AUTO, dim, x, n, y, m, &vm1, NULL, NULL);
        s[k] = keep;
        double fd = (vp1 - vm1) / (2 * h);
        if (!CHECK(fabs(fd - g[k]) <= 1e-5 * (1 + fabs(fd))))
            TSW_T_NOTE("  finite difference %g vs gradient %g (gamma %g)\n", fd, g[k], gamma);
    }
    free(x), free(y), free(gx), free(gy), free(rx), free(ry);
}

/*
 * Every instantiation of the fast pair kernel (scalar, and AVX2 where the CPU has it; the
 * probability and the softmin forms of the backward pass) on pairs long enough for its
 * multi-vector steps, against the reference: series and cost-matrix forms, float64 and
 * float32 inputs (computed in double: the float32 result is the float64 one rounded).
 */
static void check_kernels_one(double gamma, int window, double radius, int64_t n, int64_t m,
                              int64_t dim)
{
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = gamma;
    p.window = (tsw_window)window;
    p.window_radius = radius;
    const size_t nx = (size_t)(n * dim), ny = (size_t)(m * dim), nc = (size_t)(n * m);
    double *x = malloc(sizeof(double) * nx), *y = malloc(sizeof(double) * ny);
    double *rx = calloc(nx, sizeof(double)), *ry = calloc(ny, sizeof(double));
    double *gx = malloc(sizeof(double) * nx), *gy = malloc(sizeof(double) * ny);
    double *C = malloc(sizeof(double) * nc), *gc = malloc(sizeof(double) * nc);
    double *rc = calloc(nc, sizeof(double));
    float *xf = malloc(sizeof(float) * nx), *yf = malloc(sizeof(float) * ny);
    float *gxf = malloc(sizeof(float) * nx), *gyf = malloc(sizeof(float) * ny);
    fill(x, (int64_t)nx);
    fill(y, (int64_t)ny);
    for (size_t k = 0; k < nx; ++k)
        xf[k] = (float)x[k], x[k] = xf[k];
    for (size_t k = 0; k < ny; ++k)
        yf[k] = (float)y[k], y[k] = yf[k];
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j)
            C[i * m + j] = tsw_cost_sqeuclidean_f64(x + i * dim, y + j * dim, dim);
    double vr = NAN, vcr = NAN;
    CHECK_RC(grad1(&p, TSW_IMPL_REFERENCE, dim, x, n, y, m, &vr, rx, ry), TSW_OK);
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.impl = TSW_IMPL_REFERENCE;
    int64_t ln = n, lm = m;
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, 1, n, m, &ln, &lm, C, &vcr, rc, &ex), TSW_OK);
    const double scale = 1 + max_abs(rx, (int64_t)nx) + max_abs(ry, (int64_t)ny);
    const double cscale = 1 + max_abs(rc, (int64_t)nc);
    size_t ws_bytes = tsw__sdg_diag_ws(&p, dim, n, m, 1);
    void *ws = malloc(ws_bytes > tsw__sdg_diag_ws(&p, dim, n, m, 0)
                          ? ws_bytes
                          : tsw__sdg_diag_ws(&p, dim, n, m, 0));
    for (int level = 0; level <= 2; level += 2) {
        if (level > tsw__cpu_level())
            continue;
        for (int softmin = 0; softmin <= 1; ++softmin) {
            double (*kern)(const tsw_params *, const tsw__sdg_pair *, void *) =
                tsw__sdg_diag_scalar_f64;
#if TSW_X86
            if (level == 2)
                kern = tsw__sdg_diag_avx2_f64;
#endif
            /* series, float64 */
            for (size_t k = 0; k < nx; ++k)
                gx[k] = 0;
            for (size_t k = 0; k < ny; ++k)
                gy[k] = 0;
            tsw__sdg_pair pr = {0, 1, softmin, dim, n, m, 0, x, y, NULL, 1.0, gx, gy, NULL, NULL};
            double v = kern(&p, &pr, ws);
            int bad = !(fabs(v - vr) <= 1e-10 * fmax(1, fabs(vr)));
            for (size_t k = 0; k < nx; ++k)
                bad += !(fabs(gx[k] - rx[k]) <= 1e-9 * scale);
            for (size_t k = 0; k < ny; ++k)
                bad += !(fabs(gy[k] - ry[k]) <= 1e-9 * scale);
            /* series, float32: the float64 result rounded */
            for (size_t k = 0; k < nx; ++k)
                gxf[k] = 0;
            for (size_t k = 0; k < ny; ++k)
                gyf[k] = 0;
            tsw__sdg_pair pf = {1, 1, softmin, dim, n, m, 0, xf, yf, NULL, 1.0, gxf, gyf, NULL, NULL};
            double vf = kern(&p, &pf, ws);
            bad += !(fabs(vf - vr) <= 1e-10 * fmax(1, fabs(vr)));
            for (size_t k = 0; k < nx; ++k)
                bad += !(fabs(gxf[k] - rx[k]) <= 1e-7 * scale);
            for (size_t k = 0; k < ny; ++k)
                bad += !(fabs(gyf[k] - ry[k]) <= 1e-7 * scale);
            /* cost matrix (the caller zeroes gc outside the window) */
            for (size_t k = 0; k < nc; ++k)
                gc[k] = 0;
            tsw__sdg_pair pc = {0, 1, softmin, 1, n, m, m, NULL, NULL, C, 1.0, NULL, NULL, gc, NULL};
            double vc = kern(&p, &pc, ws);
            bad += !(fabs(vc - vcr) <= 1e-10 * fmax(1, fabs(vcr)));
            for (size_t k = 0; k < nc; ++k)
                bad += !(fabs(gc[k] - rc[k]) <= 1e-9 * cscale);
            if (!CHECK(bad == 0))
                TSW_T_NOTE("  kernel level %d softmin %d: %d mismatches (gamma %g window %d "
                           "n %ld m %ld dim %ld)\n",
                           level, softmin, bad, gamma, window, (long)n, (long)m, (long)dim);
        }
    }
    free(ws);
    free(x), free(y), free(rx), free(ry), free(gx), free(gy), free(C), free(gc), free(rc);
    free(xf), free(yf), free(gxf), free(gyf);
}

static void check_kernels(void)
{
    check_kernels_one(1.0, 0, 0, 70, 53, 1);
    check_kernels_one(0.1, 0, 0, 53, 70, 2);
    check_kernels_one(1e-3, 0, 0, 64, 64, 1);
    check_kernels_one(10.0, 1, 5, 64, 64, 1);   /* narrow band */
    check_kernels_one(0.5, 1, 0, 41, 41, 3);    /* radius 0: the diagonal only */
    check_kernels_one(0.3, 2, 0.2, 90, 45, 2);  /* band widened for unequal lengths */
    check_kernels_one(1.0, 1, 20, 37, 101, 1);
    check_kernels_one(1.0, 0, 0, 1, 1, 1);
    check_kernels_one(1.0, 0, 0, 1, 29, 2);
    check_kernels_one(1.0, 0, 0, 31, 1, 1);
}

/* The cost-matrix form with c(i,j) = |x_i - y_j|^2 gives the same value, and its E turns
 * into the series gradient by the chain rule. Ragged blocks (lengths) in a padded batch. */
static void check_cost_form(void)
{
    const int64_t N = 9, M = 7, dim = 2, count = 3;
    int64_t lx[3] = {9, 5, 3}, ly[3] = {7, 7, 2};
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = 0.3;
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 1;
    double x[9 * 2 * 3], y[7 * 2 * 3], C[3 * 9 * 7], G[3 * 9 * 7], v[3];
    fill(x, N * dim * count);
    fill(y, M * dim * count);
    for (int64_t k = 0; k < count * N * M; ++k)
        C[k] = NAN; /* padding: must be ignored */
    for (int64_t k = 0; k < count; ++k)
        for (int64_t i = 0; i < lx[k]; ++i)
            for (int64_t j = 0; j < ly[k]; ++j) {
                double s = 0;
                for (int64_t d = 0; d < dim; ++d) {
                    double t = x[(k * N + i) * dim + d] - y[(k * M + j) * dim + d];
                    s += t * t;
                }
                C[(k * N + i) * M + j] = s;
            }
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, count, N, M, lx, ly, C, v, G, NULL), TSW_OK);
    for (int64_t k = 0; k < count; ++k) {
        double vs, gx[18], gy[14];
        CHECK_RC(grad1(&p, TSW_IMPL_AUTO, dim, x + k * N * dim, lx[k], y + k * M * dim, ly[k],
                       &vs, gx, gy),
                 TSW_OK);
        CHECK_NEAR(v[k], vs, 1e-12);
        for (int64_t i = 0; i < lx[k]; ++i)
            for (int64_t d = 0; d < dim; ++d) {
                double g = 0;
                for (int64_t j = 0; j < ly[k]; ++j)
                    g += G[(k * N + i) * M + j] * 2 *
                         (x[(k * N + i) * dim + d] - y[(k * M + j) * dim + d]);
                CHECK_NEAR(g, gx[i * dim + d], 1e-10);
            }
        int zeros = 1;
        for (int64_t i = 0; i < N; ++i)
            for (int64_t j = 0; j < M; ++j)
                if (i >= lx[k] || j >= ly[k])
                    zeros &= G[(k * N + i) * M + j] == 0;
        CHECK(zeros);
    }
    /* the reference agrees on the cost form too */
    double vr[3], Gr[3 * 9 * 7];
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.impl = TSW_IMPL_REFERENCE;
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, count, N, M, lx, ly, C, vr, Gr, &ex), TSW_OK);
    for (int64_t k = 0; k < count * N * M; ++k)
        CHECK_NEAR(Gr[k], G[k], 1e-12);
}

/* float32 within 1e-4 of float64; extreme gamma finite in both. */
static void check_f32_and_extremes(void)
{
    const int64_t n = 40, m = 33, dim = 2;
    double x[80], y[66], v64, gx64[80], gy64[66];
    float xf[80], yf[66], vf, gxf[80], gyf[66];
    fill(x, n * dim);
    fill(y, m * dim);
    for (int k = 0; k < n * dim; ++k)
        xf[k] = (float)x[k], x[k] = xf[k];
    for (int k = 0; k < m * dim; ++k)
        yf[k] = (float)y[k], y[k] = yf[k];
    /* the CPU kernel computes float32 inputs in double (float32 arithmetic would round R to
     * ~6e-8 R, an error of 6e-8 R / gamma in every exponent: 1e-2 at gamma 1e-4), so the
     * 1e-4 agreement holds over the whole range of gamma */
    const double gammas[] = {1e-4, 1e-2, 0.1, 1.0, 1e3};
    for (int g = 0; g < 5; ++g) {
        tsw_params p;
        tsw_params_default(&p, TSW_SOFT_DTW);
        p.gamma = gammas[g];
        tsw_collection cx = {x, NULL, NULL, n, 1, NULL}, cy = {y, NULL, NULL, m, 1, NULL};
        tsw_collection fx = {xf, NULL, NULL, n, 1, NULL}, fy = {yf, NULL, NULL, m, 1, NULL};
        CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, dim, &cx, &cy, &v64, gx64, gy64, NULL), TSW_OK);
        CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F32, dim, &fx, &fy, &vf, gxf, gyf, NULL), TSW_OK);
        int finite = isfinite(v64) && isfinite(vf);
        for (int k = 0; k < n * dim; ++k)
            finite &= isfinite(gx64[k]) && isfinite(gxf[k]);
        for (int k = 0; k < m * dim; ++k)
            finite &= isfinite(gy64[k]) && isfinite(gyf[k]);
        CHECK(finite);
        {
            double scale = max_abs(gx64, n * dim), err = 0;
            for (int k = 0; k < n * dim; ++k)
                err = fmax(err, fabs(gxf[k] - gx64[k]));
            if (!CHECK(err <= 1e-4 * scale))
                TSW_T_NOTE("  float32 gradient error %g of %g (gamma %g)\n", err, scale,
                           gammas[g]);
            CHECK_NEAR(vf, v64, 1e-5);
        }
    }
}

static void check_errors(void)
{
    double x[6] = {0, 1, 2, 3, 4, 5}, v, g[6];
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    tsw_collection c = {x, NULL, NULL, 3, 2, NULL}, c1 = {x, NULL, NULL, 3, 1, NULL};
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c1, &v, g, g, NULL), TSW_ESHAPE);
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, NULL, g, g, NULL), TSW_EINVAL);
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 0, &c, &c, &v, g, g, NULL), TSW_ESHAPE);
    CHECK_RC(tsw_soft_dtw_grad(&p, (tsw_dtype)7, 1, &c, &c, &v, g, g, NULL), TSW_EDTYPE);
    p.gamma = 0;
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, &v, g, g, NULL), TSW_EPARAM);
    p.gamma = 1e-300;
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F32, 1, &c, &c, &v, g, g, NULL), TSW_EPARAM);
    tsw_params_default(&p, TSW_DTW);
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, &v, g, g, NULL), TSW_EPARAM);
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.window = TSW_WINDOW_ITAKURA; /* the CPU takes it; the GPU kernels do not */
    {
        double v2[2], gx2[6], gy2[6]; /* c holds 2 series of 3 points */
        CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, v2, gx2, gy2, NULL), TSW_OK);
        tsw_exec gpu;
        tsw_exec_default(&gpu);
        gpu.device = TSW_DEVICE_CUDA;
        /* refused for the window where the build has the GPU kernels, else no device */
        CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, v2, gx2, gy2, &gpu),
                 tsw_has_cuda() ? TSW_ENOTSUP : TSW_ENODEV);
    }
    tsw_params_default(&p, TSW_SOFT_DTW);
    x[4] = NAN;
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, &v, g, g, NULL), TSW_ENONFINITE);
    x[4] = 4;
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CUDA;
    /* without a GPU (or a CUDA backend) the CUDA paths say so; with one, the GPU tests
     * (tests/gpu/test_cuda_sdtw.c) cover them: host pointers must not reach *_device calls */
    int ndev = 0;
    const int no_gpu = !tsw_has_cuda() || tsw_cuda_device_count(&ndev) != TSW_OK || ndev == 0;
    if (no_gpu) {
        CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, &v, g, g, &ex), TSW_ENODEV);
        CHECK_RC(tsw_soft_dtw_grad_device(&p, TSW_F64, 1, &c, &c, &v, g, g, NULL), TSW_ENODEV);
    }
    /* cost form */
    int64_t lx[2] = {3, 4};
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, 2, 3, 1, lx, NULL, x, &v, g, NULL), TSW_ESHAPE);
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, 0, 3, 1, NULL, NULL, x, &v, g, NULL),
             TSW_ESHAPE);
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, 2, INT64_MAX / 2, 4, NULL, NULL, x, &v, g,
                                    NULL),
             TSW_EOVERFLOW);
    p.normalize = 1;
    CHECK_RC(tsw_soft_dtw_cost_grad(&p, TSW_F64, 2, 3, 1, NULL, NULL, x, &v, g, NULL),
             TSW_EPARAM);
    p.normalize = 0;
    if (no_gpu)
        CHECK_RC(tsw_soft_dtw_cost_grad_device(&p, TSW_F64, 2, 3, 1, NULL, NULL, x, &v, g, NULL),
                 TSW_ENODEV);
}

/* A failing allocation gives TSW_ENOMEM with the bytes in the detail, outputs untouched. */
static int fail_next;
static void *failing_malloc(size_t s) { return fail_next ? NULL : malloc(s); }

static void check_enomem(void)
{
    double x[50], y[40], v = 123, gx[50], gy[40];
    fill(x, 50);
    fill(y, 40);
    for (int k = 0; k < 50; ++k)
        gx[k] = 7;
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    tsw_collection cx = {x, NULL, NULL, 50, 1, NULL}, cy = {y, NULL, NULL, 40, 1, NULL};
    CHECK_RC(tsw_replace_allocator(failing_malloc, free), TSW_OK);
    fail_next = 1;
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &cx, &cy, &v, gx, gy, NULL), TSW_ENOMEM);
    CHECK(strstr(tsw_last_error_detail(), "bytes") != NULL);
    CHECK(v == 123 && gx[0] == 7 && gx[49] == 7);
    fail_next = 0;
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &cx, &cy, &v, gx, gy, NULL), TSW_OK);
    CHECK_RC(tsw_replace_allocator(NULL, NULL), TSW_OK);
}

/* Ragged collections: each pair equals its own call; rows between series untouched. */
static void check_ragged(void)
{
    const int64_t dim = 1, count = 3;
    int64_t len[3] = {10, 4, 17}, off[3] = {0, 12, 20}, leny[3] = {6, 11, 17},
            offy[3] = {0, 6, 17};
    double x[40], y[40], gx[40], gy[40], v[3];
    fill(x, 40);
    fill(y, 40);
    for (int k = 0; k < 40; ++k)
        gx[k] = gy[k] = -99;
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = 0.1;
    p.normalize = 1;
    p.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    p.window_radius = 0.2;
    tsw_collection cx = {x, off, len, 0, count, NULL}, cy = {y, offy, leny, 0, count, NULL};
    CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, dim, &cx, &cy, v, gx, gy, NULL), TSW_OK);
    CHECK(gx[10] == -99 && gx[11] == -99 && gx[37] == -99);
    for (int64_t k = 0; k < count; ++k) {
        double v1, g1[20], h1[20];
        CHECK_RC(grad1(&p, TSW_IMPL_REFERENCE, dim, x + off[k], len[k], y + offy[k], leny[k],
                       &v1, g1, h1),
                 TSW_OK);
        CHECK_NEAR(v[k], v1, 1e-10);
        for (int64_t i = 0; i < len[k]; ++i)
            CHECK_NEAR(gx[off[k] + i], g1[i], 1e-9);
        for (int64_t j = 0; j < leny[k]; ++j)
            CHECK_NEAR(gy[offy[k] + j], h1[j], 1e-9);
    }
}

int main(void)
{
    const double gammas[] = {1e-3, 0.1, 1.0, 10.0};
    for (int g = 0; g < 4; ++g) {
        check_pair(gammas[g], 0, 0, 0, 13, 13, 1);
        check_pair(gammas[g], 0, 0, 0, 17, 9, 3);
        check_pair(gammas[g], 1, 2, 0, 12, 20, 1); /* band, unequal lengths */
        check_pair(gammas[g], 1, 0, 0, 20, 12, 2);
        check_pair(gammas[g], 2, 0.3, 1, 15, 11, 2); /* divergence with a band */
        check_pair(gammas[g], 0, 0, 1, 8, 14, 1);
        check_pair(gammas[g], 3, 2.0, 0, 14, 11, 2); /* Itakura (the full-matrix kernel) */
        check_pair(gammas[g], 3, 1.5, 1, 12, 12, 1);
    }
    check_kernels();
    check_cost_form();
    check_f32_and_extremes();
    check_errors();
    check_enomem();
    check_ragged();
    return TSW_TEST_END();
}
