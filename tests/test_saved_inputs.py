"""Which inputs an op's backward saves, against PyTorch: an input changed in place after the op makes the
backward raise the version error exactly where PyTorch's node saved it.

PyTorch saves a value that one input's formula alone reads only when that input requires grad (hypot saves
`other` for other's gradient), one that several formulas read always (lerp's weight), and for a single
backward of all inputs (convolution, grid_sample) every input it reads. JAX's VJP reads what it recomputes
(hypot's result from both inputs, a QR's input), so the op table says what PyTorch saves (`saves_inputs`).
Each case runs every combination of inputs requiring grad, changing each input (and the result) in place
after the op, and compares the error, or the gradients, with PyTorch's."""
import itertools

import pytest

import tapegrad
from conftest import assert_close, raised

_F = [[1.5, 0.7, 0.6], [0.2, 1.9, 0.35], [0.1, 0.3, 1.7]]
_G = [[1.5, 0.3, 0.8], [0.2, 1.1, 0.45], [0.3, 0.1, 1.2]]
_H = [[0.4, -0.6, 0.3], [0.2, 0.8, -0.1], [0.5, 0.1, 0.9]]

CASES = {   # name: (number of tensor inputs, the op on them)
    "hypot": (2, lambda l, a, b, c: l.hypot(a, b)),
    "copysign": (2, lambda l, a, b, c: l.copysign(a, b)),
    "remainder": (2, lambda l, a, b, c: l.remainder(a, b)),
    "remainder_scalar": (1, lambda l, a, b, c: l.remainder(a, 0.3)),
    "nextafter": (2, lambda l, a, b, c: l.nextafter(a, b)),
    "ldexp": (2, lambda l, a, b, c: l.ldexp(a, b)),
    "polar": (2, lambda l, a, b, c: l.polar(a, b).abs()),
    "complex": (2, lambda l, a, b, c: l.complex(a, b).abs()),
    "div_floor": (2, lambda l, a, b, c: l.div(a, b, rounding_mode="floor")),
    "div_trunc": (2, lambda l, a, b, c: l.div(a, b, rounding_mode="trunc")),
    "lerp": (3, lambda l, a, b, c: l.lerp(a, b, c)),
    "addcdiv": (3, lambda l, a, b, c: l.addcdiv(a, b, c, value=0.5)),
    "addcmul": (3, lambda l, a, b, c: l.addcmul(a, b, c, value=0.5)),
    "mul": (2, lambda l, a, b, c: a * b),
    "atan2": (2, lambda l, a, b, c: l.atan2(a, b)),
    "frexp": (1, lambda l, a, b, c: l.frexp(a)[0]),
    "index_add": (2, lambda l, a, b, c: a.index_add(1, l.tensor([0, 2]), b[:, :2])),
    "index_copy": (2, lambda l, a, b, c: a.index_copy(1, l.tensor([0, 2]), b[:, :2])),
    "put": (2, lambda l, a, b, c: a.put(l.tensor([0, 4]), b[0, :2])),
    "put_accumulate": (2, lambda l, a, b, c: a.put(l.tensor([0, 4]), b[0, :2], accumulate=True)),
    "scatter": (2, lambda l, a, b, c: a.scatter(1, l.tensor([[0, 2], [1, 0], [2, 1]]), b[:, :2])),
    "prelu": (2, lambda l, a, b, c: l.nn.functional.prelu(a, b[0, :1])),
    "conv1d": (3, lambda l, a, b, c: l.nn.functional.conv1d(a[None], b[:2, None, :2].expand(2, 3, 2), c[0, :2])),
    "group_norm": (3, lambda l, a, b, c: l.nn.functional.group_norm(a[None], 3, b[0], c[0])),
    "layer_norm": (3, lambda l, a, b, c: l.nn.functional.layer_norm(a, (3,), b[0], c[0])),
    "grid_sample": (2, lambda l, a, b, c: l.nn.functional.grid_sample(
        a[None, None], b[None, :2, :2].reshape(1, 1, 2, 2) / 3, align_corners=False)),
    "embedding_bag_max": (1, lambda l, a, b, c: l.nn.functional.embedding_bag(
        l.tensor([0, 2, 1]), a, l.tensor([0, 1]), mode="max")),
    "embedding_bag_weights": (2, lambda l, a, b, c: l.nn.functional.embedding_bag(
        l.tensor([0, 2, 1]), a, l.tensor([0, 1]), per_sample_weights=b[0], mode="sum")),
    "inv": (1, lambda l, a, b, c: l.linalg.inv(a)),
    "tensorinv": (1, lambda l, a, b, c: l.linalg.tensorinv(a, 1)),
    "det": (1, lambda l, a, b, c: l.linalg.det(a)),
    "solve": (2, lambda l, a, b, c: l.linalg.solve(a, b)),
    "solve_triangular": (2, lambda l, a, b, c: l.linalg.solve_triangular(a, b, upper=True)),
    "triangular_solve": (2, lambda l, a, b, c: l.triangular_solve(b, a, upper=True)[0]),
    "cholesky_solve": (2, lambda l, a, b, c: l.cholesky_solve(b, a)),
    "lu_factor": (1, lambda l, a, b, c: l.linalg.lu_factor(a)[0]),
    "lu": (1, lambda l, a, b, c: l.linalg.lu(a)[2]),
    "lu_solve": (2, lambda l, a, b, c: l.linalg.lu_solve(*l.linalg.lu_factor(a), b)),
    "lstsq": (2, lambda l, a, b, c: l.linalg.lstsq(a, b).solution),
    "qr_r": (1, lambda l, a, b, c: l.linalg.qr(a)[1]),
    "qr_q": (1, lambda l, a, b, c: l.linalg.qr(a)[0]),
    "svd": (1, lambda l, a, b, c: l.linalg.svd(a)[1]),
    "svdvals": (1, lambda l, a, b, c: l.linalg.svdvals(a)),
    "matrix_norm_nuc": (1, lambda l, a, b, c: l.linalg.matrix_norm(a, "nuc")),
    "eigh": (1, lambda l, a, b, c: l.linalg.eigh(a)[0]),
    "eigvals": (1, lambda l, a, b, c: l.linalg.eigvals(a).real),
    "segment_reduce": (1, lambda l, a, b, c: l.segment_reduce(a.flatten(), "sum", lengths=l.tensor([4, 5]))),
}


