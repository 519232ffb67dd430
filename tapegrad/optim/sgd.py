"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize (PyTorch's formulas)."""
from .._tensor import Tensor
from ._foreach import scalar
from ._foreach_optimizer import _ForeachOptimizer
from ._hyperparameter_checks import check_lr


class SGD(_ForeachOptimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in (("nesterov", False), ("maximize", False), ("foreach", None),
                                 ("differentiable", False), ("fused", False)):
                group.setdefault(key, default)

    def _init_state(self, group, p):
        return {}

    def _state_keys(self, group):
        # PyTorch keeps no state without momentum; the buffer starts as the first gradient.
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _hyper(self, group):
        return dict(lr=group["lr"], momentum=group["momentum"], dampening=group["dampening"],
                    weight_decay=group["weight_decay"])

    def _static(self, group):
        return dict(maximize=bool(group["maximize"]), weight_decay=_nonzero(group["weight_decay"]),
                    momentum=_nonzero(group["momentum"]), nesterov=bool(group["nesterov"]))

    @staticmethod
    def _rule(p, g, s, h, *, maximize, weight_decay, momentum, nesterov):
        if maximize:
            g = -g
        if weight_decay:
            g = g + scalar(h["weight_decay"], p) * p
        if momentum:
            buf = s["momentum_buffer"]
            if buf is None:
                buf = g
            else:
                buf = buf * scalar(h["momentum"], p) + scalar(1 - h["dampening"], p) * g
            g = g + scalar(h["momentum"], p) * buf if nesterov else buf
            s = {"momentum_buffer": buf}
        return p + scalar(-h["lr"], p) * g, s


def _nonzero(v):
    return bool(v != 0) if not isinstance(v, Tensor) else True
