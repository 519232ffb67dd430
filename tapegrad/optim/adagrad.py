"""PyTorch's module path torch.optim.adagrad for Adagrad (it lives in adaptive.py)."""
from .adaptive import Adagrad  # noqa: F401
