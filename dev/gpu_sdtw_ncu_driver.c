/*
 * A driver for Nsight Compute and for A/B timing of the soft-DTW gradient kernels: B pairs
 * of N-point float32 random walks (dim 1, gamma 1), value and gradients (grads = 1) or
 * values only (0), on device arrays (tsw_soft_dtw_grad_device, synchronous), `reps` calls;
 * prints the median wall time per call over 5 rounds. bench/RESULTS.md has the commands
 * that use it, e.g.
 *   gcc -O2 dev/gpu_sdtw_ncu_driver.c -Iinclude -I/usr/local/cuda/include -Lbuild -ltswarp \
 *       -L/usr/local/cuda/lib64 -lcudart -Wl,-rpath,$PWD/build -o prof
 *   ncu --kernel-name regex:sdtw_wf_kernel --launch-skip 1 --launch-count 1 --set full \
 *       -o g1 ./prof 64 512 1 2
 * argv: B N grads reps (defaults 64 512 1 3).
 * Found with it: see dev/gpu_sdtw_ab.sh and dev/gpu_sdtw_step_probe.cu.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "driver_time.h"
#include "tswarp.h"

int main(int argc, char **argv)
{
    const int B = argc > 1 ? atoi(argv[1]) : 64, N = argc > 2 ? atoi(argv[2]) : 512;
    const int grads = argc > 3 ? atoi(argv[3]) : 1, reps = argc > 4 ? atoi(argv[4]) : 3;
    if (B < 1 || N < 1 || reps < 1) {
        fprintf(stderr, "usage: %s B N grads reps\n", argv[0]);
        return 2;
    }
    const size_t cnt = (size_t)B * (size_t)N, bytes = cnt * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes);
    if (!x || !y)
        return 1;
    srand(1);
    for (int b = 0; b < B; ++b) {
        float sx = 0, sy = 0;
        for (int i = 0; i < N; ++i) {
            sx += 0.1f * ((float)rand() / (float)RAND_MAX - 0.5f);
            sy += 0.1f * ((float)rand() / (float)RAND_MAX - 0.5f);
            x[(size_t)b * N + i] = sx;
            y[(size_t)b * N + i] = sy;
        }
    }
    float *dx, *dy, *dgx, *dgy, *dv;
    if (cudaMalloc((void **)&dx, bytes) || cudaMalloc((void **)&dy, bytes) ||
        cudaMalloc((void **)&dgx, bytes) || cudaMalloc((void **)&dgy, bytes) ||
        cudaMalloc((void **)&dv, (size_t)B * sizeof(float))) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice);
    tsw_collection cx = {0}, cy = {0};
    cx.values = dx;
    cx.count = B;
    cx.length = N;
    cy.values = dy;
    cy.count = B;
    cy.length = N;
    tsw_params p;
    tsw_params_default(&p, TSW_SOFT_DTW);
    p.gamma = 1.0;
    tsw_exec e;
    tsw_exec_default(&e);
    double t[5];
    for (int round = -1; round < 5; ++round) { /* round -1: warm-up */
        const double t0 = now_s();
        for (int r = 0; r < reps; ++r) {
            const int rc = tsw_soft_dtw_grad_device(&p, TSW_F32, 1, &cx, &cy, dv,
                                                    grads ? dgx : NULL, grads ? dgy : NULL, &e);
            if (rc) {
                printf("rc %d %s\n", rc, tsw_last_error_detail());
                return 1;
            }
        }
        cudaDeviceSynchronize();
        if (round >= 0)
            t[round] = (now_s() - t0) / reps;
    }
    qsort(t, 5, sizeof t[0], cmp_double);
    float v0 = 0;
    cudaMemcpy(&v0, dv, sizeof v0, cudaMemcpyDeviceToHost);
    printf("B=%d N=M=%d grads=%d: %.3f ms a call (median of 5 rounds of %d), value[0] %.6g\n", B,
           N, grads, t[2] * 1e3, reps, v0);
    return 0;
}
