/*
 * AVX2 instantiation of the elastic family's lanes (family_lanes.c): 4 double or 8 float
 * pairs per vector. Compiled with -mavx2 -mfma like every *_avx2.c, and with
 * -ffp-contract=off (CMakeLists.txt): no multiply-add fused, so each lane gives family.c's
 * bits. Entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "family_lanes_avx2.c must be compiled with -mavx2"
#endif
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"

#include <math.h>

#define TSW__LANES_FAMILY 1
#define TSW_V_ISA 2
#include "lanes_inst.h"
#undef TSW_V_ISA
#endif
