/*
 * The CUDA alignment kernels (fwd_tile, the traceback and start kernels, norms), as
 * templates; path.cuh's host drivers launch them (its header describes the method).
 * Included through path.cuh by path_f32.cu and path_f64.cu: each translation unit has its
 * own anonymous namespace.
 */
#ifndef TSW_CUDA_PATH_KERNELS_CUH
#define TSW_CUDA_PATH_KERNELS_CUH

#include <cuda_pipeline.h>
#include <type_traits>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/path.h"
#include "cuda/host.cuh"
#include "internal.h"

namespace {

using namespace tsw__cu;

constexpr int kTW = 128;           /* tile width (columns); a multiple of 16 */
constexpr int kWords = kTW / 16;   /* code words per tile row */
constexpr unsigned kFull = 0xffffffffu;
constexpr int64_t kP05MaxBlock = 8192; /* LINEAR, p05: rows per recomputed block at most */
constexpr int kChunk = 32; /* columns whose local costs a tile computes at once */
constexpr int kRing = 64;  /* columns of local costs a tile keeps: two chunks */
constexpr int kSChunk = 16;          /* split mode: steps of costs a tile's warp copies at once */
constexpr int kSRing = 2 * kSChunk;  /* ... and keeps: two chunks */
constexpr int64_t kSplitMax = 1024; /* split mode: at most this many tiles per diagonal */

template <typename T> __host__ __device__ inline T inf_of();
template <> __host__ __device__ inline float inf_of<float>() { return TSW_INF_F32; }
template <> __host__ __device__ inline double inf_of<double>() { return TSW_INF_F64; }

__device__ inline float cell0(int p, float c, float d0, float d1, float d2, int start, int *s)
{
    return tsw_path_cell_f32(p, c, d0, d1, d2, start, s);
}
__device__ inline double cell0(int p, double c, double d0, double d1, double d2, int start,
                               int *s)
{
    return tsw_path_cell_f64(p, c, d0, d1, d2, start, s);
}
__device__ inline float sqrt_of(float v) { return sqrtf(v); }
__device__ inline double sqrt_of(double v) { return sqrt(v); }

/*
 * x / y rounded to nearest without the division's slow path, a rarely taken branch that
 * would cut a chunk's cost loop into one block per cell. float: the fast path nvcc emits for
 * x / y (a reciprocal, one Newton step, the quotient and its correction, by fused
 * multiply-adds), which it takes whenever its range check passes; *ok is cleared where x or y
 * is outside a range well inside that check (2^-100 < |y| < 2^100, x = 0 or 2^-100 < |x| <
 * 2^100), and the caller then redoes the chunk with x / y. double: x / y, with *ok cleared
 * where y = 0.
 */
__device__ __forceinline__ float div_fast(float x, float y, bool &ok)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
    const float e = __fmaf_rn(-y, r, 1.0f);
    r = __fmaf_rn(r, e, r);
    const float q = __fmul_rn(x, r);
    const float rem = __fmaf_rn(-y, q, x);
    const float ax = fabsf(x), ay = fabsf(y);
    ok = ok & (ay > 0x1p-100f) & (ay < 0x1p100f) &
         ((ax == 0.0f) | ((ax > 0x1p-100f) & (ax < 0x1p100f))); /* no short circuit */
    return __fmaf_rn(r, rem, q);
}
__device__ __forceinline__ double div_fast(double x, double y, bool &ok)
{
    ok = ok & (y != 0.0); /* a zero norm (the caller's selects are skipped): redo */
    return x / y;
}

/* ---- kernels ---------------------------------------------------------------------------- */

template <typename T> struct FwdArgs {
    const T *a, *b;         /* (n, dim), (m, dim)                                    */
    const T *na, *nb;       /* cosine: sqrt(<x,x>) per point, else NULL               */
    const int64_t *lo, *hi; /* window: admissible columns [lo[i], hi[i]), or NULL     */
    int64_t n, m, dim;
    int p, kc, subseq;
    int64_t r0, r1, c0, c1; /* the region                                            */
    int64_t ntj;            /* tiles per tile row                                    */
    const T *top;           /* rows r0-2 (top[x]) and r0-1 (top[top_stride + x]) at
                               the columns c0-2+x, x in [0, c1-c0+3)                  */
    int64_t top_stride;
    T *H;                   /* (3, 2, c1-c0+3): bottom rows of the tile rows          */
    T *V;                   /* (2, vstride): right columns of the tiles, by tile row  */
    int64_t vstride;
    uint32_t *codes;        /* tile-major step codes, or NULL                         */
    T *ckpt;                /* LINEAR's checkpoints (ck_count of 2 rows of m + 2)     */
    int64_t ck_every, ck_count;
    T *last;                /* D(r1, c1)                                              */
    T *lastrow;             /* subsequence: D(r1, j) at [j - c0], or NULL             */
    int64_t diag, ti_lo;    /* this launch: tiles (ti_lo + blockIdx.x, diag - ti)     */
    int64_t nd;             /* ... for blockIdx.x < nd                                */
    const T *cin;           /* split mode: the costs of those tiles (cost blocks' out) */
    T *cout;                /* the cost blocks' output: tiles (ti_lo1 + blockIdx.x - nd,
                               diag + 1 - ti), TileSmem::costs values each, or NULL   */
    int64_t ti_lo1;
};

