"""The backward interpreter: one walk over a graph's structure key, run by every tier.

`walk` reads a key (nodes in backward order, each with its backward signature and the wiring of its
gradients) and calls each node's VJP: eagerly as cached kernels (the first sight of a graph), traced into
one program (a structure seen again, a closed tape segment, a chunk of a long tape, `tapegrad.compile`),
or recorded as ops (`create_graph=True`). What differs between the tiers is only `call_node` and the
arithmetic of seeds and sums (`Arith`).
"""
import functools
import operator

import jax.numpy as jnp

from .. import _programs
from . import _saved


def node_backward(sid, out_avals):
    """f(kept_args, cotangents) -> grads of the differentiable args, for a node signature."""
    op, static, cast, diff, placeholders = _saved.SIGNATURES[sid]
    vjp = _saved.vjp_fn(op, static, cast, diff, len(placeholders))

    def run(kept, cts):
        kept = iter(kept)
        args = [next(kept) if p is None else (p if isinstance(p, type) else jnp.zeros(*p)) for p in placeholders]
        return vjp(args, cts)
    return run


@functools.lru_cache(maxsize=None)
def reads_result(sid):
    """Whether a node's recorded backward (create_graph) is its op's formula on the result (Op.result_backward):
    a one-output op differentiated in its first argument, that keeps every argument to compute the result again."""
    op, _, _, diff, placeholders = _saved.SIGNATURES[sid]
    return (op.result_backward is not None and op.nout == 1 and diff == (0,)
            and all(p is None for p in placeholders))


def result_backward(sid):
    """f(kept_args, result, cotangents) -> (gradient of argument 0,) by the op's formula on its result."""
    op, static, cast, _, _ = _saved.SIGNATURES[sid]
    formula, static = op.result_backward, dict(static)

    def run(kept, result, cts):
        args = [a.astype(cast) if cast is not None and hasattr(a, "astype") else a for a in kept]
        return (formula(cts[0], result, *args, **static).astype(kept[0].dtype),)
    return run


class Arith:
    """Seeds, zero cotangents and sums: traced into the enclosing program, or (eager tier) as kernels,
    so that every XLA program the engine runs is a counted one. sum_to(g, shape): see `sum_to_dims`."""

    def __init__(self, ones, zeros, add, sum_to):
        self.ones, self.zeros, self.add, self.sum_to = ones, zeros, add, sum_to


def sum_to_dims(got, shape):
    """PyTorch's engine takes a gradient of shape `got` for an output of `shape` when `shape` broadcasts to
    it (a tensor whose shape an in-place view op changed without history, see _graph.reshaped_edges), and sums
    it back to `shape`: the dims it sums (keeping them); None when `shape` does not broadcast to `got`."""
    lead = len(got) - len(shape)
    if lead < 0 or any(s != 1 and s != d for s, d in zip(shape, got[lead:])):
        return None
    return tuple(range(lead)) + tuple(lead + j for j, s in enumerate(shape) if s == 1 and got[lead + j] != 1)


def _sum_to(g, shape):
    dims = sum_to_dims(tuple(g.shape), tuple(shape))
    return (jnp.sum(g, dims, keepdims=True) if dims else g).reshape(shape)


def kernel_ones(shape, dtype):
    return _programs.kernel(("ones", tuple(shape), dtype), lambda: lambda: jnp.ones(shape, dtype))()


def kernel_zeros(shape, dtype):
    return _programs.kernel(("zeros", tuple(shape), dtype), lambda: lambda: jnp.zeros(shape, dtype))()


def kernel_add(a, b):
    return _programs.kernel(("add",), lambda: jnp.add)(a, b)


def kernel_sum_to(g, shape):
    return _programs.kernel(("sum_to", tuple(shape)), lambda: lambda g: _sum_to(g, shape))(g)


TRACED = Arith(jnp.ones, jnp.zeros, operator.add, _sum_to)
EAGER = Arith(kernel_ones, kernel_zeros, kernel_add, kernel_sum_to)


