/*
 * Segmental DTW: NSDTW, WSDTW and SSDTW (tswarp.h "Segmental DTW"; Yang, Shaw
 * and Tsai, TASLP 2022, Fig. 3). The frame-level dynamic programming is the path kernels'
 * (cpu/path_impl.h): no DP loop of its own here.
 *
 *   pass 1   N x M tasks, fragment f against chunk c of b (columns [k0, k1) plus a left
 *            context of 2 (l_f - 1) columns, the widest a p05 path can span, so the values
 *            are exact): tsw__cpu_subseq_lastrow gives C[f][k0..k1) and, where they are
 *            needed, the start columns S[f][k0..k1) (propagated forward in the pass: the
 *            paper's T_seg without a backtrace from every end).
 *   segment  the end columns: NSDTW each row's minimum; WSDTW and SSDTW a DP over C
 *            (one byte of choice per cell, two rolling rows of E in double), read back from
 *            E[N-1][m-1]. Only SSDTW's DP reads S (at every column).
 *   starts   NSDTW and WSDTW need the start of the N chosen ends only. Carrying S through
 *            pass 1 costs a third or more of the pass (an int64 label per cell, read from
 *            one of three cells), so with the p05 geometry pass 1 computes C alone and each
 *            fragment's start comes from one more labelled pass over columns
 *            [e_f - 2 (l_f - 1), e_f] (the same context argument as the chunks': every
 *            path ending at e_f lies inside, so its values, codes and start are the full
 *            grid's). That pass is l_f (2 l_f - 1) cells against l_f m, so S is still
 *            carried when 2 (2 l - 1) > m (few long fragments), with SYMMETRIC1 (a path may
 *            span every column) and on the GPU (whose first pass finds the starts from its
 *            stored codes anyway).
 *   pass 2   N tasks: fragment f's path by tsw__cpu_dtw_path on a subsequence job whose
 *            reference is b[s_f .. e_f] (s_f the start of e_f): every candidate there is
 *            >= its value in the full grid and the path's own cells keep their values
 *            (their predecessors lie inside), so the first minimal candidate of each path
 *            cell, hence the path, is the first pass's.
 * Threads: whole tasks when there are at least as many as threads, else one task at a time
 * with all threads in its wavefront (path_impl.h). Progress: the tasks report to one shared
 * counter; the calling thread alone calls the user's callback (every ~50 ms), and its
 * verdict reaches every task through the counter's cancel flag.
 */
#include "segmental.h"

#include "common/path.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define TSW__SEG_PROGRESS_NS 50000000LL

/* ---- progress shared by the tasks ---------------------------------------------------------- */

typedef struct seg_shared {
    tsw_progress_fn fn;
    void *user;
    pthread_t caller;
    int64_t done, total; /* done: atomic */
    int64_t last_ns;     /* calling thread only */
    int cancel;          /* atomic */
    int threads_done;    /* atomic: team threads (not the caller) past a pass's loop */
} seg_shared;

typedef struct seg_task {
    seg_shared *sh;
    int64_t seen; /* cells this task has reported */
} seg_task;

static int64_t seg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Calling thread only: the user's callback with the shared count, at most every ~50 ms
 * (the first time at once); its verdict goes to the cancel flag. */
static void seg_report(seg_shared *sh)
{
    if (!sh->fn)
        return;
    int64_t now = seg_now_ns();
    if (now - sh->last_ns >= TSW__SEG_PROGRESS_NS) {
        sh->last_ns = now;
        int64_t d = __atomic_load_n(&sh->done, __ATOMIC_RELAXED);
        if (d >= sh->total)
            d = sh->total - 1;
        if (sh->fn(sh->user, d < 0 ? 0 : d, sh->total))
            __atomic_store_n(&sh->cancel, 1, __ATOMIC_RELAXED);
    }
}

/* The tasks' progress callback (tsw_progress_fn): adds the task's new cells, and on the
 * calling thread forwards the total to the user's callback. */
