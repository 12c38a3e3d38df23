/*
 * Soft-DTW values and gradients on the CPU, one precision (T, SFX, INF, EXP defined by
 * cpu/sdtw_grad.c, included once per precision). Two pair kernels with one contract:
 *
 *   value = R(n-1, m-1) of the pair, returned as double;
 *   local cost: squared Euclidean between x_i and y_j (C == NULL), or C[i * ldc + j];
 *   gradient (want != 0): E(i,j) = dR(n-1,m-1) / dc(i,j) (common/sdtw_grad.h), and
 *     C == NULL: gx[i] += alpha sum_j E(i,j) 2 (x_i - y_j), gy[j] -= alpha sum_i ...
 *                (accumulated, so that the divergence can add three pairs; gx may equal gy
 *                for a pair of a series with itself)
 *     C != NULL: gc[i * ldc + j] = alpha E(i,j) inside the window (the caller zeroes gc).
 *
 * ref_*: the plain reference, Cuturi and Blondel's Algorithm 1 and 2 as tslearn writes
 *   them, on full (n+2) x (m+2) matrices R and E with +inf/-inf borders; successors whose
 *   R is +inf (outside the window) are skipped, which is what keeps it NaN-free.
 * fast_*: row by row in the window only. The forward pass keeps S(i,j) = R(i,j) - c(i,j),
 *   the softmin, in a banded matrix (W = window width values per row); the backward pass
 *   recomputes c(i,j) (R = S + c rounds exactly as the forward's c + softmin did) and
 *   takes every weight as exp((S(s) - R(i,j)) / gamma) <= 1 from rolling rows of S and E
 *   with -inf / 0 sentinels at the window's edges, so its inner loops have no branches.
 *   The weights of a row (3 exponentials a cell, independent of E) are computed in one
 *   pass before the sequential E sweep, then the gradient in a third pass.
 */

#define TSW_CAT_(a, b) a##_##b
#define TSW_CAT(a, b) TSW_CAT_(a, b)
#define TSW_F(name) TSW_CAT(name, SFX)

static T TSW_F(sdg_cost)(const T *x, const T *y, int64_t dim, const T *C, int64_t ldc,
                         int64_t i, int64_t j)
{
    if (C)
        return C[i * ldc + j];
    return TSW_F(tsw_cost_sqeuclidean)(x + i * dim, y + j * dim, dim);
}

/* Gradient of one cell into gx/gy (series) or gc (cost matrix). */
static void TSW_F(sdg_scatter)(const T *x, const T *y, int64_t dim, int64_t ldc, int64_t i,
                               int64_t j, T e, T alpha, T *gx, T *gy, T *gc)
{
    if (gc) {
        gc[i * ldc + j] = alpha * e;
        return;
    }
    T g = 2 * alpha * e;
    for (int64_t k = 0; k < dim; ++k) {
        T d = x[i * dim + k] - y[j * dim + k];
        if (gx)
            gx[i * dim + k] += g * d;
        if (gy)
            gy[j * dim + k] -= g * d;
    }
}

/* ---- reference ------------------------------------------------------------------------- */

static size_t TSW_F(sdg_ref_ws)(int64_t n, int64_t m)
{
    size_t cells, bytes;
    if (tsw__mul_size((size_t)n + 2, (size_t)m + 2, &cells) ||
        tsw__mul_size(cells, 2 * sizeof(T), &bytes))
        return 0;
    return bytes;
}

static double TSW_F(sdg_ref)(const tsw_params *p, int64_t dim, int64_t n, int64_t m,
                             const T *x, const T *y, const T *C, int64_t ldc, int want, T alpha,
                             T *gx, T *gy, T *gc, void *ws)
{
    const int64_t w = m + 2;
    T *R = ws, *E = R + (n + 2) * w;
    const T inf = INF, gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma);
    tsw_band band = tsw_band_make(p->window, p->window_radius, 0, n, m);
