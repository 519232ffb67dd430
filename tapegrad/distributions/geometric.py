"""Geometric(probs=... or logits=...): the number of failures before the first success."""
from . import constraints
from .distribution import Distribution
from .utils import BinaryParameter, _tg, broadcast_all, finfo


class Geometric(BinaryParameter, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _, batch_shape = self._take_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            value = self.probs
            raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of "
                             f"distribution {self!r} to be positive but found invalid values:\n"
                             f"{value.detach()[~(value > 0)]}")

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        given = "probs" if "probs" in self.__dict__ else "logits"
        return self._expanded(Geometric, shape, _instance, **{given: getattr(self, given).expand(shape)})

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return _tg().zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        tg = _tg()
        with tg.no_grad():
            u = tg.empty(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
            u = u.uniform_(float(finfo(self.probs.dtype).tiny), 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        bce = _tg().nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
        return bce / self.probs
