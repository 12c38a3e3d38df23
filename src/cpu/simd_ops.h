/*
 * One vocabulary of vector operations, so that each kernel template (pair_diag_impl.h,
 * lanes_impl.h, vecmath.h) is written once and instantiated per instruction set and
 * precision. Include this header (it has no include guard on purpose: every inclusion
 * redefines the vocabulary) after defining
 *
 *   TSW_V_ISA     0 scalar C (VL = 1), 1 SSE2 (128-bit), 2 AVX2 + FMA (256-bit)
 *   TSW_V_DOUBLE  1 for double, 0 for float
 *
 * and it defines
 *
 *   T, VT, VL     the scalar type, the vector type and its lane count
 *   VM            a lane mask (the vector type itself for SSE2/AVX2, int for scalar)
 *   V_NAME(x)     x suffixed with the ISA and precision (x_avx2_f64 ...), so that one
 *                 translation unit can hold several instantiations
 *   V_PNAME(x)    x suffixed with the precision only (tsw_lp_f64 ...): src/common helpers
 *   V_*           loads, stores, arithmetic, comparisons and selects, lane for lane
 *   VI_*          integer views of the lanes (64-bit lanes for double, 32-bit for float),
 *                 used by the exponent manipulation in vecmath.h (SIMD ISAs only)
 *
 * V_SIGNX(a, s) is a with its sign flipped in the lanes where s is -0 (s holds +0 or -0 in
 * every lane: a bitwise xor on vectors; exact).
 * V_ANY(m) is non-zero when any lane of mask m is set; V_CMPNLT(a, b) is !(a < b), true
 * for NaN lanes.
 * Conventions: V_MIN(a, b) is a < b ? a : b lane by lane (minpd/minps), exactly the
 * TSW_MIN of the scalar reference; V_SEL(m, a, b) is m ? a : b; V_FMA(a, b, c) is a*b + c,
 * fused where the ISA has FMA. Files that instantiate TSW_V_ISA == 2 must be compiled with
 * -mavx2 -mfma (the *_avx2.c files) and only be entered when tsw__cpu_level() >= 2.
 */

#undef T
#undef VT
#undef VL
#undef VM
#undef V_NAME
#undef V_NAME_
#undef V_NAME__
#undef V_SFX
#undef V_PNAME
#undef V_PNAME_
#undef V_PNAME__
#undef V_PSFX
#undef V_INF
#undef V_ZERO
#undef V_SET1
#undef V_LOAD
#undef V_LOADU
#undef V_STORE
#undef V_STOREU
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_MIN
#undef V_MAX
#undef V_SQRT
#undef V_ABS
#undef V_FMA
#undef V_CMPLT
#undef V_CMPLE
#undef V_CMPNLT
#undef V_CMPGT
#undef V_CMPEQ
#undef V_CMPNAN
#undef V_MOR
#undef V_MAND
#undef V_SIGNX
#undef V_ANY
#undef V_SEL
#undef V_MASK_ONE
#undef V_POW
#undef V_EXP_LIBM
#undef V_LOG_LIBM
#undef VI
#undef VI_CAST
#undef VF_CAST
#undef VI_SET1
#undef VI_ADD
#undef VI_SUB
#undef VI_AND
#undef VI_OR
#undef VI_CVTF
#undef TSW__LIN_MANT
#undef VI_SLLI
#undef VI_SRLI
#undef S_SQRT
#undef S_FABS
#undef S_POW
#undef V_NEXT_UP
#undef V_NEXT_DOWN

/* Kernel building blocks are forced inline so that each instantiation specialises on its
 * compile-time arguments (measure, cost, dim == 1). */
#ifndef TSW_FORCEINLINE
#if defined(__GNUC__)
#define TSW_FORCEINLINE static inline __attribute__((always_inline))
#else
#define TSW_FORCEINLINE static inline
#endif
#endif

/* Loops over the rows of a strip or the K vectors of a step are unrolled completely at any
 * optimisation level, so that their per-row values live in registers. */
