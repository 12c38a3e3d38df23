/*
 * libFuzzer harness over the C API's validation and kernels (tests/fuzz/README.md):
 * parameters of every measure and window (any double, any enum value), dtype, dim, the
 * spans of collections (offsets, lengths, counts that overflow), values with NaN and inf,
 * n_threads; through tsw_distance (and the same pair's tsw_elastic_path), tsw_cdist,
 * tsw_pdist, tsw_paired, tsw_dtw_path, tsw_subsequence_dtw and tsw_soft_dtw_grad. Every call must return a tsw_status, leave its
 * outputs untouched when it fails, and (under ASan/UBSan) never read out of bounds, overflow
 * or leak. A value is finite, +inf, or (soft-DTW) negative; never NaN from valid input.
 */
#include "fuzz_common.h"

#define ROWS 64 /* rows allocated per collection: every small extent fits */
#define MAXC 6  /* series per collection when offsets or lengths are given */

typedef struct {
    tsw_collection c;
    int64_t offsets[MAXC], lengths[MAXC];
    int pass; /* 1: every series fits the allocation or is invalid/overflowing */
} fz_coll;

/* A span the harness may pass: invalid (refused before any read), overflowing its byte
 * extent (refused), or inside the ROWS * 3 values allocated. */
static int fz_span_ok(int64_t off, int64_t len, int64_t dim, size_t esz)
{
    if (off < 0 || len < 1 || dim < 1)
        return 1;
    const __int128 rows = (__int128)off + len;
    if (rows > INT64_MAX / dim / (int64_t)esz)
        return 1; /* rows * dim * esz overflows int64 */
    return rows * dim <= ROWS * 3;
}

static void fz_make_coll(fz_reader *r, fz_coll *fc, const void *values, const void *times,
                         int64_t dim, size_t esz)
{
    memset(fc, 0, sizeof(*fc));
    const uint8_t shape = fz_u8(r);
    fc->c.values = values;
    fc->c.times = (shape & 8) ? times : NULL;
    fc->pass = 1;
    if ((shape & 3) == 0) { /* regular: count x length, may overflow */
        fc->c.count = fz_i64(r);
        fc->c.length = fz_i64(r);
        if (fc->c.count >= 1 && fc->c.length >= 1) {
            const __int128 rows = (__int128)fc->c.count * fc->c.length;
            fc->pass = rows > INT64_MAX || fz_span_ok(0, (int64_t)rows, dim, esz);
        }
        return;
    }
    fc->c.count = 1 + fz_u8(r) % MAXC;
    if (shape & 1) {
        fc->c.offsets = fc->offsets;
        for (int64_t i = 0; i < fc->c.count; ++i)
            fc->offsets[i] = fz_i64(r);
    }
    if (shape & 2) {
        fc->c.lengths = fc->lengths;
        for (int64_t i = 0; i < fc->c.count; ++i)
            fc->lengths[i] = fz_i64(r);
    } else {
        fc->c.length = fz_i64(r);
    }
    for (int64_t i = 0; i < fc->c.count; ++i) {
        int64_t off = fc->c.offsets ? fc->offsets[i] : i * (fc->c.length > 0 ? fc->c.length : 0);
        int64_t len = fc->c.lengths ? fc->lengths[i] : fc->c.length;
        if (!fc->c.offsets && fc->c.length > 0 && i > INT64_MAX / fc->c.length)
            off = INT64_MAX; /* the product overflows */
        if (!fz_span_ok(off, len, dim, esz))
            fc->pass = 0;
    }
}

