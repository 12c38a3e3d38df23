/* Host/device qualifiers so one helper serves the C (CPU) and CUDA backends. */
#ifndef TSW_COMMON_HD_H
#define TSW_COMMON_HD_H

#include <stdint.h>

#if defined(__CUDACC__)
#define TSW_HD __host__ __device__ __forceinline__
#else
#define TSW_HD static inline
#endif

#include <math.h>
/* +inf usable in host and device code alike (__builtin_huge_val is a constant for gcc,
 * clang and nvcc on both sides; INFINITY is not usable in __device__ code everywhere). */
#define TSW_INF_F64 (__builtin_huge_val())
#define TSW_INF_F32 (__builtin_huge_valf())

/* min/max that map to one minsd/minss (x86) or fmin (CUDA): the second operand wins when
 * the first is NaN, which never happens here because inputs are validated finite. */
#define TSW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TSW_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
