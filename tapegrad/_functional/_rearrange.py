"""Shape functions that rearrange the input's elements into a new tensor: flips, rolls, rotations, triangles,
repeats, diagonals, meshgrid."""
import builtins

import numpy as np

from .._arg_types import as_int, int_lists
from .._dispatch import apply
from .._ops import shape as S
from .._pointwise_layout import lay_out_like
from .._tensor import Tensor
from ._common import SCALAR_NAME, dims as _dims, shape_args, sizes_argument, wrap_dim
from ._shape import expand, flatten, unsqueeze, view
from .._user_frames import warn_user


def flip(input, *dims, **named):
    dims = sizes_argument("flip", "dims", dims, named)
    d = _dims(shape_args(dims, "dims", "flip"), input.ndim) or ()
    return lay_out_like(apply(S.flip, input, dims=d), input)   # (PyTorch's flip allocates with empty_like)


def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def roll(input, shifts, dims=None):
    # (each a list or a lone int: PyTorch's int[1] lists; a bool or a float is refused in its words)
    if dims is None:
        shifts, = int_lists("roll", [("shifts", shifts, 1)])
        return apply(S.roll, input, shifts=shifts, dims=None)
    shifts, dims = int_lists("roll", [("shifts", shifts, 1), ("dims", dims, 2)])
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if input.numel() == 0 and len(dims) == 1:   # (PyTorch's roll clones an empty input before it reads the dim)
        return apply(S.roll, input, shifts=shifts, dims=(0,))
    return apply(S.roll, input, shifts=shifts, dims=tuple(wrap_dim(d, input.ndim) for d in dims))


def rot90(input, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return apply(S.rot90, input, k=builtins.int(k) % 4, dims=(d0, d1))   # one node, as PyTorch's


def _triangle(op):
    def f(input, diagonal=0, *, out=None):
        if input.ndim < 2:
            raise RuntimeError(f"{op.name}: input tensor must have at least 2 dimensions")
        return apply(op, input, diagonal=as_int(diagonal, "diagonal"))
    f.__name__ = op.name
    return f


tril = _triangle(S.tril)
triu = _triangle(S.triu)


def repeat(input, *sizes):
    sizes = shape_args(sizes, "repeats", "repeat")
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    out = [n * r for n, r in zip(shape, sizes)]
    if builtins.min(out, default=0) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(out)}: {out}")
    return apply(S.repeat, input, repeats=sizes)


def tile(input, dims):
    dims = shape_args(tuple(dims) if isinstance(dims, (tuple, list)) else (dims,), "dims", "tile")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        repeats, input = input, None
    if isinstance(repeats, Tensor):
        # PyTorch's kernel reads counts of an index dtype only (a 0-d count too: it expands it to a vector)
        if repeats.dtype.name not in ("int32", "int64"):
            raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                      f"'{SCALAR_NAME[repeats.dtype.name]}'. Pass integer counts, e.g. "
                                      "repeats.long().")
        if repeats.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    elif isinstance(repeats, builtins.bool):
        raise TypeError("repeat_interleave() received an invalid combination of arguments - got (Tensor, bool), "
                        "but expected one of:\n * (Tensor input, Tensor repeats, int dim = None, *, int output_size "
                        "= None)\n * (Tensor repeats, *, int output_size = None)\n * (Tensor input, int repeats, "
                        "int dim = None, *, int output_size = None)\nPass the count as an int.")
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = repeats.item()
    if isinstance(repeats, Tensor):
        counts = np.asarray(repeats._value)
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        total = builtins.int(counts.sum())  # the output size needs the counts on the host, as PyTorch syncs
        if input is None:
            from .._creation import arange
            input = arange(len(counts), dtype=repeats.dtype)   # the indices in the counts' dtype, as PyTorch
    else:
        rep = builtins.int(repeats)
        if rep < 0:
            raise RuntimeError("repeats can not be negative")
        return _repeat_each(input, rep, dim)
    d = None if dim is None else wrap_dim(dim, input.ndim)
    if total is None:
        total = rep * (input.numel() if d is None else input.shape[d])
    return apply(S.repeat_interleave, input, repeats if isinstance(repeats, Tensor) else rep, dim=d, total=total)


def _repeat_each(input, rep, dim):
    # As PyTorch for a count: each element unsqueezed, expanded `rep` times, copied and viewed back.
    if dim is None:
        input, d = flatten(input), 0
    else:
        d = wrap_dim(dim, input.ndim)
    x = unsqueeze(input, d + 1)
    shape = list(x.shape)
    shape[d + 1] = rep
    out = tuple(input.shape[:d]) + (input.shape[d] * rep,) + tuple(input.shape[d + 1:])
    return view(expand(x, tuple(shape)).clone(), out)


def diagonal(input, offset=0, dim1=0, dim2=1):
    n = input.ndim
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(S.diagonal, input, offset=as_int(offset, "offset"), dim1=d1, dim2=d2)   # (a float was truncated)


def diag(input, diagonal=0, *, out=None):
    if input.ndim not in (1, 2):
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.ndim}D")
    return apply(S.diag, input, diagonal=builtins.int(diagonal))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input.ndim + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(S.diag_embed, input, offset=builtins.int(offset), dim1=d1, dim2=d2)


def numel(input):
    return input.numel()


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warn_user("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                  UserWarning)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype. Convert them first, e.g. "
                               "t.to(tensors[0].dtype).")
    # 'xy' is 'ij' over the first two inputs swapped, with their grids swapped back.
    swap = indexing == "xy" and len(tensors) >= 2
    ordered = (tensors[1], tensors[0]) + tuple(tensors[2:]) if swap else tuple(tensors)
    shape = tuple(t.numel() for t in ordered)
    grids = [t.reshape(tuple(-1 if j == i else 1 for j in range(len(shape)))).expand(*shape)
             for i, t in enumerate(ordered)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
