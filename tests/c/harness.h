/*
 * A tiny assertion harness for the C tests. Every check records file:line on failure and
 * keeps going, so one run lists every broken expectation; TSW_TEST_END() prints
 * "N passed, N failed" on its own line and yields the exit status (non-zero on failure).
 * Counters are updated atomically: checks may run on several threads (test_threads.c).
 *
 * Set TSWARP_TEST_QUICK=1 to shrink the random sizes (valgrind runs, see sanitize.sh).
 */
#ifndef TSW_TEST_HARNESS_H
#define TSW_TEST_HARNESS_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tswarp.h"

static long tsw_t_passed, tsw_t_failed;

/* At most this many failures are printed (all are counted): a broken kernel fails
 * thousands of checks, and the first ones say enough. */
#define TSW_T_MAX_PRINTED 60

/* Counts a check; returns 1 when a failure should be printed. */
static inline int tsw_t_record(int ok)
{
    if (ok) {
        __atomic_fetch_add(&tsw_t_passed, 1, __ATOMIC_RELAXED);
        return 0;
    }
    long n = __atomic_add_fetch(&tsw_t_failed, 1, __ATOMIC_RELAXED);
    if (n == TSW_T_MAX_PRINTED + 1)
        fprintf(stderr, "(further failures are counted, not printed)\n");
    return n <= TSW_T_MAX_PRINTED;
}

/* Each check returns its outcome so a caller can skip dependent checks. */
static inline int tsw_t_check(int ok, const char *file, int line, const char *expr)
{
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
    return ok;
}

static inline int tsw_t_check_eq(int64_t a, int64_t b, const char *file, int line,
                                 const char *ea, const char *eb)
{
    int ok = a == b;
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%" PRId64 " vs %" PRId64 ")\n", file,
                line, ea, eb, a, b);
    return ok;
}

/* |a - b| <= tol * max(1, |b|): absolute near zero, relative for large values. Equal
 * infinities pass; NaN never does. */
static inline int tsw_t_check_near(double a, double b, double tol, const char *file, int line,
                                   const char *ea, const char *eb)
{
    int ok;
    if (isinf(a) || isinf(b))
        ok = a == b;
    else
        ok = fabs(a - b) <= tol * (fabs(b) > 1 ? fabs(b) : 1.0);
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s ~ %s (%.17g vs %.17g, tol %g)\n", file,
                line, ea, eb, a, b, tol);
    return ok;
}

static inline int tsw_t_check_str(const char *a, const char *b, const char *file, int line,
                                  const char *ea, const char *eb)
{
    int ok = a && b && strcmp(a, b) == 0;
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: CHECK_STR failed: %s == %s (\"%s\" vs \"%s\")\n", file, line,
                ea, eb, a ? a : "(null)", b ? b : "(null)");
    return ok;
}

/* A status code, printed by name. */
static inline int tsw_t_check_rc(int got, int want, const char *file, int line,
                                 const char *expr)
{
    int ok = got == want;
    if (tsw_t_record(ok))
        fprintf(stderr, "%s:%d: CHECK_RC failed: %s returned %s (%d), expected %s (%d)\n", file,
                line, expr, tsw_err_name(got), got, tsw_err_name(want), want);
    return ok;
}

/* Context printed after a failed check, while failures are still being printed. */
#define TSW_T_NOTE(...)                                                                        \
    do {                                                                                       \
        if (__atomic_load_n(&tsw_t_failed, __ATOMIC_RELAXED) <= TSW_T_MAX_PRINTED)             \
            fprintf(stderr, __VA_ARGS__);                                                      \
    } while (0)

#define CHECK(cond) tsw_t_check(!!(cond), __FILE__, __LINE__, #cond)
#define CHECK_EQ(a, b) tsw_t_check_eq((int64_t)(a), (int64_t)(b), __FILE__, __LINE__, #a, #b)
#define CHECK_NEAR(a, b, tol) tsw_t_check_near((a), (b), (tol), __FILE__, __LINE__, #a, #b)
#define CHECK_STR(a, b) tsw_t_check_str((a), (b), __FILE__, __LINE__, #a, #b)
#define CHECK_RC(expr, want) tsw_t_check_rc((expr), (want), __FILE__, __LINE__, #expr)
/* Variants for helpers that receive the caller's file and line. */
#define CHECK_AT(cond, file, line) tsw_t_check(!!(cond), file, line, #cond)
#define CHECK_RC_AT(expr, want, file, line) tsw_t_check_rc((expr), (want), file, line, #expr)

#define TSW_TEST_END()                                                                         \
    (printf("%ld passed, %ld failed\n", tsw_t_passed, tsw_t_failed), fflush(stdout),           \
     tsw_t_failed != 0 || tsw_t_passed == 0)

/* 1 when TSWARP_TEST_QUICK is set to something other than "0". */
static inline int tsw_t_quick(void)
{
    const char *q = getenv("TSWARP_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* Whether a comma-separated list holds name. */
static inline int tsw_t_list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        if (!e)
            break;
        s = e + 1;
    }
    return 0;
}

/* Whether a test section runs: TSWARP_GPU_TEST_ONLY=a,b runs only those, and
 * TSWARP_GPU_TEST_SKIP=a,b all but those. */
static inline int tsw_t_want(const char *name)
{
    const char *only = getenv("TSWARP_GPU_TEST_ONLY"), *skip = getenv("TSWARP_GPU_TEST_SKIP");
    if (only && *only && !tsw_t_list_has(only, name))
        return 0;
    return !(skip && *skip && tsw_t_list_has(skip, name));
}

/* Deterministic random numbers (splitmix64), so a failure reproduces. */
typedef struct {
    uint64_t s;
} tsw_t_rng;

static inline uint64_t tsw_t_next(tsw_t_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* Uniform in [lo, hi). */
static inline double tsw_t_uniform(tsw_t_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)(tsw_t_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
/* Integer in [lo, hi]. */
static inline int64_t tsw_t_int(tsw_t_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(tsw_t_next(r) % (uint64_t)(hi - lo + 1));
}

static inline double tsw_t_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
