"""End-to-end reprs of real tensors and autograd objects, character for character against PyTorch."""
import pytest

from conftest import both, fold_repr, require

torch = require("torch")


def _leaf(lib):
    return lib.tensor([1.0, 2.0, 3.0], requires_grad=True)


OBJECTS = {
    "leaf_requires_grad": _leaf,
    "leaf_requires_grad_float64": lambda L: L.tensor([[1.5, -2.0]], dtype=L.float64, requires_grad=True),
    "mul": lambda L: _leaf(L) * 2,
    "add": lambda L: _leaf(L) + 1,
    "exp": lambda L: _leaf(L).exp(),
    "sum": lambda L: _leaf(L).sum(),
    "mean": lambda L: _leaf(L).mean(),
    "select": lambda L: _leaf(L)[0],
    "view": lambda L: (_leaf(L) * 1).view(3, 1),
    "to_double": lambda L: _leaf(L).double() * 2,
    "pow": lambda L: _leaf(L) ** 2,
    "neg": lambda L: -_leaf(L),
    "matmul": lambda L: _leaf(L).unsqueeze(0) @ _leaf(L).unsqueeze(1),
    "half": lambda L: _leaf(L).half(),
    "no_grad_result": lambda L: (lambda x: (L.set_grad_enabled(False), x * 2, L.set_grad_enabled(True))[1])(_leaf(L)),
    "detached": lambda L: (_leaf(L) * 2).detach(),
    "int64": lambda L: L.tensor([1, 2]),
    "int32": lambda L: L.ones(2, 2, dtype=L.int32),
    "uint8": lambda L: L.tensor([0, 255], dtype=L.uint8),
    "bool": lambda L: L.tensor([True, False]),
    "float16": lambda L: L.zeros(2, dtype=L.float16),
    "bfloat16": lambda L: L.tensor([1.5, -2.25], dtype=L.bfloat16),
    "float64": lambda L: L.tensor([1.5], dtype=L.float64),
    "complex64": lambda L: L.tensor([1 + 2j]),
    "scalar": lambda L: L.tensor(3.5),
    "int_scalar": lambda L: L.tensor(7),
    "empty": lambda L: L.zeros(0),
    "empty_2d": lambda L: L.zeros(2, 0, dtype=L.int64),
    "arange": lambda L: L.arange(12).reshape(3, 4),
    "linspace": lambda L: L.linspace(0, 1, 7),
    "size": lambda L: L.zeros(2, 3).shape,
    "size_empty": lambda L: L.tensor(1.0).size(),
    "dtype": lambda L: L.float32,
    "dtype_alias": lambda L: L.long,
    "device": lambda L: L.zeros(1).device,
    "device_constructed": lambda L: L.device("cpu"),
    "device_indexed": lambda L: L.device("cuda", 1),
    "grad_fn": lambda L: (_leaf(L) * 2).grad_fn,
    "grad_fn_sum": lambda L: _leaf(L).sum().grad_fn,
    "grad_fn_of_leaf": lambda L: _leaf(L).grad_fn,
    "next_functions": lambda L: (_leaf(L) * 2).grad_fn.next_functions,
}


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_repr_and_str(name):
    ours, theirs = both(OBJECTS[name])
    assert fold_repr(repr(ours)) == fold_repr(repr(theirs))
    assert fold_repr(str(ours)) == fold_repr(str(theirs))


def test_repr_of_vector_dot():
    ours, theirs = both(lambda L: _leaf(L) @ _leaf(L))
    assert repr(ours) == repr(theirs)


def test_print_grad_after_backward():
    def build(lib):
        x = _leaf(lib)
        y = x * 2
        y.retain_grad()
        (y * y).sum().backward()
        return [repr(x.grad), repr(y.grad), str(x.grad)]

    ours, theirs = both(build)
    assert [fold_repr(s) for s in ours] == [fold_repr(s) for s in theirs]


def test_print_under_default_float64():
    def build(lib):
        lib.set_default_dtype(lib.float64)
        try:
            return [repr(lib.tensor([1.5, 2.0])), repr(lib.tensor([1.5], dtype=lib.float32)),
                    repr(lib.tensor([1.5], requires_grad=True) * 2)]
        finally:
            lib.set_default_dtype(lib.float32)

    ours, theirs = both(build)
    assert [fold_repr(s) for s in ours] == [fold_repr(s) for s in theirs]


def test_format_of_scalars_and_fstrings():
    def build(lib):
        t = lib.tensor(2.34567)
        v = lib.tensor([1.0, 2.0])
        return [f"{t:.2f}", f"{t}", f"{v}", "{}".format(lib.tensor(3)), f"{lib.tensor(1.5, requires_grad=True):.1f}"]

    ours, theirs = both(build)
    assert [fold_repr(s) for s in ours] == [fold_repr(s) for s in theirs]


def test_grad_fn_name_method_and_repr_agree():
    ours, _ = both(lambda L: (_leaf(L) * 2).grad_fn)
    assert repr(ours).startswith(f"<{type(ours).__name__} object at 0x")
