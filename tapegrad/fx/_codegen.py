"""Code generation: an fx Graph as the Python source of a `forward` method, and the globals it reads."""
import builtins
import keyword
import operator
import re

import jax.numpy as jnp
import numpy as np

from ._node import Node, _public_path


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
