"""Matrix products and the functions behind tapegrad.linalg."""
import builtins

import jax.numpy as jnp
import numpy as np

from .._dispatch import apply
from .._grad_mode import is_grad_enabled
from .._ops import linalg as L
from .._ops import shape as S_OPS
from .._tensor import Tensor
from . import _return_types as RT
from . import _shape as S
from ._common import SCALAR_NAME, dims as _dims, numel_of, wrap_dim
from .._autocast import policy
from ._einsum import einsum  # noqa: F401  (PyTorch's pairwise contractions)


class LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (PyTorch's torch.linalg.LinAlgError)."""


def _cname(d):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(d.name, d.name)


@policy("matmul")
def matmul(input, other, *, out=None):
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
    out = apply(L.bmm, a3, b3)
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


_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
         "int32": "Int", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


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
    if ta is tb and a[-1] == (b[0] if db == 1 else b[-2]):
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
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(t1)} != {_cname(t2)}")


def _check_mv_operands(mat, t_mat, vec, t_vec):
    # at::mv's checks (it runs addmv into a result of the vector's dtype): the shapes, then the dtypes
    if mat[1] != vec[0]:
        raise RuntimeError(f"size mismatch, got input ({mat[0]}), mat ({mat[0]}x{mat[1]}), vec ({vec[0]})")
    if t_mat is not t_vec:
        tm, tv = _TYPE.get(t_mat.name, t_mat.name), _TYPE.get(t_vec.name, t_vec.name)
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {tv}, {tm}, and {tv}")


def _check_bmm_operands(s1, t1, s2, t2):
    # at::bmm's checks on two batches of matrices: the shapes, then the dtypes
    if s1[0] != s2[0] or s1[2] != s2[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] "
                           f"but got: [{s2[0]}, {s2[1]}].")
    if t1 is not t2:
        raise RuntimeError(f"expected scalar type {_TYPE.get(t1.name, t1.name)} but found "
                           f"{_TYPE.get(t2.name, t2.name)}")


@policy("mm")
def mm(input, mat2, *, out=None):
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
    if input._sp_compressed or mat2._sp_compressed:   # PyTorch's refusals of batched, hybrid ones
        __import__("tapegrad.sparse._matmul", fromlist=["_"]).refuse_compressed_product(input, mat2, "bmm")
    _check_bmm(input, mat2)
    return apply(L.bmm, input, mat2)


def _check_bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm_operands(tuple(input.shape), input.dtype, tuple(mat2.shape), mat2.dtype)


def mv(input, vec, *, out=None):
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


def dot(input, other, *, out=None):
    _check_vectors(input, other, "dot")
    return apply(L.dot, input, other)


inner_product = dot


def vdot(input, other, *, out=None):
    _check_vectors(input, other, "vdot")
    return apply(L.vdot, input, other)


def outer(input, vec2, *, out=None):
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
    t1, t2 = S.permute(a, *free1, *dims1), S.permute(b, *dims2, *free2)
    sizes = tuple(a.shape[d] for d in free1) + tuple(b.shape[d] for d in free2)
    if not free1 and not free2:
        return S.view(apply(L.dot, S.flatten(t1), S.flatten(t2)), sizes)
    size1, size2 = numel_of(a.shape[d] for d in free1), numel_of(b.shape[d] for d in free2)
    csize = numel_of(a.shape[d] for d in dims1)
    return S.reshape(apply(L.mm, S.reshape(t1, size1, csize), S.reshape(t2, csize, size2)), sizes)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec), one node (AddmvBackward0) as PyTorch's."""
    if mat.dim() != 2 or vec.dim() != 1 or input.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0] or (input.dim() == 1 and input.shape[0] not in (1, mat.shape[0])):
        size = "x".join(map(str, input.shape))
        raise RuntimeError(f"size mismatch, got input ({size}), mat ({mat.shape[0]}x{mat.shape[1]}), vec "
                           f"({vec.shape[0]})")
    return apply(L.addmv, input, mat, vec, beta, alpha)


@policy("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if mat1.is_sparse or mat2.is_sparse or mat1._sp_compressed or mat2._sp_compressed:
        mm(mat1, mat2)  # the sparse product's own refusals
    else:
        _check_addmm(input, mat1, mat2)
    S._expanded_shape(tuple(input.shape), (mat1.shape[0], mat2.shape[1]), input)   # the bias broadcasts, as expand
    return apply(L.addmm, input, mat1, mat2, beta, alpha)


def _check_addmm(input, mat1, mat2):
    # PyTorch's addmm checks the dtypes (input's, then mat1's, against mat2's), the ranks, then the shapes
    for name, t in (("self", input), ("mat1", mat1)):
        if t.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_TYPE.get(t.dtype.name)} and "
                               f"{_TYPE.get(mat2.dtype.name)}")
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    _check_mm_operands(tuple(mat1.shape), mat1.dtype, tuple(mat2.shape), mat2.dtype)


