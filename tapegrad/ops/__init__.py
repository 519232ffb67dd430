"""tapegrad.ops (PyTorch's torch.ops): operators called directly rather than through the public functions.

`profiler` holds PyTorch's profiler-range operators. Any other name is an entry of tapegrad's op table
(tapegrad/_ops), callable on tensors as it is recorded on the tape: `tapegrad.ops.addmm(b, x, w)`. These
are what graphs recorded by `fx.symbolic_trace(..., example_inputs=...)` call. There is no aten
namespace of registered C++ kernels; `load_library` loads a shared library as PyTorch's does.
"""
from . import profiler
from .._native_library import load_library, loaded_libraries

__all__ = ["profiler", "load_library", "loaded_libraries"]


def __getattr__(name):
    from .._ops._registry import OPS
    if name in OPS:
        from ..fx._tracer import OpCall
        return OpCall(OPS[name])
    raise AttributeError(f"module 'tapegrad.ops' has no attribute {name!r}: it is not an entry of tapegrad's op table")
