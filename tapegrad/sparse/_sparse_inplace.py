"""The in-place forms of sparse ops (mul_, div_, the unary ops' `op_`, zero_, fill_, copy_, t_, transpose_,
resize_as_) and the methods (select, transpose, permute, indexing) bound to the sparse tensor class by install().
An in-place op computes the out-of-place result and rebinds the tensor's entries to it, after PyTorch's leaf
and cast checks, as add_ does."""
import numpy as np

from .. import _dtypes
from .._grad_mode import is_grad_enabled
from .._tensor import Tensor
from ._coo import SparseTensor, _as_tensor, in_place_values
from ._compressed_ops import UNHANDLED, _permute_coo, getitem, select, transpose


def assign(self, out):
    """self takes out's entries (PyTorch's in-place result: its dtype kept, the leaf check first)."""
    if type(out) is not type(self):
        raise RuntimeError(f"in-place result layout {out._layout_name} differs from {self._layout_name}. Assign the "
                           "out-of-place result instead.")
    values = in_place_values(out, self.dtype, "result type {} can't be cast to the desired output type {}")
    self._sp_indices, self._sp_values, self._sp_coalesced = out._sp_indices, values, out._sp_coalesced
    self._sp_size, self._sp_routes = tuple(out._sp_size), out._sp_routes
    return self


def _check_leaf(self):
    if self.is_leaf and self.requires_grad and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _in_place(compute):
    def method(self, *args, **kwargs):
        _check_leaf(self)
        return assign(self, compute(self, *args, **kwargs))
    return method


def _zero(self):
    nnz0 = _as_tensor(np.zeros((self._sp_indices.shape[0], 0), np.int64))
    return type(self)._make(nnz0, self._sp_values[:0], self._sp_size, True)


def _fill(self, value):
    if not self._sp_compressed:
        raise NotImplementedError("Could not run 'aten::fill_.Scalar' with arguments from the 'SparseCPU' backend: "
                                  "PyTorch cannot fill a sparse COO tensor. Fill .to_dense() instead.")
    if isinstance(value, Tensor):
        raise NotImplementedError(f"Could not run 'aten::fill_.Tensor' with arguments from the '{self._layout_name}CPU'"
                                  " backend. Pass a Python number (value.item()).")
    return self._with_values(self._sp_values.clone().fill_(value))


def _copy(self, src, non_blocking=False):
    """copy_: a compressed tensor takes a same-layout source's entries (the same count, PyTorch's rule)."""
    src_layout = getattr(src, "_layout_name", "Strided")
    if self._sp_compressed:
        if src_layout != self._layout_name:
            raise RuntimeError(f"torch.copy_: copy of sparse compressed tensors having different layouts is not "
                               f"supported. self layout is {self._layout_name} and src layout is {src_layout}")
        if src._sp_indices.shape[1] != self._sp_indices.shape[1]:
            raise RuntimeError("torch.copy_: only sparse compressed tensors with the same number of specified "
                               "elements are supported.")
    elif not isinstance(src, SparseTensor) or src._sp_compressed:
        raise RuntimeError(f"copy_(): tapegrad copies a sparse COO tensor into a COO one only, got {src_layout}. "
                           "Convert the source with .to_sparse() first.")
    if tuple(src.shape) != tuple(self.shape):
        raise RuntimeError(f"copy_: expected src of size {list(self.shape)}, but got {list(src.shape)}")
    return type(self)._make(src._sp_indices, src._sp_values.to(self.dtype), src._sp_size, src._sp_coalesced)


def _mul_in_place(self, other):
    if isinstance(other, (float, complex)) and not (self.dtype.is_floating_point or self.dtype.is_complex):
        wide = "ComplexDouble" if isinstance(other, complex) else "Double"   # (PyTorch's check of a Python number)
        raise RuntimeError(f"result type {wide} can't be cast to the desired output type "
                           f"{_dtypes.SCALAR_NAMES[self.dtype.name]}")
    return self * other


def _t_(self):
    if self._sp_compressed:
        raise RuntimeError(f"t_(): PyTorch cannot transpose a {self._layout_name} tensor in place (its transpose "
                           "has another layout). Use t() instead.")
    return self.t()


def _unary(self, name, *args, **kwargs):
    """The out-of-place op of an in-place unary one, with PyTorch's refusals of round_ and square_."""
    if name == "round" and self._sp_compressed and self._layout_name != "SparseCsr":
        raise RuntimeError("self.is_sparse_csr() INTERNAL ASSERT FAILED: PyTorch's round_ takes CSR tensors only. "
                           "Assign the out-of-place round() instead.")
    if name == "square" and not self._sp_compressed:
        raise NotImplementedError("Could not run 'aten::pow_.Scalar' with arguments from the 'SparseCPU' backend. "
                                  "Assign the out-of-place square() instead.")
    return getattr(self, name)(*args, **kwargs)


INPLACE_UNARY = ("abs", "neg", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "sqrt", "relu", "sign",
                 "sgn", "expm1", "log1p", "floor", "ceil", "round", "trunc", "frac", "square", "erf", "erfinv",
                 "deg2rad", "rad2deg", "nan_to_num", "conj_physical")


def install():
    """Bind the in-place forms and integer indexing to the sparse tensor class."""
    for name in INPLACE_UNARY:
        setattr(SparseTensor, name + "_", _in_place((lambda n: lambda self, *a, **k: _unary(self, n, *a, **k))(name)))
    SparseTensor.mul_ = SparseTensor.__imul__ = _in_place(_mul_in_place)
    SparseTensor.div_ = SparseTensor.__itruediv__ = _in_place(lambda self, other: self / other)
    SparseTensor.zero_ = _in_place(_zero)
    SparseTensor.fill_ = _in_place(_fill)
    SparseTensor.copy_ = _in_place(_copy)
    SparseTensor.t_ = _in_place(_t_)
    SparseTensor.transpose_ = _in_place(lambda self, d0, d1: transpose(self, d0, d1))
    SparseTensor.select = select
    from ._coo_ops import resize_as_, sparse_resize_, sparse_resize_and_clear_
    SparseTensor.sparse_resize_, SparseTensor.sparse_resize_and_clear_ = sparse_resize_, sparse_resize_and_clear_
    SparseTensor.resize_as_ = resize_as_
    SparseTensor.unbind = lambda self, dim=0: tuple(select(self, dim, i) for i in range(self.shape[dim]))
    SparseTensor.transpose = transpose
    SparseTensor.permute = _permute

    def __getitem__(self, key):
        out = getitem(self, key)
        return Tensor.__getitem__(self, key) if out is UNHANDLED else out
    SparseTensor.__getitem__ = __getitem__


def _permute(self, *dims):
    dims = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
    return Tensor.permute(self, *dims) if self._sp_compressed else _permute_coo(self, dims)
