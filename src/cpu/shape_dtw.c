/*
 * Shape DTW (TSW_SHAPE_DTW; Zhao and Itti 2018, as aeon's shape_dtw_distance computes it).
 * Each point's descriptor is taken from its neighbourhood of w = 2 reach + 1 points, the
 * series padded at each end with its end value: the values themselves (identity) or their
 * piecewise aggregate (paa_segments means of w / paa_segments points, tslearn's PAA), each
 * channel's in turn. DTW of the descriptors (squared Euclidean, the window on the series'
 * own lengths) fills the whole n x m matrix; the value is the squared Euclidean cost of the
 * series' own points summed along the path traced back from (n - 1, m - 1) by aeon's rule:
 * diagonal when it is below both others, else left when below up, else up, with aeon's
 * reads of row -1 and column -1 (numpy's last row and column), until a row or column
 * index leaves the grid. The rule needs the whole matrix: O(n m) memory a pair (aeon's too),
 * computed in double for either dtype. One plain kernel serves as reference and fast path.
 */
#include "../common/band.h"
#include "../internal.h"
#include "kernels.h"

#include <math.h>

/* Values per descriptor of a point of dim channels. */
static int64_t tsw__shape_width(const tsw_params *p, int64_t dim)
{
    return dim * (p->descriptor == TSW_SHAPE_PAA ? p->paa_segments : 2 * p->reach + 1);
}

size_t tsw__shape_ws_bytes(const tsw_params *p, int64_t dim, int64_t n, int64_t m)
{
    size_t desc, cells, total;
    if (tsw__mul_size((size_t)n + (size_t)m, (size_t)tsw__shape_width(p, dim), &desc) ||
        tsw__mul_size((size_t)n, (size_t)m, &cells) || desc > SIZE_MAX / 8 - cells ||
        tsw__mul_size(desc + cells, sizeof(double), &total))
        return 0;
    return total;
}

static double tsw__shape_val(tsw_dtype dt, const void *x, int64_t at)
{
    return dt == TSW_F32 ? (double)((const float *)x)[at] : ((const double *)x)[at];
}

/* The descriptors of x (len points, dim channels) into out (len x width). */
static void tsw__shape_describe(const tsw_params *p, tsw_dtype dt, int64_t dim, const void *x,
                                int64_t len, double *out)
{
    const int64_t r = p->reach, w = 2 * r + 1, width = tsw__shape_width(p, dim);
    const int paa = p->descriptor == TSW_SHAPE_PAA;
    const int64_t segs = paa ? p->paa_segments : w, sz = paa ? w / p->paa_segments : 1;
    for (int64_t i = 0; i < len; ++i)
        for (int64_t k = 0; k < dim; ++k) {
            double *o = out + i * width + k * segs;
            for (int64_t s = 0; s < segs; ++s) {
                double sum = 0;
                for (int64_t t = s * sz; t < (s + 1) * sz; ++t) {
                    int64_t at = i + t - r; /* the padded series' point */
                    at = at < 0 ? 0 : at >= len ? len - 1 : at;
                    sum += tsw__shape_val(dt, x, at * dim + k);
                }
                o[s] = paa ? sum / (double)sz : sum;
            }
        }
}

/* The descriptors' DTW matrix of a (n points) and b (m) into C, row i at C + i * W + o (o 0
 * and W = m: the bare matrix; o 1 and W = m + 1: the padded one, whose row 0 and column 0
 * the caller sets), descriptors in ws; 1 when cancel stopped it. */
static int tsw__shape_fill(const tsw_params *p, tsw_dtype dt, int64_t dim, const void *a,
                           int64_t n, const void *b, int64_t m, double *ws, double *C,
                           int64_t W, int64_t o, tsw__cancel *cancel)
{
    const int64_t width = tsw__shape_width(p, dim);
    double *da = ws, *db = da + n * width;
    tsw__shape_describe(p, dt, dim, a, n, da);
    tsw__shape_describe(p, dt, dim, b, m, db);
    const tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
#define TSW__SC(i, j) C[(i) * W + (j) + o]
    for (int64_t i = 0; i < n; ++i) {
        const double *x = da + i * width;
        for (int64_t j = 0; j < m; ++j) {
            double v = HUGE_VAL;
            if (tsw_band_admits(&band, i, j)) {
                const double *y = db + j * width;
                double c = 0;
                for (int64_t t = 0; t < width; ++t) {
                    const double d = x[t] - y[t];
                    c += d * d;
                }
                const double up = i > 0 ? TSW__SC(i - 1, j) : HUGE_VAL;
                const double left = j > 0 ? TSW__SC(i, j - 1) : HUGE_VAL;
                const double diag = i > 0 && j > 0 ? TSW__SC(i - 1, j - 1)
                                    : i == 0 && j == 0 ? 0.0
                                                       : HUGE_VAL;
                v = c + TSW_MIN(TSW_MIN(up, left), diag);
            }
            TSW__SC(i, j) = v;
        }
        if (cancel && (i & 63) == 63 && tsw__cancel_poll(cancel, (i + 1) * m))
            return 1;
    }
#undef TSW__SC
    return 0;
}

void tsw__shape_pair(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw__pair *pr,
                     void *ws, double *out)
{
    const int64_t n = pr->n, m = pr->m, width = tsw__shape_width(p, dim);
    double *C = (double *)ws + (n + m) * width;
    if (tsw__shape_fill(p, dt, dim, pr->a, n, pr->b, m, (double *)ws, C, m, 0, pr->cancel)) {
        *out = NAN;
        return;
    }
    if (isinf(C[n * m - 1])) { /* the window admits no alignment */
        *out = HUGE_VAL;
        return;
    }
    double total = 0;
    for (int64_t i = n - 1, j = m - 1; i >= 0 && j >= 0;) {
        double c = 0;
        for (int64_t k = 0; k < dim; ++k) {
            const double d = tsw__shape_val(dt, pr->a, i * dim + k) -
                             tsw__shape_val(dt, pr->b, j * dim + k);
            c += d * d;
        }
        total += c;
        const int64_t iu = i > 0 ? i - 1 : n - 1, jl = j > 0 ? j - 1 : m - 1; /* aeon's -1 */
        const double a = C[iu * m + jl], b = C[i * m + jl], up = C[iu * m + j];
        if (a < b && a < up) {
            --i;
            --j;
        } else if (b < up) {
            --j;
        } else {
            --i;
        }
    }
    *out = dt == TSW_F32 ? (double)(float)total : total;
}

int tsw__shape_path(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_series *a,
                    const tsw_series *b, int64_t *path, int64_t *length, const tsw_exec *ex)
{
    const int64_t n = a->length, m = b->length, width = tsw__shape_width(p, dim);
    size_t cells, desc, bytes;
    if (tsw__mul_size((size_t)n + 1, (size_t)m + 1, &cells) ||
        tsw__mul_size((size_t)n + (size_t)m, (size_t)width, &desc) ||
        desc > SIZE_MAX / 8 - cells || tsw__mul_size(cells + desc, sizeof(double), &bytes))
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
                        1, &cancel))
        rc = TSW_ECANCELED;
    else
        *length = tsw__min_return_path(mat, n, m, path);
    tsw__free(mat);
    return rc;
}
