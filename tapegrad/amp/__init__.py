"""tapegrad.amp (PyTorch's torch.amp): autocast regions and gradient scaling."""
from .autocast_mode import (
    autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype, custom_fwd, custom_bwd)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype", "custom_fwd",
           "custom_bwd"]
