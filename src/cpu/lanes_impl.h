/*
 * SIMD across pairs: VL pairs of equal lengths (n, m) in the VL lanes of every vector, for
 * every measure, written once over the simd_ops.h vocabulary and included once per ISA and
 * precision (after simd_ops.h, vecmath.h and vcost.h). Defines V_NAME(tsw__lanes_run)
 * (kernels.h). All lanes share (n, m), hence the window: the band test of a cell is one
 * scalar test for the whole vector, and a cell outside the window is +inf in every lane.
 * A run of count pairs is cut into groups of VL; a last group at least half full has its
 * spare lanes repeat its last pair (their results are dropped), a smaller remainder is
 * left to the single-pair kernel (the return value says how many pairs were done).
 *
 * Layout: each group of VL pairs is first interleaved lane-minor into the workspace
 * (tsw__lanes_layout): value k of point i of lane l at A[(i * dim + k) * VL + l], likewise
 * for b, the cosine norms, TWED's deletion costs and timestamps. Loading "point i of all VL
 * pairs" is then one aligned vector load.
 *
 * Schedule: row-major DP over the padded grid D(i, j) (row 0 / column 0 the boundary), in
 * strips of R rows. Inside a strip the rows are staggered by one column: at step s row r
 * (padded row i + r) computes column c = s - r. Every cell of step s then depends only on
 * step s - 1 (left: the same row; up: row r - 1) and s - 2 (diagonal: row r - 1), so the
 * R cells of a step are independent and R dependency chains (each one min and one add per
 * cell for DTW) run side by side instead of one. The row above the strip comes from a row
 * buffer ((m + 1) x VL), into which the strip's last row is written as it is computed.
 *
 * Registers, per row r of the strip: cur[r] (its value at the previous step, the next
 * cell's left), old[r] (the one before, row r + 1's diagonal), and the second values
 * lcur[r] / lold[r] (TWED's local match terms; soft-DTW's binary exponents, below); for
 * row 0, pu / pl (the row buffer values read at the previous step, its diagonal). Per step
 * one vector load of b's point per row (or dim of them), one load of the row buffer and
 * one store of the last row's cell.
 * Steps where every row is inside the window and the grid run without any test (the
 * strip's steady state); the few steps at the strip's ends and at window edges test each
 * row (one scalar comparison per row, the same for all lanes).
 * Soft-DTW computes the R cells of a step together: on AVX2 in the scaled linear domain
 * (vecmath.h, tsw_vsdtw_lin_cells: cur holds mantissas, lcur binary exponents of
 * exp(-R / gamma), one exponential per cell off the critical path, no logarithm), on SSE2
 * through recurrence.h's softmin (tsw_vsdtw_cells, exponentials and logarithms of the R
 * cells interleaved).
 * Rows per strip (LN_R_*) were tuned on the target machine (2-core AMD EPYC, AVX2): 3 for
 * DTW, 2 for TWED (larger strips spill registers), 3 for soft-DTW, 3 for the elastic family
 * (4 for ERP and EDR, 2 for MSM timed the same as 3).
 * The elastic family (TSW__LANES_FAMILY: family_lanes.c and family_lanes_avx2.c, compiled
 * without contracted multiply-adds) runs the same schedule with family.c's cells, in its
 * order, so each lane gives its bits: WDTW (the weight of |i - j| broadcast per cell), ADTW,
 * ERP (the points' gap costs interleaved like TWED's deletion costs), EDR and LCSS (the
 * squared distance against tsw_sq_bound: no root), MSM of one channel, DDTW and WDDTW on
 * the derivatives. Their boundaries: ERP's and EDR's row 0 in the row buffer, and each
 * row's D(i, 0) entering as its value at column 0 (bcol); LCSS's outside value is 0.
 * Cell updates per group: n x m per lane (the window's cells only), VL pairs at once.
 */

/* Rows per strip, per measure (compile-time constants; LN_RMAX sizes the arrays). */
#ifndef LN_R_DTW
#define LN_R_DTW 3
#endif
#ifndef LN_R_TWED
#define LN_R_TWED 2
#endif
#ifndef LN_R_SOFT
#define LN_R_SOFT 3
#endif
#ifndef LN_R_FAM
#define LN_R_FAM 3
#endif

#undef LN_RMAX
#define LN_RMAX 8
#undef LN_R_OF
#define LN_R_OF(meas)                                                                         \
    ((meas) == TSW__M_DTW    ? LN_R_DTW                                                       \
     : (meas) == TSW__M_TWED ? LN_R_TWED                                                      \
     : (meas) == TSW__M_SOFT ? LN_R_SOFT                                                      \
                             : LN_R_FAM)
/* The elastic family's measures (common/elastic.h). */
#undef LN_FAM
#define LN_FAM(meas) ((meas) >= TSW__M_WDTW)

/* The family's per-run constants: WDTW's weights of |i - j|, each lane's tsw_sq_bound of
 * its epsilon (EDR, LCSS), ADTW's penalty, MSM's c. */
typedef struct V_NAME(ln_famc) {
    const T *w;
    VT eps, pen, mc;
    int erp_abs; /* ERP, one channel: the group's points admit |x - y| for the root */
} V_NAME(ln_famc);

/* The value of a cell outside the window (its second value): D = +inf (TWED: local term
 * 0); for soft-DTW in the linear domain P = 0 as (m, k) = (1, TSW__LIN_ZERO). */
#undef LN_VZERO
#undef LN_WZERO
#if TSW__LIN
#define LN_VZERO(meas)                                                                        \
    ((meas) == TSW__M_SOFT ? V_SET1((T)1) : (meas) == TSW__M_LCSS ? V_ZERO() : V_SET1(V_INF))
#define LN_WZERO(meas) ((meas) == TSW__M_SOFT ? V_SET1((T)TSW__LIN_ZERO) : V_ZERO())
#else
#define LN_VZERO(meas) ((meas) == TSW__M_LCSS ? V_ZERO() : V_SET1(V_INF)) /* LCSS: S = 0 */
#define LN_WZERO(meas) V_ZERO()
#endif

/* MSM's dependent split cost (elastic.h's tsw_msm_split_dep, the same operations in the
 * same order; / 2 and / 4 as products by 0.5 and 0.25, the same values) of lane points x,
 * y, z of dim channels (channel k at [k * VL]), given dy = |y - x|^2 and dz = |z - x|^2
 * (the cell has one of them as its match cost). */
