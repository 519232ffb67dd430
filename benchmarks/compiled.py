"""`tapegrad.compile` workloads: the same steps as `mlp_adam`, `transformer_adamw` and `chain_fwd_bwd`,
with tapegrad's side running the whole step as one compiled program; PyTorch runs eagerly, JAX is the
hand-written `jax.jit` step. The step returns the loss tensor; `.item()` is read outside the compiled
function (inside it would be a graph break), on every side alike.
"""
import numpy as np

from .catalog import JX, PT, TG
from . import chain, mlp, transformer
from .sides import jax_step_fn, libraries, same_init, to_jax


def _compiled(lib, fn):
    return lib.compile(fn) if lib.__name__ == "tapegrad" else fn


def _step_contestant(lib, model, opt, x, y, logits_and_targets):
    """One training step (compiled on tapegrad's side) returning the loss; `.item()` read outside it."""
    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(*logits_and_targets(model(x), y))
        loss.backward()
        opt.step()
        return loss
    run = _compiled(lib, step)
    return lambda: run(x, y).item()


def _mlp_contestants(h):
    arrays, (xn, yn) = mlp.init_arrays(), mlp.batch_arrays()
    out = {}
    for side, lib in libraries(h).items():
        model = mlp.sequential(lib, arrays)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        out[side] = _step_contestant(lib, model, opt, lib.tensor(xn), lib.tensor(yn), lambda out, y: (out, y))
    if h.runs(JX):
        import jax.numpy as jnp
        p = to_jax(arrays)
        state = (p, [jnp.zeros_like(a) for a in p], [jnp.zeros_like(a) for a in p], jnp.zeros((), jnp.float32))
        out[JX] = jax_step_fn(mlp.jax_adam, state, to_jax((xn, yn)))
    return out


def _transformer_contestants(h):
    tok, tgt = transformer._batch()
    models = {side: (lib, transformer.gpt(lib, 1, causal=False)) for side, lib in libraries(h).items()}
    arrays = same_init(models, shapes=transformer.param_shapes(1))
    out = {}
    for side, (lib, model) in models.items():
        opt = lib.optim.AdamW(model.parameters(), lr=transformer.LR, weight_decay=transformer.WD)
        out[side] = _step_contestant(lib, model, opt, lib.tensor(tok), lib.tensor(tgt),
                                     lambda out, y: (out.reshape(-1, transformer.VOCAB), y.reshape(-1)))
    if h.runs(JX):
        import jax.numpy as jnp
        p = to_jax(arrays)
        state = (p, {k: jnp.zeros_like(a) for k, a in p.items()}, {k: jnp.zeros_like(a) for k, a in p.items()},
                 jnp.zeros((), jnp.float32))
        out[JX] = jax_step_fn(transformer.jax_adamw, state, to_jax((tok, tgt)))
    return out


def _first_calls(h, contestants):
    """Calls 1 and 2 timed one by one in a fresh process per side: what it costs to reach a compiled
    step (tapegrad: the eager first step that creates the optimizer state, then the trace and compile;
    jax.jit: the compile with the first step, then a warm step)."""
    for side in (PT, JX, TG):
        if side in contestants:
            step = contestants[side]
            h.loop("calls12", side, lambda i: step(), 2, record_steps=True)


def run_mlp_adam_compiled(h):
    h.steady("steady", _mlp_contestants(h), steps_per_round=h.size(20, 5), rounds=h.size(15, 3))


def run_transformer_adamw_compiled(h):
    h.steady("steady", _transformer_contestants(h), steps_per_round=h.size(10, 3), rounds=h.size(15, 3))


def run_first_calls_compiled(h):
    _first_calls(h, _transformer_contestants(h))


def run_chain_compiled(h):
    contestants = {}
    for side, lib in libraries(h).items():
        x = lib.tensor(chain.inputs(), requires_grad=True)

        def fwd_bwd(x, lib=lib):
            chain.chain(x).backward()
            g = x.grad
            x.grad = None
            return g
        run = _compiled(lib, fwd_bwd)
        contestants[side] = (lambda run=run, x=x: run(x)[0].item())
    if h.runs(JX):
        import jax
        xj = jax.numpy.asarray(chain.inputs())
        grad = jax.jit(jax.grad(chain.jax_chain))
        contestants[JX] = lambda: float(np.asarray(grad(xj))[0])
    h.steady("steady", contestants, steps_per_round=h.size(50, 10), rounds=h.size(15, 3))
