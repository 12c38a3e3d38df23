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

/* ---- keyword names ----------------------------------------------------------------------
 * Every argument of every function has an id; a call fills slot[id] with a borrowed
 * reference (NULL when not given). */
enum {
    K_A, K_B, K_X, K_Y, K_METRIC,
    K_COST, K_WINDOW, K_ITAKURA, K_ACCUMULATED, K_NU, K_LMBDA, K_P, K_TA, K_TB, K_GAMMA,
    K_NORMALIZE, K_TX, K_TY,
    K_DEVICE, K_IMPL, K_CONDENSED, K_NJOBS, K_PROGRESS,
    K_STEP, K_METHOD, K_MEMORY_LIMIT, K_QUERY, K_REFERENCE, K_K, K_RETURN_PATH,
    K_RADIUS, K_LAYOUT,
    K_COUNT
};
static const char *const kw_names[K_COUNT] = {
    "a", "b", "X", "Y", "metric",
    "cost", "window", "itakura_max_slope", "accumulated", "nu", "lmbda", "p", "ta", "tb",
    "gamma", "normalize", "tx", "ty",
    "device", "_impl", "condensed", "n_jobs", "progress",
    "step", "method", "memory_limit", "query", "reference", "k", "return_path",
    "radius", "layout",
};
static PyObject *kw_str[K_COUNT]; /* interned */

#define BIT(k) (1u << (k))
/* Parameters each measure owns; a metric's parameters given to another metric are errors. */
#define M_WINDOWS (BIT(K_WINDOW) | BIT(K_RADIUS) | BIT(K_ITAKURA))
#define M_DTW (M_WINDOWS | BIT(K_COST) | BIT(K_ACCUMULATED))
#define M_TWED (M_WINDOWS | BIT(K_NU) | BIT(K_LMBDA) | BIT(K_P) | BIT(K_TA) | BIT(K_TB) |  \
                BIT(K_TX) | BIT(K_TY))
#define M_SOFT (M_WINDOWS | BIT(K_GAMMA) | BIT(K_NORMALIZE))
#define M_ALL (M_DTW | M_TWED | M_SOFT)
#define M_EXEC (BIT(K_DEVICE) | BIT(K_IMPL) | BIT(K_LAYOUT))
#define M_BATCH (M_EXEC | BIT(K_METRIC) | BIT(K_NJOBS) | BIT(K_PROGRESS))

static PyObject *NoDeviceError;
static PyObject *CudaError;
static int cuda_count_cached = -1; /* tsw_cuda_device_count, asked once per process */
static PyObject *str_cai, *str_dlpack_device; /* interned attribute names */
static PyObject *gpu_module;                 /* tswarp._gpu, imported on the first GPU input */

