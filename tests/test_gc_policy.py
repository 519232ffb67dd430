"""The garbage collector's policy set by importing tapegrad (see tapegrad/_gc_policy.py)."""
import gc
import subprocess
import sys

import numpy as np

import tapegrad


def _threshold_after_import(env_extra, before=""):
    code = f"import gc; {before}import tapegrad; print(gc.get_threshold()[2])"
    env = {**__import__("os").environ, **env_extra}
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                              check=True).stdout)


def test_import_makes_full_collections_rarer_unless_told_otherwise():
    assert _threshold_after_import({}) == 100
    assert _threshold_after_import({"TAPEGRAD_GC": "default"}) == 10
    assert _threshold_after_import({}, before="gc.set_threshold(700, 10, 30); ") == 30   # the program's own


def test_a_training_loop_leaves_no_cyclic_garbage():
    # why rarer full collections cost nothing: the tape's objects are freed by reference counting
    w = tapegrad.randn(8, 8, requires_grad=True)
    x = tapegrad.randn(40, 4, 8)
    opt = tapegrad.optim.Adam([w], lr=1e-3)

    def step():
        h = tapegrad.zeros(4, 8)
        for t in range(40):
            h = (h @ w + x[t]).tanh()
        opt.zero_grad()
        h.pow(2).mean().backward()
        opt.step()
        with tapegrad.no_grad():
            return float((h * 2).sum())
    for _ in range(6):   # past the step's compile (tracing makes cyclic garbage of its own)
        step()
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        values = [step() for _ in range(5)]
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()
    assert np.all(np.isfinite(values))
