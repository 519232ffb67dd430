"""tapegrad.utils.benchmark: PyTorch's torch.utils.benchmark Timer and Measurement."""
from ._measurement import Measurement, TaskSpec, select_unit  # noqa: F401
from ._timer import Timer  # noqa: F401
