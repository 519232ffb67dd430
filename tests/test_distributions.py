"""tapegrad.distributions against torch.distributions.

Scores (log_prob, entropy, cdf/icdf, mean, variance, KL) and their gradients are compared with
PyTorch in float64. Draws differ from PyTorch's by design, so samples are checked by shape and dtype,
by moments of large draws (loose tolerance), and rsample gradients by reparameterisation identities.
"""
import numpy as np
import pytest

import tapegrad
import tapegrad.distributions as TD

from conftest import fold_repr, require
from distribution_checks import flat as _flat, run as _run, same_as_torch as _same_as_torch, v as _v  # noqa: F401

torch = require("torch")
PD = torch.distributions


L3 = [[1.0, 0.0, 0.0], [0.3, 1.2, 0.0], [-0.2, 0.4, 0.8]]

# (name, fn(lib, D, *params) -> one tensor summing the scores, params)
SCORES = [
    ("normal", lambda lib, D, m, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                     + d.mean * d.variance * d.stddev)(D.Normal(m, s), _v(lib, [0.3, -1.2, 2.0])),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("laplace", lambda lib, D, m, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.7))
                                      + d.variance * d.stddev)(D.Laplace(m, s), _v(lib, [0.3, -1.2, 2.0])),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("uniform", lambda lib, D, lo, hi: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                        + d.mean + d.variance)(D.Uniform(lo, hi), _v(lib, [0.0, 1.0, 4.0])),
     ([-0.7, 0.0, 3.5], [1.0, 2.0, 5.0])),
    ("exponential", lambda lib, D, r: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                       + d.mean + d.variance)(D.Exponential(r), _v(lib, [0.0, 1.0, 4.0])),
     ([0.7, 2.0, 3.0],)),
    # (cdf with the concentration held constant: neither library differentiates gammainc in it)
    ("gamma", lambda lib, D, a, b: (lambda d, v: d.log_prob(v) + d.entropy() + D.Gamma(a.detach(), b).cdf(v) + d.mean
                                    + d.mode + d.variance)(
        D.Gamma(a, b), _v(lib, [0.5, 1.0, 2.0])), ([0.7, 2.0, 3.0], [1.0, 2.0, 0.5])),
    ("beta", lambda lib, D, a, b: (lambda d, v: d.log_prob(v) + d.entropy() + d.mean + d.mode + d.variance)(
        D.Beta(a, b), _v(lib, [0.2, 0.5, 0.9])), ([0.7, 2.0, 3.0], [0.5, 2.0, 1.5])),
    ("poisson", lambda lib, D, r: D.Poisson(r).log_prob(_v(lib, [0.0, 1.0, 4.0])) + D.Poisson(r).mode,
     ([0.7, 2.0, 3.0],)),
    ("bernoulli-probs", lambda lib, D, p: (lambda d: d.log_prob(_v(lib, [0.0, 1.0, 1.0])) + d.entropy() + d.logits
                                           + d.variance)(D.Bernoulli(p)), ([0.2, 0.6, 0.9],)),
    ("bernoulli-logits", lambda lib, D, z: (lambda d: d.log_prob(_v(lib, [0.0, 1.0, 1.0])) + d.entropy() + d.probs
                                            + d.mode)(D.Bernoulli(logits=z)), ([0.2, -0.5, 0.9],)),
    # Unnormalised probs and logits are normalised as PyTorch does.
    ("categorical-probs", lambda lib, D, p: (lambda d: d.log_prob(lib.tensor([0, 2])) + d.entropy()
                                             + d.logits.sum(-1))(D.Categorical(p)),
     ([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]],)),
    ("categorical-logits", lambda lib, D, z: (lambda d: d.log_prob(lib.tensor([[0], [2]])) + d.entropy()
                                              + d.probs.sum(-1))(D.Categorical(logits=z)),
     ([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]],)),
    ("one-hot-categorical", lambda lib, D, z: (lambda d: d.log_prob(_v(lib, [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
                                               + d.entropy() + (d.mean * d.variance).sum(-1))(
        D.OneHotCategorical(logits=z)), ([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]],)),
    ("mvn-scale-tril", lambda lib, D, m, L: (lambda d: d.log_prob(_v(lib, [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]]))
                                             + d.entropy() + d.variance.sum(-1))(D.MultivariateNormal(m, scale_tril=L)),
     ([0.1, 0.0, -0.2], L3)),
    ("mvn-covariance", lambda lib, D, m, L: (lambda d: d.log_prob(_v(lib, [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]]))
                                             + d.precision_matrix.sum((-2, -1)))(
        D.MultivariateNormal(m, covariance_matrix=L @ L.mT)), ([0.1, 0.0, -0.2], L3)),
    ("mvn-precision", lambda lib, D, m, L: (lambda d: d.log_prob(_v(lib, [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]]))
                                            + d.covariance_matrix.sum((-2, -1)) + d.scale_tril.sum((-2, -1)))(
        D.MultivariateNormal(m, precision_matrix=L @ L.mT)), ([0.1, 0.0, -0.2], L3)),
    ("independent", lambda lib, D, m, s: (lambda d: d.log_prob(_v(lib, [[0.3, -1.2], [2.0, 0.1]])) + d.entropy())(
        D.Independent(D.Normal(m, s), 1)), ([[0.1, 0.2], [-0.3, 0.0]], [[1.0, 2.0], [0.5, 1.5]])),
    ("log-normal", lambda lib, D, m, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                         + d.mean + d.mode + d.variance)(D.LogNormal(m, s), _v(lib, [0.3, 1.2, 2.0])),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("half-normal", lambda lib, D, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                       + d.mean + d.variance)(D.HalfNormal(s), _v(lib, [0.3, 1.2, 2.0])),
     ([1.0, 2.0, 0.5],)),
    ("gumbel", lambda lib, D, m, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                     + d.mean + d.stddev)(D.Gumbel(m, s), _v(lib, [0.3, -1.2, 2.0])),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("cauchy", lambda lib, D, m, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.cdf(v) + d.icdf(_v(lib, 0.3))
                                     + d.mode)(D.Cauchy(m, s), _v(lib, [0.3, -1.2, 2.0])),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("chi2", lambda lib, D, k: (lambda d, v: d.log_prob(v) + d.entropy() + d.mean + d.variance + d.df)(
        D.Chi2(k), _v(lib, [0.5, 1.0, 4.0])), ([0.7, 2.0, 5.0],)),
    ("student-t", lambda lib, D, k, m, s: (lambda d, v: d.log_prob(v) + d.entropy() + d.mode)(
        D.StudentT(k, m, s), _v(lib, [0.3, -1.2, 2.0])), ([0.7, 2.0, 5.0], [0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("geometric", lambda lib, D, p: (lambda d, v: d.log_prob(v) + d.entropy() + d.mean + d.variance + d.logits)(
        D.Geometric(p), _v(lib, [0.0, 1.0, 4.0])), ([0.2, 0.6, 0.9],)),
    # PyTorch's docstring example: a logistic distribution from a uniform one
    ("transformed-logistic", lambda lib, D, a, b: (lambda d, v: d.log_prob(v) + d.cdf(v) + d.icdf(_v(lib, 0.3)))(
        D.TransformedDistribution(D.Uniform(_v(lib, 0.0), _v(lib, 1.0)),
                                  [D.SigmoidTransform().inv, D.AffineTransform(loc=a, scale=b)]),
        _v(lib, [0.3, -1.2, 2.0])), ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("transformed-tanh-power", lambda lib, D, m, s: (lambda d, v: d.log_prob(v) + d.cdf(v))(
        D.TransformedDistribution(D.Normal(m, s), [D.TanhTransform(), D.AffineTransform(2.0, 1.5),
                                                   D.PowerTransform(_v(lib, 2.0))]), _v(lib, [0.5, 4.0, 6.0])),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
    ("transformed-softplus-event", lambda lib, D, m, s: D.TransformedDistribution(
        D.Independent(D.Normal(m, s), 1), D.ComposeTransform([D.SoftplusTransform(), D.ExpTransform().inv])).log_prob(
        _v(lib, [[0.3, -1.2], [2.0, 0.1]])), ([[0.1, 0.2], [-0.3, 0.0]], [[1.0, 2.0], [0.5, 1.5]])),
]


@pytest.mark.parametrize("name,fn,params", SCORES, ids=[s[0] for s in SCORES])
def test_scores_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


KL_PAIRS = [
    ("normal", lambda lib, D, a, b: D.kl_divergence(D.Normal(a, b), D.Normal(b, a + 2)),
     ([0.1, 0.0, -0.2], [1.0, 2.0, 0.5])),
    ("laplace", lambda lib, D, a, b: D.kl_divergence(D.Laplace(a, b), D.Laplace(b, a + 2)),
     ([0.1, 0.0, -0.2], [1.0, 2.0, 0.5])),
    ("gamma-beta-exponential-poisson", lambda lib, D, a, b: (
        D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)) + D.kl_divergence(D.Beta(a, b), D.Beta(b, a))
        + D.kl_divergence(D.Exponential(a), D.Exponential(b)) + D.kl_divergence(D.Poisson(a), D.Poisson(b))),
     ([0.1, 1.0, 3.2], [1.0, 2.0, 0.5])),
    ("bernoulli-uniform", lambda lib, D, a, b: (
        D.kl_divergence(D.Bernoulli(a), D.Bernoulli(logits=b))
        + D.kl_divergence(D.Uniform(a - 1, b), D.Uniform(a - 2, b + 1))),
     ([0.1, 0.4, 0.8], [0.3, 0.2, 0.5])),
    ("categorical-independent", lambda lib, D, a, b: (
        D.kl_divergence(D.Categorical(a), D.Categorical(logits=b))
        + D.kl_divergence(D.OneHotCategorical(a), D.OneHotCategorical(logits=b))
        + D.kl_divergence(D.Independent(D.Normal(a, b), 1), D.Independent(D.Normal(b, a), 1))),
     ([[0.1, 0.4, 0.8]], [[0.3, 0.2, 0.5]])),
    ("mvn", lambda lib, D, m, L, m2: D.kl_divergence(
        D.MultivariateNormal(m, scale_tril=L),
        D.MultivariateNormal(m2.expand(2, 3), covariance_matrix=L @ L.mT + lib.eye(3, dtype=L.dtype))),
     ([0.1, 0.0, -0.2], L3, [0.0, 1.0, 2.0])),
]


@pytest.mark.parametrize("name,fn,params", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergences_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


def test_kl_infinite_and_zero_where_pytorch_sets_them():
    for lib, D in ((tapegrad, TD), (torch, PD)):
        kl = (D.kl_divergence(D.Uniform(lib.tensor([0.0, 0.0]), lib.tensor([1.0, 1.0])),
                              D.Uniform(lib.tensor([0.5, -1.0]), lib.tensor([2.0, 2.0]))).tolist(),
              D.kl_divergence(D.Bernoulli(lib.tensor([0.0, 0.5, 1.0])),
                              D.Bernoulli(lib.tensor([0.5, 0.0, 1.0]))).tolist(),
              D.kl_divergence(D.Categorical(lib.tensor([0.0, 1.0])), D.Categorical(lib.tensor([0.5, 0.5]))).tolist())
        if lib is tapegrad:
            ours = kl
    assert ours[0] == kl[0] and ours[1] == kl[1]
    np.testing.assert_allclose(ours[2], kl[2], rtol=1e-6)


def test_register_kl_dispatches_on_the_most_specific_pair_and_unknown_pairs_raise():
    class MyNormal(TD.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), TD.Normal(1.0, 2.0)
    np.testing.assert_allclose(TD.kl_divergence(p, q).item(), TD.kl_divergence(TD.Normal(0.0, 1.0), q).item())
    TD.register_kl(MyNormal, TD.Normal)(lambda p, q: tapegrad.tensor(42.0))
    assert TD.kl_divergence(p, q).item() == 42.0
    with pytest.raises(NotImplementedError) as ours:
        TD.kl_divergence(TD.Categorical(tapegrad.ones(2)), TD.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError) as theirs:
        PD.kl_divergence(PD.Categorical(torch.ones(2)), PD.Normal(0.0, 1.0))
    assert str(ours.value) == str(theirs.value)


# ---- samples ----------------------------------------------------------------------------------------------

N_DRAWS = 20000
# Gamma and Beta draw N_DRAWS x 2 x 2 float64 gammas in every test: JAX's gamma sampler is slow to
# compile, so all tests share one kernel (and one gradient kernel) for it.
GAMMA_BATCH = ([[0.7, 3.0], [1.0, 0.5]], [[2.0, 1.5], [1.0, 4.0]])


def _families(lib, D):
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    return [D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), D.Laplace(t([0.5, 3.0]), t([1.0, 2.0])),
            D.Uniform(t([0.5, 3.0]), t([1.0, 4.0])), D.Exponential(t([0.5, 3.0])),
            D.Gamma(*map(t, GAMMA_BATCH)), D.Beta(t([0.5, 3.0]), t([1.0, 2.0])), D.Poisson(t([0.5, 3.0])),
            D.Bernoulli(t([0.3, 0.8])), D.Categorical(t([[0.3, 0.7], [0.5, 0.5]])),
            D.OneHotCategorical(t([[0.3, 0.7], [0.5, 0.5]])),
            D.MultivariateNormal(t([0.0, 1.0]), covariance_matrix=t([[2.0, 0.5], [0.5, 1.0]])),
            D.Independent(D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), 1)]


def test_samples_have_pytorchs_shapes_and_dtypes_and_moments_on_large_draws():
    # One draw per family (each sampler compiles once): its shape and dtype against PyTorch's for the same
    # sample_shape, and its moments against the distribution's (loose tolerance for 20000 draws).
    tapegrad.manual_seed(0)
    n = N_DRAWS
    for d, theirs in zip(_families(tapegrad, TD), _families(torch, PD)):
        name = type(d).__name__
        assert (tuple(d.batch_shape), tuple(d.event_shape)) == (tuple(theirs.batch_shape),
                                                                 tuple(theirs.event_shape)), name
        assert d.has_rsample == theirs.has_rsample, name
        x, y = d.sample((n,)), theirs.sample((n,))
        assert (tuple(x.shape), x.dtype.name, x.requires_grad) == (tuple(y.shape), str(y.dtype)[6:], False), name
        # Moments in NumPy and PyTorch's mean and variance: only the samplers compile here.
        x = x.numpy().astype(np.float64)
        mean, var = x.mean(0), x.var(0, ddof=1)
        if isinstance(d, TD.Categorical):   # its mean and variance are NaN, as PyTorch's
            np.testing.assert_allclose(mean, theirs.probs[..., 1].numpy(), atol=0.02, err_msg=name)
            continue
        if isinstance(d, TD.MultivariateNormal):
            centred = x - mean
            np.testing.assert_allclose(centred.T @ centred / n, theirs.covariance_matrix.numpy(), atol=0.06)
        np.testing.assert_allclose(mean, theirs.mean.numpy(), rtol=0.03, atol=0.03, err_msg=name)
        np.testing.assert_allclose(var, theirs.variance.numpy(), rtol=0.06, atol=0.01, err_msg=name)


NEW_FAMILIES = {
    "log-normal": lambda D, T: D.LogNormal(T([0.1, -0.3]), T([1.0, 0.5])),
    "half-normal": lambda D, T: D.HalfNormal(T([1.0, 2.0])),
    "gumbel": lambda D, T: D.Gumbel(T([0.1, -0.3]), T([1.0, 0.5])),
    "gumbel-numbers": lambda D, T: D.Gumbel(0.5, 2.0),
    "cauchy": lambda D, T: D.Cauchy(T([0.1, -0.3]), T([1.0, 0.5])),
    "transformed": lambda D, T: D.TransformedDistribution(D.Normal(T([0.0, 1.0]), T([1.0, 2.0])),
                                                          [D.TanhTransform(), D.AffineTransform(T([1.0, 0.0]), 3.0)]),
    "student-t": lambda D, T: D.StudentT(T([3.0, 0.8]), T([0.1, 0.2]), T([1.0, 2.0])),
    "chi2": lambda D, T: D.Chi2(T([2.0, 5.0])),
}
# their rsample gradient is a gamma draw's implicit one, which both libraries approximate (see
# test_standard_gamma_gradient_is_pytorchs_implicit_one; worse at concentrations below 1, df / 2 = 0.4 here)
GAMMA_DRAWS = {"student-t", "chi2"}


@pytest.mark.parametrize("name", sorted(NEW_FAMILIES))
def test_new_families_draw_pytorchs_samples_and_rsample_gradients(name):
    """After manual_seed, samples and reparameterised samples are PyTorch's (the transforms apply to its base
    draws), and so are rsample's gradients, shapes, supports and reprs of their transforms."""
    def run(lib, D):
        lib.manual_seed(3)
        params = []

        def T(values):
            params.append(lib.tensor(values, dtype=lib.float64, requires_grad=True))
            return params[-1]
        d = NEW_FAMILIES[name](D, T)
        sample, rsample = d.sample((3,)), d.rsample((2,))
        if rsample.requires_grad:   # (Gumbel of numbers has no parameter to differentiate)
            rsample.sum().backward()
        return (sample.numpy(), rsample.detach().numpy(), [p.grad.numpy() for p in params], tuple(d.batch_shape),
                tuple(d.event_shape), repr(d.support), fold_repr(getattr(d, "transforms", "")))
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    for o, t in zip(ours[:2], theirs[:2]):   # (float32 for parameters given as numbers: its last bits differ)
        np.testing.assert_allclose(o, t, rtol=1e-12 if o.dtype == np.float64 else 1e-5)
    for o, t in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(o, t, rtol=1e-2 if name in GAMMA_DRAWS else 1e-10)
    assert ours[3:] == theirs[3:]


def test_geometric_draws_pytorchs_samples():
    def run(lib):
        lib.manual_seed(5)
        d = lib.distributions.Geometric(logits=lib.tensor([-1.0, 0.5, 2.0]))
        return d.sample((4,)).tolist(), repr(d.support), tuple(d.expand((2, 3)).batch_shape), d.probs.tolist()
    ours, theirs = run(tapegrad), run(torch)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)   # (float32 sigmoid: its last bit may differ)


