"""PyTorch's module path torch.optim.nadam for NAdam (it lives in adam.py)."""
from .adam import NAdam  # noqa: F401
