/*
 * CUDA subsequence search (tsw_search on the GPU): the candidate windows, which the
 * dispatch then recomputes exactly and chooses from on the CPU (tsw__search_exact), so both
 * devices return the same matches.
 *
 * Per chunk of windows of the series, in double precision:
 *   lb_kernel    one thread a window: its mean and std per channel (one pass, shifted by
 *                the window's first value; a constant channel is 0), LB_Kim's rings and
 *                LB_Keogh on the query's envelope; each block's smallest bound is a seed
 *   dtw_kernel   DTW of a list of windows (the seeds; then the survivors), banded, rows
 *                abandoned once above the threshold; the DP rows are interleaved across
 *                threads in global scratch so that their accesses coalesce
 *   select       the windows whose bound is at most the threshold, appended by atomics
 * The threshold is the (2k-1)-th greedy pick of the windows computed so far (cpu/search.c
 * says why that is safe with an exclusion zone), raised by common/search.h's slack; it only falls from chunk
 * to chunk. Every window whose DTW is at most the final threshold is a candidate.
 */
#include "host.cuh"
#include "common/cost.h"
#include "common/recurrence.h"
#include "common/search.h"

#include <stdlib.h>

using namespace tsw__cu;

namespace {

constexpr int kThreads = 256;

struct LbArgs {
    const double *x; /* chunk values (P, dim) */
    int64_t nw, n, dim, r;
    const double *qz, *qlo, *qhi; /* (n, dim) */
    int cost, znorm;
    double *lb;      /* (nw) max(LB_Kim, LB_Keogh) */
    float *kim;      /* (nw) LB_Kim alone (stats) */
    double *mu, *inv; /* (nw, dim) */
    int64_t *seed;   /* (gridDim.x) the block's window of least bound */
};

/* cost of query point i to window point j (z-normalised on the fly) */
__device__ __forceinline__ double cell(const LbArgs &a, int64_t w, int64_t i, int64_t j)
{
    double acc = 0;
    for (int64_t c = 0; c < a.dim; ++c) {
        double z = (a.x[(w + j) * a.dim + c] - a.mu[w * a.dim + c]) * a.inv[w * a.dim + c];
        acc += tsw_cost_term_f64(a.cost, a.qz[i * a.dim + c] - z);
    }
    return tsw_cost_total_f64(a.cost, acc);
}

__global__ void lb_kernel(LbArgs a)
{
    __shared__ double sb[kThreads];
    __shared__ int64_t si[kThreads];
    const int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double lbv = HUGE_VAL;
    if (w < a.nw) {
        const int64_t n = a.n, dim = a.dim;
        for (int64_t c = 0; c < dim; ++c) {
            double mu = 0, inv = 1;
            if (a.znorm) {
                const double x0 = a.x[w * dim + c];
                double s1 = 0, s2 = 0, mn = x0, mx = x0;
                for (int64_t j = 0; j < n; ++j) {
                    double v = a.x[(w + j) * dim + c], d = v - x0;
                    s1 += d;
                    s2 += d * d;
                    mn = fmin(mn, v);
                    mx = fmax(mx, v);
                }
                double m = s1 / (double)n, var = s2 / (double)n - m * m;
                if (mn == mx) {
                    mu = x0;
                    inv = 0;
                } else {
                    mu = x0 + m;
                    inv = var > 0 ? 1.0 / sqrt(var) : 0.0;
                }
            }
            a.mu[w * dim + c] = mu;
            a.inv[w * dim + c] = inv;
        }
        /* LB_Kim: rings 0 .. R-1 at both ends, within the band */
        double kim = 0;
        if (n == 1) {
            kim = cell(a, w, 0, 0);
        } else {
            const int64_t R = n / 2 < 3 ? n / 2 : 3;
            for (int64_t t = 0; t < R; ++t)
                for (int back = 0; back < 2; ++back) {
                    double best = HUGE_VAL;
                    for (int64_t u = 0; u <= t; ++u) {
                        if (t - u > a.r)
                            continue;
                        int64_t i1 = t, j1 = u, i2 = u, j2 = t;
                        if (back) {
                            i1 = n - 1 - i1, j1 = n - 1 - j1, i2 = n - 1 - i2, j2 = n - 1 - j2;
                        }
                        best = fmin(best, cell(a, w, i1, j1));
                        if (u < t)
                            best = fmin(best, cell(a, w, i2, j2));
                    }
                    kim += best;
                }
        }
        /* LB_Keogh: each window point's cost to the query's envelope */
        double keogh = 0;
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t c = 0; c < dim; ++c) {
                double z = (a.x[(w + j) * dim + c] - a.mu[w * dim + c]) * a.inv[w * dim + c];
                double e = fmax(z - a.qhi[j * dim + c], 0.0) + fmax(a.qlo[j * dim + c] - z, 0.0);
                acc += tsw_cost_term_f64(a.cost, e);
            }
            keogh += tsw_cost_total_f64(a.cost, acc);
        }
        lbv = fmax(kim, keogh);
        a.lb[w] = lbv;
        a.kim[w] = (float)kim;
    }
    sb[threadIdx.x] = lbv;
    si[threadIdx.x] = w;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            double o = sb[threadIdx.x + s];
            int64_t oi = si[threadIdx.x + s];
            if (o < sb[threadIdx.x] || (o == sb[threadIdx.x] && oi < si[threadIdx.x])) {
                sb[threadIdx.x] = o;
                si[threadIdx.x] = oi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0)
        a.seed[blockIdx.x] = si[0] < a.nw ? si[0] : 0;
}

