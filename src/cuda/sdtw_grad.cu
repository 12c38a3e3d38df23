/*
 * Soft-DTW values and gradients on the GPU (tsw_soft_dtw_grad, tsw_soft_dtw_cost_grad and
 * their *_device twins): the forward recursion for R, then the backward recursion for
 * E = dR(n,m)/dR(i,j) of Cuturi and Blondel (2017, Algorithm 2), fused with the local cost so
 * that the gradient with respect to the inputs is accumulated cell by cell and no
 * (count, n, m) cost tensor is ever materialised (cuTimeWarp's future work, 002_*.txt).
 *
 * float32 series of dim 1 or 2 up to 2,048 points in batches of at least two warps per SM run
 * on the register-blocked wavefront kernel of sdtw_wf.cuh (sg_grad: wf_eligible,
 * wf_rows_per_lane); smaller batches with gradients (up to 16,384 points) on its two-wave
 * form, sdtw_bi.cuh (the recursions from both corners at once, E from their sum: bi_rows),
 * or its split; everything else on the kernel below. The same wavefront kernel's
 * value-only variant serves the paired soft-DTW values of cuda/backend.cu
 * (tsw__cuda_soft_dtw_paired_wf: sg_grad with val_only).
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
 *
 * Numerics: the soft-min of recurrence.h (minimum factored out); the backward weights
 * exp((Q(succ) - R(i,j)) / gamma) have exponents <= 0 up to rounding, so no overflow for any
 * gamma; cells outside the window have R = +inf and E = 0, and their terms are skipped (no
 * 0 * inf). Both precisions take exp and log in double (see SgOps).
 */
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
 * host rejects Itakura for gradients, sdtw_grad.c): all cells when the band covers them. */
struct SgBand {
    int below, above;
    __device__ __forceinline__ SgBand(int window, double radius, int n, int m)
    {
        const tsw_band bd = tsw_band_make(window, radius, 2.0, n, m);
        const bool all = bd.kind != TSW_BAND_DIAG;
        below = all ? n : (int)(bd.below < n ? bd.below : n);
        above = all ? m : (int)(bd.above < m ? bd.above : m);
    }
    __device__ __forceinline__ bool admits(int i, int j) const
    {
        return j - i >= -below && j - i <= above;
    }
};

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

/* ---- the kernel ------------------------------------------------------------------------------ */

