/* _bind_align.h: alignment paths: dtw_path, subsequence DTW (included once by _tswarp.c, in order; one translation unit). */
#ifndef TSWARP__BIND_ALIGN_H
#define TSWARP__BIND_ALIGN_H

/* ---- alignment paths ----------------------------------------------------------------------
 * dtw_path and subsequence_dtw (tsw_dtw_path, tsw_subsequence_dtw): the same argument
 * handling as the pair functions (arrays, dtypes, windows, device, n_jobs, progress), and
 * the path handed back as an (L, 2) int64 array. Matches are built into tswarp.Match
 * objects by the Python layer (tswarp/_align.py). */

#define M_ALIGN (BIT(K_STEP) | BIT(K_COST) | M_WINDOWS | BIT(K_METHOD) | BIT(K_MEMORY_LIMIT) | \
                 M_EXEC | BIT(K_NJOBS) | BIT(K_PROGRESS) | BIT(K_ACCUMULATED))
static const signature sig_dtw_path = {"dtw_path", 2, 2, {K_A, K_B}, M_ALIGN};
static const signature sig_subseq = {"subsequence_dtw", 2, 2, {K_QUERY, K_REFERENCE},
                                     M_ALIGN | BIT(K_K) | BIT(K_RETURN_PATH)};

/* An int argument >= lo (bool and float refused) into *out; None leaves *out alone. */
static int get_int_at_least(PyObject *o, const char *name, long long lo, long long *out)
{
    if (!given(o))
        return 0;
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, got %s", name, Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *idx = PyNumber_Index(o);
    if (!idx)
        return -1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow > 0)
        v = LLONG_MAX;
    if (overflow < 0 || v < lo) {
        if (lo == 1)
            PyErr_Format(PyExc_ValueError, "%s must be a positive int, got %R", name, o);
        else
            PyErr_Format(PyExc_ValueError, "%s must be an int >= %lld, got %R", name, lo, o);
        return -1;
    }
    *out = v;
    return 0;
}

static int get_positive_int(PyObject *o, const char *name, long long *out)
{
    return get_int_at_least(o, name, 1, out);
}

/* The cost an alignment reports, by dtw()'s rule (tsw_params.accumulated): the square root
 * of the accumulated cost for the sqeuclidean cost unless accumulated=True, so that
 * dtw_path(a, b)[1] == dtw(a, b) and tslearn's dtw_path; other costs as accumulated. */
static double align_cost(const tsw_align_params *ap, int accumulated, double D)
{
    return !accumulated && ap->cost == TSW_COST_SQEUCLIDEAN ? sqrt(D) : D;
}

static int build_align_params(const char *fname, PyObject **slot, tsw_align_params *ap)
{
    tsw_align_params_default(ap);
    if (given(slot[K_STEP])) {
        static const char *const names[] = {"symmetric1", "p05", "p05_query"};
        static const tsw_step steps[] = {TSW_STEP_SYMMETRIC1, TSW_STEP_P05, TSW_STEP_P05_QUERY};
        int i = match_name(slot[K_STEP], "step", names, 3);
        if (i == -2)
            return -1;
        if (i < 0) {
            PyErr_Format(PyExc_ValueError,
                         "step must be 'symmetric1', 'p05' or 'p05_query', got %R", slot[K_STEP]);
            return -1;
        }
        ap->step = steps[i];
    }
    /* cost and window: the DTW parameters of build_params */
    PyObject *sub[K_COUNT] = {0};
    sub[K_COST] = slot[K_COST];
    sub[K_WINDOW] = slot[K_WINDOW];
    sub[K_RADIUS] = slot[K_RADIUS];
    sub[K_ITAKURA] = slot[K_ITAKURA];
    tsw_params prm;
    if (build_params(TSW_DTW, fname, sub, &prm) < 0)
        return -1;
    ap->cost = prm.cost;
    ap->window = prm.window;
    ap->window_radius = prm.window_radius;
    ap->itakura_max_slope = prm.itakura_max_slope;
    if (given(slot[K_METHOD])) {
        static const char *const names[] = {"auto", "stored", "linear"};
        static const tsw_path_method ms[] = {TSW_PATH_AUTO, TSW_PATH_STORED, TSW_PATH_LINEAR};
        int i = match_name(slot[K_METHOD], "method", names, 3);
        if (i == -2)
            return -1;
        if (i < 0) {
            PyErr_Format(PyExc_ValueError, "method must be 'auto', 'stored' or 'linear', got %R",
                         slot[K_METHOD]);
            return -1;
        }
        ap->method = ms[i];
    }
    long long lim = 0;
    if (get_positive_int(slot[K_MEMORY_LIMIT], "memory_limit", &lim) < 0)
        return -1;
    ap->memory_limit = (size_t)lim;
    return 0;
}

