/*
 * The small entry points: status table, version, defaults, sizes and information.
 */
#include "harness.h"

#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_status_table(void)
{
    CHECK_STR(tsw_strerror(TSW_OK), "success");
    CHECK_STR(tsw_err_name(TSW_OK), "TSW_OK");

    /* Every code of the table: negative, distinct, its message and its name. */
    int codes[64];
    int n = 0;
#define TSW_T_XX(name, value, msg)                                                             \
    CHECK_EQ(TSW_##name, value);                                                               \
    CHECK(value < 0);                                                                          \
    CHECK_STR(tsw_strerror(value), msg);                                                       \
    CHECK_STR(tsw_err_name(value), "TSW_" #name);                                              \
    codes[n++] = value;
    TSW_ERRNO_MAP(TSW_T_XX)
#undef TSW_T_XX
    CHECK(n >= 12);
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            CHECK(codes[i] != codes[j]);

    /* Codes outside the table: "unknown error" and a name that is none of the table's. */
    const int unknown[] = {1, 7, -13, -100, INT_MIN, INT_MAX};
    for (size_t u = 0; u < sizeof(unknown) / sizeof(unknown[0]); ++u) {
        int c = unknown[u];
        int in_table = 0;
        for (int i = 0; i < n; ++i)
            in_table |= codes[i] == c;
        if (in_table)
            continue;
        CHECK_STR(tsw_strerror(c), "unknown error");
        const char *name = tsw_err_name(c);
        CHECK(name != NULL);
        if (!name)
            continue;
        CHECK(strcmp(name, "TSW_OK") != 0);
#define TSW_T_XX(ename, value, msg) CHECK(strcmp(name, "TSW_" #ename) != 0);
        TSW_ERRNO_MAP(TSW_T_XX)
#undef TSW_T_XX
    }
}

static void test_version(void)
{
    char want[64];
    snprintf(want, sizeof(want), "%d.%d.%d", TSWARP_VERSION_MAJOR, TSWARP_VERSION_MINOR,
             TSWARP_VERSION_PATCH);
    CHECK_STR(tsw_version_string(), want);
    /* The header's version is the CMake project version (the one pkg-config installs). */
    CHECK_STR(tsw_version_string(), TSWARP_PROJECT_VERSION);
    CHECK_EQ(tsw_version(), TSWARP_VERSION_HEX);
    CHECK_EQ(tsw_version(),
             (TSWARP_VERSION_MAJOR << 16) | (TSWARP_VERSION_MINOR << 8) | TSWARP_VERSION_PATCH);
}

static void test_params_default(void)
{
    const tsw_measure measures[] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW};
    for (int k = 0; k < 3; ++k) {
        tsw_params p;
        memset(&p, 0xA5, sizeof(p)); /* every field must be overwritten */
        tsw_params_default(&p, measures[k]);
        CHECK_EQ(p.measure, measures[k]);
        CHECK_EQ(p.window, TSW_WINDOW_NONE);
        CHECK(p.window_radius == 0.0);
        CHECK(p.itakura_max_slope == 2.0);
        CHECK_EQ(p.cost, TSW_COST_SQEUCLIDEAN);
        CHECK_EQ(p.accumulated, 0);
        CHECK(p.nu == 0.001);
        CHECK(p.lmbda == 1.0);
        CHECK(p.p == 2.0);
        CHECK(p.gamma == 1.0);
        CHECK_EQ(p.normalize, 0);
    }
    tsw_params_default(NULL, TSW_DTW); /* documented as harmless: must not crash */
    CHECK(1);
}

static void test_exec_default(void)
{
    tsw_exec e;
    memset(&e, 0xA5, sizeof(e));
    tsw_exec_default(&e);
    CHECK_EQ(e.n_threads, 0);
    CHECK_EQ(e.device, TSW_DEVICE_AUTO);
    CHECK_EQ(e.device_index, 0);
    CHECK_EQ(e.impl, TSW_IMPL_AUTO);
    CHECK(e.progress == NULL);
    CHECK(e.progress_user == NULL);
    tsw_exec_default(NULL);
    CHECK(1);
}

static void test_pdist_size(void)
{
    CHECK_EQ(tsw_pdist_size(0, TSW_PDIST_FULL), 0);
    CHECK_EQ(tsw_pdist_size(0, TSW_PDIST_CONDENSED), 0);
    CHECK_EQ(tsw_pdist_size(1, TSW_PDIST_FULL), 1);
    CHECK_EQ(tsw_pdist_size(1, TSW_PDIST_CONDENSED), 0);
    CHECK_EQ(tsw_pdist_size(2, TSW_PDIST_CONDENSED), 1);
    CHECK_EQ(tsw_pdist_size(4, TSW_PDIST_FULL), 16);
    CHECK_EQ(tsw_pdist_size(4, TSW_PDIST_CONDENSED), 6);
    CHECK_EQ(tsw_pdist_size(1000, TSW_PDIST_CONDENSED), 499500);
    /* 3037000499 = floor(sqrt(INT64_MAX)): the largest n whose n * n fits in int64. */
    CHECK_EQ(tsw_pdist_size(3037000499LL, TSW_PDIST_FULL), 3037000499LL * 3037000499LL);
    CHECK_EQ(tsw_pdist_size(3037000499LL, TSW_PDIST_CONDENSED),
             3037000499LL * 3037000498LL / 2);
    /* Overflow and negative counts: 0. */
    CHECK_EQ(tsw_pdist_size(3037000500LL, TSW_PDIST_FULL), 0);
    CHECK_EQ(tsw_pdist_size(INT64_MAX, TSW_PDIST_FULL), 0);
    CHECK_EQ(tsw_pdist_size(INT64_MAX, TSW_PDIST_CONDENSED), 0);
    CHECK_EQ(tsw_pdist_size(-1, TSW_PDIST_FULL), 0);
    CHECK_EQ(tsw_pdist_size(INT64_MIN, TSW_PDIST_CONDENSED), 0);
}

static void test_information(void)
{
    int has = tsw_has_cuda();
    CHECK(has == 0 || has == 1);
    int count = -7;
    if (!has) {
        CHECK_RC(tsw_cuda_device_count(&count), TSW_ENODEV);
        CHECK_EQ(count, 0);
    } else {
        CHECK_RC(tsw_cuda_device_count(&count), TSW_OK);
        CHECK(count >= 0);
    }
    CHECK_RC(tsw_cuda_device_count(NULL), TSW_EINVAL);
    CHECK(tsw_cuda_archs() != NULL);
    if (!has) {
        tsw_cuda_device info;
        CHECK_RC(tsw_cuda_device_info(0, &info), TSW_ENODEV);
        CHECK(strcmp(tsw_cuda_archs(), "") == 0);
        int rt = -1, drv = -1;
        CHECK_RC(tsw_cuda_versions(&rt, &drv), TSW_ENODEV);
        CHECK_EQ(rt, 0);
        CHECK_EQ(drv, 0);
    } else {
        CHECK(strstr(tsw_cuda_archs(), "sm_") != NULL);
        if (count == 0) { /* built with CUDA, no GPU here: every device call says ENODEV */
            tsw_cuda_device info;
            CHECK_RC(tsw_cuda_device_info(0, &info), TSW_ENODEV);
            CHECK(strlen(tsw_last_error_detail()) > 0);
        }
    }
    CHECK_RC(tsw_cuda_device_info(0, NULL), TSW_EINVAL);

    /* tswarp's GPU memory cache: NULL first, then no such device */
    size_t cached = 7;
    CHECK_RC(tsw_cuda_cached_bytes(0, NULL), TSW_EINVAL);
    CHECK_RC(tsw_cuda_cached_bytes(-1, &cached), TSW_ENODEV);
    CHECK_EQ(cached, 0);
    CHECK(strlen(tsw_last_error_detail()) > 0);
    if (has)
        CHECK_RC(tsw_cuda_cached_bytes(count, &cached), TSW_ENODEV);
    CHECK_RC(tsw_cuda_empty_cache(-2), TSW_ENODEV);
    if (!has || count == 0) {
        cached = 7;
        CHECK_RC(tsw_cuda_cached_bytes(0, &cached), TSW_ENODEV);
        CHECK_EQ(cached, 0);
        CHECK_RC(tsw_cuda_empty_cache(0), TSW_ENODEV);
        CHECK(strlen(tsw_last_error_detail()) > 0);
    }
    /* -1, every device: none without the backend; with it, every device that has a pool
     * (none here before a call) */
    CHECK_RC(tsw_cuda_empty_cache(-1), has ? TSW_OK : TSW_ENODEV);
    if (has)
        CHECK_STR(tsw_last_error_detail(), "");
    if (!has || count == 0) {
        /* no device: device=CUDA is ENODEV, AUTO falls back to the CPU */
        tsw_params p;
        tsw_params_default(&p, TSW_DTW);
        double a[3] = {0, 1, 2}, b[2] = {1, 2}, v = -1;
        tsw_series sa = {a, 3, NULL}, sb = {b, 2, NULL};
        tsw_exec e;
        tsw_exec_default(&e);
        e.device = TSW_DEVICE_CUDA;
        CHECK_RC(tsw_distance(&p, TSW_F64, 1, &sa, &sb, &v, &e), TSW_ENODEV);
        CHECK_RC(tsw_distance_device(&p, TSW_F64, 1, &sa, &sb, &v, &e), TSW_ENODEV);
        size_t ws = 7;
        CHECK_RC(tsw_distance_workspace_size(&p, TSW_F64, 1, &sa, &sb, &e, &ws), TSW_ENODEV);
        e.device = TSW_DEVICE_AUTO;
        CHECK_RC(tsw_distance(&p, TSW_F64, 1, &sa, &sb, &v, &e), TSW_OK);
        CHECK_NEAR(v, 1.0, 1e-15);
    }

    CHECK(tsw_max_threads() >= 1);

    const char *simd = tsw_cpu_simd();
    CHECK(simd != NULL);
    if (simd)
        CHECK(strcmp(simd, "avx2") == 0 || strcmp(simd, "sse2") == 0 ||
              strcmp(simd, "scalar") == 0);
#if defined(__x86_64__)
    if (simd && !getenv("TSWARP_SIMD"))
        CHECK(strcmp(simd, "scalar") != 0); /* SSE2 is part of x86-64 */
#endif
}

/* TSWARP_SIMD caps the level. The level is cached per process, so a fresh process (this
 * program, argv[0], re-executed with --simd-cap CAP) answers. */
static int simd_cap_child(const char *cap)
{
    setenv("TSWARP_SIMD", cap, 1);
    const char *s = tsw_cpu_simd();
    if (strcmp(cap, "scalar") == 0)
        return strcmp(s, "scalar") == 0 ? 0 : 1;
    return strcmp(s, "scalar") == 0 || strcmp(s, "sse2") == 0 ? 0 : 1; /* never above */
}

static void test_simd_cap(const char *self)
{
    const char *caps[] = {"scalar", "sse2"};
    for (int k = 0; k < 2; ++k) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            /* argv[0], not /proc/self/exe, which is valgrind's tool under valgrind */
            execl(self, self, "--simd-cap", caps[k], (char *)NULL);
            _exit(127);
        }
        int st = 0;
        CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--simd-cap") == 0)
        return simd_cap_child(argv[2]);
    test_status_table();
    test_version();
    test_params_default();
    test_exec_default();
    test_pdist_size();
    test_information();
    test_simd_cap(argv[0]);
    return TSW_TEST_END();
}
