"""The seed chapter ("Gradient management: leaf tensors, zero_grad and detach") as tests.

Each example of the chapter (its code as written, with the setup it relies on from earlier sections)
runs once with PyTorch and once with `import tapegrad as torch`. Compared: the printed output
(character for character, hex addresses folded), every tensor the example leaves behind (values,
dtype, requires_grad, is_leaf, grad, grad_fn's name), other plain values, and for the examples that
demonstrate a mistake, the exception type and PyTorch's key phrase. `says` lists what the chapter
states the example prints, checked in both outputs.

The same examples also run as plain scripts through ../shared/parity (the Makefile's parity step);
these tests keep them checked in a fresh clone.
"""
import contextlib
import io
import re
import textwrap

import numpy as np
import pytest

import tapegrad

from conftest import assert_close, fold_repr, require

torch = require("torch")

# name: (code, what the chapter says it prints, (exception type, key phrase) when it raises)
EXAMPLES = {
    "leaf_and_non_leaf": ("""
        x = torch.ones(2, 2, requires_grad=True)  # leaf
        y = x + 2                                  # non-leaf
        print(x.is_leaf)
        print(y.is_leaf)
        print(x)
        print(y)
        print(x.grad_fn)
        print(y.grad_fn.name())
        """, ["True", "False", "AddBackward0"], None),
    "retain_grad": ("""
        x = torch.ones(2, 2, requires_grad=True)
        y = x + 2
        y.retain_grad()
        z = (y * y).sum()
        z.backward()
        print(y.grad)
        print(x.grad)
        """, ["tensor([[6., 6.],\n        [6., 6.]])"], None),
    "non_leaf_grad_is_none": ("""
        import warnings
        x = torch.ones(2, 2, requires_grad=True)
        y = x + 2
        z = (y * y).sum()
        z.backward()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            print(y.grad)
        print([w.category.__name__ for w in caught])
        """, ["None", "UserWarning"], None),
    "gradients_accumulate": ("""
        x = torch.tensor(2.0, requires_grad=True)
        for i in range(2):
            loss = x ** 2
            loss.backward()
            print(x.grad)
        """, ["tensor(4.)", "tensor(8.)"], None),
    "training_loop": ("""
        import torch

        w = torch.tensor([2.0, 3.0], requires_grad=True)
        lr = 0.01

        for step in range(3):
            loss = (w ** 2).sum()      # 1. forward
            loss.backward()            # 2. backward
            with torch.no_grad():
                w -= lr * w.grad       # 3. update
            w.grad.zero_()             # 4. zero the grads
            print(step, loss.item())
        print(w)
        print(w.grad)
        """, ["0 13.0"], None),
    "training_loop_with_optimizer": ("""
        w = torch.tensor([2.0, 3.0], requires_grad=True)
        optimizer = torch.optim.SGD([w], lr=0.01)
        for step in range(3):
            loss = (w ** 2).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            print(step, loss.item(), w.grad)
        print(w)
        """, ["0 13.0"], None),
    "detach": ("""
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x ** 2
        y_detached = y.detach()
        print(y_detached.requires_grad)
        print(y_detached.grad_fn)
        y_detached[0] = 10.0           # shares data with y
        print(y)
        """, ["False", "None"], None),
    "detach_before_numpy": ("""
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x ** 2
        arr = y.detach().numpy()
        print(type(arr).__name__, arr.dtype, arr.tolist())
        """, ["ndarray float32 [1.0, 4.0, 9.0]"], None),
    "numpy_of_a_tensor_that_requires_grad": ("""
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x ** 2
        y.numpy()
        """, [], (RuntimeError, "Can't call numpy() on Tensor that requires grad")),
    "log_losses_without_graphs": ("""
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x ** 2
        log = []
        loss = (y * 3).sum()
        log.append(loss.item())
        log.append(loss.detach())
        print(log, type(log[0]).__name__, log[1].requires_grad, log[1].grad_fn)
        """, ["[42.0, tensor(42.)] float False None"], None),
    "no_grad": ("""
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with torch.no_grad():
            y = x ** 2
            print(y.requires_grad)
        print(y, torch.is_grad_enabled())
        """, ["False"], None),
    "inference_mode": ("""
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with torch.inference_mode():
            z = x * 2
            print(z.requires_grad, torch.is_inference_mode_enabled())
        print(z, z.is_inference(), torch.is_grad_enabled())
        """, ["False True"], None),
    "integer_tensor_cannot_require_grad": ("""
        torch.tensor(2, requires_grad=True)
        """, [], (RuntimeError, "Only Tensors of floating point and complex dtype can require gradients")),
    "write_2_0_instead": ("""
        t = torch.tensor(2.0, requires_grad=True)
        i = torch.tensor(2)
        print(t, t.dtype, i, i.dtype)
        """, ["tensor(2., requires_grad=True) torch.float32"], None),
    "in_place_on_a_leaf": ("""
        x = torch.ones(3, requires_grad=True)
        x += 1
        """, [], (RuntimeError, "a leaf Variable that requires grad is being used in an in-place operation")),
    "new_tensor_instead_of_in_place": ("""
        x = torch.ones(3, requires_grad=True)
        y = x + 1
        print(y)
        with torch.no_grad():
            x += 1                     # the one safe place: the update step
        print(x, x.is_leaf, x.requires_grad, x.grad_fn)
        """, ["tensor([2., 2., 2.], grad_fn=<AddBackward0>)"], None),
}


