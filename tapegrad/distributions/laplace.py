"""Laplace(loc, scale)."""

from . import constraints
from .distribution import Distribution, LocationScale
from .utils import _tg, finfo


class Laplace(LocationScale, Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=()):
        # u in (-1, 1): the inverse cdf, with u kept off -1 so log1p(-|u|) stays finite
        shape = self._extended_shape(sample_shape)
        u = _tg().empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(
            float(finfo(self.loc.dtype).eps) - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
