"""How an index expression is read, as PyTorch's python_variable_indexing: a short list holding a sequence,
slice, tensor, None or `...` is a tuple (deprecated, with PyTorch's warning); another sequence is one index
tensor (floats truncated to longs, an empty list a long index, bools a mask); anything else but an int, a
slice, None, `...`, a bool or a tensor is refused with PyTorch's words; several `...` each skip the dims the
others leave. Reads and writes alike."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from conftest import assert_same_outcome

INDEXES = [
    "[[0, 1]]", "[[0, 1], [1, 0]]", "[lib.tensor([0, 1]), lib.tensor([1, 0])]", "[0, slice(None)]", "[None, 0]",
    "[0, None]", "[Ellipsis, 0]", "[(0, 1)]", "[0, 1]", "[lib.tensor(0), 1]", "[1, lib.tensor(0)]", "list(range(3))",
    "[[0]] * 32", "[0] * 40", "[True, False, True]", "[[True, False, True]]", "np.array([0, 1])", "[np.array([0, 1])]",
    "(np.array([0, 1]),)", "np.int64(1)", "np.array(1)", "np.bool_(True)", "(1, np.bool_(True))",
    "lib.tensor([[0, 1], [1, 2]])", "1.0", "(1.0,)", "'a'", "b'a'", "{0}", "(x for x in [0])", "iter([0])",
    "np.float64(1.0)", "slice(None, None, 0)", "(slice(None), slice(None, None, -1))", "[]", "()", "[[]]", "(0, [])",
    "([], 0)", "range(2)", "[range(2)]", "[1.0]", "[1.7]", "[-1.5]", "[True, 1]", "[1, 2.5]", "(0, [1.5])",
    "[0, [1]]", "np.array([1.0])", "np.array(['a'])", "np.array([], dtype=np.float64)", "(0, [[0], [1, 2]])",
    "np.array([[0, 1], [1, 0]])", "([[0, 1], [1, 0]], 0)", "[[1, 0]], [0]", "lib.tensor([0.0])", "[[lib.tensor(1)]]",
    # each `...` skips the dims the others leave
    "(..., ...)", "(..., 0, ...)", "(0, ..., ...)", "(..., None, ...)", "(..., [0, 1], ...)", "(..., slice(0, 2), ...)",
]


def _outcome(lib, index, write):
    x = lib.arange(12).reshape(3, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            idx = eval(index, {"lib": lib, "np": np})
            if write:
                x[idx] = -1
                out = x
            else:
                out = x[idx]
            result = ("value", out.tolist(), tuple(out.shape), str(out.dtype).replace("tapegrad", "torch"))
        except Exception as e:
            result = ("error", type(e).__name__, str(e).replace("tapegrad", "torch"))
    deprecated = any("non-tuple sequence for multidimensional indexing" in str(w.message) for w in caught)
    return result, deprecated


@pytest.mark.parametrize("write", [False, True], ids=["getitem", "setitem"])
@pytest.mark.parametrize("index", INDEXES)
def test_index_is_read_as_torch_reads_it(index, write):
    (ours, warned), (theirs, torch_warned) = _outcome(tg, index, write), _outcome(torch, index, write)
    assert_same_outcome(ours, theirs)
    if theirs[0] != "error":
        assert warned == torch_warned


def test_list_of_index_tensors_is_a_tuple_for_gradients_too():
    grads = []
    for lib in (tg, torch):
        x = lib.arange(12.0).reshape(3, 4).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x[[lib.tensor([0, 2]), lib.tensor([1, 3])]].sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]
