/*
 * One pair by anti-diagonals: the single-pair kernel of every measure, written once over
 * the simd_ops.h vocabulary and included once per ISA and precision (after simd_ops.h,
 * vecmath.h and vcost.h). Defines V_NAME(tsw__diag_pair) (see kernels.h).
 *
 * Why anti-diagonals: the row-by-row DP has a loop-carried chain D(i,j-1) -> D(i,j) of one
 * min and one add per cell, so it runs at the latency of that chain. The cells of one
 * anti-diagonal q = i + j depend only on the anti-diagonals q-1 and q-2, so VL of them are
 * computed per vector instruction and consecutive vectors are independent: the loop runs
 * at the throughput of the loads and arithmetic instead.
 *
 * Grid: the padded DP D(i, j), i in [0, N], j in [0, M] (N = rows = band.rows, M = cols),
 * row 0 and column 0 the boundary (D(0,0) = 0, the rest +inf); cell (i, j) >= (1, 1) is the
 * reference's cell of points a_i, b_j (1-based). Per anti-diagonal the admissible rows
 * form one interval (tsw__diag_rows_next), so only cells inside the window are computed.
 * Strips: the rows are swept in strips of S = TSW__STRIP_BYTES / sizeof(T) rows (256
 * doubles, 512 floats); inside a strip anti-diagonal by anti-diagonal, so that the three
 * rotating anti-diagonals (S + 2 + pad elements each) stay in L1 whatever the length. The
 * strip's last row is written to a row buffer (M + 1 elements) that the next strip reads
 * as its row 0 (element 0 of every anti-diagonal buffer).
 * Memory: those buffers plus the inputs rearranged so that the VL cells of one vector read
 * contiguous memory:
 *   A[k][i]   value k of point a_i (dim-major, i = 1..N; row 0 and the padding are 0)
 *   BR[k][t]  value k of point b_j with t = M - j (b reversed: along an anti-diagonal j
 *             falls as i rises, so cell (h, q - h) reads BR[.][M - q + h], rising with h)
 * and per measure: norms (cosine), deletion costs and timestamps (TWED), also in row order
 * for a and reversed order for b. A vector covering VL consecutive rows loads every operand
 * with one unaligned load. Lanes past the interval compute garbage from the zero padding;
 * their stores are overwritten right after the anti-diagonal, which keeps the invariant
 * that every position of a buffer outside its anti-diagonal's admissible interval holds
 * the out-of-window value (+inf: an out-of-window neighbour reads +inf, as in the
 * reference's rows).
 * Second values: TWED keeps three more anti-diagonals (and a second row buffer) with the
 * local match terms L(i,j) = |a_i - b_j|_p + nu |ta_i - tb_j|, since its match move adds
 * L(i,j) + L(i-1,j-1). Soft-DTW on AVX2 runs in the scaled linear domain of vecmath.h
 * (tsw_vsdtw_lin_cells): D holds the mantissas, L the binary exponents of exp(-R / gamma),
 * the out-of-window value is (1, TSW__LIN_ZERO), and the final value is -gamma log(m 2^k);
 * other ISAs use recurrence.h's softmin (the scalar one is the reference's own cell).
 *
 * Registers: per vector the VL cost lanes, the three neighbours and the result; the loop
 * over dim (generic dim) accumulates in one vector. dim == 1 is compiled separately so its
 * cost is one subtraction and one multiply (or abs) per vector. Soft-DTW computes DG_SOFT_K
 * vectors per step side by side (the cell is long; independent chains overlap).
 * Cell updates: the admissible cells of N x M, plus at most VL * DG_SOFT_K - 1 padding
 * lanes per anti-diagonal.
 */

/* Slack in front of the row-indexed arrays and anti-diagonals: element h lives at address
 * base + DG_SH + h, so the vectors that start at h = ((h0 + DG_SH) rounded down to VL) -
 * DG_SH store to aligned addresses (a misaligned store that crosses a cache line costs
 * twice); that start is >= 1 whenever h0 >= 1. */
#undef DG_SH
#define DG_SH (VL - 1)

