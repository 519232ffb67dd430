"""JAX functions as tapegrad ops, and tapegrad modules as JAX functions (`tapegrad.func.from_jax`, `to_jax`).

from_jax: a pure JAX function of a pytree of arrays becomes an op-table entry made on the fly (`Op`, not
registered in the table: it belongs to the function), so a call goes through `_dispatch.apply` like
any op: one equation on the tape, its VJP `jax.vjp` of the function, compiled into the step program,
recorded only in grad mode. One entry per (argument tree, non-array leaves, result tree).

to_jax: a module's forward, traced with its parameters and buffers swapped for the arrays of a params
dict (`func.functional_call` on tensors holding JAX values), is a pure function JAX can jit and grad.
"""
import functools
import re

import jax

from . import _dispatch
from ._ops._registry import KEEP, Op
from ._tensor import Tensor

__all__ = ["from_jax", "to_jax"]


def _is_tensor(x):
    return isinstance(x, Tensor)


class JaxFunction:
    """A JAX function called on tensors (pytrees of tensors in and out) as one differentiable op."""

    def __init__(self, fn, name):
        self.fn = fn
        self.name = name
        self._ops = {}      # (argument tree, constants, result tree) -> Op
        self._results = {}  # (argument tree, constants, argument avals) -> result tree
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=_is_tensor)
        tensors, consts = [], []
        for leaf in leaves:
            if isinstance(leaf, (jax.Array, Tensor)) or hasattr(leaf, "__array__") and hasattr(leaf, "dtype"):
                tensors.append(leaf if isinstance(leaf, Tensor) else Tensor._wrap(jax.numpy.asarray(leaf)))
                consts.append(_ARRAY)
            else:
                consts.append(leaf)
        consts = tuple(consts)
        try:
            hash(consts)
        except TypeError:
            raise TypeError(f"{self.name}: arguments that are not arrays are compiled into the op and must be "
                            "hashable (numbers, strings, tuples). Pass array data as tensors or jax.Arrays.") from None
        avals = tuple((tuple(t.shape), t.dtype) for t in tensors)
        out_tree = self._results.get((tree, consts, avals))
        if out_tree is None:
            out_tree = self._results[(tree, consts, avals)] = self._result_tree(tree, consts, tensors)
        op = self._ops.get((tree, consts, out_tree))
        if op is None:
            op = self._ops[(tree, consts, out_tree)] = self._op(tree, consts, out_tree)
        outs = _dispatch.apply(op, *tensors)
        return jax.tree_util.tree_unflatten(out_tree, outs if op.nout > 1 else (outs,))

    def _pure(self, tree, consts, arrays):
        it = iter(arrays)
        args, kwargs = jax.tree_util.tree_unflatten(tree, [next(it) if c is _ARRAY else c for c in consts])
        return self.fn(*args, **kwargs)

    def _result_tree(self, tree, consts, tensors):
        structs = [jax.ShapeDtypeStruct(tuple(t.shape), t.dtype.np) for t in tensors]
        out = jax.eval_shape(lambda *xs: self._pure(tree, consts, xs), *structs)
        leaves, out_tree = jax.tree_util.tree_flatten(out)
        if not leaves:
            raise RuntimeError(f"{self.name} returned no arrays: a function wrapped by tapegrad.func.from_jax must "
                               "return an array or a pytree of arrays.")
        return out_tree

    def _op(self, tree, consts, out_tree):
        nout = out_tree.num_leaves

        def fn(*arrays):
            leaves = jax.tree_util.tree_leaves(self._pure(tree, consts, arrays))
            return tuple(leaves) if nout > 1 else leaves[0]
        return Op(self.name, fn, dtype_rule=KEEP, nout=nout, node_name=_camel(self.name) + "Backward")

    def __repr__(self):
        return f"tapegrad.func.from_jax({self.name})"


_ARRAY = object()   # marks an argument leaf that is an op input


def _camel(name):
    parts = re.split(r"[^0-9A-Za-z]+", name)
    return "".join(p[:1].upper() + p[1:] for p in parts if p) or "JaxFunction"


def from_jax(fn, *, name=None):
    """`fn`, a pure JAX function of arrays (pytrees in and out), as a differentiable tapegrad function of tensors.

    The call is one op on the tape: gradients come from `jax.vjp(fn)`, the backward compiles with the rest
    of the step, and its grad_fn is named `<Fn>Backward` after `fn.__name__` (or `name`), as an
    autograd.Function's node is. Tensors, jax.Arrays and NumPy arrays among the arguments are op inputs;
    other leaves (numbers, strings) are constants of the op, so a new value compiles a new program.
    """
    if not callable(fn):
        raise TypeError(f"from_jax expects a JAX function, got {type(fn).__name__}")
    return JaxFunction(fn, name or getattr(fn, "__name__", None) or type(fn).__name__)


# ---- modules as JAX functions -------------------------------------------------------------------

def to_jax(module):
    """(fn, params, buffers): `fn(params, buffers, *args, **kwargs)` is `module(*args, **kwargs)` as a pure JAX
    function; params and buffers are dicts of jax.Arrays named as in `module.state_dict()` (no copies), kept
    apart as `func.stack_module_state` keeps them, so `jax.grad` differentiates `params` alone (buffers may
    be integers, which jax.grad refuses).

    Arguments and results are arrays (pytrees of them); `jax.jit`, `jax.grad` and `jax.vmap` apply. The
    module runs in its current train/eval mode; buffers it updates in place (BatchNorm's running statistics
    in training) are not returned, and random ops (dropout) draw from a key fixed when traced: export a
    module in eval() mode.
    """
    from .func import _to_arrays, _to_tensors, functional_call
    from .autograd._tracing import tracing
    params = {k: v.detach()._value for k, v in module.named_parameters()}
    buffers = {k: v._value for k, v in module.named_buffers()}

    def fn(params, buffers, *args, **kwargs):
        with tracing():
            tensors = {k: Tensor._wrap(jax.numpy.asarray(v)) for k, v in {**params, **buffers}.items()}
            return _to_arrays(functional_call(module, tensors, _to_tensors(args), _to_tensors(kwargs)))
    fn.__name__ = f"{type(module).__name__}_forward"
    return fn, params, buffers
