/*
 * The CUDA backend against the CPU backend (ctest label "gpu"; tests/gpu/run.sh runs it,
 * and compute-sanitizer over it, on a GPU machine).
 *
 * Fresh random inputs on every run (the seed is printed first; TSWARP_TEST_SEED=<seed>
 * replays a run): random walks and uniform noise, float32 and float64, dims 1 to 64,
 * lengths 1 to 20,000 (and 1 x 4,200,000), every window, measure, local cost and parameter;
 * one pair (the one-pair batch path and, from 2^22 cells on, the long-pair kernel), cdist,
 * pdist FULL and CONDENSED, equal and variable lengths with offsets (gaps between the
 * series hold NaN, which no series includes). Then the *_device entry points (device
 * pointers, user streams, caller workspaces), and the faults: NaN and bad timestamps
 * found on the device, out of memory, no leak over 200 failing calls, host threads
 * sharing the GPU, device information, progress and cancellation, and tswarp's memory
 * pool (what it caches, emptying it, TSWARP_CUDA_CACHE_BYTES in a child process).
 *
 * Agreement: GPU and CPU values differ by at most tol * max(1, |cpu|, scale), tol = 1e-12
 * for float64, 1e-5 for float32 DTW and TWED, 1e-4 for float32 soft-DTW; +inf exactly
 * where the CPU gives +inf. scale is 0 except for soft-DTW, whose value is a difference
 * of large terms: there it is the entropy bound gamma (n + m) ln 3 (the value lies
 * between the best path's cost and that cost minus gamma ln #paths) plus, for the
 * divergence, the largest of the raw terms sdtw(a,b), sdtw(a,a), sdtw(b,b).
 *
 * Exit status 77 (ctest's SKIP_RETURN_CODE) without the CUDA backend, without a device, or
 * when this build has no code for the device. Environment:
 *   TSWARP_TEST_QUICK=1       small sizes (the compute-sanitizer runs)
 *   TSWARP_TEST_SEED=N        the random seed
 *   TSWARP_GPU_TEST_ONLY=a,b  run only these sections, TSWARP_GPU_TEST_SKIP=a,b all but
 *                             these: info pairs long batch device faults oom leak threads
 *                             progress cache multi
 *   TSWARP_GPU_DEVICE=k       the device ordinal (default 0)
 * Lines starting with "[gpu]" summarise the run (sections, times, largest differences).
 */
#include "harness.h"

#include <pthread.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#define SKIP_CODE 77
#define TSW__TEST_MAX_DEV 64
#define SENTINEL 0x5A
#define LN3 1.0986122886681098
#define TSW_LONG_CELLS ((int64_t)1 << 22) /* src/cuda/kernels.h: TSW__LONG_PAIR_MIN_CELLS */

static int g_quick;
static int g_dev;
static const int64_t DIMS[5] = {1, 2, 3, 12, 64};
static const char *const MNAME[3] = {"DTW", "TWED", "soft-DTW"};

/* ---- small helpers ------------------------------------------------------------------------ */

static size_t esz(tsw_dtype dt) { return dt == TSW_F32 ? sizeof(float) : sizeof(double); }

static double get(const void *buf, tsw_dtype dt, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)buf)[k] : ((const double *)buf)[k];
}

static int bytes_are(const void *p, int byte, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; ++i)
        if (c[i] != (unsigned char)byte)
            return 0;
    return 1;
}

/* A CUDA runtime call of the test itself. */
static int cuda_ok_at(cudaError_t err, const char *file, int line, const char *expr)
{
    int ok = err == cudaSuccess;
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: CUDA call failed: %s: %s\n", file, line, expr,
                cudaGetErrorString(err));
    return ok;
}
#define CUDA_OK(call) cuda_ok_at((call), __FILE__, __LINE__, #call)

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (!CUDA_OK(cudaMalloc(&p, bytes ? bytes : 1)))
        return NULL;
    return p;
}

static void *dev_copy(const void *host, size_t bytes)
{
    void *p = dev_alloc(bytes);
    /* cudaMemcpy from pageable memory may return before the data has landed, and the
     * library's non-blocking streams do not wait for the legacy stream: synchronise */
    if (p && bytes && CUDA_OK(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice)))
        CUDA_OK(cudaDeviceSynchronize());
    return p;
}

static void dev_free(void *p)
{
    if (p)
        CUDA_OK(cudaFree(p));
}

static size_t dev_free_bytes(void)
{
    size_t fr = 0, tot = 0;
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemGetInfo(&fr, &tot));
    return fr;
}

static tsw_exec exec_on(tsw_device dev)
{
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = dev;
    e.device_index = g_dev;
    return e;
}

/* ---- agreement and statistics --------------------------------------------------------------- */

static double g_maxerr[3][2];
static long g_ncmp[3][2], g_ninf[3][2];

static double tol_for(tsw_measure m, tsw_dtype dt)
{
    if (dt == TSW_F64)
        return 1e-12;
    return m == TSW_SOFT_DTW ? 1e-4 : 1e-5;
}

/* GPU value `got` against the CPU's `ref` (see the header comment); main thread only. */
static int cmp_at(const char *file, int line, double got, double ref, double scale, tsw_measure m,
                  tsw_dtype dt, const char *ctx)
{
    double tol = tol_for(m, dt), s = fmax(1.0, fmax(fabs(ref), scale));
    int ok;
    if (isnan(got) || isnan(ref)) {
        ok = 0;
    } else if (isinf(got) || isinf(ref)) {
        ok = got == ref;
        g_ninf[m][dt] += ok;
    } else {
        double e = fabs(got - ref) / s;
        ok = e <= tol;
        if (e > g_maxerr[m][dt])
            g_maxerr[m][dt] = e;
    }
    g_ncmp[m][dt]++;
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: GPU %.17g vs CPU %.17g (tol %g x %g): %s\n", file, line, got, ref,
                tol, s, ctx);
    return ok;
}
#define CMP(got, ref, scale, m, dt, ctx) cmp_at(__FILE__, __LINE__, got, ref, scale, m, dt, ctx)

static const char *describe(const tsw_params *p, tsw_dtype dt, int64_t dim, int64_t n, int64_t m,
                            int times)
{
    static _Thread_local char buf[400];
    static const char *const W[4] = {"none", "sakoe", "fraction", "itakura"};
    int k =
        snprintf(buf, sizeof(buf), "%s %s dim %" PRId64 " n %" PRId64 " m %" PRId64 " window %s",
                 MNAME[p->measure], dt == TSW_F32 ? "f32" : "f64", dim, n, m, W[p->window]);
    if (p->window == TSW_WINDOW_SAKOE_CHIBA || p->window == TSW_WINDOW_SAKOE_CHIBA_FRACTION)
        k += snprintf(buf + k, sizeof(buf) - (size_t)k, " %g", p->window_radius);
    else if (p->window == TSW_WINDOW_ITAKURA)
        k += snprintf(buf + k, sizeof(buf) - (size_t)k, " slope %g", p->itakura_max_slope);
    if (p->measure == TSW_DTW)
        snprintf(buf + k, sizeof(buf) - (size_t)k, " cost %d accumulated %d", (int)p->cost,
                 p->accumulated);
    else if (p->measure == TSW_TWED)
        snprintf(buf + k, sizeof(buf) - (size_t)k, " nu %g lmbda %g p %g times %d", p->nu, p->lmbda,
                 p->p, times);
    else
        snprintf(buf + k, sizeof(buf) - (size_t)k, " gamma %g normalize %d", p->gamma,
                 p->normalize);
    return buf;
}

/* ---- random data ------------------------------------------------------------------------- */

enum { KIND_WALK = 0, KIND_UNIFORM = 1 };

/* (len, dim) values: random walks of uniform steps, or uniform in [-1, 1). zeros: about one
 * point in 16 is the zero vector (the cosine cost's special cases). */
static void gen_values(tsw_t_rng *r, double *v, int64_t len, int64_t dim, int kind, int zeros)
{
    for (int64_t k = 0; k < dim; ++k) {
        double x = tsw_t_uniform(r, -1, 1);
        for (int64_t t = 0; t < len; ++t) {
            if (kind == KIND_WALK)
                x += tsw_t_uniform(r, -1, 1);
            else
                x = tsw_t_uniform(r, -1, 1);
            v[t * dim + k] = x;
        }
    }
    if (zeros)
        for (int64_t t = 0; t < len; ++t)
            if (tsw_t_next(r) % 16 == 0)
                memset(v + t * dim, 0, sizeof(double) * (size_t)dim);
}

/* Strictly increasing timestamps, also after narrowing to float (steps >= 0.05, values
 * below ~5e4 where float's spacing is under 0.004). */
static void gen_times(tsw_t_rng *r, double *t, int64_t len)
{
    double x = tsw_t_uniform(r, -2, 2);
    for (int64_t k = 0; k < len; ++k) {
        x += tsw_t_uniform(r, 0.05, 2.0);
        t[k] = x;
    }
}

/* A collection in both precisions. */
typedef struct {
    int64_t count, dim, rows, length; /* length: the common length when lengths == NULL */
    int64_t *offsets, *lengths;
    double *v64, *t64; /* (rows, dim) values; (rows,) times or NULL */
    float *v32, *t32;
} tcoll;

enum {
    LAYOUT_PACKED = 0, /* equal lengths back to back: offsets = lengths = NULL */
    LAYOUT_RAGGED = 1, /* offsets and lengths, series in shuffled order with gaps */
    LAYOUT_OFFSETS = 2 /* equal lengths with explicit offsets (shuffled, gaps) */
};

static int64_t tc_len(const tcoll *c, int64_t i) { return c->lengths ? c->lengths[i] : c->length; }
static int64_t tc_off(const tcoll *c, int64_t i)
{
    return c->offsets ? c->offsets[i] : i * c->length;
}

/* count series of lengths lens[] (equal for the non-ragged layouts: lens[0] is used). */
static tcoll tc_build(tsw_t_rng *r, int64_t count, int64_t dim, const int64_t *lens, int layout,
                      int kind, int times, int zeros)
{
    tcoll c;
    memset(&c, 0, sizeof(c));
    c.count = count;
    c.dim = dim;
    if (layout == LAYOUT_PACKED) {
        c.length = lens[0];
        c.rows = count * c.length;
    } else {
        c.offsets = malloc(sizeof(int64_t) * (size_t)count);
        if (layout == LAYOUT_RAGGED) {
            c.lengths = malloc(sizeof(int64_t) * (size_t)count);
            memcpy(c.lengths, lens, sizeof(int64_t) * (size_t)count);
        } else {
            c.length = lens[0];
        }
        int64_t *order = malloc(sizeof(int64_t) * (size_t)count);
        for (int64_t i = 0; i < count; ++i)
            order[i] = i;
        for (int64_t i = count - 1; i > 0; --i) {
            int64_t j = tsw_t_int(r, 0, i), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        int64_t row = tsw_t_int(r, 0, 2);
        for (int64_t k = 0; k < count; ++k) {
            int64_t i = order[k];
            c.offsets[i] = row;
            row += tc_len(&c, i) + tsw_t_int(r, 0, 2);
        }
        c.rows = row;
        free(order);
    }
    size_t nv = (size_t)(c.rows * dim);
    c.v64 = malloc(sizeof(double) * (nv ? nv : 1));
    for (size_t k = 0; k < nv; ++k)
        c.v64[k] = NAN; /* gaps */
    if (times) {
        c.t64 = malloc(sizeof(double) * (size_t)(c.rows ? c.rows : 1));
        for (int64_t k = 0; k < c.rows; ++k)
            c.t64[k] = NAN;
    }
    for (int64_t i = 0; i < count; ++i) {
        gen_values(r, c.v64 + tc_off(&c, i) * dim, tc_len(&c, i), dim, kind, zeros);
        if (times)
            gen_times(r, c.t64 + tc_off(&c, i), tc_len(&c, i));
    }
    c.v32 = malloc(sizeof(float) * (nv ? nv : 1));
    for (size_t k = 0; k < nv; ++k)
        c.v32[k] = (float)c.v64[k];
    if (times) {
        c.t32 = malloc(sizeof(float) * (size_t)(c.rows ? c.rows : 1));
        for (int64_t k = 0; k < c.rows; ++k)
            c.t32[k] = (float)c.t64[k];
    }
    return c;
}

/* count series of random lengths in [lo, hi] (one common length unless ragged). */
static tcoll tc_random(tsw_t_rng *r, int64_t count, int64_t dim, int64_t lo, int64_t hi, int layout,
                       int kind, int times, int zeros)
{
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)count);
    for (int64_t i = 0; i < count; ++i)
        lens[i] = layout == LAYOUT_RAGGED || i == 0 ? tsw_t_int(r, lo, hi) : lens[0];
    tcoll c = tc_build(r, count, dim, lens, layout, kind, times, zeros);
    free(lens);
    return c;
}

static void tc_free(tcoll *c)
{
    free(c->offsets);
    free(c->lengths);
    free(c->v64);
    free(c->t64);
    free(c->v32);
    free(c->t32);
    memset(c, 0, sizeof(*c));
}

static const void *tc_values(const tcoll *c, tsw_dtype dt)
{
    return dt == TSW_F32 ? (const void *)c->v32 : (const void *)c->v64;
}

static const void *tc_times(const tcoll *c, tsw_dtype dt)
{
    return dt == TSW_F32 ? (const void *)c->t32 : (const void *)c->t64;
}

/* Host views; with device copies dv / dt_ (NULL: host) of values and times. */
static tsw_collection tc_view_at(const tcoll *c, tsw_dtype dt, const void *dv, const void *dtm)
{
    tsw_collection v = {dv ? dv : tc_values(c, dt),
                        c->offsets,
                        c->lengths,
                        c->length,
                        c->count,
                        c->t64 ? (dtm ? dtm : tc_times(c, dt)) : NULL};
    return v;
}
#define tc_view(c, dt) tc_view_at(c, dt, NULL, NULL)

static tsw_series tc_series_at(const tcoll *c, int64_t i, tsw_dtype dt, const void *dv,
                               const void *dtm)
{
    const char *v = dv ? dv : tc_values(c, dt);
    const char *t = c->t64 ? (dtm ? dtm : tc_times(c, dt)) : NULL;
    int64_t off = tc_off(c, i);
    tsw_series s = {v + (size_t)(off * c->dim) * esz(dt), tc_len(c, i),
                    t ? t + (size_t)off * esz(dt) : NULL};
    return s;
}
#define tc_series(c, i, dt) tc_series_at(c, i, dt, NULL, NULL)

/* ---- random parameters ----------------------------------------------------------------- */

static void random_window(tsw_t_rng *r, tsw_params *p)
{
    static const double FRAC[5] = {0, 0.05, 0.1, 0.5, 1};
    static const double SLOPE[4] = {1, 1.5, 2, 3};
    switch (tsw_t_int(r, 0, 9)) {
    case 4:
        p->window = TSW_WINDOW_SAKOE_CHIBA;
        p->window_radius = 0;
        break;
    case 5:
        p->window = TSW_WINDOW_SAKOE_CHIBA;
        p->window_radius = (double)tsw_t_int(r, 1, 5);
        break;
    case 6:
        p->window = TSW_WINDOW_SAKOE_CHIBA;
        p->window_radius = (double)tsw_t_int(r, 6, 200000);
        break;
    case 7:
        p->window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
        p->window_radius =
            tsw_t_int(r, 0, 5) == 5 ? tsw_t_uniform(r, 0, 1) : FRAC[tsw_t_int(r, 0, 4)];
        break;
    case 8:
    case 9:
        p->window = TSW_WINDOW_ITAKURA;
        p->itakura_max_slope =
            tsw_t_int(r, 0, 4) == 4 ? tsw_t_uniform(r, 1, 5) : SLOPE[tsw_t_int(r, 0, 3)];
        break;
    default:
        p->window = TSW_WINDOW_NONE;
    }
}

/* Parameters of measure m; *times: whether TWED gets timestamps. */
static void random_params(tsw_t_rng *r, tsw_params *p, tsw_measure m, int *times)
{
    static const double NU[3] = {0, 0.001, 0.5}, LMBDA[2] = {0, 1}, P[4] = {1, 2, 3, 1.5};
    tsw_params_default(p, m);
    random_window(r, p);
    *times = 0;
    if (m == TSW_DTW) {
        p->cost = (tsw_cost)tsw_t_int(r, 0, 3);
        p->accumulated = tsw_t_int(r, 0, 3) == 0;
    } else if (m == TSW_TWED) {
        p->nu = tsw_t_int(r, 0, 3) == 3 ? tsw_t_uniform(r, 0, 2) : NU[tsw_t_int(r, 0, 2)];
        p->lmbda = tsw_t_int(r, 0, 2) == 2 ? tsw_t_uniform(r, 0, 3) : LMBDA[tsw_t_int(r, 0, 1)];
        p->p = P[tsw_t_int(r, 0, 3)];
        *times = (int)tsw_t_int(r, 0, 1);
    } else {
        p->gamma = pow(10.0, tsw_t_uniform(r, -3, 1));
        p->normalize = tsw_t_int(r, 0, 2) == 0;
    }
}

/* ---- CPU references and scales --------------------------------------------------------- */

