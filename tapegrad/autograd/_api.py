"""backward() and grad(): PyTorch's torch.autograd.backward / torch.autograd.grad over the engine.

Checks the seeds, then runs the engine (`_engine.run_backward`) or, with create_graph, the recorded
backward (`_higher`); grad() also gives an input's gradient PyTorch's layout when it is the seed itself.
"""
import warnings

import jax.numpy as jnp

from .._grad_mode import set_grad_enabled
from .._memory_format import grad_like
from .._tensor import Tensor
from . import _higher
from ._engine import run_backward
from ._node import AccumulateGrad
from ._saved import SIGNATURES


def _as_list(x):
    if x is None:
        return None
    return [x] if isinstance(x, Tensor) else list(x)


def _seeds(outputs, grad_outputs):
    seeds = []
    grad_outputs = grad_outputs or [None] * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs: got {len(grad_outputs)} "
                           f"gradients for {len(outputs)} outputs")
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn. "
                               "Set requires_grad=True on an input (or compute under enable_grad()) first.")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs. Pass a gradient "
                                   "of the output's shape, e.g. y.backward(torch.ones_like(y)), or reduce "
                                   "first, e.g. y.sum().backward().")
            if not (out.dtype.is_floating_point or out.dtype.is_complex):
                raise RuntimeError("grad can be implicitly created only for real scalar outputs")
            seeds.append(None)
        else:
            value = g._value if isinstance(g, Tensor) else g
            if tuple(value.shape) != tuple(out.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"torch.Size({list(value.shape)}) and output[{i}] has a shape of "
                                   f"torch.Size({list(out.shape)}).")
            seeds.append(value.astype(out.dtype.np))
    return seeds


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the leaves' .grad (PyTorch's torch.autograd.backward)."""
    outputs = _as_list(tensors)
    grad_tensors = _as_list(grad_tensors)
    seeds = _seeds(outputs, grad_tensors)
    retain = bool(retain_graph) if retain_graph is not None else create_graph
    inputs = _as_list(inputs)
    if inputs is not None and not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty. Pass the tensors to accumulate "
                           "into, or inputs=None for all leaves.")
    if create_graph:
        _backward_create_graph(outputs, _seed_tensors(outputs, grad_tensors, seeds), retain, inputs)
        return
    if inputs is None:
        run_backward(outputs, seeds, retain)
        return
    grads = run_backward(outputs, seeds, retain, wanted=inputs, accumulate=False)
    for t, g in zip(inputs, grads):
        if g is None:
            continue
        if t._grad is None:
            t._grad = grad_like(t, g)
        else:
            t._grad._set_value(t._grad._value + g)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of outputs w.r.t. inputs, returned (not accumulated into .grad)."""
    single = isinstance(inputs, Tensor)
    outputs = _as_list(outputs)
    inputs = _as_list(inputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"One of the differentiated Tensors does not require grad")
    seeds = _seeds(outputs, _as_list(grad_outputs))
    retain = bool(retain_graph) if retain_graph is not None else create_graph
    # read off the graph before the backward frees it
    layouts = [_seed_layout(outputs[0], t) if grad_outputs is None and len(outputs) == 1 else None for t in inputs]
    if create_graph:
        graph, results, want_keys = _higher.run(outputs, _seed_tensors(outputs, _as_list(grad_outputs), seeds),
                                                retain, wanted=inputs)
        _higher.write_retained(graph, results)
        grads = [None if k is None else results.get(k) for k in want_keys]
    else:
        grads = [None if g is None else Tensor._wrap(g)
                 for g in run_backward(outputs, seeds, retain, wanted=inputs, accumulate=False)]
    result = []
    for index, (t, g, layout) in enumerate(zip(inputs, grads, layouts)):
        if g is not None and layout is not None:
            g = _seed_view(g, t, layout, create_graph)
        if g is None:
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {index} appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)


def _seed_tensors(outputs, grad_tensors, seeds):
    """create_graph keeps seeds as tensors: a seed that requires grad is differentiated too."""
    tensors = []
    for out, g, s in zip(outputs, grad_tensors or [None] * len(outputs), seeds):
        if s is None:
            tensors.append(None)
        elif isinstance(g, Tensor):
            tensors.append(g if g.dtype == out.dtype else g.to(out.dtype))
        else:
            tensors.append(Tensor._wrap(s))
    return tensors


_warned = [False]


def _backward_create_graph(outputs, seeds, retain, inputs):
    if inputs is None and not _warned[0]:   # once per process, as PyTorch
        _warned[0] = True
        warnings.warn(_higher.REFERENCE_CYCLE, UserWarning, stacklevel=4)
    graph, results, want_keys = _higher.run(outputs, seeds, retain, wanted=inputs)
    if inputs is None:
        _higher.write_grads(graph, results, graph.hooked)
        return
    for t, k in zip(inputs, want_keys):
        g = None if k is None else results.get(k)
        if g is not None:
            t._grad = _higher.accumulate(t._grad, g, leaf=t)


# How PyTorch's backward formula of an op hands on the incoming gradient: as a view of it, expanded (sum's
# backward), or the very tensor (positions listed); other ops make a fresh tensor.
_VIEWS = frozenset({"view", "transpose", "t", "permute", "unsqueeze", "squeeze", "alias", "index_alias", "reshape_alias",
                    "reshape_copy"})
_SAME = {"clone": (0,), "add": (0, 1), "sub": (0,), "add_scaled": (0,), "expand": (0,)}   # expand: sum_to of an equal shape


def _seed_layout(root, t):
    """When t's gradient is, in PyTorch, the implicit seed handed down a chain of such ops alone: "expanded"
    (a sum on the way: all strides 0, which refuses in-place ops) or "view"; both are views made under
    no_grad (unless create_graph), which refuse in-place ops recording history. None otherwise (a fresh tensor)."""
    wanted = t._edge()
    layout = None
    edges = [root._edge()]
    while True:
        if edges[0] == wanted:
            return layout
        node = edges[0][0]
        if type(node) is AccumulateGrad or node.kept is None:
            return None
        edges = [e for e in node.edges if e is not None]
        if len(edges) != 1:
            return None
        position = node.edges.index(edges[0])
        op, static = node.op.name, dict(SIGNATURES[node.sig][1])
        if op == "sum" and static.get("dtype") is None:
            layout = "expanded"
        elif op in _VIEWS:
            layout = layout or "view"
        elif position not in _SAME.get(op, ()) or not _same_aval(node, position):
            return None


def _same_aval(node, position):
    # the gradient is handed on as is only where no reduction (broadcast) or cast (promotion) is needed
    arg = node.kept[position]
    kind = (arg.shape, arg.dtype) if hasattr(arg, "shape") else SIGNATURES[node.sig][4][position]
    if type(kind) is not tuple:
        return False
    shape, dtype = node.avals[0]
    return tuple(kind[0]) == tuple(shape) and kind[1] == dtype


def _seed_view(g, t, layout, create_graph):
    seed = Tensor._wrap(jnp.ones((), g.dtype.np))
    # PyTorch's engine runs the backward in grad mode only with create_graph: only then is the view an
    # ordinary one, which in-place ops may change
    with set_grad_enabled(create_graph):
        return seed.expand(tuple(t.shape)) if layout == "expanded" else seed.reshape(tuple(t.shape))

