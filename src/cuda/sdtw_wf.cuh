/*
 * Soft-DTW value and gradient of float32 series (squared Euclidean cost, dim 1 or 2, up to
 * kWfMaxRows rows per series): a register-blocked warp wavefront that keeps the soft-argmin
 * probabilities, so the backward pass needs no exponential. Included by sdtw_grad.cu (inside
 * its anonymous namespace: SgArgs, SgBand); sg_grad picks it for the calls it covers.
 *
 * Mapping: one block per problem (pair), W warps; lane L of the block (0 .. 32 W - 1) owns
 * the RB rows i = r0 + r, r0 = L RB (RB = 1, 2, 4 or 8: wf_rows_per_lane), and at step s
 * works on cell (i, s - i) of each: its rows' cells of one step lie on one anti-diagonal,
 * so they are independent (RB chains for the scheduler to interleave, where the thread-per-row kernel has one and a
 * barrier per anti-diagonal). A cell's up neighbour is the row above's cell of the step
 * before, its diagonal one the up neighbour of the step before; the lane's first row takes
 * them from lane L - 1's last row by a warp shuffle (between warps through a small shared
 * buffer and one barrier per step). b's points travel down the rows with the wavefront in
 * the same way (only lane 0 reads b), so no lane ever indexes b by its own column.
 * R is kept in double, as the thread-per-row kernel does for float32 (sdtw_grad.cu, SgOps):
 * only the exponentials, the logarithm and the reciprocal run on the float32 MUFU units,
 * with O(1) arguments.
 *
 * Forward: per cell R (double, registers only) and the probabilities that it takes its
 * diagonal and its up neighbour as predecessor (sdtw_grad.h, TSW_SDTW_PROB), stored as a
 * float2 at ((s RB + r) Lp + L), Lp = the lanes that own rows: a warp's stores of one row
 * slot are one contiguous 256-byte line. (Lp RB + m - 1) RB Lp slots, about twice the
 * cells; only the grid's cells are written and read (8 bytes each).
 * Backward: the steps in reverse, E(i, j) = E(i+1, j) pu(i+1, j) + E(i, j+1) pl(i, j+1) +
 * E(i+1, j+1) pd(i+1, j+1) (TSW_SDTW_E_CELL, pl = 1 - pd - pu) in float32: E is a probability
 * in [0, 1] and its terms are products of probabilities (no cancellation). The successors
 * are the row's and the next row's cells of the two steps before (lane L + 1's first row
 * by a shuffle); the probabilities are loaded two steps ahead. The gradient is fused:
 * d/dx_i += 2 E (x_i - y_j) per row in registers; d/dy_j is summed by a partial sum that
 * travels up the rows with y_j, from the last row to row 0 of lane 0, which writes it.
 * Padding (rows >= n of the last lane, cells with j outside [0, m)) never stores and has
 * E = 0; cells outside a Sakoe-Chiba band get R = +inf, probabilities 0 and E = 0.
 */

constexpr int kWfMaxWarps = 16;   /* warps per block with 1 row per lane */
constexpr int kWfRbWarps = 8;     /* warps per block with 2, 4 or 8 rows per lane */
constexpr int kWfMaxRows = 32 * kWfRbWarps * 8; /* with 8 rows per lane */
constexpr int kWfStripeWarps = 8; /* split: warps per stripe (and a transfer warp) */

/* The most warps a block of rb rows per lane runs (the kernel's launch bounds). */
__host__ __device__ constexpr int wf_max_warps(int rb)
{
    return rb == 1 ? kWfMaxWarps : kWfRbWarps;
}

/*
 * Split (SPLIT instances, gradients only, 1 row per lane): a batch too small to give
 * every SM a block runs each pair as K stripes of g.wf_rows rows, one block per stripe, in
 * two launches, forward (g.phase 1) and backward (2). A stripe is the one-block kernel over
 * its rows, with local row and step numbers; what crosses a stripe's edge goes through
 * global memory, one 8-byte word per value and column, set to all ones (kWfEmpty, a pattern
 * no value takes) before the launch, so that a word is its own flag:
 *   forward: R of the stripe above's last row (a double), read by lane 0 of warp 0 where
 *            the one-block kernel takes R(-1, j) = +inf;
 *   backward: E, pd and pu of the stripe below's first row, each with a float of the
 *            column gradient's partial sum (dim 1 or 2), read by the stripe's last lane
 *            where the one-block kernel takes zeros.
 * A stripe's block has one warp more than its rows need, the transfer warp (warp NW, after
 * the NW compute warps), which does all of the global traffic: between two barriers it
 * reads the words the next step needs (kWfAhead columns ahead, a ring of registers) into
 * a hand-over slot of shared memory of its own, which warp 0 (forward) or the last warp
 * (backward) reads as the one-block kernel reads a neighbour warp's, and it copies the
 * stripe's own edge row (the last warp's or warp 0's slot of the step before) out for the
 * stripe below or above. The compute warps so run the one-block kernel's step as it is,
 * with no global load, store or test of its own (the step ran 1.7x slower with them:
 * bench/RESULTS.md), and every block meets one barrier more than the steps (the
 * transfer warp's first slot).
 * Blocks take a ticket when they start (atomicAdd) and work on the stripe it names: top
 * down in the forward launch, bottom up in the backward one, so a block only ever waits on
 * a block that already runs, whatever the residency (no deadlock next to other work).
 * The words cross with relaxed gpu-scope loads and stores.
 * Every value crosses bit for bit, so the results equal the one-block kernel's exactly:
 * the column gradient is written by stripe 0 only (it has the whole column's sum), and
 * where the row gradient may be the same memory (both wanted, g.wf_defer) the stripes
 * below stripe 0 leave their rows in g.wf_gx for wf_rows_after, which adds them after the
 * launch, in the one-block kernel's order (columns first).
 */
constexpr unsigned long long kWfEmpty = ~0ull;
constexpr int kWfAhead = 4;               /* columns the transfer warp loads ahead */
constexpr int kWfSplitMaxLen = 16384;     /* longest series the split takes */

