"""tapegrad.distributions' Binomial, Multinomial, NegativeBinomial, Pareto, Weibull, HalfCauchy, InverseGamma,
FisherSnedecor, Kumaraswamy, ContinuousBernoulli, GeneralizedPareto and VonMises against torch.distributions.

Scores (log_prob, entropy, cdf/icdf, mean, mode, variance, KL) and their gradients are compared with PyTorch in
float64; after manual_seed, samples are PyTorch's values (the samplers draw from PyTorch's CPU generator).
"""
import math

import numpy as np
import pytest

import tapegrad
import tapegrad.distributions as TD

from conftest import fold_repr, require
from distribution_checks import flat as _flat, run as _run, same_as_torch as _same_as_torch, v as _v  # noqa: F401

torch = require("torch")
PD = torch.distributions


def _scored(d, v, extra=0.0):
    """log_prob plus whichever of entropy, cdf and icdf (at 0.3) the distribution has: one sum to compare."""
    total = d.log_prob(v) + extra
    for score in (lambda: d.entropy(), lambda: d.cdf(v), lambda: d.icdf(v * 0 + 0.3)):
        try:
            total = total + score()
        except NotImplementedError:
            pass
    return total


# (name, fn(lib, D, *params) -> one tensor summing the scores, params)
SCORES = [
    ("binomial-probs", lambda lib, D, n, p: (lambda d: _scored(d, _v(lib, [0.0, 3.0, 5.0]), d.mean + d.variance
                                                               + d.mode + d.logits))(D.Binomial(n, p)),
     ([5.0, 5.0, 5.0], [0.2, 0.6, 0.9])),
    ("binomial-logits", lambda lib, D, n, z: (lambda d: d.log_prob(_v(lib, [[0.0, 3.0, 2.0], [1.0, 1.0, 4.0]]))
                                              + d.mean + d.variance + d.probs)(D.Binomial(n, logits=z)),
     ([4.0, 7.0, 5.0], [0.2, -1.5, 3.0])),
    ("binomial-number-count", lambda lib, D, z: D.Binomial(6, logits=z).entropy(), ([0.2, -1.5, 30.0],)),
    ("multinomial-probs", lambda lib, D, p: (lambda d: d.log_prob(_v(lib, [[2.0, 3.0, 5.0], [0.0, 0.0, 10.0]]))
                                             + d.entropy() + (d.mean * d.variance).sum(-1))(D.Multinomial(10, p)),
     ([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]],)),
    ("multinomial-logits", lambda lib, D, z: (lambda d: d.log_prob(_v(lib, [1.0, 0.0, 3.0])) + d.entropy()
                                              + d.probs.sum(-1))(D.Multinomial(4, logits=z)),
     ([[0.2, 0.5, 0.9], [1.0, -2.0, 3.0]],)),
    ("negative-binomial-probs", lambda lib, D, n, p: (lambda d: d.log_prob(_v(lib, [0.0, 3.0, 7.0])) + d.mean
                                                      + d.variance + d.mode + d.logits)(D.NegativeBinomial(n, p)),
     ([0.5, 3.0, 5.0], [0.2, 0.6, 0.9])),
    ("negative-binomial-logits", lambda lib, D, n, z: (lambda d: d.log_prob(_v(lib, [0.0, 3.0, 7.0])) + d.mean
                                                       + d.variance + d.probs)(D.NegativeBinomial(n, logits=z)),
     ([0.5, 3.0, 5.0], [0.2, -1.5, 2.0])),
    ("pareto", lambda lib, D, s, a: (lambda d: _scored(d, _v(lib, [1.5, 2.5, 4.0]), d.mean + d.variance + d.mode))(
        D.Pareto(s, a)), ([1.0, 2.0, 0.5], [2.5, 3.0, 4.5])),
    ("weibull", lambda lib, D, s, k: (lambda d: _scored(d, _v(lib, [0.3, 1.2, 2.0]), d.mean + d.variance + d.mode
                                                        + d.stddev))(D.Weibull(s, k)),
     ([1.0, 2.0, 0.5], [1.5, 3.0, 4.5])),
    ("half-cauchy", lambda lib, D, s: (lambda d: _scored(d, _v(lib, [0.3, 1.2, 2.0]), d.mode))(D.HalfCauchy(s)),
     ([1.0, 2.0, 0.5],)),
    # (cdf with the concentration held constant: neither library differentiates gammainc in it)
    ("inverse-gamma", lambda lib, D, a, b: (lambda d, v: d.log_prob(v) + d.entropy() + d.mean + d.mode + d.variance
                                            + D.InverseGamma(a.detach(), b).cdf(v))(D.InverseGamma(a, b),
                                                                                    _v(lib, [0.3, 1.2, 2.0])),
     ([2.5, 3.0, 4.5], [1.0, 2.0, 0.5])),
    ("fisher-snedecor", lambda lib, D, a, b: (lambda d: d.log_prob(_v(lib, [0.3, 1.2, 2.0])) + d.mean + d.mode
                                              + d.variance)(D.FisherSnedecor(a, b)),
     ([2.5, 3.0, 14.5], [5.0, 6.0, 4.5])),
    ("kumaraswamy", lambda lib, D, a, b: (lambda d: _scored(d, _v(lib, [0.2, 0.5, 0.9]), d.mean + d.variance))(
        D.Kumaraswamy(a, b)), ([0.7, 2.0, 3.0], [0.5, 2.0, 1.5])),
    # 0.5 and 0.5005 lie inside the unstable region, where the Taylor expansions are used
    ("continuous-bernoulli-probs", lambda lib, D, p: (lambda d: _scored(d, _v(lib, [0.2, 0.5, 0.9, 0.0]), d.mean
                                                                        + d.variance + d.stddev + d.logits))(
        D.ContinuousBernoulli(p)), ([0.2, 0.5, 0.5005, 0.9],)),
    ("continuous-bernoulli-logits", lambda lib, D, z: (lambda d: _scored(d, _v(lib, [0.2, 0.5, 1.0]), d.mean
                                                                         + d.variance + d.probs))(
        D.ContinuousBernoulli(logits=z)), ([0.2, -1.5, 3.0],)),
    # (float64: its log_prob and cdf compare with a float32 zero and raise, as PyTorch's; float32 below)
    ("generalized-pareto", lambda lib, D, m, s, k: (lambda d: d.icdf(_v(lib, [0.3, 0.6, 0.9])) + d.mean
                                                    + d.variance + d.entropy() + d.mode)(D.GeneralizedPareto(m, s, k)),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5], [0.2, 0.0, -0.4])),
    ("von-mises", lambda lib, D, m, k: (lambda d: d.log_prob(_v(lib, [0.3, -1.2, 5.0])) + d.mean + d.mode
                                        + d.variance)(D.VonMises(m, k)),
     ([0.1, 0.2, -0.3], [0.5, 3.0, 7.5])),
]


