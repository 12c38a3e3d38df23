/*
 * Vector exp and log for the soft-DTW kernels, written once over the simd_ops.h
 * vocabulary (include after simd_ops.h; no include guard: one instantiation per ISA and
 * precision, named V_NAME(tsw_vexp) and V_NAME(tsw_vlog)). The scalar ISA maps them to the
 * C library's exp/log, which is exactly what the reference uses.
 *
 * Method (Cephes-style):
 *   exp(x): n = round(x / ln 2), r = x - n ln 2 by a two-constant Cody-Waite reduction
 *           (|r| <= ln2 / 2), exp(r) by a minimax polynomial (degree 11 in double, 6 in
 *           float, tsw__exp_poly), then the product with 2^n built in the exponent field. The rounding of x / ln 2 to an
 *           integer, and the integer itself, come from the "shifter" 1.5 * 2^52 (2^23):
 *           after t = x / ln2 + shifter the low bits of t hold n.
 *           Range: exp(x) = +inf above ln(DBL_MAX) (ln(FLT_MAX)); results below 2^-1021
 *           (2^-125) flush to +0, as do x = -inf and any x below; NaN gives NaN.
 *   log(x): x = 2^e f with f in [sqrt(1/2), sqrt(2)), log f = 2 atanh(s) with
 *           s = (f - 1) / (f + 1), |s| <= 0.1716, by the series 2s (1 + s^2/3 + s^4/5 ...)
 *           up to s^18/19 (double) or s^8/9 (float), arranged as fdlibm does so that
 *           f - 1 enters exactly (tsw__log_core), then e ln 2 added in two parts.
 *           Subnormal x are scaled first; log(+0) = -inf, log(+inf) = +inf, log(x < 0) and
 *           log(NaN) = NaN.
 * Polynomials use Horner's rule: the kernels keep several independent cells in flight, so
 * throughput (the operation count) rather than the chain length sets the speed; Estrin's
 * scheme measured slower.
 * Accuracy: within 1 ulp of the C library over the whole range (tests/c/test_kernels.c
 * prints the worst case and checks 2 ulp).
 *
 * Interleaving: the *_k functions work on K vectors at once (K a compile-time constant at
 * the call site, at most TSW__KMAX), every step a loop over the K vectors, so that after
 * inlining K independent chains sit side by side in the instruction stream.
 */

#include "../common/recurrence.h"

#ifndef TSW__KMAX
#define TSW__KMAX 16
#endif
#undef TSW__KL
#define TSW__KL TSW__UNROLL for (int u = 0; u < K; ++u)

#if TSW_V_ISA == 0

TSW_FORCEINLINE void V_NAME(tsw_vexp_k)(VT *x, const int K) { TSW__KL x[u] = V_EXP_LIBM(x[u]); }
TSW_FORCEINLINE void V_NAME(tsw_vlog_k)(VT *x, const int K) { TSW__KL x[u] = V_LOG_LIBM(x[u]); }
TSW_FORCEINLINE void V_NAME(tsw_vexp_sm_k)(VT *x, const int K) { TSW__KL x[u] = V_EXP_LIBM(x[u]); }
TSW_FORCEINLINE void V_NAME(tsw_vlog_sm_k)(VT *x, const int K) { TSW__KL x[u] = V_LOG_LIBM(x[u]); }

#else

#undef TSW__C
#define TSW__C(x) V_SET1((T)(x))

#if TSW_V_DOUBLE
#define TSW__EXP_HI 709.782712893383973    /* ln(DBL_MAX) */
#define TSW__EXP_LO -708.0                 /* n >= -1021 below: 2^(n-1) stays normal */
#define TSW__LOG2E 1.4426950408889634074
#define TSW__SHIFT 6755399441055744.0      /* 1.5 * 2^52 */
#define TSW__CW1 6.93145751953125E-1       /* ln 2 = CW1 + CW2, CW1 with few bits */
#define TSW__CW2 1.42860682030941723212E-6
#define TSW__LN2_HI 6.93147180369123816490e-01
#define TSW__LN2_LO 1.90821492927058770002e-10
#define TSW__MANT_BITS 52
#define TSW__BIAS 1023
#else
#define TSW__EXP_HI 88.7228391116729996f   /* ln(FLT_MAX) */
#define TSW__EXP_LO -86.9f                 /* n >= -125 */
#define TSW__LOG2E 1.44269504088896341f
#define TSW__SHIFT 12582912.0f             /* 1.5 * 2^23 */
#define TSW__CW1 0.693359375f
#define TSW__CW2 -2.12194440e-4f
#define TSW__LN2_HI 0.693359375f
#define TSW__LN2_LO -2.12194440e-4f
#define TSW__MANT_BITS 23
#define TSW__BIAS 127
#endif

