"""Gamma(concentration, rate)."""
import numbers

from . import constraints
from .distribution import ExponentialFamily
from .utils import _tg, broadcast_all, finfo


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalars = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalars else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        return self._expanded(Gamma, shape, _instance, concentration=self.concentration.expand(shape),
                              rate=self.rate.expand(shape))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        # Gradients to the concentration are the implicit reparameterisation ones of _standard_gamma.
        shape = self._extended_shape(sample_shape)
        value = _tg()._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _clamp_above_zero(value)

    def log_prob(self, value):
        value = _tg().as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value)
                - self.rate * value - self.concentration.lgamma())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _tg().special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        return (self.concentration - self.rate.log() + self.concentration.lgamma()
                + (1.0 - self.concentration) * self.concentration.digamma())


    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()


def _clamp_above_zero(value):
    # A draw that underflows to 0 becomes the smallest positive float; the gradient passes unchanged.
    tiny = float(finfo(value.dtype).tiny)
    return value + (value.detach().clamp(min=tiny) - value.detach())
