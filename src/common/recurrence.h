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

/* The left move enters last (min is exact, so the order does not change the value): in a
 * kernel that sweeps a row left to right, a cell then waits for its left neighbour through
 * one add and one min, not two mins (the same for DTW above). */
#define TSW_TWED_CELL(del_a_total, del_b_total, match_total, MIN)                             \
    MIN(MIN((del_a_total), (match_total)), (del_b_total))

/*
 * TWED's move costs grouped for the fast kernels, which precompute per point what depends
 * on one series only (the reference sums the same terms per cell, in a slightly different
 * order, so the two agree up to rounding):
 *   deletion cost of point i:   |x_i - x_{i-1}|_p + nu (t_i - t_{i-1}) + lmbda
 *   local match term of (i,j):  |a_i - b_j|_p + nu |ta_i - tb_j|
 *   match move:                 D(i-1,j-1) + local(i,j) + local(i-1,j-1)
 * with the boundary point 0 (the zero vector at time 0) as point 0 of both series.
 */
#define TSW_TWED_DEL_COST(lp_step, nu, dt, lmbda, ADD, MUL)                                   \
    ADD(ADD((lp_step), MUL((nu), (dt))), (lmbda))
#define TSW_TWED_LOCAL(lp, nu, abs_dt, ADD, MUL) ADD((lp), MUL((nu), (abs_dt)))
#define TSW_TWED_MATCH(diag, local, local_prev, ADD) ADD(ADD((diag), (local)), (local_prev))

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

/*
 * softmin_gamma of three values, lo the smallest and mid, hi the other two (in either
 * order: only lo must be the minimum), for vector code:
 *   lo - gamma log(1 + exp((lo - mid) / gamma) + exp((lo - hi) / gamma)).
 * The term exp((lo - lo) / gamma) = 1 of the scalar form is exact, so this saves one
 * exponential per cell and equals tsw_softmin3 up to the rounding of the sum. Not valid for
 * lo = +inf (all three +inf): the caller selects +inf there, as tsw_softmin3 does.
 * The stages are separate macros so that vector code can run the exponentials and the
 * logarithm of several cells side by side (each stage over all cells, then the next).
 */
#define TSW_SOFTMIN3_EXPARG(lo, x, inv_gamma, SUB, MUL) MUL(SUB((lo), (x)), (inv_gamma))
#define TSW_SOFTMIN3_SUM(e_mid, e_hi, ONE, ADD) ADD(ADD((ONE), (e_mid)), (e_hi))
#define TSW_SOFTMIN3_OUT(lo, log_sum, gamma, SUB, MUL) SUB((lo), MUL((gamma), (log_sum)))
#define TSW_SOFTMIN3_SORTED(lo, mid, hi, gamma, inv_gamma, ONE, ADD, SUB, MUL, EXP, LOG)     \
    TSW_SOFTMIN3_OUT(                                                                         \
        (lo),                                                                                 \
        LOG(TSW_SOFTMIN3_SUM(EXP(TSW_SOFTMIN3_EXPARG((lo), (mid), (inv_gamma), SUB, MUL)),   \
                             EXP(TSW_SOFTMIN3_EXPARG((lo), (hi), (inv_gamma), SUB, MUL)),    \
                             (ONE), ADD)),                                                    \
        (gamma), SUB, MUL)

/*
 * The same sum in two stages, for a wavefront whose cells know two predecessors a step
 * before the third (w, the one a neighbour hands over): first m = min(a, b) and
 * s_ab = 1 + exp((m - max(a, b)) / gamma), then with t = exp(-|w - m| / gamma) the sum of
 * the three terms relative to the smallest, lo = w if w < m, else m:
 *   1 + t s_ab (w < m)   or   s_ab + t (w >= m).
 * After w arrives: one exponential and one fused multiply-add or add (the first stage and
 * the minimum's tests are off that chain).
 */
#define TSW_SOFTMIN3_SUM2(t, s_ab, w_lo, ONE, ADD, FMA)                                        \
    ((w_lo) ? FMA((t), (s_ab), (ONE)) : ADD((s_ab), (t)))

/*
 * Soft-DTW in the linear domain: with P = exp(-R / gamma),
 *   P(i,j) = exp(-c(i,j) / gamma) (P(i-1,j-1) + P(i-1,j) + P(i,j-1)),
 * the same recurrence as R(i,j) = c + softmin_gamma(...) (take -gamma log of both sides),
 * with one exponential per cell that depends on the cost only and no logarithm. P under- and
 * overflows at once for any real data, so the kernels that use this form keep P as a
 * mantissa and a separate binary exponent (cpu/vecmath.h, tsw_vsdtw_lin_cells).
 */
#define TSW_SDTW_LIN_SUM(p_diag, p_up, p_left, ADD) ADD(ADD((p_diag), (p_up)), (p_left))
#define TSW_SDTW_LIN_CELL(e_cost, p_diag, p_up, p_left, ADD, MUL)                            \
    MUL((e_cost), TSW_SDTW_LIN_SUM((p_diag), (p_up), (p_left), ADD))

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
