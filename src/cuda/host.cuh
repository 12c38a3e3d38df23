/*
 * Host-side helpers of the CUDA backend shared by its translation units (backend.cu: the
 * distances; sdtw_grad.cu: soft-DTW gradients; path.cu: alignment paths): CUDA errors as
 * status codes, the device guard, tswarp's memory pool per device, the call's stream and
 * its one block of device memory, the device-side finiteness check, host views of
 * collections and the progress contract.
 * Internal; C++ (CUDA) only. Nothing here prints or exits.
 */
#ifndef TSW_CUDA_HOST_CUH
#define TSW_CUDA_HOST_CUH

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

namespace tsw__cu {

/* ---- errors --------------------------------------------------------------------------- */

inline int status_of(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return TSW_OK;
    case cudaErrorMemoryAllocation:
        return TSW_ENOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInitializationError:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        return TSW_ENODEV;
    default:
        return TSW_ECUDA;
    }
}

/* Status for a failed CUDA call, with the detail; clears the non-sticky error state. */
inline int fail(cudaError_t e, const char *what)
{
    int rc = status_of(e);
    tsw__set_detail("%s failed: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    (void)cudaGetLastError();
    return rc;
}

#define TSW_CU(call, what)                                                                    \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess)                                                                \
            return fail(e_, what);                                                            \
    } while (0)

/* ---- devices -------------------------------------------------------------------------- */

inline int device_count_cached()
{
    /* -1 until known; concurrent first callers may both ask, and both store the same
     * answer (no C++ runtime needed, unlike std::call_once). */
    static int count = -1;
    int c = __atomic_load_n(&count, __ATOMIC_ACQUIRE);
    if (c >= 0)
        return c;
    if (cudaGetDeviceCount(&c) != cudaSuccess)
        c = 0;
    (void)cudaGetLastError();
    __atomic_store_n(&count, c, __ATOMIC_RELEASE);
    return c;
}

/*
 * Pinned host words for asynchronous calls' check answers (sdtw_grad.cu, sg_async_flag): a
 * device-to-host copy into a pageable word waits at once, into a pinned one it is queued,
 * so the call can queue its kernels before it waits for the answer. One array of kSlots
 * words per process, allocated on first use (concurrent first callers may both allocate:
 * one keeps its array, the other frees its own) and freed at exit (or when the library is
 * unloaded: atexit from a shared object); slots are handed out in turn (one is busy for one
 * call: kSlots calls in flight at once do not happen). NULL when pinned memory cannot be
 * had, or after the exit handler.
 */
