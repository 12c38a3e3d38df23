/*
 * The many-pairs engine: one warp computes one pair (DTW, TWED or soft-DTW) in registers,
 * by a skewed row wavefront over column stripes. Device code only; the kernel, the pair
 * enumeration and the launcher are in kernels_batch.cu (read its header comment first).
 *
 * Grid of one pair: outer points r = 0..N-1 (rows, series "A") against inner points
 * j = 0..M-1 (columns, series "B"); A = a and B = b, except for the Itakura window, where
 * band.swap = 1 puts b on the rows (band.h). D(r, j) is the reference's cell (r+1, j+1);
 * the padded boundary is D(-1,-1) = 0 and +inf elsewhere on row -1 and column -1.
 *
 * Lanes and registers (C = cells per lane, a template parameter; W = 32 C = stripe width):
 *   lane k owns the C consecutive columns c0 = sW + kC .. c0 + C - 1 of stripe s and keeps
 *   P[c] = D(r, c0 + c) of the last row it computed (TWED also Lp[c], the local match term
 *   L(r, c0 + c)), plus that stripe's constants of its columns (dim == 1: b_j in registers;
 *   dim > 1: b_j in the warp's shared memory, Bs[(k * C + c) * 32 + lane]).
 * Skew: at step t lane k computes row r = t - k (if inside the stripe's row range). Its
 *   left neighbour D(r, c0 - 1) is lane k-1's last cell of the row it computed at step t-1
 *   (the same row r): one __shfl_up_sync. The diagonal D(r-1, c0 - 1) is what the lane
 *   received one step earlier ("hold"). The rows above are its own registers. So a step is
 *   one shuffle plus C cells whose only serial dependency is the in-row left chain.
 * Lane 0's left input comes from the stripe boundary: stripe 0 reads the padded column
 *   (0 at row -1, +inf below); stripe s > 0 reads D(r, sW - 1) that lane 31 wrote to the
 *   warp's boundary array (global scratch, one value per row, TWED two) while computing
 *   stripe s - 1. Reads of row r happen at step r, the write of row r of the next stripe
 *   at step r + 31, in program order of one warp (__syncwarp between stripes).
 * Row data: rings of 64 rows in the warp's workspace (shared memory, or global scratch for
 *   very large dim): A's values (dim-major, ringA[k * 64 + (r & 63)]), A's timestamps and
 *   per-point TWED deletion costs, and the boundary values for lane 0. Every 32 steps the
 *   warp refills the next 32 rows with coalesced loads (rows t0..t0+31; the 32 rows before
 *   them, still in use by the lagging lanes, stay). Lane k reads slot (t - k) & 63: 32
 *   consecutive words, no bank conflict.
 * Windows: the rows' admissible column ranges (tsw_band_range) are computed once per pair
 *   into the warp's scratch and travel through the ring with the rows (the band's double
 *   arithmetic stays out of the inner loop and its registers). A stripe runs only over
 *   the rows whose range meets it (band ends are monotone in the row); a row tests its
 *   cells against its range unless the lane's columns all lie inside (no test in the
 *   steady state). Cells outside are +inf; rows outside a stripe's range are +inf there.
 *
 * Arithmetic: the cells use recurrence.h's macros (soft-DTW: TSW_SOFTMIN3_SORTED, TWED:
 *   TSW_TWED_MATCH / _LOCAL / _DEL_COST grouped as the fast CPU kernels do) and cost.h's
 *   local costs (called directly where a point is contiguous, else the same loops in the
 *   same order of the dims), with the non-contracting intrinsics of Ops<T> (__fadd_rn,
 *   __fmul_rn, ...): nvcc would otherwise fuse d*d + s or cost + min into FMAs, which the
 *   CPU reference (baseline x86-64, no FMA) does not. DTW values are then bit-identical to
 *   the CPU reference and TWED values to the fast CPU kernels (checked on a host emulation
 *   of this code over random shapes, windows and dtypes); soft-DTW differs by the order of
 *   the softmin sum and, in float, by exp2f/log2f (see Par), well inside its tolerance.
 */
#ifndef TSW_CUDA_BATCH_ENGINE_CUH
#define TSW_CUDA_BATCH_ENGINE_CUH

#include <stdint.h>

#include "tswarp.h"
#include "common/tsw_hd.h"

#include "common/band.h"
#include "common/cost.h"
#include "common/recurrence.h"
#include "common/elastic.h"
#include "cuda/mufu.cuh"

