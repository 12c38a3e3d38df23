/*
 * Shapelet discovery on the GPU (tsw_shapelet_search / _top / _distances with device CUDA):
 * the CPU fast path of cpu/shapelet.c, value for value.
 *
 * The CPU evaluates one item (series i, start s) at a time: for each searched series j the
 * dot products acc[u] = sum_{t<l} a[t] b[u+t] of every window start u grow by one term per
 * length l (eq. 5 extended in l), each length of the set is scored from prefix sums (eq. 7)
 * and a 1/std table, and the maximum score gives mind2 (n_lengths, n_series); then each
 * length's order line is sorted and scanned for its best split. Here:
 *
 *   fill kernel: one warp per (item, series j) pair. The paper (004_*.txt, Algorithm 4)
 *     gives a thread per pivot (i, s, l), a block per (i, l), and passes the dot products
 *     between threads along eq. 6's diagonals; here the CPU's sums must be reproduced
 *     exactly and they grow along l, so the unit is an item (all its lengths) against one
 *     series. Lane q owns the starts u = q, q + 32, ... of series j for the whole pair: their
 *     running dot products stay in the warp's slice of shared memory (global scratch when a
 *     series is too long), so the length loop needs no barrier; the candidate's values
 *     a[l-1] are warp-uniform loads and the series' values, prefix sums and 1/std row are
 *     coalesced. After each length of the set the 32 lane maxima are combined with five
 *     shuffles and lane 0 writes mind2. As the paper's persistent blocks, a grid of resident
 *     warps strides over the pairs of a chunk, series-major so that the warps in flight
 *     share series j's data in the caches; memory stays bounded for any N and L.
 *   rank kernel: one warp per candidate (item, length): the order line (sqrt of mind2,
 *     AND/OR with the partner) is sorted by a bitonic network in the warp's shared memory
 *     (padded with +inf to a power of two), then lane 0 runs tsw_shp_best_split, the very
 *     function the CPU runs, on the sorted line.
 *   The host (cpu/shapelet.c) ranks the candidates' splits exactly as on the CPU.
 *
 * Identical results: every value is computed by the same formulas of common/shapelet.h in
 * the same order of operations, in double, without contracted multiply-adds (-fmad=false,
 * CMakeLists.txt; the CPU file has -ffp-contract=off); sqrt and division are correctly
 * rounded on both; the maxima are exact whatever the order; the c log c table comes from the
 * host (no device log). The order inside exact ties of an order line differs from the CPU's
 * sort, which changes nothing: equal values sum the same in any order and no split falls
 * inside a tie.
 *
 * Memory: the standardised data, the 1/std table (ns len nlen doubles, when it takes at most
 * a quarter of the free memory and 4 GiB; else each pair computes its 1/std values), and per
 * chunk of items mind2 (ns doubles per candidate) plus one split per candidate, chunks cut to
 * at most 1 GiB. The caller's cuda_workspace is not used (no *_workspace_size here).
 */
#include <cuda_runtime.h>

#include <stdint.h>
#include <string.h>

#include "common/shapelet.h"
#include "cuda/host.cuh"
#include "internal.h"

/* Largest 1/std table and chunk buffers (bytes), also bounded by a quarter of the free memory
 * each, and the shared memory a block may use for the warps' scratch (48 KiB: no opt-in
 * attribute needed; beyond, global scratch). Variables so that tests/gpu/test_cuda_shapelet.c
 * can force the table-less kernel, many small chunks and the global scratch. */
extern "C" {
double tsw__shapelet_gpu_table_bytes = 4294967296.0;
double tsw__shapelet_gpu_chunk_bytes = 1073741824.0;
int tsw__shapelet_gpu_smem_bytes = 48 * 1024;
}

