/*
 * The elastic family's per-pair pieces (tsw_measure TSW_WDTW .. TSW_MSM): the one definition
 * of each weight, transform, move cost and cell, used by the CPU reference
 * (cpu/reference_impl.h) and the fast CPU kernel (cpu/family_impl.h), and written TSW_HD so
 * that the CUDA kernels can share them. Points are dim contiguous values (x[i * dim + k]).
 *
 *   WDTW   D(i,j) = w(|i-j|) |x_i - y_j|^2 + min(D(i-1,j-1), D(i-1,j), D(i,j-1))
 *   ADTW   D(i,j) = |x_i - y_j|^2 + min(D(i-1,j-1), D(i-1,j) + pen, D(i,j-1) + pen)
 *   ERP    D(i,j) = min(D(i-1,j-1) + |x_i - y_j|_2, D(i-1,j) + |x_i - g|_2, D(i,j-1) + |y_j - g|_2)
 *          D(i,0) = sum_{k<=i} |x_k - g|_2, D(0,j) likewise
 *   EDR    D(i,j) = min(D(i-1,j-1) + [|x_i - y_j|_2 >= eps], D(i-1,j) + 1, D(i,j-1) + 1)
 *          D(i,0) = i, D(0,j) = j; the distance D(n,m) / max(n,m)
 *   LCSS   S(i,j) = S(i-1,j-1) + 1 if |x_i - y_j|_2 <= eps, else max(S(i-1,j), S(i,j-1));
 *          S outside the window and on the boundary 0; the distance 1 - S(n,m) / min(n,m)
 *   MSM    D(i,j) = min(D(i-1,j-1) + move(x_i, y_j), D(i-1,j) + split(x_i, x_{i-1}, y_j),
 *                       D(i,j-1) + split(y_j, x_i, y_{j-1})), D(0,0) = move(x_1, y_1)
 *          (one univariate program per channel, summed; or the dependent form)
 * with 1-based points and D(0,0) = 0 (MSM: the first cell is the first move), the rest of
 * the boundary +inf where not given. Every move cost is >= 0, so a row whose cells (the
 * boundary column included) all exceed a bound ends above it: the kernels abandon there.
 */
#ifndef TSW_COMMON_ELASTIC_H
#define TSW_COMMON_ELASTIC_H

#include "cost.h" /* tsw_cost_sqeuclidean */
#include "tsw_hd.h"

/* Three-way minimum of an edit step's candidates (ERP, EDR, MSM; TWED's own is in
 * recurrence.h). min is exact: the order does not change the value. */
#define TSW_EDIT_CELL(diag_total, up_total, left_total, MIN)                                   \
    MIN(MIN((diag_total), (up_total)), (left_total))
/* ADTW: the penalty on the two non-diagonal moves. */
#define TSW_ADTW_CELL(cost, diag, up, left, pen, MIN, ADD)                                    \
    ADD((cost), MIN(MIN(ADD((up), (pen)), ADD((left), (pen))), (diag)))

/* EDR's diagonal step: 0 where the points match within eps, else 1 (LT: a < b mask, SEL:
 * m ? a : b). */
#define TSW_EDR_SUBST(dist, eps, zero, one, LT, SEL) SEL(LT((dist), (eps)), (zero), (one))
/* LCSS: the diagonal plus one where the points match within eps, else the larger of up and
 * left (LE: a <= b mask, MAX: a > b ? a : b). */
#define TSW_LCSS_CELL(dist, eps, diag, up, left, one, LE, SEL, MAX, ADD)                      \
    SEL(LE((dist), (eps)), ADD((diag), (one)), MAX((up), (left)))
/* MSM's split/merge cost of x next to its neighbour y, against z (univariate): c when x lies
 * between y and z (min(y, z) <= x <= max(y, z), aeon's (y <= x <= z) or (y >= x >= z)), else
 * c plus the distance to the nearer of the two. MIN(a, b) is a < b ? a : b, MAX(a, b)
 * a > b ? a : b, AND of two masks. */