namespace tsw_batch {

/* Kernel variants. DTW_SQE: squared Euclidean DTW (the hot path, the cost inlined);
 * DTW: any other DTW cost (run-time switch; dim > 1 uses DTW for every cost); TWED: Lp
 * order 1 or 2 (run-time switch); TWED_P: any other order (pow, kept out of the others). */
enum { K_DTW_SQE = 0, K_DTW = 1, K_TWED = 2, K_SOFT = 3, K_TWED_P = 4, K_FAM = 5 };
/* The elastic family under K_FAM (kernels_family.cu), one compiled program each: the
 * measure is a template parameter of pair_dp, chosen once per pair. DDTW runs as DTW
 * (K_DTW_SQE / K_DTW) and WDDTW as WDTW on the derivatives that the host layer stages;
 * MSM's independent form runs F_MSM once per channel (a strided univariate program). */
enum { F_NONE = 0, F_WDTW = 1, F_ADTW = 2, F_ERP = 3, F_EDR = 4, F_LCSS = 5, F_MSM = 6,
       F_MSMD = 7, F_ERPA = 8 /* ERP at dim 1 where |x - y| is the root's bits */ };
/* TWED's Lp order: 2, 1, or a general p (pow). */
enum { PK_2 = 0, PK_1 = 1, PK_GEN = 2 };

/* Pair modes (tsw__pairs of kernels.h: CDIST, PDIST, SELF, PAIRED). */
constexpr int kCdist = 0, kPdist = 1, kSelf = 2, kPaired = 3;

constexpr unsigned kFull = 0xffffffffu;
constexpr int kRing = 64; /* rows held in the rings (32 in use + the next 32) */
/*
 * Workspace of one warp: four rings of kRing elements of T (boundary values D and L, A's
 * timestamps, A's TWED deletion costs), two rings of kRing ints (the rows' admissible
 * column ranges, windows only), A's values (kRing * dim elements of T, dim-major), then
 * for dim > 1 the stripe of B (C * dim * 32 elements). Offsets in elements of T.
 */
constexpr int kOffD = 0, kOffL = 64, kOffT = 128, kOffE = 192, kOffR = 256;
template <typename T> __host__ __device__ constexpr int off_a() { return kOffR + 2 * kRing * 4 / (int)sizeof(T); }

/* Kernel arguments (by value; untyped pointers, T = the batch dtype). */
struct Args {
    const void *xv, *xt, *yv, *yt; /* values and optional timestamps of x and y    */
    const int64_t *xoff, *xlen, *yoff, *ylen;
    int64_t xcount, ycount;
    int64_t dim;
    int mode, layout;
    int64_t first, count;
    void *out;
    int64_t self_stride;
    int finish;
    const void *self_x, *self_y;
    int measure, window, cost, accumulated, normalize, pk;
    double radius, slope, nu, lmbda, p, gamma;
    float nu_f, lmbda_f, p_f; /* the same, rounded as the CPU does                   */
    float sgam_f, sinv_f;     /* float soft-DTW in base 2: gamma ln 2, log2(e) / gamma */
    /* Global scratch: warp_bytes per warp, holding its boundary arrays at offset 0 (D, then
     * TWED's L at element bhalf), the rows' admissible ranges at off_rng (2 ints per row,
     * windows only) and its workspace at off_ws when use_smem == 0. */
    char *scr;
    int64_t warp_bytes, off_rng, off_ws, bhalf;
    int has_bound;
    int64_t ws_elems; /* workspace elements per warp */
    int use_smem;
    /* The elastic family (K_FAM, and DDTW under the DTW kinds). dshift: points each
     * series loses to the derivative (2 for DDTW and WDDTW, whose staged xv/yv hold the
     * derivatives at the series' own offsets), else 0. xstd/ystd: EDR's automatic epsilon,
     * each series' population std in double (staged), else NULL. off_w: WDTW's weight
     * table in a warp's scratch (max(n, m) elements). */
    int64_t dshift, off_w;
    double fam_g, pen, erp_g, epsilon, mc;
    int msm_indep;
    const double *xstd, *ystd; /* (ERP at dim 1: 1 where the series' roots are exact) */
    const void *xcum, *ycum;   /* ERP: the gap costs summed along each series, or NULL */
};

template <typename T> struct Ops;

template <> struct Ops<float> {
    static __device__ __forceinline__ float inf() { return TSW_INF_F32; }
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
    static __device__ __forceinline__ float mn(float a, float b) { return fminf(a, b); }
    static __device__ __forceinline__ float mx(float a, float b) { return fmaxf(a, b); }
    static __device__ __forceinline__ float fabs_(float a) { return fabsf(a); }
    /* a with s's sign bit flipped in (one LOP3; exact) */
    static __device__ __forceinline__ float flip(float a, float s)
    {
        return __int_as_float(__float_as_int(a) ^ (__float_as_int(s) & (int)0x80000000u));
    }
    static __device__ __forceinline__ float sqrt_(float a) { return __fsqrt_rn(a); }
    static __device__ __forceinline__ float div_(float a, float b) { return __fdiv_rn(a, b); }
    static __device__ __forceinline__ float exp_(float a) { return exp2f(a); }
    static __device__ __forceinline__ float log_(float a) { return log2f(a); }
    /* soft-DTW's softmin (see Par): the hardware approximations, one MUFU each */
    static __device__ __forceinline__ float sexp(float a)
    {
#if defined(__CUDA_ARCH__)
        return mufu_ex2(a);
#else
        return exp2f(a);
#endif
    }
    static __device__ __forceinline__ float slog(float a)
    {
#if defined(__CUDA_ARCH__)
        return mufu_lg2(a);
#else
        return log2f(a);
#endif
    }
    static __device__ __forceinline__ float pow_(float a, float b) { return powf(a, b); }
    static __device__ __forceinline__ float lp(const float *x, const float *y, int64_t dim,
                                               float p)
    {
        return tsw_lp_f32(x, y, dim, p);
    }
    static __device__ __forceinline__ float lpp(const float *x, int64_t sx, const float *y,
                                                int64_t sy, int64_t dim, float p)
    {
        return tsw_lpp_f32(x, sx, y, sy, dim, p);
    }
    static __device__ __forceinline__ float cosine(const float *x, const float *y, int64_t dim)
    {
        return tsw_cost_cosine_f32(x, y, dim);
    }
};

template <> struct Ops<double> {
    static __device__ __forceinline__ double inf() { return TSW_INF_F64; }
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
    /* tsw_hd.h's TSW_MIN/TSW_MAX, as the CPU: fmin's NaN handling costs 4 extra SASS
     * instructions per call on sm_90 (no NaN reaches a cell: inputs are checked) */
    static __device__ __forceinline__ double mn(double a, double b) { return TSW_MIN(a, b); }
    static __device__ __forceinline__ double mx(double a, double b) { return TSW_MAX(a, b); }
    static __device__ __forceinline__ double fabs_(double a) { return fabs(a); }
    static __device__ __forceinline__ double flip(double a, double s) /* the high words */
    {
        return __hiloint2double(__double2hiint(a) ^ (__double2hiint(s) & (int)0x80000000u),
                                __double2loint(a));
    }
    static __device__ __forceinline__ double sqrt_(double a) { return __dsqrt_rn(a); }
    static __device__ __forceinline__ double div_(double a, double b) { return __ddiv_rn(a, b); }
    static __device__ __forceinline__ double exp_(double a) { return exp(a); }
    static __device__ __forceinline__ double log_(double a) { return log(a); }
    static __device__ __forceinline__ double sexp(double a) { return exp(a); }
    static __device__ __forceinline__ double slog(double a) { return log(a); }
    static __device__ __forceinline__ double pow_(double a, double b) { return pow(a, b); }
    static __device__ __forceinline__ double lp(const double *x, const double *y, int64_t dim,
                                                double p)
    {
        return tsw_lp_f64(x, y, dim, p);
    }
    static __device__ __forceinline__ double lpp(const double *x, int64_t sx, const double *y,
                                                int64_t sy, int64_t dim, double p)
    {
        return tsw_lpp_f64(x, sx, y, sy, dim, p);
    }
    static __device__ __forceinline__ double cosine(const double *x, const double *y,
                                                    int64_t dim)
    {
        return tsw_cost_cosine_f64(x, y, dim);
    }
};

/*
 * Measure parameters in the compute precision ((T)value, as the CPU kernels round them).
 * Soft-DTW's softmin -gamma log sum exp(-r / gamma) is evaluated as
 *   lo - sgam * LOG(1 + EXP((lo - mid) * sinv) + EXP((lo - hi) * sinv))
 * with (EXP, LOG, sgam, sinv) = (exp, log, gamma, 1 / gamma) in double, as the CPU does, and
 * (2^x, log2, gamma ln 2, log2(e) / gamma) in float: the same function in base 2, where
 * both are single MUFU instructions on the serial chain of every cell (Ops<float>::sexp,
 * slog: ex2.approx.ftz, lg2.approx.ftz; exp2f would add denormal scaling around the MUFU
 * and log2f is a ~25-instruction polynomial). The arguments make the approximations safe:
 * 2^x is taken of x <= 0 (relative error ~2^-22; a result flushed to zero is < 2^-126,
 * which vanishes next to the 1 it is added to) and log2 of a sum in [1, 3] (never
 * denormal; absolute error ~2^-22), so a cell's softmin errs by ~gamma 2^-22, far inside
 * soft-DTW's 1e-4 float32 tolerance and below the rounding of the cell's additions.
 */
template <typename T> struct Par {
    T nu, lmbda, p, sgam, sinv;
    int cost, pk;
    T pen, erpg, mc; /* the family's ADTW penalty, ERP gap value, MSM cost: (T)param */
};
__device__ __forceinline__ void load_par(const Args &g, Par<float> *q)
{
    q->nu = g.nu_f;
    q->lmbda = g.lmbda_f;
    q->p = g.p_f;
    q->sgam = g.sgam_f;
    q->sinv = g.sinv_f;
    q->cost = g.cost;
    q->pk = g.pk;
    q->pen = (float)g.pen;
    q->erpg = (float)g.erp_g;
    q->mc = (float)g.mc;
}
__device__ __forceinline__ void load_par(const Args &g, Par<double> *q)
{
    q->nu = g.nu;
    q->lmbda = g.lmbda;
    q->p = g.p;
    q->sgam = g.gamma;
    q->sinv = 1.0 / g.gamma; /* (T)(1.0 / gamma), the CPU's inv_gamma */
    q->cost = g.cost;
    q->pk = g.pk;
    q->pen = g.pen;
    q->erpg = g.erp_g;
    q->mc = g.mc;
}

/*
 * Rows [*rlo, *rhi) of the stripe of columns [cs, ce) whose admissible columns may meet
 * it: a superset of the rows with an admissible cell in the stripe, such that every row
 * before *rlo has none at or after cs and every row from *rhi on has none before ce (both
 * band ends are non-decreasing in the row for every window).
 */
__device__ __forceinline__ void stripe_rows(const tsw_band &b, int N, int cs, int ce, int *rlo,
                                            int *rhi)
{
    if (b.kind == TSW_BAND_NONE) {
        *rlo = 0;
        *rhi = N;
        return;
    }
    if (b.kind == TSW_BAND_DIAG) {
        /* hi_r = r + above + 1 > cs  <=>  r >= cs - above;  lo_r = r - below < ce */
        int64_t lo = (int64_t)cs - b.above, hi = (int64_t)ce + b.below;
        lo = lo < 0 ? 0 : lo;
        hi = hi > N ? N : hi;
        *rlo = (int)(lo < hi ? lo : hi);
        *rhi = (int)hi;
        return;
    }
    /* Itakura: binary searches on the monotone ends. */
    int a = 0, z = N;
    while (a < z) { /* first row with hi > cs */
        const int mid = (a + z) >> 1;
        int64_t l, h;
        tsw_band_range(&b, mid, &l, &h);
        if (h > cs)
            z = mid;
        else
            a = mid + 1;
    }
    *rlo = a;
    z = N;
    while (a < z) { /* first row with lo >= ce */
        const int mid = (a + z) >> 1;
        int64_t l, h;
        tsw_band_range(&b, mid, &l, &h);
        if (l >= ce)
            z = mid;
        else
            a = mid + 1;
    }
    *rhi = a;
}

/* Local costs (TWED: local match terms) of the lane's C cells in one row, dim == 1. */
template <typename T, int KIND, int C>
__device__ __forceinline__ void costs_dim1(const Par<T> &q, T av, T tav, const T (&bv)[C],
                                           const T (&tbv)[C], T (&cc)[C])
{
    using O = Ops<T>;
    if (KIND == K_DTW_SQE || KIND == K_SOFT) {
        /* tsw_cost_sqeuclidean at dim 1; __fmul_rn keeps the square out of an FMA */
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const T d = av - bv[c];
            cc[c] = O::mul(d, d);
        }
    } else if (KIND == K_DTW) {
        if (q.cost == TSW_COST_ABS) {
#pragma unroll
            for (int c = 0; c < C; ++c)
                cc[c] = O::fabs_(av - bv[c]);
        } else if (q.cost == TSW_COST_EUCLIDEAN) {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const T d = av - bv[c];
                cc[c] = O::sqrt_(O::mul(d, d));
            }
        } else if (q.cost == TSW_COST_COSINE) {
#pragma unroll
            for (int c = 0; c < C; ++c)
                cc[c] = O::cosine(&av, &bv[c], 1);
        } else {
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const T d = av - bv[c];
                cc[c] = O::mul(d, d);
            }
        }
    } else { /* TWED: L = |a - b|_p + nu |ta - tb| (tsw_lp at dim 1 is |a - b| for p = 1, 2) */
        if (KIND == K_TWED_P) {
#pragma unroll
            for (int c = 0; c < C; ++c)
                cc[c] = TSW_TWED_LOCAL(O::lp(&av, &bv[c], 1, q.p), q.nu,
                                       O::fabs_(tav - tbv[c]), O::add, O::mul);
        } else {
#pragma unroll
            for (int c = 0; c < C; ++c)
                cc[c] = TSW_TWED_LOCAL(O::fabs_(av - bv[c]), q.nu, O::fabs_(tav - tbv[c]),
                                       O::add, O::mul);
        }
    }
}

