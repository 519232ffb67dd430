"""tapegrad.linalg's functions write their results into out= as torch.linalg's do: values, resizing, the
refusal when an argument requires grad (naming the aten op PyTorch's out= overload runs), and the
composite norms, which copy into out with autograd recording the copy."""
import numpy as np
import pytest

import tapegrad
from conftest import raised

SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])

# name -> (call(linalg, A, B, outs)), the outs' shapes (a tuple of shapes for several results)
CALLS = {
    "inv": (lambda L, A, B, o: L.inv(A, out=o), (3, 3)),
    "det": (lambda L, A, B, o: L.det(A, out=o), ()),
    "slogdet": (lambda L, A, B, o: L.slogdet(A, out=o), ((), ())),
    "solve": (lambda L, A, B, o: L.solve(A, B, out=o), (3, 3)),
    "solve_triangular": (lambda L, A, B, o: L.solve_triangular(A.triu(), B, upper=True, out=o), (3, 3)),
    "cholesky": (lambda L, A, B, o: L.cholesky(A, out=o), (3, 3)),
    "qr": (lambda L, A, B, o: L.qr(A, out=o), ((3, 3), (3, 3))),
    "svdvals": (lambda L, A, B, o: L.svdvals(A, out=o), (3,)),
    "eigvalsh": (lambda L, A, B, o: L.eigvalsh(A, out=o), (3,)),
    "pinv": (lambda L, A, B, o: L.pinv(A, out=o), (3, 3)),
    "vector_norm": (lambda L, A, B, o: L.vector_norm(A, 3, out=o), ()),
    "matrix_norm": (lambda L, A, B, o: L.matrix_norm(A, out=o), ()),
    "norm": (lambda L, A, B, o: L.norm(A, out=o), ()),
    "multi_dot": (lambda L, A, B, o: L.multi_dot([A, B, A], out=o), (3, 3)),
    "cross": (lambda L, A, B, o: L.cross(A, B, out=o), (3, 3)),
    "matmul": (lambda L, A, B, o: L.matmul(A, B, out=o), (3, 3)),
}


def _outs(lib, shapes, empty):
    make = (lambda s: lib.empty(0, dtype=lib.float64)) if empty else (lambda s: lib.zeros(s, dtype=lib.float64))
    if shapes and isinstance(shapes[0], tuple):
        return tuple(make(s) for s in shapes)
    return make(shapes)


def _run(lib, name, requires_grad, empty):
    call, shapes = CALLS[name]
    A = lib.tensor(SPD, requires_grad=requires_grad)
    B = lib.tensor(SPD[::-1].copy())
    outs = _outs(lib, shapes, empty)
    error = raised(lambda: call(lib.linalg, A, B, outs))
    if error is not None:
        return error
    outs = outs if isinstance(outs, tuple) else (outs,)
    return [(np.round(np.array(o.detach().tolist(), dtype=np.float64), 8).tolist(), o.requires_grad,
             None if o.grad_fn is None else o.grad_fn.name()) for o in outs]


@pytest.mark.parametrize("empty", [False, True], ids=["out of the right shape", "empty out, resized"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_linalg_writes_out_as_torch_does(name, empty, torch):
    assert _run(tapegrad, name, False, empty) == _run(torch, name, False, empty)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_linalg_out_with_an_argument_requiring_grad_as_torch(name, torch):
    assert _run(tapegrad, name, True, False) == _run(torch, name, True, False)
