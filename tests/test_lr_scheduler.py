"""Learning-rate schedulers: the lr sequence of every scheduler against PyTorch, and state_dict."""
import numpy as np
import pytest
import torch

import tapegrad

SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=30)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], total_steps=30, anneal_strategy="linear", three_phase=True)),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e + 0.01 * e)),
    ("LinearLR", dict(start_factor=0.25, end_factor=0.9, total_iters=6)),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.97)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2, eta_min=0.01)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5, mode="triangular2",
                      base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=lambda x: 1 / (1 + x),
                      scale_mode="iterations", cycle_momentum=False)),
]


def _optimizer(lib, name="SGD"):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    kwargs = dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1)
    return getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.05}], **kwargs)


def _lrs(lib, name, kwargs, steps=30, opt_name="SGD"):
    opt = _optimizer(lib, opt_name)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    out = [sched.get_last_lr()]
    momenta = []
    for _ in range(steps - 1):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
        momenta.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return np.array(out), momenta


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_lr_sequence_matches_torch(name, kwargs, opt_name):
    want, want_m = _lrs(torch, name, kwargs, opt_name=opt_name)
    got, got_m = _lrs(tapegrad, name, kwargs, opt_name=opt_name)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    np.testing.assert_allclose(np.array(got_m, float), np.array(want_m, float), rtol=1e-13)


def test_sequential_lr_matches_torch():
    def run(lib):
        opt = _optimizer(lib)
        S = lib.optim.lr_scheduler
        sched = S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.1, total_iters=4),
                                     S.CosineAnnealingLR(opt, T_max=10), S.ExponentialLR(opt, gamma=0.9)],
                               milestones=[4, 12])
        out = [sched.get_last_lr()]
        for _ in range(20):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return np.array(out)
    np.testing.assert_allclose(run(tapegrad), run(torch), rtol=1e-13)


def test_chained_scheduler_matches_torch():
    def run(lib):
        opt = _optimizer(lib)
        S = lib.optim.lr_scheduler
        sched = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=3), S.ExponentialLR(opt, gamma=0.9)])
        out = []
        for _ in range(8):
            opt.step()
            sched.step()
            out.append(sched.get_last_lr())
        return np.array(out)
    np.testing.assert_allclose(run(tapegrad), run(torch), rtol=1e-13)


@pytest.mark.parametrize("kwargs", [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2,
                                                           threshold_mode="abs", min_lr=[0.02, 0.0])])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.7, 0.7, 0.7, 0.7, 0.7]

    def run(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        out = []
        for m in metrics:
            opt.step()
            sched.step(m)
            out.append(sched.get_last_lr())
        return np.array(out), sched.state_dict()
    got, got_sd = run(tapegrad)
    want, want_sd = run(torch)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert got_sd == want_sd


def test_closed_form_with_epoch_argument():
    def run(lib):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(5)
        return sched.get_last_lr()
    assert run(tapegrad) == run(torch)


def test_state_dict_round_trip_and_keys():
    def make(lib):
        opt = _optimizer(lib)
        return opt, lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    topt, tsched = make(torch)
    gopt, gsched = make(tapegrad)
    for _ in range(3):
        topt.step(), tsched.step(), gopt.step(), gsched.step()
    assert gsched.state_dict() == tsched.state_dict()
    opt2, sched2 = make(tapegrad)
    sched2.load_state_dict(gsched.state_dict())
    opt2.load_state_dict(gopt.state_dict())
    for _ in range(4):
        topt.step(), tsched.step(), opt2.step(), sched2.step()
        assert sched2.get_last_lr() == pytest.approx(tsched.get_last_lr(), rel=1e-13)


def test_warns_when_scheduler_steps_before_optimizer():
    opt = _optimizer(tapegrad)
    sched = tapegrad.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()


def test_errors_match_torch():
    for build in [lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 2, last_epoch=3),
                  lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, start_factor=0),
                  lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0),
                  lambda lib, o: lib.optim.lr_scheduler.StepLR(object(), 2)]:
        with pytest.raises(Exception) as want:
            build(torch, _optimizer(torch))
        with pytest.raises(type(want.value), match=str(want.value)[:30].replace("(", r"\(").replace("[", r"\[")):
            build(tapegrad, _optimizer(tapegrad))


def test_cyclic_lr_state_dict_and_refusals_as_torch():
    def run(lib):
        opt = _optimizer(lib, "Adam")
        sched = lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")
        for _ in range(4):
            opt.step()
            sched.step()
        state = sched.state_dict()
        again = lib.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")
        again.load_state_dict(state)
        opt.step()
        again.step()
        return sorted(state), state["last_epoch"], again.get_last_lr(), opt.param_groups[0]["betas"]
    assert run(tapegrad) == run(torch)
    for lib in (tapegrad, torch):
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            lib.optim.lr_scheduler.CyclicLR(_optimizer(lib), 0.01, 0.1, mode="saw")
        opt = lib.optim.Adagrad([lib.zeros(2, requires_grad=True)])
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)
