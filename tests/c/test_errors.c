/*
 * Every invalid input returns its documented status and leaves the output untouched: the
 * output buffers are filled with a byte pattern first and compared after each call.
 */
#include "harness.h"

#include <limits.h>

#include <float.h>

#define SENTINEL_BYTE 0x5A

/* ---- helpers: one call, its status, and an untouched output --------------------------- */

static void expect_distance(const char *file, int line, int want, const tsw_params *p,
                            tsw_dtype dt, int64_t dim, const tsw_series *a, const tsw_series *b,
                            const tsw_exec *ex)
{
    double out, sentinel;
    memset(&out, SENTINEL_BYTE, sizeof(out));
    memcpy(&sentinel, &out, sizeof(out));
    CHECK_RC_AT(tsw_distance(p, dt, dim, a, b, &out, ex), want, file, line);
    if (want != TSW_OK)
        CHECK_AT(memcmp(&out, &sentinel, sizeof(out)) == 0, file, line);
}
#define EXPECT_DISTANCE(want, ...) expect_distance(__FILE__, __LINE__, want, __VA_ARGS__)

/* Output of up to 64 elements; the call must not write a byte of it on error. */
static void expect_cdist(const char *file, int line, int want, const tsw_params *p,
                         tsw_dtype dt, int64_t dim, const tsw_collection *x,
                         const tsw_collection *y, const tsw_exec *ex)
{
    unsigned char out[64 * 8], ref[64 * 8];
    memset(out, SENTINEL_BYTE, sizeof(out));
    memset(ref, SENTINEL_BYTE, sizeof(ref));
    CHECK_RC_AT(tsw_cdist(p, dt, dim, x, y, out, ex), want, file, line);
    if (want != TSW_OK)
        CHECK_AT(memcmp(out, ref, sizeof(out)) == 0, file, line);
}
#define EXPECT_CDIST(want, ...) expect_cdist(__FILE__, __LINE__, want, __VA_ARGS__)

static void expect_pdist(const char *file, int line, int want, const tsw_params *p,
                         tsw_dtype dt, int64_t dim, const tsw_collection *x,
                         tsw_pdist_layout layout, const tsw_exec *ex)
{
    unsigned char out[64 * 8], ref[64 * 8];
    memset(out, SENTINEL_BYTE, sizeof(out));
    memset(ref, SENTINEL_BYTE, sizeof(ref));
    CHECK_RC_AT(tsw_pdist(p, dt, dim, x, layout, out, ex), want, file, line);
    if (want != TSW_OK)
        CHECK_AT(memcmp(out, ref, sizeof(out)) == 0, file, line);
}
#define EXPECT_PDIST(want, ...) expect_pdist(__FILE__, __LINE__, want, __VA_ARGS__)

/* Every entry point with one bad parameter set: distance, cdist, pdist. */
static void expect_all(const char *file, int line, int want, const tsw_params *p,
                       const tsw_exec *ex)
{
    static const double v[6] = {0, 1, 2, 3, 4, 5};
    tsw_series s = {v, 6, NULL};
    tsw_collection c = {v, NULL, NULL, 3, 2, NULL};
    expect_distance(file, line, want, p, TSW_F64, 1, &s, &s, ex);
    expect_cdist(file, line, want, p, TSW_F64, 1, &c, &c, ex);
    expect_pdist(file, line, want, p, TSW_F64, 1, &c, TSW_PDIST_FULL, ex);
    expect_pdist(file, line, want, p, TSW_F64, 1, &c, TSW_PDIST_CONDENSED, ex);
}
#define EXPECT_ALL(want, p, ex) expect_all(__FILE__, __LINE__, want, p, ex)

static const tsw_measure MEASURES[3] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW};

/* ---- NULL pointers, shapes, dtypes ------------------------------------------------------ */

