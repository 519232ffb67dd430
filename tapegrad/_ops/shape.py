"""Shape ops. Those PyTorch returns as views share storage (view=True)."""
import jax.numpy as jnp

from ._registry import defop, KEEP

view = defop("view", lambda a, shape: jnp.reshape(a, shape), dtype_rule=KEEP, view=True)
reshape_copy = defop("reshape_copy", lambda a, shape: jnp.reshape(a, shape), dtype_rule=KEEP,
                     node="unsafe_view")
expand = defop("expand", lambda a, shape: jnp.broadcast_to(a, shape), dtype_rule=KEEP, view=True)
transpose = defop("transpose", lambda a, dim0, dim1: jnp.swapaxes(a, dim0, dim1), dtype_rule=KEEP, view=True)
t = defop("t", lambda a: a.T, dtype_rule=KEEP, view=True)
permute = defop("permute", lambda a, dims: jnp.transpose(a, dims), dtype_rule=KEEP, view=True)
unsqueeze = defop("unsqueeze", lambda a, dim: jnp.expand_dims(a, dim), dtype_rule=KEEP, view=True)
squeeze = defop("squeeze", lambda a, dims: jnp.squeeze(a, dims), dtype_rule=KEEP, view=True)
alias = defop("alias", lambda a: a, dtype_rule=KEEP, view=True)
