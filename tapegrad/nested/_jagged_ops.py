"""Ops on jagged nested tensors: each runs on the values (PyTorch's NJT kernels for the same cases).

Elementwise ops take nested tensors of one ragged structure, Python scalars and dense tensors that broadcast
against each component; ops acting along dimensions other than the batch and ragged ones (softmax,
log_softmax, layer_norm, linear, sum/mean over such dimensions, transpose) run on the values; sum and mean over
all elements and over the ragged dimension give dense results, softmax over it works on the padded batch
(contiguous nested tensors ragged in dimension 1).
"""
from .._tensor import Tensor
from ._jagged import JaggedNestedTensor, ragged_dim_of

_ALONG_DIM = {"softmax", "log_softmax"}
# nn activations acting element by element (the op table's elementwise family holds the others)
_POINTWISE_NN = {"leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "hardtanh", "threshold", "hardsigmoid",
                 "softshrink", "hardshrink", "hardswish", "logsigmoid"}


def dispatch_op(op, args, static):
    """Run op-table entry `op` on arguments among which are jagged nested tensors."""
    from .._dispatch import apply
    kw = dict(static)
    name = op.name
    nt = next(a for a in args if isinstance(a, JaggedNestedTensor))
    if name in _POINTWISE_NN or getattr(op.fn, "__module__", "").rsplit(".", 1)[-1] == "elementwise":
        out = apply(op, *[_operand(a, nt, name) for a in args], **kw)
        return tuple(nt._like(o) for o in out) if isinstance(out, tuple) else nt._like(out)
    if len(args) == 1 and name in _ALONG_DIM:
        if nt._wrap(kw["dim"]) == nt._jag_ragged_idx == 1 and name == "softmax":
            return _softmax_ragged(op, nt)
        if nt._wrap(kw["dim"]) == nt._jag_ragged_idx:
            raise RuntimeError(f"{name}(): not supported when reducing along the ragged dimension for "
                               "NestedTensor. Pad the nested tensor (tapegrad.nested.to_padded_tensor) first.")
        return nt._like(apply(op, nt._jag_values, dim=_values_dim(nt, kw["dim"], name)))
    if name == "layer_norm" and args[0] is nt:   # over the last kw["ndim"] dimensions
        if nt._jag_ragged_idx >= nt.dim() - kw["ndim"]:
            _refuse_ragged(name)
        return nt._map_values(lambda values: apply(op, values, *args[1:], **kw), name)
    if len(args) == 1 and name in ("sum", "mean"):
        return _reduce(op, nt, kw)
    if len(args) == 1 and name == "transpose":
        return _transpose(nt, kw["dim0"], kw["dim1"])
    raise TypeError(f"{name} is not supported by tapegrad's jagged nested tensors. Compute on nt.values() (and "
                    "rebuild with nested_tensor_from_jagged(values, nt.offsets())), on nt.unbind(), or on "
                    "tapegrad.nested.to_padded_tensor(nt, padding).")


def _operand(a, nt, name):
    """`a` as an operand of the values of `nt`."""
    if isinstance(a, JaggedNestedTensor):
        if ragged_dim_of(a._jag_offsets) is not ragged_dim_of(nt._jag_offsets) \
                or a._jag_ragged_idx != nt._jag_ragged_idx:
            raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with inputs of shapes "
                               f"{tuple(nt.shape)} and {tuple(a.shape)}. Nested tensors combine only when they "
                               "share one offsets tensor (build both from it, e.g. with nested_tensor_from_jagged).")
        return a._jag_values
    if not isinstance(a, Tensor) or a.dim() == 0:
        return a
    ndim, ragged = nt.dim(), nt._jag_ragged_idx
    if a.dim() > ndim:
        raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with inputs of shapes "
                           f"{tuple(nt.shape)} and {tuple(a.shape)}: the dense tensor has more dimensions.")
    shape = (1,) * (ndim - a.dim()) + tuple(a.shape)
    if shape[ragged] != 1:
        raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with inputs of shapes "
                           f"{tuple(nt.shape)} and {tuple(a.shape)}: a dense tensor must have size 1 in the ragged "
                           "dimension.")
    a = a.reshape(shape)
    if shape[0] == 1:
        return a.squeeze(0)
    if ragged != 1 or shape[0] != len(nt):
        raise RuntimeError(f"cannot call binary pointwise function {name}.Tensor with inputs of shapes "
                           f"{tuple(nt.shape)} and {tuple(a.shape)}. Broadcast a dense tensor per component only "
                           "against a nested tensor ragged in dimension 1.")
    return a.squeeze(1).index_select(0, _component_of_rows(nt))


def _component_of_rows(nt):
    """For each row of the values, the component holding it (an int64 tensor)."""
    from .._creation import tensor as make
    from .._dtypes import int64
    rows = [0] * nt._jag_values.shape[0]
    for b, (start, n) in enumerate(zip(nt._host_offsets(), nt._host_lengths())):
        rows[start:start + n] = [b] * n
    return make(rows, dtype=int64, device=nt.device)


def _values_dim(nt, dim, name):
    """The dimension of the values that dimension `dim` of `nt` is; the batch and ragged ones have none."""
    d = nt._wrap(dim)
    if d == 0 or d == nt._jag_ragged_idx:
        _refuse_ragged(name)
    return d - 1


