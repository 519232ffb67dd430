"""torch.linalg's LU functions, _ex solvers, lstsq, matrix_rank, cond, eig, vander, vecdot, diagonal, tensorinv,
tensorsolve, householder_product, and the legacy torch.lu, lu_unpack, lu_solve, triangular_solve,
cholesky_solve, cholesky_inverse, geqrf, orgqr, ormqr against PyTorch: their checks and messages, LAPACK's
info, what lstsq returns for each driver, named-tuple results, grad_fn names, and the functions PyTorch
removed (their RuntimeError). Values and gradients of the op-table entries are in tests/op_specs_linalg_more.py."""
import textwrap
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised, require

torch = require("torch")

_M = [[2.0, 1.0, 0.5], [0.5, 3.0, -1.0], [1.0, -2.0, 4.0]]
_SINGULAR = [[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 0.0]]


def _m(lib, values=_M, dtype="float64"):
    return lib.tensor(values, dtype=getattr(lib, dtype))


CALLS = {
    # shapes, dtypes: the LAPACK kernels' refusals and PyTorch's own checks, in its order
    "lu_factor of a vector": lambda lib: lib.linalg.lu_factor(lib.ones(3)),
    "lu_factor of half": lambda lib: lib.linalg.lu_factor(lib.eye(3, dtype=lib.half)),
    "lu_factor of long": lambda lib: lib.linalg.lu_factor_ex(lib.eye(3, dtype=lib.long)),
    "lu_factor without pivots": lambda lib: lib.linalg.lu_factor(lib.eye(3), pivot=False),
    "lu of a vector": lambda lib: lib.linalg.lu(lib.ones(3)),
    "lu_factor of a singular batch": lambda lib: lib.linalg.lu_factor(lib.stack([_m(lib), _m(lib, _SINGULAR)])),
    "lu_factor_ex checked": lambda lib: lib.linalg.lu_factor_ex(_m(lib, _SINGULAR), check_errors=True),
    "lu_solve of a wide LU": lambda lib: lib.linalg.lu_solve(lib.ones(2, 3), lib.ones(2, dtype=lib.int32),
                                                             lib.ones(2, 1)),
    "lu_solve, bad B": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(_m(lib)), lib.ones(4, 2,
                                                                                                 dtype=lib.float64)),
    "lu_solve, B a vector": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(_m(lib)), lib.ones(3,
                                                                                                   dtype=lib.float64)),
    "lu_solve, long pivots": lambda lib: lib.linalg.lu_solve(_m(lib), lib.ones(3, dtype=lib.long), _m(lib)),
    "lu_solve, float B": lambda lib: lib.linalg.lu_solve(_m(lib), lib.ones(3, dtype=lib.int32), lib.ones(3, 1)),
    "lu_solve, too few pivots": lambda lib: lib.linalg.lu_solve(_m(lib), lib.ones(2, dtype=lib.int32), _m(lib)),
    "lu_unpack of a vector": lambda lib: lib.lu_unpack(lib.ones(3), lib.ones(3, dtype=lib.int32)),
    "lu_unpack, long pivots": lambda lib: lib.lu_unpack(_m(lib), lib.ones(3, dtype=lib.long)),
    "lu_unpack, pivots out of range": lambda lib: lib.lu_unpack(_m(lib), lib.tensor([0, 3, 3], dtype=lib.int32)),
    "inv_ex of half": lambda lib: lib.linalg.inv_ex(lib.eye(3, dtype=lib.half)),
    "inv_ex of long": lambda lib: lib.linalg.inv_ex(lib.eye(3, dtype=lib.long)),
    "inv_ex checked": lambda lib: lib.linalg.inv_ex(lib.stack([_m(lib), _m(lib, _SINGULAR)]), check_errors=True),
    "solve_ex of a wide A": lambda lib: lib.linalg.solve_ex(lib.ones(2, 3), lib.ones(2)),
    "solve_ex checked": lambda lib: lib.linalg.solve_ex(_m(lib, _SINGULAR), _m(lib), check_errors=True),
    "cholesky_ex of long": lambda lib: lib.linalg.cholesky_ex(lib.eye(3, dtype=lib.long)),
    "cholesky_ex of half": lambda lib: lib.linalg.cholesky_ex(lib.eye(3, dtype=lib.half)),
    "cholesky_ex checked": lambda lib: lib.linalg.cholesky_ex(-lib.eye(3), check_errors=True),
    "triangular_solve, vector b": lambda lib: lib.triangular_solve(lib.ones(3), _m(lib)),
    "triangular_solve, vector A": lambda lib: lib.triangular_solve(lib.ones(3, 1), lib.ones(3)),
    "triangular_solve, dtypes": lambda lib: lib.triangular_solve(lib.ones(3, 1), _m(lib)),
    "triangular_solve, wide A": lambda lib: lib.triangular_solve(lib.ones(3, 1), lib.ones(3, 4)),
    "triangular_solve, bad b": lambda lib: lib.triangular_solve(lib.ones(4, 1), lib.eye(3)),
    "triangular_solve of long": lambda lib: lib.triangular_solve(lib.ones(3, 1, dtype=lib.long),
                                                                 lib.eye(3, dtype=lib.long)),
    "cholesky_solve, vector b": lambda lib: lib.cholesky_solve(lib.ones(3), lib.eye(3)),
    "cholesky_solve, vector u": lambda lib: lib.cholesky_solve(lib.ones(3, 1), lib.ones(3)),
    "cholesky_solve, bad b": lambda lib: lib.cholesky_solve(lib.ones(4, 1), lib.eye(3)),
    "cholesky_solve of half": lambda lib: lib.cholesky_solve(lib.ones(3, 1).half(), lib.eye(3).half()),
    "cholesky_inverse of a wide matrix": lambda lib: lib.cholesky_inverse(lib.ones(2, 3)),
    "cholesky_inverse of a singular factor": lambda lib: lib.cholesky_inverse(_m(lib, _SINGULAR)),
    "cholesky_inverse of long": lambda lib: lib.cholesky_inverse(lib.eye(3, dtype=lib.long)),
    "lstsq of a vector": lambda lib: lib.linalg.lstsq(lib.ones(3), lib.ones(3)),
    "lstsq of half": lambda lib: lib.linalg.lstsq(lib.ones(3, 2).half(), lib.ones(3, 1).half()),
    "lstsq of long, rcond": lambda lib: lib.linalg.lstsq(lib.ones(3, 2, dtype=lib.long),
                                                         lib.ones(3, 1, dtype=lib.long), rcond=0.1),
    "lstsq, dtypes": lambda lib: lib.linalg.lstsq(_m(lib), lib.ones(3, 1)),
    "lstsq, rows": lambda lib: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(4, 1)),
    "lstsq, driver": lambda lib: lib.linalg.lstsq(lib.ones(3, 2), lib.ones(3, 1), driver="gesv"),
    "matrix_rank of a vector": lambda lib: lib.linalg.matrix_rank(lib.ones(3)),
    "matrix_rank of long": lambda lib: lib.linalg.matrix_rank(lib.ones(3, 3, dtype=lib.long)),
    "matrix_rank hermitian of a wide matrix": lambda lib: lib.linalg.matrix_rank(lib.ones(2, 3), hermitian=True),
    "cond of a vector": lambda lib: lib.linalg.cond(lib.ones(3)),
    "cond, bad order": lambda lib: lib.linalg.cond(lib.eye(3), 3),
    "cond fro of a wide matrix": lambda lib: lib.linalg.cond(lib.ones(2, 3), "fro"),
    "cond 1 of a wide matrix": lambda lib: lib.linalg.cond(lib.ones(2, 3), 1),
    "cond 1 of half": lambda lib: lib.linalg.cond(lib.eye(3).half(), 1),
    "cond of long": lambda lib: lib.linalg.cond(lib.eye(3, dtype=lib.long)),
    "eig of a wide matrix": lambda lib: lib.linalg.eig(lib.ones(2, 3)),
    "eig of long": lambda lib: lib.linalg.eig(lib.eye(3, dtype=lib.long)),
    "eigvals of half": lambda lib: lib.linalg.eigvals(lib.eye(3, dtype=lib.half)),
    "vander of bool": lambda lib: lib.linalg.vander(lib.ones(3, dtype=lib.bool)),
    "vander, N=1": lambda lib: lib.linalg.vander(lib.ones(3), N=1),
    "vecdot, dtypes": lambda lib: lib.linalg.vecdot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
    "tensorinv, ind=0": lambda lib: lib.linalg.tensorinv(lib.eye(3), ind=0),
    "tensorinv, sizes": lambda lib: lib.linalg.tensorinv(lib.ones(2, 3), ind=1),
    "tensorsolve, sizes": lambda lib: lib.linalg.tensorsolve(lib.ones(2, 3, 5), lib.ones(2, 3)),
    "householder_product, wide": lambda lib: lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2)),
    "householder_product, long tau": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3)),
    "householder_product, tau dims": lambda lib: lib.linalg.householder_product(lib.ones(3, 2), lib.ones(2, 2)),
    "householder_product, tau dtype": lambda lib: lib.linalg.householder_product(lib.ones(3, 2),
                                                                                 lib.ones(2, dtype=lib.float64)),
    "orgqr of half": lambda lib: lib.orgqr(lib.ones(3, 2).half(), lib.ones(2).half()),
    "geqrf of a vector": lambda lib: lib.geqrf(lib.ones(3)),
    "geqrf of long": lambda lib: lib.geqrf(lib.ones(3, 3, dtype=lib.long)),
    "ormqr, tau dims": lambda lib: lib.ormqr(lib.ones(2, 4, 3), lib.ones(3), lib.ones(4, 2)),
    "ormqr, tau size": lambda lib: lib.ormqr(lib.ones(4, 3), lib.ones(2), lib.ones(4, 2)),
    "ormqr, other rows": lambda lib: lib.ormqr(lib.ones(4, 3), lib.ones(3), lib.ones(2, 5), left=False),
    "ormqr, other dtype": lambda lib: lib.ormqr(lib.ones(4, 3), lib.ones(3), lib.ones(4, 2, dtype=lib.float64)),
    "ormqr, vector other": lambda lib: lib.ormqr(lib.ones(4, 3), lib.ones(3), lib.ones(4)),
    # batch dims that do not broadcast
    "lu_solve, batches": lambda lib: lib.linalg.lu_solve(*lib.linalg.lu_factor(_m(lib).expand(2, 3, 3)),
                                                         lib.ones(3, 3, 1, dtype=lib.float64)),
    "triangular_solve, batches": lambda lib: lib.triangular_solve(lib.ones(3, 3, 1), lib.ones(2, 3, 3)),
    "cholesky_solve, batches": lambda lib: lib.cholesky_solve(lib.ones(3, 3, 1), lib.ones(2, 3, 3)),
    "lstsq, batches": lambda lib: lib.linalg.lstsq(lib.ones(2, 3, 3), lib.ones(3, 3, 1)),
    "solve_ex, batches": lambda lib: lib.linalg.solve_ex(lib.ones(2, 3, 3), lib.ones(3, 3, 1)),
    # removed from PyTorch: a RuntimeError naming the torch.linalg replacement
    "torch.matrix_rank": lambda lib: lib.matrix_rank(lib.eye(3)),
    "torch.lstsq": lambda lib: lib.lstsq(lib.eye(3), lib.eye(3)),
    "Tensor.lstsq": lambda lib: lib.eye(3).lstsq(lib.eye(3)),
    "torch.eig": lambda lib: lib.eig(lib.eye(3), eigenvectors=True),
    "Tensor.eig": lambda lib: lib.eye(3).eig(),
    "torch.symeig": lambda lib: lib.symeig(lib.eye(3)),
    "Tensor.symeig": lambda lib: lib.eye(3).symeig(True),
    "torch.solve": lambda lib: lib.solve(lib.eye(3), lib.eye(3)),
    "Tensor.solve": lambda lib: lib.eye(3).solve(lib.eye(3)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_errors_as_pytorch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = raised(lambda: CALLS[name](torch))
        ours = raised(lambda: CALLS[name](tapegrad))
    assert theirs is not None
    assert ours is not None, f"tapegrad returned where PyTorch raised {theirs}"
    their_type = tapegrad.linalg.LinAlgError if theirs[0] is torch.linalg.LinAlgError else theirs[0]
    # PyTorch's message, then (for a kernel's refusal) tapegrad's sentence saying how to fix it
    assert issubclass(ours[0], their_type) and ours[1].startswith(theirs[1]), (ours, theirs)


def _both(build):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(tapegrad), build(torch)


def _compare(ours, theirs):
    assert type(ours).__name__ == type(theirs).__name__
    for field in getattr(ours, "_fields", ()):   # PyTorch's field names
        assert_close(getattr(ours, field), getattr(theirs, field))
    for o, t in zip(ours, theirs) if isinstance(theirs, tuple) else [(ours, theirs)]:
        assert_close(o, t)


def test_info_of_singular_and_indefinite_batches():
    batch = [_M, _SINGULAR, [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]
    indefinite = [np.eye(3), np.diag([1.0, -1.0, 2.0]), [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]
    for build in (lambda lib: lib.linalg.inv_ex(_m(lib, batch)).info,
                  lambda lib: lib.linalg.solve_ex(_m(lib, batch), _m(lib)).info,
                  lambda lib: lib.linalg.lu_factor_ex(_m(lib, batch)).info,
                  lambda lib: lib.lu(_m(lib, batch), get_infos=True)[2],
                  lambda lib: lib.linalg.cholesky_ex(_m(lib, np.asarray(indefinite).tolist())).info,
                  lambda lib: lib.linalg.cholesky_ex(_m(lib, np.asarray(indefinite).tolist()), upper=True).info):
        _compare(*_both(build))
    ours, theirs = _both(lambda lib: lib.linalg.lu_factor_ex(_m(lib, _SINGULAR)))
    _compare(ours[:2], theirs[:2])   # a singular matrix's LU and pivots, its zero pivot included


def test_results_are_pytorchs_named_tuples():
    spd = (np.asarray(_M) @ np.asarray(_M).T + np.eye(3)).tolist()
    for build in (lambda lib: lib.linalg.lu_factor(_m(lib)), lambda lib: lib.linalg.lu(_m(lib)),
                  lambda lib: lib.lu_unpack(*lib.linalg.lu_factor(_m(lib))),
                  lambda lib: lib.lu_unpack(*lib.linalg.lu_factor(_m(lib)), unpack_data=False),
                  lambda lib: lib.lu_unpack(*lib.linalg.lu_factor(_m(lib)), unpack_pivots=False),
                  lambda lib: lib.lu(_m(lib)), lambda lib: _m(lib).lu(get_infos=True),
                  lambda lib: lib.linalg.inv_ex(_m(lib)), lambda lib: lib.linalg.solve_ex(_m(lib), _m(lib)),
                  lambda lib: lib.linalg.cholesky_ex(_m(lib, spd)), lambda lib: lib.geqrf(_m(lib)),
                  lambda lib: lib.triangular_solve(_m(lib)[:, :2], _m(lib), upper=False, unitriangular=True)):
        _compare(*_both(build))
    ours, theirs = _both(lambda lib: repr(lib.linalg.eig(lib.eye(2))))
    assert ours.replace("tapegrad", "torch") == theirs


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_reports_what_each_driver_does(driver):
    rng = np.random.default_rng(0)
    tall, rhs = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 5, 2))
    deficient = np.concatenate([tall[0, :, :2], tall[0, :, :1] + tall[0, :, 1:2]], axis=1)
    cases = [lambda lib: lib.linalg.lstsq(lib.tensor(tall), lib.tensor(rhs), driver=driver),   # broadcast
             lambda lib: lib.linalg.lstsq(lib.tensor(tall[0].T), lib.tensor(rhs[0, :3, 0]), driver=driver)]
    if driver != "gels":   # (gels assumes full rank)
        cases.append(lambda lib: lib.linalg.lstsq(lib.tensor(deficient), lib.tensor(rhs[0]), driver=driver))
    if driver in ("gelsd", "gelss"):   # (gelsy's cut is its pivoted QR's condition estimate: see lstsq)
        cases.append(lambda lib: lib.linalg.lstsq(lib.tensor(tall[0]), lib.tensor(rhs[0]), rcond=0.5, driver=driver))
    for build in cases:
        ours, theirs = _both(build)
        for field in ours._fields:
            assert_close(getattr(ours, field), getattr(theirs, field), rtol=1e-9, atol=1e-10)


def test_matrix_rank_tolerances():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 4, 2)) @ rng.standard_normal((2, 2, 3)) * np.array([1.0, 1e-3])[:, None, None]
    sym = a[0].T @ a[0]
    for build in (lambda lib: lib.linalg.matrix_rank(lib.tensor(a)),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(a), atol=0.01),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(a), atol=lib.tensor([0.0, 0.5]),
                                                        rtol=lib.tensor(0.1)),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(a), rtol=lib.tensor([0.5, 0.0])),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(a), 1.0),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(a).float(), tol=1e-4),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(sym), hermitian=True),
                  lambda lib: lib.linalg.matrix_rank(lib.tensor(sym + 1j * 0), atol=1.0, hermitian=True)):
        _compare(*_both(build))


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", float("inf"), float("-inf"), 1, -1])
def test_cond_values_gradients_and_nodes(p):
    def build(lib):
        a = _m(lib).requires_grad_()
        c = lib.linalg.cond(a, p)
        # PyTorch's cond writes into the inverse in place (infinite where singular), which its inverse's
        # backward reads: backward then fails, as it does in PyTorch
        error = raised(c.backward)
        return c, a.grad, type(c.grad_fn).__name__, error and (error[0], error[1].split(" Hint:")[0])
    ours, theirs = _both(build)
    assert_close(ours[0], theirs[0])
    assert (ours[1] is None) == (theirs[1] is None) and ours[2:] == theirs[2:]
    if theirs[1] is not None:
        assert_close(ours[1], theirs[1])
    if p in (1, "fro"):   # a singular matrix: infinite, as PyTorch's
        _compare(*_both(lambda lib: lib.linalg.cond(_m(lib, [_SINGULAR, _M]), p)))