/* Two series for an alignment: arrays of one computation dtype, same dim. */
static int align_inputs(PyObject *oa, PyObject *ob, const char *na, const char *nb,
                        int layout, PyArrayObject **a, PyArrayObject **b, tsw_dtype *dt,
                        int64_t *la, int64_t *lb, int64_t *dim)
{
    int64_t da, db;
    if (!(*a = as_array(oa, na, -1)) || !(*b = as_array(ob, nb, -1)))
        return -1;
    if (apply_layout(a, na, layout, 2) < 0 || apply_layout(b, nb, layout, 2) < 0)
        return -1;
    int ca = dtype_class(*a, na, -1), cb;
    if (ca < 0 || (cb = dtype_class(*b, nb, -1)) < 0)
        return -1;
    if (series_shape(*a, na, la, &da) < 0 || series_shape(*b, nb, lb, &db) < 0)
        return -1;
    if (da != db) {
        PyErr_Format(PyExc_ValueError, "%s has dimension %lld but %s has dimension %lld", na,
                     (long long)da, nb, (long long)db);
        return -1;
    }
    *dt = (ca == TSW_F32 && cb == TSW_F32) ? TSW_F32 : TSW_F64;
    *dim = da;
    return to_dtype(a, *dt) < 0 || to_dtype(b, *dt) < 0 ? -1 : 0;
}

/* The exception for a failed alignment call: the argument holding NaN, else the status. */
static void align_raise(int rc, const char *fname, const tsw_series *sa, const tsw_series *sb,
                        const char *na, const char *nb, tsw_dtype dt, int64_t dim,
                        const char *detail)
{
    if (rc == TSW_ENONFINITE) {
        const char *which = first_nonfinite(sa->values, dt, sa->length * dim) >= 0 ? na : nb;
        PyErr_Format(PyExc_ValueError, "%s contains NaN or infinity", which);
        return;
    }
    raise_status_detail(rc, fname, detail);
}

/* (L, 2) int64 array from pairs. */
static PyObject *path_array(const int64_t *pairs, int64_t len)
{
    npy_intp dims[2] = {(npy_intp)len, 2};
    PyObject *arr = PyArray_SimpleNew(2, dims, NPY_INT64);
    if (arr && len > 0)
        memcpy(PyArray_DATA((PyArrayObject *)arr), pairs, sizeof(int64_t) * 2 * (size_t)len);
    return arr;
}

/* A progress bar for progress=True counts cells, not pairs. */
static int align_progress(PyObject *o, const char *fname, PyObject **bar)
{
    if (progress_callable(o, fname, bar) < 0)
        return -1;
    if (*bar && o == Py_True) {
        PyObject *unit = PyUnicode_FromString("cells");
        int r = unit ? PyObject_SetAttrString(*bar, "unit", unit) : -1;
        Py_XDECREF(unit);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* The C call behind a path function: tsw_dtw_path, or tsw_fastdtw with its radius. */
static int call_dtw_path(const tsw_align_params *ap, tsw_dtype dt, int64_t dim,
                         const tsw_series *a, const tsw_series *b, long long radius,
                         int64_t *path, int64_t cap, int64_t *len, double *cost,
                         const tsw_exec *ex)
{
    (void)radius;
    return tsw_dtw_path(ap, dt, dim, a, b, path, cap, len, cost, ex);
}

static int call_fastdtw(const tsw_align_params *ap, tsw_dtype dt, int64_t dim,
                        const tsw_series *a, const tsw_series *b, long long radius,
                        int64_t *path, int64_t cap, int64_t *len, double *cost,
                        const tsw_exec *ex)
{
    return tsw_fastdtw(ap, dt, dim, a, b, (int64_t)radius, path, cap, len, cost, ex);
}

typedef int (*path_call_fn)(const tsw_align_params *, tsw_dtype, int64_t, const tsw_series *,
                            const tsw_series *, long long, int64_t *, int64_t, int64_t *,
                            double *, const tsw_exec *);

/* One path of slot[K_A] and slot[K_B] (parameters already parsed): the inputs, the path's
 * buffer, progress and Ctrl-C, the call, and (path, cost) by dtw_path's cost rule. */
/* A path buffer of tsw_path_max_length(na, nb) pairs (*cap), or NULL with MemoryError. */
static int64_t *path_buffer(int64_t na, int64_t nb, int64_t *cap)
{
    *cap = tsw_path_max_length(na, nb);
    if (*cap == 0 || *cap > (int64_t)(PY_SSIZE_T_MAX / 16)) {
        raise_too_big("the path", -1);
        return NULL;
    }
    int64_t *pairs = PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)*cap);
    if (!pairs)
        raise_too_big("the path", 16.0 * (double)*cap);
    return pairs;
}

