"""A compiled call returns while its program runs: the caller's next lines overlap XLA's work.

Its commit stands once the program has succeeded; the first read, the next program or the next compiled
call waits for it. A program that fails after its launch raises a PyTorch-typed error naming the line
that called the function, and its commit is taken back.
"""
import sys

import jax
import numpy as np
import pytest

import tapegrad
from tapegrad import _faults, nn
from test_compile import compiled_mse_step
from test_faults import _FailsWhenAwaited


def _fail_next_launch(monkeypatch):
    launch = _faults.Flight.__init__

    def failing(flight, outputs, nodes):
        monkeypatch.undo()   # only this launch
        launch(flight, (outputs, _FailsWhenAwaited()), nodes)
    monkeypatch.setattr(_faults.Flight, "__init__", failing)


def _grad_of_sin(x):
    x.grad = None
    (x.sin() * 2).sum().backward()
    g = x.grad
    x.grad = None
    return g


def test_a_compiled_call_returns_before_its_program_is_awaited():
    x = tapegrad.randn(64, requires_grad=True)
    f = tapegrad.compile(_grad_of_sin)
    for _ in range(3):
        f(x)
    results = [f(x) for _ in range(5)]
    assert _faults._in_flight[0] is not None   # the last call's program: awaited by the first read
    expected = 2 * np.cos(x.detach().numpy())
    for g in results:
        np.testing.assert_allclose(g.numpy(), expected, rtol=1e-6)
    assert _faults._in_flight[0] is None and x.grad is None


def test_a_compiled_call_waits_when_steps_are_synchronous(monkeypatch):
    monkeypatch.setattr(_faults, "DEFER_STEPS", [False])
    x = tapegrad.randn(8, requires_grad=True)
    f = tapegrad.compile(_grad_of_sin)
    for _ in range(4):
        f(x)
        assert _faults._in_flight[0] is None


def test_a_failed_call_names_its_line_and_takes_its_commit_back(monkeypatch):
    x = tapegrad.randn(16, requires_grad=True)
    before = tapegrad.full((16,), 7.0)
    f = tapegrad.compile(_grad_of_sin)
    for _ in range(3):
        x.grad = before
        f(x)
    x.grad = before
    _fail_next_launch(monkeypatch)
    g = f(x)   # the line the error names
    line = sys._getframe().f_lineno - 1
    assert x.grad is None   # committed for now
    with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory") as info:
        g.sum().item()
    assert isinstance(info.value, RuntimeError)
    assert f"the compiled function called at {__file__}:{line}" in str(info.value)
    assert "keep their values from before this step" in str(info.value)
    assert x.grad is before   # the Python change the call made is taken back
    assert (before == 7).all()
    with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory"):
        g.numpy()   # the failed call's result has no value
    g = f(x)   # and the function goes on
    np.testing.assert_allclose(g.numpy(), 2 * np.cos(x.detach().numpy()), rtol=1e-6)
    assert x.grad is None


def test_a_failed_training_step_takes_back_what_it_can_and_never_shows_jax(monkeypatch):
    """Grads and the generator's counter are put back. A parameter whose buffer the failed program was handed (XLA
    updates state in place) has no value left: reading it raises the program's error, not JAX's."""
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    x, y = tapegrad.randn(16, 4), tapegrad.randn(16, 1)
    step = compiled_mse_step(model, opt)
    for _ in range(6):
        step(x, y).item()
    grads = [p.grad for p in model.parameters()]
    bias = model[2].bias
    generator = tapegrad.default_generator._counter
    _fail_next_launch(monkeypatch)
    loss = step(x, y)
    with pytest.raises(tapegrad.OutOfMemoryError, match="compiled function called at"):
        loss.item()
    assert [p.grad for p in model.parameters()] == grads
    assert tapegrad.default_generator._counter == generator
    lost = 0
    for p in model.parameters():
        raw = p._storage._raw
        if isinstance(raw, jax.Array) and not raw.is_deleted():
            continue   # (not handed to the program: kept)
        with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory"):
            p.sum().item()
        lost += 1
    assert lost and bias.shape == (1,)


def test_a_step_whose_launch_runs_out_of_memory_keeps_the_state():
    """A real failure: a new size whose program needs 512 GiB. XLA frees the buffers a program is handed even
    when its launch fails, so a program's first run is handed copies."""
    tapegrad.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = tapegrad.optim.Adam(model.parameters(), lr=0.1)
    x, y = tapegrad.randn(16, 4), tapegrad.randn(16, 1)

    @tapegrad.compile
    def step(x, y, n):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss, loss.reshape(1).expand(n) * 2   # (n = 2**37: an output of 512 GiB)
    for _ in range(4):
        step(x, y, 2)[0].item()
    params = [p.detach().clone() for p in model.parameters()]
    grads = [p.grad for p in model.parameters()]
    state = {k: v.clone() for k, v in opt.state[model.weight].items()}
    with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory while running the compiled function") \
            as info:
        step(x, y, 2 ** 37)[0].item()
    assert "keep their values from before this step" in str(info.value)
    for p, before, g in zip(model.parameters(), params, grads):
        assert tapegrad.equal(p.detach(), before) and p.grad is g
    for k, v in opt.state[model.weight].items():
        assert tapegrad.equal(v, state[k])
    step(x, y, 2)[0].item()   # and training goes on
    assert not tapegrad.equal(model.weight.detach(), params[0])


def test_an_in_place_write_after_a_failed_call_is_rolled_back_to_the_state_before_it(monkeypatch):
    """The failing call is its program's first run (a new batch size), so the state it was handed is a copy:
    an in-place op recorded on a parameter after the call is rolled back to the value before the call."""
    tapegrad.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    step = compiled_mse_step(model, opt)
    for _ in range(4):
        step(tapegrad.randn(8, 4), tapegrad.randn(8, 1)).item()
    before = model.weight.detach().clone()
    _fail_next_launch(monkeypatch)
    loss = step(tapegrad.randn(5, 4), tapegrad.randn(5, 1))   # a new size: a new program's first run
    with tapegrad.no_grad():
        model.weight.mul_(2)   # recorded on the failed step's value
    with pytest.raises(tapegrad.OutOfMemoryError):
        loss.item()
    assert tapegrad.equal(model.weight.detach(), before)
