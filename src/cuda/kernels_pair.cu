/*
 * One long pair with every SM on it, host side: tsw__pair_scratch_bytes and tsw__pair_launch
 * (contract in kernels.h) choose the kernel instance and block shape (pair_kernel.cuh, where
 * the decomposition is described), lay out the scratch memory and launch the grid
 * cooperatively.
 */
#include "cuda/pair_kernel.cuh"

namespace tsw_pair {

/* ---- host side ------------------------------------------------------------------------------ */

typedef void (*KernelFn)(Args);

/* A kernel and its block shape (R rows x C columns per lane and step). */
struct Kern {
    KernelFn fn;
    int R, C;
};

template <typename T, int MEAS, int KC, bool DIM1,
          int R = shape_r(std::is_same<T, float>::value, MEAS, KC, DIM1),
          int C = shape_c(std::is_same<T, float>::value, MEAS, KC, DIM1), int CH = kChunk>
Kern kern()
{
    return Kern{pair_kernel<T, MEAS, KC, DIM1, R, C, CH>, R, C};
}

/* Developer knob for tuning, in builds with -DTSWARP_CUDA_TUNING=ON only (they compile 68
 * more kernels): TSWARP_CUDA_PAIR_SHAPE=RxC[c16] (2x2, 4x2, 2x4, 4x4, 4x8, 8x4, 8x8, 1x4,
 * 1x8, 2x8, 2x16, 4x16, and 1x8c16, 2x8c16, 2x16c16,
 * 2x4c16, 4x8c16 with 16-row chunks) picks
 * another block shape for the dim-1 DTW (sqeuclidean) and TWED (p = 1 or 2) kernels; any
 * other value is ignored. Read once. */
[[maybe_unused]] static int shape_env()
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("TSWARP_CUDA_PAIR_SHAPE");
        int r = 0, c = 0, h = 0;
        const int k = e ? sscanf(e, "%dx%dc%d", &r, &c, &h) : 0;
        v = k >= 2 ? 100 * r + c + (k == 3 && h == 16 ? 160000 : 0) : 0;
    }
    return v;
}

/* Developer knob: TSWARP_CUDA_PAIR_SLEEP=ns, the longest __nanosleep back-off of a wait
 * (0: spin). */
static int sleep_env()
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("TSWARP_CUDA_PAIR_SLEEP");
        v = e ? atoi(e) : 256;
        v = v < 0 ? 0 : v;
    }
    return v;
}

/* Developer knob: TSWARP_CUDA_PAIR_RING=items per queue (a power of two >= 4 kChunk). */
static long long ring_env()
{
    static long long v = -1;
    if (v < 0) {
        const char *e = getenv("TSWARP_CUDA_PAIR_RING");
        long long r = e ? atoll(e) : kRing;
        v = 4 * kChunk;
        while (v < r && v < (1LL << 20))
            v <<= 1;
    }
    return v;
}

template <typename T, int MEAS, int KC> Kern dim1_tuned()
{
#ifdef TSWARP_CUDA_TUNING /* the extra shapes: -DTSWARP_CUDA_TUNING=ON (tests/gpu/run.sh) */
    switch (shape_env()) {
    case 202:
        return kern<T, MEAS, KC, true, 2, 2>();
    case 402:
        return kern<T, MEAS, KC, true, 4, 2>();
    case 204:
        return kern<T, MEAS, KC, true, 2, 4>();
    case 404:
        return kern<T, MEAS, KC, true, 4, 4>();
    case 408:
        return kern<T, MEAS, KC, true, 4, 8>();
    case 804:
        return kern<T, MEAS, KC, true, 8, 4>();
    case 808:
        return kern<T, MEAS, KC, true, 8, 8>();
    case 108:
        return kern<T, MEAS, KC, true, 1, 8>();
    case 208:
        return kern<T, MEAS, KC, true, 2, 8>();
    case 216:
        return kern<T, MEAS, KC, true, 2, 16>();
    case 416:
        return kern<T, MEAS, KC, true, 4, 16>();
    case 104:
        return kern<T, MEAS, KC, true, 1, 4>();
    case 160108: /* 1x8c16 */
        return kern<T, MEAS, KC, true, 1, 8, 16>();
    case 160208:
        return kern<T, MEAS, KC, true, 2, 8, 16>();
    case 160216:
        return kern<T, MEAS, KC, true, 2, 16, 16>();
    case 160204: /* 2x4c16: 16-row chunks */
        return kern<T, MEAS, KC, true, 2, 4, 16>();
    case 160408:
        return kern<T, MEAS, KC, true, 4, 8, 16>();
    default:
        break;
    }
#endif
    return kern<T, MEAS, KC, true>();
}

