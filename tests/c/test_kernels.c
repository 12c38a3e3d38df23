/*
 * The fast CPU kernels against the reference (cpu/reference.c), at every SIMD level the
 * machine has, in one process:
 *   - single pair (tsw__pair_fast_level: anti-diagonal kernel) on random shapes: lengths
 *     1..300 (a few up to 1100, so that the strips of 256 doubles / 512 floats repeat),
 *     unequal, dims 1..8, every cost, every window (radius, fraction, Itakura), TWED with
 *     random p in {1, 2, 3}, nu, lmbda and increasing timestamps, soft-DTW with gamma in
 *     [1e-4, 10] and values up to 1e6;
 *   - SIMD across pairs (tsw__pair_lanes_level) on runs of 1..19 pairs of equal lengths,
 *     with shared or distinct first series (partial lane groups included); the elastic
 *     family's lanes bit for bit against its single-pair kernel;
 *   - the public entry points (tsw_distance, tsw_cdist, tsw_pdist) with impl AUTO and
 *     SCALAR against impl REFERENCE, on ragged collections (runs of equal lengths split);
 *   - workspace sizes: canary bytes past tsw__pair_ws_bytes / tsw__lanes_ws_bytes stay
 *     untouched (the kernels' padded vector stores stay inside);
 *   - the vector exp / log (cpu/vecmath.h) against the C library, in ulp, and their
 *     special values.
 * Tolerances: float64 1e-12 relative (soft-DTW 1e-10), float32 1e-5 (soft-DTW 1e-4),
 * relative to max(1, |reference|) (plus gamma (n + m) for soft-DTW, whose rounding error is
 * absolute: gamma log(.) per cell along a path).
 * The levels are looped over here (0 scalar, 1 SSE2, 2 AVX2, up to tsw__cpu_level()), so
 * one ctest run covers them all; TSWARP_SIMD=scalar|sse2 caps them as everywhere else.
 * TSWARP_TEST_QUICK=1 shrinks the iteration counts.
 */
#include "harness.h"

#include "common/elastic.h"
#include "cpu/kernels.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define CANARY 256
static const unsigned char canary_byte = 0xA5;

static int g_quick;
static double g_worst[2]; /* largest |got - ref| / (tol * scale) seen, f32 and f64 */

/* ---- helpers ---------------------------------------------------------------------------- */

typedef struct {
    tsw_params p;
    int64_t n, m, dim;
    int times; /* TWED: random timestamps */
    double scale;
} config;

static config random_config(tsw_t_rng *r, int64_t max_len)
{
    config c;
    int meas = (int)tsw_t_int(r, 0, 2);
    tsw_params_default(&c.p, (tsw_measure)meas);
    /* mostly short, sometimes up to max_len; unequal lengths most of the time */
    int64_t hi = tsw_t_int(r, 0, 3) == 0 ? max_len : (max_len < 40 ? max_len : 40);
    c.n = tsw_t_int(r, 1, hi);
    c.m = tsw_t_int(r, 0, 3) == 0 ? c.n : tsw_t_int(r, 1, hi);
    c.dim = tsw_t_int(r, 0, 2) == 0 ? tsw_t_int(r, 2, 8) : 1;
    c.p.cost = (tsw_cost)tsw_t_int(r, 0, 3);
    c.p.accumulated = (int)tsw_t_int(r, 0, 1);
    c.p.window = (tsw_window)tsw_t_int(r, 0, 3);
    if (c.p.window == TSW_WINDOW_SAKOE_CHIBA)
        c.p.window_radius = (double)tsw_t_int(r, 0, 12);
    else if (c.p.window == TSW_WINDOW_SAKOE_CHIBA_FRACTION)
        c.p.window_radius = tsw_t_uniform(r, 0, 1);
    c.p.itakura_max_slope = tsw_t_uniform(r, 1, 5);
    c.times = 0;
    if (meas == TSW_TWED) {
        static const double ps[] = {1.0, 2.0, 2.0, 3.0};
        c.p.p = ps[tsw_t_int(r, 0, 3)];
        c.p.nu = tsw_t_int(r, 0, 2) == 0 ? 0.001 : tsw_t_uniform(r, 0, 2);
        c.p.lmbda = tsw_t_uniform(r, 0, 2);
        c.times = (int)tsw_t_int(r, 0, 1);
    }
    if (meas == TSW_SOFT_DTW)
        c.p.gamma = pow(10.0, tsw_t_uniform(r, -4, 1));
    c.scale = tsw_t_int(r, 0, 5) == 0 ? pow(10.0, tsw_t_uniform(r, -2, 3)) : 1.0;
    return c;
}

/* Random walk values (typical series) or uniform noise, in dtype. */
static void fill_values(tsw_t_rng *r, tsw_dtype dt, void *v, int64_t count, double scale)
{
    int walk = (int)tsw_t_int(r, 0, 1);
    double s = 0;
    for (int64_t i = 0; i < count; ++i) {
        double x = tsw_t_uniform(r, -1, 1);
        if (walk) {
            s += x;
            x = s;
        }
        /* now and then an exact zero (cosine's zero-norm rule) */
        if (tsw_t_int(r, 0, 40) == 0)
            x = 0;
        x *= scale;
        if (dt == TSW_F32)
            ((float *)v)[i] = (float)x;
        else
            ((double *)v)[i] = x;
    }
}

/* Strictly increasing timestamps starting anywhere in (0, 3]. */
static void fill_times(tsw_t_rng *r, tsw_dtype dt, void *v, int64_t count)
{
    double t = 0;
    for (int64_t i = 0; i < count; ++i) {
        t += tsw_t_uniform(r, 0.05, 3);
        if (dt == TSW_F32)
            ((float *)v)[i] = (float)t;
        else
            ((double *)v)[i] = t;
    }
}

static double tol_of(const tsw_params *p, tsw_dtype dt)
{
    if (p->measure == TSW_SOFT_DTW)
        return dt == TSW_F32 ? 1e-4 : 1e-10;
    return dt == TSW_F32 ? 1e-5 : 1e-12;
}

/*
 * got ~ ref at the tolerance of the measure and dtype; equal infinities pass. ref_err is the
 * reference's own rounding error in float32: |ref - the float64 reference on the same
 * (float32) inputs|, 0 for float64. A float32 kernel within tol of the true value is within
 * tol + ref_err of the float32 reference. It matters for TWED, whose float32 reference sums
 * ((D + |.|_p) + nu dt) + lmbda per move and drifts by up to about 1e-5 over a few hundred
 * points, while the fast kernels' grouped sums stay within a few 1e-7 of the float64 value.
 */
