/*
 * Inner loops of the CPU shapelet fast path (cpu/shapelet.c, shp_fill_fast): for one
 * candidate and one series, the running dot products acc[u] = sum_{t<l} a[t] b[u+t] grow by
 * one term per length, and at a searched length every window u gets its score
 *     (acc[u] - ma (P[u+l] - P[u])) * isd[u]
 * of which the largest is kept (common/shapelet.h, tsw_shp_d2_from_score). Instantiations:
 * portable C (below, vectorised by the compiler at the baseline ISA) and AVX2
 * (shapelet_avx2.c, entered only when tsw__cpu_level() >= 2). Both do the same multiplies
 * and adds in the same order, without contraction into fused multiply-adds (both files are
 * compiled with -ffp-contract=off, as the GPU's kernel with -fmad=false), so every score,
 * hence every shapelet, is the same bit for bit on every instruction set and on the GPU.
 */
#ifndef TSW_CPU_SHAPELET_KERNELS_H
#define TSW_CPU_SHAPELET_KERNELS_H

#include <stdint.h>

/* Lengths that are not searched, at most TSW_SHP_FUSE at once: acc[u] += al[t] * bl[u + t]
 * for t = 0 .. k - 1 in that order (the roundings of k passes of one term), u < nu. */
#define TSW_SHP_FUSE 8
void tsw__shp_grow_k_avx2(double *acc, const double *al, int64_t k, const double *bl,
                          int64_t nu);
/* The same, then the largest score over u < nu of windows of length l (P: the series' prefix
 * sums, isd: 1/std of each window). */
double tsw__shp_grow_score_avx2(double *acc, double al, const double *bl, const double *P,
                                int64_t l, double ma, const double *isd, int64_t nu);
/* The same for four candidates k < 4 of one series and one length (their dot products acc[k],
 * values al[k] and means ma[k]): bl, the window sums and isd loaded once for the four; best[k]
 * is candidate k's largest score. */
void tsw__shp_grow_score4_avx2(double *const acc[4], const double al[4], const double ma[4],
                               const double *bl, const double *P, int64_t l,
                               const double *isd, int64_t nu, double best[4]);
/* below[k] = how many raw[m] < raw[k], m < n (the ranks that sort an order line). */
void tsw__shp_count_below_avx2(const double *raw, int64_t n, int64_t *below);

#endif
