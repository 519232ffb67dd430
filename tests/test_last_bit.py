"""Elementwise kernels that PyTorch computes as correctly rounded steps, where XLA would fold them into a
cheaper form that differs in the last bit: the same bits as PyTorch on every tier (first sight on NumPy, a
repeat, once compiled)."""
import numpy as np
import pytest

import tapegrad
from conftest import require

VALUES = np.random.default_rng(0).random((64, 33)) * 10 + 1e-3


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("code", [
    "x.rsqrt()",                          # (XLA's rsqrt, and the rsqrt it makes of 1 / sqrt: a third of floats)
    "torch.rsqrt(x[:, :5])",
    "x / 3.7",                            # (XLA divides by a broadcast value as a multiply by its reciprocal)
    "x / x[0]",
    "x / x[:, :1]",
])
def test_same_bits_as_torch(code, dtype):
    torch = require("torch")

    def run(lib):
        x = lib.tensor(VALUES, dtype=getattr(lib, dtype))
        return eval(code, {"torch": lib, "x": x}).numpy()
    theirs = run(torch)
    for _ in range(3):
        np.testing.assert_array_equal(run(tapegrad), theirs)
