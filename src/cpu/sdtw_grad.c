/*
 * Soft-DTW values and gradients on the CPU (tsw_soft_dtw_grad, tsw_soft_dtw_cost_grad):
 * the pair kernels of sdtw_grad_impl.h, run over the pairs of a batch with OpenMP, one
 * pair per thread at a time. The arguments were validated by src/sdtw_grad.c.
 *
 * Memory: the backward pass needs what the forward pass kept of every cell in the window
 * (the three soft-argmin probabilities, 24 bytes a cell, or for pairs past
 * TSW__SDG_PROB_BYTES the softmin S, 8 bytes: sdtw_grad_diag.h), so each thread holds one
 * workspace sized for the largest pair of the call (the self pairs (x, x) and (y, y) too
 * for the divergence), allocated in one block before any output is written (a failure
 * leaves the outputs untouched and says how many bytes were needed).
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/recurrence.h"
#include "../common/sdtw_grad.h"
#include "../internal.h"
#include "kernels.h"
#include "sdtw_grad_diag.h"

#include <math.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* The fast pair kernel: AVX2 (sdtw_grad_avx2.c) when the CPU has it, else scalar; one
 * workspace layout for both. */
#define TSW_V_ISA 0
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#include "sdtw_grad_diag_impl.h"
#undef TSW_V_DOUBLE
#undef TSW_V_ISA
#undef T

/* The AVX2 kernel runs in the linear domain (kernels.h, tsw__sdtw_lin_fits): the pair's
 * largest local cost bounds its exponents (arithmetic in double whatever the inputs). */
static int tsw__sdg_lin_fits(const tsw_params *p, const tsw__sdg_pair *pr)
{
    const tsw_dtype dt = pr->f32 ? TSW_F32 : TSW_F64;
    double cmax;
    if (pr->C) {
        cmax = 0;
        const size_t esz = pr->f32 ? sizeof(float) : sizeof(double);
        for (int64_t i = 0; i < pr->n; ++i) {
            const double r = tsw__absmax(dt, (const char *)pr->C + (size_t)(i * pr->ldc) * esz, pr->m);
            cmax = r > cmax ? r : cmax;
        }
    } else {
        const double s = tsw__absmax(dt, pr->x, pr->n * pr->dim) + tsw__absmax(dt, pr->y, pr->m * pr->dim);
        cmax = (double)pr->dim * s * s;
    }
    return tsw__sdtw_lin_fits(cmax, pr->n, pr->m, p->gamma, 0);
}

static double tsw__sdg_diag(const tsw_params *p, const tsw__sdg_pair *pr, void *ws)
{
#if TSW_X86
    if (tsw__cpu_level() >= 2 && tsw__sdg_lin_fits(p, pr))
        return tsw__sdg_diag_avx2_f64(p, pr, ws);
#endif
    return tsw__sdg_diag_scalar_f64(p, pr, ws);
}

/* Bytes of the fast kernel's workspace for one pair (0 on overflow). */
size_t tsw__sdg_diag_ws(const tsw_params *p, int64_t dim, int64_t n, int64_t m, int softmin)
{
    tsw_band band = tsw_band_make(p->window, p->window_radius, 0, n, m);
    size_t W = (size_t)m, cells, bytes;
    if (band.kind == TSW_BAND_DIAG && band.below + band.above + 1 < m)
        W = (size_t)(band.below + band.above + 1);
    tsw__sdg_layout lay;
    if (tsw__mul_size((size_t)n, W, &cells) || tsw__sdg_layout_make(dim, n, m, cells, softmin, &lay) ||
        tsw__mul_size(lay.total, sizeof(double), &bytes))
        return 0;
    return bytes;
}

#define T double
#define SFX f64
#define INF TSW_INF_F64
#define EXP exp
#include "sdtw_grad_impl.h"
#undef T
#undef SFX
#undef INF
#undef EXP

#define T float
#define SFX f32
#define INF TSW_INF_F32
#define EXP expf
#include "sdtw_grad_impl.h"
#undef T
#undef SFX
#undef INF
#undef EXP

#define TSW__SDG_PROGRESS_NS 50000000LL /* 50 ms */

/* One call: pairs of series (x, y) or cost matrices (cost). */
typedef struct {
    const tsw_params *p;
    tsw_dtype dt;
    int reference;
    int64_t dim;
    const tsw_collection *x, *y;
    const void *cost; /* (count, n, m) or NULL */
    int64_t n, m;     /* cost: the matrix shape */
    const int64_t *lx, *ly;
    void *values, *gx, *gy, *gc;
    int64_t count;
    const tsw_exec *ex;
    int64_t done; /* atomics */
    int status;
    tsw__cancel *cancel; /* polled inside the pairs when one thread computes them all */
} tsw__sdg_job;

