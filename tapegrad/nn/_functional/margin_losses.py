"""nn.functional's margin, ranking, triplet and likelihood losses, as PyTorch's functional writes them: ATen's
composites (loss.py's hinge_embedding_loss, margin_ranking_loss, triplet_margin_loss, poisson_nll_loss),
ATen's kernels (`_ops/nn_margin_loss.py`) or Python compositions of ops."""
import math

from ... import _value_checks
from ..._dispatch import apply
from ..._functional import broadcast_shapes, minimum
from ... import _dtypes as D
from ..._functional._common import check_tensors, result_dtype
from ..._functional._unary import BOOL_NEGATION
from ..._inplace import refused_cast
from ..._ops import nn_margin_loss as M
from ..._tensor import Tensor
from . import loss as L
from .activation import logsigmoid
from ._util import present, refuse_grad, SCALAR_NAMES

# ATen's reduction enum, which the composites take (PyTorch's _Reduction.get_enum / legacy_get_enum)
_ENUM = {"none": 0, "mean": 1, "sum": 2}


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    reduction = _ENUM[L._reduction(size_average, reduce, reduction)]
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return L.margin_ranking_loss(input1, input2, target, margin, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    return L.hinge_embedding_loss(input, target, margin, _ENUM[L._reduction(size_average, reduce, reduction)])


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    check_tensors("triplet_margin_loss", (anchor, "anchor"), (positive, "positive"), (negative, "negative"))
    reduction = _ENUM[L._reduction(size_average, reduce, reduction)]
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return L.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    reduction = _ENUM[L._reduction(size_average, reduce, reduction)]
    return L.poisson_nll_loss(input, target, log_input, full, eps, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    if distance_function is None:
        from .distance import pairwise_distance as distance_function
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance_function(positive, negative))
    return L._reduced((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = L._reduction(size_average, reduce, reduction)
    refuse_grad("soft_margin_loss", "target", target)
    shape = tuple(broadcast_shapes(input.shape, target.shape))
    if reduction == "none" and shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    if input.dtype is D.bool_:   # (PyTorch's formula negates the input first)
        raise RuntimeError(BOOL_NEGATION)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):   # (PyTorch's loss takes input's dtype)
        computed = result_dtype(input, target)
        computed = computed if computed.is_floating_point or computed.is_complex else D.get_default_dtype()
        raise refused_cast(computed, input.dtype, hint=". Convert the input first, e.g. input.float().")
    return apply(M.soft_margin_loss, input, target, reduction=reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = L._reduction(size_average, reduce, "mean")   # the flags decide (with their warning)
    # PyTorch's composite, op for op
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in L._REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    return L._reduced(loss, reduction)


def _check_class_input(input, target, kernel):
    if not (input.ndim <= 1 or input.ndim == 2 and input.shape[1] != 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if target.dtype.name != "int64":
        raise RuntimeError(f"expected scalar type Long but found {SCALAR_NAMES[target.dtype.name]}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = L._reduction(size_average, reduce, reduction)
    _check_class_input(input, target, "multilabel_margin_loss_forward_out_frame")
    if tuple(target.shape) != tuple(input.shape) and not (input.ndim == 0 and target.numel() == 1):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    classes = input.shape[-1] if input.ndim else 1
    _value_checks.check(target, lambda t, xp: (t < -1) | (t >= classes),
                        lambda v, at: RuntimeError("argument #2 'target' is out of range"),
                        key=("multilabel target", classes))
    if input.ndim == 0:
        input = input.reshape(tuple(target.shape))   # a 0-dim input is one class, as its target
    return apply(M.multilabel_margin_loss, input, target, reduction=reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    reduction = L._reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_class_input(input, target, "multi_margin_loss_cpu_kernel")
    rows = input.shape[0] if input.ndim == 2 else 1
    classes = input.shape[-1] if input.ndim else 1
    if target.ndim > 1 or target.numel() != rows:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{rows}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None:
        if weight.numel() != classes:
            raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {SCALAR_NAMES[input.dtype.name]} but found "
                               f"{SCALAR_NAMES[weight.dtype.name]}")
        refuse_grad("multi_margin_loss", "weight", weight)
    _value_checks.check(target, lambda t, xp: (t < 0) | (t >= classes),
                        lambda v, at: RuntimeError("target out of range"), key=("class target", classes, None))
    return apply(M.multi_margin_loss, input, target, *present(weight), reduction=reduction, p=int(p),
                 margin=float(margin), batched=target.ndim > 0)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    from ..._creation import ones_like
    from ..._functional import any as any_
    from ..._grad_mode import no_grad
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif not isinstance(var, Tensor):
        raise TypeError(f"gaussian_nll_loss(): var must be a Tensor or a float, not {type(var).__name__}")
    elif any_(var < 0):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)   # one variance per row of the last dimension (homoscedastic)
        elif not (input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in L._REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    # clamped outside the graph: the gradient to var is that of the unclamped variance, as in PyTorch
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return L._reduced(loss, reduction)
