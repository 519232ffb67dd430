"""A program that fails as it runs: a PyTorch-typed error naming the user's line, and no state changed.

The failure is real: an intermediate of 512 GiB, whose allocation XLA refuses at once.
"""
import jax
import numpy as np
import pytest

import tapegrad
from tapegrad import nn, optim

HUGE = 2 ** 37   # float32 elements: 512 GiB


def _huge_intermediate(x):
    return (x.reshape(-1)[:1].expand(HUGE) * 2).exp()


def _model_and_data():
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    return model, tapegrad.randn(16, 4), tapegrad.randn(16, 1)


def test_failed_step_raises_out_of_memory_naming_the_line_and_keeps_state():
    model, x, y = _model_and_data()
    opt = optim.Adam(model.parameters(), lr=0.01)

    def step(fail=False):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        if fail:
            big = _huge_intermediate(loss)
            loss = loss + big.sum() * 0
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):
        step()          # the third update stays pending: it runs in the next step's program
    with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory") as info:
        step(fail=True)
    assert isinstance(info.value, RuntimeError)
    assert "test_faults.py" in str(info.value)

    # The third update, pending in the failed program, is computed and kept; the failed step changed nothing.
    _assert_same(model, opt, *_reference(3))
    # Training goes on as if the failed step had not been tried.
    step()
    _assert_same(model, opt, *_reference(4))


def test_failed_pending_write_is_rolled_back():
    w = tapegrad.ones(3)
    w.add_(1.0)
    w.sum().item()                                    # committed: [2, 2, 2]
    with pytest.raises(tapegrad.OutOfMemoryError) as info:
        w.add_(_huge_intermediate(w).sum() * 0)       # a pending write whose program fails
        w.sum().item()
    assert "test_faults.py" in str(info.value)
    assert w.tolist() == [2.0, 2.0, 2.0]
    w.add_(1.0)
    assert w.tolist() == [3.0, 3.0, 3.0]


def test_error_names_the_line_that_recorded_the_failing_op():
    x = tapegrad.ones(3)
    y = x * 2
    z = _huge_intermediate(y)        # the failing op is recorded inside _huge_intermediate
    with pytest.raises(RuntimeError, match="out of memory") as info:
        z.sum().item()
    line = _huge_intermediate.__code__.co_firstlineno + 1
    assert f"test_faults.py:{line}" in str(info.value)


def test_independent_values_survive_a_failure():
    a = tapegrad.ones(2) * 3
    with pytest.raises(tapegrad.OutOfMemoryError):
        _huge_intermediate(a).sum().item()
    assert a.tolist() == [3.0, 3.0]


def test_a_failed_op_still_referenced_does_not_fail_later_steps():
    # z keeps the failed op alive; a later backward compiles the ops recorded since the last one, and
    # must not take z's along
    y = tapegrad.ones(3) * 2
    z = _huge_intermediate(y)
    with pytest.raises(tapegrad.OutOfMemoryError):
        z.sum().item()
    t = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    (t * 3).sum().backward()
    assert t.grad.tolist() == [3.0, 3.0]
    assert y.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(tapegrad.OutOfMemoryError):   # z itself still cannot be computed
        z.sum().item()


class _FailsWhenAwaited:
    """An output of a program that failed while it ran: XLA reports it when the result is awaited."""

    def block_until_ready(self):
        raise jax.errors.JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 68719476736 bytes.")


@pytest.mark.parametrize("deferred", [True, False], ids=["launched", "awaited"])
def test_a_step_program_failing_after_its_launch_changes_nothing(monkeypatch, deferred):
    """A steady step's program is launched without waiting: the next step is recorded while it runs. When
    it fails, the error comes no later than the first read, and parameters, grads and optimizer state are
    those from before the failed step: the previous step's update (computed in the failed program) kept,
    the failed step's own update (recorded on its gradients) rolled back."""
    from tapegrad import _faults
    monkeypatch.setattr(_faults, "DEFER_STEPS", [deferred])
    model, x, y = _model_and_data()
    opt = optim.Adam(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(5):
        step()   # from the third on, one compiled program a step
    assert _faults._in_flight[0] is not None or not deferred

    launch = _faults.Flight.__init__
    results = []   # what the failed program handed out: no tensor may hold any of it afterwards

    def failing(flight, outputs, nodes):
        results.extend(jax.tree_util.tree_leaves(outputs))
        launch(flight, (outputs, _FailsWhenAwaited()), nodes)

    monkeypatch.setattr(_faults.Flight, "__init__", failing)
    kept = []
    with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory") as info:
        kept.append(step())
        monkeypatch.undo()
        model[0].weight.sum().item()   # the first read
    monkeypatch.undo()
    assert len(kept) == deferred   # launched: the failure showed at the read; awaited: in backward()
    if kept:   # the failed step's loss has no value: reading it raises the same error
        with pytest.raises(tapegrad.OutOfMemoryError, match="out of memory"):
            kept[0].item()
    assert "test_faults.py" in str(info.value)
    assert "keep their values from before this step" in str(info.value)
    assert all(p.grad is None for p in model.parameters())   # as zero_grad() left them
    state = list(model.parameters()) + [v for s in opt.state.values() for v in s.values()]
    assert results and not any(t._value is r for t in state for r in results)
    _assert_same(model, opt, *_reference(5))
    step()
    _assert_same(model, opt, *_reference(6))


def _reference(steps):
    model, x, y = _model_and_data()
    opt = optim.Adam(model.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return model, opt


def _assert_same(model, opt, ref_model, ref_opt):
    for p, q in zip(model.parameters(), ref_model.parameters()):
        assert np.allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6, atol=1e-7)
    for s, r in zip(opt.state.values(), ref_opt.state.values()):
        for k in s:
            assert np.allclose(np.asarray(s[k].tolist()), np.asarray(r[k].tolist()), rtol=1e-6, atol=1e-7), k


def test_synchronize_waits_for_the_step_in_flight():
    from tapegrad import _faults
    model, x, y = _model_and_data()
    opt = optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    assert _faults._in_flight[0] is not None or not _faults.DEFER_STEPS[0]
    tapegrad.cpu.synchronize()
    assert _faults._in_flight[0] is None