static void test_null_and_shape(void)
{
    const double v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_series a = {v, 4, NULL}, b = {v + 4, 4, NULL};
    double out = 0;

    /* one pair */
    CHECK_RC(tsw_distance(&p, TSW_F64, 1, &a, &b, NULL, NULL), TSW_EINVAL);
    EXPECT_DISTANCE(TSW_EINVAL, NULL, TSW_F64, 1, &a, &b, NULL);
    EXPECT_DISTANCE(TSW_EINVAL, &p, TSW_F64, 1, NULL, &b, NULL);
    EXPECT_DISTANCE(TSW_EINVAL, &p, TSW_F64, 1, &a, NULL, NULL);
    tsw_series nv = {NULL, 4, NULL};
    EXPECT_DISTANCE(TSW_EINVAL, &p, TSW_F64, 1, &nv, &b, NULL);
    EXPECT_DISTANCE(TSW_EINVAL, &p, TSW_F64, 1, &a, &nv, NULL);
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, 0, &a, &b, NULL);
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, -3, &a, &b, NULL);
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, INT64_MIN, &a, &b, NULL);
    tsw_series empty = {v, 0, NULL}, negative = {v, -2, NULL};
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, 1, &empty, &b, NULL);
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, 1, &a, &empty, NULL);
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, 1, &negative, &b, NULL);
    EXPECT_DISTANCE(TSW_ESHAPE, &p, TSW_F64, 1, &a, &negative, NULL);
    EXPECT_DISTANCE(TSW_EDTYPE, &p, (tsw_dtype)2, 1, &a, &b, NULL);
    EXPECT_DISTANCE(TSW_EDTYPE, &p, (tsw_dtype)-1, 1, &a, &b, NULL);
    /* length * dim overflows (checked before a single value is read) */
    tsw_series huge = {v, INT64_MAX / 2, NULL};
    EXPECT_DISTANCE(TSW_EOVERFLOW, &p, TSW_F64, 4, &huge, &b, NULL);
    EXPECT_DISTANCE(TSW_EOVERFLOW, &p, TSW_F64, 1, &a, &huge, NULL);
    tsw_series big = {v, INT64_C(1) << 62, NULL}; /* 2^62 values of 8 bytes: 2^65 bytes */
    EXPECT_DISTANCE(TSW_EOVERFLOW, &p, TSW_F64, 1, &big, &b, NULL);
    EXPECT_DISTANCE(TSW_EOVERFLOW, &p, TSW_F32, INT64_MAX, &a, &b, NULL);
    /* and the valid call works */
    CHECK_RC(tsw_distance(&p, TSW_F64, 1, &a, &b, &out, NULL), TSW_OK);
    /* best path (a_i, b_j): (0,4) (1,4) (2,4) (3,5) (3,6) (3,7), squared costs
     * 16 + 9 + 4 + 4 + 9 + 16 = 58 */
    CHECK_NEAR(out, sqrt(58.0), 1e-12);

    /* batches */
    tsw_collection x = {v, NULL, NULL, 4, 2, NULL};
    const int64_t offs[2] = {0, 4}, lens[2] = {4, 4};
    unsigned char buf[64];
    CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &x, &x, NULL, NULL), TSW_EINVAL);
    CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &x, TSW_PDIST_FULL, NULL, NULL), TSW_EINVAL);
    EXPECT_CDIST(TSW_EINVAL, NULL, TSW_F64, 1, &x, &x, NULL);
    EXPECT_CDIST(TSW_EINVAL, &p, TSW_F64, 1, NULL, &x, NULL);
    EXPECT_CDIST(TSW_EINVAL, &p, TSW_F64, 1, &x, NULL, NULL);
    EXPECT_PDIST(TSW_EINVAL, NULL, TSW_F64, 1, &x, TSW_PDIST_FULL, NULL);
    EXPECT_PDIST(TSW_EINVAL, &p, TSW_F64, 1, NULL, TSW_PDIST_FULL, NULL);
    tsw_collection xv = x;
    xv.values = NULL;
    EXPECT_CDIST(TSW_EINVAL, &p, TSW_F64, 1, &xv, &x, NULL);
    EXPECT_CDIST(TSW_EINVAL, &p, TSW_F64, 1, &x, &xv, NULL);
    EXPECT_PDIST(TSW_EINVAL, &p, TSW_F64, 1, &xv, TSW_PDIST_CONDENSED, NULL);
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 0, &x, &x, NULL);
    EXPECT_PDIST(TSW_ESHAPE, &p, TSW_F64, -1, &x, TSW_PDIST_FULL, NULL);
    EXPECT_CDIST(TSW_EDTYPE, &p, (tsw_dtype)7, 1, &x, &x, NULL);
    EXPECT_PDIST(TSW_EDTYPE, &p, (tsw_dtype)7, 1, &x, TSW_PDIST_FULL, NULL);
    EXPECT_PDIST(TSW_EINVAL, &p, TSW_F64, 1, &x, (tsw_pdist_layout)2, NULL);
    EXPECT_PDIST(TSW_EINVAL, &p, TSW_F64, 1, &x, (tsw_pdist_layout)-1, NULL);

    tsw_collection bad = x;
    bad.count = 0; /* count < 1 */
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, &x, NULL);
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &x, &bad, NULL);
    EXPECT_PDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, TSW_PDIST_FULL, NULL);
    bad.count = -5;
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, &x, NULL);
    EXPECT_PDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, TSW_PDIST_CONDENSED, NULL);
    bad = x;
    bad.length = 0; /* common length < 1 */
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, &x, NULL);
    EXPECT_PDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, TSW_PDIST_FULL, NULL);
    bad.length = -4;
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &x, &bad, NULL);
    bad = x;
    bad.lengths = lens; /* ragged lengths without offsets */
    EXPECT_CDIST(TSW_EINVAL, &p, TSW_F64, 1, &bad, &x, NULL);
    EXPECT_PDIST(TSW_EINVAL, &p, TSW_F64, 1, &bad, TSW_PDIST_FULL, NULL);
    const int64_t neg_offs[2] = {0, -4};
    bad = x;
    bad.offsets = neg_offs; /* negative offset (common length) */
    EXPECT_CDIST(TSW_EINVAL, &p, TSW_F64, 1, &x, &bad, NULL);
    bad.lengths = lens; /* negative offset (ragged) */
    EXPECT_PDIST(TSW_EINVAL, &p, TSW_F64, 1, &bad, TSW_PDIST_CONDENSED, NULL);
    const int64_t zero_lens[2] = {4, 0}, neg_lens[2] = {-1, 4};
    bad = x;
    bad.offsets = offs;
    bad.lengths = zero_lens; /* a ragged length of 0 */
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, &x, NULL);
    EXPECT_PDIST(TSW_ESHAPE, &p, TSW_F64, 1, &bad, TSW_PDIST_FULL, NULL);
    bad.lengths = neg_lens;
    EXPECT_CDIST(TSW_ESHAPE, &p, TSW_F64, 1, &x, &bad, NULL);
    /* length * dim overflow inside a collection */
    bad = x;
    bad.count = 1;
    bad.length = INT64_MAX / 2;
    EXPECT_CDIST(TSW_EOVERFLOW, &p, TSW_F64, 3, &bad, &x, NULL);

    /* Output size overflow: refused before any of the (absent) series is read. */
    tsw_collection many = x;
    many.count = INT64_C(1) << 33; /* 2^33 * 2^33 * 8 bytes */
    EXPECT_CDIST(TSW_EOVERFLOW, &p, TSW_F64, 1, &many, &many, NULL);
    many.count = INT64_C(1) << 31; /* 2^62 elements: fits in size_t, * 4 bytes does not */
    EXPECT_CDIST(TSW_EOVERFLOW, &p, TSW_F32, 1, &many, &many, NULL);
    EXPECT_PDIST(TSW_EOVERFLOW, &p, TSW_F32, 1, &many, TSW_PDIST_FULL, NULL);
    many.count = 3037000500LL; /* n * n overflows int64 */
    EXPECT_PDIST(TSW_EOVERFLOW, &p, TSW_F64, 1, &many, TSW_PDIST_FULL, NULL);
    EXPECT_PDIST(TSW_EOVERFLOW, &p, TSW_F64, 1, &many, TSW_PDIST_CONDENSED, NULL);
    many.count = INT64_MAX;
    EXPECT_PDIST(TSW_EOVERFLOW, &p, TSW_F32, 1, &many, TSW_PDIST_CONDENSED, NULL);
    EXPECT_CDIST(TSW_EOVERFLOW, &p, TSW_F64, 1, &x, &many, NULL);

    /* the valid calls work */
    CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &x, &x, buf, NULL), TSW_OK);
    CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &x, TSW_PDIST_CONDENSED, buf, NULL), TSW_OK);
    x.offsets = offs;
    x.lengths = lens;
    CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &x, TSW_PDIST_FULL, buf, NULL), TSW_OK);
}

