/*
 * Soft-DTW values and gradients on the GPU (tsw_soft_dtw_grad, tsw_soft_dtw_cost_grad and
 * their *_device twins), host side; the kernels are in sdtw_grad_kernel.cuh. The forward
 * recursion for R, then the backward recursion for E = dR(n,m)/dR(i,j) of Cuturi and
 * Blondel (2017, Algorithm 2), fused with the local cost so that the gradient with respect
 * to the inputs is accumulated cell by cell and no (count, n, m) cost tensor is ever
 * materialised (cuTimeWarp's future work, 002_*.txt).
 *
 * float32 series of dim 1 or 2 up to 2,048 points in batches of at least two warps per SM run
 * on the register-blocked wavefront kernel of sdtw_wf.cuh (sg_grad: wf_eligible,
 * wf_rows_per_lane); smaller batches with gradients (up to 16,384 points) on its two-wave
 * form, sdtw_bi.cuh (the recursions from both corners at once, E from their sum: bi_rows),
 * or its split; float32 series of 3 or more features on the matrix form of sdtw_mat.cuh (the
 * costs formed first, the same wavefront kernel's CM instances on them, the gradients from
 * E by products: mat_eligible); everything else on the kernel below. The same wavefront kernel's
 * value-only variant serves the paired soft-DTW values of cuda/backend.cu
 * (tsw__cuda_soft_dtw_paired_wf: sg_grad with val_only).
 *
 * Numerics: the soft-min of recurrence.h (minimum factored out); the backward weights
 * exp((Q(succ) - R(i,j)) / gamma) have exponents <= 0 up to rounding, so no overflow for any
 * gamma; cells outside the window have R = +inf and E = 0, and their terms are skipped (no
 * 0 * inf). Both precisions take exp and log in double (see SgOps).
 */
#include "cuda/sdtw_grad_kernel.cuh"

/* ---- host side ----------------------------------------------------------------------------- */

namespace {

/* Finiteness of the n_k x m_k blocks of (count, cn, cm) cost matrices (bit 1 of *flag). */
template <typename T>
__global__ void cost_check_kernel(const T *cost, int64_t count, int64_t cn, int64_t cm,
                                  const int64_t *alen, const int64_t *blen, int *flag)
{
    for (int64_t p = blockIdx.x; p < count; p += gridDim.x) {
        const int64_t n = alen[p], m = blen[p];
        const T *c = cost + p * cn * cm;
        int bad = 0;
        for (int64_t k = threadIdx.x; k < n * m; k += blockDim.x)
            bad |= !isfinite(c[(k / m) * cm + k % m]);
        if (bad)
            atomicOr(flag, 1);
    }
}

int64_t round32(int64_t v) { return (v + 31) / 32 * 32; }

/* Split mode: the blocks of a problem add to its gradient rows, which start at zero
 * (series rows only: rows between series stay untouched). */
template <typename T>
__global__ void sg_zero_rows(T *o, const int64_t *off, const int64_t *len, int64_t first,
                             int64_t count, int64_t dim, const int *flag)
{
    if (flag && *(volatile const int *)flag)
        return; /* non-finite device inputs: the outputs stay untouched */
    for (int64_t q = blockIdx.x; q < count; q += gridDim.x) {
        T *r = o + off[first + q] * dim;
        for (int64_t k = threadIdx.x; k < len[first + q] * dim; k += blockDim.x)
            r[k] = 0;
    }
}

/* Split mode: the gradient of y of each problem, the column sums of its stripes (each in
 * its slot's accumulator, stripes of kSplitRows rows) added in stripe order, in double,
 * then rounded once: the same bits on every run and however a batch is cut into calls. */
template <typename T>
__global__ void sg_reduce_gy(T *gb, const int64_t *boff, const int64_t *alen,
                             const int64_t *blen, int64_t first, int64_t count, int64_t K,
                             int64_t dim, const double *part, int64_t stride, double cb,
                             const int *flag);

/* Split mode's rows per block (one stripe) and when it is used: a batch too small to fill
 * the GPU with one block per problem (fewer than two blocks of 512 rows per SM) whose
 * problems have more than 256 rows. Returns the blocks per problem, 0 for no split. */
constexpr int kSplitRows = 256;

template <typename T>
__global__ void sg_reduce_gy(T *gb, const int64_t *boff, const int64_t *alen,
                             const int64_t *blen, int64_t first, int64_t count, int64_t K,
                             int64_t dim, const double *part, int64_t stride, double cb,
                             const int *flag)
{
    if (flag && *(volatile const int *)flag)
        return; /* non-finite device inputs: the outputs stay untouched */
    for (int64_t q = blockIdx.x; q < count; q += gridDim.x) {
        const int64_t p = first + q, m = blen[p];
        const int64_t ks = (alen[p] + kSplitRows - 1) / kSplitRows; /* its stripes' blocks */
        T *o = gb + boff[p] * dim;
        for (int64_t k = threadIdx.x; k < m * dim; k += blockDim.x) {
            double s = 0;
            for (int64_t st = 0; st < ks && st < K; ++st)
                s += part[(q * K + st) * stride + k];
            o[k] = (T)((double)o[k] + cb * s);
        }
    }
}
int64_t sg_split(int64_t count, int64_t max_n, int device, int narrow = 0)
{
    const int sms = sm_count(device);
    if (narrow || max_n <= kSplitRows || count * ((max_n + 511) / 512) >= 2 * (int64_t)sms)
        return 0;
    const char *env = getenv("TSWARP_SDTW_SPLIT"); /* developer knob: 0 disables */
    if (env && env[0] == '0')
        return 0;
    return (max_n + kSplitRows - 1) / kSplitRows;
}

/* A Sakoe-Chiba band narrow for the longest problem (L points a side): its width w, else 0.
 * One block a problem then sweeps only the band's steps (sg_steps: O(n (1 + w / NT))) with
 * about w threads, and split mode is off (its stripes' hand-over is O(m) per stripe). */
int sg_narrow(const tsw_params *params, int64_t L)
{
    if (L >= ((int64_t)1 << 30))
        return 0;
    const SgBand bd((int)params->window, params->window_radius, (int)L, (int)L);
    return bd.on && 4 * (int64_t)bd.w < L ? bd.w : 0;
}

/* Threads per block for problems of at most max_n rows: one per row up to the maximum. */
int threads_for(int64_t max_n, tsw_dtype dtype, bool cost, int64_t dim)
{
    const int64_t mx = sg_max_threads(tsw__dtype_size(dtype), cost, !cost && dim > 2);
    return (int)round32(max_n < mx ? max_n : mx);
}

template <typename T, int DK, bool COST, bool BAND>
cudaError_t launch_kernel(const SgArgs<T> &g, int64_t blocks, int nt, size_t smem,
                          cudaStream_t stream)
{
    auto *k = sdtw_grad_kernel<T, DK, COST, BAND>;
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)smem);
        if (e != cudaSuccess)
            return e;
    }
    k<<<(unsigned)blocks, nt, smem, stream>>>(g);
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_any(const SgArgs<T> &g, bool cost, int64_t blocks, int nt, size_t smem,
                       cudaStream_t stream)
{
    /* Sakoe-Chiba windows on series: the band's layout and steps (the host sized S so,
     * sg_rcells); everything else (and cost matrices, sized n (n + m - 1)) without */
    const bool band = !cost && (g.window == TSW_WINDOW_SAKOE_CHIBA ||
                                g.window == TSW_WINDOW_SAKOE_CHIBA_FRACTION);
    if (cost)
        return launch_kernel<T, 1, true, false>(g, blocks, nt, smem, stream);
    if (g.dim == 1)
        return band ? launch_kernel<T, 1, false, true>(g, blocks, nt, smem, stream)
                    : launch_kernel<T, 1, false, false>(g, blocks, nt, smem, stream);
    if (g.dim == 2)
        return band ? launch_kernel<T, 2, false, true>(g, blocks, nt, smem, stream)
                    : launch_kernel<T, 2, false, false>(g, blocks, nt, smem, stream);
    return band ? launch_kernel<T, 0, false, true>(g, blocks, nt, smem, stream)
                : launch_kernel<T, 0, false, false>(g, blocks, nt, smem, stream);
}

