"""nn.utils.parametrizations.orthogonal / spectral_norm and the legacy hook-based weight_norm / spectral_norm
against PyTorch. Random streams differ, so tapegrad's modules load PyTorch's state (u, v, base) first."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn


def _load(ref, mine):
    mine.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})


def _same_state(ref, mine, rtol=1e-12, atol=0.0):
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    for (k, a), b in zip(ref.state_dict().items(), mine.state_dict().values()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol, err_msg=k)


def _run_both(ref, mine, x, rtol=1e-10, atol=1e-12):
    """One forward and backward in both; outputs and parameter gradients compared."""
    t_out, m_out = ref(x), mine(tg.tensor(x.numpy()))
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=rtol, atol=atol)
    (t_out ** 2).sum().backward()
    (m_out ** 2).sum().backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)


def _linear(n_in, n_out, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(n_in, n_out).double(), nn.Linear(n_in, n_out).double()


# ---- orthogonal ----

# one matrix_exp case: XLA compiles jax.scipy.linalg.expm and its VJP slowly (seconds per shape)
@pytest.mark.parametrize("shape,orth_map", [
    ((3, 3), None), ((4, 4), "cayley"), ((4, 4), "householder"),
    ((3, 5), None), ((5, 3), None), ((5, 3), "cayley")])
def test_orthogonal_matches_torch(shape, orth_map):
    n_in, n_out = shape
    ref, mine = _linear(n_in, n_out)
    _load(ref, mine)
    torch.nn.utils.parametrizations.orthogonal(ref, orthogonal_map=orth_map)
    nn.utils.parametrizations.orthogonal(mine, orthogonal_map=orth_map)
    assert type(mine).__name__ == "ParametrizedLinear"
    assert repr(mine) == repr(ref)
    # the initial weight is the Q factor of the old one: independent of the random columns added to `base`
    np.testing.assert_allclose(mine.weight.detach().numpy(), ref.weight.detach().numpy(), atol=1e-12)
    w = mine.weight.detach()
    gram = w.mT @ w if n_out >= n_in else w @ w.mT
    np.testing.assert_allclose(gram.numpy(), np.eye(min(shape)), atol=1e-12)
    _load(ref, mine)   # same base (its extra columns are random when the matrix is not square)
    with torch.no_grad():
        ref.parametrizations.weight.original.add_(0.1 * torch.randn(n_out, n_in, dtype=torch.float64))
    _load(ref, mine)
    if ref.parametrizations.weight[0].orthogonal_map.name == "matrix_exp":   # its VJP is matrix_exp's own
        with torch.no_grad(), tg.no_grad():
            np.testing.assert_allclose(mine.weight.numpy(), ref.weight.numpy(), atol=1e-12)
        return
    _run_both(ref, mine, torch.randn(2, n_in, dtype=torch.float64))


def test_orthogonal_assign_and_no_trivialization():
    ref, mine = _linear(4, 4)
    _load(ref, mine)
    torch.nn.utils.parametrizations.orthogonal(ref, "weight", "householder", use_trivialization=False)
    nn.utils.parametrizations.orthogonal(mine, "weight", "householder", use_trivialization=False)
    _same_state(ref, mine, atol=1e-12)
    _run_both(ref, mine, torch.randn(3, 4, dtype=torch.float64))
    q = torch.linalg.qr(torch.randn(4, 4, dtype=torch.float64))[0]
    ref.weight = q
    mine.weight = tg.tensor(q.numpy())
    np.testing.assert_allclose(mine.weight.detach().numpy(), ref.weight.detach().numpy(), atol=1e-12)
    for lib, error, phrase in ((torch, NotImplementedError, "not possible to assign"),
                               (tg, NotImplementedError, "not possible to assign")):
        m = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), use_trivialization=False)
        with pytest.raises(error, match=phrase):
            m.weight = lib.eye(3)


def test_orthogonal_errors():
    for lib in (torch, tg):
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "bias")
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "w")


# ---- spectral_norm (parametrization) ----

@pytest.mark.parametrize("n_iter", [1, 3])
def test_spectral_norm_parametrization(n_iter):
    ref, mine = _linear(5, 4)
    torch.nn.utils.parametrizations.spectral_norm(ref, n_power_iterations=n_iter)
    nn.utils.parametrizations.spectral_norm(mine, n_power_iterations=n_iter)
    assert repr(mine) == repr(ref)
    _load(ref, mine)   # u and v after PyTorch's 15 initial iterations
    _same_state(ref, mine)
    for _ in range(2):   # training: each forward runs n_iter power iterations, in place on u and v
        _run_both(ref, mine, torch.randn(2, 5, dtype=torch.float64))
        _same_state(ref, mine, rtol=1e-10)
    u, my_u = ref.parametrizations.weight[0]._u.clone(), mine.parametrizations.weight[0]._u.numpy().copy()
    ref.eval(), mine.eval()
    _run_both(ref, mine, torch.randn(2, 5, dtype=torch.float64))
    assert torch.equal(ref.parametrizations.weight[0]._u, u)
    np.testing.assert_array_equal(mine.parametrizations.weight[0]._u.numpy(), my_u)
    sigma = np.linalg.svd(mine.parametrizations.weight.original.detach().numpy(), compute_uv=False)[0]
    assert abs(np.linalg.svd(mine.weight.detach().numpy(), compute_uv=False)[0] - 1) < 1e-3 * sigma


def test_spectral_norm_parametrization_conv_transpose_and_errors():
    torch.manual_seed(0)
    ref = torch.nn.ConvTranspose1d(2, 3, 2).double()
    mine = nn.ConvTranspose1d(2, 3, 2).double()
    torch.nn.utils.parametrizations.spectral_norm(ref)
    nn.utils.parametrizations.spectral_norm(mine)
    assert mine.parametrizations.weight[0]._u.shape == ref.parametrizations.weight[0]._u.shape == (3,)
    _load(ref, mine)
    _run_both(ref, mine, torch.randn(1, 2, 4, dtype=torch.float64))
    for lib in (torch, tg):
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
        with pytest.raises(IndexError, match="Dimension out of range"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2)


# ---- legacy hook-based spectral_norm and weight_norm ----

def test_legacy_spectral_norm():
    torch.manual_seed(1)
    ref, mine = torch.nn.Conv1d(2, 3, 2).double(), nn.Conv1d(2, 3, 2).double()
    torch.nn.utils.spectral_norm(ref, n_power_iterations=2)
    nn.utils.spectral_norm(mine, n_power_iterations=2)
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in ref.named_buffers()] == ["weight_u", "weight_v"]
    _load(ref, mine)
    for _ in range(2):
        _run_both(ref, mine, torch.randn(2, 2, 5, dtype=torch.float64))
        _same_state(ref, mine, rtol=1e-10)
    ref.eval(), mine.eval()
    u, my_u = ref.weight_u.clone(), mine.weight_u.numpy().copy()
    _run_both(ref, mine, torch.randn(2, 2, 5, dtype=torch.float64))
    assert torch.equal(ref.weight_u, u) and np.array_equal(mine.weight_u.numpy(), my_u)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(mine)
    torch.nn.utils.remove_spectral_norm(ref), nn.utils.remove_spectral_norm(mine)
    assert isinstance(mine.weight, nn.Parameter) and not mine._forward_pre_hooks
    _same_state(ref, mine, rtol=1e-12)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(mine)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm(dim):
    ref, mine = _linear(4, 3)
    _load(ref, mine)
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        torch.nn.utils.weight_norm(ref, dim=dim)
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        nn.utils.weight_norm(mine, dim=dim)
    _same_state(ref, mine)
    assert mine.weight_g.shape == ref.weight_g.shape
    _run_both(ref, mine, torch.randn(2, 4, dtype=torch.float64))
    with torch.no_grad(), tg.no_grad():
        ref.weight_g.mul_(2), mine.weight_g.mul_(2)
    _run_both(ref, mine, torch.randn(2, 4, dtype=torch.float64))   # the hook recomputes the weight
    with warnings.catch_warnings(), pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        warnings.simplefilter("ignore")
        nn.utils.weight_norm(mine, dim=dim)
    torch.nn.utils.remove_weight_norm(ref), nn.utils.remove_weight_norm(mine)
    _same_state(ref, mine)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(mine)
