/*
 * Shapelet bindings (included by _tswarp.c after its shared helpers; tswarp/shapelets.py is
 * the public surface). The Python layer hands over ready-made arrays: the series back to
 * back as float64 with int64 offsets and lengths, int32 labels 0..C-1, so these functions
 * only check types, release the GIL around the C call (with the Ctrl-C trampoline) and map
 * status codes to exceptions.
 */

/* A 1-D C-contiguous array of exactly `type`, or NULL (None allowed when `optional`). */
static PyArrayObject *shp_array(PyObject *o, int type, const char *name, int optional)
{
    if (optional && (!o || o == Py_None))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(o, type, 1, 1, NPY_ARRAY_CARRAY_RO);
    if (!a && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s must be a 1-D array", name);
    return a;
}

/* values, offsets, lengths -> a tsw_collection view (arrays stay owned by the caller). */
static int shp_coll(PyObject *ov, PyObject *oo, PyObject *ol, const char *name,
                    PyArrayObject **keep, tsw_collection *c)
{
    keep[0] = shp_array(ov, NPY_FLOAT64, name, 0);
    keep[1] = keep[0] ? shp_array(oo, NPY_INT64, "offsets", 0) : NULL;
    keep[2] = keep[1] ? shp_array(ol, NPY_INT64, "lengths", 0) : NULL;
    if (!keep[2])
        return -1;
    npy_intp n = PyArray_DIM(keep[1], 0), rows = PyArray_DIM(keep[0], 0);
    if (PyArray_DIM(keep[2], 0) != n || n < 1) {
        PyErr_Format(PyExc_ValueError, "%s: offsets and lengths must have one entry per series",
                     name);
        return -1;
    }
    const int64_t *off = PyArray_DATA(keep[1]), *len = PyArray_DATA(keep[2]);
    for (npy_intp i = 0; i < n; ++i)
        if (off[i] < 0 || len[i] < 1 || off[i] > rows - len[i]) {
            PyErr_Format(PyExc_ValueError, "%s: series %zd lies outside the values", name,
                         (Py_ssize_t)i);
            return -1;
        }
    memset(c, 0, sizeof(*c));
    c->values = PyArray_DATA(keep[0]);
    c->offsets = off;
    c->lengths = len;
    c->count = (int64_t)n;
    return 0;
}

static int shp_exec(PyObject *device, PyObject *impl, PyObject *n_jobs, tsw_exec *ex)
{
    PyObject *slot[K_COUNT] = {0};
    int idx;
    slot[K_DEVICE] = device;
    slot[K_IMPL] = impl;
    slot[K_NJOBS] = n_jobs;
    return build_exec(slot, ex, &idx);
}

/* Runs the call with the GIL released and Ctrl-C able to cancel it; cb: None or a
 * callable(done, total) called about every 50 ms (tswarp/shapelets.py's progress). */
#define SHP_CALL(rc, ex, cb, call)                                                             \
    do {                                                                                       \
        progress_ctx ctx_ = {NULL, (cb) == Py_None ? NULL : (cb)};                            \
        (ex).progress = progress_trampoline;                                                   \
        (ex).progress_user = &ctx_;                                                            \
        ctx_.tstate = PyEval_SaveThread();                                                     \
        rc = call;                                                                             \
        PyEval_RestoreThread(ctx_.tstate);                                                     \
    } while (0)

static PyObject *shp_tuple(const tsw_shapelet *s)
{
    return Py_BuildValue("(LLLdddL)", (long long)s->series, (long long)s->start,
                         (long long)s->length, s->threshold, s->gain, s->gap,
                         (long long)s->dilation);
}

/* Shared by search and top: the collection, labels, params, subset and exec. */
typedef struct {
    PyArrayObject *keep[3], *labels, *subset, *partner;
    tsw_collection x;
    tsw_shapelet_params sp;
    tsw_exec ex;
} shp_args;

static void shp_args_free(shp_args *a)
{
    for (int k = 0; k < 3; ++k)
        Py_XDECREF(a->keep[k]);
    Py_XDECREF(a->labels);
    Py_XDECREF(a->subset);
    Py_XDECREF(a->partner);
}

static int shp_args_parse(shp_args *a, PyObject *values, PyObject *offsets, PyObject *lengths,
                          PyObject *labels, int n_classes, long long min_length,
                          long long max_length, long long step, PyObject *subset, int logic,
                          PyObject *partner, PyObject *device, PyObject *impl, PyObject *n_jobs,
                          long long dilation, int one_vs_rest, int raw)
{
    memset(a, 0, sizeof(*a));
    if (shp_coll(values, offsets, lengths, "X", a->keep, &a->x) < 0 ||
        !(a->labels = shp_array(labels, NPY_INT32, "labels", 0)))
        return -1;
    if (PyArray_DIM(a->labels, 0) != a->x.count) {
        PyErr_SetString(PyExc_ValueError, "labels must have one entry per series");
        return -1;
    }
    a->subset = shp_array(subset, NPY_INT64, "subset", 1);
    a->partner = shp_array(partner, NPY_FLOAT64, "partner", 1);
    if (PyErr_Occurred())
        return -1;
    int64_t ns = a->subset ? PyArray_DIM(a->subset, 0) : a->x.count;
    if (a->partner && PyArray_DIM(a->partner, 0) != ns) {
        PyErr_SetString(PyExc_ValueError, "partner must have one entry per searched series");
        return -1;
    }
    tsw_shapelet_params_default(&a->sp);
    a->sp.n_classes = n_classes;
    a->sp.min_length = min_length;
    a->sp.max_length = max_length;
    a->sp.length_step = step;
    a->sp.logic = (tsw_shapelet_logic)logic;
    a->sp.dilation = dilation;
    a->sp.one_vs_rest = one_vs_rest;
    a->sp.raw = raw;
    a->sp.partner = a->partner ? PyArray_DATA(a->partner) : NULL;
    return shp_exec(device, impl, n_jobs, &a->ex);
}

static const char *shp_kw[] = {"values", "offsets", "lengths", "labels", "n_classes",
                               "min_length", "max_length", "length_step", "subset", "logic",
                               "partner", "device", "_impl", "n_jobs", "k", "dilation",
                               "one_vs_rest", "raw", "progress", NULL};

static PyObject *py_shapelet_search(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *v, *o, *l, *lab, *sub = Py_None, *part = Py_None, *dev = Py_None,
                                *impl = NULL, *nj = Py_None, *cb = Py_None;
    int nc, logic = 0, ovr = 0, raw = 0;
    long long minl, maxl, step, k = 1, dil = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOiLLL|OiOOOOLLppO:_shapelet_search",
                                     (char **)shp_kw, &v, &o, &l, &lab, &nc, &minl, &maxl,
                                     &step, &sub, &logic, &part, &dev, &impl, &nj, &k, &dil,
                                     &ovr, &raw, &cb))
        return NULL;
    shp_args a;
    PyObject *result = NULL;
    if (shp_args_parse(&a, v, o, l, lab, nc, minl, maxl, step, sub, logic, part, dev, impl,
                       nj, dil, ovr, raw) == 0) {
        tsw_shapelet best;
        int rc;
        SHP_CALL(rc, a.ex, cb,
                 tsw_shapelet_search(&a.sp, TSW_F64, &a.x, PyArray_DATA(a.labels),
                                     a.subset ? PyArray_DATA(a.subset) : NULL,
                                     a.subset ? PyArray_DIM(a.subset, 0) : 0, &best, &a.ex));
        if (rc)
            raise_status(rc, "find_shapelet");
        else
            result = shp_tuple(&best);
    }
    shp_args_free(&a);
    return result;
}

