/*
 * Many pairs on the GPU: tsw__batch_scratch_bytes and tsw__batch_launch (kernels.h).
 *
 * One warp computes one pair at a time; a persistent grid (as many warps as can be
 * resident, from cudaOccupancyMaxActiveBlocksPerMultiprocessor) strides over the pair
 * indices [first, first + count) of the launch. The pair's dynamic program runs in the
 * warp's registers as in cuDTW++ / CUDASW++ (batch_engine.cuh has the details):
 *
 *   Layout   lane k owns C consecutive columns of the inner series (a stripe of W = 32 C
 *            columns per warp) and keeps their values of the last row in registers;
 *            dim == 1 keeps b in registers too, dim > 1 keeps the stripe of b in shared
 *            memory, and the rows of the outer series stream through a 64-row ring in
 *            shared memory, refilled 32 rows at a time with coalesced loads.
 *   Skew     at step t lane k computes row t - k: its left neighbour (lane k-1's last
 *            column of the same row, computed at step t-1) arrives by one __shfl_up_sync,
 *            the diagonal is the value received one step earlier. A stripe of N rows
 *            takes N + 31 steps (fewer when the last lanes have no columns).
 *   Stripes  inner series longer than W run stripe after stripe; lane 31 writes the
 *            stripe's last column (one value per row; TWED also its local term) to the
 *            warp's boundary array in global scratch, and lane 0 of the next stripe reads
 *            it back through the ring. Windows restrict each stripe to the rows whose
 *            band meets it.
 *   C        chosen per launch from the longest inner length: the smallest admitted C
 *            with 32 C >= that length, else the largest (stripes). Admitted: 1, 2, 4, 8
 *            at dim 1 (and 16 for squared-Euclidean DTW, the hot case), 1, 2, 4 at dim > 1
 *            (also bounded so the warp's shared workspace stays near 12 KB), 2 for TWED
 *            with a general Lp order: 28 kernels per dtype (compile time).
 *   Grid     blocks of 4 warps, as many as are resident (occupancy query), fewer when the
 *            batch is small or the scratch (boundary arrays, windows' row ranges; at most
 *            256 MB) admits fewer; each warp loops over pairs gw, gw + warps, ...
 *
 * Pair enumeration (kernels.h): CDIST k -> (k / ny, k % ny). PDIST k -> the k-th pair
 * i < j in scipy's condensed row order: row i starts at S(i) = i (2n - i - 1) / 2, so
 * i = floor(((2n - 1) - sqrt((2n - 1)^2 - 8k)) / 2) in double, then corrected by integer
 * steps until S(i) <= k < S(i + 1) (exact for any n < 2^31), j = k - S(i) + i + 1.
 * SELF k -> (k, k) of x; PAIRED k -> (x_k, y_k).
 *
 * Cell updates (GCUPS): n * m per pair. Work done: per stripe (rows in range + 31) * W
 * cells, so short series waste lanes (n = m = 16 at C = 1: 16 * 16 cells useful of the
 * (16 + 15 + 1) * 32 the warp steps through).
 */
#include "kernels.h"

#include <limits.h>
#include <math.h>

#include "batch_engine.cuh"
#include "common/elastic.h"

using namespace tsw_batch;

static_assert(kCdist == TSW__PAIRS_CDIST && kPdist == TSW__PAIRS_PDIST &&
                  kSelf == TSW__PAIRS_SELF && kPaired == TSW__PAIRS_PAIRED,
              "pair modes");

