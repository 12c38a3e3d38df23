/*
 * CUDA k nearest neighbours for DTW with a pruning bound (tsw_knn, device CUDA): queries and
 * series of one length each, a Sakoe-Chiba window or none, a box cost (sqeuclidean, abs,
 * euclidean), k <= 16. Per tile of x:
 *   lb_kernel    one thread a (query, series) pair: LB_Keogh on the query's envelope
 *   seed_kernel  one thread a query: its k least-bounded series of the tile (their bounds
 *                set to +inf so that they are not computed twice)
 *   dtw_kernel   one thread a listed pair: DTW in the CPU reference's roundings (no fused
 *                multiply-add), abandoned once a row exceeds the query's threshold
 *   select       the pairs whose bound is at most their query's threshold
 * The top k of each query is kept on the host in (value, index) order, as tsw__cpu_knn
 * keeps it, and its k-th raw value times (1 + slack) is the threshold of the next steps.
 * Other cases return TSW_ENOTSUP and the dispatch runs the batch kernels over tiles.
 */
#include "host.cuh"
#include "common/band.h"
#include "common/cost.h"
#include "common/recurrence.h"

#include <float.h>

using namespace tsw__cu;

namespace {

constexpr int kMaxK = 16;

/* cost.h's local cost and recurrence.h's cell, by precision (this file is compiled with
 * -fmad=false: the CPU reference's roundings, so the same values bit for bit) */
__device__ __forceinline__ double local_cost(int cost, const double *x, const double *y,
                                             int64_t dim)
{
    return tsw_cost_local_f64(cost, x, y, dim);
}
__device__ __forceinline__ float local_cost(int cost, const float *x, const float *y,
                                            int64_t dim)
{
    return tsw_cost_local_f32(cost, x, y, dim);
}
__device__ __forceinline__ double dtw_cell(double c, double d, double u, double l)
{
    return tsw_dtw_cell_f64(c, d, u, l);
}
__device__ __forceinline__ float dtw_cell(float c, float d, float u, float l)
{
    return tsw_dtw_cell_f32(c, d, u, l);
}

template <typename T> struct Args {
    const T *q, *x;          /* (nq, n, dim), (nx, m, dim) */
    const double *lo, *hi;   /* the queries' envelopes over x's points (m, nq, dim) */
    int64_t nq, n, m, dim, r_below, r_above; /* column j admits rows [j - above, j + below] */
    int cost;
    int64_t x0, tile;        /* the tile: series x0 .. x0 + tile - 1 */
    double *lb;              /* (nq, tile) */
    int64_t k;
    int64_t *pairs;          /* (count, 2): query, series (global index) */
    int64_t count;
    const double *thr;       /* (nq) */
    double *out;             /* (count) raw values, +inf when abandoned */
    T *scratch;              /* 2 n B */
    int64_t B;
    unsigned long long *n_sel;
    int64_t cap;
};

template <typename T> __global__ void env_kernel(Args<T> a, double *lo, double *hi)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.nq * a.m)
        return;
    const int64_t i = t / a.m, j = t % a.m;
    int64_t r0 = j - a.r_above, r1 = j + a.r_below;
    r0 = r0 < 0 ? 0 : r0;
    r1 = r1 > a.n - 1 ? a.n - 1 : r1;
    for (int64_t c = 0; c < a.dim; ++c) {
        double mn = HUGE_VAL, mx = -HUGE_VAL;
        for (int64_t u = r0; u <= r1; ++u) {
            double v = (double)a.q[(i * a.n + u) * a.dim + c];
            mn = fmin(mn, v);
            mx = fmax(mx, v);
        }
        lo[(j * a.nq + i) * a.dim + c] = mn; /* (m, nq, dim): coalesced in lb_kernel */
        hi[(j * a.nq + i) * a.dim + c] = mx;
    }
}

template <typename T> __global__ void lb_kernel(Args<T> a)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.nq * a.tile)
        return;
    const int64_t i = t % a.nq, s = t / a.nq; /* neighbouring threads: neighbouring queries */
    const T *b = a.x + (a.x0 + s) * a.m * a.dim;
    double sum = 0;
    for (int64_t j = 0; j < a.m; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < a.dim; ++c) {
            const int64_t e = (j * a.nq + i) * a.dim + c;
            double v = (double)b[j * a.dim + c];
            double d = fmax(v - a.hi[e], 0.0) + fmax(a.lo[e] - v, 0.0);
            acc += tsw_cost_term_f64(a.cost, d);
        }
        sum += tsw_cost_total_f64(a.cost, acc);
    }
    a.lb[i * a.tile + s] = sum;
}

