"""Reductions and scans. `dim` is None (all) or a sorted tuple of non-negative dims."""
import math

import jax
import jax.numpy as jnp

from ._registry import defop, FLOAT, KEEP


def _safe_sqrt(x):
    # sqrt with a zero gradient at 0, as PyTorch's std/norm backward masks it.
    zero = x == 0
    return jnp.where(zero, jnp.zeros((), x.dtype), jnp.sqrt(jnp.where(zero, jnp.ones((), x.dtype), x)))


def _var(a, dim, correction, keepdim):
    n = a.size if dim is None else math.prod(a.shape[d] for d in dim)
    mean = jnp.mean(a, axis=dim, keepdims=True)
    centred = a - mean
    sq = jnp.real(centred * jnp.conj(centred)) if jnp.iscomplexobj(a) else centred * centred
    return jnp.sum(sq, axis=dim, keepdims=keepdim) / max(n - correction, 0)


def _bool_reduce(fn, a, dim, keepdim):
    out = fn(a != 0, axis=dim, keepdims=keepdim)
    return out.astype(jnp.uint8) if a.dtype == jnp.uint8 else out


sum = defop("sum", lambda a, dim, keepdim, dtype: jnp.sum(a, axis=dim, keepdims=keepdim, dtype=dtype),
            dtype_rule=KEEP)
mean = defop("mean", lambda a, dim, keepdim, dtype: jnp.mean(a, axis=dim, keepdims=keepdim, dtype=dtype),
             dtype_rule=KEEP)
# PyTorch's backward of these reads both the input and the result (derivatives.yaml): an in-place change
# of either makes it fail, even where JAX's VJP reads neither (a 0-d input)
SELF_AND_RESULT = dict(saves_inputs=(0,), saves_output=True)
prod = defop("prod", lambda a, dim, keepdim, dtype: jnp.prod(a, axis=dim, keepdims=keepdim, dtype=dtype),
             dtype_rule=KEEP, **SELF_AND_RESULT)
var = defop("var", _var, dtype_rule=KEEP)
std = defop("std", lambda a, dim, correction, keepdim: _safe_sqrt(_var(a, dim, correction, keepdim)),
            dtype_rule=KEEP, **SELF_AND_RESULT)
# Ties share the gradient evenly (PyTorch's amax/amin and full max()/min()); JAX's max rule does the same.
amax = defop("amax", lambda a, dim, keepdim: jnp.max(a, axis=dim, keepdims=keepdim), dtype_rule=KEEP,
             **SELF_AND_RESULT)
amin = defop("amin", lambda a, dim, keepdim: jnp.min(a, axis=dim, keepdims=keepdim), dtype_rule=KEEP,
             **SELF_AND_RESULT)
max_all = defop("max_all", lambda a: jnp.max(a), dtype_rule=KEEP, node_name="MaxBackward1", **SELF_AND_RESULT)
min_all = defop("min_all", lambda a: jnp.min(a), dtype_rule=KEEP, node_name="MinBackward1", **SELF_AND_RESULT)
argmax = defop("argmax", lambda a, dim, keepdim: jnp.argmax(a, axis=dim, keepdims=keepdim), dtype_rule=KEEP)
argmin = defop("argmin", lambda a, dim, keepdim: jnp.argmin(a, axis=dim, keepdims=keepdim), dtype_rule=KEEP)
logsumexp = defop("logsumexp", lambda a, dim, keepdim: jax.nn.logsumexp(a, axis=dim, keepdims=keepdim),
                  dtype_rule=FLOAT, **SELF_AND_RESULT)
cumsum = defop("cumsum", lambda a, dim, dtype: jnp.cumsum(a, axis=dim, dtype=dtype), dtype_rule=KEEP)
cumprod = defop("cumprod", lambda a, dim, dtype: jnp.cumprod(a, axis=dim, dtype=dtype), dtype_rule=KEEP,
                **SELF_AND_RESULT)
all = defop("all", lambda a, dim, keepdim: _bool_reduce(jnp.all, a, dim, keepdim), dtype_rule=KEEP)
any = defop("any", lambda a, dim, keepdim: _bool_reduce(jnp.any, a, dim, keepdim), dtype_rule=KEEP)
count_nonzero = defop("count_nonzero", lambda a, dim: jnp.sum(a != 0, axis=dim, dtype=jnp.int64),
                      dtype_rule=KEEP)
