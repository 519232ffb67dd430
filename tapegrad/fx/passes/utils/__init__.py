"""PyTorch's torch.fx.passes.utils."""
from . import matcher_utils
