"""Every layer against PyTorch: same weights in, same outputs, input grads and parameter grads out."""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn

RTOL = {torch.float64: 1e-9, torch.float32: 1e-5}
ATOL = {torch.float64: 1e-10, torch.float32: 1e-5}


def _tg(t):
    return tg.tensor(t.detach().numpy())


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [] if out is None else [out]


def check_layer(make, *inputs, dtype=torch.float64, train=True, grad_inputs=True):
    """Build the layer in both libraries, copy torch's weights over, compare outputs and all grads."""
    torch.manual_seed(0)
    ref = make(torch.nn).to(dtype)
    mine = make(nn).to(tg.float64 if dtype == torch.float64 else tg.float32)
    assert list(mine.state_dict().keys()) == list(ref.state_dict().keys())
    for (k, a), b in zip(ref.state_dict().items(), mine.state_dict().values()):
        assert tuple(a.shape) == tuple(b.shape), k
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    ref.train(train)
    mine.train(train)
    assert repr(mine) == repr(ref).replace("torch.", "tapegrad.")

    t_in = [x.detach().to(dtype).clone().requires_grad_(grad_inputs) if x.is_floating_point() else x for x in inputs]
    m_in = [tg.tensor(x.detach().numpy(), requires_grad=grad_inputs and x.is_floating_point()) for x in t_in]
    t_out, m_out = _flat(ref(*t_in)), _flat(mine(*m_in))
    assert len(t_out) == len(m_out)
    rtol, atol = RTOL[dtype], ATOL[dtype]
    rng = np.random.default_rng(1)
    t_loss, m_loss = 0, 0
    for a, b in zip(t_out, m_out):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)
        if a.requires_grad:
            w = rng.standard_normal(tuple(a.shape))
            t_loss = t_loss + (a * torch.tensor(w, dtype=a.dtype)).sum()
            m_loss = m_loss + (b * tg.tensor(w, dtype=b.dtype)).sum()
    t_loss.backward()
    m_loss.backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=rtol, atol=atol, err_msg=name)
    for a, b in zip(t_in, m_in):
        if a.requires_grad:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=rtol, atol=atol)
    for (name, a), b in zip(ref.named_buffers(), mine.buffers()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=rtol, atol=atol, err_msg=name)
    return ref, mine


def randn(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(sum(shape) + len(shape)))


