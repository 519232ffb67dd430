"""PyTorch names added for drop-in use, each compared with PyTorch: thread counts, warn-always and flush-denormal
flags, asarray, range, resize_ and its family, new_empty_strided, share_memory_, apply_/map_/map2_, as_subclass,
the device booleans, chalf, rms_norm, NLLLoss2d and SyncBatchNorm (values, dtypes, warnings, errors)."""
import os
import re
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, fold_repr, require

torch = require("torch")


def outcome(fn):
    """(what fn returns, or (error type, folded message)), [(warning category, message, file)]."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as e:   # the type and the message are what is compared
            result = (type(e).__name__, fold_repr(e))
    # (PyTorch's C++ warnings end with where they were raised; both name the caller's file)
    return result, [(w.category.__name__, re.sub(r" \(Triggered internally at .*\)$", "", str(w.message)),
                     os.path.basename(w.filename)) for w in caught]


def summary(t):
    """What a tensor result is compared by (values separately, through assert_close)."""
    return (tuple(t.shape), t.dtype.__repr__().split(".")[-1], t.requires_grad, t.is_leaf,
            type(t.grad_fn).__name__ if t.grad_fn is not None else None)


def same(build, prefix_errors=False):
    """build(lib) gives the same result, warnings and errors with tapegrad and torch. prefix_errors: tapegrad's
    message may add a sentence of how to fix it after PyTorch's."""
    (ours, our_warnings), (theirs, their_warnings) = both(lambda lib: outcome(lambda: build(lib)))
    assert our_warnings == their_warnings
    if isinstance(theirs, torch.Tensor):
        assert summary(ours) == summary(theirs)
        assert_close(ours.detach(), theirs.detach())
    elif isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[0], str) and theirs[0].endswith(
            ("Error", "Exception")):
        assert ours[0] == theirs[0]
        assert ours[1].startswith(theirs[1].rstrip(".")) if prefix_errors else ours[1] == theirs[1], (ours, theirs)
    else:
        assert ours == theirs
    return ours, theirs


@pytest.fixture
def warn_always():
    # TORCH_WARN_ONCE warnings come every time, so that both libraries give them whatever ran before
    tapegrad.set_warn_always(True)
    torch.set_warn_always(True)
    yield
    tapegrad.set_warn_always(False)
    torch.set_warn_always(False)


# ---- threads -----------------------------------------------------------------------------------------------------

@pytest.fixture
def thread_counts(monkeypatch):
    monkeypatch.setattr(tapegrad._threads, "_set", {"intra": None, "interop": None})
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("value", [0, -1, "a", 2.0, True, None, np.int64(3), np.int32(2), np.float64(2),
                                   np.bool_(True), np.uint64(2 ** 64 - 1), 2 ** 31, -2 ** 31 - 1, -2 ** 63, 2 ** 63,
                                   "tensor", 1])
def test_set_num_threads_checks_and_records(value, thread_counts):
    def build(lib):
        lib.set_num_threads(lib.tensor(3) if value == "tensor" else value)
        return lib.get_num_threads()
    same(build)


def test_thread_functions_argument_errors(thread_counts):
    for call in (lambda lib: lib.get_num_threads(1), lambda lib: lib.get_num_threads(a=1),
                 lambda lib: lib.get_num_interop_threads(1, 2), lambda lib: lib.set_num_threads(),
                 lambda lib: lib.set_num_threads(1, 2), lambda lib: lib.set_num_threads(n=1),
                 lambda lib: lib.set_num_interop_threads(0), lambda lib: lib.set_num_interop_threads("a"),
                 lambda lib: lib.init_num_threads(), lambda lib: lib.init_num_threads(1, 2),
                 lambda lib: lib.init_num_threads(1, a="x"), lambda lib: lib.init_num_threads(a=2)):
        same(call)


def test_thread_counts_default_to_xla_pool_and_interop_is_set_once(thread_counts):
    pool = len(os.sched_getaffinity(0))
    assert tapegrad.get_num_threads() == tapegrad.get_num_interop_threads() == pool
    tapegrad.set_num_interop_threads(3)
    assert tapegrad.get_num_interop_threads() == 3
    try:   # (PyTorch's first call may be refused already: parallel work has started in this process)
        torch.set_num_interop_threads(3)
    except RuntimeError:
        pass
    same(lambda lib: lib.set_num_interop_threads(4))   # a second call: refused by both


# ---- flags ---------------------------------------------------------------------------------------------------------

