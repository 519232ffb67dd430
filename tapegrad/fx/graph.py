"""Graph and Node: PyTorch's torch.fx IR, as data (the recorder in _tracer.py fills it)."""
import builtins
import contextlib
import inspect
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

    def replace_input_with(self, old_input, new_input):
        swap = lambda n: new_input if n is old_input else n
        self.args, self.kwargs = _map_nodes(self.args, swap), _map_nodes(self.kwargs, swap)

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    @property
    def next(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i + 1] if i + 1 < len(nodes) else None

    @property
    def prev(self):
        nodes = self.graph._nodes
        i = nodes.index(self)
        return nodes[i - 1] if i else None

    def prepend(self, x):
        """Move node x to just before this one."""
        self.graph._move(x, self.graph._nodes.index, self, 0)

    def append(self, x):
        """Move node x to just after this one."""
        self.graph._move(x, self.graph._nodes.index, self, 1)

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


def _target_name(target):
    if isinstance(target, str):
        return target
    if getattr(target, "__module__", None) == "_operator":
        return f"operator.{target.__name__}"
    if hasattr(target, "op"):
        return repr(target)
    return _public_path(target) or f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', target)}"


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
    if isinstance(value, slice):
        return slice(_map_nodes(value.start, fn), _map_nodes(value.stop, fn), _map_nodes(value.step, fn))
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


_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
           operator.mod: "%", operator.pow: "**", operator.matmul: "@", operator.lshift: "<<", operator.rshift: ">>",
           operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~"}


def _public_path(fn):
    """'tapegrad.nn.functional.relu' for a function reachable under that name, else None."""
    import sys
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        return None
    for module in ("tapegrad", "tapegrad.nn.functional", "tapegrad.linalg", "tapegrad.ops.profiler"):
        namespace = sys.modules.get(module)
        if namespace is not None and getattr(namespace, name, None) is fn:
            return f"{module}.{name}"
    return None


def _codegen(graph, root):
    import tapegrad
    globals_ = {"operator": operator, "jnp": jnp, "tapegrad": tapegrad}
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
        if isinstance(value, slice):
            return f"slice({literal(value.start)}, {literal(value.stop)}, {literal(value.step)})"
        if isinstance(value, np.dtype):
            return f"jnp.dtype({str(value)!r})"
        if value is None or value is Ellipsis or isinstance(value, (bool, int, str)) or (
                isinstance(value, float) and np.isfinite(value)):
            return repr(value)
        name = f"_c{len(constants)}"
        constants[name] = value
        return name

    def function(target):
        if hasattr(target, "op") and type(target).__name__ == "OpCall":   # an op-table entry
            return f"tapegrad.ops.{target.op.name}"
        path = _public_path(target)
        if path is not None:
            return path
        base = re.sub(r"\W", "_", f"{getattr(target, '__module__', None) or ''}_{getattr(target, '__name__', 'fn')}")
        name = base if base not in globals_ and base not in constants else f"{base}_{len(constants)}"
        if constants.get(base) is target:
            return base
        constants[name] = target
        return name

    params, body = [], []
    for node in graph._nodes:
        args = ", ".join([literal(a) for a in node.args] + [f"{k}={literal(v)}" for k, v in node.kwargs.items()])
        target = node.target
        if node.op == "placeholder":   # the parameter is the target (`*args`); the node's name is bound to it
            default = f" = {literal(node.args[0])}" if node.args else ""
            params.append(f"{target}{default}")
            if target.lstrip("*") != node.name:
                body.append(f"{node.name} = {target.lstrip('*')}")
        elif node.op == "get_attr":
            body.append(f"{node.name} = {_attribute(root, target)}")
        elif node.op == "call_module":
            body.append(f"{node.name} = {_attribute(root, target)}({args})")
        elif node.op == "call_method":
            obj, rest = node.args[0], node.args[1:]
            inner = ", ".join([literal(a) for a in rest] + [f"{k}={literal(v)}" for k, v in node.kwargs.items()])
            body.append(f"{node.name} = {literal(obj)}.{target}({inner})")
        elif node.op == "call_function" and target is operator.getitem and not node.kwargs:
            body.append(f"{node.name} = {literal(node.args[0])}[{literal(node.args[1])}]")
        elif node.op == "call_function" and target is builtins.getattr and len(node.args) == 2 \
                and isinstance(node.args[1], str) and node.args[1].isidentifier():
            body.append(f"{node.name} = {literal(node.args[0])}.{node.args[1]}")
        elif node.op == "call_function" and target in _BINARY and len(node.args) == 2 and not node.kwargs:
            body.append(f"{node.name} = {literal(node.args[0])} {_BINARY[target]} {literal(node.args[1])}")
        elif node.op == "call_function" and target in _UNARY and len(node.args) == 1 and not node.kwargs:
            body.append(f"{node.name} = {_UNARY[target]}{literal(node.args[0])}")
        elif node.op == "call_function":
            body.append(f"{node.name} = {function(target)}({args})")
        elif node.op == "output":
            body.append(f"return {literal(node.args[0])}")
    globals_.update(constants)
    code = f"\n\ndef forward({', '.join([root] + params)}):\n" + "".join(f"    {line}\n" for line in body) + "    "
    return code, globals_
