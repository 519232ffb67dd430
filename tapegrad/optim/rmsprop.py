"""PyTorch's module path torch.optim.rmsprop for RMSprop (it lives in adaptive.py)."""
from .adaptive import RMSprop  # noqa: F401
