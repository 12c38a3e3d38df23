/*
 * Soft-DTW at large feature dimensions: the cost matrices first, then the wavefront on them
 * (sdtw_wf.cuh's CM instances), then the inputs' gradients from the expected alignment E by
 * matrix products. Included by sdtw_grad.cu (inside its anonymous namespace) after the
 * wavefront kernel; sg_grad picks it for the calls mat_eligible covers.
 *
 * The fused kernels form each cell's squared Euclidean cost inside the recursion, D
 * subtractions and multiply-adds on the wavefront's critical path and D values travelling
 * with it; past a few features that is most of the time. Here the costs of a chunk of
 * problems are formed first, tile by tile, as the products of the two series' rows (a GEMM's
 * shape, every loaded value used 64 times), then the wavefront reads one float a cell.
 * Backward: the gradient of x_i is 2 sum_j E(i, j) (x_i - y_j) = 2 (rowsum_i(E) x_i -
 * (E y)_i), of y_j 2 (colsum_j(E) y_j - (E^T x)_j): two more products of the same shape
 * (sm_egrad), the row sums taken in the same pass.
 *
 * Own kernels, not cuBLAS: the library links the CUDA runtime statically and nothing else,
 * so that one artifact runs wherever a driver is (a cuBLAS of the right major version is not
 * on every machine that has the driver), and a problem here has its own lengths, which
 * strided-batched GEMMs do not take. FP32 FMA throughout: TF32 tensor cores round the inputs
 * to 10 bits, 1e-3 relative on the costs, ten times the 1e-4 that float32 results keep.
 *
 * The costs are formed in double (sm_cost_kernel says why) by the expansion, whose
 * cancellation double leaves at 1e-16 of the norms; the products with E in float32, as the
 * fused kernels sum their gradients.
 */

constexpr int kSmTile = 64; /* rows and columns of a cost tile, rows of a gradient tile */
constexpr int kSmK = 16;    /* the cost tile's features staged in shared memory at a time */
constexpr int kSmT = 32;    /* the gradient tile's points staged at a time */

/* One launch's problems, [first, first + count) of one kind. Problem p's matrix: a double a
 * slot (the cost), then E as the float in each slot's low word. */
struct SmArgs {
    const float *a, *b;
    const int64_t *aoff, *alen, *boff, *blen;
    int64_t first, count, dim;
    double *R;            /* the chunk's region: problem p's matrix at R + coff[p] */
    const int64_t *coff;  /* chunk-relative offsets in doubles */
    const int *flag;      /* device inputs found non-finite: write nothing */
    int h;                /* the wavefront's rows per stripe (0: one block a problem) */
    float *out;           /* sm_egrad: the gradient rows (ga or gb) */
    double coef;          /* sm_egrad: its coefficient (the kind's ca or cb) */
    int accumulate;
};

/* Where a tile's rows lie in the wavefront kernel's layout with one row per lane
 * (sdtw_wf.cuh, WF_AT): stripes of h rows (h >= n: one), stripe q's region
 * wf_cells(h, m, 1) slots after stripe q - 1's, its cell (il, j) at (il + j) nl + il (nl its
 * rows): the cells of an anti-diagonal of a stripe are consecutive slots. The tiles never
 * straddle two stripes (h is a multiple of 64: sg_grad). */
struct SmStripe {
    int64_t base; /* the stripe's first slot */
    int il0, nl;  /* the tile's first row within the stripe, the stripe's rows */
    __device__ __forceinline__ SmStripe(int i0, int n, int m, int h)
    {
        if (h >= n) {
            base = 0, il0 = i0, nl = n;
        } else {
            const int q = i0 / h;
            base = (int64_t)q * wf_cells(h, m, 1);
            il0 = i0 - q * h;
            nl = n - q * h < h ? n - q * h : h;
        }
    }
    /* the slot of the tile's cell (il0 + a, j), given d = a + j - j0 ... as the caller's
     * diagonal: (il0 + a + j) nl + il0 + a */
    __device__ __forceinline__ int64_t at(int a, int j) const
    {
        return base + ((int64_t)il0 + a + j) * nl + il0 + a;
    }
};

