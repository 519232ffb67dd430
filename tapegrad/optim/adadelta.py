"""PyTorch's module path torch.optim.adadelta for Adadelta (it lives in adaptive.py)."""
from .adaptive import Adadelta  # noqa: F401
