/*
 * DBA's alignment step on the GPU (tsw_dba_step with exec->device CUDA): every series'
 * SYMMETRIC1 squared-Euclidean path to the barycenter in one batch, a block per series.
 * The block sweeps its grid by anti-diagonals (D of the last three in shared memory, by
 * row), each cell the rule of common/path.h with the CPU's roundings (the non-contracting
 * intrinsics: this file is compiled with -fmad=false too), its two comparison bits kept in
 * global memory (a byte a cell), and one thread follows them back from (n-1, m-1), as
 * cpu/dba_lanes_impl.h does: the same pairs and costs as tsw_dtw_path on the CPU. The
 * host sums the aligned points in series order (align.c), as for the CPU's paths.
 */
#include "host.cuh"
#include "common/path.h" /* tsw_path_trace_codes_u8 */

using namespace tsw__cu;

namespace {

template <typename T> struct DOp;
template <> struct DOp<double> {
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    static __device__ __forceinline__ double inf() { return __longlong_as_double(0x7ff0000000000000LL); }
};
template <> struct DOp<float> {
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ __forceinline__ float inf() { return __int_as_float(0x7f800000); }
};

struct DbaArgs {
    int64_t L, dim, k0;      /* barycenter points, channels, the launch's first series */
    int series_rows;
    const int64_t *off, *len; /* the series' rows in vals, their lengths */
    const int64_t *woff;      /* window rows of series k at woff[k] in wlo/whi; NULL: none */
    const int64_t *wlo, *whi;
    const int64_t *coff;      /* codes of series k at coff[k] (n m bytes) */
    uint8_t *codes;
    const int64_t *poff;      /* path of series k at pairs poff[k] (capacity n + m - 1) */
    int64_t *paths, *plen;
    double *pcost;
};

template <typename T>
__global__ void dba_paths_kernel(const T *z, const T *vals, DbaArgs a)
{
    using O = DOp<T>;
    extern __shared__ unsigned char smem[];
    const int64_t k = a.k0 + blockIdx.x, dim = a.dim;
    const int64_t sl = a.len[k];
    const int64_t n = a.series_rows ? sl : a.L, m = a.series_rows ? a.L : sl;
    T *buf = reinterpret_cast<T *>(smem); /* 3 diagonals of n values, by row */
    const T *S = vals + a.off[k] * dim;
    const T *R = a.series_rows ? S : z, *Cp = a.series_rows ? z : S; /* rows, columns */
    const int64_t *lo = a.woff ? a.wlo + a.woff[k] : nullptr;
    const int64_t *hi = a.woff ? a.whi + a.woff[k] : nullptr;
    uint8_t *code = a.codes + a.coff[k];
    const T inf = O::inf();
    for (int64_t t = 0; t <= n + m - 2; ++t) {
        T *cur = buf + (t % 3) * n, *p1 = buf + ((t + 2) % 3) * n, *p2 = buf + ((t + 1) % 3) * n;
        const int64_t ilo = t - (m - 1) > 0 ? t - (m - 1) : 0, ihi = t < n - 1 ? t : n - 1;
        for (int64_t i = ilo + threadIdx.x; i <= ihi; i += blockDim.x) {
            const int64_t j = t - i;
            T best = inf;
            uint8_t cd = 0;
            if (!lo || (j >= lo[i] && j < hi[i])) {
                /* cost.h's tsw_cost_sqeuclidean(row point, column point) */
                T c = T(0);
                const T *x = R + i * dim, *y = Cp + j * dim;
                for (int64_t q = 0; q < dim; ++q) {
                    const T d = O::sub(x[q], y[q]);
                    c = O::add(c, O::mul(d, d));
                }
                const T up = i > 0 ? p1[i - 1] : inf, left = j > 0 ? p1[i] : inf;
                const T dg = i > 0 && j > 0 ? p2[i - 1] : inf;
                const T v0 = O::add(dg, c), v1 = O::add(left, c), v2 = O::add(up, c);
                const bool m1 = v1 < v0;
                const T b1 = m1 ? v1 : v0;
                const bool m2 = v2 < b1;
                best = m2 ? v2 : b1;
                if (i == 0 && j == 0)
                    best = c; /* the start: its candidates are all +inf */
                cd = (uint8_t)((m1 ? 1 : 0) | (m2 ? 2 : 0));
            }
            cur[i] = best;
            code[i * m + j] = cd;
        }
        __syncthreads();
    }
    if (threadIdx.x != 0)
        return;
    const T d = buf[((n + m - 2) % 3) * n + (n - 1)];
    a.plen[k] = 0;
    if (!(d < inf)) { /* no finite path: the host asks the CPU why */
        a.pcost[k] = (double)inf;
        return;
    }
    a.pcost[k] = (double)d;
    a.plen[k] = tsw_path_trace_codes_u8(code, n, m, 2u, 1u, a.paths + 2 * a.poff[k]);
}

template <typename T>
int dba_paths(int64_t dim, const tsw_series *z, const tsw_collection *x, int series_rows,
              const int64_t *woff, const int64_t *wlo, const int64_t *whi, int64_t wrows,
              const int64_t *poff, int64_t *paths, int64_t *plen, double *pcost,
              const tsw_exec *ex)
{
    const int64_t count = x->count, L = z->length;
    int64_t rows = 0, nmax = 0;
    double codes_total = 0;
    int64_t *off = (int64_t *)malloc(sizeof(int64_t) * 2 * (size_t)count);
    int64_t *coff = (int64_t *)malloc(sizeof(int64_t) * (size_t)(count + 1));
    if (!off || !coff) {
        free(off);
        free(coff);
        return TSW_ENOMEM;
    }
    int64_t *len = off + count;
    coff[0] = 0;
    for (int64_t k = 0; k < count; ++k) {
        off[k] = tsw__coll_off(x, k);
        len[k] = tsw__coll_len(x, k);
        rows = off[k] + len[k] > rows ? off[k] + len[k] : rows;
        const int64_t n = series_rows ? len[k] : L, m = series_rows ? L : len[k];
        nmax = n > nmax ? n : nmax;
        codes_total += (double)n * (double)m;
        coff[k + 1] = coff[k] + n * m;
    }
    int rc = TSW_OK;
    const size_t smem = 3 * (size_t)nmax * sizeof(T);
    if (smem > 48 * 1024 || codes_total > 8e9) {
        tsw__set_detail("DBA on the GPU takes grids of at most %d rows (here %lld) and 8e9 "
                        "cells in all: use the CPU",
                        (int)(48 * 1024 / (3 * sizeof(T))), (long long)nmax);
        free(off);
        free(coff);
        return TSW_ENOTSUP;
    }
    {
        Call call;
        if ((rc = call.init(ex, false)))
            goto out;
        Plan plan;
        const size_t o_z = plan.add((size_t)(L * dim), sizeof(T));
        const size_t o_v = plan.add((size_t)(rows * dim), sizeof(T));
        const size_t o_ol = plan.add((size_t)(2 * count), sizeof(int64_t));
        const size_t o_wo = plan.add(woff ? (size_t)count : 0, sizeof(int64_t));
        const size_t o_wl = plan.add(woff ? (size_t)(2 * wrows) : 0, sizeof(int64_t));
        const size_t o_co = plan.add((size_t)(count + 1), sizeof(int64_t));
        const size_t o_cd = plan.add((size_t)coff[count], 1);
        const size_t o_po = plan.add((size_t)(count + 1), sizeof(int64_t));
        const size_t o_pa = plan.add((size_t)(2 * poff[count]), sizeof(int64_t));
        const size_t o_pl = plan.add((size_t)count, sizeof(int64_t));
        const size_t o_pc = plan.add((size_t)count, sizeof(double));
        if (plan.overflow) {
            rc = TSW_EOVERFLOW;
            goto out;
        }
        if ((rc = call.alloc(ex, plan.total)))
            goto out;
        DbaArgs a;
        a.L = L;
        a.dim = dim;
        a.series_rows = series_rows;
        a.off = (const int64_t *)call.at(o_ol);
        a.len = a.off + count;
        a.woff = woff ? (const int64_t *)call.at(o_wo) : nullptr;
        a.wlo = woff ? (const int64_t *)call.at(o_wl) : nullptr;
        a.whi = woff ? a.wlo + wrows : nullptr;
        a.coff = (const int64_t *)call.at(o_co);
        a.codes = (uint8_t *)call.at(o_cd);
        a.poff = (const int64_t *)call.at(o_po);
        a.paths = (int64_t *)call.at(o_pa);
        a.plen = (int64_t *)call.at(o_pl);
        a.pcost = (double *)call.at(o_pc);
        const size_t esz = sizeof(T);
        struct {
            size_t o;
            const void *h;
            size_t b;
        } up[] = {{o_z, z->values, (size_t)(L * dim) * esz},
                  {o_v, x->values, (size_t)(rows * dim) * esz},
                  {o_ol, off, sizeof(int64_t) * 2 * (size_t)count},
                  {o_wo, woff, woff ? sizeof(int64_t) * (size_t)count : 0},
                  {o_wl, wlo, woff ? sizeof(int64_t) * (size_t)wrows : 0},
                  {o_wl + (woff ? sizeof(int64_t) * (size_t)wrows : 0), whi,
                   woff ? sizeof(int64_t) * (size_t)wrows : 0},
                  {o_co, coff, sizeof(int64_t) * (size_t)(count + 1)},
                  {o_po, poff, sizeof(int64_t) * (size_t)(count + 1)}};
        for (auto &u : up)
            if (u.b) {
                cudaError_t e = cudaMemcpyAsync(call.at(u.o), u.h, u.b, cudaMemcpyHostToDevice,
                                                call.stream);
                if (e != cudaSuccess) {
                    rc = fail(e, "cudaMemcpyAsync");
                    goto out;
                }
            }
        /* launches of at most 4096 series, progress and cancel polled between them */
        Progress prog{ex, count};
        for (int64_t k0 = 0; k0 < count; k0 += 4096) {
            const int64_t nb = count - k0 < 4096 ? count - k0 : 4096;
            a.k0 = k0;
            dba_paths_kernel<T><<<(unsigned)nb, 128, smem, call.stream>>>(
                (const T *)call.at(o_z), (const T *)call.at(o_v), a);
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                rc = fail(e, "dba_paths_kernel launch");
                goto out;
            }
            if ((rc = prog.report(call, nb)))
                goto out;
        }
        cudaError_t e1 = cudaMemcpyAsync(paths, call.at(o_pa),
                                         sizeof(int64_t) * 2 * (size_t)poff[count],
                                         cudaMemcpyDeviceToHost, call.stream);
        cudaError_t e2 = cudaMemcpyAsync(plen, call.at(o_pl), sizeof(int64_t) * (size_t)count,
                                         cudaMemcpyDeviceToHost, call.stream);
        cudaError_t e3 = cudaMemcpyAsync(pcost, call.at(o_pc), sizeof(double) * (size_t)count,
                                         cudaMemcpyDeviceToHost, call.stream);
        if (e1 != cudaSuccess || e2 != cudaSuccess || e3 != cudaSuccess) {
            rc = fail(e1 != cudaSuccess ? e1 : e2 != cudaSuccess ? e2 : e3, "cudaMemcpyAsync");
            goto out;
        }
        rc = call.sync();
    }
out:
    free(off);
    free(coff);
    return rc;
}

} // namespace

extern "C" int tsw__cuda_dba_paths(tsw_dtype dtype, int64_t dim, const tsw_series *z,
                                   const tsw_collection *x, int series_rows,
                                   const int64_t *woff, const int64_t *wlo, const int64_t *whi,
                                   int64_t wrows, const int64_t *poff, int64_t *paths,
                                   int64_t *plen, double *pcost, const tsw_exec *ex)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    return dtype == TSW_F32 ? dba_paths<float>(dim, z, x, series_rows, woff, wlo, whi, wrows,
                                               poff, paths, plen, pcost, ex)
                            : dba_paths<double>(dim, z, x, series_rows, woff, wlo, whi, wrows,
                                                poff, paths, plen, pcost, ex);
}
