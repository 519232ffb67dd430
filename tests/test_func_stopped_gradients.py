"""Inside a function given to tapegrad.func's transforms, a no_grad region and detach()/.data stop the transform's
gradient as in torch.func ("grad respects the inner no_grad"); a no_grad around the transformed call does not."""
import pytest
import torch

import tapegrad as tg
from conftest import assert_close


def _inner_no_grad(lib):
    def f(x):
        with lib.no_grad():
            c = x ** 2
        return (x - c).sum()
    return f


def _outer_no_grad(lib):
    def f(x):
        return (x - x ** 2).sum()
    grad = lib.func.grad(f)

    def called(x):
        with lib.no_grad():
            return grad(x)
    return called


CASES = {
    "grad, no_grad inside": lambda lib: lib.func.grad(_inner_no_grad(lib)),
    "grad, no_grad around": _outer_no_grad,
    "grad, detach": lambda lib: lib.func.grad(lambda x: (x.detach() * x).sum()),
    "grad, .data": lambda lib: lib.func.grad(lambda x: (x.data * x).sum()),
    "grad, a view under no_grad": lambda lib: lib.func.grad(lambda x: (x * _first(lib, x)).sum()),
    "jacrev, detach": lambda lib: lib.func.jacrev(lambda x: x.detach() * 2 + x),
    "jacfwd, detach": lambda lib: lib.func.jacfwd(lambda x: x.detach() * x),
    "jvp, detach": lambda lib: lambda x: lib.func.jvp(lambda y: y.detach() * y, (x,), (lib.ones(2),))[1],
    "hessian, no_grad inside": lambda lib: lib.func.hessian(_inner_no_grad(lib)),
    "vmap(grad), detach": lambda lib: lambda x: lib.func.vmap(lib.func.grad(lambda y: (y.detach() * y).sum()))(
        x.expand(3, 2)),
    "written through a detached alias": lambda lib: lib.func.grad(_written_alias),
}


def _first(lib, x):
    with lib.no_grad():
        return x[:1]


def _written_alias(x):
    c = x.detach()
    c.mul_(2)
    return (x * c).sum()


@pytest.mark.parametrize("case", CASES)
def test_transform_stops_where_pytorch_does(case):
    ours = CASES[case](tg)(tg.tensor([1., 2.]))
    theirs = CASES[case](torch)(torch.tensor([1., 2.]))
    assert_close(ours, theirs)


def test_grad_mode_reads_as_a_bool_inside_a_transform():
    seen = []

    def f(x):
        seen.append(tg.is_grad_enabled())
        return x.sum()
    tg.func.grad(f)(tg.ones(2))
    assert all(type(s) is bool for s in seen)
