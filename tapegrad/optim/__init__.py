"""tapegrad.optim: PyTorch's optimizers and learning-rate schedulers.

Every elementwise optimizer updates a whole parameter group in one jitted call
(see `_foreach.py`); `Optimizer.step_cache_info()` counts those calls and traces.
"""
from . import lr_scheduler
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "lr_scheduler"]