@policy("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    if batch1._sp_compressed or batch2._sp_compressed:
        bmm(batch1, batch2)  # PyTorch's refusals of compressed sparse operands
        S._expanded_shape(tuple(input.shape), (batch1.shape[0], batch1.shape[1], batch2.shape[2]), input)
    else:
        # as PyTorch's baddbmm: input expanded, its dtype against batch1's, then bmm's checks
        if batch1.ndim >= 2 and batch2.ndim >= 3:
            S._expanded_shape(tuple(input.shape), (batch1.shape[0], batch1.shape[1], batch2.shape[2]), input)
        if input.dtype is not batch1.dtype:
            raise RuntimeError(f"Input dtypes must be the same, got: input {_cname(input.dtype)}, batch1: "
                               f"{_cname(batch1.dtype)}, batch2: {_cname(batch2.dtype)}")
        _check_bmm(batch1, batch2)   # (it refuses fewer dims, so the expand above has run)
    return apply(L.baddbmm, input, batch1, batch2, beta, alpha)


def kron(input, other, *, out=None):
    # As PyTorch: each operand viewed with a unit dim interleaved, multiplied (broadcast), viewed back.
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a = apply(S_OPS.reshape_copy, input, shape=tuple(x for s in a_shape for x in (s, 1)))
    b = apply(S_OPS.reshape_copy, other, shape=tuple(x for s in b_shape for x in (1, s)))
    return apply(S_OPS.reshape_copy, a * b, shape=tuple(x * y for x, y in zip(a_shape, b_shape)))


def cross(input, other, dim=None, *, out=None):
    if dim is None:  # torch.cross's legacy default: the first dim of size 3
        dim = next((d for d, s in enumerate(input.shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim)


def linalg_cross(input, other, *, dim=-1, out=None):
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    return apply(L.cross, input, other, dim=d)


@policy("trace")
def trace(input):
    if input.ndim != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(input.ndim))
    return apply(L.trace, input)


# ---- tapegrad.linalg -----------------------------------------------------------------------------

def _check_square(a, name, float_only=True):
    if a.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    _check_float(a, name)


def _check_float(a, name):
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_NAME[a.dtype.name]}")


def _check_finite(result, name, message):
    # XLA returns inf/NaN for singular input; PyTorch raises. Checking needs a host sync, as PyTorch's does.
    values = result if isinstance(result, tuple) else (result,)
    if not builtins.all(builtins.bool(jnp.all(jnp.isfinite(v._value))) for v in values):
        raise LinAlgError(f"linalg.{name}: {message}")
    return result


_SINGULAR = "The input matrix is singular, so the operation could not be completed. Check it with " \
            "torch.linalg.matrix_rank or use torch.linalg.pinv instead."


@policy("inv")
def inv(A, *, out=None):
    _check_square(A, "inv")
    return _check_finite(apply(L.inv, A), "inv", _SINGULAR)


def det(A, *, out=None):
    _check_square(A, "det")
    return apply(L.det, A)


def slogdet(A, *, out=None):
    _check_square(A, "slogdet")
    return RT.slogdet(*apply(L.slogdet, A))


def logdet(A):
    # As PyTorch: NaN where the determinant is negative (where over slogdet's outputs); log(sign) + logabsdet
    # for complex A.
    sign, logabs = slogdet(A)
    if A.dtype.is_complex:
        return sign.log() + logabs
    from ._arith import where
    return where(sign == -1.0, float("nan"), logabs)


def solve(A, B, *, left=True, out=None):
    _check_square(A, "solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{SCALAR_NAME[A.dtype.name]} and B of type {SCALAR_NAME[B.dtype.name]} instead.")
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    n = A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2 if left else -1]) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({'x'.join(map(str, A.shape[-2:]))} and "
                           f"{'x'.join(map(str, B.shape[-2:]))})")
    return _check_finite(apply(L.solve, A, B, left=builtins.bool(left), vector=vector), "solve", _SINGULAR)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    _check_square(A, "solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 dimensions.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, but found A of "
                           f"type {SCALAR_NAME[A.dtype.name]} and B of type {SCALAR_NAME[B.dtype.name]} instead.")
    if A.shape[-1] != B.shape[-2 if left else -1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({'x'.join(map(str, A.shape[-2:]))} and "
                           f"{'x'.join(map(str, B.shape[-2:]))})")
    return apply(L.solve_triangular, A, B, upper=builtins.bool(upper), left=builtins.bool(left),
                 unitriangular=builtins.bool(unitriangular))


@policy("cholesky")
def cholesky(A, *, upper=False, out=None):
    _check_square(A, "cholesky")
    return _check_finite(apply(L.cholesky, A, upper=builtins.bool(upper)), "cholesky",
                         "The factorization could not be completed because the input is not positive-definite.")


def qr(A, mode="reduced", *, out=None):
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    _check_float(A, "qr")
    q, r = apply(L.qr, A, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        from .._creation import empty
        return RT.qr(empty(0, dtype=A.dtype), r)
    return RT.qr(q, r)


def svd(A, full_matrices=True, *, driver=None, out=None):
    _check_float(A, "svd")
    return RT.linalg_svd(*apply(L.svd, A, full_matrices=builtins.bool(full_matrices)))


def svd_legacy(input, some=True, compute_uv=True, *, out=None):
    """PyTorch's torch.svd: V (not V^H); `some=False` gives full U and V; without compute_uv, U and V are zeros."""
    _check_float(input, "svd")
    u, s, vh = apply(L.svd, input, full_matrices=not some)
    v = vh.mH
    if not compute_uv:
        from .._creation import zeros_like
        return RT.svd(zeros_like(u).detach(), s, zeros_like(v).detach())
    return RT.svd(u, s, v)


def matrix_exp(A):
    _check_square(A, "matrix_exp")
    return apply(L.matrix_exp, A)


def svdvals(A, *, driver=None, out=None):
    _check_float(A, "svdvals")
    if A.requires_grad and is_grad_enabled():
        return apply(L.svdvals_uv, A)[1]
    return apply(L.svdvals, A)


def eigh(A, UPLO="L", *, out=None):
    _check_square(A, "eigh")
    return RT.eigh(*apply(L.eigh, A, UPLO=UPLO))


def eigvalsh(A, UPLO="L", *, out=None):
    _check_square(A, "eigvalsh")
    return apply(L.eigvalsh, A, UPLO=UPLO)


@policy("pinv")
def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    _check_float(A, "pinv")
    return apply(L.pinv, A, hermitian=builtins.bool(hermitian))


def _check_norm_dtype(x, dtype):
    """PyTorch's checks on vector_norm's dtype: a floating or complex type of x's kind that x widens to."""
    from .. import _dtypes as D
    name = SCALAR_NAME[dtype.name]
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {name}")
    if x.dtype.is_complex != dtype.is_complex:
        kind = "complex" if x.dtype.is_complex else "real"
        raise RuntimeError(f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got {name}")
    if D.promote_types(x.dtype, dtype) is not dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({SCALAR_NAME[x.dtype.name]}) should be "
                           f"convertible without narrowing to the specified dtype ({name}). Pass a wider dtype "
                           "or convert the input first.")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    _check_float(x, "vector_norm")
    if dtype is not None:
        from .. import _dtypes as D
        dtype = D.as_dtype(dtype)
        _check_norm_dtype(x, dtype)
    d = None if x.ndim == 0 else _dims(dim, x.ndim)
    if ord in (float("inf"), float("-inf")) and x.numel() == 0:
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor because the "
                           "operation does not have an identity")
    ord = builtins.float(ord) if isinstance(ord, builtins.float) else ord
    # the cast to dtype happens inside the op, so the graph holds its one node, as PyTorch's
    return apply(L.vector_norm, x, ord=ord, dim=d, keepdim=builtins.bool(keepdim),
                 dtype=None if dtype is None or dtype is x.dtype else dtype.np)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    _check_float(A, "matrix_norm")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if ord not in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    d = [wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)]
    if ord == "fro":
        return vector_norm(A, 2, tuple(d), keepdim, dtype=dtype)
    return _matrix_norm_as_pytorch(A, ord, d, builtins.bool(keepdim), dtype)


