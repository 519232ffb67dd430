"""Matrix products and tapegrad.linalg. Gradients are jax.vjp's, which follow PyTorch's formulas."""
import functools

import jax
import jax.numpy as jnp
from jax import lax

from ._registry import column_major, defop, missing_kernel, overload, SAME, KEEP
from .elementwise import abs_real
from .reduction import _safe_sqrt, _unreduced


def _addmm(inp, a, b, beta=None, alpha=None):
    if beta is None:   # the defaults, beta = alpha = 1 (nn.Linear's): the sum alone, not scaled and selected
        return inp + jnp.matmul(a, b)
    # beta == 0 ignores the input entirely (NaN included), as PyTorch.
    scaled = jnp.where(beta == 0, jnp.zeros((), inp.dtype), beta * inp)
    return scaled + alpha * jnp.matmul(a, b)


def _addr(inp, vec1, vec2, beta, alpha):
    # bool: (beta and input) or (alpha and the outer product), as PyTorch's kernel
    if inp.dtype == jnp.bool_:
        return (bool(beta) & inp) | (bool(alpha) & vec1[:, None] & vec2[None, :])
    return _addmm(inp, vec1[:, None], vec2[None, :], beta, alpha)


def _addbmm(inp, batch1, batch2, beta, alpha):
    # the sum of the batch's products is one product of the batches laid side by side
    b, n, k = batch1.shape
    side_by_side = jnp.moveaxis(batch1, 0, 1).reshape(n, b * k)
    return _addmm(inp, side_by_side, batch2.reshape(b * k, batch2.shape[2]), beta, alpha)


def _solve(a, b, left, vector):
    if not left:
        return jnp.swapaxes(_solve(jnp.swapaxes(a, -1, -2), jnp.swapaxes(b, -1, -2), True, False), -1, -2)
    if a.shape[-1] == 0 and a.dtype in (jnp.float16, jnp.bfloat16):
        # an empty system: its (empty) solution's shape, without LAPACK, which has no half or bfloat16 kernel
        return _solve(a.astype(jnp.float32), b.astype(jnp.float32), left, vector).astype(a.dtype)
    if vector:
        return jnp.linalg.solve(a, b[..., None])[..., 0]
    return jnp.linalg.solve(a, b)


def _abs_sq(a):
    return jnp.real(a * jnp.conj(a)) if jnp.iscomplexobj(a) else a * a


def _vector_norm(a, ord, dim, keepdim, dtype=None, aten=False):
    if dtype is not None:   # vector_norm(dtype=): computed in dtype, the gradient cast back to a's
        a = a.astype(dtype)
    if ord == 2:
        return _norm2(a, dim, keepdim)
    x = _safe_sqrt(_abs_sq(a)) if jnp.iscomplexobj(a) else abs_real(a) if jnp.issubdtype(a.dtype, jnp.floating) \
        else jnp.abs(a)
    if ord == float("inf"):
        return jnp.max(x, axis=dim, keepdims=keepdim)
    if ord == float("-inf"):
        return jnp.min(x, axis=dim, keepdims=keepdim)
    if ord == 0:
        return jnp.sum(x != 0, axis=dim, keepdims=keepdim).astype(x.dtype)
    if ord == 1:
        return jnp.sum(x, axis=dim, keepdims=keepdim)
    return _root(jnp.sum(x ** ord, axis=dim, keepdims=keepdim), ord)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _norm2(a, dim, keepdim):
    return _safe_sqrt(jnp.sum(_abs_sq(a), axis=dim, keepdims=keepdim))


@_norm2.defjvp
def _norm2_jvp(dim, keepdim, primals, tangents):
    # PyTorch's grad * (a / norm).masked_fill_(norm == 0, 0): the gradient is multiplied by the masked ratio,
    # so a NaN gradient stays NaN at a zero vector (JAX's derivative of the safe sqrt selects 0 there)
    (a,), (da,) = primals, tangents
    norm = _norm2(a, dim, keepdim)
    full = _unreduced(norm, dim, keepdim)
    ratio = jnp.where(full == 0, jnp.zeros((), full.dtype), a / jnp.where(full == 0, jnp.ones((), full.dtype), full))
    return norm, jnp.sum(jnp.real(jnp.conj(ratio) * da), axis=dim, keepdims=keepdim).astype(norm.dtype)


