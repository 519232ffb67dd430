"""Every op-table entry against PyTorch: values, dtypes, gradients (float32 and float64) and a
float64 finite-difference check of the VJP in a random direction (as jax's check_grads).

The cases live in tests/op_specs*.py (one module per family); every case runs in both float dtypes on
every run. An op-table entry without a spec fails `test_every_op_has_a_spec`, and a differentiable op
without a finite-difference case fails `test_every_differentiable_op_has_a_finite_difference_check`.

Speed: the finite differences reuse the gradient program. The loss at x +/- eps*d is computed by the
same forward-and-backward structure as the gradient at x, so tapegrad's structure cache runs the
already-compiled program with new values instead of compiling two more forward programs per case.
"""
import zlib

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import tapegrad
from tapegrad import _dispatch
from tapegrad._ops._registry import OPS

from conftest import require
from op_specs import B, C, D, F

torch = require("torch")


def _collect_specs():
    # Each family of ops keeps its specs in its own tests/op_specs*.py module.
    import importlib
    import pathlib
    specs = {}
    for path in sorted(pathlib.Path(__file__).parent.glob("op_specs*.py")):
        for name, value in importlib.import_module(path.stem).SPECS.items():
            assert name not in specs, f"{name!r} has specs in two modules"
            specs[name] = value
    return specs


SPECS = _collect_specs()
FLOAT_DTYPES = ("float32", "float64")
CASES = [(name, i, dtype) for name in sorted(SPECS) for i in range(len(SPECS[name])) for dtype in FLOAT_DTYPES]
TOLERANCE = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-11)}


def _family(op):
    return getattr(op.fn, "__module__", "").rsplit(".", 1)[-1]


FAMILIES = sorted({_family(op) for op in OPS.values()})


@pytest.mark.parametrize("family", FAMILIES)
def test_every_op_has_a_spec(family):
    missing = sorted(name for name, op in OPS.items() if _family(op) == family and name not in SPECS)
    assert not missing, f"op-table entries without a spec in tests/op_specs*.py: {missing}"


def test_every_spec_names_an_op():
    unknown = sorted(set(SPECS) - set(OPS))
    assert not unknown, f"specs for ops that are not in the table: {unknown}"


class _Recorder(dict):
    """Stands in for dispatch's signature cache and notes which ops are applied."""

    def __init__(self, cache):
        super().__init__(cache)
        self.ops = set()

    def get(self, key, default=None):
        self.ops.add(key[0].name)
        return super().get(key, default)


def _run_recording(fn):
    original = _dispatch._signatures
    recorder = _dispatch._signatures = _Recorder(original)
    try:
        return fn(), recorder.ops
    finally:
        original.update(recorder)
        _dispatch._signatures = original


def _draw(case, name, index, float_dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{index}".encode()))
    return [d.draw(rng, float_dtype) for d in case.inputs]


def _is_float(a):
    return np.asarray(a).dtype.kind in "fc"


def _make(lib, arrays, requires_grad):
    out = []
    for a in arrays:
        t = lib.tensor(a) if isinstance(a, np.ndarray) else lib.tensor(np.asarray(a))
        if requires_grad and _is_float(a):
            t.requires_grad_(True)
        out.append(t)
    return out


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return [out]


def _numpy(t):
    return np.asarray(t.detach().cpu().numpy(force=True))


def _seeded(lib, name, index):
    # Random ops draw from a fixed key, so every tapegrad run of a case sees the same draws and finite
    # differences of random ops (dropout, fills) are meaningful.
    lib.manual_seed(zlib.crc32(f"{name}/{index}/key".encode()))


def _call(lib, case, name, index, tensors):
    _seeded(lib, name, index)
    return _flatten(case.fn(lib, *tensors))


def _compare_outputs(ours, theirs, case, float_dtype):
    assert len(ours) == len(theirs), f"{len(ours)} outputs, PyTorch has {len(theirs)}"
    rtol, atol = TOLERANCE[float_dtype]
    if case.rtol:
        rtol = case.rtol
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert isinstance(o, tapegrad.Tensor), f"output {k} is {type(o).__name__}, not a Tensor"
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"output {k} dtype {o.dtype} vs {t.dtype}"
        assert tuple(o.shape) == tuple(t.shape), f"output {k} shape {tuple(o.shape)} vs {tuple(t.shape)}"
        if case.compare:
            np.testing.assert_allclose(_numpy(o), _numpy(t), rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"output {k}")


def _loss(lib, outputs, cotangents):
    total = 0
    for o, ct in zip(outputs, cotangents):
        if ct is not None:
            term = (o * lib.tensor(ct)).sum()
            total = total + (term.real if o.is_complex() else term)
    return total


def _cotangents(outputs, rng):
    cts = []
    for o in outputs:
        if o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex):
            real = rng.standard_normal((2,) + tuple(o.shape))
            value = real[0] + 1j * real[1] if o.dtype.is_complex else real[0]
            cts.append(np.asarray(value, str(o.dtype).split(".")[-1]))
        else:
            cts.append(None)
    return cts