/*
 * exp(r) for |r| <= ln2 / 2: 1 + r + c2 r^2 + ... + cd r^d, with minimax coefficients for
 * the relative error (Remez exchange with 1 + r fixed, computed in 60-digit arithmetic,
 * then rounded to the precision): degree 11 in double (max error 1.1e-17 with the rounded
 * coefficients), degree 6 in float (3.8e-9); below a tenth of an ulp either way.
 */
TSW_FORCEINLINE VT V_NAME(tsw__exp_poly)(VT r)
{
#if TSW_V_DOUBLE
    VT p = V_FMA(TSW__C(2.5000072292151244e-08), r, TSW__C(2.7630233914958636e-07));
    p = V_FMA(p, r, TSW__C(2.7557586266408486e-06));
    p = V_FMA(p, r, TSW__C(2.4801493136197254e-05));
    p = V_FMA(p, r, TSW__C(0.00019841269506779664));
    p = V_FMA(p, r, TSW__C(0.001388888894359769));
    p = V_FMA(p, r, TSW__C(0.008333333333494333));
    p = V_FMA(p, r, TSW__C(0.041666666666530267));
    p = V_FMA(p, r, TSW__C(0.16666666666666413));
    p = V_FMA(p, r, TSW__C(0.5000000000000011));
#else
    VT p = V_FMA(TSW__C(0.001381461275741458f), r, TSW__C(0.008368710055947304f));
    p = V_FMA(p, r, TSW__C(0.04166838899254799f));
    p = V_FMA(p, r, TSW__C(0.1666652113199234f));
    p = V_FMA(p, r, TSW__C(0.4999999403953552f));
#endif
    /* 1 + r + r^2 p: the last two steps keep the leading terms exact-ish */
    return V_ADD(V_FMA(V_MUL(r, r), p, r), TSW__C(1.0));
}

/* x clamped to [EXP_LO, EXP_HI] -> r = x - n ln2, and t = x / ln2 + shifter (n in its low
 * bits). */
TSW_FORCEINLINE VT V_NAME(tsw__exp_reduce)(VT x, VT *t)
{
    const VT shifter = TSW__C(TSW__SHIFT);
    *t = V_FMA(x, TSW__C(TSW__LOG2E), shifter);
    VT n = V_SUB(*t, shifter);
    /* Cody-Waite: CW1 has few significant bits, so n * CW1 and x - n * CW1 are exact. */
    VT r = V_SUB(x, V_MUL(n, TSW__C(TSW__CW1)));
    return V_SUB(r, V_MUL(n, TSW__C(TSW__CW2)));
}

/* 2^(n + bias_shift) from t: (n + BIAS + bias_shift) lands in the exponent field. */
TSW_FORCEINLINE VT V_NAME(tsw__exp_scale)(VT t, const int bias_shift)
{
    return VF_CAST(VI_SLLI(VI_ADD(VI_CAST(t), VI_SET1(TSW__BIAS + bias_shift)), TSW__MANT_BITS));
}