TSW_FORCEINLINE VT V_NAME(ln_msm_dep)(const T *x, const T *y, const T *z, const int64_t dim,
                                      const VT c, const VT dy, const VT dz)
{
    const VT half = V_SET1((T)0.5);
    VT diam = V_ZERO(), mid = V_ZERO();
    for (int64_t k = 0; k < dim; ++k) {
        const VT xk = V_LOAD(x + k * VL), yk = V_LOAD(y + k * VL), zk = V_LOAD(z + k * VL);
        const VT d = V_SUB(yk, zk), m = V_SUB(V_MUL(V_ADD(yk, zk), half), xk);
        diam = V_ADD(diam, V_MUL(d, d));
        mid = V_ADD(mid, V_MUL(m, m));
    }
    const VT far = V_SEL(V_CMPLT(dy, dz), V_ADD(c, dy), V_ADD(c, dz));
    return V_SEL(V_CMPLE(mid, V_MUL(diam, V_SET1((T)0.25))), c, far);
}

/* One step s of a strip: rows r < R at columns s - r. */
TSW_FORCEINLINE void V_NAME(ln_step)(const int meas, const int kc, const int64_t dim,
                                     const int checked, const int64_t s, const int rn,
                                     const int64_t *lo, const int64_t *hi, const int64_t M,
                                     const T *const *Ar, const T *const *NAr, const VT *dav,
                                     const VT *tav, const T *B, const T *NB, const T *DB,
                                     const T *TB, T *row, T *lrow, VT *cur, VT *old,
                                     VT *lcur, VT *lold, VT *pu, VT *pl, VT nu, T pp,
                                     T gamma, T inv_gamma, const int64_t i0, const VT *bcol,
                                     const VT *xav, const V_NAME(ln_famc) *fc)
{
    const int R = LN_R_OF(meas);
    const int lin = meas == TSW__M_SOFT && TSW__LIN; /* soft-DTW as (m, k), vecmath.h */
    const int has_w = meas == TSW__M_TWED || lin;    /* a second value per cell */
    const VT vzero = LN_VZERO(meas), wzero = LN_WZERO(meas);
    VT nw[LN_RMAX], nl[LN_RMAX], cs[LN_RMAX], ups[LN_RMAX], dgs[LN_RMAX], upk[LN_RMAX],
        dgk[LN_RMAX];
    int act[LN_RMAX];
    (void)upk;
    (void)dgk;
    (void)lin;
    /* Row 0's neighbours above come from the row buffer (read before this step's store). */
    VT up0 = vzero, lu0 = wzero;
    if (!checked || s <= M) {
        up0 = V_LOAD(row + s * VL);
        if (has_w)
            lu0 = V_LOAD(lrow + s * VL);
    }
    int edge[LN_RMAX]; /* the family: row r stands at its boundary column (D(i, 0)) */
    (void)edge;
    (void)i0;
    (void)bcol;
    (void)fc;
    TSW__UNROLL for (int r = 0; r < R; ++r) {
        int64_t c = s - r;
        act[r] = checked ? (r < rn && c >= lo[r] + 1 && c <= hi[r]) : 1;
        if (LN_FAM(meas))
            edge[r] = checked && c == 0;
        if (checked) /* keep loads inside the arrays for inactive rows */
            c = c < 1 ? 1 : (c > M ? M : c);
        const size_t pc = (size_t)(c - 1); /* 0-based point of b */
        const VT up = r ? cur[r - 1] : up0, dg = r ? old[r - 1] : *pu, lf = cur[r];
        /* one channel: the row's point held for the strip (xav; read through Ar[r] at
         * every step, it was reloaded after each row store, which may alias it) */
        const T *xr = dim == 1 ? (const T *)&xav[r] : Ar[r];
        if (meas == TSW__M_DTW) {
            VT cc = V_NAME(dg_cost)(kc, dim, xr, VL, B + pc * (size_t)dim * VL, VL, NAr[r],
                                    NB + pc * VL, pp);
            nw[r] = TSW_DTW_CELL(cc, dg, up, lf, V_MIN);
        } else if (meas == TSW__M_TWED) {
            VT lp = V_NAME(dg_cost)(kc, dim, xr, VL, B + pc * (size_t)dim * VL, VL, NAr[r],
                                    NB, pp);
            VT adt = V_ABS(V_SUB(tav[r], V_LOAD(TB + pc * VL)));
            VT loc = TSW_TWED_LOCAL(lp, nu, adt, V_ADD, V_MUL);
            VT match = TSW_TWED_MATCH(dg, loc, r ? lold[r - 1] : *pl, V_ADD);
            VT dela = V_ADD(up, dav[r]);
            VT delb = V_ADD(lf, V_LOAD(DB + pc * VL));
            nw[r] = TSW_TWED_CELL(dela, delb, match, V_MIN);
            nl[r] = loc;
        } else if (meas == TSW__M_WDTW) {
            /* |i - j| of the padded (1-based) row and column, as family.c's */
            const int64_t k = i0 + (r < rn ? r : rn - 1) - c;
            VT cc = V_NAME(dg_cost)(TSW__KC_SQE, dim, xr, VL, B + pc * (size_t)dim * VL, VL,
                                    NAr[r], NB, pp);
            nw[r] = TSW_DTW_CELL(V_MUL(cc, V_SET1(fc->w[k < 0 ? -k : k])), dg, up, lf, V_MIN);
        } else if (meas == TSW__M_ADTW) {
            VT cc = V_NAME(dg_cost)(TSW__KC_SQE, dim, xr, VL, B + pc * (size_t)dim * VL, VL,
                                    NAr[r], NB, pp);
            nw[r] = TSW_ADTW_CELL(cc, dg, up, lf, fc->pen, V_MIN, V_ADD);
        } else if (meas == TSW__M_ERP) {
            /* kc: TSW__KC_EUC, or TSW__KC_ABS where |x - y| is the root's bits (fam_dispatch) */
            VT e = V_NAME(dg_cost)(kc, dim, xr, VL, B + pc * (size_t)dim * VL, VL, NAr[r], NB,
                                   pp);
            nw[r] = TSW_EDIT_CELL(V_ADD(dg, e), V_ADD(up, dav[r]),
                                  V_ADD(lf, V_LOAD(DB + pc * VL)), V_MIN);
        } else if (meas == TSW__M_EDR || meas == TSW__M_LCSS) {
            /* the squared distance against tsw_sq_bound (fc->eps): the match test of the
             * root against epsilon, exactly, without the root */
            VT sq = V_NAME(dg_cost)(TSW__KC_SQE, dim, xr, VL, B + pc * (size_t)dim * VL, VL,
                                    NAr[r], NB, pp);
            const VT one = V_SET1((T)1);
            /* EDR: TSW_EDIT_CELL with one add for both gaps (rounding is monotone, so
             * min(u, l) + 1 is the lesser of u + 1 and l + 1, bit for bit) */
            if (meas == TSW__M_EDR)
                nw[r] = V_MIN(V_ADD(dg, TSW_EDR_SUBST(sq, fc->eps, V_ZERO(), one, V_CMPLT, V_SEL)),
                              V_ADD(V_MIN(up, lf), one));
            else
                nw[r] = TSW_LCSS_CELL(sq, fc->eps, dg, up, lf, one, V_CMPLT, V_SEL, V_MAX,
                                      V_ADD);
        } else if (meas == TSW__M_MSMD) {
            /* the dependent form: points of dim channels; the point before as above */
            const size_t ps = (size_t)dim * VL;
            const T *x = Ar[r], *y = B + pc * ps;
            const T *xp = x - (i0 + (r < rn ? r : rn - 1) > 1 ? ps : 0);
            const T *yp = y - (pc > 0 ? ps : 0);
            /* squared distances: |y - x|^2 is the match cost and one term of each split
             * ((y - x)^2 and (x - y)^2 are the same bits) */
            const VT cc = V_NAME(dg_cost)(TSW__KC_SQE, dim, x, VL, y, VL, NAr[r], NB, pp);
            const VT dxp = V_NAME(dg_cost)(TSW__KC_SQE, dim, xp, VL, x, VL, NAr[r], NB, pp);
            const VT dyp = V_NAME(dg_cost)(TSW__KC_SQE, dim, yp, VL, y, VL, NAr[r], NB, pp);
            const VT su = V_NAME(ln_msm_dep)(x, xp, y, dim, fc->mc, dxp, cc);
            const VT sl = V_NAME(ln_msm_dep)(y, x, yp, dim, fc->mc, cc, dyp);
            nw[r] = TSW_EDIT_CELL(V_ADD(dg, cc), V_ADD(up, su), V_ADD(lf, sl), V_MIN);
        } else if (meas == TSW__M_MSM) {
            /* one channel: the splits by TSW_MSM_SPLIT_K from the row's |x_i - x_{i-1}|
             * (dav) and the column's |y_j - y_{j-1}| (DB), with d = x_i - y_j signed by the
             * row's and the column's flips (tav, TB: ln_msm_neigh), tsw_msm_split's bits
             * (elastic.h). Row 1 and column 1 have the neighbour 0 (the split is c, which
             * then meets D(0, j) or D(i, 0) = +inf). */
            const VT d = V_SUB(xav[r], V_LOAD(B + pc * VL));
            const VT su = TSW_MSM_SPLIT_K(dav[r], V_SIGNX(d, tav[r]), fc->mc, V_MIN, V_MAX,
                                          V_ADD, V_ZERO());
            const VT sl = TSW_MSM_SPLIT_K(V_LOAD(DB + pc * VL), V_SIGNX(d, V_LOAD(TB + pc * VL)),
                                          fc->mc, V_MIN, V_MAX, V_ADD, V_ZERO());
            nw[r] = TSW_EDIT_CELL(V_ADD(dg, V_ABS(d)), V_ADD(up, su), V_ADD(lf, sl), V_MIN);
        } else {
            cs[r] = V_NAME(dg_cost)(TSW__KC_SQE, dim, xr, VL, B + pc * (size_t)dim * VL, VL,
                                    NAr[r], NB, pp);
            ups[r] = up;
            dgs[r] = dg;
            upk[r] = r ? lcur[r - 1] : lu0; /* lin: the binary exponents k */
            dgk[r] = r ? lold[r - 1] : *pl;
        }
    }
    if (meas == TSW__M_SOFT) {
#if TSW__LIN
        V_NAME(tsw_vsdtw_lin_cells)(cs, dgs, dgk, ups, upk, cur, lcur, nw, nl, inv_gamma, R);
#else
        V_NAME(tsw_vsdtw_cells)(cs, dgs, ups, cur, nw, gamma, inv_gamma, R);
#endif
    }
    if (checked)
        TSW__UNROLL for (int r = 0; r < R; ++r)
            if (!act[r]) {
                /* the family's boundary column D(i, 0) enters as row r's value at column 0:
                 * its next cell's left, row r + 1's diagonal */
                nw[r] = LN_FAM(meas) && edge[r] ? bcol[r] : vzero;
                nl[r] = wzero;
            }
    TSW__UNROLL for (int r = 0; r < R; ++r) {
        old[r] = cur[r];
        cur[r] = nw[r];
        if (has_w) {
            lold[r] = lcur[r];
            lcur[r] = nl[r];
        }
    }
    *pu = up0;
    *pl = lu0;
    /* The strip's last row, column s - (rn - 1), is final: store it for the next strip. */
    if (!checked) {
        const int64_t cb = s - (R - 1);
        V_STORE(row + cb * VL, cur[R - 1]);
        if (has_w)
            V_STORE(lrow + cb * VL, lcur[R - 1]);
    } else {
        const int64_t cb = s - (rn - 1);
        if (cb >= 1 && cb <= M)
            TSW__UNROLL for (int r = 0; r < R; ++r)
                if (r == rn - 1) {
                    V_STORE(row + cb * VL, cur[r]);
                    if (has_w)
                        V_STORE(lrow + cb * VL, lcur[r]);
                }
    }
}

