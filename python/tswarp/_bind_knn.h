/* _bind_knn.h: nearest neighbours: _knn, _lower_bound, _envelope, _search (included once by _tswarp.c, in order; one translation unit). The public functions and their documentation are tswarp/neighbors.py's. */
#ifndef TSWARP__BIND_KNN_H
#define TSWARP__BIND_KNN_H

#define M_DTWONLY (M_WINDOWS | BIT(K_COST) | BIT(K_ACCUMULATED))
static const signature sig_knn = {"knn", 2, 2, {K_X, K_Y},
                                  (M_ALL & ~(BIT(K_TA) | BIT(K_TB))) | M_BATCH | BIT(K_K)};
static const signature sig_lb = {"lower_bound", 2, 2, {K_QUERY, K_X},
                                 M_DTWONLY | BIT(K_BOUND) | BIT(K_BANDS) | BIT(K_NJOBS) |
                                     BIT(K_LAYOUT)};
static const signature sig_env = {"envelope", 1, 1, {K_A},
                                  M_WINDOWS | BIT(K_LENGTH) | BIT(K_AS_B) | BIT(K_LAYOUT)};
static const signature sig_search = {"search", 2, 2, {K_QUERY, K_SERIES},
                                     M_DTWONLY | BIT(K_K) | BIT(K_ZNORM) | BIT(K_EXCLUSION) |
                                         BIT(K_NJOBS) | BIT(K_PROGRESS) | BIT(K_LAYOUT) |
                                         BIT(K_DEVICE)};

/* exec for the CPU-only calls: threads from n_jobs */
static int cpu_exec(PyObject **slot, tsw_exec *ex)
{
    int explicit_index;
    PyObject *sub[K_COUNT] = {0};
    sub[K_NJOBS] = slot[K_NJOBS];
    return build_exec(sub, ex, &explicit_index);
}

static PyObject *py_knn(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_measure m;
    tsw_params prm;
    tsw_exec ex;
    coll q = {.name = "Q"}, x = {.name = "X"}, tq = {.name = "tx", .times = 1},
         tx = {.name = "ty", .times = 1};
    PyObject *bar = NULL, *result = NULL;
    PyArrayObject *dist = NULL, *idx = NULL;
    int rc, explicit_index, layout;
    long long k = 1;
    if (parse_call(&sig_knn, args, nargs, kwnames, slot) < 0)
        return NULL;
    if (given(slot[K_METRIC]) && !PyUnicode_Check(slot[K_METRIC])) {
        PyErr_SetString(PyExc_TypeError,
                        "knn(): metric must be 'dtw', 'twed' or 'soft_dtw' (a callable metric "
                        "has no pruning here: use cdist and argsort)");
        return NULL;
    }
    if (parse_metric(slot[K_METRIC], &m) < 0 || build_params(m, "knn", slot, &prm) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 || parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        get_positive_int(slot[K_K], "k", &k) < 0)
        return NULL;
    q.layout = x.layout = layout;
    if (progress_callable(slot[K_PROGRESS], "knn", &bar) < 0)
        return NULL;
    if (coll_inspect(slot[K_X], &q) < 0 || coll_inspect(slot[K_Y], &x) < 0)
        goto done;
    if (q.dim != x.dim) {
        PyErr_Format(PyExc_ValueError, "Q has dimension %lld but X has dimension %lld",
                     (long long)q.dim, (long long)x.dim);
        goto done;
    }
    if (k > x.n) {
        PyErr_Format(PyExc_ValueError, "knn(): k = %lld but X holds %lld series", k,
                     (long long)x.n);
        goto done;
    }
    tsw_dtype dt = (q.dclass == TSW_F32 && x.dclass == TSW_F32) ? TSW_F32 : TSW_F64;
    if (m == TSW_TWED) {
        if (given(slot[K_TX]) && (coll_inspect(slot[K_TX], &tq) < 0 || coll_times_match(&tq, &q) < 0))
            goto done;
        if (given(slot[K_TY]) && (coll_inspect(slot[K_TY], &tx) < 0 || coll_times_match(&tx, &x) < 0))
            goto done;
    }
    if (q.n > (int64_t)(PY_SSIZE_T_MAX / 16) / (int64_t)k) {
        raise_too_big("the neighbours", (double)q.n * (double)k * 16.0);
        goto done;
    }
    npy_intp dims[2] = {(npy_intp)q.n, (npy_intp)k};
    dist = (PyArrayObject *)PyArray_SimpleNew(2, dims, dt == TSW_F32 ? NPY_FLOAT32 : NPY_FLOAT64);
    idx = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_INT64);
    if (!dist || !idx)
        goto done;
    if (coll_materialize(&q, dt) < 0 || coll_materialize(&x, dt) < 0)
        goto done;
    if ((tq.whole || tq.items) && coll_materialize(&tq, dt) < 0)
        goto done;
    if ((tx.whole || tx.items) && coll_materialize(&tx, dt) < 0)
        goto done;
    tsw_collection cq, cx;
    coll_view(&q, &tq, &cq);
    coll_view(&x, &tx, &cx);
    progress_ctx ctx = {NULL, bar};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    rc = tsw_knn(&prm, dt, q.dim, &cq, &cx, (int64_t)k, PyArray_DATA(dist), PyArray_DATA(idx),
                 &ex);
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        if (!coll_diagnose(rc, &q, &tq, dt) && !coll_diagnose(rc, &x, &tx, dt))
            raise_status(rc, "knn");
        goto done;
    }
    result = Py_BuildValue("(OO)", dist, idx);
