/*
 * AVX2 instantiation of the shapelet fast path's inner loops (shapelet_kernels.h): four
 * windows per vector, two vectors per step so that the running maxima are two independent
 * chains. Compiled with -mavx2 -mfma (CMakeLists.txt, *_avx2.c) and -ffp-contract=off: a
 * multiply then an add, as the scalar loop in shapelet.c and the GPU (cuda/shapelet.cu) do,
 * so that the scores agree bit for bit. Entered only when tsw__cpu_level() >= 2.
 */
#include "kernels.h"
#include "shapelet_kernels.h"

#if TSW_X86
#if !defined(__AVX2__)
#error "shapelet_avx2.c must be compiled with -mavx2 -mfma"
#endif
#include <immintrin.h>

void tsw__shp_grow_k_avx2(double *acc, const double *al, int64_t k, const double *bl,
                          int64_t nu)
{
    __m256d va[TSW_SHP_FUSE];
    for (int64_t t = 0; t < k; ++t)
        va[t] = _mm256_set1_pd(al[t]);
    int64_t u = 0;
    for (; u + 8 <= nu; u += 8) { /* two vectors: two independent chains of k additions */
        __m256d d0 = _mm256_loadu_pd(acc + u), d1 = _mm256_loadu_pd(acc + u + 4);
        for (int64_t t = 0; t < k; ++t) {
            d0 = _mm256_add_pd(d0, _mm256_mul_pd(va[t], _mm256_loadu_pd(bl + u + t)));
            d1 = _mm256_add_pd(d1, _mm256_mul_pd(va[t], _mm256_loadu_pd(bl + u + 4 + t)));
        }
        _mm256_storeu_pd(acc + u, d0);
        _mm256_storeu_pd(acc + u + 4, d1);
    }
    for (; u < nu; ++u) {
        double d = acc[u];
        for (int64_t t = 0; t < k; ++t)
            d += al[t] * bl[u + t];
        acc[u] = d;
    }
}

double tsw__shp_grow_score_avx2(double *acc, double al, const double *bl, const double *P,
                                int64_t l, double ma, const double *isd, int64_t nu)
{
    const __m256d va = _mm256_set1_pd(al), vm = _mm256_set1_pd(ma);
    const double *Pl = P + l;
    __m256d m0 = _mm256_set1_pd(-__builtin_inf()), m1 = m0;
    int64_t u = 0;
    for (; u + 8 <= nu; u += 8) {
        __m256d d0 = _mm256_add_pd(_mm256_loadu_pd(acc + u),
                                   _mm256_mul_pd(va, _mm256_loadu_pd(bl + u)));
        __m256d d1 = _mm256_add_pd(_mm256_loadu_pd(acc + u + 4),
                                   _mm256_mul_pd(va, _mm256_loadu_pd(bl + u + 4)));
        _mm256_storeu_pd(acc + u, d0);
        _mm256_storeu_pd(acc + u + 4, d1);
        __m256d s0 = _mm256_sub_pd(_mm256_loadu_pd(Pl + u), _mm256_loadu_pd(P + u));
        __m256d s1 = _mm256_sub_pd(_mm256_loadu_pd(Pl + u + 4), _mm256_loadu_pd(P + u + 4));
        __m256d c0 = _mm256_mul_pd(_mm256_sub_pd(d0, _mm256_mul_pd(vm, s0)),
                                   _mm256_loadu_pd(isd + u));
        __m256d c1 = _mm256_mul_pd(_mm256_sub_pd(d1, _mm256_mul_pd(vm, s1)),
                                   _mm256_loadu_pd(isd + u + 4));
        m0 = _mm256_max_pd(m0, c0);
        m1 = _mm256_max_pd(m1, c1);
    }
    for (; u + 4 <= nu; u += 4) {
        __m256d d0 = _mm256_add_pd(_mm256_loadu_pd(acc + u),
                                   _mm256_mul_pd(va, _mm256_loadu_pd(bl + u)));
        _mm256_storeu_pd(acc + u, d0);
        __m256d s0 = _mm256_sub_pd(_mm256_loadu_pd(Pl + u), _mm256_loadu_pd(P + u));
        m0 = _mm256_max_pd(m0, _mm256_mul_pd(_mm256_sub_pd(d0, _mm256_mul_pd(vm, s0)),
                                             _mm256_loadu_pd(isd + u)));
    }
    double lanes[4];
    _mm256_storeu_pd(lanes, _mm256_max_pd(m0, m1));
    double best = lanes[0];
    for (int k = 1; k < 4; ++k)
        best = lanes[k] > best ? lanes[k] : best;
    for (; u < nu; ++u) {
        double dd = acc[u] + al * bl[u];
        acc[u] = dd;
        double c = (dd - ma * (Pl[u] - P[u])) * isd[u];
        best = c > best ? c : best;
    }
    return best;
}

