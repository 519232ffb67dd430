"""torch.binomial: PyTorch's checks, in its order, then draws as PyTorch's CPU sampler makes them (on the host,
value by value), or from a jax.random key under a trace or on another device."""

import numpy as np

from .. import _dtypes as D
from .._broadcast_errors import broadcast_mismatch
from .._dispatch import apply
from .._ops import random_binomial as RB
from .._tensor import Tensor
from ._common import SCALAR_NAME
from .._user_frames import warn_user


def binomial(count, prob, generator=None):
    """Draws from Binomial(count, prob), elementwise over count and prob broadcast together (floating tensors
    of one dtype). Not differentiable: the result's node raises in backward, as PyTorch's."""
    for position, (t, name) in enumerate(((count, "count"), (prob, "prob")), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(t).__name__}")
    for t, name in ((count, "count"), (prob, "prob")):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{SCALAR_NAME[t.dtype.name]}")
    mismatch = broadcast_mismatch([tuple(count.shape), tuple(prob.shape)])
    if mismatch is not None:
        raise mismatch
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {SCALAR_NAME[prob.dtype.name]} but expected {SCALAR_NAME[count.dtype.name]}")
    if count.dtype not in (D.float32, D.float64):
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for '{SCALAR_NAME[count.dtype.name]}'. "
                                  "Convert count and prob to float32 or float64 first.")
    shape = tuple(np.broadcast_shapes(tuple(count.shape), tuple(prob.shape)))
    if shape != tuple(count.shape) and count.numel():   # (PyTorch resizes its result, made of count's shape)
        warn_user(f"An output with one or more elements was resized since it had shape {list(count.shape)}, "
                  f"which does not match the required output shape {list(shape)}. This behavior is "
                  "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                  "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                  "elements with t.resize_(0).", UserWarning)
    source, drawn = _draws(count, prob, shape, generator)
    return apply(RB.binomial, count, prob, source, **drawn)


def _draws(count, prob, shape, generator):
    """(source, statics): PyTorch's CPU draws, in the result's order, or a key's data."""
    from ..random import host_stream, placed
    from .._cpu_binomial import binomial as sample
    from ._random import _key
    stream = host_stream(generator, count.device, value_dependent=True)
    if stream is None:
        return _key(generator), {}
    c = np.broadcast_to(np.asarray(count.detach().numpy()), shape).reshape(-1)
    p = np.broadcast_to(np.asarray(prob.detach().numpy()), shape).reshape(-1)
    values = sample(stream, c, p, count.dtype.np).reshape(shape)
    return Tensor._wrap(placed(values, count.device)), {"drawn": True}
