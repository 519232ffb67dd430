"""A Module's state dict: state_dict() in registration order and load_state_dict() with PyTorch's key checks and
error messages. A base of Module."""
from collections import OrderedDict, namedtuple

from ..._grad_mode import no_grad
from ..._tensor import Tensor
from ..parameter import Parameter


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
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        expected = set()
        for module_prefix, module in self.named_modules():
            prefix = module_prefix + "." if module_prefix else ""
            module._load_from_state_dict(state_dict, prefix, strict, missing, errors, assign)
            for name in module._state_names():
                expected.add(prefix + name)
            for name in module._modules:
                expected.add(prefix + name)  # a child prefix, never a key itself
        for key in state_dict.keys():
            if key not in expected:
                unexpected.append(key)
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

    def _load_from_state_dict(self, state_dict, prefix, strict, missing, errors, assign):
        for name in self._state_names():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            current = self._parameters[name] if name in self._parameters else self._buffers[name]
            if not isinstance(value, Tensor):
                errors.append(f'While copying the parameter named "{key}", expected tapegrad.Tensor or Tensor-like '
                              f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(current.shape):
                errors.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {current.shape}.")
                continue
            if assign:
                if name in self._parameters:
                    self._parameters[name] = Parameter(value.detach(), current.requires_grad)
                else:
                    self._buffers[name] = value.detach()
                continue
            with no_grad():
                current.copy_(value)
