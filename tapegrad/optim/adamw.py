"""PyTorch's module path torch.optim.adamw for AdamW (it lives in adam.py)."""
from .adam import AdamW  # noqa: F401
