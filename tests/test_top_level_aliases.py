"""nn.functional's and linalg's functions PyTorch also has at the top level (torch.conv2d, torch.max_pool1d,
torch.pinverse, ...): ATen's signatures (max_pool's empty stride, no return_indices), PyTorch's values."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, require

torch = require("torch")

_X = np.random.default_rng(0).standard_normal((2, 4, 6, 6, 6))
CALLS = {
    "max_pool1d": lambda lib, x: lib.max_pool1d(x[:, :, 0, 0], 2),
    "max_pool1d keywords": lambda lib, x: lib.max_pool1d(input=x[:, :, 0, 0], kernel_size=3, stride=2, padding=1,
                                                         dilation=1, ceil_mode=True),
    "max_pool2d": lambda lib, x: lib.max_pool2d(x[:, :, 0], (2, 3), (1, 2), 1),
    "max_pool2d empty stride": lambda lib, x: lib.max_pool2d(x[:, :, 0], 2, []),
    "max_pool3d": lambda lib, x: lib.max_pool3d(x, 2, dilation=2),
    "avg_pool1d": lambda lib, x: lib.avg_pool1d(x[:, :, 0, 0], 3, 2, 1, count_include_pad=False),
    "adaptive_avg_pool1d": lambda lib, x: lib.adaptive_avg_pool1d(x[:, :, 0, 0], 4),
    "conv1d": lambda lib, x: lib.conv1d(x[:, :, 0, 0], x[:3, :, 0, 0, :3], padding=1),
    "conv2d": lambda lib, x: lib.conv2d(x[:, :, 0], x[0, :, :3, :3].transpose(0, 1), x[0, 0, 0, 0, :3], stride=2),
    "conv3d": lambda lib, x: lib.conv3d(x, x[:3, :, :2, :2, :2], groups=1),
    "conv_transpose1d": lambda lib, x: lib.conv_transpose1d(x[:, :, 0, 0], x[0, :, :3, 0, :3], stride=2),
    "conv_transpose2d": lambda lib, x: lib.conv_transpose2d(x[:, :, 0], x[0, :, :3, :3, :3]),
    "conv_transpose3d": lambda lib, x: lib.conv_transpose3d(x, x[0, :, :2, :2, :2].unsqueeze(1)),
    "cosine_similarity": lambda lib, x: lib.cosine_similarity(x[0], x[1]),
    "pairwise_distance": lambda lib, x: lib.pairwise_distance(x[0, 0], x[1, 0], 3.0, keepdim=True),
    "pixel_shuffle": lambda lib, x: lib.pixel_shuffle(x[:, :, 0], 2),
    "pixel_unshuffle": lambda lib, x: lib.pixel_unshuffle(x[:, :, 0], 3),
    "pinverse": lambda lib, x: lib.pinverse(x[0, 0, 0, :4]),
    "pinverse rcond": lambda lib, x: lib.pinverse(x[0, 0, 0], 0.5),
    "Tensor.pinverse": lambda lib, x: x[0, 0].pinverse(rcond=0.1),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_top_level_alias_is_pytorchs(case):
    ours_x, theirs_x = tapegrad.tensor(_X).requires_grad_(), torch.tensor(_X).requires_grad_()
    ours, theirs = CALLS[case](tapegrad, ours_x), CALLS[case](torch, theirs_x)
    assert_close(ours, theirs.detach())
    ours.sum().backward()
    theirs.sum().backward()
    assert_close(ours_x.grad, theirs_x.grad)


def test_max_pool_takes_atens_arguments_only():
    for lib in (tapegrad, torch):
        with pytest.raises(TypeError):
            lib.max_pool1d(lib.ones(1, 1, 4), 2, return_indices=True)
