"""tapegrad.fx (PyTorch's torch.fx): a module's forward as a Graph of the ops it records on the tape.

`symbolic_trace(root)` does not trace symbolically, as torch.fx does with Proxy objects: tapegrad
records the ops that one real call puts on the tape (shapes and dtypes are known, no value is
computed: ops are deferred). So:

* the graph holds op-table entries (`tapegrad.ops.addmm`, `tapegrad.ops.view`...) as call_function
  targets, not the Python functions or tensor methods the code called (there are no call_method
  nodes); submodules from tapegrad.nn are call_module leaves as in torch.fx, parameters and buffers
  of the root get_attr nodes, tensors made inside the call `_tensor_constant<i>` get_attr nodes;
* Python control flow is resolved by the example (as torch.jit.trace, where torch.fx would raise
  on a branch that reads a tensor), and the graph is specialised to the example's shapes: statics
  such as a view's target shape are recorded values;
* in-place ops are recorded as their functional op: rerunning the graph does not write to its inputs;
* random draws made inside the call are part of the recording's constants, not drawn again.

Without example inputs the graph is recorded by the GraphModule's first call.
"""
from ._tracer import OpCall, is_leaf_module, record
from .graph import Graph, Node
from .graph_module import GraphModule

__all__ = ["symbolic_trace", "Graph", "Node", "GraphModule"]


def symbolic_trace(root, concrete_args=None, *, example_inputs=None):
    """A GraphModule recorded from root(*example_inputs) (a module or a function); see the module docstring."""
    from ..nn import Module
    if concrete_args is not None:
        raise NotImplementedError("tapegrad.fx.symbolic_trace records one real call, so every argument is "
                                  "concrete already: pass the values as example_inputs instead of concrete_args.")
    module = root if isinstance(root, Module) else Module()
    fn = root if isinstance(root, Module) else root
    name = type(root).__name__ if isinstance(root, Module) else getattr(root, "__name__", "GraphModule")
    signature_of = root.forward if isinstance(root, Module) else root
    recording = lambda r, f, args: record(r, _named(f, signature_of), tuple(args))
    if example_inputs is None:
        return GraphModule._traced_on_first_call(module, fn, name, recording)
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    graph, constants, _ = recording(module, fn, example_inputs)
    return GraphModule(module, graph, name, constants)


def _named(fn, signature_of):
    """fn called as itself, with the parameter names of signature_of (the placeholders' names)."""
    import functools

    @functools.wraps(signature_of)
    def call(*args):
        return fn(*args)
    return call
