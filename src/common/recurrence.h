/*
 * Cell recurrences of the three measures: the one definition shared by the CPU reference,
 * the fast CPU kernels (scalar and SIMD lanes) and the CUDA kernels.
 *
 * The macros take the arithmetic as arguments so that SIMD code can instantiate the same
 * recurrence with vector operations; the TSW_HD functions below are the scalar forms.
 *
 *   DTW        D(i,j) = c(i,j) + min(D(i-1,j-1), D(i-1,j), D(i,j-1))
 *   TWED       D(i,j) = min(D(i-1,j) + del_a(i), D(i,j-1) + del_b(j), D(i-1,j-1) + match(i,j))
 *   Soft-DTW   R(i,j) = c(i,j) + softmin_gamma(R(i-1,j-1), R(i-1,j), R(i,j-1))
 *              softmin_gamma(r) = -gamma log sum_k exp(-r_k / gamma), evaluated with the
 *              minimum factored out: m - gamma log sum_k exp((m - r_k) / gamma), so that no
 *              exponent is positive (stable for tiny gamma and huge values).
 */
#ifndef TSW_COMMON_RECURRENCE_H
#define TSW_COMMON_RECURRENCE_H

#include "tsw_hd.h"

#define TSW_DTW_CELL(cost, diag, up, left, MIN) ((cost) + MIN(MIN((diag), (up)), (left)))

#define TSW_TWED_CELL(del_a_total, del_b_total, match_total, MIN)                             \
    MIN(MIN((del_a_total), (del_b_total)), (match_total))

TSW_HD double tsw_dtw_cell_f64(double c, double diag, double up, double left)
{
    return TSW_DTW_CELL(c, diag, up, left, TSW_MIN);
}
TSW_HD float tsw_dtw_cell_f32(float c, float diag, float up, float left)
{
    return TSW_DTW_CELL(c, diag, up, left, TSW_MIN);
}

/* TWED cell from its three candidate moves (costs already added to their predecessors). */
TSW_HD double tsw_twed_cell_f64(double del_a, double del_b, double match)
{
    return TSW_TWED_CELL(del_a, del_b, match, TSW_MIN);
}
TSW_HD float tsw_twed_cell_f32(float del_a, float del_b, float match)
{
    return TSW_TWED_CELL(del_a, del_b, match, TSW_MIN);
}

/* softmin_gamma of three values; +inf when all three are +inf. inv_gamma = 1 / gamma. */
TSW_HD double tsw_softmin3_f64(double a, double b, double c, double gamma, double inv_gamma)
{
    double m = TSW_MIN(TSW_MIN(a, b), c);
    if (m == TSW_INF_F64)
        return m;
    double s = exp((m - a) * inv_gamma) + exp((m - b) * inv_gamma) + exp((m - c) * inv_gamma);
    return m - gamma * log(s);
}
TSW_HD float tsw_softmin3_f32(float a, float b, float c, float gamma, float inv_gamma)
{
    float m = TSW_MIN(TSW_MIN(a, b), c);
    if (m == TSW_INF_F32)
        return m;
    float s = expf((m - a) * inv_gamma) + expf((m - b) * inv_gamma) + expf((m - c) * inv_gamma);
    return m - gamma * logf(s);
}

TSW_HD double tsw_sdtw_cell_f64(double c, double diag, double up, double left, double gamma,
                                double inv_gamma)
{
    return c + tsw_softmin3_f64(diag, up, left, gamma, inv_gamma);
}
TSW_HD float tsw_sdtw_cell_f32(float c, float diag, float up, float left, float gamma,
                               float inv_gamma)
{
    return c + tsw_softmin3_f32(diag, up, left, gamma, inv_gamma);
}

#endif
