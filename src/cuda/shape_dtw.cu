/*
 * Shape DTW on the GPU (TSW_SHAPE_DTW through tsw__batch_launch: cdist, pdist, paired, the
 * pair functions and knn's blocks). cpu/shape_dtw.c's computation, step for step, a block a
 * pair, with common/shape.h's pieces: both series' descriptor sequences into the block's
 * slot of global scratch, the matrix filled by anti-diagonals (the whole n x m matrix:
 * aeon's trace reads it back), then one thread traces it (tsw_shape_trace). Everything in
 * double for either dtype, compiled with -fmad=false, so every sum rounds as the CPU's: the
 * same matrix, the same path, the same value bit for bit.
 * The slot holds the longest pair's matrix; the scratch as many slots as run at once
 * (at most kShapeScratchCap bytes, at least one slot).
 */
#include "kernels.h"

#include <math.h>
#include <string.h>

#include "batch_engine.cuh" /* the pairs' enumeration (pdist_pair) and output places */
#include "common/band.h"
#include "common/shape.h"

namespace {

constexpr int kThreads = 256;
constexpr size_t kShapeScratchCap = (size_t)1 << 30;

struct ShapeArgs {
    const void *xv, *yv;
    const int64_t *xoff, *xlen, *yoff, *ylen;
    int64_t xcount, ycount, dim, first, count, self_stride;
    int mode, layout, window;
    double radius, slope; /* tsw_params' window_radius (a fraction too) and slope */
    tsw_shape_spec spec;
    int64_t slot_elems; /* doubles a block */
    double *scr;
    void *out;
};

__device__ __forceinline__ double seq(const tsw_shape_spec &s, const float *x, int64_t len,
                                      int64_t k, int64_t u)
{
    return tsw_shape_seq_f32(&s, x, len, k, u);
}
__device__ __forceinline__ double seq(const tsw_shape_spec &s, const double *x, int64_t len,
                                      int64_t k, int64_t u)
{
    return tsw_shape_seq_f64(&s, x, len, k, u);
}
__device__ __forceinline__ double trace(const double *C, const float *a, int64_t n,
                                        const float *b, int64_t m, int64_t dim)
{
    return tsw_shape_trace_f32(C, a, n, b, m, dim);
}
__device__ __forceinline__ double trace(const double *C, const double *a, int64_t n,
                                        const double *b, int64_t m, int64_t dim)
{
    return tsw_shape_trace_f64(C, a, n, b, m, dim);
}

/* The sequences of x (len points) into out: channel k's L values at out + k * L. */
template <typename T>
__device__ void sequences(const tsw_shape_spec &s, const T *x, int64_t len, double *out)
{
    const int64_t L = tsw_shape_seq_len(&s, len);
    for (int64_t e = threadIdx.x; e < s.dim * L; e += blockDim.x) {
        const int64_t k = e / L;
        out[e] = seq(s, x, len, k, e - k * L);
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
        const tsw_shape_spec &sp = g.spec;
        const int64_t LA = tsw_shape_seq_len(&sp, n), LB = tsw_shape_seq_len(&sp, m);
        double *A = slot, *B = A + sp.dim * LA, *C = B + sp.dim * LB;
        __syncthreads(); /* the previous pair's trace is done with the slot */
        sequences(sp, a, n, A);
        sequences(sp, b, m, B);
        __syncthreads();
        const tsw_band band = tsw_band_make(g.window, g.radius, g.slope, n, m);
        for (int64_t d = 0; d <= n + m - 2; ++d) {
            const int64_t ilo = d - (m - 1) > 0 ? d - (m - 1) : 0, ihi = d < n - 1 ? d : n - 1;
            for (int64_t r = ilo + threadIdx.x; r <= ihi; r += blockDim.x) {
                const int64_t c = d - r;
                double v = inf;
                if (tsw_band_admits(&band, r, c)) {
                    const double cost = tsw_shape_cost(&sp, A, LA, B, LB, r, c);
                    const double up = r > 0 ? C[(r - 1) * m + c] : inf;
                    const double left = c > 0 ? C[r * m + c - 1] : inf;
                    const double diag = r > 0 && c > 0 ? C[(r - 1) * m + c - 1]
                                        : r == 0 && c == 0 ? 0.0
                                                           : inf;
                    v = tsw_shape_cell(cost, up, left, diag);
                }
                C[r * m + c] = v;
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            const double total = trace(C, a, n, b, m, sp.dim);
            T *out = static_cast<T *>(g.out);
            out[o0] = (T)total;
            if (o1 >= 0)
                out[o1] = (T)total;
        }
    }
}

/* The spec of a batch's parameters. */
tsw_shape_spec spec_of(const tsw__batch *b)
{
    const tsw_params *p = &b->params;
    return tsw_shape_spec_make(p->descriptor == TSW_SHAPE_PAA, p->reach, p->paa_segments,
                               b->dim);
}

/* Doubles a block's slot needs for the batch's longest pair (0: too many): both series'
 * sequences and the whole matrix. */
int64_t slot_elems(const tsw__batch *b)
{
    const tsw_shape_spec sp = spec_of(b);
    const int64_t xmax = b->x.max_len;
    const bool usey = b->mode == TSW__PAIRS_CDIST || b->mode == TSW__PAIRS_PAIRED;
    const int64_t ymax = usey ? b->y.max_len : xmax;
    const int64_t L = xmax > ymax ? xmax : ymax; /* the worst pair of any mode */
    const double seqs = 2.0 * (double)sp.dim * ((double)L + (double)(sp.segs - 1) * sp.sz);
    if (L < 1 || sp.dim < 1 || sp.segs < 1 || (double)L * (double)L + seqs > 1e17)
        return 0;
    return L * L + 2 * sp.dim * tsw_shape_seq_len(&sp, L);
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
    const int64_t e = slot_elems(b), pairs = tsw__batch_pairs(b);
    if (!e || pairs <= 0)
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
    g.spec = spec_of(b);
    g.slot_elems = slot_elems(b);
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
    g.scr = static_cast<double *>(scratch);
    g.out = b->out;
    if (b->dtype == TSW_F32)
        shape_kernel<float><<<(unsigned)blocks, kThreads, 0, stream>>>(g);
    else
        shape_kernel<double><<<(unsigned)blocks, kThreads, 0, stream>>>(g);
    return cudaGetLastError();
}
