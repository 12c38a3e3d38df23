/*
 * Shape DTW (TSW_SHAPE_DTW): common/shape.h defines it (descriptors, cell, aeon's trace).
 * tsw__shape_pair is the plain reference that defines correctness: every cell's cost summed
 * from the descriptors. tsw__shape_pair_fast gives the same matrix bit for bit from a ring
 * of squared-difference rows (shape_dtw_impl.h; AVX2 instance in shape_dtw_avx2.c), then
 * the same trace. Both hold the whole n x m matrix (aeon's trace reads it), in double for
 * either dtype; compiled without contracted multiply-adds (CMakeLists.txt), as the GPU's
 * kernel (cuda/shape_dtw.cu) is.
 */
#include "../common/band.h"
#include "../common/shape.h"
#include "../internal.h"
#include "kernels.h"

#include <math.h>
#include <string.h>

static tsw_shape_spec tsw__shape_spec(const tsw_params *p, int64_t dim)
{
    return tsw_shape_spec_make(p->descriptor == TSW_SHAPE_PAA, p->reach, p->paa_segments, dim);
}

/* Doubles of the fast fill's work beside the sequences: the ring, H rows of costs and H x
 * segs row pointers (shape_dtw_impl.h). */
static int tsw__shape_fast_work(const tsw_shape_spec *sp, int64_t m, size_t *out)
{
    const size_t LB = (size_t)tsw_shape_seq_len(sp, m), LBp = (LB + 16 + 7) & ~(size_t)7;
    const size_t R = (size_t)((sp->segs - 1) * sp->sz + TSW__SHAPE_H);
    size_t ring;
    if (tsw__mul_size(R * (size_t)sp->dim, LBp, &ring) ||
        ring > SIZE_MAX / 4 - TSW__SHAPE_H * ((size_t)m + 16 + (size_t)sp->segs))
        return 1;
    /* (a pointer fits in a double's 8 bytes) */
    *out = ring + TSW__SHAPE_H * ((size_t)m + 16 + (size_t)sp->segs);
    return 0;
}

/* Doubles before the matrix: the sequences and the fast fill's work (0: too many). */
static size_t tsw__shape_aux(const tsw_params *p, int64_t dim, int64_t n, int64_t m)
{
    const tsw_shape_spec sp = tsw__shape_spec(p, dim);
    size_t seqs, work;
    const size_t LA = (size_t)tsw_shape_seq_len(&sp, n), LB = (size_t)tsw_shape_seq_len(&sp, m);
    if (tsw__mul_size(LA + LB, (size_t)dim, &seqs) || tsw__shape_fast_work(&sp, m, &work) ||
        seqs > SIZE_MAX / 16 - work)
        return 0;
    return seqs + work;
}

size_t tsw__shape_ws_bytes(const tsw_params *p, int64_t dim, int64_t n, int64_t m)
{
    size_t aux = tsw__shape_aux(p, dim, n, m), cells, total;
    if (!aux || tsw__mul_size((size_t)n, (size_t)m, &cells) || cells > SIZE_MAX / 16 - aux ||
        tsw__mul_size(aux + cells, sizeof(double), &total))
        return 0;
    return total;
}

static double tsw__shape_seq(tsw_dtype dt, const tsw_shape_spec *sp, const void *x,
                             int64_t len, int64_t k, int64_t u)
{
    return dt == TSW_F32 ? tsw_shape_seq_f32(sp, (const float *)x, len, k, u)
                         : tsw_shape_seq_f64(sp, (const double *)x, len, k, u);
}

/* The sequences of x (len points) into out: channel k's tsw_shape_seq_len values at
 * out + k * that. */
static void tsw__shape_sequences(tsw_dtype dt, const tsw_shape_spec *sp, const void *x,
                                 int64_t len, double *out)
{
    const int64_t L = tsw_shape_seq_len(sp, len);
    for (int64_t k = 0; k < sp->dim; ++k)
        for (int64_t u = 0; u < L; ++u)
            out[k * L + u] = tsw__shape_seq(dt, sp, x, len, k, u);
}

/* The reference fill: the matrix of a (n points) and b (m) into C, row i at C + i * W + o
 * (o 0 and W = m: the bare matrix; o 1 and W = m + 1: the padded one, whose row 0 and
 * column 0 the caller sets), sequences at A and B; 1 when cancel stopped it. */
static int tsw__shape_fill_ref(const tsw_shape_spec *sp, const double *A, int64_t n,
                               const double *B, int64_t m, const tsw_band *band, double *C,
                               int64_t W, int64_t o, tsw__cancel *cancel)
{
    const int64_t LA = tsw_shape_seq_len(sp, n), LB = tsw_shape_seq_len(sp, m);
#define TSW__SC(i, j) C[(i) * W + (j) + o]
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
            double v = HUGE_VAL;
            if (tsw_band_admits(band, i, j)) {
                const double c = tsw_shape_cost(sp, A, LA, B, LB, i, j);
                const double up = i > 0 ? TSW__SC(i - 1, j) : HUGE_VAL;
                const double left = j > 0 ? TSW__SC(i, j - 1) : HUGE_VAL;
                const double diag = i > 0 && j > 0 ? TSW__SC(i - 1, j - 1)
                                    : i == 0 && j == 0 ? 0.0
                                                       : HUGE_VAL;
                v = tsw_shape_cell(c, up, left, diag);
            }
            TSW__SC(i, j) = v;
        }
        if (cancel && (i & 63) == 63 && tsw__cancel_poll(cancel, (i + 1) * m))
            return 1;
    }
