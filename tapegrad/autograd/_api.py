"""backward() and grad(): PyTorch's torch.autograd.backward / torch.autograd.grad over the engine.

Checks the seeds, then runs the engine (`_engine.run_backward`) or, with create_graph, the recorded
backward (`_higher`); grad() also gives an input's gradient PyTorch's identity and layout where PyTorch's
backward formulas hand a gradient on as is or as a view (the seed itself, a view of it, a sum's expand).
"""

from collections.abc import Mapping

import jax.numpy as jnp

from .._flags import warn_once
from .._grad_mode import set_grad_enabled
from .._tensor import Tensor
from . import _higher, forward_ad
from ._engine import run_backward
from ._hooks import through_leaf_hooks
from ._node import AccumulateGrad
from ._saved import SIGNATURES
from .._user_frames import warn_user


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
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}. "
                                   "Pass a gradient of the output's shape and dtype, or take the real part first.")
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
    for t in inputs or ():
        t.retain_grad()   # (as PyTorch's engine: a non-leaf input's gradient accumulates as a retained one)
    if create_graph:
        _backward_create_graph(outputs, _seed_tensors(outputs, grad_tensors, seeds), retain, inputs)
        return
    run_backward(outputs, seeds, retain, wanted=inputs)   # (the leaves' hooks, .grad and post-accumulate hooks)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of outputs w.r.t. inputs, returned (not accumulated into .grad). inputs may be a dict: the
    gradients come back as a dict with its keys. is_grads_batched: each grad_output's first dim is a batch of
    them, and each gradient gets that dim first."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    keys = None
    if type(inputs) is dict:
        keys, inputs = list(inputs), list(inputs.values())
    elif isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not {type(inputs).__name__}. Other Mapping "
                        "types are not supported.")
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warn_user("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                  "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning)
    outputs = _as_list(outputs)
    retain = bool(retain_graph) if retain_graph is not None else create_graph
    if is_grads_batched:
        result = _batched(outputs, inputs, _as_list(grad_outputs), retain, create_graph, allow_unused,
                          materialize_grads)
    else:
        result = _grad(outputs, inputs, grad_outputs, retain, create_graph, allow_unused, materialize_grads)
    return result if keys is None else dict(zip(keys, result))


def _batched(outputs, inputs, grad_outputs, retain, create_graph, allow_unused, materialize_grads):
    """grad() with each grad_output a batch of them: one backward per batch element (the graph kept for the
    next), each input's gradients stacked (PyTorch vmaps its backward: the same values)."""
    grad_outputs = grad_outputs or [None] * len(outputs)
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(g, Tensor) and tuple(g.shape[1:]) != tuple(out.shape):
            # (PyTorch's message prints the batch element's shape without its first dim: kept as it is)
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of "
                f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
                f"torch.Size({list(g.shape[1:][1:])}) and output[{i}] has a shape of torch.Size({list(out.shape)}). "
                "If you only want some tensors in `grad_output` to be considered batched, consider using vmap.")
    sizes = [g.shape[0] for g in grad_outputs if isinstance(g, Tensor)]
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    n = sizes[0] if sizes else 1
    if n == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    per_element = [_grad(outputs, inputs, [g[k] if isinstance(g, Tensor) else g for g in grad_outputs],
                         retain or k < n - 1, create_graph, True, False) for k in range(n)]
    from .._creation import zeros_like
    from .._functional import stack
    result = []
    for j, t in enumerate(inputs):
        grads = [element[j] for element in per_element]
        if all(g is None for g in grads):
            result.append(None)
            continue
        result.append(stack([zeros_like(t) if g is None else g for g in grads]))
    return _unused(inputs, result, allow_unused, materialize_grads, create_graph)   # (zeros unbatched, as PyTorch's)


def _grad(outputs, inputs, grad_outputs, retain, create_graph, allow_unused, materialize_grads):
    seeds = _seeds(outputs, _as_list(grad_outputs))
    for t in inputs:   # (after the outputs' checks, as PyTorch's engine)
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    # read off the graph before the backward frees it; a fresh gradient a result is a view of is computed
    # besides the inputs' (their nodes still run: hooks fire, retained grads fill)
    recipes = [_recipe(outputs[0], t) if len(outputs) == 1 and not _hooked(t) else None for t in inputs]
    # Inside a forward-AD level PyTorch's gradients carry tangents even without create_graph: the
    # recorded backward computes them (_higher), and its results are then cut from the graph.
    recorded = create_graph or forward_ad.carried()
    seed_tensors = (_seed_tensors(outputs, _as_list(grad_outputs), seeds)
                    if recorded or any(r is not None and r[0] is None for r in recipes) else None)
    sources = list(dict.fromkeys(r[0] for r in recipes if r is not None and r[0] is not None))
    wanted = inputs + [_Output(edge) for edge in sources]
    if recorded:
        graph, results, want_keys = _higher.run(outputs, seed_tensors, retain, wanted=wanted)
        if not create_graph:
            results = {k: forward_ad.detached(g) for k, g in results.items()}
        _higher.write_retained(graph, results)
        if graph.hooked:   # (a wanted leaf's hooks: PyTorch runs them on the gradient it captures)
            results = through_leaf_hooks(graph.leaves, results)
        grads = [None if k is None else results.get(k) for k in want_keys]
    else:
        grads = [None if g is None else Tensor._wrap(g)
                 for g in run_backward(outputs, seeds, retain, wanted=wanted, accumulate=False)]
    fresh = dict(zip(sources, grads[len(inputs):]))
    for i, r in enumerate(recipes):
        if grads[i] is None or r is None:
            continue
        if r[0] is None:
            source = _implicit_seed(outputs[0]) if seed_tensors[0] is None else seed_tensors[0]
        else:
            source = fresh[r[0]]
        if source is not None:
            grads[i] = _formed(source, r[1], create_graph)
    return _unused(inputs, grads, allow_unused, materialize_grads, create_graph)


