"""Loss kernels. `reduction` is a static: 'none', 'mean' or 'sum' (kl_div adds 'batchmean').

Class-index targets are integer inputs (never differentiable); optional class weights
are trailing inputs flagged by statics.
"""
import jax.numpy as jnp

from ._registry import defop, missing_kernel, overload, KEEP


def _loss(name, fn, **meta):
    meta.setdefault("dtype_rule", KEEP)
    return defop(name, fn, **meta)


def _reduce(loss, reduction):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


def _smooth_l1(x, y, reduction, beta):
    d = jnp.abs(x - y)
    if beta == 0:
        return _reduce(d, reduction)
    small = _inside(d, beta)
    return _reduce(jnp.where(d < beta, 0.5 * small * small / beta, d - 0.5 * beta), reduction)


def _huber(x, y, reduction, delta, mixed=None):
    d = jnp.abs(x - y)
    small = _inside(d, delta)
    # (computed in the promoted dtype, written into a loss of input's dtype, as PyTorch's kernel)
    loss = jnp.where(d < delta, 0.5 * small * small, delta * (d - 0.5 * delta)).astype(x.dtype)
    return _reduce(loss, reduction)


def _huber_mixed_derivative(mixed=None, **_):
    """PyTorch's huber_loss backward of an input and target of two dtypes gives each the other's dtype,
    which its engine refuses (mixed: their dtypes' names)."""
    if mixed is None:
        return None
    return {0: (RuntimeError, f"Found dtype {mixed[1]} but expected {mixed[0]}. Convert the target to the "
                              "input's dtype first, e.g. target.to(input.dtype)."),
            1: (RuntimeError, f"Found dtype {mixed[0]} but expected {mixed[1]}. Convert the target to the "
                              "input's dtype first, e.g. target.to(input.dtype).")}


def _inside(d, bound):
    # d inside the quadratic piece (or NaN), 0 outside: an infinite d then sends no inf * 0 = NaN through
    # the piece where() discards (PyTorch's gradient there is the linear piece's); NaN keeps a NaN gradient
    return jnp.where((d < bound) | jnp.isnan(d), d, jnp.zeros((), d.dtype))


# (backward_name: the node of PyTorch's x_backward kernel, which gradients recorded with create_graph print)
mse_loss = _loss("mse_loss", lambda x, y, reduction: _reduce(jnp.square(x - y), reduction),
                 backward_name="MseLossBackwardBackward0")
mse_loss.recorded_saves = (0, 1)   # (mse_loss_backward's node saves both)
smooth_l1_loss = _loss("smooth_l1_loss", _smooth_l1, backward_name="SmoothL1LossBackwardBackward0")
huber_loss = _loss("huber_loss", _huber, no_derivative=_huber_mixed_derivative,
                   backward_name="HuberLossBackwardBackward0")


# ---- class-index losses: input (N, C, d1...) or (C,), target (N, d1...) or () --------------------

def _gather_class(logp, target):
    # The targets are in [0, C): the caller checked them (PyTorch's "Target ... is out of bounds") and put 0
    # at ignored ones. So no wrapping of negative indices (an out-of-range one, reaching here only in a
    # program whose check fails, reads a clamped index, as XLA's gather does).
    axis = 1 if logp.ndim > 1 else 0
    picked = jnp.take_along_axis(logp, jnp.expand_dims(target, axis), axis=axis, mode="promise_in_bounds")
    return jnp.squeeze(picked, axis)


def _nll(logp, target, weight, reduction, ignore_index):
    valid = target != ignore_index
    safe = jnp.where(valid, target, 0)
    if weight is None:
        w = valid.astype(logp.dtype)
    else:
        w = jnp.where(valid, weight.at[safe].get(mode="promise_in_bounds"), 0).astype(logp.dtype)
    loss = -_gather_class(logp, safe) * w
    if reduction == "mean":
        return jnp.sum(loss) / jnp.sum(jnp.broadcast_to(w, loss.shape))
    return jnp.sum(loss) if reduction == "sum" else loss


def _nll_loss(logp, target, *weight, reduction, ignore_index):
    return _nll(logp, target, weight[0] if weight else None, reduction, ignore_index)


# A 4-d input is PyTorch's nll_loss2d (other ranks above 2 are viewed as 4-d first). Its backward is a kernel
# that takes the input (NllLossBackwardBackward0 under create_graph).
nll_loss = _loss("nll_loss", _nll_loss, diff=(0,), saves_inputs=(0, 1, 2), fused_backward=True, backward_name=True,
                 overloads=[overload("NllLoss2DBackward0", "4")])


# ---- binary and divergence losses ---------------------------------------------------------------

def _bce(x, y, *weight, reduction):
    # PyTorch clamps each log at -100 so that a confident mistake stays finite.
    loss = -(y * jnp.maximum(jnp.log(x), -100) + (1 - y) * jnp.maximum(jnp.log1p(-x), -100))
    if weight:   # (PyTorch's loss.mul_(weight): the loss keeps its dtype)
        loss = (loss * weight[0]).astype(x.dtype)
    return _reduce(loss, reduction)


def _bce_with_logits(x, y, *extra, reduction, has_weight, has_pos_weight):
    extra = list(extra)
    weight = extra.pop(0) if has_weight else None
    # log(1 + exp(-x)), stable; logaddexp's derivative is -sigmoid(-x) at x == 0 too, where the
    # |x| + max(-x, 0) form's kinks add up to the wrong slope
    softplus_neg = jnp.logaddexp(-x, jnp.zeros((), x.dtype))
    if has_pos_weight:
        log_weight = 1 + (extra.pop(0) - 1) * y
        softplus_neg = (log_weight * softplus_neg).astype(x.dtype)
    # PyTorch's (1 - target).mul_(input).sub_(log_sigmoid(input)).mul_(weight): in place on 1 - target, so
    # the loss has target's dtype, each step rounded to it
    loss = ((1 - y) * x).astype(y.dtype)
    loss = (loss + softplus_neg).astype(y.dtype)
    if weight is not None:
        loss = (loss * weight).astype(y.dtype)
    return _reduce(loss, reduction)


binary_cross_entropy = _loss("binary_cross_entropy", _bce, diff=(0, 1))
# weight and pos_weight are not differentiable in PyTorch (nor inputs of its node).
binary_cross_entropy_with_logits = _loss("binary_cross_entropy_with_logits", _bce_with_logits, diff=(0, 1))
binary_cross_entropy_with_logits.recorded_saves = ()   # (its formulas reach input and target through sigmoid and sums)

# PyTorch's CPU kernels without a complex version (Op.no_kernel_for)
for _op, _kernel in ((mse_loss, "mse_cpu"), (smooth_l1_loss, "smooth_l1_cpu"), (huber_loss, "huber_cpu")):
    _op.no_kernel_for = {"complex": missing_kernel(_kernel)}
