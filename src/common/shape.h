/*
 * Shape DTW (TSW_SHAPE_DTW; Zhao and Itti 2018, as aeon's shape_dtw_distance computes it):
 * the one definition of its descriptors, cell and trace, used by the CPU reference and fast
 * kernel (cpu/shape_dtw.c, cpu/shape_dtw_impl.h) and the CUDA kernel (cuda/shape_dtw.cu).
 * Points are dim contiguous values (x[i * dim + k]); everything is computed in double for
 * either dtype, with no multiply-add contracted (-ffp-contract=off / -fmad=false), so every
 * backend gives the same bits.
 *
 * Descriptors. Point i's descriptor comes from its neighbourhood of w = 2 reach + 1 points,
 * the series padded at each end with its end value: the values themselves (identity: segs
 * = w segments of sz = 1 point) or their piecewise aggregate (PAA: segs = paa_segments
 * means of sz = w / paa_segments points, tslearn's PAA), channel after channel. Segment s of
 * channel k is the same number for every point whose window starts at the same padded
 * place, so it is a sequence of one index:
 *     desc(i, k, s) = seq_k(i + s sz),
 *     seq_k(u) = (x_pad(u) + x_pad(u + 1) + ... + x_pad(u + sz - 1))   [/ sz for PAA],
 * summed left to right, x_pad(u) = x[clamp(u - reach, 0, len - 1)], u in [0, len + (segs -
 * 1) sz). A series has tsw_shape_seq_len values of seq a channel.
 *
 * Cell. The descriptors' squared Euclidean distance, summed in the descriptor's order
 * (channel k outer, segment s inner, from 0):
 *     c(i, j) = sum_k sum_s tsw_shape_tap(seq_k^a(i + s sz), seq_k^b(j + s sz))
 *     D(i, j) = c(i, j) + min(D(i - 1, j), D(i, j - 1), D(i - 1, j - 1)),  D(-1, -1) = 0,
 * the rest of the boundary and the cells outside the window +inf (the window on the series'
 * own lengths). Any order of the min gives the same value (min is exact).
 *
 * Value. The squared Euclidean cost of the series' own points summed along the path traced
 * back from (n - 1, m - 1) by aeon's rule: diagonal when it is below both others, else left
 * when below up, else up, with aeon's reads of row -1 and column -1 (numpy's last row and
 * column), until a row or column index leaves the grid. The rule reads the whole matrix:
 * O(n m) memory a pair (aeon's too). +inf when the window admits no alignment.
 */
#ifndef TSW_COMMON_SHAPE_H
#define TSW_COMMON_SHAPE_H

#include "tsw_hd.h"

/* A descriptor's shape: segs segments of sz points a channel, dim channels. */
typedef struct tsw_shape_spec {
    int64_t reach, segs, sz, dim;
    int paa; /* 1: means (PAA); 0: sums of one point (identity) */
} tsw_shape_spec;

/* The spec of tsw_params' descriptor (paa: descriptor == TSW_SHAPE_PAA), reach and
 * paa_segments, for points of dim channels. */
TSW_HD tsw_shape_spec tsw_shape_spec_make(int paa, int64_t reach, int64_t paa_segments,
                                          int64_t dim)
{
    tsw_shape_spec s;
    const int64_t w = 2 * reach + 1;
    s.reach = reach;
    s.paa = paa;
    s.segs = paa ? paa_segments : w;
    s.sz = paa ? w / paa_segments : 1;
    s.dim = dim;
    return s;
}

/* Values of seq a channel for a series of len points. */
TSW_HD int64_t tsw_shape_seq_len(const tsw_shape_spec *s, int64_t len)
{
    return len + (s->segs - 1) * s->sz;
}

/* One tap of a cell: the square of two descriptor values' difference. */
TSW_HD double tsw_shape_tap(double a, double b)
{
    const double d = a - b;
    return d * d;
}