static double cpu_dist(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_series *a,
                       const tsw_series *b)
{
    tsw_exec e = exec_on(TSW_DEVICE_CPU);
    double v = NAN;
    if (!CHECK_RC(tsw_distance(p, dt, dim, a, b, &v, &e), TSW_OK))
        return NAN;
    return v;
}

static double soft_entropy(const tsw_params *p, int64_t n, int64_t m)
{
    return p->measure == TSW_SOFT_DTW ? p->gamma * (double)(n + m) * LN3 : 0;
}

/* The scale of one pair's comparison (header comment). */
static double pair_scale(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_series *a,
                         const tsw_series *b)
{
    if (p->measure != TSW_SOFT_DTW)
        return 0;
    int64_t n = a->length, m = b->length;
    if (!p->normalize)
        return soft_entropy(p, n, m);
    tsw_params q = *p;
    q.normalize = 0;
    double ab = cpu_dist(&q, dt, dim, a, b), aa = cpu_dist(&q, dt, dim, a, a),
           bb = cpu_dist(&q, dt, dim, b, b);
    return fmax(fabs(ab), fmax(fabs(aa), fabs(bb))) + soft_entropy(p, n > m ? n : m, n > m ? n : m);
}

/* One pair through tsw_distance on the GPU (host memory) against the CPU. */
static void check_pair_at(const char *file, int line, const tsw_params *p, tsw_dtype dt,
                          int64_t dim, const tsw_series *a, const tsw_series *b, int times)
{
    tsw_exec ec = exec_on(TSW_DEVICE_CPU), eg = exec_on(TSW_DEVICE_CUDA);
    double ref = NAN, got = NAN;
    int rc_c = tsw_distance(p, dt, dim, a, b, &ref, &ec);
    int rc_g = tsw_distance(p, dt, dim, a, b, &got, &eg);
    const char *ctx = describe(p, dt, dim, a->length, b->length, times);
    if (!CHECK_RC_AT(rc_c, TSW_OK, file, line) || !CHECK_RC_AT(rc_g, TSW_OK, file, line)) {
        TSW_T_NOTE("  %s; detail: %s\n", ctx, tsw_last_error_detail());
        return;
    }
    cmp_at(file, line, got, ref, pair_scale(p, dt, dim, a, b), p->measure, dt, ctx);
    if (dt == TSW_F32 && !CHECK_AT(isinf(got) || got == (double)(float)got, file, line))
        TSW_T_NOTE("  a float32 result must be a float: %s\n", ctx);
}
#define CHECK_PAIR(p, dt, dim, a, b, times)                                                        \
    check_pair_at(__FILE__, __LINE__, p, dt, dim, a, b, times)

/* scale[i * ny + j] for cdist(x, y) (pdist: y = x). */
static double *batch_scale(const tsw_params *p, tsw_dtype dt, const tcoll *x, const tcoll *y)
{
    int64_t nx = x->count, ny = y->count;
    double *s = calloc((size_t)(nx * ny), sizeof(double));
    if (p->measure != TSW_SOFT_DTW)
        return s;
    for (int64_t i = 0; i < nx; ++i)
        for (int64_t j = 0; j < ny; ++j)
            s[i * ny + j] = soft_entropy(p, tc_len(x, i), tc_len(y, j));
    if (!p->normalize)
        return s;
    tsw_params q = *p;
    q.normalize = 0;
    tsw_collection cx = tc_view(x, dt), cy = tc_view(y, dt);
    void *raw = malloc(esz(dt) * (size_t)(nx * ny));
    double *sx = malloc(sizeof(double) * (size_t)nx), *sy = malloc(sizeof(double) * (size_t)ny);
    tsw_exec e = exec_on(TSW_DEVICE_CPU);
    CHECK_RC(tsw_cdist(&q, dt, x->dim, &cx, &cy, raw, &e), TSW_OK);
    for (int64_t i = 0; i < nx; ++i) {
        tsw_series a = tc_series(x, i, dt);
        sx[i] = fabs(cpu_dist(&q, dt, x->dim, &a, &a));
    }
    for (int64_t j = 0; j < ny; ++j) {
        tsw_series b = tc_series(y, j, dt);
        sy[j] = fabs(cpu_dist(&q, dt, y->dim, &b, &b));
    }
    for (int64_t i = 0; i < nx; ++i)
        for (int64_t j = 0; j < ny; ++j) {
            int64_t n = tc_len(x, i), m = tc_len(y, j), mx = n > m ? n : m;
            s[i * ny + j] =
                fmax(fabs(get(raw, dt, i * ny + j)), fmax(sx[i], sy[j])) + soft_entropy(p, mx, mx);
        }
    free(raw);
    free(sx);
    free(sy);
    return s;
}

/* ---- batch checks (host memory) ---------------------------------------------------------- */

static void check_cdist_at(const char *file, int line, const tsw_params *p, tsw_dtype dt,
                           const tcoll *x, const tcoll *y, tsw_device gpu_device)
{
    int64_t nx = x->count, ny = y->count, total = nx * ny;
    size_t es = esz(dt);
    tsw_collection cx = tc_view(x, dt), cy = tc_view(y, dt);
    void *ref = malloc(es * (size_t)total), *got = malloc(es * (size_t)(total + 4));
    memset(got, SENTINEL, es * (size_t)(total + 4));
    tsw_exec ec = exec_on(TSW_DEVICE_CPU), eg = exec_on(gpu_device);
    char ctx[480];
    snprintf(ctx, sizeof(ctx), "cdist %" PRId64 "x%" PRId64 " %s%s", nx, ny,
             describe(p, dt, x->dim, tc_len(x, 0), tc_len(y, 0), x->t64 != NULL),
             x->lengths || y->lengths ? " (ragged)" : "");
    int ok = CHECK_RC_AT(tsw_cdist(p, dt, x->dim, &cx, &cy, ref, &ec), TSW_OK, file, line);
    int rc = tsw_cdist(p, dt, x->dim, &cx, &cy, got, &eg);
    if (!CHECK_RC_AT(rc, TSW_OK, file, line)) {
        TSW_T_NOTE("  %s; detail: %s\n", ctx, tsw_last_error_detail());
        ok = 0;
    }
    if (ok) {
        double *s = batch_scale(p, dt, x, y);
        for (int64_t k = 0; k < total; ++k)
            cmp_at(file, line, get(got, dt, k), get(ref, dt, k), s[k], p->measure, dt, ctx);
        free(s);
        if (!CHECK_AT(bytes_are((char *)got + es * (size_t)total, SENTINEL, 4 * es), file, line))
            TSW_T_NOTE("  cdist wrote past its output: %s\n", ctx);
    }
    free(ref);
    free(got);
}
#define CHECK_CDIST(p, dt, x, y) check_cdist_at(__FILE__, __LINE__, p, dt, x, y, TSW_DEVICE_CUDA)

static void check_pdist_at(const char *file, int line, const tsw_params *p, tsw_dtype dt,
                           const tcoll *x)
{
    int64_t n = x->count;
    size_t es = esz(dt);
    tsw_collection cx = tc_view(x, dt);
    char ctx[480];
    double *s = NULL;
    for (int layout = 0; layout < 2; ++layout) {
        int64_t total = tsw_pdist_size(n, (tsw_pdist_layout)layout);
        void *ref = malloc(es * (size_t)(total + 1)), *got = malloc(es * (size_t)(total + 4));
        memset(got, SENTINEL, es * (size_t)(total + 4));
        tsw_exec ec = exec_on(TSW_DEVICE_CPU), eg = exec_on(TSW_DEVICE_CUDA);
        snprintf(ctx, sizeof(ctx), "pdist %s n %" PRId64 " %s%s", layout ? "CONDENSED" : "FULL", n,
                 describe(p, dt, x->dim, tc_len(x, 0), tc_len(x, n - 1), x->t64 != NULL),
                 x->lengths ? " (ragged)" : "");
        int ok = CHECK_RC_AT(tsw_pdist(p, dt, x->dim, &cx, (tsw_pdist_layout)layout, ref, &ec),
                             TSW_OK, file, line);
        int rc = tsw_pdist(p, dt, x->dim, &cx, (tsw_pdist_layout)layout, got, &eg);
        if (!CHECK_RC_AT(rc, TSW_OK, file, line)) {
            TSW_T_NOTE("  %s; detail: %s\n", ctx, tsw_last_error_detail());
            ok = 0;
        }
        if (ok) {
            if (!s)
                s = batch_scale(p, dt, x, x);
            int64_t k = 0;
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = layout ? i + 1 : 0; j < n; ++j, ++k)
                    cmp_at(file, line, get(got, dt, k), get(ref, dt, k), s[i * n + j], p->measure,
                           dt, ctx);
            if (!CHECK_AT(bytes_are((char *)got + es * (size_t)total, SENTINEL, 4 * es), file,
                          line))
                TSW_T_NOTE("  pdist wrote past its output: %s\n", ctx);
        }
        free(ref);
        free(got);
    }
    free(s);
}
#define CHECK_PDIST(p, dt, x) check_pdist_at(__FILE__, __LINE__, p, dt, x)

/* tsw_paired: x_k against y_k (x->count == y->count). */
static void check_paired_at(const char *file, int line, const tsw_params *p, tsw_dtype dt,
                            const tcoll *x, const tcoll *y)
{
    int64_t n = x->count;
    size_t es = esz(dt);
    tsw_collection cx = tc_view(x, dt), cy = tc_view(y, dt);
    void *ref = malloc(es * (size_t)n), *got = malloc(es * (size_t)(n + 4));
    memset(got, SENTINEL, es * (size_t)(n + 4));
    tsw_exec ec = exec_on(TSW_DEVICE_CPU), eg = exec_on(TSW_DEVICE_CUDA);
    char ctx[480];
    snprintf(ctx, sizeof(ctx), "paired %" PRId64 " %s%s", n,
             describe(p, dt, x->dim, tc_len(x, 0), tc_len(y, 0), x->t64 != NULL),
             x->lengths || y->lengths ? " (ragged)" : "");
    int ok = CHECK_RC_AT(tsw_paired(p, dt, x->dim, &cx, &cy, ref, &ec), TSW_OK, file, line);
    int rc = tsw_paired(p, dt, x->dim, &cx, &cy, got, &eg);
    if (!CHECK_RC_AT(rc, TSW_OK, file, line)) {
        TSW_T_NOTE("  %s; detail: %s\n", ctx, tsw_last_error_detail());
        ok = 0;
    }
    if (ok) {
        double *s = batch_scale(p, dt, x, y);
        for (int64_t k = 0; k < n; ++k)
            cmp_at(file, line, get(got, dt, k), get(ref, dt, k), s[k * n + k], p->measure, dt, ctx);
        free(s);
        if (!CHECK_AT(bytes_are((char *)got + es * (size_t)n, SENTINEL, 4 * es), file, line))
            TSW_T_NOTE("  paired wrote past its output: %s\n", ctx);
    }
    free(ref);
    free(got);
}
#define CHECK_PAIRED(p, dt, x, y) check_paired_at(__FILE__, __LINE__, p, dt, x, y)

/* ---- section: device information, out-of-range devices ----------------------------------- */

static void test_info(void)
{
    int count = 0;
    CHECK_RC(tsw_cuda_device_count(&count), TSW_OK);
    for (int d = 0; d < count; ++d) {
        tsw_cuda_device info;
        memset(&info, 0, sizeof(info));
        if (!CHECK_RC(tsw_cuda_device_info(d, &info), TSW_OK))
            continue;
        struct cudaDeviceProp prop;
        CUDA_OK(cudaGetDeviceProperties(&prop, d));
        size_t fr = 0, tot = 0;
        int cur = 0;
        CUDA_OK(cudaGetDevice(&cur));
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaMemGetInfo(&fr, &tot));
        CUDA_OK(cudaSetDevice(cur));
        CHECK(info.name[0] != 0);
        CHECK(memchr(info.name, 0, sizeof(info.name)) != NULL);
        CHECK_STR(info.name, prop.name);
        CHECK_EQ(info.major, prop.major);
        CHECK_EQ(info.minor, prop.minor);
        CHECK_EQ(info.multiprocessors, prop.multiProcessorCount);
        CHECK(info.multiprocessors > 0);
        CHECK(info.total_memory == prop.totalGlobalMem || info.total_memory == tot);
        CHECK(info.total_memory >= ((size_t)1 << 30));
        CHECK(info.free_memory > 0 && info.free_memory <= info.total_memory);
        CHECK(info.runnable == 0 || info.runnable == 1);
        printf("[gpu] device %d: %s, sm_%d%d, %d SMs, %.1f GiB (%.1f GiB free), runnable %d\n", d,
               info.name, info.major, info.minor, info.multiprocessors,
               (double)info.total_memory / (1 << 30), (double)info.free_memory / (1 << 30),
               info.runnable);
    }
    const char *archs = tsw_cuda_archs();
    CHECK(archs && (strstr(archs, "sm_") || strstr(archs, "compute_")));
    int rt = 0, drv = 0;
    CHECK_RC(tsw_cuda_versions(&rt, &drv), TSW_OK);
    CHECK(rt >= 11000);
    CHECK(drv >= 11000);
    int crt = 0;
    CUDA_OK(cudaRuntimeGetVersion(&crt));
    CHECK_EQ(rt, crt);
    printf("[gpu] archs \"%s\", CUDA runtime %d, driver %d\n", archs ? archs : "(null)", rt, drv);
    CHECK_RC(tsw_cuda_device_info(0, NULL), TSW_EINVAL);

    /* out-of-range ordinals */
    tsw_cuda_device info;
    CHECK_RC(tsw_cuda_device_info(count, &info), TSW_ENODEV);
    CHECK_RC(tsw_cuda_device_info(count + 100, &info), TSW_ENODEV);
    CHECK_RC(tsw_cuda_device_info(-1, &info), TSW_ENODEV);
    tsw_t_rng r = {7};
    int64_t lens[2] = {20, 30};
    tcoll c = tc_build(&r, 2, 1, lens, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_series a = tc_series(&c, 0, TSW_F64), b = tc_series(&c, 1, TSW_F64);
    tsw_collection cc = tc_view(&c, TSW_F64);
    double v, out[4];
    size_t bytes;
    for (int bad = 0; bad < 2; ++bad) {
        tsw_exec e = exec_on(TSW_DEVICE_CUDA);
        e.device_index = bad ? count : count + 7;
        CHECK_RC(tsw_distance(&p, TSW_F64, 1, &a, &b, &v, &e), TSW_ENODEV);
        CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &cc, &cc, out, &e), TSW_ENODEV);
        CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &cc, TSW_PDIST_FULL, out, &e), TSW_ENODEV);
        CHECK_RC(tsw_paired(&p, TSW_F64, 1, &cc, &cc, out, &e), TSW_ENODEV);
        CHECK_RC(tsw_paired_device(&p, TSW_F64, 1, &cc, &cc, out, &e), TSW_ENODEV);
        /* the device variants refuse before touching their (here host) pointers */
        CHECK_RC(tsw_distance_device(&p, TSW_F64, 1, &a, &b, out, &e), TSW_ENODEV);
        CHECK_RC(tsw_cdist_device(&p, TSW_F64, 1, &cc, &cc, out, &e), TSW_ENODEV);
        CHECK_RC(tsw_pdist_device(&p, TSW_F64, 1, &cc, TSW_PDIST_CONDENSED, out, &e), TSW_ENODEV);
        CHECK_RC(tsw_cdist_workspace_size(&p, TSW_F64, 1, &cc, &cc, &e, &bytes), TSW_ENODEV);
        /* a negative ordinal: no such device either (EINVAL would also be fair) */
        e.device_index = -1;
        int rc = tsw_distance(&p, TSW_F64, 1, &a, &b, &v, &e);
        CHECK(rc == TSW_ENODEV || rc == TSW_EINVAL);
    }
    /* TSW_DEVICE_AUTO with a bad ordinal falls back to the CPU or reports ENODEV */
    tsw_exec e = exec_on(TSW_DEVICE_AUTO);
    e.device_index = count;
    int rc = tsw_distance(&p, TSW_F64, 1, &a, &b, &v, &e);
    CHECK(rc == TSW_OK || rc == TSW_ENODEV);
    tc_free(&c);
}

/* ---- section: one pair, random shapes (one-pair batch path: n m < 2^22) -------------------- */

