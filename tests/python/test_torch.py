"""tswarp.torch: autograd.gradcheck of SoftDTW and soft_dtw_cost (float64, CPU, both inputs,
band and divergence), agreement with tslearn's SoftDTWLossPyTorch, variable lengths, and the
CUDA path when a GPU is present."""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch not installed (optional dependency)")
from tswarp.torch import SoftDTW, soft_dtw, soft_dtw_cost  # noqa: E402


def test_import_tswarp_does_not_import_torch():
    code = "import sys, tswarp; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("radius", [None, 1])
def test_gradcheck(rng, normalize, radius):
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    x = torch.randn(2, 7, 2, dtype=torch.float64, generator=g, requires_grad=True)
    y = torch.randn(2, 5, 2, dtype=torch.float64, generator=g, requires_grad=True)
    fn = SoftDTW(gamma=0.5, normalize=normalize, radius=radius)
    assert torch.autograd.gradcheck(lambda a, b: fn(a, b), (x, y), eps=1e-6, atol=1e-5)


def test_gradcheck_cost_matrix(rng):
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    C = torch.rand(3, 6, 4, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(lambda c: soft_dtw_cost(c, gamma=0.3), (C,), eps=1e-6,
                                    atol=1e-5)
    assert torch.autograd.gradcheck(lambda c: soft_dtw_cost(c, gamma=0.3, radius=1), (C,),
                                    eps=1e-6, atol=1e-5)


def test_second_derivative_raises(rng):
    # issue 36 item 10: a gradient penalty's term must not be silently dropped
    g = torch.Generator().manual_seed(int(rng.integers(2**31)))
    x = torch.randn(2, 6, 2, dtype=torch.float64, generator=g, requires_grad=True)
    y = torch.randn(2, 5, 2, dtype=torch.float64, generator=g)
    C = torch.rand(2, 6, 5, dtype=torch.float64, generator=g, requires_grad=True)
    for inputs, f in (((x,), lambda a: SoftDTW(gamma=0.5)(a, y)),
                      ((C,), lambda c: soft_dtw_cost(c, gamma=0.5))):
        loss = f(*inputs).sum()
        (gr,) = torch.autograd.grad(loss, inputs, create_graph=True)
        with pytest.raises(RuntimeError, match="no second derivative"):
            (f(*inputs).sum() + gr.pow(2).sum()).backward()  # a gradient penalty
        with pytest.raises(RuntimeError, match="no second derivative"):
            torch.autograd.gradgradcheck(f, inputs, eps=1e-6, atol=1e-5)
    # one derivative, as before
    SoftDTW(gamma=0.5)(x, y).sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all()


def test_matches_tslearn_loss(rng):
    tsl = pytest.importorskip("tslearn.metrics", reason="peer tslearn not installed")
    x = torch.tensor(rng.standard_normal((4, 20, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((4, 15, 2)), requires_grad=True)
    ours = SoftDTW(gamma=0.5)(x, y)
    ours.sum().backward()
    gx, gy = x.grad.clone(), y.grad.clone()
    x.grad = y.grad = None
    ref = tsl.SoftDTWLossPyTorch(gamma=0.5)(x, y)
    ref.sum().backward()
    # tslearn's loss builds the cost as |x|^2 + |y|^2 - 2 <x, y> (cancellation ~1e-8)
    torch.testing.assert_close(ours, ref, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(gx, x.grad, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(gy, y.grad, rtol=1e-5, atol=1e-4)
    x.grad = y.grad = None
    div = SoftDTW(gamma=0.5, normalize=True)(x, y)
    ref = tsl.SoftDTWLossPyTorch(gamma=0.5, normalize=True)(x, y)
    torch.testing.assert_close(div, ref, rtol=1e-6, atol=1e-6)


def test_variable_lengths_equal_per_pair(rng):
    x = torch.tensor(rng.standard_normal((3, 12, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((3, 9, 2)), requires_grad=True)
    lx, ly = [12, 5, 8], torch.tensor([9, 9, 2])
    fn = SoftDTW(gamma=0.2, normalize=True, radius=2, layout="channels_last")
    loss = fn(x, y, x_lengths=lx, y_lengths=ly)
    (loss * torch.arange(1.0, 4.0, dtype=torch.float64)).sum().backward()
    for k in range(3):
        xk = x[k : k + 1, : lx[k]].detach().clone().requires_grad_(True)
        yk = y[k : k + 1, : int(ly[k])].detach().clone().requires_grad_(True)
        lk = fn(xk, yk)
        (lk * (k + 1)).sum().backward()
        torch.testing.assert_close(loss[k], lk[0], rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(x.grad[k, : lx[k]], xk.grad[0], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(y.grad[k, : int(ly[k])], yk.grad[0], rtol=1e-10, atol=1e-12)
        assert (x.grad[k, lx[k]:] == 0).all() and (y.grad[k, int(ly[k]):] == 0).all()


def test_module_cpu_float32_and_no_grad(rng):
    x = torch.tensor(rng.standard_normal((5, 30)), dtype=torch.float32, requires_grad=True)
    y = torch.tensor(rng.standard_normal((5, 25)), dtype=torch.float32)
    fn = SoftDTW(gamma=0.1)
    loss = fn(x, y)
    assert loss.dtype == torch.float32 and loss.shape == (5,)
    loss.mean().backward()
    assert x.grad.shape == x.shape and torch.isfinite(x.grad).all()
    with torch.no_grad():
        v = fn(x, y)
    torch.testing.assert_close(v, loss.detach())
    with pytest.raises(TypeError, match="x must be a float32 or float64"):
        fn(x.to(torch.int32), y)
    with pytest.raises(ValueError, match="batch"):
        fn(x, y[:3])
    with pytest.raises(ValueError, match="x_lengths"):
        fn(x, y, x_lengths=[31, 1, 1, 1, 1])


def _spy_raw(monkeypatch, name):
    """Records the arguments of each call of tswarp's raw soft-DTW binding `name`."""
    import tswarp.torch as tt

    calls, raw = [], getattr(tt._tswarp, name)

    def spy(*a):
        calls.append(a)
        return raw(*a)

    monkeypatch.setattr(tt._tswarp, name, spy)
    return calls


@pytest.mark.parametrize("normalize", [False, True])
def test_no_grad_computes_values_only(rng, monkeypatch, normalize):
    """Under torch.no_grad (or with no input requiring grad) no gradient is computed, and the
    values are the same bits as with autograd on."""
    x = torch.tensor(rng.standard_normal((3, 20, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((3, 15, 2)), requires_grad=True)
    fn = SoftDTW(gamma=0.5, normalize=normalize)
    calls = _spy_raw(monkeypatch, "_soft_dtw_grad_raw")
    loss = fn(x, y)
    assert calls[-1][3] != 0 and calls[-1][4] != 0  # grad_x, grad_y pointers
    with torch.no_grad():
        v = fn(x, y)
    assert calls[-1][3] == 0 and calls[-1][4] == 0 and not v.requires_grad
    assert torch.equal(v, loss.detach())
    w = fn(x.detach(), y.detach())
    assert calls[-1][3] == 0 and calls[-1][4] == 0 and torch.equal(w, v)
    # only the input that requires grad gets one
    fn(x, y.detach()).sum().backward()
    assert calls[-1][3] != 0 and calls[-1][4] == 0
    C = torch.tensor(rng.random((2, 6, 5)), requires_grad=True)
    calls = _spy_raw(monkeypatch, "_soft_dtw_cost_grad_raw")
    c1 = soft_dtw_cost(C, gamma=0.5)
    assert calls[-1][2] != 0  # grad_cost pointer
    with torch.no_grad():
        c2 = soft_dtw_cost(C, gamma=0.5)
    assert calls[-1][2] == 0 and torch.equal(c2, c1.detach())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU in this machine")
@pytest.mark.parametrize("normalize", [False, True])
def test_cuda_no_grad_values_equal_autograd_values(normalize):
    """The float32 wavefront kernel without a backward pass (no_grad) gives the values of the
    call with gradients bit for bit; one block a pair and split into stripes (B=4)."""
    g = torch.Generator(device="cuda").manual_seed(7)
    for B, N in ((300, 200), (4, 700)):
        x = torch.randn(B, N, 1, device="cuda", generator=g).cumsum(1).mul(0.1)
        y = torch.randn(B, N - 30, 1, device="cuda", generator=g).cumsum(1).mul(0.1)
        fn = SoftDTW(gamma=1.0, normalize=normalize)
        with_grad = fn(x.clone().requires_grad_(), y.clone().requires_grad_())
        with torch.no_grad():
            v = fn(x.clone().requires_grad_(), y)
        assert torch.equal(v, with_grad.detach()), (B, N)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU in this machine")
@pytest.mark.parametrize("dim", [1, 3, 16, 64])
@pytest.mark.parametrize("knob", ["0", "1", None])
def test_cuda_float32_large_dims_match_cpu_float64(rng, monkeypatch, dim, knob):
    """float32 SoftDTW on CUDA at feature dims up to 64, by the matrix form (costs formed
    first, src/cuda/sdtw_mat.cuh) or the fused kernels (the crossover forced both ways by
    TSWARP_SDTW_MAT, or left to its choice), the divergence too: values and gradients within
    1e-4 of the largest entry of the float64 CPU results."""
    if knob is None:
        monkeypatch.delenv("TSWARP_SDTW_MAT", raising=False)
    else:
        monkeypatch.setenv("TSWARP_SDTW_MAT", knob)
    # (layout given: a length <= the dim, 50 at D = 64, is otherwise refused as ambiguous)
    for B, N, M, normalize in ((6, 300, 280, False), (40, 50, 70, True)):
        # the float64 reference of the float32 inputs themselves
        x = rng.random((B, N, dim)).astype(np.float32).astype(np.float64)
        y = rng.random((B, M, dim)).astype(np.float32).astype(np.float64)
        xd = torch.tensor(x, requires_grad=True)
        yd = torch.tensor(y, requires_grad=True)
        fn = SoftDTW(gamma=0.5, normalize=normalize, layout="channels_last")
        ref = fn(xd, yd)
        ref.sum().backward()
        xc = torch.tensor(x, dtype=torch.float32, device="cuda", requires_grad=True)
        yc = torch.tensor(y, dtype=torch.float32, device="cuda", requires_grad=True)
        got = fn(xc, yc)
        got.sum().backward()
        scale = ref.detach().abs().clamp(min=1)
        verr = float(((got.double().cpu() - ref.detach()).abs() / scale).max())
        assert verr <= 1e-4, (dim, knob, B, "value", verr)
        for side, g, r in (("x", xc.grad, xd.grad), ("y", yc.grad, yd.grad)):
            d = (g.double().cpu() - r).abs()
            err = float(d.max() / r.abs().max())
            at = divmod(int(d.argmax()), d.shape[1] * d.shape[2])
            assert err <= 1e-4, (dim, knob, B, side, err, at, float(r.abs().max()))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU in this machine")
def test_cuda_tensors_match_cpu(rng):
    x = torch.tensor(rng.standard_normal((4, 40, 2)), requires_grad=True)
    y = torch.tensor(rng.standard_normal((4, 30, 2)), requires_grad=True)
    fn = SoftDTW(gamma=0.3, radius=5)
    cpu = fn(x, y)
    cpu.sum().backward()
    xc = x.detach().cuda().requires_grad_(True)
    yc = y.detach().cuda().requires_grad_(True)
    gpu = fn(xc, yc)
    assert gpu.device == xc.device
    gpu.sum().backward()
    torch.testing.assert_close(gpu.cpu(), cpu.detach(), rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(xc.grad.cpu(), x.grad, rtol=1e-7, atol=1e-9)
    torch.testing.assert_close(yc.grad.cpu(), y.grad, rtol=1e-7, atol=1e-9)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU in this machine")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_batch_on_several_gpus_equals_one(rng, dtype):
    """device='cuda:all' or a list of GPUs spreads a CUDA batch over them: one GPU's values
    and gradients bit for bit, on the tensors' GPU (also with padded lengths)."""
    n = torch.cuda.device_count()
    src = n - 1
    x = torch.tensor(rng.standard_normal((90, 60, 2)), dtype=dtype, device=f"cuda:{src}")
    y = torch.tensor(rng.standard_normal((90, 50, 2)), dtype=dtype, device=f"cuda:{src}")
    lx = rng.integers(1, 61, 90)
    for lengths in (None, lx):
        fn = SoftDTW(gamma=0.5, normalize=lengths is None)
        xa, ya = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
        one = fn(xa, ya, x_lengths=lengths)
        one.sum().backward()
        for dev in ("cuda:all", list(reversed(range(n)))):
            fm = SoftDTW(gamma=0.5, normalize=lengths is None, device=dev)
            xb, yb = x.clone().requires_grad_(True), y.clone().requires_grad_(True)
            got = fm(xb, yb, x_lengths=lengths)
            assert got.device == x.device
            got.sum().backward()
            assert torch.equal(got.detach(), one.detach()), dev
            assert torch.equal(xb.grad, xa.grad) and torch.equal(yb.grad, ya.grad), dev


def test_device_takes_several_gpus_only():
    """device=: None, 'cuda:all' or a list of GPUs; CPU tensors refuse a list."""
    x, y = torch.randn(3, 10, 1), torch.randn(3, 12, 1)
    for bad in ("cuda", "cpu", "cuda:0", 1):
        with pytest.raises(ValueError, match="device must be None"):
            SoftDTW(device=bad)
    with pytest.raises(ValueError, match="CUDA tensors"):
        soft_dtw(x, y, device="cuda:all")
    with pytest.raises(ValueError, match="CUDA tensors"):
        SoftDTW(device=[0, 1])(x, y)


@pytest.mark.parametrize("normalize", [False, True])
def test_cpu_matrix_form_equals_fused(rng, monkeypatch, normalize):
    """CPU tensors at 70 features take the matrix form (tswarp._sdtw._matrix_grad): the same
    values and gradients as the fused kernel (TSWARP_SDTW_MAT=0) to 1e-9, float64."""
    x = rng.normal(size=(3, 30, 70))
    y = rng.normal(size=(3, 26, 70))
    out = {}
    for knob in ("0", None):
        if knob is None:
            monkeypatch.delenv("TSWARP_SDTW_MAT", raising=False)
        else:
            monkeypatch.setenv("TSWARP_SDTW_MAT", knob)
        xt = torch.tensor(x, requires_grad=True)
        yt = torch.tensor(y, requires_grad=True)
        v = SoftDTW(gamma=0.3, normalize=normalize, radius=6, layout="channels_last")(xt, yt)
        v.sum().backward()
        out[knob] = (v.detach(), xt.grad, yt.grad)
    for a, b in zip(out["0"], out[None]):
        torch.testing.assert_close(b, a, rtol=1e-9, atol=1e-9)
