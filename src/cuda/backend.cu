/*
 * CUDA host layer: devices, memory, validation of device inputs, chunking, and the
 * public CUDA entry points. The kernels live in kernels_batch.cu (many pairs, one warp per
 * pair) and kernels_pair.cu (one long pair on every SM); kernels.h is the contract.
 *
 * Every call:
 *   1. validates its arguments on the host (api.c for host memory; here for *_device),
 *   2. makes device_index current for the calling thread (and restores the previous one),
 *   3. plans its device memory as one block of aligned pieces (the same plan answers the
 *      workspace-size queries), taken from the caller's workspace or tswarp's memory pool
 *      of the device (host.cuh: freed blocks stay mapped for the next call, up to a cap),
 *   4. enqueues everything on one stream and synchronises once at the end (and between
 *      chunks when a progress callback is set),
 *   5. turns every CUDA error into a status code with a detail message, frees what it
 *      allocated and clears the thread's non-sticky error state.
 * Nothing here prints or exits.
 */
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cuda/host.cuh"
#include "cuda/kernels.h"
#include "internal.h"
#include "common/elastic.h" /* TSW_IS_FAMILY */

#ifndef TSWARP_CUDA_ARCHS_STRING
#define TSWARP_CUDA_ARCHS_STRING ""
#endif

