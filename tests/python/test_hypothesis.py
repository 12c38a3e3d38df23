"""Property-based layer (Hypothesis) over the Python API and the file readers.

The rule for every call, whatever Hypothesis draws (shapes, dtypes, parameter types and
values, NaN and inf, empty and one-point series): either an exception of a documented type
(ValueError, TypeError, MemoryError; NotImplementedError where a backend says so) whose
message names the argument that is wrong, or a result equal to the plain reference
implementation (``_impl="reference"``) and never NaN.

Readers: any bytes in a .npy, .csv, .tsv or .ts file give a ``ParseError`` (a ValueError
naming the file) or a collection of series; never another exception.

Hypothesis prints the falsifying example and how to replay it (``--hypothesis-seed=N``, or
the ``@reproduce_failure`` line it prints); examples that once failed are kept in its
database between runs on one machine.
"""

import math
import os
import pathlib

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import tswarp  # noqa: E402
from tswarp import io as tsio  # noqa: E402

EXAMPLES = int(os.environ.get("TSWARP_HYPOTHESIS_EXAMPLES", "150"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])

DOCUMENTED = (ValueError, TypeError, MemoryError, NotImplementedError)

# ---- values and parameters -------------------------------------------------------------

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False, width=32)
wild_float = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e-300, 5e-324, 1e300, 1e308, 0.5, 2.0, 700.0, -1.0]))
# anything a user might pass as a parameter: the wrong types included
any_param = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), wild_float,
    st.text(max_size=4), st.complex_numbers(max_magnitude=10, allow_nan=False),
    st.sampled_from([np.float32(0.5), np.int64(3), np.bool_(True), np.float64("nan"), [1.0], (2,)]))

DTYPES = st.sampled_from(["float64", "float32", "int64", "int32", "bool", "complex128",
                          "object", "U1", "float16"])


@st.composite
def series(draw, dim=None):
    """A 1-D (n,) or 2-D (n, d) array of any dtype; lengths 0..12, dims 0..3."""
    wild = draw(st.integers(0, 9)) == 0  # one draw in ten: empty, zero dims, odd dtypes
    n = draw(st.integers(0, 12) if wild else st.integers(1, 12))
    d = (draw(st.integers(0, 3) if wild else st.integers(1, 3))) if dim is None else dim
    dtype = draw(DTYPES if wild else st.sampled_from(["float64", "float32"]))
    one_d = d == 1 and draw(st.booleans())
    shape = (n,) if one_d else (n, d)
    if dtype in ("object", "U1"):
        return np.full(shape, "x" if dtype == "U1" else None, dtype=dtype)
    elems = st.one_of(finite, wild_float) if draw(st.integers(0, 9)) == 0 else finite
    arr = draw(hnp.arrays(np.float64, shape, elements=elems))
    with np.errstate(all="ignore"):
        return arr.astype(dtype)


def names_an_argument(message, names):
    """The message names one of the call's arguments (or a series, 'a'/'b'/'x'/'y')."""
    low = message.lower()
    return any(n in low for n in names) or any(
        f"{n}[" in message or f"{n}:" in message or f"'{n}'" in message or f" {n} " in f" {message} "
        for n in ("a", "b", "x", "y", "X", "Y"))


def check_call(fn, args, kwargs, names):
    """The property: documented exception naming an argument, or the reference's value."""
    try:
        value = fn(*args, **kwargs)
    except DOCUMENTED as e:
        hypothesis.event(f"{fn.__name__}: {type(e).__name__}")
        assert str(e), f"{type(e).__name__} without a message from {fn.__name__}{kwargs}"
        assert names_an_argument(str(e), names), (
            f"{fn.__name__}: message names no argument of {sorted(names)}: {e}")
        return None
    hypothesis.event(f"{fn.__name__}: value")
    value = np.asarray(value, dtype=np.float64)
    assert not np.isnan(value).any(), f"{fn.__name__}{kwargs} returned NaN"
    ref = np.asarray(fn(*args, _impl="reference", **kwargs), dtype=np.float64)
    f32 = any(getattr(a, "dtype", None) == np.float32 for a in args)
    np.testing.assert_allclose(value, ref, rtol=2e-4 if f32 else 1e-9, atol=1e-9)
    return value


