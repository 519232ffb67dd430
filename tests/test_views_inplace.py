"""Views share storage with their base, in-place ops rebase autograd history: all compared to PyTorch."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close

torch = pytest.importorskip("torch")

BASE = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5


def _pair(build):
    """Run build(lib, x) with a fresh x in each library; return both results."""
    return build(tapegrad, tapegrad.tensor(BASE.copy())), build(torch, torch.tensor(BASE.copy()))


VIEWS = {
    "select": lambda x: x[1],
    "slice": lambda x: x[:, 1:3],
    "step": lambda x: x[::2, ::3],
    "t": lambda x: x.t(),
    "transpose": lambda x: x.transpose(0, 1),
    "view": lambda x: x.view(2, 6),
    "reshape": lambda x: x.reshape(4, 3),
    "unsqueeze": lambda x: x.unsqueeze(0),
    "squeeze": lambda x: x.unsqueeze(1).squeeze(1),
    "permute": lambda x: x.permute(1, 0),
    "diagonal": lambda x: x.diagonal(),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(3)[2],
    "unbind": lambda x: x.unbind(1)[3],
    "movedim": lambda x: x.movedim(0, 1),
    "mT": lambda x: x.mT,
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "chain": lambda x: x.t()[1:].diagonal(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_writes_through_a_view_reach_the_base(name):
    def build(lib, x):
        v = VIEWS[name](x)
        assert v._base is x
        v.mul_(2).add_(1)
        v[0] = -3
        return x, v, x._version

    (x, v, ver), (tx, tv, tver) = _pair(build)
    assert_close(x, tx)
    assert_close(v, tv)
    assert ver == tver


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_layout_matches_pytorch(name):
    def build(lib, x):
        v = VIEWS[name](x)
        return v.is_contiguous(), tuple(v.stride()), v.storage_offset(), v.data_ptr() - x.data_ptr()

    ours, theirs = _pair(build)
    assert ours[0] == theirs[0]
    assert ours[1:] == theirs[1:]


def test_writes_to_the_base_show_in_views_and_bump_the_shared_version():
    def build(lib, x):
        v = x[1:]
        x.add_(1)
        x[2, 3] = 9
        return v.clone(), v._version, x._version

    (v, a, b), (tv, ta, tb) = _pair(build)
    assert_close(v, tv)
    assert (a, b) == (ta, tb)


def test_non_views_do_not_alias():
    def build(lib, x):
        y = x.t().contiguous()
        z = x.t().reshape(12)
        flipped = x.flip(0)
        y[0] = 100
        z[0] = 100
        flipped[0] = 100
        return x, y._base is None, z._base is None, x.t().contiguous()._base is None

    ours, theirs = _pair(build)
    assert_close(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


def test_view_of_non_contiguous_raises_like_pytorch():
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            lib.tensor(BASE).t().view(12)


GRAD_CHAINS = {
    "inplace_on_nonleaf": lambda lib, x: (x * 2).sin_().mul_(3).add_(x),
    "inplace_on_view_of_nonleaf": lambda lib, x: _through_view(x * 1, lambda v: v.mul_(3)),
    "setitem_on_nonleaf": lambda lib, x: _setitem(x * 1, (slice(None), 1), x[:, 0] ** 2),
    "view_then_base_inplace": lambda lib, x: _base_after_view(x * 1),
    "chain_of_views": lambda lib, x: _through_view(x * 1, lambda v: v.t()[0].add_(v[1, 2]), pick=lambda y: y[:2]),
    "masked_fill_inplace": lambda lib, x: (x + 0).masked_fill_(x > 0, 0.5) * x,
    "clamp_inplace": lambda lib, x: (x * 3).clamp_(-0.5, 0.5),
    "index_add_inplace": lambda lib, x: (x * 1).index_add_(0, lib.tensor([0, 0]), x[1:]),
    "scatter_inplace": lambda lib, x: (x * 1).scatter_(1, lib.tensor([[0], [1], [2]]), x[:, 3:]),
    "copy_into_view": lambda lib, x: _through_view(x * 1, lambda v: v.copy_(x[2] * 5)),
    "zero_view": lambda lib, x: _through_view(x * 2, lambda v: v.zero_()),
    "div_inplace_on_diagonal": lambda lib, x: _through_view(x * 1, lambda v: v.div_(2), pick=lambda y: y.diagonal()),
}


def _through_view(y, update, pick=lambda y: y[1]):
    update(pick(y))
    return y * y


def _setitem(y, index, value):
    y[index] = value
    return y


def _base_after_view(y):
    v = y[0]
    y.mul_(2)
    return v * y


@pytest.mark.parametrize("name", sorted(GRAD_CHAINS))
def test_gradients_through_inplace_chains(name):
    def build(lib, x):
        x.requires_grad_(True)
        out = GRAD_CHAINS[name](lib, x)
        ct = lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(tuple(out.shape)))
        (out * ct).sum().backward()
        return out, x.grad, out.grad_fn.name() if hasattr(out.grad_fn, "name") else None

    (out, g, node), (tout, tg, tnode) = _pair(build)
    assert_close(out, tout)
    assert_close(g, tg)


def test_inplace_on_view_records_one_node_on_the_base():
    def build(lib, x):
        x.requires_grad_(True)
        y = x * 1
        y[1].mul_(2)
        return y.grad_fn.name(), y[1].grad_fn.name()

    ours, theirs = _pair(build)
    assert ours == theirs


ERRORS = {
    "leaf_inplace": lambda lib, x: x.add_(1),
    "view_of_leaf_inplace": lambda lib, x: x[0].add_(1),
    "saved_input_modified": lambda lib, x: _modified_saved(x, lambda y: (y * y, y.add_(1))),
    "saved_output_modified": lambda lib, x: _modified_saved(x, lambda y: (y.exp(),), modify_result=True),
    "saved_view_modified": lambda lib, x: _modified_saved(x, lambda y: (y[0].sin(), y[0].mul_(2))),
}


def _modified_saved(x, build, modify_result=False):
    y = x * 1
    outs = build(y)
    if modify_result:
        outs[0].add_(1)
    outs[0].sum().backward()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_inplace_errors_match_pytorch(name):
    def build(lib, x):
        x.requires_grad_(True)
        try:
            ERRORS[name](lib, x)
        except RuntimeError as e:
            return str(e).split(".")[0]
        return None

    ours, theirs = _pair(build)
    assert theirs is not None
    assert ours is not None, f"PyTorch raised {theirs!r}, tapegrad did not"
    key = "modified by an inplace operation" if "modified" in theirs else theirs[:40]
    assert key in ours


def test_inplace_under_no_grad_on_leaf_is_allowed():
    def build(lib, x):
        x.requires_grad_(True)
        with lib.no_grad():
            x[0].mul_(2)
            x.add_(1)
        (x * x).sum().backward()
        return x.grad

    ours, theirs = _pair(build)
    assert_close(ours, theirs)


def test_inplace_dtype_errors():
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            lib.tensor([1, 2]).div_(2)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            lib.zeros(3).add_(lib.ones(2, 3))


def test_view_inplace_methods_rebind_shape():
    def build(lib, x):
        y = x.clone()
        y.t_()
        y.unsqueeze_(0)
        y.squeeze_()
        y.transpose_(0, 1)
        return y

    ours, theirs = _pair(build)
    assert_close(ours, theirs)