namespace {

/* Cap of the global scratch (boundary arrays, global workspaces): the number of warps
 * is reduced to fit (each warp loops over more pairs). */
constexpr size_t kScratchCap = (size_t)256 << 20;
/* dim > 1: largest per-warp shared workspace we aim for when choosing C (occupancy). */
constexpr size_t kWarpSmemTarget = 12 << 10;
/* Lengths above this use 32-bit row and column indices no more safely. */
constexpr int64_t kMaxLen = (int64_t)1 << 30;

typedef void (*KernelFn)(const Args);

/* Cells per lane of each variant (compile time bounds the set): at dim 1 powers of two up
 * to 8, and 16 for squared-Euclidean DTW (the hot case); at dim > 1 up to 4 (the cost
 * loops dominate; the serial chain of a pair is the same with more stripes); general-p
 * TWED, which is rare, only 2. */
constexpr bool c_allowed(int kind, bool dim1, int C)
{
    if (kind == K_FAM) /* the family: 1 .. 8 at dim 1, 1 .. 4 above (kernels_family.cu) */
        return dim1 ? (C == 1 || C == 2 || C == 4 || C == 8) : (C == 1 || C == 2 || C == 4);
    if (kind == K_TWED_P)
        return C == 2;
    if (!dim1)
        return C == 1 || C == 2 || C == 4;
    return C == 1 || C == 2 || C == 4 || C == 8 || (C == 16 && kind == K_DTW_SQE);
}

template <typename T, int KIND, bool DIM1, int C> KernelFn inst()
{
    if constexpr (c_allowed(KIND, DIM1, C))
        return batch_kernel<T, KIND, C, DIM1>;
    else
        return nullptr;
}

template <typename T, int KIND, bool DIM1> KernelFn pick_c(int C)
{
    switch (C) {
    case 1:
        return inst<T, KIND, DIM1, 1>();
    case 2:
        return inst<T, KIND, DIM1, 2>();
    case 4:
        return inst<T, KIND, DIM1, 4>();
    case 8:
        return inst<T, KIND, DIM1, 8>();
    case 16:
        return inst<T, KIND, DIM1, 16>();
    default:
        return nullptr;
    }
}

template <typename T, bool DIM1> KernelFn pick_kind(int kind, int C)
{
    switch (kind) {
    case K_DTW_SQE: /* dim > 1: every DTW cost through the run-time switch */
        if constexpr (DIM1)
            return pick_c<T, K_DTW_SQE, DIM1>(C);
        else
            return pick_c<T, K_DTW, DIM1>(C);
    case K_DTW:
        return pick_c<T, K_DTW, DIM1>(C);
    case K_TWED:
        return pick_c<T, K_TWED, DIM1>(C);
    case K_TWED_P:
        return pick_c<T, K_TWED_P, DIM1>(C);
    default:
        return pick_c<T, K_SOFT, DIM1>(C);
    }
}

KernelFn pick(tsw_dtype dt, int kind, int C, bool dim1)
{
    if (kind == K_FAM)
        return (KernelFn)tsw__family_kernel(dt == TSW_F32 ? 0 : 1, C, dim1 ? 1 : 0);
    if (dt == TSW_F32)
        return dim1 ? pick_kind<float, true>(kind, C) : pick_kind<float, false>(kind, C);
    return dim1 ? pick_kind<double, true>(kind, C) : pick_kind<double, false>(kind, C);
}

/* Everything a launch decides, computed the same way by the size query and the launch. */
struct Plan {
    KernelFn fn;
    int C, wpb, use_smem;
    size_t smem;             /* dynamic shared memory per block                          */
    int64_t ws_elems;        /* workspace elements per warp                              */
    int64_t bhalf;           /* boundary elements per array (0: single stripe)           */
    int64_t off_rng, off_ws; /* byte offsets in a warp's scratch                         */
    int64_t off_w;           /* WDTW's weight table in a warp's scratch                  */
    size_t warp_bytes;       /* global scratch per warp                                  */
    int64_t resident_blocks; /* blocks resident on the whole device                      */
    int64_t max_warps;       /* warps the scratch cap admits                             */
};

int kind_of(const tsw_params *p)
{
    if (TSW_IS_FAMILY(p->measure) && p->measure != TSW_DDTW)
        return K_FAM;
    if (p->measure == TSW_TWED)
        return (p->p == 1.0 || p->p == 2.0) ? K_TWED : K_TWED_P;
    if (p->measure == TSW_SOFT_DTW)
        return K_SOFT;
    return p->cost == TSW_COST_SQEUCLIDEAN ? K_DTW_SQE : K_DTW;
}

size_t align16(size_t v) { return (v + 15) & ~(size_t)15; }

/*
 * worst: plan for the scratch size, with rows and columns both as long as the longest
 * series of x and (CDIST, PAIRED) y. Every launch over these collections (in any mode,
 * e.g. the SELF launches over y that the soft-DTW divergence needs) then needs no more
 * scratch per warp: C grows with the inner length, the boundary and range arrays with the
 * outer one.
 */
cudaError_t make_plan(const tsw__batch *b, int device, Plan *pl, bool worst)
{
    const size_t esz = b->dtype == TSW_F32 ? 4 : 8;
    const int64_t dim = b->dim;
    const bool swap = b->params.window == TSW_WINDOW_ITAKURA;
    const int64_t xmax = b->x.max_len;
    const bool usey = b->mode == TSW__PAIRS_CDIST || b->mode == TSW__PAIRS_PAIRED;
    const int64_t ymax = usey ? b->y.max_len : b->x.max_len;
    int64_t nmax = swap ? ymax : xmax, mmax = swap ? xmax : ymax; /* rows, columns */
    if (worst)
        nmax = mmax = xmax > ymax ? xmax : ymax;
    if (dim < 1 || nmax < 1 || mmax < 1 || xmax > kMaxLen || ymax > kMaxLen ||
        dim > ((int64_t)1 << 32))
        return cudaErrorInvalidValue;
    const int kind = kind_of(&b->params);
    /* MSM's independent form: the dim-1 program once per channel */
    const bool msm_indep = b->params.measure == TSW_MSM && b->params.msm_independent;
    const bool dim1 = dim == 1 || msm_indep;
    /* MSM's dependent form at dim > 1 stages the stripe's column before its first */
    const bool msmd = b->params.measure == TSW_MSM && !dim1;
    if (TSW_IS_DERIVATIVE(b->params.measure)) { /* the derivatives: 2 points fewer */
        nmax -= 2;
        mmax -= 2;
        if (nmax < 1 || mmax < 1)
            return cudaErrorInvalidValue;
    }
    /* the smallest admitted C whose stripe holds the longest inner series, else the
     * largest admitted (several stripes) */
    int C = 0, cbig = 0;
    for (int c = 1; c <= 16; c *= 2) {
        if (!c_allowed(kind, dim1, c))
            continue;
        cbig = c;
        if (!C && 32 * (int64_t)c >= mmax)
            C = c;
    }
    if (!C)
        C = cbig;
    const int64_t offa = kOffR + 2 * kRing * 4 / (int64_t)esz;
    const int64_t extra = msmd ? dim : 0;
    int64_t ws_elems =
        offa + (int64_t)kRing * dim + (dim1 ? 0 : (int64_t)C * dim * 32 + extra);
    while (!dim1 && (size_t)ws_elems * esz > kWarpSmemTarget) {
        int c = C / 2;
        while (c >= 1 && !c_allowed(kind, dim1, c))
            c /= 2;
        if (c < 1)
            break;
        C = c;
        ws_elems = offa + (int64_t)kRing * dim + (int64_t)C * dim * 32 + extra;
    }
    pl->C = C;
    pl->ws_elems = ws_elems;
    pl->fn = pick(b->dtype, kind, C, dim1);
    if (!pl->fn)
        return cudaErrorInvalidValue;

    int sms = 0, optin = 0;
    cudaError_t e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e != cudaSuccess)
        return e;
    /* dim > 1: the workspaces in dynamic shared memory when they fit (beside the static
     * headers), else in global scratch; dim 1: static shared memory */
    const size_t warp_ws = (size_t)ws_elems * esz;
    const size_t stat = (size_t)kWarpsPerBlock * kHdrBytes + 16;
    int wpb = kWarpsPerBlock;
    pl->use_smem = 1;
    if (!dim1 && warp_ws * (size_t)wpb + stat > (size_t)optin) {
        wpb = (int)(((size_t)optin - stat) / warp_ws);
        if (wpb < 1) { /* workspace in global scratch (very large dim) */
            wpb = kWarpsPerBlock;
            pl->use_smem = 0;
        }
    }
    pl->wpb = wpb;
    pl->smem = (!dim1 && pl->use_smem) ? warp_ws * (size_t)wpb : 0;
    if (dim1)
        pl->ws_elems = 0; /* static */
    if (pl->smem + stat > 48 * 1024) {
        e = cudaFuncSetAttribute((const void *)pl->fn,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)pl->smem);
        if (e != cudaSuccess)
            return e;
    }
    int per_sm = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pl->fn, wpb * 32, pl->smem);
    if (e != cudaSuccess)
        return e;
    if (per_sm < 1)
        per_sm = 1;
    pl->resident_blocks = (int64_t)per_sm * (sms > 0 ? sms : 1);

    /* A warp's scratch: boundary arrays when some inner series spans several stripes
     * (TWED: two), the rows' ranges under a window, the workspace when not in shared
     * memory. */
    const bool twed = kind == K_TWED || kind == K_TWED_P;
    pl->bhalf = mmax > 32 * (int64_t)C ? nmax : 0;
    size_t bytes = align16((size_t)(twed ? 2 : 1) * (size_t)pl->bhalf * esz);
    pl->off_rng = (int64_t)bytes;
    if (b->params.window != TSW_WINDOW_NONE)
        bytes += align16((size_t)nmax * 2 * sizeof(int));
    pl->off_ws = (int64_t)bytes;
    if (!pl->use_smem)
        bytes += align16(warp_ws);
    pl->off_w = (int64_t)bytes;
    if (b->params.measure == TSW_WDTW || b->params.measure == TSW_WDDTW) {
        /* WDTW's weights of the offsets 0 .. max(n, m) + 32 C + 63 (fam_pair) */
        const int64_t L = (nmax > mmax ? nmax : mmax) + 32 * (int64_t)C + 64;
        bytes += align16((size_t)L * esz);
    }
    pl->warp_bytes = bytes;
    pl->max_warps = INT64_MAX;
    if (pl->warp_bytes > 0) {
        int64_t w = (int64_t)(kScratchCap / pl->warp_bytes) / wpb * wpb;
        pl->max_warps = w < wpb ? wpb : w;
    }
    return cudaSuccess;
}

