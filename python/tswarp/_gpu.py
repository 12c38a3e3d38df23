"""GPU arrays in tswarp calls: CuPy arrays, PyTorch CUDA tensors, other CUDA arrays.

The C extension (_tswarp.c) calls this module only when an argument is not a numpy array and
its type exposes ``__cuda_array_interface__`` or ``__dlpack_device__``, so numpy inputs never
pay for it and neither CuPy nor torch is imported by ``import tswarp``. This module does the
array-library work with the inputs' own library; the extension then calls the C library's
``tsw_*_device`` entry points on the device pointers with the GIL released.

- Library: the one of the first GPU argument (a, b, ta, tb or X, Y, tx, ty). CuPy arrays and
  torch tensors are used as they are. Other GPU arrays (numba, JAX through DLPack, ...) and
  GPU arguments of the other library are viewed zero-copy as arrays of that library (CuPy
  when installed, else torch). Results come back as arrays of that library on the inputs'
  GPU: a 0-d array/tensor for one pair, a matrix or a condensed vector for cdist/pdist.
- Device: every GPU argument must live on one GPU. device='auto' or 'cuda' computes there;
  'cuda:N' must name it; 'cpu' is a ValueError, and so is a host argument beside GPU ones.
  Without the CUDA backend or a GPU that tswarp can see, a GPU argument is a NoDeviceError
  (raised before CuPy or torch is imported).
- Values must be float32 or float64 (TypeError naming the argument otherwise); computed in
  float32 when every series is float32, else float64 (float32 ones are converted on the
  device, as numpy inputs are). Timestamps may have any real dtype and take the series'.
- Non C-contiguous arrays (transposes, strided views) are copied to contiguous ones by their
  library; a list of series is concatenated on the device, its offsets and lengths stay on
  the host. torch tensors that require grad are detached (no autograd through tswarp).
- Stream: the work runs on the library's current stream of that GPU
  (``torch.cuda.current_stream(dev)``, ``cupy.cuda.get_current_stream()``), so it is ordered
  after the work that produced the inputs. The call checks the inputs (one wait for that
  stream), queues the work and returns (exec.cuda_async): like the library's own
  operations, the results are there for whatever the stream runs next (and for reads that
  synchronise, such as ``.get()`` or ``.cpu()``).
  A foreign ``__cuda_array_interface__`` array is taken in through its library's own
  consumer (``cupy.asarray`` / ``torch.as_tensor``), which honours its ``stream`` key.
- Alignment paths (dtw_path, subsequence_dtw, segmental_dtw; tswarp/_align.py calls
  align_inputs): GPU inputs are copied to the host, the C library computes (on their GPU
  unless device says otherwise) and the paths come back as arrays of the inputs' library
  on their GPU (see HostCopy).
- Memory: the output, and the C library's workspace, come from the library's allocator
  (CuPy's pool, torch's caching allocator), so a call does no cudaMalloc/cudaFree of its own
  when the pool has room. An output that does not fit raises MemoryError with the bytes
  needed and the bytes free.
"""

import importlib
import sys

import numpy as np

from ._conventions import FIRST, GUARD, collection_transpose, series_transpose
from ._tswarp import NoDeviceError

__all__ = ["pair_plan", "batch_plan", "workspace", "diagnose", "gpu_kind", "align_inputs",
           "search_series"]

# Mirrors of include/tswarp.h.
_F32, _F64 = 0, 1
_DEVICE_AUTO, _DEVICE_CPU, _DEVICE_CUDA = 0, 1, 2
_ENONFINITE, _ETIMES = -5, -6
# DLPack device types (dlpack.h): kDLCUDA, kDLCUDAManaged.
_DLPACK_CUDA = (2, 13)


# ---- array libraries -------------------------------------------------------------------------


