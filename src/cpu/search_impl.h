/*
 * The CPU search's per-chunk kernels (search.h), written once and included with
 * TSW__SEARCH_ISA defined: base in cpu/search.c, avx2 in cpu/search_avx2.c. The loops are
 * plain C without branches in their bodies, so that the compiler vectorises them across
 * windows (prep, proxy) or across a block's points (the LB_Keogh blocks).
 */
#include "../common/cost.h"

#include <math.h>

#define TSW__SCAT_(a, b) a##_##b
#define TSW__SCAT(a, b) TSW__SCAT_(a, b)
#define TSW__SF(name) TSW__SCAT(name, TSW__SEARCH_ISA)

void TSW__SF(tsw__search_prep)(tsw__schunk *c)
{
    const int64_t n = c->n, dim = c->dim, nw = c->nw;
    const double *x = c->x;
    double *s1 = c->s1, *s2 = c->s2, *wmu = c->wmu, *winv = c->winv;
    int64_t *ch = c->ch;
    if (!c->znorm) {
        for (int64_t t = 0; t < nw * dim; ++t) {
            wmu[t] = 0;
            winv[t] = 1;
        }
    } else {
        const double rn = 1.0 / (double)n, K = tsw__search_cond(n);
        for (int64_t k = 0; k < dim; ++k)
            for (int64_t u = 0; u < nw; u += TSW__SBLK) {
                /* the block's sums, from its own first value (s1, s2, ch: (pts + 1)) */
                const int64_t nb = nw - u < TSW__SBLK ? nw - u : TSW__SBLK, pts = nb + n - 1;
                const double *xu = x + u * dim + k, x0 = xu[0];
                double a1 = 0, a2 = 0;
                int64_t nc = 0;
                s1[0] = s2[0] = 0;
                ch[0] = 0;
                for (int64_t t = 0; t < pts; ++t) {
                    const double v = xu[t * dim] - x0;
                    a1 += v;
                    a2 += v * v;
                    nc += t > 0 && xu[t * dim] != xu[(t - 1) * dim];
                    s1[t + 1] = a1;
                    s2[t + 1] = a2;
                    ch[t + 1] = nc;
                }
#ifdef TSW__SEARCH_STATS1
                if (dim == 1) { /* this instruction set's own loop */
                    TSW__SEARCH_STATS1(xu, s1, s2, ch, n, nb, K, wmu + u, winv + u);
                    continue;
                }
#endif
                for (int64_t b = 0; b < nb; ++b) {
                    const double m1 = (s1[b + n] - s1[b]) * rn, m2 = (s2[b + n] - s2[b]) * rn;
                    const double var = m2 - m1 * m1;
                    const int flat = ch[b + n] - ch[b + 1] == 0;
                    const int bad = !(var > K * s2[b + n]);
                    const double inv = var > 0 ? 1 / sqrt(var) : 0;
                    wmu[(u + b) * dim + k] = flat ? xu[b * dim] : m1 + x0;
                    winv[(u + b) * dim + k] = flat ? 0 : bad ? -1 : inv;
                }
            }
    }
}

/* dim 1: LB_Kim's first ring of every window (lb0), from its statistics. */
void TSW__SF(tsw__search_lb0)(tsw__schunk *c)
{
    const int64_t n = c->n, nw = c->nw;
    const double *x = c->x, *wmu = c->wmu, *winv = c->winv;
    const double q0 = c->qz[0], ql = c->qz[n - 1], two = n > 1 ? 1.0 : 0.0;
    const int sq = c->cost == TSW_COST_SQEUCLIDEAN;
    double *lb0 = c->lb0;
    for (int64_t b = 0; b < nw; ++b) {
        const double z0 = (x[b] - wmu[b]) * winv[b];
        const double zl = (x[b + n - 1] - wmu[b]) * winv[b];
        const double d0 = z0 - q0, dl = zl - ql;
        const double c0 = sq ? d0 * d0 : fabs(d0), cl = sq ? dl * dl : fabs(dl);
        lb0[b] = c0 + two * cl;
    }
}

/*
 * The seeds' proxy (search.c, tsw__seed_chunk) of the windows that start at u S, u in
 * [u0, u1) of a chunk: the squared distance of the window's piecewise means (nseg segments
 * of G S points) to the query's, qp ((nseg, dim)). ps1, ps2: the sums of x - x0 and of its
 * squares over the chunk's points [0, v S), at ps[v * dim + k]. z-normalised (znorm) by the
 * mean and std of the segments' points, else x0 added back. Not a bound of anything: it
 * only ranks windows, so that the search starts from the exact distances of likely matches.
 */
