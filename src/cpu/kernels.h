/*
 * Private declarations of the fast CPU kernels (cpu/pair_fast*.c, cpu/lanes*.c) and their
 * workspace layouts. The dispatchers tsw__pair_fast and tsw__pair_lanes (internal.h) pick
 * an instantiation by tsw__cpu_level(); the *_level entry points take the level explicitly
 * so that tests can run every instruction set the machine has in one process.
 *
 * Instantiations: scalar (any CPU), sse2 (x86-64 baseline), avx2 (AVX2 + FMA, compiled in
 * the *_avx2.c files, entered only when tsw__cpu_level() >= 2).
 */
#ifndef TSW_CPU_KERNELS_H
#define TSW_CPU_KERNELS_H

#include "../common/band.h"
#include "../internal.h"

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#define TSW_X86 1
#else
#define TSW_X86 0
#endif

/* Rows per strip of the single-pair kernel: 2 KiB of one anti-diagonal, so the three
 * rotating anti-diagonals (and TWED's three more) and the strip's points stay in L1. */
#define TSW__STRIP_BYTES 2048

/* Every per-point array of the single-pair workspace is padded by this many bytes (four
 * AVX2 vectors: the soft-DTW sweep steps by four vectors), so vector loads and stores that
 * run past the last point stay inside it. TSW__PAD(esz) in elements. */
#define TSW__PAD_BYTES 128
#define TSW__PAD(esz) (TSW__PAD_BYTES / (esz))

/* Scalar arithmetic for the op-parameterised macros of src/common. */
#define TSW__S_ADD(a, b) ((a) + (b))
#define TSW__S_MUL(a, b) ((a) * (b))

/* Slack in front of the single-pair kernel's row-indexed arrays: up to VL - 1 elements, so
 * that the vectors of an anti-diagonal start at aligned addresses (pair_diag_impl.h). */
#define TSW__ALIGN_SH 8

/* Round an element count up to whole 64-byte lines of elements of esz bytes. */
static inline size_t tsw__round_line(size_t elems, size_t esz)
{
    size_t per = 64 / esz;
    return (elems + per - 1) / per * per;
}

/* ---- one pair by anti-diagonals (pair_diag_impl.h) ------------------------------------ */

/* Layout of the single-pair workspace, offsets in elements of the dtype. rows/cols are the
 * outer/inner lengths of the DP (see band.h), dim the point dimension. */
typedef struct tsw__diag_layout {
    size_t a, br;       /* points of a (dim-major, index 1..rows) and b reversed (dim-major) */
    size_t na, nbr;     /* cosine: norms of the points of a and of reversed b             */
    size_t da, dbr;     /* TWED: deletion costs of a (index 1..rows) and of reversed b     */
    size_t ta, tbr;     /* TWED: timestamps of a (index 0..rows) and of reversed b         */
    size_t sa, sb;      /* strides between the dims of a and of br                          */
    size_t d[3], l[3];  /* three rotating anti-diagonals of D and of the second values    */
    size_t row, lrow;   /* D and the second values of the row above the current strip     */
    size_t total;       /* elements in all                                                   */
} tsw__diag_layout;

/* 0 on success, TSW_EOVERFLOW when the sizes overflow. */
int tsw__diag_layout_make(const tsw_params *p, int64_t dim, int64_t rows, int64_t cols,
                          size_t esz, tsw__diag_layout *lay);
/* Bytes of workspace the single-pair kernels need for lengths up to (n, m); 0 on overflow. */
size_t tsw__diag_ws_bytes(const tsw_params *p, tsw_dtype dtype, int64_t dim, int64_t n,
                          int64_t m);

/*
 * Rows of one anti-diagonal inside the window. Cell (r, c) (0-based) lies on anti-diagonal
 * q = r + c and is admissible iff lo_r <= c < hi_r (tsw_band_range), i.e. iff
 * f(r) = lo_r + r <= q < g(r) = hi_r + r. Both band ends are non-decreasing in r for every
 * window kind (Sakoe-Chiba: r - below and r + above + 1, clamped; Itakura: ceil/floor of
 * non-decreasing lines), so f and g are strictly increasing, and the admissible rows of q
 * are one interval [R0(q), R1(q)) with R0 = first r with g(r) > q, R1 = first r with
 * f(r) > q, both non-decreasing in q: two pointers walk them, O(rows) band evaluations.
 */
typedef struct tsw__diag_rows {
    const tsw_band *band;
    int64_t r_end;  /* rows past the strip are never admitted */
    int64_t r0, r1; /* the pointers */
    int64_t g0, f1; /* g(r0), f(r1) */
} tsw__diag_rows;

