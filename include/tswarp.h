/*
 * tswarp: elastic time-series measures (DTW, TWED, Soft-DTW) on the CPU and on NVIDIA GPUs.
 *
 * One public header. Conventions (see README.md "C API"):
 *   - Every function returns int: 0 (TSW_OK) on success or a negative TSW_E* code from
 *     TSW_ERRNO_MAP; tsw_strerror() and tsw_err_name() turn a code into text.
 *   - Results come back through out-parameters. A call that fails validation or cannot
 *     allocate its workspace returns before writing anything; a batch call stopped by
 *     its progress callback (TSW_ECANCELED) may leave its output partly written.
 *   - Callers own inputs and outputs. The library allocates only O(length) workspace per
 *     thread, once per call, through the allocator set by tsw_replace_allocator().
 *   - Nothing prints, nothing calls exit(); every function is thread-safe (the allocator
 *     must be replaced before other calls, as with libuv).
 *   - Options live in structs with *_default() initialisers, passed by pointer; a NULL
 *     tsw_exec pointer means tsw_exec_default().
 *
 * Shapes: a series is (length, dim) row-major: value k of time point t is values[t*dim + k]
 * (channels_last, the layout of the whole library: tslearn's and dtaidistance's; the Python
 * package reads aeon's (channels, length) with layout='channels_first' by transposing into
 * this one). A collection is count series of one dim back to back (tsw_collection).
 */
#ifndef TSWARP_H
#define TSWARP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TSWARP_STATIC)
#define TSW_EXPORT
#elif defined(_WIN32)
#ifdef TSWARP_BUILDING
#define TSW_EXPORT __declspec(dllexport)
#else
#define TSW_EXPORT __declspec(dllimport)
#endif
#else
#define TSW_EXPORT __attribute__((visibility("default")))
#endif

#define TSWARP_VERSION_MAJOR 0
#define TSWARP_VERSION_MINOR 1
#define TSWARP_VERSION_PATCH 0
#define TSWARP_VERSION_HEX                                                                    \
    ((TSWARP_VERSION_MAJOR << 16) | (TSWARP_VERSION_MINOR << 8) | TSWARP_VERSION_PATCH)

/* ---------------------------------------------------------------------------------------
 * Status codes: one table. XX(name, value, message).
 * ------------------------------------------------------------------------------------- */
#define TSW_ERRNO_MAP(XX)                                                                     \
    XX(EINVAL, -1, "invalid argument")                                                        \
    XX(ENOMEM, -2, "out of memory")                                                           \
    XX(EDTYPE, -3, "unsupported or mismatched dtype")                                         \
    XX(ESHAPE, -4, "invalid shape: empty series, zero dimension or mismatched dimensions")    \
    XX(ENONFINITE, -5, "input contains NaN or infinity")                                      \
    XX(ETIMES, -6, "timestamps are not strictly increasing or not finite")                    \
    XX(EPARAM, -7, "invalid parameter value")                                                 \
    XX(EOVERFLOW, -8, "size too large: element count overflows")                              \
    XX(ECANCELED, -9, "cancelled by the progress callback")                                   \
    XX(ENODEV, -10, "no CUDA backend was built or no CUDA device was found")                  \
    XX(ECUDA, -11, "CUDA runtime error")                                                      \
    XX(ENOTSUP, -12, "operation not supported by this backend")                              \
    XX(ENOPATH, -13, "no alignment path: the step pattern or window admits none")         \
    XX(ERANGE, -14, "the accumulated cost overflows: no path of finite cost")

typedef enum {
    TSW_OK = 0,
#define TSW_XX_(name, value, msg) TSW_##name = value,
    TSW_ERRNO_MAP(TSW_XX_)
#undef TSW_XX_
} tsw_status;

/* Message for a status code ("success" for 0, "unknown error" for codes not in the table). */
TSW_EXPORT const char *tsw_strerror(int status);
/* Name of a status code, e.g. "TSW_EINVAL". */
TSW_EXPORT const char *tsw_err_name(int status);

/* Library version as "MAJOR.MINOR.PATCH", and as TSWARP_VERSION_HEX. */
TSW_EXPORT const char *tsw_version_string(void);
TSW_EXPORT unsigned tsw_version(void);

/* ---------------------------------------------------------------------------------------
 * Allocator hooks (optional). Replace before any other call; both NULL restores malloc/free.
 * ------------------------------------------------------------------------------------- */
typedef void *(*tsw_malloc_fn)(size_t size);
typedef void (*tsw_free_fn)(void *ptr);
TSW_EXPORT int tsw_replace_allocator(tsw_malloc_fn malloc_fn, tsw_free_fn free_fn);

/* ---------------------------------------------------------------------------------------
 * Measures and their parameters
 * ------------------------------------------------------------------------------------- */
typedef enum {
    TSW_F32 = 0, /* float */
    TSW_F64 = 1  /* double */
} tsw_dtype;

typedef enum {
    TSW_DTW = 0,     /* dynamic time warping */
    TSW_TWED = 1,    /* time warp edit distance (Marteau 2009) */
    TSW_SOFT_DTW = 2, /* soft-DTW (Cuturi and Blondel 2017), squared Euclidean cost */
    /* The elastic family (aeon's definitions; the conventions where peers differ are given
     * with each). Both backends: the GPU's values are the CPU's bit for bit (WDTW's and
     * WDDTW's within an ulp of their weights, which the GPU computes with its own exp); a
     * single pair runs on one warp (no grid-wide wavefront for the family yet). */
    TSW_WDTW = 3,  /* weighted DTW (Jeong et al. 2011): squared Euclidean cost of (i, j) times
                      w(|i - j|) = 1 / (1 + exp(-g (|i - j| - max(n, m) / 2))); accumulated */
    TSW_DDTW = 4,  /* derivative DTW (Keogh and Pazzani 2001): DTW (its cost and accumulated
                      fields) of the derivatives ((x_i - x_{i-1}) + (x_{i+1} - x_{i-1}) / 2) / 2,
                      i = 1..n-2 (aeon's average of slopes; lengths >= 3) */
    TSW_WDDTW = 5, /* WDTW of the same derivatives */
    TSW_ADTW = 6,  /* amerced DTW (Herrmann and Webb 2023): squared Euclidean cost, every
                      non-diagonal move adds warp_penalty; accumulated */
    TSW_ERP = 7,   /* edit distance with real penalty (Chen and Ng 2004): Euclidean cost of a
                      match, |x_i - g|_2 of a gap (g = erp_g in every channel); the boundary
                      row and column hold the cumulative gap costs (the paper's recursion;
                      aeon 1.6 puts the whole series' gap cost in every boundary cell) */
    TSW_EDR = 8,   /* edit distance on real sequences (Chen et al. 2005): a match costs 0 when
                      |x_i - y_j|_2 < epsilon, else 1; a gap 1; divided by max(n, m). The
                      boundary holds i and j (the paper's; aeon 1.6 makes it 0) */
    TSW_LCSS = 9,  /* longest common subsequence: points match when |x_i - y_j|_2 <= epsilon;
                      1 - LCSS / min(n, m); cells outside the window count 0 (aeon) */
    TSW_MSM = 10,  /* move-split-merge (Stefan et al. 2013): |x_i - y_j| to move, c (+ the
                      distance to the nearer neighbour when x_i is not between them) to split
                      or merge. msm_independent 1: the sum over channels of univariate MSM;
                      0: aeon's dependent form (squared Euclidean distances) */
    TSW_SHAPE_DTW = 11 /* shape DTW (Zhao and Itti 2018), aeon's: every point's descriptor of
                          its neighbourhood of 2 reach + 1 points (the series padded with its
                          end values), DTW of the descriptors (squared Euclidean), and the value
                          the squared Euclidean costs of the series' own points summed along
                          that DTW's path, traced back by aeon's rule. CPU only (device CUDA:
                          TSW_ENOTSUP); O(n m) memory
                          a pair (the path needs the whole matrix) */
} tsw_measure;

/* Shape DTW's descriptor of a neighbourhood (tsw_params.descriptor). */
typedef enum {
    TSW_SHAPE_IDENTITY = 0, /* the neighbourhood's values (aeon's only descriptor)        */
    TSW_SHAPE_PAA = 1       /* their piecewise aggregate: paa_segments means of
                               (2 reach + 1) / paa_segments points each, the remainder's
                               last points left out (tslearn's PAA)                      */
} tsw_shape_descriptor;

/* TSW_EDR's epsilon from the data: max(std(a), std(b)) / 4, each std over all values of a
 * series (aeon's default). */
#define TSW_EPSILON_AUTO (-1.0)

