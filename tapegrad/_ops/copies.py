"""Copies of views. PyTorch's `*_copy` functions (view_copy, select_copy...) compute what a view op reads
into a new tensor and record a node named after the view's with `_copy` (ViewBackward0_copy); narrow_copy
and the unsafe splits are such copies under their own names. Each entry reuses its view's function."""
import jax.numpy as jnp

from . import bitcast as B, indexing as I, shape as S
from ._registry import defop, overload, KEEP


def copy_of(view, name=None, node_name=None, overload_names=None):
    """An entry computing `view`'s result as a new tensor; its node (and its overloads') named with `_copy`
    unless named here."""
    overload_names = overload_names or {}
    overloads = [overload(overload_names.get(o.node_name, o.node_name + "_copy"), o.args, o.optional, **o.statics)
                 for o, _ in view.overloads]
    op = defop(name or view.name + "_copy", view.fn, dtype_rule=KEEP, diff=view.diff,
               node_name=node_name or view.node_name + "_copy", overloads=overloads)
    op.elements_from = (0,) if view.value_view is None else None
    return op


# the view op each copy computes, by the view's op-table name
COPIES = {view.name: copy_of(view) for view in (
    S.view, S.t, S.transpose, S.permute, S.expand, S.squeeze, S.unsqueeze, I.select, I.slice_, S.diagonal, S.alias,
    S.unbind, S.split, S.as_strided, B.view_as_real, B.view_as_complex)}
COPIES[S.unfold.name] = copy_of(S.unfold, "unfold_copy")
narrow_copy = copy_of(I.slice_, "narrow_copy", "NarrowCopyBackward0")
unsafe_split = copy_of(S.split, "unsafe_split", "UnsafeSplitBackward0",
                       {"SplitWithSizesBackward0": "UnsafeSplitWithSizesBackward0"})
# PyTorch records detach_copy in the graph with a node whose backward raises
detach_copy = defop("detach_copy", lambda a: a + jnp.zeros((), a.dtype), dtype_rule=KEEP,
                    node_name="torch::autograd::NotImplemented",
                    no_derivative=lambda **_: (RuntimeError, "derivative for aten::detach_copy is not implemented"))
detach_copy.elements_from = (0,)