static int near_ref(const tsw_params *p, tsw_dtype dt, int64_t n, int64_t m, double got,
                    double ref, double ref_err)
{
    if (isinf(ref) || isinf(got))
        return got == ref;
    double scale = fabs(ref) > 1 ? fabs(ref) : 1.0;
    if (p->measure == TSW_SOFT_DTW)
        scale += p->gamma * (double)(n + m);
    double err = fabs(got - ref) - (isfinite(ref_err) ? ref_err : 0.0);
    double rel = (err > 0 ? err : 0.0) / (tol_of(p, dt) * scale);
    double *w = &g_worst[dt == TSW_F64];
    if (rel > *w)
        *w = rel;
    return rel <= 1.0;
}

/* A float64 copy of count values of dtype (NULL in, NULL out; NULL on allocation failure
 * is reported by the callers' CHECKs). */
static double *promote(tsw_dtype dt, const void *v, int64_t count)
{
    if (!v)
        return NULL;
    double *d = malloc((size_t)(count > 0 ? count : 1) * sizeof(double));
    if (d)
        for (int64_t i = 0; i < count; ++i)
            d[i] = dt == TSW_F32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
    return d;
}

/* |ref - reference in float64 on the promoted inputs| for a float32 pair, else 0. */
static double ref_error(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw__pair *pr,
                        double ref)
{
    if (dt != TSW_F32)
        return 0;
    double *a = promote(dt, pr->a, pr->n * dim), *b = promote(dt, pr->b, pr->m * dim);
    double *ta = promote(dt, pr->ta, pr->n), *tb = promote(dt, pr->tb, pr->m);
    void *ws = tsw__malloc_aligned(tsw__pair_ws_bytes(p, TSW_F64, dim, pr->n, pr->m));
    double r64 = ref, e = 0;
    if (CHECK(a && b && ws && (!pr->ta || ta) && (!pr->tb || tb))) {
        tsw__pair q = {a, ta, pr->n, b, tb, pr->m, NULL};
        tsw__pair_reference(p, TSW_F64, dim, &q, ws, &r64);
        e = isinf(r64) || isinf(ref) ? 0 : fabs(ref - r64);
    }
    free(a);
    free(b);
    free(ta);
    free(tb);
    tsw__free_aligned(ws);
    return e;
}

static void report(const char *what, int level, const config *c, tsw_dtype dt, double got,
                   double ref, const char *file, int line)
{
    fprintf(stderr,
            "%s:%d: %s level %d: measure %d dtype %s n %" PRId64 " m %" PRId64
            " dim %" PRId64 " cost %d window %d radius %g slope %g p %g nu %g lmbda %g "
            "gamma %g times %d scale %g: got %.17g, reference %.17g\n",
            file, line, what, level, (int)c->p.measure, dt == TSW_F32 ? "f32" : "f64", c->n,
            c->m, c->dim, (int)c->p.cost, (int)c->p.window, c->p.window_radius,
            c->p.itakura_max_slope, c->p.p, c->p.nu, c->p.lmbda, c->p.gamma, c->times,
            c->scale, got, ref);
}

/* Workspace with canary bytes after `bytes`. */
static void *ws_alloc(size_t bytes)
{
    unsigned char *w = tsw__malloc_aligned(bytes + CANARY);
    if (w)
        memset(w + bytes, canary_byte, CANARY);
    return w;
}
static int ws_canary_ok(const void *w, size_t bytes)
{
    const unsigned char *c = (const unsigned char *)w + bytes;
    for (int i = 0; i < CANARY; ++i)
        if (c[i] != canary_byte)
            return 0;
    return 1;
}

/* ---- single pair -------------------------------------------------------------------------- */

static void check_pair_config(tsw_t_rng *r, const config *c)
{
    for (int d = 0; d < 2; ++d) {
        tsw_dtype dt = d ? TSW_F64 : TSW_F32;
        size_t esz = tsw__dtype_size(dt);
        void *a = malloc((size_t)(c->n * c->dim) * esz), *b = malloc((size_t)(c->m * c->dim) * esz);
        void *ta = malloc((size_t)c->n * esz), *tb = malloc((size_t)c->m * esz);
        if (!CHECK(a && b && ta && tb))
            goto done;
        fill_values(r, dt, a, c->n * c->dim, c->scale);
        fill_values(r, dt, b, c->m * c->dim, c->scale);
        fill_times(r, dt, ta, c->n);
        fill_times(r, dt, tb, c->m);
        tsw__pair pr = {a, c->times ? ta : NULL, c->n, b, c->times ? tb : NULL, c->m, NULL};
        size_t bytes = tsw__pair_ws_bytes(&c->p, dt, c->dim, c->n, c->m);
        void *ws = ws_alloc(bytes);
        if (!CHECK(bytes > 0 && ws != NULL)) {
            tsw__free_aligned(ws);
            goto done;
        }
        double ref;
        tsw__pair_reference(&c->p, dt, c->dim, &pr, ws, &ref);
        const double rerr = ref_error(&c->p, dt, c->dim, &pr, ref);
        for (int level = 0; level <= tsw__cpu_level(); ++level) {
            double got = NAN;
            tsw__pair_fast_level(&c->p, dt, c->dim, &pr, ws, &got, level);
            if (!CHECK(near_ref(&c->p, dt, c->n, c->m, got, ref, rerr)))
                report("pair", level, c, dt, got, ref, __FILE__, __LINE__);
            CHECK(ws_canary_ok(ws, bytes));
        }
        tsw__free_aligned(ws);
    done:
        free(a);
        free(b);
        free(ta);
        free(tb);
    }
}

static void test_pairs(void)
{
    tsw_t_rng r = {0x6b65726e656c7331ULL};
    int iters = g_quick ? 60 : 1500;
    for (int it = 0; it < iters; ++it) {
        config c = random_config(&r, 300);
        check_pair_config(&r, &c);
    }
    /* Long pairs: several strips of the anti-diagonal kernel (256 doubles, 512 floats). */
    int longs = g_quick ? 2 : 12;
    for (int it = 0; it < longs; ++it) {
        config c = random_config(&r, 1100);
        c.n = tsw_t_int(&r, 520, 1100);
        c.m = tsw_t_int(&r, 300, 1100);
        check_pair_config(&r, &c);
    }
}

/* Soft-DTW at the edges of its numerical range: gamma 1e-4 with values up to 1e6, and a
 * large gamma (the sum of the three exponentials near 3). */
static void test_soft_dtw_range(void)
{
    tsw_t_rng r = {0x736f667464747721ULL};
    const double gammas[] = {1e-4, 1e-2, 1.0, 10.0};
    const double scales[] = {1e-3, 1.0, 1e3, 1e6};
    for (int g = 0; g < 4; ++g)
        for (int s = 0; s < 4; ++s) {
            config c = random_config(&r, 80);
            tsw_params_default(&c.p, TSW_SOFT_DTW);
            c.p.gamma = gammas[g];
            c.scale = scales[s];
            c.n = tsw_t_int(&r, 1, 80);
            c.m = tsw_t_int(&r, 1, 80);
            check_pair_config(&r, &c);
        }
}

