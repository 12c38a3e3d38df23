/*
 * Segmental DTW (tsw_segmental_dtw). The cell-for-cell comparison with a reference written
 * from the paper's definitions is in tests/python/test_segmental.py; here, the C contract:
 *   - one fragment is subsequence DTW (tsw_subsequence_dtw's best match and path) for every
 *     variant and step pattern;
 *   - the result does not depend on n_chunks, the thread count, float/double of the same
 *     integer-valued data, nor on the second pass's method (stored or linear memory);
 *   - every fragment's path is a valid subsequence path of its rows, from row r_f to row
 *     r_{f+1} - 1, its cost summed along the path equals the segment cost exactly (integer
 *     data), WSDTW ends are d_f apart, SSDTW's path is monotone;
 *   - bad arguments give their status before any work and leave the outputs untouched;
 *     cancellation through the progress callback (1 and several threads); allocation
 *     failures give TSW_ENOMEM.
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static const int DI[3][3] = {{1, 0, 1}, {1, 1, 2}, {1, 1, 2}};
static const int DJ[3][3] = {{1, 1, 0}, {1, 2, 1}, {1, 2, 1}};
static const double W[3][3] = {{1, 1, 1}, {2, 3, 3}, {1, 1, 2}};

static void fill_int(tsw_t_rng *r, double *x, int64_t count)
{
    for (int64_t q = 0; q < count; ++q)
        x[q] = (double)tsw_t_int(r, 0, 3);
}

static double sqcost(const double *x, const double *y, int64_t dim)
{
    double s = 0;
    for (int64_t k = 0; k < dim; ++k)
        s += (x[k] - y[k]) * (x[k] - y[k]);
    return s;
}

/* Checks one result's properties; returns 1 when all hold. */
static int check_result(int step, tsw_segmental v, const double *a, int64_t n, const double *b,
                        int64_t m, int64_t dim, int64_t N, const int64_t *path, int64_t len,
                        const tsw_match *seg)
{
    int ok = 1;
    int64_t at = 0;
    for (int64_t f = 0; f < N; ++f) {
        const int64_t r0 = f * n / N, r1 = (f + 1) * n / N;
        const int64_t *p = path + 2 * seg[f].path_offset;
        const int64_t L = seg[f].path_length;
        ok &= CHECK_EQ(seg[f].path_offset, at);
        at += L;
        ok &= CHECK(L >= 1 && p[0] == r0 && p[2 * (L - 1)] == r1 - 1);
        ok &= CHECK(p[1] == seg[f].start && p[2 * (L - 1) + 1] == seg[f].end);
        double c = sqcost(a + p[0] * dim, b + p[1] * dim, dim);
        for (int64_t q = 1; q < L; ++q) {
            int64_t di = p[2 * q] - p[2 * q - 2], dj = p[2 * q + 1] - p[2 * q - 1];
            int s = -1;
            for (int t = 0; t < 3; ++t)
                if (DI[step][t] == di && DJ[step][t] == dj)
                    s = t;
            if (!CHECK(s >= 0))
                return 0;
            c += W[step][s] * sqcost(a + p[2 * q] * dim, b + p[2 * q + 1] * dim, dim);
        }
        ok &= CHECK(c == seg[f].cost);
        if (f > 0 && v == TSW_SEGMENTAL_WEAK)
            ok &= CHECK(seg[f].end - seg[f - 1].end >= (step ? (r1 - r0) / 2 + 1 : 1));
        if (f > 0 && v == TSW_SEGMENTAL_STRICT)
            ok &= CHECK(seg[f].start >= seg[f - 1].end);
    }
    ok &= CHECK_EQ(at, len);
    (void)m;
    return ok;
}

