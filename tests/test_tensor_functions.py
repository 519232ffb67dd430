"""torch's statistics, combinatorics, integration, products, index writes, dtype questions, view copies and the
Tensor methods beside them (quantile ... as_strided_scatter), against PyTorch: values, dtypes, gradients,
grad_fn names and errors. The op-table entries they record have specs in op_specs_tensor_functions.py."""
import warnings

import numpy as np
import pytest

import tapegrad

from conftest import raised, require

torch = require("torch")

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4))
V3, V4 = RNG.standard_normal(3), RNG.standard_normal(4)
WITH_NAN = X.copy()
WITH_NAN[0, 1] = WITH_NAN[2, 3] = np.nan


def _tensors(lib, arrays, grad):
    out = []
    for a in arrays:
        t = lib.tensor(np.asarray(a))
        if grad and t.dtype.is_floating_point:
            t.requires_grad_(True)
        out.append(t)
    return out


def _flat(out):
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _run(lib, fn, arrays, grad):
    inputs = _tensors(lib, arrays, grad)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = _flat(fn(lib, *inputs))
    grads = None
    carrying = [o for o in outs if o.requires_grad]
    if grad and carrying:
        # weights 1, 2, 3, ... so that every element's gradient is told apart
        loss = sum((o * lib.arange(1, o.numel() + 1, dtype=o.dtype).reshape(o.shape)).sum() for o in carrying)
        found = lib.autograd.grad(loss, [t for t in inputs if t.requires_grad], allow_unused=True)
        grads = [None if g is None else g.numpy() for g in found]
    return outs, grads


def same(fn, *arrays, grad=True, rtol=1e-7):
    """fn(lib, *tensors) gives PyTorch's values, dtypes, requires_grad, grad_fn names and input gradients."""
    theirs, their_grads = _run(torch, fn, arrays, grad)
    ours, our_grads = _run(tapegrad, fn, arrays, grad)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(o.shape) == tuple(t.shape)
        assert o.requires_grad == t.requires_grad
        assert (o.grad_fn and o.grad_fn.name()) == (t.grad_fn and t.grad_fn.name())
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-12, equal_nan=True)
    for o, t in zip(our_grads or [], their_grads or []):
        if t is None:
            assert o is None or not np.any(o)
        else:
            np.testing.assert_allclose(o, t, rtol=rtol, atol=1e-12)
    return ours


def same_error(fn, *arrays):
    """fn raises PyTorch's exception type, its message starting with PyTorch's (first line)."""
    theirs = raised(lambda: fn(torch, *_tensors(torch, arrays, False)))
    ours = raised(lambda: fn(tapegrad, *_tensors(tapegrad, arrays, False)))
    assert theirs is not None and ours is not None, (theirs, ours)
    assert ours[0].__name__ == theirs[0].__name__, (ours, theirs)
    assert ours[1].startswith(theirs[1].split("\n")[0].replace("torch.", "torch.")), (ours, theirs)


# ---- quantile, nanquantile, nanmedian ------------------------------------------------------------------

@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_interpolations(interpolation):
    q = np.array([0.0, 0.3, 0.5, 1.0])
    same(lambda lib, x: lib.quantile(x, 0.3, interpolation=interpolation), X)
    same(lambda lib, x, q: x.quantile(q, dim=0, keepdim=True, interpolation=interpolation), X, q)
    same(lambda lib, x, q: lib.nanquantile(x, q, 1, interpolation=interpolation), WITH_NAN, q)


def test_quantile_nan_float32_and_keepdim():
    same(lambda lib, x: lib.quantile(x, 0.37, dim=1), WITH_NAN)   # a row with NaN is NaN
    same(lambda lib, x: lib.nanquantile(x.float(), 0.37), WITH_NAN, rtol=1e-6)
    same(lambda lib, x: lib.quantile(x, 0.75, keepdim=True), X)
    same(lambda lib, x: lib.nanquantile(x, 0.5, dim=0), np.full((2, 3), np.nan))