def test_transforms_invert_compose_and_cache_as_pytorchs():
    def run(lib, D):
        x = lib.tensor([-1.5, 0.2, 2.0], dtype=lib.float64)
        t = D.ComposeTransform([D.AffineTransform(0.5, -2.0), D.SigmoidTransform(), D.PowerTransform(
            lib.tensor(3.0, dtype=lib.float64))])
        y = t(x)
        cached = D.ExpTransform(cache_size=1)
        ey = cached(x)
        return (y.numpy(), t.inv(y).numpy(), t.log_abs_det_jacobian(x, y).numpy(), t.sign.item(), t.bijective,
                cached.inv(ey) is x, t.inv.inv is t, D.ExpTransform() == D.ExpTransform(),
                D.ExpTransform().inv == D.ExpTransform().inv, repr(t.codomain), repr(D.TanhTransform().inv),
                D.identity_transform(x) is x)
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    for o, t in zip(ours[:3], theirs[:3]):
        np.testing.assert_allclose(o, t, rtol=1e-12)
    assert ours[3:] == theirs[3:]


def test_seeded_sampling_is_reproducible():
    def draw():
        tapegrad.manual_seed(7)
        return TD.Normal(tapegrad.zeros(3), 1.0).sample((2,)).tolist()
    first = draw()
    assert draw() == first and TD.Normal(tapegrad.zeros(3), 1.0).sample((2,)).tolist() != first


