"""nn.functional and nn against PyTorch: margin, triplet and likelihood losses, unfold/fold, channel shuffle,
pdist, local response norm (and the legacy CrossMapLRN2d), gumbel softmax, alpha and 3-d dropout, Softmax2d,
InstanceNorm3d, the in-place activations and `_with_indices` aliases, lazy modules. Values, gradients, the
recorded graph's node names, reprs and errors. (The op-table kernels' float32/float64 and finite-difference
checks: tests/op_specs_nn_more.py.)"""
import copy
import warnings

import numpy as np
import pytest
import torch

from conftest import raised
import tapegrad as tg

RNG = np.random.default_rng(7)
X, Y, Z = (RNG.standard_normal((4, 5)) for _ in range(3))
SIGNS = np.sign(RNG.standard_normal((4, 5)))
IMAGES = RNG.standard_normal((2, 4, 3, 5))


def _graph(fn, depth=8):
    """A node's name and, below it, its inputs' graphs (PyTorch's structure, down to the leaves)."""
    if fn is None or depth == 0:
        return None
    return (type(fn).__name__, tuple(_graph(f, depth - 1) for f, _ in fn.next_functions))


def _run(lib, build, arrays, grads, kwargs):
    ts = [lib.tensor(a) for a in arrays]
    for t, g in zip(ts, grads):
        t.requires_grad_(g)
    kwargs = {k: (v(lib) if callable(v) and not isinstance(v, type) else v) for k, v in kwargs.items()}
    out = build(lib)(*ts, **kwargs)
    weights = lib.tensor(np.linspace(-1.0, 2.0, max(out.numel(), 1)).reshape(tuple(out.shape)))
    (out * weights).sum().backward()
    return out, [t.grad for t in ts]


def compare(build, arrays, grads=None, **kwargs):
    """build(lib) -> the function; arrays: float64 inputs; grads: which require grad (default: all)."""
    grads = grads or [True] * len(arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, their_grads = _run(torch, build, arrays, grads, kwargs)
        ours, our_grads = _run(tg, build, arrays, grads, kwargs)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype).split(".")[1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)
    assert _graph(ours.grad_fn) == _graph(theirs.grad_fn)
    return ours


def F(name):
    return lambda lib: getattr(lib.nn.functional, name)


REDUCTIONS = ["mean", "none"]   # (a sum is a mean's numerator: tests/op_specs_nn_more.py and the legacy flags' test)


# ---- losses -------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pair_and_sign_losses(reduction):
    compare(F("margin_ranking_loss"), [X[:, 0], Y[:, 0], SIGNS[:, 0]], [True, True, False], margin=0.3,
            reduction=reduction)
    compare(F("hinge_embedding_loss"), [X, SIGNS], [True, False], margin=0.5, reduction=reduction)
    compare(F("soft_margin_loss"), [X, SIGNS], [True, False], reduction=reduction)
    compare(F("multilabel_soft_margin_loss"), [X, (Y > 0) * 1.0, RNG.random(5)], [True, True, False],
            reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_class_margin_losses(reduction):
    listed = np.array([[3, 0, -1, 1, 1], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, 4, -1, 0, 2]])
    compare(F("multilabel_margin_loss"), [X, listed], [True, False], reduction=reduction)
    compare(F("multi_margin_loss"), [X, np.array([0, 3, 4, 1])], [True, False], reduction=reduction)
    compare(F("multi_margin_loss"), [X, np.array([0, 3, 4, 1])], [True, False], p=2, margin=0.7,
            weight=lambda lib: lib.tensor(np.linspace(0.5, 2.0, 5)), reduction=reduction)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_triplet_losses(reduction):
    compare(F("triplet_margin_loss"), [X, Y, Z], margin=0.5, p=3, reduction=reduction)
    compare(F("triplet_margin_loss"), [X, Y, Z], swap=True, reduction=reduction)
    compare(F("triplet_margin_with_distance_loss"), [X, Y, Z], swap=True, reduction=reduction)
    compare(F("triplet_margin_with_distance_loss"), [X, Y, Z], margin=2.0, reduction=reduction,
            distance_function=lambda lib: lambda a, b: 1.0 - lib.nn.functional.cosine_similarity(a, b))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_likelihood_losses(reduction):
    compare(F("poisson_nll_loss"), [X, np.abs(Y) * 3], [True, False], reduction=reduction)
    compare(F("poisson_nll_loss"), [np.abs(X), np.abs(Y) * 3], [True, False], log_input=False, full=True,
            eps=0.1, reduction=reduction)
    compare(F("gaussian_nll_loss"), [X, Y, np.abs(Z)], reduction=reduction)
    compare(F("gaussian_nll_loss"), [X, Y, np.abs(Z[:, 0])], full=True, reduction=reduction)   # one per row