def test_quantile_errors():
    same_error(lambda lib, x: lib.quantile(x, 1.5), X)
    same_error(lambda lib, x: lib.quantile(x, lib.tensor([0.5, 1.5], dtype=x.dtype)), X)
    same_error(lambda lib, x: lib.quantile(x, lib.tensor([0.5])), X)   # float32 q, float64 input
    same_error(lambda lib, x: lib.quantile(x, lib.tensor([[0.5]], dtype=x.dtype)), X)
    same_error(lambda lib, x: lib.quantile(x.long(), 0.5), X)
    same_error(lambda lib, x: lib.quantile(x, 0.5, interpolation="cubic"), X)
    same_error(lambda lib, x: lib.nanquantile(x[:, :0], 0.5, dim=1), X)


def test_nanmedian():
    same(lambda lib, x: lib.nanmedian(x), WITH_NAN)
    same(lambda lib, x: x.nanmedian(1), WITH_NAN)
    same(lambda lib, x: lib.nanmedian(x, 0, keepdim=True), WITH_NAN)
    same(lambda lib, x: lib.nanmedian(x), np.full(3, np.nan))   # all NaN: the gradient spread over all
    same(lambda lib, x: lib.nanmedian(x), np.zeros(0))
    same(lambda lib, x: (lib.nanmedian(x), lib.nanmedian(x, 0)), np.array([3, 1, 2, 5]))
    same_error(lambda lib, x: lib.nanmedian(x, 1), np.zeros((2, 0)))
    same_error(lambda lib, x: lib.nanmedian(x.bool()), X)
    assert repr(tapegrad.nanmedian(tapegrad.tensor([1.0, 2.0]), 0)).startswith("torch.return_types.nanmedian(")


# ---- histc, histogram, bucketize, isin -------------------------------------------------------------------

