/* _bind_pair.h: one pair: dtw, twed, soft_dtw, distance (included once by _tswarp.c, in order; one translation unit). */
#ifndef TSWARP__BIND_PAIR_H
#define TSWARP__BIND_PAIR_H

/* ---- one pair ---------------------------------------------------------------------------- */

/* Shape of a single series: (len,) or (len, d), not empty. */
static int series_shape(PyArrayObject *a, const char *name, int64_t *len, int64_t *dim)
{
    int nd = PyArray_NDIM(a);
    if (nd != 1 && nd != 2) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
        PyErr_Format(PyExc_ValueError,
                     "%s must be one series, shaped (len,) or (len, d); got shape %S%s", name,
                     shape ? shape : Py_None,
                     nd == 3 ? " (use cdist/pdist for collections)" : "");
        Py_XDECREF(shape);
        return -1;
    }
    *len = PyArray_DIM(a, 0);
    *dim = nd == 2 ? PyArray_DIM(a, 1) : 1;
    if (*len == 0) {
        PyErr_Format(PyExc_ValueError, "%s is empty", name);
        return -1;
    }
    if (*dim == 0) {
        PyErr_Format(PyExc_ValueError, "%s has dimension 0 (shape (%lld, 0))", name,
                     (long long)*len);
        return -1;
    }
    return 0;
}

/* Timestamps of one series: 1-D, length len, converted to dt. */
static PyArrayObject *series_times(PyObject *o, const char *name, int64_t len,
                                   const char *sname, tsw_dtype dt)
{
    PyArrayObject *t = as_array(o, name, -1);
    if (!t)
        return NULL;
    if (dtype_class(t, name, -1) < 0)
        goto fail;
    if (PyArray_NDIM(t) != 1 || PyArray_DIM(t, 0) != len) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)t, "shape");
        PyErr_Format(PyExc_ValueError, "%s must have shape (%lld,) like %s, got %S", name,
                     (long long)len, sname, shape ? shape : Py_None);
        Py_XDECREF(shape);
        goto fail;
    }
    if (to_dtype(&t, dt) < 0)
        goto fail;
    return t;
fail:
    Py_DECREF(t);
    return NULL;
}

/* One pair of GPU arrays. *handled = 0 (and NULL returned without error) when _gpu found
 * every argument in host memory after all: the caller goes on with the numpy path. */
static PyObject *pair_compute_gpu(const char *fname, PyObject **slot, const tsw_params *prm,
                                  tsw_exec *ex, int explicit_index, int layout, int *handled)
{
    PyObject *ta = prm->measure == TSW_TWED && given(slot[K_TA]) ? slot[K_TA] : Py_None;
    PyObject *tb = prm->measure == TSW_TWED && given(slot[K_TB]) ? slot[K_TB] : Py_None;
    *handled = 1;
    PyObject *r = gpu_call("pair_plan", "(sOOOOiiii)", fname, slot[K_A], slot[K_B], ta, tb,
                           (int)ex->device, explicit_index, cuda_count(), layout);
    if (!r)
        return NULL;
    if (r == Py_None) {
        Py_DECREF(r);
        *handled = 0;
        return NULL;
    }
    PyObject *result = NULL, *ws = NULL;
    gpu_plan g;
    tsw_series sa, sb;
    int ok_a = 0, ok_b = 0;
    if (gpu_plan_parse(r, &g) < 0)
        goto done;
    series_from_desc(g.xdesc, &sa, &ok_a);
    if (ok_a)
        series_from_desc(g.ydesc, &sb, &ok_b);
    if (!ok_a || !ok_b)
        goto done;
    ex->device_index = g.device;
    ex->cuda_stream = (void *)(uintptr_t)g.stream;
    ex->cuda_async = 1; /* stream-ordered, as the array library's own operations */
    size_t bytes = 0;
    int rc = tsw_distance_workspace_size(prm, (tsw_dtype)g.dtype, g.dim, &sa, &sb, ex, &bytes);
    if (gpu_workspace(&g, rc, bytes, ex, &ws) < 0)
        goto done;
    void *out = (void *)(uintptr_t)g.out_ptr;
    const char *detail;
    Py_BEGIN_ALLOW_THREADS
    rc = tsw_distance_device(prm, (tsw_dtype)g.dtype, g.dim, &sa, &sb, out, ex);
    detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    Py_END_ALLOW_THREADS
    if (rc != TSW_OK) {
        gpu_raise(rc, fname, &g, detail);
        goto done;
    }
    Py_INCREF(g.out);
    result = g.out;
done:
    Py_XDECREF(ws);
    Py_DECREF(r);
    return result;
}

