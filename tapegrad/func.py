"""tapegrad.func (PyTorch's torch.func): function transforms over JAX's own transforms.

A function of Tensors is traced into one pure JAX function (see autograd._tracing): its tensor
arguments and results become arrays, and `jax.grad`, `jax.vjp`, `jax.jvp`, `jax.jacrev`,
`jax.jacfwd`, `jax.hessian` and `jax.vmap` transform it. Transforms nest (`vmap(grad(f))`) because
a transformed function is again a function of Tensors. A transformed function is compiled once per
argument shapes, with the tensors it reads from outside its arguments (a module's parameters) as
inputs of the program, so a nested composition (a per-sample gradient) is one program; functions that
draw random numbers or write tensors in place run op by op. The function must be pure over its arguments:
values read in Python (`.item()`) cannot be traced and raise (under torch.func only inside a vmap). Misuse
raises torch.func's errors (_func_checks), before JAX would raise its own.
"""
import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from . import _dispatch, _func_checks, _func_eager, _func_tape, _programs, _value_checks
from . import random as _random
from .autograd import _function_transforms
from .autograd._tracing import TRACER_ERRORS, Identity, Untraceable, discover, swapped, tracing
from ._jax_function import from_jax, to_jax  # noqa: E402,F401  (JAX functions as ops, modules as JAX functions)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "linearize", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize", "debug_unwrap",
           "from_jax", "to_jax"]


def _is_tensor(x):
    from ._tensor import Tensor
    return isinstance(x, Tensor)


class _InOrder(dict):
    """A dict as a pytree that keeps its keys' order: JAX's dict node sorts them, and torch.func's results
    keep the order of the dicts given (a gradient dict reads as model.named_parameters())."""


jax.tree_util.register_pytree_node(_InOrder, lambda d: (tuple(d.values()), tuple(d.keys())),
                                   lambda keys, values: _InOrder(zip(keys, values)))


def _in_order(tree):
    """tree with its dicts as _InOrder (through lists and tuples)."""
    kind = type(tree)
    if kind is dict:
        return _InOrder((k, _in_order(v)) for k, v in tree.items())
    if kind is list or kind is tuple:
        return kind(_in_order(v) for v in tree)
    return tree


def _as_dicts(tree):
    kind = type(tree)
    if kind is _InOrder:
        return {k: _as_dicts(v) for k, v in tree.items()}
    if kind is list or kind is tuple:
        return kind(_as_dicts(v) for v in tree)
    return tree


def _spec(tree):
    """A pytree's structure as torch's treespec_pprint writes it, leaves as *."""
    kind = type(tree)
    if kind is dict or kind is _InOrder:
        return "{" + ", ".join(f"{k!r}: {_spec(v)}" for k, v in tree.items()) + "}"
    if kind is list:
        return "[" + ", ".join(map(_spec, tree)) + "]"
    if kind is tuple:
        return "(" + ", ".join(map(_spec, tree)) + ("," if len(tree) == 1 else "") + ")"
    return "*"


def _same_structure(a, b):
    return jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)


def _to_arrays(tree):
    return jax.tree_util.tree_map(lambda x: x._value if _is_tensor(x) else x, _in_order(tree), is_leaf=_is_tensor)


def _to_tensors(tree):
    from ._tensor import Tensor
    return _as_dicts(jax.tree_util.tree_map(lambda x: Tensor._wrap(x) if isinstance(x, jax.Array) else x, tree))


def _on_arrays(func, kwargs=None, captured=(), values=(), on_arguments=None, kinds=(), check=None):
    """func over Tensors as a pure function over arrays (pytrees in, pytrees out); the tensors it reads from
    outside (`captured`) are read as `values` while it is traced. `kinds`: the transform it is traced for
    ("reverse", "forward", "vmap"), which decides how an autograd.Function inside runs. `check(result)`: the
    transform's checks of what func returns (PyTorch's errors, raised before JAX's)."""
    kwargs = kwargs or {}

    def pure(*arrays):
        with tracing(on_arguments=on_arguments), swapped(captured, values), _function_transforms.under(kinds):
            out = func(*_to_tensors(arrays), **kwargs)
            if check is not None:
                check(out)
            return _to_arrays(out)
    return pure


# (transform, function state, argument avals) -> (jitted, captured's places, check keys, [tensors read], anchors)
_compiled = _programs.bounded_cache()


