"""Reductions."""
import jax.numpy as jnp

from ._registry import defop, KEEP

sum = defop("sum", lambda a, dim, keepdim, dtype: jnp.sum(a, axis=dim, keepdims=keepdim, dtype=dtype),
            dtype_rule=KEEP)
mean = defop("mean", lambda a, dim, keepdim, dtype: jnp.mean(a, axis=dim, keepdims=keepdim, dtype=dtype),
             dtype_rule=KEEP)