static PyObject *py_shapelet_top(PyObject *self, PyObject *args, PyObject *kw)
{
    PyObject *v, *o, *l, *lab, *sub = Py_None, *part = Py_None, *dev = Py_None,
                                *impl = NULL, *nj = Py_None, *cb = Py_None;
    int nc, logic = 0, ovr = 0, raw = 0;
    long long minl, maxl, step, k = 1, dil = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOiLLL|OiOOOOLLppO:_shapelet_top",
                                     (char **)shp_kw, &v, &o, &l, &lab, &nc, &minl, &maxl,
                                     &step, &sub, &logic, &part, &dev, &impl, &nj, &k, &dil,
                                     &ovr, &raw, &cb))
        return NULL;
    if (k < 1 || k > (long long)(PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(tsw_shapelet))) {
        PyErr_Format(PyExc_ValueError, "n_shapelets must be a positive int, got %lld", k);
        return NULL;
    }
    shp_args a;
    PyObject *result = NULL;
    tsw_shapelet *out = NULL;
    if (shp_args_parse(&a, v, o, l, lab, nc, minl, maxl, step, sub, logic, part, dev, impl,
                       nj, dil, ovr, raw) == 0) {
        out = PyMem_Malloc((size_t)k * sizeof(tsw_shapelet));
        if (!out) {
            raise_too_big("n_shapelets: the shapelets' buffer", (double)k * sizeof(tsw_shapelet));
            goto done;
        }
        int64_t count = 0;
        int rc;
        SHP_CALL(rc, a.ex, cb,
                 tsw_shapelet_top(&a.sp, TSW_F64, &a.x, PyArray_DATA(a.labels),
                                  a.subset ? PyArray_DATA(a.subset) : NULL,
                                  a.subset ? PyArray_DIM(a.subset, 0) : 0, (int64_t)k, out,
                                  &count, &a.ex));
        if (rc) {
            raise_status(rc, "ShapeletTransform");
            goto done;
        }
        result = PyList_New((Py_ssize_t)count);
        for (int64_t i = 0; result && i < count; ++i) {
            PyObject *t = shp_tuple(&out[i]);
            if (!t)
                Py_CLEAR(result);
            else
                PyList_SET_ITEM(result, (Py_ssize_t)i, t);
        }
    }
