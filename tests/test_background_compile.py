"""A program that has earned its compile is compiled off the caller's thread (tapegrad/_background.py);
meanwhile the caller goes on running it on NumPy, and then on XLA, with PyTorch's values throughout."""
import time

import numpy as np
import pytest

import tapegrad
from tapegrad import _numpy_rent, _programs

from conftest import assert_close
from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")


def _loop(lib, steps):
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = lib.tensor(rng.standard_normal((16, 8)), dtype=lib.float32), lib.tensor(rng.integers(0, 3, 16))
    model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.Tanh(), lib.nn.Linear(16, 3))
    return model, x, y, lib.optim.SGD(model.parameters(), lr=0.1)


def _step(lib, model, x, y, opt):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _step_program():
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    return steps[0] if steps else None


def test_a_steady_loop_keeps_running_while_its_step_compiles_and_gets_pytorchs_values(torch, background_compile,
                                                                                      monkeypatch):
    meanwhile = []   # calls that ran on NumPy while their compile was under way
    on_numpy = _programs._run_on_numpy

    def counted(program, args, rent=True):
        out = on_numpy(program, args, rent)
        if not rent and out is not _numpy_rent._COMPILE:
            meanwhile.append(program)
        return out
    monkeypatch.setattr(_programs, "_run_on_numpy", counted)
    model_t, xt, yt, opt_t = _loop(torch, 0)
    model, x, y, opt = _loop(tapegrad, 0)
    model.load_state_dict({k: tapegrad.tensor(v.detach().numpy()) for k, v in model_t.state_dict().items()})
    before = tapegrad.autograd.backward_cache_info()["compiles"]
    with counting() as xla:
        started = time.perf_counter()
        while time.perf_counter() - started < 120:   # steps on NumPy take milliseconds: as many as the compile lasts
            expected = _step(torch, model_t, xt, yt, opt_t)
            loss = _step(tapegrad, model, x, y, opt)
            assert_close(loss.detach(), expected.detach(), rtol=1e-5, atol=1e-6)
            program = _step_program()
            if program is not None and program.jobs and all(j is _programs._COLLECTED for j in program.jobs.values()):
                break
        else:
            pytest.fail("the step's compile was never collected")
        ran = xla.executions
        for _ in range(3):
            assert_close(_step(tapegrad, model, x, y, opt).detach(), _step(torch, model_t, xt, yt, opt_t).detach(),
                         rtol=1e-5, atol=1e-6)
    assert program in meanwhile   # (a step takes milliseconds, its compile far longer)
    assert program.compiles == 1   # the worker's compile, accounted to the program on this thread
    assert tapegrad.autograd.backward_cache_info()["compiles"] - before == xla.compiles
    assert xla.executions - ran >= 3   # on XLA from then on
    for p, q in zip(model.parameters(), model_t.parameters()):
        assert_close(p.detach(), q.detach(), rtol=1e-4, atol=1e-5)


def test_deterministic_algorithms_compile_on_the_callers_thread(background_compile, no_program_rent):
    model, x, y, opt = _loop(tapegrad, 0)
    tapegrad.use_deterministic_algorithms(True)
    try:
        with counting() as xla:
            for _ in range(3 + _programs.STEADY_STREAK):
                compiles = xla.compiles
                _step(tapegrad, model, x, y, opt)
                if xla.compiles > compiles:
                    break
            executions = xla.executions
            _step(tapegrad, model, x, y, opt)
    finally:
        tapegrad.use_deterministic_algorithms(False)
    program = _step_program()
    assert program.compiles == 1 and not program.jobs   # compiled where it was called, no worker job
    assert xla.executions == executions + 1


def test_a_script_that_ends_while_a_compile_runs_exits_cleanly():
    """The worker is a daemon thread; stopped inside XLA at exit it would abort the process: exit waits."""
    import subprocess
    import sys
    script = """
import numpy as np, tapegrad
from tapegrad import _numpy_rent
_numpy_rent.PLAN_COMPILE_SECONDS = _numpy_rent.PLAN_COMPILE_SECONDS_PER_STEP = 0.0   # (bought when it comes back)
model = tapegrad.nn.Sequential(tapegrad.nn.Linear(8, 64), tapegrad.nn.Tanh(), tapegrad.nn.Linear(64, 3))
opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
x, y = tapegrad.randn(16, 8), tapegrad.tensor(np.arange(16) % 3)
for _ in range(8):
    opt.zero_grad(); tapegrad.nn.functional.cross_entropy(model(x), y).backward(); opt.step()
from tapegrad import _background
assert _background._last[0] is not None, "no compile was started off the thread"
"""
    import os
    env = dict(os.environ, TAPEGRAD_BACKGROUND_COMPILE="1")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "terminate called" not in done.stderr
