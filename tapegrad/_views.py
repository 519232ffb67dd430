"""Views: tensors that share a base's Storage and read it through a recipe.

A view's recipe is the sequence of view ops (op, statics) applied to the base
array. Reading applies it (one jitted call, cached by recipe, and the result
cached until the storage version changes). Writing through a view rewrites
the base functionally: the recipe applied to an iota of the base gives the
flat base positions of the view's elements, and the new values are scattered
there. One mechanism serves every view op.
"""
import jax
import jax.numpy as jnp

from . import _dispatch
from ._dispatch import pure_fn

_readers = {}
_writers = {}


class ViewInfo:
    __slots__ = ("base", "steps", "version", "value")

    def __init__(self, base, steps, version, value):
        self.base = base        # the base Tensor (PyTorch's ._base)
        self.steps = steps      # ((op, static), ...) from the base's array to this view
        self.version = version  # storage version `value` was read at
        self.value = value


def compose(steps):
    fns = [pure_fn(op, static, None) for op, static in steps]

    def read(x):
        for f in fns:
            x = f(x)
        return x
    return read


def reader(steps):
    fn = _readers.get(steps)
    if fn is None:
        fn = _readers[steps] = jax.jit(compose(steps))
    return fn


def scatter_into(steps, base, new):
    """The base array with the elements selected by `steps` replaced by `new` (pure)."""
    positions = compose(steps)(jnp.arange(base.size, dtype=jnp.int64).reshape(base.shape))
    new = jnp.broadcast_to(jnp.asarray(new, base.dtype), positions.shape)
    return base.reshape(-1).at[positions.reshape(-1)].set(new.reshape(-1)).reshape(base.shape)


def writer(steps):
    fn = _writers.get(steps)
    if fn is None:
        fn = _writers[steps] = jax.jit(lambda base, new: scatter_into(steps, base, new))
    return fn


def read(t):
    info, storage = t._view, t._storage
    if info.version != storage.version:
        info.value = reader(info.steps)(storage.value)
        info.version = storage.version
    return info.value


def write(t, value):
    info, storage = t._view, t._storage
    storage.write(writer(info.steps)(storage.value, value))
    info.value, info.version = value, storage.version


def make_view(out, source, op, static, value):
    """Turn the freshly computed tensor `out` into a view of `source` through (op, static)."""
    if source._view is None:
        base, steps = source, ((op, static),)
    else:
        base, steps = source._view.base, source._view.steps + ((op, static),)
    out._storage = source._storage
    out._view = ViewInfo(base, steps, source._storage.version, value)


_dispatch.make_view = make_view