static void test_pairs(tsw_t_rng *r)
{
    /* The CPU reference of one pair runs on one thread: n m dim is capped (soft-DTW's
     * cells cost the CPU about 5x more). */
    const int iters = g_quick ? 90 : 600;
    for (int it = 0; it < iters; ++it) {
        tsw_measure m = (tsw_measure)(it % 3);
        const double cap = (g_quick ? 2e5 : 1.5e6) / (m == TSW_SOFT_DTW ? 4 : 1);
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        int64_t dim = DIMS[tsw_t_int(r, 0, 4)];
        int64_t n, mm;
        switch (tsw_t_int(r, 0, 9)) {
        case 0:
        case 1:
        case 2:
            n = tsw_t_int(r, 1, 16), mm = tsw_t_int(r, 1, 16);
            break;
        case 3:
        case 4:
            n = tsw_t_int(r, 17, 300), mm = tsw_t_int(r, 17, 300);
            break;
        case 5:
            n = mm = tsw_t_int(r, 1, 600);
            break;
        case 6:
            n = tsw_t_int(r, 2000, 10000), mm = tsw_t_int(r, 1, 40);
            break;
        case 7:
            n = tsw_t_int(r, 300, 2000), mm = tsw_t_int(r, 300, 2000);
            break;
        case 8:
            n = 1, mm = tsw_t_int(r, 1, 4000);
            break;
        default:
            n = tsw_t_int(r, 1, 100), mm = tsw_t_int(r, 100, 1000);
        }
        if (tsw_t_int(r, 0, 1)) {
            int64_t t = n;
            n = mm;
            mm = t;
        }
        while ((double)n * (double)mm * (double)dim > cap || n * mm >= TSW_LONG_CELLS) {
            if (dim > 1)
                dim = DIMS[0];
            else if (n > mm)
                n = (n + 1) / 2;
            else
                mm = (mm + 1) / 2;
        }
        tsw_params p;
        int times;
        random_params(r, &p, m, &times);
        int kind = (int)tsw_t_int(r, 0, 1);
        int zeros = m == TSW_DTW && p.cost == TSW_COST_COSINE;
        int64_t lens[2] = {n, mm};
        tcoll c = tc_build(r, 2, dim, lens, LAYOUT_RAGGED, kind, times, zeros);
        tsw_series a = tc_series(&c, 0, dt), b = tc_series(&c, 1, dt);
        CHECK_PAIR(&p, dt, dim, &a, &b, times);
        if (it % 7 == 0) /* a series against itself */
            CHECK_PAIR(&p, dt, dim, &a, &a, times);
        tc_free(&c);
    }
    /* fixed corner cases: 1 x 1, dim 64 of length 1, Itakura admitting no path */
    for (int m = 0; m < 3; ++m)
        for (int d = 0; d < 2; ++d) {
            tsw_dtype dt = (tsw_dtype)d;
            tsw_params p;
            tsw_params_default(&p, (tsw_measure)m);
            int64_t l11[2] = {1, 1}, l64[2] = {1, 3}, lit[2] = {10, 100};
            tcoll c = tc_build(r, 2, 1, l11, LAYOUT_RAGGED, KIND_UNIFORM, m == TSW_TWED, 0);
            tsw_series a = tc_series(&c, 0, dt), b = tc_series(&c, 1, dt);
            CHECK_PAIR(&p, dt, 1, &a, &b, m == TSW_TWED);
            tc_free(&c);
            c = tc_build(r, 2, 64, l64, LAYOUT_RAGGED, KIND_WALK, 0, 0);
            a = tc_series(&c, 0, dt), b = tc_series(&c, 1, dt);
            CHECK_PAIR(&p, dt, 64, &a, &b, 0);
            tc_free(&c);
            c = tc_build(r, 2, 2, lit, LAYOUT_RAGGED, KIND_WALK, 0, 0);
            a = tc_series(&c, 0, dt), b = tc_series(&c, 1, dt);
            p.window = TSW_WINDOW_ITAKURA;
            p.itakura_max_slope = 2;
            double ref = cpu_dist(&p, dt, 2, &a, &b);
            CHECK(isinf(ref) && ref > 0); /* the premise: the CPU gives +inf */
            CHECK_PAIR(&p, dt, 2, &a, &b, 0);
            CHECK_PAIR(&p, dt, 2, &b, &a, 0);
            tc_free(&c);
        }
}

/* ---- section: long pairs (the long-pair kernel from n m >= 2^22 cells) -------------------- */

typedef struct {
    tsw_measure m;
    tsw_dtype dt;
    int64_t dim, n, mm;
    tsw_window window;
    double wparam;
    int var;  /* DTW: the cost; TWED: 1 = timestamps; soft-DTW: normalize */
    double x; /* TWED: p; soft-DTW: gamma */
    int kind;
    int full; /* 1: not in quick mode */
} long_case;

static void test_long(tsw_t_rng *r)
{
    static const long_case CASES[] = {
        {TSW_DTW, TSW_F32, 1, 3000, 2500, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F64, 1, 3000, 2500, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F32, 1, 2048, 2048, TSW_WINDOW_NONE, 0, 0, 0, KIND_UNIFORM, 0},
        {TSW_DTW, TSW_F32, 1, 2047, 2048, TSW_WINDOW_NONE, 0, 0, 0, KIND_UNIFORM, 0},
        {TSW_DTW, TSW_F32, 3, 2100, 2000, TSW_WINDOW_SAKOE_CHIBA, 100, 0, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F64, 2, 2500, 3000, TSW_WINDOW_ITAKURA, 2, 0, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F32, 1, 2100, 9000, TSW_WINDOW_ITAKURA, 2, 0, 0, KIND_WALK, 0}, /* +inf */
        {TSW_DTW, TSW_F64, 2, 2100, 2050, TSW_WINDOW_SAKOE_CHIBA_FRACTION, 0.1, 2, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F32, 4, 2050, 2100, TSW_WINDOW_NONE, 0, 3, 0, KIND_UNIFORM, 0},
        {TSW_DTW, TSW_F32, 12, 2100, 2100, TSW_WINDOW_NONE, 0, 1, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F32, 1, 1, 4200000, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F32, 1, 4200000, 1, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 0},
        {TSW_DTW, TSW_F64, 1, 3, 1500000, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 0},
        {TSW_TWED, TSW_F64, 1, 3000, 2500, TSW_WINDOW_NONE, 0, 1, 1, KIND_WALK, 0},
        {TSW_TWED, TSW_F32, 1, 2500, 3000, TSW_WINDOW_NONE, 0, 0, 2, KIND_WALK, 0},
        {TSW_TWED, TSW_F64, 2, 2100, 2000, TSW_WINDOW_SAKOE_CHIBA_FRACTION, 0.1, 0, 3, KIND_UNIFORM,
         0},
        {TSW_TWED, TSW_F32, 3, 2100, 2100, TSW_WINDOW_SAKOE_CHIBA, 50, 1, 2, KIND_WALK, 0},
        {TSW_TWED, TSW_F64, 1, 2200, 2000, TSW_WINDOW_ITAKURA, 1.5, 0, 1, KIND_WALK, 0},
        {TSW_TWED, TSW_F32, 1, 5, 1000000, TSW_WINDOW_NONE, 0, 0, 2, KIND_WALK, 0},
        {TSW_SOFT_DTW, TSW_F32, 1, 2100, 2000, TSW_WINDOW_NONE, 0, 0, 1.0, KIND_WALK, 0},
        {TSW_SOFT_DTW, TSW_F64, 2, 2100, 2000, TSW_WINDOW_NONE, 0, 1, 0.1, KIND_UNIFORM, 0},
        {TSW_SOFT_DTW, TSW_F32, 1, 2048, 2100, TSW_WINDOW_SAKOE_CHIBA, 64, 1, 10.0, KIND_WALK, 0},
        {TSW_SOFT_DTW, TSW_F64, 1, 2100, 2100, TSW_WINDOW_NONE, 0, 0, 0.001, KIND_WALK, 0},
        /* the issue's big pairs: n m = 4e8 */
        {TSW_DTW, TSW_F32, 1, 20000, 20000, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 1},
        {TSW_TWED, TSW_F64, 1, 20000, 20000, TSW_WINDOW_NONE, 0, 0, 2, KIND_WALK, 1},
        {TSW_DTW, TSW_F64, 1, 9000, 7000, TSW_WINDOW_NONE, 0, 0, 0, KIND_WALK, 1},
        {TSW_TWED, TSW_F32, 1, 7000, 9000, TSW_WINDOW_NONE, 0, 1, 1, KIND_WALK, 1},
    };
    for (size_t k = 0; k < sizeof(CASES) / sizeof(CASES[0]); ++k) {
        const long_case *lc = &CASES[k];
        if (lc->full && g_quick)
            continue;
        tsw_params p;
        tsw_params_default(&p, lc->m);
        p.window = lc->window;
        if (lc->window == TSW_WINDOW_ITAKURA)
            p.itakura_max_slope = lc->wparam;
        else
            p.window_radius = lc->wparam;
        int times = 0;
        if (lc->m == TSW_DTW) {
            p.cost = (tsw_cost)lc->var;
        } else if (lc->m == TSW_TWED) {
            times = lc->var;
            p.p = lc->x;
            p.nu = 0.5;
            p.lmbda = 1.0;
        } else {
            p.normalize = lc->var;
            p.gamma = lc->x;
        }
        int64_t lens[2] = {lc->n, lc->mm};
        if (g_quick && lc->n > 2100 && lc->mm > 2100) { /* just above 2^22 cells */
            lens[0] = lc->n > lc->mm ? 2100 : 2050;
            lens[1] = lc->n > lc->mm ? 2050 : 2100;
        }
        tcoll c = tc_build(r, 2, lc->dim, lens, LAYOUT_RAGGED, lc->kind, times,
                           lc->m == TSW_DTW && p.cost == TSW_COST_COSINE);
        tsw_series a = tc_series(&c, 0, lc->dt), b = tc_series(&c, 1, lc->dt);
        double t0 = tsw_t_seconds();
        CHECK_PAIR(&p, lc->dt, lc->dim, &a, &b, times);
        if (lc->window == TSW_WINDOW_ITAKURA && lens[1] > 4 * lens[0]) {
            double ref = cpu_dist(&p, lc->dt, lc->dim, &a, &b);
            CHECK(isinf(ref)); /* the premise of that case */
        }
        if (lc->full)
            printf("[gpu]   long pair %s: %.2f s (GPU and CPU)\n",
                   describe(&p, lc->dt, lc->dim, lens[0], lens[1], times), tsw_t_seconds() - t0);
        tc_free(&c);
    }
}

/* ---- section: cdist and pdist on random collections -------------------------------------- */

static void test_batch(tsw_t_rng *r)
{
    const int iters = g_quick ? 14 : 90;
    const double cap = g_quick ? 2e6 : 3e8; /* cells x dim of one cdist */
    for (int it = 0; it < iters; ++it) {
        tsw_measure m = (tsw_measure)(it % 3);
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        int64_t dim = DIMS[tsw_t_int(r, 0, 4)];
        int64_t lo, hi;
        int cls = (int)tsw_t_int(r, 0, 9);
        if (cls <= 1)
            lo = 1, hi = 8;
        else if (cls <= 4)
            lo = 8, hi = 64;
        else if (cls <= 7)
            lo = 64, hi = 300;
        else if (cls == 8)
            lo = 300, hi = 1500;
        else
            lo = 2000, hi = m == TSW_SOFT_DTW ? 4000 : 10000;
        if (g_quick && hi > 400)
            lo = 100, hi = 400;
        if (hi >= 300 && dim > 3)
            dim = 3;
        int64_t max_pairs = (int64_t)(cap / ((double)hi * (double)hi * (double)dim));
        int64_t side = 1;
        while ((side + 1) * (side + 1) <= max_pairs && side < 24)
            ++side;
        int64_t nx = tsw_t_int(r, 1, side), ny = tsw_t_int(r, 1, side);
        tsw_params p;
        int times;
        random_params(r, &p, m, &times);
        int zeros = m == TSW_DTW && p.cost == TSW_COST_COSINE;
        tcoll x = tc_random(r, nx, dim, lo, hi, (int)tsw_t_int(r, 0, 2), (int)tsw_t_int(r, 0, 1),
                            times, zeros);
        tcoll y = tc_random(r, ny, dim, lo, hi, (int)tsw_t_int(r, 0, 2), (int)tsw_t_int(r, 0, 1),
                            times, zeros);
        CHECK_CDIST(&p, dt, &x, &y);
        CHECK_PDIST(&p, dt, &x);
        tcoll yp = tc_random(r, nx, dim, lo, hi, (int)tsw_t_int(r, 0, 2), (int)tsw_t_int(r, 0, 1),
                             times, zeros);
        CHECK_PAIRED(&p, dt, &x, &yp);
        tc_free(&yp);
        tc_free(&x);
        tc_free(&y);
    }

    /* many pairs per call (several launches, all pair-index arithmetic) */
    struct {
        tsw_measure m;
        tsw_dtype dt;
        int64_t dim, nx, ny, lo, hi;
        int layout, times, normalize;
    } big[] = {
        {TSW_DTW, TSW_F32, 1, 300, 280, 128, 128, LAYOUT_PACKED, 0, 0},
        {TSW_DTW, TSW_F64, 2, 150, 170, 20, 200, LAYOUT_RAGGED, 0, 0},
        {TSW_TWED, TSW_F64, 1, 400, 1, 64, 64, LAYOUT_PACKED, 1, 0},
        {TSW_TWED, TSW_F32, 3, 120, 130, 10, 150, LAYOUT_RAGGED, 1, 0},
        {TSW_SOFT_DTW, TSW_F32, 2, 128, 128, 64, 64, LAYOUT_OFFSETS, 0, 1},
        {TSW_SOFT_DTW, TSW_F64, 1, 100, 90, 30, 120, LAYOUT_RAGGED, 0, 0},
        {TSW_DTW, TSW_F32, 1, 1, 2000, 4, 40, LAYOUT_RAGGED, 0, 0},
        {TSW_DTW, TSW_F32, 64, 40, 40, 50, 80, LAYOUT_RAGGED, 0, 0},
        {TSW_SOFT_DTW, TSW_F32, 2, 512, 512, 256, 256, LAYOUT_PACKED, 0, 0}, /* the issue's */
    };
    for (size_t k = 0; k < sizeof(big) / sizeof(big[0]); ++k) {
        int64_t div = g_quick ? 8 : 1;
        int64_t nx = big[k].nx / div > 0 ? big[k].nx / div : 1;
        int64_t ny = big[k].ny / div > 0 ? big[k].ny / div : 1;
        int64_t hi = g_quick && big[k].hi > 32 ? 32 : big[k].hi;
        int64_t lo = big[k].lo < hi ? big[k].lo : hi;
        tsw_params p;
        tsw_params_default(&p, big[k].m);
        p.normalize = big[k].normalize;
        p.nu = 1.0;
        tcoll x = tc_random(r, nx, big[k].dim, lo, hi, big[k].layout, KIND_WALK, big[k].times, 0);
        tcoll y = tc_random(r, ny, big[k].dim, lo, hi, big[k].layout, KIND_WALK, big[k].times, 0);
        if (big[k].nx == 512) { /* the batched-loss case: paired only */
            CHECK_PAIRED(&p, big[k].dt, &x, &y);
            tc_free(&x);
            tc_free(&y);
            continue;
        }
        CHECK_CDIST(&p, big[k].dt, &x, &y);
        if (k % 2 == 0)
            CHECK_PDIST(&p, big[k].dt, &x);
        else if (nx == ny)
            CHECK_PAIRED(&p, big[k].dt, &x, &y);
        tc_free(&x);
        tc_free(&y);
    }

    /* pdist of one series (CONDENSED is empty), cdist 1 x 1 */
    for (int m = 0; m < 3; ++m) {
        tsw_params p;
        tsw_params_default(&p, (tsw_measure)m);
        tcoll x = tc_random(r, 1, 2, 5, 50, LAYOUT_RAGGED, KIND_WALK, 0, 0);
        CHECK_PDIST(&p, TSW_F64, &x);
        CHECK_CDIST(&p, TSW_F32, &x, &x);
        CHECK_PAIRED(&p, TSW_F32, &x, &x);
        tc_free(&x);
    }

    /* TSW_DEVICE_AUTO on work large enough for the GPU: the same values */
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    int64_t n = g_quick ? 32 : 200, len = g_quick ? 64 : 256;
    tcoll x = tc_random(r, n, 1, len, len, LAYOUT_PACKED, KIND_WALK, 0, 0);
    check_cdist_at(__FILE__, __LINE__, &p, TSW_F32, &x, &x, TSW_DEVICE_AUTO);
    tc_free(&x);
}

/* ---- section: the *_device entry points ------------------------------------------------- */

typedef struct {
    void *v, *t; /* device copies of a tcoll's values and times in one dtype */
} dcopy;

