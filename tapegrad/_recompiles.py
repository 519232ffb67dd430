"""Compiles explained: what was compiled, why, and where in the user's code.

Two things make tapegrad compile again while a program runs its loop: a kernel or program meeting
new shapes (a growing sequence, a last short batch), and a training step whose recorded structure is
new (an op that appears only on some steps, a Python branch). Both are logged on the "tapegrad"
logger when TAPEGRAD_LOG contains "recompiles" (every one, at INFO); without it, one warning per
kind of churn once it has repeated WARN_AFTER times, naming the op and the user's line.
"""
import logging
import os
from collections import deque

from ._user_frames import user_frame, user_line, warn_user  # noqa: F401 (user_frame, user_line: imported from here)

logger = logging.getLogger("tapegrad")

WARN_AFTER = 8          # compiles of one kernel (new shapes) or one step (new structures) before a warning
_KEPT_STRUCTURES = 16   # structures remembered per step, to find the nearest one


def log_all():
    return "recompiles" in os.environ.get("TAPEGRAD_LOG", "")


class RecompileWarning(UserWarning):
    """tapegrad compiled the same code again and again (see tapegrad._recompiles)."""


def _warn(message):
    warn_user(message, RecompileWarning)


def _describe_kernel(key):
    from .autograd._saved import SIGNATURES
    kind = key[0] if isinstance(key, tuple) and key else key
    if kind == "forward":
        return f"the kernel of {key[1].name}"
    if kind == "vjp":
        return f"the backward kernel of {SIGNATURES[key[1]][0].name}"
    if kind == "compiled":
        return "the program of a tapegrad.compile function"
    return f"the {kind} kernel" if isinstance(kind, str) else "a backward program"


def shapes_compiled(key, count, seconds, whole):
    """A kernel or program (cache `key`) compiled for the `count`-th set of input shapes. Kernels are
    shared by every structure and meet many shapes by design (each layer's): only whole programs warn."""
    if count < 2:
        return
    if log_all():
        logger.info("recompiled %s for new input shapes (%d shape sets so far, %.0f ms) at %s",
                    _describe(key), count, seconds * 1e3, user_line())
    elif whole and count == WARN_AFTER:
        _warn(f"tapegrad compiled {_describe(key)} for {count} different input shapes (at {user_line()}). "
              "Shapes that change from step to step compile again each time: pad inputs to a few fixed sizes "
              "(bucketing) or keep a fixed-size buffer with a mask. TAPEGRAD_LOG=recompiles logs every compile.")


def _describe(key):
    if isinstance(key, tuple) and key and key[0] == "step":
        return "the training step"
    if isinstance(key, tuple) and key and key[0] == "plan":
        return "a pending computation"
    return _describe_kernel(key)


class _Structures(deque):
    """The last structures compiled for one step, and how many there were in all."""
    count = 0


_structures = {}   # first op's line -> _Structures compiled for steps starting there


def step_compiled(seg, flat):
    """A step program for the new structure `flat`, recorded in segment `seg`, is being compiled."""
    family = seg.first_where
    seen = _structures.get(family)
    if seen is None:
        seen = _structures[family] = _Structures(maxlen=_KEPT_STRUCTURES)
    seen.count += 1
    count = seen.count
    if seen and (log_all() or count == WARN_AFTER):
        where = _first_difference(seg, flat, seen)
        message = (f"tapegrad compiled a new training step ({count} structures so far for the step starting at "
                   f"{_line(family)}): {where}")
        if log_all():
            logger.info("%s", message)
        else:
            _warn(message + ". A step whose ops or shapes change from one iteration to the next is compiled "
                  "again for each new structure: keep them the same every step (pad batches to a few fixed "
                  "sizes, masks instead of Python branches on data). TAPEGRAD_LOG=recompiles logs every compile.")
    seen.append(flat)


def forget():
    """Drop the compiled structures remembered per step (the program caches were cleared)."""
    _structures.clear()


def _line(where):
    return "an unknown line" if where is None else f"{where[0]}:{where[1]}"


def _first_difference(seg, flat, seen):
    """Where `flat` first departs from the most similar structure compiled before."""
    from ._lazy import SIGNATURES
    from ._segment import decode
    ops = decode(flat)

    def common(other):
        theirs = decode(other)
        n = 0
        while n < min(len(ops), len(theirs)) and ops[n] == theirs[n]:
            n += 1
        return n, theirs
    n, nearest = max((common(other) for other in seen), key=lambda c: c[0])
    if n >= len(ops):
        if n == len(nearest):
            return ("it records the same ops as one compiled before; what differs is the tensor backward() "
                    "starts from (its shape), or which tensors already hold a .grad")
        return f"it ends {len(nearest) - len(ops)} op(s) earlier than the nearest one compiled before"
    node = seg.nodes[n]() if n < len(seg.nodes) else None
    at = _line(node.where) if node is not None else "an unknown line"
    name = SIGNATURES[ops[n][0]][0].name
    if n >= len(nearest):
        return f"its op {n} ({name}, recorded at {at}) comes after where the nearest one compiled before ends"
    other = SIGNATURES[nearest[n][0]][0].name
    if other == name:
        return (f"its op {n} ({name}, recorded at {at}) differs from the nearest one compiled before in its "
                "arguments (often a shape that changed)")
    return f"its op {n} is {name} (recorded at {at}) where the nearest one compiled before has {other}"
