/*
 * Soft-DTW values and gradients on the GPU against the CPU backend (ctest label "gpu";
 * tests/gpu/run.sh runs it, and compute-sanitizer over it, on a GPU machine).
 *
 * Fresh random inputs on every run (seed printed; TSWARP_TEST_SEED=<seed> replays): batches
 * of pairs with equal and unequal lengths (1 to 3,000 points: small batches of pairs longer
 * than 256 points run on several blocks per pair, one stripe of rows each, on both kernels:
 * split_case, where the float32 wavefront kernel's stripes of a forced height must give the
 * one-block kernel's bits), dims 1, 2, 3 and 7,
 * float32 and float64, the float32 wavefront kernel with 1, 2, 4 and 8 rows per lane (forced by
 * its developer knob TSWARP_SDTW_WF_RB) and in batches large enough for it to be chosen, gamma
 * from 1e-3 to 1e2, no
 * window or a Sakoe-Chiba band (radius and fraction), the divergence, ragged collections
 * with gaps; the cost-matrix variant; paired soft-DTW values (tsw_paired: the wavefront
 * kernel's value-only variant against the CPU and the many-pairs engine); the *_device twins,
 * synchronous and asynchronous (exec.cuda_async) (equal to the host-memory GPU
 * results bit for bit); values without gradients (NULL gradient pointers) equal to those
 * with, bit for bit; NaN found on the device with the outputs untouched.
 * Long pairs in narrow Sakoe-Chiba bands (the band layout and steps), and one pair of 10^6
 * points in a radius of 10 (band). The matrix form at large dims (mat_case).
 * TSWARP_GPU_TEST_ONLY=random,paired,split,bi,cost,mat,extreme,faults,long,band runs some
 * parts only.
 *
 * Agreement with the CPU: values within tol * max(1, |cpu|), gradients within
 * tol * max(1, max |cpu gradient| of the pair), tol = 1e-9 (float64) and 1e-4 (float32,
 * computed in double by both backends; the GPU's exp/log of O(1) arguments in float32),
 * times 0.01 / gamma below gamma = 0.01. gamma 1e-4 and 1e3: finite outputs.
 * Exit status 77 without the CUDA backend or a device. TSWARP_TEST_QUICK=1: small sizes.
 */
#include "harness.h"

#include <cuda_runtime_api.h>

#define SKIP_CODE 77

static int g_quick;
static double g_maxerr[2][2]; /* [dtype][0 value, 1 gradient] */

static size_t esz(tsw_dtype dt) { return dt == TSW_F32 ? 4 : 8; }
static double get(const void *b, tsw_dtype dt, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)b)[k] : ((const double *)b)[k];
}
static void put(void *b, tsw_dtype dt, int64_t k, double v)
{
    if (dt == TSW_F32)
        ((float *)b)[k] = (float)v;
    else
        ((double *)b)[k] = v;
}

static void *dev_copy(const void *h, size_t bytes)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess)
        return NULL;
    if (h && bytes)
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    return d;
}
static void *host_copy(const void *d, size_t bytes)
{
    void *h = malloc(bytes ? bytes : 1);
    cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
    return h;
}

/* A ragged batch: count series of dim, lengths in [lo, hi], gaps of NaN between them. */
typedef struct {
    int64_t count, dim, rows;
    int64_t *off, *len;
    double *v; /* rows x dim */
} batch;

/* Whether two gradient buffers laid out like b hold the same bits in b's series (the rows
 * between them are not compared); a NULL first buffer counts as the same. */
static int series_same(const batch *b, const void *g, const void *h, size_t es)
{
    if (!g)
        return 1;
    int same = 1;
    for (int64_t k = 0; k < b->count; ++k)
        same &= memcmp((const char *)g + es * b->off[k] * b->dim,
                       (const char *)h + es * b->off[k] * b->dim, es * b->len[k] * b->dim) == 0;
    return same;
}

static batch make_batch(tsw_t_rng *r, int64_t count, int64_t dim, const int64_t *lens, int gaps)
{
    batch b;
    b.count = count;
    b.dim = dim;
    b.off = malloc(sizeof(int64_t) * count);
    b.len = malloc(sizeof(int64_t) * count);
    int64_t row = 0;
    for (int64_t k = 0; k < count; ++k) {
        row += gaps ? (int64_t)tsw_t_int(r, 0, 2) : 0;
        b.off[k] = row;
        b.len[k] = lens[k];
        row += lens[k];
    }
    b.rows = row;
    b.v = malloc(sizeof(double) * (size_t)(row * dim + 1));
    for (int64_t i = 0; i < row * dim; ++i)
        b.v[i] = NAN;
    for (int64_t k = 0; k < count; ++k) {
        double w = tsw_t_uniform(r, -1, 1);
        for (int64_t i = 0; i < b.len[k] * dim; ++i) {
            w += tsw_t_uniform(r, -0.5, 0.5);
            b.v[b.off[k] * dim + i] = w;
        }
    }
    return b;
}
static void free_batch(batch *b)
{
    free(b->off);
    free(b->len);
    free(b->v);
}
static void *as_dtype(const double *v, int64_t n, tsw_dtype dt)
{
    void *o = malloc(esz(dt) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; ++i)
        put(o, dt, i, v[i]);
    return o;
}
static tsw_collection view(const batch *b, const void *vals)
{
    tsw_collection c;
    memset(&c, 0, sizeof(c));
    c.values = vals;
    c.offsets = b->off;
    c.lengths = b->len;
    c.count = b->count;
    return c;
}

/* The device twin of a host-memory GPU call: tsw_soft_dtw_grad_device on device copies of
 * the inputs, synchronous or asynchronous at random (the same bits either way: host_copy
 * waits on the NULL stream), must give the host call's values v and gradients gx / gy
 * (NULL: not asked) bit for bit. */
static void check_twin(tsw_t_rng *r, const tsw_params *p, tsw_dtype dt, int64_t dim,
                       const batch *x, const batch *y, const void *xv, const void *yv,
                       const void *v, const void *gx, const void *gy, const tsw_exec *eg,
                       const char *ctx)
{
    const size_t es = esz(dt), bx = es * x->rows * dim, by = es * y->rows * dim;
    void *dx = dev_copy(xv, bx), *dy = dev_copy(yv, by), *dvals = dev_copy(NULL, es * x->count);
    void *dgx = gx ? dev_copy(gx, bx) : NULL, *dgy = gy ? dev_copy(gy, by) : NULL;
    tsw_collection ddx = view(x, dx), ddy = view(y, dy);
    tsw_exec ea = *eg;
    ea.cuda_async = tsw_t_int(r, 0, 1);
    if (CHECK_RC(tsw_soft_dtw_grad_device(p, dt, dim, &ddx, &ddy, dvals, dgx, dgy, &ea),
                 TSW_OK)) {
        void *hv = host_copy(dvals, es * x->count);
        void *hgx = dgx ? host_copy(dgx, bx) : NULL, *hgy = dgy ? host_copy(dgy, by) : NULL;
        const int same = memcmp(hv, v, es * x->count) == 0 && series_same(x, hgx, gx, es) &&
                         series_same(y, hgy, gy, es);
        if (!CHECK(same))
            TSW_T_NOTE("  %s: device twin differs\n", ctx);
        free(hv);
        free(hgx);
        free(hgy);
    }
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dvals);
    cudaFree(dgx);
    cudaFree(dgy);
}

