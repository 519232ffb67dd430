"""The `out=` argument of the functional API: the result written into the given tensor(s), as PyTorch's out=
overloads do, and their refusal to differentiate.

Each function computes its result as without out=; `with_out` wraps every public function that takes `out`
and writes that result into it, so that the functions themselves ignore the argument.
"""
import functools
import inspect

import jax.numpy as jnp

from .._argument_errors import reraise
from .._grad_mode import _state, no_grad
from .._inplace import commit
from .._tensor import Tensor
from ._return_types import out_type
from .._user_frames import warn_user

# PyTorch's error names the aten op whose out= overload refused; a function PyTorch writes through another
# op's out= overload names that one.
_ATEN_NAMES = {
    "outer": "mul", "ger": "mul", "kron": "mul", "diff": "sub", "hstack": "cat", "vstack": "cat",
    "dstack": "cat", "row_stack": "cat", "column_stack": "cat", "concat": "cat", "concatenate": "cat",
    "norm": "linalg_vector_norm", "matrix_power": "matmul",
}
# Functions PyTorch composes from others and then copies into out (CopyBackwards), differentiable.
_COPIED_OUT = {"inner"}


def with_out(fn, name=None, composite=False, public=None):
    """fn(..., out=t): fn's result written into t (a tuple of tensors for several results), returning t.
    name: the aten op PyTorch's error names; composite: PyTorch computes the function from other ops and
    copies the result into out, recording the copy (CopyBackwards) rather than refusing autograd.
    public: the function's name, under which a TypeError for its arguments becomes PyTorch's parser error
    (_argument_errors)."""
    op = name or "{}()".format(_ATEN_NAMES.get(fn.__name__, fn.__name__))

    @functools.wraps(fn)
    def function(*args, out=None, **kwargs):
        try:
            if out is None:
                return fn(*args, **kwargs)
            if composite:
                return copy_out(out, fn(*args, **kwargs), op)
            return write_out(out, fn(*args, **kwargs), op)
        except TypeError as e:
            reraise(e, "function", public, args, kwargs if out is None else {**kwargs, "out": out})
    function.parses_arguments = True
    return function


def copy_out(out, result, op):
    """out.copy_(result), resized first as PyTorch resizes an out tensor: autograd records the copy."""
    _check_outs(out, result, op)
    if tuple(out.shape) != tuple(result.shape):
        _resize(out, tuple(result.shape))
    return out.copy_(result)


def wrap_all(namespace, names):
    """with_out on each of `names` in `namespace` (a module's globals) that has an out= parameter."""
    for name in names:
        fn = namespace[name]
        try:
            param = inspect.signature(fn).parameters.get("out")
        except (TypeError, ValueError):
            continue
        if param is not None and param.kind is inspect.Parameter.KEYWORD_ONLY:
            namespace[name] = with_out(fn, composite=name in _COPIED_OUT, public=name)


def write_out(out, result, op):
    """Write `result` (a tensor or a tuple of them) into `out`; PyTorch's errors for the differentiable ops
    when autograd would have to see the write."""
    outs, results = _check_outs(out, result, op)
    if _state.grad_enabled and _needs_grad(outs, results):
        raise RuntimeError(f"{op}: functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if _state.grad_enabled and _no_formula(results):
        # PyTorch records the op's NotImplemented node on out, whose backward raises
        for t, r in zip(outs, results):
            _write(t, r)
    else:
        with no_grad():
            for t, r in zip(outs, results):
                _write(t, r.detach())
    if len(outs) == 1 and not isinstance(out, (tuple, list)):
        return out
    return out_type(type(result))(*outs) if hasattr(result, "_fields") else out


def _check_outs(out, result, op):
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(outs) != len(results) or not all(isinstance(t, Tensor) for t in outs):
        raise TypeError(f"{op[:-2]}(): argument 'out' must be "
                        f"{'tuple of Tensors' if len(results) > 1 else 'Tensor'}, not {type(out).__name__}")
    return outs, results


def _needs_grad(outs, results):
    # PyTorch refuses where the op has a derivative and an argument, or out, requires grad. The result
    # requires grad exactly when the op differentiates an argument that does; an out that requires grad
    # refuses any op whose result could (a floating or complex one).
    if any(r._requires_grad for r in results if isinstance(r, Tensor)):
        return not _no_formula(results)
    return any(t._requires_grad for t in outs) and any(
        isinstance(r, Tensor) and (r.dtype.is_floating_point or r.dtype.is_complex) for r in results)


def _no_formula(results):
    # a node PyTorch records without a derivative (floor_divide): its out= overload accepts such arguments
    node = results[0]._grad_fn if isinstance(results[0], Tensor) else None
    return node is not None and type(node).__name__ == "NotImplemented"


def _write(t, r):
    if tuple(t.shape) != tuple(r.shape):
        _resize(t, tuple(r.shape))
    commit(t, r)


def _resize(t, shape):
    # PyTorch resizes an out tensor of another shape (warning unless it was empty)
    if t.numel() != 0:
        warn_user(f"An output with one or more elements was resized since it had shape {list(t.shape)}, "
                  f"which does not match the required output shape {list(shape)}. This behavior is "
                  "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                  "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                  "elements with t.resize_(0).", UserWarning)
    if t._view is not None:
        raise RuntimeError(f"out= with a view of shape {list(t.shape)} that would need resizing to "
                           f"{list(shape)} is not supported; pass a tensor of that shape")
    t._storage.write(jnp.zeros(shape, t.dtype.np))
