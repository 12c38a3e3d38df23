/*
 * AVX2 + FMA instantiation of the soft-DTW value + gradient pair kernel
 * (sdtw_grad_diag_impl.h): 4 cells of one anti-diagonal per vector, 4 vectors side by side,
 * vecmath.h's exponential and logarithm (within 1 ulp of the C library). Compiled with
 * -mavx2 -mfma (CMakeLists.txt, *_avx2.c); entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__) || !defined(__FMA__)
#error "sdtw_grad_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include "../common/band.h"
#include "../common/recurrence.h"
#include "../common/sdtw_grad.h"
#include "sdtw_grad_diag.h"

#include <math.h>
#include <stddef.h>

#define TSW_V_ISA 2
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#include "sdtw_grad_diag_impl.h"
#undef TSW_V_DOUBLE
#undef TSW_V_ISA
#endif
