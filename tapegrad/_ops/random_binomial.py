"""binomial: Binomial(count, prob) draws. With the static drawn=True the entry takes the draws PyTorch's CPU
sampler makes (tapegrad._cpu_binomial, on the host); else the data of a jax.random key. PyTorch records a node
whose backward raises (NotImplemented)."""
import jax
import jax.numpy as jnp

from ._registry import defop, KEEP


def _binomial(count, prob, source, drawn=False):
    if drawn:
        return source
    shape = jnp.broadcast_shapes(count.shape, prob.shape)
    count, prob = jnp.broadcast_to(count, shape), jnp.broadcast_to(prob, shape)
    key = jax.random.wrap_key_data(source.astype(jnp.uint32))
    inside = (count > 0) & (prob > 0) & (prob < 1)
    safe_count, safe_prob = jnp.where(inside, count, 1), jnp.where(inside, prob, 0.5)
    sample = jax.random.binomial(key, safe_count, safe_prob, shape, count.dtype)
    # PyTorch's edges: nothing from a count or prob <= 0, everything from prob >= 1, NaN from a NaN prob
    edge = jnp.where((count <= 0) | (prob <= 0), 0, jnp.where(prob >= 1, count, jnp.nan)).astype(count.dtype)
    return jnp.where(inside, sample, edge)


binomial = defop("binomial", _binomial, dtype_rule=KEEP, diff=(0, 1), node_name="torch::autograd::NotImplemented",
                 no_derivative=lambda **_: (RuntimeError, "derivative for aten::binomial is not implemented"))