/* ---- NaN and infinities ----------------------------------------------------------------- */

static void test_nonfinite(void)
{
    const double bad_values[3] = {NAN, INFINITY, -INFINITY};
    const int positions[3] = {0, 5, 11}; /* first, middle, last of a (6, 2) series */
    for (int mi = 0; mi < 3; ++mi) {
        tsw_params p;
        tsw_params_default(&p, MEASURES[mi]);
        for (int bi = 0; bi < 3; ++bi) {
            for (int pi = 0; pi < 3; ++pi) {
                double a64[12], b64[12];
                float a32[12], b32[12];
                for (int k = 0; k < 12; ++k) {
                    a64[k] = 0.25 * k;
                    b64[k] = 1.0 - 0.125 * k;
                    a32[k] = (float)a64[k];
                    b32[k] = (float)b64[k];
                }
                tsw_series g64 = {b64, 6, NULL}, g32 = {b32, 6, NULL};
                /* the bad value in a, then in b, in both precisions */
                a64[positions[pi]] = bad_values[bi];
                a32[positions[pi]] = (float)bad_values[bi];
                tsw_series s64 = {a64, 6, NULL}, s32 = {a32, 6, NULL};
                EXPECT_DISTANCE(TSW_ENONFINITE, &p, TSW_F64, 2, &s64, &g64, NULL);
                EXPECT_DISTANCE(TSW_ENONFINITE, &p, TSW_F64, 2, &g64, &s64, NULL);
                EXPECT_DISTANCE(TSW_ENONFINITE, &p, TSW_F32, 2, &s32, &g32, NULL);
                EXPECT_DISTANCE(TSW_ENONFINITE, &p, TSW_F32, 2, &g32, &s32, NULL);
            }
        }
        /* The largest finite values are valid input. */
        double dmax[2] = {DBL_MAX, -DBL_MAX};
        float fmax[2] = {FLT_MAX, -FLT_MAX};
        tsw_series sd = {dmax, 2, NULL}, sf = {fmax, 2, NULL};
        EXPECT_DISTANCE(TSW_OK, &p, TSW_F64, 1, &sd, &sd, NULL);
        EXPECT_DISTANCE(TSW_OK, &p, TSW_F32, 1, &sf, &sf, NULL);
    }

    /* Collections: a ragged collection (3 series of lengths 3, 5, 2 with dim 2, stored in
     * the order 2, 0, 1) with a bad value in the middle of the middle series. */
    for (int mi = 0; mi < 3; ++mi) {
        tsw_params p;
        tsw_params_default(&p, MEASURES[mi]);
        for (int bi = 0; bi < 3; ++bi) {
            double v64[20];
            float v32[20];
            for (int k = 0; k < 20; ++k) {
                v64[k] = sin(0.3 * k);
                v32[k] = (float)v64[k];
            }
            const int64_t offs[3] = {2, 5, 0}, lens[3] = {3, 5, 2};
            tsw_collection good64 = {v64, offs, lens, 0, 3, NULL};
            tsw_collection good32 = {v32, offs, lens, 0, 3, NULL};
            double g64[20];
            float g32[20];
            memcpy(g64, v64, sizeof(g64));
            memcpy(g32, v32, sizeof(g32));
            tsw_collection ok64 = {g64, offs, lens, 0, 3, NULL};
            tsw_collection ok32 = {g32, offs, lens, 0, 3, NULL};
            /* series 1 occupies rows 5..9, i.e. values 10..19; row 7 is its middle */
            v64[7 * 2 + 1] = bad_values[bi];
            v32[7 * 2 + 1] = (float)bad_values[bi];
            EXPECT_CDIST(TSW_ENONFINITE, &p, TSW_F64, 2, &good64, &ok64, NULL);
            EXPECT_CDIST(TSW_ENONFINITE, &p, TSW_F64, 2, &ok64, &good64, NULL);
            EXPECT_CDIST(TSW_ENONFINITE, &p, TSW_F32, 2, &good32, &ok32, NULL);
            EXPECT_PDIST(TSW_ENONFINITE, &p, TSW_F64, 2, &good64, TSW_PDIST_FULL, NULL);
            EXPECT_PDIST(TSW_ENONFINITE, &p, TSW_F32, 2, &good32, TSW_PDIST_CONDENSED, NULL);
            EXPECT_CDIST(TSW_OK, &p, TSW_F64, 2, &ok64, &ok64, NULL);
            /* Rows 0-1 hold series 2, rows 2-4 series 0, rows 5-9 series 1: a NaN in
             * row 10, outside every series, is never read and is no error. */
            double gap[22];
            memcpy(gap, g64, sizeof(g64));
            gap[20] = NAN;
            gap[21] = NAN; /* row 10: after every series */
            tsw_collection gapped = {gap, offs, lens, 0, 3, NULL};
            EXPECT_PDIST(TSW_OK, &p, TSW_F64, 2, &gapped, TSW_PDIST_FULL, NULL);
        }
    }
}