static int seg_progress(void *u, int64_t done, int64_t total)
{
    seg_task *tp = u;
    seg_shared *sh = tp->sh;
    (void)total;
    if (done > tp->seen) {
        __atomic_fetch_add(&sh->done, done - tp->seen, __ATOMIC_RELAXED);
        tp->seen = done;
    }
    if (pthread_equal(pthread_self(), sh->caller))
        seg_report(sh);
    return __atomic_load_n(&sh->cancel, __ATOMIC_RELAXED);
}

/* End of a pass's task loop (inside its parallel region, after the loop's nowait): the
 * other threads say they are done; the calling thread (the team's thread 0), which may
 * have run out of tasks early or run none, keeps reporting progress (at least once, and so
 * also taking a stop) until they are, so the callback and a cancel do not wait for the
 * slowest task. */
static void seg_after_loop(seg_shared *sh)
{
#ifdef _OPENMP
    const int nth = omp_get_num_threads();
    if (nth < 2)
        return;
    if (omp_get_thread_num() != 0) {
        __atomic_add_fetch(&sh->threads_done, 1, __ATOMIC_ACQ_REL);
        return;
    }
    for (;;) {
        seg_report(sh);
        if (__atomic_load_n(&sh->threads_done, __ATOMIC_ACQUIRE) >= nth - 1)
            break;
        struct timespec ts = {0, 1000000}; /* 1 ms */
        nanosleep(&ts, NULL);
    }
    __atomic_store_n(&sh->threads_done, 0, __ATOMIC_RELAXED); /* all others are past it */
#else
    (void)sh;
#endif
}

/* A task loop's skip test: a task failed or the callback asked to stop. */
static int seg_stopped(int *status, seg_shared *sh)
{
    return __atomic_load_n(status, __ATOMIC_RELAXED) ||
           __atomic_load_n(&sh->cancel, __ATOMIC_RELAXED);
}

/* After a pass: a stop the callback asked for is the call's status even if every task
 * finished before it could see the flag. */
static int seg_status(int status, seg_shared *sh)
{
    if (!status && __atomic_load_n(&sh->cancel, __ATOMIC_RELAXED))
        return TSW_ECANCELED;
    return status;
}

/* A task's job: fragment rows [r0, r0 + l) of a against columns [c0, c0 + w) of b. */
static tsw__path_job seg_job(const tsw__path_job *base, int64_t r0, int64_t l, int64_t c0,
                             int64_t w, int threads, seg_task *tp, size_t esz)
{
    tsw__path_job j = *base;
    j.subseq = 1;
    j.n = l;
    j.m = w;
    j.a = (const char *)base->a + (size_t)(r0 * base->dim) * esz;
    j.b = (const char *)base->b + (size_t)(c0 * base->dim) * esz;
    j.lo = j.hi = NULL;
    j.n_threads = threads;
    j.progress = tp->sh->fn ? seg_progress : NULL;
    j.progress_user = tp;
    return j;
}

