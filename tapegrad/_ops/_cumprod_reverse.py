"""cumprod differentiated by PyTorch's cumprod_backward (the op's reverse form).

Where the input holds zeros PyTorch's first-order backward only sums the terms that are not structurally zero:
before the first zero z1 the gradients of positions up to z1, at z1 those of [z1, z2), after it none. JAX's
cumprod VJP sums every term, so a NaN or infinite gradient behind a zero gives NaN where PyTorch's gives a
number. The reverse form keeps JAX's exact gradient (its derivative is the second derivative of cumprod, as
PyTorch's create_graph formula is) where both are finite, PyTorch's masked value elsewhere.
"""
import functools

import jax
import jax.numpy as jnp


def cumprod_reverse(a, dim, dtype):
    a = a if dtype is None else a.astype(dtype)
    return _cumprod(a, dim) if a.size and a.ndim else jnp.cumprod(a, axis=dim)   # (nothing to mask)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def _cumprod(a, axis):
    return jnp.cumprod(a, axis=axis)


def _forward(a, axis):
    out = jnp.cumprod(a, axis=axis)
    return out, (a, out)


def _backward(axis, saved, g):
    a, out = saved
    exact = jax.vjp(lambda x: jnp.cumprod(x, axis=axis), a)[1](g)[0]
    masked = _masked(a, out, g, axis)
    return (jnp.where(jnp.isfinite(exact) & jnp.isfinite(masked), exact, masked),)


_cumprod.defvjp(_forward, _backward)


def _masked(a, out, g, axis):
    """PyTorch's O(n) cumprod_backward for inputs with zeros (for a slice without any: its reversed cumsum of
    out * grad over the input)."""
    zero = jnp.zeros((), g.dtype)
    count = jnp.cumsum(a == 0, axis=axis)
    before = count == 0                                             # [0, z1)
    w = jnp.where(before, out * g, zero)
    summed = jnp.flip(jnp.cumsum(jnp.flip(w, axis), axis=axis), axis)
    grad = jnp.where(before, summed / jnp.where(before, a, jnp.ones((), a.dtype)), zero)
    second = count == 1                                              # [z1, z2)
    first_index = jnp.argmax(second, axis=axis, keepdims=True)
    first = (jnp.arange(a.shape[axis]).reshape([-1 if d == axis % a.ndim else 1 for d in range(a.ndim)])
             == first_index) & second
    between = second & ~first
    products = jnp.cumprod(jnp.where(between, a, jnp.ones((), a.dtype)), axis=axis)
    total = jnp.sum(products * jnp.where(second, g, zero), axis=axis, keepdims=True)
    ahead = jnp.take_along_axis(out, jnp.maximum(first_index - 1, 0), axis=axis)
    ahead = jnp.where(first_index == 0, jnp.ones((), out.dtype), ahead)
    return jnp.where(first, total * ahead, grad)