/* One kind of problem of a call (the pairs, or the divergence's self terms). */
struct SgKind {
    const void *a, *b;
    const int64_t *aoff, *alen, *boff, *blen; /* device */
    int64_t max_n;
    void *ga, *gb;
    double cv, ca, cb;
    int accumulate;
};

/*
 * Everything of a call once the inputs are on the device: chunks of problems whose R fits
 * the budget, each chunk's kinds launched in order on the call's stream.
 */
struct SgJob {
    tsw_dtype dtype;
    int64_t dim;
    const tsw_params *params;
    int64_t count;
    const int64_t *h_rsize; /* host: R elements of problem k (max over the kinds) */
    const int64_t *d_roff;  /* device: chunk-relative R offsets */
    int64_t max_len;        /* longest series of any kind (scratch sizing) */
    bool cost;
    const void *cmat;
    int64_t cn, cm;
    void *values, *gcost;
    double *vacc; /* float32 divergences: (count,) doubles for the kinds' sum, else NULL */
    bool want_grad;
    const int *flag;
    int64_t split; /* blocks per problem (0: one) */
    bool wf;       /* the wavefront kernel (sdtw_wf.cuh): R holds its probabilities */
    int wf_rb;     /* its rows per lane */
    int wf_rows;   /* its split's rows per stripe (0: one block per problem) */
    int64_t wf_k;  /* stripes per problem */
    bool wf_val;   /* values only on its float32 variant (tsw__cuda_soft_dtw_paired_wf) */
    bool bi;       /* gradients in two waves (sdtw_bi.cuh): wf_rows rows a stripe, wf_k stripes */
    bool mat;      /* costs formed first (sdtw_mat.cuh), the CM wavefront, gradients from E */
    const int64_t *d_coff; /* mat: device, chunk-relative offsets (doubles) of the matrices */
    int *sync;     /* split: ticket, then forward and backward flags of 2 (blocks) + 2 ints */
    int64_t sync_ints;
};

/* Dynamic shared memory of a launch: 4 NT doubles (the exchange rows), then the column
 * accumulator (doubles) and a copy of b (the input type) when each takes at most 32 KB. */
size_t sg_smem_bytes(tsw_dtype dtype, int nt, int64_t max_len, int64_t dim, bool cost,
                     bool *gy_shared, bool *y_shared)
{
    const size_t es = tsw__dtype_size(dtype), cells = (size_t)max_len * (size_t)dim;
    const size_t base = 4 * (size_t)nt * sizeof(double);
    *gy_shared = !cost && cells * sizeof(double) <= 32 * 1024;
    *y_shared = !cost && cells * es <= 32 * 1024;
    return base + (*gy_shared ? cells * sizeof(double) : 0) + (*y_shared ? cells * es : 0);
}

/* Device memory left for R after `fixed` bytes: half of what is free, so that other work
 * on the GPU keeps room (at least one problem's R is always tried). */