def _root(s, ord):
    # Zero gradient at a zero vector, as PyTorch's norm backward.
    zero = s == 0
    return jnp.where(zero, jnp.zeros((), s.dtype), jnp.where(zero, jnp.ones((), s.dtype), s) ** (1.0 / ord))


def _max_with_tied_gradients(x, axis):
    """max over axis whose gradient goes in full to every element equal to it (PyTorch's cdist for p=inf,
    where max() would share it): the max of the values, plus a zero that carries x's tangent at those elements."""
    fixed = lax.stop_gradient(x)
    top = jnp.max(fixed, axis=axis, keepdims=True)
    carried = jnp.where(fixed == top, _zero_carrying_tangent(x), jnp.zeros((), x.dtype))
    return jnp.squeeze(top, axis) + jnp.sum(carried, axis=axis)


@jax.custom_jvp
def _zero_carrying_tangent(x):
    # zeros whose tangent is x's: x - stop_gradient(x) without its inf - inf = NaN at infinite elements
    return jnp.zeros_like(x)


@_zero_carrying_tangent.defjvp
def _zero_carrying_tangent_jvp(primals, tangents):
    return jnp.zeros_like(primals[0]), tangents[0]


def _cdist(x1, x2, p):
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    if p == float("inf"):
        return _max_with_tied_gradients(abs_real(diff), -1)
    if 0 < p < 1:
        # |d| ** p has an infinite derivative at 0; PyTorch's is 0 there.
        size = abs_real(diff)
        zero = size == 0
        powered = jnp.where(zero, jnp.zeros((), size.dtype), jnp.where(zero, jnp.ones((), size.dtype), size) ** p)
        return _root(jnp.sum(powered, axis=-1), p)
    if p == 2:   # (PyTorch's cdist backward selects 0 at a zero distance, whatever the gradient: no _norm2)
        return _safe_sqrt(jnp.sum(_abs_sq(diff), axis=-1))
    return _vector_norm(diff, p, -1, False)


def _solve_triangular(a, b, upper, left, unitriangular):
    # Batch dimensions broadcast, as in PyTorch; only the named triangle of `a` is read (and gets gradient).
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:])
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=not upper, unit_diagonal=unitriangular)


def _mH(a):
    return jnp.conj(jnp.swapaxes(a, -1, -2))


def _hermitian_from(a, lower):
    """The Hermitian matrix LAPACK reads from one triangle of a (its diagonal's real part), as PyTorch's
    cholesky and eigh do; a itself need not be Hermitian."""
    strict = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    diagonal = jnp.real(jnp.diagonal(a, axis1=-2, axis2=-1)).astype(a.dtype)
    return strict + _mH(strict) + diagonal[..., None] * jnp.eye(a.shape[-1], dtype=a.dtype)


def _cholesky(a, upper):
    # upper: A = U^H U from A's upper triangle, which is the lower triangle of A^H
    low = jnp.linalg.cholesky(_mH(a) if upper else a, symmetrize_input=False)
    return _mH(low) if upper else low


def _eigh(a, UPLO):
    # JAX's eigh differentiates as if a were (a + a^H) / 2: give it the Hermitian matrix PyTorch reads
    return tuple(jnp.linalg.eigh(_hermitian_from(a, UPLO == "L"), symmetrize_input=False))


def _hermitian_directions(fn):
    """fn(a, static) differentiated along Hermitian directions only: its JVP sees (da + da^H) / 2, so its
    VJP hands back a Hermitian gradient, as PyTorch's cholesky and eigh backwards do (JAX's reads the one
    triangle the factorization reads). The value is fn's own."""
    @functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
    def f(a, static):
        return fn(a, static)

    @f.defjvp
    def _(static, primals, tangents):
        (a,), (da,) = primals, tangents
        return jax.jvp(lambda x: fn(x, static), (a,), ((da + _mH(da)) / 2,))
    return f


