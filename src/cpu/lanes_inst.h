/*
 * lanes_impl.h instantiated for both precisions at the instruction set TSW_V_ISA the
 * including file defines (lanes.c and family_lanes.c: SSE2; lanes_avx2.c and
 * family_lanes_avx2.c: AVX2; the family files with TSW__LANES_FAMILY 1).
 */
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "lanes_impl.h"
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "vecmath.h"
#include "vcost.h"
#include "lanes_impl.h"
#undef TSW_V_DOUBLE