size_t sg_budget(size_t fixed)
{
    size_t free_b = 0, total_b = 0;
    if (mem_info(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return (size_t)1 << 30;
    }
    const size_t b = free_b > fixed ? (free_b - fixed) / 2 : 0;
    /* developer knob TSWARP_SDTW_BUDGET=<bytes>: a smaller budget (the tests' chunks) */
    const char *env = getenv("TSWARP_SDTW_BUDGET");
    const long long cap = env && *env ? strtoll(env, nullptr, 10) : 0;
    return cap > 0 && (size_t)cap < b ? (size_t)cap : b;
}

bool full_cover(const HostColl &h)
{
    int64_t next = 0;
    for (int64_t i = 0; i < h.c->count; ++i) {
        if (h.off[i] != next)
            return false;
        next += h.len[i];
    }
    return next == h.rows;
}

struct SgPieces {
    size_t idx, x, y, cmat, values, vacc, gx, gy, gcost, flag, scratch, sync, R;
};

/* Chunks of problems: chunk c is problems [start[c], start[c+1]) with the sum of their R
 * sizes <= r_cap (a lone problem may exceed it: it is its own chunk) and at most
 * blocks_cap problems; roff[k] receives k's R offset within its chunk. */
int64_t sg_chunks(const int64_t *rsize, int64_t count, int64_t r_cap, int64_t blocks_cap,
                  int64_t *roff, int64_t *start)
{
    int64_t nch = 0;
    for (int64_t k0 = 0; k0 < count;) {
        int64_t k1 = k0, used = 0;
        while (k1 < count && k1 - k0 < blocks_cap && (k1 == k0 || used + rsize[k1] <= r_cap)) {
            roff[k1] = used;
            used += rsize[k1];
            ++k1;
        }
        start[nch++] = k0;
        k0 = k1;
    }
    start[nch] = count;
    return nch;
}

/*
 * Sizes the R region and the per-block scratch from the free memory: everything in one
 * chunk when it fits half of the free memory, else chunks of about half of it. Returns
 * the largest chunk's R elements in *r_cap and its block count in *blocks_cap.
 */
int sg_size(const int64_t *rsize, int64_t count, int64_t per_block, size_t es, size_t fixed,
            bool one_chunk, int64_t *r_cap, int64_t *blocks_cap)
{
    int64_t total = 0, biggest = 0;
    for (int64_t k = 0; k < count; ++k) {
        if (rsize[k] > INT64_MAX / 4 - total)
            return TSW_EOVERFLOW;
        total += rsize[k];
        biggest = rsize[k] > biggest ? rsize[k] : biggest;
    }
    const double all = (double)total + (double)count * (double)per_block;
    if (one_chunk || all <= (double)sg_budget(fixed) / (double)es) {
        *r_cap = total;
        *blocks_cap = count;
        return TSW_OK;
    }
    const double budget = (double)sg_budget(fixed) / (double)es;
    int64_t rc = (int64_t)(budget * 0.75);
    if (rc < biggest)
        rc = biggest; /* the allocation then reports TSW_ENOMEM if even that fails */
    int64_t bc = (int64_t)((budget - (double)rc) / (double)(per_block > 0 ? per_block : 1));
    if (bc < 1)
        bc = 1;
    if (bc > count)
        bc = count;
    *r_cap = rc;
    *blocks_cap = bc;
    return TSW_OK;
}

/* The split wavefront kernel (sdtw_wf.cuh) on problems [g.first, g.first + count) of one
 * kind: hand-over words set to kWfEmpty, the forward launch, then (gradients) the backward
 * launch and, where both gradients are wanted, the deferred rows (wf_rows_after). The
 * float32 wavefront kernel only: the double instance never gets here (wf_eligible). */
template <typename T>
int wf_split_launch(Call &call, const SgJob &job, const SgKind &kd, SgArgs<T> &g,
                    int64_t count, double *scratch, bool cm = false)
{
    if constexpr (sizeof(T) != sizeof(float)) {
        return TSW_ENOTSUP;
    } else {
        const int64_t K = job.wf_k;
        g.wf_rows = job.wf_rows;
        g.wf_k = (int)K;
        g.wf_hand = (unsigned long long *)scratch;
        g.wf_defer = !cm && g.want_grad && kd.ga && kd.gb;
        g.wf_gx = (float *)(g.wf_hand + count * (K - 1) * 4 * job.max_len);
        TSW_CU(cudaMemsetAsync(g.wf_hand, 0xff,
                               (size_t)(count * (K - 1) * 4 * job.max_len) * sizeof(double),
                               call.stream),
               "cudaMemsetAsync (split hand-over)");
        /* the two launches' tickets (job.sync has at least two ints), set at once */
        TSW_CU(cudaMemsetAsync(job.sync, 0, 2 * sizeof(unsigned), call.stream),
               "cudaMemsetAsync (tickets)");
        g.ticket = (unsigned *)job.sync;
        g.phase = 1;
        TSW_CU(wf_dispatch(g, count * K, kd.max_n, job.wf_rb, false, call.stream, cm),
               "soft-DTW gradient kernel launch");
        if (!g.want_grad)
            return TSW_OK;
        g.ticket = (unsigned *)job.sync + 1;
        g.phase = 2;
        TSW_CU(wf_dispatch(g, count * K, kd.max_n, job.wf_rb, false, call.stream, cm),
               "soft-DTW gradient kernel launch");
        if (g.wf_defer && kd.max_n > job.wf_rows) {
            wf_rows_after<<<(unsigned)(count < 4096 ? count : 4096), 256, 0, call.stream>>>(g,
                                                                                        count);
            TSW_CU(cudaGetLastError(), "soft-DTW gradient kernel launch");
        }
        return TSW_OK;
    }
}

/* The two-wave kernel (sdtw_bi.cuh) on problems [g.first, g.first + count) of one kind: the
 * scratch laid out (hand-over words set to kWfEmpty), the tickets, the two phases and the
 * gradients. Float32 only, as wf_split_launch. */
template <typename T>
int bi_split_launch(Call &call, const SgJob &job, const SgKind &kd, SgArgs<T> &g,
                    int64_t count, double *scratch)
{
    if constexpr (sizeof(T) != sizeof(float)) {
        return TSW_ENOTSUP;
    } else {
        const int64_t K = job.wf_k, L = job.max_len;
        BiArgs b;
        b.K = (int)K;
        b.H = job.wf_rows;
        b.hand = (unsigned long long *)scratch;
        b.rows = (BiPart *)(b.hand + count * 2 * (K - 1) * L);
        b.cols = b.rows + count * 2 * L;
        b.z = (double *)(b.cols + count * 2 * K * L);
        b.ticket = (unsigned *)job.sync;
        if (K > 1)
            TSW_CU(cudaMemsetAsync(b.hand, 0xff, (size_t)(count * 2 * (K - 1) * L) * 8,
                                   call.stream),
                   "cudaMemsetAsync (split hand-over)");
        TSW_CU(cudaMemsetAsync(job.sync, 0, 2 * sizeof(unsigned), call.stream),
               "cudaMemsetAsync (tickets)");
        TSW_CU(bi_launch(g, b, count, kd.max_n, call.stream), "soft-DTW gradient kernel launch");
        return TSW_OK;
    }
}

/* The matrix form (sdtw_mat.cuh) on problems [g.first, g.first + count) of one kind: the
 * costs, the wavefront's CM instances (split or one block a problem), then the inputs'
 * gradients from E, a's rows and then b's (the same rows for the divergence's self terms:
 * the launches' order keeps them apart). Float32 only (mat_eligible). */
template <typename T>
int mat_launch(Call &call, const SgJob &job, const SgKind &kd, SgArgs<T> &g, int64_t count,
               double *scratch)
{
    if constexpr (sizeof(T) != sizeof(float)) {
        return TSW_ENOTSUP;
    } else {
        SmArgs sa;
        memset(&sa, 0, sizeof(sa));
        sa.a = (const float *)kd.a;
        sa.b = (const float *)kd.b;
        sa.aoff = kd.aoff;
        sa.alen = kd.alen;
        sa.boff = kd.boff;
        sa.blen = kd.blen;
        sa.first = g.first;
        sa.count = count;
        sa.dim = job.dim;
        sa.R = g.R;
        sa.coff = job.d_coff;
        sa.flag = job.flag;
        sa.h = job.wf_rows;
        TSW_CU(sm_costs(sa, job.max_len, job.max_len, call.stream), "soft-DTW cost tiles launch");
        const bool grad = g.want_grad != 0;
        g.wf_coff = job.d_coff;
        g.ga = g.gb = nullptr; /* the kernel's own gradients: none (E instead) */
        if (job.wf_rows) {
            int rc = wf_split_launch(call, job, kd, g, count, scratch, true);
            if (rc)
                return rc;
        } else {
            TSW_CU(wf_dispatch(g, count, kd.max_n, job.wf_rb, job.wf_val, call.stream, true),
                   "soft-DTW gradient kernel launch");
        }
        if (!grad)
            return TSW_OK;
        sa.accumulate = kd.accumulate;
        if (kd.ga) {
            sa.out = (float *)kd.ga;
            sa.coef = kd.ca;
            TSW_CU(sm_egrad<false>(sa, job.max_len, call.stream), "soft-DTW gradient launch");
        }
        if (kd.gb) {
            sa.out = (float *)kd.gb;
            sa.coef = kd.cb;
            TSW_CU(sm_egrad<true>(sa, job.max_len, call.stream), "soft-DTW gradient launch");
        }
        return TSW_OK;
    }
}

template <typename T>
int sg_launch_chunks(Call &call, const SgJob &job, const SgKind *kinds, int nkinds, double *R,
                     double *scratch, int64_t per_block, const int64_t *start, int64_t nch,
                     const tsw_exec *ex)
{
    Progress prog{ex, job.count};
    for (int64_t c = 0; c < nch; ++c) {
        const int64_t k0 = start[c], k1 = start[c + 1];
        for (int q = 0; q < nkinds; ++q) {
            const SgKind &kd = kinds[q];
            const int64_t K = job.split;
            SgArgs<T> g;
            memset(&g, 0, sizeof(g));
            g.a = (const T *)kd.a;
            g.b = (const T *)kd.b;
            g.aoff = kd.aoff;
            g.alen = kd.alen;
            g.boff = kd.boff;
            g.blen = kd.blen;
            g.roff = job.d_roff;
            g.first = k0;
            g.dim = job.dim;
            g.cost = (const T *)job.cmat;
            g.cn = job.cn;
            g.cm = job.cm;
            g.R = R;
            int nt = K ? kSplitRows : threads_for(kd.max_n, job.dtype, job.cost, job.dim);
            if (const int w = K ? 0 : sg_narrow(job.params, job.max_len))
                nt = (int)(nt < round32(w) ? nt : round32(w)); /* a narrow band's width */
            bool gy_shared, y_shared;
            const size_t smem = sg_smem_bytes(job.dtype, nt, job.max_len, job.dim, job.cost,
                                              &gy_shared, &y_shared);
            g.gy_shared = gy_shared;
            g.y_shared = y_shared;
            g.ymax = job.max_len;
            g.bound = scratch;
            g.bound_stride = per_block;
            g.gyglob = scratch + 4 * (job.max_len + 1);
            g.gy_stride = per_block;
            g.gxglob = g.gyglob + job.max_len * job.dim;
            g.gx_stride = per_block;
            g.values = (T *)job.values;
            g.vacc = job.vacc;
            g.vlast = q == nkinds - 1;
            g.ga = (T *)kd.ga;
            g.gb = (T *)kd.gb;
            g.gcost = (T *)job.gcost;
            g.cv = kd.cv;
            g.ca = kd.ca;
            g.cb = kd.cb;
            g.accumulate = kd.accumulate;
            g.flag = job.flag;
            g.want_grad = job.want_grad && (kd.ga || kd.gb || job.gcost);
            g.gamma = job.params->gamma;
            g.inv_gamma = 1.0 / job.params->gamma;
            g.window = (int)job.params->window;
            g.radius = job.params->window_radius;
            g.slope = job.params->itakura_max_slope;
            if (job.mat) {
                int rc = mat_launch(call, job, kd, g, k1 - k0, scratch);
                if (rc)
                    return rc;
                continue;
            }
            if (job.bi) {
                int rc = bi_split_launch(call, job, kd, g, k1 - k0, scratch);
                if (rc)
                    return rc;
                continue;
            }
            if (job.wf && !job.wf_rows) {
                TSW_CU(wf_dispatch(g, k1 - k0, kd.max_n, job.wf_rb, job.wf_val, call.stream),
                       "soft-DTW gradient kernel launch");
                continue;
            }
            if (job.wf) {
                int rc = wf_split_launch(call, job, kd, g, k1 - k0, scratch);
                if (rc)
                    return rc;
                continue;
            }
            if (!K) {
                TSW_CU(launch_any<T>(g, job.cost, k1 - k0, nt, smem, call.stream),
                       "soft-DTW gradient kernel launch");
                continue;
            }
            /* split: the forward pass, then (zeroed outputs,) the backward pass */
            g.split = (int)K;
            g.ticket = (unsigned *)job.sync;
            g.fflag = job.sync + 1;
            g.bflag = job.sync + 2 + (job.sync_ints - 2) / 2;
            TSW_CU(cudaMemsetAsync(job.sync, 0, (size_t)job.sync_ints * sizeof(int), call.stream),
                   "cudaMemsetAsync (split flags)");
            g.phase = 1;
            TSW_CU(launch_any<T>(g, job.cost, (k1 - k0) * K, nt, smem, call.stream),
                   "soft-DTW gradient kernel launch");
            if (!g.want_grad)
                continue;
            if (!kd.accumulate && !job.cost) {
                const int zb = (int)(k1 - k0 < 4096 ? k1 - k0 : 4096);
                if (kd.ga)
                    sg_zero_rows<T><<<zb, 256, 0, call.stream>>>((T *)kd.ga, kd.aoff, kd.alen,
                                                                 k0, k1 - k0, job.dim, job.flag);
                if (kd.gb)
                    sg_zero_rows<T><<<zb, 256, 0, call.stream>>>((T *)kd.gb, kd.boff, kd.blen,
                                                                 k0, k1 - k0, job.dim, job.flag);
            }
            TSW_CU(cudaMemsetAsync(job.sync, 0, sizeof(int), call.stream),
                   "cudaMemsetAsync (ticket)");
            g.phase = 2;
            TSW_CU(launch_any<T>(g, job.cost, (k1 - k0) * K, nt, smem, call.stream),
                   "soft-DTW gradient kernel launch");
            if (!job.cost && kd.gb) {
                const int rb = (int)(k1 - k0 < 4096 ? k1 - k0 : 4096);
                sg_reduce_gy<T><<<rb, 256, 0, call.stream>>>(
                    (T *)kd.gb, kd.boff, kd.alen, kd.blen, k0, k1 - k0, K, job.dim, g.gyglob,
                    per_block, kd.cb, job.flag);
                TSW_CU(cudaGetLastError(), "soft-DTW gradient reduction launch");
            }
        }
        if (ex->progress) {
            int rc = prog.report(call, k1 - k0);
            if (rc)
                return rc;
        }
    }
    return TSW_OK;
}

int sg_launch(Call &call, const SgJob &job, const SgKind *kinds, int nkinds, void *R,
              void *scratch, int64_t per_block, const int64_t *start, int64_t nch,
              const tsw_exec *ex)
{
    if (job.dtype == TSW_F32)
        return sg_launch_chunks<float>(call, job, kinds, nkinds, (double *)R, (double *)scratch,
                                       per_block, start, nch, ex);
    return sg_launch_chunks<double>(call, job, kinds, nkinds, (double *)R, (double *)scratch,
                                    per_block, start, nch, ex);
}

int copy_in(Call &call, void *dst, const void *src, size_t bytes, const char *what)
{
    if (!bytes)
        return TSW_OK;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, call.stream), what);
    return TSW_OK;
}

