"""Matrix products (matmul, mm, bmm, mv, dot, outer, addmm, baddbmm, kron, ...) and their checks, made in
PyTorch's order."""
import numpy as np

from .. import _dtypes as D
from .._dispatch import apply
from .._ops import linalg as L
from .._ops import shape as S_OPS
from .._tensor import Tensor
from . import _shape as S
from ._arith import _check_kernel
from ._common import SCALAR_NAME, check_tensors, numel_of, wrap_dim
from .._autocast import policy
from .._grad_mode import _state
from ._einsum import einsum  # noqa: F401  (PyTorch's pairwise contractions)


@policy("matmul")
def matmul(input, other, *, out=None):
    check_tensors("matmul", (input, "input"), (other, "other"))
    if input._sp_compressed or other._sp_compressed:   # PyTorch's refusals of batched, hybrid ones
        __import__("tapegrad.sparse._matmul", fromlist=["_"]).refuse_compressed_product(input, other, "matmul")
    if input.is_sparse or other.is_sparse:
        from ..sparse._matmul import sparse_mm
        return sparse_mm(input, other, via="mm")
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    if input.ndim == 3 and other.ndim == 3 and input.shape[0] != other.shape[0]:
        # As PyTorch: a batch of one that requires grad is squeezed to a matrix, so that should_fold folds
        # the other operand into rows (its gradient is then no expanded batch summed in the backward)
        if input.shape[0] == 1 and input.requires_grad:
            input = S.squeeze(input, 0)
        elif other.shape[0] == 1 and other.requires_grad:
            other = S.squeeze(other, 0)
    _check_matmul(input, other)
    return _matmul_as_pytorch(input, other)


def _matmul_as_pytorch(a, b):
    """matmul as the ops PyTorch dispatches it to (at::native::_matmul_impl), so its graph reads the same:
    dot, mv, mm (a vector unsqueezed to a row), the larger operand folded into rows for mm/mv when the
    smaller one requires grad or the fold is a view, else bmm over the expanded batch dims."""
    da, db = a.ndim, b.ndim
    if da <= 2 and db <= 2:   # the matmul entry records dot, mv or mm by rank
        if da == 1 and db == 2:
            return apply(L.matmul, S.unsqueeze(a, 0), b).squeeze_(0)
        return apply(L.matmul, a, b)
    if _should_fold(a, b):
        transpose = db > da
        t1 = S.transpose(b, -2, -1) if transpose else a
        t2 = (S.t(a) if da == 2 else a) if transpose else b
        shape = tuple(t1.shape[:-1])
        folded = S.reshape(t1, numel_of(shape), t1.shape[-1])
        if t2.ndim == 1:
            return apply(S_OPS.reshape_copy, apply(L.matmul, folded, t2), shape=shape)
        out = apply(S_OPS.reshape_copy, apply(L.matmul, folded, t2), shape=shape + (t2.shape[1],))
        return S.transpose(out, -2, -1).contiguous() if transpose else out
    n, m1 = (a.shape[-2] if da > 1 else 1), a.shape[-1]
    m2, p = (b.shape[-2], b.shape[-1]) if db > 1 else (b.shape[0], 1)
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    count = numel_of(batch)
    a3 = S.reshape(S.expand(a, batch + (n, m1)), count, n, m1)
    if db == 1:
        b3 = S.unsqueeze(S.reshape(S.expand(b, batch + (m2,)), count, m2), 2)
    else:
        b3 = S.reshape(S.expand(b, batch + (m2, p)), count, m2, p)
    out = apply(L.bmm, *_bmm_operands(a3, b3))
    if db == 1:
        out = S.squeeze(out, -1)
    return apply(S_OPS.reshape_copy, out, shape=batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ()))


