"""Products PyTorch keeps beside matmul: addr, addbmm, chain_matmul and torch.inverse."""
import builtins

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import linalg as L
from ._common import check_tensors, result_dtype, wrap_dim
from ._linalg import _check_addmm
from ._linalg_functions import inv, multi_dot
from ._shape import _expanded_shape
from .._user_frames import warn_user


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2), one node (AddrBackward0); the operands promote together."""
    check_tensors("addr", (input, "input"), (vec1, "vec1"), (vec2, "vec2"))
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    dtype = result_dtype(input, vec1, vec2)
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, builtins.bool) and dtype is not D.bool_:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if isinstance(s, (builtins.float, builtins.complex)) and not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    _expanded_shape(tuple(input.shape), (vec1.shape[0], vec2.shape[0]), input)   # (the input broadcasts)
    return apply(L.addr, input, vec1, vec2, beta=beta, alpha=alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * the sum of batch1[i] @ batch2[i], one node (AddbmmBackward0)."""
    check_tensors("addbmm", (input, "input"), (batch1, "batch1"), (batch2, "batch2"))
    # PyTorch expands the input to the product's shape first, reading the batches' sizes (IndexError if absent)
    rows, cols = batch1.shape[wrap_dim(1, batch1.ndim)], batch2.shape[wrap_dim(2, batch2.ndim)]
    _expanded_shape(tuple(input.shape), (rows, cols), input)   # (the input broadcasts)
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    if batch1.shape[0]:
        _check_addmm(input, batch1[0], batch2[0])   # (the dtypes, as PyTorch's addmm_ of each batch)
    return apply(L.addbmm, input, batch1, batch2, beta, alpha)


def chain_matmul(*matrices, out=None):
    warn_user("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
              "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
              "parameters.", UserWarning)
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def inverse(input, *, out=None):
    return inv(input)
