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


def runner(nodes, as_tensor, from_tensor):
    """(pre, post) for `_walk.walk`: pre(i, cts, nout) -> cts; post(i, grads, cts, diff) -> grads.
    Arrays are wrapped into tensors for the hooks (as_tensor) and unwrapped after (from_tensor)."""
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