static PyObject *path_result(const char *fname, PyObject **slot, const tsw_align_params *ap,
                             tsw_exec *ex, int layout, int accumulated, path_call_fn call,
                             long long radius)
{
    PyArrayObject *a = NULL, *b = NULL;
    PyObject *bar = NULL, *result = NULL;
    int64_t *pairs = NULL;
    int64_t na, nb, dim;
    tsw_dtype dt;
    if (align_progress(slot[K_PROGRESS], fname, &bar) < 0)
        return NULL;
    if (align_inputs(slot[K_A], slot[K_B], "a", "b", layout, &a, &b, &dt, &na, &nb, &dim) < 0)
        goto done;
    int64_t cap;
    if (!(pairs = path_buffer(na, nb, &cap)))
        goto done;
    tsw_series sa = {PyArray_DATA(a), na, NULL}, sb = {PyArray_DATA(b), nb, NULL};
    int64_t len = 0;
    double cost = 0;
    const char *detail = NULL;
    progress_ctx ctx = {NULL, bar};
    ex->progress = progress_trampoline;
    ex->progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    int rc = call(ap, dt, dim, &sa, &sb, radius, pairs, cap, &len, &cost, ex);
    detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        align_raise(rc, fname, &sa, &sb, "a", "b", dt, dim, detail);
        goto done;
    }
    PyObject *arr = path_array(pairs, len);
    if (!arr)
        goto done;
    result = Py_BuildValue("(Nd)", arr, align_cost(ap, accumulated, cost));
done:
    progress_close(bar);
    Py_XDECREF(bar);
    PyMem_Free(pairs);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return result;
}

static PyObject *py_dtw_path(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_align_params ap;
    tsw_exec ex;
    int explicit_index, layout, accumulated = 0;
    (void)self;
    if (parse_call(&sig_dtw_path, args, nargs, kwnames, slot) < 0 ||
        build_align_params("dtw_path", slot, &ap) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        (slot[K_ACCUMULATED] && get_bool(slot[K_ACCUMULATED], "accumulated", &accumulated) < 0))
        return NULL;
    return path_result("dtw_path", slot, &ap, &ex, layout, accumulated, call_dtw_path, 0);
}

static const signature sig_alignment_path = {"alignment_path", 3, 2, {K_A, K_B, K_METRIC},
                                             (M_ALL & ~(BIT(K_TX) | BIT(K_TY))) | M_EXEC};

/* alignment_path(a, b, metric, **params) -> ((L, 2) int64 path, value): the elastic
 * family's path by aeon's rule (tsw_elastic_path). */