#define TSW_MSM_SPLIT(x, y, z, c, MIN, MAX, ABS, SUB, ADD, LE, AND, SEL)                      \
    SEL(AND(LE(MIN((y), (z)), (x)), LE((x), MAX((z), (y)))), (c),                            \
        ADD((c), MIN(ABS(SUB((x), (y))), ABS(SUB((x), (z))))))
/* The same value from a neighbour constant K >= 0 and the cell's difference e signed
 * by the neighbour's side (see tsw_msm_split_k): c + max(min(K, e), 0), two exact min/max
 * steps and one add. The up move (x_i next to x_{i-1}, against y_j): K = |x_i - x_{i-1}|,
 * e = d where x_i - x_{i-1} >= 0 and -d where it is < 0, with d = x_i - y_j; the left move
 * (y_j next to y_{j-1}, against x_i): K = |y_j - y_{j-1}|, e = -d where y_j - y_{j-1} >= 0
 * and d where it is < 0. K and the sign are one per row and one per column, so a cell pays
 * a sign flip, the two steps and the add per split. */
#define TSW_MSM_SPLIT_K(K, e, c, MIN, MAX, ADD, ZERO) ADD((c), MAX(MIN((K), (e)), (ZERO)))
/* The scalar operations of those macros. */
#define TSW__E_SUB(a, b) ((a) - (b))
#define TSW__E_ADD(a, b) ((a) + (b))
#define TSW__E_LE(a, b) ((a) <= (b))
#define TSW__E_LT(a, b) ((a) < (b))
#define TSW__E_AND(a, b) ((a) & (b))
#define TSW__E_SEL(m, a, b) ((m) ? (a) : (b))

