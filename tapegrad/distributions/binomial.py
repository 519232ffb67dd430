"""Binomial(total_count, probs=... or logits=...): successes in total_count Bernoulli trials."""
from . import constraints
from .distribution import Distribution
from .utils import BinaryParameter, _tg, broadcast_all


def _clamp_by_zero(x):
    # max(x, 0), with gradient 1/2 at x = 0 (PyTorch's choice, so gradients match there too)
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _take_count_and_param(dist, total_count, probs, logits):
    """Sets total_count (of the parameter's dtype) and the one of probs or logits given, broadcast together;
    returns the parameter (Binomial and NegativeBinomial share this)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    total_count, param = broadcast_all(total_count, given)
    dist.total_count = total_count.type_as(param)
    setattr(dist, name, param)
    dist._param = param
    return param


def _expand_count_and_param(dist, new, batch_shape):
    new.total_count = dist.total_count.expand(batch_shape)
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(batch_shape))
            new._param = getattr(new, name)


class Binomial(BinaryParameter, Distribution):   # (probs from logits, or logits from probs)
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        param = _take_count_and_param(self, total_count, probs, logits)
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = _tg().Size(batch_shape)
        _expand_count_and_param(self, new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with _tg().no_grad():
            return _tg().binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = (self.total_count + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (self.total_count - value + 1).lgamma()
        # n * log(1 + exp(logits)), kept from overflowing
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p() - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = self._homogeneous_count("enumerate_support")
        values = _tg().arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    def _homogeneous_count(self, method):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{method}`.")
        return total_count