static PyObject *py_alignment_path(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_params prm;
    tsw_exec ex;
    tsw_measure m;
    PyArrayObject *a = NULL, *b = NULL, *ta = NULL, *tb = NULL;
    PyObject *result = NULL;
    int64_t *pairs = NULL;
    int explicit_index, layout, rc;
    int64_t na, nb, dim;
    tsw_dtype dt;
    (void)self;
    if (parse_call(&sig_alignment_path, args, nargs, kwnames, slot) < 0 ||
        parse_metric(slot[K_METRIC], &m) < 0)
        return NULL;
    if (((int)m < TSW_WDTW || (int)m > TSW_MSM) && m != TSW_TWED && m != TSW_SHAPE_DTW) {
        PyErr_SetString(PyExc_ValueError,
                        "alignment_path() takes 'twed', the elastic family's metrics "
                        "('wdtw', 'ddtw', 'wddtw', 'adtw', 'erp', 'edr', 'lcss', 'msm') and "
                        "'shape_dtw'; DTW's path is dtw_path()'s");
        return NULL;
    }
    if (build_params(m, "alignment_path", slot, &prm) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 || parse_layout(slot[K_LAYOUT], &layout) < 0)
        return NULL;
    if (align_inputs(slot[K_A], slot[K_B], "a", "b", layout, &a, &b, &dt, &na, &nb, &dim) < 0)
        goto done;
    if (m == TSW_TWED) { /* TWED's timestamps, as twed() takes them */
        if (given(slot[K_TA]) && !(ta = series_times(slot[K_TA], "ta", na, "a", dt)))
            goto done;
        if (given(slot[K_TB]) && !(tb = series_times(slot[K_TB], "tb", nb, "b", dt)))
            goto done;
    }
    int64_t cap;
    if (!(pairs = path_buffer(na, nb, &cap)))
        goto done;
    tsw_series sa = {PyArray_DATA(a), na, ta ? PyArray_DATA(ta) : NULL};
    tsw_series sb = {PyArray_DATA(b), nb, tb ? PyArray_DATA(tb) : NULL};
    int64_t len = 0;
    double value = 0;
    const char *detail = NULL;
    progress_ctx ctx = {NULL, NULL};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    rc = tsw_elastic_path(&prm, dt, dim, &sa, &sb, pairs, cap, &len, &value, &ex);
    detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        if (rc == TSW_ECANCELED && PyErr_Occurred()) {
        } else if (rc == TSW_ETIMES && ta && check_times(sa.times, dt, na, "ta") < 0) {
        } else if (rc == TSW_ETIMES && tb && check_times(sb.times, dt, nb, "tb") < 0) {
        } else {
            align_raise(rc, "alignment_path", &sa, &sb, "a", "b", dt, dim, detail);
        }
        goto done;
    }
    PyObject *pa = path_array(pairs, len);
    if (pa) {
        result = Py_BuildValue("(Nd)", pa, value);
    }
done:
    PyMem_Free(pairs);
    Py_XDECREF(a);
    Py_XDECREF(b);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    return result;
}

/* _subsequence_dtw(query, reference, ..., k=1, return_path=True) ->
 *   (starts, ends, costs, path or None, offsets, lengths), arrays of the count found. */
static PyObject *py_subsequence(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_align_params ap;
    tsw_exec ex;
    PyArrayObject *q = NULL, *r = NULL;
    PyObject *bar = NULL, *result = NULL;
    int64_t *pairs = NULL;
    tsw_match *mt = NULL;
    int explicit_index, rc, with_path = 1, layout, accumulated = 0;
    int64_t nq, nr, dim;
    long long k = 1;
    tsw_dtype dt;
    if (parse_call(&sig_subseq, args, nargs, kwnames, slot) < 0 ||
        build_align_params("subsequence_dtw", slot, &ap) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        (slot[K_ACCUMULATED] && get_bool(slot[K_ACCUMULATED], "accumulated", &accumulated) < 0) ||
        get_positive_int(slot[K_K], "k", &k) < 0 ||
        (slot[K_RETURN_PATH] && get_bool(slot[K_RETURN_PATH], "return_path", &with_path) < 0))
        return NULL;
    if (ap.window != TSW_WINDOW_NONE) {
        PyErr_SetString(PyExc_ValueError,
                        "subsequence_dtw() takes no window, radius or itakura_max_slope");
        return NULL;
    }
    if (align_progress(slot[K_PROGRESS], "subsequence_dtw", &bar) < 0)
        return NULL;
    if (align_inputs(slot[K_QUERY], slot[K_REFERENCE], "query", "reference", layout, &q, &r,
                     &dt, &nq, &nr, &dim) < 0)
        goto done;
    if (k > nr)
        k = nr; /* no more matches than reference points */
    int64_t cap = with_path ? tsw_subsequence_path_max_length(nq, nr, k) : 0;
    if (with_path && (cap == 0 || cap > (int64_t)(PY_SSIZE_T_MAX / 16))) {
        raise_too_big("the paths", -1);
        goto done;
    }
    mt = PyMem_Malloc(sizeof(tsw_match) * (size_t)k);
    pairs = with_path ? PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)cap) : NULL;
    if (!mt || (with_path && !pairs)) {
        raise_too_big("the matches and their paths",
                      (double)sizeof(tsw_match) * (double)k + (with_path ? 16.0 * (double)cap : 0.0));
        goto done;
    }
    tsw_series sq = {PyArray_DATA(q), nq, NULL}, sr = {PyArray_DATA(r), nr, NULL};
    int64_t count = 0;
    const char *detail = NULL;
    progress_ctx ctx = {NULL, bar};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    rc = tsw_subsequence_dtw(&ap, dt, dim, &sq, &sr, (int64_t)k, mt, &count, pairs, cap, &ex);
    detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        align_raise(rc, "subsequence_dtw", &sq, &sr, "query", "reference", dt, dim, detail);
        goto done;
    }
    npy_intp dims[1] = {(npy_intp)count};
    PyObject *st = PyArray_SimpleNew(1, dims, NPY_INT64), *en = PyArray_SimpleNew(1, dims, NPY_INT64);
    PyObject *co = PyArray_SimpleNew(1, dims, NPY_FLOAT64), *of = PyArray_SimpleNew(1, dims, NPY_INT64);
    PyObject *ln = PyArray_SimpleNew(1, dims, NPY_INT64);
    int64_t used = 0;
    for (int64_t i = 0; i < count; ++i)
        used += mt[i].path_length;
    PyObject *pa = with_path ? path_array(pairs, used) : (Py_INCREF(Py_None), Py_None);
    if (!st || !en || !co || !of || !ln || !pa) {
        Py_XDECREF(st), Py_XDECREF(en), Py_XDECREF(co), Py_XDECREF(of), Py_XDECREF(ln);
        Py_XDECREF(pa);
        goto done;
    }
    for (int64_t i = 0; i < count; ++i) {
        ((int64_t *)PyArray_DATA((PyArrayObject *)st))[i] = mt[i].start;
        ((int64_t *)PyArray_DATA((PyArrayObject *)en))[i] = mt[i].end;
        ((double *)PyArray_DATA((PyArrayObject *)co))[i] = align_cost(&ap, accumulated, mt[i].cost);
        ((int64_t *)PyArray_DATA((PyArrayObject *)of))[i] = mt[i].path_offset;
        ((int64_t *)PyArray_DATA((PyArrayObject *)ln))[i] = mt[i].path_length;
    }
    result = Py_BuildValue("(NNNNNN)", st, en, co, pa, of, ln);
