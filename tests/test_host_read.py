""".item() of a one-element view of a concrete tensor is read on the host (`tapegrad/_host_read.py`):
the same value as PyTorch, no program run, and the view's value as its storage holds it now."""
import numpy as np
import pytest
import torch

import tapegrad
from tapegrad import _host_read, _programs


def _runs():
    info = _programs.info()
    return info["executions"] + info["numpy_runs"]


_VIEWS = {
    "select": lambda t: t[1, 2],
    "negative": lambda t: t[-1][-1],
    "column": lambda t: t[:, 1][2],
    "transpose": lambda t: t.t()[3, 1],
    "strided slice": lambda t: t[::2, 1::2][1, 1],
    "reshape": lambda t: t.reshape(12)[7],
    "unsqueeze": lambda t: t.unsqueeze(0)[0, 2, 3],
    "as_strided": lambda t: t.as_strided((2,), (5,), 1)[1],
    "diagonal": lambda t: t.diagonal()[2],
    "narrow": lambda t: t.narrow(1, 1, 2)[2, 0],
    "expand": lambda t: t[0:1].expand(5, 4)[3, 2],
}


@pytest.mark.parametrize("name", sorted(_VIEWS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_view_item_matches_torch(name, dtype):
    values = np.arange(12).reshape(3, 4) * 3 - 7
    ours = tapegrad.tensor(values).to(getattr(tapegrad, dtype))
    theirs = torch.tensor(values).to(getattr(torch, dtype))
    ours._value   # concrete
    before = _runs()
    got = _VIEWS[name](ours).item()
    assert _runs() == before   # no program (XLA or NumPy tier) ran
    want = _VIEWS[name](theirs).item()
    assert type(got) is type(want) and got == want


def test_complex_and_bitcast_views():
    c = np.array([1 + 2j, 3 - 4j], np.complex64)
    assert tapegrad.view_as_real(tapegrad.tensor(c))[1, 1].item() == torch.view_as_real(torch.tensor(c))[1, 1].item()
    assert tapegrad.tensor(c).imag[1].item() == torch.tensor(c).imag[1].item()
    ints = np.arange(10, dtype=np.int32) * 100003
    got = tapegrad.tensor(ints).view(tapegrad.float32)[3].item()
    assert got == torch.tensor(ints).view(torch.float32)[3].item()
    half = tapegrad.arange(4.0, dtype=tapegrad.bfloat16)[2]
    assert half.item() == torch.arange(4.0, dtype=torch.bfloat16)[2].item()


def test_reads_the_storage_as_it_is_now():
    ours, theirs = tapegrad.zeros(5), torch.zeros(5)
    for lib, t in ((tapegrad, ours), (torch, theirs)):
        v = t[3]
        t.add_(2)      # written after the view was made
        t[3] = 7.5
        v.mul_(2)      # written through the view
        assert v.item() == 15.0
    assert ours.tolist() == theirs.tolist()


def test_pending_storage_and_repeated_reads():
    x = tapegrad.arange(6.0)
    y = x * 2          # pending: read as before
    v = y[4]
    assert v.item() == 8.0 and v.item() == 8.0
    w = tapegrad.arange(6.0)[5]
    assert w.item() == 5.0 and float(w) == 5.0 and w.item() == 5.0


def test_view_of_a_compiled_result_reads_without_a_program():
    x = tapegrad.arange(4.0, requires_grad=True)

    @tapegrad.compile
    def grad_of(x):
        (x * x).sum().backward()
        g = x.grad
        x.grad = None
        return g
    for _ in range(3):
        out = grad_of(x)
        before = _runs()
        assert out[3].item() == 6.0
        assert _runs() == before


def test_unsupported_recipe_falls_back(monkeypatch):
    monkeypatch.setattr(_host_read, "_recipes", {})
    monkeypatch.setattr(_host_read, "compile_jaxpr", lambda closed: None)
    t = tapegrad.arange(5.0)
    assert t[2].item() == 2.0


def test_every_position_and_a_large_storage_read_without_a_program():
    values = np.arange(30, dtype=np.float32).reshape(5, 6) * 1.5
    ours, theirs = tapegrad.tensor(values), torch.tensor(values)
    ours._value
    before = _runs()
    got = [[ours[i, j].item() for j in range(6)] for i in range(5)] + [[ours.t()[j][i].item() for j in range(6)]
                                                                       for i in range(5)]
    assert _runs() == before
    assert got == [[theirs[i, j].item() for j in range(6)] for i in range(5)] * 2
    n = _host_read.SMALL + 3   # past the storages whose positions are kept: the recipe runs on NumPy
    big, tbig = tapegrad.arange(n, dtype=tapegrad.int64), torch.arange(n)
    big._value
    before = _runs()
    assert big[-2].item() == tbig[-2].item() and big[5:][7].item() == tbig[5:][7].item()
    assert _runs() == before
