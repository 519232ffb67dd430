"""tapegrad.utils.tensorboard: PyTorch's SummaryWriter, written over the tensorboardX library.

tensorboardX (pure Python, `pip install tensorboardX`) is imported when a SummaryWriter is made, not
with tapegrad. tapegrad tensors are handed to it as NumPy arrays. `add_graph` runs the model once on
its example inputs and writes the ops it ran, by module scope, as the GraphDef PyTorch's add_graph
builds from a TorchScript trace (_graph.py says where the two differ).
"""
from ._writer import SummaryWriter  # noqa: F401
