/*
 * The CPU alignment kernels: exact optimal warping paths (stored backtrace or linear
 * memory) and subsequence DTW, written once and included by path.c / path_avx2.c once per
 * precision and instruction set with T (float or double), SFX (e.g. base_f64), INF, SQRT,
 * FABS and CELL (common/path.h's tsw_path_cell_f64 or _f32) defined.
 *
 * Grid: cell (i, j), i in [0, n) over a, j in [0, m) over b; D as in tswarp.h; the cell
 * rule and the step codes are common/path.h's. Everything works on REGIONS: a rectangle
 * rows [r0, r1] x columns [c0, c1] plus a frame holding the D values that its cells may
 * read from outside (every step reaches at most 2 rows up and 2 columns left):
 *   top2, top1    rows r0-2 and r0-1 at the columns c0-2 .. c1  (K + 2 values)
 *   left2, left1  columns c0-2 and c0-1 at the rows r0 .. r1     (R values)
 * (+inf outside the grid). A region's D values depend only on its frame and costs, so any
 * region can be recomputed on its own: that is what makes linear memory possible.
 *
 * Forward pass (fwd): row by row over 4 rolling row buffers. Per row: the local costs of
 * the admissible cells into a cost row (tiles of 4 vectors of cells whose sums stay in
 * registers across the dims; every cost is summed in cost.h's order, so the values equal
 * the reference's bit for bit: these files are compiled with -ffp-contract=off), then the
 * cells. P05 cells read rows
 * i-1 and i-2 only, so a row vectorises; SYMMETRIC1 cells read their left neighbour, a
 * chain of one add and two compares per cell.
 * Threads: the columns are cut into one block per thread (multiples of 64 cells); thread t
 * computes row i of its block once thread t-1 has finished row i of its own (steps only
 * look left and up), and once thread t+1 has finished row i-2 (4 rolling rows: row i
 * overwrites row i-4, which thread t+1 reads until it has finished row i-2). A skewed
 * wavefront of blocks, spin-waiting on per-thread row counters; the calling thread
 * (thread 0) reports progress and cancels.
 *
 * Stored backtrace (base): the forward pass keeps every cell's 2-bit code (rows padded to
 * whole bytes), then the path is followed back from the region's bottom-right cell until
 * it leaves the region or reaches its start.
 * Linear memory (solve): a region too large for one stored block is split at its middle
 * row rm and column cm. One forward pass keeps rows rm-2, rm-1 and columns cm-2, cm-1: the
 * frames of the four quadrants. The path is then followed quadrant by quadrant from the
 * bottom-right cell: each quadrant, trimmed to the cell where the path enters it (the
 * path is monotone, so nothing right of or below that cell matters), is solved
 * recursively and hands back the cell where the path leaves it. Every D value is the one
 * the full forward pass computes (same frame values, same operations), so every code, and
 * therefore the path, is identical to the stored backtrace's. A diagonal path visits two
 * quadrants of a quarter the area each: about 2 forward passes of work in all, at most 4.
 * Memory: the kept rows and columns of the regions on the recursion stack (they halve:
 * O(n + m)) plus one stored block.
 */

#define TSW_CAT_(a, b) a##_##b
#define TSW_CAT(a, b) TSW_CAT_(a, b)
#define PF(name) TSW_CAT(name, SFX)

#define TSW__PATH_NB 4      /* rolling row buffers */

typedef struct PF(region) {
    int64_t r0, r1, c0, c1;
    const T *top2, *top1;   /* rows r0-2, r0-1 at columns c0-2 .. c1 */
    const T *left2, *left1; /* columns c0-2, c0-1 at rows r0 .. r1   */
} PF(region);

typedef struct PF(ctx) {
    const tsw__path_job *job;
    int p, kc, subseq;
    int64_t dim, n, m;
    const T *a;           /* (n, dim)                                    */
    const T *bt;          /* (dim, m): b transposed, so a cost row reads contiguous values */
    const T *na, *nb;     /* cosine: the points' norms sqrt(<x,x>)        */
    T *rowbuf;            /* TSW__PATH_NB rows of m + 2                   */
    int64_t *labbuf;      /* subsequence start labels, TSW__PATH_NB rows of m + 2 */
    T *crow;              /* costs of the current rows, by column (m)     */
    uint8_t *code;        /* codes of the current rows, by column (m)     */
    uint8_t *ptrs;        /* one stored block                             */
    size_t ptr_bytes;
    T *arena;             /* kept rows and columns of the recursion       */
    size_t arena_cap, arena_top;
    const T *infs;        /* max(n, m + 2) values +inf: frames outside the grid */
    int64_t *rpath;       /* the path, last cell first                    */
    int64_t rlen, rcap;
    /* progress: cells of forward passes */
    int64_t done, total, last_ns;
    int status;           /* TSW_ECANCELED once the callback asked to stop (shared) */
    int nt;               /* threads for the forward passes */
    /* results of the last forward pass */
    T last_value;         /* D at the region's bottom-right cell */
    int last_slot;        /* rolling slot of the region's last row */
} PF(ctx);

static inline int PF(slot)(int64_t r, int64_t r0) { return (int)((r - r0 + 2) & 3); }

/* ---- local costs ------------------------------------------------------------------------ */

/* Sums over the dims of OP(a_k, b_k) for the cells [j0, j1) of row i, each summed in
 * cost.h's order (k = 0, 1, ...). Tiles of 4 vectors (GCC vector extensions: 32-byte
 * vectors, which the baseline build splits into SSE2 halves) keep their sums in registers
 * across the dims, so each cell costs one load of b per dim. */