struct DtwArgs {
    const double *x;
    int64_t n, dim, r;
    const double *qz;
    const double *mu, *inv;
    int cost;
    const int64_t *list; /* windows */
    int64_t count;
    double thr;          /* abandon above */
    double *out;         /* (count) */
    double *scratch;     /* 2 n B, interleaved: row value j of thread t at j B + t */
    int64_t B;
};

__global__ void dtw_kernel(DtwArgs a)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.count)
        return;
    const int64_t w = a.list[t], n = a.n, dim = a.dim, B = a.B;
    double *prev = a.scratch + t, *cur = a.scratch + n * B + t;
    double result = HUGE_VAL;
    bool alive = true;
    for (int64_t i = 0; i < n && alive; ++i) {
        const int64_t lo = i - a.r > 0 ? i - a.r : 0, hi = i + a.r + 1 < n ? i + a.r + 1 : n;
        double left = HUGE_VAL, rowmin = HUGE_VAL;
        for (int64_t j = lo; j < hi; ++j) {
            double acc = 0;
            for (int64_t c = 0; c < dim; ++c) {
                double z = (a.x[(w + j) * dim + c] - a.mu[w * dim + c]) * a.inv[w * dim + c];
                acc += tsw_cost_term_f64(a.cost, a.qz[i * dim + c] - z);
            }
            double diag = HUGE_VAL, up = HUGE_VAL;
            if (i == 0) {
                diag = j == 0 ? 0.0 : HUGE_VAL;
            } else {
                diag = j - 1 >= (i - 1 - a.r) && j >= 1 ? prev[(j - 1) * B] : HUGE_VAL;
                up = j <= i - 1 + a.r ? prev[j * B] : HUGE_VAL;
            }
            double v = tsw_dtw_cell_f64(tsw_cost_total_f64(a.cost, acc), diag, up, left);
            cur[j * B] = v;
            left = v;
            rowmin = fmin(rowmin, v);
        }
        if (rowmin > a.thr)
            alive = false;
        double *tmp = prev;
        prev = cur;
        cur = tmp;
    }
    if (alive)
        result = prev[(n - 1) * B];
    a.out[t] = result;
}

struct SelArgs {
    const double *lb;
    const float *kim;
    int64_t nw;
    double thr;
    int64_t *list;
    unsigned long long *count; /* [0] survivors, [1] pruned by LB_Kim */
    int64_t cap;
};

__global__ void select_kernel(SelArgs a)
{
    const int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= a.nw)
        return;
    if (a.lb[w] <= a.thr) {
        unsigned long long k = atomicAdd(&a.count[0], 1ull);
        if ((int64_t)k < a.cap)
            a.list[k] = w;
    } else if ((double)a.kim[w] > a.thr) {
        atomicAdd(&a.count[1], 1ull);
    }
}

