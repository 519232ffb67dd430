"""tapegrad.distributions' multivariate, relaxed and mixture families, structured transforms and
biject_to / transform_to, against torch.distributions.

Scores (log_prob, entropy, mean, variance, KL), transforms (forward, inverse, log |det J|) and their
gradients are compared with PyTorch in float64; seeded samples with PyTorch's values; validation errors by
type and message. Dirichlet's rsample gradient is the gamma draws' implicit one (README), so it is compared
with PyTorch's in expectation.
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
W32 = [[0.5, -0.2], [1.0, 0.3], [-0.4, 0.7]]
SIMPLEX = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]


def _mixture(lib, D, w, m, s):
    return D.MixtureSameFamily(D.Categorical(logits=w), D.Normal(m, s))


def _mixture_event(lib, D, w, m, s):   # a batch of 2 mixtures of 3 bivariate components
    return D.MixtureSameFamily(D.Categorical(logits=w), D.Independent(D.Normal(m, s), 1))


# (name, fn(lib, D, *params) -> one tensor of scores, params)
SCORES = [
    ("dirichlet", lambda lib, D, a: (lambda d: _flat(lib, d.log_prob(_v(lib, SIMPLEX)), d.entropy(), d.mean,
                                                     d.variance, d.mode))(D.Dirichlet(a)),
     ([[0.7, 2.0, 3.0], [1.5, 1.2, 4.0]],)),
    ("dirichlet-below-one-mode", lambda lib, D, a: (lambda d: _flat(lib, d.log_prob(_v(lib, SIMPLEX)), d.mode))(
        D.Dirichlet(a)), ([[0.7, 0.2, 0.3], [1.5, 0.2, 4.0]],)),
    ("relaxed-bernoulli-probs", lambda lib, D, t, p: (lambda d: _flat(lib, d.log_prob(_v(lib, [0.2, 0.5, 0.9])),
                                                                      d.logits, d.probs, d.temperature))(
        D.RelaxedBernoulli(t, probs=p)), (0.7, [0.2, 0.6, 0.9])),
    ("relaxed-bernoulli-logits", lambda lib, D, t, z: (lambda d: _flat(lib, d.log_prob(_v(lib, [0.2, 0.5, 0.9])),
                                                                       d.probs))(D.RelaxedBernoulli(t, logits=z)),
     ([1.5, 0.3, 2.0], [0.2, -0.5, 0.9])),
    ("logit-relaxed-bernoulli", lambda lib, D, t, z: D.relaxed_bernoulli.LogitRelaxedBernoulli(t, logits=z).log_prob(
        _v(lib, [[0.2, -1.5, 3.0]])), (0.4, [0.2, -0.5, 0.9])),
    ("relaxed-one-hot-probs", lambda lib, D, t, p: D.RelaxedOneHotCategorical(t, probs=p).log_prob(
        _v(lib, SIMPLEX)), (0.8, [[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]])),
    ("relaxed-one-hot-logits", lambda lib, D, t, z: (lambda d: _flat(lib, d.log_prob(_v(lib, SIMPLEX)), d.probs,
                                                                     d.logits))(
        D.RelaxedOneHotCategorical(t, logits=z)),
     ([[1.5], [0.5]], [[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]])),
    ("exp-relaxed-categorical", lambda lib, D, t, z: D.relaxed_categorical.ExpRelaxedCategorical(
        t, logits=z).log_prob(_v(lib, np.log(SIMPLEX))), (0.8, [[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]])),
    ("one-hot-straight-through", lambda lib, D, z: (lambda d: _flat(lib, d.log_prob(_v(lib, [[0.0, 1.0, 0.0]])),
                                                                    d.entropy(), d.mean, d.variance, d.mode))(
        D.OneHotCategoricalStraightThrough(logits=z)), ([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]],)),
    ("mixture", lambda lib, D, w, m, s: (lambda d: _flat(lib, d.log_prob(_v(lib, [[0.3], [-1.2], [2.0]])), d.mean,
                                                         d.variance, d.cdf(_v(lib, [0.3, 1.0]))))(
        _mixture(lib, D, w, m, s)), ([0.1, 0.5, -0.3], [[0.1, 0.2, -0.3], [1.0, 0.0, 2.0]],
                                     [[1.0, 2.0, 0.5], [0.3, 1.0, 1.5]])),
    ("mixture-events", lambda lib, D, w, m, s: (lambda d: _flat(lib, d.log_prob(_v(lib, [[0.3, -1.2], [2.0, 0.1]])),
                                                                d.mean, d.variance))(_mixture_event(lib, D, w, m, s)),
     ([[0.1, 0.5, -0.3], [1.0, 0.0, 0.2]], np.linspace(-1.0, 2.0, 12).reshape(2, 3, 2),
      np.linspace(0.5, 2.0, 12).reshape(2, 3, 2))),
    ("lowrank-mvn", lambda lib, D, m, W, d: (lambda q: _flat(
        lib, q.log_prob(_v(lib, [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]])), q.entropy(), q.mean, q.mode, q.variance,
        q.scale_tril, q.covariance_matrix, q.precision_matrix))(D.LowRankMultivariateNormal(m, W, d)),
     ([0.1, 0.0, -0.2], W32, [1.0, 0.5, 2.0])),
    ("lowrank-mvn-batched", lambda lib, D, m, W, d: (lambda q: _flat(
        lib, q.log_prob(_v(lib, [0.1, 0.2, 0.3])), q.entropy(), q.variance, q.scale_tril))(
        D.LowRankMultivariateNormal(m, W, d)), ([[0.1, 0.0, -0.2], [1.0, 2.0, 0.0]], W32, [[1.0, 0.5, 2.0]])),
    ("logistic-normal", lambda lib, D, m, s: (lambda d: _flat(lib, d.log_prob(_v(lib, [0.2, 0.3, 0.1, 0.4])),
                                                              d.loc, d.scale))(D.LogisticNormal(m, s)),
     ([0.1, 0.2, -0.3], [1.0, 2.0, 0.5])),
]


@pytest.mark.parametrize("name,fn,params", SCORES, ids=[s[0] for s in SCORES])
def test_scores_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


KL_PAIRS = [
    ("dirichlet", lambda lib, D, a, b: D.kl_divergence(D.Dirichlet(a), D.Dirichlet(b)),
     ([[0.7, 2.0, 3.0], [1.5, 1.2, 4.0]], [[1.0, 0.5, 2.0]])),
    ("lowrank-lowrank", lambda lib, D, m, W, d: D.kl_divergence(
        D.LowRankMultivariateNormal(m, W, d), D.LowRankMultivariateNormal(m.flip(-1).expand(2, 3), W.flip(0), d + 1)),
     ([0.1, 0.0, -0.2], W32, [1.0, 0.5, 2.0])),
    ("mvn-lowrank", lambda lib, D, m, W, d, L: D.kl_divergence(
        D.MultivariateNormal(m, scale_tril=L), D.LowRankMultivariateNormal(m.flip(-1), W, d)),
     ([0.1, 0.0, -0.2], W32, [1.0, 0.5, 2.0], L3)),
    ("lowrank-mvn", lambda lib, D, m, W, d, L: D.kl_divergence(
        D.LowRankMultivariateNormal(m, W, d), D.MultivariateNormal(m.flip(-1).expand(2, 3), scale_tril=L)),
     ([0.1, 0.0, -0.2], W32, [1.0, 0.5, 2.0], L3)),
    ("logistic-normal", lambda lib, D, m, s: D.kl_divergence(D.LogisticNormal(m, s), D.LogisticNormal(s, m + 2)),
     ([0.1, 0.0, -0.2], [1.0, 2.0, 0.5])),
    ("one-hot-straight-through", lambda lib, D, a, b: D.kl_divergence(D.OneHotCategoricalStraightThrough(a),
                                                                      D.OneHotCategoricalStraightThrough(logits=b)),
     ([[0.1, 0.4, 0.8]], [[0.3, 0.2, 0.5]])),
]


@pytest.mark.parametrize("name,fn,params", KL_PAIRS, ids=[k[0] for k in KL_PAIRS])
def test_kl_divergences_and_their_gradients_match_pytorch(name, fn, params):
    _same_as_torch(fn, *params)


def test_kl_of_transformed_distributions_needs_equal_transforms_as_pytorchs():
    for lib, D in ((tapegrad, TD), (torch, PD)):
        p = D.LogisticNormal(lib.zeros(2), lib.ones(2))
        q = D.TransformedDistribution(D.Normal(lib.zeros(2), lib.ones(2)), D.ExpTransform())
        with pytest.raises(NotImplementedError):
            D.kl_divergence(p, q)
    with pytest.raises(ValueError) as ours:
        TD.kl_divergence(TD.LowRankMultivariateNormal(tapegrad.zeros(2), tapegrad.ones(2, 1), tapegrad.ones(2)),
                         TD.LowRankMultivariateNormal(tapegrad.zeros(3), tapegrad.ones(3, 1), tapegrad.ones(3)))
    with pytest.raises(ValueError) as theirs:
        PD.kl_divergence(PD.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.ones(2)),
                         PD.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1), torch.ones(3)))
    assert str(ours.value) == str(theirs.value)


# ---- transforms -----------------------------------------------------------------------------------------

def _corr_y(lib, D, x):
    return D.CorrCholeskyTransform()(x)


# (name, build(lib, D) -> transform, x as the domain's point; its inverse applied to the transform's y)
TRANSFORMS = [
    ("softmax", lambda lib, D: D.SoftmaxTransform(), [[0.3, -1.2, 2.0], [0.1, 0.0, 0.5]]),
    ("stick-breaking", lambda lib, D: D.StickBreakingTransform(), [[0.3, -1.2, 2.0], [0.1, 0.0, 0.5]]),
    ("stick-breaking-inverse", lambda lib, D: D.StickBreakingTransform().inv, [[0.2, 0.3, 0.1, 0.4]]),
    ("lower-cholesky", lambda lib, D: D.LowerCholeskyTransform(), [[0.3, 5.0], [-1.2, 0.4]]),
    ("positive-definite", lambda lib, D: D.PositiveDefiniteTransform(), [[0.3, 5.0], [-1.2, 0.4]]),
    ("corr-cholesky", lambda lib, D: D.CorrCholeskyTransform(), [[0.3, -1.2, 2.0], [0.1, 0.0, 0.5]]),
    ("corr-cholesky-2x2", lambda lib, D: D.CorrCholeskyTransform(), [[0.7], [-0.1]]),
    ("reshape", lambda lib, D: D.ReshapeTransform((2, 3), (3, 2)), np.linspace(-1, 1, 12).reshape(2, 2, 3)),
    ("independent", lambda lib, D: D.IndependentTransform(D.SigmoidTransform(), 1), [[0.3, -1.2], [0.1, 0.5]]),
    ("independent-sum-two", lambda lib, D: D.IndependentTransform(D.ExpTransform(), 2), [[0.3, -1.2], [0.1, 0.5]]),
    ("cat", lambda lib, D: D.CatTransform([D.ExpTransform(), D.SigmoidTransform(), D.AffineTransform(1.0, 2.0)],
                                          dim=-1, lengths=[1, 2, 1]), [[0.3, -1.2, 0.4, 1.0], [0.1, 0.5, 2.0, 0.0]]),
    ("cat-dim0", lambda lib, D: D.CatTransform([D.ExpTransform(), D.SigmoidTransform()], dim=0, lengths=[1, 1]),
     [[0.3, -1.2, 0.4], [0.1, 0.5, 2.0]]),
    ("cat-events-batch-dim", lambda lib, D: D.CatTransform([D.IndependentTransform(D.ExpTransform(), 1),
                                                            D.IndependentTransform(D.SigmoidTransform(), 1)],
                                                           dim=0, lengths=[1, 1]), [[0.3, -1.2, 0.4], [0.1, 0.5, 2.0]]),
    ("cat-events-event-dim", lambda lib, D: D.CatTransform([D.IndependentTransform(D.ExpTransform(), 1),
                                                            D.TanhTransform()], dim=-1, lengths=[2, 1]),
     [[0.3, -1.2, 0.4], [0.1, 0.5, 2.0]]),
    ("stack", lambda lib, D: D.StackTransform([D.ExpTransform(), D.SigmoidTransform(), D.TanhTransform()], dim=1),
     [[0.3, -1.2, 0.4], [0.1, 0.5, 2.0]]),
    ("cumulative-distribution", lambda lib, D: D.CumulativeDistributionTransform(
        D.Normal(_v(lib, [0.1, -0.3]), _v(lib, [1.0, 2.0]))), [[0.3, -1.2], [0.1, 0.5]]),
]


def _transform_values(lib, D, build, x):
    t = build(lib, D)
    y = t(x)
    x_back = t.inv(y * 1.0)   # (a new tensor: the cache would return x itself)
    parts = [y, x_back]
    try:
        parts.append(t.log_abs_det_jacobian(x, y))
    except NotImplementedError:
        pass
    return _flat(lib, *parts)


@pytest.mark.parametrize("name,build,x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transforms_and_their_gradients_match_pytorch(name, build, x):
    _same_as_torch(lambda lib, D, x: _transform_values(lib, D, build, x), x)

    def meta(lib, D):
        t = build(lib, D)
        x_shape = lib.Size(np.shape(x))
        y_shape = t.forward_shape(x_shape)
        has_ladj = True
        try:
            t.log_abs_det_jacobian(_v(lib, x), t(_v(lib, x)))
        except NotImplementedError:
            has_ladj = False
        return (tuple(y_shape), tuple(t.inverse_shape(y_shape)), tuple(t(_v(lib, x)).shape), fold_repr(t.domain),
                fold_repr(t.codomain), t.domain.event_dim, t.codomain.event_dim, t.bijective, fold_repr(t),
                fold_repr(t.inv), has_ladj, t.with_cache(1)._cache_size, t == build(lib, D))
    assert meta(tapegrad, TD) == meta(torch, PD)


def test_transform_caches_signs_and_shape_errors_are_pytorchs():
    def run(lib, D):
        x = _v(lib, [[0.3, -1.2, 2.0]])
        out = []
        for t in (D.StickBreakingTransform(cache_size=1), D.IndependentTransform(D.ExpTransform(), 1, cache_size=1),
                  D.CatTransform([D.ExpTransform()], dim=-1, lengths=[3], cache_size=1),
                  D.StackTransform([D.ExpTransform()], dim=0, cache_size=1)):
            out.append(t.inv(t(x)) is x)
        out.append(D.IndependentTransform(D.AffineTransform(0.0, -2.0), 1).sign)
        out.append(D.CumulativeDistributionTransform(D.Normal(0.0, 1.0)).sign)
        for call in (lambda: D.StickBreakingTransform().forward_shape(()),
                     lambda: D.SoftmaxTransform().inverse_shape(()),
                     lambda: D.CorrCholeskyTransform().forward_shape((4,)),
                     lambda: D.CorrCholeskyTransform().inverse_shape((2, 3)),
                     lambda: D.ReshapeTransform((2, 3), (6,)).forward_shape((3, 2)),
                     lambda: D.ReshapeTransform((2, 3), (6,)).inverse_shape(()),
                     lambda: D.ReshapeTransform((2, 3), (5,)),
                     lambda: D.IndependentTransform(D.ExpTransform(), 2)(lib.ones(3)),
                     lambda: D.CatTransform([D.ExpTransform()], dim=0, lengths=[2])(lib.ones(3)),
                     lambda: D.StackTransform([D.ExpTransform()], dim=0)(lib.ones(3)),
                     lambda: D.CatTransform([D.ExpTransform()], dim=0, lengths=[2]).inv(lib.ones(3)),
                     lambda: D.CatTransform([D.ExpTransform()], dim=1).log_abs_det_jacobian(lib.ones(3), lib.ones(3)),
                     lambda: D.StackTransform([D.ExpTransform()], dim=2).log_abs_det_jacobian(
                         lib.ones(3), lib.ones(3))):
            try:
                call()
                out.append(None)
            except (ValueError, AssertionError) as e:
                out.append((type(e).__name__, fold_repr(e)))
        return out
    assert run(tapegrad, TD) == run(torch, PD)


# ---- biject_to / transform_to --------------------------------------------------------------------------

def _constraints(C):
    return [C.real, C.real_vector, C.positive, C.nonnegative, C.greater_than(-1.5), C.greater_than_eq(2.0),
            C.less_than(3.0), C.unit_interval, C.interval(-2.0, 3.0), C.half_open_interval(0.0, 2.0),
            C.simplex, C.lower_cholesky, C.positive_definite, C.positive_semidefinite, C.corr_cholesky,
            C.independent(C.positive, 1), C.cat([C.positive, C.unit_interval], dim=-1, lengths=[2, 1]),
            C.stack([C.real, C.positive, C.less_than(0.0)], dim=-1)]


def _unconstrained(c):
    if c.event_dim == 2 and repr(c) != "CorrCholesky()":
        return np.array([[0.3, 5.0, 0.2], [-1.2, 0.4, 1.0], [0.1, -0.3, -0.6]])
    return np.array([[0.3, -1.2, 0.4], [0.1, 0.5, 2.0]])


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to_give_pytorchs_transforms(registry):
    def run(lib, D):
        out = []
        for c in _constraints(D.constraints):
            try:
                t = getattr(D, registry)(c)
            except NotImplementedError as e:
                out.append(("NotImplementedError", str(e)))
                continue
            x = _v(lib, _unconstrained(c))
            y = t(x)
            out.append((fold_repr(t), fold_repr(t.domain), fold_repr(t.codomain), t.bijective,
                        bool(c.check(y).all()), np.round(y.detach().numpy(), 12).tolist()))
        return out
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert o[:-1] == t[:-1]
        if o[0] != "NotImplementedError":
            np.testing.assert_allclose(o[-1], t[-1], rtol=1e-10, atol=1e-12)


def test_constraint_registry_registers_and_raises_as_pytorchs():
    for D in (TD, PD):
        registry = D.constraint_registry.ConstraintRegistry()
        registry.register(D.constraints.positive, lambda c: D.ExpTransform())
        assert registry(D.constraints.greater_than(3.0)) == D.ExpTransform()
    errors = []
    for D in (TD, PD):
        registry = D.constraint_registry.ConstraintRegistry()
        with pytest.raises(NotImplementedError) as unknown:
            registry(D.constraints.simplex)
        with pytest.raises(TypeError) as not_a_constraint:
            registry.register(int, lambda c: None)
        errors.append((str(unknown.value), str(not_a_constraint.value)))
    assert errors[0] == errors[1]


def test_new_constraints_check_as_pytorchs():
    def run(lib, C):
        corr = lib.tensor([[1.0, 0.0], [0.6, 0.8]], dtype=lib.float64)
        values = [(C.corr_cholesky, lib.stack([corr, corr * 2])),
                  (C.positive_semidefinite, _v(lib, [[[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]])),
                  (C.cat([C.positive, C.unit_interval], dim=-1, lengths=[2, 1]),
                   _v(lib, [[1.0, 2.0, 0.5], [1.0, -2.0, 0.5]])),
                  (C.stack([C.positive, C.real], dim=0), _v(lib, [[1.0, -2.0], [0.5, 3.0]])),
                  (C.MixtureSameFamilyConstraint(C.independent(C.positive, 1)), _v(lib, [[1.0, 2.0], [1.0, -2.0]]))]
        return [(repr(c), c.event_dim, c.is_discrete, c.check(v).tolist()) for c, v in values]
    assert run(tapegrad, TD.constraints) == run(torch, PD.constraints)


# ---- samples -------------------------------------------------------------------------------------------

SAMPLED = {
    "dirichlet": lambda D, T: D.Dirichlet(T([[0.7, 2.0, 3.0], [1.5, 0.3, 4.0]])),
    "relaxed-bernoulli": lambda D, T: D.RelaxedBernoulli(T(0.7), probs=T([0.2, 0.6, 0.9])),
    "relaxed-bernoulli-logits": lambda D, T: D.RelaxedBernoulli(T([1.5, 0.3, 2.0]), logits=T([0.2, -0.5, 0.9])),
    "relaxed-one-hot": lambda D, T: D.RelaxedOneHotCategorical(T([[1.5], [0.5]]),
                                                               logits=T([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]])),
    "relaxed-one-hot-probs": lambda D, T: D.RelaxedOneHotCategorical(T(0.8), probs=T([0.2, 0.5, 0.3])),
    "one-hot-straight-through": lambda D, T: D.OneHotCategoricalStraightThrough(logits=T([[0.2, 0.5, 0.9],
                                                                                          [1.0, 2.0, 3.0]])),
    "lowrank-mvn": lambda D, T: D.LowRankMultivariateNormal(T([0.1, 0.0, -0.2]), T(W32),
                                                            T([[1.0, 0.5, 2.0], [0.3, 0.2, 0.1]])),
    "logistic-normal": lambda D, T: D.LogisticNormal(T([0.1, 0.2, -0.3]), T([1.0, 2.0, 0.5])),
    "mixture": lambda D, T: D.MixtureSameFamily(D.Categorical(logits=T([0.1, 0.5, -0.3])),
                                                D.Normal(T([0.1, 5.0, -3.0]), T([1.0, 2.0, 0.5]))),
    "mixture-events": lambda D, T: D.MixtureSameFamily(D.Categorical(logits=T([[0.1, 0.5, -0.3], [1.0, 0.0, 0.2]])),
                                                       D.Independent(D.Normal(T(np.linspace(-5, 5, 12).reshape(
                                                           2, 3, 2)), T(np.full((2, 3, 2), 0.1))), 1)),
}
# their rsample gradients differ draw by draw (Dirichlet: see the README; compared in expectation below)
GRADIENT_IN_EXPECTATION = {"dirichlet"}


@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_seeded_samples_and_rsample_gradients_are_pytorchs(name):
    def run(lib, D):
        lib.manual_seed(11)
        params = []

        def T(values):
            params.append(lib.tensor(values, dtype=lib.float64, requires_grad=True))
            return params[-1]
        d = SAMPLED[name](D, T)
        sample = d.sample((4,))
        out = [sample.numpy(), tuple(sample.shape), str(sample.dtype).split(".")[-1], sample.requires_grad,
               tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample, fold_repr(d.support),
               {k: repr(v) for k, v in d.arg_constraints.items()}]
        if d.has_rsample:
            rsample = d.rsample((2,))
            (rsample * lib.arange(rsample.numel(), dtype=lib.float64).reshape(rsample.shape)).sum().backward()
            out += [rsample.detach().numpy(), [None if p.grad is None else p.grad.numpy() for p in params]]
        return out
    ours, theirs = run(tapegrad, TD), run(torch, PD)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert ours[1:9] == theirs[1:9]
    if len(theirs) > 9:
        np.testing.assert_allclose(ours[9], theirs[9], rtol=1e-12)
        if name not in GRADIENT_IN_EXPECTATION:
            for o, t in zip(ours[10], theirs[10]):
                assert (o is None) == (t is None)
                if t is not None:
                    np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_float32_dirichlet_draws_are_pytorchs():
    def run(lib):
        lib.manual_seed(2)
        return lib.distributions.Dirichlet(lib.tensor([[0.05, 0.05, 0.05], [2.0, 3.0, 0.5]])).sample((3,)).numpy()
    np.testing.assert_array_equal(run(tapegrad), run(torch))


def test_dirichlet_rsample_gradient_is_pytorchs_in_expectation():
    # E[d x / d a] = d E[x] / d a, for both libraries' estimators (PyTorch's: its _dirichlet_grad).
    n = 20000
    a = [0.7, 2.0, 3.0]
    weights = [1.0, -2.0, 0.5]
    grads = []
    for lib in (tapegrad, torch):
        lib.manual_seed(4)
        conc = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        x = lib.distributions.Dirichlet(conc).rsample((n,))
        ((x * lib.tensor(weights, dtype=lib.float64)).sum(-1).mean()).backward()
        grads.append(conc.grad.numpy())
    conc = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    (PD.Dirichlet(conc).mean * torch.tensor(weights, dtype=torch.float64)).sum().backward()
    exact = conc.grad.numpy()
    np.testing.assert_allclose(grads[0], exact, atol=0.01)
    np.testing.assert_allclose(grads[1], exact, atol=0.01)


def test_straight_through_rsample_is_the_sample_with_the_probs_gradient():
    tapegrad.manual_seed(5)
    logits = tapegrad.tensor([0.2, 0.5, 0.9], dtype=tapegrad.float64, requires_grad=True)
    d = TD.OneHotCategoricalStraightThrough(logits=logits)
    x = d.rsample((3,))
    assert x.requires_grad and bool((x.detach().sum(-1) == 1).all())
    (x * tapegrad.tensor([1.0, 2.0, 3.0], dtype=tapegrad.float64)).sum().backward()
    p = logits.detach().softmax(-1)
    expected = 3 * p * (tapegrad.tensor([1.0, 2.0, 3.0], dtype=tapegrad.float64) - (p * tapegrad.tensor(
        [1.0, 2.0, 3.0], dtype=tapegrad.float64)).sum())
    np.testing.assert_allclose(logits.grad.numpy(), expected.numpy(), rtol=1e-12)


# ---- validation, expand, enumerate_support ------------------------------------------------------------

def _message(lib, build, kind):
    with pytest.raises(kind) as info:
        build(lib, TD if lib is tapegrad else PD)
    return type(info.value).__name__, fold_repr(str(info.value))


@pytest.mark.parametrize("build,kind", [
    (lambda lib, D: D.Dirichlet(lib.tensor(1.0)), ValueError),
    (lambda lib, D: D.Dirichlet(lib.tensor([1.0, -0.5])), ValueError),
    (lambda lib, D: D.Dirichlet(lib.tensor([1.0, 0.5])).log_prob(lib.tensor([0.5, 0.6])), ValueError),
    (lambda lib, D: D.Dirichlet(lib.tensor([1.0, 0.5])).log_prob(lib.tensor([0.5, 0.3, 0.2])), ValueError),
    (lambda lib, D: D.RelaxedBernoulli(lib.tensor(1.0)), ValueError),
    (lambda lib, D: D.RelaxedBernoulli(lib.tensor(1.0), probs=lib.tensor([1.5])), ValueError),
    (lambda lib, D: D.RelaxedBernoulli(lib.tensor(1.0), probs=lib.tensor([0.5])).log_prob(lib.tensor([1.5])),
     ValueError),
    (lambda lib, D: D.RelaxedOneHotCategorical(lib.tensor(1.0), probs=lib.tensor([0.5, -0.2])), ValueError),
    (lambda lib, D: D.RelaxedOneHotCategorical(lib.tensor(1.0), logits=lib.zeros(2)).log_prob(
        lib.tensor([0.5, 0.6])), ValueError),
    (lambda lib, D: D.OneHotCategoricalStraightThrough(lib.tensor([0.5, 0.5])).log_prob(lib.tensor([0.5, 0.5])),
     ValueError),
    (lambda lib, D: D.LowRankMultivariateNormal(lib.tensor(1.0), lib.ones(1, 1), lib.ones(1)), ValueError),
    (lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2), lib.ones(2)), ValueError),
    (lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(3, 1), lib.ones(2)), ValueError),
    (lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(3)), ValueError),
    (lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(3, 2), lib.ones(4, 2, 1), lib.ones(2)), ValueError),
    (lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.tensor([-10.0, 1.0])),
     ValueError),
    (lambda lib, D: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(lib.zeros(2), 1.0)), ValueError),
    (lambda lib, D: D.MixtureSameFamily(D.Categorical(lib.ones(2)), "normal"), ValueError),
    (lambda lib, D: D.MixtureSameFamily(D.Categorical(lib.ones(3)), D.Normal(lib.zeros(2), 1.0)), ValueError),
    (lambda lib, D: D.MixtureSameFamily(D.Categorical(lib.ones(2, 2)), D.Normal(lib.zeros(3, 2), 1.0)), ValueError),
    (lambda lib, D: D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.Independent(
        D.Normal(lib.zeros(2, 3), 1.0), 1)).log_prob(lib.ones(2)), ValueError),
    (lambda lib, D: D.MixtureSameFamily(D.Categorical(lib.ones(2)), D.Gamma(lib.ones(2), 1.0)).log_prob(
        lib.tensor(-1.0)), ValueError),
    (lambda lib, D: D.LogisticNormal(lib.zeros(2), lib.tensor([1.0, -1.0])), ValueError),
    (lambda lib, D: D.LogisticNormal(lib.zeros(2), lib.ones(2)).log_prob(lib.tensor([0.5, 0.6, 0.1])), ValueError),
], ids=["dirichlet-dim", "dirichlet-param", "dirichlet-support", "dirichlet-event-shape", "relaxed-neither",
        "relaxed-bernoulli-param", "relaxed-bernoulli-support", "relaxed-one-hot-param", "relaxed-one-hot-support",
        "straight-through-support", "lowrank-loc-dim", "lowrank-factor-dim", "lowrank-factor-shape",
        "lowrank-diag-shape", "lowrank-batch", "lowrank-param", "mixture-not-categorical", "mixture-component-type",
        "mixture-count", "mixture-batch", "mixture-event-shape", "mixture-support", "logistic-normal-param",
        "logistic-normal-support"])
def test_validation_errors_are_pytorchs(build, kind):
    assert _message(tapegrad, build, kind) == _message(torch, build, kind)


def _expandable(lib, D):
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    return [D.Dirichlet(t([[0.7, 2.0, 3.0], [1.5, 1.2, 4.0]])),
            D.RelaxedBernoulli(t(0.7), probs=t([0.2, 0.6])),
            D.relaxed_bernoulli.LogitRelaxedBernoulli(t(0.7), logits=t([0.2, 0.6])),
            D.RelaxedOneHotCategorical(t(0.8), logits=t([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]])),
            D.OneHotCategoricalStraightThrough(logits=t([[0.2, 0.5, 0.9], [1.0, 2.0, 3.0]])),
            D.MixtureSameFamily(D.Categorical(logits=t([0.1, 0.5, -0.3])),
                                D.Normal(t([[0.1, 0.2, -0.3], [1.0, 0.0, 2.0]]), t([1.0, 2.0, 0.5]))),
            D.LowRankMultivariateNormal(t([[0.1, 0.0, -0.2], [1.0, 2.0, 0.0]]), t(W32), t([1.0, 0.5, 2.0])),
            D.LogisticNormal(t([[0.1, 0.2, -0.3], [1.0, 0.0, 0.5]]), t([1.0, 2.0, 0.5]))]


def test_expand_broadcasts_batch_shape_and_keeps_scores():
    torch.manual_seed(0)
    for ours, theirs in zip(_expandable(tapegrad, TD), _expandable(torch, PD)):
        name = type(ours).__name__
        shape = (3,) + tuple(ours.batch_shape)
        e, f = ours.expand(shape), theirs.expand(shape)
        assert type(e) is type(ours), name
        assert (tuple(e.batch_shape), tuple(e.event_shape)) == (tuple(f.batch_shape), tuple(f.event_shape)), name
        assert e._validate_args == f._validate_args
        value = f.sample()
        np.testing.assert_allclose(e.log_prob(tapegrad.tensor(value.numpy())).numpy(), f.log_prob(value).numpy(),
                                   rtol=1e-10, err_msg=name)
        assert tuple(e.sample((2,)).shape) == tuple(f.sample((2,)).shape), name


def test_reprs_and_enumerate_support_are_pytorchs():
    for ours, theirs in zip(_expandable(tapegrad, TD), _expandable(torch, PD)):
        assert fold_repr(repr(ours)) == repr(theirs)
    for lib, D in ((tapegrad, TD), (torch, PD)):
        d = D.OneHotCategoricalStraightThrough(lib.tensor([[0.3, 0.7], [0.5, 0.5]]))
        supports = [d.enumerate_support(expand).tolist() for expand in (True, False)] + [d.has_enumerate_support]
        if lib is tapegrad:
            ours = supports
    assert ours == supports
