/* _bind_gpu.h: arguments in GPU memory (CuPy, torch, DLPack): the plan that tswarp._gpu makes, workspaces, errors (included once by _tswarp.c, in order; one translation unit). */
#ifndef TSWARP__BIND_GPU_H
#define TSWARP__BIND_GPU_H

/* ---- GPU arrays --------------------------------------------------------------------------
 * An argument that is not a numpy array but whose type has __cuda_array_interface__ (CuPy,
 * torch, numba) or __dlpack_device__ may live in GPU memory: tswarp._gpu then decides (a
 * torch CPU tensor is host memory and takes the numpy path), checks devices, dtypes and
 * shapes, prepares contiguous buffers and the output with the inputs' own library, and hands
 * back device pointers for the tsw_*_device calls made here with the GIL released. */

static int maybe_gpu(PyObject *o)
{
    if (!o || o == Py_None || PyArray_Check(o) || PyFloat_Check(o) || PyLong_Check(o) ||
        PyList_Check(o) || PyTuple_Check(o) || PyUnicode_Check(o))
        return 0;
    PyObject *type = (PyObject *)Py_TYPE(o);
    return PyObject_HasAttr(type, str_cai) || PyObject_HasAttr(type, str_dlpack_device);
}

/* A collection argument: one array, or a list/tuple/1-D object array of series. */
static int coll_maybe_gpu(PyObject *o)
{
    if (!o || o == Py_None)
        return 0;
    if (PyList_Check(o) || PyTuple_Check(o)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        PyObject **items = PySequence_Fast_ITEMS(o);
        for (Py_ssize_t i = 0; i < n; ++i)
            if (maybe_gpu(items[i]))
                return 1;
        return 0;
    }
    if (PyArray_Check(o)) {
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_TYPE(a) != NPY_OBJECT || PyArray_NDIM(a) != 1)
            return 0;
        for (npy_intp i = 0; i < PyArray_DIM(a, 0); ++i)
            if (maybe_gpu(*(PyObject **)PyArray_GETPTR1(a, i)))
                return 1;
        return 0;
    }
    return maybe_gpu(o);
}

/* tswarp._gpu.<name>(*args) as a new reference; NULL with the exception set. */
static PyObject *gpu_call(const char *name, const char *format, ...)
{
    if (!gpu_module && !(gpu_module = PyImport_ImportModule("tswarp._gpu")))
        return NULL;
    PyObject *fn = PyObject_GetAttrString(gpu_module, name);
    if (!fn)
        return NULL;
    va_list va;
    va_start(va, format);
    PyObject *args = Py_VaBuildValue(format, va);
    va_end(va);
    PyObject *r = NULL;
    if (args) {
        r = PyObject_CallObject(fn, args);
        Py_DECREF(args);
    }
    Py_DECREF(fn);
    return r;
}

/* The head of a plan from _gpu.pair_plan / _gpu.batch_plan (borrowed references). */
typedef struct {
    int dtype;
    long long dim;
    int device;
    unsigned long long stream, out_ptr;
    PyObject *out, *plan, *xdesc, *ydesc;
} gpu_plan;

static int gpu_plan_parse(PyObject *r, gpu_plan *g)
{
    if (!PyTuple_Check(r) ||
        !PyArg_ParseTuple(r, "iLiKKOOOO", &g->dtype, &g->dim, &g->device, &g->stream,
                          &g->out_ptr, &g->out, &g->plan, &g->xdesc, &g->ydesc)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "tswarp._gpu returned a malformed plan");
        return -1;
    }
    if (g->dtype != TSW_F32 && g->dtype != TSW_F64) {
        PyErr_SetString(PyExc_SystemError, "tswarp._gpu returned a malformed plan");
        return -1;
    }
    return 0;
}

/* Device memory for the call's temporaries from the array library's allocator (its pool),
 * so the call does no cudaMalloc/cudaFree of its own. *keep gets the buffer object (or
 * NULL: the library could not give it; the C library then allocates itself). */
static int gpu_workspace(const gpu_plan *g, int rc_size, size_t bytes, tsw_exec *ex,
                         PyObject **keep)
{
    *keep = NULL;
    if (rc_size != TSW_OK || bytes == 0)
        return 0;
    PyObject *r = gpu_call("workspace", "(OK)", g->plan, (unsigned long long)bytes);
    if (!r)
        return -1;
    unsigned long long ptr = 0;
    PyObject *buf = NULL;
    if (r != Py_None) {
        if (!PyArg_ParseTuple(r, "OK", &buf, &ptr)) {
            Py_DECREF(r);
            return -1;
        }
        ex->cuda_workspace = (void *)(uintptr_t)ptr;
        ex->cuda_workspace_bytes = bytes;
    }
    *keep = r; /* holds buf */
    return 0;
}

/* After a failed tsw_*_device call: the argument at fault for bad values/timestamps, else
 * the status with the detail captured right after the call. */
static void gpu_raise(int rc, const char *fname, const gpu_plan *g, const char *detail)
{
    if (rc == TSW_ECANCELED && PyErr_Occurred())
        return;
    char saved[512];
    PyOS_snprintf(saved, sizeof(saved), "%s", detail ? detail : "");
    PyObject *r = gpu_call("diagnose", "(Oi)", g->plan, rc);
    if (!r)
        return; /* the ValueError naming the argument */
    Py_DECREF(r);
    raise_status_detail(rc, fname, saved);
}

static void series_from_desc(PyObject *d, tsw_series *s, int *ok)
{
    unsigned long long v, t;
    long long n;
    *ok = PyArg_ParseTuple(d, "KKL", &v, &t, &n);
    s->values = (const void *)(uintptr_t)v;
    s->times = t ? (const void *)(uintptr_t)t : NULL;
    s->length = n;
}

#endif
