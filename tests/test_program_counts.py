"""What tapegrad says it compiled and ran equals what XLA did, and a steady training step is one program.

Counted from JAX's side (tests/xla_events.py): backend compile events and executions of compiled
executables. Four loops, as a user writes them: manual SGD, nn + SGD, nn + Adam, nn + Adam + .item().
"""
import pytest

import tapegrad
from tapegrad import nn, optim
from xla_events import counting

info = tapegrad.autograd.backward_cache_info


# The steps compile when they come back (no NumPy rent first): test_program_rent.py checks that the rent
# ends in the same one program per step.
pytestmark = pytest.mark.usefixtures("fresh_program_caches", "no_program_rent")


def _data():
    tapegrad.manual_seed(0)
    return tapegrad.randn(32, 8), tapegrad.randn(32, 1)


def _manual_sgd():
    x, y = _data()
    w1 = tapegrad.randn(8, 16, requires_grad=True)
    w2 = tapegrad.randn(16, 1, requires_grad=True)

    def step():
        loss = (((x @ w1).relu() @ w2 - y) ** 2).mean()
        loss.backward()
        with tapegrad.no_grad():
            for p in (w1, w2):
                p -= 0.01 * p.grad
                p.grad.zero_()
        return loss
    return step


def _module_loop(opt_class, read_loss, **opt_kwargs):
    x, y = _data()
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = opt_class(model.parameters(), lr=0.01, **opt_kwargs)
    loss_fn = nn.MSELoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if read_loss:
            loss.item()
        return loss
    return step


LOOPS = {
    "manual SGD": _manual_sgd,
    "nn + SGD": lambda: _module_loop(optim.SGD, False, momentum=0.9),
    "nn + Adam": lambda: _module_loop(optim.Adam, False),
    "nn + Adam + item()": lambda: _module_loop(optim.Adam, True),
}


@pytest.mark.parametrize("name", list(LOOPS))
def test_steady_step_is_one_program_and_counters_match_xla(name):
    step = LOOPS[name]()
    with counting() as xla:
        mine0 = info()
        for _ in range(4):
            step()
        settled = (xla.compiles, xla.executions, info())
        for _ in range(6):
            step()
        mine = info()
    compiles0, executions0, mine_settled = settled
    assert xla.compiles == compiles0, f"{name}: the steady step compiled again"
    assert xla.executions - executions0 == 6, f"{name}: {xla.executions - executions0} programs in 6 steps"
    # tapegrad's own counters report what XLA did, compiles and executions alike
    assert mine["compiles"] - mine0["compiles"] == xla.compiles
    assert mine["executions"] - mine0["executions"] == xla.executions
    assert mine["executions"] - mine_settled["executions"] == 6


def test_item_of_a_computed_scalar_runs_no_program():
    step = LOOPS["nn + Adam"]()
    for _ in range(3):
        loss = step()
    with counting() as xla:
        loss = step()
        ran, compiled = xla.executions, xla.compiles
        loss.item()
        float(loss)
        assert (xla.executions, xla.compiles) == (ran, compiled)
