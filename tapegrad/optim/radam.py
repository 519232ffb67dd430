"""PyTorch's module path torch.optim.radam for RAdam (it lives in adam.py)."""
from .adam import RAdam  # noqa: F401
