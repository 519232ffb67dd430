"""PyTorch's memory formats. channels_last is an order of strides (NHWC in memory for an NCHW shape); a
tensor gets it from a copy made in that order and permuted back, so its strides are PyTorch's. Where a
size-1 dim makes the layout ambiguous (one channel, or a 1x1 image), PyTorch's own rules decide whether a
tensor is already in the format and which strides the size-1 dims get; tapegrad treats size-1 dims as
matching any stride, so such tensors may keep other strides than PyTorch gives them."""


class memory_format:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tapegrad.{self.name}"

    def __reduce__(self):   # pickled by name: the same object comes back
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# memory format -> (the rank it needs, the order of dims from outermost to innermost in memory)
_ORDERS = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def _order(t, fmt):
    rank, order = _ORDERS[fmt]
    if t.ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    return order


def is_contiguous(t, fmt):
    from . import _views
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return _views.is_contiguous(t)
    rank, order = _ORDERS[fmt]
    if t.ndim != rank:
        return False
    strides, expected = t.stride(), 1
    for dim in reversed(order):   # innermost first; size-1 dims may have any stride, as in PyTorch
        if t.shape[dim] != 1:
            if strides[dim] != expected:
                return False
            expected *= t.shape[dim]
    return True


def contiguous(t, fmt):
    """t itself when already laid out in `fmt`, else a copy that is."""
    from ._functional import clone
    if is_contiguous(t, fmt):
        return t
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if fmt is None or fmt is contiguous_format:
        return clone(t, memory_format=contiguous_format)
    order = _order(t, fmt)
    back = tuple(sorted(range(t.ndim), key=order.__getitem__))
    return clone(t.permute(order), memory_format=contiguous_format).permute(back)


# ---- ops that keep their input's format (PyTorch's upsampling and adaptive pooling kernels) ---------------

# the order PyTorch walks dims to tell whether strides are channels-last-like (is_channels_last_strides_*d)
_STRIDE_WALK = {4: ((1, 3, 2, 0), channels_last), 5: ((1, 4, 3, 2, 0), channels_last_3d)}


def suggest_memory_format(t):
    """PyTorch's Tensor.suggest_memory_format(): channels_last(_3d) when t's strides are ordered so, else
    contiguous_format. As in PyTorch, a layout that is also contiguous (a single channel, a 1x1 image) counts
    as contiguous; size-1 dims are skipped, their strides being a convention here (see above)."""
    from . import _views
    walk = _STRIDE_WALK.get(t.ndim)
    if walk is None or _views.is_contiguous(t):
        return contiguous_format
    sizes, strides = tuple(t.shape), t.stride()
    if strides[1] == 0:
        return contiguous_format
    low = 0
    for d in walk[0]:
        if sizes[d] == 0 or sizes[d] > 1 and strides[d] < low:
            return contiguous_format
        if sizes[d] > 1:
            low = strides[d] * sizes[d]
    return walk[1]


def keep_format(out, input):
    """`out`, the fresh result of an op on `input`, laid out in input's suggested memory format as PyTorch's
    kernel lays it out. Nothing is recorded: out keeps its grad_fn; its storage becomes a copy in the format's
    memory order that out reads through a permute, as a detach()ed view reads its storage."""
    fmt = suggest_memory_format(input)
    if fmt is contiguous_format or out.ndim != input.ndim:
        return out
    return _relaid(out, _order(out, fmt))


def _relaid(out, order):
    """out with its storage a copy in memory order `order` (dims outermost first), read through a permute;
    nothing recorded: out's value stays the one computed, the storage's is its transpose (one op, made
    lazily, computed only when read)."""
    from ._dispatch import compute
    from ._ops import shape as S
    from ._storage import Storage
    from ._views import ViewInfo
    value = out._storage._raw
    stored = Storage(compute(S.permute, (("dims", tuple(order)),), [value]))
    stored.counter = out._storage.counter   # the same tensor: a version check on it (a saved result) holds
    back = tuple(sorted(range(out.ndim), key=order.__getitem__))
    out._storage = stored
    out._view = ViewInfo(None, ((S.permute, (("dims", back),)),), (), stored.version, value)
    return out


# ---- a leaf's gradient in the leaf's layout (PyTorch's AccumulateGrad "gradient layout contract") ---------

def grad_like(var, g):
    """The first .grad of leaf `var` from the array g (see keep_layout)."""
    from ._tensor import Tensor
    out = Tensor._wrap(g)
    return out if var._view is None else keep_layout(out, var)


def keep_layout(grad, var):
    """grad laid out with var's strides when var is non-overlapping and dense (channels_last, a transposed
    leaf), else contiguous, as PyTorch's AccumulateGrad lays out a leaf's first gradient."""
    from ._overlap import _dense
    from ._views import contiguous_strides
    shape, strides = tuple(var.shape), var.stride()
    if not _dense(shape, strides):
        return grad
    order = tuple(sorted(range(len(shape)), key=lambda d: -strides[d]))   # outermost first (stable for ties)
    if all(shape[d] == 1 or strides[d] == s for d, s in enumerate(contiguous_strides(shape))):
        return grad
    return _relaid(grad, order)

