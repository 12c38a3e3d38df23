/*
 * Soft-DTW gradients (Cuturi and Blondel 2017, Algorithm 2): the backward cell recurrence,
 * shared by the CPU reference, the fast CPU kernel and the CUDA kernels.
 *
 * Forward (recurrence.h): R(i,j) = c(i,j) + S(i,j), S(i,j) = softmin_gamma(R(i-1,j-1),
 * R(i-1,j), R(i,j-1)). The gradient of R(n-1,m-1) with respect to c(i,j) is
 *   E(i,j) = sum over the successors s of (i,j) in {(i+1,j), (i,j+1), (i+1,j+1)} of
 *            E(s) * w(i,j -> s),     E(n-1,m-1) = 1,
 *   w(i,j -> s) = exp((S(s) - R(i,j)) / gamma),
 * the soft-argmin probability that s takes (i,j) as its predecessor. Cuturi and Blondel
 * (and tslearn) write the exponent as R(s) - c(s) - R(i,j); S(s) is the same quantity
 * without the cancellation of R(s) - c(s). softmin is at most each of its arguments, so
 * the exponent is <= 0 (up to rounding) and w lies in [0, 1]: no overflow for any gamma;
 * a successor outside the window has S = -inf and weight 0. E(i,j) itself is the
 * probability that the smoothed alignment passes through (i,j), in [0, 1].
 *
 * The gradient with respect to the inputs for the squared Euclidean cost
 * c(i,j) = |x_i - y_j|^2, fused with the cost (no cost matrix):
 *   dR/dx_i = sum_j E(i,j) 2 (x_i - y_j),   dR/dy_j = sum_i E(i,j) 2 (y_j - x_i).
 */
#ifndef TSW_COMMON_SDTW_GRAD_H
#define TSW_COMMON_SDTW_GRAD_H

#include "tsw_hd.h"

/*
 * The same weights from the forward pass (the soft-argmin probabilities): at a cell s with
 * predecessors r_k (diagonal, up, left) and lo = min_k r_k, S(s) = lo - gamma log(sum_k e_k)
 * with e_k = exp((lo - r_k) / gamma) (recurrence.h's TSW_SOFTMIN3_EXPARG), so
 *   w(pred_k -> s) = exp((S(s) - r_k) / gamma) = e_k / sum_k e_k.
 * A kernel that keeps these while it computes R needs no exponential in the backward pass
 * (TSW_SDTW_E_CELL takes them as its weights); the three sum to 1, so two are enough.
 */
#define TSW_SDTW_PROB(e_k, inv_sum, MUL) MUL((e_k), (inv_sum))
#define TSW_SDTW_PROB_REST(p_a, p_b, ONE, SUB) SUB(SUB((ONE), (p_a)), (p_b))

/* Weight of the edge (i,j) -> s: s_succ = S(s), r = R(i,j), inv_gamma = 1 / gamma. */
TSW_HD double tsw_sdtw_edge_f64(double s_succ, double r, double inv_gamma)
{
    return exp((s_succ - r) * inv_gamma);
}
TSW_HD float tsw_sdtw_edge_f32(float s_succ, float r, float inv_gamma)
{
    return expf((s_succ - r) * inv_gamma);
}

/* E(i,j) from the three successors' E and S: down (i+1,j), right (i,j+1), diag (i+1,j+1). */
#define TSW_SDTW_E_CELL(e_down, w_down, e_right, w_right, e_diag, w_diag, ADD, MUL)          \
    ADD(ADD(MUL((e_down), (w_down)), MUL((e_right), (w_right))), MUL((e_diag), (w_diag)))

TSW_HD double tsw_sdtw_e_cell_f64(double r, double inv_gamma, double e_down, double s_down,
                                  double e_right, double s_right, double e_diag, double s_diag)
{
    return e_down * tsw_sdtw_edge_f64(s_down, r, inv_gamma) +
           e_right * tsw_sdtw_edge_f64(s_right, r, inv_gamma) +
           e_diag * tsw_sdtw_edge_f64(s_diag, r, inv_gamma);
}
TSW_HD float tsw_sdtw_e_cell_f32(float r, float inv_gamma, float e_down, float s_down,
                                 float e_right, float s_right, float e_diag, float s_diag)
{
    return e_down * tsw_sdtw_edge_f32(s_down, r, inv_gamma) +
           e_right * tsw_sdtw_edge_f32(s_right, r, inv_gamma) +
           e_diag * tsw_sdtw_edge_f32(s_diag, r, inv_gamma);
}

#endif