def test_loss_shapes_and_variance_forms():
    compare(F("multi_margin_loss"), [X[0], np.array(2)], [True, False])
    compare(F("multi_margin_loss"), [X[0], np.array([2])], [True, False], reduction="none")
    compare(F("multilabel_margin_loss"), [X[0], np.array([2, 1, -1, 0, 0])], [True, False], reduction="none")
    compare(F("multilabel_soft_margin_loss"), [X[0], (Y[0] > 0) * 1.0], [True, False])
    compare(F("gaussian_nll_loss"), [IMAGES, IMAGES * 0.5, np.abs(IMAGES[:, :1]) * 0], eps=0.3)   # clamped var
    compare(lambda lib: lambda a, b: lib.nn.functional.gaussian_nll_loss(a, b, 0.7), [X, Y])


def test_legacy_reduction_flags_warn_and_override():
    for name, arrays, extra in (("soft_margin_loss", [X, SIGNS], {}), ("margin_ranking_loss", [X, Y, SIGNS], {}),
                                ("multilabel_soft_margin_loss", [X, (Y > 0) * 1.0], {}),
                                ("poisson_nll_loss", [X, np.abs(Y)], {}),
                                ("triplet_margin_loss", [X, Y, Z], {"swap": True})):
        for flags in ({"size_average": False}, {"reduce": False}):
            with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
                ours = getattr(tg.nn.functional, name)(*map(tg.tensor, arrays), **flags, **extra)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = getattr(torch.nn.functional, name)(*map(torch.tensor, arrays), **flags, **extra)
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


def test_loss_modules_match_functionals_and_reprs():
    w = np.linspace(0.5, 2.0, 5)
    modules = [
        (lambda nn, lib: nn.MarginRankingLoss(0.2), [X[:, 0], Y[:, 0], SIGNS[:, 0]]),
        (lambda nn, lib: nn.HingeEmbeddingLoss(margin=2.0, reduction="sum"), [X, SIGNS]),
        (lambda nn, lib: nn.SoftMarginLoss(reduction="none"), [X, SIGNS]),
        (lambda nn, lib: nn.MultiLabelSoftMarginLoss(lib.tensor(w)), [X, (Y > 0) * 1.0]),
        (lambda nn, lib: nn.MultiLabelMarginLoss(), [X, np.array([[1, -1, 0, 0, 0]] * 4)]),
        (lambda nn, lib: nn.MultiMarginLoss(p=2, margin=0.5, weight=lib.tensor(w)), [X, np.array([0, 1, 2, 3])]),
        (lambda nn, lib: nn.TripletMarginLoss(margin=0.5, p=1, swap=True), [X, Y, Z]),
        (lambda nn, lib: nn.TripletMarginWithDistanceLoss(swap=True), [X, Y, Z]),
        (lambda nn, lib: nn.PoissonNLLLoss(log_input=False, full=True), [np.abs(X), np.abs(Y)]),
        (lambda nn, lib: nn.GaussianNLLLoss(full=True, eps=0.01), [X, Y, np.abs(Z)]),
    ]
    for make, arrays in modules:
        ours, theirs = make(tg.nn, tg), make(torch.nn, torch)
        assert repr(ours) == repr(theirs)
        assert ours.state_dict().keys() == theirs.state_dict().keys()
        np.testing.assert_allclose(ours(*map(tg.tensor, arrays)).numpy(), theirs(*map(torch.tensor, arrays)).numpy(),
                                   rtol=1e-12)
    assert isinstance(tg.nn.modules.loss.GaussianNLLLoss(), tg.nn.GaussianNLLLoss)


