"""SparseTensor: PyTorch's sparse COO tensor as (indices, values, size) over two ordinary tensors.

`indices` is an int64 tensor (sparse_dim, nnz) held on the host's terms (nnz is data: building one reads
values), `values` a tensor (nnz, *dense_shape) that carries the autograd history: a sparse tensor requires
grad, is a leaf and has a grad_fn as its values do, and its gradient is its values' gradient on its
pattern -- PyTorch's masked sparse gradient. Dense code paths never see a sparse tensor: its storage is a
stand-in that refuses, so an op without a sparse rule raises NotImplementedError pointing at to_dense().
"""

import jax
import numpy as np

from .. import _dtypes, _printing
from .._dispatch import apply
from .._redirect import InnerAutograd, RedirectingStorage
from .._grad_mode import is_grad_enabled, no_grad
from .._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr
from .._ops import sparse as K
from .._tensor import PeekedMetadata, Tensor
from .._tensor_autograd import _NON_LEAF_GRAD_WARNING
from . import _pattern as P
from ._routes import combined, routes
from .._flags import warn_once
from .._user_frames import warn_user

_warned = set()   # PyTorch's warnings given once per process

_SUPPORTED = ("tapegrad's sparse COO tensors support to_dense(), coalesce(), sparse.sum and sum(), sparse +/- sparse, "
              "dense +/- sparse, products with sparse operands (sparse.mm, mm, addmm, matmul, @), mul, transpose, "
              "select, index_select, cat, scalar div and the unary ops that keep zeros (neg, abs, sin, sqrt, relu...)."
              " Call .to_dense() first for other ops.")
_NO_DENSE = "Could not run this operation with arguments from the 'SparseCPU' backend: " + _SUPPORTED

# Unary ops with f(0) == 0 that PyTorch runs on a sparse tensor's values; the nonlinear ones coalesce first
# (duplicates must be summed before f applies), as PyTorch's do.
_LINEAR_UNARY = frozenset({"neg", "positive"})
_COALESCED_UNARY = frozenset({"abs", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "sqrt",
                              "relu", "sign", "sgn", "expm1", "log1p", "floor", "ceil", "round", "trunc", "frac", "square",
                              "erf", "erfinv", "deg2rad", "rad2deg", "signbit", "isnan", "isinf", "isposinf", "isneginf",
                              "nan_to_num"})


# apply() hands ops to _dispatch_op (below); other dense access refuses
_NO_STORAGE = RedirectingStorage(lambda: _dispatch_op, (NotImplementedError, _NO_DENSE))


def _dispatch_op(op, args, static):
    """An op-table entry met with a sparse argument: run it on the values where PyTorch does, else refuse."""
    name, kw = op.name, dict(static)
    tensors = [a for a in args if isinstance(a, Tensor)]
    compressed = [t for t in tensors if isinstance(t, SparseTensor) and t._sp_compressed]
    elementwise = len(tensors) == 1 and (name == "mul" or len(args) == 1 and name in _LINEAR_UNARY | _COALESCED_UNARY)
    if name != "mul" or len(tensors) == 2:   # (_compressed_ops: mul, transpose, select, addmm... as PyTorch's)
        from ._compressed_ops import UNHANDLED, compressed_op
        out = compressed_op(op, args, static)
        if out is not UNHANDLED:
            return out
    if compressed and not elementwise:   # CSR, CSC, BSR, BSC: their values' unary ops and scalar products below
        from ._csr import dispatch_op
        return dispatch_op(name, args, compressed[0]._layout_name)
    if name in ("add", "sub", "add_scaled", "sub_scaled"):
        from ._add import add
        alpha = args[2] if len(args) > 2 else 1
        return add(args[0], args[1], -alpha if name.startswith("sub") else alpha, name[:3])
    if len(tensors) == 1:
        s = tensors[0]
        if len(args) == 1 and name in _LINEAR_UNARY:
            return s._with_values(apply(op, s._sp_values, **kw), -1 if name == "neg" else 1)
        if len(args) == 1 and name in _COALESCED_UNARY:
            from ._unary_refusals import check_forward, refuse_backward   # (where PyTorch refuses)
            check_forward(name, s)
            c = s if s._sp_compressed else s.coalesce()   # (a compressed tensor's positions are distinct)
            return refuse_backward(name, s, c._with_values(apply(op, c._sp_values, **kw)))
        if name == "mul" or (name == "div" and args[0] is s):   # by a Python scalar: linear
            k = next(a for a in args if a is not s)
            from ._compressed_ops import scaled_batched   # (PyTorch's backward refusal for batched compressed)
            return scaled_batched(s, s._with_values(apply(op, *[s._sp_values if a is s else a for a in args], **kw),
                                                    k if name == "mul" else 1 / k))
        if name in ("pow", "pow_scalar") and args[0] is s:
            c = s.coalesce()
            return c._with_values(apply(op, c._sp_values, *args[1:], **kw))
    from ._coo_ops import UNHANDLED, coo_op   # (index_select, cat, stack, unsqueeze, norm...)
    out = coo_op(op, args, static)
    if out is not UNHANDLED:
        return out
    raise NotImplementedError(f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. "
                              + _SUPPORTED)


