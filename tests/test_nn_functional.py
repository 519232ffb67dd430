"""tapegrad.nn.functional against torch.nn.functional: values, grads and errors (float64)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _mine(x):
    if isinstance(x, torch.Tensor):
        return tg.tensor(x.detach().numpy(), requires_grad=x.requires_grad)
    return x


def check(name, *args, constants=(), **kwargs):
    """Call F.name and TF.name on the same data; compare outputs and grads of float inputs not in `constants`."""
    t_args = [a.detach().clone().requires_grad_(a.is_floating_point() and i not in constants)
              if isinstance(a, torch.Tensor) else a for i, a in enumerate(args)]
    m_args = [_mine(a) for a in t_args]
    t_kw = {k: v for k, v in kwargs.items()}
    m_kw = {k: getattr(tg, str(v)[6:]) if isinstance(v, torch.dtype) else _mine(v) for k, v in kwargs.items()}
    expect = getattr(TF, name)(*t_args, **t_kw)
    got = getattr(F, name)(*m_args, **m_kw)
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert got.dtype.name == str(expect.dtype).replace("torch.", "")
    if expect.requires_grad:
        w = randn(*expect.shape, seed=9)
        (expect * w).sum().backward()
        (got * tg.tensor(w.numpy())).sum().backward()
        for a, b in zip(t_args, m_args):
            if isinstance(a, torch.Tensor) and a.requires_grad:
                np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-9, atol=1e-12)
    return got


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_family(name, dim):
    check(name, randn(3, 4, 2) * 3, dim=dim)


def test_softmax_dtype_argument_and_implicit_dim_warning():
    check("softmax", randn(3, 4).float(), dim=1, dtype=torch.float64)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        F.softmax(tg.randn(2, 3))


@pytest.mark.parametrize("name,kwargs", [
    ("relu", {}), ("leaky_relu", {"negative_slope": 0.3}), ("elu", {"alpha": 0.5}), ("gelu", {}),
    ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}), ("softplus", {"beta": 0.5, "threshold": 4.0}),
    ("hardtanh", {"min_val": -0.3, "max_val": 2.0}), ("relu6", {}), ("selu", {}), ("celu", {"alpha": 2.0}),
    ("tanh", {}), ("sigmoid", {})])
def test_activations(name, kwargs):
    check(name, randn(4, 5) * 4, **kwargs)


def test_linear_bilinear_and_shape_error():
    check("linear", randn(2, 3, 4), randn(5, 4), randn(5))
    check("bilinear", randn(3, 2), randn(3, 4), randn(5, 2, 4), randn(5))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        F.linear(tg.randn(2, 3), tg.randn(5, 4))


def test_convolutions():
    check("conv1d", randn(2, 4, 9), randn(6, 2, 3), randn(6), stride=2, padding=2, dilation=2, groups=2)
    check("conv2d", randn(1, 3, 6, 5), randn(2, 3, 2, 3), padding="same")
    check("conv2d", randn(1, 3, 6, 5), randn(2, 3, 2, 3), padding="valid")
    check("conv3d", randn(1, 2, 4, 4, 3), randn(3, 2, 2, 2, 2), stride=(1, 2, 1))
    check("conv_transpose2d", randn(1, 4, 3, 3), randn(4, 3, 3, 2), randn(6), stride=2, padding=1,
          output_padding=1, groups=2)
    with pytest.raises(RuntimeError, match="expected input.* to have 3 channels, but got 4 channels instead"):
        F.conv2d(tg.randn(1, 4, 5, 5), tg.randn(2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):   # (PyTorch's CPU message)
        F.conv2d(tg.randn(1, 3, 5, 5, dtype=tg.float64), tg.randn(2, 3, 3, 3))


def test_pooling():
    x = randn(2, 3, 9, 8)
    check("max_pool2d", x, 3, stride=2, padding=1)
    check("max_pool2d", x, (2, 3), ceil_mode=True)
    check("avg_pool2d", x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    check("max_pool1d", randn(2, 8), 3)
    check("adaptive_avg_pool1d", randn(2, 3, 10), 4)
    check("adaptive_avg_pool2d", x, 1)
    check("adaptive_max_pool2d", x, (4, 3))
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(tg.randn(1, 1, 5, 5), 2, padding=2)


def test_normalization_functions():
    x = randn(4, 3, 5)
    check("layer_norm", x, (3, 5), randn(3, 5, seed=1), randn(3, 5, seed=2))
    check("group_norm", x, 3, randn(3, seed=1), randn(3, seed=2), eps=1e-3)
    check("rms_norm", x, [5], randn(5, seed=1))
    check("batch_norm", x, torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64),
          randn(3, seed=1), randn(3, seed=2), training=True, constants=(1, 2))
    check("batch_norm", x, randn(3, seed=3), randn(3, seed=4).abs(), training=False, constants=(1, 2))
    check("normalize", x, dim=1)
    check("normalize", x, p=1.0, dim=-1)
    x0 = torch.zeros(2, 3, dtype=torch.float64)
    check("normalize", x0)
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[4\\], expected input with shape"):
        F.layer_norm(tg.randn(2, 3), [4])


@pytest.mark.parametrize("mode,value", [("constant", None), ("constant", 1.5), ("reflect", None),
                                        ("replicate", None), ("circular", None)])
def test_pad(mode, value):
    pads = (1, 2, 2, 0) if mode != "constant" else (1, 2, -1, 3)
    kwargs = {"mode": mode} if value is None else {"mode": mode, "value": value}
    check("pad", randn(2, 3, 4, 5), pads, **kwargs)


@pytest.mark.parametrize("kwargs", [
    {"scale_factor": 2, "mode": "nearest"}, {"size": (5, 7), "mode": "nearest"},
    {"size": (5, 3), "mode": "nearest-exact"}, {"scale_factor": 1.7, "mode": "bilinear"},
    {"size": (2, 9), "mode": "bilinear", "align_corners": True}, {"size": (4, 6), "mode": "area"},
    {"scale_factor": 0.6, "mode": "bilinear", "recompute_scale_factor": True}])
def test_interpolate_2d(kwargs):
    check("interpolate", randn(2, 2, 4, 5), **kwargs)


def test_interpolate_1d_linear():
    check("interpolate", randn(1, 2, 6), size=9, mode="linear")
    check("interpolate", randn(1, 2, 6), scale_factor=3, mode="linear", align_corners=True)


def test_one_hot_and_embedding():
    idx = torch.tensor([[0, 3], [2, 2]])
    got = F.one_hot(tg.tensor(idx.numpy()))
    np.testing.assert_array_equal(got.numpy(), TF.one_hot(idx).numpy())
    assert got.dtype is tg.int64
    assert tuple(F.one_hot(tg.tensor([1]), 5).shape) == (1, 5)
    check("embedding", idx, randn(5, 3), padding_idx=2)
    check("embedding_bag", torch.tensor([0, 2, 4, 1]), randn(5, 3), torch.tensor([0, 1]), mode="sum",
          per_sample_weights=randn(4, seed=2))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the "):
        F.embedding(tg.tensor([0.0]), tg.randn(3, 2))


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}])
def test_scaled_dot_product_attention(kwargs):
    check("scaled_dot_product_attention", randn(2, 3, 4, 8), randn(2, 3, 6, 8, seed=1), randn(2, 3, 6, 5, seed=2),
          **kwargs)


def test_scaled_dot_product_attention_masks():
    q, k, v = randn(2, 4, 8), randn(2, 6, 8, seed=1), randn(2, 6, 8, seed=2)
    bool_mask = torch.rand(4, 6, generator=torch.Generator().manual_seed(3)) > 0.3
    bool_mask[:, 0] = True
    check("scaled_dot_product_attention", q, k, v, attn_mask=bool_mask)
    check("scaled_dot_product_attention", q, k, v, attn_mask=randn(2, 4, 6, seed=4))
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(*(tg.tensor(t.numpy()) for t in (q, k, v)),
                                       attn_mask=tg.tensor(bool_mask.numpy()), is_causal=True)


def test_dropout_functional():
    x = tg.ones(1000, dtype=tg.float64)
    assert F.dropout(x, 0.3, training=False) is x
    y = F.dropout(x, 0.3).numpy()
    assert set(np.unique(y).round(6)) <= {0.0, round(1 / 0.7, 6)}
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(1000))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)
    z = F.dropout2d(tg.ones(4, 8, 3, 3), 0.5).numpy()
    assert all(len(np.unique(z[i, c])) == 1 for i in range(4) for c in range(8))


_RUNNING_STATS = {
    "batch_norm_eval": lambda lib, x, m, v: lib.nn.functional.batch_norm(x, m, v, training=False),
    "batch_norm_train": lambda lib, x, m, v: lib.nn.functional.batch_norm(x, m, v, training=True),
    "batch_norm_empty": lambda lib, x, m, v: lib.nn.functional.batch_norm(x[:0], m, v, training=False),
    "instance_norm": lambda lib, x, m, v: lib.nn.functional.instance_norm(x[None], m, v, use_input_stats=True),
    "instance_norm_running": lambda lib, x, m, v: lib.nn.functional.instance_norm(x[None], m, v,
                                                                                  use_input_stats=False),
}


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("stat", ["mean", "var", "both"])
@pytest.mark.parametrize("case", sorted(_RUNNING_STATS))
def test_running_statistics_that_require_grad_are_refused_as_torch_refuses_them(case, stat, grad_mode):
    """PyTorch's native_batch_norm does not differentiate its running statistics: with grad mode on, one that
    requires grad is refused (running_mean first), whether the input requires grad or not; a batch norm of an
    empty input returns before that kernel."""
    def run(lib):
        x = lib.tensor([[0.3, -0.6, 0.7], [0.45, 0.2, -0.4]], dtype=lib.float64)
        p = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        m = p * 1 if stat in ("mean", "both") else p.detach().clone()
        v = p + 1 if stat in ("var", "both") else p.detach() + 1
        try:
            with lib.set_grad_enabled(grad_mode):
                out = _RUNNING_STATS[case](lib, x, m, v)
            return out.detach().numpy().round(10).tolist(), out.requires_grad
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            return type(e).__name__, str(e).split(". This input")[0]
    ours, theirs = run(tg), run(torch)
    assert ours == theirs
