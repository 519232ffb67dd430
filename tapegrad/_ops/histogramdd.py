"""histogramdd: the (weighted) count of points (rows of a (M, N) array) in the cells of an N-dimensional grid of
bins, and the bins' edges. PyTorch records both as nodes whose backward raises (NotImplemented)."""
import math

import jax.numpy as jnp

from ._registry import defop, KEEP
from .histograms import edges_between

_NO_DERIVATIVE = (RuntimeError, "derivative for aten::_histogramdd_from_bin_cts is not implemented")


def _cells(points, edges):
    """Each point's flat cell index, and whether it lies inside the grid (within every dim's outer edges; a
    NaN never does). A bin holds its left edge, the last bin its right edge too (PyTorch's and NumPy's rule)."""
    index, inside = jnp.zeros(points.shape[0], jnp.int64), jnp.ones(points.shape[0], bool)
    for d, e in enumerate(edges):
        x, n = points[:, d], e.shape[0] - 1
        pos = jnp.searchsorted(e, x, side="right") - 1
        pos = jnp.where(pos >= n, n - 1, pos)
        index = index * n + pos
        inside = inside & (x >= e[0]) & (x <= e[-1])
    return index, inside


def _histogramdd(a, *args, bins, weighted, density):
    """The histogram of a's rows (a: (..., N)). bins: the bin counts per dim, args then holding each dim's
    (lo, hi) before the weight; None: args holds each dim's edges. weighted: the last arg is the points' weights."""
    n_dims = a.shape[-1]
    points = a.reshape(math.prod(a.shape[:-1]), n_dims)
    weight = args[-1].reshape(-1) if weighted else jnp.ones(points.shape[0], a.dtype)
    if bins is None:
        edges = args[:n_dims]
    else:
        edges = [edges_between(args[2 * d], args[2 * d + 1], b, a.dtype) for d, b in enumerate(bins)]
    shape = tuple(e.shape[0] - 1 for e in edges)
    if n_dims == 0:   # (PyTorch counts nothing into the one cell of a 0-dimensional grid)
        hist = jnp.zeros((), a.dtype)
    else:
        index, inside = _cells(points, edges)
        hist = jnp.zeros(math.prod(shape), a.dtype).at[jnp.where(inside, index, 0)].add(
            jnp.where(inside, weight, jnp.zeros((), a.dtype))).reshape(shape)
    if density:   # (PyTorch's order: the total first, then each dim's bin widths)
        hist = hist / jnp.sum(hist)
        for d, e in enumerate(edges):
            hist = hist / jnp.diff(e).reshape(tuple(-1 if k == d else 1 for k in range(n_dims)))
    return hist


def _bin_edges(a, lo, hi, *weight, bins):
    """One dim's edges: `bins` + 1 of them evenly from lo to hi (PyTorch's linspace). a and the weight are the
    inputs PyTorch's node records, though the edges do not read them."""
    return edges_between(lo, hi, bins, a.dtype)


histogramdd = defop("histogramdd", _histogramdd, dtype_rule=KEEP, node_name="torch::autograd::NotImplemented",
                    no_derivative=lambda bins, **_: (
                        (RuntimeError, "derivative for aten::_histogramdd_from_bin_tensors is not implemented")
                        if bins is None else _NO_DERIVATIVE))
histogramdd_bin_edges = defop(
    "histogramdd_bin_edges", _bin_edges, dtype_rule=KEEP, node_name="torch::autograd::NotImplemented",
    no_derivative=lambda **_: (RuntimeError, "derivative for aten::_histogramdd_bin_edges is not implemented"))