done:
    PyMem_Free(out);
    shp_args_free(&a);
    return result;
}

static PyObject *py_shapelet_distances(PyObject *self, PyObject *args, PyObject *kw)
{
    static const char *kwl[] = {"shapelets", "shapelet_offsets", "shapelet_lengths", "values",
                                "offsets", "lengths", "device", "_impl", "n_jobs",
                                "thresholds", "dilations", "raw", "progress", NULL};
    PyObject *sv, *so, *sl, *v, *o, *l, *dev = Py_None, *impl = NULL, *nj = Py_None,
                                                  *th = Py_None, *di = Py_None, *rw = Py_None,
                                                  *cb = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOO|OOOOOOO:_shapelet_distances",
                                     (char **)kwl, &sv, &so, &sl, &v, &o, &l, &dev, &impl, &nj,
                                     &th, &di, &rw, &cb))
        return NULL;
    PyArrayObject *ks[3] = {0}, *kx[3] = {0}, *dist = NULL, *pos = NULL, *thr = NULL,
                  *cnt = NULL, *dil = NULL, *raw = NULL;
    PyObject *result = NULL;
    tsw_collection s, x;
    tsw_exec ex;
    if (shp_coll(sv, so, sl, "shapelets", ks, &s) < 0 || shp_coll(v, o, l, "X", kx, &x) < 0 ||
        shp_exec(dev, impl, nj, &ex) < 0)
        goto done;
    npy_intp dims[2] = {(npy_intp)x.count, (npy_intp)s.count};
    if (di != Py_None) { /* one dilation per shapelet (Python checks them) */
        dil = shp_array(di, NPY_INT64, "dilations", 0);
        if (!dil)
            goto done;
        if (PyArray_SIZE(dil) != (npy_intp)s.count) {
            PyErr_SetString(PyExc_ValueError, "dilations must hold one value per shapelet");
            goto done;
        }
    }
    if (rw != Py_None) { /* one raw flag (0 or 1) per shapelet (Python checks them) */
        raw = shp_array(rw, NPY_INT32, "raw", 0);
        if (!raw)
            goto done;
        if (PyArray_SIZE(raw) != (npy_intp)s.count) {
            PyErr_SetString(PyExc_ValueError, "raw must hold one value per shapelet");
            goto done;
        }
    }
    if (th != Py_None) { /* occurrences within these thresholds, one per shapelet */
        thr = (PyArrayObject *)PyArray_FROMANY(th, NPY_FLOAT64, 1, 1, NPY_ARRAY_CARRAY_RO);
        if (!thr)
            goto done;
        if (PyArray_SIZE(thr) != (npy_intp)s.count) {
            PyErr_Format(PyExc_ValueError, "thresholds must hold one value per shapelet (%lld), "
                         "got %lld", (long long)s.count, (long long)PyArray_SIZE(thr));
            goto done;
        }
        cnt = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_INT64);
        if (!cnt)
            goto done;
    }
    dist = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    pos = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_INT64);
    if (!dist || !pos)
        goto done;
    int rc;
    SHP_CALL(rc, ex, cb,
             tsw_shapelet_features_dilated(TSW_F64, &s, dil ? PyArray_DATA(dil) : NULL,
                                           raw ? PyArray_DATA(raw) : NULL,
                                           thr ? PyArray_DATA(thr) : NULL, &x,
                                           PyArray_DATA(dist), PyArray_DATA(pos),
                                           cnt ? PyArray_DATA(cnt) : NULL, &ex));
    if (rc) {
        if (rc == TSW_EPARAM)
            PyErr_SetString(PyExc_ValueError, dil || raw ? "thresholds must be finite and >= 0, "
                                                           "dilations >= 1, raw 0 or 1"
                                                         : "thresholds must be finite and >= 0");
        else
            raise_status(rc, "shapelet distances");
        goto done;
    }
    result = cnt ? Py_BuildValue("(OOO)", dist, pos, cnt) : Py_BuildValue("(OO)", dist, pos);
