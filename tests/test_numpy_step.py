"""A backward step that comes back runs on NumPy from the kernels its first sight ran, with no trace
(tapegrad/autograd/_numpy_step.py), and gives PyTorch's gradients.

Each case runs the same code three times under tapegrad (the first sight of its structure runs node by
node, a sight after it the step program, whose NumPy evaluator is assembled) and under PyTorch, and
compares every gradient the code asks for.
"""
import numpy as np
import pytest

import tapegrad
from tapegrad import _numpy_rent, _programs, _segment, _shape_poly
from tapegrad.autograd import _numpy_step
from tapegrad.autograd._numpy_step import StepEvaluator

from conftest import assert_close, require

pytestmark = pytest.mark.usefixtures("fresh_program_caches")


@pytest.fixture(autouse=True)
def _fresh_segment():
    """Each test on a fresh tape segment: ops an earlier test left pending could cut a graph's segment
    (then its backward takes the general path, whose programs are not steps)."""
    _segment.end()


def _values(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _mlp_with_scalars(lib, call):
    x, w = (lib.tensor(v, requires_grad=True) for v in _values(0, (3, 4), (4,)))
    scale = [0.5, 1.75, -0.25][call]   # a Python scalar that changes: a value, not structure
    h = (x * w * scale + call).tanh()
    (h.exp().sum(1) * scale).sum().backward()
    return [x.grad, w.grad]


def _retained(lib, call):
    x = lib.tensor(_values(1, (2, 5))[0], requires_grad=True)
    h = x.sin() * 2
    h.retain_grad()
    m = h.cumsum(1)
    m.retain_grad()
    (m * m).mean().backward()
    return [x.grad, h.grad, m.grad]


_KEPT = {}


def _accumulating(lib, call):
    # the leaf's .grad is not zeroed between the calls: the step adds to the grad it already holds
    if call == 0:
        _KEPT[lib.__name__] = lib.tensor(_values(2, (4, 3))[0], requires_grad=True)
    x = _KEPT[lib.__name__]
    (x.pow(3) - x).sum().backward()
    return [x.grad]


def _unused_output(lib, call):
    # std_mean's std is not used: its node gets a zero cotangent for it
    x = lib.tensor(_values(3, (3, 6))[0], requires_grad=True)
    std, mean = lib.std_mean(x, 1)
    (mean.exp() * 3).sum().backward()
    return [x.grad]


def _given_seed(lib, call):
    x = lib.tensor(_values(4, (2, 3))[0], requires_grad=True)
    y = x.tanh() * x
    y.backward(lib.tensor(_values(5 + call, (2, 3))[0]))
    return [x.grad]


def _broadcast_bias(lib, call):
    x, w, b = (lib.tensor(v, requires_grad=True) for v in _values(6, (5, 3), (2, 3), (2,)))
    lib.nn.functional.linear(x, w, b).relu().pow(2).sum().backward()
    return [x.grad, w.grad, b.grad]


CASES = {"scalars that change": _mlp_with_scalars, "retain_grad": _retained, "accumulating .grad": _accumulating,
         "an unused output": _unused_output, "a given seed": _given_seed, "linear and its bias": _broadcast_bias}


@pytest.mark.parametrize("case", list(CASES))
def test_a_step_that_comes_back_runs_on_numpy_without_a_trace_and_matches_torch(case):
    torch = require("torch")
    code = CASES[case]
    theirs = [code(torch, call) for call in range(3)]
    tapegrad.autograd.clear_backward_cache()
    ours = [code(tapegrad, 0), code(tapegrad, 1)]   # (an accumulating step first meets its structure in 1)
    traced = tapegrad.autograd.backward_cache_info()["traces"]
    ours.append(code(tapegrad, 2))
    info = tapegrad.autograd.backward_cache_info()
    assert info["traces"] == traced, "the step that came back was traced"
    assert info["compiles"] == 0
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert len(steps) == 1 and all(type(r.run) is StepEvaluator for r in steps[0].numpy.values())
    for call in range(3):
        for got, expected in zip(ours[call], theirs[call]):
            assert_close(got, expected, rtol=1e-10, atol=1e-12)


def _calls(code, lib, n):
    return [[g.detach().clone() if lib is not tapegrad else g.detach().numpy().copy() for g in code(lib, call % 3)]
            for call in range(n)]


@pytest.mark.parametrize("case", list(CASES))
def test_a_step_that_keeps_coming_back_runs_its_kernels_fused_and_matches_torch(case, monkeypatch):
    """After FUSE_AFTER calls a step's kernels run as one fused evaluator (_numpy_step_fused): the values of
    the unfused evaluator, bit for bit, and PyTorch's."""
    torch = require("torch")
    monkeypatch.setattr(_numpy_rent, "STREAK_CALLS", 0)   # (a streak of these small steps may buy a compile)
    code = CASES[case]
    n = 2 * _numpy_step.FUSE_AFTER + 4
    theirs = _calls(code, torch, n)
    tapegrad.autograd.clear_backward_cache()
    fused = _calls(code, tapegrad, n)
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert any(r.run.fused for p in steps for r in p.numpy.values())
    assert tapegrad.autograd.backward_cache_info()["compiles"] == 0
    monkeypatch.setattr(_numpy_step, "FUSE_AFTER", 1 << 30)
    tapegrad.autograd.clear_backward_cache()
    unfused = _calls(code, tapegrad, n)
    for call in range(n):
        for ours, plain, expected in zip(fused[call], unfused[call], theirs[call]):
            np.testing.assert_array_equal(ours, plain)
            assert_close(tapegrad.tensor(ours), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_recurrent_layers_over_lengths_that_come_back_train_as_torch_without_tracing_their_steps(mode):
    torch = require("torch")
    lengths = [6, 11, 6, 11, 6]
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((2, t, 3)) for t in lengths]

    def train(lib, record):
        lib.manual_seed(0)
        rnn = getattr(lib.nn, mode)(3, 4, batch_first=True, dtype=lib.float64)
        grads = []
        for k, x in enumerate(xs):
            rnn.zero_grad()
            out, _ = rnn(lib.tensor(x))
            out[:, -1].pow(2).sum().backward()
            grads.append([p.grad.clone() for p in rnn.parameters()])
            record(k)
        return rnn, grads

    theirs_model, _ = train(torch, lambda k: None)
    tapegrad.autograd.clear_backward_cache()
    traces = []
    ours_model, ours = train(tapegrad, lambda k: traces.append(tapegrad.autograd.backward_cache_info()["traces"]))
    # every length is seen first (traced kernels), then comes back: no trace for the steps that came back
    assert traces[2] == traces[1] and traces[3] == traces[2] and traces[4] == traces[3]
    assert tapegrad.autograd.backward_cache_info()["compiles"] == 0
    # the same weights (PyTorch's init under manual_seed differs: copy theirs), then the same gradients
    with torch.no_grad():
        for a, b in zip(theirs_model.parameters(), ours_model.parameters()):
            a.copy_(torch.tensor(b.detach().numpy()))
    for x, grads in zip(xs, ours):
        theirs_model.zero_grad()
        out, _ = theirs_model(torch.tensor(x))
        out[:, -1].pow(2).sum().backward()
        for g, p in zip(grads, theirs_model.parameters()):
            assert_close(g, p.grad, rtol=1e-10, atol=1e-12)


def test_a_step_that_draws_gives_the_same_masks_on_numpy_as_at_first_sight():
    # the same seed before each call: the step on NumPy draws the masks the first sight drew
    tapegrad.manual_seed(0)
    model = tapegrad.nn.Sequential(tapegrad.nn.Linear(5, 8), tapegrad.nn.Dropout(0.3), tapegrad.nn.Tanh(),
                                   tapegrad.nn.Linear(8, 1))
    x = tapegrad.randn(4, 5)
    tapegrad.autograd.clear_backward_cache()
    grads = []
    for _ in range(3):
        tapegrad.manual_seed(1)
        model.zero_grad()
        model(x).pow(2).sum().backward()
        grads.append([p.grad.clone() for p in model.parameters()])
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert len(steps) == 1 and all(type(r.run) is StepEvaluator for r in steps[0].numpy.values())
    for later in grads[1:]:
        for a, b in zip(grads[0], later):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_packed_bidirectional_lstm_step_on_numpy_matches_torch():
    torch = require("torch")
    lengths = [[5, 3], [5, 3], [5, 3]]
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((2, 5, 3)) for _ in lengths]

    def run(lib, lstm):
        grads = []
        for x, n in zip(xs, lengths):
            lstm.zero_grad()
            packed = lib.nn.utils.rnn.pack_padded_sequence(lib.tensor(x), n, batch_first=True)
            out, (h, c) = lstm(packed)
            (h.pow(2).sum() + c.sum()).backward()
            grads.append([p.grad.clone() for p in lstm.parameters()])
        return grads

    theirs_lstm = torch.nn.LSTM(3, 4, batch_first=True, bidirectional=True, dtype=torch.float64)
    ours_lstm = tapegrad.nn.LSTM(3, 4, batch_first=True, bidirectional=True, dtype=tapegrad.float64)
    with tapegrad.no_grad():
        for a, b in zip(theirs_lstm.parameters(), ours_lstm.parameters()):
            b.copy_(tapegrad.tensor(a.detach().numpy()))
    tapegrad.autograd.clear_backward_cache()
    ours = run(tapegrad, ours_lstm)
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert len(steps) == 1 and all(type(r.run) is StepEvaluator for r in steps[0].numpy.values())
    for got, expected in zip(ours, run(torch, theirs_lstm)):
        for g, e in zip(got, expected):
            assert_close(g, e, rtol=1e-10, atol=1e-12)


