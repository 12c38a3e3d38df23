/*
 * Shapelets: the fast path (running dot products) against the reference (eq. 2 directly) on
 * random ragged problems, for the search (plain, subset, AND/OR partners, length steps,
 * float32), the top-k list and the distances; one-vs-rest against the two-class problems of
 * each class; thread-count independence; a hand-checked
 * example; constant windows; every error path.
 */
#include "harness.h"

#include <float.h>

extern double tsw__shapelet_table_bytes; /* cpu/shapelet.c: 0 forces per-item 1/std rows */
extern int tsw__shapelet_simd;          /* cpu/shapelet.c: 0 forces the portable loops */

typedef struct {
    int64_t n, *len, *off;
    double *v;
    float *vf;
    int32_t *lab;
    tsw_collection c, cf;
} problem;

static void make_problem(problem *p, tsw_t_rng *r, int64_t n, int64_t lo, int64_t hi, int C)
{
    p->n = n;
    p->len = malloc((size_t)n * sizeof(int64_t));
    p->off = malloc((size_t)n * sizeof(int64_t));
    p->lab = malloc((size_t)n * sizeof(int32_t));
    int64_t rows = 0;
    for (int64_t i = 0; i < n; ++i) {
        p->len[i] = lo + (int64_t)(tsw_t_next(r) % (uint64_t)(hi - lo + 1));
        p->off[i] = rows;
        rows += p->len[i];
        p->lab[i] = (int32_t)(i % C); /* every class present */
    }
    p->v = malloc((size_t)rows * sizeof(double));
    p->vf = malloc((size_t)rows * sizeof(float));
    for (int64_t k = 0; k < rows; ++k) {
        p->vf[k] = (float)tsw_t_uniform(r, -1, 1);
        p->v[k] = p->vf[k];
    }
    /* a planted bump in class 0 so the best split is not pure noise, and a flat stretch */
    for (int64_t i = 0; i < n; i += C)
        for (int64_t t = 1; t < 4 && t < p->len[i]; ++t)
            p->v[p->off[i] + t] = p->vf[p->off[i] + t] = (float)(2.0 * t);
    for (int64_t t = 0; t < 4 && t < p->len[n - 1]; ++t)
        p->v[p->off[n - 1] + t] = p->vf[p->off[n - 1] + t] = 0.5f;
    memset(&p->c, 0, sizeof(p->c));
    p->c.values = p->v;
    p->c.offsets = p->off;
    p->c.lengths = p->len;
    p->c.count = n;
    p->cf = p->c;
    p->cf.values = p->vf;
}

static void free_problem(problem *p)
{
    free(p->len);
    free(p->off);
    free(p->lab);
    free(p->v);
    free(p->vf);
}

static int same_shapelet(const tsw_shapelet *a, const tsw_shapelet *b, const char *file,
                         int line)
{
    int ok = CHECK_AT(a->series == b->series && a->start == b->start && a->length == b->length &&
                          a->dilation == b->dilation,
                      file, line);
    if (!ok)
        TSW_T_NOTE("  (%lld,%lld,%lld) gain %.17g gap %.17g vs (%lld,%lld,%lld) gain %.17g gap "
                   "%.17g\n",
                   (long long)a->series, (long long)a->start, (long long)a->length, a->gain,
                   a->gap, (long long)b->series, (long long)b->start, (long long)b->length,
                   b->gain, b->gap);
    ok &= CHECK_AT(a->gain == b->gain, file, line);
    ok &= CHECK_AT(fabs(a->threshold - b->threshold) <= 1e-7, file, line);
    ok &= CHECK_AT(fabs(a->gap - b->gap) <= 1e-7, file, line);
    return ok;
}
#define SAME(a, b) same_shapelet(a, b, __FILE__, __LINE__)

/* Eq. 2 written out: the z-normalised distance of a (length l) to b (length l); a constant
 * window z-normalises to zeros (include/tswarp.h). */
static double zdist(const double *a, const double *b, int64_t l)
{
    double ma = 0, mb = 0, va = 0, vb = 0, s = 0;
    for (int64_t t = 0; t < l; ++t)
        ma += a[t], mb += b[t];
    ma /= (double)l, mb /= (double)l;
    for (int64_t t = 0; t < l; ++t)
        va += (a[t] - ma) * (a[t] - ma), vb += (b[t] - mb) * (b[t] - mb);
    const double sa = sqrt(va / (double)l), sb = sqrt(vb / (double)l);
    int fa = 1, fb = 1;
    for (int64_t t = 1; t < l; ++t)
        fa &= a[t] == a[0], fb &= b[t] == b[0];
    for (int64_t t = 0; t < l; ++t) {
        const double za = fa ? 0.0 : (a[t] - ma) / sa, zb = fb ? 0.0 : (b[t] - mb) / sb;
        s += (za - zb) * (za - zb);
    }
    return sqrt(s / (double)l);
}

/* The distance of shapelet sv (l points) to series w (m points) at alignment u, as
 * include/tswarp.h defines it: u >= 0, the window w[u .. u + l) when m >= l; u <= 0, the
 * series against the window sv[-u .. -u + m) of the shapelet when m < l. */
static double conv_at(const double *sv, int64_t l, const double *w, int64_t m, int64_t u)
{
    return m >= l ? zdist(sv, w + u, l) : zdist(sv - u, w, m);
}

/* The least conv_at over every alignment, the first best alignment (*at) and how many lie
 * within thr - slack (*near, with slack > 0 an upper count, < 0 a lower one). */
static double conv_best(const double *sv, int64_t l, const double *w, int64_t m, double thr,
                        int64_t *at, int64_t *near)
{
    const int64_t nu = (m >= l ? m - l : l - m) + 1;
    double best = INFINITY;
    *at = 0;
    *near = 0;
    for (int64_t k = 0; k < nu; ++k) {
        const int64_t u = m >= l ? k : -k;
        const double d = conv_at(sv, l, w, m, u);
        if (d < best) {
            best = d;
            *at = u;
        }
        *near += d <= thr;
    }
    return best;
}

