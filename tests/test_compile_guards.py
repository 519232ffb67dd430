"""tapegrad.compile's steady-call guard: whatever changes between calls is seen.

A steady compiled call walks only its arguments and checks the rest of the state by identity against
what the previous call left (`_compile/_guard.py`). Each test runs a training step compiled in tapegrad
and eagerly in PyTorch from the same weights, until the guard is in use, then changes one thing in both
worlds (a parameter replaced, `.data` assigned, requires_grad flipped, a learning rate or weight decay
edited, train/eval, a global rebound, a Python value the step branches on, grads set to None or to
zeros...) and checks that every later call's loss, parameters, grads and optimizer state still match.
"""
import types

import numpy as np
import pytest

import tapegrad
from conftest import to_torch
from tapegrad._compile import _function, _walk

_RNG = np.random.default_rng(0)
_W = {"0.weight": _RNG.standard_normal((8, 4)).astype(np.float32) * 0.5,
      "0.bias": _RNG.standard_normal(8).astype(np.float32) * 0.1,
      "2.weight": _RNG.standard_normal((2, 8)).astype(np.float32) * 0.5,
      "2.bias": _RNG.standard_normal(2).astype(np.float32) * 0.1}
_X = _RNG.standard_normal((6, 4)).astype(np.float32)
_Y = _RNG.standard_normal((6, 2)).astype(np.float32)
_NEW = _RNG.standard_normal((2, 8)).astype(np.float32)


def _mlp(lib, middle=None):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), middle or lib.nn.Tanh(), lib.nn.Linear(8, 2))
    with lib.no_grad():
        for name, p in model.named_parameters():
            if name in _W:
                p.copy_(lib.tensor(_W[name]))
    return model


def _training(lib, opt_name="Adam", zero_grad=True, middle=None, **kwargs):
    """A world: an MLP, its optimizer, and a step (forward, backward, update) over a new batch each call."""
    w = types.SimpleNamespace(lib=lib, model=_mlp(lib, middle() if middle else None))
    w.opt = getattr(lib.optim, opt_name)(w.model.parameters(), **(kwargs or dict(lr=0.05)))

    def step(x, y):
        if zero_grad:
            w.opt.zero_grad()
        loss = lib.nn.functional.mse_loss(w.model(x), y)
        loss.backward()
        w.opt.step()
        return loss
    w.step = step
    w.call = lambda step: step(lib.tensor(_X), lib.tensor(_Y))
    return w


def _same(a, b, what):
    assert (a is None) == (b is None), what
    if a is not None:
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=what)


def _compare(ours, theirs):
    for (name, p), q in zip(ours.model.named_parameters(), theirs.model.parameters()):
        _same(p, q, name)
        _same(p.grad, q.grad, name + ".grad")
        state = ours.opt.state.get(p, {})
        for k, v in theirs.opt.state.get(q, {}).items():
            _same(state[k], v, f"{name} {k}")
    for (name, b), c in zip(ours.model.named_buffers(), theirs.model.buffers()):
        _same(b, c, name)


def _run(torch, build, changes, calls=2, every=False):
    """`build(lib)` in both libraries, tapegrad's step compiled; three steady calls, then each change in
    turn, in both worlds, followed by `calls` calls (with `every`, the change comes before each of them);
    every call's result, parameters, grads and optimizer state compared."""
    ours, theirs = build(tapegrad), build(torch)
    run = tapegrad.compile(ours.step)
    compiled = run._compiled
    for phase, change in enumerate([None] + list(changes)):
        for i in range(calls if phase else 3):
            if phase and (every or i == 0):
                change(ours)
                change(theirs)
            what = f"call {i} after {getattr(change, '__name__', change)}" if phase else "steady call"
            _same(ours.call(run), theirs.call(theirs.step), what)
            _compare(ours, theirs)
        if phase == 0:
            assert compiled.guard is not None, "the steady call's guard is in use"
    assert compiled.broken is None and compiled.compiled >= 1
    return compiled


def _replace_parameter(w):
    w.model[2].weight = w.lib.nn.Parameter(w.lib.tensor(_NEW))


def _assign_data(w):
    w.model[2].weight.data = w.lib.tensor(_NEW)