done:
    progress_close(bar);
    Py_XDECREF(bar);
    Py_XDECREF(dist);
    Py_XDECREF(idx);
    coll_free(&q);
    coll_free(&x);
    coll_free(&tq);
    coll_free(&tx);
    return result;
}

/* An int argument in [lo, hi] (bool refused); None leaves *out alone. */
/* One series argument: an array of the computation dtype, its length and dim. */
static int one_series(PyObject *o, const char *name, int layout, PyArrayObject **a,
                      int *dclass, int64_t *len, int64_t *dim)
{
    if (!(*a = as_array(o, name, -1)) || apply_layout(a, name, layout, 2) < 0)
        return -1;
    if ((*dclass = dtype_class(*a, name, -1)) < 0)
        return -1;
    return series_shape(*a, name, len, dim);
}

static PyObject *py_lower_bound(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_params prm;
    tsw_exec ex;
    PyArrayObject *qa = NULL, *out = NULL;
    PyObject *result = NULL;
    coll x = {.name = "X"};
    int layout, qclass;
    long long bound = 0, bands = 5;
    int64_t n, dim;
    if (parse_call(&sig_lb, args, nargs, kwnames, slot) < 0 ||
        build_params(TSW_DTW, "lower_bound", slot, &prm) < 0 || cpu_exec(slot, &ex) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        get_int_range(slot[K_BOUND], "bound", 0, 5, &bound) < 0 ||
        get_int_range(slot[K_BANDS], "bands", 1, LLONG_MAX, &bands) < 0)
        return NULL;
    x.layout = layout;
    if (one_series(slot[K_QUERY], "query", layout, &qa, &qclass, &n, &dim) < 0 ||
        coll_inspect(slot[K_X], &x) < 0)
        goto done;
    if (dim != x.dim) {
        PyErr_Format(PyExc_ValueError, "query has dimension %lld but X has dimension %lld",
                     (long long)dim, (long long)x.dim);
        goto done;
    }
    tsw_dtype dt = (qclass == TSW_F32 && x.dclass == TSW_F32) ? TSW_F32 : TSW_F64;
    if (to_dtype(&qa, dt) < 0 || coll_materialize(&x, dt) < 0)
        goto done;
    npy_intp dims[1] = {(npy_intp)x.n};
    if (!(out = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_FLOAT64)))
        goto done;
    tsw_series sq = {PyArray_DATA(qa), n, NULL};
    tsw_collection cx;
    coll_view(&x, NULL, &cx);
    int rc;
    const char *detail;
    Py_BEGIN_ALLOW_THREADS
    rc = tsw_lower_bound(&prm, (tsw_lb)bound, (int64_t)bands, dt, dim, &sq, &cx,
                         PyArray_DATA(out), &ex);
    detail = rc ? tsw_last_error_detail() : NULL;
    Py_END_ALLOW_THREADS
    if (rc != TSW_OK) {
        if (rc == TSW_ENONFINITE && first_nonfinite(sq.values, dt, n * dim) >= 0)
            PyErr_SetString(PyExc_ValueError, "query contains NaN or infinity");
        else if (!coll_diagnose(rc, &x, NULL, dt))
            raise_status_detail(rc, "lower_bound", detail);
        goto done;
    }
    result = (PyObject *)out;
    out = NULL;
