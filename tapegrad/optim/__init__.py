"""tapegrad.optim: PyTorch's optimizers and learning-rate schedulers.

Every elementwise optimizer records the update of a whole parameter group as one
op on the tape (see `_foreach.py`), so it runs inside the step's program.
"""
from . import lr_scheduler, swa_utils
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .adafactor import Adafactor
from .adaptive import Adadelta, Adagrad, RMSprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "LBFGS", "ASGD", "Rprop", "Adafactor", "lr_scheduler", "swa_utils"]