/*
 * Costs C_p(i, j) = sum_k (a_ik - b_jk)^2 of every problem of the launch, in double (the
 * wavefront adds them to R in double, as the fused kernels do with the costs they form in
 * double: a float32 cost's rounding, 3e-8 of it, moved float32 gradients by 5e-4 at gamma
 * 0.1, D = 64, tests/gpu/test_cuda_sdtw.c), by the expansion ||a_i||^2 + ||b_j||^2 -
 * 2 a_i.b_j: products of floats are exact in double, so the cancellation leaves about
 * 1e-16 (||a_i||^2 + ||b_j||^2), and each term is one multiply-add where the direct form
 * takes two (TSWARP_SDTW_MAT_EXPAND=0 runs the direct form, for the measurement).
 * A 64 x 64 tile a block (blockIdx.x: the tile, blockIdx.y: problems, strided), 256
 * threads of 4 x 4 cells: thread (tx, ty) has rows ty + 16 u and columns tx + 16 v. The
 * rows of a and b are staged 16 features at a time, transposed (padded), the next slice
 * loaded into registers while the current one is used. The tile goes out through shared
 * memory along its anti-diagonals, folded so that every thread has a cell: group g of 64
 * threads writes anti-diagonal g's cells (rows a <= g) and anti-diagonal g + 64's (the
 * rest), each a run of consecutive slots.
 */
