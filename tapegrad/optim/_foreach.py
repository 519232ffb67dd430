"""The foreach group update: one jitted call applies an optimizer's rule to every parameter of a group.

A rule is a pure function of one parameter:

    rule(p, g, state, h, **static) -> (new_p, new_state)

where p, g and the state entries are arrays, h holds the hyperparameters as
float64 scalars (traced: a scheduler changing lr never recompiles) and static
holds the options that change the program (amsgrad, nesterov, ...). The group
update loops over the parameters inside one trace, so a step over N tensors is
one XLA program instead of N dispatches. jax.jit caches it per group structure
(shapes, dtypes, which state entries exist).

Complex parameters are updated through their real view (as PyTorch's
optimizers do), so a rule only ever sees real arrays.
"""
import jax
import jax.numpy as jnp

_stats = {"calls": 0, "traces": 0}
_jitted = {}  # (rule, static items) -> jitted group update


def cache_info():
    return dict(_stats, entries=len(_jitted))


def clear_cache():
    _jitted.clear()
    for k in _stats:
        _stats[k] = 0


def run(rule, static, params, grads, states, hyper):
    """Apply `rule` to every (param, grad, state) in one jitted call; returns (new_params, new_states)."""
    key = (rule, static)
    fn = _jitted.get(key)
    if fn is None:
        fn = _jitted[key] = jax.jit(_group_update(rule, dict(static)))
    _stats["calls"] += 1
    return fn(params, grads, states, hyper)


def _group_update(rule, static):
    def update(params, grads, states, hyper):
        _stats["traces"] += 1  # runs only while tracing
        h = {k: jnp.asarray(v, jnp.float64) for k, v in hyper.items()}
        new_params, new_states = [], []
        for p, g, s in zip(params, grads, states):
            if jnp.iscomplexobj(p):
                p2, s2 = rule(_real(p), _real(g), _real_state(s, p), h, **static)
                view = p.shape + (2,)
                p2, s2 = _complex(p2), {k: _complex(v) if v.shape == view else v for k, v in s2.items()}
            else:
                p2, s2 = rule(p, g, s, h, **static)
            new_params.append(p2.astype(p.dtype))
            new_states.append(s2)
        return new_params, new_states
    return update


def _real(x):
    return jnp.stack([x.real, x.imag], axis=-1)


def _complex(x):
    return jax.lax.complex(x[..., 0], x[..., 1])


def _real_state(s, p):
    return {k: _real(v) if v is not None and jnp.iscomplexobj(v) and v.shape == p.shape else v
            for k, v in s.items()}


def zeros_like(x):
    return jnp.zeros_like(x)


def full_like(x, value):
    return jnp.full_like(x, value)


def scalar_on(x, value, dtype):
    """A 0-dim array of `value` on the device(s) holding x."""
    devices = x.devices()
    out = jnp.asarray(value, dtype)
    return jax.device_put(out, next(iter(devices))) if len(devices) == 1 else out


def scalar(x, like):
    """A float64 scalar coefficient as `like`'s dtype (PyTorch applies Python scalars in the tensor's dtype)."""
    return jnp.asarray(x, like.dtype)


def lerp(start, end, weight):
    """PyTorch's lerp: start + w (end - start) for w < 0.5, else end - (end - start)(1 - w) (exact at w = 1)."""
    w = scalar(weight, start)
    diff = end - start
    return jnp.where(w < 0.5, start + w * diff, end - diff * (1 - w))