done:
    progress_close(bar);
    Py_XDECREF(bar);
    PyMem_Free(pairs);
    PyMem_Free(mt);
    Py_XDECREF(q);
    Py_XDECREF(r);
    return result;
}

PyDoc_STRVAR(dtw_path_doc,
"dtw_path($module, /, a, b, *, step='symmetric1', cost='sqeuclidean', window=None,\n"
"    radius=None, itakura_max_slope=None, accumulated=False, method='auto',\n"
"    memory_limit=None, device='auto', n_jobs=None, progress=False, layout=None)\n"
"--\n\n"
"Optimal warping path between two series and its cost.\n\n"
"D(0, 0) = c(0, 0) and D(i, j) = min over the steps (di, dj) of\n"
"D(i - di, j - dj) + w c(i, j), as ``librosa.sequence.dtw`` computes it.\n"
"Ties go to the first step of the pattern's order (librosa's rule); every method\n"
"and thread count gives the same path.\n\n"
"Parameters\n"
"----------\n"
"a, b : array_like, shape (len,) or (len, d)\n"
"    Two series of real numbers, of any lengths and the same dimension d. Computed\n"
"    in float32 when both are float32 (float16 counts as float32), else float64.\n"
"    CuPy arrays and PyTorch CUDA tensors (both on one GPU) are copied to the host\n"
"    ((len(a) + len(b)) d values, small against the len(a) len(b) cells), and the\n"
"    path comes back as an array of their library on their GPU.\n"
DOC_LAYOUT("(len, d)", "(d, len)")
"step : {'symmetric1', 'p05'}, default 'symmetric1'\n"
"    'symmetric1': steps (1,1), (0,1), (1,0) with weights 1 (dtaidistance,\n"
"    librosa's default). 'p05': steps (1,1), (1,2), (2,1) with weights 2, 3, 3\n"
"    (librosa ``step_sizes_sigma=[[1,1],[1,2],[2,1]], weights_mul=[2,3,3]``); a path\n"
"    exists only if len(b) <= 2 len(a) - 1 and len(a) <= 2 len(b) - 1.\n"
"cost : {'sqeuclidean', 'euclidean', 'abs', 'cosine'}, default 'sqeuclidean'\n"
DOC_WINDOW
"accumulated : bool, default False\n"
"    As in :func:`dtw`: the returned cost is the square root of the accumulated cost\n"
"    for 'sqeuclidean' (so that dtw_path(a, b)[1] == dtw(a, b), as tslearn's dtw_path)\n"
"    and the accumulated cost for the other costs; True always returns the\n"
"    accumulated cost D(len(a) - 1, len(b) - 1) (librosa's D[-1, -1]).\n"
"method : {'auto', 'stored', 'linear'}, default 'auto'\n"
"    'stored' keeps 2 bits per cell (len(a) len(b) / 4 bytes); 'linear' needs\n"
"    O(len(a) + len(b)) memory and recomputes blocks; 'auto' stores when that fits\n"
"    memory_limit.\n"
"memory_limit : int, optional\n"
"    Bytes for the stored steps (default: half the available memory; on the GPU its\n"
"    free memory).\n"
"device : {'auto', 'cpu', 'cuda', 'cuda:N'}, default 'auto'\n"
"    Where to compute. Host inputs: 'auto' uses a GPU when the CUDA backend is built,\n"
"    a GPU is present and the grid is large enough, else the CPU. GPU inputs: 'auto'\n"
"    and 'cuda' use their GPU ('auto' falls back to the CPU where it cannot: no CUDA\n"
"    backend); 'cpu' and 'cuda:N' compute there.\n"
"n_jobs : int, optional\n"
"    CPU threads (None or -1: all cores).\n"
"progress : bool or callable, default False\n"
"    True draws a bar on stderr; a callable gets (cells_done, cells_total).\n"
"\n"
"Returns\n"
"-------\n"
"path : ndarray of int64, shape (L, 2)\n"
"    (i, j) pairs from (0, 0) to (len(a) - 1, len(b) - 1), the same on the CPU and\n"
"    the GPU. For GPU inputs an int64 array (CuPy) or tensor (torch) on their GPU;\n"
"    numpy for host inputs (torch CPU tensors included).\n"
"cost : float\n"
"    sqrt(D(len(a) - 1, len(b) - 1)) for 'sqeuclidean' (``tswarp.dtw``'s value with\n"
"    'symmetric1'), else D(len(a) - 1, len(b) - 1); see `accumulated`.\n\n"
"Raises\n"
"------\n"
"ValueError\n"
"    Bad argument values, NaN or infinity in a or b, or no path (step pattern or\n"
"    window).\n"
"TypeError\n"
"    Arguments of the wrong type.\n"
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> path, cost = tswarp.dtw_path([0.0, 1.0, 2.0], [0.0, 1.0, 1.0, 2.0])\n"
">>> path.tolist(), cost\n"
"([[0, 0], [1, 1], [1, 2], [2, 3]], 0.0)\n");