def _should_fold(a, b):
    # PyTorch's should_fold: fold the larger operand (>= 3 dims) into a matrix when the other has <= 2 dims
    # and requires grad (a smaller gradient in the backward), or when the fold is a view.
    larger = a.ndim >= b.ndim
    t1_shape = tuple(a.shape) if larger else tuple(b.shape[:-2]) + (b.shape[-1], b.shape[-2])
    if not (len(t1_shape) >= 3 and (b.ndim if larger else a.ndim) <= 2):
        return False
    if (b if larger else a).requires_grad:
        return True
    if a.ndim == 2:
        return False
    if numel_of(t1_shape) == 0:
        return True
    strides = a.stride() if larger else b.stride()
    if not larger:
        strides = strides[:-2] + (strides[-1], strides[-2])
    return all(strides[i] == strides[i + 1] * t1_shape[i + 1] for i in range(len(t1_shape) - 2))


def _check_matmul(input, other):
    """PyTorch's matmul errors, raised by the kernel it dispatches to (dot, mv, mm or bmm, the larger operand
    folded into rows when should_fold says so) as that kernel sees its operands: folded, transposed, expanded."""
    a, b = tuple(input.shape), tuple(other.shape)
    da, db = len(a), len(b)
    if da == 1 and db == 1:
        return _check_vectors(input, other, "dot")
    ta, tb = input.dtype, other.dtype
    if da > 2 and db > 2:   # only bmm broadcasts batch dims (a folded operand has none)
        batch_a, batch_b = a[:-2], b[:-2]
        for k in range(1, min(len(batch_a), len(batch_b)) + 1):
            if batch_a[-k] != batch_b[-k] and 1 not in (batch_a[-k], batch_b[-k]):
                raise RuntimeError(f"The size of tensor a ({batch_a[-k]}) must match the size of tensor b "
                                   f"({batch_b[-k]}) at non-singleton dimension {max(len(batch_a), len(batch_b)) - k}")
    if ta is tb and ta is not D.bool_ and a[-1] == (b[0] if db == 1 else b[-2]):
        return   # no error to word: skip should_fold's reads of the strides
    if da == 2 and db == 1:
        _check_mv_operands(a, ta, b, tb)
    elif da <= 2 and db <= 2:
        _check_mm_operands(a if da == 2 else (1,) + a, ta, b, tb)
    elif _should_fold(input, other):
        if da >= db:    # input's batch dims folded into its rows, times other
            rows = (numel_of(a[:-1]), a[-1])
            (_check_mv_operands if db == 1 else _check_mm_operands)(rows, ta, b, tb)
        else:           # other.mT folded into rows, times input (a matrix transposed)
            rows = (numel_of(b[:-2]) * b[-1], b[-2])
            if da == 1:
                _check_mv_operands(rows, tb, a, ta)
            else:
                _check_mm_operands(rows, tb, (a[1], a[0]), ta)
    else:               # bmm over the broadcast batch dims, a vector as a one-row or one-column matrix
        count = numel_of(tuple(np.broadcast_shapes(a[:-2] if da > 1 else (), b[:-2])))
        _check_bmm_operands((count, a[-2] if da > 1 else 1, a[-1]), ta,
                            (count,) + ((b[-2], b[-1]) if db > 1 else (b[0], 1)), tb)


def _check_mm_operands(s1, t1, s2, t2):
    # at::mm's checks on two matrices: the shapes, then the dtypes
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({s1[0]}x{s1[1]} and {s2[0]}x{s2[1]})")
    if t1 is not t2:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {D.cpp_name(t1)} != "
                           f"{D.cpp_name(t2)}")
    if s1[0] * s1[1] * s2[1]:   # (PyTorch's kernel returns before its dtype dispatch when it reads nothing)
        _refuse_bool(t1, "addmm_impl_cpu_")


def _refuse_bool(dtype, kernel):
    """PyTorch's products have no bool kernels."""
    if dtype is D.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'. Convert the operands first, e.g. "
                                  "x.int() or x.float().")


