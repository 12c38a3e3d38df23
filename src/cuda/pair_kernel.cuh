/*
 * The one-long-pair kernel (device code; its host side, tsw__pair_scratch_bytes and
 * tsw__pair_launch, is kernels_pair.cu, contract in kernels.h): one long pair with every SM
 * on it, one persistent kernel, no launch or host sync per anti-diagonal.
 *
 * Grid of the pair: outer points x = 0..N-1 (rows, series A) against inner points
 * j = 0..M-1 (columns, series B); A = a, B = b, except for the Itakura window, where
 * band.swap = 1 puts b on the rows (band.h; the recurrences are symmetric). D(x, j) is the
 * reference's cell (x+1, j+1); the padded boundary is D(-1,-1) = 0 and +inf elsewhere on
 * row -1 and column -1. Cells outside the window are +inf.
 *
 * Decomposition (R rows x C columns per lane and step: shape_r/shape_c below, 4 x 8,
 * 2 x 8, 1 x 8, 2 x 4 or 2 x 2):
 *   The columns are cut into S stripes of W = 32 C columns. A warp (one warp per block)
 *   owns a stripe and sweeps its rows in a skewed register-blocked wavefront: at step t
 *   lane k computes the R x C block of rows x0 = rb + R (t - k) .. x0 + R - 1 and of its
 *   columns j0 = sW + kC .. j0 + C - 1. The previous row of its C columns lives in
 *   registers (TWED also the local match terms L), the left column of its block (R values,
 *   row x0 + r) is what lane k-1 computed at step t-1 for the same rows: one
 *   __shfl_up_sync per row; the diagonal D(x0 - 1, j0 - 1) is the last value received one
 *   step earlier. Inside the block the R x C cells are straight-line code: its dependency
 *   DAG has R + C - 1 levels, so a lane has ~R-fold independent work per level.
 *   Lane 0 takes its left column from the left stripe (see "boundary queues"), read from
 *   shared memory one step ahead; lane 31's right column is the stripe's output, staged in
 *   shared memory (the other lanes store to spare slots, so a step has no branch). A
 *   lane's rows come from padded row tables (values, TWED times and deletion costs,
 *   written by prep_kernel with kPad clamped copies on each side), so a step loads them
 *   through pointers that move R rows a step, without clamping indices.
 * Rows: a stripe runs over rows [rb, re) only (the rows whose window meets its columns;
 *   both band ends are non-decreasing in the row, so these are found by warp-wide
 *   searches), and tests cells against the row's window only in the chunks of steps that
 *   touch a row that does not cover all W columns ([fa, fb) covers them all). Rows below
 *   rb are +inf by construction (lane 0 feeds +inf for them), rows at or after re are
 *   never read. For the Sakoe-Chiba band a stripe does O(W + band width) rows.
 * Persistent grid: P = min(S, resident warps) one-warp blocks (occupancy x SMs, launched
 *   cooperatively so that all are co-resident); warp w takes the stripes w, w + P,
 *   w + 2P, ... in order ("rounds").
 * Boundary queues (global scratch, linear memory): warp w sends its stripe's right column
 *   (D, and L for TWED) to warp w + 1 through a single-producer single-consumer queue
 *   with monotone 64-bit sequence numbers: item (stripe s, row x) is number
 *   base_s + (x - rb_s), where base_s sums the lengths of the producer's earlier stripes
 *   (both sides compute it), in slot number mod capacity. Counters per queue: written
 *   (producer) and released (consumer). Queue w < P-1 holds kRing items (1024: with
 *   128 the producer often waited for slots); queue P-1 (the
 *   last warp of a round to warp 0 of the next round) holds >= 2N items.
 *   The rows go in chunks of 32 (NB = 32 / R steps). At the start of chunk j the warp
 *   stores the chunk's input rows (one item per lane, prefetched into registers half a
 *   chunk earlier; else it waits for them and loads them now) to shared memory, copies
 *   the <= 32 output rows completed since the last chunk from the staging buffer to the
 *   queue (waiting for back-pressure only if the cached released counter says the slots
 *   may still be in use) and issues relaxed loads of both counters. In the middle of the
 *   chunk it runs one fence.acq_rel.gpu (by then the copies' stores have completed, so it
 *   is cheap), which releases those stores and the item loads issued so far and acquires
 *   the polled counters; then it publishes written and released and prefetches chunk
 *   j + 1 if the polled written counter covers it. Waits spin with __nanosleep backoff.
 *   In steady state a stripe runs ~56-72 steps behind its left neighbour (31 for the
 *   skew, the rest for the chunk and the counter latency), so the fill of the wavefront
 *   costs ~S x 64 steps and the sweep N / R steps.
 * Deadlock freedom: every wait is for (a) data of the left stripe, (b) the consumer of an
 *   earlier item to release a slot. A consumer publishes all it has consumed before it
 *   waits for data, and capacity >= 4 chunks, so a producer never waits for a consumer
 *   that waits for it. Back-pressure edges only point from a stripe to the next stripe of
 *   the same round, or to a stripe of an earlier round (queue P-1: capacity >= 2N, so its
 *   producer only waits for warp 0's stripes of earlier rounds). Take the lowest
 *   unfinished stripe: its warp runs it, its input is complete, and the chain of
 *   back-pressure waits to its right ends at a stripe that can move. All warps are
 *   co-resident (cooperative launch), so the kernel always finishes. A watchdog (60 s in
 *   one wait) turns a bug into *out = NaN instead of a hang.
 * Memory: O(N + M + P) scratch: two int64 counters per warp, the queues (P x kRing items,
 *   plus >= 2N for queue P-1 when S > P), the padded row tables, TWED deletion costs of
 *   both series, Itakura's per-row window ends. Never the N x M matrix.
 * Tuning knobs (developers; read once per process): TSWARP_CUDA_PAIR_SHAPE=RxC (builds
 *   with -DTSWARP_CUDA_TUNING=ON),
 *   TSWARP_CUDA_PAIR_RING=items, TSWARP_CUDA_PAIR_SLEEP=ns (see dev/pair_shapes.py).
 *
 * Arithmetic: the cells use recurrence.h's macros with non-contracting intrinsics
 *   (__fadd_rn, __fmul_rn: nvcc would fuse d*d + x into FMAs, which the CPU reference on
 *   baseline x86-64 does not); local costs are cost.h's at dim 1 (the square d*d written
 *   with __fmul_rn) or loops in cost.h's order for dim > 1 (non-fused). TWED groups its
 *   terms as the fast CPU kernels do (TSW_TWED_DEL_COST precomputed per point, boundary
 *   point 0 at time 0, default times 1..n, TSW_TWED_LOCAL, TSW_TWED_MATCH). Soft-DTW uses
 *   TSW_SOFTMIN3_SORTED (the minimum factored out, expf/logf, no fast intrinsics).
 *   float32 accumulates in plain float, exactly like the CPU backend that results are
 *   compared with: a cell is a sum of nonnegative terms along one path, the error grows
 *   like sqrt(path length) ulps, and the same operations in the same order give the same
 *   roundings (DTW and TWED values are bitwise the CPU's in the emulated tests), so a
 *   compensated sum would only move the GPU away from the CPU value. Itakura's window ends
 *   come from band.h on the device (prep_kernel), where ptxas may fuse its a*b + c unless
 *   the file is compiled with -fmad=false (an edge moves only if a value lands within an
 *   ulp of a rounding boundary).
 * Cell updates: the cells of rows [rb, re) x W of every stripe (for no window N x S W);
 *   GCUPS counts n x m.
 */
