"""Pointwise results take PyTorch's memory layout (TensorIterator's output strides), compared with PyTorch.

Operands are built in both libraries by the same recipe (a contiguous base, then permutes, strided slices,
size-1 dims, broadcasts, channels-last copies), so each tapegrad operand has PyTorch's strides; the result
of each pointwise op must then have PyTorch's strides, contiguity, `view(-1)` behaviour, values and
gradients.
"""
import numpy as np
import pytest
from conftest import require
from hypothesis import given, settings, strategies as st

import tapegrad

torch = require("torch")


def _base(lib, shape, channels_last, seed):
    t = lib.tensor(np.random.default_rng(seed).uniform(0.5, 1.5, shape))
    return t.contiguous(memory_format=lib.channels_last) if channels_last else t


@st.composite
def _recipes(draw, count):
    """A logical shape and `count` operand recipes for it: (permute order, last-dim slice step, the
    size-1 dims it is broadcast from, channels-last, data seed)."""
    ndim = draw(st.integers(2, 4))
    logical = draw(st.lists(st.sampled_from([1, 2, 3, 4]), min_size=ndim, max_size=ndim))
    recipes = []
    for i in range(count):
        order = draw(st.none() | st.permutations(range(ndim)).map(tuple))
        step = draw(st.sampled_from([1, 1, 2]))
        ones = tuple(1 if draw(st.booleans()) else s for s in logical) if i > 0 and draw(st.booleans()) else None
        channels_last = ndim == 4 and draw(st.booleans())
        recipes.append((order, step, ones, channels_last, draw(st.integers(0, 99))))
    return tuple(logical), recipes


def _operand(lib, logical, recipe):
    """The operand a recipe makes: a base (channels-last or not) whose permute, sliced along its last
    dim, has the logical shape (or the shape it is broadcast from)."""
    order, step, ones, channels_last, seed = recipe
    ndim = len(logical)
    target = list(ones or logical)
    target[-1] *= step
    order = order or tuple(range(ndim))
    base = [0] * ndim
    for j in range(ndim):
        base[order[j]] = target[j]
    t = _base(lib, tuple(base), channels_last, seed).permute(*order)
    if step > 1:
        t = t[..., ::step]
    return t.expand(*logical) if ones is not None else t


UNARY = {
    "exp": lambda lib, a: a.exp(),
    "mul_scalar": lambda lib, a: a * 2,
    "rsub": lambda lib, a: 1 - a,
    "gt": lambda lib, a: a > 1,
    "to_float32": lambda lib, a: a.to(lib.float32),
    "clone": lambda lib, a: a.clone(),
    "gelu": lambda lib, a: lib.nn.functional.gelu(a),
    "clamp": lambda lib, a: a.clamp(0.7, 1.2),
}
BINARY = {
    "add": lambda lib, a, b: a + b,
    "mul": lambda lib, a, b: a * b,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "where": lambda lib, a, b: lib.where(a > 1, a, b),
}


def _strides(t):
    """The strides of the dims of size > 1: a size-1 dim's stride is a convention in tapegrad, which reads a
    view's strides off the positions it selects (tapegrad/_memory_format.py)."""
    return tuple(s for s, n in zip(t.stride(), t.shape) if n > 1)


def _compare(fn, logical, recipes):
    theirs = fn(torch, *[_operand(torch, logical, r) for r in recipes])
    ours = fn(tapegrad, *[_operand(tapegrad, logical, r) for r in recipes])
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert _strides(ours) == _strides(theirs), (ours.stride(), theirs.stride())
    assert ours.is_contiguous() == theirs.is_contiguous()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)


@settings(max_examples=60, deadline=None)
@given(case=_recipes(1), name=st.sampled_from(sorted(UNARY)))
def test_unary_result_strides_match_pytorch(case, name):
    logical, recipes = case
    _compare(UNARY[name], logical, recipes)


@settings(max_examples=80, deadline=None)
@given(case=_recipes(2), name=st.sampled_from(sorted(BINARY)))
def test_binary_result_strides_match_pytorch(case, name):
    logical, recipes = case
    _compare(BINARY[name], logical, recipes)