static inline int64_t tsw__band_f(const tsw_band *b, int64_t r)
{
    int64_t lo, hi;
    tsw_band_range(b, r, &lo, &hi);
    return lo + r;
}
static inline int64_t tsw__band_g(const tsw_band *b, int64_t r)
{
    int64_t lo, hi;
    tsw_band_range(b, r, &lo, &hi);
    return hi + r;
}

/* Walk the rows [r_begin, r_end) (a strip) of band b. */
static inline void tsw__diag_rows_init(tsw__diag_rows *it, const tsw_band *b, int64_t r_begin,
                                       int64_t r_end)
{
    it->band = b;
    it->r_end = r_end;
    it->r0 = it->r1 = r_begin;
    it->g0 = tsw__band_g(b, r_begin);
    it->f1 = tsw__band_f(b, r_begin);
}

/* Admissible rows [*r0, *r1) of anti-diagonal q; q must increase by one per call. Inlined:
 * with a narrow band it runs once per dozen cells. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void tsw__diag_rows_next(tsw__diag_rows *it, int64_t q, int64_t *r0, int64_t *r1)
{
    const int64_t rows = it->r_end;
    while (it->r0 < rows && it->g0 <= q) {
        ++it->r0;
        if (it->r0 < rows)
            it->g0 = tsw__band_g(it->band, it->r0);
    }
    while (it->r1 < rows && it->f1 <= q) {
        ++it->r1;
        if (it->r1 < rows)
            it->f1 = tsw__band_f(it->band, it->r1);
    }
    *r0 = it->r0;
    *r1 = it->r1 > it->r0 ? it->r1 : it->r0;
}

/* ---- soft-DTW's linear domain: where it holds ------------------------------------------ */

/* The AVX2 soft-DTW kernels (vecmath.h, tsw_vsdtw_lin_cells) keep P = exp(-R / gamma) as
 * m 2^k, with k = -R / gamma / ln 2 and P = 0 as k = TSW__LIN_ZERO (-1e300, float -1e30).
 * A pair fits when every k stays far above that: R(i,j) is at most the cost of one path of
 * i + j cells (and at least -gamma (i + j) ln 3), so (n + m) cmax / gamma / ln 2 bounds |k|,
 * cmax the largest local cost. Pairs beyond (tiny gamma with large values: gamma 1e-300 and
 * values near 1, or values near 1e140 and gamma 1) run in the log domain (SSE2 or scalar
 * kernels), which any normal gamma suits. */
static inline int tsw__sdtw_lin_fits(double cmax, int64_t n, int64_t m, double gamma, int f32)
{
    const double k = cmax / gamma * 1.4426950408889634 * ((double)n + (double)m);
    return k < (f32 ? 1e27 : 1e297); /* false for inf and NaN */
}

/* Soft-DTW of one pair (squared Euclidean local cost) fits the linear domain. */
static inline int tsw__sdtw_pair_lin_fits(const tsw_params *p, tsw_dtype dtype, int64_t dim,
                                          const tsw__pair *pr)
{
    const double s = tsw__absmax(dtype, pr->a, pr->n * dim) + tsw__absmax(dtype, pr->b, pr->m * dim);
    return tsw__sdtw_lin_fits((double)dim * s * s, pr->n, pr->m, p->gamma, dtype == TSW_F32);
}

/* One pair, raw value (as tsw__pair_fast), at an explicit level (0 scalar, 1 SSE2, 2 AVX2;
 * capped at what the machine has). */
void tsw__pair_fast_level(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw__pair *pair, void *ws, double *out, int level);

#define TSW__DIAG_DECL(sfx)                                                                   \
    double tsw__diag_pair_##sfx(const tsw_params *p, int64_t dim, const tsw__pair *pr,       \
                                void *ws);
TSW__DIAG_DECL(scalar_f64)
TSW__DIAG_DECL(scalar_f32)
TSW__DIAG_DECL(sse2_f64)
TSW__DIAG_DECL(sse2_f32)
TSW__DIAG_DECL(avx2_f64)
TSW__DIAG_DECL(avx2_f32)
#undef TSW__DIAG_DECL

/* ---- SIMD across pairs (lanes_impl.h) -------------------------------------------------- */

/* Layout of the lane workspace for VL pairs of lengths (rows, cols), elements of the dtype;
 * every per-point array is interleaved lane-minor: x[(point * dim + k) * VL + lane]. */
