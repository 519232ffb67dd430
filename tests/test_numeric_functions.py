"""torch.gradient, histogramdd, svd_lowrank / pca_lowrank, segment_reduce, binomial and
nn.AdaptiveLogSoftmaxWithLoss against PyTorch: values, dtypes, gradients (float64 finite differences where
differentiable), PyTorch's errors, and for the random ones the draws themselves (binomial: PyTorch's numbers
from the same seed) or the properties that do not depend on them (low-rank factors)."""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import gradcheck

from conftest import assert_close, fold_repr, raised, require

torch = require("torch")
LIBS = (tapegrad, torch)


def _args(lib, value):
    """value with every NumPy array made a tensor of lib (inside lists too)."""
    if isinstance(value, np.ndarray):
        return lib.tensor(value)
    if isinstance(value, list):
        return [_args(lib, v) for v in value]
    if isinstance(value, dict):
        return {k: _args(lib, v) for k, v in value.items()}
    return value


def _same_error(build, prefix_only=False):
    """Both libraries raise the same type; the same message (or ours starts with PyTorch's, which tapegrad
    follows with one sentence of fix)."""
    ours, theirs = raised(lambda: build(tapegrad)), raised(lambda: build(torch))
    assert theirs is not None and ours is not None, (ours, theirs)
    assert ours[0] is theirs[0], (ours, theirs)
    if prefix_only:
        assert ours[1].startswith(theirs[1]), (ours, theirs)
    else:
        assert fold_repr(ours[1]) == theirs[1], (ours, theirs)


# ---- gradient ------------------------------------------------------------------------------------------------

X = np.arange(12.0).reshape(3, 4) ** 2 + np.sin(np.arange(12.0)).reshape(3, 4)
COORDS = [np.array([0.0, 1.0, 3.0]), np.array([0, 1, 3, 7])]
GRADIENT_CASES = [{}, {"spacing": 2.5}, {"spacing": [2, 3.0]}, {"dim": 1}, {"dim": [1, 0]}, {"edge_order": 2},
                  {"spacing": COORDS}, {"spacing": COORDS, "edge_order": 2}, {"spacing": 1j},
                  {"spacing": COORDS[1:], "dim": -1, "edge_order": 2}, {"spacing": 2, "dim": (0,)}, {"dim": []}]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_gradient_values_and_dtypes(dtype):
    for kwargs in GRADIENT_CASES:
        ours, theirs = (lib.gradient(lib.tensor(X.astype(dtype)), **_args(lib, kwargs)) for lib in LIBS)
        assert type(ours) is tuple and len(ours) == len(theirs), kwargs
        for o, t in zip(ours, theirs):
            assert_close(o, t, rtol=0, atol=0)   # the same operations in the same order


def test_gradient_of_a_0d_tensor_is_empty_and_half_keeps_its_dtype():
    assert tapegrad.gradient(tapegrad.tensor(3.0)) == ()
    ours, theirs = (lib.gradient(lib.tensor([1.0, 2.0, 4.0], dtype=lib.float16)) for lib in LIBS)
    assert_close(ours[0], theirs[0])


def test_gradient_backward_and_finite_differences():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        parts = lib.gradient(x, spacing=_args(lib, [np.array([0.0, 1.0, 3.0]), np.array([0.0, 1.0, 3.0, 7.0])]),
                             edge_order=2)
        (parts[0] * 1.5 + parts[1] ** 2).sum().backward()
        return parts[0].grad_fn.name(), x.grad
    (name, grad), (their_name, their_grad) = run(tapegrad), run(torch)
    assert name == their_name == "CatBackward0"
    assert_close(grad, their_grad)
    x = tapegrad.tensor(X, requires_grad=True)
    coords = [tapegrad.tensor([0.0, 1.0, 3.0]), tapegrad.tensor([0.0, 1.0, 3.0, 7.0])]
    assert gradcheck(lambda t: tapegrad.gradient(t, spacing=1.5, edge_order=2), (x,), fast_mode=True)
    assert gradcheck(lambda t: tapegrad.gradient(t, spacing=coords), (x,), fast_mode=True)