def test_set_warn_always_and_its_effect_on_once_warnings():
    try:
        for value in (1, 0, "a", None, np.bool_(True), 1.0, "tensor"):
            same(lambda lib: lib.set_warn_always(lib.tensor(True) if value == "tensor" else value))
        same(lambda lib: lib.set_warn_always(b=True))
        same(lambda lib: (lib.set_warn_always(True), lib.is_warn_always_enabled()))
        a, c = np.eye(3), np.zeros(2, np.complex64)
        # once-per-process warnings come every time
        same(lambda lib: [lib.cholesky(lib.tensor(a)).sum().item() for _ in range(2)])
        same(lambda lib: [lib.zeros(2).copy_(lib.tensor(c)).sum().item() for _ in range(2)])
        same(lambda lib: (lib.set_warn_always(False), lib.is_warn_always_enabled()))
    finally:
        tapegrad.set_warn_always(False)
        torch.set_warn_always(False)


def test_set_flush_denormal():
    try:
        for value in (1, "a", None, np.bool_(True), 1.0):
            same(lambda lib: lib.set_flush_denormal(value))
        same(lambda lib: lib.set_flush_denormal())
        same(lambda lib: lib.set_flush_denormal(mode=True))
        # flushed on this thread (XLA's programs flush on theirs whatever the mode)
        same(lambda lib: (lib.set_flush_denormal(True), (lib.tensor([1e-39, 1.0]) * 1).tolist()))
        same(lambda lib: lib.set_flush_denormal(False))
    finally:
        tapegrad.set_flush_denormal(False)
        torch.set_flush_denormal(False)


# ---- asarray ---------------------------------------------------------------------------------------------------

_ASARRAY = {
    "list": lambda lib: lib.asarray([1, 2, 3]), "floats": lambda lib: lib.asarray([1.0, 2]),
    "nested": lambda lib: lib.asarray([[1, 2], [3, 4]]), "int": lambda lib: lib.asarray(3),
    "float": lambda lib: lib.asarray(3.5), "bool": lambda lib: lib.asarray(True),
    "complex": lambda lib: lib.asarray(1 + 2j), "tuple": lambda lib: lib.asarray((1, 2)),
    "empty": lambda lib: lib.asarray([]), "list dtype": lambda lib: lib.asarray([1, 2.5], dtype=lib.int64),
    "list half": lambda lib: lib.asarray([1, 2], dtype=lib.float16),
    "list requires_grad": lambda lib: lib.asarray([1.0, 2.0], requires_grad=True),
    "int requires_grad": lambda lib: lib.asarray([1, 2], requires_grad=True),
    "ragged": lambda lib: lib.asarray([[1, 2], [3]]), "None": lambda lib: lib.asarray(None),
    "list copy=False": lambda lib: lib.asarray([1, 2], copy=False),
    "int copy=False": lambda lib: lib.asarray(3, copy=False),
    "numpy": lambda lib: lib.asarray(np.arange(3.0)), "numpy dtype": lambda lib: lib.asarray(np.arange(3.0),
                                                                                          dtype=lib.float32),
    "numpy requires_grad": lambda lib: lib.asarray(np.ones(2), requires_grad=True),
    "numpy int requires_grad": lambda lib: lib.asarray(np.ones(2, np.int64), requires_grad=True),
    "numpy dtype copy=False": lambda lib: lib.asarray(np.ones(2), dtype=lib.float32, copy=False),
    "numpy scalar": lambda lib: lib.asarray(np.float32(2.5)),
    "numpy scalar copy=False": lambda lib: lib.asarray(np.float32(2), copy=False),
    "bytearray": lambda lib: lib.asarray(bytearray(b"\x01\x00\x02\x00"), dtype=lib.int16),
    "bytearray uint8": lambda lib: lib.asarray(bytearray(b"\x01\x02\x03"), dtype=lib.uint8),
    "bytearray default": lambda lib: lib.asarray(bytearray(b"\x00\x00\x80\x3f")),
    "bytearray odd": lambda lib: lib.asarray(bytearray(b"\x01\x02")),
    "bytearray empty": lambda lib: lib.asarray(bytearray()),
    "dtype str": lambda lib: lib.asarray([1], dtype="float"), "copy int": lambda lib: lib.asarray([1], copy=1),
    "requires_grad int": lambda lib: lib.asarray([1.0], requires_grad=1),
    "device float": lambda lib: lib.asarray([1], device=1.5),
    "positional": lambda lib: lib.asarray([1], lib.float32), "keyword obj": lambda lib: lib.asarray(obj=[1.0]),
}


@pytest.mark.parametrize("case", _ASARRAY)
def test_asarray_of_data(case, warn_always):
    same(_ASARRAY[case], prefix_errors=True)


def _leaf(lib):
    return lib.ones(2, requires_grad=True)