done:
    Py_XDECREF(qa);
    Py_XDECREF(out);
    coll_free(&x);
    return result;
}

static PyObject *py_envelope(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_params prm;
    PyArrayObject *a = NULL, *lo = NULL, *hi = NULL;
    PyObject *result = NULL;
    int layout, dclass, as_b = 0;
    int64_t n, dim;
    long long length = -1;
    if (parse_call(&sig_env, args, nargs, kwnames, slot) < 0 ||
        build_params(TSW_DTW, "envelope", slot, &prm) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        get_positive_int(slot[K_LENGTH], "length", &length) < 0 ||
        (slot[K_AS_B] && get_bool(slot[K_AS_B], "as_b", &as_b) < 0))
        return NULL;
    if (one_series(slot[K_A], "x", layout, &a, &dclass, &n, &dim) < 0)
        goto done;
    if (length < 0)
        length = n;
    if (to_dtype(&a, (tsw_dtype)dclass) < 0)
        goto done;
    int one_d = PyArray_NDIM(a) == 1;
    npy_intp dims[2] = {(npy_intp)length, (npy_intp)dim};
    int tn = dclass == TSW_F32 ? NPY_FLOAT32 : NPY_FLOAT64;
    lo = (PyArrayObject *)PyArray_SimpleNew(one_d ? 1 : 2, dims, tn);
    hi = (PyArrayObject *)PyArray_SimpleNew(one_d ? 1 : 2, dims, tn);
    if (!lo || !hi)
        goto done;
    tsw_series s = {PyArray_DATA(a), n, NULL};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tsw_envelope(&prm, (tsw_dtype)dclass, dim, &s, as_b, (int64_t)length,
                      PyArray_DATA(lo), PyArray_DATA(hi));
    Py_END_ALLOW_THREADS
    if (rc != TSW_OK) {
        if (rc == TSW_ENONFINITE)
            PyErr_SetString(PyExc_ValueError, "x contains NaN or infinity");
        else
            raise_status(rc, "envelope");
        goto done;
    }
    result = Py_BuildValue("(OO)", lo, hi);
done:
    Py_XDECREF(a);
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    return result;
}

/* A series in GPU memory, as tswarp/_gpu.py's search_series describes it: (pointer, length,
 * dim, dtype code, device index, stream). */
static int device_series(PyObject *o, tsw_series *s, int64_t *dim, int *dcode, tsw_exec *ex)
{
    unsigned long long ptr, stream;
    long long len, d;
    int code, dev;
    if (!PyTuple_Check(o) ||
        !PyArg_ParseTuple(o, "KLLiiK", &ptr, &len, &d, &code, &dev, &stream)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "search(): bad device series descriptor");
        return -1;
    }
    s->values = (const void *)(uintptr_t)ptr;
    s->length = (int64_t)len;
    s->times = NULL;
    *dim = (int64_t)d;
    *dcode = code;
    ex->device_index = dev;
    ex->cuda_stream = (void *)(uintptr_t)stream;
    return 0;
}

static PyObject *search_impl(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             int on_device);

static PyObject *py_search(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    (void)self;
    return search_impl(args, nargs, kwnames, 0);
}

static PyObject *py_search_device(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    (void)self;
    return search_impl(args, nargs, kwnames, 1);
}