@pytest.mark.parametrize("name,fn,params", SCORES, ids=[s[0] for s in SCORES])
def test_scores_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


def test_generalized_pareto_float32_scores_match_pytorch_and_float64_raises_as_pytorchs():
    _same_as_torch(lambda lib, D, m, s, k: (lambda d, v: d.log_prob(v) + d.cdf(v) + d.log_survival_function(v))(
        D.GeneralizedPareto(m, s, k), lib.tensor([0.5, 1.2, 0.4])),
        [0.1, 0.2, -0.3], [1.0, 2.0, 0.5], [0.2, 0.0, -0.4], rtol=1e-5, dtype=np.float32)
    for lib, D in ((tapegrad, TD), (torch, PD)):
        d = D.GeneralizedPareto(_v(lib, [0.1]), _v(lib, [1.0]), _v(lib, [0.2]))
        with pytest.raises(RuntimeError, match="did not match"):
            d.log_prob(_v(lib, [0.5]))


KL_PAIRS = [
    # the second elements of q's count are below p's: infinite there
    ("binomial", lambda lib, D, a, b: D.kl_divergence(D.Binomial(_v(lib, [5.0, 5.0, 6.0]), a),
                                                      D.Binomial(_v(lib, [5.0, 5.0, 3.0]), logits=b)),
     ([0.1, 0.4, 0.8], [0.3, -0.2, 2.5])),
    ("continuous-bernoulli", lambda lib, D, a, b: (
        D.kl_divergence(D.ContinuousBernoulli(a), D.ContinuousBernoulli(logits=b))
        + D.kl_divergence(D.Beta(b.exp(), a + 1), D.ContinuousBernoulli(a))
        + D.kl_divergence(D.ContinuousBernoulli(a), D.Exponential(b.exp()))
        + D.kl_divergence(D.ContinuousBernoulli(logits=b), D.Normal(a, b.exp()))
        + D.kl_divergence(D.ContinuousBernoulli(a), D.Uniform(a - 1, b.exp() + 1))
        + D.kl_divergence(D.Uniform(a * 0.5, a + 0.1), D.ContinuousBernoulli(logits=b))),
     ([0.1, 0.5, 0.8], [0.3, -0.2, 2.5])),
    # PyTorch's bounds tests make these infinite: q's interval reaches [0, 1]'s end, p's reaches 0
    ("continuous-bernoulli-uniform-bounds", lambda lib, D, a, b: (
        D.kl_divergence(D.ContinuousBernoulli(a), D.Uniform(a - 1, b * 0 + 1))
        + D.kl_divergence(D.Uniform(a * 0, a + 0.1), D.ContinuousBernoulli(logits=b))),
     ([0.1, 0.5, 0.8], [0.3, -0.2, 2.5])),
    ("pareto", lambda lib, D, s, a: (
        D.kl_divergence(D.Pareto(s, a), D.Pareto(s * 0.5 + 0.2, a + 1))
        + D.kl_divergence(D.Pareto(s, a), D.Exponential(a))
        + D.kl_divergence(D.Pareto(s, a), D.Gamma(a, s))
        + D.kl_divergence(D.Pareto(s, a), D.Normal(s, a))
        + D.kl_divergence(D.Uniform(s + 0.5, s + 2), D.Pareto(s * 0.5, a))),
     ([1.0, 2.0, 0.5], [2.5, 3.0, 4.5])),
    # where alpha <= 1 or 2, or q's scale is above p's (or above p's low): infinite
    ("pareto-infinite-cases", lambda lib, D, s, a: (
        D.kl_divergence(D.Pareto(s, a), D.Pareto(s * 2, a + 1))
        + D.kl_divergence(D.Pareto(s, a), D.Exponential(a))
        + D.kl_divergence(D.Pareto(s, a), D.Gamma(a, s))
        + D.kl_divergence(D.Pareto(s, a), D.Normal(s, a))
        + D.kl_divergence(D.Uniform(s, s + 2), D.Pareto(s * 2, a))),
     ([1.0, 2.0, 0.5], [0.5, 1.0, 1.5])),
]


