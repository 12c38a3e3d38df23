/*
 * Local costs between two points of R^dim: the one definition used by the CPU reference,
 * the fast CPU kernels and the CUDA kernels. x and y point at dim contiguous values.
 * The _f32 twins compute in float, as the input precision demands.
 */
#ifndef TSW_COMMON_COST_H
#define TSW_COMMON_COST_H

#include "tsw_hd.h"

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
        for (int64_t k = 0; k < dim; ++k)                                                     \
            s += POW(FABS(x[k] - (y ? y[k] : (T)0)), p);                                      \
        return POW(s, (T)1 / p);                                                              \
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

#endif