#ifndef TSW__UNROLL
#if defined(__GNUC__) && !defined(__clang__)
#define TSW__UNROLL _Pragma("GCC unroll 16")
#elif defined(__clang__)
#define TSW__UNROLL _Pragma("unroll")
#else
#define TSW__UNROLL
#endif
#endif

#if !defined(TSW_V_ISA) || !defined(TSW_V_DOUBLE)
#error "define TSW_V_ISA and TSW_V_DOUBLE before including simd_ops.h"
#endif

#define V_NAME__(x, s) x##_##s
#define V_NAME_(x, s) V_NAME__(x, s)
#define V_NAME(x) V_NAME_(x, V_SFX)
/* The scalar helpers of src/common for this precision: V_PNAME(tsw_lp) is tsw_lp_f64 ... */
#define V_PNAME__(x, s) x##_##s
#define V_PNAME_(x, s) V_PNAME__(x, s)
#define V_PNAME(x) V_PNAME_(x, V_PSFX)
#if TSW_V_DOUBLE
#define V_PSFX f64
#else
#define V_PSFX f32
#endif

/* Scalar libm functions of the precision (scalar code inside the templates). */
#if TSW_V_DOUBLE
#define S_SQRT sqrt
#define S_FABS fabs
#define S_POW pow
#define V_NEXT_UP(x) nextafter((x), HUGE_VAL)
#define V_NEXT_DOWN(x) nextafter((x), -HUGE_VAL)
#else
#define S_SQRT sqrtf
#define S_FABS fabsf
#define S_POW powf
#define V_NEXT_UP(x) nextafterf((x), HUGE_VALF)
#define V_NEXT_DOWN(x) nextafterf((x), -HUGE_VALF)
#endif

/* ---- scalar C: one "lane"; the reference's own libm calls --------------------------- */
#if TSW_V_ISA == 0

#if TSW_V_DOUBLE
#define T double
#define V_SFX scalar_f64
#define V_INF TSW_INF_F64
#define V_EXP_LIBM exp
#define V_LOG_LIBM log
#else
#define T float
#define V_SFX scalar_f32
#define V_INF TSW_INF_F32
#define V_EXP_LIBM expf
#define V_LOG_LIBM logf
#endif
#define VT T
#define VL 1
#define VM int
#define V_ZERO() ((T)0)
#define V_SET1(x) ((T)(x))
#define V_LOAD(p) (*(p))
#define V_LOADU(p) (*(p))
#define V_STORE(p, v) (*(p) = (v))
#define V_STOREU(p, v) (*(p) = (v))
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MUL(a, b) ((a) * (b))
#define V_DIV(a, b) ((a) / (b))
#define V_MIN(a, b) TSW_MIN((a), (b))
#define V_MAX(a, b) TSW_MAX((a), (b))
#define V_SQRT(a) S_SQRT(a)
#define V_ABS(a) S_FABS(a)
#define V_FMA(a, b, c) ((a) * (b) + (c))
#define V_POW(a, b) S_POW((a), (b))
#define V_CMPLT(a, b) ((a) < (b))
#define V_CMPLE(a, b) ((a) <= (b))
#define V_CMPNLT(a, b) (!((a) < (b)))
#define V_CMPGT(a, b) ((a) > (b))
#define V_CMPEQ(a, b) ((a) == (b))
#define V_CMPNAN(a) ((a) != (a))
#define V_MOR(a, b) ((a) || (b))
#define V_MAND(a, b) ((a) && (b))
#define V_SIGNX(a, s) (signbit(s) ? -(a) : (a))
#define V_ANY(m) (m)
#define V_SEL(m, a, b) ((m) ? (a) : (b))

/* ---- SSE2 (baseline of x86-64) ---------------------------------------------------------- */
#elif TSW_V_ISA == 1
#include <emmintrin.h>

