"""tapegrad.ops.profiler (PyTorch's torch.ops.profiler): a profiler range opened and closed by calls, not by a
`with` block. FX code uses them to keep `record_function` ranges in a traced graph (a handle flows from the
enter call to the exit call)."""
from ..autograd.profiler import record_function

__all__ = ["_record_function_enter", "_record_function_enter_new", "_record_function_exit"]


def _record_function_enter(name, args=None):
    """Open the range `name`; returns the handle _record_function_exit closes."""
    handle = record_function(name, args)
    handle.__enter__()
    return handle


_record_function_enter_new = _record_function_enter


def _record_function_exit(handle):
    handle.__exit__(None, None, None)
