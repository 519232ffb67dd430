"""pad and interpolate."""
import math

import numpy as np

from ..._dispatch import apply
from ..._ops import nn as K
from ..._tensor import Tensor

_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}; use one of {', '.join(_MODES)}")
    n = len(pad) // 2
    pairs = [(0, 0)] * (input.ndim - n) + [(int(pad[2 * i]), int(pad[2 * i + 1])) for i in reversed(range(n))]
    if mode != "constant":
        _check_mode_pad(input, pairs, mode, n)
        return apply(K.pad, input, pads=tuple(pairs), mode=mode, spatial=n)
    fill = () if value is None or value == 0 else (value if isinstance(value, Tensor) else
                                                   input.new_tensor(value),)
    return apply(K.pad, input, *fill, pads=tuple(pairs), mode=mode)


def _check_mode_pad(input, pairs, mode, n):
    if input.ndim not in (n + 1, n + 2):
        raise NotImplementedError(f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now")
    for size, (lo, hi) in zip(input.shape[input.ndim - n:], pairs[input.ndim - n:]):
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {input.ndim - 1} of input "
                               f"{list(input.shape)}")


def _scales(input, nd, size, scale_factor, recompute_scale_factor):
    spatial = tuple(input.shape[2:])
    if size is not None:
        if scale_factor is not None:
            raise ValueError("only one of size or scale_factor should be defined")
        out = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nd
        return tuple(int(s) for s in out), (None,) * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    factors = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd
    out = tuple(int(math.floor(s * f)) for s, f in zip(spatial, factors))
    return out, (None,) * nd if recompute_scale_factor else tuple(float(f) for f in factors)


def _nearest_axis(n_in, n_out, scale, exact):
    s = np.float32(n_in / n_out if scale is None else 1.0 / scale)
    dst = np.arange(n_out, dtype=np.float32)
    src = np.floor(((dst + np.float32(0.5)) if exact else dst) * s).astype(np.int64)
    return tuple(np.minimum(src, n_in - 1).tolist()), None, None


def _linear_axis(n_in, n_out, scale, align_corners):
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = dst * s
    else:
        s = n_in / n_out if scale is None else 1.0 / scale
        src = np.maximum((dst + 0.5) * s - 0.5, 0.0)
    i0 = np.floor(src).astype(np.int64)
    i0 = np.minimum(i0, n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    return tuple(i0.tolist()), tuple(i1.tolist()), tuple((src - i0).tolist())


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    nd = input.ndim - 2
    if nd < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the "
                         f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
                         f"(got {mode})")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    out_size, scales = _scales(input, nd, size, scale_factor, recompute_scale_factor)
    spatial = tuple(input.shape[2:])
    if mode in ("nearest", "nearest-exact"):
        plan = tuple(_nearest_axis(i, o, s, mode == "nearest-exact") for i, o, s in zip(spatial, out_size, scales))
    elif mode in _LINEAR_MODES:
        if _LINEAR_MODES[mode] != nd:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{_LINEAR_MODES[mode] + 2}D input")
        plan = tuple(_linear_axis(i, o, s, bool(align_corners)) for i, o, s in zip(spatial, out_size, scales))
    elif mode == "area":
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input, out_size)
    else:
        raise NotImplementedError(f"interpolate mode {mode!r} is not supported by tapegrad yet; use nearest, "
                                  "linear, bilinear, trilinear or area.")
    return apply(K.interpolate, input, plan=plan, kind=f"{mode.replace('-', '_')}{nd}d")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r): a reshape, a permute and a reshape."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)
