"""unfold (im2col) and fold (col2im): sliding blocks of a batch of images and back, with PyTorch's checks."""
from ..._dispatch import apply
from ..._ops import nn_patches as P
from ..._arg_types import int_lists
from ._util import SCALAR_NAMES


def _pairs(fname, **given):
    """nn.functional's _pair of each argument, read by the argument parser of `fname` (im2col, col2im: ints
    only), as {name: values}."""
    return dict(zip(given, int_lists(fname, [(n, tuple(v) if isinstance(v, (tuple, list)) else (v, v), k)
                                             for k, (n, v) in enumerate(given.items(), 2)])))


def _two(pairs, name):
    # ATen's check that each argument has two entries
    if len(pairs[name]) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(pairs[name])}")
    return pairs[name]


def _geometry(pairs):
    kernel, dilation, padding, stride = (_two(pairs, n) for n in ("kernel_size", "dilation", "padding", "stride"))
    for name, what, (a, b), bad in (("kernel size", "kernel", kernel, min(kernel) <= 0),
                                    ("stride", "stride", stride, min(stride) <= 0),
                                    ("dilation", "dilation", dilation, min(dilation) <= 0),
                                    ("padding", "pad", padding, min(padding) < 0)):
        if bad:
            sign = "non-negative" if what == "pad" else "greater than zero"
            raise RuntimeError(f"{name} should be {sign}, but got {what}_height: {a} {what}_width: {b}")
    return dict(kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)


def _blocks(size, g):
    return tuple(P._blocks(size[i], g["kernel_size"][i], g["dilation"][i], g["padding"][i], g["stride"][i])
                 for i in range(2))


def _check_dtype(input, kernel):
    if not (input.dtype.is_floating_point or input.dtype.is_complex or input.dtype.name == "bool"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    pairs = _pairs("im2col", kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {input.ndim})")
    g = _geometry(pairs)
    if input.ndim > 4 or 0 in tuple(input.shape)[input.ndim - 3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    spatial = tuple(input.shape[-2:])
    blocks = _blocks(spatial, g)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {spatial}, kernel_size={g['kernel_size']}, "
                           f"dilation={g['dilation']}, padding={g['padding']}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least one.")
    _check_dtype(input, "im2col_out_cpu")
    return apply(P.im2col, input, **g)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    pairs = _pairs("col2im", output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding,
                   stride=stride)
    output_size = _two(pairs, "output_size")
    g = _geometry(pairs)
    if input.ndim not in (2, 3) or 0 in tuple(input.shape)[input.ndim - 2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(input.shape)}")
    kernel = g["kernel_size"]
    columns, length = input.shape[-2], input.shape[-1]
    if columns % (kernel[0] * kernel[1]):
        raise RuntimeError(f"Expected size of input's dimension {input.ndim - 2} to be divisible by the product of "
                           f"kernel_size, but got input.size({input.ndim - 2})={columns} and kernel_size={kernel}.")
    blocks = _blocks(output_size, g)
    if blocks[0] * blocks[1] != length:
        raise RuntimeError(f"Given output_size={output_size}, kernel_size={kernel}, dilation={g['dilation']}, "
                           f"padding={g['padding']}, stride={g['stride']}, expected size of input's dimension "
                           f"{input.ndim - 1} to match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got input.size({input.ndim - 1})={length}.")
    _check_dtype(input, "col2im_out_cpu")
    return apply(P.col2im, input, output_size=output_size, **g)
