"""PyTorch's copies of views (view_copy, select_copy, ... narrow_copy, the unsafe splits) and as_strided_scatter.

Each copy calls its view function without recording (for its argument parsing and errors), then computes the
view's steps again as copy entries of the op table (_ops/copies.py) on the input: a new tensor whose node is
PyTorch's (ViewBackward0_copy...)."""
import builtins

from .. import _dtypes as D, _views
from .._dispatch import apply
from .._grad_mode import is_grad_enabled, no_grad
from .._ops import copies as C, indexing as I, shape as S
from . import _complex, _rearrange, _shape, _splits
from ._common import shape_args, wrap_dim


def _as_copy(input, view, copies=C.COPIES):
    """The view's steps beyond the input's own, applied to the input as copy entries (a view read from the
    input's base, as an as_strided outside the input, starts from that base)."""
    info = view._view
    own = input._view.steps if input._view is not None else ()
    steps, positions = info.steps, info.positions
    if steps[:len(own)] == own and info.base is (input._view.base if input._view is not None else input):
        used = builtins.sum(I.positions_in(static) for _, static in own)
        steps, positions, out = steps[len(own):], positions[used:], input
    else:
        out = info.base
    for op, static in steps:
        n = I.positions_in(static)
        out = apply(copies[op.name], out, *positions[:n], **dict(static))
        positions = positions[n:]
    return out


def _copying(view_fn, copies=C.COPIES):
    def copy(input, *args, **kwargs):
        with no_grad():
            view = view_fn(input, *args, **kwargs)
        if isinstance(view, tuple):
            return tuple(_as_copy(input, v, copies) for v in view)
        return _as_copy(input, view, copies)
    return copy


def _method(name):
    return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)


def view_copy(input, size=None, *, dtype=None):
    if isinstance(size, D.dtype) or (size is None and dtype is not None):
        # its elements reinterpreted: PyTorch records nothing
        with no_grad():
            return input.view(dtype or size).clone()
    return _copying(_method("view"))(input, size)


def t_copy(input):
    return _copying(_shape.t)(input)


def transpose_copy(input, dim0, dim1):
    return _copying(_shape.transpose)(input, dim0, dim1)


def permute_copy(input, dims):
    return _copying(_method("permute"))(input, dims)


def expand_copy(input, size, *, implicit=False):
    return _copying(_shape.expand)(input, *shape_args((size,)))


def squeeze_copy(input, dim=_shape._ALL_DIMS):
    return _copying(_method("squeeze"))(input, *(() if dim is _shape._ALL_DIMS else (dim,)))


def unsqueeze_copy(input, dim):
    return _copying(_method("unsqueeze"))(input, dim)


def select_copy(input, dim, index):
    return _copying(_splits.select)(input, dim, index)


def slice_copy(input, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = wrap_dim(dim, input.ndim)
    start, stop, _ = builtins.slice(start, end).indices(input.shape[d])
    spec, positions = I.dynamic_spec(((None, None, None),) * d + ((start, builtins.max(start, stop), step),),
                                     tuple(input.shape))
    return apply(C.COPIES[I.slice_.name], input, *positions, spec=spec)


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    return _copying(_rearrange.diagonal)(input, offset, dim1, dim2)


def alias_copy(input):
    return _copying(lambda x: apply(S.alias, x))(input)


def detach_copy(input):
    return apply(C.detach_copy, input)


def unbind_copy(input, dim=0):
    return _copying(_splits.unbind)(input, dim)


def split_copy(input, split_size, dim=0):
    return _copying(_splits.split)(input, split_size, dim)


def split_with_sizes_copy(input, split_sizes, dim=0):
    return _copying(_splits.split)(input, list(split_sizes), dim)


def unfold_copy(input, dimension, size, step):
    return _copying(_method("unfold"))(input, dimension, size, step)


def as_strided_copy(input, size, stride, storage_offset=None):
    return _copying(_shape.as_strided)(input, size, stride, storage_offset)


def view_as_real_copy(input):
    return _copying(_complex.view_as_real)(input)


def view_as_complex_copy(input):
    if input.requires_grad and is_grad_enabled():
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _copying(_complex.view_as_complex)(input)


def narrow_copy(input, dim, start, length):
    return _copying(_splits.narrow, {"slice": C.narrow_copy})(input, dim, start, length)


def split_with_sizes(input, split_sizes, dim=0):
    return _splits.split(input, list(split_sizes), dim)


def unsafe_split(input, split_size, dim=0):
    """split's pieces as new tensors (UnsafeSplitBackward0): PyTorch's share the input's memory without being
    views, for callers that never write to them; these hold copies, so writing to them leaves the input as
    it is."""
    return _copying(_splits.split, {"split": C.unsafe_split})(input, split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _copying(_splits.split, {"split": C.unsafe_split})(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0):
    return _copying(_splits.chunk, {"split": C.unsafe_split})(input, chunks, dim)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src written where as_strided(size, stride, storage_offset) of that copy reads."""
    if input.requires_grad and is_grad_enabled() and not input.is_contiguous():
        raise RuntimeError("as_strided_scatter is currently only supported for contiguous inputs")
    with no_grad():
        copy = input.clone()
        view = _shape.as_strided(copy, size, stride, 0 if storage_offset is None else storage_offset)
    src = _splits._scatter_source(input, src, view)
    static = dict(view._view.steps[-1][1])
    return apply(S.as_strided_scatter, input, src, size=static["size"], stride=static["stride"],
                 offset=static["offset"], source=_views.layout(copy))
