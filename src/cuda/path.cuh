/*
 * CUDA alignment paths: tsw__cuda_dtw_path (internal.h), called by align.c for
 * exec->device == CUDA (and AUTO on large grids). Same D values, same 2-bit step codes and
 * therefore the same path as the CPU kernels (cpu/path_impl.h): the cell rule is
 * common/path.h's, the local costs are summed in cost.h's order, and this file is compiled
 * with -fmad=false (CMakeLists.txt) so no a*b+c is contracted into an FMA.
 *
 * Grid: cell (i, j), i over a (rows, n), j over b (columns, m). Everything runs on a REGION:
 * rows [r0, r1] x columns [c0, c1], with a top frame (rows r0-2 and r0-1 at the columns
 * c0-2 .. c1, in device memory) and a left frame of +inf (columns c0-2, c0-1).
 *
 * Forward pass (fwd_tile): the region is cut into tiles of TH = 32 R rows x TW = 128
 * columns, computed in wavefront order, one launch per anti-diagonal of tiles (tile (ti, tj)
 * needs (ti-1, tj), (ti, tj-1) and (ti-1, tj-1); a launch only depends on earlier launches,
 * so there is nothing to deadlock). One warp (one 32-thread block) per tile:
 *   lane l owns the R consecutive rows i0 = r0t + l R .. i0 + R - 1 of the tile and at step
 *   s computes their cells in column q = s - l of the tile (a skewed sweep, TW + 31 steps),
 *   top row first. What a lane needs from the rows above its own (D(i0-1, j), D(i0-1, j-1),
 *   D(i0-1, j-2), D(i0-2, j-1)) is what lane l-1 holds after step s-1: its rows R-1 and R-2
 *   at columns j, j-1, j-2 (R >= 2), read with 4 __shfl_up_sync per step; lane 0 reads the
 *   tile's top frame from shared memory instead. A step has no branch: the local costs
 *   are computed apart from the dependent chain of D, as independent cells at the warp's
 *   issue rate, and a step reads its lane's R costs with one shared-memory load:
 *   fused   (diagonals of more than kSplitMax tiles, which fill the GPU by themselves): the
 *           tile's warp computes the costs of 32 columns at a time into a ring of 64
 *           columns, then runs the steps that reach those columns;
 *   split   (narrower diagonals: most of a grid's launches, and all of one of 100k x 100k):
 *           launch d also runs one cost block per tile of diagonal d + 1, which writes the
 *           tile's costs in step order to a slot in global memory (d + 1 mod 2), each of
 *           its lanes' columns once; the tile's warp in launch d + 1 copies them into
 *           shared memory 16 to 32 steps ahead (cp.async), so it only runs the chain. Twice
 *           the warps per launch, and the costs (most of a cell's instructions) are off the
 *           chain. Each role takes only its part of the shared memory (TileSmem::
 *           split_bytes), so that a launch is one wave: 782 tiles and 782 cost blocks of
 *           100k x 100k fit the H100's SMs at 12 blocks an SM.
 *   Cosine quotients use nvcc's fast division path without its rarely taken branch
 *   (div_fast); a chunk where it cannot vouch for a quotient is redone with x / y, so the
 *   costs are bit for bit those of x / y and of the CPU.
 *   Registers per lane: its R rows of a (dim values each, DB > 0; fused and cost blocks), D
 *   at columns j-1 and j-2 of its rows, one word of step codes per row. Shared memory
 *   (dynamic, TileSmem): the cost ring, the tile's columns of b (column q at bs[q S], read
 *   as 16-byte vectors), their cosine norms, the top frame (2 x (TW + 2)), the tile's two
 *   bottom rows, which lane 31 writes during the sweep and the warp copies to H (and a
 *   checkpoint) after it, and the tile's step codes, which each lane writes into its
 *   rows' words every step and the warp copies out whole after the sweep.
 *   Borders between tiles (global memory): H, the two bottom rows of each tile row, in 3
 *   slots by ti mod 3 (a launch's tiles read slot ti-1 at their columns and the two left
 *   of them while the tiles of the same launch write slots ti, never the same entries);
 *   V, the two right columns of each tile, one slot (only tiles of the same tile row read
 *   and write a row's entries, in successive launches). Codes: 2 bits per cell, 16 cells
 *   to a 32-bit word, tile-major (a tile's TH x TW / 16 words contiguous, row-major
 *   inside), so the backtrace loads a whole tile at once.
 *   Cell updates: (r1 - r0 + 1) (c1 - c0 + 1) per region pass (GCUPS in bench/gpu_align.py).
 * Backtrace (trace_kernel): one warp loads the tile the path is in (TH x TW / 16 words) into
 *   shared memory, lane 0 follows the codes until the path leaves the tile, repeat; the
 *   path goes into a device buffer last cell first, and the host reverses it.
 *
 * Methods (tsw_path_method):
 *   STORED  one region, the whole grid: n m / 4 bytes of codes.
 *   LINEAR  a forward pass over the grid keeps checkpoints, rows k h - 2 and k h - 1 for
 *           blocks of h rows (h a multiple of TH: the bottom rows of a tile row). Then from
 *           the end cell up: the block holding the path's current cell (ei, ej) is
 *           recomputed from its checkpoint as the region rows [k h, ei] x columns [cl, ej]
 *           with its codes stored, and traced until the path leaves it. SYMMETRIC1 (steps
 *           (0,1) within a row): cl = 0. The p05 geometry reads rows i-1 and i-2 only, so
 *           row r0 + t of a region is exact from column cl + 2t on even with a +inf left
 *           frame, and a path entering at (ei, ej) lies right of ej - 2 (ei - i) in row i:
 *           cl = ej - 2 (ei - r0) - 2 keeps every cell it visits exact. Every D value on the
 *           path is the full forward pass's, so the path is STORED's.
 *   AUTO    STORED when its codes fit (memory_limit, else the free device memory), else
 *           LINEAR with h as large as memory allows (p05: at most 8192, its recomputation
 *           is 2 h columns per block).
 * Progress: cells of forward passes, polled between launches (a sync at most every 50 ms);
 *   a cancel returns TSW_ECANCELED with nothing written.
 * Subsequence DTW (subseq_run): the same forward pass with row 0 free, every code stored,
 *   the last row written by the pass (FwdArgs::lastrow), starts by following the codes back
 *   from every end (start_kernel), the CPU's choice of the k matches, traces as above.
 *
 * Files: this header holds the kernels and drivers as templates; path_f32.cu and
 * path_f64.cu instantiate them for one precision each (two translation units that nvcc
 * compiles in parallel: the instances of both were one file's 5.5 minutes for three GPU
 * targets on two cores), and path.cu holds the entry points, which pick the precision.
 */