_cholesky_hermitian = _hermitian_directions(_cholesky)
_eigh_hermitian = _hermitian_directions(_eigh)


# ---- products -------------------------------------------------------------------------
# PyTorch's matmul dispatches by rank: vector.vector is dot, matrix.vector is mv, matrix.matrix is mm.
matmul = defop("matmul", lambda a, b: jnp.matmul(a, b), dtype_rule=KEEP, node="mm",
               overloads=[overload("DotBackward0", "11"), overload("MvBackward0", "21")])
mm = defop("mm", lambda a, b: jnp.matmul(a, b), dtype_rule=KEEP)
bmm = defop("bmm", lambda a, b: jnp.matmul(a, b), dtype_rule=KEEP)
mv = defop("mv", lambda a, b: jnp.matmul(a, b), dtype_rule=KEEP)
dot = defop("dot", lambda a, b: jnp.dot(a, b), dtype_rule=KEEP)
vdot = defop("vdot", lambda a, b: jnp.vdot(a, b), dtype_rule=KEEP)
outer = defop("outer", lambda column, b: column * b, node="mul")   # column: the first vector as (n, 1)
addmm = defop("addmm", _addmm, dtype_rule=KEEP)
baddbmm = defop("baddbmm", _addmm, dtype_rule=KEEP)
addmv = defop("addmv", _addmm, dtype_rule=KEEP)
# beta and alpha are statics here: the tensors alone promote, as PyTorch's (a Python int would lift bools)
addr = defop("addr", _addr, dtype_rule=SAME)
addbmm = defop("addbmm", _addbmm, dtype_rule=KEEP)
cross = defop("cross", lambda a, b, dim: jnp.cross(a, b, axisa=dim, axisb=dim, axisc=dim),
              node="linalg_cross", dtype_rule=SAME)
trace = defop("trace", lambda a: jnp.trace(a), dtype_rule=KEEP)

# ---- tapegrad.linalg ----------------------------------------------------------------------
# (The decompositions' and inv's backwards read their results, not the input: saves_inputs=())
inv = defop("inv", lambda a: jnp.linalg.inv(a), dtype_rule=KEEP, node="linalg_inv_ex", saves_output=True,
            saves_inputs=())
# (an empty matrix's determinant is 1 without LAPACK, which has no half or bfloat16 kernel)
det = defop("det", lambda a: jnp.linalg.det(a) if a.shape[-1] else jnp.ones(a.shape[:-2], a.dtype), dtype_rule=KEEP,
            node="linalg_det", saves_output=True)
slogdet = defop("slogdet", lambda a: tuple(jnp.linalg.slogdet(a)), dtype_rule=KEEP, nout=2,
                node="linalg_slogdet", saves_output=(0,))   # (PyTorch's backward reads the sign)
# (B's gradient is a solve with A: B itself is not saved)
solve = defop("solve", _solve, dtype_rule=KEEP, node="linalg_solve_ex", saves_output=True, saves_inputs=(0,))
solve_triangular = defop("solve_triangular", _solve_triangular, dtype_rule=KEEP, node="linalg_solve_triangular",
                        saves_output=True, saves_inputs=(0,))
# (PyTorch's backward reads the factor L, and inv's the inverse: changing them in place makes it fail)
# legacy: torch.cholesky (deprecated), whose node is CholeskyBackward0
cholesky = defop("cholesky", lambda a, upper, legacy=False: _cholesky_hermitian(a, upper), dtype_rule=KEEP,
                 node="linalg_cholesky_ex", saves_output=True, saves_inputs=(),
                 overloads=[overload("CholeskyBackward0", legacy=True)])
qr = defop("qr", lambda a, mode: tuple(jnp.linalg.qr(a, mode=mode)), dtype_rule=KEEP, nout=2, node="linalg_qr",
           saves_output=True, saves_inputs=())
svd = defop("svd", lambda a, full_matrices: tuple(jnp.linalg.svd(a, full_matrices=full_matrices)),
            dtype_rule=KEEP, nout=3, node="linalg_svd", saves_output=True, saves_inputs=())
