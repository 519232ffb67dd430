"""Beta(concentration1, concentration0)."""
import numbers

from . import constraints
from .distribution import ExponentialFamily
from .utils import _tg, broadcast_all, finfo


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number):
            both = _tg().tensor([float(concentration1), float(concentration0)])
        else:
            both = _tg().stack(broadcast_all(concentration1, concentration0), -1)
        # Kept stacked as PyTorch's Beta (a two-category Dirichlet) keeps them.
        self._concentration = both
        super().__init__(both.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        return self._expanded(Beta, shape, _instance, _concentration=self._concentration.expand(shape + (2,)))

    @property
    def concentration1(self):
        return self._concentration[..., 0]

    @property
    def concentration0(self):
        return self._concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        # The two-category Dirichlet's mode: (a - 1) / (a + b - 2), or a vertex when both are below 1
        tg = _tg()
        less_one = (self._concentration - 1).clamp(min=0.0)
        mode = less_one / less_one.sum(-1, True)
        vertex = tg.nn.functional.one_hot(less_one.argmax(dim=-1), 2).to(mode)
        mode = tg.where((self._concentration < 1).all(dim=-1, keepdim=True), vertex, mode)
        return mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        # X / (X + Y) for X ~ Gamma(a), Y ~ Gamma(b): a Beta(a, b) draw, differentiable through both. The
        # gammas are drawn in double precision, as PyTorch's Dirichlet sampler draws them (its numbers).
        shape = self._extended_shape(sample_shape) + (2,)
        gammas = _tg()._standard_gamma(self._concentration.expand(shape).double())
        x = (gammas.select(-1, 0) / gammas.sum(-1)).to(self._concentration.dtype)
        tiny = float(finfo(x.dtype).tiny)
        eps = float(finfo(x.dtype).eps) / 2   # the largest value below 1 is 1 - eps / 2
        return x + (x.detach().clamp(min=tiny, max=1 - eps) - x.detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = _tg().stack([value, 1.0 - value], -1)
        c = self._concentration
        return ((c - 1.0).xlogy(heads_tails).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1))

    def entropy(self):
        c = self._concentration
        total = c.sum(-1)
        return (c.lgamma().sum(-1) - total.lgamma() - (2 - total) * total.digamma()
                - ((c - 1.0) * c.digamma()).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