static void test_random(void)
{
    tsw_t_rng r = {42};
    int rounds = tsw_t_quick() ? 3 : 12;
    for (int round = 0; round < rounds; ++round) {
        int C = 2 + round % 3;
        problem p;
        make_problem(&p, &r, 6 + round % 5, 9, 16, C);
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.min_length = 2 + round % 3;
        /* steps of 1 and 2, and 11: runs of 10 lengths that are not searched (the fast
         * path grows them TSW_SHP_FUSE at a time) */
        sp.length_step = round % 4 == 3 ? 11 : 1 + round % 2;
        tsw_exec ref, fast;
        tsw_exec_default(&ref);
        tsw_exec_default(&fast);
        ref.impl = TSW_IMPL_REFERENCE;
        ref.n_threads = 1;

        tsw_shapelet a, b;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        CHECK(a.series >= 0 && a.gain > 0);
        SAME(&a, &b);
        double table = tsw__shapelet_table_bytes;
        tsw__shapelet_table_bytes = 0; /* the same without the 1/std table */
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME(&a, &b);
        tsw__shapelet_table_bytes = table;
        for (int nt = 1; nt <= 3; ++nt) { /* thread count does not change the answer */
            fast.n_threads = nt;
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast),
                     TSW_OK);
            SAME(&a, &b);
        }
        fast.n_threads = 0;
        /* float32 values: the same numbers widened, so the same result */
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F32, &p.cf, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME(&a, &b);

        /* a subset (every other series, reversed) */
        int64_t sub[16], ns = 0;
        for (int64_t i = p.n - 1; i >= 0; i -= 1)
            if (i % 3 != 1)
                sub[ns++] = i;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &a, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &b, &fast), TSW_OK);
        SAME(&a, &b);

        /* logical partners: the distances of the best shapelet, AND and OR */
        double part[16];
        for (int64_t k = 0; k < ns; ++k)
            part[k] = tsw_t_uniform(&r, 0, 1.5);
        for (int lg = 1; lg <= 2; ++lg) {
            sp.logic = (tsw_shapelet_logic)lg;
            sp.partner = part;
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &a, &ref), TSW_OK);
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &b, &fast),
                     TSW_OK);
            SAME(&a, &b);
        }
        sp.logic = TSW_LOGIC_NONE;
        sp.partner = NULL;

        /* candidates longer than most series (which slide along them): the same best and
         * the same top-k list on both paths */
        {
            int64_t lg = p.len[0];
            for (int64_t i = 1; i < p.n; ++i)
                lg = p.len[i] > lg ? p.len[i] : lg;
            tsw_shapelet_params lp = sp;
            lp.min_length = lg - 3;
            lp.length_step = 1;
            tsw_shapelet la[6], lb[6];
            int64_t nla = -1, nlb = -2;
            CHECK_RC(tsw_shapelet_search(&lp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
            CHECK_RC(tsw_shapelet_search(&lp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
            SAME(&a, &b);
            CHECK(a.length >= lg - 3 && a.start + a.length <= p.len[a.series]);
            CHECK_RC(tsw_shapelet_top(&lp, TSW_F64, &p.c, p.lab, NULL, 0, 6, la, &nla, &ref),
                     TSW_OK);
            CHECK_RC(tsw_shapelet_top(&lp, TSW_F64, &p.c, p.lab, NULL, 0, 6, lb, &nlb, &fast),
                     TSW_OK);
            CHECK(nla >= 1 && nlb == nla);
            for (int64_t k = 0; k < nla && k < nlb; ++k)
                SAME(&la[k], &lb[k]);
            tsw__shapelet_table_bytes = 0;
            CHECK_RC(tsw_shapelet_search(&lp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
            tsw__shapelet_table_bytes = table;
            SAME(&a, &b);
        }

        /* top-k: same list; no two kept candidates overlap in a series; best first */
        tsw_shapelet ta[12], tb[12];
        int64_t na = -1, nb = -2;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 12, ta, &na, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 12, tb, &nb, &fast),
                 TSW_OK);
        /* fewer when the series have no room for 12 (few lengths with step 11) */
        CHECK(na >= (sp.length_step > 2 ? 1 : 4) && na <= 12);
        CHECK_EQ(nb, na);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_OK);
        SAME(&ta[0], &a);
        for (int64_t k = 0; k < na && k < nb; ++k) {
            SAME(&ta[k], &tb[k]);
            for (int64_t m = 0; m < k; ++m)
                CHECK(ta[m].series != ta[k].series ||
                      ta[m].start + ta[m].length <= ta[k].start ||
                      ta[k].start + ta[k].length <= ta[m].start);
            if (k > 0)
                CHECK(ta[k - 1].gain >= ta[k].gain);
        }

        /* distances: fast = reference; the best shapelet's distances reproduce its split; a
         * shapelet as long as the longest series (the shorter ones slide along it) */
        int64_t longest = p.len[0];
        for (int64_t i = 1; i < p.n; ++i)
            longest = p.len[i] > longest ? p.len[i] : longest;
        int64_t nsh = 3, slen[3] = {a.length, 2, longest}, soff[3];
        double sv[64];
        int64_t rows = 0;
        for (int k = 0; k < 3; ++k) {
            soff[k] = rows;
            for (int64_t t = 0; t < slen[k]; ++t)
                sv[rows + t] = k == 0 ? p.v[p.off[a.series] + a.start + t]
                                      : tsw_t_uniform(&r, -1, 1);
            rows += slen[k];
        }
        tsw_collection sc = {sv, soff, slen, 0, nsh, NULL};
        double *d1 = malloc((size_t)p.n * 3 * sizeof(double));
        double *d2 = malloc((size_t)p.n * 3 * sizeof(double));
        int64_t *p1 = malloc((size_t)p.n * 3 * sizeof(int64_t));
        int64_t *p2 = malloc((size_t)p.n * 3 * sizeof(int64_t));
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, d1, p1, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, d2, p2, &fast), TSW_OK);
        int64_t nleft = 0;
        for (int64_t k = 0; k < p.n * 3; ++k) {
            CHECK_NEAR(d1[k], d2[k], 1e-7);
            CHECK(d1[k] >= 0 && d1[k] <= 2.0 + 1e-12);
        }
        for (int64_t j = 0; j < p.n; ++j) {
            nleft += d2[j * 3] <= a.threshold;
            for (int64_t k = 0; k < 3; ++k) { /* the positions, and eq. 2 at them */
                const int64_t u = p1[j * 3 + k];
                CHECK_EQ(p2[j * 3 + k], u);
                CHECK(slen[k] <= p.len[j] ? u >= 0 && u + slen[k] <= p.len[j]
                                          : u <= 0 && u >= p.len[j] - slen[k]);
                CHECK_NEAR(conv_at(sv + soff[k], slen[k], p.v + p.off[j], p.len[j], u),
                           d1[j * 3 + k], 1e-7);
            }
        }
        CHECK(nleft >= 1 && nleft < p.n);
        CHECK_NEAR(d2[a.series * 3], 0.0, 1e-7); /* the shapelet is in its own series */
        CHECK_EQ(p2[a.series * 3], a.start);

        /* occurrences: windows within each threshold, counted directly from eq. 2 (windows
         * within 1e-7 of a threshold may go either way: rounding); a count is positive
         * exactly when the distance is within the threshold; the distances are unchanged */
        double thr[3] = {a.threshold, tsw_t_uniform(&r, 0.0, 1.5), tsw_t_uniform(&r, 0.0, 1.5)};
        int64_t *c1 = malloc((size_t)p.n * 3 * sizeof(int64_t));
        int64_t *c2 = malloc((size_t)p.n * 3 * sizeof(int64_t));
        const tsw_exec *modes[2] = {&ref, &fast};
        for (int m = 0; m < 2; ++m) {
            int64_t *cm = m ? c2 : c1;
            double *dm = m ? d2 : d1;
            double dd[64 * 3];
            CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, thr, &p.c, dd, NULL, cm, modes[m]),
                     TSW_OK);
            for (int64_t q = 0; q < p.n * 3; ++q) {
                CHECK(dd[q] == dm[q]);
                CHECK_EQ(cm[q] > 0, dd[q] <= thr[q % 3]);
            }
        }
        for (int64_t j = 0; j < p.n; ++j)
            for (int64_t k = 0; k < 3; ++k) {
                int64_t lo, hi, at;
                const double *sk = sv + soff[k], *xj = p.v + p.off[j];
                const double best = conv_best(sk, slen[k], xj, p.len[j], thr[k] - 1e-7, &at,
                                              &lo);
                conv_best(sk, slen[k], xj, p.len[j], thr[k] + 1e-7, &at, &hi);
                CHECK_NEAR(d1[j * 3 + k], best, 1e-7);
                CHECK(c1[j * 3 + k] >= lo && c1[j * 3 + k] <= hi);
                CHECK(c2[j * 3 + k] >= lo && c2[j * 3 + k] <= hi);
            }
        CHECK(c2[a.series * 3] >= 1);
        free(c1);
        free(c2);
        free(d1);
        free(d2);
        free(p1);
        free(p2);
        free_problem(&p);
    }
}

