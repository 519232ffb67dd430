"""General (non-Hermitian) eigendecomposition, least squares and Householder products, as torch.linalg's
eig, eigvals, lstsq, householder_product and torch.geqrf / ormqr. Gradients are jax.vjp's; eig's JVP is
written out below (JAX differentiates eigenvalues only), in PyTorch's normalization of the eigenvectors."""
import jax
import jax.numpy as jnp
from jax._src.lax.linalg import geqrf as _geqrf

from ._registry import column_major, defop, KEEP
from .linalg import _pinv


@jax.custom_jvp
def _eig(a):
    w, v = jnp.linalg.eig(a)
    return w, v


@_eig.defjvp
def _eig_jvp(primals, tangents):
    """PyTorch's linalg_eig_jvp: dL = diag(V^-1 dA V); dV = V (V^-1 dA V / (L_j - L_i), off the diagonal),
    less V times Re(diag(V^H dV)), so the eigenvectors keep their unit norm."""
    (a,), (da,) = primals, tangents
    w, v = _eig(a)
    projected = jnp.linalg.solve(v, da.astype(v.dtype) @ v)
    dw = jnp.diagonal(projected, axis1=-2, axis2=-1)
    diagonal = jnp.eye(a.shape[-1], dtype=bool)
    gaps = w[..., None, :] - w[..., :, None]
    dv = v @ jnp.where(diagonal, 0, projected / jnp.where(diagonal, 1, gaps))
    dv = dv - v * jnp.real(jnp.sum(jnp.conj(v) * dv, axis=-2))[..., None, :]
    return (w, v), (dw, dv)


def _lstsq(a, b, rcond, residuals):
    """The minimum-norm least-squares solution, pinv(A) B (PyTorch's derivative of lstsq is that of pinv, as
    _pinv's JVP writes it), and where asked the squared residuals ||A X - B||^2 of each column."""
    x = jnp.matmul(_pinv(a, None, rcond, False), b)
    if not residuals:
        return x, jnp.zeros((0,), jnp.real(x).dtype)
    r = jnp.matmul(a, x) - b
    return x, jnp.sum(jnp.real(r * jnp.conj(r)), axis=-2)


def _reflector(a, i):
    """The i-th Householder vector of a geqrf result: column i, 1 at row i, zeros above."""
    m = a.shape[-2]
    rows = jnp.arange(m)
    column = a[..., :, i]
    return jnp.where(rows < i, 0, jnp.where(rows == i, 1, column)).astype(a.dtype)


def _reflect(c, v, tau, left):
    """H c (left) or c H, H = I - tau v v^H."""
    if left:
        return c - tau[..., None, None] * v[..., :, None] * jnp.sum(jnp.conj(v)[..., :, None] * c, axis=-2,
                                                                    keepdims=True)
    return c - tau[..., None, None] * jnp.sum(c * v[..., None, :], axis=-1, keepdims=True) * jnp.conj(v)[..., None, :]


def _householder_product(a, tau):
    """H_1 ... H_k applied to the first n columns of the identity (LAPACK's orgqr)."""
    m, n = a.shape[-2:]
    batch = jnp.broadcast_shapes(a.shape[:-2], tau.shape[:-1])
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), batch + (m, n))
    for i in reversed(range(tau.shape[-1])):
        q = _reflect(q, _reflector(a, i), tau[..., i], True)
    return q


def _ormqr(a, tau, c, left, transpose):
    """Q C, C Q, Q^H C or C Q^H, Q = H_1 ... H_k (LAPACK's ormqr)."""
    k = tau.shape[-1]
    # Q C = H_1 (... (H_k C)), Q^H C = H_k^H (... (H_1^H C)); C Q = ((C H_1) ...) H_k
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        t = jnp.conj(tau[..., i]) if transpose else tau[..., i]
        c = _reflect(c, _reflector(a, i), t, left)
    return c


eig = defop("eig", _eig, dtype_rule=KEEP, nout=2, node="linalg_eig", saves_output=True, saves_inputs=())
eigvals = defop("eigvals", lambda a: _eig(a)[0], dtype_rule=KEEP, node="linalg_eig", saves_output=True,
                saves_inputs=())
lstsq = defop("lstsq", _lstsq, dtype_rule=KEEP, diff=(0, 1), nout=2, node="linalg_lstsq", saves_output=(0,),
              saves_inputs=(0, 1))
householder_product = defop("householder_product", _householder_product, dtype_rule=KEEP, saves_output=True,
                            node="linalg_householder_product")
ormqr = defop("ormqr", _ormqr, dtype_rule=KEEP, saves_output=True)
geqrf = defop("geqrf", lambda a: tuple(_geqrf(a)), dtype_rule=KEEP, nout=2,
              no_derivative=lambda **_: (NotImplementedError, "the derivative for 'geqrf' is not implemented."))

# LAPACK writes matrices column by column, and PyTorch hands those results on as they are
eig.result_order = lambda static, shapes: (None, column_major(shapes[1]))
lstsq.result_order = lambda static, shapes: (column_major(shapes[0]), None)
geqrf.result_order = lambda static, shapes: (column_major(shapes[0]), None)
householder_product.result_order = ormqr.result_order = lambda static, shapes: (column_major(shapes[0]),)
