/*
 * Soft-DTW value and gradient of one pair by anti-diagonals, written once over the
 * simd_ops.h vocabulary (double only: see sdtw_grad_diag.h) and included once per ISA after
 * simd_ops.h and vecmath.h. Defines V_NAME(tsw__sdg_diag).
 *
 * Why anti-diagonals: row by row, every cell waits for its left neighbour, a chain of two
 * exponentials and a logarithm per cell. The cells of anti-diagonal q = i + j depend only
 * on the anti-diagonals q - 1 and q - 2 (forward) or q + 1 and q + 2 (backward: the
 * successors (i+1, j), (i, j+1), (i+1, j+1)), so VL cells go in one vector and K vectors
 * side by side: the transcendental functions run at their throughput.
 *
 * Forward: R(i, j) = c(i, j) + S(i, j), S = softmin of (i-1, j-1), (i-1, j), (i, j-1).
 *   Three rotating buffers hold R of q, q - 1, q - 2 by row i (element i - 1 is row -1:
 *   R(-1, -1) = 0, the rest +inf); on AVX2 in the probability form they hold
 *   exp(-R / gamma) as mantissa and binary exponent instead (sdg_fwdl_step), like the
 *   value-only kernel. What the backward pass needs of every window cell goes to the
 *   workspace diagonal after diagonal (doff[q] its start, dr0[q] its first row):
 *   probability form (sdtw_grad_diag.h): the soft-argmin probabilities p of the cell's
 *     three predecessors, p_k = exp((S - R_k) / gamma) = the weights of the backward pass;
 *   softmin form (long pairs): S.
 * Backward (common/sdtw_grad.h): E(i, j) = sum over successors s of E(s) w(i,j -> s),
 *   w = exp((S(s) - R(i, j)) / gamma): the stored probability of (i, j) as predecessor of
 *   s (probability form; three multiply-adds a cell), or three exponentials with
 *   R(i, j) = S(i, j) + c(i, j) recomputed exactly as the forward did (softmin form: same
 *   cost code, same addition; rotating buffers of S with -inf outside the window).
 *   E by row in rotating buffers, 0 outside the window; the virtual cell (n, m) on
 *   diagonal n + m has S = R(n-1, m-1) and E = 1, which makes E(n-1, m-1) = 1.
 *   Gradient, squared Euclidean: gx_i += 2 alpha E (x_i - y_j), gy_j -= the same, in
 *   double accumulators laid out like the points (x by row, y reversed), so a vector of
 *   cells of one diagonal updates contiguous elements; cost-matrix form: gc(i, j) = alpha E.
 * Invariant of every rotating buffer: outside the rows its diagonal admits it holds the
 *   sentinel (+inf for R, -inf for S, 0 for E). A vector step computes up to VL - 1 lanes
 *   past the interval (garbage from the zero-padded points); those lanes and what the
 *   buffer held for the diagonal three steps away are reset right after.
 * Local costs: per diagonal into cd[] first (x by row and y reversed make them contiguous
 *   vector loads; the cost-matrix form reads its diagonal with stride ldc - 1).
 */

#undef SDG_K
#if TSW_V_ISA == 0
#define SDG_K 1
#else
#define SDG_K 4
#endif

/* softmin of (dg, up, lf) for K vectors (recurrence.h's staged form; +inf where all three
 * are +inf). The scalar ISA calls the reference's own tsw_softmin3. */
TSW_FORCEINLINE void V_NAME(sdg_softmin)(const VT *dg, const VT *up, const VT *lf, VT *out,
                                         T gamma, T inv_gamma, const int K)
{
#if TSW_V_ISA == 0
    TSW__KL out[u] = V_PNAME(tsw_softmin3)(dg[u], up[u], lf[u], gamma, inv_gamma);
#else
    VT lo[TSW__KMAX], em[TSW__KMAX], eh[TSW__KMAX];
    const VT g = V_SET1(gamma), ig = V_SET1(inv_gamma);
    TSW__KL
    {
        VT m01 = V_MIN(dg[u], up[u]);
        lo[u] = V_MIN(m01, lf[u]);
        em[u] = TSW_SOFTMIN3_EXPARG(lo[u], V_MAX(m01, lf[u]), ig, V_SUB, V_MUL);
        eh[u] = TSW_SOFTMIN3_EXPARG(lo[u], V_MAX(dg[u], up[u]), ig, V_SUB, V_MUL);
    }
    V_NAME(tsw_vexp_sm_k)(em, K);
    V_NAME(tsw_vexp_sm_k)(eh, K);
    TSW__KL out[u] = TSW_SOFTMIN3_SUM(em[u], eh[u], V_SET1((T)1), V_ADD);
    V_NAME(tsw_vlog_sm_k)(out, K);
    TSW__KL
    {
        VT v = TSW_SOFTMIN3_OUT(lo[u], out[u], g, V_SUB, V_MUL);
        out[u] = V_SEL(V_CMPEQ(lo[u], V_SET1(V_INF)), V_SET1(V_INF), v);
    }
#endif
}

