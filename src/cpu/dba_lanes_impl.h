/*
 * DBA's alignment step in SIMD lanes (dba_lanes.c, dba_lanes_avx2.c): VL series of one
 * length against the same barycenter, one series a lane, each lane the SYMMETRIC1 grid of
 * tsw_dtw_path with squared Euclidean costs. Included after simd_ops.h (T, VT, VL, V_*).
 *
 * The cells are common/path.h's rule lane for lane: the cost summed in cost.h's order
 * (these files are compiled with -ffp-contract=off), the candidates diagonal, left, up
 * each the predecessor plus the cost, the first minimal one winning (TSW_PATH_CELL_SEL:
 * V_MIN(a, b) is a < b ? a : b, the selects of the rule), D(0, 0) the cost itself. So every
 * lane's D values, step codes and path are those of cpu/path_impl.h's stored backtrace,
 * which tsw_dtw_path returns for these grids. Each cell keeps the rule's two comparison
 * masks as bits (lane l: bit l and bit 8 + l of a 16-bit word); the backtrace reads the
 * code from them: up when the second is set, else left when the first is, else diagonal.
 */

static size_t V_NAME(tsw__dba_round)(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

int V_NAME(tsw__dba_paths)(tsw__dba_group *g, void *work)
{
    const int64_t n = g->n, m = g->m, dim = g->dim;
    const int64_t sl = g->series_rows ? n : m; /* the lanes' series length */
    const int cnt = g->count;
    char *w = (char *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    T *S = (T *)w; /* the series interleaved: value k of point t of lane l at (t dim + k) VL + l */
    w += V_NAME(tsw__dba_round)((size_t)(sl * dim) * VL * sizeof(T));
    T *rowa = (T *)w; /* D rows: column j at (j + 1) VL, column -1 (+inf) at 0 */
    w += V_NAME(tsw__dba_round)((size_t)(m + 1) * VL * sizeof(T));
    T *rowb = (T *)w;
    w += V_NAME(tsw__dba_round)((size_t)(m + 1) * VL * sizeof(T));
    uint16_t *code = (uint16_t *)w; /* (n, m) */
    const T *z = (const T *)g->z;

    for (int l = 0; l < VL; ++l) {
        const T *s = (const T *)g->s[l < cnt ? l : 0]; /* unused lanes repeat lane 0 */
        for (int64_t t = 0; t < sl * dim; ++t)
            S[t * VL + l] = s[t];
    }
    const VT inf = V_SET1(V_INF);
    for (int64_t j = 0; j <= m; ++j) {
        V_STORE(rowa + j * VL, inf);
        V_STORE(rowb + j * VL, inf);
    }
    T *prev = rowa, *cur = rowb;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t lo = g->lo ? g->lo[i] : 0, hi = g->hi ? g->hi[i] : m;
        for (int64_t j = 0; j < lo; ++j) /* outside the window: +inf */
            V_STORE(cur + (j + 1) * VL, inf);
        for (int64_t j = hi > lo ? hi : lo; j < m; ++j)
            V_STORE(cur + (j + 1) * VL, inf);
        VT left = inf, diag = V_LOAD(prev + lo * VL);
        uint16_t *crow = code + i * m;
        for (int64_t j = lo; j < hi; ++j) {
            /* cost.h's tsw_cost_sqeuclidean(row point, column point): from 0, in dim order */
            VT c = V_ZERO();
            if (g->series_rows) {
                const T *a = S + i * dim * VL, *b = z + j * dim;
                for (int64_t k = 0; k < dim; ++k) {
                    const VT d = V_SUB(V_LOAD(a + k * VL), V_SET1(b[k]));
                    c = V_ADD(c, V_MUL(d, d));
                }
            } else {
                const T *a = z + i * dim, *b = S + j * dim * VL;
                for (int64_t k = 0; k < dim; ++k) {
                    const VT d = V_SUB(V_SET1(a[k]), V_LOAD(b + k * VL));
                    c = V_ADD(c, V_MUL(d, d));
                }
            }
            const VT up = V_LOAD(prev + (j + 1) * VL);
            const VT v0 = V_ADD(diag, c), v1 = V_ADD(left, c), v2 = V_ADD(up, c);
            const VM m1 = V_CMPLT(v1, v0);
            const VT b1 = V_MIN(v1, v0);
            const VM m2 = V_CMPLT(v2, b1);
            VT best = V_MIN(v2, b1);
            if (i == 0 && j == 0)
                best = c; /* the start: its candidates are all +inf */
            crow[j] = (uint16_t)((unsigned)V_ANY(m1) | ((unsigned)V_ANY(m2) << 8));
            V_STORE(cur + (j + 1) * VL, best);
            left = best;
            diag = up;
        }
        T *t = prev;
        prev = cur;
        cur = t;
    }

    for (int l = 0; l < cnt; ++l) {
        const T d = prev[m * VL + l];
        g->plen[l] = 0;
        if (!(d < V_INF)) { /* no finite path: the caller asks tsw_dtw_path why */
            g->cost[l] = TSW_INF_F64;
            continue;
        }
        g->cost[l] = (double)d;
        /* lane l's codes: bit 8 + l up, bit l left */
        g->plen[l] = tsw_path_trace_codes_u16(code, n, m, 1u << (8 + l), 1u << l, g->path[l]);
    }
    return TSW_OK;
}
