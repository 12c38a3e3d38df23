/* _bind_batch.h: collections and the batch calls: cdist, pdist, paired (included once by _tswarp.c, in order; one translation unit). */
#ifndef TSWARP__BIND_BATCH_H
#define TSWARP__BIND_BATCH_H

/* ---- collections ------------------------------------------------------------------------
 * A collection argument (X, Y, or timestamps tx, ty) is either one array (3-D (n, len, d)
 * or 2-D (n, len) for values; 2-D (n, len) for timestamps) or a sequence of series of any
 * lengths, which becomes the ragged layout: rows concatenated, int64 offsets and lengths. */
typedef struct {
    const char *name; /* "X", "Y", "tx", "ty" */
    int times;        /* series are 1-D timestamps (no dim axis) */
    int layout;       /* LAYOUT_* of the values (not used for timestamps) */
    /* inspected */
    PyArrayObject *whole;  /* the one-array form */
    PyArrayObject **items; /* the sequence form: n arrays */
    int64_t n, length, dim, rows;
    int64_t *lengths; /* sequence form (n,) */
    int dclass;       /* TSW_F32 or TSW_F64 */
    /* materialized */
    PyArrayObject *buf; /* contiguous rows, computation dtype */
    int64_t *offsets;   /* sequence form (n,) */
} coll;

static void coll_free(coll *c)
{
    Py_CLEAR(c->whole);
    if (c->items) {
        for (int64_t i = 0; i < c->n; ++i)
            Py_XDECREF(c->items[i]);
        PyMem_Free(c->items);
        c->items = NULL;
    }
    PyMem_Free(c->lengths);
    PyMem_Free(c->offsets);
    c->lengths = c->offsets = NULL;
    Py_CLEAR(c->buf);
}

static int64_t coll_len(const coll *c, int64_t i) { return c->lengths ? c->lengths[i] : c->length; }
static int64_t coll_off(const coll *c, int64_t i) { return c->offsets ? c->offsets[i] : i * c->length; }

static int is_sequence_form(PyObject *o)
{
    if (PyList_Check(o) || PyTuple_Check(o))
        return 1;
    /* A 1-D object array is how pandas/sktime hold series of different lengths. */
    return PyArray_Check(o) && PyArray_TYPE((PyArrayObject *)o) == NPY_OBJECT &&
           PyArray_NDIM((PyArrayObject *)o) == 1;
}

static const char *coll_hint(const coll *c)
{
    return c->times ? "a 2-D array (n, len) or a list of 1-D arrays"
                    : "a 2-D array (n, len) of univariate series, a 3-D array (n, len, d) or "
                      "a list of (len,) or (len, d) series";
}

