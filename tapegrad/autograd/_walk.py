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
    so that every XLA program the engine runs is a counted one."""

    def __init__(self, ones, zeros, add):
        self.ones, self.zeros, self.add = ones, zeros, add


def kernel_ones(shape, dtype):
    return _programs.kernel(("ones", tuple(shape), dtype), lambda: lambda: jnp.ones(shape, dtype))()


def kernel_zeros(shape, dtype):
    return _programs.kernel(("zeros", tuple(shape), dtype), lambda: lambda: jnp.zeros(shape, dtype))()


def kernel_add(a, b):
    return _programs.kernel(("add",), lambda: jnp.add)(a, b)


TRACED = Arith(jnp.ones, jnp.zeros, operator.add)
EAGER = Arith(kernel_ones, kernel_zeros, kernel_add)


def walk(key, saved, seeds, existing, call_node, arith, hooks_for=None, node_hooks=None, carried=None):
    """Run the whole backward described by `key`; both the eager and the traced tier use this.

    call_node(i, sid, out_avals, kept, cotangents) -> the gradients of node i's differentiated arguments
    (None where a custom Function's backward returned None).
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

    for (target, out, aval), seed in zip(root_key, seeds):
        if target is None:
            continue   # a root pruned away: no wanted tensor lies below it
        if seed is None:
            seed = arith.ones(*aval)
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
            target, out = (w, 0) if type(w) is int else w
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
