"""Specs for the sparse COO kernels (tapegrad/_ops/sparse.py); see op_specs.py for the format. A sparse tensor
is built inside each case from fixed indices and drawn values, so its gradient reaches those values (masked to
the pattern, as PyTorch's sparse_coo_tensor backward gives)."""
from op_specs import A, F, Case, cases

ROWS_COLS = [[0, 1, 1, 2], [2, 0, 2, 1]]       # a 3 x 3 pattern
DUPLICATES = [[1, 0, 1, 1], [0, 0, 0, 2]]      # uncoalesced: (1, 0) twice


def _coo(lib, i, v, size=(3, 3)):
    return lib.sparse_coo_tensor(i, v, size, check_invariants=True)


SPECS = {
    "sparse_coo_tensor": cases(Case(lambda lib, i, v: _coo(lib, i, v).to_dense() * 1, A(ROWS_COLS), F(4))),
    "sparse_mm": cases(Case(lambda lib, i, v, d: lib.sparse.mm(_coo(lib, i, v), d), A(ROWS_COLS), F(4), F(3, 2)),
                       Case(lambda lib, i, v, d: lib.mm(_coo(lib, i, v), d), A(DUPLICATES), F(4), F(3, 5)),
                       Case(lambda lib, i, v, d: _coo(lib, i, v) @ d, A(ROWS_COLS), F(4), F(3))),
    "to_dense": cases(Case(lambda lib, i, v: _coo(lib, i, v, (3, 3, 2)).to_dense(), A(DUPLICATES), F(4, 2))),
    "to_sparse": cases(Case(lambda lib, x: lib.sparse.mm(x.to_sparse(), x.mT), F(3, 4)),
                       Case(lambda lib, x: lib.sparse.sum(x.to_sparse(1), 0), F(3, 2))),
    "sparse_values": cases(Case(lambda lib, i, v: _coo(lib, i, v).coalesce().values() * 2, A(ROWS_COLS), F(4))),
    "sparse_segment_sum": cases(
        Case(lambda lib, i, v: _coo(lib, i, v).coalesce().values(), A(DUPLICATES), F(4)),
        Case(lambda lib, i, v: lib.sparse.sum(_coo(lib, i, v), 1).to_dense(), A(DUPLICATES), F(4)),
        Case(lambda lib, i, v: lib.sparse.sum(_coo(lib, i, v, (3, 3, 2)), (0, 1, 2)), A(DUPLICATES), F(4, 2)),
        Case(lambda lib, i, v: lib.sparse.sum(_coo(lib, i, v, (3, 3, 2)), (0, 1)), A(DUPLICATES), F(4, 2)),
        Case(lambda lib, i, v: _coo(lib, i, v, (3, 3, 2)).sum((0, 1), keepdim=True), A(DUPLICATES), F(4, 2))),
    # sparse + sparse merges the entry lists; an operand made by to_sparse() takes the gradient on the
    # result's pattern (sparse_route)
    "sparse_add": cases(
        Case(lambda lib, i, v, w: (_coo(lib, i, v) + _coo(lib, ROWS_COLS, w)).to_dense(), A(DUPLICATES), F(4), F(4)),
        Case(lambda lib, i, v, w: lib.sub(_coo(lib, i, v, (3, 3, 2)), _coo(lib, i, w, (3, 3, 2)).coalesce(),
                                          alpha=2).to_dense(), A(DUPLICATES), F(4, 2), F(4, 2))),
    # operands made by to_sparse() take their gradient through routes, on the pattern PyTorch gives them
    "sparse_route": cases(
        Case(lambda lib, x, i, w: (x.to_sparse() - _coo(lib, i, w)).to_dense(), F(3, 3), A(DUPLICATES), F(4)),
        Case(lambda lib, x, y, d: lib.mm(x.to_sparse() + y.to_sparse(), d), F(3, 3), F(3, 3), F(3, 2)),
        Case(lambda lib, x, i, w: (_coo(lib, i, w) @ x.to_sparse()).to_dense(), F(3, 2), A(ROWS_COLS), F(4)),
        Case(lambda lib, x, y: lib.mm(x.to_sparse(), y.to_sparse()).to_dense(), F(2, 3), F(3, 2)),
        Case(lambda lib, d, x: lib.mm(d, x.to_sparse()), F(2, 3), F(3, 2))),
    "sparse_sparse_mm": cases(
        Case(lambda lib, i, v, w: lib.sparse.mm(_coo(lib, i, v), _coo(lib, ROWS_COLS, w)).to_dense(),
             A(DUPLICATES), F(4), F(4)),
        Case(lambda lib, i, v, w: (_coo(lib, i, v) @ _coo(lib, ROWS_COLS, w)).to_dense(), A(ROWS_COLS), F(4), F(4))),
    # addmv with a compressed matrix: one AddmvBackward0; the matrix made by to_sparse_csr() gets a dense gradient
    "sparse_addmv": cases(
        Case(lambda lib, c, x, v: lib.addmv(c, x.to_sparse_csr(), v, beta=0.5, alpha=2), F(3), F(3, 4), F(4)),
        Case(lambda lib, c, x, v: lib.addmv(c, x.to_sparse_csc(), v), F(1), F(3, 4), F(4))),
    "dense_sparse_mm": cases(
        Case(lambda lib, d, i, v: d @ _coo(lib, i, v), F(2, 3), A(DUPLICATES), F(4)),
        Case(lambda lib, d, i, v: d @ _coo(lib, i, v), F(3), A(ROWS_COLS), F(4))),
}
