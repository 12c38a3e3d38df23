/*
 * Helpers of a call that the dispatch layer and both backends share (as alloc.c is for
 * memory): the execution options' defaults, the details of the last failure, the thread
 * count of a CPU call, and the cancellation polls of long kernels. Nothing here knows a
 * measure or a device.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- details of the last failure (thread-local) ---------------------------------------- */

static _Thread_local char tsw__detail_buf[512];

void tsw__set_detail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tsw__detail_buf, sizeof(tsw__detail_buf), fmt, ap);
    va_end(ap);
}

void tsw__clear_detail(void) { tsw__detail_buf[0] = 0; }

const char *tsw_last_error_detail(void) { return tsw__detail_buf; }

int tsw_max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int64_t tsw__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define TSW__CANCEL_NS 50000000LL /* 50 ms between polls */

int tsw__poll_parallel(const tsw_exec *ex, int tid, int64_t *last, const int64_t *done,
                       int64_t total, int *status)
{
    if (tid == 0 && ex->progress) {
        int64_t now = tsw__now_ns();
        if (now - *last >= TSW__CANCEL_NS) {
            *last = now;
            if (ex->progress(ex->progress_user, __atomic_load_n(done, __ATOMIC_RELAXED), total))
                __atomic_store_n(status, TSW_ECANCELED, __ATOMIC_RELAXED);
        }
    }
    return __atomic_load_n(status, __ATOMIC_RELAXED) != TSW_OK;
}

void tsw__cancel_init(tsw__cancel *c, const tsw_exec *ex, int64_t total)
{
    c->fn = ex ? ex->progress : NULL;
    c->user = ex ? ex->progress_user : NULL;
    c->total = total;
    c->done_ref = NULL;
    c->next_ns = c->fn ? tsw__now_ns() + TSW__CANCEL_NS : 0;
    c->stopped = 0;
}

int tsw__cancel_poll(tsw__cancel *c, int64_t done)
{
    if (!c || !c->fn)
        return 0;
    if (c->stopped)
        return 1;
    int64_t now = tsw__now_ns();
    if (now < c->next_ns)
        return 0;
    c->next_ns = now + TSW__CANCEL_NS;
    if (c->done_ref)
        done = __atomic_load_n(c->done_ref, __ATOMIC_RELAXED);
    if (c->fn(c->user, done < c->total ? done : c->total, c->total))
        c->stopped = 1;
    return c->stopped;
}

/* The threads a CPU call runs: exec->n_threads (0: tsw_max_threads()), at most the
 * processors this process may use (omp_get_num_procs(): more threads only slow a call down,
 * and a count such as INT_MAX makes the OpenMP runtime overflow its stack or ask for
 * hundreds of GB), at least 1. */
int tsw__threads(const tsw_exec *ex)
{
#ifdef _OPENMP
    int nt = ex && ex->n_threads > 0 ? ex->n_threads : omp_get_max_threads();
    int procs = omp_get_num_procs();
    if (procs < 1)
        procs = 1;
    if (nt > procs)
        nt = procs;
    return nt < 1 ? 1 : nt;
#else
    (void)ex;
    return 1;
#endif
}

/* bytes from src to dst by up to threads threads (slices of 1 MiB and more): a copy into
 * page-locked staging runs at a fraction of memory's bandwidth on one thread. */
void tsw__memcpy_parallel(void *dst, const void *src, size_t bytes, int threads)
{
    const size_t slice = (size_t)1 << 20;
    int64_t parts = (int64_t)((bytes + slice - 1) / slice);
    if (threads > parts)
        threads = (int)parts;
    if (threads <= 1) {
        memcpy(dst, src, bytes);
        return;
    }
    const size_t per = (bytes / (size_t)threads + 63) & ~(size_t)63;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static, 1)
#endif
    for (int t = 0; t < threads; ++t) {
        const size_t lo = (size_t)t * per;
        if (lo < bytes)
            memcpy((char *)dst + lo, (const char *)src + lo, bytes - lo < per ? bytes - lo : per);
    }
}

/* The defaults of a call's execution options (tswarp.h): any device, every thread. */
void tsw_exec_default(tsw_exec *e)
{
    if (!e)
        return;
    memset(e, 0, sizeof(*e));
    e->n_threads = 0;
    e->device = TSW_DEVICE_AUTO;
    e->device_index = 0;
    e->impl = TSW_IMPL_AUTO;
}
