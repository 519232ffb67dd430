"""Nested tensors of the jagged layout: PyTorch's NJT as (values, offsets, lengths), ordinary tensors.

A jagged nested tensor of components of shape (*before, n_i, *after) holds them concatenated along the ragged
dimension in one `values` tensor (*before, sum n_i, *after) and the components' starts in `offsets` (B + 1
entries); `lengths` (B entries) is set when the components do not tile the values (a view with holes, as
`narrow` makes). Its size is (B, *before, j, *after) where j is a symbol for the ragged dimension, one per
offsets tensor (PyTorch's nested ints, printed j1, j2, ...). Ops are handed to `_jagged_ops` through
_dispatch.Redirect, as MaskedTensor's are; gradients are the values' (`nt.grad` wraps the values' gradient).
"""
import itertools
import weakref

from .._redirect import InnerAutograd, RedirectingStorage
from .._layout import jagged
from .._size import Size
from .._tensor import PeekedMetadata, Tensor


class RaggedDim:
    """The size of a ragged dimension: a symbol equal only to itself (PyTorch's nested int j1, j2, ...)."""
    __slots__ = ("id",)
    _ids = itertools.count(1)
    symbolic_size = True   # (a torch.Size may hold it, as PyTorch's holds a SymInt)

    def __init__(self):
        self.id = next(RaggedDim._ids)

    def __repr__(self):
        return f"j{self.id}"


_symbols = {}   # id(offsets tensor) -> (weak reference to it, its RaggedDim)


def ragged_dim_of(offsets):
    """The symbol of the ragged dimension described by `offsets` (one per offsets tensor, as in PyTorch)."""
    entry = _symbols.get(id(offsets))
    if entry is not None and entry[0]() is offsets:
        return entry[1]
    key = id(offsets)
    symbol = RaggedDim()
    _symbols[key] = (weakref.ref(offsets, lambda _: _symbols.pop(key, None)), symbol)
    return symbol


def _jagged_ops():
    from ._jagged_ops import dispatch_op
    return dispatch_op


_STORAGE = RedirectingStorage(_jagged_ops, (TypeError, "This operation reads a nested tensor as a dense tensor, "
                                            "which tapegrad does not do. Use nt.values(), nt.unbind() or "
                                            "tapegrad.nested.to_padded_tensor(nt, padding)."))


