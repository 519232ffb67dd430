"""Single names PyTorch has at top level: in-place functions (torch.sin_), torch.svd, matrix_exp."""
import numpy as np
import pytest
import torch

import tapegrad


def test_every_torch_inplace_function_tapegrad_has_as_method_is_top_level():
    for name in dir(torch):
        if name.endswith("_") and not name.startswith("_") and hasattr(tapegrad.Tensor, name):
            assert hasattr(tapegrad, name), name


@pytest.mark.parametrize("name, args", [("sin_", ()), ("exp_", ()), ("clamp_", (0.1, 0.6)), ("sqrt_", ()),
                                        ("zero_", ()), ("fill_", (2.5,)), ("sigmoid_", ())])
def test_inplace_functions_match_torch(name, args):
    data = np.array([0.2, 0.5, 0.9], dtype=np.float32)
    t, g = torch.tensor(data), tapegrad.tensor(data)
    rt, rg = getattr(torch, name)(t, *args), getattr(tapegrad, name)(g, *args)
    assert rg is g and rt is t
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)


def test_inplace_function_gradient_matches_torch():
    data = np.array([0.2, 0.5], dtype=np.float64)
    xt = torch.tensor(data, requires_grad=True)
    xg = tapegrad.tensor(data, requires_grad=True)
    yt, yg = xt * 2, xg * 2
    torch.cos_(yt).sum().backward()
    tapegrad.cos_(yg).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy())


def test_inplace_function_refuses_non_tensor():
    with pytest.raises(TypeError) as et:
        torch.sin_([1.0])
    with pytest.raises(TypeError, match="must be Tensor") as eg:
        tapegrad.sin_([1.0])
    assert "must be Tensor" in str(et.value)


@pytest.mark.parametrize("some", [True, False])
def test_svd_legacy_reconstructs_and_matches_torch_shapes(some):
    data = np.random.default_rng(0).standard_normal((4, 3))
    ut, st, vt = torch.svd(torch.tensor(data), some=some)
    res = tapegrad.svd(tapegrad.tensor(data), some=some)
    assert type(res).__name__ == "svd" and res._fields == ("U", "S", "V")
    ug, sg, vg = res
    assert ug.shape == ut.shape and vg.shape == vt.shape
    np.testing.assert_allclose(sg.numpy(), st.numpy(), atol=1e-12)
    k = sg.shape[0]
    recon = ug.numpy()[:, :k] * sg.numpy() @ vg.numpy()[:, :k].T
    np.testing.assert_allclose(recon, data, atol=1e-12)


def test_svd_without_uv_gives_zeros_as_torch():
    data = np.random.default_rng(1).standard_normal((3, 3))
    ut, st, vt = torch.svd(torch.tensor(data), compute_uv=False)
    ug, sg, vg = tapegrad.svd(tapegrad.tensor(data), compute_uv=False)
    np.testing.assert_array_equal(ug.numpy(), ut.numpy())
    np.testing.assert_array_equal(vg.numpy(), vt.numpy())
    np.testing.assert_allclose(sg.numpy(), st.numpy(), atol=1e-12)


def test_linalg_svd_keeps_vh_field():
    rg, rt = tapegrad.linalg.svd(tapegrad.eye(2)), torch.linalg.svd(torch.eye(2))
    assert rg._fields == ("U", "S", "Vh") and hasattr(rt, "Vh")
    assert repr(rg).split("(")[0] == repr(rt).split("(")[0] == "torch.return_types.linalg_svd"


def test_matrix_exp_values_and_gradient_match_torch():
    data = np.random.default_rng(2).standard_normal((2, 3, 3)) * 0.5
    xt = torch.tensor(data, requires_grad=True)
    xg = tapegrad.tensor(data, requires_grad=True)
    yt, yg = torch.matrix_exp(xt), tapegrad.matrix_exp(xg)
    np.testing.assert_allclose(yg.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    (yt * yt).sum().backward()
    (yg * yg).sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1e-8)
    assert tapegrad.autograd.gradcheck(tapegrad.linalg.matrix_exp, (tapegrad.tensor(data[0], requires_grad=True),))


def test_matrix_exp_refuses_non_square():
    with pytest.raises(RuntimeError) as et:
        torch.matrix_exp(torch.zeros(2, 3))
    with pytest.raises(RuntimeError) as eg:
        tapegrad.matrix_exp(tapegrad.zeros(2, 3))
    assert str(eg.value) == str(et.value)