def test_rsample_is_loc_plus_eps_times_scale_with_pytorchs_gradients():
    # Normal and Laplace rsample are loc + eps * scale: d/dloc is 1 per draw, d/dscale is the draw's eps.
    tapegrad.manual_seed(1)
    for D in (TD.Normal, TD.Laplace):
        loc = tapegrad.tensor([0.5, -1.0], dtype=tapegrad.float64, requires_grad=True)
        scale = tapegrad.tensor([2.0, 0.5], dtype=tapegrad.float64, requires_grad=True)
        x = D(loc, scale).rsample((5,))
        assert x.requires_grad and x.shape == (5, 2)
        x.sum().backward()
        eps = (x.detach().numpy() - loc.detach().numpy()) / scale.detach().numpy()
        np.testing.assert_allclose(loc.grad.numpy(), [5.0, 5.0])
        np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-12)


def test_rsample_gradients_of_uniform_exponential_and_mvn_follow_their_transforms():
    tapegrad.manual_seed(2)
    f64 = dict(dtype=tapegrad.float64, requires_grad=True)
    low, high = tapegrad.tensor([0.0, 1.0], **f64), tapegrad.tensor([1.0, 4.0], **f64)
    x = TD.Uniform(low, high).rsample((6,))
    x.sum().backward()
    lo, hi = low.detach().numpy(), high.detach().numpy()
    u = (x.detach().numpy() - lo) / (hi - lo)
    np.testing.assert_allclose(high.grad.numpy(), u.sum(0), rtol=1e-12)
    np.testing.assert_allclose(low.grad.numpy(), (1 - u).sum(0), rtol=1e-12)

    rate = tapegrad.tensor([0.5, 3.0], **f64)
    x = TD.Exponential(rate).rsample((6,))
    x.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), (-x.detach().numpy() / rate.detach().numpy()).sum(0), rtol=1e-12)

    loc = tapegrad.tensor([0.1, 0.0, -0.2], **f64)
    L = tapegrad.tensor(L3, **f64)
    x = TD.MultivariateNormal(loc, scale_tril=L).rsample((4,))
    x.sum().backward()
    eps = np.linalg.solve(np.array(L3), (x.detach().numpy() - loc.detach().numpy()).T)  # L eps = x - loc
    np.testing.assert_allclose(loc.grad.numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(L.grad.numpy(), np.ones((3, 1)) * eps.sum(-1), rtol=1e-10)


def test_standard_gamma_gradient_is_pytorchs_implicit_one():
    # PyTorch's _standard_gamma_grad(alpha, x) is d x / d alpha at the draw x. Both libraries approximate
    # it (PyTorch by series and rational approximations), to about 1e-4 relative here.
    tapegrad.manual_seed(3)
    alpha = tapegrad.tensor(GAMMA_BATCH[0], dtype=tapegrad.float64, requires_grad=True)
    x = tapegrad._standard_gamma(alpha.expand(N_DRAWS, 2, 2))
    assert x.grad_fn.name() == "StandardGammaBackward0"
    (x * tapegrad.arange(N_DRAWS, dtype=tapegrad.float64).reshape(-1, 1, 1).eq(7)).sum().backward()
    expected = torch._standard_gamma_grad(torch.tensor(GAMMA_BATCH[0], dtype=torch.float64),
                                          torch.tensor(x[7].detach().numpy()))
    np.testing.assert_allclose(alpha.grad.numpy(), expected.numpy(), rtol=1e-3)


def test_gamma_and_beta_rsample_gradients_are_unbiased():
    # E[d x / d theta] = d E[x] / d theta: Gamma's mean is a / b, Beta's is a / (a + b).
    tapegrad.manual_seed(4)
    a, b = (tapegrad.tensor(v, dtype=tapegrad.float64, requires_grad=True) for v in GAMMA_BATCH)
    (TD.Gamma(a, b).rsample((N_DRAWS,)).sum(0) / N_DRAWS).sum().backward()
    av, bv = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), 1 / bv, rtol=0.03)
    np.testing.assert_allclose(b.grad.numpy(), -av / bv ** 2, rtol=0.03)
    a1, b1 = (tapegrad.tensor(v[0], dtype=tapegrad.float64, requires_grad=True) for v in GAMMA_BATCH)
    (TD.Beta(a1, b1).rsample((N_DRAWS,)).sum(0) / N_DRAWS).sum().backward()
    av, bv = av[0], bv[0]
    np.testing.assert_allclose(a1.grad.numpy(), bv / (av + bv) ** 2, rtol=0.05)
    np.testing.assert_allclose(b1.grad.numpy(), -av / (av + bv) ** 2, rtol=0.05)