/* The gradient's conditioning degrades as 1/gamma (the weights are exp(difference / gamma):
 * a rounding difference d in R moves them by d / gamma), so the tolerances grow as
 * 0.01 / gamma below gamma = 0.01. The CPU computes float32 inputs in double; the GPU's
 * thread-per-row kernel too, and its float32 wavefront kernel keeps R in float32 for gamma
 * <= 10 (larger gammas go to the double kernel: sdtw_wf.cuh, kWfMaxGamma). float32 results
 * must agree to 1e-4: the "float32 gradient within 1e-4 relative of float64". */
static double g_gamma = 1;
static double tol_of(tsw_dtype dt)
{
    return (dt == TSW_F32 ? 1e-4 : 1e-9) * (g_gamma < 0.01 ? 0.01 / g_gamma : 1.0);
}

static void record(tsw_dtype dt, int what, double err)
{
    if (err > g_maxerr[dt][what])
        g_maxerr[dt][what] = err;
}

/* float64: the two backends sum R in different orders, and a rounding of R moves the weights
 * by eps |R| / gamma, accumulated over about sqrt(n + m) steps of the backward pass: long
 * pairs with large values (|R| ~ 1e5) and a small gamma exceed 1e-9 by that much (seen:
 * 5e-8 at gamma 1e-3, n = m ~ 3,000; 1.1e-9 at gamma 1). float32 is computed in double by
 * both backends and keeps its fixed 1e-4. */
static double tol_pair(tsw_dtype dt, double value, int64_t n, int64_t m)
{
    const double cond = dt == TSW_F64 ? 8 * 2.220446049250313e-16 * sqrt((double)(n + m)) *
                                            fabs(value) / g_gamma
                                      : 0;
    return fmax(tol_of(dt), cond);
}

/* Compares a gradient laid out like batch b (series rows only); other: the batch paired with
 * it, vals: the CPU's values (for the float64 tolerance). */
static void cmp_grad(const batch *b, const batch *other, tsw_dtype dt, const void *got,
                     const void *ref, const void *vals, const char *ctx)
{
    for (int64_t k = 0; k < b->count; ++k) {
        double mx = 1;
        const int64_t o = b->off[k] * b->dim, n = b->len[k] * b->dim;
        const double tol = tol_pair(dt, get(vals, dt, k), b->len[k], other->len[k]);
        for (int64_t i = 0; i < n; ++i)
            mx = fmax(mx, fabs(get(ref, dt, o + i)));
        for (int64_t i = 0; i < n; ++i) {
            const double g = get(got, dt, o + i), e = get(ref, dt, o + i);
            const double err = fabs(g - e) / mx;
            record(dt, 1, isnan(err) ? INFINITY : err);
            if (!CHECK(err <= tol))
                TSW_T_NOTE("  %s: pair %" PRId64 " element %" PRId64 ": gpu %.10g cpu %.10g\n",
                           ctx, k, i, g, e);
        }
    }
}

/* A GPU call's values (to tol_of) and the gradients it was given (cmp_grad) against the
 * CPU's (suffix _ref), pair by pair. */
static void cmp_call(const batch *x, const batch *y, tsw_dtype dt, const void *v,
                     const void *v_ref, const void *gx, const void *gx_ref, const void *gy,
                     const void *gy_ref, const char *ctx)
{
    for (int64_t k = 0; k < x->count; ++k) {
        const double g = get(v, dt, k), e = get(v_ref, dt, k);
        const double err = fabs(g - e) / fmax(1, fabs(e));
        record(dt, 0, isnan(err) ? INFINITY : err);
        if (!CHECK(err <= tol_of(dt)))
            TSW_T_NOTE("  %s: value %" PRId64 ": gpu %.12g cpu %.12g\n", ctx, k, g, e);
    }
    if (gx)
        cmp_grad(x, y, dt, gx, gx_ref, v_ref, ctx);
    if (gy)
        cmp_grad(y, x, dt, gy, gy_ref, v_ref, ctx);
}

/* Whether two calls' values and gradients (NULL: not wanted) have the same bits. */
static int same_bits(const batch *x, const batch *y, tsw_dtype dt, int64_t dim, const void *v1,
                     const void *v2, const void *gx1, const void *gx2, const void *gy1,
                     const void *gy2)
{
    const size_t es = esz(dt);
    int same = memcmp(v1, v2, es * x->count) == 0;
    same &= !gx1 || memcmp(gx1, gx2, es * x->rows * dim) == 0;
    same &= !gy1 || memcmp(gy1, gy2, es * y->rows * dim) == 0;
    return same;
}

/* Frees a case's three calls' outputs (v, gx, gy: [3], NULL entries allowed), its inputs
 * and its batches. */
static void free_case(void *v[3], void *gx[3], void *gy[3], void *xv, void *yv, batch *x,
                      batch *y)
{
    for (int k = 0; k < 3; ++k) {
        free(v[k]);
        free(gx[k]);
        free(gy[k]);
    }
    free(xv);
    free(yv);
    free_batch(x);
    free_batch(y);
}

/* Forces the float32 wavefront kernel's rows per lane (TSWARP_SDTW_WF_RB: 1, 2, 4 or 8) or
 * leaves the choice (NULL), at random; always the choice when !force. */
static const char *random_rb(tsw_t_rng *r, int force)
{
    static const char *const rbs[5] = {NULL, "1", "2", "4", "8"};
    const char *rb = force ? rbs[tsw_t_int(r, 0, 4)] : NULL;
    if (rb)
        setenv("TSWARP_SDTW_WF_RB", rb, 1);
    else
        unsetenv("TSWARP_SDTW_WF_RB");
    return rb;
}

/* Lengths of count pairs in [1, hi], the same in both series one time in three. */
static void random_lengths(tsw_t_rng *r, int64_t count, int64_t hi, int64_t *lx, int64_t *ly)
{
    const int equal = tsw_t_int(r, 0, 2) == 0;
    for (int64_t k = 0; k < count; ++k) {
        lx[k] = (int64_t)tsw_t_int(r, 1, (int)hi);
        ly[k] = equal ? lx[k] : (int64_t)tsw_t_int(r, 1, (int)hi);
    }
}

/* Soft-DTW parameters: gamma among the first ng of 1e-3 .. 100, the divergence one time in
 * three, no window or a Sakoe-Chiba band (radius, fraction), or Itakura when itakura. */
static void random_params(tsw_t_rng *r, int ng, int itakura, tsw_params *p)
{
    static const double gammas[6] = {1e-3, 0.01, 0.1, 1, 10, 100};
    tsw_params_default(p, TSW_SOFT_DTW);
    p->gamma = gammas[tsw_t_int(r, 0, ng - 1)];
    g_gamma = p->gamma;
    p->normalize = tsw_t_int(r, 0, 2) == 0;
    const int w = tsw_t_int(r, 0, 3);
    if (w == 1) {
        p->window = TSW_WINDOW_SAKOE_CHIBA;
        p->window_radius = tsw_t_int(r, 0, 20);
    } else if (w == 2) {
        p->window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
        p->window_radius = tsw_t_uniform(r, 0, 1);
    } else if (w == 3 && itakura && tsw_t_int(r, 0, 1)) {
        p->window = TSW_WINDOW_ITAKURA; /* paired values: the many-pairs engine */
    }
}