/*
 * Local costs of the lane's C cells in one row, dim > 1: pa = ringA + slot (value k at
 * pa[k * 64]), pb = Bs + lane (value k of column c at pb[(k * C + c) * 32]). The loops
 * follow cost.h's functions (same order of the dims, same rules), with non-fused
 * arithmetic. nyy[c] = sqrt(<b_j, b_j>) for the cosine cost.
 */
template <typename T, int KIND, int C>
__device__ __forceinline__ void costs_gen(const Par<T> &q, int64_t dim, const T *pa,
                                          const T *pb, const T (&nyy)[C], T tav,
                                          const T (&tbv)[C], T (&cc)[C])
{
    using O = Ops<T>;
    constexpr int SB = C * 32;
    T s[C];
#pragma unroll
    for (int c = 0; c < C; ++c)
        s[c] = T(0);
    /* 0: sum of squares, 1: sum of |d|, 2: sum of |d|^p, 3: cosine */
    int form;
    if (KIND == K_SOFT || KIND == K_DTW_SQE || KIND == K_FAM)
        form = 0; /* the family's costs are all squared Euclidean at dim > 1 */
    else if (KIND == K_DTW)
        form = q.cost == TSW_COST_ABS ? 1 : q.cost == TSW_COST_COSINE ? 3 : 0;
    else if (KIND == K_TWED)
        form = q.pk == PK_1 ? 1 : 0;
    else
        form = 2;

    if (form == 0) {
        for (int64_t k = 0; k < dim; ++k) {
            const T x = pa[k * kRing];
            const T *y = pb + k * SB;
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const T d = x - y[c * 32];
                s[c] = O::add(s[c], O::mul(d, d));
            }
        }
    } else if (form == 1) {
        for (int64_t k = 0; k < dim; ++k) {
            const T x = pa[k * kRing];
            const T *y = pb + k * SB;
#pragma unroll
            for (int c = 0; c < C; ++c)
                s[c] = O::add(s[c], O::fabs_(x - y[c * 32]));
        }
    } else if (form == 2) {
        /* cost.h's tsw_lpp (scaled by the largest component), root taken */
#pragma unroll
        for (int c = 0; c < C; ++c)
            s[c] = O::lpp(pa, kRing, pb + c * 32, SB, dim, q.p);
    } else {
        /* tsw_cost_cosine: xy, xx, yy in one pass; 0 if both are zero, 1 if one is */
        T xx = T(0);
        for (int64_t k = 0; k < dim; ++k) {
            const T x = pa[k * kRing];
            const T *y = pb + k * SB;
            xx = O::add(xx, O::mul(x, x));
#pragma unroll
            for (int c = 0; c < C; ++c)
                s[c] = O::add(s[c], O::mul(x, y[c * 32]));
        }
        const T nx = O::sqrt_(xx);
#pragma unroll
        for (int c = 0; c < C; ++c) {
            T v;
            if (xx == T(0) && nyy[c] == T(0))
                v = T(0);
            else if (xx == T(0) || nyy[c] == T(0))
                v = T(1);
            else
                v = T(1) - O::div_(s[c], O::mul(nx, nyy[c]));
            s[c] = v;
        }
    }

    if (KIND == K_TWED || KIND == K_TWED_P) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
            T lp = s[c];
            if (form == 0)
                lp = O::sqrt_(lp); /* dim > 1 here: tsw_lp's SQRT(s) */
            cc[c] = TSW_TWED_LOCAL(lp, q.nu, O::fabs_(tav - tbv[c]), O::add, O::mul);
        }
    } else {
        const bool root = KIND == K_DTW && q.cost == TSW_COST_EUCLIDEAN;
#pragma unroll
        for (int c = 0; c < C; ++c)
            cc[c] = root ? O::sqrt_(s[c]) : s[c];
    }
}

/*
 * The in-row chain of the lane's C cells of row r: left = D(r, c0 - 1), diag =
 * D(r - 1, c0 - 1) (TWED: ldiag = L(r - 1, c0 - 1)), P / Lp = row r - 1 on entry, row r on
 * exit. MASK: test each column against the row's admissible range [lo, hi).
 * The old row is read for all C cells first and what does not depend on the left
 * neighbour is computed first (the min of diagonal and up, soft-DTW's max too; TWED's deletion
 * in a and match moves), so that the serial chain along the row is short (DTW: min, add)
 * and P is overwritten in place without register moves. Mins are exact, so grouping
 * changes no result: TWED's min(min(del_a, del_b), match) is evaluated as
 * min(min(del_a, match), del_b), one min fewer on the chain.
 */
template <typename T, int KIND, int C, bool MASK>
__device__ __forceinline__ void row_chain(T (&P)[C], T (&Lp)[C], const T (&cc)[C],
                                          const T (&dbv)[C], T left, T diag, T ldiag, T dav,
                                          int c0, int lo, int hi, T sgam, T sinv)
{
    using O = Ops<T>;
    const T inf = O::inf();
    constexpr bool TWED = KIND == K_TWED || KIND == K_TWED_P;
    T pre[C], pre2[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const T dg = c ? P[c - 1] : diag, up = P[c];
        if (TWED) {
            const T match = TSW_TWED_MATCH(dg, cc[c], c ? Lp[c - 1] : ldiag, O::add);
            pre[c] = O::mn(O::add(up, dav), match);
        } else if (KIND == K_SOFT) {
            pre[c] = O::mn(dg, up);
            pre2[c] = O::mx(dg, up);
        } else {
            pre[c] = O::mn(dg, up);
        }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
        T v;
        if (TWED) {
            v = O::mn(pre[c], O::add(left, dbv[c])); /* TSW_TWED_CELL, regrouped */
        } else if (KIND == K_SOFT) {
            /* lo = the minimum, mid and hi = the other two (TSW_SOFTMIN3_SORTED) */
            const T lo3 = O::mn(pre[c], left), mid3 = O::mx(pre[c], left);
            const T sm = TSW_SOFTMIN3_SORTED(lo3, mid3, pre2[c], sgam, sinv, T(1),
                                             O::add, O::sub, O::mul, O::sexp, O::slog);
            v = lo3 == inf ? inf : O::add(cc[c], sm);
        } else {
            /* TSW_DTW_CELL(cost, diag, up, left) = cost + MIN(MIN(diag, up), left) */
            v = cc[c] + O::mn(pre[c], left);
        }
        if (MASK) {
            const int j = c0 + c;
            if (j < lo || j >= hi)
                v = inf;
        }
        if (TWED)
            Lp[c] = cc[c];
        P[c] = v;
        left = v;
    }
}

/* elastic.h's and cost.h's functions by type. */
template <typename T> struct El;
template <> struct El<float> {
    static __device__ __forceinline__ float gap(const float *x, int64_t dim, float g)
    {
        return tsw_erp_gap_f32(x, dim, g);
    }
    static __device__ __forceinline__ float sqe(const float *x, const float *y, int64_t dim)
    {
        return tsw_cost_sqeuclidean_f32(x, y, dim);
    }
    static __device__ __forceinline__ float sq_bound(float eps, int incl)
    {
        return tsw_sq_bound_f32(eps, incl);
    }
    static __device__ __forceinline__ float weight(double g, int64_t k, int64_t len)
    {
        return tsw_wdtw_weight_f32(g, k, len);
    }
};
template <> struct El<double> {
    static __device__ __forceinline__ double gap(const double *x, int64_t dim, double g)
    {
        return tsw_erp_gap_f64(x, dim, g);
    }
    static __device__ __forceinline__ double sqe(const double *x, const double *y, int64_t dim)
    {
        return tsw_cost_sqeuclidean_f64(x, y, dim);
    }
    static __device__ __forceinline__ double sq_bound(double eps, int incl)
    {
        return tsw_sq_bound_f64(eps, incl);
    }
    static __device__ __forceinline__ double weight(double g, int64_t k, int64_t len)
    {
        return tsw_wdtw_weight_f64(g, k, len);
    }
};