static int64_t tsw__sdg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static size_t tsw__sdg_ws(const tsw__sdg_job *job, int64_t n, int64_t m)
{
    if (job->dt == TSW_F32)
        return job->reference ? sdg_ref_ws_f32(n, m) : sdg_fast_ws_f32(job->p, job->dim, n, m);
    return job->reference ? sdg_ref_ws_f64(n, m) : sdg_fast_ws_f64(job->p, job->dim, n, m);
}

static void tsw__sdg_lengths(const tsw__sdg_job *job, int64_t k, int64_t *n, int64_t *m)
{
    if (job->cost) {
        *n = job->lx ? job->lx[k] : job->n;
        *m = job->ly ? job->ly[k] : job->m;
    } else {
        *n = tsw__coll_len(job->x, k);
        *m = tsw__coll_len(job->y, k);
    }
}

/* Workspace bytes for the largest pair of the job (0 on overflow). */
static size_t tsw__sdg_max_ws(const tsw__sdg_job *job)
{
    size_t best = 0;
    for (int64_t k = 0; k < job->count; ++k) {
        int64_t n, m;
        tsw__sdg_lengths(job, k, &n, &m);
        size_t b = tsw__sdg_ws(job, n, m);
        if (b == 0)
            return 0;
        if (b > best)
            best = b;
        if (job->p->normalize) {
            size_t bx = tsw__sdg_ws(job, n, n), by = tsw__sdg_ws(job, m, m);
            if (bx == 0 || by == 0)
                return 0;
            best = bx > best ? bx : best;
            best = by > best ? by : best;
        }
    }
    return best;
}

#define TSW__SDG_PAIR(SFX, T)                                                                 \
    static void tsw__sdg_pair_##SFX(tsw__sdg_job *job, int64_t k, void *ws)                   \
    {                                                                                         \
        double (*kern)(const tsw_params *, int64_t, int64_t, int64_t, const T *, const T *,   \
                       const T *, int64_t, int, T, T *, T *, T *, void *, tsw__cancel *) =    \
            job->reference ? sdg_ref_##SFX : sdg_fast_##SFX;                                  \
        tsw__cancel *cx = job->cancel;                                                        \
        int64_t n, m, dim = job->dim;                                                         \
        tsw__sdg_lengths(job, k, &n, &m);                                                     \
        double v;                                                                             \
        if (job->cost) {                                                                      \
            size_t blk = (size_t)job->n * (size_t)job->m;                                     \
            const T *C = (const T *)job->cost + (size_t)k * blk;                              \
            T *gc = job->gc ? (T *)job->gc + (size_t)k * blk : NULL;                          \
            if (gc)                                                                           \
                memset(gc, 0, blk * sizeof(T));                                               \
            v = kern(job->p, 1, n, m, NULL, NULL, C, job->m, gc != NULL, 1, NULL, NULL, gc,   \
                     ws, cx);                                                                 \
        } else {                                                                              \
            size_t ox = (size_t)tsw__coll_off(job->x, k) * (size_t)dim;                       \
            size_t oy = (size_t)tsw__coll_off(job->y, k) * (size_t)dim;                       \
            const T *x = (const T *)job->x->values + ox, *y = (const T *)job->y->values + oy; \
            T *gx = job->gx ? (T *)job->gx + ox : NULL, *gy = job->gy ? (T *)job->gy + oy : NULL; \
            int want = gx || gy;                                                              \
            if (gx)                                                                           \
                memset(gx, 0, (size_t)n * (size_t)dim * sizeof(T));                           \
            if (gy)                                                                           \
                memset(gy, 0, (size_t)m * (size_t)dim * sizeof(T));                           \
            v = kern(job->p, dim, n, m, x, y, NULL, 0, want, 1, gx, gy, NULL, ws, cx);        \
            if (job->p->normalize) {                                                          \
                /* d/dx sdtw(x, x) takes both arguments' gradients: gx twice */              \
                double vx = kern(job->p, dim, n, n, x, x, NULL, 0, gx != NULL, (T)-0.5, gx,   \
                                 gx, NULL, ws, cx);                                           \
                double vy = kern(job->p, dim, m, m, y, y, NULL, 0, gy != NULL, (T)-0.5, gy,   \
                                 gy, NULL, ws, cx);                                           \
                v = v - 0.5 * (vx + vy);                                                      \
            }                                                                                 \
        }                                                                                     \
        ((T *)job->values)[k] = (T)v;                                                         \
    }