PyDoc_STRVAR(subsequence_doc,
"_subsequence_dtw($module, /, query, reference, *, step='symmetric1', cost='sqeuclidean',\n"
"    method='auto', memory_limit=None, k=1, return_path=True, device='auto', n_jobs=None,\n"
"    progress=False, layout=None, accumulated=False)\n"
"--\n\n"
"Subsequence DTW (see tswarp.subsequence_dtw): (starts, ends, costs, path, offsets,\n"
"lengths) of the best k non-overlapping matches, best first; path is the\n"
"concatenation of their paths (None when return_path is False).\n");


/* ---- FastDTW ------------------------------------------------------------------------------ */

static const signature sig_fastdtw = {"fastdtw", 3, 2, {K_A, K_B, K_RADIUS},
                                      BIT(K_COST) | BIT(K_ACCUMULATED) | M_EXEC |
                                          BIT(K_PROGRESS)};

static PyObject *py_fastdtw(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_align_params ap;
    tsw_exec ex;
    int explicit_index, layout, accumulated = 0;
    long long radius = 1;
    (void)self;
    if (parse_call(&sig_fastdtw, args, nargs, kwnames, slot) < 0)
        return NULL;
    PyObject *sub[K_COUNT] = {0}; /* cost only: radius is FastDTW's own, not a window */
    sub[K_COST] = slot[K_COST];
    if (build_align_params("fastdtw", sub, &ap) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        (slot[K_ACCUMULATED] && get_bool(slot[K_ACCUMULATED], "accumulated", &accumulated) < 0))
        return NULL;
    if (ap.cost == TSW_COST_COSINE) {
        PyErr_SetString(PyExc_ValueError,
                        "fastdtw(): cost must be 'sqeuclidean', 'euclidean' or 'abs' (the "
                        "fastdtw package's default is 'abs')");
        return NULL;
    }
    if (slot[K_RADIUS] == Py_None) {
        PyErr_SetString(PyExc_TypeError, "radius must be an int, got NoneType");
        return NULL;
    }
    if (get_int_at_least(slot[K_RADIUS], "radius", 0, &radius) < 0)
        return NULL;
    return path_result("fastdtw", slot, &ap, &ex, layout, accumulated, call_fastdtw, radius);
}