@pytest.mark.parametrize("name,fn,params", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergences_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


def _infinite_pairs(lib, D):
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    beta, cb, exp = D.Beta(t([1.0, 2.0]), t([2.0, 1.0])), D.ContinuousBernoulli(t([0.3, 0.6])), D.Exponential(t(2.0))
    gamma, gumbel, laplace = D.Gamma(t([1.0, 2.0]), t(1.0)), D.Gumbel(t([0.0, 1.0]), t(1.0)), D.Laplace(t(0.0), t(1.0))
    normal, pareto, poisson = D.Normal(t([0.0, 1.0]), t(1.0)), D.Pareto(t([1.0, 2.0]), t(3.0)), D.Poisson(t(2.0))
    uniform, binomial = D.Uniform(t(0.2), t(0.7)), D.Binomial(t(4.0), t([0.3, 0.6]))
    pairs = [(beta, pareto), (cb, pareto), (exp, cb), (exp, pareto), (gamma, cb), (gamma, pareto), (gumbel, cb),
             (gumbel, pareto), (laplace, cb), (laplace, pareto), (normal, cb), (normal, pareto), (pareto, beta),
             (pareto, cb), (pareto, uniform), (poisson, binomial)]
    return [(type(p).__name__, type(q).__name__, D.kl_divergence(p, q)) for p, q in pairs]


def test_kl_infinite_pairs_are_pytorchs():
    for (p, q, ours), (_, _, theirs) in zip(_infinite_pairs(tapegrad, TD), _infinite_pairs(torch, PD)):
        theirs = (theirs.tolist(), str(theirs.dtype)[6:], theirs.requires_grad)
        assert (ours.tolist(), ours.dtype.name, ours.requires_grad) == theirs, (p, q)


# ---- samples ----------------------------------------------------------------------------------------------

FAMILIES = {
    "binomial": lambda D, T: D.Binomial(T([5.0, 20.0, 100.0]), T([0.3, 0.6, 0.2])),
    "binomial-logits": lambda D, T: D.Binomial(12, logits=T([[0.3], [-2.0]])),
    "multinomial": lambda D, T: D.Multinomial(7, T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])),
    "negative-binomial": lambda D, T: D.NegativeBinomial(T([3.0, 0.7]), T([0.3, 0.6])),
    "pareto": lambda D, T: D.Pareto(T([1.0, 2.0]), T([3.0, 0.7])),
    "weibull": lambda D, T: D.Weibull(T([1.0, 2.0]), T([3.0, 0.7])),
    "half-cauchy": lambda D, T: D.HalfCauchy(T([1.0, 2.0])),
    "inverse-gamma": lambda D, T: D.InverseGamma(T([1.0, 2.0]), T([3.0, 0.7])),
    "fisher-snedecor": lambda D, T: D.FisherSnedecor(T([1.0, 5.0]), T([3.0, 0.7])),
    "kumaraswamy": lambda D, T: D.Kumaraswamy(T([1.0, 2.0]), T([3.0, 0.7])),
    "continuous-bernoulli": lambda D, T: D.ContinuousBernoulli(T([0.2, 0.5, 0.9])),
    "continuous-bernoulli-logits": lambda D, T: D.ContinuousBernoulli(logits=T([0.2, -3.0])),
    "generalized-pareto": lambda D, T: D.GeneralizedPareto(T([1.0, 2.0]), T([3.0, 0.7]), T([0.0, -0.2])),
    "von-mises": lambda D, T: D.VonMises(T([1.0, 2.0, -3.0]), T([3.0, 0.01, 40.0])),
}
# their rsample gradient is a gamma draw's implicit one, which both libraries approximate
GAMMA_DRAWS = {"inverse-gamma", "fisher-snedecor"}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_draws_and_rsample_gradients_are_pytorchs(name):
    """After manual_seed, sample and rsample (where there is one) return PyTorch's values, of its shapes
    and dtypes, and rsample's gradients are PyTorch's."""
    def run(lib, D):
        lib.manual_seed(3)
        params = []

        def T(values):
            params.append(lib.tensor(values, dtype=lib.float64, requires_grad=True))
            return params[-1]
        d = FAMILIES[name](D, T)
        sample = d.sample((4,))
        result = [sample.numpy(), tuple(sample.shape), str(sample.dtype).split(".")[-1], sample.requires_grad,
                  tuple(d.sample().shape), tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                  d.has_enumerate_support, d.support.is_discrete]
        grads = []
        if d.has_rsample:
            rsample = d.rsample((2,))
            rsample.sum().backward()
            result.append(rsample.detach().numpy())
            grads = [p.grad.numpy() for p in params]
        return result, grads
    (ours, our_grads), (theirs, their_grads) = run(tapegrad, TD), run(torch, PD)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert ours[1:10] == theirs[1:10]
    if len(theirs) > 10:   # (the rsample)
        np.testing.assert_allclose(ours[10], theirs[10], rtol=1e-12)
    for o, t in zip(our_grads, their_grads):
        np.testing.assert_allclose(o, t, rtol=1e-2 if name in GAMMA_DRAWS else 1e-10)