/* ---- timestamps (TWED only) ------------------------------------------------------------ */

static void test_timestamps(void)
{
    const double v[5] = {0.5, 1.0, -1.0, 2.0, 0.0};
    const double bad_times[][5] = {
        {1, 2, 2, 3, 4},         /* equal neighbours */
        {1, 2, 3, 2.5, 4},       /* decreasing */
        {5, 4, 3, 2, 1},         /* reversed */
        {1, 2, NAN, 4, 5},       /* NaN */
        {1, 2, 3, 4, INFINITY},  /* +inf */
        {-INFINITY, 1, 2, 3, 4}, /* -inf */
    };
    const double good_times[5] = {-3, -1, 0, 0.5, 10}; /* any strictly increasing */
    const float good_times32[5] = {-3, -1, 0, 0.5f, 10};
    const float v32[5] = {0.5f, 1.0f, -1.0f, 2.0f, 0.0f};
    for (size_t t = 0; t < sizeof(bad_times) / sizeof(bad_times[0]); ++t) {
        float bt32[5];
        for (int k = 0; k < 5; ++k)
            bt32[k] = (float)bad_times[t][k];
        tsw_series a = {v, 5, bad_times[t]}, b = {v, 5, good_times};
        tsw_series a32 = {v32, 5, bt32}, b32 = {v32, 5, good_times32};
        for (int mi = 0; mi < 3; ++mi) {
            tsw_params p;
            tsw_params_default(&p, MEASURES[mi]);
            /* TWED rejects them; the other measures ignore timestamps entirely */
            int want = MEASURES[mi] == TSW_TWED ? TSW_ETIMES : TSW_OK;
            EXPECT_DISTANCE(want, &p, TSW_F64, 1, &a, &b, NULL);
            EXPECT_DISTANCE(want, &p, TSW_F64, 1, &b, &a, NULL);
            EXPECT_DISTANCE(want, &p, TSW_F32, 1, &a32, &b32, NULL);
            EXPECT_DISTANCE(want, &p, TSW_F32, 1, &b32, &a32, NULL);

            /* in a collection: series 1 of 2 (rows 5..9) has the bad times */
            double cv[10], ct[10];
            for (int k = 0; k < 5; ++k) {
                cv[k] = v[k];
                cv[5 + k] = v[4 - k];
                ct[k] = good_times[k];
                ct[5 + k] = bad_times[t][k];
            }
            tsw_collection c = {cv, NULL, NULL, 5, 2, ct};
            tsw_collection g = {cv, NULL, NULL, 5, 2, NULL};
            EXPECT_CDIST(want, &p, TSW_F64, 1, &c, &g, NULL);
            EXPECT_CDIST(want, &p, TSW_F64, 1, &g, &c, NULL);
            EXPECT_PDIST(want, &p, TSW_F64, 1, &c, TSW_PDIST_CONDENSED, NULL);
        }
    }
    /* A length-1 series has no neighbours to compare: any finite time is valid. */
    tsw_params p;
    tsw_params_default(&p, TSW_TWED);
    const double one_t = -42;
    tsw_series a1 = {v, 1, &one_t}, b = {v, 5, good_times};
    EXPECT_DISTANCE(TSW_OK, &p, TSW_F64, 1, &a1, &b, NULL);
    const double nan_t = NAN;
    tsw_series a1n = {v, 1, &nan_t};
    EXPECT_DISTANCE(TSW_ETIMES, &p, TSW_F64, 1, &a1n, &b, NULL);
}

/* ---- measure parameters --------------------------------------------------------------- */