typedef T PF(vec) __attribute__((vector_size(32)));
/* integer lanes of T's width (ILANE), for |v| as a cleared sign bit (what fabs does) */
typedef ILANE PF(ivec) __attribute__((vector_size(32)));
#define TSW__VL ((int64_t)(32 / sizeof(T)))
#define TSW__PATH_SUMS(OP, OPS)                                                                     \
    do {                                                                                       \
        int64_t j = j0;                                                                        \
        for (; j + 4 * TSW__VL <= j1; j += 4 * TSW__VL) {                                      \
            PF(vec) s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0}, q;                                 \
            for (int64_t k = 0; k < dim; ++k) {                                                \
                const T *bk = x->bt + k * m + j;                                               \
                PF(vec) ak = {0};                                                              \
                ak += ai[k];                                                                   \
                __builtin_memcpy(&q, bk, sizeof(q));                                           \
                s0 += OP(ak, q);                                                               \
                __builtin_memcpy(&q, bk + TSW__VL, sizeof(q));                                 \
                s1 += OP(ak, q);                                                               \
                __builtin_memcpy(&q, bk + 2 * TSW__VL, sizeof(q));                             \
                s2 += OP(ak, q);                                                               \
                __builtin_memcpy(&q, bk + 3 * TSW__VL, sizeof(q));                             \
                s3 += OP(ak, q);                                                               \
            }                                                                                  \
            __builtin_memcpy(out + j, &s0, sizeof(q));                                         \
            __builtin_memcpy(out + j + TSW__VL, &s1, sizeof(q));                               \
            __builtin_memcpy(out + j + 2 * TSW__VL, &s2, sizeof(q));                           \
            __builtin_memcpy(out + j + 3 * TSW__VL, &s3, sizeof(q));                           \
        }                                                                                      \
        for (; j < j1; ++j) {                                                                  \
            T s = 0;                                                                           \
            for (int64_t k = 0; k < dim; ++k)                                                  \
                s += OPS(ai[k], x->bt[k * m + j]);                                              \
            out[j] = s;                                                                        \
        }                                                                                      \
    } while (0)
#define TSW__OP_SQ(p, q) (((p) - (q)) * ((p) - (q)))
#define TSW__OP_DOT(p, q) ((p) * (q))
#define TSW__OP_ABSS(p, q) FABS((p) - (q))
#define TSW__OP_ABSV(p, q) ((PF(vec))((PF(ivec))((p) - (q)) & ~((PF(ivec)){0} + SIGNBIT)))

/* out[j] = c(i, j) for j in [lo, hi), in cost.h's order of operations. */
static void PF(cost_row)(const PF(ctx) *x, int64_t i, int64_t lo, int64_t hi, T *restrict out)
{
    const int64_t dim = x->dim, m = x->m;
    const T *ai = x->a + i * dim;
    const int64_t j0 = lo, j1 = hi;
    switch (x->kc) {
    case TSW_COST_ABS:
        TSW__PATH_SUMS(TSW__OP_ABSV, TSW__OP_ABSS);
        break;
    case TSW_COST_COSINE: {
        TSW__PATH_SUMS(TSW__OP_DOT, TSW__OP_DOT);
        const T nx = x->na[i], *restrict ny = x->nb;
        const T zero = 0, one = 1;
        int64_t j = j0;
        {
            /* cost.h's rule over vectors: 1 - xy / (nx ny), 1 when one norm is 0, 0 when
             * both are (the masked lanes may divide by zero: no traps, no errno) */
            const PF(vec) onev = (PF(vec)){0} + one, nxv = (PF(vec)){0} + nx;
            const PF(ivec) zx = nxv == (PF(vec)){0};
            for (; j + TSW__VL <= j1; j += TSW__VL) {
                PF(vec) xy, yv;
                __builtin_memcpy(&xy, out + j, sizeof(xy));
                __builtin_memcpy(&yv, ny + j, sizeof(yv));
                PF(vec) v = onev - xy / (nxv * yv);
                PF(ivec) zy = yv == (PF(vec)){0}, z1 = zx | zy, z2 = zx & zy;
                v = (PF(vec))(((PF(ivec))v & ~z1) | ((PF(ivec))onev & z1));
                v = (PF(vec))((PF(ivec))v & ~z2);
                __builtin_memcpy(out + j, &v, sizeof(v));
            }
        }
        for (; j < j1; ++j) { /* cost.h's zero rules, branch-free */
            T v = one - out[j] / (nx * ny[j]);
            T z1 = ((nx == zero) | (ny[j] == zero)) ? one : zero;
            T z2 = ((nx == zero) & (ny[j] == zero)) ? one : zero;
            v = z1 != zero ? one : v;
            out[j] = z2 != zero ? zero : v;
        }
        break;
    }
    case TSW_COST_SQEUCLIDEAN:
    case TSW_COST_EUCLIDEAN:
    default:
        TSW__PATH_SUMS(TSW__OP_SQ, TSW__OP_SQ);
        if (x->kc == TSW_COST_EUCLIDEAN)
            for (int64_t j = j0; j < j1; ++j)
                out[j] = SQRT(out[j]);
        break;
    }
}

/* ---- one row of one block ---------------------------------------------------------------- */

/* Columns [jb, je) of row i. D, P1, P2: rows i, i-1, i-2 indexed by column (valid from
 * c0 - 2). L, L1, L2: their start labels (subsequence first pass) or NULL. */
