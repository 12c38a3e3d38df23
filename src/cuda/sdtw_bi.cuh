/*
 * Soft-DTW gradients of small batches in two waves that run at the same time (float32
 * series, squared Euclidean cost, dim 1 or 2). Included by sdtw_grad.cu after sdtw_wf.cuh
 * (SgArgs, SgBand, wf_cell, wf_ld, wf_st, kWfEmpty, kWfAhead); sg_grad picks it through
 * bi_rows.
 *
 * Why: the wavefront kernel's forward and backward passes are two sweeps of n + m - 1
 * latency-bound steps, one after the other. The gradient only needs, for every cell, the
 * probability E(i, j) that a path goes through it, and
 *     E(i, j) = exp(-(A(i, j) + B(i, j) - c(i, j) - Z) / gamma),
 * with A = R the forward recursion from (0, 0), B the same recursion from (n - 1, m - 1)
 * backwards (soft-DTW of the two reversed series, read at (n - 1 - i, m - 1 - j)), c the
 * cell's cost and Z = R(n - 1, m - 1) the value (the gradient of soft-DTW is this expected
 * alignment, Cuturi and Blondel 2017; computed from both ends as the forward-backward
 * algorithm of hidden Markov models does). A and B are independent, so two
 * waves, 0 (A) and 1 (B), run at once on their own blocks, and the span is one sweep.
 * A and B are kept in double (as R in sdtw_wf.cuh), so their sum minus Z cancels no more
 * than the wavefront kernel's differences of R do.
 *
 * Each wave is the wavefront kernel's forward sweep (its cell, wf_cell; one row per lane;
 * stripes of H rows on several blocks for long series, with its transfer warp and hand-over
 * words) in its own coordinates (wave 1 reads both series reversed), in two launches:
 *   phase 0: the cells of anti-diagonals k < T_w; it stores them (a double each, at
 *            [k][i] of the wave's region: one 256-byte line per warp and step).
 *   phase 1: the cells from T_w on; for each it loads the other wave's stored value of the
 *            same cell of the grid (stored in the other's phase 0: the launch in between
 *            orders them) and adds the cell's E (x_i - y_j) to its row's sum and its
 *            column's sum.
 * T_0 = h + 1 and T_1 = n + m - 2 - h, h = (n + m - 2) / 2: wave 0 takes the grid's
 * anti-diagonals k > h, wave 1 (k' = n + m - 2 - k) those k <= h; every cell once.
 * Phase 1 starts again from the stored cells of the two anti-diagonals before T_w.
 *
 * Z is only known at the end, so the sums are kept relative to the least S = A + B - c
 * seen so far (online rescaling, as a streaming softmax does): a part (m, a) holds
 * a = sum exp2((m - S) k2) (x_i - y_j) over its cells, k2 = log2(e) / gamma, m <= every S
 * in it; a new S < m rescales a by exp2((S - m) k2). One exponential per cell and part, of
 * an argument <= 0. A row's part lives in its lane's registers; a column's part travels
 * down the rows with the column through a ring of shared memory indexed by column (the lane
 * below reads it one step later); the stripe's last row writes it out. A cell is added one
 * step after it is computed, off the step's chain. sdtw_bi_finish then adds the parts of
 * both waves (and of every stripe) as exp2((Z - m) k2) a (<= a: m >= Z, as E <= 1) for
 * each row and column: the gradients 2 sum E (x_i - y_j) and 2 sum E (y_j - x_i).
 *
 * Blocks: (pair, wave, stripe), 2 K per pair; split launches take tickets so that a stripe
 * only waits on the stripe above it of the same wave, which started before it (no deadlock
 * whatever the residency), as sdtw_wf.cuh's split does.
 */

constexpr int kBiMaxWarps = 16; /* compute warps of a block: rows per stripe <= 512 */

/* A row's or column's sum of exp2((m - S) k2) (x_i - y_j) over its cells so far. */
struct BiPart {
    double m;
    float a[2];
};

/* Adds a cell (its S and x_i - y_j) to a part (m, a) when use: the smaller of m and S
 * becomes the part's m, the other side scaled by exp2(-|m - S| k2). */
