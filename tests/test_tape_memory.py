"""What a graph keeps once its backward ran: PyTorch frees the saved tensors, and so does tapegrad; a
kept loss (a list of losses, a logged tensor) must not keep each step's batch or activations alive.

An autograd node is the op's equation on the tape (`tapegrad/_equation.py`), which also holds the op's
forward inputs until its outputs are computed: these are dropped as well, on every tier."""
import gc
import weakref

import numpy as np
import pytest

import tapegrad as tg
from tapegrad._equation import Equation


def _nodes(root):
    seen, stack = set(), [root]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        stack.extend(e[0] for e in getattr(n, "edges", ()) or () if e is not None)


def _steps(n, retain_graph=False):
    rng = np.random.default_rng(0)
    w = tg.tensor(rng.standard_normal((16, 16)).astype(np.float32), requires_grad=True)
    losses, batches = [], []
    for _ in range(n):   # the first step runs op by op, later ones as one program
        x = tg.tensor(rng.standard_normal((8, 16)).astype(np.float32))
        batches.append(weakref.ref(x._peek()))
        h = (x @ w).tanh() * 2.0 + 1.0
        loss = (h * h).mean()
        loss.backward(retain_graph=retain_graph)
        losses.append(loss)
        del x, h
    gc.collect()
    return losses, batches


def test_kept_losses_hold_no_batches_after_backward():
    losses, batches = _steps(6)
    assert all(b() is None for b in batches)
    for loss in losses:
        for n in _nodes(loss.grad_fn):
            if isinstance(n, Equation):
                assert n.args is None
                # plain values (add's scalar, an index) may stay, as PyTorch keeps them; no array does
                assert not any(hasattr(v, "shape") for v in getattr(n, "kept", None) or ())


def test_kept_losses_hold_no_intermediate_values():
    losses, _ = _steps(6)
    for loss in losses:
        for n in _nodes(loss.grad_fn):
            if n is loss.grad_fn:
                continue
            for ref in getattr(n, "outs", ()):
                assert ref() is None   # no tensor holds an intermediate: its value is gone


def test_retained_graph_keeps_what_a_second_backward_reads():
    losses, _ = _steps(3, retain_graph=True)
    for loss in losses:
        loss.backward()   # each graph is still complete
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        losses[0].backward()


@pytest.mark.parametrize("steps", [1, 4])
def test_values_still_needed_stay_computable(steps):
    # An intermediate a tensor still holds keeps its inputs (or its value) through the backward
    rng = np.random.default_rng(1)
    w = tg.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    for _ in range(steps):
        x = tg.tensor(rng.standard_normal((3, 4)))
        h = (x @ w).sin()
        loss = h.sum()
        loss.backward()
        w.grad = None
    expected = np.sin(x.numpy() @ w.detach().numpy())
    np.testing.assert_allclose(h.detach().numpy(), expected, rtol=1e-12)
