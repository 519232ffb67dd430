"""ContinuousBernoulli(probs=... or logits=...): the density on [0, 1] proportional to p^x (1 - p)^(1 - x).

Near p = 1/2 (inside `lims`) its closed forms lose precision, so there PyTorch's Taylor expansions are used.
"""
import math
import numbers

from . import constraints
from .distribution import ExponentialFamily
from .utils import _tg, broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            # (checked before clamping, which would hide values outside [0, 1])
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        given = "probs" if "probs" in self.__dict__ else "logits"
        param = getattr(self, given).expand(shape)
        return self._expanded(ContinuousBernoulli, shape, _instance, _lims=self._lims,
                              **{given: param, "_param": param})

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        return _tg().where(self._outside_unstable_region(), self.probs, self._lims[0] * _tg().ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalising constant as a function of probs."""
        tg = _tg()
        cut_probs = self._cut_probs()
        cut_probs_below_half = tg.where(cut_probs <= 0.5, cut_probs, tg.zeros_like(cut_probs))
        cut_probs_above_half = tg.where(cut_probs >= 0.5, cut_probs, tg.ones_like(cut_probs))
        log_norm = ((-cut_probs).log1p() - cut_probs.log()).abs().log() - tg.where(
            cut_probs <= 0.5, (-2.0 * cut_probs_below_half).log1p(), (2.0 * cut_probs_above_half - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tg.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / ((-cut_probs).log1p() - cut_probs.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return _tg().where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / (1.0 - 2.0 * cut_probs).pow(2)
                     + 1.0 / ((-cut_probs).log1p() - cut_probs.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _tg().where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=()):
        u = _tg().rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with _tg().no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()):
        u = _tg().rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = _tg().nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        tg = _tg()
        cut_probs = self._cut_probs()
        cdfs = (cut_probs.pow(value) * (1.0 - cut_probs).pow(1.0 - value) + cut_probs - 1.0) / (2.0 * cut_probs - 1.0)
        unbounded_cdfs = tg.where(self._outside_unstable_region(), cdfs, value)
        return tg.where(value <= 0.0, tg.zeros_like(value),
                        tg.where(value >= 1.0, tg.ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return _tg().where(self._outside_unstable_region(),
                           ((-cut_probs + value * (2.0 * cut_probs - 1.0)).log1p() - (-cut_probs).log1p())
                           / (cut_probs.log() - (-cut_probs).log1p()),
                           value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalising constant as a function of the natural parameter."""
        tg = _tg()
        out_unst_reg = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut_nat_params = tg.where(out_unst_reg, x, (self._lims[0] - 0.5) * tg.ones_like(x))
        log_norm = cut_nat_params.expm1().abs().log() - cut_nat_params.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return tg.where(out_unst_reg, log_norm, taylor)