def _hooked(t):
    """Whether t has tensor hooks: its gradient is then what they return, not the seed or a view of it."""
    from ._hooks import gradient_hooks
    if t._grad_fn is None:
        return bool(gradient_hooks(t))
    return bool((t._grad_fn.hooks or {}).get(t._out_idx))


def _unused(inputs, grads, allow_unused, materialize_grads, create_graph):
    """The gradients, an unused input's refused unless allow_unused, or zeros with materialize_grads."""
    result = []
    for index, (t, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t, requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {index} appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.")
        result.append(g)
    return tuple(result)


def _implicit_seed(root):
    return Tensor._wrap(jnp.ones(tuple(root.shape), root.dtype.np))   # PyTorch's ones_like(output)


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
    if warn_once(_warned, 0):   # once per process, as PyTorch
        warn_user(_higher.REFERENCE_CYCLE, UserWarning)
    graph, results, _ = _higher.run(outputs, seeds, retain, wanted=inputs, accumulate=True)
    _higher.write_grads(graph, results, graph.hooked)


class _Output:
    """Output `_out_idx` of node `_grad_fn`, in the form the engine reads of a wanted tensor: the fresh
    gradient PyTorch's result is a view of."""
    __slots__ = ("_grad_fn", "_out_idx")

    def __init__(self, edge):
        self._grad_fn, self._out_idx = edge


def _recipe(root, t):
    """How PyTorch's autograd.grad forms t's gradient when a single chain of ops leads from root to t:
    (source, steps), the steps (Tensor methods and arguments) applied to the source, which is None for
    the seed itself or the edge whose gradient the last op making a fresh tensor hands on; None where t's
    gradient comes some other way (several paths, several inputs to an op)."""
    wanted, edge = t._edge(), root._edge()
    source, steps = None, []
    while edge != wanted:
        node = edge[0]
        if type(node) is AccumulateGrad or node.kept is None:
            return None
        live = [e for e in node.edges if e is not None]
        if len(live) != 1:
            return None
        edge = live[0]
        handed = _handed_on(node, node.edges.index(edge), _shape_of(edge))
        if handed is None:
            source, steps = edge, []
        else:
            steps.extend(handed)
    return source, steps


def _shape_of(edge):
    node, index = edge
    return tuple(node.variable.shape) if type(node) is AccumulateGrad else tuple(node.avals[index][0])


def _handed_on(node, position, shape):
    """The view steps by which node's backward turns its incoming gradient into the gradient of its
    input at `position` (of `shape`): [] for the gradient itself, None for a fresh tensor (Op.hands_grad)."""
    rule = node.op.hands_grad
    if rule is None:
        return None
    if type(rule) is tuple:
        return [] if position in rule and _same_aval(node, position) else None
    if getattr(rule, "by_position", False):   # (cat, stack: where in the output the input sat)
        if not _same_aval(node, position, shape_too=False):
            return None   # (a promoted input's gradient is cast: a fresh tensor)
        return rule(dict(SIGNATURES[node.sig][1]), [_kind(node, k)[0] for k in range(len(node.edges))], position)
    return rule(dict(SIGNATURES[node.sig][1]), shape, node.avals[0][0])


def _kind(node, position):
    """(shape, dtype) of the node's input at `position`, kept or not; else what the signature holds for it."""
    arg = node.kept[position]
    return (arg.shape, arg.dtype) if hasattr(arg, "shape") else SIGNATURES[node.sig][4][position]


def _same_aval(node, position, shape_too=True):
    # the gradient is handed on as is only where no reduction (broadcast) or cast (promotion) is needed
    kind = _kind(node, position)
    if type(kind) is not tuple:
        return False
    shape, dtype = node.avals[0]
    return (not shape_too or tuple(kind[0]) == tuple(shape)) and kind[1] == dtype


def _formed(g, steps, create_graph):
    # PyTorch's engine runs the backward in grad mode only with create_graph: only then are the views
    # ordinary ones, which in-place ops may change
    with set_grad_enabled(create_graph):
        for name, *args in steps:
            g = getattr(g, name)(*args)
    return g