#undef TSW__SC
    return 0;
}

#define TSW__SHAPE_SFX base
#include "shape_dtw_impl.h"
#undef TSW__SHAPE_SFX

#if TSW_X86
int tsw__shape_fill_fast_avx2(const tsw_shape_spec *sp, const double *A, int64_t n,
                              const double *B, int64_t m, const tsw_band *band, double *work,
                              double *C, int64_t W, int64_t o, tsw__cancel *cancel);
#endif

/* The matrix by the reference (level < 0) or the fast kernel at SIMD level `level`. */
static int tsw__shape_fill(const tsw_params *p, tsw_dtype dt, int64_t dim, const void *a,
                           int64_t n, const void *b, int64_t m, double *ws, double *C,
                           int64_t W, int64_t o, tsw__cancel *cancel, int level)
{
    const tsw_shape_spec sp = tsw__shape_spec(p, dim);
    double *A = ws, *B = A + tsw_shape_seq_len(&sp, n) * dim;
    double *work = B + tsw_shape_seq_len(&sp, m) * dim;
    tsw__shape_sequences(dt, &sp, a, n, A);
    tsw__shape_sequences(dt, &sp, b, m, B);
    const tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    if (level < 0)
        return tsw__shape_fill_ref(&sp, A, n, B, m, &band, C, W, o, cancel);
#if TSW_X86
    if (level >= 2 && tsw__cpu_level() >= 2)
        return tsw__shape_fill_fast_avx2(&sp, A, n, B, m, &band, work, C, W, o, cancel);
#endif
    return tsw__shape_fill_fast_base(&sp, A, n, B, m, &band, work, C, W, o, cancel);
}

static void tsw__shape_value(const tsw_params *p, tsw_dtype dt, int64_t dim,
                             const tsw__pair *pr, void *ws, double *out, int level)
{
    const int64_t n = pr->n, m = pr->m;
    double *C = (double *)ws + tsw__shape_aux(p, dim, n, m); /* after the sequences and work */
    if (tsw__shape_fill(p, dt, dim, pr->a, n, pr->b, m, (double *)ws, C, m, 0, pr->cancel,
                        level)) {
        *out = NAN;
        return;
    }
    const double total = dt == TSW_F32
                             ? tsw_shape_trace_f32(C, (const float *)pr->a, n,
                                                   (const float *)pr->b, m, dim)
                             : tsw_shape_trace_f64(C, (const double *)pr->a, n,
                                                   (const double *)pr->b, m, dim);
    *out = dt == TSW_F32 ? (double)(float)total : total;
}

void tsw__shape_pair(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw__pair *pr,
                     void *ws, double *out)
{
    tsw__shape_value(p, dt, dim, pr, ws, out, -1);
}

void tsw__shape_pair_fast(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw__pair *pr,
                          void *ws, double *out, int level)
{
    tsw__shape_value(p, dt, dim, pr, ws, out, level < 0 ? 0 : level);
}

int tsw__shape_path(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_series *a,
                    const tsw_series *b, int64_t *path, int64_t *length, const tsw_exec *ex)
{
    const int64_t n = a->length, m = b->length;
    size_t aux = tsw__shape_aux(p, dim, n, m), cells, bytes;
    if (!aux || tsw__mul_size((size_t)n + 1, (size_t)m + 1, &cells) ||
        cells > SIZE_MAX / 16 - aux || tsw__mul_size(cells + aux, sizeof(double), &bytes))
        return TSW_EOVERFLOW;
    double *mat = (double *)tsw__malloc(bytes);
    if (!mat) {
        tsw__set_detail("the alignment path's matrix needs %zu bytes", bytes);
        return TSW_ENOMEM;
    }
    for (int64_t j = 0; j <= m; ++j)
        mat[j] = j == 0 ? 0.0 : HUGE_VAL;
    for (int64_t i = 1; i <= n; ++i)
        mat[i * (m + 1)] = HUGE_VAL;
    tsw__cancel cancel;
    tsw__cancel_init(&cancel, ex, n * m);
    int rc = TSW_OK;
    if (tsw__shape_fill(p, dt, dim, a->values, n, b->values, m, mat + cells, mat + m + 1, m + 1,
                        1, &cancel, tsw__cpu_level()))
        rc = TSW_ECANCELED;
    else
        *length = tsw__min_return_path(mat, n, m, path);
    tsw__free(mat);
    return rc;
}