/* Warps a launch of `count` pairs uses under this plan. */
int64_t warps_for(const Plan *pl, int64_t count)
{
    int64_t blocks = (count + pl->wpb - 1) / pl->wpb;
    if (blocks > pl->resident_blocks)
        blocks = pl->resident_blocks;
    int64_t w = blocks * pl->wpb;
    return w < pl->max_warps ? w : pl->max_warps;
}

} // namespace

int64_t tsw__batch_pairs(const tsw__batch *b)
{
    const int64_t nx = b->x.count, ny = b->y.count;
    int64_t all = nx; /* SELF, PAIRED */
    if (b->mode == TSW__PAIRS_CDIST)
        all = ny > 0 && nx > INT64_MAX / ny ? INT64_MAX : nx * ny;
    else if (b->mode == TSW__PAIRS_PDIST)
        all = nx / 2 * (nx - 1) + (nx % 2) * ((nx - 1) / 2); /* n (n - 1) / 2 */
    return all > b->count ? all : b->count;
}

/*
 * Sized for the worst launch over these collections (make_plan's `worst`) and for at
 * least as many pairs as the mode enumerates (a caller's count below that only costs
 * warps, never correctness: a launch uses as many warps as the scratch holds).
 */
size_t tsw__batch_scratch_bytes(const tsw__batch *b, int device)
{
    if (b && b->params.measure == TSW_SHAPE_DTW)
        return tsw__shape_scratch_bytes(b, device);
    Plan pl;
    if (!b || make_plan(b, device, &pl, true) != cudaSuccess) {
        cudaGetLastError(); /* a failed attribute query leaves no sticky state to report */
        return 0;
    }
    const int64_t pairs = tsw__batch_pairs(b);
    if (pairs <= 0)
        return 0;
    return (size_t)warps_for(&pl, pairs) * pl.warp_bytes;
}

