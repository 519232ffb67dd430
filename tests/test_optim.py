"""Optimizers against PyTorch: 50-step trajectories from the same weights, state_dict layout and round-trips,
one compiled call per step."""
import copy

import numpy as np
import pytest
import torch

import tapegrad
import tapegrad.optim as optim

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 4))
Y = RNG.standard_normal((16, 2))
INIT = [RNG.standard_normal((4, 3)) * 0.5, RNG.standard_normal(3) * 0.1, RNG.standard_normal((3, 2)) * 0.5,
        RNG.standard_normal(2) * 0.1]


def make(lib, dtype):
    params = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in INIT]
    x, y = lib.tensor(X, dtype=dtype), lib.tensor(Y, dtype=dtype)

    def loss_fn():
        w1, b1, w2, b2 = params
        return (((x @ w1 + b1).tanh() @ w2 + b2 - y) ** 2).mean()
    return params, loss_fn


def run(lib, name, kwargs, steps=50, dtype="float64", groups=False):
    params, loss_fn = make(lib, getattr(lib, dtype))
    spec = [{"params": params[:2]}, {"params": params[2:], "lr": kwargs.get("lr", 0.01) * 0.5}] if groups else params
    opt = getattr(lib.optim, name)(spec, **kwargs)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses), [p.detach().numpy() for p in params], opt


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.005, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, weight_decay=0.05, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, maximize=True, centered=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.01, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.01, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.01, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.01, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.01, maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05))),
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("Adafactor", dict(lr=0.05)),
    ("Adafactor", dict(lr=0.02, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.01, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name, kwargs):
    want, want_params, _ = run(torch, name, kwargs)
    got, got_params, _ = run(tapegrad, name, kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for g, w in zip(got_params, want_params):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "NAdam", "ASGD", "Rprop", "Adafactor"])
def test_float32_and_param_groups(name):
    kwargs = dict(lr=0.01, momentum=0.9) if name in ("SGD", "RMSprop") else dict(lr=0.01)
    want, want_params, _ = run(torch, name, kwargs, steps=20, dtype="float32", groups=True)
    got, got_params, _ = run(tapegrad, name, kwargs, steps=20, dtype="float32", groups=True)
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for g, w in zip(got_params, want_params):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_complex_params_match_torch():
    def go(lib):
        z = lib.tensor(np.array([1 + 2j, -0.5 + 0.3j]), requires_grad=True)
        opt = lib.optim.Adam([z], lr=0.1)
        for _ in range(5):
            opt.zero_grad()
            loss = (z * z.conj()).real.sum() if lib is torch else None
            if lib is tapegrad:
                # |z|^2 as a real function of the real and imaginary parts; its gradient is 2z (PyTorch convention).
                z.grad = tapegrad.tensor(2 * z.detach().numpy())
            else:
                loss.backward()
            opt.step()
        return z.detach().numpy()
    np.testing.assert_allclose(go(tapegrad), go(torch), rtol=1e-6)


def _closure_run(lib, kwargs, steps=3):
    params, loss_fn = make(lib, lib.float64)
    opt = lib.optim.LBFGS(params, **kwargs)
    losses = []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        losses.append(opt.step(closure).item())
    return np.array(losses), [p.detach().numpy() for p in params], opt


@pytest.mark.parametrize("kwargs", [dict(lr=0.5, max_iter=5), dict(lr=1, history_size=3, line_search_fn="strong_wolfe")])
def test_lbfgs_matches_torch(kwargs):
    want, want_params, topt = _closure_run(torch, kwargs)
    got, got_params, gopt = _closure_run(tapegrad, kwargs)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for g, w in zip(got_params, want_params):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-8)
    tstate, gstate = topt.state_dict()["state"][0], gopt.state_dict()["state"][0]
    assert gstate["func_evals"] == tstate["func_evals"] and gstate["n_iter"] == tstate["n_iter"]
    # the step size stays the number it was given (an int lr: an int t), vectors and their scalars tensors
    assert {k: type(v).__name__ for k, v in gstate.items()} == {k: type(v).__name__ for k, v in tstate.items()}
    if not isinstance(tstate["t"], torch.Tensor):
        assert gstate["t"] == tstate["t"]


def test_a_tensor_given_as_params_is_named_by_its_type():
    with pytest.raises(TypeError) as want:
        torch.optim.SGD(torch.zeros(2, dtype=torch.float64), lr=0.1)
    with pytest.raises(TypeError) as got:
        optim.SGD(tapegrad.zeros(2, dtype=tapegrad.float64), lr=0.1)
    assert str(got.value).startswith(str(want.value))


