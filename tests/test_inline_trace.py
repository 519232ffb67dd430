"""Tracing for new shapes inlines jnp's nested jits (tapegrad/_inline_trace.py), but never unrolls a scan."""
import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import tapegrad
from tapegrad import _inline_trace

from conftest import require

CALLS = {"jit", "pjit"}   # (the nested jit's primitive, by its name in this JAX and older ones)


def _primitives(jaxpr, found=None):
    found = set() if found is None else found
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for value in eqn.params.values():
            inner = getattr(value, "jaxpr", None)
            if inner is not None:
                _primitives(getattr(inner, "jaxpr", inner), found)
    return found


def test_nested_jits_are_inlined_into_the_same_primitives():
    def fn(x, t):
        return -jnp.take_along_axis(jax.nn.log_softmax(x, 1), t[:, None], 1).mean()
    args = (jax.ShapeDtypeStruct((5, 3), jnp.float32), jax.ShapeDtypeStruct((5,), jnp.int32))
    inlined, shapes = _inline_trace.make_jaxpr(fn, *args, ops=())
    plain, plain_shapes = jax.make_jaxpr(fn, return_shape=True)(*args)
    assert not CALLS & {e.primitive.name for e in inlined.jaxpr.eqns}
    assert CALLS & {e.primitive.name for e in plain.jaxpr.eqns}
    assert _primitives(inlined.jaxpr) - CALLS == _primitives(plain.jaxpr) - CALLS
    assert shapes == plain_shapes
    x, t = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32), np.arange(5, dtype=np.int32) % 3
    run = jax.extend.core.jaxpr_as_fun
    np.testing.assert_allclose(run(inlined)(x, t)[0], run(plain)(x, t)[0], rtol=1e-6)


def test_a_scan_is_kept_and_its_op_remembered(monkeypatch):
    monkeypatch.setattr(_inline_trace, "_looping", set())
    op = object()

    def fn(xs):
        return jax.lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(3), xs)

    args = (jax.ShapeDtypeStruct((40, 3), jnp.float32),)
    closed, _ = _inline_trace.make_jaxpr(fn, *args, ops=(op,))
    assert "scan" in _primitives(closed.jaxpr) and len(closed.jaxpr.eqns) < 10   # (not 40 unrolled steps)
    assert op in _inline_trace._looping
    closed, _ = _inline_trace.make_jaxpr(fn, *args, ops=(op,))   # straight to a plain trace now
    assert "scan" in _primitives(closed.jaxpr)


def test_an_unknown_function_is_traced_as_before():
    def fn(x, t):
        return jnp.take_along_axis(x, t[:, None], 1)
    closed, _ = _inline_trace.make_jaxpr(fn, jax.ShapeDtypeStruct((5, 3), jnp.float32),
                                         jax.ShapeDtypeStruct((5,), jnp.int32), ops=None)
    assert CALLS & {e.primitive.name for e in closed.jaxpr.eqns}


@pytest.mark.parametrize("length", [7, 12])
def test_a_recurrent_layer_over_new_lengths_keeps_its_scan(length):
    """nn.LSTM's kernel is a scan: a new length is traced with it kept (a NumPy-tier run of an unrolled trace
    took ~30 times longer)."""
    torch = require("torch")
    tapegrad.manual_seed(0)
    lstm = tapegrad.nn.LSTM(4, 5, batch_first=True)
    x = np.random.default_rng(length).standard_normal((2, length, 4)).astype(np.float32)
    out, _ = lstm(tapegrad.tensor(x))
    out.sum().backward()
    theirs = torch.nn.LSTM(4, 5, batch_first=True)
    with torch.no_grad():
        for (_, p), (_, q) in zip(lstm.named_parameters(), theirs.named_parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    their_out, _ = theirs(torch.tensor(x))
    their_out.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), their_out.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lstm.weight_hh_l0.grad.numpy(), theirs.weight_hh_l0.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert any(getattr(op, "name", "").startswith(("lstm", "rnn")) for op in _inline_trace._looping)