/* Bit for bit: the same top-k list (shapelets, gains, gaps, thresholds) from the AVX2 and
 * the portable loops (the CUDA kernel repeats the same roundings), and the same best as the
 * reference. Order lines of 40 series (sorted by counted ranks, with exact ties from copied
 * series) and of 170 (heap sort). */
static void same_bits(const tsw_shapelet *a, const tsw_shapelet *b, const char *file, int line)
{
    CHECK_AT(a->series == b->series && a->start == b->start && a->length == b->length &&
                 a->gain == b->gain && a->gap == b->gap && a->threshold == b->threshold,
             file, line);
}

static void test_isa_and_sorts(void)
{
    tsw_t_rng r = {7};
    const int64_t sizes[3] = {40, 170, 40};
    for (int round = 0; round < 3; ++round) {
        const int C = 3;
        const int64_t n = sizes[round];
        problem p;
        make_problem(&p, &r, n, round == 1 ? 8 : 20, round == 1 ? 11 : 36, C);
        for (int64_t i = 5; i < n; i += 11) /* copies of series 0: ties on the order lines */
            for (int64_t t = 0; t < p.len[i] && t < p.len[0]; ++t)
                p.v[p.off[i] + t] = p.v[p.off[0] + t];
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        /* round 2: lengths 12, 21, 30, after runs of 11 and 8 lengths that are not
         * searched (grown TSW_SHP_FUSE at a time) */
        sp.min_length = round == 2 ? 12 : 3;
        sp.max_length = round == 1 ? 7 : 0;
        sp.length_step = round == 1 ? 1 : round == 2 ? 9 : 2;
        tsw_exec ref, fast;
        tsw_exec_default(&ref);
        tsw_exec_default(&fast);
        ref.impl = TSW_IMPL_REFERENCE;
        tsw_shapelet a, b, c;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME(&a, &b);
        tsw__shapelet_simd = 0;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &c, &fast), TSW_OK);
        same_bits(&b, &c, __FILE__, __LINE__);
        enum { K = 25 };
        tsw_shapelet ta[K], tb[K];
        int64_t na = -1, nb = -2;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, K, ta, &na, &fast),
                 TSW_OK);
        tsw__shapelet_simd = -1;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, K, tb, &nb, &fast),
                 TSW_OK);
        CHECK_EQ(na, K);
        CHECK_EQ(nb, na);
        for (int64_t k = 0; k < na && k < nb; ++k)
            same_bits(&ta[k], &tb[k], __FILE__, __LINE__);
        same_bits(&ta[0], &b, __FILE__, __LINE__);
        free_problem(&p);
    }
}

/* Distance of the values themselves (tsw_shapelet_params.raw): sqrt(mean((a - b)^2)) over the
 * alignments of conv_at, in the data's units. */
