/*
 * knn_impl.h instantiated for both precisions (cpu/knn.c and cpu/knn_avx2.c; cpu/search.c
 * needs double only and instantiates it itself).
 */
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
