/*
 * Shape DTW on the GPU (TSW_SHAPE_DTW through tsw__batch_launch: cdist, pdist, paired, the
 * pair functions and knn's blocks). cpu/shape_dtw.c's computation, step for step, a block a
 * pair: the descriptors of both series (each point's neighbourhood of 2 reach + 1 padded
 * points, or their piecewise aggregate) into the block's slot of global scratch, the
 * descriptors' DTW matrix filled by anti-diagonals (the whole n x m matrix: aeon's trace
 * rule reads it back), then one thread follows aeon's rule from (n - 1, m - 1) and sums the
 * series' own squared costs along it. Everything in double for either dtype, with the
 * non-contracting intrinsics (this file is compiled with -fmad=false as well), so every
 * sum rounds as the CPU's: the same matrix, the same path, the same value bit for bit.
 * The slot holds the longest pair's matrix; the scratch as many slots as run at once
 * (at most kShapeScratchCap bytes, at least one slot).
 */
#include "kernels.h"

#include <math.h>
#include <string.h>

#include "batch_engine.cuh" /* the pairs' enumeration (pdist_pair) and output places */
#include "common/band.h"

namespace {

constexpr int kThreads = 256;
constexpr size_t kShapeScratchCap = (size_t)1 << 30;

struct ShapeArgs {
    const void *xv, *yv;
    const int64_t *xoff, *xlen, *yoff, *ylen;
    int64_t xcount, ycount, dim, first, count, self_stride;
    int mode, layout, window;
    double radius, slope; /* tsw_params' window_radius (a fraction too) and slope */
    int64_t reach, segs, sz, width; /* descriptor: segs values of sz points a channel */
    int paa;
    int64_t slot_elems; /* doubles a block */
    double *scr;
    void *out;
};

template <typename T> __device__ __forceinline__ double val(const T *x, int64_t at)
{
    return (double)x[at];
}

/* cpu/shape_dtw.c's tsw__shape_describe: the descriptors of x (len points) into out. */
template <typename T>
__device__ void describe(const ShapeArgs &g, const T *x, int64_t len, double *out)
{
    const int64_t per = g.dim * g.segs; /* values a point */
    for (int64_t e = threadIdx.x; e < len * per; e += blockDim.x) {
        const int64_t i = e / per, r = e - i * per, k = r / g.segs, s = r - k * g.segs;
        double sum = 0;
        for (int64_t t = s * g.sz; t < (s + 1) * g.sz; ++t) {
            int64_t at = i + t - g.reach;
            at = at < 0 ? 0 : at >= len ? len - 1 : at;
            sum = __dadd_rn(sum, val(x, at * g.dim + k));
        }
        out[i * g.width + k * g.segs + s] = g.paa ? __ddiv_rn(sum, (double)g.sz) : sum;
    }
}

template <typename T> __global__ void __launch_bounds__(kThreads) shape_kernel(const ShapeArgs g)
{
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    double *const slot = g.scr + (size_t)blockIdx.x * (size_t)g.slot_elems;
    const bool cd = g.mode == tsw_batch::kCdist;
    const bool usey = cd || g.mode == tsw_batch::kPaired;
    for (int64_t qi = blockIdx.x; qi < g.count; qi += gridDim.x) {
        const int64_t k = g.first + qi;
        int64_t i, j, o0, o1 = -1;
        if (cd) {
            i = k / g.ycount;
            j = k - i * g.ycount;
            o0 = k;
        } else if (g.mode == tsw_batch::kPdist) {
            tsw_batch::pdist_pair(k, g.xcount, &i, &j);
            if (g.layout == TSW_PDIST_CONDENSED) {
                o0 = k;
            } else {
                o0 = i * g.xcount + j;
                o1 = j * g.xcount + i;
            }
        } else { /* SELF: (x_k, x_k); PAIRED: (x_k, y_k) */
            i = j = k;
            o0 = g.mode == tsw_batch::kPaired ? k : k * g.self_stride;
        }
        const int64_t n = g.xlen[i], m = usey ? g.ylen[j] : g.xlen[j];
        const T *a = static_cast<const T *>(g.xv) + g.xoff[i] * g.dim;
        const T *b = static_cast<const T *>(usey ? g.yv : g.xv) +
                     (usey ? g.yoff[j] : g.xoff[j]) * g.dim;
        double *da = slot, *db = da + n * g.width, *C = db + m * g.width;
        __syncthreads(); /* the previous pair's trace is done with the slot */
        describe(g, a, n, da);
        describe(g, b, m, db);
        __syncthreads();
        const tsw_band band = tsw_band_make(g.window, g.radius, g.slope, n, m);
        for (int64_t d = 0; d <= n + m - 2; ++d) {
            const int64_t ilo = d - (m - 1) > 0 ? d - (m - 1) : 0, ihi = d < n - 1 ? d : n - 1;
            for (int64_t r = ilo + threadIdx.x; r <= ihi; r += blockDim.x) {
                const int64_t c = d - r;
                double v = inf;
                if (tsw_band_admits(&band, r, c)) {
                    const double *x = da + r * g.width, *y = db + c * g.width;
                    double s = 0;
                    for (int64_t t = 0; t < g.width; ++t) {
                        const double e = __dsub_rn(x[t], y[t]);
                        s = __dadd_rn(s, __dmul_rn(e, e));
                    }
                    const double up = r > 0 ? C[(r - 1) * m + c] : inf;
                    const double left = c > 0 ? C[r * m + c - 1] : inf;
                    const double diag = r > 0 && c > 0 ? C[(r - 1) * m + c - 1]
                                        : r == 0 && c == 0 ? 0.0
                                                           : inf;
                    v = __dadd_rn(s, TSW_MIN(TSW_MIN(up, left), diag));
                }
                C[r * m + c] = v;
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            double total = 0;
            if (isinf(C[n * m - 1])) { /* the window admits no alignment */
                total = inf;
            } else {
                for (int64_t r = n - 1, c = m - 1; r >= 0 && c >= 0;) {
                    double cc = 0;
                    for (int64_t q = 0; q < g.dim; ++q) {
                        const double e = __dsub_rn(val(a, r * g.dim + q), val(b, c * g.dim + q));
                        cc = __dadd_rn(cc, __dmul_rn(e, e));
                    }
                    total = __dadd_rn(total, cc);
                    const int64_t iu = r > 0 ? r - 1 : n - 1, jl = c > 0 ? c - 1 : m - 1;
                    const double dg = C[iu * m + jl], lf = C[r * m + jl], up = C[iu * m + c];
                    if (dg < lf && dg < up) {
                        --r;
                        --c;
                    } else if (lf < up) {
                        --c;
                    } else {
                        --r;
                    }
                }
            }
            T *out = static_cast<T *>(g.out);
            out[o0] = (T)total;
            if (o1 >= 0)
                out[o1] = (T)total;
        }
    }
}

/* Doubles a block's slot needs for pairs of up to L points (0: too many). */
int64_t slot_elems(const tsw__batch *b, int64_t width)
{
    const int64_t xmax = b->x.max_len;
    const bool usey = b->mode == TSW__PAIRS_CDIST || b->mode == TSW__PAIRS_PAIRED;
    const int64_t ymax = usey ? b->y.max_len : xmax;
    const int64_t L = xmax > ymax ? xmax : ymax; /* the worst pair of any mode */
    if (L < 1 || width < 1 || L > ((int64_t)1 << 31) / (width + 2) ||
        (double)L * (double)(L + 2 * width) * 8.0 > 1e18)
        return 0;
    return L * L + 2 * L * width;
}

int64_t shape_width(const tsw_params *p, int64_t dim)
{
    return dim * (p->descriptor == TSW_SHAPE_PAA ? p->paa_segments : 2 * p->reach + 1);
}

/* Blocks a launch can use: what runs at once, at most kShapeScratchCap of slots (at least
 * one), at most the pairs. */
int64_t max_blocks(int device, size_t slot_bytes, int64_t pairs)
{
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
        cudaGetLastError();
        sms = 1;
    }
    int64_t blocks = (int64_t)(sms > 0 ? sms : 1) * (2048 / kThreads);
    const int64_t fit = (int64_t)(kShapeScratchCap / slot_bytes);
    blocks = fit < blocks ? fit : blocks;
    blocks = pairs < blocks ? pairs : blocks;
    return blocks < 1 ? 1 : blocks;
}

} // namespace

