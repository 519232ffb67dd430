"""Module: PyTorch's base class for layers and models.

Parameters, buffers and submodules are registered by attribute assignment into
three ordered dicts; every traversal (parameters(), state_dict(), to(), repr)
walks those dicts in registration order, as PyTorch does.
"""
import itertools
from collections import OrderedDict, namedtuple

from ... import _dtypes as D
from ..._grad_mode import is_grad_enabled, no_grad
from ..._tensor import Tensor
from ...autograd._hooks import RemovableHandle
from . import _backward_hooks
from ..parameter import Parameter

_hook_ids = itertools.count()


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _type_name(value):
    if isinstance(value, Tensor):
        return "tapegrad." + _TENSOR_TYPES.get(value.dtype.name, "Tensor")
    return type(value).__name__


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


class Module:
    """Base class for all neural-network modules; subclass it and define `forward`."""

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected argument: Module.__init__ takes "
                            "no arguments. Call super().__init__() without arguments.")
        s = object.__setattr__
        s(self, "training", True)
        s(self, "_parameters", OrderedDict())
        s(self, "_buffers", OrderedDict())
        s(self, "_non_persistent_buffers_set", set())
        s(self, "_modules", OrderedDict())
        s(self, "_forward_hooks", OrderedDict())
        s(self, "_forward_hooks_with_kwargs", set())
        s(self, "_forward_pre_hooks", OrderedDict())
        s(self, "_forward_pre_hooks_with_kwargs", set())
        s(self, "_forward_hooks_always_called", set())
        s(self, "_backward_hooks", OrderedDict())
        s(self, "_backward_pre_hooks", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function. '
                                  "Define forward(self, ...) in your Module subclass.")

    # ---- calling ------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hooked = (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled()
        if backward_hooked:
            args, call = _backward_hooks.wrap_inputs(self, args)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for key, hook in list(self._forward_hooks.items()):   # always_call hooks run on failure too
                if key in self._forward_hooks_always_called:
                    hook(self, args, kwargs, None) if key in self._forward_hooks_with_kwargs else hook(self, args, None)
            raise
        for key, hook in list(self._forward_hooks.items()):
            result = hook(self, args, kwargs, output) if key in self._forward_hooks_with_kwargs \
                else hook(self, args, output)
            if result is not None:
                output = result
        if backward_hooked:
            output = _backward_hooks.wrap_outputs(call, output)
        return output

    _call_impl = __call__

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return self._add_hook(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs, hook, prepend,
                              with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = self._add_hook(self._forward_hooks, self._forward_hooks_with_kwargs, hook, prepend, with_kwargs)
        if always_call:
            self._forward_hooks_always_called.add(handle._key)
        return handle

    @staticmethod
    def _add_hook(table, kwarg_keys, hook, prepend, with_kwargs):
        key = next(_hook_ids)
        table[key] = hook
        if prepend:
            table.move_to_end(key, last=False)
        if with_kwargs:
            kwarg_keys.add(key)
        return RemovableHandle(table, key)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input, called when the gradients of
        the module's inputs are computed."""
        return self._add_hook(self._backward_hooks, set(), hook, prepend, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or new grad_output, called before the module's backward."""
        return self._add_hook(self._backward_pre_hooks, set(), hook, prepend, False)

    def register_backward_hook(self, hook):
        # PyTorch's deprecated form sees only the last op's gradients; the full hook's are the documented ones
        return self.register_full_backward_hook(hook)

    # ---- registration ------------------------------------------------------------------------

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(tapegrad.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(tapegrad.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(tapegrad.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _forget(self, name, keep):
        # Reassigning keeps the entry's place in its own table (registration order), as in PyTorch.
        self.__dict__.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            if table != keep:
                self.__dict__[table].pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            entries = d.get(table)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(table, ()):
                del self.__dict__[table][name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(tapegrad Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(tapegrad.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        module = self
        if target == "":
            return module
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no parameter `{name}`")
        return module._parameters[name]

    # ---- traversal -----------------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    # ---- state -------------------------------------------------------------------------------

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

    # ---- modes and conversions -----------------------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    def _apply(self, fn):
        for module in self.children():
            module._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    # Keep the Parameter object (optimisers hold it); swap in the converted data.
                    p.data = new
                    if p.grad is not None:
                        p.grad.data = fn(p.grad)
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            target = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            return t.to(device=device, dtype=target)
        return self._apply(convert)

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floats(D.float32)

    def double(self):
        return self._cast_floats(D.float64)

    def half(self):
        return self._cast_floats(D.float16)

    def bfloat16(self):
        return self._cast_floats(D.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))   # a dtype, a typed class or its name, as PyTorch's

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self):
        return self

    # ---- printing -----------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        attrs = list(dir(type(self))) + list(self.__dict__)
        attrs += list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(a for a in set(attrs) if not a[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)


def _parse_to(args, kwargs):
    from ...device import device as device_cls
    device, dtype = kwargs.get("device"), kwargs.get("dtype")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, (str, device_cls, int)):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type(a).__name__}). "
                            "Pass a device, a dtype or a tensor.")
    return device, D.as_dtype(dtype)
