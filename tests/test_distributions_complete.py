"""tapegrad.distributions' Wishart and LKJCholesky, the ExponentialFamily members (natural parameters, log
normaliser, Bregman entropy and KL) and every KL pair of PyTorch's registry, against torch.distributions.

Scores and their gradients are compared with PyTorch in float64; after manual_seed, samples are PyTorch's
values (Wishart's Bartlett draws, with PyTorch's redraw of the draws its first check flags); validation errors
by type and message. Every pair in PyTorch's _KL_REGISTRY is built with parameters that keep it finite where it
can be, and its value and gradients compared.
"""
import warnings

import numpy as np
import pytest

import tapegrad
import tapegrad.distributions as TD

from conftest import fold_repr, require
from distribution_checks import flat as _flat, run as _run, same_as_torch as _same_as_torch, v as _v  # noqa: F401

torch = require("torch")
PD = torch.distributions


def _libs():
    return ((tapegrad, TD), (torch, PD))


L2 = [[1.2, 0.0], [0.4, 0.7]]
COV2 = [[2.0, 0.3], [0.3, 1.0]]
PREC2 = [[[1.5, -0.2], [-0.2, 0.8]], [[0.9, 0.1], [0.1, 2.0]]]
PD2 = [[[1.3, 0.2], [0.2, 0.9]], [[2.5, -0.4], [-0.4, 0.7]]]   # positive-definite values to score
CORR_L3 = [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [-0.3, 0.4, 0.8660254037844386]]


def _wishart_scores(lib, d, value):
    return _flat(lib, d.log_prob(value), d.entropy(), d.mean, d.variance, d.covariance_matrix, d.precision_matrix,
                 d.scale_tril)


# (name, fn(lib, D, *params) -> one tensor of scores, params)
SCORES = [
    ("wishart-scale-tril", lambda lib, D, df, L: _wishart_scores(lib, D.Wishart(df, scale_tril=L), _v(lib, PD2)),
     ([3.0, 4.5], L2)),
    ("wishart-covariance", lambda lib, D, df, c: _wishart_scores(lib, D.Wishart(df, covariance_matrix=c),
                                                                 _v(lib, PD2)), ([2.5, 6.0], COV2)),
    ("wishart-precision", lambda lib, D, df, P: _wishart_scores(lib, D.Wishart(df, precision_matrix=P),
                                                                _v(lib, PD2[0])), ([3.5], PREC2)),
    ("wishart-number-df", lambda lib, D, L: _wishart_scores(lib, D.Wishart(4.0, scale_tril=L), _v(lib, PD2)),
     (L2,)),
    ("wishart-mode", lambda lib, D, df, L: D.Wishart(df, scale_tril=L).mode.nan_to_num(-7.0), ([2.5, 4.5], L2)),
    ("lkj-cholesky", lambda lib, D, c: D.LKJCholesky(3, c).log_prob(_v(lib, CORR_L3)), ([0.5, 1.0, 2.5],)),
    ("lkj-cholesky-dim2", lambda lib, D, c: D.LKJCholesky(2, c).log_prob(_v(lib, [[1.0, 0.0], [0.6, 0.8]])),
     ([1.7],)),
    ("lkj-cholesky-number", lambda lib, D, v: D.LKJCholesky(4, 0.7).log_prob(D.transforms.CorrCholeskyTransform()(v)),
     ([0.3, -0.5, 1.2, 0.1, 0.4, -0.9],)),
]


@pytest.mark.parametrize("name,fn,params", SCORES, ids=[s[0] for s in SCORES])
def test_scores_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


# ---- ExponentialFamily: natural parameters, log normaliser, Bregman entropy and KL ---------------------------