/* eab: whether a cell of value d can lie on a lane's path ending at or below et: d plus the
 * larger of what the rows after it (rb) and the columns after it (cb) add is at most et in
 * some lane. */
TSW_FORCEINLINE int V_NAME(ln_live)(const VT d, const VT rb, const T *cb, const VT et)
{
    return V_ANY(V_CMPLE(V_ADD(d, V_MAX(rb, V_LOAD(cb))), et));
}

/* eab: whether the strip's cells at step s (cur[r], padded row i + r, column s - r) and at
 * step s - 1 (old[r], column s - r - 1; the last row's not needed) are dead in every lane:
 * D plus the larger of the rows' and the columns' bounds past the cell above ethr. */
TSW_FORCEINLINE int V_NAME(ln_dead)(const int R, const VT *cur, const VT *old,
                                    const T *eab, const int64_t i, const int64_t N,
                                    const int64_t s, const T ethr)
{
    const T *ecb = eab + (size_t)(N + 1) * VL;
    const VT et = V_SET1(ethr);
    TSW__UNROLL for (int r = 0; r < R; ++r) {
        const VT rb = V_LOAD(eab + (size_t)(i + r) * VL);
        const int64_t c = s - r;
        if (V_NAME(ln_live)(cur[r], rb, ecb + (size_t)c * VL, et) ||
            (r < R - 1 && V_NAME(ln_live)(old[r], rb, ecb + (size_t)(c - 1) * VL, et)))
            return 0;
    }
    return 1;
}

