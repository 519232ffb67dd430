"""The foreach group update: an optimizer's rule over every parameter of a group, recorded as one op.

A rule is a pure function of one parameter:

    rule(p, g, state, h, **static) -> (new_p, new_state)

where p, g and the state entries are arrays, h holds the hyperparameters as
float64 scalars and static holds the options that change the program (amsgrad,
nesterov, ...). `record` puts the whole group's update on the tape as ONE op
(its inputs: parameters, grads, state, hyperparameters; its outputs: the new
parameters and state), so it is computed in the same XLA program as the
backward that produced the grads and the next forward that reads the
parameters: a training step with an optimizer is one program. Python-number
hyperparameters are scalar inputs of that program (a scheduler changing lr
never recompiles).

Complex parameters are updated through their real view (as PyTorch's
optimizers do), so a rule only ever sees real arrays.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dispatch
from .._ops._registry import KEEP, Op
from ..device import to_jax_device
from .._host_put import put

_stats = {"calls": 0}
_update_ops = {}   # number of outputs -> the update op (one table entry per output count)


def cache_info():
    """{'calls': group updates recorded, 'entries': update ops defined}."""
    return dict(_stats, entries=len(_update_ops))


def clear_cache():
    _stats["calls"] = 0


def record(rule, static, params, grads, states, hyper):
    """Record `rule` over every (param, grad, state) as one op; returns (new_params, new_states) as
    tape values (pending until something needs them)."""
    n = len(params)
    keys = tuple(states[0]) if states else ()
    names = tuple(hyper)
    flat = list(params) + list(grads) + [s[k] for s in states for k in keys] + [hyper[k] for k in names]
    nout = n * (1 + len(keys))
    op = _update_ops.get(nout)
    if op is None:
        op = _update_ops[nout] = Op("foreach_update", _flat_update, dtype_rule=KEEP, nout=nout, diff=())
    _stats["calls"] += 1
    outs = _dispatch.compute_all(op, (("rule", rule), ("static", static), ("layout", (n, keys, names))), flat)
    rest = outs[n:]
    width = len(keys)
    return list(outs[:n]), [dict(zip(keys, rest[i * width:(i + 1) * width])) for i in range(n)]


def _flat_update(*xs, rule, static, layout):
    n, keys, names = layout
    width = len(keys)
    params, grads = xs[:n], xs[n:2 * n]
    flat_states = xs[2 * n:2 * n + n * width]
    states = [dict(zip(keys, flat_states[i * width:(i + 1) * width])) for i in range(n)]
    hyper = dict(zip(names, xs[2 * n + n * width:]))
    new_params, new_states = _group_update(rule, dict(static))(params, grads, states, hyper)
    outs = tuple(new_params) + tuple(s[k] for s in new_states for k in keys)
    return outs if len(outs) > 1 else outs[0]


def _group_update(rule, static):
    def update(params, grads, states, hyper):
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


def full_on(t, shape, value, dtype):
    """An array of `value` placed on tensor t's device, made without running an XLA program (state
    buffers are created outside the step's program, so creating them must not compile anything)."""
    spread = getattr(t._peek(), "sharding", None)   # a parameter over several devices: its state alike (FSDP)
    if spread is not None and len(spread.device_set) > 1 and tuple(shape) == tuple(t.shape):
        return jax.device_put(np.full(shape, value, dtype), spread)
    return put(np.full(shape, value, dtype), to_jax_device(t.device))


def scalar(x, like):
    """A float64 scalar coefficient as `like`'s dtype (PyTorch applies Python scalars in the tensor's dtype)."""
    return jnp.asarray(x, like.dtype)


def lerp(start, end, weight):
    """PyTorch's lerp: start + w (end - start) for w < 0.5, else end - (end - start)(1 - w) (exact at w = 1)."""
    w = scalar(weight, start)
    diff = end - start
    return jnp.where(w < 0.5, start + w * diff, end - diff * (1 - w))