template <bool EXPAND>
__global__ void __launch_bounds__(256) sm_cost_kernel(SmArgs g, int tiles_j)
{
    if (g.flag && *(volatile const int *)g.flag)
        return;
    union SmCostShared {
        struct {
            double xs[kSmK][kSmTile + 1], ys[kSmK][kSmTile + 1];
        } in;
        double tile[kSmTile][kSmTile + 2]; /* (a, b) at 66 a + b: the folded reads hit
                                            * distinct banks */
    };
    __shared__ SmCostShared sh;
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int ti = (int)(blockIdx.x / (unsigned)tiles_j);
    const int tj = (int)(blockIdx.x % (unsigned)tiles_j);
    const int64_t D = g.dim;
    constexpr int LD = kSmTile * kSmK / 256; /* loads a thread a slice, each side */
    for (int64_t q = blockIdx.y; q < g.count; q += gridDim.y) {
        const int64_t p = g.first + q;
        const int n = (int)g.alen[p], m = (int)g.blen[p];
        const int i0 = ti * kSmTile, j0 = tj * kSmTile;
        if (i0 >= n || j0 >= m)
            continue; /* (uniform in the block: no barrier is skipped by part of it) */
        const float *A = g.a + g.aoff[p] * D, *B = g.b + g.boff[p] * D;
        double acc[4][4], px[LD], py[LD]; /* px, py: the staged rows' partial norms */
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[u][v] = 0.0;
#pragma unroll
        for (int l = 0; l < LD; ++l)
            px[l] = py[l] = 0.0;
        /* thread tid loads element e = tid + 256 l of a slice: row e / 16, feature e % 16
         * (16 consecutive features of a row per 16 threads; zeros past the rows and the
         * features add nothing) */
        float rx[LD], ry[LD];
        auto load = [&](int64_t k0) {
#pragma unroll
            for (int l = 0; l < LD; ++l) {
                const int e = tid + 256 * l, row = e / kSmK, k = e % kSmK;
                const bool kin = k0 + k < D;
                rx[l] = kin && i0 + row < n ? A[(int64_t)(i0 + row) * D + k0 + k] : 0.f;
                ry[l] = kin && j0 + row < m ? B[(int64_t)(j0 + row) * D + k0 + k] : 0.f;
            }
        };
        load(0);
        for (int64_t k0 = 0; k0 < D; k0 += kSmK) {
#pragma unroll
            for (int l = 0; l < LD; ++l) {
                const int e = tid + 256 * l, row = e / kSmK, k = e % kSmK;
                const double xv = (double)rx[l], yv = (double)ry[l];
                sh.in.xs[k][row] = xv;
                sh.in.ys[k][row] = yv;
                if constexpr (EXPAND) {
                    px[l] = fma(xv, xv, px[l]);
                    py[l] = fma(yv, yv, py[l]);
                }
            }
            __syncthreads();
            if (k0 + kSmK < D)
                load(k0 + kSmK); /* the next slice, in flight during this one */
#pragma unroll
            for (int k = 0; k < kSmK; ++k) {
                double xa[4], yb[4];
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    xa[u] = sh.in.xs[k][ty + 16 * u];
                    yb[u] = sh.in.ys[k][tx + 16 * u];
                }
#pragma unroll
                for (int u = 0; u < 4; ++u)
#pragma unroll
                    for (int v = 0; v < 4; ++v) {
                        if constexpr (EXPAND) {
                            acc[u][v] = fma(xa[u], yb[v], acc[u][v]);
                        } else {
                            const double d = xa[u] - yb[v];
                            acc[u][v] = fma(d, d, acc[u][v]);
                        }
                    }
            }
            __syncthreads();
        }
        /* the norms: row tid / 16 + 16 l's partial sums over the features k = tid % 16
         * (mod 16), summed over the 16 lanes that share the row, into shared memory */
        __shared__ double nx[kSmTile], ny[kSmTile];
        if constexpr (EXPAND) {
#pragma unroll
            for (int l = 0; l < LD; ++l) {
#pragma unroll
                for (int o = 8; o > 0; o >>= 1) {
                    px[l] += __shfl_xor_sync(0xffffffffu, px[l], o);
                    py[l] += __shfl_xor_sync(0xffffffffu, py[l], o);
                }
                if (tid % kSmK == 0) {
                    nx[tid / kSmK + 16 * l] = px[l];
                    ny[tid / kSmK + 16 * l] = py[l];
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
            for (int v = 0; v < 4; ++v)
                sh.tile[ty + 16 * u][tx + 16 * v] =
                    EXPAND ? fmax(nx[ty + 16 * u] + ny[tx + 16 * v] - 2.0 * acc[u][v], 0.0)
                           : acc[u][v];
        __syncthreads();
        double *C = (double *)(g.R + g.coff[p]);
        const SmStripe st(i0, n, m, g.h > 0 ? g.h : n);
        const int a = tid & 63, i = i0 + a;
#pragma unroll
        for (int l = 0; l < kSmTile / 4; ++l) {
            const int gg = (tid >> 6) + 4 * l, d = a <= gg ? gg : gg + kSmTile, b = d - a;
            if (i < n && j0 + b < m)
                C[st.at(a, j0 + b)] = sh.tile[a][b];
        }
        __syncthreads(); /* (the tile, before the next problem's slices) */
    }
}

/*
 * The gradient rows of one side from E (TR false: of a, rows i < n, E's rows against b;
 * TR true: of b, rows j < m, E's columns against a): out_r = coef 2 (rowsum_r(E') own_r -
 * (E' other)_r) with E' = E or E^T, added to out (accumulate) or stored, in double as the
 * fused kernels do. A block has 64 rows x BN features (blockIdx.x: row tile x feature tile,
 * blockIdx.y: problems), 256 threads of TM x 4 (rows TM ty + u, features 4 tx + v: one
 * vector load of each side a point from shared memory); the
 * contraction runs over the other side's points, 32 at a time through shared memory, the
 * next 32 loaded into registers while the current ones are used. E (a float in the low
 * word of each double slot, sdtw_wf.cuh) is read along its anti-diagonals: a 64 x 32 piece
 * of E' is 95 runs of consecutive slots, 32 threads a run, each thread's slot one step of
 * a fixed stride from its last. Every thread sums its rows' E itself (TM adds per 4 TM
 * products).
 */
template <bool TR, int BN>
__global__ void __launch_bounds__(256) sm_egrad_kernel(SmArgs g, int tiles_f)
{
    constexpr int TX = BN / 4, TY = 256 / TX, TM = kSmTile / TY;
    static_assert(TX * TY == 256 && TM * TY == kSmTile, "tile shape");
    constexpr int DG = kSmTile + kSmT - 1;           /* anti-diagonals of a piece */
    constexpr int LE = (DG * kSmT + 255) / 256;      /* E loads a thread */
    constexpr int LO = (kSmT * BN + 255) / 256;      /* the other side's loads a thread */
    if (g.flag && *(volatile const int *)g.flag)
        return;
    /* (unpadded, for the vector loads: the anti-diagonal stores of es hit 32 banks as they
     * are, t 64 + a = 63 t + d) */
    __shared__ __align__(16) float es[kSmT][kSmTile];
    __shared__ __align__(16) float os[kSmT][BN];
    const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
    const int ti = (int)(blockIdx.x / (unsigned)tiles_f);
    const int tf = (int)(blockIdx.x % (unsigned)tiles_f);
    const int64_t D = g.dim;
    for (int64_t q = blockIdx.y; q < g.count; q += gridDim.y) {
        const int64_t p = g.first + q;
        const int n = (int)g.alen[p], m = (int)g.blen[p];
        const int rows = TR ? m : n, T = TR ? n : m;
        const int r0 = ti * kSmTile, f0 = tf * BN;
        if (r0 >= rows || f0 >= D)
            continue;
        const int h = g.h > 0 ? g.h : n;
        const float *E = (const float *)(g.R + g.coff[p]); /* E(slot) at E[2 slot] */
        const float *O = TR ? g.a + g.aoff[p] * D : g.b + g.boff[p] * D; /* the other side */
        const float *Own = TR ? g.b + g.boff[p] * D : g.a + g.aoff[p] * D;
        float *Out = g.out + (TR ? g.boff[p] : g.aoff[p]) * D;
        float acc[TM][4], rs[TM];
#pragma unroll
        for (int u = 0; u < TM; ++u) {
            rs[u] = 0.f;
#pragma unroll
            for (int v = 0; v < 4; ++v)
                acc[u][v] = 0.f;
        }
        /* load e = tid + 256 l of E's piece: anti-diagonal d = e / 32 = tid / 32 + 8 l and
         * k = tid % 32; the piece's row a and point t on it (TR false: cell (r0 + a, t0 + t),
         * t = 31 - k, a = d - t; TR true: cell (t0 + t, r0 + a), t = k, a = d - k) */
        const int k = tid % kSmT, t = TR ? k : kSmT - 1 - k;
        float re[LE], ro[LO];
        auto load = [&](int t0) {
            /* the stripe of the piece's rows of E (TR false: the tile's rows r0 ..; TR true:
             * the points t0 .. t0 + 31, which never straddle two stripes either) */
            const SmStripe st(TR ? t0 : r0, n, m, h);
#pragma unroll
            for (int l = 0; l < LE; ++l) {
                const int d = tid / kSmT + 8 * l, a = d - t;
                const int i = TR ? t0 + t : r0 + a, j = TR ? r0 + a : t0 + t;
                const bool in = d < DG && a >= 0 && a < kSmTile && i < n && j < m;
                re[l] = in ? E[2 * (TR ? st.at(t, j) : st.at(a, j))] : 0.f;
            }
#pragma unroll
            for (int l = 0; l < LO; ++l) {
                const int e = tid + 256 * l, tt = e / BN, f = e % BN;
                ro[l] = e < kSmT * BN && t0 + tt < T && f0 + f < D
                            ? O[(int64_t)(t0 + tt) * D + f0 + f]
                            : 0.f;
            }
        };
        load(0);
        for (int t0 = 0; t0 < T; t0 += kSmT) {
#pragma unroll
            for (int l = 0; l < LE; ++l) {
                const int d = tid / kSmT + 8 * l, a = d - t;
                if (d < DG && a >= 0 && a < kSmTile)
                    es[t][a] = re[l];
            }
#pragma unroll
            for (int l = 0; l < LO; ++l) {
                const int e = tid + 256 * l;
                if (e < kSmT * BN)
                    os[e / BN][e % BN] = ro[l];
            }
            __syncthreads();
            if (t0 + kSmT < T)
                load(t0 + kSmT); /* the next piece, in flight during this one */
#pragma unroll
            for (int tt = 0; tt < kSmT; ++tt) {
                float ev[TM], ov[4];
                if constexpr (TM == 4) {
                    const float4 e4 = *(const float4 *)&es[tt][4 * ty];
                    ev[0] = e4.x, ev[1] = e4.y, ev[2] = e4.z, ev[3] = e4.w;
                } else if constexpr (TM == 2) {
                    const float2 e2 = *(const float2 *)&es[tt][2 * ty];
                    ev[0] = e2.x, ev[1] = e2.y;
                } else {
                    ev[0] = es[tt][ty];
                }
#pragma unroll
                for (int u = 0; u < TM; ++u)
                    rs[u] += ev[u];
                {
                    const float4 o4 = *(const float4 *)&os[tt][4 * tx];
                    ov[0] = o4.x, ov[1] = o4.y, ov[2] = o4.z, ov[3] = o4.w;
                }
#pragma unroll
                for (int u = 0; u < TM; ++u)
#pragma unroll
                    for (int v = 0; v < 4; ++v)
                        acc[u][v] = fmaf(ev[u], ov[v], acc[u][v]);
            }
            __syncthreads();
        }
#pragma unroll
        for (int u = 0; u < TM; ++u) {
            const int r = r0 + TM * ty + u;
            if (r >= rows)
                continue;
#pragma unroll
            for (int v = 0; v < 4; ++v) {
                const int64_t f = f0 + 4 * tx + v;
                if (f < D) {
                    const int64_t at = (int64_t)r * D + f;
                    const float gr = rs[u] * Own[at] - acc[u][v];
                    Out[at] = (float)((g.accumulate ? (double)Out[at] : 0.0) +
                                      g.coef * 2.0 * (double)gr);
                }
            }
        }
    }
}

/* The features a gradient tile covers: 16, 32 or 64 (more features: several tiles). */
inline int sm_bn(int64_t dim)
{
    return dim <= 16 ? 16 : dim <= 32 ? 32 : 64;
}

inline unsigned sm_grid_y(int64_t count)
{
    return (unsigned)(count < 65535 ? count : 65535);
}

/* The cost matrices of one launch's problems (max_n x max_m: the longest of each side). */
inline cudaError_t sm_costs(const SmArgs &g, int64_t max_n, int64_t max_m, cudaStream_t stream)
{
    const int64_t ti = (max_n + kSmTile - 1) / kSmTile, tj = (max_m + kSmTile - 1) / kSmTile;
    if (ti * tj > INT32_MAX)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)(ti * tj), sm_grid_y(g.count));
    const char *env = getenv("TSWARP_SDTW_MAT_EXPAND");
    if (env && env[0] == '0')
        sm_cost_kernel<false><<<grid, 256, 0, stream>>>(g, (int)tj);
    else
        sm_cost_kernel<true><<<grid, 256, 0, stream>>>(g, (int)tj);
    return cudaGetLastError();
}