/* big: 0 small batches, 1 long pairs, 2 a batch large enough for the float32 wavefront
 * kernel's own choice (sdtw_wf.cuh), 3 long pairs in a narrow Sakoe-Chiba band (the
 * thread-per-row kernel's band layout and band steps: float64, or dims above 2, or float32
 * pairs longer than the two-wave kernel's 16,384 points); small batches force its rows per
 * lane (2, 4, 8) or leave the choice (then the thread-per-row kernel runs them) at random. */
static void random_case(tsw_t_rng *r, int big)
{
    const tsw_dtype dt = tsw_t_int(r, 0, 1) ? TSW_F64 : TSW_F32;
    static const int64_t dims[4] = {1, 2, 3, 7};
    const int64_t dim = big == 2 ? tsw_t_int(r, 1, 2) : dims[tsw_t_int(r, 0, 3)];
    const int64_t count = big == 2 ? (int64_t)tsw_t_int(r, 280, 500)
                          : big  ? (int64_t)tsw_t_int(r, 1, 3)
                                 : (int64_t)tsw_t_int(r, 1, 12);
    const int64_t hi = big == 2 ? 70
                       : big    ? (g_quick ? 1500 : 3000)
                                : (tsw_t_int(r, 0, 3) ? 40 : 300);
    const char *rb = random_rb(r, !big);
    int64_t lx[512], ly[512];
    random_lengths(r, count, hi, lx, ly);
    if (big == 3) {
        const int64_t lo = dt == TSW_F32 && dim <= 2 ? 16400 : 400;
        const int64_t up = dt == TSW_F32 && dim <= 2 ? 20000 : g_quick ? 3000 : 8000;
        for (int64_t k = 0; k < count; ++k) {
            lx[k] = tsw_t_int(r, (int)lo, (int)up);
            ly[k] = tsw_t_int(r, 0, 1) ? lx[k] : lx[k] + tsw_t_int(r, (int)(-lx[k] / 10), (int)(lx[k] / 10));
        }
    }
    batch x = make_batch(r, count, dim, lx, tsw_t_int(r, 0, 1));
    batch y = make_batch(r, count, dim, ly, tsw_t_int(r, 0, 1));
    tsw_params p;
    random_params(r, 6, 0, &p);
    if (big == 3) {
        /* narrow: radius 0 .. 60 cells or a fraction up to 2% */
        p.window = tsw_t_int(r, 0, 2) ? TSW_WINDOW_SAKOE_CHIBA : TSW_WINDOW_SAKOE_CHIBA_FRACTION;
        p.window_radius = p.window == TSW_WINDOW_SAKOE_CHIBA ? (double)tsw_t_int(r, 0, 60)
                                                             : tsw_t_uniform(r, 0, 0.02);
    }
    char ctx[200];
    snprintf(ctx, sizeof ctx,
             "%s dim %" PRId64 " count %" PRId64 " gamma %g norm %d window %d/%g rows/lane %s",
             dt == TSW_F32 ? "f32" : "f64", dim, count, p.gamma, p.normalize, (int)p.window,
             p.window_radius, rb ? rb : "auto");
    void *xv = as_dtype(x.v, x.rows * dim, dt), *yv = as_dtype(y.v, y.rows * dim, dt);
    tsw_collection cx = view(&x, xv), cy = view(&y, yv);
    const size_t es = esz(dt);
    void *v_cpu = malloc(es * count), *v_gpu = malloc(es * count);
    void *gx_cpu = as_dtype(x.v, x.rows * dim, dt), *gy_cpu = as_dtype(y.v, y.rows * dim, dt);
    void *gx_gpu = as_dtype(x.v, x.rows * dim, dt), *gy_gpu = as_dtype(y.v, y.rows * dim, dt);
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    int rc_cpu = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v_cpu, gx_cpu, gy_cpu, &ec);
    int rc_gpu = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v_gpu, gx_gpu, gy_gpu, &eg);
    if (!CHECK_RC(rc_cpu, TSW_OK) || !CHECK_RC(rc_gpu, TSW_OK)) {
        TSW_T_NOTE("  %s: %s\n", ctx, tsw_last_error_detail());
        goto done;
    }
    for (int64_t k = 0; k < count; ++k) {
        const double g = get(v_gpu, dt, k), e = get(v_cpu, dt, k);
        const double err = fabs(g - e) / fmax(1, fabs(e));
        record(dt, 0, isnan(err) ? INFINITY : err);
        if (!CHECK(err <= tol_of(dt)))
            TSW_T_NOTE("  %s: value %" PRId64 ": gpu %.12g cpu %.12g\n", ctx, k, g, e);
    }
    /* no gradient wanted: the same values, bit for bit (the wavefront kernel then stores no
     * probabilities) */
    {
        void *v_nog = malloc(es * count);
        if (CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v_nog, NULL, NULL, &eg), TSW_OK) &&
            !CHECK(memcmp(v_nog, v_gpu, es * count) == 0))
            TSW_T_NOTE("  %s: values without gradients differ\n", ctx);
        free(v_nog);
    }
    /* the float64 tolerance follows |R(x, y)|: the divergence's value can be far smaller */
    void *v_raw = malloc(es * count);
    memcpy(v_raw, v_cpu, es * count);
    if (dt == TSW_F64 && p.normalize) {
        tsw_params q = p;
        q.normalize = 0;
        CHECK_RC(tsw_soft_dtw_grad(&q, dt, dim, &cx, &cy, v_raw, NULL, NULL, &ec), TSW_OK);
    }
    cmp_grad(&x, &y, dt, gx_gpu, gx_cpu, v_raw, ctx);
    cmp_grad(&y, &x, dt, gy_gpu, gy_cpu, v_raw, ctx);
    free(v_raw);
    /* rows outside the series (NaN gaps) are untouched */
    for (int64_t i = 0; i < x.rows * dim; ++i)
        if (isnan(x.v[i]) && !CHECK(isnan(get(gx_gpu, dt, i))))
            break;

    /* the device twin: the same numbers, bit for bit */
    if (!big || tsw_t_int(r, 0, 1))
        check_twin(r, &p, dt, dim, &x, &y, xv, yv, v_gpu, gx_gpu, gy_gpu, &eg, ctx);
done:
    free(xv);
    free(yv);
    free(v_cpu);
    free(v_gpu);
    free(gx_cpu);
    free(gy_cpu);
    free(gx_gpu);
    free(gy_gpu);
    free_batch(&x);
    free_batch(&y);
}

/*
 * The float32 wavefront kernel split over several blocks a pair (sdtw_wf.cuh, SPLIT), in
 * small batches of dim 1 or 2. exact: pairs of up to 256 points, the stripe height forced
 * (TSWARP_SDTW_WF_SPLIT) and the same call on one block (TSWARP_SDTW_WF_SPLIT=0 and
 * TSWARP_SDTW_WF_RB=1, the split's one row per lane): the same bits, values and
 * gradients, whichever gradients are wanted. Else pairs of up to 4,000 points (1,500 quick)
 * with the split's own choice or a forced height. Both against the CPU, and the device
 * twin (synchronous or not) equal to the host-memory call bit for bit.
 */
