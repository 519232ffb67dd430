"""tapegrad.nn: modules, layers, losses, functional and init, with PyTorch's API."""
from .parameter import Parameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import __dict__ as _modules_namespace
from . import functional, init, utils  # noqa: F401
from . import utils  # noqa: F401

__all__ = ["Parameter", "functional", "init", "utils"] + [
    name for name, value in _modules_namespace.items() if isinstance(value, type) and not name.startswith("_")]
