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
where only PyTorch's backward raises, the values are still compared. A variant where PyTorch's own kernel
crashes the process (listed in CRASHES with the reason) is skipped the same way. Cases whose values are random
(compare=False) are left out. Differences that remain are listed in KNOWN with the reason; a listed entry
that matches again fails the test, so the list only shrinks.
"""
import numpy as np
import pytest

import tapegrad
from tapegrad import _programs

from conftest import require
from op_specs import F
from test_op_table import SPECS, _call, _compare_gradients, _compare_outputs, _draw, _loss, _make, _numpy

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
    # PyTorch's varlen_attn runs only on CUDA; its oracle here is SDPA per sequence with the window as a mask
    "varlen_attention:1": "nan/inf at keys a query does not attend to (outside its causal window): the SDPA "
                          "reference adds the mask to the scores, so a nan score spreads to the whole row; "
                          "flash attention (PyTorch's varlen kernel) skips those keys; tapegrad skips them in the "
                          "scores, but a value there times its zero weight is still nan. Between sequences "
                          "nothing spreads (tested in test_varlen_attn.py)",
    "sparse_addmv:1": "a compressed matrix with no stored element: PyTorch's addmv returns the input as it is, "
                      "unbroadcast ((1,) for a (3, 4) matrix), resizing its output with a deprecation warning; "
                      "tapegrad broadcasts it as for any other matrix (the (3,) a dense addmv gives)",
    # ties: which element (or index) gets the value or the gradient
    "adaptive_max_pool:0": "ties and NaN in a window: PyTorch sends the gradient to one argmax (NaN counts as the max), tapegrad's differs",
    "max_pool:0": "ties and NaN/inf in overlapping windows: PyTorch's argmax per window differs from tapegrad's",
    "max_pool:1": "ties and NaN in a window: PyTorch's argmax per window differs from tapegrad's",
    "median_all:0": "a NaN median: PyTorch sends the gradient to the NaN element, tapegrad to none",
    "kthvalue_indices:0": "ties: PyTorch's index among equal values is its selection algorithm's, not the first",
    "kthvalue_values:0": "ties: PyTorch's index among equal values is its selection algorithm's, not the first",
    "kthvalue_values:1": "ties and NaN: PyTorch's index among equal values is its selection algorithm's",
    "topk_indices:0": "ties: PyTorch's index among equal values is its partial sort's, not the first",
    "topk_values:0": "ties: PyTorch's index among equal values is its partial sort's, not the first",
    "topk_values:1": "ties: PyTorch's index among equal values is its partial sort's, not the first",
    "mode_values:1": "NaN and inf in a row: PyTorch's mode counts them differently (returns -inf)",
    "mode_values:2": "NaN and inf in a row: PyTorch's mode picks another of the single-count values",
    "searchsorted:0": "NaN in the sorted sequence or the values: PyTorch's binary search places NaN after everything",
    "searchsorted:1": "NaN in the sorted sequence or the values: PyTorch's binary search places NaN after everything",
    "scatter_reduce:6": "amax/amin with NaN: PyTorch's gradient is NaN at the NaN-tied inputs, tapegrad's 0",
    "scatter_reduce:7": "amax/amin with ties/NaN: PyTorch's src gradient (NaN, even split) differs from tapegrad's",
    "scatter_reduce:8": "amax/amin with NaN: PyTorch's gradient is NaN at the NaN-tied inputs, tapegrad's 0",
    "scatter_reduce:9": "amax/amin with ties/NaN: PyTorch's src gradient (NaN, even split) differs from tapegrad's",
    "index_reduce:2": "amax with NaN: PyTorch's gradient is NaN at the NaN-tied inputs, tapegrad's 0",
    "index_reduce:3": "amin with ties/NaN: PyTorch's source gradient (NaN, even split) differs from tapegrad's",
    "index_reduce:4": "amax with NaN: PyTorch's gradient is NaN at the NaN-tied inputs, tapegrad's 0",
    "vector_norm:3": "inf-norm with NaN/inf: PyTorch's gradient is 0 at the non-maximal NaN, tapegrad's NaN",
    "dist:1": "inf-norm with NaN/inf: PyTorch's gradient is 0 at the non-maximal NaN, tapegrad's NaN",
    # PyTorch's NaN gradient depends on the element's position (vectorised body vs scalar tail of its kernel)
    "hardtanh:0": "PyTorch's gradient at NaN is 0 in its vectorised kernel body and the full gradient in the scalar tail",
    "hardshrink:0": "PyTorch's gradient at NaN is 0 in its vectorised kernel body and the full gradient in the scalar tail",
    "softshrink:0": "PyTorch's gradient at NaN is 0 in its vectorised kernel body and the full gradient in the scalar tail",
    # infinities: inf - inf, inf * 0 in a formula where PyTorch's backward takes another branch
    "binary_cross_entropy_with_logits:0": "an infinite target: PyTorch's gradient is NaN, tapegrad's inf",
    "cdist:1": "p=inf distances with infinite coordinates: PyTorch gives inf, tapegrad NaN (inf - inf)",
    "pdist:1": "p=inf with NaN/inf coordinates: PyTorch's gradient is NaN throughout, tapegrad's goes to the tied maxima",
    "remainder:0": "divisor inf: PyTorch's divisor gradient is NaN, tapegrad's inf",
    "trilinear:0": "inf times 0 in the contraction: PyTorch's gradient is NaN where tapegrad's is inf",
    "trilinear:1": "inf times 0 in the contraction: PyTorch's gradient is NaN where tapegrad's is inf",
    "var:2": "inf in a column: PyTorch's gradient is inf at the finite elements, tapegrad's NaN",
    "var_mean:1": "inf in the input: PyTorch's gradient is -inf at the finite elements, tapegrad's NaN",
    # linear algebra on singular, degenerate or non-finite matrices
    "inv:0": "a NaN/inf matrix: PyTorch returns NaN, tapegrad raises its singular-matrix LinAlgError",
    "inv:1": "a NaN/inf matrix: PyTorch returns NaN, tapegrad raises its singular-matrix LinAlgError",
    "solve:0": "a NaN/inf matrix: PyTorch returns NaN, tapegrad raises its singular-matrix LinAlgError",
    "solve:1": "a NaN/inf matrix: PyTorch returns NaN, tapegrad raises its singular-matrix LinAlgError",
    "solve:2": "a NaN/inf matrix: PyTorch returns NaN, tapegrad raises its singular-matrix LinAlgError",
    "det:0": "NaN/inf entries: LAPACK's pivoting spreads NaN to other entries of the gradient than XLA's LU",
    "det:1": "NaN/inf entries and singular all-ones matrices: LU pivoting differs from LAPACK's",
    "slogdet:0": "NaN/inf entries and singular matrices: LU pivoting differs from LAPACK's (logabsdet, gradient)",
    "eigh:0": "repeated eigenvalues: the eigenvectors of a degenerate eigenspace are any basis of it",
    "eigvalsh:0": "repeated eigenvalues of a rank-one matrix: the gradient depends on the eigenvector basis chosen",
    "qr:0": "a rank-deficient matrix: Q's columns beyond the rank are any orthonormal completion",
    "qr:1": "a rank-deficient matrix: Q's columns beyond the rank are any orthonormal completion",
    "svd:0": "repeated/zero singular values: the singular vectors are any basis of the degenerate subspace",
    "svdvals:0": "repeated singular values: the gradient depends on the singular-vector basis chosen",
    "svdvals_uv:0": "nuclear norm of a rank-one matrix: its zero singular values' vectors are any basis",
    "svdvals_uv:2": "-2-norm of rank-deficient matrices: the smallest (repeated, zero) singular value's vectors are any basis",
    # real-input FFTs of nan/inf signals: which bins turn nan depends on the transform's butterflies (PyTorch's
    # pocketfft real transform keeps the zero bin's imaginary part exactly 0, XLA's spreads nan into it)
    "fft_r2c:0": "nan/inf in the signal: pocketfft's and XLA's real FFTs spread nan to different bins",
    "fft_r2c:1": "nan/inf in the signal: pocketfft's and XLA's real FFTs spread nan to different bins",
    "fft_r2c:4": "nan/inf in the signal: pocketfft's and XLA's real FFTs spread nan to different bins",
    "fft_r2c:7": "nan/inf in the signal (stft's frames): pocketfft's and XLA's real FFTs spread nan to different bins",
    "eig:0": "repeated eigenvalues of a rank-one matrix: the eigenvectors of a degenerate eigenspace are any basis of it",
    "lu:0": "NaN/inf entries and singular matrices: LAPACK's pivot search (NaN, ties) picks other rows than XLA's LU",
    "lu_factor:0": "NaN/inf entries: LAPACK's pivoting spreads NaN to other entries of the factor than XLA's LU",
    "cholesky_inverse:0": "NaN/inf entries: LAPACK's potri leaves finite the entries its blocked update never reads",
    "householder_product:0": "NaN/inf entries: LAPACK's orgqr leaves finite the columns its reflectors never reach",
    "ldl_factor:0": "NaN/inf entries: sytrf's pivot search (comparisons with NaN) picks other pivots in PyTorch's "
                    "LAPACK (MKL) than in SciPy's (OpenBLAS), which tapegrad calls",
    "ldl_solve:0": "NaN/inf entries: sytrs spreads NaN over the solution as SciPy's OpenBLAS build does (all of it "
                   "with SciPy 1.17; PyTorch's MKL leaves some entries finite, as older SciPy builds did)",
    # attention's fused CPU kernel: an online softmax over blocks of keys
    "attention:0": "NaN/inf in q, k, v: PyTorch's fused kernel (blockwise online softmax) spreads NaN to other outputs",
    "attention:1": "NaN/inf in q, k, v: PyTorch's fused kernel's gradient is NaN where tapegrad's is 0 (masked keys)",
    "attention:2": "NaN/inf in q, k, v: PyTorch's fused kernel (blockwise online softmax) spreads NaN to other outputs",
    # sampling at non-finite grid coordinates (PyTorch's 3-D kernel: std::min/max clip in its forward, branches in
    # its backward, so a NaN coordinate reads the last pixel but sends that pixel no gradient)
    "grid_sample_3d:0": "inf/NaN grid coordinates: a skipped corner's NaN weight makes tapegrad's grid gradient NaN",
    "grid_sample_3d:1": "NaN grid coordinates (border): PyTorch's backward gives the pixel its forward read no gradient",
    "grid_sample_3d:2": "NaN grid coordinates (reflection): PyTorch's backward gives the pixel it read no gradient",
    "grid_sample_3d:3": "NaN grid coordinates (nearest): PyTorch's backward gives the pixel it read no gradient",
}

# "op:case index:variant" where PyTorch's own kernel crashes the process (no exception to catch): not run there.
CRASHES = {
    "grid_sample_2d:1:special": "PyTorch's 2-D border backward turns a NaN coordinate into a wild index and writes there",
}


@pytest.fixture(autouse=True)
def _first_sight(monkeypatch):
    # Each variant runs as a structure met for the first time runs: op by op. The four variants of a case
    # are one structure four times in a row, which the steady-loop policy would compile whole at the third
    # (two XLA compiles per case, half of this sweep's time). Whole programs agree with op-by-op runs on
    # every structure the differential fuzzers draw; what this sweep checks is each op at its edges.
    monkeypatch.setattr(_programs, "STEADY_STREAK", 1 << 30)


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


def _run(lib, case, name, index, arrays, weights):
    """The case's outputs and, when a weighted loss of them carries a gradient, the inputs' gradients.

    One forward with gradients recorded serves both comparisons (one program per case and variant)."""
    inputs = _make(lib, arrays, case.grad)
    outputs = _call(lib, case, name, index, inputs)
    if weights is None:
        weights = _weights(outputs)
    loss = _loss(lib, outputs, weights) if case.grad else None
    if not getattr(loss, "requires_grad", False):
        return outputs, weights, None
    return outputs, weights, lambda: (loss.backward(), [None if t.grad is None else _numpy(t.grad) for t in inputs])[1]


def _mismatch(name, index, variant):
    """None when tapegrad matches PyTorch at this variant's points (or PyTorch raised), else the difference."""
    if f"{name}:{index}:{variant}" in CRASHES:
        return None
    case = SPECS[name][index]
    arrays = _inputs(case, name, index, variant)
    try:
        theirs, weights, their_backward = _run(torch, case, name, index, arrays, None)
    except Exception:  # noqa: BLE001  PyTorch raised: its own undefined point
        return None
    try:
        ours, _, our_backward = _run(tapegrad, case, name, index, arrays, weights)
        _compare_outputs(ours, theirs, case, "float64")
    except Exception as e:  # noqa: BLE001  reported as the mismatch
        return f"values: {type(e).__name__}: {str(e).strip()[:400]}"
    if their_backward is None:
        return None
    try:
        their_grads = their_backward()
    except Exception:  # noqa: BLE001  PyTorch's backward raised
        return None
    try:
        _compare_gradients(our_backward() if our_backward else [None] * len(arrays), their_grads, "float64")
    except Exception as e:  # noqa: BLE001  reported as the mismatch
        return f"gradients: {type(e).__name__}: {str(e).strip()[:400]}"
    return None


