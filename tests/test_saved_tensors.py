"""Each op's backward saves what PyTorch's saves (derivatives.yaml), read off PyTorch's own grad_fn: a
node with `_saved_result` must version-check its result, one with a tensor `_saved_self` its first
input. What is saved decides which in-place changes make backward fail ("modified by an inplace
operation"), so a difference is a program that fails in one library and runs in the other.

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
        found.append(getattr(out, "grad_fn", None))
    ours, theirs = found
    if ours is None or theirs is None or ours.name() != theirs.name() or not hasattr(ours, "checks"):
        return None
    return ours, theirs


def _difference(ours, theirs):
    if hasattr(theirs, "_saved_result") != type(ours).saves_result:
        return f"{theirs.name()}: PyTorch saves its result: {hasattr(theirs, '_saved_result')}, tapegrad: " \
               f"{type(ours).saves_result}"
    saved_self = getattr(theirs, "_saved_self", None)
    # (a sparse self is the sparse tensor itself, which tapegrad's graph holds as its dense parts)
    if isinstance(saved_self, torch.Tensor) and saved_self.layout == torch.strided \
            and not any(i == 0 for _, _, i in ours.checks):
        return f"{theirs.name()}: PyTorch saves its input (self), tapegrad does not check it"
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