int copy_out(Call &call, void *dst, const void *src, size_t bytes, const char *what)
{
    if (!bytes)
        return TSW_OK;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, call.stream), what);
    return TSW_OK;
}

/* Waits for the call and turns the device check's flag into a status. */
int sg_read_flag(Call &call, const int *dflag)
{
    int flag = 0;
    TSW_CU(cudaMemcpyAsync(&flag, dflag, sizeof(int), cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (flag)");
    int rc = call.sync();
    if (rc)
        return rc;
    return flag ? TSW_ENONFINITE : TSW_OK;
}

/* An asynchronous call's check answer: copied to a pinned host word (*slot) in stream order,
 * and read by sg_slot_flag once the call's kernels are queued behind the check (they read
 * the device flag first and write nothing on non-finite input), so that the GPU does not
 * idle while the host launches them after the answer. Without pinned memory (*slot = NULL)
 * the answer is waited for at once, as before. */
int sg_async_flag(Call &call, int *dflag, int **slot)
{
    *slot = nullptr;
    if (!call.async)
        return TSW_OK;
    int *s = pinned_flag_slot();
    if (!s)
        return sg_read_flag(call, dflag);
    *(volatile int *)s = -1;
    TSW_CU(cudaMemcpyAsync(s, dflag, sizeof(int), cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (flag)");
    *slot = s;
    return TSW_OK;
}

int sg_slot_flag(Call &call, int *slot)
{
    int flag = 0;
    const int rc = pinned_flag_wait(slot, call.stream, &flag);
    return rc ? rc : flag ? TSW_ENONFINITE : TSW_OK;
}

/* Host scratch of a call: rsize, roff, chunk starts and the index upload. */
struct SgHost {
    int64_t *buf = nullptr;
    ~SgHost() { tsw__free(buf); }
};

/*
 * The call, or with query != NULL only the bytes of device memory it needs when given a
 * workspace (every problem in one chunk; grad_x/grad_y then only say whether wanted).
 * Device inputs are checked by kernels whose flag the compute kernels read first, so a
 * call synchronises once, at the end (an asynchronous call once, for the check's answer,
 * after its kernels are queued: sg_async_flag).
 * val_only: values without gradients on the wavefront kernel's float32 variant, or
 * TSW_ENOTSUP before any device work when that kernel does not cover the call.
 */
int sg_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
            const tsw_collection *y, void *values, void *grad_x, void *grad_y,
            const tsw_exec *exec, int on_device, size_t *query, bool val_only = false)
{
    int rc;
    HostColl hx, hy;
    if ((rc = hx.init(x)) || (rc = hy.init(y)))
        return rc;
    const int64_t count = x->count;
    const size_t es = tsw__dtype_size(dtype);
    const bool norm = params->normalize != 0;
    const int64_t L = hx.max_len > hy.max_len ? hx.max_len : hy.max_len;
    if (L >= ((int64_t)1 << 30))
        return TSW_EOVERFLOW; /* the kernel indexes rows and columns with int */

    /* the wavefront kernel keeps two float32 probabilities per slot of its skewed layout, the
     * thread-per-row kernel one double per cell of its diagonal-major layout */
    /* wrs: the split's rows per stripe (gradients only), first where it takes the batch:
     * it spreads a batch that one block a problem leaves on part of the SMs over all */
    /* bi: small batches with gradients in two waves at once (sdtw_bi.cuh), wrs rows a
     * stripe. Such a batch without gradients runs the forward sweep of the wavefront kernel
     * (split or one block), whose cells are the same: its values keep the bits they have
     * with gradients */
    int rb = 0, wrs = 0;
    bool bi = false;
    /* a tile of a call on several devices decides as the whole call does (multi.c) */
    int64_t count_c = count, L_c = L;
    tsw__batch_hint(&count_c, &L_c);
    if (wf_eligible(dtype, dim, L_c, false, params->gamma)) {
        if (!val_only && (wrs = bi_rows(count_c, L_c, dim, exec->device_index))) {
            rb = 1, bi = true;
            if (!grad_x && !grad_y) {
                if (int s = wf_split_rows(count_c, L_c, dim, exec->device_index))
                    wrs = s, bi = false;
                else if (L_c <= kWfMaxRows)
                    wrs = 0, bi = false, rb = wf_rows_per_lane(count_c, L_c, exec->device_index,
                                                               false, true);
            }
        } else if (!val_only && (wrs = wf_split_rows(count_c, L_c, dim, exec->device_index)))
            rb = 1;
        else
            rb = wf_rows_per_lane(count_c, L_c, exec->device_index, val_only);
    }
    /* mat: large dims (or the knob) on the costs formed first, the CM instances of the same
     * kernel: one block a problem, or the split where that leaves SMs idle and (forced)
     * wherever one block cannot take the rows; values only one block a problem or not at
     * all (the many-pairs engine then) */
    const int64_t one_block = 32 * kWfMaxWarps; /* one row per lane (the CM instances) */
    const bool mat = mat_eligible(dtype, dim, L_c, params->gamma, (int)params->window) &&
                     (!val_only || L_c <= one_block);
    if (mat) {
        /* one block a pair wherever it takes the rows (B=32 N=512 D=64 on the H200: 486 us
         * for both sweeps on one block a pair, 575 us split in stripes of 128 rows:
         * bench/RESULTS.md), the split beyond (or forced by TSWARP_SDTW_WF_SPLIT) */
        bi = false;
        wrs = val_only || (L_c <= one_block && wf_split_knob() <= 0)
                  ? 0
                  : wf_split_rows(count_c, L_c, 1, exec->device_index);
        if (!val_only && !wrs && L_c > one_block)
            wrs = 32 * kWfStripeWarps;
        /* stripes of whole 64-row tiles (sdtw_mat.cuh, SmStripe) */
        wrs = (wrs + 63) / 64 * 64;
        if (wrs > 32 * kWfStripeWarps)
            wrs = 32 * kWfStripeWarps;
        if (wrs >= L_c)
            wrs = 0;
        rb = 1;
    }
    const bool wf = rb > 0;
    const int64_t wk = wrs ? (L + wrs - 1) / wrs : 0; /* stripes per problem */
    if (val_only && (!wf || grad_x || grad_y || params->window == TSW_WINDOW_ITAKURA))
        return TSW_ENOTSUP;

    /* host scratch: rsize, roff, chunk starts (count + 1), index upload (5 count) */
    SgHost hs;
    size_t hbytes;
    if (tsw__mul_size((size_t)count, 10 * sizeof(int64_t), &hbytes) ||
        hbytes > SIZE_MAX - 64)
        return TSW_EOVERFLOW;
    hs.buf = (int64_t *)tsw__malloc(hbytes + 64);
    if (!hs.buf)
        return TSW_ENOMEM;
    /* up: the index upload, [x offsets, x lengths, y offsets, y lengths, R offsets, matrix
     * offsets]; pcell: mat, the doubles of a problem's region before its matrix (0: the
     * matrix shares the slots) */
    int64_t *rsize = hs.buf, *start = rsize + count, *up = start + count + 1;
    int64_t *roff = up + 4 * count, *coff = up + 5 * count, *pcell = up + 6 * count;
    /* the wavefront kernel's slots (split: a region per stripe) */
    auto wcells = [&](int64_t n, int64_t m) {
        if (bi)
            return (double)bi_cells(n, m);
        return wrs ? (double)((n + wrs - 1) / wrs) * (double)wf_cells(wrs, m, rb)
                   : (double)wf_cells(n, m, rb);
    };
    /* the thread-per-row kernel's S cells: a Sakoe-Chiba band's only (sg_rcells) */
    const int win = (int)params->window;
    const double rad = params->window_radius;
    for (int64_t k = 0; k < count; ++k) {
        const int64_t n = hx.len[k], m = hy.len[k];
        double r = wf ? wcells(n, m) : sg_rcells(win, rad, n, m);
        if (val_only || (wf && !grad_x && !grad_y && !bi)) {
            r = 0; /* nothing stored (the wavefront kernel stores only for a backward pass) */
        } else if (norm && wf) {
            r = fmax(r, wcells(n, n));
            r = fmax(r, wcells(m, m));
        } else if (norm) {
            r = fmax(r, sg_rcells(win, rad, n, n));
            r = fmax(r, sg_rcells(win, rad, m, m));
        }
        if (mat) {
            /* the cost matrix in the probabilities' own slots, a double each: the forward
             * pass reads a slot's cost before it stores the slot's probabilities there, the
             * backward pass its probabilities before it stores E in the low word (the same
             * lane: sdtw_wf.cuh), so the region is the larger of the two (B=32 N=512 D=64:
             * 256 MiB at peak with the matrix after the probabilities, 128 MiB so) */
            double c = wcells(n, m);
            if (norm)
                c = fmax(c, fmax(wcells(n, n), wcells(m, m)));
            pcell[k] = 0;
            r = fmax(r, c);
        }
        if (r > 4.0e18)
            return TSW_EOVERFLOW;
        rsize[k] = (int64_t)r;
    }

    const bool one_chunk = query || exec->cuda_workspace;
    Plan plan;
    SgPieces pc;
    memset(&pc, 0, sizeof(pc));
    pc.idx = plan.add((size_t)(6 * count), sizeof(int64_t));
    const size_t xbytes = (size_t)hx.rows * (size_t)dim * es;
    const size_t ybytes = (size_t)hy.rows * (size_t)dim * es;
    if (!on_device) {
        pc.x = plan.add(xbytes);
        pc.y = plan.add(ybytes);
        pc.values = plan.add((size_t)count, es);
        if (grad_x)
            pc.gx = plan.add(xbytes);
        if (grad_y)
            pc.gy = plan.add(ybytes);
    }
    pc.flag = plan.add(sizeof(int));
    /* float32 divergences: R(x, y) - (R(x, x) + R(y, y)) / 2 summed in double, then rounded
     * once (summed in float32, the three values' roundings survive the cancellation) */
    const bool vacc = norm && dtype == TSW_F32;
    if (vacc)
        pc.vacc = plan.add((size_t)count, sizeof(double));
    /* the thread-per-row kernel's boundary rows and accumulators (the wavefront kernel keeps
     * its hand-over in shared memory; split, a problem's stripe edges in 4 L words of 8
     * bytes each and, for kinds that want both gradients, its rows' gradients in L dim
     * floats: wf_split_launch) */
    const bool defer = wrs && (grad_x || grad_y) && !mat;
    const int64_t per_block = bi   ? bi_scratch(wk, L)
                              : wrs ? (wk - 1) * 4 * L + (defer ? (L * dim + 1) / 2 : 0)
                              : wf ? 0
                                   : 4 * (L + 1) + 2 * L * dim;
    const int64_t K =
        wf ? 0 : sg_split(count_c, L_c, exec->device_index, sg_narrow(params, L_c));
    int64_t r_cap, blocks_cap;
    if ((rc = sg_size(rsize, count, per_block * (K ? K : 1), sizeof(double), plan.total,
                      one_chunk, &r_cap, &blocks_cap)))
        return rc;
    const int64_t nch = sg_chunks(rsize, count, r_cap, blocks_cap, roff, start);
    const int64_t slots = blocks_cap * (K ? K : 1);
    pc.scratch = plan.add((size_t)slots * (size_t)per_block, sizeof(double));
    pc.sync = plan.add((size_t)(2 + 2 * slots), sizeof(int));
    pc.R = plan.add((size_t)r_cap, sizeof(double));
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if (query) {
        *query = plan.total;
        return TSW_OK;
    }
    DeviceGuard guard(exec->device_index);
    if (guard.rc)
        return guard.rc;
    Call call;
    tsw_exec ex = *exec;
    if ((rc = call.init(&ex, on_device != 0)) || (rc = call.alloc(&ex, plan.total)))
        return rc;

    /* index arrays: [x offsets, x lengths, y offsets, y lengths, R offsets] */
    memcpy(up, hx.off, (size_t)count * sizeof(int64_t));
    memcpy(up + count, hx.len, (size_t)count * sizeof(int64_t));
    memcpy(up + 2 * count, hy.off, (size_t)count * sizeof(int64_t));
    memcpy(up + 3 * count, hy.len, (size_t)count * sizeof(int64_t));
    /* roff already follows at up + 4 count; the matrices after each region's slots */
    for (int64_t k = 0; mat && k < count; ++k)
        coff[k] = roff[k] + pcell[k];
    int64_t *d_idx = (int64_t *)call.at(pc.idx);
    if ((rc = copy_in(call, d_idx, up, (size_t)(6 * count) * sizeof(int64_t), "index upload")))
        return rc;

    const void *xv = x->values, *yv = y->values;
    void *vals = values, *gx = grad_x, *gy = grad_y;
    int *dflag = (int *)call.at(pc.flag);
    int *slot = nullptr; /* asynchronous calls: the check's answer, read after the launches */
    if (!on_device) {
        xv = call.at(pc.x);
        yv = call.at(pc.y);
        vals = call.at(pc.values);
        gx = grad_x ? call.at(pc.gx) : nullptr;
        gy = grad_y ? call.at(pc.gy) : nullptr;
        if ((rc = copy_in(call, (void *)xv, x->values, xbytes, "cudaMemcpyAsync (x)")) ||
            (rc = copy_in(call, (void *)yv, y->values, ybytes, "cudaMemcpyAsync (y)")))
            return rc;
        /* rows outside every series stay as the caller had them */
        if (grad_x && !full_cover(hx) &&
            (rc = copy_in(call, gx, grad_x, xbytes, "cudaMemcpyAsync (grad_x)")))
            return rc;
        if (grad_y && !full_cover(hy) &&
            (rc = copy_in(call, gy, grad_y, ybytes, "cudaMemcpyAsync (grad_y)")))
            return rc;
    } else {
        /* device inputs: checked on the device before anything is written */
        TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), call.stream), "cudaMemsetAsync");
        const int parts = check2_parts(count, L, dim);
        const int64_t w = 2 * count * parts;
        const int bx = (int)(w < 4096 ? w : 4096);
        if (dtype == TSW_F32)
            check2_kernel<float><<<bx, 256, 0, call.stream>>>(
                (const float *)xv, d_idx, d_idx + count, (const float *)yv, d_idx + 2 * count,
                d_idx + 3 * count, count, dim, dflag, parts);
        else
            check2_kernel<double><<<bx, 256, 0, call.stream>>>(
                (const double *)xv, d_idx, d_idx + count, (const double *)yv,
                d_idx + 2 * count, d_idx + 3 * count, count, dim, dflag, parts);
        TSW_CU(cudaGetLastError(), "check kernel launch");
        if ((rc = sg_async_flag(call, dflag, &slot)))
            return rc;
    }

    SgKind kinds[3];
    int nk = 0;
    kinds[nk++] = SgKind{xv, yv, d_idx, d_idx + count, d_idx + 2 * count, d_idx + 3 * count,
                         hx.max_len, gx, gy, 1.0, 1.0, 1.0, 0};
    if (norm) {
        kinds[nk++] = SgKind{xv, xv, d_idx, d_idx + count, d_idx, d_idx + count,
                             hx.max_len, gx, gx, -0.5, -0.5, -0.5, 1};
        kinds[nk++] = SgKind{yv, yv, d_idx + 2 * count, d_idx + 3 * count, d_idx + 2 * count,
                             d_idx + 3 * count, hy.max_len, gy, gy, -0.5, -0.5, -0.5, 1};
    }
    SgJob job;
    memset(&job, 0, sizeof(job));
    job.dtype = dtype;
    job.dim = dim;
    job.params = params;
    job.count = count;
    job.h_rsize = rsize;
    job.d_roff = d_idx + 4 * count;
    job.max_len = L;
    job.values = vals;
    job.vacc = vacc ? (double *)call.at(pc.vacc) : nullptr;
    job.want_grad = grad_x || grad_y;
    job.flag = on_device && (!call.async || slot) ? dflag : nullptr;
    job.split = K;
    job.wf = wf;
    job.wf_rb = rb;
    job.wf_rows = wrs;
    job.wf_k = wk;
    job.wf_val = val_only;
    job.bi = bi;
    job.mat = mat;
    job.d_coff = d_idx + 5 * count;
    job.sync = (int *)call.at(pc.sync);
    job.sync_ints = 2 + 2 * slots;
    if ((rc = sg_launch(call, job, kinds, nk, call.at(pc.R), call.at(pc.scratch), per_block,
                        start, nch, &ex)))
        return rc;
    if (!on_device) {
        if ((rc = copy_out(call, values, vals, (size_t)count * es, "cudaMemcpyAsync (values)")) ||
            (grad_x && (rc = copy_out(call, grad_x, gx, xbytes, "cudaMemcpyAsync (grad_x)"))) ||
            (grad_y && (rc = copy_out(call, grad_y, gy, ybytes, "cudaMemcpyAsync (grad_y)"))))
            return rc;
        if ((rc = call.sync()))
            return rc;
    } else if ((!call.async && (rc = sg_read_flag(call, dflag))) ||
               (slot && (rc = sg_slot_flag(call, slot)))) {
        return rc;
    }
    if (ex.progress && ex.progress(ex.progress_user, count, count))
        return TSW_ECANCELED;
    return TSW_OK;
}

