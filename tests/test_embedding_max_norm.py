"""F.embedding / nn.Embedding / embedding_bag with max_norm against PyTorch: the referenced rows of the
weight renormalised in place (without grad) before the lookup; outputs, weights after, gradients."""
import math

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(got, expect, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=rtol, atol=atol)


def _weight(dtype=torch.float32):
    torch.manual_seed(0)
    w = torch.randn(7, 4, dtype=dtype) * torch.tensor([[3.0], [0.2], [2.0], [1.0], [0.5], [4.0], [1.5]], dtype=dtype)
    return w


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_functional_renormalises_referenced_rows(norm_type, dtype):
    w = _weight(dtype)
    idx = torch.tensor([[0, 2, 0], [1, 4, 5]])
    tw, mw = w.clone().requires_grad_(), _tg(w, True)
    t_ver, m_ver = tw._version, mw._version
    t_out = torch.nn.functional.embedding(idx, tw, max_norm=1.0, norm_type=norm_type)
    m_out = F.embedding(_tg(idx), mw, max_norm=1.0, norm_type=norm_type)
    assert str(m_out.dtype).split(".")[1] == str(t_out.dtype).split(".")[1]
    assert mw._version - m_ver == tw._version - t_ver
    _close(mw, tw)          # rows 3 and 6 untouched, the others scaled where over max_norm
    _close(m_out, t_out)
    g = torch.randn(t_out.shape, dtype=dtype)
    t_out.backward(g)
    m_out.backward(_tg(g))
    _close(mw.grad, tw.grad)
    assert mw.is_leaf and mw.grad_fn is None   # the renorm is not recorded


def test_module_and_padding_idx():
    w = _weight()
    ref = torch.nn.Embedding(7, 4, padding_idx=1, max_norm=0.8, _weight=w.clone())
    mine = nn.Embedding(7, 4, padding_idx=1, max_norm=0.8, _weight=_tg(w))
    assert repr(mine) == repr(ref)
    idx = torch.tensor([5, 1, 3, 3])
    t_out, m_out = ref(idx), mine(_tg(idx))
    _close(m_out, t_out)
    _close(mine.weight, ref.weight)
    t_out.pow(2).sum().backward()
    m_out.pow(2).sum().backward()
    _close(mine.weight.grad, ref.weight.grad)
    # a second call finds the rows already within max_norm: values stay (up to PyTorch's 1e-7 margin)
    _close(mine(_tg(idx)), ref(idx))
    _close(mine.weight, ref.weight)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_max_norm(mode):
    w = _weight(torch.float64)
    ref = torch.nn.EmbeddingBag(7, 4, max_norm=1.0, mode=mode, _weight=w.clone())
    mine = nn.EmbeddingBag(7, 4, max_norm=1.0, mode=mode, _weight=_tg(w))
    idx, offsets = torch.tensor([0, 2, 5, 5, 1]), torch.tensor([0, 2])
    t_out, m_out = ref(idx, offsets), mine(_tg(idx), _tg(offsets))
    _close(m_out, t_out)
    _close(mine.weight, ref.weight)
    t_out.sum().backward()
    m_out.sum().backward()
    _close(mine.weight.grad, ref.weight.grad)


def test_gradcheck_float64_lookup_after_renorm():
    # Rows within max_norm are left as they are, so the lookup is differentiable around them.
    w = tg.randn(5, 3, dtype=tg.float64) * 0.1
    w.requires_grad_()
    idx = tg.tensor([[0, 3], [3, 4]])
    assert tg.autograd.gradcheck(lambda w: F.embedding(idx, w, max_norm=10.0), (w,))


def test_index_dtype_error_matches():
    w = _weight()
    with pytest.raises(RuntimeError) as t_err:
        torch.nn.functional.embedding(torch.tensor([0.0]), w, max_norm=1.0)
    with pytest.raises(RuntimeError) as m_err:
        F.embedding(tg.tensor([0.0]), _tg(w), max_norm=1.0)
    assert str(t_err.value) in str(m_err.value)