#define RR(i, j) R[(i) * w + (j)]
#define EE(i, j) E[(i) * w + (j)]
    for (int64_t k = 0; k < (n + 2) * w; ++k)
        R[k] = inf;
    RR(0, 0) = 0;
    for (int64_t i = 1; i <= n; ++i) {
        int64_t lo, hi;
        tsw_band_range(&band, i - 1, &lo, &hi);
        for (int64_t j = lo + 1; j <= hi; ++j) {
            T c = TSW_F(sdg_cost)(x, y, dim, C, ldc, i - 1, j - 1);
            RR(i, j) = TSW_F(tsw_sdtw_cell)(c, RR(i - 1, j - 1), RR(i - 1, j), RR(i, j - 1),
                                           gamma, inv_gamma);
        }
    }
    double value = (double)RR(n, m);
    if (!want)
        return value;
    /* Algorithm 2: R's last row and column -inf except the corner R(n+1,m+1) = R(n,m), the
     * padded costs c(n+1, .) = c(., m+1) = 0, E(n+1,m+1) = 1. */
    for (int64_t k = 0; k < (n + 2) * w; ++k)
        E[k] = 0;
    for (int64_t j = 0; j <= m + 1; ++j)
        RR(n + 1, j) = -inf;
    for (int64_t i = 0; i <= n + 1; ++i)
        RR(i, m + 1) = -inf;
    RR(n + 1, m + 1) = RR(n, m);
    EE(n + 1, m + 1) = 1;
    for (int64_t i = n; i >= 1; --i) {
        for (int64_t j = m; j >= 1; --j) {
            T r = RR(i, j);
            if (r == inf)
                continue; /* outside the window: E = 0 */
            T e = 0;
            const int64_t si[3] = {i + 1, i, i + 1}, sj[3] = {j, j + 1, j + 1};
            for (int s = 0; s < 3; ++s) {
                T rs = RR(si[s], sj[s]);
                if (rs == inf)
                    continue; /* successor outside the window */
                T cs = (si[s] <= n && sj[s] <= m)
                           ? TSW_F(sdg_cost)(x, y, dim, C, ldc, si[s] - 1, sj[s] - 1)
                           : 0;
                e += EE(si[s], sj[s]) * EXP((rs - cs - r) * inv_gamma);
            }
            EE(i, j) = e;
            TSW_F(sdg_scatter)(x, y, dim, ldc, i - 1, j - 1, e, alpha, gx, gy, gc);
        }
    }
#undef RR
#undef EE
    return value;
}

/* ---- fast ------------------------------------------------------------------------------ */

/* Values per row of the banded S matrix. */
static int64_t TSW_F(sdg_width)(const tsw_band *b, int64_t m)
{
    if (b->kind != TSW_BAND_DIAG)
        return m;
    int64_t w = b->below + b->above + 1;
    return w < m ? w : m;
}

/* S: n * W values; 10 rolling rows of m + 2 (R prev/cur, S next/cur, E next/cur, three
 * weights, R of the row). */
static size_t TSW_F(sdg_fast_ws)(const tsw_params *p, int64_t n, int64_t m)
{
    tsw_band band = tsw_band_make(p->window, p->window_radius, 0, n, m);
    size_t cells, rows, bytes;
    if (tsw__mul_size((size_t)n, (size_t)TSW_F(sdg_width)(&band, m), &cells) ||
        tsw__mul_size((size_t)m + 2, 10, &rows) || cells > SIZE_MAX - rows ||
        tsw__mul_size(cells + rows, sizeof(T), &bytes))
        return 0;
    return bytes;
}