int sg_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count, int64_t n,
                 int64_t m, const int64_t *lengths_x, const int64_t *lengths_y,
                 const void *cost, void *values, void *grad_cost, const tsw_exec *exec,
                 int on_device, size_t *query)
{
    int rc;
    const size_t es = tsw__dtype_size(dtype);
    SgHost hs;
    size_t hbytes;
    if (tsw__mul_size((size_t)count, 8 * sizeof(int64_t), &hbytes) ||
        hbytes > SIZE_MAX - 64)
        return TSW_EOVERFLOW;
    hs.buf = (int64_t *)tsw__malloc(hbytes + 64);
    if (!hs.buf)
        return TSW_ENOMEM;
    int64_t *rsize = hs.buf, *start = rsize + count, *up = start + count + 1;
    int64_t *roff = up + 4 * count;
    int64_t L = 0;
    for (int64_t k = 0; k < count; ++k) {
        const int64_t nk = lengths_x ? lengths_x[k] : n, mk = lengths_y ? lengths_y[k] : m;
        up[k] = 0;             /* offsets: unused by cost problems */
        up[count + k] = nk;
        up[2 * count + k] = 0;
        up[3 * count + k] = mk;
        rsize[k] = (nk + mk - 1) * nk;
        L = nk > L ? nk : L;
        L = mk > L ? mk : L;
    }
    size_t cbytes;
    if (L >= ((int64_t)1 << 30) ||
        tsw__mul_size((size_t)count * (size_t)n, (size_t)m * es, &cbytes))
        return TSW_EOVERFLOW;

    const bool one_chunk = query || exec->cuda_workspace;
    Plan plan;
    SgPieces pc;
    memset(&pc, 0, sizeof(pc));
    pc.idx = plan.add((size_t)(5 * count), sizeof(int64_t));
    if (!on_device) {
        pc.cmat = plan.add(cbytes);
        pc.values = plan.add((size_t)count, es);
        if (grad_cost)
            pc.gcost = plan.add(cbytes);
    }
    pc.flag = plan.add(sizeof(int));
    const int64_t per_block = 4 * (L + 1) + 2 * L;
    const int64_t K = sg_split(count, L, exec->device_index);
    int64_t r_cap, blocks_cap;
    if ((rc = sg_size(rsize, count, per_block * (K ? K : 1), sizeof(double), plan.total,
                      one_chunk, &r_cap, &blocks_cap)))
        return rc;
    const int64_t nch = sg_chunks(rsize, count, r_cap, blocks_cap, roff, start);
    const int64_t slots = blocks_cap * (K ? K : 1);
    pc.scratch = plan.add((size_t)slots * (size_t)per_block, sizeof(double));
    pc.sync = plan.add((size_t)(2 + 2 * slots), sizeof(int));
    pc.R = plan.add((size_t)r_cap, sizeof(double));
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if (query) {
        *query = plan.total;
        return TSW_OK;
    }
    DeviceGuard guard(exec->device_index);
    if (guard.rc)
        return guard.rc;
    Call call;
    tsw_exec ex = *exec;
    if ((rc = call.init(&ex, on_device != 0)) || (rc = call.alloc(&ex, plan.total)))
        return rc;
    int64_t *d_idx = (int64_t *)call.at(pc.idx);
    if ((rc = copy_in(call, d_idx, up, (size_t)(5 * count) * sizeof(int64_t), "index upload")))
        return rc;
    const void *cm = cost;
    void *vals = values, *gc = grad_cost;
    int *dflag = (int *)call.at(pc.flag);
    int *slot = nullptr; /* asynchronous calls: the check's answer, read after the launches */
    if (!on_device) {
        cm = call.at(pc.cmat);
        vals = call.at(pc.values);
        gc = grad_cost ? call.at(pc.gcost) : nullptr;
        if ((rc = copy_in(call, (void *)cm, cost, cbytes, "cudaMemcpyAsync (cost)")))
            return rc;
    } else {
        TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), call.stream), "cudaMemsetAsync");
        const int bx = (int)(count < 4096 ? count : 4096);
        if (dtype == TSW_F32)
            cost_check_kernel<float><<<bx, 256, 0, call.stream>>>(
                (const float *)cm, count, n, m, d_idx + count, d_idx + 3 * count, dflag);
        else
            cost_check_kernel<double><<<bx, 256, 0, call.stream>>>(
                (const double *)cm, count, n, m, d_idx + count, d_idx + 3 * count, dflag);
        TSW_CU(cudaGetLastError(), "check kernel launch");
        if ((rc = sg_async_flag(call, dflag, &slot))) /* as sg_grad */
            return rc;
    }
    SgKind kind = SgKind{nullptr, nullptr, d_idx, d_idx + count, d_idx + 2 * count,
                         d_idx + 3 * count, n, nullptr, nullptr, 1.0, 1.0, 1.0, 0};
    SgJob job;
    memset(&job, 0, sizeof(job));
    job.dtype = dtype;
    job.dim = 1;
    job.params = params;
    job.count = count;
    job.h_rsize = rsize;
    job.d_roff = d_idx + 4 * count;
    job.max_len = L;
    job.cost = true;
    job.cmat = cm;
    job.cn = n;
    job.cm = m;
    job.values = vals;
    job.gcost = gc;
    job.want_grad = gc != nullptr;
    job.flag = on_device && (!call.async || slot) ? dflag : nullptr;
    job.split = K;
    job.sync = (int *)call.at(pc.sync);
    job.sync_ints = 2 + 2 * slots;
    if ((rc = sg_launch(call, job, &kind, 1, call.at(pc.R), call.at(pc.scratch), per_block,
                        start, nch, &ex)))
        return rc;
    if (!on_device) {
        if ((rc = copy_out(call, values, vals, (size_t)count * es, "cudaMemcpyAsync (values)")) ||
            (grad_cost &&
             (rc = copy_out(call, grad_cost, gc, cbytes, "cudaMemcpyAsync (grad_cost)"))))
            return rc;
        if ((rc = call.sync()))
            return rc;
    } else if ((!call.async && (rc = sg_read_flag(call, dflag))) ||
               (slot && (rc = sg_slot_flag(call, slot)))) {
        return rc;
    }
    if (ex.progress && ex.progress(ex.progress_user, count, count))
        return TSW_ECANCELED;
    return TSW_OK;
}

} // namespace