/* Local costs of a lane's R rows at one column: one vector access (8 to 32 bytes). */
template <typename T, int R> struct alignas(sizeof(T) * R < 16 ? sizeof(T) * R : 16) CostVec {
    T v[R];
};

/*
 * A tile's dynamic shared memory: the cost ring (kRing columns of the tile's TH rows, a
 * column's row r at [col % kRing][r] with a row stride of P = 34 R values: the skewed reads of
 * a step, lane l at column s - l, then fall in distinct banks), b's columns transposed, their
 * cosine norms, the top frame.
 */
template <typename T, int DB, int R> struct TileSmem {
    static constexpr int P = 34 * R;
    static constexpr int BS = DB > 0 ? DB : 1;
    /* b's column q at bs[q S ..]: read as 16-byte vectors (VW values) where BS allows,
     * with S chosen so that 8 lanes at consecutive columns hit distinct banks */
    static constexpr int VW = 16 / (int)sizeof(T);
    static constexpr bool VEC = BS % VW == 0;
    static constexpr int S = !VEC ? BS : (BS / VW) % 2 == 1 ? BS : BS + VW;
    static constexpr size_t o_bs = (size_t)kRing * P * sizeof(T);
    static constexpr size_t o_nbs = o_bs + (size_t)S * kTW * sizeof(T);
    static constexpr size_t o_tops = o_nbs + (size_t)kTW * sizeof(T);
    /* the tile's two bottom rows, written by lane 31 during the sweep and copied out to H
     * (and a checkpoint) after it in whole lines: [2][kTW] */
    static constexpr size_t o_brow = o_tops + 2 * (size_t)(kTW + 2) * sizeof(T);
    /* the tile's step codes, a lane's R rows of kWords words at [lane][r][word], lanes
     * kCw words apart (odd: a step's stores of 32 lanes fall in distinct banks) */
    static constexpr int kCw = R * kWords + 1;
    static constexpr size_t o_csm = o_brow + 2 * (size_t)kTW * sizeof(T);
    static constexpr size_t bytes = o_csm + (size_t)32 * kCw * sizeof(uint32_t);
    /* Split mode needs less, each role its part (so more blocks fit an SM: a launch of
     * split tiles and cost blocks is then one wave where the fused layout made it 1.5 on
     * the H100): a tile's warp the ring of kSRing steps in step order, the top frame, the
     * bottom rows and the step codes; a cost block b's columns and their norms, from
     * offset 0. */
    static constexpr size_t o_stops = (size_t)kSRing * 32 * R * sizeof(T);
    static constexpr size_t o_cnbs = (size_t)S * kTW * sizeof(T);
    static constexpr size_t o_sbrow = o_stops + 2 * (size_t)(kTW + 2) * sizeof(T);
    static constexpr size_t o_scsm = o_sbrow + 2 * (size_t)kTW * sizeof(T);
    static constexpr size_t split_tile = o_scsm + (size_t)32 * kCw * sizeof(uint32_t);
    static constexpr size_t split_cost = o_cnbs + (size_t)kTW * sizeof(T);
    static constexpr size_t split_bytes = split_tile > split_cost ? split_tile : split_cost;
    /* a cost block's output (split mode): kTW + 31 steps of 32 lanes' R values */
    static constexpr int64_t costs = (int64_t)(kTW + 31) * 32 * R;
};