def _check_mv_operands(mat, t_mat, vec, t_vec):
    # at::mv's checks (it runs addmv into a result of the vector's dtype): the shapes, then the dtypes
    if mat[1] != vec[0]:
        raise RuntimeError(f"size mismatch, got input ({mat[0]}), mat ({mat[0]}x{mat[1]}), vec ({vec[0]})")
    if t_mat is not t_vec:
        tm, tv = SCALAR_NAME[t_mat.name], SCALAR_NAME[t_vec.name]
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {tv}, {tm}, and {tv}")
    if mat[0] * mat[1]:   # (an empty matrix: PyTorch's kernel returns before its dtype dispatch)
        _refuse_bool(t_mat, "addmv_impl_cpu")


def _check_bmm_operands(s1, t1, s2, t2):
    # at::bmm's checks on two batches of matrices: the shapes, then the dtypes
    if s1[0] != s2[0] or s1[2] != s2[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] "
                           f"but got: [{s2[0]}, {s2[1]}].")
    if _bmm_reads_nothing(s1, s2):
        return   # (PyTorch's kernel returns before its dtype checks: see _bmm_operands)
    _refuse_bool(t1, "bmm")   # (its kernel is chosen by the first operand's dtype, before the second is read)
    if t1 is not t2:
        raise RuntimeError(f"expected scalar type {SCALAR_NAME[t1.name]} but found {SCALAR_NAME[t2.name]}")


def _bmm_reads_nothing(s1, s2):
    """Whether bmm of batches shaped s1 and s2 has an empty result or sums over nothing."""
    return s1[0] * s1[1] * s2[2] == 0 or s1[2] == 0


def _bmm_operands(a, b):
    """(a, b) as bmm computes them: PyTorch's CPU kernel makes its result with mat2's dtype and returns it
    (empty, or zeros when it sums over nothing) before checking that the dtypes agree, so such a product
    of mixed dtypes is mat2's dtype, where any other raises."""
    if a.dtype is not b.dtype and _bmm_reads_nothing(tuple(a.shape), tuple(b.shape)):
        if a.requires_grad and _state.grad_enabled and not (b.dtype.is_floating_point or b.dtype.is_complex):
            raise RuntimeError(f"Autograd not support dtype: {SCALAR_NAME[b.dtype.name]}")
        a = a.to(b.dtype)
    return a, b


@policy("mm")
def mm(input, mat2, *, out=None):
    check_tensors("mm", (input, "input"), (mat2, "mat2"))
    if input._sp_compressed or mat2._sp_compressed:   # PyTorch's refusals of batched, hybrid ones
        __import__("tapegrad.sparse._matmul", fromlist=["_"]).refuse_compressed_product(input, mat2, "mm")
    if input.is_sparse or mat2.is_sparse:
        from ..sparse._matmul import sparse_mm
        return sparse_mm(input, mat2, via="mm")
    _check_mm(input, mat2)
    return apply(L.mm, input, mat2)


def _check_mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    _check_mm_operands(tuple(input.shape), input.dtype, tuple(mat2.shape), mat2.dtype)


@policy("bmm")
def bmm(input, mat2, *, out=None):
    check_tensors("bmm", (input, "input"), (mat2, "mat2"))
    if input._sp_compressed or mat2._sp_compressed:   # PyTorch's refusals of batched, hybrid ones
        __import__("tapegrad.sparse._matmul", fromlist=["_"]).refuse_compressed_product(input, mat2, "bmm")
    _check_bmm(input, mat2)
    return apply(L.bmm, *_bmm_operands(input, mat2))


def _check_bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm_operands(tuple(input.shape), input.dtype, tuple(mat2.shape), mat2.dtype)