static PyObject *pair_compute(tsw_measure m, const char *fname, PyObject **slot)
{
    tsw_params prm;
    tsw_exec ex;
    PyArrayObject *a = NULL, *b = NULL, *ta = NULL, *tb = NULL;
    PyObject *result = NULL;
    int64_t na, nb, da, db;
    double out = 0;
    int rc, explicit_index, layout;

    if (build_params(m, fname, slot, &prm) < 0 || build_exec(slot, &ex, &explicit_index) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0)
        return NULL;
    /* numpy arrays skip this: one type check each. */
    if ((!PyArray_Check(slot[K_A]) && maybe_gpu(slot[K_A])) ||
        (!PyArray_Check(slot[K_B]) && maybe_gpu(slot[K_B])) ||
        (m == TSW_TWED && (maybe_gpu(slot[K_TA]) || maybe_gpu(slot[K_TB])))) {
        int handled;
        result = pair_compute_gpu(fname, slot, &prm, &ex, explicit_index, layout, &handled);
        if (handled)
            return result;
    }
    if (!(a = as_array(slot[K_A], "a", -1)) || !(b = as_array(slot[K_B], "b", -1)))
        goto done;
    if (apply_layout(&a, "a", layout, 2) < 0 || apply_layout(&b, "b", layout, 2) < 0)
        goto done;
    int ca = dtype_class(a, "a", -1), cb;
    if (ca < 0 || (cb = dtype_class(b, "b", -1)) < 0)
        goto done;
    if (series_shape(a, "a", &na, &da) < 0 || series_shape(b, "b", &nb, &db) < 0)
        goto done;
    if (da != db) {
        PyErr_Format(PyExc_ValueError, "a has dimension %lld but b has dimension %lld",
                     (long long)da, (long long)db);
        goto done;
    }
    tsw_dtype dt = (ca == TSW_F32 && cb == TSW_F32) ? TSW_F32 : TSW_F64;
    if (to_dtype(&a, dt) < 0 || to_dtype(&b, dt) < 0)
        goto done;
    if (m == TSW_TWED) {
        if (given(slot[K_TA]) && !(ta = series_times(slot[K_TA], "ta", na, "a", dt)))
            goto done;
        if (given(slot[K_TB]) && !(tb = series_times(slot[K_TB], "tb", nb, "b", dt)))
            goto done;
    }
    tsw_series sa = {PyArray_DATA(a), na, ta ? PyArray_DATA(ta) : NULL};
    tsw_series sb = {PyArray_DATA(b), nb, tb ? PyArray_DATA(tb) : NULL};
    /* Ctrl-C stops a long pair: the C library polls the trampoline between strips of rows
     * (at most every 50 ms; a short pair never calls it) */
    progress_ctx ctx = {NULL, NULL};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    rc = tsw_distance(&prm, dt, da, &sa, &sb, &out, &ex);
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        if (rc == TSW_ECANCELED && PyErr_Occurred()) {
        } else if (rc == TSW_ENONFINITE) {
            const char *which = first_nonfinite(sa.values, dt, na * da) >= 0 ? "a" : "b";
            PyErr_Format(PyExc_ValueError, "%s contains NaN or infinity", which);
        } else if (rc == TSW_ETIMES && ta && check_times(sa.times, dt, na, "ta") < 0) {
        } else if (rc == TSW_ETIMES && tb && check_times(sb.times, dt, nb, "tb") < 0) {
        } else {
            raise_status(rc, fname);
        }
        goto done;
    }
    result = PyFloat_FromDouble(out);
done:
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    return result;
}

static const signature sig_dtw = {"dtw", 2, 2, {K_A, K_B}, M_DTW | M_EXEC};
static const signature sig_twed = {"twed", 2, 2, {K_A, K_B},
                                   (M_TWED & ~(BIT(K_TX) | BIT(K_TY))) | M_EXEC};
