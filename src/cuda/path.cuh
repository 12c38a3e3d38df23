/*
 * CUDA alignment paths: tsw__cuda_dtw_path (internal.h), called by align.c for
 * exec->device == CUDA (and AUTO on large grids). Same D values, same 2-bit step codes and
 * therefore the same path as the CPU kernels (cpu/path_impl.h): the cell rule is
 * common/path.h's, the local costs are summed in cost.h's order, and this file is compiled
 * with -fmad=false (CMakeLists.txt) so no a*b+c is contracted into an FMA.
 *
 * Grid: cell (i, j), i over a (rows, n), j over b (columns, m). Everything runs on a REGION:
 * rows [r0, r1] x columns [c0, c1], with a top frame (rows r0-2 and r0-1 at the columns
 * c0-2 .. c1, in device memory) and a left frame of +inf (columns c0-2, c0-1).
 *
 * Forward pass (fwd_tile): the region is cut into tiles of TH = 32 R rows x TW = 128
 * columns, computed in wavefront order, one launch per anti-diagonal of tiles (tile (ti, tj)
 * needs (ti-1, tj), (ti, tj-1) and (ti-1, tj-1); a launch only depends on earlier launches,
 * so there is nothing to deadlock). One warp (one 32-thread block) per tile:
 *   lane l owns the R consecutive rows i0 = r0t + l R .. i0 + R - 1 of the tile and at step
 *   s computes their cells in column q = s - l of the tile (a skewed sweep, TW + 31 steps),
 *   top row first. What a lane needs from the rows above its own (D(i0-1, j), D(i0-1, j-1),
 *   D(i0-1, j-2), D(i0-2, j-1)) is what lane l-1 holds after step s-1: its rows R-1 and R-2
 *   at columns j, j-1, j-2 (R >= 2), read with 4 __shfl_up_sync per step; lane 0 reads the
 *   tile's top frame from shared memory instead. A step has no branch: the local costs
 *   are computed apart from the dependent chain of D, as independent cells at the warp's
 *   issue rate, and a step reads its lane's R costs with one shared-memory load:
 *   fused   (diagonals of more than kSplitMax tiles, which fill the GPU by themselves): the
 *           tile's warp computes the costs of 32 columns at a time into a ring of 64
 *           columns, then runs the steps that reach those columns;
 *   split   (narrower diagonals: most of a grid's launches, and all of one of 100k x 100k):
 *           launch d also runs one cost block per tile of diagonal d + 1, which writes the
 *           tile's costs in step order to a slot in global memory (d + 1 mod 2), each of
 *           its lanes' columns once; the tile's warp in launch d + 1 copies them into
 *           shared memory 16 to 32 steps ahead (cp.async), so it only runs the chain. Twice
 *           the warps per launch, and the costs (most of a cell's instructions) are off the
 *           chain. Each role takes only its part of the shared memory (TileSmem::
 *           split_bytes), so that a launch is one wave: 782 tiles and 782 cost blocks of
 *           100k x 100k fit the H100's SMs at 12 blocks an SM.
 *   Cosine quotients use nvcc's fast division path without its rarely taken branch
 *   (div_fast); a chunk where it cannot vouch for a quotient is redone with x / y, so the
 *   costs are bit for bit those of x / y and of the CPU.
 *   Registers per lane: its R rows of a (dim values each, DB > 0; fused and cost blocks), D
 *   at columns j-1 and j-2 of its rows, one word of step codes per row. Shared memory
 *   (dynamic, TileSmem): the cost ring, the tile's columns of b (column q at bs[q S], read
 *   as 16-byte vectors), their cosine norms, the top frame (2 x (TW + 2)), the tile's two
 *   bottom rows, which lane 31 writes during the sweep and the warp copies to H (and a
 *   checkpoint) after it, and the tile's step codes, which each lane writes into its
 *   rows' words every step and the warp copies out whole after the sweep.
 *   Borders between tiles (global memory): H, the two bottom rows of each tile row, in 3
 *   slots by ti mod 3 (a launch's tiles read slot ti-1 at their columns and the two left
 *   of them while the tiles of the same launch write slots ti, never the same entries);
 *   V, the two right columns of each tile, one slot (only tiles of the same tile row read
 *   and write a row's entries, in successive launches). Codes: 2 bits per cell, 16 cells
 *   to a 32-bit word, tile-major (a tile's TH x TW / 16 words contiguous, row-major
 *   inside), so the backtrace loads a whole tile at once.
 *   Cell updates: (r1 - r0 + 1) (c1 - c0 + 1) per region pass (GCUPS in bench/gpu_align.py).
 * Backtrace (trace_kernel): one warp loads the tile the path is in (TH x TW / 16 words) into
 *   shared memory, lane 0 follows the codes until the path leaves the tile, repeat; the
 *   path goes into a device buffer last cell first, and the host reverses it.
 *
 * Methods (tsw_path_method):
 *   STORED  one region, the whole grid: n m / 4 bytes of codes.
 *   LINEAR  a forward pass over the grid keeps checkpoints, rows k h - 2 and k h - 1 for
 *           blocks of h rows (h a multiple of TH: the bottom rows of a tile row). Then from
 *           the end cell up: the block holding the path's current cell (ei, ej) is
 *           recomputed from its checkpoint as the region rows [k h, ei] x columns [cl, ej]
 *           with its codes stored, and traced until the path leaves it. SYMMETRIC1 (steps
 *           (0,1) within a row): cl = 0. The p05 geometry reads rows i-1 and i-2 only, so
 *           row r0 + t of a region is exact from column cl + 2t on even with a +inf left
 *           frame, and a path entering at (ei, ej) lies right of ej - 2 (ei - i) in row i:
 *           cl = ej - 2 (ei - r0) - 2 keeps every cell it visits exact. Every D value on the
 *           path is the full forward pass's, so the path is STORED's.
 *   AUTO    STORED when its codes fit (memory_limit, else the free device memory), else
 *           LINEAR with h as large as memory allows (p05: at most 8192, its recomputation
 *           is 2 h columns per block).
 * Progress: cells of forward passes, polled between launches (a sync at most every 50 ms);
 *   a cancel returns TSW_ECANCELED with nothing written.
 * Subsequence DTW (subseq_run): the same forward pass with row 0 free, every code stored,
 *   the last row written by the pass (FwdArgs::lastrow), starts by following the codes back
 *   from every end (start_kernel), the CPU's choice of the k matches, traces as above.
 *
 * Files: path_kernels.cuh holds the kernels, this header the host drivers, both as
 * templates; path_f32.cu and path_f64.cu instantiate them for one precision each (two translation units that nvcc
 * compiles in parallel: the instances of both were one file's 5.5 minutes for three GPU
 * targets on two cores), and path.cu holds the entry points, which pick the precision.
 */