cudaError_t tsw__batch_launch(const tsw__batch *b, void *scratch, size_t scratch_bytes,
                              cudaStream_t stream)
{
    if (!b)
        return cudaErrorInvalidValue;
    if (b->count <= 0)
        return cudaSuccess;
    if (b->params.measure == TSW_SHAPE_DTW)
        return tsw__shape_launch(b, scratch, scratch_bytes, stream);
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
        return e;
    Plan pl;
    if ((e = make_plan(b, device, &pl, false)) != cudaSuccess)
        return e;
    int64_t warps = warps_for(&pl, b->count);
    if (pl.warp_bytes > 0) {
        const int64_t fit = scratch ? (int64_t)(scratch_bytes / pl.warp_bytes) / pl.wpb * pl.wpb : 0;
        if (fit < warps)
            warps = fit;
        if (warps < pl.wpb)
            return cudaErrorInvalidValue; /* scratch smaller than one block needs */
    }
    const int64_t blocks = warps / pl.wpb;

    Args g;
    g.xv = b->x.values;
    g.xt = b->x.times;
    g.xoff = b->x.offsets;
    g.xlen = b->x.lengths;
    g.xcount = b->x.count;
    /* b comes from y for CDIST and PAIRED, from x for PDIST and SELF */
    const bool usey = b->mode == TSW__PAIRS_CDIST || b->mode == TSW__PAIRS_PAIRED;
    g.yv = usey ? b->y.values : b->x.values;
    g.yt = usey ? b->y.times : b->x.times;
    g.yoff = usey ? b->y.offsets : b->x.offsets;
    g.ylen = usey ? b->y.lengths : b->x.lengths;
    g.ycount = usey ? b->y.count : b->x.count;
    g.dim = b->dim;
    g.mode = (int)b->mode;
    g.layout = (int)b->layout;
    g.first = b->first;
    g.count = b->count;
    g.out = b->out;
    g.self_stride = b->self_stride;
    g.finish = b->finish;
    g.self_x = b->self_x;
    g.self_y = usey ? b->self_y : b->self_x;
    const tsw_params *p = &b->params;
    g.measure = (int)p->measure;
    g.window = (int)p->window;
    g.cost = (int)p->cost;
    g.accumulated = p->accumulated;
    g.normalize = p->normalize;
    g.pk = p->p == 2.0 ? PK_2 : p->p == 1.0 ? PK_1 : PK_GEN;
    g.radius = p->window_radius;
    g.slope = p->itakura_max_slope;
    g.nu = p->nu;
    g.lmbda = p->lmbda;
    g.p = p->p;
    g.gamma = p->gamma;
    g.nu_f = (float)p->nu;
    g.lmbda_f = (float)p->lmbda;
    g.p_f = (float)p->p;
    g.sgam_f = (float)(p->gamma * 0.693147180559945309417232121458);
    g.sinv_f = (float)(1.4426950408889634073599246810019 / p->gamma);
    g.scr = pl.warp_bytes > 0 ? static_cast<char *>(scratch) : nullptr;
    g.warp_bytes = (int64_t)pl.warp_bytes;
    g.off_rng = pl.off_rng;
    g.off_ws = pl.off_ws;
    g.bhalf = pl.bhalf;
    g.has_bound = pl.bhalf > 0;
    g.ws_elems = pl.ws_elems;
    g.use_smem = pl.use_smem;
    g.dshift = TSW_IS_DERIVATIVE(p->measure) ? 2 : 0;
    g.off_w = pl.off_w;
    g.fam_g = p->g;
    g.pen = p->warp_penalty;
    g.erp_g = p->erp_g;
    g.epsilon = p->epsilon;
    g.mc = p->c;
    g.msm_indep = p->msm_independent;
    g.xstd = static_cast<const double *>(b->x.stat);
    g.ystd = static_cast<const double *>(usey ? b->y.stat : b->x.stat);
    g.xcum = b->x.cum;
    g.ycum = usey ? b->y.cum : b->x.cum;

    pl.fn<<<(unsigned)blocks, (unsigned)(pl.wpb * 32), pl.smem, stream>>>(g);
    return cudaGetLastError();
}