namespace {

using namespace tsw__cu;

/* Is there code in this build that runs on compute capability major.minor? */
int arch_runnable(int major, int minor)
{
    const char *s = TSWARP_CUDA_ARCHS_STRING;
    int cc = major * 10 + minor;
    while (*s) {
        int v = 0, ptx = 0;
        if (!strncmp(s, "sm_", 3))
            s += 3;
        else if (!strncmp(s, "compute_", 8))
            s += 8, ptx = 1;
        else {
            ++s;
            continue;
        }
        while (*s >= '0' && *s <= '9')
            v = v * 10 + (*s++ - '0');
        if (*s == 'a') /* arch-specific targets (sm_90a) run on that exact chip only */
            ++s;
        if (ptx ? v <= cc : (v / 10 == major && v <= cc))
            return 1;
    }
    return 0;
}

tsw__dcoll make_dcoll(const void *values, const void *times, const int64_t *doff,
                      const int64_t *dlen, const HostColl &h)
{
    tsw__dcoll d;
    d.values = values;
    d.times = times;
    d.offsets = doff;
    d.lengths = dlen;
    d.count = h.c->count;
    d.max_len = h.max_len;
    d.min_len = h.min_len;
    d.stat = nullptr;
    d.cum = nullptr;
    return d;
}

/* ---- the batch driver ------------------------------------------------------------------------ */

/* Pairs per launch: about 2^33 cells, so that progress and cancellation are polled often
 * and no launch runs for long. */
int64_t chunk_pairs(double cells_per_pair)
{
    double c = 8589934592.0 / (cells_per_pair > 1 ? cells_per_pair : 1);
    if (c < 1)
        c = 1;
    if (c > 1e9)
        c = 1e9;
    return (int64_t)c;
}

/* Launches pairs [first, first + count) of a mode in chunks. */
int run_pairs(Call &call, tsw__batch b, int64_t count, double cells_per_pair, void *scratch,
              size_t scratch_bytes, Progress *prog)
{
    const int64_t step = chunk_pairs(cells_per_pair);
    for (int64_t k = 0; k < count; k += step) {
        b.first = k;
        b.count = count - k < step ? count - k : step;
        TSW_CU(tsw__batch_launch(&b, scratch, scratch_bytes, call.stream), "kernel launch");
        if (prog) {
            int rc = prog->report(call, b.count);
            if (rc)
                return rc;
        }
    }
    return TSW_OK;
}

tsw__batch base_batch(const tsw_params *p, tsw_dtype dtype, int64_t dim)
{
    tsw__batch b;
    memset(&b, 0, sizeof(b));
    b.params = *p;
    b.dtype = dtype;
    b.dim = dim;
    b.finish = 1;
    return b;
}

/* Measures whose single pairs run as a paired batch of one: the elastic family and shape
 * DTW (its batch kernel, shape_dtw.cu, is its only one). */
bool on_batch(tsw_measure m) { return TSW_IS_FAMILY(m) || m == TSW_SHAPE_DTW; }

bool needs_self(const tsw_params *p) { return p->measure == TSW_SOFT_DTW && p->normalize; }

/*
 * The whole cdist/pdist on device data. x_vals.. are device pointers; hx, hy host views.
 * out: device output. For cdist, rows [row0, row0 + nrows) of x only (host chunking);
 * pdist always whole. self_x/self_y: device scratch of count elements when normalizing.
 */
struct BatchPieces {
    size_t off_x, len_x, off_y, len_y, self_x, self_y, scratch, flag;
    size_t scratch_bytes;
    size_t fam_x, fam_y;   /* the family's staging (tsw__family_prep), 0: none          */
    size_t fam_x2, fam_y2; /* ERP: the per-series flags (fam_x, fam_y: the sums, if any) */
};

/* Whether a collection's series occupy disjoint rows in order (per-point data laid out
 * like the rows, but summed within each series, then has one writer a row). */
bool disjoint(const HostColl &h)
{
    for (int64_t i = 1; i < h.c->count; ++i)
        if (h.off[i] < h.off[i - 1] + h.len[i - 1])
            return false;
    return true;
}

size_t batch_scratch(const tsw__batch &proto, int device)
{
    return tsw__batch_scratch_bytes(&proto, device);
}

/* Plans the device block of a batch call on device data (no inputs/outputs). */
BatchPieces plan_batch(Plan &plan, const tsw_params *p, tsw_dtype dtype, int64_t dim,
                       const HostColl &hx, const HostColl *hy, int device)
{
    /* (the scratch depends on the lengths, not on the mode: CDIST stands for all) */
    BatchPieces bp;
    const size_t es = tsw__dtype_size(dtype);
    const size_t nx = (size_t)hx.c->count, ny = hy ? (size_t)hy->c->count : 0;
    /* one piece for all index arrays, uploaded with one copy: [off_x len_x off_y len_y] */
    bp.off_x = plan.add(2 * (nx + ny), sizeof(int64_t));
    bp.len_x = bp.off_x + nx * sizeof(int64_t);
    bp.off_y = bp.len_x + nx * sizeof(int64_t);
    bp.len_y = bp.off_y + ny * sizeof(int64_t);
    bp.self_x = bp.self_y = 0;
    if (needs_self(p)) {
        bp.self_x = plan.add(nx, es);
        if (hy)
            bp.self_y = plan.add(ny, es);
    }
    tsw__batch proto = base_batch(p, dtype, dim);
    tsw__dcoll dx = make_dcoll(nullptr, nullptr, nullptr, nullptr, hx);
    proto.x = dx;
    proto.y = hy ? make_dcoll(nullptr, nullptr, nullptr, nullptr, *hy) : dx;
    proto.mode = hy ? TSW__PAIRS_CDIST : TSW__PAIRS_PDIST;
    proto.count = hy ? hx.c->count * hy->c->count : hx.c->count;
    bp.scratch_bytes = batch_scratch(proto, device);
    bp.scratch = plan.add(bp.scratch_bytes);
    bp.flag = plan.add(sizeof(int));
    /* the family's staging: derivatives (rows x dim values) or each series' std */
    bp.fam_x = bp.fam_y = bp.fam_x2 = bp.fam_y2 = 0;
    const int need = tsw__family_needs(p);
    if (need == 1 || need == 2) {
        const size_t ex = need == 1 ? (size_t)hx.rows * (size_t)dim : nx;
        bp.fam_x = plan.add(ex, need == 1 ? es : sizeof(double));
        if (hy) {
            const size_t ey = need == 1 ? (size_t)hy->rows * (size_t)dim : ny;
            bp.fam_y = plan.add(ey, need == 1 ? es : sizeof(double));
        }
    } else if (need == 3) { /* ERP: the sums where the series are disjoint, the flags */
        bp.fam_x2 = plan.add(nx, sizeof(double));
        bp.fam_x = disjoint(hx) ? plan.add((size_t)hx.rows, es) : 0;
        if (hy) {
            bp.fam_y2 = plan.add(ny, sizeof(double));
            bp.fam_y = disjoint(*hy) ? plan.add((size_t)hy->rows, es) : 0;
        }
    }
    return bp;
}

/* The family's staging (kernels.h: tsw__family_prep) of one collection: proto's d then
 * reads the derivatives, or carries each series' std. */
int stage_family(Call &call, const tsw__batch &proto, tsw__dcoll *d, size_t piece,
                 size_t piece2)
{
    const int need = tsw__family_needs(&proto.params);
    if (!need)
        return TSW_OK;
    if (need == 3) { /* ERP: the sums (piece, if any) and the flags (piece2) */
        void *sums = piece ? call.at(piece) : nullptr;
        double *flags = (double *)call.at(piece2);
        TSW_CU(tsw__family_prep(&proto.params, proto.dtype, proto.dim, d, sums, flags,
                                call.stream),
               "family staging kernel launch");
        d->cum = sums;
        d->stat = flags;
        return TSW_OK;
    }
    void *buf = call.at(piece);
    TSW_CU(tsw__family_prep(&proto.params, proto.dtype, proto.dim, d, buf, (double *)buf,
                            call.stream),
           "family staging kernel launch");
    if (need == 1)
        d->values = buf;
    else
        d->stat = buf;
    return TSW_OK;
}

/* Stages x and y (cdist, paired) or x (pdist: y is x). */
int stage_families(Call &call, tsw__batch &proto, const BatchPieces &bp, bool cd)
{
    int rc = stage_family(call, proto, &proto.x, bp.fam_x, bp.fam_x2);
    if (!rc && cd)
        rc = stage_family(call, proto, &proto.y, bp.fam_y, bp.fam_y2);
    if (!cd)
        proto.y = proto.x;
    return rc;
}

int upload_index(Call &call, const BatchPieces &bp, const HostColl &hx, const HostColl *hy)
{
    const size_t nx = (size_t)hx.c->count, ny = hy ? (size_t)hy->c->count : 0;
    const size_t bytes = 2 * (nx + ny) * sizeof(int64_t);
    int64_t *h = (int64_t *)tsw__malloc(bytes);
    if (!h)
        return TSW_ENOMEM;
    memcpy(h, hx.off, nx * sizeof(int64_t));
    memcpy(h + nx, hx.len, nx * sizeof(int64_t));
    if (hy) {
        memcpy(h + 2 * nx, hy->off, ny * sizeof(int64_t));
        memcpy(h + 2 * nx + ny, hy->len, ny * sizeof(int64_t));
    }
    /* a pageable source: the copy is staged before cudaMemcpyAsync returns */
    cudaError_t e = cudaMemcpyAsync(call.at(bp.off_x), h, bytes, cudaMemcpyHostToDevice,
                                    call.stream);
    tsw__free(h);
    if (e != cudaSuccess)
        return fail(e, "cudaMemcpyAsync (offsets, lengths)");
    return TSW_OK;
}

/* Enqueues the check of a collection's device values/times: bit 1 of *dflag for a
 * non-finite value, bit 2 for timestamps that are not strictly increasing (read_flag
 * waits and turns the flag into the status). */
int check_on_device(Call &call, tsw_dtype dtype, int64_t dim, const tsw__dcoll &d, int *dflag,
                    bool twed)
{
    const void *times = twed ? d.times : nullptr;
    int blocks = (int)(d.count < 4096 ? d.count : 4096);
    if (dtype == TSW_F32)
        check_kernel<float><<<blocks, 256, 0, call.stream>>>(
            (const float *)d.values, (const float *)times, d.offsets, d.lengths, d.count, dim,
            dflag);
    else
        check_kernel<double><<<blocks, 256, 0, call.stream>>>(
            (const double *)d.values, (const double *)times, d.offsets, d.lengths, d.count,
            dim, dflag);
    TSW_CU(cudaGetLastError(), "check kernel launch");
    return TSW_OK;
}

int clear_flag(Call &call, int *dflag)
{
    TSW_CU(cudaMemsetAsync(dflag, 0, sizeof(int), call.stream), "cudaMemsetAsync");
    return TSW_OK;
}

/* Waits for the call and turns the check flag into its status. */
int read_flag(Call &call, const int *dflag)
{
    int flag = 0;
    TSW_CU(cudaMemcpyAsync(&flag, dflag, sizeof(int), cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (flag)");
    int rc = call.sync();
    if (rc)
        return rc;
    if (flag & 1)
        return TSW_ENONFINITE;
    if (flag & 2)
        return TSW_ETIMES;
    return TSW_OK;
}

/*
 * Soft-DTW divergence needs the raw self values of every series first; pdist FULL needs
 * its diagonal. `rows` limits cdist to x rows [row0, row0 + nrows) writing out (nrows, ny).
 */
int compute_cdist(Call &call, const tsw__batch &proto, int64_t row0, int64_t nrows,
                  void *out, void *scratch, size_t scratch_bytes, Progress *prog,
                  double cells_per_pair)
{
    const size_t es = tsw__dtype_size(proto.dtype);
    tsw__batch b = proto;
    b.mode = TSW__PAIRS_CDIST;
    b.x.offsets = proto.x.offsets + row0;
    b.x.lengths = proto.x.lengths + row0;
    if (proto.x.stat) /* EDR's per-series std */
        b.x.stat = (const double *)proto.x.stat + row0;
    b.x.count = nrows;
    b.out = out;
    if (proto.self_x)
        b.self_x = (const char *)proto.self_x + (size_t)row0 * es;
    return run_pairs(call, b, nrows * proto.y.count, cells_per_pair, scratch, scratch_bytes,
                     prog);
}

int compute_selfs(Call &call, const tsw__batch &proto, bool with_y, void *scratch,
                  size_t scratch_bytes, double cx, double cy)
{
    tsw__batch s = proto;
    s.mode = TSW__PAIRS_SELF;
    s.finish = 0;
    s.self_stride = 1;
    s.self_x = s.self_y = nullptr;
    s.out = (void *)proto.self_x;
    int rc = run_pairs(call, s, proto.x.count, cx, scratch, scratch_bytes, nullptr);
    if (rc || !with_y)
        return rc;
    s.x = proto.y;
    s.out = (void *)proto.self_y;
    return run_pairs(call, s, proto.y.count, cy, scratch, scratch_bytes, nullptr);
}

int compute_pdist(Call &call, const tsw__batch &proto, tsw_pdist_layout layout, void *out,
                  void *scratch, size_t scratch_bytes, Progress *prog, double cells_per_pair,
                  double self_cells)
{
    const int64_t n = proto.x.count;
    tsw__batch b = proto;
    b.mode = TSW__PAIRS_PDIST;
    b.layout = layout;
    b.out = out;
    b.self_y = b.self_x;
    int rc = run_pairs(call, b, n * (n - 1) / 2, cells_per_pair, scratch, scratch_bytes, prog);
    if (rc || layout != TSW_PDIST_FULL)
        return rc;
    /* The diagonal: d(x_i, x_i) is 0 for DTW and TWED (the CPU backend writes 0 too; the
     * cosine cost of a point with itself can round to +-1e-16) and for the divergence;
     * plain soft-DTW computes sdtw(x_i, x_i). */
    const size_t es = tsw__dtype_size(proto.dtype);
    if (proto.params.measure != TSW_SOFT_DTW || proto.params.normalize) {
        TSW_CU(cudaMemset2DAsync(out, (size_t)(n + 1) * es, 0, es, (size_t)n, call.stream),
               "cudaMemset2DAsync (diagonal)");
        return TSW_OK;
    }
    tsw__batch d = b;
    d.mode = TSW__PAIRS_SELF;
    d.self_stride = n + 1;
    return run_pairs(call, d, n, self_cells, scratch, scratch_bytes, nullptr);
}

int compute_paired(Call &call, const tsw__batch &proto, void *out, void *scratch,
                   size_t scratch_bytes, Progress *prog, double cells_per_pair)
{
    tsw__batch b = proto;
    b.mode = TSW__PAIRS_PAIRED;
    b.out = out;
    return run_pairs(call, b, proto.x.count, cells_per_pair, scratch, scratch_bytes, prog);
}

double mean_sq(const HostColl &h)
{
    return (h.cells / (double)h.c->count) * (h.cells / (double)h.c->count);
}

/* Soft-DTW divergence: points proto at the self-value pieces of the block and computes
 * the raw self values of x (and y) before the pairs. Nothing to do for other measures. */
int start_selfs(Call &call, tsw__batch &proto, const BatchPieces &bp, const HostColl &hx,
                const HostColl *hy, void *scratch)
{
    if (!needs_self(&proto.params))
        return TSW_OK;
    proto.self_x = call.at(bp.self_x);
    proto.self_y = hy ? call.at(bp.self_y) : proto.self_x;
    return compute_selfs(call, proto, hy != nullptr, scratch, bp.scratch_bytes, mean_sq(hx),
                         hy ? mean_sq(*hy) : mean_sq(hx));
}

/* ---- host-memory batch calls ------------------------------------------------------------------ */

int host_batch(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
               const tsw_collection *y, tsw_pdist_layout layout, void *out,
               const tsw_exec *ex, bool paired = false)
{
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    if (paired && p->measure == TSW_SOFT_DTW) { /* float32 batches: the wavefront kernel */
        const int rw = tsw__cuda_soft_dtw_paired_wf(p, dtype, dim, x, y, out, ex, 0, nullptr);
        if (rw != TSW_ENOTSUP)
            return rw;
    }
    const bool cd = y != nullptr;
    const bool twed = p->measure == TSW_TWED;
    const size_t es = tsw__dtype_size(dtype);
    HostColl hx, hy;
    int rc;
    if ((rc = hx.init(x)) || (cd && (rc = hy.init(y))))
        return rc;
    const HostColl *phy = cd ? &hy : nullptr;

    Call call;
    if ((rc = call.init(ex, false)))
        return rc;
    Plan plan;
    BatchPieces bp = plan_batch(plan, p, dtype, dim, hx, phy, call.device);
    const size_t vx = plan.add((size_t)hx.rows * (size_t)dim, es);
    const size_t tx = twed && x->times ? plan.add((size_t)hx.rows, es) : 0;
    size_t vy = 0, ty = 0;
    if (cd) {
        vy = plan.add((size_t)hy.rows * (size_t)dim, es);
        ty = twed && y->times ? plan.add((size_t)hy.rows, es) : 0;
    }
    /* Output: pdist whole; cdist in row blocks that fit in the free memory. */
    const int64_t nx = x->count, ny = cd ? y->count : 0;
    int64_t rows_per_chunk = nx;
    size_t out_elems = cd ? (size_t)nx * (size_t)ny : (size_t)tsw_pdist_size(nx, layout);
    if (paired)
        out_elems = (size_t)nx;
    if (cd && !paired) {
        size_t free_b = 0, total_b = 0;
        if (mem_info(&free_b, &total_b) != cudaSuccess) {
            (void)cudaGetLastError();
            free_b = (size_t)-1;
        }
        const size_t margin = (size_t)64 << 20;
        size_t avail = free_b > plan.total + margin ? free_b - plan.total - margin : 0;
        size_t row_bytes = (size_t)ny * es;
        if ((size_t)nx * row_bytes > avail) {
            rows_per_chunk = (int64_t)(avail / 2 / (row_bytes ? row_bytes : 1));
            if (rows_per_chunk < 1)
                rows_per_chunk = 1;
        }
        out_elems = (size_t)rows_per_chunk * (size_t)ny;
    }
    const size_t vo = plan.add(out_elems, es);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    tsw_exec ex_own = *ex;
    ex_own.cuda_workspace = nullptr; /* host calls always allocate their own */
    if ((rc = call.alloc(&ex_own, plan.total)))
        return rc;

    if ((rc = upload_index(call, bp, hx, phy)))
        return rc;
    TSW_CU(cudaMemcpyAsync(call.at(vx), x->values, (size_t)hx.rows * (size_t)dim * es,
                           cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpyAsync (x)");
    if (tx)
        TSW_CU(cudaMemcpyAsync(call.at(tx), x->times, (size_t)hx.rows * es,
                               cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (x times)");
    if (cd) {
        TSW_CU(cudaMemcpyAsync(call.at(vy), y->values, (size_t)hy.rows * (size_t)dim * es,
                               cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (y)");
        if (ty)
            TSW_CU(cudaMemcpyAsync(call.at(ty), y->times, (size_t)hy.rows * es,
                                   cudaMemcpyHostToDevice, call.stream),
                   "cudaMemcpyAsync (y times)");
    }

    tsw__batch proto = base_batch(p, dtype, dim);
    proto.x = make_dcoll(call.at(vx), tx ? call.at(tx) : nullptr,
                         (const int64_t *)call.at(bp.off_x), (const int64_t *)call.at(bp.len_x),
                         hx);
    proto.y = cd ? make_dcoll(call.at(vy), ty ? call.at(ty) : nullptr,
                              (const int64_t *)call.at(bp.off_y),
                              (const int64_t *)call.at(bp.len_y), hy)
                 : proto.x;
    void *scratch = bp.scratch_bytes ? call.at(bp.scratch) : nullptr;
    const double cx = mean_sq(hx);
    const double cxy = cd ? (hx.cells / nx) * (hy.cells / ny) : cx;
    if ((rc = stage_families(call, proto, bp, cd)))
        return rc;
    if ((rc = start_selfs(call, proto, bp, hx, phy, scratch)))
        return rc;
    Progress prog{ex, paired ? nx : cd ? nx * ny : nx * (nx - 1) / 2};
    Progress *pp = ex->progress ? &prog : nullptr;
    if (paired) {
        if ((rc = compute_paired(call, proto, call.at(vo), scratch, bp.scratch_bytes, pp, cxy)))
            return rc;
        TSW_CU(cudaMemcpyAsync(out, call.at(vo), out_elems * es, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpyAsync (out)");
    } else if (cd) {
        for (int64_t r0 = 0; r0 < nx; r0 += rows_per_chunk) {
            int64_t nr = nx - r0 < rows_per_chunk ? nx - r0 : rows_per_chunk;
            if ((rc = compute_cdist(call, proto, r0, nr, call.at(vo), scratch,
                                    bp.scratch_bytes, pp, cxy)))
                return rc;
            TSW_CU(cudaMemcpyAsync((char *)out + (size_t)r0 * (size_t)ny * es, call.at(vo),
                                   (size_t)nr * (size_t)ny * es, cudaMemcpyDeviceToHost,
                                   call.stream),
                   "cudaMemcpyAsync (out)");
        }
    } else {
        if ((rc = compute_pdist(call, proto, layout, call.at(vo), scratch, bp.scratch_bytes, pp,
                                cx, cx)))
            return rc;
        TSW_CU(cudaMemcpyAsync(out, call.at(vo), out_elems * es, cudaMemcpyDeviceToHost,
                               call.stream),
               "cudaMemcpyAsync (out)");
    }
    if ((rc = call.sync()))
        return rc;
    if (ex->progress && ex->progress(ex->progress_user, prog.total, prog.total))
        return TSW_ECANCELED;
    return TSW_OK;
}

/* ---- device-memory batch calls ------------------------------------------------------------ */

int device_batch(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
                 const tsw_collection *y, tsw_pdist_layout layout, void *out,
                 const tsw_exec *exec, size_t *query, bool paired = false)
{
    tsw__clear_detail();
    tsw_exec ex;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    int rc;
    const bool cd = y != nullptr;
    if ((rc = check_common(p, dtype, dim, &ex)))
        return rc;
    if (!query && !out)
        return TSW_EINVAL;
    if (!cd && layout != TSW_PDIST_FULL && layout != TSW_PDIST_CONDENSED)
        return TSW_EINVAL;
    if (query) { /* values may be NULL in a size query */
        tsw_collection qx, qy;
        if (!x || (cd && !y))
            return TSW_EINVAL;
        qx = *x;
        qx.values = qx.values ? qx.values : (const void *)1;
        if (cd) {
            qy = *y;
            qy.values = qy.values ? qy.values : (const void *)1;
        }
        if ((rc = check_device_coll(dim, &qx)) || (cd && (rc = check_device_coll(dim, &qy))))
            return rc;
    } else if ((rc = check_device_coll(dim, x)) || (cd && (rc = check_device_coll(dim, y)))) {
        return rc;
    }
    if (paired && x->count != y->count)
        return TSW_ESHAPE;
    if (paired && p->measure == TSW_SOFT_DTW) { /* float32 batches: the wavefront kernel */
        rc = tsw__cuda_soft_dtw_paired_wf(p, dtype, dim, x, y, out, &ex, 1, query);
        if (rc != TSW_ENOTSUP)
            return rc;
    }
    if (cd) {
        size_t c;
        if (tsw__mul_size((size_t)x->count, (size_t)y->count, &c))
            return TSW_EOVERFLOW;
    } else if (tsw_pdist_size(x->count, layout) == 0 && x->count > 1) {
        return TSW_EOVERFLOW;
    }
    DeviceGuard guard(ex.device_index);
    if (guard.rc)
        return guard.rc;
    HostColl hx, hy;
    if ((rc = hx.init(x)) || (cd && (rc = hy.init(y))))
        return rc;
    if (TSW_IS_DERIVATIVE(p->measure) && (hx.min_len < 3 || (cd && hy.min_len < 3))) {
        tsw__set_detail("a series has %lld points: DDTW and WDDTW need at least 3",
                        (long long)(cd && hy.min_len < hx.min_len ? hy.min_len : hx.min_len));
        return TSW_ESHAPE;
    }
    const HostColl *phy = cd ? &hy : nullptr;
    Plan plan;
    BatchPieces bp = plan_batch(plan, p, dtype, dim, hx, phy, ex.device_index);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if (query) {
        *query = plan.total;
        return TSW_OK;
    }
    Call call;
    if ((rc = call.init(&ex, true)) || (rc = call.alloc(&ex, plan.total)))
        return rc;
    if ((rc = upload_index(call, bp, hx, phy)))
        return rc;
    const bool twed = p->measure == TSW_TWED;
    tsw__batch proto = base_batch(p, dtype, dim);
    proto.x = make_dcoll(x->values, twed ? x->times : nullptr,
                         (const int64_t *)call.at(bp.off_x), (const int64_t *)call.at(bp.len_x),
                         hx);
    proto.y = cd ? make_dcoll(y->values, twed ? y->times : nullptr,
                              (const int64_t *)call.at(bp.off_y),
                              (const int64_t *)call.at(bp.len_y), hy)
                 : proto.x;
    int *flag = (int *)call.at(bp.flag);
    /* checked before anything is computed: a refused call writes nothing (one round trip) */
    if ((rc = clear_flag(call, flag)) ||
        (rc = check_on_device(call, dtype, dim, proto.x, flag, twed)) ||
        (cd && (rc = check_on_device(call, dtype, dim, proto.y, flag, twed))) ||
        (rc = read_flag(call, flag)))
        return rc;
    void *scratch = bp.scratch_bytes ? call.at(bp.scratch) : nullptr;
    const int64_t nx = x->count, ny = cd ? y->count : 0;
    const double cx = mean_sq(hx);
    const double cxy = cd ? (hx.cells / nx) * (hy.cells / ny) : cx;
    if ((rc = stage_families(call, proto, bp, cd)))
        return rc;
    if ((rc = start_selfs(call, proto, bp, hx, phy, scratch)))
        return rc;
    Progress prog{&ex, paired ? nx : cd ? nx * ny : nx * (nx - 1) / 2};
    Progress *pp = ex.progress ? &prog : nullptr;
    if (paired)
        rc = compute_paired(call, proto, out, scratch, bp.scratch_bytes, pp, cxy);
    else if (cd)
        rc = compute_cdist(call, proto, 0, nx, out, scratch, bp.scratch_bytes, pp, cxy);
    else
        rc = compute_pdist(call, proto, layout, out, scratch, bp.scratch_bytes, pp, cx, cx);
    if (rc)
        return rc;
    if ((rc = call.finish()))
        return rc;
    if (ex.progress && ex.progress(ex.progress_user, prog.total, prog.total))
        return TSW_ECANCELED;
    return TSW_OK;
}

/* ---- one pair ----------------------------------------------------------------------------------- */

/* Device block of a one-pair call: the four index values of a one-pair batch, three raw
 * results, the kernel scratch (enough for every pair the call runs) and the flag. */
struct PairPieces {
    size_t index, raw, scratch, flag, scratch_bytes;
};

bool is_long(int64_t n, int64_t m)
{
    return (double)n * (double)m >= (double)TSW__LONG_PAIR_MIN_CELLS;
}

/* Scratch of one pair (n, m) on its path. */
size_t pair_scratch(const tsw_params *p, tsw_dtype dtype, int64_t dim, int64_t n, int64_t m,
                    int device)
{
    if (is_long(n, m))
        return tsw__pair_scratch_bytes(p, dtype, dim, n, m, device);
    tsw__batch proto = base_batch(p, dtype, dim);
    proto.mode = TSW__PAIRS_CDIST;
    proto.count = 1;
    proto.x.count = proto.y.count = 1;
    proto.x.max_len = proto.x.min_len = n;
    proto.y.max_len = proto.y.min_len = m;
    return tsw__batch_scratch_bytes(&proto, device);
}

PairPieces plan_pair(Plan &plan, const tsw_params *p, tsw_dtype dtype, int64_t dim, int64_t n,
                     int64_t m, int device)
{
    PairPieces pp;
    const size_t es = tsw__dtype_size(dtype);
    pp.index = plan.add(4, sizeof(int64_t));
    pp.raw = plan.add(3, es);
    pp.scratch_bytes = pair_scratch(p, dtype, dim, n, m, device);
    if (needs_self(p)) { /* the divergence also runs (a, a) and (b, b) */
        size_t s1 = pair_scratch(p, dtype, dim, n, n, device);
        size_t s2 = pair_scratch(p, dtype, dim, m, m, device);
        pp.scratch_bytes = s1 > pp.scratch_bytes ? s1 : pp.scratch_bytes;
        pp.scratch_bytes = s2 > pp.scratch_bytes ? s2 : pp.scratch_bytes;
    }
    pp.scratch = plan.add(pp.scratch_bytes);
    pp.flag = plan.add(sizeof(int));
    return pp;
}

/* Raw value of (a, b) into raw_out (device, dtype), on the path its size calls for. */
int pair_raw(Call &call, const PairPieces &pp, const tsw_params *p, tsw_dtype dtype,
             int64_t dim, const void *a, const void *ta, int64_t n, const void *b,
             const void *tb, int64_t m, void *raw_out)
{
    void *scratch = pp.scratch_bytes ? call.at(pp.scratch) : nullptr;
    if (is_long(n, m)) {
        TSW_CU(tsw__pair_launch(p, dtype, dim, a, ta, n, b, tb, m, raw_out, scratch,
                                pp.scratch_bytes, call.stream),
               "kernel launch (long pair)");
        return TSW_OK;
    }
    int64_t idx[4] = {0, n, 0, m};
    int64_t *d = (int64_t *)call.at(pp.index);
    TSW_CU(cudaMemcpyAsync(d, idx, sizeof(idx), cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpyAsync (index)");
    tsw__batch bt = base_batch(p, dtype, dim);
    bt.finish = 0;
    bt.mode = TSW__PAIRS_CDIST;
    bt.x.values = a;
    bt.x.times = ta;
    bt.x.offsets = d;
    bt.x.lengths = d + 1;
    bt.x.count = 1;
    bt.x.max_len = bt.x.min_len = n;
    bt.y.values = b;
    bt.y.times = tb;
    bt.y.offsets = d + 2;
    bt.y.lengths = d + 3;
    bt.y.count = 1;
    bt.y.max_len = bt.y.min_len = m;
    bt.first = 0;
    bt.count = 1;
    bt.out = raw_out;
    /* idx may go out of scope now: a copy from pageable memory is staged before
     * cudaMemcpyAsync returns, and the launch is ordered after it on the stream */
    TSW_CU(tsw__batch_launch(&bt, scratch, pp.scratch_bytes, call.stream), "kernel launch");
    return TSW_OK;
}

/* Raw (a,b) [and (a,a), (b,b) for the divergence], then the finished value on the host. */
int pair_compute(Call &call, const PairPieces &pp, const tsw_params *p, tsw_dtype dtype,
                 int64_t dim, const void *a, const void *ta, int64_t n, const void *b,
                 const void *tb, int64_t m, double *value)
{
    const size_t es = tsw__dtype_size(dtype);
    char *raw = (char *)call.at(pp.raw);
    int rc = pair_raw(call, pp, p, dtype, dim, a, ta, n, b, tb, m, raw);
    int k = 1;
    if (!rc && needs_self(p)) {
        rc = pair_raw(call, pp, p, dtype, dim, a, nullptr, n, a, nullptr, n, raw + es);
        if (!rc)
            rc = pair_raw(call, pp, p, dtype, dim, b, nullptr, m, b, nullptr, m, raw + 2 * es);
        k = 3;
    }
    if (rc)
        return rc;
    double host[3];
    float f[3];
    void *dst = dtype == TSW_F32 ? (void *)f : (void *)host;
    TSW_CU(cudaMemcpyAsync(dst, raw, (size_t)k * es, cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (value)");
    if ((rc = call.sync()))
        return rc;
    if (dtype == TSW_F32)
        for (int i = 0; i < k; ++i)
            host[i] = f[i];
    double v = host[0];
    if (k == 3) /* composed as the CPU path does */
        v = v - 0.5 * (host[1] + host[2]);
    v = tsw__finish(p, v);
    if (dtype == TSW_F32)
        v = (double)(float)v;
    *value = v;
    return TSW_OK;
}

/* One pair of the elastic family: a paired batch of one (host or device memory), so
 * that it gets the batch's staging; the value widened to double (host) or written as one
 * element of dtype (device). */
int family_pair(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                const tsw_series *b, void *out, const tsw_exec *ex, bool device, size_t *query)
{
    tsw_collection x, y;
    memset(&x, 0, sizeof(x));
    memset(&y, 0, sizeof(y));
    x.values = a->values;
    x.length = a->length;
    x.count = 1;
    y.values = b->values;
    y.length = b->length;
    y.count = 1;
    if (device)
        return device_batch(p, dtype, dim, &x, &y, TSW_PDIST_FULL, out, ex, query, true);
    double d = 0;
    float f = 0;
    int rc = host_batch(p, dtype, dim, &x, &y, TSW_PDIST_FULL,
                        dtype == TSW_F32 ? (void *)&f : (void *)&d, ex, true);
    if (!rc)
        *(double *)out = dtype == TSW_F32 ? (double)f : d;
    return rc;
}

int device_pair(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                const tsw_series *b, void *out, const tsw_exec *exec, size_t *query)
{
    if (p && on_batch(p->measure) && a && b)
        return family_pair(p, dtype, dim, a, b, out, exec, true, query);
    tsw__clear_detail();
    tsw_exec ex;
    if (exec)
        ex = *exec;
    else
        tsw_exec_default(&ex);
    int rc;
    if ((rc = check_common(p, dtype, dim, &ex)))
        return rc;
    if (!a || !b || (!query && (!a->values || !b->values || !out)))
        return TSW_EINVAL;
    if (a->length < 1 || b->length < 1)
        return TSW_ESHAPE;
    size_t t;
    if (tsw__mul_size((size_t)a->length, (size_t)dim, &t) ||
        tsw__mul_size((size_t)b->length, (size_t)dim, &t))
        return TSW_EOVERFLOW;
    DeviceGuard guard(ex.device_index);
    if (guard.rc)
        return guard.rc;
    Plan plan;
    PairPieces pp = plan_pair(plan, p, dtype, dim, a->length, b->length, ex.device_index);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    if (query) {
        *query = plan.total;
        return TSW_OK;
    }
    Call call;
    if ((rc = call.init(&ex, true)) || (rc = call.alloc(&ex, plan.total)))
        return rc;
    const bool twed = p->measure == TSW_TWED;
    /* validate: one-series collections over the two inputs */
    int64_t idx[4] = {0, a->length, 0, b->length};
    int64_t *d = (int64_t *)call.at(pp.index);
    TSW_CU(cudaMemcpyAsync(d, idx, sizeof(idx), cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpyAsync (index)");
    tsw__dcoll da = {a->values, twed ? a->times : nullptr, d, d + 1, 1, a->length, a->length};
    tsw__dcoll db = {b->values, twed ? b->times : nullptr, d + 2, d + 3, 1, b->length, b->length};
    int *flag = (int *)call.at(pp.flag);
    if ((rc = clear_flag(call, flag)) || (rc = check_on_device(call, dtype, dim, da, flag, twed)) ||
        (rc = check_on_device(call, dtype, dim, db, flag, twed)) || (rc = read_flag(call, flag)))
        return rc;
    double v;
    if ((rc = pair_compute(call, pp, p, dtype, dim, a->values, da.times, a->length, b->values,
                           db.times, b->length, &v)))
        return rc;
    if (dtype == TSW_F32) {
        float f = (float)v;
        TSW_CU(cudaMemcpyAsync(out, &f, sizeof(f), cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (out)");
        return call.finish(); /* (a copy from pageable memory is staged before it returns) */
    }
    TSW_CU(cudaMemcpyAsync(out, &v, sizeof(v), cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpyAsync (out)");
    return call.finish();
}

} // namespace

/* ---- entry points (device.c, api.c and the others call them after their checks) ---------- */

extern "C" {

int tsw__cuda_device_count(int *count)
{
    if (!count)
        return TSW_EINVAL;
    *count = device_count_cached();
    return TSW_OK;
}

int tsw__cuda_device_info(int index, tsw_cuda_device *info)
{
    if (!info)
        return TSW_EINVAL;
    memset(info, 0, sizeof(*info));
    tsw__clear_detail();
    DeviceGuard guard(index);
    if (guard.rc)
        return guard.rc;
    cudaDeviceProp prop;
    TSW_CU(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties");
    strncpy(info->name, prop.name, sizeof(info->name) - 1);
    info->major = prop.major;
    info->minor = prop.minor;
    info->multiprocessors = prop.multiProcessorCount;
    info->total_memory = prop.totalGlobalMem;
    /* The driver's figure, as nvidia-smi and torch.cuda.mem_get_info report it: what our
     * pool keeps idle is not free to other processes; tsw_cuda_cached_bytes tells it apart. */
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) == cudaSuccess)
        info->free_memory = fr;
    (void)cudaGetLastError();
    info->runnable = arch_runnable(prop.major, prop.minor);
    return TSW_OK;
}

int tsw__cuda_cached_bytes(int device, size_t *bytes)
{
    if (!bytes)
        return TSW_EINVAL;
    *bytes = 0;
    tsw__clear_detail();
    int rc = check_device(device);
    if (rc)
        return rc;
    *bytes = pool_idle(device); /* no pool yet: 0, and no context is created */
    return TSW_OK;
}

/* `bytes` between host memory and device memory of `device`, in order on `stream` (NULL:
 * the legacy default stream), waited for. to_device: host -> device. */
int tsw__cuda_copy(int device, void *stream, void *dst, const void *src, size_t bytes,
                   int to_device)
{
    DeviceGuard guard(device);
    if (guard.rc)
        return guard.rc;
    cudaStream_t s = (cudaStream_t)stream;
    TSW_CU(cudaMemcpyAsync(dst, src, bytes,
                           to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s),
           to_device ? "cudaMemcpyAsync (results to the caller's device)"
                     : "cudaMemcpyAsync (inputs to the host)");
    TSW_CU(cudaStreamSynchronize(s), "cudaStreamSynchronize (staging)");
    return TSW_OK;
}

int tsw__cuda_empty_cache(int device)
{
    tsw__clear_detail();
    int first = device, last = device;
    if (device == -1) {
        first = 0;
        last = device_count_cached() - 1;
    } else {
        int rc = check_device(device);
        if (rc)
            return rc;
    }
    for (int d = first; d <= last; ++d) {
        cudaMemPool_t pool = pool_if_made(d);
        if (!pool)
            continue;
        DeviceGuard guard(d);
        if (guard.rc)
            return guard.rc;
        /* Blocks whose stream-ordered free (an asynchronous call's) has not been seen to
         * complete still count as in use: wait for the device's work first. */
        TSW_CU(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        TSW_CU(cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
    }
    return TSW_OK;
}

int tsw__cuda_versions(int *runtime, int *driver)
{
    int r = 0, d = 0;
    if (cudaRuntimeGetVersion(&r) != cudaSuccess)
        r = 0;
    if (cudaDriverGetVersion(&d) != cudaSuccess)
        d = 0;
    (void)cudaGetLastError();
    if (runtime)
        *runtime = r;
    if (driver)
        *driver = d;
    return TSW_OK;
}

int tsw__cuda_auto(const tsw_exec *exec, double cells)
{
    /* The GPU wins once the work outgrows a few tens of milliseconds of CPU time (the
     * CPU kernels run about 1e9 cells per second per thread; the first CUDA call of a
     * process also pays for creating the context). */
    int threads = exec->n_threads > 0 ? exec->n_threads : tsw_max_threads();
    if (cells < 5e7 * (double)(threads > 0 ? threads : 1))
        return 0;
    return exec->device_index < device_count_cached();
}

int tsw__cuda_distance(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_series *a,
                       const tsw_series *b, double *out, const tsw_exec *ex)
{
    if (on_batch(p->measure))
        return family_pair(p, dtype, dim, a, b, out, ex, false, nullptr);
    DeviceGuard guard(ex->device_index);
    if (guard.rc)
        return guard.rc;
    const size_t es = tsw__dtype_size(dtype);
    const bool twed = p->measure == TSW_TWED;
    Call call;
    int rc;
    if ((rc = call.init(ex, false)))
        return rc;
    Plan plan;
    PairPieces pp = plan_pair(plan, p, dtype, dim, a->length, b->length, ex->device_index);
    const size_t va = plan.add((size_t)a->length * (size_t)dim, es);
    const size_t vb = plan.add((size_t)b->length * (size_t)dim, es);
    const size_t ta = twed && a->times ? plan.add((size_t)a->length, es) : 0;
    const size_t tb = twed && b->times ? plan.add((size_t)b->length, es) : 0;
    if (plan.overflow)
        return TSW_EOVERFLOW;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;
    TSW_CU(cudaMemcpyAsync(call.at(va), a->values, (size_t)a->length * (size_t)dim * es,
                           cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpyAsync (a)");
    TSW_CU(cudaMemcpyAsync(call.at(vb), b->values, (size_t)b->length * (size_t)dim * es,
                           cudaMemcpyHostToDevice, call.stream),
           "cudaMemcpyAsync (b)");
    if (ta)
        TSW_CU(cudaMemcpyAsync(call.at(ta), a->times, (size_t)a->length * es,
                               cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (a times)");
    if (tb)
        TSW_CU(cudaMemcpyAsync(call.at(tb), b->times, (size_t)b->length * es,
                               cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (b times)");
    return pair_compute(call, pp, p, dtype, dim, call.at(va), ta ? call.at(ta) : nullptr,
                        a->length, call.at(vb), tb ? call.at(tb) : nullptr, b->length, out);
}

int tsw__cuda_cdist(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
                    const tsw_collection *y, void *out, const tsw_exec *ex)
{
    return host_batch(p, dtype, dim, x, y, TSW_PDIST_FULL, out, ex);
}

int tsw__cuda_pdist(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
                    tsw_pdist_layout layout, void *out, const tsw_exec *ex)
{
    return host_batch(p, dtype, dim, x, nullptr, layout, out, ex);
}

int tsw__cuda_paired(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_collection *x,
                     const tsw_collection *y, void *out, const tsw_exec *ex)
{
    return host_batch(p, dtype, dim, x, y, TSW_PDIST_FULL, out, ex, true);
}

int tsw__cuda_paired_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_collection *x, const tsw_collection *y, void *out,
                            const tsw_exec *exec)
{
    return device_batch(params, dtype, dim, x, y, TSW_PDIST_FULL, out, exec, nullptr, true);
}

int tsw__cuda_paired_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                    const tsw_collection *x, const tsw_collection *y,
                                    const tsw_exec *exec, size_t *bytes)
{
    return device_batch(params, dtype, dim, x, y, TSW_PDIST_FULL, nullptr, exec, bytes, true);
}

int tsw__cuda_distance_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                              const tsw_series *a, const tsw_series *b, void *out,
                              const tsw_exec *exec)
{
    return device_pair(params, dtype, dim, a, b, out, exec, nullptr);
}

int tsw__cuda_cdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, const tsw_collection *y, void *out,
                           const tsw_exec *exec)
{
    return device_batch(params, dtype, dim, x, y, TSW_PDIST_FULL, out, exec, nullptr);
}

int tsw__cuda_pdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_collection *x, tsw_pdist_layout layout, void *out,
                           const tsw_exec *exec)
{
    return device_batch(params, dtype, dim, x, nullptr, layout, out, exec, nullptr);
}

int tsw__cuda_distance_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                      const tsw_series *a, const tsw_series *b,
                                      const tsw_exec *exec, size_t *bytes)
{
    return device_pair(params, dtype, dim, a, b, nullptr, exec, bytes);
}

int tsw__cuda_cdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                   const tsw_collection *x, const tsw_collection *y,
                                   const tsw_exec *exec, size_t *bytes)
{
    return device_batch(params, dtype, dim, x, y, TSW_PDIST_FULL, nullptr, exec, bytes);
}

int tsw__cuda_pdist_workspace_size(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                   const tsw_collection *x, tsw_pdist_layout layout,
                                   const tsw_exec *exec, size_t *bytes)
{
    return device_batch(params, dtype, dim, x, nullptr, layout, nullptr, exec, bytes);
}

} /* extern "C" */
