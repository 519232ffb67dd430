"""Names PyTorch's tutorials use: torch.vmap, the float constants, torch.functional, unique_consecutive,
backends.cudnn.flags, nn.functional.affine_grid and grid_sample; each against PyTorch."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised




def _origin(fn):
    # where a function is defined (another test may import tapegrad's modules afresh, so not identity)
    return fn.__module__, fn.__qualname__


# ---- top-level names ---------------------------------------------------------------------------------

def test_constants_and_vmap(torch):
    for name in ("inf", "nan", "pi", "e", "newaxis"):
        ours, theirs = getattr(tapegrad, name), getattr(torch, name)
        assert type(ours) is type(theirs) and (ours == theirs or ours != ours and theirs != theirs)
    assert _origin(tapegrad.vmap) == ("tapegrad.func", "vmap")
    x = np.random.default_rng(0).normal(size=(4, 3))
    assert_close(tapegrad.vmap(lambda r: r.sum() * r)(tapegrad.tensor(x)),
                 torch.vmap(lambda r: r.sum() * r)(torch.tensor(x)))
    assert tapegrad.zeros(2, 3)[:, tapegrad.newaxis].shape == (2, 1, 3)


def test_torch_functional_module(torch):
    for name in tapegrad.functional.__all__:
        assert name in torch.functional.__all__
        assert _origin(getattr(tapegrad.functional, name)) == _origin(getattr(tapegrad, name))
    a = np.arange(6.).reshape(2, 3)
    assert_close(tapegrad.functional.einsum("ij->ji", tapegrad.tensor(a)), torch.functional.einsum("ij->ji",
                                                                                                   torch.tensor(a)))


# ---- unique_consecutive ---------------------------------------------------------------------------------

_UNIQUE_CASES = [
    ([1, 1, 2, 2, 3, 1, 1, 2], {}),
    ([[1, 1, 2], [2, 3, 3]], {}),
    ([[1, 1], [1, 1], [2, 3], [2, 3], [1, 1]], {"dim": 0}),
    ([[1, 1, 2, 2], [1, 1, 3, 3]], {"dim": 1}),
    ([[1, 1, 2, 2], [1, 1, 3, 3]], {"dim": -1}),
    ([True, True, False], {}),
    ([0.5, 0.5, -1.0], {}),
    ([], {}),
    (3.0, {}),
]


@pytest.mark.parametrize("data,kwargs", _UNIQUE_CASES)
@pytest.mark.parametrize("return_inverse", [False, True])
@pytest.mark.parametrize("return_counts", [False, True])
def test_unique_consecutive(torch, data, kwargs, return_inverse, return_counts):
    ours = tapegrad.unique_consecutive(tapegrad.tensor(data), return_inverse=return_inverse,
                                       return_counts=return_counts, **kwargs)
    theirs = torch.unique_consecutive(torch.tensor(data), return_inverse=return_inverse,
                                      return_counts=return_counts, **kwargs)
    ours, theirs = (ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_unique_consecutive_method_and_errors(torch):
    x = [[1, 1], [1, 2]]
    assert_close(tapegrad.tensor(x).unique_consecutive(dim=0), torch.tensor(x).unique_consecutive(dim=0))
    ours = raised(lambda: tapegrad.tensor(x).unique_consecutive(dim=2), fold=True)
    theirs = raised(lambda: torch.tensor(x).unique_consecutive(dim=2), fold=True)
    assert ours[0] == theirs[0] and "Dimension out of range" in ours[1]


# ---- backends.cudnn.flags ---------------------------------------------------------------------------------

def test_cudnn_flags(torch):
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    ours, theirs = tapegrad.backends.cudnn, torch.backends.cudnn
    before = [getattr(ours, n) for n in names]
    assert before == [getattr(theirs, n) for n in names]
    for kwargs in ({}, {"allow_tf32": False}, {"enabled": True, "benchmark": True, "deterministic": True}):
        with ours.flags(**kwargs), theirs.flags(**kwargs):
            assert [getattr(ours, n) for n in names] == [getattr(theirs, n) for n in names]
        assert [getattr(ours, n) for n in names] == before
    with pytest.raises(ValueError):
        with ours.flags(allow_tf32=False):
            raise ValueError("inside")
    assert [getattr(ours, n) for n in names] == before


# ---- affine_grid ------------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:Since version 1.3.0")
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 4, 5)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_values_and_grads(torch, size, align_corners):
    dims = len(size) - 2
    theta = np.random.default_rng(1).normal(size=(size[0], dims, dims + 1))
    ours_theta = tapegrad.tensor(theta, requires_grad=True)
    theirs_theta = torch.tensor(theta, requires_grad=True)
    ours = tapegrad.nn.functional.affine_grid(ours_theta, size, align_corners=align_corners)
    theirs = torch.nn.functional.affine_grid(theirs_theta, size, align_corners=align_corners)
    assert_close(ours, theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    weight = np.random.default_rng(2).normal(size=tuple(theirs.shape))
    (ours * tapegrad.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    assert_close(ours_theta.grad, theirs_theta.grad)


def test_affine_grid_float32_warning_and_errors(torch):
    theta = np.random.default_rng(3).normal(size=(1, 2, 3)).astype(np.float32)
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = tapegrad.nn.functional.affine_grid(tapegrad.tensor(theta), (1, 1, 3, 3))
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = torch.nn.functional.affine_grid(torch.tensor(theta), (1, 1, 3, 3))
    assert_close(ours, theirs)
    assert [str(w.message) for w in ours_w] == [str(w.message) for w in theirs_w]
    for build in (lambda lib: lib.nn.functional.affine_grid(lib.zeros(1, 3, 3), (1, 1, 3, 3), align_corners=False),
                  lambda lib: lib.nn.functional.affine_grid(lib.zeros(1, 2, 3, dtype=lib.int64), (1, 1, 3, 3),
                                                            align_corners=False),
                  lambda lib: lib.nn.functional.affine_grid(lib.zeros(1, 2, 3), (1, 1, 0, 3), align_corners=False)):
        assert raised(lambda: build(tapegrad), fold=True) == raised(lambda: build(torch), fold=True)


# ---- grid_sample ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_values_and_grads(torch, mode, padding_mode, align_corners):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 5, 6))
    grid = rng.uniform(-1.5, 1.5, size=(2, 4, 7, 2))   # points outside the input too
    ours_x, ours_g = tapegrad.tensor(x, requires_grad=True), tapegrad.tensor(grid, requires_grad=True)
    theirs_x, theirs_g = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    ours = tapegrad.nn.functional.grid_sample(ours_x, ours_g, mode=mode, padding_mode=padding_mode,
                                              align_corners=align_corners)
    theirs = torch.nn.functional.grid_sample(theirs_x, theirs_g, mode=mode, padding_mode=padding_mode,
                                             align_corners=align_corners)
    assert_close(ours, theirs)
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    weight = rng.normal(size=tuple(theirs.shape))
    (ours * tapegrad.tensor(weight)).sum().backward()
    (theirs * torch.tensor(weight)).sum().backward()
    assert_close(ours_x.grad, theirs_x.grad)
    assert_close(ours_g.grad, theirs_g.grad, atol=1e-12, rtol=1e-9)


def test_grid_sample_gradcheck_and_float32(torch):
    rng = np.random.default_rng(5)
    x = tapegrad.tensor(rng.normal(size=(1, 2, 4, 4)), requires_grad=True)
    grid = tapegrad.tensor(rng.uniform(-0.9, 0.9, size=(1, 3, 3, 2)), requires_grad=True)
    assert tapegrad.autograd.gradcheck(
        lambda a, g: tapegrad.nn.functional.grid_sample(a, g, align_corners=False), (x, grid))
    x32 = rng.normal(size=(1, 1, 3, 3)).astype(np.float32)
    g32 = rng.uniform(-1, 1, size=(1, 2, 2, 2)).astype(np.float32)
    assert_close(tapegrad.nn.functional.grid_sample(tapegrad.tensor(x32), tapegrad.tensor(g32), align_corners=True),
                 torch.nn.functional.grid_sample(torch.tensor(x32), torch.tensor(g32), align_corners=True))


def test_spatial_transformer_step(torch):
    """The tutorial's use: affine_grid from predicted matrices, then grid_sample, then a loss's gradients."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(2, 1, 6, 6))
    theta = np.tile(np.array([[1., 0., 0.], [0., 1., 0.]]), (2, 1, 1)) + 0.1 * rng.normal(size=(2, 2, 3))
    results = []
    for lib in (tapegrad, torch):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, (2, 1, 6, 6), align_corners=False)
        out = lib.nn.functional.grid_sample(lib.tensor(x), grid, align_corners=False)
        out.pow(2).mean().backward()
        results.append((out, t.grad))
    assert_close(results[0][0], results[1][0])
    assert_close(results[0][1], results[1][1])


def test_grid_sample_errors(torch):
    def cases(lib):
        F, z = lib.nn.functional, lib.zeros
        return [
            lambda: F.grid_sample(z(1, 1, 3, 3), z(1, 2, 2, 2), mode="cubic", align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3), z(1, 2, 2, 2), padding_mode="wrap", align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3), z(1, 2, 2, 2, dtype=lib.float64), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3), z(2, 2, 2, 2), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3), z(1, 2, 2, 3), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3), z(1, 2, 2), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3), z(1, 2, 1), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 0, 3), z(1, 2, 2, 2), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(1, 2, 2, 2, 3), mode="bicubic", align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3, dtype=lib.int64), z(1, 2, 2, 2, dtype=lib.int64),
                                  align_corners=False),
        ]
    for ours, theirs in zip(cases(tapegrad), cases(torch)):
        assert raised(ours, fold=True) == raised(theirs, fold=True)
