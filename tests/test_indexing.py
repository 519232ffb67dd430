"""__getitem__ / __setitem__ against PyTorch: values, gradients, and IndexError where JAX would clamp."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, require

torch = require("torch")

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5) / 10 - 2


def _idx(lib, spec):
    # Index descriptors turned into each library's objects: ("i", list) int tensor, ("b", list) bool tensor.
    def conv(s):
        if isinstance(s, tuple) and s and s[0] in ("i", "b"):
            return lib.tensor(s[1], dtype=lib.int64 if s[0] == "i" else lib.bool)
        return s
    return tuple(conv(s) for s in spec) if isinstance(spec, tuple) and not (spec and spec[0] in ("i", "b")) \
        else conv(spec)


INDICES = [
    1, -1, slice(None), slice(1, None), slice(None, None, 2), slice(-3, -1), (1, 2), (1, slice(1, 3), -1),
    (Ellipsis, 0), (None, 1), (slice(None), None, 0), (0, Ellipsis, None), ("i", [0, 2, 2]), ("i", [[0], [2]]),
    (("i", [0, 2]), ("i", [1, 3])), (slice(None), ("i", [3, 0])), (("i", [0, 1]), slice(None), ("i", [4, 0])),
    (0, ("i", [1, 2])), ("b", [True, False, True]), (slice(None), ("b", [True, False, True, True])),
    ("b", (X[..., 0] > 0).tolist()), (1, ("b", [False, True, True, False]), 2), (Ellipsis, ("i", [-1, 0])),
    (None, ("i", [1]), None, slice(None, None, 3)),
]


@pytest.mark.parametrize("index", INDICES, ids=[repr(i)[:40] for i in INDICES])
def test_getitem_values_and_gradients(index):
    def build(lib):
        x = lib.tensor(X, requires_grad=True)
        out = x[_idx(lib, index)]
        (out * out).sum().backward()
        return out, x.grad

    (out, grad), (tout, tgrad) = build(tapegrad), build(torch)
    assert_close(out, tout)
    assert_close(grad, tgrad)


@pytest.mark.parametrize("index", INDICES, ids=[repr(i)[:40] for i in INDICES])
def test_setitem_values_and_gradients(index):
    def build(lib):
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(0.5, requires_grad=True)
        y = x * 1
        y[_idx(lib, index)] = v * 3
        (y * y).sum().backward()
        return y, x.grad, v.grad

    ours, theirs = build(tapegrad), build(torch)
    for o, t in zip(ours, theirs):
        assert_close(o, t)


def test_setitem_with_a_broadcast_tensor_value():
    def build(lib):
        x = lib.zeros(3, 4)
        x[1:, ::2] = lib.tensor([1.0, 2.0])
        x[lib.tensor([0, 0])] = lib.tensor([7.0, 8.0, 9.0, 10.0])
        x[x > 8] = -1
        return x

    assert_close(build(tapegrad), build(torch))


def test_index_put_accumulates_duplicates():
    def build(lib):
        x = lib.zeros(4)
        return x.index_put_((lib.tensor([0, 0, 3]),), lib.tensor([1.0, 2.0, 3.0]), accumulate=True)

    assert_close(build(tapegrad), build(torch))


BAD = [
    (lambda lib, x: x[3], IndexError), (lambda lib, x: x[:, -5], IndexError),
    (lambda lib, x: x[lib.tensor([0, 3])], IndexError), (lambda lib, x: x[1, 2, 3, 4], IndexError),
    (lambda lib, x: x[lib.tensor([0.5])], IndexError), (lambda lib, x: x[lib.tensor([True, False])], IndexError),
    (lambda lib, x: x.__setitem__(lib.tensor([7]), 1.0), IndexError),
    (lambda lib, x: x.__setitem__((0, 9), 1.0), IndexError),
    (lambda lib, x: x.gather(1, lib.tensor([[0, 5]] * 3)), RuntimeError),
    (lambda lib, x: x.index_select(0, lib.tensor([3])), (IndexError, RuntimeError)),
    (lambda lib, x: x.take(lib.tensor([60])), IndexError),
    (lambda lib, x: x.scatter(0, lib.tensor([[[4]]]), 1.0), RuntimeError),
    (lambda lib, x: x.index_fill(2, lib.tensor([5]), 0.0), IndexError),
    (lambda lib, x: x.index_copy(0, lib.tensor([3]), lib.zeros(1, 4, 5)), IndexError),
    (lambda lib, x: x.index_add(0, lib.tensor([3]), lib.zeros(1, 4, 5)), RuntimeError),
]


@pytest.mark.parametrize("k", range(len(BAD)))
def test_out_of_range_indices_raise_like_pytorch(k):
    fn, error = BAD[k]
    with pytest.raises(error):
        fn(torch, torch.tensor(X))
    with pytest.raises(error) as info:
        fn(tapegrad, tapegrad.tensor(X))
    theirs_type = None
    try:
        fn(torch, torch.tensor(X))
    except Exception as e:  # noqa: BLE001
        theirs_type = type(e)
    assert isinstance(info.value, theirs_type) or issubclass(theirs_type, type(info.value))


def test_data_dependent_shapes_keep_gradients():
    def build(lib):
        x = lib.tensor(X, requires_grad=True)
        picked = x.masked_select(x > 1)
        nz = lib.nonzero(x[0] > 0)
        (picked.exp().sum() + x[x < -1].sum()).backward()
        return picked, nz, x.grad

    for o, t in zip(build(tapegrad), build(torch)):
        assert_close(o, t)