# (name, build(D, T) -> distribution), T making a float64 parameter that requires grad
EXP_FAMILIES = {
    "bernoulli": lambda D, T: D.Bernoulli(T([0.2, 0.7])),
    "beta": lambda D, T: D.Beta(T([0.7, 2.0]), T([1.5, 3.0])),
    "continuous-bernoulli": lambda D, T: D.ContinuousBernoulli(T([0.2, 0.8])),
    "dirichlet": lambda D, T: D.Dirichlet(T([[0.7, 2.0, 3.0], [1.5, 1.2, 4.0]])),
    "exponential": lambda D, T: D.Exponential(T([0.5, 2.0])),
    "gamma": lambda D, T: D.Gamma(T([0.7, 2.0]), T([1.5, 3.0])),
    "chi2": lambda D, T: D.Chi2(T([0.7, 5.0])),
    "normal": lambda D, T: D.Normal(T([0.1, -1.0]), T([0.5, 2.0])),
    "poisson": lambda D, T: D.Poisson(T([0.5, 4.0])),
    "wishart": lambda D, T: D.Wishart(T([3.0, 4.5]), scale_tril=T(L2)),
}
# their q: other parameters of the same shapes
EXP_FAMILIES_Q = {
    "bernoulli": lambda D, T: D.Bernoulli(T([0.6, 0.1])),
    "beta": lambda D, T: D.Beta(T([1.7, 0.5]), T([0.5, 1.0])),
    "continuous-bernoulli": lambda D, T: D.ContinuousBernoulli(T([0.7, 0.3])),
    "dirichlet": lambda D, T: D.Dirichlet(T([[1.0, 0.5, 2.0], [0.5, 3.0, 1.0]])),
    "exponential": lambda D, T: D.Exponential(T([1.5, 0.3])),
    "gamma": lambda D, T: D.Gamma(T([2.7, 0.5]), T([0.5, 1.0])),
    "chi2": lambda D, T: D.Chi2(T([2.0, 1.5])),
    "normal": lambda D, T: D.Normal(T([1.1, 0.0]), T([1.5, 0.7])),
    "poisson": lambda D, T: D.Poisson(T([2.5, 1.0])),
    "wishart": lambda D, T: D.Wishart(T([2.5, 6.0]), covariance_matrix=T(COV2)),
}


def _with_params(lib, build, D):
    params = []

    def T(values):
        params.append(lib.tensor(values, dtype=lib.float64, requires_grad=True))
        return params[-1]
    return build(D, T), params


def _values_and_grads(lib, out, params):
    finite = lib.isfinite(out)
    if out.requires_grad:
        lib.where(finite, out, 0.0).sum().backward()
    return out.detach().numpy(), [None if p.grad is None else p.grad.numpy() for p in params]


def _compare(ours, theirs, what):
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-8, atol=1e-10, err_msg=what)
    for k, (o, t) in enumerate(zip(ours[1], theirs[1])):
        assert (o is None) == (t is None), f"{what}, parameter {k}: gradient {o} vs PyTorch's {t}"
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=1e-7, atol=1e-9, err_msg=f"{what}, gradient of parameter {k}")


@pytest.mark.parametrize("name", sorted(EXP_FAMILIES))
def test_exponential_family_members_and_bregman_entropy_are_pytorchs(name):
    def run(lib, D):
        d, params = _with_params(lib, EXP_FAMILIES[name], D)
        nparams = d._natural_params
        out = _flat(lib, *nparams, d._log_normalizer(*nparams))
        try:
            # the base class's entropy, by autograd through the log normaliser
            out = _flat(lib, out, D.ExponentialFamily.entropy(d))
            entropy_error = None
        except NotImplementedError as e:
            entropy_error = type(e).__name__
        try:
            carrier = d._mean_carrier_measure
        except NotImplementedError:
            carrier = "NotImplementedError"
        return _values_and_grads(lib, out, params), entropy_error, carrier
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    _compare(ours[0], theirs[0], name)
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("name", sorted(EXP_FAMILIES))
def test_bregman_kl_of_each_exponential_family_is_pytorchs(name):
    # PyTorch's fallback called directly (the closed forms take precedence in kl_divergence): it cuts p's
    # natural parameters from the graph, so only q's parameters get gradients, in both.
    def run(lib, D):
        p, p_params = _with_params(lib, EXP_FAMILIES[name], D)
        q, q_params = _with_params(lib, EXP_FAMILIES_Q[name], D)
        return _values_and_grads(lib, D.kl._kl_expfamily_expfamily(p, q), p_params + q_params)
    _compare(run(tapegrad, TD), run(torch, PD), name)


