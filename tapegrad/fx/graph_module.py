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
    value = getattr(source, field)
    if field in getattr(source, "_buffers", {}):
        target.register_buffer(field, value)
    else:
        setattr(target, field, value)


class GraphModule(Module):
    """A module made from a Graph: the root's submodules and attributes the graph names are copied in (by
    reference), and `forward` is `self.code` compiled. After editing `self.graph`, call `recompile()`."""

    def __init__(self, root, graph, class_name="GraphModule", constants=None):
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {})
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
        graph.owning_module = self
        self.recompile()

    def _set_named(self, name, value):
        from ..nn import Parameter
        from .._tensor import Tensor
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            self.register_buffer(name, value)
        else:
            setattr(self, name, value)

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, graph):
        self._graph = graph
        graph.owning_module = self
        self.recompile()

    @property
    def code(self):
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
        return super().__str__() + "\n\n\n" + self._code

    def __repr__(self):
        return super().__repr__()