#undef DG_LIN_ZERO
#if TSW__LIN
#define DG_LIN_ZERO TSW__LIN_ZERO
#else
#define DG_LIN_ZERO 0
#endif

/* The anti-diagonal sweep; meas, kc and dim are compile-time constants in each caller. */
TSW_FORCEINLINE T V_NAME(dg_sweep)(const int meas, const int kc, const int64_t dim, const int sk,
                                   const tsw__diag_layout *lay, T *ws, const tsw_band *band,
                                   const tsw_params *p, tsw__cancel *cx)
{
    const int64_t N = band->rows, M = band->cols;
    const int64_t S = TSW__STRIP_BYTES / (int64_t)sizeof(T);
    /* Soft-DTW runs sk vectors per step side by side (vecmath.h: one cell is a long chain
     * of dependent operations); the other measures one vector per step. */
    const int SK = meas == TSW__M_SOFT ? sk : 1;
    const int64_t STEP = (int64_t)VL * SK;
    const T inf = V_INF;
    const T gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma), nu = (T)p->nu,
            pp = (T)p->p;
    const T *A = ws + lay->a + DG_SH, *BR = ws + lay->br, *NA = ws + lay->na + DG_SH;
    const T *NBR = ws + lay->nbr, *DA = ws + lay->da + DG_SH, *DBR = ws + lay->dbr;
    const T *TA = ws + lay->ta + DG_SH, *TBR = ws + lay->tbr;
    const size_t sa = lay->sa, sb = lay->sb;
    const int64_t dlen = (int64_t)(lay->d[1] - lay->d[0]) - DG_SH;
    T *rowD = ws + lay->row, *rowL = ws + lay->lrow;
    T *D[3], *L[3];
    (void)gamma;
    (void)inv_gamma;
    (void)nu;
    (void)DA;
    (void)DBR;
    (void)TA;
    (void)TBR;
    for (int b = 0; b < 3; ++b) {
        D[b] = ws + lay->d[b] + DG_SH;
        L[b] = ws + lay->l[b] + DG_SH;
    }
    /* Soft-DTW on AVX2 runs in the scaled linear domain (vecmath.h, tsw_vsdtw_lin_cells):
     * D holds the mantissas m, L the binary exponents k of P = exp(-R / gamma), and a cell
     * outside the window is P = 0 = (1, TSW__LIN_ZERO) instead of +inf. */
    const int lin = meas == TSW__M_SOFT && TSW__LIN;
    const int has_w = meas == TSW__M_TWED || lin; /* the L buffers are in use */
    const T vzero = lin ? (T)1 : inf, wzero = lin ? (T)DG_LIN_ZERO : (T)0;
    (void)lin;
    /* The row above the first strip is the boundary row 0: D(0,0) = 0, D(0,j) = +inf
     * (linear: P(0,0) = 1 = (1, 0)); TWED's local term of row 0 only matters at L(0,0). */
    rowD[0] = lin ? (T)1 : (T)0;
    for (int64_t j = 1; j <= M; ++j)
        rowD[j] = vzero;
    if (has_w) {
        rowL[0] = 0;
        for (int64_t j = 1; j <= M; ++j)
            rowL[j] = wzero;
    }

    /* Strips of at most S rows: padded rows base+1 .. base+H, local row h = 1..H, local row
     * 0 is the row above (rowD). Anti-diagonal q of the strip holds the cells (h, q - h);
     * its buffer element h is D(base + h, q - h), element 0 the row above at column q.
     * A strip sweeps only the anti-diagonals [qa, qb] that hold admissible cells, so a band
     * of radius r costs O(N r), not O(N M): rowD is then valid at the columns [rv0, rv1]
     * only (the ones the previous strip wrote; outside them its last row is out of the
     * window, vzero, whatever rowD holds there). */
    int64_t rv0 = 0, rv1 = M;
