"""Making jagged nested tensors: from a list of tensors, a padded batch, values and offsets, or a narrow."""
from .._dtypes import int64
from .._grad_mode import no_grad
from .._tensor import Tensor
from ._jagged import JaggedNestedTensor


def _ragged_idx(tensors):
    """The one dimension (counted with the batch dimension first) in which the components differ; 1 if none."""
    if not tensors:
        raise RuntimeError("Cannot construct a nested tensor from an empty tensor list")
    if len({t.dtype for t in tensors}) != 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have the same dtype")
    if len({t.device for t in tensors}) != 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must be on the same device")
    if len({t.dim() for t in tensors}) != 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have the same dim")
    if tensors[0].dim() == 0:
        raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim tensors")
    ragged = [d for d in range(tensors[0].dim()) if len({t.shape[d] for t in tensors}) > 1]
    if len(ragged) > 1:
        raise RuntimeError("Cannot represent given tensor list as a nested tensor with the jagged layout. Note that "
                           "the jagged layout only allows for a single ragged dimension. For example: (B, *, D_0, "
                           "D_1, ..., D_N), with ragged * dim.")
    return ragged[0] + 1 if ragged else 1


def from_list(tensors, dtype=None, device=None):
    """The jagged nested tensor of `tensors`, its values their concatenation (gradients flow back to them)."""
    from .._creation import tensor as make
    from .._functional import cat
    tensors = [t if isinstance(t, Tensor) else make(t) for t in tensors]
    ragged_idx = _ragged_idx(tensors)
    values = cat(tensors, ragged_idx - 1)
    if dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    sizes = [0] + [t.shape[ragged_idx - 1] for t in tensors]
    starts = [sum(sizes[:i + 1]) for i in range(len(sizes))]
    return JaggedNestedTensor._make(values, make(starts, dtype=int64, device=values.device), None, ragged_idx,
                                    max(sizes[1:]))


def nested_tensor(tensor_list, dtype=None, device=None, requires_grad=False):
    """A leaf jagged nested tensor holding copies of `tensor_list`."""
    with no_grad():
        nt = from_list(tensor_list, dtype, device)
    return nt.requires_grad_(requires_grad)


def as_nested_tensor(ts, dtype=None, device=None):
    """A jagged nested tensor over a list of tensors or over the rows of one tensor (B, n, ...)."""
    if isinstance(ts, JaggedNestedTensor):
        return ts if dtype is None and device is None else ts.to(device=device, dtype=dtype)
    if not isinstance(ts, Tensor):
        return from_list(list(ts), dtype, device)
    if ts.dim() < 2:
        raise RuntimeError("as_nested_tensor(): Expected tensor argument to have dim() > 1")
    from .._creation import arange
    values = ts.contiguous().flatten(0, 1)
    if dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    n = ts.shape[1]
    offsets = arange(0, ts.shape[0] * n + 1, n, dtype=int64, device=values.device)
    return JaggedNestedTensor._make(values, offsets, max_seqlen=n)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None,
                              max_seqlen=None):
    """A jagged nested tensor viewing `values` (ragged along `jagged_dim` - 1) with components at `offsets`."""
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths is required.")
        from .._functional import cat
        offsets = cat([lengths.new_zeros(1), lengths.cumsum(0)])
        lengths = None
    if jagged_dim is None:
        jagged_dim = 1
    elif jagged_dim < 1:
        raise ValueError(f"Expected jagged_dim >=1, but got {jagged_dim}.")
    if jagged_dim > values.dim():
        raise ValueError(f"jagged_dim {jagged_dim} is past the last dimension of values of {values.dim()} "
                         "dimensions. Pass jagged_dim <= values.dim().")
    values = values.view(values.shape)   # a view, as PyTorch's
    return JaggedNestedTensor._make(values, offsets, lengths, jagged_dim, max_seqlen)


def narrow(tensor, dim, start, length):
    """The jagged view of rows tensor[b, start[b]:start[b] + length[b]] (dim must be 1)."""
    from .._creation import arange, tensor as make
    from .._functional import cat
    if dim != 1:
        raise RuntimeError("jagged layout only supports dim=1")
    if tensor.dim() < 2:
        raise RuntimeError("narrow(): the jagged layout needs a tensor of at least 2 dimensions (B, n, ...).")
    batch = tensor.shape[0]
    start, length = (make([v], dtype=int64, device=tensor.device) if isinstance(v, int) else v
                     for v in (start, length))
    if start.dim() > 1 or length.dim() > 1 or start.numel() not in (1, batch) or length.numel() not in (1, batch):
        raise RuntimeError("When constructing a jagged nested tensor using narrow(), your start and length must be "
                           "Tensors that broadcast to input.shape[0]")
    start, length = start.expand(batch), length.expand(batch)
    row_starts = start + tensor.shape[1] * arange(batch, dtype=int64, device=tensor.device)
    offsets = cat([row_starts, (row_starts[-1] + length[-1]).unsqueeze(0)])
    values = tensor.view(-1, *tensor.shape[2:])
    starts, lengths, n = offsets.tolist(), length.tolist(), tensor.shape[1]
    tiles = all(k == n for k in lengths[1:-1]) and all(b - a == n for a, b in zip(starts[1:-2], starts[2:-2])) \
        and starts[0] + lengths[0] == n   # PyTorch's test
    if tiles:   # the rows touch end to end: a contiguous nested tensor over that stretch of the values
        return JaggedNestedTensor._make(values[starts[0]:starts[-1]], offsets - starts[0], max_seqlen=max(lengths))
    return JaggedNestedTensor._make(values, offsets, length, max_seqlen=max(lengths))