/* The DP of one group; the result D(N, M) of each lane is left in row[M * VL + lane].
 * eab (DTW, or NULL): early abandoning, as the nearest-neighbour search asks it (cpu/knn.c):
 * eab[t * VL + lane] bounds what the rows t .. N-1 (0-based) add to any path of that lane,
 * eab[(N + 1 + c) * VL + lane] what the columns after padded column c add; after each strip,
 * once every lane's least cell of the strip's last row plus the larger of the two bounds
 * exceeds ethr, the sweep stops and returns 1 (no lane can end at or below ethr); else 0. */
TSW_FORCEINLINE int V_NAME(ln_sweep)(const int meas, const int kc, const int64_t dim,
                                     const tsw__lanes_layout *lay, T *ws,
                                     const tsw_band *band, const tsw_params *p, const T *eab,
                                     T ethr, const V_NAME(ln_famc) *fc)
{
    const int R = LN_R_OF(meas);
    const int64_t N = band->rows, M = band->cols;
    const T *A = ws + lay->a, *B = ws + lay->b, *NA = ws + lay->na, *NB = ws + lay->nb;
    const T *DA = ws + lay->da, *DB = ws + lay->db, *TA = ws + lay->ta, *TB = ws + lay->tb;
    T *row = ws + lay->row, *lrow = ws + lay->lrow;
    const VT nu = V_SET1((T)p->nu);
    const T pp = (T)p->p, gamma = (T)p->gamma, inv_gamma = (T)(1.0 / p->gamma);
    const int lin = meas == TSW__M_SOFT && TSW__LIN;
    const int has_w = meas == TSW__M_TWED || lin;
    const VT vzero = LN_VZERO(meas), wzero = LN_WZERO(meas);
    /* the family's constants as a local copy: the row stores cannot alias it, so its
     * vectors are not reloaded after each of them */
    V_NAME(ln_famc) fcl;
    if (fc)
        fcl = *fc;
    const V_NAME(ln_famc) *fcp = fc ? &fcl : NULL;

    /* Row 0: D(0,0) = 0, D(0,j) = +inf (linear soft-DTW: P(0,0) = 1 = (1, 0), P(0,j) = 0);
     * TWED's local terms of row 0: only L(0,0) = 0. */
    V_STORE(row, lin ? V_SET1((T)1) : V_ZERO());
    for (int64_t c = 1; c <= M; ++c)
        V_STORE(row + c * VL, vzero);
    VT colacc = V_ZERO(); /* ERP: D(i, 0), the sum of the row points' gap costs */
    if (meas == TSW__M_ERP || meas == TSW__M_EDR) {
        /* the family's boundary row as far as the first row reads it (family.c): ERP the
         * column points' gap costs summed, EDR the column's index */
        int64_t lo0, hi0;
        tsw_band_range(band, 0, &lo0, &hi0);
        VT acc = V_ZERO();
        for (int64_t c = 1; c <= hi0 && c <= M; ++c) {
            if (meas == TSW__M_ERP)
                acc = V_ADD(acc, V_LOAD(DB + (size_t)(c - 1) * VL));
            V_STORE(row + c * VL, meas == TSW__M_ERP ? acc : V_SET1((T)c));
        }
    }
    if (has_w) {
        V_STORE(lrow, V_ZERO());
        for (int64_t c = 1; c <= M; ++c)
            V_STORE(lrow + c * VL, wzero);
    }
    int64_t plo = 0, phi = 0; /* the row buffer may be finite only at columns (plo, phi] */
    /* eab: the columns (0-based) below cut hold no cell through which a lane can end at or
     * below ethr, in every row from here on (below) */
    int64_t cut = 0;
    int64_t la = 0; /* eab: the last live column (padded) of the row above the strip */

    for (int64_t i = 1; i <= N; i += R) {
        const int rn = (int)(N - i + 1 < R ? N - i + 1 : R);
        int64_t lo[LN_RMAX], hi[LN_RMAX];
        const T *Ar[LN_RMAX], *NAr[LN_RMAX];
        VT dav[LN_RMAX], tav[LN_RMAX], cur[LN_RMAX], old[LN_RMAX], lcur[LN_RMAX], lold[LN_RMAX];
        VT xav[LN_RMAX]; /* one channel: each row's point x_i */
        VT bcol[LN_RMAX]; /* the family: each row's D(i, 0) where its window holds column 0 */
        TSW__UNROLL for (int r = 0; r < R; ++r) {
            /* rows past N (last strip) stay inactive; their pointers stay in bounds */
            const int64_t pi = i - 1 + (r < rn ? r : rn - 1);
            lo[r] = hi[r] = 0;
            if (r < rn) {
                tsw_band_range(band, pi, &lo[r], &hi[r]);
                lo[r] = lo[r] < cut ? cut : lo[r];
            }
            Ar[r] = A + (size_t)pi * (size_t)dim * VL;
            NAr[r] = NA + (size_t)pi * VL;
            dav[r] = meas == TSW__M_TWED || meas == TSW__M_ERP || meas == TSW__M_MSM
                         ? V_LOAD(DA + (size_t)pi * VL)
                         : V_ZERO();
            tav[r] = meas == TSW__M_TWED || meas == TSW__M_MSM ? V_LOAD(TA + (size_t)pi * VL)
                                                                : V_ZERO();
            xav[r] = dim == 1 ? V_LOAD(Ar[r]) : V_ZERO();
            cur[r] = old[r] = vzero;
            lcur[r] = lold[r] = wzero;
            bcol[r] = vzero;
            if (r < rn && (meas == TSW__M_ERP || meas == TSW__M_EDR)) {
                if (meas == TSW__M_ERP) /* (summed for every row, as family.c's) */
                    colacc = V_ADD(colacc, dav[r]);
                if (lo[r] == 0)
                    bcol[r] = meas == TSW__M_ERP ? colacc : V_SET1((T)(i + r));
            }
        }
        cur[0] = bcol[0]; /* row 0's left neighbour at column 1 */
        /* Steps that can hold a cell of the window (band ends are monotone in the row). */
        const int64_t s_begin = lo[0] + 1, s_end = hi[rn - 1] + rn - 1;
        /* Steady state: every row inside the window (full strips only). */
        int64_t f_begin = s_end + 1, f_end = s_end;
        if (rn == R) {
            f_begin = TSW_MAX(lo[R - 1] + R, s_begin);
            f_end = TSW_MIN(hi[0], s_end);
        }
        VT pu = vzero, pl = wzero;
        if (s_begin <= s_end) {
            pu = V_LOAD(row + (s_begin - 1) * VL);
            if (has_w)
                pl = V_LOAD(lrow + (s_begin - 1) * VL);
        }
#define TSW__LN_STEP(chk, s)                                                                  \
    V_NAME(ln_step)(meas, kc, dim, chk, s, rn, lo, hi, M, Ar, NAr, dav, tav, B, NB, DB, TB,   \
                    row, lrow, cur, old, lcur, lold, &pu, &pl, nu, pp, gamma, inv_gamma, i,   \
                    bcol, xav, fcp)
        int64_t stop = 0; /* eab: the step after which every cell of the strip is dead */
        if (f_begin <= f_end) {
            for (int64_t s = s_begin; s < f_begin; ++s)
                TSW__LN_STEP(1, s);
            if (eab && meas == TSW__M_DTW) {
                /* PrunedDTW's right edge, every 8 steps: once row 0 has passed the last
                 * live cell of the row above the strip and the strip's newest two cells of
                 * every row are dead, every later cell of the strip is reached from dead
                 * cells only */
                for (int64_t s = f_begin; s <= f_end; ++s) {
                    TSW__LN_STEP(0, s);
                    if (((s - f_begin) & 7) == 7 && s > la &&
                        V_NAME(ln_dead)(R, cur, old, eab, i, N, s, ethr)) {
                        stop = s;
                        break;
                    }
                }
            } else {
                for (int64_t s = f_begin; s <= f_end; ++s)
                    TSW__LN_STEP(0, s);
            }
            if (!stop)
                for (int64_t s = f_end + 1; s <= s_end; ++s)
                    TSW__LN_STEP(1, s);
        } else {
            for (int64_t s = s_begin; s <= s_end; ++s)
                TSW__LN_STEP(1, s);
        }
#undef TSW__LN_STEP
        /* Columns the last row did not reach keep the previous row's values: reset them.
         * The strip stored columns from s_begin - (rn - 1) on (or none). */
        const int64_t wstart = s_begin <= s_end ? TSW_MAX(1, s_begin - (rn - 1)) : M + 1;
        for (int64_t c = plo + 1, e = TSW_MIN(phi, wstart - 1); c <= e; ++c) {
            V_STORE(row + c * VL, vzero);
            if (lin)
                V_STORE(lrow + c * VL, wzero);
        }
        plo = lo[rn - 1];
        if (stop) {
            /* the last row stored columns up to stop - (R - 1) (a full strip); the rest
             * hold the row above's values or +inf: dead, made +inf */
            const int64_t last = stop - (R - 1);
            for (int64_t c = last + 1; c <= phi; ++c)
                V_STORE(row + c * VL, vzero);
            phi = last;
        } else {
            phi = hi[rn - 1];
        }
        if (i == 1) { /* D(i, 0) = +inf below row 0 */
            V_STORE(row, vzero);
            if (lin)
                V_STORE(lrow, wzero);
        }
        if (meas == TSW__M_ERP || meas == TSW__M_EDR) /* the family's D(i, 0) of the last row */
            V_STORE(row, bcol[rn - 1]);
        if (eab && meas == TSW__M_DTW && i + rn - 1 < N) {
            /* the strip's last row is padded row i + rn - 1 (0-based i + rn - 2): a path
             * leaves it from some cell (that row, c) and then crosses the rows below and the
             * columns after c: D + max(rows' bound, columns' bound). A cell where that
             * exceeds ethr in every lane is dead: no lane ends at or below ethr through it.
             * No live cell: the sweep stops. Else the columns before the first live one
             * are dead in every later row too (PrunedDTW's left edge: a cell there is
             * reached only from dead cells, and the bounds of the rows and columns it
             * crosses are at most its costs), so the later rows start at that column; a
             * live cell's value never comes from a dead one, so the values at or below
             * ethr are the full program's, bit for bit. */
            const VT rb = V_LOAD(eab + (size_t)(i + rn - 1) * VL);
            const T *ecb = eab + (size_t)(N + 1) * VL; /* the columns' bounds */
            const VT et = V_SET1(ethr);
            int64_t c = plo + 1;
            while (c <= phi && !V_NAME(ln_live)(V_LOAD(row + c * VL), rb, ecb + (size_t)c * VL, et))
                ++c;
            if (c > phi)
                return 1;
            cut = c - 1;
            la = phi; /* the last live column, for the next strip's right edge */
            while (!V_NAME(ln_live)(V_LOAD(row + la * VL), rb, ecb + (size_t)la * VL, et))
                --la;
        }
    }
    return 0;
}

