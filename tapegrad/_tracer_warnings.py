"""PyTorch's TracerWarning: while jit.trace runs its example inputs, reading a tensor's value into Python
(bool, a number, a list, a NumPy array), its length, or iterating over it bakes that value into a PyTorch
trace. tapegrad's traced callables rerun the Python code, so nothing is frozen here, but the same code
would not generalize under PyTorch: the warnings are PyTorch's, raised in the same places.

Lives outside tapegrad.jit (a lazily imported package) because Tensor's conversions check it."""
import sys
import warnings

TRACING = [0]   # > 0 while jit.trace (or add_graph) runs a function on its example inputs


class TracerWarning(Warning):
    @staticmethod
    def ignore_lib_warnings():
        # PyTorch's API; tapegrad never warns from its own modules (see _warn), whatever the filters
        warnings.filterwarnings("ignore", category=TracerWarning, module=r"tapegrad\.(?!jit)")


_FROZEN = ("Converting a tensor to a {} might cause the trace to be incorrect. We can't record the data flow "
           "of Python values, so this value will be treated as a constant in the future. This means that the trace "
           "might not generalize to other inputs!")
LEN = ("Using len to get tensor shape might cause the trace to be incorrect. Recommended usage would be "
       "tensor.shape[0]. Passing a tensor of different shape might lead to errors or silently give incorrect results.")
ITER = ("Iterating over a tensor might cause the trace to be incorrect. Passing a tensor of different shape won't "
        "change the number of iterations executed (and might lead to errors or silently give incorrect results).")
CONSTANT = ("torch.tensor results are registered as constants in the trace. You can safely ignore this warning if you "
            "use this function to create tensors out of constant variables that would be the same every time you "
            "call this function. In any other case, this might cause the trace to be incorrect.")


def converting(kind):
    """Called by a Tensor conversion to `kind` ("Python boolean", "NumPy array", ...): warns its caller while a
    trace records."""
    if TRACING[0]:
        _warn(_FROZEN.format(kind))


def warn(message):
    """Warns the caller of the function calling this while a trace records."""
    if TRACING[0]:
        _warn(message)


def _warn(message):
    # the caller of our caller, past tapegrad.fx's wrappers of public functions, is the line to point at; a
    # conversion tapegrad makes for itself is not the user's and stays silent (PyTorch filters out its own)
    level, frame = 4, sys._getframe(3)
    while frame is not None and frame.f_globals.get("__name__") == "tapegrad.fx._proxy_functions":
        level, frame = level + 1, frame.f_back
    module = "" if frame is None else frame.f_globals.get("__name__", "")
    if module.startswith("tapegrad.") and not module.startswith("tapegrad.jit"):
        return
    warnings.warn(message, TracerWarning, stacklevel=level)
