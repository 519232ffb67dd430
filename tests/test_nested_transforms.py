"""A transform of a transform (hessian, jacfwd(jacrev(f)), vmap(grad(f)), autograd.functional.hessian) is a
library closure over the user's function and arguments: its compiled program is cached by what the closure
holds, so a second function, or other argnums, of the same shapes gets its own program, not the first one's."""
import pytest
import torch

import tapegrad as tg
from conftest import assert_close

FUNCTIONS = (lambda x: (x * 2).sum(), lambda x: (x ** 3).sum(), lambda x: x.sin().sum())

TRANSFORMS = {
    "func.hessian": lambda lib, f, x: lib.func.hessian(f)(x),
    "jacfwd(jacrev)": lambda lib, f, x: lib.func.jacfwd(lib.func.jacrev(f))(x),
    "vmap(grad)": lambda lib, f, x: lib.func.vmap(lib.func.grad(f))(x.reshape(2, 1).expand(2, 2)),
    "autograd.functional.hessian": lambda lib, f, x: lib.autograd.functional.hessian(f, x),
    "autograd.functional.hvp": lambda lib, f, x: lib.autograd.functional.hvp(f, x, lib.ones(2))[1],
}


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_each_function_its_own_program(transform):
    for f in FUNCTIONS:   # the same shapes each time: only the function differs
        ours = TRANSFORMS[transform](tg, f, tg.tensor([1., 2.]))
        assert_close(ours, TRANSFORMS[transform](torch, f, torch.tensor([1., 2.])))


def test_each_argnums_its_own_program():
    def g(a, b):
        return (a * b ** 2).sum()
    for n in (0, 1):
        def second(lib):
            x = lib.tensor([1., 2.])
            return lib.func.jacfwd(lib.func.grad(g, argnums=n), argnums=n)(x, x + 1)
        assert_close(second(tg), second(torch))
