"""optim.swa_utils against PyTorch: AveragedModel (SWA and EMA, per tensor or per list, with buffers),
SWALR's annealing, update_bn's recomputed statistics, state_dict keys and the refusals."""
import numpy as np
import pytest
import torch

import tapegrad


def _averaging(lib, kind):
    swa = lib.optim.swa_utils
    return {"swa": {}, "ema_lists": dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)),
            "ema": dict(avg_fn=swa.get_ema_avg_fn(0.8)), "swa_per_tensor": dict(avg_fn=swa.get_swa_avg_fn()),
            "buffers_too": dict(multi_avg_fn=swa.get_ema_multi_avg_fn(0.5), use_buffers=True)}[kind]


def _run(lib, kind, strategy):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.ReLU(), lib.nn.Linear(6, 2))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.tensor(np.linspace(-0.5, 0.5, p.numel()).reshape(tuple(p.shape)) * (i + 1), dtype=p.dtype))
    averaged = lib.optim.swa_utils.AveragedModel(model, **_averaging(lib, kind))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
    x = lib.tensor(np.linspace(-1, 1, 32).reshape(8, 4), dtype=lib.float32)
    lrs = []
    for _ in range(5):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
        averaged.update_parameters(model)
    lib.optim.swa_utils.update_bn([x[:4], (x[4:],)], averaged)
    return (averaged(x).detach().numpy(), int(averaged.n_averaged), lrs,
            [b.detach().numpy() for b in averaged.module.buffers()], sorted(averaged.state_dict()),
            sorted(sched.state_dict()))


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("kind", ["swa", "ema_lists", "ema", "swa_per_tensor", "buffers_too"])
def test_averaged_model_swalr_and_update_bn_as_pytorch(kind, strategy):
    ours, theirs = _run(tapegrad, kind, strategy), _run(torch, kind, strategy)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert ours[1] == theirs[1]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)
    for a, b in zip(ours[3], theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[4:] == theirs[4:]


def test_swa_utils_refuse_as_pytorch():
    for lib in (tapegrad, torch):
        swa = lib.optim.swa_utils
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            swa.get_ema_avg_fn(1.5)
        with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
            swa.AveragedModel(lib.nn.Linear(2, 2), avg_fn=swa.get_swa_avg_fn(), multi_avg_fn=swa.get_swa_multi_avg_fn())
        opt = lib.optim.SGD(lib.nn.Linear(2, 2).parameters(), lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
            swa.SWALR(opt, 0.05, anneal_strategy="step")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
            swa.SWALR(opt, 0.05, anneal_epochs=-1)
