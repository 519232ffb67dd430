"""The base class of every distribution (PyTorch's torch.distributions.Distribution)."""
import numbers

from . import constraints
from .utils import _tg, broadcast_all, lazy_property
from .._user_frames import warn_user

__all__ = ["Distribution", "ExponentialFamily", "LocationScale"]


class Distribution:
    """A probability distribution over tensors of shape batch_shape + event_shape.

    With validation on (the default, as PyTorch's: off under `python -O`), parameters are checked against
    `arg_constraints` when constructed and values against `support` when scored, raising ValueError.
    """
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        Size = _tg().Size
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()
        super().__init__()

    def _check_parameters(self):
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
            warn_user(f"{self.__class__} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                      "or initialize the distribution with `validate_args=False` to turn off validation.")
        for param, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue  # cannot be checked
            if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                continue  # not given: computed lazily from the parameter that was
            value = getattr(self, param)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                                 f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape sample_shape + batch_shape + event_shape, cut from the graph."""
        with _tg().no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised sample: gradients flow to the parameters."""
        raise NotImplementedError

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        Size = _tg().Size
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value):
        """PyTorch's checks of a value to score: a tensor, shapes that broadcast, inside the support."""
        if not isinstance(value, _tg().Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warn_user(f"{self.__class__} does not define `support` to enable sample validation. Please "
                      "initialize the distribution with `validate_args=False` to turn off validation.")
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, cls, batch_shape, _instance, **params):
        """The shared body of `expand`: a new instance with the given (already expanded) attributes."""
        new = self._get_checked_instance(cls, _instance)
        for name, value in params.items():
            setattr(new, name, value)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in names)
        return self.__class__.__name__ + "(" + args + ")"


class ExponentialFamily(Distribution):
    """The exponential families (PyTorch's ExponentialFamily): p(x) = exp(<t(x), theta> - F(theta) + k(x)).

    Each family here computes its entropy directly; the natural parameters theta, the log normaliser F and the
    mean carrier measure E[k(x)] serve the Bregman-divergence entropy below and KL(p || q) between two members
    of one family with no closed form registered (kl.py).
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)], the gradient taken by autograd (as PyTorch's)."""
        tg = _tg()
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = tg.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for np_, g in zip(nparams, gradients):
            result -= (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result


class LocationScale:
    """What the families parametrised by loc and scale share (Normal, Laplace): construction from
    broadcast parameters, expand, and loc as mean and mode."""

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        scalars = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalars else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        return self._expanded(type(self), shape, _instance, loc=self.loc.expand(shape), scale=self.scale.expand(shape))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