static double TSW_F(sdg_fast)(const tsw_params *p, int64_t dim, int64_t n, int64_t m,
                              const T *x, const T *y, const T *C, int64_t ldc, int want,
                              T alpha, T *gx, T *gy, T *gc, void *ws)
{
    tsw_band band = tsw_band_make(p->window, p->window_radius, 0, n, m);
    const int64_t W = TSW_F(sdg_width)(&band, m), L = m + 2;
    T *S = ws;
    T *rprev = S + (size_t)n * (size_t)W, *rcur = rprev + L;
    T *snext = rcur + L, *scur = snext + L, *enext = scur + L, *ecur = enext + L;
    T *wd = ecur + L, *wr = wd + L, *wg = wr + L, *rrow = wg + L;
    const T inf = INF, gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma);

    /* Forward. Rolling rows hold R(i, j) at index j + 1; index 0 is column -1. */
    rprev[0] = 0; /* R(-1, -1) */
    for (int64_t k = 1; k < L; ++k)
        rprev[k] = inf;
    for (int64_t i = 0; i < n; ++i) {
        int64_t lo, hi;
        tsw_band_range(&band, i, &lo, &hi);
        T *srow = S + (size_t)i * (size_t)W - lo;
        rcur[lo] = inf;
        const T *xi = x ? x + i * dim : NULL;
        for (int64_t j = lo; j < hi; ++j) {
            T s = TSW_F(tsw_softmin3)(rprev[j], rprev[j + 1], rcur[j], gamma, inv_gamma);
            T c = C ? C[i * ldc + j] : TSW_F(tsw_cost_sqeuclidean)(xi, y + j * dim, dim);
            srow[j] = s;
            rcur[j + 1] = c + s;
        }
        rcur[hi + 1] = inf;
        T *t = rprev;
        rprev = rcur;
        rcur = t;
    }
    const T rfinal = rprev[m];
    if (!want)
        return (double)rfinal;

    /* Backward. Row n is virtual: its only cell (n, m) is the diagonal successor of
     * (n-1, m-1) with S = R(n-1, m-1) and E = 1, which gives E(n-1, m-1) = 1. */
    {
        int64_t lo, hi;
        tsw_band_range(&band, n - 1, &lo, &hi);
        for (int64_t k = lo; k <= m + 1; ++k) {
            snext[k] = -inf;
            enext[k] = 0;
        }
        snext[m + 1] = rfinal;
        enext[m + 1] = 1;
    }
    for (int64_t i = n - 1; i >= 0; --i) {
        int64_t lo, hi;
        tsw_band_range(&band, i, &lo, &hi);
        const T *srow = S + (size_t)i * (size_t)W - lo;
        const T *xi = x ? x + i * dim : NULL;
        for (int64_t j = lo; j < hi; ++j)
            scur[j + 1] = srow[j];
        scur[hi + 1] = -inf;
        ecur[hi + 1] = 0;
        /* the weights of the row's three edges: independent cells (SIMD exp) */
        for (int64_t j = lo; j < hi; ++j) {
            T c = C ? C[i * ldc + j] : TSW_F(tsw_cost_sqeuclidean)(xi, y + j * dim, dim);
            rrow[j] = scur[j + 1] + c;
        }
        TSW_F(sdg_weights)(snext + lo + 1, scur + lo + 2, snext + lo + 2, rrow + lo, inv_gamma,
                           hi - lo, wd + lo, wr + lo, wg + lo);
        /* E, right to left (the right successor is in the same row) */
        T eright = 0;
        for (int64_t j = hi - 1; j >= lo; --j) {
            T e = TSW_SDTW_E_CELL(enext[j + 1], wd[j], eright, wr[j], enext[j + 2], wg[j],
                                  TSW__S_ADD, TSW__S_MUL);
            ecur[j + 1] = e;
            eright = e;
        }
        /* the gradient */
        if (gc) {
            for (int64_t j = lo; j < hi; ++j)
                gc[i * ldc + j] = alpha * ecur[j + 1];
        } else if (dim == 1) {
            const T xv = xi[0];
            T acc = 0;
            for (int64_t j = lo; j < hi; ++j) {
                T g = 2 * alpha * ecur[j + 1] * (xv - y[j]);
                acc += g;
                if (gy)
                    gy[j] -= g;
            }
            if (gx)
                gx[i] += acc;
        } else {
            for (int64_t j = lo; j < hi; ++j)
                TSW_F(sdg_scatter)(x, y, dim, ldc, i, j, ecur[j + 1], alpha, gx, gy, NULL);
        }
        /* sentinels for row i - 1: column lo - 1 is outside this row's window */
        scur[lo] = -inf;
        ecur[lo] = 0;
        T *t = snext;
        snext = scur;
        scur = t;
        t = enext;
        enext = ecur;
        ecur = t;
    }
    return (double)rfinal;
}

#undef TSW_CAT_
#undef TSW_CAT
#undef TSW_F