template <int DK>
__device__ __forceinline__ void bi_part_add(double &m, float (&a)[DK], double s,
                                            const float (&v)[DK], bool use, double k2)
{
    const float e = mufu_ex2(-fabsf((float)((m - s) * k2)));
    const bool lo = s <= m;
#pragma unroll
    for (int k = 0; k < DK; ++k)
        a[k] = !use ? a[k] : lo ? fmaf(a[k], e, v[k]) : fmaf(e, v[k], a[k]);
    m = use && lo ? s : m;
}

struct BiArgs {
    unsigned long long *hand; /* [pair][wave][K - 1][ymax] R of stripe q's last row */
    BiPart *rows;             /* [pair][wave][ymax], in the wave's row order */
    BiPart *cols;             /* [pair][wave][K][ymax], in the wave's column order */
    double *z;                /* [pair] the value (wave 0) */
    unsigned *ticket;         /* split launches: the order of start */
    int K, H;                 /* stripes per wave, rows per stripe (a multiple of 32 if K > 1) */
};

/* The column ring: a power of two >= the rows of a block (columns in flight). */
__host__ __device__ inline int bi_ring(int warps)
{
    int r = 32;
    while (r < 32 * warps)
        r <<= 1;
    return r;
}

/* Dynamic shared memory of a block of NW compute warps (+ the transfer warp in NS): the
 * warps' hand-over [2][NS] R (double), the column ring's m (double), the hand-over's y
 * [2][NS][dim], the ring's sums [ring][dim] (floats), then b [ymax][dim]. */
__host__ __device__ inline size_t bi_smem_bytes(int nw, int ns, int64_t ymax, int64_t dim)
{
    const int ring = bi_ring(nw);
    return (size_t)(2 * ns + ring) * sizeof(double) +
           (size_t)(2 * ns + ring) * dim * sizeof(float) + (size_t)ymax * dim * sizeof(float) +
           16;
}

/* Stored doubles of a pair: each wave's anti-diagonals below T_w (<= h + 1) of n rows. */
__host__ __device__ inline int64_t bi_cells(int64_t n, int64_t m)
{
    return 2 * ((n + m - 2) / 2 + 1) * n;
}