namespace {

using namespace tsw__cu;

constexpr unsigned kFull = 0xffffffffu;

/* Device view of a standardised collection (cpu/shapelet.c's shp_data). */
struct DData {
    const int64_t *off, *len, *run;
    const double *z, *P, *Q;
    int raw; /* not z-normalised: the collection shifted and scaled as a whole */
};

struct DJob {
    DData d;
    const int64_t *sub, *maxrun, *isd_off, *total, *btot;
    const int32_t *lab;
    const double *partner, *isd, *xlogx, *bnent;
    int64_t ns, ng, gd, minl, step, nlen; /* order lines: ng groups of gd rows */
    double nent;
    int C, logic, ovr; /* ovr: one-vs-rest, btot and bnent as tsw__shp_gpu_job's */
};

/* ---- kernels --------------------------------------------------------------------------- */

/* 1/std of every window of every length of the set of every searched series: the CPU's
 * table (shp_isd_row), row (jj, li) at isd_off[jj] + li len_j. */
__global__ void shp_isd_kernel(DJob g, double *isd)
{
    for (int64_t row = blockIdx.x; row < g.ns * g.nlen; row += gridDim.x) {
        const int64_t jj = row / g.nlen, li = row - jj * g.nlen;
        const int64_t j = g.sub[jj], nj = g.d.len[j], l = g.minl + li * g.step;
        const double *P = g.d.P + g.d.off[j] + j, *Q = g.d.Q + g.d.off[j] + j;
        const int64_t *run = g.d.run + g.d.off[j];
        double *out = isd + g.isd_off[jj] + li * nj;
        for (int64_t u = threadIdx.x; u < nj - l + 1; u += blockDim.x)
            out[u] = tsw_shp_inv_sd(P[u + l] - P[u], Q[u + l] - Q[u], l, run[u] >= l);
    }
}

/*
 * mind2 of a chunk of items: items[4 t ..] = (k, s, nl, first candidate) of item t;
 * candidate c's row is m2[c ns .. c ns + ns). acc: the warp's slice of the dynamic shared
 * memory, or of gacc when gacc is given; stride doubles per warp. RAW (data not
 * z-normalised, never with TABLE): the score dot - 0.5 W of the CPU's raw path (its weight
 * 0.5 and its window sums of squares W in place of ma and the sums, times a weight of 1).
 */
template <bool TABLE, bool RAW>
__global__ void __launch_bounds__(256, TABLE ? 3 : 2)
    shp_fill_kernel(DJob g, const int64_t *items, int64_t n_items, double *m2, double *gacc,
                    int64_t stride)
{
    extern __shared__ double sacc[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    const int64_t gw = (int64_t)blockIdx.x * wpb + warp, nw = (int64_t)gridDim.x * wpb;
    double *acc = gacc ? gacc + gw * stride : sacc + warp * stride;
    /* series-major: the warps in flight share series j's values, sums and 1/std rows */
    for (int64_t pr = gw; pr < n_items * g.ns; pr += nw) {
        const int64_t jj = pr / n_items, t = pr - jj * n_items;
        const int64_t i = g.sub[items[4 * t]], s = items[4 * t + 1], nl = items[4 * t + 2];
        const int64_t j = g.sub[jj], nj = g.d.len[j];
        const double *a = g.d.z + g.d.off[i] + s;
        const double *Pa = g.d.P + g.d.off[i] + i + s, *Qa = g.d.Q + g.d.off[i] + i + s;
        const int64_t ra = g.d.run[g.d.off[i] + s], mr = g.maxrun[jj];
        const double *b = g.d.z + g.d.off[j];
        const double *P = g.d.P + g.d.off[j] + j, *Q = g.d.Q + g.d.off[j] + j;
        const int64_t *run = g.d.run + g.d.off[j];
        const int64_t lmax = g.minl + (nl - 1) * g.step;
        double *out = m2 + items[4 * t + 3] * g.ns + jj;
        /* lane q only ever touches acc[u], u = q mod 32: no barrier between lengths */
        for (int64_t u = lane; u < nj; u += 32)
            acc[u] = 0.0;
        int64_t next = g.minl, li = 0; /* the next length of the set and its index */
        const int64_t lcap = lmax < nj ? lmax : nj; /* longer ones: the series slides */
        for (int64_t l = 1; next <= lcap; ++l) {
            const double al = a[l - 1];
            const double *bl = b + (l - 1);
            const int64_t nu = nj - l + 1;
            if (l != next) {
                for (int64_t u = lane; u < nu; u += 32)
                    acc[u] += al * bl[u];
                continue;
            }
            double ma, sa;
            if (RAW) {
                ma = 0.5;
                sa = Qa[l] - Qa[0];
            } else {
                tsw_shp_stats(Pa[l] - Pa[0], Qa[l] - Qa[0], l, &ma, &sa);
            }
            const double *isd = TABLE ? g.isd + g.isd_off[jj] + li * nj : nullptr;
            double m = -TSW_INF_F64;
            for (int64_t u = lane; u < nu; u += 32) {
                const double dd = acc[u] + al * bl[u];
                acc[u] = dd;
                double c;
                if (RAW) {
                    c = dd - ma * (Q[u + l] - Q[u]);
                } else {
                    const double w = TABLE ? isd[u]
                                           : tsw_shp_inv_sd(P[u + l] - P[u], Q[u + l] - Q[u], l,
                                                            run[u] >= l);
                    c = (dd - ma * (P[u + l] - P[u])) * w;
                }
                m = c > m ? c : m;
            }
            for (int o = 16; o > 0; o >>= 1) {
                const double v = __shfl_xor_sync(kFull, m, o);
                m = v > m ? v : m;
            }
            if (lane == 0)
                out[li * g.ns] = tsw_shp_best_d2(RAW, m, l, sa, ra >= l, mr >= l);
            ++li;
            next += g.step;
        }
        if (next <= lmax) {
            /* lengths above nj: cpu/shapelet.c's shp_fill_short. e[r] (in acc) of the
             * candidate's windows x_i[s + r ..) of nj points against all of series j, then
             * each length's least over r <= l - nj. Lane q computes and reads only its own
             * e[r], r = q mod 32 (no barrier again), keeping the least taken so far */
            const int64_t na = lmax - nj + 1;
            const double Sb = P[nj], SQb = Q[nj];
            const int fb = run[0] >= nj;
            for (int64_t r = lane; r < na; r += 32)
                acc[r] = tsw_shp_pair_d2(RAW, a + r, Pa[r + nj] - Pa[r], Qa[r + nj] - Qa[r],
                                         g.d.run[g.d.off[i] + s + r] >= nj, b, Sb, SQb, fb, nj);
            double m = TSW_INF_F64;
            int64_t r = lane;
            for (int64_t l = next; l <= lmax; l += g.step, ++li) {
                for (; r <= l - nj; r += 32)
                    m = acc[r] < m ? acc[r] : m;
                double v = m;
                for (int o = 16; o > 0; o >>= 1) {
                    const double w = __shfl_xor_sync(kFull, v, o);
                    v = w < v ? w : v;
                }
                if (lane == 0)
                    out[li * g.ns] = v;
            }
        }
    }
}

/* One-vs-rest: the class of candidate c's series, from the chunk's items (k, s, nl, c0),
 * sorted by c0 (the last item with c0 <= c holds it). */
__device__ int32_t shp_item_class(const DJob &g, const int64_t *items, int64_t nit, int64_t c)
{
    int64_t lo = 0, hi = nit - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (items[4 * mid + 3] <= c)
            lo = mid;
        else
            hi = mid - 1;
    }
    return g.lab[items[4 * lo] / g.gd];
}

/*
 * Best split of every candidate c < n_cand of the chunk: res[c]. Group k's entry on the order
 * line is the least of its gd rows (a series' phases under dilation gd), as shp_split takes it.
 * Warp scratch (stride bytes, shared memory or gscr): the line (p2 doubles), left counts
 * (C int64), labels (p2 int32). items (nit): the chunk's, read with one-vs-rest only.
 */
__global__ void __launch_bounds__(256, 4)
    shp_rank_kernel(DJob g, const double *m2, int64_t n_cand, int64_t p2, tsw__shp_split *res,
                    unsigned char *gscr, int64_t stride, const int64_t *items, int64_t nit)
{
    extern __shared__ double sscr[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    const int64_t gw = (int64_t)blockIdx.x * wpb + warp, nw = (int64_t)gridDim.x * wpb;
    unsigned char *base = gscr ? gscr + gw * stride : (unsigned char *)sscr + warp * stride;
    double *v = (double *)base;
    int64_t *left = (int64_t *)(v + p2);
    int32_t *lb = (int32_t *)(left + g.C);
    for (int64_t c = gw; c < n_cand; c += nw) {
        const double *row = m2 + c * g.ns;
        const int32_t own = g.ovr ? shp_item_class(g, items, nit, c) : -1;
        for (int64_t k = lane; k < p2; k += 32) {
            double x = TSW_INF_F64; /* padding: after every distance (all <= 2 or partner) */
            int32_t y = 0;
            if (k < g.ng) {
                x = sqrt(tsw_shp_group_d2(row, k, g.gd));
                if (g.logic == TSW_LOGIC_AND)
                    x = TSW_MAX(x, g.partner[k]);
                else if (g.logic == TSW_LOGIC_OR)
                    x = TSW_MIN(x, g.partner[k]);
                y = tsw_shp_line_label(g.lab[k], own);
            }
            v[k] = x;
            lb[k] = y;
        }
        __syncwarp();
        /* bitonic sort, ascending: in each step the pairs (k, k ^ h) are disjoint, one
         * lane per pair */
        for (int64_t size = 2; size <= p2; size <<= 1) {
            for (int64_t h = size >> 1; h > 0; h >>= 1) {
                for (int64_t k = lane; k < p2; k += 32) {
                    const int64_t q = k ^ h;
                    if (q <= k)
                        continue;
                    const double x = v[k], y = v[q];
                    if ((k & size) == 0 ? x > y : x < y) {
                        v[k] = y;
                        v[q] = x;
                        const int32_t t = lb[k];
                        lb[k] = lb[q];
                        lb[q] = t;
                    }
                }
                __syncwarp();
            }
        }
        if (lane == 0) {
            tsw__shp_split r;
            r.found = tsw_shp_line_split(v, lb, g.ng, own, g.C, g.total, g.nent, g.btot, g.bnent,
                                         g.xlogx, left, &r.gain, &r.gap, &r.threshold);
            res[c] = r;
        }
        __syncwarp();
    }
}

/* Distances of shapelet k to series j, one warp per pair: the CPU's fast branch (dot product
 * summed in order, tsw_shp_d2), the first best start on ties. */
__global__ void shp_dist_kernel(DData S, DData X, int64_t nsh, int64_t nx, double *dist,
                                int64_t *pos, const double *thr, int64_t *count)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wpb = blockDim.x >> 5;
    const int64_t gw = (int64_t)blockIdx.x * wpb + warp, nw = (int64_t)gridDim.x * wpb;
    for (int64_t pr = gw; pr < nx * nsh; pr += nw) {
        const int64_t j = pr / nsh, k = pr - j * nsh;
        /* cpu/shapelet.c's shp_feature_pair: windows of m = min(l, n) points of the longer
         * of the two against all of the shorter */
        const int64_t l = S.len[k], nj = X.len[j], m = l < nj ? l : nj;
        const int64_t nu = (l < nj ? nj : l) - m + 1;
        const double *a = S.z + S.off[k], *Pa = S.P + S.off[k] + k, *Qa = S.Q + S.off[k] + k;
        const int64_t *ra = S.run + S.off[k];
        const double *b = X.z + X.off[j];
        const double *P = X.P + X.off[j] + j, *Q = X.Q + X.off[j] + j;
        const int64_t *rb = X.run + X.off[j];
        double best = TSW_INF_F64;
        const double th = thr ? thr[k] : 0.0;
        int64_t where = 0, near = 0;
        for (int64_t u = lane; u < nu; u += 32) {
            const int64_t ua = nj < l ? u : 0, ub = nj < l ? 0 : u;
            const double v = tsw_shp_pair_d2(S.raw, a + ua, Pa[ua + m] - Pa[ua],
                                             Qa[ua + m] - Qa[ua], ra[ua] >= m, b + ub,
                                             P[ub + m] - P[ub], Q[ub + m] - Q[ub], rb[ub] >= m,
                                             m);
            if (v < best) {
                best = v;
                where = u;
            }
            if (thr)
                near += sqrt(v) <= th; /* as the CPU: the same d^2 */
        }
        for (int o = 16; o > 0; o >>= 1) {
            const double ob = __shfl_xor_sync(kFull, best, o);
            const int64_t ow = __shfl_xor_sync(kFull, where, o);
            near += __shfl_xor_sync(kFull, near, o);
            if (ob < best || (ob == best && ow < where)) {
                best = ob;
                where = ow;
            }
        }
        if (lane == 0) {
            dist[pr] = sqrt(best);
            if (pos)
                pos[pr] = nj < l ? -where : where;
            if (count)
                count[pr] = near;
        }
    }
}

/* ---- host -------------------------------------------------------------------------------- */

/* Host buffers freed on every return path. */
struct HostBufs {
    void *p[4] = {nullptr, nullptr, nullptr, nullptr};
    ~HostBufs()
    {
        for (void *q : p)
            tsw__free(q);
    }
};

int copy_in(Call &call, void *dst, const void *src, size_t bytes, const char *what)
{
    if (bytes == 0)
        return TSW_OK;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, call.stream), what);
    return TSW_OK;
}

