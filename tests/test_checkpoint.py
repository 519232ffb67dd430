"""utils.checkpoint: the same gradients as without it (and as PyTorch), random draws replayed."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, fold_repr


def _model(lib, dropout=0.0):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Dropout(dropout), lib.nn.Linear(8, 8),
                              lib.nn.Tanh(), lib.nn.Linear(8, 2))
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)) * 0.5, dtype=lib.float32))
    return model


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_checkpointed_gradients_match_pytorch(torch, use_reentrant):
    def build(lib):
        model = _model(lib)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=lib.float32, requires_grad=True)
        from importlib import import_module
        ckpt = import_module(lib.__name__ + ".utils.checkpoint")
        h = ckpt.checkpoint(lambda v: model[1](model[0](v)), x, use_reentrant=use_reentrant)
        out = ckpt.checkpoint_sequential(model[2:], 2, h, use_reentrant=use_reentrant)
        (out ** 2).sum().backward()
        return [out, x.grad] + [p.grad for p in model.parameters()]
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_dropout_mask_is_replayed_in_the_rerun():
    from tapegrad.utils.checkpoint import checkpoint
    grads = []
    for checkpointed in (False, True):
        model = _model(tapegrad, dropout=0.5)
        model.train()
        x = tapegrad.ones(5, 4, requires_grad=True)
        tapegrad.manual_seed(7)
        out = checkpoint(model, x, use_reentrant=True) if checkpointed else model(x)
        out.sum().backward()
        grads.append([x.grad.numpy()] + [p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_warnings_and_grad_fn_as_pytorch(torch):
    def build(lib):
        from importlib import import_module
        ckpt = import_module(lib.__name__ + ".utils.checkpoint")
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = ckpt.checkpoint(lambda v: v * 2, x)
        shown = fold_repr(y.grad_fn)   # (PyTorch's CheckpointFunction is a Python Function: its module shows)
        return y.grad_fn.name(), shown, [str(w.message)[:60] for w in caught]
    ours, theirs = both(build)
    assert ours == theirs


def test_traceable_region_recomputes_inside_the_compiled_step():
    from tapegrad.utils.checkpoint import checkpoint, checkpoint_sequential
    model = _model(tapegrad)
    x = tapegrad.ones(3, 4, requires_grad=True)
    tail = model[2:]
    for step in range(4):
        if step == 3:
            before = tapegrad.autograd.backward_cache_info()
        for p in [x, *model.parameters()]:
            p.grad = None
        h = checkpoint(lambda v: model[1](model[0](v)), x, use_reentrant=False)
        out = checkpoint_sequential(tail, 2, h, use_reentrant=False)
        out.sum().backward()
    after = tapegrad.autograd.backward_cache_info()
    assert h.grad_fn.name() == "CheckpointFunctionBackward"
    assert after["compiles"] == before["compiles"]   # one step program, found again
    assert after["hits"] > before["hits"]


def test_parameters_get_gradients_when_no_input_requires_grad(torch):
    def build(lib):
        from importlib import import_module
        ckpt = import_module(lib.__name__ + ".utils.checkpoint")
        lin = _model(lib)[0]
        ckpt.checkpoint(lin, lib.ones(1, 4), use_reentrant=False).sum().backward()   # traced region
        first = lin.weight.grad.clone()
        ckpt.checkpoint(lambda v: lib.nn.functional.dropout(lin(v), 0.0), lib.ones(1, 4),   # rerun in Python
                        use_reentrant=False).sum().backward()
        return first, lin.weight.grad
    for a, b in zip(*both(build)):
        assert_close(a, b)
