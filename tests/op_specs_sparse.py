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
        Case(lambda lib, i, v: lib.sparse.sum(_coo(lib, i, v, (3, 3, 2)), (0, 1)), A(DUPLICATES), F(4, 2))),
}
