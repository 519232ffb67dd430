"""Module: PyTorch's base class for layers and models.

Parameters, buffers and submodules are registered by attribute assignment into
three ordered dicts; every traversal (parameters(), state_dict(), to(), repr)
walks those dicts in registration order, as PyTorch does. Calling and hooks,
the state dict, and modes and conversions are Module's bases, one module each.
"""
from collections import OrderedDict

from ..._tensor import Tensor
from ..parameter import Parameter
from ._module_call import _ModuleCall
from ._module_conversions import _ModuleConversions
from ._module_state import _ModuleState


_TENSOR_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
                 "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def _type_name(value):
    if isinstance(value, Tensor):
        return "tapegrad." + _TENSOR_TYPES.get(value.dtype.name, "Tensor")
    return type(value).__name__


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


class Module(_ModuleCall, _ModuleState, _ModuleConversions):
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
        if getattr(value, "_is_buffer", False) and isinstance(value, Tensor):   # an nn.Buffer (or UninitializedBuffer)
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value, getattr(value, "persistent", True))
            return
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
        if "." in name:   # (a module's message names it, as PyTorch's)
            raise KeyError(f"{kind} name can't contain \".\"" + (f", got: {name}" if kind == "module" else ""))
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
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return module._parameters[name]

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return module._buffers[name]

    def set_submodule(self, target, module, strict=False):
        """Put `module` at the dotted path `target` (strict: only where a module is already)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self
        for item in atoms[:-1]:
            if not hasattr(parent, item):
                raise AttributeError(f"{parent._get_name()} has no attribute `{item}`")
            parent = getattr(parent, item)
            if not isinstance(parent, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        if len(atoms) == 1:
            parent = self
        name = atoms[-1]
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

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
