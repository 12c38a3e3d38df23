"""Soft-DTW as a PyTorch loss: ``SoftDTW`` (series) and ``soft_dtw_cost`` (cost matrices).

Needs PyTorch (an optional dependency: ``import tswarp`` does not import it)::

    >>> import torch
    >>> from tswarp.torch import SoftDTW
    >>> loss_fn = SoftDTW(gamma=0.1, normalize=True)
    >>> x = torch.randn(8, 50, 3, requires_grad=True); y = torch.randn(8, 40, 3)
    >>> loss = loss_fn(x, y)          # (8,) losses
    >>> loss.mean().backward()        # x.grad filled

The value and the gradient come from one C call in the forward pass (the gradient is kept
for the backward pass, which only scales it by the incoming gradient); without any input
requiring grad, or under ``torch.no_grad()`` / ``torch.inference_mode()``, the forward pass
computes values only (about half the time; the same values). CPU tensors run on tswarp's CPU
backend, CUDA tensors on its CUDA backend in place: same GPU, the current stream of
PyTorch, no copy to the host.

Soft-DTW is differentiable once: a second derivative (``create_graph=True`` followed by a
backward pass through the gradient, a gradient penalty, ``torch.autograd.gradgradcheck``)
raises ``RuntimeError`` rather than silently dropping that term.
"""


import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    from ._optional import require
    require("torch", "tswarp.torch")  # raises MissingDependency naming the extra
    raise

from . import _tswarp
from ._conventions import check_bool, check_layout, collection_transpose
from ._sdtw import _gamma, _matrix_form, _matrix_grad, _n_jobs, _window

__all__ = ["SoftDTW", "soft_dtw", "soft_dtw_cost"]


def _dtype_code(t, name):
    if t.dtype == torch.float32:
        return 0
    if t.dtype == torch.float64:
        return 1
    raise TypeError(f"{name} must be a float32 or float64 tensor, got {t.dtype}")


def _lengths(lengths, count, full, name):
    """Host int64 (count,) array of lengths in [1, full], or None for all full."""
    if lengths is None:
        return None
    if isinstance(lengths, torch.Tensor):
        lengths = lengths.detach().to("cpu")
        if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
            raise TypeError(f"{name} must hold integers, got {lengths.dtype}")
        arr = lengths.to(torch.int64).numpy()
    else:
        arr = np.asarray(lengths)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    arr = np.ascontiguousarray(arr.reshape(-1), dtype=np.int64)
    if arr.shape[0] != count:
        raise ValueError(f"{name} has {arr.shape[0]} entries for a batch of {count}")
    if count and (arr.min() < 1 or arr.max() > full):
        raise ValueError(f"{name} must lie in [1, {full}], got values in "
                         f"[{arr.min()}, {arr.max()}]")
    return arr


def _where(t):
    """(on_device, stream, device_index) for the binding."""
    if t.device.type == "cuda":
        idx = t.device.index if t.device.index is not None else torch.cuda.current_device()
        return True, torch.cuda.current_stream(t.device).cuda_stream, idx
    if t.device.type != "cpu":
        raise ValueError(f"tensors must be on the CPU or a CUDA device, got {t.device}")
    return False, 0, 0


def _device_form(device):
    """None, 'cuda:all' or a list of GPUs (checked as a tswarp call checks it)."""
    if device is None:
        return None
    if device == "cuda:all":
        return device
    if isinstance(device, (list, tuple)):
        return list(device)
    raise ValueError(f"device must be None (the tensors' device), 'cuda:all' or a list of GPUs, "
                     f"got {device!r}")


def _devices(device, t):
    """None, or the several GPUs ('cuda:all' or a list) a CUDA batch is spread over."""
    device = _device_form(device)
    if device is not None and t.device.type != "cuda":
        raise ValueError(f"device={device!r} spreads a batch of CUDA tensors over several "
                         f"GPUs; these tensors are on {t.device}")
    return device