def _source(code, lib):
    code = textwrap.dedent(code)
    return code if lib is torch else re.sub(r"^(\s*)import torch\s*$", r"\1import tapegrad as torch", code,
                                             flags=re.M)


def _run(code, lib):
    """(printed output, namespace, exception) of the example run with `lib` as torch."""
    namespace = {"torch": lib}
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(_source(code, lib), "<seed chapter example>", "exec"), namespace)
        except Exception as e:  # noqa: BLE001  compared with PyTorch's below
            error = e
    return out.getvalue(), namespace, error


def _grad_fn_name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def _compare_values(name, ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tapegrad.Tensor), f"{name} is {type(ours).__name__}, PyTorch has a Tensor"
        assert_close(ours.detach(), theirs.detach())
        for attr in ("requires_grad", "is_leaf"):
            assert getattr(ours, attr) == getattr(theirs, attr), f"{name}.{attr}"
        assert _grad_fn_name(ours) == _grad_fn_name(theirs), f"{name}.grad_fn"
        if theirs.is_leaf or theirs.retains_grad:
            assert (ours.grad is None) == (theirs.grad is None), f"{name}.grad is {ours.grad}, PyTorch's {theirs.grad}"
            if theirs.grad is not None:
                assert_close(ours.grad, theirs.grad)
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), name
        for k, (o, t) in enumerate(zip(ours, theirs)):
            _compare_values(f"{name}[{k}]", o, t)
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
        assert ours.dtype == theirs.dtype, name
    elif isinstance(theirs, (bool, int, float, str, type(None))):
        assert type(ours) is type(theirs) and ours == theirs, f"{name}: {ours!r} vs PyTorch's {theirs!r}"


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_seed_example_matches_torch(name):
    code, says, raises = EXAMPLES[name]
    their_out, their_ns, their_error = _run(code, torch)
    our_out, our_ns, our_error = _run(code, tapegrad)
    if raises:
        exc_type, phrase = raises
        assert isinstance(their_error, exc_type) and phrase in str(their_error), f"PyTorch raised {their_error!r}"
        assert type(our_error) is type(their_error), f"tapegrad raised {our_error!r}, PyTorch {their_error!r}"
        assert phrase.lower() in str(our_error).lower(), f"tapegrad's message {our_error} lacks {phrase!r}"
    else:
        assert their_error is None, f"PyTorch raised {their_error!r}"
        assert our_error is None, f"tapegrad raised {our_error!r} where PyTorch ran"
    assert fold_repr(our_out) == fold_repr(their_out), f"printed:\n{our_out}\nPyTorch printed:\n{their_out}"
    for said in says:
        assert said in their_out, f"the chapter says {said!r}; PyTorch printed:\n{their_out}"
    for var in sorted(set(their_ns) - {"__builtins__", "torch"}):
        assert var in our_ns, f"the example left no {var!r} under tapegrad"
        _compare_values(var, our_ns[var], their_ns[var])
