/*
 * Contract between the CUDA host layer (cuda/backend.cu: devices, memory, validation,
 * chunking, the public entry points) and the kernels (cuda/kernels.cu). Internal; C++
 * (CUDA) linkage only.
 *
 * Everything here is device data already validated by the host layer: values finite,
 * timestamps strictly increasing, parameters checked by tsw__check_params, lengths >= 1.
 * Launchers enqueue work on `stream` and return the launch status (cudaGetLastError()
 * after the launches); they never synchronise, allocate or print.
 */
#ifndef TSW_CUDA_KERNELS_H
#define TSW_CUDA_KERNELS_H

#include <cuda_runtime.h>

#include "internal.h"

/* A collection on the device. offsets and lengths are device arrays, always present. */
typedef struct tsw__dcoll {
    const void *values;     /* rows back to back, (rows, dim) of the batch dtype       */
    const void *times;      /* TWED timestamps laid out like the rows, or NULL = 1..len */
    const int64_t *offsets; /* (count,) first row of series i                          */
    const int64_t *lengths; /* (count,) length of series i                             */
    int64_t count;
    int64_t max_len; /* host-known maximum of lengths (sizing, kernel choice)  */
    int64_t min_len; /* host-known minimum of lengths                          */
    const void *stat; /* (count,) doubles staged by tsw__family_prep, else NULL: EDR's
                         automatic epsilon (each series' population std), ERP at
                         dim 1 (1 where tsw_root_square_exact holds for the series) */
    const void *cum;  /* ERP: each point's cumulative gap cost within its series, laid
                         out like the rows (tsw__family_prep), else NULL              */
} tsw__dcoll;

/*
 * Which pairs a launch computes: pair index k in [first, first + count) of the mode's
 * enumeration, and where each result goes.
 *   CDIST  k -> (i, j) = (k / y.count, k % y.count), out[i * y.count + j]
 *   PDIST  k -> the k-th pair i < j in row order (scipy's condensed order):
 *             CONDENSED: out[k]; FULL: out[i * n + j] and out[j * n + i] (n = x.count)
 *   SELF   k -> (k, k) of x, out[k * self_stride]
 *            (pdist FULL's diagonal: self_stride = n + 1; soft-DTW self values for the
 *             divergence: self_stride = 1 into a scratch array, with finish = 0)
 */
typedef enum {
    TSW__PAIRS_CDIST = 0,
    TSW__PAIRS_PDIST = 1,
    TSW__PAIRS_SELF = 2,
    TSW__PAIRS_PAIRED = 3 /* k -> (x_k, y_k), out[k]; divergence with self_x[k], self_y[k] */
} tsw__pairs;

typedef struct tsw__batch {
    tsw_params params; /* by value */
    tsw_dtype dtype;
    int64_t dim;
    tsw__dcoll x, y; /* y is ignored for PDIST and SELF */
    tsw__pairs mode;
    int64_t first, count;
    void *out; /* device, dtype */
    tsw_pdist_layout layout; /* PDIST */
    int64_t self_stride;     /* SELF */
    /*
     * finish = 1: write the returned distance: DTW's root for the sqeuclidean cost when
     * !accumulated (tsw__finish), and for soft-DTW with params.normalize the divergence
     *   v(i,j) - (self_x[i] + self_y[j]) / 2   (PDIST and SELF: self_y = self_x)
     * from the raw self values (dtype, device, computed earlier by a SELF launch with
     * finish = 0). finish = 0: write the raw value (DTW's accumulated cost, TWED's value,
     * soft-DTW's value).
     */
    int finish;
    const void *self_x, *self_y;
} tsw__batch;

/*
 * Device scratch (bytes) tsw__batch_launch needs for this batch on device `device`
 * (e.g. stripe boundary columns of long series per resident warp). 0 is allowed.
 * Depends on the lengths, dim, dtype and measure, not on first/count beyond their upper
 * bound, so the host sizes it once per call and reuses it across chunks.
 */
size_t tsw__batch_scratch_bytes(const tsw__batch *b, int device);
/* The pairs a batch's scratch is sized for: what its mode enumerates over the collections,
 * or its count when larger. */
int64_t tsw__batch_pairs(const tsw__batch *b);
/* Shape DTW's batches (shape_dtw.cu), which the two above hand TSW_SHAPE_DTW to: a block
 * a pair, each with a slot of scratch for its descriptors and whole DTW matrix. */
size_t tsw__shape_scratch_bytes(const tsw__batch *b, int device);
cudaError_t tsw__shape_launch(const tsw__batch *b, void *scratch, size_t scratch_bytes,
                              cudaStream_t stream);
cudaError_t tsw__batch_launch(const tsw__batch *b, void *scratch, size_t scratch_bytes,
                              cudaStream_t stream);

/*
 * One pair with every SM on it (long series). a, b, ta, tb device pointers (ta, tb may be
 * NULL = 1..n). Writes the raw value (see finish = 0 above) as one element of dtype to
 * *out (device). Linear memory: scratch is O(n + m) (a few anti-diagonals or tile borders).
 */
size_t tsw__pair_scratch_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                               int64_t n, int64_t m, int device);
cudaError_t tsw__pair_launch(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const void *a, const void *ta, int64_t n, const void *b,
                             const void *tb, int64_t m, void *out, void *scratch,
                             size_t scratch_bytes, cudaStream_t stream);

/*
 * The elastic family (kernels_family.cu). tsw__family_kernel: the batch kernel of K_FAM
 * for dtype (0 float, 1 double), C cells per lane and dim 1 or not (NULL if not built);
 * kernels_batch.cu's launcher runs it. tsw__family_prep enqueues what a batch of the
 * family needs staged from a collection c (dim values a point, rows points in all):
 * DDTW and WDDTW: the derivatives of each series into deriv (rows * dim elements, series
 * i's n - 2 points at its own offset: overlapping series write the same values); EDR with
 * its automatic epsilon: each series' population std into stat (count doubles); ERP: into
 * stat whether the series' values keep the match cost's root exact (dim 1), and into deriv,
 * unless it is NULL (series that overlap, whose sums would collide), the gap costs summed
 * along each series in order (rows elements). The others need nothing.
 */
const void *tsw__family_kernel(int dtype, int C, int dim1);
cudaError_t tsw__family_prep(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const tsw__dcoll *c, void *deriv, double *stat,
                             cudaStream_t stream);
/* Whether tsw__family_prep has anything to do for these parameters: derivatives (1), the
 * std (2), ERP's sums and flags (3), nothing (0). */
int tsw__family_needs(const tsw_params *params);

/* Below this many cells (n * m) a single pair runs as a one-pair batch instead of
 * tsw__pair_launch (one warp beats a grid-wide wavefront on small pairs). */
#define TSW__LONG_PAIR_MIN_CELLS ((int64_t)1 << 22)

#endif
