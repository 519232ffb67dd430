"""torch.cpu.amp and torch.cuda.amp: the older spellings of torch.amp, deprecated in PyTorch with a FutureWarning."""

from .autocast_mode import autocast as _autocast
from .grad_scaler import GradScaler as _GradScaler
from .. import _dtypes as D
from .._user_frames import warn_user


def namespace(device_type, default_dtype):
    """The `amp` namespace PyTorch keeps under torch.<device_type>."""
    import types

    class autocast(_autocast):
        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warn_user(f"`torch.{device_type}.amp.autocast(args...)` is deprecated. Please use "
                      f"`torch.amp.autocast('{device_type}', args...)` instead.", FutureWarning)
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            warn_user(f"`torch.{device_type}.amp.GradScaler(args...)` is deprecated. Please use "
                      f"`torch.amp.GradScaler('{device_type}', args...)` instead.", FutureWarning)
            super().__init__(device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled)

    for cls in (autocast, GradScaler):
        cls.__module__, cls.__qualname__ = f"tapegrad.{device_type}.amp", cls.__name__
    module = types.ModuleType(f"tapegrad.{device_type}.amp", __doc__)
    module.__file__ = __file__   # its code is here (so tools locating a module's source find it)
    module.autocast, module.GradScaler = autocast, GradScaler
    return module


cpu = namespace("cpu", D.bfloat16)
cuda = namespace("cuda", D.float16)
