"""tapegrad.distributions: PyTorch's torch.distributions over tapegrad's tensor ops.

Everything is written with public tensor ops, so gradients of log_prob, entropy, KL and rsample come
from the ordinary autograd; samples draw from tapegrad's RNG (tapegrad.manual_seed makes them
reproducible, though the streams differ from PyTorch's).
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .distribution import Distribution, ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Distribution", "ExponentialFamily", "Exponential", "Gamma",
           "Independent", "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical", "Poisson", "Uniform",
           "constraints", "kl_divergence", "register_kl"]
