"""tapegrad.utils.tensorboard: PyTorch's SummaryWriter, written over the tensorboardX library.

tensorboardX (pure Python, `pip install tensorboardX`) is imported when a SummaryWriter is made, not
with tapegrad. tapegrad tensors are handed to it as NumPy arrays. `add_graph` is refused: a tapegrad
model has no TorchScript trace to draw.
"""
from ._writer import SummaryWriter  # noqa: F401
