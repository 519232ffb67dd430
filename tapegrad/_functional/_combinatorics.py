"""Tensors built from the combinations of others' elements: block_diag, cartesian_prod, combinations."""
import itertools

import numpy as np

from .._dispatch import apply
from .._ops import shape as S


def block_diag(*tensors):
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        from .._creation import zeros
        return zeros(1, 0)
    return apply(S.block_diag, *tensors)


def _check_vector(t):
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors):
    """As PyTorch: the "ij" meshgrid of the vectors, each grid flattened, stacked as columns."""
    for t in tensors:
        _check_vector(t)
    if len(tensors) == 1:
        return tensors[0]
    from ._joins import stack
    from ._rearrange import meshgrid
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """As PyTorch: the r-fold "ij" meshgrid of the vector, each grid's elements at strictly (or, with
    replacement, weakly) increasing indices selected, stacked as columns."""
    _check_vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    from .._creation import tensor
    from ._joins import stack
    from ._rearrange import meshgrid
    n = input.shape[0]
    grid = np.indices((n,) * r)
    ordered = np.less_equal if with_replacement else np.less
    mask = np.ones((n,) * r, bool)
    for a, b in itertools.pairwise(grid):
        mask &= ordered(a, b)
    mask = tensor(mask, device=input.device)
    return stack([g.masked_select(mask) for g in meshgrid(*[input] * r, indexing="ij")], 1)
