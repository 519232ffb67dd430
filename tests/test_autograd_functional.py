"""autograd.functional against PyTorch: traced results (one program) and tape results (create_graph)."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both


def _inputs(lib):
    rng = np.random.default_rng(0)
    return (lib.tensor(rng.normal(size=(2,)), dtype=lib.float64),
            lib.tensor(rng.normal(size=(2, 2)), dtype=lib.float64))


def _f(lib):
    return lambda x, w: ((lib.tanh(w @ x) * x[:2]).exp(), (x ** 2).sum())


def _scalar(lib):
    return lambda x, w: ((w @ x) ** 3).sum() + (x.sin() * x).sum()


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return [result]


@pytest.mark.parametrize("create_graph", [False, True])
def test_products_jacobians_and_hessians(torch, create_graph):
    def build(lib):
        F = lib.autograd.functional
        x, w = _inputs(lib)
        if create_graph:
            x.requires_grad_()
        v_out = (lib.ones(2, dtype=lib.float64), lib.tensor(2.0, dtype=lib.float64))
        v_in = (lib.ones(2, dtype=lib.float64), lib.full((2, 2), 0.5, dtype=lib.float64))
        results = [F.vjp(_f(lib), (x, w), v_out, create_graph=create_graph),
                   F.jvp(_f(lib), (x, w), v_in, create_graph=create_graph),
                   F.jacobian(_f(lib), (x, w), create_graph=create_graph),
                   F.jacobian(lambda x: x.exp() * x.sum(), x, create_graph=create_graph),
                   F.hessian(_scalar(lib), (x, w), create_graph=create_graph),
                   F.hessian(lambda x: (x ** 4).sum(), x, create_graph=create_graph),
                   F.hvp(_scalar(lib), (x, w), v_in, create_graph=create_graph),
                   F.vhp(_scalar(lib), (x, w), v_in, create_graph=create_graph)]
        flat = _flat(results)
        if create_graph:   # the results are differentiable again, as PyTorch's
            lib.autograd.backward([t.sum() for t in flat if t.requires_grad])
            flat.append(x.grad)
        return flat, [t.requires_grad for t in flat]
    (ours, our_req), (theirs, their_req) = both(build)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
    assert our_req == their_req


def test_forward_jacobian_strategy_and_untraceable_functions(torch):
    def build(lib):
        x = _inputs(lib)[0]
        forward = lib.autograd.functional.jacobian(lambda x: x.exp() * x.sum(), x, vectorize=True,
                                                   strategy="forward-mode")
        reads = lib.autograd.functional.jacobian(lambda x: x * float(x.sum().item()), x)
        return forward, reads
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_errors_as_pytorch(torch):
    def build(lib):
        F = lib.autograd.functional
        x, w = _inputs(lib)
        messages = []
        for call in (lambda: F.vjp(lambda x: x * 2, x),
                     lambda: F.jvp(lambda x: x * 2, x),
                     lambda: F.jacobian(lambda x: x * 2, (x, 3)),
                     lambda: F.vjp(lambda x, w: x * 2, (x, w), lib.ones(2, dtype=lib.float64), strict=True),
                     lambda: F.vjp(lambda x: x * 2, x, lib.ones(4, dtype=lib.float64))):
            try:
                call()
                messages.append(None)
            except (RuntimeError, TypeError) as e:
                messages.append((type(e).__name__, str(e)))
        return messages
    ours, theirs = both(build)
    assert ours == theirs
