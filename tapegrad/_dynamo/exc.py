"""torch._dynamo.exc: the error a compiled function raises where fullgraph=True cannot hold."""
from .._compile import Unsupported

__all__ = ["Unsupported"]