__device__ __forceinline__ unsigned long long wf_ld(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.b64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void wf_st(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.b64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* Two floats as one word: lo (E or a probability, never all ones) and hi. */
__device__ __forceinline__ unsigned long long wf_pack(float lo, float hi)
{
    return ((unsigned long long)__float_as_uint(hi) << 32) | __float_as_uint(lo);
}
__device__ __forceinline__ float wf_lo(unsigned long long w)
{
    return __uint_as_float((unsigned)w);
}
__device__ __forceinline__ float wf_hi(unsigned long long w)
{
    return __uint_as_float((unsigned)(w >> 32));
}

#include "cuda/sdtw_wf_cell.cuh"

/*
 * The forward transfer warp of a stripe (sdtw_wf_kernel's split, sdtw_bi_kernel), steps
 * c = c0 .. c1 with a barrier each: R(i0 - 1, c) of the stripe above's last row (fin; NULL:
 * no stripe above) for warp 0's step c, into the warp's slot (NW) of step c - 1 in hf
 * ([2][NS] doubles; +inf where not read: c >= cr or no stripe above), and column c - 1 - nl
 * of the stripe's last row, which the last warp's slot of step c - 2 holds, out to fout
 * (NULL: no stripe below). Loads run kWfAhead columns ahead: w[u] has column c of
 * (c - c0) % D = u (the loop unrolled by D, so the ring is registers), and a word not yet
 * written is read again until it is.
 */
__device__ __forceinline__ void wf_fwd_transfer(const unsigned long long *fin,
                                                unsigned long long *fout, double *hf, int NS,
                                                int NW, int nl, int m, int c0, int c1, int cr)
{
    const int lane = threadIdx.x & 31;
    unsigned long long w[kWfAhead];
#pragma unroll
    for (int u = 0; u < kWfAhead; ++u)
        w[u] = fin && c0 + u < cr ? wf_ld(fin + c0 + u) : kWfEmpty;
    for (int cb = c0; cb <= c1; cb += kWfAhead) {
#pragma unroll
        for (int u = 0; u < kWfAhead; ++u) {
            const int c = cb + u;
            if (c > c1)
                break;
            double v = TSW_INF_F64;
            if (fin && c < cr) {
                unsigned long long x = w[u];
                while (x == kWfEmpty)
                    x = wf_ld(fin + c);
                v = __longlong_as_double((long long)x);
                w[u] = c + kWfAhead < cr ? wf_ld(fin + c + kWfAhead) : kWfEmpty;
            }
            const int j = c - 1 - nl;
            if (lane == 0) {
                hf[((c - 1) & 1) * NS + NW] = v;
                if (fout && j >= 0 && j < m)
                    wf_st(fout + j,
                          (unsigned long long)__double_as_longlong(hf[(c & 1) * NS + NW - 1]));
            }
            __syncthreads();
        }
    }
}

/* The type of R: double for the gradients, float for values only (VAL). */
template <bool VAL> struct WfReal {
    using T = double;
};
template <> struct WfReal<true> {
    using T = float;
};

/* Dynamic shared memory of a block of W warps: the hand-over between warps, a slot a warp,
 * forward [2][W][1 + DK] doubles (R as [2][W] doubles, then y as [2][W][DK] floats) and
 * backward [2][W][3 + 2 DK] floats, then b ([ymax][dim] floats). */
__host__ __device__ inline size_t wf_smem_bytes(int warps, int64_t ymax, int64_t dim)
{
    return (size_t)2 * warps * ((1 + dim) * sizeof(double) + (3 + 2 * dim) * sizeof(float)) +
           (size_t)ymax * dim * sizeof(float) + 16;
}

/* Elements (float2) a problem of n x m cells keeps with rb rows per lane: steps x rows per
 * lane x owner lanes. */
__host__ __device__ inline int64_t wf_cells(int64_t n, int64_t m, int rb)
{
    const int64_t lp = (n + rb - 1) / rb;
    return (lp * rb + m - 1) * rb * lp;
}

/*
 * CM instances (cost matrices, DK = 1, one row per lane): the cell's cost is read from the
 * matrix of doubles that sdtw_mat.cuh formed, instead of being formed from x_i and y_j, and
 * the backward pass writes E(i, j) as a float into the low word of the cell's own slot
 * instead of fusing the inputs' gradients; b travels nowhere. The matrix lies in the
 * probabilities' own slots: a lane reads its cell's cost (cp.async, below) before it
 * stores the cell's probabilities over it, and loads them (the backward pass' prefetch)
 * before it stores E over the first: one lane owns a slot, so its program order is the
 * memory's. Problem p's matrix lies at R + g.wf_coff[p] (chunk-relative doubles) in the
 * probabilities' skewed layout (WF_AT: a stripe's cell (i, j) at (i + j) Lp + i, sm_slot),
 * so that a warp's step reads and writes 32 consecutive floats: the row-major layout read
 * a sector a lane, and those 32 L1 wavefronts an instruction made the step 2.3x slower
 * (bench/RESULTS.md). The forward pass's costs come kCmAhead steps ahead through a ring in
 * shared memory (cp.async, one group a step), so their latency stays off the step.
 */
constexpr int kCmAhead = 7;
static_assert((kCmAhead & (kCmAhead + 1)) == 0, "the ring's slots: a power of two");

template <int DK, bool BAND, int RB, bool VAL, bool SPLIT, bool CM = false>
/* (launch bounds: 16 warps of one row per lane for the one-block instances; 8 warps
 * elsewhere, whose registers 512 threads would cap: measured slower, bench/RESULTS.md) */
__global__ void __launch_bounds__(32 * (SPLIT ? kWfStripeWarps + 1 : wf_max_warps(RB)), 1)
    sdtw_wf_kernel(SgArgs<float> g)
{
    static_assert(!SPLIT || (!VAL && RB == 1), "split instances: gradients, 1 row per lane");
    static_assert(!CM || (DK == 1 && RB == 1), "cost-matrix instances: DK = 1, RB = 1");
    using RT = typename WfReal<VAL>::T;
    extern __shared__ __align__(16) unsigned char wf_smem[];
    /* device inputs found non-finite by the check kernels: write nothing */
    if (g.flag && *(volatile const int *)g.flag)
        return;
    const unsigned FULL = 0xffffffffu;
    /* NS hand-over slots, one a warp; NW compute warps (split: warp NW transfers) */
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, NS = blockDim.x >> 5;
    const int NW = SPLIT ? NS - 1 : NS;
    const bool sync = SPLIT || NW > 1; /* a barrier a step */
    int64_t p = g.first + blockIdx.x;
    int q = 0; /* split: the stripe */
    if constexpr (SPLIT) {
        __shared__ unsigned wf_ticket;
        if (tid == 0)
            wf_ticket = atomicAdd(g.ticket, 1u);
        __syncthreads();
        p = g.first + wf_ticket / g.wf_k;
        q = (int)(wf_ticket % g.wf_k);
        if (g.phase == 2)
            q = g.wf_k - 1 - q; /* bottom up */
    }
    const int n = (int)g.alen[p], m = (int)g.blen[p];
    /* split: the stripe's first row, its rows and whether stripes lie above and below */
    const int i0 = SPLIT ? q * g.wf_rows : 0;
    if (SPLIT && i0 >= n)
        return;
    const int nl = SPLIT ? (n - i0 < g.wf_rows ? n - i0 : g.wf_rows) : n;
    const bool above = SPLIT && q > 0, below = SPLIT && i0 + nl < n;
    const int Lp = (nl + RB - 1) / RB; /* lanes that own rows (<= 32 NW: host) */
    const int S = nl + m - 1;          /* steps: cell (i0 + i, j) at step i + j */
    const int L = tid, r0 = L * RB;
    const RT INF = (RT)TSW_INF_F64;
    const SgBand bd(g.window, g.radius, n, m);
    /* split: the hand-over words of this problem's stripe edges, [edge][4 ymax]: forward R
     * at [0, ymax), backward [column][E, pd, pu] at [ymax, 4 ymax) */
    unsigned long long *hw = nullptr;
    if constexpr (SPLIT)
        hw = g.wf_hand + (p - g.first) * (int64_t)(g.wf_k - 1) * 4 * g.ymax;

    double *hf = (double *)wf_smem;                   /* [2][NS][1 + DK] */
    float *hb = (float *)(hf + 2 * NS * (1 + DK));    /* [2][NS][3 + 2 DK] */
    float *ys = hb + 2 * NS * (3 + 2 * DK);           /* b: [m][DK] */
    if constexpr (!CM) {
        const float *Bg = g.b + g.boff[p] * DK;
        for (int k = tid; k < m * DK; k += blockDim.x)
            ys[k] = Bg[k];
    }
    /* CM: the stripe's region of the cost (then E) matrix, the probabilities' layout */
    double *Ce = nullptr;
    if constexpr (CM) {
        Ce = g.R + g.wf_coff[p];
        if constexpr (SPLIT)
            Ce += (int64_t)q * wf_cells(g.wf_rows, m, 1);
    }
    /* the hand-over slots read before any warp wrote them hold cells off the grid */
    for (int k = tid; k < 2 * NS; k += blockDim.x)
        hf[k] = INF;
    for (int k = tid; k < 2 * NS * DK; k += blockDim.x)
        ((float *)(hf + 2 * NS))[k] = 0.f;
    for (int k = tid; k < 2 * NS * (3 + 2 * DK); k += blockDim.x)
        hb[k] = 0.f;
    float xf[RB][DK];
    RT xd[RB][DK];
    if constexpr (!CM) {
        const float *A = g.a + (g.aoff[p] + i0) * DK;
#pragma unroll
        for (int r = 0; r < RB; ++r)
#pragma unroll
            for (int k = 0; k < DK; ++k) {
                xf[r][k] = r0 + r < nl ? A[(int64_t)(r0 + r) * DK + k] : 0.f;
                xd[r][k] = (RT)xf[r][k];
            }
    } else {
#pragma unroll
        for (int r = 0; r < RB; ++r)
#pragma unroll
            for (int k = 0; k < DK; ++k)
                xf[r][k] = 0.f, xd[r][k] = 0;
    }
    __syncthreads();
    float2 *P = (float2 *)g.R + g.roff[p];
    if constexpr (SPLIT)
        P += (int64_t)q * wf_cells(g.wf_rows, m, RB); /* the stripe's own region */
    const double k2 = g.inv_gamma * 1.4426950408889634, gl = g.gamma * 0.6931471805599453;
    const float k2f = (float)k2, glf = (float)gl;
#define WF_AT(s, r) (((int64_t)(s) * RB + (r)) * Lp + L)

    const bool gx_on = g.ga != nullptr, gy_on = g.gb != nullptr;
    /* ---- forward: row r of the lane at step s is cell (i0 + r0 + r, s - r0 - r) ---- */
    if (!SPLIT || g.phase == 1) {
        /* the hand-over between warps: R as doubles [2][NS], then y as floats [2][NS][DK] */
        float *hfy = (float *)(hf + 2 * NS);
        if (SPLIT && warp == NW) {
            /* the transfer warp (wf_fwd_transfer) over the steps, c = 0 before the barrier ahead
             * of them */
            const unsigned long long *fin = above ? hw + (int64_t)(q - 1) * 4 * g.ymax : nullptr;
            unsigned long long *fout = below ? hw + (int64_t)q * 4 * g.ymax : nullptr;
            wf_fwd_transfer(fin, fout, hf, NS, NW, nl, m, 0, S, m);
            /* the last row's last column, m - 1, computed at the last step */
            if (below && lane == 0)
                wf_st(fout + m - 1,
                      (unsigned long long)__double_as_longlong(hf[((S + 1) & 1) * NS + NW - 1]));
        } else {
            RT prev[RB];      /* R(i, j - 1): the row's cell of the step before */
            RT dg[RB];        /* R(i - 1, j - 1): the up neighbour of the step before */
            float yv[RB][DK]; /* y_j of the row's cell, passed down the rows step by step */
#pragma unroll
            for (int r = 0; r < RB; ++r) {
                prev[r] = INF;
                dg[r] = (L == 0 && r == 0 && !above) ? (RT)0 : INF; /* R(-1, -1) = 0 */
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    yv[r][k] = 0.f;
            }
            /* the steps where this warp has cells: its rows' j = s - i in [0, m). Before and
             * after them it only meets the barriers (a warp off the wavefront hands over
             * nothing: what the next warp's first row reads then is a cell off the grid, j < 0
             * or j >= m, and so is the cell it computes from it) */
            const int wl = (warp + 1) * 32 < Lp ? (warp + 1) * 32 : Lp; /* its owner lanes' end */
            const int wa0 = warp * 32 * RB, wa1 = wl * RB - 1 + m - 1;
            const int sa = wa0 < S ? wa0 : S;
            const int sb = wa1 + 1 < sa ? sa : wa1 + 1 < S ? wa1 + 1 : S; /* sa <= sb <= S */
            /* the rows whose probabilities are stored (rows of the grid; the columns are tested
             * per step) */
            bool keep[RB];
#pragma unroll
            for (int r = 0; r < RB; ++r)
                keep[r] = !VAL && g.want_grad && r0 + r < nl;
            /* CM: the cost of the row's cell of step s, copied kCmAhead steps ahead into
             * slot s % (kCmAhead + 1) of the lane's ring (the slot read the step before:
             * never the one being read), one cp.async group a step (empty off the grid:
             * such a cell's value is never used by a cell of the grid, its cost reads 0) */
            double *ring = (double *)ys; /* (CM: no b) [kCmAhead + 1][blockDim] */
#define WF_CLOAD(s_)                                                                          \
    {                                                                                         \
        const int j_ = (s_)-L;                                                                \
        if (L < nl && (unsigned)j_ < (unsigned)m)                                             \
            __pipeline_memcpy_async(ring + ((s_) & kCmAhead) * blockDim.x + tid,              \
                                    Ce + (int64_t)(s_)*Lp + L, sizeof(double));               \
        __pipeline_commit();                                                                  \
    }
            if constexpr (CM) {
#pragma unroll
                for (int u = 0; u < kCmAhead; ++u)
                    WF_CLOAD(sa + u);
            }
            if constexpr (SPLIT)
                __syncthreads(); /* the transfer warp's first slot */
            for (int s = 0; s < sa; ++s)
                if (sync)
                    __syncthreads();
            for (int s = sa; s < sb; ++s) {
                /* lane L - 1's last row, as it was after the step before; lane 0 takes the warp
                 * above's (or row -1's) instead. Every lane reads that value (one broadcast
                 * load, a warp-uniform branch) and lane 0 selects it: no divergent branch in
                 * the step */
                RT uR = __shfl_up_sync(FULL, prev[RB - 1], 1);
                float uY[DK];
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    uY[k] = __shfl_up_sync(FULL, yv[RB - 1][k], 1);
                RT hR;
                float hY[DK];
                if (warp == 0) {
                    /* R(-1, j), or split the stripe above's last row (the transfer warp's) */
                    if constexpr (SPLIT)
                        hR = (RT)hf[((s & 1) ^ 1) * NS + NW];
                    else
                        hR = INF;
#pragma unroll
                    for (int k = 0; k < DK; ++k)
                        hY[k] = !CM && s < m ? ys[s * DK + k] : 0.f;
                } else {
                    const int h = ((s & 1) ^ 1) * NS + warp - 1;
                    hR = (RT)hf[h];
#pragma unroll
                    for (int k = 0; k < DK; ++k)
                        hY[k] = hfy[h * DK + k];
                }
                uR = lane == 0 ? hR : uR;
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    uY[k] = lane == 0 ? hY[k] : uY[k];
                RT nR[RB];
#pragma unroll
                for (int r = 0; r < RB; ++r) {
                    const int i = r0 + r, j = s - i;
                    const RT up = r > 0 ? prev[r - 1] : uR;
                    RT cost = 0; /* cost.h's squared Euclidean cost (gradients: in double) */
                    if constexpr (CM) {
                        __pipeline_wait_prior(kCmAhead - 1);
                        cost = (unsigned)j < (unsigned)m && L < nl
                                   ? (RT)ring[(s & kCmAhead) * blockDim.x + tid]
                                   : (RT)0;
                    } else {
#pragma unroll
                        for (int k = 0; k < DK; ++k) {
                            const RT df = xd[r][k] - (RT)(r > 0 ? yv[r - 1][k] : uY[k]);
                            cost += df * df;
                        }
                    }
                    /* a cell with j < 0 needs no test: its three predecessors lie at columns
                     * < 0 too, all +inf (R(-1, -1) = 0 is row 0's diagonal at j = 0), so the
                     * cell gives +inf and probabilities 0 */
                    RT rr;
                    float pd = 0.f, pu = 0.f;
                    if constexpr (VAL)
                        rr = wf_cell_val(dg[r], up, prev[r], cost, k2f, glf);
                    else
                        wf_cell(dg[r], up, prev[r], cost, k2f, glf, rr, pd, pu);
                    if (BAND && !bd.admits(i0 + i, j)) {
                        rr = INF;
                        pd = pu = 0.f;
                    }
                    nR[r] = rr;
                    if (keep[r] && (unsigned)j < (unsigned)m)
                        P[WF_AT(s, r)] = make_float2(pd, pu);
                }
                if constexpr (CM) {
                    WF_CLOAD(s + kCmAhead);
                }
#pragma unroll
                for (int r = RB - 1; r >= 0; --r) {
                    dg[r] = r > 0 ? prev[r - 1] : uR;
                    prev[r] = nR[r];
#pragma unroll
                    for (int k = 0; k < DK; ++k)
                        yv[r][k] = r > 0 ? yv[r - 1][k] : uY[k];
                }
                if (sync) {
                    /* (split: the last warp's slot is the transfer warp's to send below) */
                    if (lane == 31 && (SPLIT || warp + 1 < NW)) {
                        const int h = (s & 1) * NS + warp;
                        hf[h] = (double)prev[RB - 1];
#pragma unroll
                        for (int k = 0; k < DK; ++k)
                            hfy[h * DK + k] = yv[RB - 1][k];
                    }
                    __syncthreads();
                }
            }
#undef WF_CLOAD
            for (int s = sb; s < S; ++s)
                if (sync)
                    __syncthreads();
            /* the last cell (n - 1, m - 1) is computed at the last step, S - 1 */
            if (i0 + nl == n) {
#pragma unroll
                for (int r = 0; r < RB; ++r)
                    if (r0 + r == nl - 1)
                        sg_put_value(g, p, g.cv * (double)prev[r]);
            }
        }
    }
    if (!g.want_grad || (!CM && !gx_on && !gy_on) || (SPLIT && g.phase == 1))
        return; /* (always so for VAL: sg_grad, val_only) */

    /* ---- backward: the steps in reverse; row r at step s is cell (i, j) = (r0 + r, s - i),
     * its successors (i + 1, j) and (i, j + 1) were computed the step before (rows r + 1
     * and r), (i + 1, j + 1) two steps before (row r + 1) ---- */
    float Ep[RB];   /* E(i, j + 1) */
    float2 pp[RB];  /* its probabilities */
    float Edg[RB], pdg[RB]; /* E and pd of (i + 1, j + 1) */
    float yb[RB][DK];       /* y_j, passed up the rows */
    float gya[RB][DK];      /* column j's gradient summed over the rows below, passed up */
    float gx[RB][DK];
#pragma unroll
    for (int r = 0; r < RB; ++r) {
        Ep[r] = Edg[r] = pdg[r] = 0.f;
        /* the last cell's successor is the virtual cell (n, m) with E = 1, as its diagonal
         * with probability 1: E(n - 1, m - 1) = 1 x 1 + 0 exactly at the first step */
        if (i0 + nl == n && r0 + r == nl - 1)
            Edg[r] = pdg[r] = 1.f;
        pp[r] = make_float2(0.f, 0.f);
#pragma unroll
        for (int k = 0; k < DK; ++k)
            yb[r][k] = gya[r][k] = gx[r][k] = 0.f;
        /* y travels up the rows one row a step, from the last owner's last row (which
         * reads b): the last owner's rows below the grid (RB > 1) start with the y that
         * step S would have given them, so that row nl - 1 has y_(m - 1) at step S - 1 */
        if (!CM && L == Lp - 1 && r0 + r >= nl) {
            const int j = S - (r0 + r);
#pragma unroll
            for (int k = 0; k < DK; ++k)
                yb[r][k] = (unsigned)j < (unsigned)m ? ys[j * DK + k] : 0.f;
        }
    }
    float *gbo = gy_on ? g.gb + g.boff[p] * DK : nullptr;
    /* own probabilities, loaded PF steps ahead (pf[k]: step s - k at the loop's step s);
     * invalid cells read as 0. o: WF_AT(s, 0), the loop's offset moves down by RB Lp a step
     * (no 64-bit index products per load). A step's own probabilities go to the hand-over
     * slot at its end, so a load has PF steps to arrive. The split's stripes waited on
     * them with 2 (Nsight Compute: a fifth of the backward's stall samples at that store)
     * and run 8-10% faster with 6; the one-block instances keep 2: with 6, B=512 256x256
     * ran 7% slower (why was not found) and the others no faster (H100,
     * bench/RESULTS.md) */
    constexpr int PF = SPLIT ? 6 : 2;
    float2 pf[PF][RB];
    const int64_t step_at = (int64_t)RB * Lp;
    bool rowok[RB]; /* the lane's rows of the grid */
#pragma unroll
    for (int r = 0; r < RB; ++r)
        rowok[r] = r0 + r < nl;
#define WF_LOAD(dst, s, o)                                                                    \
    _Pragma("unroll") for (int r = 0; r < RB; ++r)                                            \
    {                                                                                         \
        const int j_ = (s)-r0 - r;                                                            \
        dst[r] = ((unsigned)j_ < (unsigned)m && rowok[r]) ? P[(o) + (int64_t)r * Lp]          \
                                                          : make_float2(0.f, 0.f);            \
    }
#pragma unroll
    for (int k = 0; k < PF; ++k)
        WF_LOAD(pf[k], S - 1 - k, WF_AT(S - 1 - k, 0));
    int64_t o2 = WF_AT(S - 1 - PF, 0); /* step s - PF of the loop's step s */
    const bool last_owner = L == Lp - 1;
    if (SPLIT && warp == NW) {
        /* the transfer warp: E, pd and pu of the stripe below's first row at column
         * c = s + 1 - nl (with the column gradient's partial sum) for the last warp's step
         * s, into its slot (NW) of step s + 1 (zeros off the grid or with no stripe below;
         * c = m - 1 before the barrier ahead of the steps), and this stripe's first row,
         * column s + 1, which warp 0's slot of step s + 1 holds, out for the stripe above.
         * Columns descend; loads run kWfAhead columns ahead as in the forward pass */
        const unsigned long long *bin = below ? hw + (int64_t)q * 4 * g.ymax + g.ymax : nullptr;
        unsigned long long *bout = above ? hw + (int64_t)(q - 1) * 4 * g.ymax + g.ymax : nullptr;
        unsigned long long w[kWfAhead][3];
#pragma unroll
        for (int u = 0; u < kWfAhead; ++u)
#pragma unroll
            for (int k = 0; k < 3; ++k)
                w[u][k] = below && m - 1 - u >= 0 ? wf_ld(bin + 3 * (m - 1 - u) + k) : kWfEmpty;
        /* t: the columns taken; the slot of step S - t (t = 0: before the steps) */
        for (int t0 = 0; t0 <= S; t0 += kWfAhead) {
#pragma unroll
            for (int u = 0; u < kWfAhead; ++u) {
                const int t = t0 + u, st = S - t, c = m - 1 - t;
                if (t > S)
                    break;
                unsigned long long x[3] = {0ull, 0ull, 0ull};
                if (below && c >= 0) {
#pragma unroll
                    for (int k = 0; k < 3; ++k) {
                        x[k] = w[u][k];
                        while (x[k] == kWfEmpty)
                            x[k] = wf_ld(bin + 3 * c + k);
                        w[u][k] = c - kWfAhead >= 0 ? wf_ld(bin + 3 * (c - kWfAhead) + k)
                                                    : kWfEmpty;
                    }
                }
                if (lane == 0) {
                    float *h = hb + ((st & 1) * NS + NW) * (3 + 2 * DK);
                    h[0] = wf_lo(x[0]);
                    h[1] = wf_lo(x[1]);
                    h[2] = wf_lo(x[2]);
                    h[3 + DK] = wf_hi(x[0]);
                    if (DK > 1)
                        h[3 + 2 * DK - 1] = wf_hi(x[1]);
                    if (above && st + 1 < m) {
                        const float *h0 = hb + ((st + 1) & 1) * NS * (3 + 2 * DK);
                        unsigned long long *o = bout + 3 * (st + 1);
                        wf_st(o, wf_pack(h0[0], h0[3 + DK]));
                        wf_st(o + 1, wf_pack(h0[1], DK > 1 ? h0[3 + 2 * DK - 1] : 0.f));
                        wf_st(o + 2, wf_pack(h0[2], 0.f));
                    }
                }
                __syncthreads();
            }
        }
        /* the first row's column 0, computed at step 0 */
        if (above && lane == 0) {
            const float *h0 = hb;
            wf_st(bout, wf_pack(h0[0], h0[3 + DK]));
            wf_st(bout + 1, wf_pack(h0[1], DK > 1 ? h0[3 + 2 * DK - 1] : 0.f));
            wf_st(bout + 2, wf_pack(h0[2], 0.f));
        }
    } else {
        if constexpr (SPLIT)
            __syncthreads(); /* the transfer warp's first slot */
        /* unrolled by the depth of the load pipeline, for the registers to rotate by renaming
         * (where a copy waits for each load to arrive). The compiler still rotates them by
         * copies, the predicated load's register being preset to zero: Nsight Compute found
         * the split backward waiting at such a copy (bench/RESULTS.md) */
#pragma unroll(PF + 1)
        for (int s = S - 1; s >= 0; --s) {
            float2 pl2[RB];
            WF_LOAD(pl2, s - PF, o2);
            o2 -= step_at;
            /* (every warp runs every step here: skipping the steps off the wavefront, as the
             * forward pass does, cost more than it saved, measured) */
            /* lane L + 1's first row, as it was after the step before (s + 1) */
            float dE = __shfl_down_sync(FULL, Ep[0], 1);
            float dPx = __shfl_down_sync(FULL, pp[0].x, 1);
            float dPy = __shfl_down_sync(FULL, pp[0].y, 1);
            float dY[DK], dG[DK];
#pragma unroll
            for (int k = 0; k < DK; ++k) {
                dY[k] = __shfl_down_sync(FULL, yb[0][k], 1);
                dG[k] = __shfl_down_sync(FULL, gya[0][k], 1);
            }
            /* lane 31 takes the warp below's first row instead (zeros below the last warp; split:
             * the stripe below's first row, the transfer warp's slot), and the last owner has no
             * rows below (but for that stripe's): y of its last row from b itself. As in the
             * forward pass, the values are read by every lane of the warp concerned (warp-uniform
             * branches, broadcast loads) and selected, so the step has no divergent branch */
            {
                float hE = 0.f, hPx = 0.f, hPy = 0.f, hY[DK], hG[DK];
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    hY[k] = hG[k] = 0.f;
                if (SPLIT || warp + 1 < NW) {
                    const float *h = hb + (((s & 1) ^ 1) * NS + warp + 1) * (3 + 2 * DK);
                    hE = h[0];
                    hPx = h[1];
                    hPy = h[2];
#pragma unroll
                    for (int k = 0; k < DK; ++k) {
                        hY[k] = h[3 + k];
                        hG[k] = h[3 + DK + k];
                    }
                }
                float lY[DK]; /* the last owner's: b at its last row's column */
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    lY[k] = 0.f;
                if (!CM && warp == (Lp - 1) >> 5) {
                    const int j = s - (r0 + RB - 1);
#pragma unroll
                    for (int k = 0; k < DK; ++k)
                        lY[k] = j >= 0 && j < m ? ys[j * DK + k] : 0.f;
                }
                const bool l31 = lane == 31, none = last_owner && !below;
                dE = none ? 0.f : l31 ? hE : dE;
                dPx = none ? 0.f : l31 ? hPx : dPx;
                dPy = none ? 0.f : l31 ? hPy : dPy;
#pragma unroll
                for (int k = 0; k < DK; ++k) {
                    dY[k] = last_owner ? lY[k] : l31 ? hY[k] : dY[k];
                    dG[k] = none ? 0.f : l31 ? hG[k] : dG[k];
                }
            }
            float nE[RB], nY[RB][DK], nG[RB][DK];
#define WF_SUB(a, b) ((a) - (b))
#define WF_ADD(a, b) ((a) + (b))
#define WF_MUL(a, b) ((a) * (b))
#pragma unroll
            for (int r = 0; r < RB; ++r) {
                const int i = r0 + r, j = s - i;
                const float e_dn = r < RB - 1 ? Ep[r + 1] : dE;
                const float w_dn = r < RB - 1 ? pp[r + 1].y : dPy;
                const float w_rt = TSW_SDTW_PROB_REST(pp[r].x, pp[r].y, 1.f, WF_SUB);
                float e = TSW_SDTW_E_CELL(e_dn, w_dn, Ep[r], w_rt, Edg[r], pdg[r], WF_ADD, WF_MUL);
                if ((unsigned)j >= (unsigned)m || !rowok[r] || (BAND && !bd.admits(i0 + i, j)))
                    e = 0.f;
                nE[r] = e;
                if constexpr (CM) {
                    /* E (dv/dc, the caller's matrices: times cv) of the grid's cells */
                    if ((unsigned)j < (unsigned)m && rowok[r])
                        ((float *)Ce)[2 * ((int64_t)s * Lp + L)] = e;
#pragma unroll
                    for (int k = 0; k < DK; ++k)
                        nY[r][k] = nG[r][k] = 0.f;
                } else {
#pragma unroll
                    for (int k = 0; k < DK; ++k) {
                        const float y = r < RB - 1 ? yb[r + 1][k] : dY[k];
                        const float te = e * (xf[r][k] - y);
                        gx[r][k] += te;
                        nY[r][k] = y;
                        nG[r][k] = (r < RB - 1 ? gya[r + 1][k] : dG[k]) - te;
                    }
                }
            }
#undef WF_SUB
#undef WF_ADD
#undef WF_MUL
#pragma unroll
            for (int r = 0; r < RB; ++r) {
                Edg[r] = r < RB - 1 ? Ep[r + 1] : dE;
                pdg[r] = r < RB - 1 ? pp[r + 1].x : dPx;
                Ep[r] = nE[r];
                pp[r] = pf[0][r];
#pragma unroll
                for (int k = 0; k + 1 < PF; ++k)
                    pf[k][r] = pf[k + 1][r];
                pf[PF - 1][r] = pl2[r];
#pragma unroll
                for (int k = 0; k < DK; ++k) {
                    yb[r][k] = nY[r][k];
                    gya[r][k] = nG[r][k];
                }
            }
            /* row 0 of lane 0 closes column j = s: every row below has added to it */
            if (!CM && L == 0 && gy_on && s < m && !above) {
#pragma unroll
                for (int k = 0; k < DK; ++k) {
                    float *q = gbo + (int64_t)s * DK + k;
                    *q = (float)((g.accumulate ? (double)*q : 0.0) + g.cb * 2.0 * gya[0][k]);
                }
            }
            if (sync) {
                /* (split: warp 0's slot is the transfer warp's to send above) */
                if (lane == 0 && (SPLIT || warp > 0)) {
                    float *h = hb + ((s & 1) * NS + warp) * (3 + 2 * DK);
                    h[0] = Ep[0];
                    h[1] = pp[0].x;
                    h[2] = pp[0].y;
#pragma unroll
                    for (int k = 0; k < DK; ++k) {
                        h[3 + k] = yb[0][k];
                        h[3 + DK + k] = gya[0][k];
                    }
                }
                __syncthreads();
            }
        }
    }
#undef WF_LOAD
#undef WF_AT
    if constexpr (CM)
        return; /* (E is the output: sdtw_mat.cuh forms the inputs' gradients from it) */
    /* the rows' gradients after the columns' (ga and gb may be the same rows for the
     * divergence's self terms: the barrier orders the two) */
    __syncthreads();
    if (SPLIT && above && g.wf_defer) {
        /* the rows may be stripe 0's columns: left for wf_rows_after */
        float *o = g.wf_gx + (p - g.first) * g.ymax * DK + (int64_t)i0 * DK;
#pragma unroll
        for (int r = 0; r < RB; ++r)
            if (r0 + r < nl) {
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    o[(int64_t)(r0 + r) * DK + k] = gx[r][k];
            }
    } else if (gx_on) {
        float *o = g.ga + (g.aoff[p] + i0) * DK;
#pragma unroll
        for (int r = 0; r < RB; ++r)
            if (r0 + r < nl) {
#pragma unroll
                for (int k = 0; k < DK; ++k) {
                    float *q = o + (int64_t)(r0 + r) * DK + k;
                    *q = (float)((g.accumulate ? (double)*q : 0.0) + g.ca * 2.0 * gx[r][k]);
                }
            }
    }
}

/* The rows of stripes 1.. that the split left in g.wf_gx (g.wf_defer), added to g.ga after
 * the backward launch, with the kernel's arithmetic: the column gradient of stripe 0 is then
 * in, as the one-block kernel has it when it adds its rows. */
__global__ void wf_rows_after(SgArgs<float> g, int64_t count)
{
    if (g.flag && *(volatile const int *)g.flag)
        return; /* non-finite device inputs: the outputs stay untouched */
    for (int64_t pl = blockIdx.x; pl < count; pl += gridDim.x) {
        const int64_t p = g.first + pl, n = g.alen[p];
        const float *src = g.wf_gx + pl * g.ymax * g.dim;
        float *o = g.ga + g.aoff[p] * g.dim;
        for (int64_t k = g.wf_rows * g.dim + threadIdx.x; k < n * g.dim; k += blockDim.x)
            o[k] = (float)((g.accumulate ? (double)o[k] : 0.0) + g.ca * 2.0 * src[k]);
    }
}

/* Above this gamma the float32 R of the wavefront kernel loses the 1e-4 relative accuracy
 * of float32 results: R adds about gamma log 3 of entropy per step against the costs, and a
 * value that is small next to them (a near cancellation, common at gamma 100) keeps the
 * float32 rounding of the large terms (seen on the H100: 1.4e-4 to 1.6e-4 at gamma 100 on
 * values of 0.27 to 1.9; every gamma <= 10 tried stayed within 4e-5). Such calls take the
 * thread-per-row kernel, which keeps R in double. */
constexpr double kWfMaxGamma = 10.0;

/* The calls the wavefront kernel covers: float32 series (no cost matrices), dim 1 or 2,
 * at most kWfSplitMaxLen rows (one block per problem: kWfMaxRows, wf_rows_per_lane),
 * gamma <= kWfMaxGamma, no Itakura window (rejected for gradients anyway). */
inline bool wf_eligible(tsw_dtype dtype, int64_t dim, int64_t max_len, bool cost, double gamma)
{
    if (dtype != TSW_F32 || cost || dim < 1 || dim > 2 || max_len > kWfSplitMaxLen ||
        !(gamma <= kWfMaxGamma))
        return false;
    const char *env = getenv("TSWARP_SDTW_WF"); /* developer knob: 0 disables */
    return !(env && env[0] == '0');
}

/*
 * Rows per lane for count problems of at most max_len rows, 0 when the wavefront kernel
 * should not run: the fewest rows per lane that a block (wf_max_warps) covers (the kernel
 * is latency-bound: more warps hide more of it than more rows per lane; measured on the
 * H100, bench/RESULTS.md; val: the value-only variant, 2 rows per lane up to 512 rows, as
 * measured there), and only when the batch gives at least two warps per SM: a
 * small batch of long pairs runs faster on the thread-per-row kernel, whose split mode
 * spreads one pair over several SMs (any: whatever the batch). Developer knob
 * TSWARP_SDTW_WF_RB=1|2|4|8 forces a choice the rows allow.
 */
inline int wf_rows_per_lane(int64_t count, int64_t max_len, int device, bool val = false,
                            bool any = false)
{
    if (max_len > kWfMaxRows)
        return 0;
    /* one row per lane up to 16 warps (values only: 2 rows per lane up to 8 warps, as
     * before: the step probe found one row no faster there); longer series 4 or 8 rows per
     * lane, 8 warps */
    const int r1 = val ? 64 * kWfRbWarps : 32 * kWfMaxWarps;
    int rb = max_len <= r1 ? (val ? 2 : 1) : max_len <= 128 * kWfRbWarps ? 4 : 8;
    const char *env = getenv("TSWARP_SDTW_WF_RB");
    if (env && (env[0] == '1' || env[0] == '2' || env[0] == '4' || env[0] == '8') &&
        env[1] == 0 && max_len <= (int64_t)32 * wf_max_warps(env[0] - '0') * (env[0] - '0'))
        return env[0] - '0';
    if (any)
        return rb;
    const int sms = sm_count(device);
    const int64_t warps = count * (((max_len + rb - 1) / rb + 31) / 32);
    return warps >= 2 * (int64_t)sms ? rb : 0;
}

/* The stripe height forced by the developer knob TSWARP_SDTW_WF_SPLIT (rows > 0), 0 turns
 * the split off, -1 unset. */
inline long wf_split_knob()
{
    const char *env = getenv("TSWARP_SDTW_WF_SPLIT");
    if (!env || !env[0])
        return -1;
    char *end = nullptr;
    const long v = strtol(env, &end, 10);
    return end && *end == 0 && v >= 0 ? v : -1;
}

/*
 * The split's rows per stripe for count problems of at most max_len rows (dim 1 or 2, with
 * gradients), 0 for no split. sg_grad asks it before wf_rows_per_lane: it takes only the
 * batches that one block a problem leaves on part of the SMs (B=64 N=512 ran 0.63 ms on 64
 * SMs, 0.56 ms split on 128: bench/RESULTS.md). K stripes a problem, K the largest power of
 * two with count K <= SMs (at least 2), the stripe height rounded up to whole warps of one
 * row per lane (2 rows per lane measured 1.5x slower: bench/RESULTS.md) and at most a block
 * (kWfStripeWarps warps); the stripes of the batch then fit the SMs at one block each
 * (shorter stripes, two or more blocks a SM, measured slower). Problems of at most 256 rows
 * stay one block. TSWARP_SDTW_WF_SPLIT=<rows> forces a stripe height (rounded up to a warp,
 * at most a block; any number of blocks: the ticket order never deadlocks), 0 turns the
 * split off.
 */
inline int wf_split_rows(int64_t count, int64_t max_len, int64_t dim, int device)
{
    const long forced = wf_split_knob();
    if (forced == 0 || count < 1 || max_len > kWfSplitMaxLen || (forced < 0 && max_len <= 256))
        return 0;
    const int sms = sm_count(device);
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    const int64_t unit = 32, most = kWfStripeWarps * unit;
    int64_t rs;
    if (forced > 0) {
        rs = forced;
    } else {
        int64_t K = 1;
        while (count * K * 2 <= sms)
            K *= 2;
        if (K < 2)
            return 0;
        rs = (max_len + K - 1) / K;
    }
    rs = (rs + unit - 1) / unit * unit;
    rs = rs < most ? rs : most;
    if (rs >= max_len || (forced < 0 && count * ((max_len + rs - 1) / rs) > sms))
        return 0;
    if (wf_smem_bytes((int)(rs / unit) + 1, max_len, dim) > (size_t)optin) /* + transfer */
        return 0;
    return (int)rs;
}

template <int DK, bool BAND, int RB, bool VAL, bool SPLIT, bool CM = false>
cudaError_t wf_launch_one(const SgArgs<float> &g, int64_t blocks, int warps, size_t smem,
                          cudaStream_t stream)
{
    auto *k = sdtw_wf_kernel<DK, BAND, RB, VAL, SPLIT, CM>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess)
            return e;
    }
    k<<<(unsigned)blocks, 32 * warps, smem, stream>>>(g);
    return cudaGetLastError();
}

