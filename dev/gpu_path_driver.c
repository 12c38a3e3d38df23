/*
 * A driver for Nsight Compute and for A/B timing of the CUDA alignment path
 * (tsw_dtw_path, src/cuda/path.cu) without the Python package: two n x dim float32
 * sequences, uniform [0, 1) like bench/gpu_align.py's chroma-like features, one untimed
 * warm-up call, then `reps` timed calls (host arrays in, path out, as the Python call);
 * prints the median and the minimum wall time, GCUPS (n^2 cells / median), and the path's
 * length, cost and a hash of its cells, so that two builds can be checked to give the same
 * path. dev/gpu_path_ab.sh uses it, e.g.
 *   gcc -O2 dev/gpu_path_driver.c -Iinclude -Lbuild -ltswarp -Wl,-rpath,$PWD/build -o pd
 *   ./pd 100000 12 p05 cosine auto 5
 * argv: n dim step (p05 | symmetric1) cost (cosine | sqeuclidean) method (auto | stored |
 * linear) reps (defaults 100000 12 p05 cosine auto 5).
 * Found with it: see dev/gpu_path_ab.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver_time.h"
#include "tswarp.h"

int main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? atoll(argv[1]) : 100000, dim = argc > 2 ? atoll(argv[2]) : 12;
    const char *step = argc > 3 ? argv[3] : "p05", *cost = argc > 4 ? argv[4] : "cosine";
    const char *method = argc > 5 ? argv[5] : "auto";
    const int reps = argc > 6 ? atoi(argv[6]) : 5;
    if (n < 2 || dim < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: %s n dim step cost method reps\n", argv[0]);
        return 2;
    }
    tsw_align_params p;
    tsw_align_params_default(&p);
    p.step = strcmp(step, "p05") == 0 ? TSW_STEP_P05 : TSW_STEP_SYMMETRIC1;
    p.cost = strcmp(cost, "cosine") == 0 ? TSW_COST_COSINE : TSW_COST_SQEUCLIDEAN;
    p.method = strcmp(method, "linear") == 0   ? TSW_PATH_LINEAR
               : strcmp(method, "stored") == 0 ? TSW_PATH_STORED
                                               : TSW_PATH_AUTO;
    tsw_exec ex;
    tsw_exec_default(&ex);
    ex.device = TSW_DEVICE_CUDA;

    const size_t cnt = (size_t)n * (size_t)dim;
    float *a = malloc(cnt * sizeof(float)), *b = malloc(cnt * sizeof(float));
    const int64_t cap = tsw_path_max_length(n, n);
    int64_t *path = malloc((size_t)cap * 2 * sizeof(int64_t));
    if (!a || !b || !path)
        return 1;
    uint64_t s = 0x9e3779b97f4a7c15ull; /* xorshift64*: the same inputs in every build */
    for (size_t k = 0; k < 2 * cnt; ++k) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        const float v = (float)((s * 0x2545f4914f6cdd1dull) >> 40) / 16777216.0f;
        if (k < cnt)
            a[k] = v;
        else
            b[k - cnt] = v;
    }
    const tsw_series sa = {a, n, NULL}, sb = {b, n, NULL};
    double t[100], c = 0;
    int64_t len = 0;
    for (int r = -1; r < reps; ++r) {
        const double t0 = now_s();
        const int rc = tsw_dtw_path(&p, TSW_F32, dim, &sa, &sb, path, cap, &len, &c, &ex);
        const double t1 = now_s();
        if (rc) {
            fprintf(stderr, "tsw_dtw_path: %s (%s)\n", tsw_strerror(rc),
                    tsw_last_error_detail());
            return 1;
        }
        if (r >= 0)
            t[r] = t1 - t0;
    }
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the path's cells */
    for (int64_t k = 0; k < 2 * len; ++k) {
        h ^= (uint64_t)path[k];
        h *= 1099511628211ull;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    const double med = t[reps / 2];
    printf("n %lld dim %lld %s %s %s: median %.4f s min %.4f s %.1f GCUPS len %lld cost %.9g "
           "hash %016llx\n",
           (long long)n, (long long)dim, step, cost, method, med, t[0],
           (double)n * (double)n / med / 1e9, (long long)len, c, (unsigned long long)h);
    free(a);
    free(b);
    free(path);
    return 0;
}