LAYERS = {
    "linear": (lambda n: n.Linear(5, 3), [randn(4, 5)]),
    "linear_3d_nobias": (lambda n: n.Linear(5, 3, bias=False), [randn(2, 4, 5)]),
    "linear_1d": (lambda n: n.Linear(5, 3), [randn(5)]),
    "bilinear": (lambda n: n.Bilinear(3, 4, 2), [randn(5, 3), randn(5, 4)]),
    "identity": (lambda n: n.Sequential(n.Linear(3, 3), n.Identity()), [randn(2, 3)]),
    "flatten": (lambda n: n.Sequential(n.Flatten(), n.Linear(12, 2)), [randn(2, 3, 4)]),
    "unflatten": (lambda n: n.Sequential(n.Linear(12, 12), n.Unflatten(1, (3, 4))), [randn(2, 12)]),
    "conv1d": (lambda n: n.Conv1d(3, 4, 3, stride=2, padding=1), [randn(2, 3, 9)]),
    "conv1d_unbatched": (lambda n: n.Conv1d(3, 4, 2), [randn(3, 7)]),
    "conv2d": (lambda n: n.Conv2d(3, 4, 3), [randn(2, 3, 7, 6)]),
    "conv2d_stride_dil_groups": (lambda n: n.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                     groups=2, bias=False), [randn(2, 4, 9, 8)]),
    "conv2d_same": (lambda n: n.Conv2d(2, 3, 4, padding="same"), [randn(1, 2, 6, 5)]),
    "conv2d_reflect": (lambda n: n.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), [randn(1, 2, 5, 5)]),
    "conv2d_circular": (lambda n: n.Conv2d(2, 3, 3, padding=2, padding_mode="circular"), [randn(1, 2, 5, 5)]),
    "conv_transpose2d": (lambda n: n.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1),
                         [randn(2, 3, 4, 5)]),
    "conv_transpose2d_groups": (lambda n: n.ConvTranspose2d(4, 6, (2, 3), stride=(1, 2), groups=2, dilation=2),
                                [randn(1, 4, 3, 4)]),
    "conv_transpose1d": (lambda n: n.ConvTranspose1d(2, 3, 3, stride=3), [randn(2, 2, 4)]),
    "maxpool1d": (lambda n: n.Sequential(n.Conv1d(2, 2, 1), n.MaxPool1d(3, stride=2, padding=1)),
                  [randn(2, 2, 9)]),
    "maxpool2d": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.MaxPool2d(2)), [randn(2, 2, 6, 7)]),
    "maxpool2d_ceil_dil": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.MaxPool2d(3, 2, 1, dilation=2,
                                                                                 ceil_mode=True)),
                           [randn(1, 2, 10, 9)]),
    "avgpool1d": (lambda n: n.Sequential(n.Conv1d(2, 2, 1), n.AvgPool1d(3, 2, 1)), [randn(2, 2, 8)]),
    "avgpool2d": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AvgPool2d(2)), [randn(2, 2, 6, 7)]),
    "avgpool2d_ceil_nopad": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AvgPool2d(3, 2, 1, ceil_mode=True,
                                                                                   count_include_pad=False)),
                             [randn(1, 2, 8, 9)]),
    "avgpool2d_ceil_pad": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AvgPool2d(3, 2, 1, ceil_mode=True)),
                           [randn(1, 2, 8, 9)]),
    "avgpool2d_divisor": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AvgPool2d(2, divisor_override=3)),
                          [randn(1, 2, 4, 4)]),
    "adaptive_avg": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AdaptiveAvgPool2d((3, 2))), [randn(2, 2, 7, 5)]),
    "adaptive_avg_none": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AdaptiveAvgPool2d((None, 4))),
                          [randn(1, 2, 3, 9)]),
    "adaptive_max": (lambda n: n.Sequential(n.Conv2d(2, 2, 1), n.AdaptiveMaxPool2d(3)), [randn(2, 2, 7, 5)]),
    "batchnorm1d": (lambda n: n.BatchNorm1d(3), [randn(5, 3)]),
    "batchnorm1d_3d": (lambda n: n.BatchNorm1d(3, momentum=0.3), [randn(4, 3, 5)]),
    "batchnorm2d": (lambda n: n.BatchNorm2d(3), [randn(4, 3, 2, 5)]),
    "batchnorm2d_cumulative": (lambda n: n.BatchNorm2d(3, momentum=None, affine=False), [randn(4, 3, 2, 2)]),
    "batchnorm2d_no_stats": (lambda n: n.BatchNorm2d(3, track_running_stats=False), [randn(4, 3, 2, 2)]),
    "layernorm": (lambda n: n.LayerNorm(6), [randn(2, 3, 6)]),
    "layernorm_2d_nobias": (lambda n: n.LayerNorm((3, 4), eps=1e-3, bias=False), [randn(2, 3, 4)]),
    "groupnorm": (lambda n: n.GroupNorm(2, 4), [randn(3, 4, 5)]),
    "rmsnorm": (lambda n: n.RMSNorm(5), [randn(3, 5)]),
    "rmsnorm_eps": (lambda n: n.RMSNorm([2, 5], eps=1e-4), [randn(3, 2, 5)]),
    "embedding": (lambda n: n.Embedding(7, 3), [torch.tensor([[1, 2, 1], [6, 0, 2]])]),
    "embedding_padding": (lambda n: n.Embedding(7, 3, padding_idx=-2), [torch.tensor([1, 5, 5, 0])]),
    "embedding_bag_2d": (lambda n: n.EmbeddingBag(6, 3, mode="sum"), [torch.tensor([[1, 2], [4, 4]])]),
    "embedding_bag_offsets": (lambda n: n.EmbeddingBag(6, 3), [torch.tensor([1, 2, 4, 5, 4, 3]),
                                                             torch.tensor([0, 2, 2, 5])]),
    "embedding_bag_max": (lambda n: n.EmbeddingBag(6, 3, mode="max", padding_idx=2),
                          [torch.tensor([[1, 2, 0], [2, 3, 5]])]),
    "rnn_relu_2layer_bi": (lambda n: n.RNN(3, 4, 2, nonlinearity="relu", bidirectional=True), [randn(5, 2, 3)]),
    "lstm": (lambda n: n.LSTM(3, 4, batch_first=True), [randn(2, 5, 3)]),
    "lstm_2layer_bi": (lambda n: n.LSTM(3, 4, num_layers=2, bidirectional=True, bias=False), [randn(4, 2, 3)]),
    "gru_unbatched": (lambda n: n.GRU(3, 4, num_layers=2), [randn(5, 3)]),
    "gru_bi_batch_first_h0": (lambda n: n.GRU(3, 4, batch_first=True, bidirectional=True),
                              [randn(2, 5, 3), randn(2, 2, 4)]),
    "mha": (lambda n: n.MultiheadAttention(8, 2), [randn(4, 2, 8), randn(5, 2, 8), randn(5, 2, 8)]),
    "mha_batch_first": (lambda n: n.MultiheadAttention(8, 4, batch_first=True), [randn(2, 3, 8)] * 3),
    "mha_kdim": (lambda n: n.MultiheadAttention(6, 2, kdim=4, vdim=5, bias=False),
                 [randn(3, 2, 6), randn(4, 2, 4), randn(4, 2, 5)]),
    "encoder_layer": (lambda n: n.TransformerEncoderLayer(8, 2, 16, dropout=0.0), [randn(5, 2, 8)]),
    "encoder_layer_norm_first_gelu": (lambda n: n.TransformerEncoderLayer(8, 2, 12, dropout=0.0, activation="gelu",
                                                                         norm_first=True, batch_first=True),
                                      [randn(2, 5, 8)]),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name):
    make, inputs = LAYERS[name]
    check_layer(make, *inputs)