template <int DK, bool BAND, bool SPLIT, int PH>
__global__ void __launch_bounds__(32 * (kBiMaxWarps + (SPLIT ? 1 : 0)), 1)
    sdtw_bi_kernel(SgArgs<float> g, BiArgs b)
{
    extern __shared__ __align__(16) unsigned char bi_smem[];
    if (g.flag && *(volatile const int *)g.flag)
        return;
    const unsigned FULL = 0xffffffffu;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, NS = blockDim.x >> 5;
    const int NW = SPLIT ? NS - 1 : NS;
    const bool sync = SPLIT || NW > 1;
    int64_t t = blockIdx.x;
    if constexpr (SPLIT) {
        __shared__ unsigned bi_ticket;
        if (tid == 0)
            bi_ticket = atomicAdd(b.ticket, 1u);
        __syncthreads();
        t = bi_ticket;
    }
    const int K = SPLIT ? b.K : 1;
    const int64_t pl = t / (2 * K);
    const int w = (int)(t / K) & 1, q = (int)(t % K);
    const int64_t p = g.first + pl;
    const int n = (int)g.alen[p], m = (int)g.blen[p];
    const int i0 = q * b.H;
    if (i0 >= n)
        return;
    const int nl = n - i0 < b.H ? n - i0 : b.H;
    const bool above = SPLIT && q > 0, below = SPLIT && i0 + nl < n;
    const int S = nl + m - 1; /* local steps: cell (i0 + i, j) at step i + j */
    const int h = (n + m - 2) / 2;
    const int T = w == 0 ? h + 1 : n + m - 2 - h; /* the wave's first anti-diagonal of phase 1 */
    const int sT = T - i0 < 0 ? 0 : T - i0 > S ? S : T - i0;
    const int s0 = PH == 0 ? 0 : sT, s1 = PH == 0 ? sT : S;
    if (PH == 0 && s1 == 0)
        return; /* nothing before T here (nor in the stripes below) */
    const double INF = TSW_INF_F64;
    const SgBand bd(g.window, g.radius, n, m);
    const int RING = bi_ring(NW);

    double *hf = (double *)bi_smem;                    /* [2][NS] */
    double *rm = hf + 2 * NS;                          /* [RING] */
    float *hfy = (float *)(rm + RING);                 /* [2][NS][DK] */
    float *ra = hfy + 2 * NS * DK;                     /* [RING][DK] */
    float *ys = ra + RING * DK;                        /* [m][DK], the wave's order */
    const float *Bg = g.b + g.boff[p] * DK;
    for (int k = tid; k < m * DK; k += blockDim.x) {
        const int j = k / DK, c = k - j * DK;
        ys[k] = Bg[(int64_t)(w ? m - 1 - j : j) * DK + c];
    }
    for (int k = tid; k < 2 * NS; k += blockDim.x)
        hf[k] = INF;
    for (int k = tid; k < 2 * NS * DK; k += blockDim.x)
        hfy[k] = 0.f;
    for (int k = tid; k < RING; k += blockDim.x)
        rm[k] = INF;
    for (int k = tid; k < RING * DK; k += blockDim.x)
        ra[k] = 0.f;
    /* the region of each wave (its own coordinates): cell (i, j) at [i + j][i] */
    double *own = g.R + g.roff[p] + (int64_t)w * (h + 1) * n;
    const double *oth = g.R + g.roff[p] + (int64_t)(1 - w) * (h + 1) * n;
    /* R of the wave's cell (i, j) of an anti-diagonal < T, i >= -1 (row -1: R(-1, -1) = 0,
     * else +inf; columns off the grid: +inf, never used by a cell of the grid) */
    auto stored = [&](int i, int j) -> double {
        if (i < 0)
            return j == -1 ? 0.0 : INF;
        if (i >= n || (unsigned)j >= (unsigned)m)
            return INF;
        return own[(int64_t)(i + j) * n + i];
    };
    const int L = tid, gi = i0 + L; /* the lane's row (compute warps) */
    const bool rowok = L < nl;
    float xf[DK];
    double xd[DK];
    {
        const float *A = g.a + g.aoff[p] * DK;
#pragma unroll
        for (int k = 0; k < DK; ++k) {
            xf[k] = rowok ? A[(int64_t)(w ? n - 1 - gi : gi) * DK + k] : 0.f;
            xd[k] = (double)xf[k];
        }
    }
    __syncthreads(); /* b and the initial slots */
    /* the state at step s0 (phase 0: s0 = 0, the recursion's start), from the stored cells
     * of steps s0 - 1 and s0 - 2: the lane's cell of the step before, its up neighbour's,
     * the y it had, and every warp's hand-over slot of the step before (the last warp's also
     * of the step before that: the transfer warp sends it below at step s0) */
    double prev = 0, dg = 0;
    float yv[DK];
    if (warp < NW) {
        prev = stored(gi, s0 - 1 - L);
        dg = stored(gi - 1, s0 - 1 - L);
#pragma unroll
        for (int k = 0; k < DK; ++k)
            yv[k] = (unsigned)(s0 - 1 - L) < (unsigned)m ? ys[(s0 - 1 - L) * DK + k] : 0.f;
        if (lane == 31) {
            const int hh = ((s0 - 1) & 1) * NS + warp;
            hf[hh] = prev;
#pragma unroll
            for (int k = 0; k < DK; ++k)
                hfy[hh * DK + k] = yv[k];
            if (SPLIT && warp == NW - 1)
                hf[(s0 & 1) * NS + warp] = stored(gi, s0 - 2 - L);
        }
    }
    __syncthreads();

    const double k2 = g.inv_gamma * 1.4426950408889634, gl = g.gamma * 0.6931471805599453;
    const float k2f = (float)k2, glf = (float)gl;
    if (SPLIT && warp == NW) {
        /* the transfer warp (wf_fwd_transfer, as in sdtw_wf.cuh's forward pass) over the
         * steps [s0, s1); phase 0 reads no column >= s1 (the stripe above writes those in
         * phase 1) */
        const int K1 = K - 1;
        const unsigned long long *fin =
            above ? b.hand + ((pl * 2 + w) * K1 + q - 1) * g.ymax : nullptr;
        unsigned long long *fout = below ? b.hand + ((pl * 2 + w) * K1 + q) * g.ymax : nullptr;
        wf_fwd_transfer(fin, fout, hf, NS, NW, nl, m, s0, s1, m < s1 ? m : s1);
        /* the last row's last column (step S - 1), by the phase that has that step (phase 1
         * again when phase 0 had every step: the stripe below may need it in its phase 0) */
        if (s1 == S && below && lane == 0)
            wf_st(fout + m - 1,
                  (unsigned long long)__double_as_longlong(hf[((S + 1) & 1) * NS + NW - 1]));
        return;
    }

    /* the steps where this warp has cells, within [s0, s1) */
    const int wl = (warp + 1) * 32 < nl ? (warp + 1) * 32 : nl;
    const int wa0 = warp * 32, wa1 = wl - 1 + m - 1;
    const int sa = wa0 < s0 ? s0 : wa0 < s1 ? wa0 : s1;
    const int sb = wa1 + 1 < sa ? sa : wa1 + 1 < s1 ? wa1 + 1 : s1;
    /* phase 1: the other wave's value of this lane's cell at step s, PF steps ahead: cell
     * (gi, s - L) of the wave is the other's (n - 1 - gi, m - 1 - (s - L)), anti-diagonal
     * n + m - 2 - (i0 + s); its index falls by n a step */
    constexpr int PF = 4;
    double pfb[PF];
    int64_t oi = (int64_t)(n + m - 2 - (i0 + sa)) * n + (n - 1 - gi);
    /* whether step s has a cell of the grid here; its load reads index 0 where not (an
     * unconditional load: a predicated one keeps a preset register, which the compiler then
     * rotates through the ring by copies that wait for each load) */
    auto has = [&](int s) { return rowok && (unsigned)(s - L) < (unsigned)m && s < sb; };
    auto ldo = [&](int s, int64_t o) -> double {
        return PH == 1 ? oth[has(s) ? o : 0] : INF;
    };
#pragma unroll
    for (int k = 0; k < PF; ++k)
        pfb[k] = ldo(sa + k, oi - (int64_t)k * n);
    oi -= (int64_t)PF * n;
    double mr = INF; /* the row's part */
    float ar[DK];
#pragma unroll
    for (int k = 0; k < DK; ++k)
        ar[k] = 0.f;
    BiPart *colo = b.cols + ((pl * 2 + w) * K + q) * g.ymax;
    const bool last_row = L == nl - 1;
    if (PH == 1 && last_row) {
        /* columns whose last-row cell came before phase 1: nothing of theirs here */
        for (int j = 0; j < m && nl - 1 + j < sT; ++j) {
            colo[j].m = INF;
            colo[j].a[0] = colo[j].a[1] = 0.f;
        }
    }

    if constexpr (SPLIT)
        __syncthreads(); /* the transfer warp's first slot */
    /* phase 1 adds a cell to its row and column one step after it computed it (the lane
     * below still takes the column a step after this lane, through the ring), so that the
     * exponentials and the ring's store wait on nothing of the step's own chain */
    double p_sv = INF; /* the cell of the step before: S, whether it counts, x_i - y_j, j */
    bool p_use = false;
    float p_v[DK];
#pragma unroll
    for (int k = 0; k < DK; ++k)
        p_v[k] = 0.f;
    int p_j = sa - 1 - L; /* (that cell is off the grid or in phase 0: p_use is false) */
    auto consume = [&]() {
        bi_part_add(mr, ar, p_sv, p_v, p_use, k2); /* the row's part */
        /* the column's part, from the row above (none above the stripe's first row) */
        const int ri = p_j & (RING - 1);
        double cm = L == 0 ? INF : rm[ri];
        float ca[DK];
#pragma unroll
        for (int k = 0; k < DK; ++k)
            ca[k] = L == 0 ? 0.f : ra[ri * DK + k];
        bi_part_add(cm, ca, p_sv, p_v, p_use, k2);
        rm[ri] = cm;
#pragma unroll
        for (int k = 0; k < DK; ++k)
            ra[ri * DK + k] = ca[k];
        if (last_row && (unsigned)p_j < (unsigned)m) {
            colo[p_j].m = cm;
#pragma unroll
            for (int k = 0; k < DK; ++k)
                colo[p_j].a[k] = ca[k];
        }
    };

    for (int s = s0; s < sa; ++s)
        if (sync)
            __syncthreads();
#pragma unroll PF
    for (int s = sa; s < sb; ++s) {
        if constexpr (PH == 1)
            consume();
        double uR = __shfl_up_sync(FULL, prev, 1);
        float uY[DK];
#pragma unroll
        for (int k = 0; k < DK; ++k)
            uY[k] = __shfl_up_sync(FULL, yv[k], 1);
        double hR;
        float hY[DK];
        if (warp == 0) {
            if constexpr (SPLIT)
                hR = hf[((s & 1) ^ 1) * NS + NW];
            else
                hR = INF;
#pragma unroll
            for (int k = 0; k < DK; ++k)
                hY[k] = s < m ? ys[s * DK + k] : 0.f;
        } else {
            const int hh = ((s & 1) ^ 1) * NS + warp - 1;
            hR = hf[hh];
#pragma unroll
            for (int k = 0; k < DK; ++k)
                hY[k] = hfy[hh * DK + k];
        }
        uR = lane == 0 ? hR : uR;
#pragma unroll
        for (int k = 0; k < DK; ++k)
            uY[k] = lane == 0 ? hY[k] : uY[k];
        const int j = s - L;
        double cost = 0;
#pragma unroll
        for (int k = 0; k < DK; ++k) {
            const double df = xd[k] - (double)uY[k];
            cost += df * df;
        }
        double rr;
        float pd, pu; /* (unused: the compiler drops them) */
        wf_cell(dg, uR, prev, cost, k2f, glf, rr, pd, pu);
        (void)pd;
        (void)pu;
        if (BAND && !bd.admits(w ? n - 1 - gi : gi, w ? m - 1 - j : j))
            rr = INF;
        const bool cell = rowok && (unsigned)j < (unsigned)m;
        if constexpr (PH == 0) {
            if (cell)
                own[(int64_t)(i0 + s) * n + gi] = rr;
        } else {
            const double bo = has(s) ? pfb[0] : INF;
#pragma unroll
            for (int k = 0; k + 1 < PF; ++k)
                pfb[k] = pfb[k + 1];
            pfb[PF - 1] = ldo(s + PF, oi);
            oi -= n;
            p_sv = rr + bo - cost;
            p_use = cell && p_sv < INF;
#pragma unroll
            for (int k = 0; k < DK; ++k)
                p_v[k] = xf[k] - uY[k];
            p_j = j;
        }
        dg = uR;
        prev = rr;
#pragma unroll
        for (int k = 0; k < DK; ++k)
            yv[k] = uY[k];
        if (sync) {
            if (lane == 31 && (SPLIT || warp + 1 < NW)) {
                const int hh = (s & 1) * NS + warp;
                hf[hh] = prev;
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    hfy[hh * DK + k] = yv[k];
            }
            __syncthreads();
        } else {
            __syncwarp();
        }
    }
    if (PH == 1 && sb > sa)
        consume(); /* the warp's last cell, before the barrier of step sb */
    for (int s = sb; s < s1; ++s)
        if (sync)
            __syncthreads();
    if constexpr (PH == 1) {
        if (rowok) {
            BiPart *o = b.rows + (pl * 2 + w) * g.ymax + gi;
            o->m = mr;
#pragma unroll
            for (int k = 0; k < DK; ++k)
                o->a[k] = ar[k];
        }
        /* the last cell (n - 1, m - 1), of step S - 1 (phase 1 has it: n + m - 2 >= T_0,
         * or the restart's prev when that step came before) */
        if (w == 0 && i0 + nl == n && last_row) {
            b.z[pl] = prev;
            sg_put_value(g, p, g.cv * prev);
        }
    }
}

