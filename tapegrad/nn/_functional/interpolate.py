"""F.interpolate / F.upsample: PyTorch's argument handling, then one gather-and-weight kernel whose
per-axis plan (`_interp_plan`) holds PyTorch's indices and weights for the mode."""
import operator

from ... import _dtypes
from ..._argument_errors import explained
from ..._dispatch import apply
from ..._memory_format import keep_format
from ..._ops import nn as K
from . import _interp_fixed_point as FP
from . import _interp_plan as P
from ._util import check_float_kernel
from ..._user_frames import warn_user

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}
_AXES = {1: "W", 2: "HW", 3: "DHW"}


def _is_integer(x):
    try:
        operator.index(x)
        return True
    except TypeError:
        return getattr(x, "dtype", None) is not None and not x.dtype.is_floating_point and x.ndim == 0


# the kernels PyTorch's interpolate passes align_corners to, whose argument parser checks its type
_UPSAMPLE = {("linear", 1): "upsample_linear1d", ("bilinear", 2): "upsample_bilinear2d",
             ("bicubic", 2): "upsample_bicubic2d", ("trilinear", 3): "upsample_trilinear3d"}


def _refuse_align_corners(input, size, scale_factor, recompute_scale_factor, out, align_corners, mode, dim):
    """PyTorch's error for an align_corners that is not a bool: its kernel's parser error, for the arguments
    interpolate passes it (output sizes or scale factors, whichever decides the result)."""
    if size is not None:
        sizes, factors = (size if isinstance(size, (tuple, list)) else [size] * dim), None
    elif recompute_scale_factor:
        sizes, factors = list(out), None
    else:
        sizes, factors = None, scale_factor if isinstance(scale_factor, (tuple, list)) else [scale_factor] * dim
    raise explained(TypeError(), "kernel", _UPSAMPLE[(mode, dim)], (input, sizes, align_corners, factors), {})


def _sizes(input, dim, size, scale_factor, recompute_scale_factor, mode):
    """(output sizes, scales given to the kernel) as PyTorch's F.interpolate works them out."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {spatial} and output size of {size}. Please provide "
                                 "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                                 "format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, "
                                f"int], but got size with types {[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            if not _is_integer(size):
                raise TypeError(f"interpolate(): size must be an int or a tuple of ints, but got "
                                f"{type(size).__name__}. Pass an integer size or use scale_factor.")
            out = [int(size)] * dim
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {spatial} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if out is None:
        # PyTorch truncates size * scale (in Python when recomputing, in C++ otherwise)
        out = [int(n * s) for n, s in zip(spatial, scales)]
        if recompute_scale_factor:
            scales = None
    return out, scales or [None] * dim


def _check_sizes(spatial, out):
    if all(n > 0 for n in spatial) and all(o > 0 for o in out):
        return
    axes = _AXES[len(out)]
    shown = lambda sizes: ", ".join(f"{a}: {n}" for a, n in zip(axes, sizes))  # noqa: E731
    joiner = " and output " if len(out) == 1 else " output "
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown(spatial)}){joiner}"
                       f"({shown(out)})")


def _kernel_name(mode, dim, antialias):
    if antialias:
        return "compute_index_ranges_weights"
    if dim == 2 and mode in ("nearest", "nearest-exact", "bilinear"):
        return f"upsample_{'nearest' if mode != 'bilinear' else 'bilinear'}2d_channels_last"
    return {"bicubic": "compute_indices_weights_cubic"}.get(
        mode, "compute_indices_weights_linear" if mode in _LINEAR else "compute_indices_weights_nearest")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    out, scales = _sizes(input, dim, size, scale_factor, recompute_scale_factor, mode)
    if type(align_corners) is not bool and _UPSAMPLE.get((mode, dim)):
        _refuse_align_corners(input, size, scale_factor, recompute_scale_factor, out, align_corners, mode, dim)
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    known = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3), "bicubic": (2,), "lanczos": (2,)}
    if mode in _LINEAR and dim in (1, 2, 3) and _LINEAR[mode] != dim:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR[mode] + 2}D input")
    if mode == "lanczos" and dim == 2:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if dim not in known.get(mode, (_LINEAR.get(mode),)):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: {_MODES} (got {mode})")
    if mode == "area":
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, out)
    spatial = list(input.shape[2:])
    _check_sizes(spatial, out)
    if input.dtype is _dtypes.uint8 and mode in ("bilinear", "bicubic", "lanczos"):   # PyTorch's int16 weights
        plan = tuple(FP.axis(n, o, s, align_corners, mode, antialias) for n, o, s in zip(spatial, out, scales))
        return keep_format(apply(K.interpolate_fixed_point, input, plan=plan), input)
    if not (input.dtype is _dtypes.uint8 and mode.startswith("nearest")):
        check_float_kernel(input, _kernel_name(mode, dim, antialias))
    ft = P.np.float64 if input.dtype is _dtypes.float64 else P.np.float32
    plan = []
    for n, o, s in zip(spatial, out, scales):
        if mode.startswith("nearest"):
            axis = P.nearest(n, o, s, mode == "nearest-exact", dim == 2, ft)
        elif antialias:
            axis = P.antialiased(n, o, s, align_corners, {"bilinear": 2, "bicubic": 4, "lanczos": 6}[mode], ft)
        elif mode == "bicubic":
            axis = P.cubic(n, o, s, align_corners, ft)
        else:
            axis = P.linear(n, o, s, align_corners, ft)
        plan.append(P.as_static(axis))
    kind = f"{mode.replace('-', '_')}{dim}d" + ("_aa" if antialias else "")   # names the node, as PyTorch's kernel
    return keep_format(apply(K.interpolate, input, plan=tuple(plan), kind=kind), input)


def _deprecated(name):
    warn_user(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` instead.")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
