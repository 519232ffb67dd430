"""Proxy: a stand-in for a value during symbolic tracing; every operation on it appends a node to a Graph.

As in torch.fx: Python operators are `call_function` nodes on the `operator` functions, tensor
methods `call_method` nodes, attribute reads `getattr` nodes, and tapegrad's public functions
(`tapegrad.add`, `tapegrad.nn.functional.relu`...) `call_function` nodes whose target is that function.
PyTorch finds the last through `__torch_function__`; tapegrad's public functions learn Proxies when
tapegrad.fx is imported (see _proxy_functions.py).
"""
import dis
import inspect
import operator

from ._node import Node

__all__ = ["Proxy", "Attribute", "TraceError", "TracerBase", "GraphAppendingTracer"]


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy asks of the tracer that made it: nodes, and the graph arguments for Python values."""

    graph = None
    record_stack_traces = False

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        args_, kwargs_ = self.create_arg(args), self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """A Python value as a graph argument: Proxies as their nodes, containers element by element."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(x) for x in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(x) for x in a)
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if a is None or a is Ellipsis or isinstance(a, (str, int, float, bool, complex)) or _is_plain_value(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out "
                         "the Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()


def _is_plain_value(a):
    """dtypes and devices pass into the graph as they are."""
    from .._dtypes import dtype
    from ..device import device
    return isinstance(a, (dtype, device))


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph: what Proxies made by hand (Proxy(node)) use."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph


class Proxy:
    """A value of the program being traced: `node` is the graph node that computes it."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer, self.node = tracer, node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # attribute reads are deferred: a method call becomes one call_method node, not getattr + call
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __deepcopy__(self, memo):
        raise TraceError("Proxy objects cannot be deep-copied while tracing")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        instructions = list(dis.get_instructions(frame.f_code))
        here = next((i for i, inst in enumerate(instructions) if inst.offset >= frame.f_lasti), None)
        if here is not None and instructions[here].opname == "UNPACK_SEQUENCE":   # `a, b = proxy`, as torch.fx
            return (self[i] for i in range(instructions[here].argval))
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call tapegrad.fx.wrap('len') at module scope")

    __hash__ = object.__hash__


class Attribute(Proxy):
    """`proxy.attr`: a getattr node once used as a value, a call_method node once called."""

    def __init__(self, root, attr):
        self.root, self.attr, self.tracer = root, attr, root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(fn):
    def method(self, other):
        return self.tracer.create_proxy("call_function", fn, (self, other), {})
    return method


def _reflected(fn):
    def method(self, other):
        return self.tracer.create_proxy("call_function", fn, (other, self), {})
    return method


def _unary(fn):
    def method(self):
        return self.tracer.create_proxy("call_function", fn, (self,), {})
    return method


for _name in ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift", "and_", "or_", "xor",
              "matmul"):
    _fn = getattr(operator, _name)
    _dunder = _name.rstrip("_")
    setattr(Proxy, f"__{_dunder}__", _binary(_fn))
    setattr(Proxy, f"__r{_dunder}__", _reflected(_fn))
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name)))
for _name in ("neg", "pos", "invert", "abs"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
del _name, _fn, _dunder


def _find_proxy(args, kwargs):
    """The first Proxy among the arguments (looking one level into lists, tuples and dicts), or None."""
    for values in (args, kwargs.values()):
        for a in values:
            if isinstance(a, Proxy):
                return a
            if isinstance(a, (list, tuple)):
                for b in a:
                    if isinstance(b, Proxy):
                        return b
            elif isinstance(a, dict):
                for b in a.values():
                    if isinstance(b, Proxy):
                        return b
    return None

