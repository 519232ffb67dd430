"""A NaN gradient reaching a point where PyTorch's formula is masked: whether it stays NaN follows the
formula's form, as PyTorch's. `grad * ratio.masked_fill(norm == 0, 0)` multiplies (NaN * 0 is NaN: the
2-norm, dist, pairwise_distance, the Frobenius norm); `where(x == 0, 0, grad * ...)` selects (0: std,
cdist, pdist, sinc, the p-norms); prod() of a tensor with two zeros or more is zeros whatever the gradient."""
import pytest
import torch

import tapegrad as tg

NAN = float("nan")

CASES = {
    "std": (lambda L, x: x.std(), (2,), ()),
    "cdist": (lambda L, x: L.cdist(x, x.detach()), (1, 2), (1, 1)),
    "pdist": (lambda L, x: L.pdist(L.stack([x, x.detach()])), (2,), (1,)),
    "pairwise_distance": (lambda L, x: L.nn.functional.pairwise_distance(x[None], x.detach()[None], eps=0), (2,),
                          (1,)),
    "matrix_norm": (lambda L, x: L.linalg.matrix_norm(x), (1, 2), ()),
    "dist": (lambda L, x: L.dist(x, L.zeros(2)), (2,), ()),
    "norm_dim": (lambda L, x: x.norm(dim=0), (1, 2), (2,)),
    "norm_keepdim": (lambda L, x: L.linalg.vector_norm(x, dim=1, keepdim=True), (2, 2), (2, 1)),
    "normalize": (lambda L, x: L.nn.functional.normalize(x, dim=0).sum(), (2,), ()),
    "cosine_similarity": (lambda L, x: L.nn.functional.cosine_similarity(x, x.detach(), dim=0), (2,), ()),
    "sinc": (lambda L, x: L.sinc(x).sum(), (2,), ()),
    "prod": (lambda L, x: x.prod(), (2,), ()),
    "prod_dim": (lambda L, x: x.prod(0), (2,), ()),
    "sqrt": (lambda L, x: x.sqrt().sum(), (2,), ()),
    "abs": (lambda L, x: x.abs().sum(), (2,), ()),
    "relu": (lambda L, x: x.relu().sum(), (2,), ()),
    "var": (lambda L, x: x.var(), (2,), ()),
}
for _p in (2, 3, 1, 0.5, float("inf"), float("-inf"), -1):
    CASES[f"vector_norm_{_p}"] = (lambda L, x, p=_p: L.linalg.vector_norm(x, p), (2,), ())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_gradient_at_a_masked_point_as_torch(name, dtype):
    fn, shape, ct_shape = CASES[name]
    grads = []
    for L in (tg, torch):
        x = L.zeros(shape, dtype=getattr(L, dtype), requires_grad=True)
        fn(L, x).backward(L.full(ct_shape, NAN, dtype=getattr(L, dtype)))
        grads.append(x.grad.tolist())
    assert str(grads[0]) == str(grads[1])


def test_the_two_norm_still_differentiates_twice_as_torch():
    results = []
    for L in (tg, torch):
        x = L.tensor([[3.0, -4.0], [0.0, 0.0]], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(L.linalg.vector_norm(x, dim=1).sum(), [x], create_graph=True)
        (gg,) = L.autograd.grad((g * L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)).sum(), [x])
        results.append((g.tolist(), gg.tolist()))
    assert str(results[0]) == str(results[1])


@pytest.mark.parametrize("seed", range(6))
def test_cumprod_gradient_behind_a_zero_as_pytorch(seed):
    """PyTorch's cumprod backward sums only the terms a zero does not cancel (before the first zero: up to it;
    at it: up to the second one): NaN and inf gradients behind a zero give its numbers, and the gradient taken
    with create_graph differentiates again as the exact one."""
    import numpy as np
    rng = np.random.default_rng(seed)
    for _ in range(20):
        shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(1, 4)))
        x = rng.choice([0.0, 1.5, -0.5, 2.0, 0.7], size=shape)
        g = rng.choice([1.0, -2.0, NAN, float("inf"), 0.5], size=shape, p=[.3, .3, .15, .1, .15])
        dim = int(rng.integers(-len(shape), len(shape)))

        def first(lib):
            t = lib.tensor(x, requires_grad=True)
            t.cumprod(dim).backward(lib.tensor(g))
            return t.grad.numpy()

        def second(lib):
            t = lib.tensor(x, requires_grad=True)
            seed_grad = lib.tensor(np.nan_to_num(g, nan=0.25, posinf=3.0))
            gr, = lib.autograd.grad(t.cumprod(dim), t, seed_grad, create_graph=True)
            if not gr.requires_grad:   # (a trivial cumulation hands the gradient on)
                return gr.detach().numpy(), None
            return gr.detach().numpy(), lib.autograd.grad((gr * seed_grad).sum(), t)[0].numpy()
        np.testing.assert_allclose(first(tg), first(torch), equal_nan=True)
        for ours, theirs in zip(second(tg), second(torch)):
            if theirs is None:
                assert ours is None
            else:
                np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-9)