/* Local cost between two points x, y of R^dim (DTW only). */
typedef enum {
    TSW_COST_SQEUCLIDEAN = 0, /* sum_k (x_k - y_k)^2                                        */
    TSW_COST_EUCLIDEAN = 1,   /* sqrt(sum_k (x_k - y_k)^2)                                  */
    TSW_COST_ABS = 2,         /* sum_k |x_k - y_k|  (L1, "cityblock")                        */
    TSW_COST_COSINE = 3       /* 1 - <x,y> / (|x| |y|); 0 if both are zero, 1 if one is zero */
} tsw_cost;
/* The cosine cost is computed on the points scaled to unit length first (|x| with x scaled
 * by its largest component): scale invariant over the type's whole range in every host
 * entry point. The device-memory entry points (tsw_*_device) read the caller's GPU buffers as
 * they are: there it holds for |x| within about [1e-150, 1e150] (float32 [1e-18, 1e18]).
 * Nearly parallel points cancel in 1 - cos: the error is an ulp of 1, not of the cost. */

/*
 * Global constraint on the alignment, for every measure. With n = len(a), m = len(b):
 *   SAKOE_CHIBA           radius r = window_radius cells (an integer >= 0), extended for
 *                         unequal lengths exactly as tslearn does: cell (i, j) is admissible
 *                         iff -r - max(0, n-m) <= j - i <= r + max(0, m-n).
 *   SAKOE_CHIBA_FRACTION  the same band with r = floor(window_radius * min(n, m)),
 *                         window_radius in [0, 1] (aeon's `window` for equal lengths).
 *   ITAKURA               tslearn's Itakura parallelogram with maximum slope
 *                         itakura_max_slope >= 1. If it admits no path (n and m too
 *                         different), the distance is +inf, as in tslearn.
 * Cost of a band: every call computes only the window's cells, on both devices: a radius r
 * costs O(n r) time for distances, soft-DTW values and gradients, paths and the batch calls
 * of long series. Working memory is never O(n m): a distance takes O(n + m) (the series'
 * own size), a path O(n + m) plus its steps, 2 bits a window cell per stored block (the
 * path itself has up to n + m - 1 cells), a soft-DTW gradient O(n r) on both devices (the
 * band's softmin values, which the backward pass reads).
 */
typedef enum {
    TSW_WINDOW_NONE = 0,
    TSW_WINDOW_SAKOE_CHIBA = 1,
    TSW_WINDOW_SAKOE_CHIBA_FRACTION = 2,
    TSW_WINDOW_ITAKURA = 3
} tsw_window;

/* The largest soft-DTW gamma (float64 / float32 inputs): -gamma log(number of paths)
 * stays finite for series up to about 1e8 points. */
#define TSW_GAMMA_MAX 1e300
#define TSW_GAMMA_MAX_F32 1e30

typedef struct tsw_params {
    tsw_measure measure;
    tsw_window window;
    double window_radius;     /* SAKOE_CHIBA: cells (integral, >= 0); _FRACTION: in [0, 1] */
    double itakura_max_slope; /* ITAKURA: >= 1 (default 2)                                 */

    /* DTW */
    tsw_cost cost;   /* default TSW_COST_SQEUCLIDEAN */
    int accumulated; /* 0 (default): for the sqeuclidean cost return the square root of the
                        accumulated cost (tslearn, dtaidistance); for other costs the
                        accumulated cost. 1: always the accumulated cost (aeon). */

    /* TWED: D(i,j) = min(D(i-1,j) + |a_i - a_{i-1}|_p + nu (ta_i - ta_{i-1}) + lmbda,
     *                    D(i,j-1) + |b_j - b_{j-1}|_p + nu (tb_j - tb_{j-1}) + lmbda,
     *                    D(i-1,j-1) + |a_i - b_j|_p + |a_{i-1} - b_{j-1}|_p
     *                               + nu (|ta_i - tb_j| + |ta_{i-1} - tb_{j-1}|))
     * with the boundary point a_{-1} = b_{-1} = 0 at time 0 (Marteau's reference code) and
     * default timestamps 1..n, which is what aeon's twe_distance computes. */
    double nu;    /* stiffness >= 0, default 0.001        */
    double lmbda; /* deletion penalty >= 0, default 1.0   */
    double p;     /* Lp order of the local distance >= 1, default 2 (root taken: |x|_p) */

    /* Soft-DTW */
    double gamma;  /* smoothing, default 1.0, in [DBL_MIN, TSW_GAMMA_MAX] (float64 inputs)
                      or [FLT_MIN, TSW_GAMMA_MAX_F32] (float32 inputs), else TSW_EPARAM:
                      below, 1/gamma overflows; above, -gamma log(number of paths)
                      overflows. gamma -> 0 tends to the accumulated DTW cost. */
    int normalize; /* 1: soft-DTW divergence sdtw(a,b) - (sdtw(a,a) + sdtw(b,b)) / 2 */

    /* The elastic family (see tsw_measure) */
    double g;            /* WDTW, WDDTW: weight steepness >= 0, default 0.05             */
    double warp_penalty; /* ADTW: >= 0, default 1.0                                       */
    double erp_g;        /* ERP: the gap value, finite, default 0.0                        */
    double epsilon;      /* LCSS: >= 0, default 1.0; EDR: >= 0 or TSW_EPSILON_AUTO, default
                            TSW_EPSILON_AUTO (tsw_params_default gives each measure its own) */
    double c;            /* MSM: split/merge cost >= 0, default 1.0                        */
    int msm_independent; /* MSM: 1 (default) independent, 0 dependent                     */

    /* Shape DTW (see TSW_SHAPE_DTW) */
    int64_t reach;        /* the neighbourhood's half width >= 0, default 15 (aeon's)      */
    int descriptor;       /* tsw_shape_descriptor, default TSW_SHAPE_IDENTITY              */
    int64_t paa_segments; /* TSW_SHAPE_PAA: 1 .. 2 reach + 1, default 5                    */
} tsw_params;

/* Defaults for a measure (all fields set; the ones of other measures too). */
TSW_EXPORT void tsw_params_default(tsw_params *params, tsw_measure measure);

/* ---------------------------------------------------------------------------------------
 * Execution options
 * ------------------------------------------------------------------------------------- */
typedef enum {
    TSW_DEVICE_AUTO = 0, /* CUDA when built, present and the work is large enough; else, or
                            when the GPU cannot hold the work (TSW_ENOMEM), the CPU */
    TSW_DEVICE_CPU = 1,
    TSW_DEVICE_CUDA = 2
} tsw_device;

typedef enum {
    TSW_IMPL_AUTO = 0,      /* fastest available path                                 */
    TSW_IMPL_REFERENCE = 1, /* plain scalar reference that defines correctness (tests) */
    TSW_IMPL_SCALAR = 2     /* optimised code without SIMD across pairs                */
} tsw_impl;

/* Progress of a batch call: called from the calling thread only, at most every ~50 ms and
 * once at the end, with done and total counted in pairs. A non-zero return cancels the
 * call: the threads stop after the pair each is computing and the call returns
 * TSW_ECANCELED (the output may then be partly written). tsw_distance on the CPU polls it
 * too while it computes one long pair (counted in cells, between strips of rows), so that
 * a caller can stop a pair of 10^5 points or more within a fraction of a second. */
typedef int (*tsw_progress_fn)(void *user, int64_t done, int64_t total);

typedef struct tsw_exec {
    int n_threads;   /* OpenMP threads; 0 (default) = all cores. More than the processors
                        this process may use (omp_get_num_procs()) are clamped to them. */
    tsw_device device;
    int device_index; /* CUDA device ordinal */
    tsw_impl impl;
    tsw_progress_fn progress; /* optional */
    void *progress_user;
    /* CUDA only (ignored on the CPU): */
    void *cuda_stream; /* a cudaStream_t of device_index. Host-memory calls: NULL (default)
                          = a stream of their own. *_device calls: NULL = the legacy
                          default stream, as CuPy and PyTorch use by default. */
    void *cuda_workspace;        /* optional caller-owned device memory for the call's
                                    temporaries (see tsw_*_workspace_size); NULL = the
                                    library allocates and frees its own */
    size_t cuda_workspace_bytes; /* its size; too small gives TSW_EINVAL */
    int cuda_async; /* *_device calls only (0 or 1). 0 (default): return when the outputs
                       hold the results. 1: check the inputs (one wait, for the check's
                       answer: soft-DTW gradients queue their kernels before it, and they
                       write nothing on bad input), queue the work on cuda_stream and
                       return: the outputs hold the results when the stream reaches that
                       point, as CuPy and PyTorch operations do (the Python package sets it
                       for GPU arrays). A caller-owned workspace must then not be used by
                       another stream before that point. A progress callback makes the call
                       wait at each report. */
    /* Several GPUs (cdist, pdist, paired, knn, search, tsw_soft_dtw_grad,
     * tsw_shapelet_search and tsw_shapelet_top; the *_device forms of cdist, pdist, paired
     * and tsw_soft_dtw_grad stage their arrays through host memory (device_index's arrays
     * copied to the host in order on cuda_stream, the results copied back, the call
     * returning when they are there: cuda_async and cuda_workspace do not apply); every
     * other call runs on device_index alone): n_devices >= 2 with devices[0..n_devices) distinct CUDA ordinals, or n_devices
     * = TSW_ALL_DEVICES for every GPU the process sees; 0 or 1 (the default 0): device_index
     * alone. The work is cut into tiles (cdist, paired, knn, soft-DTW gradients: blocks of
     * rows, a gradient tile writing only its series' rows (series out of order or sharing
     * rows run on devices[0] alone); pdist: blocks of the triangle, each computed once;
     * search: chunks of windows whose candidates the CPU recomputes exactly, as on one GPU;
     * shapelets: the candidates of blocks of series, each ranked on every series) balanced
     * by cells, largest first,
     * that one host thread per device takes from a shared queue; the values are one GPU's,
     * bit for bit. The progress callback is called from the calling thread with the
     * devices' work summed, and stops them all; the first device to fail (out of memory,
     * lost) stops the others and its status is the call's, with its detail; each device
     * frees its memory. With TSW_DEVICE_AUTO the devices serve the calls that AUTO sends to
     * the GPU. Host-memory calls: cuda_stream and cuda_workspace must be NULL (each
     * device uses its own). */
    const int *devices;
    int n_devices;
} tsw_exec;

