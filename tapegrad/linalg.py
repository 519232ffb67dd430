"""tapegrad.linalg: PyTorch's torch.linalg. Gradients come from the op table like every other op.

Each function takes out= as PyTorch's does; its errors name the aten op PyTorch's out= overload runs.
"""
from ._functional import _compositions, _linalg as _products, _linalg_functions as _f
from ._functional._linalg_functions import LinAlgError  # noqa: F401
from ._functional._out import with_out as _with_out

cross = _with_out(_products.linalg_cross, "linalg_cross()")
matmul = _with_out(_products.matmul, "matmul()")
vdot = _with_out(_products.vdot, "vdot()")
inv = _with_out(_f.inv, "linalg_inv_ex()")
det = _with_out(_f.det, "_linalg_det()")
slogdet = _with_out(_f.linalg_slogdet, "_linalg_slogdet()")
solve = _with_out(_f.solve, "_linalg_solve_ex()")
solve_triangular = _with_out(_f.solve_triangular, "linalg_solve_triangular()")
cholesky = _with_out(_f.linalg_cholesky, "linalg_cholesky_ex()")
qr = _with_out(_f.qr, "linalg_qr()")
svd = _with_out(_f.svd, "_linalg_svd()")
svdvals = _with_out(_f.svdvals, "_linalg_svd()")
eigh = _with_out(_f.eigh, "_linalg_eigh()")
eigvalsh = _with_out(_f.eigvalsh, "_linalg_eigh()")
pinv = _with_out(_f.pinv, "linalg_pinv()")
vector_norm = _with_out(_f.vector_norm, "linalg_vector_norm()")
multi_dot = _with_out(_f.multi_dot, "mm()")
# PyTorch composes these from other ops and copies the result into out (CopyBackwards)
matrix_norm = _with_out(_f.matrix_norm, "linalg_matrix_norm()", composite=True)
norm = _with_out(_f.linalg_norm, "linalg_norm()", composite=True)
matrix_exp = _f.matrix_exp   # (no out=, as in PyTorch)
matrix_power = _with_out(_compositions.matrix_power, "matmul()")

from ._functional import _linalg_general as _g, _linalg_lu as _lu, _linalg_solvers as _s  # noqa: E402

lu_factor = _with_out(_lu.lu_factor, "linalg_lu_factor_ex()")
lu_factor_ex = _with_out(_lu.lu_factor_ex, "linalg_lu_factor_ex()")
lu = _with_out(_lu.lu, "linalg_lu()")
lu_solve = _with_out(_lu.lu_solve, "linalg_lu_solve()")

from ._functional import _linalg_ldl as _ldl  # noqa: E402

ldl_factor = _with_out(_ldl.ldl_factor, "linalg_ldl_factor_ex()")
ldl_factor_ex = _with_out(_ldl.ldl_factor_ex, "linalg_ldl_factor_ex()")
ldl_solve = _with_out(_ldl.ldl_solve, "linalg_ldl_solve()")
solve_ex = _with_out(_s.solve_ex, "_linalg_solve_ex()")
inv_ex = _with_out(_s.inv_ex, "linalg_inv_ex()")
cholesky_ex = _with_out(_s.cholesky_ex, "linalg_cholesky_ex()")
lstsq = _with_out(_s.lstsq, "linalg_lstsq()")
eig = _with_out(_g.eig, "linalg_eig()")
eigvals = _with_out(_g.eigvals, "linalg_eigvals()")
householder_product = _with_out(_g.householder_product, "linalg_householder_product()")
vecdot = _with_out(_g.vecdot, "sum()")
matrix_rank = _with_out(_s.matrix_rank, "linalg_matrix_rank()", composite=True)
cond = _with_out(_s.cond, "linalg_cond()", composite=True)
tensorinv = _with_out(_s.tensorinv, "linalg_tensorinv()", composite=True)
tensorsolve = _with_out(_s.tensorsolve, "linalg_tensorsolve()", composite=True)
vander, diagonal = _g.vander, _g.diagonal   # (no out=, as in PyTorch)
