"""tapegrad._printing must reproduce torch's tensor repr character for character."""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from tapegrad import _printing

from conftest import require

torch = require("torch")


@pytest.fixture(autouse=True)
def _restore_printoptions():
    yield
    torch.set_printoptions(profile="default")
    _printing.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def _numpy(t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.float().numpy().astype(ml_dtypes.bfloat16)
    return t.numpy()


def ours(t, **kwargs):
    return _printing.tensor_repr(
        _numpy(t),
        dtype_name=str(t.dtype).removeprefix("torch."),
        default_float_dtype_name=str(torch.get_default_dtype()).removeprefix("torch."),
        requires_grad=t.requires_grad,
        grad_fn_name=type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        **kwargs,
    )


def theirs(t):
    return repr(t).replace("torch.", "tapegrad.")


def check(t):
    assert ours(t) == theirs(t)


def set_both(**kwargs):
    torch.set_printoptions(**kwargs)
    _printing.set_printoptions(**kwargs)


FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
ALL_DTYPES = [torch.bool, *INT_DTYPES, *FLOAT_DTYPES, torch.complex64, torch.complex128]

gen = torch.Generator().manual_seed(0)


def randn(*shape, dtype=torch.float32, scale=1.0, requires_grad=False):
    t = (torch.randn(shape, generator=gen, dtype=torch.float64) * scale).to(dtype)
    return t.requires_grad_(requires_grad)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (1,), (5,), (2, 3), (2, 3, 4), (2, 1, 3, 2)], ids=str)
def test_dtypes_and_shapes(dtype, shape):
    if dtype == torch.bool:
        t = torch.randn(shape, generator=gen) > 0
    elif dtype in INT_DTYPES:
        lo = 0 if dtype == torch.uint8 else -100
        t = torch.randint(lo, 100, shape, generator=gen, dtype=dtype)
    elif dtype.is_complex:
        t = torch.complex(randn(*shape, scale=3), randn(*shape, scale=3)).to(dtype)
    else:
        t = randn(*shape, dtype=dtype, scale=10)
    check(t)
    if dtype.is_floating_point:
        check(t.round())  # int mode


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)], ids=str)
def test_empty(dtype, shape):
    check(torch.empty(shape, dtype=dtype))


@pytest.mark.parametrize("values", [
    4.0, 3, True, False, -0.0, 0.0, float("nan"), float("inf"), -float("inf"), 1e-5, 1e9, 2.5,
    [1.0, 2.0], [1.0, -0.0], [0.0, 0.0], [-0.0, 1.5], [1e-5, 1.0], [1e9, 1.0], [1.0, 1e5], [1.0, 1e3],
    [1.0, 1001.0], [123456789.0], [1e8], [1e8, 1.0], [1.5, float("nan")], [float("nan"), float("inf"), -float("inf")],
    [1.0, float("nan"), -float("inf")], [0.1, float("inf")], [1e-5, float("nan"), 0.0], [-1e20, 3.0, 1e-20],
    [1, -2, 300], [2**62, -(2**63)], [-1, -2, -3], [True, False, True],
    [1 + 2j, 3 - 1j], [0.5 - 0j, 1e-5j], [complex(float("nan"), 1), complex(1, float("inf"))], 1 + 2j, -0j,
])
def test_values(values):
    t = torch.tensor(values)
    check(t)
    if t.dtype.is_floating_point:
        for dtype in (torch.float64, torch.float16, torch.bfloat16):
            check(t.to(dtype))


@pytest.mark.parametrize("make", [
    lambda: torch.arange(2000),
    lambda: randn(2000),
    lambda: randn(50, 50),
    lambda: randn(3, 400, scale=1e6),
    lambda: randn(20, 10, 10, dtype=torch.float64),
    lambda: torch.complex(randn(40, 40), randn(40, 40)),
    lambda: torch.arange(2000).reshape(2, 10, 100) > 1000,
    lambda: torch.arange(-1000.0, 1000.0).reshape(10, 200) / 3,
], ids=range(8))
def test_summarized(make):
    check(make())


@pytest.mark.parametrize("make", [
    lambda: torch.arange(100),
    lambda: randn(40),
    lambda: randn(3, 30, scale=1e-6),
    lambda: randn(2, 2, 25, dtype=torch.float64),
    lambda: torch.complex(randn(30), randn(30)),
    lambda: torch.arange(60) % 2 == 0,
    lambda: torch.tensor([10.0**k for k in range(-12, 12)]),
], ids=range(7))
def test_long_rows_wrap(make):
    check(make())


