"""tapegrad.utils.benchmark.Timer against torch.utils.benchmark: API, statistics, repr, honest timing."""
import re

import torch
import torch.utils.benchmark as tbench

import tapegrad
from tapegrad.utils import benchmark


def _shape_of_repr(text):
    # Numbers and addresses vary from run to run; the layout must not.
    return re.sub(r"\d+(\.\d+)?", "N", re.sub(r"0x[0-9a-f]+", "ADDR", text))


def test_measurement_statistics_and_repr_match_torch_on_the_same_times():
    times = [3e-6, 1e-6, 2e-6, 5e-6, 4e-6, 2.5e-6]
    spec_t = tbench.utils.common.TaskSpec(stmt="y = x + 1", setup="x = torch.ones(3)", label="add",
                                          sub_label="small", description="desc")
    spec_g = benchmark.TaskSpec(stmt="y = x + 1", setup="x = torch.ones(3)", label="add", sub_label="small",
                                description="desc")
    for number in (1, 10):
        mt = tbench.Measurement(number, times, spec_t)
        mg = benchmark.Measurement(number, times, spec_g)
        assert mg.median == mt.median and abs(mg.mean - mt.mean) < 1e-18 and abs(mg.iqr - mt.iqr) < 1e-18
        assert mg.times == mt.times and mg.has_warnings == mt.has_warnings
        assert repr(mg).splitlines()[1:] == repr(mt).splitlines()[1:]
        assert _shape_of_repr(repr(mg)) == _shape_of_repr(repr(mt))
    one_t, one_g = tbench.Measurement(100, [2e-3], spec_t), benchmark.Measurement(100, [2e-3], spec_g)
    assert repr(one_g).splitlines()[1:] == repr(one_t).splitlines()[1:]


def test_timer_runs_setup_and_statement_like_torch():
    common = dict(stmt="y = x * 2", setup="x = lib.ones(4)", label="mul", description="4 elements")
    mt = tbench.Timer(globals={"lib": torch}, **common).blocked_autorange(min_run_time=0.05)
    mg = benchmark.Timer(globals={"lib": tapegrad}, **common).blocked_autorange(min_run_time=0.05)
    assert _shape_of_repr(repr(mg)).splitlines()[1:4] == _shape_of_repr(repr(mt)).splitlines()[1:4]
    assert mg.title == mt.title == "mul" and mg.stmt == mt.stmt and mg.num_threads == 1
    assert len(mg.times) >= 1 and all(t > 0 for t in mg.times)
    m = benchmark.Timer("y = x * 2", globals={"x": tapegrad.ones(3)}).timeit(20)
    assert m.number_per_run == 20 and len(m.raw_times) == 1
    a = benchmark.Timer("y = x * 2", globals={"x": tapegrad.ones(3)}).adaptive_autorange(max_run_time=0.2)
    assert len(a.times) >= 4 or sum(a.raw_times) > 0.2


def test_every_run_computes_its_results():
    # A deferred op whose value is slow to compute: the timing must include computing it each run.
    calls = []
    x = tapegrad.ones(8)
    timer = benchmark.Timer("y = (x + 1).sum(); calls.append(1)", globals={"x": x, "calls": calls})
    seen = []
    original = benchmark._timer.synchronize

    def spy(*namespaces):
        for ns in namespaces:
            if "y" in ns:
                seen.append(ns["y"])
        original(*namespaces)
    benchmark._timer.synchronize = spy
    try:
        timer.timeit(5)
    finally:
        benchmark._timer.synchronize = original
    assert len(seen) == len(calls) and len(seen) > 5
    assert all(float(v) == 16.0 for v in seen)


def test_timing_includes_the_computation_not_only_the_recording():
    big = tapegrad.randn(600, 600, dtype=tapegrad.float64)
    small = tapegrad.randn(2, 2, dtype=tapegrad.float64)
    timers = [benchmark.Timer("y = x @ x @ x @ x", globals={"x": x}) for x in (big, small)]
    for timer in timers:   # settled first: a statement repeated compiles once, and that compile is not what is compared
        timer.timeit(5)
    slow, fast = (timer.timeit(5).median for timer in timers)
    # Recording costs the same for both shapes; only computing the products tells them apart.
    assert slow > 5 * fast
