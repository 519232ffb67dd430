"""Shape functions that split a tensor into views of it: split, chunk, tensor_split, unbind, narrow, select."""
import builtins

from .._arg_types import as_int
from .._dispatch import apply
from .._grad_mode import no_grad
from .._ops import indexing as I, shape as S
from .._tensor import Tensor
from ._common import SCALAR_NAME, check_tensors, wrap_dim, wrap_dim_of_dims


def _piece(input, op, d, start, stop, **static):
    spec = ((None, None, None),) * d + ((start, stop, None),)
    return apply(op, input, spec=spec, **static)


def split(tensor, split_size_or_sections, dim=0):
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.ndim)
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, builtins.int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and size != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        # (an empty dim splits into one empty piece)
        sections = [step] * (size // step) + ([size % step] if size % step else []) if step and size else [0]
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
    chunks = as_int(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    size = input.shape[wrap_dim(dim, input.ndim)]
    return split(input, -(-size // chunks), dim)


def tensor_split(input, indices_or_sections, dim=0):
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):   # a 0-d count of sections or a vector of indices, int64 only
        given = indices_or_sections
        if given.dtype.name != "int64":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{SCALAR_NAME[given.dtype.name]}. Convert it with .long().")
        if given.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {given.ndim} dims")
        indices_or_sections = given.item() if given.ndim == 0 else given.tolist()
    if isinstance(indices_or_sections, builtins.int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        bounds = [i * (size // n) + builtins.min(i, size % n) for i in range(n + 1)]
    else:   # each piece a slice between two indices, a negative index counted from the end (as slicing does)
        bounds = [0] + [_slice_bound(builtins.int(i), size) for i in indices_or_sections] + [size]
    # PyTorch slices each piece (SliceBackward0), where split and chunk record split nodes.
    return tuple(_slice(input, d, a, builtins.max(a, b)) for a, b in zip(bounds, bounds[1:]))


def _slice_bound(i, size):
    return builtins.min(builtins.max(i + size if i < 0 else i, 0), size)


def unbind(input, dim=0):
    d = wrap_dim_of_dims(dim, input.ndim)
    return _numbered([apply(S.unbind, input, spec=((None, None, None),) * d + (i,)) for i in range(input.shape[d])])


def narrow(input, dim, start, length):
    # (a float start or length was truncated; PyTorch's parser refuses it, see _argument_errors)
    start = start.item() if isinstance(start, Tensor) else as_int(start, "start", "narrow", 3)
    length = as_int(length, "length", "narrow", 4)
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
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
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    spec, positions = I.dynamic_spec(((None, None, None),) * d + (builtins.int(index) % size,), tuple(input.shape))
    return apply(I.select, input, *positions, spec=spec)


# ---- the inverses of select, slice and diagonal -------------------------------------------------------


def _check_src(src, view):
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    return src


def _scatter_source(input, src, view):
    _check_src(src, view)
    return src if src.dtype is input.dtype else src.to(input.dtype)


def select_scatter(input, src, dim, index):
    check_tensors("select_scatter", (input, "input"), (src, "src"))
    d = wrap_dim(dim, input.ndim)
    with no_grad():
        view = select(input, d, index)   # (select's errors)
    index = builtins.int(index) % input.shape[d]
    return apply(S.select_scatter, input, _scatter_source(input, src, view), dim=d, index=index)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    check_tensors("slice_scatter", (input, "input"), (src, "src"))
    d = wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = input.shape[d]
    start, stop, _ = slice(start, end).indices(size)
    stop = builtins.max(start, stop)
    with no_grad():
        view = _slice(input, d, start, stop)[(slice(None),) * d + (slice(None, None, step),)]
    return apply(S.slice_scatter, input, _scatter_source(input, src, view), dim=d, start=start, stop=stop, step=step)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    check_tensors("diagonal_scatter", (input, "input"), (src, "src"))
    from ._rearrange import diagonal
    with no_grad():
        view = diagonal(input, offset, dim1, dim2)   # (diagonal's errors)
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    return apply(S.diagonal_scatter, input, _scatter_source(input, src, view), offset=offset, dim1=d1, dim2=d2)