# ---- validation, shapes, constraints ---------------------------------------------------------------------

def _message(lib, build):
    with pytest.raises(ValueError) as info:
        build(lib, TD if lib is tapegrad else PD)
    return fold_repr(str(info.value))


@pytest.mark.parametrize("build", [
    lambda lib, D: D.Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])),
    lambda lib, D: D.Bernoulli(lib.tensor([0.2, 1.5])),
    lambda lib, D: D.Categorical(lib.tensor([[0.2, -0.5]])),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1.0, 0.5], [0.0, 1.0]])),
    lambda lib, D: D.Bernoulli(lib.tensor([0.2])).log_prob(lib.tensor([0.5])),
    lambda lib, D: D.Categorical(lib.tensor([0.2, 0.8])).log_prob(lib.tensor(2)),
    lambda lib, D: D.Gamma(lib.tensor(1.0), lib.tensor(1.0)).log_prob(lib.tensor(-1.0)),
    lambda lib, D: D.Normal(lib.zeros(3), 1.0).log_prob(lib.ones(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.ones(3)),
    lambda lib, D: D.Normal(0.0, 1.0).log_prob(0.5),
    lambda lib, D: D.Bernoulli(),
    lambda lib, D: D.Categorical(lib.tensor(0.5)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2)),
    lambda lib, D: D.Independent(D.Normal(0.0, 1.0), 1),
], ids=["param", "unit-interval", "simplex", "lower-cholesky", "support", "integer-interval", "nonnegative",
        "batch-shape", "event-shape", "not-a-tensor", "probs-or-logits", "categorical-dim", "mvn-one-matrix",
        "independent-ndims"])