def test_closure_runs_under_enable_grad_and_returns_loss():
    params, loss_fn = make(tapegrad, tapegrad.float64)
    opt = optim.SGD(params, lr=0.1)
    seen = []

    def closure():
        seen.append(tapegrad.is_grad_enabled())
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    with tapegrad.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and isinstance(loss, tapegrad.Tensor)


# ---- state_dict --------------------------------------------------------------------------------------

def _to_numpy(obj):
    if isinstance(obj, (torch.Tensor, tapegrad.Tensor)):
        return (str(obj.dtype).split(".")[-1], np.asarray(obj.detach().numpy()))
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_numpy(v) for v in obj)
    return obj


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if "maximize" not in c[1]][::2],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_state_dict_layout_matches_torch(name, kwargs):
    *_, topt = run(torch, name, kwargs, steps=3)
    *_, gopt = run(tapegrad, name, kwargs, steps=3)
    want, got = _to_numpy(topt.state_dict()), _to_numpy(gopt.state_dict())
    assert list(got["param_groups"][0]) == list(want["param_groups"][0])
    assert got["param_groups"] == want["param_groups"]
    assert list(got["state"]) == list(want["state"])
    for i in want["state"]:
        assert list(got["state"][i]) == list(want["state"][i])
        for key, (wdtype, wvalue) in want["state"][i].items():
            gdtype, gvalue = got["state"][i][key]
            assert gdtype == wdtype, key
            np.testing.assert_allclose(gvalue, wvalue, rtol=1e-6, atol=1e-10)


def _torch_to_tapegrad(obj):
    if isinstance(obj, torch.Tensor):
        return tapegrad.tensor(obj.numpy())
    if isinstance(obj, dict):
        return {k: _torch_to_tapegrad(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_torch_to_tapegrad(v) for v in obj)
    return obj


@pytest.mark.parametrize("name,kwargs", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                         ("NAdam", dict(lr=0.01)), ("Adagrad", dict(lr=0.1))])
def test_state_dict_round_trip_continues_the_same_trajectory(name, kwargs):
    straight, straight_params, _ = run(tapegrad, name, kwargs, steps=20)

    params, loss_fn = make(tapegrad, tapegrad.float64)
    opt = getattr(optim, name)(params, **kwargs)

    def train(opt, n):
        out = []
        for _ in range(n):
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            opt.step()
            out.append(loss.item())
        return out
    first = train(opt, 10)
    saved = copy.deepcopy(opt.state_dict())
    fresh = getattr(optim, name)(params, **kwargs)
    fresh.load_state_dict(saved)
    second = train(fresh, 10)
    np.testing.assert_allclose(first + second, straight, rtol=1e-12)


def test_torch_state_dict_loads_and_continues_like_torch():
    tparams, tloss = make(torch, torch.float64)
    topt = torch.optim.Adam(tparams, lr=0.01)
    for _ in range(5):
        topt.zero_grad()
        tloss().backward()
        topt.step()
    gparams, gloss = make(tapegrad, tapegrad.float64)
    for g, t in zip(gparams, tparams):
        with tapegrad.no_grad():
            g.copy_(tapegrad.tensor(t.detach().numpy()))
    gopt = optim.Adam(gparams, lr=0.01)
    gopt.load_state_dict(_torch_to_tapegrad(topt.state_dict()))
    for _ in range(5):
        topt.zero_grad()
        want = tloss()
        want.backward()
        topt.step()
        gopt.zero_grad()
        got = gloss()
        got.backward()
        gopt.step()
        assert got.item() == pytest.approx(want.item(), rel=1e-10)


def test_state_dict_errors():
    params, _ = make(tapegrad, tapegrad.float64)
    opt = optim.SGD(params, lr=0.1)
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": params[:2]}, {"params": params[2:]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD(params[:2], lr=0.1).load_state_dict(sd)


# ---- construction, zero_grad, param groups --------------------------------------------------------------

def test_constructor_errors_match_torch():
    p = tapegrad.zeros(2, requires_grad=True)
    tp = torch.zeros(2, requires_grad=True)
    for call in [lambda lib, p: lib.optim.SGD([p], lr=-1), lambda lib, p: lib.optim.SGD([p], lr=0.1, nesterov=True),
                 lambda lib, p: lib.optim.Adam([p], betas=(1.0, 0.9)), lambda lib, p: lib.optim.SGD([], lr=0.1),
                 lambda lib, p: lib.optim.SGD(p, lr=0.1), lambda lib, p: lib.optim.SGD([p, p * 2], lr=0.1),
                 lambda lib, p: lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
                 lambda lib, p: lib.optim.LBFGS([{"params": [p]}, {"params": []}])]:
        with pytest.raises(Exception) as want:
            call(torch, tp)
        with pytest.raises(type(want.value), match=str(want.value).split(".")[0][:40].replace("(", r"\(")):
            call(tapegrad, p)


