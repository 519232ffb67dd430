"""A Module's state dict: state_dict() in registration order and load_state_dict() with PyTorch's key checks and
error messages, its hooks and a module's extra state (`_extra_state`). A base of Module."""
import itertools
from collections import OrderedDict, namedtuple

from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ...autograd._hooks import RemovableHandle
from ..parameter import Parameter

_EXTRA_STATE = "_extra_state"
_hook_ids = itertools.count()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _ModuleState:
    """Module's state_dict / load_state_dict over its parameter, buffer and module tables."""

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()   # per module prefix its version, which loading reads
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._hooks_of("_state_dict_pre_hooks"):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._hooks_of("_state_dict_hooks"):
            if hook(self, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if self._has_extra_state("get_extra_state"):
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def get_extra_state(self):
        """The state a subclass adds to its state_dict (under `_extra_state`); only called where overridden."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        """Load what get_extra_state returned; only called where overridden."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def _has_extra_state(self, method):
        return getattr(type(self), method) is not getattr(_ModuleState, method)

    # ---- hooks --------------------------------------------------------------------------------

    def _hooks_of(self, table):
        hooks = self.__dict__.get(table)
        return list(hooks.values()) if hooks else []

    def _register_state_hook(self, table, hook):
        hooks = self.__dict__.get(table)
        if hooks is None:
            hooks = self.__dict__[table] = OrderedDict()
        key = next(_hook_ids)
        hooks[key] = hook
        return RemovableHandle(hooks, key)

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) before state_dict() saves this module."""
        return self._register_state_hook("_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after state_dict() saved this module; returns None."""
        return self._register_state_hook("_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        before this module loads its entries."""
        return self._register_state_hook("_load_state_dict_pre_hooks", hook)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after load_state_dict(); it may change the key lists in place."""
        return self._register_state_hook("_load_state_dict_post_hooks", hook)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)   # (a module may add keys: BatchNorm's num_batches_tracked)
        if metadata is not None:
            state_dict._metadata = metadata
        _load(self, state_dict, "", metadata, assign, missing, unexpected, errors)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def _state_names(self):
        names = [n for n, p in self._parameters.items() if p is not None]
        names += [n for n, b in self._buffers.items() if b is not None and n not in self._non_persistent_buffers_set]
        return names

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Load this module's own entries of `state_dict` (PyTorch's signature, which subclasses override:
        local_metadata is what state_dict() saved for the module, its version, and assign_to_params_buffers)."""
        for hook in self._hooks_of("_load_state_dict_pre_hooks"):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        assign = local_metadata.get("assign_to_params_buffers", False)
        names = self._state_names()
        for name in names:
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            current = self._parameters[name] if name in self._parameters else self._buffers[name]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if current.ndim == 0 and tuple(value.shape) == (1,):   # (PyTorch still reads 0.3's 1-d scalars)
                value = value[0]
            if tuple(value.shape) != tuple(current.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {current.shape}.")
                continue
            if assign:
                if name in self._parameters:
                    if isinstance(value, Parameter):
                        value.requires_grad_(current.requires_grad)
                    else:
                        value = Parameter(value, current.requires_grad)
                setattr(self, name, value)
                continue
            with no_grad():
                current.copy_(value)
        extra = prefix + _EXTRA_STATE
        if self._has_extra_state("set_extra_state"):
            if extra in state_dict:
                self.set_extra_state(state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        elif strict and extra in state_dict:
            unexpected_keys.append(extra)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra:
                    name = key[len(prefix):].split(".", 1)
                    if (name[0] not in self._modules) if len(name) > 1 else (name[0] not in names):
                        unexpected_keys.append(key)


def _load(module, state_dict, prefix, metadata, assign, missing, unexpected, errors):
    """Load `module` and, through its children's tables (a shared module as often as it is listed), everything
    below it; then its post-hooks, which may change the key lists."""
    local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
    if assign:
        local_metadata["assign_to_params_buffers"] = assign
    module._load_from_state_dict(state_dict, prefix, local_metadata, True, missing, unexpected, errors)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            _load(child, {k: v for k, v in state_dict.items() if k.startswith(child_prefix)}, child_prefix,
                  metadata, assign, missing, unexpected, errors)
    keys = _IncompatibleKeys(missing, unexpected)
    for hook in module._hooks_of("_load_state_dict_post_hooks"):
        if hook(module, keys) is not None:
            raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                 "expected to return new values, if incompatible_keys need to be modified, "
                                 "it should be done inplace.")
