"""GradScaler (PyTorch's torch.amp.GradScaler): dynamic loss scaling with inf/NaN step skipping.

The same state machine as PyTorch's: `scale(loss)` multiplies by the scale (a float32 0-dim tensor,
so a bfloat16 loss stays bfloat16), `unscale_(optimizer)` multiplies the optimizer's grads by the
inverse scale in place and records whether any was inf or NaN, `step(optimizer)` skips
`optimizer.step()` when one was, and `update()` backs the scale off after a skipped step or grows
it after `growth_interval` clean ones. Deciding whether to step reads one value (a sync), as in PyTorch.
"""
from collections import defaultdict
from enum import Enum
from .._user_frames import warn_user

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _full(value, dtype, device):
    from .._creation import full
    return full((), value, dtype=dtype, device=device)


class GradScaler:
    """Scale the loss so small float16/bfloat16 gradients do not underflow; skip steps whose grads overflow."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warn_user("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init(self, device):
        from .. import _dtypes as D
        self._scale = _full(self._init_scale, D.float32, device)
        self._growth_tracker = _full(self._init_growth_tracker, D.int32, device)

    def scale(self, outputs):
        """outputs times the current scale (a tensor, or an iterable of tensors, kept in its structure)."""
        if not self._enabled:
            return outputs
        from .._tensor import Tensor

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                return type(val)(map(apply_scale, val))
            if hasattr(val, "__iter__"):
                return map(apply_scale, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        from .. import _dtypes as D
        from .._functional import isfinite
        from .._grad_mode import no_grad
        found = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    # PyTorch's _amp_foreach_non_finite_check_and_unscale_: flag any inf/NaN, then scale
                    flag = found.get(grad.device, found_inf)
                    found[grad.device] = flag.maximum((~isfinite(grad)).any().to(flag.dtype))
                    grad.mul_(inv_scale.to(device=grad.device))
        return found

    def unscale_(self, optimizer):
        """Divide the optimizer's grads by the scale in place (before clipping them, say)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from .. import _dtypes as D
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = _full(0.0, D.float32, self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless done) and run optimizer.step() unless a grad was inf or NaN; returns its result."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Back the scale off after a skipped step, grow it after growth_interval clean ones (or set it)."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        from .._tensor import Tensor
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor) or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found = [f for s in self._per_optimizer_states.values() for f in s["found_inf_per_device"].values()]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf = found[0]
            for f in found[1:]:
                found_inf = found_inf + f
            self._update_scale(scale, tracker, found_inf)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _update_scale(self, scale, tracker, found_inf):
        # PyTorch's _amp_update_scale_, as tensor ops (no sync): back off on inf, else count and maybe grow
        from .._functional import where
        from .._grad_mode import no_grad
        with no_grad():
            bad = found_inf > 0
            counted = tracker + 1
            grow = (counted >= self._growth_interval) & ~bad
            grown = scale * self._growth_factor
            new_scale = where(bad, scale * self._backoff_factor, where(grow & grown.isfinite(), grown, scale))
            new_tracker = where(bad | grow, counted * 0, counted)
            scale.copy_(new_scale)
            tracker.copy_(new_tracker)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else self._growth_tracker.item()
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker ({} when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
