"""tapegrad.nn: modules, layers, losses, functional and init, with PyTorch's API."""
from .parameter import Parameter, UninitializedParameter, UninitializedBuffer, Buffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __dict__ as _modules_namespace
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from . import attention  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from .._tensor import Tensor as _Tensor

# Tensor methods PyTorch defines over nn kernels.
_Tensor.softmax = lambda self, dim, dtype=None: functional.softmax(self, dim, dtype=dtype)
_Tensor.log_softmax = lambda self, dim, dtype=None: functional.log_softmax(self, dim, dtype=dtype)

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer", "Buffer", "functional", "init", "utils"] + [
    name for name, value in _modules_namespace.items() if isinstance(value, type) and not name.startswith("_")]
