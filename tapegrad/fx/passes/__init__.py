"""PyTorch's torch.fx.passes: graph passes (utils.matcher_utils: subgraph matching)."""
from . import utils