@pytest.mark.parametrize("name", ["linear", "conv2d", "gru_unbatched", "layernorm"])
def test_layer_matches_torch_float32(name):
    make, inputs = LAYERS[name]
    check_layer(make, *inputs, dtype=torch.float32)


@pytest.mark.parametrize("name", ["batchnorm2d", "batchnorm2d_cumulative", "encoder_layer"])
def test_layer_eval_mode(name):
    make, inputs = LAYERS[name]
    check_layer(make, *inputs, train=False)


def test_batchnorm_running_stats_over_steps():
    ref, mine = torch.nn.BatchNorm1d(3).double(), nn.BatchNorm1d(3).double()
    for step in range(3):
        x = randn(4 + step, 3).double()
        ref(x)
        mine(tg.tensor(x.numpy()))
    for a, b in zip(ref.state_dict().values(), mine.state_dict().values()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12)
    ref.eval(), mine.eval()
    x = randn(2, 3).double()
    np.testing.assert_allclose(mine(tg.tensor(x.numpy())).detach().numpy(), ref(x).detach().numpy(), rtol=1e-12)


ACTIVATIONS = {
    "relu": lambda n: n.ReLU(), "leaky_relu": lambda n: n.LeakyReLU(0.2), "elu": lambda n: n.ELU(0.7),
    "gelu": lambda n: n.GELU(), "gelu_tanh": lambda n: n.GELU(approximate="tanh"), "silu": lambda n: n.SiLU(),
    "mish": lambda n: n.Mish(), "softplus": lambda n: n.Softplus(beta=2.0, threshold=3.0),
    "tanh": lambda n: n.Tanh(), "sigmoid": lambda n: n.Sigmoid(), "softmax": lambda n: n.Softmax(dim=1),
    "log_softmax": lambda n: n.LogSoftmax(dim=-1), "hardtanh": lambda n: n.Hardtanh(-0.5, 0.8),
    "relu6": lambda n: n.ReLU6(), "selu": lambda n: n.SELU(), "celu": lambda n: n.CELU(0.5),
    "softmin": lambda n: n.Softmin(0),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_torch(name):
    x = randn(3, 7) * 4
    check_layer(ACTIVATIONS[name], x)


def test_activation_inplace_matches_torch():
    x = randn(3, 4)
    a = x.clone().requires_grad_()
    b = tg.tensor(x.numpy(), requires_grad=True)
    ta, tb = a * 1, b * 1
    ra, rb = torch.nn.ReLU(inplace=True)(ta), nn.ReLU(inplace=True)(tb)
    assert ra is ta and rb is tb
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    ra.sum().backward()
    rb.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy())


