"""Smaller PyTorch modules and names: torch.testing, torch.version, torch.hub and model_zoo, pin_memory,
accelerator device index, cuda.amp / cuda.nccl, torch.classes, torch.ops.profiler, nn.modules paths,
empty_strided; each against PyTorch's own behaviour."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import from_torch


# ---- testing.assert_close --------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:   # the type and the message are what is compared
        return type(e), str(e)
    return None


def _cases(lib):
    t = lib.tensor
    nan = float("nan")
    tc = lib.testing.assert_close
    return [
        lambda: tc(t([1., 2., 3.]), t([1., 2.5, 3.])),
        lambda: tc(t([1, 2, 3]), t([1, 4, 3])),
        lambda: tc(t([[1., 2.], [3., 4.]]), t([[1., 2.], [3., 5.]])),
        lambda: tc(t([1., 2.]), t([1., 2.], dtype=lib.float64)),
        lambda: tc(t([1., 2.]), t([1., 2., 3.])),
        lambda: tc(t([1., nan]), t([1., nan])),
        lambda: tc(t([1., nan]), t([1., nan]), equal_nan=True),
        lambda: tc(1.0, 1.5),
        lambda: tc(1, 2),
        lambda: tc(1, 1.0),
        lambda: tc(True, False),
        lambda: tc(None, 1),
        lambda: tc([t(1.), t(2.)], [t(1.), t(3.)]),
        lambda: tc({"a": t(1.)}, {"a": t(3.)}),
        lambda: tc({"a": t(1.)}, {"b": t(1.)}),
        lambda: tc(t([1., 2.]), t([1., 2.1]), rtol=0.1),
        lambda: tc(t([1., 2.]), t([1., 2.1]), rtol=0.1, atol=0),
        lambda: tc(t([1., 2.]), t([1., 2.5]), msg="custom"),
        lambda: tc(t([1., 2.]), t([1., 2.5]), msg=lambda m: "X" + m),
        lambda: tc([t([1., 2.])], [t([1., 2.5])], msg=lambda m: "X" + m),
        lambda: tc(t([1., 2.]), t([1, 2]), check_dtype=False),
        lambda: tc(t([1., 2.]), t([1, 3]), check_dtype=False),
        lambda: tc(t([True, False]), t([True, True])),
        lambda: tc(t([1., 0.]), t([1., 1e-20])),
        lambda: tc(t([0., 0.]), t([1., 1.])),
        lambda: tc(t([1., 2.]), t([1., 0.])),
        lambda: tc(t([1., 2.]), [1., 2.]),
        lambda: tc([1., 2.], [1., 2., 3.]),
        lambda: tc(t([1., 2.]).requires_grad_(), t([1., 2.])),
        lambda: tc(t([1. + 1j]), t([1. + 2j])),
        lambda: tc(t(1.), t(2.)),
        lambda: tc(t([1, 2, 7]), t([4, 1, 2])),
        lambda: tc(t([1., float("inf")]), t([1., float("inf")])),
        lambda: tc(t([1., float("inf")]), t([1., -float("inf")])),
        lambda: tc(t([1., 2.], dtype=lib.float16), t([1., 2.002], dtype=lib.float16)),
        lambda: tc(t([1., 2.], dtype=lib.bfloat16), t([1., 2.5], dtype=lib.bfloat16)),
        lambda: tc(t([1., 2.], dtype=lib.float64), t([1., 2. + 1e-6], dtype=lib.float64)),
        lambda: tc(t([[1., 2.], [3., 4.]]).t(), t([[1., 3.], [2., 4.]]), check_stride=True),
        lambda: tc(np.array([1., 2.]), np.array([1., 3.])),
        lambda: tc(t([1., 2.]), np.array([1., 2.])),
        lambda: tc(t([1., 2.]), t([1.00001, 2.])),
    ]


def test_assert_close_matches_pytorch(torch):
    theirs, ours = _cases(torch), _cases(tapegrad)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        got, expected = _error(a), _error(b)
        if expected is None:
            assert got is None, (i, got)
            continue
        assert got is not None and got[0] is expected[0], (i, got, expected)
        # type names differ (tapegrad.Tensor, tapegrad.float32): compare with them spelled as PyTorch's
        text = got[1].replace("tapegrad._tensor.Tensor", "torch.Tensor").replace("tapegrad.", "torch.")
        text = text.replace("tapegrad.Size", "torch.Size")
        assert text == expected[1], (i, text, expected[1])


def test_assert_allclose_deprecated(torch):
    t = tapegrad.tensor
    with pytest.warns(FutureWarning, match=r"`torch.testing.assert_allclose\(\)` is deprecated since 1.12"):
        tapegrad.testing.assert_allclose(t([1., 2.]), [1., 2.00001])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tapegrad.testing.assert_allclose(t([1., float("nan")]), t([1., float("nan")]))
        tapegrad.testing.assert_allclose(t([1., 2.]), t([1., 2.]).double())
        with pytest.raises(AssertionError) as ours:
            tapegrad.testing.assert_allclose(t([1., 2.]), t([1., 2.5]))
        with pytest.raises(AssertionError) as theirs:
            torch.testing.assert_allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.5]))
    assert str(ours.value) == str(theirs.value)
