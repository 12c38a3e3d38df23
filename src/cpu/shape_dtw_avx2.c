/*
 * AVX2 instance of shape DTW's fast fill (shape_dtw_impl.h): the same sums, 4 doubles a
 * vector. Compiled with -mavx2 -mfma like every *_avx2.c, and with -ffp-contract=off
 * (CMakeLists.txt): the reference's bits. Entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "shape_dtw_avx2.c must be compiled with -mavx2"
#endif
#include "../common/band.h"
#include "../common/shape.h"
#include "../internal.h"

#include <string.h>

#define TSW__SHAPE_SFX avx2
#include "shape_dtw_impl.h"
#undef TSW__SHAPE_SFX
#endif
