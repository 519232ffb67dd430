"""Element-by-element equality with PyTorch where rounding decides the last bit.

- A division by a broadcast value is a division: XLA rewrites `x / broadcast(s)` into `x * (1 / s)`, which
  differs from PyTorch's IEEE quotient in the last bit for about a third of float32 elements.
- A Python scalar meets a float16/bfloat16 tensor as PyTorch's CPU kernels take it: mul, div and floor division
  in float32 ("opmath") with one rounding of the result; add and sub with the scalar rounded to the tensor's
  dtype.
"""
import numpy as np
import pytest

import tapegrad

from conftest import require

torch = require("torch")

_RNG = np.random.default_rng(7)
_X = (_RNG.standard_normal((60, 70)) * 10).astype(np.float32)
_X[:3] *= 1e-4   # (results in half precision's subnormal range)
_V = _RNG.standard_normal((60, 1)).astype(np.float32)
_G = _RNG.standard_normal((60, 70)).astype(np.float32)

CALLS = {
    "div by a Python float": lambda lib, x: x / 3.0,
    "div by 0.3": lambda lib, x: x / 0.3,
    "div by a 0-dim tensor": lambda lib, x: x / lib.tensor(0.3, dtype=x.dtype),
    "div by a broadcast column": lambda lib, x: x / lib.tensor(_V).to(x.dtype),
    "Python float over a tensor": lambda lib, x: 0.1 / x,
    "mul by a Python float": lambda lib, x: x * 0.1,
    "Python float times a tensor": lambda lib, x: 0.3 * x,
    "mul by a large int": lambda lib, x: x * 5001,
    "in-place mul": lambda lib, x: x.clone().mul_(0.7),
    "in-place div": lambda lib, x: x.clone().div_(0.7),
    "floor division by a Python float": lambda lib, x: x // 0.1,
    "div with rounding_mode floor": lambda lib, x: x.div(0.3, rounding_mode="floor"),
    "div with rounding_mode trunc": lambda lib, x: x.div(0.1, rounding_mode="trunc"),
    "add a Python float": lambda lib, x: x + 0.1,
    "sub a Python float": lambda lib, x: x - 0.3,
    "a chain of scalar ops": lambda lib, x: (x * 0.1) / 0.3 / 3.0 * 1.7 + 0.2,
}
# PyTorch computes these in float32 from half-precision inputs, whatever their scalar, and rounds once. Its
# vectorized kernels fuse a multiply-add where XLA rounds twice: last-bit differences in float32 and float64,
# and in bfloat16 (whose float32 intermediates keep the differences) for about one element in a thousand; those
# are not modelled, so these are compared in float16
HALF_ONLY = {
    "addcmul with a value": lambda lib, x: lib.addcmul(x, x * 0.5, x + 3, value=0.1),
    "addcdiv with a value": lambda lib, x: lib.addcdiv(x, x * 0.5, x.abs() + 3, value=0.3),
    "lerp by a Python float": lambda lib, x: lib.lerp(x, x * 0.5 + 1, 0.3),
}


# whose gradient is PyTorch's bit for bit too (reciprocal's backward, -grad * result**2, rounds differently
# from the derivative JAX takes; floor division has none)
EXACT_GRADIENTS = {"div by a Python float", "div by 0.3", "div by a 0-dim tensor", "div by a broadcast column",
                   "mul by a Python float", "Python float times a tensor", "mul by a large int", "in-place mul",
                   "in-place div", "add a Python float", "sub a Python float", "a chain of scalar ops"}


def _values(t):
    return np.asarray(t.detach().double().tolist())


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_values_are_pytorchs_bit_for_bit(call, dtype):
    out = []
    for lib in (torch, tapegrad):
        x = lib.tensor(_X).to(getattr(lib, dtype)).requires_grad_(call in EXACT_GRADIENTS)
        y = CALLS[call](lib, x)
        grad = None
        if call in EXACT_GRADIENTS:
            y.backward(lib.tensor(_G).to(y.dtype))
            grad = _values(x.grad)
        out.append((_values(y), grad, str(y.dtype).split(".")[-1]))
    (theirs, their_grad, their_dtype), (ours, our_grad, our_dtype) = out
    assert our_dtype == their_dtype
    np.testing.assert_array_equal(ours, theirs)
    if call in EXACT_GRADIENTS:
        np.testing.assert_array_equal(our_grad, their_grad)


@pytest.mark.parametrize("call", sorted(HALF_ONLY))
def test_half_precision_fused_ops_round_once_as_pytorchs(call):
    ours, theirs = (_values(HALF_ONLY[call](lib, lib.tensor(_X).to(lib.float16))) for lib in (tapegrad, torch))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_division_by_a_scalar_compiled_with_the_step_is_still_a_division(dtype):
    # (the compiled step is one XLA program: the case XLA's rewrite hit)
    x = tapegrad.tensor(_X).to(getattr(tapegrad, dtype))
    step = tapegrad.compile(lambda x: (x / 3.0) * 2.0)
    theirs = (torch.tensor(_X).to(getattr(torch, dtype)) / 3.0) * 2.0
    for _ in range(3):
        np.testing.assert_array_equal(_values(step(x)), _values(theirs))
