"""Random draws with complex dtypes against PyTorch: dtypes, shapes, the parts' distributions, errors.

The streams differ from PyTorch's, so distributions are compared by moments and ranges, with bounds
that a correct sampler of 40000 draws misses with negligible probability."""
import numpy as np
import pytest

import tapegrad
from conftest import both

N = (200, 200)

DRAWS = {
    "rand": lambda L, d: L.rand(*N, dtype=d),
    "randn": lambda L, d: L.randn(*N, dtype=d),
    "rand_like": lambda L, d: L.rand_like(L.zeros(*N, dtype=d)),
    "rand_like_dtype": lambda L, d: L.rand_like(L.zeros(*N), dtype=d),
    "randn_like": lambda L, d: L.randn_like(L.zeros(*N, dtype=d)),
    "uniform_": lambda L, d: L.zeros(*N, dtype=d).uniform_(2, 3),
    "normal_": lambda L, d: L.zeros(*N, dtype=d).normal_(1, 2),
    "normal_size": lambda L, d: L.normal(3.0, 2.0, N, dtype=d),
    "normal_tensor_mean": lambda L, d: L.normal(L.full(N, 1 + 2j, dtype=d), 2.0),
}


def _moments(t):
    parts = np.stack([np.asarray(t.real.double().tolist()), np.asarray(t.imag.double().tolist())])
    return parts.reshape(2, -1).mean(1), parts.reshape(2, -1).std(1), parts.min(axis=(1, 2)), parts.max(axis=(1, 2))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(DRAWS))
def test_distribution_as_pytorch(torch, name, dtype):
    torch.manual_seed(0)
    tapegrad.manual_seed(0)
    ours, theirs = both(lambda L: DRAWS[name](L, getattr(L, dtype)))
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.") == dtype
    assert tuple(ours.shape) == tuple(theirs.shape) == N
    (m, s, lo, hi), (tm, ts, tlo, thi) = _moments(ours), _moments(theirs)
    # the standard error of a mean of 40000 draws is std / 200; 6 of them is far beyond chance
    np.testing.assert_allclose(m, tm, atol=6 * max(ts) / 200 * 2)
    np.testing.assert_allclose(s, ts, rtol=0.03)
    if name.startswith(("rand_like", "rand", "uniform_")) and "randn" not in name:
        # uniform parts: both in PyTorch's [lo, hi), reaching near both ends
        np.testing.assert_allclose(lo, tlo, atol=1e-3)
        np.testing.assert_allclose(hi, thi, atol=1e-3)
        assert (lo >= tlo.round()).all() and (hi < thi.round()).all()


def test_parts_are_independent_and_requires_grad(torch):
    x = tapegrad.randn(*N, dtype=tapegrad.complex64)
    corr = np.corrcoef(np.asarray(x.real.flatten().tolist()), np.asarray(x.imag.flatten().tolist()))[0, 1]
    assert abs(corr) < 0.03
    ours, theirs = both(lambda L: L.rand(3, dtype=L.complex64, requires_grad=True))
    assert (ours.requires_grad, ours.is_leaf) == (theirs.requires_grad, theirs.is_leaf) == (True, True)


ERRORS = {
    "randint": lambda L, d: L.randint(0, 5, (3,), dtype=d),
    "randint_like": lambda L, d: L.randint_like(L.zeros(3, dtype=d), 5),
    "randperm": lambda L, d: L.randperm(3, dtype=d),
    "random_": lambda L, d: L.zeros(3, dtype=d).random_(),
    "random_to": lambda L, d: L.zeros(3, dtype=d).random_(5),
    "random_from_to": lambda L, d: L.zeros(3, dtype=d).random_(1, 5),
    "bernoulli_": lambda L, d: L.zeros(3, dtype=d).bernoulli_(0.5),
    "bernoulli_tensor_p": lambda L, d: L.zeros(3, dtype=d).bernoulli_(L.full((3,), 0.5)),
    "bernoulli": lambda L, d: L.bernoulli(L.zeros(3, dtype=d)),
    "bernoulli_p": lambda L, d: L.bernoulli(L.zeros(3, dtype=d), 0.5),
    "exponential_": lambda L, d: L.zeros(3, dtype=d).exponential_(),
    "exponential_int": lambda L, d: L.zeros(3, dtype=L.int64).exponential_(),
    "multinomial": lambda L, d: L.multinomial(L.ones(3, dtype=d), 2),
    "multinomial_int": lambda L, d: L.multinomial(L.ones(3, dtype=L.int64), 2),
    "poisson": lambda L, d: L.poisson(L.ones(3, dtype=d)),
    "standard_gamma": lambda L, d: L._standard_gamma(L.ones(3, dtype=d)),
}


def _raised(fn):
    try:
        fn()
    except Exception as e:   # the type and the message are compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_pytorch(torch, name, dtype):
    ours, theirs = both(lambda L: _raised(lambda: ERRORS[name](L, getattr(L, dtype))))
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1]), (ours[1], theirs[1])