/* ---- SIMD across pairs ------------------------------------------------------------------ */

static void test_lanes(void)
{
    tsw_t_rng r = {0x6c616e6573210001ULL};
    int iters = g_quick ? 40 : 600;
    for (int it = 0; it < iters; ++it) {
        config c = random_config(&r, 160);
        if (c.p.measure == TSW_SOFT_DTW && tsw_t_int(&r, 0, 2) == 0) {
            /* the edges of soft-DTW's range: values up to 1e6 with gamma 1e-4, or tiny
             * values with a large gamma */
            int big = (int)tsw_t_int(&r, 0, 1);
            c.scale = big ? 1e6 : 1e-3;
            c.p.gamma = big ? 1e-4 : 10.0;
        }
        int count = (int)tsw_t_int(&r, 1, 19);
        int shared_a = (int)tsw_t_int(&r, 0, 3) != 0;
        for (int d = 0; d < 2; ++d) {
            tsw_dtype dt = d ? TSW_F64 : TSW_F32;
            size_t esz = tsw__dtype_size(dt);
            size_t an = (size_t)(c.n * c.dim), bn = (size_t)(c.m * c.dim);
            unsigned char *a = malloc(an * esz * (size_t)count), *b = malloc(bn * esz * (size_t)count);
            unsigned char *ta = malloc((size_t)c.n * esz * (size_t)count);
            unsigned char *tb = malloc((size_t)c.m * esz * (size_t)count);
            tsw__pair pairs[19];
            double ref[19], got[19], rerr[19];
            if (!CHECK(a && b && ta && tb))
                goto done;
            fill_values(&r, dt, a, (int64_t)an * count, c.scale);
            fill_values(&r, dt, b, (int64_t)bn * count, c.scale);
            for (int k = 0; k < count; ++k) {
                fill_times(&r, dt, ta + (size_t)k * (size_t)c.n * esz, c.n);
                fill_times(&r, dt, tb + (size_t)k * (size_t)c.m * esz, c.m);
                int ka = shared_a ? 0 : k;
                pairs[k] = (tsw__pair){a + (size_t)ka * an * esz,
                                       c.times ? ta + (size_t)ka * (size_t)c.n * esz : NULL, c.n,
                                       b + (size_t)k * bn * esz,
                                       c.times ? tb + (size_t)k * (size_t)c.m * esz : NULL, c.m, NULL};
            }
            size_t pb = tsw__pair_ws_bytes(&c.p, dt, c.dim, c.n, c.m);
            size_t lb = tsw__lanes_ws_bytes(&c.p, dt, c.dim, c.n, c.m);
            size_t bytes = pb > lb ? pb : lb;
            void *ws = ws_alloc(bytes);
            if (!CHECK(lb > 0 && ws != NULL)) {
                tsw__free_aligned(ws);
                goto done;
            }
            for (int k = 0; k < count; ++k) {
                tsw__pair_reference(&c.p, dt, c.dim, &pairs[k], ws, &ref[k]);
                rerr[k] = ref_error(&c.p, dt, c.dim, &pairs[k], ref[k]);
            }
            for (int level = 1; level <= tsw__cpu_level(); ++level) {
                int vl = tsw__lanes_width_level(&c.p, dt, c.dim, level);
                int64_t h = tsw__pair_lanes_level(&c.p, dt, c.dim, pairs, count, ws, got, level);
                if (vl == 0) { /* TWED with p other than 1, 2: no lane kernel */
                    CHECK(c.p.measure == TSW_TWED && c.p.p != 1.0 && c.p.p != 2.0);
                    CHECK_EQ(h, 0);
                    continue;
                }
                /* whole groups, and a last group when at least half full */
                int rem = count % vl;
                int64_t want = rem == 0 || 2 * rem >= vl ? count : count - rem;
                CHECK_EQ(h, want);
                for (int64_t k = 0; k < h && k < count; ++k)
                    if (!CHECK(near_ref(&c.p, dt, c.n, c.m, got[k], ref[k], rerr[k])))
                        report("lanes", level, &c, dt, got[k], ref[k], __FILE__, __LINE__);
                CHECK(ws_canary_ok(ws, bytes));
            }
            tsw__free_aligned(ws);
        done:
            free(a);
            free(b);
            free(ta);
            free(tb);
        }
    }
}

/* ---- the elastic family's lanes ------------------------------------------------------------ */

/* family_lanes.c: every lane gives family.c's single-pair value bit for bit (cdist equals
 * the pair function), at every level, for every measure with a lane kernel: random equal
 * shapes (DDTW and WDDTW from 3 points), dims, windows and parameters, their edges too. */