static void test_invariance(void)
{
    tsw_t_rng r = {41};
    const int trials = tsw_t_quick() ? 6 : 24;
    for (int t = 0; t < trials; ++t) {
        const int step = t % 3;
        const int64_t n = tsw_t_int(&r, 8, 160), m = tsw_t_int(&r, n, 2 * n + 10);
        const int64_t dim = tsw_t_int(&r, 1, 3);
        const int64_t N = tsw_t_int(&r, 1, step ? (n / 2 < 12 ? n / 2 : 12) : 12);
        double *a = malloc(sizeof(double) * (size_t)(n * dim));
        double *b = malloc(sizeof(double) * (size_t)(m * dim));
        float *af = malloc(sizeof(float) * (size_t)(n * dim));
        float *bf = malloc(sizeof(float) * (size_t)(m * dim));
        fill_int(&r, a, n * dim);
        fill_int(&r, b, m * dim);
        for (int64_t q = 0; q < n * dim; ++q)
            af[q] = (float)a[q];
        for (int64_t q = 0; q < m * dim; ++q)
            bf[q] = (float)b[q];
        const int64_t cap = tsw_segmental_path_max_length((tsw_step)step, n, m, N);
        int64_t *p0 = malloc(sizeof(int64_t) * 2 * (size_t)cap);
        int64_t *p1 = malloc(sizeof(int64_t) * 2 * (size_t)cap);
        tsw_match *s0 = malloc(sizeof(tsw_match) * (size_t)N);
        tsw_match *s1 = malloc(sizeof(tsw_match) * (size_t)N);
        tsw_series sa = {a, n, NULL}, sb = {b, m, NULL}, saf = {af, n, NULL}, sbf = {bf, m, NULL};
        for (int v = 0; v < 3; ++v) {
            tsw_align_params p;
            tsw_align_params_default(&p);
            p.step = (tsw_step)step;
            tsw_segmental_params sp;
            tsw_segmental_params_default(&sp);
            sp.variant = (tsw_segmental)v;
            sp.n_fragments = N;
            sp.n_chunks = 1;
            tsw_exec e;
            tsw_exec_default(&e);
            e.n_threads = 1;
            int64_t l0 = 0, l1 = 0;
            int rc = tsw_segmental_dtw(&p, &sp, TSW_F64, dim, &sa, &sb, p0, cap, &l0, s0, &e);
            if (rc == TSW_ENOPATH) /* SSDTW on random data may find no ordered placement */
                continue;
            if (!CHECK_RC(rc, TSW_OK))
                continue;
            if (!check_result(step, (tsw_segmental)v, a, n, b, m, dim, N, p0, l0, s0))
                TSW_T_NOTE("trial %d step %d variant %d n %lld m %lld N %lld", t, step, v,
                           (long long)n, (long long)m, (long long)N);
            for (int var = 0; var < 5; ++var) {
                tsw_align_params q = p;
                tsw_segmental_params sq = sp;
                tsw_exec eq = e;
                int f32 = 0;
                if (var == 0)
                    sq.n_chunks = 0, eq.n_threads = 3;
                if (var == 1)
                    sq.n_chunks = tsw_t_int(&r, 2, 9), eq.n_threads = 2;
                if (var == 2)
                    sq.n_chunks = m, eq.n_threads = 5;
                if (var == 3)
                    q.method = TSW_PATH_LINEAR, q.memory_limit = 16, eq.n_threads = 2;
                if (var == 4)
                    f32 = 1;
                rc = tsw_segmental_dtw(&q, &sq, f32 ? TSW_F32 : TSW_F64, dim, f32 ? &saf : &sa,
                                       f32 ? &sbf : &sb, p1, cap, &l1, s1, &eq);
                if (!CHECK_RC(rc, TSW_OK) || !CHECK_EQ(l1, l0))
                    continue;
                int same = memcmp(p0, p1, sizeof(int64_t) * 2 * (size_t)l0) == 0;
                for (int64_t f = 0; f < N; ++f)
                    same &= s0[f].start == s1[f].start && s0[f].end == s1[f].end &&
                            s0[f].cost == s1[f].cost && s0[f].path_length == s1[f].path_length;
                if (!CHECK(same))
                    TSW_T_NOTE("trial %d step %d variant %d variation %d", t, step, v, var);
            }
        }
        /* one fragment: subsequence DTW's best match */
        {
            tsw_align_params p;
            tsw_align_params_default(&p);
            p.step = (tsw_step)step;
            tsw_segmental_params sp;
            tsw_segmental_params_default(&sp);
            sp.n_fragments = 1;
            tsw_match mt, sg;
            int64_t count = 0, len = 0, sc = tsw_subsequence_path_max_length(n, m, 1);
            int64_t *sp_path = malloc(sizeof(int64_t) * 2 * (size_t)sc);
            int64_t c1 = tsw_segmental_path_max_length((tsw_step)step, n, m, 1);
            CHECK_RC(tsw_subsequence_dtw(&p, TSW_F64, dim, &sa, &sb, 1, &mt, &count, sp_path, sc,
                                         NULL), TSW_OK);
            for (int v = 0; v < 3; ++v) {
                sp.variant = (tsw_segmental)v;
                CHECK_RC(tsw_segmental_dtw(&p, &sp, TSW_F64, dim, &sa, &sb, p0, c1, &len, &sg, NULL),
                         TSW_OK);
                CHECK(len == mt.path_length && sg.start == mt.start && sg.end == mt.end &&
                      sg.cost == mt.cost &&
                      memcmp(p0, sp_path, sizeof(int64_t) * 2 * (size_t)len) == 0);
            }
            free(sp_path);
        }
        free(a), free(b), free(af), free(bf), free(p0), free(p1), free(s0), free(s1);
    }
}