template <int RB, bool VAL, bool SPLIT = false>
cudaError_t wf_launch_rb(const SgArgs<float> &g, int64_t blocks, int warps, size_t smem,
                         bool band, cudaStream_t stream, bool cm = false)
{
    if constexpr (RB == 1) {
        if (cm)
            return band ? wf_launch_one<1, true, 1, VAL, SPLIT, true>(g, blocks, warps, smem,
                                                                      stream)
                        : wf_launch_one<1, false, 1, VAL, SPLIT, true>(g, blocks, warps, smem,
                                                                       stream);
    } else if (cm) {
        return cudaErrorInvalidValue; /* (the CM instances: one row per lane) */
    }
    if (g.dim == 1)
        return band ? wf_launch_one<1, true, RB, VAL, SPLIT>(g, blocks, warps, smem, stream)
                    : wf_launch_one<1, false, RB, VAL, SPLIT>(g, blocks, warps, smem, stream);
    return band ? wf_launch_one<2, true, RB, VAL, SPLIT>(g, blocks, warps, smem, stream)
                : wf_launch_one<2, false, RB, VAL, SPLIT>(g, blocks, warps, smem, stream);
}

/* The rows-per-lane ladder of one variant (VAL: values only). */
template <bool VAL>
cudaError_t wf_launch_v(const SgArgs<float> &g, int64_t blocks, int warps, size_t smem,
                        bool band, int rb, cudaStream_t stream, bool cm)
{
    if (rb == 1)
        return wf_launch_rb<1, VAL>(g, blocks, warps, smem, band, stream, cm);
    if (rb == 2)
        return wf_launch_rb<2, VAL>(g, blocks, warps, smem, band, stream, cm);
    if (rb == 4)
        return wf_launch_rb<4, VAL>(g, blocks, warps, smem, band, stream, cm);
    return wf_launch_rb<8, VAL>(g, blocks, warps, smem, band, stream, cm);
}

