"""PyTorch's torch.nn.utils.parametrizations (orthogonal, spectral_norm, weight_norm), built on parametrize."""
from enum import Enum, auto

import numpy as np

from ... import _creation as C, linalg
from ..._functional import add, allclose, cat, matrix_exp, mv, vdot
from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ..._type_info import finfo
from ...random import randn
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- orthogonal ------------------------------------------------------------------------------------------------

def _householder_product(A, tau):
    """PyTorch's linalg.householder_product: the first n columns of H_1 ... H_k, written in differentiable ops
    (H_i = I - tau_i v_i v_i^H, v_i the i-th column of A below the diagonal with a 1 on it)."""
    m, n = A.shape[-2], A.shape[-1]
    rows = C.arange(m)
    Q = C.eye(m, dtype=A.dtype).expand(*A.shape[:-2], m, m)
    for i in range(tau.shape[-1]):
        v = A[..., :, i] * (rows > i).to(A.dtype) + (rows == i).to(A.dtype)
        Qv = (Q @ v.unsqueeze(-1))
        Q = Q - tau[..., i, None, None] * Qv * v.conj().unsqueeze(-2)
    return Q[..., :, :n]


def _geqrf(a):
    """LAPACK's geqrf on a NumPy matrix: R above the diagonal, the reflectors' vectors below, and tau."""
    a = np.array(a, dtype=np.result_type(a, np.float64) if a.dtype.kind != "c" else a.dtype)
    m, n = a.shape
    tau = np.zeros(min(m, n), a.dtype)
    for i in range(min(m, n)):
        x = a[i:, i]
        alpha, rest = x[0], np.linalg.norm(x[1:])
        if rest == 0 and np.imag(alpha) == 0:
            continue
        beta = -np.copysign(np.hypot(abs(alpha), rest), np.real(alpha))
        tau[i] = (beta - alpha) / beta
        v = x / (alpha - beta)
        v[0] = 1
        a[i:, i + 1:] -= tau[i].conj() * np.outer(v, v.conj() @ a[i:, i + 1:])
        a[i + 1:, i] = v[1:]
        a[i, i] = beta
    return a, tau


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = C.eye(k, dtype=Q.dtype)
    eps = 10.0 * n * finfo(Q.dtype).eps
    return allclose(Q.mH @ Q, eye, atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR with diag(R) real and non-negative (A tall)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                eye = C.eye(n, dtype=A.dtype)
                Q = linalg.solve(add(eye, A, alpha=-0.5), add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            rows = []
            for q in Q.detach().reshape(-1, n, k).numpy():
                a, tau = _geqrf(q)
                d = np.sign(np.diagonal(a))
                d[tau == 0.0] *= -1
                np.fill_diagonal(a, d)
                rows.append(a)
            A = C.tensor(np.stack(rows).reshape(Q.shape), dtype=Q.dtype)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_id = C.zeros_like(Q_init)
        neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize `name` as an orthogonal matrix (or batch of them), as PyTorch's."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) or weight.is_complex() \
            else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---- spectral_norm ---------------------------------------------------------------------------------------------

class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        # u and v are updated in place (PyTorch's out=), so their values are kept as buffers
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = vdot(u, mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def _default_dim(module):
    from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
    return 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide `name` by its largest singular value, estimated by power iteration (u, v kept as buffers)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = _default_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---- weight_norm -----------------------------------------------------------------------------------------------

def _norm_except_dim(v, dim):
    if dim == -1:
        return v.pow(2).sum().sqrt()
    return v.pow(2).sum([d for d in range(v.ndim) if d != dim], keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize `name` as magnitude (original0) times direction (original1), as PyTorch's."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