/* X[i * VL + l] = x[l][i * stride + k] for i < count: VL series into lanes, the lanes
 * innermost (a whole series of points times channels: stride 1, k 0; channel k of points of
 * `stride` channels). */
TSW_FORCEINLINE void V_NAME(ln_interleave)(T *X, const T *const *x, int64_t count,
                                           int64_t stride, int64_t k)
{
    for (int64_t i = 0; i < count; ++i)
        for (int l = 0; l < VL; ++l)
            X[(size_t)i * VL + l] = x[l][i * stride + k];
}

#if !TSW__LANES_FAMILY
/* Interleaves VL pairs into the workspace. Lane l takes pair idx[l]; the a side is rebuilt
 * only when it differs from the previous group's (batches share a). */
static void V_NAME(ln_prepare)(const tsw_params *p, int64_t dim, const tsw__lanes_layout *lay,
                               T *ws, const T *const *xa, const T *const *xta,
                               const T *const *xb, const T *const *xtb, int64_t N, int64_t M,
                               int rebuild_a)
{
    T *A = ws + lay->a, *B = ws + lay->b;
    const int cosine = p->measure == TSW_DTW && p->cost == TSW_COST_COSINE;
    const int twed = p->measure == TSW_TWED;
    const T nu = (T)p->nu, lmbda = (T)p->lmbda, pp = (T)p->p;
    for (int side = rebuild_a ? 0 : 1; side < 2; ++side) {
        const int64_t len = side ? M : N;
        const T *const *x = side ? xb : xa;
        const T *const *tx = side ? xtb : xta;
        T *X = side ? B : A;
        T *NX = ws + (side ? lay->nb : lay->na), *DX = ws + (side ? lay->db : lay->da),
          *TX = ws + (side ? lay->tb : lay->ta);
        V_NAME(ln_interleave)(X, x, len * dim, 1, 0);
        for (int l = 0; l < VL; ++l) {
            const T *v = x[l];
            if (cosine)
                for (int64_t i = 0; i < len; ++i) {
                    T s = 0; /* cost.h's order, as tsw_cost_cosine accumulates |x|^2 */
                    for (int64_t k = 0; k < dim; ++k)
                        s += v[i * dim + k] * v[i * dim + k];
                    NX[(size_t)i * VL + l] = S_SQRT(s);
                }
            if (twed)
                for (int64_t i = 0; i < len; ++i) {
                    /* point 0 is the zero vector at time 0; default times 1..len */
                    const T *pt = v + i * dim, *pv = i > 0 ? pt - dim : NULL;
                    T t1 = tx[l] ? tx[l][i] : (T)(i + 1);
                    T t0 = i > 0 ? (tx[l] ? tx[l][i - 1] : (T)i) : 0;
                    TX[(size_t)i * VL + l] = t1;
                    DX[(size_t)i * VL + l] = TSW_TWED_DEL_COST(
                        V_PNAME(tsw_lp)(pt, pv, dim, pp), nu, t1 - t0, lmbda, TSW__S_ADD,
                        TSW__S_MUL);
                }
        }
    }
}