template <typename T, int DK, bool COST>
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
    const SgBand bd(g.window, g.radius, n, m);
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
        double rq0 = INF, rq1 = INF;
        int have = 0; /* split: boundary columns known published */
        if (from_rb) {
            if (K)
                have = sg_wait(f_in, m < 2 ? m : 2, have);
            rq0 = rb[1];
            rq1 = m >= 2 ? rb[2] : INF;
        }
        /* running indices: S(i, j) at sidx, this step's exchange slot fb[wr] and the up
         * neighbour's fb[rd] (they swap) */
        int64_t sidx = (int64_t)(i - 1) * n + (i - 1);
        int wr = tid, rd = NT + tid - 1;
        const int steps = rows + m - 1;
        for (int s = 0; s < steps; ++s) {
            const int j = s - tid + 1;
            if (has_row && j >= 1 && j <= m) {
                double up = INF;
                if (tid > 0) {
                    up = fb[rd];
                } else if (from_rb) {
                    up = rq0;
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
                S[sidx] = sm;
                sidx += n;
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
        double sq0 = -INF, sq1 = -INF;
        const bool from_bound = has_row && tid == rows - 1 && i < n;
        double be0 = 0, be1 = 0, bq0 = -INF, bq1 = -INF;
        int64_t sidx = RIDX(i, m); /* S(i, j), j running down */
        if (has_row) {
            sq0 = S[sidx];
            sq1 = m >= 2 ? S[sidx - n] : -INF;
        }
        /* exchange slots (of eb and qb alike): this step's wo and the row below's ro of the
         * step before */
        const int par0 = (rows + m - 2) & 1; /* parity of the first step, s = steps - 1 */
        int wo = par0 * NT + tid, ro = (par0 ^ 1) * NT + tid + 1;
        int bhave = 0; /* split: boundary columns (from m down) known published */
        if (from_bound) {
            if (K)
                bhave = sg_wait(b_in, m < 2 ? m : 2, bhave);
            be0 = bE_rd[m];
            bq0 = bQ_rd[m];
            be1 = m >= 2 ? bE_rd[m - 1] : 0;
            bq1 = m >= 2 ? bQ_rd[m - 1] : -INF;
        }
        const int steps = rows + m - 1;
        for (int s = steps - 1; s >= 0; --s) {
            const int j = s - tid + 1;
            if (has_row && j >= 1 && j <= m) {
                double e_dn = 0, q_dn = -INF; /* (i+1, j) */
                if (i < n) {
                    if (tid + 1 < rows) {
                        e_dn = eb[ro];
                        q_dn = qb[ro];
                    } else {
                        e_dn = be0;
                        q_dn = bq0;
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
                sq1 = j > 2 ? S[sidx - 2 * (int64_t)n] : -INF;
                sidx -= n;
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
    if (gy_on) {
        T *o = g.gb + g.boff[p] * dim;
        for (int64_t k = tid; k < m * dim; k += NT) {
            if (K)
                atomicAdd(&o[k], (T)(g.cb * gy[k]));
            else
                o[k] = (T)((g.accumulate ? (double)o[k] : 0.0) + g.cb * gy[k]);
        }
    }
#undef RIDX
}

#include "cuda/sdtw_wf.cuh"
#include "cuda/sdtw_bi.cuh"

/* The wavefront kernel is float32 only (wf_eligible). */
inline cudaError_t wf_dispatch(const SgArgs<float> &g, int64_t blocks, int64_t max_n, int rb,
                               bool val, cudaStream_t stream)
{
    return wf_launch(g, blocks, max_n, rb, val, stream);
}
inline cudaError_t wf_dispatch(const SgArgs<double> &, int64_t, int64_t, int, bool,
                               cudaStream_t)
{
    return cudaErrorNotSupported;
}

} // namespace

/* ---- host side ----------------------------------------------------------------------------- */

namespace {

/* Finiteness of the n_k x m_k blocks of (count, cn, cm) cost matrices (bit 1 of *flag). */
template <typename T>
__global__ void cost_check_kernel(const T *cost, int64_t count, int64_t cn, int64_t cm,
                                  const int64_t *alen, const int64_t *blen, int *flag)
{
    for (int64_t p = blockIdx.x; p < count; p += gridDim.x) {
        const int64_t n = alen[p], m = blen[p];
        const T *c = cost + p * cn * cm;
        int bad = 0;
        for (int64_t k = threadIdx.x; k < n * m; k += blockDim.x)
            bad |= !isfinite(c[(k / m) * cm + k % m]);
        if (bad)
            atomicOr(flag, 1);
    }
}

int64_t round32(int64_t v) { return (v + 31) / 32 * 32; }

/* Split mode: the blocks of a problem add to its gradient rows, which start at zero
 * (series rows only: rows between series stay untouched). */
template <typename T>
__global__ void sg_zero_rows(T *o, const int64_t *off, const int64_t *len, int64_t first,
                             int64_t count, int64_t dim, const int *flag)
{
    if (flag && *(volatile const int *)flag)
        return; /* non-finite device inputs: the outputs stay untouched */
    for (int64_t q = blockIdx.x; q < count; q += gridDim.x) {
        T *r = o + off[first + q] * dim;
        for (int64_t k = threadIdx.x; k < len[first + q] * dim; k += blockDim.x)
            r[k] = 0;
    }
}

/* Split mode's rows per block (one stripe) and when it is used: a batch too small to fill
 * the GPU with one block per problem (fewer than two blocks of 512 rows per SM) whose
 * problems have more than 256 rows. Returns the blocks per problem, 0 for no split. */
constexpr int kSplitRows = 256;
int64_t sg_split(int64_t count, int64_t max_n, int device)
{
    const int sms = sm_count(device);
    if (max_n <= kSplitRows || count * ((max_n + 511) / 512) >= 2 * (int64_t)sms)
        return 0;
    const char *env = getenv("TSWARP_SDTW_SPLIT"); /* developer knob: 0 disables */
    if (env && env[0] == '0')
        return 0;
    return (max_n + kSplitRows - 1) / kSplitRows;
}

/* Threads per block for problems of at most max_n rows: one per row up to the maximum. */
int threads_for(int64_t max_n, tsw_dtype dtype, bool cost, int64_t dim)
{
    const int64_t mx = sg_max_threads(tsw__dtype_size(dtype), cost, !cost && dim > 2);
    return (int)round32(max_n < mx ? max_n : mx);
}

template <typename T, int DK, bool COST>
cudaError_t launch_kernel(const SgArgs<T> &g, int64_t blocks, int nt, size_t smem,
                          cudaStream_t stream)
{
    auto *k = sdtw_grad_kernel<T, DK, COST>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess)
            return e;
    }
    k<<<(unsigned)blocks, nt, smem, stream>>>(g);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_any(const SgArgs<T> &g, bool cost, int64_t blocks, int nt, size_t smem,
                       cudaStream_t stream)
{
    if (cost)
        return launch_kernel<T, 1, true>(g, blocks, nt, smem, stream);
    if (g.dim == 1)
        return launch_kernel<T, 1, false>(g, blocks, nt, smem, stream);
    if (g.dim == 2)
        return launch_kernel<T, 2, false>(g, blocks, nt, smem, stream);
    return launch_kernel<T, 0, false>(g, blocks, nt, smem, stream);
}

/* One kind of problem of a call (the pairs, or the divergence's self terms). */
struct SgKind {
    const void *a, *b;
    const int64_t *aoff, *alen, *boff, *blen; /* device */
    int64_t max_n;
    void *ga, *gb;
    double cv, ca, cb;
    int accumulate;
};

/*
 * Everything of a call once the inputs are on the device: chunks of problems whose R fits
 * the budget, each chunk's kinds launched in order on the call's stream.
 */
struct SgJob {
    tsw_dtype dtype;
    int64_t dim;
    const tsw_params *params;
    int64_t count;
    const int64_t *h_rsize; /* host: R elements of problem k (max over the kinds) */
    const int64_t *d_roff;  /* device: chunk-relative R offsets */
    int64_t max_len;        /* longest series of any kind (scratch sizing) */
    bool cost;
    const void *cmat;
    int64_t cn, cm;
    void *values, *gcost;
    double *vacc; /* float32 divergences: (count,) doubles for the kinds' sum, else NULL */
    bool want_grad;
    const int *flag;
    int64_t split; /* blocks per problem (0: one) */
    bool wf;       /* the wavefront kernel (sdtw_wf.cuh): R holds its probabilities */
    int wf_rb;     /* its rows per lane */
    int wf_rows;   /* its split's rows per stripe (0: one block per problem) */
    int64_t wf_k;  /* stripes per problem */
    bool wf_val;   /* values only on its float32 variant (tsw__cuda_soft_dtw_paired_wf) */
    bool bi;       /* gradients in two waves (sdtw_bi.cuh): wf_rows rows a stripe, wf_k stripes */
    int *sync;     /* split: ticket, then forward and backward flags of 2 (blocks) + 2 ints */
    int64_t sync_ints;
};

/* Dynamic shared memory of a launch: 4 NT doubles (the exchange rows), then the column
 * accumulator (doubles) and a copy of b (the input type) when each takes at most 32 KB. */
size_t sg_smem_bytes(tsw_dtype dtype, int nt, int64_t max_len, int64_t dim, bool cost,
                     bool *gy_shared, bool *y_shared)
{
    const size_t es = tsw__dtype_size(dtype), cells = (size_t)max_len * (size_t)dim;
    const size_t base = 4 * (size_t)nt * sizeof(double);
    *gy_shared = !cost && cells * sizeof(double) <= 32 * 1024;
    *y_shared = !cost && cells * es <= 32 * 1024;
    return base + (*gy_shared ? cells * sizeof(double) : 0) + (*y_shared ? cells * es : 0);
}

/* Device memory left for R after `fixed` bytes: half of what is free, so that other work
 * on the GPU keeps room (at least one problem's R is always tried). */
size_t sg_budget(size_t fixed)
{
    size_t free_b = 0, total_b = 0;
    if (mem_info(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return (size_t)1 << 30;
    }
    return free_b > fixed ? (free_b - fixed) / 2 : 0;
}

bool full_cover(const HostColl &h)
{
    int64_t next = 0;
    for (int64_t i = 0; i < h.c->count; ++i) {
        if (h.off[i] != next)
            return false;
        next += h.len[i];
    }
    return next == h.rows;
}

struct SgPieces {
    size_t idx, x, y, cmat, values, vacc, gx, gy, gcost, flag, scratch, sync, R;
};

/* Chunks of problems: chunk c is problems [start[c], start[c+1]) with the sum of their R
 * sizes <= r_cap (a lone problem may exceed it: it is its own chunk) and at most
 * blocks_cap problems; roff[k] receives k's R offset within its chunk. */
int64_t sg_chunks(const int64_t *rsize, int64_t count, int64_t r_cap, int64_t blocks_cap,
                  int64_t *roff, int64_t *start)
{
    int64_t nch = 0;
    for (int64_t k0 = 0; k0 < count;) {
        int64_t k1 = k0, used = 0;
        while (k1 < count && k1 - k0 < blocks_cap && (k1 == k0 || used + rsize[k1] <= r_cap)) {
            roff[k1] = used;
            used += rsize[k1];
            ++k1;
        }
        start[nch++] = k0;
        k0 = k1;
    }
    start[nch] = count;
    return nch;
}

/*
 * Sizes the R region and the per-block scratch from the free memory: everything in one
 * chunk when it fits half of the free memory, else chunks of about half of it. Returns
 * the largest chunk's R elements in *r_cap and its block count in *blocks_cap.
 */
int sg_size(const int64_t *rsize, int64_t count, int64_t per_block, size_t es, size_t fixed,
            bool one_chunk, int64_t *r_cap, int64_t *blocks_cap)
{
    int64_t total = 0, biggest = 0;
    for (int64_t k = 0; k < count; ++k) {
        if (rsize[k] > INT64_MAX / 4 - total)
            return TSW_EOVERFLOW;
        total += rsize[k];
        biggest = rsize[k] > biggest ? rsize[k] : biggest;
    }
    const double all = (double)total + (double)count * (double)per_block;
    if (one_chunk || all <= (double)sg_budget(fixed) / (double)es) {
        *r_cap = total;
        *blocks_cap = count;
        return TSW_OK;
    }
    const double budget = (double)sg_budget(fixed) / (double)es;
    int64_t rc = (int64_t)(budget * 0.75);
    if (rc < biggest)
        rc = biggest; /* the allocation then reports TSW_ENOMEM if even that fails */
    int64_t bc = (int64_t)((budget - (double)rc) / (double)(per_block > 0 ? per_block : 1));
    if (bc < 1)
        bc = 1;
    if (bc > count)
        bc = count;
    *r_cap = rc;
    *blocks_cap = bc;
    return TSW_OK;
}

/* The split wavefront kernel (sdtw_wf.cuh) on problems [g.first, g.first + count) of one
 * kind: hand-over words set to kWfEmpty, the forward launch, then (gradients) the backward
 * launch and, where both gradients are wanted, the deferred rows (wf_rows_after). The
 * float32 wavefront kernel only: the double instance never gets here (wf_eligible). */
template <typename T>
int wf_split_launch(Call &call, const SgJob &job, const SgKind &kd, SgArgs<T> &g,
                    int64_t count, double *scratch)
{
    if constexpr (sizeof(T) != sizeof(float)) {
        return TSW_ENOTSUP;
    } else {
        const int64_t K = job.wf_k;
        g.wf_rows = job.wf_rows;
        g.wf_k = (int)K;
        g.wf_hand = (unsigned long long *)scratch;
        g.wf_defer = g.want_grad && kd.ga && kd.gb;
        g.wf_gx = (float *)(g.wf_hand + count * (K - 1) * 4 * job.max_len);
        TSW_CU(cudaMemsetAsync(g.wf_hand, 0xff,
                               (size_t)(count * (K - 1) * 4 * job.max_len) * sizeof(double),
                               call.stream),
               "cudaMemsetAsync (split hand-over)");
        /* the two launches' tickets (job.sync has at least two ints), set at once */
        TSW_CU(cudaMemsetAsync(job.sync, 0, 2 * sizeof(unsigned), call.stream),
               "cudaMemsetAsync (tickets)");
        g.ticket = (unsigned *)job.sync;
        g.phase = 1;
        TSW_CU(wf_dispatch(g, count * K, kd.max_n, job.wf_rb, false, call.stream),
               "soft-DTW gradient kernel launch");
        if (!g.want_grad)
            return TSW_OK;
        g.ticket = (unsigned *)job.sync + 1;
        g.phase = 2;
        TSW_CU(wf_dispatch(g, count * K, kd.max_n, job.wf_rb, false, call.stream),
               "soft-DTW gradient kernel launch");
        if (g.wf_defer && kd.max_n > job.wf_rows) {
            wf_rows_after<<<(unsigned)(count < 4096 ? count : 4096), 256, 0, call.stream>>>(g,
                                                                                        count);
            TSW_CU(cudaGetLastError(), "soft-DTW gradient kernel launch");
        }
        return TSW_OK;
    }
}

/* The two-wave kernel (sdtw_bi.cuh) on problems [g.first, g.first + count) of one kind: the
 * scratch laid out (hand-over words set to kWfEmpty), the tickets, the two phases and the
 * gradients. Float32 only, as wf_split_launch. */
template <typename T>
int bi_split_launch(Call &call, const SgJob &job, const SgKind &kd, SgArgs<T> &g,
                    int64_t count, double *scratch)
{
    if constexpr (sizeof(T) != sizeof(float)) {
        return TSW_ENOTSUP;
    } else {
        const int64_t K = job.wf_k, L = job.max_len;
        BiArgs b;
        b.K = (int)K;
        b.H = job.wf_rows;
        b.hand = (unsigned long long *)scratch;
        b.rows = (BiPart *)(b.hand + count * 2 * (K - 1) * L);
        b.cols = b.rows + count * 2 * L;
        b.z = (double *)(b.cols + count * 2 * K * L);
        b.ticket = (unsigned *)job.sync;
        if (K > 1)
            TSW_CU(cudaMemsetAsync(b.hand, 0xff, (size_t)(count * 2 * (K - 1) * L) * 8,
                                   call.stream),
                   "cudaMemsetAsync (split hand-over)");
        TSW_CU(cudaMemsetAsync(job.sync, 0, 2 * sizeof(unsigned), call.stream),
               "cudaMemsetAsync (tickets)");
        TSW_CU(bi_launch(g, b, count, kd.max_n, call.stream), "soft-DTW gradient kernel launch");
        return TSW_OK;
    }
}

template <typename T>
int sg_launch_chunks(Call &call, const SgJob &job, const SgKind *kinds, int nkinds, double *R,
                     double *scratch, int64_t per_block, const int64_t *start, int64_t nch,
                     const tsw_exec *ex)
{
    Progress prog{ex, job.count};
    for (int64_t c = 0; c < nch; ++c) {
        const int64_t k0 = start[c], k1 = start[c + 1];
        for (int q = 0; q < nkinds; ++q) {
            const SgKind &kd = kinds[q];
            const int64_t K = job.split;
            SgArgs<T> g;
            memset(&g, 0, sizeof(g));
            g.a = (const T *)kd.a;
            g.b = (const T *)kd.b;
            g.aoff = kd.aoff;
            g.alen = kd.alen;
            g.boff = kd.boff;
            g.blen = kd.blen;
            g.roff = job.d_roff;
            g.first = k0;
            g.dim = job.dim;
            g.cost = (const T *)job.cmat;
            g.cn = job.cn;
            g.cm = job.cm;
            g.R = R;
            const int nt = K ? kSplitRows : threads_for(kd.max_n, job.dtype, job.cost, job.dim);
            bool gy_shared, y_shared;
            const size_t smem = sg_smem_bytes(job.dtype, nt, job.max_len, job.dim, job.cost,
                                              &gy_shared, &y_shared);
            g.gy_shared = gy_shared;
            g.y_shared = y_shared;
            g.ymax = job.max_len;
            g.bound = scratch;
            g.bound_stride = per_block;
            g.gyglob = scratch + 4 * (job.max_len + 1);
            g.gy_stride = per_block;
            g.gxglob = g.gyglob + job.max_len * job.dim;
            g.gx_stride = per_block;
            g.values = (T *)job.values;
            g.vacc = job.vacc;
            g.vlast = q == nkinds - 1;
            g.ga = (T *)kd.ga;
            g.gb = (T *)kd.gb;
            g.gcost = (T *)job.gcost;
            g.cv = kd.cv;
            g.ca = kd.ca;
            g.cb = kd.cb;
            g.accumulate = kd.accumulate;
            g.flag = job.flag;
            g.want_grad = job.want_grad && (kd.ga || kd.gb || job.gcost);
            g.gamma = job.params->gamma;
            g.inv_gamma = 1.0 / job.params->gamma;
            g.window = (int)job.params->window;
            g.radius = job.params->window_radius;
            g.slope = job.params->itakura_max_slope;
            if (job.bi) {
                int rc = bi_split_launch(call, job, kd, g, k1 - k0, scratch);
                if (rc)
                    return rc;
                continue;
            }
            if (job.wf && !job.wf_rows) {
                TSW_CU(wf_dispatch(g, k1 - k0, kd.max_n, job.wf_rb, job.wf_val, call.stream),
                       "soft-DTW gradient kernel launch");
                continue;
            }
            if (job.wf) {
                int rc = wf_split_launch(call, job, kd, g, k1 - k0, scratch);
                if (rc)
                    return rc;
                continue;
            }
            if (!K) {
                TSW_CU(launch_any<T>(g, job.cost, k1 - k0, nt, smem, call.stream),
                       "soft-DTW gradient kernel launch");
                continue;
            }
            /* split: the forward pass, then (zeroed outputs,) the backward pass */
            g.split = (int)K;
            g.ticket = (unsigned *)job.sync;
            g.fflag = job.sync + 1;
            g.bflag = job.sync + 2 + (job.sync_ints - 2) / 2;
            TSW_CU(cudaMemsetAsync(job.sync, 0, (size_t)job.sync_ints * sizeof(int), call.stream),
                   "cudaMemsetAsync (split flags)");
            g.phase = 1;
            TSW_CU(launch_any<T>(g, job.cost, (k1 - k0) * K, nt, smem, call.stream),
                   "soft-DTW gradient kernel launch");
            if (!g.want_grad)
                continue;
            if (!kd.accumulate && !job.cost) {
                const int zb = (int)(k1 - k0 < 4096 ? k1 - k0 : 4096);
                if (kd.ga)
                    sg_zero_rows<T><<<zb, 256, 0, call.stream>>>((T *)kd.ga, kd.aoff, kd.alen,
                                                                 k0, k1 - k0, job.dim, job.flag);
                if (kd.gb)
                    sg_zero_rows<T><<<zb, 256, 0, call.stream>>>((T *)kd.gb, kd.boff, kd.blen,
                                                                 k0, k1 - k0, job.dim, job.flag);
            }
            TSW_CU(cudaMemsetAsync(job.sync, 0, sizeof(int), call.stream),
                   "cudaMemsetAsync (ticket)");
            g.phase = 2;
            TSW_CU(launch_any<T>(g, job.cost, (k1 - k0) * K, nt, smem, call.stream),
                   "soft-DTW gradient kernel launch");
        }
        if (ex->progress) {
            int rc = prog.report(call, k1 - k0);
            if (rc)
                return rc;
        }
    }
    return TSW_OK;
}

int sg_launch(Call &call, const SgJob &job, const SgKind *kinds, int nkinds, void *R,
              void *scratch, int64_t per_block, const int64_t *start, int64_t nch,
              const tsw_exec *ex)
{
    if (job.dtype == TSW_F32)
        return sg_launch_chunks<float>(call, job, kinds, nkinds, (double *)R, (double *)scratch,
                                       per_block, start, nch, ex);
    return sg_launch_chunks<double>(call, job, kinds, nkinds, (double *)R, (double *)scratch,
                                    per_block, start, nch, ex);
}

int copy_in(Call &call, void *dst, const void *src, size_t bytes, const char *what)
{
    if (!bytes)
        return TSW_OK;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, call.stream), what);
    return TSW_OK;
}

int copy_out(Call &call, void *dst, const void *src, size_t bytes, const char *what)
{
    if (!bytes)
        return TSW_OK;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, call.stream), what);
    return TSW_OK;
}

/* Waits for the call and turns the device check's flag into a status. */
int sg_read_flag(Call &call, const int *dflag)
{
    int flag = 0;
    TSW_CU(cudaMemcpyAsync(&flag, dflag, sizeof(int), cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (flag)");
    int rc = call.sync();
    if (rc)
        return rc;
    return flag ? TSW_ENONFINITE : TSW_OK;
}

/* An asynchronous call's check answer: copied to a pinned host word (*slot) in stream order,
 * and read by sg_slot_flag once the call's kernels are queued behind the check (they read
 * the device flag first and write nothing on non-finite input), so that the GPU does not
 * idle while the host launches them after the answer. Without pinned memory (*slot = NULL)
 * the answer is waited for at once, as before. */
int sg_async_flag(Call &call, int *dflag, int **slot)
{
    *slot = nullptr;
    if (!call.async)
        return TSW_OK;
    int *s = pinned_flag_slot();
    if (!s)
        return sg_read_flag(call, dflag);
    *(volatile int *)s = -1;
    TSW_CU(cudaMemcpyAsync(s, dflag, sizeof(int), cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (flag)");
    *slot = s;
    return TSW_OK;
}

int sg_slot_flag(Call &call, int *slot)
{
    int flag = 0;
    const int rc = pinned_flag_wait(slot, call.stream, &flag);
    return rc ? rc : flag ? TSW_ENONFINITE : TSW_OK;
}

/* Host scratch of a call: rsize, roff, chunk starts and the index upload. */
struct SgHost {
    int64_t *buf = nullptr;
    ~SgHost() { tsw__free(buf); }
};

/*
 * The call, or with query != NULL only the bytes of device memory it needs when given a
 * workspace (every problem in one chunk; grad_x/grad_y then only say whether wanted).
 * Device inputs are checked by kernels whose flag the compute kernels read first, so a
 * call synchronises once, at the end (an asynchronous call once, for the check's answer,
 * after its kernels are queued: sg_async_flag).
 * val_only: values without gradients on the wavefront kernel's float32 variant, or
 * TSW_ENOTSUP before any device work when that kernel does not cover the call.
 */
int sg_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
            const tsw_collection *y, void *values, void *grad_x, void *grad_y,
            const tsw_exec *exec, int on_device, size_t *query, bool val_only = false)
{
    int rc;
    HostColl hx, hy;
    if ((rc = hx.init(x)) || (rc = hy.init(y)))
        return rc;
    const int64_t count = x->count;
    const size_t es = tsw__dtype_size(dtype);
    const bool norm = params->normalize != 0;
    const int64_t L = hx.max_len > hy.max_len ? hx.max_len : hy.max_len;
    if (L >= ((int64_t)1 << 30))
        return TSW_EOVERFLOW; /* the kernel indexes rows and columns with int */

    /* the wavefront kernel keeps two float32 probabilities per slot of its skewed layout, the
     * thread-per-row kernel one double per cell of its diagonal-major layout */
    /* wrs: the split's rows per stripe (gradients only), first where it takes the batch:
     * it spreads a batch that one block a problem leaves on part of the SMs over all */
    /* bi: small batches with gradients in two waves at once (sdtw_bi.cuh), wrs rows a
     * stripe. Such a batch without gradients runs the forward sweep of the wavefront kernel
     * (split or one block), whose cells are the same: its values keep the bits they have
     * with gradients */
    int rb = 0, wrs = 0;
    bool bi = false;
    if (wf_eligible(dtype, dim, L, false, params->gamma)) {
        if (!val_only && (wrs = bi_rows(count, L, dim, exec->device_index))) {
            rb = 1, bi = true;
            if (!grad_x && !grad_y) {
                if (int s = wf_split_rows(count, L, dim, exec->device_index))
                    wrs = s, bi = false;
                else if (L <= kWfMaxRows)
                    wrs = 0, bi = false, rb = wf_rows_per_lane(count, L, exec->device_index,
                                                               false, true);
            }
        } else if (!val_only && (wrs = wf_split_rows(count, L, dim, exec->device_index)))
            rb = 1;
        else
            rb = wf_rows_per_lane(count, L, exec->device_index, val_only);
    }
    const bool wf = rb > 0;
    const int64_t wk = wrs ? (L + wrs - 1) / wrs : 0; /* stripes per problem */
    if (val_only && (!wf || grad_x || grad_y || params->window == TSW_WINDOW_ITAKURA))
        return TSW_ENOTSUP;

    /* host scratch: rsize, roff, chunk starts (count + 1), index upload (5 count) */
    SgHost hs;
    size_t hbytes;
    if (tsw__mul_size((size_t)count, 8 * sizeof(int64_t), &hbytes) ||
        hbytes > SIZE_MAX - 64)
        return TSW_EOVERFLOW;
    hs.buf = (int64_t *)tsw__malloc(hbytes + 64);
    if (!hs.buf)
        return TSW_ENOMEM;
    int64_t *rsize = hs.buf, *start = rsize + count, *up = start + count + 1;
    int64_t *roff = up + 4 * count;
    /* the wavefront kernel's slots (split: a region per stripe) */
    auto wcells = [&](int64_t n, int64_t m) {
        if (bi)
            return (double)bi_cells(n, m);
        return wrs ? (double)((n + wrs - 1) / wrs) * (double)wf_cells(wrs, m, rb)
                   : (double)wf_cells(n, m, rb);
    };
    for (int64_t k = 0; k < count; ++k) {
        const double n = (double)hx.len[k], m = (double)hy.len[k];
        double r = wf ? wcells(hx.len[k], hy.len[k]) : (n + m - 1) * n;
        if (val_only || (wf && !grad_x && !grad_y && !bi)) {
            r = 0; /* nothing stored (the wavefront kernel stores only for a backward pass) */
        } else if (norm && wf) {
            r = fmax(r, wcells(hx.len[k], hx.len[k]));
            r = fmax(r, wcells(hy.len[k], hy.len[k]));
        } else if (norm) {
            r = r > (2 * n - 1) * n ? r : (2 * n - 1) * n;
            r = r > (2 * m - 1) * m ? r : (2 * m - 1) * m;
        }
        if (r > 4.0e18)
            return TSW_EOVERFLOW;
        rsize[k] = (int64_t)r;
    }

    const bool one_chunk = query || exec->cuda_workspace;
    Plan plan;
    SgPieces pc;
    memset(&pc, 0, sizeof(pc));
    pc.idx = plan.add((size_t)(5 * count), sizeof(int64_t));
    const size_t xbytes = (size_t)hx.rows * (size_t)dim * es;
    const size_t ybytes = (size_t)hy.rows * (size_t)dim * es;
    if (!on_device) {
        pc.x = plan.add(xbytes);
        pc.y = plan.add(ybytes);
        pc.values = plan.add((size_t)count, es);
        if (grad_x)
            pc.gx = plan.add(xbytes);
        if (grad_y)
            pc.gy = plan.add(ybytes);
    }
    pc.flag = plan.add(sizeof(int));
    /* float32 divergences: R(x, y) - (R(x, x) + R(y, y)) / 2 summed in double, then rounded
     * once (summed in float32, the three values' roundings survive the cancellation) */
    const bool vacc = norm && dtype == TSW_F32;
    if (vacc)
        pc.vacc = plan.add((size_t)count, sizeof(double));
    /* the thread-per-row kernel's boundary rows and accumulators (the wavefront kernel keeps
     * its hand-over in shared memory; split, a problem's stripe edges in 4 L words of 8
     * bytes each and, for kinds that want both gradients, its rows' gradients in L dim
     * floats: wf_split_launch) */
    const bool defer = wrs && (grad_x || grad_y);
    const int64_t per_block = bi   ? bi_scratch(wk, L)
                              : wrs ? (wk - 1) * 4 * L + (defer ? (L * dim + 1) / 2 : 0)
                              : wf ? 0
                                   : 4 * (L + 1) + 2 * L * dim;
    const int64_t K = wf ? 0 : sg_split(count, L, exec->device_index);
    int64_t r_cap, blocks_cap;
    if ((rc = sg_size(rsize, count, per_block * (K ? K : 1), sizeof(double), plan.total,
                      one_chunk, &r_cap, &blocks_cap)))
        return rc;
    const int64_t nch = sg_chunks(rsize, count, r_cap, blocks_cap, roff, start);
    const int64_t slots = blocks_cap * (K ? K : 1);
    pc.scratch = plan.add((size_t)slots * (size_t)per_block, sizeof(double));
    pc.sync = plan.add((size_t)(2 + 2 * slots), sizeof(int));
    pc.R = plan.add((size_t)r_cap, sizeof(double));
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if (query) {
        *query = plan.total;
        return TSW_OK;
    }
    DeviceGuard guard(exec->device_index);
    if (guard.rc)
        return guard.rc;
    Call call;
    tsw_exec ex = *exec;
    if ((rc = call.init(&ex, on_device != 0)) || (rc = call.alloc(&ex, plan.total)))
        return rc;

    /* index arrays: [x offsets, x lengths, y offsets, y lengths, R offsets] */
    memcpy(up, hx.off, (size_t)count * sizeof(int64_t));
    memcpy(up + count, hx.len, (size_t)count * sizeof(int64_t));
    memcpy(up + 2 * count, hy.off, (size_t)count * sizeof(int64_t));
    memcpy(up + 3 * count, hy.len, (size_t)count * sizeof(int64_t));
    /* roff already follows at up + 4 count */
    int64_t *d_idx = (int64_t *)call.at(pc.idx);
    if ((rc = copy_in(call, d_idx, up, (size_t)(5 * count) * sizeof(int64_t), "index upload")))
        return rc;

    const void *xv = x->values, *yv = y->values;
    void *vals = values, *gx = grad_x, *gy = grad_y;
    int *dflag = (int *)call.at(pc.flag);
    int *slot = nullptr; /* asynchronous calls: the check's answer, read after the launches */
    if (!on_device) {
        xv = call.at(pc.x);
        yv = call.at(pc.y);
        vals = call.at(pc.values);
        gx = grad_x ? call.at(pc.gx) : nullptr;
        gy = grad_y ? call.at(pc.gy) : nullptr;
        if ((rc = copy_in(call, (void *)xv, x->values, xbytes, "cudaMemcpyAsync (x)")) ||
            (rc = copy_in(call, (void *)yv, y->values, ybytes, "cudaMemcpyAsync (y)")))
            return rc;
        /* rows outside every series stay as the caller had them */
        if (grad_x && !full_cover(hx) &&
            (rc = copy_in(call, gx, grad_x, xbytes, "cudaMemcpyAsync (grad_x)")))
            return rc;
        if (grad_y && !full_cover(hy) &&
            (rc = copy_in(call, gy, grad_y, ybytes, "cudaMemcpyAsync (grad_y)")))
            return rc;
    } else {
        /* device inputs: checked on the device before anything is written */
        TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), call.stream), "cudaMemsetAsync");
        const int bx = (int)(2 * count < 4096 ? 2 * count : 4096);
        if (dtype == TSW_F32)
            check2_kernel<float><<<bx, 256, 0, call.stream>>>(
                (const float *)xv, d_idx, d_idx + count, (const float *)yv, d_idx + 2 * count,
                d_idx + 3 * count, count, dim, dflag);
        else
            check2_kernel<double><<<bx, 256, 0, call.stream>>>(
                (const double *)xv, d_idx, d_idx + count, (const double *)yv,
                d_idx + 2 * count, d_idx + 3 * count, count, dim, dflag);
        TSW_CU(cudaGetLastError(), "check kernel launch");
        if ((rc = sg_async_flag(call, dflag, &slot)))
            return rc;
    }

    SgKind kinds[3];
    int nk = 0;
    kinds[nk++] = SgKind{xv, yv, d_idx, d_idx + count, d_idx + 2 * count, d_idx + 3 * count,
                         hx.max_len, gx, gy, 1.0, 1.0, 1.0, 0};
    if (norm) {
        kinds[nk++] = SgKind{xv, xv, d_idx, d_idx + count, d_idx, d_idx + count,
                             hx.max_len, gx, gx, -0.5, -0.5, -0.5, 1};
        kinds[nk++] = SgKind{yv, yv, d_idx + 2 * count, d_idx + 3 * count, d_idx + 2 * count,
                             d_idx + 3 * count, hy.max_len, gy, gy, -0.5, -0.5, -0.5, 1};
    }
    SgJob job;
    memset(&job, 0, sizeof(job));
    job.dtype = dtype;
    job.dim = dim;
    job.params = params;
    job.count = count;
    job.h_rsize = rsize;
    job.d_roff = d_idx + 4 * count;
    job.max_len = L;
    job.values = vals;
    job.vacc = vacc ? (double *)call.at(pc.vacc) : nullptr;
    job.want_grad = grad_x || grad_y;
    job.flag = on_device && (!call.async || slot) ? dflag : nullptr;
    job.split = K;
    job.wf = wf;
    job.wf_rb = rb;
    job.wf_rows = wrs;
    job.wf_k = wk;
    job.wf_val = val_only;
    job.bi = bi;
    job.sync = (int *)call.at(pc.sync);
    job.sync_ints = 2 + 2 * slots;
    if ((rc = sg_launch(call, job, kinds, nk, call.at(pc.R), call.at(pc.scratch), per_block,
                        start, nch, &ex)))
        return rc;
    if (!on_device) {
        if ((rc = copy_out(call, values, vals, (size_t)count * es, "cudaMemcpyAsync (values)")) ||
            (grad_x && (rc = copy_out(call, grad_x, gx, xbytes, "cudaMemcpyAsync (grad_x)"))) ||
            (grad_y && (rc = copy_out(call, grad_y, gy, ybytes, "cudaMemcpyAsync (grad_y)"))))
            return rc;
        if ((rc = call.sync()))
            return rc;
    } else if ((!call.async && (rc = sg_read_flag(call, dflag))) ||
               (slot && (rc = sg_slot_flag(call, slot)))) {
        return rc;
    }
    if (ex.progress && ex.progress(ex.progress_user, count, count))
        return TSW_ECANCELED;
    return TSW_OK;
}

int sg_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count, int64_t n,
                 int64_t m, const int64_t *lengths_x, const int64_t *lengths_y,
                 const void *cost, void *values, void *grad_cost, const tsw_exec *exec,
                 int on_device, size_t *query)
{
    int rc;
    const size_t es = tsw__dtype_size(dtype);
    SgHost hs;
    size_t hbytes;
    if (tsw__mul_size((size_t)count, 8 * sizeof(int64_t), &hbytes) ||
        hbytes > SIZE_MAX - 64)
        return TSW_EOVERFLOW;
    hs.buf = (int64_t *)tsw__malloc(hbytes + 64);
    if (!hs.buf)
        return TSW_ENOMEM;
    int64_t *rsize = hs.buf, *start = rsize + count, *up = start + count + 1;
    int64_t *roff = up + 4 * count;
    int64_t L = 0;
    for (int64_t k = 0; k < count; ++k) {
        const int64_t nk = lengths_x ? lengths_x[k] : n, mk = lengths_y ? lengths_y[k] : m;
        up[k] = 0;             /* offsets: unused by cost problems */
        up[count + k] = nk;
        up[2 * count + k] = 0;
        up[3 * count + k] = mk;
        rsize[k] = (nk + mk - 1) * nk;
        L = nk > L ? nk : L;
        L = mk > L ? mk : L;
    }
    size_t cbytes;
    if (L >= ((int64_t)1 << 30) ||
        tsw__mul_size((size_t)count * (size_t)n, (size_t)m * es, &cbytes))
        return TSW_EOVERFLOW;

    const bool one_chunk = query || exec->cuda_workspace;
    Plan plan;
    SgPieces pc;
    memset(&pc, 0, sizeof(pc));
    pc.idx = plan.add((size_t)(5 * count), sizeof(int64_t));
    if (!on_device) {
        pc.cmat = plan.add(cbytes);
        pc.values = plan.add((size_t)count, es);
        if (grad_cost)
            pc.gcost = plan.add(cbytes);
    }
    pc.flag = plan.add(sizeof(int));
    const int64_t per_block = 4 * (L + 1) + 2 * L;
    const int64_t K = sg_split(count, L, exec->device_index);
    int64_t r_cap, blocks_cap;
    if ((rc = sg_size(rsize, count, per_block * (K ? K : 1), sizeof(double), plan.total,
                      one_chunk, &r_cap, &blocks_cap)))
        return rc;
    const int64_t nch = sg_chunks(rsize, count, r_cap, blocks_cap, roff, start);
    const int64_t slots = blocks_cap * (K ? K : 1);
    pc.scratch = plan.add((size_t)slots * (size_t)per_block, sizeof(double));
    pc.sync = plan.add((size_t)(2 + 2 * slots), sizeof(int));
    pc.R = plan.add((size_t)r_cap, sizeof(double));
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if (query) {
        *query = plan.total;
        return TSW_OK;
    }
    DeviceGuard guard(exec->device_index);
    if (guard.rc)
        return guard.rc;
    Call call;
    tsw_exec ex = *exec;
    if ((rc = call.init(&ex, on_device != 0)) || (rc = call.alloc(&ex, plan.total)))
        return rc;
    int64_t *d_idx = (int64_t *)call.at(pc.idx);
    if ((rc = copy_in(call, d_idx, up, (size_t)(5 * count) * sizeof(int64_t), "index upload")))
        return rc;
    const void *cm = cost;
    void *vals = values, *gc = grad_cost;
    int *dflag = (int *)call.at(pc.flag);
    int *slot = nullptr; /* asynchronous calls: the check's answer, read after the launches */
    if (!on_device) {
        cm = call.at(pc.cmat);
        vals = call.at(pc.values);
        gc = grad_cost ? call.at(pc.gcost) : nullptr;
        if ((rc = copy_in(call, (void *)cm, cost, cbytes, "cudaMemcpyAsync (cost)")))
            return rc;
    } else {
        TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), call.stream), "cudaMemsetAsync");
        const int bx = (int)(count < 4096 ? count : 4096);
        if (dtype == TSW_F32)
            cost_check_kernel<float><<<bx, 256, 0, call.stream>>>(
                (const float *)cm, count, n, m, d_idx + count, d_idx + 3 * count, dflag);
        else
            cost_check_kernel<double><<<bx, 256, 0, call.stream>>>(
                (const double *)cm, count, n, m, d_idx + count, d_idx + 3 * count, dflag);
        TSW_CU(cudaGetLastError(), "check kernel launch");
        if ((rc = sg_async_flag(call, dflag, &slot))) /* as sg_grad */
            return rc;
    }
    SgKind kind = SgKind{nullptr, nullptr, d_idx, d_idx + count, d_idx + 2 * count,
                         d_idx + 3 * count, n, nullptr, nullptr, 1.0, 1.0, 1.0, 0};
    SgJob job;
    memset(&job, 0, sizeof(job));
    job.dtype = dtype;
    job.dim = 1;
    job.params = params;
    job.count = count;
    job.h_rsize = rsize;
    job.d_roff = d_idx + 4 * count;
    job.max_len = L;
    job.cost = true;
    job.cmat = cm;
    job.cn = n;
    job.cm = m;
    job.values = vals;
    job.gcost = gc;
    job.want_grad = gc != nullptr;
    job.flag = on_device && (!call.async || slot) ? dflag : nullptr;
    job.split = K;
    job.sync = (int *)call.at(pc.sync);
    job.sync_ints = 2 + 2 * slots;
    if ((rc = sg_launch(call, job, &kind, 1, call.at(pc.R), call.at(pc.scratch), per_block,
                        start, nch, &ex)))
        return rc;
    if (!on_device) {
        if ((rc = copy_out(call, values, vals, (size_t)count * es, "cudaMemcpyAsync (values)")) ||
            (grad_cost &&
             (rc = copy_out(call, grad_cost, gc, cbytes, "cudaMemcpyAsync (grad_cost)"))))
            return rc;
        if ((rc = call.sync()))
            return rc;
    } else if ((!call.async && (rc = sg_read_flag(call, dflag))) ||
               (slot && (rc = sg_slot_flag(call, slot)))) {
        return rc;
    }
    if (ex.progress && ex.progress(ex.progress_user, count, count))
        return TSW_ECANCELED;
    return TSW_OK;
}

} // namespace

