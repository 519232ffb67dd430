"""linalg.vector_norm(dtype=) against PyTorch: one LinalgVectorNormBackward0 node (no ToCopyBackward0),
values, gradients and their dtypes, and PyTorch's checks on dtype."""
import numpy as np
import pytest

from conftest import assert_close, both


def _chain(node, depth=6):
    names = []
    while node is not None and len(names) < depth:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names


CALLS = {
    "l2": lambda L, x: L.linalg.vector_norm(x, dtype=L.float64),
    "l1": lambda L, x: L.linalg.vector_norm(x, ord=1, dtype=L.float64),
    "inf": lambda L, x: L.linalg.vector_norm(x, ord=float("inf"), dtype=L.float64),
    "l3_dim": lambda L, x: L.linalg.vector_norm(x, ord=3, dim=1, keepdim=True, dtype=L.float64),
    "linalg_norm": lambda L, x: L.linalg.norm(x, dtype=L.float64),
    "matrix_fro": lambda L, x: L.linalg.matrix_norm(x, dtype=L.float64),
    "matrix_1": lambda L, x: L.linalg.matrix_norm(x, ord=1, dtype=L.float64),
    "torch_norm": lambda L, x: L.norm(x, dtype=L.float64),
    "same_dtype": lambda L, x: L.linalg.vector_norm(x, dtype=L.float32),
    "complex": lambda L, x: L.linalg.vector_norm(x.to(L.complex64) * (1 + 2j), dtype=L.complex128),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_graph_values_and_grads(torch, name):
    data = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)

    def build(lib):
        x = lib.tensor(data, requires_grad=True)
        y = CALLS[name](lib, x)
        first = y.grad_fn.next_functions if name != "complex" else None
        g, = lib.autograd.grad((y * y).sum(), x)
        return y, _chain(y.grad_fn), first and [(f.name(), i) for f, i in first if f is not None], g
    (y, chain, first, g), (ty, tchain, tfirst, tg) = both(build)
    assert chain == tchain
    assert first == tfirst
    assert_close(y, ty)
    assert_close(g, tg)


@pytest.mark.parametrize("src,dst", [("float32", "complex128"), ("complex64", "float64"), ("float64", "complex64"),
                                     ("int64", "float64"), ("float16", "bfloat16"), ("float32", "int64"),
                                     ("float64", "float32"), ("complex128", "complex64"), ("float32", "float16")])
def test_dtype_errors_as_pytorch(torch, src, dst):
    def build(lib):
        try:
            lib.linalg.vector_norm(lib.ones(3, dtype=getattr(lib, src)), dtype=getattr(lib, dst))
        except Exception as e:   # the type and the message are compared
            return type(e).__name__, str(e)
    ours, theirs = both(build)
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1]), (ours[1], theirs[1])


def test_widening_from_half_and_bfloat16(torch):
    def build(lib):
        return [lib.linalg.vector_norm(lib.full((5,), 0.3, dtype=getattr(lib, s)), dtype=lib.float32)
                for s in ("float16", "bfloat16")]
    for a, b in zip(*both(build)):
        assert_close(a, b)