static dcopy dc_upload(const tcoll *c, tsw_dtype dt, cudaStream_t s, void **pinned)
{
    dcopy d = {NULL, NULL};
    size_t vb = esz(dt) * (size_t)(c->rows * c->dim);
    d.v = dev_alloc(vb);
    if (s && pinned) {
        /* asynchronous upload on the caller's stream: the library must order its work
         * after it (exec.cuda_stream), not read the inputs before they arrive */
        CUDA_OK(cudaMallocHost(pinned, vb ? vb : 1));
        memcpy(*pinned, tc_values(c, dt), vb);
        CUDA_OK(cudaMemcpyAsync(d.v, *pinned, vb, cudaMemcpyHostToDevice, s));
    } else if (d.v) {
        CUDA_OK(cudaMemcpy(d.v, tc_values(c, dt), vb, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize()); /* see dev_copy */
    }
    if (c->t64)
        d.t = dev_copy(tc_times(c, dt), esz(dt) * (size_t)c->rows);
    return d;
}

static void dc_free(dcopy *d)
{
    dev_free(d->v);
    dev_free(d->t);
    d->v = d->t = NULL;
}

/* Reads count values of dt from device memory on a stream of its own that is not ordered
 * with the library's: the values are only right if the call had finished on return. */
static void *read_back(const void *dptr, size_t bytes, cudaStream_t other)
{
    void *h = malloc(bytes ? bytes : 1);
    memset(h, 0, bytes ? bytes : 1);
    CUDA_OK(cudaMemcpyAsync(h, dptr, bytes, cudaMemcpyDeviceToHost, other));
    CUDA_OK(cudaStreamSynchronize(other));
    return h;
}

enum { OP_CDIST = 0, OP_PDIST_FULL = 1, OP_PDIST_CONDENSED = 2, OP_DISTANCE = 3, OP_PAIRED = 4 };

/* One *_device call of op on device copies, checked against the CPU (host) result. */
static void check_device_op(const tsw_params *p, tsw_dtype dt, const tcoll *x, const tcoll *y,
                            const dcopy *dx, const dcopy *dy, int op, cudaStream_t stream,
                            int use_ws, cudaStream_t other, const char *label)
{
    size_t es = esz(dt);
    int64_t dim = x->dim, total;
    tsw_collection hx = tc_view(x, dt), hy = tc_view(y, dt);
    tsw_collection cx = tc_view_at(x, dt, dx->v, dx->t), cy = tc_view_at(y, dt, dy->v, dy->t);
    tsw_series ha = tc_series(x, 0, dt), hb = tc_series(y, 0, dt);
    tsw_series da = tc_series_at(x, 0, dt, dx->v, dx->t), db = tc_series_at(y, 0, dt, dy->v, dy->t);
    if (op == OP_CDIST)
        total = x->count * y->count;
    else if (op == OP_DISTANCE)
        total = 1;
    else if (op == OP_PAIRED)
        total = x->count;
    else
        total = tsw_pdist_size(x->count, (tsw_pdist_layout)(op - 1));
    char ctx[520];
    snprintf(ctx, sizeof(ctx), "%s op %d stream %s workspace %d: %s", label, op,
             stream ? "user" : "legacy default", use_ws,
             describe(p, dt, dim, tc_len(x, 0), tc_len(y, 0), x->t64 != NULL));

    /* CPU reference */
    void *ref = malloc(es * (size_t)(total + 1));
    tsw_exec ec = exec_on(TSW_DEVICE_CPU);
    int rc;
    if (op == OP_CDIST)
        rc = tsw_cdist(p, dt, dim, &hx, &hy, ref, &ec);
    else if (op == OP_PAIRED)
        rc = tsw_paired(p, dt, dim, &hx, &hy, ref, &ec);
    else if (op == OP_DISTANCE) {
        double v = NAN;
        rc = tsw_distance(p, dt, dim, &ha, &hb, &v, &ec);
        if (dt == TSW_F32)
            *(float *)ref = (float)v;
        else
            *(double *)ref = v;
    } else
        rc = tsw_pdist(p, dt, dim, &hx, (tsw_pdist_layout)(op - 1), ref, &ec);
    CHECK_RC(rc, TSW_OK);

    size_t out_bytes = es * (size_t)(total + 8);
    void *out = dev_alloc(out_bytes);
    CUDA_OK(cudaMemset(out, SENTINEL, out_bytes));
    /* (cudaMemset runs on the legacy stream, which the non-blocking streams do not wait for) */
    CUDA_OK(cudaDeviceSynchronize());
    tsw_exec e = exec_on(TSW_DEVICE_CPU); /* ignored by the *_device calls */
    e.cuda_stream = stream;
    size_t ws_bytes = 0;
    void *ws = NULL;
    if (use_ws) {
        tsw_collection qx = cx, qy = cy;
        tsw_series qa = da, qb = db;
        qx.values = qy.values = qa.values = qb.values = NULL; /* sizes only */
        if (op == OP_CDIST)
            rc = tsw_cdist_workspace_size(p, dt, dim, &qx, &qy, &e, &ws_bytes);
        else if (op == OP_PAIRED)
            rc = tsw_paired_workspace_size(p, dt, dim, &qx, &qy, &e, &ws_bytes);
        else if (op == OP_DISTANCE)
            rc = tsw_distance_workspace_size(p, dt, dim, &qa, &qb, &e, &ws_bytes);
        else
            rc = tsw_pdist_workspace_size(p, dt, dim, &qx, (tsw_pdist_layout)(op - 1), &e,
                                          &ws_bytes);
        CHECK_RC(rc, TSW_OK);
        if (ws_bytes > 0) {
            /* too small by one byte: EINVAL, nothing written */
            ws = dev_alloc(ws_bytes);
            e.cuda_workspace = ws;
            e.cuda_workspace_bytes = ws_bytes - 1;
            if (op == OP_CDIST)
                rc = tsw_cdist_device(p, dt, dim, &cx, &cy, out, &e);
            else if (op == OP_PAIRED)
                rc = tsw_paired_device(p, dt, dim, &cx, &cy, out, &e);
            else if (op == OP_DISTANCE)
                rc = tsw_distance_device(p, dt, dim, &da, &db, out, &e);
            else
                rc = tsw_pdist_device(p, dt, dim, &cx, (tsw_pdist_layout)(op - 1), out, &e);
            if (!CHECK_RC(rc, TSW_EINVAL))
                TSW_T_NOTE("  workspace of %zu bytes for %zu needed: %s\n", ws_bytes - 1, ws_bytes,
                           ctx);
            void *h = read_back(out, out_bytes, other);
            if (!CHECK(bytes_are(h, SENTINEL, out_bytes)))
                TSW_T_NOTE("  a call refused for its workspace wrote its output: %s\n", ctx);
            free(h);
            e.cuda_workspace_bytes = ws_bytes;
        }
    }
    if (op == OP_CDIST)
        rc = tsw_cdist_device(p, dt, dim, &cx, &cy, out, &e);
    else if (op == OP_PAIRED)
        rc = tsw_paired_device(p, dt, dim, &cx, &cy, out, &e);
    else if (op == OP_DISTANCE)
        rc = tsw_distance_device(p, dt, dim, &da, &db, out, &e);
    else
        rc = tsw_pdist_device(p, dt, dim, &cx, (tsw_pdist_layout)(op - 1), out, &e);
    if (!CHECK_RC(rc, TSW_OK)) {
        TSW_T_NOTE("  %s; detail: %s\n", ctx, tsw_last_error_detail());
    } else {
        void *got = read_back(out, out_bytes, other);
        int withy = op == OP_CDIST || op == OP_DISTANCE || op == OP_PAIRED;
        double *s = batch_scale(p, dt, x, withy ? y : x);
        int64_t k = 0, n = x->count, ny = withy ? y->count : n;
        if (op == OP_DISTANCE)
            CMP(get(got, dt, 0), get(ref, dt, 0), s[0], p->measure, dt, ctx);
        else if (op == OP_PAIRED)
            for (k = 0; k < n; ++k)
                CMP(get(got, dt, k), get(ref, dt, k), s[k * ny + k], p->measure, dt, ctx);
        else
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = op == OP_PDIST_CONDENSED ? i + 1 : 0;
                     j < (op == OP_CDIST ? y->count : n); ++j, ++k)
                    CMP(get(got, dt, k), get(ref, dt, k), s[i * ny + j], p->measure, dt, ctx);
        if (!CHECK(bytes_are((char *)got + es * (size_t)total, SENTINEL, 8 * es)))
            TSW_T_NOTE("  wrote past its output: %s\n", ctx);
        free(s);
        free(got);
    }
    dev_free(ws);
    dev_free(out);
    free(ref);
}

