"""0-d and empty tensors through ops that take a dim, a class target or a weight: PyTorch's results, gradients
and errors (JAX's own errors leaked from many of them: axis out of bounds, tuple index out of range)."""
import numpy as np
import pytest

import tapegrad
from conftest import require

SCALAR = "torch.tensor(1.5, requires_grad=True)"
EMPTY = "torch.zeros(0, requires_grad=True)"
EMPTY_ROWS = "torch.zeros(0, 3, requires_grad=True)"
EMPTY_COLUMNS = "torch.zeros(3, 0, requires_grad=True)"
F = "torch.nn.functional"

CASES = [(SCALAR, code) for code in [
    "x.softmax(0)", "x.log_softmax(-1)", f"{F}.softmin(x, 0)", "x.flip(0)", "x.movedim(0, 0)", "x.movedim(-1, 0)",
    "torch.einsum('...->...', x)", "torch.einsum('->', x)", "torch.tensordot(x, x, 0)",
    "x.narrow(0, 0, 1)", "x.select(0, 0)", "x.chunk(2)", "x.split(1)", "x.unbind()", "x.cross(x)",
    "torch.trapezoid(x)", "torch.cumulative_trapezoid(x)", f"{F}.layer_norm(x, ())",
    f"{F}.cross_entropy(x, torch.tensor(0))", f"{F}.cross_entropy(x, torch.tensor(1.))",
    f"{F}.nll_loss(x, torch.tensor(0))", "x.unique(dim=0)",
]] + [(EMPTY, code) for code in ["x.cross(x)", f"{F}.embedding(torch.tensor([0]), x)"]] + [
    (EMPTY_ROWS, f"{F}.embedding(torch.tensor([0]), x)"), (EMPTY_ROWS, f"{F}.nll_loss(x, torch.tensor(0))"),
    (EMPTY_ROWS, f"{F}.embedding(torch.tensor([0]), x, padding_idx=0)"),
] + [(x, code) for x in (EMPTY, EMPTY_ROWS, EMPTY_COLUMNS) for code in [
    f"{F}.cross_entropy(x, x.softmax(0))", f"{F}.one_hot(x.long())", "x.argmax()", "x.argmin()", "x.aminmax()",
    "x.kthvalue(1)", "x.mode()", "x.mode(-1)", "x.median()", "x.nanmedian()", "x.split(1)",
    "x.put(torch.tensor([0]), torch.tensor([1.]))", "x.take(torch.tensor([0]))", "x.take(torch.zeros(0, dtype=torch.long))",
]] + [(EMPTY, "x.aminmax(dim=-1)"), (EMPTY_COLUMNS, "x.aminmax(dim=-1)")] + [("torch.tensor(1.5)", code) for code in ["x[0]", "x[0:1]", "x[-1]", "x[(0,)]", "x[True]", "x[False]"]] + [
    ("torch.arange(2., requires_grad=True) * 1", code)
    for code in ["x[True]", "x[False]", "x[0, True]", "x[True, 0]", "x[True, torch.tensor([1, 0])]", "x[..., True]"]
] + [
    ("torch.zeros(0, 1, 5, requires_grad=True)", f"{F}.instance_norm(x)"),
    ("torch.zeros(0, 1, 5, requires_grad=True)", f"{F}.group_norm(x, 1)"),
    ("torch.zeros(0, 1, 4, 4, requires_grad=True)", f"{F}.batch_norm(x, torch.zeros(1), torch.ones(1), training=True)"),
] + [(None, code) for code in [
    f"{F}.batch_norm(torch.ones(2, 0), None, None, training=True)",
    f"{F}.batch_norm(torch.ones(1, 3, 1), None, None, training=True)",
    f"{F}.instance_norm(torch.ones(2, 3, 0))",
    f"{F}.instance_norm(torch.ones(2, 3, 1))",
    f"{F}.group_norm(torch.ones(0, 4, 2), 2)",
    f"{F}.nll_loss(torch.ones(2, 3, 4), torch.zeros(3, dtype=torch.long))",
    f"{F}.nll_loss(torch.ones(2, 3), torch.zeros(2, 5, dtype=torch.long))",
    f"{F}.nll_loss(torch.ones(3), torch.zeros(1, dtype=torch.long))",
    f"{F}.nll_loss(torch.ones(3), torch.zeros(1, dtype=torch.long), reduction='none')",
    f"{F}.nll_loss(torch.ones(3), torch.zeros(2, dtype=torch.long))",
    f"{F}.nll_loss(torch.ones(3), torch.ones(2))",
    f"{F}.nll_loss(torch.ones(2, 3), torch.zeros(2, dtype=torch.int32))",
    f"{F}.nll_loss(torch.ones(2, 3), torch.zeros(2, dtype=torch.uint8))",
    f"{F}.nll_loss(torch.ones(2, 3, 4, 5), torch.zeros(2, 4, dtype=torch.long))",
    f"{F}.nll_loss(torch.ones(2, 3, 4, 5), torch.zeros(2, 4, 6, dtype=torch.long))",
    f"{F}.nll_loss(torch.ones(2, 3, 4), torch.zeros(2, 5))",
    f"{F}.nll_loss(torch.ones(2, 3), torch.zeros(2, dtype=torch.long), weight=torch.ones(2))",
    f"{F}.cross_entropy(torch.ones(2, 3), torch.ones(2))",
    f"{F}.cross_entropy(torch.ones(2, 3), torch.zeros(2, 3, dtype=torch.long))",
    f"{F}.cross_entropy(torch.ones(2, 3), torch.ones(2, 3), ignore_index=1)",
    f"{F}.cross_entropy(torch.ones(2, 3), torch.ones(2, 4))",
    f"{F}.cross_entropy(torch.ones(3), torch.zeros(1, dtype=torch.long))",
    f"{F}.embedding(torch.tensor([0]), torch.zeros(3))",
    f"{F}.embedding(torch.tensor([5]), torch.zeros(3, 3), padding_idx=1)",
    f"{F}.layer_norm(torch.ones(2), [])",
    "torch.cross(torch.ones(2, 2), torch.ones(2, 2))",
]]