_KINDS = {"grad": ("reverse",), "jvp": ("forward",), "jacrev": ("reverse",), "jacfwd": ("vmap", "forward"),
          "vmap": ("vmap",)}


def _transformed(name, func, kwargs, args, make, check=None):
    """make(pure)(*argument arrays), compiled once per function and argument shapes: the tensors func reads
    from outside its arguments are inputs of the program, so their current values are used at every call.
    Functions that draw random numbers or write in place run op by op instead."""
    arrays = _to_arrays(args)
    kinds = _KINDS[name[0]]
    leaves = jax.tree_util.tree_leaves(arrays)
    entry = None
    # (inside an enclosing trace, a transform within a transform, the call is traced into that program)
    if _dispatch.CAPTURE[0] is None and all(isinstance(x, jax.Array) for x in leaves):
        state = Identity(func)
        key = (name, tuple(_function_transforms.ACTIVE), state.key, jax.tree_util.tree_structure(arrays),
               tuple((x.shape, x.dtype) for x in leaves), tuple(sorted(kwargs.items())))
        try:
            entry = _compiled.get(key)
            if entry is None:
                jitted, captured, keys, reading = _compile(func, kwargs, arrays, make, kinds, check)
                entry = _compiled.put(key, (jitted, captured and state.places(captured), keys, reading,
                                            state.anchors))
        except TypeError:   # unhashable static parts: op by op
            entry = None
    if entry is None or entry[0] is None:
        checked, keys = _checked(make(_on_arrays(func, kwargs, kinds=kinds, check=check)))
        error, out = checked(*arrays)
    else:
        jitted, places, keys, reading, _ = entry
        captured = reading[0] = state.recapture(places)   # (should JAX trace it again: this call's tensors)
        error, out = jitted([t._value for t in captured], *arrays)
        _value_checks.raise_failed(error, keys)
        if _func_tape.wanted(captured, args):   # (transparent to autograd, as torch.func's transforms)
            def program(values, *xs):
                reading[0] = state.recapture(places)   # (the tensors func reads when the op is traced)
                return make(_on_arrays(func, kwargs, reading[0], values, kinds=kinds, check=check))(*xs)
            return _func_tape.recorded(key, name[0], program, captured, _in_order(args), out)
        return out
    _value_checks.raise_failed(error, keys)
    return out


def _checked(fn):
    """fn traced under checkify: PyTorch's checks on values (an index within its table, a class target in
    range) run inside the program, even on a batch under vmap. Returns (the checkified function, which returns
    (checkify error, fn's result), and the list its trace fills with its checks' keys)."""
    keys = []

    def traced(*xs):
        with _value_checks.deferred(keys):
            return fn(*xs)
    return checkify.checkify(traced, errors=checkify.user_checks), keys


def _with_error(fn, has_aux):
    """fn checked (_checked), returning (result, (checkify error, fn's aux or None)): jax.vjp and jax.linearize
    differentiate the result and hand the rest back; and the list of its checks' keys."""
    checked, keys = _checked(fn)

    def pure(*xs):
        error, out = checked(*xs)
        return (out[0], (error, out[1])) if has_aux else (out, (error, None))
    return pure, keys


def _compile(func, kwargs, arrays, make, kinds, check=None):
    def trace(capture, *xs):
        return _checked(make(_on_arrays(func, kwargs, on_arguments=capture, kinds=kinds, check=check)))[0](*xs)[1]
    try:
        _, captured = discover(trace, jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                                                             arrays))
    except (Untraceable,) + TRACER_ERRORS:
        return None, None, None, None
    reading = [captured]   # the tensors the program reads as `values`: the current call's

    def program(values, *xs):
        return make(_on_arrays(func, kwargs, reading[0], values, kinds=kinds, check=check))(*xs)
    checked, keys = _checked(program)
    return jax.jit(checked), captured, keys, reading


def _argnums(argnums, args):
    """The argnums checked as PyTorch checks them, and the arguments they pick checked as differentiable."""
    nums = _func_checks.argnums(argnums, len(args))
    _func_checks.differentiable(tuple(args[n] for n in nums) if isinstance(nums, tuple) else args[nums])
    return nums


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient, value) of a function returning a scalar tensor."""
    def check(out):
        value, aux = _func_checks.with_aux("grad_and_value(f)(*args)", out, has_aux)
        _func_checks.scalar_output(value)
        if has_aux:
            _func_checks.tensor_aux(aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, args)
        try:
            with _func_checks.explained("grad"):
                value, g = _transformed(("grad", nums, has_aux), func, kwargs, args,
                                        lambda pure: jax.value_and_grad(pure, nums, has_aux=has_aux), check)
        except _func_checks.ReadsValues:   # (it reads values in Python: eagerly, as PyTorch's grad runs)
            return _func_eager.grad_and_value(func, args, kwargs, nums, has_aux, check)
        return _to_tensors(g), _to_tensors(value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a function returning a scalar tensor, w.r.t. argument(s) `argnums`."""
    both = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


