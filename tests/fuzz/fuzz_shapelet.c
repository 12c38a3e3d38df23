/*
 * libFuzzer harness over shapelet discovery's parameters (tests/fuzz/README.md): lengths,
 * length_step and dilation anywhere in int64 (the loops over them must not overflow or run
 * forever: length_step = INT64_MAX once did), n_classes, logic, one_vs_rest, raw, labels and
 * subsets out of range, n_threads of any int, and values with NaN, inf and 1e300, through
 * tsw_shapelet_search, tsw_shapelet_top and tsw_shapelet_distances. The series are short
 * (at most 12 points), so every valid call finishes at once.
 */
#include "fuzz_common.h"

#define NS 6
#define LEN 12

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_reader r = {data, size};
    tsw_shapelet_params sp;
    tsw_shapelet_params_default(&sp);
    const uint8_t f = fz_u8(&r);
    if (f & 1)
        sp.min_length = fz_i64(&r);
    if (f & 2)
        sp.max_length = fz_i64(&r);
    if (f & 4)
        sp.length_step = fz_i64(&r);
    if (f & 8)
        sp.dilation = fz_i64(&r);
    sp.n_classes = (int32_t)(fz_u8(&r) % 5);
    if (f & 16)
        sp.one_vs_rest = (int32_t)(fz_u8(&r) % 3);
    if (f & 32)
        sp.raw = (int32_t)(fz_u8(&r) % 3);
    double partner[NS];
    if (f & 64) {
        sp.logic = (tsw_shapelet_logic)(fz_u8(&r) % 4);
        for (int k = 0; k < NS; ++k)
            partner[k] = fz_u8(&r) == 3 ? fz_f64(&r) : 0.5 * k;
        sp.partner = (fz_u8(&r) & 1) ? partner : NULL;
    }
    const tsw_dtype dt = (tsw_dtype)(fz_u8(&r) % 2);
    double vd[NS * LEN];
    float vf[NS * LEN];
    const int raw = fz_u8(&r) & 1;
    const double scale = raw ? fz_f64(&r) : 1.0;
    for (int k = 0; k < NS * LEN; ++k) {
        double v = (raw && fz_u8(&r) == 9) ? fz_f64(&r) : sin(0.7 * k + (k / LEN)) * scale;
        vd[k] = v;
        vf[k] = (float)v;
    }
    int64_t lengths[NS];
    tsw_collection x = {dt == TSW_F32 ? (const void *)vf : (const void *)vd, NULL, NULL, LEN,
                        2 + fz_u8(&r) % (NS - 1), NULL};
    if (fz_u8(&r) & 1) {
        for (int k = 0; k < NS; ++k)
            lengths[k] = 1 + fz_u8(&r) % LEN;
        x.lengths = lengths;
    }
    int32_t labels[NS];
    for (int k = 0; k < NS; ++k)
        labels[k] = fz_u8(&r) == 5 ? (int32_t)fz_u64(&r) : k % 2;
    int64_t subset[NS], n_subset = 0;
    if (fz_u8(&r) & 1) {
        n_subset = fz_u8(&r) % (NS + 1);
        for (int64_t k = 0; k < n_subset; ++k)
            subset[k] = fz_u8(&r) == 4 ? fz_i64(&r) : k;
    }
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CPU;
    ex.n_threads = fz_u8(&r) % 3;
    if (fz_u8(&r) == 1)
        ex.n_threads = (int)fz_u64(&r);

    const uint8_t which = fz_u8(&r) % 3;
    int rc;
    if (which == 0) {
        tsw_shapelet best;
        memset(&best, 0xA5, sizeof(best));
        rc = tsw_shapelet_search(&sp, dt, &x, labels, n_subset ? subset : NULL, n_subset, &best, &ex);
        fz_check_rc(rc, "tsw_shapelet_search");
        if (rc != TSW_OK)
            fz_check_untouched((const unsigned char *)&best, sizeof(best), "tsw_shapelet_search");
    } else if (which == 1) {
        tsw_shapelet out[4];
        int64_t count = -7;
        const int64_t k = fz_u8(&r) % 5;
        rc = tsw_shapelet_top(&sp, dt, &x, labels, n_subset ? subset : NULL, n_subset, k, out,
                              &count, &ex);
        fz_check_rc(rc, "tsw_shapelet_top");
        if (rc == TSW_OK && (count < 0 || count > k))
            abort();
    } else {
        /* shapelets: the first two series' windows */
        int64_t soff[2] = {0, LEN}, slen[2] = {2 + fz_u8(&r) % (LEN - 1), 2 + fz_u8(&r) % (LEN - 1)};
        tsw_collection s = {x.values, soff, slen, 0, 2, NULL};
        double dist[NS * 2];
        int64_t pos[NS * 2];
        rc = tsw_shapelet_distances(dt, &s, &x, dist, pos, &ex);
        fz_check_rc(rc, "tsw_shapelet_distances");
        if (rc == TSW_OK)
            for (int64_t k = 0; k < x.count * 2; ++k)
                if (isnan(dist[k]))
                    abort();
    }
    return 0;
}