def test_histc_counts_and_records_nothing():
    same(lambda lib, x: lib.histc(x, bins=5), X)
    same(lambda lib, x: x.float().histc(4, min=-1, max=1), X)
    same(lambda lib, x: lib.histc(x, 3), np.array([1.0, 1.0]))   # equal extremes: one wider on each side
    same(lambda lib, x: lib.histc(x, 4, min=0, max=4), np.array([0.0, 1.0, 2.0, 4.0, 7.0, np.nan]))
    same_error(lambda lib, x: lib.histc(x, min=2, max=1), X)
    same_error(lambda lib, x: lib.histc(x, bins=0), X)
    same_error(lambda lib, x: lib.histc(x.long()), X)
    same_error(lambda lib, x: lib.histc(x), np.array([1.0, np.nan]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("bins, lo, hi", [(13, 0, 0), (100, -2.9, 2.7), (7, 0.1, 0.95), (1, 0, 0)])
def test_histc_puts_elements_at_an_edge_in_torchs_bin(dtype, bins, lo, hi):
    """Each element's bin is PyTorch's (x - lo) * bins, then divided by (hi - lo), each rounded to the dtype:
    XLA's multiply by the range's reciprocal moved elements near an edge into the next bin. (Half precision
    counts in float32 here; PyTorch's in the dtype, per thread, so past 256 (bfloat16) or 2048 (float16) in a
    bin its counts depend on its thread count: the half-precision data stays below.)"""
    n = 3001 if dtype.startswith("float") and dtype != "float16" else 241

    def counts(lib):   # (elements on many edges; not lib.linspace, whose vectorised float32 steps round otherwise)
        x = lib.tensor(np.linspace(-3, 3, n)).to(getattr(lib, dtype))
        return lib.histc(x, bins=bins, min=lo, max=hi)
    for _ in range(2):   # (first sight, then a repeat)
        ours, theirs = counts(tapegrad), counts(torch)
        assert str(ours.dtype).split(".")[-1] == dtype
        np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_histogram():
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    same(lambda lib, x: lib.histogram(x, 3), X, grad=False)
    same(lambda lib, x: x.histogram(), X, grad=False)
    same(lambda lib, x: x.float().histogram(4, range=(0.0, 1.0), density=True), X, grad=False, rtol=1e-6)
    same(lambda lib, x, b, w: lib.histogram(x, b, weight=w), X, edges, np.abs(X), grad=False)
    same(lambda lib, x, b: lib.histogram(x, b, density=True), X, edges, grad=False)
    same(lambda lib, x: lib.histogram(x, 4), np.array([1.0, 1.0]), grad=False)
    same(lambda lib, x: lib.histogram(x, 2), np.zeros(0), grad=False)   # empty: edges over [0, 1]
    same(lambda lib, x: lib.histogram(x, 2, range=(2.0, 2.0)), np.zeros(0), grad=False)
    assert repr(tapegrad.histogram(tapegrad.tensor([1.0]), 1)).startswith("torch.return_types.histogram(")
    same_error(lambda lib, x: lib.histogram(x, 3, range=(4.0, 0.0)), X)
    same_error(lambda lib, x: lib.histogram(x, 3, weight=x[0]), X)
    same_error(lambda lib, x: lib.histogram(x, lib.tensor([0.0, 1.0])), X)
    same_error(lambda lib, x: lib.histogram(x.long(), 3), X)


def test_bucketize_and_isin():
    same(lambda lib, x, b: (lib.bucketize(x, b), lib.bucketize(x, b, right=True, out_int32=True)), X,
         np.array([-1.0, 0.0, X[1, 1]]))
    same(lambda lib, b: lib.bucketize(0.5, b), np.array([-1.0, 0.0, 1.0]))
    same_error(lambda lib, x, b: lib.bucketize(x, b), X, np.ones((1, 3)))
    ints = np.array([[1, 2], [3, 4]])
    same(lambda lib, a, b: (lib.isin(a, b), lib.isin(a, b, invert=True)), ints, np.array([2.0, 4.0]))
    same(lambda lib, a: (lib.isin(2, a), lib.isin(a, 2, assume_unique=True)), ints)
    same(lambda lib, x: lib.isin(x, x[0]), WITH_NAN)   # NaN is in nothing; the result requires no grad
    same_error(lambda lib, a: lib.isin(a, a), np.array([True]))
    same_error(lambda lib, a: lib.isin(a, a * 1j), X)
    assert not hasattr(tapegrad.Tensor, "isin") and not hasattr(tapegrad.Tensor, "bucketize")


# ---- combinatorics and integration ---------------------------------------------------------------------------

def test_block_diag_cartesian_prod_combinations():
    same(lambda lib, a, b, c: lib.block_diag(a, b, c), X, V3, np.array(2.0))
    same(lambda lib: lib.block_diag())
    same(lambda lib, a, b: lib.cartesian_prod(a, b, a), V3, V4)
    same(lambda lib, a: lib.cartesian_prod(a), V3)
    same(lambda lib, a: (lib.combinations(a), lib.combinations(a, 3)), V4)
    same(lambda lib, a: lib.combinations(a, 2, with_replacement=True), V3)
    same(lambda lib, a: (lib.combinations(a, 0), lib.combinations(a, r=5)), V3)
    same_error(lambda lib, a: lib.block_diag(a[None]), X)
    same_error(lambda lib, a, b: lib.cartesian_prod(a, b), V3, np.array([1, 2]))
    same_error(lambda lib, a: lib.cartesian_prod(a), X)
    same_error(lambda lib, a: lib.combinations(a), X)
    same_error(lambda lib, a: lib.combinations(a, r=-1), V3)


def test_trapezoid_family():
    same(lambda lib, y: (lib.trapezoid(y), lib.trapezoid(y, dx=0.5, dim=0), lib.trapz(y, dx=2)), X)
    same(lambda lib, y, x: (lib.trapezoid(y, x), lib.trapz(y, x), lib.cumulative_trapezoid(y, x)), X, V4)
    same(lambda lib, y, x: lib.trapezoid(y, x, dim=0), X, V3)
    same(lambda lib, y, x: lib.trapezoid(y, x), X, X + 1)
    same(lambda lib, y: (lib.cumulative_trapezoid(y), lib.cumulative_trapezoid(y, dx=3, dim=0)), X)
    same(lambda lib, y: (lib.trapezoid(y), lib.trapezoid(y, y), lib.cumulative_trapezoid(y, dx=2)), np.array([1, 2, 4]))
    same(lambda lib, y: (lib.trapezoid(y), lib.cumulative_trapezoid(y)), np.zeros((2, 0)))
    same_error(lambda lib, y, x: lib.trapezoid(y, x), X, V3)
    same_error(lambda lib, y, x: lib.cumulative_trapezoid(y, x), X, V3)
    same_error(lambda lib, y: lib.trapezoid(y, dx=1j), X)
    same_error(lambda lib, y: lib.trapezoid(y.bool()), X)


# ---- products ---------------------------------------------------------------------------------------------------

def test_addr_addbmm_chain_matmul_inverse():
    b1, b2 = RNG.standard_normal((2, 3, 5)), RNG.standard_normal((2, 5, 4))
    same(lambda lib, a, u, v: (lib.addr(a, u, v), a.addr(u, v, beta=0.5, alpha=2), (a * 1).addr_(u, v, beta=0)),
         X, V3, V4)
    same(lambda lib, a, u, v: lib.addr(a.float(), u, v), V4, V3, V4)   # the operands promote; input broadcasts
    same(lambda lib, a, u, v: lib.addr(a, u, v), np.zeros((3, 4), bool), V3 > 0, V4 > 0)
    same(lambda lib, a, b, c: (lib.addbmm(a, b, c), a.addbmm(b, c, beta=0.5, alpha=2), (a * 1).addbmm_(b, c)),
         X, b1, b2)
    same(lambda lib, a, b, c: lib.addbmm(a, b, c, beta=2), V4, b1[:0], b2[:0])
    same(lambda lib, a: (lib.chain_matmul(a, a.mT, a), lib.chain_matmul(a, a.mT), lib.chain_matmul(a)), X)
    same(lambda lib, a: lib.linalg.multi_dot([a[0], a.mT, a]), X)
    same(lambda lib, a: (lib.inverse(a[:, :3]), a[:, 1:].inverse()), X)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        tapegrad.chain_matmul(tapegrad.ones(2, 2))
    same_error(lambda lib, a, u, v: lib.addr(a, u, v, beta=2.5), np.ones((3, 4), int), np.arange(3), np.arange(4))
    same_error(lambda lib, a, u, v: lib.addr(a, u, v, alpha=True), X, V3, V4)
    same_error(lambda lib, a, u, v: lib.addr(a, a, v), X, V3, V4)
    same_error(lambda lib, a, b, c: lib.addbmm(a, b[0], c), X, b1, b2)
    same_error(lambda lib, a, b, c: lib.addbmm(a, b, c[:1]), X, b1, b2)
    same_error(lambda lib, a, b, c: lib.addbmm(a, b, c[:, :4]), X, b1, b2)
    same_error(lambda lib, a, b, c: lib.addbmm(a.float(), b, c), X, b1, b2)
    same_error(lambda lib, a: lib.chain_matmul(a, a), X)
    same_error(lambda lib, a: lib.chain_matmul(a[0], a), X)
    same_error(lambda lib: lib.chain_matmul())


# ---- writes at indices, dtype questions -----------------------------------------------------------------------

def test_index_put_put_index_reduce():
    index = np.array([0, -1, 5])
    same(lambda lib, a, v: (lib.index_put(a, (lib.tensor([0, 2]),), v), lib.index_put_(a * 1, (lib.tensor([1]),), v)),
         X, V4)
    same(lambda lib, a, s: (lib.put(a, lib.tensor(index), s), (a * 1).put_(lib.tensor([0, 0, 5]), s, True)), X, V3)
    for reduce in ("prod", "mean", "amax", "amin"):
        same(lambda lib, a, s: (lib.index_reduce(a, 0, lib.tensor([0, 2, 0]), s, reduce),
                                (a * 1).index_reduce_(1, lib.tensor([2, 1, 2]), s.mT, reduce, include_self=False)),
             X[:, :3], X[:3, :3] + 0.5)
    same(lambda lib, a, s: lib.index_reduce(a, 0, lib.tensor([0, 0]), s, "mean"), np.arange(6).reshape(3, 2),
         np.array([[1, 2], [2, 3]]))
    same_error(lambda lib, a, s: lib.put(a, lib.tensor(index), s.float()), X, V3)
    same_error(lambda lib, a, s: lib.put(a, lib.tensor(index).int(), s), X, V3)
    same_error(lambda lib, a, s: lib.put(a, lib.tensor(index[:2]), s), X, V3)
    same_error(lambda lib, a, s: lib.put(a, lib.tensor([12]), s[:1]), X, V3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([0]), a[:1], "sum"), X)
        same_error(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([3]), a[:1], "prod"), X)
        same_error(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([0]), a[:1, :2], "prod"), X)
        same_error(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([0]), a[:1].float(), "prod"), X)
        same_error(lambda lib, a: lib.index_reduce(a, 0, lib.tensor([[0]]), a[:1], "prod"), X)


