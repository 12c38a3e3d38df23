/*
 * GPU shapelet discovery (src/cuda/shapelet.cu) against the CPU fast path (ctest label "gpu";
 * tests/gpu/run.sh runs it on a GPU machine). The CPU is tested against eq. 2 computed
 * directly in tests/c/test_shapelet.c; here the GPU must give the SAME results: identical
 * (series, start, length) and bit-equal threshold, gain and gap for tsw_shapelet_search and
 * every entry of tsw_shapelet_top, bit-equal distances and equal positions for
 * tsw_shapelet_distances.
 *
 * Fresh random inputs on every run (the seed is printed; TSWARP_TEST_SEED=<seed> replays):
 * ragged collections, 2 to 4 classes, uniform noise (with a planted bump) or small integers
 * (constant windows, exact ties on the order lines), float32 and float64, length sets with
 * steps and a maximum (lengths past the shortest series), subsets, AND/OR partners,
 * dilations, one-vs-rest quality; each with the 1/std table and without, in one chunk and
 * in many tiny ones (items and series cut across chunks), with the warps' scratch in shared
 * and in global memory; long series (scratch beyond shared memory), many
 * series (long order lines); device AUTO; cancellation; a bad device index.
 * Exit status 77 without the CUDA backend or a device. TSWARP_TEST_QUICK=1: fewer, smaller
 * cases (compute-sanitizer runs). TSWARP_GPU_DEVICE=k: the device ordinal.
 */
#include "harness.h"

#include <unistd.h>

#define SKIP_CODE 77

/* cuda/shapelet.cu's knobs */
extern double tsw__shapelet_gpu_table_bytes, tsw__shapelet_gpu_chunk_bytes;
extern int tsw__shapelet_gpu_smem_bytes;

static int g_dev;
static int g_quick;

static tsw_exec exec_on(tsw_device dev)
{
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = dev;
    e.device_index = g_dev;
    return e;
}

typedef struct {
    int64_t n, *len, *off;
    double *v;
    float *vf;
    int32_t *lab;
    tsw_collection c, cf;
} problem;

/* n series of lengths lo..hi; kind 0: noise with a bump planted in class 0 and a flat
 * stretch; kind 1: small integers (constant windows, tied distances) */