static void PF(row)(PF(ctx) *x, int64_t i, int64_t jb, int64_t je, int full_fill,
                    T *restrict D, const T *restrict P1, const T *restrict P2, int64_t *L,
                    const int64_t *L1, const int64_t *L2)
{
    int64_t lo = jb, hi = je;
    if (x->job->lo) {
        lo = x->job->lo[i] > jb ? x->job->lo[i] : jb;
        hi = x->job->hi[i] < je ? x->job->hi[i] : je;
        /* A row whose window starts right of this block: nothing of it is admissible here.
         * lo must stay <= je, or the +inf fill below would run into the next thread's block
         * (its code[] of the row it is still packing: a data race that changed Itakura
         * paths with 2+ threads, whose lo jumps several columns a row). */
        if (lo > je)
            lo = je;
        if (hi < lo)
            hi = lo;
    }
    uint8_t *restrict code = x->code;
    /* +inf outside the window, where a later row can read it: rows i+1 and i+2 read this
     * row's slot (its buffer is reused by row i+4) at their own columns [lo', hi') and one
     * or two to the left, so only [min lo' - 2, lo) and [hi, max hi') need it, not the
     * whole row: a band of radius r then costs O(r) a row, not O(m) (issue 36, item 5).
     * The kept rows of the linear method (full) and its kept columns (fwd_block) take the
     * rest; codes outside the window are never read by the backtrace. */
    int64_t fl = jb, fr = je;
    if (x->job->lo && !full_fill) {
        int64_t l2 = lo, h2 = hi;
        for (int64_t q = i + 1; q <= i + 2 && q < x->n; ++q) {
            l2 = x->job->lo[q] < l2 ? x->job->lo[q] : l2;
            h2 = x->job->hi[q] > h2 ? x->job->hi[q] : h2;
        }
        fl = l2 - 2 > jb ? l2 - 2 : jb;
        fr = h2 + 1 < je ? h2 + 1 : je;
        if (fl > lo)
            fl = lo;
        if (fr < hi)
            fr = hi;
    }
    for (int64_t j = fl; j < lo; ++j) {
        D[j] = INF;
        code[j] = 0;
    }
    for (int64_t j = hi; j < fr; ++j) {
        D[j] = INF;
        code[j] = 0;
    }
    if (L) {
        for (int64_t j = fl; j < lo; ++j)
            L[j] = -1;
        for (int64_t j = hi; j < fr; ++j)
            L[j] = -1;
    }
    if (hi <= lo)
        return;
    PF(cost_row)(x, i, lo, hi, x->crow);
    const T *restrict C = x->crow;
    const int p = x->p;
    if (i == 0) {
        /* the start cells; the rest of row 0 follows the pattern (rows -1, -2 are +inf) */
        for (int64_t j = lo; j < hi; ++j) {
            int s;
            T d1 = p != 0 ? P1[j - 2] : D[j - 1], d2 = p != 0 ? P2[j - 1] : P1[j];
            D[j] = CELL(p, C[j], P1[j - 1], d1, d2, x->subseq || j == 0, &s);
            code[j] = (uint8_t)s;
        }
    } else if (p == 0) {
        /* SYMMETRIC1: the left neighbour is the previous iteration's result */
        T left = D[lo - 1];
        for (int64_t j = lo; j < hi; ++j) {
            const T c = C[j];
            const T v0 = P1[j - 1] + c, v1 = left + c, v2 = P1[j] + c;
            T b1, best;
            int cd;
            TSW_PATH_CELL_SEL(v0, v1, v2, b1, best, cd, TSW__LT, TSW__SEL, 0, 1, 2);
            D[j] = best;
            code[j] = (uint8_t)cd;
            left = best;
        }
    } else {
        /* the p05 geometry (P05, P05_QUERY): rows i-1 and i-2 only; vectorises */
        const T k0 = (T)tsw_path_weight(p, 0), k1 = (T)tsw_path_weight(p, 1),
                k2 = (T)tsw_path_weight(p, 2);
        for (int64_t j = lo; j < hi; ++j) {
            const T c = C[j];
            const T v0 = P1[j - 1] + k0 * c, v1 = P1[j - 2] + k1 * c, v2 = P2[j - 1] + k2 * c;
            T b1, best, cd; /* the code as a T: selects of one width vectorise */
            TSW_PATH_CELL_SEL(v0, v1, v2, b1, best, cd, TSW__LT, TSW__SEL, (T)0, (T)1, (T)2);
            D[j] = best;
            code[j] = (uint8_t)(int32_t)cd;
        }
    }
    if (L && i > 0 && p != 0) {
        /* the p05 geometry below row 0: codes 0..2 only, a select chain that vectorises */
        for (int64_t j = lo; j < hi; ++j) {
            const int64_t cd = code[j];
            const int64_t v = cd == 0 ? L1[j - 1] : cd == 1 ? L1[j - 2] : L2[j - 1];
            L[j] = D[j] < INF ? v : -1;
        }
    } else if (L) {
        for (int64_t j = lo; j < hi; ++j) {
            int64_t v;
            if (i == 0 && x->subseq) {
                v = j; /* a subsequence path starts where it reaches row 0 */
            } else {
                switch (code[j]) {
                case 0:
                    v = L1[j - 1];
                    break;
                case 1:
                    v = p != 0 ? L1[j - 2] : L[j - 1];
                    break;
                case 2:
                    v = p != 0 ? L2[j - 1] : L1[j];
                    break;
                default:
                    v = j;
                    break;
                }
            }
            L[j] = D[j] < INF ? v : -1;
        }
    }
}

/* ---- progress ---------------------------------------------------------------------------- */

