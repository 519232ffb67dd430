"""Differential fuzzing: random programs run under tapegrad and PyTorch must agree.

Each example is a program of leaf creation, elementwise ops, reductions, matmul, views, in-place ops,
detach, no_grad regions, retain_grad, backward (repeated, with and without retain_graph), autograd.grad,
.grad zeroing and optimizer steps, and the wider set of tests/fuzz/breadth.py (ops along a dim, sorts,
joins, index-driven ops, losses, layer_norm). Values, gradients, flags and errors are compared (tests/fuzz).

    TAPEGRAD_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz_differential.py   # more examples
    TAPEGRAD_FUZZ_SEED=7 ...                                            # another seed (default: fixed)
    pytest tests/test_fuzz_differential.py --hypothesis-show-statistics  # share of programs that raised
"""
import os

import pytest
from conftest import require
from hypothesis import HealthCheck, event, given, seed, settings

import tapegrad
from fuzz import differences, programs, run

# about 20 s on one core by default; CI runs a fixed seed so a red run is reproducible
settings.register_profile(
    "tapegrad-fuzz", max_examples=int(os.environ.get("TAPEGRAD_FUZZ_EXAMPLES", "1000")), deadline=None,
    derandomize="TAPEGRAD_FUZZ_SEED" not in os.environ, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FUZZ_SEED = int(os.environ.get("TAPEGRAD_FUZZ_SEED", "0"))


@seed(FUZZ_SEED)
@settings(settings.get_profile("tapegrad-fuzz"))
@given(programs())
def test_tapegrad_runs_programs_as_torch_does(program):
    torch = require("torch")
    theirs = run(program, torch)
    ours = run(program, tapegrad)
    event("raised" if theirs.error else "ran to the end")
    if theirs.error:
        event(f"torch raised {type(theirs.error[1]).__name__} in a {program.steps[theirs.error[0]].kind} step")
    found = differences(ours, theirs)
    assert not found, "tapegrad and torch differ on this program:\n" + "\n".join(found) + f"\n{program!r}"