#pragma once

#include "cuda/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <type_traits>

#include "common/tsw_hd.h"

#include "common/band.h"
#include "common/cost.h"
#include "common/recurrence.h"

namespace tsw_pair {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kChunk = 32; /* rows per chunk: one queue item per lane (16 also works)  */
constexpr int kStage = 64; /* output staging slots (rows): the chunk in copy + the next */
constexpr int kPad = 512;  /* rows of padding on each side of the row tables (> 34 R)   */
constexpr int kRing = 1024; /* default items per queue between warps of a round (power of 2);
                              * 128 made neighbours wait on each other (bench/RESULTS.md) */
constexpr long long kWatchdogNs = 60LL * 1000 * 1000 * 1000;

enum { M_DTW = 0, M_TWED = 1, M_SOFT = 2 };
/* Local cost variants. dim == 1: SQE/EUC/ABS/COS (DTW), LP12 (TWED, p = 1 or 2: |a - b|),
 * LPP (TWED, other p). dim > 1: RT (DTW, cost chosen at run time), LP12 / LPP (TWED, p = 1
 * or 2 / other p: pow only compiled into LPP), SQE (soft). */
enum { KC_SQE = 0, KC_EUC = 1, KC_ABS = 2, KC_COS = 3, KC_RT = 4, KC_LP12 = 5, KC_LPP = 6 };

/* Rows and columns of a lane's block per step (the "shape"), chosen on the H100 by
 * dev/pair_shapes.py (bench/RESULTS.md): at dim 1, 4 x 8 for float32 DTW, 2 x 8 for float32
 * TWED (p = 1, 2), 1 x 8 for float64 DTW and TWED (p = 1, 2: float64 cells are long chains,
 * and one row per step keeps a lane's chain to one add and one min per cell), 2 x 4 for TWED
 * with another p; 2 x 2 where a cell costs many instructions (soft-DTW, dim > 1). */
__host__ __device__ constexpr int shape_r(bool f32, int meas, int kc, bool dim1)
{
    return !dim1 || meas == M_SOFT              ? 2
           : meas == M_DTW                      ? (f32 ? 4 : 1)
           : meas == M_TWED && kc == KC_LP12    ? (f32 ? 2 : 1)
                                                : 2;
}
__host__ __device__ constexpr int shape_c(bool f32, int meas, int kc, bool dim1)
{
    return !dim1 || meas == M_SOFT              ? 2
           : meas == M_DTW                      ? 8
           : meas == M_TWED && kc == KC_LP12    ? 8
                                                : 4;
}

struct Args {
    const void *a, *b, *ta, *tb; /* rows' series (A), columns' series (B), after the swap */
    int64_t N, M, dim;
    tsw_band band;
    int cost;
    double nu, lmbda, p, gamma, inv_gamma;
    float nu_f, lmbda_f, p_f, gamma_f, inv_gamma_f; /* the same, rounded as the CPU does */
    int P;                                            /* warps = blocks                   */
    int64_t S, W;                                     /* stripes, stripe width            */
    long long *ctr;   /* [P][8]: [8q] written, [8q + 4] released of queue q              */
    int *abort_flag;  /* watchdog                                                        */
    int sleep_ns;     /* longest back-off sleep of a wait (0: spin)                      */
    void *ringD, *ringL; /* [P][kRing] (queue P-1 uses wrap*)                             */
    void *wrapD, *wrapL; /* [wrap_cap]                                                    */
    long long wrap_cap;  /* power of two >= max(2N, ring)                                 */
    long long ring;      /* items per queue between warps of a round (power of two)       */
    long long *lohi;     /* Itakura: [N][2] window ends of each row, else NULL            */
    void *da, *db;       /* TWED: deletion costs of A's (padded like rows_a) and B's points */
    void *rows_a;        /* dim 1: [N + 2 kPad], entry i = A[clamp(i - kPad)]               */
    void *rows_t;        /* TWED: the same for A's times (default times 1..N)              */
    void *out;
};

template <typename T> struct Ops;

template <> struct Ops<float> {
    static __device__ __forceinline__ float inf() { return TSW_INF_F32; }
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ __forceinline__ float mn(float a, float b) { return fminf(a, b); }
    static __device__ __forceinline__ float mx(float a, float b) { return fmaxf(a, b); }
    static __device__ __forceinline__ float fabs_(float a) { return fabsf(a); }
    static __device__ __forceinline__ float sqrt_(float a) { return __fsqrt_rn(a); }
    static __device__ __forceinline__ float div_(float a, float b) { return __fdiv_rn(a, b); }
    static __device__ __forceinline__ float exp_(float a) { return expf(a); }
    static __device__ __forceinline__ float log_(float a) { return logf(a); }
    static __device__ __forceinline__ float pow_(float a, float b) { return powf(a, b); }
    static __device__ __forceinline__ float lpp(const float *x, const float *y, int64_t dim, float p)
    {
        return tsw_lpp_f32(x, 1, y, 1, dim, p);
    }
    static __device__ __forceinline__ float lp(const float *x, const float *y, int64_t dim,
                                               float p)
    {
        return tsw_lp_f32(x, y, dim, p);
    }
    static __device__ __forceinline__ float cosine(const float *x, const float *y, int64_t dim)
    {
        return tsw_cost_cosine_f32(x, y, dim);
    }
    static __device__ __forceinline__ float ld_strong(const float *p)
    {
        float v;
        asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
        return v;
    }
};

template <> struct Ops<double> {
    static __device__ __forceinline__ double inf() { return TSW_INF_F64; }
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    /* tsw_hd.h's TSW_MIN/TSW_MAX, as the CPU: fmin's NaN handling costs 4 extra SASS
     * instructions per call on sm_90 (no NaN reaches a cell: inputs are checked) */
    static __device__ __forceinline__ double mn(double a, double b) { return TSW_MIN(a, b); }
    static __device__ __forceinline__ double mx(double a, double b) { return TSW_MAX(a, b); }
    static __device__ __forceinline__ double fabs_(double a) { return fabs(a); }
    static __device__ __forceinline__ double sqrt_(double a) { return __dsqrt_rn(a); }
    static __device__ __forceinline__ double div_(double a, double b) { return __ddiv_rn(a, b); }
    static __device__ __forceinline__ double exp_(double a) { return exp(a); }
    static __device__ __forceinline__ double log_(double a) { return log(a); }
    static __device__ __forceinline__ double pow_(double a, double b) { return pow(a, b); }
    static __device__ __forceinline__ double lpp(const double *x, const double *y, int64_t dim, double p)
    {
        return tsw_lpp_f64(x, 1, y, 1, dim, p);
    }
    static __device__ __forceinline__ double lp(const double *x, const double *y, int64_t dim,
                                                double p)
    {
        return tsw_lp_f64(x, y, dim, p);
    }
    static __device__ __forceinline__ double cosine(const double *x, const double *y,
                                                    int64_t dim)
    {
        return tsw_cost_cosine_f64(x, y, dim);
    }
    static __device__ __forceinline__ double ld_strong(const double *p)
    {
        double v;
        asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
        return v;
    }
};

/* Parameters in the compute precision, rounded as the CPU kernels round them. */
template <typename T> struct Par {
    T nu, lmbda, p, gamma, inv_gamma;
};
__device__ __forceinline__ void load_par(const Args &g, Par<float> *q)
{
    q->nu = g.nu_f;
    q->lmbda = g.lmbda_f;
    q->p = g.p_f;
    q->gamma = g.gamma_f;
    q->inv_gamma = g.inv_gamma_f;
}
__device__ __forceinline__ void load_par(const Args &g, Par<double> *q)
{
    q->nu = g.nu;
    q->lmbda = g.lmbda;
    q->p = g.p;
    q->gamma = g.gamma;
    q->inv_gamma = g.inv_gamma;
}

/* ---- inter-warp synchronisation --------------------------------------------------------- */

__device__ __forceinline__ long long ld_ctr(const long long *p)
{
    long long v;
    asm volatile("ld.relaxed.gpu.global.s64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_ctr(long long *p, long long v)
{
    asm volatile("st.relaxed.gpu.global.s64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ int ld_flag(const int *p)
{
    int v;
    asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_flag(int *p, int v)
{
    asm volatile("st.relaxed.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* Orders this thread's earlier loads and stores before its later ones at GPU scope: the
 * release of queue items (item stores or loads, __syncwarp, then lane 0's fence and counter
 * store) and the acquire of counters (lane 0's relaxed load observed, its fence, then
 * __syncwarp before any lane's item loads or slot overwrites). */
__device__ __forceinline__ void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Waits until *ctr >= need; lane 0 polls, every lane gets the value it saw (uniform), or -1
 * when the watchdog fired here or elsewhere (the kernel then gives up). The caller follows
 * with acquire_warp(). Not inlined: waits are rare and the loop would only add registers. */
__device__ __noinline__ long long wait_geq(const long long *ctr, long long need, int *abort_flag,
                                           int sleep_max)
{
    long long v = 0;
    if ((threadIdx.x & 31) == 0) {
        v = ld_ctr(ctr);
        unsigned ns = 32;
        unsigned it = 0;
        const unsigned long long t0 = v < need ? global_ns() : 0;
        while (v < need) {
            if (sleep_max > 0) {
                __nanosleep(ns);
                if ((int)ns < sleep_max)
                    ns <<= 1;
            }
            v = ld_ctr(ctr);
            if ((++it & 63) == 0 && v < need) {
                if (ld_flag(abort_flag)) {
                    v = -1;
                    break;
                }
                if (global_ns() - t0 > (unsigned long long)kWatchdogNs) {
                    st_flag(abort_flag, 1);
                    v = -1;
                    break;
                }
            }
        }
    }
    return __shfl_sync(kFull, v, 0);
}

/* Acquire for the whole warp after lane 0 observed a counter with a relaxed load: lane 0's
 * fence (the acquire), then the warp barrier that orders it before every lane's later
 * accesses. Every lane runs the fence, which also makes it a release of their earlier
 * accesses for lane 0's following counter stores. */
__device__ __forceinline__ void acquire_warp()
{
    fence_gpu();
    __syncwarp();
}

/* ---- windows ------------------------------------------------------------------------------ */

/* Admissible columns [lo, hi) of row x (any x: rows outside [0, N) give some finite range,
 * only used for cells whose value does not matter). */
__device__ __forceinline__ void row_window(const Args &g, const tsw_band &band, int64_t x,
                                           int64_t *lo, int64_t *hi)
{
    if (band.kind == TSW_BAND_ITAKURA) {
        const int64_t xc = x < 0 ? 0 : (x >= g.N ? g.N - 1 : x);
        *lo = __ldg(g.lohi + 2 * xc);
        *hi = __ldg(g.lohi + 2 * xc + 1);
    } else if (band.kind == TSW_BAND_DIAG) {
        tsw_band_range(&band, x, lo, hi); /* integer arithmetic only for this kind */
    } else {
        *lo = 0;
        *hi = g.M;
    }
}

/* First x in [lo, hi) with pred(x) (pred monotone: false ... false true ... true), or hi;
 * a 32-ary search by the whole warp (uniform result). */
template <class Pred>
__device__ __forceinline__ int64_t warp_first(int64_t lo, int64_t hi, int lane, Pred pred)
{
    while (hi - lo > 32) {
        const int64_t step = (hi - lo + 31) / 32;
        const int64_t x = lo + (int64_t)(lane + 1) * step - 1;
        const bool p = x >= hi ? true : pred(x);
        const unsigned m = __ballot_sync(kFull, p);
        if (m == 0)
            return hi;
        const int f = __ffs(m) - 1;
        const int64_t xf = lo + (int64_t)(f + 1) * step - 1;
        lo = lo + (int64_t)f * step;
        hi = xf < hi ? xf : hi;
    }
    const int64_t x = lo + lane;
    const bool p = x >= hi ? true : pred(x);
    const unsigned m = __ballot_sync(kFull, p);
    return m ? lo + (__ffs(m) - 1) : hi;
}

/*
 * Rows of the stripe of columns [c0, c1): [rb, re) = the rows whose window may meet it
 * (rows before rb end at or before c0, rows from re on start at or after c1); [fa, fb) =
 * the rows whose window covers all of [c0, c1) (fa >= rb, fb <= re). Both window ends are
 * non-decreasing in the row for every window kind.
 */
__device__ __forceinline__ void stripe_rows(const Args &g, const tsw_band &band, int64_t c0,
                                            int lane, int64_t *rb, int64_t *re, int64_t *fa,
                                            int64_t *fb)
{
    const int64_t N = g.N, c1 = c0 + g.W < g.M ? c0 + g.W : g.M;
    if (band.kind == TSW_BAND_NONE) {
        *rb = 0;
        *re = N;
        if (fa) {
            *fa = 0;
            *fb = N;
        }
        return;
    }
    *rb = warp_first(0, N, lane, [&](int64_t x) {
        int64_t l, h;
        row_window(g, band, x, &l, &h);
        return h > c0;
    });
    *re = warp_first(*rb, N, lane, [&](int64_t x) {
        int64_t l, h;
        row_window(g, band, x, &l, &h);
        return l >= c1;
    });
    if (fa) {
        *fa = warp_first(*rb, *re, lane, [&](int64_t x) {
            int64_t l, h;
            row_window(g, band, x, &l, &h);
            return h >= c1;
        });
        *fb = warp_first(*fa, *re, lane, [&](int64_t x) {
            int64_t l, h;
            row_window(g, band, x, &l, &h);
            return l > c0;
        });
    }
}

/* ---- local costs -------------------------------------------------------------------------- */

/* dim == 1: cost.h's functions at dim 1 (sqeuclidean = d*d, with a non-fused product);
 * TWED: the local match term L = |a - b|_p + nu |ta - tb| (tsw_lp at dim 1 is |a - b|
 * for p = 1 and 2). */
template <typename T, int MEAS, int KC>
__device__ __forceinline__ T cost1(const Par<T> &q, T x, T y, T tx, T ty)
{
    using O = Ops<T>;
    if constexpr (MEAS == M_TWED) {
        T lp;
        if constexpr (KC == KC_LP12)
            lp = O::fabs_(x - y);
        else
            lp = O::lp(&x, &y, 1, q.p);
        return TSW_TWED_LOCAL(lp, q.nu, O::fabs_(tx - ty), O::add, O::mul);
    } else if constexpr (KC == KC_ABS) {
        return O::fabs_(x - y);
    } else if constexpr (KC == KC_COS) {
        return O::cosine(&x, &y, 1);
    } else {
        const T d = x - y;
        const T s = O::mul(d, d);
        return KC == KC_EUC ? O::sqrt_(s) : s;
    }
}

/*
 * dim > 1: the local costs of one row (point pa of A) against the lane's C columns (points
 * pb[c] of B), in cost.h's order of the dims with non-fused arithmetic. nyy[c] =
 * sqrt(<b_j, b_j>) for the cosine cost. form: 0 sum of squares, 1 sum of |d|, 2 sum of
 * |d|^p, 3 cosine.
 */
template <typename T, int MEAS, int KC, int C>
__device__ __forceinline__ void costs_gen(const Par<T> &q, int form, bool root, int64_t dim,
                                          const T *pa, const T *const (&pb)[C],
                                          const T (&nyy)[C], T tav, const T (&tbv)[C],
                                          T (&cc)[C])
{
    using O = Ops<T>;
    T s[C];
#pragma unroll
    for (int c = 0; c < C; ++c)
        s[c] = T(0);
    if (form == 0) {
        for (int64_t k = 0; k < dim; ++k) {
            const T x = __ldg(pa + k);
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const T d = x - __ldg(pb[c] + k);
                s[c] = O::add(s[c], O::mul(d, d));
            }
        }
    } else if (form == 1) {
        for (int64_t k = 0; k < dim; ++k) {
            const T x = __ldg(pa + k);
#pragma unroll
            for (int c = 0; c < C; ++c)
                s[c] = O::add(s[c], O::fabs_(x - __ldg(pb[c] + k)));
        }
    } else if (KC == KC_LPP && form == 2) { /* pow only in the general-p variant */
        /* cost.h's tsw_lpp (scaled by the largest component), root taken */
#pragma unroll
        for (int c = 0; c < C; ++c)
            s[c] = O::lpp(pa, pb[c], dim, q.p);
    } else {
        /* tsw_cost_cosine: 0 if both points are zero, 1 if one is, else 1 - xy / (|x||y|) */
        T xx = T(0);
        for (int64_t k = 0; k < dim; ++k) {
            const T x = __ldg(pa + k);
            xx = O::add(xx, O::mul(x, x));
#pragma unroll
            for (int c = 0; c < C; ++c)
                s[c] = O::add(s[c], O::mul(x, __ldg(pb[c] + k)));
        }
        const T nx = O::sqrt_(xx);
#pragma unroll
        for (int c = 0; c < C; ++c) {
            T v;
            if (xx == T(0) && nyy[c] == T(0))
                v = T(0);
            else if (xx == T(0) || nyy[c] == T(0))
                v = T(1);
            else
                v = T(1) - O::div_(s[c], O::mul(nx, nyy[c]));
            s[c] = v;
        }
    }
    if constexpr (MEAS == M_TWED) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            T lp = s[c];
            if (form == 0)
                lp = O::sqrt_(lp); /* dim > 1: tsw_lp's SQRT(s) */
            cc[c] = TSW_TWED_LOCAL(lp, q.nu, O::fabs_(tav - tbv[c]), O::add, O::mul);
        }
    } else {
#pragma unroll
        for (int c = 0; c < C; ++c)
            cc[c] = root ? O::sqrt_(s[c]) : s[c];
    }
}

/* tsw_lp with non-fused arithmetic (y NULL: the zero point), for TWED's deletion costs. */
template <typename T>
__device__ __forceinline__ T lp_nf(const T *x, const T *y, int64_t dim, T p)
{
    using O = Ops<T>;
    T s = 0;
    if (p == T(2)) {
        for (int64_t k = 0; k < dim; ++k) {
            const T d = x[k] - (y ? y[k] : T(0));
            s = O::add(s, O::mul(d, d));
        }
        return dim == 1 ? O::fabs_(x[0] - (y ? y[0] : T(0))) : O::sqrt_(s);
    }
    if (p == T(1)) {
        for (int64_t k = 0; k < dim; ++k)
            s = O::add(s, O::fabs_(x[k] - (y ? y[k] : T(0))));
        return s;
    }
    return O::lpp(x, y, dim, p);
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* Resets the counters and the watchdog, writes +inf to *out (the value when the last cell
 * is outside the window), and fills the per-point tables: Itakura's window ends of each
 * row, TWED's deletion costs (point 0 = the zero vector at time 0; default times 1..n). */
template <typename T>
__global__ void prep_kernel(const Args g, int twed)
{
    using O = Ops<T>;
    Par<T> q;
    load_par(g, &q);
    const int64_t N = g.N, M = g.M, dim = g.dim, NP = N + 2 * kPad;
    int64_t lim = NP > M ? NP : M;
    lim = lim > g.P ? lim : (int64_t)g.P;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const tsw_band band = g.band;
    const T *A = (const T *)g.a, *B = (const T *)g.b, *TA = (const T *)g.ta, *TB = (const T *)g.tb;
    /* TWED deletion cost of point i of a series (values v, times t or NULL) */
    auto del = [&](const T *v, const T *t, int64_t i) {
        const T *x = v + i * dim, *xp = i > 0 ? x - dim : nullptr;
        const T t1 = t ? t[i] : (T)(i + 1);
        const T t0 = i > 0 ? (t ? t[i - 1] : (T)i) : T(0);
        return TSW_TWED_DEL_COST(lp_nf(x, xp, dim, q.p), q.nu, t1 - t0, q.lmbda, O::add, O::mul);
    };
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < lim; i += stride) {
        if (i < g.P) {
            g.ctr[8 * i] = 0;
            g.ctr[8 * i + 4] = 0;
        }
        if (i == 0) {
            *g.abort_flag = 0;
            *(T *)g.out = O::inf();
        }
        if (g.lohi && i < N) {
            int64_t lo, hi;
            tsw_band_range(&band, i, &lo, &hi);
            g.lohi[2 * i] = lo;
            g.lohi[2 * i + 1] = hi;
        }
        if (i < NP) { /* padded row tables: entry i is row clamp(i - kPad) */
            int64_t x = i - kPad;
            x = x < 0 ? 0 : (x >= N ? N - 1 : x);
            if (dim == 1)
                ((T *)g.rows_a)[i] = A[x];
            if (twed) {
                ((T *)g.rows_t)[i] = TA ? TA[x] : (T)(x + 1);
                ((T *)g.da)[i] = del(A, TA, x);
            }
        }
        if (twed && i < M)
            ((T *)g.db)[i] = del(B, TB, i);
    }
}

/* The wavefront (see the header comment). One warp per block; blockIdx.x = warp w. */
template <typename T, int MEAS, int KC, bool DIM1, int R, int C, int CH>
__global__ void __launch_bounds__(32, 8) pair_kernel(const Args g)
{
    using O = Ops<T>;
    constexpr bool TW = MEAS == M_TWED;
    constexpr int NV = TW ? 2 : 1;
    constexpr int NB = CH / R; /* steps per chunk */
    static_assert(CH % R == 0 && kStage % R == 0 && kStage >= 2 * CH, "shape");
    static_assert(NB % 2 == 0 && CH <= 32, "chunk: one item per lane, a mid step");

    __shared__ __align__(16) T s_in[2][NV][CH]; /* lane 0's left column, 2 chunks */
    /* lane 31's right column, staged; the other lanes' stores go to slots kStage + lane */
    __shared__ __align__(16) T s_st[NV][kStage + 32];

    const int lane = threadIdx.x;
    const int w = blockIdx.x;
    const int P = g.P;
    const int64_t N = g.N, M = g.M, S = g.S, W = g.W, dim = g.dim;
    const T inf = O::inf();
    const tsw_band band = g.band;
    const bool banded = band.kind != TSW_BAND_NONE;
    Par<T> q;
    load_par(g, &q);
    const T *A = (const T *)g.a, *B = (const T *)g.b;
    const T *TB = (const T *)g.tb;
    const T *DB = (const T *)g.db;
    /* row tables: any row in [-kPad, N + kPad) may be read without a clamp */
    const T *const PA = DIM1 ? (const T *)g.rows_a + kPad : nullptr;
    const T *const PT = TW ? (const T *)g.rows_t + kPad : nullptr;
    const T *const PD = TW ? (const T *)g.da + kPad : nullptr;
    /* dim > 1: form of the cost loop (see costs_gen) and the root of the Euclidean cost */
    int form = 0;
    bool root = false;
    if constexpr (!DIM1) {
        if (MEAS == M_DTW) {
            form = g.cost == TSW_COST_ABS ? 1 : g.cost == TSW_COST_COSINE ? 3 : 0;
            root = g.cost == TSW_COST_EUCLIDEAN;
        } else if (MEAS == M_TWED) {
            form = q.p == T(2) ? 0 : q.p == T(1) ? 1 : 2;
        }
    }
    (void)form;
    (void)root;
    (void)dim;

    /* Queues: in = from the warp on the left (warp P-1 for warp 0: the previous round),
     * out = to the warp on the right. The same two queues for all stripes of this warp. */
    const int qin = w == 0 ? P - 1 : w - 1, qout = w;
    long long *const cin_w = g.ctr + 8 * (int64_t)qin, *const cin_r = cin_w + 4;
    long long *const cout_w = g.ctr + 8 * (int64_t)qout, *const cout_r = cout_w + 4;
    const bool in_wrap = qin == P - 1, out_wrap = qout == P - 1;
    const T *const rinD = in_wrap ? (const T *)g.wrapD : (const T *)g.ringD + (int64_t)qin * g.ring;
    const T *const rinL = in_wrap ? (const T *)g.wrapL : (const T *)g.ringL + (int64_t)qin * g.ring;
    T *const routD = out_wrap ? (T *)g.wrapD : (T *)g.ringD + (int64_t)qout * g.ring;
    T *const routL = out_wrap ? (T *)g.wrapL : (T *)g.ringL + (int64_t)qout * g.ring;
    const long long mask_in = (in_wrap ? g.wrap_cap : g.ring) - 1;
    const long long mask_out = (out_wrap ? g.wrap_cap : g.ring) - 1;
    const long long cap_out = mask_out + 1;

    /* Counter caches (monotone counters, valid across stripes). */
    long long avail = 0; /* written of the input queue, as last seen              */
    long long relc = 0;  /* released of the output queue, as last seen            */
    long long pollW = 0, pollR = 0; /* relaxed loads issued one chunk earlier      */
    long long relp = 0;  /* released value this warp last stored                   */
    long long in_base = 0, out_base = 0;

    for (int64_t s = w; s < S; s += P) {
        const int64_t c0 = s * W;
        int64_t rb, re, fa, fb, rbp = 0, rep = 0;
        stripe_rows(g, band, c0, lane, &rb, &re, &fa, &fb);
        if (s > 0)
            stripe_rows(g, band, c0 - W, lane, &rbp, &rep, nullptr, nullptr);
        const int64_t len = re - rb, lenp = rep - rbp;
        const bool has_in = s > 0, has_out = s < S - 1;
        const int64_t lim = rep < re ? rep : re; /* input rows needed: [rbp, lim) */

        /* Input rows before rb - 1 are never read: release them now. */
        if (has_in) {
            int64_t x = rb - 1;
            x = x < rbp ? rbp : (x > rep ? rep : x);
            const long long rl = in_base + (x - rbp);
            if (rl > relp) {
                if (lane == 0)
                    st_ctr(cin_r, rl);
                relp = rl;
            }
        }

        if (len > 0) {
            const int64_t j0 = c0 + (int64_t)lane * C;
            /* the lane's columns (clamped: columns >= M compute values nobody reads) */
            T bv[C], tbv[C], dbv[C], nyy[C];
            const T *pb[C];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const int64_t j = j0 + c < M ? j0 + c : M - 1;
                bv[c] = T(0);
                tbv[c] = T(0);
                dbv[c] = T(0);
                nyy[c] = T(0);
                pb[c] = B + j * dim;
                if constexpr (DIM1)
                    bv[c] = __ldg(B + j);
                if constexpr (TW) {
                    tbv[c] = TB ? __ldg(TB + j) : (T)(j + 1);
                    dbv[c] = __ldg(DB + j);
                }
                if constexpr (!DIM1 && MEAS == M_DTW) {
                    if (form == 3) {
                        T yy = T(0);
                        for (int64_t k = 0; k < dim; ++k) {
                            const T y = __ldg(pb[c] + k);
                            yy = O::add(yy, O::mul(y, y));
                        }
                        nyy[c] = O::sqrt_(yy);
                    }
                }
            }
            (void)bv;
            (void)nyy;

            /* Registers of the wavefront. */
            T pD[C], pL[C];      /* row x0 - 1 of the lane's columns (TWED: and L)     */
            T lastD[R], lastL[R]; /* the lane's last column of its previous block      */
            T dgD = inf, dgL = T(0); /* D, L at (x0 - 1, j0 - 1)                        */
#pragma unroll
            for (int c = 0; c < C; ++c) {
                pD[c] = inf;
                pL[c] = T(0);
            }
#pragma unroll
            for (int r = 0; r < R; ++r) {
                lastD[r] = inf;
                lastL[r] = T(0);
            }
            if (s == 0 && lane == 0 && rb == 0)
                dgD = T(0); /* D(-1,-1) */

            /* Row data of the next step, loaded one step ahead through pointers that move
             * R rows a step (row x0 = rb + R (t - lane) at step t). */
            T an[R], tan_[R], dan[R];
            const T *ra = nullptr, *rt = nullptr, *rd = nullptr;
            {
                const int64_t x = rb - (int64_t)R * lane;
                if constexpr (DIM1)
                    ra = PA + x;
                if constexpr (TW) {
                    rt = PT + x;
                    rd = PD + x;
                }
            }
            auto load_rows = [&]() {
                /* rows >= rb - 31 R and < re + 33 R: inside the padding */
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    an[r] = T(0);
                    tan_[r] = T(0);
                    dan[r] = T(0);
                    if constexpr (DIM1)
                        an[r] = __ldg(ra + r);
                    if constexpr (TW) {
                        tan_[r] = __ldg(rt + r);
                        dan[r] = __ldg(rd + r);
                    }
                }
            };
            load_rows();

            /* The cell that holds the result: last stripe, column M - 1, row N - 1, in
             * lane kf's block at step t_fin (the same for the whole warp; -1: none). */
            int64_t t_fin = -1;
            int rf = 0, cf = 0, kf = -1;
            if (s == S - 1 && N - 1 >= rb && N - 1 < re) {
                const int64_t jm = M - 1 - c0;
                kf = (int)(jm / C);
                cf = (int)(jm % C);
                rf = (int)((N - 1 - rb) % R);
                t_fin = kf + (N - 1 - rb) / R;
            }

            /* Lane 0's left column for the next step (every lane loads the same shared
             * slots: a broadcast), read one step ahead; the boundary loads a chunk's first. */
            T preD[R], preL[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                preD[r] = inf;
                preL[r] = T(0);
            }

            /* Consumer state: pf* = the lane's item of the next chunk (prefetched). */
            T pfD = inf, pfL = T(0);
            bool have_pref = false;
            int64_t loaded_hi = rb - 1; /* input rows below were loaded (or are unneeded) */
            /* Producer state: output rows [rb, copied) are in the queue. */
            int64_t copied = rb;
            long long pub = out_base;

            auto need_seq = [&](int64_t xlo, int64_t xhi) -> long long {
                /* written count that covers the input rows of [xlo, xhi); 0 = none needed */
                const int64_t first = xlo > rbp ? xlo : rbp;
                const int64_t last = (xhi < lim ? xhi : lim) - 1;
                if (!has_in || first > last)
                    return 0;
                return in_base + (last - rbp) + 1;
            };
            auto load_item = [&](int64_t x, T *vD, T *vL) {
                if (has_in && x >= rbp && x < lim) {
                    const long long slot = (in_base + (x - rbp)) & mask_in;
                    *vD = O::ld_strong(rinD + slot);
                    *vL = TW ? O::ld_strong(rinL + slot) : T(0);
                } else {
                    *vD = inf;
                    *vL = T(0);
                }
            };

            /* Start of chunk j (before step j NB): its input rows into shared memory
             * (prefetched at the previous mid-chunk step, else waited for and loaded now),
             * the output rows completed so far into the queue, polls of both counters. */
            auto boundary = [&](int64_t j) -> bool {
                const int64_t t = j * NB;
                const int buf = (int)(j & 1);
                if (!have_pref) { /* chunk j (and for j = 0 the diagonal row rb - 1) */
                    const int64_t xlo = j == 0 ? rb - 1 : rb + CH * j;
                    const long long need = need_seq(xlo, rb + CH * (j + 1));
                    if (need > avail) { /* all earlier input rows are released already */
                        const long long v = wait_geq(cin_w, need, g.abort_flag, g.sleep_ns);
                        if (v < 0)
                            return false;
                        avail = v;
                        acquire_warp();
                    }
                    if (lane < CH)
                        load_item(rb + CH * j + lane, &pfD, &pfL);
                    if (j == 0 && has_in) {
                        T d, l;
                        load_item(rb - 1, &d, &l);
                        if (lane == 0) {
                            dgD = d;
                            dgL = l;
                        }
                    }
                    loaded_hi = rb + CH * (j + 1);
                }
                if (lane < CH) {
                    s_in[buf][0][lane] = pfD;
                    if (TW)
                        s_in[buf][NV - 1][lane] = pfL;
                }
                have_pref = false;
                if (has_out) { /* copy the output rows completed before step t */
                    int64_t comp = rb + (int64_t)R * (t - 31);
                    comp = comp < rb ? rb : (comp > re ? re : comp);
                    if (comp > copied) {
                        const long long qend = out_base + (comp - rb);
                        if (qend - cap_out > relc) {
                            const long long v = wait_geq(cout_r, qend - cap_out, g.abort_flag, g.sleep_ns);
                            if (v < 0)
                                return false;
                            relc = v;
                            acquire_warp();
                        }
                        __syncwarp();
                        const int64_t x = copied + lane;
                        if (x < comp) {
                            const int slot = (int)((x - rb) & (kStage - 1));
                            const long long qs = (out_base + (x - rb)) & mask_out;
                            routD[qs] = s_st[0][slot];
                            if (TW)
                                routL[qs] = s_st[NV - 1][slot];
                        }
                        copied = comp;
                    }
                }
                if (lane == 0) { /* read at the mid-chunk step, NB / 2 steps later */
                    if (has_in)
                        pollW = ld_ctr(cin_w);
                    if (has_out)
                        pollR = ld_ctr(cout_r);
                }
                __syncwarp();
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    preD[r] = s_in[buf][0][r];
                    preL[r] = TW ? s_in[buf][NV - 1][r] : T(0);
                }
                return true;
            };

            /* Middle of chunk j (before step j NB + NB / 2): one fence, which releases the
             * item stores of the boundary and the item loads issued so far and acquires the
             * polled counters; then publish written and released, and prefetch chunk j + 1
             * if it is known to be written. No waits here. */
            auto mid = [&](int64_t j) {
                pollW = __shfl_sync(kFull, pollW, 0);
                pollR = __shfl_sync(kFull, pollR, 0);
                if (has_in)
                    avail = pollW > avail ? pollW : avail;
                if (has_out)
                    relc = pollR > relc ? pollR : relc;
                acquire_warp();
                if (has_out) {
                    const long long cs = out_base + (copied - rb);
                    if (cs > pub) {
                        if (lane == 0)
                            st_ctr(cout_w, cs);
                        pub = cs;
                    }
                }
                if (has_in) {
                    const int64_t x = loaded_hi < rbp ? rbp : (loaded_hi > rep ? rep : loaded_hi);
                    const long long rl = in_base + (x - rbp);
                    if (rl > relp) {
                        if (lane == 0)
                            st_ctr(cin_r, rl);
                        relp = rl;
                    }
                }
                const long long need = need_seq(rb + CH * (j + 1), rb + CH * (j + 2));
                if (need <= avail) {
                    if (lane < CH)
                        load_item(rb + CH * (j + 1) + lane, &pfD, &pfL);
                    have_pref = true;
                    loaded_hi = rb + CH * (j + 2);
                }
                __syncwarp();
            };

            /* One step: the lane's R x C block of rows x0.., MK: test the cells against
             * the rows' windows, FIN: the step that holds the result (t == t_fin). The
             * common step has no branch: lane 0's input is prefetched, lane 31's staging
             * store is unconditional (other lanes write spare slots). */
            auto step = [&](auto mk, auto fin, int64_t t, int tt, int buf) {
                constexpr bool MK = decltype(mk)::value;
                constexpr bool FIN = decltype(fin)::value;
                T inD[R], inL[R];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    inD[r] = __shfl_up_sync(kFull, lastD[r], 1);
                    inL[r] = TW ? __shfl_up_sync(kFull, lastL[r], 1) : T(0);
                    if (lane == 0) {
                        inD[r] = preD[r];
                        inL[r] = preL[r];
                    }
                    /* the next step's (a chunk's last step reads a spare slot: the
                     * boundary reloads these) */
                    const int nx = R * (tt + 1) + r < CH ? R * (tt + 1) + r : CH - 1;
                    preD[r] = s_in[buf][0][nx];
                    preL[r] = TW ? s_in[buf][NV - 1][nx] : T(0);
                }
                T av[R], tv[R], dv[R];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    av[r] = an[r];
                    tv[r] = tan_[r];
                    dv[r] = dan[r];
                }
                if constexpr (DIM1)
                    ra += R;
                if constexpr (TW) {
                    rt += R;
                    rd += R;
                }
                load_rows();
                int mlo[R], mhi[R];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    mlo[r] = 0;
                    mhi[r] = C;
                    if constexpr (MK) {
                        const int64_t x0 = rb + (int64_t)R * (t - lane);
                        int64_t lo, hi;
                        row_window(g, band, x0 + r, &lo, &hi);
                        lo -= j0;
                        hi -= j0;
                        mlo[r] = (int)(lo < 0 ? 0 : (lo > C ? C : lo));
                        mhi[r] = (int)(hi < 0 ? 0 : (hi > C ? C : hi));
                    }
                }
                T cc[R][C];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if constexpr (DIM1) {
#pragma unroll
                        for (int c = 0; c < C; ++c)
                            cc[r][c] = cost1<T, MEAS, KC>(q, av[r], bv[c], tv[r], tbv[c]);
                    } else {
                        int64_t x = rb + (int64_t)R * (t - lane) + r;
                        x = x < 0 ? 0 : (x >= N ? N - 1 : x);
                        costs_gen<T, MEAS, KC, C>(q, form, root, dim, A + x * dim, pb, nyy,
                                                  tv[r], tbv, cc[r]);
                    }
                }
                T cD[R][C], cL[R][C];
#pragma unroll
                for (int r = 0; r < R; ++r) {
#pragma unroll
                    for (int c = 0; c < C; ++c) {
                        const T up = r == 0 ? pD[c] : cD[r - 1][c];
                        const T left = c == 0 ? inD[r] : cD[r][c - 1];
                        const T diag = r == 0 ? (c == 0 ? dgD : pD[c - 1])
                                              : (c == 0 ? inD[r - 1] : cD[r - 1][c - 1]);
                        T v;
                        if constexpr (TW) {
                            const T ldiag = r == 0 ? (c == 0 ? dgL : pL[c - 1])
                                                   : (c == 0 ? inL[r - 1] : cL[r - 1][c - 1]);
                            const T match = TSW_TWED_MATCH(diag, cc[r][c], ldiag, O::add);
                            const T dela = O::add(up, dv[r]), delb = O::add(left, dbv[c]);
                            v = TSW_TWED_CELL(dela, delb, match, O::mn);
                        } else if constexpr (MEAS == M_SOFT) {
                            const T x1 = O::mn(diag, up), hi3 = O::mx(diag, up);
                            const T lo3 = O::mn(x1, left), mid3 = O::mx(x1, left);
                            const T sm = TSW_SOFTMIN3_SORTED(lo3, mid3, hi3, q.gamma,
                                                             q.inv_gamma, T(1), O::add, O::sub,
                                                             O::mul, O::exp_, O::log_);
                            v = lo3 == inf ? inf : O::add(cc[r][c], sm);
                        } else {
                            v = TSW_DTW_CELL(cc[r][c], diag, up, left, O::mn);
                        }
                        if constexpr (MK)
                            v = (c >= mlo[r] && c < mhi[r]) ? v : inf;
                        cD[r][c] = v;
                        cL[r][c] = TW ? cc[r][c] : T(0);
                    }
                }
                dgD = inD[R - 1];
                dgL = inL[R - 1];
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    pD[c] = cD[R - 1][c];
                    pL[c] = cL[R - 1][c];
                }
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    lastD[r] = cD[r][C - 1];
                    lastL[r] = cL[r][C - 1];
                }
                /* lane 31: the stripe's right column, rows rb + R (t - 31) + r of the
                 * stripe; the other lanes (and rows outside [rb, re)) store to spares */
                if (has_out) {
                    const int64_t xr = (int64_t)R * (t - 31);
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const bool ok = lane == 31 && xr + r >= 0 && xr + r < len;
                        const int slot = ok ? (int)((xr + r) & (kStage - 1)) : kStage + lane;
                        s_st[0][slot] = cD[r][C - 1];
                        if (TW)
                            s_st[NV - 1][slot] = cL[r][C - 1];
                    }
                }
                if constexpr (FIN) {
                    if (lane == kf) {
                        T v = inf;
#pragma unroll
                        for (int r = 0; r < R; ++r)
#pragma unroll
                            for (int c = 0; c < C; ++c)
                                if (r == rf && c == cf)
                                    v = cD[r][c];
                        *(T *)g.out = v;
                    }
                }
            };

            /* Steps 0 .. Tn-1 (lane 31 computes the last rows at step Tn - 1), in chunks
             * of NB steps with a boundary step before and a mid step in the middle. */
            const int64_t Tn = 32 + (len - 1) / R;
            auto run_steps = [&](int64_t t0, int64_t t1, int64_t j) {
                const int buf = (int)(j & 1);
                /* rows of any lane during these steps: [rb + R (t0 - 31), rb + R t1) */
                const int64_t slo = rb + (int64_t)R * (t0 - 31), shi = rb + (int64_t)R * t1;
                const bool mk = banded && ((rb < fa && slo < fa && shi > rb) ||
                                           (fb < re && shi > fb && slo < re));
                /* t0 .. t1 - 1, the step t_fin (if in there) with FIN */
                auto steps = [&](auto mkc) {
                    const int n = (int)(t1 - t0), tt0 = (int)(t0 - j * NB);
                    const int nf = t_fin >= t0 && t_fin < t1 ? (int)(t_fin - t0) : n;
                    int i = 0;
                    for (int seg = 0; seg < 2; ++seg) { /* one loop body for both parts */
                        const int e = seg == 0 ? nf : n;
                        for (; i < e; ++i)
                            step(mkc, std::false_type(), t0 + i, tt0 + i, buf);
                        if (seg == 0 && nf < n) {
                            step(mkc, std::true_type(), t0 + nf, tt0 + nf, buf);
                            ++i;
                        }
                    }
                };
                if (mk)
                    steps(std::true_type());
                else
                    steps(std::false_type());
            };
            for (int64_t j = 0; j * NB < Tn; ++j) {
                const int64_t t0 = j * NB, th = t0 + NB / 2, t1 = t0 + NB;
                if (!boundary(j))
                    goto aborted;
                run_steps(t0, th < Tn ? th : Tn, j);
                if (th < Tn) {
                    mid(j);
                    run_steps(th, t1 < Tn ? t1 : Tn, j);
                }
            }

            /* Flush: release all input, copy the last output rows, publish them. */
            __syncwarp();
            fence_gpu();
            if (has_in) {
                const long long rl = in_base + lenp;
                if (rl > relp) {
                    if (lane == 0)
                        st_ctr(cin_r, rl);
                    relp = rl;
                }
            }
            if (has_out) {
                if (re > copied) {
                    const long long qend = out_base + len;
                    if (qend - cap_out > relc) {
                        const long long v = wait_geq(cout_r, qend - cap_out, g.abort_flag, g.sleep_ns);
                        if (v < 0)
                            goto aborted;
                        relc = v;
                        acquire_warp();
                    }
                    __syncwarp();
                    const int64_t x = copied + lane;
                    if (x < re) {
                        const int slot = (int)((x - rb) & (kStage - 1));
                        const long long qs = (out_base + (x - rb)) & mask_out;
                        routD[qs] = s_st[0][slot];
                        if (TW)
                            routL[qs] = s_st[NV - 1][slot];
                    }
                    copied = re;
                }
                __syncwarp();
                fence_gpu();
                if (lane == 0)
                    st_ctr(cout_w, out_base + len);
                (void)pub;
            }
            __syncwarp();
        } else if (has_in) { /* an empty stripe reads nothing */
            const long long rl = in_base + lenp;
            if (rl > relp) {
                if (lane == 0)
                    st_ctr(cin_r, rl);
                relp = rl;
            }
        }
        if (has_out)
            out_base += len;
        if (has_in)
            in_base += lenp;
    }
    return;
aborted:
    if (lane == 0) {
        st_flag(g.abort_flag, 1);
        *(T *)g.out = T(NAN);
    }
}

} // namespace tsw_pair