static int64_t PF(now_ns)(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Calling thread only. Returns non-zero when the call must stop. */
static int PF(poll)(PF(ctx) *x)
{
    if (x->job->progress) {
        int64_t now = PF(now_ns)();
        if (now - x->last_ns >= TSW__PATH_PROGRESS_NS) {
            x->last_ns = now;
            int64_t d = x->done < x->total ? x->done : x->total - 1;
            if (x->job->progress(x->job->progress_user, d < 0 ? 0 : d, x->total))
                __atomic_store_n(&x->status, TSW_ECANCELED, __ATOMIC_RELAXED);
        }
    }
    return __atomic_load_n(&x->status, __ATOMIC_RELAXED) != TSW_OK;
}

/* ---- forward pass ---------------------------------------------------------------------- */

typedef struct PF(keep) {
    T *row2, *row1;   /* rows rm-2, rm-1 at columns c0-2 .. c1, or NULL */
    int64_t rm;
    T *col2, *col1;   /* columns cm-2, cm-1 at rows r0 .. r1, or NULL */
    int64_t cm;
} PF(keep);

/* The rows of region g, columns [jb, je) of each (one thread's block). prog: the threads'
 * row counters (NULL with one thread). */
static void PF(fwd_block)(PF(ctx) *x, const PF(region) *g, int store, const PF(keep) *kp,
                          int labels, int t, int nt, int64_t jb, int64_t je, int64_t *prog)
{
    const int64_t K = g->c1 - g->c0 + 1, W = K + 2, stride = (K + 3) / 4;
    for (int64_t i = g->r0; i <= g->r1; ++i) {
        const int64_t ri = i - g->r0;
        if (prog) {
            /* The left neighbour has finished row i (our cells read its last columns).
             * Row i overwrites the buffer of row i-4, which the right neighbour reads
             * (through our last two columns) until it has finished row i-2. */
            int spins = 0;
            while ((t > 0 && __atomic_load_n(&prog[t - 1], __ATOMIC_ACQUIRE) < ri + 1) ||
                   (t < nt - 1 && __atomic_load_n(&prog[t + 1], __ATOMIC_ACQUIRE) < ri - 1)) {
                if (__atomic_load_n(&x->status, __ATOMIC_RELAXED) != TSW_OK)
                    return;
                if (++spins > 1000)
                    sched_yield();
            }
        }
        T *D = x->rowbuf + (size_t)PF(slot)(i, g->r0) * (size_t)(x->m + 2) + 2 - g->c0;
        const T *P1 = x->rowbuf + (size_t)PF(slot)(i - 1, g->r0) * (size_t)(x->m + 2) + 2 - g->c0;
        const T *P2 = x->rowbuf + (size_t)PF(slot)(i - 2, g->r0) * (size_t)(x->m + 2) + 2 - g->c0;
        int64_t *L = NULL;
        const int64_t *L1 = NULL, *L2 = NULL;
        if (labels) {
            L = x->labbuf + (size_t)PF(slot)(i, g->r0) * (size_t)(x->m + 2) + 2 - g->c0;
            L1 = x->labbuf + (size_t)PF(slot)(i - 1, g->r0) * (size_t)(x->m + 2) + 2 - g->c0;
            L2 = x->labbuf + (size_t)PF(slot)(i - 2, g->r0) * (size_t)(x->m + 2) + 2 - g->c0;
        }
        if (t == 0) {
            D[g->c0 - 2] = g->left2[ri];
            D[g->c0 - 1] = g->left1[ri];
            if (L)
                L[g->c0 - 2] = L[g->c0 - 1] = -1;
        }
        /* a row the linear method keeps whole (kp) gets +inf across its width */
        const int full = i == g->r1 || /* its last cell is the region's value */
                         (kp && ((kp->row2 && i == kp->rm - 2) || (kp->row1 && i == kp->rm - 1)));
        PF(row)(x, i, jb, je, full, D, P1, P2, L, L1, L2);
        if (store) {
            /* the codes of the window's columns only (the backtrace reads no other), in
             * whole bytes of 4 columns counted from c0 (jb - c0 is a multiple of 64) */
            int64_t pb = jb, pe = je;
            if (x->job->lo) {
                pb = x->job->lo[i] > jb ? x->job->lo[i] : jb;
                pb = g->c0 + ((pb - g->c0) & ~(int64_t)3);
                pe = x->job->hi[i] < je ? x->job->hi[i] : je;
                if (pe < pb)
                    pe = pb;
            }
            uint8_t *dst = x->ptrs + (size_t)ri * (size_t)stride + (size_t)((pb - g->c0) / 4);
            const uint8_t *cd = x->code + pb;
            int64_t cnt = pe - pb, q = 0;
            for (; q + 4 <= cnt; q += 4)
                dst[q / 4] = (uint8_t)(cd[q] | (cd[q + 1] << 2) | (cd[q + 2] << 4) | (cd[q + 3] << 6));
            if (q < cnt) {
                uint8_t v = 0;
                for (int64_t r = 0; q + r < cnt; ++r)
                    v |= (uint8_t)(cd[q + r] << (2 * r));
                dst[q / 4] = v;
            }
        }
        if (kp) {
            int64_t f0 = t == 0 ? g->c0 - 2 : jb; /* thread 0 also keeps the frame columns */
            if (kp->row2 && i == kp->rm - 2)
                memcpy(kp->row2 + (f0 - (g->c0 - 2)), D + f0, sizeof(T) * (size_t)(je - f0));
            if (kp->row1 && i == kp->rm - 1)
                memcpy(kp->row1 + (f0 - (g->c0 - 2)), D + f0, sizeof(T) * (size_t)(je - f0));
            /* a kept column outside row i's window is +inf (PF(row) leaves stale values
             * there, past the cells later rows read) */
            int64_t wl = jb, wh = je;
            if (x->job->lo) {
                wl = x->job->lo[i];
                wh = x->job->hi[i];
            }
            if (kp->col2 && kp->cm - 2 >= jb && kp->cm - 2 < je)
                kp->col2[ri] = kp->cm - 2 >= wl && kp->cm - 2 < wh ? D[kp->cm - 2] : INF;
            if (kp->col1 && kp->cm - 1 >= jb && kp->cm - 1 < je)
                kp->col1[ri] = kp->cm - 1 >= wl && kp->cm - 1 < wh ? D[kp->cm - 1] : INF;
        }
        if (prog)
            __atomic_store_n(&prog[t], ri + 1, __ATOMIC_RELEASE);
        if (t == 0) {
            x->done += K;
            if (PF(poll)(x))
                return;
        } else if (__atomic_load_n(&x->status, __ATOMIC_RELAXED) != TSW_OK) {
            return;
        }
    }
    (void)W;
}

/* Forward pass over region g: codes into x->ptrs when store, kept rows and columns into
 * kp (or NULL), start labels when labels. Sets x->last_value, x->last_slot. */
static int PF(fwd)(PF(ctx) *x, const PF(region) *g, int store, const PF(keep) *kp, int labels)
{
    const int64_t K = g->c1 - g->c0 + 1, R = g->r1 - g->r0 + 1;
    const size_t rw = (size_t)(x->m + 2);
    T *s0 = x->rowbuf + (size_t)PF(slot)(g->r0 - 2, g->r0) * rw;
    T *s1 = x->rowbuf + (size_t)PF(slot)(g->r0 - 1, g->r0) * rw;
    memcpy(s0, g->top2, sizeof(T) * (size_t)(K + 2));
    memcpy(s1, g->top1, sizeof(T) * (size_t)(K + 2));
    if (labels) {
        int64_t *q0 = x->labbuf + (size_t)PF(slot)(g->r0 - 2, g->r0) * rw;
        int64_t *q1 = x->labbuf + (size_t)PF(slot)(g->r0 - 1, g->r0) * rw;
        for (int64_t j = 0; j < K + 2; ++j)
            q0[j] = q1[j] = -1;
    }
    /* Threads only when each gets a wide block and there are rows enough to pipeline. */
    int nt = x->nt;
    const int64_t min_block = 1024;
    if (nt > 1 && K / nt < min_block)
        nt = (int)(K / min_block);
    if (nt > 1 && R < 16)
        nt = 1;
    if (nt <= 1) {
        PF(fwd_block)(x, g, store, kp, labels, 0, 1, g->c0, g->c1 + 1, NULL);
    } else {
        int64_t prog[TSW__PATH_MAX_THREADS];
        for (int t = 0; t < TSW__PATH_MAX_THREADS; ++t)
            prog[t] = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), got = omp_get_num_threads();
            /* blocks of whole 64-cell groups from c0, so packed code bytes never straddle */
            int64_t groups = (K + 63) / 64;
            int64_t gb = groups * t / got, ge = groups * (t + 1) / got;
            int64_t jb = g->c0 + gb * 64, je = g->c0 + ge * 64;
            if (je > g->c1 + 1)
                je = g->c1 + 1;
            if (jb > g->c1 + 1)
                jb = g->c1 + 1;
            PF(fwd_block)(x, g, store, kp, labels, t, got, jb, je, prog);
        }
#else
        PF(fwd_block)(x, g, store, kp, labels, 0, 1, g->c0, g->c1 + 1, NULL);
#endif
    }
    if (x->status != TSW_OK)
        return x->status;
    x->last_slot = PF(slot)(g->r1, g->r0);
    x->last_value = x->rowbuf[(size_t)x->last_slot * rw + (size_t)(K + 1)];
    return TSW_OK;
}

