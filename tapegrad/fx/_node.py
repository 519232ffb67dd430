"""Node: one operation of an fx Graph (its arguments, users and place), and how nodes and targets print."""
import numpy as np

__all__ = ["Node"]


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