template <typename T> __global__ void seed_kernel(Args<T> a)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.nq)
        return;
    double best[kMaxK];
    int64_t who[kMaxK];
    int64_t h = 0;
    double *row = a.lb + i * a.tile;
    for (int64_t s = 0; s < a.tile; ++s) {
        double v = row[s];
        if (h == a.k && !(v < best[h - 1]))
            continue;
        int64_t p = h < a.k ? h++ : h - 1;
        while (p > 0 && best[p - 1] > v) {
            best[p] = best[p - 1];
            who[p] = who[p - 1];
            --p;
        }
        best[p] = v;
        who[p] = s;
    }
    for (int64_t u = 0; u < h; ++u) {
        a.pairs[(i * a.k + u) * 2] = i;
        a.pairs[(i * a.k + u) * 2 + 1] = a.x0 + who[u];
        row[who[u]] = HUGE_VAL; /* computed now: not selected again */
    }
    for (int64_t u = h; u < a.k; ++u) { /* (a tile of fewer than k series) */
        a.pairs[(i * a.k + u) * 2] = -1;
        a.pairs[(i * a.k + u) * 2 + 1] = -1;
    }
}

template <typename T> __global__ void select_kernel(Args<T> a)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.nq * a.tile)
        return;
    const int64_t i = t / a.tile, s = t % a.tile;
    if (a.lb[t] <= a.thr[i] && a.lb[t] < HUGE_VAL) {
        unsigned long long w = atomicAdd(a.n_sel, 1ull);
        if ((int64_t)w < a.cap) {
            a.pairs[2 * w] = i;
            a.pairs[2 * w + 1] = a.x0 + s;
        }
    }
}

template <typename T> __global__ void dtw_kernel(Args<T> a)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.count)
        return;
    const int64_t i = a.pairs[2 * t], s = a.pairs[2 * t + 1];
    if (i < 0) {
        a.out[t] = HUGE_VAL;
        return;
    }
    const int64_t n = a.n, m = a.m, dim = a.dim, B = a.B;
    const T *qa = a.q + i * n * dim, *xb = a.x + s * m * dim;
    T *prev = a.scratch + t, *cur = a.scratch + m * B + t;
    const T inf = (T)HUGE_VAL;
    const double thr = a.thr[i];
    /* row i admits columns [i - below, i + above] */
    for (int64_t r = 0; r < n; ++r) {
        int64_t lo = r - a.r_below, hi = r + a.r_above;
        lo = lo < 0 ? 0 : lo;
        hi = hi > m - 1 ? m - 1 : hi;
        int64_t plo = r - 1 - a.r_below, phi = r - 1 + a.r_above; /* the previous row's */
        plo = plo < 0 ? 0 : plo;
        phi = phi > m - 1 ? m - 1 : phi;
        T left = inf;
        double rowmin = HUGE_VAL;
        for (int64_t j = lo; j <= hi; ++j) {
            T diag = inf, up = inf;
            if (r == 0) {
                diag = j == 0 ? (T)0 : inf;
            } else {
                diag = j - 1 >= plo && j - 1 <= phi ? prev[(j - 1) * B] : inf;
                up = j >= plo && j <= phi ? prev[j * B] : inf;
            }
            T v = dtw_cell(local_cost(a.cost, qa + r * dim, xb + j * dim, dim), diag, up, left);
            cur[j * B] = v;
            left = v;
            rowmin = fmin(rowmin, (double)v);
        }
        if (rowmin > thr) {
            a.out[t] = HUGE_VAL;
            return;
        }
        T *tmp = prev;
        prev = cur;
        cur = tmp;
    }
    const int64_t last = n - 1 - a.r_below > 0 ? n - 1 - a.r_below : 0;
    a.out[t] = (m - 1 >= last && m - 1 <= n - 1 + a.r_above) ? (double)prev[(m - 1) * B]
                                                              : HUGE_VAL;
}

struct Nb {
    double key, raw;
    int64_t idx;
};

/* The host's top k: tsw__cpu_knn's rule (key = the returned value, float-rounded for
 * float32; ties to the smaller index). */
struct TopK {
    Nb *best = nullptr; /* (nq, k) */
    int64_t *have = nullptr;
    double *thr = nullptr;
    ~TopK()
    {
        tsw__free(best);
        tsw__free(have);
        tsw__free(thr);
    }
    void offer(const tsw_params *p, tsw_dtype dt, int64_t k, int64_t qi, int64_t j, double raw,
               double slack)
    {
        double key = tsw__finish(p, raw);
        if (dt == TSW_F32)
            key = (double)(float)key;
        if (key != key)
            key = HUGE_VAL;
        Nb *row = best + qi * k;
        int64_t h = have[qi];
        if (!(h < k || key < row[h - 1].key || (key == row[h - 1].key && j < row[h - 1].idx)))
            return;
        int64_t pos = h < k ? h : h - 1;
        while (pos > 0 && (row[pos - 1].key > key ||
                           (row[pos - 1].key == key && row[pos - 1].idx > j))) {
            row[pos] = row[pos - 1];
            --pos;
        }
        row[pos].key = key;
        row[pos].raw = raw;
        row[pos].idx = j;
        if (h < k)
            have[qi] = ++h;
        if (h == k)
            thr[qi] = row[h - 1].raw * (1 + slack);
    }
};

