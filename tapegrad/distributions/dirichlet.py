"""Dirichlet(concentration): distributions over the simplex."""
from . import constraints
from .distribution import ExponentialFamily
from .utils import _tg, finfo


class Dirichlet(ExponentialFamily):
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        concentration = self.concentration.expand(shape + self.event_shape)
        return self._expanded(Dirichlet, shape, _instance, concentration=concentration)

    def rsample(self, sample_shape=()):
        # Normalised gamma draws, as PyTorch's _sample_dirichlet: drawn in double precision from the
        # concentration cast to double (its numbers), divided, cast back and kept inside (0, 1). The gradient is
        # the gamma draws' implicit one through the division (unbiased; PyTorch's is its own approximation of
        # d x / d concentration: equal in expectation, not draw by draw).
        shape = self._extended_shape(sample_shape)
        gammas = _tg()._standard_gamma(self.concentration.expand(shape).double())
        x = (gammas / gammas.sum(-1, True)).to(self.concentration.dtype)
        tiny = float(finfo(x.dtype).tiny)
        eps = float(finfo(x.dtype).eps) / 2   # the largest value below 1 is 1 - eps / 2
        return x + (x.detach().clamp(min=tiny, max=1 - eps) - x.detach())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (c - 1.0).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        # (a - 1) / (sum(a) - K), or where every a is below 1 the first vertex (PyTorch's argmax of that row's NaN)
        tg = _tg()
        concentrationm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concentrationm1 / concentrationm1.sum(-1, True)
        vertex = tg.nn.functional.one_hot(concentrationm1.argmax(dim=-1), concentrationm1.shape[-1]).to(mode)
        return tg.where((self.concentration < 1).all(dim=-1, keepdim=True), vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return c.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((c - 1.0) * c.digamma()).sum(-1)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
