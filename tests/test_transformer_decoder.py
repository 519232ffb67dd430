"""nn.TransformerDecoderLayer, TransformerDecoder and Transformer against PyTorch, with torch's weights loaded.

PyTorch's torch is run with grad enabled and parameters requiring grad, which keeps its encoder off the
inference fast path (that path zeroes padded positions, a nested-tensor detail tapegrad does not copy).
"""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn


def _tg(t):
    return tg.tensor(t.detach().numpy())


def _pair(make):
    torch.manual_seed(0)
    ref = make(torch.nn).double().eval()
    mine = make(nn).double().eval()
    assert list(mine.state_dict()) == list(ref.state_dict())
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    assert repr(mine) == repr(ref).replace("torch.", "tapegrad.")
    return ref, mine


def _compare(ref, mine, t_args, kwargs):
    t_in = [a.double().requires_grad_() for a in t_args]
    m_in = [tg.tensor(a.detach().numpy(), requires_grad=True) for a in t_in]
    t_out = ref(*t_in, **kwargs)
    m_out = mine(*m_in, **{k: _tg(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})
    np.testing.assert_allclose(m_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9, atol=1e-11)
    w = torch.randn(t_out.shape, dtype=torch.float64)
    (t_out * w).sum().backward()
    (m_out * _tg(w)).sum().backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)
    for a, b in zip(t_in, m_in):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_with_masks(batch_first, norm_first):
    ref, mine = _pair(lambda m: m.TransformerDecoderLayer(8, 2, 16, dropout=0.1, batch_first=batch_first,
                                                          norm_first=norm_first, activation="gelu"))
    tgt, memory = torch.randn(4, 3, 8), torch.randn(5, 3, 8)
    if batch_first:
        tgt, memory = tgt.transpose(0, 1), memory.transpose(0, 1)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True], [False, True, False, False, False]])
    kwargs = dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
                  memory_key_padding_mask=pad)
    _compare(ref, mine, [tgt, memory], kwargs)


def test_decoder_stack_with_norm_and_causal_flag():
    make = lambda m: m.TransformerDecoder(m.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2, norm=m.LayerNorm(8))
    ref, mine = _pair(make)
    tgt, memory = torch.randn(4, 2, 8), torch.randn(3, 2, 8)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    _compare(ref, mine, [tgt, memory], dict(tgt_mask=mask, tgt_is_causal=True,
                                           memory_mask=torch.tensor([[False, True, False]] * 4)))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_torch(batch_first, norm_first):
    ref, mine = _pair(lambda m: m.Transformer(8, 2, 2, 1, 16, batch_first=batch_first, norm_first=norm_first))
    src, tgt = torch.randn(2, 5, 8), torch.randn(2, 4, 8)
    if not batch_first:
        src, tgt = src.transpose(0, 1), tgt.transpose(0, 1)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    kwargs = dict(tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64),
                  src_key_padding_mask=pad, memory_key_padding_mask=pad)
    _compare(ref, mine, [src, tgt], kwargs)


def test_transformer_default_init_and_layout():
    torch.manual_seed(0)
    ref = torch.nn.Transformer(16, 4, 1, 1, 32)
    mine = nn.Transformer(16, 4, 1, 1, 32)
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert repr(mine) == repr(ref).replace("torch.", "tapegrad.")
    # xavier_uniform_ on every matrix: bound sqrt(6 / (fan_in + fan_out)).
    w = mine.encoder.layers[0].linear1.weight.detach().numpy()
    bound = (6 / (16 + 32)) ** 0.5
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound


@pytest.mark.parametrize("sz", [1, 4])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_generate_square_subsequent_mask(sz, dtype):
    expect = torch.nn.Transformer.generate_square_subsequent_mask(sz, dtype=dtype and getattr(torch, dtype))
    got = nn.Transformer.generate_square_subsequent_mask(sz, dtype=dtype and getattr(tg, dtype))
    assert str(got.dtype) == str(expect.dtype).replace("torch", "tapegrad")
    np.testing.assert_array_equal(got.numpy(), expect.numpy())


def test_transformer_shape_errors():
    for lib in (torch, tg):
        model = lib.nn.Transformer(8, 2, 1, 1, 16)
        with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
            model(lib.zeros(5, 2, 8), lib.zeros(4, 3, 8))
        with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
            model(lib.zeros(5, 2, 8), lib.zeros(4, 2, 6))