#define TSW_ALL_DEVICES (-1)

TSW_EXPORT void tsw_exec_default(tsw_exec *exec);

/* ---------------------------------------------------------------------------------------
 * Data
 * ------------------------------------------------------------------------------------- */

/* One series: length time points of dim values, (length, dim) row-major. */
typedef struct tsw_series {
    const void *values; /* (length, dim) */
    int64_t length;     /* >= 1 */
    const void *times;  /* optional TWED timestamps (length,), same dtype; NULL = 1..length */
} tsw_series;

/* A collection of count series of one dim, possibly of different lengths (ragged layout). */
typedef struct tsw_collection {
    const void *values;      /* series back to back; series i starts at row offsets[i]     */
    const int64_t *offsets;  /* (count,) row offsets, or NULL: series i starts at i*length */
    const int64_t *lengths;  /* (count,) lengths >= 1, or NULL: every series has `length`  */
    int64_t length;          /* the common length when lengths == NULL                     */
    int64_t count;           /* >= 1                                                       */
    const void *times;       /* optional TWED timestamps, rows laid out like values        */
} tsw_collection;

/* ---------------------------------------------------------------------------------------
 * Distances
 * ------------------------------------------------------------------------------------- */

/* The measure between a and b, both (length, dim) of dtype, computed in that precision in
 * O(length) memory. *out receives the value widened to double. */
TSW_EXPORT int tsw_distance(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_series *a, const tsw_series *b, double *out,
                            const tsw_exec *exec);

/* Every x_i against every y_j: out is (x->count, y->count) row-major, of dtype. */
TSW_EXPORT int tsw_cdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw_collection *x, const tsw_collection *y, void *out,
                         const tsw_exec *exec);

typedef enum {
    TSW_PDIST_FULL = 0,     /* (n, n) symmetric; diagonal d(x_i, x_i)                  */
    TSW_PDIST_CONDENSED = 1 /* (n (n-1) / 2,), pairs i < j in row order, as scipy does */
} tsw_pdist_layout;

/* All pairs of one collection, each unordered pair computed once. out has the layout's
 * size, of dtype. */
TSW_EXPORT int tsw_pdist(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                         const tsw_collection *x, tsw_pdist_layout layout, void *out,
                         const tsw_exec *exec);

/* Pairs of two collections taken in order, as a batched loss needs them: out[k] is the
 * measure between x_k and y_k, (x->count,) of dtype; y->count must equal x->count
 * (else TSW_ESHAPE). */
TSW_EXPORT int tsw_paired(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw_collection *x, const tsw_collection *y, void *out,
                          const tsw_exec *exec);

/* Size in elements of pdist's output for n series in a layout (0 on overflow). */
TSW_EXPORT int64_t tsw_pdist_size(int64_t n, tsw_pdist_layout layout);

/* ---------------------------------------------------------------------------------------
 * Device-memory variants (CUDA backend)
 *
 * The same operations with the series values, the timestamps and the output in device
 * memory of GPU exec->device_index (from cudaMalloc, CuPy or PyTorch); offsets and lengths
 * of a collection stay host arrays. The work runs on exec->cuda_stream (NULL: the legacy
 * default stream); the call checks the inputs on the device first (TSW_ENONFINITE,
 * TSW_ETIMES: nothing is written), waits for the stream and returns when out holds the
 * results (with exec->cuda_async = 1: once the work is queued). exec->device is ignored
 * (these always run on the GPU). Without a CUDA backend or device: TSW_ENODEV.
 * ------------------------------------------------------------------------------------- */

/* *out (device) receives one value of dtype. */
TSW_EXPORT int tsw_distance_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                   const tsw_series *a, const tsw_series *b, void *out,
                                   const tsw_exec *exec);
TSW_EXPORT int tsw_cdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                const tsw_collection *x, const tsw_collection *y, void *out,
                                const tsw_exec *exec);
TSW_EXPORT int tsw_pdist_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                const tsw_collection *x, tsw_pdist_layout layout, void *out,
                                const tsw_exec *exec);
TSW_EXPORT int tsw_paired_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_collection *x, const tsw_collection *y, void *out,
                                 const tsw_exec *exec);

/*
 * Device memory (bytes) a *_device call needs for its temporaries with these arguments, in
 * *bytes. Give at least that much as exec->cuda_workspace (aligned to 256 bytes, as
 * cudaMalloc's are) and the call allocates no device memory at all. The values pointers of
 * the series may be NULL here; lengths, offsets and counts must be set.
 */
TSW_EXPORT int tsw_distance_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                           int64_t dim, const tsw_series *a,
                                           const tsw_series *b, const tsw_exec *exec,
                                           size_t *bytes);
TSW_EXPORT int tsw_cdist_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                        int64_t dim, const tsw_collection *x,
                                        const tsw_collection *y, const tsw_exec *exec,
                                        size_t *bytes);
TSW_EXPORT int tsw_pdist_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                        int64_t dim, const tsw_collection *x,
                                        tsw_pdist_layout layout, const tsw_exec *exec,
                                        size_t *bytes);
TSW_EXPORT int tsw_paired_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                         int64_t dim, const tsw_collection *x,
                                         const tsw_collection *y, const tsw_exec *exec,
                                         size_t *bytes);

/* ---------------------------------------------------------------------------------------
 * Alignment: optimal warping paths, subsequence DTW
 *
 * D is the accumulated cost over the (n, m) grid of cells (i, j), i indexing a (or the
 * query), j indexing b (or the reference), c(i, j) the local cost (tsw_cost). As in
 * librosa.sequence.dtw (Mueller, "Fundamentals of Music Processing", 3.2 and 7.2):
 *   D(0, 0) = c(0, 0)
 *   D(i, j) = min over the pattern's steps s = (di, dj) of D(i - di, j - dj) + w_s c(i, j)
 * and the path lists the cells the steps land on, from (0, 0) to (n-1, m-1). The cost is
 * D(n-1, m-1), the accumulated cost (for SYMMETRIC1 with the sqeuclidean cost, the square of
 * tsw_distance's default DTW value).
 *
 * Ties: each cell takes the FIRST step of its pattern's order (below) whose candidate
 * D(i - di, j - dj) + w_s c(i, j), rounded in the computation's precision, is minimal;
 * the path follows those choices back from the end. This is librosa's rule (its strict '<'
 * over the steps in order). dtaidistance's best_path prefers (1, 0) over (0, 1) instead,
 * so on exact ties of SYMMETRIC1 the two may differ; off ties all three agree.
 * Every method (stored backtrace, linear memory, any thread count) gives the same path.
 * ------------------------------------------------------------------------------------- */
typedef enum {
    TSW_STEP_SYMMETRIC1 = 0, /* steps (1,1), (0,1), (1,0), weights 1, 1, 1: dtaidistance's and
                                librosa's default; the path advances by one cell at a time */
    TSW_STEP_P05 = 1,        /* steps (1,1), (1,2), (2,1), weights 2, 3, 3 (librosa
                                step_sizes_sigma=[[1,1],[1,2],[2,1]], weights_mul=[2,3,3]):
                                slopes between 1/2 and 2, every path weighs the same
                                Manhattan length. A path exists iff m <= 2n - 1 and
                                n <= 2m - 1 (else TSW_ENOPATH) */
    TSW_STEP_P05_QUERY = 2   /* the same steps, weights 1, 1, 2 (librosa weights_mul=[1,1,2]):
                                a step weighs the rows of a it advances, so every
                                subsequence path of an n-point query weighs n. The
                                segmental DTW paper's pattern (Mueller's subsequence DTW).
                                Reachability as P05 */
} tsw_step;