static double raw_best(const double *sv, int64_t l, const double *w, int64_t m)
{
    const int64_t nu = (m >= l ? m - l : l - m) + 1, k = m < l ? m : l;
    double best = INFINITY;
    for (int64_t u = 0; u < nu; ++u) {
        const double *a = m >= l ? sv : sv + u, *b = m >= l ? w + u : w;
        double s = 0.0;
        for (int64_t t = 0; t < k; ++t)
            s += (a[t] - b[t]) * (a[t] - b[t]);
        best = s / (double)k < best ? s / (double)k : best;
    }
    return sqrt(best);
}

/* Same candidate and gain; thresholds and gaps within tol (the data's units). */
static void same_raw(const tsw_shapelet *a, const tsw_shapelet *b, double tol, const char *file,
                     int line)
{
    CHECK_AT(a->series == b->series && a->start == b->start && a->length == b->length &&
                 a->dilation == b->dilation && a->gain == b->gain,
             file, line);
    CHECK_AT(fabs(a->threshold - b->threshold) <= tol && fabs(a->gap - b->gap) <= tol, file,
             line);
}
#define SAME_RAW(a, b, tol) same_raw(a, b, tol, __FILE__, __LINE__)

/*
 * Shapelets that are not z-normalised: data at a level of 100 and a spread of ~3, classes
 * that differ in level. The fast path (AVX2 and portable loops, any threads, float32) equals
 * the reference; subsets, AND/OR partners in the data's units, long candidates, dilation,
 * top-k; the search is equivariant (x -> 7 x - 40 gives the same shapelets, thresholds and
 * gaps times 7); the distances equal sqrt(mean((a - b)^2)) written out, and a raw and a
 * z-normalised shapelet mixed in one call give each its own distance.
 */
