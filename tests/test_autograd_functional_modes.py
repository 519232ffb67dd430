"""autograd.functional's six functions in every mode against PyTorch: strict and create_graph, over functions
that are constant, linear, quadratic, cubic or cut from their input by detach(): values, printed grad_fns and
strict mode's errors (PyTorch's words for each stage), a Hessian of a second function of the same shapes, and
PyTorch's argument errors (tuples only, forward-mode's limits)."""
import itertools
import warnings

import pytest
import torch

import tapegrad as tg

FUNCTIONS = {
    "constant": lambda lib: lambda x: lib.ones(2),
    "linear": lambda lib: lambda x: x * 2,
    "linear sum": lambda lib: lambda x: (x * 2).sum(),
    "quadratic sum": lambda lib: lambda x: (x * x).sum(),
    "cubic sum": lambda lib: lambda x: (x ** 3).sum(),
    "detached": lambda lib: lambda x: x.detach() * 2,
    "constant sum": lambda lib: lambda x: lib.ones(2).sum(),
    "one-element": lambda lib: lambda x: (x ** 3).sum(0, keepdim=True),
}

CALLS = {
    "vjp": lambda F, f, x, lib, **kw: F.vjp(f, x, lib.ones_like(f(x)) if f(x).dim() else None, **kw),
    "jvp": lambda F, f, x, lib, **kw: F.jvp(f, x, lib.ones(2), **kw),
    "jacobian": lambda F, f, x, lib, **kw: F.jacobian(f, x, **kw),
    "hessian": lambda F, f, x, lib, **kw: F.hessian(f, x, **kw),
    "vhp": lambda F, f, x, lib, **kw: F.vhp(f, x, lib.ones(2), **kw),
    "hvp": lambda F, f, x, lib, **kw: F.hvp(f, x, lib.ones(2), **kw),
}


def _shown(lib, call, function, strict, create_graph):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = CALLS[call](lib.autograd.functional, FUNCTIONS[function](lib), lib.tensor([1., 2.]), lib,
                              strict=strict, create_graph=create_graph)
        except Exception as e:
            return f"{type(e).__name__}: {e}"
    return repr(out).replace("tapegrad", "torch")


@pytest.mark.parametrize("strict,create_graph", list(itertools.product([False, True], repeat=2)))
@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("call", CALLS)
def test_as_pytorch(call, function, strict, create_graph):
    assert _shown(tg, call, function, strict, create_graph) == _shown(torch, call, function, strict, create_graph)


@pytest.mark.parametrize("code", [
    "F.jacobian(lambda x: x.exp(), [lib.ones(2)])",
    "F.vjp(lambda x: x.exp(), lib.ones(2), [lib.ones(2)])",
    "F.jacobian(lambda x: x.exp(), lib.ones(2), strategy='forward-mode')",
    "F.jacobian(lambda x: x.exp(), lib.ones(2), strategy='forward-mode', create_graph=True)",
    "F.jacobian(lambda x: x.exp(), lib.ones(2), strategy='forward-mode', strict=True, vectorize=True)",
    "F.jacobian(lambda x: x.exp(), lib.ones(2), strategy='sideways')",
    "F.jacobian(lambda x: x.exp(), lib.ones(2), strict=True, vectorize=True)",
    "F.hessian(lambda x: x.exp().sum(), lib.ones(2), outer_jacobian_strategy='forward-mode')",
    "F.hessian(lambda x: x.exp().sum(), lib.ones(2), outer_jacobian_strategy='sideways')",
    "F.hessian(lambda x: (x.exp().sum(), x.sum()), lib.ones(2))",
    "F.vhp(lambda x: x.exp(), lib.ones(2), lib.ones(2))",
    "F.hvp(lambda x: x.exp().sum(), (lib.ones(2), lib.ones(1)), (lib.ones(2),))",
    "F.jvp(lambda x: x.exp(), lib.ones(2), lib.ones(3))",
])
def test_argument_errors_as_pytorch(code):
    def raised(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                eval(code, {"F": lib.autograd.functional, "lib": lib})
            except Exception as e:
                return type(e).__name__, str(e).replace("tapegrad", "torch")
        return None
    assert raised(tg) == raised(torch) is not None
