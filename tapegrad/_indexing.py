"""Tensor.__getitem__ / __setitem__: parse PyTorch index expressions into a static spec + index arrays."""
import builtins
import functools
import numbers
import operator

import jax.numpy as jnp
import numpy as np

from . import _dtypes as D, _value_checks
from ._dispatch import apply
from ._functional._common import sized_by
from ._index_read import index_values, list_index
from ._ops import indexing as I
from ._tensor import Tensor
from ._user_frames import warn_user


def _bounds_error(i, dim, size):
    return IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")


def _tensor_index_error(i, dim, size):
    # PyTorch's index kernel has its own words for an empty dimension (an int index keeps the general ones)
    return IndexError("index is out of bounds for dimension with size 0") if size == 0 else _bounds_error(i, dim, size)


class BoolScalarIndex(Exception):
    """parse met a 0-d boolean index: PyTorch unsqueezes the tensor there and indexes the new dim with [0]
    (True) or [] (False), which one index tuple cannot say (see _with_bool_scalars)."""


def parse(t, index):
    """(spec, arrays, kind): spec is hashable; arrays are jax index arrays; kind names the view op."""
    lone = index
    if not isinstance(index, tuple):
        index = (index,)
    shape = t.shape
    ndim = len(shape)
    consumed = builtins.sum(_consumes(x) for x in index)
    if consumed > ndim:
        raise _too_many_indices(lone, ndim)
    spec, arrays = [], []
    dim = 0
    kind = "alias"
    for x in index:
        if x is Ellipsis:
            if Ellipsis in spec:   # PyTorch lets each `...` skip the dims the others leave: what is left of them
                skipped = builtins.min(ndim - consumed, ndim - dim)
                spec += [(None, None, None)] * skipped
                dim += skipped
                continue
            spec.append(Ellipsis)
            dim += ndim - consumed
        elif x is None:
            spec.append(None)
            kind = "unsqueeze" if kind == "alias" else kind
        elif isinstance(x, builtins.bool):
            raise BoolScalarIndex
        elif isinstance(x, (builtins.int, np.integer)):
            size = shape[dim]
            if not -size <= x < size:
                raise _bounds_error(x, dim, size)
            spec.append(builtins.int(x))
            dim += 1
            kind = "select" if kind != "index" else kind
        elif isinstance(x, slice):
            spec.append(tuple(None if v is None else builtins.int(v) for v in (x.start, x.stop, x.step)))
            if x.step is not None and x.step <= 0:
                raise ValueError("slice step cannot be zero" if x.step == 0 else "step must be greater than zero")
            dim += 1
            if kind not in ("select", "index") and x != slice(None):
                kind = "slice"
        else:
            arr = _index_array(x)
            if arr.dtype == jnp.bool_:
                if not arr.ndim:
                    raise BoolScalarIndex
                if tuple(arr.shape) != tuple(shape[dim:dim + arr.ndim]):
                    raise _mask_error(t, index, x, arr)
                for a in np.nonzero(np.asarray(sized_by(arr, "index_mask")[1])):
                    spec.append("T")
                    arrays.append(jnp.asarray(a, jnp.int64))
                dim += arr.ndim
            else:
                size = shape[dim]
                if arr.size:
                    _value_checks.check_array(arr, lambda v, xp, n=size: (v >= n) | (v < -n),
                                              lambda v, at, d=dim, n=size: _tensor_index_error(builtins.int(v), d, n),
                                              strict=True)
                spec.append("T")
                arrays.append(arr)
                dim += 1
            kind = "index"
    return tuple(spec), arrays, kind


