"""tapegrad.func.grad of a function that reads values in Python (.item(), a data-dependent if).

tapegrad's transforms trace the function into one JAX program, which cannot hand Python a value. PyTorch's
functorch runs grad eagerly, so such a function works there: it runs here as PyTorch runs it, on tensors
that require grad, its gradient taken by the tape (autograd.grad). Where an enclosing differentiation needs
the gradient differentiable again (grad of grad, both eager), it is recorded with create_graph.
"""
import jax

from ._grad_mode import enable_grad, is_grad_enabled


def _is_tensor(x):
    from ._tensor import Tensor
    return isinstance(x, Tensor)


def grad_and_value(func, args, kwargs, argnums, has_aux, check):
    """(gradient, value) as tapegrad.func.grad_and_value returns them, computed eagerly."""
    from .autograd import grad
    from .func import _as_dicts, _in_order
    from ._creation import zeros_like
    picked = argnums if isinstance(argnums, tuple) else (argnums,)
    flat, tree = jax.tree_util.tree_flatten(_in_order([args[n] for n in picked]), is_leaf=_is_tensor)
    # (an enclosing eager differentiation: the inputs already require grad, the gradient must too)
    outer = is_grad_enabled() and any(t.requires_grad for t in flat)
    with enable_grad():
        inputs = [t.view_as(t) if outer and t.requires_grad else t.detach().requires_grad_() for t in flat]
        given = list(args)
        for n, arg in zip(picked, _as_dicts(jax.tree_util.tree_unflatten(tree, inputs))):
            given[n] = arg
        out = func(*given, **kwargs)
        check(out)
        value = out[0] if has_aux else out
        found = grad(value, inputs, create_graph=outer, allow_unused=True) if value.requires_grad else \
            [None] * len(inputs)
    grads = _as_dicts(jax.tree_util.tree_unflatten(tree, [zeros_like(t) if g is None else g
                                                          for g, t in zip(found, inputs)]))
    grads = tuple(grads) if isinstance(argnums, tuple) else grads[0]
    if not outer:
        out = jax.tree_util.tree_map(lambda t: t.detach(), out, is_leaf=_is_tensor)
    return grads, out
