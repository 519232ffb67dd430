"""Spatial transformer kernels: affine_grid (a grid of sampling points from affine matrices) and grid_sample
(input read at those points), with PyTorch's coordinate conventions."""
import jax.numpy as jnp
import numpy as np

from ._registry import defop, KEEP


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


def _reflect(coord, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(coord)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    coord = jnp.abs(coord - low)
    extra = jnp.fmod(coord, span)
    flips = jnp.floor(coord / span)
    return jnp.where(flips % 2 == 0, extra + low, span - extra + low)


def _clip(coord, size):
    # PyTorch's clip_coordinates: the bounds themselves get a zero gradient, as in its backward
    return jnp.where(coord <= 0, 0.0, jnp.where(coord >= size - 1, size - 1.0, coord)).astype(coord.dtype)


def _source_index(coord, size, padding_mode, align_corners):
    coord = ((coord + 1) / 2) * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "border":
        coord = _clip(coord, size)
    elif padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (size - 1)) if align_corners else _reflect(coord, -1, 2 * size - 1)
        coord = _clip(coord, size)
    return coord


def _grid_sample_2d(x, grid, mode, padding_mode, align_corners):
    n, c, h, w = x.shape
    ix = _source_index(grid[..., 0], w, padding_mode, align_corners)
    iy = _source_index(grid[..., 1], h, padding_mode, align_corners)
    flat = x.reshape(n, c, h * w)
    out_shape = (n, c) + grid.shape[1:3]

    def read(yy, xx):   # values at integer points, zero outside the input
        inside = (xx >= 0) & (xx <= w - 1) & (yy >= 0) & (yy <= h - 1)
        index = (jnp.clip(yy, 0, h - 1) * w + jnp.clip(xx, 0, w - 1)).astype(jnp.int64).reshape(n, 1, -1)
        values = jnp.take_along_axis(flat, jnp.broadcast_to(index, (n, c, index.shape[-1])), axis=2)
        return values.reshape(out_shape) * inside[:, None].astype(x.dtype)

    if mode == "nearest":
        return read(jnp.round(iy), jnp.round(ix))   # round half to even, as PyTorch's nearbyint
    x0, y0 = jnp.floor(ix), jnp.floor(iy)
    wx1, wy1 = (ix - x0)[:, None], (iy - y0)[:, None]
    wx0, wy0 = 1 - wx1, 1 - wy1
    return (read(y0, x0) * wx0 * wy0 + read(y0, x0 + 1) * wx1 * wy0
            + read(y0 + 1, x0) * wx0 * wy1 + read(y0 + 1, x0 + 1) * wx1 * wy1)


affine_grid = defop("affine_grid", _affine_grid, dtype_rule=KEEP, node_name="AffineGridGeneratorBackward0")
grid_sample_2d = defop("grid_sample_2d", _grid_sample_2d, dtype_rule=KEEP, node_name="GridSampler2DBackward0")
