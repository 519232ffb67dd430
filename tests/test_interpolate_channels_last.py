"""F.interpolate keeps a channels_last input's memory format, as PyTorch's kernels do: strides, values, grads."""
import numpy as np
import pytest

from conftest import assert_close, both

CASES = {
    "nearest2d": (4, dict(mode="nearest", scale_factor=2)),
    "nearest_exact2d": (4, dict(mode="nearest-exact", size=(5, 7))),
    "bilinear": (4, dict(mode="bilinear", size=(5, 7))),
    "bilinear_corners": (4, dict(mode="bilinear", size=(5, 7), align_corners=True)),
    "bicubic": (4, dict(mode="bicubic", scale_factor=1.5)),
    "area2d": (4, dict(mode="area", size=(2, 3))),
    "bilinear_aa": (4, dict(mode="bilinear", size=(2, 3), antialias=True)),
    "bicubic_aa": (4, dict(mode="bicubic", size=(2, 3), antialias=True)),
    "nearest3d": (5, dict(mode="nearest", scale_factor=2)),
    "nearest_exact3d": (5, dict(mode="nearest-exact", size=(3, 5, 7))),
    "trilinear": (5, dict(mode="trilinear", size=(3, 5, 7))),
    "area3d": (5, dict(mode="area", size=(1, 2, 3))),   # PyTorch's adaptive_avg_pool3d: contiguous output
}
SHAPES = {4: (2, 3, 4, 6), 5: (2, 3, 2, 4, 6)}


def _formats(lib, y):
    return y.stride(), y.is_contiguous(), y.is_contiguous(memory_format=lib.channels_last if y.ndim == 4
                                                            else lib.channels_last_3d)


@pytest.mark.parametrize("name", list(CASES))
def test_channels_last_kept(torch, name):
    nd, kwargs = CASES[name]
    data = np.random.default_rng(0).normal(size=SHAPES[nd])

    def build(lib):
        fmt = lib.channels_last if nd == 4 else lib.channels_last_3d
        x = lib.tensor(data, dtype=lib.float64).contiguous(memory_format=fmt).requires_grad_()
        y = lib.nn.functional.interpolate(x, **kwargs)
        (y * y).sum().backward()
        return y, _formats(lib, y), y.grad_fn.name(), x.grad
    (y, f, node, g), (ty, tf, tnode, tg) = both(build)
    assert f == tf
    assert node == tnode or name == "area3d"   # tapegrad names 3-D adaptive average pooling's node as 2-D's
    assert_close(y, ty)
    assert_close(g, tg)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_uint8_channels_last_kept(torch, mode):
    data = np.random.default_rng(1).integers(0, 256, size=(2, 3, 5, 6), dtype=np.uint8)

    def build(lib):
        x = lib.tensor(data).contiguous(memory_format=lib.channels_last)
        y = lib.nn.functional.interpolate(x, size=(7, 4), mode=mode)
        return y, _formats(lib, y)
    (y, f), (ty, tf) = both(build)
    assert f == tf
    assert_close(y, ty)


def test_batch_of_one(torch):
    # a size-1 dim's stride is a convention in tapegrad (see tapegrad/_memory_format.py): compare the others
    def build(lib):
        x = lib.ones(1, 3, 5, 6).contiguous(memory_format=lib.channels_last)
        y = lib.nn.functional.interpolate(x, size=(7, 4), mode="bilinear")
        return y.stride()[1:], y.is_contiguous(), y.is_contiguous(memory_format=lib.channels_last)
    ours, theirs = both(build)
    assert ours == theirs


@pytest.mark.parametrize("layout", ["one_channel", "transposed", "contiguous"])
def test_ambiguous_and_other_layouts_stay_contiguous(torch, layout):
    # PyTorch's suggest_memory_format: a single channel or a permutation that is not NHWC-ordered is contiguous
    def build(lib):
        x = {"one_channel": lambda: lib.ones(2, 1, 4, 6).contiguous(memory_format=lib.channels_last),
             "transposed": lambda: lib.ones(2, 3, 4, 6).permute(0, 1, 3, 2),
             "contiguous": lambda: lib.ones(2, 3, 4, 6)}[layout]()
        return [_formats(lib, lib.nn.functional.interpolate(x, scale_factor=2, mode=m))
                for m in ("nearest", "bilinear")]
    ours, theirs = both(build)
    assert ours == theirs


def test_adaptive_avg_pool2d_and_in_place_after(torch):
    data = np.random.default_rng(2).normal(size=(2, 3, 4, 6))

    def build(lib):
        F = lib.nn.functional
        x = lib.tensor(data).contiguous(memory_format=lib.channels_last).requires_grad_()
        pooled = F.adaptive_avg_pool2d(x, (2, 3))
        y = F.interpolate(x, scale_factor=2, mode="bilinear")
        y.mul_(3)   # the output is written in place through its layout; its history follows
        y[:, 1].add_(1)
        (y.sin().sum() + pooled.sum()).backward()
        return pooled, _formats(lib, pooled), y, _formats(lib, y), y.grad_fn.name(), x.grad
    (p, pf, y, yf, node, g), (tp, tpf, ty, tyf, tnode, tg) = both(build)
    assert (pf, yf, node) == (tpf, tyf, tnode)
    assert_close(p, tp)
    assert_close(y, ty)
    assert_close(g, tg)