static void test_errors(void)
{
    double a[40] = {0}, b[30] = {0};
    tsw_series sa = {a, 40, NULL}, sb = {b, 30, NULL};
    tsw_align_params p;
    tsw_align_params_default(&p);
    p.step = TSW_STEP_P05_QUERY;
    tsw_segmental_params sp;
    tsw_segmental_params_default(&sp);
    sp.n_fragments = 4;
    int64_t path[2 * 200], len = -7;
    tsw_match seg[64];
    for (int q = 0; q < 400; ++q)
        path[q] = -5;
    const int64_t cap = tsw_segmental_path_max_length(p.step, 40, 30, 4);
    CHECK_EQ(cap, 40);
    CHECK_EQ(tsw_segmental_path_max_length(TSW_STEP_SYMMETRIC1, 40, 30, 4), 40 + 4 * 29);
    CHECK_EQ(tsw_segmental_path_max_length(TSW_STEP_P05, 40, 30, 41), 0);
    CHECK_EQ(tsw_segmental_path_max_length(TSW_STEP_P05, 0, 30, 1), 0);
    CHECK_EQ(tsw_segmental_path_max_length(TSW_STEP_SYMMETRIC1, INT64_MAX / 32, INT64_MAX / 32, 1000), 0);
#define BAD(expr, want)                                                                        \
    do {                                                                                       \
        CHECK_RC(expr, want);                                                                  \
        CHECK_EQ(len, -7);                                                                     \
        CHECK(path[0] == -5 && path[79] == -5);                                                \
    } while (0)
    BAD(tsw_segmental_dtw(&p, &sp, TSW_F64, 1, &sa, &sb, NULL, cap, &len, seg, NULL), TSW_EINVAL);
    BAD(tsw_segmental_dtw(&p, &sp, TSW_F64, 1, &sa, &sb, path, cap, NULL, seg, NULL), TSW_EINVAL);
    BAD(tsw_segmental_dtw(&p, NULL, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EINVAL);
    BAD(tsw_segmental_dtw(NULL, &sp, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EINVAL);
    BAD(tsw_segmental_dtw(&p, &sp, TSW_F64, 1, &sa, &sb, path, cap - 1, &len, seg, NULL), TSW_EINVAL);
    BAD(tsw_segmental_dtw(&p, &sp, (tsw_dtype)7, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EDTYPE);
    BAD(tsw_segmental_dtw(&p, &sp, TSW_F64, 0, &sa, &sb, path, cap, &len, seg, NULL), TSW_ESHAPE);
    tsw_segmental_params bad = sp;
    bad.variant = (tsw_segmental)3;
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EINVAL);
    bad = sp;
    bad.n_chunks = -1;
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EPARAM);
    bad = sp;
    bad.n_fragments = 0;
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EPARAM);
    bad.n_fragments = 41;
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EPARAM);
    bad.n_fragments = 21; /* p05 steps: fragments of 1 point */
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EPARAM);
    tsw_align_params pw = p;
    pw.window = TSW_WINDOW_SAKOE_CHIBA;
    pw.window_radius = 3;
    BAD(tsw_segmental_dtw(&pw, &sp, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL), TSW_EPARAM);
    /* 8 fragments of 5 points: WSDTW needs 8 * 3 = 24 columns, SSDTW 8 * 2 + 1 = 17 */
    tsw_series short_b = {b, 23, NULL};
    bad = sp;
    bad.n_fragments = 8;
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &short_b, path, cap, &len, seg, NULL),
        TSW_ENOPATH);
    bad.variant = TSW_SEGMENTAL_STRICT;
    short_b.length = 16;
    BAD(tsw_segmental_dtw(&p, &bad, TSW_F64, 1, &sa, &short_b, path, cap, &len, seg, NULL),
        TSW_ENOPATH);
    a[7] = 0.0 / 0.0;
    BAD(tsw_segmental_dtw(&p, &sp, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, NULL),
        TSW_ENONFINITE);
    a[7] = 0;
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CUDA;
    {
        /* the GPU computes it (tests/gpu/test_cuda_path.c compares it to the CPU's); no
         * device: TSW_ENODEV, never a silent CPU run */
        int ndev = 0;
        if (tsw_has_cuda())
            tsw_cuda_device_count(&ndev);
        int rc = tsw_segmental_dtw(&p, &sp, TSW_F64, 1, &sa, &sb, path, cap, &len, seg, &e);
        CHECK_RC(rc, ndev > 0 ? TSW_OK : TSW_ENODEV);
    }
    /* segments may be NULL */
    CHECK_RC(tsw_segmental_dtw(&p, &sp, TSW_F64, 1, &sa, &sb, path, cap, &len, NULL, NULL), TSW_OK);