/* Look at the argument: shapes, dim and precision, without converting values yet. */
static int coll_inspect(PyObject *o, coll *c)
{
    if (!is_sequence_form(o)) {
        PyArrayObject *a = as_array(o, c->name, -1);
        if (!a)
            return -1;
        c->whole = a;
        if ((c->dclass = dtype_class(a, c->name, -1)) < 0)
            return -1;
        if (!c->times && apply_layout(&c->whole, c->name, c->layout, 3) < 0)
            return -1;
        a = c->whole;
        int nd = PyArray_NDIM(a);
        if (nd != 2 && (c->times || nd != 3)) {
            PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
            PyErr_Format(PyExc_ValueError, "%s must be %s; got an array of shape %S%s", c->name,
                         coll_hint(c), shape ? shape : Py_None,
                         nd == 1 && !c->times ? " (for one series pass [x] or x[None])" : "");
            Py_XDECREF(shape);
            return -1;
        }
        c->n = PyArray_DIM(a, 0);
        c->length = PyArray_DIM(a, 1);
        c->dim = nd == 3 ? PyArray_DIM(a, 2) : 1;
        if (c->n == 0) {
            PyErr_Format(PyExc_ValueError, "%s is empty (no series)", c->name);
            return -1;
        }
        if (c->length == 0) {
            PyErr_Format(PyExc_ValueError, "%s holds empty series (length 0)", c->name);
            return -1;
        }
        if (c->dim == 0) {
            PyErr_Format(PyExc_ValueError, "%s has dimension 0", c->name);
            return -1;
        }
        c->rows = c->n * c->length;
        return 0;
    }

    PyObject *seq = PySequence_Fast(o, c->name);
    if (!seq)
        return -1;
    int rc = -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n == 0) {
        PyErr_Format(PyExc_ValueError, "%s is empty (no series)", c->name);
        goto out;
    }
    c->n = n;
    c->items = PyMem_Calloc((size_t)n, sizeof(PyArrayObject *));
    c->lengths = PyMem_Malloc((size_t)n * sizeof(int64_t));
    if (!c->items || !c->lengths) {
        PyErr_NoMemory();
        goto out;
    }
    c->dclass = TSW_F32;
    c->rows = 0;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyArrayObject *a = as_array(PySequence_Fast_GET_ITEM(seq, i), c->name, i);
        if (!a)
            goto out;
        c->items[i] = a;
        int cl = dtype_class(a, c->name, i);
        if (cl < 0)
            goto out;
        if (!c->times && PyArray_NDIM(a) == 2 && c->layout != LAYOUT_LAST) {
            char label[64];
            PyOS_snprintf(label, sizeof(label), "%s[%zd]", c->name, i);
            if (apply_layout(&c->items[i], label, c->layout, 2) < 0)
                goto out;
            a = c->items[i];
        }
        if (cl == TSW_F64)
            c->dclass = TSW_F64;
        int nd = PyArray_NDIM(a);
        if (nd != 1 && (c->times || nd != 2)) {
            PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
            PyErr_Format(PyExc_ValueError, "%s[%zd] must be %s; got shape %S", c->name, i,
                         c->times ? "1-D (len,)" : "one series (len,) or (len, d)",
                         shape ? shape : Py_None);
            Py_XDECREF(shape);
            goto out;
        }
        int64_t len = PyArray_DIM(a, 0), d = nd == 2 ? PyArray_DIM(a, 1) : 1;
        if (len == 0) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] is empty", c->name, i);
            goto out;
        }
        if (d == 0) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] has dimension 0", c->name, i);
            goto out;
        }
        if (i == 0)
            c->dim = d;
        else if (d != c->dim) {
            PyErr_Format(PyExc_ValueError, "%s[%zd] has dimension %lld but %s[0] has dimension %lld",
                         c->name, i, (long long)d, c->name, (long long)c->dim);
            goto out;
        }
        c->lengths[i] = len;
        if (c->rows > INT64_MAX - len) {
            raise_too_big(c->name, -1);
            goto out;
        }
        c->rows += len;
    }
    rc = 0;
out:
    Py_DECREF(seq);
    return rc;
}

/* Convert to the computation dtype: one contiguous buffer of rows x dim values. */
static int coll_materialize(coll *c, tsw_dtype dt)
{
    if (c->whole) {
        if (to_dtype(&c->whole, dt) < 0)
            return -1;
        c->buf = c->whole;
        c->whole = NULL;
        return 0;
    }
    const size_t esz = dt == TSW_F32 ? 4 : 8;
    if (c->rows > (int64_t)(PY_SSIZE_T_MAX / (Py_ssize_t)esz) / c->dim) {
        raise_too_big(c->name, (double)c->rows * (double)c->dim * (double)esz);
        return -1;
    }
    npy_intp count = (npy_intp)(c->rows * c->dim);
    c->buf = (PyArrayObject *)PyArray_SimpleNew(1, &count, dt == TSW_F32 ? NPY_FLOAT32
                                                                         : NPY_FLOAT64);
    c->offsets = PyMem_Malloc((size_t)c->n * sizeof(int64_t));
    if (!c->buf || !c->offsets) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    char *dst = PyArray_DATA(c->buf);
    int64_t row = 0;
    for (int64_t i = 0; i < c->n; ++i) {
        if (to_dtype(&c->items[i], dt) < 0)
            return -1;
        size_t bytes = (size_t)c->lengths[i] * (size_t)c->dim * esz;
        memcpy(dst + (size_t)row * (size_t)c->dim * esz, PyArray_DATA(c->items[i]), bytes);
        Py_CLEAR(c->items[i]); /* free copies as we go: peak memory ~ one extra series */
        c->offsets[i] = row;
        row += c->lengths[i];
    }
    return 0;
}