static void make_problem(problem *p, tsw_t_rng *r, int64_t n, int64_t lo, int64_t hi, int C,
                         int kind)
{
    p->n = n;
    p->len = malloc((size_t)n * sizeof(int64_t));
    p->off = malloc((size_t)n * sizeof(int64_t));
    p->lab = malloc((size_t)n * sizeof(int32_t));
    int64_t rows = 0;
    for (int64_t i = 0; i < n; ++i) {
        p->len[i] = tsw_t_int(r, lo, hi);
        p->off[i] = rows;
        rows += p->len[i];
        p->lab[i] = (int32_t)(i < C ? i : tsw_t_int(r, 0, C - 1)); /* every class present */
    }
    p->v = malloc((size_t)rows * sizeof(double));
    p->vf = malloc((size_t)rows * sizeof(float));
    for (int64_t k = 0; k < rows; ++k) {
        p->vf[k] = kind == 1 ? (float)tsw_t_int(r, -1, 1) : (float)tsw_t_uniform(r, -1, 1);
        p->v[k] = p->vf[k];
    }
    if (kind == 0) {
        for (int64_t i = 0; i < n; ++i) {
            if (p->lab[i] != 0)
                continue;
            int64_t at = tsw_t_int(r, 0, p->len[i] - 1);
            for (int64_t t = 0; t < 4 && at + t < p->len[i]; ++t)
                p->v[p->off[i] + at + t] = p->vf[p->off[i] + at + t] = (float)(1.5 * t);
        }
        for (int64_t t = 0; t < 4 && t < p->len[n - 1]; ++t)
            p->v[p->off[n - 1] + t] = p->vf[p->off[n - 1] + t] = 0.5f;
    }
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

static int same(const tsw_shapelet *a, const tsw_shapelet *b, const char *what)
{
    int ok = a->series == b->series && a->start == b->start && a->length == b->length &&
             a->threshold == b->threshold && a->gain == b->gain && a->gap == b->gap &&
             a->dilation == b->dilation;
    if (!ok)
        TSW_T_NOTE("  %s: cpu (%lld,%lld,%lld) thr %.17g gain %.17g gap %.17g\n"
                   "       gpu (%lld,%lld,%lld) thr %.17g gain %.17g gap %.17g\n",
                   what, (long long)a->series, (long long)a->start, (long long)a->length,
                   a->threshold, a->gain, a->gap, (long long)b->series, (long long)b->start,
                   (long long)b->length, b->threshold, b->gain, b->gap);
    return ok;
}

/* search and top on the CPU and the GPU under the current knobs: identical */
static void compare(const tsw_shapelet_params *sp, tsw_dtype dt, const problem *p,
                    const int64_t *sub, int64_t ns, const char *what)
{
    tsw_exec cpu = exec_on(TSW_DEVICE_CPU), gpu = exec_on(TSW_DEVICE_CUDA);
    const tsw_collection *c = dt == TSW_F32 ? &p->cf : &p->c;
    tsw_shapelet a, b;
    memset(&b, 0x55, sizeof(b));
    CHECK_RC(tsw_shapelet_search(sp, dt, c, p->lab, sub, ns, &a, &cpu), TSW_OK);
    int rc = tsw_shapelet_search(sp, dt, c, p->lab, sub, ns, &b, &gpu);
    if (!CHECK_RC(rc, TSW_OK))
        TSW_T_NOTE("  %s: %s\n", what, tsw_last_error_detail());
    CHECK(same(&a, &b, what));
    if (sp->logic != TSW_LOGIC_NONE)
        return;
    enum { K = 7 };
    tsw_shapelet ta[K], tb[K];
    int64_t na = -1, nb = -2;
    CHECK_RC(tsw_shapelet_top(sp, dt, c, p->lab, sub, ns, K, ta, &na, &cpu), TSW_OK);
    CHECK_RC(tsw_shapelet_top(sp, dt, c, p->lab, sub, ns, K, tb, &nb, &gpu), TSW_OK);
    CHECK_EQ(na, nb);
    for (int64_t k = 0; k < na && k < nb; ++k)
        CHECK(same(&ta[k], &tb[k], what));
    if (na > 0)
        CHECK(same(&ta[0], &a, what)); /* the first of the list is the search's */
}

/* every configuration of the GPU driver for one problem */
static void compare_all(const tsw_shapelet_params *sp, tsw_dtype dt, const problem *p,
                        const int64_t *sub, int64_t ns, const char *what)
{
    const double tb = tsw__shapelet_gpu_table_bytes, cb = tsw__shapelet_gpu_chunk_bytes;
    const int sm = tsw__shapelet_gpu_smem_bytes;
    compare(sp, dt, p, sub, ns, what);
    tsw__shapelet_gpu_table_bytes = 0; /* 1/std computed per window */
    tsw__shapelet_gpu_chunk_bytes = 1; /* one item (or the fewest) per chunk */
    compare(sp, dt, p, sub, ns, what);
    tsw__shapelet_gpu_table_bytes = tb;
    tsw__shapelet_gpu_chunk_bytes = 3000; /* a few items per chunk, cut anywhere */
    tsw__shapelet_gpu_smem_bytes = 0;     /* global scratch */
    compare(sp, dt, p, sub, ns, what);
    tsw__shapelet_gpu_chunk_bytes = cb;
    tsw__shapelet_gpu_smem_bytes = sm;
}

/* a logical partner's distances to the ns searched series */
static void draw_partners(tsw_t_rng *r, double *part, int64_t ns)
{
    for (int64_t k = 0; k < ns; ++k)
        part[k] = tsw_t_uniform(r, 0.0, 1.5);
}

/* A kind of search (vp: one-vs-rest, raw, ..) on one problem: plain in every chunk /
 * scratch layout and in float32, then (subset_ok) the subset in every layout and with AND
 * partners, and dilated by dd when the lengths fit. */
static void compare_variant(tsw_shapelet_params vp, const problem *p, const int64_t *sub,
                            int64_t ns, int subset_ok, int64_t dd, int64_t longest,
                            tsw_t_rng *r, const char *what)
{
    compare_all(&vp, TSW_F64, p, NULL, 0, what);
    compare(&vp, TSW_F32, p, NULL, 0, what);
    if (subset_ok) {
        compare_all(&vp, TSW_F64, p, sub, ns, what);
        double part[64];
        draw_partners(r, part, ns);
        vp.logic = TSW_LOGIC_AND;
        vp.partner = part;
        compare(&vp, TSW_F64, p, sub, ns, what);
        vp.logic = TSW_LOGIC_NONE;
        vp.partner = NULL;
    }
    vp.dilation = dd;
    vp.max_length = 0;
    if (longest / vp.dilation >= vp.min_length)
        compare(&vp, TSW_F64, p, NULL, 0, what);
}

static void test_random(tsw_t_rng *r)
{
    const int rounds = g_quick ? 4 : 24;
    for (int round = 0; round < rounds; ++round) {
        const int C = 2 + round % 3, kind = (round / 3) % 2;
        problem p;
        make_problem(&p, r, tsw_t_int(r, 4, g_quick ? 10 : 30), tsw_t_int(r, 6, 12),
                     tsw_t_int(r, 12, g_quick ? 30 : 70), C, kind);
        /* lengths go up to the longest series (0: the default): the shorter series slide
         * along the candidates they cannot hold */
        int64_t shortest = INT64_MAX, longest = 0, il = 0;
        for (int64_t i = 0; i < p.n; ++i) {
            shortest = p.len[i] < shortest ? p.len[i] : shortest;
            il = p.len[i] > longest ? i : il;
            longest = p.len[i] > longest ? p.len[i] : longest;
        }
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = C;
        sp.min_length = tsw_t_int(r, 2, 5);
        sp.length_step = tsw_t_int(r, 1, 3);
        sp.max_length = round % 4 == 3 ? tsw_t_int(r, sp.min_length, longest) : 0;
        char what[96];
        snprintf(what, sizeof(what), "round %d (n %lld, C %d, kind %d, l %lld..%lld/%lld)",
                 round, (long long)p.n, C, kind, (long long)sp.min_length,
                 (long long)sp.max_length, (long long)sp.length_step);
        compare_all(&sp, TSW_F64, &p, NULL, 0, what);
        compare(&sp, TSW_F32, &p, NULL, 0, what);

        /* a subset: the series not 1 mod 3, reversed (a subset of >= 2 with 2 classes) */
        int64_t sub[64], ns = 0;
        for (int64_t i = p.n - 1; i >= 0; --i)
            if (i % 3 != 1)
                sub[ns++] = i;
        int present[4] = {0, 0, 0, 0}, classes = 0;
        for (int64_t k = 0; k < ns; ++k)
            present[p.lab[sub[k]]] = 1;
        for (int c = 0; c < C; ++c)
            classes += present[c];
        /* lengths up to the subset's longest series at most (TSW_ESHAPE beyond) */
        int64_t sub_longest = 0;
        for (int64_t k = 0; k < ns; ++k)
            sub_longest = p.len[sub[k]] > sub_longest ? p.len[sub[k]] : sub_longest;
        if (sp.max_length > sub_longest)
            sp.max_length = sub_longest;
        if (ns >= 2 && classes >= 2) {
            compare_all(&sp, TSW_F64, &p, sub, ns, what);
            /* logical partners, drawn as distances (some tied) */
            double part[64];
            for (int64_t k = 0; k < ns; ++k)
                part[k] = kind ? (double)tsw_t_int(r, 0, 3) * 0.25 : tsw_t_uniform(r, 0, 1.5);
            for (int lg = 1; lg <= 2; ++lg) {
                sp.logic = (tsw_shapelet_logic)lg;
                sp.partner = part;
                compare_all(&sp, TSW_F64, &p, sub, ns, what);
            }
            sp.logic = TSW_LOGIC_NONE;
            sp.partner = NULL;
        }

        /* dilation: the order lines take the least over each series' phases, on either
         * device (plain, subset, logic and every chunk / scratch layout) */
        tsw_shapelet_params dp = sp;
        dp.dilation = 2 + round % 2;
        dp.max_length = 0;
        if (longest / dp.dilation >= dp.min_length) {
            compare_all(&dp, TSW_F64, &p, NULL, 0, what);
            compare(&dp, TSW_F32, &p, NULL, 0, what);
            if (ns >= 2 && classes >= 2) {
                compare(&dp, TSW_F64, &p, sub, ns, what);
                double part[64];
                draw_partners(r, part, ns);
                dp.logic = TSW_LOGIC_OR;
                dp.partner = part;
                compare(&dp, TSW_F64, &p, sub, ns, what);
            }
        }

        /* one-vs-rest: each candidate's own class against the rest (the rank kernel finds
         * the candidate's series from the chunk's items) */
        tsw_shapelet_params op = sp;
        op.one_vs_rest = 1;
        compare_variant(op, &p, sub, ns, ns >= 2 && classes >= 2, dp.dilation, longest, r, what);
        /* shapelets that are not z-normalised (raw), also with one-vs-rest */
        tsw_shapelet_params rp = sp;
        rp.raw = 1;
        compare_variant(rp, &p, sub, ns, ns >= 2 && classes >= 2, dp.dilation, longest, r, what);
        rp.one_vs_rest = 1;
        compare(&rp, TSW_F64, &p, NULL, 0, what);

        /* distances of some candidates (and an arbitrary series) to every series; shapelet
         * 2 is longer than most series (which slide along it) */
        int64_t nsh = 4;
        int64_t slen[4], soff[4], rows = 0;
        double sv[3 * 12 + 70];
        for (int64_t k = 0; k < nsh; ++k) {
            slen[k] = k == 2 ? tsw_t_int(r, (shortest + longest + 1) / 2, longest)
                             : tsw_t_int(r, 2, shortest < 12 ? shortest : 12);
            soff[k] = rows;
            int64_t i = k == 2 ? il : tsw_t_int(r, 0, p.n - 1);
            int64_t s0 = tsw_t_int(r, 0, p.len[i] - slen[k]);
            for (int64_t t = 0; t < slen[k]; ++t)
                sv[rows + t] = k == 3 ? tsw_t_uniform(r, -1, 1) : p.v[p.off[i] + s0 + t];
            rows += slen[k];
        }
        tsw_collection sc = {sv, NULL, NULL, 0, 1, NULL};
        sc.offsets = soff;
        sc.lengths = slen;
        sc.count = nsh;
        double *da = malloc((size_t)(p.n * nsh) * sizeof(double));
        double *db = malloc((size_t)(p.n * nsh) * sizeof(double));
        int64_t *pa = malloc((size_t)(p.n * nsh) * sizeof(int64_t));
        int64_t *pb = malloc((size_t)(p.n * nsh) * sizeof(int64_t));
        tsw_exec cpu = exec_on(TSW_DEVICE_CPU), gpu = exec_on(TSW_DEVICE_CUDA);
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, da, pa, &cpu), TSW_OK);
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, db, pb, &gpu), TSW_OK);
        int same_d = 1, same_p = 1;
        for (int64_t q = 0; q < p.n * nsh; ++q) {
            same_d &= da[q] == db[q];
            same_p &= pa[q] == pb[q];
        }
        CHECK(same_d);
        CHECK(same_p);
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, db, NULL, &gpu), TSW_OK);
        same_d = 1;
        for (int64_t q = 0; q < p.n * nsh; ++q)
            same_d &= da[q] == db[q];
        CHECK(same_d);
        /* occurrences within thresholds: the same counts (and distances) on both */
        double thr[4];
        for (int64_t k = 0; k < nsh; ++k)
            thr[k] = k == 0 ? da[k] : tsw_t_uniform(r, 0.0, 1.5); /* one at a distance */
        int64_t *ca = malloc((size_t)(p.n * nsh) * sizeof(int64_t));
        int64_t *cb = malloc((size_t)(p.n * nsh) * sizeof(int64_t));
        CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, thr, &p.c, da, NULL, ca, &cpu), TSW_OK);
        CHECK_RC(tsw_shapelet_features(TSW_F64, &sc, thr, &p.c, db, pb, cb, &gpu), TSW_OK);
        int same_c = 1, any_c = 0;
        same_d = same_p = 1;
        for (int64_t q = 0; q < p.n * nsh; ++q) {
            same_c &= ca[q] == cb[q];
            any_c |= ca[q] > 0;
            same_d &= da[q] == db[q];
            same_p &= pa[q] == pb[q];
        }
        CHECK(same_c);
        CHECK(any_c); /* shapelet 0's threshold is its distance to series 0 */
        CHECK(same_d);
        CHECK(same_p);
        /* dilated: dilation 2 or 3 (phases shorter than a shapelet slide along it) */
        int64_t dil[4];
        for (int64_t k = 0; k < nsh; ++k)
            dil[k] = 2 + k % 2;
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, dil, NULL, thr, &p.c, da, pa, ca,
                                               &cpu),
                 TSW_OK);
        CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, dil, NULL, thr, &p.c, db, pb, cb,
                                               &gpu),
                 TSW_OK);
        same_c = same_d = same_p = 1;
        for (int64_t q = 0; q < p.n * nsh; ++q) {
            same_c &= ca[q] == cb[q];
            same_d &= da[q] == db[q];
            same_p &= pa[q] == pb[q];
        }
        CHECK(same_c);
        CHECK(same_d);
        CHECK(same_p);
        /* raw and z-normalised shapelets mixed, contiguous and dilated */
        const int32_t rawf[4] = {1, 0, 1, 1};
        for (int withd = 0; withd < 2; ++withd) {
            const int64_t *dk = withd ? dil : NULL;
            CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, dk, rawf, thr, &p.c, da, pa, ca,
                                                   &cpu),
                     TSW_OK);
            CHECK_RC(tsw_shapelet_features_dilated(TSW_F64, &sc, dk, rawf, thr, &p.c, db, pb, cb,
                                                   &gpu),
                     TSW_OK);
            same_c = same_d = same_p = 1;
            for (int64_t q = 0; q < p.n * nsh; ++q) {
                same_c &= ca[q] == cb[q];
                same_d &= da[q] == db[q];
                same_p &= pa[q] == pb[q];
            }
            CHECK(same_c);
            CHECK(same_d);
            CHECK(same_p);
        }
        free(ca);
        free(cb);
        free(da);
        free(db);
        free(pa);
        free(pb);
        free_problem(&p);
    }
}