typedef struct tsw__lanes_layout {
    size_t a, b;        /* points (rows x dim x VL), (cols x dim x VL)            */
    size_t na, nb;      /* cosine: norms (rows x VL), (cols x VL)                 */
    size_t da, db;      /* TWED: deletion costs (rows x VL), (cols x VL); ERP: gap costs;
                           MSM: |x_i - x_{i-1}| of each point                      */
    size_t ta, tb;      /* TWED: timestamps (rows x VL), (cols x VL); MSM: the splits'
                           sign flips (+0 or -0)                                   */
    size_t row, lrow;   /* the row above the strip ((cols+1) x VL): D, and the second values
                           (TWED local terms, soft-DTW binary exponents) */
    size_t eab;         /* DTW's early abandoning: the bounds of the rows to come
                           ((rows+1) x VL), then of the columns ((cols+1) x VL)
                           (tsw__lanes_run_ea) */
    size_t w;           /* WDTW, WDDTW: the weights of |i - j| (max(rows, cols))   */
    size_t eps;         /* EDR, LCSS: each lane's epsilon (VL)                      */
    size_t dv;          /* DDTW, WDDTW: one series' derivatives, before interleaving
                           (max(rows, cols) x dim)                                  */
    size_t total;
} tsw__lanes_layout;

int tsw__lanes_layout_make(const tsw_params *p, int64_t dim, int64_t rows, int64_t cols,
                           int vl, size_t esz, tsw__lanes_layout *lay);

/* Lane width at an explicit level (0 when that level has no lane kernel for params). */
int tsw__lanes_width_level(const tsw_params *params, tsw_dtype dtype, int64_t dim, int level);
/* tsw__pair_lanes at an explicit level. */
int64_t tsw__pair_lanes_level(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                              const tsw__pair *pairs, int64_t count, void *ws, double *out,
                              int level);

/* LB_Keogh's sums (knn_boxes.h), per instruction set. */
#define TSW__BOXES_DECL(isa)                                                                  \
    double tsw__lb_boxes_##isa##_f64(tsw_cost cost, const double *v, const double *lo,        \
                                     const double *hi, int64_t j0, int64_t j1, int64_t dim,   \
                                     double stop, double *c);                                 \
    double tsw__lb_boxes_##isa##_f32(tsw_cost cost, const float *v, const float *lo,          \
                                     const float *hi, int64_t j0, int64_t j1, int64_t dim,    \
                                     double stop, double *c);
TSW__BOXES_DECL(base)
TSW__BOXES_DECL(avx2)
#undef TSW__BOXES_DECL

#define TSW__LANES_DECL(sfx)                                                                  \
    int64_t tsw__lanes_run_##sfx(const tsw_params *p, int64_t dim, const tsw__pair *pairs,   \
                                 int64_t count, void *ws, double *out);                      \
    int64_t tsw__lanes_run_ea_##sfx(const tsw_params *p, int64_t dim, const tsw__pair *pairs,\
                                    int64_t count, void *ws, double *out,                    \
                                    const double *const *rowb, const double *const *colb,    \
                                    double thr, int same_a);                                 \
    /* the elastic family (family_lanes.c, family_lanes_avx2.c: no fused multiply-add, so \
     * that the lanes give family.c's bits) */                                               \
    int64_t tsw__fam_lanes_run_##sfx(const tsw_params *p, int64_t dim,                        \
                                     const tsw__pair *pairs, int64_t count, void *ws,         \
                                     double *out);
TSW__LANES_DECL(sse2_f64)
TSW__LANES_DECL(sse2_f32)
TSW__LANES_DECL(avx2_f64)
TSW__LANES_DECL(avx2_f32)
#undef TSW__LANES_DECL

/* ---- shape DTW ------------------------------------------------------------------------- */

/* One pair's value by the fast fill at SIMD level `level` (shape_dtw.c): tsw__shape_pair's
 * value bit for bit; ws: tsw__shape_ws_bytes. */
/* Rows of cells the fast fill runs together (shape_dtw_impl.h; its steady loop is written
 * out for 4). */
#define TSW__SHAPE_H 4
void tsw__shape_pair_fast(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw__pair *pair, void *ws, double *out, int level);

/* ---- vector math, exposed for the accuracy tests --------------------------------------- */

/* out[i] = exp(in[i]) (fn 0) or log(in[i]) (fn 1) through the vector code of a level, in
 * the dtype's precision. count may be any size (the tail goes through a padded vector). */
void tsw__vmath_apply(int level, tsw_dtype dtype, int fn, const void *in, void *out,
                      int64_t count);
void tsw__vmath_sse2(tsw_dtype dtype, int fn, const void *in, void *out, int64_t count);
void tsw__vmath_avx2(tsw_dtype dtype, int fn, const void *in, void *out, int64_t count);

#endif