def test_bregman_kl_between_different_families_raises_as_pytorchs():
    messages = []
    for lib, D in _libs():
        with pytest.raises(NotImplementedError) as info:
            D.kl._kl_expfamily_expfamily(D.Normal(_v(lib, 0.0), _v(lib, 1.0)), D.Exponential(_v(lib, 1.0)))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


# ---- every KL pair of PyTorch's registry ------------------------------------------------------------------

# (type name -> build(D, T, role)): role "p" or "q". Parameters keep the pairs finite where they can be:
# q's Uniform covers [0, 1], p's lies inside (0, 1) above q's Pareto scale; p's Pareto has alpha > 2.
KL_TYPES = {
    "Bernoulli": lambda D, T, r: D.Bernoulli(T([0.2, 0.7] if r == "p" else [0.6, 0.1])),
    "Beta": lambda D, T, r: D.Beta(T([0.7, 2.0] if r == "p" else [1.7, 0.5]), T([1.5, 3.0] if r == "p"
                                                                                else [0.5, 1.0])),
    "Binomial": lambda D, T, r: D.Binomial(T([5.0, 7.0]), T([0.2, 0.7] if r == "p" else [0.6, 0.1])),
    "Categorical": lambda D, T, r: D.Categorical(T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]] if r == "p"
                                                   else [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])),
    "Cauchy": lambda D, T, r: D.Cauchy(T([0.1, -1.0] if r == "p" else [1.1, 0.0]), T([0.5, 2.0] if r == "p"
                                                                                     else [1.5, 0.7])),
    "ContinuousBernoulli": lambda D, T, r: D.ContinuousBernoulli(T([0.2, 0.8] if r == "p" else [0.7, 0.3])),
    "Dirichlet": lambda D, T, r: D.Dirichlet(T([[0.7, 2.0, 3.0], [1.5, 1.2, 4.0]] if r == "p"
                                               else [[1.0, 0.5, 2.0], [0.5, 3.0, 1.0]])),
    "Exponential": lambda D, T, r: D.Exponential(T([0.5, 2.0] if r == "p" else [1.5, 0.3])),
    "ExponentialFamily": lambda D, T, r: (D.Wishart(T([3.0, 4.5]), scale_tril=T(L2)) if r == "p"
                                          else D.Wishart(T([2.5, 6.0]), covariance_matrix=T(COV2))),
    "Gamma": lambda D, T, r: D.Gamma(T([0.7, 2.0] if r == "p" else [2.7, 0.5]), T([1.5, 3.0] if r == "p"
                                                                                  else [0.5, 1.0])),
    "Geometric": lambda D, T, r: D.Geometric(T([0.2, 0.7] if r == "p" else [0.6, 0.1])),
    "Gumbel": lambda D, T, r: D.Gumbel(T([0.1, -1.0] if r == "p" else [1.1, 0.0]), T([0.5, 2.0] if r == "p"
                                                                                     else [1.5, 0.7])),
    "HalfNormal": lambda D, T, r: D.HalfNormal(T([0.5, 2.0] if r == "p" else [1.5, 0.7])),
    "Independent": lambda D, T, r: D.Independent(D.Normal(T([[0.1, -1.0, 0.3]] if r == "p" else [[1.1, 0.0, 0.2]]),
                                                          T([0.5, 2.0, 1.0] if r == "p" else [1.5, 0.7, 0.4])), 1),
    "Laplace": lambda D, T, r: D.Laplace(T([0.1, -1.0] if r == "p" else [1.1, 0.0]), T([0.5, 2.0] if r == "p"
                                                                                       else [1.5, 0.7])),
    "LowRankMultivariateNormal": lambda D, T, r: D.LowRankMultivariateNormal(
        T([[0.1, 0.0, -0.2], [1.0, 2.0, 0.0]] if r == "p" else [0.3, -0.1, 0.5]),
        T([[0.5, -0.2], [1.0, 0.3], [-0.4, 0.7]] if r == "p" else [[0.1], [0.3], [-0.6]]),
        T([1.0, 0.5, 2.0] if r == "p" else [0.4, 1.5, 0.9])),
    "MultivariateNormal": lambda D, T, r: D.MultivariateNormal(
        T([[0.1, 0.0, -0.2], [1.0, 2.0, 0.0]] if r == "p" else [0.3, -0.1, 0.5]),
        scale_tril=T([[1.0, 0.0, 0.0], [0.3, 1.2, 0.0], [-0.2, 0.4, 0.8]] if r == "p"
                     else [[0.7, 0.0, 0.0], [-0.3, 1.1, 0.0], [0.5, 0.1, 1.4]])),
    "Normal": lambda D, T, r: D.Normal(T([0.1, -1.0] if r == "p" else [1.1, 0.0]), T([0.5, 2.0] if r == "p"
                                                                                     else [1.5, 0.7])),
    "OneHotCategorical": lambda D, T, r: D.OneHotCategorical(T([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]] if r == "p"
                                                               else [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])),
    "Pareto": lambda D, T, r: D.Pareto(T([0.5, 1.0] if r == "p" else [0.1, 0.15]), T([2.5, 3.0] if r == "p"
                                                                                      else [1.5, 0.7])),
    "Poisson": lambda D, T, r: D.Poisson(T([0.5, 4.0] if r == "p" else [2.5, 1.0])),
    "TransformedDistribution": lambda D, T, r: D.TransformedDistribution(
        D.Normal(T([0.1, -1.0] if r == "p" else [1.1, 0.0]), T([0.5, 2.0] if r == "p" else [1.5, 0.7])),
        [D.ExpTransform()]),
    "Uniform": lambda D, T, r: D.Uniform(T([0.2, 0.3] if r == "p" else [-0.5, -0.1]),
                                         T([0.7, 0.9] if r == "p" else [1.5, 1.2])),
}


