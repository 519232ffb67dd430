"""tapegrad.compile(dynamic=True): the arguments' first dims are symbols, so one trace serves every batch size.

Each test trains or evaluates in tapegrad (compiled, dynamic) and in PyTorch (eager) from the same weights over
batches of changing size and compares every loss and the final parameters.
"""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad._recompiles import RecompileWarning

_RNG = np.random.default_rng(0)
_W = [_RNG.standard_normal((8, 4)).astype(np.float32) * 0.5, _RNG.standard_normal(8).astype(np.float32) * 0.1,
      _RNG.standard_normal((2, 8)).astype(np.float32) * 0.5, _RNG.standard_normal(2).astype(np.float32) * 0.1]
_SIZES = (16, 16, 16, 5, 33, 16, 7, 2, 9, 12, 40, 3, 1, 6)


def _model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for p, w in zip(model.parameters(), _W):
            p.copy_(lib.tensor(w))
    return model


def _batches(lib):
    rng = np.random.default_rng(1)
    return [(lib.tensor(rng.standard_normal((n, 4)).astype(np.float32)),
             lib.tensor(rng.standard_normal((n, 2)).astype(np.float32))) for n in _SIZES]


def _step(model, opt, loss_fn):
    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def _train(lib, compile_it):
    model = _model(lib)
    opt = lib.optim.Adam(model.parameters(), lr=0.01)

    step = _step(model, opt, lib.nn.functional.mse_loss)
    run = compile_it(step) if compile_it else step
    losses = [run(x, y).item() for x, y in _batches(lib)]
    return losses, [p.detach().numpy() for p in model.parameters()], run


def test_one_trace_serves_every_batch_size(torch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        losses, params, run = _train(tapegrad, lambda f: tapegrad.compile(f, dynamic=True))
    # (XLA still compiles once per size, which the per-shape compile warning says; the function itself
    # never reaches its recompile limit)
    assert not [w for w in caught if "recompile limit" in str(w.message)]
    assert [w for w in caught if "8 different input shapes" in str(w.message)]
    theirs, their_params, _ = _train(torch, None)
    np.testing.assert_allclose(losses, theirs, rtol=2e-5, atol=1e-6)
    for p, q in zip(params, their_params):
        np.testing.assert_allclose(p, q, rtol=2e-5, atol=1e-6)
    compiled = run._compiled
    assert compiled.symbolic_failed is None
    # the first call runs eagerly (Adam creates its state), then one program for every size >= 2 and one
    # for the size 1, which stays a size (it broadcasts)
    assert len(compiled.programs) <= 3 < len(set(_SIZES))
    # XLA needs concrete shapes: a size met before compiles nothing, a new one once
    compiles = []
    for n in (16, 50, 50):
        before = tapegrad.autograd.backward_cache_info()["compiles"]
        run(tapegrad.randn(n, 4), tapegrad.randn(n, 2)).item()
        compiles.append(tapegrad.autograd.backward_cache_info()["compiles"] - before)
    assert compiles == [0, 1, 0] and len(compiled.programs) <= 3


def test_without_dynamic_each_size_is_a_program_up_to_the_limit():
    with pytest.warns(RecompileWarning, match="recompile limit"):
        _, _, run = _train(tapegrad, tapegrad.compile)
    assert len(run._compiled.programs) > 3


def test_a_function_that_reads_a_size_is_traced_per_size(torch):
    results = {}
    for lib in (tapegrad, torch):
        model = _model(lib)

        def evaluate(x):
            out = model(x)
            if x.shape[0] > 8:   # a branch on a size: no symbol can stand for it
                out = out * 2
            return out.sum(), x.shape[0]
        run = tapegrad.compile(evaluate, dynamic=True) if lib is tapegrad else evaluate
        with lib.no_grad():
            results[lib] = [(run(x)[0].item(), run(x)[1]) for x, _ in _batches(lib)[:8]]
        if lib is tapegrad:
            assert run._compiled.symbolic_failed is not None
    np.testing.assert_allclose(np.array(results[tapegrad]), np.array(results[torch]), rtol=1e-5, atol=1e-6)
    assert all(type(n) is int for _, n in results[tapegrad])


def _cnn(lib, dropout):
    lib.manual_seed(0)
    layers = [lib.nn.Conv2d(1, 4, 3, padding=1), lib.nn.BatchNorm2d(4), lib.nn.ReLU()]
    layers += [lib.nn.Dropout(0.25)] if dropout else []
    return lib.nn.Sequential(*layers, lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 3))


@pytest.mark.parametrize("dropout", [False, True], ids=["batchnorm", "batchnorm_dropout"])
def test_a_cnn_with_batchnorm_over_changing_batch_sizes(torch, dropout):
    """BatchNorm's statistics and cross_entropy's target check under a symbolic batch; dropout draws from
    PyTorch's CPU stream as many numbers as the batch has elements, so that step is traced per size."""
    state, results = None, {}
    rng = np.random.default_rng(2)
    data = [(rng.standard_normal((n, 1, 8, 8)).astype(np.float32), rng.integers(0, 3, n))
            for n in (8, 8, 8, 5, 12, 3, 20, 5)]
    for lib in (tapegrad, torch):
        model = _cnn(lib, dropout)
        if state is None:
            state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        with lib.no_grad():
            for k, v in model.state_dict().items():
                v.copy_(lib.tensor(state[k]))
        opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        step = _step(model, opt, lib.nn.functional.cross_entropy)
        run = tapegrad.compile(step, dynamic=True) if lib is tapegrad else step
        lib.manual_seed(5)
        losses = [run(lib.tensor(x), lib.tensor(y)).item() for x, y in data]
        results[lib] = (losses, {k: v.detach().numpy() for k, v in model.state_dict().items()})
        if lib is tapegrad:
            failed = run._compiled.symbolic_failed
            assert (failed is not None) if dropout else failed is None
            if not dropout:
                assert len(run._compiled.programs) <= 2
            with pytest.raises(IndexError, match="Target 5 is out of bounds"):
                run(lib.randn(6, 1, 8, 8), lib.tensor([0, 1, 2, 5, 0, 1]))
    np.testing.assert_allclose(results[tapegrad][0], results[torch][0], rtol=1e-4, atol=1e-5)
    for k, v in results[torch][1].items():
        np.testing.assert_allclose(results[tapegrad][1][k], v, rtol=1e-4, atol=1e-5, err_msg=k)
