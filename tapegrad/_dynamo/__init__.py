"""PyTorch's torch._dynamo names that user code touches: `exc.Unsupported` and `reset()`."""
from . import exc

__all__ = ["exc", "reset"]


def reset():
    """Forget compiled programs: functions compiled from now on trace again (torch._dynamo.reset)."""
    from .. import _programs
    _programs.clear()
