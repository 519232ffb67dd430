"""Memory formats (channels_last strides), torch.cuda's streams, events and memory-stat names, and the
attention-backend flags: each against PyTorch (its CPU build, like tapegrad's answers without a GPU)."""
import pickle
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, require


def _both(expr):
    """(tapegrad's outcome, PyTorch's outcome) of `expr` with `torch` bound to each library."""
    torch = require("torch")
    out = []
    for lib in (tapegrad, torch):
        try:
            out.append(("ok", eval(expr, {"torch": lib})))
        except Exception as e:  # noqa: BLE001  the error is the outcome compared
            out.append((type(e).__name__, str(e)))
    return out


# (shapes without size-1 dims: see tapegrad/_memory_format.py for those)
@pytest.mark.parametrize("shape, fmt", [((2, 3, 4, 5), "channels_last"), ((3, 2, 5, 2), "channels_last"),
                                        ((2, 3, 2, 4, 5), "channels_last_3d")])
def test_channels_last_strides_and_contiguity_as_pytorch(shape, fmt):
    torch = require("torch")
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    ours = tapegrad.tensor(x).contiguous(memory_format=getattr(tapegrad, fmt))
    theirs = torch.tensor(x).contiguous(memory_format=getattr(torch, fmt))
    assert ours.stride() == theirs.stride()
    for check in ("contiguous_format", fmt):
        assert ours.is_contiguous(memory_format=getattr(tapegrad, check)) == \
            theirs.is_contiguous(memory_format=getattr(torch, check))
    assert_close(ours, theirs)
    moved = tapegrad.tensor(x).to(memory_format=getattr(tapegrad, fmt))
    assert moved.stride() == torch.tensor(x).to(memory_format=getattr(torch, fmt)).stride()
    back = ours.contiguous()
    assert back.stride() == theirs.contiguous().stride()


def test_channels_last_keeps_gradients_and_errors_as_pytorch():
    torch = require("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    a, b = tapegrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    for t, lib in ((a, tapegrad), (b, torch)):
        y = t.contiguous(memory_format=lib.channels_last)
        (y * y.sin()).sum().backward()
    assert_close(a.grad, b.grad)
    for expr in ("torch.ones(2, 3).contiguous(memory_format=torch.channels_last)",
                 "torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last_3d)",
                 "torch.ones(2, 3).contiguous(memory_format=torch.preserve_format).shape",
                 "torch.ones(2, 3, 4, 5).to(memory_format=torch.preserve_format).stride()",
                 "repr(torch.channels_last).split('.')[1]"):
        ours, theirs = _both(expr)
        assert ours[0] == theirs[0] and (ours[0] != "ok" or ours[1] == theirs[1]), (expr, ours, theirs)
        if ours[0] != "ok":
            assert ours[1] == theirs[1]
    assert pickle.loads(pickle.dumps(tapegrad.channels_last)) is tapegrad.channels_last


@pytest.mark.skipif(tapegrad.cuda.is_available(), reason="PyTorch's CPU-build answers are the oracle without a GPU")
def test_streams_events_and_memory_without_a_gpu_answer_as_pytorchs_cpu_build():
    for expr in ("torch.cuda.Event(enable_timing=True)", "torch.cuda.Stream()",
                 "type(torch.cuda.stream(None)).__name__", "torch.cuda.memory.memory_allocated()",
                 "torch.cuda.memory.max_memory_allocated()", "torch.cuda.max_memory_allocated()"):
        ours, theirs = _both(expr)
        assert ours == theirs, (expr, ours, theirs)
    kind, text = _both("torch.cuda.current_stream()")[0]
    assert kind == "AssertionError" and text.startswith("Torch not compiled with CUDA enabled")
    from tapegrad.cuda.memory import memory_allocated   # importable by name, as torch.cuda.memory
    assert memory_allocated() == 0


def test_attention_backend_flags_as_pytorch():
    torch = require("torch")
    for lib in (tapegrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True) as state:
                assert state == {} and not lib.backends.cuda.flash_sdp_enabled()
                assert lib.backends.cuda.math_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled()
        assert [w.category for w in caught] == [FutureWarning]
        assert "sdp_kernel()` is deprecated" in str(caught[0].message)
    ours, theirs = tapegrad.backends.cuda.SDPBackend, torch.backends.cuda.SDPBackend
    assert [(m.name, int(m), str(m), repr(m)) for m in ours] == [(m.name, int(m), str(m), repr(m)) for m in
                                                               theirs.__members__.values()]
