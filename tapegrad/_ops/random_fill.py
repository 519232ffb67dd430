"""Random fills (uniform_, normal_, ...) and sampling (bernoulli, multinomial, poisson, gamma).

Each entry takes the tensor it fills and the data of a jax.random key (an int64 tensor). With the
static drawn=True, the fills (uniform, normal, exponential, cauchy, geometric, log_normal, random,
bernoulli) and multinomial take
instead what PyTorch's CPU kernels draw, drawn on the host from its stream (tapegrad.random): the
values themselves, or the uniforms and exponentials they are computed from. The result does not
depend on the tensor's values, so its gradient is zero (PyTorch's UniformBackward0 and friends pass no
gradient back). The exception is standard_gamma, whose gradient is the implicit reparameterisation
one (PyTorch's _standard_gamma_grad, and JAX's).
"""
import jax
import jax.numpy as jnp

from ._registry import defop, overload, KEEP


def _key(k):
    return jax.random.wrap_key_data(k.astype(jnp.uint32))


def uniform_values(key, shape, dtype, lo=0.0, hi=1.0):
    """U[lo, hi) draws; a complex dtype draws its real and imaginary parts so, as PyTorch fills view_as_real."""
    dtype = jnp.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        parts = jax.random.uniform(key, (2,) + tuple(shape), jnp.finfo(dtype).dtype, lo, hi)
        return jax.lax.complex(parts[0], parts[1])
    return jax.random.uniform(key, shape, dtype, lo, hi)


def normal_values(key, shape, dtype, mean=0.0, std=1.0):
    """N(mean, std^2) draws; a complex dtype's parts are each N(mean, std^2 / 2) (PyTorch's complex normal)."""
    if jnp.issubdtype(jnp.dtype(dtype), jnp.complexfloating):
        mean = mean * (1 + 1j)
    return (mean + std * jax.random.normal(key, shape, dtype)).astype(dtype)


def _bernoulli(a, source, p, drawn=False):
    # drawn: source holds PyTorch's CPU uniforms, each compared with its p
    kept = source < p if drawn else jax.random.bernoulli(_key(source), p, a.shape)
    return kept.astype(a.dtype)


def _random(a, key, lo, hi):
    lo = 0 if lo is None else lo
    hi = min(random_limit(a.dtype), _INT64_MAX) if hi is None else hi   # (int64's own bound: one value short)
    return jax.random.randint(key, a.shape, lo, hi, jnp.int64).astype(a.dtype)


_INT64_MAX = (1 << 63) - 1


def random_limit(dtype):
    """PyTorch's exclusive bound of random_(): 2^mantissa + 1 for floats, max + 1 for integers."""
    bits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
    if dtype.name in bits:
        return 2 ** bits[dtype.name] + 1
    if dtype == jnp.bool_:
        return 2
    return int(jnp.iinfo(dtype).max) + 1


def _fill(draw):
    """A fill's function: draw(a, key, *params) from a key's data, or the drawn values as they are."""
    def fill(a, source, *params, drawn=False):
        return source if drawn else draw(a, _key(source), *params)
    return fill


def _multinomial(p, source, num_samples, replacement, drawn=False):
    if drawn:   # PyTorch's CPU sampler on its draws (see _functional._random.multinomial)
        if replacement and num_samples > 1:
            cum = jnp.cumsum(p, -1)
            cum = (cum / cum[..., -1:]).astype(jnp.float64)
            pick = jax.vmap(lambda c, u: jnp.searchsorted(c, u, side="left")) if p.ndim == 2 else \
                lambda c, u: jnp.searchsorted(c, u, side="left")
            return jnp.minimum(pick(cum, source), p.shape[-1] - 1).astype(jnp.int64)
        return jax.lax.top_k(p / source, num_samples)[1].astype(jnp.int64)
    logits = jnp.log(p)
    if replacement:
        draws = jax.random.categorical(_key(source), logits, axis=-1, shape=(num_samples,) + p.shape[:-1])
        return jnp.moveaxis(draws, 0, -1).astype(jnp.int64)
    # Without replacement: the top num_samples of Gumbel-perturbed log-probabilities.
    noisy = logits + jax.random.gumbel(_key(source), p.shape, logits.dtype)
    return jnp.argsort(-noisy, axis=-1)[..., :num_samples].astype(jnp.int64)