def _matrix_norm_as_pytorch(A, ord, d, keepdim, dtype):
    """PyTorch's composite, op for op: nuc and +-2 reduce the singular values of A with the two dims moved
    last (a permute, even when they are last already); +-1 and +-inf the 1-norms of its columns (rows)."""
    from ._reduce import amax, amin
    from ._shape import permute, unsqueeze
    if ord in ("nuc", 2, -2):
        order = [i for i in range(A.ndim) if i not in d] + d
        values = svdvals(permute(A if dtype is None else A.to(dtype), *order))
        result = values.sum(-1, keepdim) if ord == "nuc" else (amax if ord > 0 else amin)(values, -1, keepdim)
        return permute(unsqueeze(result, -1), *np.argsort(order).tolist()) if keepdim else result
    if ord in (float("inf"), float("-inf")):
        d.reverse()
    if not keepdim and d[0] < d[1]:
        d[1] -= 1
    return (amax if ord > 0 else amin)(vector_norm(A, 1.0, d[0], keepdim, dtype=dtype), d[1], keepdim)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    if isinstance(ord, str) or (ord is not None and dim is None and A.ndim == 2) or \
            (dim is not None and not isinstance(dim, builtins.int) and len(dim) == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim,
                           dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector 2-norm (p='fro' over all elements) unless p is 'nuc' or a matrix dim pair."""
    if p == "nuc" or (p == "fro" and dim is not None and not isinstance(dim, builtins.int) and len(dim) == 2):
        return matrix_norm(input, p, dim if dim is not None else (-2, -1), keepdim, dtype=dtype)
    return vector_norm(input, 2 if p == "fro" or p is None else p, dim, keepdim, dtype=dtype)


def dist(input, other, p=2):
    return vector_norm(input - other, p)


def multi_dot(tensors, *, out=None):
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result
