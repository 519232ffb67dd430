"""Spatial transformer kernels: affine_grid (a grid of sampling points from affine matrices) and grid_sample
(input read at those points), with PyTorch's coordinate conventions (aten/src/ATen/native/GridSampler.h)."""
import math

import jax.numpy as jnp
import numpy as np

from ._registry import defop, KEEP

_CUBIC_A = -0.75   # PyTorch's cubic convolution constant (as its upsample_bicubic2d)


def _base_axis(steps, align_corners, dtype):
    """PyTorch's linspace_from_neg_one: the normalized coordinates of `steps` pixels."""
    if steps <= 1:
        return np.zeros(max(steps, 0), dtype)
    axis = np.linspace(-1.0, 1.0, steps)
    return (axis if align_corners else axis * (steps - 1) / steps).astype(dtype)


def _affine_grid(theta, size, align_corners):
    """Base grid (x, y[, z], 1) over the spatial size, times theta transposed."""
    spatial = size[2:][::-1]   # x runs along the last dimension
    axes = [_base_axis(n, align_corners, theta.dtype) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")   # indexed (x, y[, z])
    base = np.stack([m.transpose() for m in mesh] + [np.ones(size[2:], theta.dtype)], axis=-1)
    flat = jnp.asarray(base.reshape(-1, len(spatial) + 1))
    return jnp.einsum("pk,nik->npi", flat, theta).reshape((size[0],) + tuple(size[2:]) + (len(spatial),))


# ---- coordinates ---------------------------------------------------------------------------------------------

def _unnormalize(coord, size, align_corners, dims):
    """[-1, 1] to pixel coordinates, rounded as PyTorch's CPU kernels round: its 2-D kernel is vectorized
    (a scale and a shift), its 3-D kernel scalar."""
    if dims == 2:
        return (coord + 1) * ((size - 1) / 2) if align_corners else (coord + 1) * (size / 2) - 0.5
    return ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = jnp.abs(coord - low)
    extra = jnp.fmod(coord, span)
    flips = jnp.floor(coord / span)
    return jnp.where(flips % 2 == 0, extra + low, span - extra + low)


def _clip(coord, size, dims):
    """PyTorch's clip_coordinates; the bounds themselves get a zero gradient, as in its backward. A NaN
    coordinate goes to 0 in its vectorized 2-D kernel and to the last pixel in its scalar 3-D one."""
    if dims == 2:
        return jnp.where(coord > 0, jnp.where(coord < size - 1, coord, size - 1.0), 0.0).astype(coord.dtype)
    return jnp.where(coord <= 0, 0.0, jnp.where(coord < size - 1, coord, size - 1.0)).astype(coord.dtype)


def _pad(coord, size, padding_mode, align_corners, dims):
    """PyTorch's compute_coordinates: a pixel coordinate moved inside the input by the padding rule."""
    if padding_mode == "border":
        coord = _clip(coord, size, dims)
    elif padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = _clip(coord, size, dims)
    return coord


# ---- sampling ------------------------------------------------------------------------------------------------

def _read(x, points):
    """x (N, C, *spatial) at integer points (one array (N, *rest) per spatial axis, in x's axis order), as
    (N, C, *rest), outside points reading 0; and whether each point is inside, as (N, 1, *rest)."""
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    points = jnp.broadcast_arrays(*points)
    inside, index = np.bool_(True), 0
    for p, size in zip(points, spatial):
        inside = inside & (p >= 0) & (p <= size - 1)
        index = index * size + jnp.clip(p, 0, size - 1).astype(jnp.int64)
    rest = index.shape[1:]   # sizes spelled out, not -1: a batch or channel axis may be empty
    index = index.reshape(n, 1, math.prod(rest))
    flat = x.reshape(n, c, math.prod(spatial))
    values = jnp.take_along_axis(flat, jnp.broadcast_to(index, (n, c, index.shape[-1])), axis=2)
    inside = inside[:, None]
    return jnp.where(inside, values.reshape((n, c) + rest), 0), inside


def _on_axis(pair, axis, dims):
    """A trailing axis of 2 or 4 taps moved to trailing position `axis` of `dims` (the others of size 1)."""
    return pair.reshape(pair.shape[:-1] + tuple(pair.shape[-1] if a == axis else 1 for a in range(dims)))


def _linear(x, coords, skip_outside):
    """(Bi/tri)linear interpolation between the 2**d corners around each point, read in one gather. PyTorch's 2-D
    kernel multiplies an outside corner's zero by its weight; its 3-D kernel skips the corner (NaN weights)."""
    dims = len(coords)
    lows = [jnp.floor(c) for c in coords]
    points = [_on_axis(jnp.stack([low, low + 1], -1), a, dims) for a, low in enumerate(lows)]
    highs = [c - low for c, low in zip(coords, lows)]
    weights = [_on_axis(jnp.stack([1 - h, h], -1), a, dims) for a, h in enumerate(highs)]
    weight = math.prod(weights[::-1])[:, None]   # x's factor first, as PyTorch
    values, inside = _read(x, points)
    terms = values * weight
    if skip_outside:
        terms = jnp.where(inside, terms, 0)
    return terms.sum(axis=tuple(range(-dims, 0)))


def _cubic_coefficients(t):
    """PyTorch's get_cubic_coefficients for taps at -1, 0, 1, 2 from a point t in [0, 1) past tap 0."""
    a = _CUBIC_A
    near = lambda s: ((a + 2) * s - (a + 3)) * s * s + 1          # noqa: E731  |s| <= 1
    far = lambda s: ((a * s - 5 * a) * s + 8 * a) * s - 4 * a      # noqa: E731  1 < |s| < 2
    return jnp.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], -1)