@pytest.mark.parametrize("kwargs, shape, dtype", [
    ({"edge_order": 3}, (3, 4), "float32"), ({"spacing": [1.0, 2.0, 3.0]}, (3, 4), "float32"),
    ({"spacing": [1.0], "dim": [0, 1]}, (3, 4), "float32"), ({"dim": [0, 0]}, (3, 4), "float32"),
    ({"dim": 2}, (3, 4), "float32"), ({"spacing": [np.ones((3, 1)), np.ones(4)]}, (3, 4), "float64"),
    ({"spacing": [np.ones(3), np.ones(5)]}, (3, 4), "float64"), ({}, (1, 3), "float32"),
    ({"edge_order": 2}, (2, 3), "float32"), ({}, (4,), "uint8"), ({"spacing": []}, (3, 4), "float32"),
    ({"spacing": [np.array(2.0), np.array(3.0)]}, (3, 4), "float32")])
def test_gradient_errors(kwargs, shape, dtype):
    _same_error(lambda lib: lib.gradient(lib.ones(shape, dtype=getattr(lib, dtype)), **_args(lib, kwargs)))


# ---- histogramdd ---------------------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
POINTS = RNG.normal(size=(10, 2)).astype(np.float32)
EDGES = [np.array([-1.0, 0.0, 1.0], np.float32), np.array([-3.0, 0.0, 0.5, 3.0], np.float32)]
HISTOGRAM_CASES = [
    (POINTS, {"bins": [3, 4]}), (POINTS, {"bins": 3, "range": [-1.0, 1.0, -2.0, 2.0], "density": True}),
    (POINTS, {"bins": EDGES, "weight": np.arange(10.0, dtype=np.float32)}),
    (POINTS, {"bins": EDGES, "density": True}), (RNG.normal(size=(2, 3, 2)), {"bins": 2}),
    (RNG.normal(size=(5, 3)), {"bins": (2, 1, 3)}), (np.empty((0, 2), np.float32), {"bins": 2}),
    (np.empty((0, 2), np.float32), {"bins": 2, "density": True}), (np.zeros((2, 2), np.float32), {"bins": 2}),
    (RNG.normal(size=(200, 3)), {"bins": [5, 6, 7], "weight": RNG.random(200), "density": True}),
    (np.array([[1.0, 2.0], [3.0, 1.5]], np.float32),
     {"bins": [np.array([0.0, 1.0, 1.0, 3.0], np.float32), np.array([0.0, 1.0, 2.0, 3.0], np.float32)],
      "density": True}),
    (RNG.normal(size=(3, 0)), {"bins": []}), (POINTS.astype(np.float16), {"bins": [EDGES[0].astype(np.float16)] * 2}),
    (RNG.normal(size=(1, 2)), {"bins": 2, "weight": np.array(1.0)})]


def test_histogramdd_against_pytorch():
    for points, kwargs in HISTOGRAM_CASES:
        ours, theirs = (lib.histogramdd(lib.tensor(points), **_args(lib, kwargs)) for lib in LIBS)
        assert type(ours).__name__ == "histogramdd" and ours._fields == ("hist", "bin_edges")
        assert isinstance(ours.bin_edges, tuple) and len(ours.bin_edges) == len(theirs.bin_edges)
        for o, t in zip((ours.hist,) + ours.bin_edges, (theirs.hist,) + theirs.bin_edges):
            assert_close(o, t, rtol=1e-6, atol=1e-6)
    assert repr(ours).startswith("torch.return_types.histogramdd(\nhist=")


