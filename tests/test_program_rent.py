"""A whole program that comes back rents NumPy before it is compiled (ski rental, see tapegrad/_numpy_rent.py).

A training step, a backward or a pending computation seen a second time with the same shapes is traced
into one program, which runs on NumPy until the time spent so (estimated from its work) reaches its
compile price; from then on it runs compiled. Steps whose shapes come back only a few times (variable
sequence lengths) therefore never compile, and a steady loop still ends as one XLA program per step: at
once when its steps are dear on NumPy, once its rent pays for the compile when they are cheap.
"""
import math
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import _numpy_rent, _programs, nn
from tapegrad._recompiles import WARN_AFTER, RecompileWarning

from conftest import assert_close, from_torch, require
from test_program_counts import LOOPS
from test_recompiles import _branchy_steps, _model
from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")


def _step_program():
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert len(steps) == 1
    return steps[0]


def _rented(program):
    rented = [r for r in program.numpy.values() if r.run is not None]
    assert len(rented) == 1
    return rented[0]


def _dear_step():
    """The MLP benchmark's manual SGD step (784-256-256-10, batch 128): on NumPy a call costs a good share
    of its compile price."""
    rng = np.random.default_rng(0)
    sizes = (784, 256, 256, 10)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params += [tapegrad.tensor(rng.uniform(-0.05, 0.05, (fan_out, fan_in)).astype(np.float32), requires_grad=True),
                   tapegrad.zeros(fan_out, requires_grad=True)]
    x = tapegrad.tensor(rng.standard_normal((128, 784)).astype(np.float32))
    y = tapegrad.tensor(rng.integers(0, 10, 128))

    def step():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = nn.functional.relu(nn.functional.linear(h, params[i], params[i + 1]))
        loss = nn.functional.cross_entropy(nn.functional.linear(h, params[-2], params[-1]), y)
        loss.backward()
        with tapegrad.no_grad():
            for p in params:
                p -= 0.01 * p.grad
        for p in params:
            p.grad.zero_()
    return step


def test_a_steady_loop_of_dear_steps_compiles_at_once_then_one_program_per_step():
    step = _dear_step()
    with counting() as xla:
        sightings = 0
        while xla.compiles == 0:
            step()
            sightings += 1
            assert sightings < 100, "the step never compiled"
        # the first step differs (no .grad yet); the regular step runs op by op at first sight, then its
        # program comes STEADY_STREAK times in a row and compiles: no rent to pay first
        assert _programs.STEADY_STREAK < sightings <= 2 + _programs.STEADY_STREAK
        assert xla.compiles == 1 and xla.executions == 1
        rented = _rented(_step_program())
        assert rented.run.seconds * _numpy_rent.STREAK_CALLS >= rented.budget   # why it did not rent
        before = (xla.compiles, xla.executions)
        for _ in range(6):
            step()
        assert (xla.compiles, xla.executions) == (before[0], before[1] + 6)


def test_a_steady_loop_of_cheap_steps_rents_until_the_rent_pays_for_the_compile():
    """A small step on a streak would need more calls than a steady loop is taken to have left to pay its
    compile back on NumPy: it rents, as a structure that comes back between others does (some hundreds of
    calls of this model), then compiles once and runs compiled."""
    step = LOOPS["nn + Adam + item()"]()
    with counting() as xla:
        for _ in range(3 + 2 * _programs.STEADY_STREAK):
            step()
        assert xla.compiles == 0   # (its kernels: NumPy's on first sight)
        rented = _rented(_step_program())
        assert rented.run.seconds * _numpy_rent.STREAK_CALLS < rented.budget
        to_pay = math.ceil((rented.budget - rented.seconds) / rented.run.seconds)
        calls = 0
        while xla.compiles == 0:
            step()
            calls += 1
            assert calls <= to_pay + 2, "the rent never paid for a compile"
        assert calls >= to_pay   # not before the rent reached the price
        assert rented.seconds >= rented.budget
        executions = xla.executions
        for _ in range(4):
            step()
        assert (xla.compiles, xla.executions) == (1, executions + 4)


def test_structures_that_alternate_rent_until_the_rent_pays_for_the_compile(monkeypatch):
    # a lower price than the default (hundreds of calls of this small model): the same rule, sooner
    monkeypatch.setattr(_numpy_rent, "PLAN_COMPILE_SECONDS", 0.01)
    monkeypatch.setattr(_numpy_rent, "PLAN_COMPILE_SECONDS_PER_STEP", 0.0)
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    batches = [tapegrad.randn(n, 8) for n in (6, 10)]   # two shapes, never twice in a row

    def step(x):
        model.zero_grad()
        model(x).pow(2).mean().backward()

    with counting() as xla:
        step(batches[0])   # the kernels XLA compiles (a first backward's ones)
        kernels = xla.compiles
        calls = 0
        while xla.compiles == kernels:
            step(batches[calls % 2])
            calls += 1
            assert calls < 10_000, "the rent never paid for a compile"
    rented = [r for key, p in _programs._programs.entries.items() if key[0] == "step" for r in p.numpy.values()]
    assert calls > 2 * _programs.STEADY_STREAK   # no streak: it rented
    assert any(r.seconds >= r.budget for r in rented)   # and compiled when its rent reached the price