/* tx must describe the same series as X: same count, same lengths. */
static int coll_times_match(const coll *t, const coll *x)
{
    if (t->n != x->n) {
        PyErr_Format(PyExc_ValueError, "%s holds %lld series but %s holds %lld", t->name,
                     (long long)t->n, x->name, (long long)x->n);
        return -1;
    }
    for (int64_t i = 0; i < x->n; ++i)
        if (coll_len(t, i) != coll_len(x, i)) {
            PyErr_Format(PyExc_ValueError, "%s[%lld] has length %lld but %s[%lld] has length %lld",
                         t->name, (long long)i, (long long)coll_len(t, i), x->name, (long long)i,
                         (long long)coll_len(x, i));
            return -1;
        }
    return 0;
}

static void coll_view(const coll *c, const coll *t, tsw_collection *v)
{
    memset(v, 0, sizeof(*v));
    v->values = PyArray_DATA(c->buf);
    v->offsets = c->offsets;
    v->lengths = c->lengths;
    v->length = c->length;
    v->count = c->n;
    v->times = t && t->buf ? PyArray_DATA(t->buf) : NULL;
}

/* After TSW_ENONFINITE / TSW_ETIMES: find the culprit series and say so. 1 when found. */
static int coll_diagnose(int rc, const coll *c, const coll *t, tsw_dtype dt)
{
    const size_t esz = dt == TSW_F32 ? 4 : 8;
    if (rc == TSW_ENONFINITE) {
        const char *v = PyArray_DATA(c->buf);
        for (int64_t i = 0; i < c->n; ++i) {
            int64_t off = coll_off(c, i), len = coll_len(c, i);
            if (first_nonfinite(v + (size_t)off * (size_t)c->dim * esz, dt, len * c->dim) >= 0) {
                PyErr_Format(PyExc_ValueError, "%s[%lld] contains NaN or infinity", c->name,
                             (long long)i);
                return 1;
            }
        }
    } else if (rc == TSW_ETIMES && t && t->buf) {
        const char *v = PyArray_DATA(t->buf);
        for (int64_t i = 0; i < c->n; ++i) {
            char label[64];
            PyOS_snprintf(label, sizeof(label), "%s[%lld]", t->name, (long long)i);
            if (check_times(v + (size_t)coll_off(c, i) * esz, dt, coll_len(c, i), label) < 0)
                return 1;
        }
    }
    return 0;
}

/* progress: False/None (no display), True (a bar on stderr), or callable(done, total).
 * *bar gets a new reference to the callable to use, or NULL. */