class _CuPy:
    name = "CuPy"

    def __init__(self, cp):
        self.cp = cp

    def adopt(self, x):
        """A zero-copy CuPy view of any CUDA array (CuPy, torch, CAI or DLPack)."""
        cp = self.cp
        if isinstance(x, cp.ndarray):
            return x
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            x = x.detach()
        if hasattr(type(x), "__cuda_array_interface__"):
            return cp.asarray(x)
        return cp.from_dlpack(x)

    def device(self, x):
        return x.device.id

    def use(self, dev):
        return self.cp.cuda.Device(dev)

    def dtype(self, x):
        return x.dtype

    def astype(self, x, dt):
        return x.astype(dt, copy=False)

    def contiguous(self, x):
        return x if x.flags.c_contiguous else self.cp.ascontiguousarray(x)

    def reshape(self, x, shape):
        return x.reshape(shape)

    def swap(self, x):
        """The last two axes swapped (a view): channels_first to tswarp's layout."""
        return x.swapaxes(-1, -2)

    def concat(self, xs):
        return self.cp.concatenate(xs)

    def empty(self, n, dt, dev):
        return self.cp.empty((n,), dtype=dt)

    def ptr(self, x):
        return int(x.data.ptr)

    def stream(self, dev):
        return int(self.cp.cuda.get_current_stream().ptr)

    def host(self, x):
        return self.cp.asnumpy(x)

    def to_device(self, x, dev):
        with self.cp.cuda.Device(dev):
            return self.cp.asarray(x)

    def mem_info(self, dev):
        return self.cp.cuda.runtime.memGetInfo()


class _Torch:
    name = "torch"

    def __init__(self, torch):
        self.t = torch

    def adopt(self, x):
        t = self.t
        if isinstance(x, t.Tensor):
            x = x.detach()
        elif hasattr(type(x), "__cuda_array_interface__"):
            x = t.as_tensor(x)  # zero-copy, on the array's own GPU
        else:
            x = t.from_dlpack(x)
        # Lazy negation/conjugation views would be read wrongly through the raw pointer.
        return x.resolve_neg().resolve_conj()

    def device(self, x):
        return x.device.index

    def use(self, dev):
        return self.t.cuda.device(dev)

    def dtype(self, x):
        try:  # torch.float32 -> float32; bfloat16 and other dtypes numpy lacks -> None
            return np.dtype(str(x.dtype).replace("torch.", ""))
        except TypeError:
            return None

    def astype(self, x, dt):
        return x.to(getattr(self.t, np.dtype(dt).name))

    def contiguous(self, x):
        return x if x.is_contiguous() else x.contiguous()

    def reshape(self, x, shape):
        return x.reshape(shape)

    def swap(self, x):
        """The last two axes swapped (a view): channels_first to tswarp's layout."""
        return x.transpose(-1, -2)

    def concat(self, xs):
        return self.t.cat(xs)

    def empty(self, n, dt, dev):
        return self.t.empty((n,), dtype=getattr(self.t, np.dtype(dt).name), device=f"cuda:{dev}")

    def ptr(self, x):
        return int(x.data_ptr())

    def stream(self, dev):
        return int(self.t.cuda.current_stream(dev).cuda_stream)

    def host(self, x):
        return x.detach().cpu().numpy()

    def to_device(self, x, dev):
        return self.t.from_numpy(x).to(f"cuda:{dev}")

    def mem_info(self, dev):
        return self.t.cuda.mem_get_info(dev)


_libs: dict = {}


def _lib(name):
    """The adapter for 'cupy' or 'torch' (importing the library), or None if absent."""
    if name not in _libs:
        try:
            mod = sys.modules.get(name) or importlib.import_module(name)
        except Exception:  # not installed, or broken (no driver): not usable here
            mod = None
        _libs[name] = None if mod is None else (_CuPy(mod) if name == "cupy" else _Torch(mod))
    return _libs[name]