#define TSW__DG_ROWD(q) ((q) >= rv0 && (q) <= rv1 ? rowD[q] : vzero)
#define TSW__DG_ROWL(q) ((q) >= rv0 && (q) <= rv1 ? rowL[q] : wzero)
    for (int64_t base = 0; base < N; base += S) {
        const int64_t H = N - base < S ? N - base : S;
        if (cx && tsw__cancel_poll(cx, base * M))
            return (T)NAN; /* cancelled: the caller returns TSW_ECANCELED */
        int64_t qa = H + M + 1, qb = 0;
        for (int64_t h = 1; h <= H; ++h) {
            int64_t lo, hi;
            tsw_band_range(band, base + h - 1, &lo, &hi);
            if (hi > lo) {
                qa = TSW_MIN(qa, h + lo + 1);
                qb = TSW_MAX(qb, h + hi);
            }
        }
        if (qa > qb) { /* no admissible cell: the strip's last row is all out of window */
            rv0 = 1;
            rv1 = 0;
            continue;
        }
        int64_t wlo[3] = {0, 0, 0}, whi[3] = {0, 0, 0}; /* interval each buffer holds */
        for (int b = 0; b < 3; ++b) {
            for (int64_t x = 0; x < dlen; ++x)
                D[b][x] = vzero;
            if (has_w) /* TWED: stale local terms only ever meet D = +inf */
                for (int64_t x = 0; x < dlen; ++x)
                    L[b][x] = wzero;
        }
        /* the two anti-diagonals before qa: only their row-above elements */
        for (int64_t q = qa - 2; q < qa; ++q)
            if (q >= 0) {
                D[q % 3][0] = TSW__DG_ROWD(q);
                if (has_w)
                    L[q % 3][0] = TSW__DG_ROWL(q);
            }
        tsw__diag_rows it;
        tsw__diag_rows_init(&it, band, base, base + H);
        for (int64_t q = qa; q <= qb; ++q) {
            const int cur = (int)(q % 3), p1 = (int)((q + 2) % 3), p2 = (int)((q + 1) % 3);
            T *Dk = D[cur];
            const T *Dk1 = D[p1], *Dk2 = D[p2];
            T *Lk = L[cur];
            const T *Lk1 = L[p1], *Lk2 = L[p2];
            (void)Lk1;
            (void)Lk2;
            Dk[0] = TSW__DG_ROWD(q);
            if (has_w)
                Lk[0] = TSW__DG_ROWL(q);
            /* unpadded cell (base + h - 1, q - h - 1) lies on global anti-diagonal
             * base + q - 2 */
            int64_t r0, r1;
            tsw__diag_rows_next(&it, base + q - 2, &r0, &r1);
            const int64_t h0 = r0 - base + 1, h1 = r1 - base + 1;
            const int64_t off = M - q; /* BR index of cell (h, q - h) is off + h */
            const T *Ab = A + base, *NAb = NA + base, *DAb = DA + base, *TAb = TA + base;
            /* Start at an aligned element (DG_SH): the lanes below h0 are garbage, reset
             * below like those past h1; h never goes below 1. */
            /* (Narrow intervals, a band's, start at h0 itself: the extra vector would be a
             * third of their work.) */
            const int64_t hs = h1 - h0 > 8 * VL ? ((h0 + DG_SH) & ~(int64_t)(VL - 1)) - DG_SH : h0;
            int64_t h = hs;
            for (; h < h1; h += STEP) {
                const int64_t t = off + h;
                VT dg = V_LOADU(Dk2 + h - 1), up = V_LOADU(Dk1 + h - 1), lf = V_LOADU(Dk1 + h);
                (void)dg;
                (void)up;
                (void)lf;
                if (meas == TSW__M_DTW) {
                    VT c = V_NAME(dg_cost)(kc, dim, Ab + h, sa, BR + t, sb, NAb + h, NBR + t, pp);
                    V_STOREU(Dk + h, TSW_DTW_CELL(c, dg, up, lf, V_MIN));
                } else if (meas == TSW__M_SOFT) {
                    /* SK vectors per step (see DG_SOFT_K); the loop step is VL * SK. */
                    VT c[TSW__KMAX], g[TSW__KMAX], u_[TSW__KMAX], l[TSW__KMAX], v[TSW__KMAX];
                    TSW__UNROLL for (int u = 0; u < SK; ++u) {
                        const int64_t hu = h + u * VL;
                        c[u] = V_NAME(dg_cost)(TSW__KC_SQE, dim, Ab + hu, sa, BR + t + u * VL,
                                               sb, NA, NBR, pp);
                        g[u] = V_LOADU(Dk2 + hu - 1);
                        u_[u] = V_LOADU(Dk1 + hu - 1);
                        l[u] = V_LOADU(Dk1 + hu);
                    }
#if TSW__LIN
                    VT gk[TSW__KMAX], uk[TSW__KMAX], lk[TSW__KMAX], vk[TSW__KMAX];
                    TSW__UNROLL for (int u = 0; u < SK; ++u) {
                        const int64_t hu = h + u * VL;
                        gk[u] = V_LOADU(Lk2 + hu - 1);
                        uk[u] = V_LOADU(Lk1 + hu - 1);
                        lk[u] = V_LOADU(Lk1 + hu);
                    }
                    V_NAME(tsw_vsdtw_lin_cells)(c, g, gk, u_, uk, l, lk, v, vk, inv_gamma, SK);
                    TSW__UNROLL for (int u = 0; u < SK; ++u)
                        V_STOREU(Lk + h + u * VL, vk[u]);
#else
                    V_NAME(tsw_vsdtw_cells)(c, g, u_, l, v, gamma, inv_gamma, SK);
#endif
                    TSW__UNROLL for (int u = 0; u < SK; ++u)
                        V_STOREU(Dk + h + u * VL, v[u]);
                } else { /* TWED */
                    VT lp = V_NAME(dg_cost)(kc, dim, Ab + h, sa, BR + t, sb, NA, NBR, pp);
                    VT adt = V_ABS(V_SUB(V_LOADU(TAb + h), V_LOADU(TBR + t)));
                    VT loc = TSW_TWED_LOCAL(lp, V_SET1(nu), adt, V_ADD, V_MUL);
                    VT match = TSW_TWED_MATCH(dg, loc, V_LOADU(Lk2 + h - 1), V_ADD);
                    VT dela = V_ADD(up, V_LOADU(DAb + h));
                    VT delb = V_ADD(lf, V_LOADU(DBR + t));
                    V_STOREU(Dk + h, TSW_TWED_CELL(dela, delb, match, V_MIN));
                    V_STOREU(Lk + h, loc);
                }
            }
            /* Restore +inf: the padding lanes past h1, and what the buffer held for q - 3
             * that this anti-diagonal did not overwrite (intervals only move forward). */
            const int64_t wend = h;
#define TSW__DG_RESET(x)                                                                      \
    do {                                                                                      \
        Dk[x] = vzero;                                                                        \
        if (lin)                                                                              \
            Lk[x] = wzero;                                                                    \
    } while (0)
            for (int64_t x = h1; x < wend; ++x)
                TSW__DG_RESET(x);
            for (int64_t x = hs; x < h0; ++x)
                TSW__DG_RESET(x);
            for (int64_t x = wlo[cur], e = TSW_MIN(whi[cur], h0); x < e; ++x)
                TSW__DG_RESET(x);
            for (int64_t x = TSW_MAX(wlo[cur], h1); x < whi[cur]; ++x)
                TSW__DG_RESET(x);
#undef TSW__DG_RESET
            wlo[cur] = h0;
            whi[cur] = h1;
            /* The strip's last row at column q - H is final: it becomes the row above the
             * next strip (rowD[q] was read above, before any write at a lower column). */
            if (q >= H) {
                rowD[q - H] = Dk[H];
                if (has_w)
                    rowL[q - H] = Lk[H];
            }
        }
        rv0 = TSW_MAX(qa, H) - H; /* the columns of the last row this strip wrote */
        rv1 = qb - H;
    }
    const T last = TSW__DG_ROWD(M), lastw = has_w ? TSW__DG_ROWL(M) : wzero;
