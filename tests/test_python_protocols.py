"""Tensor in Python's and NumPy's protocols as PyTorch's: operators with NumPy arrays and scalars (NumPy
computes `tensor op array` and refuses `array op tensor`; its scalars are numbers), np.asarray and NumPy
functions of tensors, `in`, reversed(), pow() with a modulus, int()/float() of complex tensors, torch.Size's
construction, and the attributes users set: requires_grad, data, grad, real/imag and the read-only ones."""
import math
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg


def outcome(lib, code, **names):
    """What `code` gives with `lib` as `lib`: ("value", type, repr) or ("error", type, message), with
    tapegrad's names spelled as torch's."""
    env = {"lib": lib, "np": np, "math": math, **names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if "=" in code and "==" not in code and "<=" not in code and ">=" not in code and "!=" not in code:
                exec(code, env)
                value = env["t"]
            else:
                value = eval(code, env)
        except Exception as e:
            return "error", type(e).__name__, str(e).replace("tapegrad", "torch")
    text = repr(value).replace("tapegrad", "torch")
    if isinstance(value, tg.Tensor) or isinstance(value, torch.Tensor):
        text += f" requires_grad={value.requires_grad}"
    return "value", type(value).__name__, text


def assert_same(code, sentences=None, **names):
    """Same value, or same error: PyTorch's type and words (its first `sentences` sentences where given);
    tapegrad may add a sentence on how to fix it."""
    ours, theirs = outcome(tg, code, **names), outcome(torch, code, **names)
    if theirs[0] == "error":
        words = theirs[2] if sentences is None else ". ".join(theirs[2].split(". ")[:sentences])
        assert ours[:2] == theirs[:2] and ours[2].startswith(words), (code, ours, theirs)
    else:
        assert ours == theirs, code


NUMPY_OPERANDS = [
    "np.float64(2) * lib.tensor([1.0, 2.0])", "np.float32(2) - lib.tensor([1.0, 2.0])",
    "np.int64(2) * lib.tensor([1.0, 2.0])", "np.bool_(True) * lib.tensor([1.0, 2.0])",
    "np.float16(2) * lib.tensor([1.0, 2.0])", "np.complex128(1j) * lib.tensor([1.0, 2.0])",
    "np.float32(2) ** lib.tensor([1.0, 2.0])", "np.float32(2) / lib.tensor([1.0, 2.0])",
    "np.int64(7) // lib.tensor([3])", "np.float32(2) % lib.tensor([1.5, 2.0])", "np.int32(2) & lib.tensor([3])",
    "np.float64(2) > lib.tensor([1.0, 2.0])", "np.float32(1.5) <= lib.tensor([1.0, 2.0])",
    "np.float64(2) + lib.tensor(1)", "np.float64(2) * lib.tensor([1.0], requires_grad=True)",
    "lib.tensor([1.0, 2.0]) * np.float64(2)",
    # a NumPy array: NumPy computes tensor op array (a tensor without history, NumPy's dtype) ...
    "lib.tensor([1.0, 2.0]) * np.array(2.0)", "lib.tensor([1.0, 2.0]) + np.array([2.0, 3.0])",
    "lib.tensor([1, 2]) * np.array([1.5, 2.5], dtype=np.float32)", "lib.tensor([1.0, 2.0]) @ np.array([1.0, 2.0])",
    "lib.tensor([1.0, 2.0]) - np.array([1.0, 1.0])", "lib.tensor([1.0, 2.0]) ** np.array([1.0, 2.0])",
    "lib.tensor([1.0, 2.0]) * np.array([[1.0], [2.0]])", "lib.tensor([1, 2]) * np.array([True, False])",
    "lib.tensor([1.0, 2.0]) / np.array([1.0, 4.0])",
    # ... and refuses array op tensor, comparisons but ==, and a tensor that requires grad
    "np.array([2.0, 3.0]) * lib.tensor([1.0, 2.0])", "np.array(2.0) * lib.tensor([1.0, 2.0])",
    "np.array([1.0, 2.0]) - lib.tensor([1.0, 2.0])", "np.array([1.0, 2.0]) @ lib.tensor([1.0, 2.0])",
    "np.array([1, 2]) + lib.tensor([1.0, 2.0])", "lib.tensor([1.0, 2.0]) < np.array([1.0, 2.0])",
    "np.array([1.0, 2.0]) < lib.tensor([1.0, 2.0])", "np.array([1.0, 2.0]) == lib.tensor([1.0, 2.0])",
    "lib.tensor([1.0, 2.0]) == np.array([1.0, 3.0])", "lib.tensor([1.0, 2.0]) != np.array([1.0, 3.0])",
    "np.array([1.0, 4.0]) / lib.tensor([1.0, 2.0])",
    "lib.tensor([1.0], requires_grad=True) * np.array([2.0])",
    "t = lib.tensor([1.0, 2.0]); t += np.array([1.0, 1.0])", "t = lib.tensor([1.0, 2.0]); t *= np.array(2.0)",
    "t = lib.tensor([1.0], requires_grad=True); t += np.array([1.0])",
    # NumPy functions of a tensor: NumPy's result as a tensor (bools as uint8), refused with grad
    "np.sqrt(lib.tensor([1.0, 2.0]))", "np.add(lib.tensor([1.0, 2.0]), 1)", "np.greater(lib.tensor([1.0, 2.0]), 1)",
    "np.exp(lib.tensor([1.0], requires_grad=True))", "np.asarray(lib.tensor([1.0, 2.0], requires_grad=True))",
    "np.array(lib.tensor([1.0], requires_grad=True) * 2)", "np.asarray(lib.tensor([1, 2]), dtype=np.float32)",
    "lib.tensor([1.0]).__array_priority__",
    # functions take no NumPy array where they take a tensor
    "lib.add(lib.tensor([1.0, 2.0]), np.array([1.0, 2.0]))", "lib.tensor([1.0, 2.0]).add(np.array([1.0, 2.0]))",
    "lib.maximum(lib.tensor([1.0]), np.array([1.0]))", "lib.where(lib.tensor([True]), lib.ones(1), np.array(0.))",
    "lib.tensor([1.0]).copy_(np.array([1.0]))", "lib.tensor([1.0]).add_(np.array([1.0]))",
    "lib.pow(lib.tensor([1.0]), np.array(2.0))", "lib.clamp(lib.tensor([1.0]), np.array(0.))",
    "lib.tensor([1.0]).masked_fill(lib.tensor([True]), np.array(0.))", "lib.mul(lib.tensor([1.0]), np.array(2.0))",
    "lib.atan2(lib.tensor([1.0]), np.array([1.0]))", "lib.exp(np.array([1.0]))",
    "lib.zeros(2, requires_grad=object())",
    "lib.zeros(2, 3).flip(np.int64(1), unbiased=True)", "lib.zeros(2, 3).flip(1.5, unbiased=True)",
]


@pytest.mark.parametrize("code", NUMPY_OPERANDS)
def test_numpy_operands_and_functions(code):
    assert_same(code)


PROTOCOLS = [
    "list(reversed(lib.tensor([1, 2, 3])))", "reversed(lib.tensor(5))", "lib.tensor([[1, 2], [3, 4]]).__reversed__()",
    "3 in lib.tensor([1, 2, 3])", "lib.tensor([1, 2]) in lib.tensor([1, 2, 3])", "'a' in lib.tensor([1, 2, 3])",
    "np.array([1]) in lib.tensor([1, 2, 3])", "np.int64(2) in lib.tensor([1, 2, 3])",
    "pow(lib.tensor([2]), 3, 5)", "pow(lib.tensor([2]), 3)", "pow(3, lib.tensor([2]))",
    "int(lib.tensor(1+2j))", "float(lib.tensor(1+2j))", "int(lib.tensor(2.7+0j))", "float(lib.tensor(2.5+0j))",
    "+lib.tensor([True])", "+lib.tensor([1.0])",
    "lib.tensor([1.0]).requires_grad_(2)", "lib.tensor([1.0]).requires_grad_(True)",
    "t = lib.tensor([1.0]); t.requires_grad = 1", "t = lib.tensor([1.0]); t.requires_grad = True",
    "t = lib.tensor([1.0]); t.data = 3", "t = lib.tensor([1.0]); t.data = lib.tensor([1, 2])",
    "t = lib.tensor([1.0]); t.shape = (2,)", "t = lib.tensor([1.0]); t.dtype = lib.float64",
    "t = lib.tensor([1.0]) * 2; t.grad_fn = None", "t = lib.tensor([1.0]); t.is_leaf = False",
    "t = lib.tensor([1.0]); t.ndim = 2", "t = lib.tensor([1.0]); t.device = 'cpu'", "t = lib.tensor([1.0]); t.T = 1",
    "t = lib.zeros(2, dtype=lib.complex64); t.real = lib.tensor([1.0, 2.0])",
    "t = lib.zeros(2, dtype=lib.complex64); t.imag = 3", "t = lib.zeros(2); t.real = 5", "t = lib.zeros(2); t.imag = 1",
    "t = lib.zeros(2, dtype=lib.complex64, requires_grad=True); t.real = 1",
    "lib.zeros(2, 3).size('a')", "lib.zeros(2, 3).size(1)", "lib.zeros(2, 3).size(-3)",
    "lib.Size([2]) + (3,)", "(3,) + lib.Size([2])", "lib.Size([2]) * 2", "2 * lib.Size([2])", "lib.Size([2, 3])[0:1]",
    "lib.Size([True])", "lib.Size([None])", "lib.Size(3)", "lib.Size([2.0])", "lib.Size([lib.tensor(2.0)])",
    "lib.Size([lib.tensor([2])])", "lib.Size([np.int64(2)])", "lib.Size([-3])", "lib.Size([])",
    "lib.tensor(range(3))", "lib.tensor([range(2), range(2)])", "lib.tensor(b'ab')", "lib.tensor(['a'])",
    "lib.tensor(np.array(['a']))", "lib.tensor(['a', 0])", "lib.tensor([0, 'a'])", "lib.tensor([['a']])",
    "lib.tensor(np.array([1, 2], dtype=object))", "lib.as_tensor(range(3))",
]


@pytest.mark.parametrize("code", PROTOCOLS)
def test_protocols_and_attributes(code):
    assert_same(code)


@pytest.mark.parametrize("code", ["t = lib.tensor([1.0]); t.grad = lib.tensor([1])",
                                  "t = lib.tensor([1.0]); t.grad = lib.tensor([1.0], dtype=lib.float64)",
                                  "t = lib.tensor([1.0], dtype=lib.float16); t.grad = lib.tensor([1.0])",
                                  "t = lib.tensor([1.0]); t.grad = lib.tensor([1.0, 2.0])"])
def test_grad_of_another_dtype_or_size_is_refused(code):
    # (PyTorch's further sentences are about its grad_dtype attribute, which tapegrad has not)
    assert_same(code, sentences=2)


SETITEM_VALUES = ["np.array([1.0, 2.0, 3.0])", "np.float64(2)", "np.bool_(True)", "None", "(1.0,)", "object()",
                  "np.array(2.0)", "[1.0, 2.0, 3.0]", "'a'", "lib.tensor(1.0)", "True", "2", "1 + 0j"]


@pytest.mark.parametrize("value", SETITEM_VALUES)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_setitem_values(value, dtype):
    assert_same(f"t = lib.zeros(3, dtype=lib.{dtype}); t[0:3] = {value}")


def test_numpy_scalar_times_a_parameter_keeps_its_gradient():
    """The silent failure this guards against: a NumPy scalar on the left returned a NumPy array, with no
    history, so the parameter got no gradient."""
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    out = np.sqrt(np.float64(4.0)) * w
    assert isinstance(out, tg.Tensor) and out.grad_fn is not None
    out.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]
