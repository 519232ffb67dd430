"""F.interpolate / nn.Upsample in every mode PyTorch has on CPU (lanczos included), against PyTorch: values, gradients
(including where its backward kernels index differently from its forward), dtypes and errors; float64
finite differences."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import gradcheck

TOL = {"float32": 2e-6, "float64": 1e-13}


def _compare(x, make, dtype="float64", seed=0):
    """make(lib, tensor) in both libraries: values, dtype, shape and the gradient of a random projection."""
    results = []
    for lib in (torch, tg):
        t = lib.tensor(x.astype(dtype), requires_grad=True)
        out = make(lib, t)
        w = np.random.default_rng(seed).standard_normal(tuple(out.shape)).astype(dtype)
        (out * lib.tensor(w)).sum().backward()
        results.append((out, t.grad))
    (theirs, their_grad), (ours, our_grad) = results
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=10 * TOL[dtype], atol=10 * TOL[dtype])


def _interp(**kw):
    return lambda lib, t: lib.nn.functional.interpolate(t, **kw)


CASES = [
    # nearest: 2-d takes PyTorch's size shortcuts, 1-d/3-d its generic kernel (and other backward indices)
    ((2, 3, 7), dict(mode="nearest", scale_factor=1.1)),
    ((2, 3, 5), dict(mode="nearest", scale_factor=2.1)),
    ((2, 3, 4, 5), dict(mode="nearest", scale_factor=(1.1, 2.1))),
    ((1, 2, 3, 4, 5), dict(mode="nearest", size=(5, 4, 2))),
    ((2, 3, 9), dict(mode="nearest-exact", scale_factor=0.7)),
    ((2, 2, 5, 7), dict(mode="nearest-exact", size=(8, 3))),
    ((1, 2, 4, 3, 5), dict(mode="nearest-exact", scale_factor=(1.5, 2.0, 0.6))),
    ((2, 3, 6), dict(mode="linear", size=11)),
    ((2, 3, 6), dict(mode="linear", scale_factor=0.45, align_corners=True)),
    ((2, 3, 6), dict(mode="linear", scale_factor=1.7, recompute_scale_factor=True)),
    ((2, 2, 4, 5), dict(mode="bilinear", scale_factor=(1.7, 0.6))),
    ((2, 2, 4, 5), dict(mode="bilinear", size=(7, 5), align_corners=True)),
    ((1, 2, 3, 4, 5), dict(mode="trilinear", scale_factor=(2.0, 1.3, 0.5))),
    ((1, 2, 3, 4, 5), dict(mode="trilinear", size=(4, 1, 7), align_corners=True)),
    ((2, 2, 5, 6), dict(mode="bicubic", size=(9, 4))),
    ((2, 2, 5, 6), dict(mode="bicubic", scale_factor=(1.5, 2.3), align_corners=True)),
    ((2, 2, 5, 6), dict(mode="bicubic", scale_factor=0.55, recompute_scale_factor=True)),
    ((1, 3, 9, 8), dict(mode="bilinear", size=(4, 3), antialias=True)),
    ((1, 3, 5, 6), dict(mode="bilinear", scale_factor=(2.2, 0.4), antialias=True)),
    ((1, 3, 9, 8), dict(mode="bicubic", size=(3, 5), antialias=True)),
    ((1, 3, 5, 8), dict(mode="bicubic", scale_factor=(1.6, 0.45), antialias=True, align_corners=True)),
    ((1, 3, 9, 8), dict(mode="lanczos", size=(4, 11), antialias=True)),
    ((1, 2, 5, 9), dict(mode="lanczos", scale_factor=(2.3, 0.3), antialias=True)),
    # an axis whose size stays: the antialiased forward skips it, PyTorch's backward resamples it
    ((1, 2, 3, 8), dict(mode="bilinear", scale_factor=1.1, antialias=True)),
    ((2, 3, 10), dict(mode="area", size=4)),
    ((2, 2, 7, 5), dict(mode="area", scale_factor=(0.5, 0.7))),
    ((1, 2, 6, 4, 5), dict(mode="area", size=(3, 4, 2))),
]


@pytest.mark.parametrize("shape,kw", CASES, ids=[f"{kw['mode']}-{i}" for i, (_, kw) in enumerate(CASES)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_modes_against_pytorch(shape, kw, dtype):
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    _compare(x, _interp(**kw), dtype)


def test_random_sizes_and_scales_against_pytorch():
    rng = np.random.default_rng(7)
    modes = {1: ["nearest", "nearest-exact", "linear"], 2: ["nearest", "nearest-exact", "bilinear", "bicubic"],
             3: ["nearest", "nearest-exact", "trilinear"]}
    for trial in range(16):
        nd = int(rng.integers(1, 4))
        mode = modes[nd][rng.integers(len(modes[nd]))]
        shape = (1, 2) + tuple(int(v) for v in rng.integers(1, 8, nd))
        kw = dict(mode=mode, scale_factor=tuple(float(np.round(rng.uniform(0.4, 3.0), 2)) for _ in range(nd)))
        if not mode.startswith("nearest"):
            kw["align_corners"] = bool(rng.integers(2))
        if nd == 2 and mode != "nearest" and not mode.startswith("nearest") and rng.random() < 0.4:
            kw["antialias"] = True
        if kw.get("antialias") and int(shape[-1] * kw["scale_factor"][-1]) == 1:
            continue  # PyTorch's antialiased kernel returns zeros at output width 1
        if any(int(n * s) == 0 for n, s in zip(shape[2:], kw["scale_factor"])):
            continue
        _compare(rng.standard_normal(shape), _interp(**kw), ["float32", "float64"][trial % 2], seed=trial)


def test_upsample_modules():
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4))
    _compare(x, lambda lib, t: lib.nn.Upsample(scale_factor=1.5, mode="bicubic", align_corners=True)(t))
    _compare(x, lambda lib, t: lib.nn.UpsamplingNearest2d(size=(5, 7))(t))
    _compare(x, lambda lib, t: lib.nn.UpsamplingBilinear2d(scale_factor=2)(t))
    for make in (lambda n: n.Upsample(scale_factor=(2, 1.5), mode="nearest-exact"),
                 lambda n: n.UpsamplingBilinear2d(size=4), lambda n: n.Upsample(size=3, mode="area")):
        assert repr(make(tg.nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("name,kw", [("upsample", dict(scale_factor=2, mode="bicubic")),
                                     ("upsample_nearest", dict(size=(5, 3))),
                                     ("upsample_bilinear", dict(scale_factor=1.5))])
def test_deprecated_upsample_functions(name, kw):
    x = np.random.default_rng(4).standard_normal((1, 2, 3, 4))
    for lib in (torch, tg):
        with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
            getattr(lib.nn.functional, name)(lib.tensor(x), **kw)
    _compare(x, lambda lib, t: getattr(lib.nn.functional, name)(t, **kw))


def test_gradcheck_float64():
    F = tg.nn.functional
    x = tg.tensor(np.random.default_rng(5).standard_normal((1, 1, 4, 3)), requires_grad=True)
    for kw in (dict(mode="bicubic", size=(3, 2)), dict(mode="bicubic", scale_factor=0.7, antialias=True)):
        assert gradcheck(lambda t: F.interpolate(t, **kw), (x,))


def test_integer_inputs():
    for lib in (torch, tg):
        x = lib.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5).to(lib.uint8)
        out = lib.nn.functional.interpolate(x, scale_factor=(1.5, 0.6))
        if lib is torch:
            expected = out.numpy()
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.dtype == tg.uint8


ERRORS = [
    ((1, 2, 3), dict(scale_factor=0.2)),
    ((1, 2, 3, 4), dict(scale_factor=0.2, mode="bilinear")),
    ((1, 2, 3, 4, 2), dict(scale_factor=0.2, mode="trilinear")),
    ((1, 2, 3, 4), dict(size=(0, 3), mode="bicubic")),
    ((2, 3), dict(size=2)),
    ((1, 2, 3, 4), dict(size=2, mode="foo")),
    ((1, 2, 3), dict(size=2, mode="bilinear")),
    ((1, 2, 3, 4), dict(size=2, mode="trilinear")),
    ((1, 2, 3, 4, 5), dict(size=2, mode="bicubic")),
    ((1, 2, 3), dict(size=2, mode="linear", antialias=True)),
    ((1, 2, 3, 4), dict(size=2, mode="nearest", antialias=True)),
    ((1, 2, 3, 4), dict(size=(2.5, 2))),
    ((1, 2, 3, 4), dict(size=(2, 2, 2))),
    ((1, 2, 3, 4), dict(scale_factor=(2, 2, 2))),
    ((1, 2, 3, 4), dict(size=2, scale_factor=2)),
    ((1, 2, 3, 4), dict()),
    ((1, 2, 3, 4), dict(size=2, recompute_scale_factor=True)),
    ((1, 2, 3, 4), dict(size=2, mode="nearest", align_corners=True)),
    ((1, 2, 3, 4), dict(size=2, mode="lanczos")),
    ((1, 2, 3, 4), dict(size=2, mode="lanczos", antialias=True, align_corners=True)),
    ((1, 2, 3), dict(size=2, mode="lanczos")),
    ((1, 2, 3, 4), dict(size=2, mode="area", align_corners=False)),
    ("long", dict(size=2, mode="bilinear")),
    ("long", dict(size=2, mode="bicubic")),
    ("long", dict(size=2, mode="area")),
]


@pytest.mark.parametrize("shape,kw", ERRORS)
def test_errors(shape, kw):
    def call(lib):
        x = lib.zeros(2, 3, 4, 5, dtype=lib.int64) if shape == "long" else lib.zeros(*shape)
        return lib.nn.functional.interpolate(x, **kw)
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(tg)
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0][:60]), (ours.value, theirs.value)
