/*
 * GPU alignment paths (src/cuda/path.cu) against the CPU ones (ctest label "gpu";
 * tests/gpu/run.sh runs it on a GPU machine). The CPU path is tested against a brute force
 * in tests/c/test_align.c; here the GPU must give the SAME path: identical (i, j) arrays,
 * identical length and the cost's bits equal.
 *
 * Fresh random inputs on every run (the seed is printed; TSWARP_TEST_SEED=<seed> replays):
 *   - random shapes n, m in [1, 3000], unequal, both step patterns (p05 within its
 *     reachable range), every local cost, every window, float32 and float64, dims 1, 3, 12
 *     and sometimes 2, 4, 5, 7, 9, 16, 20, 64 (each register bucket of the kernel and the
 *     generic one); random walks, integer-valued inputs (many exact ties: the tie rule), and for
 *     the cosine cost zero points and negative rounded costs;
 *   - on the GPU: STORED, LINEAR forced with small blocks (memory_limit 64 KiB: many
 *     checkpoint blocks, p05 blocks cut on the left) and AUTO; all equal to the CPU's;
 *   - TSW_ENOPATH when a window admits no path (the CPU's status), bad input statuses,
 *     and cancellation through the progress callback (outputs untouched);
 *   - narrow windows on long pairs (the banded staircase of regions: Sakoe-Chiba radii
 *     0-600 and fractions up to 0.08, Itakura slopes up to 1.3, sloped bands n != m), and
 *     one pair of 10^6 points (2 x 10^5 quick) in a radius of 10, timed;
 *   - subsequence DTW (k = 1..5 matches, all three step patterns, every cost) and segmental
 *     DTW (NONE/WEAK/STRICT, N = 1..32): matches, costs' bits and paths equal the CPU's.
 * Exit status 77 without the CUDA backend or a device. TSWARP_TEST_QUICK=1: fewer, smaller
 * cases (compute-sanitizer runs). TSWARP_GPU_DEVICE=k: the device ordinal.
 * TSWARP_GPU_TEST_ONLY=a,b / TSWARP_GPU_TEST_SKIP=a,b: sections random large band subseq
 * segment status.
 */
#include "harness.h"

#include <unistd.h>

#define SKIP_CODE 77

static int g_dev;
static int g_quick;

static tsw_exec exec_on(tsw_device dev)
{
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = dev;
    e.device_index = g_dev;
    return e;
}

/* kind 0: random walk, 1: uniform noise, 2: small integers (ties), 3: noise with zero
 * points (cosine's zero rules) */
static void gen(tsw_t_rng *r, double *v, int64_t len, int64_t dim, int kind)
{
    double *acc = calloc((size_t)dim, sizeof(double));
    for (int64_t t = 0; t < len; ++t) {
        int zero = kind == 3 && tsw_t_uniform(r, 0, 1) < 0.1;
        for (int64_t k = 0; k < dim; ++k) {
            double x;
            if (kind == 0)
                x = (acc[k] += tsw_t_uniform(r, -1, 1));
            else if (kind == 2)
                x = (double)tsw_t_int(r, -2, 2);
            else
                x = tsw_t_uniform(r, -1, 1);
            v[t * dim + k] = zero ? 0.0 : x;
        }
    }
    free(acc);
}

static void *as_dtype(const double *v, int64_t count, tsw_dtype dt)
{
    if (dt == TSW_F64) {
        double *o = malloc(sizeof(double) * (size_t)(count ? count : 1));
        memcpy(o, v, sizeof(double) * (size_t)count);
        return o;
    }
    float *o = malloc(sizeof(float) * (size_t)(count ? count : 1));
    for (int64_t k = 0; k < count; ++k)
        o[k] = (float)v[k];
    return o;
}

static const char *STEP[2] = {"symmetric1", "p05"};
static const char *COST[4] = {"sqeuclidean", "euclidean", "abs", "cosine"};

typedef struct {
    int64_t *path;
    int64_t len;
    double cost;
    int rc;
} result;

static result run_path(const tsw_align_params *ap, tsw_dtype dt, int64_t dim, const void *a,
                       int64_t n, const void *b, int64_t m, tsw_device dev)
{
    result res = {NULL, -1, 0, 0};
    int64_t cap = tsw_path_max_length(n, m);
    res.path = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    memset(res.path, 0x5A, sizeof(int64_t) * 2 * (size_t)cap);
    tsw_series sa = {a, n, NULL}, sb = {b, m, NULL};
    tsw_exec e = exec_on(dev);
    res.rc = tsw_dtw_path(ap, dt, dim, &sa, &sb, res.path, cap, &res.len, &res.cost, &e);
    return res;
}