def test_validation_errors_are_pytorchs(build):
    assert _message(tapegrad, build) == _message(torch, build)


def test_validation_can_be_switched_off_per_instance_and_by_default():
    assert TD.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    with pytest.raises(ValueError):
        TD.Distribution.set_default_validate_args("yes")
    TD.Distribution.set_default_validate_args(False)
    try:
        assert np.isnan(TD.Normal(0.0, 1.0).log_prob(tapegrad.tensor(float("nan"))).item())
        TD.Bernoulli(tapegrad.tensor([1.5]))
    finally:
        TD.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        TD.Bernoulli(tapegrad.tensor([1.5]))


def test_expand_broadcasts_batch_shape_and_keeps_scores():
    for ours, theirs in zip(_families(tapegrad, TD), _families(torch, PD)):
        shape = (3,) + tuple(ours.batch_shape)
        e, f = ours.expand(shape), theirs.expand(shape)
        assert (tuple(e.batch_shape), tuple(e.event_shape)) == (tuple(f.batch_shape), tuple(f.event_shape))
        if not isinstance(ours, (TD.Normal, TD.Categorical, TD.MultivariateNormal, TD.Independent)):
            continue   # the others expand their parameters as Normal does; sampling or scoring them again
            # at a new shape only compiles their samplers again (their sample shapes are tested above)
        assert tuple(e.sample().shape) == tuple(f.sample().shape)
        value = f.sample()
        np.testing.assert_allclose(e.log_prob(tapegrad.tensor(value.numpy())).numpy(), f.log_prob(value).numpy(),
                                   rtol=1e-5, err_msg=type(ours).__name__)