void tsw__shp_count_below_avx2(const double *raw, int64_t n, int64_t *below)
{
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) { /* eight ranks at once: each raw[m] loaded once for them */
        const __m256d v0 = _mm256_loadu_pd(raw + k), v1 = _mm256_loadu_pd(raw + k + 4);
        __m256i c0 = _mm256_setzero_si256(), c1 = c0;
        for (int64_t m = 0; m < n; ++m) {
            const __m256d x = _mm256_broadcast_sd(raw + m);
            c0 = _mm256_sub_epi64(c0, _mm256_castpd_si256(_mm256_cmp_pd(x, v0, _CMP_LT_OQ)));
            c1 = _mm256_sub_epi64(c1, _mm256_castpd_si256(_mm256_cmp_pd(x, v1, _CMP_LT_OQ)));
        }
        _mm256_storeu_si256((__m256i *)(below + k), c0);
        _mm256_storeu_si256((__m256i *)(below + k + 4), c1);
    }
    for (; k < n; ++k) {
        int64_t c = 0;
        for (int64_t m = 0; m < n; ++m)
            c += raw[m] < raw[k];
        below[k] = c;
    }
}

void tsw__shp_grow_score4_avx2(double *const acc[4], const double al[4], const double ma[4],
                               const double *bl, const double *P, int64_t l,
                               const double *isd, int64_t nu, double best[4])
{
    const double *Pl = P + l;
    __m256d va[4], vm[4], mx[4];
    for (int k = 0; k < 4; ++k) {
        va[k] = _mm256_set1_pd(al[k]);
        vm[k] = _mm256_set1_pd(ma[k]);
        mx[k] = _mm256_set1_pd(-__builtin_inf());
    }
    /* the four rows in locals: stores through acc[k] cannot then change the pointers */
    double *restrict a0 = acc[0], *restrict a1 = acc[1], *restrict a2 = acc[2],
                     *restrict a3 = acc[3];
    int64_t u = 0;
#define SHP_STEP4(K, A)                                                                         \
    do {                                                                                       \
        __m256d d = _mm256_add_pd(_mm256_loadu_pd(A + u), _mm256_mul_pd(va[K], vb));          \
        _mm256_storeu_pd(A + u, d);                                                            \
        mx[K] = _mm256_max_pd(mx[K], _mm256_mul_pd(_mm256_sub_pd(d, _mm256_mul_pd(vm[K], vs)), \
                                                   vi));                                       \
    } while (0)
    for (; u + 4 <= nu; u += 4) {
        const __m256d vb = _mm256_loadu_pd(bl + u), vi = _mm256_loadu_pd(isd + u);
        const __m256d vs = _mm256_sub_pd(_mm256_loadu_pd(Pl + u), _mm256_loadu_pd(P + u));
        SHP_STEP4(0, a0);
        SHP_STEP4(1, a1);
        SHP_STEP4(2, a2);
        SHP_STEP4(3, a3);
    }
#undef SHP_STEP4
    for (int k = 0; k < 4; ++k) {
        double lanes[4];
        _mm256_storeu_pd(lanes, mx[k]);
        double m = lanes[0];
        for (int t = 1; t < 4; ++t)
            m = lanes[t] > m ? lanes[t] : m;
        for (int64_t v = u; v < nu; ++v) {
            double dd = acc[k][v] + al[k] * bl[v];
            acc[k][v] = dd;
            double c = (dd - ma[k] * (Pl[v] - P[v])) * isd[v];
            m = c > m ? c : m;
        }
        best[k] = m;
    }
}
#endif