static int progress_callable(PyObject *o, const char *fname, PyObject **bar)
{
    *bar = NULL;
    if (!o || o == Py_None || o == Py_False)
        return 0;
    if (o == Py_True) {
        PyObject *mod = PyImport_ImportModule("tswarp._progress");
        if (!mod)
            return -1;
        *bar = PyObject_CallMethod(mod, "ProgressBar", "s", fname);
        Py_DECREF(mod);
        return *bar ? 0 : -1;
    }
    if (PyCallable_Check(o)) {
        Py_INCREF(o);
        *bar = o;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "progress must be a bool or a callable(done, total), got %s",
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* Close a bar created for progress=True (final newline), keeping any pending exception. */
static void progress_close(PyObject *bar)
{
    if (!bar)
        return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyObject_HasAttrString(bar, "close")) {
        PyObject *r = PyObject_CallMethod(bar, "close", NULL);
        if (!r) {
            if (type) /* the original error matters more */
                PyErr_Clear();
            else
                return; /* report close()'s own error */
        }
        Py_XDECREF(r);
    }
    PyErr_Restore(type, value, tb);
}

/* ---- cdist / pdist ------------------------------------------------------------------------ */

static const signature sig_cdist = {"cdist", 2, 1, {K_X, K_Y},
                                    (M_ALL & ~(BIT(K_TA) | BIT(K_TB))) | M_BATCH};
static const signature sig_paired = {"paired", 2, 2, {K_X, K_Y},
                                     (M_ALL & ~(BIT(K_TA) | BIT(K_TB))) | M_BATCH};
static const signature sig_pdist = {"pdist", 1, 1, {K_X},
                                    (M_ALL & ~(BIT(K_TA) | BIT(K_TB) | BIT(K_TY))) | M_BATCH |
                                        BIT(K_CONDENSED)};

/* A collection of a batch plan: (values_ptr, times_ptr, count, length, offsets, lengths)
 * with offsets/lengths None or host int64 arrays of count elements (kept alive by the plan). */
static int coll_from_desc(PyObject *d, tsw_collection *c)
{
    unsigned long long v, t;
    long long count, length;
    PyObject *offs, *lens;
    memset(c, 0, sizeof(*c));
    if (!PyArg_ParseTuple(d, "KKLLOO", &v, &t, &count, &length, &offs, &lens))
        return -1;
    c->values = (const void *)(uintptr_t)v;
    c->times = t ? (const void *)(uintptr_t)t : NULL;
    c->count = count;
    c->length = length;
    PyObject *arrs[2] = {offs, lens};
    const int64_t **dst[2] = {&c->offsets, &c->lengths};
    for (int k = 0; k < 2; ++k) {
        if (arrs[k] == Py_None)
            continue;
        PyArrayObject *a = (PyArrayObject *)arrs[k];
        if (!PyArray_Check(arrs[k]) || PyArray_TYPE(a) != NPY_INT64 || !PyArray_ISCARRAY_RO(a) ||
            PyArray_SIZE(a) != count) {
            PyErr_SetString(PyExc_SystemError, "tswarp._gpu returned malformed offsets");
            return -1;
        }
        *dst[k] = PyArray_DATA(a);
    }
    return 0;
}

/* cdist/pdist of GPU arrays; *handled as in pair_compute_gpu. */
static PyObject *batch_compute_gpu(const char *fname, PyObject **slot, const tsw_params *prm,
                                   tsw_exec *ex, int explicit_index, int is_pdist,
                                   int condensed, int paired, int layout, PyObject *bar,
                                   int *handled)
{
    int twed = prm->measure == TSW_TWED;
    PyObject *tx = twed && given(slot[K_TX]) ? slot[K_TX] : Py_None;
    PyObject *ty = twed && !is_pdist && given(slot[K_TY]) ? slot[K_TY] : Py_None;
    *handled = 1;
    PyObject *r = gpu_call("batch_plan", "(sOOOOiiiiii)", fname, slot[K_X],
                           is_pdist ? Py_None : slot[K_Y], tx, ty, paired ? 2 : is_pdist,
                           condensed, (int)ex->device, explicit_index, cuda_count(), layout);
    if (!r)
        return NULL;
    if (r == Py_None) {
        Py_DECREF(r);
        *handled = 0;
        return NULL;
    }
    PyObject *result = NULL, *ws = NULL;
    gpu_plan g;
    tsw_collection cx, cy;
    if (gpu_plan_parse(r, &g) < 0 || coll_from_desc(g.xdesc, &cx) < 0 ||
        (!is_pdist && coll_from_desc(g.ydesc, &cy) < 0))
        goto done;
    ex->device_index = g.device;
    ex->cuda_stream = (void *)(uintptr_t)g.stream;
    ex->cuda_async = 1; /* stream-ordered, as the array library's own operations */
    tsw_dtype dt = (tsw_dtype)g.dtype;
    tsw_pdist_layout playout = condensed ? TSW_PDIST_CONDENSED : TSW_PDIST_FULL;
    size_t bytes = 0;
    int rc = is_pdist ? tsw_pdist_workspace_size(prm, dt, g.dim, &cx, playout, ex, &bytes)
             : paired ? tsw_paired_workspace_size(prm, dt, g.dim, &cx, &cy, ex, &bytes)
                      : tsw_cdist_workspace_size(prm, dt, g.dim, &cx, &cy, ex, &bytes);
    if (gpu_workspace(&g, rc, bytes, ex, &ws) < 0)
        goto done;
    void *out = (void *)(uintptr_t)g.out_ptr;
    progress_ctx ctx = {NULL, bar};
    ex->progress = progress_trampoline;
    ex->progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    if (is_pdist)
        rc = tsw_pdist_device(prm, dt, g.dim, &cx, playout, out, ex);
    else if (paired)
        rc = tsw_paired_device(prm, dt, g.dim, &cx, &cy, out, ex);
    else
        rc = tsw_cdist_device(prm, dt, g.dim, &cx, &cy, out, ex);
    const char *detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
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

/* is_pdist: all pairs of X; paired: X[k] with Y[k]; else cdist. */
static PyObject *batch_compute(const char *fname, PyObject **slot, int is_pdist, int condensed,
                               int paired)
{
    tsw_measure m;
    tsw_params prm;
    tsw_exec ex;
    coll x = {.name = "X"}, y = {.name = "Y"}, tx = {.name = "tx", .times = 1},
         ty = {.name = "ty", .times = 1};
    PyObject *bar = NULL;
    PyArrayObject *out = NULL;
    PyObject *result = NULL;
    int rc, explicit_index, layout;

    if (given(slot[K_METRIC]) && !PyUnicode_Check(slot[K_METRIC]) &&
        PyCallable_Check(slot[K_METRIC])) {
        if (callable_metric_check(fname, slot) < 0 || build_exec(slot, &ex, &explicit_index) < 0)
            return NULL;
        PyObject *mod = callable_metric_module();
        if (!mod)
            return NULL;
        PyObject *r = PyObject_CallMethod(
            mod, "batch", "OOOiO{}OOs", slot[K_METRIC], slot[K_X],
            slot[K_Y] ? slot[K_Y] : Py_None, paired ? 2 : is_pdist ? 1 : 0,
            condensed ? Py_True : Py_False, slot[K_LAYOUT] ? slot[K_LAYOUT] : Py_None,
            slot[K_PROGRESS] ? slot[K_PROGRESS] : Py_False, fname);
        Py_DECREF(mod);
        return r;
    }
    if (parse_metric(slot[K_METRIC], &m) < 0 || build_params(m, fname, slot, &prm) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 || parse_layout(slot[K_LAYOUT], &layout) < 0)
        return NULL;
    x.layout = y.layout = layout;
    if (is_pdist && given(slot[K_TY])) {
        PyErr_Format(PyExc_ValueError, "%s(): ty is given but Y is None", fname);
        return NULL;
    }
    if (progress_callable(slot[K_PROGRESS], fname, &bar) < 0)
        return NULL;
    if (coll_maybe_gpu(slot[K_X]) || (!is_pdist && coll_maybe_gpu(slot[K_Y])) ||
        (m == TSW_TWED && (coll_maybe_gpu(slot[K_TX]) || (!is_pdist && coll_maybe_gpu(slot[K_TY]))))) {
        int handled;
        result = batch_compute_gpu(fname, slot, &prm, &ex, explicit_index, is_pdist, condensed,
                                   paired, layout, bar, &handled);
        if (handled)
            goto done;
    }
    if (coll_inspect(slot[K_X], &x) < 0)
        goto done;
    if (!is_pdist) {
        if (coll_inspect(slot[K_Y], &y) < 0)
            goto done;
        if (x.dim != y.dim) {
            PyErr_Format(PyExc_ValueError, "X has dimension %lld but Y has dimension %lld",
                         (long long)x.dim, (long long)y.dim);
            goto done;
        }
    }
    tsw_dtype dt = (x.dclass == TSW_F32 && (is_pdist || y.dclass == TSW_F32)) ? TSW_F32 : TSW_F64;
    if (m == TSW_TWED) {
        if (given(slot[K_TX]) && (coll_inspect(slot[K_TX], &tx) < 0 || coll_times_match(&tx, &x) < 0))
            goto done;
        if (!is_pdist && given(slot[K_TY]) &&
            (coll_inspect(slot[K_TY], &ty) < 0 || coll_times_match(&ty, &y) < 0))
            goto done;
    }

    /* Output first: a matrix too large for memory fails before any copying. */
    const size_t esz = dt == TSW_F32 ? 4 : 8;
    npy_intp dims[2];
    int ndim = 2;
    if (is_pdist) {
        int64_t n = x.n;
        if (n > 3037000499LL) {
            raise_too_big("the distance matrix", (double)n * (double)n * (double)esz);
            goto done;
        }
        if (condensed) {
            ndim = 1;
            dims[0] = (npy_intp)(n * (n - 1) / 2);
        } else {
            dims[0] = dims[1] = (npy_intp)n;
        }
    } else if (paired) {
        if (x.n != y.n) {
            PyErr_Format(PyExc_ValueError,
                         "%s(): X has %lld series but Y has %lld: paired() needs as many of each",
                         fname, (long long)x.n, (long long)y.n);
            goto done;
        }
        ndim = 1;
        dims[0] = (npy_intp)x.n;
    } else {
        dims[0] = (npy_intp)x.n;
        dims[1] = (npy_intp)y.n;
        if (x.n > (int64_t)(PY_SSIZE_T_MAX / (Py_ssize_t)esz) / y.n) {
            raise_too_big("the distance matrix", (double)x.n * (double)y.n * (double)esz);
            goto done;
        }
    }
    out = (PyArrayObject *)PyArray_SimpleNew(ndim, dims, dt == TSW_F32 ? NPY_FLOAT32 : NPY_FLOAT64);
    if (!out)
        goto done;

    if (coll_materialize(&x, dt) < 0 || (!is_pdist && coll_materialize(&y, dt) < 0))
        goto done;
    if ((tx.whole || tx.items) && coll_materialize(&tx, dt) < 0)
        goto done;
    if ((ty.whole || ty.items) && coll_materialize(&ty, dt) < 0)
        goto done;

    tsw_collection cx, cy;
    coll_view(&x, &tx, &cx);
    if (!is_pdist)
        coll_view(&y, &ty, &cy);
    /* Always installed, even without a display, so Ctrl-C stops a long call. */
    progress_ctx ctx = {NULL, bar};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    if (is_pdist)
        rc = tsw_pdist(&prm, dt, x.dim, &cx, condensed ? TSW_PDIST_CONDENSED : TSW_PDIST_FULL,
                       PyArray_DATA(out), &ex);
    else if (paired)
        rc = tsw_paired(&prm, dt, x.dim, &cx, &cy, PyArray_DATA(out), &ex);
    else
        rc = tsw_cdist(&prm, dt, x.dim, &cx, &cy, PyArray_DATA(out), &ex);
    PyEval_RestoreThread(ctx.tstate);

    if (rc != TSW_OK) {
        if (!coll_diagnose(rc, &x, &tx, dt) && (is_pdist || !coll_diagnose(rc, &y, &ty, dt)))
            raise_status(rc, fname);
        goto done;
    }
    result = (PyObject *)out;
    out = NULL;
done:
    progress_close(bar);
    Py_XDECREF(bar);
    Py_XDECREF(out);
    coll_free(&x);
    coll_free(&y);
    coll_free(&tx);
    coll_free(&ty);
    return result;
}

static PyObject *py_cdist(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_cdist, args, nargs, kwnames, slot) < 0)
        return NULL;
    /* All pairs of one collection go through pdist: each unordered pair computed once. */
    return batch_compute("cdist", slot, !given(slot[K_Y]), 0, 0);
}

