"""Numbers and complex values written into tensors (setitem, fill_, copy_, masked_fill_, full) convert
as PyTorch's do: a number that does not fit the tensor's dtype, or a complex number with an imaginary
part written into a real tensor, is refused with PyTorch's error (naming the C type it was converted to);
a complex tensor written into a real one keeps its real part, with PyTorch's warning (once per process)."""
import warnings

import pytest

import tapegrad
from tapegrad import _inplace
from conftest import raised

MASK = [True, False, True]

# name -> (dtype name, write(lib, x)); x is zeros(3) of that dtype
WRITES = {
    "setitem, a complex number": ("float32", lambda lib, x: x.__setitem__(0, 1 + 2j)),
    "setitem, a complex number without imaginary part": ("float32", lambda lib, x: x.__setitem__(0, 1 + 0j)),
    "setitem, a complex number into int64": ("int64", lambda lib, x: x.__setitem__(0, 1 + 2j)),
    "setitem, a complex number into int32": ("int32", lambda lib, x: x.__setitem__(0, 3j)),
    "setitem, a complex number into float64": ("float64", lambda lib, x: x.__setitem__(0, 1 + 2j)),
    "setitem, a complex number into half (through double)": ("float16", lambda lib, x: x.__setitem__(0, 1 + 2j)),
    "setitem, a complex number into bfloat16": ("bfloat16", lambda lib, x: x.__setitem__(slice(None), 2j)),
    "setitem, a complex number into bool": ("bool", lambda lib, x: x.__setitem__(0, 1 + 2j)),
    "setitem, a complex number at an index tensor": ("float32", lambda lib, x: x.__setitem__(lib.tensor([0, 1]), 1 + 2j)),
    "setitem, a complex number at a mask": ("float32", lambda lib, x: x.__setitem__(lib.tensor(MASK), 1 + 2j)),
    "setitem, a one-element complex tensor at a mask": (
        "float32", lambda lib, x: x.__setitem__(lib.tensor(MASK), lib.tensor([1 + 2j]))),
    "setitem, a one-element real-valued complex tensor at a mask": (
        "float32", lambda lib, x: x.__setitem__(lib.tensor(MASK), lib.tensor([5 + 0j]))),
    "setitem, a complex tensor at an index tensor": (
        "float32", lambda lib, x: x.__setitem__(lib.tensor([0, 1]), lib.tensor([1 + 2j, 3j]))),
    "setitem, a complex 0-d tensor": ("float32", lambda lib, x: x.__setitem__(0, lib.tensor(1.5 + 2j))),
    "setitem, a complex vector into a slice": ("float32", lambda lib, x: x.__setitem__(slice(0, 2), lib.tensor([1 + 2j, 3j]))),
    "setitem, a large number into half (inf through double)": ("float16", lambda lib, x: x.__setitem__(0, 70000.0)),
    "fill_, a complex number": ("float32", lambda lib, x: x.fill_(1 + 2j)),
    "fill_, a complex number into half": ("float16", lambda lib, x: x.fill_(1 + 2j)),
    "fill_, a large number into half": ("float16", lambda lib, x: x.fill_(70000.0)),
    "fill_, a large number into bfloat16": ("bfloat16", lambda lib, x: x.fill_(1e39)),
    "fill_, a complex 0-d tensor": ("float32", lambda lib, x: x.fill_(lib.tensor(-1.5 + 2j))),
    "copy_, a complex tensor": ("float32", lambda lib, x: x.copy_(lib.tensor([1 + 2j, 3j, -1j]))),
    "masked_fill_, a complex number": ("float32", lambda lib, x: x.masked_fill_(lib.tensor(MASK), 1 + 2j)),
    "masked_fill_, a complex number into half": ("float16", lambda lib, x: x.masked_fill_(lib.tensor(MASK), 1j)),
    "full, a complex number into float32": ("float32", lambda lib, x: x.copy_(lib.full((3,), 1 + 2j, dtype=lib.float32))),
}


@pytest.mark.parametrize("case", sorted(WRITES))
def test_a_written_value_converts_as_pytorchs(case, torch):
    dtype, write = WRITES[case]
    results = []
    for lib in (tapegrad, torch):
        x = lib.zeros(3, dtype=getattr(lib, dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # (the warning is checked below: PyTorch warns once per process)
            error = raised(lambda: write(lib, x))
        results.append((error, x.to(lib.float64).tolist()))
    assert results[0] == results[1]


def test_a_complex_tensor_written_into_a_real_one_warns_once_as_pytorch(monkeypatch):
    monkeypatch.setitem(_inplace._warned, "complex_to_real", False)
    x = tapegrad.zeros(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x.copy_(tapegrad.tensor([1 + 2j, 3j, -1j]))
        x[0] = tapegrad.tensor(2 + 1j)
        x.fill_(tapegrad.tensor(4 - 1j))
    messages = [str(w.message) for w in caught]
    assert messages == ["Casting complex values to real discards the imaginary part"]
    assert caught[0].category is UserWarning and caught[0].filename == __file__
    assert x.tolist() == [4.0, 4.0, 4.0]
    assert not any("soon raise" in m for m in messages)   # (never JAX's own warning)


def test_the_gradient_of_a_complex_tensor_copied_into_a_real_one_is_pytorchs(torch):
    grads = []
    for lib in (tapegrad, torch):
        z = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = lib.zeros(2).copy_(z * 2)
        (x * lib.tensor([1.0, -3.0])).sum().backward()
        grads.append((z.grad.tolist(), str(z.grad.dtype).removeprefix("torch.").removeprefix("tapegrad.")))
    assert grads[0] == grads[1]
