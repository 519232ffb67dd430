"""Matrix products."""
import jax.numpy as jnp

from ._registry import defop, KEEP

matmul = defop("matmul", lambda a, b: jnp.matmul(a, b), dtype_rule=KEEP, node="mm")
mm = defop("mm", lambda a, b: jnp.matmul(a, b), dtype_rule=KEEP)