def _loss_and_grads(lib, case, name, index, arrays, cts):
    """(loss, gradients of loss w.r.t. the float inputs); (None, None) when the loss carries no gradient."""
    inputs = _make(lib, arrays, True)
    loss = _loss(lib, _call(lib, case, name, index, inputs), cts)
    if not getattr(loss, "requires_grad", False):
        return None, None
    loss.backward()
    return float(loss.detach()), [None if t.grad is None else _numpy(t.grad) for t in inputs]


@pytest.mark.parametrize("name,index,float_dtype", CASES, ids=[f"{n}-{i}-{d}" for n, i, d in CASES])
def test_op_against_torch(name, index, float_dtype):
    case = SPECS[name][index]
    arrays = _draw(case, name, index, float_dtype)
    theirs = _flatten(case.fn(torch, *_make(torch, arrays, False)))
    ours, used = _run_recording(lambda: _call(tapegrad, case, name, index, _make(tapegrad, arrays, False)))
    _compare_outputs(ours, theirs, case, float_dtype)
    if (case.grad or case.fd) and any(_is_float(a) for a in arrays):
        rng = np.random.default_rng(zlib.crc32(f"{name}/{index}/ct".encode()))
        cts = _cotangents(_flatten(case.fn(torch, *_make(torch, arrays, True))), rng)
        (_, grads), applied = _run_recording(lambda: _loss_and_grads(tapegrad, case, name, index, arrays, cts))
        used |= applied
        if grads is not None and case.grad:
            _compare_gradients(grads, _loss_and_grads(torch, case, name, index, arrays, cts)[1], float_dtype)
        if grads is not None and case.fd and float_dtype == "float64":
            _check_finite_differences(case, name, index, arrays, cts, grads)
    assert name in used, f"the spec for {name!r} never applies it (applied: {sorted(used)})"


def _compare_gradients(ours, theirs, float_dtype):
    theirs = theirs or [None] * len(ours)
    rtol, atol = TOLERANCE[float_dtype]
    for k, (o, t) in enumerate(zip(ours, theirs)):
        if t is None:
            assert o is None or not np.any(o), f"input {k}: PyTorch has no gradient, tapegrad has {o}"
            continue
        assert o is not None, f"input {k}: no gradient, PyTorch has {t}"
        np.testing.assert_allclose(o, t, rtol=rtol * 10, atol=atol * 10, err_msg=f"{float_dtype} grad of input {k}")


def _check_finite_differences(case, name, index, arrays, cts, grads, eps=1e-6):
    """The VJP against central differences of the loss along one random direction (float64)."""
    rng = np.random.default_rng(zlib.crc32(f"{name}/{index}/fd".encode()))
    directions = [rng.standard_normal(np.shape(a)).astype(np.asarray(a).dtype) if _is_float(a) else None
                  for a in arrays]

    def loss_at(step):
        # the loss alone: a backward here would make the third run of one structure, which a steady
        # loop's policy compiles whole, for a value the forward gives
        moved = [a + step * d if d is not None else a for a, d in zip(arrays, directions)]
        return float(_loss(tapegrad, _call(tapegrad, case, name, index, _make(tapegrad, moved, True)), cts))

    numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps)
    analytic = sum(float(np.real(np.sum(np.conj(g) * d))) for g, d in zip(grads, directions)
                   if g is not None and d is not None)
    assert np.isclose(analytic, numeric, rtol=1e-5, atol=1e-6), f"VJP {analytic} vs finite differences {numeric}"


