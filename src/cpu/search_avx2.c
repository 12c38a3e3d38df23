/*
 * AVX2 instantiation of the CPU search's per-chunk kernels (search_impl.h): the same C,
 * vectorised 4 doubles wide by the compiler, plus the univariate windows' statistics
 * written with intrinsics (below). Compiled with -mavx2 -mfma (the *_avx2.c rule of
 * CMakeLists.txt); entered only when tsw__cpu_level() >= 2. Fused multiply-adds and the
 * approximate square root round these running values apart from the portable instance's:
 * they only prune, against the slack of common/search.h (relative 1e-7), and the search
 * recomputes its candidates exactly.
 */
#include "search.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "search_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include <immintrin.h>
#include <math.h>

/*
 * dim 1, z-normalised: the mean and 1 / std of the nb windows of a block from its prefix
 * sums (search.h: x, s1, s2, ch from the block's first point), 4 windows a step.
 * 1 / sqrt(var) is float's approximate reciprocal square root (relative error below
 * 1.5 2^-12) refined by two Newton steps in double (below 2^-43, against the 1e-7 slack the
 * pruning keeps), where a square root and a division per window took most of the chunk's
 * preparation; a step with a variance outside [1e-30, 1e30] (float's range, with room)
 * takes the exact form. A constant window (no value change: ch) gets its value and 0, so
 * its z-normalised values are 0; a window whose variance is not above K times the sum of
 * squares (search.h, tsw__search_cond) gets -1, to be computed again in two passes.
 */
static void tsw__search_stats1_avx2(const double *x, const double *s1, const double *s2,
                                    const int64_t *ch, int64_t n, int64_t nw, double K,
                                    double *wmu, double *winv)
{
    const double rn = 1.0 / (double)n, x0 = x[0];
    const __m256d vrn = _mm256_set1_pd(rn), vx0 = _mm256_set1_pd(x0), vK = _mm256_set1_pd(K),
                  lo = _mm256_set1_pd(1e-30), hi = _mm256_set1_pd(1e30),
                  half = _mm256_set1_pd(0.5), three_halves = _mm256_set1_pd(1.5),
                  zero = _mm256_setzero_pd(), minus1 = _mm256_set1_pd(-1.0);
    int64_t b = 0;
    for (; b + 4 <= nw; b += 4) {
        const __m256d s2hi = _mm256_loadu_pd(s2 + b + n);
        const __m256d m1 =
            _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(s1 + b + n), _mm256_loadu_pd(s1 + b)), vrn);
        const __m256d m2 = _mm256_mul_pd(_mm256_sub_pd(s2hi, _mm256_loadu_pd(s2 + b)), vrn);
        const __m256d var = _mm256_sub_pd(m2, _mm256_mul_pd(m1, m1));
        const __m256d in = _mm256_and_pd(_mm256_cmp_pd(var, lo, _CMP_GE_OQ),
                                         _mm256_cmp_pd(var, hi, _CMP_LE_OQ));
        __m256d inv;
        if (_mm256_movemask_pd(in) == 15) {
            __m256d y = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(var)));
            const __m256d h = _mm256_mul_pd(half, var);
            y = _mm256_mul_pd(y, _mm256_fnmadd_pd(_mm256_mul_pd(h, y), y, three_halves));
            y = _mm256_mul_pd(y, _mm256_fnmadd_pd(_mm256_mul_pd(h, y), y, three_halves));
            inv = y;
        } else {
            const __m256d pos = _mm256_cmp_pd(var, zero, _CMP_GT_OQ);
            inv = _mm256_and_pd(pos, _mm256_div_pd(_mm256_set1_pd(1.0), _mm256_sqrt_pd(var)));
        }
        const __m256d good = _mm256_cmp_pd(var, _mm256_mul_pd(vK, s2hi), _CMP_GT_OQ);
        inv = _mm256_blendv_pd(minus1, inv, good);
        const __m256i flat = _mm256_cmpeq_epi64(_mm256_loadu_si256((const __m256i *)(ch + b + n)),
                                                _mm256_loadu_si256((const __m256i *)(ch + b + 1)));
        const __m256d fl = _mm256_castsi256_pd(flat);
        _mm256_storeu_pd(wmu + b, _mm256_blendv_pd(_mm256_add_pd(m1, vx0), _mm256_loadu_pd(x + b), fl));
        _mm256_storeu_pd(winv + b, _mm256_andnot_pd(fl, inv));
    }
    for (; b < nw; ++b) {
        const double m1 = (s1[b + n] - s1[b]) * rn, m2 = (s2[b + n] - s2[b]) * rn;
        const double var = m2 - m1 * m1;
        const int flat = ch[b + n] - ch[b + 1] == 0;
        wmu[b] = flat ? x[b] : m1 + x0;
        winv[b] = flat ? 0 : !(var > K * s2[b + n]) ? -1 : var > 0 ? 1 / sqrt(var) : 0;
    }
}

#define TSW__SEARCH_STATS1 tsw__search_stats1_avx2
#define TSW__SEARCH_ISA avx2
#include "search_impl.h"
#undef TSW__SEARCH_ISA
#undef TSW__SEARCH_STATS1
#endif
