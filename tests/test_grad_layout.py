"""A leaf's .grad has the leaf's strides where the leaf is non-overlapping and dense (channels_last, a transposed
or permuted leaf), else contiguous: PyTorch's AccumulateGrad "gradient layout contract", against PyTorch."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close


def _leaf(lib, layout):
    def r(*s):
        return lib.tensor(np.random.default_rng(0).normal(size=s), dtype=lib.float32)
    x = {"contiguous": lambda: r(2, 3, 4, 5),
         "channels_last": lambda: r(2, 3, 4, 5).to(memory_format=lib.channels_last),
         "channels_last_3d": lambda: r(2, 3, 2, 4, 5).to(memory_format=lib.channels_last_3d),
         "transposed_2d": lambda: r(3, 4).t(),
         "permuted_3d": lambda: r(2, 3, 4).permute(2, 0, 1),
         "strided_slice": lambda: r(4, 6)[:, ::2],      # not dense: a contiguous grad
         "expanded": lambda: r(3, 1).expand(3, 4)}[layout]()   # overlapping: a contiguous grad
    return x.detach().requires_grad_()


def _run(lib, layout, mode):
    x = _leaf(lib, layout)
    for _ in range(2 if mode == "accumulated" else 1):
        y = (x.transpose(0, 1).contiguous() * x.transpose(0, 1)).sum()   # a grad arriving in another layout
        if mode == "create_graph":
            y.backward(create_graph=True)
        elif mode == "inputs":
            y.backward(inputs=[x])
        else:
            y.backward()
    return x.grad


@pytest.mark.parametrize("mode", ["first", "accumulated", "create_graph", "inputs"])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "channels_last_3d", "transposed_2d", "permuted_3d",
                                    "strided_slice", "expanded"])
def test_grad_strides_follow_the_leaf(torch, layout, mode):
    ours, theirs = _run(tapegrad, layout, mode), _run(torch, layout, mode)
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous() == theirs.is_contiguous()
    for fmt in ("channels_last", "channels_last_3d"):
        if ours.dim() == {"channels_last": 4, "channels_last_3d": 5}[fmt]:
            assert ours.is_contiguous(memory_format=getattr(tapegrad, fmt)) == \
                theirs.is_contiguous(memory_format=getattr(torch, fmt))
    assert ours._base is None and theirs._base is None
    assert ours.is_leaf == theirs.is_leaf
    assert_close(ours, theirs)


def test_size_one_dims_follow_the_leaf():
    """Where a size-1 dim makes the layout ambiguous tapegrad's leaf has its own strides (see _memory_format);
    its grad then has those."""
    x = tapegrad.randn(1, 3, 4, 5).to(memory_format=tapegrad.channels_last).requires_grad_()
    (x * 2).sum().backward()
    assert x.grad.stride() == x.stride()


def test_optimizer_step_on_a_channels_last_parameter(torch):
    def step(lib):
        w = lib.nn.Parameter(_leaf(lib, "channels_last").detach())
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        return w.detach(), w.grad
    (w, g), (tw, tg) = step(tapegrad), step(torch)
    assert_close(w, tw)
    assert g.stride() == tg.stride() and w.stride() == tw.stride()
