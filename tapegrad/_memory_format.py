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
        return clone(t)
    order = _order(t, fmt)
    back = tuple(sorted(range(t.ndim), key=order.__getitem__))
    return clone(t.permute(order)).permute(back)