static PyObject *py_pdist(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    int condensed = 0;
    if (parse_call(&sig_pdist, args, nargs, kwnames, slot) < 0)
        return NULL;
    if (slot[K_CONDENSED] && get_bool(slot[K_CONDENSED], "condensed", &condensed) < 0)
        return NULL;
    return batch_compute("pdist", slot, 1, condensed, 0);
}

static PyObject *py_paired(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_paired, args, nargs, kwnames, slot) < 0)
        return NULL;
    return batch_compute("paired", slot, 0, 0, 1);
}

#define DOC_COLLECTION(name)                                                                \
    name " : array_like or list of array_like\n"                                            \
    "    A collection of series: a 3-D array (n, len, d), a 2-D array (n, len) of\n"        \
    "    univariate series, or a list of series of any lengths, each (len_i,) or\n"        \
    "    (len_i, d) (with layout='channels_first': (n, d, len) and (d, len_i)). CuPy\n"   \
    "    arrays and PyTorch CUDA tensors (or lists of them, concatenated on the device)\n" \
    "    are used in place on their GPU.\n"

#define DOC_BATCH                                                                           \
    "metric : str or callable, default 'dtw'\n"                                             \
    "    The measure, one of tswarp.METRICS (its parameters as keywords, as in the\n"        \
    "    function of that name).\n"                                                          \
    "n_jobs : int, optional\n"                                                               \
    "    Threads; None or -1 use all cores.\n"                                               \
    "progress : bool or callable, default False\n"                                           \
    "    True draws a progress bar on stderr; a callable is called as\n"                     \
    "    progress(done, total) about every 50 ms (raising from it cancels the call).\n"     \
    "    Ctrl-C interrupts the computation with KeyboardInterrupt either way.\n"             \
    DOC_DEVICE                                                                              \
    DOC_LAYOUT("(n, len, d)", "(n, d, len)")