PAIR_PARAMS = {
    tswarp.dtw: ["window", "radius", "itakura_max_slope", "cost", "accumulated"],
    tswarp.twed: ["nu", "lmbda", "p", "window", "radius"],
    tswarp.soft_dtw: ["gamma", "normalize", "window", "radius"],
}


@SETTINGS
@given(data=st.data())
def test_pair_functions_property(data):
    fn = data.draw(st.sampled_from(sorted(PAIR_PARAMS, key=lambda f: f.__name__)), label="fn")
    a = data.draw(series(), label="a")
    d = a.shape[1] if a.ndim == 2 else 1
    b = data.draw(st.one_of(series(dim=d), series()), label="b")
    chosen = data.draw(st.lists(st.sampled_from(PAIR_PARAMS[fn]), unique=True, max_size=3),
                       label="params")
    kwargs = {}
    for name in chosen:
        if data.draw(st.integers(0, 3)) > 0:  # mostly valid values, so results get checked
            valid = {"window": st.floats(0, 1), "radius": st.integers(0, 20),
                     "itakura_max_slope": st.floats(1, 5), "cost": st.sampled_from(
                         ["sqeuclidean", "euclidean", "abs", "cosine"]),
                     "accumulated": st.booleans(), "normalize": st.booleans(),
                     "nu": st.floats(0, 10), "lmbda": st.floats(0, 10),
                     "p": st.one_of(st.sampled_from([1.0, 2.0]), st.floats(1, 1000)),
                     "gamma": st.floats(1e-6, 1e3)}[name]
            kwargs[name] = data.draw(valid, label=name)
        elif name == "cost":
            kwargs[name] = data.draw(st.one_of(
                st.sampled_from(["sqeuclidean", "euclidean", "abs", "cosine"]), any_param), label=name)
        else:
            kwargs[name] = data.draw(st.one_of(any_param, finite, st.integers(0, 5)), label=name)
    check_call(fn, (a, b), kwargs, set(chosen) | {"a", "b"})


@SETTINGS
@given(data=st.data())
def test_batch_functions_property(data):
    metric = data.draw(st.sampled_from(["dtw", "twed", "soft_dtw", "euclidean", "bogus", 3]),
                       label="metric")
    d = data.draw(st.integers(1, 2), label="d")
    X = data.draw(st.lists(series(dim=d), min_size=0, max_size=4), label="X")
    kwargs = {"metric": metric}
    if data.draw(st.booleans()):
        kwargs["n_jobs"] = data.draw(any_param, label="n_jobs")
    if data.draw(st.booleans()):
        kwargs["layout"] = data.draw(st.one_of(
            st.sampled_from(["channels_last", "channels_first"]), any_param), label="layout")
    names = {"x", "metric", "n_jobs", "layout", "series"}
    for fn, args in ((tswarp.pdist, (X,)), (tswarp.cdist, (X, X))):
        try:
            D = fn(*args, **kwargs)
        except DOCUMENTED as e:
            assert str(e) and names_an_argument(str(e), names), f"{fn.__name__}: {e}"
            continue
        D = np.asarray(D, dtype=np.float64)
        assert not np.isnan(D).any()
        ref = np.asarray(fn(*args, _impl="reference", **kwargs), dtype=np.float64)
        np.testing.assert_allclose(D, ref, rtol=2e-4, atol=1e-6)