def mv(input, vec, *, out=None):
    check_tensors("mv", (input, "input"), (vec, "vec"))
    if input._sp_compressed or vec._sp_compressed:   # PyTorch's refusals of batched, hybrid ones
        __import__("tapegrad.sparse._matmul", fromlist=["_"]).refuse_compressed_product(input, vec, "mv")
    if input.is_sparse:
        from ..sparse._matmul import sparse_mm
        return sparse_mm(input, vec, via="mv")
    if input.ndim != 2 or vec.ndim != 1:   # at::mv is addmv into a new vector
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_mv_operands(tuple(input.shape), input.dtype, tuple(vec.shape), vec.dtype)
    return apply(L.mv, input, vec)


def _check_vectors(input, other, name):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found "
                           f"{SCALAR_NAME[input.dtype.name]} and {SCALAR_NAME[other.dtype.name]}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
                           f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
                           f"and {other.shape[0]} elements respectively")
    _refuse_bool(input.dtype, "dot")   # (vdot's too)


def dot(input, other, *, out=None):
    check_tensors("dot", (input, "input"), (other, "tensor"))
    _check_vectors(input, other, "dot")
    return apply(L.dot, input, other)


inner_product = dot


def vdot(input, other, *, out=None):
    check_tensors("vdot", (input, "input"), (other, "other"))
    _check_vectors(input, other, "vdot")
    return apply(L.vdot, input, other)


def outer(input, vec2, *, out=None):
    check_tensors("outer", (input, "input"), (vec2, "vec2"))
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    # As PyTorch: the first vector as a column (a view in its graph), times the second.
    return apply(L.outer, input.reshape(-1, 1), vec2)


ger = outer


@policy("tensordot")
def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (list, tuple)):
        dims = tuple(tuple(d) if isinstance(d, (list, tuple)) else (d,) for d in dims)
        dims = (tuple(wrap_dim(d, a.ndim) for d in dims[0]), tuple(wrap_dim(d, b.ndim) for d in dims[1]))
        for x, y in zip(*dims):
            if a.shape[x] != b.shape[y]:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim "
                                   f"{x} and second has size {b.shape[y]} in dim {y}")
    if not isinstance(dims, tuple):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims = (tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims)))
    return _tensordot_as_pytorch(a, b, *dims)


def _tensordot_as_pytorch(a, b, dims1, dims2):
    """tensordot as PyTorch records it: each operand permuted (free dims first for a, last for b) and
    reshaped to a matrix, mm, and a view to the free dims; dot of the flattened operands when every
    dim is contracted."""
    free1 = [d for d in range(a.ndim) if d not in dims1]
    free2 = [d for d in range(b.ndim) if d not in dims2]
    t1, t2 = S.permute(a, (*free1, *dims1)), S.permute(b, (*dims2, *free2))   # (a tuple: 0-d operands permute by ())
    sizes = tuple(a.shape[d] for d in free1) + tuple(b.shape[d] for d in free2)
    if a.dtype is b.dtype and (not free1 and not free2 or numel_of(a.shape) * numel_of(b.shape)):
        _refuse_bool(a.dtype, "dot" if not free1 and not free2 else "addmm_impl_cpu_")
    if not free1 and not free2:
        return S.view(apply(L.dot, S.flatten(t1), S.flatten(t2)), sizes)
    size1, size2 = numel_of(a.shape[d] for d in free1), numel_of(b.shape[d] for d in free2)
    csize = numel_of(a.shape[d] for d in dims1)
    return S.reshape(apply(L.mm, S.reshape(t1, size1, csize), S.reshape(t2, csize, size2)), sizes)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec), one node (AddmvBackward0) as PyTorch's."""
    check_tensors("addmv", (input, "input"), (mat, "mat"), (vec, "vec"))
    if mat.dim() != 2 or vec.dim() != 1 or input.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0] or (input.dim() == 1 and input.shape[0] not in (1, mat.shape[0])):
        size = "x".join(map(str, input.shape))
        raise RuntimeError(f"size mismatch, got input ({size}), mat ({mat.shape[0]}x{mat.shape[1]}), vec "
                           f"({vec.shape[0]})")
    return apply(L.addmv, input, mat, vec, beta, alpha)


