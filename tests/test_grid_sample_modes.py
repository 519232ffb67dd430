"""grid_sample on 5-D volumes (trilinear and nearest) and in bicubic mode, against PyTorch: values and gradients for
the input and the grid in every padding mode and corner alignment, at random points (inside and outside [-1, 1])
and on pixel centres, edges and reflection folds; float64 finite differences; affine_grid for volumes; errors."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised

PADDINGS = ["zeros", "border", "reflection"]
# (input shape, grid shape) per rank: sizes differ per axis so that a swapped axis shows
SHAPES = {5: ((2, 3, 3, 4, 5), (2, 2, 3, 4, 3)), 4: ((2, 3, 5, 6), (2, 4, 7, 2))}
NEW_MODES = [(5, "bilinear"), (5, "nearest"), (4, "bicubic")]
# grid values that unnormalize to pixel centres, edges (x.5), the borders and points past them
LATTICE = np.array([-2.0, -1.5, -1.25, -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0])


def _sample(lib, x, grid, weight, **kw):
    """Output, input gradient and grid gradient of sum(grid_sample(x, grid) * weight), and the node's name."""
    xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)
    out = lib.nn.functional.grid_sample(xt, gt, **kw)
    (out * lib.tensor(weight)).sum().backward()
    return out, xt.grad, gt.grad, type(out.grad_fn).__name__


def _compare(torch, x, grid, grid_tol=(1e-9, 1e-12), **kw):
    weight = np.random.default_rng(1).normal(size=x.shape[:2] + grid.shape[1:-1]).astype(x.dtype)
    theirs = _sample(torch, x, grid, weight, **kw)
    ours = _sample(tapegrad, x, grid, weight, **kw)
    assert ours[3] == theirs[3]
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    # PyTorch's grid gradient is its own formula (JAX's is the chain rule) summing C * 16 bicubic terms of up to
    # ~25: in float32 the two roundings differ by a few units of that size's last place
    assert_close(ours[2], theirs[2], rtol=grid_tol[0], atol=grid_tol[1])


@pytest.mark.parametrize("dims,mode", NEW_MODES)
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_gradients_at_random_points(torch, dims, mode, padding_mode, align_corners, dtype):
    rng = np.random.default_rng(dims * 7 + len(mode))
    x_shape, grid_shape = SHAPES[dims]
    x = rng.normal(size=x_shape).astype(dtype)
    grid = rng.uniform(-1.6, 1.6, size=grid_shape).astype(dtype)   # a third of the points outside the input
    _compare(torch, x, grid, grid_tol=(1e-5, 5e-5) if dtype == "float32" else (1e-9, 1e-12),
             mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("dims,mode", NEW_MODES + [(4, "bilinear"), (4, "nearest")])
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_points_on_pixel_edges_and_folds(torch, dims, mode, padding_mode, align_corners):
    """Ties of nearest rounding (half to even), integer points of the interpolation, borders and reflection folds:
    where each PyTorch kernel's rounding and its gradient's choice of side show."""
    x_shape, grid_shape = SHAPES[dims]
    x = np.random.default_rng(2).normal(size=x_shape)
    count = int(np.prod(grid_shape))
    grid = np.resize(np.random.default_rng(3).permutation(np.resize(LATTICE, count)), grid_shape)
    _compare(torch, x, grid, mode=mode, padding_mode=padding_mode, align_corners=align_corners)


@pytest.mark.parametrize("dims,mode", NEW_MODES)
@pytest.mark.parametrize("padding_mode", PADDINGS)
def test_finite_differences(dims, mode, padding_mode):
    rng = np.random.default_rng(4)
    x_shape = (1, 1, 2, 2, 3) if dims == 5 else (1, 1, 3, 4)   # small: one evaluation per element and direction
    grid_shape = (1, 1, 2, 2, 3) if dims == 5 else (1, 2, 2, 2)
    x = tapegrad.tensor(rng.normal(size=x_shape), requires_grad=True)
    grid = tapegrad.tensor(rng.uniform(-1.3, 1.3, size=grid_shape), requires_grad=True)
    align_corners = padding_mode != "border"
    assert tapegrad.autograd.gradcheck(
        lambda a, g: tapegrad.nn.functional.grid_sample(a, g, mode=mode, padding_mode=padding_mode,
                                                        align_corners=align_corners), (x, grid))


@pytest.mark.parametrize("dims,mode", [(5, "bilinear"), (4, "bicubic")])
def test_second_derivatives(torch, dims, mode):
    """Gradients of a loss of the gradients (create_graph), as a gradient penalty takes them."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=SHAPES[dims][0])
    grid = rng.uniform(-1.3, 1.3, size=SHAPES[dims][1])
    results = []
    for lib in (tapegrad, torch):
        xt, gt = lib.tensor(x, requires_grad=True), lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(xt, gt, mode=mode, padding_mode="reflection", align_corners=False)
        gx, gg = lib.autograd.grad(out.pow(2).sum(), (xt, gt), create_graph=True)
        (gx.pow(2).sum() + gg.sum()).backward()
        results.append((xt.grad, gt.grad))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


@pytest.mark.parametrize("align_corners", [False, True])
def test_volume_spatial_transformer(torch, align_corners):
    """affine_grid for a 5-D size, then trilinear sampling: the 3-D spatial transformer and its theta gradient."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 2, 3, 4, 5))
    theta = np.tile(np.eye(3, 4), (2, 1, 1)) + 0.2 * rng.normal(size=(2, 3, 4))
    results = []
    for lib in (tapegrad, torch):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, (2, 2, 4, 3, 5), align_corners=align_corners)
        out = lib.nn.functional.grid_sample(lib.tensor(x), grid, padding_mode="border", align_corners=align_corners)
        out.pow(2).mean().backward()
        results.append((grid, out, t.grad))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


