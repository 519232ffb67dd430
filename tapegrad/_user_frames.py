"""The user's frame: where a warning tapegrad raises points, and what its recompile log names.

A warning with a fixed stacklevel points into tapegrad whenever the call that raises it went through a wrapper
(autocast's policy, out=, the argument parser, a module's __call__): `warn_user` counts the frames to the
innermost one outside tapegrad and JAX instead, as PyTorch's C++ warnings point at the Python line that called in.
"""
import sys
import warnings

_INTERNAL = ("tapegrad", "jax", "jaxlib", "contextlib", "functools")


def user_frame():
    """The innermost frame outside tapegrad and JAX (the user's code), and how many frames up it is."""
    f, level = sys._getframe(1), 1
    while f is not None and f.f_globals.get("__name__", "").startswith(_INTERNAL):
        f, level = f.f_back, level + 1
    return f, level


def user_line():
    f, _ = user_frame()
    return "an unknown line" if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def warn_user(message, category=UserWarning):
    """warnings.warn(message, category), attributed to the user's line."""
    _, level = user_frame()
    warnings.warn(message, category, stacklevel=level)