size_t tsw__shape_scratch_bytes(const tsw__batch *b, int device)
{
    const int64_t e = slot_elems(b, shape_width(&b->params, b->dim));
    if (!e)
        return 0;
    const int64_t nx = b->x.count, ny = b->y.count;
    int64_t pairs = nx; /* SELF, PAIRED */
    if (b->mode == TSW__PAIRS_CDIST)
        pairs = ny > 0 && nx > INT64_MAX / ny ? INT64_MAX : nx * ny;
    else if (b->mode == TSW__PAIRS_PDIST)
        pairs = nx / 2 * (nx - 1) + (nx % 2) * ((nx - 1) / 2);
    if (b->count > pairs)
        pairs = b->count;
    if (pairs <= 0)
        return 0;
    const size_t slot = (size_t)e * sizeof(double);
    return (size_t)max_blocks(device, slot, pairs) * slot;
}

cudaError_t tsw__shape_launch(const tsw__batch *b, void *scratch, size_t scratch_bytes,
                              cudaStream_t stream)
{
    if (b->count <= 0)
        return cudaSuccess;
    const tsw_params *p = &b->params;
    ShapeArgs g;
    memset(&g, 0, sizeof(g));
    g.width = shape_width(p, b->dim);
    g.slot_elems = slot_elems(b, g.width);
    const size_t slot = (size_t)g.slot_elems * sizeof(double);
    if (!g.slot_elems || !scratch || scratch_bytes < slot)
        return cudaErrorInvalidValue;
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
        return e;
    int64_t blocks = max_blocks(device, slot, b->count);
    if ((int64_t)(scratch_bytes / slot) < blocks)
        blocks = (int64_t)(scratch_bytes / slot);
    const bool usey = b->mode == TSW__PAIRS_CDIST || b->mode == TSW__PAIRS_PAIRED;
    g.xv = b->x.values;
    g.xoff = b->x.offsets;
    g.xlen = b->x.lengths;
    g.xcount = b->x.count;
    g.yv = usey ? b->y.values : b->x.values;
    g.yoff = usey ? b->y.offsets : b->x.offsets;
    g.ylen = usey ? b->y.lengths : b->x.lengths;
    g.ycount = usey ? b->y.count : b->x.count;
    g.dim = b->dim;
    g.first = b->first;
    g.count = b->count;
    g.self_stride = b->self_stride;
    g.mode = (int)b->mode;
    g.layout = (int)b->layout;
    g.window = (int)p->window;
    g.radius = p->window_radius;
    g.slope = p->itakura_max_slope;
    g.reach = p->reach;
    g.paa = p->descriptor == TSW_SHAPE_PAA;
    const int64_t w = 2 * p->reach + 1;
    g.segs = g.paa ? p->paa_segments : w;
    g.sz = g.paa ? w / p->paa_segments : 1;
    g.scr = static_cast<double *>(scratch);
    g.out = b->out;
    if (b->dtype == TSW_F32)
        shape_kernel<float><<<(unsigned)blocks, kThreads, 0, stream>>>(g);
    else
        shape_kernel<double><<<(unsigned)blocks, kThreads, 0, stream>>>(g);
    return cudaGetLastError();
}