def test_reprs_modes_supports_and_constraints_are_pytorchs():
    for ours, theirs in zip(_families(tapegrad, TD), _families(torch, PD)):
        assert fold_repr(repr(ours)) == repr(theirs)
        if not isinstance(ours, TD.Uniform):   # Uniform's support prints its bound tensors
            assert repr(ours.support) == repr(theirs.support)
        mode, their_mode = ours.mode, theirs.mode
        np.testing.assert_allclose(mode.double().numpy(), their_mode.double().numpy(), err_msg=type(ours).__name__)
    checks = [("real", [0.0, float("nan")]), ("positive", [0.0, 1.0]), ("unit_interval", [0.0, 1.5]),
              ("boolean", [0.0, 0.5]), ("simplex", [[0.2, 0.8], [0.5, 0.6]]), ("nonnegative_integer", [1.0, 1.5])]
    for name, value in checks:
        ours, theirs = getattr(TD.constraints, name), getattr(PD.constraints, name)
        assert repr(ours) == repr(theirs)
        assert ours.check(tapegrad.tensor(value)).tolist() == theirs.check(torch.tensor(value)).tolist(), name
    ours, theirs = TD.constraints.integer_interval(0, 2), PD.constraints.integer_interval(0, 2)
    assert repr(ours) == repr(theirs)
    assert ours.check(tapegrad.tensor([0.0, 2.0, 3.0, 1.5])).tolist() == [True, True, False, False]


def test_enumerate_support_matches_pytorch():
    for lib, D in ((tapegrad, TD), (torch, PD)):
        supports = [d.enumerate_support(expand).tolist() for d in
                    (D.Bernoulli(lib.tensor([0.3, 0.8])), D.Categorical(lib.tensor([[0.3, 0.7], [0.5, 0.5]])),
                     D.OneHotCategorical(lib.tensor([0.3, 0.7]))) for expand in (True, False)]
        if lib is tapegrad:
            ours = supports
    assert ours == supports