/* The GPU result equals the CPU's: status, length, every pair, the cost's bits. */
static int same(const result *cpu, const result *gpu)
{
    if (cpu->rc != gpu->rc)
        return 0;
    if (cpu->rc != TSW_OK)
        return 1;
    if (cpu->len != gpu->len || memcmp(&cpu->cost, &gpu->cost, sizeof(double)) != 0)
        return 0;
    return memcmp(cpu->path, gpu->path, sizeof(int64_t) * 2 * (size_t)cpu->len) == 0;
}

static void describe(const tsw_align_params *ap, tsw_dtype dt, int64_t dim, int64_t n,
                     int64_t m, int kind, const char *method, const result *cpu,
                     const result *gpu)
{
    int64_t first = -1;
    if (cpu->rc == TSW_OK && gpu->rc == TSW_OK) {
        int64_t l = cpu->len < gpu->len ? cpu->len : gpu->len;
        for (int64_t q = 0; q < l && first < 0; ++q)
            if (cpu->path[2 * q] != gpu->path[2 * q] ||
                cpu->path[2 * q + 1] != gpu->path[2 * q + 1])
                first = q;
    }
    fprintf(stderr,
            "  GPU %s != CPU: %s %s %s window %d (r %g, s %g) dim %lld n %lld m %lld data %d: "
            "rc %s/%s len %lld/%lld cost %.17g/%.17g first differing pair %lld\n",
            method, dt == TSW_F32 ? "f32" : "f64", STEP[ap->step], COST[ap->cost],
            (int)ap->window, ap->window_radius, ap->itakura_max_slope, (long long)dim,
            (long long)n, (long long)m, kind, tsw_err_name(cpu->rc), tsw_err_name(gpu->rc),
            (long long)cpu->len, (long long)gpu->len, cpu->cost, gpu->cost, (long long)first);
}

static void random_window(tsw_t_rng *r, tsw_align_params *ap, int64_t n, int64_t m)
{
    double u = tsw_t_uniform(r, 0, 1);
    if (u < 0.55) {
        ap->window = TSW_WINDOW_NONE;
    } else if (u < 0.75) {
        ap->window = TSW_WINDOW_SAKOE_CHIBA;
        int64_t mx = (n > m ? n : m) / 4 + 2;
        ap->window_radius = (double)tsw_t_int(r, 0, mx);
    } else if (u < 0.85) {
        ap->window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
        ap->window_radius = tsw_t_uniform(r, 0, 1);
    } else {
        ap->window = TSW_WINDOW_ITAKURA;
        ap->itakura_max_slope = tsw_t_uniform(r, 1, 4);
    }
}

/* One random case: a and b drawn (kind), the CPU's path, then the GPU's by STORED, LINEAR
 * forced with small blocks (64 KiB) and AUTO, each equal to the CPU's. Returns the CPU's
 * status (TSW_OK or TSW_ENOPATH). */
static int compare_methods(tsw_t_rng *r, const tsw_align_params *ap, tsw_dtype dt, int64_t dim,
                           int64_t n, int64_t m)
{
    const int kind = (int)tsw_t_int(r, 0, 3);
    double *va = malloc(sizeof(double) * (size_t)(n * dim));
    double *vb = malloc(sizeof(double) * (size_t)(m * dim));
    gen(r, va, n, dim, kind);
    gen(r, vb, m, dim, kind);
    void *a = as_dtype(va, n * dim, dt), *b = as_dtype(vb, m * dim, dt);
    result cpu = run_path(ap, dt, dim, a, n, b, m, TSW_DEVICE_CPU);
    CHECK(cpu.rc == TSW_OK || cpu.rc == TSW_ENOPATH);
    static const tsw_path_method methods[3] = {TSW_PATH_STORED, TSW_PATH_LINEAR,
                                               TSW_PATH_AUTO};
    static const char *mname[3] = {"STORED", "LINEAR", "AUTO"};
    for (int k = 0; k < 3; ++k) {
        tsw_align_params g = *ap;
        g.method = methods[k];
        g.memory_limit = methods[k] == TSW_PATH_LINEAR ? 64 * 1024 : 0;
        result gpu = run_path(&g, dt, dim, a, n, b, m, TSW_DEVICE_CUDA);
        if (!CHECK(same(&cpu, &gpu)))
            describe(&g, dt, dim, n, m, kind, mname[k], &cpu, &gpu);
        free(gpu.path);
    }
    const int rc = cpu.rc;
    free(cpu.path);
    free(va);
    free(vb);
    free(a);
    free(b);
    return rc;
}