def test_unravel_index_result_type_can_cast_is_signed():
    same(lambda lib, i: lib.unravel_index(i, (3, 2)), np.array([4, 1, -1, 7]))
    same(lambda lib, i: (lib.unravel_index(i.int(), 6), lib.unravel_index(i, lib.Size([2, 3]))), np.array([[4, 1]]))
    same(lambda lib, i: lib.unravel_index(i, ()), np.array([1]))
    same_error(lambda lib, i: lib.unravel_index(i, (3, -2)), np.array([1]))
    same_error(lambda lib, i: lib.unravel_index(i.float(), (3, 2)), np.array([1]))
    for lib_pair in [(torch, tapegrad)]:
        results = []
        for lib in lib_pair:
            x = lib.ones(3)
            results.append([str(d).split(".")[-1] for d in (
                lib.result_type(x, 1.0), lib.result_type(x.long(), 1.5), lib.result_type(2, 1.0),
                lib.result_type(lib.tensor(1.0, dtype=lib.float64), x.half()), lib.result_type(True, 2),
                lib.result_type(x.long(), lib.tensor(1.5)))])
            dtypes = (lib.float32, lib.int32, lib.bool, lib.complex64, lib.uint8)
            results.append([lib.can_cast(a, b) for a in dtypes for b in dtypes])
            results.append([lib.is_signed(x), lib.is_signed(x.bool()), lib.is_signed(x.to(lib.uint8)), x.is_signed()])
        assert results[:3] == results[3:]
    assert raised(lambda: tapegrad.is_signed(1))[0] is TypeError


