"""PyTorch's strides of view results, one rule per family of view ops (`Op.stride_rule`).

A rule takes the op's statics (a dict) and its input's shape and strides (lists) and returns the result's
(shape, strides) as lists, or None for a call it has no rule for. `_view_layout` follows a view's recipe
through them for the strides of its size-1 dims, which the storage positions of its elements cannot show.
"""
from .._view_layout import view_strides


def same_strides(static, shape, strides):
    # alias: the input's layout
    return shape, strides


def index_strides(static, shape, strides):
    # basic indexing (select, slice, the index views, split and unbind pieces), as PyTorch's applySlicing
    shape, strides = list(shape), list(strides)
    return (shape, strides) if _follow_index(static["spec"], shape, strides) else None


def reshape_strides(static, shape, strides):
    # view and _reshape_alias: PyTorch's computeStride
    new = view_strides(tuple(shape), tuple(strides), tuple(static["shape"]))
    return None if new is None else (list(static["shape"]), list(new))


def expand_strides(static, shape, strides):
    new = list(static["shape"])
    lead = len(new) - len(shape)
    return new, [0] * lead + [st if size == n else 0 for size, st, n in zip(shape, strides, new[lead:])]


def transpose_strides(static, shape, strides):
    # transpose, and t (no statics: dims 0 and 1); fewer than 2 dims are left as they are
    if len(shape) < 2:
        return shape, strides
    d0, d1 = static.get("dim0", 0) % len(shape), static.get("dim1", 1) % len(shape)
    shape, strides = list(shape), list(strides)
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return shape, strides


def permute_strides(static, shape, strides):
    dims = [d % len(shape) for d in static["dims"]]
    return [shape[d] for d in dims], [strides[d] for d in dims]


def unsqueeze_strides(static, shape, strides):
    shape, strides = list(shape), list(strides)
    _unsqueeze(shape, strides, static["dim"] % (len(shape) + 1))
    return shape, strides


def squeeze_strides(static, shape, strides):
    dims = static["dim"]
    dims = range(len(shape)) if dims is None else dims if isinstance(dims, tuple) else (dims,)
    drop = {d % len(shape) for d in dims if len(shape) and shape[d % len(shape)] == 1}
    return [n for d, n in enumerate(shape) if d not in drop], [st for d, st in enumerate(strides) if d not in drop]


def diagonal_strides(static, shape, strides):
    d1, d2, offset = static["dim1"] % len(shape), static["dim2"] % len(shape), static["offset"]
    size = max(min(shape[d1], shape[d2] - offset) if offset >= 0 else min(shape[d1] + offset, shape[d2]), 0)
    keep = [d for d in range(len(shape)) if d not in (d1, d2)]
    return [shape[d] for d in keep] + [size], [strides[d] for d in keep] + [strides[d1] + strides[d2]]


def unfold_strides(static, shape, strides):
    # the windows along dim: their starts step * stride apart, their elements a new last dim
    if not shape:
        return [static["size"]], [1]
    d, size, step = static["dim"], static["size"], static["step"]
    count = (shape[d] - size) // step + 1
    return (list(shape[:d]) + [count] + list(shape[d + 1:]) + [size],
            list(strides[:d]) + [strides[d] * step] + list(strides[d + 1:]) + [strides[d]])


def as_strided_strides(static, shape, strides):
    return list(static["size"]), list(static["stride"])


def _unsqueeze(shape, strides, d):
    # PyTorch's unsqueeze: the new dim's stride spans the dim it is put before (1 at the end)
    strides.insert(d, shape[d] * strides[d] if d < len(shape) else 1)
    shape.insert(d, 1)


def _follow_index(spec, shape, strides):
    """Basic indexing (a spec of _ops.indexing) applied to shape and strides in place, as PyTorch's
    applySlicing does item by item; False for an item without a rule here."""
    skipped = len(shape) - sum(1 for item in spec if item is not None and item is not Ellipsis)
    d = 0
    for item in spec:
        if item is None:
            _unsqueeze(shape, strides, d)
            d += 1
        elif item is Ellipsis:
            d += skipped
        elif type(item) is int or item == ("i",):
            del shape[d], strides[d]
        elif type(item) is tuple and len(item) == 3 and item[0] == "s":
            shape[d], strides[d] = item[1], strides[d] * item[2]
            d += 1
        elif type(item) is tuple and len(item) == 3:
            shape[d], strides[d] = len(range(*slice(*item).indices(shape[d]))), strides[d] * (item[2] or 1)
            d += 1
        else:
            return False
    return True
