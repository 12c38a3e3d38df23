/*
 * Where a soft-DTW wavefront step goes: the cycles of one anti-diagonal step of the
 * wavefront kernel's forward loop (src/cuda/sdtw_wf.cuh), rebuilt here around the same
 * cells (src/cuda/sdtw_wf_cell.cuh) with parts swapped, one at a time:
 *   cell   dbl: wf_cell (R in double, probabilities stored, as the gradient kernel)
 *          val: wf_cell_val (R in float32, nothing stored, as the value-only kernel)
 *          lin: a cell in the scaled linear domain (P = exp(-R / gamma) as a float32
 *               mantissa and an int binary exponent; the cost's exponential off the chain)
 *          add: R = c + min of the three (the chain's floor: shuffle, hand-over, barrier)
 *   sync   bar: the lane-31 hand-over through shared memory and a barrier every step
 *          none: no barrier (each warp reads its own hand-over slot: the warps run apart)
 * Every block is one problem of N x N cells (RB rows a lane, N / RB lanes), `blocks` blocks;
 * thread 0 of each block counts clock64 cycles over the loop (the figure to read: the
 * kernel times also hold the checksum's atomics, one a thread, which serialise with many
 * blocks). The results are summed into a checksum so that nothing is optimised away; they are not checked (this is a timing
 * probe, the library's tests check the kernel).
 *   nvcc -O3 -arch=sm_90 -Isrc -o probe dev/gpu_sdtw_step_probe.cu && ./probe [blocks]
 * Found (H100, 2026-11-23): one row a lane is the fastest block shape (16 warps for 512
 * rows: 564 cycles a step against 710 with two rows a lane; 8 warps for 256: 382 against
 * 601); the barrier costs 0-100 cycles a step; the float32 value-only cell saves a third;
 * the scaled linear domain did not pay on the GPU (625-684 cycles). The gradient kernel
 * took one row a lane up to 16 warps (bench/HISTORY.md, "One row per lane").
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/tsw_hd.h"
#include "common/recurrence.h"
#include "common/sdtw_grad.h"
#include "cuda/sdtw_wf_cell.cuh"

enum { C_DBL, C_VAL, C_LIN, C_ADD };
constexpr int kZeroK = -(1 << 30); /* lin: the exponent of P = 0 (R = +inf) */

/* lin: P = M 2^K of the cell from its predecessors' (M, K) and exp(-c / gamma) = em 2^nn */
__device__ __forceinline__ void lin_cell(float md, int kd, float mu, int ku, float ml, int kl,
                                         float em, int nn, float &M, int &K, float &pd,
                                         float &pu)
{
    const int kmax = max(max(kd, ku), kl);
#define LIN_TERM(mx, kx) __int_as_float(__float_as_int(mx) + (max((kx)-kmax, -126) << 23))
    const float td = LIN_TERM(md, kd), tu = LIN_TERM(mu, ku), tl = LIN_TERM(ml, kl);
#undef LIN_TERM
    const float sum = td + tu + tl, inv = mufu_rcp(sum);
    const int b = __float_as_int(em * sum);
    const bool dead = kmax < kZeroK / 2;
    M = dead ? 1.f : __int_as_float((b & 0x7fffff) | 0x3f800000);
    K = dead ? kZeroK : kmax + nn + ((b >> 23) - 127);
    pd = dead ? 0.f : td * inv;
    pu = dead ? 0.f : tu * inv;
}