# ---- Tensor methods: unfold, sum_to_size, fill_diagonal_, new, itemsize, nbytes -------------------------------

def test_unfold_is_a_view():
    same(lambda lib, x: (x.unfold(1, 2, 1), x.unfold(0, 2, 2), x[0, 0].unfold(0, 1, 1)), X)
    for lib in (torch, tapegrad):
        x = lib.tensor(X)
        w = x.unfold(1, 2, 2)
        assert w._base is x and w.stride() == (4, 2, 1)
        w.mul_(0)
        assert not x.any()
    same(lambda lib, x: (lambda y: (y.unfold(1, 3, 1)[:, 0].add_(1), y)[1])(x * 1), X)   # CopySlices
    for bad in [(1, 5, 1), (1, 2, 0), (1, -1, 1), (2, 1, 1)]:
        same_error(lambda lib, x: x.unfold(*bad), X)


def test_sum_to_size_and_fill_diagonal_():
    same(lambda lib, x: (x.sum_to_size(1, 4), x.sum_to_size(4), x.sum_to_size((3, 1))), X)
    x = tapegrad.tensor(X)
    assert x.sum_to_size(3, 4) is x
    same_error(lambda lib, x: x.sum_to_size(2, 4), X)
    same(lambda lib, x: ((x * 1).fill_diagonal_(0.5), (x * 1).t().fill_diagonal_(2)), X)
    same(lambda lib, x: ((x * 1).fill_diagonal_(2, wrap=True), (x * 1).fill_diagonal_(2)), RNG.standard_normal((7, 3)))
    same(lambda lib, x: (x * 1).fill_diagonal_(-1), RNG.standard_normal((2, 2, 2)))
    same_error(lambda lib, x: x.fill_diagonal_(2), np.ones((2, 2, 3)))
    same_error(lambda lib, x: x.fill_diagonal_(2), np.ones(2))