/* One tile's sweep: the lane's registers and the two phases of a chunk (see fwd_tile). */
template <typename T, int DB, int R, bool P05, bool COS> struct TileSweep {
    using L = TileSmem<T, DB, R>;
    static constexpr int BS = L::BS, P = L::P;
    const FwdArgs<T> &g;
    T *ring;
    T *bs; /* b's column q at bs[q L::S ..] */
    const T *nbs;
    const T (*tops)[kTW + 2];
    int lane, wlim;
    int64_t c0t, tc, hs, i0, vrow;
    T ar[R][BS];
    T na[R];
    int64_t lo[R], hi[R];
    T prev1[R], prev2[R]; /* D at columns j-1 and j-2 of the lane's rows */
    T b3;                 /* D at column j-3 of the last row, after a step: j-2 for lane l+1 */
    uint32_t word[R];
    T w0, w1, w2; /* the step pattern's weights */
    bool top0, has_r1;
    uint32_t *cw;  /* the tile's first code word in device memory, or NULL */
    uint32_t *csm; /* the lane's code words in shared memory (TileSmem::o_csm) */
    T *vp;         /* V at the lane's rows */
    T *brow;       /* the tile's bottom rows in shared memory, [2][kTW]: lane 31's cells */
    T *hp, *ckp;   /* H and the checkpoint (or NULL) at the tile's first column (at j + 2) */

    __device__ TileSweep(const FwdArgs<T> &args) : g(args) {}

    /* The local costs of column q (of the tile) at the lane's rows, each summed over k in
     * cost.h's order; no branch with EXACT = false (div_fast: ok cleared where it cannot
     * vouch for a quotient). */
    template <bool EXACT> __device__ __forceinline__ CostVec<T, R> col_cost(int q, bool &ok)
    {
        CostVec<T, R> cv;
#pragma unroll
        for (int r = 0; r < R; ++r)
            cv.v[r] = 0;
        if (DB > 0) {
            T bq[BS];
            if (L::VEC) {
                using V16 = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
#pragma unroll
                for (int k = 0; k < BS; k += L::VW)
                    *(V16 *)(bq + k) = *(const V16 *)(bs + q * L::S + k);
            } else {
#pragma unroll
                for (int k = 0; k < BS; ++k)
                    bq[k] = bs[q * L::S + k];
            }
#pragma unroll
            for (int k = 0; k < BS; ++k) {
                const T bk = bq[k];
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if (!COS && g.kc == TSW_COST_ABS) {
                        cv.v[r] = cv.v[r] + fabs(ar[r][k] - bk);
                    } else if (COS) {
                        cv.v[r] = cv.v[r] + ar[r][k] * bk;
                    } else {
                        const T d = ar[r][k] - bk;
                        cv.v[r] = cv.v[r] + d * d;
                    }
                }
            }
        } else {
            const T *bj = g.b + (c0t + q) * g.dim;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int64_t i = i0 + r, ic = i < g.n ? i : g.n - 1;
                const T *ai = g.a + ic * g.dim;
                T acc = 0;
                for (int64_t k = 0; k < g.dim; ++k) {
                    const T x = ai[k], y = bj[k];
                    if (g.kc == TSW_COST_ABS)
                        acc = acc + fabs(x - y);
                    else if (COS)
                        acc = acc + x * y;
                    else
                        acc = acc + (x - y) * (x - y);
                }
                cv.v[r] = acc;
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (!COS && g.kc == TSW_COST_EUCLIDEAN) {
                cv.v[r] = sqrt_of(cv.v[r]);
            } else if (COS) {
                const T nx = na[r], ny = nbs[q], xy = cv.v[r];
                /* EXACT = false: a zero norm fails div_fast's range check (ok cleared, the
                 * chunk is redone), so the zero-norm cases need no select here */
                cv.v[r] = EXACT ? ((nx == (T)0 && ny == (T)0) ? (T)0
                                   : (nx == (T)0 || ny == (T)0) ? (T)1
                                                                : (T)1 - xy / (nx * ny))
                                : (T)1 - div_fast(xy, nx * ny, ok);
            }
        }
        return cv;
    }

    /* Phase 1 (fused): the costs of columns [q0, q0 + kChunk) into the ring. No dependence
     * between cells, so the warp runs at its issue rate. */
    template <bool EXACT> __device__ __forceinline__ bool costs(int q0)
    {
        const int qn = wlim - q0 < kChunk ? wlim - q0 : kChunk;
        bool ok = true;
#pragma unroll 4
        for (int qq = 0; qq < qn; ++qq) {
            const int q = q0 + qq;
            *(CostVec<T, R> *)(ring + (q & (kRing - 1)) * P + lane * R) = col_cost<EXACT>(q, ok);
        }
        return ok;
    }

    /* A cost block: the tile's costs in step order, step s's at out[(32 s + lane) R ..],
     * lane l's column q = s - l, so a sweep's loads are contiguous. The steps where a lane
     * has no column (s < l, s >= wlim + l) are left as they are: the sweep computes cells
     * from them that it neither keeps nor stores. Each lane's columns are computed once:
     * at round k, lane l takes column (k - l) mod wlim, so every lane has a column in every
     * round (where a round a step had the lanes of the skew's two corners idle, a fifth of
     * the cost block's work with 128 columns); with wlim >= 32 a round's stores fall in two
     * steps. */
    template <bool EXACT> __device__ __forceinline__ bool costs_out(T *out)
    {
        bool ok = true;
        int q = (wlim - lane % wlim) % wlim; /* (0 - lane) mod wlim, then one up a round */
#pragma unroll 4
        for (int k = 0; k < wlim; ++k) {
            *(CostVec<T, R> *)(out + ((int64_t)(q + lane) * 32 + lane) * R) =
                col_cost<EXACT>(q, ok);
            q = q + 1 == wlim ? 0 : q + 1;
        }
        return ok;
    }

    /* Split: copy the costs of steps [kSChunk c, kSChunk (c + 1)) into the ring (slot c mod
     * 2, step order) without waiting; a lane copies only its own values, so no lane waits on
     * another. */
    __device__ __forceinline__ void fetch(const T *cin, int c)
    {
        constexpr int VB = (int)sizeof(T) * R; /* bytes a lane copies per step */
        constexpr int PB = VB < 16 ? VB : 16;
        const int ns = wlim + 31, s0 = c * kSChunk;
        const int s1 = s0 + kSChunk < ns ? s0 + kSChunk : ns;
        for (int st = s0; st < s1; ++st) {
            const char *src = (const char *)(cin + ((int64_t)st * 32 + lane) * R);
            char *dst = (char *)(ring + ((st & (kSRing - 1)) * 32 + lane) * R);
#pragma unroll
            for (int o = 0; o < VB; o += PB)
                __pipeline_memcpy_async(dst + o, src + o, PB);
        }
        __pipeline_commit();
    }

    /* Phase 2: steps [s0, s1) of the skewed sweep (lane l at column q = s - l). SIMPLE: a
     * tile whose rows' windows cover its columns and that holds neither row 0 nor the
     * region's last row, so its cells need none of those tests. A lane before its first
     * column keeps its state; past its last one it computes cells nobody reads and
     * writes nothing. ALL: steps where every lane has a column (31 <= s < wlim), which
     * need none of those selects. */
    template <bool SIMPLE, bool SPLIT, bool ALL = false>
    __device__ __forceinline__ void steps(int s0, int s1)
    {
        const T INF = inf_of<T>();
#pragma unroll 2
        for (int s = s0; s < s1; ++s) {
            /* lane l-1 after step s-1: rows R-1, R-2 at columns j, j-1, j-2 */
            T u_j = __shfl_up_sync(kFull, prev1[R - 1], 1);
            T u_j1 = __shfl_up_sync(kFull, prev2[R - 1], 1);
            T u_j2 = __shfl_up_sync(kFull, b3, 1);
            T u2_j1 = __shfl_up_sync(kFull, prev2[R - 2], 1);
            /* lane 0: the top frame instead (every lane reads the same slots: a broadcast,
             * no divergent branch; s + 2 <= kTW + 1 while lane 0 has columns left) */
            {
                const int x = s < kTW ? s : kTW - 1;
                const T f_j = tops[1][x + 2], f_j1 = tops[1][x + 1], f_j2 = tops[1][x];
                const T f2_j1 = tops[0][x + 1];
                if (lane == 0) {
                    u_j = f_j;
                    u_j1 = f_j1;
                    u_j2 = f_j2;
                    u2_j1 = f2_j1;
                }
            }
            const int q = s - lane;
            /* a lane's state stops at its last column: V is then its prev1, prev2 */
            const bool act = ALL || (q >= 0 && q < wlim), adv = act;
            const CostVec<T, R> cv =
                SPLIT ? *(const CostVec<T, R> *)(ring + ((s & (kSRing - 1)) * 32 + lane) * R)
                      : *(const CostVec<T, R> *)(ring + (q & (kRing - 1)) * P + lane * R);
            const int64_t j = c0t + q;

            /* the cells, top row first: D(i-1, j) of row r > 0 is this step's row r-1 */
            T nw[R];
            int code[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const T d_up = r == 0 ? u_j : nw[r - 1];     /* D(i-1, j)   */
                const T d_d = r == 0 ? u_j1 : prev1[r - 1];  /* D(i-1, j-1) */
                const T d_l = prev1[r];                      /* D(i, j-1)   */
                const T d_12 = r == 0 ? u_j2 : prev2[r - 1]; /* D(i-1, j-2) */
                const T d_21 = r == 0 ? u2_j1 : r == 1 ? u_j1 : prev1[r > 1 ? r - 2 : 0];
                /*                                              D(i-2, j-1) */
                const T cc = cv.v[r];
                T v0, v1, v2;
                if (P05) {
                    v0 = d_d + w0 * cc;
                    v1 = d_12 + w1 * cc;
                    v2 = d_21 + w2 * cc;
                } else {
                    v0 = d_d + cc;
                    v1 = d_l + cc;
                    v2 = d_up + cc;
                }
                T b1, best;
                int cd;
#define TSW__LT(x, y) ((x) < (y))
#define TSW__SEL(mk, x, y) ((mk) ? (x) : (y))
                TSW_PATH_CELL_SEL(v0, v1, v2, b1, best, cd, TSW__LT, TSW__SEL, 0, 1, 2);
#undef TSW__LT
#undef TSW__SEL
                if (!SIMPLE) {
                    const int64_t i = i0 + r;
                    if (!(lo[r] <= j && j < hi[r])) {
                        best = INF;
                        cd = 0;
                    } else if (top0 && i == 0) {
                        best = cell0(g.p, cc, d_d, P05 ? d_12 : d_l, P05 ? d_21 : d_up,
                                     g.subseq || j == 0, &cd);
                    }
                }
                nw[r] = best;
                code[r] = cd;
            }

            /* outputs: codes, borders, checkpoints, the region's last cell. A row's word
             * takes each step's code in at the top (one funnel shift): at q = 16 k + 15 it
             * holds columns 16 k .. q, column 16 k in bits 0-1; it goes to its slot in
             * shared memory every step, and the last one written is the whole word (the
             * row's last, partial word is shifted into place when copied out) */
#pragma unroll
            for (int r = 0; r < R; ++r) {
                word[r] = __funnelshift_r(word[r], (uint32_t)code[r], 2);
                if (act)
                    csm[r * kWords + (q >> 4)] = word[r];
            }
            if (!SIMPLE && has_r1 && act) {
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if (i0 + r == g.r1) {
                        if (j == g.c1)
                            *g.last = nw[r];
                        if (g.lastrow)
                            g.lastrow[j - g.c0] = nw[r];
                    }
                }
            }
            if (lane == 31 && act) {
                brow[q] = nw[R - 2];
                brow[kTW + q] = nw[R - 1];
            }
            b3 = adv ? prev2[R - 1] : b3;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                prev2[r] = adv ? prev1[r] : prev2[r];
                prev1[r] = adv ? nw[r] : prev1[r];
            }
        }
    }

    /* The tile: chunks of kChunk columns, each its costs (phase 1) then the steps that
     * reach its columns (phase 2); the ring holds two chunks, as many columns as the
     * steps of a chunk read (s - 31 .. s). */
    template <bool SIMPLE> __device__ __forceinline__ void sweep(const T *cin)
    {
        sweep_steps<SIMPLE>(cin);
        __syncwarp(); /* the codes, and lane 31's bottom rows: out to H and the checkpoint */
        if (cw) {
            /* word x of the tile (row-major) from its lane's slots; the rows past the
             * region's last are not stored */
            constexpr int TH = 32 * R, CW = TileSmem<T, DB, R>::kCw;
            const int nwd = (wlim + 15) >> 4, sh_last = 2 * (15 - ((wlim - 1) & 15));
            const uint32_t *cs = csm - lane * CW; /* lane 0's */
            for (int x = lane; x < TH * kWords; x += 32) {
                const int row = x / kWords, wd = x - row * kWords;
                if (wd < nwd && i0 - lane * R + row <= g.r1) {
                    const uint32_t w = cs[(row / R) * CW + (row % R) * kWords + wd];
                    cw[x] = wd == nwd - 1 ? w >> sh_last : w;
                }
            }
        }
        for (int x = lane; x < wlim; x += 32) {
            const T r0 = brow[x], r1 = brow[kTW + x];
            hp[x] = r0;
            hp[hs + x] = r1;
            if (ckp) {
                ckp[x] = r0;
                ckp[g.m + 2 + x] = r1;
            }
        }
        if (wlim == kTW) {
            /* the tile's right columns for the next tile of the row */
#pragma unroll
            for (int r = 0; r < R; ++r) {
                vp[r] = prev2[r];
                vp[g.vstride + r] = prev1[r];
            }
        }
    }

    template <bool SIMPLE> __device__ __forceinline__ void sweep_steps(const T *cin)
    {
        if (cin) {
            /* split: the costs were computed by the previous launch's cost blocks */
            const int ns = wlim + 31, nch = (ns + kSChunk - 1) / kSChunk;
            __syncwarp(); /* the top frame */
            fetch(cin, 0);
            for (int c = 0; c < nch; ++c) {
                if (c + 1 < nch)
                    fetch(cin, c + 1);
                else
                    __pipeline_commit(); /* an empty group: chunk c is then the older one */
                __pipeline_wait_prior(1);
                /* steps [31, wlim) have a column in every lane: no lane keeps its state */
                const int s0 = c * kSChunk, s1 = s0 + kSChunk < ns ? s0 + kSChunk : ns;
                const int a = s0 > 31 ? s0 : (s1 < 31 ? s1 : 31);
                const int b = a > (s1 < wlim ? s1 : wlim) ? a : (s1 < wlim ? s1 : wlim);
                steps<SIMPLE, true>(s0, a);
                steps<SIMPLE, true, true>(a, b);
                steps<SIMPLE, true>(b, s1);
            }
            return;
        }
        const int nch = (wlim + kChunk - 1) / kChunk;
        for (int c = 0; c < nch; ++c) {
            const int q0 = c * kChunk;
            __syncwarp(); /* the previous chunk's steps are done with the slots */
            if (!__all_sync(kFull, costs<false>(q0)))
                costs<true>(q0); /* an extreme cosine norm or dot product: exact division */
            __syncwarp();
            steps<SIMPLE, false>(q0, c == nch - 1 ? wlim + 31 : q0 + kChunk);
        }
    }
};

