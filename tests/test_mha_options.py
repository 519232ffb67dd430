"""nn.MultiheadAttention(add_bias_kv=True, add_zero_attn=True) and static keys against PyTorch: parameters,
outputs, attention weights, gradients, masks (bool and float, attention and key padding), errors."""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(got, expect, rtol=1e-9, atol=1e-11):
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=rtol, atol=atol)


def _pair(**kw):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(6, 2, dtype=torch.float64, **kw)
    mine = nn.MultiheadAttention(6, 2, dtype=tg.float64, **kw)
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    return ref, mine


def test_parameters_and_init():
    ref = torch.nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True)
    mine = nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True)
    assert [(n, tuple(p.shape)) for n, p in mine.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in ref.named_parameters()]
    assert list(mine.state_dict()) == list(ref.state_dict())
    assert mine.bias_k.dtype == tg.float32 and mine.add_zero_attn is True
    assert float(mine.bias_k.abs().max()) > 0   # xavier_normal_, std sqrt(2 / (2 * 6))
    plain = nn.MultiheadAttention(6, 2)
    assert plain.bias_k is None and plain.bias_v is None


def _masks(kind, tgt, src, bsz, heads):
    torch.manual_seed(1)
    if kind is None:
        return None, None
    if kind == "bool":
        attn = torch.rand(tgt, src) > 0.7
        attn[:, 0] = False   # every query keeps one key
        pad = torch.zeros(bsz, src, dtype=torch.bool)
        pad[0, -1] = True
        return attn, pad
    attn = torch.randn(bsz * heads, tgt, src, dtype=torch.float64)
    pad = torch.randn(bsz, src, dtype=torch.float64)
    return attn, pad


@pytest.mark.parametrize("bias_kv, zero_attn, masks", [
    (True, False, None), (False, True, "bool"), (True, True, "float"), (True, True, "bool"), (True, False, "float")])
def test_forward_weights_and_grads_match(bias_kv, zero_attn, masks):
    ref, mine = _pair(add_bias_kv=bias_kv, add_zero_attn=zero_attn)
    q, k, v = (torch.randn(3, 2, 6, dtype=torch.float64) if i == 0 else torch.randn(4, 2, 6, dtype=torch.float64)
               for i in range(3))
    attn, pad = _masks(masks, 3, 4, 2, 2)
    tq, tk, tv = (x.clone().requires_grad_() for x in (q, k, v))
    mq, mk, mv = (_tg(x, True) for x in (q, k, v))
    t_out, t_w = ref(tq, tk, tv, key_padding_mask=pad, attn_mask=attn)
    m_out, m_w = mine(mq, mk, mv, key_padding_mask=None if pad is None else _tg(pad),
                      attn_mask=None if attn is None else _tg(attn))
    _close(m_out, t_out)
    _close(m_w, t_w)
    g = torch.randn(t_out.shape, dtype=torch.float64)
    (t_out * g).sum().backward()
    (m_out * _tg(g)).sum().backward()
    for (name, p), (name2, p2) in zip(ref.named_parameters(), mine.named_parameters()):
        assert name == name2
        _close(p2.grad, p.grad)
    for a, b in ((mq, tq), (mk, tk), (mv, tv)):
        _close(a.grad, b.grad)


def test_per_head_weights_batch_first_and_unbatched():
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(6, 3, add_bias_kv=True, add_zero_attn=True, batch_first=True,
                                      dtype=torch.float64)
    mine = nn.MultiheadAttention(6, 3, add_bias_kv=True, add_zero_attn=True, batch_first=True, dtype=tg.float64)
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    t_out, t_w = ref(x, x, x, average_attn_weights=False)
    m_out, m_w = mine(_tg(x), _tg(x), _tg(x), average_attn_weights=False)
    assert tuple(m_w.shape) == tuple(t_w.shape) == (2, 3, 5, 7)
    _close(m_out, t_out)
    _close(m_w, t_w)
    t_out, t_w = ref(x[0], x[0], x[0])
    m_out, m_w = mine(_tg(x[0]), _tg(x[0]), _tg(x[0]))
    _close(m_out, t_out)
    _close(m_w, t_w)
    t_out, _ = ref(x, x, x, need_weights=False)
    m_out, m_w = mine(_tg(x), _tg(x), _tg(x), need_weights=False)
    assert m_w is None
    _close(m_out, t_out)