static const char *const metric_names[] = {"dtw", "twed", "soft_dtw"};

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
    uint32_t kw; /* keyword-only ids */
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
    static const char *const names[] = {"dtw", "twed", "soft_dtw", "softdtw", "soft-dtw", "twe"};
    static const tsw_measure ms[] = {TSW_DTW, TSW_TWED, TSW_SOFT_DTW, TSW_SOFT_DTW,
                                     TSW_SOFT_DTW, TSW_TWED};
    if (!o) {
        *m = TSW_DTW;
        return 0;
    }
    int i = match_name(o, "metric", names, 6);
    if (i == -2)
        return -1;
    if (i < 0) {
        PyErr_Format(PyExc_ValueError,
                     "metric must be one of 'dtw', 'twed', 'soft_dtw' or a callable(a, b) -> "
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

/* Fill params for a measure from the slots; parameters of other measures are TypeErrors. */
static int build_params(tsw_measure m, const char *fname, PyObject **slot, tsw_params *p)
{
    uint32_t own = m == TSW_DTW ? M_DTW : m == TSW_TWED ? M_TWED : M_SOFT;
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

/* device: "auto" | "cpu" | "cuda" | "cuda:N" (None = "auto"). An explicit CUDA request is
 * checked here so the error says whether the backend or the GPU is missing. *explicit_index
 * gets N for "cuda:N", else -1 (GPU arrays must live on that GPU). */
static int parse_device(PyObject *o, tsw_exec *ex, int *explicit_index)
{
    *explicit_index = -1;
    if (!given(o))
        return 0;
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "device must be a str, got %s", Py_TYPE(o)->tp_name);
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
        goto bad;
    if (s[4] == ':') {
        const char *d = s + 5;
        if (!*d)
            goto bad;
        for (; *d; ++d)
            if (*d < '0' || *d > '9' || index > 1000000)
                goto bad;
            else
                index = index * 10 + (*d - '0');
    } else if (s[4]) {
        goto bad;
    }
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
    if (index >= cuda_count_cached) {
        PyErr_Format(NoDeviceError, "device=%R: only %d CUDA device(s) found", o,
                     cuda_count_cached);
        return -1;
    }
    ex->device = TSW_DEVICE_CUDA;
    ex->device_index = (int)index;
    if (s[4] == ':')
        *explicit_index = (int)index;
    return 0;
bad:
    PyErr_Format(PyExc_ValueError, "device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got %R", o);
    return -1;
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

/* ---- GPU arrays --------------------------------------------------------------------------
 * An argument that is not a numpy array but whose type has __cuda_array_interface__ (CuPy,
 * torch, numba) or __dlpack_device__ may live in GPU memory: tswarp._gpu then decides (a
 * torch CPU tensor is host memory and takes the numpy path), checks devices, dtypes and
 * shapes, prepares contiguous buffers and the output with the inputs' own library, and hands
 * back device pointers for the tsw_*_device calls made here with the GIL released. */

static int maybe_gpu(PyObject *o)
{
    if (!o || o == Py_None || PyArray_Check(o) || PyFloat_Check(o) || PyLong_Check(o) ||
        PyList_Check(o) || PyTuple_Check(o) || PyUnicode_Check(o))
        return 0;
    PyObject *type = (PyObject *)Py_TYPE(o);
    return PyObject_HasAttr(type, str_cai) || PyObject_HasAttr(type, str_dlpack_device);
}

/* A collection argument: one array, or a list/tuple/1-D object array of series. */
static int coll_maybe_gpu(PyObject *o)
{
    if (!o || o == Py_None)
        return 0;
    if (PyList_Check(o) || PyTuple_Check(o)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        PyObject **items = PySequence_Fast_ITEMS(o);
        for (Py_ssize_t i = 0; i < n; ++i)
            if (maybe_gpu(items[i]))
                return 1;
        return 0;
    }
    if (PyArray_Check(o)) {
        PyArrayObject *a = (PyArrayObject *)o;
        if (PyArray_TYPE(a) != NPY_OBJECT || PyArray_NDIM(a) != 1)
            return 0;
        for (npy_intp i = 0; i < PyArray_DIM(a, 0); ++i)
            if (maybe_gpu(*(PyObject **)PyArray_GETPTR1(a, i)))
                return 1;
        return 0;
    }
    return maybe_gpu(o);
}

/* tswarp._gpu.<name>(*args) as a new reference; NULL with the exception set. */
static PyObject *gpu_call(const char *name, const char *format, ...)
{
    if (!gpu_module && !(gpu_module = PyImport_ImportModule("tswarp._gpu")))
        return NULL;
    PyObject *fn = PyObject_GetAttrString(gpu_module, name);
    if (!fn)
        return NULL;
    va_list va;
    va_start(va, format);
    PyObject *args = Py_VaBuildValue(format, va);
    va_end(va);
    PyObject *r = NULL;
    if (args) {
        r = PyObject_CallObject(fn, args);
        Py_DECREF(args);
    }
    Py_DECREF(fn);
    return r;
}

/* The head of a plan from _gpu.pair_plan / _gpu.batch_plan (borrowed references). */
typedef struct {
    int dtype;
    long long dim;
    int device;
    unsigned long long stream, out_ptr;
    PyObject *out, *plan, *xdesc, *ydesc;
} gpu_plan;

static int gpu_plan_parse(PyObject *r, gpu_plan *g)
{
    if (!PyTuple_Check(r) ||
        !PyArg_ParseTuple(r, "iLiKKOOOO", &g->dtype, &g->dim, &g->device, &g->stream,
                          &g->out_ptr, &g->out, &g->plan, &g->xdesc, &g->ydesc)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "tswarp._gpu returned a malformed plan");
        return -1;
    }
    if (g->dtype != TSW_F32 && g->dtype != TSW_F64) {
        PyErr_SetString(PyExc_SystemError, "tswarp._gpu returned a malformed plan");
        return -1;
    }
    return 0;
}

/* Device memory for the call's temporaries from the array library's allocator (its pool),
 * so the call does no cudaMalloc/cudaFree of its own. *keep gets the buffer object (or
 * NULL: the library could not give it; the C library then allocates itself). */
static int gpu_workspace(const gpu_plan *g, int rc_size, size_t bytes, tsw_exec *ex,
                         PyObject **keep)
{
    *keep = NULL;
    if (rc_size != TSW_OK || bytes == 0)
        return 0;
    PyObject *r = gpu_call("workspace", "(OK)", g->plan, (unsigned long long)bytes);
    if (!r)
        return -1;
    unsigned long long ptr = 0;
    PyObject *buf = NULL;
    if (r != Py_None) {
        if (!PyArg_ParseTuple(r, "OK", &buf, &ptr)) {
            Py_DECREF(r);
            return -1;
        }
        ex->cuda_workspace = (void *)(uintptr_t)ptr;
        ex->cuda_workspace_bytes = bytes;
    }
    *keep = r; /* holds buf */
    return 0;
}

/* After a failed tsw_*_device call: the argument at fault for bad values/timestamps, else
 * the status with the detail captured right after the call. */
static void gpu_raise(int rc, const char *fname, const gpu_plan *g, const char *detail)
{
    if (rc == TSW_ECANCELED && PyErr_Occurred())
        return;
    char saved[512];
    PyOS_snprintf(saved, sizeof(saved), "%s", detail ? detail : "");
    PyObject *r = gpu_call("diagnose", "(Oi)", g->plan, rc);
    if (!r)
        return; /* the ValueError naming the argument */
    Py_DECREF(r);
    raise_status_detail(rc, fname, saved);
}

static void series_from_desc(PyObject *d, tsw_series *s, int *ok)
{
    unsigned long long v, t;
    long long n;
    *ok = PyArg_ParseTuple(d, "KKL", &v, &t, &n);
    s->values = (const void *)(uintptr_t)v;
    s->times = t ? (const void *)(uintptr_t)t : NULL;
    s->length = n;
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

/* A positive int argument (bool refused) into *out; None leaves *out alone. */
static int get_positive_int(PyObject *o, const char *name, long long *out)
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
    if (overflow < 0 || v < 1) {
        PyErr_Format(PyExc_ValueError, "%s must be a positive int, got %R", name, o);
        return -1;
    }
    *out = v;
    return 0;
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

static PyObject *py_dtw_path(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    tsw_align_params ap;
    tsw_exec ex;
    PyArrayObject *a = NULL, *b = NULL;
    PyObject *bar = NULL, *result = NULL;
    int64_t *pairs = NULL;
    int explicit_index, rc, layout, accumulated = 0;
    int64_t na, nb, dim;
    tsw_dtype dt;
    if (parse_call(&sig_dtw_path, args, nargs, kwnames, slot) < 0 ||
        build_align_params("dtw_path", slot, &ap) < 0 ||
        build_exec(slot, &ex, &explicit_index) < 0 ||
        parse_layout(slot[K_LAYOUT], &layout) < 0 ||
        (slot[K_ACCUMULATED] && get_bool(slot[K_ACCUMULATED], "accumulated", &accumulated) < 0))
        return NULL;
    if (align_progress(slot[K_PROGRESS], "dtw_path", &bar) < 0)
        return NULL;
    if (align_inputs(slot[K_A], slot[K_B], "a", "b", layout, &a, &b, &dt, &na, &nb, &dim) < 0)
        goto done;
    int64_t cap = tsw_path_max_length(na, nb);
    if (cap == 0 || cap > (int64_t)(PY_SSIZE_T_MAX / 16)) {
        raise_too_big("the path", -1);
        goto done;
    }
    pairs = PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)cap);
    if (!pairs) {
        PyErr_NoMemory();
        goto done;
    }
    tsw_series sa = {PyArray_DATA(a), na, NULL}, sb = {PyArray_DATA(b), nb, NULL};
    int64_t len = 0;
    double cost = 0;
    const char *detail = NULL;
    progress_ctx ctx = {NULL, bar};
    ex.progress = progress_trampoline;
    ex.progress_user = &ctx;
    ctx.tstate = PyEval_SaveThread();
    rc = tsw_dtw_path(&ap, dt, dim, &sa, &sb, pairs, cap, &len, &cost, &ex);
    detail = rc != TSW_OK ? tsw_last_error_detail() : NULL;
    PyEval_RestoreThread(ctx.tstate);
    if (rc != TSW_OK) {
        align_raise(rc, "dtw_path", &sa, &sb, "a", "b", dt, dim, detail);
        goto done;
    }
    PyObject *arr = path_array(pairs, len);
    if (!arr)
        goto done;
    result = Py_BuildValue("(Nd)", arr, align_cost(&ap, accumulated, cost));
done:
    progress_close(bar);
    Py_XDECREF(bar);
    PyMem_Free(pairs);
    Py_XDECREF(a);
    Py_XDECREF(b);
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
        PyErr_NoMemory();
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

#include "_bind_segmental.h"
#include "_bind_sdtw.h"
#include "_bind_shapelets.h"

/* ---- information ---------------------------------------------------------------------- */

/* {index, name, compute_capability, multiprocessors, total_memory, free_memory,
 *  cached_memory, runnable} */
static PyObject *gpu_info(int index)
{
    tsw_cuda_device d;
    size_t cached = 0;
    memset(&d, 0, sizeof(d));
    if (tsw_cuda_device_info(index, &d) != TSW_OK)
        Py_RETURN_NONE;
    if (tsw_cuda_cached_bytes(index, &cached) != TSW_OK)
        cached = 0;
    d.name[sizeof(d.name) - 1] = '\0';
    return Py_BuildValue("{s:i,s:s,s:(ii),s:i,s:K,s:K,s:K,s:O}", "index", index, "name", d.name,
                         "compute_capability", d.major, d.minor, "multiprocessors",
                         d.multiprocessors, "total_memory", (unsigned long long)d.total_memory,
                         "free_memory", (unsigned long long)d.free_memory, "cached_memory",
                         (unsigned long long)cached, "runnable", d.runnable ? Py_True : Py_False);
}

static PyObject *py_info(PyObject *self, PyObject *unused)
{
    int count = 0, runtime = 0, driver = 0;
    if (tsw_has_cuda() && tsw_cuda_device_count(&count) != TSW_OK)
        count = 0;
    if (tsw_cuda_versions(&runtime, &driver) != TSW_OK)
        runtime = driver = 0;
    const char *archs = tsw_cuda_archs();
    PyObject *gpus = PyList_New(0);
    if (!gpus)
        return NULL;
    for (int i = 0; i < count; ++i) {
        PyObject *g = gpu_info(i);
        if (!g || (g != Py_None && PyList_Append(gpus, g) < 0)) {
            Py_XDECREF(g);
            Py_DECREF(gpus);
            return NULL;
        }
        Py_DECREF(g);
    }
    return Py_BuildValue("{s:s,s:s,s:i,s:O,s:i,s:s,s:i,s:i,s:N}", "version",
                         tsw_version_string(), "simd", tsw_cpu_simd(), "threads",
                         tsw_max_threads(), "cuda_built", tsw_has_cuda() ? Py_True : Py_False,
                         "cuda_devices", count, "cuda_archs", archs ? archs : "",
                         "cuda_runtime", runtime, "cuda_driver", driver, "gpus", gpus);
}

/* empty_cache(device=None): tsw_cuda_empty_cache. None is every GPU, and nothing at all
 * without the CUDA backend (as torch.cuda.empty_cache() before CUDA is used: there is no
 * cache to empty); an index is checked as parse_device checks 'cuda:N'. */
static const signature sig_empty_cache = {"empty_cache", 1, 0, {K_DEVICE}, 0};

static PyObject *py_empty_cache(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    PyObject *slot[K_COUNT] = {0};
    if (parse_call(&sig_empty_cache, args, nargs, kwnames, slot) < 0)
        return NULL;
    PyObject *o = slot[K_DEVICE];
    int device = -1;
    if (given(o)) {
        if (PyBool_Check(o) || !PyIndex_Check(o)) {
            PyErr_Format(PyExc_TypeError, "empty_cache(): device must be an int or None, got %s",
                         Py_TYPE(o)->tp_name);
            return NULL;
        }
        PyObject *n = PyNumber_Index(o);
        if (!n)
            return NULL;
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(n, &overflow);
        Py_DECREF(n);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (overflow < 0 || (!overflow && v < 0)) {
            PyErr_Format(PyExc_ValueError,
                         "empty_cache(): device must be a GPU index >= 0 or None, got %R", o);
            return NULL;
        }
        if (!tsw_has_cuda()) {
            PyErr_Format(NoDeviceError,
                         "empty_cache(): device=%R: this tswarp was built without the CUDA "
                         "backend",
                         o);
            return NULL;
        }
        if (cuda_count() == 0) {
            PyErr_Format(NoDeviceError,
                         "empty_cache(): device=%R: no CUDA GPU was found (is the driver "
                         "loaded?)",
                         o);
            return NULL;
        }
        if (overflow > 0 || v >= cuda_count_cached) {
            PyErr_Format(NoDeviceError, "empty_cache(): device=%R: only %d CUDA device(s) found",
                         o, cuda_count_cached);
            return NULL;
        }
        device = (int)v;
    } else if (!tsw_has_cuda()) {
        Py_RETURN_NONE;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = tsw_cuda_empty_cache(device); /* waits for the device's work */
    Py_END_ALLOW_THREADS
    if (rc) {
        raise_status(rc, "empty_cache");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* ---- docstrings --------------------------------------------------------------------------- */

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
    "    is a host argument beside GPU ones.\n"

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
"    Smoothing (> 0); gamma -> 0 gives the accumulated DTW cost.\n"
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

#define DOC_COLLECTION(name)                                                                \
    name " : array_like or list of array_like\n"                                            \
    "    A collection of series: a 3-D array (n, len, d), a 2-D array (n, len) of\n"        \
    "    univariate series, or a list of series of any lengths, each (len_i,) or\n"        \
    "    (len_i, d) (with layout='channels_first': (n, d, len) and (d, len_i)). CuPy\n"   \
    "    arrays and PyTorch CUDA tensors (or lists of them, concatenated on the device)\n" \
    "    are used in place on their GPU.\n"

#define DOC_BATCH                                                                           \
    "metric : {'dtw', 'twed', 'soft_dtw'}, default 'dtw'\n"                                 \
    "    The measure.\n"                                                                     \
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

PyDoc_STRVAR(info_doc,
"info($module, /)\n"
"--\n\n"
"Build and machine information.\n\n"
"Returns\n"
"-------\n"
"dict\n"
"    version (str), simd (the CPU kernels' instruction set: 'avx2', 'sse2' or\n"
"    'scalar'), threads (default thread count), cuda_built (bool), cuda_devices (int),\n"
"    cuda_archs (str: the GPU code compiled in, e.g. 'sm_80 sm_90 compute_90'; '' without\n"
"    CUDA), cuda_runtime and cuda_driver (int, e.g. 13000 for 13.0; 0 when unknown), gpus\n"
"    (list of dicts, one a GPU: index, name, compute_capability (major, minor),\n"
"    multiprocessors, total_memory and free_memory (the driver's) in bytes,\n"
"    cached_memory (bytes tswarp's memory pool keeps mapped for its next calls, see\n"
"    tswarp.empty_cache), runnable: whether this build has code that runs on it).\n\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> sorted(tswarp.info())\n"
"['cuda_archs', 'cuda_built', 'cuda_devices', 'cuda_driver', 'cuda_runtime', 'gpus', 'simd', "
"'threads', 'version']\n");

PyDoc_STRVAR(empty_cache_doc,
"empty_cache($module, /, device=None)\n"
"--\n\n"
"Return the GPU memory tswarp keeps cached to the driver.\n\n"
"Calls on host arrays take their GPU memory from tswarp's own memory pool, which\n"
"keeps what a call gives back mapped for the next call (at most a quarter of the\n"
"GPU's memory, or the bytes in the environment variable TSWARP_CUDA_CACHE_BYTES; 0\n"
"keeps nothing). This waits for the GPU's work and releases that cache, as\n"
"``torch.cuda.empty_cache()`` does for PyTorch's, so that other processes or\n"
"libraries can have the memory. ``info()['gpus'][k]['cached_memory']`` says how\n"
"much is cached. Calls on CuPy arrays and PyTorch tensors use their library's\n"
"allocator instead (``cupy.get_default_memory_pool().free_all_blocks()``,\n"
"``torch.cuda.empty_cache()``).\n\n"
"Parameters\n"
"----------\n"
"device : int, optional\n"
"    The GPU's index; None (the default) empties every GPU's cache, and does nothing\n"
"    when this tswarp has no CUDA backend.\n\n"
"Raises\n"
"------\n"
"NoDeviceError\n"
"    device names no GPU (or the CUDA backend is not built); a ValueError.\n"
"ValueError\n"
"    device is negative.\n"
"TypeError\n"
"    device is not an int.\n\n"
"Examples\n"
"--------\n"
">>> import tswarp\n"
">>> tswarp.empty_cache()\n");

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

#define FASTKW(name, fn, doc) {name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL | METH_KEYWORDS, doc}
static PyMethodDef methods[] = {
    FASTKW("dtw", py_dtw, dtw_doc),
    FASTKW("twed", py_twed, twed_doc),
    FASTKW("soft_dtw", py_soft_dtw, soft_dtw_doc),
    FASTKW("distance", py_distance, distance_doc),
    FASTKW("cdist", py_cdist, cdist_doc),
    FASTKW("pdist", py_pdist, pdist_doc),
    FASTKW("paired", py_paired, paired_doc),
    FASTKW("dtw_path", py_dtw_path, dtw_path_doc),
    FASTKW("_subsequence_dtw", py_subsequence, subsequence_doc),
    TSW_SEGMENTAL_METHODS
    TSW_SDTW_GRAD_METHODS
    TSW_SHAPELET_METHODS
    {"info", py_info, METH_NOARGS, info_doc},
    FASTKW("empty_cache", py_empty_cache, empty_cache_doc),
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
    PyObject *metrics = Py_BuildValue("(sss)", metric_names[0], metric_names[1], metric_names[2]);
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
