"""Ops whose PyTorch backward is not the derivative of their forward (Op.reverse_fn): embedding's padding_idx
and scale_grad_by_freq, index_put, put, index_copy and scatter with repeated indices. Reverse mode (backward, autograd.grad, func.grad,
jacrev, hessian) gives PyTorch's backward; forward mode (forward_ad, func.jvp, jacfwd) differentiates the
forward, as PyTorch's forward-mode formulas do. Every path is compared with torch."""
import numpy as np
import pytest

from conftest import assert_close, both

INDICES = [0, 1, 1, 4, 1]


def _weight(lib):
    return lib.tensor(np.random.default_rng(0).normal(size=(5, 3)), dtype=lib.float64)


def _embedding(lib, **kw):
    idx = lib.tensor(INDICES)
    return lambda w: lib.nn.functional.embedding(idx, w, **kw)


def _index_put(lib, **kw):
    idx = lib.tensor([0, 2, 2, 3])

    def put(v):
        out = lib.zeros(5, 3, dtype=lib.float64)
        out[idx] = v[:4]
        return out
    return put


def _put(lib):
    return lambda v: lib.zeros(4, 3, dtype=lib.float64).put(lib.tensor([0, 5, 5, 11, 0]), v.reshape(-1)[:5])


def _index_copy(lib):
    return lambda v: lib.zeros(4, 3, dtype=lib.float64).index_copy(0, lib.tensor([1, 3, 1]), v[:3])


def _scatter(lib):
    return lambda v: lib.zeros(4, 3, dtype=lib.float64).scatter(0, lib.tensor([[1, 1, 0], [1, 3, 0]]), v[:2])


FUNCTIONS = {
    "embedding_padding_idx": lambda lib: _embedding(lib, padding_idx=1),
    "embedding_scale_grad_by_freq": lambda lib: _embedding(lib, scale_grad_by_freq=True),
    "embedding_both": lambda lib: _embedding(lib, padding_idx=4, scale_grad_by_freq=True),
    "index_put_repeated": _index_put,
    "put_repeated": _put,
    "index_copy_repeated": _index_copy,
    "scatter_repeated": _scatter,
}


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_forward_mode_differentiates_the_forward(torch, name):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        w = _weight(lib)
        tangent = lib.tensor(np.random.default_rng(1).normal(size=(5, 3)), dtype=lib.float64)
        with fwAD.dual_level():
            out = FUNCTIONS[name](lib)(fwAD.make_dual(w, tangent))
            jvp_out = fwAD.unpack_dual(out).tangent
        return jvp_out, lib.func.jacfwd(FUNCTIONS[name](lib))(w), lib.func.jvp(FUNCTIONS[name](lib), (w,),
                                                                                  (tangent,))[1]
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_reverse_mode_gives_pytorchs_backward(torch, name):
    def build(lib):
        f = FUNCTIONS[name](lib)
        w = _weight(lib).requires_grad_()
        weights = lib.arange(15, dtype=lib.float64).view(5, 3)
        (f(w) * weights[:f(w).shape[0]]).sum().backward()
        square = lambda v: (f(v) ** 2).sum()   # noqa: E731
        return (w.grad, lib.func.jacrev(f)(_weight(lib)), lib.func.grad(square)(_weight(lib)),
                lib.func.hessian(square)(_weight(lib)))
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_double_backward_and_forward_over_reverse(torch):
    def build(lib):
        f = _embedding(lib, padding_idx=1, scale_grad_by_freq=True)
        w = _weight(lib).requires_grad_()
        (g,) = lib.autograd.grad((f(w) ** 3).sum(), w, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), w)
        # forward over reverse differentiates PyTorch's backward formula
        _, over = lib.func.jvp(lib.func.grad(lambda v: (f(v) ** 3).sum()), (_weight(lib),),
                               (lib.ones(5, 3, dtype=lib.float64),))
        return g, gg, over
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