/* Shapes beyond the shared-memory layouts: series longer than a warp's shared slice (the
 * running dot products in global memory), and more series than a shared order line holds. */
static void test_large(tsw_t_rng *r)
{
    tsw_shapelet_params sp;
    tsw_shapelet_params_default(&sp);
    sp.n_classes = 2;
    if (g_quick) /* the global scratch is forced in test_random already */
        return;
    /* long series: 6200 > 6144 doubles (48 KiB) */
    problem p;
    make_problem(&p, r, 3, 6200, 6400, 2, 0);
    sp.min_length = 5;
    sp.max_length = 12;
    sp.length_step = 2;
    compare(&sp, TSW_F64, &p, NULL, 0, "long series");
    free_problem(&p);
    /* many short series: order lines of 2100 (4096 padded: scratch > 48 KiB per warp) */
    make_problem(&p, r, 2100, 6, 9, 3, 1);
    sp.n_classes = 3;
    sp.min_length = 3;
    sp.max_length = 4;
    sp.length_step = 1;
    compare(&sp, TSW_F64, &p, NULL, 0, "many series");
    free_problem(&p);
    /* a medium one under device AUTO (large enough to choose the GPU when present) */
    make_problem(&p, r, 60, 150, 150, 2, 0);
    sp.n_classes = 2;
    sp.min_length = 3;
    sp.max_length = 0;
    tsw_exec cpu = exec_on(TSW_DEVICE_CPU), aut = exec_on(TSW_DEVICE_AUTO);
    tsw_shapelet a, b;
    double t0 = tsw_t_seconds();
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &a, &cpu), TSW_OK);
    double t1 = tsw_t_seconds();
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &aut), TSW_OK);
    double t2 = tsw_t_seconds();
    CHECK(same(&a, &b, "auto"));
    printf("[gpu-shapelet] 60 x 150, every length: cpu %.3f s, auto %.3f s\n", t1 - t0, t2 - t1);
    free_problem(&p);
}

