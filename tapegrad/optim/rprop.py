"""Rprop: resilient backpropagation (PyTorch's single-tensor formula): a step size per coordinate that grows
while the gradient keeps its sign and shrinks when it flips; only the gradient's sign moves the parameter."""
import jax.numpy as jnp

from ._foreach import scalar
from ._foreach_optimizer import _ForeachOptimizer, full_state, scalar_state, zeros_state
from ._hyperparameter_checks import check_lr


class Rprop(_ForeachOptimizer):
    """Rprop with step-size factors `etas` (shrink, grow) and bounds `step_sizes` (min, max)."""

    _capturable_xla = (True, True)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, group, p):
        lr = float(group["lr"])   # (a complex parameter's real and imaginary parts step alike)
        return {"step": scalar_state(p, 0.0), "prev": zeros_state(p),
                "step_size": full_state(p, complex(lr, lr) if p.is_complex() else lr)}

    def _state_keys(self, group):
        return ("step", "prev", "step_size")

    def _hyper(self, group):
        (etaminus, etaplus), (smallest, largest) = group["etas"], group["step_sizes"]
        return dict(etaminus=etaminus, etaplus=etaplus, smallest=smallest, largest=largest)

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]))

    @staticmethod
    def _rule(p, g, s, h, *, maximize):
        if maximize:
            g = -g
        sign = jnp.sign(g * s["prev"])
        etaminus = scalar(h["etaminus"], p)
        factor = jnp.where(sign > 0, scalar(h["etaplus"], p), jnp.where(sign < 0, etaminus, scalar(1.0, p)))
        step_size = jnp.clip(s["step_size"] * factor, scalar(h["smallest"], p), scalar(h["largest"], p))
        g = jnp.where(factor == etaminus, scalar(0.0, p), g)   # no step where the sign flipped
        return p - jnp.sign(g) * step_size, {"step": s["step"] + 1, "prev": g, "step_size": step_size}
