"""Recurrent kernels pad a sequence to its length's bucket and mask the padding (tapegrad/_ops/nn_rnn.py):
outputs, final states and gradients still match PyTorch at every length, and the lengths of one bucket
share one traced scan."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad._ops import nn_rnn
from tapegrad.nn.utils import rnn as R


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(got, expect):
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=1e-9, atol=1e-11)


def _pair(mode, **kw):
    torch.manual_seed(0)
    ref = getattr(torch.nn, mode)(3, 4, **kw).double()
    mine = getattr(tg.nn, mode)(3, 4, **kw).double()
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    return ref, mine


def test_bucket_lengths_cover_each_length_with_bounded_padding():
    for steps in range(1, 600):
        padded = nn_rnn.bucket_length(steps)
        assert padded >= steps and padded % 8 == 0
        assert padded <= max(8, steps * 5 // 4 + 8)
        if steps > 32:   # at most a quarter longer (docs/changing_shapes.md)
            assert padded - steps <= steps / 4
    assert len({nn_rnn.bucket_length(s) for s in range(5, 51)}) == 7


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("steps", [1, 7, 8, 9, 33])
@pytest.mark.parametrize("layers, bidirectional", [(1, False), (2, True)])
def test_outputs_states_and_gradients_match_torch_at_every_length(mode, steps, layers, bidirectional):
    ref, mine = _pair(mode, num_layers=layers, bidirectional=bidirectional, batch_first=True)
    x = torch.randn(2, steps, 3, dtype=torch.float64)
    tx, mx = x.clone().requires_grad_(), _tg(x, True)
    t_out, t_state = ref(tx)
    m_out, m_state = mine(mx)
    t_states = t_state if mode == "LSTM" else (t_state,)
    m_states = m_state if mode == "LSTM" else (m_state,)
    assert tuple(m_out.shape) == tuple(t_out.shape)
    for a, b in zip((m_out,) + tuple(m_states), (t_out,) + tuple(t_states)):
        _close(a, b)
    weights = [torch.randn(t.shape, dtype=torch.float64) for t in (t_out,) + tuple(t_states)]
    sum((t * w).sum() for t, w in zip((t_out,) + tuple(t_states), weights)).backward()
    sum((m * _tg(w)).sum() for m, w in zip((m_out,) + tuple(m_states), weights)).backward()
    _close(mx.grad, tx.grad)
    for (name, p), q in zip(mine.named_parameters(), ref.parameters()):
        _close(p.grad, q.grad)


def test_packed_sequences_shorter_than_their_bucket_match_torch():
    ref, mine = _pair("LSTM", bidirectional=True)
    lengths = [11, 9, 4]
    x = torch.randn(11, 3, 3, dtype=torch.float64)
    tx, mx = x.clone().requires_grad_(), _tg(x, True)
    t_out, (t_h, t_c) = ref(torch.nn.utils.rnn.pack_padded_sequence(tx, lengths))
    m_out, (m_h, m_c) = mine(R.pack_padded_sequence(mx, lengths))
    t_pad, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out)
    m_pad, _ = R.pad_packed_sequence(m_out)
    for a, b in ((m_pad, t_pad), (m_h, t_h), (m_c, t_c)):
        _close(a, b)
    (t_pad.sum() + t_h.pow(2).sum() + t_c.sum()).backward()
    (m_pad.sum() + m_h.pow(2).sum() + m_c.sum()).backward()
    _close(mx.grad, tx.grad)


def test_dropout_between_layers_of_a_padded_sequence_keeps_real_steps():
    tg.manual_seed(0)
    mine = tg.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = tg.randn(5, 2, 3, requires_grad=True)
    out, h = mine(x)
    assert tuple(out.shape) == (5, 2, 4) and tuple(h.shape) == (2, 2, 4)
    out.sum().backward()
    assert x.grad is not None and bool(tg.isfinite(x.grad).all())


def test_lengths_of_one_bucket_share_one_traced_scan():
    mine = tg.nn.LSTM(3, 4, batch_first=True)
    mine(tg.randn(2, 17, 3))[0].sum().backward()   # the 24-step bucket's scan, traced (and its VJP)
    before = nn_rnn._bucket_scan._cache_size()
    for steps in range(18, 25):
        mine(tg.randn(2, steps, 3))[0].sum().backward()
    assert nn_rnn._bucket_scan._cache_size() == before