static void test_family_lanes(void)
{
    tsw_t_rng r = {0x66616d6c616e6573ULL};
    int iters = g_quick ? 60 : 700;
    for (int it = 0; it < iters; ++it) {
        const tsw_measure meas = (tsw_measure)tsw_t_int(&r, TSW_WDTW, TSW_MSM);
        config c = random_config(&r, 120);
        tsw_params_default(&c.p, meas);
        c.p.window = (tsw_window)tsw_t_int(&r, 0, 3);
        c.p.window_radius = c.p.window == TSW_WINDOW_SAKOE_CHIBA ? (double)tsw_t_int(&r, 0, 9)
                                                                 : tsw_t_uniform(&r, 0, 1);
        c.p.itakura_max_slope = tsw_t_uniform(&r, 1, 4);
        c.p.cost = (tsw_cost)tsw_t_int(&r, 0, 2); /* DDTW: sqeuclidean, euclidean, abs */
        const int edge = tsw_t_int(&r, 0, 4) == 0;
        c.p.g = edge ? 0.0 : tsw_t_uniform(&r, 0, 2);
        c.p.warp_penalty = edge ? 0.0 : tsw_t_uniform(&r, 0, 3);
        c.p.erp_g = tsw_t_uniform(&r, -1, 1);
        c.p.epsilon = edge ? 0.0 : tsw_t_uniform(&r, 0.05, 2);
        if (meas == TSW_EDR && tsw_t_int(&r, 0, 2) == 0)
            c.p.epsilon = TSW_EPSILON_AUTO;
        c.p.c = edge ? 0.0 : tsw_t_uniform(&r, 0, 3);
        /* MSM: independent (several channels: one program a channel, summed) or dependent */
        c.p.msm_independent = tsw_t_int(&r, 0, 1);
        if (TSW_IS_DERIVATIVE(meas)) {
            c.n = c.n < 3 ? 3 : c.n;
            c.m = c.m < 3 ? 3 : c.m;
        }
        int count = (int)tsw_t_int(&r, 1, 19);
        int shared_a = (int)tsw_t_int(&r, 0, 3) != 0;
        for (int d = 0; d < 2; ++d) {
            tsw_dtype dt = d ? TSW_F64 : TSW_F32;
            size_t esz = tsw__dtype_size(dt);
            size_t an = (size_t)(c.n * c.dim), bn = (size_t)(c.m * c.dim);
            unsigned char *a = malloc(an * esz * (size_t)count), *b = malloc(bn * esz * (size_t)count);
            tsw__pair pairs[19];
            double ref[19], got[19];
            if (!CHECK(a && b))
                goto done;
            fill_values(&r, dt, a, (int64_t)an * count, c.scale);
            fill_values(&r, dt, b, (int64_t)bn * count, c.scale);
            for (int k = 0; k < count; ++k)
                pairs[k] = (tsw__pair){a + (size_t)(shared_a ? 0 : k) * an * esz, NULL, c.n,
                                       b + (size_t)k * bn * esz, NULL, c.m, NULL};
            size_t pb = tsw__pair_ws_bytes(&c.p, dt, c.dim, c.n, c.m);
            size_t lb = tsw__lanes_ws_bytes(&c.p, dt, c.dim, c.n, c.m);
            size_t bytes = pb > lb ? pb : lb;
            void *ws = ws_alloc(bytes);
            if (!CHECK(lb > 0 && ws != NULL)) {
                tsw__free_aligned(ws);
                goto done;
            }
            for (int k = 0; k < count; ++k)
                tsw__pair_fast_level(&c.p, dt, c.dim, &pairs[k], ws, &ref[k], 0);
            for (int level = 1; level <= tsw__cpu_level(); ++level) {
                int vl = tsw__lanes_width_level(&c.p, dt, c.dim, level);
                if (!CHECK(vl > 0))
                    continue;
                int64_t h = tsw__pair_lanes_level(&c.p, dt, c.dim, pairs, count, ws, got, level);
                int rem = count % vl;
                CHECK_EQ(h, rem == 0 || 2 * rem >= vl ? count : count - rem);
                for (int64_t k = 0; k < h && k < count; ++k)
                    if (!CHECK(got[k] == ref[k] || (isinf(got[k]) && isinf(ref[k]))))
                        report("family lanes", level, &c, dt, got[k], ref[k], __FILE__,
                               __LINE__);
                CHECK(ws_canary_ok(ws, bytes));
            }
            tsw__free_aligned(ws);
        done:
            free(a);
            free(b);
        }
    }
    /* MSM in lanes in both forms; what has no lane kernel: DDTW under the cosine cost */
    tsw_params p;
    tsw_params_default(&p, TSW_MSM);
    CHECK(tsw__lanes_width_level(&p, TSW_F64, 2, 1) > 0);
    p.msm_independent = 0;
    CHECK(tsw__lanes_width_level(&p, TSW_F64, 3, 1) > 0);
    tsw_params_default(&p, TSW_DDTW);
    p.cost = TSW_COST_COSINE;
    CHECK_EQ(tsw__lanes_width_level(&p, TSW_F64, 1, 1), 0);
}

/* ERP's match cost skips its root where tsw_root_square_exact says SQRT(d * d) == |d|:
 * the identity itself on random differences of the admitted magnitudes (both dtypes), the
 * check's edges, and ERP in lanes against the single-pair kernel (which takes the root) on
 * series that pass and series that fail the check (tiny, huge, squares that overflow). */
/* MSM's split from a neighbour constant (elastic.h: tsw_msm_split_k, and TSW_MSM_SPLIT_K
 * with the sign-bit flip of the CPU lanes and the GPU) is tsw_msm_split bit for bit:
 * random triples on a coarse grid (ties and equal values), spread over the exponent range
 * (subnormal differences included), and signed zeros. */
static void test_msm_split_k(void)
{
    tsw_t_rng r = {0x6d736d73706c6974ULL};
    int bad64 = 0, bad32 = 0;
    for (int it = 0; it < (g_quick ? 200000 : 1000000); ++it) {
        double v[4], w[4];
        for (int k = 0; k < 4; ++k) {
            const int kind = (int)tsw_t_int(&r, 0, 3);
            const double u = tsw_t_uniform(&r, -1, 1);
            v[k] = kind == 0   ? (double)tsw_t_int(&r, -3, 3)
                   : kind == 1 ? ldexp(u, (int)tsw_t_int(&r, -1074, 1000))
                   : kind == 2 ? (tsw_t_int(&r, 0, 1) ? -0.0 : 0.0)
                               : 2 * u;
            /* float: the same kinds within float's finite range */
            w[k] = kind == 1 ? (double)ldexpf((float)u, (int)tsw_t_int(&r, -149, 120)) : v[k];
        }
        const double x = v[0], y = v[1], z = v[2], c = fabs(v[3]);
        const double a = tsw_msm_split_f64(x, y, z, c);
        /* the neighbour-constant form: the function, and the kernels' sign-bit flip */
        const double bk = tsw_msm_split_k_f64(x - y, x - z, c);
        const double ek = signbit(x - y) ? -(x - z) : x - z;
        const double bs = TSW_MSM_SPLIT_K(fabs(x - y), ek, c, TSW_MIN, TSW_MAX, TSW__E_ADD, 0.0);
        bad64 += memcmp(&a, &bk, sizeof(a)) != 0;
        bad64 += memcmp(&a, &bs, sizeof(a)) != 0;
        const float xf = (float)w[0], yf = (float)w[1], zf = (float)w[2], cf = (float)fabs(w[3]);
        const float af = tsw_msm_split_f32(xf, yf, zf, cf);
        const float bkf = tsw_msm_split_k_f32(xf - yf, xf - zf, cf);
        const float ekf = signbit(xf - yf) ? -(xf - zf) : xf - zf;
        const float bsf =
            TSW_MSM_SPLIT_K(fabsf(xf - yf), ekf, cf, TSW_MIN, TSW_MAX, TSW__E_ADD, 0.0f);
        bad32 += memcmp(&af, &bkf, sizeof(af)) != 0;
        bad32 += memcmp(&af, &bsf, sizeof(af)) != 0;
    }
    CHECK_EQ(bad64, 0);
    CHECK_EQ(bad32, 0);
}

