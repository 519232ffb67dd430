"""Helpers shared by the distributions (PyTorch's torch.distributions.utils)."""
import numbers
from functools import update_wrapper

import numpy as np

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler Mascheroni Constant


def _tg():
    import tapegrad
    return tapegrad


def broadcast_all(*values):
    """Broadcasts tensors and numbers together; numbers take the first tensor's dtype (else the default)."""
    tg = _tg()
    if not all(isinstance(v, (tg.Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    tensors = [v for v in values if isinstance(v, tg.Tensor)]
    options = dict(dtype=tensors[0].dtype, device=tensors[0].device) if tensors else dict(
        dtype=tg.get_default_dtype())
    values = [v if isinstance(v, tg.Tensor) else tg.tensor(v, **options) for v in values]
    return tg.broadcast_tensors(*values)


def finfo(dtype):
    """NumPy's finfo of a tapegrad float dtype (eps, tiny, min)."""
    return np.finfo(dtype.np)


def _standard_normal(shape, dtype, device):
    # A recorded fill (as PyTorch's empty().normal_()), so a step that samples stays one program.
    return _tg().empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dims of `value`."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return logits.sigmoid()
    return logits.softmax(-1)


def clamp_probs(probs):
    """Clamps probabilities into [eps, 1 - eps] for the dtype's eps."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return ps_clamped.log() - (-ps_clamped).log1p()
    return ps_clamped.log()


def _tril_mask(n, diag, device):
    arange = _tg().arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries on and below diagonal `diag` of each D x D matrix, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """D x D matrices holding the vectors on and below diagonal `diag` (row order), zeros elsewhere."""
    # the positive root of D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len(vec) = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float(finfo(vec.dtype).eps):
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


class lazy_property:
    """Computes the wrapped method on first access, then stores the value on the instance."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with _tg().enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class BinaryParameter:
    """What the families of one success probability share (Bernoulli, Geometric, Binomial, ...): given `probs`
    or `logits` (exactly one), the other computed on first use."""

    def _take_probs_or_logits(self, probs, logits):
        """Sets the one given; returns it (broadcast to a tensor) and the batch shape it makes."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        setattr(self, "probs" if probs is not None else "logits", param)
        return param, (() if isinstance(given, numbers.Number) else param.size())

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)
