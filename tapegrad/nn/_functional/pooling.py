"""Max, average and adaptive pooling."""
from ..._dispatch import apply
from ..._grad_mode import is_grad_enabled
from ..._memory_format import contiguous_format, keep_format, suggest_memory_format
from ..._ops import nn_pooling as K, pooling_indices as PI
from ..._arg_types import as_int
from . import _pool_args
from ._util import SCALAR_NAMES, check_float_kernel


def _batched(input, nd, name):
    """PyTorch's rank check, with each kernel's own error (avg_pool2d reads size(-3) before it checks)."""
    n = input.ndim
    if n in (nd + 1, nd + 2):
        return input
    if name in ("avg_pool1d", "max_pool1d_with_indices"):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {n}-dimensional tensor for argument #1 'self' "
                           f"(while checking arguments for {name[:10]}). Pass a (C, L) or (N, C, L) input.")
    if name == "avg_pool2d" and n < 3:
        raise IndexError("Dimension specified as -3 but tensor has no dimensions" if n == 0 else
                         f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got -3)")
    if name in ("avg_pool2d", "max_pool1d"):
        raise RuntimeError(f"{'max_pool1d: ' * (nd == 1)}Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with "
                           f"optional 0 dim batch size for input, but got:{list(input.shape)}")
    raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input, but got "
                       f"{name} of a {n}-d tensor {list(input.shape)}")


# The dtypes PyTorch's CPU kernels take, and the kernel its NotImplementedError names otherwise
_AVG_DTYPES = {1: ("avg_pool2d", {"float16", "bfloat16", "float32", "float64", "int64"}),
               2: ("avg_pool2d", {"float16", "bfloat16", "float32", "float64", "int64"}),
               3: ("avg_pool3d_out_frame", {"float32", "float64", "int64"})}


def _check_kernel_dtype(input, kernel, dtypes):
    if input.dtype.name not in dtypes:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'. Convert the "
                                  "input to a dtype the kernel takes first, e.g. x.float().")


def _out_size(size, k, s, p, d, ceil_mode):
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1  # the last window must start inside the input or its left padding
    return out


def _window_plan(name, input, nd, window, ceil_mode):
    kernel, stride, padding, dilation = window
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    spatial = input.shape[input.ndim - nd:]
    outs = [_out_size(*args, ceil_mode) for args in zip(spatial, kernel, stride, padding, dilation)]
    if min(outs) <= 0:
        _too_small(name, input.shape[-nd - 1], spatial, outs, kernel)
    pads = tuple((p, (out - 1) * s + d * (k - 1) + 1 - size - p)
                 for size, out, k, s, p, d in zip(spatial, outs, kernel, stride, padding, dilation))
    return kernel, stride, pads, padding, dilation