static void test_device(tsw_t_rng *r)
{
    cudaStream_t user, other;
    CUDA_OK(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    struct {
        tsw_measure m;
        tsw_dtype dt;
        int64_t dim, nx, ny, lo, hi;
        int layout, times, normalize;
        tsw_window window;
        double wparam;
    } cfg[] = {
        {TSW_DTW, TSW_F32, 2, 12, 9, 5, 120, LAYOUT_RAGGED, 0, 0, TSW_WINDOW_NONE, 0},
        {TSW_TWED, TSW_F64, 1, 10, 11, 20, 90, LAYOUT_RAGGED, 1, 0, TSW_WINDOW_NONE, 0},
        {TSW_SOFT_DTW, TSW_F32, 3, 8, 7, 40, 40, LAYOUT_PACKED, 0, 1, TSW_WINDOW_NONE, 0},
        {TSW_DTW, TSW_F64, 1, 9, 9, 60, 60, LAYOUT_OFFSETS, 0, 0, TSW_WINDOW_SAKOE_CHIBA, 6},
        {TSW_TWED, TSW_F32, 2, 7, 6, 30, 80, LAYOUT_RAGGED, 1, 0, TSW_WINDOW_ITAKURA, 2},
        {TSW_SOFT_DTW, TSW_F64, 1, 6, 5, 10, 70, LAYOUT_RAGGED, 0, 0,
         TSW_WINDOW_SAKOE_CHIBA_FRACTION, 0.2},
    };
    for (size_t k = 0; k < sizeof(cfg) / sizeof(cfg[0]); ++k) {
        tsw_params p;
        tsw_params_default(&p, cfg[k].m);
        p.normalize = cfg[k].normalize;
        p.window = cfg[k].window;
        if (p.window == TSW_WINDOW_ITAKURA)
            p.itakura_max_slope = cfg[k].wparam;
        else
            p.window_radius = cfg[k].wparam;
        tcoll x = tc_random(r, cfg[k].nx, cfg[k].dim, cfg[k].lo, cfg[k].hi, cfg[k].layout,
                            KIND_WALK, cfg[k].times, 0);
        tcoll y = tc_random(r, cfg[k].ny, cfg[k].dim, cfg[k].lo, cfg[k].hi, cfg[k].layout,
                            KIND_UNIFORM, cfg[k].times, 0);
        tcoll yp = tc_random(r, cfg[k].nx, cfg[k].dim, cfg[k].lo, cfg[k].hi, cfg[k].layout,
                             KIND_UNIFORM, cfg[k].times, 0);
        for (int mode = 0; mode < 4; ++mode) {
            cudaStream_t s = mode & 1 ? user : NULL;
            int use_ws = mode >> 1;
            void *pinned = NULL;
            dcopy dx = dc_upload(&x, cfg[k].dt, s, &pinned),
                  dy = dc_upload(&y, cfg[k].dt, NULL, NULL);
            for (int op = 0; op < 4; ++op)
                check_device_op(&p, cfg[k].dt, &x, &y, &dx, &dy, op, s, use_ws, other, "device");
            dcopy dyp = dc_upload(&yp, cfg[k].dt, NULL, NULL);
            check_device_op(&p, cfg[k].dt, &x, &yp, &dx, &dyp, OP_PAIRED, s, use_ws, other,
                            "device");
            dc_free(&dyp);
            CUDA_OK(cudaDeviceSynchronize());
            if (pinned)
                CUDA_OK(cudaFreeHost(pinned));
            dc_free(&dx);
            dc_free(&dy);
        }
        tc_free(&x);
        tc_free(&y);
        tc_free(&yp);
    }

    /* one long pair (the long-pair kernel) through tsw_distance_device, both workspaces */
    int64_t lens[2] = {2100, 2000};
    for (int m = 0; m < 3; ++m) {
        tsw_params p;
        tsw_params_default(&p, (tsw_measure)m);
        tsw_dtype dt = m == TSW_TWED ? TSW_F64 : TSW_F32;
        tcoll x = tc_build(r, 2, 1, lens, LAYOUT_RAGGED, KIND_WALK, m == TSW_TWED, 0);
        /* y: the second series alone, so the pair is (x_0, y_0) = (x_0, x_1) */
        tcoll y;
        memset(&y, 0, sizeof(y));
        y = x;
        y.count = 1;
        int64_t off1 = x.offsets[1];
        y.offsets = &off1;
        y.lengths = &x.lengths[1];
        dcopy dx = dc_upload(&x, dt, NULL, NULL);
        for (int mode = 0; mode < 2; ++mode)
            check_device_op(&p, dt, &x, &y, &dx, &dx, OP_DISTANCE, mode ? user : NULL, mode, other,
                            "device long pair");
        dc_free(&dx);
        tc_free(&x);
    }
    CUDA_OK(cudaStreamDestroy(user));
    CUDA_OK(cudaStreamDestroy(other));
}

/* ---- section: faults found on the device ---------------------------------------------- */

static void put_value(void *dptr, tsw_dtype dt, int64_t index, double v)
{
    if (dt == TSW_F32) {
        float f = (float)v;
        CUDA_OK(cudaMemcpy((float *)dptr + index, &f, sizeof(f), cudaMemcpyHostToDevice));
    } else {
        CUDA_OK(cudaMemcpy((double *)dptr + index, &v, sizeof(v), cudaMemcpyHostToDevice));
    }
    CUDA_OK(cudaDeviceSynchronize()); /* see dev_copy */
}

/* Runs cdist, pdist (both layouts) and distance on device copies; every call must return
 * `want` and leave its output untouched. */
static void expect_device_rc_at(const char *file, int line, const tsw_params *p, tsw_dtype dt,
                                const tcoll *x, const tcoll *y, const dcopy *dx, const dcopy *dy,
                                int64_t bad_series, int want_rc, const char *what)
{
    size_t es = esz(dt);
    size_t out_bytes = es * (size_t)(x->count * (x->count > y->count ? x->count : y->count) + 8);
    void *out = dev_alloc(out_bytes);
    CUDA_OK(cudaMemset(out, SENTINEL, out_bytes));
    CUDA_OK(cudaDeviceSynchronize());
    tsw_collection cx = tc_view_at(x, dt, dx->v, dx->t), cy = tc_view_at(y, dt, dy->v, dy->t);
    tsw_series a = tc_series_at(x, bad_series, dt, dx->v, dx->t),
               b = tc_series_at(y, 0, dt, dy->v, dy->t);
    tsw_exec e = exec_on(TSW_DEVICE_CUDA);
    for (int op = 0; op < 5; ++op) {
        int rc = op == OP_CDIST    ? tsw_cdist_device(p, dt, x->dim, &cx, &cy, out, &e)
                 : op == OP_PAIRED ? tsw_paired_device(p, dt, x->dim, &cx, &cx, out, &e)
                 : op == OP_DISTANCE
                     ? tsw_distance_device(p, dt, x->dim, &a, &b, out, &e)
                     : tsw_pdist_device(p, dt, x->dim, &cx, (tsw_pdist_layout)(op - 1), out, &e);
        if (!CHECK_RC_AT(rc, want_rc, file, line))
            TSW_T_NOTE("  %s, op %d: %s (detail: %s)\n", what, op,
                       describe(p, dt, x->dim, tc_len(x, 0), tc_len(y, 0), x->t64 != NULL),
                       tsw_last_error_detail());
    }
    void *h = malloc(out_bytes);
    CUDA_OK(cudaMemcpy(h, out, out_bytes, cudaMemcpyDeviceToHost));
    if (want_rc != TSW_OK && !CHECK_AT(bytes_are(h, SENTINEL, out_bytes), file, line))
        TSW_T_NOTE("  %s: a refused call wrote its output\n", what);
    free(h);
    dev_free(out);
}
#define EXPECT_DEVICE_RC(p, dt, x, y, dx, dy, bad, want, what)                                     \
    expect_device_rc_at(__FILE__, __LINE__, p, dt, x, y, dx, dy, bad, want, what)

static void test_faults(tsw_t_rng *r)
{
    for (int m = 0; m < 3; ++m)
        for (int d = 0; d < 2; ++d) {
            tsw_dtype dt = (tsw_dtype)d;
            int twed = m == TSW_TWED;
            tsw_params p;
            tsw_params_default(&p, (tsw_measure)m);
            tcoll x = tc_random(r, 6, 2, 5, 40, LAYOUT_RAGGED, KIND_WALK, 1, 0);
            tcoll y = tc_random(r, 5, 2, 5, 40, LAYOUT_RAGGED, KIND_WALK, 1, 0);
            dcopy dx = dc_upload(&x, dt, NULL, NULL), dy = dc_upload(&y, dt, NULL, NULL);
            /* the inputs as they are (NaN only in the gaps between series): fine */
            EXPECT_DEVICE_RC(&p, dt, &x, &y, &dx, &dy, 0, TSW_OK, "clean input, NaN gaps");
            int64_t bad = tsw_t_int(r, 0, x.count - 1);
            int64_t row = tc_off(&x, bad) + tsw_t_int(r, 0, tc_len(&x, bad) - 1);
            int64_t idx = row * x.dim + tsw_t_int(r, 0, x.dim - 1);
            const double nonfinite[3] = {NAN, INFINITY, -INFINITY};
            for (int k = 0; k < 3; ++k) {
                put_value(dx.v, dt, idx, nonfinite[k]);
                EXPECT_DEVICE_RC(&p, dt, &x, &y, &dx, &dy, bad, TSW_ENONFINITE, "non-finite value");
                put_value(dx.v, dt, idx, x.v64[idx]);
            }
            /* in y (cdist and distance read it; pdist does not) */
            put_value(dy.v, dt, tc_off(&y, 0) * y.dim, NAN);
            {
                void *out = dev_alloc(esz(dt) * 64);
                tsw_collection cx = tc_view_at(&x, dt, dx.v, dx.t),
                               cy = tc_view_at(&y, dt, dy.v, dy.t);
                tsw_series a = tc_series_at(&x, 0, dt, dx.v, dx.t),
                           b = tc_series_at(&y, 0, dt, dy.v, dy.t);
                tsw_exec e = exec_on(TSW_DEVICE_CUDA);
                CHECK_RC(tsw_cdist_device(&p, dt, 2, &cx, &cy, out, &e), TSW_ENONFINITE);
                CHECK_RC(tsw_distance_device(&p, dt, 2, &a, &b, out, &e), TSW_ENONFINITE);
                CHECK_RC(tsw_pdist_device(&p, dt, 2, &cx, TSW_PDIST_FULL, out, &e), TSW_OK);
                dev_free(out);
            }
            put_value(dy.v, dt, tc_off(&y, 0) * y.dim, y.v64[tc_off(&y, 0) * y.dim]);
            /* timestamps: equal, decreasing, NaN inside a series. TWED: ETIMES; the other
             * measures ignore timestamps, as on the CPU. */
            int64_t tb = tsw_t_int(r, 0, x.count - 1);
            while (tc_len(&x, tb) < 3)
                tb = (tb + 1) % x.count;
            int64_t trow = tc_off(&x, tb) + tsw_t_int(r, 1, tc_len(&x, tb) - 1);
            const double tbad[3] = {x.t64[trow - 1], x.t64[trow - 1] - 1.0, NAN};
            for (int k = 0; k < 3; ++k) {
                put_value(dx.t, dt, trow, tbad[k]);
                EXPECT_DEVICE_RC(&p, dt, &x, &y, &dx, &dy, tb, twed ? TSW_ETIMES : TSW_OK,
                                 k == 0   ? "equal timestamps"
                                 : k == 1 ? "decreasing timestamps"
                                          : "NaN timestamp");
                put_value(dx.t, dt, trow, x.t64[trow]);
            }
            /* the host API finds NaN before any device work */
            {
                tcoll h = tc_random(r, 3, 1, 4, 9, LAYOUT_PACKED, KIND_WALK, 0, 0);
                h.v64[h.rows - 1] = NAN;
                h.v32[h.rows - 1] = NAN;
                tsw_collection ch = tc_view(&h, dt);
                double out[9];
                tsw_exec e = exec_on(TSW_DEVICE_CUDA);
                CHECK_RC(tsw_cdist(&p, dt, 1, &ch, &ch, out, &e), TSW_ENONFINITE);
                tc_free(&h);
            }
            dc_free(&dx);
            dc_free(&dy);
            tc_free(&x);
            tc_free(&y);
        }
    /* the device is still usable */
    tsw_params p;
    tsw_params_default(&p, TSW_TWED);
    tcoll x = tc_random(r, 5, 1, 10, 30, LAYOUT_RAGGED, KIND_WALK, 1, 0);
    CHECK_CDIST(&p, TSW_F64, &x, &x);
    tc_free(&x);
}

/* ---- section: out of memory ---------------------------------------------------------------- */

/* Allocates all the device's free memory but about `leave` bytes; NULL if it cannot. */
static void *hog(size_t leave, size_t *bytes)
{
    size_t fr = dev_free_bytes();
    *bytes = 0;
    if (fr <= leave + ((size_t)64 << 20))
        return NULL;
    size_t want = fr - leave;
    void *p = NULL;
    while (want > ((size_t)64 << 20)) {
        if (cudaMalloc(&p, want) == cudaSuccess) {
            *bytes = want;
            return p;
        }
        (void)cudaGetLastError();
        want -= (size_t)32 << 20;
    }
    return NULL;
}

static int detail_mentions_bytes(const char *d)
{
    if (!d || !*d || !strstr(d, "byte"))
        return 0;
    for (; *d; ++d)
        if (*d >= '0' && *d <= '9')
            return 1;
    return 0;
}

/* Bytes tswarp's pool on the test's device keeps unused. */
static size_t cached_bytes(void)
{
    size_t c = 0;
    CHECK_RC(tsw_cuda_cached_bytes(g_dev, &c), TSW_OK);
    return c;
}

static void test_oom(tsw_t_rng *r)
{
    /* What tswarp's pool keeps from the sections before is not memory the hog below can
     * take; return it, so that "device full" means full for tswarp too. */
    CHECK_RC(tsw_cuda_empty_cache(g_dev), TSW_OK);
    size_t free0 = dev_free_bytes();
    /* a: 1M points of dim 64 in float32 (256 MB); b: one point */
    const int64_t n = 1 << 20, dim = 64;
    float *a = malloc(sizeof(float) * (size_t)(n * dim));
    for (int64_t k = 0; k < n * dim; ++k)
        a[k] = (float)tsw_t_uniform(r, -1, 1);
    float b[64];
    for (int k = 0; k < 64; ++k)
        b[k] = (float)tsw_t_uniform(r, -1, 1);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_series sa = {a, n, NULL}, sb = {b, 1, NULL};
    size_t hog_bytes;
    void *h = hog((size_t)96 << 20, &hog_bytes); /* ~96 MB left: a cannot fit */
    if (!CHECK(h != NULL)) {
        free(a);
        return;
    }
    printf("[gpu]   hog: %.1f GiB taken, %.0f MB left\n", (double)hog_bytes / (1 << 30),
           (double)dev_free_bytes() / (1 << 20));
    tsw_exec e = exec_on(TSW_DEVICE_CUDA);
    double v = -1;
    int rc = tsw_distance(&p, TSW_F32, dim, &sa, &sb, &v, &e);
    CHECK_RC(rc, TSW_ENOMEM);
    const char *detail = tsw_last_error_detail();
    if (!CHECK(detail_mentions_bytes(detail)))
        TSW_T_NOTE("  detail after ENOMEM: \"%s\"\n", detail ? detail : "(null)");
    printf("[gpu]   ENOMEM detail: \"%s\"\n", detail ? detail : "(null)");
    CHECK(v == -1); /* nothing written */

    /* cdist of 4 series of 256K points (256 MB in all): chunked (then right) or ENOMEM */
    tsw_collection cx = {a, NULL, NULL, n / 4, 4, NULL}, cy = {b, NULL, NULL, 1, 1, NULL};
    float out[4] = {-1, -1, -1, -1}, ref[4];
    rc = tsw_cdist(&p, TSW_F32, dim, &cx, &cy, out, &e);
    CHECK(rc == TSW_OK || rc == TSW_ENOMEM);
    if (rc == TSW_ENOMEM) {
        detail = tsw_last_error_detail();
        if (!CHECK(detail_mentions_bytes(detail)))
            TSW_T_NOTE("  detail after ENOMEM: \"%s\"\n", detail ? detail : "(null)");
        CHECK(out[0] == -1 && out[3] == -1);
    }
    CUDA_OK(cudaFree(h));
    if (rc == TSW_OK) {
        tsw_exec ec = exec_on(TSW_DEVICE_CPU);
        CHECK_RC(tsw_cdist(&p, TSW_F32, dim, &cx, &cy, ref, &ec), TSW_OK);
        for (int k = 0; k < 4; ++k)
            CMP(out[k], ref[k], 0, TSW_DTW, TSW_F32, "cdist under memory pressure (chunked)");
    }
    printf("[gpu]   cdist of 256 MB with 96 MB free: %s\n", tsw_err_name(rc));

    /* far beyond the whole device: the size queries answer without allocating */
    tsw_cuda_device info;
    CHECK_RC(tsw_cuda_device_info(g_dev, &info), TSW_OK);
    int64_t huge_len = (int64_t)(info.total_memory / 8) + 1; /* > total memory in doubles */
    tsw_collection qx = {NULL, NULL, NULL, huge_len, 2, NULL};
    size_t bytes = 0;
    rc = tsw_cdist_workspace_size(&p, TSW_F64, 1, &qx, &qx, &e, &bytes);
    CHECK(rc == TSW_OK || rc == TSW_EOVERFLOW);

    /* the device is usable after that, its memory free or in tswarp's pool */
    CHECK(dev_free_bytes() + cached_bytes() + ((size_t)64 << 20) >= free0);
    free(a);
    tsw_params_default(&p, TSW_SOFT_DTW);
    tcoll x = tc_random(r, 6, 2, 10, 50, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    CHECK_CDIST(&p, TSW_F32, &x, &x);
    {
        /* a failure, then a successful GPU call: the detail is cleared */
        tsw_exec bad = exec_on(TSW_DEVICE_CUDA);
        bad.device_index = 1 << 20;
        tsw_collection cc = tc_view(&x, TSW_F32);
        float o[36];
        (void)tsw_cdist(&p, TSW_F32, 2, &cc, &cc, o, &bad);
        CHECK_RC(tsw_cdist(&p, TSW_F32, 2, &cc, &cc, o, &e), TSW_OK);
        CHECK_STR(tsw_last_error_detail(), "");
    }

    /* with a caller workspace the call allocates nothing: it succeeds with the device full */
    tsw_params_default(&p, TSW_DTW);
    tcoll big = tc_random(r, g_quick ? 4096 : 131072, 1, 2, 2, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    tcoll small = tc_random(r, 16, 1, 2, 40, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    dcopy db = dc_upload(&big, TSW_F32, NULL, NULL), ds = dc_upload(&small, TSW_F32, NULL, NULL);
    tsw_collection cb = tc_view_at(&big, TSW_F32, db.v, NULL),
                   cs = tc_view_at(&small, TSW_F32, ds.v, NULL);
    size_t ob = sizeof(float) * (size_t)(big.count * small.count);
    void *dout = dev_alloc(ob);
    tsw_exec ed = exec_on(TSW_DEVICE_CUDA);
    CHECK_RC(tsw_cdist_workspace_size(&p, TSW_F32, 1, &cb, &cs, &ed, &bytes), TSW_OK);
    void *ws = dev_alloc(bytes);
    ed.cuda_workspace = ws;
    ed.cuda_workspace_bytes = bytes;
    CHECK_RC(tsw_cdist_device(&p, TSW_F32, 1, &cb, &cs, dout, &ed), TSW_OK); /* warm-up */
    h = hog((size_t)2 << 20, &hog_bytes);
    if (h) {
        /* fill what is left in smaller pieces */
        void *crumbs[64];
        int nc = 0;
        for (size_t piece = (size_t)8 << 20; piece >= ((size_t)1 << 20) && nc < 64; piece /= 2)
            while (nc < 64 && cudaMalloc(&crumbs[nc], piece) == cudaSuccess)
                ++nc;
        (void)cudaGetLastError();
        size_t left = 0, tot = 0;
        CUDA_OK(cudaMemGetInfo(&left, &tot));
        rc = tsw_cdist_device(&p, TSW_F32, 1, &cb, &cs, dout, &ed);
        if (!CHECK_RC(rc, TSW_OK))
            TSW_T_NOTE("  with a caller workspace of %zu bytes and %zu bytes free the call "
                       "failed: it allocates device memory (detail: %s)\n",
                       bytes, left, tsw_last_error_detail());
        printf("[gpu]   caller workspace %zu bytes, device free %zu bytes: %s\n", bytes, left,
               tsw_err_name(rc));
        while (nc > 0)
            CUDA_OK(cudaFree(crumbs[--nc]));
        CUDA_OK(cudaFree(h));
    }
    dev_free(ws);
    dev_free(dout);
    dc_free(&db);
    dc_free(&ds);
    tc_free(&big);
    tc_free(&small);
    tc_free(&x);
}

/* ---- section: failing calls leak no device memory ------------------------------------------- */

typedef struct {
    int calls, cancel_after;
} canceller;

static int cancel_cb(void *user, int64_t done, int64_t total)
{
    (void)done, (void)total;
    canceller *c = user;
    return ++c->calls > c->cancel_after;
}

static void test_leak(tsw_t_rng *r)
{
    const int64_t big_count = g_quick ? 4096 : 65536;
    tsw_params dtw, twed;
    tsw_params_default(&dtw, TSW_DTW);
    tsw_params_default(&twed, TSW_TWED);
    tcoll nanx = tc_random(r, big_count, 1, 4, 4, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    tcoll y = tc_random(r, 4, 1, 4, 8, LAYOUT_PACKED, KIND_WALK, 0, 0);
    tcoll tx = tc_random(r, g_quick ? 256 : 2048, 1, 16, 16, LAYOUT_PACKED, KIND_WALK, 1, 0);
    tcoll cx = tc_random(r, g_quick ? 32 : 128, 1, 128, 128, LAYOUT_PACKED, KIND_WALK, 0, 0);
    int64_t lens[2] = {2100, 2000};
    tcoll lp = tc_build(r, 2, 1, lens, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    dcopy dn = dc_upload(&nanx, TSW_F32, NULL, NULL), dy = dc_upload(&y, TSW_F32, NULL, NULL);
    dcopy dtc = dc_upload(&tx, TSW_F64, NULL, NULL), dl = dc_upload(&lp, TSW_F32, NULL, NULL);
    put_value(dn.v, TSW_F32, tc_off(&nanx, big_count - 1) + 3, NAN); /* last point of the last */
    put_value(dtc.t, TSW_F64, tx.rows - 1, tx.t64[tx.rows - 2]);     /* equal timestamps */
    put_value(dl.v, TSW_F32, lp.offsets[1] + 1999, NAN);
    size_t out_bytes = sizeof(double) * (size_t)(big_count * 4 + tx.count * tx.count);
    void *out = dev_alloc(out_bytes);
    float *hout = malloc(sizeof(float) * (size_t)(cx.count * cx.count));
    tsw_collection vn = tc_view_at(&nanx, TSW_F32, dn.v, NULL),
                   vy = tc_view_at(&y, TSW_F32, dy.v, NULL);
    tsw_collection vt = tc_view_at(&tx, TSW_F64, dtc.v, dtc.t), vc = tc_view(&cx, TSW_F32);
    tsw_series la = tc_series_at(&lp, 0, TSW_F32, dl.v, NULL),
               lb = tc_series_at(&lp, 1, TSW_F32, dl.v, NULL);
    size_t ws_need = 0;
    tsw_exec e0 = exec_on(TSW_DEVICE_CUDA);
    CHECK_RC(tsw_cdist_workspace_size(&dtw, TSW_F32, 1, &vn, &vy, &e0, &ws_need), TSW_OK);
    void *ws = dev_alloc(ws_need + 256);
    int ncancel = 0;
    const int max_cancel = g_quick ? 4 : 20;

    /* kind k of failing call; returns its status */
    int expected[5] = {TSW_ENONFINITE, TSW_ETIMES, TSW_ECANCELED, TSW_EINVAL, TSW_ENONFINITE};
    int bad_rc = 0;
    for (int pass = 0; pass < 2; ++pass) {
        int calls = pass == 0 ? 10 : 200;
        /* emptied pool: a block that a failing call never gave back would still show */
        if (pass == 1)
            CHECK_RC(tsw_cuda_empty_cache(g_dev), TSW_OK);
        size_t before = pass == 1 ? dev_free_bytes() : 0;
        for (int i = 0; i < calls; ++i) {
            int kind = i % 5, rc;
            tsw_exec e = exec_on(TSW_DEVICE_CUDA);
            if (kind == 2 && ncancel >= max_cancel)
                kind = 0;
            switch (kind) {
            case 0:
                rc = tsw_cdist_device(&dtw, TSW_F32, 1, &vn, &vy, out, &e);
                break;
            case 1:
                rc = tsw_pdist_device(&twed, TSW_F64, 1, &vt, TSW_PDIST_CONDENSED, out, &e);
                break;
            case 2: {
                canceller c = {0, 0};
                e.progress = cancel_cb;
                e.progress_user = &c;
                rc = tsw_cdist(&dtw, TSW_F32, 1, &vc, &vc, hout, &e);
                ++ncancel;
                break;
            }
            case 3:
                e.cuda_workspace = ws;
                e.cuda_workspace_bytes = ws_need ? ws_need - 1 : 0;
                rc = ws_need ? tsw_cdist_device(&dtw, TSW_F32, 1, &vn, &vy, out, &e)
                             : TSW_EINVAL; /* nothing to be too small */
                break;
            default:
                rc = tsw_distance_device(&dtw, TSW_F32, 1, &la, &lb, out, &e);
            }
            if (rc != expected[kind] && bad_rc++ < 5)
                CHECK_RC(rc, expected[kind]);
        }
        if (pass == 1) {
            CHECK_RC(tsw_cuda_empty_cache(g_dev), TSW_OK);
            size_t after = dev_free_bytes();
            const size_t slack = (size_t)16 << 20;
            long long diff = (long long)before - (long long)after;
            if (!CHECK(after + slack >= before))
                TSW_T_NOTE("  200 failing calls lost %lld bytes of device memory\n", diff);
            printf("[gpu]   free device memory before/after 200 failing calls: %zu / %zu "
                   "(%+lld bytes)\n",
                   before, after, -diff);
        }
    }
    CHECK_EQ(bad_rc, 0);
    /* and the device works */
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    CHECK_CDIST(&p, TSW_F32, &cx, &y);
    dev_free(ws);
    dev_free(out);
    free(hout);
    dc_free(&dn);
    dc_free(&dy);
    dc_free(&dtc);
    dc_free(&dl);
    tc_free(&nanx);
    tc_free(&y);
    tc_free(&tx);
    tc_free(&cx);
    tc_free(&lp);
}

/* ---- section: host threads sharing the GPU -------------------------------------------------- */

#define N_THREADS 4

typedef struct {
    int op; /* OP_* on host memory; 4: cdist_device on a stream of the thread's own */
    tsw_params p;
    tsw_dtype dt;
    tcoll x, y;
    dcopy dx, dy;
    void *serial;
    size_t bytes;
} gjob;

static int run_job(const gjob *j, void *out, cudaStream_t s)
{
    tsw_collection cx = tc_view(&j->x, j->dt), cy = tc_view(&j->y, j->dt);
    tsw_exec e = exec_on(TSW_DEVICE_CUDA);
    e.n_threads = 2;
    if (j->op == OP_CDIST)
        return tsw_cdist(&j->p, j->dt, j->x.dim, &cx, &cy, out, &e);
    if (j->op == OP_PDIST_FULL || j->op == OP_PDIST_CONDENSED)
        return tsw_pdist(&j->p, j->dt, j->x.dim, &cx, (tsw_pdist_layout)(j->op - 1), out, &e);
    if (j->op == OP_DISTANCE) {
        tsw_series a = tc_series(&j->x, 0, j->dt), b = tc_series(&j->y, 0, j->dt);
        return tsw_distance(&j->p, j->dt, j->x.dim, &a, &b, out, &e);
    }
    /* device memory, the thread's stream */
    tsw_collection dx = tc_view_at(&j->x, j->dt, j->dx.v, j->dx.t),
                   dy = tc_view_at(&j->y, j->dt, j->dy.v, j->dy.t);
    e.cuda_stream = s;
    void *dout = NULL;
    if (cudaMalloc(&dout, j->bytes) != cudaSuccess)
        return TSW_ENOMEM;
    int rc = tsw_cdist_device(&j->p, j->dt, j->x.dim, &dx, &dy, dout, &e);
    if (rc == TSW_OK && cudaMemcpy(out, dout, j->bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
        rc = TSW_ECUDA;
    cudaFree(dout);
    return rc;
}

typedef struct {
    gjob *jobs;
    int n_jobs, rounds, id;
    long errors, mismatches;
} gworker;

static void *gworker_main(void *argp)
{
    gworker *w = argp;
    cudaStream_t s = NULL;
    if (cudaSetDevice(g_dev) != cudaSuccess ||
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        w->errors++;
        return NULL;
    }
    for (int round = 0; round < w->rounds; ++round)
        for (int k = 0; k < w->n_jobs; ++k) {
            const gjob *j = &w->jobs[(k + round + w->id) % w->n_jobs];
            void *out = malloc(j->bytes);
            if (run_job(j, out, s) != TSW_OK)
                w->errors++;
            else if (memcmp(out, j->serial, j->bytes) != 0)
                w->mismatches++;
            free(out);
        }
    cudaStreamDestroy(s);
    return NULL;
}

static void test_threads(tsw_t_rng *r)
{
    gjob jobs[6];
    memset(jobs, 0, sizeof(jobs));
    int q = g_quick;
    /* DTW f32 cdist, TWED f64 pdist with timestamps, soft-DTW f32 normalised cdist, a long
     * DTW f64 pair, TWED f32 condensed pdist, DTW f64 d=3 cdist on device memory */
    const tsw_measure M[6] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW, TSW_DTW, TSW_TWED, TSW_DTW};
    const int OP[6] = {OP_CDIST, OP_PDIST_FULL, OP_CDIST, OP_DISTANCE, OP_PDIST_CONDENSED, 4};
    const tsw_dtype DT[6] = {TSW_F32, TSW_F64, TSW_F32, TSW_F64, TSW_F32, TSW_F64};
    for (int k = 0; k < 6; ++k) {
        gjob *j = &jobs[k];
        j->op = OP[k];
        j->dt = DT[k];
        tsw_params_default(&j->p, M[k]);
        if (k == 2)
            j->p.normalize = 1;
        if (k == 4) {
            j->p.window = TSW_WINDOW_SAKOE_CHIBA;
            j->p.window_radius = 7;
        }
        int times = M[k] == TSW_TWED;
        int64_t dim = k == 5 ? 3 : k == 2 ? 2 : 1;
        if (k == 3) {
            int64_t lens[2] = {2100, 2000};
            j->x = tc_build(r, 2, 1, lens, LAYOUT_RAGGED, KIND_WALK, 0, 0);
            j->y = tc_build(r, 2, 1, lens + 1, LAYOUT_PACKED, KIND_WALK, 0, 0);
        } else {
            j->x = tc_random(r, q ? 12 : 64, dim, 20, q ? 40 : 200,
                             k % 2 ? LAYOUT_RAGGED : LAYOUT_PACKED, KIND_WALK, times, 0);
            j->y = tc_random(r, q ? 10 : 48, dim, 20, q ? 40 : 200, LAYOUT_RAGGED, KIND_UNIFORM,
                             times, 0);
        }
        int64_t total = j->op == OP_DISTANCE ? 1
                        : j->op == OP_PDIST_FULL || j->op == OP_PDIST_CONDENSED
                            ? tsw_pdist_size(j->x.count, (tsw_pdist_layout)(j->op - 1))
                            : j->x.count * j->y.count;
        j->bytes = j->op == OP_DISTANCE ? sizeof(double) : esz(j->dt) * (size_t)total;
        if (j->op == 4) {
            j->dx = dc_upload(&j->x, j->dt, NULL, NULL);
            j->dy = dc_upload(&j->y, j->dt, NULL, NULL);
        }
        j->serial = malloc(j->bytes);
        CHECK_RC(run_job(j, j->serial, NULL), TSW_OK);
        /* the serial GPU result itself against the CPU */
        if (j->op == OP_CDIST || j->op == 4) {
            tsw_collection cx = tc_view(&j->x, j->dt), cy = tc_view(&j->y, j->dt);
            void *ref = malloc(j->bytes);
            tsw_exec ec = exec_on(TSW_DEVICE_CPU);
            CHECK_RC(tsw_cdist(&j->p, j->dt, dim, &cx, &cy, ref, &ec), TSW_OK);
            double *s = batch_scale(&j->p, j->dt, &j->x, &j->y);
            for (int64_t i = 0; i < total; ++i)
                CMP(get(j->serial, j->dt, i), get(ref, j->dt, i), s[i], j->p.measure, j->dt,
                    "threads: serial GPU cdist");
            free(s);
            free(ref);
        }
    }
    pthread_t th[N_THREADS];
    gworker w[N_THREADS];
    for (int t = 0; t < N_THREADS; ++t) {
        w[t] = (gworker){jobs, 6, q ? 1 : 3, t, 0, 0};
        CHECK(pthread_create(&th[t], NULL, gworker_main, &w[t]) == 0);
    }
    for (int t = 0; t < N_THREADS; ++t) {
        CHECK(pthread_join(th[t], NULL) == 0);
        CHECK_EQ(w[t].errors, 0);
        CHECK_EQ(w[t].mismatches, 0);
    }
    for (int k = 0; k < 6; ++k) {
        dc_free(&jobs[k].dx);
        dc_free(&jobs[k].dy);
        tc_free(&jobs[k].x);
        tc_free(&jobs[k].y);
        free(jobs[k].serial);
    }
}

/* ---- section: progress and cancellation on the GPU -------------------------------------- */

typedef struct {
    pthread_t caller;
    int64_t calls, last_done, total;
    int wrong_thread, decreasing, over_total, total_changed;
    int cancel_at_call, cancelled;
    int64_t calls_after_cancel;
    double cancel_time;
} recorder;

static int record_cb(void *user, int64_t done, int64_t total)
{
    recorder *r = user;
    if (r->cancelled)
        r->calls_after_cancel++;
    r->calls++;
    r->wrong_thread |= !pthread_equal(pthread_self(), r->caller);
    r->decreasing |= done < r->last_done;
    r->over_total |= done > total || done < 0;
    r->total_changed |= r->total >= 0 && total != r->total;
    r->last_done = done;
    r->total = total;
    if (r->cancel_at_call && r->calls == r->cancel_at_call) {
        r->cancelled = 1;
        r->cancel_time = tsw_t_seconds();
        return 1;
    }
    return 0;
}

static void test_progress(tsw_t_rng *r)
{
    /* ~2.7e11 cells (DTW f32): a fraction of a second at the issue's 2 TCUPS */
    const int64_t n = g_quick ? 64 : 1024, len = g_quick ? 128 : 512;
    tcoll x = tc_random(r, n, 1, len, len, LAYOUT_PACKED, KIND_WALK, 0, 0);
    tsw_collection c = tc_view(&x, TSW_F32);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    float *out = malloc(sizeof(float) * (size_t)(n * n));
    for (int op = 0; op < 3; ++op) {
        recorder rec;
        memset(&rec, 0, sizeof(rec));
        rec.caller = pthread_self();
        rec.last_done = rec.total = -1;
        tsw_exec e = exec_on(TSW_DEVICE_CUDA);
        e.progress = record_cb;
        e.progress_user = &rec;
        double t0 = tsw_t_seconds();
        int rc = op == 0 ? tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e)
                         : tsw_pdist(&p, TSW_F32, 1, &c, (tsw_pdist_layout)(op - 1), out, &e);
        double t = tsw_t_seconds() - t0;
        int64_t total = op == 0 ? n * n : n * (n - 1) / 2;
        CHECK_RC(rc, TSW_OK);
        CHECK(rec.calls >= 1);
        CHECK_EQ(rec.total, total);
        CHECK_EQ(rec.last_done, total);
        CHECK(!rec.wrong_thread);
        CHECK(!rec.decreasing);
        CHECK(!rec.over_total);
        CHECK(!rec.total_changed);
        if (t > 0.4)
            CHECK(rec.calls >= 2); /* about every 50 ms */
        printf("[gpu]   progress: %s of %" PRId64 " x len %" PRId64 ": %.3f s, %" PRId64
               " callbacks\n",
               op == 0   ? "cdist"
               : op == 1 ? "pdist FULL"
                         : "pdist CONDENSED",
               n, len, t, rec.calls);
    }
    /* cancelled on the first call: TSW_ECANCELED soon after, no further calls */
    const int64_t n2 = g_quick ? 128 : 2048;
    tcoll x2 = tc_random(r, n2, 1, len, len, LAYOUT_PACKED, KIND_WALK, 0, 0);
    tsw_collection c2 = tc_view(&x2, TSW_F32);
    float *out2 = malloc(sizeof(float) * (size_t)(n2 * n2));
    for (int op = 0; op < 2; ++op) {
        recorder rec;
        memset(&rec, 0, sizeof(rec));
        rec.caller = pthread_self();
        rec.last_done = rec.total = -1;
        rec.cancel_at_call = 1;
        tsw_exec e = exec_on(TSW_DEVICE_CUDA);
        e.progress = record_cb;
        e.progress_user = &rec;
        double t0 = tsw_t_seconds();
        int rc = op == 0 ? tsw_cdist(&p, TSW_F32, 1, &c2, &c2, out2, &e)
                         : tsw_pdist(&p, TSW_F32, 1, &c2, TSW_PDIST_CONDENSED, out2, &e);
        double t1 = tsw_t_seconds();
        CHECK_RC(rc, TSW_ECANCELED);
        CHECK(rec.cancelled);
        CHECK_EQ(rec.calls_after_cancel, 0);
        CHECK(!rec.wrong_thread);
        if (rec.cancelled && !CHECK(t1 - rec.cancel_time < (g_quick ? 20.0 : 2.0)))
            TSW_T_NOTE("  returned %.2f s after the cancellation\n", t1 - rec.cancel_time);
        printf("[gpu]   cancel: %s of %" PRId64 ": returned %.3f s after the request (%.3f s in "
               "all, done %" PRId64 " of %" PRId64 ")\n",
               op == 0 ? "cdist" : "pdist", n2, t1 - rec.cancel_time, t1 - t0, rec.last_done,
               rec.total);
    }
    /* the device works after a cancellation */
    tcoll s = tc_random(r, 10, 1, 30, 60, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    CHECK_CDIST(&p, TSW_F32, &s, &s);
    tc_free(&s);
    free(out);
    free(out2);
    tc_free(&x);
    tc_free(&x2);
}

/* ---- section: several GPUs in one call (tsw_exec.n_devices) ---------------------------------- */

/* The call `op` (0 cdist, 1 pdist FULL, 2 pdist CONDENSED, 3 paired, 4 knn) with exec e. */
static int multi_call(int op, const tsw_params *p, tsw_dtype dt, const tcoll *x, const tcoll *y,
                      int64_t k, void *out, int64_t *index, const tsw_exec *e)
{
    tsw_collection cx = tc_view(x, dt), cy = tc_view(y, dt);
    switch (op) {
    case 0:
        return tsw_cdist(p, dt, x->dim, &cx, &cy, out, e);
    case 1:
    case 2:
        return tsw_pdist(p, dt, x->dim, &cx, (tsw_pdist_layout)(op - 1), out, e);
    case 3:
        return tsw_paired(p, dt, x->dim, &cx, &cy, out, e);
    default:
        return tsw_knn(p, dt, x->dim, &cx, &cy, k, out, index, e);
    }
}

/* Each of devices 0 .. nd - 1's free memory after emptying tswarp's pool of it. */
static void free_snapshot(int nd, size_t *bytes)
{
    for (int d = 0; d < nd; ++d) {
        CHECK_RC(tsw_cuda_empty_cache(d), TSW_OK);
        CUDA_OK(cudaSetDevice(d));
        bytes[d] = dev_free_bytes();
    }
    CUDA_OK(cudaSetDevice(g_dev));
}

/* Every device of the snapshot has its memory back (within 64 MB). */
static void check_freed(int nd, const size_t *before, const char *when)
{
    size_t now[TSW__TEST_MAX_DEV];
    free_snapshot(nd, now);
    for (int d = 0; d < nd; ++d)
        if (!CHECK(now[d] + ((size_t)64 << 20) >= before[d]))
            TSW_T_NOTE("  device %d: %.0f MB free before %s, %.0f MB after\n", d,
                       (double)before[d] / (1 << 20), when, (double)now[d] / (1 << 20));
}

static void test_multi(tsw_t_rng *r)
{
    int count = 0;
    CHECK_RC(tsw_cuda_device_count(&count), TSW_OK);
    /* the lists to try: every device (one thread when there is one GPU: the tiles, the queue
     * and the copies of a pdist's blocks are all there), and with two or more GPUs the
     * devices in reverse order */
    int rev[TSW__TEST_MAX_DEV], nrev = count < TSW__TEST_MAX_DEV ? count : TSW__TEST_MAX_DEV;
    for (int i = 0; i < nrev; ++i)
        rev[i] = nrev - 1 - i;
    const int iters = g_quick ? 8 : 40;
    static const char *const OPS[5] = {"cdist", "pdist FULL", "pdist CONDENSED", "paired",
                                       "knn"};
    long mismatches = 0;
    for (int it = 0; it < iters; ++it) {
        tsw_measure m = (tsw_measure)(it % 3);
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        int64_t dim = DIMS[tsw_t_int(r, 0, 2)];
        int64_t hi = g_quick ? 40 : (int64_t)tsw_t_int(r, 8, 160), lo = hi / 4 + 1;
        int64_t nx = tsw_t_int(r, 1, g_quick ? 30 : 220), ny = tsw_t_int(r, 1, g_quick ? 30 : 180);
        tsw_params p;
        int times;
        random_params(r, &p, m, &times);
        int zeros = m == TSW_DTW && p.cost == TSW_COST_COSINE;
        tcoll x = tc_random(r, nx, dim, lo, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK, times, zeros);
        tcoll y = tc_random(r, ny, dim, lo, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK, times, zeros);
        tcoll yp = tc_random(r, nx, dim, lo, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK, times, zeros);
        int64_t k = tsw_t_int(r, 1, ny < 5 ? ny : 5);
        size_t n_out = (size_t)(nx * (nx > ny ? nx : ny) + 1);
        void *one = malloc(n_out * esz(dt)), *many = malloc(n_out * esz(dt));
        int64_t *ione = malloc(n_out * sizeof(int64_t)), *imany = malloc(n_out * sizeof(int64_t));
        for (int op = 0; op < 5; ++op) {
            const tcoll *py = op == 3 ? &yp : &y;
            size_t n = op == 0 ? (size_t)(nx * ny)
                       : op == 1 ? (size_t)(nx * nx)
                       : op == 2 ? (size_t)(nx * (nx - 1) / 2)
                       : op == 3 ? (size_t)nx
                                 : (size_t)(nx * k);
            tsw_exec e = exec_on(TSW_DEVICE_CUDA);
            int rc1 = multi_call(op, &p, dt, &x, py, k, one, ione, &e);
            for (int l = 0; l < (nrev >= 2 ? 2 : 1); ++l) {
                tsw_exec em = exec_on(TSW_DEVICE_CUDA);
                if (l == 0) {
                    em.n_devices = TSW_ALL_DEVICES;
                } else {
                    em.n_devices = nrev;
                    em.devices = rev;
                }
                memset(many, SENTINEL, n_out * esz(dt));
                int rc2 = multi_call(op, &p, dt, &x, py, k, many, imany, &em);
                CHECK_RC(rc2, rc1);
                if (rc1 != TSW_OK || rc2 != TSW_OK)
                    continue;
                int same = memcmp(one, many, n * esz(dt)) == 0 &&
                           (op != 4 || memcmp(ione, imany, n * sizeof(int64_t)) == 0);
                if (!CHECK(same)) {
                    ++mismatches;
                    TSW_T_NOTE("  %s %s %s, %" PRId64 " x %" PRId64 " dim %" PRId64
                               ": several devices (list %d) differ from one\n",
                               OPS[op], MNAME[m], dt == TSW_F32 ? "f32" : "f64", nx, ny, dim, l);
                }
            }
        }
        free(one);
        free(many);
        free(ione);
        free(imany);
        tc_free(&x);
        tc_free(&y);
        tc_free(&yp);
    }

    /* subsequence search: the same matches and distances as on one device */
    for (int it = 0; it < (g_quick ? 3 : 10); ++it) {
        int64_t dim = tsw_t_int(r, 1, 2), n = tsw_t_int(r, 8, 128);
        int64_t N = tsw_t_int(r, n, g_quick ? 20000 : 400000);
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        tcoll s1 = tc_random(r, 1, dim, N, N, LAYOUT_PACKED, KIND_WALK, 0, 0);
        tcoll q1 = tc_random(r, 1, dim, n, n, LAYOUT_PACKED, KIND_WALK, 0, 0);
        tsw_series ss = tc_series(&s1, 0, dt), qs = tc_series(&q1, 0, dt);
        tsw_params p;
        tsw_params_default(&p, TSW_DTW);
        p.window = TSW_WINDOW_SAKOE_CHIBA;
        p.window_radius = (double)tsw_t_int(r, 0, n / 4);
        int64_t k = tsw_t_int(r, 1, 6), excl = tsw_t_int(r, 1, 2 * n), W = N - n + 1;
        if (k > W)
            k = W;
        int znorm = (int)tsw_t_int(r, 0, 1);
        int64_t st1[8], st2[8], c1 = -1, c2 = -2;
        double d1[8], d2[8];
        tsw_search_stats a, b;
        tsw_exec e1 = exec_on(TSW_DEVICE_CUDA), e2 = exec_on(TSW_DEVICE_CUDA);
        e2.n_devices = TSW_ALL_DEVICES;
        int rc1 = tsw_search(&p, dt, dim, &qs, &ss, znorm, excl, k, st1, d1, &c1, &a, &e1);
        int rc2 = tsw_search(&p, dt, dim, &qs, &ss, znorm, excl, k, st2, d2, &c2, &b, &e2);
        CHECK_RC(rc2, rc1);
        if (rc1 == TSW_OK && rc2 == TSW_OK) {
            CHECK_EQ(c2, c1);
            CHECK_EQ(b.windows, a.windows);
            int same = c1 == c2 && memcmp(st1, st2, (size_t)c1 * sizeof(int64_t)) == 0 &&
                       memcmp(d1, d2, (size_t)c1 * sizeof(double)) == 0;
            if (!CHECK(same)) {
                ++mismatches;
                TSW_T_NOTE("  search of %" PRId64 " in %" PRId64 " points, k %" PRId64
                           ": several devices differ from one\n", n, N, k);
            }
        }
        tc_free(&s1);
        tc_free(&q1);
    }

    /* soft-DTW values and gradients of paired batches: the bits of one device */
    for (int it = 0; it < (g_quick ? 4 : 16); ++it) {
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        int64_t dim = tsw_t_int(r, 1, 3), hi = tsw_t_int(r, 8, g_quick ? 60 : 400);
        int64_t nx = tsw_t_int(r, 1, g_quick ? 24 : 300);
        int layout = (int)tsw_t_int(r, 0, 2);
        tcoll x = tc_random(r, nx, dim, hi / 3 + 1, hi, layout, KIND_WALK, 0, 0);
        tcoll y = tc_random(r, nx, dim, hi / 3 + 1, hi, layout, KIND_WALK, 0, 0);
        tsw_collection cx = tc_view(&x, dt), cy = tc_view(&y, dt);
        tsw_params p;
        tsw_params_default(&p, TSW_SOFT_DTW);
        p.gamma = tsw_t_uniform(r, 0.05, 5);
        p.normalize = (int)tsw_t_int(r, 0, 1);
        if (tsw_t_int(r, 0, 1)) {
            p.window = TSW_WINDOW_SAKOE_CHIBA;
            p.window_radius = (double)tsw_t_int(r, 0, hi / 4);
        }
        const size_t es = esz(dt), gxn = (size_t)x.rows * (size_t)dim * es,
                     gyn = (size_t)y.rows * (size_t)dim * es;
        void *v1 = malloc((size_t)nx * es), *v2 = malloc((size_t)nx * es);
        void *gx1 = calloc(1, gxn + 8), *gx2 = calloc(1, gxn + 8);
        void *gy1 = calloc(1, gyn + 8), *gy2 = calloc(1, gyn + 8);
        tsw_exec e1 = exec_on(TSW_DEVICE_CUDA), e2 = exec_on(TSW_DEVICE_CUDA);
        e2.n_devices = TSW_ALL_DEVICES;
        int rc1 = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v1, gx1, gy1, &e1);
        int rc2 = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, v2, gx2, gy2, &e2);
        CHECK_RC(rc2, rc1);
        if (rc1 == TSW_OK && rc2 == TSW_OK &&
            !CHECK(memcmp(v1, v2, (size_t)nx * es) == 0 && memcmp(gx1, gx2, gxn) == 0 &&
                   memcmp(gy1, gy2, gyn) == 0)) {
            ++mismatches;
            TSW_T_NOTE("  soft-DTW gradients of %" PRId64 " pairs (dim %" PRId64 ", %s, "
                       "layout %d): several devices differ from one\n",
                       nx, dim, dt == TSW_F32 ? "f32" : "f64", layout);
        }
        free(v1);
        free(v2);
        free(gx1);
        free(gx2);
        free(gy1);
        free(gy2);
        tc_free(&x);
        tc_free(&y);
    }

    /* arrays in device memory (the *_device calls): several devices stage them through
     * host memory, in order on the caller's stream; the bits of one device, and the
     * gradients' rows outside every series left as they were */
    for (int it = 0; it < (g_quick ? 4 : 12); ++it) {
        tsw_measure m = (tsw_measure)(it % 3);
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        int64_t dim = DIMS[tsw_t_int(r, 0, 2)], hi = g_quick ? 40 : tsw_t_int(r, 8, 120);
        int64_t nx = tsw_t_int(r, 1, g_quick ? 24 : 160), ny = tsw_t_int(r, 1, g_quick ? 24 : 120);
        tsw_params p;
        int times;
        random_params(r, &p, m, &times);
        int zeros = m == TSW_DTW && p.cost == TSW_COST_COSINE;
        tcoll x = tc_random(r, nx, dim, hi / 4 + 1, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK,
                            times, zeros);
        tcoll y = tc_random(r, ny, dim, hi / 4 + 1, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK,
                            times, zeros);
        tcoll yp = tc_random(r, nx, dim, hi / 4 + 1, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK,
                             times, zeros);
        cudaStream_t s;
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        void *pin[3] = {NULL, NULL, NULL};
        dcopy dx = dc_upload(&x, dt, s, &pin[0]), dy = dc_upload(&y, dt, s, &pin[1]),
              dp = dc_upload(&yp, dt, s, &pin[2]);
        tsw_collection cx = tc_view_at(&x, dt, dx.v, dx.t), cy = tc_view_at(&y, dt, dy.v, dy.t),
                       cp = tc_view_at(&yp, dt, dp.v, dp.t);
        const size_t es = esz(dt), n_out = (size_t)(nx * (nx > ny ? nx : ny) + 1);
        void *o1 = dev_alloc(n_out * es), *o2 = dev_alloc(n_out * es);
        for (int op = 0; op < 4; ++op) {
            size_t n = op == 0 ? (size_t)(nx * ny)
                       : op == 1 ? (size_t)(nx * nx)
                       : op == 2 ? (size_t)(nx * (nx - 1) / 2)
                                 : (size_t)nx;
            tsw_exec e1 = exec_on(TSW_DEVICE_CUDA);
            e1.cuda_stream = s;
            tsw_exec e2 = e1;
            e2.n_devices = TSW_ALL_DEVICES;
            int rc[2];
            for (int l = 0; l < 2; ++l) {
                const tsw_exec *e = l ? &e2 : &e1;
                void *o = l ? o2 : o1;
                rc[l] = op == 0 ? tsw_cdist_device(&p, dt, dim, &cx, &cy, o, e)
                        : op == 3 ? tsw_paired_device(&p, dt, dim, &cx, &cp, o, e)
                                  : tsw_pdist_device(&p, dt, dim, &cx, (tsw_pdist_layout)(op - 1),
                                                     o, e);
            }
            CHECK_RC(rc[1], rc[0]);
            if (rc[0] != TSW_OK || rc[1] != TSW_OK || n == 0)
                continue;
            void *h1 = read_back(o1, n * es, s), *h2 = read_back(o2, n * es, s);
            if (!CHECK(memcmp(h1, h2, n * es) == 0)) {
                ++mismatches;
                TSW_T_NOTE("  device arrays, %s %s %s, %" PRId64 " x %" PRId64 " dim %" PRId64
                           ": several devices differ from one\n",
                           OPS[op == 3 ? 3 : op], MNAME[m], dt == TSW_F32 ? "f32" : "f64", nx, ny,
                           dim);
            }
            free(h1);
            free(h2);
        }
        /* soft-DTW values and gradients of device arrays */
        {
            tsw_params q;
            tsw_params_default(&q, TSW_SOFT_DTW);
            q.gamma = tsw_t_uniform(r, 0.05, 5);
            q.normalize = (int)tsw_t_int(r, 0, 1);
            tsw_collection ax = tc_view_at(&x, dt, dx.v, NULL), ap = tc_view_at(&yp, dt, dp.v, NULL);
            const size_t gxn = (size_t)x.rows * (size_t)dim * es, gyn = (size_t)yp.rows * (size_t)dim * es;
            void *g[2][2], *v[2];
            for (int l = 0; l < 2; ++l) {
                v[l] = dev_alloc((size_t)nx * es);
                g[l][0] = dev_alloc(gxn);
                g[l][1] = dev_alloc(gyn);
                CUDA_OK(cudaMemset(g[l][0], SENTINEL, gxn));
                CUDA_OK(cudaMemset(g[l][1], SENTINEL, gyn));
            }
            CUDA_OK(cudaDeviceSynchronize());
            tsw_exec e1 = exec_on(TSW_DEVICE_CUDA);
            e1.cuda_stream = s;
            tsw_exec e2 = e1;
            e2.n_devices = TSW_ALL_DEVICES;
            int rc1 = tsw_soft_dtw_grad_device(&q, dt, dim, &ax, &ap, v[0], g[0][0], g[0][1], &e1);
            int rc2 = tsw_soft_dtw_grad_device(&q, dt, dim, &ax, &ap, v[1], g[1][0], g[1][1], &e2);
            CHECK_RC(rc2, rc1);
            if (rc1 == TSW_OK && rc2 == TSW_OK) {
                const size_t bytes[3] = {(size_t)nx * es, gxn, gyn};
                void *d1[3] = {v[0], g[0][0], g[0][1]}, *d2[3] = {v[1], g[1][0], g[1][1]};
                for (int k = 0; k < 3; ++k) {
                    void *h1 = read_back(d1[k], bytes[k], s), *h2 = read_back(d2[k], bytes[k], s);
                    if (!CHECK(memcmp(h1, h2, bytes[k]) == 0)) {
                        ++mismatches;
                        TSW_T_NOTE("  device arrays, soft-DTW %s of %" PRId64 " pairs (%s): "
                                   "several devices differ from one\n",
                                   k == 0 ? "values" : k == 1 ? "grad x" : "grad y", nx,
                                   dt == TSW_F32 ? "f32" : "f64");
                    }
                    free(h1);
                    free(h2);
                }
            }
            for (int l = 0; l < 2; ++l) {
                dev_free(v[l]);
                dev_free(g[l][0]);
                dev_free(g[l][1]);
            }
        }
        dev_free(o1);
        dev_free(o2);
        dc_free(&dx);
        dc_free(&dy);
        dc_free(&dp);
        for (int k = 0; k < 3; ++k)
            if (pin[k])
                CUDA_OK(cudaFreeHost(pin[k]));
        CUDA_OK(cudaStreamDestroy(s));
        tc_free(&x);
        tc_free(&y);
        tc_free(&yp);
    }

    /* the shapelet search and its top list: the one-device result */
    for (int it = 0; it < (g_quick ? 2 : 6); ++it) {
        int64_t nx = tsw_t_int(r, 8, g_quick ? 24 : 120), hi = tsw_t_int(r, 20, g_quick ? 60 : 200);
        tcoll x = tc_random(r, nx, 1, hi / 2 + 1, hi, (int)tsw_t_int(r, 0, 2), KIND_WALK, 0, 0);
        tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        tsw_collection cx = tc_view(&x, dt);
        int32_t *lab = malloc((size_t)nx * sizeof(int32_t));
        const int C = (int)tsw_t_int(r, 2, 3);
        for (int64_t i = 0; i < nx; ++i)
            lab[i] = (int32_t)(i % C);
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.min_length = tsw_t_int(r, 3, 8);
        sp.max_length = sp.min_length + tsw_t_int(r, 0, 12);
        sp.length_step = tsw_t_int(r, 1, 3);
        tsw_shapelet a, b;
        tsw_exec e1 = exec_on(TSW_DEVICE_CUDA), e2 = exec_on(TSW_DEVICE_CUDA);
        e2.n_devices = TSW_ALL_DEVICES;
        int rc1 = tsw_shapelet_search(&sp, dt, &cx, lab, NULL, 0, &a, &e1);
        int rc2 = tsw_shapelet_search(&sp, dt, &cx, lab, NULL, 0, &b, &e2);
        CHECK_RC(rc2, rc1);
        if (rc1 == TSW_OK && rc2 == TSW_OK && !CHECK(memcmp(&a, &b, sizeof(a)) == 0)) {
            ++mismatches;
            TSW_T_NOTE("  shapelet search of %" PRId64 " series: several devices found (%" PRId64
                       ", %" PRId64 ", %" PRId64 ") where one found (%" PRId64 ", %" PRId64
                       ", %" PRId64 ")\n",
                       nx, b.series, b.start, b.length, a.series, a.start, a.length);
        }
        tsw_shapelet t1[10], t2[10];
        int64_t c1 = -1, c2 = -2, k = tsw_t_int(r, 1, 10);
        rc1 = tsw_shapelet_top(&sp, dt, &cx, lab, NULL, 0, k, t1, &c1, &e1);
        rc2 = tsw_shapelet_top(&sp, dt, &cx, lab, NULL, 0, k, t2, &c2, &e2);
        CHECK_RC(rc2, rc1);
        if (rc1 == TSW_OK && rc2 == TSW_OK &&
            !CHECK(c1 == c2 && memcmp(t1, t2, (size_t)c1 * sizeof(tsw_shapelet)) == 0)) {
            ++mismatches;
            TSW_T_NOTE("  shapelet top %" PRId64 " of %" PRId64 " series: several devices "
                       "differ from one\n", k, nx);
        }
        free(lab);
        tc_free(&x);
    }

    /* one device out of memory: the call returns that device's TSW_ENOMEM, naming it (or,
     * where the one-device code cuts its work to fit, the right values); every device works
     * afterwards and tswarp's pools give their memory back */
    if (count >= 2) {
        const int64_t nbig = 16, lbig = 1 << 16, dbig = 64; /* 256 MB of float32 */
        float *big = malloc(sizeof(float) * (size_t)(nbig * lbig * dbig));
        for (int64_t q = 0; q < nbig * lbig * dbig; ++q)
            big[q] = (float)tsw_t_uniform(r, -1, 1);
        float small[8 * 4 * 64];
        for (int q = 0; q < 8 * 4 * 64; ++q)
            small[q] = (float)tsw_t_uniform(r, -1, 1);
        tsw_collection bx = {big, NULL, NULL, lbig, nbig, NULL};
        tsw_collection sy = {small, NULL, NULL, 4, 8, NULL};
        tsw_params p;
        tsw_params_default(&p, TSW_DTW);
        float *o1 = malloc(sizeof(float) * (size_t)(nbig * 8));
        float *o2 = malloc(sizeof(float) * (size_t)(nbig * 8));
        size_t free_before[2];
        free_snapshot(2, free_before);
        CUDA_OK(cudaSetDevice(1));
        size_t hb = 0;
        void *h = hog((size_t)96 << 20, &hb);
        CUDA_OK(cudaSetDevice(g_dev));
        if (CHECK(h != NULL)) {
            tsw_exec em = exec_on(TSW_DEVICE_CUDA);
            em.n_devices = TSW_ALL_DEVICES;
            int rc = tsw_cdist(&p, TSW_F32, dbig, &bx, &sy, o2, &em);
            const char *d = tsw_last_error_detail();
            CHECK(rc == TSW_OK || rc == TSW_ENOMEM);
            if (rc == TSW_ENOMEM && !CHECK(d && strstr(d, "device 1") != NULL))
                TSW_T_NOTE("  ENOMEM on device 1 without its name: \"%s\"\n", d ? d : "");
            printf("[gpu]   multi: device 1 full (%.1f GiB taken): %s%s%s\n",
                   (double)hb / (1 << 30), tsw_err_name(rc), rc ? ", " : "", rc ? d : "");
            CUDA_OK(cudaSetDevice(1));
            CUDA_OK(cudaFree(h));
            CUDA_OK(cudaSetDevice(g_dev));
            if (rc == TSW_OK) {
                tsw_exec e1 = exec_on(TSW_DEVICE_CUDA);
                CHECK_RC(tsw_cdist(&p, TSW_F32, dbig, &bx, &sy, o1, &e1), TSW_OK);
                CHECK(memcmp(o1, o2, sizeof(float) * (size_t)(nbig * 8)) == 0);
            }
        }
        /* afterwards: both devices compute, equal to one device */
        tsw_exec e1 = exec_on(TSW_DEVICE_CUDA), em = exec_on(TSW_DEVICE_CUDA);
        em.n_devices = TSW_ALL_DEVICES;
        CHECK_RC(tsw_cdist(&p, TSW_F32, dbig, &bx, &sy, o1, &e1), TSW_OK);
        CHECK_RC(tsw_cdist(&p, TSW_F32, dbig, &bx, &sy, o2, &em), TSW_OK);
        CHECK(memcmp(o1, o2, sizeof(float) * (size_t)(nbig * 8)) == 0);
        check_freed(2, free_before, "the hog");
        free(o1);
        free(o2);
        free(big);
    }

    /* a device lost mid-call (the test hook TSWARP_FAULT_DEVICE_LOST=1: device 1 computes a
     * tile, then fails as a device that fell off the bus does): the call returns TSW_ECUDA
     * naming device 1, within the time the others take to stop; every device gives its
     * memory back and computes afterwards, equal to one device */
    if (count >= 2) {
        const int64_t nl = g_quick ? 512 : 4096, ll = g_quick ? 64 : 256;
        tcoll lx = tc_random(r, nl, 1, ll, ll, LAYOUT_PACKED, KIND_WALK, 0, 0);
        tsw_collection lc = tc_view(&lx, TSW_F32);
        tsw_params p;
        tsw_params_default(&p, TSW_DTW);
        float *o1 = malloc(sizeof(float) * (size_t)(nl * nl));
        float *o2 = malloc(sizeof(float) * (size_t)(nl * nl));
        size_t free_before[TSW__TEST_MAX_DEV];
        const int nd = count < TSW__TEST_MAX_DEV ? count : TSW__TEST_MAX_DEV;
        free_snapshot(nd, free_before);
        for (int op = 0; op < 2; ++op) { /* cdist (row tiles), pdist (triangle tiles) */
            tsw_exec em = exec_on(TSW_DEVICE_CUDA);
            em.n_devices = TSW_ALL_DEVICES;
            setenv("TSWARP_FAULT_DEVICE_LOST", "1", 1);
            double t0 = tsw_t_seconds();
            int rc = op ? tsw_pdist(&p, TSW_F32, 1, &lc, TSW_PDIST_FULL, o2, &em)
                        : tsw_cdist(&p, TSW_F32, 1, &lc, &lc, o2, &em);
            double t1 = tsw_t_seconds();
            unsetenv("TSWARP_FAULT_DEVICE_LOST");
            const char *d = tsw_last_error_detail();
            CHECK_RC(rc, TSW_ECUDA);
            if (!CHECK(d && strstr(d, "device 1") && strstr(d, "lost")))
                TSW_T_NOTE("  lost device: detail \"%s\"\n", d ? d : "");
            printf("[gpu]   multi: device 1 lost during a %s of %" PRId64 " x len %" PRId64
                   ": %s after %.3f s (%s)\n", op ? "pdist" : "cdist", nl, ll,
                   tsw_err_name(rc), t1 - t0, d ? d : "");
        }
        /* afterwards: every device computes, equal to one device */
        tsw_exec e1 = exec_on(TSW_DEVICE_CUDA), em = exec_on(TSW_DEVICE_CUDA);
        em.n_devices = TSW_ALL_DEVICES;
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &lc, &lc, o1, &e1), TSW_OK);
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &lc, &lc, o2, &em), TSW_OK);
        CHECK(memcmp(o1, o2, sizeof(float) * (size_t)(nl * nl)) == 0);
        check_freed(nd, free_before, "the loss");
        free(o1);
        free(o2);
        tc_free(&lx);
    }

    /* progress from the calling thread, summed over the devices, and Ctrl-C (2048 series
     * a device: 4 H200s finished 2048 in 31 ms, before the first poll) */
    const int64_t n = g_quick ? 96 : 2048 * (count < 4 ? count : 4), len = g_quick ? 64 : 256;
    tcoll x = tc_random(r, n, 1, len, len, LAYOUT_PACKED, KIND_WALK, 0, 0);
    tsw_collection c = tc_view(&x, TSW_F32);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    float *out = malloc(sizeof(float) * (size_t)(n * n));
    for (int cancel = 0; cancel < 2; ++cancel) {
        recorder rec;
        memset(&rec, 0, sizeof(rec));
        rec.caller = pthread_self();
        rec.last_done = rec.total = -1;
        rec.cancel_at_call = cancel;
        tsw_exec e = exec_on(TSW_DEVICE_CUDA);
        e.n_devices = TSW_ALL_DEVICES;
        e.progress = record_cb;
        e.progress_user = &rec;
        double t0 = tsw_t_seconds();
        int rc = tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e);
        double t1 = tsw_t_seconds();
        CHECK(!rec.wrong_thread);
        CHECK(!rec.decreasing);
        CHECK(!rec.over_total);
        if (cancel && g_quick && rc == TSW_OK) {
            /* the quick size ends before the first poll: the only call was the final report
             * (done == total), whose request comes too late to stop anything */
            CHECK_EQ(rec.calls, 1);
            CHECK_EQ(rec.last_done, rec.total);
        } else if (cancel) {
            CHECK_RC(rc, TSW_ECANCELED);
            CHECK(rec.cancelled);
            CHECK(t1 - rec.cancel_time < (g_quick ? 20.0 : 1.0));
        } else {
            CHECK_RC(rc, TSW_OK);
            CHECK_EQ(rec.total, n * n);
            CHECK_EQ(rec.last_done, n * n);
        }
        printf("[gpu]   multi %s: cdist %" PRId64 " x len %" PRId64 " on %d device(s): %.3f s, "
               "%" PRId64 " callbacks%s\n",
               cancel ? "cancel" : "progress", n, len, count, t1 - t0, rec.calls,
               cancel ? "" : "");
    }
    /* the devices work after the cancellation */
    tcoll s = tc_random(r, 10, 1, 30, 60, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    CHECK_CDIST(&p, TSW_F32, &s, &s);
    tc_free(&s);

    /* refused lists */
    {
        tsw_exec e = exec_on(TSW_DEVICE_CUDA);
        int bad[2] = {0, count}; /* an ordinal past the last device */
        e.n_devices = 2;
        e.devices = bad;
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e), TSW_ENODEV);
        CHECK(strstr(tsw_last_error_detail(), "devices[1]") != NULL);
        int twice[2] = {0, 0};
        e.devices = twice;
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e), TSW_EINVAL);
        e.devices = NULL;
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e), TSW_EINVAL);
        e.n_devices = -2;
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e), TSW_EINVAL);
        e.n_devices = TSW_ALL_DEVICES;
        int dummy = 0;
        e.cuda_workspace = &dummy;
        e.cuda_workspace_bytes = 4;
        CHECK_RC(tsw_cdist(&p, TSW_F32, 1, &c, &c, out, &e), TSW_EINVAL);
    }
    printf("[gpu]   multi: %d device(s) visible, %ld mismatches against one device\n", count,
           mismatches);
    free(out);
    tc_free(&x);
}

