"""nn.utils.fuse_conv_bn_eval / fuse_linear_bn_eval against PyTorch: the fused layer's output, weights and
Parameters, and the refusals."""
import numpy as np
import pytest
import torch

import tapegrad

LAYERS = {
    "conv": (lambda l: l.nn.Conv2d(3, 4, 3), lambda l: l.nn.BatchNorm2d(4), False),
    "conv_without_biases": (lambda l: l.nn.Conv2d(3, 4, 3, bias=False), lambda l: l.nn.BatchNorm2d(4, affine=False),
                            False),
    "conv1d": (lambda l: l.nn.Conv1d(3, 2, 2), lambda l: l.nn.BatchNorm1d(2), False),
    "conv_transpose": (lambda l: l.nn.ConvTranspose2d(3, 4, 3), lambda l: l.nn.BatchNorm2d(4), True),
    "linear": (lambda l: l.nn.Linear(6, 5), lambda l: l.nn.BatchNorm1d(5), None),
}
_X = np.linspace(-1, 1, 2 * 3 * 6 * 6).reshape(2, 3, 6, 6).astype(np.float32)


def _fused(lib, name):
    make_layer, make_bn, transpose = LAYERS[name]
    lib.manual_seed(0)
    layer, bn = make_layer(lib), make_bn(lib)
    n = bn.num_features
    with lib.no_grad():
        bn.running_mean.copy_(lib.linspace(-0.5, 0.5, n))
        bn.running_var.copy_(lib.linspace(0.5, 2.0, n))
        if bn.weight is not None:
            bn.weight.copy_(lib.linspace(0.8, 1.2, n))
            bn.bias.copy_(lib.linspace(-0.1, 0.1, n))
    layer.eval()
    bn.eval()
    x = lib.tensor(_X)
    if transpose is None:
        x = x.reshape(12, 18)[:, :6]
        fused = lib.nn.utils.fuse_linear_bn_eval(layer, bn)
    else:
        x = x[:, :, 0] if isinstance(layer, lib.nn.Conv1d) else x
        fused = lib.nn.utils.fuse_conv_bn_eval(layer, bn, transpose)
    return fused, fused(x), bn(layer(x))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_fused_layer_computes_the_pair_as_pytorchs(name):
    (ours, out, unfused), (theirs, tout, _) = _fused(tapegrad, name), _fused(torch, name)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.detach().numpy(), unfused.detach().numpy(), rtol=1e-5, atol=1e-6)
    for p, q in ((ours.weight, theirs.weight), (ours.bias, theirs.bias)):
        assert type(p).__name__ == type(q).__name__ == "Parameter" and p.requires_grad == q.requires_grad
        assert p.dtype.name == str(q.dtype).removeprefix("torch.")
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_fusion_refuses_as_pytorch():
    for lib in (tapegrad, torch):
        conv, bn = lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4)
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.nn.utils.fuse_conv_bn_eval(conv, bn)
        linear, bn = lib.nn.Linear(6, 5).eval(), lib.nn.BatchNorm1d(3).eval()
        with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
            lib.nn.utils.fuse_linear_bn_eval(linear, bn)


def test_skip_init_as_pytorch():
    """nn.utils.skip_init (in this file with the other nn.utils helpers for deployment): the module without its
    initialisers run, and PyTorch's refusals."""
    for lib in (tapegrad, torch):
        m = lib.nn.utils.skip_init(lib.nn.Conv2d, in_channels=2, out_channels=3, kernel_size=3)
        assert type(m).__name__ == "Conv2d" and tuple(m.weight.shape) == (3, 2, 3, 3)
        assert str(m.weight.device) == "cpu" and m.weight.requires_grad and type(m.weight).__name__ == "Parameter"

        class NoDevice(lib.nn.Module):
            pass
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip initialization"):
            lib.nn.utils.skip_init(NoDevice)
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int)
