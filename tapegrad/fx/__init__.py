"""tapegrad.fx (PyTorch's torch.fx): a program as a Graph of nodes, traced two ways.

* `symbolic_trace(root)` and `Tracer().trace(root)` trace symbolically, as torch.fx does: forward runs
  once on Proxy objects, and the graph holds what the code called: `operator.add` for `x + y`,
  `tapegrad.add` for `tapegrad.add(x, y)`, call_method "add" for `x.add(y)`, submodules from
  tapegrad.nn as call_module leaves, parameters and buffers as get_attr. No value is computed, and
  control flow that reads a tensor raises TraceError, as in PyTorch. Proxies built by hand
  (`Proxy(node, GraphAppendingTracer(graph))`) append nodes to an existing graph. Importing
  tapegrad.fx makes tapegrad's public functions accept Proxies (see _proxy_functions.py).
* `symbolic_trace(root, example_inputs=(x, ...))` (tapegrad's own) records the ops one real call
  puts on the tape instead: shapes are the example's, control flow is resolved by the example (as
  torch.jit.trace), and targets are op-table entries (`tapegrad.ops.addmm`), not the Python calls;
  in-place ops are recorded as their functional op, random draws as constants. This traces code
  that symbolic tracing cannot (a branch on a tensor's value), at the cost of specialising to it.
"""
from . import _proxy_functions
from ._node import Node
from ._symbolic_trace import PH, Tracer, wrap
from ._tracer import record
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter
from .node import map_arg
from .proxy import Proxy
from . import passes
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "Graph", "GraphModule", "Node", "Proxy", "wrap", "replace_pattern", "map_arg",
           "Interpreter", "PH"]

_proxy_functions.install()


def symbolic_trace(root, concrete_args=None, *, example_inputs=None):
    """A GraphModule of root (a module or a function): traced with Proxies, or, given example_inputs,
    recorded from one real call root(*example_inputs) (see the module docstring)."""
    from ..nn import Module
    name = type(root).__name__ if isinstance(root, Module) else getattr(root, "__name__", "GraphModule")
    if example_inputs is None:
        tracer = Tracer()
        graph = tracer.trace(root, concrete_args)
        return GraphModule(tracer.root, graph, name)
    if concrete_args is not None:
        raise ValueError("tapegrad.fx.symbolic_trace: concrete_args is for symbolic tracing; a recording from "
                         "example_inputs has every argument concrete already. Pass one or the other.")
    module = root if isinstance(root, Module) else Module()
    signature_of = root.forward if isinstance(root, Module) else root
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    graph, constants, _ = record(module, _named(root, signature_of), tuple(example_inputs))
    return GraphModule(module, graph, name, constants)


def _named(fn, signature_of):
    """fn called as itself, with the parameter names of signature_of (the placeholders' names)."""
    import functools

    @functools.wraps(signature_of)
    def call(*args):
        return fn(*args)
    return call
