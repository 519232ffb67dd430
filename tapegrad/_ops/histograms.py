"""Histograms: histc and histogram count elements in bins. PyTorch's histc records nothing for autograd;
its histogram records a node whose backward raises."""
import jax.numpy as jnp

from ._elementwise_math import _true_div
from ._registry import defop, KEEP


def edges_between(lo, hi, bins, dtype):
    """PyTorch's linspace(lo, hi, bins + 1) in `dtype`: the first half counted from lo, the rest back from hi."""
    lo, hi = jnp.asarray(lo, dtype), jnp.asarray(hi, dtype)
    step = (hi - lo) / jnp.asarray(bins, dtype)
    i = jnp.arange(bins + 1)
    return jnp.where(i < (bins + 1) // 2, lo + i.astype(dtype) * step, hi - (bins - i).astype(dtype) * step)


def _counts(a, edges, weight, searched):
    """The (weighted) count of a's elements in each bin between consecutive edges. searched: each element's bin
    found among the edges (PyTorch's histogram); else by linear interpolation in a's dtype (its histc)."""
    flat = a.reshape(-1)
    n = edges.shape[0] - 1
    lo, hi = edges[0], edges[-1]
    if searched:
        pos = jnp.searchsorted(edges, flat, side="right") - 1
    else:
        # PyTorch's multiply, then IEEE divide, each rounded to a's dtype (a multiply by the range's reciprocal,
        # XLA's way to divide by one value, puts elements near an edge into the next bin)
        pos = _true_div((flat - lo) * jnp.asarray(n, a.dtype), hi - lo).astype(jnp.int64)
    pos = jnp.where(pos >= n, n - 1, pos)   # the last bin holds its right edge too
    inside = (flat >= lo) & (flat <= hi)   # (NaN is never inside)
    w = jnp.ones_like(flat) if weight is None else weight.reshape(-1)
    # (half precision counts in float32: in its own dtype a count stops at 2048 (float16) or 256 (bfloat16);
    # PyTorch's does so per thread, so its counts past those depend on its thread count)
    wide = jnp.promote_types(a.dtype, jnp.float32)
    counts = jnp.zeros(n, wide).at[jnp.where(inside, pos, 0)].add(jnp.where(inside, w, 0).astype(wide))
    return counts.astype(a.dtype)


def _histogram(a, *args, bins, weighted, density):
    """(hist, bin_edges). bins: their number, the edges then lying evenly between args lo and hi; None: the
    edges are the tensor args[0]. weighted: the last arg is the elements' weights."""
    weight = args[-1] if weighted else None
    edges = edges_between(args[0], args[1], bins, a.dtype) if bins is not None else args[0]
    hist = _counts(a, edges, weight, True)
    if density:
        hist = hist / jnp.sum(hist) / jnp.diff(edges)
    return hist, edges


histc = defop("histc", lambda a, lo, hi, bins: _counts(a, edges_between(lo, hi, bins, a.dtype), None, False),
              dtype_rule=KEEP, diff=())
histogram = defop("histogram", _histogram, dtype_rule=KEEP, nout=2, node_name="torch::autograd::NotImplemented",
                  no_derivative=lambda **_: (RuntimeError, "derivative for aten::histogram is not implemented"))