/* Launches the problems [first, first + blocks) of one kind (split: blocks = problems x
 * stripes, g.phase 1 or 2); max_n = its longest a, rb the rows per lane its storage was
 * sized for (wf_cells); val: values only, R in float32 and nothing stored (wf_cell_val);
 * cm: the cells' costs from matrices (the CM instances: no copy of b in shared memory). */
inline cudaError_t wf_launch(const SgArgs<float> &g, int64_t blocks, int64_t max_n, int rb,
                             bool val, cudaStream_t stream, bool cm = false)
{
    if (g.wf_rows && max_n > g.wf_rows)
        max_n = g.wf_rows; /* split: a block a stripe */
    /* (split: and the transfer warp) */
    const int warps = (int)(((max_n + rb - 1) / rb + 31) / 32) + (g.wf_rows ? 1 : 0);
    const size_t smem = cm ? wf_smem_bytes(warps, 0, 1) + (size_t)(kCmAhead + 1) * 32 * warps * 8
                           : wf_smem_bytes(warps, g.ymax, g.dim);
    const bool band = g.window == TSW_WINDOW_SAKOE_CHIBA ||
                      g.window == TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    if (g.wf_rows) /* split (gradients only): 1 row per lane */
        return wf_launch_rb<1, false, true>(g, blocks, warps, smem, band, stream, cm);
    return val ? wf_launch_v<true>(g, blocks, warps, smem, band, rb, stream, cm)
               : wf_launch_v<false>(g, blocks, warps, smem, band, rb, stream, cm);
}

