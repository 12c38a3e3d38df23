/*
 * Binding of the soft-DTW gradients (tsw_soft_dtw_grad, tsw_soft_dtw_cost_grad and their
 * *_device twins), included by _tswarp.c after raise_status. One raw entry point per
 * function, taking integer addresses, so that numpy arrays (tswarp/_sdtw.py) and PyTorch
 * tensors of the CPU or of a GPU (tswarp/torch.py, data_ptr()) share it without copies.
 * The callers own the buffers and have checked their shapes and dtypes; these functions
 * only forward them (address 0 = NULL), with the GIL released.
 *
 *   _soft_dtw_grad_raw(x, y, values, grad_x, grad_y, dtype, dim, count, n, m,
 *                      lengths_x, lengths_y, gamma, window_kind, window, normalize,
 *                      on_device, stream, device_index, n_threads[, workspace,
 *                      workspace_bytes, query, devices])
 *     x: (count, n, dim) and y: (count, m, dim) C-contiguous of dtype (0 float32,
 *     1 float64); values (count,); grad_x / grad_y like x / y or 0; lengths_x / lengths_y
 *     0 or host int64 (count,) arrays (series k is x[k, :lengths_x[k]]).
 *     window_kind: 0 none, 1 Sakoe-Chiba radius in cells, 2 fraction of the shorter length,
 *     3 Itakura with maximum slope `window` (tsw_window; tswarp/_conventions.py band()).
 *   _soft_dtw_cost_grad_raw(cost, values, grad_cost, dtype, count, n, m, lengths_x,
 *                           lengths_y, gamma, window_kind, window, on_device, stream,
 *                           device_index, n_threads[, workspace, workspace_bytes,
 *                           query])
 *   workspace, workspace_bytes: device memory for the *_device call's temporaries (0: the
 *   library allocates its own); query = True returns those bytes instead of computing
 *   (tsw_soft_dtw_*grad_workspace_size; the value and output addresses may then be 0, a
 *   non-zero gradient address only says that the gradient is wanted).
 *   devices: None, or 'cuda:all' / a list of GPUs (tsw_exec.n_devices): a batch of device
 *   arrays spread over those GPUs (staged through the host, results on device_index).
 */

static int sdtw_raw_params(double gamma, int window_kind, double window, int normalize,
                           tsw_params *p)
{
    tsw_params_default(p, TSW_SOFT_DTW);
    p->gamma = gamma;
    p->normalize = normalize;
    if (window_kind < 0 || window_kind > 3) {
        PyErr_SetString(PyExc_ValueError, "window_kind must be 0, 1, 2 or 3");
        return -1;
    }
    p->window = (tsw_window)window_kind;
    if (window_kind == TSW_WINDOW_ITAKURA)
        p->itakura_max_slope = window;
    else
        p->window_radius = window_kind ? window : 0;
    return 0;
}

static void sdtw_raw_exec(int on_device, unsigned long long stream, int device_index,
                          int n_threads, tsw_exec *ex)
{
    tsw_exec_default(ex); /* (workspace: set by the callers from their optional arguments) */
    ex->n_threads = n_threads > 0 ? n_threads : 0;
    ex->device = on_device ? TSW_DEVICE_CUDA : TSW_DEVICE_CPU;
    ex->device_index = device_index;
    ex->cuda_stream = (void *)(uintptr_t)stream;
    ex->cuda_async = on_device != 0; /* stream-ordered, as PyTorch's own operations */
}

