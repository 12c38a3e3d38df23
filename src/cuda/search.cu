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

/* The block's window of least bound (ties to the smaller start) into seed[blockIdx.x]:
 * each thread's bound lbv of its window w (HUGE_VAL past the chunk's nw windows). Called
 * by every thread of the block. */
__device__ __forceinline__ void block_seed(double lbv, int64_t w, int64_t nw, int64_t *seed)
{
    __shared__ double sb[kThreads];
    __shared__ int64_t si[kThreads];
    const int tid = threadIdx.x;
    sb[tid] = lbv;
    si[tid] = w;
    __syncthreads();
    for (int st = kThreads / 2; st > 0; st >>= 1) {
        if (tid < st) {
            const double o = sb[tid + st];
            const int64_t oi = si[tid + st];
            if (o < sb[tid] || (o == sb[tid] && oi < si[tid])) {
                sb[tid] = o;
                si[tid] = oi;
            }
        }
        __syncthreads();
    }
    if (tid == 0)
        seed[blockIdx.x] = si[0] < nw ? si[0] : 0;
}

__global__ void lb_kernel(LbArgs a)
{
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
    block_seed(lbv, w, a.nw, a.seed);
}

/*
 * lb1_kernel: the univariate form of lb_kernel for queries of up to kLbMaxN points, one
 * block of kThreads consecutive windows. The block's kThreads + n - 1 points go to shared
 * memory, shifted by the block's first value, with their prefix sums, sums of squares and
 * counts of value changes (a block scan): each window's mean and std are then O(1), and
 * LB_Kim and LB_Keogh read shared memory. A window whose variance those sums cannot resolve
 * (tsw_search_cond: a level shift inside the block) takes two passes over its own values
 * in global memory instead, and its bounds read them there. LB_Keogh runs only where LB_Kim is at most
 * the threshold the previous chunks set (thr), in the query's order of magnitude
 * (order), and stops once above it: an abandoned window keeps a partial sum above thr,
 * which every later threshold (they only fall) prunes too.
 */
constexpr int kLbMaxN = 1024;

struct Lb1Args {
    const double *x; /* chunk values (P) */
    int64_t nw, n, r;
    const double *qz, *qlo, *qhi; /* (n) */
    const int *order;             /* (n) query points by decreasing magnitude */
    int cost, znorm;
    double thr;  /* LB_Keogh only at or below it */
    double cond; /* tsw_search_cond(kThreads, n) */
    double *lb;
    float *kim;
    double *mu, *inv;
    int64_t *seed;
};

/* One point's cost for the difference d (cost.h: a channel's term, then the total). */
__device__ __forceinline__ double cost1(int cost, double d)
{
    return tsw_cost_total_f64(cost, tsw_cost_term_f64(cost, d));
}

/* LB_Kim (the UCR Suite's three rings) of the window at xw (its mean m, 1 / std inv) into
 * kim, and the bound returned: max(LB_Kim, LB_Keogh) where LB_Kim is at most a.thr,
 * LB_Keogh in the query's order of magnitude, stopping once above a.thr. */
__device__ __forceinline__ double lb1_window(const Lb1Args &a, const double *xw, double m,
                                             double inv, double &kim)
{
    const int64_t n = a.n;
#define TSW__Z(j) ((xw[j] - m) * inv)
    kim = 0;
    if (n == 1) {
        kim = cost1(a.cost, a.qz[0] - TSW__Z(0));
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
                    best = fmin(best, cost1(a.cost, a.qz[i1] - TSW__Z(j1)));
                    if (u < t)
                        best = fmin(best, cost1(a.cost, a.qz[i2] - TSW__Z(j2)));
                }
                kim += best;
            }
    }
    if (!(kim <= a.thr))
        return kim;
    double keogh = 0;
    for (int64_t o = 0; o < n; ++o) {
        const int j = a.order[o];
        const double z = TSW__Z(j);
        keogh += cost1(a.cost, fmax(z - a.qhi[j], 0.0) + fmax(a.qlo[j] - z, 0.0));
        if ((o & 7) == 7 && keogh > a.thr)
            break;
    }