static void split_case(tsw_t_rng *r, int exact)
{
    const tsw_dtype dt = TSW_F32;
    const int64_t dim = tsw_t_int(r, 1, 2);
    const int64_t count = exact ? tsw_t_int(r, 1, 8) : tsw_t_int(r, 1, 4);
    const int rb = 1; /* the split's */
    const int64_t hi = exact ? 256 : g_quick ? 1500 : 4000;
    int64_t lx[8], ly[8];
    random_lengths(r, count, hi, lx, ly);
    int64_t L = 1;
    for (int64_t k = 0; k < count; ++k)
        L = lx[k] > L ? lx[k] : L;
    /* a stripe height below the longest series (a split), or the choice (long pairs) */
    char rows[32] = "";
    if (exact || tsw_t_int(r, 0, 1)) {
        const int unit = 32 * rb, most = (int)((L - 1) / unit);
        snprintf(rows, sizeof rows, "%d", unit * (most > 0 ? (int)tsw_t_int(r, 1, most) : 1));
    }
    batch x = make_batch(r, count, dim, lx, tsw_t_int(r, 0, 1));
    batch y = make_batch(r, count, dim, ly, tsw_t_int(r, 0, 1));
    tsw_params p;
    random_params(r, 5, 0, &p); /* gamma <= 10: the wavefront kernel's */
    const int want = tsw_t_int(r, 0, 3); /* 0 both gradients, 1 x, 2 y, 3 none */
    char ctx[200];
    snprintf(ctx, sizeof ctx,
             "split dim %" PRId64 " count %" PRId64 " gamma %g norm %d window %d/%g rows %s "
             "rows/lane %d want %d",
             dim, count, p.gamma, p.normalize, (int)p.window, p.window_radius,
             rows[0] ? rows : "auto", rb, want);
    float *xv = as_dtype(x.v, x.rows * dim, dt), *yv = as_dtype(y.v, y.rows * dim, dt);
    tsw_collection cx = view(&x, xv), cy = view(&y, yv);
    const size_t es = esz(dt);
    void *v[3], *gx[3], *gy[3]; /* [0] CPU, [1] split, [2] one block */
    for (int k = 0; k < 3; ++k) {
        v[k] = malloc(es * count);
        gx[k] = want == 0 || want == 1 ? as_dtype(x.v, x.rows * dim, dt) : NULL;
        gy[k] = want == 0 || want == 2 ? as_dtype(y.v, y.rows * dim, dt) : NULL;
    }
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    int ok = CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[0], gx[0], gy[0], &ec), TSW_OK);
    char rbs[2] = {(char)('0' + rb), 0};
    setenv("TSWARP_SDTW_WF_BI", "0", 1); /* the one-wave split (bi_case: the two waves) */
    if (rows[0])
        setenv("TSWARP_SDTW_WF_SPLIT", rows, 1);
    if (exact || tsw_t_int(r, 0, 1))
        setenv("TSWARP_SDTW_WF_RB", rbs, 1);
    ok &= CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[1], gx[1], gy[1], &eg), TSW_OK);
    if (exact) {
        setenv("TSWARP_SDTW_WF_SPLIT", "0", 1);
        ok &= CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[2], gx[2], gy[2], &eg),
                       TSW_OK);
    }
    if (!ok) {
        TSW_T_NOTE("  %s: %s\n", ctx, tsw_last_error_detail());
        goto done;
    }
    cmp_call(&x, &y, dt, v[1], v[0], gx[1], gx[0], gy[1], gy[0], ctx);
    if (exact) {
        if (!CHECK(same_bits(&x, &y, dt, dim, v[1], v[2], gx[1], gx[2], gy[1], gy[2]))) {
            double dv = 0, dg = 0;
            for (int64_t k = 0; k < count; ++k)
                dv = fmax(dv, fabs(get(v[1], dt, k) - get(v[2], dt, k)));
            for (int64_t k = 0; gx[1] && k < x.rows * dim; ++k)
                dg = fmax(dg, fabs(get(gx[1], dt, k) - get(gx[2], dt, k)));
            for (int64_t k = 0; gy[1] && k < y.rows * dim; ++k)
                dg = fmax(dg, fabs(get(gy[1], dt, k) - get(gy[2], dt, k)));
            TSW_T_NOTE("  %s: split and one block differ (values by %.3g, gradients by %.3g)\n",
                       ctx, dv, dg);
        }
    }
    if (rows[0])
        setenv("TSWARP_SDTW_WF_SPLIT", rows, 1);
    else
        unsetenv("TSWARP_SDTW_WF_SPLIT");
    check_twin(r, &p, dt, dim, &x, &y, xv, yv, v[1], gx[1], gy[1], &eg, ctx); /* same bits */
done:
    unsetenv("TSWARP_SDTW_WF_SPLIT");
    unsetenv("TSWARP_SDTW_WF_RB");
    unsetenv("TSWARP_SDTW_WF_BI");
    free_case(v, gx, gy, xv, yv, &x, &y);
}

/*
 * The two-wave kernel (sdtw_bi.cuh: the forward recursions from both corners at once and
 * E = exp(-(A + B - c - Z) / gamma)), float32 small batches of dim 1 or 2 with gradients:
 * on by its own choice (TSWARP_SDTW_WF_BI unset: batches that fit the SMs), on for any
 * batch ("1") or with a forced stripe height (32 .. 512 rows: several stripes a pair, the
 * transfer warp's hand-over), pairs of 1 to 300, 1,500 or 4,000 points (1,500 quick; equal
 * lengths one time in three; tall and wide grids, where the crossing lies below or right of
 * whole stripes), gamma up to 10, bands, the divergence, either or both gradients.
 * Against the CPU to tol_of (values and gradients), the device twin (synchronous or not)
 * equal bit for bit, and the same call twice equal bit for bit (no atomics: the sums have a
 * fixed order).
 */