TSW__SDG_PAIR(f64, double)
TSW__SDG_PAIR(f32, float)

static int tsw__cpu_soft_dtw_run(tsw__sdg_job *job)
{
    size_t ws_bytes = tsw__sdg_max_ws(job), stride, total;
    if (ws_bytes == 0) {
        tsw__set_detail("soft-DTW gradient workspace size overflows");
        return TSW_EOVERFLOW;
    }
    int nt = tsw__threads(job->ex);
    if (job->count < nt)
        nt = (int)job->count;
    stride = (ws_bytes + 63) & ~(size_t)63;
    if (stride < ws_bytes || tsw__mul_size(stride, (size_t)nt, &total)) {
        tsw__set_detail("soft-DTW gradient workspace size overflows");
        return TSW_EOVERFLOW;
    }
    unsigned char *block = tsw__malloc_aligned(total);
    if (!block) {
        tsw__set_detail("the soft-DTW backward pass needs %zu bytes (%d thread%s x %zu bytes "
                        "for the largest pair)",
                        total, nt, nt > 1 ? "s" : "", stride);
        return TSW_ENOMEM;
    }
    job->done = 0;
    job->status = TSW_OK;
    /* One thread (one pair, or a single-threaded call): the calling thread computes every
     * pair and polls the progress callback inside them too (Ctrl-C stops a long pair). */
    tsw__cancel cancel;
    tsw__cancel_init(&cancel, job->ex, job->count);
    cancel.done_ref = &job->done;
    job->cancel = nt == 1 && job->ex->progress ? &cancel : NULL;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        void *ws = block + (size_t)tid * stride;
        int64_t last = tsw__sdg_now_ns();
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int64_t k = 0; k < job->count; ++k) {
            if (__atomic_load_n(&job->status, __ATOMIC_RELAXED) != TSW_OK)
                continue;
            if (job->dt == TSW_F32)
                tsw__sdg_pair_f32(job, k, ws);
            else
                tsw__sdg_pair_f64(job, k, ws);
            int64_t d = __atomic_add_fetch(&job->done, 1, __ATOMIC_RELAXED);
            if (tid == 0 && job->ex->progress) {
                int64_t now = tsw__sdg_now_ns();
                if (now - last >= TSW__SDG_PROGRESS_NS) {
                    last = now;
                    if (job->ex->progress(job->ex->progress_user, d, job->count))
                        __atomic_store_n(&job->status, TSW_ECANCELED, __ATOMIC_RELAXED);
                }
            }
        }
    }
    tsw__free_aligned(block);
    if (cancel.stopped)
        job->status = TSW_ECANCELED;
    if (job->status == TSW_OK && job->ex->progress &&
        job->ex->progress(job->ex->progress_user, job->count, job->count))
        job->status = TSW_ECANCELED;
    return job->status;
}

int tsw__cpu_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, const tsw_collection *y, void *values,
                           void *grad_x, void *grad_y, const tsw_exec *exec)
{
    tsw__sdg_job job;
    memset(&job, 0, sizeof(job));
    job.p = params;
    job.dt = dtype;
    /* the anti-diagonal kernel takes Sakoe-Chiba bands; Itakura runs on the reference */
    job.reference = exec->impl == TSW_IMPL_REFERENCE || params->window == TSW_WINDOW_ITAKURA;
    job.dim = dim;
    job.x = x;
    job.y = y;
    job.values = values;
    job.gx = grad_x;
    job.gy = grad_y;
    job.count = x->count;
    job.ex = exec;
    return tsw__cpu_soft_dtw_run(&job);
}

int tsw__cpu_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count,
                                int64_t n, int64_t m, const int64_t *lengths_x,
                                const int64_t *lengths_y, const void *cost, void *values,
                                void *grad_cost, const tsw_exec *exec)
{
    tsw__sdg_job job;
    memset(&job, 0, sizeof(job));
    job.p = params;
    job.dt = dtype;
    /* the anti-diagonal kernel takes Sakoe-Chiba bands; Itakura runs on the reference */
    job.reference = exec->impl == TSW_IMPL_REFERENCE || params->window == TSW_WINDOW_ITAKURA;
    job.dim = 1;
    job.cost = cost;
    job.n = n;
    job.m = m;
    job.lx = lengths_x;
    job.ly = lengths_y;
    job.values = values;
    job.gc = grad_cost;
    job.count = count;
    job.ex = exec;
    return tsw__cpu_soft_dtw_run(&job);
}