def _too_small(name, channels, spatial, outs, kernel):
    """PyTorch's error for a window larger than the (padded) input, in the wording of each kernel."""
    fix = " Reduce kernel_size or padding, or pass a larger input."
    if name == "avg_pool3d":
        raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {}).".format(
            *spatial, *kernel) + fix)
    if name == "max_pool1d":
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {outs[0]}.{fix}")
    if len(spatial) == 1:   # PyTorch pools 1-d as 2-d planes of height 1
        spatial, outs = (1,) + tuple(spatial), [1] + outs
    raise RuntimeError(f"Given input size: ({'x'.join(map(str, (channels,) + tuple(spatial)))}). Calculated output "
                       f"size: ({'x'.join(map(str, [channels] + outs))}). Output size is too small.{fix}")


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    name = f"max_pool{nd}d" + "_with_indices" * bool(return_indices and nd == 1)
    window = _pool_args.window(f"max_pool{nd}d" + "_with_indices" * bool(return_indices), nd, kernel_size, stride,
                               padding, dilation, flags=(("ceil_mode", ceil_mode, 6),))
    _batched(input, nd, name)
    if input.dtype.is_complex or input.dtype.name == "bool":   # (1-d with indices runs the 2-d kernel)
        _check_kernel_dtype(input, "max_pool1d_impl" if nd == 1 and not return_indices else
                            f"max_pool{max(nd, 2)}d", ())
    kernel, stride, pads, _, dilation = _window_plan(name, input, nd, window, ceil_mode)
    if not return_indices:
        if nd > 1:
            return apply(K.max_pool, input, kernel=kernel, stride=stride, pads=pads, dilation=dilation)
        check_float_kernel(input, "max_pool1d_impl")  # PyTorch's 1-d kernel without indices has no int version
        if input.device.type == "cpu" and not (input.requires_grad and is_grad_enabled()):
            # PyTorch's CPU 1-d kernel, run where no gradient is wanted: a new tensor, not a view
            return apply(K.max_pool, input, kernel=kernel, stride=stride, pads=pads, dilation=dilation)
        # else PyTorch's max_pool1d_with_indices: 2-d pooling over a unit row (UnsqueezeBackward0, then
        # SqueezeBackward1), so the result is a view
        out = apply(K.max_pool, input.unsqueeze(-2), kernel=(1,) + kernel, stride=(1,) + stride,
                    pads=((0, 0),) + pads, dilation=(1,) + dilation)
        return out.squeeze(-2)
    spatial = input.shape[input.ndim - nd:]
    windows = tuple(("window", n, (n + lo + hi - d * (k - 1) - 1) // s + 1, k, s, lo, d)
                    for n, k, s, (lo, hi), d in zip(spatial, kernel, stride, pads, dilation))
    return _with_indices(PI.max_pool_with_indices, input, windows)


def _with_indices(values_op, input, windows):
    if len(windows) == 1:  # PyTorch pools 1-d as 2-d planes of height 1
        values, indices = _with_indices(values_op, input.unsqueeze(-2), (("window", 1, 1, 1, 1, 0, 1),) + windows)
        return values.squeeze(-2), indices.squeeze(-2)
    indices = apply(PI.max_pool_indices, input, windows=windows)
    return apply(values_op, input, indices, nd=len(windows)), indices


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    name = f"avg_pool{nd}d"
    window = _pool_args.window(name, nd, kernel_size, stride, padding, 1, flags=(
        ("ceil_mode", ceil_mode, None), ("count_include_pad", count_include_pad, None)))
    if divisor_override is not None:
        as_int(divisor_override, "divisor_override", name)
    _batched(input, nd, name)
    _check_kernel_dtype(input, *_AVG_DTYPES[nd])
    kernel, stride, pads, padding, _ = _window_plan(name, input, nd, window, ceil_mode)
    if nd == 1:   # as PyTorch: 2-d pooling over a unit row
        out = apply(K.avg_pool, input.unsqueeze(-2), kernel=(1,) + kernel, stride=(1,) + stride,
                    pads=((0, 0),) + pads, padding=(0,) + padding, count_include_pad=bool(count_include_pad),
                    divisor_override=divisor_override)
        return out.squeeze(-2)
    return apply(K.avg_pool, input, kernel=kernel, stride=stride, pads=pads, padding=padding,
                 count_include_pad=bool(count_include_pad), divisor_override=divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _adaptive_size(input, nd, output_size):
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    spatial = input.shape[input.ndim - nd:]
    return tuple(int(s if o is None else o) for o, s in zip(sizes, spatial))


def _adaptive_avg(input, size, keeps_format=False):
    if all(o == 1 for o in size):   # as PyTorch: a mean over the spatial dims (MeanBackward1)
        out = input.mean(tuple(range(-len(size), 0)), keepdim=True)
        if suggest_memory_format(input) is not contiguous_format:
            # PyTorch then gives the mean channels-last strides in place (AsStridedBackward1)
            n, c = input.shape[:2]
            out.as_strided_((n, c) + (1,) * len(size), (c, 1) + (c,) * len(size))
        return out
    out = apply(K.adaptive_avg_pool, input, output_size=size)
    return keep_format(out, input) if keeps_format else out   # PyTorch's 2-d kernel keeps channels_last


def adaptive_avg_pool1d(input, output_size):
    check_float_kernel(input, "adaptive_avg_pool2d")
    # as PyTorch: 2-d pooling over a unit row (UnsqueezeBackward0, then SqueezeBackward1)
    return _adaptive_avg(input.unsqueeze(-2), (1,) + _adaptive_size(input, 1, output_size)).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    check_float_kernel(input, "adaptive_avg_pool2d")
    return _adaptive_avg(input, _adaptive_size(input, 2, output_size), keeps_format=True)


def adaptive_avg_pool3d(input, output_size):
    check_float_kernel(input, "adaptive_avg_pool3d_cpu")
    return _adaptive_avg(input, _adaptive_size(input, 3, output_size))


_ADAPTIVE_MAX_KERNEL = {1: "adaptive_max_pool2d", 2: "adaptive_max_pool2d", 3: "adaptive_max_pool3d_cpu"}


def _adaptive_max(input, nd, output_size, return_indices):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_max_pool1d)" if nd == 1 else
                           f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    check_float_kernel(input, _ADAPTIVE_MAX_KERNEL[nd])
    size = _adaptive_size(input, nd, output_size)
    if not return_indices:
        if nd == 1:   # as PyTorch: 2-d pooling over a unit row
            return apply(K.adaptive_max_pool, input.unsqueeze(-2), output_size=(1,) + size).squeeze(-2)
        return apply(K.adaptive_max_pool, input, output_size=size)
    windows = tuple(("adaptive", n, o) for n, o in zip(input.shape[input.ndim - nd:], size))
    return _with_indices(PI.adaptive_max_pool_with_indices, input, windows)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max(input, 1, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, 2, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, 3, output_size, return_indices)
