"""torch.func.grad and vjp of functions that read values in Python run them eagerly, as PyTorch's (has_aux, argnums,
dicts in their order, a module's functional_call, nested grad, an outer no_grad or an input that requires grad);
every transform's has_aux refuses an aux that is not tensors, with PyTorch's words; vmap refuses .item()
whatever the per-sample size."""
import pytest
import torch

import tapegrad as tg
from conftest import run_code

CASES = {
    "branch on item()": """
def f(x):
    return (x ** 3).sum() if x.sum().item() > 0 else (x ** 2).sum()
x = lib.tensor([1., 2.])
print(lib.func.grad(f)(x), lib.func.grad(f)(-x))
print(lib.func.grad(lib.func.grad(lambda x: f(x.reshape(1)).reshape(())))(lib.tensor(2.)))""",
    "argnums and aux": """
def f(x, y):
    s = x.sum().item()
    return (x * y * s).sum(), {"t": x * 2}
print(lib.func.grad(f, argnums=(0, 1), has_aux=True)(lib.tensor([1., 2.]), lib.tensor([3., 4.])))
print(lib.func.grad_and_value(f, has_aux=True)(lib.tensor([1., 2.]), lib.tensor([3., 4.])))""",
    "dict in its order": """
def f(p):
    return (p["b"] * p["a"]).sum() * (2 if p["a"].max() > 1 else 3)
print(lib.func.grad(f)({"b": lib.tensor([1., 2.]), "a": lib.tensor([3., 4.])}))""",
    "functional_call": """
m = lib.nn.Linear(2, 1)
with lib.no_grad():
    m.weight.fill_(0.5); m.bias.fill_(0.1)
def loss(params, x):
    out = lib.func.functional_call(m, params, (x,))
    return out.sum() * (1.0 if out.sum().item() > 0 else -1.0)
print(lib.func.grad(loss)({k: v.detach() for k, v in m.named_parameters()}, lib.ones(3, 2)))""",
    "outer no_grad, input requiring grad": """
def f(x):
    return x.sum() * x.sum().item()
with lib.no_grad():
    print(lib.func.grad(f)(lib.tensor([1., 2.])))
g = lib.func.grad(f)(lib.tensor([1., 2.], requires_grad=True))
print(g, g.requires_grad)""",
    "non-scalar output": "lib.func.grad(lambda x: x * x.sum().item())(lib.tensor([1., 2.]))",
    "a number out": "lib.func.grad(lambda x: x.sum().item())(lib.tensor([1., 2.]))",
    "vmap of it": """
f = lambda x: (x * 2).sum() if bool(x.sum() > 0) else x.sum()
lib.func.vmap(lib.func.grad(f))(lib.ones(3, 2))""",
    "vmap item of a row": "lib.func.vmap(lambda a: a.item())(lib.ones(2, 3))",
    "vjp, called twice": """
def f(x):
    return x ** 3 if x.sum().item() > 0 else x ** 2
out, fn = lib.func.vjp(f, lib.tensor([1., 2.]))
print(out, fn(lib.ones(2)), fn(lib.tensor([1., 0.])))""",
    "vjp with aux and dicts": """
def f(x, y):
    s = float(x.sum())
    return {"a": x * y * s, "b": (x + y).sum()}, x * 2
out, fn, aux = lib.func.vjp(f, lib.tensor([1., 2.]), lib.tensor([3., 4.]), has_aux=True)
print(out, aux, fn({"a": lib.ones(2), "b": lib.tensor(1.)}))
fn(lib.ones(2))""",
    "grad of a vjp": """
def f(x):
    return x * x.sum().item()
print(lib.func.grad(lambda x: lib.func.vjp(f, x)[1](lib.ones(2))[0].sum())(lib.tensor([1., 2.])))""",
    "vjp of an input requiring grad": """
x = lib.tensor([1., 2.], requires_grad=True)
out, fn = lib.func.vjp(lambda v: (v ** 2) if bool(v.sum() > 0) else v, x)
g, = fn(lib.ones(2))
print(out, g, g.requires_grad)
g.sum().backward(); print(x.grad)""",
}

x_ = "lib.tensor([1., 2.])"
for name, call in {
        "grad": f"lib.func.grad(lambda x: (x.sum(), 2.0), has_aux=True)({x_})",
        "grad_and_value": f"lib.func.grad_and_value(lambda x: (x.sum(), [x, 3]), has_aux=True)({x_})",
        "vjp": f"lib.func.vjp(lambda x: (x * 2, 2.0), {x_}, has_aux=True)",
        "jvp": f"lib.func.jvp(lambda x: (x * 2, 2.0), ({x_},), ({x_},), has_aux=True)",
        "jacrev": f"lib.func.jacrev(lambda x: (x * 2, 2.0), has_aux=True)({x_})",
        "jacfwd": f"lib.func.jacfwd(lambda x: (x * 2, 2.0), has_aux=True)({x_})",
        "None": f"lib.func.grad(lambda x: (x.sum(), None), has_aux=True)({x_})",
        "str": f"lib.func.grad(lambda x: (x.sum(), {{'k': 'v'}}), has_aux=True)({x_})"}.items():
    CASES[f"aux of {name}"] = call


@pytest.mark.parametrize("case", CASES)
def test_as_pytorch(case):
    assert run_code(tg, CASES[case], _start) == run_code(torch, CASES[case], _start)


def _start(error):
    return str(error)[:100]