/* ---- main -------------------------------------------------------------------------------- */

/* ---- section: tswarp's memory pool ----------------------------------------------------------- */

/* The pool's threshold as TSWARP_CUDA_CACHE_BYTES sets it for this process: 0 when it says
 * 0, -1 (the default, a quarter of the memory) otherwise. */
static int cache_disabled(void)
{
    const char *s = getenv("TSWARP_CUDA_CACHE_BYTES");
    return s && strcmp(s, "0") == 0;
}

/* Child mode (main: --cache-child): one call, then the pool's unused bytes, with the
 * environment the parent set; prints "cached N" and exits 0, or 1 on failure. */
static int cache_child(void)
{
    tsw_t_rng r = {11};
    tcoll x = tc_random(&r, 64, 2, 500, 1000, LAYOUT_PACKED, KIND_WALK, 0, 0);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_collection cx = tc_view(&x, TSW_F64);
    double *out = malloc(sizeof(double) * 64 * 64);
    tsw_exec e = exec_on(TSW_DEVICE_CUDA);
    size_t cached = 0;
    int rc = tsw_cdist(&p, TSW_F64, 2, &cx, &cx, out, &e);
    if (rc == TSW_OK)
        rc = tsw_cuda_cached_bytes(g_dev, &cached);
    printf("cached %zu (%s)\n", cached, tsw_err_name(rc));
    free(out);
    tc_free(&x);
    return rc == TSW_OK ? 0 : 1;
}

