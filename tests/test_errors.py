"""PyTorch's errors: same exception type, PyTorch's key phrase, and a sentence saying how to fix it.

Each case runs the same code with both libraries. The key phrase is taken from PyTorch's message at
test time (its first sentence, compared case-insensitively), so it tracks PyTorch; `hint` is a
fragment of tapegrad's own fix sentence.
"""
import re

import pytest

import tapegrad

from conftest import require

torch = require("torch")


def _leaf(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


def _second_backward(lib):
    y = _leaf(lib).exp().sum()
    y.backward()
    y.backward()


def _saved_input_modified(lib):
    y = _leaf(lib) * 2
    z = y * y          # mul saves both inputs
    y.add_(1)
    z.sum().backward()


def _saved_output_modified(lib):
    y = _leaf(lib).exp()   # exp's backward reads its output
    y.mul_(2)
    y.sum().backward()


def _inference_tensor_saved(lib):
    with lib.inference_mode():
        t = lib.ones(2)
    _leaf(lib) * t


def _setattr_requires_grad(lib):
    lib.tensor([1, 2]).requires_grad = True


CASES = {
    # name: (code, exception type, fragment of tapegrad's fix sentence, key phrase override or None)
    "int_tensor_requires_grad": (lambda L: L.tensor(2, requires_grad=True), RuntimeError, "float", None),
    "int_ones_requires_grad": (lambda L: L.ones(2, dtype=L.int64, requires_grad=True), RuntimeError, "float",
                               None),
    "int_arange_requires_grad": (lambda L: L.arange(3, requires_grad=True), RuntimeError, "float", None),
    "int_full_requires_grad": (lambda L: L.full((2,), 1, requires_grad=True), RuntimeError, "float", None),
    # PyTorch says "floating point dtype" here and "floating point and complex dtype" elsewhere.
    "int_requires_grad_method": (lambda L: L.tensor([1, 2]).requires_grad_(), RuntimeError, "float",
                                 "only Tensors of floating point"),
    "int_requires_grad_setattr": (_setattr_requires_grad, RuntimeError, "float", None),
    "implicit_grad_non_scalar": (lambda L: (_leaf(L) * 2).backward(), RuntimeError, "ones_like", None),
    "backward_twice": (_second_backward, RuntimeError, "retain_graph=True", None),
    "inplace_on_leaf": (lambda L: _leaf(L).add_(1), RuntimeError, "no_grad", None),
    "iadd_on_leaf": (lambda L: _leaf(L).__iadd__(1), RuntimeError, "no_grad", None),
    "inplace_on_view_of_leaf": (lambda L: _leaf(L)[0].add_(1), RuntimeError, "no_grad", None),
    "saved_input_modified_inplace": (_saved_input_modified, RuntimeError, "clone",
                                     "one of the variables needed for gradient computation has been modified by "
                                     "an inplace operation"),
    "saved_output_modified_inplace": (_saved_output_modified, RuntimeError, "clone",
                                      "one of the variables needed for gradient computation has been modified by "
                                      "an inplace operation"),
    "numpy_of_leaf_requiring_grad": (lambda L: _leaf(L).numpy(), RuntimeError, "detach()", None),
    "numpy_of_non_leaf": (lambda L: (_leaf(L) * 2).numpy(), RuntimeError, "detach()", None),
    "requires_grad_false_on_non_leaf": (lambda L: (_leaf(L) * 2).requires_grad_(False), RuntimeError,
                                        "detach()", "you can only change requires_grad flags of leaf variables"),
    "backward_without_grad": (lambda L: L.ones(2).sum().backward(), RuntimeError, "requires_grad=True", None),
    "retain_grad_without_grad": (lambda L: L.ones(2).retain_grad(), RuntimeError, "requires_grad=True", None),
    "gradient_shape_mismatch": (lambda L: (_leaf(L) * 2).backward(L.ones(3)), RuntimeError, None, "Mismatch in shape"),
    "backward_inputs_empty": (lambda L: _leaf(L).sum().backward(inputs=[]), RuntimeError, "inputs=None", None),
    "inference_tensor_saved": (_inference_tensor_saved, RuntimeError, "clone", None),
    "item_of_many": (lambda L: L.ones(2).item(), RuntimeError, "sum()", None),
    "bool_of_many": (lambda L: bool(L.ones(2)), RuntimeError, ".any()", None),
    "bool_of_empty": (lambda L: bool(L.ones(0)), RuntimeError, ".any()", None),
    "float_of_many": (lambda L: float(L.ones(2)), ValueError, None, None),
    "len_of_0d": (lambda L: len(L.tensor(1.0)), TypeError, None, None),
    "iter_of_0d": (lambda L: iter(L.tensor(1.0)), TypeError, None, None),
    "grad_assign_wrong_size": (lambda L: setattr(_leaf(L), "grad", L.ones(3)), RuntimeError, None,
                               "attempting to assign a gradient of size"),
    "grad_assign_wrong_dtype": (lambda L: setattr(_leaf(L), "grad", L.ones(2, dtype=L.float64)), RuntimeError,
                                "to(", "attempting to assign a gradient with dtype"),
    "grad_assign_not_tensor": (lambda L: setattr(_leaf(L), "grad", [1.0, 2.0]), TypeError, None, None),
    "autograd_grad_input_without_grad": (lambda L: L.autograd.grad(_leaf(L).sum(), L.ones(2)), RuntimeError,
                                         None, None),
    "register_hook_without_grad": (lambda L: L.ones(2).register_hook(lambda g: g), RuntimeError, None, None),
    # bad input that used to compute silently
    "sum_dim_of_0d": (lambda L: L.tensor(1.0).sum(1), IndexError, None, None),
    "tensor_int_overflow": (lambda L: L.tensor([2 ** 63]), ValueError, None, None),
    "randint_empty_range": (lambda L: L.randint(5, 3, (2,)), RuntimeError, None, None),
    "conv_kernel_larger_than_input": (lambda L: L.nn.functional.conv2d(L.ones(1, 1, 2, 2), L.ones(1, 1, 3, 3)),
                                      RuntimeError, None, None),
    "class_weight_wrong_length": (lambda L: L.nn.functional.cross_entropy(L.ones(2, 3), L.tensor([0, 1]),
                                                                          weight=L.ones(4)), RuntimeError, None, None),
    # bad input that crashed inside tapegrad (a Python IndexError)
    "instance_norm_of_a_vector": (lambda L: L.nn.functional.instance_norm(L.ones(0)), ValueError, None,
                                  "Expected more than 1 spatial element when training"),
    "instance_norm_of_a_matrix": (lambda L: L.nn.functional.instance_norm(L.ones(2, 3)), ValueError, None,
                                  "Expected more than 1 spatial element when training"),
    "spmm_of_a_vector": (lambda L: L.spmm(L.ones(3), L.ones(3, 2)), RuntimeError, None, None),
    "spmm_by_a_vector": (lambda L: L.spmm(L.ones(2, 3), L.ones(3)), RuntimeError, None, None),
    # convolution weights of the wrong rank reached JAX (its TypeError, or NumPy's axis error)
    "conv1d_matrix_weight": (lambda L: L.nn.functional.conv1d(L.ones(1, 1, 4), L.ones(1, 1)), RuntimeError, None, None),
    "conv_transpose1d_matrix_weight": (lambda L: L.nn.functional.conv_transpose1d(L.ones(1, 1, 4), L.ones(1, 1)),
                                       RuntimeError, None, None),
    "conv2d_3d_weight": (lambda L: L.nn.functional.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 3)), RuntimeError, None,
                         None),
    "conv2d_5d_weight": (lambda L: L.nn.functional.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 3, 3, 3)), RuntimeError,
                         None, None),
    "conv2d_5d_weight_same": (lambda L: L.nn.functional.conv2d(L.ones(1, 1, 4, 4), L.ones(1, 1, 3, 3, 3),
                                                               padding="same"), RuntimeError, None, None),
    "conv1d_4d_weight_tuple_dilation": (lambda L: L.nn.functional.conv1d(L.ones(1, 1, 4), L.ones(1, 1, 3, 3),
                                                                         dilation=(2,)), RuntimeError, None, None),
    "conv_transpose2d_5d_weight": (lambda L: L.nn.functional.conv_transpose2d(L.ones(1, 1, 4, 4),
                                                                              L.ones(1, 1, 3, 3, 3)),
                                   RuntimeError, None, None),
}


