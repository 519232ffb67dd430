"""grad_fn.register_prehook / register_hook: hooks on a node, run by the node-by-node backward.

A pre-hook sees the node's grad_outputs (one per output, None where no gradient arrived) before the node
runs and may return replacements; a post-hook sees (grad_inputs, grad_outputs) after it ran, grad_inputs
being one per next_functions entry (None where no gradient flows), and may return new grad_inputs. Tensor
hooks and retain_grad see a gradient before the node's pre-hooks, as in PyTorch.
"""
from ._hooks import RemovableHandle, _ids, checked_result


def register(node, hook, kind):
    """kind 0: pre-hook, 1: post-hook."""
    if node.seg is not None:
        node.seg.hooked = True   # the segment's single program would skip the hook: general path
    if node.fn_hooks is None:
        node.fn_hooks = ({}, {})
    key = next(_ids)
    node.fn_hooks[kind][key] = hook
    return RemovableHandle(node.fn_hooks[kind], key)


def _input_positions(node):
    """The arguments PyTorch lists in next_functions, in order (see Node.next_functions)."""
    optional = node.optional_inputs
    return [i for i, is_tensor in enumerate(node.tensor_args or ()) if is_tensor or i in optional]


def _replaced(hook, old, new):
    name = getattr(hook, "__name__", type(hook).__name__)
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but "
                           f"expected {len(old)})")
    out = []
    for before, after in zip(old, new):
        if after is None or before is None:
            if before is None and after is not None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            out.append(after)
        else:
            out.append(checked_result(hook, before, after))
    return tuple(out)


def runner(nodes, as_tensor, from_tensor, record_vjp=None):
    """(pre, post) for `_walk.walk`: pre(i, cts, nout) -> cts; post(i, grads, cts, diff) -> grads.
    Arrays are wrapped into tensors for the hooks (as_tensor) and unwrapped after (from_tensor).
    record_vjp(sig, out_avals, kept, cts) -> gradient tensors: given by a walk that records the backward
    (create_graph), which then records what CopySlices' post-hooks see too, so that it carries its history."""
    wrap = lambda v: None if v is None else as_tensor(v)
    unwrap = lambda t: None if t is None else from_tensor(t)

    def pre(i, node_cts, nout):
        hooks = nodes[i].fn_hooks
        if not hooks or not hooks[0]:
            return node_cts
        given = tuple(wrap(node_cts.get(k)) for k in range(nout))
        outs = given
        for hook in list(hooks[0].values()):
            new = hook(outs)
            if new is not None:
                outs = _replaced(hook, outs, new)
        # a gradient a hook set to None counts as zeros (PyTorch's undefined gradient)
        outs = [t if t is not None or g is None else g.new_zeros(g.shape) for t, g in zip(outs, given)]
        return {k: unwrap(t) for k, t in enumerate(outs) if t is not None}

    def post(i, grads, cts, diff):
        node = nodes[i]
        hooks = node.fn_hooks
        if not hooks or not hooks[1]:
            return grads
        by_arg = dict(zip(diff, grads))
        wrapped = _wrapped(node, by_arg)
        if wrapped is not None:
            return _copy_slices_post(node, wrapped, by_arg, cts, diff, wrap, unwrap, record_vjp)
        positions = _input_positions(node)
        ins = tuple(wrap(by_arg.get(p)) for p in positions)
        outs = tuple(wrap(c) for c in cts)
        for hook in list(hooks[1].values()):
            new = hook(ins, outs)
            if new is not None:
                ins = _replaced(hook, ins, new)
        new_by_arg = dict(zip(positions, ins))
        return [unwrap(new_by_arg.get(p)) if p in new_by_arg else by_arg[p] for p in diff]

    return pre, post


# ---- CopySlices: PyTorch's node runs the in-place op's node inside itself ---------------------------------------
# tapegrad records the in-place op on a view as its own node feeding CopySlices' values (Node.wraps), so
# CopySlices' own gradients are (base with the view's elements zeroed, values). PyTorch's post-hooks see one
# gradient per next_functions entry instead: the base's, the view's elements being the in-place op's gradient
# for the view, then that op's gradients for its other inputs. They are computed here, by running the inner
# node's backward once more; a hook's replacements reach the base through CopySlices and the other inputs
# through a one-shot post-hook on the inner node (whose gradient for the view is then zeros).