template <typename T> Kern pick_t(const tsw_params *p, int64_t dim)
{
    const bool one = dim == 1;
    if (p->measure == TSW_TWED) {
        const bool p12 = p->p == 1.0 || p->p == 2.0;
        if (!one)
            return p12 ? kern<T, M_TWED, KC_LP12, false>() : kern<T, M_TWED, KC_LPP, false>();
        return p12 ? dim1_tuned<T, M_TWED, KC_LP12>() : kern<T, M_TWED, KC_LPP, true>();
    }
    if (p->measure == TSW_SOFT_DTW)
        return one ? kern<T, M_SOFT, KC_SQE, true>() : kern<T, M_SOFT, KC_SQE, false>();
    if (!one)
        return kern<T, M_DTW, KC_RT, false>();
    switch (p->cost) {
    case TSW_COST_EUCLIDEAN:
        return kern<T, M_DTW, KC_EUC, true>();
    case TSW_COST_ABS:
        return kern<T, M_DTW, KC_ABS, true>();
    case TSW_COST_COSINE:
        return kern<T, M_DTW, KC_COS, true>();
    case TSW_COST_SQEUCLIDEAN:
    default:
        return dim1_tuned<T, M_DTW, KC_SQE>();
    }
}

static size_t align_up(size_t x) { return (x + 255) & ~(size_t)255; }

/* Everything both entry points derive from the arguments: kernel, grid, scratch layout. */
struct Plan {
    KernelFn fn;
    tsw_band band;
    int64_t N, M, S, W;
    int P, sms;
    long long wrap_cap, ring;
    size_t ctr, abort_flag, ringD, ringL, wrapD, wrapL, lohi, da, db, rows_a, rows_t, total;
};

static cudaError_t make_plan(const tsw_params *p, tsw_dtype dtype, int64_t dim, int64_t n,
                             int64_t m, int device, Plan *pl)
{
    const int meas = p->measure == TSW_TWED ? M_TWED : p->measure == TSW_SOFT_DTW ? M_SOFT : M_DTW;
    const size_t es = tsw__dtype_size(dtype);
    const int nv = meas == M_TWED ? 2 : 1;
    pl->band = tsw_band_make((int)p->window, p->window_radius, p->itakura_max_slope, n, m);
    pl->N = pl->band.rows;
    pl->M = pl->band.cols;
    const Kern k = dtype == TSW_F32 ? pick_t<float>(p, dim) : pick_t<double>(p, dim);
    pl->fn = k.fn;
    pl->W = 32 * (int64_t)k.C;
    pl->S = (pl->M + pl->W - 1) / pl->W;

    int cur = -1, nb = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&cur);
    if (e != cudaSuccess)
        return e;
    if (device < 0)
        device = cur;
    if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess)
        return e;
    if (cur != device && (e = cudaSetDevice(device)) != cudaSuccess)
        return e;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, (const void *)pl->fn, 32, 0);
    if (cur != device) {
        cudaError_t e2 = cudaSetDevice(cur);
        if (e == cudaSuccess)
            e = e2;
    }
    if (e != cudaSuccess)
        return e;
    if (nb < 1 || sms < 1)
        return cudaErrorInvalidConfiguration;
    const int64_t resident = (int64_t)nb * sms;
    pl->P = (int)(pl->S < resident ? pl->S : resident);
    pl->sms = sms;

    pl->ring = ring_env();
    long long wc = pl->ring;
    while (wc < 2 * pl->N)
        wc <<= 1;
    pl->wrap_cap = wc;
    const bool wrap = pl->S > pl->P;

    size_t off = 0;
    pl->ctr = off;
    off = align_up(off + (size_t)pl->P * 8 * sizeof(long long));
    pl->abort_flag = off;
    off = align_up(off + sizeof(int));
    pl->ringD = off;
    off = align_up(off + (size_t)pl->P * (size_t)pl->ring * es);
    pl->ringL = off;
    off = align_up(off + (nv > 1 ? (size_t)pl->P * (size_t)pl->ring * es : 0));
    pl->wrapD = off;
    off = align_up(off + (wrap ? (size_t)wc * es : 0));
    pl->wrapL = off;
    off = align_up(off + (wrap && nv > 1 ? (size_t)wc * es : 0));
    pl->lohi = off;
    off = align_up(off + (pl->band.kind == TSW_BAND_ITAKURA ? (size_t)pl->N * 2 * sizeof(long long) : 0));
    const size_t np = (size_t)(pl->N + 2 * kPad) * es; /* a padded row table */
    pl->da = off;
    off = align_up(off + (meas == M_TWED ? np : 0));
    pl->rows_a = off;
    off = align_up(off + (dim == 1 ? np : 0));
    pl->rows_t = off;
    off = align_up(off + (meas == M_TWED ? np : 0));
    pl->db = off;
    off = align_up(off + (meas == M_TWED ? (size_t)pl->M * es : 0));
    pl->total = off;
    return cudaSuccess;
}

} // namespace tsw_pair