/*
 * One tile per 32-thread block (see the file comment). DB: the dim bucket whose a values a
 * lane keeps in registers (1, 4, 8, 12, 16; 0 = any dim, a and b read from global memory),
 * R: rows per lane (>= 2: the two rows above a lane's first row are both lane l-1's). P05: the
 * step pattern (g.p != 0), COS: the cosine cost (g.kc), compiled in so that a cell has no
 * branch on them. Dynamic shared memory: TileSmem<T, DB, R>::bytes.
 */
template <typename T, int DB, int R, bool P05, bool COS>
__global__ void __launch_bounds__(32) fwd_tile(FwdArgs<T> g)
{
    using L = TileSmem<T, DB, R>;
    constexpr int TH = 32 * R, BS = L::BS;
    extern __shared__ __align__(16) unsigned char smem[];
    const T INF = inf_of<T>();
    const int lane = threadIdx.x;
    /* blocks [0, nd): the tiles of diagonal diag; then the cost blocks of diagonal diag + 1 */
    const bool dp = blockIdx.x < g.nd;
    const int64_t kb = dp ? (int64_t)blockIdx.x : (int64_t)blockIdx.x - g.nd;
    const int64_t ti = (dp ? g.ti_lo : g.ti_lo1) + kb, tj = (dp ? g.diag : g.diag + 1) - ti;
    const int64_t r0t = g.r0 + ti * TH, c0t = g.c0 + tj * kTW;
    const int64_t wl = g.c1 + 1 - c0t;
    const int64_t dim = g.dim;
    const T *cin = dp && g.cin ? g.cin + kb * L::costs : nullptr;
    /* shared memory by role (TileSmem): fused tile, split tile, cost block */
    T *bs = (T *)(smem + (dp ? L::o_bs : 0));
    T *nbs = (T *)(smem + (dp ? L::o_nbs : L::o_cnbs));
    T(*tops)[kTW + 2] = (T(*)[kTW + 2])(smem + (cin ? L::o_stops : L::o_tops));

    TileSweep<T, DB, R, P05, COS> t(g);
    t.ring = (T *)smem;
    t.bs = bs;
    t.nbs = nbs;
    t.tops = tops;
    t.lane = lane;
    t.wlim = wl < kTW ? (int)wl : kTW;
    t.c0t = c0t;
    t.tc = c0t - g.c0;
    t.hs = g.c1 - g.c0 + 3; /* frame row stride */
    t.i0 = r0t + (int64_t)lane * R;
    const int wlim = t.wlim;

    if (!cin) {
        /* the costs' inputs: b's columns, their norms, the lane's rows of a */
        if (DB > 0) {
            for (int x = lane; x < wlim * (int)dim; x += 32) {
                int q = x / (int)dim, k = x - q * (int)dim;
                bs[q * L::S + k] = g.b[(c0t + q) * dim + k];
            }
            /* dims dim .. BS-1 are zeros in b's columns and in the lane's a values: they
             * add +0 to a cost (exactly: a sum that starts at +0 never is -0), so the cost
             * loops run BS dims without a test */
            const int pad = BS - (int)dim;
            for (int x = lane; x < pad * kTW; x += 32)
                bs[(x / pad) * L::S + (int)dim + x % pad] = (T)0;
        }
        if (COS)
            for (int x = lane; x < wlim; x += 32)
                nbs[x] = g.nb[c0t + x];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int64_t i = t.i0 + r;
            const int64_t ic = i < g.n ? i : g.n - 1; /* rows past the region: any row */
#pragma unroll
            for (int k = 0; k < BS; ++k)
                t.ar[r][k] = (DB > 0 && k < dim) ? g.a[ic * dim + k] : (T)0;
            t.na[r] = COS ? g.na[ic] : (T)0;
        }
        __syncwarp();
    }
    if (!dp) {
        T *out = g.cout + kb * L::costs;
        if (!__all_sync(kFull, t.template costs_out<false>(out)))
            t.template costs_out<true>(out); /* an extreme cosine norm or dot product */
        return;
    }

    /* the top frame: the region's, or the bottom rows of tile row ti-1 */
    const T *top = ti == 0 ? g.top : g.H + ((ti - 1) % 3) * 2 * t.hs;
    const int64_t ts = ti == 0 ? g.top_stride : t.hs;
    for (int x = lane; x < wlim + 2; x += 32) {
        tops[0][x] = top[t.tc + x];
        tops[1][x] = top[ts + t.tc + x];
    }

    /* this lane's rows: window, left frame */
    t.vrow = ti * TH + (int64_t)lane * R;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t i = t.i0 + r;
        if (i > g.r1) {
            t.lo[r] = t.hi[r] = 0; /* nothing admissible: +inf, never read */
        } else if (g.lo) {
            t.lo[r] = g.lo[i];
            t.hi[r] = g.hi[i];
        } else {
            t.lo[r] = 0;
            t.hi[r] = g.m;
        }
        t.prev1[r] = tj == 0 ? INF : g.V[g.vstride + t.vrow + r];
        t.prev2[r] = tj == 0 ? INF : g.V[t.vrow + r];
        t.word[r] = 0;
    }
    t.b3 = INF;
    t.w0 = (T)tsw_path_weight(g.p, 0);
    t.w1 = (T)tsw_path_weight(g.p, 1);
    t.w2 = (T)tsw_path_weight(g.p, 2);
    /* Tile-wide facts that spare the cells their 64-bit tests: every row's window covers
     * the tile's columns; the tile holds row 0; it holds the region's last row. */
    bool cover = true;