def _wrapped(node, by_arg):
    """The inner node of a CopySlices node whose gradients can be computed here, else None."""
    from ._node import Node
    if node.wraps is None or by_arg.get(node.wraps) is None or node.kept is None:
        return None
    edge = node.edges[node.wraps]
    inner = edge[0] if edge is not None else None
    if not isinstance(inner, Node) or inner.op is None or inner.op.custom is not None or inner.kept is None:
        return None
    return inner


def _array(x):
    from .._tensor import Tensor
    return x._value if isinstance(x, Tensor) else x


def _inner_grads(inner, values_ct, record_vjp):
    """{argument position: gradient} of the inner node's backward for the gradient of its output: arrays,
    or with record_vjp tensors whose history is the recorded backward (kept values with their edges)."""
    from . import _saved
    from ._walk import eager_vjp
    from .graph import unpacked
    from .._lazy import resolve_all
    sig, out_avals = inner.sig, inner.avals if inner.op.nout > 1 else None   # as the graph's key has them
    if record_vjp is None:
        kept = [unpacked(inner.kept[k]) for k in _saved.kept_positions(sig)]
        grads = eager_vjp(sig, out_avals, resolve_all(kept), [values_ct])
    else:
        from ._higher import kept_entries
        grads = record_vjp(sig, out_avals, kept_entries(inner), [values_ct])
    return dict(zip(_saved.SIGNATURES[sig][3], grads))


def _base_grad(node, base, view_grad, record_vjp):
    """The base's gradient with the view's elements replaced by the inner node's gradient for the view."""
    import jax.numpy as jnp
    from .._lazy import resolve_all
    from .._tensor import Tensor
    from .._views import scatter_into
    from . import _saved
    from .graph import unpacked
    steps = dict(_saved.SIGNATURES[node.sig][1])["steps"]
    positions = resolve_all([unpacked(a) for a in node.kept[2:]])
    if record_vjp is None:
        base = _array(base) if base is not None else jnp.zeros(node.avals[0][0], view_grad.dtype)
        return Tensor._wrap(scatter_into(steps, base, view_grad, positions))
    from .._dispatch import apply
    from .._ops.indexing import copy_slices
    if base is None:
        base = view_grad.new_zeros(node.avals[0][0])
    positions = [Tensor._wrap(p) if hasattr(p, "shape") else p for p in positions]   # arrays, or scalars
    return apply(copy_slices, base, view_grad, *positions, steps=steps)


def _copy_slices_post(node, inner, by_arg, cts, diff, wrap, unwrap, record_vjp):
    from .._tensor import Tensor
    as_hooked = lambda a: a if a is None or isinstance(a, Tensor) else Tensor._wrap(a)
    values_ct = by_arg[node.wraps]
    inner_grads = _inner_grads(inner, values_ct if record_vjp is not None else _array(values_ct), record_vjp)
    inner_positions = _input_positions(inner)
    base = by_arg.get(0)
    view_grad = inner_grads.get(inner_positions[0])
    if view_grad is not None:
        base = _base_grad(node, base, view_grad, record_vjp)
    else:
        base = wrap(base) if base is not None else None
    ins = (base,) + tuple(as_hooked(inner_grads.get(p)) for p in inner_positions[1:])
    outs = tuple(wrap(c) for c in cts)
    given = ins
    for hook in list(node.fn_hooks[1].values()):
        new = hook(ins, outs)
        if new is not None:
            ins = _replaced(hook, ins, new)
    if ins is given:
        return [by_arg[p] for p in diff]
    _hand_on(inner, (None,) + ins[1:])
    return [(None if ins[0] is None else unwrap(ins[0])) if p == 0 else by_arg[p] for p in diff]


def _hand_on(inner, grads):
    """The inner node's next run hands on `grads` (one per next_functions entry) instead of its own."""
    def once(ins, outs):
        handle.remove()
        view = None if ins[0] is None else ins[0].new_zeros(ins[0].shape)   # (the walk expects a gradient there)
        return (view,) + tuple(g if i is not None else None for g, i in zip(grads[1:], ins[1:]))
    handle = register(inner, once, 1)