static void bi_case(tsw_t_rng *r)
{
    const tsw_dtype dt = TSW_F32;
    const int64_t dim = tsw_t_int(r, 1, 2);
    const int64_t count = tsw_t_int(r, 1, 4);
    const int pick = (int)tsw_t_int(r, 0, 3);
    const int64_t hi = pick < 2 ? 300 : pick == 2 || g_quick ? 1500 : 4000;
    int64_t lx[8], ly[8];
    random_lengths(r, count, hi, lx, ly);
    char knob[16];
    const int how = tsw_t_int(r, 0, 2);
    if (how == 0)
        unsetenv("TSWARP_SDTW_WF_BI");
    else if (how == 1)
        setenv("TSWARP_SDTW_WF_BI", "1", 1);
    else {
        snprintf(knob, sizeof knob, "%d", 32 * (int)tsw_t_int(r, 1, 16));
        setenv("TSWARP_SDTW_WF_BI", knob, 1);
    }
    batch x = make_batch(r, count, dim, lx, tsw_t_int(r, 0, 1));
    batch y = make_batch(r, count, dim, ly, tsw_t_int(r, 0, 1));
    tsw_params p;
    random_params(r, 5, 0, &p); /* gamma <= 10: the wavefront kernels' */
    const int want = tsw_t_int(r, 0, 2); /* 0 both gradients, 1 x, 2 y */
    char ctx[200];
    snprintf(ctx, sizeof ctx,
             "bi dim %" PRId64 " count %" PRId64 " gamma %g norm %d window %d/%g knob %s want %d",
             dim, count, p.gamma, p.normalize, (int)p.window, p.window_radius,
             how == 0 ? "unset" : how == 1 ? "1" : knob, want);
    float *xv = as_dtype(x.v, x.rows * dim, dt), *yv = as_dtype(y.v, y.rows * dim, dt);
    tsw_collection cx = view(&x, xv), cy = view(&y, yv);
    const size_t es = esz(dt);
    void *v[3], *gx[3], *gy[3]; /* [0] CPU, [1] and [2] GPU twice */
    for (int k = 0; k < 3; ++k) {
        v[k] = malloc(es * count);
        gx[k] = want != 2 ? as_dtype(x.v, x.rows * dim, dt) : NULL;
        gy[k] = want != 1 ? as_dtype(y.v, y.rows * dim, dt) : NULL;
    }
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    int ok = CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[0], gx[0], gy[0], &ec), TSW_OK);
    ok &= CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[1], gx[1], gy[1], &eg), TSW_OK);
    ok &= CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[2], gx[2], gy[2], &eg), TSW_OK);
    if (!ok) {
        TSW_T_NOTE("  %s: %s\n", ctx, tsw_last_error_detail());
        goto done;
    }
    cmp_call(&x, &y, dt, v[1], v[0], gx[1], gx[0], gy[1], gy[0], ctx);
    if (!CHECK(same_bits(&x, &y, dt, dim, v[1], v[2], gx[1], gx[2], gy[1], gy[2])))
        TSW_T_NOTE("  %s: two calls differ\n", ctx);
    check_twin(r, &p, dt, dim, &x, &y, xv, yv, v[1], gx[1], gy[1], &eg, ctx); /* same bits */
done:
    unsetenv("TSWARP_SDTW_WF_BI");
    free_case(v, gx, gy, xv, yv, &x, &y);
}

/*
 * Soft-DTW values of paired batches (tsw_paired): float32 batches of dim 1 or 2 run on the
 * wavefront kernel's value-only variant (R in float32, sdtw_wf.cuh, VAL) when it is chosen
 * or forced; the others on the many-pairs engine. Against the CPU to tol_of; the device
 * twin and a caller-owned workspace give the same bits; the many-pairs engine
 * (TSWARP_SDTW_WF=0) agrees to the same tolerance.
 */
static void paired_case(tsw_t_rng *r, int big)
{
    const tsw_dtype dt = tsw_t_int(r, 0, 4) ? TSW_F32 : TSW_F64;
    const int64_t dim = tsw_t_int(r, 0, 5) ? tsw_t_int(r, 1, 2) : 3;
    const int64_t count = big ? (int64_t)tsw_t_int(r, 280, 500) : (int64_t)tsw_t_int(r, 1, 12);
    const int64_t hi = big ? 64 : (tsw_t_int(r, 0, 3) ? 60 : tsw_t_int(r, 0, 1) ? 600 : 2048);
    const char *rb = random_rb(r, !big);
    int64_t lx[512], ly[512];
    random_lengths(r, count, hi, lx, ly);
    batch x = make_batch(r, count, dim, lx, tsw_t_int(r, 0, 1));
    batch y = make_batch(r, count, dim, ly, tsw_t_int(r, 0, 1));
    tsw_params p;
    random_params(r, 5, 1, &p);
    char ctx[200];
    snprintf(ctx, sizeof ctx,
             "paired %s dim %" PRId64 " count %" PRId64 " gamma %g norm %d window %d/%g "
             "rows/lane %s",
             dt == TSW_F32 ? "f32" : "f64", dim, count, p.gamma, p.normalize, (int)p.window,
             p.window_radius, rb ? rb : "auto");
    void *xv = as_dtype(x.v, x.rows * dim, dt), *yv = as_dtype(y.v, y.rows * dim, dt);
    tsw_collection cx = view(&x, xv), cy = view(&y, yv);
    const size_t es = esz(dt);
    void *v_cpu = malloc(es * count), *v_gpu = malloc(es * count), *v_eng = malloc(es * count);
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    int rc_cpu = tsw_paired(&p, dt, dim, &cx, &cy, v_cpu, &ec);
    int rc_gpu = tsw_paired(&p, dt, dim, &cx, &cy, v_gpu, &eg);
    setenv("TSWARP_SDTW_WF", "0", 1);
    int rc_eng = tsw_paired(&p, dt, dim, &cx, &cy, v_eng, &eg);
    unsetenv("TSWARP_SDTW_WF");
    if (!CHECK_RC(rc_cpu, TSW_OK) || !CHECK_RC(rc_gpu, TSW_OK) || !CHECK_RC(rc_eng, TSW_OK)) {
        TSW_T_NOTE("  %s: %s\n", ctx, tsw_last_error_detail());
        goto done;
    }
    for (int64_t k = 0; k < count; ++k) {
        const double e = get(v_cpu, dt, k);
        const double g = get(v_gpu, dt, k), ge = get(v_eng, dt, k);
        /* +inf: no admissible path (an Itakura window and lengths far apart) */
        const double err = g == e ? 0 : fabs(g - e) / fmax(1, fabs(e));
        const double err_e = ge == e ? 0 : fabs(ge - e) / fmax(1, fabs(e));
        record(dt, 0, isnan(err) ? INFINITY : err);
        if (!CHECK(err <= tol_of(dt)) || !CHECK(err_e <= tol_of(dt)))
            TSW_T_NOTE("  %s: value %" PRId64 " (%" PRId64 " x %" PRId64 "): gpu %.12g "
                       "engine %.12g cpu %.12g\n",
                       ctx, k, x.len[k], y.len[k], g, ge, e);
    }
    {
        /* the device twin, with and without a caller-owned workspace: the same bits */
        void *dx = dev_copy(xv, es * x.rows * dim), *dy = dev_copy(yv, es * y.rows * dim);
        void *dvals = dev_copy(NULL, es * count);
        tsw_collection ddx = view(&x, dx), ddy = view(&y, dy);
        size_t wbytes = 0;
        tsw_exec ea = eg;
        ea.cuda_async = tsw_t_int(r, 0, 1);
        if (CHECK_RC(tsw_paired_device(&p, dt, dim, &ddx, &ddy, dvals, &ea), TSW_OK)) {
            void *hv = host_copy(dvals, es * count);
            if (!CHECK(memcmp(hv, v_gpu, es * count) == 0))
                TSW_T_NOTE("  %s: device twin differs\n", ctx);
            free(hv);
        }
        if (CHECK_RC(tsw_paired_workspace_size(&p, dt, dim, &ddx, &ddy, &eg, &wbytes),
                     TSW_OK)) {
            void *ws = dev_copy(NULL, wbytes ? wbytes : 1);
            tsw_exec ew = ea;
            ew.cuda_workspace = ws;
            ew.cuda_workspace_bytes = wbytes;
            CHECK(cudaMemset(dvals, 0, es * count) == cudaSuccess);
            if (CHECK_RC(tsw_paired_device(&p, dt, dim, &ddx, &ddy, dvals, &ew), TSW_OK)) {
                void *hv = host_copy(dvals, es * count);
                if (!CHECK(memcmp(hv, v_gpu, es * count) == 0))
                    TSW_T_NOTE("  %s: workspace call differs\n", ctx);
                free(hv);
            }
            cudaFree(ws);
        }
        cudaFree(dx);
        cudaFree(dy);
        cudaFree(dvals);
    }
done:
    free(xv);
    free(yv);
    free(v_cpu);
    free(v_gpu);
    free(v_eng);
    free_batch(&x);
    free_batch(&y);
}