def _series(t, name, code=0):
    """A (batch, len, d) view of t in tswarp's layout (code: tswarp/_conventions.py)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if collection_transpose(tuple(t.shape), name, code):
        t = t.transpose(1, 2)  # channels_first: autograd carries the gradient back
    if t.dim() == 2:
        t = t.unsqueeze(-1)
    if t.dim() != 3:
        raise ValueError(f"{name} must be (batch, len) or (batch, len, d), got {tuple(t.shape)}")
    if 0 in t.shape:
        raise ValueError(f"{name} is empty (shape {tuple(t.shape)})")
    return t


def _workspace(on_dev, device, raw, args, *more):
    """CUDA tensors: the call's device workspace from PyTorch's caching allocator (so the C
    library does no cudaMalloc of its own); (address, bytes, keep-alive tensor)."""
    if not on_dev:
        return 0, 0, None
    nbytes = raw(*args, 0, 0, True, *more)
    if nbytes == 0:
        return 0, 0, None
    try:
        buf = torch.empty(nbytes + 256, dtype=torch.uint8, device=device)
    except torch.cuda.OutOfMemoryError as e:
        raise MemoryError(f"soft-DTW gradient needs {nbytes} bytes of GPU memory on {device} "
                          f"for the backward pass: {e}") from None
    addr = buf.data_ptr()
    return (addr + 255) // 256 * 256, nbytes, buf


_NO_SECOND = ("tswarp's soft-DTW has no second derivative: a backward pass through its "
              "gradient (create_graph=True: a gradient penalty, gradgradcheck) is not supported")


def _first_derivative_only(*pairs):
    """The gradients of a backward pass, given as (gradient, input) pairs. Under
    create_graph=True (grad mode on inside backward) each gradient gets a grad_fn, connected
    to its input, that raises when differentiated: a second derivative (a gradient penalty,
    gradgradcheck) fails loudly instead of treating the gradient as a constant, which would
    drop that term without a word."""
    grads = tuple(g for g, _ in pairs)
    if not torch.is_grad_enabled() or all(g is None for g in grads):
        return grads
    delayed = getattr(getattr(torch._C, "_functions", None), "DelayedError", None)
    if delayed is None:  # pragma: no cover - an old or future PyTorch without it
        raise RuntimeError(_NO_SECOND)
    fakes = []
    for g, inp in pairs:
        if g is None:
            continue
        fake = g.detach()
        if inp is not None and inp.requires_grad:
            fake = fake + inp * 0  # a path to the input, through the raising node
        else:
            fake.requires_grad_(True)
        fakes.append(fake)
    out = delayed(_NO_SECOND.encode(), len(fakes))(*fakes)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    it = iter(out)
    return tuple(next(it) if g is not None else None for g in grads)


class _SoftDTWFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, gamma, normalize, wk, wv, lx, ly, n_jobs, grad_on, devices):
        # grad_on: autograd records this call (grad mode, outside forward); under
        # torch.no_grad only the values are computed, not gradients nobody will ask for
        want_x = grad_on and ctx.needs_input_grad[0]
        want_y = grad_on and ctx.needs_input_grad[1]
        x_in, y_in = x, y
        x = x.detach().contiguous()
        y = y.detach().contiguous()
        count, n, d = x.shape
        m = y.shape[1]
        on_dev, stream, idx = _where(x)
        if not on_dev and lx is None and ly is None and _matrix_form(d):
            # CPU tensors of many features: the matrix form (tswarp._sdtw._matrix_grad, the
            # crossover soft_dtw_grad takes too)
            _dtype_code(x, "x")
            v, ga, gb = _matrix_grad(x.numpy(), y.numpy(), gamma, wk, wv, normalize, n_jobs)
            gx = torch.from_numpy(ga).to(x.dtype) if want_x else None
            gy = torch.from_numpy(gb).to(y.dtype) if want_y else None
            ctx.save_for_backward(gx, gy, x_in, y_in)
            return torch.from_numpy(v).to(x.dtype)
        values = torch.empty(count, dtype=x.dtype, device=x.device)
        # rows past a series' length are not written: they get a zero gradient
        alloc = torch.zeros if (lx is not None or ly is not None) else torch.empty
        gx = alloc(x.shape, dtype=x.dtype, device=x.device) if want_x else None
        gy = alloc(y.shape, dtype=y.dtype, device=y.device) if want_y else None
        args = (x.data_ptr(), y.data_ptr(), values.data_ptr(),
                gx.data_ptr() if gx is not None else 0, gy.data_ptr() if gy is not None else 0,
                _dtype_code(x, "x"), d, count, n, m,
                lx.ctypes.data if lx is not None else 0, ly.ctypes.data if ly is not None else 0,
                gamma, wk, wv, normalize, on_dev, stream, idx, n_jobs)
        ws, ws_bytes, _keep = _workspace(on_dev, x.device, _tswarp._soft_dtw_grad_raw, args,
                                         devices)
        _tswarp._soft_dtw_grad_raw(*args, ws, ws_bytes, False, devices)
        ctx.save_for_backward(gx, gy, x_in, y_in)
        return values

    @staticmethod
    def backward(ctx, grad_out):
        gx, gy, x, y = ctx.saved_tensors
        with torch.no_grad():
            s = grad_out.reshape(-1, 1, 1)
            gx = gx * s if gx is not None else None
            gy = gy * s if gy is not None else None
        gx, gy = _first_derivative_only((gx, x), (gy, y))
        return (gx, gy, None, None, None, None, None, None, None, None, None)


class _SoftDTWCostFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, C, gamma, wk, wv, lx, ly, n_jobs, grad_on):
        want = grad_on and ctx.needs_input_grad[0]  # (as in _SoftDTWFunction)
        C_in = C
        C = C.detach().contiguous()
        count, n, m = C.shape
        on_dev, stream, idx = _where(C)
        values = torch.empty(count, dtype=C.dtype, device=C.device)
        gc = torch.empty_like(C) if want else None
        args = (C.data_ptr(), values.data_ptr(), gc.data_ptr() if gc is not None else 0,
                _dtype_code(C, "C"), count, n, m,
                lx.ctypes.data if lx is not None else 0, ly.ctypes.data if ly is not None else 0,
                gamma, wk, wv, on_dev, stream, idx, n_jobs)
        ws, ws_bytes, _keep = _workspace(on_dev, C.device, _tswarp._soft_dtw_cost_grad_raw,
                                         args)
        _tswarp._soft_dtw_cost_grad_raw(*args, ws, ws_bytes)
        ctx.save_for_backward(gc, C_in)
        return values

    @staticmethod
    def backward(ctx, grad_out):
        gc, C = ctx.saved_tensors
        with torch.no_grad():
            gc = gc * grad_out.reshape(-1, 1, 1) if gc is not None else None
        (gc,) = _first_derivative_only((gc, C))
        return (gc, None, None, None, None, None, None, None)


def soft_dtw(x, y, *, gamma=1.0, normalize=False, window=None, radius=None,
             itakura_max_slope=None, x_lengths=None, y_lengths=None, n_jobs=None, layout=None,
             device=None):
    """Soft-DTW of the pairs (x[k], y[k]) with autograd; see :class:`SoftDTW`."""
    g = _gamma(gamma)
    wk, wv = _window(window, radius, itakura_max_slope)
    normalize = check_bool(normalize, "normalize")
    code = check_layout(layout)
    x = _series(x, "x", code)
    y = _series(y, "y", code)
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y have different batch sizes: {x.shape[0]} and {y.shape[0]}")
    if x.shape[2] != y.shape[2]:
        raise ValueError(f"x and y have different dimensions: {x.shape[2]} and {y.shape[2]}")
    if x.device != y.device:
        raise ValueError(f"x and y are on different devices: {x.device} and {y.device}")
    _dtype_code(x, "x")
    _dtype_code(y, "y")
    if x.dtype != y.dtype:  # float32 with float64: computed in float64
        x, y = x.to(torch.float64), y.to(torch.float64)
    if x.device.type == "cpu":
        for t, name in ((x, "x"), (y, "y")):
            if not torch.isfinite(t).all():
                raise ValueError(f"{name} contains NaN or infinity")
    lx = _lengths(x_lengths, x.shape[0], x.shape[1], "x_lengths")
    ly = _lengths(y_lengths, y.shape[0], y.shape[1], "y_lengths")
    devices = _devices(device, x)
    return _SoftDTWFunction.apply(x, y, g, normalize, wk, wv, lx, ly, _n_jobs(n_jobs),
                                  torch.is_grad_enabled(), devices)


def soft_dtw_cost(C, *, gamma=1.0, window=None, radius=None, itakura_max_slope=None,
                  x_lengths=None, y_lengths=None, n_jobs=None):
    """Soft-DTW of cost matrices C (batch, n, m) (or one (n, m)) with autograd.

    Pair k uses the top-left x_lengths[k] x y_lengths[k] block of C[k]; the gradient with
    respect to C is the expected alignment E (zeros outside the block and the band).
    Returns a (batch,) tensor (a 0-d tensor for one matrix). ``window``, ``radius`` and
    ``itakura_max_slope`` restrict the cells as in :func:`tswarp.soft_dtw`.
    """
    g = _gamma(gamma)
    wk, wv = _window(window, radius, itakura_max_slope)
    if not isinstance(C, torch.Tensor):
        raise TypeError(f"C must be a torch.Tensor, got {type(C).__name__}")
    single = C.dim() == 2
    if single:
        C = C.unsqueeze(0)
    if C.dim() != 3 or 0 in C.shape:
        raise ValueError(f"C must be a non-empty (batch, n, m) or (n, m) tensor, got "
                         f"{tuple(C.shape)}")
    _dtype_code(C, "C")
    lx = _lengths(x_lengths, C.shape[0], C.shape[1], "x_lengths")
    ly = _lengths(y_lengths, C.shape[0], C.shape[2], "y_lengths")
    if C.device.type == "cpu" and lx is None and ly is None and not torch.isfinite(C).all():
        raise ValueError("C contains NaN or infinity")
    out = _SoftDTWCostFunction.apply(C, g, wk, wv, lx, ly, _n_jobs(n_jobs),
                                     torch.is_grad_enabled())
    return out[0] if single else out


class SoftDTW(torch.nn.Module):
    """Soft-DTW loss between batches of series (Cuturi and Blondel 2017).

    Parameters
    ----------
    gamma : float, default 1.0
        Smoothing > 0.
    normalize : bool, default False
        The soft-DTW divergence sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2 (Blondel, Mensch
        and Vert 2021): >= 0, and 0 when x == y.
    window : float in [0, 1], optional
        Sakoe-Chiba band as a fraction of the shorter length (aeon's ``window``).
    radius : int, optional
        Sakoe-Chiba radius in cells: pytorch-softdtw-cuda's ``bandwidth=r`` is
        ``radius=r`` (cells with abs(i - j) > r are pruned). For unequal lengths n != m the
        band is widened by abs(n - m) on the longer side (tslearn's rule), so that the last
        cell (n-1, m-1) always stays reachable (pytorch-softdtw-cuda prunes it and returns
        inf there).
    itakura_max_slope : float, optional
        Itakura parallelogram (CPU tensors only: the GPU kernels take Sakoe-Chiba bands,
        and CUDA tensors with it raise NotImplementedError).
    dist : "sqeuclidean"
        The local cost; for another cost build the (batch, n, m) cost tensor yourself and
        call :func:`soft_dtw_cost`.
    n_jobs : int, optional
        CPU threads for CPU tensors (None: all cores).
    device : None, 'cuda:all' or a list of GPUs
        None (default): the tensors' device. 'cuda:all' or a list ([0, 1], ['cuda:0',
        'cuda:1']): a batch of CUDA tensors is split over those GPUs (tswarp's
        tsw_exec.n_devices; the inputs are staged through host memory and the values and
        gradients come back to the tensors' GPU, equal to one GPU's bit for bit). Worth it
        for large batches only: the call waits for the result (no stream ordering) and
        copies the batch both ways (bench/multi_gpu.py --torch measures it).
    layout : {None, 'channels_last', 'channels_first'}
        channels_last (batch, len, d) is pytorch-softdtw-cuda's and tslearn's layout;
        'channels_first' reads (batch, d, len) (a Conv1d's output). None reads
        channels_last and refuses a shape that may be the other layout (d > 1 and
        d >= len): pass the layout then.

    forward(x, y, x_lengths=None, y_lengths=None) -> (batch,) tensor
        x (batch, n, d) or (batch, n), y (batch, m, d) or (batch, m), float32 or float64,
        both on the CPU or both on one GPU. x_lengths / y_lengths: the true lengths of
        padded series (ints, a list or a tensor); padding gets a zero gradient.
    """

    def __init__(self, gamma=1.0, normalize=False, window=None, radius=None,
                 itakura_max_slope=None, dist="sqeuclidean", n_jobs=None, layout=None,
                 device=None):
        super().__init__()
        if dist != "sqeuclidean":
            raise ValueError("dist must be 'sqeuclidean'; for another cost use "
                             "tswarp.torch.soft_dtw_cost on a cost tensor")
        self.gamma = _gamma(gamma)
        self.normalize = check_bool(normalize, "normalize")
        _window(window, radius, itakura_max_slope)
        self.window, self.radius, self.itakura_max_slope = window, radius, itakura_max_slope
        self.n_jobs = n_jobs
        _n_jobs(n_jobs)
        check_layout(layout)
        self.layout = layout
        self.device = _device_form(device)

    def forward(self, x, y, x_lengths=None, y_lengths=None):
        return soft_dtw(x, y, gamma=self.gamma, normalize=self.normalize, window=self.window,
                        radius=self.radius, itakura_max_slope=self.itakura_max_slope,
                        x_lengths=x_lengths, y_lengths=y_lengths, n_jobs=self.n_jobs,
                        layout=self.layout, device=self.device)

    def extra_repr(self):
        band = ", ".join(f"{k}={v}" for k, v in (("window", self.window), ("radius", self.radius),
                                                 ("itakura_max_slope", self.itakura_max_slope))
                         if v is not None)
        return (f"gamma={self.gamma}, normalize={self.normalize}" + (f", {band}" if band else "")
                + (f", layout={self.layout!r}" if self.layout else ""))