static int V_NAME(ln_dispatch)(const tsw_params *p, int64_t dim, const tsw__lanes_layout *lay,
                               T *ws, const tsw_band *band, const T *eab, T ethr)
{
    const int one = dim == 1;
#define TSW__LN(meas, kc)                                                                     \
    do {                                                                                      \
        if (one)                                                                              \
            return V_NAME(ln_sweep)(meas, kc, 1, lay, ws, band, p, eab, ethr, NULL);          \
        return V_NAME(ln_sweep)(meas, kc, dim, lay, ws, band, p, eab, ethr, NULL);            \
    } while (0)
    if (p->measure == TSW_SOFT_DTW)
        TSW__LN(TSW__M_SOFT, TSW__KC_SQE);
    if (p->measure == TSW_TWED) {
        if (p->p == 1.0)
            TSW__LN(TSW__M_TWED, TSW__KC_LP1);
        TSW__LN(TSW__M_TWED, TSW__KC_LP2); /* tsw__lanes_width admits p = 1 or 2 only */
    }
    switch (p->cost) {
    case TSW_COST_EUCLIDEAN:
        TSW__LN(TSW__M_DTW, TSW__KC_EUC);
    case TSW_COST_ABS:
        TSW__LN(TSW__M_DTW, TSW__KC_ABS);
    case TSW_COST_COSINE:
        TSW__LN(TSW__M_DTW, TSW__KC_COS);
    default:
        TSW__LN(TSW__M_DTW, TSW__KC_SQE);
    }
#undef TSW__LN
}

int64_t V_NAME(tsw__lanes_run)(const tsw_params *p, int64_t dim, const tsw__pair *pairs,
                               int64_t count, void *wsv, double *out)
{
    if (count <= 0)
        return 0;
    T *ws = (T *)wsv;
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope,
                                  pairs[0].n, pairs[0].m);
    tsw__lanes_layout lay;
    if (tsw__lanes_layout_make(p, dim, band.rows, band.cols, VL, sizeof(T), &lay))
        return 0; /* unreachable: the caller sized ws with the same layout */
    const T *xa[VL], *xta[VL], *xb[VL], *xtb[VL];
    const T *prev_a[VL] = {0}, *prev_ta[VL] = {0};
    int64_t done = 0;
    int have_a = 0;
    while (done < count) {
        const int64_t rem = count - done;
        /* A group at least half full; a smaller tail goes to the single-pair kernel. */
        if (rem < VL && 2 * rem < VL)
            break;
        const int use = (int)(rem < VL ? rem : VL);
        int same_a = have_a;
        for (int l = 0; l < VL; ++l) {
            /* spare lanes repeat the group's last pair; their results are dropped */
            const tsw__pair *pr = &pairs[done + (l < use ? l : use - 1)];
            const void *a = band.swap ? pr->b : pr->a, *ta = band.swap ? pr->tb : pr->ta;
            const void *b = band.swap ? pr->a : pr->b, *tb = band.swap ? pr->ta : pr->tb;
            xa[l] = (const T *)a;
            xta[l] = (const T *)ta;
            xb[l] = (const T *)b;
            xtb[l] = (const T *)tb;
            same_a = same_a && xa[l] == prev_a[l] && xta[l] == prev_ta[l];
        }
        V_NAME(ln_prepare)(p, dim, &lay, ws, xa, xta, xb, xtb, band.rows, band.cols, !same_a);
        for (int l = 0; l < VL; ++l) {
            prev_a[l] = xa[l];
            prev_ta[l] = xta[l];
        }
        have_a = 1;
        V_NAME(ln_dispatch)(p, dim, &lay, ws, &band, NULL, (T)0);
        const T *res = ws + lay.row + (size_t)band.cols * VL;
#if TSW__LIN
        if (p->measure == TSW_SOFT_DTW) {
            const T *rk = ws + lay.lrow + (size_t)band.cols * VL;
            for (int l = 0; l < use; ++l)
                out[done + l] = V_NAME(tsw__lin_value)(res[l], rk[l], p->gamma);
        } else
#endif
            for (int l = 0; l < use; ++l)
                out[done + l] = (double)res[l];
        done += use;
    }
    return done;
}

/*
 * One group of up to VL DTW pairs (count <= VL, all of one shape and sharing a, as a
 * nearest-neighbour query's candidates do) with early abandoning (ln_sweep): rowb[l] bounds
 * what rows t .. n-1 of pair l add ((n + 1) doubles; rowb[l][n] = 0), colb[l] likewise the
 * columns c .. m-1 ((m + 1); either may be NULL: 0); out[l] gets the exact value, or +inf for
 * every lane once none can end at or below thr. same_a: a is the previous call's (its
 * interleaved copy is still in ws). Returns count, or 0 for a band that swaps rows and
 * columns (the caller then takes the single-pair kernel).
 */
