"""ASGD: averaged stochastic gradient descent (PyTorch's single-tensor formula).

PyTorch computes the next step size `eta` and averaging weight `mu` in Python doubles from the step count
and stores them in 0-dim tensors of the scalar dtype; here they are float64 inside the update, cast the
same way.
"""
import jax.numpy as jnp

from ._foreach import scalar
from ._foreach_optimizer import _ForeachOptimizer, scalar_state, zeros_state
from ._hyperparameter_checks import check_lr, check_nonnegative


class ASGD(_ForeachOptimizer):
    """Averaged SGD: the parameter follows SGD with a decaying step size; `ax` keeps its running average."""

    _capturable_operands = ("params, mus, etas, and state_steps",) * 2

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonnegative("weight_decay value", weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        return {"step": scalar_state(p, 0.0), "eta": scalar_state(p, float(group["lr"])),
                "mu": scalar_state(p, 1.0), "ax": zeros_state(p)}

    def _state_keys(self, group):
        return ("step", "eta", "mu", "ax")

    def _hyper(self, group):
        return dict(lr=group["lr"], lambd=group["lambd"], alpha=group["alpha"], t0=group["t0"],
                    weight_decay=group["weight_decay"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0)

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay):
        if maximize:
            g = -g
        step = s["step"] + 1
        if weight_decay:
            g = g + scalar(h["weight_decay"], p) * p
        eta = s["eta"].astype(jnp.float64)
        p = p * scalar(1 - h["lambd"] * eta, p)   # the decay term
        p = p + scalar(-eta, p) * g
        mu = s["mu"]
        ax = jnp.where(mu == 1, p, s["ax"] + (p - s["ax"]) * mu.astype(p.dtype))   # (a copy while mu is 1)
        count = step.astype(jnp.float64)
        new_eta = h["lr"] / (1 + h["lambd"] * h["lr"] * count) ** h["alpha"]
        new_mu = 1 / jnp.maximum(1.0, count - h["t0"])
        return p, {"step": step, "eta": new_eta.astype(s["eta"].dtype), "mu": new_mu.astype(mu.dtype), "ax": ax}