static void test_params(void)
{
    tsw_params p;
    const double nonfinite[3] = {NAN, INFINITY, -INFINITY};

    /* soft-DTW gamma > 0 and finite */
    const double bad_gamma[] = {0.0, -0.0, -1.0, -1e-300, NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof(bad_gamma) / sizeof(bad_gamma[0]); ++k) {
        tsw_params_default(&p, TSW_SOFT_DTW);
        p.gamma = bad_gamma[k];
        EXPECT_ALL(TSW_EPARAM, &p, NULL);
        p.normalize = 1;
        EXPECT_ALL(TSW_EPARAM, &p, NULL);
        /* gamma belongs to soft-DTW: the other measures ignore it */
        tsw_params_default(&p, TSW_DTW);
        p.gamma = bad_gamma[k];
        EXPECT_ALL(TSW_OK, &p, NULL);
    }
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = 1e-300;
    EXPECT_ALL(TSW_OK, &p, NULL);
    p.gamma = 1.0;
    p.normalize = 2;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);
    p.normalize = -1;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);

    /* TWED nu >= 0, lmbda >= 0, p >= 1, all finite */
    const double bad_nonneg[] = {-1e-12, -1.0, NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof(bad_nonneg) / sizeof(bad_nonneg[0]); ++k) {
        tsw_params_default(&p, TSW_TWED);
        p.nu = bad_nonneg[k];
        EXPECT_ALL(TSW_EPARAM, &p, NULL);
        tsw_params_default(&p, TSW_TWED);
        p.lmbda = bad_nonneg[k];
        EXPECT_ALL(TSW_EPARAM, &p, NULL);
        tsw_params_default(&p, TSW_SOFT_DTW); /* ignored by soft-DTW */
        p.nu = bad_nonneg[k];
        p.lmbda = bad_nonneg[k];
        EXPECT_ALL(TSW_OK, &p, NULL);
    }
    const double bad_p[] = {0.999, 0.5, 0.0, -2.0, NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof(bad_p) / sizeof(bad_p[0]); ++k) {
        tsw_params_default(&p, TSW_TWED);
        p.p = bad_p[k];
        EXPECT_ALL(TSW_EPARAM, &p, NULL);
        tsw_params_default(&p, TSW_DTW);
        p.p = bad_p[k];
        EXPECT_ALL(TSW_OK, &p, NULL);
    }
    tsw_params_default(&p, TSW_TWED);
    p.nu = 0;
    p.lmbda = 0;
    p.p = 1;
    EXPECT_ALL(TSW_OK, &p, NULL);
    p.p = 3.5;
    EXPECT_ALL(TSW_OK, &p, NULL);

    /* float32 computes with the parameters narrowed to float: those that would become
     * inf, 0 or a reciprocal of inf there are refused for float32 only. */
    {
        const float fv[4] = {0, 1, 2, 3};
        const double dv[4] = {0, 1, 2, 3};
        tsw_series f = {fv, 4, NULL}, d = {dv, 4, NULL};
        tsw_collection fc = {fv, NULL, NULL, 2, 2, NULL}, dc = {dv, NULL, NULL, 2, 2, NULL};
        const double bad_gamma32[] = {1e-300, 1e-40, 2e-39, 1e39, DBL_MAX};
        for (size_t k = 0; k < sizeof(bad_gamma32) / sizeof(bad_gamma32[0]); ++k) {
            tsw_params_default(&p, TSW_SOFT_DTW);
            p.gamma = bad_gamma32[k];
            EXPECT_DISTANCE(TSW_EPARAM, &p, TSW_F32, 1, &f, &f, NULL);
            EXPECT_CDIST(TSW_EPARAM, &p, TSW_F32, 1, &fc, &fc, NULL);
            EXPECT_PDIST(TSW_EPARAM, &p, TSW_F32, 1, &fc, TSW_PDIST_FULL, NULL);
            EXPECT_DISTANCE(bad_gamma32[k] <= TSW_GAMMA_MAX ? TSW_OK : TSW_EPARAM, &p, TSW_F64, 1,
                            &d, &d, NULL);
        }
        /* float64: gamma in [DBL_MIN, TSW_GAMMA_MAX]; a refusal names gamma and the range */
        const double bad_gamma64[] = {4.9e-324, 2e-308, 1.0000001e300, DBL_MAX};
        for (size_t k = 0; k < sizeof(bad_gamma64) / sizeof(bad_gamma64[0]); ++k) {
            tsw_params_default(&p, TSW_SOFT_DTW);
            p.gamma = bad_gamma64[k];
            EXPECT_DISTANCE(TSW_EPARAM, &p, TSW_F64, 1, &d, &d, NULL);
            CHECK(strstr(tsw_last_error_detail(), "gamma must be in") != NULL);
            EXPECT_CDIST(TSW_EPARAM, &p, TSW_F64, 1, &dc, &dc, NULL);
        }
        tsw_params_default(&p, TSW_SOFT_DTW);
        p.gamma = DBL_MIN;
        EXPECT_DISTANCE(TSW_OK, &p, TSW_F64, 1, &d, &d, NULL);
        p.gamma = TSW_GAMMA_MAX;
        EXPECT_DISTANCE(TSW_OK, &p, TSW_F64, 1, &d, &d, NULL);
        p.gamma = 1e-30; /* small but representable, with a finite reciprocal */
        EXPECT_DISTANCE(TSW_OK, &p, TSW_F32, 1, &f, &f, NULL);
        p.gamma = 1e30;
        EXPECT_DISTANCE(TSW_OK, &p, TSW_F32, 1, &f, &f, NULL);
        for (int which = 0; which < 3; ++which) {
            tsw_params_default(&p, TSW_TWED);
            double *field = which == 0 ? &p.nu : which == 1 ? &p.lmbda : &p.p;
            *field = 1e39;
            EXPECT_DISTANCE(TSW_EPARAM, &p, TSW_F32, 1, &f, &f, NULL);
            EXPECT_CDIST(TSW_EPARAM, &p, TSW_F32, 1, &fc, &fc, NULL);
            EXPECT_DISTANCE(TSW_OK, &p, TSW_F64, 1, &d, &d, NULL);
            *field = 1e30;
            EXPECT_DISTANCE(TSW_OK, &p, TSW_F32, 1, &f, &f, NULL);
        }
    }

    /* DTW cost and accumulated */
    tsw_params_default(&p, TSW_DTW);
    p.cost = (tsw_cost)4;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);
    p.cost = (tsw_cost)-1;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);
    tsw_params_default(&p, TSW_DTW);
    p.accumulated = 2;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);
    p.accumulated = -1;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);

    /* the elastic family's parameters */
    {
        const tsw_measure fam[] = {TSW_WDTW, TSW_WDDTW, TSW_ADTW, TSW_ERP,
                                   TSW_EDR,  TSW_LCSS,  TSW_MSM};
        for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); ++f) {
            tsw_params_default(&p, fam[f]);
            if (fam[f] != TSW_WDDTW)
                EXPECT_ALL(TSW_OK, &p, NULL); /* (WDDTW: these series have 2 points) */
            for (int k = 0; k < 4; ++k) {
                const double bad = k < 3 ? nonfinite[k] : -1.0;
                tsw_params_default(&p, fam[f]);
                switch (fam[f]) {
                case TSW_WDTW:
                case TSW_WDDTW:
                    p.g = bad;
                    break;
                case TSW_ADTW:
                    p.warp_penalty = bad;
                    break;
                case TSW_ERP:
                    if (k == 3)
                        continue; /* any finite gap value is valid */
                    p.erp_g = bad;
                    break;
                case TSW_EDR:
                case TSW_LCSS:
                    p.epsilon = k == 3 ? -0.5 : bad; /* (-1 is EDR's TSW_EPSILON_AUTO) */
                    break;
                default:
                    p.c = bad;
                    break;
                }
                EXPECT_ALL(TSW_EPARAM, &p, NULL);
            }
        }
        tsw_params_default(&p, TSW_LCSS);
        p.epsilon = TSW_EPSILON_AUTO; /* automatic for EDR only */
        EXPECT_ALL(TSW_EPARAM, &p, NULL);
        tsw_params_default(&p, TSW_MSM);
        p.msm_independent = 2;
        EXPECT_ALL(TSW_EINVAL, &p, NULL);
        tsw_params_default(&p, TSW_DDTW);
        {
            static const double v2[2] = {0, 1};
            const tsw_series s2 = {v2, 2, NULL}, s1 = {v2, 1, NULL};
            double o = 0;
            /* fewer than 3 points: no derivative */
            CHECK_RC(tsw_distance(&p, TSW_F64, 1, &s2, &s2, &o, NULL), TSW_ESHAPE);
            CHECK_RC(tsw_distance(&p, TSW_F64, 1, &s1, &s1, &o, NULL), TSW_ESHAPE);
            const tsw_collection c2 = {v2, NULL, NULL, 1, 2, NULL}; /* 2 series of 1 point */
            CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &c2, &c2, &o, NULL), TSW_ESHAPE);
        }
        EXPECT_ALL(TSW_OK, &p, NULL);
        p.cost = (tsw_cost)4;
        EXPECT_ALL(TSW_EINVAL, &p, NULL);
    }

    /* unknown measure */
    tsw_params_default(&p, TSW_DTW);
    p.measure = (tsw_measure)(TSW_SHAPE_DTW + 1);
    EXPECT_ALL(TSW_EINVAL, &p, NULL);

    /* shape DTW's parameters */
    tsw_params_default(&p, TSW_SHAPE_DTW);
    p.reach = -1;
    EXPECT_ALL(TSW_EPARAM, &p, NULL);
    p.reach = 100001;
    EXPECT_ALL(TSW_EPARAM, &p, NULL);
    p.reach = 3;
    p.descriptor = 2;
    EXPECT_ALL(TSW_EPARAM, &p, NULL);
    p.descriptor = TSW_SHAPE_PAA;
    p.paa_segments = 8; /* > 2 reach + 1 */
    EXPECT_ALL(TSW_EPARAM, &p, NULL);
    p.paa_segments = 0;
    EXPECT_ALL(TSW_EPARAM, &p, NULL);
    p.measure = (tsw_measure)-1;
    EXPECT_ALL(TSW_EINVAL, &p, NULL);

    /* windows, for every measure */
    for (int mi = 0; mi < 3; ++mi) {
        tsw_params_default(&p, MEASURES[mi]);
        p.window = (tsw_window)4;
        EXPECT_ALL(TSW_EINVAL, &p, NULL);
        p.window = (tsw_window)-1;
        EXPECT_ALL(TSW_EINVAL, &p, NULL);

        const double bad_radius[] = {-1.0, -0.5, 0.5, 1.5, 1e19};
        tsw_params_default(&p, MEASURES[mi]);
        p.window = TSW_WINDOW_SAKOE_CHIBA;
        for (size_t k = 0; k < sizeof(bad_radius) / sizeof(bad_radius[0]); ++k) {
            p.window_radius = bad_radius[k];
            EXPECT_ALL(TSW_EPARAM, &p, NULL);
        }
        for (int k = 0; k < 3; ++k) {
            p.window_radius = nonfinite[k];
            EXPECT_ALL(TSW_EPARAM, &p, NULL);
        }
        p.window_radius = 0;
        EXPECT_ALL(TSW_OK, &p, NULL);
        p.window_radius = 1e6; /* wider than the series: fine */
        EXPECT_ALL(TSW_OK, &p, NULL);

        const double bad_fraction[] = {-0.01, 1.0000001, 2.0};
        p.window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
        for (size_t k = 0; k < sizeof(bad_fraction) / sizeof(bad_fraction[0]); ++k) {
            p.window_radius = bad_fraction[k];
            EXPECT_ALL(TSW_EPARAM, &p, NULL);
        }
        for (int k = 0; k < 3; ++k) {
            p.window_radius = nonfinite[k];
            EXPECT_ALL(TSW_EPARAM, &p, NULL);
        }
        p.window_radius = 0;
        EXPECT_ALL(TSW_OK, &p, NULL);
        p.window_radius = 1;
        EXPECT_ALL(TSW_OK, &p, NULL);
        p.window_radius = 0.37;
        EXPECT_ALL(TSW_OK, &p, NULL);

        const double bad_slope[] = {0.999, 0.0, -2.0};
        p.window = TSW_WINDOW_ITAKURA;
        for (size_t k = 0; k < sizeof(bad_slope) / sizeof(bad_slope[0]); ++k) {
            p.itakura_max_slope = bad_slope[k];
            EXPECT_ALL(TSW_EPARAM, &p, NULL);
        }
        for (int k = 0; k < 3; ++k) {
            p.itakura_max_slope = nonfinite[k];
            EXPECT_ALL(TSW_EPARAM, &p, NULL);
        }
        p.itakura_max_slope = 1;
        EXPECT_ALL(TSW_OK, &p, NULL);

        /* parameters of windows not selected are ignored */
        tsw_params_default(&p, MEASURES[mi]);
        p.window_radius = -3.5;
        p.itakura_max_slope = NAN;
        EXPECT_ALL(TSW_OK, &p, NULL);
    }
}