def _errors_match(build):
    theirs, ours = raised(lambda: build(torch)), raised(lambda: build(tg))
    assert theirs is not None and ours is not None and ours[0] is theirs[0], (ours, theirs)
    # PyTorch's message, which tapegrad may follow with a hint
    assert ours[1].replace("tapegrad", "torch").startswith(theirs[1]), (ours[1], theirs[1])


LOSS_ERRORS = {
    "multilabel target size": lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(4, 5),
                                                                                   lib.zeros(4, 4).long()),
    "multilabel target range": lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(4, 5),
                                                                                    lib.full((4, 5), 7)),
    "multilabel float target": lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(4, 5), lib.ones(4, 5)),
    "multilabel rank": lambda lib: lib.nn.functional.multilabel_margin_loss(lib.ones(2, 3, 4),
                                                                            lib.zeros(2, 3, 4).long()),
    "multi target size": lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(4, 5), lib.zeros(3).long()),
    "multi target range": lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(4, 5), lib.full((4,), 7)),
    "multi p": lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(4, 5), lib.zeros(4).long(), p=3),
    "multi weight size": lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(4, 5), lib.zeros(4).long(),
                                                                         weight=lib.ones(3)),
    "multi weight rank": lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(4, 5), lib.zeros(4).long(),
                                                                         weight=lib.ones(5, 1)),
    "multi weight grad": lambda lib: lib.nn.functional.multi_margin_loss(
        lib.ones(4, 5), lib.zeros(4).long(), weight=lib.ones(5, requires_grad=True)),
    "multi long input": lambda lib: lib.nn.functional.multi_margin_loss(lib.ones(4, 5).long(), lib.zeros(4).long()),
    "soft margin target grad": lambda lib: lib.nn.functional.soft_margin_loss(lib.ones(3),
                                                                              lib.ones(3, requires_grad=True)),
    "soft margin reduction": lambda lib: lib.nn.functional.soft_margin_loss(lib.ones(3), lib.ones(3),
                                                                            reduction="avg"),
    "ranking dims": lambda lib: lib.nn.functional.margin_ranking_loss(lib.ones(4, 5), lib.ones(4, 5), lib.ones(5)),
    "triplet margin": lambda lib: lib.nn.functional.triplet_margin_loss(lib.ones(2), lib.ones(2), lib.ones(2),
                                                                        margin=0),
    "triplet dims": lambda lib: lib.nn.functional.triplet_margin_loss(lib.ones(2, 3), lib.ones(2, 3), lib.ones(3)),
    "distance triplet margin": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2), lib.ones(2), lib.ones(2), margin=-1),
    "distance triplet reduction": lambda lib: lib.nn.functional.triplet_margin_with_distance_loss(
        lib.ones(2), lib.ones(2), lib.ones(2), reduction="x"),
    "gaussian var size": lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(4, 5), lib.ones(4, 5),
                                                                         lib.ones(3)),
    "gaussian var negative": lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(4, 5), lib.ones(4, 5),
                                                                             -lib.ones(4, 5)),
    "gaussian float var negative": lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(2), lib.ones(2), -1.0),
    "gaussian reduction": lambda lib: lib.nn.functional.gaussian_nll_loss(lib.ones(2), lib.ones(2), lib.ones(2),
                                                                          reduction="x"),
    "multilabel soft reduction": lambda lib: lib.nn.functional.multilabel_soft_margin_loss(lib.ones(2, 3),
                                                                                           lib.ones(2, 3),
                                                                                           reduction="x"),
    "MultiMarginLoss weight": lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    "TripletMarginLoss margin": lambda lib: lib.nn.TripletMarginLoss(margin=0.0),
    "TripletMarginWithDistanceLoss margin": lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-0.5),
}


