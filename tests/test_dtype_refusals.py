"""Ops whose PyTorch CPU kernels have no complex version refuse complex input with PyTorch's error (JAX
would order, round or select complex values and return something): the type and PyTorch's text, which
tapegrad's message contains (it adds what to do)."""
import pytest

import tapegrad
from conftest import require

CASES = """x.max() x.min() x.max(0) x.min(0) x.amin() x.amax(0) x.aminmax() x.median() x.median(0) x.nanmedian()
x.mode() x.mode(0) x.argmin() x.argmax() x.argmax(0) x.sort() x.argsort() x.msort() x.topk(1) x.kthvalue(1)
x.cummax(0) x.cummin(0) x.unique() x.unique(dim=0) x.unique_consecutive() x.clamp(0,1) x.clamp(min=0)
x.clamp_(0,1) x.maximum(x) x.minimum(x) x.fmax(x) x.fmin(x) x.round() x.round(decimals=1) x.round_()
x.logit() x.floor() x.ceil() x.trunc() x.frac() x.frac_() x.erf() x.erfc() x.erfinv() x.lgamma() x.digamma()
x.sign() x//2 x%2 x.floor_divide(2) x.remainder(2) x.fmod(2)""".split()


def _raised(lib, code):
    x = lib.tensor([1 + 2j, 3j])
    try:
        eval(code, {"torch": lib, "x": x})
    except Exception as e:   # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e).strip()
    return None


@pytest.mark.parametrize("code", CASES)
def test_complex_input_is_refused_as_torch(code):
    torch = require("torch")
    theirs, ours = _raised(torch, code), _raised(tapegrad, code)
    assert theirs is not None, "torch ran it"
    assert ours is not None and ours[0] == theirs[0] and theirs[1] in ours[1], (ours, theirs)