int copy_out(Call &call, void *dst, const void *src, size_t bytes, const char *what)
{
    if (bytes == 0)
        return TSW_OK;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, call.stream), what);
    return TSW_OK;
}

/* Resident blocks of a kernel per SM (at least 1). */
template <typename K> int64_t resident(K kernel, int threads, size_t smem)
{
    int nb = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel, threads, smem) !=
            cudaSuccess ||
        nb < 1) {
        (void)cudaGetLastError();
        nb = 1;
    }
    return nb;
}

/* Warps per block and whether the per-warp scratch (bytes) goes to global memory: up to 8
 * warps whose scratch fits 48 KiB of shared memory, else 4 warps per block over global
 * scratch. */
void warp_layout(size_t per_warp, int *wpb, bool *global)
{
    const size_t cap = (size_t)(tsw__shapelet_gpu_smem_bytes < 48 * 1024
                                    ? tsw__shapelet_gpu_smem_bytes
                                    : 48 * 1024);
    *global = per_warp > cap;
    *wpb = 8;
    while (!*global && *wpb > 1 && (size_t)*wpb * per_warp > cap)
        *wpb >>= 1;
    if (*global)
        *wpb = 4;
}

/* The job's device pieces (offsets in the call's block). */
struct DataPieces {
    size_t off, len, run, z, P, Q;
};