@pytest.mark.parametrize("case", sorted(LOSS_ERRORS))
def test_loss_errors_are_pytorchs(case):
    _errors_match(LOSS_ERRORS[case])


# ---- unfold / fold, channel shuffle, pdist ------------------------------------------------------

def test_unfold_fold_channel_shuffle():
    compare(F("unfold"), [IMAGES], kernel_size=(2, 3), dilation=(1, 2), padding=1, stride=(2, 1))
    compare(F("fold"), [RNG.standard_normal((2, 12, 21))], output_size=(6, 7), kernel_size=(2, 3),
            dilation=(1, 2), padding=(1, 0))
    compare(lambda lib: lib.channel_shuffle, [IMAGES[0]], groups=3)   # (more: tests/op_specs_nn_more.py)
    for name in ("Unfold", "Fold", "ChannelShuffle"):
        args = {"Unfold": ((2, 3),), "Fold": ((3, 5), 2), "ChannelShuffle": (2,)}[name]
        kwargs = {"ChannelShuffle": {}}.get(name, {"padding": 1, "stride": (1, 2)})
        assert repr(getattr(tg.nn, name)(*args, **kwargs)) == repr(getattr(torch.nn, name)(*args, **kwargs))


SHAPE_ERRORS = {
    "unfold 2-d": lambda lib: lib.nn.functional.unfold(lib.ones(3, 4), 2),
    "unfold 5-d": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4, 5), 2),
    "unfold empty channels": lambda lib: lib.nn.functional.unfold(lib.ones(1, 0, 3, 4), 2),
    "unfold too small": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4), 5),
    "unfold kernel": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4), 0),
    "unfold stride": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4), 2, stride=0),
    "unfold padding": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4), 2, padding=-1),
    "unfold dilation": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4), 2, dilation=0),
    "unfold three sizes": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4), (2, 2, 2)),
    "unfold long": lambda lib: lib.nn.functional.unfold(lib.ones(1, 2, 3, 4).long(), 2),
    "fold columns": lambda lib: lib.nn.functional.fold(lib.ones(1, 7, 6), (3, 4), 2),
    "fold blocks": lambda lib: lib.nn.functional.fold(lib.ones(1, 8, 5), (3, 4), 2),
    "fold rank": lambda lib: lib.nn.functional.fold(lib.ones(1, 1, 8, 6), (3, 4), 2),
    "fold output size": lambda lib: lib.nn.functional.fold(lib.ones(1, 8, 6), (3, 4, 5), 2),
    "channel_shuffle groups": lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 3, 2), 2),
    "channel_shuffle zero groups": lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 4, 2), 0),
    "channel_shuffle rank": lambda lib: lib.nn.functional.channel_shuffle(lib.ones(2, 4), 2),
    "native_channel_shuffle rank": lambda lib: lib.nn.functional.native_channel_shuffle(lib.ones(2, 4), 2),
    "pdist rank": lambda lib: lib.nn.functional.pdist(lib.ones(3)),
    "pdist p": lambda lib: lib.pdist(lib.ones(3, 2), -1),
    "pdist long": lambda lib: lib.pdist(lib.ones(3, 2).long()),
    "local_response_norm rank": lambda lib: lib.nn.functional.local_response_norm(lib.ones(2, 3), 2),
    "Softmax2d rank": lambda lib: lib.nn.Softmax2d()(lib.ones(2, 3)),
    "dropout3d p": lambda lib: lib.nn.functional.dropout3d(lib.ones(2, 3, 2, 2), 1.5),
    "alpha_dropout p": lambda lib: lib.nn.functional.alpha_dropout(lib.ones(2, 3), -0.5, True),
    "AlphaDropout p": lambda lib: lib.nn.AlphaDropout(2.0),
    "feature_alpha_dropout rank": lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(3), 0.5, True),
}


