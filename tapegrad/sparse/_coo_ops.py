"""Shape and value ops PyTorch's CPU build runs on sparse COO tensors: index_select, cat, stack and unsqueeze
along sparse dimensions, the norm of the values, floor_divide by a number. Values move through differentiable
tensor ops, so gradients reach them masked to the pattern as COO's other ops give."""
import numpy as np

from .._dispatch import apply
from ._coo import SparseTensor, _as_tensor

UNHANDLED = object()


def coo_op(op, args, static):
    """An op-table entry met with COO operands only, or UNHANDLED."""
    name, kw = op.name, dict(static)
    if any(getattr(a, "_sp_compressed", False) for a in args):
        return UNHANDLED
    s = args[0]
    if name == "index_select" and kw["dim"] % s.dim() < s.sparse_dim():
        return _index_select(s, kw["dim"] % s.dim(), args[1].numpy())
    if name == "unsqueeze" and kw["dim"] % (s.dim() + 1) <= s.sparse_dim():
        return _unsqueeze(s, kw["dim"] % (s.dim() + 1))
    if name in ("cat", "stack"):
        dim = kw.get("dim", 0)
        parts = args if name == "cat" else [_unsqueeze(a, dim % (a.dim() + 1)) for a in args]
        if dim % parts[0].dim() < parts[0].sparse_dim() and len({p.sparse_dim() for p in parts}) == 1:
            return _cat(parts, dim % parts[0].dim())
    if name == "vector_norm" and kw.get("dim") is None and not kw.get("keepdim"):
        return apply(op, s.coalesce()._sp_values, **kw)
    if name == "floor_divide" and len(args) == 2 and not hasattr(args[1], "shape"):
        c = s.coalesce()
        return c._with_values(apply(op, c._sp_values, args[1], **kw))
    return UNHANDLED


def _index_select(s, dim, index):
    indices = s._sp_indices.numpy()
    entry, position = np.nonzero(indices[dim][:, None] == index.reshape(-1)[None, :])
    order = np.lexsort((entry, position))   # PyTorch's: by position in index
    entry, position = entry[order], position[order]
    out = indices[:, entry].copy()
    out[dim] = position
    size = list(s._sp_size)
    size[dim] = index.size
    values = s._sp_values.index_select(0, _as_tensor(entry.astype(np.int64)))
    return SparseTensor._make(_as_tensor(out), values, size, False)


def _unsqueeze(s, dim):
    indices = np.insert(s._sp_indices.numpy(), dim, 0, axis=0)
    size = s._sp_size[:dim] + (1,) + s._sp_size[dim:]
    return SparseTensor._make(_as_tensor(indices), s._sp_values, size, s._sp_coalesced)


def _cat(parts, dim):
    from .._functional._joins import cat
    first = parts[0]
    for p in parts[1:]:
        if p.dim() != first.dim() or any(a != b for d, (a, b) in enumerate(zip(p.shape, first.shape)) if d != dim):
            raise RuntimeError(f"concatenating sparse tensors, but a dense tensor was found at position {1} or the "
                               f"sizes differ: {list(first.shape)} and {list(p.shape)}. Match the other dimensions.")
    blocks, offset = [], 0
    for p in parts:
        idx = p._sp_indices.numpy().copy()
        idx[dim] += offset
        offset += p.shape[dim]
        blocks.append(idx)
    size = list(first._sp_size)
    size[dim] = offset
    values = cat([p._sp_values for p in parts], 0)
    return SparseTensor._make(_as_tensor(np.concatenate(blocks, 1)), values, size, False)


_RESIZE_HELP = ("You could try the following options: 1. If you need an empty sparse tensor of this size, call "
                "`x = torch.sparse_coo_tensor(size)`. 2. If you need to resize this tensor, call x.to_dense() first.")


