"""tapegrad.distributions: PyTorch's torch.distributions over tapegrad's tensor ops.

Everything is written with public tensor ops, so gradients of log_prob, entropy, KL and rsample come
from the ordinary autograd; samples draw from tapegrad's CPU generator, PyTorch's: after manual_seed they
are PyTorch's values (README, "Differences from PyTorch worth knowing"). Of PyTorch's distributions, those
imported below are here (with the elementwise transforms and TransformedDistribution); Dirichlet, Binomial,
Multinomial, the relaxed and mixture families and the matrix transforms are not yet.
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .distribution import Distribution, ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, ComposeTransform, ExpTransform, PowerTransform,
                         SigmoidTransform, SoftplusTransform, TanhTransform, Transform, identity_transform)
from .uniform import Uniform

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Categorical", "Cauchy", "Chi2", "ComposeTransform",
           "Distribution", "ExpTransform", "ExponentialFamily", "Exponential", "Gamma", "Geometric", "Gumbel",
           "HalfNormal", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical",
           "Poisson", "PowerTransform", "SigmoidTransform", "SoftplusTransform", "StudentT", "TanhTransform",
           "Transform", "TransformedDistribution", "Uniform", "constraints", "identity_transform", "kl_divergence",
           "register_kl", "transforms"]
