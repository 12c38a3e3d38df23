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
 * Shapes: a series is (length, dim) row-major: value k of time point t is values[t*dim + k].
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
    XX(EPARAM, -7, "invalid measure parameter (gamma, nu, lmbda, p, window or slope)")        \
    XX(EOVERFLOW, -8, "size too large: element count overflows")                              \
    XX(ECANCELED, -9, "cancelled by the progress callback")                                   \
    XX(ENODEV, -10, "no CUDA backend was built or no CUDA device was found")                  \
    XX(ECUDA, -11, "CUDA runtime error")                                                      \
    XX(ENOTSUP, -12, "operation not supported by this backend")                              \
    XX(ENOPATH, -13, "no alignment path: the step pattern or window admits none")

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
    TSW_SOFT_DTW = 2 /* soft-DTW (Cuturi and Blondel 2017), squared Euclidean cost */
} tsw_measure;

/* Local cost between two points x, y of R^dim (DTW only). */
typedef enum {
    TSW_COST_SQEUCLIDEAN = 0, /* sum_k (x_k - y_k)^2                                        */
    TSW_COST_EUCLIDEAN = 1,   /* sqrt(sum_k (x_k - y_k)^2)                                  */
    TSW_COST_ABS = 2,         /* sum_k |x_k - y_k|  (L1, "cityblock")                        */
    TSW_COST_COSINE = 3       /* 1 - <x,y> / (|x| |y|); 0 if both are zero, 1 if one is zero */
} tsw_cost;

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
 */
typedef enum {
    TSW_WINDOW_NONE = 0,
    TSW_WINDOW_SAKOE_CHIBA = 1,
    TSW_WINDOW_SAKOE_CHIBA_FRACTION = 2,
    TSW_WINDOW_ITAKURA = 3
} tsw_window;

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
    double gamma;  /* smoothing > 0, default 1.0; for TSW_F32 inputs every parameter must
                      also be representable as a float (gamma in [1/FLT_MAX, FLT_MAX]),
                      else TSW_EPARAM */
    int normalize; /* 1: soft-DTW divergence sdtw(a,b) - (sdtw(a,a) + sdtw(b,b)) / 2 */
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
 * TSW_ECANCELED (the output may then be partly written). */
typedef int (*tsw_progress_fn)(void *user, int64_t done, int64_t total);

typedef struct tsw_exec {
    int n_threads;   /* OpenMP threads; 0 (default) = all cores */
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
} tsw_exec;

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
 * results. exec->device is ignored
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
    TSW_STEP_P05 = 1         /* steps (1,1), (1,2), (2,1), weights 2, 3, 3 (librosa
                                step_sizes_sigma=[[1,1],[1,2],[2,1]], weights_mul=[2,3,3]):
                                slopes between 1/2 and 2, every path weighs the same
                                Manhattan length. A path exists iff m <= 2n - 1 and
                                n <= 2m - 1 (else TSW_ENOPATH) */
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
 * Progress: exec->progress is called with cells of forward passes done; a non-zero return
 * gives TSW_ECANCELED within one row of the grid, with path, length and cost untouched
 * (every error leaves them untouched). CUDA: TSW_ENOTSUP for device = CUDA (for now);
 * device = AUTO computes on the CPU.
 */
TSW_EXPORT int tsw_dtw_path(const tsw_align_params *params, tsw_dtype dtype, int64_t dim,
                            const tsw_series *a, const tsw_series *b, int64_t *path,
                            int64_t capacity, int64_t *length, double *cost,
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
 */
TSW_EXPORT int tsw_subsequence_dtw(const tsw_align_params *params, tsw_dtype dtype,
                                   int64_t dim, const tsw_series *query,
                                   const tsw_series *reference, int64_t k,
                                   tsw_match *matches, int64_t *count, int64_t *path,
                                   int64_t capacity, const tsw_exec *exec);

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