/*
 * The elastic family's cells (common/elastic.h's recurrences), one row of the lane's C
 * cells. cc: the diagonal step's cost (WDTW: the weighted cost, ADTW: the cost, ERP and
 * MSM: the match cost, EDR: 0 or 1, LCSS: 1 where the points match, else 0); cu / cl: the
 * up and left steps' costs (ERP: the gap costs of x_r and y_j, MSM: the split/merge costs,
 * EDR: 1). The CPU kernels' sums of the same operands, their minimum regrouped (exact):
 *   WDTW   cc + min(min(dg, up), left)          ADTW  cc + min(min(dg, up + pen), left + pen)
 *   edit   min(min(dg + cc, up + cu), left + cl) (ERP, EDR, MSM)
 *   LCSS   cc ? dg + 1 : max(up, left)
 * Masked cells (outside the window) take outv: +inf, LCSS 0.
 */
template <typename T, int FM, int C, bool MASK>
__device__ __forceinline__ void fam_chain(T (&P)[C], const T (&cc)[C], const T (&cu)[C],
                                          const T (&cl)[C], T left, T diag, T pen, int c0,
                                          int lo, int hi, T outv)
{
    using O = Ops<T>;
    T pre[C];
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const T dg = c ? P[c - 1] : diag, up = P[c];
        if (FM == F_WDTW)
            pre[c] = O::mn(dg, up);
        else if (FM == F_ADTW)
            pre[c] = O::mn(dg, O::add(up, pen));
        else if (FM == F_LCSS)
            pre[c] = cc[c] != T(0) ? O::add(dg, T(1)) : up;
        else
            pre[c] = O::mn(O::add(dg, cc[c]), O::add(up, cu[c]));
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
        T v;
        if (FM == F_WDTW)
            v = O::add(cc[c], O::mn(pre[c], left));
        else if (FM == F_ADTW)
            v = O::add(cc[c], O::mn(pre[c], O::add(left, pen)));
        else if (FM == F_LCSS)
            v = cc[c] != T(0) ? pre[c] : O::mx(pre[c], left);
        else
            v = O::mn(pre[c], O::add(left, cl[c]));
        if (MASK) {
            const int j = c0 + c;
            if (j < lo || j >= hi)
                v = outv;
        }
        P[c] = v;
        left = v;
    }
}

/* The dependent form's split cost (elastic.h's tsw_msm_split_dep) from the ball test's
 * sums and the two squared distances dy = |y - x|^2, dz = |z - x|^2. */
template <typename T>
__device__ __forceinline__ T msm_dep_cost(T diam, T mid, T dy, T dz, T c)
{
    using O = Ops<T>;
    if (mid <= O::mul(diam, T(0.25))) /* = diam / 4, the same rounding */
        return c;
    return dy < dz ? O::add(c, dy) : O::add(c, dz);
}

/* The ball test's sums of the dependent split at one value of each point: the split of x
 * next to y against z adds (y - z)^2 to diam and ((y + z) / 2 - x)^2 to mid. */
template <typename T>
__device__ __forceinline__ void msm_dep_acc(T x, T y, T z, T &diam, T &mid)
{
    using O = Ops<T>;
    const T d = O::sub(y, z), m = O::sub(O::mul(O::add(y, z), T(0.5)), x); /* (y + z) / 2 */
    diam = O::add(diam, O::mul(d, d));
    mid = O::add(mid, O::mul(m, m));
}

/*
 * The family's costs of the lane's C cells in one row at dim 1 (MSM's independent form:
 * one channel). av = x_r, axp = x_{r-1}, bv = y_j, bpv = y_{c0-1} (the column before the
 * lane's first), dav: the row's term (ERP: gap cost of x_r, MSM dependent: |x_r -
 * x_{r-1}|^2), dbv: the columns' (ERP: gap costs of y_j, MSM: y_{j-1} - y_j, MSM
 * dependent: |y_j - y_{j-1}|^2), wv: WDTW's weights of the cells, w(|r - j|).
 */
template <typename T, int FM, int C>
__device__ __forceinline__ void fam_costs_dim1(const Par<T> &q, T av, T axp, const T (&bv)[C],
                                               T bpv, T dav, const T (&dbv)[C],
                                               const T (&wv)[C], T sqeps, T (&cc)[C],
                                               T (&cu)[C], T (&cl)[C])
{
    using O = Ops<T>;
    const T a = FM == F_MSM ? O::sub(av, axp) : T(0); /* MSM: x_r - x_{r-1} */
    (void)a;
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const T d = O::sub(av, bv[c]), s = O::mul(d, d);
        cu[c] = T(1);
        cl[c] = T(1);
        if (FM == F_WDTW) {
            cc[c] = O::mul(s, wv[c]);
        } else if (FM == F_ADTW) {
            cc[c] = s;
        } else if (FM == F_ERPA) { /* the CPU's |d|: tsw_root_square_exact holds */
            cc[c] = O::fabs_(d);
            cu[c] = dav;
            cl[c] = dbv[c];
        } else if (FM == F_ERP) {
            cc[c] = O::sqrt_(s);
            cu[c] = dav;
            cl[c] = dbv[c];
        } else if (FM == F_EDR) {
            cc[c] = s < sqeps ? T(0) : T(1);
        } else if (FM == F_LCSS) {
            cc[c] = s < sqeps ? T(1) : T(0);
        } else if (FM == F_MSM) {
            /* tsw_msm_split from the neighbour constants (elastic.h's TSW_MSM_SPLIT_K,
             * tsw_msm_split_k): the up split of x_r next to x_{r-1} against y_j from
             * K = |a|, a = x_r - x_{r-1}, and d with a's sign bit flipped in; the left split
             * of y_j next to x_r against y_{j-1} from K = |dbv|, dbv = y_{j-1} - y_j, and d
             * with dbv's sign bit flipped in (so -d where y_j - y_{j-1} > 0); where a or
             * dbv is 0 either sign gives c */
            cc[c] = O::fabs_(d);
            cu[c] = TSW_MSM_SPLIT_K(O::fabs_(a), O::flip(d, a), q.mc, O::mn, O::mx, O::add,
                                    T(0));
            cl[c] = TSW_MSM_SPLIT_K(O::fabs_(dbv[c]), O::flip(d, dbv[c]), q.mc, O::mn, O::mx,
                                    O::add, T(0));
        } else { /* F_MSMD at dim 1 */
            const T yp = c ? bv[c - 1] : bpv;
            T du = T(0), mu = T(0), dl = T(0), ml = T(0);
            msm_dep_acc<T>(av, axp, bv[c], du, mu);
            msm_dep_acc<T>(bv[c], av, yp, dl, ml);
            cc[c] = s;
            cu[c] = msm_dep_cost<T>(du, mu, dav, s, q.mc);
            cl[c] = msm_dep_cost<T>(dl, ml, s, dbv[c], q.mc);
        }
    }
}

/*
 * The same at dim > 1, from the squared distances s (costs_gen). pa / pap: x_r / x_{r-1}
 * in the ring (value k at [k * 64]); pb: the lane's stripe of B (value k of column c at
 * pb[(k * C + c) * 32]); bprev: the stripe's column cs - 1 (value k at bprev[k]), which
 * lane 0 reads where the others read lane - 1's last column.
 */
template <typename T, int FM, int C>
__device__ __forceinline__ void fam_costs_gen(const Par<T> &q, int64_t dim, const T *pa,
                                              const T *pap, const T *pb, const T *bprev,
                                              int lane, const T (&s)[C], T dav,
                                              const T (&dbv)[C], const T (&wv)[C],
                                              T sqeps, T (&cc)[C], T (&cu)[C], T (&cl)[C])
{
    using O = Ops<T>;
    constexpr int SB = C * 32;
    if constexpr (FM == F_MSMD) {
        T du[C], mu[C], dl[C], ml[C];
#pragma unroll
        for (int c = 0; c < C; ++c)
            du[c] = mu[c] = dl[c] = ml[c] = T(0);
        for (int64_t k = 0; k < dim; ++k) {
            const T x = pa[k * kRing], xp = pap[k * kRing];
            const T *y = pb + k * SB;
            T yp = lane ? y[(C - 1) * 32 - 1] : bprev[k];
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const T yc = y[c * 32];
                msm_dep_acc<T>(x, xp, yc, du[c], mu[c]);
                msm_dep_acc<T>(yc, x, yp, dl[c], ml[c]);
                yp = yc;
            }
        }
#pragma unroll
        for (int c = 0; c < C; ++c) {
            cc[c] = s[c];
            cu[c] = msm_dep_cost<T>(du[c], mu[c], dav, s[c], q.mc);
            cl[c] = msm_dep_cost<T>(dl[c], ml[c], s[c], dbv[c], q.mc);
        }
    } else {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        cu[c] = T(1);
        cl[c] = T(1);
        if (FM == F_WDTW) {
            cc[c] = O::mul(s[c], wv[c]);
        } else if (FM == F_ADTW) {
            cc[c] = s[c];
        } else if (FM == F_ERP) {
            cc[c] = O::sqrt_(s[c]); /* tsw_euclid */
            cu[c] = dav;
            cl[c] = dbv[c];
        } else if (FM == F_EDR) {
            cc[c] = s[c] < sqeps ? T(0) : T(1);
        } else { /* F_LCSS */
            cc[c] = s[c] < sqeps ? T(1) : T(0);
        }
    }
    }
}

