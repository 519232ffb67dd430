"""Building sparse compressed tensors (CSR, CSC, BSR, BSC): PyTorch's constructors from compressed indices, plain
indices and values, with its shape checks and index invariants, and the conversion of a dense tensor, whose leading
dimensions are batch dimensions and whose last `dense_dim` ones stay dense in the values."""
import numpy as np

from .._dispatch import apply
from .._grad_mode import is_grad_enabled
from .._ops import sparse as K
from . import _pattern as P
from ._coo import _as_tensor

_KIND_FLAG = {"csr": True, "csc": "csc", "bsr": "bsr", "bsc": "bsc"}   # the to_sparse op's overload per layout


def compressed_tensor(cls, compressed, plain, values, size, dtype, device, requires_grad):
    """PyTorch's sparse_csr_tensor / sparse_csc_tensor / sparse_bsr_tensor / sparse_bsc_tensor: in each batch, line i
    (a row of CSR, a column of CSC, a row or column of blocks) holds values[..., compressed[..., i]:compressed[...,
    i + 1], ...] at positions plain[..., compressed[..., i]:compressed[..., i + 1]] along it."""
    from .._dtypes import int64
    compressed, plain = _as_tensor(compressed), _as_tensor(plain)
    values = _as_tensor(values, dtype)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        values = values.to(device)
    c, p = cls._accessors
    nb, block = compressed.dim() - 1, 2 if cls._blocked else 0
    if nb < 0:
        raise RuntimeError(f"{c} must have dimensionality >= 1 but got 0. Pass a 1-D {c} (a batch of them: N-D).")
    if compressed.dim() != plain.dim():
        raise RuntimeError(f"{c} and {p} dimensionalities must be equal but got {compressed.dim()} and {plain.dim()}, "
                           "respectively")
    dense = values.dim() - nb - block - 1
    if dense < 0:
        raise RuntimeError(f"values must have dimensionality > sum of batch and block dimensionalities (={nb} + "
                           f"{block}) but got {values.dim()}")
    if compressed.dtype is not plain.dtype:
        names = [_dtype_name(t) for t in (compressed, plain)]
        raise RuntimeError(f"{c} and {p} must have the same dtype, bot got {names[0]} and {names[1]}, respectively")
    ci, pi = compressed.numpy().astype(np.int64), plain.numpy().astype(np.int64)
    d, blocksize = cls._dim, (max(1, values.shape[nb + 1]), max(1, values.shape[nb + 2])) if block else (1, 1)
    if size is None:   # the compressed dimension from its index count, the other from the largest index
        grid = [0, 0]
        grid[d], grid[1 - d] = max(ci.shape[-1] - 1, 0), int(pi.max()) + 1 if pi.size else 0
        size = (*ci.shape[:nb], grid[0] * blocksize[0], grid[1] * blocksize[1], *values.shape[nb + 1 + block:])
    size = tuple(int(n) for n in size)
    _check_shapes(cls, size, nb, dense, blocksize, compressed, plain, values)
    grid = tuple(size[nb + i] // blocksize[i] for i in range(2))
    batches = int(np.prod(size[:nb]))
    ci, pi = ci.reshape(batches, ci.shape[-1]), pi.reshape(batches, pi.shape[-1])
    check_invariants(cls, ci, pi, values.shape[nb], grid)
    lines = _lines(ci, grid[d])
    positions = [lines, pi.reshape(-1)] if d == 0 else [pi.reshape(-1), lines]
    batch = P.unravel(np.repeat(np.arange(batches, dtype=np.int64), pi.shape[1]), size[:nb])
    indices = _as_tensor(np.concatenate([batch, np.stack(positions)]).astype(np.int64)).to(int64)
    if nb:
        values = values.reshape(-1, *values.shape[nb + 1:])
    if values.requires_grad and is_grad_enabled() and not requires_grad:
        values = apply(K.sparse_coo_tensor, values, csr=True)
        values.grad_fn.register_prehook(_refuse_constructor_backward)
    else:
        values = values.detach().requires_grad_(requires_grad)
    return cls._make(indices, values, size, True)


def _refuse_constructor_backward(grad_outputs):
    raise RuntimeError("derivative for aten::sparse_compressed_tensor is not implemented (as in PyTorch): the values' "
                       "history gets no gradient through a compressed constructor. Use to_sparse_csr() on a dense "
                       "tensor instead.")


def _dtype_name(t):
    from .._functional._common import SCALAR_NAME
    return SCALAR_NAME[t.dtype.name]


def _check_shapes(cls, size, nb, dense, blocksize, compressed, plain, values):
    """PyTorch's shape checks of a compressed tensor's parts (it makes them with check_invariants=True)."""
    c, p = cls._accessors
    if len(size) != nb + 2 + dense:
        raise RuntimeError(f"tensor dimensionality must be sum of batch, base, and dense dimensionalities (={nb} + 2 + "
                           f"{dense}) but got {len(size)}")
    batch = list(size[:nb])
    parts = [list(t.shape[:nb]) for t in (compressed, plain, values)]
    if any(part != batch for part in parts):
        raise RuntimeError(f"all batch dimensions of {c} (={parts[0]}), {p} (={parts[1]}), and values (={parts[2]}) "
                           f"must be equal to tensor batch dimensions (={batch})")
    for i in range(2 if cls._blocked else 0):
        if size[nb + i] % blocksize[i]:
            raise RuntimeError(f"tensor shape[{nb + i}] (={size[nb + i]}) must be divisible with blocksize[{i}] "
                               f"(={blocksize[i]}) as defined by values shape")
    grid = tuple(size[nb + i] // blocksize[i] for i in range(2))
    lines = ("row" if cls._dim == 0 else "column") + (" blocks" if cls._blocked else "s")
    if compressed.shape[-1] != grid[cls._dim] + 1:
        raise RuntimeError(f"{c}.shape[-1] must be equal to the number of {lines} + 1 (={grid[cls._dim] + 1}), but "
                           f"got {compressed.shape[-1]}")
    nnz = values.shape[nb]
    if plain.shape[-1] != nnz:
        raise RuntimeError(f"{p}.shape[-1] must be equal to nnz (={nnz}) as defined by values.shape[{nb}], but "
                           f"got {plain.shape[-1]}")
    if tuple(size[nb + 2:]) != tuple(values.shape[values.dim() - dense:]):
        raise RuntimeError(f"the dense dimensions of size {tuple(size[nb + 2:])} must be those of values "
                           f"{tuple(values.shape[values.dim() - dense:])}. Pass the values' trailing sizes.")


def check_invariants(cls, compressed, plain, nnz, grid):
    """PyTorch's index invariants, batch by batch (rows of compressed (batches, lines + 1), plain (batches, nnz));
    PyTorch checks them with check_invariants=True, tapegrad always does."""
    def fail(condition):
        raise RuntimeError(f"`{condition}` is not satisfied.")
    c, p = cls._accessors
    d = cls._dim
    other = "ncols" if d == 0 else "nrows"
    if not compressed.size:
        return
    if np.any(compressed[:, 0] != 0):
        fail(f"{c}[..., 0] == 0")
    if np.any(compressed[:, -1] != nnz):
        fail(f"{c}[..., -1] == nnz")
    steps = np.diff(compressed, axis=1)
    if np.any(steps < 0):
        fail(f"0 <= {c}[..., 1:] - {c}[..., :-1] <= {other}")
    if plain.size and (plain.min() < 0 or plain.max() >= grid[1 - d]):
        fail(f"0 <= {p} < {other}")
    line = _lines(compressed, grid[d]).reshape(plain.shape)
    if plain.shape[1] > 1 and np.any((np.diff(plain, axis=1) <= 0) & (np.diff(line, axis=1) == 0)):
        fail(f"{p}[..., {c}[..., i - 1]:{c}[..., i]] for all i = 1, ..., {'nrows' if d == 0 else 'ncols'}"
             " are sorted and distinct along the last dimension values")


def _lines(compressed, count):
    """The line (row of CSR, column of CSC...) of every entry, batch after batch (compressed: (batches, count + 1))."""
    steps = np.diff(compressed, axis=1).reshape(-1)
    return np.repeat(np.tile(np.arange(count, dtype=np.int64), len(compressed)), np.maximum(steps, 0))


def check_batches(indices, batch_shape):
    """PyTorch's rule for batched compressed tensors: every batch holds the same number of entries."""
    if batch_shape and indices.shape[1]:
        counts = np.bincount(P.linear(indices[:len(batch_shape)], batch_shape), minlength=int(np.prod(batch_shape)))
        if np.any(counts != counts[0]):
            raise RuntimeError("Expect the same number of specified elements per batch. A batched compressed tensor "
                               "holds as many entries in each batch; use the COO layout (to_sparse()) otherwise.")


def dense_to_compressed(input, cls, blocksize, dense_dim):
    """The compressed tensor (cls; blocksize (1, 1) for CSR / CSC) of a dense one of size (*batch, m, n, *dense),
    dense_dim = len(dense): its blocks (entries) holding a nonzero, their values gathered under PyTorch's node name
    (ToSparseCsr/Csc/Bsr/BscBackward0)."""
    from .._creation import tensor
    kind, nd = cls._kind, input.dim()
    dd = 0 if dense_dim is None else int(dense_dim)
    if cls._blocked and nd - dd < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], but "
                         f"got {-dd - 2}). to_sparse_{kind}() takes a tensor of at least 2 + dense_dim dimensions.")
    if not cls._blocked and nd < 2 and dd == 0:   # (PyTorch's CSR and CSC conversions fail at different steps)
        raise IndexError((f"select(): index 1 out of range for tensor of size [{input.numel()}, 1] at dimension 1"
                          if cls._dim == 0 else "Dimension out of range (expected to be in range of [-1, 0], but "
                          "got 1)") + f". to_sparse_{kind}() takes a 2-D tensor.")
    if not cls._blocked and not 0 <= dd <= nd - 2:
        raise RuntimeError(f"dense_to_sparse_{kind}: dense_dim argument must be in [0,{nd - 2}] range, but {dd} is "
                           "given")
    nb = nd - 2 - dd
    shape = tuple(input.shape)
    batch, (m, n), dense = shape[:nb], shape[nb:nb + 2], shape[nb + 2:]
    if nb and not int(np.prod(batch)):
        raise RuntimeError(f"to_sparse_{kind}: Expected product of batch dimensions to be non-zero.")
    r, c = blocksize
    if m % r or n % c:
        raise RuntimeError(f"dense_to_sparse_{kind}: tensor sparse size ({m},{n}) must be divisible by given "
                           f"blocksize ({r},{c}). Pick a blocksize dividing the shape.")
    blocks = (*batch, m // r, r, n // c, c, *dense)
    data = input.detach().numpy().reshape(blocks)
    nonzero = (data != 0).any(axis=(nb + 1, nb + 3) + tuple(range(nb + 4, len(blocks))))
    indices = np.stack(np.nonzero(nonzero)).astype(np.int64).reshape(nb + 2, -1)
    if cls._dim == 1:
        from ._csr import layout_order
        indices = indices[:, layout_order(indices, nb, 1)]
    check_batches(indices, batch)
    source = input
    if cls._blocked:   # (*batch, row blocks, column blocks, r, c, *dense)
        axes = (*range(nb), nb, nb + 2, nb + 1, nb + 3, *range(nb + 4, len(blocks)))
        source = input.reshape(blocks).permute(*axes)
    values = apply(K.to_sparse, source, tensor(indices), full=False, csr=_KIND_FLAG[kind])
    out = cls._make(tensor(indices), values, shape, True)
    if input.requires_grad:   # a dense gradient (torch.mm's, dense + sparse) passes to the source
        out._sp_dense = (input, input._version)
    return out


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_csr_tensor: row i holds values[crow[i]:crow[i + 1]] at columns col[crow[i]:crow[i + 1]]
    (each batch of a batched tensor likewise)."""
    from ._csr import SparseCsrTensor
    return compressed_tensor(SparseCsrTensor, crow_indices, col_indices, values, size, dtype, device, requires_grad)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_csc_tensor: column j holds values[ccol[j]:ccol[j + 1]] at rows row[ccol[j]:ccol[j + 1]]."""
    from ._csr import SparseCscTensor
    return compressed_tensor(SparseCscTensor, ccol_indices, row_indices, values, size, dtype, device, requires_grad)


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_bsr_tensor: block row i holds the blocks values[crow[i]:crow[i + 1]] at block columns
    col[crow[i]:crow[i + 1]]; values are (*batch, nnz, *blocksize, *dense)."""
    from ._bsr import SparseBsrTensor
    return compressed_tensor(SparseBsrTensor, crow_indices, col_indices, values, size, dtype, device, requires_grad)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None):
    """PyTorch's sparse_bsc_tensor: block column j holds the blocks values[ccol[j]:ccol[j + 1]] at block rows
    row[ccol[j]:ccol[j + 1]]; values are (*batch, nnz, *blocksize, *dense)."""
    from ._bsr import SparseBscTensor
    return compressed_tensor(SparseBscTensor, ccol_indices, row_indices, values, size, dtype, device, requires_grad)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
    """PyTorch's sparse_compressed_tensor: sparse_csr/csc/bsr/bsc_tensor chosen by layout."""
    name = getattr(layout, "name", None)
    if name not in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got "
                           f"{'none' if layout is None else layout.name.capitalize()}. Pass layout=tapegrad.sparse_csr "
                           "(or sparse_csc, sparse_bsr, sparse_bsc).")
    make = globals()[name + "_tensor"]
    return make(compressed_indices, plain_indices, values, size, dtype=dtype, device=device,
                requires_grad=requires_grad)