_VJP = "vjp(f, *primals)"
_JVP = "jvp(f, primals, tangents)"


def _outputs_checked(api, has_aux):
    """What torch.func checks of a vjp's or jvp's function results: (output, aux) with has_aux, tensors."""
    def check(out):
        value, aux = _func_checks.with_aux(api, out, has_aux)
        _func_checks.tensor_outputs(api, value)
        if has_aux:
            _func_checks.tensor_aux(aux)
    return check


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives one gradient per primal."""
    _func_checks.differentiable(primals)
    check = _outputs_checked(_VJP, has_aux)
    pure, keys = _with_error(_on_arrays(func, kinds=("reverse",), check=check), has_aux)
    try:
        with _func_checks.explained("grad"):
            out, pullback, (error, aux) = jax.vjp(pure, *_to_arrays(primals), has_aux=True)
    except _func_checks.ReadsValues:   # (it reads values in Python: eagerly, as PyTorch's vjp runs)
        return _func_eager.vjp(func, primals, has_aux, check, _spec)
    _value_checks.raise_failed(error, keys)

    def forward(*xs):   # (the function's output alone: what the tape records)
        result = _on_arrays(func, kinds=("reverse",))(*xs)
        return result[0] if has_aux else result

    def vjp_fn(*cotangents):
        given = cotangents[0] if len(cotangents) == 1 else cotangents
        cts = _to_arrays(given)
        if not _same_structure(cts, out):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_spec(given)}, primal output: {_spec(out)}")
        grads = pullback(_as_outputs(cts, out))
        if _func_tape.wanted((), (primals, given)):
            def backward(values, primal_arrays, ct_arrays):
                return jax.vjp(forward, *primal_arrays)[1](_as_outputs(ct_arrays, out))
            # (a fresh key per call: the function's closure is read as constants when the op is traced)
            grads = _func_tape.recorded(object(), "vjp", backward, [], _in_order((primals, given)), grads)
        return _to_tensors(grads)
    result = out
    if _func_tape.wanted((), primals):   # (transparent to autograd, as torch.func.vjp)
        result = _func_tape.recorded(object(), "vjp", lambda values, *xs: forward(*xs), [], _in_order(primals), out)
    if has_aux:
        return _to_tensors(result), vjp_fn, _to_tensors(aux)
    return _to_tensors(result), vjp_fn


def _as_outputs(cotangents, outputs):
    """Cotangents checked against the outputs' shapes and cast to their dtypes, as autograd.grad does."""
    flat, tree = jax.tree_util.tree_flatten(cotangents)
    outs = jax.tree_util.tree_leaves(outputs)
    for i, (c, o) in enumerate(zip(flat, outs)):
        if tuple(c.shape) != tuple(o.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(c.shape)}) and "
                               f"output[{i}] has a shape of torch.Size({list(o.shape)}).")
    return jax.tree_util.tree_unflatten(tree, [c.astype(o.dtype) for c, o in zip(flat, outs)])


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the derivative along `tangents`): forward mode, by jax.jvp."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    if _func_checks.spec(primals) != _func_checks.spec(tangents):
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{_func_checks.spec(primals)} and tangents with structure {_func_checks.spec(tangents)}")
    _func_checks.primals(_JVP, primals)
    _func_checks.primals(_JVP, tangents, "tangents")
    _tangent_shapes(primals, tangents)
    with _func_checks.explained("jvp"):
        result = _transformed(("jvp", has_aux), func, {}, (primals, _tangents_cast(primals, tangents)),
                              lambda pure: lambda p, t: jax.jvp(pure, p, t, has_aux=has_aux),
                              _outputs_checked(_JVP, has_aux))
    return tuple(_to_tensors(r) for r in result)


def _tangent_shapes(primals, tangents):
    for p, t in zip(_func_checks.leaves(primals), _func_checks.leaves(tangents)):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")


