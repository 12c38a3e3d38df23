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
"metric : str, default 'dtw'\n"
"    One of tswarp.METRICS: 'dtw', 'twed', 'soft_dtw', 'wdtw', 'ddtw', 'wddtw', 'adtw',\n"
"    'erp', 'edr', 'lcss', 'msm' ('softdtw', 'soft-dtw' and 'twe' are accepted too).\n"
"**params\n"
"    The keyword arguments of the function of that name (:func:`dtw`, :func:`msm`, ...),\n"
"    and `device`. A parameter of another metric is a TypeError.\n\n"
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


/* The elastic family's pair functions: tswarp.<measure>(a, b, **its parameters). */
#define TSW_FAMILY_FN(NAME, MEASURE, MASK)                                                    \
    static const signature sig_##NAME = {#NAME, 2, 2, {K_A, K_B}, (MASK) | M_EXEC};         \
    static PyObject *py_##NAME(PyObject *self, PyObject *const *args, Py_ssize_t nargs,      \
                               PyObject *kwnames)                                            \
    {                                                                                         \
        PyObject *slot[K_COUNT] = {0};                                                        \
        (void)self;                                                                           \
        if (parse_call(&sig_##NAME, args, nargs, kwnames, slot) < 0)                          \
            return NULL;                                                                      \
        return pair_compute(MEASURE, #NAME, slot);                                            \
    }
TSW_FAMILY_FN(wdtw, TSW_WDTW, M_WDTW)
TSW_FAMILY_FN(ddtw, TSW_DDTW, M_DTW)
TSW_FAMILY_FN(wddtw, TSW_WDDTW, M_WDTW)
TSW_FAMILY_FN(adtw, TSW_ADTW, M_ADTW)
TSW_FAMILY_FN(erp, TSW_ERP, M_ERP)
TSW_FAMILY_FN(edr, TSW_EDR, M_EPS)
TSW_FAMILY_FN(lcss, TSW_LCSS, M_EPS)
TSW_FAMILY_FN(msm, TSW_MSM, M_MSM)
TSW_FAMILY_FN(shape_dtw, TSW_SHAPE_DTW, M_SHAPE)
#undef TSW_FAMILY_FN

#define DOC_FAMILY_TAIL                                                                       \
    DOC_WINDOW                                                                                \
    "device : {'auto', 'cpu'}, default 'auto'\n"                                             \
    "    The elastic family runs on the CPU for now ('cuda' raises ValueError).\n"             \
    "layout : {None, 'channels_last', 'channels_first'}, default None\n"                     \
    "    As in :func:`dtw`.\n"                                                               \
    "\n"                                                                                      \
    "Returns\n"                                                                               \
    "-------\n"                                                                               \
    "float\n"                                                                                 \
    "    The distance (+inf when the window admits no alignment).\n\n" DOC_RAISES

PyDoc_STRVAR(wdtw_doc,
"wdtw($module, /, a, b, *, g=0.05, window=None, radius=None, itakura_max_slope=None,\n"
"    device='auto', layout=None)\n"
"--\n\n"
"Weighted DTW (Jeong et al. 2011): the squared Euclidean cost of cell (i, j) times\n"
"``w(k) = 1 / (1 + exp(-g (k - max(n, m) / 2)))`` with ``k = abs(i - j)``; the\n"
"accumulated cost, equal\n"
"to ``aeon.distances.wdtw_distance``.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"g : float, default 0.05\n"
"    Steepness of the weight (>= 0); 0 weighs every cell 1/2.\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.wdtw([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])\n"
"0.0\n"
">>> tswarp.wdtw([0.0, 2.0], [0.0, 0.0], g=0.0)\n"
"2.0\n");

PyDoc_STRVAR(ddtw_doc,
"ddtw($module, /, a, b, *, cost='sqeuclidean', window=None, radius=None,\n"
"    itakura_max_slope=None, accumulated=False, device='auto', layout=None)\n"
"--\n\n"
"Derivative DTW (Keogh and Pazzani 2001): :func:`dtw`, with the same `cost` and\n"
"`accumulated`, of the derivatives ((x[i] - x[i-1]) + (x[i+1] - x[i-1]) / 2) / 2,\n"
"i = 1..n-2 (aeon's average of slopes; series of 3 points or more). With\n"
"``accumulated=True`` equal to ``aeon.distances.ddtw_distance``.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"cost, accumulated\n"
"    As in :func:`dtw`.\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.ddtw([0.0, 1.0, 2.0, 3.0], [5.0, 6.0, 7.0, 8.0])\n"
"0.0\n");

PyDoc_STRVAR(wddtw_doc,
"wddtw($module, /, a, b, *, g=0.05, window=None, radius=None, itakura_max_slope=None,\n"
"    device='auto', layout=None)\n"
"--\n\n"
":func:`wdtw` of the derivatives of :func:`ddtw`; equal to\n"
"``aeon.distances.wddtw_distance``.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"g : float, default 0.05\n"
"    As in :func:`wdtw`.\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.wddtw([0.0, 1.0, 2.0, 3.0], [5.0, 6.0, 7.0, 8.0])\n"
"0.0\n");

PyDoc_STRVAR(adtw_doc,
"adtw($module, /, a, b, *, warp_penalty=1.0, window=None, radius=None,\n"
"    itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Amerced DTW (Herrmann and Webb 2023): squared Euclidean costs, every non-diagonal\n"
"move adds `warp_penalty`; the accumulated cost, equal to\n"
"``aeon.distances.adtw_distance``.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"warp_penalty : float, default 1.0\n"
"    Penalty of a warping step (>= 0); 0 is DTW's accumulated cost.\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.adtw([0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0], warp_penalty=0.5)\n"
"0.5\n");

PyDoc_STRVAR(erp_doc,
"erp($module, /, a, b, *, g=0.0, window=None, radius=None, itakura_max_slope=None,\n"
"    device='auto', layout=None)\n"
"--\n\n"
"Edit distance with real penalty (Chen and Ng 2004): a match costs the Euclidean\n"
"distance of the two points, a gap that of the point to (g, ..., g). The boundary holds the cumulative gap costs, as in the\n"
"paper's recursion; ``aeon.distances.erp_distance`` (1.6) puts the whole series' gap\n"
"cost in every boundary cell, so it differs where the best alignment starts with gaps\n"
"and agrees elsewhere.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"g : float, default 0.0\n"
"    The gap value (finite).\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.erp([1.0, 100.0], [100.0])\n"
"1.0\n");

PyDoc_STRVAR(edr_doc,
"edr($module, /, a, b, *, epsilon=None, window=None, radius=None,\n"
"    itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Edit distance on real sequences (Chen et al. 2005): a match costs 0 when the\n"
"Euclidean distance of the points is below epsilon and 1 otherwise, a gap 1; the count divided by max(n, m).\n"
"The boundary holds i and j (the paper's); ``aeon.distances.edr_distance`` (1.6) makes\n"
"it 0, so that leading gaps are free there.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"epsilon : float or None, default None\n"
"    Match threshold (>= 0); None is max(std(a), std(b)) / 4 over all values of each\n"
"    (aeon's default).\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.edr([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 9.0], epsilon=0.5)\n"
"0.25\n");

PyDoc_STRVAR(lcss_doc,
"lcss($module, /, a, b, *, epsilon=1.0, window=None, radius=None,\n"
"    itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Longest common subsequence distance: points match when their Euclidean distance is at\n"
"most epsilon; the\n"
"distance is 1 - LCSS / min(n, m), equal to ``aeon.distances.lcss_distance``.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"epsilon : float, default 1.0\n"
"    Match threshold (>= 0).\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.lcss([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 9.0], epsilon=0.5)\n"
"0.25\n");

PyDoc_STRVAR(msm_doc,
"msm($module, /, a, b, *, c=1.0, independent=True, window=None, radius=None,\n"
"    itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Move-split-merge (Stefan et al. 2013): a move costs ``abs(a[i] - b[j])``; a split or\n"
"merge c,\n"
"plus the distance to the nearer neighbour when the point is not between them. Equal\n"
"to ``aeon.distances.msm_distance``.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"c : float, default 1.0\n"
"    Split/merge cost (>= 0).\n"
"independent : bool, default True\n"
"    True: the sum over channels of univariate MSM. False: aeon's dependent form\n"
"    (squared Euclidean distances between points).\n"
DOC_FAMILY_TAIL
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.msm([1.0, 2.0, 3.0], [1.0, 2.0, 2.0, 3.0])\n"
"1.0\n");

PyDoc_STRVAR(shape_dtw_doc,
"shape_dtw($module, /, a, b, *, reach=15, descriptor='identity', paa_segments=5,\n"
"    window=None, radius=None, itakura_max_slope=None, device='auto', layout=None)\n"
"--\n\n"
"Shape DTW (Zhao and Itti 2018), equal to ``aeon.distances.shape_dtw_distance``: every\n"
"point is described by its neighbourhood of ``2 reach + 1`` points (each series padded\n"
"with its end values), DTW aligns the descriptors (squared Euclidean), and the value is\n"
"the squared Euclidean cost of the series' own points summed along that alignment, traced\n"
"back from the last cell by aeon's rule (diagonal when below both neighbours, else the\n"
"smaller of left and up, reading aeon's row and column -1 as numpy does). O(len(a)\n"
"len(b)) memory a pair: the trace needs the whole matrix.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"reach : int, default 15\n"
"    Half width of the neighbourhood (>= 0; 0 is DTW of the points, traced by that rule).\n"
"descriptor : {'identity', 'paa'}, default 'identity'\n"
"    'identity': the neighbourhood's values (aeon's only descriptor). 'paa': their\n"
"    piecewise aggregate, ``paa_segments`` means of ``(2 reach + 1) // paa_segments``\n"
"    points each, the remainder's last points left out (tslearn's PAA).\n"
"paa_segments : int, default 5\n"
"    With descriptor='paa': 1 .. 2 reach + 1 (the default is cut to 2 reach + 1 for a\n"
"    smaller neighbourhood).\n"
DOC_FAMILY_TAIL
"\n"
"The window applies to the series' own lengths. Where it admits no alignment the value is\n"
"+inf (aeon's trace sums some cells anyway). Computed in double for float32 inputs too.\n"
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.shape_dtw([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10], [11.0, 12, 13, 14, 15, 16, 17, 18, 19, 20])\n"
"1000.0\n");

#define TSW_PAIR_METHODS                                                                      \
    FASTKW("dtw", py_dtw, dtw_doc), FASTKW("twed", py_twed, twed_doc),                        \
        FASTKW("soft_dtw", py_soft_dtw, soft_dtw_doc),                                        \
        FASTKW("distance", py_distance, distance_doc), FASTKW("wdtw", py_wdtw, wdtw_doc),     \
        FASTKW("ddtw", py_ddtw, ddtw_doc), FASTKW("wddtw", py_wddtw, wddtw_doc),              \
        FASTKW("adtw", py_adtw, adtw_doc), FASTKW("erp", py_erp, erp_doc),                    \
        FASTKW("edr", py_edr, edr_doc), FASTKW("lcss", py_lcss, lcss_doc),                    \
        FASTKW("msm", py_msm, msm_doc), FASTKW("shape_dtw", py_shape_dtw, shape_dtw_doc),

#endif