#ifndef TSW_CUDA_PATH_CUH
#define TSW_CUDA_PATH_CUH

#include "cuda/path_kernels.cuh"


namespace {

/* ---- host side ---------------------------------------------------------------------------- */

inline unsigned blocks_for(int64_t count)
{
    int64_t b = (count + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

template <typename T> int fill_inf(Call &call, T *p, int64_t rows, int64_t stride, int width)
{
    if (rows <= 0)
        return TSW_OK;
    fill_kernel<T><<<blocks_for(rows * width), 256, 0, call.stream>>>(p, rows, stride, width);
    TSW_CU(cudaGetLastError(), "kernel launch (fill)");
    return TSW_OK;
}

/* Progress in cells of forward passes: reported at most every 50 ms, after a sync. */
struct PathProgress {
    const tsw_exec *ex;
    int64_t total = 1, done = 0, last = 0; /* last = 0: the first poll reports */
    int poll(Call &call, int64_t add)
    {
        done += add;
        if (!ex->progress)
            return TSW_OK;
        int64_t t = now_ns();
        if (t - last < 50000000LL)
            return TSW_OK;
        int rc = call.sync();
        if (rc)
            return rc;
        last = now_ns();
        int64_t d = done < total ? done : total - 1;
        if (ex->progress(ex->progress_user, d < 0 ? 0 : d, total))
            return TSW_ECANCELED;
        return TSW_OK;
    }
    void end()
    {
        if (ex->progress)
            ex->progress(ex->progress_user, total, total);
    }
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Code bytes of a region of rows x cols cells (whole tiles). */
inline double code_bytes(int64_t rows, int64_t cols, int TH)
{
    return (double)ceil_div(rows, TH) * (double)ceil_div(cols, kTW) * (double)TH * kTW / 4.0;
}

/* Split mode's slot: the grid's widest diagonal of tiles, at most kSplitMax (wider
 * diagonals fill the GPU without it). TSWARP_CUDA_PATH_SPLIT (a test and tuning knob, read
 * per call) sets another limit: 0 runs every diagonal fused, a small one mixes the modes. */
inline int64_t split_tiles(int64_t n, int64_t m, int TH)
{
    int64_t w = ceil_div(n, TH) < ceil_div(m, kTW) ? ceil_div(n, TH) : ceil_div(m, kTW);
    int64_t cap = kSplitMax;
    if (const char *e = getenv("TSWARP_CUDA_PATH_SPLIT")) {
        char *end = nullptr;
        long long v = strtoll(e, &end, 10);
        if (end != e && v >= 0 && v < kSplitMax)
            cap = (int64_t)v;
    }
    return w < cap ? w : cap;
}

template <typename T, int DB, int R> struct PathRun {
    static constexpr int TH = 32 * R;
    const tsw__path_job *job;
    Call *call;
    PathProgress *prog;
    FwdArgs<T> base; /* inputs and buffers; the region fields are set per pass */
    T *H, *V, *infs, *ckpt, *last;
    T *cost_buf;       /* split mode: two slots of split_max cost blocks' outputs */
    int64_t split_max; /* 0: no split mode */
    uint32_t *codes;
    int64_t *dpath, *dstate;

    /* One forward pass over a region (codes when store). */
    int forward(int64_t r0, int64_t r1, int64_t c0, int64_t c1, const T *top,
                int64_t top_stride, bool store, int64_t ck_every, int64_t ck_count)
    {
        FwdArgs<T> g = base;
        g.r0 = r0;
        g.r1 = r1;
        g.c0 = c0;
        g.c1 = c1;
        const int64_t nti = ceil_div(r1 - r0 + 1, TH), ntj = ceil_div(c1 - c0 + 1, kTW);
        g.ntj = ntj;
        g.top = top;
        g.top_stride = top_stride;
        g.H = H;
        g.V = V;
        g.vstride = nti * TH;
        g.codes = store ? codes : nullptr;
        g.ckpt = ck_count > 0 ? ckpt : nullptr;
        g.ck_every = ck_every > 0 ? ck_every : 1;
        g.ck_count = ck_count;
        g.last = last;
        /* H's frame columns c0-2, c0-1 stay +inf (the region's left frame) */
        int rc = fill_inf<T>(*call, H, 6, c1 - c0 + 3, 2);
        if (rc)
            return rc;
        const double cells_per_tile = (double)TH * kTW;
        const bool cos_ = g.kc == TSW_COST_COSINE;
        void (*const kern)(FwdArgs<T>) =
            g.p != 0 ? (cos_ ? fwd_tile<T, DB, R, true, true> : fwd_tile<T, DB, R, true, false>)
                     : (cos_ ? fwd_tile<T, DB, R, false, true> : fwd_tile<T, DB, R, false, false>);
        /* dynamic shared memory: above the default 48 KB for some double instantiations;
         * launches of split tiles and cost blocks take less (TileSmem::split_bytes) */
        const size_t smem = TileSmem<T, DB, R>::bytes;
        const size_t smem_split = TileSmem<T, DB, R>::split_bytes;
        TSW_CU(cudaFuncSetAttribute((const void *)kern,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
               "cudaFuncSetAttribute (path forward)");
        /* Diagonals of at most split_max tiles run split: their costs come from the
         * previous launch's cost blocks (slot d mod 2), so a tile's warp only runs the
         * dependent chain; wider diagonals fill the GPU by themselves and compute their
         * costs in their own warps (fused). Launch d: diagonal d's tiles, then the cost
         * blocks of diagonal d + 1 if it runs split. */
        const int64_t nd_all = nti + ntj - 1;
        auto first = [&](int64_t d) { return d - (ntj - 1) > 0 ? d - (ntj - 1) : (int64_t)0; };
        auto count = [&](int64_t d) {
            if (d < 0 || d >= nd_all)
                return (int64_t)0;
            return (d < nti - 1 ? d : nti - 1) - first(d) + 1;
        };
        auto split = [&](int64_t d) { return d < nd_all && count(d) <= split_max; };
        g.cin = nullptr;
        if (split(0)) {
            g.diag = -1;
            g.nd = 0;
            g.ti_lo1 = 0;
            g.cout = cost_buf;
            kern<<<(unsigned)count(0), 32, smem_split, call->stream>>>(g);
            TSW_CU(cudaGetLastError(), "kernel launch (path forward)");
        }
        for (int64_t d = 0; d < nd_all; ++d) {
            const int64_t nt = count(d), nt1 = split(d + 1) ? count(d + 1) : 0;
            g.diag = d;
            g.ti_lo = first(d);
            g.nd = nt;
            g.cin = split(d) ? cost_buf + (d & 1) * split_max * TileSmem<T, DB, R>::costs
                             : nullptr;
            g.ti_lo1 = first(d + 1);
            g.cout = nt1 ? cost_buf + ((d + 1) & 1) * split_max * TileSmem<T, DB, R>::costs
                         : nullptr;
            kern<<<(unsigned)(nt + nt1), 32, split(d) ? smem_split : smem, call->stream>>>(g);
            TSW_CU(cudaGetLastError(), "kernel launch (path forward)");
            if ((rc = prog->poll(*call, (int64_t)(cells_per_tile * (double)nt))))
                return rc;
        }
        return TSW_OK;
    }

    /* Trace the region's stored codes from (i, j); *status 1: start reached. */
    int trace(int64_t r0, int64_t c0, int64_t c1, int64_t *i, int64_t *j, int64_t *len,
              int *status)
    {
        int64_t st[4] = {*i, *j, *len, 0};
        TSW_CU(cudaMemcpyAsync(dstate, st, sizeof(st), cudaMemcpyHostToDevice, call->stream),
               "cudaMemcpyAsync (trace state)");
        trace_kernel<R><<<1, 32, 0, call->stream>>>(codes, r0, c0, ceil_div(c1 - c0 + 1, kTW),
                                                    job->step, job->subseq, dpath, dstate);
        TSW_CU(cudaGetLastError(), "kernel launch (path trace)");
        TSW_CU(cudaMemcpyAsync(st, dstate, sizeof(st), cudaMemcpyDeviceToHost, call->stream),
               "cudaMemcpyAsync (trace state)");
        int rc = call->sync();
        if (rc)
            return rc;
        *i = st[0];
        *j = st[1];
        *len = st[2];
        *status = (int)st[3];
        return TSW_OK;
    }

    int read_last(T *v)
    {
        TSW_CU(cudaMemcpyAsync(v, last, sizeof(T), cudaMemcpyDeviceToHost, call->stream),
               "cudaMemcpyAsync (cost)");
        return call->sync();
    }
};

/*
 * Banded grids (a window whose cells are a small part of the grid): a staircase of
 * regions, block k = rows [k h, min(n, (k+1) h) - 1] x columns [lo(first row), hi(last
 * row) - 1]. Both window ends are non-decreasing in the row (align.c, band.h), so the
 * columns left of a block are outside the window in all its rows (the region's +inf left
 * frame is exact) and so are the columns right of the block above in its rows: block k's
 * top frame is block k-1's two bottom rows where that block has columns and +inf elsewhere
 * (frame_kernel), kept for every block (2 (w + 2) values each). Time and memory
 * O(n (h + w)) for a band of width w: h = w rounded down to whole tile rows (at least
 * one), so a block's region holds at most about twice the band's cells. STORED keeps every
 * block's codes (n (h + w) / 4 bytes), LINEAR one block's: the trace recomputes the block
 * it is in from its frame. Used when the regions hold at most half the grid's cells and
 * the ends are monotone (checked); else the grid pass below.
 */
struct BandLayout {
    int64_t h = 0, K = 0;
    /* per block: its columns [c0, c1], the offsets of its frame (values) and codes (words) */
    int64_t *c0 = nullptr, *c1 = nullptr, *foff = nullptr, *coff = nullptr;
    double cells = 0, codes = 0, codes_max = 0;
    ~BandLayout() { tsw__free(c0); }
    /* 1: banded (fields set), 0: use the grid, < 0: -status */
    int make(const tsw__path_job *job, int TH)
    {
        const int64_t n = job->n, m = job->m;
        if (!job->lo || n < 2 * TH)
            return 0;
        double width = 0;
        for (int64_t i = 0; i < n; ++i) {
            if (i > 0 && (job->lo[i] < job->lo[i - 1] || job->hi[i] < job->hi[i - 1]))
                return 0;
            width += (double)(job->hi[i] - job->lo[i]);
        }
        width /= (double)n;
        h = (int64_t)(width / TH) * TH;
        if (h < TH)
            h = TH;
        if (h > n)
            h = ceil_div(n, TH) * TH;
        K = ceil_div(n, h);
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) {
            const int64_t r0 = k * h, r1 = (k + 1) * h < n ? (k + 1) * h - 1 : n - 1;
            const int64_t w = job->hi[r1] - job->lo[r0];
            sum += (double)(r1 - r0 + 1) * (double)(w > 0 ? w : 1);
        }
        if (sum * 2 > (double)n * (double)m)
            return 0;
        size_t bytes;
        if (tsw__mul_size((size_t)K, 4 * sizeof(int64_t), &bytes))
            return -TSW_EOVERFLOW;
        c0 = (int64_t *)tsw__malloc(bytes);
        if (!c0)
            return -TSW_ENOMEM;
        c1 = c0 + K;
        foff = c1 + K;
        coff = foff + K;
        int64_t f = 0;
        for (int64_t k = 0; k < K; ++k) {
            const int64_t r0 = k * h, r1 = (k + 1) * h < n ? (k + 1) * h - 1 : n - 1;
            c0[k] = job->lo[r0];
            c1[k] = job->hi[r1] - 1;
            if (c1[k] < c0[k])
                return -TSW_ENOPATH; /* a row without admissible cells */
            foff[k] = f;
            f += 2 * (c1[k] - c0[k] + 3);
            const double cb = code_bytes(r1 - r0 + 1, c1[k] - c0[k] + 1, TH);
            coff[k] = (int64_t)(codes / 4); /* whole tiles: a multiple of 4 bytes */
            cells += (double)(r1 - r0 + 1) * (double)(c1[k] - c0[k] + 1);
            codes += cb;
            codes_max = cb > codes_max ? cb : codes_max;
        }
        frames = f;
        return 1;
    }
    int64_t frames = 0; /* values of all frames */
    int64_t rows(int64_t k, int64_t n) const { return ((k + 1) * h < n ? (k + 1) * h : n) - k * h; }
};

template <typename T, int DB, int R>
int path_run(const tsw__path_job *job, const tsw_align_params *ap, const tsw_exec *ex,
             int64_t *path, int64_t *length, double *cost)
{
    constexpr int TH = 32 * R;
    const int64_t n = job->n, m = job->m, dim = job->dim;
    const bool cosine = job->cost == TSW_COST_COSINE, p05 = job->step != 0;
    Call call;
    int rc;
    if ((rc = call.init(ex, false)))
        return rc;

    /* memory: inputs and buffers (base), then codes and checkpoints */
    Plan plan;
    const size_t es = sizeof(T);
    const int64_t nti = ceil_div(n, TH);
    const size_t o_a = plan.add((size_t)n * (size_t)dim, es);
    const size_t o_b = plan.add((size_t)m * (size_t)dim, es);
    const size_t o_na = cosine ? plan.add((size_t)n, es) : 0;
    const size_t o_nb = cosine ? plan.add((size_t)m, es) : 0;
    const size_t o_win = job->lo ? plan.add(2 * (size_t)n, sizeof(int64_t)) : 0;
    const size_t o_h = plan.add(6 * (size_t)(m + 2), es);
    const size_t o_v = plan.add(2 * (size_t)nti * TH, es);
    const size_t o_inf = plan.add(2 * (size_t)(m + 2), es);
    const size_t o_last = plan.add(1, es);
    const size_t o_state = plan.add(4, sizeof(int64_t));
    const size_t o_path = plan.add(2 * (size_t)(n + m), sizeof(int64_t));
    const int64_t split_max = split_tiles(n, m, TH);
    const size_t o_cost = plan.add(2 * (size_t)split_max * TileSmem<T, DB, R>::costs, es);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    const size_t base_bytes = plan.total;

    size_t free_b = 0, total_b = 0;
    if (mem_info(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        free_b = total_b = 0;
    }
    /* what codes and checkpoints may take: the free memory less the base and a margin */
    const double margin = 256.0 * 1024 * 1024 + 0.02 * (double)total_b;
    const double avail = (double)free_b - (double)base_bytes - margin;
    const double limit = ap->memory_limit ? (double)ap->memory_limit : avail;
    const double full = code_bytes(n, m, TH);
    BandLayout band;
    const int bm = band.make(job, TH);
    if (bm < 0)
        return -bm;
    const bool banded = bm == 1;
    const double need = banded ? band.codes : full;
    bool stored = ap->method == TSW_PATH_STORED ||
                  (ap->method == TSW_PATH_AUTO && need <= limit && need <= avail);
    int64_t h = 0, ck_count = 0;
    double region_bytes = need, ck_bytes = 0;
    if (banded) {
        /* every block's frame; LINEAR: one block's codes */
        if (!stored)
            region_bytes = band.codes_max;
        ck_bytes = (double)band.frames * (double)es;
    } else if (!stored) {
        /* the largest block height (rows, a multiple of TH) whose codes fit the limit and
         * whose checkpoints fit beside them; p05 blocks recompute 2 h columns: h <= 8192 */
        const double cap = ap->memory_limit ? (double)ap->memory_limit : avail / 2;
        int64_t hmax = ceil_div(n, TH) * TH;
        if (p05 && hmax > kP05MaxBlock)
            hmax = kP05MaxBlock;
        for (h = hmax; h > TH; h -= TH) {
            const int64_t w = p05 ? (2 * h + 4 < m ? 2 * h + 4 : m) : m;
            const double rb = code_bytes(h, w, TH);
            const double cb = (double)((n - 1) / h) * 2.0 * (double)(m + 2) * (double)es;
            if (rb <= cap && rb + cb <= avail)
                break;
        }
        const int64_t w = p05 ? (2 * h + 4 < m ? 2 * h + 4 : m) : m;
        region_bytes = code_bytes(h, w, TH);
        ck_count = (n - 1) / h;
        ck_bytes = (double)ck_count * 2.0 * (double)(m + 2) * (double)es;
    }
    if (region_bytes > 9.0e18 || ck_bytes > 9.0e18)
        return TSW_EOVERFLOW;
    const size_t o_codes = plan.add((size_t)region_bytes);
    const size_t o_ck = ck_count ? plan.add((size_t)ck_count * 2 * (size_t)(m + 2), es)
                        : banded  ? plan.add((size_t)band.frames, es)
                                  : 0;
    if (plan.overflow)
        return TSW_EOVERFLOW;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    if ((rc = call.alloc(&own, plan.total)))
        return rc;

    PathProgress prog;
    prog.ex = ex;
    const double cells = banded ? band.cells : (double)n * (double)m;
    double est = cells;
    if (banded)
        est += stored ? 0 : 0.5 * cells;
    else if (!stored)
        est += p05 ? (double)n * 2.0 * (double)h : 0.5 * cells;
    prog.total = est > 9.0e18 ? (int64_t)9.0e18 : (int64_t)est;

    PathRun<T, DB, R> run;
    run.job = job;
    run.call = &call;
    run.prog = &prog;
    FwdArgs<T> &g = run.base;
    memset(&g, 0, sizeof(g));
    T *da = (T *)call.at(o_a), *db = (T *)call.at(o_b);
    TSW_CU(cudaMemcpyAsync(da, job->a, (size_t)n * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (a)");
    TSW_CU(cudaMemcpyAsync(db, job->b, (size_t)m * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (b)");
    g.a = da;
    g.b = db;
    if (cosine) {
        T *na = (T *)call.at(o_na), *nb = (T *)call.at(o_nb);
        norms_kernel<T><<<blocks_for(n), 256, 0, call.stream>>>(da, n, dim, na);
        norms_kernel<T><<<blocks_for(m), 256, 0, call.stream>>>(db, m, dim, nb);
        TSW_CU(cudaGetLastError(), "kernel launch (norms)");
        g.na = na;
        g.nb = nb;
    }
    if (job->lo) {
        int64_t *w = (int64_t *)call.at(o_win);
        TSW_CU(cudaMemcpyAsync(w, job->lo, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                               call.stream),
               "cudaMemcpyAsync (window)");
        TSW_CU(cudaMemcpyAsync(w + n, job->hi, (size_t)n * sizeof(int64_t),
                               cudaMemcpyHostToDevice, call.stream),
               "cudaMemcpyAsync (window)");
        g.lo = w;
        g.hi = w + n;
    }
    g.n = n;
    g.m = m;
    g.dim = dim;
    g.p = job->step;
    g.kc = job->cost;
    g.subseq = job->subseq;
    run.H = (T *)call.at(o_h);
    run.V = (T *)call.at(o_v);
    run.infs = (T *)call.at(o_inf);
    run.last = (T *)call.at(o_last);
    run.codes = (uint32_t *)call.at(o_codes);
    run.cost_buf = (T *)call.at(o_cost);
    run.split_max = split_max;
    run.ckpt = ck_count ? (T *)call.at(o_ck) : nullptr;
    T *const frames = banded ? (T *)call.at(o_ck) : nullptr;
    run.dstate = (int64_t *)call.at(o_state);
    run.dpath = (int64_t *)call.at(o_path);
    if ((rc = fill_inf<T>(call, run.infs, 2 * (m + 2), 1, 1)))
        return rc;
    if (ck_count && (rc = fill_inf<T>(call, run.ckpt, 2 * ck_count, m + 2, 2)))
        return rc;

    uint32_t *const codes0 = run.codes;
    /* block k's top frame: the grid's +inf rows for block 0, else its frame */
    auto band_top = [&](int64_t k) -> const T * {
        return k == 0 ? run.infs : frames + band.foff[k];
    };
    if (banded) {
        /* the blocks in order: each one's frame from the block above (in H after its
         * pass), then its pass (codes at its offset when STORED) */
        for (int64_t k = 0; k < band.K; ++k) {
            const int64_t c0 = band.c0[k], c1 = band.c1[k], w2 = c1 - c0 + 3;
            if (k > 0) {
                const int64_t hp = band.c1[k - 1] - band.c0[k - 1] + 3;
                const int64_t slot = (ceil_div(band.h, TH) - 1) % 3;
                frame_kernel<T><<<blocks_for(2 * w2), 256, 0, call.stream>>>(
                    run.H + slot * 2 * hp, hp, band.c0[k - 1], frames + band.foff[k], c0, w2);
                TSW_CU(cudaGetLastError(), "kernel launch (band frame)");
            }
            run.codes = stored ? codes0 + band.coff[k] : codes0;
            if ((rc = run.forward(k * band.h, k * band.h + band.rows(k, n) - 1, c0, c1,
                                  band_top(k), w2, stored, 0, 0)))
                return rc;
        }
    } else if ((rc = run.forward(0, n - 1, 0, m - 1, run.infs, m + 2, stored,
                                 stored ? 0 : h / TH, ck_count))) {
        /* the forward pass over the grid: codes (STORED) or checkpoints (LINEAR) */
        return rc;
    }
    T dl;
    if ((rc = run.read_last(&dl)))
        return rc;
    if (!(dl < inf_of<T>()))
        return TSW_ENOPATH;

    int64_t ei = n - 1, ej = m - 1, len = 0;
    int status = 0;
    if (banded) {
        /* from the end up, block by block: its stored codes, or (LINEAR) the block's rows
         * up to the path's cell recomputed from its frame with codes */
        while (status == 0) {
            if (ei < 0 || ej < 0 || len >= n + m) {
                tsw__set_detail("path trace left the grid at (%lld, %lld)", (long long)ei,
                                (long long)ej);
                return TSW_ECUDA; /* not reached: a finite end traces back to (0, 0) */
            }
            const int64_t k = ei / band.h, r0 = k * band.h, c0 = band.c0[k];
            int64_t c1 = band.c1[k];
            if (ej < c0 || ej > c1) {
                tsw__set_detail("path trace left the band at (%lld, %lld)", (long long)ei,
                                (long long)ej);
                return TSW_ECUDA; /* not reached: the path's cells are in the window */
            }
            if (stored) {
                run.codes = codes0 + band.coff[k];
            } else {
                run.codes = codes0;
                c1 = ej;
                if ((rc = run.forward(r0, ei, c0, c1, band_top(k), band.c1[k] - c0 + 3, true, 0,
                                      0)))
                    return rc;
            }
            if ((rc = run.trace(r0, c0, c1, &ei, &ej, &len, &status)))
                return rc;
        }
    } else if (stored) {
        if ((rc = run.trace(0, 0, m - 1, &ei, &ej, &len, &status)))
            return rc;
    } else {
        while (status == 0) {
            if (ei < 0 || ej < 0 || len >= n + m) {
                tsw__set_detail("path trace left the grid at (%lld, %lld)", (long long)ei,
                                (long long)ej);
                return TSW_ECUDA; /* not reached: a finite end traces back to (0, 0) */
            }
            const int64_t k = ei / h, r0 = k * h;
            int64_t cl = p05 ? ej - 2 * (ei - r0) - 2 : 0;
            if (cl < 0)
                cl = 0;
            const T *top = k == 0 ? run.infs + cl : run.ckpt + (k - 1) * 2 * (m + 2) + cl;
            if ((rc = run.forward(r0, ei, cl, ej, top, m + 2, true, 0, 0)) ||
                (rc = run.trace(r0, cl, ej, &ei, &ej, &len, &status)))
                return rc;
        }
    }
    if (status != 1 || len < 1 || len > n + m - 1) {
        tsw__set_detail("path trace ended in state %d after %lld cells", status, (long long)len);
        return TSW_ECUDA; /* not reached */
    }
    /* the path, last cell first, into the caller's array in order */
    int64_t *host = (int64_t *)tsw__malloc(sizeof(int64_t) * 2 * (size_t)len);
    if (!host)
        return TSW_ENOMEM;
    cudaError_t e = cudaMemcpyAsync(host, run.dpath, sizeof(int64_t) * 2 * (size_t)len,
                                    cudaMemcpyDeviceToHost, call.stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(call.stream);
    if (e != cudaSuccess) {
        tsw__free(host);
        return fail(e, "cudaMemcpyAsync (path)");
    }
    prog.end();
    for (int64_t q = 0; q < len; ++q) {
        path[2 * q] = host[2 * (len - 1 - q)];
        path[2 * q + 1] = host[2 * (len - 1 - q) + 1];
    }
    tsw__free(host);
    *length = len;
    *cost = (double)dl;
    return TSW_OK;
}

/* Host buffers of subseq_run, freed on every return. */
struct HostBuf {
    void *p[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    ~HostBuf()
    {
        for (void *q : p)
            tsw__free(q);
    }
};

/*
 * Subsequence DTW on the GPU (tsw__cuda_subsequence), or with lcost != NULL the last row
 * only (tsw__cuda_subseq_lastrow, segmental DTW's first pass: lcost[j - from] = D(n-1, j),
 * lstart[j - from] its start, for j in [from, m)). One forward pass over the grid with row 0
 * free (job->subseq) storing every code (n m / 4 bytes: no linear-memory variant here; a
 * grid whose codes do not fit gives TSW_ENOMEM, and AUTO then computes on the CPU), the
 * last row copied out by the pass, the starts by start_kernel, the best k by the CPU's own
 * tsw__subseq_pick, and each match's path traced in the stored codes from (n-1, end): the
 * CPU recomputes columns 0..end for it, which are the same D values and codes (steps only
 * look left), so the same path.
 */
template <typename T, int DB, int R>
int subseq_run(const tsw__path_job *job, const tsw_exec *ex, int64_t k, tsw_match *matches,
               int64_t *count, int64_t *path, int64_t from, double *lcost, int64_t *lstart)
{
    constexpr int TH = 32 * R;
    const int64_t n = job->n, m = job->m, dim = job->dim;
    const bool cosine = job->cost == TSW_COST_COSINE;
    Call call;
    int rc;
    if ((rc = call.init(ex, false)))
        return rc;

    Plan plan;
    const size_t es = sizeof(T);
    const int64_t nti = ceil_div(n, TH);
    const size_t o_a = plan.add((size_t)n * (size_t)dim, es);
    const size_t o_b = plan.add((size_t)m * (size_t)dim, es);
    const size_t o_na = cosine ? plan.add((size_t)n, es) : 0;
    const size_t o_nb = cosine ? plan.add((size_t)m, es) : 0;
    const size_t o_h = plan.add(6 * (size_t)(m + 2), es);
    const size_t o_v = plan.add(2 * (size_t)nti * TH, es);
    const size_t o_inf = plan.add(2 * (size_t)(m + 2), es);
    const size_t o_last = plan.add(1, es);
    const size_t o_state = plan.add(4, sizeof(int64_t));
    const size_t o_path = plan.add(2 * (size_t)(n + m), sizeof(int64_t));
    const int64_t split_max = split_tiles(n, m, TH);
    const size_t o_cost = plan.add(2 * (size_t)split_max * TileSmem<T, DB, R>::costs, es);
    const size_t o_row = plan.add((size_t)m, es);
    const size_t o_start = plan.add((size_t)m, sizeof(int64_t));
    const double full = code_bytes(n, m, TH);
    if (full > 9.0e18)
        return TSW_EOVERFLOW;
    const size_t o_codes = plan.add((size_t)full);
    if (plan.overflow)
        return TSW_EOVERFLOW;
    tsw_exec own = *ex;
    own.cuda_workspace = nullptr;
    if ((rc = call.alloc(&own, plan.total)))
        return rc; /* TSW_ENOMEM when the codes do not fit */

    if (k > m)
        k = m;
    HostBuf hb;
    T *hrow = (T *)(hb.p[0] = tsw__malloc(es * (size_t)m));
    double *hcost = (double *)(hb.p[1] = tsw__malloc(sizeof(double) * (size_t)m));
    int64_t *hstart = (int64_t *)(hb.p[2] = tsw__malloc(sizeof(int64_t) * (size_t)m));
    if (!hrow || !hcost || !hstart)
        return TSW_ENOMEM;
    tsw_match *pick = nullptr;
    int64_t *paths = nullptr, *hpath = nullptr;
    if (!lcost) {
        pick = (tsw_match *)(hb.p[3] = tsw__malloc(sizeof(tsw_match) * (size_t)k));
        if (!pick)
            return TSW_ENOMEM;
        if (path) {
            paths = (int64_t *)(hb.p[4] =
                                    tsw__malloc(sizeof(int64_t) * 2 * (size_t)(k * (n - 1) + m)));
            hpath = (int64_t *)(hb.p[5] = tsw__malloc(sizeof(int64_t) * 2 * (size_t)(n + m)));
            if (!paths || !hpath)
                return TSW_ENOMEM;
        }
    }

    PathProgress prog;
    prog.ex = ex;
    prog.total = n * m;

    PathRun<T, DB, R> run;
    run.job = job;
    run.call = &call;
    run.prog = &prog;
    FwdArgs<T> &g = run.base;
    memset(&g, 0, sizeof(g));
    T *da = (T *)call.at(o_a), *db = (T *)call.at(o_b);
    TSW_CU(cudaMemcpyAsync(da, job->a, (size_t)n * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (a)");
    TSW_CU(cudaMemcpyAsync(db, job->b, (size_t)m * (size_t)dim * es, cudaMemcpyHostToDevice,
                           call.stream),
           "cudaMemcpyAsync (b)");
    g.a = da;
    g.b = db;
    if (cosine) {
        T *na = (T *)call.at(o_na), *nb = (T *)call.at(o_nb);
        norms_kernel<T><<<blocks_for(n), 256, 0, call.stream>>>(da, n, dim, na);
        norms_kernel<T><<<blocks_for(m), 256, 0, call.stream>>>(db, m, dim, nb);
        TSW_CU(cudaGetLastError(), "kernel launch (norms)");
        g.na = na;
        g.nb = nb;
    }
    g.n = n;
    g.m = m;
    g.dim = dim;
    g.p = job->step;
    g.kc = job->cost;
    g.subseq = 1;
    T *drow = (T *)call.at(o_row);
    int64_t *dstart = (int64_t *)call.at(o_start);
    g.lastrow = drow;
    run.H = (T *)call.at(o_h);
    run.V = (T *)call.at(o_v);
    run.infs = (T *)call.at(o_inf);
    run.last = (T *)call.at(o_last);
    run.codes = (uint32_t *)call.at(o_codes);
    run.cost_buf = (T *)call.at(o_cost);
    run.split_max = split_max;
    run.ckpt = nullptr;
    run.dstate = (int64_t *)call.at(o_state);
    run.dpath = (int64_t *)call.at(o_path);
    if ((rc = fill_inf<T>(call, run.infs, 2 * (m + 2), 1, 1)))
        return rc;

    /* 1. the forward pass: every code, the last row; then every end's start */
    if ((rc = run.forward(0, n - 1, 0, m - 1, run.infs, m + 2, true, 0, 0)))
        return rc;
    start_kernel<T, R><<<blocks_for(m), 256, 0, call.stream>>>(
        run.codes, drow, n, m, ceil_div(m, kTW), job->step, dstart);
    TSW_CU(cudaGetLastError(), "kernel launch (subsequence starts)");
    TSW_CU(cudaMemcpyAsync(hrow, drow, es * (size_t)m, cudaMemcpyDeviceToHost, call.stream),
           "cudaMemcpyAsync (last row)");
    TSW_CU(cudaMemcpyAsync(hstart, dstart, sizeof(int64_t) * (size_t)m, cudaMemcpyDeviceToHost,
                           call.stream),
           "cudaMemcpyAsync (starts)");
    if ((rc = call.sync()))
        return rc;
    for (int64_t j = 0; j < m; ++j)
        hcost[j] = hrow[j] < inf_of<T>() ? (double)hrow[j] : (double)TSW_INF_F64;
    if (lcost) {
        prog.end();
        for (int64_t j = from; j < m; ++j) {
            lcost[j - from] = hcost[j];
            lstart[j - from] = hcost[j] < TSW_INF_F64 ? hstart[j] : -1;
        }
        return TSW_OK;
    }

    /* 2. the matches, chosen as the CPU chooses them */
    int64_t got = 0;
    if ((rc = tsw__subseq_pick(m, hcost, hstart, k, pick, &got)))
        return rc;

    /* 3. the paths, traced in the stored codes */
    int64_t used = 0;
    for (int64_t q = 0; path && q < got; ++q) {
        int64_t ei = n - 1, ej = pick[q].end, len = 0;
        int status = 0;
        if ((rc = run.trace(0, 0, m - 1, &ei, &ej, &len, &status)))
            return rc;
        if (status != 1 || len < 1 || len > n + m - 1) {
            tsw__set_detail("subsequence trace ended in state %d after %lld cells", status,
                            (long long)len);
            return TSW_ECUDA; /* not reached: a finite end traces back to row 0 */
        }
        TSW_CU(cudaMemcpyAsync(hpath, run.dpath, sizeof(int64_t) * 2 * (size_t)len,
                               cudaMemcpyDeviceToHost, call.stream),
               "cudaMemcpyAsync (path)");
        if ((rc = call.sync()))
            return rc;
        int64_t *out = paths + 2 * used;
        for (int64_t t = 0; t < len; ++t) {
            out[2 * t] = hpath[2 * (len - 1 - t)];
            out[2 * t + 1] = hpath[2 * (len - 1 - t) + 1];
        }
        pick[q].path_offset = used;
        pick[q].path_length = len;
        used += len;
    }
    prog.end();
    memcpy(matches, pick, sizeof(tsw_match) * (size_t)got);
    if (path)
        memcpy(path, paths, sizeof(int64_t) * 2 * (size_t)used);
    *count = got;
    return TSW_OK;
}

template <typename T>
int subseq_dispatch(const tsw__path_job *job, const tsw_exec *ex, int64_t k,
                    tsw_match *matches, int64_t *count, int64_t *path, int64_t from,
                    double *lcost, int64_t *lstart)
{
    const int64_t dim = job->dim;
    if (dim == 1)
        return subseq_run<T, 1, 4>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 4)
        return subseq_run<T, 4, 4>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 8)
        return subseq_run<T, 8, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 12)
        return subseq_run<T, 12, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
    if (dim <= 16)
        return subseq_run<T, 16, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
    return subseq_run<T, 0, 2>(job, ex, k, matches, count, path, from, lcost, lstart);
}

/* The instantiation for the dtype and the dim (DB: a's values in registers up to 16, in
 * buckets of 1, 4, 8, 12 (chroma) and 16 dims: a tile pads the rest of a bucket with zeros). */
template <typename T>
int path_dispatch(const tsw__path_job *job, const tsw_align_params *ap, const tsw_exec *ex,
                  int64_t *path, int64_t *length, double *cost)
{
    const int64_t dim = job->dim;
    if (dim == 1)
        return path_run<T, 1, 4>(job, ap, ex, path, length, cost);
    if (dim <= 4)
        return path_run<T, 4, 4>(job, ap, ex, path, length, cost);
    if (dim <= 8)
        return path_run<T, 8, 2>(job, ap, ex, path, length, cost);
    if (dim <= 12)
        return path_run<T, 12, 2>(job, ap, ex, path, length, cost);
    if (dim <= 16)
        return path_run<T, 16, 2>(job, ap, ex, path, length, cost);
    return path_run<T, 0, 2>(job, ap, ex, path, length, cost);
}

} // namespace

#endif