# (JAX's expm takes no half precision: computed in float32, rounded once, where PyTorch's kernel takes it)
matrix_exp = defop("matrix_exp", lambda a: jax.scipy.linalg.expm(a) if a.dtype not in (jnp.float16, jnp.bfloat16)
                   else jax.scipy.linalg.expm(a.astype(jnp.float32)).astype(a.dtype), dtype_rule=KEEP,
                   node="linalg_matrix_exp")
svdvals = defop("svdvals", lambda a: jnp.linalg.svd(a, compute_uv=False), dtype_rule=KEEP, node="linalg_svd",
                saves_inputs=())


def _svd_for_values(a):
    # U and Vh carry no gradient: the derivative is svdvals' (no 1 / (s_i^2 - s_j^2) terms at equal values).
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    return jax.lax.stop_gradient(u), s, jax.lax.stop_gradient(vh)


# svdvals where a gradient is wanted: PyTorch's _linalg_svd then computes U and Vh too, so S is output 1
# of LinalgSvdBackward0 (JAX's derivative of the values computes them as well).
svdvals_uv = defop("svdvals_uv", _svd_for_values, dtype_rule=KEEP, nout=3, node="linalg_svd", saves_output=True,
                   saves_inputs=())
eigh = defop("eigh", lambda a, UPLO: _eigh_hermitian(a, UPLO), dtype_rule=KEEP, nout=2, node="linalg_eigh",
             saves_output=True, saves_inputs=())
eigvalsh = defop("eigvalsh", lambda a, UPLO: _eigh_hermitian(a, UPLO)[0], dtype_rule=KEEP, node="linalg_eigh",
                 saves_output=True, saves_inputs=())


def _tolerance(a, atol, rtol, largest):
    """PyTorch's cut-off (get_atol_rtol), in float64: max(atol, rtol * largest), rtol by default eps * max(m, n)
    (0 where a positive atol is given)."""
    default_rtol = jnp.finfo(a.dtype).eps * max(a.shape[-2:])
    if rtol is None:
        rtol = default_rtol if atol is None else jnp.where(jnp.asarray(atol) > 0, 0.0, default_rtol)
    atol = jnp.zeros((), jnp.float64) if atol is None else jnp.asarray(atol, jnp.float64)
    rtol = jnp.asarray(rtol, jnp.float64)
    return jnp.maximum(atol[..., None], rtol[..., None] * largest.astype(jnp.float64))


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _pinv(a, atol, rtol, hermitian):
    """PyTorch's linalg_pinv: from the SVD, or with hermitian from eigh of a's lower triangle (the rest of a
    unread), keeping the values above the tolerance."""
    m, n = a.shape[-2:]
    if a.size == 0:
        return jnp.zeros(a.shape[:-2] + (n, m), a.dtype)
    if hermitian:
        s, u = jnp.linalg.eigh(_hermitian_from(a, True), symmetrize_input=False)
        tol = _tolerance(a, atol, rtol, jnp.max(jnp.abs(s), axis=-1, keepdims=True))
        s_inv = jnp.where(jnp.abs(s) > tol, 1 / s, 0).astype(a.dtype)
        return jnp.matmul(u * s_inv[..., None, :], _mH(u))
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    tol = _tolerance(a, atol, rtol, s[..., :1])
    s_inv = jnp.where(s > tol, 1 / s, 0).astype(a.dtype)
    return jnp.matmul(_mH(vh) * s_inv[..., None, :], _mH(u))


@_pinv.defjvp
def _pinv_jvp(hermitian, primals, tangents):
    # PyTorch's pinv_jvp, whose transpose is its pinv_backward: the general formula, with a as given
    # (so a non-Hermitian a's gradient is PyTorch's under hermitian=True too)
    a, atol, rtol = primals
    da = tangents[0]
    p = _pinv(a, atol, rtol, hermitian)
    pH, daH = _mH(p), _mH(da)
    if a.shape[-2] <= a.shape[-1]:
        k = pH @ daH
        dp = p @ (k - _mH(k) - k @ (a @ p)) + (daH - p @ (a @ daH)) @ (pH @ p)
    else:
        k = p @ da
        kH = _mH(k)
        dp = (kH - k - (p @ a) @ kH) @ p + (p @ pH) @ (daH - (daH @ a) @ p)
    return p, dp


