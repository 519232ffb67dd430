"""A no_grad loop is computed in windows of whole iterations (tapegrad/_segment.py, FLUSH_MIN): memory stays
flat and the windows, all alike, share one program. The window anchors on an op that comes back, so setup
code recorded before the loop (weights copied in, a first batch) does not keep the loop's ops pending."""
import contextlib

import numpy as np
import pytest

import tapegrad
from tapegrad import _segment

from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")


def _evaluate(lib, body_ops, iterations, loop=contextlib.nullcontext, each=lambda: None):
    rng = np.random.default_rng(0)
    m = lib.nn.Linear(8, 8)
    with lib.no_grad():   # setup recorded first: its ops never come back
        m.weight.copy_(lib.tensor(rng.standard_normal((8, 8)).astype(np.float32)) * 0.3)
        m.bias.copy_(lib.tensor(rng.standard_normal(8).astype(np.float32)))
    x = lib.tensor(rng.standard_normal((4, 8)).astype(np.float32))
    total = 0.0
    with lib.no_grad(), loop() as counts:
        for _ in range(iterations):
            h = m(x)
            for _ in range(body_ops):
                h = (h * 0.5).tanh()
            total = total + h.pow(2).mean()
            each()
        return total.item(), counts


@pytest.mark.parametrize("body_ops", [1, 100], ids=["short body", "body longer than a window"])
def test_a_loop_after_setup_code_is_cut_into_alike_windows(torch, body_ops):
    iterations = 400 if body_ops == 1 else 12
    longest = [0]

    def watch():
        longest[0] = max(longest[0], len(_segment.current().nodes))

    _segment.end()   # a fresh tape, as after a backward (ops another test recorded with grad would stay)
    ours, xla = _evaluate(tapegrad, body_ops, iterations, counting, watch)
    assert ours == pytest.approx(_evaluate(torch, body_ops, iterations)[0], rel=1e-5)
    per_iteration = 2 * body_ops + 5
    # pending ops stay within a few windows, never MAX_NODES
    assert longest[0] <= 4 * _segment.FLUSH_MIN + 2 * per_iteration
    assert xla.compiles <= 1   # the windows share one program


_BODIES = {
    "linear": lambda lib, m, x, i: m(x).pow(2).mean(),
    "unused value": lambda lib, m, x, i: (m(x).exp(), m(x).sum())[1],        # an op whose value nothing reads
    "several outputs": lambda lib, m, x, i: m(x).max(dim=1)[0].sum() * 0.5,  # one output of two used
    "scalars of kinds": lambda lib, m, x, i: ((m(x) + 1) * 2.5 > 0.25).sum() + (i % 3),
    "a read": lambda lib, m, x, i: m(x).sum() + (m(x).sum().item() if i % 7 == 0 else 0.0),
}


@pytest.mark.parametrize("body", sorted(_BODIES))
def test_a_windows_plan_built_from_its_codes_is_the_plan_the_graph_walk_finds(torch, monkeypatch, body):
    """The plan of a window that repeats is rebuilt from the segment's codes (_segment._window_plan), not by
    walking the graph back from its live values: it must be the very plan the walk finds (key, ops, inputs),
    or not be used; and the loop's result is torch's."""
    built = []
    made = _segment._window_plan

    def checked(seg, nodes, codes, live):
        plan = made(seg, nodes, codes, live)
        if plan is not None:
            walked = tapegrad._lazy.Plan(live)
            assert plan.key == walked.key and hash(plan.key) == hash(walked.key)
            assert plan.nodes == walked.nodes and plan.slots == walked.slots and plan.live == walked.live
            assert len(plan.inputs[0]) == len(walked.inputs[0])
            assert all(a is b for a, b in zip(plan.inputs[0], walked.inputs[0]))
            assert plan.inputs[1] == walked.inputs[1]
            built.append(plan)
        return plan
    monkeypatch.setattr(_segment, "_window_plan", checked)

    def run(lib):
        rng = np.random.default_rng(0)
        m = lib.nn.Linear(8, 8)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(rng.standard_normal((8, 8)).astype(np.float32)) * 0.3)
            m.bias.copy_(lib.tensor(rng.standard_normal(8).astype(np.float32)))
        x = lib.tensor(rng.standard_normal((4, 8)).astype(np.float32))
        total = 0.0
        with lib.no_grad():
            for i in range(300):
                total = total + _BODIES[body](lib, m, x, i)
        return float(total)

    _segment.end()
    assert run(tapegrad) == pytest.approx(run(torch), rel=1e-5)
    if body != "a read":
        assert len(built) > 10   # (the steady windows: the first of each structure is walked)