/* Window handling of a step loop: none, a window, or decided at run time. */
enum { WIN_NONE = 0, WIN_YES = 1, WIN_RUNTIME = 2 };
template <int V> struct WinTag {
    static constexpr int value = V;
};

/* TWED's |x - y|_p of two points of dim values (y NULL: the zero point), by tsw_lp; for
 * K_TWED the order is the literal 1 or 2, so that tsw_lp's pow branch folds away. */
template <typename T, int KIND>
__device__ __forceinline__ T twed_lp(const Par<T> &q, const T *x, const T *y, int64_t dim)
{
    if (KIND == K_TWED_P)
        return Ops<T>::lp(x, y, dim, q.p);
    return q.pk == PK_1 ? Ops<T>::lp(x, y, dim, T(1)) : Ops<T>::lp(x, y, dim, T(2));
}

/*
 * Per-warp header in shared memory: what the pair loop needs only at the edges of the
 * dynamic program (output indices, the inner series, the band). Written by lane 0 and read
 * back with volatile loads, so that none of it occupies registers across the inner loop.
 */
struct WarpHdr {
    int64_t out0, out1; /* output elements (out1 < 0: none) */
    int64_t si, sj;     /* self values of the divergence    */
    const void *B, *TB; /* inner series and its timestamps  */
    const void *BC;     /* ERP: the inner series' gap sums  */
    tsw_band band;
};
constexpr int kHdrBytes = 128;
static_assert(sizeof(WarpHdr) <= kHdrBytes, "warp header");

__device__ __forceinline__ void store_band(volatile tsw_band *d, const tsw_band &b)
{
    d->kind = b.kind;
    d->swap = b.swap;
    d->rows = b.rows;
    d->cols = b.cols;
    d->below = b.below;
    d->above = b.above;
    d->min_slope = b.min_slope;
    d->max_slope = b.max_slope;
}

/* The fields tsw_band_range reads (the slopes only for Itakura). */
__device__ __forceinline__ tsw_band load_band(const volatile tsw_band *s)
{
    tsw_band b;
    b.kind = s->kind;
    b.swap = 0;
    b.rows = s->rows;
    b.cols = s->cols;
    b.below = s->below;
    b.above = s->above;
    b.min_slope = 0;
    b.max_slope = 0;
    if (b.kind == TSW_BAND_ITAKURA) {
        b.min_slope = s->min_slope;
        b.max_slope = s->max_slope;
    }
    return b;
}

/*
 * The pair's DP by one warp. A/TA: outer series (N points) and timestamps (NULL = 1..N);
 * the inner series (M points) and the band are in the header h. ws: the warp's workspace;
 * bD: its boundary array (TWED: local terms at bD + bhalf); rng: the rows' admissible
 * ranges (rng[2r], rng[2r+1]) when bkind != TSW_BAND_NONE. Returns D(N-1, M-1), the raw
 * value, in lane *res_lane.
 */