static PyObject *search_impl(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                             int on_device)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_params prm;
    tsw_exec ex;
    PyArrayObject *qa = NULL, *sa = NULL;
    PyObject *bar = NULL, *result = NULL;
    int layout, qc, sc, znorm = 1, explicit_index;
    long long k = 1, excl = -1;
    int64_t n, N, dq, ds;
    int64_t *st = NULL;
    double *dv = NULL;
    if (parse_call(&sig_search, args, nargs, kwnames, slot) < 0 ||
        build_params(TSW_DTW, "search", slot, &prm) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 || get_positive_int(slot[K_K], "k", &k) < 0 ||
        get_positive_int(slot[K_EXCLUSION], "exclusion", &excl) < 0 ||
        (slot[K_ZNORM] && get_bool(slot[K_ZNORM], "znorm", &znorm) < 0))
        return NULL;
    if (prm.window == TSW_WINDOW_ITAKURA) {
        PyErr_SetString(PyExc_ValueError,
                        "search() takes a Sakoe-Chiba window (window or radius), not "
                        "itakura_max_slope");
        return NULL;
    }
    if (prm.cost == TSW_COST_COSINE) {
        PyErr_SetString(PyExc_ValueError,
                        "search() takes cost 'sqeuclidean', 'euclidean' or 'abs'; the cosine "
                        "cost has no LB_Keogh");
        return NULL;
    }
    if (progress_callable(slot[K_PROGRESS], "search", &bar) < 0)
        return NULL;
    tsw_series dser = {0};
    if (on_device) {
        if (one_series(slot[K_QUERY], "query", layout, &qa, &qc, &n, &dq) < 0 ||
            device_series(slot[K_SERIES], &dser, &ds, &sc, &ex) < 0)
            goto done;
        N = dser.length;
    } else if (one_series(slot[K_QUERY], "query", layout, &qa, &qc, &n, &dq) < 0 ||
               one_series(slot[K_SERIES], "series", layout, &sa, &sc, &N, &ds) < 0) {
        goto done;
    }
    if (dq != ds) {
        PyErr_Format(PyExc_ValueError, "query has dimension %lld but series has dimension %lld",
                     (long long)dq, (long long)ds);
        goto done;
    }
    if (n > N) {
        PyErr_Format(PyExc_ValueError,
                     "search(): the query (%lld points) is longer than the series (%lld points)",
                     (long long)n, (long long)N);
        goto done;
    }
    if (k > N - n + 1) {
        PyErr_Format(PyExc_ValueError,
                     "search(): k = %lld but the series has %lld windows of the query's length",
                     k, (long long)(N - n + 1));
        goto done;
    }
    if (excl < 0)
        excl = n; /* non-overlapping matches */
    /* a device series keeps its own dtype (the query follows it) */
    tsw_dtype dt = on_device ? (tsw_dtype)sc
                             : (qc == TSW_F32 && sc == TSW_F32) ? TSW_F32 : TSW_F64;
    if (to_dtype(&qa, dt) < 0 || (!on_device && to_dtype(&sa, dt) < 0))
        goto done;
    st = PyMem_Malloc((size_t)k * sizeof(int64_t));
    dv = PyMem_Malloc((size_t)k * sizeof(double));
    if (!st || !dv) {
        raise_too_big("the matches", 16.0 * (double)k);
        goto done;
    }
    tsw_series sq = {PyArray_DATA(qa), n, NULL};
    tsw_series ss = on_device ? dser : (tsw_series){PyArray_DATA(sa), N, NULL};
    int64_t count = 0;
    progress_ctx ctx = {NULL, bar};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    tsw_search_stats stats;
    int rc = on_device ? tsw_search_device(&prm, dt, dq, &sq, &ss, znorm, (int64_t)excl,
                                           (int64_t)k, st, dv, &count, &stats, &ex)
                       : tsw_search(&prm, dt, dq, &sq, &ss, znorm, (int64_t)excl, (int64_t)k,
                                    st, dv, &count, &stats, &ex);
    const char *detail = rc ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        align_raise(rc, "search", &sq, &ss, "query", "series", dt, dq, detail);
        goto done;
    }
    npy_intp dims[1] = {(npy_intp)count};
    PyObject *os = PyArray_SimpleNew(1, dims, NPY_INT64), *od = PyArray_SimpleNew(1, dims, NPY_FLOAT64);
    if (!os || !od) {
        Py_XDECREF(os);
        Py_XDECREF(od);
        goto done;
    }
    if (count) {
        memcpy(PyArray_DATA((PyArrayObject *)os), st, (size_t)count * sizeof(int64_t));
        memcpy(PyArray_DATA((PyArrayObject *)od), dv, (size_t)count * sizeof(double));
    }
    result = Py_BuildValue("(NN{sLsLsLsLsLsL})", os, od, "windows", (long long)stats.windows,
                           "kim", (long long)stats.kim, "keogh_query",
                           (long long)stats.keogh_query, "keogh_data",
                           (long long)stats.keogh_data, "dtw", (long long)stats.dtw,
                           "abandoned", (long long)stats.abandoned);
done:
    progress_close(bar);
    Py_XDECREF(bar);
    PyMem_Free(st);
    PyMem_Free(dv);
    Py_XDECREF(qa);
    Py_XDECREF(sa);
    return result;
}

#define TSW_KNN_METHODS                                                                       \
    FASTKW("_knn", py_knn, NULL), FASTKW("_lower_bound", py_lower_bound, NULL),              \
        FASTKW("_envelope", py_envelope, NULL), FASTKW("_search", py_search, NULL),          \
        FASTKW("_search_device", py_search_device, NULL),

#endif