/* ---- GPU against CPU on random shapes ------------------------------------------------------- */

static void test_random(tsw_t_rng *r)
{
    const int cases = g_quick ? 40 : 400;
    const int64_t maxlen = g_quick ? 400 : 3000;
    static const int64_t odd_dims[8] = {2, 5, 16, 20, 64, 4, 9, 7}; /* every dim bucket */
    long compared = 0, nopath = 0;
    for (int c = 0; c < cases; ++c) {
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.step = (tsw_step)tsw_t_int(r, 0, 1);
        ap.cost = (tsw_cost)tsw_t_int(r, 0, 3);
        const tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        int64_t dim;
        double u = tsw_t_uniform(r, 0, 1);
        if (u < 0.3)
            dim = 1;
        else if (u < 0.55)
            dim = 3;
        else if (u < 0.8)
            dim = 12;
        else
            dim = odd_dims[tsw_t_int(r, 0, 7)];
        /* lengths: small ones often (partial tiles, single rows and columns) */
        int64_t n = tsw_t_uniform(r, 0, 1) < 0.2 ? tsw_t_int(r, 1, 40) : tsw_t_int(r, 1, maxlen);
        int64_t m;
        if (ap.step == TSW_STEP_P05) {
            int64_t lo = (n + 1) / 2, hi = 2 * n - 1;
            if (lo < 1)
                lo = 1;
            m = tsw_t_int(r, lo, hi > maxlen ? (maxlen > lo ? maxlen : lo) : hi);
        } else {
            m = tsw_t_uniform(r, 0, 1) < 0.2 ? tsw_t_int(r, 1, 40) : tsw_t_int(r, 1, maxlen);
        }
        random_window(r, &ap, n, m);
        nopath += compare_methods(r, &ap, dt, dim, n, m) == TSW_ENOPATH;
        compared++;
    }
    printf("[gpu-path] random: %ld cases x 3 methods, %ld without a path\n", compared, nopath);
}

/* Larger grids: many tile diagonals and LINEAR blocks, sym1 and p05, one of each dtype. */
static void test_large(tsw_t_rng *r)
{
    const int64_t n = g_quick ? 1500 : 6000, m = g_quick ? 1300 : 5000, dim = 12;
    double *va = malloc(sizeof(double) * (size_t)(n * dim));
    double *vb = malloc(sizeof(double) * (size_t)(m * dim));
    gen(r, va, n, dim, 0);
    gen(r, vb, m, dim, 0);
    for (int dt = 0; dt < 2; ++dt)
        for (int st = 0; st < 2; ++st) {
            tsw_align_params ap;
            tsw_align_params_default(&ap);
            ap.step = (tsw_step)st;
            ap.cost = st ? TSW_COST_COSINE : TSW_COST_SQEUCLIDEAN;
            void *a = as_dtype(va, n * dim, (tsw_dtype)dt), *b = as_dtype(vb, m * dim, (tsw_dtype)dt);
            result cpu = run_path(&ap, (tsw_dtype)dt, dim, a, n, b, m, TSW_DEVICE_CPU);
            CHECK_RC(cpu.rc, TSW_OK);
            for (int k = 0; k < 2; ++k) {
                tsw_align_params g = ap;
                g.method = k ? TSW_PATH_LINEAR : TSW_PATH_STORED;
                g.memory_limit = k ? 256 * 1024 : 0;
                double t0 = tsw_t_seconds();
                result gpu = run_path(&g, (tsw_dtype)dt, dim, a, n, b, m, TSW_DEVICE_CUDA);
                double t1 = tsw_t_seconds();
                if (!CHECK(same(&cpu, &gpu)))
                    describe(&g, (tsw_dtype)dt, dim, n, m, 0, k ? "LINEAR" : "STORED", &cpu,
                             &gpu);
                printf("[gpu-path] large %s %s %s %lld x %lld: %.3f s\n", dt ? "f64" : "f32",
                       STEP[st], k ? "LINEAR" : "STORED", (long long)n, (long long)m, t1 - t0);
                free(gpu.path);
            }
            free(cpu.path);
            free(a);
            free(b);
        }
    free(va);
    free(vb);
}

/* Narrow windows on long pairs: the banded staircase (cuda/path.cuh, BandLayout), blocks of
 * one or several tile rows, STORED, LINEAR (one block's codes) and AUTO, against the CPU:
 * equal lengths, unequal ones (the band's slope), Itakura near slope 1, every cost, both
 * step patterns, both dtypes, dims in every bucket. */
