"""Int and bool arguments are parsed as PyTorch's argument parser does (tapegrad/_arg_types.py).

A dim, k, diagonal or chunk count is an int or has `__index__` (a NumPy integer, a one-element integer
tensor); a bool, a float or another tensor is a TypeError naming the argument. A flag (keepdim, largest,
descending) is a Python bool and nothing else. Each call is compared with PyTorch: the same exception
type and the phrase "must be int, not ..." / "must be bool, not ...", or the same result.
"""
import numpy as np
import pytest

import tapegrad

from conftest import require

torch = require("torch")

CALLS = {
    "sum dim": lambda lib, a: lib.ones(4, 6).sum(a),
    "softmax dim": lambda lib, a: lib.softmax(lib.ones(4, 6), a),
    "cumsum dim": lambda lib, a: lib.cumsum(lib.ones(4, 6), a),
    "unsqueeze dim": lambda lib, a: lib.ones(4, 6).unsqueeze(a),
    "topk dim": lambda lib, a: lib.topk(lib.arange(24.0).reshape(4, 6), 2, a),
    "mean dims": lambda lib, a: lib.ones(4, 6).mean((0, a)),   # in a list a bool is an int, as PyTorch
    "topk k": lambda lib, a: lib.topk(lib.arange(6.0), a),
    "kthvalue k": lambda lib, a: lib.arange(6.0).kthvalue(a),
    "tril diagonal": lambda lib, a: lib.ones(4, 6).tril(a),
    "triu diagonal": lambda lib, a: lib.triu(lib.ones(4, 6), a),
    "chunk chunks": lambda lib, a: lib.arange(6.0).chunk(a),
}
FLAGS = {
    "sum keepdim": lambda lib, a: lib.ones(4, 6).sum(1, a),
    "amax keepdim": lambda lib, a: lib.amax(lib.ones(4, 6), 1, a),
    "median keepdim": lambda lib, a: lib.ones(4, 6).median(1, a),
    "vector_norm keepdim": lambda lib, a: lib.linalg.vector_norm(lib.ones(4, 6), 2, 1, a),
    "topk largest": lambda lib, a: lib.topk(lib.arange(6.0), 2, 0, a),
    "sort descending": lambda lib, a: lib.sort(lib.arange(6.0), 0, a),
}
NOT_INTS = {
    "bool": lambda lib: True,
    "float": lambda lib: 1.0,
    "float tensor": lambda lib: lib.tensor(1.0),
    "two-element tensor": lambda lib: lib.ones(2, dtype=lib.int64),
}
INTS = {
    "numpy int": lambda lib: np.int64(1),
    "0-d int tensor": lambda lib: lib.tensor(1),
}
NOT_BOOLS = {
    "int": lambda lib: 1,
    "float": lambda lib: 0.0,
    "None": lambda lib: None,
    "bool tensor": lambda lib: lib.tensor(True),
    "numpy bool": lambda lib: np.bool_(True),
}


def _error(lib, call, make):
    with pytest.raises(Exception) as info:
        call(lib, make(lib))
    return info.value


def _values(out):
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(t.detach().numpy() if hasattr(t, "detach") else t) for t in out]


@pytest.mark.parametrize("kind", NOT_INTS)
@pytest.mark.parametrize("call", CALLS)
def test_a_non_int_is_pytorchs_type_error(call, kind):
    try:
        expected = _values(CALLS[call](torch, NOT_INTS[kind](torch)))
    except TypeError as error:
        theirs = error
    else:   # an int list takes a bool
        for o, t in zip(_values(CALLS[call](tapegrad, NOT_INTS[kind](tapegrad))), expected):
            np.testing.assert_array_equal(o, t)
        return
    ours = _error(tapegrad, CALLS[call], NOT_INTS[kind])
    assert type(ours) is type(theirs) is TypeError, (ours, theirs)
    if "must be int, not" in str(theirs):
        assert "must be int, not" in str(ours), ours
        assert str(theirs).split("must be int, not ")[1].split()[0] == str(ours).split("must be int, not ")[1]


@pytest.mark.parametrize("kind", INTS)
@pytest.mark.parametrize("call", CALLS)
def test_what_has_index_is_an_int(call, kind):
    theirs = _values(CALLS[call](torch, INTS[kind](torch)))
    ours = _values(CALLS[call](tapegrad, INTS[kind](tapegrad)))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("kind", NOT_BOOLS)
@pytest.mark.parametrize("call", FLAGS)
def test_a_flag_is_a_python_bool(call, kind):
    theirs = _error(torch, FLAGS[call], NOT_BOOLS[kind])
    ours = _error(tapegrad, FLAGS[call], NOT_BOOLS[kind])
    assert type(ours) is type(theirs) is TypeError, (ours, theirs)
    if "must be bool, not" in str(theirs):
        assert "must be bool, not" in str(ours), ours


@pytest.mark.parametrize("call", FLAGS)
def test_bools_are_taken(call):
    for flag in (False, True):
        theirs, ours = _values(FLAGS[call](torch, flag)), _values(FLAGS[call](tapegrad, flag))
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)
