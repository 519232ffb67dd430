"""F.pad: constant padding in any rank; reflect, replicate and circular in PyTorch's ranks (the last 1,
2 or 3 dims of a batched or unbatched input), with its checks and its errors."""
from ..._dispatch import apply
from ..._ops import nn as K
from ..._tensor import Tensor
from ..._arg_types import int_list, lone_error
from ._util import check_float_kernel

_MODES = ("constant", "reflect", "replicate", "circular")
_AXES = "DHW"


def pad(input, pad, mode="constant", value=None):
    if not isinstance(pad, (tuple, list)):   # (an unsized int list: a lone value is refused too)
        raise TypeError(lone_error(pad, "pad", "pad", 2))
    pad = int_list(pad, "pad", "pad", 2)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}. Use one of: {', '.join(_MODES)}.")
    n = len(pad) // 2
    pairs = [(0, 0)] * (input.ndim - n) + [(int(pad[2 * i]), int(pad[2 * i + 1])) for i in reversed(range(n))]
    if mode == "constant":
        fill = () if value is None or value == 0 else (value if isinstance(value, Tensor) else
                                                       input.new_tensor(value),)
        return apply(K.pad, input, *fill, pads=tuple(pairs), mode=mode)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument. Drop value, or use '
                           'mode="constant" to pad with it.')
    if n not in (1, 2, 3) or input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    spatial, sides = list(input.shape[input.ndim - n:]), pairs[input.ndim - n:]
    out = [s + lo + hi for s, (lo, hi) in zip(spatial, sides)]
    if mode == "circular":
        _check_circular(spatial, sides, out)
        return _pad_circular(input, sides, out)
    _check_reflect_replicate(input, n, spatial, sides, out, mode)
    if input.dtype.name == "bool":   # integers pad, bool does not (PyTorch's kernels)
        check_float_kernel(input, f"{'reflection' if mode == 'reflect' else 'replication'}_pad{n}d")
    if any(o < 0 for o in out):
        shape = list(input.shape[:input.ndim - n]) + out
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {shape}")
    return apply(K.pad, input, pads=tuple(pairs), mode=mode, spatial=n)   # spatial: names the node


def _check_circular(spatial, sides, out):
    for size, (lo, hi), o in zip(spatial, sides, out):
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once. Circular padding can add at "
                               "most the dimension's size on each side.")
        if o < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")


def _pad_circular(input, sides, out):
    """PyTorch's composite (its _pad_circular): the part of the input that stays is copied into a new tensor,
    then each padded dim, last first, gets its left and right pads copied from the other end of that tensor.
    Recorded as those slice copies, so the graph is PyTorch's chain of CopySlices."""
    first = input.ndim - len(sides)
    dims = [(first + i, lo, hi, size, o) for i, ((lo, hi), size, o) in enumerate(zip(sides, input.shape[first:], out))]
    result = input.new_empty(list(input.shape[:first]) + out)
    into, source = result, input
    for dim, lo, hi, size, o in reversed(dims):
        into = _slice(into, dim, max(lo, 0), o - max(hi, 0))
        source = _slice(source, dim, max(-lo, 0), size - max(-hi, 0))
    into.copy_(source)
    for dim, lo, hi, size, o in reversed(dims):   # corners are written more than once, as PyTorch's are
        if lo > 0:
            _slice(result, dim, 0, lo).copy_(_slice(result, dim, o - lo - max(hi, 0), o - max(hi, 0)))
        if hi > 0:
            _slice(result, dim, o - hi, o).copy_(_slice(result, dim, max(lo, 0), max(lo, 0) + hi))
    return result


def _slice(t, dim, start, end):
    """t.slice(dim, start, end) as ATen's: negative bounds count from the end, then both are clamped."""
    size = t.shape[dim]
    start, end = (min(max(b + size if b < 0 else b, 0), size) for b in (start, end))
    return t.narrow(dim, start, max(end - start, 0))


def _check_reflect_replicate(input, n, spatial, sides, out, mode):
    batch = input.ndim == n + 2
    if any(s == 0 for s in input.shape[1 if batch else 0:]):
        raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size and other "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    if mode == "reflect":
        for k in range(n):   # PyTorch checks W, then H, then D
            d = n - 1 - k
            lo, hi = sides[d]
            if lo >= spatial[d] or hi >= spatial[d]:
                raise RuntimeError(f"Argument #{4 + 2 * k}: Padding size should be less than the corresponding input "
                                   f"dimension, but got: padding ({lo}, {hi}) at dimension {input.ndim - 1 - k} of "
                                   f"input {list(input.shape)}")
    if all(o < 1 for o in out):
        axes = _AXES[3 - n:]
        given = ", ".join(f"{a}: {s}" for a, s in zip(axes, spatial))
        if n == 3:
            given = given.replace(", ", " ", 1)
        elif n == 2 and mode == "replicate":
            given += " "
        result = " ".join(f"{a}: {o}" for a, o in zip(axes, out))
        raise RuntimeError(f"input ({given}) is too small. Calculated output {result}")
