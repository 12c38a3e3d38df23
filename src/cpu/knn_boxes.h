/*
 * LB_Keogh's sums: the costs of the points [j0, j1) of v to their boxes [lo, hi] (knn_box:
 * the nearest point's cost) into c[j], and their sum; it stops once the sum exceeds stop
 * (returned, a partial sum above stop). One channel: blocks of 16 points without branches
 * (the excess above the box and below it, one of them 0), their sums added once a block,
 * which the compiler vectorises; several channels through knn_box. Written once, included
 * with TSW__BOXES_ISA defined (base: cpu/knn.c; avx2: cpu/knn_avx2.c), after knn_impl.h
 * for both precisions. Every instance gives the same bits (no products are fused: the
 * files are compiled with -ffp-contract=off).
 */
#define TSW__BX_(a, b, c) a##_##b##_##c
#define TSW__BX(a, b, c) TSW__BX_(a, b, c)

#define TSW__BOXES_DEFINE(T, SFX)                                                            \
    double TSW__BX(tsw__lb_boxes, TSW__BOXES_ISA, SFX)(tsw_cost cost, const T *v,            \
                                                        const T *lo, const T *hi, int64_t j0, \
                                                        int64_t j1, int64_t dim, double stop, \
                                                        double *c)                           \
    {                                                                                        \
        double s = 0;                                                                        \
        if (dim != 1) {                                                                      \
            for (int64_t j = j0; j < j1; ++j) {                                              \
                double e = knn_box_##SFX(cost, v + j * dim, lo + j * dim, hi + j * dim, dim); \
                c[j] = e;                                                                    \
                s += e;                                                                      \
                if ((j & 15) == 15 && s > stop)                                              \
                    return s;                                                                \
            }                                                                                \
            return s;                                                                        \
        }                                                                                    \
        const int ab = cost == TSW_COST_ABS, eu = cost == TSW_COST_EUCLIDEAN;                \
        for (int64_t j = j0; j < j1; j += 16) {                                              \
            const int64_t e = j + 16 < j1 ? j + 16 : j1;                                     \
            double part[16] = {0};                                                           \
            for (int64_t t = j; t < e; ++t) {                                                \
                const double x = (double)v[t], l = (double)lo[t], h = (double)hi[t];         \
                const double d = (l - x > 0 ? l - x : 0) + (x - h > 0 ? x - h : 0);          \
                const double q = ab ? d : d * d;                                             \
                const double r = eu ? sqrt(q) : q;                                           \
                c[t] = r;                                                                    \
                part[t - j] = r;                                                             \
            }                                                                                \
            double b8[8];                                                                    \
            for (int u = 0; u < 8; ++u)                                                      \
                b8[u] = part[u] + part[u + 8];                                               \
            s += ((b8[0] + b8[1]) + (b8[2] + b8[3])) + ((b8[4] + b8[5]) + (b8[6] + b8[7]));  \
            if (s > stop)                                                                    \
                return s;                                                                    \
        }                                                                                    \
        return s;                                                                            \
    }
TSW__BOXES_DEFINE(double, f64)
TSW__BOXES_DEFINE(float, f32)
#undef TSW__BOXES_DEFINE
#undef TSW__BX
#undef TSW__BX_