#ifndef TSW_CUDA_PATH_CUH
#define TSW_CUDA_PATH_CUH

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

/* ---- host side ---------------------------------------------------------------------------- */

inline unsigned blocks_for(int64_t count)
{
    int64_t b = (count + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

template <typename T> int fill_inf(Call &call, T *p, int64_t rows, int64_t stride, int width)
{
    if (rows <= 0)
        return TSW_OK;
    fill_kernel<T><<<blocks_for(rows * width), 256, 0, call.stream>>>(p, rows, stride, width);
    TSW_CU(cudaGetLastError(), "kernel launch (fill)");
    return TSW_OK;
}

/* Progress in cells of forward passes: reported at most every 50 ms, after a sync. */
struct PathProgress {
    const tsw_exec *ex;
    int64_t total = 1, done = 0, last = 0; /* last = 0: the first poll reports */
    int poll(Call &call, int64_t add)
    {
        done += add;
        if (!ex->progress)
            return TSW_OK;
        int64_t t = now_ns();
        if (t - last < 50000000LL)
            return TSW_OK;
        int rc = call.sync();
        if (rc)
            return rc;
        last = now_ns();
        int64_t d = done < total ? done : total - 1;
        if (ex->progress(ex->progress_user, d < 0 ? 0 : d, total))
            return TSW_ECANCELED;
        return TSW_OK;
    }
    void end()
    {
        if (ex->progress)
            ex->progress(ex->progress_user, total, total);
    }
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Code bytes of a region of rows x cols cells (whole tiles). */
inline double code_bytes(int64_t rows, int64_t cols, int TH)
{
    return (double)ceil_div(rows, TH) * (double)ceil_div(cols, kTW) * (double)TH * kTW / 4.0;
}

/* Split mode's slot: the grid's widest diagonal of tiles, at most kSplitMax (wider
 * diagonals fill the GPU without it). TSWARP_CUDA_PATH_SPLIT (a test and tuning knob, read
 * per call) sets another limit: 0 runs every diagonal fused, a small one mixes the modes. */
inline int64_t split_tiles(int64_t n, int64_t m, int TH)
{
    int64_t w = ceil_div(n, TH) < ceil_div(m, kTW) ? ceil_div(n, TH) : ceil_div(m, kTW);
    int64_t cap = kSplitMax;
    if (const char *e = getenv("TSWARP_CUDA_PATH_SPLIT")) {
        char *end = nullptr;
        long long v = strtoll(e, &end, 10);
        if (end != e && v >= 0 && v < kSplitMax)
            cap = (int64_t)v;
    }
    return w < cap ? w : cap;
}

template <typename T, int DB, int R> struct PathRun {
    static constexpr int TH = 32 * R;
    const tsw__path_job *job;
    Call *call;
    PathProgress *prog;
    FwdArgs<T> base; /* inputs and buffers; the region fields are set per pass */
    T *H, *V, *infs, *ckpt, *last;
    T *cost_buf;       /* split mode: two slots of split_max cost blocks' outputs */
    int64_t split_max; /* 0: no split mode */
    uint32_t *codes;
    int64_t *dpath, *dstate;

    /* One forward pass over a region (codes when store). */
    int forward(int64_t r0, int64_t r1, int64_t c0, int64_t c1, const T *top,
                int64_t top_stride, bool store, int64_t ck_every, int64_t ck_count)
    {
        FwdArgs<T> g = base;
        g.r0 = r0;
        g.r1 = r1;
        g.c0 = c0;
        g.c1 = c1;
        const int64_t nti = ceil_div(r1 - r0 + 1, TH), ntj = ceil_div(c1 - c0 + 1, kTW);
        g.ntj = ntj;
        g.top = top;
        g.top_stride = top_stride;
        g.H = H;
        g.V = V;
        g.vstride = nti * TH;
        g.codes = store ? codes : nullptr;
        g.ckpt = ck_count > 0 ? ckpt : nullptr;
        g.ck_every = ck_every > 0 ? ck_every : 1;
        g.ck_count = ck_count;
        g.last = last;
        /* H's frame columns c0-2, c0-1 stay +inf (the region's left frame) */
        int rc = fill_inf<T>(*call, H, 6, c1 - c0 + 3, 2);
        if (rc)
            return rc;
        const double cells_per_tile = (double)TH * kTW;
        const bool cos_ = g.kc == TSW_COST_COSINE;
        void (*const kern)(FwdArgs<T>) =
            g.p != 0 ? (cos_ ? fwd_tile<T, DB, R, true, true> : fwd_tile<T, DB, R, true, false>)
                     : (cos_ ? fwd_tile<T, DB, R, false, true> : fwd_tile<T, DB, R, false, false>);
        /* dynamic shared memory: above the default 48 KB for some double instantiations;
         * launches of split tiles and cost blocks take less (TileSmem::split_bytes) */
        const size_t smem = TileSmem<T, DB, R>::bytes;
        const size_t smem_split = TileSmem<T, DB, R>::split_bytes;
        TSW_CU(cudaFuncSetAttribute((const void *)kern,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
               "cudaFuncSetAttribute (path forward)");
        /* Diagonals of at most split_max tiles run split: their costs come from the
         * previous launch's cost blocks (slot d mod 2), so a tile's warp only runs the
         * dependent chain; wider diagonals fill the GPU by themselves and compute their
         * costs in their own warps (fused). Launch d: diagonal d's tiles, then the cost
         * blocks of diagonal d + 1 if it runs split. */
        const int64_t nd_all = nti + ntj - 1;
        auto first = [&](int64_t d) { return d - (ntj - 1) > 0 ? d - (ntj - 1) : (int64_t)0; };
        auto count = [&](int64_t d) {
            if (d < 0 || d >= nd_all)
                return (int64_t)0;
            return (d < nti - 1 ? d : nti - 1) - first(d) + 1;
        };
        auto split = [&](int64_t d) { return d < nd_all && count(d) <= split_max; };
        g.cin = nullptr;
        if (split(0)) {
            g.diag = -1;
            g.nd = 0;
            g.ti_lo1 = 0;
            g.cout = cost_buf;
            kern<<<(unsigned)count(0), 32, smem_split, call->stream>>>(g);
            TSW_CU(cudaGetLastError(), "kernel launch (path forward)");
        }
        for (int64_t d = 0; d < nd_all; ++d) {
            const int64_t nt = count(d), nt1 = split(d + 1) ? count(d + 1) : 0;
            g.diag = d;
            g.ti_lo = first(d);
            g.nd = nt;
            g.cin = split(d) ? cost_buf + (d & 1) * split_max * TileSmem<T, DB, R>::costs
                             : nullptr;
            g.ti_lo1 = first(d + 1);
            g.cout = nt1 ? cost_buf + ((d + 1) & 1) * split_max * TileSmem<T, DB, R>::costs
                         : nullptr;
            kern<<<(unsigned)(nt + nt1), 32, split(d) ? smem_split : smem, call->stream>>>(g);
            TSW_CU(cudaGetLastError(), "kernel launch (path forward)");
            if ((rc = prog->poll(*call, (int64_t)(cells_per_tile * (double)nt))))
                return rc;
        }
        return TSW_OK;
    }

    /* Trace the region's stored codes from (i, j); *status 1: start reached. */
    int trace(int64_t r0, int64_t c0, int64_t c1, int64_t *i, int64_t *j, int64_t *len,
              int *status)
    {
        int64_t st[4] = {*i, *j, *len, 0};
        TSW_CU(cudaMemcpyAsync(dstate, st, sizeof(st), cudaMemcpyHostToDevice, call->stream),
               "cudaMemcpyAsync (trace state)");
        trace_kernel<R><<<1, 32, 0, call->stream>>>(codes, r0, c0, ceil_div(c1 - c0 + 1, kTW),
                                                    job->step, job->subseq, dpath, dstate);
        TSW_CU(cudaGetLastError(), "kernel launch (path trace)");
        TSW_CU(cudaMemcpyAsync(st, dstate, sizeof(st), cudaMemcpyDeviceToHost, call->stream),
               "cudaMemcpyAsync (trace state)");
        int rc = call->sync();
        if (rc)
            return rc;
        *i = st[0];
        *j = st[1];
        *len = st[2];
        *status = (int)st[3];
        return TSW_OK;
    }

    int read_last(T *v)
    {
        TSW_CU(cudaMemcpyAsync(v, last, sizeof(T), cudaMemcpyDeviceToHost, call->stream),
               "cudaMemcpyAsync (cost)");
        return call->sync();
    }
};

template <typename T, int DB, int R>
int path_run(const tsw__path_job *job, const tsw_align_params *ap, const tsw_exec *ex,
             int64_t *path, int64_t *length, double *cost)
{
    constexpr int TH = 32 * R;
    const int64_t n = job->n, m = job->m, dim = job->dim;
    const bool cosine = job->cost == TSW_COST_COSINE, p05 = job->step != 0;
    Call call;
    int rc;
    if ((rc = call.init(ex, false)))
        return rc;

    /* memory: inputs and buffers (base), then codes and checkpoints */
    Plan plan;
    const size_t es = sizeof(T);
    const int64_t nti = ceil_div(n, TH);
    const size_t o_a = plan.add((size_t)n * (size_t)dim, es);
    const size_t o_b = plan.add((size_t)m * (size_t)dim, es);
    const size_t o_na = cosine ? plan.add((size_t)n, es) : 0;
    const size_t o_nb = cosine ? plan.add((size_t)m, es) : 0;
    const size_t o_win = job->lo ? plan.add(2 * (size_t)n, sizeof(int64_t)) : 0;
    const size_t o_h = plan.add(6 * (size_t)(m + 2), es);
    const size_t o_v = plan.add(2 * (size_t)nti * TH, es);
    const size_t o_inf = plan.add(2 * (size_t)(m + 2), es);
    const size_t o_last = plan.add(1, es);
    const size_t o_state = plan.add(4, sizeof(int64_t));
    const size_t o_path = plan.add(2 * (size_t)(n + m), sizeof(int64_t));
    const int64_t split_max = split_tiles(n, m, TH);
    const size_t o_cost = plan.add(2 * (size_t)split_max * TileSmem<T, DB, R>::costs, es);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    const size_t base_bytes = plan.total;

    size_t free_b = 0, total_b = 0;
    if (mem_info(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        free_b = total_b = 0;
    }
    /* what codes and checkpoints may take: the free memory less the base and a margin */
    const double margin = 256.0 * 1024 * 1024 + 0.02 * (double)total_b;
    const double avail = (double)free_b - (double)base_bytes - margin;
    const double limit = ap->memory_limit ? (double)ap->memory_limit : avail;
    const double full = code_bytes(n, m, TH);
    bool stored = ap->method == TSW_PATH_STORED ||
                  (ap->method == TSW_PATH_AUTO && full <= limit && full <= avail);
    int64_t h = 0, ck_count = 0;
    double region_bytes = full, ck_bytes = 0;
    if (!stored) {
        /* the largest block height (rows, a multiple of TH) whose codes fit the limit and
         * whose checkpoints fit beside them; p05 blocks recompute 2 h columns: h <= 8192 */
        const double cap = ap->memory_limit ? (double)ap->memory_limit : avail / 2;
        int64_t hmax = ceil_div(n, TH) * TH;
        if (p05 && hmax > kP05MaxBlock)
            hmax = kP05MaxBlock;
        for (h = hmax; h > TH; h -= TH) {
            const int64_t w = p05 ? (2 * h + 4 < m ? 2 * h + 4 : m) : m;
            const double rb = code_bytes(h, w, TH);
            const double cb = (double)((n - 1) / h) * 2.0 * (double)(m + 2) * (double)es;
            if (rb <= cap && rb + cb <= avail)
                break;
        }
        const int64_t w = p05 ? (2 * h + 4 < m ? 2 * h + 4 : m) : m;
        region_bytes = code_bytes(h, w, TH);
        ck_count = (n - 1) / h;
        ck_bytes = (double)ck_count * 2.0 * (double)(m + 2) * (double)es;
    }
    if (region_bytes > 9.0e18 || ck_bytes > 9.0e18)
        return TSW_EOVERFLOW;
    const size_t o_codes = plan.add((size_t)region_bytes);
    const size_t o_ck = ck_count ? plan.add((size_t)ck_count * 2 * (size_t)(m + 2), es) : 0;
    if (plan.overflow)
        return TSW_EOVERFLOW;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;

    PathProgress prog;
    prog.ex = ex;
    const double cells = (double)n * (double)m;
    double est = cells;
    if (!stored)
        est += p05 ? (double)n * 2.0 * (double)h : 0.5 * cells;
    prog.total = est > 9.0e18 ? (int64_t)9.0e18 : (int64_t)est;

    PathRun<T, DB, R> run;
    run.job = job;
    run.call = &call;
    run.prog = &prog;
    FwdArgs<T> &g = run.base;
    memset(&g, 0, sizeof(g));
    T *da = (T *)call.at(o_a), *db = (T *)call.at(o_b);
    TSW_CU(cudaMemcpyAsync(da, job->a, (size_t)n * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (a)");
    TSW_CU(cudaMemcpyAsync(db, job->b, (size_t)m * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (b)");
    g.a = da;
    g.b = db;
    if (cosine) {
        T *na = (T *)call.at(o_na), *nb = (T *)call.at(o_nb);
        norms_kernel<T><<<blocks_for(n), 256, 0, call.stream>>>(da, n, dim, na);
        norms_kernel<T><<<blocks_for(m), 256, 0, call.stream>>>(db, m, dim, nb);
        TSW_CU(cudaGetLastError(), "kernel launch (norms)");
        g.na = na;
        g.nb = nb;
    }
    if (job->lo) {
        int64_t *w = (int64_t *)call.at(o_win);
        TSW_CU(cudaMemcpyAsync(w, job->lo, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                               call.stream),
               "cudaMemcpyAsync (window)");
        TSW_CU(cudaMemcpyAsync(w + n, job->hi, (size_t)n * sizeof(int64_t),
                               cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (window)");
        g.lo = w;
        g.hi = w + n;
    }
    g.n = n;
    g.m = m;
    g.dim = dim;
    g.p = job->step;
    g.kc = job->cost;
    g.subseq = job->subseq;
    run.H = (T *)call.at(o_h);
    run.V = (T *)call.at(o_v);
    run.infs = (T *)call.at(o_inf);
    run.last = (T *)call.at(o_last);
    run.codes = (uint32_t *)call.at(o_codes);
    run.cost_buf = (T *)call.at(o_cost);
    run.split_max = split_max;
    run.ckpt = ck_count ? (T *)call.at(o_ck) : nullptr;
    run.dstate = (int64_t *)call.at(o_state);
    run.dpath = (int64_t *)call.at(o_path);
    if ((rc = fill_inf<T>(call, run.infs, 2 * (m + 2), 1, 1)))
        return rc;
    if (ck_count && (rc = fill_inf<T>(call, run.ckpt, 2 * ck_count, m + 2, 2)))
        return rc;

    /* the forward pass over the grid: codes (STORED) or checkpoints (LINEAR) */
    if ((rc = run.forward(0, n - 1, 0, m - 1, run.infs, m + 2, stored, stored ? 0 : h / TH,
                          ck_count)))
        return rc;
    T dl;
    if ((rc = run.read_last(&dl)))
        return rc;
    if (!(dl < inf_of<T>()))
        return TSW_ENOPATH;

    int64_t ei = n - 1, ej = m - 1, len = 0;
    int status = 0;
    if (stored) {
        if ((rc = run.trace(0, 0, m - 1, &ei, &ej, &len, &status)))
            return rc;
    } else {
        while (status == 0) {
            if (ei < 0 || ej < 0 || len >= n + m) {
                tsw__set_detail("path trace left the grid at (%lld, %lld)", (long long)ei,
                                (long long)ej);
                return TSW_ECUDA; /* not reached: a finite end traces back to (0, 0) */
            }
            const int64_t k = ei / h, r0 = k * h;
            int64_t cl = p05 ? ej - 2 * (ei - r0) - 2 : 0;
            if (cl < 0)
                cl = 0;
            const T *top = k == 0 ? run.infs + cl : run.ckpt + (k - 1) * 2 * (m + 2) + cl;
            if ((rc = run.forward(r0, ei, cl, ej, top, m + 2, true, 0, 0)) ||
                (rc = run.trace(r0, cl, ej, &ei, &ej, &len, &status)))
                return rc;
        }
    }
    if (status != 1 || len < 1 || len > n + m - 1) {
        tsw__set_detail("path trace ended in state %d after %lld cells", status, (long long)len);
        return TSW_ECUDA; /* not reached */
    }
    /* the path, last cell first, into the caller's array in order */
    int64_t *host = (int64_t *)tsw__malloc(sizeof(int64_t) * 2 * (size_t)len);
    if (!host)
        return TSW_ENOMEM;
    cudaError_t e = cudaMemcpyAsync(host, run.dpath, sizeof(int64_t) * 2 * (size_t)len,
                                    cudaMemcpyDeviceToHost, call.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(call.stream);
    if (e != cudaSuccess) {
        tsw__free(host);
        return fail(e, "cudaMemcpyAsync (path)");
    }
    prog.end();
    for (int64_t q = 0; q < len; ++q) {
        path[2 * q] = host[2 * (len - 1 - q)];
        path[2 * q + 1] = host[2 * (len - 1 - q) + 1];
    }
    tsw__free(host);
    *length = len;
    *cost = (double)dl;
    return TSW_OK;
}

/* Host buffers of subseq_run, freed on every return. */
struct HostBuf {
    void *p[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    ~HostBuf()
    {
        for (void *q : p)
            tsw__free(q);
    }
};

/*
 * Subsequence DTW on the GPU (tsw__cuda_subsequence), or with lcost != NULL the last row
 * only (tsw__cuda_subseq_lastrow, segmental DTW's first pass: lcost[j - from] = D(n-1, j),
 * lstart[j - from] its start, for j in [from, m)). One forward pass over the grid with row 0
 * free (job->subseq) storing every code (n m / 4 bytes: no linear-memory variant here; a
 * grid whose codes do not fit gives TSW_ENOMEM, and AUTO then computes on the CPU), the
 * last row copied out by the pass, the starts by start_kernel, the best k by the CPU's own
 * tsw__subseq_pick, and each match's path traced in the stored codes from (n-1, end): the
 * CPU recomputes columns 0..end for it, which are the same D values and codes (steps only
 * look left), so the same path.
 */
template <typename T, int DB, int R>
int subseq_run(const tsw__path_job *job, const tsw_exec *ex, int64_t k, tsw_match *matches,
               int64_t *count, int64_t *path, int64_t from, double *lcost, int64_t *lstart)
{
    constexpr int TH = 32 * R;
    const int64_t n = job->n, m = job->m, dim = job->dim;
    const bool cosine = job->cost == TSW_COST_COSINE;
    Call call;
    int rc;
    if ((rc = call.init(ex, false)))
        return rc;

    Plan plan;
    const size_t es = sizeof(T);
    const int64_t nti = ceil_div(n, TH);
    const size_t o_a = plan.add((size_t)n * (size_t)dim, es);
    const size_t o_b = plan.add((size_t)m * (size_t)dim, es);
    const size_t o_na = cosine ? plan.add((size_t)n, es) : 0;
    const size_t o_nb = cosine ? plan.add((size_t)m, es) : 0;
    const size_t o_h = plan.add(6 * (size_t)(m + 2), es);
    const size_t o_v = plan.add(2 * (size_t)nti * TH, es);
    const size_t o_inf = plan.add(2 * (size_t)(m + 2), es);
    const size_t o_last = plan.add(1, es);
    const size_t o_state = plan.add(4, sizeof(int64_t));
    const size_t o_path = plan.add(2 * (size_t)(n + m), sizeof(int64_t));
    const int64_t split_max = split_tiles(n, m, TH);
    const size_t o_cost = plan.add(2 * (size_t)split_max * TileSmem<T, DB, R>::costs, es);
    const size_t o_row = plan.add((size_t)m, es);
    const size_t o_start = plan.add((size_t)m, sizeof(int64_t));
    const double full = code_bytes(n, m, TH);
    if (full > 9.0e18)
        return TSW_EOVERFLOW;
    const size_t o_codes = plan.add((size_t)full);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    if ((rc = call.alloc(&own, plan.total)))
        return rc; /* TSW_ENOMEM when the codes do not fit */

    if (k > m)
        k = m;
    HostBuf hb;
    T *hrow = (T *)(hb.p[0] = tsw__malloc(es * (size_t)m));
    double *hcost = (double *)(hb.p[1] = tsw__malloc(sizeof(double) * (size_t)m));
    int64_t *hstart = (int64_t *)(hb.p[2] = tsw__malloc(sizeof(int64_t) * (size_t)m));
    if (!hrow || !hcost || !hstart)
        return TSW_ENOMEM;
    tsw_match *pick = nullptr;
    int64_t *paths = nullptr, *hpath = nullptr;
    if (!lcost) {
        pick = (tsw_match *)(hb.p[3] = tsw__malloc(sizeof(tsw_match) * (size_t)k));
        if (!pick)
            return TSW_ENOMEM;
        if (path) {
            paths = (int64_t *)(hb.p[4] =
                                    tsw__malloc(sizeof(int64_t) * 2 * (size_t)(k * (n - 1) + m)));
            hpath = (int64_t *)(hb.p[5] = tsw__malloc(sizeof(int64_t) * 2 * (size_t)(n + m)));
            if (!paths || !hpath)
                return TSW_ENOMEM;
        }
    }

    PathProgress prog;
    prog.ex = ex;
    prog.total = n * m;

    PathRun<T, DB, R> run;
    run.job = job;
    run.call = &call;
    run.prog = &prog;
    FwdArgs<T> &g = run.base;
    memset(&g, 0, sizeof(g));
    T *da = (T *)call.at(o_a), *db = (T *)call.at(o_b);
    TSW_CU(cudaMemcpyAsync(da, job->a, (size_t)n * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (a)");
    TSW_CU(cudaMemcpyAsync(db, job->b, (size_t)m * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (b)");
    g.a = da;
    g.b = db;
    if (cosine) {
        T *na = (T *)call.at(o_na), *nb = (T *)call.at(o_nb);
        norms_kernel<T><<<blocks_for(n), 256, 0, call.stream>>>(da, n, dim, na);
        norms_kernel<T><<<blocks_for(m), 256, 0, call.stream>>>(db, m, dim, nb);
        TSW_CU(cudaGetLastError(), "kernel launch (norms)");
        g.na = na;
        g.nb = nb;
    }
    g.n = n;
    g.m = m;
    g.dim = dim;
    g.p = job->step;
    g.kc = job->cost;
    g.subseq = 1;
    T *drow = (T *)call.at(o_row);
    int64_t *dstart = (int64_t *)call.at(o_start);
    g.lastrow = drow;
    run.H = (T *)call.at(o_h);
    run.V = (T *)call.at(o_v);
    run.infs = (T *)call.at(o_inf);
    run.last = (T *)call.at(o_last);
    run.codes = (uint32_t *)call.at(o_codes);
    run.cost_buf = (T *)call.at(o_cost);
    run.split_max = split_max;
    run.ckpt = nullptr;
    run.dstate = (int64_t *)call.at(o_state);
    run.dpath = (int64_t *)call.at(o_path);
    if ((rc = fill_inf<T>(call, run.infs, 2 * (m + 2), 1, 1)))
        return rc;

    /* 1. the forward pass: every code, the last row; then every end's start */
    if ((rc = run.forward(0, n - 1, 0, m - 1, run.infs, m + 2, true, 0, 0)))
        return rc;
    start_kernel<T, R><<<blocks_for(m), 256, 0, call.stream>>>(
        run.codes, drow, n, m, ceil_div(m, kTW), job->step, dstart);
    TSW_CU(cudaGetLastError(), "kernel launch (subsequence starts)");
    TSW_CU(cudaMemcpyAsync(hrow, drow, es * (size_t)m, cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (last row)");
    TSW_CU(cudaMemcpyAsync(hstart, dstart, sizeof(int64_t) * (size_t)m, cudaMemcpyDeviceToHost,
                           call.stream),
           "cudaMemcpyAsync (starts)");
    if ((rc = call.sync()))
        return rc;
    for (int64_t j = 0; j < m; ++j)
        hcost[j] = hrow[j] < inf_of<T>() ? (double)hrow[j] : (double)TSW_INF_F64;
    if (lcost) {
        prog.end();
        for (int64_t j = from; j < m; ++j) {
            lcost[j - from] = hcost[j];
            lstart[j - from] = hcost[j] < TSW_INF_F64 ? hstart[j] : -1;
        }
        return TSW_OK;
    }

    /* 2. the matches, chosen as the CPU chooses them */
    int64_t got = 0;
    if ((rc = tsw__subseq_pick(m, hcost, hstart, k, pick, &got)))
        return rc;

    /* 3. the paths, traced in the stored codes */
    int64_t used = 0;
    for (int64_t q = 0; path && q < got; ++q) {
        int64_t ei = n - 1, ej = pick[q].end, len = 0;
        int status = 0;
        if ((rc = run.trace(0, 0, m - 1, &ei, &ej, &len, &status)))
            return rc;
        if (status != 1 || len < 1 || len > n + m - 1) {
            tsw__set_detail("subsequence trace ended in state %d after %lld cells", status,
                            (long long)len);
            return TSW_ECUDA; /* not reached: a finite end traces back to row 0 */
        }
        TSW_CU(cudaMemcpyAsync(hpath, run.dpath, sizeof(int64_t) * 2 * (size_t)len,
                               cudaMemcpyDeviceToHost, call.stream),
               "cudaMemcpyAsync (path)");
        if ((rc = call.sync()))
            return rc;
        int64_t *out = paths + 2 * used;
        for (int64_t t = 0; t < len; ++t) {
            out[2 * t] = hpath[2 * (len - 1 - t)];
            out[2 * t + 1] = hpath[2 * (len - 1 - t) + 1];
        }
        pick[q].path_offset = used;
        pick[q].path_length = len;
        used += len;
    }
    prog.end();
    memcpy(matches, pick, sizeof(tsw_match) * (size_t)got);
    if (path)
        memcpy(path, paths, sizeof(int64_t) * 2 * (size_t)used);
    *count = got;
    return TSW_OK;
}

template <typename T>
int subseq_dispatch(const tsw__path_job *job, const tsw_exec *ex, int64_t k,
                    tsw_match *matches, int64_t *count, int64_t *path, int64_t from,
                    double *lcost, int64_t *lstart)
{
    const int64_t dim = job->dim;
    if (dim == 1)
        return subseq_run<T, 1, 4>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 4)
        return subseq_run<T, 4, 4>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 8)
        return subseq_run<T, 8, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 12)
        return subseq_run<T, 12, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 16)
        return subseq_run<T, 16, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
    return subseq_run<T, 0, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
}

/* The instantiation for the dtype and the dim (DB: a's values in registers up to 16, in
 * buckets of 1, 4, 8, 12 (chroma) and 16 dims: a tile pads the rest of a bucket with zeros). */
template <typename T>
int path_dispatch(const tsw__path_job *job, const tsw_align_params *ap, const tsw_exec *ex,
                  int64_t *path, int64_t *length, double *cost)
{
    const int64_t dim = job->dim;
    if (dim == 1)
        return path_run<T, 1, 4>(job, ap, ex, path, length, cost);
    if (dim <= 4)
        return path_run<T, 4, 4>(job, ap, ex, path, length, cost);
    if (dim <= 8)
        return path_run<T, 8, 2>(job, ap, ex, path, length, cost);
    if (dim <= 12)
        return path_run<T, 12, 2>(job, ap, ex, path, length, cost);
    if (dim <= 16)
        return path_run<T, 16, 2>(job, ap, ex, path, length, cost);
    return path_run<T, 0, 2>(job, ap, ex, path, length, cost);
}

} // namespace

#endif