#pragma unroll
    for (int r = 0; r < R; ++r)
        cover = cover && t.lo[r] <= c0t && t.hi[r] >= c0t + wlim;
    const bool inside = __all_sync(kFull, cover);
    t.top0 = r0t == 0;
    t.has_r1 = r0t <= g.r1 && g.r1 < r0t + TH;

    t.cw = g.codes ? g.codes + (ti * g.ntj + tj) * (int64_t)(TH * kWords) : nullptr;
    t.csm = (uint32_t *)(smem + (cin ? L::o_scsm : L::o_csm)) + lane * L::kCw;
    t.vp = g.V + t.vrow;
    /* the tile's bottom rows go to H (column q at tc + q + 2) and a checkpoint (at j + 2) */
    t.brow = (T *)(smem + (cin ? L::o_sbrow : L::o_brow));
    t.hp = g.H + (ti % 3) * 2 * t.hs + t.tc + 2;
    t.ckp = nullptr;
    if (g.ckpt && (ti + 1) % g.ck_every == 0 && (ti + 1) / g.ck_every - 1 < g.ck_count)
        t.ckp = g.ckpt + ((ti + 1) / g.ck_every - 1) * 2 * (g.m + 2) + c0t + 2;

    if (inside && !t.top0 && !t.has_r1)
        t.template sweep<true>(cin);
    else
        t.template sweep<false>(cin);
}

