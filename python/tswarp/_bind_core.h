/* _bind_core.h: what every binding shares: keyword names, errors, argument parsing, layout, arrays, progress and Ctrl-C, shared docstring pieces (included once by _tswarp.c, in order; one translation unit). */
#ifndef TSWARP__BIND_CORE_H
#define TSWARP__BIND_CORE_H

/* ---- keyword names ----------------------------------------------------------------------
 * Every argument of every function has an id; a call fills slot[id] with a borrowed
 * reference (NULL when not given). */
enum {
    K_A, K_B, K_X, K_Y, K_METRIC,
    K_COST, K_WINDOW, K_ITAKURA, K_ACCUMULATED, K_NU, K_LMBDA, K_P, K_TA, K_TB, K_GAMMA,
    K_NORMALIZE, K_TX, K_TY, K_G, K_WARP_PENALTY, K_EPSILON, K_C, K_INDEPENDENT,
    K_DEVICE, K_IMPL, K_CONDENSED, K_NJOBS, K_PROGRESS,
    K_STEP, K_METHOD, K_MEMORY_LIMIT, K_QUERY, K_REFERENCE, K_K, K_RETURN_PATH,
    K_RADIUS, K_LAYOUT,
    K_BOUND, K_BANDS, K_ZNORM, K_EXCLUSION, K_SERIES, K_LENGTH, K_AS_B,
    K_REACH, K_DESCRIPTOR, K_PAA_SEGMENTS,
    K_COUNT
};
static const char *const kw_names[K_COUNT] = {
    "a", "b", "X", "Y", "metric",
    "cost", "window", "itakura_max_slope", "accumulated", "nu", "lmbda", "p", "ta", "tb",
    "gamma", "normalize", "tx", "ty", "g", "warp_penalty", "epsilon", "c", "independent",
    "device", "_impl", "condensed", "n_jobs", "progress",
    "step", "method", "memory_limit", "query", "reference", "k", "return_path",
    "radius", "layout",
    "bound", "bands", "znorm", "exclusion", "series", "length", "as_b",
    "reach", "descriptor", "paa_segments",
};
static PyObject *kw_str[K_COUNT]; /* interned */

#define TSW__PY_MAX_DEVICES 64
#define BIT(k) (1ull << (k))
/* Parameters each measure owns; a metric's parameters given to another metric are errors. */
#define M_WINDOWS (BIT(K_WINDOW) | BIT(K_RADIUS) | BIT(K_ITAKURA))
#define M_DTW (M_WINDOWS | BIT(K_COST) | BIT(K_ACCUMULATED))
#define M_TWED (M_WINDOWS | BIT(K_NU) | BIT(K_LMBDA) | BIT(K_P) | BIT(K_TA) | BIT(K_TB) |  \
                BIT(K_TX) | BIT(K_TY))
#define M_SOFT (M_WINDOWS | BIT(K_GAMMA) | BIT(K_NORMALIZE))
#define M_WDTW (M_WINDOWS | BIT(K_G))
#define M_ADTW (M_WINDOWS | BIT(K_WARP_PENALTY))
#define M_ERP (M_WINDOWS | BIT(K_G))
#define M_EPS (M_WINDOWS | BIT(K_EPSILON))
#define M_MSM (M_WINDOWS | BIT(K_C) | BIT(K_INDEPENDENT))
#define M_SHAPE (M_WINDOWS | BIT(K_REACH) | BIT(K_DESCRIPTOR) | BIT(K_PAA_SEGMENTS))
#define M_ALL (M_DTW | M_TWED | M_SOFT | M_WDTW | M_ADTW | M_ERP | M_EPS | M_MSM | M_SHAPE)
/* The parameters of each tsw_measure, in its order. */
static const uint64_t measure_params[] = {M_DTW,  M_TWED, M_SOFT, M_WDTW, M_DTW, M_WDTW,
                                          M_ADTW, M_ERP,  M_EPS,  M_EPS,  M_MSM, M_SHAPE};
#define M_EXEC (BIT(K_DEVICE) | BIT(K_IMPL) | BIT(K_LAYOUT))
#define M_BATCH (M_EXEC | BIT(K_METRIC) | BIT(K_NJOBS) | BIT(K_PROGRESS))

static PyObject *NoDeviceError;
static PyObject *CudaError;
static int cuda_count_cached = -1; /* tsw_cuda_device_count, asked once per process */
static PyObject *str_cai, *str_dlpack_device; /* interned attribute names */
static PyObject *gpu_module;                 /* tswarp._gpu, imported on the first GPU input */

/* tsw_measure -> name, in the enum's order (tswarp.METRICS). */
static const char *const metric_names[] = {"dtw", "twed", "soft_dtw", "wdtw", "ddtw", "wddtw",
                                           "adtw", "erp", "edr", "lcss", "msm", "shape_dtw"};
#define N_METRICS 12

/* ---- errors ------------------------------------------------------------------------------ */

/* Raise the exception for a libtswarp status that no argument-specific check explained.
 * `detail` is tsw_last_error_detail() read right after the failing call (may be NULL or ""):
 * for CUDA failures it says what failed, e.g. how many bytes a cudaMalloc asked for. */