def _refuse_ragged(name):
    raise RuntimeError(f"{name}(): not supported for NestedTensor on dim=0 or the ragged dim here. Pad the nested "
                       "tensor (tapegrad.nested.to_padded_tensor) and compute on the padded tensor.")


def _softmax_ragged(op, nt):
    """softmax / log_softmax over each component's rows: on the padded batch (padding -inf), rows gathered back."""
    from .._creation import tensor as make
    from .._dispatch import apply
    from .._dtypes import int64
    if nt._jag_lengths is not None:
        _refuse_ragged(op.name)
    rows, positions = [], []
    for b, n in enumerate(nt._host_lengths()):
        rows += [b] * n
        positions += range(n)
    padded = apply(op, to_padded(nt, float("-inf"), (len(nt), max(positions, default=-1) + 1)), dim=1)
    device = nt.device
    return nt._like(padded[make(rows, dtype=int64, device=device), make(positions, dtype=int64, device=device)])


def _reduce(op, nt, kw):
    from .._dispatch import apply
    dims = kw.get("dim")
    if dims is None:   # over every element: the values' reduction (a dense scalar)
        if not nt.is_contiguous():
            raise RuntimeError(f"{op.name}(): not supported for nested tensors with holes. Rebuild it from "
                               "nt.unbind() first.")
        return apply(op, nt._jag_values, **kw)
    dims = sorted({nt._wrap(d) for d in (dims if isinstance(dims, tuple) else (dims,))})
    ragged = nt._jag_ragged_idx
    if dims == [ragged] and ragged == 1:
        return _reduce_ragged(op.name, nt, kw)
    if dims == [0, ragged] and ragged == 1 and nt.is_contiguous():   # every component's rows together
        out = apply(op, nt._jag_values, **{**kw, "dim": (0,)})
        return out.unsqueeze(0) if kw.get("keepdim") else out
    if 0 in dims:
        raise RuntimeError(f"{op.name}(): reducing along the batch dimension but not the ragged dimension is not "
                           "supported for nested tensors. Reduce over (0, ragged dim) or pad the nested tensor.")
    if ragged in dims:
        raise RuntimeError(f"{op.name}(): reducing along a ragged and non-batch dimension is not supported for "
                           "nested tensors. Reduce the other dimensions first, then the ragged one.")
    values_dims = tuple(_values_dim(nt, d, op.name) for d in dims)
    out = apply(op, nt._jag_values, **{**kw, "dim": values_dims})
    if not kw.get("keepdim"):
        ragged -= sum(d < ragged for d in dims)
    return nt._like(out, ragged)


def _reduce_ragged(name, nt, kw):
    """sum / mean over the ragged dimension 1: one dense row per component."""
    from .._creation import zeros
    values = nt._jag_values
    if kw.get("dtype") is not None:
        values = values.to(kw["dtype"])
    rows = _component_of_rows(nt)
    if nt._jag_lengths is not None:
        raise RuntimeError(f"{name}(): not supported over the ragged dimension of a nested tensor with holes. "
                           "Rebuild it from nt.unbind() first.")
    out = zeros((len(nt),) + tuple(values.shape[1:]), dtype=values.dtype, device=values.device)
    out = out.index_add(0, rows, values)
    if name == "mean":
        lengths = nt._jag_offsets.diff().to(values.dtype)
        out = out / lengths.reshape((-1,) + (1,) * (values.dim() - 1))
    return out.unsqueeze(1) if kw.get("keepdim") else out


def _transpose(nt, dim0, dim1):
    """Swap two dimensions other than the batch one; the ragged dimension may move."""
    d0, d1 = nt._wrap(dim0), nt._wrap(dim1)
    if d0 == 0 or d1 == 0:
        raise RuntimeError("transpose(): not supported for NestedTensor on the batch dimension (dim 0).")
    ragged = nt._jag_ragged_idx
    ragged = d1 if ragged == d0 else d0 if ragged == d1 else ragged
    return nt._like(nt._jag_values.transpose(d0 - 1, d1 - 1), ragged)


def to_padded(nt, padding, output_size=None):
    """The dense tensor (B, ..., n, ...) of the components, padded with `padding` after each one's end.

    n is PyTorch's: output_size's ragged entry (its other entries are not read), else the longest component's
    length when known from construction, else the values' first size; longer components are cut at n."""
    from .._creation import full, tensor as make
    from .._dtypes import int64
    from .._functional import cat
    if nt._jag_lengths is not None:
        raise RuntimeError("to_padded_tensor(): not supported for nested tensors with holes")
    if output_size is not None:
        longest = list(output_size)[nt._jag_ragged_idx]
    else:
        longest = nt._jag_max_seqlen if nt._jag_max_seqlen is not None else nt._jag_values.shape[0]
    axis = nt._jag_ragged_idx - 1
    values = nt._jag_values.movedim(axis, 0)
    fill = values.shape[0]   # the index of the padding row appended below
    index = [[start + i if i < n else fill for i in range(longest)]
             for start, n in zip(nt._host_offsets(), nt._host_lengths())]
    rows = cat([values, full((1,) + tuple(values.shape[1:]), padding, dtype=values.dtype, device=values.device)])
    return rows[make(index, dtype=int64, device=values.device)].movedim(1, axis + 1)