def _outcome(lib, x_code, code):
    x = eval(x_code, {"torch": lib}) if x_code else None
    try:
        out = eval(code, {"torch": lib, "x": x})
    except Exception as e:   # noqa: BLE001 - the type and text are what is compared
        return "raised", type(e).__name__, str(e).strip().splitlines()[0]
    out = out[0] if isinstance(out, tuple) else out
    grad = None
    if x is not None and out.requires_grad:
        leaf = x if x.is_leaf else None
        if leaf is None:
            x.retain_grad()
        out.sum().backward()
        grad = None if x.grad is None else np.asarray(x.grad.tolist())
        names = [out.grad_fn.name()] + [f[0].name() for f in out.grad_fn.next_functions if f[0] is not None]
        return "ran", tuple(out.shape), np.asarray(out.detach().tolist(), dtype=float), grad, names
    return "ran", tuple(out.shape), np.asarray(out.detach().tolist(), dtype=float), grad


@pytest.mark.parametrize("x_code, code", CASES)
def test_as_torch(x_code, code):
    torch = require("torch")
    ours, theirs = _outcome(tapegrad, x_code, code), _outcome(torch, x_code, code)
    assert ours[0] == theirs[0], (ours, theirs)
    if theirs[0] == "raised":
        assert ours[1] == theirs[1] and theirs[2].replace("torch.", "tapegrad.") in ours[2], (ours, theirs)
    else:
        assert ours[1] == theirs[1]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
        assert (ours[3] is None) == (theirs[3] is None)
        if theirs[3] is not None:
            np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)
        assert ours[4:] == theirs[4:]   # (the graph PyTorch records: the node and the ones it leads to)
