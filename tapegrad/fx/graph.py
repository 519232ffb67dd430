"""Graph and Node: PyTorch's torch.fx IR, as data (the recorder in _tracer.py fills it)."""
import builtins
import keyword
import operator
import re

import jax.numpy as jnp
import numpy as np

__all__ = ["Graph", "Node"]


class Node:
    """One operation: op is placeholder, get_attr, call_function, call_module, call_method or output."""

    def __init__(self, graph, name, op, target, args, kwargs):
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self.users = {}
        self._args, self._kwargs = (), {}
        self.args, self.kwargs = tuple(args), dict(kwargs)
        self.meta = {}

    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, value):
        self._rewire(lambda: setattr(self, "_args", tuple(value)))

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value):
        self._rewire(lambda: setattr(self, "_kwargs", dict(value)))

    def _rewire(self, change):
        for n in self.all_input_nodes:
            n.users.pop(self, None)
        change()
        for n in self.all_input_nodes:
            n.users[self] = None

    @property
    def all_input_nodes(self):
        found = {}
        _map_nodes((self._args, self._kwargs), lambda n: found.setdefault(n, None))
        return list(found)

    def replace_all_uses_with(self, replace_with):
        """Every node that reads this one reads `replace_with` instead; returns those nodes."""
        users = list(self.users)
        for user in users:
            swap = lambda n: replace_with if n is self else n
            user.args, user.kwargs = _map_nodes(user.args, swap), _map_nodes(user.kwargs, swap)
        return users

    def format_node(self):
        head = f"%{self.name} : [num_users={len(self.users)}] = "
        if self.op == "output":
            return f"return {_fmt(self.args[0], plain=True)}"
        if self.op in ("placeholder", "get_attr"):
            return f"{head}{self.op}[target={self.target}]"
        return (f"{head}{self.op}[target={_target_name(self.target)}](args = {_fmt(tuple(self.args))}, "
                f"kwargs = {{{', '.join(f'{k}: {_fmt(v)}' for k, v in self.kwargs.items())}}})")

    def __repr__(self):
        return self.name


class Graph:
    """The nodes of a traced program, in execution order."""

    def __init__(self):
        self._nodes = []
        self._names = set()

    @property
    def nodes(self):
        return _NodeList(self._nodes)

    def create_node(self, op, target, args=(), kwargs=None, name=None):
        """Append a node (before the output node, if there is one)."""
        node = Node(self, self._unique(name or _default_name(op, target)), op, target, args, kwargs or {})
        if self._nodes and self._nodes[-1].op == "output":
            self._nodes.insert(len(self._nodes) - 1, node)
        else:
            self._nodes.append(node)
        return node

    def placeholder(self, name):
        return self.create_node("placeholder", name, name=name)

    def get_attr(self, qualified_name):
        return self.create_node("get_attr", qualified_name, name=qualified_name.replace(".", "_"))

    def call_function(self, the_function, args=(), kwargs=None):
        return self.create_node("call_function", the_function, args, kwargs)

    def call_module(self, module_name, args=(), kwargs=None):
        return self.create_node("call_module", module_name, args, kwargs, name=module_name.replace(".", "_"))

    def output(self, result):
        return self.create_node("output", "output", (result,), name="output")

    def erase_node(self, node):
        if node.users:
            raise RuntimeError(f"Tried to erase Node {node} but it still had {len(node.users)} users in the graph: "
                               f"{node.users}! Replace its uses first (node.replace_all_uses_with).")
        node.args, node.kwargs = (), {}
        self._nodes.remove(node)

    def _unique(self, name):
        name = re.sub(r"\W", "_", name) or "_"
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
    if op in ("call_module", "get_attr", "placeholder"):
        return str(target).replace(".", "_")
    if op == "call_method":
        return str(target)
    return getattr(target, "__name__", None) or getattr(target, "name", None) or "node"


def _target_name(target):
    if isinstance(target, str):
        return target
    if target is operator.getitem:
        return "operator.getitem"
    return repr(target) if hasattr(target, "op") else f"{getattr(target, '__module__', '')}.{target.__name__}"


def _map_nodes(value, fn):
    if isinstance(value, Node):
        return fn(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_map_nodes(v, fn) for v in value))
    if isinstance(value, tuple):
        return tuple(_map_nodes(v, fn) for v in value)
    if isinstance(value, list):
        return [_map_nodes(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map_nodes(v, fn) for k, v in value.items()}
    return value


def _fmt(value, plain=False):
    if isinstance(value, Node):
        return value.name if plain else f"%{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(_fmt(v, plain) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v, plain) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt(v, plain)}" for k, v in value.items()) + "}"
    if isinstance(value, np.dtype):
        return str(value)
    return repr(value)


# ---- code generation --------------------------------------------------------------------------------

def _attribute(root, qualified_name):
    # self.layer.weight, or getattr(self, "0") for names that are not identifiers (Sequential's children)
    out = root
    for part in qualified_name.split("."):
        out = f"{out}.{part}" if part.isidentifier() and not keyword.iskeyword(part) else f"getattr({out}, {part!r})"
    return out


def _codegen(graph, root):
    globals_ = {"operator": operator, "jnp": jnp}
    constants = {}

    def literal(value):
        if isinstance(value, Node):
            return value.name
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return f"{literal(type(value))}({', '.join(literal(v) for v in value)})"
        if isinstance(value, (tuple, list)):
            inner = ", ".join(literal(v) for v in value)
            if isinstance(value, tuple):
                return f"({inner},)" if len(value) == 1 else f"({inner})"
            return f"[{inner}]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {literal(v)}" for k, v in value.items()) + "}"
        if isinstance(value, np.dtype):
            return f"jnp.dtype({str(value)!r})"
        if value is None or isinstance(value, (bool, int, str)) or (
                isinstance(value, float) and np.isfinite(value)):
            return repr(value)
        name = f"_c{len(constants)}"
        constants[name] = value
        return name

    ops = {}
    params, body = [], []
    for node in graph._nodes:
        args = ", ".join([literal(a) for a in node.args] + [f"{k}={literal(v)}" for k, v in node.kwargs.items()])
        if node.op == "placeholder":
            params.append(node.name)
        elif node.op == "get_attr":
            body.append(f"{node.name} = {_attribute(root, node.target)}")
        elif node.op == "call_module":
            body.append(f"{node.name} = {_attribute(root, node.target)}({args})")
        elif node.op == "call_method":
            obj, rest = node.args[0], node.args[1:]
            inner = ", ".join([literal(a) for a in rest] + [f"{k}={literal(v)}" for k, v in node.kwargs.items()])
            body.append(f"{node.name} = {literal(obj)}.{node.target}({inner})")
        elif node.op == "call_function" and node.target is operator.getitem:
            body.append(f"{node.name} = {literal(node.args[0])}[{literal(node.args[1])}]")
        elif node.op == "call_function":
            if hasattr(node.target, "op"):   # an op-table entry: tapegrad.ops.<name>
                ops[node.target.op.name] = node.target
                body.append(f"{node.name} = tapegrad.ops.{node.target.op.name}({args})")
            else:
                name = f"_f{len(constants)}"
                constants[name] = node.target
                body.append(f"{node.name} = {name}({args})")
        elif node.op == "output":
            body.append(f"return {literal(node.args[0])}")
    import types
    globals_["tapegrad"] = types.SimpleNamespace(ops=types.SimpleNamespace(**ops))
    globals_.update(constants)
    code = f"\n\ndef forward({', '.join([root] + params)}):\n" + "".join(f"    {line}\n" for line in body) + "    "
    return code, globals_