/* Cost matrices: padded (count, n, m) with per-pair lengths; against the CPU. */
static void cost_case(tsw_t_rng *r)
{
    const tsw_dtype dt = tsw_t_int(r, 0, 1) ? TSW_F64 : TSW_F32;
    /* up to 600 rows: several stripes, so the split mode (blocks per pair) runs too */
    const int64_t count = tsw_t_int(r, 1, 6), n = tsw_t_int(r, 1, 600), m = tsw_t_int(r, 1, 300);
    int64_t lx[6], ly[6];
    const int ragged = tsw_t_int(r, 0, 1);
    for (int64_t k = 0; k < count; ++k) {
        lx[k] = ragged ? tsw_t_int(r, 1, (int)n) : n;
        ly[k] = ragged ? tsw_t_int(r, 1, (int)m) : m;
    }
    const size_t es = esz(dt), cells = (size_t)(count * n * m);
    double *c = malloc(sizeof(double) * cells);
    for (size_t i = 0; i < cells; ++i)
        c[i] = tsw_t_uniform(r, 0, 3);
    void *cv = as_dtype(c, (int64_t)cells, dt);
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = tsw_t_uniform(r, 0.01, 2);
    g_gamma = p.gamma;
    void *v1 = malloc(es * count), *v2 = malloc(es * count);
    void *g1 = malloc(es * cells), *g2 = malloc(es * cells);
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    const int64_t *px = ragged ? lx : NULL, *py = ragged ? ly : NULL;
    if (CHECK_RC(tsw_soft_dtw_cost_grad(&p, dt, count, n, m, px, py, cv, v1, g1, &ec), TSW_OK) &&
        CHECK_RC(tsw_soft_dtw_cost_grad(&p, dt, count, n, m, px, py, cv, v2, g2, &eg), TSW_OK)) {
        for (int64_t k = 0; k < count; ++k) {
            double e = get(v1, dt, k), g = get(v2, dt, k);
            double err = fabs(g - e) / fmax(1, fabs(e));
            record(dt, 0, err);
            if (!CHECK(err <= tol_of(dt)))
                TSW_T_NOTE("  cost: value %" PRId64 ": gpu %.12g cpu %.12g\n", k, g, e);
        }
        double worst = 0;
        for (size_t i = 0; i < cells; ++i)
            worst = fmax(worst, fabs(get(g1, dt, (int64_t)i) - get(g2, dt, (int64_t)i)));
        record(dt, 1, worst);
        if (!CHECK(worst <= tol_of(dt)))
            TSW_T_NOTE("  cost: gradient differs by %g (n %" PRId64 " m %" PRId64 ")\n", worst,
                       n, m);
        /* device twin */
        void *dc = dev_copy(cv, es * cells), *dv = dev_copy(NULL, es * count);
        void *dg = dev_copy(NULL, es * cells);
        tsw_exec ea = eg;
        ea.cuda_async = tsw_t_int(r, 0, 1);
        if (CHECK_RC(tsw_soft_dtw_cost_grad_device(&p, dt, count, n, m, px, py, dc, dv, dg, &ea),
                     TSW_OK)) {
            void *hv = host_copy(dv, es * count), *hg = host_copy(dg, es * cells);
            CHECK(memcmp(hv, v2, es * count) == 0);
            CHECK(memcmp(hg, g2, es * cells) == 0);
            free(hv);
            free(hg);
        }
        cudaFree(dc);
        cudaFree(dv);
        cudaFree(dg);
    }
    free(c);
    free(cv);
    free(v1);
    free(v2);
    free(g1);
    free(g2);
}

/*
 * The matrix form (sdtw_mat.cuh: the costs formed first, the wavefront kernel on them, the
 * gradients from E by products), float32: dims 1 to 130, the crossover forced both ways
 * (TSWARP_SDTW_MAT=1 for every dim, 0 for none: the fused kernels) or left to its choice,
 * small and large batches, one block a pair or the split (pairs up to 3,000 points: forced
 * stripes past 2,048), windows, the divergence, ragged collections with gaps. Every call
 * against the CPU (float64 inside); the matrix form's values without gradients equal those
 * with bit for bit, and a budget so small that the problems run in many chunks
 * (TSWARP_SDTW_BUDGET) gives the one-chunk bits.
 */