/* ---- backtrace ----------------------------------------------------------------------------- */

static inline int PF(code_at)(const PF(ctx) *x, const PF(region) *g, int64_t i, int64_t j)
{
    const int64_t K = g->c1 - g->c0 + 1, stride = (K + 3) / 4, c = j - g->c0;
    return (x->ptrs[(size_t)(i - g->r0) * (size_t)stride + (size_t)(c / 4)] >> (2 * (c & 3))) & 3;
}

/* Follow the stored codes of region g from its bottom-right cell. Returns 1 when the
 * path's start was reached, 0 with (*ei, *ej) the first cell outside g. */
static int PF(trace)(PF(ctx) *x, const PF(region) *g, int64_t *ei, int64_t *ej)
{
    int64_t i = g->r1, j = g->c1;
    for (;;) {
        x->rpath[2 * x->rlen] = i;
        x->rpath[2 * x->rlen + 1] = j;
        x->rlen++;
        if (x->subseq && i == 0)
            return 1;
        int s = PF(code_at)(x, g, i, j);
        if (s == TSW_PATH_START)
            return 1;
        i -= tsw_path_di(x->p, s);
        j -= tsw_path_dj(x->p, s);
        if (i < g->r0 || j < g->c0) {
            *ei = i;
            *ej = j;
            return 0;
        }
    }
}

/* ---- the recursion ------------------------------------------------------------------------ */

static T *PF(arena_take)(PF(ctx) *x, int64_t count)
{
    size_t c = (size_t)count;
    if (x->arena_top + c > x->arena_cap)
        return NULL;
    T *r = x->arena + x->arena_top;
    x->arena_top += c;
    return r;
}

static int PF(fits)(const PF(ctx) *x, int64_t R, int64_t K)
{
    int64_t cells;
    if (__builtin_mul_overflow(R, K, &cells))
        return 0;
    return (size_t)cells <= x->job->block_cells;
}

/* Path through region g (trimmed: the path enters at its bottom-right cell). Returns 1 when
 * the start was reached, 0 with the exit cell, or a negative status. top: the whole grid
 * (its bottom-right D is the path's cost: +inf means no path). */