@pytest.mark.parametrize("case", sorted(SHAPE_ERRORS))
def test_shape_errors_are_pytorchs(case):
    _errors_match(SHAPE_ERRORS[case])


# ---- normalisation, softmax, in-place activations, pooling aliases ------------------------------

def test_local_response_norm_softmax2d_instance_norm3d():
    compare(F("local_response_norm"), [IMAGES], size=3)
    compare(F("local_response_norm"), [IMAGES[0]], size=2, alpha=0.1, beta=0.5, k=2.0)
    compare(lambda lib: lib.nn.LocalResponseNorm(3), [IMAGES])
    compare(lambda lib: lib.nn.Softmax2d(), [IMAGES])
    compare(lambda lib: lib.nn.InstanceNorm3d(4, affine=True).double(), [RNG.standard_normal((2, 4, 3, 2, 2))])
    for make in (lambda nn: nn.LocalResponseNorm(2), lambda nn: nn.Softmax2d(),
                 lambda nn: nn.InstanceNorm3d(3, track_running_stats=True, bias=False)):
        assert repr(make(tg.nn)) == repr(make(torch.nn))


def test_cross_map_lrn2d_is_pytorchs_legacy_formula():
    # PyTorch's own window and backward formula (not local_response_norm's, nor its forward's derivative)
    compare(lambda lib: lib.nn.CrossMapLRN2d(3, alpha=0.5, beta=0.75, k=1.0), [RNG.standard_normal((2, 5, 3, 3))])
    compare(lambda lib: lib.nn.CrossMapLRN2d(4, alpha=0.9, beta=0.6, k=2), [RNG.standard_normal((1, 3, 2, 2))])
    assert repr(tg.nn.CrossMapLRN2d(2)) == repr(torch.nn.CrossMapLRN2d(2))
    _errors_match(lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4)))


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.hardtanh_(x * 1, -0.5, 0.3),
    lambda lib, x: lib.nn.functional.max_pool1d_with_indices(x[0], 2, 1)[0],
    lambda lib, x: lib.nn.functional.max_pool2d_with_indices(x, 2, padding=1)[0],
    lambda lib, x: lib.nn.functional.max_pool3d_with_indices(x, 2)[0],
    lambda lib, x: lib.nn.functional.adaptive_max_pool1d_with_indices(x[0], 2)[0],
    lambda lib, x: lib.nn.functional.adaptive_max_pool2d_with_indices(x, (2, 3))[0],
    lambda lib, x: lib.nn.functional.adaptive_max_pool3d_with_indices(x, 2)[0],
])
def test_inplace_activations_and_pooling_aliases(call):
    compare(lambda lib: lambda x: call(lib, x), [IMAGES])


@pytest.mark.parametrize("name,args", [("elu_", (0.5,)), ("selu_", ()), ("celu_", (2.0,)), ("leaky_relu_", (0.2,))])
def test_inplace_activations_write_their_input(name, args):
    compare(lambda lib: lambda x: getattr(lib.nn.functional, name)(x * 1, *args), [IMAGES])   # *Backward1 nodes
    y = tg.tensor(IMAGES)
    assert getattr(tg.nn.functional, name)(y, *args) is y


def test_with_indices_return_both():
    outs = [lib.nn.functional.max_pool2d_with_indices(lib.tensor(IMAGES), 2) for lib in (torch, tg)]
    assert len(outs[1]) == 2
    np.testing.assert_array_equal(outs[1][1].numpy(), outs[0][1].numpy())
    samples = RNG.random((2, 4, 2))
    outs = [lib.nn.functional.fractional_max_pool2d_with_indices(lib.tensor(IMAGES), 2, output_size=(2, 3),
                                                                 _random_samples=lib.tensor(samples))
            for lib in (torch, tg)]
    for ours, theirs in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


