"""The 200-op elementwise chain: forward + backward, and backward() of a computed forward."""
import numpy as np

from .catalog import JX
from .sides import libraries

N, OPS = 256, 200


def inputs():
    return np.random.default_rng(0).standard_normal(N).astype(np.float32)


def chain(y):
    """PyTorch-API code (tapegrad and torch)."""
    for _ in range(OPS // 4):
        y = (y * 1.01).sin()
        y = (y + 0.5).tanh()
    return y.sum()


def jax_chain(y):
    import jax.numpy as jnp
    for _ in range(OPS // 4):
        y = jnp.tanh(jnp.sin(y * 1.01) + 0.5)
    return y.sum()


def _grad_ready(lib, x):
    """Take x.grad for the next step; the caller's [0].item() waits for it on every side alike."""
    g = x.grad
    x.grad = None
    return g


def run_chain_fwd_bwd(h):
    contestants = {}
    for side, lib in libraries(h).items():
        x = lib.tensor(inputs(), requires_grad=True)

        def step(lib=lib, x=x):
            chain(x).backward()
            return _grad_ready(lib, x)[0].item()
        contestants[side] = step
    if h.runs(JX):
        import jax
        xj = jax.numpy.asarray(inputs())
        grad = jax.jit(jax.grad(jax_chain))
        contestants[JX] = lambda: float(np.asarray(grad(xj))[0])
    h.steady("steady", contestants, steps_per_round=h.size(50, 10), rounds=h.size(15, 3))


def run_chain_bwd(h):
    """Only backward() is timed; on every side the forward's value exists before the clock starts."""
    import time
    contestants = {}
    for side, lib in libraries(h).items():
        x = lib.tensor(inputs(), requires_grad=True)

        def step(lib=lib, x=x):
            loss = chain(x)
            loss.item()                  # the forward is computed, untimed
            t0 = time.perf_counter()
            loss.backward()
            _grad_ready(lib, x)[0].item()
            return time.perf_counter() - t0
        contestants[side] = step
    if h.runs(JX):
        import jax
        xj = jax.numpy.asarray(inputs())
        forward = jax.jit(lambda x: jax.vjp(jax_chain, x))      # value and residuals
        pullback = jax.jit(lambda f, ct: f(ct)[0])
        ct = jax.numpy.ones((), jax.numpy.float32)

        def jstep():
            loss, f = forward(xj)
            float(loss)
            t0 = time.perf_counter()
            float(np.asarray(pullback(f, ct))[0])
            return time.perf_counter() - t0
        contestants[JX] = jstep
    h.steady("steady", contestants, steps_per_round=h.size(50, 10), rounds=h.size(15, 3), self_timed=True)