/* Forward cells [i, i + K VL) of diagonal q (R into R0, S into sq + i). */
TSW_FORCEINLINE void V_NAME(sdg_fwd_step)(int64_t i, const T *R1, const T *R2, T *R0,
                                          const T *cd, T *sq, T gamma, T inv_gamma,
                                          const int K)
{
    VT dg[TSW__KMAX], up[TSW__KMAX], lf[TSW__KMAX], s[TSW__KMAX];
    TSW__KL
    {
        const int64_t h = i + u * VL;
        dg[u] = V_LOADU(R2 + h - 1);
        up[u] = V_LOADU(R1 + h - 1);
        lf[u] = V_LOADU(R1 + h);
    }
    V_NAME(sdg_softmin)(dg, up, lf, s, gamma, inv_gamma, K);
    TSW__KL
    {
        const int64_t h = i + u * VL;
        V_STOREU(sq + h, s[u]);
        V_STOREU(R0 + h, V_ADD(V_LOADU(cd + h), s[u]));
    }
}

/* Forward cells [i, i + K VL) of diagonal q, probabilities kept: R into R0, the
 * soft-argmin probabilities of the predecessors (diagonal, up, left) into pd, pu, pl + i:
 *   e_k = exp((lo - R_k) / gamma), sum = e_dg + e_up + e_lf (the reference's order),
 *   S = lo - gamma log(sum), p_k = e_k / sum = exp((S - R_k) / gamma),
 * the backward pass's weights. A cell without a finite predecessor (only padding lanes:
 * every window cell has one) gets R = +inf and probabilities 0, so that every stored value
 * is finite. */
TSW_FORCEINLINE void V_NAME(sdg_fwdp_step)(int64_t i, const T *R1, const T *R2, T *R0,
                                           const T *cd, T *pd, T *pu, T *pl, T gamma,
                                           T inv_gamma, const int K)
{
    VT lo[TSW__KMAX], e[3 * TSW__KMAX], sum[TSW__KMAX];
    const VT ig = V_SET1(inv_gamma), g = V_SET1(gamma);
    TSW__KL
    {
        const int64_t h = i + u * VL;
        VT dg = V_LOADU(R2 + h - 1), up = V_LOADU(R1 + h - 1), lf = V_LOADU(R1 + h);
        lo[u] = V_MIN(V_MIN(dg, up), lf);
        e[3 * u] = V_MUL(V_SUB(lo[u], dg), ig);
        e[3 * u + 1] = V_MUL(V_SUB(lo[u], up), ig);
        e[3 * u + 2] = V_MUL(V_SUB(lo[u], lf), ig);
    }
    V_NAME(tsw_vexp_sm_k)(e, 3 * K);
    TSW__KL sum[u] = V_ADD(V_ADD(e[3 * u], e[3 * u + 1]), e[3 * u + 2]);
    VT inv[TSW__KMAX];
    TSW__KL inv[u] = V_DIV(V_SET1((T)1), sum[u]);
    V_NAME(tsw_vlog_sm_k)(sum, K);
    TSW__KL
    {
        const int64_t h = i + u * VL;
        VM none = V_CMPEQ(lo[u], V_SET1(V_INF));
        VT sv = V_SUB(lo[u], V_MUL(g, sum[u]));
        V_STOREU(R0 + h, V_SEL(none, V_SET1(V_INF), V_ADD(V_LOADU(cd + h), sv)));
        V_STOREU(pd + h, V_SEL(none, V_ZERO(), V_MUL(e[3 * u], inv[u])));
        V_STOREU(pu + h, V_SEL(none, V_ZERO(), V_MUL(e[3 * u + 1], inv[u])));
        V_STOREU(pl + h, V_SEL(none, V_ZERO(), V_MUL(e[3 * u + 2], inv[u])));
    }
}