/* The cost of cell (i, j) from the sequences (channel k's at A + k LA and B + k LB): the
 * taps in the descriptor's order, channel outer, segment inner, from 0 (the reference's sum,
 * which the CPU's fast fill repeats 16 cells at a time). Pointers stepping sz, 32-bit
 * counts: 64-bit index products a tap were most of the GPU kernel's instructions. */
TSW_HD double tsw_shape_cost(const tsw_shape_spec *s, const double *A, int64_t LA,
                             const double *B, int64_t LB, int64_t i, int64_t j)
{
    double c = 0;
    const int segs = (int)s->segs, sz = (int)s->sz;
    const double *pa = A + i, *pb = B + j;
    for (int64_t k = 0; k < s->dim; ++k, pa += LA, pb += LB)
        for (int q = 0, o = 0; q < segs; ++q, o += sz)
            c += tsw_shape_tap(pa[o], pb[o]);
    return c;
}

/* The cell: its cost plus the least of its three predecessors. */
TSW_HD double tsw_shape_cell(double cost, double up, double left, double diag)
{
    return cost + TSW_MIN(TSW_MIN(up, left), diag);
}

#define TSW_DEFINE_SHAPE(T, SFX)                                                               \
    /* seq_k(u) of x (len points of s->dim channels). */                                       \
    TSW_HD double tsw_shape_seq_##SFX(const tsw_shape_spec *s, const T *x, int64_t len,         \
                                      int64_t k, int64_t u)                                    \
    {                                                                                          \
        double sum = 0;                                                                        \
        for (int64_t t = 0; t < s->sz; ++t) {                                                  \
            int64_t at = u + t - s->reach; /* the padded series' point */                      \
            at = at < 0 ? 0 : at >= len ? len - 1 : at;                                        \
            sum += (double)x[at * s->dim + k];                                                 \
        }                                                                                      \
        return s->paa ? sum / (double)s->sz : sum;                                             \
    }                                                                                          \
    /* The squared Euclidean cost of a's point i and b's point j (dim channels). */            \
    TSW_HD double tsw_shape_point_cost_##SFX(const T *a, int64_t i, const T *b, int64_t j,      \
                                             int64_t dim)                                      \
    {                                                                                          \
        double c = 0;                                                                          \
        for (int64_t k = 0; k < dim; ++k)                                                      \
            c += tsw_shape_tap((double)a[i * dim + k], (double)b[j * dim + k]);                \
        return c;                                                                              \
    }                                                                                          \
    /* The value from the filled matrix C (row i at C + i * m) of a (n points) and b (m). */   \
    TSW_HD double tsw_shape_trace_##SFX(const double *C, const T *a, int64_t n, const T *b,    \
                                        int64_t m, int64_t dim)                                \
    {                                                                                          \
        if (C[n * m - 1] == TSW_INF_F64) /* the window admits no alignment */                 \
            return TSW_INF_F64;                                                                \
        double total = 0;                                                                      \
        for (int64_t i = n - 1, j = m - 1; i >= 0 && j >= 0;) {                                \
            total += tsw_shape_point_cost_##SFX(a, i, b, j, dim);                              \
            const int64_t iu = i > 0 ? i - 1 : n - 1, jl = j > 0 ? j - 1 : m - 1; /* aeon's -1 */ \
            const double dg = C[iu * m + jl], lf = C[i * m + jl], up = C[iu * m + j];          \
            if (dg < lf && dg < up) {                                                          \
                --i;                                                                           \
                --j;                                                                           \
            } else if (lf < up) {                                                              \
                --j;                                                                           \
            } else {                                                                           \
                --i;                                                                           \
            }                                                                                  \
        }                                                                                      \
        return total;                                                                          \
    }

TSW_DEFINE_SHAPE(double, f64)
TSW_DEFINE_SHAPE(float, f32)

#undef TSW_DEFINE_SHAPE

#endif
