"""torch._dynamo.exc: the error a compiled function raises where fullgraph=True cannot hold, and UserError."""
from .._compile import Unsupported

__all__ = ["Unsupported", "UserError"]


class UserError(RuntimeError):
    """A user's specification that cannot hold (torch.export's dynamic_shapes that the code contradicts)."""