@pytest.mark.parametrize("x_shape,grid_shape,mode", [
    ((0, 2, 3, 4), (0, 2, 2, 2), "bicubic"), ((0, 1, 2, 3, 4), (0, 2, 2, 2, 3), "bilinear"),
    ((1, 0, 2, 3, 4), (1, 1, 2, 2, 3), "bilinear"), ((1, 2, 3, 4), (1, 0, 2, 2), "bicubic"),
    ((1, 1, 2, 3, 4), (1, 0, 2, 2, 3), "nearest")])
def test_empty_batch_channels_and_grids(torch, x_shape, grid_shape, mode):
    results = []
    for lib in (tapegrad, torch):
        x, grid = lib.zeros(*x_shape, requires_grad=True), lib.zeros(*grid_shape, requires_grad=True)
        out = lib.nn.functional.grid_sample(x, grid, mode=mode, align_corners=False)
        out.sum().backward()
        results.append((out, x.grad, grid.grad))
    for ours, theirs in zip(*results):
        assert_close(ours, theirs)


def test_errors_match_torch(torch):
    def cases(lib):
        F, z = lib.nn.functional, lib.zeros
        return [
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(1, 2, 2, 2, 3), mode="bicubic", align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(1, 2, 2, 2, 3), mode="trilinear", align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3, dtype=lib.int64), z(1, 2, 2, 2, 3, dtype=lib.int64),
                                  align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(1, 2, 2, 2, 2), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(1, 2, 2, 3), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(2, 2, 2, 2, 3), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 0, 3), z(1, 2, 2, 2, 3), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 2, 3, 3), z(1, 2, 2, 2, 3, dtype=lib.float64), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 1, 2, 3, 3), z(1, 2, 2, 2, 2, 4), align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3), z(1, 2, 2, 2), mode="bicubic", padding_mode="wrap",
                                  align_corners=False),
            lambda: F.grid_sample(z(1, 1, 3, 3, dtype=lib.int64), z(1, 2, 2, 2, dtype=lib.int64), mode="bicubic",
                                  align_corners=False),
        ]
    for ours, theirs in zip(cases(tapegrad), cases(torch)):
        expected = raised(theirs, fold=True)
        assert expected is not None and raised(ours, fold=True) == expected


