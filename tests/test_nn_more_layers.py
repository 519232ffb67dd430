"""Layers and functions composed of other ops (no op-table entry of their own) against PyTorch: recurrent
cells, padding, pixel shuffle, upsampling, instance norm, distances, the shrink/sigmoid activations as modules,
diff, meshgrid, finfo/iinfo."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn

from test_nn_layers import check_layer, randn

LAYERS = {
    "rnn_cell_relu_no_hx": (lambda n: n.RNNCell(3, 4, bias=False, nonlinearity="relu"), [randn(2, 3)]),
    "gru_cell_unbatched_no_bias": (lambda n: n.GRUCell(3, 4, bias=False), [randn(3), randn(4)]),
    "pixel_shuffle": (lambda n: n.Sequential(n.PixelShuffle(2), n.PixelUnshuffle(2), n.PixelShuffle(2)),
                      [randn(2, 8, 2, 3)]),
    # the 2d pads see the 1d pads' (2, 3, 9) result as one unbatched (C, H, W) image
    "padding": (lambda n: n.Sequential(n.ReflectionPad1d((1, 2)), n.ReplicationPad1d(1), n.ReplicationPad2d((1, 0, 2, 1)),
                                       n.ReflectionPad2d(1)), [randn(2, 3, 4)]),
    "upsample": (lambda n: n.Upsample(scale_factor=2, mode="bilinear", align_corners=False), [randn(1, 2, 3, 2)]),
    "instance_norm_1d": (lambda n: n.InstanceNorm1d(3), [randn(2, 3, 5)]),
    "instance_norm_2d_affine_stats": (lambda n: n.InstanceNorm2d(3, affine=True, track_running_stats=True),
                                      [randn(2, 3, 2, 3)]),
    "instance_norm_unbatched": (lambda n: n.InstanceNorm1d(3, affine=True), [randn(3, 4)]),
    "cosine_similarity": (lambda n: n.CosineSimilarity(dim=-1), [randn(3, 4), randn(4)]),
    "pairwise_distance": (lambda n: n.PairwiseDistance(p=3.0, keepdim=True), [randn(3, 4), randn(3, 4)]),
    "prelu": (lambda n: n.PReLU(3, 0.1), [randn(2, 3, 4)]),
    "activations": (lambda n: n.Sequential(n.Hardswish(), n.Softshrink(0.3), n.Hardsigmoid(), n.Threshold(0.55, -1.0),
                                           n.Hardshrink(0.2), n.Tanhshrink(), n.LogSigmoid(), n.GLU(0), n.Mish(),
                                           n.RReLU()),
                    [randn(4, 3) * 4]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name):
    make, inputs = LAYERS[name]
    check_layer(make, *inputs, train=not name.startswith("activations"))


def test_instance_norm_in_eval():
    ref, mine = check_layer(lambda n: n.InstanceNorm1d(3, track_running_stats=True), randn(2, 3, 5))
    ref.eval(), mine.eval()
    x = randn(2, 3, 5).double()
    np.testing.assert_allclose(mine(tg.tensor(x.numpy())).numpy(), ref(x).numpy(), rtol=1e-12)


def test_lstm_cell_with_state_over_steps():
    torch.manual_seed(0)
    ref = torch.nn.LSTMCell(2, 3).double()
    mine = nn.LSTMCell(2, 3).double()
    mine.load_state_dict({k: tg.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    assert repr(mine) == repr(ref)
    xs = randn(3, 2, 2).double()
    state_t, state_m = None, None
    for x in xs:
        state_t = ref(x, state_t)
        state_m = mine(tg.tensor(x.numpy()), state_m)
    state_t[0].sum().backward()
    state_m[0].sum().backward()
    for a, b in zip(state_t, state_m):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(mine.weight_hh.grad.numpy(), ref.weight_hh.grad.numpy(), rtol=1e-9)


def test_cell_initialisation_and_errors():
    tg.manual_seed(0)
    cell = nn.GRUCell(10, 25)
    bound = 1 / np.sqrt(25)
    for p in cell.parameters():
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.95 * bound
    for lib in (torch, tg):
        with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
            lib.nn.GRUCell(3, 4)(lib.zeros(1, 2, 3))
        with pytest.raises(ValueError, match=r"LSTMCell: Expected hx\[0\] to be 1D or 2D, got 3D instead"):
            lib.nn.LSTMCell(3, 4)(lib.zeros(2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 4)))


def test_modules_call_the_functional_api_at_call_time(monkeypatch):
    calls = []
    original = nn.functional.hardswish
    monkeypatch.setattr(nn.functional, "hardswish", lambda *a: calls.append(a) or original(*a))
    nn.Hardswish()(tg.ones(2))
    original_softmax = nn.functional.softmax
    monkeypatch.setattr(nn.functional, "softmax", lambda *a, **k: calls.append(a) or original_softmax(*a, **k))
    nn.Softmax(0)(tg.ones(2))
    assert len(calls) == 2


def _both(fn, *arrays):
    """fn in both libraries on float64 leaves: outputs and input gradients compared."""
    results = []
    for lib in (torch, tg):
        leaves = [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *leaves)
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])]
        weights = np.random.default_rng(3)
        loss = sum((o * lib.tensor(weights.standard_normal(tuple(o.shape)))).sum() for o in outs if o.requires_grad)
        loss.backward()
        results.append(([o.detach().numpy() for o in outs], [t.grad.numpy() for t in leaves if t.requires_grad]))
    for a, b in zip(results[0][0] + results[0][1], results[1][0] + results[1][1]):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_diff_meshgrid_tanhshrink_against_torch():
    x, y = randn(3, 4).double().numpy(), randn(3, 1).double().numpy()
    _both(lambda lib, a, p: lib.diff(a, n=2, dim=1, prepend=p), x, y)
    _both(lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"), x[0], x[1, :3])
    _both(lambda lib, a, b: lib.meshgrid([a, b], indexing="ij"), x[0], x[1, :3])
    _both(lambda lib, a: lib.nn.functional.tanhshrink(a), x)
    for lib in (torch, tg):
        assert lib.diff(lib.tensor([True, False, False])).tolist() == [True, False]
        with pytest.warns(UserWarning, match="indexing argument"):
            lib.meshgrid(lib.ones(2), lib.ones(3))
        assert lib.numel(lib.ones(2, 3)) == 6


def test_cosine_similarity_at_zero_norm_and_rrelu_training():
    zeros = np.zeros((2, 3))
    _both(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b), zeros, randn(2, 3).double().numpy())
    x = tg.tensor(randn(200).numpy(), requires_grad=True)
    out = nn.functional.rrelu(x, 0.1, 0.3, training=True)
    slope = (out / x).detach().numpy()[x.detach().numpy() < 0]
    assert ((slope >= 0.1) & (slope <= 0.3)).all() and slope.std() > 0.02
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[x.detach().numpy() < 0], slope, rtol=1e-6)


def test_finfo_iinfo_match_torch():
    for name in ("float16", "bfloat16", "float32", "float64", "complex128"):
        ref, mine = torch.finfo(getattr(torch, name)), tg.finfo(getattr(tg, name))
        assert repr(mine) == repr(ref)
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(mine, attr) == getattr(ref, attr) and type(getattr(mine, attr)) is type(getattr(ref, attr))
    assert repr(tg.finfo()) == repr(torch.finfo())
    for name in ("uint8", "int8", "int16", "int32", "int64"):
        ref, mine = torch.iinfo(getattr(torch, name)), tg.iinfo(getattr(tg, name))
        assert (repr(mine), mine.bits, mine.max, mine.min) == (repr(ref), ref.bits, ref.max, ref.min)
    for lib in (torch, tg):
        with pytest.raises(TypeError, match="requires a floating point input type"):
            lib.finfo(lib.int32)
        with pytest.raises(TypeError, match="requires an integer input type"):
            lib.iinfo(lib.float32)


def test_functional_errors_match_torch():
    for lib in (torch, tg):
        F = lib.nn.functional
        with pytest.raises(RuntimeError, match="Halving dimension must be even"):
            F.glu(lib.ones(2, 3))
        with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
            F.prelu(lib.ones(2, 3), lib.ones(2))
        with pytest.raises(RuntimeError, match="pixel_shuffle expects its input's 'channel' dimension"):
            F.pixel_shuffle(lib.ones(1, 5, 2, 2), 2)
        with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
            lib.searchsorted(lib.ones(3), lib.ones(2), right=True, side="left")
        with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs"):
            lib.bincount(lib.tensor([1, -1]))
        with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns"):
            lib.cdist(lib.ones(2, 3), lib.ones(2, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert tuple(lib.softmax(lib.ones(2, 3), 1, dtype=lib.float64).shape) == (2, 3)
