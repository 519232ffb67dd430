"""_ForeachOptimizer: an optimizer whose update is a pure per-parameter rule, run over each parameter group
as one op on the tape (`_foreach.py`), and the state buffers its rules start from."""
from .. import _dispatch
from .. import _dtypes as D
from .._grad_mode import enable_grad, no_grad
from .._tensor import Tensor
from . import _foreach
from .optimizer import Optimizer, _write


class _ForeachOptimizer(Optimizer):
    """An optimizer whose update is a pure rule, run over each parameter group in one jitted call.

    Subclasses define:
      _rule(p, g, state, h, **static) -> (new_p, new_state)   pure jax, one parameter
      _init_state(group, p) -> dict of Tensors                first time a parameter is stepped
      _state_keys(group) -> tuple of state names              what the rule reads and returns
      _hyper(group) -> dict of numbers/Tensors                traced (changing them never recompiles)
      _static(group) -> dict of hashables                     picks the compiled variant
    """

    def step(self, closure=None):
        """Perform one optimization step; `closure` re-evaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    # PyTorch's refusal of capturable=True for parameters off an accelerator, by its single-tensor and foreach
    # paths: the operands it names, and whether the devices it lists include xla
    _capturable_operands = ("params and state_steps", "params and state_steps")
    _capturable_xla = (True, False)

    def _step_group(self, group):
        params = [p for p in group["params"] if p._grad is not None]
        if params:
            self._step_params(group, params, self._state_keys(group))

    def _check_capturable(self, group, params):
        if not group.get("capturable") or all(p.device.type == "cuda" for p in params):
            return
        path = 1 if group.get("foreach") else 0   # (foreach=None takes the single-tensor path off a GPU)
        devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if self._capturable_xla[path] else [])
        raise AssertionError(f"If capturable=True, {self._capturable_operands[path]} must be on supported devices: "
                             f"{devices}.")

    def _step_params(self, group, params, keys):
        """Record the update of `params` (of one group), whose state buffers are `keys`."""
        self._check_capturable(group, params)
        states = []
        for p in params:
            # Optimizers without state (plain SGD) leave self.state empty, as in PyTorch.
            state = self.state[p] if keys else {}
            if len(state) == 0 and keys:
                state.update(self._init_state(group, p))
            states.append(state)
        if _dispatch.CAPTURE[0] is not None:   # tapegrad.compile tracing: the tensors read as raw values below
            _dispatch.CAPTURE[0](params + [p._grad for p in params] + [t for s in states for t in s.values()])
        new_params, new_states = _foreach.record(
            type(self)._rule, tuple(sorted(self._static(group).items())),
            [p._peek() for p in params], [p._grad._peek() for p in params],
            [{k: _value_or_none(s.get(k)) for k in keys} for s in states],
            {k: _hyper_value(v) for k, v in self._hyper(group).items()})
        for p, value in zip(params, new_params):
            _write(p, value)
        for state, new in zip(states, new_states):
            for k in keys:
                t = state.get(k)
                if isinstance(t, Tensor):
                    _write(t, new[k])
                else:
                    state[k] = Tensor._wrap(new[k])

    def _state_keys(self, group):
        raise NotImplementedError


def _value_or_none(t):
    return t._peek() if isinstance(t, Tensor) else t


def _hyper_value(v):
    # Python numbers go in as floats (one dtype, so an int -> float change never retraces); tensors as arrays.
    if isinstance(v, Tensor):
        return v._peek()
    return float(v)


def scalar_dtype():
    """PyTorch's dtype for optimizer `step` counters: float64 when that is the default dtype, else float32."""
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def zeros_state(p):
    """A zero buffer shaped and placed like parameter p."""
    return full_state(p, 0)


def full_state(p, value, shape=None):
    """A buffer of `value` placed like parameter p, of p's shape unless `shape` is given."""
    return Tensor._wrap(_foreach.full_on(p, tuple(p.shape if shape is None else shape), value, p.dtype.np))


def scalar_state(p, value, dtype=None):
    """A 0-dim counter (PyTorch's float32 `step`) on p's device, so the update sees one device."""
    return Tensor._wrap(_foreach.full_on(p, (), value, (dtype or scalar_dtype()).np))