#if TSW_V_DOUBLE
#define T double
#define V_SFX sse2_f64
#define V_INF TSW_INF_F64
#define VT __m128d
#define VL 2
#define V_ZERO() _mm_setzero_pd()
#define V_SET1(x) _mm_set1_pd(x)
#define V_LOAD(p) _mm_load_pd(p)
#define V_LOADU(p) _mm_loadu_pd(p)
#define V_STORE(p, v) _mm_store_pd((p), (v))
#define V_STOREU(p, v) _mm_storeu_pd((p), (v))
#define V_ADD(a, b) _mm_add_pd((a), (b))
#define V_SUB(a, b) _mm_sub_pd((a), (b))
#define V_MUL(a, b) _mm_mul_pd((a), (b))
#define V_DIV(a, b) _mm_div_pd((a), (b))
#define V_MIN(a, b) _mm_min_pd((a), (b))
#define V_MAX(a, b) _mm_max_pd((a), (b))
#define V_SQRT(a) _mm_sqrt_pd(a)
#define V_ABS(a) _mm_andnot_pd(_mm_set1_pd(-0.0), (a))
#define V_CMPLT(a, b) _mm_cmplt_pd((a), (b))
#define V_CMPLE(a, b) _mm_cmple_pd((a), (b))
#define V_CMPNLT(a, b) _mm_cmpnlt_pd((a), (b))
#define V_CMPGT(a, b) _mm_cmpgt_pd((a), (b))
#define V_CMPEQ(a, b) _mm_cmpeq_pd((a), (b))
#define V_CMPNAN(a) _mm_cmpunord_pd((a), (a))
#define V_MOR(a, b) _mm_or_pd((a), (b))
#define V_MAND(a, b) _mm_and_pd((a), (b))
#define V_SIGNX(a, s) _mm_xor_pd((a), (s))
#define V_ANY(m) _mm_movemask_pd(m)
#define V_SEL(m, a, b) _mm_or_pd(_mm_and_pd((m), (a)), _mm_andnot_pd((m), (b)))
#define V_MASK_ONE(m) _mm_and_pd((m), _mm_set1_pd(1.0))
#define VI __m128i
#define VI_CAST(v) _mm_castpd_si128(v)
#define VF_CAST(i) _mm_castsi128_pd(i)
#define VI_SET1(x) _mm_set1_epi64x(x)
#define VI_ADD(a, b) _mm_add_epi64((a), (b))
#define VI_SUB(a, b) _mm_sub_epi64((a), (b))
#define VI_SLLI(a, n) _mm_slli_epi64((a), (n))
#define VI_SRLI(a, n) _mm_srli_epi64((a), (n))
#define VI_AND(a, b) _mm_and_si128((a), (b))
#define VI_OR(a, b) _mm_or_si128((a), (b))
#else
#define T float
#define V_SFX sse2_f32
#define V_INF TSW_INF_F32
#define VT __m128
#define VL 4
#define V_ZERO() _mm_setzero_ps()
#define V_SET1(x) _mm_set1_ps(x)
#define V_LOAD(p) _mm_load_ps(p)
#define V_LOADU(p) _mm_loadu_ps(p)
#define V_STORE(p, v) _mm_store_ps((p), (v))
#define V_STOREU(p, v) _mm_storeu_ps((p), (v))
#define V_ADD(a, b) _mm_add_ps((a), (b))
#define V_SUB(a, b) _mm_sub_ps((a), (b))
#define V_MUL(a, b) _mm_mul_ps((a), (b))
#define V_DIV(a, b) _mm_div_ps((a), (b))
#define V_MIN(a, b) _mm_min_ps((a), (b))
#define V_MAX(a, b) _mm_max_ps((a), (b))
#define V_SQRT(a) _mm_sqrt_ps(a)
#define V_ABS(a) _mm_andnot_ps(_mm_set1_ps(-0.0f), (a))
#define V_CMPLT(a, b) _mm_cmplt_ps((a), (b))
#define V_CMPLE(a, b) _mm_cmple_ps((a), (b))
#define V_CMPNLT(a, b) _mm_cmpnlt_ps((a), (b))
#define V_CMPGT(a, b) _mm_cmpgt_ps((a), (b))
#define V_CMPEQ(a, b) _mm_cmpeq_ps((a), (b))
#define V_CMPNAN(a) _mm_cmpunord_ps((a), (a))
#define V_MOR(a, b) _mm_or_ps((a), (b))
#define V_MAND(a, b) _mm_and_ps((a), (b))
#define V_SIGNX(a, s) _mm_xor_ps((a), (s))
#define V_ANY(m) _mm_movemask_ps(m)
#define V_SEL(m, a, b) _mm_or_ps(_mm_and_ps((m), (a)), _mm_andnot_ps((m), (b)))
#define V_MASK_ONE(m) _mm_and_ps((m), _mm_set1_ps(1.0f))
#define VI __m128i
#define VI_CAST(v) _mm_castps_si128(v)
#define VF_CAST(i) _mm_castsi128_ps(i)
#define VI_SET1(x) _mm_set1_epi32(x)
#define VI_ADD(a, b) _mm_add_epi32((a), (b))
#define VI_SUB(a, b) _mm_sub_epi32((a), (b))
#define VI_SLLI(a, n) _mm_slli_epi32((a), (n))
#define VI_SRLI(a, n) _mm_srli_epi32((a), (n))
#define VI_AND(a, b) _mm_and_si128((a), (b))
#define VI_OR(a, b) _mm_or_si128((a), (b))
#define VI_CVTF(a) _mm_cvtepi32_ps(a)
#endif
#define VM VT
#define V_FMA(a, b, c) V_ADD(V_MUL((a), (b)), (c))