/* Runs this program (self) with --cache-child and TSWARP_CUDA_CACHE_BYTES=value; the
 * bytes it reports cached, or -1. A fresh process: the pool reads the variable once. */
static long long cached_in_child(const char *self, const char *value)
{
    char cmd[4096];
    snprintf(cmd, sizeof(cmd),
             "TSWARP_CUDA_CACHE_BYTES='%s' TSWARP_GPU_DEVICE=%d '%s' --cache-child", value,
             g_dev, self);
    fflush(stdout);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char line[256];
    long long cached = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "cached %lld", &cached) == 1)
            break;
    if (pclose(f) != 0)
        return -1;
    return cached;
}

static const char *g_self; /* argv[0], for the child processes */

static void test_cache(tsw_t_rng *r)
{
    int count = 0;
    CHECK_RC(tsw_cuda_device_count(&count), TSW_OK);
    size_t c = 7;
    CHECK_RC(tsw_cuda_cached_bytes(g_dev, NULL), TSW_EINVAL);
    CHECK_RC(tsw_cuda_cached_bytes(count, &c), TSW_ENODEV);
    CHECK_EQ(c, 0);
    CHECK(strlen(tsw_last_error_detail()) > 0);
    CHECK_RC(tsw_cuda_cached_bytes(-1, &c), TSW_ENODEV);
    CHECK_RC(tsw_cuda_empty_cache(count), TSW_ENODEV);
    CHECK_RC(tsw_cuda_empty_cache(-2), TSW_ENODEV);

    /* 64 x 64 float64 cdist of series up to 4,000 points of dim 8: a few MB of block */
    tcoll x = tc_random(r, 64, 8, 1000, 4000, LAYOUT_RAGGED, KIND_WALK, 0, 0);
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_collection cx = tc_view(&x, TSW_F64);
    const size_t out_bytes = sizeof(double) * 64 * 64;
    double *first = malloc(out_bytes), *again = malloc(out_bytes);
    tsw_exec e = exec_on(TSW_DEVICE_CUDA);

    CHECK_RC(tsw_cuda_empty_cache(g_dev), TSW_OK);
    CHECK_EQ(cached_bytes(), 0);
    CHECK_RC(tsw_cdist(&p, TSW_F64, 8, &cx, &cx, first, &e), TSW_OK);
    size_t kept = cached_bytes();
    if (cache_disabled())
        CHECK_EQ(kept, 0);
    else
        CHECK(kept > 0); /* the call's block stays mapped */
    /* a second call of the same size reuses it: the pool does not grow */
    CHECK_RC(tsw_cdist(&p, TSW_F64, 8, &cx, &cx, again, &e), TSW_OK);
    CHECK_EQ(cached_bytes(), kept);
    CHECK(memcmp(first, again, out_bytes) == 0);

    /* emptying gives it back to the driver */
    size_t free_kept = dev_free_bytes();
    CHECK_RC(tsw_cuda_empty_cache(g_dev), TSW_OK);
    CHECK_EQ(cached_bytes(), 0);
    size_t free_emptied = dev_free_bytes();
    CHECK(free_emptied + ((size_t)64 << 20) >= free_kept + kept);
    printf("[gpu]   pool kept %zu bytes after a cdist; empty_cache: %zu -> %zu bytes free\n",
           kept, free_kept, free_emptied);

    /* the same results from a fresh block; -1 empties every device */
    memset(again, SENTINEL, out_bytes);
    CHECK_RC(tsw_cdist(&p, TSW_F64, 8, &cx, &cx, again, &e), TSW_OK);
    CHECK(memcmp(first, again, out_bytes) == 0);
    CHECK_RC(tsw_cuda_empty_cache(-1), TSW_OK);
    CHECK_EQ(cached_bytes(), 0);
    for (int d = 0; d < count; ++d) {
        size_t cd = 7;
        CHECK_RC(tsw_cuda_cached_bytes(d, &cd), TSW_OK);
        CHECK_EQ(cd, 0);
    }

    /* TSWARP_CUDA_CACHE_BYTES, read once per process: in child processes */
    if (g_self) {
        long long none = cached_in_child(g_self, "0");
        long long bad = cached_in_child(g_self, "12x"); /* not a number: the default */
        CHECK_EQ(none, 0);
        CHECK(bad > 0);
        printf("[gpu]   child processes: TSWARP_CUDA_CACHE_BYTES=0 keeps %lld bytes, "
               "=12x (default) %lld\n",
               none, bad);
    }
    free(first);
    free(again);
    tc_free(&x);
}

