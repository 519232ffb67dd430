"""autograd.forward_ad against torch.autograd.forward_ad: tangents through the op table, errors, levels."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, fold_repr


def _data(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), dtype=lib.float64)


# name -> f(lib, x, w): x is (4, 6), w is (5, 6); every result's tangent is compared
OPS = {
    "elementwise": lambda lib, x, w: (x.sin() * x.exp() - x / (1 + x * x)).tanh() ** 2,
    "binary_broadcast": lambda lib, x, w: lib.maximum(x, x[0]) + lib.atan2(x, x.flip(0) + 2),
    "matmul": lambda lib, x, w: x @ w.t(),
    "addmm_bmm": lambda lib, x, w: lib.addmm(w[:4, :5], x, w.t()) + lib.bmm(x[None], w.t()[None])[0],
    "reductions": lambda lib, x, w: lib.stack([x.sum(), x.mean(), x.prod(), x.var(), x.norm(),
                                                x.logsumexp(1).sum(), x.amax()]),
    "max_dim": lambda lib, x, w: x.max(dim=1).values + x.cumsum(0)[-1, :4],
    "views": lambda lib, x, w: x.t().reshape(3, 8)[1:, ::2].unsqueeze(0).permute(2, 0, 1).expand(4, 2, 2),
    "indexing": lambda lib, x, w: x[[0, 2, 3, 1]][:, 1:4] + x.gather(1, lib.tensor([[0], [1], [2], [3]])),
    "cat_where": lambda lib, x, w: lib.where(x > 0, lib.cat([x, x]).view(2, 4, 6)[1], x * 3),
    "softmax": lambda lib, x, w: lib.nn.functional.softmax(x, dim=1) + lib.nn.functional.log_softmax(x, 0),
    "linear_layernorm": lambda lib, x, w: lib.nn.functional.layer_norm(
        lib.nn.functional.gelu(lib.nn.functional.linear(x, w, w[0, :5])), (5,)),
    "losses": lambda lib, x, w: lib.nn.functional.mse_loss(x, x.flip(1)) + lib.nn.functional.cross_entropy(
        x, lib.tensor([1, 0, 5, 2])),
    "conv_pool": lambda lib, x, w: lib.nn.functional.max_pool1d(
        lib.nn.functional.conv1d(x.view(1, 4, 6), w[:3, :4, None].expand(3, 4, 2).contiguous()), 2),
    "linalg": lambda lib, x, w: lib.linalg.solve(x[:, :4] @ x[:, :4].t() + lib.eye(4, dtype=lib.float64), x),
}


@pytest.mark.parametrize("name", list(OPS))
def test_tangent_matches_pytorch(torch, name):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        x, w = _data(lib, 4, 6), _data(lib, 5, 6, seed=1)
        tx, tw = _data(lib, 4, 6, seed=2), _data(lib, 5, 6, seed=3)
        with fwAD.dual_level():
            out = OPS[name](lib, fwAD.make_dual(x, tx), fwAD.make_dual(w, tw))
            primal, tangent = fwAD.unpack_dual(out)
        return primal, tangent
    (p, t), (tp, tt) = both(build)
    assert_close(p, tp)
    assert_close(t, tt)


def test_only_some_inputs_dual_and_modules(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(6, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2)).double()
        for p, v in zip(model.parameters(), [_data(lib, 5, 6, seed=7), _data(lib, 5, seed=8),
                                             _data(lib, 2, 5, seed=9), _data(lib, 2, seed=10)]):
            with lib.no_grad():
                p.copy_(v)
        x = _data(lib, 4, 6)
        with fwAD.dual_level():
            out = model(fwAD.make_dual(x, _data(lib, 4, 6, seed=2)))
            return fwAD.unpack_dual(out).tangent, fwAD.unpack_dual(out * x[:, :2]).tangent
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_integer_results_and_detach_have_no_tangent(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(_data(lib, 5), _data(lib, 5, seed=1))
            return [fwAD.unpack_dual(v).tangent is None for v in
                    (d.argmax(), d > 0, d.detach(), d.sort().indices, _data(lib, 5) + 1)]
    ours, theirs = both(build)
    assert ours == theirs == [True] * 5


def test_inplace_and_dtype_conversion(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        with fwAD.dual_level():
            d = fwAD.make_dual(_data(lib, 5).float(), _data(lib, 5, seed=1).float())
            e = d.clone()
            e.mul_(3).sin_()
            return fwAD.unpack_dual(e).tangent, fwAD.unpack_dual(d.double()).tangent
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_forward_over_reverse(torch):
    """A tangent that requires grad is differentiable: a Hessian-vector product."""
    def build(lib):
        fwAD = lib.autograd.forward_ad
        x = _data(lib, 5).requires_grad_()
        v = _data(lib, 5, seed=1)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, v)
            y = (d.sin() * d).sum()
            tangent = fwAD.unpack_dual(y).tangent
            tangent.backward()
        return tangent, x.grad
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_unpacked_dual_tensor_and_identity(torch):
    fwAD = tapegrad.autograd.forward_ad
    x, t = _data(tapegrad, 3), _data(tapegrad, 3, seed=1)
    assert fwAD.unpack_dual(x).primal is x and fwAD.unpack_dual(x).tangent is None
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, t)
        u = fwAD.unpack_dual(d)
        assert isinstance(u, fwAD.UnpackedDualTensor) and u._fields == ("primal", "tangent")
        assert u.tangent is t and u.primal is not d and fwAD.unpack_dual(u.primal).tangent is None
    assert fwAD.unpack_dual(d).tangent is None   # tangents die with their level

    @fwAD.dual_level()
    def inside():
        return fwAD.unpack_dual(fwAD.make_dual(x, t)).tangent is t
    assert inside()


def _error(lib, action):
    fwAD = lib.autograd.forward_ad
    x, t = _data(lib, 3), _data(lib, 3, seed=1)
    cases = {
        "no level": lambda: fwAD.make_dual(x, t),
        "size": lambda: fwAD.make_dual(x, _data(lib, 4)),
        "int primal": lambda: fwAD.make_dual(lib.arange(3), t),
        "int tangent": lambda: fwAD.make_dual(x, lib.arange(3)),
        "twice": lambda: fwAD.make_dual(fwAD.make_dual(x, t), t),
        "level": lambda: fwAD.make_dual(x, t, level=5),
        "nested": lambda: fwAD.dual_level().__enter__(),
        "exit other": lambda: fwAD.exit_dual_level(level=3),
    }
    try:
        if action == "no level":
            cases[action]()
        else:
            with fwAD.dual_level():
                cases[action]()
    except Exception as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("action", ["no level", "size", "int primal", "int tangent", "twice", "level", "nested",
                                    "exit other"])
def test_errors_as_pytorch(torch, action):
    ours, theirs = both(lambda lib: _error(lib, action))
    ours = (ours[0], fold_repr(ours[1]))
    assert ours[0] == theirs[0]
    assert ours[1].startswith(theirs[1].split(" level 0")[0]), (ours[1], theirs[1])


def test_exit_without_level(torch):
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
            lib.autograd.forward_ad.exit_dual_level()


# ---- forward-over-reverse: a gradient taken inside a level carries a tangent --------------------------

# name -> loss(lib, d, w) of the dual input d (x with tangent v; x requires grad); w: (5, 6) weights
HVP_LOSSES = {
    "pow": lambda lib, d, w: (d ** 3).sum(),
    "sin_mul": lambda lib, d, w: (d.sin() * d).sum(),
    "tanh_reads_its_result": lambda lib, d, w: d.tanh().sum(),
    "mlp": lambda lib, d, w: (lib.nn.functional.softplus(lib.tanh(d @ w.t()) @ w) ** 2).mean(),
    "layer_norm_sigmoid": lambda lib, d, w: (lib.nn.functional.layer_norm(d, (6,)).sigmoid() * w[:4]).sum(),
}


def _hvp(lib, name, create_graph):
    fwAD = lib.autograd.forward_ad
    x, w = _data(lib, 4, 6).requires_grad_(), _data(lib, 5, 6, seed=1)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, _data(lib, 4, 6, seed=2))
        g, = lib.autograd.grad(HVP_LOSSES[name](lib, d, w), x, create_graph=create_graph)
        primal, tangent = fwAD.unpack_dual(g)
        flags = (g.requires_grad, tangent.requires_grad, primal.grad_fn and primal.grad_fn.name())
        third = lib.autograd.grad(tangent.sum(), x)[0] if create_graph else None
    return primal, tangent, flags, third


@pytest.mark.parametrize("create_graph", [True, False])
@pytest.mark.parametrize("name", list(HVP_LOSSES))
def test_gradient_in_a_level_carries_its_tangent(torch, name, create_graph):
    """The tangent of a gradient is a Hessian-vector product, with create_graph or without (then neither
    requires grad); with create_graph it is differentiable again."""
    (p, t, flags, third), (tp, tt, tflags, tthird) = both(lambda lib: _hvp(lib, name, create_graph))
    assert_close(p, tp)
    assert_close(t, tt)
    assert flags == tflags
    if create_graph:
        assert_close(third, tthird)


def _hvp_variants(lib):
    fwAD = lib.autograd.forward_ad
    x, w = _data(lib, 5).requires_grad_(), _data(lib, 5, seed=1)
    v = _data(lib, 5, seed=2).requires_grad_()
    out = []
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        # a seed with a tangent of its own
        seed = fwAD.make_dual(_data(lib, 5, seed=3), _data(lib, 5, seed=4))
        out.append(fwAD.unpack_dual(lib.autograd.grad(d.exp(), x, seed, create_graph=True)[0]).tangent)
        # the tangent on another input (not differentiated): d(grad_x (x*w).sum())/dw . tw = tw
        wd = fwAD.make_dual(w, _data(lib, 5, seed=5))
        out.append(fwAD.unpack_dual(lib.autograd.grad((x * wd).sin().sum(), x, create_graph=True)[0]).tangent)
        # the gradient of the tangent with respect to the tangent vector v
        tangent = fwAD.unpack_dual(lib.autograd.grad((d ** 3).sum(), x, create_graph=True)[0]).tangent
        out.append(lib.autograd.grad(tangent.sum(), v)[0])
        # a tensor hook on the way: the backward is recorded node by node
        h = d.sin() * d
        h.register_hook(lambda g: g * 2)
        out.append(fwAD.unpack_dual(lib.autograd.grad(h.tanh().sum(), x, create_graph=True)[0]).tangent)
        # backward(create_graph=True) accumulates a .grad with a tangent; a plain backward's has none
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (d.cos() * d).sum().backward(create_graph=True)
        out.append(fwAD.unpack_dual(x.grad).tangent)
        x.grad = None
        (d ** 2).sum().backward()
        out.append(fwAD.unpack_dual(x.grad).tangent is None)
    return out


def test_gradient_tangent_variants(torch):
    ours, theirs = both(_hvp_variants)
    for a, b in zip(ours[:-1], theirs[:-1]):
        assert_close(a, b)
    assert ours[-1] is theirs[-1] is True


def test_dual_tensor_repr_shows_its_tangent(torch):
    def build(lib):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with fwAD.dual_level():
            d = fwAD.make_dual(x, lib.tensor([1.0, 0.0, 0.5]))
            return [repr(d), repr(fwAD.make_dual(lib.tensor(1.5), lib.tensor(2.0))),
                    repr(fwAD.make_dual(lib.zeros(2, 3, dtype=lib.float64), lib.ones(2, 3, dtype=lib.float64))),
                    repr(fwAD.unpack_dual(d * 2).primal), repr(x)]
    ours, theirs = both(build)
    assert [fold_repr(r) for r in ours] == theirs