typedef enum {
    TSW_PATH_AUTO = 0,   /* stored backtrace when it fits memory_limit, else linear memory */
    TSW_PATH_STORED = 1, /* the step of every cell kept, 2 bits per cell (n m / 4 bytes)   */
    TSW_PATH_LINEAR = 2  /* O(n + m) memory: the grid split in quadrants recursively, each
                            recomputed from boundary rows and columns kept by a forward
                            pass, until a block fits memory_limit (about 2-4 forward passes
                            of work in all); same path as STORED */
} tsw_path_method;

typedef struct tsw_align_params {
    tsw_step step;        /* default TSW_STEP_SYMMETRIC1                                    */
    tsw_cost cost;        /* default TSW_COST_SQEUCLIDEAN                                   */
    tsw_window window;    /* the core's windows (tsw_params): inadmissible cells are never on
                             the path; none for subsequence DTW (else TSW_EPARAM)           */
    double window_radius;
    double itakura_max_slope;
    tsw_path_method method;
    size_t memory_limit;  /* bytes for stored steps; 0 (default) = half the available
                             physical memory. TSW_PATH_LINEAR uses blocks of at most this
                             size too (at least 64 KiB). */
} tsw_align_params;

TSW_EXPORT void tsw_align_params_default(tsw_align_params *params);

/* Capacity in (i, j) pairs that tsw_dtw_path needs: n + m - 1 (0 on overflow or bad sizes). */
TSW_EXPORT int64_t tsw_path_max_length(int64_t n, int64_t m);

/*
 * Optimal warping path between a (n points) and b (m points), both (length, dim) of dtype.
 * path: caller-owned, (capacity, 2) int64 row-major with capacity >= tsw_path_max_length;
 * receives *length pairs (i, j), from (0, 0) to (n-1, m-1). *cost: D(n-1, m-1) as a double.
 * Errors before any work: TSW_ENOPATH when the step pattern or the window admits no path.
 * Infinite costs (one rule in the library): a value that overflows the type is +inf
 * (tsw_distance of the same pair returns +inf); a call that returns a path or matches has
 * none of finite cost then and returns TSW_ERANGE (tsw_last_error_detail says so).
 * Progress: exec->progress is called with cells of forward passes done; a non-zero return
 * gives TSW_ECANCELED within one row of the grid, with path, length and cost untouched
 * (every error leaves them untouched; on the GPU the callback sees progress between kernel
 * launches). CUDA: device = CUDA computes on GPU exec->device_index (host arrays in and out;
 * the same path and cost bits as the CPU; the method's memory is GPU memory: AUTO stores
 * the steps when n m / 4 bytes fit memory_limit, else the free GPU memory, and otherwise
 * keeps checkpoint rows and recomputes blocks); device = AUTO takes the GPU for large
 * grids and falls back to the CPU when there is none or it cannot hold the work.
 */
/*
 * One update of DTW barycenter averaging (DBA, Petitjean et al. 2011) of the barycenter z
 * (L points) against the series of x, with weights (NULL: all 1; finite, >= 0): each
 * series' tsw_dtw_path to z (z the rows, or with series_rows the series the rows, which
 * breaks ties the other way: tslearn's "petitjean" order), computed in parallel on the CPU
 * (series of one length in SIMD lanes) or, with exec->device CUDA, in one batch on GPU
 * exec->device_index (SYMMETRIC1 and the squared Euclidean cost only, else TSW_ENOTSUP;
 * grids of at most 2048 rows in float64, 4096 in float32; the same paths), then, series by
 * series in order, total[r * dim + c] += w_k x_k[j][c] for every path pair
 * of z's point r and the series' point j, valence[r] += w_k (pairs of point r), and *cost
 * += w_k D_k (the path's accumulated cost). The new barycenter is total / valence; every
 * thread count gives the same bits. total: (L, dim) doubles, valence: (L,) doubles.
 * Progress: series done of x->count, polled from the calling thread.
 */
TSW_EXPORT int tsw_dba_step(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_series *z, const tsw_collection *x,
                            const double *weights, int series_rows, double *total,
                            double *valence, double *cost, const tsw_exec *exec);

TSW_EXPORT int tsw_dtw_path(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_series *a, const tsw_series *b, int64_t *path,
                            int64_t capacity, int64_t *length, double *cost,
                            const tsw_exec *exec);

/*
 * The alignment path of TWED or an elastic-family measure (params->measure TSW_TWED, or
 * TSW_WDTW .. TSW_MSM) by aeon's rule (aeon.distances.<measure>_alignment_path; TWED's is
 * twe_alignment_path, a's and b's timestamps when given): the measure's accumulated matrix
 * over the whole grid (O(n m) memory: (n + 1) (m + 1) values of dtype, twice for MSM's
 * independent form), then back from the last cell: at (i, j) with i, j > 0 the neighbour
 * (i-1, j-1), (i-1, j) or (i, j-1) of least accumulated value, the first of that order on
 * ties (numpy's argmin); along the first row or column straight back to (0, 0). The rule
 * reads the matrix, so for the edit measures (ERP, EDR, MSM) it is aeon's path, not always
 * a path that attains the value. LCSS: aeon's compute_lcss_return_path on the similarity
 * matrix S: a cell in the window whose points match within epsilon steps diagonally and is
 * on the path, any other steps up when S(i-1, j) > S(i, j-1), else left; the path holds the
 * matched cells only (none: length 0). (aeon loops for ever on a cell outside the window;
 * here it steps.) DDTW and WDDTW: over the derivatives' points (n - 2, m - 2). MSM's
 * independent form: the channels' matrices summed, as aeon does. The matrices are
 * tswarp's (ERP's and EDR's boundaries are the papers', where aeon 1.6 differs: the
 * README's conventions), so the paths equal aeon's wherever the matrices do. TSW_SHAPE_DTW:
 * the min-return path of the descriptors' DTW matrix (aeon's shape_dtw_alignment_path).
 * path: (capacity, 2) int64 with capacity >= tsw_path_max_length(n, m); *length pairs;
 * *value: tsw_distance's value of the pair. Checks and errors are tsw_distance's, then
 * TSW_EPARAM for another measure, TSW_EINVAL for a small capacity, TSW_ENOPATH when the
 * window admits no alignment (the value +inf), TSW_ENOMEM for the matrix. CPU only
 * (device = CUDA: TSW_ENOTSUP); exec->progress is polled once a row (Ctrl-C).
 */
TSW_EXPORT int tsw_elastic_path(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                const tsw_series *a, const tsw_series *b, int64_t *path,
                                int64_t capacity, int64_t *length, double *value,
                                const tsw_exec *exec);

/*
 * FastDTW (Salvador and Chan 2007), the approximate DTW path in O((n + m) radius) time and
 * memory, computed as the `fastdtw` package (0.3.4) does: the same path and cost for the same
 * radius (its levels, windows and tie order: up, left, diagonal). params: step SYMMETRIC1,
 * window NONE (else TSW_EPARAM), cost SQEUCLIDEAN, EUCLIDEAN (the package's dist=2) or ABS
 * (its default: |x - y|, the L1 norm for dim > 1). radius >= 0. path, capacity, *length:
 * as tsw_dtw_path; *cost: the sum of the local costs along the path (no root taken; the
 * Python layer applies dtw's rule). CPU only (device CUDA: TSW_ENOTSUP). Where the package
 * fails (radius 0 where a level has an odd length) the rows no coarse cell covers take the
 * row above's columns and the last row reaches the last column.
 */
TSW_EXPORT int tsw_fastdtw(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                           const tsw_series *a, const tsw_series *b, int64_t radius,
                           int64_t *path, int64_t capacity, int64_t *length, double *cost,
                           const tsw_exec *exec);

/* One match of subsequence DTW: the query aligned to reference[start..end] (inclusive). */
typedef struct tsw_match {
    int64_t start, end;       /* reference indices of the path's first and last cells     */
    double cost;              /* D(n-1, end) with D(0, j) = c(0, j) for every j            */
    int64_t path_offset;      /* its path: pairs [path_offset, path_offset + path_length) of
                                 the path buffer (both 0 when no buffer was given)          */
    int64_t path_length;
} tsw_match;

/* Path capacity subsequence DTW needs for k matches: k (n - 1) + m (0 on overflow). */
TSW_EXPORT int64_t tsw_subsequence_path_max_length(int64_t n, int64_t m, int64_t k);

/*
 * Subsequence DTW of query (n points) in reference (m points): the path may start and end
 * at any column (Mueller 7.2; librosa.sequence.dtw(subseq=True) with query = X). Returns the
 * best k >= 1 matches whose reference ranges [start, end] do not overlap, best first: the
 * end columns in order of cost (ties to the smaller column), each kept when its range
 * overlaps none kept before. matches: (k,) caller-owned; *count receives how many were found
 * (<= k; fewer when the reference has no room for more). path: NULL (no paths) or
 * (capacity, 2) int64 with capacity >= tsw_subsequence_path_max_length(n, m, k).
 * The step pattern's and method's rules are tsw_dtw_path's; windows are not supported.
 * TSW_ERANGE when every end's cost overflows (+inf; tsw_dtw_path's rule).
 * CUDA: device = CUDA computes on the GPU (the same matches, costs and paths as the CPU;
 * the GPU stores the whole grid's step codes, n m / 4 bytes, whatever the method: TSW_ENOMEM
 * when they do not fit); AUTO uses the GPU on large grids, else (or on TSW_ENOMEM) the CPU.
 */
