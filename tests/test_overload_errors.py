"""Calls that fit none of a function's overloads raise PyTorch's argument-parser error, word for word
(tapegrad/_argument_errors.py): "received an invalid combination of arguments" with every overload listed,
or, when the number of arguments fits one overload only, that overload's error for the first bad argument.
"""
import random
import sys
import subprocess

import numpy as np
import pytest

import tapegrad
from tapegrad import _argument_errors, _torch_signatures

from conftest import require

torch = require("torch")

# a value per kind of argument, in each library
_VALUES = [
    lambda lib: 1, lambda lib: 1.5, lambda lib: True, lambda lib: None, lambda lib: "a", lambda lib: (1, 2),
    lambda lib: [1.0], lambda lib: lib.zeros(2, 3), lambda lib: lib.float32, lambda lib: [lib.zeros(2)],
    lambda lib: np.int64(2), lambda lib: lib.nn.Parameter(lib.zeros(2)), lambda lib: (2.5,), lambda lib: float,
]
_KEYWORDS = ["dim", "keepdim", "other", "unbiased", "alpha", "foo", "dtype", "out", "input", "correction"]


def _drawn_calls(seed, per_name):
    rng = random.Random(seed)
    for kind, table in [(k, t) for tables in (_torch_signatures.OVERLOADS, _torch_signatures.SINGLE)
                        for k, t in tables.items()]:
        for name in sorted(table):
            for _ in range(per_name):
                n = rng.randint(0, 4)
                values = [rng.choice(_VALUES) for _ in range(n)]
                # (several keywords are listed in the order of a C++ hash map's buckets, modelled for keys
                # in different buckets only: one keyword per drawn call, the explicit CALLS have two)
                keywords = rng.sample(_KEYWORDS, rng.randint(0, 1) if n else 0)
                positional = values[:n - len(keywords)]
                if kind != "method" and rng.random() < 0.7:
                    positional = [lambda lib: lib.zeros(2, 3)] + positional
                yield kind, name, positional, dict(zip(keywords, values[n - len(keywords):]))


def _theirs(kind, name, positional, keywords):
    fn = getattr({"method": torch.zeros(2, 3), "kernel": torch._C._nn, "nn": torch.nn.functional,
                  "function": torch}[kind], name)
    try:
        fn(*[v(torch) for v in positional], **{k: v(torch) for k, v in keywords.items()})
    except TypeError as e:
        return str(e)
    except Exception:
        return None
    return None


def test_messages_match_torch_for_drawn_calls_to_every_listed_name():
    # The message builder alone, on calls drawn over every name in the table (PyTorch's listed overloads, and
    # the one-signature functions derived from aten's schemas), against the error PyTorch's parser raises for
    # the same call.
    compared = 0
    for kind, name, positional, keywords in _drawn_calls(0, 5):
        theirs = _theirs(kind, name, positional, keywords)
        if theirs is None:
            continue
        ours = _argument_errors.explained(TypeError("tapegrad's own"), kind, name,
                                          tuple(v(tapegrad) for v in positional),
                                          {k: v(tapegrad) for k, v in keywords.items()})
        if str(ours) == "tapegrad's own":   # the arguments fit an overload: PyTorch failed later, on a value
            continue
        assert str(ours) == theirs, (kind, name)
        compared += 1
    assert compared > 2500