static void raise_status_detail(int rc, const char *fname, const char *detail)
{
    PyObject *type = PyExc_ValueError;
    if (rc == TSW_ENOMEM || rc == TSW_EOVERFLOW)
        type = PyExc_MemoryError;
    else if (rc == TSW_EDTYPE)
        type = PyExc_TypeError;
    else if (rc == TSW_ENODEV)
        type = NoDeviceError;
    else if (rc == TSW_ECUDA)
        type = CudaError;
    else if (rc == TSW_ENOTSUP)
        type = PyExc_NotImplementedError;
    else if (rc == TSW_ECANCELED && PyErr_Occurred())
        return; /* the progress callback's exception (KeyboardInterrupt) explains it */
    if (detail && *detail)
        PyErr_Format(type, "%s: %s (%s): %s", fname, tsw_strerror(rc), tsw_err_name(rc), detail);
    else
        PyErr_Format(type, "%s: %s (%s)", fname, tsw_strerror(rc), tsw_err_name(rc));
}

static void raise_status(int rc, const char *fname)
{
    raise_status_detail(rc, fname, tsw_last_error_detail());
}

/* MemoryError for an allocation of `bytes` (or an overflowing size when bytes < 0). */
static void raise_too_big(const char *what, double bytes)
{
    char msg[256];
    if (bytes < 0)
        PyOS_snprintf(msg, sizeof(msg), "%s: size overflows", what);
    else /* PyErr_Format has no float conversions */
        PyOS_snprintf(msg, sizeof(msg), "%s needs %.0f bytes (%.3g GiB)", what, bytes,
                      bytes / (1024.0 * 1024.0 * 1024.0));
    PyErr_SetString(PyExc_MemoryError, msg);
}

/* ---- argument parsing ---------------------------------------------------------------- */

typedef struct {
    const char *fname;
    int npos;    /* positional-or-keyword parameters, in order */
    int nreq;    /* how many of them are required */
    int pos[3];  /* their ids */
    uint64_t kw; /* keyword-only ids */
} signature;

static int kw_lookup(PyObject *key)
{
    for (int k = 0; k < K_COUNT; ++k)
        if (key == kw_str[k])
            return k;
    /* Names built at run time (**kwargs dicts) may not be the interned objects. */
    for (int k = 0; k < K_COUNT; ++k)
        if (PyUnicode_Compare(key, kw_str[k]) == 0)
            return k;
    if (PyErr_Occurred())
        PyErr_Clear();
    return -1;
}

static int parse_call(const signature *s, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, PyObject **slot)
{
    if (nargs > s->npos) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
                     s->fname, s->npos, nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i)
        slot[s->pos[i]] = args[i];
    if (kwnames) {
        Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t j = 0; j < nkw; ++j) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, j);
            int id = kw_lookup(key);
            int ok = id >= 0 && (s->kw & BIT(id));
            for (int i = 0; id >= 0 && i < s->npos; ++i)
                ok |= s->pos[i] == id;
            if (!ok) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
                             s->fname, key);
                return -1;
            }
            if (slot[id]) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                             s->fname, kw_names[id]);
                return -1;
            }
            slot[id] = args[nargs + j];
        }
    }
    for (int i = 0; i < s->nreq; ++i)
        if (!slot[s->pos[i]]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", s->fname,
                         kw_names[s->pos[i]]);
            return -1;
        }
    return 0;
}

static int given(PyObject *o) { return o && o != Py_None; }

/* Booleans of Python and NumPy, refused wherever a number is expected (window=True). */
static int is_boolish(PyObject *o) { return PyBool_Check(o) || PyArray_IsScalar(o, Bool); }

/* A real number (Python float/int, NumPy scalar) into *out; TypeError naming it otherwise
 * (bools, complex numbers and strings are not real numbers here; tswarp/_conventions.py
 * check_real is the Python side of the same rule). */