static PyObject *py_soft_dtw_grad_raw(PyObject *self, PyObject *args)
{
    unsigned long long px, py, pv, pgx, pgy, plx, ply, stream, ws = 0, ws_bytes = 0;
    int dtype, window_kind, normalize, on_device, device_index, n_threads, query = 0;
    long long dim, count, n, m;
    double gamma, window;
    PyObject *devices = Py_None;
    (void)self;
    if (!PyArg_ParseTuple(args, "KKKKKiLLLLKKdidipKii|KKpO:_soft_dtw_grad_raw", &px, &py, &pv,
                          &pgx, &pgy, &dtype, &dim, &count, &n, &m, &plx, &ply, &gamma,
                          &window_kind, &window, &normalize, &on_device, &stream,
                          &device_index, &n_threads, &ws, &ws_bytes, &query, &devices))
        return NULL;
    tsw_params p;
    tsw_exec ex;
    if (sdtw_raw_params(gamma, window_kind, window, normalize, &p) < 0)
        return NULL;
    sdtw_raw_exec(on_device, stream, device_index, n_threads, &ex);
    if (devices != Py_None) { /* several GPUs: their list (device_list, this thread's) */
        tsw_exec many;
        int explicit_index;
        tsw_exec_default(&many);
        if (parse_device(devices, &many, &explicit_index) < 0)
            return NULL;
        ex.devices = many.devices;
        ex.n_devices = many.n_devices;
    }
    ex.cuda_workspace = (void *)(uintptr_t)ws;
    ex.cuda_workspace_bytes = (size_t)ws_bytes;
    if (count < 1 || n < 1 || m < 1 || dim < 1 || (size_t)count > PY_SSIZE_T_MAX / 16) {
        PyErr_SetString(PyExc_ValueError, "_soft_dtw_grad_raw: empty or impossible shape");
        return NULL;
    }
    /* ragged lengths in a padded batch: series k starts at row k n (resp. k m) */
    int64_t *off = NULL;
    if (plx || ply) {
        off = PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)count);
        if (!off)
            return PyErr_NoMemory();
        for (int64_t k = 0; k < count; ++k) {
            off[k] = k * n;
            off[count + k] = k * m;
        }
    }
    tsw_collection cx = {(const void *)(uintptr_t)px, plx ? off : NULL,
                         (const int64_t *)(uintptr_t)plx, n, count, NULL};
    tsw_collection cy = {(const void *)(uintptr_t)py, ply ? off + count : NULL,
                         (const int64_t *)(uintptr_t)ply, m, count, NULL};
    tsw_dtype dt = dtype == 0 ? TSW_F32 : TSW_F64;
    int rc;
    if (query) {
        /* the bytes of device workspace the call needs (grad_x/grad_y: wanted or not) */
        size_t bytes = 0;
        rc = tsw_soft_dtw_grad_workspace_size(&p, dt, dim, &cx, &cy, pgx != 0, pgy != 0, &ex,
                                              &bytes);
        PyMem_Free(off);
        if (rc) {
            raise_status(rc, "soft_dtw_grad");
            return NULL;
        }
        return PyLong_FromSize_t(bytes);
    }
    /* host calls poll for Ctrl-C between pairs (stream-ordered device calls do not wait) */
    progress_ctx ctx = {NULL, NULL};
    if (!on_device) {
        ex.progress = progress_trampoline;
        ex.progress_user = &ctx;
    }
    ctx.tstate = PyEval_SaveThread();
    if (on_device)
        rc = tsw_soft_dtw_grad_device(&p, dt, dim, &cx, &cy, (void *)(uintptr_t)pv,
                                      (void *)(uintptr_t)pgx, (void *)(uintptr_t)pgy, &ex);
    else
        rc = tsw_soft_dtw_grad(&p, dt, dim, &cx, &cy, (void *)(uintptr_t)pv,
                               (void *)(uintptr_t)pgx, (void *)(uintptr_t)pgy, &ex);
    PyEval_RestoreThread(ctx.tstate);
    PyMem_Free(off);
    if (rc) {
        raise_status(rc, "soft_dtw_grad");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_soft_dtw_cost_grad_raw(PyObject *self, PyObject *args)
{
    unsigned long long pc, pv, pg, plx, ply, stream, ws = 0, ws_bytes = 0;
    int dtype, window_kind, on_device, device_index, n_threads, query = 0;
    long long count, n, m;
    double gamma, window;
    (void)self;
    if (!PyArg_ParseTuple(args, "KKKiLLLKKdidpKii|KKp:_soft_dtw_cost_grad_raw", &pc, &pv, &pg,
                          &dtype, &count, &n, &m, &plx, &ply, &gamma, &window_kind, &window,
                          &on_device, &stream, &device_index, &n_threads, &ws, &ws_bytes,
                          &query))
        return NULL;
    tsw_params p;
    tsw_exec ex;
    if (sdtw_raw_params(gamma, window_kind, window, 0, &p) < 0)
        return NULL;
    sdtw_raw_exec(on_device, stream, device_index, n_threads, &ex);
    ex.cuda_workspace = (void *)(uintptr_t)ws;
    ex.cuda_workspace_bytes = (size_t)ws_bytes;
    tsw_dtype dt = dtype == 0 ? TSW_F32 : TSW_F64;
    int rc;
    if (query) {
        size_t bytes = 0;
        rc = tsw_soft_dtw_cost_grad_workspace_size(&p, dt, count, n, m,
                                                   (const int64_t *)(uintptr_t)plx,
                                                   (const int64_t *)(uintptr_t)ply, pg != 0,
                                                   &ex, &bytes);
        if (rc) {
            raise_status(rc, "soft_dtw_cost_grad");
            return NULL;
        }
        return PyLong_FromSize_t(bytes);
    }
    progress_ctx ctx = {NULL, NULL};
    if (!on_device) {
        ex.progress = progress_trampoline;
        ex.progress_user = &ctx;
    }
    ctx.tstate = PyEval_SaveThread();
    if (on_device)
        rc = tsw_soft_dtw_cost_grad_device(&p, dt, count, n, m, (const int64_t *)(uintptr_t)plx,
                                           (const int64_t *)(uintptr_t)ply,
                                           (const void *)(uintptr_t)pc, (void *)(uintptr_t)pv,
                                           (void *)(uintptr_t)pg, &ex);
    else
        rc = tsw_soft_dtw_cost_grad(&p, dt, count, n, m, (const int64_t *)(uintptr_t)plx,
                                    (const int64_t *)(uintptr_t)ply, (const void *)(uintptr_t)pc,
                                    (void *)(uintptr_t)pv, (void *)(uintptr_t)pg, &ex);
    PyEval_RestoreThread(ctx.tstate);
    if (rc) {
        raise_status(rc, "soft_dtw_cost_grad");
        return NULL;
    }
    Py_RETURN_NONE;
}

#define TSW_SDTW_GRAD_METHODS                                                                 \
    {"_soft_dtw_grad_raw", py_soft_dtw_grad_raw, METH_VARARGS,                                \
     "Soft-DTW values and gradients on raw addresses (see tswarp.soft_dtw_grad)."},          \
        {"_soft_dtw_cost_grad_raw", py_soft_dtw_cost_grad_raw, METH_VARARGS,                  \
         "Soft-DTW of cost matrices with their gradient, on raw addresses."},
