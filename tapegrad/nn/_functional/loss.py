"""Loss functions. Each is one kernel in `_ops/nn_loss.py`; this layer checks arguments as PyTorch does."""
import math

from ... import _dtypes as D
from ..._dispatch import apply
from ..._functional import broadcast_shapes, expand
from ... import _value_checks
from ..._ops import elementwise as E, nn_loss as L
from ._util import check_float_kernel, present, refuse_grad, SCALAR_NAMES
from ..._autocast import policy
from ..._functional._arith import _check_kernel
from ..._functional._common import check_tensors, result_dtype
from ..._functional._type_queries import can_cast
from ..._inplace import refused_cast
from ..._user_frames import warn_user

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(size_average, reduce, emit_warning=True):
    """PyTorch's mapping of the deprecated size_average/reduce flags to `reduction`."""
    if emit_warning:
        warn_user("size_average and reduce args will be deprecated, please use reduction='{}' instead.".format(
            _legacy(size_average, reduce)), UserWarning)
    return _legacy(size_average, reduce)


def _legacy(size_average, reduce):
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else ("sum" if reduce else "none")


def _reduction(size_average, reduce, reduction, allowed=_REDUCTIONS):
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _broadcast(input, target, name):
    """PyTorch's broadcast_tensors of a pointwise loss's operands: the one whose shape differs is expanded
    (an ExpandBackward0 node in its graph), after _check_sizes' warning."""
    if tuple(target.shape) == tuple(input.shape):
        return input, target
    _check_sizes(input, target, name)
    shape = tuple(broadcast_shapes(input.shape, target.shape))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in (input, target))


def _check_sizes(input, target, name, strict=False):
    if tuple(target.shape) == tuple(input.shape):
        return
    if strict:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    warn_user(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
              "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same "
              "size.", UserWarning)