static void fz_params(fz_reader *r, tsw_params *p)
{
    tsw_params_default(p, (tsw_measure)(fz_u8(r) % 13)); /* 12: not a measure */
    const uint8_t f = fz_u8(r);
    if (f & 1)
        p->window = (tsw_window)(fz_u8(r) % 5);
    if (f & 2)
        p->window_radius = fz_f64(r);
    if (f & 4)
        p->itakura_max_slope = fz_f64(r);
    if (f & 8)
        p->nu = fz_f64(r);
    if (f & 16)
        p->lmbda = fz_f64(r);
    if (f & 32)
        p->p = fz_f64(r);
    if (f & 64)
        p->gamma = fz_f64(r);
    if (f & 128) {
        p->cost = (tsw_cost)(fz_u8(r) % 5);
        p->accumulated = fz_u8(r) % 3;
        p->normalize = fz_u8(r) % 3;
    }
    const uint8_t h = fz_u8(r); /* the elastic family's parameters */
    if (h & 1)
        p->g = fz_f64(r);
    if (h & 2)
        p->warp_penalty = fz_f64(r);
    if (h & 4)
        p->erp_g = fz_f64(r);
    if (h & 8)
        p->epsilon = fz_f64(r);
    if (h & 16)
        p->c = fz_f64(r);
    if (h & 32)
        p->msm_independent = fz_u8(r) % 3;
    if (h & 64) { /* shape DTW's (reaches -5 .. 249, and one beyond the limit) */
        const int64_t u = fz_u8(r);
        p->reach = u == 255 ? 100001 : u - 5;
        p->descriptor = fz_u8(r) % 3;
        p->paa_segments = (int64_t)fz_u8(r) - 10;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    tsw_params p;
    fz_params(&r, &p);
    const uint8_t dsel = fz_u8(&r);
    const tsw_dtype dt = (tsw_dtype)(dsel % 3); /* 2: not a dtype */
    const size_t esz = dt == TSW_F32 ? 4 : 8;
    int64_t dim = fz_u8(&r) % 4;
    if (dsel & 0x80)
        dim = fz_i64(&r);

    /* values: ROWS rows of up to 3 dims, from the input (NaN and inf included) or smooth */
    double *vd = malloc(sizeof(double) * ROWS * 3 * 2);
    float *vf = malloc(sizeof(float) * ROWS * 3 * 2);
    const int raw = fz_u8(&r) & 1;
    for (int k = 0; k < ROWS * 3 * 2; ++k) {
        double v = raw && r.n ? fz_f64(&r) : sin(0.37 * k) * 3;
        vd[k] = v;
        vf[k] = (float)v;
    }
    /* timestamps: increasing unless the input says otherwise */
    double *td = malloc(sizeof(double) * ROWS * 3);
    float *tf = malloc(sizeof(float) * ROWS * 3);
    const int bad_times = fz_u8(&r) == 7;
    for (int k = 0; k < ROWS * 3; ++k) {
        td[k] = bad_times ? fz_f64(&r) : (double)(k % ROWS) + 1;
        tf[k] = (float)td[k];
    }
    const void *values = dt == TSW_F32 ? (const void *)vf : (const void *)vd;
    const void *vals_y = dt == TSW_F32 ? (const void *)(vf + ROWS * 3) : (const void *)(vd + ROWS * 3);
    const void *times = dt == TSW_F32 ? (const void *)tf : (const void *)td;

    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CPU;
    ex.n_threads = fz_u8(&r) % 3;
    if (fz_u8(&r) == 1)
        ex.n_threads = (int)fz_u64(&r); /* any int: clamped or refused */
    ex.impl = (tsw_impl)(fz_u8(&r) % 3);
    static int devs[64]; /* a device list: checked by every call, unused on the CPU */
    if (fz_u8(&r) == 2) {
        ex.n_devices = (int)(int8_t)fz_u8(&r);
        for (int i = 0; i < 64; ++i)
            devs[i] = (int)(int8_t)fz_u8(&r);
        ex.devices = fz_u8(&r) & 1 ? devs : NULL;
    }

    const uint8_t which = fz_u8(&r) % 7;
    fz_coll x, y;
    fz_make_coll(&r, &x, values, times, dim, esz);
    fz_make_coll(&r, &y, vals_y, times, dim, esz);

    if (getenv("FZ_VERBOSE")) { /* replaying a failing input: what the harness built */
        const fz_coll *cs[2] = {&x, &y};
        fprintf(stderr, "which %d dtype %d dim %lld measure %d window %d\n", which, (int)dt,
                (long long)dim, (int)p.measure, (int)p.window);
        for (int c = 0; c < 2; ++c) {
            fprintf(stderr, "%c: count %lld length %lld pass %d offsets", "xy"[c],
                    (long long)cs[c]->c.count, (long long)cs[c]->c.length, cs[c]->pass);
            for (int64_t i = 0; cs[c]->c.offsets && i < cs[c]->c.count; ++i)
                fprintf(stderr, " %lld", (long long)cs[c]->offsets[i]);
            fprintf(stderr, " lengths");
            for (int64_t i = 0; cs[c]->c.lengths && i < cs[c]->c.count; ++i)
                fprintf(stderr, " %lld", (long long)cs[c]->lengths[i]);
            fprintf(stderr, "\n");
        }
    }
    unsigned char out[MAXC * MAXC * 8 + 64];
    memset(out, 0xA5, sizeof(out));
    int rc = TSW_OK;
    const char *what = "";
    if (which == 0) {
        /* one pair: the first series of each collection when small */
        int64_t n = x.c.lengths ? x.lengths[0] : x.c.length, m = y.c.lengths ? y.lengths[0] : y.c.length;
        if (!fz_span_ok(0, n, dim, esz) || !fz_span_ok(0, m, dim, esz))
            goto skip;
        tsw_series a = {values, n, x.c.times}, b = {vals_y, m, y.c.times};
        double v = NAN;
        what = "tsw_distance";
        rc = tsw_distance(&p, dt, dim, &a, &b, &v, &ex);
        if (rc == TSW_OK && isnan(v)) {
            fprintf(stderr, "tsw_distance returned NaN\n");
            abort();
        }
        if (rc != TSW_OK && !isnan(v))
            abort(); /* untouched */
        /* the same pair's alignment path (TWED and the elastic family; any other measure
         * is refused): a monotone path from (0, 0) on, inside the grid, or untouched */
        if (rc == TSW_OK || fz_u8(&r) & 1) {
            static int64_t path[2 * ROWS * 6];
            int64_t len = -7;
            double pv = -7;
            int rp = tsw_elastic_path(&p, dt, dim, &a, &b, path, ROWS * 6, &len, &pv, &ex);
            fz_check_rc(rp, "tsw_elastic_path");
            if (rp != TSW_OK && (len != -7 || pv != -7))
                abort();
            if (rp == TSW_OK) {
                if (len < 0 || len > n + m - 1 || isnan(pv))
                    abort();
                for (int64_t k = 0; k < len; ++k)
                    if (path[2 * k] < 0 || path[2 * k] >= n || path[2 * k + 1] < 0 ||
                        path[2 * k + 1] >= m ||
                        (k > 0 && (path[2 * k] < path[2 * k - 2] ||
                                   path[2 * k + 1] < path[2 * k - 1])))
                        abort();
            }
        }
    } else if (!x.pass || !y.pass) {
        goto skip;
    } else if (which == 1 || which == 2) {
        /* cdist / paired: outputs fit when both counts are small; else the call must refuse */
        if (x.c.count > MAXC || y.c.count > MAXC)
            goto maybe_refused;
        what = which == 1 ? "tsw_cdist" : "tsw_paired";
        rc = which == 1 ? tsw_cdist(&p, dt, dim, &x.c, &y.c, out, &ex)
                        : tsw_paired(&p, dt, dim, &x.c, &y.c, out, &ex);
    } else if (which == 3) {
        if (x.c.count > MAXC)
            goto maybe_refused;
        what = "tsw_pdist";
        rc = tsw_pdist(&p, dt, dim, &x.c, (tsw_pdist_layout)(fz_u8(&r) % 3), out, &ex);
    } else if (which == 4 || which == 5) {
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        ap.step = (tsw_step)(fz_u8(&r) % 4);
        ap.cost = p.cost;
        ap.window = p.window;
        ap.window_radius = p.window_radius;
        ap.itakura_max_slope = p.itakura_max_slope;
        ap.method = (tsw_path_method)(fz_u8(&r) % 4);
        int64_t n = x.c.lengths ? x.lengths[0] : x.c.length, m = y.c.lengths ? y.lengths[0] : y.c.length;
        if (!fz_span_ok(0, n, dim, esz) || !fz_span_ok(0, m, dim, esz) || n > ROWS || m > ROWS)
            goto skip;
        tsw_series a = {values, n, NULL}, b = {vals_y, m, NULL};
        int64_t path[(ROWS * 4) * 2];
        int64_t cap = (int64_t)(sizeof(path) / sizeof(path[0]) / 2);
        if (which == 4) {
            int64_t len = -7;
            double c = -7;
            what = "tsw_dtw_path";
            rc = tsw_dtw_path(&ap, dt, dim, &a, &b, path, cap, &len, &c, &ex);
            if (rc != TSW_OK && (len != -7 || c != -7))
                abort();
            if (rc == TSW_OK && (len < 1 || len > n + m || isnan(c)))
                abort();
        } else {
            tsw_match mt[3];
            int64_t count = -7;
            int64_t k = 1 + fz_u8(&r) % 3;
            what = "tsw_subsequence_dtw";
            rc = tsw_subsequence_dtw(&ap, dt, dim, &a, &b, k, mt, &count, path, cap, &ex);
            if (rc == TSW_OK && (count < 1 || count > k))
                abort();
        }
    } else {
        if (x.c.count > MAXC || y.c.count > MAXC)
            goto maybe_refused;
        what = "tsw_soft_dtw_grad";
        rc = tsw_soft_dtw_grad(&p, dt, dim, &x.c, &y.c, out, NULL, NULL, &ex);
    }
    fz_check_rc(rc, what);
    if (rc != TSW_OK && which >= 1 && which <= 3)
        fz_check_untouched(out, sizeof(out), what);
    goto skip;
maybe_refused:
    /* a count too large for our output buffer: only overflowing spans reach here, and the
     * call must refuse them before writing */
    if (x.c.count >= 1 && x.c.length >= 1 && dim >= 1 && x.c.offsets == NULL &&
        x.c.lengths == NULL &&
        (__int128)x.c.count * x.c.length > INT64_MAX / dim / (int64_t)esz) {
        rc = tsw_cdist(&p, dt, dim, &x.c, &x.c, out, &ex);
        if (rc == TSW_OK)
            abort();
        fz_check_rc(rc, "tsw_cdist (overflowing span)");
        fz_check_untouched(out, sizeof(out), "tsw_cdist (overflowing span)");
    }
skip:
    free(vd);
    free(vf);
    free(td);
    free(tf);
    return 0;
}