/*
 * Backtrace through a region's stored codes from state[0..1] = (i, j), appending cells to
 * path (pairs, last cell first) from index state[2]. On return state = (i, j, length,
 * status): status 1 = the path's start was reached, 0 = (i, j) is the first cell outside
 * the region. One 32-thread block: the warp loads a tile's codes, lane 0 walks them.
 */
template <int R>
__global__ void __launch_bounds__(32)
    trace_kernel(const uint32_t *codes, int64_t r0, int64_t c0, int64_t ntj, int p,
                 int subseq, int64_t *path, int64_t *state)
{
    constexpr int TH = 32 * R, NW = TH * kWords; /* rows, code words of a tile */
    __shared__ __align__(16) uint32_t tile[NW];
    const int lane = threadIdx.x;
    int64_t i = state[0], j = state[1], len = state[2];
    int status = 2;
    /* the steps' (di, dj) by code, 2 bits each */
    unsigned tdi = 0, tdj = 0;
    for (int c = 0; c < 3; ++c) {
        tdi |= (unsigned)tsw_path_di(p, c) << (2 * c);
        tdj |= (unsigned)tsw_path_dj(p, c) << (2 * c);
    }
    while (status == 2) {
        const int64_t ti = (i - r0) / TH, tj = (j - c0) / kTW;
        const int64_t bi = r0 + ti * TH, bj = c0 + tj * kTW; /* the tile's first cell */
        const uint4 *src = (const uint4 *)(codes + (ti * ntj + tj) * (int64_t)NW);
        for (int x = lane; x < NW / 4; x += 32)
            ((uint4 *)tile)[x] = src[x];
        /* the path leaves the tile up, left or up-left: those tiles' codes on their way to
         * L2 (from device memory) while lane 0 walks this one (lines of 128 bytes) */
        constexpr int NL = NW * 4 / 128;
        for (int x = lane; x < 3 * NL; x += 32) {
            const int64_t di = x < 2 * NL ? 1 : 0, dj = x >= NL ? 1 : 0;
            if (ti - di >= 0 && tj - dj >= 0)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(
                    (const char *)(codes + ((ti - di) * ntj + tj - dj) * (int64_t)NW) +
                    (x % NL) * 128));
        }
        __syncwarp();
        if (lane == 0) {
            /* the walk in the tile's own 32-bit coordinates: it leaves the tile only up or
             * left (li or lq < 0) */
            int li = (int)(i - bi), lq = (int)(j - bj), k = 0;
            const int stop_li = subseq && bi == 0 ? 0 : -1; /* subsequence: row 0 */
            longlong2 *out = (longlong2 *)(path + 2 * len);
            for (;;) {
                out[k++] = make_longlong2((long long)(bi + li), (long long)(bj + lq));
                if (li == stop_li) {
                    status = 1;
                    break;
                }
                const int code = (int)((tile[li * kWords + (lq >> 4)] >> (2 * (lq & 15))) & 3u);
                if (code == TSW_PATH_START) {
                    status = 1;
                    break;
                }
                li -= (int)((tdi >> (2 * code)) & 3u);
                lq -= (int)((tdj >> (2 * code)) & 3u);
                if (li < 0 || lq < 0) {
                    if (bi + li < r0 || bj + lq < c0)
                        status = 0; /* the first cell outside the region */
                    break;            /* else status 2: the next tile */
                }
            }
            i = bi + li;
            j = bj + lq;
            len += k; /* status 1: (i, j) is the start, appended; else the next cell */
        }
        status = __shfl_sync(kFull, status, 0);
        i = __shfl_sync(kFull, i, 0);
        j = __shfl_sync(kFull, j, 0);
        len = __shfl_sync(kFull, len, 0);
        __syncwarp();
    }
    if (lane == 0) {
        state[0] = i;
        state[1] = j;
        state[2] = len;
        state[3] = status;
    }
}