class JaggedNestedTensor(PeekedMetadata, InnerAutograd, Tensor):
    """A batch of tensors differing in one dimension, in PyTorch's jagged layout (`tapegrad.jagged`)."""

    _autograd_inner = "_jag_values"   # its requires_grad, is_leaf and grad_fn (_redirect)
    is_nested = True

    @classmethod
    def _make(cls, values, offsets, lengths=None, ragged_idx=1, max_seqlen=None):
        """max_seqlen: the longest component's length when the maker knew it (PyTorch's cached metadata, which
        to_padded_tensor pads to; unknown, it pads to the values' first size, as PyTorch does)."""
        self = object.__new__(cls)
        self._init(_STORAGE, None, False)
        self._jag_values, self._jag_offsets, self._jag_lengths = values, offsets, lengths
        self._jag_ragged_idx, self._jag_max_seqlen = ragged_idx, max_seqlen
        return self

    def _like(self, values, ragged_idx=None):
        """A nested tensor of the same structure over other values."""
        return JaggedNestedTensor._make(values, self._jag_offsets, self._jag_lengths,
                                        ragged_idx or self._jag_ragged_idx, self._jag_max_seqlen)

    # ---- structure ----------------------------------------------------------------------------------------

    def values(self):
        return self._jag_values.view(self._jag_values.shape)   # a view, as PyTorch's values()

    def offsets(self):
        return self._jag_offsets

    def lengths(self):
        return self._jag_lengths

    def _host_offsets(self):
        return [int(o) for o in self._jag_offsets.tolist()]

    def _host_lengths(self):
        if self._jag_lengths is not None:
            return [int(n) for n in self._jag_lengths.tolist()]
        starts = self._host_offsets()
        return [b - a for a, b in zip(starts, starts[1:])]

    def is_contiguous(self, memory_format=None):
        return self._jag_lengths is None and self._jag_values.is_contiguous()

    @property
    def layout(self):
        return jagged

    @property
    def shape(self):
        shape = list(self._jag_values.shape)
        shape[self._jag_ragged_idx - 1] = ragged_dim_of(self._jag_offsets)
        return Size([self._jag_offsets.shape[0] - 1] + shape)

    def size(self, dim=None):
        shape = self.shape
        if dim is None:
            return shape
        return shape[self._wrap(dim)]

    def _wrap(self, dim):
        ndim = self.dim()
        if not -ndim <= dim < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
                             f"{dim})")
        return dim + ndim if dim < 0 else dim

    def dim(self):
        return self._jag_values.dim() + 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def numel(self):
        values = self._jag_values
        if self._jag_lengths is None:
            return values.numel()
        rows = values.shape[self._jag_ragged_idx - 1]
        return (values.numel() // rows if rows else 0) * sum(self._host_lengths())

    nelement = numel

    def __len__(self):
        return self._jag_offsets.shape[0] - 1

    def _peek(self):
        return self._jag_values._peek()

    @property
    def device(self):
        return self._jag_values.device

    # ---- autograd: the values' ----------------------------------------------------------------------------

    @property
    def grad(self):
        g = self._jag_values._grad
        return None if g is None else self._like(g)

    @grad.setter
    def grad(self, value):
        self._jag_values.grad = None if value is None else value._jag_values

    def retain_grad(self):
        self._jag_values.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if isinstance(gradient, JaggedNestedTensor):
            gradient = gradient._jag_values
        self._jag_values.backward(gradient, retain_graph, create_graph, inputs)

    def detach(self):
        return self._like(self._jag_values.detach())

    def to(self, *args, **kwargs):
        return self._like(self._jag_values.to(*args, **kwargs))

    def _map_values(self, fn, name):
        """fn (acting on the last dimension) applied to the values; the ragged dimension may not be last."""
        if self._jag_ragged_idx == self.dim() - 1:
            raise RuntimeError(f"{name}(): not supported for NestedTensor whose ragged dimension is the last one. "
                               "Transpose it away from the last dimension first.")
        return self._like(fn(self._jag_values))

    # ---- components ---------------------------------------------------------------------------------------

    def unbind(self, dim=0):
        if dim != 0:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0. Unbind the components "
                               "(nt.unbind()) and then each of them.")
        axis = self._jag_ragged_idx - 1
        return tuple(self._jag_values.narrow(axis, start, n)
                     for start, n in zip(self._host_offsets(), self._host_lengths()))

    def __getitem__(self, index):
        if isinstance(index, int) and not isinstance(index, bool):
            n = len(self)
            if not -n <= index < n:
                raise IndexError(f"index {index} is out of bounds for dimension 0 with size {n}")
            return self.unbind()[index]
        raise TypeError("tapegrad's jagged nested tensors take an integer index only (a component). Index "
                        "nt.values() or the components of nt.unbind() for more.")

    def to_padded_tensor(self, padding, output_size=None):
        from ._jagged_ops import to_padded
        return to_padded(self, padding, output_size)

    def numpy(self, *, force=False):
        raise RuntimeError(".numpy() is not supported for tensor subclasses. A nested tensor's shape is irregular: "
                           "use nt.values().numpy() or tapegrad.nested.to_padded_tensor(nt, p).numpy().")

    def tolist(self):
        raise RuntimeError(".tolist() is not supported for tensor subclasses, got NestedTensor. Use "
                           "[t.tolist() for t in nt.unbind()].")

    def __iter__(self):
        return iter(self.unbind())

    def __repr__(self):
        size = tuple(self.shape)
        text = f"NestedTensor(size={size}, offsets={self._jag_offsets!r}"
        if self.grad_fn is not None:
            text += f", grad_fn={self.grad_fn}"
        elif self.requires_grad:
            text += ", requires_grad=True"
        return text + f", contiguous={self.is_contiguous()})"

    __str__ = __repr__
    __hash__ = object.__hash__
