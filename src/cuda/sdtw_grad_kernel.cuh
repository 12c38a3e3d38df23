/*
 * The device side of soft-DTW values and gradients on the GPU (sdtw_grad.cu, the host side,
 * is the only file that includes it: the anonymous namespace is that translation unit's):
 * the per-problem kernel below, the wavefront kernels of sdtw_wf.cuh and sdtw_bi.cuh, and
 * the arguments they share.
 *
 * Kernel mapping (sdtw_grad_kernel): one block per problem (pair), blockDim.x = NT threads
 * (a multiple of 32, at most 1024). The n rows of the problem are cut into stripes of NT
 * rows; in a stripe thread t owns row i = i0 + t and the block sweeps the anti-diagonals
 * s = 0 .. rows + m - 2 (thread t takes column j = s - t + 1), one __syncthreads per
 * anti-diagonal. A cell's up and diagonal neighbours come from thread t - 1 through a
 * double-buffered shared row (the diagonal one is the up value the thread read one step
 * earlier, kept in a register); the left neighbour is the thread's own previous cell.
 *   Forward: R(i, j) is written to global memory in diagonal-major order (cell (i, j) at
 *     ((i + j - 2) n + i - 1), so a block's writes of one anti-diagonal are contiguous and
 *     coalesced (cuTimeWarp's layout). The first row of a stripe reads its up neighbours
 *     from the stored last row of the stripe above.
 *   Backward: the stripes in reverse, the anti-diagonals in reverse; thread t needs the
 *     successors (i+1, j), (i, j+1), (i+1, j+1): E and Q = R - c of (i+1, j) come from
 *     thread t + 1 through shared memory, (i+1, j+1) is the (i+1, .) pair read one step
 *     earlier, (i, j+1) the thread's own previous cell. Across stripes the first row's E
 *     and Q go through two small global boundary rows (per problem, alternating).
 *     The gradient: d/dx_i += 2 E(i,j) (x_i - y_j) in registers (thread t owns row i);
 *     d/dy_j += 2 E(i,j) (y_j - x_i) in a per-problem accumulator (shared memory when
 *     m * dim values fit, else the output rows in global memory): within one anti-diagonal
 *     every thread has its own column, and the anti-diagonals are separated by barriers,
 *     so the accumulation needs no atomics.
 * Cells per problem: n m forward plus n m backward; memory: (n + m - 1) n values of R per
 * problem of a chunk (the host cuts the batch into chunks that fit the free memory).
 * A Sakoe-Chiba band of width w (SgBand): S in the band's layout, n w values, and with one
 * block a problem each stripe sweeps only the steps that meet the band (sg_steps), so a
 * long pair in a narrow band costs O(n w) time and memory (issue 36, item 5), plus O(m)
 * boundary rows per block.
 *
 */
#pragma once

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/band.h"
#include "common/cost.h"
#include "common/recurrence.h"
#include "common/sdtw_grad.h"
#include "cuda/host.cuh"
#include "internal.h"

