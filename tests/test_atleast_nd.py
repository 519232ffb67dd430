"""torch.atleast_1d/2d/3d as PyTorch's: one tensor gives a tensor; several tensors, or one list or tuple of them,
give a tuple; anything but tensors is refused with PyTorch's overload error. Views and gradients as PyTorch's."""
import numpy as np
import pytest
import torch

import tapegrad as tg


def _args(L, shape_set):
    return [L.tensor(np.arange(int(np.prod(s)), dtype=np.float32).reshape(s), requires_grad=True) for s in shape_set]


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("form", ["one", "several", "list", "tuple", "none"])
def test_results_shapes_and_gradients(name, form):
    shapes = [(), (3,), (2, 3), (2, 1, 3)]
    results = {}
    for L in (tg, torch):
        xs = _args(L, shapes)
        f = getattr(L, name)
        out = {"one": lambda: f(xs[1]), "several": lambda: f(*xs), "list": lambda: f(list(xs)),
               "tuple": lambda: f(tuple(xs[:1])), "none": lambda: f()}[form]()
        outs = out if isinstance(out, tuple) else (out,)
        if outs:
            sum((o * (i + 1)).sum() for i, o in enumerate(outs)).backward()
        results[L] = (type(out).__name__, [tuple(o.shape) for o in outs], [o._base is not None for o in outs],
                      [None if x.grad is None else x.grad.numpy().tolist() for x in xs])
    assert results[tg] == results[torch]


@pytest.mark.parametrize("bad", [(1.0,), ([1.0],), ("x",), (None,), ("tensor", 2), ([2, "tensor"],)])
def test_non_tensors_refused_as_torch(bad):
    errors = []
    for L in (tg, torch):
        args = [L.ones(1) if a == "tensor" else [L.ones(1) if b == "tensor" else b for b in a]
                if isinstance(a, list) else a for a in bad]
        with pytest.raises(TypeError) as raised:
            L.atleast_2d(*args)
        errors.append(str(raised.value))
    assert errors[0].split("\n")[0] == errors[1].split("\n")[0]