static int get_real(PyObject *o, const char *name, double *out)
{
    if (PyFloat_CheckExact(o)) {
        *out = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (PyUnicode_Check(o) || PyBytes_Check(o) || o == Py_None || is_boolish(o) ||
        PyComplex_Check(o) || PyArray_IsScalar(o, ComplexFloating)) {
        PyErr_Format(PyExc_TypeError, "%s must be a real number, got %R (%s)", name, o,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a real number, got %s", name,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *out = v;
    return 0;
}

/* A real parameter with a lower bound: lo <= v (strict: lo < v), finite. */
static int get_bounded(PyObject *o, const char *name, double lo, int strict, double *out)
{
    double v;
    if (get_real(o, name, &v) < 0)
        return -1;
    if (!isfinite(v) || v < lo || (strict && v == lo)) {
        /* PyErr_Format has no %g; the bounds used here are small integers. */
        PyErr_Format(PyExc_ValueError, "%s must be a finite number %s %d, got %R", name,
                     strict ? ">" : ">=", (int)lo, o);
        return -1;
    }
    *out = v;
    return 0;
}

/* True/False (NumPy's bool too); anything else ('no', 'False', 1) is a TypeError: a value
 * is never read for its truth (tswarp/_conventions.py check_bool is the Python side). */
static int get_bool(PyObject *o, const char *name, int *out)
{
    if (is_boolish(o)) {
        *out = PyObject_IsTrue(o);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s must be a bool, got %R (%s)", name, o,
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* Index of s in names[0..n), -1 when absent; -2 with TypeError when s is not a str. */
static int match_name(PyObject *s, const char *argname, const char *const *names, int n)
{
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, got %s", argname, Py_TYPE(s)->tp_name);
        return -2;
    }
    for (int i = 0; i < n; ++i)
        if (PyUnicode_CompareWithASCIIString(s, names[i]) == 0)
            return i;
    return -1;
}

/* metric -> measure; accepts the spellings of METRICS and a few common aliases. */
static int parse_metric(PyObject *o, tsw_measure *m)
{
    static const char *const names[] = {"dtw",  "twed", "soft_dtw", "wdtw", "ddtw",
                                        "wddtw", "adtw", "erp",      "edr",  "lcss",
                                        "msm",  "softdtw", "soft-dtw", "twe", "shape_dtw",
                                        "shapedtw"};
    static const tsw_measure ms[] = {TSW_DTW,  TSW_TWED,     TSW_SOFT_DTW, TSW_WDTW, TSW_DDTW,
                                     TSW_WDDTW, TSW_ADTW,    TSW_ERP,      TSW_EDR,  TSW_LCSS,
                                     TSW_MSM,  TSW_SOFT_DTW, TSW_SOFT_DTW, TSW_TWED,
                                     TSW_SHAPE_DTW, TSW_SHAPE_DTW};
    if (!o) {
        *m = TSW_DTW;
        return 0;
    }
    int i = match_name(o, "metric", names, 16);
    if (i == -2)
        return -1;
    if (i < 0) {
        PyErr_Format(PyExc_ValueError,
                     "metric must be one of 'dtw', 'twed', 'soft_dtw', 'wdtw', 'ddtw', 'wddtw', "
                     "'adtw', 'erp', 'edr', 'lcss', 'msm', 'shape_dtw' or a callable(a, b) -> "
                     "float, got %R",
                     o);
        return -1;
    }
    *m = ms[i];
    return 0;
}

/* The global constraint (tswarp/_conventions.py band() is the Python side of the same
 * rules and messages): one meaning per parameter, whatever the type of its value.
 *   radius            Sakoe-Chiba radius in cells: an int >= 0 (tslearn's
 *                     sakoe_chiba_radius; an integral float such as 10.0 is the same radius)
 *   window            a fraction of the shorter length in [0, 1] (aeon's window; 1 and 1.0
 *                     are both the full band)
 *   itakura_max_slope a real >= 1
 * At most one of them. */
static int parse_window(PyObject *w, PyObject *r, PyObject *slope, tsw_params *p)
{
    int nw = given(w), nr = given(r), ns = given(slope);
    if (nw + nr + ns > 1) {
        const char *names[3];
        int k = 0;
        if (nw)
            names[k++] = "window";
        if (nr)
            names[k++] = "radius";
        if (ns)
            names[k++] = "itakura_max_slope";
        PyErr_Format(PyExc_ValueError,
                     "give at most one of window (a fraction), radius (cells) and "
                     "itakura_max_slope; got %s and %s%s%s",
                     names[0], names[1], k == 3 ? " and " : "", k == 3 ? names[2] : "");
        return -1;
    }
    if (ns) {
        if (get_bounded(slope, "itakura_max_slope", 1.0, 0, &p->itakura_max_slope) < 0)
            return -1;
        p->window = TSW_WINDOW_ITAKURA;
        return 0;
    }
    if (nr) {
        if (is_boolish(r) || PyUnicode_Check(r) || PyComplex_Check(r) ||
            PyArray_IsScalar(r, ComplexFloating) ||
            !(PyLong_Check(r) || PyFloat_Check(r) || PyIndex_Check(r) ||
              PyArray_IsScalar(r, Floating))) {
            PyErr_Format(PyExc_TypeError,
                         "radius must be an int (a Sakoe-Chiba radius in cells), got %s",
                         Py_TYPE(r)->tp_name);
            return -1;
        }
        double v;
        if (PyLong_Check(r) || (PyIndex_Check(r) && !PyFloat_Check(r))) {
            PyObject *idx = PyNumber_Index(r);
            if (!idx)
                return -1;
            int overflow = 0;
            long long ll = PyLong_AsLongLongAndOverflow(idx, &overflow);
            Py_DECREF(idx);
            if (ll == -1 && PyErr_Occurred())
                return -1;
            v = overflow > 0 ? INFINITY : overflow < 0 ? -1.0 : (double)ll;
        } else {
            if (get_real(r, "radius", &v) < 0)
                return -1;
            if (!(isfinite(v) && v == floor(v))) {
                PyErr_Format(PyExc_ValueError,
                             "radius=%R: a radius is a whole number of cells; for a fraction "
                             "of the length pass window=%R",
                             r, r);
                return -1;
            }
        }
        if (v < 0) {
            PyErr_Format(PyExc_ValueError, "radius must be >= 0 (cells), got %R", r);
            return -1;
        }
        /* A radius beyond any representable length is no constraint at all. */
        if (v >= 9007199254740992.0)
            return 0;
        p->window = TSW_WINDOW_SAKOE_CHIBA;
        p->window_radius = v;
        return 0;
    }
    if (!nw)
        return 0;
    if (is_boolish(w) || PyUnicode_Check(w) || PyBytes_Check(w)) {
        PyErr_Format(PyExc_TypeError,
                     "window must be a real number in [0, 1] (a fraction of the shorter "
                     "length), got %s",
                     Py_TYPE(w)->tp_name);
        return -1;
    }
    double f;
    if (get_real(w, "window", &f) < 0)
        return -1;
    if (!(f >= 0.0 && f <= 1.0)) {
        PyErr_Format(PyExc_ValueError,
                     "window=%R: window is a fraction of the shorter length in [0, 1] (aeon's "
                     "window); for a Sakoe-Chiba radius in cells pass radius=%R",
                     w, w);
        return -1;
    }
    p->window = TSW_WINDOW_SAKOE_CHIBA_FRACTION;
    p->window_radius = f;
    return 0;
}

/* ---- layout ------------------------------------------------------------------------------
 * tswarp's layout is channels_last: a series (length, dim), a collection (n, length, dim).
 * layout='channels_first' reads aeon/sktime's (channels, length) and (n, channels, length)
 * by transposing (a copy); without layout, a 2-D series or 3-D collection whose last axis
 * is longer than 1 and at least as long as its time axis is refused (it may be the other
 * layout). tswarp/_conventions.py holds the same rules and messages for the Python side. */
enum { LAYOUT_GUARD = 0, LAYOUT_LAST = 1, LAYOUT_FIRST = 2 };

static int parse_layout(PyObject *o, int *code)
{
    *code = LAYOUT_GUARD;
    if (!given(o))
        return 0;
    int i = match_name(o, "layout", (const char *const[]){"channels_last", "channels_first"}, 2);
    if (i == -2)
        return -1;
    if (i < 0) {
        PyErr_Format(PyExc_ValueError,
                     "layout must be None, 'channels_last' (n_series, length, dim) or "
                     "'channels_first' (n_series, channels, length), got %R",
                     o);
        return -1;
    }
    *code = i == 0 ? LAYOUT_LAST : LAYOUT_FIRST;
    return 0;
}

/* The error for a shape that may be the other layout. */
static void layout_error(const char *label, PyArrayObject *a)
{
    PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
    long long r, c, n = 0;
    int coll = PyArray_NDIM(a) == 3;
    if (coll) {
        n = PyArray_DIM(a, 0), r = PyArray_DIM(a, 1), c = PyArray_DIM(a, 2);
        PyErr_Format(PyExc_ValueError,
                     "%s has shape %S, which tswarp's layout (n_series, length, dim) reads as "
                     "%lld series of length %lld with %lld dims. If it is aeon/sktime's "
                     "(n_series, channels, length), pass layout='channels_first'; if it is what "
                     "it says, pass layout='channels_last'",
                     label, shape ? shape : Py_None, n, r, c);
    } else {
        r = PyArray_DIM(a, 0), c = PyArray_DIM(a, 1);
        PyErr_Format(PyExc_ValueError,
                     "%s has shape %S, which tswarp's layout (length, dim) reads as %lld time "
                     "point%s of %lld dims. If it is aeon/sktime's (channels, length), pass "
                     "layout='channels_first'; if it is what it says, pass "
                     "layout='channels_last'",
                     label, shape ? shape : Py_None, r, r == 1 ? "" : "s", c);
    }
    Py_XDECREF(shape);
}

/* *a in tswarp's layout when it has nd dimensions (2: a series, 3: a collection):
 * transposed for channels_first (a view; to_dtype makes it contiguous), refused when
 * ambiguous without a layout. Other shapes are left to the callers' shape checks. */
static int apply_layout(PyArrayObject **a, const char *label, int code, int nd)
{
    if (PyArray_NDIM(*a) != nd)
        return 0;
    if (code == LAYOUT_FIRST) {
        npy_intp perm3[3] = {0, 2, 1}, perm2[2] = {1, 0};
        PyArray_Dims perm = {nd == 3 ? perm3 : perm2, nd};
        PyObject *t = PyArray_Transpose(*a, &perm);
        if (!t)
            return -1;
        Py_DECREF(*a);
        *a = (PyArrayObject *)t;
        return 0;
    }
    npy_intp r = PyArray_DIM(*a, nd - 2), c = PyArray_DIM(*a, nd - 1);
    if (code == LAYOUT_GUARD && c > 1 && c >= r) {
        layout_error(label, *a);
        return -1;
    }
    return 0;
}

/* An int argument in [lo, hi] (not a bool or a float: 1 and 1.0 never mean two things). */
static int get_int_range(PyObject *o, const char *name, long long lo, long long hi,
                         long long *out)
{
    if (!given(o))
        return 0;
    if (PyBool_Check(o) || PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, got %s", name, Py_TYPE(o)->tp_name);
        return -1;
    }
    int overflow = 0;
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return -1;
    long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    Py_DECREF(i);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (overflow || v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s must be in [%lld, %lld], got %R", name, lo, hi, o);
        return -1;
    }
    *out = v;
    return 0;
}

/* Fill params for a measure from the slots; parameters of other measures are TypeErrors. */
static int build_params(tsw_measure m, const char *fname, PyObject **slot, tsw_params *p)
{
    uint64_t own = measure_params[m];
    for (int k = 0; k < K_COUNT; ++k)
        if ((M_ALL & BIT(k)) && !(own & BIT(k)) && given(slot[k])) {
            PyErr_Format(PyExc_TypeError, "%s(): '%s' is not a parameter of metric '%s'", fname,
                         kw_names[k], metric_names[m]);
            return -1;
        }
    tsw_params_default(p, m);
    if (parse_window(slot[K_WINDOW], slot[K_RADIUS], slot[K_ITAKURA], p) < 0)
        return -1;
    switch (m) {
    case TSW_DTW:
    case TSW_DDTW:
        if (slot[K_COST]) {
            static const char *const names[] = {"sqeuclidean", "euclidean", "abs", "cosine",
                                                "cityblock", "l1", "manhattan"};
            static const tsw_cost costs[] = {TSW_COST_SQEUCLIDEAN, TSW_COST_EUCLIDEAN,
                                             TSW_COST_ABS, TSW_COST_COSINE, TSW_COST_ABS,
                                             TSW_COST_ABS, TSW_COST_ABS};
            int i = match_name(slot[K_COST], "cost", names, 7);
            if (i == -2)
                return -1;
            if (i < 0) {
                PyErr_Format(PyExc_ValueError,
                             "cost must be one of 'sqeuclidean', 'euclidean', 'abs', 'cosine', "
                             "got %R",
                             slot[K_COST]);
                return -1;
            }
            p->cost = costs[i];
        }
        if (slot[K_ACCUMULATED] && get_bool(slot[K_ACCUMULATED], "accumulated", &p->accumulated))
            return -1;
        break;
    case TSW_TWED:
        if (slot[K_NU] && get_bounded(slot[K_NU], "nu", 0.0, 0, &p->nu))
            return -1;
        if (slot[K_LMBDA] && get_bounded(slot[K_LMBDA], "lmbda", 0.0, 0, &p->lmbda))
            return -1;
        if (slot[K_P] && get_bounded(slot[K_P], "p", 1.0, 0, &p->p))
            return -1;
        break;
    case TSW_SOFT_DTW:
        if (slot[K_GAMMA] && get_bounded(slot[K_GAMMA], "gamma", 0.0, 1, &p->gamma))
            return -1;
        if (slot[K_NORMALIZE] && get_bool(slot[K_NORMALIZE], "normalize", &p->normalize))
            return -1;
        break;
    case TSW_WDTW:
    case TSW_WDDTW:
        if (slot[K_G] && get_bounded(slot[K_G], "g", 0.0, 0, &p->g))
            return -1;
        break;
    case TSW_ADTW:
        if (slot[K_WARP_PENALTY] &&
            get_bounded(slot[K_WARP_PENALTY], "warp_penalty", 0.0, 0, &p->warp_penalty))
            return -1;
        break;
    case TSW_ERP:
        if (slot[K_G]) {
            if (get_real(slot[K_G], "g", &p->erp_g) < 0)
                return -1;
            if (!isfinite(p->erp_g)) {
                PyErr_Format(PyExc_ValueError, "g must be a finite number, got %R", slot[K_G]);
                return -1;
            }
        }
        break;
    case TSW_EDR:
    case TSW_LCSS:
        /* EDR: None (the default) is aeon's max(std(a), std(b)) / 4 */
        if (slot[K_EPSILON] && !(m == TSW_EDR && slot[K_EPSILON] == Py_None) &&
            get_bounded(slot[K_EPSILON], "epsilon", 0.0, 0, &p->epsilon))
            return -1;
        break;
    case TSW_MSM:
        if (slot[K_C] && get_bounded(slot[K_C], "c", 0.0, 0, &p->c))
            return -1;
        if (slot[K_INDEPENDENT] &&
            get_bool(slot[K_INDEPENDENT], "independent", &p->msm_independent))
            return -1;
        break;
    case TSW_SHAPE_DTW: {
        long long v;
        if (given(slot[K_REACH])) {
            if (get_int_range(slot[K_REACH], "reach", 0, 100000, &v) < 0)
                return -1;
            p->reach = v;
        }
        if (given(slot[K_DESCRIPTOR])) {
            static const char *const names[] = {"identity", "paa"};
            int i = match_name(slot[K_DESCRIPTOR], "descriptor", names, 2);
            if (i == -2)
                return -1;
            if (i < 0) {
                PyErr_Format(PyExc_ValueError, "descriptor must be 'identity' or 'paa', got %R",
                             slot[K_DESCRIPTOR]);
                return -1;
            }
            p->descriptor = i == 1 ? TSW_SHAPE_PAA : TSW_SHAPE_IDENTITY;
        }
        if (given(slot[K_PAA_SEGMENTS])) {
            if (p->descriptor != TSW_SHAPE_PAA) {
                PyErr_SetString(PyExc_TypeError,
                                "paa_segments is a parameter of descriptor='paa' only");
                return -1;
            }
            if (get_int_range(slot[K_PAA_SEGMENTS], "paa_segments", 1, 2 * p->reach + 1, &v) < 0)
                return -1;
            p->paa_segments = v;
        } else if (p->descriptor == TSW_SHAPE_PAA && p->paa_segments > 2 * p->reach + 1) {
            p->paa_segments = 2 * p->reach + 1; /* the default 5 on a smaller neighbourhood */
        }
        break;
    }
    }
    return 0;
}

/* Usable CUDA devices: -1 without the backend, else tsw_cuda_device_count, asked once. */
static int cuda_count(void)
{
    if (!tsw_has_cuda())
        return -1;
    if (cuda_count_cached < 0) {
        int c = 0;
        if (tsw_cuda_device_count(&c) != TSW_OK)
            c = 0;
        cuda_count_cached = c;
    }
    return cuda_count_cached;
}

/* The device list of a call naming several GPUs (tsw_exec.devices points here until the call
 * returns; one call at a time per thread). */
static _Thread_local int device_list[TSW__PY_MAX_DEVICES];

/* One CUDA ordinal from "cuda:N" text (s points after "cuda:"), or -1. */
static long parse_ordinal(const char *d)
{
    long index = 0;
    if (!*d)
        return -1;
    for (; *d; ++d)
        if (*d < '0' || *d > '9' || index > 1000000)
            return -1;
        else
            index = index * 10 + (*d - '0');
    return index;
}

static int check_cuda(PyObject *o)
{
    if (!tsw_has_cuda()) {
        PyErr_Format(NoDeviceError,
                     "device=%R: this tswarp was built without the CUDA backend", o);
        return -1;
    }
    if (cuda_count() == 0) {
        PyErr_Format(NoDeviceError, "device=%R: no CUDA GPU was found (is the driver loaded?)",
                     o);
        return -1;
    }
    return 0;
}

static int bad_device(PyObject *o)
{
    PyErr_Format(PyExc_ValueError,
                 "device must be 'auto', 'cpu', 'cuda', 'cuda:N', 'cuda:all' or a list of GPUs "
                 "('cuda:N' or N), got %R", o);
    return -1;
}

/* device=[...]: several GPUs, each 'cuda:N' or an int N, distinct. */
static int parse_device_list(PyObject *o, tsw_exec *ex, int *explicit_index)
{
    PyObject *seq = PySequence_Fast(o, "device");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = -1;
    if (n < 1 || n > TSW__PY_MAX_DEVICES) {
        PyErr_Format(PyExc_ValueError, "device: a list of 1 to %d GPUs, got %zd entries",
                     TSW__PY_MAX_DEVICES, n);
        goto out;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        long index = -1;
        if (PyLong_Check(item) && !PyBool_Check(item)) {
            index = PyLong_AsLong(item);
            if (index == -1 && PyErr_Occurred())
                goto out;
        } else if (PyUnicode_Check(item)) {
            const char *s = PyUnicode_AsUTF8(item);
            if (!s)
                goto out;
            if (strncmp(s, "cuda:", 5) == 0)
                index = parse_ordinal(s + 5);
        } else {
            PyErr_Format(PyExc_TypeError, "device[%zd] must be 'cuda:N' or an int, got %s", i,
                         Py_TYPE(item)->tp_name);
            goto out;
        }
        if (index < 0) {
            PyErr_Format(PyExc_ValueError, "device[%zd] must be 'cuda:N' or an int N >= 0, got %R",
                         i, item);
            goto out;
        }
        if (index > 1000000) {
            PyErr_Format(NoDeviceError, "device[%zd]=%R: no such CUDA device", i, item);
            goto out;
        }
        for (Py_ssize_t j = 0; j < i; ++j)
            if (device_list[j] == (int)index) {
                PyErr_Format(PyExc_ValueError, "device: GPU %ld is listed twice", index);
                goto out;
            }
        device_list[i] = (int)index;
    }
    if (check_cuda(o))
        goto out;
    for (Py_ssize_t i = 0; i < n; ++i)
        if (device_list[i] >= cuda_count_cached) {
            PyErr_Format(NoDeviceError, "device[%zd]=%R: only %d CUDA device(s) found", i,
                         PySequence_Fast_GET_ITEM(seq, i), cuda_count_cached);
            goto out;
        }
    ex->device = TSW_DEVICE_CUDA;
    ex->device_index = device_list[0];
    if (n >= 2) {
        ex->devices = device_list;
        ex->n_devices = (int)n;
    }
    /* one GPU named: GPU arrays must live there; several: they may live on any GPU (staged
     * through the host, the results come back to their GPU) */
    *explicit_index = n >= 2 ? -1 : device_list[0];
    rc = 0;
out:
    Py_DECREF(seq);
    return rc;
}

/* device: "auto" | "cpu" | "cuda" | "cuda:N" | "cuda:all" | a list of GPUs (None = "auto").
 * An explicit CUDA request is checked here so the error says whether the backend or the GPU
 * is missing. *explicit_index gets N for "cuda:N" (the first of a list), else -1 (GPU arrays
 * must live on that GPU). Several GPUs: cdist, pdist, paired and knn share their work among
 * them (tsw_exec.n_devices); the other calls run on the first. */
static int parse_device(PyObject *o, tsw_exec *ex, int *explicit_index)
{
    *explicit_index = -1;
    if (!given(o))
        return 0;
    if (PyList_Check(o) || PyTuple_Check(o))
        return parse_device_list(o, ex, explicit_index);
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "device must be a str or a list of GPUs, got %s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    const char *s = PyUnicode_AsUTF8(o);
    if (!s)
        return -1;
    if (strcmp(s, "auto") == 0) {
        ex->device = TSW_DEVICE_AUTO;
        return 0;
    }
    if (strcmp(s, "cpu") == 0) {
        ex->device = TSW_DEVICE_CPU;
        return 0;
    }
    long index = 0;
    if (strncmp(s, "cuda", 4) != 0)
        return bad_device(o);
    int all = strcmp(s, "cuda:all") == 0;
    if (s[4] == ':' && !all) {
        if ((index = parse_ordinal(s + 5)) < 0)
            return bad_device(o);
    } else if (s[4] && !all) {
        return bad_device(o);
    }
    if (check_cuda(o))
        return -1;
    if (index >= cuda_count_cached) {
        PyErr_Format(NoDeviceError, "device=%R: only %d CUDA device(s) found", o,
                     cuda_count_cached);
        return -1;
    }
    ex->device = TSW_DEVICE_CUDA;
    ex->device_index = (int)index;
    if (all && cuda_count_cached >= 2)
        ex->n_devices = TSW_ALL_DEVICES;
    if (s[4] == ':' && !all)
        *explicit_index = (int)index;
    return 0;
}

static int build_exec(PyObject **slot, tsw_exec *ex, int *explicit_index)
{
    tsw_exec_default(ex);
    *explicit_index = -1;
    if (slot[K_DEVICE] && parse_device(slot[K_DEVICE], ex, explicit_index))
        return -1;
    if (slot[K_IMPL]) {
        static const char *const names[] = {"auto", "reference", "scalar"};
        static const tsw_impl impls[] = {TSW_IMPL_AUTO, TSW_IMPL_REFERENCE, TSW_IMPL_SCALAR};
        int i = match_name(slot[K_IMPL], "_impl", names, 3);
        if (i == -2)
            return -1;
        if (i < 0) {
            PyErr_Format(PyExc_ValueError, "_impl must be 'auto', 'reference' or 'scalar', got %R",
                         slot[K_IMPL]);
            return -1;
        }
        ex->impl = impls[i];
    }
    PyObject *nj = slot[K_NJOBS];
    if (given(nj)) {
        if (PyBool_Check(nj) || !PyIndex_Check(nj) || PyFloat_Check(nj)) {
            PyErr_Format(PyExc_TypeError, "n_jobs must be None or an int, got %s",
                         Py_TYPE(nj)->tp_name);
            return -1;
        }
        PyObject *idx = PyNumber_Index(nj);
        if (!idx)
            return -1;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
        Py_DECREF(idx);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (overflow > 0 || v > INT_MAX)
            v = INT_MAX;
        if (overflow < 0 || v == 0 || v < -1) {
            PyErr_Format(PyExc_ValueError,
                         "n_jobs must be None or -1 (all cores) or a positive int, got %R", nj);
            return -1;
        }
        ex->n_threads = v == -1 ? 0 : (int)v;
    }
    return 0;
}

/* ---- arrays -------------------------------------------------------------------------- */

/* Any array-like into an ndarray (new reference), dtype untouched. `name` and `index`
 * (>= 0 for an element of a collection) name it in messages. */
static PyArrayObject *as_array(PyObject *o, const char *name, Py_ssize_t index)
{
    if (PyArray_Check(o)) {
        Py_INCREF(o);
        return (PyArrayObject *)o;
    }
    PyObject *arr = PyArray_FromAny(o, NULL, 0, 0, 0, NULL);
    if (arr)
        return (PyArrayObject *)arr;
    /* A PyTorch CPU tensor that requires grad refuses numpy(): read it detached, as GPU
     * tensors are (there is no autograd through these functions; tswarp.torch has it). */
    if (PyErr_ExceptionMatches(PyExc_RuntimeError) && PyObject_HasAttrString(o, "detach")) {
        PyErr_Clear();
        PyObject *det = PyObject_CallMethod(o, "detach", NULL);
        if (!det)
            return NULL;
        arr = PyArray_FromAny(det, NULL, 0, 0, 0, NULL);
        Py_DECREF(det);
        if (arr)
            return (PyArrayObject *)arr;
    }
    /* Say which argument numpy could not convert (e.g. an inhomogeneous nested list). */
    if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (index >= 0)
            PyErr_Format(type, "%s[%zd] could not be converted to an array of real numbers: %S",
                         name, index, value);
        else
            PyErr_Format(type, "%s could not be converted to an array of real numbers: %S",
                         name, value);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    return NULL;
}

/* The precision an input asks for: floats keep theirs (float16 -> float32, long double ->
 * float64), integers and bools compute in float64. -1 with TypeError for anything else. */
static int dtype_class(PyArrayObject *a, const char *name, Py_ssize_t index)
{
    PyArray_Descr *d = PyArray_DESCR(a);
    switch (d->kind) {
    case 'b':
    case 'i':
    case 'u':
        return TSW_F64;
    case 'f':
        return PyArray_ITEMSIZE(a) <= 4 ? TSW_F32 : TSW_F64;
    default:
        if (index >= 0)
            PyErr_Format(PyExc_TypeError,
                         "%s[%zd] has dtype %S; tswarp needs real numbers (float, int or bool)",
                         name, index, (PyObject *)d);
        else
            PyErr_Format(PyExc_TypeError,
                         "%s has dtype %S; tswarp needs real numbers (float, int or bool)", name,
                         (PyObject *)d);
        return -1;
    }
}

/* Replace *a by a C-contiguous, aligned, native-order array of dtype (a no-op for arrays
 * that already are). Non-contiguous and negative-stride views are copied here. */
static int to_dtype(PyArrayObject **a, tsw_dtype dt)
{
    int typenum = dt == TSW_F32 ? NPY_FLOAT32 : NPY_FLOAT64;
    if (PyArray_TYPE(*a) == typenum && PyArray_ISCARRAY_RO(*a))
        return 0;
    PyObject *c = PyArray_FromArray(*a, PyArray_DescrFromType(typenum),
                                    NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST);
    if (!c)
        return -1;
    Py_DECREF(*a);
    *a = (PyArrayObject *)c;
    return 0;
}

/* Index of the first non-finite value in v[0..n), or -1. */
static int64_t first_nonfinite(const void *v, tsw_dtype dt, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (dt == TSW_F32 ? !isfinite(((const float *)v)[i]) : !isfinite(((const double *)v)[i]))
            return i;
    return -1;
}

/* Timestamps t[0..n): 0 when finite and strictly increasing; else sets a ValueError naming
 * `label` (e.g. "ta" or "tx[3]") and returns -1. */
static int check_times(const void *t, tsw_dtype dt, int64_t n, const char *label)
{
    int64_t bad = first_nonfinite(t, dt, n);
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError, "%s contains NaN or infinity (at index %lld)", label,
                     (long long)bad);
        return -1;
    }
    for (int64_t i = 1; i < n; ++i) {
        double prev = dt == TSW_F32 ? ((const float *)t)[i - 1] : ((const double *)t)[i - 1];
        double cur = dt == TSW_F32 ? ((const float *)t)[i] : ((const double *)t)[i];
        if (!(cur > prev)) {
            char *sc = PyOS_double_to_string(cur, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
            char *sp = PyOS_double_to_string(prev, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
            PyErr_Format(PyExc_ValueError,
                         "%s must be strictly increasing, but %s[%lld] = %s <= %s[%lld] = %s%s",
                         label, label, (long long)i, sc ? sc : "?", label, (long long)(i - 1),
                         sp ? sp : "?", dt == TSW_F32 ? " (after conversion to float32)" : "");
            PyMem_Free(sc);
            PyMem_Free(sp);
            return -1;
        }
    }
    return 0;
}

/* ---- progress and Ctrl-C --------------------------------------------------------------
 * libtswarp calls the trampoline from the calling thread only, every ~50 ms, while the GIL
 * is released. It takes the GIL back with the thread state saved at release, runs pending
 * signal handlers (SIGINT raises KeyboardInterrupt here) and the user's callback; either
 * raising cancels the C call, which returns TSW_ECANCELED with the exception still set. */
typedef struct {
    PyThreadState *tstate;
    PyObject *callback; /* borrowed; NULL = signals only */
} progress_ctx;

static int progress_trampoline(void *user, int64_t done, int64_t total)
{
    progress_ctx *ctx = user;
    int stop = 0;
    PyEval_RestoreThread(ctx->tstate);
    if (PyErr_Occurred()) {
        /* an earlier call stopped the work: the library may poll again before it returns,
         * and Python code must not run with that exception pending */
        stop = 1;
    } else if (PyErr_CheckSignals() < 0) {
        stop = 1;
    } else if (ctx->callback) {
        PyObject *r = PyObject_CallFunction(ctx->callback, "LL", (long long)done,
                                            (long long)total);
        if (!r)
            stop = 1;
        Py_XDECREF(r);
    }
    ctx->tstate = PyEval_SaveThread();
    return stop;
}

/* ---- docstring pieces shared by the capabilities' docstrings ------------------------------ */

#define DOC_SERIES                                                                          \
    "a, b : array_like, shape (len,) or (len, d)\n"                                         \
    "    Two series of real numbers, of any lengths and the same dimension d. Computed\n"   \
    "    in float32 when both are float32 (float16 counts as float32), else float64.\n"     \
    "    Non-contiguous views are accepted. CuPy arrays and PyTorch CUDA tensors\n"         \
    "    (float32 or float64) are used in place on their GPU (see `device`).\n"             \
    DOC_LAYOUT("(len, d)", "(d, len)")

#define DOC_LAYOUT(ours, theirs)                                                            \
    "layout : {None, 'channels_last', 'channels_first'}, default None\n"                    \
    "    How the arrays are laid out. tswarp's layout is channels_last " ours ";\n"         \
    "    'channels_first' reads aeon/sktime's " theirs ". None reads channels_last\n"       \
    "    but refuses, with a ValueError naming the argument, a shape that may be the\n"    \
    "    other layout: a last axis longer than 1 and at least as long as the time axis\n" \
    "    (aeon's univariate (n, 1, len), say).\n"

#define DOC_WINDOW                                                                          \
    "window : float in [0, 1], optional\n"                                                  \
    "    Sakoe-Chiba band as a fraction of the shorter length (aeon's `window`): radius\n"  \
    "    floor(window * min(len(a), len(b))); 1 (or 1.0) is the full band. Never a\n"       \
    "    count of cells, whatever its type: a value above 1 is a ValueError.\n"             \
    "radius : int, optional\n"                                                              \
    "    Sakoe-Chiba radius in cells (tslearn's `sakoe_chiba_radius`; dtaidistance's\n"     \
    "    `window` is radius + 1), widened for unequal lengths as tslearn does.\n"           \
    "itakura_max_slope : float, optional\n"                                                  \
    "    Itakura parallelogram with this maximum slope (>= 1), as in tslearn; +inf\n"        \
    "    when it admits no path. At most one of window, radius, itakura_max_slope.\n"

#define DOC_DEVICE                                                                          \
    "device : {'auto', 'cpu', 'cuda', 'cuda:N'}, default 'auto'\n"                           \
    "    Where to compute. Host inputs (numpy, lists): 'auto' uses a GPU when the CUDA\n"   \
    "    backend is built, a GPU is present and the work is large enough, else the CPU;\n"  \
    "    'cuda' copies them to the GPU and the result back. GPU arrays (CuPy, PyTorch\n"     \
    "    CUDA tensors, any __cuda_array_interface__ or DLPack CUDA array) are computed\n"   \
    "    in place on the GPU they live on, on their library's current stream: 'auto'\n"    \
    "    and 'cuda' use that GPU, 'cuda:N' must name it, 'cpu' is a ValueError, and so\n"  \
    "    is a host argument beside GPU ones. Several GPUs: 'cuda:all' or a list\n"          \
    "    (['cuda:0', 'cuda:1'] or [0, 1]): cdist, pdist, paired, knn and search share\n"  \
    "    their work among them (tiles balanced by cells, one host thread a device, the\n"  \
    "    values of one GPU bit for bit); GPU arrays may then live on any GPU: they are\n"  \
    "    staged through host memory and the result comes back to their GPU (the call\n"   \
    "    waits for it). The other calls run on the first GPU of the list.\n"

#define DOC_RAISES                                                                          \
    "Raises\n"                                                                               \
    "------\n"                                                                               \
    "ValueError\n"                                                                           \
    "    Empty series, NaN or infinity, mismatched dimensions, wrong ndim, or a\n"           \
    "    parameter out of range; the message names the argument.\n"                         \
    "TypeError\n"                                                                            \
    "    Non-numeric input (object, str, complex) or an unknown keyword.\n"                  \
    "    GPU arrays of another dtype than float32/float64 are a TypeError.\n"              \
    "NoDeviceError\n"                                                                        \
    "    device='cuda' without the CUDA backend or without a GPU.\n"                          \
    "MemoryError\n"                                                                          \
    "    The output or the GPU workspace does not fit; the message gives the bytes.\n"      \
    "CudaError\n"                                                                            \
    "    A CUDA runtime error (a RuntimeError; the message carries CUDA's).\n"

#endif