/* x[u] = exp(x[u]), u < K, over the whole range. */
TSW_FORCEINLINE void V_NAME(tsw_vexp_k)(VT *x, const int K)
{
    const VT hi = TSW__C(TSW__EXP_HI), lo = TSW__C(TSW__EXP_LO);
    TSW__KL
    {
        VM over = V_CMPGT(x[u], hi), under = V_CMPLT(x[u], lo);
        /* Clamp so that n stays in range; V_MAX(c, x) keeps a NaN x (second operand). */
        VT t, r = V_NAME(tsw__exp_reduce)(V_MIN(hi, V_MAX(lo, x[u])), &t);
        VT p = V_NAME(tsw__exp_poly)(r);
        /* 2^(n-1) covers n at the top of the range (exp near DBL_MAX); p * 2 is exact. */
        VT res = V_MUL(V_ADD(p, p), V_NAME(tsw__exp_scale)(t, -1));
        res = V_SEL(under, V_ZERO(), res);
        x[u] = V_SEL(over, V_SET1(V_INF), res);
    }
}

/*
 * log(2^e f) for f in [sqrt(1/2), sqrt(2)) and e as a floating value (fdlibm's
 * arrangement): r = f - 1 (exact, Sterbenz), s = r / (2 + r), w = s^2,
 * R = 2w/3 + 2w^2/5 + ... (the series of 2 atanh(s) - 2s, up to 2 w^9 / 19 in double,
 * 2 w^4 / 9 in float), hfsq = r^2 / 2, and
 *   log = e LN2_HI - ((hfsq - (s (hfsq + R) + e LN2_LO)) - r),
 * which keeps r exact and confines the rounding to the small correction terms. LN2_HI has
 * few significant bits, so e * LN2_HI is exact.
 */
TSW_FORCEINLINE VT V_NAME(tsw__log_core)(VT f, VT e)
{
    VT r = V_SUB(f, TSW__C(1.0));
    VT s = V_DIV(r, V_ADD(r, TSW__C(2.0)));
    VT w = V_MUL(s, s);
#if TSW_V_DOUBLE
    VT P = V_FMA(TSW__C(2.0 / 19.0), w, TSW__C(2.0 / 17.0));
    P = V_FMA(P, w, TSW__C(2.0 / 15.0));
    P = V_FMA(P, w, TSW__C(2.0 / 13.0));
    P = V_FMA(P, w, TSW__C(2.0 / 11.0));
    P = V_FMA(P, w, TSW__C(2.0 / 9.0));
#else
    VT P = TSW__C(2.0 / 9.0);
#endif
    P = V_FMA(P, w, TSW__C(2.0 / 7.0));
    P = V_FMA(P, w, TSW__C(2.0 / 5.0));
    P = V_FMA(P, w, TSW__C(2.0 / 3.0));
    VT R = V_MUL(w, P);
    VT hfsq = V_MUL(V_MUL(TSW__C(0.5), r), r);
    VT corr = V_FMA(s, V_ADD(hfsq, R), V_MUL(e, TSW__C(TSW__LN2_LO)));
    return V_SUB(V_MUL(e, TSW__C(TSW__LN2_HI)), V_SUB(V_SUB(hfsq, corr), r));
}

/* x[u] = log(x[u]), u < K, over the whole range. */
TSW_FORCEINLINE void V_NAME(tsw_vlog_k)(VT *x, const int K)
{
#if TSW_V_DOUBLE
    const VT tiny = TSW__C(2.2250738585072014e-308), up = TSW__C(18014398509481984.0); /* 2^54 */
    const VT two52 = TSW__C(4503599627370496.0);
    const VI mant = VI_SET1(0x000fffffffffffffLL), one = VI_SET1(0x3ff0000000000000LL);
    const int up_bits = 54;
#else
    const VT tiny = TSW__C(1.17549435e-38f), up = TSW__C(33554432.0f); /* 2^25 */
    const VI mant = VI_SET1(0x007fffff), one = VI_SET1(0x3f800000);
    const int up_bits = 25;
#endif
    TSW__KL
    {
        /* Subnormals: scale up so that the exponent field is meaningful. */
        VM sub = V_CMPLT(x[u], tiny);
        VT xs = V_SEL(sub, V_MUL(x[u], up), x[u]);
        VT bias = V_SEL(sub, TSW__C(TSW__BIAS + up_bits), TSW__C(TSW__BIAS));
        VI bits = VI_CAST(xs);
#if TSW_V_DOUBLE
        /* exponent field as a double: OR it into the mantissa of 2^52, subtract 2^52 */
        VT e = V_SUB(VF_CAST(VI_OR(VI_SRLI(bits, 52), VI_CAST(two52))), two52);
#else
        VT e = VI_CVTF(VI_SRLI(bits, 23));
#endif
        e = V_SUB(e, bias);
        /* mantissa with the exponent of 1.0: f in [1, 2), then [sqrt(1/2), sqrt(2)) */
        VT f = VF_CAST(VI_OR(VI_AND(bits, mant), one));
        VM big = V_CMPGT(f, TSW__C(1.41421356237309504880));
        f = V_SEL(big, V_MUL(f, TSW__C(0.5)), f);
        e = V_ADD(e, V_MASK_ONE(big));
        VT res = V_NAME(tsw__log_core)(f, e);
        res = V_SEL(V_CMPEQ(x[u], V_SET1(V_INF)), V_SET1(V_INF), res);
        res = V_SEL(V_CMPEQ(x[u], V_ZERO()), V_SET1(-V_INF), res);
        x[u] = V_SEL(V_MOR(V_CMPLT(x[u], V_ZERO()), V_CMPNAN(x[u])), V_SET1(NAN), res);
    }
}