static void test_raw(void)
{
    tsw_t_rng r = {11};
    int rounds = tsw_t_quick() ? 3 : 8;
    for (int round = 0; round < rounds; ++round) {
        const int C = 2 + round % 2;
        problem p;
        make_problem(&p, &r, 6 + round % 4, 9, 15, C);
        int64_t rows = 0, longest = 0;
        for (int64_t i = 0; i < p.n; ++i) {
            rows += p.len[i];
            longest = p.len[i] > longest ? p.len[i] : longest;
        }
        for (int64_t i = 0; i < p.n; ++i) /* class c a little higher: raw shapelets see it */
            for (int64_t t = 0; t < p.len[i]; ++t) {
                p.vf[p.off[i] + t] = (float)(100.0 + 3.0 * p.v[p.off[i] + t] + 0.75 * p.lab[i]);
                p.v[p.off[i] + t] = p.vf[p.off[i] + t];
            }
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.raw = 1;
        sp.min_length = 2 + round % 3;
        sp.length_step = round % 4 == 3 ? 11 : 1 + round % 2;
        tsw_exec ref, fast;
        tsw_exec_default(&ref);
        tsw_exec_default(&fast);
        ref.impl = TSW_IMPL_REFERENCE;
        ref.n_threads = 1;
        const double tol = 1e-6; /* 1e-7 on the scaled line, times a spread of ~3 */
        tsw_shapelet a, b, c;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        CHECK(a.series >= 0 && a.gain > 0 && a.threshold > 0);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME_RAW(&a, &b, tol);
        tsw__shapelet_simd = 0; /* the portable loops: the same bits as AVX2 */
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &c, &fast), TSW_OK);
        tsw__shapelet_simd = -1;
        same_bits(&b, &c, __FILE__, __LINE__);
        const double table = tsw__shapelet_table_bytes;
        tsw__shapelet_table_bytes = 0; /* the weights' rows made per item */
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &c, &fast), TSW_OK);
        tsw__shapelet_table_bytes = table;
        same_bits(&b, &c, __FILE__, __LINE__);
        for (int nt = 1; nt <= 3; ++nt) {
            fast.n_threads = nt;
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F32, &p.cf, p.lab, NULL, 0, &c, &fast),
                     TSW_OK);
            same_bits(&b, &c, __FILE__, __LINE__);
        }
        fast.n_threads = 0;

        /* the best shapelet's distances in the data's units reproduce its split */
        const int64_t l0 = a.length, l1 = 4, l2 = longest;
        int64_t slen[3] = {l0, l1, l2}, soff[3] = {0, l0, l0 + l1};
        double sv[64];
        for (int64_t t = 0; t < l0; ++t)
            sv[t] = p.v[p.off[a.series] + a.start + t];
        for (int64_t t = 0; t < l1 + l2; ++t)
            sv[l0 + t] = 100.0 + tsw_t_uniform(&r, -3, 3);
        tsw_collection sc = {sv, soff, slen, 0, 3, NULL};
        const int32_t rawf[3] = {1, 1, 0};
        double d1[64 * 3], d2[64 * 3], dz[64 * 3], thr[3] = {a.threshold, 2.0, 0.5};
        int64_t p1[64 * 3], c1[64 * 3], c2[64 * 3];
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, NULL, rawf, thr, &p.c, d1, p1, c1,
                                               &ref),
                 TSW_OK);
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, NULL, rawf, thr, &p.c, d2, NULL, c2,
                                               &fast),
                 TSW_OK);
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, dz, NULL, &fast), TSW_OK);
        int64_t nleft = 0;
        for (int64_t j = 0; j < p.n; ++j) {
            const double *xj = p.v + p.off[j];
            for (int64_t k = 0; k < 3; ++k) {
                const int64_t q = j * 3 + k;
                const double want = k < 2 ? raw_best(sv + soff[k], slen[k], xj, p.len[j])
                                          : dz[q];
                CHECK_NEAR(d1[q], want, 1e-9 * 100);
                CHECK_NEAR(d2[q], want, 1e-9 * 100);
                CHECK_EQ(c1[q] > 0, d1[q] <= thr[k]);
                CHECK_EQ(c2[q] > 0, d2[q] <= thr[k]);
                if (k < 2) /* a level 100 away: the z-normalised distance is another one */
                    CHECK(fabs(d1[q] - dz[q]) > 1e-3 || d1[q] < 1e-6);
            }
            nleft += d2[j * 3] <= a.threshold;
        }
        CHECK(nleft >= 1 && nleft < p.n);
        CHECK_NEAR(d1[a.series * 3], 0.0, 1e-7);
        CHECK_EQ(p1[a.series * 3], a.start);

        /* equivariance: 7 x - 40 */
        {
            double *v2 = malloc((size_t)rows * sizeof(double));
            for (int64_t k = 0; k < rows; ++k)
                v2[k] = 7.0 * p.v[k] - 40.0;
            tsw_collection c2c = p.c;
            c2c.values = v2;
            tsw_shapelet e;
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c2c, p.lab, NULL, 0, &e, &fast), TSW_OK);
            CHECK(e.series == b.series && e.start == b.start && e.length == b.length &&
                  e.gain == b.gain);
            CHECK_NEAR(e.threshold, 7.0 * b.threshold, 1e-9 * 700);
            CHECK_NEAR(e.gap, 7.0 * b.gap, 1e-9 * 700);
            free(v2);
        }

        /* a subset, and AND/OR partners in the data's units */
        int64_t sub[16], ns = 0;
        for (int64_t i = p.n - 1; i >= 0; --i)
            if (i % 3 != 1)
                sub[ns++] = i;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &a, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &b, &fast), TSW_OK);
        SAME_RAW(&a, &b, tol);
        double part[16];
        for (int64_t k = 0; k < ns; ++k)
            part[k] = tsw_t_uniform(&r, 0, 4);
        for (int lg = 1; lg <= 2; ++lg) {
            sp.logic = (tsw_shapelet_logic)lg;
            sp.partner = part;
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &a, &ref), TSW_OK);
            CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &b, &fast),
                     TSW_OK);
            SAME_RAW(&a, &b, tol);
            /* the threshold lies among the combined distances (partner's units = data's) */
            int lo = 0;
            for (int64_t k = 0; k < ns; ++k) {
                const int64_t j = sub[k];
                const double dj = raw_best(p.v + p.off[b.series] + b.start, b.length,
                                           p.v + p.off[j], p.len[j]);
                const double cj = lg == 1 ? fmax(dj, part[k]) : fmin(dj, part[k]);
                lo += cj <= b.threshold;
            }
            CHECK(lo >= 1 && lo < ns);
        }
        sp.logic = TSW_LOGIC_NONE;
        sp.partner = NULL;

        /* long candidates (shorter series slide along them), top-k, dilation 2 */
        tsw_shapelet_params lp = sp;
        lp.min_length = longest - 3;
        lp.length_step = 1;
        CHECK_RC(tsw_shapelet_search(&lp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&lp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME_RAW(&a, &b, tol);
        tsw_shapelet ta[10], tb[10];
        int64_t na = -1, nb = -2;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 10, ta, &na, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 10, tb, &nb, &fast),
                 TSW_OK);
        CHECK(na >= 1 && nb == na);
        for (int64_t k = 0; k < na && k < nb; ++k)
            SAME_RAW(&ta[k], &tb[k], tol);
        tsw_shapelet_params dp = sp;
        dp.dilation = 2;
        dp.max_length = longest / 2;
        dp.min_length = 2;
        dp.length_step = 1;
        CHECK_RC(tsw_shapelet_search(&dp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&dp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME_RAW(&a, &b, tol);
        CHECK(a.dilation == 2);
        free_problem(&p);
    }
    /* a flag other than 0 or 1 */
    problem p;
    make_problem(&p, &r, 6, 9, 12, 2);
    tsw_shapelet_params sp;
    tsw_shapelet_params_default(&sp);
    sp.n_classes = 2;
    sp.raw = 2;
    tsw_shapelet a;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, NULL), TSW_EPARAM);
    double sv[3] = {0, 1, 2}, d[16];
    int64_t soff = 0, slen = 3;
    int32_t bad = 2;
    tsw_collection sc = {sv, &soff, &slen, 0, 1, NULL};
    CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, NULL, &bad, NULL, &p.c, d, NULL, NULL,
                                           NULL),
             TSW_EPARAM);
    free_problem(&p);
}

/* Four series of length 5, two classes: class 0 has an up-step, class 1 a down-step. With
 * lengths 2 only, each window's z-normalisation is +-(1, -1) or (0, 0) when flat, so the
 * distance of a candidate to a series is 0 if the series has a step of its direction, else
 * 1 (flat windows only) or 2 (opposite steps only): the best split is perfect (gain log 2),
 * and the candidate is the first up-step of series 0. */
