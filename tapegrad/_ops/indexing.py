"""Indexing: __getitem__ / __setitem__ over a hashable index spec.

The spec encodes ints, slices, None and Ellipsis statically; integer/bool tensor
indices are positional array arguments (marked by "T" in the spec).
"""
import jax.numpy as jnp

from ._registry import defop, KEEP


def build_index(spec, arrays):
    arrays = iter(arrays)
    out = []
    for s in spec:
        if s == "T":
            out.append(next(arrays))
        elif type(s) is tuple:
            out.append(slice(*s))
        else:
            out.append(s)
    return tuple(out)


def _getitem(a, *arrays, spec):
    return a[build_index(spec, arrays)]


def _setitem(a, v, *arrays, spec):
    idx = build_index(spec, arrays)
    return a.at[idx].set(jnp.asarray(v, a.dtype) if not hasattr(v, "dtype") else v.astype(a.dtype))


# Basic indexing is a view; PyTorch names the node after the last view op it applies.
select = defop("select", _getitem, dtype_rule=KEEP, diff=(0,), view=True)
slice_ = defop("slice", _getitem, dtype_rule=KEEP, diff=(0,), view=True)
index_unsqueeze = defop("index_unsqueeze", _getitem, dtype_rule=KEEP, diff=(0,), view=True, node="unsqueeze")
index_alias = defop("index_alias", _getitem, dtype_rule=KEEP, diff=(0,), view=True, node="alias")
index = defop("index", _getitem, dtype_rule=KEEP, diff=(0,))
index_put = defop("index_put", _setitem, dtype_rule=KEEP, diff=(0, 1), node_name="CopySlices")


def _copy_slices(base, new, steps):
    from .._views import scatter_into
    return scatter_into(steps, base, new)


def _replay(base, steps):
    from .._views import compose
    return compose(steps)(base)


# Writing through a view of a tensor in the graph: one node on the base (PyTorch's CopySlices),
# and the view's history rebased as a fresh view of the new base.
copy_slices = defop("copy_slices", _copy_slices, dtype_rule=KEEP, node_name="CopySlices")
view_replay = defop("view_replay", _replay, dtype_rule=KEEP, node="as_strided")