template <typename T, int KIND, int C, bool DIM1, int FM = F_NONE>
__device__ __forceinline__ T pair_dp(const Par<T> &q, int64_t dim_, T *ws, T *bD, int64_t bhalf,
                                     const int *rng, const volatile WarpHdr *h, const T *A,
                                     const T *TA, int N, int M, int bkind, int lane,
                                     int *res_lane, int64_t ps = 1, const T *wt = nullptr,
                                     T sqeps = T(0), const T *cumA = nullptr)
{
    using O = Ops<T>;
    constexpr int W = 32 * C;
    constexpr bool TWED = KIND == K_TWED || KIND == K_TWED_P;
    constexpr bool FAM = KIND == K_FAM;
    /* the family's boundaries: ERP the cumulative gap costs, EDR the indices, LCSS 0 */
    constexpr bool ERP = FM == F_ERP || FM == F_ERPA, EDR = FM == F_EDR;
    constexpr bool MSMX = FM == F_MSM || FM == F_MSMD; /* reads y_{j-1} and x_{r-1} */
    const T inf = O::inf();
    const T outv = FM == F_LCSS ? T(0) : inf; /* cells outside the window and the boundary */
    const int64_t dim = DIM1 ? 1 : dim_;
    T ctot = T(0); /* ERP: D(-1, cs - 1), the gap costs of y before the stripe */
    T erow = T(0); /* ERP, lane 0 of stripe 0: the gap costs of x summed so far */
    T *ringD = ws + kOffD, *ringL = ws + kOffL, *ringT = ws + kOffT, *ringE = ws + kOffE;
    int *ringLo = reinterpret_cast<int *>(ws + kOffR), *ringHi = ringLo + kRing;
    T *ringA = ws + off_a<T>();
    T *Bs = ringA + kRing * dim; /* dim > 1 only */
    T *Bprev = Bs + (int64_t)C * dim * 32; /* MSM dependent at dim > 1: column cs - 1 */
    const bool cosine = !DIM1 && KIND == K_DTW && q.cost == TSW_COST_COSINE;

    const int nstripes = (M + W - 1) / W;
    int prlo = 0, prhi = 0; /* rows the previous stripe wrote to the boundary arrays */
    T result = inf;
    int rlane = 0;
    for (int s = 0; s < nstripes; ++s) {
        const int cs = s * W, ce = min(M, cs + W);
        const int klast = (ce - 1 - cs) / C; /* the last lane with a column < M */
        const bool last = s == nstripes - 1;
        int rlo, rhi;
        {
            const tsw_band bnd = load_band(&h->band);
            stripe_rows(bnd, N, cs, ce, &rlo, &rhi);
        }
        /* ERP: the inner series' staged gap sums (NULL: summed here, in the same order) */
        const T *cumB = ERP ? static_cast<const T *>(h->BC) : nullptr;
        if (ERP && cumB) { /* D(-1, cs - 1) for this stripe */
            ctot = s ? cumB[cs - 1] : T(0);
        } else if (ERP) { /* the running total moves on by W */
            T t = ctot;
            if (lane == 0)
                for (int jj = cs - W; jj >= 0 && jj < cs; ++jj)
                    t = O::add(t, El<T>::gap(static_cast<const T *>(h->B) + (int64_t)jj * dim,
                                             dim, q.erpg));
            ctot = s ? __shfl_sync(kFull, t, 0) : T(0);
        }
        if (rlo >= rhi) { /* no admissible cell in this stripe: all outside */
            prlo = prhi = 0;
            if (last) {
                result = outv;
                rlane = 0;
            }
            continue;
        }

        /* The lane's columns: constants of the stripe. Columns >= M compute garbage that
         * never reaches a column < M (values only flow right and down). */
        const T *B = static_cast<const T *>(h->B);
        const T *TB = TWED ? static_cast<const T *>(h->TB) : nullptr;
        const int c0 = cs + lane * C;
        T bv[C], tbv[C], dbv[C], nyy[C];
        /* MSM: y_{c0 - 1} (dim 1; garbage 0 at column 0, where the left step adds to
         * +inf); at dim > 1 lane 0 stages column cs - 1 for the dependent form */
        T bpv = T(0);
        if (FAM && MSMX) {
            if (DIM1)
                bpv = c0 > 0 && c0 - 1 < M ? B[(int64_t)(c0 - 1) * ps] : T(0);
            else if (lane == 0)
                for (int64_t k = 0; k < dim; ++k)
                    Bprev[k] = cs > 0 ? B[(int64_t)(cs - 1) * dim + k] : T(0);
        }
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const int jj = c0 + c;
            const bool in = jj < M;
            bv[c] = T(0);
            tbv[c] = T(0);
            dbv[c] = T(0);
            nyy[c] = T(0);
            if (DIM1) {
                bv[c] = in ? B[(int64_t)jj * ps] : T(0);
            } else {
                T yy = T(0);
                for (int64_t k = 0; k < dim; ++k) {
                    const T y = in ? B[(int64_t)jj * dim + k] : T(0);
                    Bs[(k * C + c) * 32 + lane] = y;
                    yy = O::add(yy, O::mul(y, y));
                }
                if (cosine)
                    nyy[c] = O::sqrt_(yy);
            }
            if (TWED && in) {
                /* deletion cost of b_j: |b_j - b_{j-1}|_p + nu (t_j - t_{j-1}) + lmbda,
                 * b_{-1} the zero vector at time 0 */
                tbv[c] = TB ? TB[jj] : (T)(jj + 1);
                const T tp = jj > 0 ? (TB ? TB[jj - 1] : (T)jj) : T(0);
                const T *pj = B + (int64_t)jj * dim;
                const T lps = twed_lp<T, KIND>(q, pj, jj > 0 ? pj - dim : nullptr, dim);
                dbv[c] = TSW_TWED_DEL_COST(lps, q.nu, tbv[c] - tp, q.lmbda, O::add, O::mul);
            }
            if (ERP && in) /* the gap cost of y_j */
                dbv[c] = El<T>::gap(B + (int64_t)jj * dim, dim, q.erpg);
            if (FM == F_MSM && in && jj > 0) /* y_{j-1} - y_j: the left split's |K| and flip */
                dbv[c] = O::sub(B[(int64_t)(jj - 1) * ps], bv[c]);
            if (FM == F_MSMD && in && jj > 0) /* |y_{j-1} - y_j|^2 (the split's dz) */
                dbv[c] = El<T>::sqe(B + (int64_t)(jj - 1) * dim, B + (int64_t)jj * dim, dim);
        }

        T P[C], Lp[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
            P[c] = outv; /* row rlo - 1 holds no admissible cell of the stripe */
            Lp[c] = T(0);
        }
        if (ERP && cumB && rlo == 0) { /* the boundary row D(-1, j): the gap sums */
#pragma unroll
            for (int c = 0; c < C; ++c)
                P[c] = c0 + c < M ? cumB[c0 + c] : T(0);
        } else if ((ERP || EDR) && rlo == 0) {
            /* the boundary row D(-1, j): ERP the cumulative gap costs (in the CPU's order,
             * from the stripe's running total), EDR j + 1 */
            T t = ctot;
            if (ERP)
                for (int jj = cs; jj < c0 && jj < M; ++jj)
                    t = O::add(t, El<T>::gap(B + (int64_t)jj * dim, dim, q.erpg));
#pragma unroll
            for (int c = 0; c < C; ++c) {
                if (ERP)
                    t = O::add(t, dbv[c]);
                P[c] = ERP ? t : (T)(c0 + c + 1);
            }
        }
        T hold = inf, holdL = T(0);
        /* Steps: from rlo - 1 (lane 0 picks up the diagonal of row rlo) until the last
         * lane with columns has computed row rhi - 1. */
        const int tbeg = rlo - 1, tend = rhi - 1 + klast;
        /* WDTW: the lane's weights w(|r - j|) of its cells in the row of the last step (a
         * step moves them one column on and loads one: the table holds every offset that
         * a lane's rows and columns reach, garbage lanes included) */
        T wv[C];
#pragma unroll
        for (int c = 0; c < C; ++c) {
            wv[c] = T(0);
            if (FM == F_WDTW) {
                const int k = (tbeg - 1 - lane) - (c0 + c);
                wv[c] = wt[k < 0 ? -k : k];
            }
        }
        const bool wbound = !last && lane == 31; /* writes the stripe's last column */
        /* The step loop. The hot variant (squared-Euclidean DTW at dim 1) compiles it twice,
         * without a window (no range loads or tests) and with one; the others once, with a
         * run-time test (compile time). */
        auto steps = [&](auto win_tag) {
        constexpr int WM = decltype(win_tag)::value;
        const bool WIN = WM == WIN_RUNTIME ? bkind != TSW_BAND_NONE : WM == WIN_YES;
        for (int t0 = tbeg; t0 <= tend; t0 += 32) {
            /* Refill rows t0 .. t0 + 31 of the rings; lane x loads row t0 + x. The slots
             * overwritten held rows t0 - 64 .. t0 - 33, whose last reader (lane 31) ran
             * at step t0 - 2. */
            __syncwarp();
            {
                const int x = t0 + lane, xs = x & (kRing - 1);
                const bool in = x >= 0 && x < N;
                if (DIM1) {
                    ringA[xs] = in ? A[(int64_t)x * ps] : T(0);
                } else {
                    const int64_t tot = 32 * dim, base = (int64_t)t0 * dim;
                    for (int64_t e = lane; e < tot; e += 32) {
                        const int64_t rr = e / dim, k = e - rr * dim;
                        const int row = t0 + (int)rr;
                        ringA[k * kRing + (row & (kRing - 1))] =
                            (row >= 0 && row < N) ? A[base + e] : T(0);
                    }
                }
                if (TWED) {
                    /* row -1 is the boundary point: zero vector at time 0 */
                    T tx = T(0), ex = T(0);
                    if (in) {
                        tx = TA ? TA[x] : (T)(x + 1);
                        const T tp = x > 0 ? (TA ? TA[x - 1] : (T)x) : T(0);
                        const T *px = A + (int64_t)x * dim;
                        const T lps = twed_lp<T, KIND>(q, px, x > 0 ? px - dim : nullptr, dim);
                        ex = TSW_TWED_DEL_COST(lps, q.nu, tx - tp, q.lmbda, O::add, O::mul);
                    }
                    ringT[xs] = tx;
                    ringE[xs] = ex;
                }
                if (ERP) /* the gap cost of x_r */
                    ringE[xs] = in ? El<T>::gap(A + (int64_t)x * dim, dim, q.erpg) : T(0);
                if (FM == F_MSMD) /* |x_{r-1} - x_r|^2 (the split's dy) */
                    ringE[xs] = in && x > 0 ? El<T>::sqe(A + (int64_t)(x - 1) * dim,
                                                         A + (int64_t)x * dim, dim)
                                            : T(0);
                /* lane 0's left inputs D(x, cs - 1) */
                T bd, bl = T(0);
                if (s == 0) {
                    /* padded D(0, 0) = 0, column 0 = +inf (EDR: r + 1, LCSS: 0; ERP's
                     * cumulative gap costs follow below) */
                    bd = x == -1 ? T(0) : EDR ? (T)(x + 1) : outv;
                    if (ERP && cumA && in) /* D(r, -1): the staged gap sums */
                        bd = cumA[x];
                } else {
                    const bool v = x >= prlo && x < prhi;
                    bd = v ? bD[x] : outv;
                    if (x == -1 && (ERP || EDR)) /* D(-1, cs - 1) */
                        bd = ERP ? ctot : (T)cs;
                    if (TWED)
                        bl = v ? bD[bhalf + x] : T(0);
                }
                ringD[xs] = bd;
                if (TWED)
                    ringL[xs] = bl;
                if (WIN) {
                    ringLo[xs] = in ? rng[2 * x] : 0;
                    ringHi[xs] = in ? rng[2 * x + 1] : 0;
                }
            }
            __syncwarp();
            if (ERP && s == 0 && !cumA) {
                /* D(r, -1) = the gap costs of x_0 .. x_r summed in order (the CPU's col) */
                if (lane == 0)
                    for (int u = 0; u < 32; ++u) {
                        const int x = t0 + u;
                        if (x >= 0 && x < N) {
                            erow = O::add(erow, ringE[x & (kRing - 1)]);
                            ringD[x & (kRing - 1)] = erow;
                        }
                    }
                __syncwarp();
            }

            const int nst = min(32, tend - t0 + 1);
            /* two steps per iteration: the register rotation of P then needs no moves */
#pragma unroll 2
            for (int u = 0; u < nst; ++u) {
                const int r = t0 + u - lane, slot = r & (kRing - 1);
                /* left = lane k-1's last cell of row r (computed at step t - 1) */
                T lf = __shfl_up_sync(kFull, P[C - 1], 1);
                T lfL = T(0);
                if (TWED)
                    lfL = __shfl_up_sync(kFull, Lp[C - 1], 1);
                if (lane == 0) {
                    lf = ringD[slot];
                    if (TWED)
                        lfL = ringL[slot];
                }
                const T dg = hold, dgL = holdL;
                hold = lf;
                holdL = lfL;
                if (FM == F_WDTW) { /* row r's weights: row r - 1's moved one column on */
#pragma unroll
                    for (int c = C - 1; c > 0; --c)
                        wv[c] = wv[c - 1];
                    const int k = r - c0;
                    wv[0] = wt[k < 0 ? -k : k];
                }
                const bool act = r >= rlo && r < rhi;
                if (act) {
                    int lo = 0, hi = M;
                    if (WIN) {
                        lo = ringLo[slot];
                        hi = ringHi[slot];
                    }
                    if constexpr (FAM) {
                        (void)dgL;
                        const T dav = (ERP || FM == F_MSMD) ? ringE[slot] : T(0);
                        const int pslot = (slot - 1) & (kRing - 1); /* row r - 1 */
                        T cc[C], cu[C], cl[C];
                        if (DIM1) {
                            const T axp = MSMX ? ringA[pslot] : T(0);
                            fam_costs_dim1<T, FM, C>(q, ringA[slot], axp, bv, bpv, dav, dbv,
                                                     wv, sqeps, cc, cu, cl);
                        } else {
                            T sq[C];
                            costs_gen<T, K_FAM, C>(q, dim, ringA + slot, Bs + lane, nyy, T(0),
                                                   tbv, sq);
                            fam_costs_gen<T, FM, C>(q, dim, ringA + slot, ringA + pslot,
                                                    Bs + lane, Bprev, lane, sq, dav, dbv, wv,
                                                    sqeps, cc, cu, cl);
                        }
                        if (!WIN || (lo <= c0 && c0 + C <= hi))
                            fam_chain<T, FM, C, false>(P, cc, cu, cl, lf, dg, q.pen, c0, lo,
                                                       hi, outv);
                        else
                            fam_chain<T, FM, C, true>(P, cc, cu, cl, lf, dg, q.pen, c0, lo,
                                                      hi, outv);
                    } else {
                    T tav = T(0), dav = T(0);
                    if (TWED) {
                        tav = ringT[slot];
                        dav = ringE[slot];
                    }
                    T cc[C];
                    if (DIM1)
                        costs_dim1<T, KIND, C>(q, ringA[slot], tav, bv, tbv, cc);
                    else
                        costs_gen<T, KIND, C>(q, dim, ringA + slot, Bs + lane, nyy, tav, tbv,
                                              cc);
                    /* no test when the lane's columns are all admissible; without a window
                     * a partial last lane computes columns >= M unmasked, harmlessly */
                    if (!WIN || (lo <= c0 && c0 + C <= hi))
                        row_chain<T, KIND, C, false>(P, Lp, cc, dbv, lf, dg, dgL, dav, c0, lo,
                                                     hi, q.sgam, q.sinv);
                    else
                        row_chain<T, KIND, C, true>(P, Lp, cc, dbv, lf, dg, dgL, dav, c0, lo,
                                                    hi, q.sgam, q.sinv);
                    }
                }
                if (wbound && act) { /* the stripe's last column, for stripe s + 1 */
                    bD[r] = P[C - 1];
                    if (TWED)
                        bD[bhalf + r] = Lp[C - 1];
                }
            }
        }
        };
        if (KIND != K_DTW_SQE || !DIM1)
            steps(WinTag<WIN_RUNTIME>());
        else if (bkind == TSW_BAND_NONE)
            steps(WinTag<WIN_NONE>());
        else
            steps(WinTag<WIN_YES>());
        if (last) {
            /* lane klast stopped at row rhi - 1 and kept it; the result is D(N-1, M-1) */
            rlane = klast;
            const int idx = (M - 1 - cs) - klast * C;
            T v = outv;
            if (rhi == N) {
#pragma unroll
                for (int c = 0; c < C; ++c)
                    if (c == idx)
                        v = P[c];
            }
            result = v;
        }
        prlo = rlo;
        prhi = rhi;
        __syncwarp(); /* boundary writes of this stripe before the next stripe's reads */
    }
    *res_lane = rlane;
    return result;
}

