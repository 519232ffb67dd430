"""Positions and Python scalars are program inputs, not structure: a new offset compiles nothing.

Counted with XLA's own compile events (tests/xla_events.py); values checked against PyTorch.
"""
import numpy as np
import pytest
import torch

import tapegrad
from conftest import assert_close
from xla_events import counting


@pytest.fixture(autouse=True)
def _fresh_cache():
    tapegrad.autograd.clear_backward_cache()
    yield
    tapegrad.autograd.clear_backward_cache()


def _batches(lib, X, w, offsets, bs=8):
    losses = []
    for i in offsets:
        loss = ((X[i:i + bs] @ w) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            w -= 0.01 * w.grad
            w.grad.zero_()
        losses.append(loss.item())
    return losses


def test_hundred_slice_offsets_compile_nothing_new():
    rng = np.random.default_rng(0)
    X_np, w_np = rng.standard_normal((200, 4)), rng.standard_normal((4, 1))
    X, w = tapegrad.tensor(X_np), tapegrad.tensor(w_np, requires_grad=True)
    offsets = [int(i) for i in rng.integers(0, 192, size=108)]
    with counting() as xla:
        # warm: the first step (no .grad yet), then the regular step until it compiles (STEADY_STREAK in a row)
        losses = _batches(tapegrad, X, w, offsets[:8])
        warm = xla.compiles
        losses += _batches(tapegrad, X, w, offsets[8:])
        assert xla.compiles == warm, f"{xla.compiles - warm} compiles for 100 new offsets"
    tX, tw = torch.tensor(X_np), torch.tensor(w_np, requires_grad=True)
    assert losses == pytest.approx(_batches(torch, tX, tw, offsets), rel=1e-10)


def test_time_step_index_is_an_input():
    def run(lib, steps):
        g = torch.Generator().manual_seed(0)
        W = lib.tensor(torch.randn(6, 6, generator=g).double().numpy() * 0.3, requires_grad=True)
        x = lib.tensor(torch.randn(80, 2, 6, generator=g).double().numpy())
        h = lib.zeros(2, 6, dtype=lib.float64)
        for t in range(steps):
            h = lib.tanh(h @ W + x[t])
        h.pow(2).sum().backward()
        return h, W.grad

    with counting() as xla:
        run(tapegrad, 40)          # a long tape: op by op through shared kernels
        warm = xla.compiles
        h, g = run(tapegrad, 80)   # twice the time steps, the same kernels
    assert xla.compiles == warm, "x[t] must not compile per time step"
    th, tg_ = run(torch, 80)
    assert_close(h.detach(), th.detach())
    assert_close(g, tg_)


@pytest.mark.parametrize("index", [slice(95, 105), slice(-7, None), slice(3, 60, 7), slice(50, 10)])
def test_slices_keep_pytorchs_clamping(index):
    data = np.arange(100.0).reshape(100, 1)
    a, b = tapegrad.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    ya, yb = a[index], b[index]
    assert tuple(ya.shape) == tuple(yb.shape)
    (ya * 2).sum().backward()
    (yb * 2).sum().backward()
    assert_close(a.grad, b.grad)


def test_integer_index_out_of_range_is_an_index_error():
    for lib in (tapegrad, torch):
        with pytest.raises(IndexError, match="out of bounds"):
            lib.zeros(5, 2)[5]


def test_write_through_a_moving_view():
    for t in range(4):
        a, b = tapegrad.zeros(4, 3), torch.zeros(4, 3)
        a[t].add_(t + 1.0)
        b[t].add_(t + 1.0)
        a.narrow(1, t % 3, 1).mul_(2.0)
        b.narrow(1, t % 3, 1).mul_(2.0)
        assert_close(a, b)


def test_no_grad_loop_reuses_one_program_and_matches_torch():
    def run(lib, n):
        lib.manual_seed(0)
        w = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
        x = lib.tensor(np.linspace(0, 1, 8).reshape(2, 4))
        with lib.no_grad():
            total = lib.zeros((), dtype=lib.float64)
            for i in range(n):
                total = total + (x @ w).relu().pow(2).mean() * (i % 3)
        return total

    with counting() as xla:
        run(tapegrad, 200).item()
        warm = xla.compiles
        total = run(tapegrad, 600)
        total.item()
    # windows start where the loop's first op (from its line) comes back, so every full window is one
    # structure, even with the whole loop body on one line; the last, shorter window may be another
    assert xla.compiles - warm <= 1, f"{xla.compiles - warm} compiles: the flushed windows must repeat"
    info = tapegrad.autograd.backward_cache_info()
    assert info["entries"] <= 2, info   # one window structure, not one program per iteration or phase
    assert total.item() == pytest.approx(run(torch, 600).item(), rel=1e-12)
