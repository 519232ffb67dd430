"""Each op's backward saves what PyTorch's saves (derivatives.yaml), read off PyTorch's own grad_fn: a
node with `_saved_result` must version-check its result, one with a tensor `_saved_self` its first
input. What is saved decides which in-place changes make backward fail ("modified by an inplace
operation"), so a difference is a program that fails in one library and runs in the other. A saved
output is recognised by its memory (PyTorch names it after the formula: result, inverse, L ...).

Every case of the op table's specs (tests/op_specs*.py) is run once in float64 under both libraries; the
case's first output's grad_fn is compared where both record the same node. (A sparse input saved by
PyTorch is the sparse tensor itself, which tapegrad's graph holds as its dense parts: not compared.)"""
import warnings

import pytest

import tapegrad
from conftest import require
from test_op_table import SPECS, _call, _draw, _make

torch = require("torch")


def _grad_fns(name, index):
    """(tapegrad's first output, torch's first output) of a spec case, where both record the same node."""
    case = SPECS[name][index]
    arrays = _draw(case, name, index, "float64")
    found = []
    for lib in (tapegrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = _call(lib, case, name, index, _make(lib, arrays, requires_grad=True))[0]
            except Exception:   # (a case that raises is the op table's business)
                return None
        if getattr(out, "grad_fn", None) is None:
            return None
        found.append(out)
    ours, theirs = found
    if ours.grad_fn.name() != theirs.grad_fn.name() or not hasattr(ours.grad_fn, "checks"):
        return None
    return ours, theirs


def _saves_its_output(out):
    # PyTorch names a saved output after the formula's argument (result, inverse, L ...): the one whose
    # memory is the output's
    for attr in dir(out.grad_fn):
        if attr.startswith("_saved_"):
            value = getattr(out.grad_fn, attr)
            if isinstance(value, torch.Tensor) and value.layout == torch.strided and value.numel() \
                    and value.data_ptr() == out.data_ptr() and value.shape == out.shape:
                return True
    return False


def _difference(ours, theirs):
    node, their_node = ours.grad_fn, theirs.grad_fn
    # the check on the result must be on the output's own version counter, as it is after any relayout
    checks_result = any(i < 0 and counter is ours._storage.counter for counter, _, i in node.checks)
    if _saves_its_output(theirs) != checks_result:
        return f"{their_node.name()}: PyTorch saves its output: {_saves_its_output(theirs)}, tapegrad checks it: " \
               f"{checks_result}"
    saved_self = getattr(their_node, "_saved_self", None)
    # (a sparse self is the sparse tensor itself, which tapegrad's graph holds as its dense parts; an
    # in-place call's own self, which it overwrote, PyTorch saves as a private copy no user write can reach)
    private = theirs._version > 0 and isinstance(saved_self, torch.Tensor) \
        and saved_self.data_ptr() != theirs.data_ptr()
    if isinstance(saved_self, torch.Tensor) and saved_self.layout == torch.strided and not private \
            and not any(i == 0 for _, _, i in node.checks):
        return f"{their_node.name()}: PyTorch saves its input (self), tapegrad does not check it"
    return None


@pytest.mark.parametrize("name", sorted(SPECS))
def test_an_ops_backward_saves_what_pytorchs_saves(name):
    problems = []
    for index in range(len(SPECS[name])):
        pair = _grad_fns(name, index)
        if pair is not None:
            problem = _difference(*pair)
            if problem:
                problems.append(f"case {index}: {problem}")
    assert not problems, "\n".join(problems)
