"""Record one call of a module or function as an fx Graph: the ops it puts on the tape.

While the call runs, an observer of `_dispatch.apply` sees every op-table entry with its tensor
arguments and results; each becomes a `call_function` node whose target calls the entry again.
Tensors are matched to nodes by the value they hold (a pending value or array is a fresh object per
op result), so a tensor written in place reads as the op that wrote it. Submodules from tapegrad.nn
(other than containers) are leaves, as in torch.fx: their call is one `call_module` node and the ops
inside it are not recorded. Parameters and buffers of the root are `get_attr` nodes; other tensors
the call reads (made inside it, or globals) are kept as constants `_tensor_constant<i>`.
"""
import contextlib
import inspect
import operator

from .. import _dispatch
from .graph import Graph

__all__ = ["OpCall", "record", "is_leaf_module"]


class OpCall:
    """A call_function target: calls its op-table entry through `_dispatch.apply` (so it records on the tape)."""

    __slots__ = ("op",)
    _cache = {}

    def __new__(cls, op):
        found = cls._cache.get(op)
        if found is None:
            found = cls._cache[op] = object.__new__(cls)
            found.op = op
        return found

    @property
    def __name__(self):
        return self.op.name

    def __call__(self, *args, **kwargs):
        return _dispatch.apply(self.op, *args, **kwargs)

    def __repr__(self):
        return f"tapegrad.ops.{self.op.name}"


def is_leaf_module(module):
    from ..nn import ModuleDict, ModuleList, Sequential
    return type(module).__module__.startswith("tapegrad.nn") and not isinstance(
        module, (Sequential, ModuleList, ModuleDict))


class _Recorder:
    def __init__(self, root):
        self.graph = Graph()
        self.root = root
        self.by_value = {}     # id(value held) -> node
        self.keep = []         # the values and tensors matched, alive until the trace ends (ids stay theirs)
        self.attrs = {}        # id(value) -> qualified name of a root parameter or buffer
        self.constants = {}    # attribute name -> tensor
        self.depth = 0         # > 0 inside a leaf module's call
        self.module_names = {}
        if root is not None:
            for name, t in list(root.named_parameters()) + list(root.named_buffers()):
                self.attrs[id(t._peek())] = name
                self.keep.append(t)
            self.module_names = {id(m): name for name, m in root.named_modules() if name}

    def bind(self, tensor, node):
        value = tensor._peek()
        self.by_value[id(value)] = node
        self.keep.append(value)

    def node_for(self, tensor):
        value = tensor._peek()
        node = self.by_value.get(id(value))
        if node is not None:
            return node
        name = self.attrs.get(id(value))
        if name is None:
            name = f"_tensor_constant{len(self.constants)}"
            self.constants[name] = tensor
        node = self.graph.get_attr(name)
        self.bind(tensor, node)
        return node

    def to_graph(self, value):
        from .._tensor import Tensor
        if isinstance(value, Tensor):
            return self.node_for(value)
        if isinstance(value, tuple) and hasattr(value, "_fields"):   # a named tuple (torch.return_types)
            return type(value)(*(self.to_graph(v) for v in value))
        if isinstance(value, (tuple, list)):
            return type(value)(self.to_graph(v) for v in value)
        if isinstance(value, dict):
            return {k: self.to_graph(v) for k, v in value.items()}
        return value

    def bind_outputs(self, value, node):
        """Bind every tensor in a (nested) result to node, through getitem nodes."""
        from .._tensor import Tensor
        if isinstance(value, Tensor):
            self.bind(value, node)
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                if _holds_tensor(v):
                    self.bind_outputs(v, self.graph.call_function(operator.getitem, (node, i)))

    # observer of _dispatch.apply
    def __call__(self, op, static, sig, args, result):
        if self.depth:
            return
        node = self.graph.call_function(OpCall(op), self.to_graph(tuple(args)), dict(static))
        self.bind_outputs(result, node)

    def call_module(self, module, args, kwargs):
        name = self.module_names.get(id(module))
        if self.depth or name is None or not is_leaf_module(module):
            return module.forward(*args, **kwargs)
        graph_args, graph_kwargs = self.to_graph(tuple(args)), self.to_graph(dict(kwargs))
        self.depth += 1
        try:
            out = module.forward(*args, **kwargs)
        finally:
            self.depth -= 1
        self.bind_outputs(out, self.graph.call_module(name, graph_args, graph_kwargs))
        return out


def _holds_tensor(value):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return True
    return isinstance(value, (tuple, list)) and any(_holds_tensor(v) for v in value)


@contextlib.contextmanager
def _leaf_calls(recorder):
    """Module calls go through the recorder while it records (torch.fx patches Module.__call__ the same way)."""
    from ..nn import Module
    original = Module.__call__

    def call(module, *args, **kwargs):
        if recorder.module_names.get(id(module)) is None or not is_leaf_module(module) or recorder.depth:
            return original(module, *args, **kwargs)
        return recorder.call_module(module, args, kwargs)
    Module.__call__ = call
    try:
        yield
    finally:
        Module.__call__ = original


def placeholder_names(fn, count):
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:count]]
    return names + [f"arg{i}" for i in range(len(names), count)]


def record(root, fn, example_inputs):
    """Run fn(*example_inputs) once, recording its ops; returns (graph, constants, result)."""
    recorder = _Recorder(root)
    from .._tensor import Tensor
    for name, x in zip(placeholder_names(fn, len(example_inputs)), example_inputs):
        node = recorder.graph.placeholder(name)
        if isinstance(x, Tensor):
            recorder.bind(x, node)
    _dispatch.OBSERVERS.append(recorder)
    try:
        with _leaf_calls(recorder):
            result = fn(*example_inputs)
    finally:
        _dispatch.OBSERVERS.remove(recorder)
    recorder.graph.output(recorder.to_graph(result))
    return recorder.graph, recorder.constants, result

