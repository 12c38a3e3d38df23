/*
 * A driver for Nsight Compute on the soft-DTW gradient kernels: B pairs of N-point float32
 * random walks (dim 1, gamma 1), value and gradients (grads = 1) or values only (0) on the
 * GPU from host memory, `reps` calls. bench/RESULTS.md has the commands that use it, e.g.
 *   gcc -O2 bench/gpu_sdtw_ncu_driver.c -Iinclude -Lbuild -ltswarp -Wl,-rpath,$PWD/build -o prof
 *   ncu --kernel-name regex:sdtw_wf_kernel --launch-skip 1 --launch-count 1 --set full -o g1 ./prof 64 512 1 2
 * argv: B N grads reps (defaults 64 512 1 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include "tswarp.h"
int main(int argc, char **argv)
{
    int B = argc > 1 ? atoi(argv[1]) : 64, N = argc > 2 ? atoi(argv[2]) : 512;
    int grads = argc > 3 ? atoi(argv[3]) : 1, reps = argc > 4 ? atoi(argv[4]) : 3;
    float *x = malloc(sizeof(float) * B * N), *y = malloc(sizeof(float) * B * N);
    float *gx = malloc(sizeof(float) * B * N), *gy = malloc(sizeof(float) * B * N), *v = malloc(sizeof(float) * B);
    srand(1);
    for (int b = 0; b < B; ++b) {
        float sx = 0, sy = 0;
        for (int i = 0; i < N; ++i) {
            sx += 0.1f * ((float)rand() / RAND_MAX - 0.5f);
            sy += 0.1f * ((float)rand() / RAND_MAX - 0.5f);
            x[b * N + i] = sx;
            y[b * N + i] = sy;
        }
    }
    tsw_collection cx = {0}, cy = {0};
    cx.values = x; cx.count = B; cx.length = N;
    cy.values = y; cy.count = B; cy.length = N;
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = 1.0;
    tsw_exec e;
    tsw_exec_default(&e);
    e.device = TSW_DEVICE_CUDA;
    for (int r = 0; r < reps; ++r) {
        int rc = tsw_soft_dtw_grad(&p, TSW_F32, 1, &cx, &cy, v, grads ? gx : NULL, grads ? gy : NULL, &e);
        if (rc) { printf("rc %d %s\n", rc, tsw_last_error_detail()); return 1; }
    }
    printf("v0 %g\n", v[0]);
    return 0;
}