static void test_hand(void)
{
    double v[20] = {0, 0, 1, 1, 1,  /* class 0: up-step at 1 */
                    5, 5, 5, 7, 7,  /* class 0: up-step at 2 */
                    1, 1, 0, 0, 0,  /* class 1: down-step at 1 */
                    3, 2, 2, 2, 2}; /* class 1: down-step at 0 */
    int32_t lab[4] = {0, 0, 1, 1};
    tsw_collection c = {v, NULL, NULL, 5, 4, NULL};
    tsw_shapelet_params sp;
    tsw_shapelet_params_default(&sp);
    sp.n_classes = 2;
    sp.min_length = 2;
    sp.max_length = 2;
    tsw_shapelet b;
    for (int impl = 0; impl < 2; ++impl) {
        tsw_exec ex;
        tsw_exec_default(&ex);
        ex.impl = impl ? TSW_IMPL_REFERENCE : TSW_IMPL_AUTO;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, &ex), TSW_OK);
        CHECK_EQ(b.series, 0);
        CHECK_EQ(b.start, 1);
        CHECK_EQ(b.length, 2);
        CHECK_NEAR(b.gain, log(2.0), 1e-12);
        /* distances 0, 0 | 1, 1 (class 1 series have flat windows): threshold 0.5, gap 1 */
        CHECK_NEAR(b.threshold, 0.5, 1e-7);
        CHECK_NEAR(b.gap, 1.0, 1e-7);
        double d[4];
        double sh[2] = {0, 1};
        tsw_collection sc = {sh, NULL, NULL, 2, 1, NULL};
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &c, d, NULL, &ex), TSW_OK);
        CHECK_NEAR(d[0], 0, 1e-7);
        CHECK_NEAR(d[1], 0, 1e-7);
        CHECK_NEAR(d[2], 1, 1e-7);
        CHECK_NEAR(d[3], 1, 1e-7);
        /* a constant shapelet: 0 to series with a flat window, never NaN */
        double flat[3] = {4, 4, 4};
        tsw_collection fc = {flat, NULL, NULL, 3, 1, NULL};
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &fc, &c, d, NULL, &ex), TSW_OK);
        for (int j = 0; j < 4; ++j)
            CHECK_NEAR(d[j], 0.0, 1e-7);
    }
    /* Every series constant: no candidate admits a split. */
    double k[12] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4};
    tsw_collection kc = {k, NULL, NULL, 3, 4, NULL};
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &kc, lab, NULL, 0, &b, NULL), TSW_OK);
    CHECK_EQ(b.series, -1);
    tsw_shapelet t[2];
    int64_t cnt = -1;
    CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &kc, lab, NULL, 0, 2, t, &cnt, NULL), TSW_OK);
    CHECK_EQ(cnt, 0);
}

static int cancel_now(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)user;
    return 1;
}

static void test_errors(void)
{
    double v[12] = {0, 1, 2, 3, 3, 2, 1, 0, 1, 0, 1, 0};
    int32_t lab[3] = {0, 1, 0};
    tsw_collection c = {v, NULL, NULL, 4, 3, NULL};
    tsw_shapelet_params sp;
    tsw_shapelet_params_default(&sp);
    tsw_shapelet b;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EPARAM);
    sp.n_classes = 2;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_OK);
    CHECK_RC(tsw_shapelet_search(NULL, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EINVAL);
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, NULL, NULL, 0, &b, NULL), TSW_EINVAL);
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, NULL, NULL), TSW_EINVAL);
    CHECK_RC(tsw_shapelet_search(&sp, (tsw_dtype)7, &c, lab, NULL, 0, &b, NULL), TSW_EDTYPE);
    sp.min_length = 1;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EPARAM);
    sp.min_length = 3;
    sp.max_length = 2; /* min > max */
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EPARAM);
    sp.max_length = 5; /* longer than every series */
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_ESHAPE);
    sp.max_length = 0;
    sp.min_length = 5;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_ESHAPE);
    sp.min_length = 3;
    sp.length_step = 0;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EPARAM);
    sp.length_step = 1;
    sp.logic = TSW_LOGIC_AND; /* no partner */
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EINVAL);
    double part[3] = {0.1, NAN, 0.2};
    sp.partner = part;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_EINVAL);
    part[1] = 0.3;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_OK);
    tsw_shapelet t[2];
    int64_t cnt;
    CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &c, lab, NULL, 0, 2, t, &cnt, NULL), TSW_EPARAM);
    sp.logic = TSW_LOGIC_NONE;
    sp.partner = NULL;
    CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &c, lab, NULL, 0, 0, t, &cnt, NULL), TSW_EINVAL);
    CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &c, lab, NULL, 0, 2, t, &cnt, NULL), TSW_OK);
    int32_t bad[3] = {0, 2, 1};
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, bad, NULL, 0, &b, NULL), TSW_EINVAL);
    int64_t sub1[1] = {0}, subdup[2] = {0, 0}, subbad[2] = {0, 3};
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, sub1, 1, &b, NULL), TSW_ESHAPE);
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, subdup, 2, &b, NULL), TSW_EINVAL);
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, subbad, 2, &b, NULL), TSW_EINVAL);
    tsw_collection one = {v, NULL, NULL, 4, 1, NULL};
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &one, lab, NULL, 0, &b, NULL), TSW_ESHAPE);
    v[5] = NAN;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, NULL), TSW_ENONFINITE);
    double d[3];
    tsw_collection sc = {v, NULL, NULL, 3, 1, NULL};
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &c, d, NULL, NULL), TSW_ENONFINITE);
    v[5] = 2;
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &c, d, NULL, NULL), TSW_OK);
    tsw_collection longsh = {v, NULL, NULL, 5, 1, NULL}; /* the series slide along it */
    int64_t at[3];
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &longsh, &c, d, at, NULL), TSW_OK);
    for (int k = 0; k < 3; ++k)
        CHECK(d[k] >= 0 && d[k] <= 2 && at[k] <= 0 && at[k] >= -1);
    CHECK_NEAR(d[0], 0.0, 1e-7); /* x_0 = 0 1 2 3 is the shapelet's start */
    CHECK_EQ(at[0], 0);
    tsw_collection shortsh = {v, NULL, NULL, 1, 1, NULL};
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &shortsh, &c, d, NULL, NULL), TSW_ESHAPE);
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &c, NULL, NULL, NULL), TSW_EINVAL);
    int64_t occ[3];
    double thr_ok = 0.5, thr_bad[3] = {-1.0, NAN, INFINITY};
    CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, &thr_ok, &c, d, NULL, occ, NULL), TSW_OK);
    CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, &thr_ok, &c, d, NULL, NULL, NULL), TSW_EINVAL);
    CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, NULL, &c, d, NULL, occ, NULL), TSW_EINVAL);
    for (int k = 0; k < 3; ++k)
        CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, &thr_bad[k], &c, d, NULL, occ, NULL),
                 TSW_EPARAM);
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CUDA; /* runs where a GPU is (tests/gpu/test_cuda_shapelet.c) */
    int rc = tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, &ex);
    CHECK(rc == TSW_OK || rc == TSW_ENODEV);
    /* cancellation through the progress callback (called at the end at the latest) */
    tsw_exec_default(&ex);
    int calls = 0;
    ex.progress = cancel_now;
    ex.progress_user = &calls;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &b, &ex), TSW_ECANCELED);
    CHECK(calls >= 1);
    CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &c, lab, NULL, 0, 2, t, &cnt, &ex), TSW_ECANCELED);
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &c, d, NULL, &ex), TSW_ECANCELED);
}

