/*
 * AVX2 + FMA instantiation of the lane kernels (lanes_impl.h): 4 double or 8 float pairs
 * per vector. Compiled with -mavx2 -mfma (CMakeLists.txt, *_avx2.c); entered only when
 * tsw__cpu_level() >= 2.
 */
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__) || !defined(__FMA__)
#error "lanes_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"

#include <math.h>

#define TSW_V_ISA 2
#include "lanes_inst.h"
#undef TSW_V_ISA
#endif