def test_a_step_whose_kernels_were_evicted_is_traced_and_still_matches_torch():
    torch = require("torch")
    theirs = [_broadcast_bias(torch, call) for call in range(2)]
    tapegrad.autograd.clear_backward_cache()
    first = _broadcast_bias(tapegrad, 0)
    _programs._kernels.clear()   # (as the kernel cache's bound would: the first sight's evaluators are gone)
    traced = tapegrad.autograd.backward_cache_info()["traces"]
    second = _broadcast_bias(tapegrad, 1)
    assert tapegrad.autograd.backward_cache_info()["traces"] > traced
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert len(steps) == 1 and not any(type(r.run) is StepEvaluator for r in steps[0].numpy.values())
    for got, expected in zip(first + second, theirs[0] + theirs[1]):
        assert_close(got, expected, rtol=1e-10, atol=1e-12)


def test_an_entry_whose_abstract_trace_was_forgotten_is_traced_alone_not_the_step():
    # each call clones the last call's grads: entries of the next step that its first sight never ran (they
    # were not needed for its backward); their op's abstract evaluation was cached long ago and its jaxpr
    # may have left the bounded cache: the entry's kernel is traced for its kinds, the step still assembled
    torch = require("torch")
    clones = {}

    def call(lib, k):
        grads = _broadcast_bias(lib, k)
        if lib is tapegrad and k == 1:
            _shape_poly._jaxprs.clear()
        clones[lib, k] = [g.clone() for g in grads]
        return grads

    theirs = [call(torch, k) for k in range(3)]
    tapegrad.autograd.clear_backward_cache()
    ours = [call(tapegrad, k) for k in range(3)]
    steps = [p for key, p in _programs._programs.entries.items() if key[0] == "step"]
    assert any(type(r.run) is StepEvaluator for p in steps for r in p.numpy.values())
    assert all(type(r.run) is StepEvaluator for p in steps for r in p.numpy.values())
    for k in range(3):
        for got, expected in zip(ours[k] + clones[tapegrad, k], theirs[k] + clones[torch, k]):
            assert_close(got, expected, rtol=1e-10, atol=1e-12)
