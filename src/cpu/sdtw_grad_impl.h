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
 *   R is +inf (outside the window) are skipped, which is what keeps it NaN-free. It takes
 *   every window, Itakura's included (the fast kernel takes Sakoe-Chiba bands only, so
 *   cpu/sdtw_grad.c runs this one for Itakura).
 * fast_*: anti-diagonal by anti-diagonal in the window only, vectorised
 *   (sdtw_grad_diag_impl.h); the forward keeps the softmin S(i,j) of every window cell,
 *   the backward recomputes R = S + c exactly and takes every weight as
 *   exp((S(s) - R(i,j)) / gamma) <= 1. Arithmetic in double for float32 too.
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
                             T *gx, T *gy, T *gc, void *ws, tsw__cancel *cx)
{
    const int64_t w = m + 2;
    T *R = ws, *E = R + (n + 2) * w;
    const T inf = INF, gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma);
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
#define RR(i, j) R[(i) * w + (j)]
#define EE(i, j) E[(i) * w + (j)]
    for (int64_t k = 0; k < (n + 2) * w; ++k)
        R[k] = inf;
    RR(0, 0) = 0;
    for (int64_t i = 1; i <= n; ++i) {
        if (cx && tsw__cancel_poll(cx, i * m))
            return NAN;
        int64_t lo = 0, hi = m;
        if (!band.swap)
            tsw_band_range(&band, i - 1, &lo, &hi);
        for (int64_t j = lo + 1; j <= hi; ++j) {
            if (band.swap && !tsw_band_admits(&band, i - 1, j - 1))
                continue; /* Itakura: the band's rows run over b */
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
        if (cx && tsw__cancel_poll(cx, (n - i) * m))
            return NAN;
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

/* The anti-diagonal kernel (sdtw_grad_diag_impl.h), computed in double for both dtypes. */
static size_t TSW_F(sdg_fast_ws)(const tsw_params *p, int64_t dim, int64_t n, int64_t m)
{
    return tsw__sdg_diag_ws(p, dim, n, m, 0);
}

static double TSW_F(sdg_fast)(const tsw_params *p, int64_t dim, int64_t n, int64_t m,
                              const T *x, const T *y, const T *C, int64_t ldc, int want,
                              T alpha, T *gx, T *gy, T *gc, void *ws, tsw__cancel *cx)
{
    tsw__sdg_pair pr = {sizeof(T) == sizeof(float), want, 0, dim, n, m, ldc, x, y, C,
                        (double)alpha, gx, gy, gc, cx};
    return tsw__sdg_diag(p, &pr, ws);
}

#undef TSW_CAT_
#undef TSW_CAT
#undef TSW_F