def _as_tensor(data, dtype=None):
    from .._creation import tensor
    return data if isinstance(data, Tensor) else tensor(data, dtype=dtype)


def in_place_values(out, dtype, refusal):
    """out's values in dtype for an in-place result, or PyTorch's RuntimeError (refusal, formatted with the two
    dtype names) when the result type cannot be cast into it."""
    from .._inplace import _can_cast
    values = out._sp_values
    if values.dtype is dtype:
        return values
    if not _can_cast(values.dtype, dtype):
        raise RuntimeError(refusal.format(_dtypes.SCALAR_NAMES[values.dtype.name], _dtypes.SCALAR_NAMES[dtype.name]))
    return values.to(dtype)


class SparseTensor(PeekedMetadata, InnerAutograd, Tensor):
    """A sparse COO tensor (layout tapegrad.sparse_coo). Build one with `tapegrad.sparse_coo_tensor` or
    `Tensor.to_sparse()`."""

    _autograd_inner = "_sp_values"   # its requires_grad, is_leaf and grad_fn (_redirect)
    is_sparse = True
    _layout_name = "Sparse"   # PyTorch's name in messages
    _sp_compressed = False    # CSR and CSC (_csr.py) say True

    @classmethod
    def _make(cls, indices, values, size, coalesced):
        if cls._sp_compressed and warn_once(_warned, "beta"):   # (PyTorch's TORCH_WARN_ONCE, its words)
            warn_user("Sparse CSR tensor support is in beta state. If you miss a functionality in the sparse tensor "
                      "support, please submit a feature request to https://github.com/pytorch/pytorch/issues.")
        self = object.__new__(cls)
        self._init(_NO_STORAGE, None, False)
        self._sp_indices, self._sp_values = indices, values
        self._sp_size, self._sp_coalesced = tuple(int(s) for s in size), bool(coalesced)
        self._sp_sink = None     # a leaf's dense gradient (from torch.mm, dense + sparse...; see _routes)
        self._sp_extra = None    # a leaf's gradient on other patterns than its own (see _routes)
        self._sp_dense = None    # (tensor, version) this one was made from by to_sparse()
        self._sp_routes = None   # where a derived tensor's gradient goes on (see _routes)
        return self

    # ---- metadata ---------------------------------------------------------------------------------------------

    def _peek(self):
        return jax.ShapeDtypeStruct(self._sp_size, self._sp_values._peek().dtype)

    @property
    def layout(self):
        return sparse_coo

    @property
    def device(self):
        return self._sp_values.device

    def sparse_dim(self):
        return self._sp_indices.shape[0]

    def dense_dim(self):
        return self._sp_values.dim() - 1

    def _nnz(self):
        return self._sp_indices.shape[1]

    def is_coalesced(self):
        return self._sp_coalesced

    def _indices(self):
        return self._sp_indices

    def _values(self):
        return self._sp_values.detach()   # PyTorch's _values() is not differentiable; values() is

    def indices(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._sp_indices

    def values(self):
        if not self._sp_coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return apply(K.sparse_values, self._sp_values)

    def __len__(self):
        return self._sp_size[0]

    # ---- autograd: the values' -----------------------------------------------------------------------------

    @property
    def grad(self):
        """The values' gradient on this tensor's pattern, coalesced (PyTorch's masked gradient), plus what ops
        gave it on other patterns; dense when an op gave it a dense one (torch.mm, dense + sparse), as in
        PyTorch."""
        if not self.is_leaf:
            warn_user(_NON_LEAF_GRAD_WARNING, UserWarning)
            return None
        sparse, extra = self._sparse_grad(), self._sp_extra
        if extra is not None:   # (kept as COO; a CSR or CSC leaf's gradient has its layout)
            with no_grad():
                sparse = self._same_layout(extra if sparse is None else sparse.to_sparse() + extra)
        dense = None if self._sp_sink is None else self._sp_sink._grad
        if dense is None:
            return sparse
        return dense if sparse is None else dense + sparse.to_dense()

    def _sparse_grad(self):
        g = self._sp_values._grad
        if g is None:
            return None
        if self._sp_coalesced:
            return type(self)._make(self._sp_indices, g, self._sp_size, True)
        # duplicates share one position and so one gradient: keep each position once
        linear = P.linear(self._sp_indices.numpy(), self._sp_size[:self.sparse_dim()])
        _, first = np.unique(linear, return_index=True)
        first = _as_tensor(first)
        return SparseTensor._make(self._sp_indices.index_select(1, first), g.detach().index_select(0, first),
                                  self._sp_size, True)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError("tapegrad's sparse tensors only accept grad = None; their gradient is their "
                               "values' gradient (set tensor._values().grad instead).")
        self._sp_values.grad = self._sp_extra = None
        if self._sp_sink is not None:
            self._sp_sink.grad = None

    def detach(self):
        return type(self)._make(self._sp_indices, self._sp_values.detach(), self._sp_size, self._sp_coalesced)

    def clone(self, *, memory_format=None):
        return self._with_values(self._sp_values.clone(), 1)

    # ---- conversions ----------------------------------------------------------------------------------------

    def to_dense(self, dtype=None, *, masked_grad=True):
        dense = apply(K.to_dense, self._sp_indices, self._sp_values, size=self._sp_size)
        return dense if dtype is None else dense.to(dtype)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not sparse_coo:
            return _to_layout(self, layout, blocksize, dense_dim)
        return self

    def _same_layout(self, coo):
        return coo

    def coalesce(self):
        if self._sp_coalesced:
            return self
        sizes = self._sp_size[:self.sparse_dim()]
        indices, inverse = P.unique(self._sp_indices.numpy(), sizes)
        values = apply(K.sparse_segment_sum, self._sp_values, _as_tensor(inverse), count=indices.shape[1],
                       node="coalesce")
        out = SparseTensor._make(_as_tensor(indices), values, self._sp_size, True)
        out._sp_routes = combined((routes(self), 1)) or None   # the same positions: the gradient passes on
        return out

    def to(self, *args, **kwargs):
        values = self._sp_values.to(*args, **kwargs)
        return self if values is self._sp_values else self._with_values(values, 1)


    def numpy(self, *, force=False):
        raise TypeError(f"can't convert {self._layout_name} layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self):
        raise TypeError(f"can't convert {self._layout_name} layout tensor to a list. Use Tensor.to_dense() first.")

    # ---- ops with a sparse rule ---------------------------------------------------------------------------------

    def _with_values(self, values, factor=None):
        """This tensor's pattern with other values; factor: they are this one's times it, so the result passes
        its gradient on to this one's routes (see _routes)."""
        out = type(self)._make(self._sp_indices, values, self._sp_size, self._sp_coalesced)
        if factor is not None:
            out._sp_routes = combined((routes(self), factor)) or None
        return out

    def add_(self, other, *, alpha=1):
        return self._add_in_place(other, alpha, "add")

    def sub_(self, other, *, alpha=1):
        return self._add_in_place(other, -alpha, "sub")

    __iadd__, __isub__ = add_, sub_

    def _add_in_place(self, other, alpha, node):
        """PyTorch's in-place add of a sparse tensor: this one takes the sum's entries (rebound, so tensors
        recorded from its old value keep it: tapegrad has no version check to fail there, as PyTorch's does)."""
        if self.is_leaf and self.requires_grad and is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        out = self._added(other, alpha, node)
        values = in_place_values(out, self.dtype, "Can't convert result type {} to output {} in " + node + " operation")
        self._sp_indices, self._sp_values, self._sp_coalesced = out._sp_indices, values, out._sp_coalesced
        self._sp_routes = out._sp_routes
        return self

    def _added(self, other, alpha, node):
        from ._add import add
        return add(self, other, alpha, node)

    def t(self):
        if self.dim() != 2 or self.sparse_dim() != 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions. Call "
                               ".to_dense() first for other layouts.")
        return SparseTensor._make(self._sp_indices.flip(0), self._sp_values, self._sp_size[::-1], False)

    def sum(self, dim=None, keepdim=False, dtype=None):
        from ._sum import tensor_sum
        return tensor_sum(self, dim, keepdim, dtype)

    def _repr_parts(self):
        return ("indices", self._sp_indices), ("values", self._sp_values)

    def __repr__(self):
        return _repr(self)

    __str__ = __repr__

    def __bool__(self):
        raise RuntimeError("Boolean value of a sparse tensor is ambiguous. Call .to_dense() first.")

    __hash__ = object.__hash__


# the dtype casts (long(), bool()...) through the values, as to() (Tensor's own cast reads dense storage)
for _name, _dtype in {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16",
                      "long": "int64", "int": "int32", "short": "int16", "char": "int8", "byte": "uint8",
                      "bool": "bool_", "cfloat": "complex64", "cdouble": "complex128"}.items():
    setattr(SparseTensor, _name, (lambda d: lambda self, memory_format=None: self.to(getattr(_dtypes, d)))(_dtype))


# ---- to other layouts ------------------------------------------------------------------------------------------

_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr", "sparse_csc": "SparseCsc",
                 "sparse_bsr": "SparseBsr", "sparse_bsc": "SparseBsc"}


