"""Losses against PyTorch: values and input grads for every reduction and option (float64)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F


def _gen(seed):
    return torch.Generator().manual_seed(seed)


def _pair(t, requires_grad):
    a = t.detach().clone().requires_grad_(requires_grad)
    b = tg.tensor(t.numpy(), requires_grad=requires_grad)
    return a, b


def check_loss(name, args, grads, kwargs=None, module_kwargs=None):
    """args: torch tensors; grads: which need grad. Compares functional and module forms."""
    kwargs = kwargs or {}
    pairs = [_pair(a, g) for a, g in zip(args, grads)]
    t_args, m_args = [p[0] for p in pairs], [p[1] for p in pairs]
    conv = {k: (tg.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}
    expect = getattr(TF, name)(*t_args, **kwargs)
    got = getattr(F, name)(*m_args, **conv)
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = torch.randn(tuple(expect.shape), generator=_gen(3), dtype=expect.dtype)
    (expect * w).sum().backward()
    (got * tg.tensor(w.numpy())).sum().backward()
    for a, b in zip(t_args, m_args):
        if a.requires_grad:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9, atol=1e-12)
    return got


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=_gen(seed), dtype=torch.float64)


REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,extra", [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                        ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {"delta": 0.7})])
def test_regression_losses(name, extra, reduction):
    check_loss(name, [randn(3, 4), randn(3, 4, seed=1)], [True, True], dict(extra, reduction=reduction))


def _targets(*shape, classes, seed=5):
    return torch.randint(0, classes, shape, generator=_gen(seed))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("options", [{}, {"ignore_index": 1}, {"weight": torch.rand(5, generator=_gen(2),
                                                                                      dtype=torch.float64)},
                                     {"label_smoothing": 0.2}, {"label_smoothing": 0.1, "ignore_index": 2},
                                     {"label_smoothing": 0.3, "weight": torch.rand(5, generator=_gen(2),
                                                                                   dtype=torch.float64)}])
def test_cross_entropy_class_indices(options, reduction):
    target = _targets(6, classes=5)
    target[0] = options.get("ignore_index", 0)
    check_loss("cross_entropy", [randn(6, 5), target], [True, False], dict(options, reduction=reduction))


def test_cross_entropy_spatial_and_unbatched():
    check_loss("cross_entropy", [randn(2, 4, 3, 2), _targets(2, 3, 2, classes=4)], [True, False])
    check_loss("cross_entropy", [randn(4), torch.tensor(2)], [True, False])


@pytest.mark.parametrize("options", [{}, {"label_smoothing": 0.25}, {"weight": torch.rand(4, generator=_gen(2),
                                                                                        dtype=torch.float64)}])
def test_cross_entropy_probabilities(options):
    probs = torch.softmax(randn(3, 4, seed=4), dim=1)
    check_loss("cross_entropy", [randn(3, 4), probs], [True, True], options)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    logp = torch.log_softmax(randn(5, 3), 1)
    check_loss("nll_loss", [logp, _targets(5, classes=3)], [True, False],
               {"reduction": reduction, "weight": torch.tensor([0.2, 1.0, 3.0], dtype=torch.float64),
                "ignore_index": 0})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    x = torch.sigmoid(randn(4, 3))
    y = torch.rand(4, 3, generator=_gen(1), dtype=torch.float64)
    check_loss("binary_cross_entropy", [x, y], [True, True], {"reduction": reduction})
    check_loss("binary_cross_entropy", [x, y], [True, False], {"weight": randn(3, seed=7).abs()})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction):
    x, y = randn(4, 3) * 5, torch.rand(4, 3, generator=_gen(1), dtype=torch.float64)
    check_loss("binary_cross_entropy_with_logits", [x, y], [True, True], {"reduction": reduction})
    check_loss("binary_cross_entropy_with_logits", [x, y], [True, True],
               {"reduction": reduction, "pos_weight": randn(3, seed=2).abs(), "weight": randn(4, 1, seed=3).abs()})


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = torch.log_softmax(randn(3, 4), 1)
    y = torch.softmax(randn(3, 4, seed=1), 1)
    y[0, 0] = 0.0
    check_loss("kl_div", [x, y.log() if log_target else y], [True, True],
               {"reduction": reduction, "log_target": log_target})


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(reduction):
    check_loss("cosine_embedding_loss", [randn(4, 5), randn(4, 5, seed=1), torch.tensor([1, -1, -1, 1])],
               [True, True, False], {"margin": 0.1, "reduction": reduction})


def test_loss_modules_match_functional_and_print():
    x, t = randn(6, 5), _targets(6, classes=5)
    weight = torch.rand(5, generator=_gen(2), dtype=torch.float64)
    ref = torch.nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1)
    mine = nn.CrossEntropyLoss(weight=tg.tensor(weight.numpy()), label_smoothing=0.1)
    np.testing.assert_allclose(mine(tg.tensor(x.numpy()), tg.tensor(t.numpy())).item(), ref(x, t).item(),
                               rtol=1e-12)
    assert list(mine.state_dict()) == list(ref.state_dict()) == ["weight"]
    for cls in ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
                "BCEWithLogitsLoss", "KLDivLoss", "CosineEmbeddingLoss"]:
        assert repr(getattr(nn, cls)()) == repr(getattr(torch.nn, cls)())
    pw = torch.tensor([2.0, 0.5], dtype=torch.float64)
    ref = torch.nn.BCEWithLogitsLoss(pos_weight=pw, reduction="sum")
    mine = nn.BCEWithLogitsLoss(pos_weight=tg.tensor(pw.numpy()), reduction="sum")
    x, y = randn(3, 2), torch.rand(3, 2, generator=_gen(1), dtype=torch.float64)
    np.testing.assert_allclose(mine(tg.tensor(x.numpy()), tg.tensor(y.numpy())).item(), ref(x, y).item(),
                               rtol=1e-12)


def test_legacy_reduction_flags():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        loss = nn.MSELoss(size_average=False)
    assert loss.reduction == "sum"


def test_loss_errors_match_torch():
    x = tg.randn(3, 4)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(x, tg.zeros(3))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
        F.cross_entropy(x, tg.tensor([0, 1]))
    with pytest.raises(ValueError, match="is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="avg")
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, tg.zeros(4))
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(x, tg.zeros(4))


_WEIGHTED = {
    "cross_entropy": lambda F, lib, a, w: F.cross_entropy(a, lib.tensor([0, 2]), weight=w),
    "cross_entropy_smoothed": lambda F, lib, a, w: F.cross_entropy(a, lib.tensor([0, 2]), weight=w,
                                                                   label_smoothing=0.1),
    "cross_entropy_2d": lambda F, lib, a, w: F.cross_entropy(a.reshape(1, 3, 2, 1), lib.tensor([[[0], [2]]]), weight=w),
    "cross_entropy_probabilities": lambda F, lib, a, w: F.cross_entropy(a, a.detach().softmax(-1), weight=w),
    "nll_loss": lambda F, lib, a, w: F.nll_loss(a, lib.tensor([0, 2]), weight=w),
    "nll_loss_3d": lambda F, lib, a, w: F.nll_loss(a.unsqueeze(-1).expand(2, 3, 2), lib.tensor([[0, 2], [1, 1]]),
                                                    weight=w),
    "nll_loss_bad_target": lambda F, lib, a, w: F.nll_loss(a, lib.tensor([0.0, 2.0]), weight=w),
    "binary_cross_entropy": lambda F, lib, a, w: F.binary_cross_entropy(a.sigmoid(), a.detach().sigmoid(), weight=w),
    "multi_margin_loss": lambda F, lib, a, w: F.multi_margin_loss(a, lib.tensor([0, 2]), weight=w),
}


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("case", sorted(_WEIGHTED))
def test_a_class_weight_that_requires_grad_is_refused_as_torch_refuses_it(case, grad_mode):
    """PyTorch's nll_loss, nll_loss2d and binary_cross_entropy kernels do not differentiate their weight: with
    grad mode on, a weight that requires grad is refused before the kernel checks anything else (the
    class-probability cross entropy, a composite, differentiates it)."""
    def run(lib, F):
        a = lib.tensor([[0.3, -0.6, 0.7], [0.45, 0.2, -0.4]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)
        try:
            with lib.set_grad_enabled(grad_mode):
                out = _WEIGHTED[case](F, lib, a, w)
            return round(float(out), 10), out.requires_grad
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e).split(". This input")[0]
    ours, theirs = run(tg, F), run(torch, TF)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1] or ours[1].startswith(theirs[1])   # (tapegrad's message may add a fix)
