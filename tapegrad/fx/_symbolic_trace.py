"""Tracer: PyTorch's symbolic tracing. The forward runs once on Proxies, and what they see becomes a Graph.

While `trace` runs, Module.__call__ asks the tracer whether a submodule is a leaf (one call_module
node) or is traced through, and Module.__getattr__ hands out get_attr Proxies for the root's
parameters and buffers; functions registered with `wrap` are call_function leaves.
"""
import builtins
import contextlib
import functools
import inspect
import types

from .graph import Graph
from .proxy import TracerBase, _find_proxy

__all__ = ["Tracer", "wrap", "PH"]

_wrapped = {}   # (id(globals), name) -> globals: functions `wrap` keeps as call_function leaves


def wrap(fn_or_name):
    """Keep a module-level function (or a name, such as 'len') as one call_function node when traced.
    Call it at the top level of the module that defines or uses the function."""
    frame = inspect.currentframe().f_back
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__code__.co_name
    _wrapped[(id(frame.f_globals), name)] = frame.f_globals
    return fn_or_name


class Tracer(TracerBase):
    """Symbolic tracing of a Module's forward or of a function: `trace(root)` returns the Graph.
    Subclass it and override is_leaf_module, call_module, create_node, create_proxy or create_arg."""

    def __init__(self, autowrap_modules=(), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.root = None
        self.graph = None

    # ---- what a subclass overrides ---------------------------------------------------------------

    def is_leaf_module(self, m, module_qualified_name):
        """tapegrad.nn's modules (but Sequential) are leaves, as torch.nn's are in torch.fx."""
        from ..nn import Sequential
        return type(m).__module__.startswith("tapegrad.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        path = self._paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m, forward, args, kwargs):
        qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A root parameter read inside forward: a get_attr Proxy (one per name)."""
        from ..nn import Parameter
        if isinstance(attr_val, Parameter):   # buffers stay tensors: create_arg makes their get_attr node
            name = self._tensor_names.get(id(attr_val))
            if name is not None:
                if name not in parameter_proxy_cache:
                    parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a):
        """Tensors become get_attr nodes: the root's own by name, others stored on the root as _tensor_constant<i>."""
        from ..nn import Module
        from .._tensor import Tensor
        if isinstance(a, Tensor):
            name = self._tensor_names.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                object.__setattr__(self.root, name, a)
                self._tensor_names[id(a)] = name
                self._keep.append(a)
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        return super().create_arg(a)

    # ---- tracing ---------------------------------------------------------------------------------

    def trace(self, root, concrete_args=None):
        from ..nn import Module
        is_module = isinstance(root, Module)
        self.root = root if is_module else Module()
        fn = type(root).forward if is_module else root
        self.graph = Graph(tracer_cls=type(self))
        self._paths = {id(m): name for name, m in self.root.named_modules()}
        self._tensor_names, self._keep = {}, []
        for name, t in list(self.root.named_parameters()) + list(self.root.named_buffers()):
            self._tensor_names.setdefault(id(t), name)
        self._collect_tensor_attrs(self.root, "")
        call, args = self._placeholders(fn, skip_self=is_module, concrete_args=concrete_args or {})
        with self._patched(fn.__globals__):
            result = call(self.root, *args) if is_module else call(*args)
            self.create_node("output", "output", (self.create_arg(result),), {})
        return self.graph

    def _collect_tensor_attrs(self, module, prefix):
        from .._tensor import Tensor
        for k, v in vars(module).items():
            if isinstance(v, Tensor):
                self._tensor_names.setdefault(id(v), prefix + k)
        for k, child in module.named_children():
            self._collect_tensor_attrs(child, f"{prefix}{k}.")

    def _placeholders(self, fn, skip_self, concrete_args):
        """(fn to call, its positional arguments): a placeholder per parameter, as torch.fx makes them.
        Keyword-only parameters become positional ones; `*args` and `**kwargs` are one placeholder each
        (target "*args", named _args), passed as the Proxy itself: fn's code is patched to take them as
        plain parameters, so `args[0]` is a getitem node and iterating them a TraceError, as in torch.fx."""
        params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        named = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        varargs = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
        varkw = next((p for p in params if p.kind == p.VAR_KEYWORD), None)
        if isinstance(concrete_args, tuple):
            if concrete_args and (varargs or varkw) and len(named) + skip_self == 1:
                # torch.fx's flat case: a forward(self, *args) traced for so many inputs, input_<i>
                return fn, [self.create_proxy("placeholder", f"input_{i}", (), {}) for i in range(len(concrete_args))]
            if len(concrete_args) != len(named):
                raise RuntimeError(f"Tracing expected {len(named)} arguments but got {len(concrete_args)} concrete "
                                   "arguments")
            concrete_args = dict(zip((p.name for p in named), concrete_args))
        args = []
        for p in named:
            if p.name in concrete_args:
                args.append(self._specialized(p, concrete_args[p.name]))
            else:
                default = () if p.default is p.empty else (p.default,)
                args.append(self.create_proxy("placeholder", p.name, default, {}))
        for p, star in ((varargs, "*"), (varkw, "**")):
            if p is not None:
                args.append(self.create_proxy("placeholder", star + p.name, (), {}))
        if varargs or varkw or any(p.kind == p.KEYWORD_ONLY for p in named):
            fn = _positional(fn, len(args) + skip_self)
        return fn, args

    def _specialized(self, p, value):
        """A concrete argument keeps its placeholder (<name>_1), checked at run time to hold the traced value
        (PH: the placeholder is the argument). Returns what the traced code receives."""
        from ..nn import Module
        from .._tensor import Tensor
        default = () if p.default is p.empty else (p.default,)
        proxy = self.create_proxy("placeholder", f"{p.name}_1", default, {})
        if isinstance(value, PHBase):
            return proxy
        message = f"{p.name} has been specialized to have value {value} but got another value"
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (proxy, message), {})
        elif not isinstance(value, (Tensor, Module)) and not callable(value):
            self.create_proxy("call_function", _assert, (proxy == value, message), {})
        return value

    @contextlib.contextmanager
    def _patched(self, fn_globals):
        from ..nn import Module
        tracer, cache = self, {}
        original_call, original_getattr = Module.__call__, Module.__getattr__

        def module_call(mod, *args, **kwargs):
            return tracer.call_module(mod, functools.partial(original_call, mod), args, kwargs)

        def module_getattr(mod, name):
            return tracer.getattr(name, original_getattr(mod, name), cache)

        restore = []
        leaves = list(_wrapped.items()) + [((id(fn_globals), f.__name__), fn_globals) for f in self._autowrap_functions]
        for (_, name), namespace in leaves:
            missing = name not in namespace
            original = getattr(builtins, name) if missing else namespace[name]
            restore.append((namespace, name, missing, original))
            namespace[name] = _leaf_function(original)
        Module.__call__, Module.__getattr__ = module_call, module_getattr
        try:
            yield
        finally:
            Module.__call__, Module.__getattr__ = original_call, original_getattr
            for namespace, name, missing, original in restore:
                if missing:
                    del namespace[name]
                else:
                    namespace[name] = original


class PHBase:
    """A concrete argument that stays an input: traced as a placeholder named <name>_1 (torch.fx's PH)."""

    def __repr__(self):
        return "PH"


PH = PHBase()


def _positional(fn, count):
    """fn with its first `count` parameters (keyword-only, *args and **kwargs included) plain positional ones,
    so that a Proxy is passed as `args` itself (torch.fx patches the code object the same way)."""
    code = fn.__code__
    flags = code.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = code.replace(co_argcount=count, co_posonlyargcount=0, co_kwonlyargcount=0, co_flags=flags)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _leaf_function(fn):
    """fn, but called with a Proxy it is one call_function node whose target is fn itself."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        return proxy.tracer.create_proxy("call_function", fn, args, kwargs)
    return call



def _assert(condition, message):
    """torch._assert: the check a specialized argument's placeholder runs."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value, message):
    if value is not None:
        raise AssertionError(message)


_assert._fx_impure = _assert_is_none._fx_impure = True
