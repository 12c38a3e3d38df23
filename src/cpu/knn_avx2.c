/*
 * AVX2 instance of LB_Keogh's sums (knn_boxes.h) for the nearest-neighbour search
 * (cpu/knn.c): one channel's blocks of 16 points in intrinsics (below), with the portable
 * loop's operations in its order; several channels through knn_box. Compiled with -mavx2
 * -mfma and -ffp-contract=off (CMakeLists.txt: the same bits as the portable instance);
 * entered only when tsw__cpu_level() >= 2.
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

#include "knn_inst.h"

#include <immintrin.h>

/* knn_boxes.h's 16 points in vectors of four: lane l of acc takes the points j + 4 u + l,
 * the portable loop's acc[(t) % 4], with the same operations in the same order (the
 * differences and their maxima with 0 are exact; no product is fused). */
static inline __m256d tsw__box4(__m256d x, __m256d l, __m256d h, int ab, int eu)
{
    const __m256d z = _mm256_setzero_pd();
    __m256d d = _mm256_add_pd(_mm256_max_pd(_mm256_sub_pd(l, x), z),
                              _mm256_max_pd(_mm256_sub_pd(x, h), z));
    if (!ab)
        d = _mm256_mul_pd(d, d);
    return eu ? _mm256_sqrt_pd(d) : d;
}
static inline void tsw__boxes16_f64(const double *v, const double *lo, const double *hi,
                                    int64_t j, double *c, double *acc, int ab, int eu)
{
    __m256d a = _mm256_loadu_pd(acc);
    for (int u = 0; u < 16; u += 4) {
        __m256d r = tsw__box4(_mm256_loadu_pd(v + j + u), _mm256_loadu_pd(lo + j + u),
                              _mm256_loadu_pd(hi + j + u), ab, eu);
        _mm256_storeu_pd(c + j + u, r);
        a = _mm256_add_pd(a, r);
    }
    _mm256_storeu_pd(acc, a);
}
static inline void tsw__boxes16_f32(const float *v, const float *lo, const float *hi,
                                    int64_t j, double *c, double *acc, int ab, int eu)
{
    __m256d a = _mm256_loadu_pd(acc);
    for (int u = 0; u < 16; u += 4) {
        __m256d r = tsw__box4(_mm256_cvtps_pd(_mm_loadu_ps(v + j + u)),
                              _mm256_cvtps_pd(_mm_loadu_ps(lo + j + u)),
                              _mm256_cvtps_pd(_mm_loadu_ps(hi + j + u)), ab, eu);
        _mm256_storeu_pd(c + j + u, r);
        a = _mm256_add_pd(a, r);
    }
    _mm256_storeu_pd(acc, a);
}
#define TSW__BOXES_16(SFX, v, lo, hi, j, c, acc, ab, eu)                                     \
    tsw__boxes16_##SFX((v), (lo), (hi), (j), (c), (acc), (ab), (eu))

#define TSW__BOXES_ISA avx2
#include "knn_boxes.h"
#undef TSW__BOXES_ISA
#endif