/* ---- entry points (called by the dispatch in sdtw_grad.c) -------------------------------- */

int tsw__cuda_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_collection *x, const tsw_collection *y, void *values,
                            void *grad_x, void *grad_y, const tsw_exec *exec, int on_device)
{
    return sg_grad(params, dtype, dim, x, y, values, grad_x, grad_y, exec, on_device, nullptr);
}

int tsw__cuda_soft_dtw_paired_wf(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_collection *x, const tsw_collection *y,
                                 void *values, const tsw_exec *exec, int on_device,
                                 size_t *query)
{
    /* what the wavefront kernel never takes, decided before the collections are read */
    if (!wf_eligible(dtype, dim, 0, false, params->gamma) ||
        params->window == TSW_WINDOW_ITAKURA)
        return TSW_ENOTSUP;
    return sg_grad(params, dtype, dim, x, y, values, nullptr, nullptr, exec, on_device, query,
                   true);
}

int tsw__cuda_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count,
                                 int64_t n, int64_t m, const int64_t *lengths_x,
                                 const int64_t *lengths_y, const void *cost, void *values,
                                 void *grad_cost, const tsw_exec *exec, int on_device)
{
    return sg_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y, cost, values,
                        grad_cost, exec, on_device, nullptr);
}

int tsw__cuda_soft_dtw_grad_workspace(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                      const tsw_collection *x, const tsw_collection *y,
                                      int want_grad_x, int want_grad_y, const tsw_exec *exec,
                                      size_t *bytes)
{
    static char mark;
    return sg_grad(params, dtype, dim, x, y, nullptr, want_grad_x ? &mark : nullptr,
                   want_grad_y ? &mark : nullptr, exec, 1, bytes);
}

int tsw__cuda_soft_dtw_cost_grad_workspace(const tsw_params *params, tsw_dtype dtype,
                                           int64_t count, int64_t n, int64_t m,
                                           const int64_t *lengths_x, const int64_t *lengths_y,
                                           int want_grad, const tsw_exec *exec, size_t *bytes)
{
    static char mark;
    return sg_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y, nullptr, nullptr,
                        want_grad ? &mark : nullptr, exec, 1, bytes);
}
