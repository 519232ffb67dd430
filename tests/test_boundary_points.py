"""Every op-table case at the boundary points of its float inputs, against PyTorch (float64).

test_op_table.py draws inputs away from the edges; here each float input (an `F` descriptor of a case in
tests/op_specs*.py) is refilled with values that sit on them, in a few variants:

    special  0, 1, -1, nan, inf, -inf, 0.5, 0.5 cycled to the shape (each input shifted by one more place,
             so two-input ops meet pairs such as 0 ** 0.5, 1 ** 0, nan vs -1, inf vs nan, -inf vs inf)
    finite   0, 1, -1, 1, 0.5, 0.5, 0, -1 cycled: zeros for prod, ties for max/min/median/sort, kinks
    zeros    every element of every float input 0 (abs, sqrt, relu, norm at 0, 0 ** 0, clamp bound == input)
    ones     every element of every float input 1 (ties, clamp bounds equal to the input, hardtanh's edge)

Values must match PyTorch's (NaN positions equal), and so must the gradients of sum(out * fixed weights).
A case or variant where PyTorch raises is PyTorch's own undefined point and is skipped ("PyTorch raised");
where only PyTorch's backward raises, the values are still compared. Cases whose values are random
(compare=False) are left out. Differences that remain are listed in KNOWN with the reason; a listed entry
that matches again fails the test, so the list only shrinks.
"""
import numpy as np
import pytest

import tapegrad

from conftest import require
from op_specs import F
from test_op_table import SPECS, _call, _compare_gradients, _compare_outputs, _draw, _flatten, _loss, _make, _numpy

torch = require("torch")

VARIANTS = {
    "special": np.array([0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 0.5, 0.5]),
    "finite": np.array([0.0, 1.0, -1.0, 1.0, 0.5, 0.5, 0.0, -1.0]),
    "zeros": np.array([0.0]),
    "ones": np.array([1.0]),
}
WEIGHTS = np.array([1.0, -0.5, 2.0, 0.25, -1.5])

# "op:case index" -> why tapegrad still differs from PyTorch at that case's boundary points.
KNOWN = {
}


def _boundary_cases():
    return [(name, i) for name in sorted(SPECS) for i, case in enumerate(SPECS[name])
            if case.compare and any(type(d) is F for d in case.inputs)]


CASES = _boundary_cases()


def _fill(values, shape, shift):
    size = int(np.prod(shape))
    return np.resize(np.roll(values, shift), size).reshape(shape).astype(np.float64)


def _inputs(case, name, index, variant):
    arrays = _draw(case, name, index, "float64")
    k = 0
    for j, d in enumerate(case.inputs):
        if type(d) is F:
            arrays[j] = _fill(VARIANTS[variant], d.shape, k)
            k += 1
    return arrays


def _weights(outputs):
    return [np.resize(WEIGHTS, tuple(o.shape)).astype(str(o.dtype).split(".")[-1])
            if o.requires_grad and o.dtype.is_floating_point else None for o in outputs]


def _grads(lib, case, name, index, arrays, weights):
    inputs = _make(lib, arrays, True)
    loss = _loss(lib, _call(lib, case, name, index, inputs), weights)
    if not getattr(loss, "requires_grad", False):
        return None
    loss.backward()
    return [None if t.grad is None else _numpy(t.grad) for t in inputs]


def _mismatch(name, index, variant):
    """None when tapegrad matches PyTorch at this variant's points (or PyTorch raised), else the difference."""
    case = SPECS[name][index]
    arrays = _inputs(case, name, index, variant)
    try:
        theirs = _call(torch, case, name, index, _make(torch, arrays, False))
    except Exception:  # noqa: BLE001  PyTorch raised: its own undefined point
        return None
    try:
        ours = _call(tapegrad, case, name, index, _make(tapegrad, arrays, False))
        _compare_outputs(ours, theirs, case, "float64")
    except Exception as e:  # noqa: BLE001  reported as the mismatch
        return f"values: {type(e).__name__}: {str(e).strip()[:400]}"
    if not case.grad:
        return None
    try:
        weights = _weights(_flatten(case.fn(torch, *_make(torch, arrays, True))))
        their_grads = _grads(torch, case, name, index, arrays, weights)
    except Exception:  # noqa: BLE001  PyTorch's backward raised
        return None
    if their_grads is None:
        return None
    try:
        _compare_gradients(_grads(tapegrad, case, name, index, arrays, weights), their_grads, "float64")
    except Exception as e:  # noqa: BLE001  reported as the mismatch
        return f"gradients: {type(e).__name__}: {str(e).strip()[:400]}"
    return None


def _mismatches(name, index):
    found = {v: _mismatch(name, index, v) for v in VARIANTS}
    return {v: m for v, m in found.items() if m is not None}


@pytest.mark.parametrize("name", sorted({n for n, _ in CASES}))
def test_op_at_boundary_points_is_torch_s(name):
    unexpected, fixed = [], []
    for n, index in CASES:
        if n != name:
            continue
        key = f"{name}:{index}"
        found = _mismatches(name, index)
        if found and key not in KNOWN:
            unexpected += [f"{key} [{v}] {m}" for v, m in found.items()]
        if not found and key in KNOWN:
            fixed.append(key)
    assert not unexpected, "differs from PyTorch at boundary points:\n" + "\n".join(unexpected)
    assert not fixed, f"listed in KNOWN but now matching PyTorch (remove them): {fixed}"


def test_known_entries_name_swept_cases():
    stale = sorted(set(KNOWN) - {f"{n}:{i}" for n, i in CASES})
    assert not stale, f"KNOWN entries that name no swept case: {stale}"


def test_variants_cover_the_boundary_points():
    # The points the sweep promises: 0, +-1, nan, +-inf and ties.
    special = VARIANTS["special"]
    assert {0.0, 1.0, -1.0, 0.5}.issubset(special[np.isfinite(special)])
    assert np.isnan(special).any() and np.isposinf(special).any() and np.isneginf(special).any()
