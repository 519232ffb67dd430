"""The compiled-backward cache: one compile per graph structure, tiers agree, graph options respected."""
import pytest

import tapegrad
from tapegrad import _programs
from conftest import assert_close, both, require

torch = require("torch")

info = tapegrad.autograd.backward_cache_info


pytestmark = pytest.mark.usefixtures("fresh_program_caches")


def _mlp(lib, seed=0):
    """A 2-layer MLP's parameters and data, the same values in both libraries (drawn with NumPy)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in ((8, 4), (4, 16), (16,), (16, 1), (8, 1))]
    x, w1, b1, w2, y = (lib.tensor(a, dtype=lib.float64) for a in arrays)
    params = [w1.requires_grad_(), b1.requires_grad_(), w2.requires_grad_()]
    return x, y, params


def _loss(x, y, w1, b1, w2):
    return (((x @ w1 + b1).relu() @ w2 - y) ** 2).mean()


def _train(lib, steps, lr=0.05, on_step=lambda step: None):
    x, y, params = _mlp(lib)
    losses = []
    for step in range(steps):
        on_step(step)
        loss = _loss(x, y, *params)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad.zero_()
        losses.append(loss.item())
    return losses, params


def test_training_loop_compiles_once_per_structure():
    snapshots = {}
    losses, params = _train(tapegrad, 100, on_step=lambda step: snapshots.setdefault(step, info()))
    stats = info()
    assert stats["compiles"] <= 2, stats
    assert stats["hits"] >= 98, stats
    assert stats["misses"] <= 2, stats
    assert snapshots[10]["entries"] == stats["entries"] >= 1, "the same structure must not add cache entries"
    assert snapshots[10]["hits"] < snapshots[50]["hits"] < stats["hits"]
    t_losses, t_params = _train(torch, 100)
    assert losses == pytest.approx(t_losses, rel=1e-9)
    for p, tp in zip(params, t_params):
        assert_close(p.detach(), tp.detach())


def test_hits_grow_with_repeated_structure():
    x, y, params = _mlp(tapegrad)
    hits = []
    for _ in range(5):
        _loss(x, y, *params).backward()
        hits.append(info()["hits"])
    assert hits == sorted(hits) and hits[-1] > hits[0]


def test_clear_backward_cache_resets():
    _train(tapegrad, 3)
    assert info()["entries"] >= 1
    tapegrad.autograd.clear_backward_cache()
    assert set(info()) >= {"hits", "misses", "compiles", "compile_seconds", "executions", "entries", "kernels"}
    assert not any(info().values()), info()
    _train(tapegrad, 1)
    assert info()["misses"] == 1


def test_new_structure_is_a_miss():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * x).sum().backward()
    before = info()
    (x.exp() * x).sum().backward()
    after = info()
    assert after["misses"] == before["misses"] + 1
    (x * 3).sum().backward()
    assert info()["misses"] == after["misses"] + 1


def test_changing_a_static_argument_is_a_miss():
    x = tapegrad.ones(2, 3, requires_grad=True)
    x.sum(0).sum().backward()
    before = info()["misses"]
    x.sum(1).sum().backward()
    assert info()["misses"] == before + 1


def test_changing_a_python_scalar_value_is_not_a_miss():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    # from the second call on, with an existing .grad: the steady structure, compiled at its streak
    warm = 2 + _programs.STEADY_STREAK
    for _ in range(warm):
        (x * 2.0).sum().backward()
    before = info()
    (x * 3.0).sum().backward()
    (x * -0.5).sum().backward()
    after = info()
    assert (after["misses"], after["compiles"], after["entries"]) == \
        (before["misses"], before["compiles"], before["entries"])
    assert x.grad.tolist() == [2.0 * warm + 3.0 - 0.5] * 2


def _grads_at_each_tier(build):
    """Grads of the same structure run three times: node by node, then compiled, then from the cache."""
    grads = []
    for _ in range(3):
        leaves, out = build()
        out.backward()
        grads.append([t.grad for t in leaves])
    return grads


@pytest.mark.usefixtures("no_program_rent")
def test_compiled_and_node_by_node_tiers_agree():
    def build():
        x = tapegrad.tensor([[0.5, -1.0], [2.0, 3.0]], dtype=tapegrad.float64, requires_grad=True)
        w = tapegrad.tensor([1.5, -0.5], dtype=tapegrad.float64, requires_grad=True)
        h = (x * w).tanh()
        return [x, w], ((h * h).sum(1) + x.exp().mean() / w.sum()).sum()

    grads = _grads_at_each_tier(build)
    assert info()["compiles"] == 1
    for tier in grads[1:]:
        for a, b in zip(grads[0], tier):
            assert a.reshape(-1).tolist() == pytest.approx(b.reshape(-1).tolist(), rel=1e-14, abs=1e-14)


@pytest.mark.usefixtures("no_program_rent")
def test_work_before_a_loop_costs_no_extra_compile():
    # The first step's tape segment also holds what ran before the loop (here a statistic of the weights,
    # read as a number): its structure is seen once, the loop's own from the second step on. A loop of
    # per-input gradients (saliency) compiles one program, its step's, and no program of the first step's
    # backward beside it.
    def saliency(lib):
        w = lib.tensor([[0.5, -1.0], [2.0, 1.5], [0.25, -0.5]], dtype=lib.float64)
        scale = float((w * w).mean())
        grads = []
        for row in ([1.0, 2.0, 3.0], [0.5, -1.0, 0.0], [2.0, 2.0, -1.0], [0.0, 1.0, 1.0]):
            x = lib.tensor([row], dtype=lib.float64, requires_grad=True)
            ((x @ w).tanh().sum() * scale).backward()
            grads.append(x.grad)
        return grads
    ours = saliency(tapegrad)
    assert info()["compiles"] == 1
    for a, b in zip(ours, saliency(torch)):
        assert_close(a, b)


def test_tiers_agree_with_torch():
    def build(lib):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        out = []
        for _ in range(3):
            (x.sigmoid() * x ** 3).sum().backward()
            out.append(x.grad.clone())
        return out

    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_retain_graph_lets_a_second_backward_run_in_both_tiers():
    def build(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        grads = []
        for _ in range(3):
            out = (x.exp() * x).sum()
            out.backward(retain_graph=True)
            out.backward()
            grads.append(x.grad.clone())
        return grads

    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_inputs_restricts_accumulation_in_both_tiers():
    def build(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        for _ in range(3):
            (x * y * y).sum().backward(inputs=[y])
        return x.grad, y.grad

    (xg, yg), (txg, tyg) = both(build)
    assert xg is None and txg is None
    assert_close(yg, tyg)


def test_existing_grad_changes_structure_but_keeps_identity():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    g = x.grad
    for _ in range(4):
        (x * x).sum().backward()
    assert g is x.grad and x.grad.tolist() == [10.0, 20.0]


def test_hooked_graph_runs_hooks_every_time():
    calls = []
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        y = x * 2
        y.register_hook(lambda g: calls.append(g.tolist()))
        (y * y).sum().backward()
    assert calls == [[4.0, 8.0]] * 3
