"""nn.utils.prune against PyTorch: same masks for the deterministic methods, same parameters, buffers,
state_dict keys, hooks and gradients."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.utils.prune as MP


def _pair(make):
    torch.manual_seed(0)
    ref = make(torch.nn).double()
    mine = make(nn).double()
    mine.load_state_dict({k: tg.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return ref, mine


def _same_module(ref, mine):
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in ref.named_buffers()]
    for (k, a), b in zip(ref.state_dict().items(), mine.state_dict().values()):
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy(), err_msg=k)


@pytest.mark.parametrize("prune", [
    lambda P, m: P.l1_unstructured(m, "weight", amount=0.3),
    lambda P, m: P.l1_unstructured(m, "bias", amount=2),
    lambda P, m: P.ln_structured(m, "weight", amount=0.5, n=2, dim=0),
    lambda P, m: P.ln_structured(m, "weight", amount=1, n=1, dim=1),
    lambda P, m: P.identity(m, "weight"),
])
def test_deterministic_masks_and_forward(prune):
    ref, mine = _pair(lambda m: m.Linear(5, 4))
    prune(TP, ref), prune(MP, mine)
    _same_module(ref, mine)
    assert TP.is_pruned(ref) and MP.is_pruned(mine)
    x = torch.randn(3, 5, dtype=torch.float64)
    t_out, m_out = ref(x), mine(tg.tensor(x.numpy()))
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    t_out.sum().backward(), m_out.sum().backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-12, err_msg=name)
    # The hook recomputes weight from weight_orig before each call.
    with torch.no_grad(), tg.no_grad():
        ref.weight_orig.add_(1.0) if hasattr(ref, "weight_orig") else ref.bias_orig.add_(1.0)
        mine.weight_orig.add_(1.0) if hasattr(mine, "weight_orig") else mine.bias_orig.add_(1.0)
    np.testing.assert_allclose(mine(tg.tensor(x.numpy())).detach().numpy(), ref(x).detach().numpy(), rtol=1e-12)
    name = "weight" if hasattr(ref, "weight_orig") else "bias"
    TP.remove(ref, name), MP.remove(mine, name)
    _same_module(ref, mine)
    assert not TP.is_pruned(ref) and not MP.is_pruned(mine)
    assert isinstance(mine.weight, nn.Parameter)


def test_global_unstructured_matches_torch():
    make = lambda m: m.Sequential(m.Linear(4, 6), m.ReLU(), m.Linear(6, 3))
    ref, mine = _pair(make)
    TP.global_unstructured([(ref[0], "weight"), (ref[2], "weight")], TP.L1Unstructured, amount=0.4)
    MP.global_unstructured([(mine[0], "weight"), (mine[2], "weight")], MP.L1Unstructured, amount=0.4)
    _same_module(ref, mine)


@pytest.mark.parametrize("method", ["random_unstructured", "random_structured"])
def test_random_methods_prune_the_requested_amount(method):
    mine = nn.Linear(10, 6)
    kwargs = {"dim": 0} if method == "random_structured" else {}
    getattr(MP, method)(mine, "weight", amount=0.5, **kwargs)
    mask = mine.weight_mask.numpy()
    if method == "random_structured":
        assert sorted(mask.sum(1).tolist()) == [0.0] * 3 + [10.0] * 3
    else:
        assert mask.sum() == 30
    np.testing.assert_array_equal(mine.weight.detach().numpy(), mine.weight_orig.detach().numpy() * mask)


def test_custom_pruning_method():
    class EveryOther:
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask

    ref, mine = _pair(lambda m: m.Linear(3, 2))
    for P, module in ((TP, ref), (MP, mine)):
        cls = type("EveryOther", (P.BasePruningMethod,), dict(EveryOther.__dict__))
        cls.apply(module, "weight")
    _same_module(ref, mine)


def test_errors():
    for P, lib in ((TP, torch), (MP, tg)):
        with pytest.raises(ValueError, match="should either be a float in the range"):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=1.5)
        with pytest.raises(ValueError, match="should be smaller than the number of parameters to prune"):
            P.l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=5)
        with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
            P.remove(lib.nn.Linear(2, 2), "weight")


# ---- parametrize ----

import torch.nn.utils.parametrize as TZ  # noqa: E402
import tapegrad.nn.utils.parametrize as MZ  # noqa: E402


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    return Symmetric()


def _split(lib):
    class Split(lib.nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, X):
            return X * 0.25, X * 0.75

    return Split()


@pytest.mark.parametrize("make_param", [_symmetric, _split])
def test_register_parametrization_matches_torch(make_param):
    ref, mine = _pair(lambda m: m.Linear(3, 3))
    TZ.register_parametrization(ref, "weight", make_param(torch))
    MZ.register_parametrization(mine, "weight", make_param(tg))
    assert type(mine).__name__ == type(ref).__name__ == "ParametrizedLinear"
    assert TZ.is_parametrized(ref, "weight") and MZ.is_parametrized(mine, "weight")
    assert not MZ.is_parametrized(mine, "bias")
    _same_module(ref, mine)
    np.testing.assert_allclose(mine.weight.detach().numpy(), ref.weight.detach().numpy(), rtol=1e-12)
    x = torch.randn(2, 3, dtype=torch.float64)
    t_out, m_out = ref(x), mine(tg.tensor(x.numpy()))
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
    t_out.sum().backward(), m_out.sum().backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-12, err_msg=name)
    with TZ.cached(), MZ.cached():
        assert mine.weight is mine.weight
    # Assigning goes through right_inverse (an error without one).
    w = torch.randn(3, 3, dtype=torch.float64)
    if make_param is _split:
        ref.weight, mine.weight = w, tg.tensor(w.numpy())
    else:
        with pytest.raises(RuntimeError, match="does not implement right_inverse"):
            ref.weight = w
        with pytest.raises(RuntimeError, match="does not implement right_inverse"):
            mine.weight = tg.tensor(w.numpy())
    _same_module(ref, mine)
    TZ.remove_parametrizations(ref, "weight"), MZ.remove_parametrizations(mine, "weight")
    assert type(mine) is nn.Linear
    _same_module(ref, mine)
    assert isinstance(mine.weight, nn.Parameter)


def test_parametrize_errors():
    for Z, lib in ((TZ, torch), (MZ, tg)):
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
            Z.register_parametrization(lib.nn.Linear(2, 2), "nope", _symmetric(lib))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    make = lambda m: m.Conv1d(2, 3, 2) if dim != 1 else m.Linear(4, 3)
    ref, mine = _pair(make)
    torch.nn.utils.parametrizations.weight_norm(ref, dim=dim)
    nn.utils.parametrizations.weight_norm(mine, dim=dim)
    assert type(mine).__name__ == type(ref).__name__
    _same_module(ref, mine)
    x = torch.randn(2, 2, 5, dtype=torch.float64) if dim != 1 else torch.randn(2, 4, dtype=torch.float64)
    t_out, m_out = ref(x), mine(tg.tensor(x.numpy()))
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    t_out.square().sum().backward(), m_out.square().sum().backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