def test_dropout_train_and_eval():
    tg.manual_seed(0)
    drop = nn.Dropout(0.4)
    x = tg.ones(2000, dtype=tg.float64, requires_grad=True)
    y = drop(x)
    kept = y.detach().numpy() != 0
    assert 0.5 < kept.mean() < 0.7
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.6)
    drop.eval()
    assert drop(x) is x
    assert repr(drop) == "Dropout(p=0.4, inplace=False)"
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_between_rnn_layers_only_in_training():
    tg.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = tg.randn(5, 2, 3)
    lstm.eval()
    a, b = lstm(x)[0], lstm(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    lstm.train()
    c, d = lstm(x)[0], lstm(x)[0]
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())


def test_mha_masks_and_weights():
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True).double()
    mine = nn.MultiheadAttention(8, 2, batch_first=True).double()
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    q, k = randn(2, 3, 8).double(), randn(2, 4, 8).double()
    attn_mask = torch.tensor([[False, True, False, False]] * 3)
    pad = torch.tensor([[False, False, False, True], [False, False, True, True]])
    for kwargs in ({"attn_mask": attn_mask}, {"key_padding_mask": pad}, {"attn_mask": attn_mask,
                   "key_padding_mask": pad, "average_attn_weights": False},
                   {"attn_mask": torch.randn(3, 4, dtype=torch.float64)}):
        t_out, t_w = ref(q, k, k, **kwargs)
        m_out, m_w = mine(_tg(q), _tg(k), _tg(k), **{n: _tg(v) for n, v in kwargs.items() if n != "average_attn_weights"},
                          **{n: v for n, v in kwargs.items() if n == "average_attn_weights"})
        np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(m_w.detach().numpy(), t_w.detach().numpy(), rtol=1e-9, atol=1e-12)
    out, w = mine(_tg(q), _tg(k), _tg(k), need_weights=False)
    assert w is None


def test_encoder_layer_with_padding_mask():
    x, pad = randn(2, 5, 8), torch.tensor([[False] * 5, [False, False, False, True, True]])
    torch.manual_seed(0)
    ref = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    mine = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double()
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    ref.eval(), mine.eval()
    with torch.no_grad():
        expect = ref(x.double(), src_key_padding_mask=pad)
    got = mine(_tg(x.double()), src_key_padding_mask=_tg(pad))
    np.testing.assert_allclose(got.detach().numpy()[0], expect.numpy()[0], rtol=1e-9, atol=1e-12)
    # PyTorch's eval fast path zeroes padded positions; compare the positions that attend.
    np.testing.assert_allclose(got.detach().numpy()[1, :3], expect.numpy()[1, :3], rtol=1e-9, atol=1e-12)


def test_default_initialisation_distributions():
    tg.manual_seed(0)
    lin = nn.Linear(400, 300)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    bound = 1 / np.sqrt(400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(b).max() <= bound
    np.testing.assert_allclose(w.std(), bound / np.sqrt(3), rtol=0.02)
    emb = nn.Embedding(500, 100, padding_idx=3)
    e = emb.weight.detach().numpy()
    np.testing.assert_allclose([e.mean(), e.std()], [0, 1], atol=0.02)
    assert (e[3] == 0).all()
    conv = nn.Conv2d(4, 8, 3)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / np.sqrt(36)
    assert lin.weight.dtype is tg.float32 and lin.weight.is_leaf and lin.weight.requires_grad