/* The first error of any task wins. */
static void seg_fail(int *status, int rc)
{
    int zero = 0;
    if (rc)
        __atomic_compare_exchange_n(status, &zero, rc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* ---- checks before any work ------------------------------------------------------------------ */

int tsw__segmental_check(int step, tsw_segmental variant, int64_t n, int64_t m,
                         int64_t n_fragments)
{
    const int64_t N = n_fragments;
    if (N < 1 || N > n) {
        tsw__set_detail("n_fragments must be in [1, len(a)] (n_fragments = %lld, len(a) = %lld)",
                        (long long)N, (long long)n);
        return TSW_EPARAM;
    }
    const int64_t lmin = n / N, lmax = (n + N - 1) / N;
    if (step != TSW_STEP_SYMMETRIC1 && lmin < 2) {
        tsw__set_detail("with the p05 steps every fragment needs 2 points or more: "
                        "n_fragments <= len(a) / 2 (n_fragments = %lld, len(a) = %lld)",
                        (long long)N, (long long)n);
        return TSW_EPARAM;
    }
    if (!tsw_path_subseq_reachable(step, lmax, m)) {
        tsw__set_detail("a fragment of %lld points does not fit b of %lld points with the p05 "
                        "steps (it needs len(b) >= (points + 1) / 2)",
                        (long long)lmax, (long long)m);
        return TSW_ENOPATH;
    }
    if (variant == TSW_SEGMENTAL_NONE)
        return TSW_OK;
    int64_t need = 0;
    for (int64_t f = 0; f < N; ++f) {
        int64_t l = tsw__seg_row(n, N, f + 1) - tsw__seg_row(n, N, f);
        need += tsw__seg_span(step, l) - (variant == TSW_SEGMENTAL_STRICT);
    }
    if (variant == TSW_SEGMENTAL_STRICT)
        need += 1;
    if (need > m) {
        tsw__set_detail("b (%lld points) is too short for %lld ordered fragments: they need "
                        "%lld columns at least",
                        (long long)m, (long long)N, (long long)need);
        return TSW_ENOPATH;
    }
    return TSW_OK;
}

/* ---- the frame-level passes: CPU kernels, or the GPU's (cuda/path.cu) ---------------------- */

#ifdef TSWARP_WITH_CUDA
/* The GPU's exec for a task: the caller's device and stream, the task's progress. */
static tsw_exec seg_cuda_exec(const tsw_exec *cuda, const tsw__path_job *jb)
{
    tsw_exec e = *cuda;
    e.progress = jb->progress;
    e.progress_user = jb->progress_user;
    return e;
}
#endif

static int seg_lastrow(const tsw__path_job *jb, tsw_dtype dtype, int64_t from, double *cost,
                       int64_t *start, const tsw_exec *cuda)
{
#ifdef TSWARP_WITH_CUDA
    if (cuda) {
        tsw_exec e = seg_cuda_exec(cuda, jb);
        return tsw__cuda_subseq_lastrow(jb, dtype, &e, from, cost, start);
    }
#endif
    (void)cuda;
    return tsw__cpu_subseq_lastrow(jb, dtype, from, cost, start);
}

static int seg_path(const tsw__path_job *jb, const tsw_align_params *ap, tsw_dtype dtype,
                    int64_t *path, int64_t *length, double *cost, const tsw_exec *cuda)
{
#ifdef TSWARP_WITH_CUDA
    if (cuda) {
        tsw_exec e = seg_cuda_exec(cuda, jb);
        return tsw__cuda_dtw_path(jb, ap, dtype, &e, path, length, cost);
    }
#endif
    (void)cuda;
    (void)ap;
    return tsw__cpu_dtw_path(jb, dtype, path, length, cost);
}

/* ---- the call ---------------------------------------------------------------------------------- */

/* cuda: NULL for the CPU; else the GPU does every frame-level pass (one task at a time, one
 * chunk per fragment: the results are the same for every M) and the host the segment DP. */
static int seg_run(const tsw__path_job *job, const tsw_align_params *ap, tsw_dtype dtype,
                   tsw_segmental variant, int64_t n_fragments, int64_t n_chunks, int64_t *path,
                   int64_t *length, tsw_match *segments, const tsw_exec *cuda)
{
    const int64_t n = job->n, m = job->m, N = n_fragments;
    const int step = job->step;
    const int nt = cuda || job->n_threads < 1 ? 1 : job->n_threads;
    const size_t esz = tsw__dtype_size(dtype);
    const int64_t lmax = (n + N - 1) / N;
    int status = TSW_OK;

    /* M: p05 paths span at most 2 (l - 1) + 1 columns, so a chunk of b needs only that much
     * context; SYMMETRIC1 paths can span everything. Auto: about two tasks per thread,
     * chunks at least 8 spans wide so the context stays a small overhead. */
    int64_t M = 1;
    if (step != TSW_STEP_SYMMETRIC1 && !cuda) {
        if (n_chunks > 0) {
            M = n_chunks;
        } else if (nt > 1 && N < 2 * (int64_t)nt) {
            M = (2 * (int64_t)nt + N - 1) / N;
            int64_t wide = m / (8 * (2 * lmax - 1));
            if (M > wide)
                M = wide;
        }
        if (M > m)
            M = m;
        if (M < 1)
            M = 1;
    }

    /* S for every column only where it is needed (file comment, "starts") */
    const int carry = cuda || step == TSW_STEP_SYMMETRIC1 || variant == TSW_SEGMENTAL_STRICT ||
                      2 * (2 * lmax - 1) > m;

    size_t cells, bytes_c, bytes_s;
    if (tsw__mul_size((size_t)N, (size_t)m, &cells) ||
        tsw__mul_size(cells, sizeof(double), &bytes_c) ||
        tsw__mul_size(cells, sizeof(int64_t), &bytes_s))
        return TSW_EOVERFLOW;
    double *C = tsw__malloc(bytes_c);
    int64_t *S = carry ? tsw__malloc(bytes_s) : NULL;
    uint8_t *choice = variant != TSW_SEGMENTAL_NONE ? tsw__malloc(cells) : NULL;
    double *E = tsw__malloc(sizeof(double) * 2 * (size_t)m);
    /* ends, offs, lens, caps, starts */
    int64_t *ends = tsw__malloc(sizeof(int64_t) * 5 * (size_t)N);
    int64_t *tmp = NULL;
    if (!C || (carry && !S) || (variant != TSW_SEGMENTAL_NONE && !choice) || !E || !ends) {
        status = TSW_ENOMEM;
        goto done;
    }
    int64_t *offs = ends + N, *lens = ends + 2 * N, *caps = ends + 3 * N, *starts = ends + 4 * N;

    seg_shared sh;
    memset(&sh, 0, sizeof(sh));
    sh.fn = job->progress;
    sh.user = job->progress_user;
    sh.caller = pthread_self();
    /* pass 1's cells, the starts' passes, and pass 2 as if every fragment spanned the
     * widest it can */
    for (int64_t f = 0; f < N; ++f) {
        int64_t l = tsw__seg_row(n, N, f + 1) - tsw__seg_row(n, N, f);
        int64_t w = step == TSW_STEP_SYMMETRIC1 ? m : (2 * l - 1 < m ? 2 * l - 1 : m);
        sh.total += l * m + l * w * (carry ? 1 : 2);
    }

    /* ---- pass 1: C and S, N x M tasks ---- */
    {
        const int64_t T = N * M;
        const int outer = T >= nt ? nt : 1, inner = T >= nt ? 1 : nt;
#ifdef _OPENMP
#pragma omp parallel num_threads(outer) if (outer > 1)
#endif
        {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) nowait
#endif
            for (int64_t t = 0; t < T; ++t) {
                if (seg_stopped(&status, &sh))
                    continue;
                const int64_t f = t / M, c = t % M;
                const int64_t r0 = tsw__seg_row(n, N, f), l = tsw__seg_row(n, N, f + 1) - r0;
                const int64_t k0 = (int64_t)(((__int128)c * m) / M);
                const int64_t k1 = (int64_t)(((__int128)(c + 1) * m) / M);
                if (k1 <= k0)
                    continue;
                int64_t c0 = k0 - 2 * (l - 1);
                if (M == 1 || c0 < 0)
                    c0 = 0;
                seg_task tp = {&sh, 0};
                tsw__path_job jb = seg_job(job, r0, l, c0, k1 - c0, inner, &tp, esz);
                int rc = seg_lastrow(&jb, dtype, k0 - c0, C + f * m + k0,
                                     carry ? S + f * m + k0 : NULL, cuda);
                if (rc) {
                    seg_fail(&status, rc);
                    continue;
                }
                if (carry)
                    for (int64_t j = k0; j < k1; ++j)
                        if (S[f * m + j] >= 0)
                            S[f * m + j] += c0;
            }
            seg_after_loop(&sh);
        }
        status = seg_status(status, &sh);
        if (status)
            goto done;
    }

    /* ---- the end columns ---- */
    if (variant == TSW_SEGMENTAL_NONE) {
        for (int64_t f = 0; f < N; ++f) {
            const double *Cf = C + f * m;
            int64_t best = 0;
            for (int64_t j = 1; j < m; ++j)
                if (Cf[j] < Cf[best])
                    best = j;
            ends[f] = best; /* finite: tsw__segmental_check made every fragment fit */
        }
    } else {
        double *prev = E, *cur = E + m;
        for (int64_t f = 0; f < N; ++f) {
            const int64_t l = tsw__seg_row(n, N, f + 1) - tsw__seg_row(n, N, f);
            const int64_t d = tsw__seg_span(step, l);
            const double *Cf = C + f * m;
            const int64_t *Sf = carry ? S + f * m : NULL; /* read by SSDTW only (carry) */
            uint8_t *ch = choice + f * m;
            for (int64_t j = 0; j < m; ++j) {
                double best = j > 0 ? cur[j - 1] : TSW_INF_F64, pv;
                if (f == 0) {
                    pv = 0.0;
                } else {
                    int64_t k = variant == TSW_SEGMENTAL_WEAK ? j - d : Sf[j];
                    pv = k >= 0 ? prev[k] : TSW_INF_F64;
                }
                double cand = pv + Cf[j];
                uint8_t take = 0;
                if (cand < best) { /* the skip wins ties */
                    best = cand;
                    take = 1;
                }
                cur[j] = best;
                ch[j] = take;
            }
            double *sw = prev;
            prev = cur;
            cur = sw;
        }
        if (!(prev[m - 1] < TSW_INF_F64)) {
            if (variant == TSW_SEGMENTAL_STRICT)
                tsw__set_detail("no ordered placement of the fragments: every end column's "
                                "optimal start lies before the previous fragment can end (the "
                                "strict ordering of SSDTW admits none here; variant='weak' "
                                "allows short backward jumps)");
            else
                tsw__set_detail("no ordered placement of the fragments: their minimal spans "
                                "do not fit b in order");
            status = TSW_ENOPATH;
            goto done;
        }
        int64_t j = m - 1;
        for (int64_t f = N - 1; f >= 0; --f) {
            while (!choice[f * m + j])
                --j; /* a finite E ends in a taken cell at some column >= 0 */
            ends[f] = j;
            if (f > 0) {
                const int64_t l = tsw__seg_row(n, N, f + 1) - tsw__seg_row(n, N, f);
                j = variant == TSW_SEGMENTAL_WEAK ? j - tsw__seg_span(step, l) : S[f * m + j];
            }
        }
    }

    /* ---- the chosen ends' start columns ---- */
    if (carry) {
        for (int64_t f = 0; f < N; ++f)
            starts[f] = S[f * m + ends[f]];
    } else {
        /* the p05 geometry: one labelled pass per fragment over the 2 l - 1 columns that
         * end at e (file comment, "starts") */
        const int outer = N >= nt ? nt : 1, inner = N >= nt ? 1 : nt;
#ifdef _OPENMP
#pragma omp parallel num_threads(outer) if (outer > 1)
#endif
        {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) nowait
#endif
            for (int64_t f = 0; f < N; ++f) {
                if (seg_stopped(&status, &sh))
                    continue;
                const int64_t r0 = tsw__seg_row(n, N, f), l = tsw__seg_row(n, N, f + 1) - r0;
                const int64_t e = ends[f];
                const int64_t c0 = e - 2 * (l - 1) > 0 ? e - 2 * (l - 1) : 0;
                seg_task tp = {&sh, 0};
                tsw__path_job jb = seg_job(job, r0, l, c0, e - c0 + 1, inner, &tp, esz);
                double c = 0;
                int64_t s = -1;
                int rc = seg_lastrow(&jb, dtype, e - c0, &c, &s, cuda);
                if (!rc && s < 0)
                    rc = TSW_ENOPATH; /* not reached: C[f][e] is finite, so is this pass's */
                if (rc) {
                    seg_fail(&status, rc);
                    continue;
                }
                starts[f] = c0 + s;
            }
            seg_after_loop(&sh);
        }
        status = seg_status(status, &sh);
        if (status)
            goto done;
    }

    /* ---- pass 2: each fragment's path over its own columns ---- */
    {
        int64_t used = 0;
        for (int64_t f = 0; f < N; ++f) {
            const int64_t l = tsw__seg_row(n, N, f + 1) - tsw__seg_row(n, N, f);
            offs[f] = used;
            caps[f] = l + ends[f] - starts[f]; /* l + width - 1 */
            used += caps[f];
        }
        tmp = tsw__malloc(sizeof(int64_t) * 2 * (size_t)used);
        if (!tmp) {
            status = TSW_ENOMEM;
            goto done;
        }
        const int outer = N >= nt ? nt : 1, inner = N >= nt ? 1 : nt;
#ifdef _OPENMP
#pragma omp parallel num_threads(outer) if (outer > 1)
#endif
        {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1) nowait
#endif
            for (int64_t f = 0; f < N; ++f) {
                if (seg_stopped(&status, &sh))
                    continue;
                const int64_t r0 = tsw__seg_row(n, N, f), l = tsw__seg_row(n, N, f + 1) - r0;
                const int64_t e = ends[f], s = starts[f];
                seg_task tp = {&sh, 0};
                tsw__path_job jb = seg_job(job, r0, l, s, e - s + 1, inner, &tp, esz);
                double cost = 0;
                int rc = seg_path(&jb, ap, dtype, tmp + 2 * offs[f], &lens[f], &cost, cuda);
                if (rc) {
                    seg_fail(&status, rc);
                    continue;
                }
                int64_t *q = tmp + 2 * offs[f];
                for (int64_t p = 0; p < lens[f]; ++p) {
                    q[2 * p] += r0;
                    q[2 * p + 1] += s;
                }
            }
            seg_after_loop(&sh);
        }
        status = seg_status(status, &sh);
        if (status)
            goto done;
    }

    if (sh.fn)
        sh.fn(sh.user, sh.total, sh.total); /* the end: the work is done, a stop is moot */
    {
        int64_t at = 0;
        for (int64_t f = 0; f < N; ++f) {
            memcpy(path + 2 * at, tmp + 2 * offs[f], sizeof(int64_t) * 2 * (size_t)lens[f]);
            if (segments) {
                segments[f].start = starts[f];
                segments[f].end = ends[f];
                segments[f].cost = C[f * m + ends[f]];
                segments[f].path_offset = at;
                segments[f].path_length = lens[f];
            }
            at += lens[f];
        }
        *length = at;
    }
done:
    tsw__free(C);
    tsw__free(S);
    tsw__free(choice);
    tsw__free(E);
    tsw__free(ends);
    tsw__free(tmp);
    return status;
}

int tsw__segmental(const tsw__path_job *job, const tsw_align_params *params, tsw_dtype dtype,
                   const tsw_exec *gpu, tsw_segmental variant, int64_t n_fragments,
                   int64_t n_chunks, int64_t *path, int64_t *length, tsw_match *segments)
{
#ifndef TSWARP_WITH_CUDA
    if (gpu)
        return TSW_ENODEV;
#endif
    return seg_run(job, params, dtype, variant, n_fragments, gpu ? 1 : n_chunks, path, length,
                   segments, gpu);
}
