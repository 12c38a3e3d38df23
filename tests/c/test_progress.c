/*
 * The progress callback of cdist and pdist: called from the calling thread only, with
 * done <= total, done never decreasing and a last call with done == total; a non-zero
 * return cancels the call promptly with TSW_ECANCELED. A cancelled output may be partly
 * written (tswarp.h), but only with correct values: every element is either untouched or
 * the value a complete call gives.
 */
#include "harness.h"

#include <pthread.h>

#define SENTINEL_BYTE 0x5A

typedef struct {
    pthread_t caller;
    int64_t calls, last_done, total;
    int wrong_thread, decreasing, over_total, total_changed;
    int64_t cancel_at_call; /* return non-zero on this call (1-based); 0 = never */
    int cancel_when_done;   /* return non-zero on the call with done == total */
    int64_t calls_after_cancel;
    int cancelled;
    double cancel_time;
} recorder;

static void recorder_init(recorder *r)
{
    memset(r, 0, sizeof(*r));
    r->caller = pthread_self();
    r->last_done = -1;
    r->total = -1;
}

static int record(void *user, int64_t done, int64_t total)
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
    if ((r->cancel_at_call && r->calls == r->cancel_at_call) ||
        (r->cancel_when_done && done == total)) {
        r->cancelled = 1;
        r->cancel_time = tsw_t_seconds();
        return 1;
    }
    return 0;
}

/* count series of length len, dim 1, deterministic values. */
static double *make_values(int64_t count, int64_t len, uint64_t seed)
{
    tsw_t_rng r = {seed};
    double *v = malloc(sizeof(double) * (size_t)(count * len));
    for (int64_t k = 0; k < count * len; ++k)
        v[k] = tsw_t_uniform(&r, -1, 1);
    return v;
}

/* A call that runs to the end reports done == total last, from the calling thread. */
static void test_complete(void)
{
    const int quick = tsw_t_quick();
    const int64_t n = quick ? 12 : 32, len = quick ? 48 : 192;
    double *v = make_values(n, len, 1);
    tsw_collection c = {v, NULL, NULL, len, n, NULL};
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    double *out = malloc(sizeof(double) * (size_t)(n * n));
    for (int threads = 1; threads <= 2; ++threads) {
        for (int op = 0; op < 3; ++op) { /* cdist, pdist full, pdist condensed */
            recorder r;
            recorder_init(&r);
            tsw_exec e;
            tsw_exec_default(&e);
            e.device = TSW_DEVICE_CPU; /* the CPU driver's progress; the GPU's is in tests/gpu */
            e.n_threads = threads;
            e.progress = record;
            e.progress_user = &r;
            double t0 = tsw_t_seconds();
            int rc = op == 0
                         ? tsw_cdist(&p, TSW_F64, 1, &c, &c, out, &e)
                         : tsw_pdist(&p, TSW_F64, 1, &c, (tsw_pdist_layout)(op - 1), out, &e);
            double elapsed = tsw_t_seconds() - t0;
            CHECK_RC(rc, TSW_OK);
            int64_t total = op == 0 ? n * n : n * (n - 1) / 2; /* pairs */
            CHECK(r.calls >= 1);
            CHECK_EQ(r.total, total);
            CHECK_EQ(r.last_done, total);
            CHECK(!r.wrong_thread);
            CHECK(!r.decreasing);
            CHECK(!r.over_total);
            CHECK(!r.total_changed);
            /* every ~50 ms: a one-thread call that lasted well beyond that reported
             * before the end (the calling thread polls between pairs, and a pair here is
             * well under 50 ms even under valgrind). With more threads the calling thread
             * may finish its share and wait at the barrier while another thread works on,
             * which is allowed, so the check is for one thread only. */
            if (threads == 1 && elapsed > 0.4)
                CHECK(r.calls >= 2);
        }
    }
    /* pdist of one series: nothing to compute, still one final call with 0 of 0 */
    recorder r;
    recorder_init(&r);
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CPU; /* the CPU driver's progress; the GPU's is in tests/gpu */
    e.progress = record;
    e.progress_user = &r;
    tsw_collection one = c;
    one.count = 1;
    CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &one, TSW_PDIST_FULL, out, &e), TSW_OK);
    CHECK_EQ(r.calls, 1);
    CHECK_EQ(r.last_done, 0);
    CHECK_EQ(r.total, 0);
    free(out);
    free(v);
}

/* Elements of out (count doubles) that are neither the sentinel nor the complete value. */
static int64_t garbage(const unsigned char *out, const double *complete, int64_t count)
{
    int64_t bad = 0;
    for (int64_t k = 0; k < count; ++k) {
        unsigned char sentinel[sizeof(double)];
        memset(sentinel, SENTINEL_BYTE, sizeof(sentinel));
        const unsigned char *e = out + k * (int64_t)sizeof(double);
        bad += memcmp(e, sentinel, sizeof(double)) != 0 &&
               memcmp(e, &complete[k], sizeof(double)) != 0;
    }
    return bad;
}

/*
 * Cancellation: a cdist / pdist that would run for many seconds; the callback returns 1
 * on its first call (after ~50 ms). The call must come back within a second of that
 * (an item is at most 64 pairs), return TSW_ECANCELED and not call the callback again.
 */