def _flip_requires_grad(w):
    w.model[0].bias.requires_grad_(False)


def _edit_lr(w):
    w.opt.param_groups[0]["lr"] = 0.2


def _edit_weight_decay(w):
    w.opt.param_groups[0]["weight_decay"] = 0.1


def _write_in_place(w):
    with w.lib.no_grad():
        w.model[0].weight.mul_(0.5)


def _replace_optimizer_state(w):
    p = w.model[0].weight
    w.opt.state[p]["exp_avg"] = w.lib.ones_like(p)


def _load_optimizer_state(w):
    state = w.opt.state_dict()
    state["param_groups"][0]["lr"] = 0.01
    w.opt.load_state_dict(state)


def test_changes_to_parameters_grads_and_optimizer_are_seen(torch):
    _run(torch, _training, [_write_in_place, _edit_lr, _assign_data, _replace_optimizer_state,
                            _load_optimizer_state, _replace_parameter, _flip_requires_grad, _edit_weight_decay])


def test_train_and_eval_switch_batchnorm(torch):
    # SGD: the bias before BatchNorm gets a zero gradient up to rounding, which Adam would scale up
    build = lambda lib: _training(lib, "SGD", middle=lambda: lib.nn.BatchNorm1d(8), lr=0.05, momentum=0.9)
    _run(torch, build, [lambda w: w.model.train(not w.model.training)], calls=3, every=True)


def test_grads_set_to_none_or_zeros_between_accumulating_calls(torch):
    def set_to_none(w):
        w.opt.zero_grad(set_to_none=True)

    def zeros(w):
        w.opt.zero_grad(set_to_none=False)
    build = lambda lib: _training(lib, "SGD", zero_grad=False, lr=0.05, momentum=0.9)
    _run(torch, build, [set_to_none, zeros], every=True)


_STEP_SOURCE = """
def step(x, y):
    loss = lib.nn.functional.mse_loss(model(x) * cfg.scale + OFFSET, y)
    loss = loss + sum(p.abs().sum() for p in model.parameters()) * RATES["l1"]
    if SQUARE:
        loss = loss * loss
    for t in EXTRA:
        loss = loss + (t * model[0].bias).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss
"""


def _with_globals(lib):
    """A step whose module globals (its own namespace) hold a tensor, a flag, a dict, a list and an object."""
    w = _training(lib, "SGD", lr=0.05)
    w.globals = dict(__name__="stepmodule", lib=lib, model=w.model, opt=w.opt, OFFSET=lib.tensor(0.5), SQUARE=False,
                     RATES={"l1": 0.01}, EXTRA=[], cfg=types.SimpleNamespace(scale=1.0), sum=sum)
    exec(_STEP_SOURCE, w.globals)
    w.step = w.globals["step"]
    return w


def test_changed_globals_are_seen(torch):
    def rebind_tensor(w):
        w.globals["OFFSET"] = w.lib.tensor(-1.5)

    def flip_flag(w):   # a Python value the step branches on
        w.globals["SQUARE"] = True

    def edit_dict(w):
        w.globals["RATES"]["l1"] = 0.5

    def edit_attribute(w):
        w.globals["cfg"].scale = 3.0

    def append_tensor(w):
        w.globals["EXTRA"].append(w.lib.ones(8))

    def append_view_of_parameter(w):   # a tensor sharing a parameter's storage
        w.globals["EXTRA"].append(w.model[2].weight[0].detach())
    _run(torch, _with_globals, [rebind_tensor, edit_dict, edit_attribute, append_tensor, append_view_of_parameter,
                                flip_flag])


def test_a_rebound_closure_variable_is_seen(torch):
    def build(lib):
        w = _training(lib)
        scale = 1.0

        def step(x, y):
            w.opt.zero_grad()
            loss = lib.nn.functional.mse_loss(w.model(x) * scale, y)
            loss.backward()
            w.opt.step()
            return loss

        def rescale():
            nonlocal scale
            scale = 2.0
        w.step, w.rescale = step, rescale
        return w
    _run(torch, build, [lambda w: w.rescale()])