_ASARRAY_TENSORS = {   # (what asarray is given, its keywords): result compared, and whether it is the input
    "plain": (lambda lib: lib.arange(4.0), {}), "plain copy": (lambda lib: lib.arange(4.0), {"copy": True}),
    "plain copy=False": (lambda lib: lib.arange(4.0), {"copy": False}),
    "dtype": (lambda lib: lib.arange(4.0), {"dtype": "float64"}),
    "same dtype copy=False": (lambda lib: lib.arange(4.0), {"dtype": "float32", "copy": False}),
    "dtype copy=False": (lambda lib: lib.arange(4.0), {"dtype": "float64", "copy": False}),
    "dtype copy": (lambda lib: lib.arange(4.0), {"dtype": "float64", "copy": True}),
    "device": (lambda lib: lib.arange(4.0), {"device": "cpu"}),
    "plain requires_grad": (lambda lib: lib.arange(4.0), {"requires_grad": True}),
    "int requires_grad": (lambda lib: lib.arange(4), {"requires_grad": True}),
    "leaf": (_leaf, {}), "leaf False": (_leaf, {"requires_grad": False}), "leaf True": (_leaf, {"requires_grad": True}),
    "leaf dtype": (_leaf, {"dtype": "float64"}), "leaf dtype False": (_leaf, {"dtype": "float64",
                                                                            "requires_grad": False}),
    "leaf copy": (_leaf, {"copy": True}), "leaf copy False": (_leaf, {"copy": True, "requires_grad": False}),
    "leaf to int": (_leaf, {"dtype": "int64"}), "leaf bad alias": (_leaf, {"dtype": "float64", "copy": False}),
    "non-leaf": (lambda lib: _leaf(lib) * 2, {}), "non-leaf False": (lambda lib: _leaf(lib) * 2,
                                                                     {"requires_grad": False}),
    "non-leaf True": (lambda lib: _leaf(lib) * 2, {"requires_grad": True}),
    "non-leaf dtype False": (lambda lib: _leaf(lib) * 2, {"dtype": "float64", "requires_grad": False}),
}


@pytest.mark.parametrize("case", _ASARRAY_TENSORS)
def test_asarray_of_a_tensor(case, warn_always):
    make, keywords = _ASARRAY_TENSORS[case]

    def build(lib, what):
        obj = make(lib)
        out = lib.asarray(obj, **{k: getattr(lib, v) if k == "dtype" else v for k, v in keywords.items()})
        return out if what == "result" else (out is obj, obj.requires_grad)
    same(lambda lib: build(lib, "result"), prefix_errors=True)
    same(lambda lib: build(lib, "identity"), prefix_errors=True)   # (the same object, its flag set in place)


def test_asarray_under_no_grad_and_of_list_of_tensors(warn_always):
    def build(lib):
        r = _leaf(lib)
        with lib.no_grad():
            return lib.asarray(r, copy=True)
    same(build)
    same(lambda lib: lib.asarray([lib.tensor(1), lib.tensor(2.0)]))


def test_asarray_copies_numpy_data_and_refuses_to_alias_it():
    n = np.arange(3.0)
    t = tapegrad.asarray(n)
    n[0] = 7   # PyTorch's tensor would see this write; tapegrad's holds a copy (JAX arrays are immutable)
    assert t.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="can't alias a NumPy array into a tensor: tapegrad copies it"):
        tapegrad.asarray(n, copy=False)
    j = tapegrad.tensor([1.0, 2.0])._value   # a jax.Array is wrapped as it is
    assert tapegrad.asarray(j, copy=False).tolist() == [1.0, 2.0]