/*
 * Subsequence DTW: the start column of the path ending at every end column e of the last
 * row (-1 where D(n-1, e) is +inf), by following the region's stored codes (the whole grid:
 * r0 = c0 = 0) from (n-1, e) to row 0 or a start code: the cells the CPU's forward start
 * labels (cpu/path_impl.h) are copied through, so the same start. One thread per end; the
 * threads of a warp follow nearby paths that soon merge, so their code words are cached.
 */
template <typename T, int R>
__global__ void start_kernel(const uint32_t *codes, const T *lastrow, int64_t n, int64_t m,
                             int64_t ntj, int p, int64_t *start)
{
    constexpr int TH = 32 * R, NW = TH * kWords;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < m;
         e += (int64_t)gridDim.x * blockDim.x) {
        int64_t s = -1;
        if (lastrow[e] < inf_of<T>()) {
            int64_t i = n - 1, j = e;
            for (;;) {
                if (i == 0) {
                    s = j; /* a subsequence path starts where it reaches row 0 */
                    break;
                }
                const int64_t ti = i / TH, tj = j / kTW, lr = i - ti * TH, lq = j - tj * kTW;
                const uint32_t w = codes[(ti * ntj + tj) * (int64_t)NW + lr * kWords + (lq >> 4)];
                const int code = (int)((w >> (2 * (lq & 15))) & 3u);
                if (code == TSW_PATH_START) {
                    s = j;
                    break;
                }
                i -= tsw_path_di(p, code);
                j -= tsw_path_dj(p, code);
                if (i < 0 || j < 0)
                    break; /* not reached: a finite cell's step comes from a finite cell */
            }
        }
        start[e] = s;
    }
}