namespace {

using namespace tsw__cu;

/* ---- arithmetic ------------------------------------------------------------------------- */

template <typename T> struct SgOps;
/*
 * Both precisions compute in double, as the CPU backend does for float32 inputs: R and S are
 * sums of many costs, and their float32 rounding divided by a small gamma would move the
 * gradient's weights by more than the 1e-4 (relative to float64) that float32 gradients
 * must keep. The exponentials and the logarithm are double too. With the float32 MUFU units
 * (ex2.approx, lg2.approx, about 2^-22 relative) this kernel's float32 gradients came out up
 * to 1.2e-4 (gamma 0.1), 1.4e-4 (gamma 10) and 2.1e-4 (gamma 100) from float64 on some
 * random problems (test_cuda_sdtw seeds 6, 10, 225872944506 on the H100), against at most
 * 6.7e-6 in double; double costs this kernel a third more time (B = 16, 1,024 x 1,024:
 * 2.18 -> 2.93 ms). The wavefront kernel (sdtw_wf.cuh) keeps the MUFU units: its float32
 * gradients stayed within 1e-5 in the same runs.
 */
template <> struct SgOps<float> {
    static __device__ __forceinline__ double ex(double x) { return exp(x); }
    static __device__ __forceinline__ double lg(double x) { return log(x); }
    /* cost.h's squared Euclidean cost of the points widened to double */
    static __device__ __forceinline__ double sqcost(const float *x, const float *y, int64_t d)
    {
        double s = 0;
        for (int64_t k = 0; k < d; ++k) {
            const double t = (double)x[k] - (double)y[k];
            s += t * t;
        }
        return s;
    }
};
template <> struct SgOps<double> {
    static __device__ __forceinline__ double ex(double x) { return exp(x); }
    static __device__ __forceinline__ double lg(double x) { return log(x); }
    static __device__ __forceinline__ double sqcost(const double *x, const double *y,
                                                    int64_t d)
    {
        return tsw_cost_sqeuclidean_f64(x, y, d);
    }
};

#define SG_ADD(a, b) ((a) + (b))
#define SG_SUB(a, b) ((a) - (b))
#define SG_MUL(a, b) ((a) * (b))

/* softmin_gamma(diag, up, left) of recurrence.h, +inf when all three are. */
template <typename T>
__device__ __forceinline__ double sg_softmin(double a, double b, double c, double gamma,
                                             double inv_gamma)
{
    const double lo = TSW_MIN(TSW_MIN(a, b), c);
    if (lo == TSW_INF_F64)
        return lo;
    const double mid = lo == a ? b : a;
    const double hi = lo == a ? c : (lo == b ? c : b);
#define SG_EX(v) SgOps<T>::ex(v)
#define SG_LG(v) SgOps<T>::lg(v)
    return TSW_SOFTMIN3_SORTED(lo, mid, hi, gamma, inv_gamma, 1.0, SG_ADD, SG_SUB, SG_MUL,
                               SG_EX, SG_LG);
#undef SG_EX
#undef SG_LG
}

/* ---- kernel arguments ---------------------------------------------------------------------- */

/*
 * Problems of one launch: problem p = first + blockIdx.x pairs rows a[aoff[p] ..] (n =
 * alen[p] points) with b[boff[p] ..] (m = blen[p]); COST problems read c(i, j) from
 * cost + p * cn * cm instead (aoff/boff unused). Results, for the problem's value v and
 * gradients:
 *   values[p] = cv * v            (+= when accumulate)
 *   ga rows   = ca * dv/da        (+=), gb rows = cb * dv/db (+=); NULL: not wanted
 *   gcost     = dv/dc (COST), zeros outside the n x m block
 * With ga == gb (the divergence's self term, a = b) the block adds both in turn.
 */
template <typename T> struct SgArgs {
    const T *a, *b;
    const int64_t *aoff, *alen, *boff, *blen; /* indexed by problem p */
    const int64_t *roff;                      /* R offset (elements) of p, chunk-relative */
    int64_t first;
    int64_t dim;
    const T *cost;
    int64_t cn, cm;
    double *R;     /* chunk's S storage (double for both precisions, see SgOps) */
    double *bound; /* per block of the chunk: 4 (max_m + 1) values (two E/Q boundary rows) */
    int64_t bound_stride;
    double *gyglob; /* per block: max_m * dim accumulator when shared memory is too small */
    int64_t gy_stride;
    double *gxglob; /* per block: max_n * dim row accumulators (generic dim only) */
    int64_t gx_stride;
    int gy_shared; /* 1: the accumulator lives in shared memory */
    int y_shared;  /* 1: b is copied to shared memory (after the accumulator) */
    int64_t ymax;  /* longest b of the launch: the shared pieces' size / dim */
    T *values, *ga, *gb, *gcost;
    double *vacc; /* float32 divergences: the kinds' values summed in double, or NULL */
    int vlast;    /* this launch's kind is the last: it writes values from vacc */
    double cv, ca, cb;
    int accumulate;
    const int *flag; /* device check flag (device inputs), or NULL */
    /* split > 0: every problem on `split` blocks, one stripe of NT rows each, pipelined
     * through global boundary rows and flags (phase 1 the forward pass, phase 2 the
     * backward); 0: one block does all stripes of its problem, both passes (phase 0) */
    int split, phase;
    unsigned *ticket; /* split: block order of start (virtual block index) */
    int *fflag, *bflag; /* split: per (problem, stripe) boundary columns published */
    /* the wavefront kernel's split (sdtw_wf.cuh): rows per stripe (0: none), stripes per
     * problem, the hand-over words, and the deferred row gradients (wf_defer) */
    int wf_rows, wf_k, wf_defer;
    unsigned long long *wf_hand;
    float *wf_gx;
    /* the wavefront kernel's cost-matrix instances (sdtw_wf.cuh, wf_cm_at): problem p's
     * formed costs (and E) at R + wf_coff[p], chunk-relative doubles; NULL: the caller's
     * matrices (cost, gcost) */
    const int64_t *wf_coff;
    int want_grad;
    double gamma, inv_gamma;
    int window;
    double radius, slope;
};

/* Problem p's value of this launch's kind, v = cv R: summed with the earlier kinds' in double
 * when g.vacc is given (the last kind writes the rounded sum), else in T. */
template <typename T>
__device__ __forceinline__ void sg_put_value(const SgArgs<T> &g, int64_t p, double v)
{
    if (g.vacc) {
        const double acc = (g.accumulate ? g.vacc[p] : 0.0) + v;
        g.vacc[p] = acc;
        if (g.vlast)
            g.values[p] = (T)acc;
    } else {
        const T t = (T)v;
        g.values[p] = g.accumulate ? g.values[p] + t : t;
    }
}

/* The admissible cells of band.h's Sakoe-Chiba windows as two int bounds on j - i (the
 * host rejects Itakura for gradients, sdtw_grad.c): all cells when the band covers them.
 * With a band (on), the kernel below stores S in the band's layout, row i's cells j - i =
 * -below .. above at (i - 1) w + j - i + below (w = below + above + 1 < n + m - 1: never
 * more than the diagonal-major layout's (n + m - 1) n), sg_rcells on the host. */
struct SgBand {
    int below, above, w;
    bool on;
    __host__ __device__ __forceinline__ SgBand(int window, double radius, int n, int m)
    {
        const tsw_band bd = tsw_band_make(window, radius, 2.0, n, m);
        on = bd.kind == TSW_BAND_DIAG;
        below = !on ? n : (int)(bd.below < n ? bd.below : n);
        above = !on ? m : (int)(bd.above < m ? bd.above : m);
        w = below + above + 1;
    }
    __host__ __device__ __forceinline__ bool admits(int i, int j) const
    {
        return j - i >= -below && j - i <= above;
    }
    /* S's index of cell (i, j) (1-based) in the band's layout; any j (the caller tests) */
    __device__ __forceinline__ int64_t idx(int i, int j) const
    {
        return (int64_t)(i - 1) * w + (j - i + below);
    }
};

/* S values of a problem's (n, m) grid: the band's cells (n w) with a Sakoe-Chiba band, else
 * the diagonal-major layout's (n + m - 1) n. */
inline double sg_rcells(int window, double radius, int64_t n, int64_t m)
{
    if (n < ((int64_t)1 << 30) && m < ((int64_t)1 << 30)) {
        const SgBand bd(window, radius, (int)n, (int)m);
        if (bd.on)
            return (double)n * (double)bd.w;
    }
    return ((double)n + (double)m - 1) * (double)n;
}

/* Loads point i (1-based) of a problem into registers (DK > 0) or leaves the pointer. */
template <typename T, int DK> struct SgPoint {
    T v[DK > 0 ? DK : 1];
    const T *p;
    __device__ __forceinline__ void load(const T *base, int64_t dim)
    {
        p = base;
        if (DK > 0) {
#pragma unroll
            for (int c = 0; c < (DK > 0 ? DK : 1); ++c)
                v[c] = base[c];
        }
    }
    __device__ __forceinline__ const T *ptr() const { return DK > 0 ? v : p; }
};

/* Threads per block at most: 512, so that a thread may use 128 registers (the kernels
 * need more than 64). Narrower stripes also idle fewer threads in the wavefront's ramps:
 * (NT - 1) / (NT + m - 1) of the thread-steps of a stripe do nothing. */
__host__ __device__ constexpr int sg_max_threads(size_t es, bool cost, bool generic_dim)
{
    return (void)cost, es == 8 && generic_dim ? 256 : 512;
}
/* Blocks per SM the compiler plans registers for: 1 (up to 128 registers; the kernels
 * compute in double and spill below about 96). The kernel is bound by instruction issue,
 * so fewer resident blocks per SM cost little. */
__host__ __device__ constexpr int sg_min_blocks(size_t es, bool cost, bool generic_dim)
{
    return (void)es, (void)cost, (void)generic_dim, 1;
}

/* Split mode's hand-over between the blocks of one problem: the producer publishes how many
 * boundary columns are written (release: the writes before it are visible to whoever
 * acquires the value); the consumer spins until enough are. A block only ever waits on a
 * block that took an earlier ticket, i.e. that is running or done: no deadlock. */
__device__ __forceinline__ void sg_publish(int *flag, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(flag), "r"(v) : "memory");
}
__device__ __forceinline__ int sg_wait(const int *flag, int need, int have)
{
    while (have < need)
        asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(have) : "l"(flag) : "memory");
    return have;
}

