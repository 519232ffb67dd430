"""Module's lookups and registrations by name, with PyTorch's errors: get_submodule, get_parameter,
get_buffer (a name that is no attribute, or an attribute of another kind) and add_module's name checks."""
import pytest
import torch

import tapegrad as tg

CASES = ["m.get_submodule('l1')", "m.get_submodule('l3')", "m.get_parameter('l1.weight').shape",
         "m.get_parameter('l1.nope')", "m.get_parameter('buf')", "m.get_parameter('l1')", "m.get_buffer('buf')",
         "m.get_buffer('l1.weight')", "m.get_buffer('nope')", "m.add_module('a.b', nn.ReLU())",
         "m.add_module('', nn.ReLU())", "m.add_module(3, nn.ReLU())", "m.add_module('x', 3)",
         "m.register_buffer('a.b', lib.zeros(1))", "m.register_parameter('a.b', None)"]


def outcome(lib, code):
    nn = lib.nn
    m = nn.Module()
    m.l1 = nn.Linear(2, 3)
    m.register_buffer("buf", lib.zeros(2))
    try:
        return "value", repr(eval(code, {"m": m, "nn": nn, "lib": lib})).replace("tapegrad", "torch")
    except Exception as e:
        return "error", type(e).__name__, str(e).replace("tapegrad", "torch")


@pytest.mark.parametrize("code", CASES)
def test_lookup_as_torch(code):
    assert outcome(tg, code) == outcome(torch, code)