def gpu_kind(x):
    """'cupy', 'torch' or 'foreign' for an array in GPU memory; None for anything else."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch" if x.is_cuda else None
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return "cupy"
    tp = type(x)
    if hasattr(tp, "__cuda_array_interface__"):
        try:
            x.__cuda_array_interface__
        except Exception:  # e.g. a host tensor of some library: treat as host memory
            return None
        return "foreign"
    if hasattr(tp, "__dlpack_device__"):
        try:
            dev_type = int(x.__dlpack_device__()[0])
        except Exception:
            return None
        return "foreign" if dev_type in _DLPACK_CUDA else None
    return None


def _lead(kind, fname, name, x):
    lib = _lib(kind) if kind != "foreign" else (_lib("cupy") or _lib("torch"))
    if lib is None:
        raise TypeError(f"{fname}(): {name} is a GPU array ({_tname(x)}); tswarp reads GPU "
                        f"arrays through CuPy or PyTorch and neither could be imported")
    return lib


def _tname(x):
    tp = type(x)
    mod = tp.__module__
    return tp.__qualname__ if mod == "builtins" else f"{mod.split('.')[0]}.{tp.__qualname__}"


def _is_seq(o):
    return isinstance(o, (list, tuple)) or (
        isinstance(o, np.ndarray) and o.dtype == object and o.ndim == 1)


# ---- common checks ---------------------------------------------------------------------------


def _classify(fname, named, cuda_devices):
    """named: [(label, obj)]. None when no object is on a GPU; else (lib, [(label, array)]),
    every object adopted by the lead library. A host object among GPU ones is a ValueError;
    GPU objects without a usable backend (cuda_devices: -1 = not built, 0 = no GPU) are a
    NoDeviceError, raised before CuPy or torch is imported (cuda_devices None: not checked,
    the caller copies the arrays to the host)."""
    kinds = [gpu_kind(x) for _, x in named]
    first = next((i for i, k in enumerate(kinds) if k), None)
    if first is None:
        return None
    flabel, fobj = named[first]
    for (label, x), k in zip(named, kinds):
        if not k:
            raise ValueError(
                f"{fname}(): {label} is in host memory ({_tname(x)}) but {flabel} is a GPU "
                f"array ({_tname(fobj)}); pass every array on the same device")
    if cuda_devices is not None and cuda_devices <= 0:
        why = ("this tswarp was built without the CUDA backend" if cuda_devices < 0 else
               "tswarp found no CUDA GPU (is the driver loaded?)")
        raise NoDeviceError(f"{fname}(): {flabel} is a GPU array ({_tname(fobj)}) but {why}; "
                            f"copy it to the host")
    lib = _lead(kinds[first], fname, flabel, fobj)
    return lib, [(label, lib.adopt(x)) for label, x in named]


def _device(fname, lib, arrays, device_kind, device_index):
    """The GPU every array lives on, checked against the device argument."""
    dev = flabel = None
    for label, x in arrays:
        d = lib.device(x)
        if dev is None:
            dev, flabel = d, label
        elif d != dev:
            raise ValueError(f"{fname}(): {label} is on cuda:{d} but {flabel} is on cuda:{dev}; "
                             f"pass every array on one GPU")
    if device_kind == _DEVICE_CPU:
        raise ValueError(f"{fname}(): device='cpu' but {flabel} is a GPU array on cuda:{dev}; "
                         f"GPU arrays are computed on their GPU (device='auto' or 'cuda'), "
                         f"copy them to the host to use the CPU")
    if device_index >= 0 and device_index != dev:
        raise ValueError(f"{fname}(): device='cuda:{device_index}' but {flabel} is on "
                         f"cuda:{dev}")
    return dev


def _value_dtype(lib, x, label):
    dt = lib.dtype(x)
    if dt is None or dt not in (np.float32, np.float64):
        raise TypeError(f"{label} has dtype {_dtype_name(x, dt)} on the GPU; tswarp computes GPU "
                        f"arrays in float32 or float64: convert it first (x.astype(float32) or "
                        f"x.to(torch.float32))")
    return dt


def _times_dtype(lib, x, label):
    dt = lib.dtype(x)
    if dt is None or dt.kind not in "biuf":
        raise TypeError(f"{label} has dtype {_dtype_name(x, dt)}; timestamps must be real numbers")
    return dt


def _dtype_name(x, dt):
    return dt.name if dt is not None else str(getattr(x, "dtype", "?")).replace("torch.", "")


def _prepare(lib, x, dt):
    """x in dtype dt, C-contiguous (a no-op when it already is)."""
    if lib.dtype(x) != dt:
        x = lib.astype(x, dt)
    return lib.contiguous(x)


def _nbytes(n, dt):
    return int(n) * np.dtype(dt).itemsize


def _gib(b):
    return f"{b / 2**30:.3g} GiB"


def _is_oom(e):
    return isinstance(e, MemoryError) or type(e).__name__ == "OutOfMemoryError" or (
        isinstance(e, RuntimeError) and "out of memory" in str(e).lower())


def _oom(fname, lib, dev, what, nbytes, err):
    try:
        free, total = lib.mem_info(dev)
        room = f"; cuda:{dev} has {int(free)} bytes free of {int(total)}"
    except Exception:
        room = ""
    return MemoryError(f"{fname}(): {what} needs {int(nbytes)} bytes ({_gib(nbytes)}) of GPU "
                       f"memory{room} ({type(err).__name__})")


def _alloc(fname, lib, dev, n, dt, what):
    """A 1-D buffer of max(n, 1) elements (a 0-size output still gets a valid pointer)."""
    if _nbytes(n, dt) >= 1 << 62:  # beyond any GPU, and beyond what the libraries can size
        raise _oom(fname, lib, dev, what, _nbytes(n, dt), MemoryError("size overflows"))
    try:
        return lib.empty(max(int(n), 1), dt, dev)
    except Exception as e:
        if _is_oom(e):
            raise _oom(fname, lib, dev, what, _nbytes(n, dt), e) from None
        raise


def _concat(fname, lib, dev, parts, rows, dim, dt, what):
    try:
        return lib.concat(parts)
    except Exception as e:
        if _is_oom(e):
            raise _oom(fname, lib, dev, what, _nbytes(rows * dim, dt), e) from None
        raise


class _Plan:
    """What one call needs after the C call: the library and device (workspace), and the
    prepared arrays by name (diagnosis of TSW_ENONFINITE / TSW_ETIMES)."""

    __slots__ = ("fname", "lib", "dev", "dt", "entries")

    def __init__(self, fname, lib, dev, dt):
        self.fname, self.lib, self.dev, self.dt = fname, lib, dev, dt
        # (label, buffer, is_times, offsets, lengths): offsets None for one series (label
        # "a", "ta", ...) or one array (n, len[, d]) ("X", "tx", ...); else int64 (n,) arrays
        self.entries = []


# ---- one pair --------------------------------------------------------------------------------


def _series_shape(lib, x, label):
    shape = tuple(x.shape)
    if len(shape) not in (1, 2):
        hint = " (use cdist/pdist for collections)" if len(shape) == 3 else ""
        raise ValueError(f"{label} must be one series, shaped (len,) or (len, d); got shape "
                         f"{shape}{hint}")
    n, d = shape[0], (shape[1] if len(shape) == 2 else 1)
    if n == 0:
        raise ValueError(f"{label} is empty")
    if d == 0:
        raise ValueError(f"{label} has dimension 0 (shape ({n}, 0))")
    return n, d


def pair_plan(fname, a, b, ta, tb, device_kind, device_index, cuda_devices, layout=GUARD):
    """None when a, b, ta, tb are all host objects; else
    (dtype, dim, device, stream, out_ptr, out, plan, (a_ptr, ta_ptr, len_a), (b_ptr, tb_ptr, len_b))
    with `out` the 0-d result array on the device."""
    named = [("a", a), ("b", b)] + [(n, t) for n, t in (("ta", ta), ("tb", tb)) if t is not None]
    found = _classify(fname, named, cuda_devices)
    if found is None:
        return None
    lib, arrays = found
    dev = _device(fname, lib, arrays, device_kind, device_index)
    arr = dict(arrays)
    with lib.use(dev):
        da_t = _value_dtype(lib, arr["a"], "a")
        db_t = _value_dtype(lib, arr["b"], "b")
        for label in ("a", "b"):
            if series_transpose(tuple(arr[label].shape), label, layout):
                arr[label] = lib.swap(arr[label])
        na, da = _series_shape(lib, arr["a"], "a")
        nb, db = _series_shape(lib, arr["b"], "b")
        if da != db:
            raise ValueError(f"a has dimension {da} but b has dimension {db}")
        dt = np.dtype(np.float32) if da_t == np.float32 and db_t == np.float32 else np.dtype(np.float64)
        lengths = {"ta": (na, "a"), "tb": (nb, "b")}
        for label in ("ta", "tb"):
            if label in arr:
                _times_dtype(lib, arr[label], label)
                n, owner = lengths[label]
                if tuple(arr[label].shape) != (n,):
                    raise ValueError(f"{label} must have shape ({n},) like {owner}, got "
                                     f"{tuple(arr[label].shape)}")
        plan = _Plan(fname, lib, dev, dt)
        ptrs = {}
        for label, x in arr.items():
            x = _prepare(lib, x, dt)
            plan.entries.append((label, x, label in ("ta", "tb"), None, None))
            ptrs[label] = lib.ptr(x)
        buf = _alloc(fname, lib, dev, 1, dt, "the result")
        out = lib.reshape(buf[:1], ())
        stream = lib.stream(dev)
    code = _F32 if dt == np.float32 else _F64
    return (code, da, dev, stream, lib.ptr(buf), out, plan,
            (ptrs["a"], ptrs.get("ta", 0), na), (ptrs["b"], ptrs.get("tb", 0), nb))


def search_series(fname, series, layout, device, cuda_devices):
    """None when series is in host memory; else (array, descriptor) for search(): the series
    as a C-contiguous float32/float64 array of its library on its GPU (kept alive by the
    caller during the call) and (pointer, length, dim, dtype code, device, stream) for
    _tswarp._search_device. device: 'auto', 'cuda' or 'cuda:N' naming the series' GPU."""
    found = _classify(fname, [("series", series)], cuda_devices)
    if found is None:
        return None
    lib, arrays = found
    if isinstance(device, (list, tuple)) or device == "cuda:all":
        raise ValueError(f"{fname}(): a series on the GPU is searched on its own GPU; "
                         f"device={device!r} names several")
    kind, index = _DEVICE_AUTO, -1
    if device == "cpu":
        kind = _DEVICE_CPU
    elif isinstance(device, str) and device.startswith("cuda:"):
        kind, index = _DEVICE_CUDA, int(device[5:])
    dev = _device(fname, lib, arrays, kind, index)
    x = arrays[0][1]
    with lib.use(dev):
        dt = _value_dtype(lib, x, "series")
        if series_transpose(tuple(x.shape), "series", layout):
            x = lib.swap(x)
        n, d = _series_shape(lib, x, "series")
        x = _prepare(lib, x, dt)
        stream = lib.stream(dev)
    code = _F32 if dt == np.float32 else _F64
    return x, (lib.ptr(x), n, d, code, dev, stream)