DataPieces plan_data(Plan &plan, const tsw__shp_gpu_data *d)
{
    DataPieces p;
    p.off = plan.add((size_t)d->count, sizeof(int64_t));
    p.len = plan.add((size_t)d->count, sizeof(int64_t));
    p.run = plan.add((size_t)d->rows, sizeof(int64_t));
    p.z = plan.add((size_t)d->rows, sizeof(double));
    p.P = plan.add((size_t)(d->rows + d->count), sizeof(double));
    p.Q = plan.add((size_t)(d->rows + d->count), sizeof(double));
    return p;
}

int upload_data(Call &call, const DataPieces &p, const tsw__shp_gpu_data *d, DData *out)
{
    const size_t n = (size_t)d->count, r = (size_t)d->rows;
    int rc;
    if ((rc = copy_in(call, call.at(p.off), d->off, n * 8, "cudaMemcpyAsync (offsets)")) ||
        (rc = copy_in(call, call.at(p.len), d->len, n * 8, "cudaMemcpyAsync (lengths)")) ||
        (rc = copy_in(call, call.at(p.run), d->run, r * 8, "cudaMemcpyAsync (runs)")) ||
        (rc = copy_in(call, call.at(p.z), d->z, r * 8, "cudaMemcpyAsync (values)")) ||
        (rc = copy_in(call, call.at(p.P), d->P, (r + n) * 8, "cudaMemcpyAsync (sums)")) ||
        (rc = copy_in(call, call.at(p.Q), d->Q, (r + n) * 8, "cudaMemcpyAsync (squares)")))
        return rc;
    out->off = (const int64_t *)call.at(p.off);
    out->len = (const int64_t *)call.at(p.len);
    out->run = (const int64_t *)call.at(p.run);
    out->z = (const double *)call.at(p.z);
    out->P = (const double *)call.at(p.P);
    out->Q = (const double *)call.at(p.Q);
    out->raw = d->raw;
    return TSW_OK;
}