int64_t V_NAME(tsw__lanes_run_ea)(const tsw_params *p, int64_t dim, const tsw__pair *pairs,
                                  int64_t count, void *wsv, double *out,
                                  const double *const *rowb, const double *const *colb,
                                  double thr, int same_a)
{
    T *ws = (T *)wsv;
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope,
                                  pairs[0].n, pairs[0].m);
    tsw__lanes_layout lay;
    if (count <= 0 || count > VL || band.swap ||
        tsw__lanes_layout_make(p, dim, band.rows, band.cols, VL, sizeof(T), &lay))
        return 0;
    const T *xa[VL], *xta[VL] = {0}, *xb[VL], *xtb[VL] = {0};
    for (int l = 0; l < VL; ++l) {
        const tsw__pair *pr = &pairs[l < count ? l : count - 1];
        xa[l] = (const T *)pr->a;
        xb[l] = (const T *)pr->b;
    }
    V_NAME(ln_prepare)(p, dim, &lay, ws, xa, xta, xb, xtb, band.rows, band.cols, !same_a);
    /* the bounds in T, rounded down; the threshold rounded up: never a lane abandoned that
     * could end at or below thr. Rows' bounds at t (0 .. N), then the columns' at N + 1 + c
     * (c = 1 .. M: the columns after padded column c, colb[l][c]) */
    T *eab = ws + lay.eab;
    for (int side = 0; side < 2; ++side) {
        const int64_t len = side ? band.cols : band.rows;
        T *dst = eab + (side ? (size_t)(band.rows + 1) * VL : 0);
        for (int64_t t = side; t <= len; ++t)
            for (int l = 0; l < VL; ++l) {
                const double *src = (side ? colb : rowb)[l < count ? l : count - 1];
                const double v = src ? src[t] : 0.0;
                T w = (T)v;
                if ((double)w > v)
                    w = V_NEXT_DOWN(w);
                dst[(size_t)t * VL + l] = w;
            }
    }
    T et = (T)thr;
    if ((double)et < thr)
        et = V_NEXT_UP(et);
    int gone = V_NAME(ln_dispatch)(p, dim, &lay, ws, &band, eab, et);
    const T *res = ws + lay.row + (size_t)band.cols * VL;
    for (int l = 0; l < count; ++l)
        out[l] = gone ? HUGE_VAL : (double)res[l];
    return count;
}
#endif /* !TSW__LANES_FAMILY */

#if TSW__LANES_FAMILY
/* MSM's neighbour constants of one interleaved side X (len points of one channel): K[i] =
 * |x_i - x_{i-1}| (0 for the first point, which stands for its own neighbour) and the sign
 * flip S[i] of the split's difference (TSW_MSM_SPLIT_K): the rows' (a side) flip d =
 * x_i - y_j where x_i - x_{i-1} < 0, the columns' (b side) where y_j - y_{j-1} >= 0. */
static void V_NAME(ln_msm_neigh)(const T *X, T *K, T *S, int64_t len, int cols)
{
    for (int64_t i = 0; i < len; ++i)
        for (int l = 0; l < VL; ++l) {
            const size_t o = (size_t)i * VL + l;
            const T a = i > 0 ? X[o] - X[o - VL] : (T)0;
            K[o] = S_FABS(a);
            S[o] = (signbit(a) != 0) != (cols != 0) ? (T)-0.0 : (T)0;
        }
}

/* The elastic family's VL pairs (lanes in xa, xb: the band's rows and columns, raw series
 * of N and M points, or of N + 2 and M + 2 for the derivative measures) into the workspace:
 * the points (the derivatives, tsw_derivative, for DDTW and WDDTW), ERP's gap costs; the a
 * side only when rebuild_a. */
static void V_NAME(fam_prepare)(const tsw_params *p, int64_t dim, const tsw__lanes_layout *lay,
                                T *ws, const T *const *xa, const T *const *xb, int64_t N,
                                int64_t M, int rebuild_a)
{
    const int deriv = TSW_IS_DERIVATIVE(p->measure), erp = p->measure == TSW_ERP;
    for (int side = rebuild_a ? 0 : 1; side < 2; ++side) {
        const int64_t len = side ? M : N;
        T *X = ws + (side ? lay->b : lay->a), *DX = ws + (side ? lay->db : lay->da);
        if (!deriv)
            V_NAME(ln_interleave)(X, side ? xb : xa, len * dim, 1, 0);
        for (int l = 0; l < VL; ++l) {
            const T *v = (side ? xb : xa)[l];
            if (deriv) {
                T *dv = ws + lay->dv;
                V_PNAME(tsw_derivative)(v, len + 2, dim, dv);
                v = dv;
                for (int64_t t = 0; t < len * dim; ++t)
                    X[(size_t)t * VL + l] = v[t];
            }
            if (erp)
                for (int64_t i = 0; i < len; ++i)
                    DX[(size_t)i * VL + l] = V_PNAME(tsw_erp_gap)(v + i * dim, dim, (T)p->erp_g);
        }
        if (p->measure == TSW_MSM && p->msm_independent) /* one channel here */
            V_NAME(ln_msm_neigh)(X, DX, ws + (side ? lay->tb : lay->ta), len, side);
    }
}