@pytest.mark.parametrize("points, args, kwargs", [
    (RNG.normal(size=5), (2,), {}), (np.array(1.0), (2,), {}), (POINTS, ([2],), {}), (POINTS, (0,), {}),
    (POINTS, ([2, 0],), {}), (POINTS, (3,), {"range": [0.0, 1.0]}), (POINTS, (3,), {"range": [1.0, 0.0, 0.0, 1.0]}),
    (POINTS, (3,), {"range": [0.0, float("inf"), 0.0, 1.0]}), (POINTS, (EDGES[:1],), {}),
    (POINTS, ([EDGES[0], EDGES[1].astype(np.float64)],), {}), (POINTS, ([EDGES[0], EDGES[1][None]],), {}),
    (POINTS, ([EDGES[0], EDGES[1][:0]],), {}), (POINTS, ([EDGES[0], EDGES[1][:1]],), {}),
    (POINTS, (3,), {"weight": np.ones((10, 1), np.float32)}), (POINTS, (3,), {"weight": np.ones(10)}),
    (POINTS, ([0, 2],), {"weight": np.ones(3, np.float32)}), (np.array([[0.0, np.nan], [0.0, 0.0]]), (2,), {}),
    (np.array([[0.0, -np.nan], [0.0, 0.0]]), (2,), {})])
def test_histogramdd_errors(points, args, kwargs):
    _same_error(lambda lib: lib.histogramdd(lib.tensor(points), *_args(lib, list(args)), **_args(lib, kwargs)))


@pytest.mark.parametrize("points, bins", [(POINTS.astype(np.int32), 3), (POINTS.astype(np.float16), 3),
                                          (POINTS.astype(np.int32), [EDGES[0].astype(np.int32)] * 2)])
def test_histogramdd_dtypes_pytorch_has_no_kernel_for(points, bins):
    _same_error(lambda lib: lib.histogramdd(lib.tensor(points), _args(lib, bins)), prefix_only=True)


@pytest.mark.parametrize("pick", ["hist", "edges", "hist of edge tensors"])
def test_histogramdd_records_nodes_whose_backward_raises(pick):
    def build(lib):
        x = lib.tensor(POINTS, requires_grad=True)
        if pick == "hist of edge tensors":
            return lib.histogramdd(x, _args(lib, EDGES)).hist
        result = lib.histogramdd(x, [2, 3], weight=lib.rand(10, requires_grad=True))
        return result.hist if pick == "hist" else result.bin_edges[1]
    ours, theirs = build(tapegrad), build(torch)
    assert ours.requires_grad and ours.grad_fn.name() == theirs.grad_fn.name() == "torch::autograd::NotImplemented"
    _same_error(lambda lib: (ours if lib is tapegrad else theirs).sum().backward())


# ---- svd_lowrank, pca_lowrank --------------------------------------------------------------------------------

def _low_rank(shape, rank, seed=0):
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    return rng.normal(size=(*batch, m, rank)) @ rng.normal(size=(*batch, rank, n))


def _check_factors(U, S, V, A, q, rtol=1e-9):
    m, n = A.shape[-2:]
    assert tuple(U.shape) == tuple(A.shape[:-2]) + (m, q) and tuple(V.shape) == tuple(A.shape[:-2]) + (n, q)
    assert tuple(S.shape) == tuple(A.shape[:-2]) + (q,) and U.dtype == S.dtype == V.dtype == A.dtype
    eye = tapegrad.eye(q, dtype=A.dtype)
    assert float((U.mT @ U - eye).abs().max()) < 1e-10 and float((V.mT @ V - eye).abs().max()) < 1e-10
    rebuilt = U @ tapegrad.diag_embed(S) @ V.mT
    assert float((rebuilt - A).abs().max()) <= rtol * float(A.abs().max())


@pytest.mark.parametrize("shape, rank, q", [((20, 12), 3, 5), ((8, 30), 2, 4), ((3, 15, 10), 4, 6)])
def test_svd_lowrank_reconstructs_low_rank_matrices(shape, rank, q):
    A = tapegrad.tensor(_low_rank(shape, rank))
    U, S, V = tapegrad.svd_lowrank(A, q=q)
    _check_factors(U, S, V, A, q)
    expected = torch.linalg.svdvals(torch.tensor(_low_rank(shape, rank)))[..., :rank]
    assert_close(S[..., :rank], expected, rtol=1e-10, atol=1e-10)


