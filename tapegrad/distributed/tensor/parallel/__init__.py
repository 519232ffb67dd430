"""tapegrad.distributed.tensor.parallel: tensor parallelism (PyTorch's styles and parallelize_module)."""
from .api import parallelize_module
from .style import (ColwiseParallel, ParallelStyle, PrepareModuleInput, PrepareModuleOutput, RowwiseParallel,
                    SequenceParallel)

__all__ = ["parallelize_module", "ParallelStyle", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "PrepareModuleInput", "PrepareModuleOutput"]