size_t free_memory()
{
    size_t free_b = 0, total_b = 0;
    if (mem_info(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        free_b = (size_t)1 << 30;
    }
    return free_b;
}

/* Lengths of the set usable at start s of a series of length n (cpu/shapelet.c's
 * shp_nlen_at). */
int64_t nlen_at(const tsw__shp_gpu_job *J, int64_t n, int64_t s)
{
    int64_t room = n - s, lmax = room < J->maxl ? room : J->maxl;
    return lmax < J->minl ? 0 : (lmax - J->minl) / J->step + 1;
}

} // namespace

extern "C" int tsw__cuda_shapelet_run(const tsw__shp_gpu_job *J, const tsw_exec *ex,
                                      tsw__shp_visit visit, void *ctx)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    tsw_exec own = *ex; /* no workspace: its size could not be known in advance */
    own.cuda_workspace = nullptr;
    own.cuda_workspace_bytes = 0;
    Call call;
    int rc;
    if ((rc = call.init(&own, false)))
        return rc;
    const int64_t ns = J->ns, ng = J->ng, nlen = J->nlen, C = J->C;
    int64_t p2 = 2, maxlen = 1;
    while (p2 < ng)
        p2 <<= 1;
    double table_cells = 0.0;
    for (int64_t k = 0; k < ns; ++k) {
        const int64_t n = J->d.len[J->sub[k]];
        maxlen = n > maxlen ? n : maxlen;
        table_cells += (double)n * (double)nlen;
    }

    /* budgets: a quarter of the free memory for the table, another for the chunk buffers */
    const double quarter = (double)free_memory() / 4;
    const double tb = tsw__shapelet_gpu_table_bytes, cb0 = tsw__shapelet_gpu_chunk_bytes;
    const bool table = !J->d.raw && table_cells * 8 <= (quarter < tb ? quarter : tb);
    const double per_cand = (double)ns * 8 + sizeof(tsw__shp_split);
    const double cb = quarter < cb0 ? quarter : cb0;
    int64_t max_cand = (int64_t)(cb / per_cand), all_cand = 0;
    for (int64_t k = J->k0; k < J->k1; ++k)
        for (int64_t s = 0, n = J->d.len[J->sub[k]]; s < n; ++s)
            all_cand += nlen_at(J, n, s);
    max_cand = max_cand < all_cand ? max_cand : all_cand;
    if (max_cand < nlen)
        max_cand = nlen; /* one item at least */
    const int64_t cap = max_cand; /* items per chunk: each has at least one candidate */

    const int sms = sm_count(call.device);
    const size_t acc_stride = (size_t)(maxlen + 1) / 2 * 2;
    int fill_wpb, rank_wpb;
    bool fill_global, rank_global;
    warp_layout(acc_stride * 8, &fill_wpb, &fill_global);
    const size_t scr_stride = ((size_t)p2 * 12 + (size_t)C * 8 + 15) / 16 * 16;
    warp_layout(scr_stride, &rank_wpb, &rank_global);
    const size_t fill_smem = fill_global ? 0 : (size_t)fill_wpb * acc_stride * 8;
    const size_t rank_smem = rank_global ? 0 : (size_t)rank_wpb * scr_stride;
    auto *fill_kernel = J->d.raw ? shp_fill_kernel<false, true>
                        : table  ? shp_fill_kernel<true, false>
                                 : shp_fill_kernel<false, false>;
    int64_t fill_grid = resident(fill_kernel, fill_wpb * 32, fill_smem) * sms;
    int64_t rank_grid = resident(shp_rank_kernel, rank_wpb * 32, rank_smem) * sms;
    /* global scratch: at most 512 MiB each */
    if (fill_global && fill_grid * fill_wpb * acc_stride * 8 > ((size_t)512 << 20))
        fill_grid = (int64_t)(((size_t)512 << 20) / (acc_stride * 8) / fill_wpb);
    if (rank_global && rank_grid * rank_wpb * scr_stride > ((size_t)512 << 20))
        rank_grid = (int64_t)(((size_t)512 << 20) / scr_stride / rank_wpb);
    fill_grid = fill_grid > 0 ? fill_grid : 1;
    rank_grid = rank_grid > 0 ? rank_grid : 1;

    Plan plan;
    DataPieces dp = plan_data(plan, &J->d);
    const size_t p_sub = plan.add((size_t)ns, sizeof(int64_t));
    const size_t p_maxrun = plan.add((size_t)ns, sizeof(int64_t));
    const size_t p_isd_off = plan.add((size_t)ns, sizeof(int64_t));
    const size_t p_total = plan.add((size_t)C, sizeof(int64_t));
    const size_t p_lab = plan.add((size_t)ng, sizeof(int32_t));
    const size_t p_partner = plan.add((size_t)ng, sizeof(double));
    const size_t p_xlogx = plan.add((size_t)ng + 1, sizeof(double));
    const size_t p_btot = plan.add((size_t)C * 2, sizeof(int64_t));
    const size_t p_bnent = plan.add((size_t)C, sizeof(double));
    const size_t p_isd = plan.add(table ? (size_t)table_cells : 0, sizeof(double));
    const size_t p_items = plan.add((size_t)cap * 4, sizeof(int64_t));
    const size_t p_m2 = plan.add((size_t)max_cand * (size_t)ns, sizeof(double));
    const size_t p_res = plan.add((size_t)max_cand, sizeof(tsw__shp_split));
    const size_t p_gacc =
        plan.add(fill_global ? (size_t)fill_grid * fill_wpb * acc_stride : 0, sizeof(double));
    const size_t p_gscr = plan.add(rank_global ? (size_t)rank_grid * rank_wpb * scr_stride : 0, 1);
    if (plan.overflow)
        return TSW_EOVERFLOW;

    HostBufs hb;
    int64_t *hmaxrun = (int64_t *)tsw__malloc((size_t)ns * 2 * sizeof(int64_t));
    int64_t *hitems = (int64_t *)tsw__malloc((size_t)cap * 4 * sizeof(int64_t));
    tsw__shp_split *hres = (tsw__shp_split *)tsw__malloc((size_t)max_cand * sizeof(tsw__shp_split));
    hb.p[0] = hmaxrun;
    hb.p[1] = hitems;
    hb.p[2] = hres;
    if (!hmaxrun || !hitems || !hres)
        return TSW_ENOMEM;
    int64_t *hisd_off = hmaxrun + ns;
    int64_t o = 0;
    for (int64_t k = 0; k < ns; ++k) {
        const int64_t j = J->sub[k], n = J->d.len[j];
        int64_t m = 0;
        for (int64_t u = 0; u < n; ++u)
            m = J->d.run[J->d.off[j] + u] > m ? J->d.run[J->d.off[j] + u] : m;
        hmaxrun[k] = m; /* a constant window of length l exists iff m >= l */
        hisd_off[k] = o;
        o += n * nlen;
    }

    if ((rc = call.alloc(&own, plan.total)))
        return rc;
    DJob g;
    memset(&g, 0, sizeof(g));
    if ((rc = upload_data(call, dp, &J->d, &g.d)) ||
        (rc = copy_in(call, call.at(p_sub), J->sub, (size_t)ns * 8, "cudaMemcpyAsync (subset)")) ||
        (rc = copy_in(call, call.at(p_maxrun), hmaxrun, (size_t)ns * 8, "cudaMemcpyAsync (runs)")) ||
        (rc = copy_in(call, call.at(p_isd_off), hisd_off, (size_t)ns * 8,
                      "cudaMemcpyAsync (table offsets)")) ||
        (rc = copy_in(call, call.at(p_total), J->total, (size_t)C * 8, "cudaMemcpyAsync (counts)")) ||
        (rc = copy_in(call, call.at(p_lab), J->lab, (size_t)ng * 4, "cudaMemcpyAsync (labels)")) ||
        (J->partner && (rc = copy_in(call, call.at(p_partner), J->partner, (size_t)ng * 8,
                                     "cudaMemcpyAsync (partner)"))) ||
        (rc = copy_in(call, call.at(p_xlogx), J->xlogx, ((size_t)ng + 1) * 8,
                      "cudaMemcpyAsync (xlogx)")) ||
        (J->ovr && ((rc = copy_in(call, call.at(p_btot), J->btot, (size_t)C * 16,
                                  "cudaMemcpyAsync (one-vs-rest counts)")) ||
                    (rc = copy_in(call, call.at(p_bnent), J->bnent, (size_t)C * 8,
                                  "cudaMemcpyAsync (one-vs-rest entropies)")))))
        return rc;
    g.sub = (const int64_t *)call.at(p_sub);
    g.maxrun = (const int64_t *)call.at(p_maxrun);
    g.isd_off = (const int64_t *)call.at(p_isd_off);
    g.total = (const int64_t *)call.at(p_total);
    g.lab = (const int32_t *)call.at(p_lab);
    g.partner = J->partner ? (const double *)call.at(p_partner) : nullptr;
    g.xlogx = (const double *)call.at(p_xlogx);
    g.btot = (const int64_t *)call.at(p_btot);
    g.bnent = (const double *)call.at(p_bnent);
    g.ovr = J->ovr;
    g.isd = table ? (const double *)call.at(p_isd) : nullptr;
    g.ns = ns;
    g.ng = ng;
    g.gd = J->gd;
    g.minl = J->minl;
    g.step = J->step;
    g.nlen = nlen;
    g.nent = J->nent;
    g.C = (int)C;
    g.logic = J->logic;
    if (table) {
        const int64_t rows = ns * nlen;
        shp_isd_kernel<<<(unsigned)(rows < 65536 ? rows : 65536), 128, 0, call.stream>>>(
            g, (double *)call.at(p_isd));
        TSW_CU(cudaGetLastError(), "shp_isd_kernel launch");
    }
    int64_t *ditems = (int64_t *)call.at(p_items);
    double *m2 = (double *)call.at(p_m2);
    tsw__shp_split *dres = (tsw__shp_split *)call.at(p_res);
    double *gacc = fill_global ? (double *)call.at(p_gacc) : nullptr;
    unsigned char *gscr = rank_global ? (unsigned char *)call.at(p_gscr) : nullptr;

    /* chunks of consecutive items (k, s) with at least one length, k in [k0, k1) */
    int64_t k = J->k0, s = 0;
    while (k < J->k1) {
        int64_t nit = 0, ncand = 0;
        while (k < J->k1) {
            const int64_t n = J->d.len[J->sub[k]], nl = nlen_at(J, n, s);
            if (nl > 0) {
                if (ncand + nl > max_cand)
                    break;
                int64_t *it = hitems + 4 * nit++;
                it[0] = k;
                it[1] = s;
                it[2] = nl;
                it[3] = ncand;
                ncand += nl;
            }
            if (++s >= n) {
                ++k;
                s = 0;
            }
        }
        if (nit == 0)
            break;
        if ((rc = copy_in(call, ditems, hitems, (size_t)nit * 4 * 8, "cudaMemcpyAsync (items)")))
            return rc;
        const int64_t pairs = nit * ns;
        int64_t fb = (pairs + fill_wpb - 1) / fill_wpb;
        fb = fb < fill_grid ? fb : fill_grid;
        fill_kernel<<<(unsigned)fb, fill_wpb * 32, fill_smem, call.stream>>>(
            g, ditems, nit, m2, gacc, (int64_t)acc_stride);
        TSW_CU(cudaGetLastError(), "shp_fill_kernel launch");
        int64_t rb = (ncand + rank_wpb - 1) / rank_wpb;
        rb = rb < rank_grid ? rb : rank_grid;
        shp_rank_kernel<<<(unsigned)rb, rank_wpb * 32, rank_smem, call.stream>>>(
            g, m2, ncand, p2, dres, gscr, (int64_t)scr_stride, ditems, nit);
        TSW_CU(cudaGetLastError(), "shp_rank_kernel launch");
        if ((rc = copy_out(call, hres, dres, (size_t)ncand * sizeof(tsw__shp_split),
                           "cudaMemcpyAsync (splits)")) ||
            (rc = call.sync()))
            return rc;
        if ((rc = visit(ctx, nit, hitems, hres)))
            return rc;
    }
    return TSW_OK;
}