/* Dilation d: the phases' search gives the same shapelets on every path (reference, fast,
 * portable loops, threads, float32, subset); the found shapelet's dilated windows, computed
 * here from eq. 2, give the distances tsw_shapelet_features_dilated reports, and its own
 * series matches it at its start with distance 0; top-k spans never overlap; dilation 1 is
 * the plain search; lengths above floor(longest / d) are refused. Phases shorter than a
 * candidate slide along it (the lengths go up to the longest series'). */
static void test_dilation(void)
{
    tsw_t_rng r = {7};
    int rounds = tsw_t_quick() ? 2 : 6;
    for (int round = 0; round < rounds; ++round) {
        const int C = 2 + round % 2;
        const int64_t gd = 2 + round % 3;
        problem p;
        make_problem(&p, &r, 7 + round % 3, 12 * gd, 16 * gd, C);
        int64_t shortest = p.len[0], longest = p.len[0];
        for (int64_t i = 1; i < p.n; ++i) {
            shortest = p.len[i] < shortest ? p.len[i] : shortest;
            longest = p.len[i] > longest ? p.len[i] : longest;
        }
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.min_length = 3;
        sp.length_step = 1 + round % 2;
        sp.dilation = gd;
        tsw_exec ref, fast;
        tsw_exec_default(&ref);
        tsw_exec_default(&fast);
        ref.impl = TSW_IMPL_REFERENCE;
        ref.n_threads = 1;
        tsw_shapelet a, b;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        CHECK(a.series >= 0 && a.gain > 0 && a.dilation == gd);
        CHECK(a.length <= longest / gd && a.start + (a.length - 1) * gd < p.len[a.series]);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME(&a, &b);
        tsw__shapelet_simd = 0;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        tsw__shapelet_simd = -1;
        SAME(&a, &b);
        fast.n_threads = 3;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F32, &p.cf, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME(&a, &b);
        fast.n_threads = 0;
        int64_t sub[16], ns = 0;
        for (int64_t i = p.n - 1; i >= 0; --i)
            if (i % 3 != 1)
                sub[ns++] = i;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &b, &ref), TSW_OK);
        tsw_shapelet c;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, sub, ns, &c, &fast), TSW_OK);
        SAME(&b, &c);

        /* the distances of the found shapelet, from eq. 2 on dilated windows; then those of
         * the longest one (phase 0 of the longest series), which shorter phases slide along */
        double sv[64], w[64];
        int64_t soff = 0, slen = a.length, dl = gd;
        tsw_collection sc = {sv, &soff, &slen, 0, 1, NULL};
        double dist[16];
        int64_t pos[16], cnt[16];
        int64_t il = 0;
        while (p.len[il] != longest)
            ++il;
        for (int q = 0; q < 2; ++q) {
            slen = q ? longest / gd : a.length;
            for (int64_t t = 0; t < slen; ++t)
                sv[t] = q ? p.v[p.off[il] + t * gd] : p.v[p.off[a.series] + a.start + t * gd];
            CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, &dl, NULL, &a.threshold, &p.c,
                                                   dist,
                                                   pos, cnt, &fast),
                     TSW_OK);
            for (int64_t j = 0; j < p.n; ++j) {
                double best = INFINITY;
                int64_t lo = 0, hi = 0;
                for (int64_t ph = 0; ph < gd; ++ph) { /* phase ph: x_j[ph], x_j[ph + gd], .. */
                    int64_t m = 0, at, n1, n2;
                    for (int64_t t = ph; t < p.len[j]; t += gd)
                        w[m++] = p.v[p.off[j] + t];
                    const double d = conv_best(sv, slen, w, m, a.threshold - 1e-7, &at, &n1);
                    conv_best(sv, slen, w, m, a.threshold + 1e-7, &at, &n2);
                    best = d < best ? d : best;
                    lo += n1;
                    hi += n2;
                }
                CHECK_NEAR(dist[j], best, 1e-7);
                CHECK(cnt[j] >= lo && cnt[j] <= hi);
                /* the reported position: phase ph, alignment at (< 0: a shorter phase) */
                const int64_t ph = ((pos[j] % gd) + gd) % gd, at = (pos[j] - ph) / gd;
                int64_t m = 0;
                for (int64_t t = ph; t < p.len[j]; t += gd)
                    w[m++] = p.v[p.off[j] + t];
                CHECK_NEAR(conv_at(sv, slen, w, m, at), dist[j], 1e-7);
            }
            CHECK_NEAR(dist[q ? il : a.series], 0.0, 1e-7);
            CHECK_EQ(pos[q ? il : a.series], q ? 0 : a.start);
        }
        slen = a.length;
        for (int64_t t = 0; t < slen; ++t)
            sv[t] = p.v[p.off[a.series] + a.start + t * gd];
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, &dl, NULL, &a.threshold, &p.c,
                                                   dist,
                                               pos, cnt, &fast),
                 TSW_OK);
        int64_t nleft = 0;
        for (int64_t j = 0; j < p.n; ++j)
            nleft += dist[j] <= a.threshold;
        CHECK(nleft >= 1 && nleft < p.n);

        /* top-k: reference = fast, best first, spans apart in each series */
        tsw_shapelet ta[10], tb[10];
        int64_t na = -1, nb = -2;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 10, ta, &na, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 10, tb, &nb, &fast),
                 TSW_OK);
        CHECK(na == 10 && nb == na);
        SAME(&ta[0], &a);
        for (int64_t k = 0; k < na && k < nb; ++k) {
            SAME(&ta[k], &tb[k]);
            for (int64_t m = 0; m < k; ++m)
                CHECK(ta[m].series != ta[k].series ||
                      ta[m].start + (ta[m].length - 1) * gd < ta[k].start ||
                      ta[k].start + (ta[k].length - 1) * gd < ta[m].start);
        }

        /* dilation 1 is the plain search; too long or bad dilations are refused */
        tsw_shapelet_params one = sp;
        one.dilation = 1;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.length_step = one.length_step;
        CHECK_RC(tsw_shapelet_search(&one, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_OK);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &fast), TSW_OK);
        SAME(&a, &b);
        CHECK(a.dilation == 1);
        one.dilation = gd;
        one.max_length = longest / gd + 1;
        CHECK_RC(tsw_shapelet_search(&one, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_ESHAPE);
        one.max_length = longest / gd;
        CHECK_RC(tsw_shapelet_search(&one, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_OK);
        one.dilation = 0;
        CHECK_RC(tsw_shapelet_search(&one, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_EPARAM);
        dl = 0;
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, &dl, NULL, NULL, &p.c, dist, NULL,
                                               NULL, &fast),
                 TSW_EPARAM);
        dl = shortest + 1; /* a series with an empty phase */
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, &dl, NULL, NULL, &p.c, dist, NULL,
                                               NULL, &fast),
                 TSW_ESHAPE);
        dl = gd; /* negative offsets are refused before any value is read */
        soff = -1;
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, &dl, NULL, NULL, &p.c, dist, NULL,
                                               NULL, &fast),
                 TSW_ESHAPE);
        soff = 0;
        p.off[0] = -5;
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, &dl, NULL, NULL, &p.c, dist, NULL,
                                               NULL, &fast),
                 TSW_ESHAPE);
        p.off[0] = 0;
        free_problem(&p);
    }
}