pinv = defop("pinv", _pinv, dtype_rule=KEEP, diff=(0,), node="linalg_pinv", saves_output=True)


def _vector_norm_backward(g, norm, a, ord, dim, keepdim, dtype=None, aten=False):
    """PyTorch's norm_backward on the result (the norm)."""
    if dtype is not None:
        a = a.astype(dtype)
    if a.ndim:
        g, norm = _unreduced(g, dim, keepdim), _unreduced(norm, dim, keepdim)
    zero = jnp.zeros((), g.dtype)
    if ord == 0:
        return jnp.zeros(a.shape, g.dtype)
    if ord == 1:
        return jnp.sign(a) * g
    if ord == 2:
        # (a / norm computed at a zero norm too, unlike _norm2_jvp's guarded ratio: differentiated again, this
        # formula is NaN there, as PyTorch's double backward)
        return g * jnp.where(norm == 0, zero, a / norm)
    if ord in (float("inf"), float("-inf")):
        mask = (jnp.abs(a) == norm) | jnp.isnan(jnp.abs(a))
        return jnp.sign(a) * ((g / jnp.sum(mask, axis=dim, keepdims=True)) * mask)
    if ord < 1:
        scaled = jnp.sign(a) * jnp.where(a == 0, jnp.zeros((), jnp.abs(a).dtype), jnp.abs(a) ** (ord - 1))
        return scaled * g * norm ** (1 - ord)
    scaled = jnp.sign(a) * jnp.abs(a) ** (ord - 1) if ord < 2 else a * jnp.abs(a) ** (ord - 2)
    return scaled * jnp.where(norm == 0, zero, g / norm ** (ord - 1))


# aten=True: ATen's at::norm(x, p, dim), which composites such as pairwise_distance call (NormBackward1)
vector_norm = defop("vector_norm", _vector_norm, dtype_rule=KEEP, node="linalg_vector_norm", saves_inputs=(0,),
                    result_backward=_vector_norm_backward, overloads=[overload("NormBackward1", aten=True)])
cdist = defop("cdist", _cdist, dtype_rule=KEEP, node_name="CdistBackward0", saves_output=True,
              backward_name="CdistBackwardBackward0",
              no_double_backward=(NotImplementedError, "the derivative for '_cdist_backward' is not implemented."))
# torch.dist: one node (DistBackward0) over the broadcast difference, whose backward is the norm's
dist = defop("dist", lambda a, b, p: _vector_norm(a - b, p, None, False), dtype_rule=KEEP, saves_inputs=(0, 1),
             saves_output=True)
# the distances of the pairs i < j of x's rows, in row-major order
pdist = defop("pdist", lambda x, p: _cdist(x, x, p)[jnp.triu_indices(x.shape[0], 1)], dtype_rule=KEEP,
              saves_output=True, saves_inputs=(0,), backward_name="PdistBackwardBackward0",
              no_double_backward=(NotImplementedError, "the derivative for '_pdist_backward' is not implemented."))


# LAPACK writes matrices column by column, and PyTorch hands those results on as they are
for _op in (inv, cholesky, solve_triangular):
    _op.result_order = lambda static, shapes: (column_major(shapes[0]),)
# (a vector right-hand side gives a vector; XA = B is a transposed solve's result, row-major)
solve.result_order = lambda static, shapes: (
    None if static["vector"] or not static["left"] else column_major(shapes[0]),)
qr.result_order = lambda static, shapes: tuple(column_major(s) for s in shapes)
svd.result_order = svdvals_uv.result_order = lambda static, shapes: (column_major(shapes[0]), None,
                                                                     column_major(shapes[2]))
eigh.result_order = lambda static, shapes: (None, column_major(shapes[1]))

# PyTorch's distance kernels have no half-precision versions (Op.no_kernel_for)
cdist.no_kernel_for = {"half": missing_kernel("cdist")}
pdist.no_kernel_for = {"half": missing_kernel("pdist")}
