"""tapegrad.nested: the simple nested-tensor cases against torch.nested."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad


def _both(*shapes):
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nt = torch.nested.nested_tensor([torch.tensor(d) for d in data])
    return nt, tapegrad.nested.nested_tensor([tapegrad.tensor(d) for d in data])


def test_repr_size_dim_unbind_match_torch():
    nt, ng = _both((3,), (2,))
    assert repr(ng) == repr(nt)
    assert ng.size(0) == nt.size(0) and ng.dim() == nt.dim() and ng.is_nested and nt.is_nested
    for a, b in zip(ng.unbind(), nt.unbind()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(RuntimeError) as et:
        nt.size(1)
    with pytest.raises(RuntimeError) as eg:
        ng.size(1)
    assert str(eg.value) == str(et.value)


def test_to_padded_tensor_matches_torch():
    nt, ng = _both((2, 3), (1, 4))
    for pad in (0.0, -1.5):
        np.testing.assert_array_equal(tapegrad.nested.to_padded_tensor(ng, pad).numpy(),
                                      torch.nested.to_padded_tensor(nt, pad).numpy())
        np.testing.assert_array_equal(ng.to_padded_tensor(pad).numpy(), nt.to_padded_tensor(pad).numpy())


def test_gradient_flows_through_as_nested_tensor_padding():
    a = tapegrad.ones(2, requires_grad=True)
    b = tapegrad.ones(3, requires_grad=True)
    padded = tapegrad.nested.as_nested_tensor([a, b]).to_padded_tensor(0.0)
    (padded * tapegrad.arange(3.0)).sum().backward()
    assert a.grad.tolist() == [0.0, 1.0] and b.grad.tolist() == [0.0, 1.0, 2.0]


def test_other_ops_are_refused_clearly():
    _, ng = _both((2,), (3,))
    with pytest.raises(TypeError, match="to_padded_tensor"):
        ng.softmax(-1)