def _check_resize(self, size, sparse_dim, dense_dim):
    if self._sp_compressed:
        raise NotImplementedError(f"Could not run 'aten::sparse_resize_' with arguments from the 'SparseCsrCPU' "
                                  "backend. Convert with .to_sparse() first.")
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    _check_leaf(self)


def _check_leaf(self):
    from .._grad_mode import is_grad_enabled
    if self.is_leaf and self.requires_grad and is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def sparse_resize_(self, size, sparse_dim, dense_dim):
    """PyTorch's sparse_resize_: a new size keeping the entries (they must still fit; dimensions unchanged)."""
    size = tuple(int(n) for n in size)
    _check_resize(self, size, sparse_dim, dense_dim)
    if self._nnz():
        for what, old, new in (("sparse", self.sparse_dim(), sparse_dim), ("dense", self.dense_dim(), dense_dim)):
            if old != new:
                raise RuntimeError(f"changing the number of {what} dimensions (from {old} to {new}) on a non-empty "
                                   f"sparse tensor is not supported. {_RESIZE_HELP}")
        old = list(self._sp_size[:sparse_dim])
        if any(n < o for n, o in zip(size[:sparse_dim], old)):
            raise RuntimeError(f"shrinking the size of sparse dimensions (from {old} to {list(size[:sparse_dim])}) on "
                               f"a non-empty sparse tensor is not supported. {_RESIZE_HELP}")
        if size[sparse_dim:] != self._sp_size[sparse_dim:]:
            raise RuntimeError("sparse_resize_: tapegrad keeps the dense sizes of a non-empty sparse tensor. "
                               "Resize its .to_dense() instead.")
        self._sp_size = size
        return self
    return sparse_resize_and_clear_(self, size, sparse_dim, dense_dim)


def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
    """PyTorch's sparse_resize_and_clear_: the new size and dimensions, no entries."""
    size = tuple(int(n) for n in size)
    _check_resize(self, size, sparse_dim, dense_dim)
    from .._creation import zeros
    self._sp_indices = _as_tensor(np.zeros((sparse_dim, 0), np.int64))
    self._sp_values = zeros(0, *size[sparse_dim:], dtype=self.dtype)
    self._sp_size, self._sp_coalesced, self._sp_routes = size, True, None
    return self


def resize_as_(self, other, *, memory_format=None):
    """PyTorch's resize_as_ of a sparse tensor: COO takes a sparse `other`'s size and dimensions (sparse_resize_);
    a compressed tensor grows to `other`'s size keeping its entries. PyTorch's own shrinking of rows, change of
    rank, growing of a CSC tensor's columns or resizing of a block tensor leaves malformed tensors; tapegrad
    grows those that can grow and refuses the rest."""
    if not self._sp_compressed:
        if not isinstance(other, SparseTensor):
            raise NotImplementedError("Could not run 'aten::resize_' with arguments from the 'SparseCPU' backend: "
                                      "a sparse COO tensor resizes as another sparse tensor only.")
        return sparse_resize_(self, other.shape, other.sparse_dim(), other.dense_dim())
    _check_leaf(self)
    new, old = tuple(other.shape), self._sp_size
    if new and old and new[-1] < old[-1]:   # (PyTorch's check, in its words for every compressed layout)
        raise RuntimeError(f"torch.resize_: Resizing columns of sparse CSR tensors to a smaller value is not "
                           f"supported. The original number of columns is {old[-1]} while the requested new number "
                           f"of columns is {new[-1]}.")
    blocks = self._blocksize if self._blocked else (1, 1)
    if len(new) != len(old) or any(n < o for n, o in zip(new, old)) or \
            any(n % b for n, b in zip(new[self._nbatch:], blocks)):
        raise RuntimeError(f"resize_as_: tapegrad grows a {self._layout_name} tensor of the same rank only, by whole "
                           f"blocks (from {list(old)} to {list(new)} leaves PyTorch's tensor malformed). Resize "
                           ".to_dense() instead.")
    self._sp_size = new
    return self