/* ---- execution options ----------------------------------------------------------------- */

static void test_exec(void)
{
    tsw_params p;
    tsw_params_default(&p, TSW_DTW);
    tsw_exec e;

    tsw_exec_default(&e);
    e.n_threads = -1;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    tsw_exec_default(&e);
    e.device_index = -1;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    tsw_exec_default(&e);
    e.device = (tsw_device)3;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    e.device = (tsw_device)-1;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    tsw_exec_default(&e);
    e.impl = (tsw_impl)3;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    e.impl = (tsw_impl)-1;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    tsw_exec_default(&e);
    e.cuda_async = 2; /* 0 or 1 */
    EXPECT_ALL(TSW_EINVAL, &p, &e);

    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CUDA;
    if (!tsw_has_cuda())
        EXPECT_ALL(TSW_ENODEV, &p, &e); /* a clear "no CUDA backend" status */

    /* valid: explicit CPU, every impl, more threads than pairs */
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CPU;
    EXPECT_ALL(TSW_OK, &p, &e);
    e.impl = TSW_IMPL_REFERENCE;
    EXPECT_ALL(TSW_OK, &p, &e);
    e.impl = TSW_IMPL_SCALAR;
    e.n_threads = 64;
    EXPECT_ALL(TSW_OK, &p, &e);
    e.cuda_async = 1; /* read by *_device calls only */
    EXPECT_ALL(TSW_OK, &p, &e);

    /* several devices: a malformed list is refused by every call, whatever the device */
    int dup[2] = {1, 1}, neg[3] = {0, -1, 2}, ok[2] = {1, 0};
    tsw_exec_default(&e);
    e.n_devices = -2;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    e.n_devices = 65; /* more than TSW__MAX_DEVICES */
    e.devices = ok;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    e.n_devices = 2;
    e.devices = NULL;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    e.devices = dup;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    e.n_devices = 3;
    e.devices = neg;
    EXPECT_ALL(TSW_EINVAL, &p, &e);
    /* a valid list on the CPU is not used */
    e.device = TSW_DEVICE_CPU;
    e.n_devices = 2;
    e.devices = ok;
    EXPECT_ALL(TSW_OK, &p, &e);
    e.n_devices = TSW_ALL_DEVICES;
    EXPECT_ALL(TSW_OK, &p, &e);
    e.device = TSW_DEVICE_CUDA;
    if (!tsw_has_cuda())
        EXPECT_ALL(TSW_ENODEV, &p, &e);
}