/* The library's order on candidates (include/tswarp.h): gain, gap on its 1e-9 grid, then
 * the smaller (series, start, length); for qsort, best first. */
static int cmp_quality(const void *x, const void *y)
{
    const tsw_shapelet *a = x, *b = y;
    const double ga = floor(a->gap * 1e9 + 0.5), gb = floor(b->gap * 1e9 + 0.5);
    if (a->gain != b->gain)
        return a->gain > b->gain ? -1 : 1;
    if (ga != gb)
        return ga > gb ? -1 : 1;
    if (a->series != b->series)
        return a->series < b->series ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->length > b->length) - (a->length < b->length);
}

/*
 * One-vs-rest: a candidate of series i is judged on (label == label_i) against the rest, so
 * each series' candidates rank as in the two-class problem of its own class. Hence the
 * one-vs-rest top-k list equals, for each class c, the two-class top list of (label == c)
 * restricted to class c's series, its first k / C, merged best first; the search gives the
 * list's first entry; reference = fast, with dilations 1 and 2; bad values are refused.
 */
static void test_one_vs_rest(void)
{
    tsw_t_rng r = {7};
    for (int round = 0; round < (tsw_t_quick() ? 2 : 6); ++round) {
        const int C = 3 + round % 2;
        problem p;
        make_problem(&p, &r, 9 + round % 4, 12, 18, C);
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.min_length = 3;
        sp.max_length = 6;
        sp.dilation = 1 + round % 2;
        sp.one_vs_rest = 1;
        tsw_exec ref, fast;
        tsw_exec_default(&ref);
        tsw_exec_default(&fast);
        ref.impl = TSW_IMPL_REFERENCE;
        const int64_t k = 12, kc = k / C;
        tsw_shapelet ta[12], tb[12], a, want[64], all[1000];
        int64_t na = -1, nb = -2, nw = 0;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, k, ta, &na, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, k, tb, &nb, &fast),
                 TSW_OK);
        CHECK_EQ(na, nb);
        for (int64_t m = 0; m < na && m < nb; ++m)
            SAME(&ta[m], &tb[m]);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_OK);
        SAME(&a, &ta[0]);
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &ref), TSW_OK);
        SAME(&a, &ta[0]);

        tsw_shapelet_params two = sp;
        two.one_vs_rest = 0;
        two.n_classes = 2;
        int32_t *bl = malloc((size_t)p.n * sizeof(int32_t));
        int64_t per[4] = {0, 0, 0, 0};
        for (int c = 0; c < C; ++c) {
            for (int64_t i = 0; i < p.n; ++i)
                bl[i] = p.lab[i] == c;
            int64_t n_all = 0;
            CHECK_RC(tsw_shapelet_top(&two, TSW_F64, &p.c, bl, NULL, 0, 1000, all, &n_all, &fast),
                     TSW_OK);
            CHECK(n_all < 1000); /* every series' whole list */
            for (int64_t m = 0; m < n_all; ++m)
                if (p.lab[all[m].series] == c && per[c] < kc) {
                    per[c] += 1;
                    want[nw++] = all[m];
                }
            CHECK(per[c] >= 1);
        }
        qsort(want, (size_t)nw, sizeof(*want), cmp_quality);
        CHECK_EQ(na, nw);
        for (int64_t m = 0; m < na && m < nw; ++m)
            SAME(&ta[m], &want[m]);

        /* a subset works alike (the fast path against the reference) */
        int64_t sub[16], ns = 0;
        for (int64_t i = 0; i < p.n; ++i)
            if (i % 4 != 3)
                sub[ns++] = i;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, sub, ns, k, ta, &na, &ref), TSW_OK);
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, sub, ns, k, tb, &nb, &fast),
                 TSW_OK);
        CHECK_EQ(na, nb);
        for (int64_t m = 0; m < na && m < nb; ++m)
            SAME(&ta[m], &tb[m]);

        sp.one_vs_rest = 2;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &fast), TSW_EPARAM);
        sp.one_vs_rest = -1;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, k, ta, &na, &fast),
                 TSW_EPARAM);
        free(bl);
        free_problem(&p);
    }
}

int main(void)
{
    test_random();
    test_one_vs_rest();
    test_raw();
    test_dilation();
    test_isa_and_sorts();
    test_hand();
    test_errors();
    return TSW_TEST_END();
}