# ---- random: gumbel softmax and dropout ---------------------------------------------------------

def test_gumbel_softmax_soft_and_hard():
    logits = tg.tensor(X, requires_grad=True)
    soft = tg.nn.functional.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), np.ones(4), rtol=1e-12)
    assert type(soft.grad_fn).__name__ == "SoftmaxBackward0"
    hard = tg.nn.functional.gumbel_softmax(logits, hard=True, dim=0)
    values = hard.detach().numpy()
    assert set(np.unique(values)) <= {0.0, 1.0} and (values.sum(0) == 1).all()
    assert type(hard.grad_fn).__name__ == "AddBackward0"
    # straight through: the gradient is the soft sample's, from the same draws
    tg.manual_seed(3)
    hard = tg.nn.functional.gumbel_softmax(logits, tau=2.0, hard=True)
    (hard * tg.tensor(Y)).sum().backward()
    tg.manual_seed(3)
    x2 = tg.tensor(X, requires_grad=True)
    (tg.nn.functional.gumbel_softmax(x2, tau=2.0) * tg.tensor(Y)).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        tg.nn.functional.gumbel_softmax(logits, eps=1e-3)
    # Gumbel-max: the hard sample picks class i with probability softmax(logits)_i
    tg.manual_seed(0)
    picks = tg.nn.functional.gumbel_softmax(tg.tensor(np.log([[0.1, 0.2, 0.7]]).repeat(4000, 0)), hard=True)
    np.testing.assert_allclose(picks.mean(0).numpy(), [0.1, 0.2, 0.7], atol=0.03)


def test_alpha_dropouts_keep_mean_and_variance():
    tg.manual_seed(0)
    x = tg.tensor(RNG.standard_normal((100, 100)))
    for out in (tg.nn.functional.alpha_dropout(x, 0.3, True), tg.nn.AlphaDropout(0.3)(x)):
        assert abs(out.mean().item()) < 0.05 and abs(out.std().item() - 1) < 0.05
        values, counts = np.unique(out.numpy(), return_counts=True)
        assert abs(counts.max() / out.numel() - 0.3) < 0.02   # every dropped element takes one value
    channels = tg.tensor(RNG.standard_normal((40, 40, 2, 2)))
    feature = tg.nn.functional.feature_alpha_dropout(channels, 0.5, True).numpy()
    flat = feature.reshape(40, 40, 4)
    values, counts = np.unique(flat, return_counts=True)
    low = flat == values[counts.argmax()]
    assert (low.all(-1) | ~low.any(-1)).all()   # a whole channel is dropped or none of it
    assert 0.4 < low.all(-1).mean() < 0.6
    for fn in (tg.nn.functional.alpha_dropout, tg.nn.functional.feature_alpha_dropout):
        assert fn(x) is x and fn(x, 0.5, True, inplace=False) is not x   # eval (training=False by default)
    inplace = x * 1
    assert tg.nn.functional.alpha_dropout(inplace, 0.5, True, inplace=True) is inplace
    model = tg.nn.FeatureAlphaDropout(0.2).eval()
    assert model(x) is x and repr(model) == repr(torch.nn.FeatureAlphaDropout(0.2))