def _first_sentence(message):
    return re.split(r"(?<=[a-z\]\)])\. ", message.strip().splitlines()[0])[0].rstrip(".")


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_matches_torch(name):
    code, exc_type, hint, phrase = CASES[name]
    with pytest.raises(exc_type) as theirs:
        code(torch)
    with pytest.raises(exc_type) as ours:
        code(tapegrad)
    key = phrase or _first_sentence(str(theirs.value))
    assert key.lower() in str(theirs.value).lower(), "the key phrase must be PyTorch's"
    assert key.lower() in str(ours.value).lower(), f"{str(ours.value)!r} lacks PyTorch's {key!r}"
    if hint is not None:
        assert hint in str(ours.value), f"{str(ours.value)!r} gives no fix ({hint!r})"



def _raise_in(lib, where):
    def f(x):
        (x * 2).sum()
        raise ValueError("raised by the user's function")
    if where == "func.grad":
        lib.func.grad(f)(lib.ones(()))
    elif where == "func.vmap":
        lib.func.vmap(f)(lib.ones(3))
    elif where == "compile":
        lib.compile(f)(lib.ones(3))
    elif where == "functional.jacobian":
        lib.autograd.functional.jacobian(f, lib.ones(3))
    else:   # a backward PyTorch does not implement
        a = lib.tensor([0.5, 2.0], dtype=lib.float64, requires_grad=True)
        lib.special.gammainc(a, a.detach()).sum().backward()


@pytest.mark.parametrize("where", ["func.grad", "func.vmap", "compile", "functional.jacobian", "backward"])
def test_errors_raised_through_a_transform_carry_no_jax_note(where):
    """An error raised in a function JAX traces reaches the user as PyTorch raises it: JAX's API boundaries
    add a note ("JAX has removed its internal frames ...") or chain an unfiltered trace, which tapegrad drops."""
    errors = []
    for lib in (tapegrad, torch):
        with pytest.raises(Exception) as info:
            _raise_in(lib, where)
        e = info.value
        errors.append((type(e), str(e), getattr(e, "__notes__", None), type(e.__cause__)))
    assert errors[0] == errors[1]


def test_float_of_a_tensor_that_requires_grad_warns_once_per_process():
    """PyTorch 2.x warns (once per process: TORCH_WARN_ONCE) when float() converts a tensor that requires
    grad; item(), int() and bool() do not warn."""
    import subprocess
    import sys
    code = ("import warnings, {lib} as t\nwarnings.simplefilter('always')\n"
            "x = t.tensor(1.5, requires_grad=True)\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); x.item(); int(x); bool(x); float(x); float(x * 2)\n"
            "print([str(m.message).split(' (Triggered')[0] for m in w])")
    out = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True,
                          check=True).stdout for lib in ("tapegrad", "torch")]
    assert out[0] == out[1]