def test_zero_grad_set_to_none_and_zero_in_place():
    params, loss_fn = make(tapegrad, tapegrad.float64)
    opt = optim.SGD(params, lr=0.1)
    loss_fn().backward()
    g = params[0].grad
    opt.zero_grad(set_to_none=False)
    assert params[0].grad is g and not g.numpy().any()
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_add_param_group_and_named_params():
    a, b = tapegrad.zeros(2, requires_grad=True), tapegrad.zeros(3, requires_grad=True)
    opt = optim.Adam([("a", a)], lr=0.1)
    opt.add_param_group({"params": [("b", b)], "lr": 0.5})
    groups = opt.state_dict()["param_groups"]
    assert groups[0]["param_names"] == ["a"] and groups[1]["params"] == [1] and groups[1]["lr"] == 0.5
    assert groups[1]["betas"] == (0.9, 0.999)
    assert repr(opt).startswith("Adam (\nParameter Group 0\n    amsgrad: False")


def test_params_without_grad_are_skipped():
    a, b = tapegrad.ones(2, requires_grad=True), tapegrad.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b.tolist() == [1.0, 1.0] and b not in opt.state and a in opt.state


def test_step_writes_in_place_and_bumps_version():
    a = tapegrad.ones(2, requires_grad=True)
    alias = a.detach()
    opt = optim.SGD([a], lr=0.5)
    a.sum().backward()
    v = a._version
    opt.step()
    assert a._version == v + 1 and alias.tolist() == [0.5, 0.5]


def test_step_hooks():
    a = tapegrad.ones(2, requires_grad=True)
    opt = optim.SGD([a], lr=0.5)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    a.sum().backward()
    opt.step()
    h1.remove()
    opt.step()
    assert calls == ["pre", "post", "post"]


# ---- compiled calls -------------------------------------------------------------------------------------

@pytest.mark.usefixtures("no_program_rent")
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "NAdam"])
def test_one_program_per_step_over_twenty_params(name):
    """The update of 20 tensors runs inside the step's one XLA program; lr changes compile nothing."""
    from xla_events import counting
    tapegrad.autograd.clear_backward_cache()
    params = [tapegrad.randn(3, 2 + i % 3, requires_grad=True) for i in range(20)]
    opt = getattr(optim, name)(params, lr=0.01, **({"momentum": 0.9} if name == "SGD" else {}))
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def step():
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        opt.step()
        sched.step()
    with counting() as xla:
        # steps 1-3 differ (no grads yet; the first update creates state; the second is the first
        # regular one); the fourth repeats the third and compiles it
        for _ in range(4):
            step()
        before = (xla.compiles, xla.executions)
        for _ in range(5):
            step()
        after = (xla.compiles, xla.executions)
    assert after[0] == before[0], "lr changes (StepLR) must not recompile"
    assert after[1] - before[1] == 5, "one XLA program per step for all 20 tensors"
    assert optim.Optimizer.step_cache_info()["calls"] >= 8


@pytest.mark.parametrize("name,kwargs,message", [
    ("Adafactor", dict(beta2_decay=0.5), "beta2_decay should be <= 0"),
    ("Adafactor", dict(d=0.5), "Clipping threshold d should be >= 1"),
    ("Adafactor", dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0"),
    ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values"),
    ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value"),
])
def test_new_optimizers_refuse_bad_hyperparameters_as_torch(name, kwargs, message):
    for lib in (tapegrad, torch):
        with pytest.raises(ValueError, match=message):
            getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **kwargs)


def test_adafactor_refuses_complex_parameters_as_torch():
    for lib in (tapegrad, torch):
        z = lib.tensor([1 + 2j], requires_grad=True)
        z.grad = lib.tensor([1 + 0j])
        with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
            lib.optim.Adafactor([z]).step()


@pytest.mark.parametrize("foreach", [None, True])
@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adadelta", "ASGD", "Rprop"])
def test_capturable_is_refused_off_an_accelerator_as_torch(name, foreach):
    """PyTorch's capturable optimizers refuse CPU parameters at their first step, naming the devices their
    single-tensor or foreach path supports."""
    def message(lib):
        p = lib.zeros(2, requires_grad=True)
        p.grad = lib.ones(2)
        opt = getattr(lib.optim, name)([p], lr=0.1, capturable=True, foreach=foreach)
        with pytest.raises(AssertionError) as caught:
            opt.step()
        return str(caught.value), p.tolist()
    assert message(tapegrad) == message(torch)