def _grads(build):
    leaves, out = build()
    out.backward()
    return [t.grad for t in leaves]


def _tiers(build):
    """Gradients node by node, from the step program on NumPy, and from the compiled step program."""
    tapegrad.autograd.clear_backward_cache()
    node_by_node, on_numpy = _grads(build), _grads(build)
    assert tapegrad.autograd.backward_cache_info()["compiles"] == 0
    tapegrad.autograd.clear_backward_cache()
    price = _numpy_rent.PLAN_COMPILE_SECONDS, _numpy_rent.PLAN_COMPILE_SECONDS_PER_STEP
    _numpy_rent.PLAN_COMPILE_SECONDS = _numpy_rent.PLAN_COMPILE_SECONDS_PER_STEP = 0.0
    try:
        _grads(build)
        compiled = _grads(build)
    finally:
        _numpy_rent.PLAN_COMPILE_SECONDS, _numpy_rent.PLAN_COMPILE_SECONDS_PER_STEP = price
    assert tapegrad.autograd.backward_cache_info()["compiles"] == 1
    return node_by_node, on_numpy, compiled


def test_numpy_and_compiled_step_programs_agree_with_torch():
    torch = require("torch")

    def build(lib):
        def make():
            x = lib.tensor([[0.5, -1.0], [2.0, 3.0]], dtype=lib.float64, requires_grad=True)
            w = lib.tensor([1.5, -0.5], dtype=lib.float64, requires_grad=True)
            h = (x * w).tanh()
            return [x, w], ((h * h).sum(1) + x.exp().mean() / w.sum()).sum()
        return make

    theirs = _grads(build(torch))
    for tier in _tiers(build(tapegrad)):
        for ours, expected in zip(tier, theirs):
            assert_close(ours, expected)


def test_lengths_that_come_back_a_few_times_compile_no_step_and_train_as_torch():
    torch = require("torch")
    rng = np.random.default_rng(0)
    lengths = [5, 9, 5, 13, 9, 13, 5, 9]   # each length comes back: its step is traced, rents, never compiles
    xs = [rng.standard_normal((2, t, 3)).astype(np.float32) for t in lengths]
    ys = [rng.standard_normal((2, 1)).astype(np.float32) for _ in lengths]

    def train(lib):
        lib.manual_seed(0)
        rnn, head = lib.nn.GRU(3, 4, batch_first=True), lib.nn.Linear(4, 1)
        return rnn, head, lib.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=0.05)

    theirs = train(torch)
    ours = train(tapegrad)
    for (a, b) in zip(list(theirs[0].parameters()) + list(theirs[1].parameters()),
                      list(ours[0].parameters()) + list(ours[1].parameters())):
        with tapegrad.no_grad():
            b.copy_(from_torch(a.detach()))
    with warnings.catch_warnings(), counting() as xla:
        warnings.simplefilter("error", RecompileWarning)
        for lib, (rnn, head, opt) in ((torch, theirs), (tapegrad, ours)):
            for x, y in zip(xs, ys):
                opt.zero_grad()
                out, _ = rnn(lib.tensor(x))
                loss = lib.nn.functional.mse_loss(head(out[:, -1]), lib.tensor(y))
                loss.backward()
                opt.step()
                loss.item()
        assert xla.compiles == 0
    assert tapegrad.autograd.backward_cache_info()["numpy_runs"] > 0
    for a, b in zip(list(theirs[0].parameters()) + list(theirs[1].parameters()),
                    list(ours[0].parameters()) + list(ours[1].parameters())):
        assert_close(b.detach(), a.detach(), rtol=1e-4, atol=1e-5)


def test_structures_that_come_back_twice_rent_and_do_not_warn():
    model, opt = _model()
    with warnings.catch_warnings(), counting() as xla:
        warnings.simplefilter("error", RecompileWarning)
        _branchy_steps(model, opt, 1)   # the kernels XLA must compile (randn's random bits)
        first = xla.compiles
        _branchy_steps(model, opt, WARN_AFTER + 4, repeats=2)
        assert xla.compiles == first


def test_the_compile_warning_comes_when_the_rent_is_spent(monkeypatch):
    """The structures of a changing step warn when XLA compiles them, not when they start renting."""
    monkeypatch.setattr(_numpy_rent, "PLAN_COMPILE_SECONDS", 1e-3)
    monkeypatch.setattr(_numpy_rent, "PLAN_COMPILE_SECONDS_PER_STEP", 0.0)
    model, opt = _model()
    with pytest.warns(RecompileWarning, match="new training step"):
        _branchy_steps(model, opt, WARN_AFTER + 2, repeats=4)