/* ---- AVX2 + FMA ------------------------------------------------------------------------- */
#elif TSW_V_ISA == 2
#include <immintrin.h>

#if TSW_V_DOUBLE
#define T double
#define V_SFX avx2_f64
#define TSW__LIN_MANT 52
#define V_INF TSW_INF_F64
#define VT __m256d
#define VL 4
#define V_ZERO() _mm256_setzero_pd()
#define V_SET1(x) _mm256_set1_pd(x)
#define V_LOAD(p) _mm256_load_pd(p)
#define V_LOADU(p) _mm256_loadu_pd(p)
#define V_STORE(p, v) _mm256_store_pd((p), (v))
#define V_STOREU(p, v) _mm256_storeu_pd((p), (v))
#define V_ADD(a, b) _mm256_add_pd((a), (b))
#define V_SUB(a, b) _mm256_sub_pd((a), (b))
#define V_MUL(a, b) _mm256_mul_pd((a), (b))
#define V_DIV(a, b) _mm256_div_pd((a), (b))
#define V_MIN(a, b) _mm256_min_pd((a), (b))
#define V_MAX(a, b) _mm256_max_pd((a), (b))
#define V_SQRT(a) _mm256_sqrt_pd(a)
#define V_ABS(a) _mm256_andnot_pd(_mm256_set1_pd(-0.0), (a))
#define V_FMA(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define V_CMPLT(a, b) _mm256_cmp_pd((a), (b), _CMP_LT_OQ)
#define V_CMPLE(a, b) _mm256_cmp_pd((a), (b), _CMP_LE_OQ)
#define V_CMPNLT(a, b) _mm256_cmp_pd((a), (b), _CMP_NLT_UQ)
#define V_CMPGT(a, b) _mm256_cmp_pd((a), (b), _CMP_GT_OQ)
#define V_CMPEQ(a, b) _mm256_cmp_pd((a), (b), _CMP_EQ_OQ)
#define V_CMPNAN(a) _mm256_cmp_pd((a), (a), _CMP_UNORD_Q)
#define V_MOR(a, b) _mm256_or_pd((a), (b))
#define V_MAND(a, b) _mm256_and_pd((a), (b))
#define V_SIGNX(a, s) _mm256_xor_pd((a), (s))
#define V_ANY(m) _mm256_movemask_pd(m)
#define V_SEL(m, a, b) _mm256_blendv_pd((b), (a), (m))
#define V_MASK_ONE(m) _mm256_and_pd((m), _mm256_set1_pd(1.0))
#define VI __m256i
#define VI_CAST(v) _mm256_castpd_si256(v)
#define VF_CAST(i) _mm256_castsi256_pd(i)
#define VI_SET1(x) _mm256_set1_epi64x(x)
#define VI_ADD(a, b) _mm256_add_epi64((a), (b))
#define VI_SUB(a, b) _mm256_sub_epi64((a), (b))
#define VI_SLLI(a, n) _mm256_slli_epi64((a), (n))
#define VI_SRLI(a, n) _mm256_srli_epi64((a), (n))
#define VI_AND(a, b) _mm256_and_si256((a), (b))
#define VI_OR(a, b) _mm256_or_si256((a), (b))
#else
#define T float
#define V_SFX avx2_f32
#define TSW__LIN_MANT 23
#define V_INF TSW_INF_F32
#define VT __m256
#define VL 8
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_load_ps(p)
#define V_LOADU(p) _mm256_loadu_ps(p)
#define V_STORE(p, v) _mm256_store_ps((p), (v))
#define V_STOREU(p, v) _mm256_storeu_ps((p), (v))
#define V_ADD(a, b) _mm256_add_ps((a), (b))
#define V_SUB(a, b) _mm256_sub_ps((a), (b))
#define V_MUL(a, b) _mm256_mul_ps((a), (b))
#define V_DIV(a, b) _mm256_div_ps((a), (b))
#define V_MIN(a, b) _mm256_min_ps((a), (b))
#define V_MAX(a, b) _mm256_max_ps((a), (b))
#define V_SQRT(a) _mm256_sqrt_ps(a)
#define V_ABS(a) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), (a))
#define V_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define V_CMPLT(a, b) _mm256_cmp_ps((a), (b), _CMP_LT_OQ)
#define V_CMPLE(a, b) _mm256_cmp_ps((a), (b), _CMP_LE_OQ)
#define V_CMPNLT(a, b) _mm256_cmp_ps((a), (b), _CMP_NLT_UQ)
#define V_CMPGT(a, b) _mm256_cmp_ps((a), (b), _CMP_GT_OQ)
#define V_CMPEQ(a, b) _mm256_cmp_ps((a), (b), _CMP_EQ_OQ)
#define V_CMPNAN(a) _mm256_cmp_ps((a), (a), _CMP_UNORD_Q)
#define V_MOR(a, b) _mm256_or_ps((a), (b))
#define V_MAND(a, b) _mm256_and_ps((a), (b))
#define V_SIGNX(a, s) _mm256_xor_ps((a), (s))
#define V_ANY(m) _mm256_movemask_ps(m)
#define V_SEL(m, a, b) _mm256_blendv_ps((b), (a), (m))
#define V_MASK_ONE(m) _mm256_and_ps((m), _mm256_set1_ps(1.0f))
#define VI __m256i
#define VI_CAST(v) _mm256_castps_si256(v)
#define VF_CAST(i) _mm256_castsi256_ps(i)
#define VI_SET1(x) _mm256_set1_epi32(x)
#define VI_ADD(a, b) _mm256_add_epi32((a), (b))
#define VI_SUB(a, b) _mm256_sub_epi32((a), (b))
#define VI_SLLI(a, n) _mm256_slli_epi32((a), (n))
#define VI_SRLI(a, n) _mm256_srli_epi32((a), (n))
#define VI_AND(a, b) _mm256_and_si256((a), (b))
#define VI_OR(a, b) _mm256_or_si256((a), (b))
#define VI_CVTF(a) _mm256_cvtepi32_ps(a)
#endif
#define VM VT

#else
#error "TSW_V_ISA must be 0 (scalar), 1 (SSE2) or 2 (AVX2)"
#endif
