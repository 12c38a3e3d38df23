/*
 * Private interface of the fast soft-DTW value + gradient pair kernel (sdtw_grad_diag_impl.h),
 * shared by cpu/sdtw_grad.c (scalar instantiation, dispatch) and cpu/sdtw_grad_avx2.c (AVX2).
 *
 * The kernel computes in double whatever the dtype: float32 inputs are widened on the way
 * in (they are copied into the workspace anyway) and the outputs rounded once on the way
 * out. The exponents of the backward pass are differences of R values divided by gamma, so
 * float32 arithmetic would give them an error of ~6e-8 R / gamma (1e-2 and worse at small
 * gamma); in double the float32 result is the float64 result rounded to float32.
 */
#ifndef TSW_CPU_SDTW_GRAD_DIAG_H
#define TSW_CPU_SDTW_GRAD_DIAG_H

#include "kernels.h"

/* One pair: series (x, y; C == NULL) or a cost matrix C (x, y NULL). Gradients as in
 * sdtw_grad_impl.h: gx/gy accumulated (+= alpha dR/dx, may alias), gc written (alpha E). */
typedef struct tsw__sdg_pair {
    int f32; /* inputs and outputs are float (the arithmetic is double regardless) */
    int want;
    int softmin; /* keep S even where the probabilities fit (tests of that path) */
    int64_t dim, n, m, ldc;
    const void *x, *y, *C;
    double alpha;
    void *gx, *gy, *gc;
    tsw__cancel *cancel; /* NULL, or polled every 64 anti-diagonals (one thread's pairs) */
} tsw__sdg_pair;

/* Slack in elements around every row-indexed array: the vector loops read one element in
 * front and run up to one step of 4 vectors of 4 doubles past the interval. */
#define TSW__SDG_P 32

/* Two ways to keep the forward pass for the backward one, per pair:
 *   probabilities (prob = 1): the three soft-argmin probabilities of every window cell, the
 *     weights of the backward pass themselves, so the backward pass is three multiply-adds
 *     a cell; 24 bytes a cell, used while they fit in TSW__SDG_PROB_BYTES;
 *   softmin (prob = 0): S of every window cell (8 bytes a cell); the backward pass takes
 *     the weights as exp((S(s) - R) / gamma), three exponentials a cell. Long pairs. */
#define TSW__SDG_PROB_BYTES ((size_t)96 << 20)

/* Workspace layout in doubles (every region a whole number of cache lines). */
typedef struct tsw__sdg_layout {
    int prob;       /* probabilities (else softmin) */
    size_t s;       /* S, or the probabilities of the diagonal, up, left predecessors
                     * (three arrays of sp values, P slack in front), diagonal after
                     * diagonal */
    size_t sp;      /* stride of the three probability arrays */
    size_t doff;    /* per anti-diagonal: offset into s (int64), n + m values      */
    size_t dr0;     /* per anti-diagonal: its first row (int64), n + m values       */
    size_t x, yr;   /* points of x (dim-major, by row) and of y reversed (dim-major) */
    size_t gx, gyr; /* gradient accumulators, same layouts                           */
    size_t buf[6];  /* rotating anti-diagonals: R (forward), S and E (backward)      */
    size_t cd;      /* the local costs of the current anti-diagonal                 */
    size_t sx, sy, sb; /* strides: x dims, y dims, buffers                           */
    size_t total;
} tsw__sdg_layout;

static inline size_t tsw__sdg_round(size_t e) { return (e + 7) / 8 * 8; }

/* 0 on success, TSW_EOVERFLOW when the sizes overflow. band_cells bounds the window's
 * cells (n times the band width); softmin forces the softmin form. */
static inline int tsw__sdg_layout_make(int64_t dim, int64_t n, int64_t m, size_t band_cells,
                                       int softmin, tsw__sdg_layout *lay)
{
    const size_t P = TSW__SDG_P;
    size_t off = 0, t;
    lay->sx = tsw__sdg_round((size_t)n + 2 * P);
    lay->sy = tsw__sdg_round((size_t)m + 2 * P);
    lay->sb = lay->sx;
#define TSW__SDG_GROW(field, count)                                                           \
    do {                                                                                      \
        lay->field = off;                                                                     \
        t = tsw__sdg_round(count);                                                            \
        if (t < (count) || off > SIZE_MAX / 16 - t)                                           \
            return TSW_EOVERFLOW;                                                             \
        off += t;                                                                             \
    } while (0)
    if (band_cells > SIZE_MAX / 64 - 2 * P)
        return TSW_EOVERFLOW;
    lay->sp = tsw__sdg_round(band_cells + 2 * P);
    lay->prob = !softmin && band_cells <= TSW__SDG_PROB_BYTES / (3 * sizeof(double));
    TSW__SDG_GROW(s, lay->prob ? 3 * lay->sp : band_cells + P);
    TSW__SDG_GROW(doff, (size_t)n + (size_t)m + 1);
    TSW__SDG_GROW(dr0, (size_t)n + (size_t)m + 1);
    if (tsw__mul_size((size_t)dim, lay->sx, &t) || tsw__mul_size((size_t)dim, lay->sy, &t))
        return TSW_EOVERFLOW;
    TSW__SDG_GROW(x, (size_t)dim * lay->sx);
    TSW__SDG_GROW(yr, (size_t)dim * lay->sy);
    TSW__SDG_GROW(gx, (size_t)dim * lay->sx);
    TSW__SDG_GROW(gyr, (size_t)dim * lay->sy);
    for (int b = 0; b < 6; ++b)
        TSW__SDG_GROW(buf[b], lay->sb);
    TSW__SDG_GROW(cd, lay->sb);
#undef TSW__SDG_GROW
    lay->total = off;
    return TSW_OK;
}

/* Workspace bytes of one pair (cpu/sdtw_grad.c; 0 on overflow). */
size_t tsw__sdg_diag_ws(const tsw_params *p, int64_t dim, int64_t n, int64_t m, int softmin);
double tsw__sdg_diag_scalar_f64(const tsw_params *p, const tsw__sdg_pair *pr, void *ws);
#if TSW_X86
double tsw__sdg_diag_avx2_f64(const tsw_params *p, const tsw__sdg_pair *pr, void *ws);
#endif

#endif
