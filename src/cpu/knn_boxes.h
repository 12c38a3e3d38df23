/*
 * LB_Keogh's sums: the costs of the points [j0, j1) of v to their boxes [lo, hi] (knn_box:
 * the nearest point's cost) into c[j], and their sum; it stops once the sum exceeds stop
 * (returned, a partial sum above stop). One channel: without branches (the excess above the
 * box and below it, one of them 0), four running sums (point t to sum (t - j0) mod 4: one
 * vector), tested once every 16 points; several channels through knn_box. Written once,
 * included with TSW__BOXES_ISA defined (base: cpu/knn.c; avx2: cpu/knn_avx2.c) after
 * knn_inst.h. Every instance gives the same bits (no products are fused: the files are
 * compiled with -ffp-contract=off).
 */
#define TSW__BX_(a, b, c) a##_##b##_##c
#define TSW__BX(a, b, c) TSW__BX_(a, b, c)

/* 16 points from j: their costs to c[j ..], each added to acc[(point - j) % 4]. An
 * instruction set may bring its own (knn_avx2.c: one vector of four sums), the same
 * operations in the same order. */
#ifndef TSW__BOXES_16
#define TSW__BOXES_16(SFX, v, lo, hi, j, c, acc, ab, eu)                                     \
    for (int t = 0; t < 16; ++t) {                                                           \
        const double x = (double)(v)[(j) + t], l = (double)(lo)[(j) + t],                    \
                     h = (double)(hi)[(j) + t];                                              \
        const double d = (l - x > 0 ? l - x : 0) + (x - h > 0 ? x - h : 0);                  \
        const double q = (ab) ? d : d * d;                                                   \
        const double r = (eu) ? sqrt(q) : q;                                                 \
        (c)[(j) + t] = r;                                                                    \
        (acc)[t & 3] += r;                                                                   \
    }
#endif

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
        double acc[4] = {0, 0, 0, 0}; /* point t adds to acc[(t - j0) % 4] */                \
        int64_t j = j0;                                                                      \
        for (; j + 16 <= j1; j += 16) {                                                      \
            TSW__BOXES_16(SFX, v, lo, hi, j, c, acc, ab, eu);                                \
            s = (acc[0] + acc[1]) + (acc[2] + acc[3]);                                       \
            if (s > stop)                                                                    \
                return s;                                                                    \
        }                                                                                    \
        for (; j < j1; ++j) {                                                                \
            const double x = (double)v[j], l = (double)lo[j], h = (double)hi[j];             \
            const double d = (l - x > 0 ? l - x : 0) + (x - h > 0 ? x - h : 0);              \
            const double q = ab ? d : d * d;                                                 \
            const double r = eu ? sqrt(q) : q;                                               \
            c[j] = r;                                                                        \
            acc[(j - j0) & 3] += r;                                                          \
        }                                                                                    \
        return (acc[0] + acc[1]) + (acc[2] + acc[3]);                                        \
    }
TSW__BOXES_DEFINE(double, f64)
TSW__BOXES_DEFINE(float, f32)
#undef TSW__BOXES_DEFINE
#undef TSW__BOXES_16
#undef TSW__BX
#undef TSW__BX_
