"""Graph: PyTorch's torch.fx IR, as data (the recorder in _tracer.py fills it): its nodes in order, their editing
and checks (Node is in _node.py, the Python source in _codegen.py)."""
import builtins
import contextlib
import inspect
import keyword
import re

from ._codegen import _codegen
from ._node import Node, _fmt, _map_nodes, _target_name

__all__ = ["Graph", "Node"]


class Graph:
    """The nodes of a traced program, in execution order."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._nodes = []
        self._names = set()
        self._insert = None   # (anchor node, 0 before / 1 after), or None: before the output node
        self.owning_module = owning_module

    @property
    def nodes(self):
        return _NodeList(self._nodes)

    def create_node(self, op, target, args=(), kwargs=None, name=None, type_expr=None):
        """Append a node (before the output node, if there is one)."""
        if op not in _LEGAL_OPS:
            raise ValueError(f"Node op must be one of {sorted(_LEGAL_OPS)}, got {op!r}.")
        node = Node(self, self._unique(name or _default_name(op, target)), op, target, args, kwargs or {})
        if self._insert is not None:
            anchor, after = self._insert
            self._nodes.insert(self._nodes.index(anchor) + after, node)
        elif self._nodes and self._nodes[-1].op == "output":
            self._nodes.insert(len(self._nodes) - 1, node)
        else:
            self._nodes.append(node)
        return node

    def _move(self, node, index, anchor, after):
        self._nodes.remove(node)
        self._nodes.insert(index(anchor) + after, node)

    @contextlib.contextmanager
    def _inserting(self, where):
        previous, self._insert = self._insert, where
        try:
            yield
        finally:
            self._insert = previous

    def inserting_before(self, n=None):
        """New nodes go just before n (in the order they are made); n None: at the start of the graph."""
        if n is None:
            return self.inserting_after(None) if not self._nodes else self._inserting((self._nodes[0], 0))
        return self._inserting((n, 0))

    def inserting_after(self, n=None):
        """Each new node goes just after n (so, as in torch.fx, several read in reverse); n None: at the end."""
        if n is None:
            return self._inserting(None)
        return self._inserting((n, 1))

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, name=qualified_name.replace(".", "_"))

    def call_function(self, the_function, args=(), kwargs=None, type_expr=None):
        return self.create_node("call_function", the_function, args, kwargs)

    def call_method(self, method_name, args=(), kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs)

    def call_module(self, module_name, args=(), kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, name=module_name.replace(".", "_"))

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), name="output")

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of node (from any graph) in this one, its input nodes mapped by arg_transform."""
        args = _map_nodes(node.args, arg_transform)
        kwargs = _map_nodes(node.kwargs, arg_transform)
        copy = self.create_node(node.op, node.target, args, kwargs, name=node.name)
        copy.meta = dict(node.meta)
        return copy

    def eliminate_dead_code(self):
        """Erase nodes without users that are pure (no placeholder, output or call of unknown effect); True if any."""
        changed = False
        for node in reversed(self._nodes):
            if node.op in ("call_function", "call_method", "get_attr") and not node.users and not _impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def lint(self):
        """Check the graph is well formed: PyTorch's messages for nodes used before they are defined."""
        seen, names = set(), set()
        for node in self._nodes:
            if node.op not in _LEGAL_OPS:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node.all_input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(
                        f"Argument '{arg}' of Node '{node}' does not belong to this Graph, but was used as an "
                        f"argument! If you are copying nodes from another graph, make sure to use ``arg_transform`` "
                        f"on node_copy() to remap values\n{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       f"Please check that Nodes in the graph are topologically ordered\n{self}")
            seen.add(node)
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
        if self.owning_module is not None:
            for node in self._nodes:
                if node.op == "call_function" and not callable(node.target):
                    raise ValueError(f"Node {node} target {node.target} has type {type(node.target).__name__} but "
                                     "a Callable is expected")
                if node.op in ("get_attr", "call_module"):
                    _check_target(self.owning_module, node)

    def print_tabular(self):
        """The nodes as a table (opcode, name, target, args, kwargs), in tabulate's plain layout."""
        rows = [[n.op, n.name, _target_name(n.target), _fmt(n.args, plain=True), str(n.kwargs)] for n in self._nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        widths = [max(len(str(x)) for x in column) for column in zip(headers, *rows)]
        lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)),
                 "  ".join("-" * w for w in widths)]
        lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip() for row in rows]
        print("\n".join(line.rstrip() for line in lines))

    def erase_node(self, to_erase):
        node = to_erase
        if node.users:
            raise RuntimeError(f"Tried to erase Node {node} but it still had {len(node.users)} users in the graph: "
                               f"{node.users}! Replace its uses first (node.replace_all_uses_with).")
        node.args, node.kwargs = (), {}
        self._nodes.remove(node)

    def _unique(self, name):
        name = re.sub(r"\W+", "_", name) or "_"
        if name[0].isdigit():
            name = "_" + name
        base, n = name, 0
        while name in self._names or keyword.iskeyword(name) or hasattr(builtins, name) or name in _RESERVED:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        return name

    def __str__(self):
        lines = ["graph():"] + ["    " + n.format_node() for n in self._nodes]
        return "\n".join(lines)

    def python_code(self, root_module="self"):
        """The graph as Python source of a `forward` method, and the globals it needs."""
        return _codegen(self, root_module)


_RESERVED = {"self", "tapegrad", "operator", "jnp", "forward"}
_LEGAL_OPS = {"placeholder", "get_attr", "call_function", "call_method", "call_module", "output"}


def _impure(node):
    """A call kept without users: profiler ranges (their effect is the range), a specialized argument's check."""
    return node.op == "call_function" and (getattr(node.target, "__module__", "") == "tapegrad.ops.profiler"
                                           or getattr(node.target, "_fx_impure", False))


def _check_target(root, node):
    from ..nn import Module
    obj, seen = root, ""
    for atom in node.target.split("."):
        if not hasattr(obj, atom):
            raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {atom} of "
                               f"{seen or 'root'}")
        obj = getattr(obj, atom)
        seen = f"{seen}.{atom}" if seen else atom
    if node.op == "call_module" and not isinstance(obj, Module):
        raise RuntimeError(f"Node {node} target {node.target} {atom} of {seen} does not reference an nn.Module")


class _NodeList:
    def __init__(self, nodes):
        self._nodes = nodes

    def __iter__(self):
        return iter(list(self._nodes))

    def __len__(self):
        return len(self._nodes)

    def __reversed__(self):
        return reversed(list(self._nodes))


def _default_name(op, target):
    if op == "output":
        return "output"
    if op in ("call_module", "get_attr", "placeholder"):
        return str(target).replace(".", "_")
    if op == "call_method":
        return str(target)
    return getattr(target, "__name__", None) or getattr(target, "name", None) or "node"
