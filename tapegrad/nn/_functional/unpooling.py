"""max_unpool1d/2d/3d: the values of a max pooling written back at their indices, zeros elsewhere."""
from ... import _dtypes, _value_checks
from ..._dispatch import apply
from ..._ops import pooling_indices as PI
from ._util import SCALAR_NAMES, ntuple


def _output_size(input, nd, kernel, stride, padding, output_size):
    """PyTorch's _unpool_output_size: the pooled input's size, or output_size within a stride of it."""
    default = [(input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return [int(s) for s in output_size]


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    kernel = ntuple(kernel_size, nd, "kernel_size")
    stride = kernel if stride is None else ntuple(stride, nd, "stride")
    size = tuple(_output_size(input, nd, kernel, stride, ntuple(padding, nd, "padding"), output_size))
    if indices.dtype is not _dtypes.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {SCALAR_NAMES[indices.dtype.name]}. "
                           "Pass the indices max_pool returned (int64).")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    kernel_nd, rank = max(nd, 2), input.ndim + (nd == 1)   # 1-d runs as 2-d on an unsqueezed input
    if rank not in (kernel_nd + 1, kernel_nd + 2):
        raise RuntimeError(f"Input to max_unpooling{kernel_nd}d should be a {kernel_nd + 1}d or {kernel_nd + 2}d "
                           f"Tensor, but got a tensor with {rank} dimensions.")
    planes = 1
    for s in size:
        planes *= s
    _value_checks.check(indices, lambda i, xp: (i < 0) | (i >= planes), lambda v, at: RuntimeError(
        f"Found an invalid max index: {int(v)} (output volumes are of size {'x'.join(map(str, size))})"))
    if nd == 1:  # PyTorch unpools 1-d as 2-d planes of width 1
        return apply(PI.max_unpool, input.unsqueeze(-1), indices.unsqueeze(-1), size=size + (1,), nd=2).squeeze(-1)
    return apply(PI.max_unpool, input, indices, size=size, nd=nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
