"""Anomaly detection: where a NaN gradient came from (PyTorch's detect_anomaly / set_detect_anomaly).

While it is on, every recorded node keeps the stack of the forward call that recorded it, and the
backward runs node by node (never compiled whole), so each node's gradients are checked for NaN as
they are computed. A failing node raises PyTorch's error, after a warning that shows the forward line.
"""
import traceback
import weakref

from .._grad_mode import _DecoratorContextManager
from .._user_frames import warn_user

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

_mode = {"enabled": False, "check_nan": True}
_forward_stacks = weakref.WeakKeyDictionary()   # node -> the stack that recorded it


def is_anomaly_enabled():
    return _mode["enabled"]


def is_anomaly_check_nan_enabled():
    return _mode["check_nan"]


def _set(enabled, check_nan):
    prev = (_mode["enabled"], _mode["check_nan"])
    _mode["enabled"], _mode["check_nan"] = bool(enabled), bool(check_nan)
    return prev


class detect_anomaly(_DecoratorContextManager):
    """Context manager / decorator turning anomaly detection on."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = None
        warn_user("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                  "enabled for debugging.", UserWarning)

    def clone(self):
        clone = object.__new__(type(self))
        clone.check_nan, clone.prev = self.check_nan, None
        return clone

    def __enter__(self):
        self.prev = _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)


class set_detect_anomaly(_DecoratorContextManager):
    """Turn anomaly detection on or off (at once, and back when used as a context manager)."""

    def __init__(self, mode, check_nan=True):
        self.mode, self.check_nan = mode, check_nan
        self.prev = _set(mode, check_nan)

    def clone(self):
        return type(self)(self.mode, self.check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set(*self.prev)


def remember(node):
    """Keep the stack of the user's forward call that recorded `node` (anomaly mode only)."""
    stack = [f for f in traceback.extract_stack()[:-1] if "/tapegrad/" not in f.filename.replace("\\", "/")]
    _forward_stacks[node] = "".join(traceback.format_list(stack[-8:]))


def checked(node, name, grads, output_positions):
    """Raise PyTorch's error when a node's gradients hold NaN; `grads` are arrays."""
    import numpy as np
    if not _mode["check_nan"]:
        return
    for position, g in zip(output_positions, grads):
        if g is not None and np.isnan(np.asarray(g)).any():
            report(node, name)
            raise RuntimeError(f"Function '{name}' returned nan values in its {position}th output.")


def report(node, name):
    stack = _forward_stacks.get(node)
    if stack is not None:
        warn_user(f"Error detected in {name}. Traceback of forward call that caused the error:\n{stack}",
                  UserWarning)
