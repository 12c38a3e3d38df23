/* _bind_info.h: build and device information, the device memory cache (included once by _tswarp.c, in order; one translation unit). */
#ifndef TSWARP__BIND_INFO_H
#define TSWARP__BIND_INFO_H

/* ---- information ---------------------------------------------------------------------- */

/* {index, name, compute_capability, multiprocessors, total_memory, free_memory,
 *  cached_memory, runnable} */
static PyObject *gpu_info(int index)
{
    tsw_cuda_device d;
    size_t cached = 0;
    memset(&d, 0, sizeof(d));
    if (tsw_cuda_device_info(index, &d) != TSW_OK)
        Py_RETURN_NONE;
    if (tsw_cuda_cached_bytes(index, &cached) != TSW_OK)
        cached = 0;
    d.name[sizeof(d.name) - 1] = '\0';
    return Py_BuildValue("{s:i,s:s,s:(ii),s:i,s:K,s:K,s:K,s:O}", "index", index, "name", d.name,
                         "compute_capability", d.major, d.minor, "multiprocessors",
                         d.multiprocessors, "total_memory", (unsigned long long)d.total_memory,
                         "free_memory", (unsigned long long)d.free_memory, "cached_memory",
                         (unsigned long long)cached, "runnable", d.runnable ? Py_True : Py_False);
}

static PyObject *py_info(PyObject *self, PyObject *unused)
{
    int count = 0, runtime = 0, driver = 0;
    if (tsw_has_cuda() && tsw_cuda_device_count(&count) != TSW_OK)
        count = 0;
    if (tsw_cuda_versions(&runtime, &driver) != TSW_OK)
        runtime = driver = 0;
    const char *archs = tsw_cuda_archs();
    PyObject *gpus = PyList_New(0);
    if (!gpus)
        return NULL;
    for (int i = 0; i < count; ++i) {
        PyObject *g = gpu_info(i);
        if (!g || (g != Py_None && PyList_Append(gpus, g) < 0)) {
            Py_XDECREF(g);
            Py_DECREF(gpus);
            return NULL;
        }
        Py_DECREF(g);
    }
    return Py_BuildValue("{s:s,s:s,s:i,s:O,s:i,s:s,s:i,s:i,s:N}", "version",
                         tsw_version_string(), "simd", tsw_cpu_simd(), "threads",
                         tsw_max_threads(), "cuda_built", tsw_has_cuda() ? Py_True : Py_False,
                         "cuda_devices", count, "cuda_archs", archs ? archs : "",
                         "cuda_runtime", runtime, "cuda_driver", driver, "gpus", gpus);
}

/* empty_cache(device=None): tsw_cuda_empty_cache. None is every GPU, and nothing at all
 * without the CUDA backend (as torch.cuda.empty_cache() before CUDA is used: there is no
 * cache to empty); an index is checked as parse_device checks 'cuda:N'. */
static const signature sig_empty_cache = {"empty_cache", 1, 0, {K_DEVICE}, 0};

static PyObject *py_empty_cache(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_empty_cache, args, nargs, kwnames, slot) < 0)
        return NULL;
    PyObject *o = slot[K_DEVICE];
    int device = -1;
    if (given(o)) {
        if (PyBool_Check(o) || !PyIndex_Check(o)) {
            PyErr_Format(PyExc_TypeError, "empty_cache(): device must be an int or None, got %s",
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
        PyObject *n = PyNumber_Index(o);
        if (!n)
            return NULL;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
        Py_DECREF(n);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (overflow < 0 || (!overflow && v < 0)) {
            PyErr_Format(PyExc_ValueError,
                         "empty_cache(): device must be a GPU index >= 0 or None, got %R", o);
            return NULL;
        }
        if (!tsw_has_cuda()) {
            PyErr_Format(NoDeviceError,
                         "empty_cache(): device=%R: this tswarp was built without the CUDA "
                         "backend",
                         o);
            return NULL;
        }
        if (cuda_count() == 0) {
            PyErr_Format(NoDeviceError,
                         "empty_cache(): device=%R: no CUDA GPU was found (is the driver "
                         "loaded?)",
                         o);
            return NULL;
        }
        if (overflow > 0 || v >= cuda_count_cached) {
            PyErr_Format(NoDeviceError, "empty_cache(): device=%R: only %d CUDA device(s) found",
                         o, cuda_count_cached);
            return NULL;
        }
        device = (int)v;
    } else if (!tsw_has_cuda()) {
        Py_RETURN_NONE;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tsw_cuda_empty_cache(device); /* waits for the device's work */
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_status(rc, "empty_cache");
        return NULL;
    }
    Py_RETURN_NONE;
}

PyDoc_STRVAR(info_doc,
"info($module, /)\n"
"--\n\n"
"Build and machine information.\n\n"
"Returns\n"
"-------\n"
"dict\n"
"    version (str), simd (the CPU kernels' instruction set: 'avx2', 'sse2' or\n"
"    'scalar'), threads (default thread count), cuda_built (bool), cuda_devices (int),\n"
"    cuda_archs (str: the GPU code compiled in, e.g. 'sm_80 sm_90 compute_90'; '' without\n"
"    CUDA), cuda_runtime and cuda_driver (int, e.g. 13000 for 13.0; 0 when unknown), gpus\n"
"    (list of dicts, one a GPU: index, name, compute_capability (major, minor),\n"
"    multiprocessors, total_memory and free_memory (the driver's) in bytes,\n"
"    cached_memory (bytes tswarp's memory pool keeps mapped for its next calls, see\n"
"    tswarp.empty_cache), runnable: whether this build has code that runs on it).\n\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> sorted(tswarp.info())\n"
"['cuda_archs', 'cuda_built', 'cuda_devices', 'cuda_driver', 'cuda_runtime', 'gpus', 'simd', "
"'threads', 'version']\n");

PyDoc_STRVAR(empty_cache_doc,
"empty_cache($module, /, device=None)\n"
"--\n\n"
"Return the GPU memory tswarp keeps cached to the driver.\n\n"
"Calls on host arrays take their GPU memory from tswarp's own memory pool, which\n"
"keeps what a call gives back mapped for the next call (at most a quarter of the\n"
"GPU's memory, or the bytes in the environment variable TSWARP_CUDA_CACHE_BYTES; 0\n"
"keeps nothing). This waits for the GPU's work and releases that cache, as\n"
"``torch.cuda.empty_cache()`` does for PyTorch's, so that other processes or\n"
"libraries can have the memory. ``info()['gpus'][k]['cached_memory']`` says how\n"
"much is cached. Calls on CuPy arrays and PyTorch tensors use their library's\n"
"allocator instead (``cupy.get_default_memory_pool().free_all_blocks()``,\n"
"``torch.cuda.empty_cache()``).\n\n"
"Parameters\n"
"----------\n"
"device : int, optional\n"
"    The GPU's index; None (the default) empties every GPU's cache, and does nothing\n"
"    when this tswarp has no CUDA backend.\n\n"
"Raises\n"
"------\n"
"NoDeviceError\n"
"    device names no GPU (or the CUDA backend is not built); a ValueError.\n"
"ValueError\n"
"    device is negative.\n"
"TypeError\n"
"    device is not an int.\n\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.empty_cache()\n");

#define TSW_INFO_METHODS                                                                      \
    {"info", py_info, METH_NOARGS, info_doc},                                                 \
        FASTKW("empty_cache", py_empty_cache, empty_cache_doc),

#endif