int main(int argc, char **argv)
{
    if (!tsw_has_cuda()) {
        printf("SKIP: tswarp was built without the CUDA backend\n");
        return SKIP_CODE;
    }
    int count = 0;
    int rc = tsw_cuda_device_count(&count);
    if (rc != TSW_OK || count < 1) {
        printf("SKIP: no CUDA device (%s, %d devices)\n", tsw_err_name(rc), count);
        return SKIP_CODE;
    }
    const char *dev = getenv("TSWARP_GPU_DEVICE");
    g_dev = dev && *dev ? atoi(dev) : 0;
    tsw_cuda_device info;
    if (g_dev < 0 || g_dev >= count || tsw_cuda_device_info(g_dev, &info) != TSW_OK) {
        printf("SKIP: device %d not available (%d devices)\n", g_dev, count);
        return SKIP_CODE;
    }
    if (!info.runnable) {
        printf("SKIP: this build has no code for %s (sm_%d%d; built: %s)\n", info.name, info.major,
               info.minor, tsw_cuda_archs());
        return SKIP_CODE;
    }
    if (cudaSetDevice(g_dev) != cudaSuccess) {
        printf("cudaSetDevice(%d) failed\n", g_dev);
        return 1;
    }
    if (argc == 2 && strcmp(argv[1], "--cache-child") == 0)
        return cache_child();
    g_self = argc > 0 ? argv[0] : NULL;
    g_quick = tsw_t_quick();
    const char *env_seed = getenv("TSWARP_TEST_SEED");
    uint64_t seed = env_seed && *env_seed ? strtoull(env_seed, NULL, 0)
                                          : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    printf("[gpu] seed %" PRIu64 " (replay: TSWARP_TEST_SEED=%" PRIu64 "), quick %d, device %d "
           "%s, %d CPU threads\n",
           seed, seed, g_quick, g_dev, info.name, tsw_max_threads());
    fflush(stdout);

    struct {
        const char *name;
        void (*fn)(tsw_t_rng *);
    } sections[] = {
        {"info", NULL},
        {"pairs", test_pairs},
        {"long", test_long},
        {"batch", test_batch},
        {"device", test_device},
        {"faults", test_faults},
        {"oom", test_oom},
        {"leak", test_leak},
        {"threads", test_threads},
        {"progress", test_progress},
        {"cache", test_cache},
        {"multi", test_multi},
    };
    for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); ++k) {
        if (!tsw_t_want(sections[k].name))
            continue;
        /* each section its own stream of random numbers: skipping one changes no other */
        tsw_t_rng r = {seed ^ (0x9e3779b97f4a7c15ULL * (k + 1))};
        long failed0 = tsw_t_failed, passed0 = tsw_t_passed;
        double t0 = tsw_t_seconds();
        if (sections[k].fn)
            sections[k].fn(&r);
        else
            test_info();
        printf("[gpu] section %-8s %7ld checks, %5ld failed, %6.2f s\n", sections[k].name,
               tsw_t_passed - passed0 + tsw_t_failed - failed0, tsw_t_failed - failed0,
               tsw_t_seconds() - t0);
        fflush(stdout);
    }
    for (int m = 0; m < 3; ++m)
        for (int d = 0; d < 2; ++d)
            if (g_ncmp[m][d])
                printf("[gpu] largest |GPU - CPU| / scale: %-8s %s %.3g (tol %g; %ld values, "
                       "%ld +inf)\n",
                       MNAME[m], d ? "f64" : "f32", g_maxerr[m][d],
                       tol_for((tsw_measure)m, (tsw_dtype)d), g_ncmp[m][d], g_ninf[m][d]);
    printf("[gpu] seed %" PRIu64 "\n", seed);
    return TSW_TEST_END();
}
