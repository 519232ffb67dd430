"""The Adam family: Adam, AdamW, Adamax, NAdam, RAdam (PyTorch's single-tensor formulas).

Bias corrections are computed from the `step` counter in float64, as PyTorch
computes them in Python doubles; they are applied in the parameter's dtype.
"""
import jax.numpy as jnp

from ._foreach import lerp, scalar
from ._foreach_optimizer import _ForeachOptimizer, scalar_state, zeros_state
from ._hyperparameter_checks import check_betas, check_lr, check_nonnegative


def _decay(p, g, h, decoupled):
    """Weight decay: L2 (added to the gradient) or decoupled (AdamW: the parameter shrinks)."""
    if decoupled:
        return p * scalar(1 - h["lr"] * h["weight_decay"], p), g
    return p, g + scalar(h["weight_decay"], p) * p


class _AdamBase(_ForeachOptimizer):
    _keys = ("step", "exp_avg", "exp_avg_sq")

    def _init_state(self, group, p):
        return {"step": scalar_state(p, 0.0), "exp_avg": zeros_state(p), "exp_avg_sq": zeros_state(p)}

    def _state_keys(self, group):
        return self._keys

    def _hyper(self, group):
        beta1, beta2 = group["betas"]
        return dict(lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0,
                    decoupled=bool(group.get("decoupled_weight_decay", False)))

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in self._setstate_defaults:
                group.setdefault(key, default)

    _setstate_defaults = (("maximize", False), ("foreach", None), ("capturable", False), ("differentiable", False))


class Adam(_AdamBase):
    """Adam (and AMSGrad); `decoupled_weight_decay=True` makes it AdamW."""

    _setstate_defaults = _AdamBase._setstate_defaults + (("amsgrad", False), ("decoupled_weight_decay", False),
                                                         ("fused", None))

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_lr(lr)
        check_nonnegative("epsilon value", eps)
        check_betas(betas)
        check_nonnegative("weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        state = super()._init_state(group, p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_state(p)
        return state

    def _state_keys(self, group):
        return self._keys + (("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _static(self, group):
        return dict(super()._static(group), amsgrad=bool(group["amsgrad"]))

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, decoupled, amsgrad):
        if maximize:
            g = -g
        step = s["step"] + 1
        if weight_decay:
            p, g = _decay(p, g, h, decoupled)
        exp_avg = lerp(s["exp_avg"], g, 1 - h["beta1"])
        exp_avg_sq = s["exp_avg_sq"] * scalar(h["beta2"], p) + scalar(1 - h["beta2"], p) * g * g
        t = step.astype(jnp.float64)
        step_size = h["lr"] / (1 - h["beta1"] ** t)
        bias_correction2_sqrt = (1 - h["beta2"] ** t) ** 0.5
        new = {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
        second = exp_avg_sq
        if amsgrad:
            second = new["max_exp_avg_sq"] = jnp.maximum(s["max_exp_avg_sq"], exp_avg_sq)
        denom = jnp.sqrt(second) / scalar(bias_correction2_sqrt, p) + scalar(h["eps"], p)
        return p + scalar(-step_size, p) * exp_avg / denom, new


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


class Adamax(_AdamBase):
    """Adamax: Adam with the infinity norm."""

    _keys = ("step", "exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        check_nonnegative("epsilon value", eps)
        check_betas(betas)
        check_nonnegative("weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        return {"step": scalar_state(p, 0.0), "exp_avg": zeros_state(p), "exp_inf": zeros_state(p)}

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, decoupled):
        if maximize:
            g = -g
        step = s["step"] + 1
        if weight_decay:
            p, g = _decay(p, g, h, False)
        exp_avg = lerp(s["exp_avg"], g, 1 - h["beta1"])
        exp_inf = jnp.maximum(s["exp_inf"] * scalar(h["beta2"], p), jnp.abs(g) + scalar(h["eps"], p))
        clr = h["lr"] / (1 - h["beta1"] ** step.astype(jnp.float64))
        return p + scalar(-clr, p) * exp_avg / exp_inf, {"step": step, "exp_avg": exp_avg, "exp_inf": exp_inf}


class NAdam(_AdamBase):
    """NAdam: Adam with Nesterov momentum (momentum_decay schedules mu)."""

    _keys = ("step", "mu_product", "exp_avg", "exp_avg_sq")
    _capturable_operands = ("params, mu_products and state_steps", "params, mu_products, and state_steps")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_lr(lr)
        check_nonnegative("epsilon value", eps)
        check_betas(betas)
        check_nonnegative("weight_decay value", weight_decay)
        check_nonnegative("momentum_decay value", momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        return {"step": scalar_state(p, 0.0), "mu_product": scalar_state(p, 1.0), "exp_avg": zeros_state(p),
                "exp_avg_sq": zeros_state(p)}

    def _hyper(self, group):
        return dict(super()._hyper(group), momentum_decay=group["momentum_decay"])

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, decoupled):
        if maximize:
            g = -g
        step = s["step"] + 1
        t = step.astype(jnp.float64)
        bias_correction2 = 1 - h["beta2"] ** t
        if weight_decay:
            p, g = _decay(p, g, h, decoupled)
        mu = h["beta1"] * (1.0 - 0.5 * 0.96 ** (t * h["momentum_decay"]))
        mu_next = h["beta1"] * (1.0 - 0.5 * 0.96 ** ((t + 1) * h["momentum_decay"]))
        # PyTorch multiplies the float32 mu_product tensor in its own dtype, then reads it back as a double.
        mu_product = s["mu_product"] * scalar(mu, s["mu_product"])
        exp_avg = lerp(s["exp_avg"], g, 1 - h["beta1"])
        exp_avg_sq = s["exp_avg_sq"] * scalar(h["beta2"], p) + scalar(1 - h["beta2"], p) * g * g
        denom = jnp.sqrt(exp_avg_sq / scalar(bias_correction2, p)) + scalar(h["eps"], p)
        mp = mu_product.astype(jnp.float64)
        p = p + scalar(-h["lr"] * (1.0 - mu) / (1.0 - mp), p) * g / denom
        p = p + scalar((-h["lr"] * mu_next) / (1.0 - mp * mu_next), p) * exp_avg / denom
        return p, {"step": step, "mu_product": mu_product, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}


class RAdam(_AdamBase):
    """RAdam: Adam with the variance of the adaptive learning rate rectified."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        check_lr(lr)
        check_nonnegative("epsilon value", eps)
        check_betas(betas)
        check_nonnegative("weight_decay value", weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, decoupled):
        if maximize:
            g = -g
        step = s["step"] + 1
        t = step.astype(jnp.float64)
        if weight_decay:
            p, g = _decay(p, g, h, decoupled)
        exp_avg = lerp(s["exp_avg"], g, 1 - h["beta1"])
        exp_avg_sq = s["exp_avg_sq"] * scalar(h["beta2"], p) + scalar(1 - h["beta2"], p) * g * g
        bias_correction1 = 1 - h["beta1"] ** t
        bias_correction2 = 1 - h["beta2"] ** t
        corrected = exp_avg / scalar(bias_correction1, p)
        rho_inf = 2 / (1 - h["beta2"]) - 1
        rho_t = rho_inf - 2 * t * (h["beta2"] ** t) / bias_correction2
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        adaptive_lr = scalar(bias_correction2 ** 0.5, p) / (jnp.sqrt(exp_avg_sq) + scalar(h["eps"], p))
        lr = scalar(h["lr"], p)
        update = jnp.where(rho_t > 5.0, corrected * lr * adaptive_lr * scalar(rect, p), corrected * lr)
        return p - update, {"step": step, "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