def _backward(lib, op, requires, changed):
    leaves = [lib.tensor(v, dtype=lib.float64, requires_grad=r) for v, r in zip((_F, _G, _H), requires)]
    xs = [t * 1 for t in leaves] + [lib.tensor(_H, dtype=lib.float64)] * (3 - len(leaves))
    out = op(lib, *xs)
    if changed == "result":
        out.mul_(1.0)
    else:
        xs[changed].add_(0.01)
    wanted = [t for t, r in zip(leaves, requires) if r]
    grads = []
    error = raised(lambda: grads.extend(lib.autograd.grad(out.sum(), wanted, allow_unused=True)))
    return error, grads


def _calls():
    for name, (n, _) in CASES.items():
        for requires in itertools.product((False, True), repeat=n):
            if any(requires):
                for changed in [*range(n), "result"]:
                    yield pytest.param(name, requires, changed, id=f"{name}-{''.join('TF'[not r] for r in requires)}"
                                                                   f"-{changed}")


@pytest.mark.parametrize("name,requires,changed", list(_calls()))
def test_version_error_where_pytorch_saved(torch, name, requires, changed):
    op = CASES[name][1]
    ours, theirs = _backward(tapegrad, op, requires, changed), _backward(torch, op, requires, changed)
    assert (ours[0] is None) == (theirs[0] is None), (ours[0], theirs[0])
    if theirs[0] is not None:
        assert ours[0][0] is theirs[0][0] is RuntimeError
        assert "modified by an inplace operation" in ours[0][1] and "modified by an inplace operation" in theirs[0][1]
        return
    for g, tg in zip(ours[1], theirs[1]):
        assert (g is None) == (tg is None)
        if g is not None:
            assert_close(g, tg, rtol=1e-9, atol=1e-9)