def test_svd_lowrank_with_m_draws_as_pytorch_from_the_same_seed():
    # the test matrix is drawn by randn from PyTorch's CPU stream: the factors are PyTorch's (up to column signs)
    A, M = _low_rank((12, 9), 3), np.random.default_rng(1).normal(size=(1, 9))
    results = []
    for lib in LIBS:
        lib.manual_seed(7)
        U, S, V = lib.svd_lowrank(lib.tensor(A + M), q=4, niter=1, M=lib.tensor(M))
        results.append((U, S, V))
    (U, S, V), (tU, tS, tV) = results
    assert_close(S[:3], tS[:3], rtol=1e-9, atol=1e-9)   # (A has rank 3: the 4th column is rounding noise)
    assert_close(U[:, :3].abs(), tU[:, :3].abs(), rtol=1e-7, atol=1e-9)
    assert_close(V[:, :3].abs(), tV[:, :3].abs(), rtol=1e-7, atol=1e-9)
    _check_factors(U, S, V, tapegrad.tensor(A), 4)


def test_svd_lowrank_float32_and_defaults():
    A = tapegrad.tensor(_low_rank((2, 16, 10), 2).astype(np.float32))
    U, S, V = tapegrad.svd_lowrank(A, q=None, niter=None)
    assert tuple(U.shape) == (2, 16, 6) and S.dtype == tapegrad.float32
    assert float((U @ tapegrad.diag_embed(S) @ V.mT - A).abs().max()) < 1e-4 * float(A.abs().max())


def test_svd_lowrank_gradients_as_pytorch_and_finite_differences():
    A = np.random.default_rng(2).normal(size=(6, 4))

    def grad(lib):
        a = lib.tensor(A, requires_grad=True)
        lib.manual_seed(3)
        lib.svd_lowrank(a, q=4, niter=2)[1].sum().backward()
        return a.grad
    assert_close(grad(tapegrad), grad(torch), rtol=1e-8, atol=1e-10)

    def nuclear(a):
        tapegrad.manual_seed(3)   # the same test matrix at every evaluation
        return tapegrad.svd_lowrank(a, q=4)[1].sum()
    assert gradcheck(nuclear, (tapegrad.tensor(A, requires_grad=True),))


def test_pca_lowrank_principal_values_and_errors():
    A = _low_rank((2, 30, 8), 3) + 5.0   # an offset the centering removes
    U, S, V = tapegrad.pca_lowrank(tapegrad.tensor(A), q=4)
    centered = A - A.mean(axis=-2, keepdims=True)
    assert_close(S[..., :3], torch.linalg.svdvals(torch.tensor(centered))[..., :3], rtol=1e-9, atol=1e-9)
    _check_factors(U[..., :3], S[..., :3], V[..., :3], tapegrad.tensor(centered), 3)
    U, S, V = tapegrad.pca_lowrank(tapegrad.tensor(A[0]), center=False)
    assert tuple(S.shape) == (6,)
    for kwargs in ({"q": 9}, {"q": -1}, {"niter": -1}):
        _same_error(lambda lib: lib.pca_lowrank(lib.tensor(A[0]), **kwargs))


# ---- segment_reduce ------------------------------------------------------------------------------------------

