"""NestedTensor: tensors of one rank and different shapes, held as a list (a small subset of PyTorch's)."""
from .._layout import jagged, strided
from .._tensor import Tensor


def _layout_is_jagged(layout):
    if layout is None or layout is strided:
        return False
    if layout is jagged:
        return True
    raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}. Pass tapegrad.strided or "
                       "tapegrad.jagged.")


class NestedTensor:
    """A batch of tensors of one rank whose shapes may differ (PyTorch's strided nested tensor)."""
    is_nested = True

    def __init__(self, tensors):
        self._tensors = tuple(tensors)

    def size(self, dim=None):
        if dim is None:
            raise RuntimeError("NestedTensor does not support size() without a dimension: its shape is irregular. "
                               "Ask for size(dim) or unbind() it.")
        ndim = self.dim()
        d = dim + ndim if dim < 0 else dim
        if d == 0:
            return len(self._tensors)
        sizes = {t.shape[d - 1] for t in self._tensors}
        if len(sizes) != 1:
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    def dim(self):
        return self._tensors[0].dim() + 1 if self._tensors else 1

    @property
    def dtype(self):
        return self._tensors[0].dtype

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): nested tensor can only be unbound along dimension 0.")
        return self._tensors

    def to_padded_tensor(self, padding, output_size=None):
        return to_padded_tensor(self, padding, output_size)

    def __repr__(self):
        body = ",\n".join("  " + repr(t).replace("\n", "\n  ") for t in self._tensors)
        return f"nested_tensor([\n{body}\n])"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)   # protocols (pickle, NumPy) probe for these
        raise TypeError(f"NestedTensor.{name} is not supported by tapegrad's nested tensors. Use unbind() or "
                        "to_padded_tensor() and compute on ordinary tensors.")


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """A NestedTensor of copies of `tensor_list` (tensors of one rank); jagged with layout=tapegrad.jagged."""
    from .._creation import tensor as make
    if _layout_is_jagged(layout):
        from ._jagged_create import nested_tensor as jagged_nested_tensor
        return jagged_nested_tensor(tensor_list, dtype, device, requires_grad)
    tensors = [(t.detach().clone() if isinstance(t, Tensor) else make(t)) for t in tensor_list]
    if dtype is not None:
        tensors = [t.to(dtype) for t in tensors]
    if len({t.dim() for t in tensors}) > 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have the same dim")
    return NestedTensor(t.requires_grad_(requires_grad) for t in tensors)


def as_nested_tensor(ts, dtype=None, device=None, layout=None):
    """A NestedTensor over `ts` (gradients flow back to them through unbind and to_padded_tensor)."""
    if _layout_is_jagged(layout):
        from ._jagged_create import as_nested_tensor as as_jagged
        return as_jagged(ts, dtype, device)
    tensors = [t if dtype is None else t.to(dtype) for t in ts]
    if len({t.dim() for t in tensors}) > 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have the same dim")
    return NestedTensor(tensors)


def to_padded_tensor(input, padding, output_size=None):
    """One dense tensor: each component padded at the end of every dimension with `padding`."""
    from ._jagged import JaggedNestedTensor
    if isinstance(input, JaggedNestedTensor):
        return input.to_padded_tensor(padding, output_size)
    from .._functional import stack
    from ..nn.functional import pad
    tensors = input.unbind()
    ndim = tensors[0].dim()
    shape = [max(t.shape[d] for t in tensors) for d in range(ndim)]
    if output_size is not None:
        shape = list(output_size)[1:]
    padded = []
    for t in tensors:
        widths = []
        for d in reversed(range(ndim)):
            widths += [0, shape[d] - t.shape[d]]
        padded.append(pad(t, widths, value=padding))
    return stack(padded)