def _tangents_cast(primals, tangents):
    """Tangents in their primals' dtypes (JAX requires it; PyTorch's dual tensors convert them too)."""
    # (as _InOrder: JAX's dict node would hand the dicts back with their keys sorted)
    return _as_dicts(jax.tree_util.tree_map(lambda t, p: t if t.dtype is p.dtype else t.to(p.dtype),
                                            _in_order(tangents), _in_order(primals), is_leaf=_is_tensor))


def _jacobian(transform, api):
    def make(func, argnums=0, has_aux=False, *, chunk_size=None, randomness=None):
        if transform is jax.jacrev and not (chunk_size is None or chunk_size > 0):
            raise ValueError("jacrev: `chunk_size` should be greater than 0.")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            nums = _func_checks.argnums(argnums, len(args))
            picked = tuple(args[n] for n in nums) if isinstance(nums, tuple) else args[nums]
            run = transform
            if transform is jax.jacfwd:   # (forward mode: its function runs under a vmap over the basis)
                _func_checks.randomness(randomness)
                _func_checks.primals(_JVP, picked)
                levels = _random.vmap_level(randomness, None)
                if randomness == "different":   # (the levels are the vmap's own: each column its index)
                    run, levels = _jacfwd_per_column, contextlib.nullcontext()
            else:
                _func_checks.differentiable(picked)
                levels = contextlib.nullcontext()
            with _func_checks.explained(transform.__name__), levels:
                out = _transformed((transform.__name__, nums, has_aux, randomness), func, kwargs, args,
                                   lambda pure: run(pure, nums, has_aux=has_aux), _outputs_checked(api, has_aux))
            return _to_tensors(out)
        return wrapper
    return make


_jacrev, _jacfwd = _jacobian(jax.jacrev, _VJP), _jacobian(jax.jacfwd, _JVP)


def _jacfwd_per_column(pure, nums, has_aux=False):
    """jax.jacfwd as PyTorch's jacfwd(randomness="different") computes it: one JVP per input element (a basis
    column) under a vmap whose random draws fold in the column's index, so each column of the Jacobian comes
    from draws of its own; aux is the first column's, as PyTorch's."""
    several = isinstance(nums, tuple)

    def jacobian(*args):
        picked = tuple(args[n] for n in nums) if several else args[nums]
        leaves, tree = jax.tree_util.tree_flatten(picked)
        sizes = [int(np.size(x)) for x in leaves]
        starts = np.cumsum([0] + sizes)
        total = int(starts[-1])
        basis = [jnp.eye(total, dtype=x.dtype)[:, a:a + n].reshape((total,) + x.shape)
                 for x, a, n in zip(leaves, starts, sizes)]

        def at(dyn):
            full = list(args)
            for n, value in (zip(nums, dyn) if several else ((nums, dyn),)):
                full[n] = value
            return pure(*full)

        def push(index, columns):
            with _random.vmap_level("different", index):
                return jax.jvp(at, (picked,), (tree.unflatten(columns),), has_aux=has_aux)[1:]

        jac, *aux = jax.vmap(push)(np.arange(total, dtype=np.int32), basis)

        def unravel(out):   # (columns, *out_shape) -> per input, (*out_shape, *input_shape)
            moved = jnp.moveaxis(out, 0, -1)
            return tree.unflatten([moved[..., a:a + n].reshape(out.shape[1:] + x.shape)
                                   for x, a, n in zip(leaves, starts, sizes)])
        jac = jax.tree_util.tree_map(unravel, jac)
        return (jac, jax.tree_util.tree_map(lambda x: x[0], aux[0])) if has_aux else jac
    return jacobian


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode (one VJP per output element, vectorised). chunk_size is checked as PyTorch
    checks it; the VJPs run in one vectorised program whatever it says (the same Jacobian)."""
    return _jacrev(func, argnums, has_aux, chunk_size=chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode (one JVP per input element, vectorised). A function that draws random numbers
    runs with randomness "error" (PyTorch's default: it raises), "same" (one draw for every column) or
    "different" (each column of the Jacobian its own draws)."""
    return _jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    """The Hessian of a scalar function: forward over reverse, as torch.func.hessian."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """(func(*primals), jvp_fn) with the linearisation computed once."""
    pure, keys = _with_error(_on_arrays(func, kinds=("forward",)), False)
    with _func_checks.explained("jvp"):
        out, f_jvp, (error, _) = jax.linearize(pure, *_to_arrays(primals), has_aux=True)
    _value_checks.raise_failed(error, keys)
    forward = _on_arrays(func, kinds=("forward",))   # (what the tape records: transparent to autograd)

    at = _to_arrays(primals)

    def jvp_fn(*tangents):
        result = f_jvp(*_to_arrays(tangents))
        if _func_tape.wanted((), tangents):   # (linear in the tangents; the primals are the point, constants)
            def pushforward(values, *tangent_arrays):
                return jax.jvp(forward, tuple(at), tuple(tangent_arrays))[1]
            result = _func_tape.recorded(object(), "linearize", pushforward, [], _in_order(tangents), result)
        return _to_tensors(result)
    if _func_tape.wanted((), primals):
        out = _func_tape.recorded(object(), "linearize", lambda values, *xs: forward(*xs), [], _in_order(primals),
                                  out)
    return _to_tensors(out), jvp_fn


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a batch dimension of its arguments (in_dims, out_dims and randomness as torch.func.vmap).
    randomness: "error" refuses draws inside func, "same" draws one value for the whole batch, "different" one
    per element. chunk_size: map that many elements at a time (less memory), the results concatenated."""
    _func_checks.randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _func_checks.out_dims(out_dims, func)
        size, flat = _func_checks.in_dims(in_dims, args, func)
        if chunk_size is not None and chunk_size < size:
            return _chunked(mapped, args, kwargs, flat, size, chunk_size, out_dims, randomness)
        return mapped(args, kwargs, size, flat)

    def mapped(args, kwargs, size, flat):
        axes = _axes_like(args, iter(flat))

        def check(out):
            _func_checks.results(out, out_dims, func)

        def make(pure):
            if randomness != "different":
                def run(*xs):
                    with _random.vmap_level(randomness, None):
                        return pure(*xs)
                return jax.vmap(run, in_axes=axes, out_axes=_in_order(out_dims))

            def batched(index, *xs):   # (index: the element's position, which its draws fold in)
                with _random.vmap_level(randomness, index):
                    return pure(*xs)
            over_batch = jax.vmap(batched, in_axes=(0,) + axes, out_axes=_in_order(out_dims))
            return lambda *xs: over_batch(np.arange(size, dtype=np.int32), *xs)
        with _func_checks.explained("vmap"):
            try:
                out = _transformed(("vmap", tuple(flat), out_dims, randomness), func, kwargs, args, make, check)
            except ValueError as e:   # (jax.vmap's: an out_dim of None for a result that the map batched)
                if "out_axes" not in str(e) or "batched" not in str(e):
                    raise
                raise ValueError(f"vmap({_func_checks.name(func)}, ...): `{_func_checks.name(func)}` can not "
                                 "return a BatchedTensor when out_dim is None") from None
        return _to_tensors(out)
    return wrapper