def _to_layout(input, layout, blocksize, dense_dim):
    """to_sparse(layout=...) to a layout other than COO, with PyTorch's refusals."""
    source = input._layout_name if isinstance(input, SparseTensor) else "Strided"
    step = {"Strided": "dense_to_sparse", "Sparse": "sparse_coo_to_sparse"}.get(source, "sparse_compressed_to_sparse")
    target = _LAYOUT_NAMES.get(layout.name)
    if blocksize is not None and layout.name in ("strided", "sparse_csr", "sparse_csc"):
        raise RuntimeError(f"{'to_sparse' if target == source else step}: conversion from {source} to {target} with "
                           "blocksize argument given is not supported. Pass blocksize for BSR and BSC only.")
    if layout is sparse_csr or layout is sparse_csc:
        from ._csr import SparseCscTensor, SparseCsrTensor, to_compressed
        return to_compressed(input, SparseCsrTensor if layout is sparse_csr else SparseCscTensor, dense_dim)
    if layout is sparse_bsr or layout is sparse_bsc:
        from ._bsr import to_sparse_blocked
        return to_sparse_blocked(input, layout, blocksize, dense_dim)
    if target == "Strided":
        return input.to_dense()
    raise RuntimeError(f"{step}: unexpected source layout {source} (for the target layout {layout}). Pass a sparse "
                       "layout, or convert with to_dense().")


# ---- printing --------------------------------------------------------------------------------------------------

def _repr(t):
    from .._dtypes import get_default_dtype
    P = _printing
    default = get_default_dtype().name
    indent = len("tensor(")
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    suffixes += [f"size={tuple(t.shape)}", f"nnz={t._nnz()}"]
    complex_default = "complex128" if default == "float64" else "complex64"
    if t.dtype.name not in (default, complex_default, "int64", "bool"):
        suffixes.append(f"dtype=torch.{t.dtype.name}")   # (PyTorch's name: its wrapping)
    parts = []
    for name, part in t._repr_parts():
        arr = P._widen(np.asarray(part.detach().numpy()))
        text = P._tensor_str(arr, indent + len(name) + len("=tensor(")) if arr.size else "[]"
        if arr.size == 0:
            text += f", size={tuple(arr.shape)}"
        parts.append(f"{name}=tensor({text})")
    body = "tensor(" + (",\n" + " " * indent).join(parts)
    suffixes.append(f"layout=torch.{t.layout.name}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = P._add_suffixes(body, suffixes, indent, force_newline=t.is_sparse)   # COO's; CSR's fill the line
    return text.replace("=torch.", "=tapegrad.")