TSW_EXPORT int tsw_subsequence_dtw(const tsw_align_params *params, tsw_dtype dtype,
                                   int64_t dim, const tsw_series *query,
                                   const tsw_series *reference, int64_t k,
                                   tsw_match *matches, int64_t *count, int64_t *path,
                                   int64_t capacity, const tsw_exec *exec);
/* ---------------------------------------------------------------------------------------
 * Nearest neighbours, lower bounds and subsequence search (DTW)
 *
 * Lower bounds of tsw_distance(query, x) for DTW (params->measure TSW_DTW, any window),
 * in its units (the square root for the sqeuclidean cost unless params->accumulated). With
 * a the query (rows i, n points) and b a series x (columns j, m points), every bound rests
 * on two facts about an admissible path: it visits every row and every column, and it
 * crosses every "ring" of cells max(i, j) = t and max(n-1-i, m-1-j) = t.
 *   KIM        the UCR Suite's hierarchical LB_Kim: the cheapest admissible cell of the
 *              first and last three rings (fewer for series of fewer than 6 points)
 *   KEOGH      LB_Keogh with the query's envelope: sum over the columns j of the cost of
 *              b_j to the box [min, max] of the query over the rows admissible with j
 *   KEOGH_DATA LB_Keogh with the data's envelope: sum over the rows i of the cost of a_i to
 *              the box of b over the columns admissible with i
 *   IMPROVED   LB_Improved (Lemire 2009): KEOGH plus LB_Keogh of the query against the
 *              envelope of b projected onto the query's envelope (sqeuclidean and abs
 *              costs, and euclidean for dim 1; else TSW_ENOTSUP)
 *   ENHANCED   LB_Enhanced (Tan, Petitjean and Webb 2019) with `bands` rings at each end
 *              and KEOGH over the columns between them; bands >= 1
 *   WEBB       LB_Webb (Webb and Petitjean 2021), for any window: KEOGH plus, for each row
 *              i whose a_i lies outside b's box over its columns, the cost a_i owes beyond
 *              what KEOGH already charged the column it is aligned with: for a_i above
 *              that box (its top u), cost(a_i, u) - cost(max(T_i, u), u) with T_i the
 *              largest query-box bottom among the columns j admissible with i whose b_j
 *              lies below it (KEOGH charged them); symmetric below. At least KEOGH; the
 *              same costs as IMPROVED
 * Multivariate series use the box of each channel (the cost of a point to a box is the
 * cost to its nearest point). KEOGH, KEOGH_DATA, IMPROVED and ENHANCED need a cost that
 * grows with every coordinate's distance: not the cosine cost (TSW_ENOTSUP). The bounds
 * are computed in double precision; a float32 distance rounds its sums in float, so it may
 * fall below a tight bound by its rounding error (a relative 1e-6 or so).
 * Envelopes (Lemire's streaming min/max, O(length) whatever the window): lower[k] and
 * upper[k], per channel, are the minimum and maximum of s over the points admissible with
 * point k of a series of other_length points; s is the first argument of the distance
 * (the rows) when s_is_b == 0, else the second (the columns). Equal lengths, Sakoe-Chiba
 * radius r: the min and max of s[k - r .. k + r]. lower/upper: (other_length, dim) of
 * dtype; a point admitting no cell (an Itakura window too narrow) gets +inf / -inf.
 * ------------------------------------------------------------------------------------- */
typedef enum {
    TSW_LB_KIM = 0,
    TSW_LB_KEOGH = 1,
    TSW_LB_KEOGH_DATA = 2,
    TSW_LB_IMPROVED = 3,
    TSW_LB_ENHANCED = 4,
    TSW_LB_WEBB = 5
} tsw_lb;

TSW_EXPORT int tsw_envelope(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_series *s, int s_is_b, int64_t other_length,
                            void *lower, void *upper);

/* out[i] = the bound `kind` between query and x_i, (x->count,) doubles. */
TSW_EXPORT int tsw_lower_bound(const tsw_params *params, tsw_lb kind, int64_t bands,
                               tsw_dtype dtype, int64_t dim, const tsw_series *query,
                               const tsw_collection *x, double *out, const tsw_exec *exec);

/*
 * The k nearest neighbours in x of every query q_i, without the (q->count, x->count)
 * matrix: distance[i, r] and index[i, r], (q->count, k) row-major (distance of dtype, index
 * int64), the r-th smallest tsw_distance(q_i, x_j) with ties to the smaller j: exactly
 * what a stable sort of cdist's row gives (the values are the CPU reference's, bit for bit).
 * 1 <= k <= x->count, else TSW_EPARAM. Memory: O(total points + q->count k).
 * CPU, DTW: a cascade prunes the candidates that cannot enter the top k (LB_Kim, LB_Keogh
 * with the query's and the data's envelopes) and the DTW that remains abandons early (the
 * UCR Suite's cumulative bound inside PrunedDTW's pruned cells), exactly. TWED abandons
 * when a row of its program exceeds the k-th best; soft-DTW (not monotone) is computed in
 * full. Work is split over queries and blocks of x; any thread count gives the same
 * answer. Progress counts candidates (query, series) done. CUDA: for DTW with a box cost,
 * a Sakoe-Chiba window or none, collections of one length each and k <= 16, every pair of a
 * tile of x is bounded (LB_Keogh), each query's k least-bounded series set its threshold and
 * DTW (the reference's roundings: the same values) runs for the pairs whose bound does not
 * exceed it; otherwise the batch kernels run over tiles of x (memory O(q->count x tile)),
 * the top k kept on the host. AUTO takes the pruned GPU kernels for DTW on large work in
 * their cases (else the CPU's cascade), and the GPU for the other measures on large work.
 */
TSW_EXPORT int tsw_knn(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                       const tsw_collection *q, const tsw_collection *x, int64_t k,
                       void *distance, int64_t *index, const tsw_exec *exec);

/*
 * Subsequence search (the UCR Suite, Rakthanmanon et al. 2012): the k best windows of
 * query->length points of `series` under DTW (params: TSW_DTW, a Sakoe-Chiba window or none;
 * radius 0 is the Euclidean distance), z-normalised window by window and the query too
 * (znorm = 1; each channel on its own, a constant window's values 0) or raw (znorm = 0).
 * Matches: the windows in order of distance (ties to the smaller start), each kept when its
 * start is at least `exclusion` points from every start kept before (exclusion >= 1;
 * query->length gives non-overlapping matches). starts, distances: (k,); *count receives
 * how many were found (fewer when the series has no room for more). The values are the
 * distances of the windows as tsw_distance computes them on the z-normalised copies in
 * double precision. CPU: the cascade LB_Kim, LB_Keogh on the query's envelope (in order of
 * the query's magnitude) and on the data's, and early-abandoning DTW, in parallel over
 * chunks of the series that overlap by query->length - 1 points; any thread count gives the
 * same answer. Errors: a query longer than the series (TSW_ESHAPE), k < 1 or exclusion < 1
 * (TSW_EPARAM), another measure or an Itakura window (TSW_ENOTSUP), non-finite values.
 */
/* What the cascade did (optional output of tsw_search): windows seen and how many each
 * step pruned, as the UCR Suite paper reports them. */
typedef struct tsw_search_stats {
    int64_t windows;      /* series->length - query->length + 1 */
    int64_t kim;          /* pruned by LB_Kim */
    int64_t keogh_query;  /* pruned by LB_Keogh on the query's envelope */
    int64_t keogh_data;   /* pruned by LB_Keogh on the series' envelope */
    int64_t dtw;          /* DTW started */
    int64_t abandoned;    /* of those, abandoned early */
} tsw_search_stats;

TSW_EXPORT int tsw_search(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                          const tsw_series *query, const tsw_series *series, int znorm,
                          int64_t exclusion, int64_t k, int64_t *starts, double *distances,
                          int64_t *count, tsw_search_stats *stats, const tsw_exec *exec);

/* tsw_search with series->values in device memory of GPU exec->device_index (a recording
 * already on the GPU: cudaMalloc, CuPy, PyTorch); the query, starts, distances and stats stay
 * host memory. The work runs on exec->cuda_stream (NULL: the legacy default stream), which
 * the call waits for; exec->device is ignored. The series is checked for NaN and infinity on
 * the device first (TSW_ENONFINITE). Every chunk of windows is read in place (float64) or
 * widened on the device (float32); only the candidate windows travel to the host, where they
 * are recomputed exactly: the same matches and distances as tsw_search. Without a CUDA
 * backend or device: TSW_ENODEV. */
