"""affine_grid and grid_sample (spatial transformer networks), with PyTorch's checks."""

from ..._dispatch import apply
from ..._ops import nn_grid as K
from ._util import SCALAR_NAMES
from ..._user_frames import warn_user

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _align(align_corners):
    if align_corners is None:
        warn_user(_ALIGN_WARNING)
        return False
    return bool(align_corners)


def affine_grid(theta, size, align_corners=None):
    align_corners = _align(align_corners)
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    dims = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (dims, dims + 1):
        raise ValueError(f"Expected a batch of {dims}D affine matrices of shape Nx{dims}x{dims + 1} for size "
                         f"{size}. Got {theta.shape}.")
    if align_corners and min(size[2:]) == 1:
        warn_user("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                  "align_corners=True. This is not an intended use case of affine_grid. See the "
                  "documentation of affine_grid for details.")
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return apply(K.affine_grid, theta, size=tuple(int(s) for s in size), align_corners=align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align_corners = _align(align_corners)
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but "
                           f"got grid with sizes {list(grid.shape)}")
    for i in range(2, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                               f"has sizes {list(input.shape)} with dimension {i} being empty")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        rank = 4 if input.ndim == 4 else 5
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of dimensions, "
                           f"but got {sizes}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_NAMES[input.dtype.name]} but found "
                           f"{SCALAR_NAMES[grid.dtype.name]}")
    kernel = "grid_sampler_2d_cpu_kernel_impl" if input.ndim == 4 else "grid_sampler3d_cpu"
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'")
    op = K.grid_sample_2d if input.ndim == 4 else K.grid_sample_3d
    return apply(op, input, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
