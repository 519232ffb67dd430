"""The contestants' libraries, and the hand-written `jax.jit` step every JAX baseline uses."""
import os
import warnings

import numpy as np

from .catalog import PT, TG


# `python -m benchmarks --device cuda`: the PyTorch-API sides create their tensors there (jax.jit uses JAX's
# default device, the GPU when there is one).
DEVICE = os.environ.get("TAPEGRAD_BENCH_DEVICE", "cpu")


def libraries(h):
    """{side: module} for the PyTorch-API sides this process runs (torch is skipped when absent)."""
    out = {}
    if h.runs(PT):
        try:
            import torch
            torch.manual_seed(0)
            torch.set_default_device(DEVICE)
            out[PT] = torch
        except ImportError:
            pass
    if h.runs(TG):
        import tapegrad
        tapegrad.manual_seed(0)
        tapegrad.set_default_device(DEVICE)
        out[TG] = tapegrad
    # references first: when tapegrad overruns its budget the baselines are already measured
    return out


def to_jax(tree):
    import jax
    import jax.numpy as jnp
    return jax.tree_util.tree_map(lambda a: jnp.asarray(a), tree)


def jax_step_fn(fn, state, batch):
    """A step as a competent JAX user writes it: fn(*state, *batch) -> (*new_state, loss), jitted once,
    the state (parameters, optimizer buffers) donated so XLA updates it in place, shapes and dtypes
    stable from the first call on. Returns a callable that runs one step and returns the loss as a float."""
    import jax
    n = len(state)
    jitted = jax.jit(fn, donate_argnums=tuple(range(n)))
    box = {"state": tuple(state)}

    def step():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*donated buffers were not usable.*")
            *new_state, loss = jitted(*box["state"], *batch)
        box["state"] = tuple(new_state)
        return float(loss)
    step.jitted = jitted
    return step





def numpy_init(shapes, seed=0):
    """{name: shape} -> {name: float32 array}, uniform in ±1/sqrt(last dim), drawn in the order given."""
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-1, 1, shape).astype(np.float32) / np.float32(np.sqrt(shape[-1]) if shape else 1)
            for name, shape in shapes.items()}


def state_shapes(model):
    return {name: tuple(v.shape) for name, v in model.state_dict().items() if v.dtype.is_floating_point}


def same_init(models, seed=0, shapes=None):
    """Give every side's model the same weights: {side: (lib, model)}; the shapes are those of the first
    model's floating-point state (or `shapes`). Returns the arrays (for a hand-written JAX side)."""
    if shapes is None:
        shapes = state_shapes(next(iter(models.values()))[1])
    arrays = numpy_init(shapes, seed)
    for lib, model in models.values():
        if state_shapes(model) != shapes:
            raise RuntimeError("benchmark models differ between sides: " + type(model).__name__)
        state = model.state_dict()
        with lib.no_grad():
            for name, a in arrays.items():
                state[name].copy_(lib.tensor(a))
    return arrays