def _registry_pairs():
    return _library_pairs(PD)


def _library_pairs(D):
    """The registry's pairs of the library's own distributions (other tests register pairs of their own types)."""
    own = {getattr(D, name) for name in D.__all__ if isinstance(getattr(D, name), type)}
    return sorted((p.__name__, q.__name__) for p, q in D.kl._KL_REGISTRY if p in own and q in own)


def test_every_pair_of_pytorchs_kl_registry_is_registered():
    assert _library_pairs(TD) == _registry_pairs()


@pytest.mark.parametrize("pair", _registry_pairs(), ids=["-".join(p) for p in _registry_pairs()])
def test_each_registered_kl_pair_and_its_gradients_are_pytorchs(pair):
    def run(lib, D):
        p, p_params = _with_params(lib, lambda D, T: KL_TYPES[pair[0]](D, T, "p"), D)
        q, q_params = _with_params(lib, lambda D, T: KL_TYPES[pair[1]](D, T, "q"), D)
        kl = D.kl_divergence(p, q)
        return _values_and_grads(lib, kl, p_params + q_params), (str(kl.dtype).split(".")[-1], kl.requires_grad)
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    _compare(ours[0], theirs[0], f"KL{pair}")
    assert ours[1] == theirs[1]


def _partly_infinite(lib, D):
    """The new pairs' infinite cases, next to finite ones in the same batch."""
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    beta, unif_in = D.Beta(t([0.7, 2.0, 1.0]), t([1.5, 3.0, 2.0])), D.Uniform(t([0.2, -0.1, 0.3]), t([0.7, 0.9, 1.2]))
    unif_cover = D.Uniform(t([-0.5, 0.1, 0.0]), t([1.5, 1.2, 0.9]))
    pairs = [(beta, unif_cover), (unif_in, beta), (unif_in, D.Exponential(t(2.0))),
             (unif_in, D.Gamma(t(2.0), t(1.5))), (D.Exponential(t([1.0, 2.0])), D.Uniform(t(0.0), t(1.0))),
             (D.Gamma(t([1.0, 2.0]), t(1.0)), D.Beta(t(1.0), t(2.0))), (D.Poisson(t([2.0])), D.Bernoulli(t(0.3))),
             (D.Gumbel(t([0.0, 1.0]), t(1.0)), D.Gamma(t(1.0), t(1.0))),
             (D.Laplace(t(0.0), t(1.0)), D.Exponential(t(1.0))), (D.Normal(t([0.0]), t(1.0)), D.Uniform(t(0), t(1)))]
    return [(type(p).__name__, type(q).__name__, D.kl_divergence(p, q)) for p, q in pairs]