static int PF(solve)(PF(ctx) *x, const PF(region) *g, int top, T *cost, int64_t *ei,
                     int64_t *ej)
{
    const int64_t R = g->r1 - g->r0 + 1, K = g->c1 - g->c0 + 1;
    int rc;
    if ((top && x->job->force_stored) || PF(fits)(x, R, K) || (R < 4 && K < 4)) {
        if ((rc = PF(fwd)(x, g, 1, NULL, 0)))
            return rc;
        if (top) {
            *cost = x->last_value;
            if (!(x->last_value < INF))
                return TSW_ENOPATH;
        }
        return PF(trace)(x, g, ei, ej);
    }
    const size_t mark = x->arena_top;
    PF(keep) kp = {NULL, NULL, g->r1 + 1, NULL, NULL, g->c1 + 1};
    if (R >= 4) {
        kp.rm = g->r0 + R / 2;
        kp.row2 = PF(arena_take)(x, K + 2);
        kp.row1 = PF(arena_take)(x, K + 2);
    }
    if (K >= 4) {
        kp.cm = g->c0 + K / 2;
        kp.col2 = PF(arena_take)(x, R);
        kp.col1 = PF(arena_take)(x, R);
    }
    if ((R >= 4 && (!kp.row2 || !kp.row1)) || (K >= 4 && (!kp.col2 || !kp.col1))) {
        x->arena_top = mark;
        return TSW_ENOMEM; /* not reached: the arena is sized for the deepest recursion */
    }
    if ((rc = PF(fwd)(x, g, 0, &kp, 0))) {
        x->arena_top = mark;
        return rc;
    }
    if (top) {
        *cost = x->last_value;
        if (!(x->last_value < INF)) {
            x->arena_top = mark;
            return TSW_ENOPATH;
        }
    }
    int64_t ci = g->r1, cj = g->c1;
    for (;;) {
        const int bottom = ci >= kp.rm, right = cj >= kp.cm;
        PF(region) h;
        h.r0 = bottom ? kp.rm : g->r0;
        h.r1 = ci;
        h.c0 = right ? kp.cm : g->c0;
        h.c1 = cj;
        h.top2 = (bottom ? kp.row2 : g->top2) + (h.c0 - g->c0);
        h.top1 = (bottom ? kp.row1 : g->top1) + (h.c0 - g->c0);
        h.left2 = (right ? kp.col2 : g->left2) + (h.r0 - g->r0);
        h.left1 = (right ? kp.col1 : g->left1) + (h.r0 - g->r0);
        rc = PF(solve)(x, &h, 0, cost, &ci, &cj);
        if (rc != 0)
            break;
        if (ci < g->r0 || cj < g->c0) {
            *ei = ci;
            *ej = cj;
            break;
        }
    }
    x->arena_top = mark;
    return rc;
}

/* ---- setup ----------------------------------------------------------------------------------- */

/* Arena elements for the recursion over an R x K grid: the kept rows and columns of one
 * region per depth (children have at most ceil(R/2) rows and ceil(K/2) columns). */
static size_t PF(arena_elems)(const tsw__path_job *job, int64_t R, int64_t K)
{
    size_t total = 64;
    for (;;) {
        int64_t cells;
        int fits = !__builtin_mul_overflow(R, K, &cells) && (size_t)cells <= job->block_cells;
        if (fits || (R < 4 && K < 4))
            break;
        if (R >= 4)
            total += 2 * (size_t)(K + 2);
        if (K >= 4)
            total += 2 * (size_t)R;
        R = R >= 4 ? R - R / 2 : R;
        K = K >= 4 ? K - K / 2 : K;
    }
    return total;
}

typedef struct PF(mem) {
    void *block;    /* one aligned allocation for everything but the stored block */
    uint8_t *ptrs;
} PF(mem);

static void PF(release)(PF(mem) *mm)
{
    tsw__free_aligned(mm->block);
    tsw__free_aligned(mm->ptrs);
}

/* Workspace for paths through grids of up to n x mcols cells; ptr_bytes for the stored
 * block. Everything is allocated here, once per call. */