PyDoc_STRVAR(alignment_path_doc,
"alignment_path($module, /, a, b, metric, *, window=None, radius=None,\n"
"    itakura_max_slope=None, g=None, warp_penalty=None, epsilon=None, c=None,\n"
"    independent=None, accumulated=False, nu=None, lmbda=None, p=None, ta=None,\n"
"    tb=None, device='auto', layout=None)\n"
"--\n\n"
"Alignment path of TWED or an elastic-family measure, by aeon's rule.\n\n"
"The path of ``aeon.distances.<metric>_alignment_path`` for metric in 'twed' (aeon's\n"
"'twe', default timestamps), 'wdtw', 'ddtw', 'wddtw', 'adtw', 'erp', 'edr', 'lcss',\n"
"'msm': the measure's accumulated matrix over the whole grid (O(len(a) len(b))\n"
"memory), then back from the last cell, at each cell to the neighbour (i-1, j-1),\n"
"(i-1, j) or (i, j-1) of least accumulated value, the first of that order on ties\n"
"(numpy's argmin); along the first row or column straight to (0, 0). That rule reads the matrix: for ERP, EDR and MSM it is\n"
"aeon's path, not always one that attains the value. LCSS follows aeon's own rule and\n"
"lists the matched cells only (possibly none). DDTW and WDDTW index the derivatives\n"
"(len - 2 points). MSM's independent form sums the channels' matrices, as aeon does.\n"
"The matrices are tswarp's: ERP's and EDR's boundaries follow the papers where aeon\n"
"1.6 differs (see :func:`tswarp.erp`, :func:`tswarp.edr`); elsewhere the paths equal\n"
"aeon's. DTW's own path, with librosa's rule and linear memory, is :func:`dtw_path`.\n\n"
"Parameters\n"
"----------\n"
"a, b : array_like, shape (len,) or (len, d)\n"
"    Two series of real numbers on the host (numpy arrays, lists), of any lengths and\n"
"    the same dimension d. Computed in float32 when both are float32, else float64.\n"
"metric : str\n"
"    'twed' or one of the elastic family above.\n"
"window, radius, itakura_max_slope, g, warp_penalty, epsilon, c, independent,\n"
"accumulated, nu, lmbda, p, ta, tb\n"
"    The metric's parameters, as in :func:`distance` (TWED's timestamps ta, tb as in\n"
"    :func:`twed`).\n"
"device : {'auto', 'cpu'}, default 'auto'\n"
"    The family's paths run on the CPU ('cuda' raises).\n"
DOC_LAYOUT("(len, d)", "(d, len)")
"\n"
"Returns\n"
"-------\n"
"path : ndarray of int64, shape (L, 2)\n"
"    The (i, j) cells from the first to the last.\n"
"value : float\n"
"    The metric's value of the pair, as :func:`distance` gives it.\n\n"
DOC_RAISES
"\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> path, value = tswarp.alignment_path([1.0, 2.0, 3.0, 6.0], [1.0, 2.0, 3.0, 4.0], 'msm')\n"
">>> path.tolist(), value\n"
"([[0, 0], [1, 1], [2, 2], [3, 3]], 2.0)\n");

PyDoc_STRVAR(fastdtw_doc,
"fastdtw($module, /, a, b, radius=1, *, cost='sqeuclidean', accumulated=False,\n"
"    device='auto', layout=None, progress=False)\n"
"--\n\n"
"FastDTW (Salvador and Chan 2007): an approximate DTW path in O((n + m) radius) time\n"
"and memory, the same path and cost as the ``fastdtw`` package (0.3.4) for the same\n"
"radius.\n\n"
"Both series are halved (pairs of points averaged) until one is shorter than\n"
"radius + 2; DTW runs there, and each finer level's DTW runs only in the coarser path\n"
"projected onto its grid and widened by `radius` cells.\n\n"
"Conventions: tswarp's order, ``(path, cost)`` (the package returns\n"
"``(distance, path)``); the package's default distance is ``cost='abs'`` (``abs(x - y)``,\n"
"the L1 norm for several dims) and its ``dist=2`` is ``cost='euclidean'``; with the\n"
"default 'sqeuclidean' the cost follows :func:`dtw_path` (its square root unless\n"
"``accumulated=True``). Where the package fails (radius 0 where a level has an odd\n"
"length) the rows no coarse cell covers take the row above's columns.\n\n"
"Parameters\n"
"----------\n"
DOC_SERIES
"radius : int, default 1\n"
"    Cells of widening around the projected path (>= 0); a radius as long as the\n"
"    series gives the exact DTW path.\n"
"cost : {'sqeuclidean', 'euclidean', 'abs'}, default 'sqeuclidean'\n"
"    Local cost between two points.\n"
"accumulated : bool, default False\n"
"    As in :func:`dtw_path`.\n"
"device : {'auto', 'cpu'}, default 'auto'\n"
"    FastDTW runs on the CPU ('cuda' raises ValueError).\n"
"layout : {None, 'channels_last', 'channels_first'}, default None\n"
"    As in :func:`dtw`.\n"
"progress : bool or callable, default False\n"
"    As in :func:`dtw_path`; Ctrl-C stops it.\n\n"
"Returns\n"
"-------\n"
"path : ndarray of int64, shape (L, 2)\n"
"    The (i, j) pairs from (0, 0) to (n - 1, m - 1).\n"
"cost : float\n\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> path, cost = tswarp.fastdtw([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 3.0, 4.0], cost='abs')\n"
">>> cost, path.tolist()\n"
"(2.0, [[0, 0], [1, 0], [2, 1], [3, 2], [4, 2]])\n");