def test_static_keys_and_values():
    ref, mine = _pair(add_zero_attn=True)
    q = torch.randn(3, 2, 6, dtype=torch.float64)
    sk, sv = torch.randn(4, 5, 3, dtype=torch.float64), torch.randn(4, 5, 3, dtype=torch.float64)
    args = (6, 2, ref.in_proj_weight, ref.in_proj_bias, None, None, True, 0.0, ref.out_proj.weight,
            ref.out_proj.bias)
    margs = (6, 2, mine.in_proj_weight, mine.in_proj_bias, None, None, True, 0.0, mine.out_proj.weight,
             mine.out_proj.bias)
    t_out, t_w = torch.nn.functional.multi_head_attention_forward(q, q, q, *args, static_k=sk, static_v=sv)
    m_out, m_w = F.multi_head_attention_forward(_tg(q), _tg(q), _tg(q), *margs, static_k=_tg(sk), static_v=_tg(sv))
    _close(m_out, t_out)
    _close(m_w, t_w)
    for bad, what in ((torch.randn(3, 5, 3, dtype=torch.float64), "size(0)"),
                      (torch.randn(4, 5, 2, dtype=torch.float64), "size(2)")):
        with pytest.raises(AssertionError) as t_err:
            torch.nn.functional.multi_head_attention_forward(q, q, q, *args, static_k=bad)
        with pytest.raises(AssertionError) as m_err:
            F.multi_head_attention_forward(_tg(q), _tg(q), _tg(q), *margs, static_k=_tg(bad))
        assert str(t_err.value) in str(m_err.value) and what in str(m_err.value)


def test_bias_with_static_key_refused():
    ref, mine = _pair(add_bias_kv=True)
    q = torch.randn(3, 2, 6, dtype=torch.float64)
    sk = torch.randn(4, 5, 3, dtype=torch.float64)
    with pytest.raises(AssertionError, match="bias cannot be added to static key"):
        torch.nn.functional.multi_head_attention_forward(
            q, q, q, 6, 2, ref.in_proj_weight, ref.in_proj_bias, ref.bias_k, ref.bias_v, False, 0.0,
            ref.out_proj.weight, ref.out_proj.bias, static_k=sk)
    with pytest.raises(AssertionError, match="bias cannot be added to static key"):
        F.multi_head_attention_forward(
            _tg(q), _tg(q), _tg(q), 6, 2, mine.in_proj_weight, mine.in_proj_bias, mine.bias_k, mine.bias_v, False,
            0.0, mine.out_proj.weight, mine.out_proj.bias, static_k=_tg(sk))


def test_gradcheck_float64():
    torch.manual_seed(0)
    mine = nn.MultiheadAttention(2, 2, add_bias_kv=True, add_zero_attn=True, dtype=tg.float64)
    q = tg.randn(2, 1, 2, dtype=tg.float64, requires_grad=True)
    kv = tg.randn(2, 1, 2, dtype=tg.float64, requires_grad=True)
    bk = mine.bias_k.detach().clone().requires_grad_()
    bv = mine.bias_v.detach().clone().requires_grad_()

    def f(q, kv, bk, bv):
        return F.multi_head_attention_forward(q, kv, kv, 2, 2, mine.in_proj_weight, mine.in_proj_bias, bk, bv,
                                              True, 0.0, mine.out_proj.weight, mine.out_proj.bias)
    assert tg.autograd.gradcheck(f, (q, kv, bk, bv))
