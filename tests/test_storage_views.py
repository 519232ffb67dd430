"""Tensor.untyped_storage() and Tensor.storage() against PyTorch's: what memory tensors share, its size in
bytes and elements, its values and reprs, and writes through a TypedStorage."""
import subprocess
import sys

import pytest

import tapegrad

from conftest import fold_repr, require

torch = require("torch")

EXPRESSIONS = [
    "s.nbytes(), s.size(), len(s), s.element_size(), str(s.device)", "s.tolist()", "repr(s)",
    "s.data_ptr() == x.data_ptr()", "x[1].untyped_storage().data_ptr() == s.data_ptr()",
    "x[1].data_ptr() - x.data_ptr(), x[:, 1].data_ptr() - x.data_ptr()",
    "x.t().contiguous().untyped_storage().data_ptr() == s.data_ptr()",
    "x.reshape(-1).untyped_storage().data_ptr() == s.data_ptr()",
    "x.untyped_storage() is s, x.detach().untyped_storage() is s, x.clone().untyped_storage() is s",
    "s.is_shared(), s.is_pinned(), s.type()", "isinstance(s, lib.UntypedStorage)",
    "t.size(), len(t), str(t.dtype), t.tolist(), t[2], str(t.device), t.data_ptr() == x.data_ptr()",
    "repr(t)", "isinstance(t, lib.TypedStorage)", "repr(lib.tensor([1, 2], dtype=lib.int32).storage())",
    "repr(lib.tensor([], dtype=lib.float64).storage())", "repr(lib.tensor(True).untyped_storage())",
    "lib.tensor([1.5], dtype=lib.float16).untyped_storage().tolist()",
    "x[1].storage().size(), x[1].storage().tolist()",
]


def _run(lib, code):
    import warnings
    scope = {"lib": lib, "x": lib.arange(6.0).reshape(2, 3)}
    scope["s"] = scope["x"].untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scope["t"] = scope["x"].storage()
    return fold_repr(eval(code, scope))


@pytest.mark.parametrize("code", EXPRESSIONS)
def test_storages_as_torch(code):
    assert _run(tapegrad, code) == _run(torch, code)


def test_a_typed_storage_write_reaches_the_tensor_and_its_views():
    def run(lib):
        import warnings
        x = lib.arange(6.0).reshape(2, 3)
        v = x[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x.storage()[4] = 7.5
        return x.tolist(), v.tolist()
    assert run(tapegrad) == run(torch)


def test_storage_warns_that_typed_storage_is_deprecated_once_per_process():
    code = ("import warnings, {lib} as t\nx = t.ones(2)\nwith warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); x.storage(); x.storage(); x.untyped_storage()\n"
            "print([str(m.message) for m in w])")
    out = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True,
                          check=True).stdout for lib in ("tapegrad", "torch")]
    assert out[0] == out[1]