/* float32 values (count) to double: a float32 series' chunk */
__global__ void widen_kernel(const float *in, int64_t count, double *out)
{
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < count;
         t += (int64_t)gridDim.x * blockDim.x)
        out[t] = (double)in[t];
}

/* *flag |= 1 where a value is NaN or infinite (x - x is then NaN, else 0) */
template <typename T>
__global__ void finite_kernel(const T *v, int64_t count, int *flag)
{
    int bad = 0;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < count;
         t += (int64_t)gridDim.x * blockDim.x)
        bad |= !(v[t] - v[t] == (T)0);
    if (__syncthreads_or(bad) && threadIdx.x == 0)
        atomicOr(flag, 1);
}

/* The candidate windows' values as double, back to back: window i (start cand[i], len
 * points of dim channels) at out[i len dim ..] */
template <typename T>
__global__ void gather_kernel(const T *v, const int64_t *cand, int64_t ncand, int64_t len,
                              int64_t dim, double *out)
{
    const int64_t per = len * dim;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < ncand * per;
         t += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = t / per, u = t - i * per;
        out[t] = (double)v[cand[i] * dim + u];
    }
}

struct Hit {
    double d;
    int64_t start;
};

int hit_cmp(const void *pa, const void *pb)
{
    const Hit *a = (const Hit *)pa, *b = (const Hit *)pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

int i64_cmp(const void *pa, const void *pb)
{
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    return (a > b) - (a < b);
}

/* The hits kept so far (host memory through tsw__malloc: no C++ runtime). */
struct Pool {
    Hit *h = nullptr;
    int64_t n = 0, cap = 0;
    int64_t *picks = nullptr;
    double slack_abs = 0; /* common/search.h */
    ~Pool()
    {
        tsw__free(h);
        tsw__free(picks);
    }
    int push(double d, int64_t start)
    {
        if (n == cap) {
            int64_t nc = cap ? 2 * cap : 1024;
            Hit *nh = (Hit *)tsw__malloc((size_t)nc * sizeof(Hit));
            if (!nh)
                return TSW_ENOMEM;
            if (n)
                memcpy(nh, h, (size_t)n * sizeof(Hit));
            tsw__free(h);
            h = nh;
            cap = nc;
        }
        h[n].d = d;
        h[n].start = start;
        ++n;
        return TSW_OK;
    }
    /* The threshold: the (2k-1)-th greedy pick, +inf without one; keeps only what can still
     * be a candidate. */
    double tau(int64_t k, int64_t excl)
    {
        /* the greedy picks come from the front of the sorted hits: sort the smallest M
         * only (a selection first), all of them when those give too few picks */
        const int64_t want = 2 * k - 1;
        int64_t m = 64 * want + 1024;
        double t = HUGE_VAL;
        for (;;) {
            if (m >= n) {
                m = n;
                qsort(h, (size_t)n, sizeof(Hit), hit_cmp);
            } else {
                select(m);
                qsort(h, (size_t)m, sizeof(Hit), hit_cmp);
            }
            int64_t np = 0;
            for (int64_t i = 0; i < m && np < want; ++i) {
                bool ok = true;
                for (int64_t q = 0; q < np && ok; ++q)
                    ok = !(h[i].start - picks[q] < excl && picks[q] - h[i].start < excl);
                if (ok) {
                    picks[np++] = h[i].start;
                    if (np == want)
                        t = h[i].d;
                }
            }
            if (np == want || m == n)
                break;
            m *= 4;
        }
        if (t < HUGE_VAL) { /* keep what can still be a candidate (the front is sorted) */
            const double lim = tsw_search_limit(t, slack_abs);
            int64_t keep = 0;
            for (int64_t i = 0; i < n; ++i)
                if (h[i].d <= lim)
                    h[keep++] = h[i];
            n = keep;
        }
        return t;
    }
    /* Moves the m smallest hits (by hit_cmp) to the front, in any order: quickselect. */
    void select(int64_t m)
    {
        int64_t lo = 0, hi = n - 1;
        while (lo < hi) {
            const Hit piv = h[lo + (hi - lo) / 2];
            int64_t i = lo, j = hi;
            while (i <= j) {
                while (hit_cmp(&h[i], &piv) < 0)
                    ++i;
                while (hit_cmp(&h[j], &piv) > 0)
                    --j;
                if (i <= j) {
                    Hit tmp = h[i];
                    h[i] = h[j];
                    h[j] = tmp;
                    ++i;
                    --j;
                }
            }
            if (m - 1 <= j)
                hi = j;
            else if (m - 1 >= i)
                lo = i;
            else
                break;
        }
    }
};

/* host scratch through tsw__malloc, freed at scope exit */
struct HostBuf {
    void *p = nullptr;
    ~HostBuf() { tsw__free(p); }
};

/* A second stream for the next chunk's copy from host memory, so that it runs while the
 * call's stream computes the current chunk (destroyed at scope exit). */
struct CopyStream {
    cudaStream_t s = nullptr;
    cudaEvent_t done[2] = {nullptr, nullptr};
    ~CopyStream()
    {
        for (int i = 0; i < 2; ++i)
            if (done[i])
                (void)cudaEventDestroy(done[i]);
        if (s)
            (void)cudaStreamDestroy(s);
    }
    int init()
    {
        TSW_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
        for (int i = 0; i < 2; ++i)
            TSW_CU(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming), "cudaEventCreate");
        return TSW_OK;
    }
};

} // namespace

