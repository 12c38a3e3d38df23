/*
 * Shared helpers of the libFuzzer harnesses (tests/fuzz/README.md): a reader that turns the
 * fuzzer's bytes into parameters, sizes and values, and the rule every harness checks.
 *
 * Sizes: a harness only hands the library buffers it really allocated. Lengths, offsets and
 * counts are taken either small (they index real memory) or from the raw bytes when their
 * byte extent overflows int64 (the library must refuse those before reading anything:
 * TSW_EOVERFLOW or TSW_EINVAL). Extents that are large but representable are not passed:
 * the API cannot know a caller's buffer size, and reading what the caller claims is its
 * contract.
 */
#ifndef TSW_FUZZ_COMMON_H
#define TSW_FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tswarp.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} fz_reader;

static uint8_t fz_u8(fz_reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static uint64_t fz_u64(fz_reader *r)
{
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k)
        v |= (uint64_t)fz_u8(r) << (8 * k);
    return v;
}

/* A double: often one of the values that break code (0, -0, 1, huge, tiny, subnormal, inf,
 * NaN, 2^53, integer-valued or not), else raw bits. */
static double fz_f64(fz_reader *r)
{
    static const double special[] = {0.0,     -0.0,    1.0,      -1.0,     0.5,    2.0,
                                     1e-300,  4.9e-324, 2.2e-308, 1e300,   1.7976931348623157e308,
                                     INFINITY, -INFINITY, NAN,    9007199254740993.0,
                                     1e18,    9.3e18,  1e154,    1e-154,   3.4e38, 1e-38,
                                     700.0,   1e30,    0.999999, 1.000001, 100.0};
    const uint8_t sel = fz_u8(r);
    if (sel < 200)
        return special[sel % (sizeof(special) / sizeof(special[0]))];
    uint64_t bits = fz_u64(r);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

/* An int64: small (0..15), a boundary (INT64_MAX, 1 << 60, -1, ...), or raw. */
static int64_t fz_i64(fz_reader *r)
{
    static const int64_t special[] = {0,         1,         2,          3,         -1,
                                      INT64_MAX, INT64_MIN, INT64_MAX - 1, (int64_t)1 << 60,
                                      (int64_t)1 << 62, (int64_t)1 << 32, (int64_t)1 << 31,
                                      1000000000000LL};
    const uint8_t sel = fz_u8(r);
    if (sel < 160)
        return sel % 16;
    if (sel < 240)
        return special[sel % (sizeof(special) / sizeof(special[0]))];
    return (int64_t)fz_u64(r);
}

/* The documented status codes, and nothing else. */
static void fz_check_rc(int rc, const char *what)
{
    if (rc == TSW_OK || (rc <= TSW_EINVAL && rc >= TSW_ERANGE))
        return;
    fprintf(stderr, "%s returned %d: not a tsw_status\n", what, rc);
    abort();
}

/* A failing call writes nothing: its outputs keep the sentinel. */
static void fz_check_untouched(const unsigned char *buf, size_t bytes, const char *what)
{
    for (size_t k = 0; k < bytes; ++k)
        if (buf[k] != 0xA5) {
            fprintf(stderr, "%s failed but wrote its output (byte %zu)\n", what, k);
            abort();
        }
}

#endif
