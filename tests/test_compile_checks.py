"""Where a compiled step's value checks run (`tapegrad/_compile/_checks.py`): on the host before the program
when they read only inputs the step does not write, else inside the program. Either way a failing check
raises PyTorch's error and writes nothing back; the step is not retraced."""
import numpy as np
import pytest

import tapegrad
from tapegrad._numpy_eval import _Unsupported


def _pair(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 1)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.5, -0.25, 0.125]]))
        model.bias.fill_(0.1)
    return model, lib.optim.Adam(model.parameters(), lr=1e-2)


def _state(model, opt):
    out = []   # (numpy() copies)
    for p in model.parameters():
        out += [p.detach().numpy(), p.grad.numpy()]
        out += [v.numpy() for v in opt.state[p].values()]
    return out


def _bce_step(lib, model, opt):
    """Probabilities computed from the parameters the step updates: the check reads written state."""
    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.binary_cross_entropy(lib.sigmoid(model(x)).reshape(-1), y)
        loss.backward()
        opt.step()
        return loss
    return step


def test_a_check_on_written_state_stays_in_the_program_and_writes_nothing(torch):
    model, opt = _pair(tapegrad)
    step = tapegrad.compile(_bce_step(tapegrad, model, opt))
    tmodel, topt = _pair(torch)
    tstep = _bce_step(torch, tmodel, topt)
    x, y = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32), np.array([1.0, 0.0], np.float32)
    for _ in range(3):
        got = step(tapegrad.tensor(x), tapegrad.tensor(y))
        want = tstep(torch.tensor(x), torch.tensor(y))
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
    program = step._compiled.guard.program
    assert program.host_checks is None   # the check reads the updated weight: it is in the program
    programs, before = step._compiled.compiled, _state(model, opt)
    bad = x.copy()
    bad[1, 0] = np.nan
    with pytest.raises(RuntimeError) as theirs:
        tstep(torch.tensor(bad), torch.tensor(y))
    with pytest.raises(type(theirs.value), match="all elements of input should be between 0 and 1"):
        step(tapegrad.tensor(bad), tapegrad.tensor(y))
    assert step._compiled.compiled == programs
    for a, b in zip(before, _state(model, opt)):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(step(tapegrad.tensor(x), tapegrad.tensor(y)).item())


def _classifier_step(lib, model, opt):
    def step(x, targets):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), targets)
        loss.backward()
        opt.step()
        return loss
    return step


def _classifier(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 4)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10))
        model.bias.zero_()
    return model, lib.optim.Adam(model.parameters(), lr=1e-2)


def test_a_check_on_the_batch_runs_before_the_program_and_sees_in_place_changes(torch):
    model, opt = _classifier(tapegrad)
    step = tapegrad.compile(_classifier_step(tapegrad, model, opt))
    tmodel, topt = _classifier(torch)
    tstep = _classifier_step(torch, tmodel, topt)
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
    ours, theirs = tapegrad.tensor(x), torch.tensor(x)
    targets, ttargets = tapegrad.tensor([1, 3]), torch.tensor([1, 3])
    for _ in range(3):   # the same batch again: its check passes without evaluating anything
        np.testing.assert_allclose(step(ours, targets).item(), tstep(theirs, ttargets).item(), rtol=1e-5)
    assert step._compiled.guard.program.host_checks is not None
    programs, before = step._compiled.compiled, _state(model, opt)
    for lib_targets in (targets, ttargets):
        lib_targets[1] = 4   # the same tensor, changed in place: checked again
    with pytest.raises(IndexError) as want:
        tstep(theirs, ttargets)
    with pytest.raises(type(want.value), match="Target 4 is out of bounds"):
        step(ours, targets)
    assert step._compiled.compiled == programs
    for a, b in zip(before, _state(model, opt)):
        np.testing.assert_array_equal(a, b)
    targets[1] = 2
    ttargets[1] = 2
    np.testing.assert_allclose(step(ours, targets).item(), tstep(theirs, ttargets).item(), rtol=1e-5)
    for p, tp in zip(model.parameters(), tmodel.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_host_check_numpy_declines_runs_on_xla(monkeypatch):
    model, opt = _classifier(tapegrad)
    step = tapegrad.compile(_classifier_step(tapegrad, model, opt))
    x, targets = tapegrad.tensor(np.ones((2, 3), np.float32)), tapegrad.tensor([1, 3])
    for _ in range(3):
        step(x, targets)
    checks = step._compiled.guard.program.host_checks

    def declines(*args):
        raise _Unsupported
    monkeypatch.setattr(checks, "flags", declines)
    before = _state(model, opt)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        step(x, tapegrad.tensor([7, 0]))
    for a, b in zip(before, _state(model, opt)):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(step(x, tapegrad.tensor([0, 2])).item())