# ---- collections -----------------------------------------------------------------------------


class _Coll:
    """A collection argument on the GPU: one array (n, len[, d]) or a sequence of series."""

    def __init__(self, name, times):
        self.name, self.times = name, times
        self.whole = None  # the one-array form
        self.items = None  # the sequence form
        self.n = self.length = self.dim = 0
        self.lengths = None  # np.int64 (n,) for the sequence form
        self.f32 = True

    def hint(self):
        return ("a 2-D array (n, len) or a list of 1-D arrays" if self.times else
                "a 2-D array (n, len) of univariate series, a 3-D array (n, len, d) or a list "
                "of (len,) or (len, d) series")

    def inspect(self, lib, value, layout=GUARD):
        if isinstance(value, list):  # the sequence form, already adopted
            self.items = value
            if not value:
                raise ValueError(f"{self.name} is empty (no series)")
            self.n = len(value)
            self.lengths = np.empty(self.n, dtype=np.int64)
            for i, x in enumerate(value):
                label = f"{self.name}[{i}]"
                self._dtype(lib, x, label)
                if not self.times and series_transpose(tuple(x.shape), label, layout):
                    x = value[i] = lib.swap(x)
                shape = tuple(x.shape)
                if len(shape) != 1 and (self.times or len(shape) != 2):
                    what = "1-D (len,)" if self.times else "one series (len,) or (len, d)"
                    raise ValueError(f"{label} must be {what}; got shape {shape}")
                n, d = shape[0], (shape[1] if len(shape) == 2 else 1)
                if n == 0:
                    raise ValueError(f"{label} is empty")
                if d == 0:
                    raise ValueError(f"{label} has dimension 0")
                if i == 0:
                    self.dim = d
                elif d != self.dim:
                    raise ValueError(f"{label} has dimension {d} but {self.name}[0] has "
                                     f"dimension {self.dim}")
                self.lengths[i] = n
            return
        self._dtype(lib, value, self.name)
        if not self.times and collection_transpose(tuple(value.shape), self.name, layout):
            value = lib.swap(value)
        self.whole = value
        shape = tuple(value.shape)
        if len(shape) != 2 and (self.times or len(shape) != 3):
            hint = " (for one series pass [x] or x[None])" if len(shape) == 1 and not self.times else ""
            raise ValueError(f"{self.name} must be {self.hint()}; got an array of shape {shape}{hint}")
        self.n, self.length = shape[0], shape[1]
        self.dim = shape[2] if len(shape) == 3 else 1
        if self.n == 0:
            raise ValueError(f"{self.name} is empty (no series)")
        if self.length == 0:
            raise ValueError(f"{self.name} holds empty series (length 0)")
        if self.dim == 0:
            raise ValueError(f"{self.name} has dimension 0")

    def _dtype(self, lib, x, label):
        if self.times:
            _times_dtype(lib, x, label)
        elif _value_dtype(lib, x, label) != np.float32:
            self.f32 = False

    def len_of(self, i):
        return int(self.lengths[i]) if self.lengths is not None else self.length

    def match(self, x):
        """self (timestamps) describes the same series as x."""
        if self.n != x.n:
            raise ValueError(f"{self.name} holds {self.n} series but {x.name} holds {x.n}")
        for i in range(x.n):
            if self.len_of(i) != x.len_of(i):
                raise ValueError(f"{self.name}[{i}] has length {self.len_of(i)} but {x.name}[{i}] "
                                 f"has length {x.len_of(i)}")

    def materialize(self, fname, lib, dev, dt, plan):
        """(values_ptr, count, length, offsets, lengths) of one contiguous buffer of dt."""
        if self.whole is not None:
            buf = _prepare(lib, self.whole, dt)
            plan.entries.append((self.name, buf, self.times, None, None))
            # Every series i starts at row i * length: offsets and lengths stay NULL.
            return lib.ptr(buf), self.n, self.length, None, None
        d = 1 if self.times else self.dim
        parts = [lib.reshape(_prepare(lib, x, dt), (-1,) if self.times else (-1, d))
                 for x in self.items]
        self.items = None  # only the concatenation is kept alive
        rows = int(self.lengths.sum())
        buf = _concat(fname, lib, dev, parts, rows, d, dt, f"{self.name} on the device")
        del parts
        offsets = np.zeros(self.n, dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=offsets[1:])
        plan.entries.append((self.name, buf, self.times, offsets, self.lengths))
        return lib.ptr(buf), self.n, 0, offsets, self.lengths


