"""torch.func's transforms are transparent to autograd: `vmap(f)(x)` of tensors that require grad gives results
that do too, and `loss.backward()` through them reaches those tensors (model ensembling, per-sample losses).

A transform's program runs on arrays (see func), which the tape never sees. Where autograd wants its results,
the call is recorded as one op on the tape over the tensors it reads (the arguments' and those the function
reads from outside them, as the program's inputs): its VJP is `jax.vjp` of the transformed function, as for
any op. The results keep the values the program computed; the op's forward is not run again.
"""
import jax
from jax._src.interpreters.partial_eval import dce_jaxpr

from . import _dispatch, _lazy
from ._grad_mode import _state
from ._lru import LRU
from ._ops._registry import KEEP, Op
from ._tensor import Tensor

_ops = LRU(512)   # (the transform's compiled key, argument structure, its constants) -> (Op, its _dependence)
_TENSOR = object()   # marks an argument leaf that is a tensor (an input of the op)


def _is_tensor(x):
    return isinstance(x, Tensor)


def wanted(captured, args):
    """Whether autograd records the call: grad mode on, outside any trace, and a tensor it reads requires grad."""
    if not _state.grad_enabled or _dispatch.CAPTURE[0] is not None:
        return False
    leaves = jax.tree_util.tree_leaves(args, is_leaf=_is_tensor)
    return any(t._requires_grad for t in list(captured) + [x for x in leaves if _is_tensor(x)])


def recorded(key, name, program, captured, args, out):
    """The transform's results `out` (arrays) as tensors recorded on the tape: one op over `captured` and the
    tensors in `args` (a pytree, dicts as func's _InOrder), computing program(captured values, *argument arrays)."""
    leaves, tree = jax.tree_util.tree_flatten(args, is_leaf=_is_tensor)
    consts = tuple(_TENSOR if _is_tensor(x) else x for x in leaves)
    out_leaves, out_tree = jax.tree_util.tree_flatten(out)
    if not out_leaves or not all(isinstance(x, jax.Array) for x in out_leaves):
        return out
    try:
        op_key = (key, tree, consts, out_tree, len(captured))
        made = _ops.get(op_key)
    except TypeError:   # (an unhashable constant among the arguments: the results stay off the tape)
        return out
    tensors = list(captured) + [x for x in leaves if _is_tensor(x)]
    if made is None:
        op = _op(name, program, tree, consts, len(captured), out_tree)
        made = _ops.put(op_key, (op, _dependence(op, tensors)))
    op, depends = made
    requiring = [t._requires_grad for t in tensors]
    if not any(any(r for r, d in zip(requiring, row) if d) for row in depends):
        return out   # (no result depends on a tensor that requires grad: none requires grad, as PyTorch's)
    results = _dispatch.apply(op, *tensors)
    results = results if op.nout > 1 else (results,)
    kept = []
    for t, value, row in zip(results, out_leaves, depends):   # (the program computed them: the op need not run)
        pending = t._peek()
        if type(pending) is _lazy.Pending:
            _lazy._set_results(pending.node, (pending.index,), (value,))
        # a result that depends on no tensor requiring grad does not require grad
        kept.append(t if any(r for r, d in zip(requiring, row) if d) else Tensor._wrap(value))
    return jax.tree_util.tree_unflatten(out_tree, kept)


def _dependence(op, tensors):
    """Per result, per input: whether the result's value depends on the input (an unused input, or a gradient
    of a linear function, which its argument does not reach)."""
    specs = [jax.ShapeDtypeStruct(tuple(t.shape), t.dtype.np) for t in tensors]
    closed = jax.make_jaxpr(op.fn)(*specs)
    rows = []
    for k in range(op.nout):
        _, used = dce_jaxpr(closed.jaxpr, [i == k for i in range(op.nout)])
        rows.append(tuple(used))
    return tuple(rows)


def _op(name, program, tree, consts, n_captured, out_tree):
    nout = out_tree.num_leaves

    def fn(*arrays):
        values, rest = arrays[:n_captured], iter(arrays[n_captured:])
        args = jax.tree_util.tree_unflatten(tree, [next(rest) if c is _TENSOR else c for c in consts])
        out = jax.tree_util.tree_leaves(program(list(values), *args))
        return tuple(out) if nout > 1 else out[0]
    # (named as from_jax's ops: `<Transform>Backward`, without PyTorch's 0, never read as a built-in op)
    return Op(name, fn, dtype_rule=KEEP, nout=nout, node_name=name[:1].upper() + name[1:] + "Backward")
