"""Pairwise distances between row sets (torch.cdist)."""
import builtins

from .._dispatch import apply
from .._ops import linalg as L
from ._common import SCALAR_NAME, check_tensors
from .._autocast import policy


@policy("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    check_tensors("cdist", (x1, "x1"), (x2, "x2"))
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {SCALAR_NAME[x.dtype.name]}. "
                               "Convert it first, e.g. x.float().")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"X1 and X2 must have the same dtype, but got: {SCALAR_NAME[x1.dtype.name]} and "
                           f"{SCALAR_NAME[x2.dtype.name]}. Convert one of them, e.g. x2.to(x1.dtype).")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    # Every compute_mode gives the same distances here: they are always computed from the differences.
    return apply(L.cdist, x1, x2, p=builtins.float(p))


def pdist(input, p=2):
    """The p-norm distances between the rows of a matrix, for each pair i < j (torch.pdist)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(L.pdist, input, p=builtins.float(p))