#define TSW_DEFINE_ELASTIC(T, SFX, SQRT, FABS, NEXTAFTER)                                      \
    /* WDTW's weight of the offset k = |i - j| between series of at most len points,          \
     * computed in double whatever T is (aeon's weight vector). */                            \
    TSW_HD T tsw_wdtw_weight_##SFX(double g, int64_t k, int64_t len)                          \
    {                                                                                         \
        return (T)(1.0 / (1.0 + exp(-g * ((double)k - (double)len / 2.0))));                 \
    }                                                                                         \
    /* The derivative of DDTW and WDDTW (aeon's average of slopes): n - 2 points from n >= 3. \
     */                                                                                       \
    TSW_HD void tsw_derivative_##SFX(const T *x, int64_t n, int64_t dim, T *out)               \
    {                                                                                         \
        for (int64_t i = 1; i + 1 < n; ++i)                                                   \
            for (int64_t k = 0; k < dim; ++k) {                                               \
                const T prev = x[(i - 1) * dim + k];                                          \
                out[(i - 1) * dim + k] =                                                      \
                    ((x[i * dim + k] - prev) + (x[(i + 1) * dim + k] - prev) / (T)2) / (T)2; \
            }                                                                                 \
    }                                                                                         \
    /* DDTW's and WDDTW's pair: *a (*n points) and *b (*m) replaced by their derivatives,   \
     * written to buf ((n + m - 4) dim values); returns the end of what it wrote. */          \
    TSW_HD T *tsw_derivative_pair_##SFX(const T **a, int64_t *n, const T **b, int64_t *m,    \
                                        int64_t dim, T *buf)                                  \
    {                                                                                         \
        T *da = buf, *db = buf + (*n - 2) * dim;                                              \
        tsw_derivative_##SFX(*a, *n, dim, da);                                                \
        tsw_derivative_##SFX(*b, *m, dim, db);                                                \
        *a = da;                                                                              \
        *b = db;                                                                              \
        *n -= 2;                                                                              \
        *m -= 2;                                                                              \
        return db + *m * dim;                                                                 \
    }                                                                                         \
    /* |x - y|_2 (ERP's match, the EDR and LCSS match tests). */                             \
    TSW_HD T tsw_euclid_##SFX(const T *x, const T *y, int64_t dim)                            \
    {                                                                                         \
        return SQRT(tsw_cost_sqeuclidean_##SFX(x, y, dim));                                   \
    }                                                                                         \
    /* ERP's gap cost of a point: |x - g|_2 with g in every channel. */                       \
    TSW_HD T tsw_erp_gap_##SFX(const T *x, int64_t dim, T g)                                  \
    {                                                                                         \
        T s = 0;                                                                              \
        for (int64_t k = 0; k < dim; ++k) {                                                   \
            const T d = x[k] - g;                                                             \
            s += d * d;                                                                       \
        }                                                                                     \
        return SQRT(s);                                                                       \
    }                                                                                         \
    /* MSM's split/merge cost of x next to its neighbour y, against z (univariate): c when   \
     * x lies between y and z, else c plus the distance to the nearer of the two. */          \
    TSW_HD T tsw_msm_split_##SFX(T x, T y, T z, T c)                                          \
    {                                                                                         \
        /* in selects rather than branches (random data mispredicts them) */                  \
        return TSW_MSM_SPLIT(x, y, z, c, TSW_MIN, TSW_MAX, FABS, TSW__E_SUB, TSW__E_ADD,       \
                             TSW__E_LE, TSW__E_AND, TSW__E_SEL);                               \
    }                                                                                         \
    /* The same value from the neighbour difference a = x - y (one per row or column) and  \
     * the cell's dxz = x - z: x lies between y and z exactly when a and dxz are not both   \
     * > 0 nor both < 0 (the signs of rounded differences are exact), so with a >= 0 the    \
     * cost is c + max(min(a, dxz), 0) (0 whenever dxz <= 0, the nearer distance min(a,     \
     * dxz) when both are > 0) and with a < 0 it is c + max(min(-a, -dxz), 0): the terms    \
     * are |x - y| and |x - z| with their bits (tested against tsw_msm_split in             \
     * test_kernels; the CPU lanes' and the GPU's MSM cells, TSW_MSM_SPLIT_K). */           \
    TSW_HD T tsw_msm_split_k_##SFX(T a, T dxz, T c)                                          \
    {                                                                                         \
        const int neg = a < (T)0;                                                             \
        return TSW_MSM_SPLIT_K(neg ? -a : a, neg ? -dxz : dxz, c, TSW_MIN, TSW_MAX,          \
                               TSW__E_ADD, (T)0);                                             \
    }                                                                                         \
    /* The dependent form (aeon's): x within the ball whose diameter is y z costs c, else c \
     * plus the squared distance to the nearer of y and z. */                                 \
    TSW_HD T tsw_msm_split_dep_##SFX(const T *x, const T *y, const T *z, int64_t dim, T c)    \
    {                                                                                         \
        T diam = 0, mid = 0;                                                                  \
        for (int64_t k = 0; k < dim; ++k) {                                                   \
            const T d = y[k] - z[k], m = (y[k] + z[k]) / (T)2 - x[k];                         \
            diam += d * d;                                                                    \
            mid += m * m;                                                                     \
        }                                                                                     \
        if (mid <= diam / (T)4)                                                               \
            return c;                                                                         \
        const T dy = tsw_cost_sqeuclidean_##SFX(y, x, dim);                                   \
        const T dz = tsw_cost_sqeuclidean_##SFX(z, x, dim);                                   \
        return dy < dz ? c + dy : c + dz;                                                     \
    }                                                                                         \
    /* Population standard deviation of count values (EDR's automatic epsilon), in double. */ \
    TSW_HD double tsw_std_all_##SFX(const T *x, int64_t count)                                \
    {                                                                                         \
        double mean = 0, ss = 0;                                                              \
        for (int64_t i = 0; i < count; ++i)                                                   \
            mean += (double)x[i];                                                             \
        mean /= (double)count;                                                                \
        for (int64_t i = 0; i < count; ++i) {                                                 \
            const double d = (double)x[i] - mean;                                             \
            ss += d * d;                                                                      \
        }                                                                                     \
        return sqrt(ss / (double)count);                                                      \
    }                                                                                         \
    /* The match tests of EDR and LCSS on squared distances s >= 0: SQRT(s) < eps exactly   \
     * when s < tsw_sq_bound(eps, 0), SQRT(s) <= eps exactly when s < tsw_sq_bound(eps, 1)  \
     * (the root is correctly rounded and monotone: the least t whose root passes eps,       \
     * found from eps * eps by steps of one ulp), so that a kernel can skip the root. */      \
    TSW_HD T tsw_sq_bound_##SFX(T eps, int inclusive)                                         \
    {                                                                                         \
        T t = eps * eps;                                                                      \
        while (t > 0 && (inclusive ? SQRT(NEXTAFTER(t, (T)0)) > eps                          \
                                   : SQRT(NEXTAFTER(t, (T)0)) >= eps))                       \
            t = NEXTAFTER(t, (T)0);                                                           \
        while (!(inclusive ? SQRT(t) > eps : SQRT(t) >= eps))                                 \
            t = NEXTAFTER(t, (T)TSW_INF_F64);                                                    \
        return t;                                                                             \
    }                                                                                         \
    /* Whether SQRT(d * d) == FABS(d) for every difference d of two of the n values (one     \
     * channel): true when each is 0 or of magnitude in [2^-400, 2^500] (float: [2^-30,      \
     * 2^62]). Such a d is 0 or a multiple of 2^-452 (2^-53) at most 2^501 (2^63), so d * d  \
     * neither underflows nor overflows, and in binary arithmetic the correctly rounded root \
     * of the correctly rounded square is then |d| exactly (Boldo, "Stupid is as stupid     \
     * does", 2015; tested in test_kernels). ERP's match cost then skips its root. */        \
    TSW_HD int tsw_root_square_exact_##SFX(const T *x, int64_t n)                            \
    {                                                                                         \
        const double lo = sizeof(T) == 8 ? 0x1p-400 : 0x1p-30;                                \
        const double hi = sizeof(T) == 8 ? 0x1p500 : 0x1p62;                                  \
        int ok = 1;                                                                           \
        for (int64_t i = 0; i < n; ++i) {                                                     \
            const double a = (double)FABS(x[i]);                                              \
            ok &= a == 0.0 || (a >= lo && a <= hi);                                           \
        }                                                                                     \
        return ok;                                                                            \
    }                                                                                         \
    /* EDR's and LCSS's epsilon for a pair of n and m points: the parameter, or (EDR with    \
     * TSW_EPSILON_AUTO) max(std(a), std(b)) / 4 over all values of each. */                  \
    TSW_HD T tsw_pair_epsilon_##SFX(double epsilon, const T *a, int64_t n, const T *b,        \
                                    int64_t m, int64_t dim)                                   \
    {                                                                                         \
        if (epsilon >= 0)                                                                     \
            return (T)epsilon;                                                                \
        const double sa = tsw_std_all_##SFX(a, n * dim), sb = tsw_std_all_##SFX(b, m * dim);  \
        return (T)((sa > sb ? sa : sb) / 4.0);                                                \
    }

TSW_DEFINE_ELASTIC(double, f64, sqrt, fabs, nextafter)
TSW_DEFINE_ELASTIC(float, f32, sqrtf, fabsf, nextafterf)

#undef TSW_DEFINE_ELASTIC

/* The measures whose program runs on the derivatives of the series. */
#define TSW_IS_DERIVATIVE(measure) ((measure) == TSW_DDTW || (measure) == TSW_WDDTW)
/* The elastic family's measures (cpu/family_impl.h), DDTW included. */
#define TSW_IS_FAMILY(measure) ((int)(measure) >= TSW_WDTW && (int)(measure) <= TSW_MSM)

#endif
