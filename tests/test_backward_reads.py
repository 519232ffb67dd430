"""What a node's backward reads is analysed once per op, ranks and dtypes (autograd/_saved.plan): never from
an empty tensor, whose VJP JAX makes a constant that reads nothing. A sort of an empty tensor made every
later sort's backward read a placeholder index instead of the permutation (fuzzer seed 59): every gradient
went to element 0. Run in a fresh process: the analysis is cached for the life of the process."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import require

# (empty input, input of the same rank, code over x): the code runs on the empty tensor first
CASES = [
    ((0,), (4,), "x.sort(dim=0, stable=True).values"),
    ((0,), (4,), "x.sort(descending=True).values * torch.arange(1.0, 1.0 + x.numel(), dtype=x.dtype)"),
    ((2, 0), (2, 3), "x.topk(min(2, x.shape[1]), dim=1).values"),
    ((0, 3), (4, 3), "x.max(dim=0).values if x.shape[0] else x.sum(0)"),
    ((0, 3), (4, 3), "x.cummax(dim=0).values"),
    ((0,), (5,), "torch.gather(x, 0, (torch.arange(x.numel()) * 2) % max(x.numel(), 1))"),
    ((0,), (5,), "x.index_select(0, torch.arange(x.numel() - 1, -1, -1))"),
    ((0,), (5,), "x.masked_select(x > 0)"),
    ((0, 2), (3, 2), "x.prod(0)"),
    ((0,), (4,), "x.cumprod(0)"),
    ((0,), (4,), "x * x.flip(0)"),
]


def _values(shape):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float64) * 0.7 % 2.3 - 1.1).reshape(shape).tolist()


def _grads(lib, first_empty):
    found = []
    for empty, shape, code in CASES:
        if first_empty:
            x = lib.tensor(_values(empty), dtype=lib.float64).reshape(empty).requires_grad_()
            out = eval(code, {"torch": lib, "x": x})
            if out.requires_grad:
                out.sum().backward()
        x = lib.tensor(_values(shape), dtype=lib.float64).requires_grad_()
        out = eval(code, {"torch": lib, "x": x})
        (out * lib.arange(1.0, 1.0 + out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        found.append(x.grad.tolist())
    return found


def grads_after_empty_first():
    import tapegrad
    print(json.dumps(_grads(tapegrad, first_empty=True)))


def test_a_backward_met_first_on_an_empty_tensor_still_reads_what_it_needs():
    torch = require("torch")
    done = subprocess.run([sys.executable, "-c", "import test_backward_reads as t; t.grads_after_empty_first()"],
                          cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ours = json.loads(done.stdout.strip().splitlines()[-1])
    for (_, _, code), got, want in zip(CASES, ours, _grads(torch, first_empty=False)):
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=code)