def test_compositions_values_gradients_and_nodes():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    t, system = rng.standard_normal((4, 6, 8, 3)), rng.standard_normal((2, 3, 6))
    b = rng.standard_normal((2, 3))
    calls = (lambda lib, v: lib.linalg.vander(v[0].real, N=4), lambda lib, v: lib.linalg.vander(v),
             lambda lib, v: lib.linalg.vecdot(v, v * 2), lambda lib, v: lib.linalg.vecdot(v, v, dim=0),
             lambda lib, v: lib.linalg.diagonal(lib.stack([v, v]), offset=1))
    for call in calls:
        def build(lib):
            v = lib.tensor(x, requires_grad=True)
            out = call(lib, v)
            (out.abs() ** 2).sum().backward()
            return out, v.grad, type(out.grad_fn).__name__
        ours, theirs = _both(build)
        assert_close(ours[0], theirs[0])
        assert_close(ours[1], theirs[1])
        assert ours[2] == theirs[2]
    for build in (lambda lib: lib.linalg.tensorinv(lib.tensor(t), ind=2),
                  lambda lib: lib.linalg.tensorsolve(lib.tensor(system), lib.tensor(b)),
                  lambda lib: lib.linalg.tensorsolve(lib.tensor(system).permute(2, 0, 1), lib.tensor(b), dims=(0,))):
        _compare(*_both(build))


