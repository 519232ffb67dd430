"""tapegrad.linalg: PyTorch's torch.linalg. Gradients come from the op table like every other op."""
from ._functional._linalg import (  # noqa: F401
    LinAlgError, inv, det, slogdet, solve, solve_triangular, cholesky, qr, svd, svdvals, eigh, eigvalsh, pinv,
    vector_norm, matrix_norm, linalg_norm as norm, linalg_cross as cross, matmul, vdot, multi_dot, matrix_exp)