template <int C, int RB, bool BAR>
__global__ void __launch_bounds__(512, 1)
    probe(const float *xs, const float *ys, int n, float2 *P, double *sink, long long *cyc)
{
    const unsigned FULL = 0xffffffffu;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, NW = blockDim.x >> 5;
    const int Lp = n / RB, S = n + n - 1, L = tid, r0 = L * RB;
    __shared__ double hf[2][16][2];
    __shared__ float yss[4096];
    for (int k = tid; k < n; k += blockDim.x)
        yss[k] = ys[(int64_t)blockIdx.x * n + k];
    for (int k = tid; k < 64; k += blockDim.x)
        ((double *)hf)[k] = C == C_LIN ? 0.0 : TSW_INF_F64;
    double xd[RB];
    for (int r = 0; r < RB; ++r)
        xd[r] = xs[(int64_t)blockIdx.x * n + r0 + r];
    P += (int64_t)blockIdx.x * S * RB * Lp;
    const float k2 = 1.4426950408889634f, gl = 0.6931471805599453f;
    const double INF = TSW_INF_F64;
    /* state: R (dbl, add: double; val: float) or (M, K) (lin: K in the double's bits) */
    double prev[RB], dg[RB];
    float yv[RB];
    int kp[RB], kg[RB];
    for (int r = 0; r < RB; ++r) {
        prev[r] = C == C_LIN ? 1.0 : INF;
        dg[r] = C == C_LIN ? 1.0 : (L == 0 && r == 0) ? 0.0 : INF;
        kp[r] = kZeroK;
        kg[r] = (L == 0 && r == 0) ? 0 : kZeroK;
        yv[r] = 0.f;
    }
    __syncthreads();
    const long long t0 = clock64();
    for (int s = 0; s < S; ++s) {
        double uR = __shfl_up_sync(FULL, prev[RB - 1], 1);
        int uK = __shfl_up_sync(FULL, kp[RB - 1], 1);
        float uY = __shfl_up_sync(FULL, yv[RB - 1], 1);
        double hR;
        int hK;
        float hY;
        if (warp == 0) {
            hR = C == C_LIN ? 1.0 : INF;
            hK = kZeroK;
            hY = s < n ? yss[s] : 0.f;
        } else {
            const double *h = hf[BAR ? ((s & 1) ^ 1) : 0][BAR ? warp - 1 : warp];
            hR = h[0];
            hK = __double_as_longlong(h[1]) & 0xffffffff;
            hY = (float)h[1];
        }
        uR = lane == 0 ? hR : uR;
        uK = lane == 0 ? hK : uK;
        uY = lane == 0 ? hY : uY;
        double nR[RB];
        int nK[RB] = {}; /* set by the C_LIN cell only */
        float2 np[RB];
#pragma unroll
        for (int r = 0; r < RB; ++r) {
            const double up = r > 0 ? prev[r - 1] : uR;
            const int upk = r > 0 ? kp[r - 1] : uK;
            const float y = r > 0 ? yv[r - 1] : uY;
            const double df = xd[r] - (double)y, cost = df * df;
            float pd = 0.f, pu = 0.f;
            if constexpr (C == C_DBL) {
                wf_cell(dg[r], up, prev[r], cost, k2, gl, nR[r], pd, pu);
            } else if constexpr (C == C_VAL) {
                nR[r] = wf_cell_val((float)dg[r], (float)up, (float)prev[r], (float)cost, k2, gl);
            } else if constexpr (C == C_LIN) {
                const double t = -cost * 1.4426950408889634;
                const double tn = rint(t);
                const float em = mufu_ex2((float)(t - tn));
                float M;
                lin_cell((float)dg[r], kg[r], (float)up, upk, (float)prev[r], kp[r], em,
                         (int)tn, M, nK[r], pd, pu);
                nR[r] = M;
            } else {
                nR[r] = cost + TSW_MIN(TSW_MIN(dg[r], up), prev[r]);
            }
            np[r] = make_float2(pd, pu);
        }
        if (C == C_DBL || C == C_LIN) {
#pragma unroll
            for (int r = 0; r < RB; ++r) {
                const int j = s - r0 - r;
                if ((unsigned)j < (unsigned)n)
                    P[((int64_t)s * RB + r) * Lp + L] = np[r];
            }
        }
#pragma unroll
        for (int r = RB - 1; r >= 0; --r) {
            dg[r] = r > 0 ? prev[r - 1] : uR;
            kg[r] = r > 0 ? kp[r - 1] : uK;
            prev[r] = nR[r];
            kp[r] = nK[r];
            yv[r] = r > 0 ? yv[r - 1] : uY;
        }
        if (BAR) {
            if (lane == 31 && warp + 1 < NW) {
                hf[s & 1][warp][0] = prev[RB - 1];
                hf[s & 1][warp][1] = C == C_LIN ? __longlong_as_double(kp[RB - 1]) : yv[RB - 1];
            }
            __syncthreads();
        } else if (lane == 31 && s == 0) {
            hf[0][warp][0] = prev[RB - 1];
        }
    }
    const long long t1 = clock64();
    double acc = 0;
    for (int r = 0; r < RB; ++r)
        acc += prev[r] + kp[r];
    atomicAdd(sink, acc);
    if (tid == 0)
        cyc[blockIdx.x] = t1 - t0;
}