x4 = "lib.ones(1, 1, 4, 4)"
CALLS = [
    "lib.ones(2, 3).sum(1.0)", "lib.sum(lib.ones(2, 3), 1.0)", "lib.ones(2, 3).sum(foo=1)",
    "lib.ones(2, 3).std(unbiased=1)", "lib.ones(2, 3).std(0, unbiased=1)", "lib.std(lib.ones(2, 3), unbiased=1)",
    "lib.ones(2, 3).var(0, unbiased=1)", "lib.ones(2, 3).mean(0, keepdim=1)", "lib.ones(2, 3).max(1.0)",
    "lib.ones(2, 3).min(other=None)", "lib.max(lib.ones(2, 3), 1.0)", "lib.ones(2, 3).any(1.0)",
    "lib.ones(2, 3).narrow(0, 0.0, 1)", "lib.ones(2, 3).narrow(0, 0, 1.0)", "lib.narrow(lib.ones(2, 3), 0, 0.5, 1)",
    "lib.ones(2, 3).view(2.5)", "lib.ones(2, 3).squeeze(1.5)", "lib.ones(2, 3).all(1, 1)",
    f"lib.nn.functional.conv2d({x4}, lib.ones(1, 1, 2, 2), stride=1.5)",
    f"lib.nn.functional.conv2d({x4}, lib.ones(1, 1, 2, 2), stride=(1, 1.5))",
    f"lib.nn.functional.conv2d({x4}, lib.ones(1, 1, 2, 2), None, 1, 'same', 1.5)",
    f"lib.nn.functional.interpolate({x4}, scale_factor=2, mode='bilinear', align_corners=1)",
    f"lib.nn.functional.interpolate({x4}, size=(6, 5), mode='bicubic', align_corners=1.0)",
    "lib.nn.functional.interpolate(lib.ones(1, 1, 4), scale_factor=(2,), mode='linear', align_corners=0)",
    "lib.ones(2, 3).tensor_split(1.5)", "lib.ones(2, 3).movedim(0, 1.0)", "lib.ones(2, 3).add(1, foo=2)",
    "lib.ones(2, 3).eq_([1])", "lib.ones(2, 3).sum(dim=1.5, keepdim=2)",
    "lib.addr(lib.ones(2), dim=1, out=2)", "lib.ones(2, 3).masked_fill(lib.ones(2, 3) > 0, 'a')",
    # one-signature functions: the argument, its position, the function
    "lib.ones(2, 3).cumsum(1.0)", "lib.topk(lib.ones(5), 2.0)", "lib.cat([lib.ones(2)], 1.0)",
    "lib.ones(2, 3).transpose(0, 1.0)", "lib.softmax(lib.ones(2, 3), 1.0)", "lib.ones(2, 3).softmax(1.0)",
    "lib.nn.functional.softmax(lib.ones(2, 3), 1.0)", "lib.nn.functional.log_softmax(lib.ones(2, 3), dim=1.5)",
    "lib.nn.functional.softmin(lib.ones(2, 3), 1.0)", "lib.ones(2, 3).permute(1.0, 0)",
    "lib.ones(2, 3).reshape(3.0, 2)", "lib.ones(2, 3).repeat(1.0, 1)", "lib.ones(2, 3).diagonal(0.5)",
    "lib.nn.functional.one_hot(lib.tensor([1]), 2.0)", "lib.nn.functional.gelu(lib.ones(2), approximate=1)",
    "lib.ones(2, 3).argmax(1.0)", "lib.ones(2, 3).amax(1, 1)", "lib.ones(2, 3).unsqueeze(1.0)",
    "lib.ones(2, 3).index_select(0.0, lib.tensor([0]))", "lib.ones(2, 3).cumsum(dim=1, foo=2)",
]


@pytest.mark.parametrize("code", CALLS)
def test_a_call_fitting_no_overload_raises_torch_s_error(code):
    def run(lib):
        try:
            eval(code, {"lib": lib})
        except Exception as e:
            return type(e).__name__, str(e)
        return None
    theirs = run(torch)
    assert theirs is not None and theirs[0] == "TypeError", theirs
    assert run(tapegrad) == theirs


def test_calls_that_fit_an_overload_still_run():
    x = tapegrad.arange(6.0).reshape(2, 3)
    assert x.narrow(1, tapegrad.tensor(1), 2).tolist() == [[1.0, 2.0], [4.0, 5.0]]
    assert x.narrow(1, np.int64(1), 1).tolist() == [[1.0], [4.0]]
    assert x.std(0, unbiased=False).shape == (3,)
    assert tapegrad.nn.functional.interpolate(x[None], scale_factor=2, mode="linear", align_corners=True).shape == \
        (1, 2, 6)


def test_a_type_error_from_within_a_call_that_fits_stays_as_raised():
    # (only arguments that fit no overload are the parser's business)
    with pytest.raises(TypeError, match="own message"):
        _argument_errors.parsed(lambda self, dim: (_ for _ in ()).throw(TypeError("own message")), "method",
                                "sum")(tapegrad.ones(2), 0)


@pytest.mark.skipif(torch.__version__.split("+")[0] != "2.13.0", reason="the table was read from PyTorch 2.13.0")
def test_the_overload_table_is_pytorch_s():
    done = subprocess.run([sys.executable, "tools/torch_signatures/extract.py", "--check"], capture_output=True,
                          text=True, cwd=__file__.rsplit("/tests/", 1)[0])
    assert done.returncode == 0, done.stderr
