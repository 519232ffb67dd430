"""Post-hooks on a CopySlices node (an in-place op on a view) against PyTorch: grad_inputs are one per
next_functions entry (the base's gradient, then the in-place op's other inputs'), with PyTorch's values and
None entries, and a hook's replacements reach those inputs."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close

CASES = {
    "mul": lambda lib, v, x: v.mul_(x),
    "add_scalar": lambda lib, v, x: v.add_(3),
    "copy": lambda lib, v, x: v.copy_(x),
    "addcmul": lambda lib, v, x: v.addcmul_(x, x * 2),
    "mul_constant": lambda lib, v, x: v.mul_(lib.tensor([[2., 3], [4, 5]])),
    "clamp": lambda lib, v, x: v.clamp_(min=x[0, 0] - 3),
    "exp": lambda lib, v, x: v.exp_(),
    "setitem": None,
}


def _run(lib, case, replace, view):
    a = lib.tensor(np.arange(12.).reshape(3, 4) / 7, requires_grad=True)
    x = lib.tensor([[5., 7], [-1, 2]], requires_grad=True)
    b = a * 1
    index = (slice(1, 3), slice(0, 4, 2)) if view == "strided" else (slice(0, 2), slice(2, 4))
    if case == "setitem":
        b[index] = x
    else:
        v = b[index] if view != "transposed" else b[0:2, 1:3].t()
        CASES[case](lib, v, x)
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append((grad_inputs, grad_outputs))
        if replace:   # not a scaling of the given ones: the replacements themselves must arrive
            return tuple(None if g is None else lib.full_like(g, float(k + 2)) for k, g in enumerate(grad_inputs))
    b.grad_fn.register_hook(hook)
    weights = lib.tensor(np.arange(1., 13.).reshape(3, 4))
    (b * weights).sum().backward()
    names = [None if f is None else f.name() for f, _ in b.grad_fn.next_functions]
    return b.grad_fn.name(), names, seen, a.grad, x.grad


@pytest.mark.parametrize("view", ["slice", "strided", "transposed"])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("case", list(CASES))
def test_post_hook_grad_inputs_as_torch(torch, case, replace, view):
    ours, theirs = _run(tapegrad, case, replace, view), _run(torch, case, replace, view)
    assert ours[:2] == theirs[:2]
    (ours_seen,), (theirs_seen,) = ours[2], theirs[2]
    for mine, their in zip(ours_seen, theirs_seen):
        assert len(mine) == len(their)
        for g, t in zip(mine, their):
            assert (g is None) == (t is None)
            if t is not None:
                assert_close(g, t)
    for g, t in zip(ours[3:], theirs[3:]):
        assert (g is None) == (t is None)
        if t is not None:
            assert_close(g, t)