static void test_band(tsw_t_rng *r)
{
    const int cases = g_quick ? 24 : 160;
    const int64_t maxlen = g_quick ? 4000 : 30000;
    static const int64_t dims[6] = {1, 1, 3, 12, 20, 2};
    long compared = 0, nopath = 0;
    for (int c = 0; c < cases; ++c) {
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.step = (tsw_step)tsw_t_int(r, 0, 1);
        ap.cost = (tsw_cost)tsw_t_int(r, 0, 3);
        const tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        const int64_t dim = dims[tsw_t_int(r, 0, 5)];
        const int64_t n = tsw_t_int(r, 300, maxlen);
        int64_t m = n;
        const double u = tsw_t_uniform(r, 0, 1);
        if (u < 0.4)
            m = n + tsw_t_int(r, -n / 3, n / 3); /* a sloped band */
        if (ap.step == TSW_STEP_P05 && (m > 2 * n - 1 || n > 2 * m - 1))
            m = n;
        const double w = tsw_t_uniform(r, 0, 1);
        if (w < 0.5) {
            ap.window = TSW_WINDOW_SAKOE_CHIBA;
            ap.window_radius = (double)(tsw_t_uniform(r, 0, 1) < 0.3 ? tsw_t_int(r, 0, 4)
                                                                    : tsw_t_int(r, 5, 600));
        } else if (w < 0.8) {
            ap.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
            ap.window_radius = tsw_t_uniform(r, 0, 0.08);
        } else {
            ap.window = TSW_WINDOW_ITAKURA;
            ap.itakura_max_slope = tsw_t_uniform(r, 1.0, 1.3);
        }
        nopath += compare_methods(r, &ap, dt, dim, n, m) == TSW_ENOPATH;
        compared++;
    }
    /* one long pair: 10^6 points in a radius of 10 (a grid pass would take 10^12 cells) */
    {
        const int64_t n = g_quick ? 200000 : 1000000;
        double *va = malloc(sizeof(double) * (size_t)n), *vb = malloc(sizeof(double) * (size_t)n);
        gen(r, va, n, 1, 0);
        gen(r, vb, n, 1, 0);
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.window = TSW_WINDOW_SAKOE_CHIBA;
        ap.window_radius = 10;
        result cpu = run_path(&ap, TSW_F64, 1, va, n, vb, n, TSW_DEVICE_CPU);
        CHECK_RC(cpu.rc, TSW_OK);
        for (int k = 0; k < 2; ++k) {
            tsw_align_params g = ap;
            g.method = k ? TSW_PATH_LINEAR : TSW_PATH_AUTO;
            g.memory_limit = k ? 1 << 20 : 0;
            double t0 = tsw_t_seconds();
            result gpu = run_path(&g, TSW_F64, 1, va, n, vb, n, TSW_DEVICE_CUDA);
            double t1 = tsw_t_seconds();
            if (!CHECK(same(&cpu, &gpu)))
                describe(&g, TSW_F64, 1, n, n, 0, k ? "LINEAR" : "AUTO", &cpu, &gpu);
            printf("[gpu-path] band %lld x %lld radius 10 %s: %.3f s\n", (long long)n,
                   (long long)n, k ? "LINEAR" : "AUTO", t1 - t0);
            free(gpu.path);
        }
        free(cpu.path);
        free(va);
        free(vb);
    }
    printf("[gpu-path] band: %ld cases x 3 methods, %ld without a path\n", compared, nopath);
}

/* ---- subsequence DTW and segmental DTW ------------------------------------------------------- */

static const char *STEP3[3] = {"symmetric1", "p05", "p05_query"};

typedef struct {
    tsw_match mt[32];
    int64_t count, len;
    int64_t *path;
    int rc;
} sresult;

/* Subsequence DTW of the query a (n) in b (m), best k, with paths. */
static sresult run_subseq(const tsw_align_params *ap, tsw_dtype dt, int64_t dim, const void *a,
                          int64_t n, const void *b, int64_t m, int64_t k, tsw_device dev)
{
    sresult res;
    memset(&res, 0x5A, sizeof(res.mt));
    res.count = -1;
    res.len = tsw_subsequence_path_max_length(n, m, k);
    res.path = malloc(sizeof(int64_t) * 2 * (size_t)res.len);
    memset(res.path, 0x5A, sizeof(int64_t) * 2 * (size_t)res.len);
    tsw_series sa = {a, n, NULL}, sb = {b, m, NULL};
    tsw_exec e = exec_on(dev);
    res.rc = tsw_subsequence_dtw(ap, dt, dim, &sa, &sb, k, res.mt, &res.count, res.path, res.len,
                                 &e);
    return res;
}