def test_kl_infinite_cases_are_pytorchs():
    for (p, q, ours), (_, _, theirs) in zip(_partly_infinite(tapegrad, TD), _partly_infinite(torch, PD)):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, err_msg=f"{p}-{q}")
        assert (ours.dtype.name, ours.requires_grad) == (str(theirs.dtype)[6:], theirs.requires_grad), (p, q)


# ---- samples ----------------------------------------------------------------------------------------------

SAMPLED = {
    "wishart": lambda D, T: D.Wishart(T([3.0, 4.5]), scale_tril=T(L2)),
    "wishart-covariance": lambda D, T: D.Wishart(T(5.0), covariance_matrix=T([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2],
                                                                             [0.1, -0.2, 0.5]])),
    "wishart-precision-batched": lambda D, T: D.Wishart(T([[3.0], [2.5]]), precision_matrix=T(PREC2)),
    "lkj-cholesky": lambda D, T: D.LKJCholesky(3, T([0.5, 2.0])),
    "lkj-cholesky-dim4": lambda D, T: D.LKJCholesky(4, T(1.0)),
}


def _draws(lib, D, name, dtype_name="float64", sample_shape=(4,)):
    lib.manual_seed(11)
    params = []

    def T(values):
        params.append(lib.tensor(values, dtype=getattr(lib, dtype_name), requires_grad=True))
        return params[-1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d = SAMPLED[name](D, T)
        sample = d.sample(sample_shape)
    out = [sample.numpy(), tuple(sample.shape), str(sample.dtype).split(".")[-1], sample.requires_grad,
           tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample, fold_repr(d.support),
           sorted((k, fold_repr(repr(v))) for k, v in d.arg_constraints.items()),
           sorted(str(w.message) for w in caught)]
    if d.has_rsample:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rsample = _wishart_rsample(lib, d, (2,))
        (rsample * lib.arange(rsample.numel(), dtype=rsample.dtype).reshape(rsample.shape)).sum().backward()
        out += [rsample.detach().numpy(), [None if p.grad is None else p.grad.numpy() for p in params]]
    return out


def _wishart_rsample(lib, d, shape):
    """d.rsample(shape); in PyTorch, its kept draws again, redrawn by Bartlett sampling to backpropagate.

    PyTorch's rsample redraws every draw its first check flags (all valid ones) and writes the redraws in
    place under a mask it then modifies in place, so backward through a sample_shape of draws raises there
    ("modified by an inplace operation"); tapegrad's gives the gradient of the draws returned, which is what
    PyTorch's own _bartlett_sampling of those redraws gives.
    """
    if lib is tapegrad:
        return d.rsample(shape)
    state = torch.get_rng_state()
    with torch.no_grad():
        value = d.rsample(shape)
    torch.set_rng_state(state)
    d._bartlett_sampling(shape)   # the first draws, all valid, all redrawn
    redrawn = d._bartlett_sampling(shape)
    assert bool((redrawn == value).all())
    return redrawn


@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_seeded_samples_and_rsample_gradients_are_pytorchs(name):
    ours, theirs = _draws(tapegrad, TD, name), _draws(torch, PD, name)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-14)
    assert ours[1:10] == theirs[1:10]
    assert len(ours) == len(theirs)
    if len(theirs) > 10:
        np.testing.assert_allclose(ours[10], theirs[10], rtol=1e-12, atol=1e-14)
        for k, (o, t) in enumerate(zip(ours[11], theirs[11])):
            assert (o is None) == (t is None)
            if t is not None:
                # Wishart's df (its first parameter) reaches the draws through the chi2 (gamma) draws, whose
                # implicit gradient both libraries approximate (test_distributions.py); the rest is exact
                gamma_draws = name.startswith("wishart") and k == 0
                np.testing.assert_allclose(o, t, rtol=1e-3 if gamma_draws else 1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["wishart", "lkj-cholesky"])
