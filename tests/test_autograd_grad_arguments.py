"""torch.autograd.grad's arguments as PyTorch's: is_grads_batched (each grad_output a batch of them), inputs
given as a dict (the gradients come back as one), materialize_grads (zeros that require grad with
create_graph; refused beside allow_unused=False), the deprecated only_inputs, an empty inputs list, and the
order of PyTorch's checks (the outputs' before the inputs')."""
import warnings

import pytest
import torch

import tapegrad as tg
from conftest import assert_same_outcome

CASES = [
    "lib.autograd.grad(x ** 2, x, grad_outputs=lib.eye(3), is_grads_batched=True)",
    "lib.autograd.grad(x ** 2, x, grad_outputs=lib.eye(3) * lib.arange(3.), is_grads_batched=True, "
    "retain_graph=True)",
    "lib.autograd.grad([x ** 2, x * 3], [x], grad_outputs=[lib.eye(3), lib.ones(3, 3)], is_grads_batched=True)",
    "lib.autograd.grad((x ** 2).sum(), x, grad_outputs=lib.ones(2), is_grads_batched=True)",
    "lib.autograd.grad(x ** 2, x, grad_outputs=lib.ones(3), is_grads_batched=True)",
    "lib.autograd.grad(x ** 2, x, grad_outputs=lib.ones(2, 4), is_grads_batched=True)",
    "lib.autograd.grad([x ** 2, x * 3], x, grad_outputs=[lib.ones(2, 3), lib.ones(4, 3)], is_grads_batched=True)",
    "lib.autograd.grad(x ** 2, x, grad_outputs=lib.ones(0, 3), is_grads_batched=True)",
    "lib.autograd.grad([x ** 2, x * 3], x, grad_outputs=[lib.eye(3), None], is_grads_batched=True)",
    "lib.autograd.grad(x ** 2, x, grad_outputs=lib.eye(3), is_grads_batched=True, create_graph=True)[0]"
    ".requires_grad",
    "lib.autograd.grad(x ** 2, [x, z], grad_outputs=lib.eye(3), is_grads_batched=True, allow_unused=True)",
    "lib.autograd.grad(x ** 2, [x, z], grad_outputs=lib.eye(3), is_grads_batched=True, materialize_grads=True)",
    "lib.autograd.grad(x ** 2, [x, z], lib.eye(3), is_grads_batched=True)",
    "lib.autograd.grad(x ** 2, x, lib.eye(3), materialize_grads=True, allow_unused=False)",
    "lib.autograd.grad((x ** 2).sum(), {'a': x, 'b': z}, allow_unused=True)",
    "lib.autograd.grad((x ** 2).sum(), {'a': x})['a']",
    "lib.autograd.grad((x ** 2).sum(), [])",
    "lib.autograd.grad((x ** 2).sum(), x, only_inputs=False)",
    "lib.autograd.grad((x ** 2).sum(), [x, z], materialize_grads=True, create_graph=True)[1].requires_grad",
    "lib.autograd.grad((x ** 2).sum(), [x, z], materialize_grads=True)",
    "lib.autograd.grad((lib.arange(3.) ** 2).sum(), x)",
    "lib.autograd.grad((lib.arange(3.) ** 2).sum(), lib.ones(2))",
    "lib.autograd.grad(lib.arange(3.) ** 2, x)",
    "lib.autograd.grad(x ** 2, lib.ones(2))",
]


def outcome(lib, code):
    env = {"lib": lib, "x": lib.arange(3.0, requires_grad=True), "z": lib.ones(1, requires_grad=True)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = eval(code, env)
            result = "value", repr(value).replace("tapegrad", "torch")
        except Exception as e:
            result = "error", type(e).__name__, str(e).replace("tapegrad", "torch")
    return result, sorted({type(w.message).__name__ for w in caught if "only_inputs" in str(w.message)})


@pytest.mark.parametrize("code", CASES)
def test_grad_arguments_as_torch(code):
    (ours, our_warnings), (theirs, their_warnings) = outcome(tg, code), outcome(torch, code)
    assert_same_outcome(ours, theirs)
    assert our_warnings == their_warnings


def test_batched_gradients_give_a_jacobian_and_differentiate_again():
    results = []
    for lib in (tg, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = x.sin() * x.sum()
        (jac,) = lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64), is_grads_batched=True, create_graph=True)
        (hess_row,) = lib.autograd.grad(jac[0].sum(), x)
        results.append((jac.tolist(), hess_row.tolist()))
    assert str(results[0]) == str(results[1])