static int cancel_now(void *user, int64_t done, int64_t total)
{
    (void)done;
    (void)total;
    ++*(int *)user;
    return 1;
}

static void test_status(tsw_t_rng *r)
{
    problem p;
    make_problem(&p, r, 12, 40, 60, 2, 0);
    tsw_shapelet_params sp;
    tsw_shapelet_params_default(&sp);
    sp.n_classes = 2;
    tsw_shapelet b;
    tsw_exec gpu = exec_on(TSW_DEVICE_CUDA);
    /* cancellation: many chunks, the callback says stop at its first call (between chunks
     * once 50 ms have passed, else the final one) */
    const double cb = tsw__shapelet_gpu_chunk_bytes;
    tsw__shapelet_gpu_chunk_bytes = 1;
    int calls = 0;
    gpu.progress = cancel_now;
    gpu.progress_user = &calls;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &gpu), TSW_ECANCELED);
    calls = 0;
    tsw_shapelet top[3];
    int64_t count = 0;
    CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &p.c, p.lab, NULL, 0, 3, top, &count, &gpu),
             TSW_ECANCELED);
    CHECK(calls == 1);
    tsw__shapelet_gpu_chunk_bytes = cb;
    gpu.progress = NULL;
    /* a device that does not exist */
    gpu.device_index = 1000;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &gpu), TSW_ENODEV);
    double d[12];
    tsw_collection sc = {p.v, NULL, NULL, 5, 1, NULL};
    CHECK_RC(tsw_shapelet_distances(TSW_F64, &sc, &p.c, d, NULL, &gpu), TSW_ENODEV);
    /* validation comes first, whatever the device */
    gpu.device_index = g_dev;
    sp.min_length = 1;
    CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &p.c, p.lab, NULL, 0, &b, &gpu), TSW_EPARAM);
    free_problem(&p);
}

