"""nn.init against PyTorch: gains, fans, bounds and moments of each distribution, in-place, no grad."""
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
from tapegrad.nn import init


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",),
                                  ("leaky_relu", 0.2), ("selu",), ("conv_transpose1d",)])
def test_calculate_gain(args):
    assert init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope .* not a valid number"):
        init.calculate_gain("leaky_relu", "x")


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3, 3), (4, 6, 2)])
def test_fans(shape):
    assert init._calculate_fan_in_and_fan_out(tg.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(tg.empty(3))


def _stats(t):
    a = t.detach().numpy().astype(np.float64)
    return a, a.min(), a.max(), a.mean(), a.std()


def test_uniform_and_normal_moments():
    tg.manual_seed(0)
    a, lo, hi, mean, std = _stats(init.uniform_(tg.empty(200, 200), -2.0, 3.0))
    assert -2.0 <= lo and hi < 3.0
    np.testing.assert_allclose([mean, std], [0.5, 5 / math.sqrt(12)], atol=0.02)
    a, lo, hi, mean, std = _stats(init.normal_(tg.empty(200, 200), 1.0, 0.5))
    np.testing.assert_allclose([mean, std], [1.0, 0.5], atol=0.01)


@pytest.mark.parametrize("fn,kwargs", [("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
                                       ("kaiming_uniform_", {"a": math.sqrt(5)}),
                                       ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}),
                                       ("kaiming_uniform_", {"nonlinearity": "tanh"})])
def test_fan_based_initialisers_match_torch_distribution(fn, kwargs):
    shape = (64, 32, 3, 3)
    mine = getattr(init, fn)(tg.empty(shape), **kwargs)
    ref = getattr(torch.nn.init, fn)(torch.empty(shape), **kwargs)
    _, _, _, mean, std = _stats(mine)
    np.testing.assert_allclose(std, ref.std().item(), rtol=0.03)
    assert abs(mean) < 0.05 * ref.std().item() + 1e-3
    if "uniform" in fn:
        bound = ref.abs().max().item()
        assert np.abs(mine.numpy()).max() <= bound * 1.001


def test_trunc_normal_bounds_and_constant_fills():
    tg.manual_seed(1)
    a, lo, hi, mean, std = _stats(init.trunc_normal_(tg.empty(100, 100), mean=0.5, std=1.0, a=-0.5, b=1.0))
    assert lo >= -0.5 and hi <= 1.0
    ref = torch.nn.init.trunc_normal_(torch.empty(100, 100), mean=0.5, std=1.0, a=-0.5, b=1.0)
    np.testing.assert_allclose([mean, std], [ref.mean().item(), ref.std().item()], atol=0.02)
    assert (init.constant_(tg.empty(2, 3), 0.25).numpy() == 0.25).all()
    assert (init.zeros_(tg.ones(3)).numpy() == 0).all()
    assert (init.ones_(tg.zeros(3)).numpy() == 1).all()
    np.testing.assert_array_equal(init.eye_(tg.empty(2, 3)).numpy(), np.eye(2, 3))


@pytest.mark.parametrize("shape", [(6, 4), (3, 8), (4, 2, 3)])
def test_orthogonal(shape):
    w = init.orthogonal_(tg.empty(shape), gain=2.0).numpy().reshape(shape[0], -1).astype(np.float64)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-5)


def test_initialisers_work_in_place_on_parameters_without_grad():
    p = nn.Parameter(tg.zeros(3, 4))
    storage = p._storage
    out = init.kaiming_uniform_(p)
    assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p._storage is storage and p._version > 0
    assert (p.detach().numpy() != 0).all()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        p.uniform_()


def test_generator_makes_draws_reproducible():
    g1, g2 = tg.Generator().manual_seed(7), tg.Generator().manual_seed(7)
    a = init.normal_(tg.empty(5), generator=g1).numpy()
    b = init.normal_(tg.empty(5), generator=g2).numpy()
    np.testing.assert_array_equal(a, b)
    tg.manual_seed(3)
    c = nn.Linear(4, 2).weight.detach().numpy()
    tg.manual_seed(3)
    np.testing.assert_array_equal(nn.Linear(4, 2).weight.detach().numpy(), c)


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((4, 4, 3, 2, 5), 2), ((2, 5, 3, 3), 1),
                                          ((6, 2, 4), 3)])
def test_dirac_is_pytorchs_identity_kernel(shape, groups):
    ours, theirs = tg.empty(shape), torch.empty(shape)
    assert tg.nn.init.dirac_(ours, groups) is ours
    torch.nn.init.dirac_(theirs, groups)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("shape,groups,message", [((3, 3), 1, "Only tensors with 3, 4, or 5 dimensions"),
                                                  ((3, 3, 3), 2, "dim 0 must be divisible by groups")])
def test_dirac_refuses_as_pytorch(shape, groups, message):
    for lib in (tg, torch):
        with pytest.raises(ValueError, match=message):
            lib.nn.init.dirac_(lib.empty(shape), groups)


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
                                  "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_names_warn_and_fill_as_pytorch(name):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = {"eye": (3, 4), "sparse": (4, 3), "dirac": (2, 2, 3)}.get(name, (3, 4))
    results = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        t = lib.empty(shape)
        with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`"):
            out = getattr(lib.nn.init, name)(t, *args)
        assert out is t
        results.append(t.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-7)
