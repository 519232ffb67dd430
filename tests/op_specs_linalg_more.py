"""Specs for the LU, Cholesky-factor and triangular solvers, eig, lstsq, the Householder products and the LDL
factorization (_ops/linalg_lu.py, _ops/linalg_general.py, _ops/linalg_ldl.py); see op_specs.py for the format."""
from op_specs import A, C, F, Case, cases


def _shifted(lib, a, shift=4.0):
    # a well-conditioned matrix whose LU pivots do not change within a finite-difference step
    return a + shift * lib.eye(a.shape[-1], dtype=a.dtype)


def _eig_invariants(result):
    # the eigenvectors are defined up to a phase each: |V|^2 does not depend on it (PyTorch's gradient of eig
    # is only defined for such losses)
    values, vectors = result
    return values, (vectors * vectors.conj()).real


def _lu_factor(lib, a, shift=4.0):
    return lib.linalg.lu_factor(_shifted(lib, a, shift))


SPECS = {
    "lu_factor": cases(Case(lambda lib, a: lib.linalg.lu_factor_ex(a), F(2, 3, 4))),     # wide, batched
    "lu": cases(Case(lambda lib, a: lib.linalg.lu(a), F(2, 4, 3))),                      # tall
    "lu_unpack": cases(Case(lambda lib, a, p: lib.lu_unpack(a, p), F(3, 3), A([3, 2, 3], "int32"))),
    "lu_permutation": cases(Case(lambda lib, p: lib.lu_unpack(lib.zeros(2, 4, 4, dtype=lib.float64), p).P,
                                 A([[2, 4, 3, 4], [1, 2, 4, 4]], "int32"), grad=False)),
    "lu_solve": cases(Case(lambda lib, a, b: lib.linalg.lu_solve(*_lu_factor(lib, a), b, adjoint=True), C(3, 3),
                           C(2, 3, 2)),
                      Case(lambda lib, a, b: lib.linalg.lu_solve(*_lu_factor(lib, a), b, left=False), F(3, 3),
                           F(4, 3))),
    "triangular_solve": cases(Case(lambda lib, b, a: b.triangular_solve(_shifted(lib, a), upper=False, transpose=True),
                                   F(2, 3, 2), F(3, 3))),
    # PyTorch's gradient of the factor is over every element, as if it were a full matrix, while the value
    # reads one triangle: finite differences hold for a triangular factor (the other triangle never read); a
    # complex factor has a real diagonal, as a Cholesky factor
    "cholesky_solve": cases(Case(lambda lib, b, a: b.cholesky_solve(_shifted(lib, a.triu()), upper=True), F(2, 3, 1),
                                 F(3, 3)),
                            Case(lambda lib, b, a: lib.cholesky_solve(b, _shifted(lib, a.triu(1))), C(3, 2), C(3, 3),
                                 fd=False)),
    "cholesky_inverse": cases(Case(lambda lib, a: lib.cholesky_inverse(_shifted(lib, a.tril())), F(3, 3)),
                              Case(lambda lib, a: a.cholesky_inverse(upper=True), F(2, 3, 3, low=1.0, high=2.0),
                                   fd=False)),
    "eig": cases(Case(lambda lib, a: _eig_invariants(lib.linalg.eig(a)), F(3, 3))),
    "eigvals": cases(Case(lambda lib, a: lib.linalg.eigvals(a), C(3, 3))),
    "lstsq": cases(Case(lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsd"), F(4, 3), F(4, 2)),
                   Case(lambda lib, a, b: lib.linalg.lstsq(a, b), C(2, 4, 3), C(1, 4, 2))),   # gelsy, broadcast
    "householder_product": cases(Case(lambda lib, a, tau: lib.linalg.householder_product(a, tau), F(4, 3), F(2))),
    "ormqr": cases(Case(lambda lib, a, tau, c: lib.ormqr(a, tau, c), F(4, 3), F(3), F(4, 2)),
                   Case(lambda lib, a, tau, c: a.ormqr(tau, c, left=False, transpose=True), C(3, 3), C(3), C(2, 3))),
    "geqrf": cases(Case(lambda lib, a: lib.geqrf(a), C(2, 4, 3), grad=False, fd=False)),
    # (no derivative: see tests/test_no_derivative.py; more cases in tests/test_linalg_ldl.py)
    "ldl_factor": cases(Case(lambda lib, a: lib.linalg.ldl_factor_ex(a + a.mT), F(2, 3, 3), grad=False, fd=False),
                        Case(lambda lib, a: lib.linalg.ldl_factor(a + a.mH, hermitian=True), C(3, 3), grad=False,
                             fd=False)),
    "ldl_solve": cases(Case(lambda lib, a, b: lib.linalg.ldl_solve(*lib.linalg.ldl_factor(a + a.mT), b), F(3, 3),
                            F(2, 3, 2), grad=False, fd=False)),
}