static const signature sig_soft = {"soft_dtw", 2, 2, {K_A, K_B}, M_SOFT | M_EXEC};
static const signature sig_distance = {"distance", 3, 2, {K_A, K_B, K_METRIC},
                                       (M_ALL & ~(BIT(K_TX) | BIT(K_TY))) | M_EXEC};

static PyObject *py_dtw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_dtw, args, nargs, kwnames, slot) < 0)
        return NULL;
    return pair_compute(TSW_DTW, "dtw", slot);
}

static PyObject *py_twed(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_twed, args, nargs, kwnames, slot) < 0)
        return NULL;
    return pair_compute(TSW_TWED, "twed", slot);
}

static PyObject *py_soft_dtw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_soft, args, nargs, kwnames, slot) < 0)
        return NULL;
    return pair_compute(TSW_SOFT_DTW, "soft_dtw", slot);
}

/* A Python callable as metric (tslearn's and aeon's convention): tswarp/_metric.py runs it
 * pair by pair on the CPU. Measure parameters do not apply to it (bind them in the callable,
 * e.g. with functools.partial); a device other than auto/cpu is refused. */
static int callable_metric_check(const char *fname, PyObject **slot)
{
    for (int k = 0; k < K_COUNT; ++k)
        if ((M_ALL & BIT(k)) && given(slot[k])) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): '%s' is not a parameter of a callable metric; bind it in the "
                         "callable (functools.partial)",
                         fname, kw_names[k]);
            return -1;
        }
    if (given(slot[K_DEVICE])) {
        const char *d = PyUnicode_Check(slot[K_DEVICE]) ? PyUnicode_AsUTF8(slot[K_DEVICE]) : NULL;
        if (!d || (strcmp(d, "auto") != 0 && strcmp(d, "cpu") != 0)) {
            PyErr_Format(PyExc_ValueError,
                         "%s(): a callable metric runs in Python on the CPU; device=%R is not "
                         "available for it",
                         fname, slot[K_DEVICE]);
            return -1;
        }
    }
    return 0;
}

static PyObject *callable_metric_module(void)
{
    return PyImport_ImportModule("tswarp._metric");
}

static PyObject *py_distance(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_measure m;
    if (parse_call(&sig_distance, args, nargs, kwnames, slot) < 0)
        return NULL;
    if (given(slot[K_METRIC]) && !PyUnicode_Check(slot[K_METRIC]) &&
        PyCallable_Check(slot[K_METRIC])) {
        if (callable_metric_check("distance", slot) < 0)
            return NULL;
        PyObject *mod = callable_metric_module();
        if (!mod)
            return NULL;
        PyObject *r = PyObject_CallMethod(mod, "pair", "OOO{}O", slot[K_METRIC], slot[K_A],
                                          slot[K_B],
                                          slot[K_LAYOUT] ? slot[K_LAYOUT] : Py_None);
        Py_DECREF(mod);
        return r;
    }
    if (parse_metric(slot[K_METRIC], &m) < 0)
        return NULL;
    return pair_compute(m, "distance", slot);
}

PyDoc_STRVAR(dtw_doc,
"dtw($module, /, a, b, *, cost='sqeuclidean', window=None, radius=None,\n"
"    itakura_max_slope=None, accumulated=False, device='auto', layout=None)\n"
"--\n\n"
"Dynamic time warping distance between two series.\n\n"
"With the default squared Euclidean cost the value is the square root of the\n"
"accumulated cost, equal to ``tslearn.metrics.dtw`` and\n"
"``dtaidistance.dtw.distance``; ``accumulated=True`` returns the accumulated cost\n"
"(equal to ``aeon.distances.dtw_distance``).\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"cost : {'sqeuclidean', 'euclidean', 'abs', 'cosine'}, default 'sqeuclidean'\n"
"    Local cost between two points ('abs' is the L1 distance, alias 'cityblock').\n"
DOC_WINDOW
"accumulated : bool, default False\n"
"    Return the accumulated cost instead of its square root (sqeuclidean only;\n"
"    other costs always return the accumulated cost).\n"
DOC_DEVICE
"\n"
"Returns\n"
"-------\n"
"float\n"
"    The distance (+inf when the window admits no alignment). For GPU inputs, a 0-d\n"
"    array of their library (CuPy array, torch tensor) on their GPU, of the\n"
"    computation dtype.\n\n"
DOC_RAISES
"\n"
"Examples\n"
"--------\n"
">>> import numpy as np, tswarp\n"
">>> tswarp.dtw([0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0])\n"
"0.0\n"
">>> tswarp.dtw([0.0, 1.0, 2.0], [0.0, 2.0, 2.0], accumulated=True)\n"
"1.0\n");