/*
 * The softmin's domain: exponents x <= 0 (or NaN, in lanes the caller overwrites) and
 * logarithms of sums s in [1, 3]. On it the range handling above is dead weight:
 *   exp: x is clamped below at EXP_LO but the result is not flushed: it stays a tiny
 *        positive number (< 2^-1020, 2^-124) where exp(x) would be smaller still, which
 *        cannot change a sum that holds the exact term 1; -inf gives the same tiny number;
 *   log: s in [1, 3] is 2^e f with e = 0 (f = s <= sqrt 2) or e = 1 (f = s / 2), no bit
 *        manipulation, no special cases.
 * On that domain both return the same values as tsw_vexp_k / tsw_vlog_k up to those tiny
 * exponentials.
 */
TSW_FORCEINLINE void V_NAME(tsw_vexp_sm_k)(VT *x, const int K)
{
    TSW__KL
    {
        VT t, r = V_NAME(tsw__exp_reduce)(V_MAX(TSW__C(TSW__EXP_LO), x[u]), &t);
        /* n <= 0 here: 2^n itself fits the exponent field */
        x[u] = V_MUL(V_NAME(tsw__exp_poly)(r), V_NAME(tsw__exp_scale)(t, 0));
    }
}

TSW_FORCEINLINE void V_NAME(tsw_vlog_sm_k)(VT *x, const int K)
{
    TSW__KL
    {
        VM big = V_CMPGT(x[u], TSW__C(1.41421356237309504880));
        VT f = V_SEL(big, V_MUL(x[u], TSW__C(0.5)), x[u]);
        x[u] = V_NAME(tsw__log_core)(f, V_MASK_ONE(big));
    }
}

#undef TSW__C
#undef TSW__EXP_HI
#undef TSW__EXP_LO
#undef TSW__LOG2E
#undef TSW__SHIFT
#undef TSW__CW1
#undef TSW__CW2
#undef TSW__LN2_HI
#undef TSW__LN2_LO
#undef TSW__MANT_BITS
#undef TSW__BIAS

#endif /* SIMD ISAs */

TSW_FORCEINLINE VT V_NAME(tsw_vexp)(VT x)
{
    V_NAME(tsw_vexp_k)(&x, 1);
    return x;
}
TSW_FORCEINLINE VT V_NAME(tsw_vlog)(VT x)
{
    V_NAME(tsw_vlog_k)(&x, 1);
    return x;
}

/*
 * K soft-DTW cells: out[u] = c[u] + softmin_gamma(dg[u], up[u], lf[u]) (recurrence.h's
 * sorted form, stage by stage over the K cells; +inf where all three are +inf). The
 * scalar ISA calls the reference's own tsw_sdtw_cell.
 */