def test_float32_draws_are_pytorchs():
    # float32 parameters: the binomial sampler's float arithmetic, the von Mises double-precision sampler cast back
    def run(lib, D):
        lib.manual_seed(11)
        return [d.sample((3,)).tolist() for d in (
            D.Binomial(lib.tensor([10.0, 40.0]), lib.tensor([0.3, 0.8])),
            D.NegativeBinomial(lib.tensor([2.0, 5.0]), logits=lib.tensor([0.3, -0.8])),
            D.VonMises(lib.tensor([0.5, -1.0]), lib.tensor([2.0, 0.5])),
            D.Weibull(2.0, 1.5), D.ContinuousBernoulli(0.3))]
    assert run(tapegrad, TD) == run(torch, PD)


# ---- properties, validation, shapes ---------------------------------------------------------------------

def _properties_families(lib, D):
    # parameters where PyTorch's mean, mode or variance is NaN or infinite, beside finite ones
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    return [D.Binomial(t([3.0, 4.0, 10.0]), t([0.0, 0.5, 1.0])), D.Multinomial(3, t([0.2, 0.8])),
            D.NegativeBinomial(t([0.5, 1.0, 4.0]), t([0.0, 0.5, 0.9])),
            D.Pareto(t([1.0, 2.0, 3.0]), t([0.5, 1.5, 3.0])),
            D.Weibull(t([1.0, 2.0]), t([0.5, 3.0])), D.HalfCauchy(t([1.0, 2.0])),
            D.InverseGamma(t([0.5, 1.5, 3.0]), t([1.0, 2.0, 3.0])),
            D.FisherSnedecor(t([1.0, 3.0, 5.0]), t([2.0, 3.0, 5.0])),
            D.Kumaraswamy(t([0.5, 2.0, 1.0]), t([2.0, 0.5, 1.0])),
            D.ContinuousBernoulli(t([0.1, 0.5, 0.99])),
            D.GeneralizedPareto(t([0.0, 1.0, 2.0]), t([1.0, 2.0, 3.0]), t([1.5, 0.7, -0.5])),
            D.VonMises(t([0.0, 1.0]), t([0.5, 5.0]))]