/* Equal matches (start, end, cost bits, path offsets and lengths) and equal paths. */
static int same_subseq(const sresult *c, const sresult *g)
{
    if (c->rc != g->rc)
        return 0;
    if (c->rc != TSW_OK)
        return 1;
    if (c->count != g->count)
        return 0;
    int64_t used = 0;
    for (int64_t q = 0; q < c->count; ++q) {
        const tsw_match *x = &c->mt[q], *y = &g->mt[q];
        if (x->start != y->start || x->end != y->end ||
            memcmp(&x->cost, &y->cost, sizeof(double)) != 0 ||
            x->path_offset != y->path_offset || x->path_length != y->path_length)
            return 0;
        used += x->path_length;
    }
    return memcmp(c->path, g->path, sizeof(int64_t) * 2 * (size_t)used) == 0;
}

/* Random shapes: the query is often a noisy piece of the reference (real matches) and
 * sometimes unrelated; k = 1..5; every step pattern, cost, dtype; method AUTO (the GPU
 * stores the codes whatever the method). */
static void test_subseq(tsw_t_rng *r)
{
    const int cases = g_quick ? 30 : 300;
    const int64_t maxlen = g_quick ? 300 : 2500;
    static const int64_t dims[5] = {1, 3, 12, 2, 20};
    long matches = 0;
    for (int c = 0; c < cases; ++c) {
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.step = (tsw_step)tsw_t_int(r, 0, 2);
        ap.cost = (tsw_cost)tsw_t_int(r, 0, 3);
        const tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        const int64_t dim = dims[tsw_t_int(r, 0, 4)];
        const int64_t k = tsw_t_int(r, 1, 5);
        int64_t m = tsw_t_uniform(r, 0, 1) < 0.2 ? tsw_t_int(r, 1, 40) : tsw_t_int(r, 1, maxlen);
        int64_t n = tsw_t_int(r, 1, m < 600 ? m : 600);
        if (ap.step != TSW_STEP_SYMMETRIC1 && n > 2 * m - 1)
            n = 2 * m - 1;
        const int kind = (int)tsw_t_int(r, 0, 3);
        double *va = malloc(sizeof(double) * (size_t)(n * dim));
        double *vb = malloc(sizeof(double) * (size_t)(m * dim));
        gen(r, vb, m, dim, kind);
        if (tsw_t_uniform(r, 0, 1) < 0.6 && n <= m) {
            int64_t off = tsw_t_int(r, 0, m - n);
            for (int64_t q = 0; q < n * dim; ++q)
                va[q] = vb[off * dim + q] + (kind == 2 ? 0.0 : tsw_t_uniform(r, -0.1, 0.1));
        } else {
            gen(r, va, n, dim, kind);
        }
        void *a = as_dtype(va, n * dim, dt), *b = as_dtype(vb, m * dim, dt);
        sresult cpu = run_subseq(&ap, dt, dim, a, n, b, m, k, TSW_DEVICE_CPU);
        sresult gpu = run_subseq(&ap, dt, dim, a, n, b, m, k, TSW_DEVICE_CUDA);
        CHECK_RC(cpu.rc, TSW_OK);
        if (!CHECK(same_subseq(&cpu, &gpu)))
            fprintf(stderr,
                    "  GPU subsequence != CPU: %s %s %s dim %lld n %lld m %lld k %lld data %d: "
                    "rc %s/%s count %lld/%lld, first match %lld-%lld %.17g / %lld-%lld %.17g\n",
                    dt == TSW_F32 ? "f32" : "f64", STEP3[ap.step], COST[ap.cost], (long long)dim,
                    (long long)n, (long long)m, (long long)k, kind, tsw_err_name(cpu.rc),
                    tsw_err_name(gpu.rc), (long long)cpu.count, (long long)gpu.count,
                    (long long)cpu.mt[0].start, (long long)cpu.mt[0].end, cpu.mt[0].cost,
                    (long long)gpu.mt[0].start, (long long)gpu.mt[0].end, gpu.mt[0].cost);
        matches += cpu.count > 0 ? cpu.count : 0;
        free(cpu.path);
        free(gpu.path);
        free(va);
        free(vb);
        free(a);
        free(b);
    }
    printf("[gpu-path] subsequence: %d cases, %ld matches compared\n", cases, matches);
}

/* Segmental DTW: every variant, step pattern and cost, N = 1..32, f32/f64; the GPU's path,
 * length and per-fragment matches equal the CPU's (statuses too: SSDTW may find no ordered
 * placement on both). Methods: AUTO, and LINEAR with a small limit for the fragment paths. */