done:
    for (int k = 0; k < 3; ++k) {
        Py_XDECREF(ks[k]);
        Py_XDECREF(kx[k]);
    }
    Py_XDECREF(dist);
    Py_XDECREF(pos);
    Py_XDECREF(thr);
    Py_XDECREF(cnt);
    Py_XDECREF(dil);
    Py_XDECREF(raw);
    return result;
}

#define TSW_SHAPELET_METHODS                                                                   \
    {"_shapelet_search", (PyCFunction)(void (*)(void))py_shapelet_search,                      \
     METH_VARARGS | METH_KEYWORDS,                                                             \
     "_shapelet_search(values, offsets, lengths, labels, n_classes, min_length, max_length, "  \
     "length_step, subset=None, logic=0, partner=None, device=None, _impl='auto', "            \
     "n_jobs=None, k=1, dilation=1, one_vs_rest=False, raw=False, progress=None) -> (series, "\
     "start, length, "\
     "threshold, gain, gap, dilation)"},                                                       \
        {"_shapelet_top", (PyCFunction)(void (*)(void))py_shapelet_top,                        \
         METH_VARARGS | METH_KEYWORDS,                                                         \
         "_shapelet_top(..., k) -> [(series, start, length, threshold, gain, gap, dilation)], " \
         "best first, no two overlapping spans in a series"},                                  \
        {"_shapelet_distances", (PyCFunction)(void (*)(void))py_shapelet_distances,            \
         METH_VARARGS | METH_KEYWORDS,                                                         \
         "_shapelet_distances(shapelets, shapelet_offsets, shapelet_lengths, values, "         \
         "offsets, lengths, device=None, _impl='auto', n_jobs=None, thresholds=None, "        \
         "dilations=None, raw=None, progress=None) -> "                                        \
         "(dist (n, k), pos (n, k)[, count (n, k) of windows within thresholds])"},