static void test_erp_root_square(void)
{
    tsw_t_rng r = {0x6572707371727421ULL};
    int bad64 = 0, bad32 = 0;
    for (int it = 0; it < (g_quick ? 200000 : 2000000); ++it) {
        /* a difference of two admitted values: 0 or a multiple of 2^-452 up to 2^501 */
        double d = ldexp(tsw_t_uniform(&r, 1, 2), (int)tsw_t_int(&r, -452, 500));
        d = tsw_t_int(&r, 0, 1) ? -d : d;
        bad64 += sqrt(d * d) != fabs(d);
        float f = ldexpf((float)tsw_t_uniform(&r, 1, 2), (int)tsw_t_int(&r, -53, 62));
        f = tsw_t_int(&r, 0, 1) ? -f : f;
        bad32 += sqrtf(f * f) != fabsf(f);
    }
    CHECK_EQ(bad64, 0);
    CHECK_EQ(bad32, 0);
    {
        const double ok64[] = {0.0, -0.0, 0x1p-400, -0x1p500, 1.5, -3e-100, 2e150};
        CHECK(tsw_root_square_exact_f64(ok64, 7));
        const double lo64[] = {1.0, 0x1p-401}, hi64[] = {1.0, -0x1.0000000000001p500};
        CHECK(!tsw_root_square_exact_f64(lo64, 2));
        CHECK(!tsw_root_square_exact_f64(hi64, 2));
        const float ok32[] = {0.0f, 0x1p-30f, -0x1p62f, 1.25f};
        CHECK(tsw_root_square_exact_f32(ok32, 4));
        const float lo32[] = {0x1p-31f}, hi32[] = {0x1.000002p62f};
        CHECK(!tsw_root_square_exact_f32(lo32, 1));
        CHECK(!tsw_root_square_exact_f32(hi32, 1));
        /* where the check fails the identity can fail too: an underflowing square */
        const double t = 0x1p-540;
        CHECK(sqrt(t * t) != t);
    }
    static const double scales64[] = {1.0, 1e-170, 1e170, 1e-300};
    static const double scales32[] = {1.0, 1e-12, 1e25, 3e-38};
    for (int it = 0; it < (g_quick ? 40 : 300); ++it) {
        tsw_params p;
        tsw_params_default(&p, TSW_ERP);
        p.window = (tsw_window)tsw_t_int(&r, 0, 1);
        p.window_radius = (double)tsw_t_int(&r, 0, 9);
        p.erp_g = tsw_t_uniform(&r, -1, 1);
        const int64_t n = tsw_t_int(&r, 1, 60), m = tsw_t_int(&r, 1, 60);
        const int count = (int)tsw_t_int(&r, 4, 12), sc = (int)tsw_t_int(&r, 0, 3);
        /* one lane's series may hold a single odd value among ordinary ones */
        const int odd = (int)tsw_t_int(&r, 0, 1);
        for (int d = 0; d < 2; ++d) {
            tsw_dtype dt = d ? TSW_F64 : TSW_F32;
            size_t esz = tsw__dtype_size(dt);
            unsigned char *a = malloc((size_t)(n * count) * esz),
                          *b = malloc((size_t)(m * count) * esz);
            tsw__pair pairs[12];
            double ref[12], got[12];
            void *ws = NULL;
            if (!CHECK(a && b))
                goto done;
            const double scale = d ? scales64[sc] : scales32[sc];
            fill_values(&r, dt, a, n * count, odd ? 1.0 : scale);
            fill_values(&r, dt, b, m * count, odd ? 1.0 : scale);
            if (odd) {
                int64_t at = tsw_t_int(&r, 0, m * count - 1);
                if (dt == TSW_F32)
                    ((float *)b)[at] = (float)(scale * tsw_t_uniform(&r, 0.5, 1));
                else
                    ((double *)b)[at] = scale * tsw_t_uniform(&r, 0.5, 1);
            }
            for (int k = 0; k < count; ++k)
                pairs[k] = (tsw__pair){a + (size_t)(k * n) * esz, NULL, n,
                                       b + (size_t)(k * m) * esz, NULL, m, NULL};
            size_t pb = tsw__pair_ws_bytes(&p, dt, 1, n, m), lb = tsw__lanes_ws_bytes(&p, dt, 1, n, m);
            size_t bytes = pb > lb ? pb : lb;
            ws = ws_alloc(bytes);
            if (!CHECK(lb > 0 && ws != NULL))
                goto done;
            for (int k = 0; k < count; ++k)
                tsw__pair_fast_level(&p, dt, 1, &pairs[k], ws, &ref[k], 0);
            for (int level = 1; level <= tsw__cpu_level(); ++level) {
                int64_t h = tsw__pair_lanes_level(&p, dt, 1, pairs, count, ws, got, level);
                for (int64_t k = 0; k < h; ++k)
                    if (!CHECK(got[k] == ref[k] || (isinf(got[k]) && isinf(ref[k]))))
                        fprintf(stderr, "erp root: level %d %s n %lld m %lld scale %g odd %d: "
                                "got %.17g, single pair %.17g\n", level,
                                d ? "f64" : "f32", (long long)n, (long long)m, scale, odd,
                                got[k], ref[k]);
                CHECK(ws_canary_ok(ws, bytes));
            }
        done:
            tsw__free_aligned(ws);
            free(a);
            free(b);
        }
    }
}

/* tsw_sq_bound: the root's test against epsilon as a test of the square, exactly, at the
 * boundary's ulps and at random squares; epsilons 0, subnormal, tiny, ordinary, huge. */
static void test_sq_bound(void)
{
    tsw_t_rng r = {0x7371626f756e6421ULL};
    static const double fixed[] = {0.0, 5e-324, 1e-170, 1e-160, 1.0, 0.1, 3.0, 1e150, 1e160};
    int iters = g_quick ? 300 : 3000;
    for (int it = 0; it < iters; ++it) {
        const double e64 = it < 9 ? fixed[it] : pow(10.0, tsw_t_uniform(&r, -30, 30));
        const float e32 = it < 9 ? (float)(fixed[it] > 1e30 ? 1e30 : fixed[it])
                                 : (float)pow(10.0, tsw_t_uniform(&r, -15, 15));
        for (int inc = 0; inc < 2; ++inc) {
            const double t = tsw_sq_bound_f64(e64, inc);
            const float tf = tsw_sq_bound_f32(e32, inc);
            double s = t;
            for (int k = 0; k < 3; ++k)
                s = nextafter(s, 0.0);
            float sf = tf;
            for (int k = 0; k < 3; ++k)
                sf = nextafterf(sf, 0.0f);
            for (int k = 0; k < 7; ++k) {
                const int want = inc ? sqrt(s) <= e64 : sqrt(s) < e64;
                if (!CHECK_EQ(s < t, want))
                    fprintf(stderr, "sq_bound f64 eps %.17g inclusive %d s %.17g\n", e64, inc, s);
                const int wantf = inc ? sqrtf(sf) <= e32 : sqrtf(sf) < e32;
                if (!CHECK_EQ(sf < tf, wantf))
                    fprintf(stderr, "sq_bound f32 eps %.9g inclusive %d s %.9g\n", (double)e32,
                            inc, (double)sf);
                s = nextafter(s, INFINITY);
                sf = nextafterf(sf, INFINITY);
            }
            for (int k = 0; k < 8; ++k) {
                const double u = tsw_t_uniform(&r, 0, 4) * e64 * e64;
                CHECK_EQ(u < t, inc ? sqrt(u) <= e64 : sqrt(u) < e64);
            }
        }
    }
}

/* ---- public entry points ------------------------------------------------------------------ */

