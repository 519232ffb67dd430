"""F.interpolate of uint8 images against PyTorch, bit for bit: bilinear, bicubic and lanczos (antialiased or
not, align_corners both ways) through PyTorch's int16 fixed-point separable kernel, nearest in 1-d/2-d/3-d,
contiguous and channels_last inputs, sizes and scale factors; the modes PyTorch refuses for uint8 raise
its errors."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _run(x, channels_last=False, **kw):
    """(PyTorch's result, tapegrad's) for a uint8 array."""
    t = torch.from_numpy(x)
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last if x.ndim == 4 else torch.channels_last_3d)
    theirs = torch.nn.functional.interpolate(t, **kw)
    ours = tg.nn.functional.interpolate(tg.tensor(x), **kw)
    assert ours.dtype == tg.uint8 and theirs.dtype == torch.uint8
    assert not ours.requires_grad and ours.grad_fn is None
    return theirs.numpy(), ours.numpy()


def _assert_same(x, channels_last=False, **kw):
    theirs, ours = _run(x, channels_last, **kw)
    assert ours.shape == theirs.shape, kw
    np.testing.assert_array_equal(ours, theirs, err_msg=str(kw))


def _pytorch_copies_first_row(x, channels_last, out_shape):
    """PyTorch's generic separable kernel (taken for more than 4 channels) reads one row's taps for a whole
    column when the output is one pixel wide and channels-first: every output row is then row 0's. tapegrad
    computes each row (its channels_last path does too; see test_one_pixel_wide_output)."""
    return not channels_last and x.shape[1] > 4 and out_shape[-1] == 1 and out_shape[-2] != x.shape[-2]


def _draw(rng):
    mode = str(rng.choice(["bilinear", "bicubic", "lanczos"]))
    kw = dict(mode=mode, antialias=mode == "lanczos" or bool(rng.integers(2)))
    if mode != "lanczos":
        kw["align_corners"] = bool(rng.integers(2))
    shape = (int(rng.integers(1, 3)), int(rng.choice([1, 3, 4, 5])), *(int(v) for v in rng.integers(1, 40, 2)))
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    if rng.integers(4) == 0:   # black and white: bicubic and lanczos overshoot and clamp
        x = x // 128 * 255
    how = rng.integers(3)
    if how == 0:
        kw["size"] = [int(v) for v in rng.integers(1, 50, 2)]
    elif how == 1:   # odd ratios, PyTorch's kernel gets the scale
        kw["scale_factor"] = tuple(float(v) for v in rng.uniform(0.1, 4.0, 2).round(int(rng.integers(1, 4))))
        kw["recompute_scale_factor"] = bool(rng.integers(2))
        if min(int(n * f) for n, f in zip(shape[2:], kw["scale_factor"])) < 1:
            return _draw(rng)   # an empty output: PyTorch's error, tested elsewhere
    else:            # one axis keeps its size (PyTorch skips it)
        keep = int(rng.integers(2))
        kw["size"] = [shape[2] if keep == 0 else int(rng.integers(1, 50)),
                      shape[3] if keep == 1 else int(rng.integers(1, 50))]
    return x, bool(rng.integers(2)), kw


@pytest.mark.parametrize("seed", range(3))
def test_random_resizes_match_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    checked = 0
    while checked < 35:
        x, channels_last, kw = _draw(rng)
        theirs, ours = _run(x, channels_last, **kw)
        if _pytorch_copies_first_row(x, channels_last, theirs.shape):
            continue
        np.testing.assert_array_equal(ours, theirs, err_msg=f"{x.shape} channels_last={channels_last} {kw}")
        checked += 1


EDGES = [
    ((1, 3, 1, 9), dict(size=(5, 4))),                        # one row in
    ((1, 3, 7, 1), dict(size=(3, 6))),                        # one column in
    ((2, 4, 8, 9), dict(size=(1, 1))),                        # one pixel out (3 channels: PyTorch asserts)
    ((1, 3, 8, 9), dict(size=(8, 9))),                        # same size: a copy
    ((1, 2, 300, 7), dict(size=(3, 5))),                      # strong downscale: many taps when antialiased
    ((1, 3, 3, 2), dict(size=(200, 61))),                     # strong upscale
    ((1, 4, 11, 13), dict(scale_factor=(0.37, 2.71))),
    ((1, 3, 10, 10), dict(scale_factor=0.5, recompute_scale_factor=True)),
    ((1, 1, 6, 6), dict(scale_factor=1.0)),
]


@pytest.mark.parametrize("shape,kw", EDGES)
@pytest.mark.parametrize("mode,antialias,align_corners", [
    ("bilinear", False, False), ("bilinear", False, True), ("bilinear", True, False), ("bilinear", True, True),
    ("bicubic", False, False), ("bicubic", False, True), ("bicubic", True, False), ("bicubic", True, True),
    ("lanczos", True, None)])
def test_edges(shape, kw, mode, antialias, align_corners):
    rng = np.random.default_rng(len(shape) + sum(shape))
    x = (rng.integers(0, 2, shape) * 255).astype(np.uint8) if shape[1] != 4 else rng.integers(0, 256, shape, np.uint8)
    for channels_last in (False, True):
        _assert_same(x, channels_last, mode=mode, antialias=antialias, align_corners=align_corners, **kw)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_one_pixel_wide_output(mode):
    # With more than 4 channels and a channels-first input, PyTorch's CPU kernel gives every row of a
    # one-pixel-wide output row 0's value; its channels_last kernel computes each row, and tapegrad does
    # the same whatever the layout.
    x = np.random.default_rng(7).integers(0, 256, (2, 6, 15, 12), dtype=np.uint8)
    for antialias in (False, True):
        kw = dict(size=(9, 1), mode=mode, antialias=antialias)
        theirs, _ = _run(x, channels_last=True, **kw)
        _, ours = _run(x, channels_last=False, **kw)
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 5, 6), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest(shape, mode):
    x = np.random.default_rng(3).integers(0, 256, shape, dtype=np.uint8)
    for kw in (dict(scale_factor=1.7), dict(scale_factor=0.6), dict(size=tuple(2 * n + 1 for n in shape[2:])),
               dict(scale_factor=2.0)):
        for channels_last in (False, True) if len(shape) > 3 else (False,):
            _assert_same(x, channels_last, mode=mode, **kw)


@pytest.mark.parametrize("shape,kw", [
    ((1, 2, 5), dict(mode="linear", scale_factor=2)),
    ((1, 2, 3, 3, 3), dict(mode="trilinear", scale_factor=2)),
    ((1, 2, 5), dict(mode="area", size=3)),
    ((1, 2, 5, 5), dict(mode="area", size=3)),
    ((1, 2, 3, 3, 3), dict(mode="area", size=2)),
])
def test_modes_pytorch_refuses(shape, kw):
    x = np.zeros(shape, np.uint8)
    with pytest.raises(NotImplementedError) as theirs:
        torch.nn.functional.interpolate(torch.from_numpy(x), **kw)
    with pytest.raises(NotImplementedError) as ours:
        tg.nn.functional.interpolate(tg.tensor(x), **kw)
    assert str(theirs.value) in str(ours.value)


def test_repeated_calls_stay_exact():
    # the first call of a new plan runs on the NumPy tier, repeats on a compiled program: both exact
    x = np.random.default_rng(5).integers(0, 256, (2, 3, 37, 23), dtype=np.uint8)
    for mode, antialias in (("bicubic", False), ("lanczos", True)):
        expected = torch.nn.functional.interpolate(torch.from_numpy(x), size=(19, 41), mode=mode,
                                                   antialias=antialias).numpy()
        for _ in range(5):
            ours = tg.nn.functional.interpolate(tg.tensor(x), size=(19, 41), mode=mode, antialias=antialias)
            np.testing.assert_array_equal(ours.numpy(), expected)
