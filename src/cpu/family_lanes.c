/*
 * SIMD across pairs for the elastic family (lanes_impl.h with TSW__LANES_FAMILY: WDTW,
 * DDTW, WDDTW, ADTW, ERP, EDR, LCSS and one-channel MSM), SSE2: 2 double or 4 float pairs
 * per vector; the AVX2 instantiation lives in family_lanes_avx2.c. Both files are compiled
 * without contracted multiply-adds (CMakeLists.txt), so that each lane gives the bits of
 * family.c's single-pair kernel, whose cells these are (cdist equals the pair function).
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/elastic.h"
#include "../common/recurrence.h"
#include "kernels.h"

#include <math.h>

#if TSW_X86
#define TSW__LANES_FAMILY 1
#define TSW_V_ISA 1
#include "lanes_inst.h"
#undef TSW_V_ISA
#endif