/* The gradients from the parts: row i of a and column j of b, both waves (wave 1's rows
 * and columns reversed) and every stripe, columns first (a and b may be the same rows for
 * the divergence's self terms: one thread does both of an index, in that order). */
template <int DK>
__global__ void sdtw_bi_finish(SgArgs<float> g, BiArgs b, int64_t count)
{
    if (g.flag && *(volatile const int *)g.flag)
        return;
    const double k2 = g.inv_gamma * 1.4426950408889634;
    for (int64_t pl = blockIdx.y; pl < count; pl += gridDim.y) {
        const int64_t p = g.first + pl;
        const int n = (int)g.alen[p], m = (int)g.blen[p];
        const double Z = b.z[pl];
        const int kq = (n + b.H - 1) / b.H; /* stripes with rows */
        const int top = n > m ? n : m;
        /* a part's sum scaled to Z: exp2((Z - m) k2) a (none: m = +inf) */
        auto add = [&](const BiPart &pt, double *acc) {
            const double f = pt.m < TSW_INF_F64 ? (double)exp2f((float)((Z - pt.m) * k2)) : 0.0;
#pragma unroll
            for (int k = 0; k < DK; ++k)
                acc[k] += f * (double)pt.a[k];
        };
        for (int x = blockIdx.x * blockDim.x + threadIdx.x; x < top;
             x += gridDim.x * blockDim.x) {
            if (g.gb && x < m) {
                double acc[DK];
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    acc[k] = 0;
                for (int w = 0; w < 2; ++w)
                    for (int q = 0; q < kq; ++q)
                        add(b.cols[((pl * 2 + w) * b.K + q) * g.ymax + (w ? m - 1 - x : x)], acc);
                float *o = g.gb + (g.boff[p] + x) * DK;
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    o[k] = (float)((g.accumulate ? (double)o[k] : 0.0) - g.cb * 2.0 * acc[k]);
            }
            if (g.ga && x < n) {
                double acc[DK];
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    acc[k] = 0;
                for (int w = 0; w < 2; ++w)
                    add(b.rows[(pl * 2 + w) * g.ymax + (w ? n - 1 - x : x)], acc);
                float *o = g.ga + (g.aoff[p] + x) * DK;
#pragma unroll
                for (int k = 0; k < DK; ++k)
                    o[k] = (float)((g.accumulate ? (double)o[k] : 0.0) + g.ca * 2.0 * acc[k]);
            }
        }
    }
}