/* ---- entry points (called by the dispatch in sdtw_grad.c) -------------------------------- */

int tsw__cuda_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_collection *x, const tsw_collection *y, void *values,
                            void *grad_x, void *grad_y, const tsw_exec *exec, int on_device)
{
    return sg_grad(params, dtype, dim, x, y, values, grad_x, grad_y, exec, on_device, nullptr);
}

int tsw__cuda_soft_dtw_paired_wf(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_collection *x, const tsw_collection *y,
                                 void *values, const tsw_exec *exec, int on_device,
                                 size_t *query)
{
    /* what the wavefront kernel never takes, decided before the collections are read */
    if ((!wf_eligible(dtype, dim, 0, false, params->gamma) &&
         !mat_eligible(dtype, dim, 0, params->gamma, (int)params->window)) ||
        params->window == TSW_WINDOW_ITAKURA)
        return TSW_ENOTSUP;
    return sg_grad(params, dtype, dim, x, y, values, nullptr, nullptr, exec, on_device, query,
                   true);
}

int tsw__cuda_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype, int64_t count,
                                 int64_t n, int64_t m, const int64_t *lengths_x,
                                 const int64_t *lengths_y, const void *cost, void *values,
                                 void *grad_cost, const tsw_exec *exec, int on_device)
{
    return sg_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y, cost, values,
                        grad_cost, exec, on_device, nullptr);
}

int tsw__cuda_soft_dtw_grad_workspace(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                      const tsw_collection *x, const tsw_collection *y,
                                      int want_grad_x, int want_grad_y, const tsw_exec *exec,
                                      size_t *bytes)
{
    static char mark;
    return sg_grad(params, dtype, dim, x, y, nullptr, want_grad_x ? &mark : nullptr,
                   want_grad_y ? &mark : nullptr, exec, 1, bytes);
}

int tsw__cuda_soft_dtw_cost_grad_workspace(const tsw_params *params, tsw_dtype dtype,
                                           int64_t count, int64_t n, int64_t m,
                                           const int64_t *lengths_x, const int64_t *lengths_y,
                                           int want_grad, const tsw_exec *exec, size_t *bytes)
{
    static char mark;
    return sg_cost_grad(params, dtype, count, n, m, lengths_x, lengths_y, nullptr, nullptr,
                        want_grad ? &mark : nullptr, exec, 1, bytes);
}