DATA = np.array([3.0, 3.0, 1.0, -2.0, -2.0, 5.0, 0.0, 0.0, 4.0])
SEGMENT_CASES = [
    (DATA, {"lengths": np.array([3, 2, 0, 1, 3])}), (DATA, {"lengths": np.array([3, 2, 0, 1, 3]), "initial": 4.0}),
    (DATA, {"offsets": np.array([0, 3, 5, 5, 6, 9])}), (DATA, {"offsets": np.array([1, 2, 8])}),
    (np.array([1.0, np.nan, 3.0, 0.0, 2.0, 0.0]), {"lengths": np.array([3, 3])}),
    (RNG.normal(size=(2, 6, 3)), {"lengths": np.array([[2, 4], [3, 3]]), "axis": 1}),
    (RNG.normal(size=(6, 3)), {"lengths": np.array([2, 0, 4]), "initial": -1}),
    (RNG.normal(size=(2, 6)), {"offsets": np.array([[0, 2, 6], [1, 3, 5]]), "axis": -1}),
    (DATA, {"lengths": np.array([2, 2, 3]), "unsafe": True})]   # (unsafe: the last 2 are in no segment)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_values_and_pytorch_gradients(reduce):
    # PyTorch's backward: ties of max and min share a positive gradient only, a zero of prod gets the product
    # of the others, an initial value that wins passes nothing back
    for data, kwargs in SEGMENT_CASES:
        def run(lib):
            x = lib.tensor(data, requires_grad=True)
            out = lib.segment_reduce(x, reduce, **_args(lib, kwargs))
            weights = lib.tensor(np.random.default_rng(1).normal(size=tuple(out.shape)))
            (out.nan_to_num(posinf=7.0, neginf=-7.0) * weights).sum().backward()
            return out, x.grad, out.grad_fn.name()
        (out, grad, name), (their_out, their_grad, their_name) = run(tapegrad), run(torch)
        assert name == their_name == "SegmentReduceBackward0"
        assert_close(out, their_out, rtol=1e-12, atol=1e-12)
        assert_close(grad, their_grad, rtol=1e-12, atol=1e-12)
    for dtype in ("float32", "float16"):
        ours, theirs = (lib.segment_reduce(lib.tensor(DATA.astype(dtype)), reduce, lengths=lib.tensor([4, 0, 5]))
                        for lib in LIBS)
        assert_close(ours, theirs)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_segment_reduce_finite_differences(reduce):
    x = tapegrad.tensor(np.random.default_rng(3).normal(size=(2, 5, 2)), requires_grad=True)
    lengths = tapegrad.tensor([[2, 2, 1], [3, 1, 1]])
    assert gradcheck(lambda t: tapegrad.segment_reduce(t, reduce, lengths=lengths, axis=1, initial=-9.0), (x,),
                     fast_mode=True)
    offsets = tapegrad.tensor([0, 1, 4])
    y = tapegrad.tensor(np.random.default_rng(4).normal(size=5), requires_grad=True)
    assert gradcheck(lambda t: tapegrad.segment_reduce(t, reduce, offsets=offsets), (y,), fast_mode=True)


@pytest.mark.parametrize("data, reduce, kwargs, prefix", [
    (DATA, "sum", {"indices": np.zeros(9, np.int64)}, False), (DATA, "sum", {}, False),
    (DATA, "avg", {"lengths": np.array([9])}, False), (DATA, "sum", {"lengths": np.array([2, 2])}, False),
    (DATA, "sum", {"lengths": np.array([10, -1])}, False), (DATA, "sum", {"lengths": np.array([10, -1]),
                                                                           "unsafe": True}, False),
    (DATA, "sum", {"lengths": np.array([4.0, 5.0])}, True), (DATA, "sum", {"offsets": np.array([0.0, 9.0])}, True),
    (DATA.astype(np.int64), "sum", {"lengths": np.array([9])}, True), (DATA, "sum", {"lengths": np.array(9)}, False),
    (np.array(1.0), "sum", {"lengths": np.array([1])}, False), (np.ones(0), "sum", {"lengths": np.zeros(0, np.int64)},
                                                                  False),
    (DATA, "sum", {"lengths": np.array([9]), "axis": 1}, False), (DATA, "sum", {"offsets": np.array([0, 5, 2, 9])},
                                                                   False),
    (RNG.normal(size=(2, 6)), "sum", {"lengths": np.array([2, 4]), "axis": 1}, False)])
def test_segment_reduce_errors(data, reduce, kwargs, prefix):
    _same_error(lambda lib: lib.segment_reduce(lib.tensor(data), reduce, **_args(lib, kwargs)), prefix_only=prefix)