@SETTINGS
@given(data=st.data())
def test_soft_dtw_gamma_range_property(data):
    # issue 36 item 6: any finite gamma > 0 gives a finite value equal to the reference, or
    # a ValueError stating the supported range
    gamma = data.draw(st.floats(min_value=0, max_value=1e308, exclude_min=True), label="gamma")
    scale = data.draw(st.sampled_from([1e-100, 1e-5, 1.0, 1e5, 1e100, 1e140]), label="scale")
    n, m = data.draw(st.integers(1, 10)), data.draw(st.integers(1, 10))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    dtype = data.draw(st.sampled_from([np.float64, np.float32]), label="dtype")
    with np.errstate(all="ignore"):
        a = (rng.standard_normal(n) * scale).astype(dtype)
        b = (rng.standard_normal(m) * scale).astype(dtype)
    assume(np.isfinite(a).all() and np.isfinite(b).all())
    normalize = data.draw(st.booleans(), label="normalize")
    try:
        v = tswarp.soft_dtw(a, b, gamma=gamma, normalize=normalize)
    except ValueError as e:
        assert "gamma must be in" in str(e), str(e)
        lo, hi = (float(np.finfo(dtype).tiny), 1e300 if dtype == np.float64 else 1e30)
        assert not (lo <= gamma <= hi), f"gamma {gamma!r} is in range but refused: {e}"
        return
    assert not math.isnan(v)
    ref = tswarp.soft_dtw(a, b, gamma=gamma, normalize=normalize, _impl="reference")
    if math.isinf(ref):
        assert v == ref
    else:
        # the value is a difference of terms up to gamma (n + m) ln 3 and the path costs:
        # rounding is relative to those, not to the (possibly much smaller) result
        eps = float(np.finfo(dtype).eps)
        cmax = float((np.abs(a).max() + np.abs(b).max()) ** 2) * (n + m)
        scale_of_terms = abs(ref) + gamma * (n + m) * 1.1 + cmax
        assert math.isclose(v, ref, rel_tol=64 * eps, abs_tol=64 * eps * scale_of_terms), (v, ref)


# ---- readers -----------------------------------------------------------------------------

def _read(tmp_path, name, payload):
    path = pathlib.Path(tmp_path) / name
    path.write_bytes(payload)
    try:
        X, y = tsio.read_series(path)
    except tsio.ParseError as e:
        assert str(e).startswith(str(path)), str(e)
        return None
    assert len(X) >= 1
    return X


def _npy_bytes(arr):
    import io
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


@SETTINGS
@given(data=st.data())
def test_npy_reader_property(tmp_path_factory, data):
    base = _npy_bytes(data.draw(hnp.arrays(
        st.sampled_from([np.float64, np.float32, np.int32]),
        hnp.array_shapes(min_dims=1, max_dims=4, max_side=5)), label="array"))
    how = data.draw(st.sampled_from(["cut", "flip", "splice", "raw"]), label="mutation")
    if how == "cut":
        payload = base[:data.draw(st.integers(0, len(base)))]
    elif how == "flip":
        pos = data.draw(st.integers(0, len(base) - 1))
        payload = base[:pos] + bytes([data.draw(st.integers(0, 255))]) + base[pos + 1:]
    elif how == "splice":
        pos = data.draw(st.integers(0, len(base)))
        payload = base[:pos] + data.draw(st.binary(max_size=40)) + base[pos:]
    else:
        payload = data.draw(st.binary(max_size=200))
    _read(tmp_path_factory.mktemp("npy"), "x.npy", payload)


@SETTINGS
@given(ext=st.sampled_from(["x.csv", "x.txt", "x.tsv", "x.ts"]),
       text=st.one_of(
           st.text(alphabet=st.sampled_from(list("0123456789.,-+eE\t :?@#()naNifINF\r\n")),
                   max_size=200),
           st.binary(max_size=120).map(lambda b: b.decode("latin1"))))
def test_text_readers_property(tmp_path_factory, ext, text):
    if ext == "x.ts" and not text.startswith("@"):
        text = "@problemName p\n@timeStamps false\n@univariate true\n@classLabel true 1 2\n@data\n" + text
    _read(tmp_path_factory.mktemp("txt"), ext, text.encode("utf-8", "surrogatepass"))