def _whole_array(x, cp, torch):
    """(lib, device, float32?, shape) of a CuPy array or CUDA tensor that batch_plan can
    take as it is (C-contiguous float32/float64 of 2 or 3 non-zero dimensions, no lazy torch
    view), else None."""
    if cp is not None and type(x) is cp.ndarray:
        if x.ndim not in (2, 3) or not x.flags.c_contiguous or x.dtype.char not in "fd":
            return None
        return "cupy", x.device.id, x.dtype.char == "f", x.shape
    if torch is not None and type(x) is torch.Tensor:
        if (not x.is_cuda or x.dim() not in (2, 3) or x.dtype not in (torch.float32, torch.float64)
                or not x.is_contiguous() or x.is_neg() or x.is_conj()):
            return None
        return "torch", x.device.index, x.dtype == torch.float32, tuple(x.shape)
    return None


def _needs_layout_work(shape, layout):
    """A whole 3-D array that the layout transposes or may refuse."""
    return len(shape) == 3 and (layout == FIRST or (
        layout == GUARD and shape[2] > 1 and shape[2] >= shape[1]))


def _batch_fast(fname, X, Y, is_pdist, condensed, device_kind, device_index, cuda_devices,
                layout=GUARD):
    """batch_plan's answer for its common case, with a fraction of its Python work: X (and Y)
    one CuPy array or one CUDA tensor each, of one library, GPU, dtype and dimension, laid out
    as the C library reads them. None for anything else (and for anything batch_plan would
    reject), which then takes the general path and its error messages."""
    if device_kind == _DEVICE_CPU or cuda_devices is None or cuda_devices <= 0:
        return None
    cp, torch = sys.modules.get("cupy"), sys.modules.get("torch")
    fx = _whole_array(X, cp, torch)
    if fx is None:
        return None
    kind, dev, f32, xs = fx
    if (device_index >= 0 and device_index != dev) or 0 in xs:
        return None
    # channels_first, or a shape the layout check may refuse: the general path
    if _needs_layout_work(xs, layout):
        return None
    ys = None
    if is_pdist != 1:
        fy = _whole_array(Y, cp, torch)
        if fy is None or fy[0] != kind or fy[1] != dev or fy[2] != f32:
            return None
        ys = fy[3]
        if len(ys) != len(xs) or 0 in ys or (len(xs) == 3 and ys[2] != xs[2]):
            return None
        if _needs_layout_work(ys, layout):
            return None
    n = xs[0]
    if is_pdist == 2:
        if ys[0] != n:
            return None
        shape = (n,)
    elif is_pdist:
        if n > 3037000499:
            return None
        shape = (n * (n - 1) // 2,) if condensed else (n, n)
    else:
        shape = (n, ys[0])
    lib = _lib(kind)
    dt = np.dtype(np.float32 if f32 else np.float64)
    plan = _Plan(fname, lib, dev, dt)
    size = shape[0] * (shape[1] if len(shape) == 2 else 1)
    with lib.use(dev):
        buf = _alloc(fname, lib, dev, size, dt,
                     f"the distance matrix {'x'.join(map(str, shape))} of {dt.name}")
        out = lib.reshape(buf[:size], shape)
        stream = lib.stream(dev)
    plan.entries.append(("X", X, False, None, None))
    xdesc = (lib.ptr(X), 0, n, xs[1], None, None)
    ydesc = None
    if ys is not None:
        plan.entries.append(("Y", Y, False, None, None))
        ydesc = (lib.ptr(Y), 0, ys[0], ys[1], None, None)
    dim = xs[2] if len(xs) == 3 else 1
    return (_F32 if f32 else _F64, dim, dev, stream, lib.ptr(buf), out, plan, xdesc, ydesc)


def batch_plan(fname, X, Y, tx, ty, is_pdist, condensed, device_kind, device_index,
               cuda_devices, layout=GUARD):
    """None when every argument is in host memory; else
    (dtype, dim, device, stream, out_ptr, out, plan, xdesc, ydesc or None) with
    desc = (values_ptr, times_ptr, count, length, offsets, lengths): length is the common
    length (offsets and lengths None) or 0 with int64 host arrays of the sequence form."""
    # is_pdist: 0 cdist, 1 pdist (X only), 2 paired (X[k] with Y[k])
    if tx is None and ty is None:
        fast = _batch_fast(fname, X, Y, is_pdist, condensed, device_kind, device_index,
                           cuda_devices, layout)
        if fast is not None:
            return fast
    colls = [("X", X, False)]
    if is_pdist != 1:
        colls.append(("Y", Y, False))
    if tx is not None:
        colls.append(("tx", tx, True))
    if is_pdist != 1 and ty is not None:
        colls.append(("ty", ty, True))
    named, spans = [], []
    for name, value, _ in colls:
        start = len(named)
        if _is_seq(value):
            named += [(f"{name}[{i}]", x) for i, x in enumerate(value)]
            spans.append((start, len(named), True))
        else:
            named.append((name, value))
            spans.append((start, start + 1, False))
    found = _classify(fname, named, cuda_devices)
    if found is None:
        return None
    lib, arrays = found
    dev = _device(fname, lib, arrays, device_kind, device_index)
    adopted = [[x for _, x in arrays[s:e]] if seq else arrays[s][1] for s, e, seq in spans]
    del arrays, named

    with lib.use(dev):
        c = {}
        for (name, _, times), value in zip(colls, adopted):
            c[name] = _Coll(name, times)
            c[name].inspect(lib, value, layout)
        del adopted
        x, y = c["X"], c.get("Y")
        if y is not None and x.dim != y.dim:
            raise ValueError(f"X has dimension {x.dim} but Y has dimension {y.dim}")
        dt = np.dtype(np.float32 if x.f32 and (y is None or y.f32) else np.float64)
        if "tx" in c:
            c["tx"].match(x)
        if "ty" in c:
            c["ty"].match(y)

        # Output first: a matrix too large for the GPU fails before any copying.
        if is_pdist == 2:  # paired: (x_k, y_k)
            if x.n != y.n:
                raise ValueError(f"{fname}(): X has {x.n} series but Y has {y.n}: "
                                 "paired() needs as many of each")
            shape = (x.n,)
        elif is_pdist:
            n = x.n
            if n > 3037000499:
                raise MemoryError(f"{fname}(): the distance matrix needs "
                                  f"{n * n * dt.itemsize} bytes: size overflows")
            shape = (n * (n - 1) // 2,) if condensed else (n, n)
        else:
            shape = (x.n, y.n)
        size = int(np.prod(shape, dtype=object))
        plan = _Plan(fname, lib, dev, dt)
        buf = _alloc(fname, lib, dev, size, dt,
                     f"the distance matrix {'x'.join(map(str, shape))} of {dt.name}")
        out = lib.reshape(buf[:size], shape)

        def desc(vals, times):
            vptr, count, length, offsets, lengths = vals.materialize(fname, lib, dev, dt, plan)
            tptr = times.materialize(fname, lib, dev, dt, plan)[0] if times is not None else 0
            return (vptr, tptr, count, length, offsets, lengths)

        xdesc = desc(x, c.get("tx"))
        ydesc = desc(y, c.get("ty")) if y is not None else None
        stream = lib.stream(dev)
    code = _F32 if dt == np.float32 else _F64
    return (code, x.dim, dev, stream, lib.ptr(buf), out, plan, xdesc, ydesc)


# ---- alignment paths ---------------------------------------------------------------------------


class HostCopy:
    """GPU inputs of an alignment function, copied to the host, and the way back.

    dtw_path, subsequence_dtw and segmental_dtw compute from host arrays: their CUDA driver
    (src/cuda/path.cu) copies the series to the GPU itself, and what it keeps there is the
    grid's step codes (n m / 4 bytes) or checkpoints, so copying the inputs ((n + m) d
    values, a few MB) is small against the alignment of n m cells.
    - arrays: the inputs as numpy arrays (their dtype; float32 stays float32), in order;
    - device: the `device` argument for the C call: 'auto' and 'cuda' become 'cuda:N' of the
      inputs' GPU, anything else is passed on ('cpu' computes on the CPU, 'cuda:M' on GPU M);
    - auto: True for 'auto', which falls back to the CPU where that GPU cannot do the work
      (tswarp built without CUDA or not seeing the GPU, an option the GPU kernels lack);
    - back(x): a numpy result (a path) as an array of the inputs' library on their GPU.
    """

    __slots__ = ("arrays", "device", "auto", "lib", "dev")

    def back(self, x):
        with self.lib.use(self.dev):
            return self.lib.to_device(np.ascontiguousarray(x), self.dev)


def align_inputs(fname, named, device):
    """None when no argument of named ([(label, obj)]) is on a GPU; else a HostCopy. A host
    argument beside GPU ones, or GPU arguments on two GPUs, are a ValueError (as for the
    other functions); a dtype numpy lacks (bfloat16) is a TypeError naming the argument; a
    GPU array its library cannot read (no driver, no GPU) is a NoDeviceError naming it."""
    try:
        found = _classify(fname, named, None)
    except NoDeviceError:
        raise
    except RuntimeError as e:  # CuPy's / torch's own errors (CUDARuntimeError is one)
        label, x = next((lb, x) for lb, x in named if gpu_kind(x))
        raise NoDeviceError(f"{fname}(): {label} is a GPU array ({_tname(x)}) that could not "
                            f"be read: {e}") from None
    if found is None:
        return None
    lib, arrays = found
    dev = _device(fname, lib, arrays, _DEVICE_AUTO, -1)
    h = HostCopy()
    h.lib, h.dev = lib, dev
    h.auto = device is None or device == "auto"
    h.device = f"cuda:{dev}" if h.auto or device == "cuda" else device
    with lib.use(dev):
        out = []
        for label, x in arrays:
            if lib.dtype(x) is None:
                raise TypeError(f"{fname}(): {label} has dtype {_dtype_name(x, None)}, which "
                                f"numpy cannot hold; convert it first (x.to(torch.float32))")
            out.append(lib.host(x))
    h.arrays = out
    return h


# ---- after the C call ------------------------------------------------------------------------


def workspace(plan, nbytes):
    """(buffer, pointer) of nbytes from the library's allocator for the C library's
    temporaries, or None when it cannot give them (the C library then allocates itself and
    reports TSW_ENOMEM with the byte count if that fails too)."""
    lib = plan.lib
    try:
        with lib.use(plan.dev):
            buf = lib.empty(int(nbytes), np.uint8, plan.dev)
    except Exception as e:
        if _is_oom(e):
            return None
        raise
    return buf, lib.ptr(buf)


def _check_times(t, label, f32):
    """The C binding's check_times: finite and strictly increasing, else ValueError."""
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise ValueError(f"{label} contains NaN or infinity (at index {bad[0]})")
    down = np.flatnonzero(~(t[1:] > t[:-1]))
    if down.size:
        i = int(down[0]) + 1
        cur, prev = repr(float(t[i])), repr(float(t[i - 1]))
        note = " (after conversion to float32)" if f32 else ""
        raise ValueError(f"{label} must be strictly increasing, but {label}[{i}] = {cur} <= "
                         f"{label}[{i - 1}] = {prev}{note}")


def diagnose(plan, rc):
    """After TSW_ENONFINITE or TSW_ETIMES: raise a ValueError naming the argument (and the
    series of a collection) at fault, from a host copy of the inputs. None if not found."""
    if rc not in (_ENONFINITE, _ETIMES):
        return None
    lib = plan.lib
    f32 = plan.dt == np.float32
    with lib.use(plan.dev):
        for label, buf, is_times, offsets, lengths in plan.entries:
            if is_times != (rc == _ETIMES):
                continue
            host = lib.host(buf)
            if label in ("a", "b", "ta", "tb"):  # one series
                series = [(label, host.reshape(-1))]
            elif offsets is None:  # one array (n, len[, d])
                series = [(f"{label}[{i}]", row)
                          for i, row in enumerate(host.reshape(host.shape[0], -1))]
            else:  # the sequence form, concatenated rows
                d = 1 if host.ndim == 1 else host.shape[1]
                flat = host.reshape(-1)
                series = [(f"{label}[{i}]", flat[o * d:(o + n) * d])
                          for i, (o, n) in enumerate(zip(offsets.tolist(), lengths.tolist()))]
            for name, values in series:
                if rc == _ENONFINITE:
                    if not np.isfinite(values).all():
                        raise ValueError(f"{name} contains NaN or infinity")
                else:
                    _check_times(values, name, f32)
    return None
