"""Gradient clipping: each function reads and rewrites all gradients in one jitted call (foreach style)."""
import functools
import types

import jax
import jax.numpy as jnp

from ..._tensor import Tensor
from ..._user_frames import warn_user

_NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be clipped. "
              "To disable this error and scale the gradients by the non-finite norm anyway, set "
              "`error_if_nonfinite=False`")


def _vector_norm(x, ord):
    x = jnp.abs(x)
    if ord == float("inf"):
        return x.max(initial=0).astype(x.dtype)
    if ord == float("-inf"):
        return x.min()
    if ord == 0:
        return (x != 0).sum().astype(x.dtype)
    if ord == 1:
        return x.sum()
    if ord == 2:
        return jnp.sqrt((x * x).sum())
    return (x ** ord).sum() ** (1.0 / ord)


@functools.partial(jax.jit, static_argnames=("norm_type",))
def _total_norm(grads, norm_type):
    # PyTorch: the norm of each gradient, then the norm of those norms (in the promoted dtype).
    dtype = jnp.result_type(*grads)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        dtype = jnp.finfo(dtype).dtype
    norms = jnp.stack([_vector_norm(g, norm_type).astype(dtype) for g in grads])
    return _vector_norm(norms, norm_type)


@jax.jit
def _scaled(grads, max_norm, total_norm):
    coef = jnp.minimum(max_norm / (total_norm + 1e-6), 1.0)
    return [g * coef.astype(g.dtype) for g in grads]


@functools.partial(jax.jit, static_argnames=("norm_type",))
def _clip_by_norm(grads, max_norm, norm_type):
    total = _total_norm(grads, norm_type)
    return total, _scaled(grads, max_norm, total)


@jax.jit
def _clamped(grads, clip_value):
    return [jnp.clip(g, -clip_value, clip_value).astype(g.dtype) for g in grads]


def _as_list(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)
    if is_generator and not parameters:
        warn_user("`parameters` is an empty generator, no gradient clipping will occur.")
    return parameters


def _grads(parameters):
    return [p._grad for p in parameters if p._grad is not None]


def _write(grads, values):
    for g, v in zip(grads, values):
        if g._view is None:
            g._storage.write(v)
        else:
            g._set_value(v)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (as if concatenated into one vector)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        from ..._creation import tensor
        return tensor(0.0)
    total = _total_norm([t._value for t in tensors], norm_type)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(_NONFINITE.format(norm_type))
    return Tensor._wrap(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients by min(1, max_norm / (total_norm + 1e-6)) in place."""
    grads = _grads(_as_list(parameters))
    if grads:
        _write(grads, _scaled([g._value for g in grads], float(max_norm), total_norm._value))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clip the gradients' total norm to max_norm in place; returns the total norm (before clipping)."""
    grads = _grads(_as_list(parameters))
    norm_type = float(norm_type)
    if not grads:
        from ..._creation import tensor
        return tensor(0.0)
    total, clipped = _clip_by_norm([g._value for g in grads], float(max_norm), norm_type)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(_NONFINITE.format(norm_type))
    _write(grads, clipped)
    return Tensor._wrap(total)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of clip_grad_norm_."""
    warn_user("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
              FutureWarning)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient to [-clip_value, clip_value] in place."""
    grads = _grads([parameters] if isinstance(parameters, Tensor) else list(parameters))
    if grads:
        _write(grads, _clamped([g._value for g in grads], float(clip_value)))