#undef BAD
}

typedef struct {
    int calls, cancel_at, bad;
    int64_t last_done, total;
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
    const int64_t n = tsw_t_quick() ? 400 : 1600, m = n, dim = 2;
    tsw_t_rng r = {9};
    double *a = malloc(sizeof(double) * (size_t)(n * dim)), *b = malloc(sizeof(double) * (size_t)(m * dim));
    for (int64_t q = 0; q < n * dim; ++q)
        a[q] = tsw_t_uniform(&r, -1, 1), b[q] = tsw_t_uniform(&r, -1, 1);
    tsw_series sa = {a, n, NULL}, sb = {b, m, NULL};
    tsw_align_params p;
    tsw_align_params_default(&p);
    p.step = TSW_STEP_P05_QUERY;
    tsw_segmental_params sp;
    tsw_segmental_params_default(&sp);
    sp.n_fragments = 6;
    const int64_t cap = tsw_segmental_path_max_length(p.step, n, m, 6);
    int64_t *path = malloc(sizeof(int64_t) * 2 * (size_t)cap);
    /* The user's callback runs on the calling thread: from the fragment tasks it runs, and
     * while it waits for the other threads' tasks (it may run none of them: with more
     * threads than cores, or under valgrind, which runs one thread at a time, the others
     * can take every task; CI once saw exactly that), at least once per pass. So a run has
     * a mid-run callback and a stop at the first one is honoured, with 1 and 3 threads. */
    for (int threads = 1; threads <= 3; threads += 2) {
        tsw_exec e;
        tsw_exec_default(&e);
        e.n_threads = threads;
        e.progress = on_progress;
        prog_rec rec = {0, 0, 0, 0, -1};
        e.progress_user = &rec;
        int64_t len = 0;
        CHECK_RC(tsw_segmental_dtw(&p, &sp, TSW_F64, dim, &sa, &sb, path, cap, &len, NULL, &e),
                 TSW_OK);
        CHECK(rec.calls >= 2 && !rec.bad && rec.last_done == rec.total);
        prog_rec cr = {0, 1, 0, 0, -1};
        e.progress_user = &cr;
        for (int64_t q = 0; q < 2 * cap; ++q)
            path[q] = -5;
        len = -7;
        CHECK_RC(tsw_segmental_dtw(&p, &sp, TSW_F64, dim, &sa, &sb, path, cap, &len, NULL, &e),
                 TSW_ECANCELED);
        CHECK_EQ(cr.calls, 1);
        CHECK(len == -7 && path[0] == -5 && path[2 * cap - 1] == -5);
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
    double a[60], b[50];
    tsw_t_rng r = {8};
    fill_int(&r, a, 60);
    fill_int(&r, b, 50);
    memcpy(b, a, sizeof(double) * 50); /* b = a's first 25 points: SSDTW finds a placement */
    tsw_series sa = {a, 30, NULL}, sb = {b, 25, NULL};
    int64_t path[2 * 64], len;
    tsw_match seg[4];
    int ok = 0;
    for (int v = 0; v < 3; ++v) {
        for (int64_t k = 0; k < 200; ++k) {
            tsw_align_params p;
            tsw_align_params_default(&p);
            p.step = TSW_STEP_P05_QUERY;
            tsw_segmental_params sp;
            tsw_segmental_params_default(&sp);
            sp.variant = (tsw_segmental)v;
            sp.n_fragments = 4;
            sp.n_chunks = 2;
            tsw_exec e;
            tsw_exec_default(&e);
            e.n_threads = 2;
            alloc_left = k;
            tsw_replace_allocator(failing_malloc, free);
            int rc = tsw_segmental_dtw(&p, &sp, TSW_F64, 2, &sa, &sb, path, 64, &len, seg, &e);
            tsw_replace_allocator(NULL, NULL);
            if (rc == TSW_OK) {
                ok++;
                break;
            }
            CHECK_RC(rc, TSW_ENOMEM);
        }
    }
    CHECK_EQ(ok, 3);
}

int main(void)
{
    test_invariance();
    test_errors();
    test_progress();
    test_alloc_failure();
    return TSW_TEST_END();
}
