/*
 * Allocation failure injected one allocation at a time (libuv's way): a counting allocator
 * fails exactly the k-th allocation of a call, for k = 1, 2, ... until a call makes fewer
 * than k allocations and succeeds. Every failing call must return TSW_ENOMEM, leave its
 * output untouched and free everything it allocated.
 */
#include "harness.h"
#include "internal.h"

#define SENTINEL_BYTE 0x5A

static long n_calls;  /* allocation requests */
static long n_live;   /* successful allocations not yet freed */
static long n_frees;  /* frees */
static long fail_at;  /* 1-based request to fail; 0 = none */
static long n_failed; /* requests failed on purpose */

/* Calls come from several OpenMP threads: atomics. */
static void *counting_malloc(size_t size)
{
    long k = __atomic_add_fetch(&n_calls, 1, __ATOMIC_SEQ_CST);
    if (k == __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST)) {
        __atomic_add_fetch(&n_failed, 1, __ATOMIC_SEQ_CST);
        return NULL;
    }
    void *p = malloc(size);
    if (p)
        __atomic_add_fetch(&n_live, 1, __ATOMIC_SEQ_CST);
    return p;
}

static void counting_free(void *p)
{
    if (!p)
        return;
    __atomic_add_fetch(&n_frees, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&n_live, 1, __ATOMIC_SEQ_CST);
    free(p);
}

static void reset(long k)
{
    n_calls = n_live = n_frees = n_failed = 0;
    fail_at = k;
}

/* One operation under test, writing `bytes` of output. */
typedef int (*op_fn)(void *ctx, void *out);

/* Fail allocation k = 1, 2, ... of op; returns the number of allocations a clean run makes. */
static long inject(const char *file, int line, const char *name, op_fn op, void *ctx,
                   size_t bytes, int min_allocs)
{
    unsigned char *out = malloc(bytes), *ref = malloc(bytes), *good = malloc(bytes);
    memset(ref, SENTINEL_BYTE, bytes);

    /* A clean run: its allocation count bounds the loop and its output is the reference. */
    reset(0);
    memset(good, SENTINEL_BYTE, bytes);
    CHECK_RC_AT(op(ctx, good), TSW_OK, file, line);
    long clean = n_calls;
    CHECK_AT(n_live == 0, file, line);
    if (!CHECK_AT(clean >= min_allocs, file, line))
        TSW_T_NOTE("  %s: %ld allocations, expected at least %d\n", name, clean, min_allocs);

    for (long k = 1; k <= 1000; ++k) {
        reset(k);
        memset(out, SENTINEL_BYTE, bytes);
        int rc = op(ctx, out);
        long live = n_live;
        if (n_calls < k) {
            /* every allocation of the call succeeded: the call succeeds, same output */
            CHECK_RC_AT(rc, TSW_OK, file, line);
            CHECK_AT(memcmp(out, good, bytes) == 0, file, line);
            CHECK_AT(k == clean + 1, file, line);
            CHECK_AT(live == 0, file, line);
            break;
        }
        if (!CHECK_RC_AT(rc, TSW_ENOMEM, file, line) || !CHECK_AT(live == 0, file, line) ||
            !CHECK_AT(memcmp(out, ref, bytes) == 0, file, line))
            TSW_T_NOTE("  %s: failing allocation %ld of %ld: %d live blocks\n", name, k, clean,
                       (int)live);
        CHECK_AT(n_failed == 1, file, line);
    }
    free(out);
    free(ref);
    free(good);
    return clean;
}
#define INJECT(name, op, ctx, bytes, min_allocs)                                               \
    inject(__FILE__, __LINE__, name, op, ctx, bytes, min_allocs)

/* ---- the operations -----------------------------------------------------------------------
 */

typedef struct {
    tsw_params p;
    tsw_dtype dt;
    int64_t dim;
    tsw_series a, b;
    tsw_collection x, y;
    tsw_pdist_layout layout;
    tsw_exec e;
} call;

static int op_distance(void *ctx, void *out)
{
    call *c = ctx;
    return tsw_distance(&c->p, c->dt, c->dim, &c->a, &c->b, out, &c->e);
}

static int op_cdist(void *ctx, void *out)
{
    call *c = ctx;
    return tsw_cdist(&c->p, c->dt, c->dim, &c->x, &c->y, out, &c->e);
}

static int op_pdist(void *ctx, void *out)
{
    call *c = ctx;
    return tsw_pdist(&c->p, c->dt, c->dim, &c->x, c->layout, out, &c->e);
}

