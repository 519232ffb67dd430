"""nn.LSTM(proj_size > 0) against PyTorch: parameters, outputs, (h_n, c_n), gradients, errors."""
import numpy as np
import pytest
import torch

pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")

import tapegrad as tg
import tapegrad.nn as nn
from tapegrad.nn.utils import rnn as R


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(got, expect, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=rtol, atol=atol)


def _pair(dtype=torch.float64, **kw):
    torch.manual_seed(0)
    ref = torch.nn.LSTM(3, 5, proj_size=2, **kw).to(dtype)
    mine = nn.LSTM(3, 5, proj_size=2, **kw).to(getattr(tg, str(dtype).split(".")[1]))
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    return ref, mine


def test_parameters_names_shapes_and_init_range():
    ref = torch.nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)
    mine = nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)
    assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in ref.named_parameters()]
    assert mine._flat_weights_names == ref._flat_weights_names
    assert [len(w) for w in mine.all_weights] == [len(w) for w in ref.all_weights]
    bound = 1 / np.sqrt(5)
    for p in mine.parameters():
        assert p.dtype == tg.float32 and float(p.abs().max()) <= bound
    assert repr(mine) == repr(ref)


@pytest.mark.parametrize("layers, bidirectional, batch_first, bias", [
    (1, False, False, True), (2, True, True, True), (2, False, True, False), (1, True, False, True)])
def test_forward_states_and_grads_match(layers, bidirectional, batch_first, bias):
    ref, mine = _pair(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    dirs = 2 if bidirectional else 1
    x = torch.randn((3, 4, 3) if batch_first else (4, 3, 3), dtype=torch.float64)
    h0 = torch.randn(layers * dirs, 3, 2, dtype=torch.float64)
    c0 = torch.randn(layers * dirs, 3, 5, dtype=torch.float64)
    tx, th, tc = (t.clone().requires_grad_() for t in (x, h0, c0))
    mx, mh, mc = (_tg(t, True) for t in (x, h0, c0))
    t_out, (t_h, t_c) = ref(tx, (th, tc))
    m_out, (m_h, m_c) = mine(mx, (mh, mc))
    assert tuple(m_out.shape) == tuple(t_out.shape) and tuple(m_h.shape) == tuple(t_h.shape)
    assert tuple(m_c.shape) == tuple(t_c.shape)
    for a, b in ((m_out, t_out), (m_h, t_h), (m_c, t_c)):
        _close(a, b)
    w = [torch.randn(t.shape, dtype=torch.float64) for t in (t_out, t_h, t_c)]
    sum((t * v).sum() for t, v in zip((t_out, t_h, t_c), w)).backward()
    sum((m * _tg(v)).sum() for m, v in zip((m_out, m_h, m_c), w)).backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)
    for a, b in ((mx, tx), (mh, th), (mc, tc)):
        _close(a.grad, b.grad, rtol=1e-8, atol=1e-10)


def test_default_states_unbatched_and_float32():
    ref, mine = _pair(torch.float32, num_layers=2)
    x = torch.randn(4, 3, 3)
    t_out, (t_h, t_c) = ref(x)
    m_out, (m_h, m_c) = mine(_tg(x))
    assert m_out.dtype == tg.float32 and tuple(m_h.shape) == (2, 3, 2) and tuple(m_c.shape) == (2, 3, 5)
    for a, b in ((m_out, t_out), (m_h, t_h), (m_c, t_c)):
        _close(a, b, rtol=1e-5, atol=1e-6)
    t_out, (t_h, t_c) = ref(x[:, 0])
    m_out, (m_h, m_c) = mine(_tg(x[:, 0]))
    assert tuple(m_h.shape) == tuple(t_h.shape) == (2, 2)
    for a, b in ((m_out, t_out), (m_h, t_h), (m_c, t_c)):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_packed_sequence():
    ref, mine = _pair(bidirectional=True)
    x = torch.randn(5, 3, 3, dtype=torch.float64)
    lengths = [2, 5, 3]
    t_out, (t_h, t_c) = ref(torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False))
    m_out, (m_h, m_c) = mine(R.pack_padded_sequence(_tg(x), lengths, enforce_sorted=False))
    _close(m_out.data, t_out.data)
    _close(m_h, t_h)
    _close(m_c, t_c)


def test_gradcheck_float64():
    # the states and the weights the projection touches (w_hh reads the projected h, w_hr makes it);
    # bidirectional and stacked layers are compared with PyTorch's float64 gradients above
    mine = nn.LSTM(2, 3, proj_size=1, dtype=tg.float64)
    names = ["weight_hh_l0", "weight_hr_l0"]
    weights = [getattr(mine, n).detach().clone().requires_grad_() for n in names]
    x = tg.randn(2, 1, 2, dtype=tg.float64, requires_grad=True)
    h0 = tg.randn(1, 1, 1, dtype=tg.float64, requires_grad=True)
    c0 = tg.randn(1, 1, 3, dtype=tg.float64, requires_grad=True)

    def f(x, h0, c0, *ws):
        for name, w in zip(names, ws):
            delattr(mine, name)   # a plain tensor in place of the Parameter, as functional_call does
            setattr(mine, name, w)
        out, (h, c) = mine(x, (h0, c0))
        return out, c   # h_n is part of out
    assert tg.autograd.gradcheck(f, (x, h0, c0, *weights))


def test_errors_match():
    for kw in (dict(proj_size=-1), dict(proj_size=5), dict(proj_size=6)):
        with pytest.raises(ValueError) as t_err:
            torch.nn.LSTM(3, 5, **kw)
        with pytest.raises(ValueError) as m_err:
            nn.LSTM(3, 5, **kw)
        assert str(t_err.value) in str(m_err.value)
    for lib in (torch, tg):
        for kind, size in (("GRU", 2), ("RNN", 7), ("GRU", 0)):   # any proj_size, even 0, is refused
            with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM, not RNN or GRU"):
                getattr(lib.nn, kind)(3, 5, proj_size=size)
    ref, mine = _pair()
    for h, c in (((1, 3, 5), (1, 3, 5)), ((1, 3, 2), (1, 3, 2))):
        with pytest.raises(RuntimeError) as t_err:
            ref(torch.randn(4, 3, 3, dtype=torch.float64), (torch.zeros(h, dtype=torch.float64),
                                                            torch.zeros(c, dtype=torch.float64)))
        with pytest.raises(RuntimeError) as m_err:
            mine(tg.randn(4, 3, 3, dtype=tg.float64), (tg.zeros(h, dtype=tg.float64), tg.zeros(c, dtype=tg.float64)))
        assert str(t_err.value) in str(m_err.value)
