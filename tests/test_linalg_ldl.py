"""linalg.ldl_factor(_ex) and ldl_solve against PyTorch: LAPACK's Bunch-Kaufman factors and pivots, solves,
batches, complex symmetric and Hermitian matrices, the checks' errors, and no XLA compile on first sight. The
LAPACK call runs on the host; PyTorch links another LAPACK, so the last bit may differ. (No derivative, as in
PyTorch: tests/test_no_derivative.py.)"""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised, require
from xla_events import counting

torch = require("torch")
R = np.random.default_rng(0)


def _matrix(shape, dtype, hermitian):
    a = R.standard_normal(shape)
    if "complex" in dtype:
        a = a + 1j * R.standard_normal(shape)
    return (a + np.swapaxes(np.conj(a) if hermitian else a, -1, -2)).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (0, 3, 3), (1, 1), (0, 0)])
def test_factors_and_solves_match_pytorch(dtype, hermitian, shape):
    a = _matrix(shape, dtype, hermitian)
    b = R.standard_normal(shape[:-1] + (2,)).astype(dtype)
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
    ours = tapegrad.linalg.ldl_factor_ex(tapegrad.tensor(a), hermitian=hermitian)
    for o, t in zip(ours, theirs):
        assert_close(o, t)
    assert_close(tapegrad.linalg.ldl_solve(ours.LD, ours.pivots, tapegrad.tensor(b), hermitian=hermitian),
                 torch.linalg.ldl_solve(theirs.LD, theirs.pivots, torch.tensor(b), hermitian=hermitian))


def test_two_by_two_pivots_broadcast_solves_and_printing_match_pytorch():
    def run(lib):
        a = lib.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]], dtype=lib.float64)
        factors = lib.linalg.ldl_factor(a)
        x = lib.linalg.ldl_solve(factors.LD, factors.pivots.long(), lib.ones(4, 3, 2, dtype=lib.float64))
        return factors, x
    (ours, x), (theirs, y) = run(tapegrad), run(torch)
    assert ours.pivots.tolist() == theirs.pivots.tolist() and min(ours.pivots.tolist()) < 0
    assert_close(x, y)
    assert repr(ours).replace("tapegrad", "torch") == repr(theirs)


CHECKS = {
    "vector": lambda lib: lib.linalg.ldl_factor(lib.ones(3)),
    "not square": lambda lib: lib.linalg.ldl_factor_ex(lib.ones(2, 3)),
    "integer": lambda lib: lib.linalg.ldl_factor(lib.ones(2, 2, dtype=lib.int64)),
    "half": lambda lib: lib.linalg.ldl_factor(lib.ones(2, 2, dtype=lib.float16)),
    "solve: factor not square": lambda lib: lib.linalg.ldl_solve(lib.ones(3, 2), lib.ones(3, dtype=lib.int32),
                                                                 lib.ones(3, 1)),
    "solve: b a vector": lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(3)),
    "solve: sizes": lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32), lib.ones(2, 2)),
    "solve: pivots' shape": lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(2, dtype=lib.int32),
                                                             lib.ones(3, 1)),
    "solve: float pivots": lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3), lib.ones(3, 1)),
    "solve: dtypes": lambda lib: lib.linalg.ldl_solve(lib.eye(3), lib.ones(3, dtype=lib.int32),
                                                      lib.ones(3, 1, dtype=lib.float64)),
    "solve: batches": lambda lib: lib.linalg.ldl_solve(lib.eye(3).expand(2, 3, 3), lib.ones(2, 3, dtype=lib.int32),
                                                       lib.ones(3, 3, 1)),
}


@pytest.mark.parametrize("case", sorted(CHECKS))
def test_checks_raise_pytorchs_errors(case):
    # (the same type and text; tapegrad may add how to fix it)
    ours, theirs = raised(lambda: CHECKS[case](tapegrad), fold=True), raised(lambda: CHECKS[case](torch), fold=True)
    assert ours[0] == theirs[0] and ours[1].startswith(theirs[1])


@pytest.mark.parametrize("name", ["ldl_factor", "ldl_factor_ex"])
def test_a_singular_matrix_raises_with_checks_and_reports_info_without(name):
    singular = np.stack([np.eye(2), np.zeros((2, 2))])
    theirs = torch.linalg.ldl_factor_ex(torch.tensor(singular))
    ours = tapegrad.linalg.ldl_factor_ex(tapegrad.tensor(singular))
    assert ours.info.tolist() == theirs.info.tolist() == [0, 1]
    with pytest.raises(RuntimeError) as info:
        kwargs = {"check_errors": True} if name == "ldl_factor_ex" else {}
        getattr(tapegrad.linalg, name)(tapegrad.tensor(singular), **kwargs)
    assert f"torch.linalg.{name}: Unknown error code: 1." in str(info.value)   # (PyTorch's internal assert's phrase)


def test_new_shapes_compile_nothing_and_programs_call_lapack_too():
    with counting() as xla:
        for n in (3, 6):
            a = tapegrad.tensor(_matrix((n, n), "float64", False))
            x = tapegrad.linalg.ldl_solve(*tapegrad.linalg.ldl_factor(a), tapegrad.ones(n, 1, dtype=tapegrad.float64))
            np.testing.assert_allclose(a.numpy() @ x.numpy(), np.ones((n, 1)), atol=1e-10)
        assert xla.compiles == 0

    @tapegrad.compile
    def solve(a, b):
        return tapegrad.linalg.ldl_solve(*tapegrad.linalg.ldl_factor(a), b)
    a = tapegrad.tensor(_matrix((4, 4), "float64", False))
    b = tapegrad.ones(4, 2, dtype=tapegrad.float64)
    for _ in range(3):
        np.testing.assert_allclose(a.numpy() @ solve(a, b).numpy(), b.numpy(), atol=1e-10)
    per_matrix = tapegrad.vmap(lambda m: tapegrad.linalg.ldl_factor(m).LD)(tapegrad.stack([a, 2 * a]))
    assert_close(per_matrix[1], torch.linalg.ldl_factor(torch.tensor(2 * a.numpy())).LD)