TSW_FORCEINLINE void V_NAME(tsw_vsdtw_cells)(const VT *c, const VT *dg, const VT *up,
                                             const VT *lf, VT *out, T gamma, T inv_gamma,
                                             const int K)
{
#if TSW_V_ISA == 0
    TSW__KL out[u] = V_PNAME(tsw_sdtw_cell)(c[u], dg[u], up[u], lf[u], gamma, inv_gamma);
#else
    VT lo[TSW__KMAX], em[TSW__KMAX], eh[TSW__KMAX], s[TSW__KMAX];
    const VT g = V_SET1(gamma), ig = V_SET1(inv_gamma);
    TSW__KL
    {
        /* lo = the minimum; the other two are max(dg, up) and max(min(dg, up), lf), in no
         * particular order (the sorted form only needs them apart from lo) */
        VT m01 = V_MIN(dg[u], up[u]);
        lo[u] = V_MIN(m01, lf[u]);
        em[u] = TSW_SOFTMIN3_EXPARG(lo[u], V_MAX(m01, lf[u]), ig, V_SUB, V_MUL);
        eh[u] = TSW_SOFTMIN3_EXPARG(lo[u], V_MAX(dg[u], up[u]), ig, V_SUB, V_MUL);
    }
    V_NAME(tsw_vexp_sm_k)(em, K);
    V_NAME(tsw_vexp_sm_k)(eh, K);
    TSW__KL s[u] = TSW_SOFTMIN3_SUM(em[u], eh[u], V_SET1((T)1), V_ADD);
    V_NAME(tsw_vlog_sm_k)(s, K);
    TSW__KL
    {
        VT v = V_ADD(c[u], TSW_SOFTMIN3_OUT(lo[u], s[u], g, V_SUB, V_MUL));
        out[u] = V_SEL(V_CMPEQ(lo[u], V_SET1(V_INF)), V_SET1(V_INF), v);
    }
#endif
}

/*
 * Soft-DTW in the scaled linear domain (recurrence.h, TSW_SDTW_LIN_CELL), AVX2 only
 * (TSW__LIN; it rounds with vroundpd/ps): a cell holds P = exp(-R / gamma) as m 2^k with m in
 * [1, 2) and k an integer-valued number of the precision (any magnitude: R / gamma may be
 * 1e16; where k is past 2^53 (2^24) its rounding is relative to R, like any other rounding
 * of R). P = 0 (R = +inf) is (1, TSW__LIN_ZERO): a term 2^-1e300 (2^-1e30) that any real
 * term absorbs and that stays far below any real k along any path (tsw__lin_value maps it
 * back to +inf).
 *   E = exp(-c / gamma): v = -c / gamma / ln2 rounded to n, r = -c/gamma - n ln2 (fused),
 *       E = poly(r) 2^n kept as (poly(r), n): no range limits, no scaling;
 *   P = E (P_dg + P_up + P_left): each term m_x 2^(k_x - kmax), the power of two added to
 *       m_x's exponent field (k_x - kmax clamped at -1022: smaller terms are below an ulp of
 *       the largest, which is m >= 1), summed, times E, then renormalised into [1, 2).
 * Per cell: one exponential's polynomial, off the recurrence's critical path (it depends on
 * the cost only), and some twenty cheap operations on it; no logarithm (only once per pair,
 * at the end) and no division. The rounding error of R stays relative to the magnitudes
 * involved (c / gamma is rounded once, as the log-domain form rounds c + softmin), well
 * inside the reference tolerance (tests/c/test_kernels.c).
 */
#undef TSW__LIN
#undef TSW__LIN_ZERO
#if TSW_V_ISA == 2
#define TSW__LIN 1
#if TSW_V_DOUBLE
#define TSW__LIN_ZERO (-1e300)
#else
#define TSW__LIN_ZERO (-1e30f)
#endif

