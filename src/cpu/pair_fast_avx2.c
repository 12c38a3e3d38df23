/*
 * AVX2 + FMA instantiation of the anti-diagonal single-pair kernel (pair_diag_impl.h):
 * 4 double or 8 float cells of one anti-diagonal per vector. Compiled with -mavx2 -mfma
 * (CMakeLists.txt, *_avx2.c); entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__) || !defined(__FMA__)
#error "pair_fast_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/recurrence.h"

#include <math.h>

#define TSW_V_ISA 2
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "pair_diag_impl.h"
static void tsw__vmath_avx2_f64(int fn, const double *in, double *out, int64_t n)
{
    V_NAME(tsw_vmath_apply)(fn, in, out, n);
}
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "pair_diag_impl.h"
static void tsw__vmath_avx2_f32(int fn, const float *in, float *out, int64_t n)
{
    V_NAME(tsw_vmath_apply)(fn, in, out, n);
}
#undef TSW_V_DOUBLE
#undef TSW_V_ISA

void tsw__vmath_avx2(tsw_dtype dtype, int fn, const void *in, void *out, int64_t count)
{
    if (dtype == TSW_F32)
        tsw__vmath_avx2_f32(fn, in, out, count);
    else
        tsw__vmath_avx2_f64(fn, in, out, count);
}
#endif