template <int C, int RB, bool BAR>
static void run(const char *name, int blocks, int n, const float *x, const float *y,
                float2 *P, double *sink, long long *cyc, long long *hcyc)
{
    const int threads = n / RB;
    if (threads > 512 || threads % 32)
        return;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int rep = 0; rep < 7; ++rep) {
        cudaEventRecord(e0);
        probe<C, RB, BAR><<<blocks, threads>>>(x, y, n, P, sink, cyc);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        best = ms < best ? ms : best;
    }
    cudaMemcpy(hcyc, cyc, sizeof(long long) * blocks, cudaMemcpyDeviceToHost);
    double c = 0;
    for (int b = 0; b < blocks; ++b)
        c += (double)hcyc[b];
    const int S = 2 * n - 1;
    printf("%-5s %-5s RB=%d warps=%d blocks=%4d N=%4d  %7.1f cycles/step  %7.1f ns/step  "
           "%8.1f us  (%s)\n",
           name, BAR ? "bar" : "none", RB, threads / 32, blocks, n, c / blocks / S,
           1e6 * best / S, 1e3 * best, cudaGetErrorString(cudaGetLastError()));
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

int main(int argc, char **argv)
{
    const int blocks = argc > 1 ? atoi(argv[1]) : 64;
    const int nmax = 1024;
    float *x, *y;
    float2 *P;
    double *sink;
    long long *cyc, *hcyc = (long long *)malloc(sizeof(long long) * blocks);
    cudaMalloc(&x, sizeof(float) * blocks * nmax);
    cudaMalloc(&y, sizeof(float) * blocks * nmax);
    cudaMalloc(&P, sizeof(float2) * (size_t)blocks * 2 * nmax * nmax);
    cudaMalloc(&sink, sizeof(double));
    cudaMalloc(&cyc, sizeof(long long) * blocks);
    float *h = (float *)malloc(sizeof(float) * blocks * nmax);
    srand(1);
    for (int k = 0; k < blocks * nmax; ++k)
        h[k] = (float)rand() / (float)RAND_MAX - 0.5f;
    cudaMemcpy(x, h, sizeof(float) * blocks * nmax, cudaMemcpyHostToDevice);
    cudaMemcpy(y, h, sizeof(float) * blocks * nmax, cudaMemcpyHostToDevice);
    for (int n : {512, 256, 128}) {
        run<C_DBL, 2, true>("dbl", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_DBL, 2, false>("dbl", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_DBL, 1, true>("dbl", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_DBL, 1, false>("dbl", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_DBL, 4, true>("dbl", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_VAL, 2, true>("val", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_VAL, 1, true>("val", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_VAL, 2, false>("val", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_LIN, 2, true>("lin", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_LIN, 2, false>("lin", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_LIN, 1, true>("lin", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_ADD, 2, true>("add", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_ADD, 2, false>("add", blocks, n, x, y, P, sink, cyc, hcyc);
        run<C_ADD, 1, true>("add", blocks, n, x, y, P, sink, cyc, hcyc);
    }
    return 0;
}
