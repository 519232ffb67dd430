"""Compiles are explained: a step recompiled again and again warns once, naming the op and line."""
import logging
import warnings

import pytest

import tapegrad
from tapegrad import nn
from tapegrad._recompiles import WARN_AFTER, RecompileWarning

from xla_events import counting


def _model():
    tapegrad.manual_seed(0)
    model = nn.Linear(4, 2)
    return model, tapegrad.optim.SGD(model.parameters(), lr=0.1)


def _branchy_steps(model, opt, steps, repeats=2):
    # Each structure runs `repeats` times in a row: a structure compiles when it comes back.
    for i in range(steps):
        for _ in range(repeats):
            h = model(tapegrad.randn(3, 4))
            for _ in range(i):      # a Python loop on data: one more op each step
                h = h * 1.01
            opt.zero_grad()
            h.pow(2).mean().backward()
            opt.step()


@pytest.mark.usefixtures("fresh_program_caches", "no_program_rent")   # structures compile when they come back
def test_a_step_whose_ops_change_warns_once_naming_the_op_and_line():
    model, opt = _model()
    with pytest.warns(RecompileWarning) as caught:
        _branchy_steps(model, opt, WARN_AFTER + 4)
    ours = [w for w in caught if issubclass(w.category, RecompileWarning)]
    assert len(ours) == 1
    text = str(ours[0].message)
    assert "new training step" in text and "is mul" in text and "has pow" in text
    assert f"test_recompiles.py:{_branchy_steps.__code__.co_firstlineno + 6}" in text   # the h * 1.01 line
    assert ours[0].filename.endswith("test_recompiles.py")


def test_structures_that_never_come_back_compile_nothing_and_do_not_warn():
    tapegrad.autograd.clear_backward_cache()   # the test above compiled these structures (they came back)
    model, opt = _model()
    with warnings.catch_warnings(), counting() as xla:
        warnings.simplefilter("error", RecompileWarning)
        _branchy_steps(model, opt, 1, repeats=1)   # the kernels XLA must compile (randn's random bits)
        first = xla.compiles
        _branchy_steps(model, opt, WARN_AFTER + 4, repeats=1)
        assert xla.compiles == first   # op by op through kernels that run on NumPy on first sight


def test_a_step_that_repeats_compiles_once_and_does_not_warn():
    model, opt = _model()
    x = tapegrad.randn(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RecompileWarning)
        for _ in range(3 * WARN_AFTER):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()


@pytest.mark.usefixtures("no_program_rent")
def test_log_names_every_recompile(monkeypatch, caplog):
    monkeypatch.setenv("TAPEGRAD_LOG", "recompiles")
    tapegrad.autograd.clear_backward_cache()   # the steps of the test above would be found compiled
    model, opt = _model()
    with caplog.at_level(logging.INFO, logger="tapegrad"):
        _branchy_steps(model, opt, 6)
    steps = [r.getMessage() for r in caplog.records if "new training step" in r.getMessage()]
    assert len(steps) >= 3
    assert all("test_recompiles.py" in m for m in steps)
