"""Normalisations of half and bfloat16 input as PyTorch's CPU kernels compute them: in float32, rounded to
the input's dtype once, with parameters of the input's dtype or float32 (PyTorch's mixed case), and the
running statistics of batch norm in either dtype."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close

DTYPES = ["bfloat16", "float16"]


def _input(lib, dtype, shape=(6, 4, 5)):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32) * 3 + 1
    return lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()


def _params(lib, dtype, n, seed=1):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(n).astype(np.float32)).to(getattr(lib, dtype)).requires_grad_()
            for _ in range(2)]


CALLS = {
    "layer_norm": lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (5,), w, b),
    "group_norm": lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b),
    "batch_norm, batch statistics": lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b,
                                                                                      training=True),
    "batch_norm, running statistics": lambda lib, x, w, b: lib.nn.functional.batch_norm(
        x, lib.linspace(-1, 1, 4).to(w.dtype), lib.linspace(0.5, 2, 4).to(w.dtype), w, b),
}


@pytest.mark.parametrize("params", ["float32", "same"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("call", list(CALLS))
def test_reduced_precision_normalisations_match_torch(call, dtype, params, torch):
    results = {}
    for lib in (torch, tapegrad):
        x = _input(lib, dtype)
        w, b = _params(lib, dtype if params == "same" else "float32", 5 if call == "layer_norm" else 4)
        out = CALLS[call](lib, x, w, b)
        out.float().pow(2).sum().backward()
        results[lib] = out, x.grad, w.grad, b.grad
    (out, gx, gw, gb), expected = results[tapegrad], results[torch]
    assert_close(out, expected[0], rtol=0, atol=0)   # one rounding of the float32 result, as PyTorch's
    assert_close(gx, expected[1], rtol=2e-2, atol=2e-2)
    assert_close(gw, expected[2], rtol=2e-2, atol=2e-1)
    assert_close(gb, expected[3], rtol=2e-2, atol=2e-1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_norm_layer_with_float32_parameters_takes_reduced_precision_input(dtype, torch):
    outs, stats = {}, {}
    for lib in (torch, tapegrad):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm1d(4)
        x = _input(lib, dtype)
        y = bn(x)
        outs[lib], stats[lib] = y, (bn.running_mean, bn.running_var)
    assert_close(outs[tapegrad], outs[torch], rtol=0, atol=0)
    for ours, theirs in zip(stats[tapegrad], stats[torch]):
        assert_close(ours, theirs, rtol=1e-6, atol=1e-6)   # float32: updated from float32 batch statistics
