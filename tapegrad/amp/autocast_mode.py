"""autocast (PyTorch's torch.amp.autocast): run PyTorch's listed ops in lower precision.

The casting itself and PyTorch's op lists live in tapegrad/_autocast.py; this module is the public
context manager and the state queries. `cache_enabled` is accepted: PyTorch caches the casts of leaf
weights within a region to save time; tapegrad's deferred forward records each cast as an op, and XLA
fuses repeated casts, so there is nothing to cache. tapegrad.compile guards on the autocast state: a
function called inside and outside autocast regions compiles one program for each.
"""
import functools

from .. import _autocast
from .. import _dtypes as D
from ..device import DEVICE_TYPES as _DEVICE_TYPES
from .._user_frames import warn_user

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype", "custom_fwd", "custom_bwd"]

_SUPPORTED = {"cpu": (D.bfloat16, D.float16), "cuda": (D.float16, D.bfloat16, D.float32)}


def is_autocast_available(device_type):
    """Whether autocast can run on `device_type` (cpu and cuda, as PyTorch's CPU build reports)."""
    return device_type in _SUPPORTED


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type` (no argument: cuda's, as in PyTorch)."""
    return _autocast.enabled("cuda" if device_type is None else device_type)


def get_autocast_dtype(device_type):
    """The dtype autocast casts lower-precision ops to on `device_type`."""
    return _autocast.dtype(device_type)


class autocast:
    """Context manager and decorator: PyTorch's listed ops run in `dtype` (default bfloat16 on cpu, float16 on
    cuda); loss functions and a few reductions run in float32. Nested regions restore the outer state."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                               f"{device_type}")
        self.device = device_type
        self.fast_dtype = _autocast.dtype(device_type) if dtype is None else dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        self._enabled = bool(enabled)
        if not self._enabled:
            return
        if device_type == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warn_user("CUDA is not available or torch_xla is imported. Disabling autocast.")
                self._enabled = False
                return
        supported = _SUPPORTED.get(device_type, ())
        if self.fast_dtype not in supported:
            name = device_type.upper()
            listed = ", ".join(f"torch.{d.name}" for d in supported[:2])
            warn_user(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                      f"{name} Autocast only supports dtypes of {listed} currently.")
            self._enabled = False

    def __enter__(self):
        self._previous = _autocast.STATE.get(self.device)
        _autocast.set_state(self.device, self._enabled, self.fast_dtype)
        return self

    def __exit__(self, *exc):
        _autocast.set_state(self.device, *(self._previous or (False, None)))
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorated


def _cast(value, device_type, dtype):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        eligible = value.dtype.is_floating_point and value.dtype is not D.float64 and value.device.type == device_type
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: with cast_inputs, inside an autocast region its floating
    inputs are cast to cast_inputs and it runs with autocast off (PyTorch's torch.amp.custom_fwd)."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: it runs with the autocast state its forward ran with."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
