/*
 * Shape DTW's fast fill (common/shape.h's matrix), included by shape_dtw.c (the x86-64
 * baseline or portable build, TSW__SHAPE_SFX base) and shape_dtw_avx2.c (avx2), both
 * compiled without contracted multiply-adds, so the matrix is the reference's bit for bit.
 *
 * The reference forms every cell's cost from the descriptors: segs x dim taps of a
 * subtraction and a square each, in a sequential sum. Every tap is one entry of the
 * squared-difference matrix P_k(u, v) = tsw_shape_tap(seq_k^a(u), seq_k^b(v)), and the cost
 * of (i, j) sums P_k(i + s sz, j + s sz) in the reference's order. So this kernel keeps a
 * ring of the rows of P that TSW__SHAPE_H rows of cells read (R = (segs - 1) sz + H rows; row u
 * is formed once, not segs times), and sums a row's costs 16 cells at a time: one add a tap
 * a cell, the same additions in the same order, vectorised across j by the compiler. The
 * recurrence then runs the H rows together, row h one column behind row h - 1, so that H
 * chains of c + min(min(up, diag), left) (min is exact: tsw_shape_cell's value) overlap in
 * the pipeline instead of one chain's latency a cell.
 *
 * work: the ring (R x dim rows of LBp = LB + 16 or more doubles), H rows of m + 16 costs,
 * H x segs row pointers (what shape_dtw.c's tsw__shape_fast_work counts; TSW__SHAPE_H in
 * kernels.h). C: row i at C + i * W + o.
 */

#define TSW__SHAPE_CAT2(a, b) a##_##b
#define TSW__SHAPE_CAT(a, b) TSW__SHAPE_CAT2(a, b)
#define TSW__SHAPE_FN(name) TSW__SHAPE_CAT(name, TSW__SHAPE_SFX)

/* The costs of `rows` rows over [lo, hi) into cost (row h at cost + h * CW), the taps in
 * the reference's order (k outer, s inner): rowp[h * segs + s] + k * LBp + j is row h's tap
 * (k, s) of column j. A block of 16 columns runs for every row before the next block, so
 * the ring's lines a block reads (about 3 of each of the rows' R rows) stay in L1 and serve
 * all the rows (row h + 1's tap s reads row h's tap s + 1 line). The last block runs past
 * hi (into the ring rows' and the cost rows' padding of 16): no scalar tail. */
typedef double TSW__SHAPE_FN(tsw__v4d) __attribute__((vector_size(32)));
static void TSW__SHAPE_FN(tsw__shape_costs)(const double *const *rowp, int64_t rows,
                                            int64_t dim, int64_t segs, int64_t LBp,
                                            int64_t lo, int64_t hi, double *cost, int64_t CW)
{
    typedef TSW__SHAPE_FN(tsw__v4d) v4d;
    for (int64_t j = lo; j < hi; j += 16)
        for (int64_t h = 0; h < rows; ++h) {
            const double *const *rp = rowp + h * segs;
            v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
            for (int64_t k = 0; k < dim; ++k)
                for (int64_t s = 0; s < segs; ++s) {
                    const double *p = rp[s] + k * LBp + j;
                    v4d p0, p1, p2, p3;
                    memcpy(&p0, p, sizeof p0); /* unaligned loads */
                    memcpy(&p1, p + 4, sizeof p1);
                    memcpy(&p2, p + 8, sizeof p2);
                    memcpy(&p3, p + 12, sizeof p3);
                    a0 += p0;
                    a1 += p1;
                    a2 += p2;
                    a3 += p3;
                }
            double *c = cost + h * CW + j;
            memcpy(c, &a0, sizeof a0);
            memcpy(c + 4, &a1, sizeof a1);
            memcpy(c + 8, &a2, sizeof a2);
            memcpy(c + 12, &a3, sizeof a3);
        }
}

_Static_assert(TSW__SHAPE_H == 4, "the steady loop below is written out for 4 rows");