def test_segment_reduce_aliases_and_argument_types():
    for alias, reduce in (("amax", "max"), ("amin", "min")):
        assert_close(tapegrad.segment_reduce(tapegrad.tensor(DATA), alias, lengths=tapegrad.tensor([4, 5])),
                     torch.segment_reduce(torch.tensor(DATA), reduce, lengths=torch.tensor([4, 5])))
    for build in (lambda lib: lib.segment_reduce(lib.tensor(DATA), 3, lengths=lib.tensor([9])),
                  lambda lib: lib.segment_reduce(lib.tensor(DATA), "sum", lib.tensor([9]))):
        _same_error(build)
    assert raised(lambda: tapegrad.segment_reduce(tapegrad.tensor(DATA), "sum", lengths=tapegrad.tensor([9]),
                                                  axis=0.0))[0] is TypeError


# ---- binomial ------------------------------------------------------------------------------------------------

def _draws(lib, counts, probs, dtype, seed=0, generator=False):
    lib.manual_seed(seed)
    gen = lib.Generator().manual_seed(seed + 1) if generator else None
    c, p = lib.tensor(np.asarray(counts, dtype)), lib.tensor(np.asarray(probs, dtype))
    return lib.binomial(c, p, gen), lib.binomial(c, p, generator=gen)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binomial_draws_pytorchs_numbers(dtype):
    rng = np.random.default_rng(4)
    cases = [(rng.integers(0, 300, 400).astype(float), rng.random(400)),                 # inversion and BTRS
             (rng.integers(0, 40, 200) + 0.5, rng.random(200)),                           # fractional counts
             (rng.integers(0, 5000, 100).astype(float), rng.random(100) * 0.02),
             ([10.0, -3.0, 5.0, 0.0, 7.0], [np.nan, 0.5, -0.5, 0.3, 1.5]),                # PyTorch's edge cases
             ([[10.0], [20.0]], [0.5, 0.9]), (12.0, [0.1, 0.9])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (both warn that a broadcast result was resized)
        for i, (counts, probs) in enumerate(cases):
            for generator in (False, True):
                for ours, theirs in zip(_draws(tapegrad, counts, probs, dtype, i, generator),
                                        _draws(torch, counts, probs, dtype, i, generator)):
                    assert_close(ours, theirs, rtol=0, atol=0)


def test_binomial_distribution_properties():
    tapegrad.manual_seed(0)
    counts = tapegrad.tensor([5.0, 40.0, 300.0, 1000.0]).repeat(1500, 1)
    probs = tapegrad.tensor([0.3, 0.05, 0.5, 0.93]).expand(1500, 4)
    samples = tapegrad.binomial(counts, probs)
    assert samples.dtype == tapegrad.float32 and tuple(samples.shape) == (1500, 4)
    assert bool((samples == samples.round()).all()) and bool(((samples >= 0) & (samples <= counts)).all())
    mean, var = samples.mean(0), samples.var(0)
    n, p = counts[0], probs[0]
    assert bool(((mean - n * p).abs() < 4 * (n * p * (1 - p) / 1500).sqrt() + 1e-3).all()), mean
    assert bool(((var / (n * p * (1 - p)) - 1).abs() < 0.15).all()), var
    # under tapegrad.compile the draws come from jax.random keys: the same distribution
    compiled = tapegrad.compile(lambda c, q: tapegrad.binomial(c, q))(counts, probs)
    assert bool((compiled == compiled.round()).all()) and bool(((compiled >= 0) & (compiled <= counts)).all())
    assert bool(((compiled.mean(0) - n * p).abs() < 4 * (n * p * (1 - p) / 1500).sqrt() + 1e-3).all())


@pytest.mark.parametrize("count, prob", [
    ([10, 20], [0.5, 0.5]), ([10.0], [1]), ("float64", "float32"), ("float16", "float16"),
    ([10.0, 20.0, 30.0], [0.5, 0.5]), ([1j], [0.5j])])
def test_binomial_errors(count, prob):
    def build(lib):
        if isinstance(count, str):
            return lib.binomial(lib.ones(2, dtype=getattr(lib, count)), lib.ones(2, dtype=getattr(lib, prob)))
        return lib.binomial(lib.tensor(count), lib.tensor(prob))
    _same_error(build, prefix_only=True)


def test_binomial_node_raises_in_backward_and_numbers_are_refused():
    _same_error(lambda lib: lib.binomial(10.0, lib.tensor(0.3)))

    def build(lib):
        count = lib.tensor([10.0, 20.0], requires_grad=True)
        return lib.binomial(count, lib.tensor([0.5, 0.5]))
    ours, theirs = build(tapegrad), build(torch)
    assert ours.requires_grad and ours.grad_fn.name() == theirs.grad_fn.name()
    _same_error(lambda lib: (ours if lib is tapegrad else theirs).sum().backward())


# ---- AdaptiveLogSoftmaxWithLoss ------------------------------------------------------------------------------

def _adaptive_pair(head_bias=True):
    torch.manual_seed(0)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias).double()
    ours = tapegrad.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias).double()
    ours.load_state_dict({k: tapegrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("head_bias", [True, False])
def test_adaptive_log_softmax_matches_pytorch(head_bias):
    models = _adaptive_pair(head_bias)
    assert fold_repr(repr(models[0])) == repr(models[1])
    rng = np.random.default_rng(5)
    inputs, targets = rng.normal(size=(12, 16)), np.array([0, 3, 4, 9, 10, 14, 15, 19, 1, 5, 12, 18])

    def run(lib, model):
        x = lib.tensor(inputs, requires_grad=True)
        result = model(x, lib.tensor(targets))
        result.loss.backward()
        single = model(x[0].detach(), lib.tensor(17))
        return (result, x.grad, [p.grad for p in model.parameters()], model.log_prob(x.detach()),
                model.predict(x.detach()), model.predict(x.detach() * 0), single)
    ours, theirs = run(tapegrad, models[0]), run(torch, models[1])
    assert type(ours[0]).__name__ == "_ASMoutput" and ours[0]._fields == ("output", "loss")
    for o, t in zip(ours[0] + ours[6], theirs[0] + theirs[6]):
        assert_close(o, t)
        assert o.grad_fn.name() == t.grad_fn.name()
    assert_close(ours[1], theirs[1])
    for o, t in zip(ours[2], theirs[2]):
        assert_close(o, t)
    assert_close(ours[3], theirs[3])
    assert_close(ours[4], theirs[4])
    assert_close(ours[5], theirs[5])


def test_adaptive_log_softmax_predicts_rows_outside_the_shortlist():
    ours, theirs = _adaptive_pair()
    with torch.no_grad():   # a head that points every other row to a cluster
        theirs.head.bias.copy_(torch.tensor([0.0] * 4 + [9.0, 0.0, 0.0]))
    ours.head.bias.data = tapegrad.tensor(theirs.head.bias.detach().numpy())
    x = np.random.default_rng(6).normal(size=(9, 16)) * np.array([[1.0], [0.0], [1.0]] * 3) * 30
    assert_close(ours.predict(tapegrad.tensor(x)), theirs.predict(torch.tensor(x)))


def test_adaptive_log_softmax_errors():
    models = dict(zip(LIBS, _adaptive_pair()))
    for inputs, target in [((3, 16), [0, 20, 1]), ((3, 16), [0, 1]), ((2, 3, 16), [0, 1]), ((2, 16), 1),
                           ((2, 16), [[1]]), ((3, 16), [0, -1, 1])]:
        _same_error(lambda lib: models[lib](lib.ones(inputs, dtype=lib.float64), lib.tensor(target)))
    for cutoffs in ([], [5, 3], [0, 3], [5, 20], [5, 5], [2.5]):
        _same_error(lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, cutoffs))
