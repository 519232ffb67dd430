"""LRScheduler, the base of every learning-rate scheduler, and the helpers its subclasses share: apart
from lr_scheduler.py so that the combining schedulers (`_composite_schedulers`), which lr_scheduler
re-exports, build on it without importing lr_scheduler."""
import weakref
from functools import wraps

from .._tensor import Tensor
from .optimizer import Optimizer
from .._user_frames import warn_user

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please use "
    "`scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the closed "
    "form is used instead of the new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


def _format_param(name, optimizer, param):
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(param)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [p.clone() if isinstance(p, Tensor) else p for p in param]


def _group_values(optimizer, key):
    return [g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups]


def _set_group_value(group, key, value):
    if isinstance(group[key], Tensor):
        group[key].fill_(value)
    else:
        group[key] = value


class LRScheduler:
    """Base class: `step()` advances last_epoch and writes get_lr() into the optimizer's groups."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                initial_lr = group["lr"]
                group.setdefault("initial_lr", initial_lr.clone() if isinstance(initial_lr, Tensor) else initial_lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0. Load the optimizer's state_dict first, or use "
                                   "last_epoch=-1 for a fresh run.")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_step(self.optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def step(self, epoch=None):
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warn_user("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                          "initialization. Please, make sure to call `optimizer.step()` before "
                          "`lr_scheduler.step()`.", UserWarning)
            elif not getattr(self.optimizer, "_opt_called", False):
                warn_user("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
                          "and later, you should call them in the opposite order: `optimizer.step()` before "
                          "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
                          "value of the learning rate schedule.", UserWarning)
        self._step_count += 1
        if epoch is not None:
            warn_user(EPOCH_DEPRECATION_WARNING, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")

    def _lrs(self):
        return _group_values(self.optimizer, "lr")

    def _warn_outside_step(self):
        if not self._get_lr_called_within_step:
            warn_user("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                      UserWarning)


_LRScheduler = LRScheduler


def _track_optimizer_step(opt):
    # Mark the optimizer when its step() runs, for the "scheduler stepped before optimizer" warning.
    if hasattr(opt.step, "_wrapped_by_lr_sched"):
        return
    func = opt.step.__func__
    opt_ref = weakref.ref(opt)

    @wraps(func)
    def wrapper(*args, **kwargs):
        o = opt_ref()
        o._opt_called = True
        return func.__get__(o, o.__class__)(*args, **kwargs)
    wrapper._wrapped_by_lr_sched = True
    opt.step = wrapper