/*
 * One pair of the elastic family (K_FAM): the per-pair terms (WDTW's weights into the
 * warp's scratch, EDR's and LCSS's bound on the squared distance), the measure's program,
 * its normalisation (EDR, LCSS) or, for MSM's independent form, one program per channel
 * summed in order; the value fam_pair of cpu/family_impl.h returns, in lane *rl.
 */
template <typename T, int C, bool DIM1>
__device__ __forceinline__ T fam_pair(const Args &g, const Par<T> &q, int64_t dim, T *ws, T *bD,
                                      const int *rng, volatile WarpHdr *h, const T *A, int N,
                                      int M, int bkind, int lane, int *rl, char *wscr,
                                      int64_t i, int64_t j, bool usey, bool swap, int64_t oA)
{
    using O = Ops<T>;
    const int L = N > M ? N : M;
    const int measure = g.measure;
    T *wt = nullptr;
    if (measure == TSW_WDTW || measure == TSW_WDDTW) {
        wt = reinterpret_cast<T *>(wscr + g.off_w);
        __syncwarp(); /* the previous pair's reads are done */
        /* beyond L - 1 too: the lanes' rows and columns past N and M (garbage cells that
         * never reach a real one) reach offsets below L + 32 C + 64 */
        for (int k = lane; k < L + 32 * C + 64; k += 32)
            wt[k] = El<T>::weight(g.fam_g, k, L);
        __syncwarp();
    }
    T sqeps = T(0);
    if (measure == TSW_EDR || measure == TSW_LCSS) {
        T eps;
        if (g.epsilon >= 0) {
            eps = (T)g.epsilon;
        } else { /* tsw_pair_epsilon: max(std(a), std(b)) / 4 */
            const double sa = g.xstd[i], sb = (usey ? g.ystd : g.xstd)[j];
            eps = (T)((sa > sb ? sa : sb) / 4.0);
        }
        sqeps = El<T>::sq_bound(eps, measure == TSW_LCSS);
    }
    const int64_t bh = g.bhalf;
    switch (measure) {
    case TSW_WDTW:
    case TSW_WDDTW:
        return pair_dp<T, K_FAM, C, DIM1, F_WDTW>(q, dim, ws, bD, bh, rng, h, A, nullptr, N, M,
                                                   bkind, lane, rl, 1, wt);
    case TSW_ADTW:
        return pair_dp<T, K_FAM, C, DIM1, F_ADTW>(q, dim, ws, bD, bh, rng, h, A, nullptr, N, M,
                                                   bkind, lane, rl);
    case TSW_ERP: {
        /* the staged sums of the outer series (x, or y under Itakura's swap) */
        const void *ca = swap ? (usey ? g.ycum : g.xcum) : g.xcum;
        const T *cumA = ca ? static_cast<const T *>(ca) + oA : nullptr;
        if (DIM1 && g.dim == 1 && g.xstd && g.xstd[i] != 0.0 &&
            (usey ? g.ystd : g.xstd)[j] != 0.0) /* |x - y| is the root's bits */
            return pair_dp<T, K_FAM, C, DIM1, F_ERPA>(q, dim, ws, bD, bh, rng, h, A, nullptr, N,
                                                       M, bkind, lane, rl, 1, nullptr, T(0),
                                                       cumA);
        return pair_dp<T, K_FAM, C, DIM1, F_ERP>(q, dim, ws, bD, bh, rng, h, A, nullptr, N, M,
                                                  bkind, lane, rl, 1, nullptr, T(0), cumA);
    }
    case TSW_EDR: {
        const T v = pair_dp<T, K_FAM, C, DIM1, F_EDR>(q, dim, ws, bD, bh, rng, h, A, nullptr,
                                                       N, M, bkind, lane, rl, 1, nullptr,
                                                       sqeps);
        return O::div_(v, (T)L);
    }
    case TSW_LCSS: {
        const T v = pair_dp<T, K_FAM, C, DIM1, F_LCSS>(q, dim, ws, bD, bh, rng, h, A, nullptr,
                                                        N, M, bkind, lane, rl, 1, nullptr,
                                                        sqeps);
        const T d = O::sub(T(1), O::div_(v, (T)(N < M ? N : M)));
        return d < T(0) ? T(0) : d;
    }
    default: /* TSW_MSM */
        if (!g.msm_indep || !DIM1)
            return pair_dp<T, K_FAM, C, DIM1, F_MSMD>(q, dim, ws, bD, bh, rng, h, A, nullptr, N,
                                                       M, bkind, lane, rl);
        if (g.dim == 1)
            return pair_dp<T, K_FAM, C, DIM1, F_MSM>(q, dim, ws, bD, bh, rng, h, A, nullptr, N,
                                                      M, bkind, lane, rl);
        {
            /* one univariate program per channel k (points g.dim apart), summed in T */
            const T *B0 = static_cast<const T *>(h->B);
            T total = T(0);
            for (int64_t k = 0; k < g.dim; ++k) {
                __syncwarp();
                if (lane == 0)
                    h->B = B0 + k;
                __syncwarp();
                const T v = pair_dp<T, K_FAM, C, DIM1, F_MSM>(q, 1, ws, bD, bh, rng, h, A + k,
                                                              nullptr, N, M, bkind, lane, rl,
                                                              g.dim);
                /* the value sits in lane *rl (the same lane for every channel) */
                total = O::add(total, __shfl_sync(kFull, v, *rl));
            }
            return total;
        }
    }
}

/* Warps per block of the batch kernel. */
constexpr int kWarpsPerBlock = 4;

/* The block's dynamic shared memory (a hook so that a host emulation can supply it). */
#ifndef TSW_BATCH_DYN_SMEM
__device__ __forceinline__ unsigned char *batch_dyn_smem()
{
    extern __shared__ __align__(16) unsigned char tsw_batch_smem[];
    return tsw_batch_smem;
}
#define TSW_BATCH_DYN_SMEM() batch_dyn_smem()
#endif

