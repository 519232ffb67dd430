"""pixel_shuffle, pixel_unshuffle and channel_shuffle (pad: padding.py, interpolate: interpolate.py)."""
from ..._dispatch import apply
from ..._ops import nn_patches as P


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r) (PixelShuffleBackward0)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    return apply(P.pixel_shuffle, input, r=r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle (PixelUnshuffleBackward0)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = input.shape[-2:]
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    return apply(P.pixel_unshuffle, input, r=r)


def _check_channel_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")


def channel_shuffle(input, groups):
    """(N, C, *) with C = g k: channel i k + j goes to j g + i (ChannelShuffleBackward0)."""
    _check_channel_shuffle(input, int(groups))
    return apply(P.channel_shuffle, input, groups=int(groups))


def native_channel_shuffle(input, groups):
    """channel_shuffle's kernel without a derivative (PyTorch records a node that cannot backward)."""
    _check_channel_shuffle(input, int(groups))
    return apply(P.native_channel_shuffle, input, groups=int(groups))