def test_float32_draws_are_pytorchs(name):
    ours, theirs = _draws(tapegrad, TD, name, "float32", (3,)), _draws(torch, PD, name, "float32", (3,))
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert ours[1:10] == theirs[1:10]


def test_wishart_moments_on_large_draws_are_its_mean_and_variance():
    tapegrad.manual_seed(0)
    d = TD.Wishart(_v(tapegrad, 5.0), covariance_matrix=_v(tapegrad, COV2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = d.sample((20000,))
    np.testing.assert_allclose(x.mean(0).numpy(), d.mean.numpy(), rtol=0.03)
    np.testing.assert_allclose(x.var(0).numpy(), d.variance.numpy(), rtol=0.08)


# ---- validation, warnings, expand, reprs -------------------------------------------------------------------

def _error(lib, build):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build(lib, TD if lib is tapegrad else PD)
    except Exception as e:   # noqa: BLE001 (the type is what is compared)
        return type(e).__name__, fold_repr(str(e))
    return None


@pytest.mark.parametrize("build", [
    lambda lib, D: D.Wishart(lib.tensor(3.0)),
    lambda lib, D: D.Wishart(lib.tensor(3.0), covariance_matrix=lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib, D: D.Wishart(lib.tensor(3.0), scale_tril=lib.ones(2)),
    lambda lib, D: D.Wishart(lib.tensor([3.0, 0.5]), scale_tril=lib.eye(2)),
    lambda lib, D: D.Wishart(0.5, covariance_matrix=lib.eye(3)),
    lambda lib, D: D.Wishart(3.0, covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib, D: D.Wishart(3.0, scale_tril=lib.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda lib, D: D.Wishart(lib.tensor([3.0, float("nan")]), scale_tril=lib.eye(2)),
    lambda lib, D: D.Wishart(3.0, scale_tril=lib.eye(2)).log_prob(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib, D: D.Wishart(3.0, scale_tril=lib.eye(2)).log_prob(lib.eye(3)),
    lambda lib, D: D.Wishart(3.0, scale_tril=lib.eye(2)).icdf(lib.eye(2)),
    lambda lib, D: D.LKJCholesky(1, 0.5),
    lambda lib, D: D.LKJCholesky(2, 0.5).log_prob(lib.tensor([[1.0, 0.0], [0.5, 0.5]])),
    lambda lib, D: D.LKJCholesky(2, 0.5).log_prob(lib.eye(3)),
    lambda lib, D: D.LKJCholesky(2, 0.5).mean,
    lambda lib, D: D.LKJCholesky(2, 0.5).rsample(),
], ids=["wishart-no-matrix", "wishart-two-matrices", "wishart-matrix-dim", "wishart-df", "wishart-number-df",
        "wishart-covariance", "wishart-scale-tril", "wishart-nan-df", "wishart-support", "wishart-event-shape",
        "wishart-icdf", "lkj-dim", "lkj-support", "lkj-event-shape", "lkj-mean", "lkj-rsample"])
def test_validation_errors_are_pytorchs(build):
    theirs = _error(torch, build)
    assert theirs is not None
    assert _error(tapegrad, build) == theirs


def test_wishart_warns_of_low_df_as_pytorchs():
    messages = []
    for lib, D in _libs():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            D.Wishart(lib.tensor([1.5, 3.0]), scale_tril=lib.eye(2))
        messages.append([(w.category.__name__, str(w.message)) for w in caught])
    assert messages[0] == messages[1] and messages[0]


def test_validation_can_be_switched_off():
    scores = []
    for lib, D in _libs():
        d = D.Wishart(3.0, covariance_matrix=lib.eye(2), validate_args=False)
        scores.append(d.log_prob(lib.tensor([[1.0, 2.0], [2.0, 1.0]])).item())
    assert scores[0] == pytest.approx(scores[1], rel=1e-6)


@pytest.mark.parametrize("validate_args", [None, False])
def test_lkj_concentration_is_checked_by_its_beta_as_pytorchs(validate_args):
    # LKJCholesky builds its Beta (always validating) before checking its own parameters, as PyTorch's: a
    # concentration at or below 0 raises the Beta's ValueError, even with validate_args=False. (The message is
    # each library's Beta's: PyTorch's names the Dirichlet inside its Beta, tapegrad's the Beta's parameter.)
    for lib, D in _libs():
        with pytest.raises(ValueError) as lkj:
            D.LKJCholesky(3, lib.tensor([0.5, -1.0]), validate_args=validate_args)
        # (its Beta: concentration1 0.5 + offset, concentration0 concentration + 0.5 - offset / 2, offset [0, 0, 1])
        with pytest.raises(ValueError) as beta:
            D.Beta(lib.tensor([0.5, 0.5, 1.5]), lib.tensor([[1.0, 1.0, 0.5], [-0.5, -0.5, -1.0]]))
        assert str(lkj.value) == str(beta.value)


def _expandable(lib, D):
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    return [D.Wishart(t([3.0, 4.5]), scale_tril=t(L2)), D.Wishart(t([3.0]), covariance_matrix=t(COV2)),
            D.Wishart(t(3.0), precision_matrix=t(PREC2)), D.LKJCholesky(3, t([0.5, 2.0]))]


def test_expand_broadcasts_batch_shape_and_keeps_scores():
    for k in range(len(_expandable(torch, PD))):
        def run(lib, D):
            lib.manual_seed(5)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d = _expandable(lib, D)[k]
                e = d.expand((3,) + tuple(d.batch_shape))
                value = e.sample()
                out = [type(e).__name__, tuple(e.batch_shape), tuple(e.event_shape), e._validate_args,
                       sorted(n for n in ("covariance_matrix", "scale_tril", "precision_matrix") if n in e.__dict__),
                       tuple(e.sample((2,)).shape), value.numpy(), e.log_prob(value).numpy()]
                if hasattr(e, "df"):
                    out += [e.mean.numpy(), e.entropy().numpy()]
            return out
        ours, theirs = run(tapegrad, TD), run(torch, PD)
        assert ours[:6] == theirs[:6], k
        for o, t in zip(ours[6:], theirs[6:]):
            np.testing.assert_allclose(o, t, rtol=1e-10, err_msg=str(k))


def test_reprs_supports_and_constraints_are_pytorchs():
    for ours, theirs in zip(_expandable(tapegrad, TD), _expandable(torch, PD)):
        assert fold_repr(repr(ours)) == repr(theirs)
        assert fold_repr(ours.support) == repr(theirs.support)
        assert ours.has_rsample == theirs.has_rsample
        assert sorted(ours.arg_constraints) == sorted(theirs.arg_constraints)
        assert [fold_repr(v) for v in ours.arg_constraints.values()] == [repr(v) for v in
                                                                          theirs.arg_constraints.values()]