void TSW__SF(tsw__search_proxy)(const double *ps1, const double *ps2, const double *x0,
                                int64_t dim, int64_t S, int64_t G, int64_t nseg, int znorm,
                                const double *qp, int64_t u0, int64_t u1, double *out)
{
    const double rL = 1.0 / (double)(G * S), rA = 1.0 / (double)(G * S * nseg);
    const int64_t span = G * nseg, nb = u1 - u0;
    double shift[TSW__PROXY_MAXB], inv[TSW__PROXY_MAXB];
    for (int64_t u = 0; u < nb; ++u)
        out[u] = 0;
    /* DIM: 1 written out (contiguous loads across windows), else dim; the windows' scales
     * first, then one loop a segment (both across windows, which the compiler vectorises) */
#define TSW__PROXY_LOOP(DIM)                                                                 \
    for (int64_t k = 0; k < (DIM); ++k) {                                                    \
        const double *p1 = ps1 + u0 * (DIM) + k, *p2 = ps2 + u0 * (DIM) + k;                 \
        if (znorm) {                                                                         \
            for (int64_t u = 0; u < nb; ++u) {                                               \
                const double m1 = (p1[(u + span) * (DIM)] - p1[u * (DIM)]) * rA;             \
                const double m2 = (p2[(u + span) * (DIM)] - p2[u * (DIM)]) * rA;             \
                const double var = m2 - m1 * m1;                                             \
                shift[u] = m1;                                                               \
                inv[u] = var > 0 ? 1 / sqrt(var) : 0;                                        \
            }                                                                                \
        } else {                                                                             \
            for (int64_t u = 0; u < nb; ++u) {                                               \
                shift[u] = -x0[k];                                                           \
                inv[u] = 1;                                                                  \
            }                                                                                \
        }                                                                                    \
        for (int64_t g = 0; g < nseg; ++g) {                                                 \
            const double qg = qp[g * (DIM) + k];                                             \
            const double *lo = p1 + g * G * (DIM), *hi = p1 + (g + 1) * G * (DIM);           \
            for (int64_t u = 0; u < nb; ++u) {                                               \
                const double seg = (hi[u * (DIM)] - lo[u * (DIM)]) * rL;                     \
                const double d = qg - (seg - shift[u]) * inv[u];                             \
                out[u] += d * d;                                                             \
            }                                                                                \
        }                                                                                    \
    }
    if (dim == 1) {
        TSW__PROXY_LOOP(1)
    } else {
        TSW__PROXY_LOOP(dim)
    }
#undef TSW__PROXY_LOOP
}

/* One block of LB_Keogh in dim 1: points j0 .. j0 + len - 1 of the window, each z =
 * (xb[j] - mu) inv against [lo[j], hi[j]] (the query's envelope: EQ) or the query point
 * against the window's envelope z-normalised (EC); the costs to cq[j]; their sum. */
#define TSW__SBLOCK_BODY(len, EXCESS)                                                        \
    double part[TSW__SBLOCK] = {0, 0, 0, 0, 0, 0, 0, 0};                                     \
    for (int64_t t = 0; t < (len); ++t) {                                                    \
        const int64_t j = j0 + t;                                                            \
        double e1, e2;                                                                       \
        EXCESS;                                                                              \
        const double d = (e1 > 0 ? e1 : 0) + (e2 > 0 ? e2 : 0); /* one of them is 0 */       \
        const double v = sq ? d * d : d;                                                     \
        out[j] = v;                                                                          \
        part[t] = v;                                                                         \
    }                                                                                        \
    s += ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]))

double TSW__SF(tsw__search_keogh_q1)(const double *xb, double mu, double inv,
                                     const double *qlo, const double *qhi, const int64_t *bo,
                                     int64_t nbo, int64_t n, tsw_cost cost, double stop,
                                     double *cq)
{
    const int sq = cost == TSW_COST_SQEUCLIDEAN;
    double *out = cq, s = 0;
    for (int64_t o = 0; o < nbo; ++o) {
        const int64_t j0 = bo[o];
        if (j0 + TSW__SBLOCK <= n) {
            TSW__SBLOCK_BODY(TSW__SBLOCK, {
                const double z = (xb[j] - mu) * inv;
                e1 = z - qhi[j];
                e2 = qlo[j] - z;
            });
        } else {
            TSW__SBLOCK_BODY(n - j0, {
                const double z = (xb[j] - mu) * inv;
                e1 = z - qhi[j];
                e2 = qlo[j] - z;
            });
        }
        if (s > stop)
            return s;
    }
    return s;
}

double TSW__SF(tsw__search_keogh_x1)(const double *lob, const double *hib, double mu,
                                     double inv, const double *q, const int64_t *bo,
                                     int64_t nbo, int64_t n, tsw_cost cost, double stop,
                                     double *cx)
{
    const int sq = cost == TSW_COST_SQEUCLIDEAN;
    double *out = cx, s = 0;
    for (int64_t o = 0; o < nbo; ++o) {
        const int64_t j0 = bo[o];
        if (j0 + TSW__SBLOCK <= n) {
            TSW__SBLOCK_BODY(TSW__SBLOCK, {
                e1 = q[j] - (hib[j] - mu) * inv;
                e2 = (lob[j] - mu) * inv - q[j];
            });
        } else {
            TSW__SBLOCK_BODY(n - j0, {
                e1 = q[j] - (hib[j] - mu) * inv;
                e2 = (lob[j] - mu) * inv - q[j];
            });
        }
        if (s > stop)
            return s;
    }
    return s;
}

#undef TSW__SBLOCK_BODY
#undef TSW__SF
#undef TSW__SCAT
#undef TSW__SCAT_