static int PF(setup)(PF(ctx) *x, PF(mem) *mm, const tsw__path_job *job, int labels,
                     size_t ptr_bytes, int64_t path_cap)
{
    const int64_t n = job->n, m = job->m, dim = job->dim;
    memset(x, 0, sizeof(*x));
    memset(mm, 0, sizeof(*mm));
    x->job = job;
    x->p = job->step;
    x->kc = job->cost;
    x->subseq = job->subseq;
    x->dim = dim;
    x->n = n;
    x->m = m;
    x->a = (const T *)job->a;
    x->nt = job->n_threads < TSW__PATH_MAX_THREADS ? job->n_threads : TSW__PATH_MAX_THREADS;
    x->status = TSW_OK;
    x->last_ns = 0; /* the first row reports: a cancel is seen at once */

    const size_t esz = sizeof(T);
    const size_t inf_n = (size_t)(n > m + 2 ? n : m + 2);
    const int cos = job->cost == TSW_COST_COSINE;
    size_t off = 0, o_bt, o_na, o_nb, o_rows, o_crow, o_infs, o_arena, o_lab, o_code, o_path;
    size_t arena_n = PF(arena_elems)(job, n, m);
#define TSW__TAKE(o, bytes)                                                                    \
    do {                                                                                      \
        o = off;                                                                              \
        off += ((bytes) + 63) / 64 * 64;                                                      \
    } while (0)
    TSW__TAKE(o_bt, esz * (size_t)dim * (size_t)m);
    TSW__TAKE(o_na, cos ? esz * (size_t)n : 0);
    TSW__TAKE(o_nb, cos ? esz * (size_t)m : 0);
    TSW__TAKE(o_rows, esz * TSW__PATH_NB * (size_t)(m + 2));
    TSW__TAKE(o_crow, esz * (size_t)m);
    TSW__TAKE(o_infs, esz * inf_n);
    TSW__TAKE(o_arena, esz * arena_n);
    TSW__TAKE(o_lab, labels ? sizeof(int64_t) * TSW__PATH_NB * (size_t)(m + 2) : 0);
    TSW__TAKE(o_code, (size_t)m + 64);
    TSW__TAKE(o_path, sizeof(int64_t) * 2 * (size_t)path_cap);
#undef TSW__TAKE
    unsigned char *base = tsw__malloc_aligned(off);
    if (!base) {
        tsw__set_detail("the path's working memory needs %zu bytes (the stored steps of "
                        "method 'stored' included; method='linear' needs O(n + m))",
                        off);
        return TSW_ENOMEM;
    }
    mm->block = base;
    if (ptr_bytes) {
        mm->ptrs = tsw__malloc_aligned(ptr_bytes);
        if (!mm->ptrs) {
            tsw__set_detail("the path's block pointers need %zu bytes", ptr_bytes);
            PF(release)(mm);
            return TSW_ENOMEM;
        }
    }
    T *bt = (T *)(base + o_bt);
    const T *b = (const T *)job->b;
    for (int64_t j = 0; j < m; ++j)
        for (int64_t k = 0; k < dim; ++k)
            bt[k * m + j] = b[j * dim + k];
    x->bt = bt;
    if (cos) {
        T *na = (T *)(base + o_na), *nb = (T *)(base + o_nb);
        for (int64_t i = 0; i < n; ++i) {
            T s = 0;
            for (int64_t k = 0; k < dim; ++k)
                s += x->a[i * dim + k] * x->a[i * dim + k];
            na[i] = SQRT(s);
        }
        for (int64_t j = 0; j < m; ++j) {
            T s = 0;
            for (int64_t k = 0; k < dim; ++k)
                s += b[j * dim + k] * b[j * dim + k];
            nb[j] = SQRT(s);
        }
        x->na = na;
        x->nb = nb;
    }
    x->rowbuf = (T *)(base + o_rows);
    x->crow = (T *)(base + o_crow);
    T *infs = (T *)(base + o_infs);
    for (size_t q = 0; q < inf_n; ++q)
        infs[q] = INF;
    x->infs = infs;
    x->arena = (T *)(base + o_arena);
    x->arena_cap = arena_n;
    x->labbuf = labels ? (int64_t *)(base + o_lab) : NULL;
    x->code = base + o_code;
    x->rpath = (int64_t *)(base + o_path);
    x->rcap = path_cap;
    x->ptrs = mm->ptrs;
    x->ptr_bytes = ptr_bytes;
    return TSW_OK;
}

/* Stored-block bytes for paths through grids of up to R x K cells. */
static size_t PF(ptr_bytes)(const tsw__path_job *job, int64_t R, int64_t K)
{
    size_t stride = (size_t)(K + 3) / 4, full;
    if (tsw__mul_size((size_t)R, stride, &full))
        full = SIZE_MAX;
    if (job->force_stored)
        return full;
    /* a block of at most block_cells cells: R' K' <= block_cells, rows padded to bytes */
    size_t cap = job->block_cells / 4 + (size_t)(R < K ? K : R) + 64;
    if (cap < 64)
        cap = 64;
    return full < cap ? full : cap;
}

/* The whole-grid region ending at (r1, c1), framed by +inf. */
static PF(region) PF(grid)(const PF(ctx) *x, int64_t r1, int64_t c1)
{
    PF(region) g = {0, r1, 0, c1, x->infs, x->infs, x->infs, x->infs};
    return g;
}

/* Copy the reversed path into out (forward order). */
static void PF(emit)(const PF(ctx) *x, int64_t *out)
{
    for (int64_t q = 0; q < x->rlen; ++q) {
        out[2 * q] = x->rpath[2 * (x->rlen - 1 - q)];
        out[2 * q + 1] = x->rpath[2 * (x->rlen - 1 - q) + 1];
    }
}

static void PF(progress_end)(PF(ctx) *x)
{
    if (x->job->progress)
        x->job->progress(x->job->progress_user, x->total, x->total);
}

/* Expected forward-pass cells: one pass for a stored block, about three for the recursion
 * (the count shown is capped below the total until the end). */
static int64_t PF(estimate)(const tsw__path_job *job, int64_t R, int64_t K)
{
    double cells = (double)R * (double)K;
    int fits = job->force_stored || cells <= (double)job->block_cells;
    double t = fits ? cells : 3.0 * cells;
    return t > 9.0e18 ? (int64_t)9.0e18 : (t < 1 ? 1 : (int64_t)t);
}

int TSW_CAT(tsw__path_align, SFX)(const tsw__path_job *job, int64_t *path, int64_t *length,
                                  double *cost)
{
    PF(ctx) x;
    PF(mem) mm;
    const int64_t n = job->n, m = job->m;
    int rc = PF(setup)(&x, &mm, job, 0, PF(ptr_bytes)(job, n, m), n + m - 1);
    if (rc)
        return rc;
    x.total = PF(estimate)(job, n, m);
    PF(region) g = PF(grid)(&x, n - 1, m - 1);
    T c = INF;
    int64_t ei = 0, ej = 0;
    rc = PF(solve)(&x, &g, 1, &c, &ei, &ej);
    if (rc == 1) {
        PF(progress_end)(&x);
        PF(emit)(&x, path);
        *length = x.rlen;
        *cost = (double)c;
        rc = TSW_OK;
    } else if (rc == 0) {
        rc = TSW_ENOPATH; /* not reached: a finite end always traces back to the start */
    }
    PF(release)(&mm);
    return rc;
}

