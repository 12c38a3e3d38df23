/* Host/device qualifiers so one helper serves the C (CPU) and CUDA backends. */
#ifndef TSW_COMMON_HD_H
#define TSW_COMMON_HD_H

#include <stdint.h>

#if defined(__CUDACC__)
#define TSW_HD __host__ __device__ __forceinline__
#else
#define TSW_HD static inline
#endif

#if defined(__CUDACC__)
#include <math.h>
#define TSW_INF_F64 (__longlong_as_double(0x7ff0000000000000ULL))
#define TSW_INF_F32 (__int_as_float(0x7f800000))
#else
#include <math.h>
#define TSW_INF_F64 ((double)INFINITY)
#define TSW_INF_F32 ((float)INFINITY)
#endif

/* min/max that map to one minsd/minss (x86) or fmin (CUDA): the second operand wins when
 * the first is NaN, which never happens here because inputs are validated finite. */
#define TSW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TSW_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