@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(3, 4).t() * 2,
    lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1).exp(),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last) + 1,
])
def test_view_of_a_transposed_result_fails_as_in_pytorch(make):
    with pytest.raises(RuntimeError) as theirs:
        make(torch).view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride") \
            as ours:
        make(tapegrad).view(-1)
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]
    np.testing.assert_array_equal(make(tapegrad).reshape(-1).numpy(), make(torch).reshape(-1).numpy())


def test_a_laid_out_result_keeps_its_history_and_is_no_view():
    out = {}
    for lib in (torch, tapegrad):
        x = lib.tensor(np.arange(12.0).reshape(3, 4) / 10, requires_grad=True)
        y = x.t() * 2
        z = y.exp()
        y.mul_(3)   # in place on the laid-out result: a plain in-place op, no CopySlices
        (z * y).sum().backward()
        out[lib.__name__] = (y._base is None, y._is_view(), type(y.grad_fn).__name__, z.stride(), y.stride(),
                             x.grad.numpy().copy(), y.detach().numpy().copy())
    ours, theirs = out["tapegrad"], out["torch"]
    assert ours[:5] == theirs[:5]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=1e-12)
    np.testing.assert_allclose(ours[6], theirs[6], rtol=1e-12)


def test_saved_result_modified_in_place_fails_backward_as_in_pytorch():
    for lib in (torch, tapegrad):
        x = lib.ones(3, 4, requires_grad=True)
        y = x.t().exp()      # exp's backward reads its (laid-out) result
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last"])
@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(120.).reshape(2, 3, 4, 5).permute(0, 2, 3, 1),
    lambda lib: lib.arange(120.).reshape(2, 3, 4, 5)[:, :, :, ::2],
    lambda lib: lib.arange(240.).reshape(2, 4, 5, 6).permute(0, 3, 1, 2)[:, ::2],
    lambda lib: lib.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
])
def test_clone_memory_formats_match_pytorch(make, fmt):
    theirs = make(torch).clone(memory_format=getattr(torch, fmt))
    ours = make(tapegrad).clone(memory_format=getattr(tapegrad, fmt))
    assert _strides(ours) == _strides(theirs)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


LIKE = {
    "zeros_like": lambda lib, x, **kw: lib.zeros_like(x, **kw),
    "ones_like": lambda lib, x, **kw: lib.ones_like(x, **kw),
    "empty_like": lambda lib, x, **kw: lib.empty_like(x, **kw),
    "full_like": lambda lib, x, **kw: lib.full_like(x, 2.0, **kw),
    "rand_like": lambda lib, x, **kw: lib.rand_like(x, **kw),
    "randn_like": lambda lib, x, **kw: lib.randn_like(x, **kw),
    "randint_like": lambda lib, x, **kw: lib.randint_like(x, 5, **kw),
    "flip": lambda lib, x, **kw: x.flip(0),
}


@pytest.mark.parametrize("name, fmt", [(name, fmt) for name in sorted(LIKE)
                                       for fmt in (None, "contiguous_format", "channels_last")
                                       if fmt is None or name != "flip"])   # (flip takes no memory format)
@pytest.mark.parametrize("make", [
    lambda lib: lib.ones(2, 3, 4, 5).permute(0, 3, 1, 2),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 10)[..., ::2].permute(0, 2, 3, 1),
    lambda lib: lib.ones(3, 1, 4).expand(3, 5, 4).transpose(0, 2),
])
def test_made_like_a_tensor_takes_its_layout_as_pytorch(make, name, fmt):
    def outcome(lib):
        try:
            out = LIKE[name](lib, make(lib), **({} if fmt is None else {"memory_format": getattr(lib, fmt)}))
        except RuntimeError as e:   # channels_last asked of a tensor that is not 4-d
            return str(e)
        return _strides(out), tuple(out.shape), out.dtype.is_floating_point
    assert outcome(tapegrad) == outcome(torch)


@pytest.mark.parametrize("fn", [
    lambda lib, x, s: x * s,
    lambda lib, x, s: s * x,
    lambda lib, x, s: lib.where(x > 1, s, x),
    lambda lib, x, s: x.clamp(s, s + 1),
    lambda lib, x, s: 2 ** x,
    lambda lib, x, s: x.add(s, alpha=2),
])
def test_zero_dim_and_scalar_operands(fn):
    def run(lib):
        x = lib.tensor(np.arange(24.0).reshape(2, 3, 4) / 10).permute(2, 0, 1)
        out = fn(lib, x, lib.tensor(1.5))
        return _strides(out), out.is_contiguous(), out.numpy()
    ours, theirs = run(tapegrad), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12)