/* The steps s (cell (i0 + t, s - t + 1) of thread t) of a stripe of rows i0 .. i0 + rows - 1:
 * all of them, 0 .. rows + m - 2, or with a band and one block a problem only those that
 * meet it, from thread 0's first admissible column to the last row's last one; every cell
 * of the band is inside (its ends grow with the row), so a stripe costs O(rows + w) steps
 * and a problem O(n (1 + w / NT)). Split mode keeps all steps (its hand-over counts
 * columns up to m). */
__device__ __forceinline__ void sg_steps(const SgBand &bd, int K, int i0, int rows, int m,
                                         int *s_lo, int *s_hi)
{
    *s_lo = 0;
    *s_hi = rows + m - 2;
    if (!bd.on || K)
        return;
    const int lo = i0 - bd.below - 1, hi = i0 + rows - 1 + bd.above;
    *s_lo = lo > 0 ? lo : 0;
    *s_hi = (hi < m ? hi : m) + rows - 2;
}

/* ---- the kernel ------------------------------------------------------------------------------ */

template <typename T, int DK, bool COST, bool BAND>
__global__ void __launch_bounds__(sg_max_threads(sizeof(T), COST, DK == 0),
                                  sg_min_blocks(sizeof(T), COST, DK == 0))
    sdtw_grad_kernel(SgArgs<T> g)
{
    extern __shared__ __align__(16) unsigned char sg_smem[];
    double *sh = (double *)sg_smem;
    /* device inputs found non-finite by the check kernels: write nothing */
    if (g.flag && *(volatile const int *)g.flag)
        return;
    const int NT = blockDim.x, tid = threadIdx.x;
    const int K = g.split;
    int64_t p, slot; /* the problem; this block's scratch slot (split: problem x stripe) */
    int my = 0;      /* split: this block's stripe */
    if (K) {
        __shared__ int sg_vb;
        if (tid == 0)
            sg_vb = (int)atomicAdd(g.ticket, 1u);
        __syncthreads();
        const int vb = sg_vb, st = vb % K;
        my = g.phase == 2 ? K - 1 - st : st; /* the backward runs the stripes bottom up */
        p = g.first + vb / K;
        slot = (int64_t)(vb / K) * K + my;
    } else {
        p = g.first + blockIdx.x;
        slot = blockIdx.x;
    }
    const int n = (int)g.alen[p], m = (int)g.blen[p]; /* < 2^30 (host check) */
    if (K && my * NT >= n)
        return; /* a shorter problem: fewer stripes (nobody waits on this one) */
    const int64_t dim = DK > 0 ? DK : g.dim;
    const double INF = TSW_INF_F64;
    const double gamma = g.gamma, ig = g.inv_gamma;
    SgBand bd(g.window, g.radius, n, m);
    if (!BAND)
        bd.on = false; /* the grid's layout and steps (a window is tested per cell) */
    const T *A = COST ? nullptr : g.a + g.aoff[p] * dim;
    const T *B = COST ? nullptr : g.b + g.boff[p] * dim;
    if (!COST && g.y_shared) {
        /* b in shared memory: thread 0 would otherwise wait for a new point from L2 or
         * HBM at every anti-diagonal (the others find it in L1), stalling the block */
        T *ys = (T *)(sh + 4 * NT + (g.gy_shared ? g.ymax * dim : 0));
        for (int64_t k = tid; k < m * dim; k += NT)
            ys[k] = B[k];
        B = ys;
        __syncthreads();
    }
    const T *C = COST ? g.cost + p * g.cn * g.cm : nullptr;
    double *S = g.R + g.roff[p]; /* S(i, j) = softmin part of R(i, j); R = c + S */
    if (COST && g.gcost && g.want_grad && g.phase != 2) {
        /* zeros outside the n x m block (barriers follow); split: the rows of this stripe,
         * the last stripe also the padding rows */
        const int64_t r0 = K ? (int64_t)my * NT : 0;
        const int64_t r1 = K && (my + 1) * NT < n ? (int64_t)(my + 1) * NT : g.cn;
        for (int64_t k = r0 * g.cm + tid; k < r1 * g.cm; k += NT)
            g.gcost[p * g.cn * g.cm + k] = 0;
    }
    /* cell (i, j), 1-based, diagonal-major */
#define RIDX(i, j) ((int64_t)((i) + (j)-2) * n + (i)-1)

    /* ---- forward ---- */
    double *fb = sh; /* [2][NT] */
    /* R of the stripe's last row for the next stripe: a row j is written at step j + rows - 2
     * and read by the next stripe's first row (before that stripe's last row rewrites it) */
    double *rb = g.bound + slot * g.bound_stride;
    /* split: the stripe below reads this one's last row from its own slot's rb */
    double *rb_out = K ? g.bound + (slot + 1) * g.bound_stride : rb;
    int *f_in = K ? g.fflag + slot : nullptr, *f_out = K ? g.fflag + slot + 1 : nullptr;
    double value = 0;
    const int i_first = K ? my * NT + 1 : 1, i_last = K ? i_first : n;
    for (int i0 = i_first; g.phase != 2 && i0 <= i_last; i0 += NT) {
        const int rows = n - i0 + 1 < NT ? n - i0 + 1 : NT;
        const int i = i0 + tid;
        const bool has_row = tid < rows;
        SgPoint<T, DK> xi;
        if (!COST && has_row)
            xi.load(A + (int64_t)(i - 1) * dim, dim);
        double left = INF;                    /* R(i, j-1); R(i, 0) = +inf */
        double last_up = (i == 1) ? 0.0 : INF; /* R(i-1, j-1); R(0, 0) = 0  */
        /* thread 0 of a lower stripe: rb[j], rb[j+1] loaded ahead (latency) */
        const bool from_rb = tid == 0 && i0 > 1;
        const bool to_next = K && tid == rows - 1 && i < n; /* split: publish for below */
        /* the steps that hold the stripe's cells: all, or (a band, one block a problem)
         * those that meet the band (sg_steps) */
        int s_lo, s_hi;
        sg_steps(bd, K, i0, rows, m, &s_lo, &s_hi);
        const int j0 = s_lo + 1 > 1 ? s_lo + 1 : 1; /* thread 0's first column */
        double rq0 = INF, rq1 = INF;
        int have = 0; /* split: boundary columns known published */
        if (from_rb) {
            if (K)
                have = sg_wait(f_in, m < 2 ? m : 2, have);
            rq0 = j0 <= m ? rb[j0] : INF;
            rq1 = j0 + 1 <= m ? rb[j0 + 1] : INF;
            /* a band's first step: the diagonal neighbour may be in the band */
            if (j0 > 1 && bd.admits(i - 1, j0 - 1))
                last_up = rb[j0 - 1];
        }
        /* running indices: S(i, j) at sidx (its first column's; a band: the band's layout),
         * this step's exchange slot fb[wr] and the up neighbour's fb[rd] (they swap); the
         * up values of steps before s_lo are +inf (outside the band) */
        const int jf = s_lo - tid + 1 > 1 ? s_lo - tid + 1 : 1;
        int64_t sidx = bd.on ? bd.idx(i, jf) : (int64_t)(i - 1) * n + (i - 1);
        const int64_t sstep = bd.on ? 1 : n;
        int wr = tid, rd = NT + tid - 1;
        fb[tid] = INF;
        fb[NT + tid] = INF;
        __syncthreads();
        for (int s = s_lo; s <= s_hi; ++s) {
            const int j = s - tid + 1;
            if (has_row && j >= 1 && j <= m) {
                double up = INF;
                if (tid > 0) {
                    up = fb[rd];
                } else if (from_rb) {
                    /* the row above's cells outside the band were never written */
                    up = bd.admits(i - 1, j) ? rq0 : INF;
                    rq0 = rq1;
                    if (j + 2 <= m) {
                        if (K)
                            have = sg_wait(f_in, j + 2, have);
                        rq1 = rb[j + 2];
                    } else {
                        rq1 = INF;
                    }
                }
                double r = INF, sm = -INF;
                if (bd.admits(i, j)) {
                    const double c = COST ? (double)C[(int64_t)(i - 1) * g.cm + (j - 1)]
                                     : SgOps<T>::sqcost(xi.ptr(), B + (j - 1) * dim, dim);
                    sm = sg_softmin<T>(last_up, up, left, gamma, ig);
                    r = c + sm;
                    if (r == INF)
                        sm = -INF; /* unreachable: no weight in the backward pass */
                }
                if (!bd.on || bd.admits(i, j))
                    S[sidx] = sm;
                sidx += sstep;
                if (tid == rows - 1 && (!K || to_next)) {
                    rb_out[j] = r; /* read by the next stripe's first row, steps later */
                    if (to_next && ((j & 31) == 0 || j == m))
                        sg_publish(f_out, j);
                }
                fb[wr] = r;
                left = r;
                last_up = up;
                if (i == n && j == m)
                    value = r;
            }
            const int t = wr;
            wr = rd + 1;
            rd = t - 1;
            __syncthreads();
        }
    }
    if (g.phase != 2 && tid == (int)((n - 1) % NT) && (!K || my == (n - 1) / NT))
        sg_put_value(g, p, g.cv * value);
    if (!g.want_grad || g.phase == 1)
        return;

    /* ---- backward ---- */
    double *eb = sh;         /* [2][NT] E of the previous step */
    double *qb = sh + 2 * NT; /* [2][NT] Q = R - c of the previous step */
    double *gy = g.gy_shared ? sh + 4 * NT : g.gyglob + slot * g.gy_stride;
    /* boundary E and Q rows: one block, [2][E row, Q row] of m + 1 alternating between the
     * stripes; split, at (m + 1) past rb: written by the stripe below into this slot's */
    double *bound = g.bound + slot * g.bound_stride;
    int *b_in = K ? g.bflag + slot : nullptr, *b_out = K && my > 0 ? g.bflag + slot - 1 : nullptr;
    const bool gy_on = !COST && g.gb;
    const bool gx_on = !COST && g.ga;
    double *gxg = g.gxglob + slot * g.gx_stride; /* DK == 0: row accumulators */
    if (gy_on)
        for (int64_t k = tid; k < m * dim; k += NT)
            gy[k] = 0;
    if (DK == 0 && gx_on)
        for (int64_t k = tid; k < n * dim; k += NT)
            gxg[k] = 0;
    __syncthreads();
    int parity = 0;
    const int last0 = K ? my * NT + 1 : ((n - 1) / NT) * NT + 1, stop0 = K ? last0 : 1;
    for (int i0 = last0; i0 >= stop0; i0 -= NT) {
        const int rows = n - i0 + 1 < NT ? n - i0 + 1 : NT;
        const int i = i0 + tid;
        const bool has_row = tid < rows;
        /* boundary rows: read what the stripe below wrote, write for the stripe above */
        const double *bE_rd = K ? bound + (m + 1) : bound + parity * 2 * (m + 1);
        const double *bQ_rd = bE_rd + (m + 1);
        double *bE_wr = K ? g.bound + (slot - 1) * g.bound_stride + (m + 1)
                     : bound + (parity ^ 1) * 2 * (m + 1);
        double *bQ_wr = bE_wr + (m + 1);
        SgPoint<T, DK> xi;
        if (!COST && has_row)
            xi.load(A + (int64_t)(i - 1) * dim, dim);
        double gx[DK > 0 ? DK : 1];
#pragma unroll
        for (int c = 0; c < (DK > 0 ? DK : 1); ++c)
            gx[c] = 0;
        double e_rt = 0, q_rt = -INF; /* (i, j+1)   */
        double e_dg = 0, q_dg = -INF; /* (i+1, j+1) */
        /* S(i, j), S(i, j-1) loaded ahead (j runs down from m); the stripe's last row also
         * takes the boundary row of the stripe below that way */
        int s_lo, s_hi;
        sg_steps(bd, K, i0, rows, m, &s_lo, &s_hi);
        /* this thread's first column (j runs down) */
        const int jl = s_hi - tid + 1 < m ? s_hi - tid + 1 : m;
        double sq0 = -INF, sq1 = -INF;
        const bool from_bound = has_row && tid == rows - 1 && i < n;
        double be0 = 0, be1 = 0, bq0 = -INF, bq1 = -INF;
        /* S(i, j), j running down (a band: its layout; cells outside it are -inf) */
        int64_t sidx = bd.on ? bd.idx(i, jl) : RIDX(i, m);
        const int64_t sstep = bd.on ? 1 : n;
        if (has_row && jl >= 1) {
            sq0 = !bd.on || bd.admits(i, jl) ? S[sidx] : -INF;
            sq1 = jl >= 2 && (!bd.on || bd.admits(i, jl - 1)) ? S[sidx - sstep] : -INF;
        }
        /* exchange slots (of eb and qb alike): this step's wo and the row below's ro of the
         * step before; the values of steps after s_hi are E = 0, Q = -inf (outside) */
        const int par0 = s_hi & 1; /* parity of the first step */
        int wo = par0 * NT + tid, ro = (par0 ^ 1) * NT + tid + 1;
        eb[tid] = 0;
        eb[NT + tid] = 0;
        qb[tid] = -INF;
        qb[NT + tid] = -INF;
        __syncthreads();
        int bhave = 0; /* split: boundary columns (from m down) known published */
        if (from_bound && jl >= 1) {
            if (K)
                bhave = sg_wait(b_in, m < 2 ? m : 2, bhave);
            be0 = bE_rd[jl];
            bq0 = bQ_rd[jl];
            be1 = jl >= 2 ? bE_rd[jl - 1] : 0;
            bq1 = jl >= 2 ? bQ_rd[jl - 1] : -INF;
            /* a band's first step: the diagonal successor may be in the band */
            if (jl < m && bd.admits(i + 1, jl + 1)) {
                e_dg = bE_rd[jl + 1];
                q_dg = bQ_rd[jl + 1];
            }
        }
        for (int s = s_hi; s >= s_lo; --s) {
            const int j = s - tid + 1;
            if (has_row && j >= 1 && j <= m) {
                double e_dn = 0, q_dn = -INF; /* (i+1, j) */
                if (i < n) {
                    if (tid + 1 < rows) {
                        e_dn = eb[ro];
                        q_dn = qb[ro];
                    } else {
                        /* the row below's cells outside the band were never written */
                        const bool in = bd.admits(i + 1, j);
                        e_dn = in ? be0 : 0;
                        q_dn = in ? bq0 : -INF;
                        be0 = be1;
                        bq0 = bq1;
                        if (j > 2) {
                            if (K)
                                bhave = sg_wait(b_in, m - j + 3, bhave);
                            be1 = bE_rd[j - 2];
                            bq1 = bQ_rd[j - 2];
                        } else {
                            be1 = 0;
                            bq1 = -INF;
                        }
                    }
                }
                /* q = S(i, j) (sdtw_grad.h), -inf for cells off every path */
                const double q = sq0;
                sq0 = sq1;
                sq1 = j > 2 && (!bd.on || bd.admits(i, j - 2)) ? S[sidx - 2 * sstep] : -INF;
                sidx -= sstep;
                double e = 0;
                if (q != -INF) {
                    const double c = COST ? (double)C[(int64_t)(i - 1) * g.cm + (j - 1)]
                                     : SgOps<T>::sqcost(xi.ptr(), B + (j - 1) * dim, dim);
                    const double r = c + q; /* the forward pass's R(i, j), bit for bit */
                    if (i == n && j == m)
                        e = 1;
                    else
                        e = TSW_SDTW_E_CELL(e_dn, SgOps<T>::ex((q_dn - r) * ig), e_rt,
                                            SgOps<T>::ex((q_rt - r) * ig), e_dg,
                                            SgOps<T>::ex((q_dg - r) * ig), SG_ADD, SG_MUL);
                }
                eb[wo] = e;
                qb[wo] = q;
                if (tid == 0 && (!K || my > 0)) {
                    bE_wr[j] = e;
                    bQ_wr[j] = q;
                    if (K && (((m - j + 1) & 31) == 0 || j == 1))
                        sg_publish(b_out, m - j + 1);
                }
                if (COST) {
                    if (g.gcost)
                        g.gcost[p * g.cn * g.cm + (int64_t)(i - 1) * g.cm + (j - 1)] = e;
                } else if (e != 0) {
                    const T *yj = B + (j - 1) * dim;
                    const T *x = xi.ptr();
                    double *gyj = gy + (j - 1) * dim;
                    double *gxs = gxg + (int64_t)(i - 1) * dim;
                    if (DK > 0) {
#pragma unroll
                        for (int k = 0; k < (DK > 0 ? DK : 1); ++k) {
                            const double t = 2 * e * ((double)x[k] - (double)yj[k]);
                            gx[k] += t;
                            if (gy_on)
                                gyj[k] -= t;
                        }
                    } else {
                        for (int64_t k = 0; k < dim; ++k) {
                            const double t = 2 * e * ((double)x[k] - (double)yj[k]);
                            if (gx_on)
                                gxs[k] += t; /* this thread alone owns row i */
                            if (gy_on)
                                gyj[k] -= t;
                        }
                    }
                }
                e_rt = e;
                q_rt = q;
                e_dg = e_dn;
                q_dg = q_dn;
            }
            const int t = wo;
            wo = ro - 1;
            ro = t + 1;
            __syncthreads();
        }
        parity ^= 1;
        if (DK > 0 && gx_on && has_row) {
            T *o = g.ga + (g.aoff[p] + i - 1) * dim;
#pragma unroll
            for (int k = 0; k < (DK > 0 ? DK : 1); ++k) {
                if (K) /* split: the outputs were zeroed; other blocks add to them */
                    atomicAdd(&o[k], (T)(g.ca * gx[k]));
                else
                    o[k] = (T)((g.accumulate ? (double)o[k] : 0.0) + g.ca * gx[k]);
            }
        }
    }
    /* generic dim: the rows' accumulators to the output; then the columns' (ga and gb may
     * be the same rows for the divergence's self terms: the barrier orders the two) */
    __syncthreads();
    if (DK == 0 && gx_on) {
        T *o = g.ga + g.aoff[p] * dim;
        const int64_t k0 = K ? (int64_t)my * NT * dim : 0;
        const int64_t k1 = K && (my + 1) * NT < n ? (int64_t)(my + 1) * NT * dim : n * dim;
        for (int64_t k = k0 + tid; k < k1; k += NT) {
            if (K)
                atomicAdd(&o[k], (T)(g.ca * gxg[k]));
            else
                o[k] = (T)((g.accumulate ? (double)o[k] : 0.0) + g.ca * gxg[k]);
        }
    }
    __syncthreads();
    if (gy_on && K) {
        /* split: this stripe's column sums stay in its slot; sg_reduce_gy adds the stripes'
         * in order after the launch (atomic adds would round in a different order on every
         * run) */
        double *part = g.gyglob + slot * g.gy_stride;
        if (part != gy)
            for (int64_t k = tid; k < m * dim; k += NT)
                part[k] = gy[k];
    } else if (gy_on) {
        T *o = g.gb + g.boff[p] * dim;
        for (int64_t k = tid; k < m * dim; k += NT)
            o[k] = (T)((g.accumulate ? (double)o[k] : 0.0) + g.cb * gy[k]);
    }
#undef RIDX
}

#include "cuda/sdtw_wf.cuh"
#include "cuda/sdtw_bi.cuh"
#include "cuda/sdtw_mat.cuh"

/* The wavefront kernel is float32 only (wf_eligible). */
inline cudaError_t wf_dispatch(const SgArgs<float> &g, int64_t blocks, int64_t max_n, int rb,
                               bool val, cudaStream_t stream, bool cm = false)
{
    return wf_launch(g, blocks, max_n, rb, val, stream, cm);
}
inline cudaError_t wf_dispatch(const SgArgs<double> &, int64_t, int64_t, int, bool,
                               cudaStream_t, bool = false)
{
    return cudaErrorNotSupported;
}

} // namespace
