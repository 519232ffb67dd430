"""Tensor methods whose PyTorch overload takes one int list accept it as several ints (`x.tile(1, 3)`,
`x.squeeze(0, 1)`, `x.hsplit(1, 2)`: PyTorch's parser packs them), and tensor_split's indices as PyTorch reads
them (negative ones counted from the end, a tensor of int64 indices or a 0-d count)."""
import pytest

import tapegrad
from conftest import raised
from tapegrad import _argument_errors


def _sole_int_list_methods():
    return sorted(n for n in _argument_errors.int_list_alone_methods() if not n.startswith("to_sparse"))


def _outcome(lib, name, args):
    out = raised(lambda: getattr(lib.arange(6.0).view(1, 3, 2), name)(*args))
    if out is not None:
        return out[0].__name__
    result = getattr(lib.arange(6.0).view(1, 3, 2), name)(*args)
    results = result if isinstance(result, tuple) else (result,)
    if name in ("new", "new_empty"):   # (uninitialised memory: the shape only)
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
    ours = raised(lambda: tapegrad.tensor(1.0).tensor_split(2))
    assert ours == raised(lambda: torch.tensor(1.0).tensor_split(2))


_METHOD_CALLS = [(m, a) for m in ("expand", "view", "reshape", "repeat", "permute", "tile", "new_zeros", "new_ones",
                                  "flip", "sum", "mean", "broadcast_to", "narrow", "roll", "squeeze", "transpose")
                 for a in [(2.0, 3), (1, 3.0), ((1.0, 3),), ([1, 3.0],), (1,), (True, 3), ("a",)]]
_METHOD_CALLS += [("unflatten", a) for a in [(2.0, 3), (1, 3.0), (True, 3), (1, (3,)), (-1, [1, 3])]]
_FUNCTION_CALLS = [(f, a) for f in ("flip", "roll", "permute", "tile", "reshape", "squeeze", "broadcast_to",
                                    "movedim", "narrow", "zeros", "ones", "full")
                   for a in [(1,), (1.0,), ((1.0,),), ([1],), (2, 3), (True,), ("a",)]]


def _call_outcome(lib, kind, name, args):
    def call():
        if kind == "method":
            return getattr(lib.ones(1, 3), name)(*args)
        if name in ("zeros", "ones"):
            return getattr(lib, name)(*args)
        if name == "full":
            return lib.full(args[0], 1.0)
        return getattr(lib, name)(lib.ones(1, 3), *args)
    error = raised(call)
    if error is not None:
        return error[0].__name__, error[1]
    return tuple(call().shape)


@pytest.mark.parametrize("kind,name,args", [("method",) + c for c in _METHOD_CALLS]
                         + [("function",) + c for c in _FUNCTION_CALLS])
def test_int_list_arguments_as_pytorchs_parser_reads_them(torch, kind, name, args):
    """A lone int, several ints, a float among them: the same result or the same error, word for word
    (`torch.flip(x, 1)` is refused, `x.flip(1)` is not; `x.expand(2.0, 3)` is too many arguments)."""
    assert _call_outcome(tapegrad, kind, name, args) == _call_outcome(torch, kind, name, args)


def test_repeated_dims_name_the_first_repeat(torch):
    for lib in (tapegrad, torch):
        assert raised(lambda: lib.ones(2, 3, 4).sum((2, 0, 2)))[1] == "dim 2 appears multiple times in the list of dims"


@pytest.mark.parametrize("call", ["torch.sum(x, 2, 3)", "x.sum(0, 1)", "x.mean(5, 1)", "torch.prod(x, 0, 1)",
                                  "x.std(0, True, 2)", "x.var(0, 1)", "x.std((0, 1))"])
def test_keepdim_is_a_bool_checked_before_the_dims(torch, call):
    """An int keepdim is refused (`x.sum(0, 1)` does not sum two dims), before a dim out of range is."""
    def run(lib):
        return eval(call, {"torch": lib, "x": lib.ones(2, 3)})
    theirs, ours = raised(lambda: run(torch)), raised(lambda: run(tapegrad))
    assert ours == theirs if theirs is not None else ours is None and run(tapegrad).tolist() == run(torch).tolist()


@pytest.mark.parametrize("call", ["x.squeeze(None)", "x.squeeze(dim=None)", "x.squeeze_(None)", "lib.squeeze(x, None)",
                                  "lib.squeeze_copy(x, None)", "x.squeeze()", "lib.squeeze_copy(x, dim=0)",
                                  "lib.squeeze_copy(x)"])
def test_squeeze_takes_no_none(torch, call):
    # PyTorch's overloads are (), (int dim) and (tuple of ints dim): an explicit None fits none of them
    def run(lib):
        x = lib.ones(2, 1)
        out = raised(lambda: eval(call, {"lib": lib, "x": x}), fold=True)
        return out if out is not None else tuple(eval(call, {"lib": lib, "x": lib.ones(2, 1)}).shape)
    assert run(tapegrad) == run(torch)
