"""F.pad's reflect, replicate and circular modes and the padding modules against PyTorch: values,
gradients, dtypes, errors in every rank PyTorch accepts; float64 finite differences."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import gradcheck


def _compare(x, make, grad=True, seed=0):
    results = []
    for lib in (torch, tg):
        t = lib.tensor(x, requires_grad=grad)
        out = make(lib, t)
        if grad:
            w = np.random.default_rng(seed).standard_normal(tuple(out.shape)).astype(x.dtype)
            (out * lib.tensor(w)).sum().backward()
        results.append((out, t.grad if grad else None))
    (theirs, their_grad), (ours, our_grad) = results
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    if grad:
        np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-6, atol=1e-6)


PADS = {
    # (circular pads no wider than what stays after cropping: beyond that PyTorch reads uninitialised memory)
    1: [(1, 2), (3, 0), (-1, 2), (1, -2), (0, 0)],
    2: [(1, 2, 2, 0), (3, 3, 1, 2), (-1, 2, 0, -2), (2, 1, -1, 1)],
    3: [(1, 0, 2, 1, 1, 1), (3, 1, 0, 2, -1, 1), (1, 1, -1, -1, 1, 0)],
}
CASES = [(mode, nd, batched, p) for mode in ("reflect", "replicate", "circular") for nd in (1, 2, 3)
         for batched in (True, False) for p in PADS[nd]]


@pytest.mark.parametrize("mode,nd,batched,pads", CASES)
def test_modes_against_pytorch(mode, nd, batched, pads):
    shape = (2, 3, 4, 5, 4)[-nd - (2 if batched else 1):]
    x = np.random.default_rng(nd).standard_normal(shape)
    _compare(x.astype("float32" if batched else "float64"), lambda lib, t: lib.nn.functional.pad(t, pads, mode))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_integer_and_bool_inputs(mode):
    x = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    _compare(x, lambda lib, t: lib.nn.functional.pad(t, (2, 1, 1, 1), mode), grad=False)
    if mode == "circular":
        _compare(x % 3 == 0, lambda lib, t: lib.nn.functional.pad(t, (2, 1), mode), grad=False)


def test_gradcheck_float64():
    x = tg.tensor(np.random.default_rng(2).standard_normal((1, 3, 4)), requires_grad=True)
    for mode, pads in (("reflect", (2, -1, 1, 2)), ("replicate", (3, 1, -1, 1)), ("circular", (-1, 3, 2, 1))):
        assert gradcheck(lambda t: tg.nn.functional.pad(t, pads, mode), (x,))


def _graph(fn):
    return fn and (type(fn).__name__, fn.name(), [(_graph(g), i) for g, i in fn.next_functions])


@pytest.mark.parametrize("nd,batched,pads", [(nd, b, p) for nd in (1, 2, 3) for b in (True, False) for p in PADS[nd]])
def test_circular_records_pytorchs_slice_copies(nd, batched, pads):
    shape = (2, 3, 4, 5, 4)[-nd - (2 if batched else 1):]
    graphs = [_graph(lib.nn.functional.pad(lib.ones(shape, dtype=lib.float64, requires_grad=True), pads,
                                           "circular").grad_fn) for lib in (torch, tg)]
    assert graphs[1] == graphs[0]


MODULES = [
    ("ReflectionPad1d", (2,), 1), ("ReflectionPad2d", ((1, 2, 0, 1),), 2), ("ReflectionPad3d", (1,), 3),
    ("ReplicationPad1d", ((3, 1),), 1), ("ReplicationPad2d", (2,), 2), ("ReplicationPad3d", ((1, 2, 0, 1, 2, 0),), 3),
    ("CircularPad1d", (3,), 1), ("CircularPad2d", ((1, 2, 3, 0),), 2), ("CircularPad3d", (1,), 3),
    ("ConstantPad1d", (2, 1.5), 1), ("ConstantPad2d", ((1, 2, 0, 1), -2.0), 2), ("ConstantPad3d", (1, 0.5), 3),
    ("ZeroPad1d", ((1, 3),), 1), ("ZeroPad2d", (2,), 2), ("ZeroPad3d", ((1, 0, 2, 1, 0, 1),), 3),
]


@pytest.mark.parametrize("name,args,nd", MODULES)
def test_modules(name, args, nd):
    assert repr(getattr(tg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    x = np.random.default_rng(nd).standard_normal((2, 3, 4, 5, 4)[-nd - 2:])
    _compare(x, lambda lib, t: getattr(lib.nn, name)(*args)(t))
    _compare(x[0], lambda lib, t: getattr(lib.nn, name)(*args)(t))
    assert isinstance(tg.nn.ZeroPad2d(1), tg.nn.ConstantPad2d)


ERRORS = [
    ("reflect", (1, 3, 4), (4, 0)), ("reflect", (1, 3, 4), (1, 1, 3, 0)), ("reflect", (1, 2, 3, 4), (1, 1, 1, 1, 0, 2)),
    ("reflect", (1, 3, 4), (4, 4, 3, 3)), ("reflect", (1, 3, 4), (-4, 0)), ("reflect", (1, 3, 4), (-2, -2, -2, -1)),
    ("replicate", (1, 3, 4), (-2, -2, -3, -1)), ("reflect", (1, 2, 3, 4), (-2, -2, -2, -1, -1, -1)),
    ("replicate", (1, 2, 3, 4), (-2, -2, -2, -1, -1, -1)), ("replicate", (1, 2, 3, 4), (0, 0, 0, 0, -2, -1)),
    ("circular", (1, 3, 4), (5, 0)), ("circular", (1, 3, 4), (-5, 0)), ("circular", (1, 2, 0, 3), (1, 1, 1, 1)),
    ("reflect", (4,), (1, 1)), ("replicate", (1, 1, 1, 1, 1, 4), (1, 1)), ("circular", (1, 1, 1, 4), (1,) * 8),
    ("reflect", (2, 3, 4), (1, 1, 1, 1, 1, 1)), ("replicate", (2, 0, 4), (1, 1)), ("reflect", (0, 4), (1, 1)),
    ("replicate", (2, 0, 3, 4, 5), (1,) * 6), ("reflect", (1, 3, 4), (1, 1, 1)), ("foo", (1, 3, 4), (1, 1)),
    ("reflect", (1, 3, 4), (1, 1, 1, 1, 1, 1, 1, 1)),
    # circular pads wider than what stays: the slice copies overlap, or do not fit
    ("circular", (1, 1, 3), (3, -1)), ("circular", (1, 1, 3), (-1, 3)), ("circular", (1, 1, 3), (2, -4)),
    ("circular", (1, 3), (1, -4)),
]


@pytest.mark.parametrize("mode,shape,pads", ERRORS)
def test_errors(mode, shape, pads):
    def call(lib):
        return lib.nn.functional.pad(lib.zeros(*shape), pads, mode)
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tg)
    assert str(ours.value).startswith(str(theirs.value)), (ours.value, theirs.value)


def test_value_and_dtype_errors():
    for lib_call in (lambda lib: lib.nn.functional.pad(lib.zeros(1, 3, 4), (1, 1), "circular", value=0.5),
                     lambda lib: lib.nn.functional.pad(lib.zeros(1, 3, 4, dtype=lib.bool), (1, 1), "reflect"),
                     lambda lib: lib.nn.functional.pad(lib.zeros(1, 3, 4, dtype=lib.bool), (1, 1, 1, 1), "replicate"),
                     lambda lib: lib.nn.CircularPad2d(1)(lib.zeros(3, 4))):
        with pytest.raises(Exception) as theirs:
            lib_call(torch)
        with pytest.raises(type(theirs.value)) as ours:
            lib_call(tg)
        assert str(ours.value).startswith(str(theirs.value)), (ours.value, theirs.value)
    for lib in (torch, tg):   # a zero value is accepted with any mode
        assert tuple(lib.nn.functional.pad(lib.zeros(2, 3, 4), (1, 1), "reflect", value=0).shape) == (2, 3, 6)
