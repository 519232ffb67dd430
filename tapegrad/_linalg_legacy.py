"""PyTorch's top-level linear algebra outside torch.linalg (torch.lu, lu_unpack, lu_solve, triangular_solve,
cholesky_solve, cholesky_inverse, geqrf, orgqr, ormqr, inverse), the removed ones that raise (matrix_rank,
lstsq, eig, symeig, solve), and their Tensor methods."""
from ._functional import _linalg_functions as _f, _linalg_general as _g, _linalg_lu as _lu, _linalg_removed as _r
from ._functional._out import with_out as _with_out
from ._methods import _method
from ._tensor import Tensor

lu = _lu.lu_legacy   # (its out= is written by itself: 2 or 3 results)
lu_unpack = _with_out(_lu.lu_unpack, "lu_unpack()")
lu_solve = _with_out(_lu.lu_solve_legacy, "linalg_lu_solve()")
triangular_solve = _with_out(_lu.triangular_solve, "triangular_solve()")
cholesky_solve = _with_out(_lu.cholesky_solve, "cholesky_solve()")
cholesky_inverse = _with_out(_lu.cholesky_inverse, "cholesky_inverse()")
geqrf = _with_out(_g.geqrf, "geqrf()")
orgqr = _with_out(_g.orgqr, "linalg_householder_product()")
ormqr = _with_out(_g.ormqr, "ormqr()")
inverse = _with_out(_f.inv, "linalg_inv_ex()")
matrix_rank, lstsq, eig, symeig, solve = _r.matrix_rank, _r.lstsq, _r.eig, _r.symeig, _r.solve

# (the method returns a plain tuple, get_infos or not)
Tensor.lu = lambda self, pivot=True, get_infos=False: tuple(_lu.lu_legacy(self, pivot, get_infos))
for _name, _fn in (("lu_solve", _lu.lu_solve_legacy), ("triangular_solve", _lu.triangular_solve),
                   ("cholesky_solve", _lu.cholesky_solve), ("cholesky_inverse", _lu.cholesky_inverse),
                   ("geqrf", _g.geqrf), ("orgqr", _g.orgqr), ("ormqr", _g.ormqr),
                   ("lstsq", _r.lstsq), ("eig", _r.eig), ("symeig", _r.symeig), ("solve", _r.solve)):
    setattr(Tensor, _name, _method(_fn, _name))