def test_dropout3d_drops_whole_volumes():
    tg.manual_seed(1)
    for shape in ((1, 300, 2, 2, 2), (300, 2, 2, 2)):   # (the same noise shape: one kernel for both)
        x = tg.ones(shape, requires_grad=True)
        out = tg.nn.functional.dropout3d(x, 0.25)
        flat = out.detach().numpy().reshape(-1, 8)
        assert set(np.unique(flat)) <= {0.0, np.float32(1 / 0.75)}
        assert ((flat == 0).all(-1) | (flat != 0).all(-1)).all()
        theirs = torch.nn.functional.dropout3d(torch.ones(shape, requires_grad=True), 0.25)
        assert _graph(out.grad_fn) == _graph(theirs.grad_fn)
    x = tg.ones(300, 2, 2, 2)
    assert tg.nn.functional.dropout3d(x, 0.5, inplace=True) is x and set(np.unique(x.numpy())) <= {0.0, 2.0}
    batch = tg.ones(2, 3, 2, 2, 2)
    assert tg.nn.Dropout3d(0.5).eval()(batch) is batch   # (an unbatched input comes back as a squeezed view)
    with pytest.warns(UserWarning, match="Received a 3-D input to dropout3d"):
        tg.nn.functional.dropout3d(tg.ones(2, 3, 4), 0.5)
    assert repr(tg.nn.Dropout3d(inplace=True)) == repr(torch.nn.Dropout3d(inplace=True))


# ---- lazy modules -------------------------------------------------------------------------------

LAZY = [
    (lambda nn: nn.LazyLinear(3), (2, 5)),
    (lambda nn: nn.LazyLinear(3, bias=False), (4,)),
    (lambda nn: nn.LazyConv1d(4, 3, padding=1), (2, 6)),
    (lambda nn: nn.LazyConv2d(4, 3, groups=2), (1, 2, 5, 5)),
    (lambda nn: nn.LazyConvTranspose2d(4, 2, groups=2, bias=False), (1, 2, 3, 3)),
    (lambda nn: nn.LazyConvTranspose3d(2, 2), (1, 3, 2, 2, 2)),
    (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
    (lambda nn: nn.LazyBatchNorm2d(affine=False), (2, 3, 2, 2)),
    (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 4)),
    (lambda nn: nn.LazyInstanceNorm2d(affine=False, track_running_stats=False), (2, 3, 4, 4)),
    (lambda nn: nn.LazyInstanceNorm3d(bias=False), (2, 3, 2, 2, 2)),
]


def _state(module):
    return [(k, type(v).__name__) for k, v in module.state_dict().items()]