/* condensed-row start S(i) = i (2n - i - 1) / 2 (the product is even) */
__device__ __forceinline__ int64_t row_start(int64_t i, int64_t n)
{
    return i * (2 * n - i - 1) / 2;
}

/* The k-th pair i < j of n in row order. */
__device__ __forceinline__ void pdist_pair(int64_t k, int64_t n, int64_t *pi, int64_t *pj)
{
    const double b = 2.0 * (double)n - 1.0;
    double disc = b * b - 8.0 * (double)k;
    disc = disc < 0.0 ? 0.0 : disc;
    int64_t i = (int64_t)((b - sqrt(disc)) * 0.5);
    if (i < 0)
        i = 0;
    if (i > n - 2)
        i = n - 2;
    while (i > 0 && row_start(i, n) > k)
        --i;
    while (i < n - 2 && row_start(i + 1, n) <= k)
        ++i;
    *pi = i;
    *pj = k - row_start(i, n) + i + 1;
}

/* Resident blocks per SM asked of the register allocator: 4 (at most 128 registers a
 * thread), fewer for the double-precision variants with the most state per lane, which
 * would spill at 128. */
template <typename T, int KIND, int C, bool DIM1> constexpr int min_blocks()
{
    return KIND == K_FAM && sizeof(T) == 8 && !DIM1 ? (C >= 4 ? 2 : 3)
           : sizeof(T) == 8 && (C >= 16 || (C >= 8 && KIND == K_TWED)) ? 2
           : sizeof(T) == 8 && (C >= 8 || (!DIM1 && KIND == K_TWED)) ? 3
                                                                       : 4;
}

/*
 * The batch kernel: blocks of wpb (<= kWarpsPerBlock) warps, each warp looping over the
 * pairs gw, gw + warps, ... of [first, first + count). Shared memory of a block: static
 * warp headers (kHdrBytes each) and, at dim 1, static workspaces (compile-time size: their
 * addresses are constants plus the warp's offset); at dim > 1 the workspaces are dynamic
 * shared memory (wpb of ws_elems elements) when use_smem, else in the warp's global
 * scratch. The result is finished (DTW root, soft-DTW divergence) in double, as the CPU
 * batch driver does, and written by the lane that holds it.
 */
template <typename T, int KIND, int C, bool DIM1>
__global__ void __launch_bounds__(kWarpsPerBlock * 32, (min_blocks<T, KIND, C, DIM1>()))
    batch_kernel(const __grid_constant__ Args g)
{
    constexpr int kWs1 = off_a<T>() + kRing; /* workspace elements per warp at dim 1 */
    __shared__ __align__(16) unsigned char hdr_raw[kWarpsPerBlock * kHdrBytes];
    __shared__ __align__(16) T ws1[DIM1 ? kWarpsPerBlock * kWs1 : 1];
    unsigned char *const smem_raw = TSW_BATCH_DYN_SMEM();
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const int wpb = blockDim.x >> 5;
    const int64_t gw = (int64_t)blockIdx.x * wpb + wib;
    const int64_t nw = (int64_t)gridDim.x * wpb;
    volatile WarpHdr *hdr = reinterpret_cast<volatile WarpHdr *>(hdr_raw + wib * kHdrBytes);
    char *const wscr = g.scr ? g.scr + (size_t)gw * (size_t)g.warp_bytes : nullptr;
    T *ws;
    if (DIM1)
        ws = ws1 + wib * kWs1;
    else if (g.use_smem)
        ws = reinterpret_cast<T *>(smem_raw) + (size_t)wib * (size_t)g.ws_elems;
    else
        ws = reinterpret_cast<T *>(wscr + g.off_ws);
    T *const bD = g.has_bound ? reinterpret_cast<T *>(wscr) : nullptr;
    int *const rng = g.window != TSW_WINDOW_NONE ? reinterpret_cast<int *>(wscr + g.off_rng)
                                                 : nullptr;
    Par<T> q;
    load_par(g, &q);
    const bool twed = KIND == K_TWED || KIND == K_TWED_P;
    const int64_t dim = DIM1 ? 1 : g.dim;
    const bool cd = g.mode == kCdist;
    const bool usey = cd || g.mode == kPaired; /* b from y (else from x) */

    for (int64_t qi = gw; qi < g.count; qi += nw) {
        const int64_t k = g.first + qi;
        int64_t i, j;
        if (cd) {
            if (k <= UINT32_MAX && g.ycount <= UINT32_MAX) /* 32-bit division when it fits */
                i = (int64_t)((uint32_t)k / (uint32_t)g.ycount);
            else
                i = k / g.ycount;
            j = k - i * g.ycount;
        } else if (g.mode == kPdist) {
            pdist_pair(k, g.xcount, &i, &j);
        } else { /* SELF: (x_k, x_k); PAIRED: (x_k, y_k) */
            i = j = k;
        }
        /* a = x_i, b = y_j (CDIST, PAIRED) or x_j */
        const int64_t oa = g.xoff[i], n = g.xlen[i] - g.dshift;
        const int64_t ob = usey ? g.yoff[j] : g.xoff[j];
        const int64_t m = (usey ? g.ylen[j] : g.xlen[j]) - g.dshift;
        /* (g.dim: MSM's independent form runs the dim-1 program over several channels) */
        const T *a = static_cast<const T *>(g.xv) + oa * g.dim;
        const T *b = static_cast<const T *>(usey ? g.yv : g.xv) + ob * g.dim;
        const T *ta = twed && g.xt ? static_cast<const T *>(g.xt) + oa : nullptr;
        const void *tbase = usey ? g.yt : g.xt;
        const T *tb = twed && tbase ? static_cast<const T *>(tbase) + ob : nullptr;
        const tsw_band band = tsw_band_make(g.window, g.radius, g.slope, n, m);
        __syncwarp(); /* the previous pair's header reads are done */
        if (lane == 0) {
            int64_t o0, o1 = -1;
            if (cd) {
                o0 = i * g.ycount + j;
            } else if (g.mode == kPdist) {
                if (g.layout == TSW_PDIST_CONDENSED) {
                    o0 = k;
                } else {
                    o0 = i * g.xcount + j;
                    o1 = j * g.xcount + i;
                }
            } else if (g.mode == kPaired) {
                o0 = k;
            } else {
                o0 = k * g.self_stride;
            }
            hdr->out0 = o0;
            hdr->out1 = o1;
            hdr->si = i;
            hdr->sj = j;
            hdr->B = band.swap ? a : b;
            hdr->TB = band.swap ? ta : tb;
            if (KIND == K_FAM) { /* ERP's staged gap sums of the inner series */
                const void *cb = usey ? g.ycum : g.xcum;
                const void *cx = band.swap ? g.xcum : cb;
                hdr->BC = cx ? static_cast<const T *>(cx) + (band.swap ? oa : ob) : nullptr;
            }
            store_band(&hdr->band, band);
        }
        if (band.kind != TSW_BAND_NONE) {
            /* the rows' admissible ranges, once per pair (read back through the ring) */
            for (int64_t r = lane; r < band.rows; r += 32) {
                int64_t l, h;
                tsw_band_range(&band, r, &l, &h);
                rng[2 * r] = (int)l;
                rng[2 * r + 1] = (int)h;
            }
        }
        __syncwarp();
        const T *A = band.swap ? b : a, *TA = band.swap ? tb : ta;
        int rl;
        T v;
        if constexpr (KIND == K_FAM)
            v = fam_pair<T, C, DIM1>(g, q, dim, ws, bD, rng, hdr, A, (int)band.rows,
                                     (int)band.cols, band.kind, lane, &rl, wscr, i, j, usey,
                                     band.swap != 0, band.swap ? ob : oa);
        else
            v = pair_dp<T, KIND, C, DIM1>(q, dim, ws, bD, g.bhalf, rng, hdr, A, TA,
                                          (int)band.rows, (int)band.cols, band.kind, lane,
                                          &rl);
        if (lane == rl) {
            double o = (double)v;
            if (g.finish) {
                /* as the CPU batch driver: the divergence in double, then tsw__finish */
                if (g.measure == TSW_SOFT_DTW && g.normalize && g.self_x) {
                    const T *sx = static_cast<const T *>(g.self_x);
                    const T *sy = g.self_y ? static_cast<const T *>(g.self_y) : sx;
                    const double s2 = __dadd_rn((double)sx[hdr->si], (double)sy[hdr->sj]);
                    o = __dsub_rn(o, __dmul_rn(0.5, s2));
                }
                /* tsw__finish: DTW and DDTW */
                if ((g.measure == TSW_DTW || g.measure == TSW_DDTW) && !g.accumulated &&
                    g.cost == TSW_COST_SQEUCLIDEAN)
                    o = sqrt(o);
            }
            T *out = static_cast<T *>(g.out);
            const int64_t o1 = hdr->out1;
            out[hdr->out0] = (T)o;
            if (o1 >= 0)
                out[o1] = (T)o;
        }
    }
}

} // namespace tsw_batch

#endif
