"""Complex tensors end to end, gradients in PyTorch's convention (the conjugate of JAX's)."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, require

torch = require("torch")

Z = (np.array([[1.0, -2.0, 0.5], [0.3, 2.0, -1.0]]) + 1j * np.array([[0.5, 1.0, -1.5], [2.0, -0.7, 0.2]]))

FUNCTIONS = {
    "abs": lambda lib, z: z.abs(),
    "square_abs": lambda lib, z: (z * z.conj()).real,
    "exp_real": lambda lib, z: z.exp().real,
    "angle": lambda lib, z: z.angle(),
    "imag_of_log": lambda lib, z: z.log().imag,
    "matmul": lambda lib, z: (z @ z.mT).abs(),
    "view_as_real": lambda lib, z: lib.view_as_real(z * z),
    "polar_roundtrip": lambda lib, z: lib.polar(z.abs(), z.angle()).real * z.imag,
    "sum_then_abs": lambda lib, z: z.sum(1).abs(),
    "norm": lambda lib, z: lib.linalg.vector_norm(z, dim=1),
    "sigmoid_real": lambda lib, z: z.sigmoid().real,
    "div": lambda lib, z: (1 / z).imag,
    "real_times_complex": lambda lib, z: (z.real * z).abs(),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_complex_gradients_follow_pytorch(name, dtype):
    def build(lib):
        z = lib.tensor(Z.astype(dtype), requires_grad=True)
        out = FUNCTIONS[name](lib, z)
        ct = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))).to(out.dtype)
        (out * ct).sum().backward()
        return out, z.grad

    (out, grad), (tout, tgrad) = build(tapegrad), build(torch)
    tol = 1e-5 if dtype == "complex64" else 1e-10
    assert_close(out, tout, rtol=tol, atol=tol)
    assert_close(grad, tgrad, rtol=tol, atol=tol)


def test_complex_backward_with_a_complex_seed():
    def build(lib):
        z = lib.tensor(Z, requires_grad=True)
        w = z.exp() * z
        w.backward(lib.tensor(np.full(Z.shape, 0.3 - 0.2j)))
        return z.grad

    assert_close(build(tapegrad), build(torch))


def test_complex_parts_and_dtypes():
    def build(lib):
        z = lib.tensor(Z.astype(np.complex64))
        return z.real, z.imag, z.conj(), z.abs(), lib.view_as_real(z), lib.complex(z.real, z.imag), z.angle()

    for o, t in zip(build(tapegrad), build(torch)):
        assert_close(o, t)


def test_complex_errors():
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError):
            lib.tensor([1.0]).imag
        with pytest.raises(RuntimeError):
            lib.view_as_real(lib.tensor([1.0]))