TSW_EXPORT int tsw_search_device(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_series *query, const tsw_series *series, int znorm,
                                 int64_t exclusion, int64_t k, int64_t *starts,
                                 double *distances, int64_t *count, tsw_search_stats *stats,
                                 const tsw_exec *exec);


/* ---------------------------------------------------------------------------------------
 * Shapelets (Ye and Keogh 2009; Mueen, Keogh and Young 2011; Chang et al. 2012)
 *
 * Univariate series (dim 1) in a tsw_collection, of dtype; every computation runs in double
 * precision. A candidate (series i, start s, length l) is the subsequence x_i[s .. s+l-1].
 * Its distance to a series x_j is the minimum over the starts u of the length-normalised,
 * z-normalised Euclidean distance (eq. 2 of Chang et al.):
 *     d(a, b) = sqrt(1/l sum_t (za_t - zb_t)^2),  za = (a - mean a) / std a  (population std)
 * A series shorter than the shapelet (n < l) slides along it instead: its distance is the
 * minimum over the shapelet's windows of n points of d(window, whole series), at length n.
 * This is how aeon's ShapeletTransform compares a shapelet with a shorter series (it swaps
 * the two), and it lets shapelets of ragged data be as long as the longest series.
 * (tsw_shapelet_params.raw: the distance of the values themselves instead, below.)
 * Conventions:
 *   - Each series is first standardised as a whole (mean 0, std 1), which changes no
 *     distance and keeps the running sums well conditioned.
 *   - A constant window (all its values equal) has z-normalised values 0 (never NaN), so
 *     d = 0 between two constant windows and d = 1 between a constant and a varying one
 *     (aeon and sktime also map a constant window to zeros). A varying window whose std
 *     rounds to 0 counts as uncorrelated with any other (d = sqrt 2). d < 1e-6 counts as an
 *     exact match (d = 0), so that rounding never decides between equal matches.
 *   - The order line: the n distances sorted; a threshold may only go between two
 *     neighbours more than TSW_SHAPELET_TIE apart (closer ones count as equal), at their
 *     midpoint. Series with d <= threshold go left.
 *   - Quality: information gain with natural logarithms (eq. 3); ties go to the larger
 *     separation gap mean(d right) - mean(d left), compared rounded to 1e-9 (so that
 *     rounding never decides); then, within a candidate, to the smaller threshold, and
 *     between candidates to the smaller (series, start, length).
 * TSW_IMPL_REFERENCE evaluates eq. 2 directly (O(l) per start); the fast path keeps running
 * dot products and prefix sums (eqs. 5 to 7: O(len x_j) per candidate and series); both
 * give the same order lines, hence the same shapelets, gains and thresholds (distances agree
 * to ~1e-8, except near an exact match of a nearly constant window: a window's variance
 * from prefix sums loses about (mean / std)^2 ulps, so a distance near 0 can come out as
 * sqrt(l eps) mean / std, e.g. 7e-5 where a 2-point window's values differ by 1e-3 of their
 * size; the reference computes it directly). Devices: TSW_DEVICE_CUDA computes the fast path on the GPU (whatever
 * exec->impl) with the same operations in the same order, so the results are identical to
 * the CPU fast path's, bit for bit; AUTO takes the GPU for the fast path when one is present
 * and the work is large, else (or when the GPU lacks memory) the CPU. exec->cuda_workspace is
 * not used. Progress counts candidates (tsw_shapelet_search) or (series, shapelet) pairs.
 * ------------------------------------------------------------------------------------- */
#define TSW_SHAPELET_TIE 1e-7

typedef enum {
    TSW_LOGIC_NONE = 0, /* the candidate's own distances                               */
    TSW_LOGIC_AND = 1,  /* max(d_partner, d): both shapelets must match (Mueen et al.)  */
    TSW_LOGIC_OR = 2    /* min(d_partner, d): either shapelet matches                   */
} tsw_shapelet_logic;

typedef struct tsw_shapelet_params {
    int64_t min_length;  /* >= 2 (default 3)                                           */
    int64_t max_length;  /* 0 (default): the longest searched series; at most that     */
    int64_t length_step; /* lengths min_length, min_length + step, ... (default 1)      */
    int32_t n_classes;   /* C >= 2: labels are 0 .. C-1 (no default: 0 is invalid)      */
    /* Logical shapelets: the distances searched are those of the candidate combined with a
     * partner shapelet's, partner[k] being its distance to series subset[k] (or k). */
    tsw_shapelet_logic logic;
    const double *partner; /* (n_subset,) finite, >= 0; required unless TSW_LOGIC_NONE */
    /* Dilation d >= 1 (default 1): candidate (i, s, l) is x_i[s], x_i[s + d], ..,
     * x_i[s + (l - 1) d] and is compared with the windows of every series spaced alike (the
     * dilated shapelets of RDST, Guillaume et al. 2022). A dilated window is a contiguous one
     * of a phase x_j[p], x_j[p + d], .. (p < d), so the search runs on the phases, each
     * standardised on its own, and a series' distance is the least over its phases. Lengths
     * go up to floor(len / d) of the longest searched series (the default max_length); a
     * phase shorter than a candidate slides along it. Every searched series holds at least
     * d points. The CPU and CUDA give the same result for any d. */
    int64_t dilation;
    /* One-vs-rest quality (default 0: off): a candidate of series i is judged on the split
     * of its own class, labels[i], against all the others together (a two-class order
     * line), as the binary shapelets of Bostrom and Bagnall (2017) that aeon's
     * ShapeletTransformClassifier uses for C > 2 classes; its gain is that of the two-class
     * split. tsw_shapelet_top then keeps at most max(1, k / C') candidates from the series
     * of each class (C' the classes present among the searched series). 0 or 1. */
    int32_t one_vs_rest;
    /* Shapelets that are not z-normalised (default 0: z-normalised, eq. 2): 1 compares the
     * windows' values themselves, d(a, b) = sqrt(1/l sum_t (a_t - b_t)^2), the length-
     * normalised Euclidean distance of RDST's non-normalised shapelets (Guillaume et al.
     * 2022), so that a shapelet sees a pattern's level and scale as well as its shape. The
     * searched collection is shifted and scaled as a whole (its mean and population std,
     * all its values together; std 0 counts as 1) instead of series by series, which keeps
     * the sums well conditioned and the 1e-6 and TSW_SHAPELET_TIE conventions relative to
     * the data's spread; thresholds and gaps are reported in the data's own units. No
     * constant-window convention is needed. 0 or 1. */
    int32_t raw;
} tsw_shapelet_params;

TSW_EXPORT void tsw_shapelet_params_default(tsw_shapelet_params *params);

/* A candidate and its best split. series = -1 when no candidate admits a split (all the
 * distances of every candidate are equal on the order line); the other fields are then 0. */
typedef struct tsw_shapelet {
    int64_t series, start, length; /* series indexes the collection (not the subset)    */
    double threshold;              /* d <= threshold goes left                           */
    double gain;                   /* information gain of the split (nats)               */
    double gap;                    /* separation gap of the split                        */
    int64_t dilation;              /* the search's dilation: it spans (length - 1) d + 1   */
} tsw_shapelet;

/*
 * The best shapelet among every candidate of the searched series, judged on those series.
 * x: count >= 2 univariate series of dtype (ragged allowed); labels: (x->count,) in
 * 0 .. n_classes-1 (only the searched entries are read). subset: NULL (all series) or
 * n_subset >= 2 distinct indices into x, so a decision tree can search a node's series
 * without copying. Errors: TSW_EPARAM (lengths, n_classes, logic, dilation, one_vs_rest),
 * TSW_ESHAPE (a length above floor(len / dilation) of the longest searched series; a
 * searched series shorter than the dilation; fewer than two series), TSW_EINVAL (labels or
 * subset out of range, missing partner), TSW_ENONFINITE.
 */
TSW_EXPORT int tsw_shapelet_search(const tsw_shapelet_params *params, tsw_dtype dtype,
                                   const tsw_collection *x, const int32_t *labels,
                                   const int64_t *subset, int64_t n_subset, tsw_shapelet *best,
                                   const tsw_exec *exec);

/*
 * The k best candidates with no two overlapping spans in the same series (the shapelet
 * transform's diverse set), best first, in the same single pass: the candidates in order of
 * quality, each kept unless it overlaps one kept before from its series, until k are kept.
 * out: (k,) caller-owned; *count receives how many were kept (< k when fewer exist).
 * Candidates that admit no split are never kept. With one_vs_rest, a candidate is also
 * passed over once max(1, k / C') candidates of its series' class are kept (balanced
 * classes, as STC keeps them). Arguments and errors as tsw_shapelet_search (logic must be
 * TSW_LOGIC_NONE).
 */
TSW_EXPORT int tsw_shapelet_top(const tsw_shapelet_params *params, tsw_dtype dtype,
                                const tsw_collection *x, const int32_t *labels,
                                const int64_t *subset, int64_t n_subset, int64_t k,
                                tsw_shapelet *out, int64_t *count, const tsw_exec *exec);

