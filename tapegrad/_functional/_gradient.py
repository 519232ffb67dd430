"""torch.gradient: central differences inside, one-sided ones of the first or second order at the edges, composed
of slices, arithmetic and cat in the order ATen composes them, so values round as PyTorch's and autograd records
its nodes (the result's grad_fn is CatBackward0)."""
import builtins
import operator

from .. import _dtypes as D
from .._tensor import Tensor
from ._common import wrap_dim
from ._joins import cat


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The gradient of a function sampled by `input`, one tensor per dim of `dim` (all dims when None).
    spacing: one step for every dim, a step per dim, or per dim a 1-D tensor of sample coordinates."""
    if not isinstance(input, Tensor):
        raise TypeError(f"gradient(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    edge_order = operator.index(edge_order)
    dim_list = None if dim is None else [operator.index(d) for d in dim] if isinstance(dim, (list, tuple)) \
        else [operator.index(dim)]
    steps, coordinates = _spacing(spacing, input.ndim if dim_list is None else len(dim_list))
    _check(input, len(steps if coordinates is None else coordinates), spacing is not None, dim_list, edge_order)
    axes = range(input.ndim) if dim_list is None else [wrap_dim(d, input.ndim) for d in dim_list]
    if coordinates is not None:
        return tuple(_along_coordinates(input, c, d, edge_order) for c, d in zip(coordinates, axes))
    return tuple(_along_steps(input, h, d, edge_order) for h, d in zip(steps, axes))


def _spacing(spacing, count):
    """(steps, coordinates): a number per dim, or a 1-D coordinate tensor per dim (the other one None). A lone
    number (or 0-d tensor, PyTorch's Scalar) stands for every dim; a list is given per dim."""
    if spacing is None:
        return [1.0] * count, None
    if isinstance(spacing, (list, tuple)):
        tensors = [isinstance(s, Tensor) for s in spacing]
        if spacing and builtins.all(tensors):
            return None, list(spacing)
        if builtins.any(tensors):   # (PyTorch's parser then expects a list of tensors)
            at = tensors.index(False)
            raise TypeError(f"expected Tensor as element {at} in argument 1, but got {type(spacing[at]).__name__}")
        return [_number(s) for s in spacing], None
    return [_number(spacing)] * count, None


def _number(s):
    if isinstance(s, Tensor) and s.ndim == 0:
        s = s.item()
    if isinstance(s, builtins.bool):
        return builtins.int(s)
    if not isinstance(s, (builtins.int, builtins.float, builtins.complex)):
        raise TypeError(f"gradient(): argument 'spacing' must be Number, tuple of Scalars or tuple of Tensors, "
                        f"not {type(s).__name__}")
    return s


def _check(input, given, explicit, dim_list, edge_order):
    # PyTorch's pre_check_gradient, in its order
    if input.dtype is D.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if explicit and dim_list is None and given != input.ndim:
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal "
                           f"to 'self.dim() = {input.ndim}', since dim argument was not given, but got a list of "
                           f"length {given}")
    if explicit and dim_list is not None and given != len(dim_list):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {given} and a "
                           f"dim argument of length {len(dim_list)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim_list is not None:
        seen = set()
        for d in dim_list:
            d = wrap_dim(d, input.ndim)
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
    for d in (range(input.ndim) if dim_list is None else dim_list):
        if input.size(d) < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _slice(x, d, start, stop=None):
    return x[(slice(None),) * d + (slice(start, stop),)]


def _along_steps(x, h, d, edge_order):
    center = (_slice(x, d, 2) - _slice(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / h
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / h
    else:
        first = (_slice(x, d, 0, 1) * -1.5 + _slice(x, d, 1, 2) * 2.0 - _slice(x, d, 2, 3) * 0.5) / h
        last = (_slice(x, d, -3, -2) * 0.5 + _slice(x, d, -2, -1) * -2.0 + _slice(x, d, -1) * 1.5) / h
    return cat([first, center / 2, last], d)


def _along_coordinates(x, coords, d, edge_order):
    if coords.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {coords.ndim} dimensions!")
    shape = [1] * x.ndim
    shape[d] = -1
    dx = coords.diff(1, 0)
    dx1, dx2 = dx[0:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _slice(x, d, 0, -2) + b * _slice(x, d, 1, -1) + c * _slice(x, d, 2)
    if edge_order == 1:
        first = (_slice(x, d, 1, 2) - _slice(x, d, 0, 1)) / dx[0]
        last = (_slice(x, d, -1) - _slice(x, d, -2, -1)) / dx[-1]
    else:   # the second-order one-sided formulas for uneven steps
        h0, h1 = dx[0], dx[1]
        a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = (-h0) / (h1 * (h0 + h1))
        first = a * _slice(x, d, 0, 1) + b * _slice(x, d, 1, 2) + c * _slice(x, d, 2, 3)
        h0, h1 = dx[-2], dx[-1]
        a = h1 / (h0 * (h1 + h0))
        b = -(h1 + h0) / (h1 * h0)
        c = (2 * h1 + h0) / (h1 * (h1 + h0))
        last = a * _slice(x, d, -3, -2) + b * _slice(x, d, -2, -1) + c * _slice(x, d, -1)
    return cat([first, center, last], d)