def _carries_gradient(case, name, index):
    """Whether tapegrad records a float output that requires grad for this case (float64 inputs)."""
    arrays = _draw(case, name, index, "float64")
    if not any(_is_float(a) for a in arrays):
        return False
    outputs = _call(tapegrad, case, name, index, _make(tapegrad, arrays, True))
    return any(o.requires_grad and (o.dtype.is_floating_point or o.dtype.is_complex) for o in outputs)


# Differentiable ops whose gradient is not the derivative of their value at a fixed random key, and
# where their gradient is checked against PyTorch instead.
GRADIENT_CHECKED_ELSEWHERE = {
    "standard_gamma": "tests/test_distributions.py::test_standard_gamma_gradient_is_pytorchs_implicit_one",
    # PyTorch defines it as zero (derivatives.yaml); its spec compares that with PyTorch's (grad=True)
    "normal_tensor": "tests/op_specs.py: normal_tensor's cases, gradients compared with PyTorch's zeros",
    # nodes whose backward raises, as PyTorch's
    "unique": "tests/test_no_derivative.py",
    "unique_take": "tests/test_no_derivative.py",
    "floor_divide": "tests/test_no_derivative.py",
    "floor_divide_": "tests/test_no_derivative.py",
    "remainder_scalar_self": "tests/test_no_derivative.py",
    "heaviside": "tests/test_no_derivative.py",
    "pow_bool_exponent": "tests/test_no_derivative.py",
    "histogram": "tests/test_no_derivative.py",
    "detach_copy": "tests/test_no_derivative.py",
    "native_channel_shuffle": "tests/test_no_derivative.py",
    "geqrf": "tests/test_no_derivative.py",
    "ldl_factor": "tests/test_no_derivative.py",
    "ldl_solve": "tests/test_no_derivative.py",
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_differentiable_op_has_a_finite_difference_check(name):
    carrying = [i for i, case in enumerate(SPECS[name]) if _carries_gradient(case, name, i)]
    if carrying and name not in GRADIENT_CHECKED_ELSEWHERE:
        checked = [i for i in carrying if SPECS[name][i].fd]
        assert checked, (f"{name!r} is differentiable (cases {carrying}) but no case has a float64 "
                         "finite-difference check: add one with inputs away from its kinks")


# ---- broadcasting and dtype promotion on binary ops, drawn by hypothesis -----------------------------------

BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "eq", "lt", "pow", "remainder", "hypot", "fmax"]
DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]


@st.composite
def _broadcast_pair(draw):
    ndim = draw(st.integers(0, 3))
    shape = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    other = [draw(st.sampled_from([s, 1])) for s in shape]
    drop = draw(st.integers(0, ndim))
    return tuple(shape), tuple(other[drop:])


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(BINARY), shapes=_broadcast_pair(), dtypes=st.tuples(st.sampled_from(DTYPES),
                                                                               st.sampled_from(DTYPES)),
       swap=st.booleans())
def test_binary_broadcasting_and_promotion(op, shapes, dtypes, swap):
    rng = np.random.default_rng(0)
    arrays = [D(dt, *shape, low=1, high=4).draw(rng, None) for dt, shape in zip(dtypes, shapes)]
    if swap:
        arrays.reverse()

    def run(lib):
        a, b = (lib.tensor(x) for x in arrays)
        return getattr(lib, op)(a, b)

    try:
        theirs = run(torch)
    except Exception as e:  # noqa: BLE001  the same error type is expected from tapegrad
        with pytest.raises(type(e)):
            run(tapegrad)
        return
    ours = run(tapegrad)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_numpy(ours).astype(np.float64), _numpy(theirs).astype(np.float64), rtol=1e-5)


def test_descriptors_cover_all_input_kinds():
    # Keeps the small descriptor vocabulary of op_specs honest: each kind draws what it says.
    rng = np.random.default_rng(0)
    assert F(2).draw(rng, "float32").dtype == np.float32
    assert C(2).draw(rng, "float64").dtype == np.complex128
    assert B(2).draw(rng, None).dtype == np.bool_
    assert D("int32", 2).draw(rng, None).dtype == np.int32


def test_ops_doc_is_up_to_date():
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parent.parent
    result = subprocess.run([sys.executable, str(root / "tools" / "gen_ops_doc.py"), "--check"], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