def _bicubic(x, iy, ix, padding_mode, align_corners):
    """PyTorch's bicubic path: the source point is only unnormalized; each of the 4x4 taps around it is padded."""
    h, w = x.shape[2:]
    y0, x0 = jnp.floor(iy), jnp.floor(ix)
    taps = jnp.arange(-1, 3, dtype=x.dtype)
    tap_y = _pad(y0[..., None] + taps, h, padding_mode, align_corners, 2)
    tap_x = _pad(x0[..., None] + taps, w, padding_mode, align_corners, 2)
    values, _ = _read(x, [_on_axis(tap_y, 0, 2), _on_axis(tap_x, 1, 2)])   # (N, C, H', W', 4, 4)
    rows = (values * _cubic_coefficients(ix - x0)[:, None, ..., None, :]).sum(-1)
    return (rows * _cubic_coefficients(iy - y0)[:, None]).sum(-1)


def _grid_sample(x, grid, mode, padding_mode, align_corners):
    sizes = x.shape[2:]
    # grid's last axis holds (x, y[, z]): x indexes the last input axis
    coords = [_unnormalize(grid[..., len(sizes) - 1 - i], s, align_corners, len(sizes)) for i, s in enumerate(sizes)]
    if mode == "bicubic":
        return _bicubic(x, *coords, padding_mode, align_corners)
    coords = [_pad(c, s, padding_mode, align_corners, len(sizes)) for c, s in zip(coords, sizes)]
    if mode == "nearest":
        return _read(x, [jnp.round(c) for c in coords])[0]   # round half to even, as PyTorch's nearbyint
    return _linear(x, coords, skip_outside=len(sizes) == 3)


affine_grid = defop("affine_grid", _affine_grid, dtype_rule=KEEP, node_name="AffineGridGeneratorBackward0")
# (one backward kernel for both, of the input and the grid: saved whichever requires grad, and under create_graph
# GridSampler2DBackwardBackward0's inputs)
grid_sample_2d = defop("grid_sample_2d", _grid_sample, dtype_rule=KEEP, node_name="GridSampler2DBackward0",
                       saves_inputs=(0, 1), fused_backward=True, backward_name=True, tie_undefined=True)
grid_sample_3d = defop("grid_sample_3d", _grid_sample, dtype_rule=KEEP, node_name="GridSampler3DBackward0",
                       saves_inputs=(0, 1), fused_backward=True, backward_name=True, tie_undefined=True)
