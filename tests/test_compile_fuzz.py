"""Random training loops compiled with tapegrad.compile against the same loops run eagerly in PyTorch.

Hypothesis draws the model (widths, activation, a dropout or BatchNorm layer), the optimizer, the loss, the batch sizes of each step,
`dynamic`, and what the loop does between calls (reading the loss or not, reading a gradient, scaling the
parameters in place, zero_grad outside the step, a learning rate changed, an eager forward, the step run
eagerly). Every loss and the final parameters must match PyTorch:
compiled calls return while their program runs, and what the caller does next must see their results.
"""
import hypothesis
import numpy as np
from hypothesis import strategies as st

import tapegrad

ACTIVATIONS = ("Tanh", "ReLU", "Sigmoid", "GELU")
OPTIMIZERS = {"SGD": dict(lr=0.05, momentum=0.9), "Adam": dict(lr=0.01), "AdamW": dict(lr=0.01, weight_decay=0.1),
              "RMSprop": dict(lr=0.01)}


@st.composite
def loops(draw):
    return dict(
        widths=draw(st.lists(st.integers(2, 6), min_size=2, max_size=4)),
        activation=draw(st.sampled_from(ACTIVATIONS)),
        extra=draw(st.sampled_from((None, "Dropout", "BatchNorm1d"))),   # in the first layer
        optimizer=draw(st.sampled_from(sorted(OPTIMIZERS))),
        loss=draw(st.sampled_from(("mse", "cross_entropy"))),
        sizes=draw(st.lists(st.integers(2, 7), min_size=3, max_size=7)),
        dynamic=draw(st.booleans()),
        between=draw(st.lists(st.sampled_from(("read_loss", "read_grad", "scale", "zero_grad", "lr", "evaluate",
                                               "eager_step", "nothing")),
                              min_size=3, max_size=7)),
        seed=draw(st.integers(0, 2 ** 16)),
    )


def _run(lib, spec, compiled):
    rng = np.random.default_rng(spec["seed"])
    widths = spec["widths"]
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        # (a bias before BatchNorm has a zero gradient: Adam would turn its rounding noise into whole steps)
        bias = not (i == 0 and spec["extra"] == "BatchNorm1d")
        layers += [lib.nn.Linear(a, b, bias=bias), getattr(lib.nn, spec["activation"])()]
    if spec["extra"] == "Dropout":
        layers.insert(2, lib.nn.Dropout(0.3))
    elif spec["extra"] == "BatchNorm1d":   # (Linear without bias, BatchNorm, activation: the usual order)
        layers.insert(1, lib.nn.BatchNorm1d(widths[1]))
    model = lib.nn.Sequential(*layers[:-1])
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
    opt = getattr(lib.optim, spec["optimizer"])(model.parameters(), **OPTIMIZERS[spec["optimizer"]])
    lib.manual_seed(spec["seed"])   # (dropout's masks: tapegrad draws PyTorch's CPU stream)

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        if spec["loss"] == "mse":
            loss = lib.nn.functional.mse_loss(out, y)
        else:
            loss = lib.nn.functional.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss
    run = tapegrad.compile(step, dynamic=spec["dynamic"]) if compiled else step
    losses, seen = [], []
    for k, n in enumerate(spec["sizes"]):
        x = lib.tensor(rng.standard_normal((n, widths[0])).astype(np.float32))
        y = lib.tensor(rng.standard_normal((n, widths[-1])).astype(np.float32)) if spec["loss"] == "mse" else \
            lib.tensor(rng.integers(0, widths[-1], n))
        loss = run(x, y)
        losses.append(loss)
        what = spec["between"][k % len(spec["between"])]
        if what == "read_loss":
            seen.append(loss.item())
        elif what == "read_grad":
            g = next(iter(model.parameters())).grad
            seen.append(None if g is None else float(g.sum()))
        elif what == "scale":
            with lib.no_grad():
                for p in model.parameters():
                    p.mul_(0.99)
        elif what == "zero_grad":
            opt.zero_grad()
        elif what == "lr":   # (as a scheduler does)
            for group in opt.param_groups:
                group["lr"] *= 0.5
        elif what == "evaluate":   # an eager forward on the parameters the call wrote
            with lib.no_grad():
                seen.append(float(model(x).sum()))
        elif what == "eager_step":   # the same step, not compiled, between two compiled calls
            seen.append(step(x, y).item())
    return [loss.item() for loss in losses], seen, [p.detach().numpy() for p in model.parameters()]


@hypothesis.settings(max_examples=12, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(spec=loops())
def test_compiled_loops_match_pytorch(torch, spec):
    ours, theirs = _run(tapegrad, spec, compiled=True), _run(torch, spec, compiled=False)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-4, atol=1e-5)
    assert [v is None for v in ours[1]] == [v is None for v in theirs[1]]
    np.testing.assert_allclose([v for v in ours[1] if v is not None], [v for v in theirs[1] if v is not None],
                               rtol=1e-4, atol=1e-5)
    for p, q in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-5)
