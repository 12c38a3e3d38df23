/*
 * Binding of tsw_segmental_dtw (included by _tswarp.c after the alignment helpers it
 * reuses: build_align_params, build_exec, align_inputs, align_progress, align_raise,
 * path_array, the progress trampoline). Called only by tswarp/_align.py's segmental_dtw,
 * which names and checks the arguments, so it takes them positionally:
 *
 *   _segmental_dtw(a, b, n_fragments, variant, n_chunks, step, cost, method, memory_limit,
 *                  device, n_jobs, progress, layout, accumulated)
 *     -> (path, starts, ends, costs, offsets, lengths)
 *
 * path is the (L, 2) int64 concatenation of the fragments' paths; the other five are (N,)
 * arrays: fragment f's reference start and end, cost, and its rows offsets[f] ..
 * offsets[f] + lengths[f] of path. variant: 0 none, 1 weak, 2 strict (tsw_segmental).
 * layout: a LAYOUT_* code (tswarp/_conventions.py checks the name); accumulated: 0 or 1, the
 * costs reported by dtw_path's rule (align_cost).
 */

static PyObject *py_segmental(PyObject *self, PyObject *args)
{
    PyObject *oa, *ob, *ostep, *ocost, *omethod, *olimit, *odevice, *ojobs, *oprog;
    long long n_fragments, n_chunks;
    int variant, layout, accumulated;
    PyObject *slot[K_COUNT] = {0};
    tsw_align_params ap;
    tsw_exec ex;
    PyArrayObject *a = NULL, *b = NULL;
    PyObject *bar = NULL, *result = NULL;
    int64_t *pairs = NULL;
    tsw_match *seg = NULL;
    int explicit_index, rc;
    int64_t na, nb, dim;
    tsw_dtype dt;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOLiLOOOOOOOii:_segmental_dtw", &oa, &ob, &n_fragments,
                          &variant, &n_chunks, &ostep, &ocost, &omethod, &olimit, &odevice,
                          &ojobs, &oprog, &layout, &accumulated))
        return NULL;
    slot[K_STEP] = ostep;
    slot[K_COST] = ocost;
    slot[K_METHOD] = omethod;
    slot[K_MEMORY_LIMIT] = olimit;
    slot[K_DEVICE] = odevice;
    slot[K_NJOBS] = ojobs;
    if (build_align_params("segmental_dtw", slot, &ap) < 0 || build_exec(slot, &ex, &explicit_index) < 0)
        return NULL;
    if (align_progress(oprog, "segmental_dtw", &bar) < 0)
        return NULL;
    if (align_inputs(oa, ob, "a", "b", layout, &a, &b, &dt, &na, &nb, &dim) < 0)
        goto done;
    tsw_segmental_params sp;
    tsw_segmental_params_default(&sp);
    sp.variant = (tsw_segmental)variant;
    sp.n_fragments = (int64_t)n_fragments;
    sp.n_chunks = (int64_t)n_chunks;
    /* range errors of n_fragments come from the library (with a detail); a capacity is
     * needed first, so only an impossible count is refused here */
    int64_t cap = n_fragments >= 1 && n_fragments <= na
                      ? tsw_segmental_path_max_length(ap.step, na, nb, sp.n_fragments)
                      : 1;
    if (cap == 0 || cap > (int64_t)(PY_SSIZE_T_MAX / 16)) {
        raise_too_big("the path", -1);
        goto done;
    }
    int64_t nseg = n_fragments >= 1 && n_fragments <= na ? (int64_t)n_fragments : 1;
    pairs = PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)cap);
    seg = PyMem_Malloc(sizeof(tsw_match) * (size_t)nseg);
    if (!pairs || !seg) {
        raise_too_big("the path and the segments",
                      16.0 * (double)cap + (double)sizeof(tsw_match) * (double)nseg);
        goto done;
    }
    tsw_series sa = {PyArray_DATA(a), na, NULL}, sb = {PyArray_DATA(b), nb, NULL};
    int64_t len = 0;
    const char *detail = NULL;
    progress_ctx ctx = {NULL, bar};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    rc = tsw_segmental_dtw(&ap, &sp, dt, dim, &sa, &sb, pairs, cap, &len, seg, &ex);
    detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        align_raise(rc, "segmental_dtw", &sa, &sb, "a", "b", dt, dim, detail);
        goto done;
    }
    npy_intp dims[1] = {(npy_intp)nseg};
    PyObject *pa = path_array(pairs, len);
    PyObject *st = PyArray_SimpleNew(1, dims, NPY_INT64), *en = PyArray_SimpleNew(1, dims, NPY_INT64);
    PyObject *co = PyArray_SimpleNew(1, dims, NPY_FLOAT64), *of = PyArray_SimpleNew(1, dims, NPY_INT64);
    PyObject *ln = PyArray_SimpleNew(1, dims, NPY_INT64);
    if (!pa || !st || !en || !co || !of || !ln) {
        Py_XDECREF(pa), Py_XDECREF(st), Py_XDECREF(en), Py_XDECREF(co), Py_XDECREF(of);
        Py_XDECREF(ln);
        goto done;
    }
    for (int64_t i = 0; i < nseg; ++i) {
        ((int64_t *)PyArray_DATA((PyArrayObject *)st))[i] = seg[i].start;
        ((int64_t *)PyArray_DATA((PyArrayObject *)en))[i] = seg[i].end;
        ((double *)PyArray_DATA((PyArrayObject *)co))[i] = align_cost(&ap, accumulated, seg[i].cost);
        ((int64_t *)PyArray_DATA((PyArrayObject *)of))[i] = seg[i].path_offset;
        ((int64_t *)PyArray_DATA((PyArrayObject *)ln))[i] = seg[i].path_length;
    }
    result = Py_BuildValue("(NNNNNN)", pa, st, en, co, of, ln);
done:
    progress_close(bar);
    Py_XDECREF(bar);
    PyMem_Free(pairs);
    PyMem_Free(seg);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return result;
}

PyDoc_STRVAR(segmental_doc,
"_segmental_dtw(a, b, n_fragments, variant, n_chunks, step, cost, method, memory_limit,\n"
"    device, n_jobs, progress, layout, accumulated)\n"
"--\n\n"
"Segmental DTW (see tswarp.segmental_dtw): (path, starts, ends, costs, offsets, lengths).\n");

#define TSW_SEGMENTAL_METHODS {"_segmental_dtw", py_segmental, METH_VARARGS, segmental_doc},
