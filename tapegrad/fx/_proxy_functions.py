"""tapegrad's public functions called with a Proxy append a node instead of computing.

PyTorch's functions check their arguments for `__torch_function__`; tapegrad's are plain Python
functions, so importing tapegrad.fx replaces each public function in its namespace (tapegrad,
tapegrad.nn.functional, tapegrad.linalg, tapegrad.ops.profiler) by a function of the same name,
signature and docstring that looks for a Proxy among its arguments (one level into lists, tuples
and dicts, as torch.cat([a, b]) needs) and otherwise calls the original. Call nodes name the
replacement, with nn.functional's arguments as PyTorch's Python functions pass them on (tensors
positional, the other parameters by keyword), so `node.target is tapegrad.add` holds. Tensor's operators
learn Proxy operands the same way (`buffer + proxy`); as in PyTorch, indexing a real tensor with a
Proxy and its named methods do not (`buffer.mul(proxy)` raises: write `buffer * proxy`). A process
that never imports tapegrad.fx is untouched.
"""
import functools
import inspect
import sys
import types

from .proxy import _find_proxy

_NAMESPACES = ("tapegrad", "tapegrad.nn.functional", "tapegrad.linalg", "tapegrad.special", "tapegrad.fft",
               "tapegrad.ops.profiler")
# functions whose answer about a Proxy is about the Proxy itself (as PyTorch's, which take no __torch_function__)
_KEEP = {"is_tensor", "is_storage", "compile", "save", "load", "manual_seed", "seed", "initial_seed", "from_numpy",
         "from_jax", "from_dlpack", "set_printoptions", "get_printoptions", "is_grad_enabled",
         "is_inference_mode_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "promote_types",
         "get_default_dtype", "set_default_dtype", "get_default_device", "set_default_device", "symbolic_trace"}


_made = {}   # original -> its replacement (a function public under two names gets one replacement)


def _proxy_aware(fn, as_keywords):
    if fn in _made:
        return _made[fn]
    signature = inspect.signature(fn) if as_keywords else None

    @functools.wraps(fn)
    def call(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        if signature is not None:
            args, kwargs = _tensors_then_keywords(signature, args, kwargs)
        return proxy.tracer.create_proxy("call_function", call, args, kwargs)
    # a code object of its own: tapegrad.compile's guards tell functions apart by their code
    call.__code__ = call.__code__.replace(co_name=f"{fn.__module__}.{fn.__qualname__}")
    call._fx_original = fn
    _made[fn] = call
    return call


def _tensors_then_keywords(signature, args, kwargs):
    """torch.nn.functional's convention when it hands a call to a Proxy: the leading tensor arguments
    positional, every other parameter (defaults filled in) by keyword."""
    from .._tensor import Tensor
    from .proxy import Proxy
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    bound.apply_defaults()
    items = list(bound.arguments.items())
    lead = 0
    while lead < len(items) and isinstance(items[lead][1], (Proxy, Tensor)) and \
            signature.parameters[items[lead][0]].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                          inspect.Parameter.POSITIONAL_OR_KEYWORD):
        lead += 1
    if any(signature.parameters[k].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
           for k, _ in items):
        return args, kwargs
    return tuple(v for _, v in items[:lead]), dict(items[lead:])


# Tensor's operator -> the method PyTorch's __torch_function__ records when the other operand is a Proxy
_TENSOR_OPERATORS = {"__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
                     "__floordiv__": "__floordiv__", "__mod__": "remainder", "__pow__": "pow", "__matmul__": "matmul",
                     "__and__": "__and__", "__or__": "__or__", "__xor__": "__xor__", "__lshift__": "__lshift__",
                     "__rshift__": "__rshift__", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le",
                     "__gt__": "gt", "__ge__": "ge"}


def _tensor_operator(original, method_name):
    """Tensor's operator with a Proxy operand (`buffer + proxy`): a call_method node, as PyTorch records it."""
    from .proxy import Proxy

    @functools.wraps(original)
    def method(self, other, *modulo):   # (pow(x, y, m) reaches __pow__ with a third argument)
        if not isinstance(other, Proxy):
            return original(self, other, *modulo)
        return other.tracer.create_proxy("call_method", method_name, (self, other), {})
    method._fx_original = original
    return method


def _install_tensor_operators():
    from .._tensor import Tensor
    for name, method_name in _TENSOR_OPERATORS.items():
        original = Tensor.__dict__.get(name)
        if original is not None and not hasattr(original, "_fx_original"):
            setattr(Tensor, name, _tensor_operator(original, method_name))


def install():
    import tapegrad.linalg  # noqa: F401
    import tapegrad.nn.functional  # noqa: F401
    import tapegrad.ops.profiler  # noqa: F401
    for module_name in _NAMESPACES:
        namespace = sys.modules[module_name]
        for name, value in list(vars(namespace).items()):
            if (isinstance(value, types.FunctionType) and not name.startswith("__") and name not in _KEEP
                    and not name.startswith(("set_", "get_")) and value.__module__.startswith("tapegrad")
                    and not hasattr(value, "_fx_original")):
                setattr(namespace, name, _proxy_aware(value, module_name == "tapegrad.nn.functional"))
    _install_tensor_operators()
