"""Margin loss kernels PyTorch computes as one ATen op with its own backward node: soft_margin_loss,
multilabel_margin_loss, multi_margin_loss. `reduction` is a static: 'none', 'mean' or 'sum'.

Class-index targets are integer inputs (never differentiable); multi_margin_loss's class weights are a
trailing input flagged by a static (not differentiable in PyTorch either).
"""
import jax.numpy as jnp

from ._registry import defop, KEEP
from .nn_loss import _reduce


def _positive(z):
    # PyTorch's backward counts a margin term only where it is strictly positive (where() keeps 0 at 0)
    return jnp.where(z > 0, z, jnp.zeros((), z.dtype))


def _soft_margin(x, y, reduction):
    # log(1 + exp(-y x)) as PyTorch writes it (no rescaling: its overflow to inf is PyTorch's too)
    return _reduce(jnp.log1p(jnp.exp(-y.astype(x.dtype) * x)), reduction)


def _multilabel_margin(x, target, reduction):
    """Input (N, C) or (C,), target of the same shape: each row lists its classes until the first -1.
    Each listed class j and each unlisted class i add max(0, 1 - x[j] + x[i]) / C."""
    rows, t = jnp.atleast_2d(x), jnp.atleast_2d(target)
    classes = rows.shape[-1]
    listed = jnp.cumprod(t != -1, axis=-1).astype(bool)                     # (N, C): slots before the first -1
    safe = jnp.where(listed, t, 0)
    is_target = jnp.any(listed[:, :, None] & (safe[:, :, None] == jnp.arange(classes)), axis=1)   # (N, C)
    picked = jnp.take_along_axis(rows, safe, axis=1)                        # x[target_j]
    z = _positive(1 - picked[:, :, None] + rows[:, None, :])                # (N, slot j, class i)
    z = jnp.where(listed[:, :, None] & ~is_target[:, None, :], z, jnp.zeros((), z.dtype))
    loss = jnp.sum(z, axis=(1, 2)) / classes
    if reduction == "none":
        return loss if x.ndim == 2 else loss[0]
    return _reduce(loss, reduction)


def _multi_margin(x, target, *weight, reduction, p, margin, batched):
    """Input (N, C) or (C,), target (N,) or (): each class i other than the target y adds
    w[y] * max(0, margin - x[y] + x[i]) ** p / C."""
    rows = jnp.reshape(x, (-1, x.shape[-1] if x.ndim else 1))
    t = jnp.reshape(target, (-1,))
    classes = rows.shape[-1]
    picked = jnp.take_along_axis(rows, t[:, None], axis=1)
    z = _positive(margin - picked + rows)
    if p == 2:
        z = z * z
    if weight:
        z = z * jnp.take(weight[0], t)[:, None]
    z = jnp.where(jnp.arange(classes) == t[:, None], jnp.zeros((), z.dtype), z)
    loss = jnp.sum(z, axis=1) / classes
    if reduction == "none":
        return loss if batched else loss[0]
    return _reduce(loss, reduction)


soft_margin_loss = defop("soft_margin_loss", _soft_margin, dtype_rule=KEEP, diff=(0,), saves_inputs=(0, 1))
# (their backward kernels have no derivative in PyTorch)
multilabel_margin_loss = defop("multilabel_margin_loss", _multilabel_margin, dtype_rule=KEEP, diff=(0,),
                               saves_inputs=(0, 1), backward_name="torch::autograd::NotImplemented",
                               no_double_backward=(RuntimeError, "derivative for aten::multilabel_margin_loss_backward "
                                                                 "is not implemented"))
multi_margin_loss = defop("multi_margin_loss", _multi_margin, dtype_rule=KEEP, diff=(0,), saves_inputs=(0, 1, 2),
                          backward_name="torch::autograd::NotImplemented", no_double_backward=(
                              RuntimeError, "derivative for aten::multi_margin_loss_backward is not implemented"))
