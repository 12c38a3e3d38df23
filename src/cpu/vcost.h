/*
 * Local costs of VL cells at once, written once over the simd_ops.h vocabulary for both
 * kernel families (pair_diag_impl.h, lanes_impl.h); included after simd_ops.h (no include
 * guard: one instantiation per ISA and precision). The loops follow cost.h's functions in
 * the same order of the dims, and the cosine rule is cost.h's TSW_COSINE_FROM_NORMS.
 */

/* Kernel variants: DTW costs use the tsw_cost values 0..3; TWED's Lp orders follow. */
#ifndef TSW__KC_DEFINED
#define TSW__KC_DEFINED
enum { TSW__KC_SQE = 0, TSW__KC_EUC = 1, TSW__KC_ABS = 2, TSW__KC_COS = 3,
       TSW__KC_LP2 = 4, TSW__KC_LP1 = 5, TSW__KC_LPP = 6 };
enum { TSW__M_DTW = 0, TSW__M_TWED = 1, TSW__M_SOFT = 2,
       /* the elastic family's (family_lanes.c; DDTW is TSW__M_DTW on the derivatives,
        * WDDTW TSW__M_WDTW) */
       TSW__M_WDTW = 3, TSW__M_ADTW = 4, TSW__M_ERP = 5, TSW__M_EDR = 6, TSW__M_LCSS = 7,
       TSW__M_MSM = 8, TSW__M_MSMD = 9 /* MSM's dependent form */ };
#endif

/* Vectors per step of the soft-DTW sweep: 4 (scalar: 1; its cell is the reference's). */
#undef DG_SOFT_K
#if TSW_V_ISA == 0
#define DG_SOFT_K 1
#else
#define DG_SOFT_K 4
#endif

/* Local cost of VL cells: x points at value 0 of the cells' a points, value k at
 * x + k * sx (likewise y, sy); nx, ny at their cosine norms. kc, dim: compile-time
 * constants at every call site (dim == 1 is specialised). */
TSW_FORCEINLINE VT V_NAME(dg_cost)(const int kc, const int64_t dim, const T *x, size_t sx,
                                   const T *y, size_t sy, const T *nx, const T *ny, T pp)
{
    if (kc == TSW__KC_COS) {
        VT xy = V_ZERO();
        for (int64_t k = 0; k < dim; ++k)
            xy = V_ADD(xy, V_MUL(V_LOADU(x + k * sx), V_LOADU(y + k * sy)));
        VT vx = V_LOADU(nx), vy = V_LOADU(ny), zero = V_ZERO(), one = V_SET1((T)1);
#define TSW__ISZ(v) V_CMPEQ((v), zero)
        return TSW_COSINE_FROM_NORMS(xy, vx, vy, zero, one, V_SUB, V_MUL, V_DIV, TSW__ISZ,
                                     V_MAND, V_MOR, V_SEL);
#undef TSW__ISZ
    }
    if (dim == 1 && (kc == TSW__KC_ABS || kc == TSW__KC_LP1 || kc == TSW__KC_LP2))
        return V_ABS(V_SUB(V_LOADU(x), V_LOADU(y))); /* tsw_lp's dim == 1 case: |x - y| */
    VT s = V_ZERO();
    if (kc == TSW__KC_ABS || kc == TSW__KC_LP1) {
        for (int64_t k = 0; k < dim; ++k)
            s = V_ADD(s, V_ABS(V_SUB(V_LOADU(x + k * sx), V_LOADU(y + k * sy))));
        return s;
    }
#if TSW_V_ISA == 0
#undef TSW__LPP
#if TSW_V_DOUBLE
#define TSW__LPP tsw_lpp_f64
#else
#define TSW__LPP tsw_lpp_f32
#endif
    if (kc == TSW__KC_LPP)
        return TSW__LPP(x, (int64_t)sx, y, (int64_t)sy, dim, pp);
#endif
#if defined(TSW__LANES_FAMILY) && TSW__LANES_FAMILY
    /* 0 + d * d is d * d bit for bit (never -0), so one channel takes no add. Only in the
     * family's lanes, which never contract: where a file contracts (the DTW lanes), the add
     * of 0 is what keeps the product apart from the cell's own add (fma(d, d, 0) is d * d;
     * fma(d, d, min) would round once where the reference rounds twice). */
    if (dim == 1) {
        const VT d = V_SUB(V_LOADU(x), V_LOADU(y));
        s = V_MUL(d, d);
    } else
#endif
    {
        for (int64_t k = 0; k < dim; ++k) {
            VT d = V_SUB(V_LOADU(x + k * sx), V_LOADU(y + k * sy));
            s = V_ADD(s, V_MUL(d, d));
        }
    }
    if (kc == TSW__KC_EUC || kc == TSW__KC_LP2)
        return V_SQRT(s);
    return s;
}

