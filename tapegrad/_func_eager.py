"""tapegrad.func.grad and vjp of a function that reads values in Python (.item(), a data-dependent if).

tapegrad's transforms trace the function into one JAX program, which cannot hand Python a value. PyTorch's
functorch runs grad and vjp eagerly, so such a function works there: it runs here as PyTorch runs it, on
tensors that require grad, its gradient taken by the tape (autograd.grad); where an enclosing differentiation
needs the gradient differentiable again (grad of grad, both eager), it is recorded with create_graph. (jvp,
jacrev, jacfwd, hessian and vmap still trace the function, and refuse the read.)
"""
import contextlib

import jax

from ._grad_mode import enable_grad, is_grad_enabled


def _is_tensor(x):
    from ._tensor import Tensor
    return isinstance(x, Tensor)


def _differentiable(trees):
    """(the tensors of `trees` as the inputs the tape differentiates, their pytree structure, whether an
    enclosing eager differentiation needs the gradients differentiable: the tensors already require grad)."""
    from .func import _in_order
    flat, tree = jax.tree_util.tree_flatten(_in_order(trees), is_leaf=_is_tensor)
    outer = is_grad_enabled() and any(t.requires_grad for t in flat)
    with enable_grad():
        inputs = [t.view_as(t) if outer and t.requires_grad else t.detach().requires_grad_() for t in flat]
    return inputs, tree, outer


def _gradients(outputs, cotangents, inputs, tree, outer):
    """autograd.grad of the outputs that require grad, zeros for an input none reaches, in the inputs' trees."""
    from .autograd import grad
    from .func import _as_dicts
    from ._creation import zeros_like
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    with enable_grad() if outer else contextlib.nullcontext():
        found = grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=True, create_graph=outer,
                     allow_unused=True) if pairs else [None] * len(inputs)
    return _as_dicts(jax.tree_util.tree_unflatten(tree, [zeros_like(t) if g is None else g
                                                         for g, t in zip(found, inputs)]))


def _detached(out, outer):
    return out if outer else jax.tree_util.tree_map(lambda t: t.detach(), out, is_leaf=_is_tensor)


def grad_and_value(func, args, kwargs, argnums, has_aux, check):
    """(gradient, value) as tapegrad.func.grad_and_value returns them, computed eagerly."""
    from .func import _as_dicts
    picked = argnums if isinstance(argnums, tuple) else (argnums,)
    inputs, tree, outer = _differentiable([args[n] for n in picked])
    given = list(args)
    for n, arg in zip(picked, _as_dicts(jax.tree_util.tree_unflatten(tree, inputs))):
        given[n] = arg
    with enable_grad():
        out = func(*given, **kwargs)
        check(out)
    grads = _gradients([out[0] if has_aux else out], [None], inputs, tree, outer)
    return (tuple(grads) if isinstance(argnums, tuple) else grads[0]), _detached(out, outer)


def vjp(func, primals, has_aux, check, spec):
    """(output, vjp_fn[, aux]) as tapegrad.func.vjp returns them, computed eagerly: vjp_fn runs autograd.grad on
    the kept graph (as often as it is called). spec(tree) writes a pytree's structure as PyTorch's error does."""
    from .func import _as_dicts, _in_order
    inputs, tree, outer = _differentiable(primals)
    with enable_grad():
        out = func(*_as_dicts(jax.tree_util.tree_unflatten(tree, inputs)))
        check(out)
    value = out[0] if has_aux else out
    outputs, out_tree = jax.tree_util.tree_flatten(_in_order(value), is_leaf=_is_tensor)

    def vjp_fn(*cotangents):
        given = cotangents[0] if len(cotangents) == 1 else cotangents
        cts, ct_tree = jax.tree_util.tree_flatten(_in_order(given), is_leaf=_is_tensor)
        if ct_tree != out_tree:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {spec(given)}, primal output: {spec(value)}")
        return tuple(_gradients(outputs, cts, inputs, tree, outer))
    out = _detached(out, outer)
    return (out[0], vjp_fn, out[1]) if has_aux else (out, vjp_fn)