def test_autograd_suffixes():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    check(x)
    check(x * 2)
    check((x * 2).sum())
    y = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    check(y * 3)
    check(y.to(torch.float16) + 1)
    check(torch.empty(0, 3, dtype=torch.float64, requires_grad=True) * 2)


def test_suffixes_wrap_onto_new_line():
    check(randn(70, dtype=torch.float64, requires_grad=True) * 2)
    check(randn(3, 7, dtype=torch.float64, requires_grad=True).exp())
    check(torch.tensor([123456.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float16, requires_grad=True) * 2)


def test_parameter():
    p = torch.nn.Parameter(randn(2, 3))
    assert ours(p, is_parameter=True) == theirs(p)
    p = torch.nn.Parameter(randn(4, dtype=torch.float64))
    assert ours(p, is_parameter=True) == theirs(p)


def test_device_and_prefix():
    values = np.array([1.0, 2.0], np.float32)
    assert _printing.tensor_repr(values, dtype_name="float32", device="cuda:0") == \
        "tensor([1., 2.], device='cuda:0')"
    assert _printing.tensor_repr(values, dtype_name="float32", device="cpu") == "tensor([1., 2.])"
    assert _printing.tensor_repr(values, dtype_name="float64", device="cuda:1", requires_grad=True) == \
        "tensor([1., 2.], device='cuda:1', dtype=tapegrad.float64, requires_grad=True)"
    assert _printing.tensor_repr(np.ones((2, 2)), dtype_name="float32", prefix="nested(") == \
        "nested([[1., 1.],\n        [1., 1.]])"


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    for t in (randn(3), randn(3, dtype=torch.float64), torch.tensor([1 + 1j]), torch.tensor([1 + 1j]).to(torch.complex64),
              torch.empty(0), torch.empty(0, dtype=torch.float32), torch.tensor([1, 2])):
        check(t)


@pytest.mark.parametrize("options", [
    dict(precision=2), dict(precision=0), dict(precision=10), dict(sci_mode=False), dict(sci_mode=True),
    dict(threshold=5), dict(threshold=0), dict(linewidth=30), dict(linewidth=200), dict(edgeitems=1),
    dict(edgeitems=0, threshold=5), dict(profile="full"), dict(profile="short"), dict(profile="default"),
    dict(profile="short", precision=6, sci_mode=True),
], ids=str)
def test_printoptions(options):
    set_both(**options)
    assert _printing.get_printoptions() == torch._tensor_str.get_printoptions()
    for t in (randn(8), randn(5, 6, scale=1e5), torch.tensor([1e-5, 1.0, float("nan")]), torch.arange(1500),
              randn(4, 300, dtype=torch.float64), torch.tensor([1.0, 2.0]), torch.tensor(3.25), torch.tensor([[]]),
              torch.complex(randn(3, 4), randn(3, 4)), randn(6, requires_grad=True) * 2):
        check(t)


def test_printoptions_restore():
    set_both(precision=2, threshold=10, linewidth=40, sci_mode=True)
    set_both(profile="default")
    assert _printing.get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
    check(randn(3))


# Values spread over many magnitudes, plus the special values, so every notation is exercised.
_magnitude_floats = st.builds(lambda m, e: m * 10.0**e, st.floats(-10, 10, allow_nan=False), st.integers(-12, 12))
_floats = st.one_of(
    _magnitude_floats,
    st.integers(-1000, 1000).map(float),
    st.sampled_from([0.0, -0.0, math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
)
_shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)


@st.composite
def _tensors(draw):
    kind = draw(st.sampled_from(["float32", "float64", "int64"]))
    shape = draw(_shapes)
    if kind == "int64":
        ints = st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(-100, 100))
        return torch.from_numpy(draw(hnp.arrays(np.int64, shape, elements=ints)))
    # Values are drawn as doubles and rounded to float32 by the cast, like torch.tensor(...) would.
    return torch.from_numpy(draw(hnp.arrays(np.float64, shape, elements=_floats)).astype(kind))


@settings(max_examples=300, deadline=None)
@given(_tensors(), st.booleans(), st.sampled_from([None, 1, 2, 6]), st.sampled_from([None, 10, 40]))
def test_property_matches_torch(t, requires_grad, precision, linewidth):
    set_both(precision=precision, linewidth=linewidth, threshold=50)
    if requires_grad and t.dtype.is_floating_point:
        t.requires_grad_(True)
    check(t)