def _chunked(mapped, args, kwargs, flat, size, chunk_size, out_dims, randomness):
    """PyTorch's chunked vmap: the batch mapped chunk_size elements at a time, each result concatenated along
    its out_dim; with randomness "same" every chunk draws what the first drew."""
    from ._functional._joins import cat
    from .random import default_generator
    leaves = _func_checks.leaves(args)
    state = default_generator._snapshot() if randomness == "same" else None
    outs = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        if state is not None:
            default_generator._restore(state)
        part = [x if d is None else x.narrow(d, start, n) for x, d in zip(leaves, flat)]
        outs.append(mapped(_func_checks.rebuilt(args, iter(part)), kwargs, n, flat))
    dims = [out_dims[0] if isinstance(out_dims, tuple) else out_dims] if _is_tensor(outs[0]) else (
        _func_checks.broadcast_leaves(out_dims, outs[0]))
    pieces = zip(*(_func_checks.leaves(o) for o in outs))
    joined = [p[0] if d is None else cat(p, d) for p, d in zip(pieces, dims)]
    return _func_checks.rebuilt(outs[0], iter(joined))


def _axes_like(args, dims):
    """The in_axes JAX takes for `args` (the structure _in_order gives them), from PyTorch's flat in_dims."""
    node = _func_checks._node(args)
    if node is None:
        return next(dims)
    kind = type(args)
    if kind is list or kind is tuple:
        return kind(_axes_like(a, dims) for a in args)
    if isinstance(args, dict):
        return _InOrder((k, _axes_like(v, dims)) for k, v in args.items())
    return kind(*[_axes_like(a, dims) for a in args])   # (a namedtuple)


from ._func_modules import (  # noqa: E402,F401
    debug_unwrap, functional_call, functionalize, replace_all_batch_norm_modules_, stack_module_state)