/* Issue 36 (hostile probe): huge thread counts run clamped to the processors in every
 * entry point that takes them (the shapelet and soft-DTW gradient paths used to overflow
 * libgomp's stack), offsets whose byte address overflows are refused before any read, and a
 * length step beyond any length is one length (it overflowed a loop counter). */
static void test_hostile(void)
{
    double x[64], v[4] = {0}, g[64];
    for (int i = 0; i < 64; ++i)
        x[i] = sin(0.3 * i) + (i % 16 > 8 ? 2.0 : 0.0);
    tsw_params p;
    tsw_exec e;
    tsw_exec_default(&e);
    tsw_collection c = {x, NULL, NULL, 16, 4, NULL};
    for (int k = 0; k < 2; ++k) {
        e.n_threads = k ? INT_MAX : 100000;
        tsw_params_default(&p, TSW_DTW);
        EXPECT_ALL(TSW_OK, &p, &e);
        tsw_params_default(&p, TSW_SOFT_DTW);
        CHECK_RC(tsw_soft_dtw_grad(&p, TSW_F64, 1, &c, &c, v, g, NULL, &e), TSW_OK);
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = 2;
        sp.min_length = 3;
        sp.max_length = 6;
        int32_t lab[4] = {0, 1, 0, 1};
        tsw_shapelet best;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &best, &e), TSW_OK);
        sp.length_step = INT64_MAX; /* one length: min_length */
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &c, lab, NULL, 0, &best, &e), TSW_OK);
        CHECK(best.series < 0 || best.length == 3);
        tsw_shapelet top[4];
        int64_t cnt = 0;
        CHECK_RC(tsw_shapelet_top(&sp, TSW_F64, &c, lab, NULL, 0, 4, top, &cnt, &e), TSW_OK);
        for (int64_t q = 0; q < cnt; ++q)
            CHECK(top[q].length == 3);
        tsw_align_params ap;
        tsw_align_params_default(&ap);
        tsw_series a = {x, 32, NULL}, b = {x + 32, 32, NULL};
        int64_t path[2 * 64], len = 0;
        double cost;
        CHECK_RC(tsw_dtw_path(&ap, TSW_F64, 1, &a, &b, path, 64, &len, &cost, &e), TSW_OK);
    }
    /* offsets whose byte address overflows: refused before a value is read */
    int64_t lens[2] = {4, 4};
    const int64_t bad_offsets[][2] = {{0, (int64_t)1 << 60}, {0, INT64_MAX - 1},
                                      {0, INT64_MAX / 8}, {INT64_MAX / 8 - 1, 0}};
    tsw_params_default(&p, TSW_DTW);
    for (int k = 0; k < 4; ++k) {
        tsw_collection r = {x, bad_offsets[k], lens, 0, 2, NULL};
        double out[4];
        CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &r, &r, out, NULL), TSW_EOVERFLOW);
        CHECK_RC(tsw_pdist(&p, TSW_F64, 1, &r, TSW_PDIST_FULL, out, NULL), TSW_EOVERFLOW);
        tsw_params sdp;
        tsw_params_default(&sdp, TSW_SOFT_DTW);
        CHECK_RC(tsw_soft_dtw_grad(&sdp, TSW_F64, 1, &r, &r, out, NULL, NULL, NULL),
                 TSW_EOVERFLOW);
        int32_t lab[2] = {0, 1};
        tsw_shapelet_params sp;
        tsw_shapelet_params_default(&sp);
        sp.n_classes = 2;
        tsw_shapelet best;
        CHECK_RC(tsw_shapelet_search(&sp, TSW_F64, &r, lab, NULL, 0, &best, NULL),
                 TSW_EOVERFLOW);
        int64_t slen[1] = {3}, soff[1] = {0};
        tsw_collection sh = {x, soff, slen, 0, 1, NULL};
        double dist[2];
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &sh, &r, dist, NULL, NULL), TSW_EOVERFLOW);
        CHECK_RC(tsw_shapelet_distances(TSW_F64, &r, &sh, dist, NULL, NULL), TSW_EOVERFLOW);
    }
    /* the implicit offsets i * length of a collection too large to address */
    tsw_collection huge = {x, NULL, NULL, INT64_MAX / 2, 3, NULL};
    double out[9];
    CHECK_RC(tsw_cdist(&p, TSW_F64, 1, &huge, &huge, out, NULL), TSW_EOVERFLOW);
    /* found by tests/fuzz/fuzz_api: the first series' extent is representable, a later
     * one's overflows; every span is checked before the first value is read (the first
     * series was read, far past the caller's buffer) */
    {
        const int64_t big_dim = 144396909476553983LL; /* 36 rows x dim x 4 bytes > INT64_MAX */
        tsw_collection c6 = {x, NULL, NULL, 6, 6, NULL};
        float fout[36];
        CHECK_RC(tsw_pdist(&p, TSW_F32, big_dim, &c6, TSW_PDIST_FULL, fout, NULL),
                 TSW_EOVERFLOW);
        CHECK_RC(tsw_cdist(&p, TSW_F32, big_dim, &c6, &c6, fout, NULL), TSW_EOVERFLOW);
        tsw_params sdp;
        tsw_params_default(&sdp, TSW_SOFT_DTW);
        CHECK_RC(tsw_soft_dtw_grad(&sdp, TSW_F32, big_dim, &c6, &c6, fout, NULL, NULL, NULL),
                 TSW_EOVERFLOW);
        /* a count near 2^61 without offsets: refused at once, not by a loop over the count
         * (the cosine cost's unit copies checked series by series: fuzz_api's timeout) */
        tsw_collection many = {x, NULL, NULL, 4, 2604246222170760228LL, NULL};
        tsw_params cp;
        tsw_params_default(&cp, TSW_DTW);
        cp.cost = TSW_COST_COSINE;
        double d1[4];
        CHECK_RC(tsw_cdist(&cp, TSW_F64, 1, &many, &c6, d1, NULL), TSW_EOVERFLOW);
        CHECK_RC(tsw_pdist(&cp, TSW_F64, 1, &many, TSW_PDIST_FULL, d1, NULL), TSW_EOVERFLOW);
        CHECK_RC(tsw_paired(&cp, TSW_F64, 1, &many, &many, d1, NULL), TSW_EOVERFLOW);
    }
}

int main(void)
{
    test_null_and_shape();
    test_nonfinite();
    test_timestamps();
    test_params();
    test_exec();
    test_hostile();
    return TSW_TEST_END();
}
