"""PyTorch's module path torch.nn.modules.flatten (the classes live in linear.py)."""
from .linear import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
