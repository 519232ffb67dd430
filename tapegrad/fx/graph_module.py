"""GraphModule: an nn.Module whose forward is the Python code generated from its Graph."""
from ..nn import Module
from .graph import Graph

__all__ = ["GraphModule"]


def _copy_attr(source, target, qualified_name):
    """Make target.<qualified_name> the object source.<qualified_name> (intermediate modules created empty)."""
    *path, field = qualified_name.split(".")
    for part in path:
        source = getattr(source, part)
        child = getattr(target, part, None)
        if child is None:
            child = Module()
            setattr(target, part, child)
        target = child
    setattr(target, field, getattr(source, field))


class GraphModule(Module):
    """A module made from a Graph: the root's submodules and attributes the graph names are copied in (by
    reference), and `forward` is `self.code` compiled. After editing `self.graph`, call `recompile()`."""

    def __init__(self, root, graph, class_name="GraphModule", constants=None):
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {})
        self._graph = None
        self._pending = None
        if graph is not None:
            self._install(root, graph, constants or {})

    def _install(self, root, graph, constants):
        for name, value in constants.items():
            object.__setattr__(self, name, value)
        for node in graph.nodes:
            if node.op in ("get_attr", "call_module") and node.target not in constants:
                if isinstance(root, dict):
                    self._set_named(node.target, root[node.target])
                else:
                    _copy_attr(root, self, node.target)
        self._graph = graph
        self.recompile()

    @classmethod
    def _traced_on_first_call(cls, root, fn, class_name, record):
        """A GraphModule whose graph is recorded by its first call (symbolic_trace without example inputs)."""
        gm = cls(root, None, class_name)
        gm._pending = (root, fn, record)

        def forward(self, *args):
            root, fn, record = self._pending
            graph, constants, _ = record(root, fn, args)
            self._pending = None
            self._install(root, graph, constants)
            return self.forward(*args)
        type(gm).forward = forward
        return gm

    def _set_named(self, name, value):
        from ..nn import Parameter
        from .._tensor import Tensor
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            self.register_buffer(name, value)
        else:
            setattr(self, name, value)

    @property
    def graph(self):
        self._require_graph()
        return self._graph

    def _require_graph(self):
        if self._graph is None:
            raise RuntimeError(
                "This GraphModule has no graph yet: tapegrad.fx records the ops one call runs. Call it once "
                "(gm(x)) or trace with example inputs: tapegrad.fx.symbolic_trace(model, example_inputs=(x,)).")

    @graph.setter
    def graph(self, graph):
        self._graph = graph
        self.recompile()

    @property
    def code(self):
        self._require_graph()
        return self._code

    def recompile(self):
        """Generate `code` (and forward) from the graph again."""
        code, namespace = self._graph.python_code("self")
        exec(compile(code, "<tapegrad.fx generated>", "exec"), namespace)
        self._code = code
        type(self).forward = namespace["forward"]
        return code

    def print_readable(self, print_output=True):
        text = f"class {type(self).__name__}(tapegrad.nn.Module):{self._code}"
        if print_output:
            print(text)
        return text

    def __str__(self):
        return super().__str__() + "\n\n\n" + (self._code if self._graph is not None else "")

    def __repr__(self):
        return super().__repr__()
