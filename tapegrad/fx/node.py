"""tapegrad.fx.node (PyTorch's torch.fx.node): Node, and map_arg over the nodes in a node's arguments."""
import typing

from ._node import Node, _map_nodes

__all__ = ["Node", "map_arg", "map_aggregate", "Target", "Argument"]

Target = typing.Union[typing.Callable[..., typing.Any], str]   # a call's target: a function, or a name
Argument = typing.Optional[typing.Any]                         # a node argument: nodes, literals, containers of them


def map_arg(a, fn):
    """a with every Node in it (in tuples, lists, dicts, slices) replaced by fn(node)."""
    if not callable(fn):
        raise TypeError("torch.fx.map_arg(a, fn): fn must be a callable")
    return _map_nodes(a, fn)


def map_aggregate(a, fn):
    """a with every leaf value (not only Nodes) replaced by fn(value)."""
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        return type(a)(*(map_aggregate(v, fn) for v in a))
    if isinstance(a, (tuple, list)):
        return type(a)(map_aggregate(v, fn) for v in a)
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)
