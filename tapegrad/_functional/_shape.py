"""Shape functions that view or reshape: reshape and view (of a dtype too), as_strided, flatten, transposes
and permutes, squeeze, unsqueeze, expand and broadcasting."""
import builtins

import numpy as np

from .. import _views
from .._dispatch import apply
from .. import _dtypes as D
from .._ops import bitcast as B, shape as S
from ._complex import is_conj, is_neg
from ._common import SCALAR_NAME, check_tensors, dims as _dims, numel_of, shape_args, sizes_argument, wrap_dim
from .._memory_format import contiguous_format as _contiguous_format
from .._arg_types import as_int, int_list, lone_error
from .._user_frames import warn_user

def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = numel_of(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    if numel_of(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _viewable(input, shape):
    if input._view is None:
        return True
    return _views.view_strides(tuple(input.shape), _views.strides(input), shape) is not None


def reshape(input, *shape, **named):
    if named or not shape:   # (the keyword form, or none: off the common path)
        shape = sizes_argument("reshape", "shape", shape, named)
    shape = _infer_shape(shape_args(shape, "shape", "reshape"), input.numel())
    # As PyTorch: a view of a contiguous tensor, an alias with new strides of a viewable one, else the
    # contiguous clone viewed (CloneBackward0 under UnsafeViewBackward0).
    if input._view is None or _views.is_contiguous(input):
        return apply(S.view, input, shape=shape)
    if _viewable(input, shape):
        return apply(S.reshape_alias, input, shape=shape)
    return apply(S.reshape_copy, input.clone(memory_format=_contiguous_format), shape=shape)


def view(input, *shape, dtype=None, size=None):
    if dtype is not None or (len(shape) == 1 and isinstance(shape[0], D.dtype)):
        return _view_dtype(input, dtype if dtype is not None else shape[0])
    if size is not None:
        shape = (size,)
    shape = _infer_shape(shape_args(shape, "size", "view"), input.numel())
    if not _viewable(input, shape):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(S.view, input, shape=shape)


def _view_dtype(input, dtype):
    """PyTorch's view(dtype): the same bytes read as `dtype`; with a different element size the last dim
    scales, under PyTorch's layout conditions. Not differentiable, as in PyTorch."""
    # (a view with a conjugate or negative bit: its bytes are not its values)
    if is_conj(input):
        raise RuntimeError("torch.Tensor.view is not supported for conjugate view tensors when converting to a "
                           "different dtype.")
    if is_neg(input):
        raise RuntimeError("torch.Tensor.view is not supported for tensors with negative bit set when converting "
                           "to a different dtype.")
    src, new = input.dtype.itemsize, dtype.itemsize
    if src != new:
        what = f"to view {SCALAR_NAME[input.dtype.name]} as {SCALAR_NAME[dtype.name]} (different element sizes)"
        if input.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        strides, offset = _views.layout(input)
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")
        if new > src:
            ratio = new // src
            if input.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {input.shape[-1]}")
            if offset % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got {offset}")
            for d, stride in enumerate(strides[:-1]):
                if stride % ratio:
                    raise RuntimeError(f"self.stride({d}) must be divisible by {ratio} {what}, but got {stride}")
    return apply(B.view_dtype, input, dtype=dtype.np.name, src=input.dtype.np.name)


def as_strided(input, size, stride, storage_offset=None):
    """PyTorch's as_strided: a view of the input's storage. Positions outside the input's own elements are
    read from its base (the storage's tensor), and the gradient then goes there."""
    size, stride = tuple(builtins.int(n) for n in size), tuple(builtins.int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    strides, offset = _views.layout(input)
    start = offset if storage_offset is None else builtins.int(storage_offset)
    if start < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {start}")
    raw, item = input._storage._raw, input.dtype.itemsize
    needed = 0 if 0 in size else (start + sum((n - 1) * s for n, s in zip(size, stride)) + 1) * item
    available = raw.size * raw.dtype.itemsize
    if needed > available:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {start}, and "
                           f"itemsize {item} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {available}. Pick sizes, strides and an offset inside the storage.")
    inside = np.isin(S.strided_positions(size, stride, start), S.strided_positions(tuple(input.shape), strides, offset))
    if not inside.all() and input._view is not None and input._view.base is not None:
        input = input._view.base
        strides, offset = _views.layout(input)
    return apply(S.as_strided, input, size=size, stride=stride, offset=start, source=(strides, offset))


def view_as(input, other):
    check_tensors("view_as", (other, "other", 1))
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    check_tensors("reshape_as", (other, "other", 1))
    return reshape(input, tuple(other.shape))


def ravel(input):
    return reshape(input, -1)


def flatten(input, start_dim=0, end_dim=-1):
    shape = tuple(input.shape)
    if not shape:
        return reshape(input, 1)
    s, e = wrap_dim(start_dim, len(shape)), wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return reshape(input, shape[:s] + (numel_of(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    shape = tuple(input.shape)
    d = wrap_dim(as_int(dim, "dim", "unflatten", 1), len(shape))
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(lone_error(sizes, "sizes", "unflatten", 2))
    sizes = list(int_list(sizes, "sizes", "unflatten", 2))
    if -1 in sizes and sizes.count(-1) == 1:
        known = numel_of(s for s in sizes if s != -1)
        sizes[sizes.index(-1)] = shape[d] // known if known else 0
    if numel_of(sizes) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shape[d]}) in the input tensor")
    return view(input, shape[:d] + tuple(sizes) + shape[d + 1:])


def transpose(input, dim0, dim1):
    n = input.ndim
    return apply(S.transpose, input, dim0=wrap_dim(dim0, n), dim1=wrap_dim(dim1, n))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D. "
                           "Use transpose(dim0, dim1) or .mT for batches of matrices.")
    return apply(S.t, input)


def adjoint(input):
    if input.ndim == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    if input.ndim == 0:
        warn_user("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning)
        return input.conj()
    return transpose(input, -2, -1).conj()


def permute(input, *dims, **named):
    dims = shape_args(sizes_argument("permute", "dims", dims, named), "dims", "permute")
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
                           f"to len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(S.permute, input, dims=dims)


def movedim(input, source, destination):
    n = input.ndim
    src = [wrap_dim(d, n) for d in (source if isinstance(source, (tuple, list)) else (source,))]
    dst = [wrap_dim(d, n) for d in (destination if isinstance(destination, (tuple, list)) else (destination,))]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    if n == 0:   # (dims 0 and -1 of a 0-d tensor: PyTorch returns an alias)
        return apply(S.alias, input)
    order = [d for d in range(n) if d not in src]
    perm = [None] * n
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(order)
    perm = tuple(p if p is not None else next(rest) for p in perm)
    return apply(S.permute, input, dims=perm)


moveaxis = movedim


def unsqueeze(input, dim):
    return apply(S.unsqueeze, input, dim=wrap_dim(dim, input.ndim + 1))


_ALL_DIMS = object()   # squeeze() without a dim (an explicit None fits none of PyTorch's overloads)


def squeeze(input, dim=_ALL_DIMS):
    # The static keeps the form of `dim` (None, int or tuple): PyTorch names the node by it.
    if dim is _ALL_DIMS:
        dim = None
    elif dim is None:
        raise TypeError("squeeze(): dim must be an int or a tuple of ints, not NoneType")
    else:
        dims = tuple(_dims(dim, input.ndim) or ()) if input.ndim else ()
        dim = (dims[0] if dims else 0) if isinstance(dim, builtins.int) else dims
    return apply(S.squeeze, input, dim=dim)


def expand(input, *sizes):
    return apply(S.expand, input, shape=_expanded_shape(tuple(input.shape), shape_args(sizes, "size", "expand"), input))


def _expanded_shape(shape, sizes, tensor=None):
    """The shape `expand(*sizes)` gives a tensor of `shape` (the tensor's, which PyTorch's error names), or
    PyTorch's error."""
    if len(sizes) < len(shape):
        from .._legacy import type_name
        name = type_name(tensor) if tensor is not None else "torch.FloatTensor"
        raise RuntimeError(f"expand({name}{{{list(shape)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    new = len(sizes) - len(shape)
    out = list(sizes)
    for i in reversed(range(len(sizes))):   # from the last dimension, as PyTorch's inferExpandGeometry
        want = sizes[i]
        if i < new:
            if want == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            continue
        have = shape[i - new]
        if want == -1:
            out[i] = have
        elif have != 1 and want != have:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
    return tuple(out)


def expand_as(input, other):
    check_tensors("expand_as", (other, "other", 1))
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, int_list(size, "size", "broadcast_to") if isinstance(size, (tuple, list)) else size)


def broadcast_shapes(*shapes):
    from .._size import Size
    shapes = [(s,) if isinstance(s, builtins.int) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape. "
                           f"Shapes: {shapes}") from None


def broadcast_tensors(*tensors):
    shape = tuple(broadcast_shapes(*(t.shape for t in tensors)))
    # (a tensor of the broadcast shape already is returned itself, as PyTorch's expand_outplace borrows it)
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)