/*
 * Distances of shapelets (a collection of any lengths >= 2, given by their values) to every
 * series of x: dist (x->count, shapelets->count) row-major; pos (same shape) NULL or the
 * start of each best match in its series (the first one on ties): u >= 0, or, for a series
 * shorter than the shapelet, -u <= 0 when the series lies along the shapelet's window at u
 * (the shapelet's first point falls u points before the series').
 */
TSW_EXPORT int tsw_shapelet_distances(tsw_dtype dtype, const tsw_collection *shapelets,
                                      const tsw_collection *x, double *dist, int64_t *pos,
                                      const tsw_exec *exec);

/*
 * tsw_shapelet_distances, and occurrences: count (x->count, shapelets->count) row-major
 * receives how many windows of each series lie within thresholds[k] of shapelet k (d <=
 * thresholds[k], the same distance as dist; e.g. the threshold of the shapelet's split;
 * for a series shorter than the shapelet, how many of its places along the shapelet). This
 * is the "shapelet occurrence" feature of RDST (Guillaume et al. 2022): how often a
 * pattern appears, where the distance says only how well it appears once. thresholds (one
 * per shapelet, finite, >= 0) and count are both given or both NULL (then this is
 * tsw_shapelet_distances); pos may be NULL. A bad threshold gives TSW_EPARAM.
 */
TSW_EXPORT int tsw_shapelet_features(tsw_dtype dtype, const tsw_collection *shapelets,
                                     const double *thresholds, const tsw_collection *x,
                                     double *dist, int64_t *pos, int64_t *count,
                                     const tsw_exec *exec);

/*
 * tsw_shapelet_features of dilated shapelets: shapelet k (its l values, as
 * tsw_shapelet_search reports x_i[s], x_i[s + d], ..) is compared with the windows x_j[u],
 * x_j[u + d_k], .., x_j[u + (l - 1) d_k] of every series, d_k = dilations[k] >= 1
 * (TSW_EPARAM otherwise); pos receives u, the first on ties; count the windows within the
 * threshold. A phase x_j[p], x_j[p + d_k], .. shorter than l slides along the shapelet (pos
 * p - u d_k for its window at u). Every series must hold at least d_k points (TSW_ESHAPE).
 * dilations NULL: all 1. raw: NULL (every shapelet z-normalised) or one flag per shapelet,
 * 0 or 1 (TSW_EPARAM otherwise): 1 takes the distance of tsw_shapelet_params.raw, on the
 * values shifted and scaled by the mean and std of all the raw shapelets of its dilation
 * together (the same for the shapelets and the series, so distances and thresholds stay in
 * the data's units). dilations and raw both NULL: tsw_shapelet_features.
 */
TSW_EXPORT int tsw_shapelet_features_dilated(tsw_dtype dtype, const tsw_collection *shapelets,
                                             const int64_t *dilations, const int32_t *raw,
                                             const double *thresholds,
                                             const tsw_collection *x, double *dist,
                                             int64_t *pos, int64_t *count,
                                             const tsw_exec *exec);

/* ---------------------------------------------------------------------------------------
 * Soft-DTW gradients
 *
 * Values and gradients for learning (Cuturi and Blondel 2017, Algorithm 2; the divergence
 * of Blondel, Mensch and Vert 2021). The gradient of R(n-1, m-1) with respect to the cost
 * of cell (i, j) is E(i, j), the probability that the smoothed alignment passes through
 * it; with respect to the inputs (squared Euclidean cost) dx_i = sum_j E(i,j) 2 (x_i - y_j)
 * and dy_j = sum_i E(i,j) 2 (y_j - x_i). Stable for any gamma > 0 (every exponential has a
 * non-positive argument). Memory: the backward pass keeps one value per cell of the window
 * (n * min(m, 2r + 1 + |n - m|) values for a Sakoe-Chiba radius r) per thread working, for
 * the largest pair of the call; TSW_ENOMEM when that cannot be allocated
 * (tsw_last_error_detail() says how many bytes). Windows: none or Sakoe-Chiba (radius or
 * fraction, unequal lengths widened as tsw_params documents) and Itakura, which runs on
 * the CPU's full-matrix kernel ((n + 2) (m + 2) values per pair; the GPU gives TSW_ENOTSUP).
 * exec->impl = TSW_IMPL_REFERENCE runs the plain full-matrix reference. exec->device AUTO
 * computes on the CPU; CUDA uses the GPU (TSW_ENODEV without a CUDA backend).
 * ------------------------------------------------------------------------------------- */

/* Soft-DTW values and gradients of the pairs (x_k, y_k), k < x->count (y->count must be
 * equal, else TSW_ESHAPE). params->measure must be TSW_SOFT_DTW (else TSW_EPARAM); gamma,
 * window (Sakoe-Chiba radius / fraction as tsw_params documents, unequal lengths handled)
 * and normalize (1: the divergence sdtw(x,y) - (sdtw(x,x) + sdtw(y,y))/2, with its gradient)
 * apply; the local cost is squared Euclidean. values: (count,) of dtype. grad_x: NULL or the
 * gradient of values[k] with respect to x_k, laid out exactly like x->values (same offsets;
 * rows outside every series are left untouched; series must not overlap); grad_y likewise. */
TSW_EXPORT int tsw_soft_dtw_grad(const tsw_params *params, tsw_dtype dtype, int64_t dim,
                                 const tsw_collection *x, const tsw_collection *y,
                                 void *values, void *grad_x, void *grad_y,
                                 const tsw_exec *exec);
/* Custom cost matrices: cost is (count, n, m) row-major of dtype; pair k uses its top-left
 * lengths_x[k] x lengths_y[k] block (NULL: n, resp. m for every pair). values: (count,);
 * grad_cost: NULL or (count, n, m), the gradient of values[k] with respect to cost[k]
 * (zeros outside the block). normalize must be 0 (divergence needs the inputs). */
TSW_EXPORT int tsw_soft_dtw_cost_grad(const tsw_params *params, tsw_dtype dtype,
                                      int64_t count, int64_t n, int64_t m,
                                      const int64_t *lengths_x, const int64_t *lengths_y,
                                      const void *cost, void *values, void *grad_cost,
                                      const tsw_exec *exec);
/* The same with every array of values/cost/outputs in device memory (lengths and offsets
 * stay on the host), on exec->cuda_stream, as the other *_device calls. */
TSW_EXPORT int tsw_soft_dtw_grad_device(const tsw_params *params, tsw_dtype dtype,
                                        int64_t dim, const tsw_collection *x,
                                        const tsw_collection *y, void *values, void *grad_x,
                                        void *grad_y, const tsw_exec *exec);
TSW_EXPORT int tsw_soft_dtw_cost_grad_device(const tsw_params *params, tsw_dtype dtype,
                                             int64_t count, int64_t n, int64_t m,
                                             const int64_t *lengths_x,
                                             const int64_t *lengths_y, const void *cost,
                                             void *values, void *grad_cost,
                                             const tsw_exec *exec);

/* Device memory (bytes) that tsw_soft_dtw_grad_device (resp. tsw_soft_dtw_cost_grad_device)
 * needs for its temporaries with these arguments, in *bytes: the backward pass's values of
 * every pair (about (n + m) n per pair) and small index arrays. Give at least that much as
 * exec->cuda_workspace (256-byte aligned) and the call allocates no device memory (the
 * batch then runs in one chunk; without a workspace the call allocates its own and cuts
 * the batch into chunks that fit the free memory). The values pointers may be NULL here;
 * want_grad_* say whether the gradients will be asked for. TSW_ENODEV without CUDA. */
TSW_EXPORT int tsw_soft_dtw_grad_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                                int64_t dim, const tsw_collection *x,
                                                const tsw_collection *y, int want_grad_x,
                                                int want_grad_y, const tsw_exec *exec,
                                                size_t *bytes);
TSW_EXPORT int tsw_soft_dtw_cost_grad_workspace_size(const tsw_params *params, tsw_dtype dtype,
                                                     int64_t count, int64_t n, int64_t m,
                                                     const int64_t *lengths_x,
                                                     const int64_t *lengths_y, int want_grad,
                                                     const tsw_exec *exec, size_t *bytes);