/*
 * Rows per stripe of the two-wave kernel for count problems of at most max_len rows (dim 1
 * or 2), 0 when it should not run; sg_grad takes it for calls with gradients (the same
 * batch without them runs the one-wave forward sweep, whose cells are the same, so the
 * values keep their bits). K stripes per wave, the fewest that keep a
 * stripe within a block (kBiMaxWarps warps of one row per lane), doubled while the stripes
 * stay >= 128 rows and the 2 K count blocks fit the SMs at one each; it runs only when the
 * blocks' warps fit the SMs at 16 each (B=128 N=256: 256 blocks of 8 warps, 0.25 -> 0.22 ms
 * on the H100; larger batches fill the GPU with the wavefront kernel's one block a pair:
 * bench/RESULTS.md).
 * Developer knob TSWARP_SDTW_WF_BI: 0 off, 1 on for every batch it can take, a number
 * >= 32 forces that stripe height (rounded up to a warp, at most 512 rows).
 */
inline int bi_rows(int64_t count, int64_t max_len, int64_t dim, int device)
{
    const char *env = getenv("TSWARP_SDTW_WF_BI");
    long forced = -1;
    if (env && env[0]) {
        char *end = nullptr;
        forced = strtol(env, &end, 10);
        if (!end || *end || forced < 0)
            forced = -1;
    }
    if (forced == 0 || count < 1 || max_len > kWfSplitMaxLen)
        return 0;
    const int most = 32 * kBiMaxWarps;
    const int sms = sm_count(device);
    int64_t K = (max_len + most - 1) / most, H;
    if (forced >= 32) {
        H = (forced + 31) / 32 * 32;
        H = H < most ? H : most;
        K = (max_len + H - 1) / H;
    } else {
        while (count * 2 * (2 * K) <= sms && (max_len + 2 * K - 1) / (2 * K) >= 128)
            K *= 2;
        H = (max_len + K - 1) / K;
        H = (H + 31) / 32 * 32;
        K = (max_len + H - 1) / H;
        if (forced < 0 && count * 2 * K * (H / 32) > (int64_t)kBiMaxWarps * sms)
            return 0;
    }
    if (K == 1)
        H = (max_len + 31) / 32 * 32;
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    const int nw = (int)(H / 32);
    if (bi_smem_bytes(nw, nw + (K > 1 ? 1 : 0), max_len, dim) > (size_t)optin)
        return 0;
    return (int)H;
}

