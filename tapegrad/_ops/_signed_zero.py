"""Signed zeros as PyTorch's CPU kernels leave them where XLA's arithmetic differs."""
import jax
import jax.numpy as jnp


def plus_zero(y):
    """y with -0.0 made +0.0, as a kernel that starts from (cumsum) or adds (layer_norm's missing bias) a +0
    leaves it; the gradient is y's own. (XLA folds `y + 0.0` into y, and a select on y == 0 would cut the
    gradient at exact zeros: the +0 is added as a value the compiler cannot fold.)"""
    if not jnp.issubdtype(y.dtype, jnp.floating):
        return y
    return y + jax.lax.stop_gradient(jnp.where(y == 0, -y, jnp.zeros_like(y)))
