"""Gradient clipping and parameter/vector conversion against torch.nn.utils."""
import numpy as np
import pytest
import torch

import tapegrad
import tapegrad.nn.utils as gutils

SHAPES = [(3, 4), (4,), (2, 2, 2)]


def _params(lib, dtype="float64"):
    rng = np.random.default_rng(1)
    return [lib.tensor(rng.standard_normal(shape), dtype=getattr(lib, dtype), requires_grad=True)
            for shape in SHAPES]


def _with_grads(lib, dtype="float64"):
    rng = np.random.default_rng(7)
    ps = [lib.zeros(*s, dtype=getattr(lib, dtype), requires_grad=True) for s in SHAPES]
    for p in ps:
        p.grad = lib.tensor(rng.standard_normal(tuple(p.shape)) * 3, dtype=getattr(lib, dtype))
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, float("inf"), 0])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    tp, gp = _with_grads(torch), _with_grads(tapegrad)
    want = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    got = gutils.clip_grad_norm_(gp, max_norm, norm_type)
    assert got.dtype == tapegrad.float64 and got.ndim == 0
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    for t, g in zip(tp, gp):
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_float32_single_tensor_and_grad_identity():
    tp, gp = _with_grads(torch, "float32"), _with_grads(tapegrad, "float32")
    grad = gp[0].grad
    want = torch.nn.utils.clip_grad_norm_(tp[0], 1.0)
    got = gutils.clip_grad_norm_(gp[0], 1.0)
    assert gp[0].grad is grad and got.dtype == tapegrad.float32
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6)
    np.testing.assert_allclose(grad.numpy(), tp[0].grad.numpy(), rtol=1e-6)


def test_clip_grad_norm_nonfinite():
    gp = _with_grads(tapegrad)
    gp[1].grad = tapegrad.tensor([float("nan"), 1.0, 1.0, 1.0], dtype=tapegrad.float64)
    before = gp[0].grad.numpy().copy()
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        gutils.clip_grad_norm_(gp, 1.0, error_if_nonfinite=True)
    np.testing.assert_array_equal(gp[0].grad.numpy(), before)   # nothing was modified
    assert np.isnan(gutils.clip_grad_norm_(gp, 1.0).item())


def test_clip_grad_norm_skips_missing_grads_and_empty():
    a = tapegrad.zeros(2, requires_grad=True)
    assert gutils.clip_grad_norm_([a], 1.0).item() == 0.0
    with pytest.warns(UserWarning, match="empty generator"):
        gutils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_value_matches_torch():
    tp, gp = _with_grads(torch), _with_grads(tapegrad)
    torch.nn.utils.clip_grad_value_(tp, 1.5)
    gutils.clip_grad_value_(gp, 1.5)
    for t, g in zip(tp, gp):
        np.testing.assert_array_equal(g.grad.numpy(), t.grad.numpy())


def test_parameters_to_vector_and_back():
    tp, gp = _params(torch), _params(tapegrad)
    tv, gv = torch.nn.utils.parameters_to_vector(tp), gutils.parameters_to_vector(gp)
    np.testing.assert_array_equal(gv.detach().numpy(), tv.detach().numpy())
    (gv * tapegrad.arange(gv.numel(), dtype=tapegrad.float64)).sum().backward()
    np.testing.assert_array_equal(gp[2].grad.numpy().ravel(), np.arange(16, 24))
    new = tapegrad.arange(24, dtype=tapegrad.float64)
    gutils.vector_to_parameters(new, gp)
    assert gp[1].tolist() == [12.0, 13.0, 14.0, 15.0] and tuple(gp[2].shape) == (2, 2, 2)
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        gutils.vector_to_parameters([1.0], gp)
