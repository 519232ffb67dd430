"""Wishart(df, covariance_matrix= or precision_matrix= or scale_tril=): distributions over positive-definite
matrices, sampled by the Bartlett decomposition."""
import math
import numbers

from . import constraints
from .chi2 import Chi2
from .distribution import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _tg, finfo, lazy_property
from .._user_frames import warn_user

__all__ = ["Wishart"]

_log_2 = math.log(2)


def _mvdigamma(x, p):
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    tg = _tg()
    return tg.digamma(x.unsqueeze(-1) - tg.arange(p, dtype=x.dtype, device=x.device).div(2).expand(
        tuple(x.shape) + (-1,))).sum(-1)


def _bartlett_chi2(df, scale_tril, p, batch_shape):
    """The squared diagonal of the Bartlett factor: chi2 with df - i degrees of freedom in row i."""
    offsets = _tg().arange(p, dtype=scale_tril.dtype, device=scale_tril.device)
    return Chi2(df=df.unsqueeze(-1) - offsets.expand(tuple(batch_shape) + (-1,)))


def _clamp_above_eps(x):
    # the input is positive
    return x.clamp(min=float(finfo(x.dtype).eps))


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        tg = _tg()
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            # (PyTorch raises AssertionError here)
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tg.Size(param.shape[:-2])
            self.df = tg.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = tg.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if bool(self.df.le(event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {event_shape[-1] - 1}.")
        name = "scale_tril" if scale_tril is not None else (
            "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if bool(self.df.lt(event_shape[-1]).any()):
            warn_user("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df "
                      "< ndim.")
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = tg.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        L = self._unbroadcasted_scale_tril
        self._dist_chi2 = _bartlett_chi2(self.df, L, self._event_shape[-1], batch_shape)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = _tg().Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._dist_chi2 = _bartlett_chi2(new.df, new._unbroadcasted_scale_tril, self.event_shape[-1], batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = _tg().eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return _tg().cholesky_solve(identity, L).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = _tg().where(factor <= 0, math.nan, factor)
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_V = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (V.pow(2) + _tg().einsum("...i,...j->...ij", diag_V, diag_V))

    def _bartlett_sampling(self, sample_shape=()):
        tg = _tg()
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(dim1=-2, dim2=-1)
        i, j = tg.tril_indices(p, p, offset=-1)
        noise[..., i, j] = tg.randn(tuple(sample_shape) + tuple(self._batch_shape) + (int(p * (p - 1) / 2),),
                                    dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws, redrawn where flagged, as PyTorch's.

        PyTorch's first flag is support.check (True where a draw IS positive definite), not its negation, so
        every valid draw is flagged "singular", redrawn once (with its warning) and the second draw kept; later
        checks are negated. That is followed here, so seeded draws are PyTorch's.
        """
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = _tg().Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        is_singular = self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if bool(is_singular.any()):
            warn_user("Singular sample detected.")
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not bool(is_singular.any()):
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        tg = _tg()
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - tg.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * tg.linalg.slogdet(value).logabsdet
                - tg.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _log_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + _tg().mvlgamma(nu / 2, p=p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        tg = _tg()
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-tg.linalg.slogdet(-2 * x).logabsdet + _log_2 * p)
                + tg.mvlgamma(y + (p + 1) / 2, p=p))
