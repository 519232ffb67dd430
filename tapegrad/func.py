"""tapegrad.func (PyTorch's torch.func): function transforms over JAX's own transforms.

A function of Tensors is traced into one pure JAX function (see autograd._tracing): its tensor
arguments and results become arrays, and `jax.grad`, `jax.vjp`, `jax.jvp`, `jax.jacrev`,
`jax.jacfwd`, `jax.hessian` and `jax.vmap` transform it. Transforms nest (`vmap(grad(f))`) because
a transformed function is again a function of Tensors. A transformed function is compiled once per
argument shapes, with the tensors it reads from outside its arguments (a module's parameters) as
inputs of the program, so a nested composition (a per-sample gradient) is one program; functions that
draw random numbers or write tensors in place run op by op. The function must be pure over its arguments: values read in Python (`.item()`) cannot be
traced and raise, as they do under torch.func.
"""
import contextlib
import functools

import jax
from jax.experimental import checkify

from . import _dispatch, _programs, _value_checks
from .autograd import _function_transforms
from .autograd._tracing import TRACER_ERRORS, Identity, Untraceable, discover, swapped, tracing
from ._jax_function import from_jax, to_jax  # noqa: E402,F401  (JAX functions as ops, modules as JAX functions)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "functional_call",
           "linearize", "stack_module_state", "from_jax", "to_jax"]


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


def _on_arrays(func, kwargs=None, captured=(), values=(), on_arguments=None, kinds=()):
    """func over Tensors as a pure function over arrays (pytrees in, pytrees out); the tensors it reads from
    outside (`captured`) are read as `values` while it is traced. `kinds`: the transform it is traced for
    ("reverse", "forward", "vmap"), which decides how an autograd.Function inside runs."""
    kwargs = kwargs or {}

    def pure(*arrays):
        with tracing(on_arguments=on_arguments), swapped(captured, values), _function_transforms.under(kinds):
            out = func(*_to_tensors(arrays), **kwargs)
            return _to_arrays(out)
    return pure


# (transform, function state, argument avals) -> (jitted, captured's places, check keys, [tensors read], anchors)
_compiled = _programs.bounded_cache()


_KINDS = {"grad": ("reverse",), "jvp": ("forward",), "jacrev": ("reverse",), "jacfwd": ("vmap", "forward"),
          "vmap": ("vmap",)}


def _transformed(name, func, kwargs, args, make):
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
                jitted, captured, keys, reading = _compile(func, kwargs, arrays, make, kinds)
                entry = _compiled.put(key, (jitted, captured and state.places(captured), keys, reading,
                                            state.anchors))
        except TypeError:   # unhashable static parts: op by op
            entry = None
    if entry is None or entry[0] is None:
        checked, keys = _checked(make(_on_arrays(func, kwargs, kinds=kinds)))
        error, out = checked(*arrays)
    else:
        jitted, places, keys, reading, _ = entry
        captured = reading[0] = state.recapture(places)   # (should JAX trace it again: this call's tensors)
        error, out = jitted([t._value for t in captured], *arrays)
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


def _compile(func, kwargs, arrays, make, kinds):
    def trace(capture, *xs):
        return _checked(make(_on_arrays(func, kwargs, on_arguments=capture, kinds=kinds)))[0](*xs)[1]
    try:
        _, captured = discover(trace, jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype),
                                                             arrays))
    except (Untraceable,) + TRACER_ERRORS:
        return None, None, None, None
    reading = [captured]   # the tensors the program reads as `values`: the current call's

    def program(values, *xs):
        return make(_on_arrays(func, kwargs, reading[0], values, kinds=kinds))(*xs)
    checked, keys = _checked(program)
    return jax.jit(checked), captured, keys, reading


@contextlib.contextmanager
def _explained():
    try:
        yield
    except TRACER_ERRORS as e:
        raise RuntimeError(
            "tapegrad.func transforms trace the function: it cannot read tensor values in Python (.item(), "
            ".tolist(), .numpy(), bool() or a data-dependent if). Compute with tensor ops instead (torch.where)."
        ) from e