static void test_segmental(tsw_t_rng *r)
{
    const int cases = g_quick ? 24 : 160;
    const int64_t maxlen = g_quick ? 300 : 2000;
    long ok = 0, nopath = 0;
    for (int c = 0; c < cases; ++c) {
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.step = (tsw_step)tsw_t_int(r, 0, 2);
        ap.cost = (tsw_cost)tsw_t_int(r, 0, 3);
        if (tsw_t_uniform(r, 0, 1) < 0.3) {
            ap.method = TSW_PATH_LINEAR;
            ap.memory_limit = 64 * 1024;
        }
        tsw_segmental_params sp;
        tsw_segmental_params_default(&sp);
        sp.variant = (tsw_segmental)tsw_t_int(r, 0, 2);
        const tsw_dtype dt = (tsw_dtype)tsw_t_int(r, 0, 1);
        const int64_t dim = tsw_t_uniform(r, 0, 1) < 0.5 ? 1 : 12;
        const int64_t n = tsw_t_int(r, 64, maxlen);
        const int64_t m = tsw_t_int(r, n / 2 + 2, n + n / 2);
        sp.n_fragments = tsw_t_int(r, 1, 32);
        const int kind = (int)tsw_t_int(r, 0, 3);
        double *va = malloc(sizeof(double) * (size_t)(n * dim));
        double *vb = malloc(sizeof(double) * (size_t)(m * dim));
        gen(r, va, n, dim, kind);
        /* b: a stretched noisy copy of a (an alignment exists) */
        for (int64_t j = 0; j < m; ++j) {
            int64_t i = j * n / m;
            for (int64_t q = 0; q < dim; ++q)
                vb[j * dim + q] = va[i * dim + q] + (kind == 2 ? 0.0 : tsw_t_uniform(r, -0.2, 0.2));
        }
        void *a = as_dtype(va, n * dim, dt), *b = as_dtype(vb, m * dim, dt);
        tsw_series sa = {a, n, NULL}, sb = {b, m, NULL};
        const int64_t cap = tsw_segmental_path_max_length(ap.step, n, m, sp.n_fragments);
        int64_t *pc = malloc(sizeof(int64_t) * 2 * (size_t)(cap > 0 ? cap : 1));
        int64_t *pg = malloc(sizeof(int64_t) * 2 * (size_t)(cap > 0 ? cap : 1));
        tsw_match sc[32], sg[32];
        memset(sc, 0, sizeof(sc));
        memset(sg, 0, sizeof(sg));
        int64_t lc = -1, lg = -2;
        tsw_exec ec = exec_on(TSW_DEVICE_CPU), eg = exec_on(TSW_DEVICE_CUDA);
        int rc_c = tsw_segmental_dtw(&ap, &sp, dt, dim, &sa, &sb, pc, cap, &lc, sc, &ec);
        int rc_g = tsw_segmental_dtw(&ap, &sp, dt, dim, &sa, &sb, pg, cap, &lg, sg, &eg);
        CHECK(rc_c == TSW_OK || rc_c == TSW_ENOPATH || rc_c == TSW_EPARAM);
        int same = rc_c == rc_g;
        if (same && rc_c == TSW_OK) {
            same = lc == lg && memcmp(pc, pg, sizeof(int64_t) * 2 * (size_t)lc) == 0;
            for (int64_t f = 0; same && f < sp.n_fragments; ++f)
                same = sc[f].start == sg[f].start && sc[f].end == sg[f].end &&
                       memcmp(&sc[f].cost, &sg[f].cost, sizeof(double)) == 0 &&
                       sc[f].path_offset == sg[f].path_offset &&
                       sc[f].path_length == sg[f].path_length;
        }
        if (!CHECK(same))
            fprintf(stderr,
                    "  GPU segmental != CPU: %s %s %s variant %d N %lld dim %lld n %lld m %lld "
                    "data %d method %d: rc %s/%s len %lld/%lld\n",
                    dt == TSW_F32 ? "f32" : "f64", STEP3[ap.step], COST[ap.cost], (int)sp.variant,
                    (long long)sp.n_fragments, (long long)dim, (long long)n, (long long)m, kind,
                    (int)ap.method, tsw_err_name(rc_c), tsw_err_name(rc_g), (long long)lc,
                    (long long)lg);
        ok += rc_c == TSW_OK;
        nopath += rc_c == TSW_ENOPATH;
        free(pc);
        free(pg);
        free(va);
        free(vb);
        free(a);
        free(b);
    }
    printf("[gpu-path] segmental: %d cases, %ld with a path, %ld without\n", cases, ok, nopath);
}

