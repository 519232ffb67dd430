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

    def add_submodule(self, target, m):
        """Install m at the dotted target, creating empty intermediate modules; False if a step is no Module."""
        *path, name = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                mod.add_module(item, Module())
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        mod.add_module(name, m)
        return True

    def delete_submodule(self, target):
        """Remove the submodule at the dotted target; False if target names no submodule."""
        *path, name = target.split(".")
        mod = self
        for item in path:
            mod = getattr(mod, item, None)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, name, None), Module):
            return False
        delattr(mod, name)
        return True

    def delete_all_unused_submodules(self):
        """Drop the submodules no call_module or get_attr node reaches (their parents and children kept)."""
        used = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr") and isinstance(node.target, str):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":
                    try:
                        submodule = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    used.update(f"{node.target}.{name}" for name, _ in submodule.named_modules() if name)
        for name in [name for name, _ in self.named_modules() if name not in used]:
            self.delete_submodule(name)

    def print_readable(self, print_output=True):
        text = f"class {type(self).__name__}(tapegrad.nn.Module):{self._code}"
        if print_output:
            print(text)
        return text

    def __str__(self):
        return super().__str__() + "\n\n\n" + self._code

    def __repr__(self):
        return super().__repr__()