/* A ragged collection of count series with lengths drawn from a few values, so that the
 * batch driver sees runs of equal lengths of every size. */
typedef struct {
    tsw_collection c;
    void *values, *times;
    int64_t *offsets, *lengths;
} ragged;

static int ragged_make(tsw_t_rng *r, ragged *g, tsw_dtype dt, int64_t dim, int64_t count,
                       int64_t max_len, int with_times, double scale)
{
    size_t esz = tsw__dtype_size(dt);
    int64_t choices[3] = {tsw_t_int(r, 1, max_len), tsw_t_int(r, 1, max_len),
                          tsw_t_int(r, 1, max_len)};
    memset(g, 0, sizeof(*g));
    g->offsets = malloc((size_t)count * sizeof(int64_t));
    g->lengths = malloc((size_t)count * sizeof(int64_t));
    if (!g->offsets || !g->lengths)
        return 0;
    int64_t rows = 0;
    for (int64_t i = 0; i < count; ++i) {
        /* mostly the first length, so runs are long */
        g->lengths[i] = choices[tsw_t_int(r, 0, 5) < 4 ? 0 : tsw_t_int(r, 1, 2)];
        g->offsets[i] = rows;
        rows += g->lengths[i];
    }
    g->values = malloc((size_t)(rows * dim) * esz);
    g->times = malloc((size_t)rows * esz);
    if (!g->values || !g->times)
        return 0;
    fill_values(r, dt, g->values, rows * dim, scale);
    for (int64_t i = 0; i < count; ++i)
        fill_times(r, dt, (char *)g->times + (size_t)g->offsets[i] * esz, g->lengths[i]);
    g->c = (tsw_collection){g->values, g->offsets, g->lengths, 0, count,
                            with_times ? g->times : NULL};
    return 1;
}

static void ragged_free(ragged *g)
{
    free(g->values);
    free(g->times);
    free(g->offsets);
    free(g->lengths);
}

static double out_at(tsw_dtype dt, const void *out, int64_t k)
{
    return dt == TSW_F32 ? (double)((const float *)out)[k] : ((const double *)out)[k];
}

/* The float64 copy of a float32 ragged collection (same offsets and lengths). */
static tsw_collection promote_coll(const ragged *g, tsw_dtype dt, int64_t dim, double **vals,
                                   double **times)
{
    int64_t rows = 0;
    for (int64_t i = 0; i < g->c.count; ++i)
        rows += g->lengths[i];
    *vals = promote(dt, g->values, rows * dim);
    *times = promote(dt, g->times, rows);
    tsw_collection c = g->c;
    c.values = *vals;
    c.times = g->c.times ? *times : NULL;
    return c;
}

static void test_public(void)
{
    tsw_t_rng r = {0x7075626c69632121ULL};
    int iters = g_quick ? 8 : 60;
    for (int it = 0; it < iters; ++it) {
        config c = random_config(&r, 90);
        if (c.p.measure == TSW_SOFT_DTW)
            c.p.normalize = (int)tsw_t_int(&r, 0, 1);
        int64_t nx = tsw_t_int(&r, 1, 24), ny = tsw_t_int(&r, 1, 24);
        for (int d = 0; d < 2; ++d) {
            tsw_dtype dt = d ? TSW_F64 : TSW_F32;
            size_t esz = tsw__dtype_size(dt);
            ragged x, y;
            int ok = ragged_make(&r, &x, dt, c.dim, nx, c.n, c.times, c.scale) &&
                     ragged_make(&r, &y, dt, c.dim, ny, c.m, c.times, c.scale);
            void *ref = malloc((size_t)(nx * ny) * esz), *got = malloc((size_t)(nx * ny) * esz);
            void *pref = malloc((size_t)(nx * nx) * esz), *pgot = malloc((size_t)(nx * nx) * esz);
            /* float64 references on the same inputs: the float32 reference's own error */
            double *r64 = malloc((size_t)(nx * ny) * sizeof(double));
            double *p64 = malloc((size_t)(nx * nx) * sizeof(double));
            double *xv = NULL, *xt = NULL, *yv = NULL, *yt = NULL;
            if (CHECK(ok && ref && got && pref && pgot && r64 && p64)) {
                tsw_collection x64 = promote_coll(&x, dt, c.dim, &xv, &xt);
                tsw_collection y64 = promote_coll(&y, dt, c.dim, &yv, &yt);
                tsw_exec e;
                tsw_exec_default(&e);
                e.n_threads = 2;
                e.impl = TSW_IMPL_REFERENCE;
                CHECK_RC(tsw_cdist(&c.p, dt, c.dim, &x.c, &y.c, ref, &e), TSW_OK);
                CHECK_RC(tsw_pdist(&c.p, dt, c.dim, &x.c, TSW_PDIST_FULL, pref, &e), TSW_OK);
                CHECK_RC(tsw_cdist(&c.p, TSW_F64, c.dim, &x64, &y64, r64, &e), TSW_OK);
                CHECK_RC(tsw_pdist(&c.p, TSW_F64, c.dim, &x64, TSW_PDIST_FULL, p64, &e), TSW_OK);
                const tsw_impl impls[2] = {TSW_IMPL_AUTO, TSW_IMPL_SCALAR};
                for (int k = 0; k < 2; ++k) {
                    e.impl = impls[k];
                    CHECK_RC(tsw_cdist(&c.p, dt, c.dim, &x.c, &y.c, got, &e), TSW_OK);
                    CHECK_RC(tsw_pdist(&c.p, dt, c.dim, &x.c, TSW_PDIST_FULL, pgot, &e), TSW_OK);
                    /* finished distances (root, divergence), same tolerances */
                    for (int64_t q = 0; q < nx * ny; ++q) {
                        double gv = out_at(dt, got, q), rv = out_at(dt, ref, q);
                        double re = isfinite(rv) && isfinite(r64[q]) ? fabs(rv - r64[q]) : 0;
                        if (!CHECK(near_ref(&c.p, dt, c.n, c.m, gv, rv, re)))
                            report("cdist", (int)impls[k], &c, dt, gv, rv, __FILE__, __LINE__);
                    }
                    for (int64_t q = 0; q < nx * nx; ++q) {
                        double gv = out_at(dt, pgot, q), rv = out_at(dt, pref, q);
                        double re = isfinite(rv) && isfinite(p64[q]) ? fabs(rv - p64[q]) : 0;
                        if (!CHECK(near_ref(&c.p, dt, c.n, c.n, gv, rv, re)))
                            report("pdist", (int)impls[k], &c, dt, gv, rv, __FILE__, __LINE__);
                    }
                }
                /* tsw_distance, one pair of the collections, AUTO against REFERENCE (and
                 * the reference against its own cdist entry) */
                int64_t i = tsw_t_int(&r, 0, nx - 1), j = tsw_t_int(&r, 0, ny - 1);
                tsw_series sa = {(const char *)x.values + (size_t)(x.offsets[i] * c.dim) * esz,
                                 x.lengths[i],
                                 c.times ? (const char *)x.times + (size_t)x.offsets[i] * esz : NULL};
                tsw_series sb = {(const char *)y.values + (size_t)(y.offsets[j] * c.dim) * esz,
                                 y.lengths[j],
                                 c.times ? (const char *)y.times + (size_t)y.offsets[j] * esz : NULL};
                double dref = NAN, dgot = NAN, dre = 0, rq = r64[i * ny + j];
                e.impl = TSW_IMPL_REFERENCE;
                CHECK_RC(tsw_distance(&c.p, dt, c.dim, &sa, &sb, &dref, &e), TSW_OK);
                e.impl = TSW_IMPL_AUTO;
                CHECK_RC(tsw_distance(&c.p, dt, c.dim, &sa, &sb, &dgot, &e), TSW_OK);
                if (isfinite(dref) && isfinite(rq))
                    dre = fabs(dref - rq);
                if (!CHECK(near_ref(&c.p, dt, sa.length, sb.length, dgot, dref, dre)))
                    report("distance", 0, &c, dt, dgot, dref, __FILE__, __LINE__);
                CHECK(near_ref(&c.p, dt, c.n, c.m, out_at(dt, ref, i * ny + j), dref, 0));
            }
            free(ref);
            free(got);
            free(pref);
            free(pgot);
            free(r64);
            free(p64);
            free(xv);
            free(xt);
            free(yv);
            free(yt);
            ragged_free(&x);
            ragged_free(&y);
        }
    }
}

