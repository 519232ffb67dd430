"""CTC loss: PyTorch's argument parsing and checks, one kernel (`_ops/nn_ctc.py`), then the ops PyTorch's
ctc_loss composes around its _ctc_loss (zero_infinity's where, the mean over target lengths, the reductions).

The lengths are read on the host, as PyTorch's kernel reads them (`.to(kCPU)`): its checks name their
values, and a concatenated target's longest length sizes the kernel. In a traced function that is a graph
break, as for any value Python needs.
"""

import numpy as np

from ..._argument_errors import _overloads, _parser_order, invalid_combination
from ..._arg_types import int_lists
from ..._dispatch import apply
from ..._ops import nn_ctc as K
from ._util import SCALAR_NAMES
from .loss import _reduction
from ..._user_frames import warn_user

# torch.ctc_loss's overloads as PyTorch's parser lists them (the int-list form first): which one the call fits
# decides how the lengths are read
_OVERLOADS = _overloads("function", "ctc_loss")[0]
_NAMES = ("log_probs", "targets", "input_lengths", "target_lengths", "blank", "reduction", "zero_infinity")
_ENUM = {"none": 0, "mean": 1, "sum": 2}
_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss, as torch.nn.functional.ctc_loss."""
    if reduction == "elementwise_mean":   # (PyTorch's _Reduction.get_enum still takes it)
        warn_user("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                  UserWarning)
        reduction = "mean"
    enum = _ENUM[_reduction(None, None, reduction)]
    # PyTorch's Python function passes everything to torch.ctc_loss positionally
    return aten_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, enum, zero_infinity)


def aten_ctc_loss(*args, **kwargs):
    """torch.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
    zero_infinity=False): reduction is at::Reduction's integer (1 mean, 2 sum, any other none); called without
    one it does not reduce, as PyTorch's binding (which cannot parse the schema's default, Mean)."""
    overload = next((o for o in _OVERLOADS if o.fits(args, kwargs, "ctc_loss")), None)
    if overload is None:
        raise TypeError(invalid_combination("ctc_loss", _OVERLOADS, args, _parser_order(kwargs)))
    given = {**dict(zip(_NAMES, args)), **kwargs}
    log_probs, targets, input_lengths, target_lengths = (given[n] for n in _NAMES[:4])
    blank, reduction = given.get("blank", 0), given.get("reduction", 0)
    zero_infinity = given.get("zero_infinity", False)
    if overload is _OVERLOADS[0]:
        input_lengths, target_lengths = int_lists("ctc_loss", [("input_lengths", input_lengths, 3),
                                                               ("target_lengths", target_lengths, 4)])
    else:
        input_lengths, target_lengths = _host_lengths(input_lengths, "input_lengths"), \
            _host_lengths(target_lengths, "target_lengths")
    return _ctc_loss(log_probs, targets, np.asarray(input_lengths, np.int64).reshape(-1),
                     np.asarray(target_lengths, np.int64).reshape(-1), int(blank), int(reduction),
                     bool(zero_infinity))


def _host_lengths(t, name):
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype.name == "bool":
        raise RuntimeError(f"{name} must be integral")
    return np.asarray(t._value)


def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if targets.dtype.name != "int64":
        targets = targets.long()
    _check(lp, targets, input_lengths, target_lengths, blank)
    width = targets.shape[1] if targets.ndim == 2 else int(target_lengths.max())
    from ..._creation import tensor
    lengths = [tensor(v, device=lp.device) for v in (input_lengths, target_lengths)]
    res = apply(K.ctc_loss, lp, targets, *lengths, blank=blank, zero_infinity=zero_infinity, width=width)
    # as PyTorch's ctc_loss: where, division, mean or sum, squeeze, each its own node
    if zero_infinity:
        from ..._creation import zeros
        from ..._functional import where
        res = where(res == float("inf"), zeros((), dtype=res.dtype, device=res.device), res)
    if reduction == 1:
        return (res / tensor(target_lengths.tolist(), dtype=res.dtype, device=res.device).clamp_min(1)).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)


def _check(lp, targets, input_lengths, target_lengths, blank):
    """PyTorch's checks (its CPU kernel's dispatch, then ctc_loss_allocate_outputs), in its order."""
    if lp.dtype.name not in ("float32", "float64"):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{SCALAR_NAMES[lp.dtype.name]}'")
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if lp.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.ndim}-dimensional tensor for argument #1 "
                           f"'log_probs'{_CHECKING}")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                           f"'targets'{_CHECKING}")
    steps, batch, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.size != batch:
            raise RuntimeError(f"{name} must be of size batch_size")
    _at_least_zero("target_lengths", target_lengths)
    if targets.ndim == 1:
        _size(targets, 0, int(target_lengths.sum()))
    else:
        _size(targets, 0, batch)
        longest = int(target_lengths.max())
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets'{_CHECKING}")
    for value in input_lengths.tolist():
        _at_least_zero("input_lengths", [value])
        if value > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {value}"
                               f"{_CHECKING}")


def _at_least_zero(name, values):
    for value in values:
        if value < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {int(value)}{_CHECKING}")


def _size(t, dim, size):
    if t.shape[dim] != size:
        raise RuntimeError(f"Expected tensor to have size {size} at dimension {dim}, but got size {t.shape[dim]} "
                           f"for argument #2 'targets'{_CHECKING}")

