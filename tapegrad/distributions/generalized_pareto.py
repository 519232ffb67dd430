"""GeneralizedPareto(loc, scale, concentration): the tail model (Exponential at concentration 0, Pareto above it,
bounded below it), sampled by inverting its cdf."""
import math
import numbers

from . import constraints
from .distribution import Distribution
from .utils import _tg, broadcast_all


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalars = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        return self._expanded(GeneralizedPareto, shape, _instance, loc=self.loc.expand(shape),
                              scale=self.scale.expand(shape), concentration=self.concentration.expand(shape))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _tg().rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        """(where concentration is 0, the mask of those and the concentration with 1 there, to divide by).

        PyTorch compares with a float32 zero, so a float64 concentration raises there as in PyTorch."""
        tg = _tg()
        eq_zero = tg.isclose(self.concentration, tg.tensor(0.0))
        return eq_zero, tg.where(eq_zero, tg.ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        tg = _tg()
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + tg.ones_like(z)
        where_nonzero = tg.where(y == 0, y, y * (safe_conc * z).log1p())
        return -self.scale.log() - tg.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -(safe_conc * z).log1p() / safe_conc
        return _tg().where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        tg = _tg()
        concentration = self.concentration
        eq_zero = tg.isclose(concentration, tg.zeros_like(concentration))
        safe_conc = tg.where(eq_zero, tg.ones_like(concentration), concentration)
        logu = (-value).log1p()
        where_nonzero = self.loc + self.scale / safe_conc * (-safe_conc * logu).expm1()
        where_zero = self.loc - self.scale * logu
        return tg.where(eq_zero, where_zero, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = _tg().where(valid, self.concentration, 0.5)
        return _tg().where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = _tg().where(valid, self.concentration, 0.25)
        result = self.scale ** 2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return _tg().where(valid, result, math.nan)

    def entropy(self):
        ans = self.scale.log() + self.concentration + 1
        return _tg().broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = _tg().where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
