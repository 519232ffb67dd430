"""gradcheck, gradgradcheck and anomaly detection against PyTorch."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import both, fold_repr


def _bad(lib):
    class Bad(lib.autograd.Function):   # backward off by a factor 1.5
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3
    return Bad


def test_gradcheck_passes_and_reports_mismatch_as_pytorch(torch):
    def build(lib):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[0.5, -1.0], [2.0, 0.3]], dtype=lib.float64, requires_grad=True)
        ok = [lib.autograd.gradcheck(lambda x, w: ((w @ x).tanh(), x.sin().sum()), (x, w)),
              lib.autograd.gradcheck(lambda x: (x ** 3).sin(), x, check_forward_ad=True),
              lib.autograd.gradgradcheck(lambda x, w: (w @ x).tanh() * x, (x, w)),
              lib.autograd.gradcheck(_bad(lib).apply, (x,), raise_exception=False)]
        try:
            lib.autograd.gradcheck(_bad(lib).apply, (x,))
        except RuntimeError as e:
            ok.append((type(e).__name__, fold_repr(str(e))))
        try:
            lib.autograd.gradcheck(lambda y: y * 2, (lib.ones(2, dtype=lib.float64),))
        except ValueError as e:
            ok.append(str(e))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lambda y: y * 2, (lib.ones(2, requires_grad=True),), raise_exception=False)
        ok.append([str(w.message) for w in caught if "double precision" in str(w.message)])
        return ok
    ours, theirs = both(build)
    assert ours == theirs


def test_anomaly_mode_names_the_node_and_the_forward_line(torch):
    def build(lib):
        x = lib.tensor([-1.0, 4.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = lib.where(x > 0, x.sqrt(), lib.zeros(2))   # the forward line the warning shows
                inside = lib.is_anomaly_enabled()
                try:
                    y.sum().backward()
                except RuntimeError as e:
                    error = str(e)
        shown = [str(w.message) for w in caught if "Error detected" in str(w.message)]
        return error, inside, lib.is_anomaly_enabled(), shown[0].split("\n")[0], "x.sqrt()" in shown[0]
    ours, theirs = both(build)
    assert ours == theirs


def test_anomaly_mode_leaves_results_unchanged():
    x = tapegrad.tensor([1.0, 4.0], requires_grad=True)
    with tapegrad.autograd.set_detect_anomaly(True):
        (x.sqrt() * x).sum().backward()
    assert not tapegrad.is_anomaly_enabled()
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * np.sqrt([1.0, 4.0]), rtol=1e-6)
