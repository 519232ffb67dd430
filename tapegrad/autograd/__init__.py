"""tapegrad.autograd: backward(), grad(), Function, forward_ad, ... (PyTorch's torch.autograd).

The tensor core imports this package's low-level modules (_node, _saved, graph, anomaly_mode), and
importing any of them runs this file first. So it imports only modules that import nothing of the
core; the names that need the engine (backward, grad, Function, functional, forward_ad, ...) load on
first use (PEP 562 `__getattr__`), after the core has loaded.
"""
import importlib

from .._grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from ._node import Node, AccumulateGrad  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled  # noqa: F401
from .anomaly_mode import is_anomaly_check_nan_enabled  # noqa: F401
# the function, not the module of the same name: bound here, before any later import of the module
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401
from . import graph  # noqa: F401

__all__ = ["backward", "grad", "backward_cache_info", "clear_backward_cache"]

# name -> the submodule that defines it, imported on first use (tests/test_import_layers.py reads this table)
_LAZY = {
    "backward": "_api", "grad": "_api",
    "backward_cache_info": "_engine", "clear_backward_cache": "_engine", "run_backward": "_engine",
    "Function": "function", "FunctionCtx": "function", "InplaceFunction": "function",
    "NestedIOFunction": "function", "once_differentiable": "function",
    "Variable": "variable",
}
_SUBMODULES = ("forward_ad", "function", "functional", "profiler", "variable")  # public, listed by dir()


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    else:
        # any submodule, as `import tapegrad.autograd` made them attributes before (tapegrad.autograd.functional)
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
