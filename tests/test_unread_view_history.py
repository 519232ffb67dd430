"""A view made before its base gained a history in place (a.add_(w) on a tensor without grad) has no grad_fn
of its own in PyTorch until something reads it (grad_fn, is_leaf, a repr, an op that records it, backward):
an in-place op on it before then is refused as on a leaf that requires grad. Reading requires_grad, or an op
under no_grad, does not count."""
import pytest
import torch

import tapegrad as tg
from conftest import run_code

SETUP = "w = lib.tensor(1.5, requires_grad=True)\na = lib.ones(2); b = a[:1]\n"

CASES = {
    "base written": "a.add_(w); b.mul_(2)",
    "sibling view written": "c = a[1:]; c.add_(w); b.mul_(2)",
    "base written twice": "a.add_(w); a.mul_(2); b.mul_(2)",
    "copy_ into the view": "a.add_(w); b.copy_(w.view(1))",
    "out= the view": "a.add_(w); lib.add(b, 1, out=b)",
    "requires_grad read": "a.add_(w); print(b.requires_grad); b.mul_(2)",
    "read under no_grad": "a.add_(w)\nwith lib.no_grad(): c = b * 2\nb.mul_(2)",
    "retain_grad": "a.add_(w); b.retain_grad(); b.mul_(2)",
    "is_leaf read": "a.add_(w); print(b.is_leaf); b.mul_(2); print(b)",
    "repr read": "a.add_(w); print(b); b.mul_(2); print(b)",
    "recorded by an op": "a.add_(w); c = b * 2; b.mul_(2); print(b, c)",
    "backward through it": "a.add_(w); b.sum().backward(); b.mul_(2); print(b, w.grad)",
    "written under no_grad": "a.add_(w)\nwith lib.no_grad(): b.mul_(2)\nprint(b)",
    "setitem": "a.add_(w); b[0] = 3; print(b)",
    "a view of the view": "a.add_(w); d = b.view(1); d.mul_(2); print(d, b)",
}


@pytest.mark.parametrize("case", CASES)
def test_unread_view_as_pytorch(case):
    assert run_code(tg, SETUP + CASES[case], _words) == run_code(torch, SETUP + CASES[case], _words)


def _words(error):   # (PyTorch's, without tapegrad's explanation)
    return str(error).split(" (This view")[0]