# ---- range -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs", [
    ((1, 4), {}), ((1, 4, 0.5), {}), ((0, 1, 0.3), {}), ((1, 4), {"dtype": "int64"}), ((1, 4), {"dtype": "int32"}),
    ((4, 1, -1), {}), ((1, 1), {}), ((1.5, 4), {}), ((1, 3, 1.7), {"dtype": "int64"}),
    ((1.5, 3.5), {"dtype": "int64"}), ((0, 10, 3), {"dtype": "uint8"}), ((-1, 3), {"dtype": "uint8"}),
    ((0, 300, 100), {"dtype": "uint8"}), ((1, 2, 0.1), {}), ((1, 2, 0.1), {"dtype": "float64"}),
    ((1, 2, 0.1), {"dtype": "float16"}), ((1, 2, 0.1), {"dtype": "bfloat16"}), ((-0.5, 2.5, 1), {"dtype": "int64"}),
    ((3, 1, -0.5), {}), ((0, 0.9999999, 0.1), {}), ((1, 1e20, 1e19), {}), ((True, 4), {}),
    ((np.float32(0.5), np.int64(3)), {}), ((1, 4), {"requires_grad": True}), ((1, 4), {"step": 2}),
    ((4, 1), {}), ((1, 4, 0), {}), ((float("nan"), 4), {}), ((0, float("inf")), {}), ((1, 4), {"dtype": "bool"}),
    ((1, 4), {"dtype": "complex64"}), ((float("nan"), 4, 0), {"dtype": "int64"}), ((0, 3, 1 + 1j), {}),
    ((1e20, 1e21, 1), {}), ((1, 4), {"dtype": "int64", "requires_grad": True}), (("a", 3), {}),
    ((1, 4, 1, None), {}), ((1, 4), {"pin_memory": False}),
])
def test_range(args, kwargs):
    def build(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return lib.range(*args, **kw)
    same(build, prefix_errors=True)


def test_range_tensor_arguments():
    same(lambda lib: lib.range(lib.tensor(1), lib.tensor(3)))
    same(lambda lib: lib.range(lib.tensor(1.5, requires_grad=True), 3))
    same(lambda lib: lib.range(1, 3, step=lib.tensor(0.5)))
    same(lambda lib: lib.range(lib.tensor([1]), 3))
    same(lambda lib: lib.range(np.array(1.5), 3))


@pytest.mark.parametrize("out, kwargs", [((2,), {}), ((2, 2), {}), ((4,), {"dtype": "int64"}),
                                         ((4,), {"dtype": "float64"}), ((3,), {"requires_grad": True})])
def test_range_out(out, kwargs):
    def build(lib, what):
        o = lib.zeros(out, dtype=lib.int64 if kwargs.get("dtype") == "int64" else lib.float32)
        kw = {k: getattr(lib, v) if k == "dtype" and v == "float64" else v for k, v in kwargs.items() if
              (k, v) != ("dtype", "int64")}
        r = lib.range(1, 4, out=o, **kw)
        return r if what == "result" else (r is o, tuple(o.shape))
    same(lambda lib: build(lib, "result"))
    same(lambda lib: build(lib, "identity"))


def test_range_integer_step_below_one_is_refused():
    # (PyTorch's kernel divides by the step truncated to 0 and the process dies of SIGFPE)
    with pytest.raises(RuntimeError, match="step must be nonzero"), pytest.warns(UserWarning, match="deprecated"):
        tapegrad.range(1, 3, 0.7, dtype=tapegrad.int64)


# ---- resize_ ---------------------------------------------------------------------------------------------------

def _layout(t):
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


_RESIZES = {   # name: build(lib) -> (the tensors to compare, by value and layout)
    "shrink": lambda lib: [lib.arange(6.0).resize_(2, 2)],
    "tuple": lambda lib: [lib.arange(6.0).resize_((2, 3))],
    "list": lambda lib: [lib.arange(6.0).resize_([3, 2])],
    "size": lambda lib: [lib.arange(6.0).resize_(lib.Size([3]))],
    "keyword": lambda lib: [lib.arange(6.0).resize_(size=(2,))],
    "zero": lambda lib: [lib.arange(6.0).resize_(0)],
    "same": lambda lib: [lib.arange(6.0).resize_(6)],
    "int": lambda lib: [lib.arange(6, dtype=lib.int32).resize_(2)],
    "transposed same": lambda lib: [lib.arange(6.0).view(2, 3).t().resize_(3, 2)],
    "transposed other": lambda lib: [lib.arange(6.0).view(2, 3).t().resize_(2, 3)],
    "transposed contiguous": lambda lib: [lib.arange(6.0).view(2, 3).t().resize_(3, 2,
                                                                                 memory_format=lib.contiguous_format)],
    "expanded same": lambda lib: [lib.arange(3.0).expand(2, 3).resize_(2, 3)],
    "channels_last": lambda lib: [lib.arange(24.0).resize_(1, 2, 3, 4, memory_format=lib.channels_last)],
    "channels_last_3d": lambda lib: [lib.arange(120.0).resize_(1, 2, 3, 4, 5, memory_format=lib.channels_last_3d)],
    "view shrink": lambda lib: (lambda b: [b[1:4].resize_(2), b])(lib.arange(6.0)),
    "view grow in storage": lambda lib: (lambda b: [b[1:4].resize_(5), b])(lib.arange(6.0)),
    "base resized, view kept": lambda lib: (lambda b: (lambda v: [b.resize_(3), v])(b.view(2, 3)))(lib.arange(6.0)),
    "view resized, base kept": lambda lib: (lambda b: [b.view(2, 3).resize_(3), b])(lib.arange(6.0)),
    "as template": lambda lib: [lib.arange(6.0).resize_as_(lib.zeros(2, 2))],
    "torch.resize_as_": lambda lib: [lib.resize_as_(lib.arange(6.0), lib.zeros(3))],
    "as sparse template": lambda lib: [lib.arange(6.0).resize_as_(lib.zeros(4).to_sparse())],
    "as permuted, preserve": lambda lib: [lib.ones(12).resize_as_(lib.zeros(4, 3).t(),
                                                                 memory_format=lib.preserve_format)],
    "as channels_last, preserve": lambda lib: [lib.ones(24).resize_as_(
        lib.zeros(1, 2, 3, 4).contiguous(memory_format=lib.channels_last), memory_format=lib.preserve_format)],
    "as template requiring grad": lambda lib: [lib.ones(3).resize_as_(lib.zeros(2, requires_grad=True))],
}


@pytest.mark.parametrize("case", _RESIZES)
def test_resize_(case):
    ours, theirs = both(_RESIZES[case])
    for a, b in zip(ours, theirs):
        assert _layout(a) == _layout(b)
        assert_close(a, b, rtol=0, atol=0)


def test_resize_returns_self_bumps_the_version_when_sizes_change_and_grows_the_storage():
    def build(lib):
        a = lib.arange(6.0)
        versions = [a._version]
        for sizes in ((6,), (2, 3), (2, 3), (1, 6)):
            assert a.resize_(*sizes) is a
            versions.append(a._version)
        a.resize_(3, 3)   # past the storage's end: its first 6 elements keep their values
        return versions, a.flatten()[:6].tolist(), _layout(a), a._version
    ours, theirs = both(build)
    assert ours == theirs
    ours, theirs = both(lambda lib: (lambda b: (lambda v: (v.resize_(10), v[:5].tolist(), b.tolist(),
                                                           _layout(v)))(b[1:4])[1:])(lib.arange(6.0)))
    assert ours == theirs


_AFTER_RESIZE = {   # what other ops see of a resized tensor
    "pending value": lambda lib: (lib.arange(6.0) * 2).resize_(2, 2).tolist(),
    "laid out like its input": lambda lib: (lambda x: (x.stride(), x.resize_(6).tolist()))(
        lib.arange(6.0).view(2, 3).t() * 1),
    "then requires grad": lambda lib: (lambda a: ((a * a).sum().backward(), a.grad.tolist(), a.is_leaf)[1:])(
        lib.arange(6.0).resize_(2, 2).requires_grad_()),
    "written in place, detach()ed": lambda lib: (lambda b: (lambda a: (a.add_(1), b.tolist(),
                                                                       a.resize_(6).tolist())[1:])(
        b.detach().resize_(2, 2)))(lib.arange(6.0)),
    "setitem then back": lambda lib: (lambda a: (a.__setitem__(1, lib.tensor([9.0, 9.0])), a.resize_(6).tolist())[1])(
        lib.arange(6.0).resize_(2, 2)),
    "view written": lambda lib: (lambda a: (lambda v: (v.mul_(10), a.tolist(), v.tolist(), v.storage_offset())[1:])(
        a[2:].resize_(3)))(lib.arange(6.0)),
    "after t_": lambda lib: lib.arange(6.0).t_().resize_(2, 3).tolist(),
    "after unsqueeze_": lambda lib: (lambda a: (a.unsqueeze_(0).resize_(3, 2).stride(), tuple(a.shape)))(
        lib.ones(2, 3)),
    "ops read it": lambda lib: (lambda a: (a.sum(1).tolist(), (a @ a).tolist()))(lib.arange(4.0).resize_(2, 2)),
    "refused format": lambda lib: (lambda a: (outcome(lambda: a.resize_(1, 2, 3, memory_format=lib.channels_last))[0],
                                              tuple(a.shape), a.stride(), a._version))(lib.ones(3)),
    "format not a format": lambda lib: lib.ones(3).resize_(2, memory_format="a"),
}


@pytest.mark.parametrize("case", _AFTER_RESIZE)
def test_after_resize_(case):
    same(_AFTER_RESIZE[case])


def test_resize_errors():
    for build in (lambda lib: lib.ones(3, requires_grad=True).resize_(2),
                  lambda lib: lib.ones(3, requires_grad=True).resize_(3),
                  lambda lib: (lib.ones(3, requires_grad=True) * 2).resize_(2),
                  lambda lib: lib.ones(3, requires_grad=True).resize_(-1),
                  lambda lib: lib.nn.Parameter(lib.ones(3)).resize_(2),
                  lambda lib: lib.ones(3).resize_(2, memory_format=lib.preserve_format),
                  lambda lib: lib.ones(3).resize_(-1), lambda lib: lib.ones(3).resize_(-2),
                  lambda lib: lib.ones(3).resize_(2 ** 31, 2 ** 31, 2), lambda lib: lib.ones(3).resize_(2 ** 61),
                  lambda lib: lib.ones(3).resize_(1, 2, 3, memory_format=lib.channels_last),
                  lambda lib: lib.ones(3).resize_(1, 2, 3, 4, memory_format=lib.channels_last_3d),
                  lambda lib: lib.ones(3).resize_(2.0), lambda lib: lib.ones(3).resize_("a"),
                  lambda lib: lib.ones(3).resize_(2, size=(2,)), lambda lib: lib.ones(3).resize_(),
                  lambda lib: lib.ones(3).resize_as_((2, 3)), lambda lib: lib.resize_as_(3, lib.ones(2))):
        same(build, prefix_errors=True)

    with tapegrad.inference_mode():
        x = tapegrad.ones(3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        x.resize_(2)


def test_resize_makes_a_saved_value_stale():
    def build(lib):
        x, w = lib.ones(3, requires_grad=True), lib.arange(3.0)
        y = x * w
        w.resize_(2)
        y.sum().backward()
    (ours, _), (theirs, _) = both(lambda lib: outcome(lambda: build(lib)))
    # (PyTorch's message prints the tensor's size now, [2]; tapegrad's the saved one's)
    assert ours[0] == theirs[0] == "RuntimeError" and "is at version 1; expected version 0" in ours[1]
    same(lambda lib: (lambda x, w: (x * w, w.resize_(3), x)[0].sum().backward())(lib.ones(3, requires_grad=True),
                                                                                  lib.arange(3.0)))


def test_deprecated_resize_and_resize_as():
    def build(lib):
        x = lib.arange(6.0, requires_grad=True)
        r = x.resize(2, 3)
        r.sum().backward()
        return r, x.grad
    ours, theirs = same(lambda lib: build(lib)[0])
    same(lambda lib: build(lib)[1])
    same(lambda lib: lib.arange(6.0, requires_grad=True).resize_as(lib.zeros(3, 2)))
    same(lambda lib: (lambda y: (y.resize(3, 2).__setitem__((0, 0), 100), y)[1])(lib.arange(6.0)))  # shares y's data
    same(lambda lib: (lambda y: (y.resize(6).__setitem__(0, 100), y)[1])(lib.arange(6.0).view(2, 3).t()))  # a copy
    for build in (lambda lib: lib.arange(6.0).resize((2, 3)), lambda lib: lib.arange(6.0).resize(4),
                  lambda lib: lib.arange(6.0).resize(), lambda lib: lib.arange(6.0).resize_as(lib.zeros(2, 2))):
        same(build)


# ---- Tensor methods ----------------------------------------------------------------------------------------------

def test_new_empty_strided():
    for build in (lambda lib: lib.ones(2, dtype=lib.int32).new_empty_strided((2, 3), (3, 1)),
                  lambda lib: lib.ones(2).new_empty_strided((2, 3), (1, 2), dtype=lib.float64, requires_grad=True),
                  lambda lib: lib.ones(2).new_empty_strided([2, 3], [3, 1], device="cpu", layout=lib.strided)):
        (ours, _), (theirs, _) = both(lambda lib: outcome(lambda: build(lib)))
        assert summary(ours) == summary(theirs) and ours.stride() == theirs.stride()
    for build in (lambda lib: lib.ones(2).new_empty_strided((2, 3), (1,)),
                  lambda lib: lib.ones(2, dtype=lib.int32).new_empty_strided((2, 3), (3, 1), requires_grad=True),
                  lambda lib: lib.ones(2).new_empty_strided(2, 1),
                  lambda lib: lib.ones(2).new_empty_strided((2, -1), (1, 1)),
                  lambda lib: lib.ones(2).new_empty_strided((2, 3), (-1, 1))):
        same(build, prefix_errors=True)


def test_share_memory_and_is_shared():
    def build(lib):
        b = lib.arange(6.0)
        v, c = b[2:], b.clone()
        before = (b.is_shared(), v.is_shared())
        out = v.share_memory_()
        return before, out is v, b.is_shared(), b.detach().is_shared(), c.is_shared(), b.clone().is_shared()
    same(build)
    same(lambda lib: (lambda r: r.share_memory_() is r and r.is_shared())(lib.ones(3, requires_grad=True)))
    same(lambda lib: lib.ones(3).share_memory_(1))
    same(lambda lib: lib.ones(3).share_memory_().resize_(2).is_shared())
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        tapegrad.ones(3).share_memory_().resize_(10)   # (PyTorch's process dies of a segmentation fault)


def _boom(v):
    if v == 1:
        raise ValueError("boom")
    return v + 10


_APPLY = {
    "double": lambda lib: lib.arange(5.0).apply_(lambda v: v * 2),
    "int truncates": lambda lib: lib.arange(5).apply_(lambda v: v * 2.7),
    "int from str": lambda lib: lib.arange(5).apply_(lambda v: "x"),
    "int overflow": lambda lib: lib.arange(3).apply_(lambda v: 2 ** 70),
    "int nan": lambda lib: lib.tensor([1]).apply_(lambda v: float("nan")),
    "int from tensor": lambda lib: lib.tensor([1]).apply_(lambda v: lib.tensor(4)),
    "int from float tensor": lambda lib: lib.tensor([1]).apply_(lambda v: lib.tensor(4.5)),
    "int8 overflow": lambda lib: lib.arange(3, dtype=lib.int8).apply_(lambda v: 300),
    "uint8 wraps": lambda lib: lib.tensor([1], dtype=lib.uint8).apply_(lambda v: -1),
    "uint8 negative float": lambda lib: lib.tensor([1], dtype=lib.uint8).apply_(lambda v: -1.0),
    "uint8 too negative": lambda lib: lib.tensor([1], dtype=lib.uint8).apply_(lambda v: -256),
    "bool": lambda lib: lib.tensor([True, False]).apply_(lambda v: 0.5),
    "bool from str": lambda lib: lib.tensor([True, False]).apply_(lambda v: "a"),
    "bool from None": lambda lib: lib.tensor([True, False]).apply_(lambda v: None),
    "bool reads bools": lambda lib: lib.tensor([True, False]).apply_(lambda v: type(v) is bool),
    "float from None": lambda lib: lib.tensor([1.0]).apply_(lambda v: None),
    "float from complex": lambda lib: lib.tensor([1.0]).apply_(lambda v: 1 + 2j),
    "float from str": lambda lib: lib.tensor([1.0]).apply_(lambda v: "3"),
    "float from huge int": lambda lib: lib.tensor([1.0]).apply_(lambda v: 2 ** 2000),
    "float overflow": lambda lib: lib.arange(3.0).apply_(lambda v: 1e300),
    "float from numpy": lambda lib: lib.tensor([1.0]).apply_(lambda v: np.float32(2.5)),
    "half": lambda lib: lib.arange(3, dtype=lib.float16).apply_(lambda v: v / 3),
    "bfloat16": lambda lib: lib.arange(3, dtype=lib.bfloat16).apply_(lambda v: v / 3),
    "complex": lambda lib: lib.tensor([1 + 1j]).apply_(lambda v: v * 2j),
    "complex from str": lambda lib: lib.tensor([1 + 1j]).apply_(lambda v: "a"),
    "0-d": lambda lib: lib.tensor(3.0).apply_(lambda v: v + 1),
    "transposed": lambda lib: lib.arange(4.0).view(2, 2).t().apply_(lambda v: v + 10),
    "view": lambda lib: (lambda a: (a[1:3].apply_(lambda v: -v), a)[1])(lib.arange(4.0)),
    "expanded": lambda lib: (lambda a: (a.expand(2, 3).apply_(lambda v: v + 1), a)[1])(lib.zeros(3)),
    "raises midway": lambda lib: (lambda a: (outcome(lambda: a.apply_(_boom))[0], a.tolist()))(lib.arange(3.0)),
    "empty, not callable": lambda lib: lib.empty(0).apply_(5),
    "not callable": lambda lib: lib.arange(3.0).apply_(5),
    "requires grad": lambda lib: lib.ones(3, requires_grad=True).apply_(lambda v: v),
    "two arguments": lambda lib: lib.arange(3.0).apply_(lambda v: v, 1),
    "keyword": lambda lib: lib.arange(3.0).apply_(fn=lambda v: v),
    "map_": lambda lib: lib.arange(4.0).map_(lib.arange(4.0) * 10, lambda x, y: x + y),
    "map_ broadcast": lambda lib: lib.arange(6.0).view(2, 3).map_(lib.arange(3.0), lambda x, y: x * y),
    "map_ bad broadcast": lambda lib: lib.arange(4.0).map_(lib.arange(3.0), lambda x, y: x + y),
    "map_ dtype": lambda lib: lib.arange(4.0).map_(lib.arange(4), lambda x, y: x + y),
    "map_ not a tensor": lambda lib: lib.arange(4.0).map_(3, lambda x, y: x + y),
    "map_ requires grad": lambda lib: lib.arange(4.0).map_(lib.ones(4, requires_grad=True), lambda x, y: x),
    "map_ arity": lambda lib: lib.arange(4.0).map_(lib.ones(4), lambda x: x),
    "map_ running sum": lambda lib: (lambda a: (a[1:].map_(a[:3], lambda x, y: x + y), a)[1])(lib.arange(4.0)),
    "map2_": lambda lib: lib.arange(4.0).map2_(lib.ones(4), lib.ones(4) * 2, lambda x, y, z: x + y * z),
    "map2_ bad broadcast": lambda lib: lib.arange(4.0).map2_(lib.ones(1), lib.ones(4, 1), lambda x, y, z: x),
    "map2_ dtype x": lambda lib: lib.arange(4.0).map2_(lib.ones(4, dtype=lib.int64), lib.ones(4), lambda *a: 0),
    "map2_ dtype y": lambda lib: lib.arange(4.0).map2_(lib.ones(4), lib.ones(4, dtype=lib.int64), lambda *a: 0),
    "map2_ not a tensor": lambda lib: lib.arange(4.0).map2_(lib.ones(4), 3, lambda *a: 0),
    "map2_ aliased": lambda lib: (lambda a: (a[:4].map2_(a[1:], a.flip(0)[:4], lambda x, y, z: x + y + z), a)[1])(
        lib.arange(5.0)),
}


@pytest.mark.parametrize("case", _APPLY)
def test_apply_map_map2(case):
    same(_APPLY[case])


def test_apply_returns_self():
    same(lambda lib: (lambda a: a.apply_(abs) is a and a.map_(a, max) is a and a.map2_(a, a, min) is a)(
        lib.arange(3.0)))


def test_as_subclass():
    def build(lib):
        class Sub(lib.Tensor):
            pass
        x = lib.arange(3.0, requires_grad=True)
        s = x.as_subclass(Sub)
        s.sum().backward()
        return type(s) is Sub, s._base is x, s.tolist(), type(s.grad_fn).__name__, x.grad.tolist()
    same(build)
    same(lambda lib: type(lib.arange(3.0).as_subclass(lib.Tensor)) is lib.Tensor)
    for cls in (int, 3):
        same(lambda lib: lib.arange(3.0).as_subclass(cls))

    class Slotted(tapegrad.Tensor):
        __slots__ = ("extra",)
    s = tapegrad.arange(3.0, requires_grad=True).as_subclass(Slotted)
    assert type(s) is Slotted and s.tolist() == [0.0, 1.0, 2.0] and s.requires_grad


def test_device_booleans_and_chalf():
    names = ("is_meta", "is_xpu", "is_mps", "is_ipu", "is_xla", "is_vulkan", "is_mkldnn", "is_maia", "is_mtia",
             "is_quantized", "is_cuda", "is_cpu")
    same(lambda lib: [getattr(lib.ones(2), name) for name in names])
    # tapegrad has no complex32: PyTorch's kind of error for a dtype a kernel lacks
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexHalf'"):
        tapegrad.ones(2).chalf()


# ---- nn ------------------------------------------------------------------------------------------------------

def test_rms_norm_at_the_top_level():
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    w = np.linspace(0.5, 1.5, 4).astype(np.float32)
    same(lambda lib: lib.rms_norm(lib.tensor(x), [4]), prefix_errors=True)
    ours, theirs = both(lambda lib: lib.rms_norm(lib.tensor(x), (3, 4), lib.tensor(w).expand(3, 4), eps=1e-3))
    assert_close(ours, theirs)
    torch = require("torch")   # (two objects in PyTorch: the functional one is Python calling the builtin)
    assert (tapegrad.rms_norm is tapegrad.nn.functional.rms_norm) == (torch.rms_norm is torch.nn.functional.rms_norm)


def test_nll_loss_2d():
    x = np.log(np.random.default_rng(1).dirichlet(np.ones(3), (2, 4, 4))).transpose(0, 3, 1, 2).astype(np.float32)
    t = np.random.default_rng(2).integers(0, 3, (2, 4, 4))

    def build(lib):
        m = lib.nn.NLLLoss2d(reduction="sum", ignore_index=1)
        return repr(m), isinstance(m, lib.nn.NLLLoss), m(lib.tensor(x), lib.tensor(t)).item()
    (ours, our_warnings), (theirs, their_warnings) = both(lambda lib: outcome(lambda: build(lib)))
    assert our_warnings == their_warnings and ours[:2] == theirs[:2]
    assert ours[2] == pytest.approx(theirs[2], rel=1e-6)


def test_sync_batch_norm_without_a_process_group():
    x = np.random.default_rng(3).standard_normal((4, 3, 5)).astype(np.float32)

    def build(lib):
        m = lib.nn.SyncBatchNorm(3, momentum=None)
        out = m(lib.tensor(x))
        m.eval()
        return repr(m), out, m.running_mean, m.running_var, m.num_batches_tracked, m(lib.tensor(x))
    ours, theirs = both(build)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        assert_close(a, b)
    for build in (lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(3)), lambda lib: lib.nn.SyncBatchNorm(0)(lib.ones(2, 0)),
                  lambda lib: lib.nn.SyncBatchNorm(3, track_running_stats=False)(lib.ones(2, 3)).shape):
        same(build)


def test_sync_batch_norm_with_a_process_group_refuses_a_cpu_input(monkeypatch):
    monkeypatch.setattr(tapegrad.distributed, "is_initialized", lambda: True)
    m = tapegrad.nn.SyncBatchNorm(3)
    with pytest.raises(ValueError, match="^SyncBatchNorm expected input tensor to be on GPU or XPU or privateuseone$"):
        m(tapegrad.ones(2, 3))
    assert m.num_batches_tracked.item() == 1   # (moved before the check, as in PyTorch)
    m.eval()
    assert m(tapegrad.ones(2, 3)).shape == (2, 3)   # eval mode syncs nothing


def test_convert_sync_batchnorm():
    def build(lib):
        net = lib.nn.Sequential(lib.nn.Conv2d(3, 3, 1), lib.nn.BatchNorm2d(3, affine=False),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(3, momentum=0.3).eval()),
                                lib.nn.InstanceNorm2d(3), lib.nn.BatchNorm3d(3, bias=False))
        bn = net[2][0]
        out = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        converted = out[2][0]
        return (repr(out), out is net, converted.running_mean is bn.running_mean, converted.weight is bn.weight,
                converted.training, converted.process_group, type(lib.nn.SyncBatchNorm.convert_sync_batchnorm(
                    lib.nn.BatchNorm1d(2), process_group="g")).__name__)
    same(build)