def test_new_itemsize_nbytes():
    for args in [(), ((2, 3),), ([[1, 2]],)]:
        same(lambda lib, x: x.new(*args), X, grad=False)
    for args in [lambda lib: (2, 3), lambda lib: (lib.Size([2, 3]),)]:   # (uninitialised in PyTorch: shapes only)
        made = [lib.tensor(X).float().new(*args(lib)) for lib in (torch, tapegrad)]
        assert [(tuple(t.shape), str(t.dtype)[-7:], t.requires_grad) for t in made] == \
            [(tuple(made[0].shape), "float32", False)] * 2
    same_error(lambda lib, x: x.new(2.5), X)
    for lib_pair in [(torch, tapegrad)]:
        sizes = [(x.itemsize, x.nbytes, x[:, :1].nbytes, x.expand(2, 3, 4).nbytes, x.half().itemsize)
                 for x in (lib.tensor(X) for lib in lib_pair)]
        assert sizes[0] == sizes[1]


# ---- copies of views --------------------------------------------------------------------------------------------

COPIES = [("view_copy", ((2, 6),)), ("t_copy", ()), ("transpose_copy", (0, 1)), ("permute_copy", ((1, 0),)),
          ("expand_copy", ((2, 3, 4),)), ("squeeze_copy", ()), ("unsqueeze_copy", (1,)), ("select_copy", (1, 2)),
          ("slice_copy", (1, 1, None, 2)), ("slice_copy", ()), ("diagonal_copy", (1,)), ("alias_copy", ()),
          ("unbind_copy", (1,)), ("split_copy", (2, 1)), ("split_with_sizes_copy", ([1, 2],)),
          ("unfold_copy", (1, 2, 1)), ("as_strided_copy", ((2, 2), (1, 4))), ("narrow_copy", (1, 1, 2)),
          ("split_with_sizes", ([1, 2],)), ("unsafe_split", (2, 1)), ("unsafe_chunk", (3, 1)),
          ("unsafe_split_with_sizes", ([3, 1], 1))]


@pytest.mark.parametrize("name,args", COPIES, ids=[f"{n}{a}" for n, a in COPIES])
def test_copies_of_views(name, args):
    same(lambda lib, x: getattr(lib, name)(x, *args), X)
    same(lambda lib, x: getattr(lib, name)(x.t().t(), *args), X)   # a view's copy
    for lib in (torch, tapegrad):
        x = lib.tensor(X)
        for piece in _flat(getattr(lib, name)(x, *args)):
            assert (piece._base is not None) == (name == "split_with_sizes")   # only it returns views
    assert hasattr(tapegrad.Tensor, name) == hasattr(torch.Tensor, name)