/* Scratch doubles of a problem: hand-over words, row and column parts, the value. */
inline int64_t bi_scratch(int64_t K, int64_t max_len)
{
    return 2 * (K - 1) * max_len + 2 * max_len * 2 + 2 * K * max_len * 2 + 1;
}

template <int DK, bool BAND, bool SPLIT, int PH>
cudaError_t bi_launch_one(const SgArgs<float> &g, const BiArgs &b, int64_t blocks, int threads,
                          size_t smem, cudaStream_t stream)
{
    auto *k = sdtw_bi_kernel<DK, BAND, SPLIT, PH>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess)
            return e;
    }
    k<<<(unsigned)blocks, threads, smem, stream>>>(g, b);
    return cudaGetLastError();
}

template <int DK, bool BAND>
cudaError_t bi_launch_dk(const SgArgs<float> &g, const BiArgs &b, int64_t count, int64_t max_n,
                         cudaStream_t stream)
{
    const bool split = b.K > 1;
    const int nw = (int)(((split ? b.H : max_n) + 31) / 32);
    const int ns = nw + (split ? 1 : 0);
    const size_t smem = bi_smem_bytes(nw, ns, g.ymax, DK);
    const int64_t blocks = count * 2 * b.K;
    cudaError_t e;
    BiArgs b0 = b, b1 = b;
    b1.ticket = b.ticket + 1;
    if (split) {
        if ((e = bi_launch_one<DK, BAND, true, 0>(g, b0, blocks, 32 * ns, smem, stream)) ||
            (e = bi_launch_one<DK, BAND, true, 1>(g, b1, blocks, 32 * ns, smem, stream)))
            return e;
    } else {
        if ((e = bi_launch_one<DK, BAND, false, 0>(g, b0, blocks, 32 * ns, smem, stream)) ||
            (e = bi_launch_one<DK, BAND, false, 1>(g, b1, blocks, 32 * ns, smem, stream)))
            return e;
    }
    if (!g.want_grad || (!g.ga && !g.gb))
        return cudaSuccess;
    const dim3 grid((unsigned)((g.ymax + 255) / 256), (unsigned)(count < 4096 ? count : 4096));
    sdtw_bi_finish<DK><<<grid, 256, 0, stream>>>(g, b, count);
    return cudaGetLastError();
}

/* Both phases and the gradients of problems [g.first, g.first + count) of one kind (max_n:
 * its longest a). b's scratch and tickets set by the caller. */
inline cudaError_t bi_launch(const SgArgs<float> &g, const BiArgs &b, int64_t count,
                             int64_t max_n, cudaStream_t stream)
{
    const bool band = g.window == TSW_WINDOW_SAKOE_CHIBA ||
                      g.window == TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    if (g.dim == 1)
        return band ? bi_launch_dk<1, true>(g, b, count, max_n, stream)
                    : bi_launch_dk<1, false>(g, b, count, max_n, stream);
    return band ? bi_launch_dk<2, true>(g, b, count, max_n, stream)
                : bi_launch_dk<2, false>(g, b, count, max_n, stream);
}
