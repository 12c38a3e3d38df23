/*
 * One instantiation of path_impl.h per precision for the ISA suffix TSW__PATH_ISA (base or
 * avx2): included by path.c and path_avx2.c, which differ only in their compile flags.
 */
#include "../common/path.h"
#include "path.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef TSW__PATH_COMMON_DEFINED
#define TSW__PATH_COMMON_DEFINED
#define TSW__PATH_PROGRESS_NS 50000000LL /* 50 ms, as the batch driver */
#define TSW__PATH_MAX_THREADS 256
#define TSW__LT(a, b) ((a) < (b))
#define TSW__SEL(mk, a, b) ((mk) ? (a) : (b))
#endif

#define TSW__PCAT2(a, b) a##_##b
#define TSW__PCAT(a, b) TSW__PCAT2(a, b)

#define T double
#define SFX TSW__PCAT(TSW__PATH_ISA, f64)
#define INF TSW_INF_F64
#define SQRT sqrt
#define FABS fabs
#define CELL tsw_path_cell_f64
#define ILANE int64_t
#define SIGNBIT INT64_MIN
#include "path_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT
#undef FABS
#undef CELL
#undef ILANE
#undef SIGNBIT

#define T float
#define SFX TSW__PCAT(TSW__PATH_ISA, f32)
#define INF TSW_INF_F32
#define SQRT sqrtf
#define FABS fabsf
#define CELL tsw_path_cell_f32
#define ILANE int32_t
#define SIGNBIT INT32_MIN
#include "path_impl.h"
#undef T
#undef SFX
#undef INF
#undef SQRT
#undef FABS
#undef CELL
#undef ILANE
#undef SIGNBIT
