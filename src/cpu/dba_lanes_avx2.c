/*
 * AVX2 instantiation of DBA's alignment lanes (dba_lanes.c): 4 double or 8 float series a
 * vector. Compiled with -mavx2 -mfma like every *_avx2.c and with -ffp-contract=off
 * (CMakeLists.txt); entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"
#include "../common/path.h"

#include <stdint.h>
#include <string.h>

#if TSW_X86
#if !defined(__AVX2__)
#error "dba_lanes_avx2.c must be compiled with -mavx2"
#endif
#define TSW_V_ISA 2
#define TSW_V_DOUBLE 1
#include "simd_ops.h"
#include "dba_lanes_impl.h"
#undef TSW_V_DOUBLE
#define TSW_V_DOUBLE 0
#include "simd_ops.h"
#include "dba_lanes_impl.h"
#undef TSW_V_DOUBLE
#undef TSW_V_ISA
#endif
