"""tapegrad.compile's first calls: a step whose optimizer has no state yet runs eagerly at once (its
trace would fail after running the whole step, since the first step creates the state) and is traced
on the state it made; everything else is traced on its first call. Values match PyTorch throughout."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import to_torch
from tapegrad._compile import Unsupported, _function, _trace

_RNG = np.random.default_rng(1)
_X = _RNG.standard_normal((6, 4)).astype(np.float32)
_Y = _RNG.standard_normal((6, 2)).astype(np.float32)


@pytest.fixture
def traces(monkeypatch):
    """Every trace tapegrad.compile starts: 'ok' or the name of the exception it ended with."""
    seen = []
    real = _trace.trace

    def counting(*args, **kwargs):
        try:
            out = real(*args, **kwargs)
        except BaseException as e:
            seen.append(type(e).__name__)
            raise
        seen.append("ok")
        return out
    monkeypatch.setattr(_trace, "trace", counting)
    return seen


@pytest.fixture
def programs_run(monkeypatch):
    """How many calls ran a compiled program (rather than the function eagerly)."""
    count = [0]
    real = _function._Program.run

    def counting(self, *args, **kwargs):
        count[0] += 1
        return real(self, *args, **kwargs)
    monkeypatch.setattr(_function._Program, "run", counting)
    return count


def _world(lib, opt_name, **kwargs):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    return model, getattr(lib.optim, opt_name)(model.parameters(), **kwargs)


def _step(lib, model, opt, read=False):
    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        if read:
            loss.item()
        loss.backward()
        opt.step()
        return loss
    return step


def _torch_losses(torch, model, opt_name, steps, **kwargs):
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    theirs.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    opt = getattr(torch.optim, opt_name)(theirs.parameters(), **kwargs)
    step = _step(torch, theirs, opt)
    return [float(step(torch.tensor(_X), torch.tensor(_Y))) for _ in range(steps)]


@pytest.mark.parametrize("opt_name,kwargs", [("Adam", dict(lr=0.01)), ("SGD", dict(lr=0.05, momentum=0.9)),
                                             ("AdamW", dict(lr=0.01, weight_decay=0.1))])
def test_first_step_creating_state_runs_eagerly_without_a_failed_trace(torch, traces, programs_run, opt_name,
                                                                      kwargs):
    model, opt = _world(tapegrad, opt_name, **kwargs)
    want = _torch_losses(torch, model, opt_name, 4, **kwargs)
    run = tapegrad.compile(_step(tapegrad, model, opt))
    x, y = tapegrad.tensor(_X), tapegrad.tensor(_Y)
    got = [float(run(x, y))]
    assert traces == ["ok"] and programs_run == [0]   # eager; one trace, on the state the first step made
    assert len(opt.state) == 4
    got += [float(run(x, y)) for _ in range(3)]
    assert traces == ["ok"] and programs_run == [3]   # the later calls run its program
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_step_without_optimizer_state_is_compiled_on_its_first_call(torch, traces, programs_run):
    model, opt = _world(tapegrad, "SGD", lr=0.05)   # plain SGD keeps no state
    want = _torch_losses(torch, model, "SGD", 3, lr=0.05)
    run = tapegrad.compile(_step(tapegrad, model, opt))
    x, y = tapegrad.tensor(_X), tapegrad.tensor(_Y)
    got = [float(run(x, y))]
    assert traces == ["ok"] and programs_run == [1]   # the first call ran the program
    got += [float(run(x, y)) for _ in range(2)]
    assert len(opt.state) == 0 and programs_run == [3]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_an_optimizer_the_step_does_not_use_costs_one_eager_call(traces, programs_run):
    model, opt = _world(tapegrad, "Adam", lr=0.01)

    def evaluate(x):
        opt.param_groups   # reaches the optimizer (state still empty) without stepping it
        with tapegrad.no_grad():
            return model(x).sum()
    run = tapegrad.compile(evaluate)
    x = tapegrad.tensor(_X)
    want = float(evaluate(x))
    assert [float(run(x)) for _ in range(3)] == pytest.approx([want] * 3, rel=1e-6)
    assert traces == ["ok"] and programs_run == [2] and len(opt.state) == 0


def test_graph_break_in_a_first_step_is_still_found(traces):
    model, opt = _world(tapegrad, "Adam", lr=0.01)
    run = tapegrad.compile(_step(tapegrad, model, opt, read=True), fullgraph=True)
    with pytest.raises(Unsupported, match=r"loss\.item\(\)"):
        run(tapegrad.tensor(_X), tapegrad.tensor(_Y))
    assert traces == ["GraphBreak"]

    model, opt = _world(tapegrad, "Adam", lr=0.01)
    eager = _step(tapegrad, *_world(tapegrad, "Adam", lr=0.01))
    run = tapegrad.compile(_step(tapegrad, model, opt, read=True))
    x, y = tapegrad.tensor(_X), tapegrad.tensor(_Y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = [float(run(x, y)) for _ in range(3)]
    assert sum("graph break" in str(w.message) for w in caught) == 1
    assert got == pytest.approx([float(eager(x, y)) for _ in range(3)], rel=1e-6)


@pytest.mark.parametrize("fail_at", ["forward", "after step"])
def test_a_failing_eager_first_step_leaves_the_state_as_it_was(fail_at):
    model, opt = _world(tapegrad, "Adam", lr=0.01)
    x, y = tapegrad.tensor(_X), tapegrad.tensor(_Y)
    tapegrad.nn.functional.mse_loss(model(x), y).backward()   # grads present before the call
    before = [(p.detach().clone(), p.grad.clone()) for p in model.parameters()]
    counter = tapegrad.random.default_generator._counter

    def step(x, y, fail=True):
        opt.zero_grad()
        out = tapegrad.nn.functional.dropout(model(x), 0.5)
        if fail and fail_at == "forward":
            out = out @ tapegrad.ones(3, 3)   # a shape error
        loss = tapegrad.nn.functional.mse_loss(out, y)
        loss.backward()
        opt.step()
        if fail and fail_at == "after step":
            raise ValueError("the step failed")
        return loss
    run = tapegrad.compile(step)
    with pytest.raises(RuntimeError if fail_at == "forward" else ValueError):
        run(x, y)
    assert len(opt.state) == 0 and tapegrad.random.default_generator._counter == counter
    for p, (value, grad) in zip(model.parameters(), before):
        assert p.grad is not None and tapegrad.equal(p, value) and tapegrad.equal(p.grad, grad)
    assert float(run(x, y, fail=False)) > 0 and len(opt.state) == 4   # the call after runs as a first step