def _argnums_check(argnums, nargs):
    for n in (argnums,) if isinstance(argnums, int) else argnums:
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnums={argnums}, but only {nargs} positional inputs")


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient, value) of a function returning a scalar tensor."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _argnums_check(argnums, len(args))
        with _explained():
            value, g = _transformed(("grad", argnums, has_aux), func, kwargs, args,
                                    lambda pure: jax.value_and_grad(pure, argnums, has_aux=has_aux))
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


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives one gradient per primal."""
    pure, keys = _with_error(_on_arrays(func, kinds=("reverse",)), has_aux)
    with _explained():
        out, pullback, (error, aux) = jax.vjp(pure, *_to_arrays(primals), has_aux=True)
    _value_checks.raise_failed(error, keys)

    def vjp_fn(*cotangents):
        given = cotangents[0] if len(cotangents) == 1 else cotangents
        cts = _to_arrays(given)
        if not _same_structure(cts, out):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_spec(given)}, primal output: {_spec(out)}")
        return _to_tensors(pullback(cts))
    if has_aux:
        return _to_tensors(out), vjp_fn, _to_tensors(aux)
    return _to_tensors(out), vjp_fn


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the derivative along `tangents`): forward mode, by jax.jvp."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples. E.g. "
                           "jvp(f, (x,), (t,))")
    if len(primals) != len(tangents):
        raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure, got {len(primals)} and {len(tangents)} elements")
    if not _same_structure(_to_arrays(primals), _to_arrays(tangents)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure. For example, if primals is a tuple of 3 tensors, tangents also must be. Got "
                           f"primals with structure {_spec(primals)} and tangents with structure {_spec(tangents)}")
    with _explained():
        result = _transformed(("jvp", has_aux), func, {}, (primals, tangents),
                              lambda pure: lambda p, t: jax.jvp(pure, p, t, has_aux=has_aux))
    return tuple(_to_tensors(r) for r in result)


def _jacobian(transform):
    def make(func, argnums=0, has_aux=False, **unused):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            _argnums_check(argnums, len(args))
            with _explained():
                out = _transformed((transform.__name__, argnums, has_aux), func, kwargs, args,
                                   lambda pure: transform(pure, argnums, has_aux=has_aux))
            return _to_tensors(out)
        return wrapper
    return make


jacrev = _jacobian(jax.jacrev)
jacfwd = _jacobian(jax.jacfwd)
jacrev.__doc__ = "The Jacobian by reverse mode (one VJP per output element, vectorised)."
jacfwd.__doc__ = "The Jacobian by forward mode (one JVP per input element, vectorised)."


def hessian(func, argnums=0):
    """The Hessian of a scalar function: forward over reverse, as torch.func.hessian."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func, *primals):
    """(func(*primals), jvp_fn) with the linearisation computed once."""
    pure, keys = _with_error(_on_arrays(func, kinds=("forward",)), False)
    with _explained():
        out, f_jvp, (error, _) = jax.linearize(pure, *_to_arrays(primals), has_aux=True)
    _value_checks.raise_failed(error, keys)
    return _to_tensors(out), lambda *tangents: _to_tensors(f_jvp(*_to_arrays(tangents)))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a batch dimension of its arguments (in_dims, out_dims as torch.func.vmap)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = in_dims
        if isinstance(dims, tuple) and len(dims) != len(args):
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
                             f"with the structure of `inputs`. in_dims has structure {len(dims)} but inputs has "
                             f"structure {len(args)}.")
        with _explained():
            out = _transformed(("vmap", dims, out_dims), func, kwargs, args,
                               lambda pure: jax.vmap(pure, in_axes=_in_order(dims), out_axes=_in_order(out_dims)))
        return _to_tensors(out)
    return wrapper


def _name(func):
    return getattr(func, "__name__", repr(func))


# ---- modules as functions -----------------------------------------------------------------------

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call `module` with some of its parameters and buffers replaced by the given tensors."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged = {}
        for d in dicts:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is "
                                     "ambiguous")
                merged[k] = v
        dicts = merged
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _swapped(module, dict(dicts), tie_weights, strict):
        return module(*args, **(kwargs or {}))


@contextlib.contextmanager
def _swapped(module, replacements, tie_weights, strict):
    slots = {}   # name -> (table, key) of every parameter and buffer
    by_identity = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        for table in (m._parameters, m._buffers):
            for key, t in table.items():
                name = f"{prefix}.{key}" if prefix else key
                slots[name] = (table, key)
                if t is not None:
                    by_identity.setdefault(id(t), []).append(name)
    targets = {k: v for k, v in replacements.items() if k in slots}
    if tie_weights:
        for name, value in list(targets.items()):
            table, key = slots[name]
            original = table[key]
            for tied in by_identity.get(id(original), ()) if original is not None else ():
                targets.setdefault(tied, value)
    if strict:
        unexpected = sorted(k for k in replacements if k not in slots)
        missing = sorted(k for k in slots if k not in targets)
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("\n".join(lines))
    saved = {name: slots[name][0][slots[name][1]] for name in targets}
    try:
        for name, value in targets.items():
            table, key = slots[name]
            table[key] = value
        yield
    finally:
        for name, value in saved.items():
            table, key = slots[name]
            table[key] = value


def stack_module_state(models):
    """(params, buffers) of several copies of one architecture, stacked along a new first dimension."""
    from . import stack
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    params = {k: stack([dict(m.named_parameters())[k].detach() for m in models]).requires_grad_() for k, _ in
              models[0].named_parameters()}
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models]) for k, _ in models[0].named_buffers()}
    return params, buffers