/* ---- statuses ------------------------------------------------------------------------------ */

typedef struct {
    int calls, stop_at;
} cancel_state;

static int cancel_cb(void *user, int64_t done, int64_t total)
{
    cancel_state *s = user;
    (void)done;
    (void)total;
    return ++s->calls >= s->stop_at;
}

static void test_status(tsw_t_rng *r)
{
    const int64_t n = 2000, m = 1800, dim = 3;
    double *va = malloc(sizeof(double) * (size_t)(n * dim));
    double *vb = malloc(sizeof(double) * (size_t)(m * dim));
    gen(r, va, n, dim, 1);
    gen(r, vb, m, dim, 1);
    tsw_series sa = {va, n, NULL}, sb = {vb, m, NULL};
    tsw_align_params ap;
    tsw_align_params_default(&ap);
    int64_t cap = tsw_path_max_length(n, m), len = -7;
    int64_t *path = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    double cost = -7;
    tsw_exec e = exec_on(TSW_DEVICE_CUDA);

    /* a window that admits no path: Itakura with n and m too different */
    {
        tsw_align_params w = ap;
        w.window = TSW_WINDOW_ITAKURA;
        w.itakura_max_slope = 1.05;
        tsw_series sc = {vb, 600, NULL};
        tsw_exec ec = exec_on(TSW_DEVICE_CPU);
        int rc_cpu = tsw_dtw_path(&w, TSW_F64, dim, &sa, &sc, path, cap, &len, &cost, &ec);
        int rc_gpu = tsw_dtw_path(&w, TSW_F64, dim, &sa, &sc, path, cap, &len, &cost, &e);
        CHECK_RC(rc_cpu, TSW_ENOPATH);
        CHECK_RC(rc_gpu, TSW_ENOPATH);
        /* a band that misses a cell through the middle with p05: no path on either side */
        w = ap;
        w.step = TSW_STEP_P05;
        w.window = TSW_WINDOW_SAKOE_CHIBA;
        w.window_radius = 0;
        tsw_series sd = {vb, 1500, NULL};
        rc_cpu = tsw_dtw_path(&w, TSW_F64, dim, &sa, &sd, path, cap, &len, &cost, &ec);
        rc_gpu = tsw_dtw_path(&w, TSW_F64, dim, &sa, &sd, path, cap, &len, &cost, &e);
        CHECK_EQ(rc_gpu, rc_cpu);
    }
    /* bad input: statuses before any work, outputs untouched */
    len = -7;
    cost = -7;
    CHECK_RC(tsw_dtw_path(&ap, TSW_F64, dim, &sa, &sb, path, cap - 1, &len, &cost, &e),
             TSW_EINVAL);
    va[5] = NAN;
    CHECK_RC(tsw_dtw_path(&ap, TSW_F64, dim, &sa, &sb, path, cap, &len, &cost, &e),
             TSW_ENONFINITE);
    va[5] = 0.5;
    {
        tsw_align_params p = ap;
        p.step = TSW_STEP_P05;
        tsw_series sc = {vb, 5, NULL};
        CHECK_RC(tsw_dtw_path(&p, TSW_F64, dim, &sa, &sc, path, cap, &len, &cost, &e),
                 TSW_ENOPATH);
    }
    CHECK_RC(tsw_dtw_path(&ap, TSW_F64, 0, &sa, &sb, path, cap, &len, &cost, &e), TSW_ESHAPE);
    {
        tsw_exec bad = e;
        bad.device_index = 1000;
        CHECK_RC(tsw_dtw_path(&ap, TSW_F64, dim, &sa, &sb, path, cap, &len, &cost, &bad),
                 TSW_ENODEV);
    }
    CHECK_EQ(len, -7);
    CHECK(cost == -7);

    /* cancel: at the first report and later; nothing written */
    for (int stop = 1; stop <= 2; ++stop) {
        for (int method = 1; method <= 2; ++method) {
            cancel_state cs = {0, stop};
            tsw_exec ce = e;
            ce.progress = cancel_cb;
            ce.progress_user = &cs;
            tsw_align_params p = ap;
            p.method = (tsw_path_method)method;
            p.memory_limit = method == TSW_PATH_LINEAR ? 64 * 1024 : 0;
            memset(path, 0x5A, sizeof(int64_t) * 2 * (size_t)cap);
            len = -7;
            cost = -7;
            int rc = tsw_dtw_path(&p, TSW_F64, dim, &sa, &sb, path, cap, &len, &cost, &ce);
            /* the run may finish before a second report on a fast GPU */
            if (stop == 1 || rc != TSW_OK) {
                CHECK_RC(rc, TSW_ECANCELED);
                CHECK_EQ(len, -7);
                CHECK(cost == -7);
                CHECK(path[0] == 0x5A5A5A5A5A5A5A5ALL);
            }
            CHECK(cs.calls >= 1);
        }
    }
    /* the GPU stays usable after the cancels */
    {
        result cpu = run_path(&ap, TSW_F64, dim, va, n, vb, m, TSW_DEVICE_CPU);
        result gpu = run_path(&ap, TSW_F64, dim, va, n, vb, m, TSW_DEVICE_CUDA);
        CHECK(same(&cpu, &gpu));
        free(cpu.path);
        free(gpu.path);
    }
    /* subsequence and segmental DTW: a cancel at the first report writes nothing; a bad
     * device index is TSW_ENODEV */
    {
        tsw_match mt[2];
        tsw_match sg[4];
        mt[0].start = sg[0].start = -7;
        int64_t count = -7, slen = -7;
        cancel_state cs = {0, 1};
        tsw_exec ce = e;
        ce.progress = cancel_cb;
        ce.progress_user = &cs;
        tsw_series sq = {va, 300, NULL};
        CHECK_RC(tsw_subsequence_dtw(&ap, TSW_F64, dim, &sq, &sb, 2, mt, &count, path, cap, &ce),
                 TSW_ECANCELED);
        CHECK_EQ(count, -7);
        CHECK_EQ(mt[0].start, -7);
        tsw_segmental_params sp;
        tsw_segmental_params_default(&sp);
        sp.n_fragments = 4;
        tsw_align_params aq = ap; /* p05_query: the path needs n pairs, within cap */
        aq.step = TSW_STEP_P05_QUERY;
        cs.calls = 0;
        CHECK_RC(tsw_segmental_dtw(&aq, &sp, TSW_F64, dim, &sa, &sb, path, cap, &slen, sg, &ce),
                 TSW_ECANCELED);
        CHECK_EQ(slen, -7);
        CHECK_EQ(sg[0].start, -7);
        tsw_exec bad = e;
        bad.device_index = 1000;
        CHECK_RC(tsw_subsequence_dtw(&ap, TSW_F64, dim, &sq, &sb, 2, mt, &count, NULL, 0, &bad),
                 TSW_ENODEV);
        CHECK_RC(tsw_segmental_dtw(&aq, &sp, TSW_F64, dim, &sa, &sb, path, cap, &slen, sg, &bad),
                 TSW_ENODEV);
    }
    free(path);
    free(va);
    free(vb);
}