/* ---------------------------------------------------------------------------------------
 * Segmental DTW (Yang, Shaw and Tsai, "A study of parallelizable alternatives to dynamic
 * time warping for aligning long sequences", IEEE/ACM TASLP 2022, sections II-A to II-C)
 *
 * An approximate alignment of a (n points) and b (m points) made of N independent
 * subsequence DTW problems:
 *   1. a is cut into N fragments: fragment f holds rows [r_f, r_{f+1}) of a with
 *      r_f = floor(f n / N), so lengths l_f differ by at most 1 (longer ones last).
 *   2. Each fragment is aligned to all of b by subsequence DTW (tsw_subsequence_dtw's
 *      recurrence with params->step; the paper's pattern is TSW_STEP_P05_QUERY, which
 *      tsw_align_params_default does NOT select). Its last row gives the segment-level cost
 *      C[f][j] = D_f(l_f - 1, j) (+inf where no path ends) and, propagated forward in the
 *      same pass (no backtrace per end column), S[f][j], the column where the optimal path
 *      ending at j starts: the paper's T_seg.
 *   3. The end column e_f of every fragment:
 *      NONE (NSDTW)    e_f = the column minimising C[f][.] (ties: the smaller column), the
 *                      best match of tsw_subsequence_dtw; no ordering between fragments.
 *      WEAK (WSDTW)    the segment DP E[f][j] = min(E[f][j-1], E[f-1][j - d_f] + C[f][j]),
 *                      E[-1][.] = 0 and +inf at negative columns, where d_f is the fewest
 *                      columns a path of fragment f can span (the paper's L_A / 2N made
 *                      exact): floor(l_f / 2) + 1 with the p05 geometry, 1 with SYMMETRIC1.
 *                      Ends strictly increase (e_f >= e_{f-1} + d_f); a fragment may still
 *                      start before the previous one ended (a backward jump).
 *      STRICT (SSDTW)  E[f][j] = min(E[f][j-1], E[f-1][S[f][j]] + C[f][j]): the previous
 *                      fragment ends at or before this one's start, so the concatenated
 *                      path is monotone (j never decreases); ends strictly increase when
 *                      every fragment path spans 2 columns or more (always with the p05
 *                      geometry, whose fragments have l_f >= 2).
 *      The ends are read back from E[N-1][m-1]. Ties: the skip E[f][j-1] wins, so among
 *      equal totals the last fragment ends at the smallest column, and so on backwards.
 *      E is summed in double whatever the dtype.
 *   4. Each fragment's path is backtraced from (l_f - 1, e_f) (a second forward pass over
 *      its columns [S[f][e_f], e_f] only: the D values on the path, hence the path, equal
 *      those of the first pass; params->method and memory_limit apply to it), its rows
 *      offset by r_f, and the paths are concatenated in fragment order.
 * Parallelism (the paper's Fig. 3-5): the first pass runs N x M independent tasks, fragment
 * f over M overlapping chunks of b (with the p05 geometry a path ending at column j starts
 * at j - 2 (l_f - 1) or later, so a chunk needs that much context on its left and its
 * values are exact); the second pass runs the N fragments in parallel. Threads go to whole
 * tasks when there are enough of them, else to the wavefront inside each task. Every
 * thread count and every M gives the same result.
 * Memory: C and S (16 N m bytes), N m bytes of segment-DP choices, the per-task forward
 * pass workspace (O(m) each) and the second pass's stored steps (2 bits per cell of each
 * fragment's span, or linear memory per tsw_path_method).
 * ------------------------------------------------------------------------------------- */
typedef enum {
    TSW_SEGMENTAL_NONE = 0,  /* NSDTW: each fragment's best match, no ordering          */
    TSW_SEGMENTAL_WEAK = 1,  /* WSDTW: ends ordered at least d_f apart                  */
    TSW_SEGMENTAL_STRICT = 2 /* SSDTW: each fragment starts where (or after) the previous ended */
} tsw_segmental;

typedef struct tsw_segmental_params {
    tsw_segmental variant; /* default TSW_SEGMENTAL_WEAK                                     */
    int64_t n_fragments;   /* N, default 32: 1 <= N <= n, and with the p05 geometry every
                              fragment needs 2 points (N <= n / 2), else TSW_EPARAM          */
    int64_t n_chunks;      /* M chunks of b per fragment in the first pass, >= 0; 0 (default)
                              = chosen from the thread count; SYMMETRIC1 paths may span any
                              width, so it always uses 1. Results do not depend on M.       */
} tsw_segmental_params;

TSW_EXPORT void tsw_segmental_params_default(tsw_segmental_params *seg);

/* Path capacity tsw_segmental_dtw needs: n with the p05 geometry (a step advances a row),
 * n + N (m - 1) with SYMMETRIC1 (0 on overflow or bad sizes). */
TSW_EXPORT int64_t tsw_segmental_path_max_length(tsw_step step, int64_t n, int64_t m,
                                                 int64_t n_fragments);

/*
 * Segmental DTW of a and b, both (length, dim) of dtype (see above). path: caller-owned,
 * (capacity, 2) int64 with capacity >= tsw_segmental_path_max_length; receives *length
 * pairs (i, j), fragment after fragment. segments: NULL or (N,) caller-owned: fragment f's
 * start S[f][e_f], end e_f, cost C[f][e_f] and its pairs in path. Windows: TSW_EPARAM.
 * TSW_ENOPATH before any work when no ordered placement exists: a fragment longer than
 * 2m - 1 points with the p05 geometry; WEAK: sum of d_f > m; STRICT: sum of (d_f - 1) >= m.
 * STRICT can also find none after the first pass (each end column admits only its optimal
 * start): TSW_ENOPATH then too. Progress counts cells of forward passes; a non-zero return
 * gives TSW_ECANCELED. Every error leaves the outputs untouched. device = CUDA: every
 * fragment's passes on the GPU (one chunk per fragment: n_chunks is not used there), the
 * segment DP on the host, the same results as the CPU (TSW_ENODEV without a CUDA build or
 * a device); AUTO uses the GPU on large grids, else (or on TSW_ENOMEM) the CPU.
 */
TSW_EXPORT int tsw_segmental_dtw(const tsw_align_params *params,
                                 const tsw_segmental_params *seg, tsw_dtype dtype,
                                 int64_t dim, const tsw_series *a, const tsw_series *b,
                                 int64_t *path, int64_t capacity, int64_t *length,
                                 tsw_match *segments, const tsw_exec *exec);

/* ---------------------------------------------------------------------------------------
 * Information
 * ------------------------------------------------------------------------------------- */

/* One CUDA device, as tsw_cuda_device_info reports it. */
typedef struct tsw_cuda_device {
    char name[256];
    int major, minor;         /* compute capability */
    int multiprocessors;
    size_t total_memory;      /* bytes */
    size_t free_memory;       /* bytes, at the time of the call */
    int runnable;             /* 1 when this build has code that runs on it (an exact
                                 sm_XY or PTX that the driver can compile) */
} tsw_cuda_device;

/* Properties of device `index`. TSW_ENODEV when there is no such device or no backend. */
TSW_EXPORT int tsw_cuda_device_info(int index, tsw_cuda_device *info);
/* The GPU architectures compiled in, e.g. "sm_80 sm_90 compute_90" ("" without CUDA). */
TSW_EXPORT const char *tsw_cuda_archs(void);
/* CUDA runtime and driver versions (e.g. 13000); 0 when unknown. TSW_ENODEV without CUDA. */
TSW_EXPORT int tsw_cuda_versions(int *runtime, int *driver);

/* GPU memory cache. The device memory of calls given no exec.cuda_workspace (every
 * host-input call) comes from tswarp's own memory pool on each device, which keeps the
 * blocks that calls give back mapped, so the next call reuses them instead of asking the
 * driver again. It keeps at most a quarter of the device's memory, or the number of bytes
 * in the environment variable TSWARP_CUDA_CACHE_BYTES (read when the device's pool is made,
 * at its first call; 0 keeps nothing). tsw_cuda_device_info's free_memory does not count
 * the cache; calls sizing themselves do. */

/* Bytes tswarp's pool on `device` holds mapped but unused, in *bytes (0 before the
 * device's first call). TSW_ENODEV when there is no such device or no backend. */
TSW_EXPORT int tsw_cuda_cached_bytes(int device, size_t *bytes);
/* Returns the unused memory of tswarp's pool on `device` (-1: every device) to the driver,
 * after waiting for the device's work, as torch.cuda.empty_cache() does; memory in use by
 * a running call stays. TSW_ENODEV when there is no such device or no backend. */
TSW_EXPORT int tsw_cuda_empty_cache(int device);

/* Details of the last failure on the calling thread, e.g. "cudaMalloc of 123456789 bytes
 * on device 0 failed: out of memory" ("" when there are none). Valid until the thread's
 * next tswarp call. */
TSW_EXPORT const char *tsw_last_error_detail(void);

/* 1 if the CUDA backend was compiled in, else 0. */
TSW_EXPORT int tsw_has_cuda(void);
/* Number of usable CUDA devices in *count (0 when none or no driver). Returns TSW_ENODEV
 * when the CUDA backend was not built. */
TSW_EXPORT int tsw_cuda_device_count(int *count);
/* Threads an exec with n_threads = 0 uses (OpenMP's maximum). */
TSW_EXPORT int tsw_max_threads(void);
/* SIMD instruction set the CPU kernels use on this machine: "avx2", "sse2" or "scalar". */
TSW_EXPORT const char *tsw_cpu_simd(void);

#ifdef __cplusplus
}
#endif
#endif /* TSWARP_H */
