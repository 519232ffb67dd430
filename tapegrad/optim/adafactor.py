"""Adafactor (PyTorch's single-tensor formula): the second moment of a matrix parameter kept as a row factor
and a column factor; a vector keeps it whole.

PyTorch reads the step count, the parameter's norm and the update's norm with `.item()` and computes the
step size and clipping in Python doubles; here they are float64 inside the update. A group's matrices and
vectors keep different state, so each kind is recorded as its own update.
"""
import jax.numpy as jnp

from ._foreach import lerp, scalar
from ._foreach_optimizer import _ForeachOptimizer, full_state, scalar_state
from .._tensor import Tensor


class Adafactor(_ForeachOptimizer):
    """Adafactor with relative step size min(lr, 1/sqrt(step)) and update clipping at `d`."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _step_group(self, group):
        params = [p for p in group["params"] if p._grad is not None]
        for p in params:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
        for p in params:   # (state made in the group's order, as PyTorch's state_dict lists it)
            if len(self.state[p]) == 0:
                self.state[p].update(self._init_state(group, p))
        matrices = [p for p in params if p.ndim > 1]
        vectors = [p for p in params if p.ndim <= 1]
        if matrices:
            self._step_params(group, matrices, ("step", "row_var", "col_var"))
        if vectors:
            self._step_params(group, vectors, ("step", "variance"))

    def _init_state(self, group, p):
        state = {"step": scalar_state(p, 0.0)}
        if p.ndim > 1:
            shape = list(p.shape)
            state["row_var"] = full_state(p, 0, shape[:-1] + [1])
            state["col_var"] = full_state(p, 0, shape[:-2] + [1, shape[-1]])
        else:
            state["variance"] = full_state(p, 0)
        return state

    def _state_keys(self, group):
        return ("step",)   # (per kind of parameter: see _step_group)

    def _hyper(self, group):
        eps1, eps2 = group["eps"]
        return dict(lr=group["lr"], beta2_decay=group["beta2_decay"], eps1=0.0 if eps1 is None else eps1, eps2=eps2,
                    d=group["d"], weight_decay=group["weight_decay"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=group["weight_decay"] != 0,
                    machine_eps=group["eps"][0] is None)

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, machine_eps):
        if maximize:
            g = -g
        eps1 = scalar(jnp.finfo(p.dtype).eps if machine_eps else h["eps1"], p)
        step = s["step"] + 1
        count = step.astype(jnp.float64)
        forget = count ** h["beta2_decay"]
        rho = jnp.minimum(h["lr"], 1 / jnp.sqrt(count))
        norm = jnp.sqrt(jnp.sum(p * p)).astype(jnp.float64)
        alpha = jnp.maximum(h["eps2"], norm / p.size ** 0.5) * rho
        if weight_decay:
            p = p * scalar(1 - h["lr"] * h["weight_decay"], p)
        new = {"step": step}
        if p.ndim > 1:
            row = new["row_var"] = lerp(s["row_var"], jnp.sum(g * g, axis=-1, keepdims=True) / g.shape[-1], forget)
            col = new["col_var"] = lerp(s["col_var"], jnp.sum(g * g, axis=-2, keepdims=True) / g.shape[-2], forget)
            estimate = (row @ col) / jnp.maximum(jnp.mean(row, axis=-2, keepdims=True), eps1)
        else:
            estimate = new["variance"] = lerp(s["variance"], g * g, forget)
        update = jnp.reciprocal(jnp.sqrt(jnp.maximum(estimate, eps1 * eps1))) * g
        size = jnp.sqrt(jnp.sum(update * update)).astype(jnp.float64)
        denom = jnp.maximum(1.0, size / (update.size ** 0.5 * h["d"]))
        return p + scalar(-alpha / denom, p) * update, new
