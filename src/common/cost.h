/*
 * Local costs between two points of R^dim: the one definition used by the CPU reference,
 * the fast CPU kernels and the CUDA kernels. x and y point at dim contiguous values.
 * The _f32 twins compute in float, as the input precision demands.
 */
#ifndef TSW_COMMON_COST_H
#define TSW_COMMON_COST_H

#include "tsw_hd.h"
#include "tswarp.h" /* tsw_cost */

#define TSW_HUGE_f64 1.7976931348623157e308
#define TSW_HUGE_f32 3.40282347e38f

#define TSW_DEFINE_COSTS(T, SFX, SQRT, FABS, POW)                                             \
    /* sum_k (x_k - y_k)^2 */                                                                 \
    TSW_HD T tsw_cost_sqeuclidean_##SFX(const T *x, const T *y, int64_t dim)                  \
    {                                                                                         \
        T s = 0;                                                                              \
        for (int64_t k = 0; k < dim; ++k) {                                                   \
            T d = x[k] - y[k];                                                                \
            s += d * d;                                                                       \
        }                                                                                     \
        return s;                                                                             \
    }                                                                                         \
    /* sum_k |x_k - y_k| */                                                                   \
    TSW_HD T tsw_cost_abs_##SFX(const T *x, const T *y, int64_t dim)                          \
    {                                                                                         \
        T s = 0;                                                                              \
        for (int64_t k = 0; k < dim; ++k)                                                     \
            s += FABS(x[k] - y[k]);                                                           \
        return s;                                                                             \
    }                                                                                         \
    /* 1 - <x,y> / (|x| |y|); a zero vector is at distance 1 from any non-zero vector and at \
     * distance 0 from another zero vector (scipy would give NaN). */                         \
    TSW_HD T tsw_cost_cosine_##SFX(const T *x, const T *y, int64_t dim)                       \
    {                                                                                         \
        T xy = 0, xx = 0, yy = 0;                                                             \
        for (int64_t k = 0; k < dim; ++k) {                                                   \
            xy += x[k] * y[k];                                                                \
            xx += x[k] * x[k];                                                                \
            yy += y[k] * y[k];                                                                \
        }                                                                                     \
        if (xx == 0 && yy == 0)                                                               \
            return 0;                                                                         \
        if (xx == 0 || yy == 0)                                                               \
            return 1;                                                                         \
        return (T)1 - xy / (SQRT(xx) * SQRT(yy));                                             \
    }                                                                                         \
    /* The DTW cost `cost` (a tsw_cost) between two points, as every kernel computes it. */   \
    TSW_HD T tsw_cost_local_##SFX(int cost, const T *x, const T *y, int64_t dim)             \
    {                                                                                         \
        switch (cost) {                                                                       \
        case TSW_COST_EUCLIDEAN:                                                              \
            return SQRT(tsw_cost_sqeuclidean_##SFX(x, y, dim));                               \
        case TSW_COST_ABS:                                                                    \
            return tsw_cost_abs_##SFX(x, y, dim);                                             \
        case TSW_COST_COSINE:                                                                 \
            return tsw_cost_cosine_##SFX(x, y, dim);                                          \
        default:                                                                              \
            return tsw_cost_sqeuclidean_##SFX(x, y, dim);                                     \
        }                                                                                     \
    }                                                                                         \
    /* The costs summed over channels, one channel at a time (the lower bounds' boxes and    \
     * the search's z-normalised points, whose differences are made on the fly): a channel's \
     * term for the difference d, then the total of the summed terms (sqeuclidean, abs,     \
     * euclidean; not cosine). */                                                            \
    TSW_HD T tsw_cost_term_##SFX(int cost, T d) { return cost == TSW_COST_ABS ? FABS(d) : d * d; } \
    TSW_HD T tsw_cost_total_##SFX(int cost, T s)                                              \
    {                                                                                         \
        return cost == TSW_COST_EUCLIDEAN ? SQRT(s) : s;                                      \
    }                                                                                         \
    /* (sum_k |x_k - y_k|^p)^(1/p) for any p >= 1, values at x[k * sx], y[k * sy] (y NULL: \
     * the zero vector). Scaled by the largest component mx so that no |d|^p overflows     \
     * (p = 700, d = 3) or underflows (p = 100, d = 1e-5): mx (sum_k (|d_k| / mx)^p)^(1/p), \
     * the sum in [1, dim]. */                                                                \
    TSW_HD T tsw_lpp_##SFX(const T *x, int64_t sx, const T *y, int64_t sy, int64_t dim, T p)  \
    {                                                                                         \
        T mx = 0, s = 0;                                                                      \
        for (int64_t k = 0; k < dim; ++k) {                                                   \
            T d = FABS(x[k * sx] - (y ? y[k * sy] : (T)0));                                   \
            mx = d > mx ? d : mx;                                                             \
        }                                                                                     \
        if (mx == (T)0 || dim == 1 || !(mx <= TSW_HUGE_##SFX))                                \
            return mx; /* 0, one component, or +inf as the difference gives */                \
        for (int64_t k = 0; k < dim; ++k)                                                     \
            s += POW(FABS(x[k * sx] - (y ? y[k * sy] : (T)0)) / mx, p);                       \
        return mx * POW(s, (T)1 / p);                                                         \
    }                                                                                         \
    /* TWED's Lp distance with the root taken: (sum_k |x_k - y_k|^p)^(1/p). y may be NULL,   \
     * meaning the zero vector (TWED's boundary point). p = 1 and p = 2 avoid pow(). */       \
    TSW_HD T tsw_lp_##SFX(const T *x, const T *y, int64_t dim, T p)                           \
    {                                                                                         \
        T s = 0;                                                                              \
        if (p == (T)2) {                                                                      \
            for (int64_t k = 0; k < dim; ++k) {                                               \
                T d = x[k] - (y ? y[k] : (T)0);                                               \
                s += d * d;                                                                   \
            }                                                                                 \
            return dim == 1 ? FABS(x[0] - (y ? y[0] : (T)0)) : SQRT(s);                       \
        }                                                                                     \
        if (p == (T)1) {                                                                      \
            for (int64_t k = 0; k < dim; ++k)                                                 \
                s += FABS(x[k] - (y ? y[k] : (T)0));                                          \
            return s;                                                                         \
        }                                                                                     \
        return tsw_lpp_##SFX(x, 1, y, 1, dim, p);                                             \
    }

/*
 * The cosine cost from a dot product xy and the two norms nx = sqrt(<x,x>), ny = sqrt(<y,y>)
 * (kernels that precompute the norms once per point), parameterised by the arithmetic so
 * that vector code instantiates the same rule as tsw_cost_cosine: 0 when both points are
 * zero, 1 when one is, else 1 - xy / (nx ny). sqrt(<x,x>) is zero exactly when <x,x> is,
 * and SQRT(xx) * SQRT(yy) is the product tsw_cost_cosine divides by.
 * ISZERO(v) yields a mask, AND/OR combine masks, SEL(mask, a, b) = mask ? a : b.
 */
#define TSW_COSINE_FROM_NORMS(xy, nx, ny, ZERO, ONE, SUB, MUL, DIV, ISZERO, AND, OR, SEL)     \
    SEL(AND(ISZERO(nx), ISZERO(ny)), (ZERO),                                                  \
        SEL(OR(ISZERO(nx), ISZERO(ny)), (ONE), SUB((ONE), DIV((xy), MUL((nx), (ny))))))

TSW_DEFINE_COSTS(double, f64, sqrt, fabs, pow)
TSW_DEFINE_COSTS(float, f32, sqrtf, fabsf, powf)

#undef TSW_DEFINE_COSTS
#undef TSW_HUGE_f64
#undef TSW_HUGE_f32

#endif