size_t tsw__pair_scratch_bytes(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                               int64_t n, int64_t m, int device)
{
    tsw_pair::Plan pl;
    if (tsw_pair::make_plan(params, dtype, dim, n, m, device, &pl) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: leave no error behind */
        return 0;
    }
    return pl.total;
}

cudaError_t tsw__pair_launch(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                             const void *a, const void *ta, int64_t n, const void *b,
                             const void *tb, int64_t m, void *out, void *scratch,
                             size_t scratch_bytes, cudaStream_t stream)
{
    using namespace tsw_pair;
    Plan pl;
    cudaError_t e = make_plan(params, dtype, dim, n, m, -1, &pl);
    if (e != cudaSuccess)
        return e;
    if (!scratch || scratch_bytes < pl.total || n < 1 || m < 1 || dim < 1)
        return cudaErrorInvalidValue;
    const bool twed = params->measure == TSW_TWED;
    char *sc = (char *)scratch;

    Args g;
    g.a = a;
    g.b = b;
    g.ta = ta;
    g.tb = tb;
    if (pl.band.swap) { /* Itakura: rows run over b (band.h) */
        g.a = b;
        g.b = a;
        g.ta = tb;
        g.tb = ta;
    }
    g.N = pl.N;
    g.M = pl.M;
    g.dim = dim;
    g.band = pl.band;
    g.cost = (int)params->cost;
    g.nu = params->nu;
    g.lmbda = params->lmbda;
    g.p = params->p;
    g.gamma = params->gamma;
    g.inv_gamma = 1.0 / params->gamma;
    g.nu_f = (float)params->nu;
    g.lmbda_f = (float)params->lmbda;
    g.p_f = (float)params->p;
    g.gamma_f = (float)params->gamma;
    g.inv_gamma_f = (float)(1.0 / params->gamma);
    g.P = pl.P;
    g.S = pl.S;
    g.W = pl.W;
    g.ctr = (long long *)(sc + pl.ctr);
    g.abort_flag = (int *)(sc + pl.abort_flag);
    g.ringD = sc + pl.ringD;
    g.ringL = sc + pl.ringL;
    g.wrapD = sc + pl.wrapD;
    g.wrapL = sc + pl.wrapL;
    g.wrap_cap = pl.wrap_cap;
    g.ring = pl.ring;
    g.lohi = pl.band.kind == TSW_BAND_ITAKURA ? (long long *)(sc + pl.lohi) : nullptr;
    g.da = twed ? sc + pl.da : nullptr;
    g.db = twed ? sc + pl.db : nullptr;
    g.rows_a = dim == 1 ? sc + pl.rows_a : nullptr;
    g.rows_t = twed ? sc + pl.rows_t : nullptr;
    g.out = out;
    g.sleep_ns = sleep_env();

    int64_t lim = pl.N + 2 * kPad > pl.M ? pl.N + 2 * kPad : pl.M;
    lim = lim > pl.P ? lim : pl.P;
    int64_t pb = (lim + 255) / 256;
    const int64_t pmax = (int64_t)pl.sms * 8;
    pb = pb < pmax ? pb : pmax;
    if (dtype == TSW_F32)
        prep_kernel<float><<<(unsigned)pb, 256, 0, stream>>>(g, twed ? 1 : 0);
    else
        prep_kernel<double><<<(unsigned)pb, 256, 0, stream>>>(g, twed ? 1 : 0);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;

    /* Cooperative launch: the grid (P <= resident warps) is guaranteed co-resident, which
     * the wavefront's spin waits rely on. */
    int dev = 0, coop = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess)
        return e;
    if ((e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev)) != cudaSuccess)
        return e;
    if (coop) {
        void *kargs[] = {&g};
        e = cudaLaunchCooperativeKernel((const void *)pl.fn, dim3((unsigned)pl.P), dim3(32), kargs,
                                        0, stream);
        if (e != cudaSuccess)
            return e;
    } else {
        pl.fn<<<(unsigned)pl.P, 32, 0, stream>>>(g);
    }
    return cudaGetLastError();
}