# Entries where either library's answer is one choice among equally right ones (a basis of a degenerate
# eigen- or singular subspace, NaN spread by a solver over non-finite input): the LAPACK build on each side
# picks it, so they may also happen to agree.
BASIS_CHOICE = {"eigh:0", "eigvalsh:0", "eig:0", "qr:0", "qr:1", "svd:0", "svdvals:0", "svdvals_uv:0", "svdvals_uv:2",
                "ldl_solve:0"}


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
        if not found and key in KNOWN and key not in BASIS_CHOICE:
            fixed.append(key)
    assert not unexpected, "differs from PyTorch at boundary points:\n" + "\n".join(unexpected)
    assert not fixed, f"listed in KNOWN but now matching PyTorch (remove them): {fixed}"


def test_known_entries_name_swept_cases():
    stale = sorted((set(KNOWN) | {k.rsplit(":", 1)[0] for k in CRASHES}) - {f"{n}:{i}" for n, i in CASES})
    assert not stale, f"KNOWN entries that name no swept case: {stale}"


def test_variants_cover_the_boundary_points():
    # The points the sweep promises: 0, +-1, nan, +-inf and ties.
    special = VARIANTS["special"]
    assert {0.0, 1.0, -1.0, 0.5}.issubset(special[np.isfinite(special)])
    assert np.isnan(special).any() and np.isposinf(special).any() and np.isneginf(special).any()