def test_properties_reprs_and_supports_are_pytorchs():
    for ours, theirs in zip(_properties_families(tapegrad, TD), _properties_families(torch, PD)):
        name = type(ours).__name__
        assert fold_repr(repr(ours)) == repr(theirs), name
        assert fold_repr(repr(ours.support)) == repr(theirs.support), name
        assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints), name
        for prop in ("mean", "mode", "variance", "stddev"):
            missing = _error(torch, lambda lib, D: getattr(theirs, prop))
            if missing is not None:   # (Multinomial and ContinuousBernoulli have no mode)
                assert _error(tapegrad, lambda lib, D: getattr(ours, prop)) == missing
                continue
            np.testing.assert_allclose(getattr(ours, prop).numpy(), getattr(theirs, prop).numpy(), rtol=1e-12,
                                       err_msg=f"{name}.{prop}")


def _error(lib, build):
    try:
        build(lib, TD if lib is tapegrad else PD)
    except Exception as e:   # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, fold_repr(str(e))
    return None


@pytest.mark.parametrize("build", [
    lambda lib, D: D.Binomial(lib.tensor([2.0, 2.5]), lib.tensor([0.2, 0.3])),
    lambda lib, D: D.Binomial(3, lib.tensor([0.2, 1.3])),
    lambda lib, D: D.Binomial(3),
    lambda lib, D: D.Binomial(lib.tensor([3.0]), lib.tensor([0.2])).log_prob(lib.tensor([4.0])),
    lambda lib, D: D.Binomial(lib.tensor([3.0, 4.0]), lib.tensor([0.2, 0.3])).entropy(),
    lambda lib, D: D.Binomial(lib.tensor([3.0, 4.0]), lib.tensor([0.2, 0.3])).enumerate_support(),
    lambda lib, D: D.Multinomial(lib.tensor(3), lib.tensor([0.2, 0.8])),
    lambda lib, D: D.Multinomial(3, lib.tensor([0.2, -0.8])),
    lambda lib, D: D.Multinomial(3, lib.tensor([0.2, 0.8])).log_prob(lib.tensor([3.0, 1.0])),
    lambda lib, D: D.NegativeBinomial(lib.tensor([2.0]), lib.tensor([1.0])),
    lambda lib, D: D.NegativeBinomial(lib.tensor([-2.0]), logits=lib.tensor([1.0])),
    lambda lib, D: D.NegativeBinomial(lib.tensor([2.0]), logits=lib.tensor([1.0])).log_prob(lib.tensor([0.5])),
    lambda lib, D: D.Pareto(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib, D: D.Pareto(lib.tensor([1.0]), lib.tensor([2.0])).log_prob(lib.tensor([0.5])),
    lambda lib, D: D.Weibull(lib.tensor([-1.0]), lib.tensor([2.0])),
    lambda lib, D: D.Weibull(lib.tensor([1.0]), lib.tensor([2.0])).log_prob(lib.tensor([0.0])),
    lambda lib, D: D.HalfCauchy(lib.tensor([1.0])).log_prob(lib.tensor([-0.5])),
    lambda lib, D: D.InverseGamma(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda lib, D: D.FisherSnedecor(lib.tensor([-1.0]), lib.tensor([2.0])),
    lambda lib, D: D.FisherSnedecor(lib.tensor([1.0]), lib.tensor([2.0]), validate_args=True).log_prob(
        lib.tensor([-1.0])),
    lambda lib, D: D.Kumaraswamy(lib.tensor([1.0]), lib.tensor([2.0])).log_prob(lib.tensor([1.5])),
    lambda lib, D: D.ContinuousBernoulli(lib.tensor([1.5]), validate_args=True),
    lambda lib, D: D.ContinuousBernoulli(lib.tensor([0.5]), logits=lib.tensor([0.5])),
    lambda lib, D: D.ContinuousBernoulli(logits=lib.tensor([0.5])).log_prob(lib.tensor([1.5])),
    lambda lib, D: D.GeneralizedPareto(lib.tensor([0.0]), lib.tensor([-1.0]), lib.tensor([0.5])),
    lambda lib, D: D.GeneralizedPareto(lib.tensor([0.0]), lib.tensor([1.0]), lib.tensor([-0.5])).log_prob(
        lib.tensor([3.0])),
    lambda lib, D: D.VonMises(lib.tensor([0.0]), lib.tensor([0.0])),
    lambda lib, D: D.VonMises(lib.tensor([0.0]), lib.tensor([1.0])).log_prob(lib.tensor(float("nan"))),
    lambda lib, D: D.kl_divergence(D.Binomial(lib.tensor([3.0]), lib.tensor([0.2])),
                                   D.Binomial(lib.tensor([4.0]), lib.tensor([0.2]))),
], ids=["binomial-count", "binomial-probs", "binomial-neither", "binomial-support", "binomial-entropy",
        "binomial-enumerate", "multinomial-count", "multinomial-simplex", "multinomial-support",
        "negative-binomial-probs", "negative-binomial-count", "negative-binomial-support", "pareto-alpha",
        "pareto-support", "weibull-scale", "weibull-support", "half-cauchy-support", "inverse-gamma-rate",
        "fisher-snedecor-df", "fisher-snedecor-support", "kumaraswamy-support", "continuous-bernoulli-probs",
        "continuous-bernoulli-both", "continuous-bernoulli-support", "generalized-pareto-scale",
        "generalized-pareto-support", "von-mises-concentration", "von-mises-support", "kl-binomial-count"])
def test_validation_errors_are_pytorchs(build):
    theirs = _error(torch, build)
    assert theirs is not None
    assert _error(tapegrad, build) == theirs


def test_validation_can_be_switched_off():
    for lib, D in ((tapegrad, TD), (torch, PD)):
        assert D.Pareto(lib.tensor([1.0]), lib.tensor([-1.0]), validate_args=False).alpha.tolist() == [-1.0]
        # ContinuousBernoulli clamps probs into (0, 1) when not told to validate
        assert D.ContinuousBernoulli(lib.tensor([1.5])).probs.tolist() == [1 - float(np.finfo(np.float32).eps)]


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_expand_broadcasts_batch_shape_and_keeps_scores(name):
    torch.manual_seed(1)   # a value in the support to score: a draw of PyTorch's, at the expanded shape
    value = FAMILIES[name](PD, lambda v: torch.tensor(v, dtype=torch.float64)).sample((3,)).numpy()

    def run(lib, D):
        lib.manual_seed(0)
        d = FAMILIES[name](D, lambda v: lib.tensor(v, dtype=lib.float64))
        e = d.expand((3,) + tuple(d.batch_shape))
        v = lib.tensor(value, dtype=lib.float64)
        # (GeneralizedPareto's float64 log_prob raises, as PyTorch's: its icdf instead)
        score = e.icdf(v * 0 + 0.3) if name == "generalized-pareto" else e.log_prob(v)
        return (type(e).__name__, tuple(e.batch_shape), tuple(e.event_shape), e._validate_args,
                tuple(e.sample().shape), score.numpy(), e.mean.numpy())
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    assert ours[:5] == theirs[:5]
    for o, t in zip(ours[5:], theirs[5:]):
        np.testing.assert_allclose(o, t, rtol=1e-10)


def test_enumerate_support_matches_pytorch():
    for lib, D in ((tapegrad, TD), (torch, PD)):
        d = D.Binomial(lib.tensor([[3.0], [3.0]]), lib.tensor([[0.3, 0.8], [0.5, 0.5]]))
        supports = [d.enumerate_support(expand).tolist() for expand in (True, False)] + [d.support.is_discrete]
        if lib is tapegrad:
            ours = supports
    assert ours == supports


def test_multinomial_log_prob_of_impossible_categories_is_pytorchs():
    # a category of logit -inf (probs are clamped above 0, logits are not) drawn 0 times scores 0, once -inf
    def run(lib, D):
        d = D.Multinomial(3, logits=lib.tensor([-math.inf, 0.4, 0.6]))
        return d.log_prob(lib.tensor([[0.0, 1.0, 2.0], [1.0, 1.0, 1.0]])).tolist()
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert math.isinf(ours[1])
