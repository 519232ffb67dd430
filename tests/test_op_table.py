"""Every op-table entry against PyTorch: values, dtypes, gradients (float32 and float64) and a
float64 finite-difference check of the VJP in a random direction (as jax's check_grads).

The cases live in op_specs.py; an op-table entry without a spec fails `test_every_op_has_a_spec`.
"""
import os
import zlib

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import tapegrad
from tapegrad import _dispatch
from tapegrad._ops._registry import OPS

from op_specs import B, C, D, F

torch = pytest.importorskip("torch")


def _collect_specs():
    # Each family of ops may keep its specs in its own tests/op_specs*.py module.
    import importlib
    import pathlib
    specs = {}
    for path in sorted(pathlib.Path(__file__).parent.glob("op_specs*.py")):
        for name, value in importlib.import_module(path.stem).SPECS.items():
            assert name not in specs, f"{name!r} has specs in two modules"
            specs[name] = value
    return specs


SPECS = _collect_specs()

# By default a deterministic sample keeps the run short: up to SAMPLE cases per op, float32 on the
# first case only (float64 carries the gradient and finite-difference checks everywhere).
# TAPEGRAD_FULL_OP_TABLE=1 runs every case in both dtypes.
FULL = os.environ.get("TAPEGRAD_FULL_OP_TABLE") == "1"
SAMPLE = 2


def _selected(name):
    n = len(SPECS[name])
    if FULL or n <= SAMPLE:
        return list(range(n))
    rest = list(range(1, n))
    np.random.default_rng(zlib.crc32(name.encode())).shuffle(rest)
    return [0] + sorted(rest[:SAMPLE - 1])


CASES = [(name, i) for name in sorted(SPECS) for i in _selected(name)]


def _float_dtypes(case, index):
    return case.float_dtypes if FULL or index == 0 else tuple(d for d in case.float_dtypes if d == "float64")
TOLERANCE = {"float32": (2e-4, 2e-5), "float64": (1e-9, 1e-11)}


def _family(op):
    return getattr(op.fn, "__module__", "").rsplit(".", 1)[-1]


FAMILIES = sorted({_family(op) for op in OPS.values()})


@pytest.mark.parametrize("family", FAMILIES)
def test_every_op_has_a_spec(family):
    missing = sorted(name for name, op in OPS.items() if _family(op) == family and name not in SPECS)
    if missing and family.startswith("nn") and not any(_family(OPS[n]) == family for n in SPECS):
        pytest.xfail(f"the {family} family has no tests/op_specs_{family}.py yet")
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
    return a.dtype.kind in "fc"


def _make(lib, arrays, requires_grad):
    out = []
    for a in arrays:
        t = lib.tensor(a) if isinstance(a, np.ndarray) else lib.tensor(np.asarray(a))
        if requires_grad and _is_float(np.asarray(a)):
            t.requires_grad_(True)
        out.append(t)
    return out


def _flatten(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    return [out]


def _numpy(t):
    return np.asarray(t.detach().cpu().numpy(force=True))


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


def _grads(lib, case, arrays, cts):
    inputs = _make(lib, arrays, True)
    outputs = _flatten(case.fn(lib, *inputs))
    loss = _loss(lib, outputs, cts)
    if not getattr(loss, "requires_grad", False):
        return [None] * len(inputs)
    loss.backward()
    return [None if t.grad is None else _numpy(t.grad) for t in inputs]


@pytest.mark.parametrize("name,index", CASES, ids=[f"{n}-{i}" for n, i in CASES])
def test_op_against_torch(name, index):
    case = SPECS[name][index]
    for float_dtype in _float_dtypes(case, index):
        arrays = _draw(case, name, index, float_dtype)
        theirs = _flatten(case.fn(torch, *_make(torch, arrays, False)))
        ours, used = _run_recording(lambda: _flatten(case.fn(tapegrad, *_make(tapegrad, arrays, False))))
        _compare_outputs(ours, theirs, case, float_dtype)
        if case.grad and any(_is_float(np.asarray(a)) for a in arrays):
            used |= _run_recording(lambda: _check_gradients(case, name, index, arrays, float_dtype))[1]
        assert name in used, f"the spec for {name!r} never applies it (applied: {sorted(used)})"
    if case.grad and case.fd and "float64" in case.float_dtypes:
        _check_finite_differences(case, name, index)


def _check_gradients(case, name, index, arrays, float_dtype):
    rng = np.random.default_rng(zlib.crc32(f"{name}/{index}/ct".encode()))
    torch_out = _flatten(case.fn(torch, *_make(torch, arrays, True)))
    cts = _cotangents(torch_out, rng)
    theirs = _grads(torch, case, arrays, cts)
    ours = _grads(tapegrad, case, arrays, cts)
    rtol, atol = TOLERANCE[float_dtype]
    for k, (o, t) in enumerate(zip(ours, theirs)):
        if t is None:
            assert o is None or not np.any(o), f"input {k}: PyTorch has no gradient, tapegrad has {o}"
            continue
        assert o is not None, f"input {k}: no gradient, PyTorch has {t}"
        np.testing.assert_allclose(o, t, rtol=rtol * 10, atol=atol * 10, err_msg=f"{float_dtype} grad of input {k}")


def _check_finite_differences(case, name, index, eps=1e-6):
    arrays = _draw(case, name, index, "float64")
    rng = np.random.default_rng(zlib.crc32(f"{name}/{index}/fd".encode()))
    outputs = _flatten(case.fn(tapegrad, *_make(tapegrad, arrays, True)))
    cts = _cotangents(outputs, rng)
    grads = _grads(tapegrad, case, arrays, cts)
    directions = [rng.standard_normal(np.shape(a)).astype(a.dtype) if _is_float(np.asarray(a)) else None
                  for a in arrays]

    def loss_at(step):
        moved = [a + step * d if d is not None else a for a, d in zip(arrays, directions)]
        with tapegrad.no_grad():
            return float(_loss(tapegrad, _flatten(case.fn(tapegrad, *_make(tapegrad, moved, False))), cts))

    numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps)
    analytic = sum(float(np.real(np.sum(np.conj(g) * d))) for g, d in zip(grads, directions)
                   if g is not None and d is not None)
    assert np.isclose(analytic, numeric, rtol=1e-5, atol=1e-6), f"VJP {analytic} vs finite differences {numeric}"


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