/* The series is on the GPU (series->values a device pointer of ex->device_index): each
 * chunk is read in place (float64) or widened on the device (float32), on the caller's
 * stream. */
extern "C" int tsw__cuda_search(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                const double *qz, const double *qlo, const double *qhi,
                                int64_t n, int64_t r, const tsw_series *series, int znorm,
                                int64_t exclusion, int64_t k, int on_device, int64_t **cand,
                                int64_t *ncand, tsw_search_stats *stats, const tsw_exec *ex)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    own.cuda_workspace_bytes = 0;
    Call call;
    int rc;
    if ((rc = call.init(&own, on_device != 0)))
        return rc;
    const int64_t N = series->length, W = N - n + 1;
    const int64_t CW = W < ((int64_t)1 << 24) ? W : ((int64_t)1 << 24); /* windows a chunk */
    const int64_t P = CW + n - 1, nblk = (CW + kThreads - 1) / kThreads;
    int64_t B = ((int64_t)256 << 20) / (16 * n); /* DTW lanes a launch: 256 MiB of rows */
    B = B < 1 ? 1 : B > CW ? CW : B;
    /* chunk values: two buffers (double), the next chunk's copy from host memory runs on
     * the copy stream while the current one is searched; float32 arrives as float32 (half
     * the bytes) and is widened on the device */
    Plan plan;
    const bool inplace = on_device && dtype == TSW_F64;
    const size_t o_x = plan.add(inplace ? 0 : (size_t)P * (size_t)dim * 2, 8);
    const size_t o_raw =
        plan.add(dtype == TSW_F32 && !on_device ? (size_t)P * (size_t)dim * 2 : 0, 4);
    const size_t o_lb = plan.add((size_t)CW, 8);
    const size_t o_kim = plan.add((size_t)CW, 4), o_mu = plan.add((size_t)CW * (size_t)dim, 8);
    const size_t o_inv = plan.add((size_t)CW * (size_t)dim, 8);
    const size_t o_seed = plan.add((size_t)nblk, 8), o_list = plan.add((size_t)CW, 8);
    const size_t o_q = plan.add((size_t)n * (size_t)dim * 3, 8);
    const size_t o_out = plan.add((size_t)CW, 8), o_scr = plan.add((size_t)B * 2 * (size_t)n, 8);
    const size_t o_cnt = plan.add(2, 8);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;
    double *dxb = (double *)call.at(o_x), *dlb = (double *)call.at(o_lb);
    float *draw = (float *)call.at(o_raw);
    float *dkim = (float *)call.at(o_kim);
    double *dmu = (double *)call.at(o_mu), *dinv = (double *)call.at(o_inv);
    int64_t *dseed = (int64_t *)call.at(o_seed), *dlist = (int64_t *)call.at(o_list);
    double *dq = (double *)call.at(o_q), *dout = (double *)call.at(o_out);
    double *dscr = (double *)call.at(o_scr);
    unsigned long long *dcnt = (unsigned long long *)call.at(o_cnt);
    const size_t nd = (size_t)n * (size_t)dim;
    TSW_CU(cudaMemcpyAsync(dq, qz, nd * 8, cudaMemcpyHostToDevice, call.stream), "cudaMemcpy");
    TSW_CU(cudaMemcpyAsync(dq + nd, qlo, nd * 8, cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpy");
    TSW_CU(cudaMemcpyAsync(dq + 2 * nd, qhi, nd * 8, cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpy");
    HostBuf b_seed, b_list, b_out;
    Pool pool;
    CopyStream cs;
    if (!on_device && (rc = cs.init()))
        return rc;
    b_seed.p = tsw__malloc((size_t)nblk * 8);
    b_list.p = tsw__malloc((size_t)CW * 8);
    b_out.p = tsw__malloc((size_t)CW * 8);
    pool.picks = (int64_t *)tsw__malloc((size_t)(2 * k) * sizeof(int64_t));
    pool.slack_abs = tsw_search_slack_abs(znorm, n, dim);
    if (!b_seed.p || !b_list.p || !b_out.p || !pool.picks)
        return TSW_ENOMEM;
    double *hout = (double *)b_out.p;
    const size_t esz = tsw__dtype_size(dtype);
    /* Queues chunk c0's values into buffer slot (host: the copy stream, recorded in the
     * slot's event; device float32: widened on the call's stream) */
    auto stage = [&](int64_t c0, int slot) -> int {
        const int64_t nw = W - c0 < CW ? W - c0 : CW, cnt = (nw + n - 1) * dim;
        const char *src = (const char *)series->values + (size_t)c0 * (size_t)dim * esz;
        double *dst = dxb + (size_t)slot * (size_t)P * (size_t)dim;
        if (inplace)
            return TSW_OK;
        if (on_device) {
            widen_kernel<<<1024, 256, 0, call.stream>>>((const float *)src, cnt, dst);
            TSW_CU(cudaGetLastError(), "widen_kernel");
            return TSW_OK;
        }
        if (dtype == TSW_F32) {
            float *raw = draw + (size_t)slot * (size_t)P * (size_t)dim;
            TSW_CU(cudaMemcpyAsync(raw, src, (size_t)cnt * 4, cudaMemcpyHostToDevice, cs.s),
                   "cudaMemcpy");
            widen_kernel<<<1024, 256, 0, cs.s>>>(raw, cnt, dst);
            TSW_CU(cudaGetLastError(), "widen_kernel");
        } else {
            TSW_CU(cudaMemcpyAsync(dst, src, (size_t)cnt * 8, cudaMemcpyHostToDevice, cs.s),
                   "cudaMemcpy");
        }
        TSW_CU(cudaEventRecord(cs.done[slot], cs.s), "cudaEventRecord");
        return TSW_OK;
    };
    if ((rc = stage(0, 0)))
        return rc;
    int64_t *hseed = (int64_t *)b_seed.p, *hlist = (int64_t *)b_list.p;
    tsw_search_stats st;
    memset(&st, 0, sizeof(st));
    st.windows = W;
    double tau = HUGE_VAL;
    Progress prog{ex, W};
    for (int64_t c0 = 0, slot = 0; c0 < W; c0 += CW, slot ^= 1) {
        const int64_t nw = W - c0 < CW ? W - c0 : CW;
        const int64_t grid = (nw + kThreads - 1) / kThreads;
        const double *dx = inplace ? (const double *)series->values + (size_t)c0 * (size_t)dim
                                   : dxb + (size_t)slot * (size_t)P * (size_t)dim;
        if (!on_device)
            TSW_CU(cudaStreamWaitEvent(call.stream, cs.done[slot], 0), "cudaStreamWaitEvent");
        LbArgs la{dx, nw, n, dim, r, dq, dq + nd, dq + 2 * nd, (int)params->cost, znorm,
                  dlb, dkim, dmu, dinv, dseed};
        lb_kernel<<<(unsigned)grid, kThreads, 0, call.stream>>>(la);
        TSW_CU(cudaGetLastError(), "lb_kernel");
        /* seeds: each block's least bound, computed exactly enough to set the threshold */
        DtwArgs da{dx, n, dim, r, dq, dmu, dinv, (int)params->cost, dseed, grid, HUGE_VAL,
                   dout, dscr, B};
        for (int64_t s0 = 0; s0 < grid; s0 += B) {
            da.list = dseed + s0;
            da.count = grid - s0 < B ? grid - s0 : B;
            da.out = dout + s0;
            dtw_kernel<<<(unsigned)((da.count + 127) / 128), 128, 0, call.stream>>>(da);
            TSW_CU(cudaGetLastError(), "dtw_kernel");
        }
        /* the next chunk's values into the other slot (its last reader, the chunk before,
         * is done: the loop waited for it), while this one is searched */
        if (c0 + CW < W && (rc = stage(c0 + CW, (int)(slot ^ 1))))
            return rc;
        TSW_CU(cudaMemcpyAsync(hseed, dseed, (size_t)grid * 8, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpy");
        TSW_CU(cudaMemcpyAsync(hout, dout, (size_t)grid * 8, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpy");
        if ((rc = call.sync()))
            return rc;
        for (int64_t s = 0; s < grid; ++s)
            if ((rc = pool.push(hout[s], c0 + hseed[s])))
                return rc;
        st.dtw += grid;
        tau = fmin(tau, pool.tau(k, exclusion));
        const double thr = tsw_search_limit(tau, pool.slack_abs);
        /* the survivors of the bound, then their DTW */
        TSW_CU(cudaMemsetAsync(dcnt, 0, 16, call.stream), "cudaMemset");
        SelArgs sa{dlb, dkim, nw, thr, dlist, dcnt, nw};
        select_kernel<<<(unsigned)grid, kThreads, 0, call.stream>>>(sa);
        TSW_CU(cudaGetLastError(), "select_kernel");
        unsigned long long hc[2];
        TSW_CU(cudaMemcpyAsync(hc, dcnt, 16, cudaMemcpyDeviceToHost, call.stream), "cudaMemcpy");
        if ((rc = call.sync()))
            return rc;
        const int64_t ns = (int64_t)hc[0];
        st.kim += (int64_t)hc[1];
        st.keogh_query += nw - ns - (int64_t)hc[1];
        st.dtw += ns;
        da.list = dlist;
        da.thr = thr;
        for (int64_t s0 = 0; s0 < ns; s0 += B) {
            da.list = dlist + s0;
            da.count = ns - s0 < B ? ns - s0 : B;
            da.out = dout + s0;
            dtw_kernel<<<(unsigned)((da.count + 127) / 128), 128, 0, call.stream>>>(da);
            TSW_CU(cudaGetLastError(), "dtw_kernel");
        }
        if (ns) {
            TSW_CU(cudaMemcpyAsync(hlist, dlist, (size_t)ns * 8, cudaMemcpyDeviceToHost,
                                   call.stream),
                   "cudaMemcpy");
            TSW_CU(cudaMemcpyAsync(hout, dout, (size_t)ns * 8, cudaMemcpyDeviceToHost,
                                   call.stream),
                   "cudaMemcpy");
        }
        if ((rc = call.sync()))
            return rc;
        for (int64_t s = 0; s < ns; ++s) {
            if (!(hout[s] <= thr))
                ++st.abandoned;
            else if ((rc = pool.push(hout[s], c0 + hlist[s])))
                return rc;
        }
        tau = fmin(tau, pool.tau(k, exclusion));
        if ((rc = prog.report(call, nw)))
            return rc;
    }
    /* the candidates: every window at or below the final threshold, once */
    const double lim = tsw_search_limit(tau, pool.slack_abs);
    int64_t *res = (int64_t *)tsw__malloc((size_t)(pool.n + 1) * sizeof(int64_t)), nr = 0;
    if (!res)
        return TSW_ENOMEM;
    for (int64_t i = 0; i < pool.n; ++i)
        if (pool.h[i].d <= lim)
            res[nr++] = pool.h[i].start;
    qsort(res, (size_t)nr, sizeof(int64_t), i64_cmp);
    int64_t u = 0;
    for (int64_t i = 0; i < nr; ++i)
        if (u == 0 || res[u - 1] != res[i])
            res[u++] = res[i];
    *cand = res;
    *ncand = u;
    if (stats)
        *stats = st;
    return TSW_OK;
}

/* TSW_ENONFINITE when the count values at v (device memory of ex->device_index) hold a NaN
 * or an infinity, on the caller's stream. */
extern "C" int tsw__cuda_check_finite(tsw_dtype dtype, const void *v, int64_t count,
                                      const tsw_exec *ex)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    own.cuda_workspace_bytes = 0;
    Call call;
    int rc;
    if ((rc = call.init(&own, true)) || (rc = call.alloc(&own, kAlign)))
        return rc;
    int *dflag = (int *)call.at(0);
    TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), call.stream), "cudaMemset");
    const int64_t blocks = count / 256 + 1 < 4096 ? count / 256 + 1 : 4096;
    if (dtype == TSW_F32)
        finite_kernel<float><<<(unsigned)blocks, 256, 0, call.stream>>>((const float *)v, count,
                                                                         dflag);
    else
        finite_kernel<double><<<(unsigned)blocks, 256, 0, call.stream>>>((const double *)v,
                                                                          count, dflag);
    TSW_CU(cudaGetLastError(), "finite_kernel");
    int flag = 0;
    TSW_CU(cudaMemcpyAsync(&flag, dflag, sizeof(int), cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpy");
    if ((rc = call.sync()))
        return rc;
    return flag ? TSW_ENONFINITE : TSW_OK;
}

/* The windows cand[0 .. ncand) (n points of dim channels each) of the series in device
 * memory, as double, back to back into out (host, ncand n dim values). */
extern "C" int tsw__cuda_search_windows(tsw_dtype dtype, int64_t dim, const tsw_series *series,
                                        int64_t n, const int64_t *cand, int64_t ncand,
                                        double *out, const tsw_exec *ex)
{
    if (ncand == 0)
        return TSW_OK;
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    own.cuda_workspace_bytes = 0;
    Call call;
    int rc;
    if ((rc = call.init(&own, true)))
        return rc;
    /* a few candidates at a time keeps the device buffer bounded (256 MiB of values) */
    const int64_t per = n * dim, step0 = ((int64_t)32 << 20) / (per > 0 ? per : 1);
    const int64_t step = step0 < 1 ? 1 : step0 < ncand ? step0 : ncand;
    Plan plan;
    const size_t o_c = plan.add((size_t)step, 8), o_w = plan.add((size_t)step * (size_t)per, 8);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;
    int64_t *dc = (int64_t *)call.at(o_c);
    double *dw = (double *)call.at(o_w);
    for (int64_t i0 = 0; i0 < ncand; i0 += step) {
        const int64_t m = ncand - i0 < step ? ncand - i0 : step;
        TSW_CU(cudaMemcpyAsync(dc, cand + i0, (size_t)m * 8, cudaMemcpyHostToDevice,
                               call.stream),
               "cudaMemcpy");
        const int64_t tot = m * per, blocks = tot / 256 + 1 < 4096 ? tot / 256 + 1 : 4096;
        if (dtype == TSW_F32)
            gather_kernel<float><<<(unsigned)blocks, 256, 0, call.stream>>>(
                (const float *)series->values, dc, m, n, dim, dw);
        else
            gather_kernel<double><<<(unsigned)blocks, 256, 0, call.stream>>>(
                (const double *)series->values, dc, m, n, dim, dw);
        TSW_CU(cudaGetLastError(), "gather_kernel");
        TSW_CU(cudaMemcpyAsync(out + i0 * per, dw, (size_t)tot * 8, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpy");
        if ((rc = call.sync()))
            return rc;
    }
    return TSW_OK;
}