@policy("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    check_tensors("addmm", (input, "input"), (mat1, "mat1"), (mat2, "mat2"))
    if mat1.is_sparse or mat2.is_sparse or mat1._sp_compressed or mat2._sp_compressed:
        mm(mat1, mat2)  # the sparse product's own refusals
    else:
        _check_addmm(input, mat1, mat2)
    rows, cols = mat1.shape[0], mat2.shape[1]
    S._expanded_shape(tuple(input.shape), (rows, cols), input)   # the bias broadcasts, as expand
    if type(beta) is int and beta == 1 and type(alpha) is int and alpha == 1:
        return apply(L.addmm, input, mat1, mat2)   # (a smaller equation: see _ops.linalg._addmm)
    return apply(L.addmm, input, mat1, mat2, beta, alpha)


def _check_addmm(input, mat1, mat2):
    # PyTorch's addmm checks the dtypes (input's, then mat1's, against mat2's), the ranks, then the shapes
    dtype = mat2.dtype
    for name, t in (("self", input), ("mat1", mat1)):
        if t.dtype is not dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {SCALAR_NAME[t.dtype.name]} and "
                               f"{SCALAR_NAME[dtype.name]}")
    s1, s2 = mat1.shape, mat2.shape
    for name, s in (("mat1", s1), ("mat2", s2)):
        if len(s) != 2:
            raise RuntimeError(f"{name} must be a matrix, got {len(s)}-D tensor")
    _check_mm_operands(s1, dtype, s2, dtype)


@policy("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    check_tensors("baddbmm", (input, "input"), (batch1, "batch1"), (batch2, "batch2"))
    if batch1._sp_compressed or batch2._sp_compressed:
        bmm(batch1, batch2)  # PyTorch's refusals of compressed sparse operands
        S._expanded_shape(tuple(input.shape), (batch1.shape[0], batch1.shape[1], batch2.shape[2]), input)
    else:
        # as PyTorch's baddbmm: input expanded, its dtype against batch1's, then bmm's checks
        if batch1.ndim >= 2 and batch2.ndim >= 3:
            S._expanded_shape(tuple(input.shape), (batch1.shape[0], batch1.shape[1], batch2.shape[2]), input)
        if input.dtype is not batch1.dtype:
            raise RuntimeError(f"Input dtypes must be the same, got: input {D.cpp_name(input.dtype)}, batch1: "
                               f"{D.cpp_name(batch1.dtype)}, batch2: {D.cpp_name(batch2.dtype)}")
        _check_bmm(batch1, batch2)   # (it refuses fewer dims, so the expand above has run)
    return apply(L.baddbmm, input, batch1, batch2, beta, alpha)


def kron(input, other, *, out=None):
    check_tensors("kron", (input, "input"), (other, "other"))
    # As PyTorch: each operand viewed with a unit dim interleaved, multiplied (broadcast), viewed back.
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a = apply(S_OPS.reshape_copy, input, shape=tuple(x for s in a_shape for x in (s, 1)))
    b = apply(S_OPS.reshape_copy, other, shape=tuple(x for s in b_shape for x in (1, s)))
    return apply(S_OPS.reshape_copy, a * b, shape=tuple(x * y for x, y in zip(a_shape, b_shape)))


def cross(input, other, dim=None, *, out=None):
    if dim is None:  # torch.cross's legacy default: the first dim of size 3
        dim = next((d for d, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


def linalg_cross(input, other, *, dim=-1, out=None):
    check_tensors("cross", (input, "input"), (other, "other"))
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return apply(L.cross, input, other, dim=d)


@policy("trace")
def trace(input):
    _check_kernel("trace", input)   # (PyTorch's dtype check comes before its rank check)
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.ndim))
    return apply(L.trace, input)