PyDoc_STRVAR(twed_doc,
"twed($module, /, a, b, *, nu=0.001, lmbda=1.0, p=2.0, ta=None, tb=None, window=None,\n"
"    radius=None, itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Time warp edit distance (Marteau 2009) between two series.\n\n"
"Equal to ``aeon.distances.twe_distance`` with the default timestamps 1..len.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"nu : float, default 0.001\n"
"    Stiffness (>= 0): cost per unit of time difference.\n"
"lmbda : float, default 1.0\n"
"    Deletion penalty (>= 0).\n"
"p : float, default 2.0\n"
"    Order (>= 1) of the Lp local distance (its root is taken).\n"
"ta, tb : array_like, shape (len,), optional\n"
"    Timestamps of a and b, finite and strictly increasing. Default 1..len.\n"
DOC_WINDOW
DOC_DEVICE
"\n"
"Returns\n"
"-------\n"
"float\n"
"    The distance; a 0-d array of the inputs' library on their GPU for GPU inputs.\n\n"
DOC_RAISES
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.twed([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])\n"
"0.0\n"
">>> tswarp.twed([0.0, 1.0], [0.0, 1.0], ta=[0, 1], tb=[0, 2], nu=1.0)\n"
"1.0\n");

PyDoc_STRVAR(soft_dtw_doc,
"soft_dtw($module, /, a, b, *, gamma=1.0, normalize=False, window=None, radius=None,\n"
"    itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Soft-DTW (Cuturi and Blondel 2017) between two series, squared Euclidean cost.\n\n"
"Equal to ``tslearn.metrics.soft_dtw``. The value can be negative; it is stable for\n"
"small gamma (log-sum-exp with the minimum factored out).\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"gamma : float, default 1.0\n"
"    Smoothing in [2.2e-308, 1e300] (float32 inputs: [1.2e-38, 1e30]); gamma -> 0 gives\n"
"    the accumulated DTW cost.\n"
"normalize : bool, default False\n"
"    Return the soft-DTW divergence sdtw(a, b) - (sdtw(a, a) + sdtw(b, b)) / 2,\n"
"    which is >= 0 and 0 for a == b.\n"
DOC_WINDOW
DOC_DEVICE
"\n"
"Returns\n"
"-------\n"
"float\n"
"    A 0-d array of the inputs' library on their GPU for GPU inputs.\n\n"
DOC_RAISES
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.soft_dtw([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], normalize=True)\n"
"0.0\n");

PyDoc_STRVAR(distance_doc,
"distance($module, /, a, b, metric='dtw', **params)\n"
"--\n\n"
"The distance `metric` between two series.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"metric : {'dtw', 'twed', 'soft_dtw'}, default 'dtw'\n"
"    The measure ('softdtw' and 'soft-dtw' are accepted too).\n"
"**params\n"
"    The keyword arguments of :func:`dtw`, :func:`twed` or :func:`soft_dtw` for that\n"
"    metric, and `device`. A parameter of another metric is a TypeError.\n\n"
"Returns\n"
"-------\n"
"float\n"
"    A 0-d array of the inputs' library on their GPU for GPU inputs.\n\n"
DOC_RAISES
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.distance([0.0, 1.0], [0.0, 1.0, 1.0], metric='twed', nu=0.0, lmbda=0.0)\n"
"0.0\n");

#define TSW_PAIR_METHODS                                                                      \
    FASTKW("dtw", py_dtw, dtw_doc), FASTKW("twed", py_twed, twed_doc),                        \
        FASTKW("soft_dtw", py_soft_dtw, soft_dtw_doc),                                        \
        FASTKW("distance", py_distance, distance_doc),

#endif