def walk(key, saved, seeds, existing, call_node, arith, hooks_for=None, node_hooks=None, carried=None):
    """Run the whole backward described by `key`; both the eager and the traced tier use this.

    call_node(i, sid, out_avals, kept, cotangents) -> the gradients of node i's differentiated arguments
    (None where a custom Function's backward returned None).
    A wiring entry (target, output, shape) or a root entry (target, output, aval, shape) sums the gradient
    it carries to `shape` first; a wiring entry (target, output, shape, message) raises RuntimeError(message)
    when a gradient comes (see _graph.reshaped_edges).
    existing: {target: array} grads to accumulate into (leaves by index -1-j, retained by (node, out)).
    hooks_for(i, cotangents) runs tensor hooks; node_hooks = (pre, post) runs grad_fn hooks (_node_hooks).
    carried: {leaf target: array} sums that leaves' gradients start from (a chunk of a longer walk: _chunked).
    Returns {target: new grad} for leaves (-1-j) and retained outputs ((i, k)).
    """
    node_keys, nleaves, root_key = key
    cts = [dict() for _ in node_keys]
    leaf_grads = dict(carried) if carried else {}
    add = arith.add

    def send(target, out, g):
        if target < 0:
            prev = leaf_grads.get(target)
            leaf_grads[target] = g if prev is None else add(prev, g)
        else:
            d = cts[target]
            prev = d.get(out)
            d[out] = g if prev is None else add(prev, g)

    for root, seed in zip(root_key, seeds):
        target, out, aval = root[:3]
        if target is None:
            continue   # a root pruned away: no wanted tensor lies below it
        if seed is None:
            seed = arith.ones(*aval)
        if len(root) > 3:   # the root's shape changed since its grad_fn ran (see _graph.reshaped_edges)
            seed = arith.sum_to(seed, root[3])
        send(target, out, seed)
    results = {}
    pos = 0
    for i, (sid, wiring, retained, out_avals) in enumerate(node_keys):
        node_cts = cts[i]
        if hooks_for is not None:
            node_cts = hooks_for(i, node_cts)
        if retained:
            for k in retained:
                g = node_cts.get(k)
                if g is None:
                    continue   # no gradient reached this output
                prev = existing.get((i, k))
                results[(i, k)] = g if prev is None else add(prev, g)
        if wiring is None:
            continue   # a capture node (see Graph): its incoming gradient is all that is wanted of it
        sig = _saved.SIGNATURES[sid]
        for k, (error, message) in _saved.missing_at(sid):
            if wiring[k] is not None:   # a gradient PyTorch's backward cannot compute is needed
                raise error(message)
        nkept = len(_saved.kept_positions(sid))
        kept = saved[pos:pos + nkept]
        pos += nkept
        nout = sig[0].nout
        if node_hooks is not None:
            node_cts = node_hooks[0](i, node_cts, nout)
        if nout == 1:
            ct_list = [node_cts[0]]
        elif sig[0].custom is not None:
            ct_list = [node_cts.get(k) for k in range(nout)]   # a Function decides (set_materialize_grads)
        else:
            ct_list = [node_cts[k] if k in node_cts else arith.zeros(*out_avals[k]) for k in range(nout)]
        grads = call_node(i, sid, out_avals, kept, ct_list)
        if node_hooks is not None:
            grads = node_hooks[1](i, grads, [node_cts.get(k) for k in range(nout)], sig[3])
        for w, g in zip(wiring, grads):
            if w is None or g is None:
                continue   # toward a node pruned away, or no gradient
            if type(w) is int:
                target, out = w, 0
            else:
                target, out = w[0], w[1]
                if len(w) > 3:   # a gradient PyTorch's engine refuses (_graph.reshaped_edges)
                    raise RuntimeError(w[3])
                if len(w) > 2:   # summed back to the shape of the output it goes to
                    g = arith.sum_to(g, w[2])
            send(target, out, g)
    for j, g in leaf_grads.items():
        prev = existing.get(j)
        results[j] = g if prev is None else add(prev, g)
    return results


def eager_vjp(sig, out_avals, kept, cts):
    """A node's VJP run as its cached kernel (the eager tier's call, and CopySlices hooks' inner node)."""
    return _programs.kernel(("vjp", sig, out_avals), lambda: node_backward(sig, out_avals))(kept, cts)


def traced_call(i, sig, out_avals, kept, cts):
    return node_backward(sig, out_avals)(kept, cts)