static void test_injection(void)
{
    /* Series long enough that every pair's workspace (float32 included) exceeds
     * tsw_distance's stack buffer, so the one-pair call must allocate; valgrind (quick)
     * runs fewer series, just above that length. */
    const int64_t dim = 2, n = tsw_t_quick() ? 3 : 6;
    int64_t len = 16;
    for (int mi = 0; mi < 3; ++mi) {
        tsw_params probe;
        tsw_params_default(&probe, (tsw_measure)mi);
        while (tsw__pair_ws_bytes(&probe, TSW_F32, dim, len - 5, len - 5) <= TSW__STACK_WS_BYTES)
            len += 8;
    }
    len += tsw_t_quick() ? 8 : 48;
    tsw_t_rng r = {17};
    double *v64 = malloc(sizeof(double) * (size_t)(n * len * dim));
    float *v32 = malloc(sizeof(float) * (size_t)(n * len * dim));
    for (int64_t k = 0; k < n * len * dim; ++k) {
        v64[k] = tsw_t_uniform(&r, -1, 1);
        v32[k] = (float)v64[k];
    }
    int64_t offs[6], lens[6];
    for (int64_t i = 0; i < n; ++i) {
        offs[n - 1 - i] = i * len; /* stored in reverse order */
        lens[n - 1 - i] = len - 3 * i;
    }

    const tsw_measure measures[3] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW};
    for (int mi = 0; mi < 3; ++mi) {
        for (int variant = 0; variant < 8; ++variant) {
            /* variant: bit 0 = float32, bit 1 = 2 threads (else 1), bit 2 = the soft-DTW
             * divergence, whose self values allocate too */
            if ((variant & 4) && measures[mi] != TSW_SOFT_DTW)
                continue;
            call c;
            memset(&c, 0, sizeof(c));
            tsw_params_default(&c.p, measures[mi]);
            c.p.normalize = (variant & 4) != 0;
            c.dt = variant & 1 ? TSW_F32 : TSW_F64;
            c.dim = dim;
            const void *v = c.dt == TSW_F32 ? (const void *)v32 : (const void *)v64;
            size_t esz = c.dt == TSW_F32 ? 4 : 8;
            c.a = (tsw_series){v, len, NULL};
            c.b = (tsw_series){(const char *)v + esz * (size_t)(len * dim), len - 5, NULL};
            c.x = (tsw_collection){v, offs, lens, 0, n, NULL};
            c.y = (tsw_collection){v, NULL, NULL, len, n, NULL}; /* equal lengths */
            tsw_exec_default(&c.e);
            c.e.n_threads = variant & 2 ? 2 : 1;

            /* one pair: one heap workspace */
            long a1 = INJECT("distance", op_distance, &c, sizeof(double), 1);
            CHECK_EQ(a1, 1);
            /* cdist: the workspaces (+ self values and their workspaces for the divergence) */
            INJECT("cdist", op_cdist, &c, esz * (size_t)(n * n), 1);
            /* pdist, both layouts */
            c.layout = TSW_PDIST_FULL;
            INJECT("pdist full", op_pdist, &c, esz * (size_t)(n * n), 2);
            c.layout = TSW_PDIST_CONDENSED;
            INJECT("pdist condensed", op_pdist, &c, esz * (size_t)(n * (n - 1) / 2), 2);
        }
    }
    /* tsw_distance on short series needs no heap at all: nothing to fail. */
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_series s = {v64, 8, NULL};
    double out;
    reset(1);
    CHECK_RC(tsw_distance(&p, TSW_F64, 1, &s, &s, &out, NULL), TSW_OK);
    CHECK_EQ(n_calls, 0);
    free(v64);
    free(v32);
}

static void test_replace_allocator(void)
{
    CHECK_RC(tsw_replace_allocator(NULL, free), TSW_EINVAL);
    CHECK_RC(tsw_replace_allocator(malloc, NULL), TSW_EINVAL);
    /* the failed calls changed nothing: the counting allocator is still in place */
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    double v[600];
    for (int k = 0; k < 600; ++k)
        v[k] = k % 7;
    tsw_series s = {v, 600, NULL};
    double out;
    reset(0);
    CHECK_RC(tsw_distance(&p, TSW_F64, 1, &s, &s, &out, NULL), TSW_OK);
    CHECK_EQ(n_calls, 1);
    CHECK_EQ(n_frees, 1);
    /* both NULL restores malloc/free: the counter no longer moves */
    CHECK_RC(tsw_replace_allocator(NULL, NULL), TSW_OK);
    reset(1);
    CHECK_RC(tsw_distance(&p, TSW_F64, 1, &s, &s, &out, NULL), TSW_OK);
    CHECK_EQ(n_calls, 0);
}

int main(void)
{
    CHECK_RC(tsw_replace_allocator(counting_malloc, counting_free), TSW_OK);
    test_injection();
    test_replace_allocator(); /* ends with the default allocator restored */
    return TSW_TEST_END();
}
