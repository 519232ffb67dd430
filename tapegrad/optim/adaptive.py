"""Per-coordinate adaptive methods: RMSprop, Adagrad, Adadelta (PyTorch's single-tensor formulas)."""
import jax.numpy as jnp

from ._foreach import lerp, scalar
from ._foreach_optimizer import _ForeachOptimizer, full_state, scalar_state, zeros_state
from ._hyperparameter_checks import check_lr, check_nonnegative


def _prologue(p, g, h, maximize, weight_decay):
    if maximize:
        g = -g
    if weight_decay:
        g = g + scalar(h["weight_decay"], p) * p
    return g


class RMSprop(_ForeachOptimizer):
    """RMSprop, optionally centered and with momentum."""

    _capturable_xla = (True, True)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        check_nonnegative("epsilon value", eps)
        check_nonnegative("momentum value", momentum)
        check_nonnegative("weight_decay value", weight_decay)
        check_nonnegative("alpha value", alpha)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        state = {"step": scalar_state(p, 0.0), "square_avg": zeros_state(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = zeros_state(p)
        return state

    def _state_keys(self, group):
        return (("step", "square_avg") + (("momentum_buffer",) if group["momentum"] > 0 else ())
                + (("grad_avg",) if group["centered"] else ()))

    def _hyper(self, group):
        return dict(lr=group["lr"], alpha=group["alpha"], eps=group["eps"], weight_decay=group["weight_decay"],
                    momentum=group["momentum"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0,
                    momentum=group["momentum"] > 0, centered=bool(group["centered"]))

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, momentum, centered):
        step = s["step"] + 1
        g = _prologue(p, g, h, maximize, weight_decay)
        square_avg = s["square_avg"] * scalar(h["alpha"], p) + scalar(1 - h["alpha"], p) * g * g
        new = {"step": step, "square_avg": square_avg}
        if centered:
            grad_avg = new["grad_avg"] = lerp(s["grad_avg"], g, 1 - h["alpha"])
            avg = jnp.sqrt(square_avg + scalar(-1.0, p) * grad_avg * grad_avg)
        else:
            avg = jnp.sqrt(square_avg)
        avg = avg + scalar(h["eps"], p)
        if momentum:
            buf = new["momentum_buffer"] = s["momentum_buffer"] * scalar(h["momentum"], p) + g / avg
            return p + scalar(-h["lr"], p) * buf, new
        return p + scalar(-h["lr"], p) * g / avg, new


class Adagrad(_ForeachOptimizer):
    """Adagrad with learning-rate decay and an initial accumulator value."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_lr(lr)
        check_nonnegative("lr_decay value", lr_decay)
        check_nonnegative("weight_decay value", weight_decay)
        check_nonnegative("initial_accumulator_value value", initial_accumulator_value)
        check_nonnegative("epsilon value", eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # PyTorch creates Adagrad's state for every parameter up front.
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(group, p))

    def _init_state(self, group, p):
        v = self.defaults["initial_accumulator_value"]
        return {"step": scalar_state(p, 0.0), "sum": full_state(p, complex(v, v) if p.is_complex() else v)}

    def _state_keys(self, group):
        return ("step", "sum")

    def _hyper(self, group):
        return dict(lr=group["lr"], lr_decay=group["lr_decay"], eps=group["eps"], weight_decay=group["weight_decay"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0)

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay):
        step = s["step"] + 1
        g = _prologue(p, g, h, maximize, weight_decay)
        clr = h["lr"] / (1 + (step.astype(jnp.float64) - 1) * h["lr_decay"])
        state_sum = s["sum"] + g * g
        std = jnp.sqrt(state_sum) + scalar(h["eps"], p)
        return p + scalar(-clr, p) * g / std, {"step": step, "sum": state_sum}


class Adadelta(_ForeachOptimizer):
    """Adadelta."""

    _capturable_xla = (False, False)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative("epsilon value", eps)
        check_nonnegative("weight_decay value", weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        return {"step": scalar_state(p, 0.0), "square_avg": zeros_state(p), "acc_delta": zeros_state(p)}

    def _state_keys(self, group):
        return ("step", "square_avg", "acc_delta")

    def _hyper(self, group):
        return dict(lr=group["lr"], rho=group["rho"], eps=group["eps"], weight_decay=group["weight_decay"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0)

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay):
        step = s["step"] + 1
        g = _prologue(p, g, h, maximize, weight_decay)
        rho, eps = scalar(h["rho"], p), scalar(h["eps"], p)
        square_avg = s["square_avg"] * rho + scalar(1 - h["rho"], p) * g * g
        std = jnp.sqrt(square_avg + eps)
        delta = jnp.sqrt(s["acc_delta"] + eps) / std * g
        acc_delta = s["acc_delta"] * rho + scalar(1 - h["rho"], p) * delta * delta
        return p + scalar(-h["lr"], p) * delta, {"step": step, "square_avg": square_avg, "acc_delta": acc_delta}