PyDoc_STRVAR(cdist_doc,
"cdist($module, /, X, Y=None, *, metric='dtw', n_jobs=None, progress=False,\n"
"    device='auto', layout=None, tx=None, ty=None, **params)\n"
"--\n\n"
"Distances between every series of X and every series of Y.\n\n"
"Parameters\n"
"----------\n"
DOC_COLLECTION("X")
DOC_COLLECTION("Y")
"    None: all pairs of X (computed once per unordered pair through :func:`pdist`).\n"
DOC_BATCH
"tx, ty : array_like or list of array_like, optional\n"
"    TWED timestamps of X and Y, shaped like X and Y without the dimension axis.\n"
"**params\n"
"    Parameters of the metric, as in :func:`dtw`, :func:`twed`, :func:`soft_dtw`.\n\n"
"Returns\n"
"-------\n"
"ndarray, shape (len(X), len(Y))\n"
"    float32 when every series is float32, else float64. For GPU inputs, an array of\n"
"    their library (CuPy array, torch tensor) on their GPU.\n\n"
DOC_RAISES
"KeyboardInterrupt\n"
"    On Ctrl-C during the computation.\n\n"
"Examples\n"
"--------\n"
">>> import numpy as np, tswarp\n"
">>> X = [np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0])]\n"
">>> tswarp.cdist(X, [np.array([0.0, 1.0, 2.0])], metric='dtw')\n"
"array([[0.],\n"
"       [1.]])\n");