int main(void)
{
    if (!tsw_has_cuda()) {
        printf("SKIP: tswarp was built without the CUDA backend\n");
        return SKIP_CODE;
    }
    int count = 0;
    int rc = tsw_cuda_device_count(&count);
    if (rc != TSW_OK || count < 1) {
        printf("SKIP: no CUDA device (%s, %d devices)\n", tsw_err_name(rc), count);
        return SKIP_CODE;
    }
    const char *dev = getenv("TSWARP_GPU_DEVICE");
    g_dev = dev && *dev ? atoi(dev) : 0;
    tsw_cuda_device info;
    if (g_dev < 0 || g_dev >= count || tsw_cuda_device_info(g_dev, &info) != TSW_OK ||
        !info.runnable) {
        printf("SKIP: device %d not available or not runnable by this build (%s)\n", g_dev,
               tsw_cuda_archs());
        return SKIP_CODE;
    }
    g_quick = tsw_t_quick();
    const char *env_seed = getenv("TSWARP_TEST_SEED");
    uint64_t seed = env_seed && *env_seed ? strtoull(env_seed, NULL, 0)
                                          : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    printf("[gpu-shapelet] seed %" PRIu64 " (replay: TSWARP_TEST_SEED=%" PRIu64 "), quick %d, "
           "device %d %s\n",
           seed, seed, g_quick, g_dev, info.name);
    fflush(stdout);
    struct {
        const char *name;
        void (*fn)(tsw_t_rng *);
    } sections[] = {{"random", test_random}, {"large", test_large}, {"status", test_status}};
    for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); ++k) {
        tsw_t_rng r = {seed ^ (0x9e3779b97f4a7c15ULL * (k + 1))};
        long failed0 = tsw_t_failed, passed0 = tsw_t_passed;
        double t0 = tsw_t_seconds();
        sections[k].fn(&r);
        printf("[gpu-shapelet] section %-7s %6ld checks, %5ld failed, %6.2f s\n",
               sections[k].name, tsw_t_passed - passed0 + tsw_t_failed - failed0,
               tsw_t_failed - failed0, tsw_t_seconds() - t0);
        fflush(stdout);
    }
    printf("[gpu-shapelet] seed %" PRIu64 "\n", seed);
    return TSW_TEST_END();
}
