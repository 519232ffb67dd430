"""Shape functions: reshapes and views, joins and splits, flips and triangles."""
import builtins

import numpy as np

from .. import _views
from .._dispatch import apply
from .. import _dtypes as D
from .._ops import bitcast as B, indexing as I, shape as S
from .._pointwise_layout import lay_out_like
from .._tensor import Tensor
from ._common import SCALAR_NAME, dims as _dims, numel_of, shape_args, wrap_dim
from .._autocast import policy
from .._memory_format import contiguous_format as _contiguous_format


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


def reshape(input, *shape):
    shape = _infer_shape(shape_args(shape), input.numel())
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
    shape = _infer_shape(shape_args(shape), input.numel())
    if not _viewable(input, shape):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(S.view, input, shape=shape)


def _view_dtype(input, dtype):
    """PyTorch's view(dtype): the same bytes read as `dtype`; with a different element size the last dim
    scales, under PyTorch's layout conditions. Not differentiable, as in PyTorch."""
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
    return view(input, tuple(other.shape))


def reshape_as(input, other):
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
    d = wrap_dim(dim, len(shape))
    sizes = list(sizes)
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
    return transpose(input, -2, -1).conj()


def permute(input, *dims):
    dims = shape_args(dims)
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


def squeeze(input, dim=None):
    # The static keeps the form of `dim` (None, int or tuple): PyTorch names the node by it.
    if dim is not None:
        dims = tuple(_dims(dim, input.ndim) or ()) if input.ndim else ()
        dim = (dims[0] if dims else 0) if isinstance(dim, builtins.int) else dims
    return apply(S.squeeze, input, dim=dim)


def expand(input, *sizes):
    return apply(S.expand, input, shape=_expanded_shape(tuple(input.shape), shape_args(sizes), input))


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
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, tuple(size))


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
    return tuple(expand(t, shape) for t in tensors)


# ---- joins --------------------------------------------------------------------------------------

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
    # PyTorch skips legacy empty 1-d tensors (shape [0]) when joining.
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
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
    return apply(S.cat, *kept, dim=d)


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


def atleast_1d(t):
    return reshape(t, 1) if t.ndim == 0 else t


def atleast_2d(t):
    return reshape(t, 1, 1) if t.ndim == 0 else (unsqueeze(t, 0) if t.ndim == 1 else t)


def atleast_3d(t):
    if t.ndim == 0:
        return reshape(t, 1, 1, 1)
    if t.ndim == 1:
        return reshape(t, 1, -1, 1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


# ---- splits (views of the input) ---------------------------------------------------------------

def _piece(input, op, d, start, stop, **static):
    spec = ((None, None, None),) * d + ((start, stop, None),)
    return apply(op, input, spec=spec, **static)


def split(tensor, split_size_or_sections, dim=0):
    d = wrap_dim(dim, tensor.ndim)
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, builtins.int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and size != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sections = [step] * (size // step) + ([size % step] if size % step else []) if step else [0]
    else:
        sections = [builtins.int(s) for s in split_size_or_sections]
        if builtins.sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sections}")
    with_sizes = {} if isinstance(split_size_or_sections, builtins.int) else {"with_sizes": True}
    out, start = [], 0
    for n in sections:
        out.append(_piece(tensor, S.split, d, start, start + n, **with_sizes))
        start += n
    return _numbered(out)


def _numbered(views):
    """The outputs of a function returning several views, numbered as PyTorch's (output_nr, errors)."""
    for k, v in enumerate(views):
        if v._view is not None and v._view.creation == "multi_output":
            v._view.output_nr = k
            if k and v._grad_fn is not None:   # for the version error once v is gone (Node.saved_description)
                v._grad_fn.view_nr = k
    return tuple(views)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input.shape[wrap_dim(dim, input.ndim)]
    return split(input, -(-size // chunks), dim)


def tensor_split(input, indices_or_sections, dim=0):
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(indices_or_sections, builtins.int):
        n = indices_or_sections
        bounds = [i * (size // n) + builtins.min(i, size % n) for i in range(n + 1)]
    else:
        bounds = [0] + [builtins.min(builtins.int(i), size) for i in indices_or_sections] + [size]
    # PyTorch slices each piece (SliceBackward0), where split and chunk record split nodes.
    return tuple(_slice(input, d, a, builtins.max(a, b)) for a, b in zip(bounds, bounds[1:]))


def unbind(input, dim=0):
    d = wrap_dim(dim, input.ndim)
    return _numbered([apply(S.unbind, input, spec=((None, None, None),) * d + (i,)) for i in range(input.shape[d])])


def narrow(input, dim, start, length):
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    start = builtins.int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start %= size if size else 1
    if start + length > size or length < 0:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, d, start, start + length)


def _slice(input, d, start, stop):
    spec, positions = I.dynamic_spec(((None, None, None),) * d + ((start, stop, None),), tuple(input.shape))
    return apply(I.slice_, input, *positions, spec=spec)


def select(input, dim, index):
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    spec, positions = I.dynamic_spec(((None, None, None),) * d + (builtins.int(index) % size,), tuple(input.shape))
    return apply(I.select, input, *positions, spec=spec)


# ---- copies -------------------------------------------------------------------------------------

def flip(input, *dims):
    d = _dims(shape_args(dims), input.ndim) or ()
    return lay_out_like(apply(S.flip, input, dims=d), input)   # (PyTorch's flip allocates with empty_like)


def fliplr(input):
    return flip(input, 1)


def flipud(input):
    return flip(input, 0)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, builtins.int) else tuple(shifts)
    if dims is None:
        return apply(S.roll, input, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, builtins.int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
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
        return apply(op, input, diagonal=builtins.int(diagonal))
    f.__name__ = op.name
    return f


tril = _triangle(S.tril)
triu = _triangle(S.triu)


def repeat(input, *sizes):
    sizes = shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return apply(S.repeat, input, repeats=sizes)


def tile(input, dims):
    dims = tuple(dims) if not isinstance(dims, builtins.int) else (dims,)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:  # repeat_interleave(repeats): indices repeated by their counts
        repeats, input = input, None
    if isinstance(repeats, Tensor) and repeats.ndim == 0:
        repeats = repeats.item()
    if isinstance(repeats, Tensor):
        counts = np.asarray(repeats._value)
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        total = builtins.int(counts.sum())  # the output size needs the counts on the host, as PyTorch syncs
        if input is None:
            from .._creation import arange
            input = arange(len(counts))
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
    return apply(S.diagonal, input, offset=builtins.int(offset), dim1=d1, dim2=d2)


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
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype. "
                               "Convert them first, e.g. t.to(tensors[0].dtype).")
    # 'xy' is 'ij' over the first two inputs swapped, with their grids swapped back.
    swap = indexing == "xy" and len(tensors) >= 2
    ordered = (tensors[1], tensors[0]) + tuple(tensors[2:]) if swap else tuple(tensors)
    shape = tuple(t.numel() for t in ordered)
    grids = [t.reshape(tuple(-1 if j == i else 1 for j in range(len(shape)))).expand(*shape)
             for i, t in enumerate(ordered)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