/* sqrt(<x,x>) of count points of dim values, summed in cost.h's order (k = 0, 1, ...). */
template <typename T>
__global__ void norms_kernel(const T *x, int64_t count, int64_t dim, T *out)
{
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < count;
         t += (int64_t)gridDim.x * blockDim.x) {
        T s = 0;
        for (int64_t k = 0; k < dim; ++k)
            s = s + x[t * dim + k] * x[t * dim + k];
        out[t] = sqrt_of(s);
    }
}

template <typename T> __global__ void fill_kernel(T *p, int64_t count, int64_t stride, int width)
{
    /* count rows of `stride` elements: the first `width` of each set to +inf */
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < count * width;
         t += (int64_t)gridDim.x * blockDim.x)
        p[(t / width) * stride + t % width] = inf_of<T>();
}

/* Banded grids: the top frame of block k (rows r0-2, r0-1 at the columns c0-2 .. c1, x at
 * column c0 - 2 + x, w2 = c1 - c0 + 3 values a row) from the bottom rows of block k-1, which
 * its forward pass left in an H slot (hs = c1p - c0p + 3 values a row, x at column
 * c0p - 2 + x); the columns block k-1 did not cover are outside the window: +inf. */
template <typename T>
__global__ void frame_kernel(const T *Hs, int64_t hs, int64_t c0p, T *F, int64_t c0, int64_t w2)
{
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < 2 * w2;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = t / w2, x = t - row * w2, s = c0 - c0p + x;
        F[t] = s >= 0 && s < hs ? Hs[row * hs + s] : inf_of<T>();
    }
}

} // namespace

#endif