def test_copies_special_cases():
    c = RNG.standard_normal((3, 2))
    same(lambda lib, x: (lib.squeeze_copy(x[None], 0), lib.squeeze_copy(x[None], (0,))), X)
    same(lambda lib, x: (lib.view_copy(x, lib.int64), lib.view_copy(x, lib.float64)), X)
    same(lambda lib, x: lib.view_as_real_copy(lib.view_as_complex(x)), c)
    same(lambda lib, x: lib.view_as_complex_copy(x.detach()), c)
    same_error(lambda lib, x: lib.view_as_complex_copy(x.requires_grad_()), c)
    assert tapegrad.permute_copy(tapegrad.tensor(X), (1, 0)).is_contiguous()
    same_error(lambda lib, x: lib.narrow_copy(x, 1, 3, 2), X)
    same_error(lambda lib, x: lib.split_with_sizes(x, [3, 2], 1), X)


def test_as_strided_scatter():
    s = RNG.standard_normal((2, 2))
    # the source's gradient is PyTorch's; the input's is the derivative (PyTorch's 2.x formula passes the
    # gradient where src was written and drops it elsewhere, failing its own gradcheck)
    for lib in (torch, tapegrad):
        x, src = (lib.tensor(a, requires_grad=True) for a in (X, s))
        out = lib.as_strided_scatter(x, src, (2, 2), (4, 2), 3)
        assert out.grad_fn.name() == "AsStridedScatterBackward0"
        weights = lib.arange(1.0, 13.0, dtype=lib.float64).view(3, 4)
        g_x, g_src = lib.autograd.grad((out * weights).sum(), (x, src))
        np.testing.assert_allclose(g_src.numpy(), [[4, 6], [8, 10]])
        if lib is tapegrad:
            written = np.isin(np.arange(12), [3, 5, 7, 9]).reshape(3, 4)
            np.testing.assert_allclose(g_x.numpy(), np.where(written, 0, weights.numpy()))
            np.testing.assert_allclose(out.detach().numpy(), torch.as_strided_scatter(
                torch.tensor(X), torch.tensor(s), (2, 2), (4, 2), 3).numpy())
    same(lambda lib, x, s: x.as_strided_scatter(s, (2, 2), (1, 2), 1), X, s, grad=False)
    same(lambda lib, x, s: lib.as_strided_scatter(x.t(), s, (2,), (2,)), X, s[0], grad=False)
    same_error(lambda lib, x, s: lib.as_strided_scatter(x, s, (2, 2), (1, 100)), X, s)
    same_error(lambda lib, x, s: lib.as_strided_scatter(x, s[:1], (2, 2), (1, 1)), X, s)
    their = raised(lambda: torch.as_strided_scatter(torch.tensor(X, requires_grad=True).t(), torch.ones(2), (2,), (1,)))
    ours = raised(lambda: tapegrad.as_strided_scatter(tapegrad.tensor(X, requires_grad=True).t(), tapegrad.ones(2),
                                                       (2,), (1,)))
    assert ours[0] is RuntimeError and "only supported for contiguous inputs" in their[1] and \
        "only supported for contiguous inputs" in ours[1]


def test_methods_are_pytorchs():
    names = ["quantile", "nanquantile", "nanmedian", "histc", "histogram", "addr", "addr_", "addbmm", "addbmm_",
             "inverse", "index_put", "index_put_", "put", "put_", "index_reduce", "index_reduce_", "is_signed",
             "fill_diagonal_", "sum_to_size", "unfold", "new", "split_with_sizes", "unsafe_split", "unsafe_chunk",
             "unsafe_split_with_sizes", "narrow_copy", "as_strided_scatter", "block_diag", "cartesian_prod",
             "combinations", "trapezoid", "trapz", "cumulative_trapezoid", "chain_matmul", "unravel_index",
             "result_type", "can_cast", "view_copy", "detach_copy"]
    assert [n for n in names if hasattr(tapegrad.Tensor, n) != hasattr(torch.Tensor, n)] == []
    assert [n for n in names if hasattr(tapegrad, n) != hasattr(torch, n)] == []