TSW_FORCEINLINE void V_NAME(tsw_vsdtw_lin_cells)(const VT *c, const VT *dgm, const VT *dgk,
                                                 const VT *upm, const VT *upk,
                                                 const VT *lfm, const VT *lfk, VT *om,
                                                 VT *ok, T inv_gamma, const int K)
{
#if TSW_V_DOUBLE
    const VT shifter = V_SET1(6755399441055744.0), lowest = V_SET1(-1022.0);
    const VI mant = VI_SET1(0x000fffffffffffffLL), one = VI_SET1(0x3ff0000000000000LL);
    const VT two_p = V_SET1(4503599627370496.0), expo0 = V_SET1(4503599627370496.0 + 1023.0);
    const VT log2e = V_SET1(1.4426950408889634074), ln2_hi = V_SET1(-6.93147180369123816490e-01),
             ln2_lo = V_SET1(-1.90821492927058770002e-10);
#define TSW__LIN_ROUND(v) _mm256_round_pd((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#else
    const VT shifter = V_SET1(12582912.0f), lowest = V_SET1(-126.0f);
    const VI mant = VI_SET1(0x007fffff), one = VI_SET1(0x3f800000);
    const VT two_p = V_SET1(8388608.0f), expo0 = V_SET1(8388608.0f + 127.0f);
    const VT log2e = V_SET1(1.44269504088896341f), ln2_hi = V_SET1(-0.693359375f),
             ln2_lo = V_SET1(2.12194440e-4f);
#define TSW__LIN_ROUND(v) _mm256_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#endif
    VT em[TSW__KMAX], ek[TSW__KMAX];
    TSW__KL
    {
        /* E = exp(-c / gamma) = poly(r) 2^n */
        VT x = V_MUL(c[u], V_SET1(-inv_gamma));
        VT n = TSW__LIN_ROUND(V_MUL(x, log2e));
        VT r = V_FMA(n, ln2_lo, V_FMA(n, ln2_hi, x));
        em[u] = V_NAME(tsw__exp_poly)(r);
        ek[u] = n;
    }
#undef TSW__LIN_ROUND
    TSW__KL
    {
        VT kmax = V_MAX(V_MAX(dgk[u], upk[u]), lfk[u]);
        /* m 2^(k - kmax): add (k - kmax) to the exponent field (m >= 1, result normal) */
#define TSW__LIN_TERM(m, k)                                                                   \
    VF_CAST(VI_ADD(VI_CAST(m), VI_SLLI(VI_CAST(V_ADD(V_MAX(lowest, V_SUB((k), kmax)), shifter)), \
                                       TSW__LIN_MANT)))
        VT m = TSW_SDTW_LIN_CELL(em[u], TSW__LIN_TERM(dgm[u], dgk[u]),
                                 TSW__LIN_TERM(upm[u], upk[u]), TSW__LIN_TERM(lfm[u], lfk[u]),
                                 V_ADD, V_MUL);
#undef TSW__LIN_TERM
        /* renormalise m (in [0.7, 8.5)) into [1, 2): its exponent moves into k */
        VI bits = VI_CAST(m);
        VT e = V_SUB(VF_CAST(VI_OR(VI_SRLI(bits, TSW__LIN_MANT), VI_CAST(two_p))), expo0);
        om[u] = VF_CAST(VI_OR(VI_AND(bits, mant), one));
        ok[u] = V_ADD(V_ADD(kmax, ek[u]), e);
    }
}

/* R = -gamma log(m 2^k) of one lane, in double; +inf for the zero representation. */
static inline double V_NAME(tsw__lin_value)(double m, double k, double gamma)
{
    if (k < (double)TSW__LIN_ZERO / 10)
        return (double)INFINITY;
    return -gamma * (k * 0.69314718055994530942 + log(m));
}
#else
#define TSW__LIN 0
#endif

/* out[i] = exp or log of in[i] through this instantiation (accuracy tests, benchmarks). */
static inline void V_NAME(tsw_vmath_apply)(int fn, const T *in, T *out, int64_t count)
{
    int64_t i = 0;
    for (; i + VL <= count; i += VL) {
        VT x = V_LOADU(in + i);
        V_STOREU(out + i, fn ? V_NAME(tsw_vlog)(x) : V_NAME(tsw_vexp)(x));
    }
    if (i < count) {
        T buf[VL];
        for (int l = 0; l < VL; ++l)
            buf[l] = i + l < count ? in[i + l] : (T)1;
        VT x = V_LOADU(buf);
        V_STOREU(buf, fn ? V_NAME(tsw_vlog)(x) : V_NAME(tsw_vexp)(x));
        for (int l = 0; i + l < count; ++l)
            out[i + l] = buf[l];
    }
}