int TSW__SHAPE_FN(tsw__shape_fill_fast)(const tsw_shape_spec *sp, const double *A, int64_t n,
                                        const double *B, int64_t m, const tsw_band *band,
                                        double *work, double *C, int64_t W, int64_t o,
                                        tsw__cancel *cancel)
{
    enum { H = TSW__SHAPE_H };
    const int64_t dim = sp->dim, segs = sp->segs, sz = sp->sz;
    const int64_t LA = tsw_shape_seq_len(sp, n), LB = tsw_shape_seq_len(sp, m);
    const int64_t R = (segs - 1) * sz + H, LBp = (LB + 16 + 7) & ~(int64_t)7, CW = m + 16;
    double *ring = work, *cost = ring + R * dim * LBp; /* H rows of CW */
    const double **rowp = (const double **)(void *)(cost + H * CW); /* H x segs pointers */
    const int itakura = band->kind == TSW_BAND_ITAKURA;
    int64_t formed = 0; /* rows of P formed so far: 0 .. formed - 1 */
    for (int64_t i0 = 0; i0 < n; i0 += H) {
        const int64_t rows = n - i0 < H ? n - i0 : H;
        /* the rows of P these rows read: up to i0 + rows - 1 + (segs - 1) sz (< LA) */
        const int64_t need = i0 + rows + (segs - 1) * sz;
        for (; formed < need; ++formed) {
            double *ru = ring + (formed % R) * dim * LBp;
            for (int64_t k = 0; k < dim; ++k) {
                const double a = A[k * LA + formed];
                const double *bk = B + k * LB;
                double *rk = ru + k * LBp;
                for (int64_t v = 0; v < LB; ++v)
                    rk[v] = tsw_shape_tap(a, bk[v]);
                for (int64_t v = LB; v < LBp; ++v) /* what the last block reads past hi */
                    rk[v] = 0;
            }
        }
        int64_t lo[H], hi[H], cmin = m, cmax = 0;
        for (int64_t h = 0; h < rows; ++h) {
            const int64_t i = i0 + h;
            lo[h] = 0;
            hi[h] = m;
            if (band->kind == TSW_BAND_DIAG)
                tsw_band_range(band, i, &lo[h], &hi[h]);
            for (int64_t s = 0, slot = i % R; s < segs; ++s) { /* slot (i + s sz) % R */
                rowp[h * segs + s] = ring + slot * dim * LBp + s * sz;
                slot += sz;
                slot -= slot >= R ? R : 0; /* (sz < R) */
            }
            double *cur = C + i * W + o;
            for (int64_t c = 0; c < lo[h]; ++c)
                cur[c] = TSW_INF_F64;
            for (int64_t c = hi[h]; c < m; ++c)
                cur[c] = TSW_INF_F64;
            if (lo[h] < hi[h]) {
                cmin = lo[h] < cmin ? lo[h] : cmin;
                cmax = hi[h] > cmax ? hi[h] : cmax;
            }
        }
        if (cmin < cmax) /* every row's costs over the rows' union of ranges */
            TSW__SHAPE_FN(tsw__shape_costs)(rowp, rows, dim, segs, LBp, cmin, cmax, cost, CW);
        /* the recurrence: at step t row h computes column t - h (when inside its range);
         * its up and diag (row h - 1 at t - h and t - h - 1) were computed at steps < t */
        double left[H];
        for (int h = 0; h < H; ++h)
            left[h] = TSW_INF_F64; /* column lo - 1 is outside the band (or the grid) */
        /* the steady stretch: every row inside its range, past column 0, below row 0, no
         * per-cell window test; there the H rows' cells run unrolled and unchecked */
        int64_t tb = cmax + rows - 1, te = tb;
        if (rows == H && i0 > 0 && !itakura) {
            tb = cmin;
            te = cmax + rows - 1;
            for (int64_t h = 0; h < H; ++h) {
                tb = lo[h] + h > tb ? lo[h] + h : tb;
                tb = 1 + h > tb ? 1 + h : tb;
                te = hi[h] + h < te ? hi[h] + h : te;
            }
            if (te < tb)
                tb = te = cmax + rows - 1;
        }
#define TSW__SHAPE_CELL(h, c)                                                                  \
    do {                                                                                       \
        const int64_t i_ = i0 + (h);                                                           \
        double *cur_ = C + i_ * W + o, v_;                                                     \
        if (i_ > 0) {                                                                          \
            const double *prev_ = cur_ - W;                                                    \
            const double diag_ = (c) > 0 ? prev_[(c) - 1] : TSW_INF_F64;                       \
            v_ = cost[(h) * CW + (c)] + TSW_MIN(TSW_MIN(prev_[c], diag_), left[h]);            \
        } else {                                                                               \
            const double diag_ = (c) == 0 ? 0.0 : TSW_INF_F64;                                 \
            v_ = cost[c] + TSW_MIN(diag_, left[h]);                                            \
        }                                                                                      \
        if (itakura && !tsw_band_admits(band, i_, c))                                          \
            v_ = TSW_INF_F64;                                                                  \
        cur_[c] = v_;                                                                          \
        left[h] = v_;                                                                          \
    } while (0)
        for (int64_t t = cmin; t < tb; ++t)
            for (int64_t h = 0; h < rows; ++h)
                if (t - h >= lo[h] && t - h < hi[h])
                    TSW__SHAPE_CELL(h, t - h);
        if (tb < te) {
            double *r0 = C + i0 * W + o, *r1 = r0 + W, *r2 = r1 + W, *r3 = r2 + W;
            const double *p0 = r0 - W, *c0 = cost, *c1 = c0 + CW, *c2 = c1 + CW, *c3 = c2 + CW;
            double l0 = left[0], l1 = left[1], l2 = left[2], l3 = left[3];
            for (int64_t t = tb; t < te; ++t) {
                const int64_t j0 = t, j1 = t - 1, j2 = t - 2, j3 = t - 3;
                l0 = c0[j0] + TSW_MIN(TSW_MIN(p0[j0], p0[j0 - 1]), l0);
                r0[j0] = l0;
                l1 = c1[j1] + TSW_MIN(TSW_MIN(r0[j1], r0[j1 - 1]), l1);
                r1[j1] = l1;
                l2 = c2[j2] + TSW_MIN(TSW_MIN(r1[j2], r1[j2 - 1]), l2);
                r2[j2] = l2;
                l3 = c3[j3] + TSW_MIN(TSW_MIN(r2[j3], r2[j3 - 1]), l3);
                r3[j3] = l3;
            }
            left[0] = l0;
            left[1] = l1;
            left[2] = l2;
            left[3] = l3;
        }
        for (int64_t t = te > tb ? te : tb; t < cmax + rows - 1; ++t)
            for (int64_t h = 0; h < rows; ++h)
                if (t - h >= lo[h] && t - h < hi[h])
                    TSW__SHAPE_CELL(h, t - h);
#undef TSW__SHAPE_CELL
        if (cancel && ((i0 + rows) & 63) < rows && tsw__cancel_poll(cancel, (i0 + rows) * m))
            return 1;
    }
    return 0;
}

#undef TSW__SHAPE_FN
#undef TSW__SHAPE_CAT
#undef TSW__SHAPE_CAT2
