"""Random fills (uniform_, normal_, ...) and sampling (bernoulli, multinomial).

Each entry takes the tensor it fills and the data of a jax.random key (an int64 tensor). The
result does not depend on the tensor's values, so its gradient is zero (PyTorch's
UniformBackward0 and friends pass no gradient back).
"""
import jax
import jax.numpy as jnp

from ._registry import defop, KEEP


def _key(k):
    return jax.random.wrap_key_data(k.astype(jnp.uint32))


def _bernoulli(a, k, p):
    return jax.random.bernoulli(_key(k), p, a.shape).astype(a.dtype)


def _multinomial(p, k, num_samples, replacement):
    logits = jnp.log(p)
    if replacement:
        draws = jax.random.categorical(_key(k), logits, axis=-1, shape=(num_samples,) + p.shape[:-1])
        return jnp.moveaxis(draws, 0, -1).astype(jnp.int64)
    # Without replacement: the top num_samples of Gumbel-perturbed log-probabilities.
    noisy = logits + jax.random.gumbel(_key(k), p.shape, logits.dtype)
    return jnp.argsort(-noisy, axis=-1)[..., :num_samples].astype(jnp.int64)


uniform = defop("uniform", lambda a, k, lo, hi: jax.random.uniform(_key(k), a.shape, a.dtype, lo, hi),
                dtype_rule=KEEP, diff=(0,))
normal = defop("normal", lambda a, k, mean, std: mean + std * jax.random.normal(_key(k), a.shape, a.dtype),
               dtype_rule=KEEP, diff=(0,))
exponential = defop("exponential", lambda a, k, lambd: jax.random.exponential(_key(k), a.shape, a.dtype) / lambd,
                    dtype_rule=KEEP, diff=(0,))
random = defop("random", lambda a, k, lo, hi: jax.random.randint(_key(k), a.shape, lo, hi, jnp.int64)
               .astype(a.dtype), dtype_rule=KEEP, diff=(0,))
bernoulli_fill = defop("bernoulli_fill", _bernoulli, dtype_rule=KEEP, diff=(0,), node="bernoulli")
bernoulli = defop("bernoulli", lambda p, k: jax.random.bernoulli(_key(k), p).astype(p.dtype), dtype_rule=KEEP,
                  diff=(0,))
multinomial = defop("multinomial", _multinomial, dtype_rule=KEEP)