#undef TSW__Z
    return fmax(kim, keogh);
}

__global__ void lb1_kernel(Lb1Args a)
{
    extern __shared__ double sm[];
    __shared__ double wsum1[kThreads / 32], wsum2[kThreads / 32];
    __shared__ int wcnt[kThreads / 32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int64_t n = a.n, b0 = (int64_t)blockIdx.x * kThreads;
    const int64_t nwb = a.nw - b0 < kThreads ? a.nw - b0 : kThreads;
    const int L = (int)(nwb + n - 1), Lmax = (int)(kThreads + n - 1);
    double *xs = sm, *s1 = xs + Lmax, *s2 = s1 + Lmax + 1;
    int *chg = (int *)(s2 + Lmax + 1);
    /* (raw windows: no shift, their values exactly as the DTW kernel reads them) */
    const double x0 = a.znorm ? a.x[b0] : 0.0;
    for (int i = tid; i < L; i += kThreads)
        xs[i] = a.x[b0 + i] - x0;
    __syncthreads();
    if (a.znorm) {
        /* block scan: each thread a segment, then the segments' totals across threads */
        const int seg = (L + kThreads - 1) / kThreads, lo = tid * seg,
                  hi = lo + seg < L ? lo + seg : L;
        double t1 = 0, t2 = 0;
        int tc = 0;
        /* (a change compares the values themselves: two of them may shift to one double) */
        const double *xb = a.x + b0;
        for (int i = lo; i < hi; ++i) {
            t1 += xs[i];
            t2 += xs[i] * xs[i];
            tc += i > 0 && xb[i] != xb[i - 1];
        }
        double e1 = t1, e2 = t2;
        int ec = tc;
        for (int o = 1; o < 32; o <<= 1) { /* inclusive scan within the warp */
            double u1 = __shfl_up_sync(0xffffffffu, e1, o), u2 = __shfl_up_sync(0xffffffffu, e2, o);
            int uc = __shfl_up_sync(0xffffffffu, ec, o);
            if (lane >= o) {
                e1 += u1;
                e2 += u2;
                ec += uc;
            }
        }
        if (lane == 31) {
            wsum1[warp] = e1;
            wsum2[warp] = e2;
            wcnt[warp] = ec;
        }
        __syncthreads();
        double p1 = e1 - t1, p2 = e2 - t2; /* exclusive within the warp */
        int pc = ec - tc;
        for (int w = 0; w < warp; ++w) {
            p1 += wsum1[w];
            p2 += wsum2[w];
            pc += wcnt[w];
        }
        if (tid == 0) {
            s1[0] = s2[0] = 0;
            chg[0] = 0;
        }
        for (int i = lo; i < hi; ++i) {
            p1 += xs[i];
            p2 += xs[i] * xs[i];
            pc += i > 0 && xb[i] != xb[i - 1];
            s1[i + 1] = p1;
            s2[i + 1] = p2;
            chg[i + 1] = pc;
        }
        __syncthreads();
    }
    double lbv = HUGE_VAL;
    const int64_t w = b0 + tid;
    if (tid < nwb) {
        double m = 0, inv = 1, kim;
        bool bad = false;
        if (a.znorm) {
            const double m1 = (s1[tid + n] - s1[tid]) / (double)n;
            const double m2 = (s2[tid + n] - s2[tid]) / (double)n, var = m2 - m1 * m1;
            if (chg[tid + n] - chg[tid + 1] == 0) {
                m = xs[tid];
                inv = 0;
            } else {
                m = m1;
                inv = var > 0 ? 1.0 / sqrt(var) : 0.0;
                bad = !(var > a.cond * s2[tid + n]);
            }
        }
        if (!bad) {
            a.mu[w] = x0 + m;
            a.inv[w] = inv;
            lbv = lb1_window(a, xs + tid, m, inv, kim);
        } else {
            /* the sums cannot resolve this window's variance (common/search.h): its mean
             * and std in two passes over its own values, which its bounds then read
             * unshifted (the block's shift would have rounded their digits away) */
            double mu, iv;
            tsw_search_stats2(a.x + w, n, 1, &mu, &iv);
            a.mu[w] = mu;
            a.inv[w] = iv;
            lbv = lb1_window(a, a.x + w, mu, iv, kim);
        }
        a.lb[w] = lbv;
        a.kim[w] = (float)kim;
    }
    block_seed(lbv, w, a.nw, a.seed);
}

/* ho (0 .. n-1) in order of decreasing |q_i| (raw values: about their mean), ties to the
 * smaller index: the order in which LB_Keogh meets the query's points (the largest excess
 * comes first, so the sum passes the threshold early). */
int order_by_magnitude(int *ho, int64_t n, const double *q, int znorm)
{
    double *mag = (double *)tsw__malloc((size_t)n * sizeof(double));
    if (!mag)
        return TSW_ENOMEM;
    double mean = 0;
    if (!znorm) {
        for (int64_t i = 0; i < n; ++i)
            mean += q[i];
        mean /= (double)n;
    }
    for (int64_t i = 0; i < n; ++i)
        mag[i] = fabs(q[i] - mean);
    for (int64_t i = 1; i < n; ++i) { /* insertion sort: n <= kLbMaxN */
        const int v = ho[i];
        int64_t j = i;
        while (j > 0 && mag[ho[j - 1]] < mag[v]) {
            ho[j] = ho[j - 1];
            --j;
        }
        ho[j] = v;
    }
    tsw__free(mag);
    return TSW_OK;
}

size_t lb1_shared(int64_t n)
{
    const size_t Lmax = (size_t)(kThreads + n - 1);
    return Lmax * 8 + (Lmax + 1) * 16 + (Lmax + 1) * 4;
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
 * call's stream computes the current chunk (destroyed at scope exit). A large series
 * (kStageMin bytes and more) goes through a ring of page-locked pieces of this call's own,
 * which the host fills by several threads while the link carries the others: a copy from
 * pageable memory runs through the driver's staging at a fraction of the link's speed, and
 * one host thread's memcpy into page-locked memory is slower still (bench/RESULTS.md).
 * TSWARP_SEARCH_STAGE=0: never, 1: whatever the size (the tests). */
constexpr size_t kStageMin = (size_t)64 << 20, kPiece = (size_t)8 << 20;
constexpr int kPieces = 4;

struct CopyStream {
    cudaStream_t s = nullptr;
    cudaEvent_t done[2] = {nullptr, nullptr};
    char *pin[kPieces] = {};
    cudaEvent_t pev[kPieces] = {};
    int k = 0, threads = 1;
    ~CopyStream()
    {
        if (s)
            (void)cudaStreamSynchronize(s); /* no copy still reads a piece */
        for (int i = 0; i < kPieces; ++i) {
            if (pin[i])
                (void)cudaFreeHost(pin[i]);
            if (pev[i])
                (void)cudaEventDestroy(pev[i]);
        }
        for (int i = 0; i < 2; ++i)
            if (done[i])
                (void)cudaEventDestroy(done[i]);
        if (s)
            (void)cudaStreamDestroy(s);
        (void)cudaGetLastError();
    }
    int init(size_t series_bytes, const tsw_exec *ex)
    {
        TSW_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
        for (int i = 0; i < 2; ++i)
            TSW_CU(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming), "cudaEventCreate");
        const char *e = getenv("TSWARP_SEARCH_STAGE");
        const bool want = e && e[0] == '1' ? true
                          : e && e[0] == '0' ? false
                                             : series_bytes >= kStageMin;
        if (!want)
            return TSW_OK;
        threads = tsw__threads(ex);
        threads = threads > 8 ? 8 : threads; /* memory's bandwidth is spent by then */
        for (int i = 0; i < kPieces; ++i) {
            TSW_CU(cudaEventCreateWithFlags(&pev[i], cudaEventDisableTiming), "cudaEventCreate");
            if (cudaMallocHost((void **)&pin[i], kPiece) != cudaSuccess) {
                (void)cudaGetLastError(); /* no page-locked memory: pageable copies */
                for (int j = 0; j <= i; ++j) {
                    if (pin[j])
                        (void)cudaFreeHost(pin[j]);
                    pin[j] = nullptr;
                }
                return TSW_OK;
            }
        }
        return TSW_OK;
    }
    /* bytes from host src to device dst, queued on s */
    int copy(void *dst, const void *src, size_t bytes)
    {
        if (!pin[0]) {
            TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpy");
            return TSW_OK;
        }
        for (size_t off = 0; off < bytes; off += kPiece) {
            const size_t len = bytes - off < kPiece ? bytes - off : kPiece;
            /* the piece's last copy is done (an event never recorded is complete) */
            TSW_CU(cudaEventSynchronize(pev[k]), "cudaEventSynchronize");
            tsw__memcpy_parallel(pin[k], (const char *)src + off, len, threads);
            TSW_CU(cudaMemcpyAsync((char *)dst + off, pin[k], len, cudaMemcpyHostToDevice, s),
                   "cudaMemcpy");
            TSW_CU(cudaEventRecord(pev[k], s), "cudaEventRecord");
            k = (k + 1) % kPieces;
        }
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
    const size_t o_q = plan.add((size_t)n * (size_t)dim * 3, 8), o_ord = plan.add((size_t)n, 4);
    const size_t o_out = plan.add((size_t)CW, 8), o_scr = plan.add((size_t)B * 2 * (size_t)n, 8);
    const size_t o_cnt = plan.add(2, 8), o_flag = plan.add(1, 4);
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
    int *dflag = (int *)call.at(o_flag); /* a host series' NaN or infinity (finite_kernel) */
    const size_t nd = (size_t)n * (size_t)dim;
    /* univariate queries of up to kLbMaxN points: lb1_kernel, with the query's points in
     * order of decreasing magnitude */
    const bool one = dim == 1 && n <= kLbMaxN;
    int *dord = (int *)call.at(o_ord);
    HostBuf b_ord;
    if (one) {
        if (!(b_ord.p = tsw__malloc((size_t)n * sizeof(int))))
            return TSW_ENOMEM;
        int *ho = (int *)b_ord.p;
        for (int64_t i = 0; i < n; ++i)
            ho[i] = (int)i;
        if ((rc = order_by_magnitude(ho, n, qz, znorm)))
            return rc;
        TSW_CU(cudaMemcpyAsync(dord, ho, (size_t)n * sizeof(int), cudaMemcpyHostToDevice,
                               call.stream),
               "cudaMemcpy");
    }
    TSW_CU(cudaMemcpyAsync(dq, qz, nd * 8, cudaMemcpyHostToDevice, call.stream), "cudaMemcpy");
    TSW_CU(cudaMemcpyAsync(dq + nd, qlo, nd * 8, cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpy");
    TSW_CU(cudaMemcpyAsync(dq + 2 * nd, qhi, nd * 8, cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpy");
    HostBuf b_seed, b_list, b_out;
    Pool pool;
    CopyStream cs;
    if (!on_device && (rc = cs.init((size_t)N * (size_t)dim * tsw__dtype_size(dtype), ex)))
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
    auto stage = [&](int64_t c0, int64_t nw, int slot) -> int {
        const int64_t cnt = (nw + n - 1) * dim;
        const char *src = (const char *)series->values + (size_t)c0 * (size_t)dim * esz;
        double *dst = dxb + (size_t)slot * (size_t)P * (size_t)dim;
        if (inplace)
            return TSW_OK;
        if (on_device) {
            widen_kernel<<<1024, 256, 0, call.stream>>>((const float *)src, cnt, dst);
            TSW_CU(cudaGetLastError(), "widen_kernel");
            return TSW_OK;
        }
        int crc;
        if (dtype == TSW_F32) {
            float *raw = draw + (size_t)slot * (size_t)P * (size_t)dim;
            if ((crc = cs.copy(raw, src, (size_t)cnt * 4)))
                return crc;
            widen_kernel<<<1024, 256, 0, cs.s>>>(raw, cnt, dst);
            TSW_CU(cudaGetLastError(), "widen_kernel");
        } else if ((crc = cs.copy(dst, src, (size_t)cnt * 8))) {
            return crc;
        }
        /* the values' check on the device, as they arrive (the host's own pass over the
         * series would take longer than its copy): dflag, read with the chunk's seeds */
        finite_kernel<double><<<1024, 256, 0, cs.s>>>(dst, cnt, dflag);
        TSW_CU(cudaGetLastError(), "finite_kernel");
        TSW_CU(cudaEventRecord(cs.done[slot], cs.s), "cudaEventRecord");
        return TSW_OK;
    };
    const int64_t kFirstChunk = (int64_t)1 << 20;
    if (!on_device)
        TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), cs.s), "cudaMemset");
    int hflag = 0;
    if ((rc = stage(0, W < kFirstChunk ? W : kFirstChunk < CW ? kFirstChunk : CW, 0)))
        return rc;
    int64_t *hseed = (int64_t *)b_seed.p, *hlist = (int64_t *)b_list.p;
    tsw_search_stats st;
    memset(&st, 0, sizeof(st));
    st.windows = W;
    double tau = HUGE_VAL;
    Progress prog{ex, W};
    /* the first chunk is small, so that a threshold exists before most of the windows are
     * bounded (the bound kernel skips LB_Keogh above it) */
    auto chunk_of = [&](int64_t c0) -> int64_t {
        const int64_t cw = c0 == 0 ? (CW < kFirstChunk ? CW : kFirstChunk) : CW;
        return W - c0 < cw ? W - c0 : cw;
    };
    for (int64_t c0 = 0, slot = 0, nw = chunk_of(0); c0 < W;
         c0 += nw, slot ^= 1, nw = c0 < W ? chunk_of(c0) : 0) {
        const int64_t grid = (nw + kThreads - 1) / kThreads;
        const double *dx = inplace ? (const double *)series->values + (size_t)c0 * (size_t)dim
                                   : dxb + (size_t)slot * (size_t)P * (size_t)dim;
        if (!on_device)
            TSW_CU(cudaStreamWaitEvent(call.stream, cs.done[slot], 0), "cudaStreamWaitEvent");
        if (one) {
            Lb1Args la{dx, nw, n, r, dq, dq + nd, dq + 2 * nd, dord, (int)params->cost, znorm,
                       tsw_search_limit(tau, pool.slack_abs), tsw_search_cond(kThreads, n),
                       dlb, dkim, dmu, dinv, dseed};
            lb1_kernel<<<(unsigned)grid, kThreads, lb1_shared(n), call.stream>>>(la);
            TSW_CU(cudaGetLastError(), "lb1_kernel");
        } else {
            LbArgs la{dx, nw, n, dim, r, dq, dq + nd, dq + 2 * nd, (int)params->cost, znorm,
                      dlb, dkim, dmu, dinv, dseed};
            lb_kernel<<<(unsigned)grid, kThreads, 0, call.stream>>>(la);
            TSW_CU(cudaGetLastError(), "lb_kernel");
        }
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
        if (c0 + nw < W && (rc = stage(c0 + nw, chunk_of(c0 + nw), (int)(slot ^ 1))))
            return rc;
        TSW_CU(cudaMemcpyAsync(hseed, dseed, (size_t)grid * 8, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpy");
        TSW_CU(cudaMemcpyAsync(hout, dout, (size_t)grid * 8, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpy");
        if (!on_device)
            TSW_CU(cudaMemcpyAsync(&hflag, dflag, sizeof(int), cudaMemcpyDeviceToHost,
                                   call.stream),
                   "cudaMemcpy");
        if ((rc = call.sync()))
            return rc;
        if (hflag) /* (this chunk's values, or the next one's already checked) */
            return TSW_ENONFINITE;
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
