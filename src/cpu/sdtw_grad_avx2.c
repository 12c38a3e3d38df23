/*
 * AVX2 + FMA weights of the soft-DTW backward pass (sdtw_grad_impl.h): for a row's cells
 * j < count, w[j] = exp((s[j] - r[j]) * inv_gamma) for the three successors, with
 * vecmath.h's exponential (within 1 ulp of the C library; exp(-inf) = 0). Compiled with
 * -mavx2 -mfma (CMakeLists.txt, *_avx2.c); entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__) || !defined(__FMA__)
#error "sdtw_grad_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include "../common/recurrence.h"

#include <math.h>

#define TSW_V_ISA 2
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#define TSW__SDG_WEIGHTS                                                                      \
    void V_NAME(tsw__sdg_weights)(const T *s_down, const T *s_right, const T *s_diag,          \
                                  const T *r, T inv_gamma, int64_t count, T *w_down,          \
                                  T *w_right, T *w_diag)                                       \
    {                                                                                         \
        const VT ig = V_SET1(inv_gamma);                                                      \
        int64_t j = 0;                                                                        \
        for (; j + VL <= count; j += VL) {                                                    \
            VT rr = V_LOADU(r + j);                                                           \
            VT e[3] = {V_MUL(V_SUB(V_LOADU(s_down + j), rr), ig),                             \
                       V_MUL(V_SUB(V_LOADU(s_right + j), rr), ig),                            \
                       V_MUL(V_SUB(V_LOADU(s_diag + j), rr), ig)};                            \
            V_NAME(tsw_vexp_k)(e, 3);                                                         \
            V_STOREU(w_down + j, e[0]);                                                       \
            V_STOREU(w_right + j, e[1]);                                                      \
            V_STOREU(w_diag + j, e[2]);                                                       \
        }                                                                                     \
        for (; j < count; ++j) {                                                              \
            w_down[j] = V_EXP_S((s_down[j] - r[j]) * inv_gamma);                              \
            w_right[j] = V_EXP_S((s_right[j] - r[j]) * inv_gamma);                            \
            w_diag[j] = V_EXP_S((s_diag[j] - r[j]) * inv_gamma);                              \
        }                                                                                     \
    }
#define V_EXP_S exp
TSW__SDG_WEIGHTS
#undef V_EXP_S
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "vecmath.h"
#define V_EXP_S expf
TSW__SDG_WEIGHTS
#undef V_EXP_S
#undef TSW_V_DOUBLE
#undef TSW_V_ISA
#endif
