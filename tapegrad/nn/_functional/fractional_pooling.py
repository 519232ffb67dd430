"""fractional_max_pool2d/3d: max pooling over windows whose starts are drawn per plane (Graham's
fractional max pooling), with PyTorch's intervals, tie rule, indices and errors."""
from ... import random as _random
from ..._dispatch import apply
from ..._ops import pooling_indices as PI
from ._util import ntuple

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional(nd, input, kernel_size, output_size, output_ratio, return_indices, samples):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:   # PyTorch's 2-d form takes len() of the ratio first
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of "
                             "Ints.")
        ratio = output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
        ratio = tuple(ratio) * nd if len(ratio) == 1 else tuple(ratio)
        output_size = [int(input.shape[input.ndim - nd + i] * ratio[i]) for i in range(nd)]
    kernel, out = ntuple(kernel_size, nd, "kernel_size"), ntuple(output_size, nd, "output_size")
    where = f"{name}{'_out' if nd == 3 else ''}()"
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    spatial = input.shape[input.ndim - nd:]
    for axis, n, k, o in zip(_AXES[nd], spatial, kernel, out):
        if o + k - 1 > n - (nd == 3):   # PyTorch's 3-d check is one stricter than its 2-d one
            raise RuntimeError(f"{where}: pool {axis} {k} too large relative to input {axis} {n}")
    batched = input.ndim == nd + 2
    channels = input.shape[input.ndim - nd - 1]
    if samples is None:
        samples = _random.rand(input.shape[0] if batched else 1, channels, nd, dtype=input.dtype)
    if samples.dtype is not input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.shape[0] < (input.shape[0] if batched else 1):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    samples = samples[:input.shape[0]] if batched else samples[0]
    indices = apply(PI.fractional_max_pool_indices, input, samples, kernel=kernel, out=out)
    values = apply(PI.fractional_max_pool_with_indices, input, indices, nd=nd)
    return (values, indices) if return_indices else values


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)