#if TSW__LIN
/*
 * The same in the scaled linear domain of vecmath.h (tsw_vsdtw_lin_cells, AVX2 only): a
 * cell holds P = exp(-R / gamma) as a mantissa M in [1, 2) and a binary exponent K (two
 * buffers each); out of the window P = 0 = (1, TSW__LIN_ZERO). The predecessors' terms
 * t_k = M_k 2^(K_k - Kmax) are exactly what the soft-argmin probabilities are made of:
 * p_k = t_k / (t_dg + t_up + t_lf); P = exp(-c / gamma) (t_dg + t_up + t_lf). No logarithm,
 * one exponential polynomial (of the cost) per cell. A cell without a finite predecessor
 * (padding lanes only) gets probabilities 1/3 and stays at the zero exponent.
 */
TSW_FORCEINLINE void V_NAME(sdg_fwdl_step)(int64_t i, const T *M1, const T *K1, const T *M2,
                                           const T *K2, T *M0, T *K0, const T *cd, T *pd,
                                           T *pu, T *pl, T inv_gamma, const int K)
{
    const VT shifter = V_SET1(6755399441055744.0), lowest = V_SET1(-1022.0);
    const VI mant = VI_SET1(0x000fffffffffffffLL), one = VI_SET1(0x3ff0000000000000LL);
    const VT two_p = V_SET1(4503599627370496.0), expo0 = V_SET1(4503599627370496.0 + 1023.0);
    const VT log2e = V_SET1(1.4426950408889634074), ln2_hi = V_SET1(-6.93147180369123816490e-01),
             ln2_lo = V_SET1(-1.90821492927058770002e-10);
    TSW__KL
    {
        const int64_t h = i + u * VL;
        /* exp(-c / gamma) = poly(r) 2^nn */
        VT x = V_MUL(V_LOADU(cd + h), V_SET1(-inv_gamma));
        VT nn = _mm256_round_pd(V_MUL(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        VT r = V_FMA(nn, ln2_lo, V_FMA(nn, ln2_hi, x));
        VT em = V_NAME(tsw__exp_poly)(r);
        VT mdg = V_LOADU(M2 + h - 1), kdg = V_LOADU(K2 + h - 1);
        VT mup = V_LOADU(M1 + h - 1), kup = V_LOADU(K1 + h - 1);
        VT mlf = V_LOADU(M1 + h), klf = V_LOADU(K1 + h);
        VT kmax = V_MAX(V_MAX(kdg, kup), klf);
#define TSW__SDG_TERM(mm, kk)                                                                 \
    VF_CAST(VI_ADD(VI_CAST(mm), VI_SLLI(VI_CAST(V_ADD(V_MAX(lowest, V_SUB((kk), kmax)), shifter)), \
                                        TSW__LIN_MANT)))
        VT tdg = TSW__SDG_TERM(mdg, kdg), tup = TSW__SDG_TERM(mup, kup);
        VT tlf = TSW__SDG_TERM(mlf, klf);
#undef TSW__SDG_TERM
        VT sum = TSW_SDTW_LIN_SUM(tdg, tup, tlf, V_ADD);
        VT inv = V_DIV(V_SET1(1.0), sum);
        V_STOREU(pd + h, V_MUL(tdg, inv));
        V_STOREU(pu + h, V_MUL(tup, inv));
        V_STOREU(pl + h, V_MUL(tlf, inv));
        VT mm = V_MUL(em, sum);
        /* renormalise mm (in [0.7, 8.5)) into [1, 2): its exponent moves into K */
        VI bits = VI_CAST(mm);
        VT e = V_SUB(VF_CAST(VI_OR(VI_SRLI(bits, TSW__LIN_MANT), VI_CAST(two_p))), expo0);
        V_STOREU(M0 + h, VF_CAST(VI_OR(VI_AND(bits, mant), one)));
        V_STOREU(K0 + h, V_ADD(V_ADD(kmax, nn), e));
    }
}
#endif

/* Backward cells [i, i + VL) of diagonal q from the probabilities: (i, j) is the up
 * predecessor of (i+1, j) (diagonal q + 1), the left one of (i, j+1) (q + 1) and the
 * diagonal one of (i+1, j+1) (q + 2); pu1/pl1 index diagonal q + 1 by row, pd2 q + 2. */
TSW_FORCEINLINE void V_NAME(sdg_bwdp_step)(int64_t i, const T *pu1, const T *pl1,
                                           const T *pd2, const T *E1, const T *E2, T *E0)
{
    VT e = TSW_SDTW_E_CELL(V_LOADU(E1 + i + 1), V_LOADU(pu1 + i + 1), V_LOADU(E1 + i),
                           V_LOADU(pl1 + i), V_LOADU(E2 + i + 1), V_LOADU(pd2 + i + 1), V_ADD,
                           V_MUL);
    V_STOREU(E0 + i, e);
}

/* Backward cells [i, i + K VL) of diagonal q: E into E0, S into S0. */
TSW_FORCEINLINE void V_NAME(sdg_bwd_step)(int64_t i, const T *sq, const T *cd, const T *S1,
                                          const T *S2, const T *E1, const T *E2, T *S0, T *E0,
                                          T inv_gamma, const int K)
{
    VT w[3 * TSW__KMAX], s[TSW__KMAX];
    const VT ig = V_SET1(inv_gamma);
    TSW__KL
    {
        const int64_t h = i + u * VL;
        s[u] = V_LOADU(sq + h);
        VT r = V_ADD(s[u], V_LOADU(cd + h));
        w[3 * u] = V_MUL(V_SUB(V_LOADU(S1 + h + 1), r), ig);     /* down (i+1, j) */
        w[3 * u + 1] = V_MUL(V_SUB(V_LOADU(S1 + h), r), ig);     /* right (i, j+1) */
        w[3 * u + 2] = V_MUL(V_SUB(V_LOADU(S2 + h + 1), r), ig); /* diagonal */
    }
    V_NAME(tsw_vexp_k)(w, 3 * K);
    TSW__KL
    {
        const int64_t h = i + u * VL;
        VT e = TSW_SDTW_E_CELL(V_LOADU(E1 + h + 1), w[3 * u], V_LOADU(E1 + h), w[3 * u + 1],
                               V_LOADU(E2 + h + 1), w[3 * u + 2], V_ADD, V_MUL);
        V_STOREU(E0 + h, e);
        V_STOREU(S0 + h, s[u]);
    }
}

/* Local costs of diagonal q, rows [r0, r1), into cd (row-indexed), plus zeros (cost form)
 * or padding-point costs up to the vector end. */
static void V_NAME(sdg_costs)(const tsw__sdg_pair *pr, const T *X, const T *YR, size_t sx,
                              size_t sy, int64_t q, int64_t r0, int64_t r1, T *cd)
{
    if (pr->C) {
        const int64_t step = pr->ldc - 1;
        if (pr->f32) {
            const float *c = (const float *)pr->C + r0 * pr->ldc + (q - r0);
            for (int64_t i = r0; i < r1; ++i, c += step)
                cd[i] = (T)*c;
        } else {
            const double *c = (const double *)pr->C + r0 * pr->ldc + (q - r0);
            for (int64_t i = r0; i < r1; ++i, c += step)
                cd[i] = *c;
        }
        for (int64_t i = r1; i < r1 + VL; ++i)
            cd[i] = 0;
        return;
    }
    const int64_t dim = pr->dim, t0 = pr->m - 1 - q; /* y reversed: cell (i, q - i) at t0 + i */
    for (int64_t i = r0; i < r1; i += VL) {
        VT acc = V_ZERO();
        for (int64_t k = 0; k < dim; ++k) {
            VT d = V_SUB(V_LOADU(X + (size_t)k * sx + i), V_LOADU(YR + (size_t)k * sy + t0 + i));
            acc = V_ADD(acc, V_MUL(d, d));
        }
        V_STOREU(cd + i, acc);
    }
}

/* Restore the sentinel v in buf outside [r0, r1): the lanes [r1, wend) past the interval
 * and what the buffer held for another diagonal ([*wlo, *whi)). */
static inline void V_NAME(sdg_reset)(T *buf, T v, int64_t r0, int64_t r1, int64_t wend,
                                     int64_t wlo, int64_t whi)
{
    for (int64_t x = r1; x < wend; ++x)
        buf[x] = v;
    for (int64_t x = wlo, e = TSW_MIN(whi, r0); x < e; ++x)
        buf[x] = v;
    for (int64_t x = TSW_MAX(wlo, r1); x < whi; ++x)
        buf[x] = v;
}

double V_NAME(tsw__sdg_diag)(const tsw_params *p, const tsw__sdg_pair *pr, void *ws)
{
    const int64_t n = pr->n, m = pr->m, dim = pr->dim, Q = n + m - 1; /* diagonals 0..Q-1 */
    tsw_band band = tsw_band_make(p->window, p->window_radius, 0, n, m);
    tsw__sdg_layout lay;
    const size_t W = band.kind == TSW_BAND_DIAG && band.below + band.above + 1 < m
                         ? (size_t)(band.below + band.above + 1)
                         : (size_t)m;
    const size_t band_cells = (size_t)n * W;
    if (tsw__sdg_layout_make(dim, n, m, band_cells, pr->softmin, &lay))
        return (double)NAN; /* unreachable: the caller sized ws with the same layout */
    const size_t P = TSW__SDG_P, sx = lay.sx, sy = lay.sy;
    T *w = (T *)ws;
    const int prob = lay.prob;
    T *Sst = w + lay.s, *PD = Sst + P;
    T *PU = prob ? PD + lay.sp : NULL, *PL = prob ? PU + lay.sp : NULL;
    int64_t *doff = (int64_t *)(w + lay.doff), *dr0 = (int64_t *)(w + lay.dr0);
    T *X = w + lay.x + P, *YR = w + lay.yr, *cd = w + lay.cd + P;
    T *B[6];
    for (int b = 0; b < 6; ++b)
        B[b] = w + lay.buf[b] + P;
    const int64_t lenb = (int64_t)(lay.sb - P); /* buffer elements from index 0 on */
    const T inf = V_INF, gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma);
    const int64_t STEP = (int64_t)VL * SDG_K;

    /* the points, dim-major, zero-padded (padding lanes compute finite garbage) */
    if (!pr->C) {
        for (int64_t k = 0; k < dim; ++k) {
            T *Xk = X - P + (size_t)k * sx, *Yk = YR + (size_t)k * sy;
            for (size_t t = 0; t < sx; ++t)
                Xk[t] = 0;
            for (size_t t = 0; t < sy; ++t)
                Yk[t] = 0;
            if (pr->f32) {
                const float *x = pr->x, *y = pr->y;
                for (int64_t i = 0; i < n; ++i)
                    Xk[P + i] = x[i * dim + k];
                for (int64_t t = 0; t < m; ++t)
                    Yk[t] = y[(m - 1 - t) * dim + k];
            } else {
                const double *x = pr->x, *y = pr->y;
                for (int64_t i = 0; i < n; ++i)
                    Xk[P + i] = x[i * dim + k];
                for (int64_t t = 0; t < m; ++t)
                    Yk[t] = y[(m - 1 - t) * dim + k];
            }
        }
    }

    /* ---- forward: diagonal q in B[(q + 2) % 3] (linear domain: mantissas there, binary
     * exponents in B[3 + (q + 2) % 3]) ---- */
#if TSW__LIN
    const int lin = prob;
    const T lzero = (T)TSW__LIN_ZERO;
#else
    const int lin = 0;
    const T lzero = 0;
#endif
    const T vzero = lin ? (T)1 : inf; /* out of the window: R = +inf, P = 0 = (1, lzero) */
    int64_t wlo[6], whi[6];
    for (int b = 0; b < 6; ++b) {
        for (int64_t x = -(int64_t)P; x < lenb; ++x)
            B[b][x] = b < 3 ? vzero : lzero;
        wlo[b] = whi[b] = 0;
    }
    B[0][-1] = lin ? 1 : 0; /* R(-1, -1) = 0 on diagonal -2, P = 1 = (1, 0) */
    B[3][-1] = 0;
    wlo[0] = -1;
    tsw__diag_rows it;
    tsw__diag_rows_init(&it, &band, 0, n);
    int64_t off = 0;
    for (int64_t q = 0; q < Q; ++q) {
        if ((q & 63) == 0 && pr->cancel && tsw__cancel_poll(pr->cancel, 0))
            return NAN; /* cancelled (the job reports TSW_ECANCELED) */
        const int cur = (int)((q + 2) % 3), p1 = (int)((q + 1) % 3), p2 = (int)(q % 3);
        int64_t r0, r1;
        tsw__diag_rows_next(&it, q, &r0, &r1);
        doff[q] = off;
        dr0[q] = r0;
        V_NAME(sdg_costs)(pr, X, YR, sx, sy, q, r0, r1, cd);
        int64_t i = r0;
        if (lin) {
#if TSW__LIN
            T *pd = PD + off - r0, *pu = PU + off - r0, *pl = PL + off - r0;
            for (; i + STEP <= r1; i += STEP)
                V_NAME(sdg_fwdl_step)(i, B[p1], B[3 + p1], B[p2], B[3 + p2], B[cur],
                                      B[3 + cur], cd, pd, pu, pl, inv_gamma, SDG_K);
            for (; i < r1; i += VL)
                V_NAME(sdg_fwdl_step)(i, B[p1], B[3 + p1], B[p2], B[3 + p2], B[cur],
                                      B[3 + cur], cd, pd, pu, pl, inv_gamma, 1);
#endif
        } else if (prob) {
            /* probabilities of cell (i, q - i) at pd[i], pu[i], pl[i] */
            T *pd = PD + off - r0, *pu = PU + off - r0, *pl = PL + off - r0;
            for (; i + STEP <= r1; i += STEP)
                V_NAME(sdg_fwdp_step)(i, B[p1], B[p2], B[cur], cd, pd, pu, pl, gamma,
                                      inv_gamma, SDG_K);
            for (; i < r1; i += VL)
                V_NAME(sdg_fwdp_step)(i, B[p1], B[p2], B[cur], cd, pd, pu, pl, gamma,
                                      inv_gamma, 1);
        } else {
            T *sq = Sst + off - r0; /* S of cell (i, q - i) at sq[i] */
            for (; i + STEP <= r1; i += STEP)
                V_NAME(sdg_fwd_step)(i, B[p1], B[p2], B[cur], cd, sq, gamma, inv_gamma,
                                     SDG_K);
            for (; i < r1; i += VL)
                V_NAME(sdg_fwd_step)(i, B[p1], B[p2], B[cur], cd, sq, gamma, inv_gamma, 1);
        }
        off += r1 - r0;
        V_NAME(sdg_reset)(B[cur], vzero, r0, r1, i, wlo[cur], whi[cur]);
        if (lin)
            V_NAME(sdg_reset)(B[3 + cur], lzero, r0, r1, i, wlo[cur], whi[cur]);
        wlo[cur] = r0;
        whi[cur] = r1;
    }
    /* Every stored probability the backward pass may read must be finite (its weight meets
     * E = 0 outside the window, and 0 * NaN is NaN): the diagonals are written in full,
     * plus the slack in front of and behind them. */
    if (prob) {
        T *arr[3] = {PD, PU, PL};
        for (int a = 0; a < 3; ++a)
            for (int64_t x = -(int64_t)P; x < 0; ++x)
                arr[a][x] = arr[a][off - x - 1] = 0;
    }
    doff[Q] = off; /* the empty diagonal n + m - 1 (backward reads) */
    dr0[Q] = n;
    const int last = (int)((Q - 1 + 2) % 3);
    T rfinal = B[last][n - 1];
#if TSW__LIN
    if (lin)
        rfinal = (T)V_NAME(tsw__lin_value)(B[last][n - 1], B[3 + last][n - 1], p->gamma);
#endif
    if (!pr->want)
        return (double)rfinal;

    /* ---- backward: diagonal q: S in B[q % 3], E in B[3 + q % 3] ---- */
    for (int b = 0; b < 6; ++b) {
        const T v = b < 3 ? -inf : 0;
        for (int64_t x = -(int64_t)P; x < lenb; ++x)
            B[b][x] = v;
        wlo[b] = whi[b] = 0;
    }
    {
        const int b = (int)((Q + 1) % 3); /* diagonal n + m: the virtual cell (n, m) */
        B[b][n] = rfinal;
        B[3 + b][n] = 1;
        wlo[b] = wlo[3 + b] = n;
        whi[b] = whi[3 + b] = n + 1;
    }
    T *GX = w + lay.gx + P, *GYR = w + lay.gyr;
    const int series = pr->C == NULL;
    if (series) {
        for (size_t t = 0; t < (size_t)dim * sx; ++t)
            GX[(ptrdiff_t)t - (ptrdiff_t)P] = 0;
        for (size_t t = 0; t < (size_t)dim * sy; ++t)
            GYR[t] = 0;
    }
    const T a2 = (T)(2 * pr->alpha);
    for (int64_t q = Q - 1; q >= 0; --q) {
        if ((q & 63) == 0 && pr->cancel && tsw__cancel_poll(pr->cancel, 0))
            return NAN;
        const int cur = (int)(q % 3), p1 = (int)((q + 1) % 3), p2 = (int)((q + 2) % 3);
        const int64_t r0 = dr0[q], r1 = r0 + (doff[q + 1] - doff[q]);
        T *S0 = B[cur], *E0 = B[3 + cur];
        int64_t i = r0;
        if (prob) {
            if (q == Q - 1) { /* (n-1, m-1): E = 1 */
                E0[n - 1] = 1;
                i = n;
            } else {
                const int64_t o1 = doff[q + 1] - dr0[q + 1], o2 = doff[q + 2] - dr0[q + 2];
                for (; i < r1; i += VL)
                    V_NAME(sdg_bwdp_step)(i, PU + o1, PL + o1, PD + o2, B[3 + p1], B[3 + p2],
                                          E0);
            }
        } else {
            const T *sq = Sst + doff[q] - r0;
            V_NAME(sdg_costs)(pr, X, YR, sx, sy, q, r0, r1, cd);
            for (; i + STEP <= r1; i += STEP)
                V_NAME(sdg_bwd_step)(i, sq, cd, B[p1], B[p2], B[3 + p1], B[3 + p2], S0, E0,
                                     inv_gamma, SDG_K);
            for (; i < r1; i += VL)
                V_NAME(sdg_bwd_step)(i, sq, cd, B[p1], B[p2], B[3 + p1], B[3 + p2], S0, E0,
                                     inv_gamma, 1);
            V_NAME(sdg_reset)(S0, -inf, r0, r1, i, wlo[cur], whi[cur]);
        }
        V_NAME(sdg_reset)(E0, 0, r0, r1, i, wlo[3 + cur], whi[3 + cur]);
        wlo[cur] = wlo[3 + cur] = r0;
        whi[cur] = whi[3 + cur] = r1;
        /* the gradient of the diagonal (E0 is 0 past r1 again, so whole vectors are safe) */
        if (!series) {
            const int64_t ldc = pr->ldc;
            if (pr->f32) {
                float *g = (float *)pr->gc + r0 * ldc + (q - r0);
                for (int64_t k = r0; k < r1; ++k, g += ldc - 1)
                    *g = (float)(pr->alpha * E0[k]);
            } else {
                double *g = (double *)pr->gc + r0 * ldc + (q - r0);
                for (int64_t k = r0; k < r1; ++k, g += ldc - 1)
                    *g = pr->alpha * E0[k];
            }
            continue;
        }
        const int64_t t0 = m - 1 - q;
        const VT va2 = V_SET1(a2);
        for (int64_t h = r0; h < r1; h += VL) {
            const VT ge = V_MUL(va2, V_LOADU(E0 + h));
            for (int64_t k = 0; k < dim; ++k) {
                T *gxk = GX + (size_t)k * sx + h, *gyk = GYR + (size_t)k * sy + t0 + h;
                VT g = V_MUL(ge, V_SUB(V_LOADU(X + (size_t)k * sx + h),
                                       V_LOADU(YR + (size_t)k * sy + t0 + h)));
                V_STOREU(gxk, V_ADD(V_LOADU(gxk), g));
                V_STOREU(gyk, V_SUB(V_LOADU(gyk), g));
            }
        }
    }
    if (series) {
        /* accumulate (gx may be gy: a series with itself takes both gradients) */
        for (int64_t k = 0; k < dim; ++k) {
            const T *gxk = GX + (size_t)k * sx, *gyk = GYR + (size_t)k * sy;
            if (pr->f32) {
                float *gx = pr->gx, *gy = pr->gy;
                if (gx)
                    for (int64_t i = 0; i < n; ++i)
                        gx[i * dim + k] = (float)((double)gx[i * dim + k] + gxk[i]);
                if (gy)
                    for (int64_t j = 0; j < m; ++j)
                        gy[j * dim + k] = (float)((double)gy[j * dim + k] + gyk[m - 1 - j]);
            } else {
                double *gx = pr->gx, *gy = pr->gy;
                if (gx)
                    for (int64_t i = 0; i < n; ++i)
                        gx[i * dim + k] += gxk[i];
                if (gy)
                    for (int64_t j = 0; j < m; ++j)
                        gy[j * dim + k] += gyk[m - 1 - j];
            }
        }
    }
    return (double)rfinal;
}