@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")
@pytest.mark.parametrize("index", range(len(LAZY)))
def test_lazy_module_becomes_its_ordinary_class(index):
    make, shape = LAZY[index]
    ours, theirs = make(tg.nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert _state(ours) == _state(theirs)
    assert [type(p).__name__ for p in ours.parameters()] == [type(p).__name__ for p in theirs.parameters()]
    assert ours.has_uninitialized_params() == theirs.has_uninitialized_params()
    data = RNG.standard_normal(shape)
    out = ours(tg.tensor(data, dtype=tg.float32))
    expected = theirs(torch.tensor(data, dtype=torch.float32))
    assert type(ours).__name__ == type(theirs).__name__
    assert repr(ours) == repr(theirs) and tuple(out.shape) == tuple(expected.shape)
    assert [(n, tuple(p.shape), type(p).__name__) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape), type(p).__name__) for n, p in theirs.named_parameters()]
    assert [(n, tuple(b.shape)) for n, b in ours.named_buffers()] == \
        [(n, tuple(b.shape)) for n, b in theirs.named_buffers()]
    # parameters are now the ordinary module's: loading PyTorch's values gives PyTorch's result
    ours.load_state_dict({k: tg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(tg.tensor(data, dtype=tg.float32)).detach().numpy(),
                               theirs(torch.tensor(data, dtype=torch.float32)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_lazy_module_loads_state_and_trains():
    ours = tg.nn.LazyLinear(3)
    ours.load_state_dict(tg.nn.Linear(4, 3).state_dict())
    assert type(ours) is tg.nn.LazyLinear and tuple(ours.weight.shape) == (3, 4)
    assert type(ours.weight) is tg.nn.Parameter and not ours.has_uninitialized_params()
    _errors_match(lambda lib: (lambda m: (m.load_state_dict(lib.nn.Linear(4, 3).state_dict()), m(lib.ones(2, 5))))(
        lib.nn.LazyLinear(3)))
    ours(tg.ones(2, 4))
    assert type(ours) is tg.nn.Linear and ours.in_features == 4
    # placeholders follow the module's dtype conversions and copies
    doubled = copy.deepcopy(tg.nn.LazyBatchNorm1d()).double()
    assert type(doubled.weight).__name__ == "UninitializedParameter" and doubled.running_mean.dtype is tg.float64
    doubled(tg.ones(4, 3, dtype=tg.float64))
    assert doubled.weight.dtype is tg.float64 and tuple(doubled.running_var.shape) == (3,)
    model = tg.nn.Sequential(tg.nn.LazyLinear(4), tg.nn.ReLU(), tg.nn.LazyLinear(1))
    optimizer = tg.optim.SGD(model.parameters(), lr=0.1)   # PyTorch accepts the placeholders too
    x = tg.randn(8, 6)
    model(x).sum().backward()
    before = model[0].weight.detach().clone()
    optimizer.step()
    assert type(model[0]) is tg.nn.Linear and model[0].in_features == 6 and model[2].in_features == 4
    assert not np.allclose(before.numpy(), model[0].weight.detach().numpy())


def test_uninitialized_placeholders_and_buffer():
    p, b = tg.nn.parameter.UninitializedParameter(), tg.nn.UninitializedBuffer(dtype=tg.float64)
    assert repr(p) == repr(torch.nn.parameter.UninitializedParameter()) == "<UninitializedParameter>"
    assert repr(b) == "<UninitializedBuffer>" and b.dtype is tg.float64 and p.requires_grad and not b.requires_grad
    their_p = torch.nn.parameter.UninitializedParameter()
    _errors_match(lambda lib: (p if lib is tg else their_p).shape)
    error = raised(lambda: p.sum())
    assert error[0] is ValueError and error[1].startswith("Attempted to use an uninitialized parameter in")
    p.materialize((2, 3))
    b.materialize((4,))
    assert type(p) is tg.nn.Parameter and tuple(p.shape) == (2, 3) and p.requires_grad
    assert type(b) is tg.Tensor and b.dtype is tg.float64
    module = tg.nn.Module()
    module.kept = tg.nn.Buffer(tg.ones(2))
    module.scratch = tg.nn.Buffer(tg.zeros(1), persistent=False)
    assert list(module._buffers) == ["kept", "scratch"] and list(module.state_dict()) == ["kept"]
    assert isinstance(module.kept, tg.nn.Buffer) and not isinstance(tg.ones(1), tg.nn.Buffer)
    assert type(tg.nn.Buffer(tg.ones(1))) is tg.Tensor
    _errors_match(lambda lib: lib.nn.LazyConv2d(4, 3)(lib.ones(5, 5)))
    _errors_match(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5)))


def test_names_are_where_pytorch_has_them():
    import tapegrad.nn.modules as M
    for path in ("modules.linear.LazyLinear", "modules.conv.LazyConvTranspose3d", "modules.batchnorm.LazyBatchNorm3d",
                 "modules.instancenorm.LazyInstanceNorm3d", "modules.instancenorm.InstanceNorm3d",
                 "modules.lazy.LazyModuleMixin", "modules.loss.TripletMarginWithDistanceLoss",
                 "modules.normalization.LocalResponseNorm", "modules.normalization.CrossMapLRN2d",
                 "modules.fold.Fold", "modules.fold.Unfold",
                 "modules.channelshuffle.ChannelShuffle", "modules.activation.Softmax2d",
                 "modules.dropout.FeatureAlphaDropout", "parameter.UninitializedBuffer", "parameter.Buffer",
                 "functional.multilabel_margin_loss", "functional.pdist", "functional.native_channel_shuffle",
                 "functional.adaptive_max_pool3d_with_indices", "functional.leaky_relu_", "UninitializedParameter"):
        obj = tg.nn
        for part in path.split("."):
            obj = getattr(obj, part)
        assert obj is not None
    assert M.LazyLinear is tg.nn.LazyLinear and tg.pdist is tg.nn.functional.pdist
