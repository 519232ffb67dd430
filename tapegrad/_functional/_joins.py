"""Shape functions that join tensors: cat, stack and their h/v/d/column forms, atleast_1d/2d/3d."""
from .._dispatch import apply
from .._ops import shape as S
from .._tensor import Tensor
from ._common import wrap_dim
from .._autocast import policy
from ._shape import reshape, unsqueeze


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"torch.{name}(): expected a non-empty list of Tensors")
    return tensors


@policy("cat")
def cat(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "cat")
    # PyTorch skips legacy empty 1-d tensors (shape [0]) in its shape checks and when joining (S.cat).
    kept = [t for t in tensors if not S.legacy_empty(t.shape)] or tensors[:1]
    ref = kept[0]
    if ref.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(dim, ref.ndim)
    for i, x in enumerate(kept):
        if x.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and {x.ndim}")
        for k in range(ref.ndim):
            if k != d and x.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{ref.shape[k]} but got size {x.shape[k]} for tensor number {i} in the list.")
    return apply(S.cat, *tensors, dim=d)


concat = concatenate = cat


@policy("stack")
def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    for i, x in enumerate(tensors):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(x.shape)} at entry {i}")
    return apply(S.stack, *tensors, dim=wrap_dim(dim, tensors[0].ndim + 1))


def hstack(tensors, *, out=None):
    tensors = [atleast_1d(t) for t in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors, *, out=None):
    return cat([atleast_2d(t) for t in _tensor_list(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors, *, out=None):
    return cat([atleast_3d(t) for t in _tensor_list(tensors, "dstack")], 2)


def column_stack(tensors, *, out=None):
    return hstack([t.reshape(-1, 1) if t.ndim <= 1 else t for t in _tensor_list(tensors, "column_stack")])


def _at_least(name, one):
    """torch.atleast_Nd: of one tensor, a tensor; of several, or of a list or tuple of them, a tuple."""
    def f(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return one(tensors[0])
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        elif len(tensors) == 1:
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(tensors[0]).__name__}), but expected one of:\n * (Tensor input)\n * (tuple "
                            "of Tensors tensors)\n")
        for k, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(t).__name__}")
        return tuple(one(t) for t in tensors)
    f.__name__ = name
    return f


atleast_1d = _at_least("atleast_1d", lambda t: reshape(t, 1) if t.ndim == 0 else t)
atleast_2d = _at_least("atleast_2d", lambda t: reshape(t, 1, 1) if t.ndim == 0 else
                       (unsqueeze(t, 0) if t.ndim == 1 else t))
atleast_3d = _at_least("atleast_3d", lambda t: reshape(t, 1, 1, 1) if t.ndim == 0 else
                       reshape(t, 1, -1, 1) if t.ndim == 1 else (unsqueeze(t, -1) if t.ndim == 2 else t))