def test_grad_fn_names_of_compositions():
    def build(lib):
        a = _m(lib).requires_grad_()
        names = [lib.linalg.tensorinv(a, ind=1), lib.linalg.tensorsolve(a, a[0]), lib.linalg.lu(a).P,
                 lib.linalg.lu_factor_ex(a).info, lib.lu_unpack(*lib.linalg.lu_factor(a)).P,
                 lib.linalg.solve_ex(a, a).result, lib.linalg.inv_ex(a).inverse, lib.inverse(a), a.inverse(),
                 lib.linalg.lstsq(a, a).rank, lib.orgqr(a, a[0])]
        return [type(t.grad_fn).__name__ if t.grad_fn is not None else t.requires_grad for t in names]
    ours, theirs = _both(build)
    assert ours == theirs


def test_legacy_functions_warn_once_as_pytorch():
    # Each library warns once per process: the same script runs in a fresh one for each
    import ast
    import subprocess
    import sys

    def warnings_of(lib):
        script = textwrap.dedent(f"""
            import warnings, {lib} as torch
            a = torch.eye(3, dtype=torch.float64)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                for _ in range(2):
                    lu, piv = torch.lu(a)
                    torch.lu_solve(a, lu, piv)
                    torch.triangular_solve(a, a)
            print(repr([str(w.message).split(" (Triggered internally")[0] for w in seen]))
        """)
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout

    ours, theirs = warnings_of("tapegrad"), warnings_of("torch")
    assert ours == theirs and len(ast.literal_eval(ours)) == 3


def test_results_keep_lapacks_column_major_layout():
    def strides(lib):
        a, b = _m(lib), lib.arange(6.0, dtype=lib.float64).reshape(3, 2)
        factor = lib.linalg.cholesky(a @ a.mT)
        lu, piv = lib.linalg.lu_factor(a)
        results = [lu, *lib.linalg.lu(a), lib.linalg.lu_solve(lu, piv, b),
                   lib.linalg.lu_solve(lu, piv, b.mT, left=False),
                   *lib.triangular_solve(b, a), lib.cholesky_solve(b, factor), lib.cholesky_inverse(factor),
                   *lib.linalg.eig(a), lib.linalg.lstsq(lib.stack([a, a]), b[None]).solution,
                   lib.linalg.householder_product(a, b[:, 0]), *lib.geqrf(a), lib.ormqr(a, b[:, 0], b)]
        return [tuple(t.stride()) for t in results]
    ours, theirs = _both(strides)
    assert ours == theirs