template <typename T>
int run(const tsw_params *p, tsw_dtype dt, int64_t dim, const tsw_collection *q,
        const tsw_collection *x, int64_t k, void *distance, int64_t *index, const tsw_exec *ex)
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
    const int64_t nq = q->count, nx = x->count, n = q->length, m = x->length;
    tsw_band band = tsw_band_make(p->window, p->window_radius, p->itakura_max_slope, n, m);
    const int64_t below = band.kind == TSW_BAND_DIAG ? band.below : n - 1;
    const int64_t above = band.kind == TSW_BAND_DIAG ? band.above : m - 1;
    int64_t tile = ((int64_t)8 << 20) / (nq > 0 ? nq : 1); /* 8 Mi pairs a tile */
    tile = tile < k ? k : tile > nx ? nx : tile; /* the first tile seeds k per query */
    const int64_t cap = nq * tile > nq * k ? nq * tile : nq * k; /* pairs a pass */
    int64_t B = ((int64_t)256 << 20) / (2 * m * (int64_t)sizeof(T));
    B = B < 1 ? 1 : B > cap ? cap : B;
    Plan plan;
    const size_t o_q = plan.add((size_t)(nq * n * dim), sizeof(T));
    const size_t o_x = plan.add((size_t)(nx * m * dim), sizeof(T));
    const size_t o_lo = plan.add((size_t)(nq * m * dim), 8), o_hi = plan.add((size_t)(nq * m * dim), 8);
    const size_t o_lb = plan.add((size_t)(nq * tile), 8), o_pairs = plan.add((size_t)cap * 2, 8);
    const size_t o_out = plan.add((size_t)cap, 8), o_thr = plan.add((size_t)nq, 8);
    const size_t o_scr = plan.add((size_t)(2 * m * B), sizeof(T)), o_cnt = plan.add(1, 8);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;
    Args<T> a;
    memset(&a, 0, sizeof(a));
    a.q = (const T *)call.at(o_q);
    a.x = (const T *)call.at(o_x);
    a.lo = (const double *)call.at(o_lo);
    a.hi = (const double *)call.at(o_hi);
    a.nq = nq, a.n = n, a.m = m, a.dim = dim, a.r_below = below, a.r_above = above;
    a.cost = (int)p->cost;
    a.lb = (double *)call.at(o_lb);
    a.k = k;
    a.pairs = (int64_t *)call.at(o_pairs);
    double *dthr = (double *)call.at(o_thr);
    a.thr = dthr;
    a.out = (double *)call.at(o_out);
    a.scratch = (T *)call.at(o_scr);
    a.B = B;
    a.n_sel = (unsigned long long *)call.at(o_cnt);
    a.cap = cap;
    const size_t es = sizeof(T);
    TSW_CU(cudaMemcpyAsync((void *)a.q, (const char *)q->values, (size_t)(nq * n * dim) * es,
                           cudaMemcpyHostToDevice, call.stream), "cudaMemcpy");
    TSW_CU(cudaMemcpyAsync((void *)a.x, (const char *)x->values, (size_t)(nx * m * dim) * es,
                           cudaMemcpyHostToDevice, call.stream), "cudaMemcpy");
    env_kernel<T><<<(unsigned)((nq * m + 255) / 256), 256, 0, call.stream>>>(
        a, (double *)a.lo, (double *)a.hi);
    TSW_CU(cudaGetLastError(), "env_kernel");
    TopK top;
    top.best = (Nb *)tsw__malloc((size_t)(nq * k) * sizeof(Nb));
    top.have = (int64_t *)tsw__malloc((size_t)nq * sizeof(int64_t));
    top.thr = (double *)tsw__malloc((size_t)nq * sizeof(double));
    int64_t *hp = (int64_t *)tsw__malloc((size_t)cap * 2 * sizeof(int64_t));
    double *ho = (double *)tsw__malloc((size_t)cap * sizeof(double));
    struct Guard {
        int64_t *hp;
        double *ho;
        ~Guard()
        {
            tsw__free(hp);
            tsw__free(ho);
        }
    } g{hp, ho};
    if (!top.best || !top.have || !top.thr || !hp || !ho)
        return TSW_ENOMEM;
    for (int64_t i = 0; i < nq; ++i) {
        top.have[i] = 0;
        top.thr[i] = HUGE_VAL;
    }
    const double slack = 4.0 * (double)(n + m + 8) * (dt == TSW_F32 ? FLT_EPSILON : DBL_EPSILON);
    Progress prog{ex, nq * nx};
    /* DTW of `count` listed pairs, merged into the top k */
    auto dtw_pass = [&](int64_t count) -> int {
        TSW_CU(cudaMemcpyAsync(dthr, top.thr, (size_t)nq * 8, cudaMemcpyHostToDevice,
                               call.stream), "cudaMemcpy");
        for (int64_t c0 = 0; c0 < count; c0 += B) {
            Args<T> d = a;
            d.pairs = a.pairs + 2 * c0;
            d.out = a.out + c0;
            d.count = count - c0 < B ? count - c0 : B;
            dtw_kernel<T><<<(unsigned)((d.count + 127) / 128), 128, 0, call.stream>>>(d);
            TSW_CU(cudaGetLastError(), "dtw_kernel");
        }
        TSW_CU(cudaMemcpyAsync(hp, a.pairs, (size_t)count * 16, cudaMemcpyDeviceToHost,
                               call.stream), "cudaMemcpy");
        TSW_CU(cudaMemcpyAsync(ho, a.out, (size_t)count * 8, cudaMemcpyDeviceToHost,
                               call.stream), "cudaMemcpy");
        int r2 = call.sync();
        if (r2)
            return r2;
        for (int64_t u = 0; u < count; ++u)
            if (hp[2 * u] >= 0 && (ho[u] <= top.thr[hp[2 * u]] || top.thr[hp[2 * u]] == HUGE_VAL))
                top.offer(p, dt, k, hp[2 * u], hp[2 * u + 1], ho[u], slack);
        return TSW_OK;
    };
    for (int64_t x0 = 0; x0 < nx; x0 += tile) {
        a.x0 = x0;
        a.tile = nx - x0 < tile ? nx - x0 : tile;
        const int64_t cells = nq * a.tile;
        lb_kernel<T><<<(unsigned)((cells + 255) / 256), 256, 0, call.stream>>>(a);
        TSW_CU(cudaGetLastError(), "lb_kernel");
        if (x0 == 0) { /* each query's k least-bounded series set its threshold */
            seed_kernel<T><<<(unsigned)((nq + 127) / 128), 128, 0, call.stream>>>(a);
            TSW_CU(cudaGetLastError(), "seed_kernel");
            if ((rc = dtw_pass(nq * k)))
                return rc;
        }
        TSW_CU(cudaMemcpyAsync(dthr, top.thr, (size_t)nq * 8, cudaMemcpyHostToDevice,
                               call.stream), "cudaMemcpy");
        TSW_CU(cudaMemsetAsync(a.n_sel, 0, 8, call.stream), "cudaMemset");
        select_kernel<T><<<(unsigned)((cells + 255) / 256), 256, 0, call.stream>>>(a);
        TSW_CU(cudaGetLastError(), "select_kernel");
        unsigned long long ns = 0;
        TSW_CU(cudaMemcpyAsync(&ns, a.n_sel, 8, cudaMemcpyDeviceToHost, call.stream),
               "cudaMemcpy");
        if ((rc = call.sync()))
            return rc;
        if ((int64_t)ns > cap)
            return TSW_ENOMEM; /* (cannot happen: at most nq x tile pairs) */
        if (ns && (rc = dtw_pass((int64_t)ns)))
            return rc;
        if ((rc = prog.report(call, cells)))
            return rc;
    }
    for (int64_t t = 0; t < nq * k; ++t) {
        if (dt == TSW_F32)
            ((float *)distance)[t] = (float)top.best[t].key;
        else
            ((double *)distance)[t] = top.best[t].key;
        index[t] = top.best[t].idx;
    }
    return TSW_OK;
}

} // namespace

extern "C" int tsw__cuda_knn_dtw(const tsw_params *p, tsw_dtype dt, int64_t dim,
                                 const tsw_collection *q, const tsw_collection *x, int64_t k,
                                 void *distance, int64_t *index, const tsw_exec *ex)
{
    if (p->measure != TSW_DTW || p->cost == TSW_COST_COSINE || k > kMaxK ||
        p->window == TSW_WINDOW_ITAKURA || q->lengths || x->lengths || q->offsets ||
        x->offsets)
        return TSW_ENOTSUP;
    return dt == TSW_F32 ? run<float>(p, dt, dim, q, x, k, distance, index, ex)
                         : run<double>(p, dt, dim, q, x, k, distance, index, ex);
}