int main(void)
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
    if (g_dev < 0 || g_dev >= count || tsw_cuda_device_info(g_dev, &info) != TSW_OK ||
        !info.runnable) {
        printf("SKIP: device %d not available or not runnable by this build (%s)\n", g_dev,
               tsw_cuda_archs());
        return SKIP_CODE;
    }
    g_quick = tsw_t_quick();
    const char *env_seed = getenv("TSWARP_TEST_SEED");
    uint64_t seed = env_seed && *env_seed ? strtoull(env_seed, NULL, 0)
                                          : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    printf("[gpu-path] seed %" PRIu64 " (replay: TSWARP_TEST_SEED=%" PRIu64 "), quick %d, "
           "device %d %s\n",
           seed, seed, g_quick, g_dev, info.name);
    fflush(stdout);
    struct {
        const char *name;
        void (*fn)(tsw_t_rng *);
    } sections[] = {{"random", test_random},
                    {"large", test_large},
                    {"band", test_band},
                    {"subseq", test_subseq},
                    {"segment", test_segmental},
                    {"status", test_status}};
    for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); ++k) {
        if (!tsw_t_want(sections[k].name))
            continue;
        tsw_t_rng r = {seed ^ (0x9e3779b97f4a7c15ULL * (k + 1))};
        long failed0 = tsw_t_failed, passed0 = tsw_t_passed;
        double t0 = tsw_t_seconds();
        sections[k].fn(&r);
        printf("[gpu-path] section %-7s %6ld checks, %5ld failed, %6.2f s\n", sections[k].name,
               tsw_t_passed - passed0 + tsw_t_failed - failed0, tsw_t_failed - failed0,
               tsw_t_seconds() - t0);
        fflush(stdout);
    }
    printf("[gpu-path] seed %" PRIu64 "\n", seed);
    return TSW_TEST_END();
}
