"""MLP workloads: manual SGD, nn.Sequential + Adam, and the first steps in a fresh process.

The model code is written once against the PyTorch API (`lib` is tapegrad or torch); the hand-written
JAX step beside it is what a competent JAX user writes: one `jax.jit` with donated buffers.
"""
import numpy as np

from .catalog import JX, PT, TG
from .sides import jax_step_fn, libraries, to_jax

SIZES = (784, 256, 256, 10)
BATCH = 128
LR = 0.01
BETAS, EPS = (0.9, 0.999), 1e-8


def init_arrays(sizes=SIZES, seed=0):
    """Weights in PyTorch's (out, in) layout, drawn with NumPy so every side starts from the same values."""
    rng = np.random.default_rng(seed)
    arrays = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        arrays += [rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                   rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)]
    return arrays


def batch_arrays(n=BATCH, sizes=SIZES, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, sizes[0])).astype(np.float32), rng.integers(0, sizes[-1], n)


# ---- PyTorch-API code (tapegrad and torch) ---------------------------------------------------------

def forward(lib, params, x):
    F = lib.nn.functional
    h = x
    for i in range(0, len(params) - 2, 2):
        h = F.relu(F.linear(h, params[i], params[i + 1]))
    return F.linear(h, params[-2], params[-1])


def sgd_step(lib, params, x, y):
    """The seed chapter's four steps: forward, backward, update under no_grad, zero the grads."""
    loss = lib.nn.functional.cross_entropy(forward(lib, params, x), y)
    loss.backward()
    with lib.no_grad():
        for p in params:
            p -= LR * p.grad
    for p in params:
        p.grad.zero_()
    return loss.item()


def sequential(lib, arrays):
    nn = lib.nn
    layers = []
    for i in range(0, len(arrays), 2):
        layers.append(nn.Linear(arrays[i].shape[1], arrays[i].shape[0]))
        if i + 2 < len(arrays):
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    linear_ids = [i for i, m in enumerate(layers) if isinstance(m, nn.Linear)]
    state = {}
    for k, idx in enumerate(linear_ids):
        state[f"{idx}.weight"] = lib.tensor(arrays[2 * k])
        state[f"{idx}.bias"] = lib.tensor(arrays[2 * k + 1])
    model.load_state_dict(state)
    return model


def module_step(lib, model, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


# ---- hand-written JAX ------------------------------------------------------------------------------

def jax_loss(params, x, y):
    import jax
    import jax.numpy as jnp
    h = x
    for i in range(0, len(params) - 2, 2):
        h = jax.nn.relu(h @ params[i].T + params[i + 1])
    logp = jax.nn.log_softmax(h @ params[-2].T + params[-1])
    return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()


def jax_sgd(params, x, y):
    import jax
    loss, grads = jax.value_and_grad(jax_loss)(params, x, y)
    return [p - LR * g for p, g in zip(params, grads)], loss


def jax_adam(params, m, v, t, x, y):
    """torch.optim.Adam's arithmetic (bias corrections folded as PyTorch folds them)."""
    import jax
    import jax.numpy as jnp
    loss, grads = jax.value_and_grad(jax_loss)(params, x, y)
    b1, b2 = BETAS
    t = t + 1
    m = [b1 * mi + (1 - b1) * g for mi, g in zip(m, grads)]
    v = [b2 * vi + (1 - b2) * g * g for vi, g in zip(v, grads)]
    step = 1e-3 / (1 - b1 ** t)
    c2 = jnp.sqrt(1 - b2 ** t)
    params = [p - step * mi / (jnp.sqrt(vi) / c2 + EPS) for p, mi, vi in zip(params, m, v)]
    return params, m, v, t, loss


# ---- workloads ----------------------------------------------------------------------------------

def _sgd_contestants(h):
    arrays, (xn, yn) = init_arrays(), batch_arrays()
    out = {}
    for side, lib in libraries(h).items():
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        x, y = lib.tensor(xn), lib.tensor(yn)
        out[side] = (lambda lib=lib, params=params, x=x, y=y: sgd_step(lib, params, x, y))
    if h.runs(JX):
        out[JX] = jax_step_fn(jax_sgd, (to_jax(arrays),), to_jax((xn, yn)))
    return out


def run_mlp_sgd(h):
    h.steady("steady", _sgd_contestants(h), steps_per_round=h.size(20, 5), rounds=h.size(15, 3))


def run_mlp_adam(h):
    arrays, (xn, yn) = init_arrays(), batch_arrays()
    contestants = {}
    for side, lib in libraries(h).items():
        model = sequential(lib, arrays)
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        x, y = lib.tensor(xn), lib.tensor(yn)
        contestants[side] = (lambda lib=lib, model=model, opt=opt, x=x, y=y: module_step(lib, model, opt, x, y))
    if h.runs(JX):
        import jax.numpy as jnp
        p = to_jax(arrays)
        state = (p, [jnp.zeros_like(a) for a in p], [jnp.zeros_like(a) for a in p], jnp.zeros((), jnp.float32))
        contestants[JX] = jax_step_fn(jax_adam, state, to_jax((xn, yn)))
    h.steady("steady", contestants, steps_per_round=h.size(20, 5), rounds=h.size(15, 3))


def run_first_step_mlp(h):
    first_steps(h, _sgd_contestants(h))


def first_steps(h, contestants):
    """Steps 1, 2, 3 timed one by one; run in a fresh process per side, so nothing was compiled before."""
    for side in (PT, JX, TG):
        if side not in contestants:
            continue
        step = contestants[side]
        res = h.loop("steps123", side, lambda i: step(), 3, record_steps=True)
        if res and res["steps_ms"]:
            h.value("step1", side, res["steps_ms"][0], "ms", compiles=res["step_compiles"][0])