extern "C" int tsw__cuda_shapelet_distances(const tsw__shp_gpu_data *S,
                                            const double *thresholds,
                                            const tsw__shp_gpu_data *X, double *dist,
                                            int64_t *pos, int64_t *count, const tsw_exec *ex)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    own.cuda_workspace_bytes = 0;
    Call call;
    int rc;
    if ((rc = call.init(&own, false)))
        return rc;
    const int64_t nsh = S->count, nx = X->count;
    size_t cells;
    if (tsw__mul_size((size_t)nsh, (size_t)nx, &cells))
        return TSW_EOVERFLOW;
    Plan plan;
    DataPieces ps = plan_data(plan, S), px = plan_data(plan, X);
    const size_t p_dist = plan.add(cells, sizeof(double));
    const size_t p_pos = plan.add(pos ? cells : 0, sizeof(int64_t));
    const size_t p_cnt = plan.add(count ? cells : 0, sizeof(int64_t));
    const size_t p_thr = plan.add(count ? (size_t)nsh : 0, sizeof(double));
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;
    DData ds, dx;
    if ((rc = upload_data(call, ps, S, &ds)) || (rc = upload_data(call, px, X, &dx)) ||
        (count && (rc = copy_in(call, call.at(p_thr), thresholds, (size_t)nsh * sizeof(double),
                                "cudaMemcpyAsync (thresholds)"))))
        return rc;
    constexpr int wpb = 8;
    int64_t grid = resident(shp_dist_kernel, wpb * 32, 0) * sm_count(call.device);
    int64_t nb = ((int64_t)cells + wpb - 1) / wpb;
    nb = nb < grid ? nb : grid;
    shp_dist_kernel<<<(unsigned)(nb > 0 ? nb : 1), wpb * 32, 0, call.stream>>>(
        ds, dx, nsh, nx, (double *)call.at(p_dist), pos ? (int64_t *)call.at(p_pos) : nullptr,
        count ? (const double *)call.at(p_thr) : nullptr,
        count ? (int64_t *)call.at(p_cnt) : nullptr);
    TSW_CU(cudaGetLastError(), "shp_dist_kernel launch");
    if ((rc = copy_out(call, dist, call.at(p_dist), cells * 8, "cudaMemcpyAsync (dist)")) ||
        (pos && (rc = copy_out(call, pos, call.at(p_pos), cells * 8, "cudaMemcpyAsync (pos)"))) ||
        (count &&
         (rc = copy_out(call, count, call.at(p_cnt), cells * 8, "cudaMemcpyAsync (count)"))))
        return rc;
    return call.sync();
}