UNARY_NAMES = ["abs", "acos", "acosh", "angle", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "deg2rad",
               "digamma", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "floor", "frac", "isfinite", "isinf",
               "isnan", "isneginf", "isposinf", "lgamma", "log", "log10", "log1p", "log2", "logical_not", "logit",
               "nan_to_num", "neg", "rad2deg", "reciprocal", "relu", "round", "rsqrt", "sgn", "sigmoid", "sign",
               "signbit", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc"]
BINARY_NAMES = ["add", "atan2", "copysign", "div", "eq", "floor_divide", "fmax", "fmin", "fmod", "ge", "gt", "hypot",
                "le", "logical_and", "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "ne", "pow",
                "remainder", "sub", "xlogy", "true_divide"]
ACTIVATIONS = ["elu", "gelu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "logsigmoid", "mish",
               "relu6", "selu", "celu", "silu", "softplus", "softshrink", "softsign", "tanhshrink"]
INPUTS = {
    "permuted": lambda lib: lib.tensor(np.linspace(0.1, 0.9, 120).reshape(2, 3, 4, 5)).permute(3, 0, 1, 2),
    "channels_last": lambda lib: lib.tensor(np.linspace(0.1, 0.9, 120).reshape(2, 3, 4, 5)).contiguous(
        memory_format=lib.channels_last),
    "strided": lambda lib: lib.tensor(np.linspace(0.1, 0.9, 240).reshape(2, 3, 4, 10))[..., ::2].transpose(1, 3),
}


def _layout_of(make):
    def run(lib):
        out = make(lib)
        return _strides(out), out.is_contiguous(), out.dtype.is_floating_point
    return run


@pytest.mark.parametrize("given", sorted(INPUTS))
@pytest.mark.parametrize("name", UNARY_NAMES + [f"F.{n}" for n in ACTIVATIONS])
def test_every_unary_function_lays_out_as_pytorch(name, given):
    def make(lib):
        fn = getattr(lib.nn.functional, name[2:]) if name.startswith("F.") else getattr(lib, name)
        return fn(INPUTS[given](lib))
    run = _layout_of(make)
    assert run(tapegrad) == run(torch)


@pytest.mark.parametrize("given", sorted(INPUTS))
@pytest.mark.parametrize("other", ["same", "contiguous", "scalar", "scalar_first"])
@pytest.mark.parametrize("name", BINARY_NAMES)
def test_every_binary_function_lays_out_as_pytorch(name, given, other):
    def make(lib):
        x = INPUTS[given](lib)
        y = {"same": lambda: INPUTS[given](lib) + 0.5, "contiguous": lambda: x.contiguous() + 0.25,
             "scalar": lambda: 1.5, "scalar_first": lambda: 1.5}[other]()
        fn = getattr(lib, name)
        return fn(y, x) if other == "scalar_first" else fn(x, y)
    run = _layout_of(make)
    try:
        theirs = run(torch)
    except (TypeError, RuntimeError):   # not one of PyTorch's overloads (a Python scalar first)
        return
    assert run(tapegrad) == theirs


def test_views_at_new_offsets_reuse_their_strides(monkeypatch):
    """A loop reading x[t] at a new t each step (an RNN's inputs) works out the view's strides once: its
    offset moves, its strides do not (each new computation evaluates the view's recipe on the host)."""
    from tapegrad import _views
    calls = []
    real = _views._host_positions
    monkeypatch.setattr(_views, "_host_positions", lambda *a: calls.append(a) or real(*a))
    x = tapegrad.ones(50, 4, 3).permute(0, 2, 1)
    h = tapegrad.zeros(3, 4)
    for t in range(50):
        h = (h + x[t]).tanh()
    assert len(calls) <= 1
    assert h.stride() == torch.zeros(3, 4).add(torch.zeros(50, 4, 3).permute(0, 2, 1)[0]).tanh().stride()
    assert (x[7] * 2).stride() == (torch.zeros(50, 4, 3).permute(0, 2, 1)[7] * 2).stride()
