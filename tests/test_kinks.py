"""Gradients at the points where a function has a kink, a tie or a removable singularity.

The op table checks gradients at random points, where every formula agrees; PyTorch's backward
formulas also fix a value at 0, at a clamp bound, at a tie of max/min, at the threshold of softplus,
at b == 0 of a ** b... and JAX's differ at some of them (clip splits the gradient in half at a bound,
minimum() at a tie, b * a ** (b - 1) is NaN at 0 ** 0). Each case runs on inputs that sit on those
points, in float64, and the gradient must be PyTorch's.
"""
import numpy as np
import pytest

from conftest import assert_close, both

POINTS = [-6.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0]

CASES = {
    "relu": lambda L, x: L.relu(x),
    "relu6": lambda L, x: L.nn.functional.relu6(x),
    "hardtanh": lambda L, x: L.nn.functional.hardtanh(x),
    "hardtanh_bounds": lambda L, x: L.nn.functional.hardtanh(x, -0.5, 0.5),
    "leaky_relu": lambda L, x: L.nn.functional.leaky_relu(x, 0.1),
    "elu": lambda L, x: L.nn.functional.elu(x),
    "celu": lambda L, x: L.nn.functional.celu(x, 0.5),
    "selu": lambda L, x: L.nn.functional.selu(x),
    "softplus_threshold": lambda L, x: L.nn.functional.softplus(x, beta=1, threshold=1),
    "mish": lambda L, x: L.nn.functional.mish(x),
    "abs": lambda L, x: x.abs(),
    "sign": lambda L, x: x.sign(),
    "clamp": lambda L, x: x.clamp(-1, 1),
    "clamp_tensor_bounds": lambda L, x: x.clamp(L.full_like(x, -1.0), L.full_like(x, 1.0)),
    "maximum_tie": lambda L, x: L.maximum(x, L.zeros_like(x)),
    "minimum_tie": lambda L, x: L.minimum(x, L.zeros_like(x)),
    "maximum_self": lambda L, x: L.maximum(x, x),
    "fmax": lambda L, x: L.fmax(x, L.zeros_like(x)),
    "fmin": lambda L, x: L.fmin(x, L.zeros_like(x)),
    "sqrt_of_abs": lambda L, x: x.abs().sqrt(),
    "pow_half": lambda L, x: x.abs() ** 0.5,
    "pow_zero": lambda L, x: x ** 0,
    "pow_zero_tensor": lambda L, x: x ** L.zeros_like(x),
    "pow_tensor_exponent_of_zero": lambda L, x: L.zeros_like(x) ** (x.abs() + 1),
    "norm": lambda L, x: (x - x).norm(),
    "norm_1": lambda L, x: L.linalg.vector_norm(x, 1),
    "norm_inf": lambda L, x: L.linalg.vector_norm(x.abs(), float("inf")),
    "dist_to_self": lambda L, x: L.dist(x, x),
    "amax_ties": lambda L, x: x.abs().amax(),
    "max_ties": lambda L, x: x.abs().max(),
    "median": lambda L, x: x.abs().median(),
    "kthvalue": lambda L, x: x.abs().kthvalue(3).values,
    "std_of_constant": lambda L, x: (x * 0).std(),
    "var_of_constant": lambda L, x: (x * 0).var(),
    "logsumexp_ties": lambda L, x: L.logsumexp(L.stack([x, x]), 0),
    "remainder": lambda L, x: L.remainder(x, 1.0),
    "fmod": lambda L, x: L.fmod(x, 1.0),
    "frac": lambda L, x: x.frac(),
    "round": lambda L, x: x.round(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_at_kinks_and_ties_is_torch_s(torch, name):
    def build(lib):
        x = lib.tensor(POINTS, dtype=lib.float64, requires_grad=True)
        CASES[name](lib, x).sum().backward()
        return x.grad
    ours, theirs = both(build)
    assert_close(ours, theirs)


def test_pow_zero_exponent_values_and_exponent_gradient_are_torch_s(torch):
    def build(lib):
        x = lib.tensor([0.0, 2.0, float("nan"), -1.5, 0.0], dtype=lib.float64, requires_grad=True)
        e = lib.tensor([0.0, 0.0, 0.0, 2.0, -1.0], dtype=lib.float64, requires_grad=True)
        y = x ** e
        y.sum().backward()
        return y.detach(), x.grad, e.grad
    for ours, theirs in zip(*both(build)):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_remainder_by_a_false_bool_is_nan_as_torch_s(torch):
    def build(lib):
        return lib.remainder(lib.tensor([2.0, -3.0]), lib.tensor([True, False]))
    ours, theirs = both(build)
    assert_close(ours, theirs)


@pytest.mark.parametrize("op", ["atan2", "hypot"])
def test_two_argument_gradients_at_the_origin_are_torch_s(torch, op):
    def build(lib):
        a = lib.tensor([0.0, 0.0, 1.0, -2.0], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.0, 3.0, 0.0, 0.0], dtype=lib.float64, requires_grad=True)
        getattr(lib, op)(a, b).sum().backward()
        return a.grad, b.grad
    for ours, theirs in zip(*both(build)):
        assert_close(ours, theirs)