@policy("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    input, target = _broadcast(input, target, "mse_loss")
    _check_kernel("mse_cpu", input, target, floating_only=True)
    return apply(L.mse_loss, input, target, reduction=_reduction(size_average, reduce, reduction))


@policy("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _reduction(size_average, reduce, reduction)
    input, target = _broadcast(input, target, "l1_loss")
    return _reduced((input - target).abs(), reduction)   # as PyTorch's graph: SubBackward0, AbsBackward0, the reduction


def _reduced(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


@policy("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    input, target = _broadcast(input, target, "smooth_l1_loss")
    _check_kernel("smooth_l1_cpu", input, target, floating_only=True)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return apply(L.smooth_l1_loss, input, target, reduction=_reduction(size_average, reduce, reduction),
                 beta=float(beta))


@policy("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0):
    input, target = _broadcast(input, target, "huber_loss")
    computed = result_dtype(input, target)
    if not can_cast(computed, input.dtype):   # (its loss has input's dtype: the cast is refused first)
        raise refused_cast(computed, input.dtype, hint=". Convert the input first, e.g. input.float().")
    _check_kernel("huber_cpu", input, target, floating_only=True)
    names = SCALAR_NAMES[input.dtype.name], SCALAR_NAMES[target.dtype.name]
    mixed = None if input.dtype is target.dtype else names   # (its backward then raises: L.huber_loss)
    return apply(L.huber_loss, input, target, reduction=_reduction(None, None, reduction), delta=float(delta),
                 mixed=mixed)


def _check_class_weight(input, weight):
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")


def _check_target_values(input, target, ignore_index):
    classes = input.shape[1] if input.ndim > 1 else input.shape[0]
    _value_checks.check(target, lambda t, xp: ((t < 0) | (t >= classes)) & (t != ignore_index),
                        lambda v, at: IndexError(f"Target {v} is out of bounds."),
                        key=("class target", classes, ignore_index))


def _check_probabilities(t, name):
    _value_checks.check(t, lambda v, xp: ~((v >= 0) & (v <= 1)),
                        lambda v, at: RuntimeError(f"all elements of {name} should be between 0 and 1"))


def _check_class_target(input, target, weight):
    """PyTorch's nll_loss checks of input, class-index target and weight, in its order (nll_loss_nd, then
    the kernel it picks by the input's rank)."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1:
        if target.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if input.shape[0] != target.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                             f"({target.shape[0]}).")
    if input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.ndim}")
        if tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    elif input.ndim > 2:
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, got "
                               f"{list(target.shape)}")
    elif target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    # (PyTorch's autograd refuses a class weight that requires grad before the kernel checks it)
    refuse_grad("nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward", "weight", weight)
    _check_class_weight(input, weight)
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {SCALAR_NAMES[target.dtype.name]}. "
                           "Class-index targets must be integers: use target.long().")
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")


@policy("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    check_tensors("nll_loss_nd", (input, "input"), (target, "target"))
    _check_class_target(input, target, weight)
    _check_target_values(input, target, int(ignore_index))
    return _nll_loss_nd(input, target, weight, _reduction(size_average, reduce, reduction), int(ignore_index))


def _nll_loss_nd(input, target, weight, reduction, ignore_index):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"nll_loss_out_frame\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'. "
                                  "nll_loss takes log-probabilities: convert first, e.g. x.float().")
    # As PyTorch's nll_loss_nd: inputs of 3 or more than 4 dims are viewed as 4-d for nll_loss2d, and an
    # unreduced result viewed back to the target's shape.
    if input.ndim == 1 and target.ndim == 1:   # (a target of one class for an input without a batch dim)
        target = target.reshape(())
    if input.ndim in (1, 2, 4):
        return apply(L.nll_loss, input, target, *present(weight), reduction=reduction, ignore_index=ignore_index)
    n, c = input.shape[0], input.shape[1]
    out = apply(L.nll_loss, input.contiguous().view(n, c, 1, -1), target.contiguous().view(n, 1, -1),
                *present(weight), reduction=reduction, ignore_index=ignore_index)
    return out.view(tuple(target.shape)) if reduction == "none" else out


@policy("cross_entropy")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    check_tensors("cross_entropy_loss", (input, "input"), (target, "target"))
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(target.shape) == tuple(input.shape):   # (PyTorch reads same-shaped targets as class probabilities)
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{SCALAR_NAMES[target.dtype.name]}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        if input.ndim == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
        return _cross_entropy_probs(input, target, weight, reduction, float(label_smoothing))
    _check_class_target(input, target, weight)
    _check_target_values(input, target, int(ignore_index))
    from .activation import log_softmax
    class_dim = 1 if input.ndim > 1 else 0
    logp = log_softmax(input, class_dim)   # as PyTorch: nll_loss of log_softmax
    nll = _nll_loss_nd(logp, target, weight, reduction, int(ignore_index))
    if label_smoothing == 0:
        return nll
    return _label_smoothing(logp, nll, target, weight, reduction, int(ignore_index), float(label_smoothing))


def _label_smoothing(logp, nll, target, weight, reduction, ignore_index, label_smoothing):
    """PyTorch's cross_entropy_loss_label_smoothing, op for op: the negated sum of log-probabilities over
    the classes (weighted), zero at ignored targets, reduced, and mixed with nll_loss."""
    class_dim = 1 if logp.ndim > 1 else 0
    n_classes = logp.shape[class_dim]
    if weight is not None:
        shape = [1] * logp.ndim
        shape[class_dim] = weight.shape[0]
        smooth = -(logp * weight.view(*shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    ignored = target == ignore_index
    smooth.masked_fill_(ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            # the weights of the counted targets; PyTorch gathers them with masked_select (a host sync), the
            # same sum as its branch for tensor subclasses used here: gather everywhere, zero the ignored
            picked = weight.gather(0, target.masked_fill(ignored, 0).flatten()).view(tuple(target.shape))
            smooth = smooth.sum() / picked.masked_fill(ignored, 0).sum()
        else:
            smooth = smooth.sum() / (~ignored).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return apply(E.mul_scalar, nll, 1 - label_smoothing) + apply(E.mul_scalar, smooth, label_smoothing / n_classes)


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    """Class-probability targets as PyTorch's composite: -(log_softmax(input) * target [* weight]) summed
    over the classes, the mean divided by the number of rows (DivBackward1)."""
    from .activation import log_softmax
    class_dim = 1 if input.ndim > 1 else 0
    n_classes = input.shape[class_dim]
    if label_smoothing > 0:
        target = apply(E.add_scalar, apply(E.mul_scalar, target, 1 - label_smoothing), label_smoothing / n_classes)
    terms = log_softmax(input, class_dim) * target
    if weight is not None:
        terms = terms * (weight.view((1, -1) + (1,) * (input.ndim - 2)) if input.ndim > 1 else weight)
    if reduction == "none":
        return -terms.sum(class_dim)
    if reduction == "mean" and not input.numel():   # (PyTorch fills the empty sum with NaN)
        return -terms.sum().fill_(float("nan"))
    total = -terms.sum()
    return apply(E.div_scalar, total, input.numel() // n_classes) if reduction == "mean" else total


@policy("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    _check_sizes(input, target, "binary_cross_entropy", strict=True)
    refuse_grad("binary_cross_entropy", "weight", weight)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {SCALAR_NAMES[target.dtype.name]} but expected "
                           f"{SCALAR_NAMES[input.dtype.name]}. Convert the target first, e.g. "
                           "target.to(input.dtype).")
    check_float_kernel(input, "binary_cross_entropy", complex=False)   # (before the values are checked)
    _check_probabilities(input, "input")
    _check_probabilities(target, "target")
    return apply(L.binary_cross_entropy, input, target, *present(weight),
                 reduction=_reduction(size_average, reduce, reduction))


@policy("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _bce_with_logits(input, target, weight, pos_weight, _reduction(size_average, reduce, reduction))


def _check_bce_with_logits_dtypes(input, target):
    """PyTorch's composite takes log_sigmoid(input) (no integer kernel), then writes into 1 - target in place
    (no bool subtraction; an integer one cannot hold the loss)."""
    if not input.dtype.is_floating_point:   # (nor a complex one)
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'. "
                                  "Convert the input (the logits) to a real floating dtype first, e.g. x.float().")
    if target.dtype is D.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead. Convert the target first, e.g. target.float().")
    if not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise refused_cast(result_dtype(input, target), target.dtype,
                           hint=". Convert the target first, e.g. target.float().")


def _bce_with_logits(input, target, weight, pos_weight, reduction):
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        refuse_grad("binary_cross_entropy_with_logits", name, t)
    _check_bce_with_logits_dtypes(input, target)
    return apply(L.binary_cross_entropy_with_logits, input, target, *present(weight, pos_weight),
                 reduction=reduction, has_weight=weight is not None,
                 has_pos_weight=pos_weight is not None)


@policy("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    check_tensors("kl_div", (input, "input"), (target, "target"))
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported. Compare the distributions of real values.")
    if not (input.dtype.is_floating_point and target.dtype.is_floating_point):
        raise RuntimeError("kl_div: Integral inputs not supported. Convert the input and target to a floating dtype "
                           "first, e.g. x.float().")
    reduction = _reduction(size_average, reduce, reduction, _REDUCTIONS + ("batchmean",))
    if reduction == "mean":
        warn_user("reduction: 'mean' divides the total loss by both the batch size and the support size."
                  "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                  "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                  UserWarning)
    return _kl_div(input, target, reduction, log_target)


def _kl_div(input, target, reduction, log_target):
    # PyTorch's pointwise formula, then its reduction (batchmean: the sum over the batch size), as ops
    pointwise = target.exp() * (target - input) if log_target else target.xlogy(target) - target * input
    if reduction == "batchmean":
        return _reduced(pointwise, "sum") / input.shape[0] if input.ndim else _reduced(pointwise, "sum")
    return _reduced(pointwise, reduction)


@policy("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    check_tensors("cosine_embedding_loss", (input1, "input1"), (input2, "input2"), (target, "target"))
    if input1.ndim != input2.ndim or tuple(input1.shape) != tuple(input2.shape):
        raise RuntimeError(f"cosine_embedding_loss: Input1 and Input2 must have the same shape, got "
                           f"{list(input1.shape)} and {list(input2.shape)}")
    reduction = _reduction(size_average, reduce, reduction)
    # PyTorch's composite, op for op: the cosine of each pair, then 1 - cos or max(cos - margin, 0) by target
    from ..._creation import zeros_like
    from ..._functional import where
    dim = target.ndim
    squares = [apply(E.add_scalar, (x * x).sum(dim), 1e-12) for x in (input1, input2)]
    cos = (input1 * input2).sum(dim) / (squares[0] * squares[1]).sqrt()
    zeros = zeros_like(cos)
    pos = apply(E.sub, 1, cos)
    neg = apply(E.sub_scalar, cos, float(margin)).clamp_min(0)
    return _reduced(where(target == 1, pos, zeros) + where(target == -1, neg, zeros), reduction)


# torch.kl_div, torch.poisson_nll_loss...: ATen's functions, whose reduction is at::Reduction's integer (1 mean,
# 2 sum, any other none); no batchmean, no deprecated size_average/reduce. Called without one they do not reduce
# (PyTorch's Python binding cannot parse the schema's default, Mean).
def _reduction_enum(reduction, name, position):
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise TypeError(f"{name}(): argument 'reduction' (position {position}) must be int, not "
                        f"{type(reduction).__name__}. Pass 0 (none), 1 (mean) or 2 (sum).")
    return _REDUCTIONS[reduction] if reduction in (1, 2) else "none"


def aten_kl_div(input, target, reduction=0, log_target=False):
    return _kl_div(input, target, _reduction_enum(reduction, "kl_div", 3), log_target)


def aten_binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    # ATen's function broadcasts input and target (nn.functional's checks their sizes first)
    return _bce_with_logits(input, target, weight, pos_weight,
                            _reduction_enum(reduction, "binary_cross_entropy_with_logits", 5))


def aten_cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return cosine_embedding_loss(input1, input2, target, margin,
                                 reduction=_reduction_enum(reduction, "cosine_embedding_loss", 5))


# ATen's composites, op for op (PyTorch's nn.functional versions call these)
def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    from ..._creation import full_like, zeros_like
    from ..._functional import where
    reduction = _reduction_enum(reduction, "hinge_embedding_loss", 4)
    zeros = zeros_like(input)
    # ATen's margin - self fills a new tensor with the margin and subtracts (SubBackward0)
    margin_clamp = (full_like(input, float(margin)) - input).clamp_min(0)
    return _reduced(where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    reduction = _reduction_enum(reduction, "margin_ranking_loss", 5)
    # ATen adds the margin as a Scalar (AddBackward1)
    return _reduced(apply(E.add_scalar, -target * (input1 - input2), float(margin)).clamp_min(0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction=0):
    from ..._functional import minimum
    from .distance import pairwise_distance
    reduction = _reduction_enum(reduction, "triplet_margin_loss", 8)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    dist_pos = pairwise_distance(anchor, positive, p, eps)
    dist_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, pairwise_distance(positive, negative, p, eps))
    return _reduced((apply(E.add_scalar, dist_pos, float(margin)) - dist_neg).clamp_min(0), reduction)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    reduction = _reduction_enum(reduction, "poisson_nll_loss", 6)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * apply(E.add_scalar, input, float(eps)).log()
    if full:
        # (ATen's Tensor * double: mul.Scalar, MulBackward1)
        half_log = apply(E.mul_scalar, apply(E.mul_scalar, target, 2 * math.pi).log(), 0.5)
        stirling = target * target.log() - target + half_log
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduced(loss, reduction)
