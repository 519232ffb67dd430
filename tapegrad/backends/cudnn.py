"""tapegrad.backends.cudnn: PyTorch's cuDNN flags, accepted and stored (see tapegrad.backends)."""
import contextlib
import sys
import types

from ._probe import has_devices

_flags = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
# PyTorch's setter names, which its type errors quote (allow_tf32's quotes cuBLAS's, as PyTorch's does)
_SETTERS = {"enabled": "set_enabled_cudnn", "benchmark": "set_benchmark_cudnn",
            "deterministic": "set_deterministic_cudnn", "allow_tf32": "set_allow_tf32_cublas"}


def is_available():
    """JAX's GPU backend brings its own cuDNN: available exactly when a GPU is."""
    return has_devices("gpu")


def version():
    return None


def _flag(name):
    def get(module):
        return _flags[name]

    def set(module, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{_SETTERS[name]} expects a bool, but got {type(value).__name__}")
        _flags[name] = value
    return property(get, set)


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
          fp32_precision="none", depthwise_kernel="auto"):
    """PyTorch's flags(): the four flags set for the block (defaults as PyTorch's), restored after it.
    benchmark_limit, fp32_precision and depthwise_kernel choose cuDNN kernels, which JAX picks itself."""
    saved = dict(_flags)
    module = sys.modules[__name__]
    for name, value in (("enabled", enabled), ("benchmark", benchmark), ("deterministic", deterministic),
                        ("allow_tf32", allow_tf32)):
        setattr(module, name, value)
    try:
        yield
    finally:
        _flags.update(saved)


class _CudnnModule(types.ModuleType):
    enabled = _flag("enabled")
    benchmark = _flag("benchmark")
    deterministic = _flag("deterministic")
    allow_tf32 = _flag("allow_tf32")


sys.modules[__name__].__class__ = _CudnnModule