static void test_cancel(void)
{
    const int quick = tsw_t_quick();
    /* 256 x 256 pairs of length 600: ~2.4e10 cells, tens of seconds uncancelled; one item
     * of 64 pairs is ~2.3e7 cells. Valgrind (quick) runs ~50x slower: length 100. It also
     * serialises the threads, so with two of them the calling thread (the only one that
     * reports progress) can be kept off the CPU until the other has done every item: under
     * valgrind only the one-thread case runs; the native and ASan runs check both. */
    const int64_t n = 256, len = quick ? 100 : 600;
    /* within a second natively; the instrumented builds run the kernels several times
     * slower (sanitize.sh sets TSWARP_TEST_SANITIZE for the ASan run) */
    const double limit = quick ? 10.0 : getenv("TSWARP_TEST_SANITIZE") ? 5.0 : 1.0;
    double *v = make_values(n, len, 2);
    tsw_collection c = {v, NULL, NULL, len, n, NULL};
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    size_t bytes = sizeof(double) * (size_t)(n * n);
    unsigned char *out = malloc(bytes), *ref = malloc(bytes);
    memset(ref, SENTINEL_BYTE, bytes);
    for (int threads = 1; threads <= (quick ? 1 : 2); ++threads) {
        for (int op = 0; op < 3; ++op) {
            recorder r;
            recorder_init(&r);
            r.cancel_at_call = 1;
            tsw_exec e;
            tsw_exec_default(&e);
            e.device = TSW_DEVICE_CPU; /* the CPU driver's progress; the GPU's is in tests/gpu */
            e.n_threads = threads;
            e.progress = record;
            e.progress_user = &r;
            memset(out, SENTINEL_BYTE, bytes);
            double t0 = tsw_t_seconds();
            int rc = op == 0
                         ? tsw_cdist(&p, TSW_F64, 1, &c, &c, out, &e)
                         : tsw_pdist(&p, TSW_F64, 1, &c, (tsw_pdist_layout)(op - 1), out, &e);
            double t1 = tsw_t_seconds();
            CHECK_RC(rc, TSW_ECANCELED);
            CHECK(r.cancelled);
            if (r.cancelled) {
                CHECK(t1 - r.cancel_time < limit);
                CHECK(r.cancel_time - t0 >= 0.045); /* not before ~50 ms */
            }
            CHECK_EQ(r.calls_after_cancel, 0);
            CHECK(r.last_done < r.total); /* cancelled long before the end */
            CHECK(!r.wrong_thread);
        }
    }
    free(v);

    /* Cancelling on the final call (done == total) still cancels the whole call; what
     * was written is right. */
    const int64_t m = 20, mlen = 32;
    v = make_values(m, mlen, 3);
    tsw_collection s = {v, NULL, NULL, mlen, m, NULL};
    double *complete = malloc(sizeof(double) * (size_t)(m * m));
    for (int op = 0; op < 3; ++op) {
        int64_t count = op == 0 ? m * m : op == 1 ? m * m : m * (m - 1) / 2;
        CHECK_RC(
            op == 0 ? tsw_cdist(&p, TSW_F64, 1, &s, &s, complete, NULL)
                    : tsw_pdist(&p, TSW_F64, 1, &s, (tsw_pdist_layout)(op - 1), complete, NULL),
            TSW_OK);
        recorder r;
        recorder_init(&r);
        r.cancel_when_done = 1;
        tsw_exec e;
        tsw_exec_default(&e);
        e.device = TSW_DEVICE_CPU; /* the CPU driver's progress; the GPU's is in tests/gpu */
        e.progress = record;
        e.progress_user = &r;
        memset(out, SENTINEL_BYTE, bytes);
        int rc = op == 0 ? tsw_cdist(&p, TSW_F64, 1, &s, &s, out, &e)
                         : tsw_pdist(&p, TSW_F64, 1, &s, (tsw_pdist_layout)(op - 1), out, &e);
        CHECK_RC(rc, TSW_ECANCELED);
        CHECK(r.cancelled);
        CHECK_EQ(r.calls_after_cancel, 0);
        CHECK_EQ(garbage(out, complete, count), 0);
        CHECK(memcmp(out + count * (int64_t)sizeof(double), ref,
                     bytes - (size_t)count * sizeof(double)) == 0); /* nothing past the end */
    }
    free(complete);
    /* pdist of one series cancelled on its only call */
    recorder r;
    recorder_init(&r);
    r.cancel_at_call = 1;
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CPU; /* the CPU driver's progress; the GPU's is in tests/gpu */
    e.progress = record;
    e.progress_user = &r;
    s.count = 1;
    memset(out, SENTINEL_BYTE, bytes);
    CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &s, TSW_PDIST_FULL, out, &e), TSW_ECANCELED);
    CHECK_EQ(r.calls, 1);
    CHECK(memcmp(out + sizeof(double), ref, bytes - sizeof(double)) == 0);
    free(v);
    free(out);
    free(ref);
}

int main(void)
{
    test_complete();
    test_cancel();
    return TSW_TEST_END();
}