static void mat_case(tsw_t_rng *r)
{
    const tsw_dtype dt = TSW_F32;
    static const int64_t dims[8] = {1, 2, 3, 5, 16, 33, 64, 130};
    const int kind = tsw_t_int(r, 0, 5); /* 0 a large batch, 1 long pairs, else small */
    /* (long pairs up to 16 dims: the CPU reference's time) */
    const int64_t dim = dims[tsw_t_int(r, 0, kind == 1 ? 4 : 7)];
    const int64_t count = kind == 0 ? (int64_t)tsw_t_int(r, 150, 400)
                          : kind == 1 ? (int64_t)tsw_t_int(r, 1, 3)
                                      : (int64_t)tsw_t_int(r, 1, 24);
    const int64_t hi = kind == 0 ? 48 : kind == 1 ? (g_quick ? 2300 : 3000)
                                                  : (tsw_t_int(r, 0, 2) ? 90 : 600);
    int64_t lx[512], ly[512];
    random_lengths(r, count, hi, lx, ly);
    batch x = make_batch(r, count, dim, lx, tsw_t_int(r, 0, 1));
    batch y = make_batch(r, count, dim, ly, tsw_t_int(r, 0, 1));
    tsw_params p;
    random_params(r, 5, 0, &p); /* gamma 1e-3 .. 10 */
    const char *knob = tsw_t_int(r, 0, 2) == 0 ? NULL : "1";
    char ctx[220];
    snprintf(ctx, sizeof ctx,
             "mat dim %" PRId64 " count %" PRId64 " max len %" PRId64 " gamma %g norm %d "
             "window %d/%g TSWARP_SDTW_MAT=%s",
             dim, count, hi, p.gamma, p.normalize, (int)p.window, p.window_radius,
             knob ? knob : "unset");
    void *xv = as_dtype(x.v, x.rows * dim, dt), *yv = as_dtype(y.v, y.rows * dim, dt);
    tsw_collection cx = view(&x, xv), cy = view(&y, yv);
    const size_t es = esz(dt);
    void *v[3] = {malloc(es * count), malloc(es * count), malloc(es * count)};
    void *gx[3] = {as_dtype(x.v, x.rows * dim, dt), as_dtype(x.v, x.rows * dim, dt),
                   as_dtype(x.v, x.rows * dim, dt)};
    void *gy[3] = {as_dtype(y.v, y.rows * dim, dt), as_dtype(y.v, y.rows * dim, dt),
                   as_dtype(y.v, y.rows * dim, dt)};
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    /* [0] the CPU, [1] the matrix form (or the choice), [2] the fused kernels */
    int rc0 = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[0], gx[0], gy[0], &ec);
    if (knob)
        setenv("TSWARP_SDTW_MAT", knob, 1);
    int rc1 = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[1], gx[1], gy[1], &eg);
    setenv("TSWARP_SDTW_MAT", "0", 1);
    int rc2 = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v[2], gx[2], gy[2], &eg);
    unsetenv("TSWARP_SDTW_MAT");
    if (!CHECK_RC(rc0, TSW_OK) || !CHECK_RC(rc1, TSW_OK) || !CHECK_RC(rc2, TSW_OK)) {
        TSW_T_NOTE("  %s: %s\n", ctx, tsw_last_error_detail());
        goto done;
    }
    {
        char c1[260], c2[260];
        snprintf(c1, sizeof c1, "%s (matrix)", ctx);
        snprintf(c2, sizeof c2, "%s (fused)", ctx);
        cmp_call(&x, &y, dt, v[1], v[0], gx[1], gx[0], gy[1], gy[0], c1);
        cmp_call(&x, &y, dt, v[2], v[0], gx[2], gx[0], gy[2], gy[0], c2);
    }
    if (knob)
        setenv("TSWARP_SDTW_MAT", knob, 1);
    {
        /* values alone: the same bits */
        void *vn = malloc(es * count);
        if (CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, vn, NULL, NULL, &eg), TSW_OK) &&
            !CHECK(memcmp(vn, v[1], es * count) == 0))
            TSW_T_NOTE("  %s: values without gradients differ\n", ctx);
        /* many chunks: the same bits */
        void *gxc = as_dtype(x.v, x.rows * dim, dt), *gyc = as_dtype(y.v, y.rows * dim, dt);
        char budget[32];
        snprintf(budget, sizeof budget, "%lld", (long long)tsw_t_int(r, 1, 4) << 20);
        setenv("TSWARP_SDTW_BUDGET", budget, 1);
        if (CHECK_RC(tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, vn, gxc, gyc, &eg), TSW_OK) &&
            !CHECK(same_bits(&x, &y, dt, dim, vn, v[1], gxc, gx[1], gyc, gy[1])))
            TSW_T_NOTE("  %s: chunks (budget %s) differ\n", ctx, budget);
        unsetenv("TSWARP_SDTW_BUDGET");
        free(vn);
        free(gxc);
        free(gyc);
    }
    if (tsw_t_int(r, 0, 1))
        check_twin(r, &p, dt, dim, &x, &y, xv, yv, v[1], gx[1], gy[1], &eg, ctx);
    unsetenv("TSWARP_SDTW_MAT");
done:
    free_case(v, gx, gy, xv, yv, &x, &y);
}

/* gamma 1e-4 and 1e3, both precisions, several stripes: values and gradients finite. */
static void extreme_gamma(tsw_t_rng *r)
{
    static const double gammas[2] = {1e-4, 1e3};
    for (int t = 0; t < 8; ++t) {
        const tsw_dtype dt = t & 1 ? TSW_F64 : TSW_F32;
        int64_t lx[2] = {tsw_t_int(r, 1, 700), tsw_t_int(r, 1, 700)};
        int64_t ly[2] = {tsw_t_int(r, 1, 700), tsw_t_int(r, 1, 700)};
        batch x = make_batch(r, 2, 2, lx, 0), y = make_batch(r, 2, 2, ly, 0);
        void *xv = as_dtype(x.v, x.rows * 2, dt), *yv = as_dtype(y.v, y.rows * 2, dt);
        tsw_collection cx = view(&x, xv), cy = view(&y, yv);
        tsw_params p;
        tsw_params_default(&p, TSW_SOFT_DTW);
        p.gamma = gammas[(t >> 1) & 1];
        p.normalize = (t >> 2) & 1;
        const size_t es = esz(dt);
        void *v = malloc(es * 2), *gx = malloc(es * x.rows * 2), *gy = malloc(es * y.rows * 2);
        tsw_exec e;
        tsw_exec_default(&e);
        e.device = TSW_DEVICE_CUDA;
        if (CHECK_RC(tsw_soft_dtw_grad(&p, dt, 2, &cx, &cy, v, gx, gy, &e), TSW_OK)) {
            int finite = isfinite(get(v, dt, 0)) && isfinite(get(v, dt, 1));
            for (int64_t i = 0; i < x.rows * 2; ++i)
                finite &= isfinite(get(gx, dt, i));
            for (int64_t i = 0; i < y.rows * 2; ++i)
                finite &= isfinite(get(gy, dt, i));
            if (!CHECK(finite))
                TSW_T_NOTE("  gamma %g %s normalize %d: non-finite output\n", p.gamma,
                           dt == TSW_F32 ? "f32" : "f64", p.normalize);
        }
        free(v);
        free(gx);
        free(gy);
        free(xv);
        free(yv);
        free_batch(&x);
        free_batch(&y);
    }
}

/* NaN in device inputs: TSW_ENONFINITE and nothing written. */
static void test_faults(void)
{
    const int64_t n = 50, dim = 2;
    float h[100];
    for (int i = 0; i < 100; ++i)
        h[i] = (float)i * 0.01f;
    h[77] = NAN;
    float *dx = dev_copy(h, sizeof h), *dy = dev_copy(h, sizeof h);
    float sentinel[100];
    for (int i = 0; i < 100; ++i)
        sentinel[i] = 12345.f;
    float *dv = dev_copy(sentinel, sizeof(float)), *dg = dev_copy(sentinel, sizeof sentinel);
    tsw_collection c;
    memset(&c, 0, sizeof c);
    c.values = dx;
    c.length = n;
    c.count = 1;
    tsw_collection cy = c;
    cy.values = dy;
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    tsw_exec e;
    tsw_exec_default(&e);
    /* asynchronous calls: the kernels are queued before the check's answer is read, and
     * write nothing */
    for (int async = 0; async <= 1; ++async) {
        e.cuda_async = async;
        CHECK_RC(tsw_soft_dtw_grad_device(&p, TSW_F32, dim, &c, &cy, dv, dg, NULL, &e),
                 TSW_ENONFINITE);
        CHECK_RC(tsw_paired_device(&p, TSW_F32, dim, &c, &cy, dv, &e), TSW_ENONFINITE);
        float back[100];
        cudaMemcpy(back, dg, sizeof back, cudaMemcpyDeviceToHost);
        CHECK(memcmp(back, sentinel, sizeof back) == 0);
        cudaMemcpy(back, dv, sizeof(float), cudaMemcpyDeviceToHost);
        CHECK(memcmp(back, sentinel, sizeof(float)) == 0);
    }
    e.cuda_async = 2;
    CHECK_RC(tsw_soft_dtw_grad_device(&p, TSW_F32, dim, &c, &cy, dv, dg, NULL, &e), TSW_EINVAL);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dv);
    cudaFree(dg);
}

