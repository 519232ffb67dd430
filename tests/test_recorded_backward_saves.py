"""A gradient recorded with create_graph holds the values PyTorch's formula saves, and fails when one of those
was changed in place since, as PyTorch's: log1p's `grad / (self + 1)` saves no input (changing it is fine),
hardtanh's recorded kernel and abs's `grad * self.sgn()` save the input (changing it fails), whatever JAX's
formula reads (Op.recorded_saves)."""
import warnings

import pytest
import torch

import tapegrad as tg

UNARY = {
    "log1p": lambda lib, x: x.log1p(), "log2": lambda lib, x: x.log2(), "log10": lambda lib, x: x.log10(),
    "special.log1p": lambda lib, x: lib.special.log1p(x), "abs": lambda lib, x: x.abs(),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x), "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.4, 0.0),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x),
    "exp": lambda lib, x: x.exp(), "sqrt": lambda lib, x: x.sqrt(), "sin": lambda lib, x: x.sin(),
    "tanh": lambda lib, x: x.tanh(), "expm1": lambda lib, x: x.expm1(), "relu": lambda lib, x: x.relu(),
}

BINARY = {
    "xlogy": lambda lib, a, b: lib.xlogy(a, b), "special.xlog1py": lambda lib, a, b: lib.special.xlog1py(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b), "remainder": lambda lib, a, b: lib.remainder(a, b),
    "addcdiv": lambda lib, a, b: lib.addcdiv(a, a, b), "mse_loss": lambda lib, a, b: lib.nn.functional.mse_loss(a, b),
    "logaddexp": lambda lib, a, b: lib.logaddexp(a, b), "logaddexp2": lambda lib, a, b: lib.logaddexp2(a, b),
    "prelu": lambda lib, a, b: lib.nn.functional.prelu(a - 0.45, b[:1]),
    "bce_with_logits": lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(a, b),
    "mul": lambda lib, a, b: a * b, "div": lambda lib, a, b: a / b, "pow": lambda lib, a, b: a ** b,
    "atan2": lambda lib, a, b: lib.atan2(a, b),
}


def _outcome(lib, fn, changed, binary):
    """"ok" or "modified" after changing `changed` ("a", "b", or "result") between the recorded gradient and
    its backward."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = lib.tensor([0.3, 0.6, 0.45, 0.2], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([0.5, 0.25, 0.7, 0.35], dtype=lib.float64, requires_grad=True)
        result = fn(lib, a, b) if binary else fn(lib, a)
        grads = lib.autograd.grad(result.sum(), [a, b] if binary else [a], create_graph=True, allow_unused=True)
        total = sum(g.sum() for g in grads if g is not None and g.requires_grad)
        with lib.no_grad():
            {"a": a, "b": b, "result": result}[changed].add_(0.01)
        try:
            lib.autograd.grad(total, [a, b] if binary else [a], allow_unused=True)
        except RuntimeError as e:
            return "modified" if "modified by an inplace operation" in str(e) else f"other: {e}"
        return "ok"


@pytest.mark.parametrize("changed", ["a", "result"])
@pytest.mark.parametrize("op", UNARY)
def test_unary_as_pytorch(op, changed):
    assert _outcome(tg, UNARY[op], changed, False) == _outcome(torch, UNARY[op], changed, False)


@pytest.mark.parametrize("changed", ["a", "b"])
@pytest.mark.parametrize("op", BINARY)
def test_binary_as_pytorch(op, changed):
    assert _outcome(tg, BINARY[op], changed, True) == _outcome(torch, BINARY[op], changed, True)