def _too_many_indices(index, ndim):
    """PyTorch's error for more indices than dims: a lone int or slice of a 0-d tensor has words of its own."""
    if ndim == 0 and isinstance(index, (builtins.int, np.integer)):
        if index == 0:
            return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` "
                              "in C++ to convert a 0-dim tensor to a number")
        return IndexError(f"index {index} is out of bounds for dimension 0 with size 0")
    if ndim == 0 and isinstance(index, slice):
        return IndexError("slice() cannot be applied to a 0-dim tensor.")
    return IndexError(f"too many indices for tensor of dimension {ndim}")


def _mask_error(t, index, mask, arr):
    """PyTorch's error for a mask that does not fit: it names the first dim of the mask that differs, in the
    tensor that the index's ints, slices and Nones made before it (applySlicing)."""
    items = index if isinstance(index, tuple) else (index,)
    steps, _ = _advanced_split(t, items)
    sliced = t
    for step in steps:
        sliced = getitem(sliced, step)
    at = 0   # where the mask sits in the sliced tensor: after the dims the items before it left
    for x in items[:next(k for k, x in enumerate(items) if x is mask)]:
        if x is Ellipsis:
            at += t.ndim - builtins.sum(_consumes(y) for y in items)
        elif x is None or isinstance(x, slice):
            at += 1
        elif not isinstance(x, (builtins.int, np.integer)):
            at += _consumes(x) or 1   # (a 0-d mask: the dim unsqueezed for it)
    shape = tuple(sliced.shape)
    j = next(j for j in range(arr.ndim) if at + j >= len(shape) or arr.shape[j] != shape[at + j])
    return IndexError(f"The shape of the mask {list(arr.shape)} at index {j} does not match the shape of the "
                      f"indexed tensor {list(shape)} at index {at + j}")


def _consumes(x):
    if x is None or x is Ellipsis or type(x) is builtins.bool:
        return 0
    if isinstance(x, Tensor) and x.dtype.name == "bool":
        return x.ndim
    if isinstance(x, np.ndarray) and x.dtype == np.bool_:
        return x.ndim
    return 1


def _index_array(x):
    if isinstance(x, Tensor):
        if x.dtype not in (D.int64, D.int32, D.uint8, D.bool_):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return x._value
    return jnp.asarray(index_values(x))


_VIEW_OPS = {"select": I.select, "slice": I.slice_, "unsqueeze": I.index_unsqueeze, "alias": I.index_alias}


def _bytes_as_masks(index):
    """PyTorch reads a uint8 index tensor as a mask (deprecated, with its warning)."""
    if type(index) is not tuple and not isinstance(index, Tensor):
        return index   # (an int or a slice: the common case, nothing to look at)
    items = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(x, Tensor) and x.dtype is D.uint8 for x in items):
        return index
    warn_user("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
              UserWarning)
    items = tuple(x.bool() if isinstance(x, Tensor) and x.dtype is D.uint8 else x for x in items)
    return items if isinstance(index, tuple) else items[0]


def getitem(t, index):
    if type(index) is list:
        index = list_index(index)
    index = _bytes_as_masks(index)
    try:
        spec, arrays, kind = parse(t, index)
    except BoolScalarIndex:
        return getitem(*_with_bool_scalars(t, index))
    if kind == "index":
        if isinstance(index, tuple):
            steps, advanced = _advanced_split(t, index)
            if steps:   # PyTorch applies the ints, slices and Nones as views first, then indexes
                out = t
                for step in steps:
                    out = getitem(out, step)
                return getitem(out, advanced)
        return apply(I.index, t, *(Tensor._wrap(a) for a in arrays), spec=spec)
    if isinstance(index, slice):
        kind = "slice"   # a lone slice is recorded even when it spans the whole dimension, as PyTorch's
    elif isinstance(index, tuple) and kind != "alias":
        steps = _basic_steps(t, index)
        if len(steps) != 1:   # several views, one per index, as PyTorch applies them (or none: an alias)
            out = t
            for step in steps:
                out = getitem(out, step)
            return out if steps else apply(I.index_alias, t, spec=(Ellipsis,))
    if kind in ("select", "slice"):
        spec, positions = I.dynamic_spec(spec, tuple(t.shape))
        return apply(_VIEW_OPS[kind], t, *positions, spec=spec)
    return apply(_VIEW_OPS[kind], t, spec=spec)


def _basic_steps(t, items):
    """PyTorch's applySlicing: a basic index tuple as one index per view it records, left to right (an int
    selects, a slice slices unless it spans the whole dimension, None unsqueezes), in the dims of the
    tensor each step meets."""
    consumed = builtins.sum(_consumes(x) for x in items)
    steps, dim, source = [], 0, 0
    for x in items:
        if x is Ellipsis:
            skip = len(t.shape) - consumed
            dim, source = dim + skip, source + skip
            continue
        lead = (slice(None),) * dim
        if x is None:
            steps.append(lead + (None,))
            dim += 1
        elif isinstance(x, slice):
            if not _spans(x, t.shape[source]):
                steps.append(lead + (x,))
            dim, source = dim + 1, source + 1
        else:
            steps.append(lead + (x,))
            source += 1
    return steps


def _spans(s, size):
    """PyTorch's applySlice records no view for a slice that starts at 0, stops at or past the end and steps
    by 1, judged on the bounds as written: `-2:` over two elements is still sliced. (`:` spans a dimension of
    any, even symbolic, size.)"""
    start, stop, step = (None if v is None else operator.index(v) for v in (s.start, s.stop, s.step))
    return start in (None, 0) and step in (None, 1) and (stop is None or stop >= size)


def _advanced_split(t, items):
    """(the basic steps of an index tuple holding tensors, the tensor index left for their result)."""
    basic, tensors = [], []
    dim = 0
    for x in items:
        if _is_bool_scalar(x):   # unsqueezed, and the new dim indexed with [0] (True) or [] (False)
            basic.append(None)
            tensors.append((dim, Tensor._wrap(jnp.zeros(1 if builtins.bool(x) else 0, jnp.int64)), 1))
            dim += 1
        elif x is None or x is Ellipsis or isinstance(x, (slice, builtins.int, np.integer)):
            basic.append(x)
            if x is Ellipsis:
                n = len(t.shape) - builtins.sum(_consumes(y) for y in items)
                tensors.append((dim, None, n))
                dim += n
            elif not isinstance(x, (builtins.int, np.integer)):
                dim += 1
        else:
            n = _consumes(x)
            basic += [slice(None)] * n
            tensors.append((dim, x, n))
            dim += n
    steps = _basic_steps(t, tuple(basic))
    if not steps:
        return [], None
    # the result's dims: the basic steps removed the ints' dims and added the Nones'
    advanced, covered = [], 0
    for d, x, n in tensors:
        if x is not None:
            advanced += [slice(None)] * (d - covered) + [x]
            covered = d + n
    return steps, tuple(advanced)


def _is_bool_scalar(x):
    return type(x) is builtins.bool or (
        isinstance(x, (Tensor, np.ndarray)) and x.ndim == 0 and x.dtype in (D.bool_, np.bool_))


def _with_bool_scalars(t, index):
    """(t with the index's ints, slices, Nones and 0-d masks applied as PyTorch's views, the tensor index
    left for it): a 0-d mask is an unsqueeze there, its new dim indexed by [0] (True) or [] (False)."""
    steps, advanced = _advanced_split(t, index if isinstance(index, tuple) else (index,))
    for step in steps:
        t = getitem(t, step)
    return t, advanced


def _selects_whole(t, index, tensors=False):
    """True where the index is only full slices and `...` (and, with `tensors`, index tensors): PyTorch's
    setitem then writes t itself (copy_, or index_put_), not a view its other items make first."""
    items = index if isinstance(index, tuple) else (index,)
    if builtins.sum(i is Ellipsis for i in items) > 1:
        return False
    consumed = builtins.sum(_consumes(i) for i in items)
    dim = 0
    for i in items:
        if i is Ellipsis:
            dim += t.ndim - consumed
        elif isinstance(i, slice):
            try:
                if dim >= t.ndim or not _spans(i, t.shape[dim]):
                    return False
            except TypeError:   # tensor bounds
                return False
            dim += 1
        elif tensors and i is not None and not isinstance(i, (builtins.bool, builtins.int, np.integer)):
            dim += _consumes(i)
        else:
            return False
    return True


def _written_view(t, index, arrays):
    """The view of t that PyTorch's setitem writes: the basic items applied (before the tensors' index_put_)."""
    if not arrays:
        return getitem(t, index)
    out = t
    for step in _advanced_split(t, index if isinstance(index, tuple) else (index,))[0]:
        out = getitem(out, step)
    return out


def _value_as_written(t, spec, arrays, value):
    """The value PyTorch's setitem writes: a view of it without its leading size-1 dims, which a basic index
    then expands to the shape it selects (index_put_ broadcasts it itself); a value of that shape as it is.
    The view and expand are recorded where the value's gradient goes through them, else only checked."""
    shape = tuple(value.shape)
    lead = 0
    while lead < len(shape) and shape[lead] == 1:
        lead += 1
    kept = shape[lead:]
    if arrays:
        target = _advanced_shape(tuple(t.shape), spec, tuple(tuple(a.shape) for a in arrays))
        if len(kept) > len(target) or any(n not in (1, m) for n, m in zip(reversed(kept), reversed(target))):
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(kept)} cannot be broadcast to indexing "
                               f"result of shape {list(target)}")
        return value.view(kept) if lead else value
    target = _basic_shape(tuple(t.shape), spec)
    if shape == target:
        return value
    from ._functional._shape import _expanded_shape
    from ._grad_mode import _state
    recorded = value._requires_grad and _state.grad_enabled
    if recorded or lead:
        value = value.view(kept)
    if kept != target:
        if recorded:
            value = value.expand(target)
        else:
            _expanded_shape(kept, target, value)   # PyTorch's error, if any (copy_ and index_put broadcast the value)
    return value


def _basic_shape(shape, spec):
    """The shape a basic index (ints, slices, None, `...`) selects from a tensor of `shape`."""
    consumed = builtins.sum(1 for s in spec if s is not None and s is not Ellipsis)
    out, dim = [], 0
    for s in spec:
        if s is None:
            out.append(1)
        elif s is Ellipsis:
            out += shape[dim:dim + len(shape) - consumed]
            dim += len(shape) - consumed
        else:
            if type(s) is tuple:
                out.append(len(range(*slice(*s).indices(shape[dim]))))
            dim += 1
    return tuple(out) + shape[dim:]


@functools.lru_cache(maxsize=1024)
def _advanced_shape(shape, spec, array_shapes):
    """The shape an index with index arrays selects, read off zero-strided stand-ins for the tensor and arrays."""
    stand_ins = [np.broadcast_to(np.zeros((), np.intp), s) for s in array_shapes]
    return np.broadcast_to(np.empty((), np.bool_), shape)[I.build_index(spec, stand_ins)].shape


def _single_mask(index):
    """Whether the index's one tensor is a bool or uint8 mask: PyTorch's index_put_ then writes a one-element
    value of any dtype with masked_fill_."""
    items = index if isinstance(index, tuple) else (index,)
    tensors = [i for i in items if not (i is None or i is Ellipsis or isinstance(i, (slice, builtins.int, np.integer)))]
    return len(tensors) == 1 and _index_array(tensors[0]).dtype in (jnp.bool_, jnp.uint8)


def _number_value(value):
    """A value setitem takes as a number: Python's and NumPy's numbers (NumPy's bool is none, and PyTorch's
    checks for an int, a float or a complex do not take it either); arrays and lists are refused."""
    return type(value) in (builtins.int, builtins.float, builtins.bool, builtins.complex) or isinstance(
        value, numbers.Number)


def setitem(t, index, value):
    if type(index) is list:
        index = list_index(index)
    from ._functional import scalar_or_tensor
    from ._grad_mode import _state
    from ._inplace import VIEW_OF_LEAF_ERROR, check_inplace, inplace, warn_complex_to_real
    from ._overlap import has_internal_overlap
    from ._scalar_range import check_fits
    from ._views import outside_base, shares_addresses
    if not isinstance(value, Tensor) and not _number_value(value):   # (checked first, as PyTorch's valueToTensor)
        from ._argument_errors import _tp_name
        from ._legacy import type_name
        raise TypeError(f"can't assign a {_tp_name(value)} to a {type_name(t)}")
    tensors = [x for x in (index if isinstance(index, tuple) else (index,)) if isinstance(x, Tensor)]
    if len(tensors) == 1 and tensors[0].dtype is D.uint8 and (not isinstance(value, Tensor) or not value.ndim):
        # (PyTorch fills through a lone uint8 mask with masked_fill_, which takes bool masks only)
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char. Use a "
                           "bool mask, e.g. mask.bool().")
    index = _bytes_as_masks(index)
    try:
        spec, arrays, _ = parse(t, index)
    except BoolScalarIndex:   # PyTorch writes into the view its unsqueeze makes
        return setitem(*_with_bool_scalars(t, index), value)
    whole = _selects_whole(t, index, tensors=builtins.bool(arrays))
    value = scalar_or_tensor(value)
    check_fits(value, t.dtype, via_double=True)   # (PyTorch makes a number a double tensor first)
    fills = not isinstance(value, Tensor) or not value.ndim   # a number or 0-d tensor: fill_, not copy_
    if not arrays and not fills:
        value = _value_as_written(t, spec, arrays, value)   # (its errors come before the in-place checks)
    if not whole and _state.grad_enabled and t.requires_grad and t.is_leaf:
        # the index's basic items write through a view of t (PyTorch slices, then copies or index_put_s): the
        # error names the view, and a view of a view made with grad mode off is refused for that first
        if t._view is not None and t._view.creation is not None and t._view.base is not None:
            check_inplace(_written_view(t, index, arrays), (value,))
        raise RuntimeError(VIEW_OF_LEAF_ERROR)
    if isinstance(value, Tensor) and value.dtype.is_complex and not t.dtype.is_complex:
        if arrays and value.numel() == 1 and _single_mask(index):
            check_fits(value.item(), t.dtype, via_double=True)   # PyTorch's masked_fill_ reads it as a number
        elif not arrays:
            warn_complex_to_real(value.dtype, t.dtype)   # a copy: the imaginary part is dropped
    if arrays and isinstance(value, Tensor):
        # index_put_ checks in PyTorch's order: in place on t, then the value's shape, then its dtype
        check_inplace(t, (value,))
        value = _value_as_written(t, spec, arrays, value)
        if value.dtype is not t.dtype and not (value.numel() == 1 and _single_mask(index)):
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{D.SCALAR_NAMES[t.dtype.name]} for the destination and "
                               f"{D.SCALAR_NAMES[value.dtype.name]} for the source.")
    if whole and not arrays:
        # PyTorch writes t itself: fill_ with a 0-d value (a Python number made one), else copy_
        from ._methods import fill_into
        if fills:
            fill_into(t, value, wrapped=not isinstance(value, Tensor))
        else:
            t.copy_(value)
        return
    if not arrays and (has_internal_overlap(t) or (t._view is not None and (
            shares_addresses(t._view.steps) or (t._view.base is not None and outside_base(t))))):
        # elements share memory (expand, as_strided): write through the indexed view, as PyTorch does, so that
        # every element at a written address changes (an indexed view that still expands is refused). So too
        # for a view that holds storage its base does not: PyTorch's CopySlices then records the indexed view.
        getitem(t, index).copy_(value)
        return
    inplace(t, I.index_put, value, *(Tensor._wrap(a) for a in arrays), spec=spec, whole=whole and builtins.bool(arrays))
