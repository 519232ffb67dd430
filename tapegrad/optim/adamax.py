"""PyTorch's module path torch.optim.adamax for Adamax (it lives in adam.py)."""
from .adam import Adamax  # noqa: F401
