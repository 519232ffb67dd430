"""nn.functional's and linalg's functions PyTorch also has at the top level (torch.conv2d, torch.max_pool1d,
torch.pinverse, torch.batch_norm, torch.embedding, ...): ATen's signatures (max_pool's empty stride, no
return_indices, the norms' and embedding's argument order, the losses' integer reduction), PyTorch's values."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised, require

torch = require("torch")

_X = np.random.default_rng(0).standard_normal((2, 4, 6, 6, 6))
CALLS = {
    "max_pool1d": lambda lib, x: lib.max_pool1d(x[:, :, 0, 0], 2),
    "max_pool1d keywords": lambda lib, x: lib.max_pool1d(input=x[:, :, 0, 0], kernel_size=3, stride=2, padding=1,
                                                         dilation=1, ceil_mode=True),
    "max_pool2d": lambda lib, x: lib.max_pool2d(x[:, :, 0], (2, 3), (1, 2), 1),
    "max_pool2d empty stride": lambda lib, x: lib.max_pool2d(x[:, :, 0], 2, []),
    "max_pool3d": lambda lib, x: lib.max_pool3d(x, 2, dilation=2),
    "avg_pool1d": lambda lib, x: lib.avg_pool1d(x[:, :, 0, 0], 3, 2, 1, count_include_pad=False),
    "adaptive_avg_pool1d": lambda lib, x: lib.adaptive_avg_pool1d(x[:, :, 0, 0], 4),
    "conv1d": lambda lib, x: lib.conv1d(x[:, :, 0, 0], x[:3, :, 0, 0, :3], padding=1),
    "conv2d": lambda lib, x: lib.conv2d(x[:, :, 0], x[0, :, :3, :3].transpose(0, 1), x[0, 0, 0, 0, :3], stride=2),
    "conv3d": lambda lib, x: lib.conv3d(x, x[:3, :, :2, :2, :2], groups=1),
    "conv_transpose1d": lambda lib, x: lib.conv_transpose1d(x[:, :, 0, 0], x[0, :, :3, 0, :3], stride=2),
    "conv_transpose2d": lambda lib, x: lib.conv_transpose2d(x[:, :, 0], x[0, :, :3, :3, :3]),
    "conv_transpose3d": lambda lib, x: lib.conv_transpose3d(x, x[0, :, :2, :2, :2].unsqueeze(1)),
    "cosine_similarity": lambda lib, x: lib.cosine_similarity(x[0], x[1]),
    "pairwise_distance": lambda lib, x: lib.pairwise_distance(x[0, 0], x[1, 0], 3.0, keepdim=True),
    "pixel_shuffle": lambda lib, x: lib.pixel_shuffle(x[:, :, 0], 2),
    "pixel_unshuffle": lambda lib, x: lib.pixel_unshuffle(x[:, :, 0], 3),
    "pinverse": lambda lib, x: lib.pinverse(x[0, 0, 0, :4]),
    "pinverse rcond": lambda lib, x: lib.pinverse(x[0, 0, 0], 0.5),
    "Tensor.pinverse": lambda lib, x: x[0, 0].pinverse(rcond=0.1),
    "dropout eval": lambda lib, x: lib.dropout(x, 0.5, False),
    "dropout p=1": lambda lib, x: lib.dropout(x, 1.0, True),
    "alpha_dropout eval": lambda lib, x: lib.alpha_dropout(x, 0.5, train=False),
    "alpha_dropout p=1": lambda lib, x: lib.alpha_dropout(x, 1.0, True),
    "feature_alpha_dropout p=0": lambda lib, x: lib.feature_alpha_dropout(x, 0.0, True),
    "batch_norm training": lambda lib, x: lib.batch_norm(x[:, :, 0, 0], x[0, :, 0, 0, 0], x[1, :, 0, 0, 0], None,
                                                         None, True, 0.1, 1e-5, False),
    "batch_norm one value per channel": lambda lib, x: lib.batch_norm(x[:1, :, 0, 0, 0], None, None, None, None,
                                                                      True, 0.1, 1e-5, True),
    "batch_norm eval": lambda lib, x: lib.batch_norm(x[:, :, 0], None, x[1, :, 0, 0, 0], x[0, :, 0, 0, 0].detach(),
                                                     x[1, :, 0, 0, 0].detach().abs(), False, 0.1, 1e-3, False),
    "instance_norm": lambda lib, x: lib.instance_norm(x[:, :, 0, 0], x[0, :, 0, 0, 0], None, None, None, True,
                                                      0.1, 1e-5, False),
    "instance_norm one spatial element": lambda lib, x: lib.instance_norm(x[:, :, :1, 0, 0], None, None, None, None,
                                                                          True, 0.1, 1e-5, False),
    "layer_norm": lambda lib, x: lib.layer_norm(x[:, :, 0], [6, 6], x[0, 0, 0], x[1, 0, 0], 1e-3, False),
    "layer_norm defaults": lambda lib, x: lib.layer_norm(x, (6,)),
    "group_norm": lambda lib, x: lib.group_norm(x[:, :, 0], 2, x[0, :, 0, 0, 0], None, 1e-5, True),
    "embedding": lambda lib, x: lib.embedding(x[0, 0, 0], lib.tensor([[1, 2], [1, 5]])),
    "embedding padding_idx": lambda lib, x: lib.embedding(x[0, 0, 0], lib.tensor([[1, 2], [1, 5]]), 1),
    "embedding padding_idx past the rows": lambda lib, x: lib.embedding(x[0, 0, 0], lib.tensor([1, 2]), 9),
    "embedding scale_grad_by_freq": lambda lib, x: lib.embedding(x[0, 0, 0], lib.tensor([[1, 2], [1, 1]]), -1,
                                                                 True),
    "embedding scale_grad_by_freq padding_idx": lambda lib, x: lib.embedding(
        weight=x[0, 0, 0], indices=lib.tensor([4, 2, 4, 2, 2]), padding_idx=2, scale_grad_by_freq=True),
    "celu": lambda lib, x: lib.celu(x, 0.5),
    "selu": lambda lib, x: lib.selu(x),
    "celu_": lambda lib, x: lib.celu_(x * 1, 2.0),
    "selu_": lambda lib, x: lib.selu_(x * 1),
    "threshold_": lambda lib, x: lib.threshold_(x * 1, 0.1, 2.0),
    "rrelu_ eval": lambda lib, x: lib.rrelu_(x * 1, 0.1, 0.3),
    "bilinear": lambda lib, x: lib.bilinear(x[0, 0, 0], x[1, 0, 0], x[0, :2, 0], x[0, 0, 0, 0, :2]),
    "cosine_embedding_loss": lambda lib, x: lib.cosine_embedding_loss(
        x[0, 0, 0], x[1, 0, 0], lib.tensor([1., -1, 1, -1, 1, 1], dtype=lib.float64), 0.2, 1),
    "cosine_embedding_loss no reduction": lambda lib, x: lib.cosine_embedding_loss(
        x[0, 0, 0], x[1, 0, 0], lib.tensor([1., -1, 1, -1, 1, 1], dtype=lib.float64)),
    "hinge_embedding_loss": lambda lib, x: lib.hinge_embedding_loss(x[0, 0, 0], x[1, 0, 0].sign().detach(), 0.5, 2),
    "hinge_embedding_loss no reduction": lambda lib, x: lib.hinge_embedding_loss(x[0, 0], x[1, 0].sign().detach()),
    "margin_ranking_loss": lambda lib, x: lib.margin_ranking_loss(x[0, 0, 0], x[1, 0, 0],
                                                                  x[0, 1, 0].sign().detach(), 0.1, 1),
    "margin_ranking_loss no reduction": lambda lib, x: lib.margin_ranking_loss(x[0, 0, 0], x[1, 0, 0],
                                                                               x[0, 1, 0].sign().detach()),
    "triplet_margin_loss": lambda lib, x: lib.triplet_margin_loss(x[0, 0, 0], x[1, 0, 0], x[0, 1, 0], 1.0, 3, 1e-6,
                                                                  False, 1),
    "triplet_margin_loss swap": lambda lib, x: lib.triplet_margin_loss(x[0, 0, 0], x[1, 0, 0], x[0, 1, 0],
                                                                       swap=True, reduction=2),
    "triplet_margin_loss no reduction": lambda lib, x: lib.triplet_margin_loss(x[0, 0], x[1, 0], x[0, 1]),
    "poisson_nll_loss log_input full": lambda lib, x: lib.poisson_nll_loss(x[0, 0], x[1, 0].abs().detach() * 3,
                                                                           True, True, 1e-8, 1),
    "poisson_nll_loss": lambda lib, x: lib.poisson_nll_loss(x[0, 0].abs(), x[1, 0].abs().detach() * 3, False,
                                                            False, 1e-8, 0),
    "poisson_nll_loss full sum": lambda lib, x: lib.poisson_nll_loss(x[0, 0].abs(), x[1, 0].abs().detach() * 3,
                                                                     False, True, 0.5, 2),
    "adaptive_max_pool1d": lambda lib, x: lib.adaptive_max_pool1d(x[:, :, 0, 0], 4)[0],
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_top_level_alias_is_pytorchs(case):
    ours_x, theirs_x = tapegrad.tensor(_X).requires_grad_(), torch.tensor(_X).requires_grad_()
    ours, theirs = CALLS[case](tapegrad, ours_x), CALLS[case](torch, theirs_x)
    assert_close(ours, theirs.detach())
    ours.sum().backward()
    theirs.sum().backward()
    assert_close(ours_x.grad, theirs_x.grad)


def test_max_pool_takes_atens_arguments_only():
    for lib in (tapegrad, torch):
        with pytest.raises(TypeError):
            lib.max_pool1d(lib.ones(1, 1, 4), 2, return_indices=True)


@pytest.mark.parametrize("reduction", [0, 1, 2, 3, -1, "mean", 1.0])
def test_atens_losses_take_an_integer_reduction(reduction):
    # 1 mean, 2 sum, any other integer none; anything but an int is a TypeError naming the argument
    for name, call in [("poisson_nll_loss", lambda lib, x: lib.poisson_nll_loss(x, x, True, False, 1e-8, reduction)),
                       ("kl_div", lambda lib, x: lib.kl_div(x, x, reduction)),
                       ("hinge_embedding_loss", lambda lib, x: lib.hinge_embedding_loss(x, x, 1.0, reduction)),
                       ("margin_ranking_loss", lambda lib, x: lib.margin_ranking_loss(x, x, x, 0.0, reduction)),
                       ("triplet_margin_loss", lambda lib, x: lib.triplet_margin_loss(x, x, x, 1.0, 2, 1e-6, False,
                                                                                       reduction)),
                       ("cosine_embedding_loss", lambda lib, x: lib.cosine_embedding_loss(x, x, x[:, 0], 0.0,
                                                                                           reduction))]:
        x = _X[0, :, 0, 0]
        mine = raised(lambda: call(tapegrad, tapegrad.tensor(x)))
        theirs = raised(lambda: call(torch, torch.tensor(x)))
        if theirs is not None:
            assert mine is not None and mine[0] is theirs[0] and mine[1].startswith(theirs[1]), name
            continue
        assert mine is None, (name, mine)
        assert_close(call(tapegrad, tapegrad.tensor(x)), call(torch, torch.tensor(x)))


def test_atens_errors_are_pytorchs():
    x = _X[0, :, :2, 0, 0]
    cases = {
        "dropout p": lambda lib, x: lib.dropout(x, 1.5, True),
        "alpha_dropout p": lambda lib, x: lib.alpha_dropout(x, -0.5, False),
        "feature_alpha_dropout 1-d": lambda lib, x: lib.feature_alpha_dropout(x[0], 0.5, True),
        "embedding 1-d weight": lambda lib, x: lib.embedding(x[0], lib.tensor([1])),
        "embedding float indices": lambda lib, x: lib.embedding(x, x),
        "embedding index out of range": lambda lib, x: lib.embedding(x, lib.tensor([7])),
        "batch_norm 1-d": lambda lib, x: lib.batch_norm(x[0], None, None, None, None, True, 0.1, 1e-5, False),
        "group_norm groups": lambda lib, x: lib.group_norm(x, 3),
        "layer_norm shape": lambda lib, x: lib.layer_norm(x, [3]),
        "triplet dims": lambda lib, x: lib.triplet_margin_loss(x, x, x[0]),
        "get_device of a number": lambda lib, x: lib.get_device(3),
    }
    for name, call in cases.items():
        mine, theirs = raised(lambda: call(tapegrad, tapegrad.tensor(x))), raised(lambda: call(torch, torch.tensor(x)))
        assert theirs is not None and mine is not None, name
        assert mine[0] is theirs[0] and mine[1].startswith(theirs[1]), (name, mine, theirs)


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_keeps_or_drops_as_pytorchs(feature):
    # Random, so each library is checked against PyTorch's formula: a kept element is x * a + alpha * a * p and
    # its gradient a; a dropped one is alpha * a * (p - 1) with gradient 0 (feature dropout: per sample, channel).
    p, alpha = 0.3, 1.7580993408473766
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    for lib in (tapegrad, torch):
        x = lib.tensor(_X[:, :, :, 0, 0]).requires_grad_()
        out = (lib.feature_alpha_dropout if feature else lib.alpha_dropout)(x, p, True)
        assert type(out.grad_fn).__name__ == "AddBackward0"
        out.sum().backward()
        kept = x.grad.detach().numpy() != 0
        np.testing.assert_allclose(x.grad.numpy()[kept], a)
        values = out.detach().numpy()
        np.testing.assert_allclose(values[kept], _X[:, :, :, 0, 0][kept] * a + alpha * a * p)
        np.testing.assert_allclose(values[~kept], alpha * a * (p - 1))
        assert kept.any() and not kept.all()
        if feature:
            assert (kept == kept[:, :, :1]).all()


def test_adaptive_max_pool1d_returns_values_and_indices():
    ours = tapegrad.adaptive_max_pool1d(tapegrad.tensor(_X[:, :, 0, 0]), 4)
    theirs = torch.adaptive_max_pool1d(torch.tensor(_X[:, :, 0, 0]), 4)
    assert isinstance(ours, tuple) and len(ours) == 2
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])


def test_detach_get_device_is_inference():
    for lib in (tapegrad, torch):
        x = lib.ones(3, requires_grad=True)
        d = lib.detach(x)
        assert not d.requires_grad and d.grad_fn is None
        d[0] = 5.0   # shares x's storage
        assert x[0].item() == 5.0
        assert lib.get_device(x) == -1 and x.get_device() == -1
        assert not lib.is_inference(x)
        with lib.inference_mode():
            y = lib.ones(2)
        assert lib.is_inference(y) and y.is_inference()