/* ---- subsequence DTW ------------------------------------------------------------------------ */

int TSW_CAT(tsw__path_subseq, SFX)(const tsw__path_job *job, int64_t k, tsw_match *matches,
                                   int64_t *count, int64_t *path)
{
    PF(ctx) x;
    PF(mem) mm;
    const int64_t n = job->n, m = job->m;
    int rc = PF(setup)(&x, &mm, job, 1, path ? PF(ptr_bytes)(job, n, m) : 0, n + m - 1);
    if (rc)
        return rc;
    if (k > m)
        k = m;
    /* the last row as doubles, the starts, and the chosen matches (tsw__subseq_pick) */
    double *lastc = tsw__malloc(sizeof(double) * (size_t)m);
    int64_t *start = tsw__malloc(sizeof(int64_t) * (size_t)m);
    tsw_match *pick = tsw__malloc(sizeof(tsw_match) * (size_t)k);
    int64_t *paths = path ? tsw__malloc(sizeof(int64_t) * 2 * (size_t)(k * (n - 1) + m)) : NULL;
    if (!lastc || !start || !pick || (path && !paths)) {
        rc = TSW_ENOMEM;
        goto done;
    }
    x.total = m * n;
    if (path) /* one more pass per match, over its columns 0..end */
        x.total += (int64_t)k * PF(estimate)(job, n, m);

    /* 1. one pass over the grid: D and the start of every end */
    PF(region) g = PF(grid)(&x, n - 1, m - 1);
    if ((rc = PF(fwd)(&x, &g, 0, NULL, 1)))
        goto done;
    {
        const size_t rw = (size_t)(m + 2);
        const T *Dl = x.rowbuf + (size_t)x.last_slot * rw + 2;
        const int64_t *Ll = x.labbuf + (size_t)x.last_slot * rw + 2;
        for (int64_t j = 0; j < m; ++j) {
            start[j] = Ll[j];
            lastc[j] = Dl[j] < INF ? (double)Dl[j] : (double)TSW_INF_F64;
        }
        /* 2. greedy: best ends first, kept when [start, end] overlaps no kept range */
        int64_t got = 0;
        if ((rc = tsw__subseq_pick(m, lastc, start, k, pick, &got)))
            goto done;
        /* 3. the paths: each over the columns 0..end (the same D values as the pass) */
        int64_t used = 0;
        if (path) {
            for (int64_t q = 0; q < got; ++q) {
                PF(region) h = PF(grid)(&x, n - 1, pick[q].end);
                T c = INF;
                int64_t ei = 0, ej = 0;
                x.rlen = 0;
                x.arena_top = 0;
                rc = PF(solve)(&x, &h, 1, &c, &ei, &ej);
                if (rc != 1) {
                    if (rc == 0)
                        rc = TSW_ENOPATH; /* not reached */
                    goto done;
                }
                PF(emit)(&x, paths + 2 * used);
                pick[q].path_offset = used;
                pick[q].path_length = x.rlen;
                used += x.rlen;
            }
        }
        PF(progress_end)(&x);
        memcpy(matches, pick, sizeof(tsw_match) * (size_t)got);
        if (path)
            memcpy(path, paths, sizeof(int64_t) * 2 * (size_t)used);
        *count = got;
        rc = TSW_OK;
    }
done:
    tsw__free(lastc);
    tsw__free(start);
    tsw__free(pick);
    tsw__free(paths);
    PF(release)(&mm);
    return rc;
}

/* ---- last row of a subsequence grid (segmental DTW's first pass) --------------------------- */

/* One forward pass over the job's whole grid (subseq = 1): cost[j] = D(n-1, j) (+inf where
 * no path ends) and, unless start is NULL, start[j] = the column where the path ending at j
 * starts (-1 where none), for j in [from, m). Nothing else is kept. Without start the pass
 * carries no start labels (a third or more of the pass's time). */
int TSW_CAT(tsw__path_lastrow, SFX)(const tsw__path_job *job, int64_t from, double *cost,
                                    int64_t *start)
{
    PF(ctx) x;
    PF(mem) mm;
    const int64_t n = job->n, m = job->m;
    const int labels = start != NULL;
    int rc = PF(setup)(&x, &mm, job, labels, 0, 1);
    if (rc)
        return rc;
    x.total = n * m;
    PF(region) g = PF(grid)(&x, n - 1, m - 1);
    if ((rc = PF(fwd)(&x, &g, 0, NULL, labels)) == TSW_OK) {
        const size_t rw = (size_t)(m + 2);
        const T *Dl = x.rowbuf + (size_t)x.last_slot * rw + 2;
        const int64_t *Ll = labels ? x.labbuf + (size_t)x.last_slot * rw + 2 : NULL;
        for (int64_t j = from; j < m; ++j)
            cost[j - from] = Dl[j] < INF ? (double)Dl[j] : (double)TSW_INF_F64;
        if (labels)
            for (int64_t j = from; j < m; ++j)
                start[j - from] = Dl[j] < INF ? Ll[j] : -1;
        PF(progress_end)(&x);
    }
    PF(release)(&mm);
    return rc;
}

#undef TSW__PATH_SUMS
#undef TSW__VL
#undef TSW__OP_SQ
#undef TSW__OP_DOT
#undef TSW__OP_ABSS
#undef TSW__OP_ABSV
#undef PF
#undef TSW_CAT
#undef TSW_CAT_