/* ---- vector exp / log ----------------------------------------------------------------------- */

static double ulp_err(double got, double want, int f32)
{
    if (got == want)
        return 0;
    double aw = fabs(want);
    double u = f32 ? (double)(nextafterf((float)aw, INFINITY) - (float)aw)
                   : nextafter(aw, INFINITY) - aw;
    return fabs(got - want) / u;
}

static void test_vecmath(void)
{
    tsw_t_rng r = {0x766d617468212121ULL};
    enum { N = 4099 }; /* odd: the padded tail vector is exercised too */
    static double in[N], out[N];
    static float inf_[N], outf[N];
    for (int level = 0; level <= tsw__cpu_level(); ++level) {
        for (int fn = 0; fn < 2; ++fn) {
            /* exp on [-708, 709.7] and [-1, 1]; log on exp of that, near 1, and subnormals */
            for (int i = 0; i < N; ++i) {
                double x;
                if (fn == 0)
                    x = (i & 1) ? tsw_t_uniform(&r, -708, 709.7) : tsw_t_uniform(&r, -1, 1);
                else if (i % 3 == 0)
                    x = exp(tsw_t_uniform(&r, -700, 700));
                else if (i % 3 == 1)
                    x = 1 + tsw_t_uniform(&r, -0.5, 0.5);
                else
                    x = tsw_t_uniform(&r, 1e-320, 2e-308);
                in[i] = x;
            }
            tsw__vmath_apply(level, TSW_F64, fn, in, out, N);
            double worst = 0;
            for (int i = 0; i < N; ++i) {
                double e = ulp_err(out[i], fn ? log(in[i]) : exp(in[i]), 0);
                worst = e > worst ? e : worst;
            }
            CHECK(worst <= 2.0);
            printf("vector %s f64, level %d: worst %.2f ulp\n", fn ? "log" : "exp", level, worst);
            for (int i = 0; i < N; ++i) {
                float x;
                if (fn == 0)
                    x = (i & 1) ? (float)tsw_t_uniform(&r, -86.9, 88.7) : (float)tsw_t_uniform(&r, -1, 1);
                else if (i % 3 == 0)
                    x = (float)exp(tsw_t_uniform(&r, -87, 88));
                else if (i % 3 == 1)
                    x = (float)(1 + tsw_t_uniform(&r, -0.5, 0.5));
                else
                    x = (float)tsw_t_uniform(&r, 1e-44, 1e-38);
                inf_[i] = x;
            }
            tsw__vmath_apply(level, TSW_F32, fn, inf_, outf, N);
            worst = 0;
            for (int i = 0; i < N; ++i) {
                /* the correctly rounded value, through double */
                float want = (float)(fn ? log((double)inf_[i]) : exp((double)inf_[i]));
                double e = ulp_err(outf[i], want, 1);
                worst = e > worst ? e : worst;
            }
            CHECK(worst <= 2.0);
            printf("vector %s f32, level %d: worst %.2f ulp\n", fn ? "log" : "exp", level, worst);
        }
        /* special values */
        double sx[] = {-INFINITY, -800.0, 0.0, 710.0, INFINITY, NAN};
        double sy[6];
        tsw__vmath_apply(level, TSW_F64, 0, sx, sy, 6);
        /* below the flush threshold: 0 (vector code) or a subnormal (the C library) */
        CHECK(sy[0] == 0 && sy[1] <= DBL_MIN && sy[2] == 1 && isinf(sy[3]) && sy[3] > 0 &&
              isinf(sy[4]) && isnan(sy[5]));
        double lx[] = {0.0, INFINITY, -1.0, NAN, 1.0, 5e-324};
        tsw__vmath_apply(level, TSW_F64, 1, lx, sy, 6);
        CHECK(isinf(sy[0]) && sy[0] < 0 && isinf(sy[1]) && sy[1] > 0 && isnan(sy[2]) &&
              isnan(sy[3]) && sy[4] == 0 && fabs(sy[5] - log(5e-324)) < 1e-12);
        float fx[] = {-INFINITY, -100.0f, 0.0f, 89.0f, INFINITY, NAN}, fy[6];
        tsw__vmath_apply(level, TSW_F32, 0, fx, fy, 6);
        CHECK(fy[0] == 0 && fy[1] <= FLT_MIN && fy[2] == 1 && isinf(fy[3]) && isinf(fy[4]) &&
              isnan(fy[5]));
        float flx[] = {0.0f, INFINITY, -1.0f, NAN, 1.0f, 1e-45f};
        tsw__vmath_apply(level, TSW_F32, 1, flx, fy, 6);
        CHECK(isinf(fy[0]) && fy[0] < 0 && isinf(fy[1]) && isnan(fy[2]) && isnan(fy[3]) &&
              fy[4] == 0 && fabsf(fy[5] - logf(1e-45f)) < 1e-4f);
    }
}

/* ---- DBA's alignment lanes --------------------------------------------------------------------- */

/* tsw__cpu_dba_paths at every level against tsw_dtw_path series by series: the same pairs
 * and cost for every lane, without a window and with Sakoe-Chiba rows (the band the
 * lanes get from align.c), small integers (ties) and uniform values, both precisions and
 * path orders, 1 to 8 lanes. (tsw_dba_step falls back to tsw_dtw_path for a lane without
 * a finite path, so its own test cannot see a kernel that loses its paths: this one can.) */