#undef TSW__DG_ROWD
#undef TSW__DG_ROWL
    (void)lastw;
#if TSW__LIN
    if (lin)
        return (T)V_NAME(tsw__lin_value)(last, lastw, p->gamma);
#endif
    return last;
}

/* Rearranges the pair into the workspace (see the header comment), then sweeps. */
static T V_NAME(dg_prepare)(const tsw_params *p, int64_t dim, const tsw_band *band,
                            const T *a, const T *ta, const T *b, const T *tb,
                            const tsw__diag_layout *lay, T *ws, tsw__cancel *cx)
{
    const int64_t N = band->rows, M = band->cols;
    const size_t sa = lay->sa, sb = lay->sb, sn = sa - DG_SH; /* elements past the slack */
    T *A = ws + lay->a + DG_SH, *BR = ws + lay->br;
    for (int64_t k = 0; k < dim; ++k) {
        T *Ak = A + (size_t)k * sa, *Bk = BR + (size_t)k * sb;
        Ak[0] = 0;
        for (int64_t i = 1; i <= N; ++i)
            Ak[i] = a[(i - 1) * dim + k];
        for (size_t i = (size_t)N + 1; i < sn; ++i)
            Ak[i] = 0;
        for (int64_t t = 0; t < M; ++t)
            Bk[t] = b[(M - 1 - t) * dim + k];
        for (size_t t = (size_t)M; t < sb; ++t)
            Bk[t] = 0;
    }
    if (p->measure == TSW_DTW && p->cost == TSW_COST_COSINE) {
        T *NA = ws + lay->na + DG_SH, *NBR = ws + lay->nbr;
        for (size_t i = 0; i < sn; ++i)
            NA[i] = 0;
        for (size_t t = 0; t < sb; ++t)
            NBR[t] = 0;
        /* Norms accumulate in cost.h's order, so nx * ny is tsw_cost_cosine's divisor. */
        for (int64_t i = 1; i <= N; ++i) {
            T s = 0;
            for (int64_t k = 0; k < dim; ++k)
                s += a[(i - 1) * dim + k] * a[(i - 1) * dim + k];
            NA[i] = S_SQRT(s);
        }
        for (int64_t t = 0; t < M; ++t) {
            T s = 0;
            for (int64_t k = 0; k < dim; ++k)
                s += b[(M - 1 - t) * dim + k] * b[(M - 1 - t) * dim + k];
            NBR[t] = S_SQRT(s);
        }
    }
    if (p->measure == TSW_TWED) {
        T *DA = ws + lay->da + DG_SH, *DBR = ws + lay->dbr, *TA = ws + lay->ta + DG_SH;
        T *TBR = ws + lay->tbr;
        const T nu = (T)p->nu, lmbda = (T)p->lmbda, pp = (T)p->p;
        for (size_t i = 0; i < sn; ++i)
            DA[i] = TA[i] = 0;
        for (size_t t = 0; t < sb; ++t)
            DBR[t] = TBR[t] = 0;
        /* Point 0 is the zero vector at time 0 (tsw_lp with NULL); default times 1..n. */
        for (int64_t i = 1; i <= N; ++i) {
            const T *x = a + (i - 1) * dim, *xp = i > 1 ? x - dim : NULL;
            T t1 = ta ? ta[i - 1] : (T)i, t0 = i > 1 ? (ta ? ta[i - 2] : (T)(i - 1)) : 0;
            TA[i] = t1;
            DA[i] = TSW_TWED_DEL_COST(V_PNAME(tsw_lp)(x, xp, dim, pp), nu, t1 - t0, lmbda,
                                      TSW__S_ADD, TSW__S_MUL);
        }
        for (int64_t t = 0; t < M; ++t) {
            const int64_t j = M - t;
            const T *y = b + (j - 1) * dim, *yp = j > 1 ? y - dim : NULL;
            T t1 = tb ? tb[j - 1] : (T)j, t0 = j > 1 ? (tb ? tb[j - 2] : (T)(j - 1)) : 0;
            TBR[t] = t1;
            DBR[t] = TSW_TWED_DEL_COST(V_PNAME(tsw_lp)(y, yp, dim, pp), nu, t1 - t0, lmbda,
                                       TSW__S_ADD, TSW__S_MUL);
        }
    }

    /* Compile-time specialisations: measure x cost x (dim == 1 or any dim). */
    const int one = dim == 1;
    if (p->measure == TSW_SOFT_DTW)
    {
        /* short anti-diagonals: one vector per step, else DG_SOFT_K (padding lanes) */
        const int64_t diag = band->rows < band->cols ? band->rows : band->cols;
        if (diag < 4 * VL * DG_SOFT_K)
            return one ? V_NAME(dg_sweep)(TSW__M_SOFT, TSW__KC_SQE, 1, 1, lay, ws, band, p, cx)
                       : V_NAME(dg_sweep)(TSW__M_SOFT, TSW__KC_SQE, dim, 1, lay, ws, band, p, cx);
        return one ? V_NAME(dg_sweep)(TSW__M_SOFT, TSW__KC_SQE, 1, DG_SOFT_K, lay, ws, band, p, cx)
                   : V_NAME(dg_sweep)(TSW__M_SOFT, TSW__KC_SQE, dim, DG_SOFT_K, lay, ws, band,
                                      p, cx);
    }
    if (p->measure == TSW_TWED) {
        if (p->p == 2.0)
            return one ? V_NAME(dg_sweep)(TSW__M_TWED, TSW__KC_LP2, 1, 1, lay, ws, band, p, cx)
                       : V_NAME(dg_sweep)(TSW__M_TWED, TSW__KC_LP2, dim, 1, lay, ws, band, p, cx);
        if (p->p == 1.0)
            return one ? V_NAME(dg_sweep)(TSW__M_TWED, TSW__KC_LP1, 1, 1, lay, ws, band, p, cx)
                       : V_NAME(dg_sweep)(TSW__M_TWED, TSW__KC_LP1, dim, 1, lay, ws, band, p, cx);
#if TSW_V_ISA == 0
        return V_NAME(dg_sweep)(TSW__M_TWED, TSW__KC_LPP, dim, 1, lay, ws, band, p, cx);
#else
        return (T)NAN; /* the dispatcher sends other orders p to the scalar instantiation */
#endif
    }
    switch (p->cost) {
    case TSW_COST_EUCLIDEAN:
        return one ? V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_EUC, 1, 1, lay, ws, band, p, cx)
                   : V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_EUC, dim, 1, lay, ws, band, p, cx);
    case TSW_COST_ABS:
        return one ? V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_ABS, 1, 1, lay, ws, band, p, cx)
                   : V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_ABS, dim, 1, lay, ws, band, p, cx);
    case TSW_COST_COSINE:
        return one ? V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_COS, 1, 1, lay, ws, band, p, cx)
                   : V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_COS, dim, 1, lay, ws, band, p, cx);
    case TSW_COST_SQEUCLIDEAN:
    default:
        return one ? V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_SQE, 1, 1, lay, ws, band, p, cx)
                   : V_NAME(dg_sweep)(TSW__M_DTW, TSW__KC_SQE, dim, 1, lay, ws, band, p, cx);
    }
}

double V_NAME(tsw__diag_pair)(const tsw_params *p, int64_t dim, const tsw__pair *pr, void *ws)
{
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, pr->n,
                                  pr->m);
    const T *a = (const T *)pr->a, *b = (const T *)pr->b;
    const T *ta = (const T *)pr->ta, *tb = (const T *)pr->tb;
    if (band.swap) { /* Itakura: rows run over b (band.h); every measure is symmetric */
        const T *x = a;
        a = b;
        b = x;
        x = ta;
        ta = tb;
        tb = x;
    }
    tsw__diag_layout lay;
    if (tsw__diag_layout_make(p, dim, band.rows, band.cols, sizeof(T), &lay))
        return (double)NAN; /* unreachable: the caller sized ws with the same layout */
    return (double)V_NAME(dg_prepare)(p, dim, &band, a, ta, b, tb, &lay, (T *)ws, pr->cancel);
}
