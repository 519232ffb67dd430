"""New sizes of a changing dimension reuse one symbolic trace (tapegrad/_shape_poly.py), and a pending
plan seen again runs from its ops' kernel evaluators without being traced (tapegrad/_plan_parts.py).

Traces are counted by `backward_cache_info()["traces"]`; values are compared with PyTorch."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
from tapegrad import _shape_poly
from conftest import assert_close, require
from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")

LAYERS = (32, 64, 10)


def _traces():
    return tapegrad.autograd.backward_cache_info()["traces"]


def _evaluator(lib, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-0.2, 0.2, (o, i)).astype(np.float32) for i, o in zip(LAYERS[:-1], LAYERS[1:])]
    params = [lib.tensor(a) for a in arrays] + [lib.tensor(np.full(o, 0.1, np.float32)) for o in LAYERS[1:]]

    def loss(x, y):
        F = lib.nn.functional
        with lib.no_grad():
            h = F.relu(F.linear(x, params[0], params[2]))
            return F.cross_entropy(F.linear(h, params[1], params[3]), y).item()
    return loss


def _batches(sizes, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((n, LAYERS[0])).astype(np.float32), rng.integers(0, LAYERS[-1], n))
            for n in sizes]


def test_each_new_batch_size_after_the_second_is_evaluated_without_a_trace_or_a_compile():
    torch = require("torch")
    sizes = (48, 40, 33, 17, 29, 5)
    batches = _batches(sizes)
    ours, theirs = _evaluator(tapegrad), _evaluator(torch)
    with counting() as xla:
        for n, (x, y) in zip(sizes, batches):
            before = _traces()
            got = ours(tapegrad.tensor(x), tapegrad.tensor(y))
            assert got == pytest.approx(theirs(torch.tensor(x), torch.tensor(y)), rel=1e-5)
            if n not in sizes[:2]:   # the first size traces each op, the second traces it with the size a symbol
                assert _traces() == before, f"batch size {n} traced again"
    assert xla.compiles == 0


def test_a_plan_that_comes_back_runs_on_its_kernels_evaluators_without_a_trace():
    torch = require("torch")
    sizes = (48, 40, 33)
    batches = _batches(sizes)
    ours, theirs = _evaluator(tapegrad), _evaluator(torch)
    for x, y in batches:   # first sight: op by op, each kernel on NumPy
        ours(tapegrad.tensor(x), tapegrad.tensor(y))
    before, runs = _traces(), tapegrad.autograd.backward_cache_info()["numpy_runs"]
    with counting() as xla:
        for x, y in batches * 2:   # seen again: each plan as one program, renting NumPy
            got = ours(tapegrad.tensor(x), tapegrad.tensor(y))
            assert got == pytest.approx(theirs(torch.tensor(x), torch.tensor(y)), rel=1e-5)
    assert _traces() == before and xla.compiles == 0
    assert tapegrad.autograd.backward_cache_info()["numpy_runs"] - runs == 2 * len(sizes)   # one run a batch


def test_an_assembled_plan_takes_its_scalars_and_offsets_as_values():
    """The plan's ops run as one fused NumPy program; the Python numbers mixed into its ops and its slice
    offsets are inputs of it, each reaching the op it was recorded with. (Two row counts alternate, so
    that no plan comes often enough in a row to be compiled.)"""
    torch = require("torch")
    data = np.random.default_rng(3).standard_normal((40, 6)).astype(np.float32)

    def run(lib, rows, start, scale, shift):
        X = lib.tensor(data)
        with lib.no_grad():
            x = X[start:start + rows]
            h = (x * scale + shift).clamp(min=-1.5) - X[start + 1:start + rows + 1] / (shift + 2)
            return (h.pow(2).sum(1) * scale + start).mean().item()
    cases = [(8, 0, 0.5, 1), (5, 3, 2.0, -1), (8, 17, -1.25, 4), (5, 30, 3.0, 0)]
    for case in cases[:2]:   # first sight: op by op
        run(tapegrad, *case)
    before, runs = _traces(), tapegrad.autograd.backward_cache_info()["numpy_runs"]
    with counting() as xla:
        for case in cases + [(8, 9, 0.75, 2), (5, 2, -3.0, 7)]:
            assert run(tapegrad, *case) == pytest.approx(run(torch, *case), rel=1e-5)
    assert _traces() == before and xla.compiles == 0
    assert tapegrad.autograd.backward_cache_info()["numpy_runs"] - runs == 6   # one run a plan


def test_sizes_that_could_change_the_traced_code_are_traced_for_themselves():
    # Counted in a fresh process: the counts depend on the shape families earlier work began (another
    # model's linear layer begins one that is symbolic in more dimensions), which clearing the program
    # caches does not drop.
    require("torch")
    done = subprocess.run([sys.executable, "-c", "import test_shape_families as t; t.sizes_traced_for_themselves()"],
                          cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def sizes_traced_for_themselves():
    torch = require("torch")
    # 1 broadcasts, 64 and 32 meet fixed dimensions (a symbol's `d == 64` was traced as False)
    sizes = (48, 40, 1, 64, 32, 12)
    batches = _batches(sizes, seed=2)
    ours, theirs = _evaluator(tapegrad, seed=3), _evaluator(torch, seed=3)
    traced = {}
    for n, (x, y) in zip(sizes, batches):
        before = _traces()
        got = ours(tapegrad.tensor(x), tapegrad.tensor(y))
        assert got == pytest.approx(theirs(torch.tensor(x), torch.tensor(y)), rel=1e-5)
        traced[n] = _traces() - before
    assert traced[1] > 0 and traced[64] > 0 and traced[32] > 0 and traced[12] == 0


def test_a_family_binds_only_values_its_symbolic_trace_holds_for():
    calls = []

    def trace(shapes):
        calls.append(shapes)
        return "jaxpr"
    families = {}
    f32 = np.dtype(np.float32)

    def kinds(*shapes):
        return tuple((s, f32, False) for s in shapes) + (float,)
    assert _shape_poly.traced(families, kinds((4, 8), (4,)), trace) is None   # first sight: concrete
    traced, dims = _shape_poly.traced(families, kinds((6, 8), (6,)), trace)
    assert (traced, dims) == ("jaxpr", {"d0": 6}) and len(calls) == 1
    assert [str(d) for d in calls[0][0]] == ["d0", "8"] and calls[0][1][0] is calls[0][0][0]
    assert _shape_poly.traced(families, kinds((9, 8), (9,)), trace) == ("jaxpr", {"d0": 9})
    (family,) = list(families.values())[0]
    # 1 broadcasts; 8 meets the fixed 8; two sizes where the trace had one symbol; a fixed size that changed
    for refused in (((1, 8), (1,)), ((8, 8), (8,)), ((5, 8), (6,)), ((5, 7), (5,))):
        assert family.bind(refused) is None
    assert family.bind(((11, 8), (11,))) == ("jaxpr", {"d0": 11})
    assert len(calls) == 1


def test_a_function_that_needs_concrete_sizes_is_traced_per_shapes_from_then_on():
    def trace(shapes):
        raise TypeError("a symbolic dimension was read as an int")
    families = {}
    f32 = np.dtype(np.float32)
    for n in (4, 6, 9):
        assert _shape_poly.traced(families, ((((n, 3)), f32, False),), trace) is None


def test_a_reshape_over_a_changing_size_matches_torch():
    torch = require("torch")
    rng = np.random.default_rng(4)
    for n in (6, 10, 14, 22):
        x = rng.standard_normal((n, 4)).astype(np.float32)

        def f(lib, x=x):
            t = lib.tensor(x)
            return (t.reshape(-1, 2).softmax(-1) * 2).sum(0)
        assert_close(f(tapegrad), f(torch))