uniform = defop("uniform", _fill(lambda a, key, lo, hi: uniform_values(key, a.shape, a.dtype, lo, hi)),
                dtype_rule=KEEP, diff=(0,))
normal = defop("normal", _fill(lambda a, key, mean, std: normal_values(key, a.shape, a.dtype, mean, std)),
               dtype_rule=KEEP, diff=(0,))
exponential = defop("exponential", _fill(lambda a, key, lambd: jax.random.exponential(key, a.shape, a.dtype) / lambd),
                    dtype_rule=KEEP, diff=(0,))
cauchy = defop("cauchy", _fill(lambda a, key, median, sigma: median + sigma * jax.random.cauchy(key, a.shape, a.dtype)),
               dtype_rule=KEEP, diff=(0,))
geometric = defop("geometric", _fill(lambda a, key, p: jax.random.geometric(key, p, a.shape).astype(a.dtype)),
                  dtype_rule=KEEP, diff=(0,))
log_normal = defop("log_normal", _fill(lambda a, key, mean, std: jnp.exp(mean + std * jax.random.normal(
    key, a.shape, a.dtype))), dtype_rule=KEEP, diff=(0,))
# random_(from, to), random_(to) and random_() are three PyTorch overloads: the bounds a call leaves out are None.
random = defop("random", _fill(_random), dtype_rule=KEEP, diff=(0,),
               overloads=[overload("RandomBackward2", "..--"), overload("RandomBackward1", "..-")])
# bernoulli_(p) with a float p, or with a tensor p (an input of the node, with a zero gradient, as PyTorch's).
bernoulli_fill = defop("bernoulli_fill", _bernoulli, dtype_rule=KEEP, diff=(0, 2), node_name="BernoulliBackward2",
                       overloads=[overload("BernoulliBackward1", "..t")])
bernoulli = defop("bernoulli", lambda p, source, drawn=False: _bernoulli(p, source, p, drawn), dtype_rule=KEEP,
                  diff=(0,))
multinomial = defop("multinomial", _multinomial, dtype_rule=KEEP)


@jax.custom_jvp
def _given_gamma(alpha, sample):
    """A Gamma(alpha, 1) sample drawn on the host, with the implicit reparameterisation gradient."""
    return sample


@_given_gamma.defjvp
def _given_gamma_jvp(primals, tangents):
    alpha, sample = primals
    return sample, jax.lax.random_gamma_grad(alpha, sample) * tangents[0]


def _normal_tensor(mean, std, source, dtype, drawn=False):
    shape = jnp.broadcast_shapes(jnp.shape(mean), jnp.shape(std))
    noise = source if drawn else jax.random.normal(_key(source), shape, dtype)   # (drawn: PyTorch's N(0, 1))
    return jax.lax.stop_gradient((mean + std * noise).astype(dtype))


# torch.normal with a tensor mean and/or std: a node of its own whose gradient PyTorch defines as zero
# (derivatives.yaml), not the derivative of mean + std * noise.
normal_tensor = defop("normal_tensor", _normal_tensor, dtype_rule=KEEP, diff=(0, 1), node_name="NormalBackward3",
                      overloads=[overload("NormalBackward1", "ts"), overload("NormalBackward2", "st")])
# Gamma(alpha, 1) draws; d draw / d alpha is -(dF/dalpha) / f at the draw, not the derivative of the
# sampler's transform at a fixed key, so finite differences at a fixed key do not check it.
standard_gamma = defop("standard_gamma", lambda alpha, source, drawn=False: _given_gamma(alpha, source) if drawn else
                        jax.random.gamma(_key(source), alpha, alpha.shape, alpha.dtype),
                        dtype_rule=KEEP, diff=(0,), saves_output=True)
# PyTorch's poisson passes a zero gradient back to its rates.
poisson = defop("poisson", lambda rate, source, drawn=False: source if drawn else
                jax.random.poisson(_key(source), jax.lax.stop_gradient(rate), rate.shape).astype(rate.dtype),
                dtype_rule=KEEP, diff=(0,))
