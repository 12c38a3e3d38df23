/*
 * AVX2 instance of LB_Keogh's sums (knn_boxes.h) for the nearest-neighbour search
 * (cpu/knn.c): the same C, vectorised 4 doubles wide by the compiler. Compiled with
 * -mavx2 -mfma and -ffp-contract=off (CMakeLists.txt: the same bits as the portable
 * instance); entered only when tsw__cpu_level() >= 2.
 */
#include "../common/band.h"
#include "../common/cost.h"
#include "../common/recurrence.h"
#include "../internal.h"
#include "kernels.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "knn_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include <math.h>

#define T double
#define SFX f64
#define INF TSW_INF_F64
#define SQRT sqrt
#include "knn_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT

#define T float
#define SFX f32
#define INF TSW_INF_F32
#define SQRT sqrtf
#include "knn_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT

#define TSW__BOXES_ISA avx2
#include "knn_boxes.h"
#undef TSW__BOXES_ISA
#endif
