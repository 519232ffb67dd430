"""A step's program is launched without waiting (tapegrad/_faults.py, Flight): whatever a loop does
between steps -- reading grads, parameters or the loss, changing parameters in place, zeroing grads or
setting them to None, clipping, a second backward -- sees the values PyTorch's eager step gives. Hypothesis
draws what each iteration does; every read is compared with PyTorch's at once."""
import numpy as np
from hypothesis import given, settings, strategies as st

import tapegrad
from conftest import assert_close, require

ACTIONS = ("read grads", "read params", "read loss", "clip grads", "scale params in place",
           "zero grads in place", "grads to None", "accumulate twice", "skip the step")


def _run(lib, plan, optimizer, reads):
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    opt = (lib.optim.Adam(model.parameters(), lr=0.05) if optimizer == "adam"
           else lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    x = lib.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((8, 2)).astype(np.float32))
    for actions in plan:
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        if "accumulate twice" in actions:
            lib.nn.functional.mse_loss(model(x * 0.5), y).backward()
        if "read grads" in actions:
            reads.append([p.grad.clone() for p in model.parameters()])
        if "clip grads" in actions:
            lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        if "skip the step" not in actions:
            opt.step()
        if "read loss" in actions:
            reads.append([lib.tensor(loss.item())])
        if "scale params in place" in actions:
            with lib.no_grad():
                model[0].weight.mul_(0.9)
        if "read params" in actions:
            reads.append([p.detach().clone() for p in model.parameters()])
        if "zero grads in place" in actions:
            opt.zero_grad(set_to_none=False)
        elif "grads to None" in actions or "accumulate twice" not in actions:
            opt.zero_grad()
    reads.append([p.detach().clone() for p in model.parameters()])


@settings(max_examples=25, deadline=None)
@given(plan=st.lists(st.frozensets(st.sampled_from(ACTIONS), max_size=3), min_size=4, max_size=9),
       optimizer=st.sampled_from(["adam", "sgd"]))
def test_a_loop_between_steps_sees_pytorchs_values(plan, optimizer):
    torch = require("torch")
    ours, theirs = [], []
    _run(tapegrad, plan, optimizer, ours)
    _run(torch, plan, optimizer, theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        for t, u in zip(a, b):
            assert_close(t, u, rtol=1e-4, atol=1e-5)