/* A long pair: many stripes per block; times printed (not asserted). */
static void test_long(tsw_t_rng *r)
{
    const int64_t n = g_quick ? 2048 : 8192;
    int64_t lens[1] = {n};
    batch x = make_batch(r, 1, 1, lens, 0), y = make_batch(r, 1, 1, lens, 0);
    float *xv = as_dtype(x.v, n, TSW_F32), *yv = as_dtype(y.v, n, TSW_F32);
    tsw_collection cx = view(&x, xv), cy = view(&y, yv);
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = 0.1;
    float v, *gx = malloc(sizeof(float) * n), *gy = malloc(sizeof(float) * n);
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CUDA;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = tsw_soft_dtw_grad(&p, TSW_F32, 1, &cx, &cy, &v, gx, gy, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (CHECK_RC(rc, TSW_OK)) {
        int finite = isfinite(v);
        for (int64_t i = 0; i < n; ++i)
            finite &= isfinite(gx[i]) && isfinite(gy[i]);
        CHECK(finite);
        /* the sum of the gradients of a translation-invariant cost is zero */
        double s = 0, a = 0;
        for (int64_t i = 0; i < n; ++i)
            s += (double)gx[i] + gy[i], a += fabs(gx[i]) + fabs(gy[i]);
        CHECK(fabs(s) <= 1e-3 * fmax(1, a));
        printf("[gpu] soft-DTW gradient %" PRId64 " x %" PRId64 " float32: %.1f ms with "
               "transfers (R: %.0f MB)\n",
               n, n, (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
               (double)(2 * n - 1) * n * 4 / 1e6);
    }
    free(xv);
    free(yv);
    free(gx);
    free(gy);
    free_batch(&x);
    free_batch(&y);
}

/* One pair of 10^6 points (2 x 10^5 quick) in a radius of 10, float64: the band's layout
 * (n w values, where the grid's layout would need 8 TB) and steps; equal to the CPU. */
static void test_long_band(tsw_t_rng *r)
{
    const int64_t n = g_quick ? 200000 : 1000000;
    int64_t lens[1] = {n};
    batch x = make_batch(r, 1, 1, lens, 0), y = make_batch(r, 1, 1, lens, 0);
    tsw_collection cx = view(&x, x.v), cy = view(&y, y.v);
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.window = TSW_WINDOW_SAKOE_CHIBA;
    p.window_radius = 10;
    double vc, vg, *gxc = malloc(sizeof(double) * n), *gyc = malloc(sizeof(double) * n);
    double *gxg = malloc(sizeof(double) * n), *gyg = malloc(sizeof(double) * n);
    tsw_exec ec, eg;
    tsw_exec_default(&ec);
    ec.device = TSW_DEVICE_CPU;
    tsw_exec_default(&eg);
    eg.device = TSW_DEVICE_CUDA;
    const double t0 = tsw_t_seconds();
    int rc_c = tsw_soft_dtw_grad(&p, TSW_F64, 1, &cx, &cy, &vc, gxc, gyc, &ec);
    const double t1 = tsw_t_seconds();
    int rc_g = tsw_soft_dtw_grad(&p, TSW_F64, 1, &cx, &cy, &vg, gxg, gyg, &eg);
    const double t2 = tsw_t_seconds();
    if (CHECK_RC(rc_c, TSW_OK) && CHECK_RC(rc_g, TSW_OK)) {
        CHECK(fabs(vg - vc) <= 1e-9 * fmax(1, fabs(vc)));
        double gm = 0, err = 0;
        for (int64_t i = 0; i < n; ++i) {
            gm = fmax(gm, fmax(fabs(gxc[i]), fabs(gyc[i])));
            err = fmax(err, fmax(fabs(gxg[i] - gxc[i]), fabs(gyg[i] - gyc[i])));
        }
        if (!CHECK(err <= 1e-9 * fmax(1, gm)))
            TSW_T_NOTE("  band %" PRId64 ": gradient error %.3g of %.3g\n", n, err, gm);
        printf("[gpu] soft-DTW gradient %" PRId64 " x %" PRId64 " radius 10 float64: GPU %.1f ms, "
               "CPU %.1f ms\n",
               n, n, (t2 - t1) * 1e3, (t1 - t0) * 1e3);
    } else {
        TSW_T_NOTE("  band %" PRId64 ": %s\n", n, tsw_last_error_detail());
    }
    free(gxc);
    free(gyc);
    free(gxg);
    free(gyg);
    free_batch(&x);
    free_batch(&y);
}

/* TSWARP_GPU_TEST_ONLY / _SKIP (comma-separated: random, paired, split, bi, cost, extreme,
 * faults, long, band) run those parts only / all but those, as test_cuda's sections (e.g.
 * under racecheck); unset: all. */
#define section_on tsw_t_want

int main(void)
{
    int count = 0;
    if (!tsw_has_cuda() || tsw_cuda_device_count(&count) != TSW_OK || count == 0) {
        printf("no CUDA backend or device: skipped\n");
        return SKIP_CODE;
    }
    tsw_cuda_device info;
    if (tsw_cuda_device_info(0, &info) != TSW_OK || !info.runnable) {
        printf("no code for this device: skipped\n");
        return SKIP_CODE;
    }
    g_quick = tsw_t_quick();
    const char *env_seed = getenv("TSWARP_TEST_SEED");
    uint64_t seed = env_seed && *env_seed ? strtoull(env_seed, NULL, 0)
                                          : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    printf("[gpu] soft-DTW grad: seed %" PRIu64 " (replay: TSWARP_TEST_SEED=%" PRIu64 ")\n",
           seed, seed);
    tsw_t_rng r = {seed};
    const int cases = g_quick ? 30 : 300;
    if (section_on("random")) {
        for (int i = 0; i < cases; ++i)
            random_case(&r, 0);
        for (int i = 0; i < (g_quick ? 2 : 8); ++i)
            random_case(&r, 1);
        for (int i = 0; i < (g_quick ? 3 : 12); ++i)
            random_case(&r, 2);
    }
    if (section_on("paired")) {
        for (int i = 0; i < (g_quick ? 20 : 150); ++i)
            paired_case(&r, 0);
        for (int i = 0; i < (g_quick ? 3 : 12); ++i)
            paired_case(&r, 1);
    }
    unsetenv("TSWARP_SDTW_WF_RB");
    if (section_on("split"))
        for (int i = 0; i < (g_quick ? 40 : 120); ++i)
            split_case(&r, i % 4 != 3);
    if (section_on("bi"))
        for (int i = 0; i < (g_quick ? 20 : 80); ++i)
            bi_case(&r);
    if (section_on("cost"))
        for (int i = 0; i < (g_quick ? 10 : 60); ++i)
            cost_case(&r);
    if (section_on("mat"))
        for (int i = 0; i < (g_quick ? 16 : 60); ++i)
            mat_case(&r);
    if (section_on("extreme"))
        extreme_gamma(&r);
    if (section_on("faults"))
        test_faults();
    if (section_on("long"))
        test_long(&r);
    if (section_on("band")) {
        for (int i = 0; i < (g_quick ? 8 : 40); ++i)
            random_case(&r, 3);
        test_long_band(&r);
    }
    printf("[gpu] soft-DTW grad: largest relative differences: f32 value %.3g gradient %.3g; "
           "f64 value %.3g gradient %.3g\n",
           g_maxerr[TSW_F32][0], g_maxerr[TSW_F32][1], g_maxerr[TSW_F64][0],
           g_maxerr[TSW_F64][1]);
    return TSW_TEST_END();
}
