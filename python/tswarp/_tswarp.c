/*
 * tswarp._tswarp: the CPython binding of libtswarp (include/tswarp.h).
 *
 * The binding stays thin: it coerces Python inputs into C-contiguous NumPy arrays of the
 * computation dtype, parses and checks keyword arguments so that errors name the argument,
 * releases the GIL around every libtswarp call and maps status codes to exceptions. Every
 * measure's math lives in the C library.
 *
 * The pair functions (dtw, twed, soft_dtw, distance) are the public objects themselves
 * (METH_FASTCALL | METH_KEYWORDS, keyword names matched by pointer against interned
 * strings, already-contiguous float arrays used in place), so a call on two short series
 * costs about a microsecond.
 *
 * Checking values for NaN/inf and timestamps for strict increase is done once, by the C
 * library; when it reports TSW_ENONFINITE or TSW_ETIMES the binding scans the inputs again
 * to say which argument (and which series of a collection) is at fault. That keeps the hot
 * path free of a second pass over the data.
 *
 * GPU arrays (CuPy, PyTorch CUDA tensors, anything with __cuda_array_interface__ or a CUDA
 * DLPack device) go through the tsw_*_device entry points. The check for them is a type
 * attribute lookup made only for arguments that are not numpy arrays, so the numpy path pays
 * nothing; the array-library work lives in tswarp/_gpu.py, imported on first use.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL tswarp_ARRAY_API
#include <numpy/arrayobject.h>

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "tswarp.h"

/* One binding file per capability, in the order each needs the ones before it: */
#include "_bind_core.h"       /* keywords, errors, parsing, layout, arrays, progress */
#include "_bind_gpu.h"        /* arguments in GPU memory */
#include "_bind_pair.h"       /* dtw, twed, soft_dtw, distance */
#include "_bind_batch.h"      /* cdist, pdist, paired */
#include "_bind_align.h"      /* dtw_path, subsequence DTW */
#include "_bind_segmental.h"  /* segmental DTW */
#include "_bind_sdtw.h"       /* soft-DTW gradients */
#include "_bind_shapelets.h"  /* shapelets */
#include "_bind_knn.h"        /* knn, lower bounds, envelopes, search */
#include "_bind_info.h"       /* info, empty_cache */

#define FASTKW(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, doc}
static PyMethodDef methods[] = {
    TSW_PAIR_METHODS
    TSW_BATCH_METHODS
    TSW_ALIGN_METHODS
    TSW_SEGMENTAL_METHODS
    TSW_SDTW_GRAD_METHODS
    TSW_SHAPELET_METHODS
    TSW_KNN_METHODS
    TSW_INFO_METHODS
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tswarp._tswarp",
    .m_doc = "CPython binding of libtswarp; use the functions through the tswarp package.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__tswarp(void)
{
    import_array();
    for (int k = 0; k < K_COUNT; ++k)
        if (!kw_str[k] && !(kw_str[k] = PyUnicode_InternFromString(kw_names[k])))
            return NULL;
    PyObject *mod = PyModule_Create(&moduledef);
    if (!mod)
        return NULL;
    if (!str_cai && !(str_cai = PyUnicode_InternFromString("__cuda_array_interface__")))
        return NULL;
    if (!str_dlpack_device && !(str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__")))
        return NULL;
    if (!NoDeviceError) {
        NoDeviceError = PyErr_NewExceptionWithDoc(
            "tswarp.NoDeviceError",
            "device='cuda' was requested but this tswarp has no CUDA backend or found no GPU.",
            PyExc_ValueError, NULL);
        if (!NoDeviceError)
            goto fail;
    }
    Py_INCREF(NoDeviceError);
    if (PyModule_AddObject(mod, "NoDeviceError", NoDeviceError) < 0) {
        Py_DECREF(NoDeviceError);
        goto fail;
    }
    if (!CudaError) {
        CudaError = PyErr_NewExceptionWithDoc(
            "tswarp.CudaError",
            "A CUDA runtime error inside tswarp (the message carries the CUDA error); the device "
            "is left usable.",
            PyExc_RuntimeError, NULL);
        if (!CudaError)
            goto fail;
    }
    Py_INCREF(CudaError);
    if (PyModule_AddObject(mod, "CudaError", CudaError) < 0) {
        Py_DECREF(CudaError);
        goto fail;
    }
    PyObject *metrics = PyTuple_New(N_METRICS);
    for (int i = 0; metrics && i < N_METRICS; ++i) {
        PyObject *name = PyUnicode_FromString(metric_names[i]);
        if (!name) {
            Py_CLEAR(metrics);
            break;
        }
        PyTuple_SET_ITEM(metrics, i, name);
    }
    if (!metrics || PyModule_AddObject(mod, "METRICS", metrics) < 0) {
        Py_XDECREF(metrics);
        goto fail;
    }
    if (PyModule_AddStringConstant(mod, "__version__", tsw_version_string()) < 0)
        goto fail;
    return mod;
fail:
    Py_DECREF(mod);
    return NULL;
}