def test_an_argument_that_is_also_state(torch):
    """A parameter passed as an argument after new tensors were: the walk of the arguments meets the state."""
    def build(lib):
        model = _mlp(lib)
        opt = lib.optim.Adam(model.parameters(), lr=0.05)

        def step(x, y, extra):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y) + (extra * extra).sum()
            loss.backward()
            opt.step()
            return loss
        w = types.SimpleNamespace(lib=lib, model=model, opt=opt, step=step, extra=None)
        w.call = lambda step: step(lib.tensor(_X), lib.tensor(_Y),
                                   lib.ones(8) if w.extra is None else w.extra)
        return w

    def change(w):
        w.extra = w.model[0].bias
    _run(torch, build, [change])


def test_a_steady_call_walks_only_its_arguments(monkeypatch):
    full = []

    class Counted(_walk.Walk):
        def __init__(self, roots, split=None, dynamic=False):
            full.append(split)
            super().__init__(roots, split, dynamic)
    monkeypatch.setattr(_function._walk, "Walk", Counted)
    w = _training(tapegrad)
    step = tapegrad.compile(w.step)
    for _ in range(6):
        step(tapegrad.tensor(_X), tapegrad.tensor(_Y))   # new batch tensors every call
    # the first call runs eagerly (creates Adam's state), the second traces; the others are steady
    assert len(full) <= 3, full
    assert step._compiled.compiled == 1


def test_a_clone_taken_between_steady_calls_keeps_its_values():
    """The program donates (updates in place) the parameters it writes; a clone must keep its values."""
    w = _training(tapegrad)
    step = tapegrad.compile(w.step)
    for _ in range(3):
        w.call(step)
    clone = w.model[0].weight.clone()
    expected = clone.detach().numpy().copy()
    w.call(step)
    assert step._compiled.guard is not None
    np.testing.assert_array_equal(clone.detach().numpy(), expected)
    assert not np.array_equal(w.model[0].weight.detach().numpy(), expected)   # the step did update it


_SCRIPT = """
def step(x, y):
    opt.zero_grad()
    loss = lib.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()          # `step` is also this function's global name: an attribute, not a global it reads
    return loss


def outer(x, y):
    return step(x, y)   # a compiled function calling another: its programs are not state
"""


def test_a_script_level_step_that_calls_opt_step_compiles_once(torch):
    losses = {}
    for lib in (tapegrad, torch):
        model = _mlp(lib)
        namespace = {"__name__": "train_script", "lib": lib, "model": model,
                     "opt": lib.optim.SGD(model.parameters(), lr=0.1)}
        exec(_SCRIPT, namespace)
        if lib is tapegrad:
            namespace["step"] = tapegrad.compile(namespace["step"])
            outer = tapegrad.compile(namespace["outer"])
        else:
            outer = namespace["outer"]
        x, y = lib.tensor(_X), lib.tensor(_Y)
        losses[lib] = [namespace["step"](x, y).item() for _ in range(12)] + [outer(x, y).item() for _ in range(6)]
        if lib is tapegrad:
            assert len(namespace["step"]._compiled.programs) <= 2   # (the first call runs eagerly: Adam-less SGD)
            assert len(outer._compiled.programs) <= 2
            assert namespace["step"]._compiled.broken is None and outer._compiled.broken is None   # no graph break
    np.testing.assert_allclose(losses[tapegrad], losses[torch], rtol=1e-5)


def test_code_run_by_exec_is_user_code(torch):
    """A function exec() makes with globals of its own has no module (__module__ is None): its globals are the
    step's state as any user function's, not a library's. (The compiled step wrote a traced value into w.grad.)"""
    code = """
w = lib.tensor([1., 2.], requires_grad=True)
w.register_hook(lambda g: g * 10)
b = lib.tensor([3.], requires_grad=True)

@lib.compile(backend="eager")
def step(x):
    loss = (w * x).sum() + b.sum()
    loss.backward(inputs=[w])
    return loss
for i in range(3):
    step(lib.tensor([1., float(i)]))
"""
    found = []
    for lib in (tapegrad, torch):
        env = {"lib": lib}
        exec(code, env)
        assert env["step"].__module__ is None
        found.append((env["w"].grad.tolist(), env["b"].grad))
    assert found[0] == found[1]