inline int *&pinned_flag_words()
{
    static int *words;
    return words;
}
inline int &pinned_flag_off()
{
    static int off; /* 1: no pinned memory (failed, or freed at exit) */
    return off;
}
inline void pinned_flag_free()
{
    __atomic_store_n(&pinned_flag_off(), 1, __ATOMIC_RELEASE);
    int *w = __atomic_exchange_n(&pinned_flag_words(), (int *)nullptr, __ATOMIC_ACQ_REL);
    if (w)
        (void)cudaFreeHost(w);
}
inline int *pinned_flag_slot()
{
    constexpr unsigned kSlots = 4096;
    static unsigned next;
    int *s = __atomic_load_n(&pinned_flag_words(), __ATOMIC_ACQUIRE);
    if (!s) {
        if (__atomic_load_n(&pinned_flag_off(), __ATOMIC_ACQUIRE))
            return nullptr;
        void *p = nullptr;
        if (cudaHostAlloc(&p, kSlots * sizeof(int), cudaHostAllocPortable) != cudaSuccess) {
            (void)cudaGetLastError();
            __atomic_store_n(&pinned_flag_off(), 1, __ATOMIC_RELEASE);
            return nullptr;
        }
        int *expect = nullptr;
        if (__atomic_compare_exchange_n(&pinned_flag_words(), &expect, (int *)p, false,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            s = (int *)p;
            (void)atexit(pinned_flag_free); /* (compute-sanitizer's leak check) */
        } else {
            (void)cudaFreeHost(p);
            s = expect;
        }
    }
    return s + __atomic_fetch_add(&next, 1u, __ATOMIC_RELAXED) % kSlots;
}

/* Waits until a pinned word set to -1 before its copy was queued holds the copy (the
 * stream's work up to the copy is done); a stream that fails meanwhile ends the wait with
 * its error, so a fault never leaves the host spinning. */
inline int pinned_flag_wait(const int *slot, cudaStream_t stream, int *value)
{
    for (unsigned k = 1;; ++k) {
        const int v = *(const volatile int *)slot;
        if (v != -1) {
            *value = v;
            return TSW_OK;
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if ((k & 4095) == 0) {
            const cudaError_t e = cudaStreamQuery(stream);
            if (e != cudaSuccess && e != cudaErrorNotReady)
                return fail(e, "cudaStreamQuery");
            if (e == cudaSuccess && *(const volatile int *)slot == -1)
                return fail(cudaErrorUnknown, "check answer lost");
        }
    }
}

/* Streaming multiprocessors of a device (asked once per device, then cached; the H100's
 * 132 if the driver cannot say, which only sizes grids and never decides correctness). */
inline int sm_count(int device)
{
    constexpr int kCached = 64;
    static int known[kCached]; /* 0 until asked */
    if (device >= 0 && device < kCached) {
        const int k = __atomic_load_n(&known[device], __ATOMIC_ACQUIRE);
        if (k > 0)
            return k;
    }
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms < 1) {
        (void)cudaGetLastError();
        return 132;
    }
    if (device >= 0 && device < kCached)
        __atomic_store_n(&known[device], sms, __ATOMIC_RELEASE);
    return sms;
}

/* TSW_OK when `index` names a device, else TSW_ENODEV with the detail. */
inline int check_device(int index)
{
    int n = device_count_cached();
    if (index < 0 || index >= n) {
        tsw__set_detail(n ? "device index %d out of range: %d CUDA device(s)"
                          : "no CUDA device (index %d requested): no GPU or no driver",
                        index, n);
        return TSW_ENODEV;
    }
    return TSW_OK;
}

/* Makes exec->device_index current for this call; restores the previous device after. */
struct DeviceGuard {
    int prev = -1;
    int rc = TSW_OK;
    explicit DeviceGuard(int index)
    {
        if ((rc = check_device(index)))
            return;
        if (cudaGetDevice(&prev) != cudaSuccess)
            prev = -1;
        cudaError_t e = cudaSetDevice(index);
        if (e != cudaSuccess) {
            rc = fail(e, "cudaSetDevice");
            prev = -1;
        }
    }
    ~DeviceGuard()
    {
        if (prev >= 0)
            (void)cudaSetDevice(prev);
    }
};

/* ---- memory pool: one per device, kept for the process ---------------------------------- */

/* A call's block comes from tswarp's own pool on its device (like PyTorch's caching allocator
 * and CuPy's memory pool): freed blocks stay mapped up to the pool's release threshold, so
 * the next call of a similar size reuses them instead of mapping fresh memory (a 2.6 GB
 * block costs about 10 ms to map on an H100). Our own pool rather than the device's default
 * one so that the threshold is ours to set and the cache is ours to report and empty
 * without touching what other libraries in the process keep there. */
inline constexpr int kMaxPoolDevices = 64;

/* The pools, nullptr until a call needs one. Zero-initialised storage, so no constructor
 * and no guard variable (no C++ runtime); `inline` functions share it across the CUDA
 * translation units. */
inline cudaMemPool_t *pool_slots()
{
    static cudaMemPool_t slots[kMaxPoolDevices];
    return slots;
}

/* The pool's release threshold, the bytes it may keep mapped after a synchronisation (the
 * driver takes back the rest then): TSWARP_CUDA_CACHE_BYTES (a non-negative integer; 0 keeps
 * nothing) or, when it is unset or not such a number, a quarter of the device's memory: room
 * for the block of a large call, repeated, while other libraries and processes on the GPU
 * keep the rest (PyTorch's caching allocator keeps everything instead, until
 * torch.cuda.empty_cache). */
inline unsigned long long cache_threshold(size_t total_memory)
{
    const char *s = getenv("TSWARP_CUDA_CACHE_BYTES");
    if (s && *s) {
        unsigned long long v = 0;
        const char *c = s;
        for (; *c >= '0' && *c <= '9'; ++c) {
            unsigned long long d = (unsigned long long)(*c - '0');
            if (v > (~0ULL - d) / 10)
                break; /* overflow: not a byte count */
            v = v * 10 + d;
        }
        if (!*c)
            return v;
    }
    return (unsigned long long)total_memory / 4;
}

/* tswarp's pool on `device` in *pool, created on first use. Concurrent first callers may
 * both create one: the first to publish wins and the others destroy theirs. */
inline int pool_of(int device, cudaMemPool_t *pool)
{
    *pool = nullptr;
    if (device < 0 || device >= kMaxPoolDevices) {
        tsw__set_detail("device index %d: tswarp's memory pools cover devices 0 to %d", device,
                        kMaxPoolDevices - 1);
        return TSW_ENODEV;
    }
    cudaMemPool_t *slot = &pool_slots()[device];
    cudaMemPool_t p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (p) {
        *pool = p;
        return TSW_OK;
    }
    cudaDeviceProp prop;
    TSW_CU(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    cudaMemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    TSW_CU(cudaMemPoolCreate(&p, &props), "cudaMemPoolCreate");
    unsigned long long keep = cache_threshold(prop.totalGlobalMem);
    cudaError_t e = cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
    if (e != cudaSuccess) {
        (void)cudaMemPoolDestroy(p);
        return fail(e, "cudaMemPoolSetAttribute (release threshold)");
    }
    cudaMemPool_t expected = nullptr;
    if (!__atomic_compare_exchange_n(slot, &expected, p, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        (void)cudaMemPoolDestroy(p); /* unused: nothing was allocated from it */
        p = expected;
    }
    *pool = p;
    return TSW_OK;
}

/* The pool of `device` if one was made, else nullptr (never creates one). */
inline cudaMemPool_t pool_if_made(int device)
{
    if (device < 0 || device >= kMaxPoolDevices)
        return nullptr;
    return __atomic_load_n(&pool_slots()[device], __ATOMIC_ACQUIRE);
}

/* Bytes the pool of `device` keeps mapped but not in use (0 without a pool). */
inline size_t pool_idle(int device)
{
    cudaMemPool_t p = pool_if_made(device);
    if (!p)
        return 0;
    unsigned long long reserved = 0, used = 0;
    if (cudaMemPoolGetAttribute(p, cudaMemPoolAttrReservedMemCurrent, &reserved) !=
            cudaSuccess ||
        cudaMemPoolGetAttribute(p, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return reserved > used ? (size_t)(reserved - used) : 0;
}

/* cudaMemGetInfo of the current device, with what our pool keeps idle counted as free: a
 * call sizing itself may use that memory, the pool hands it out before mapping more. */
inline cudaError_t mem_info(size_t *free_b, size_t *total_b)
{
    cudaError_t e = cudaMemGetInfo(free_b, total_b);
    if (e != cudaSuccess)
        return e;
    int device = -1;
    if (cudaGetDevice(&device) == cudaSuccess)
        *free_b += pool_idle(device);
    (void)cudaGetLastError();
    return cudaSuccess;
}

/* ---- device memory: one block of aligned pieces ----------------------------------------- */

inline constexpr size_t kAlign = 256;

inline size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct Plan {
    size_t total = 0;
    bool overflow = false;
    /* Reserves n bytes (aligned), returns the piece's offset. */
    size_t add(size_t n)
    {
        size_t off = total, a = align_up(n);
        if (a < n || total + a < total)
            overflow = true;
        total += a;
        return off;
    }
    size_t add(size_t count, size_t size)
    {
        size_t n;
        if (tsw__mul_size(count, size, &n)) {
            overflow = true;
            return total;
        }
        return add(n);
    }
};

/* The call's stream and its device block; everything is released in the destructor
 * (after a synchronisation, so nothing in flight still uses it). */
struct Call {
    int device = 0;
    cudaStream_t stream = nullptr;
    bool own_stream = false;
    char *block = nullptr;
    bool own_block = false;
    bool async = false; /* a *_device call with exec->cuda_async: no wait at the end */

    int init(const tsw_exec *ex, bool device_api)
    {
        device = ex->device_index;
        async = device_api && ex->cuda_async;
        if (ex->cuda_stream || device_api) {
            stream = (cudaStream_t)ex->cuda_stream;
        } else {
            TSW_CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                   "cudaStreamCreate");
            own_stream = true;
        }
        return TSW_OK;
    }

    /* Device memory for `bytes` (the plan's total), from the caller's workspace or ours. */
    int alloc(const tsw_exec *ex, size_t bytes)
    {
        if (bytes == 0)
            return TSW_OK;
        if (ex->cuda_workspace) {
            if (ex->cuda_workspace_bytes < bytes ||
                ((uintptr_t)ex->cuda_workspace % kAlign) != 0) {
                tsw__set_detail("cuda_workspace: %zu bytes given (256-byte aligned needed), "
                                "%zu bytes needed",
                                ex->cuda_workspace_bytes, bytes);
                return TSW_EINVAL;
            }
            block = (char *)ex->cuda_workspace;
            return TSW_OK;
        }
        /* (the free memory is asked only when the pool cannot give the block: the question
         * takes about 6 us, a tenth of a small call; H100, bench/RESULTS.md) */
        cudaMemPool_t pool;
        int rc = pool_of(device, &pool);
        if (rc)
            return rc;
        cudaError_t e = cudaMallocFromPoolAsync((void **)&block, bytes, pool, stream);
        if (e == cudaErrorMemoryAllocation) {
            /* The pool may keep idle blocks too small for this one but mapped all the same:
             * give them back to the driver (once our stream's frees are done) and retry. */
            (void)cudaGetLastError();
            (void)cudaStreamSynchronize(stream);
            (void)cudaMemPoolTrimTo(pool, 0);
            e = cudaMallocFromPoolAsync((void **)&block, bytes, pool, stream);
        }
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            block = nullptr;
            size_t free_b = 0, total_b = 0;
            if (e == cudaErrorMemoryAllocation && mem_info(&free_b, &total_b) == cudaSuccess)
                tsw__set_detail("needs %zu bytes of GPU memory on device %d; %zu of %zu are free",
                                bytes, device, free_b, total_b);
            else
                tsw__set_detail("cudaMallocFromPoolAsync of %zu bytes on device %d failed: %s",
                                bytes, device, cudaGetErrorString(e));
            (void)cudaGetLastError();
            return status_of(e) == TSW_ENODEV ? TSW_ENODEV : TSW_ENOMEM;
        }
        own_block = true;
        return TSW_OK;
    }

    void *at(size_t off) { return block + off; }

    int sync()
    {
        TSW_CU(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        return TSW_OK;
    }

    /* The end of a *_device call: wait for the results unless the call is asynchronous. */
    int finish() { return async ? TSW_OK : sync(); }

    ~Call()
    {
        /* The block goes back to our pool, which keeps it mapped up to its threshold.
         * Asynchronous: freed in stream order, after the queued work. */
        if (async) {
            if (own_block)
                (void)cudaFreeAsync(block, stream);
        } else if (stream || block) {
            (void)cudaStreamSynchronize(stream);
            if (own_block)
                (void)cudaFreeAsync(block, stream);
            (void)cudaStreamSynchronize(stream);
        }
        if (own_stream)
            (void)cudaStreamDestroy(stream);
        (void)cudaGetLastError();
    }
};

/* ---- validation of device inputs ---------------------------------------------------------- */

/* Series s of a collection, by one block: bit 1 of *flag for a non-finite value, bit 2 for
 * timestamps (times, when given) that are not finite and strictly increasing. */
template <typename T>
__device__ void check_series(const T *values, const T *times, const int64_t *off,
                             const int64_t *len, int64_t s, int64_t dim, int *flag,
                             int part = 0, int parts = 1)
{
    const int64_t o = off[s], n = len[s];
    const T *v = values + o * dim;
    int bad = 0;
    /* (part of parts: the values k = part blockDim + threadIdx.x + j parts blockDim) */
    for (int64_t k = (int64_t)part * blockDim.x + threadIdx.x; k < n * dim;
         k += (int64_t)parts * blockDim.x)
        bad |= !isfinite(v[k]);
    if (times) {
        const T *t = times + o;
        for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
            bad |= (!isfinite(t[k]) || (k > 0 && !(t[k] > t[k - 1]))) ? 2 : 0;
    }
    if (bad)
        atomicOr(flag, bad);
}

template <typename T>
__global__ void check_kernel(const T *values, const T *times, const int64_t *off,
                             const int64_t *len, int64_t count, int64_t dim, int *flag)
{
    for (int64_t s = blockIdx.x; s < count; s += gridDim.x)
        check_series(values, times, off, len, s, dim, flag);
}

/* Two collections of count series each (no timestamps) in one launch: a launch costs about
 * 5 us of a small call on the GPU (H100, bench/RESULTS.md). Each series in `parts` blocks'
 * shares (check2_parts), so that a small batch of long series still fills the GPU (32 pairs
 * of 512 x 64 took 51 us on 64 blocks, H200). */
template <typename T>
__global__ void check2_kernel(const T *a, const int64_t *aoff, const int64_t *alen, const T *b,
                              const int64_t *boff, const int64_t *blen, int64_t count,
                              int64_t dim, int *flag, int parts = 1)
{
    for (int64_t w = blockIdx.x; w < 2 * count * parts; w += gridDim.x) {
        const int64_t s = w / parts;
        const int part = (int)(w % parts);
        if (s < count)
            check_series(a, (const T *)nullptr, aoff, alen, s, dim, flag, part, parts);
        else
            check_series(b, (const T *)nullptr, boff, blen, s - count, dim, flag, part, parts);
    }
}

/* The parts a series of check2_kernel is cut into: about 2048 blocks in all, each at least
 * 16 values a thread of the longest series' (256 threads), at most 64 a series. */
inline int check2_parts(int64_t count, int64_t max_len, int64_t dim)
{
    const double per = (double)max_len * (double)dim / (256.0 * 16.0);
    double p = fmin(2048.0 / (2.0 * (double)count), per);
    p = fmin(p, 64.0);
    return p < 1 ? 1 : (int)p;
}

/* ---- collections ---------------------------------------------------------------------------- */

/* Host view of a collection: offsets and lengths arrays (made when the caller gave none),
 * the rows spanned, and the length range. */
struct HostColl {
    const tsw_collection *c = nullptr;
    int64_t *off = nullptr, *len = nullptr; /* tsw__malloc'd copies */
    int64_t rows = 0, max_len = 0, min_len = 0;
    double cells = 0;

    int init(const tsw_collection *coll)
    {
        c = coll;
        const int64_t n = coll->count;
        off = (int64_t *)tsw__malloc(sizeof(int64_t) * (size_t)n);
        len = (int64_t *)tsw__malloc(sizeof(int64_t) * (size_t)n);
        if (!off || !len)
            return TSW_ENOMEM;
        max_len = 0;
        min_len = INT64_MAX;
        for (int64_t i = 0; i < n; ++i) {
            off[i] = tsw__coll_off(coll, i);
            len[i] = tsw__coll_len(coll, i);
            if (off[i] + len[i] > rows)
                rows = off[i] + len[i];
            max_len = len[i] > max_len ? len[i] : max_len;
            min_len = len[i] < min_len ? len[i] : min_len;
            cells += (double)len[i];
        }
        return TSW_OK;
    }
    ~HostColl()
    {
        tsw__free(off);
        tsw__free(len);
    }
};

/* Checks of a collection whose values are device memory: everything but the values. */
inline int check_device_coll(int64_t dim, const tsw_collection *c)
{
    if (!c || !c->values)
        return TSW_EINVAL;
    if (c->count < 1)
        return TSW_ESHAPE;
    if (!c->lengths && c->length < 1)
        return TSW_ESHAPE;
    if (c->lengths && !c->offsets)
        return TSW_EINVAL;
    for (int64_t i = 0; i < c->count; ++i) {
        int64_t l = tsw__coll_len(c, i), o = tsw__coll_off(c, i);
        size_t n;
        if (l < 1)
            return TSW_ESHAPE;
        if (o < 0)
            return TSW_EINVAL;
        if (tsw__mul_size((size_t)(o + l), (size_t)dim, &n) || n > (size_t)INT64_MAX / 8)
            return TSW_EOVERFLOW;
    }
    return TSW_OK;
}

inline int check_common(const tsw_params *p, tsw_dtype dtype, int64_t dim, const tsw_exec *ex)
{
    int rc;
    if ((rc = tsw__check_params(p)))
        return rc;
    if (dtype != TSW_F32 && dtype != TSW_F64)
        return TSW_EDTYPE;
    if (dtype == TSW_F32 &&
        ((p->measure == TSW_TWED && (p->nu > 3.4e38 || p->lmbda > 3.4e38 || p->p > 3.4e38)) ||
         (p->measure == TSW_SOFT_DTW && (p->gamma > 3.4e38 || p->gamma < 1.0 / 3.4e38))))
        return TSW_EPARAM;
    if (dim < 1)
        return TSW_ESHAPE;
    if (ex->device_index < 0)
        return TSW_EINVAL;
    return TSW_OK;
}

/* Device collection description: offsets/lengths in the block. */
inline int64_t now_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The progress contract of tswarp.h: from the calling thread, at most every ~50 ms, and
 * once at the end (by the caller). Polled between chunks, after waiting for the chunk. */
struct Progress {
    const tsw_exec *ex;
    int64_t total;
    int64_t done = 0;
    int64_t last = now_ns();
    /* After a chunk: TSW_ECANCELED when the callback asks to stop. */
    int report(Call &call, int64_t add)
    {
        done += add;
        if (!ex->progress)
            return TSW_OK;
        int rc = call.sync();
        if (rc)
            return rc;
        int64_t t = now_ns();
        if (t - last < 50000000LL)
            return TSW_OK;
        last = t;
        if (ex->progress(ex->progress_user, done, total))
            return TSW_ECANCELED;
        return TSW_OK;
    }
};

} // namespace tsw__cu

#endif