/* _dba_step_raw(z, L, dim, values, offsets, lengths, count, weights, window_kind, window,
 *               series_rows, n_threads, total, valence, device) -> cost: tsw_dba_step on
 * float64 (device 'auto' or 'cpu': the CPU; 'cuda' / 'cuda:N': the GPU's batch)
 * arrays given by address (tswarp/_dba.py owns and has checked them): z (L, dim), the
 * series' values (rows, dim) with int64 offsets and lengths (count,), weights (count,),
 * total (L, dim) and valence (L,) written. window_kind: 0 none, 1 Sakoe-Chiba radius in
 * cells, 2 fraction, 3 Itakura (tswarp/_conventions.py band()). */
static PyObject *py_dba_step_raw(PyObject *self, PyObject *args)
{
    unsigned long long pz, pv, po, pl, pw, pt, pva;
    long long L, dim, count;
    int window_kind, series_rows, n_threads, explicit_index;
    double window;
    PyObject *devobj = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "KLLKKKLKidpiKK|O:_dba_step_raw", &pz, &L, &dim, &pv, &po, &pl,
                          &count, &pw, &window_kind, &window, &series_rows, &n_threads, &pt,
                          &pva, &devobj))
        return NULL;
    if (window_kind < 0 || window_kind > 3) {
        PyErr_SetString(PyExc_ValueError, "window_kind must be 0, 1, 2 or 3");
        return NULL;
    }
    tsw_align_params ap;
    tsw_align_params_default(&ap);
    ap.window = (tsw_window)window_kind;
    if (window_kind == TSW_WINDOW_ITAKURA)
        ap.itakura_max_slope = window;
    else
        ap.window_radius = window_kind ? window : 0;
    tsw_exec ex;
    tsw_exec_default(&ex);
    if (parse_device(devobj, &ex, &explicit_index) < 0)
        return NULL;
    if (ex.device == TSW_DEVICE_AUTO)
        ex.device = TSW_DEVICE_CPU; /* (DBA's batch is on the GPU only when asked for) */
    ex.n_threads = n_threads > 0 ? n_threads : 0;
    progress_ctx ctx = {NULL, NULL};
    ex.progress = progress_trampoline; /* Ctrl-C between series */
    ex.progress_user = &ctx;
    tsw_series z = {(const void *)(uintptr_t)pz, L, NULL};
    tsw_collection x = {(const void *)(uintptr_t)pv, (const int64_t *)(uintptr_t)po,
                        (const int64_t *)(uintptr_t)pl, 0, count, NULL};
    double cost = 0;
    ctx.tstate = PyEval_SaveThread();
    int rc = tsw_dba_step(&ap, TSW_F64, dim, &z, &x, (const double *)(uintptr_t)pw,
                          series_rows, (double *)(uintptr_t)pt, (double *)(uintptr_t)pva, &cost,
                          &ex);
    const char *detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        raise_status_detail(rc, "dtw_barycenter_averaging", detail);
        return NULL;
    }
    return PyFloat_FromDouble(cost);
}

#define TSW_ALIGN_METHODS                                                                     \
    {"_dba_step_raw", py_dba_step_raw, METH_VARARGS, NULL},                                   \
    FASTKW("dtw_path", py_dtw_path, dtw_path_doc),                                            \
        FASTKW("fastdtw", py_fastdtw, fastdtw_doc),                                           \
        FASTKW("alignment_path", py_alignment_path, alignment_path_doc),                      \
        FASTKW("_subsequence_dtw", py_subsequence, subsequence_doc),

#endif