PyDoc_STRVAR(paired_doc,
"paired($module, /, X, Y, *, metric='dtw', n_jobs=None, progress=False,\n"
"    device='auto', layout=None, tx=None, ty=None, **params)\n"
"--\n\n"
"Distances between X[k] and Y[k] for every k: a batch of pairs, as a batched loss takes\n"
"them (pytorch-softdtw-cuda's (B, N, d) against (B, M, d)).\n\n"
"Parameters\n"
"----------\n"
DOC_COLLECTION("X")
DOC_COLLECTION("Y")
"    As many series as X (else ValueError).\n"
DOC_BATCH
"tx, ty : array_like or list of array_like, optional\n"
"    TWED timestamps of X and Y, shaped like X and Y without the dimension axis.\n"
"**params\n"
"    Parameters of the metric, as in :func:`dtw`, :func:`twed`, :func:`soft_dtw`.\n\n"
"Returns\n"
"-------\n"
"ndarray, shape (len(X),)\n"
"    float32 when every series is float32, else float64. For GPU inputs, an array of\n"
"    their library (CuPy array, torch tensor) on their GPU.\n\n"
DOC_RAISES
"\n"
"Examples\n"
"--------\n"
">>> import numpy as np, tswarp\n"
">>> X = np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 2.0]])\n"
">>> tswarp.paired(X, X[::-1], metric='dtw')\n"
"array([1., 1.])\n");

PyDoc_STRVAR(pdist_doc,
"pdist($module, /, X, *, metric='dtw', condensed=False, n_jobs=None, progress=False,\n"
"    device='auto', layout=None, tx=None, **params)\n"
"--\n\n"
"Distances between all pairs of one collection, each unordered pair computed once.\n\n"
"Parameters\n"
"----------\n"
DOC_COLLECTION("X")
DOC_BATCH
"condensed : bool, default False\n"
"    Return scipy's condensed vector (pairs i < j in row order) instead of the\n"
"    full symmetric matrix.\n"
"tx : array_like or list of array_like, optional\n"
"    TWED timestamps of X, shaped like X without the dimension axis.\n"
"**params\n"
"    Parameters of the metric, as in :func:`dtw`, :func:`twed`, :func:`soft_dtw`.\n\n"
"Returns\n"
"-------\n"
"ndarray, shape (n, n) or (n * (n - 1) // 2,)\n"
"    float32 when every series is float32, else float64. The diagonal of the full\n"
"    matrix is d(x_i, x_i): 0 except for soft-DTW without normalize. For GPU inputs,\n"
"    an array of their library (CuPy array, torch tensor) on their GPU.\n\n"
DOC_RAISES
"KeyboardInterrupt\n"
"    On Ctrl-C during the computation.\n\n"
"Examples\n"
"--------\n"
">>> import numpy as np, tswarp\n"
">>> tswarp.pdist(np.array([[0.0, 1.0], [0.0, 2.0], [0.0, 1.0]]), condensed=True)\n"
"array([1., 0., 1.])\n");

#define TSW_BATCH_METHODS                                                                     \
    FASTKW("cdist", py_cdist, cdist_doc), FASTKW("pdist", py_pdist, pdist_doc),               \
        FASTKW("paired", py_paired, paired_doc),

#endif