/* The gradient rows of one side (tr: of b) from E; rows: that side's longest series. */
template <bool TR>
cudaError_t sm_egrad(const SmArgs &g, int64_t rows, cudaStream_t stream)
{
    const int bn = sm_bn(g.dim);
    const int64_t tf = (g.dim + bn - 1) / bn, ti = (rows + kSmTile - 1) / kSmTile;
    if (ti * tf > INT32_MAX)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)(ti * tf), sm_grid_y(g.count));
    if (bn == 16)
        sm_egrad_kernel<TR, 16><<<grid, 256, 0, stream>>>(g, (int)tf);
    else if (bn == 32)
        sm_egrad_kernel<TR, 32><<<grid, 256, 0, stream>>>(g, (int)tf);
    else
        sm_egrad_kernel<TR, 64><<<grid, 256, 0, stream>>>(g, (int)tf);
    return cudaGetLastError();
}

/*
 * The crossover: float32 series of at least kMatMinDim features (dims 1 and 2 keep the
 * fused wavefront kernel, whose cost is one or two subtractions a cell; the matrix form was
 * not timed against it there. Above, the thread-per-row kernel, the only fused one, took
 * 61.3 ms for B=32 N=512 D=64 on the H200 against 0.77 ms for the matrix form:
 * bench/RESULTS.md), up to the split's longest series,
 * gamma <= kWfMaxGamma (R in double, as the fused kernel), no Itakura window (rejected for
 * gradients anyway). Developer knob TSWARP_SDTW_MAT: 0 never, 1 for every float32 dim
 * (the crossover forced both ways by the tests).
 */
constexpr int64_t kMatMinDim = 3;

inline bool mat_eligible(tsw_dtype dtype, int64_t dim, int64_t max_len, double gamma,
                         int window)
{
    if (dtype != TSW_F32 || dim < 1 || max_len > kWfSplitMaxLen || !(gamma <= kWfMaxGamma) ||
        window == TSW_WINDOW_ITAKURA)
        return false;
    const char *env = getenv("TSWARP_SDTW_MAT");
    if (env && env[0] == '0')
        return false;
    if (env && env[0] == '1')
        return true;
    return dim >= kMatMinDim;
}
