"""Tensor methods whose PyTorch overload takes one int list accept it as several ints (`x.tile(1, 3)`,
`x.squeeze(0, 1)`, `x.hsplit(1, 2)`: PyTorch's parser packs them), and tensor_split's indices as PyTorch reads
them (negative ones counted from the end, a tensor of int64 indices or a 0-d count)."""
import pytest

import tapegrad
from conftest import raised
from tapegrad import _argument_errors, _torch_signatures as T


def _sole_int_list_methods():
    table = {**T.OVERLOADS["method"], **{k: (v,) for k, v in T.SINGLE["method"].items()}}
    return sorted(n for n, overloads in table.items() if any(map(_argument_errors._takes_int_list_alone, overloads))
                  and not n.startswith("to_sparse"))


def _outcome(lib, name, args):
    out = raised(lambda: getattr(lib.arange(6.0).view(1, 3, 2), name)(*args))
    if out is not None:
        return out[0].__name__
    result = getattr(lib.arange(6.0).view(1, 3, 2), name)(*args)
    results = result if isinstance(result, tuple) else (result,)
    if name == "new":   # (uninitialised memory: the shape only)
        return [tuple(r.shape) for r in results]
    return [(tuple(r.shape), r.tolist()) for r in results]


@pytest.mark.parametrize("name", _sole_int_list_methods())
def test_several_ints_as_the_int_list(torch, name):
    for args in [(1,), (0, 1), (2, 1, 1), (1, 1), (0, 2), (-1, 0, 1)]:
        assert _outcome(tapegrad, name, args) == _outcome(torch, name, args), (name, args)


def test_the_sweep_covers_the_methods_that_needed_packing():
    assert {"tile", "broadcast_to", "squeeze", "squeeze_", "count_nonzero", "hsplit", "vsplit",
            "dsplit"} <= set(_sole_int_list_methods())


@pytest.mark.parametrize("given", [0, -1, 3, 10, [-2, 3], [5, 3], [9, 12], [-9, 2], "tensor 2", "tensor [1, 5]",
                                   "tensor [-2, 3]", "float tensor", "2-d tensor"])
def test_tensor_split_as_pytorch(torch, given):
    def run(lib):
        x = lib.arange(7.0, requires_grad=True)
        arg = given
        if isinstance(given, str):
            arg = {"tensor 2": lib.tensor(2), "tensor [1, 5]": lib.tensor([1, 5]),
                   "tensor [-2, 3]": lib.tensor([-2, 3]), "float tensor": lib.tensor([1.0, 5.0]),
                   "2-d tensor": lib.tensor([[1, 5]])}[given]
        return x.tensor_split(arg)
    theirs = raised(lambda: run(torch))
    ours = raised(lambda: run(tapegrad))
    if theirs is not None:
        assert ours is not None and ours[0] is theirs[0] and ours[1].startswith(theirs[1])
        return
    assert ours is None
    assert [p.tolist() for p in run(tapegrad)] == [p.tolist() for p in run(torch)]


def test_tensor_split_of_a_zero_dim_tensor_is_refused(torch):
    ours, theirs = raised(lambda: tapegrad.tensor(1.0).tensor_split(2)), raised(lambda: torch.tensor(1.0).tensor_split(2))
    assert ours == theirs
