"""tapegrad.linalg: PyTorch's torch.linalg. Gradients come from the op table like every other op."""
from ._functional._linalg import linalg_cross as cross, matmul, vdot  # noqa: F401
from ._functional._linalg_functions import (  # noqa: F401
    LinAlgError, inv, det, slogdet, solve, solve_triangular, cholesky, qr, svd, svdvals, eigh, eigvalsh, pinv,
    vector_norm, matrix_norm, linalg_norm as norm, multi_dot, matrix_exp)
