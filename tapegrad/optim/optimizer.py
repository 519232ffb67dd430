"""Optimizer: PyTorch's base class (param groups, state, state_dict, zero_grad, hooks).

Concrete optimizers describe their update as a pure per-parameter rule
(`_foreach_optimizer.py` runs it, `_foreach.py` records it over a whole group as one
op on the tape); the base class keeps PyTorch's mutable bookkeeping around it.
"""
import functools
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .. import _dispatch
from .. import _dtypes as D
from .._ops import elementwise as E
from .._tensor import Tensor
from . import _foreach
from .._user_frames import warn_user


class _RequiredParameter:
    """Singleton marking a hyperparameter that has no default (SGD's lr in old PyTorch)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class _RemovableHandle:
    """What register_*_hook returns: `handle.remove()` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)


def _typename(obj):
    return f"{type(obj).__module__}.{type(obj).__qualname__}" if not isinstance(obj, Tensor) else "tapegrad.Tensor"


def _with_step_hooks(step):
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        out = step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._with_hooks = True
    return wrapper


class Optimizer:
    """Base class for all optimizers.

    params: an iterable of tensors, of (name, tensor) pairs, or of dicts (parameter groups).
    defaults: the hyperparameters a group gets when it does not set them.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_with_hooks", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            from .._legacy import type_name
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type_name(params)}. Wrap it in a list: [tensor].")
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling / printing --------------------------------------------------------

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            self.__dict__.setdefault(name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ---- parameter groups -----------------------------------------------------------

    def add_param_group(self, param_group):
        """Add a group of parameters (a dict with 'params' and optional hyperparameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)

        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warn_user("optimizer contains a parameter group with duplicate parameters; in future, this will "
                      "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information")
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients --------------------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        """Reset the gradients: set them to None (default) or fill them with zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    _write(g, _dispatch.compute(E.fill, (), [g._peek(), 0]))

    def step(self, closure=None):
        raise NotImplementedError

    # ---- state_dict -------------------------------------------------------------------

    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}, as PyTorch."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load state saved by `state_dict()` (here or by PyTorch); tensors follow their parameter's dtype."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id, key=None):
            if isinstance(value, Tensor):
                return _process_value(param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- hooks ------------------------------------------------------------------------

    def _register(self, hooks, hook, prepend=False):
        handle = _RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- compiled-step statistics -----------------------------------------------------

    @staticmethod
    def step_cache_info():
        """{'calls', 'entries'}: group updates recorded on the tape (they run inside the step's program;
        tapegrad.autograd.backward_cache_info() counts programs and compiles), update ops defined."""
        return _foreach.cache_info()

    @staticmethod
    def clear_step_cache():
        _foreach.clear_cache()


def _process_value(param, value, param_id, param_groups, key):
    # PyTorch keeps `step` as saved (float32 scalar) and casts other floating state to the parameter's dtype.
    for pg in param_groups:
        if param_id in pg["params"]:
            fused, capturable = pg.get("fused", False), pg.get("capturable", False)
            break
    else:
        fused = capturable = False
    if key == "step":
        return value.to(dtype=D.float32, device=param.device) if (capturable or fused) else value
    if param.is_floating_point():
        return value.to(dtype=param.dtype, device=param.device)
    return value.to(device=param.device)


def _write(t, value):
    """Write an updated array into a tensor in place (bumps its version, as PyTorch's in-place ops)."""
    if t._view is None:
        t._storage.write(value)
    else:
        t._set_value(value)