static void test_dba_lanes(void)
{
    tsw_t_rng r = {0x6462616c616e6573ULL};
    enum { MAXN = 25, MAXL = 25 };
    static double v[8 * MAXN * 3], z[MAXL * 3];
    static float fv[8 * MAXN * 3], fz[MAXL * 3];
    static int64_t paths[8][2 * (MAXN + MAXL)], want[2 * (MAXN + MAXL)], lo[MAXL + MAXN],
        hi[MAXL + MAXN];
    void *work = malloc(tsw__cpu_dba_work_bytes(MAXN + MAXL, MAXN + MAXL, 3));
    CHECK(work != NULL);
    for (int level = 1; work && level <= tsw__cpu_level(); ++level) {
        for (int trial = 0; trial < 200; ++trial) {
            const int f32 = trial & 1, ints = (trial >> 1) & 1, rows = (trial >> 2) & 1;
            const int band = (trial >> 3) & 1;
            const tsw_dtype dt = f32 ? TSW_F32 : TSW_F64;
            const int D = tsw_t_int(&r, 1, 3), L = tsw_t_int(&r, 1, MAXL);
            const int sl = tsw_t_int(&r, 1, MAXN);
            const int cnt = tsw_t_int(&r, 1, tsw__cpu_dba_lanes(level, dt));
            for (int q = 0; q < 8 * MAXN * 3; ++q)
                v[q] = ints ? (double)tsw_t_int(&r, 0, 3) : tsw_t_uniform(&r, -1, 1);
            for (int q = 0; q < MAXL * 3; ++q)
                z[q] = ints ? (double)tsw_t_int(&r, 0, 3) : tsw_t_uniform(&r, -1, 1);
            for (int q = 0; q < 8 * MAXN * 3; ++q)
                fv[q] = (float)v[q];
            for (int q = 0; q < MAXL * 3; ++q)
                fz[q] = (float)z[q];
            tsw_align_params p;
            tsw_align_params_default(&p);
            tsw__dba_group g;
            memset(&g, 0, sizeof(g));
            g.dim = D;
            g.n = rows ? sl : L;
            g.m = rows ? L : sl;
            g.count = cnt;
            g.series_rows = rows;
            g.z = f32 ? (const void *)fz : (const void *)z;
            if (band) { /* Sakoe-Chiba rows of radius rad over the (n, m) grid */
                const int64_t rad = tsw_t_int(&r, 0, 6);
                p.window = TSW_WINDOW_SAKOE_CHIBA;
                p.window_radius = (double)rad;
                tsw_band b = tsw_band_make(p.window, p.window_radius, 2.0, g.n, g.m);
                for (int64_t i = 0; i < g.n; ++i)
                    tsw_band_range(&b, i, &lo[i], &hi[i]);
                g.lo = lo;
                g.hi = hi;
            }
            for (int l = 0; l < cnt; ++l) {
                g.s[l] = f32 ? (const void *)(fv + l * MAXN * 3) : (const void *)(v + l * MAXN * 3);
                g.path[l] = paths[l];
            }
            CHECK_EQ(tsw__cpu_dba_paths(level, dt, &g, work), TSW_OK);
            for (int l = 0; l < cnt; ++l) {
                tsw_series s = {g.s[l], sl, NULL}, zs = {g.z, L, NULL};
                int64_t wl = 0;
                double wc = 0;
                const int rc = rows ? tsw_dtw_path(&p, dt, D, &s, &zs, want, MAXN + MAXL, &wl,
                                                   &wc, NULL)
                                    : tsw_dtw_path(&p, dt, D, &zs, &s, want, MAXN + MAXL, &wl,
                                                   &wc, NULL);
                if (rc != TSW_OK) { /* no path in the band: the lanes say +inf, no pairs */
                    CHECK(g.plen[l] == 0 && !(g.cost[l] < TSW_INF_F64));
                    continue;
                }
                const int same = g.plen[l] == wl && g.cost[l] == wc &&
                                 memcmp(paths[l], want, sizeof(int64_t) * 2 * (size_t)wl) == 0;
                if (!same)
                    printf("  dba lanes: level %d trial %d lane %d f32 %d ints %d band %d "
                           "rows %d D %d n %lld m %lld\n", level, trial, l, f32, ints, band,
                           rows, D, (long long)g.n, (long long)g.m);
                CHECK(same);
            }
        }
    }
    free(work);
}

/* ---- widths and sizes ------------------------------------------------------------------------ */

static void test_widths(void)
{
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    int lvl = tsw__cpu_level();
    CHECK_EQ(tsw__lanes_width_level(&p, TSW_F64, 1, 0), 0);
    if (lvl >= 1) {
        CHECK_EQ(tsw__lanes_width_level(&p, TSW_F64, 1, 1), 2);
        CHECK_EQ(tsw__lanes_width_level(&p, TSW_F32, 3, 1), 4);
    }
    if (lvl >= 2) {
        CHECK_EQ(tsw__lanes_width_level(&p, TSW_F64, 1, 2), 4);
        CHECK_EQ(tsw__lanes_width_level(&p, TSW_F32, 1, 2), 8);
    }
    CHECK_EQ(tsw__lanes_width(&p, TSW_F64, 1), tsw__lanes_width_level(&p, TSW_F64, 1, lvl));
    /* TWED with a general p has no lane kernel at any level */
    tsw_params_default(&p, TSW_TWED);
    p.p = 3;
    for (int l = 0; l <= 2; ++l)
        CHECK_EQ(tsw__lanes_width_level(&p, TSW_F32, 1, l), 0);
    /* sizes grow with the lengths and overflow reports 0 */
    tsw_params_default(&p, TSW_DTW);
    CHECK(tsw__pair_ws_bytes(&p, TSW_F64, 1, 10, 10) > 0);
    CHECK(tsw__pair_ws_bytes(&p, TSW_F64, 1, 1000, 10) >= tsw__pair_ws_bytes(&p, TSW_F64, 1, 10, 10));
    CHECK_EQ(tsw__pair_ws_bytes(&p, TSW_F64, INT64_MAX / 4, 1000, 1000), 0);
    CHECK_EQ(tsw__lanes_ws_bytes(&p, TSW_F64, INT64_MAX / 4, 1000, 1000), 0);
}

int main(void)
{
    g_quick = tsw_t_quick();
    printf("cpu level %d (%s)\n", tsw__cpu_level(), tsw_cpu_simd());
    test_widths();
    test_vecmath();
    test_dba_lanes();
    test_pairs();
    test_soft_dtw_range();
    test_lanes();
    test_family_lanes();
    test_sq_bound();
    test_erp_root_square();
    test_msm_split_k();
    test_public();
    printf("worst error / tolerance: float32 %.3g, float64 %.3g\n", g_worst[0], g_worst[1]);
    return TSW_TEST_END();
}