static void V_NAME(fam_dispatch)(const tsw_params *p, int64_t dim, const tsw__lanes_layout *lay,
                                 T *ws, const tsw_band *band, const V_NAME(ln_famc) *fc)
{
    const int one = dim == 1;
#define TSW__FL(meas, kc)                                                                     \
    do {                                                                                      \
        if (one)                                                                              \
            (void)V_NAME(ln_sweep)(meas, kc, 1, lay, ws, band, p, NULL, (T)0, fc);            \
        else                                                                                  \
            (void)V_NAME(ln_sweep)(meas, kc, dim, lay, ws, band, p, NULL, (T)0, fc);          \
        return;                                                                               \
    } while (0)
    switch (p->measure) {
    case TSW_DDTW: /* DTW on the derivatives, under p->cost (not cosine: tsw__lanes_width) */
        if (p->cost == TSW_COST_EUCLIDEAN)
            TSW__FL(TSW__M_DTW, TSW__KC_EUC);
        if (p->cost == TSW_COST_ABS)
            TSW__FL(TSW__M_DTW, TSW__KC_ABS);
        TSW__FL(TSW__M_DTW, TSW__KC_SQE);
    case TSW_WDTW:
    case TSW_WDDTW:
        TSW__FL(TSW__M_WDTW, TSW__KC_SQE);
    case TSW_ADTW:
        TSW__FL(TSW__M_ADTW, TSW__KC_SQE);
    case TSW_ERP:
        if (one && fc->erp_abs)
            TSW__FL(TSW__M_ERP, TSW__KC_ABS);
        TSW__FL(TSW__M_ERP, TSW__KC_EUC);
    case TSW_EDR:
        TSW__FL(TSW__M_EDR, TSW__KC_EUC);
    case TSW_LCSS:
        TSW__FL(TSW__M_LCSS, TSW__KC_EUC);
    default: /* TSW_MSM: independent, one channel (several: tsw__fam_lanes_run), or dependent */
        if (!p->msm_independent)
            TSW__FL(TSW__M_MSMD, TSW__KC_SQE);
        (void)V_NAME(ln_sweep)(TSW__M_MSM, TSW__KC_ABS, 1, lay, ws, band, p, NULL, (T)0, fc);
        return;
    }
#undef TSW__FL
}

/* count pairs of one shape (raw lengths pairs[0].n, pairs[0].m), VL at a time as
 * tsw__lanes_run: each lane's value as family.c's fam_pair returns it (EDR and LCSS
 * normalised), the same bits (the cells are its cells, in its order; no fused
 * multiply-add in this file). */
int64_t V_NAME(tsw__fam_lanes_run)(const tsw_params *p, int64_t dim, const tsw__pair *pairs,
                                   int64_t count, void *wsv, double *out)
{
    if (count <= 0)
        return 0;
    T *ws = (T *)wsv;
    const int64_t cut = TSW_IS_DERIVATIVE(p->measure) ? 2 : 0;
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope,
                                  pairs[0].n - cut, pairs[0].m - cut);
    tsw__lanes_layout lay;
    if (tsw__lanes_layout_make(p, dim, band.rows, band.cols, VL, sizeof(T), &lay))
        return 0; /* unreachable: the caller sized ws with the same layout */
    const int64_t N = band.rows, M = band.cols, L = N > M ? N : M;
    V_NAME(ln_famc) fc;
    fc.w = NULL;
    fc.eps = V_ZERO();
    fc.pen = V_SET1((T)p->warp_penalty);
    fc.mc = V_SET1((T)p->c);
    fc.erp_abs = 0;
    if (p->measure == TSW_WDTW || p->measure == TSW_WDDTW) {
        T *w = ws + lay.w;
        for (int64_t k = 0; k < L; ++k)
            w[k] = V_PNAME(tsw_wdtw_weight)(p->g, k, L);
        fc.w = w;
    }
    const int epsm = p->measure == TSW_EDR || p->measure == TSW_LCSS;
    const T *xa[VL], *xb[VL], *prev_a[VL] = {0};
    int64_t done = 0;
    int have_a = 0;
    while (done < count) {
        const int64_t rem = count - done;
        if (rem < VL && 2 * rem < VL)
            break; /* a small tail: the single-pair kernel */
        const int use = (int)(rem < VL ? rem : VL);
        int same_a = have_a;
        for (int l = 0; l < VL; ++l) {
            const tsw__pair *pr = &pairs[done + (l < use ? l : use - 1)];
            xa[l] = (const T *)(band.swap ? pr->b : pr->a);
            xb[l] = (const T *)(band.swap ? pr->a : pr->b);
            same_a = same_a && xa[l] == prev_a[l];
        }
        if (p->measure == TSW_MSM && p->msm_independent && dim > 1) {
            /* independent MSM of several channels: one univariate program per channel in
             * the lanes, summed in channel order in T, as family.c's fam_pair */
            T tot[VL];
            for (int l = 0; l < VL; ++l)
                tot[l] = 0;
            for (int64_t k = 0; k < dim; ++k) {
                V_NAME(ln_interleave)(ws + lay.a, xa, N, dim, k);
                V_NAME(ln_interleave)(ws + lay.b, xb, M, dim, k);
                V_NAME(ln_msm_neigh)(ws + lay.a, ws + lay.da, ws + lay.ta, N, 0);
                V_NAME(ln_msm_neigh)(ws + lay.b, ws + lay.db, ws + lay.tb, M, 1);
                (void)V_NAME(ln_sweep)(TSW__M_MSM, TSW__KC_ABS, 1, &lay, ws, &band, p, NULL,
                                       (T)0, &fc);
                const T *res = ws + lay.row + (size_t)M * VL;
                for (int l = 0; l < VL; ++l)
                    tot[l] = tot[l] + res[l];
            }
            for (int l = 0; l < use; ++l)
                out[done + l] = (double)tot[l];
            have_a = 0; /* (the workspace holds the last channel only) */
            done += use;
            continue;
        }
        V_NAME(fam_prepare)(p, dim, &lay, ws, xa, xb, N, M, !same_a);
        if (p->measure == TSW_ERP && dim == 1) {
            fc.erp_abs = 1;
            for (int l = 0; l < VL && fc.erp_abs; ++l)
                fc.erp_abs = V_PNAME(tsw_root_square_exact)(xa[l], N) &&
                             V_PNAME(tsw_root_square_exact)(xb[l], M);
        }
        if (epsm) {
            T *e = ws + lay.eps;
            for (int l = 0; l < VL; ++l)
                e[l] = V_PNAME(tsw_sq_bound)(
                    V_PNAME(tsw_pair_epsilon)(p->epsilon, xa[l], N, xb[l], M, dim),
                    p->measure == TSW_LCSS);
            fc.eps = V_LOAD(e);
        }
        for (int l = 0; l < VL; ++l)
            prev_a[l] = xa[l];
        have_a = 1;
        V_NAME(fam_dispatch)(p, dim, &lay, ws, &band, &fc);
        const T *res = ws + lay.row + (size_t)M * VL;
        for (int l = 0; l < use; ++l) {
            const T v = res[l];
            if (p->measure == TSW_EDR) {
                out[done + l] = (double)(v / (T)L);
            } else if (p->measure == TSW_LCSS) {
                const T d = (T)1 - v / (T)(N < M ? N : M);
                out[done + l] = (double)(d < 0 ? (T)0 : d);
            } else {
                out[done + l] = (double)v;
            }
        }
        done += use;
    }
    return done;
}
#endif /* TSW__LANES_FAMILY */
