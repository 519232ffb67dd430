"""Walk a recorded graph and describe it as a hashable structure plus flat arrays.

The structure (ops, statics, wiring, which leaves already hold a .grad, which
tensors retain grad) is the cache key of the compiled backward; the arrays
(saved values, seeds, existing grads) are its arguments. Shapes and dtypes of
the arrays are left to jax.jit's own cache.
"""
import itertools
import operator
import weakref

from .._lazy import forget_inputs
from ._node import AccumulateGrad, Node
from ._saved import SIGNATURES, kept_positions, missing_at
from ._walk import sum_to_dims
from .graph import unpacked

FREED_GRAPH = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


_tasks = itertools.count()
_current = [None]   # a weak reference to the backward pass built last: the one whose hooks are running


def current_pass():
    """The backward pass running, for a hook (autograd.graph.register_multi_grad_hook): its `task` number is
    PyTorch's graph task id, its nodes and leaves what _will_engine_execute_node asks about."""
    graph = _current[0]() if _current[0] is not None else None
    if graph is None:
        raise RuntimeError("expected this hook to be called inside a backward call")
    return graph


class Graph:
    """One backward pass: nodes in reverse creation order (a topological order), leaves, roots."""

    __slots__ = ("nodes", "leaves", "key", "saved", "roots", "hooked", "retaining", "capture", "custom", "python",
                 "task", "__weakref__")

    def __init__(self, root_edges, implicit_seeds, targets=None, root_sums=None, run_targets=False):
        """root_edges: [(node, output_index)]; implicit_seeds: (root avals, whether each seed is implicit);
        root_sums: per root, () or the shape its gradient is summed back to (see summed_roots).

        targets: the nodes of the tensors autograd.grad / backward(inputs=) asks for (a non-leaf's grad_fn,
        a leaf's accumulator), or None for a whole backward. Then the graph holds only the nodes on a path
        to them, as PyTorch's engine runs no other (their saved values are neither checked nor needed);
        a wanted non-leaf's node that leads to no other target only hands out the gradient arriving at it
        (a capture node: in the key with wiring None, not run, nothing saved or checked), but with run_targets
        (backward(inputs=...), PyTorch's engine marks the inputs' nodes needed): it runs, and is freed.
        """
        self.task = next(_tasks)
        _current[0] = weakref.ref(self)
        seen = set()
        nodes = []
        leaves = []
        stack = [e[0] for e in root_edges]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if type(n) is AccumulateGrad:
                leaves.append(n)
                continue
            nodes.append(n)
            for e in n.edges:
                if e is not None and e[0] not in seen:
                    stack.append(e[0])
        nodes.sort(key=_seq, reverse=True)
        capture = frozenset()
        if targets is not None:
            nodes, leaves, capture = _prune(nodes, leaves, targets, run_targets)
        # Node by node in backward order, as PyTorch's engine unpacks saved values: a freed graph, then
        # values modified in place (so an older node's freed values do not hide a newer node's change)
        running = None   # the nodes and leaves it runs, once a node without a derivative asks (rare)
        for n in nodes:
            if n not in capture:
                if n.kept is None:
                    raise RuntimeError(FREED_GRAPH)
                check_versions(n)
                if missing_at(n.sig):
                    running = running or set(nodes) | set(leaves)
                    if stops_backward(n, running):
                        break
        self.capture = capture
        self.nodes = nodes
        self.leaves = leaves
        self.roots = root_edges
        position = {n: i for i, n in enumerate(nodes)}
        for j, leaf in enumerate(leaves):
            position[leaf] = -1 - j
        node_keys = []
        saved = []
        hooked = False
        custom = python = False   # autograd.Function nodes; run in Python (see autograd._function_node)
        retaining = []
        for i, n in enumerate(nodes):
            # an edge to a node or leaf pruned away gets None: its gradient is dropped
            wiring = None if n in capture else tuple([
                None if e[0] not in position else position[e[0]] if e[1] == 0 else (position[e[0]], e[1])
                for e in n.edges if e])
            if wiring is not None and reshaped_edges and n in reshaped_edges:
                wiring = _summed_wiring(n, wiring)
            retained = None
            if n.retained:
                retained = tuple(sorted([k for k, ref in n.retained.items() if ref() is not None]))
                retaining.append(i)
            if n.hooks or n.fn_hooks:
                hooked = True
            if n.op.custom is not None:
                custom = True
                python = python or n.op.custom.python
            node_keys.append((n.sig, wiring, retained, n.avals if n.op.nout > 1 else None))
            if wiring is not None:
                saved += [unpacked(n.kept[k]) for k in kept_positions(n.sig)]
        self.hooked = hooked or any(leaf.variable._hooks for leaf in leaves)
        self.custom, self.python = custom, python
        self.retaining = retaining
        root_key = tuple((position.get(e[0]), e[1], aval if implicit else None) + (root_sums[k] if root_sums else ())
                         for k, (e, aval, implicit) in enumerate(zip(root_edges, *implicit_seeds)))
        self.saved = saved
        self.key = (tuple(node_keys), len(leaves), root_key)

    def release(self, saved=True):
        """Free saved values, as PyTorch does after a backward without retain_graph (saved=False: only the
        forward inputs of equations none of whose outputs is left to compute, which a backward frees too)."""
        for n in self.nodes:   # consumers first: what a node lets go of, its producers may then drop
            if saved and n.saves and n not in self.capture:
                n.release()
            if n.outs:
                forget_inputs(n)


# Node -> {argument: the shape of the tensor its edge was taken from}, for the rare edge whose tensor no
# longer has the shape of the output it leads to: an in-place view op without history (y.unsqueeze_(0)
# under no_grad) changed it since. PyTorch's engine checks each gradient against the shape its next node
# expects (validate_outputs): one that shape broadcasts to is summed back to it, any other is refused.
reshaped_edges = weakref.WeakKeyDictionary()


def changed_shape(t, edge):
    """t's shape where it is not the one the target of its edge expects (see reshaped_edges), else None."""
    if t._view is None or not t._view.reshaped:
        return None   # (only an in-place view op with no history changes a tensor's shape so)
    got = tuple(t.shape)
    shape = expected_shape(edge)
    return got if shape is not None and shape != got else None


def note_reshaped(node, shapes):
    """Node `node` took its arguments' edges from tensors whose shapes {argument: shape} changed so."""
    from .. import _segment
    reshaped_edges[node] = shapes
    _segment.current().hooked = True   # (the segment's own program knows no such edge: the general path runs)


def invalid_gradient(index, got, shape):
    return f"invalid gradient at index {index} - got {list(got)} but expected shape compatible with {list(shape)}"


def expected_shape(edge):
    """The shape of the gradients `edge` takes: that of its producer's output, or of a leaf when its accumulator
    was made (None where unknown)."""
    node, out = edge
    if type(node) is AccumulateGrad:
        return node.shape
    avals = node.avals if isinstance(node, Node) else ()
    return tuple(avals[out][0]) if out < len(avals) and avals[out] is not None else None


def _summed_wiring(n, wiring):
    """n's wiring with (target, output, shape) where the gradient for an argument must be summed back to the
    shape of the output it goes to, and (target, output, shape, PyTorch's error) where it cannot (raised when
    that gradient comes, as PyTorch's engine checks what each node returns): see reshaped_edges."""
    shapes = reshaped_edges[n]
    edges = [(i, e) for i, e in enumerate(n.edges) if e]
    out = list(wiring)
    for j, (i, e) in enumerate(edges):
        got = shapes.get(i)
        shape = None if got is None else expected_shape(e)
        if shape is None or out[j] is None or got == shape:
            continue
        target, output = (out[j], 0) if type(out[j]) is int else out[j]
        if sum_to_dims(got, shape) is None:
            # PyTorch numbers the node's gradients as its next_functions
            index = sum(1 for k in range(i) if (n.tensor_args or ())[k:k + 1] == (True,) or k in n.optional_inputs)
            out[j] = (target, output, shape, f"Function {n.name()} returned an " + invalid_gradient(index, got, shape))
        elif type(e[0]) is not AccumulateGrad:   # (a leaf takes it as it comes: PyTorch copies it into its shape)
            out[j] = (target, output, shape)
    return tuple(out)


def summed_roots(roots, root_edges):
    """Per root tensor, () or (the shape its gradient is summed back to,) where an in-place view op with no
    history changed its shape since its grad_fn ran (see reshaped_edges); PyTorch's error where it cannot be."""
    sums = []
    for k, (t, edge) in enumerate(zip(roots, root_edges)):
        got = changed_shape(t, edge)
        if got is None:
            sums.append(())
            continue
        shape = expected_shape(edge)
        if sum_to_dims(got, shape) is None:
            raise RuntimeError(invalid_gradient(k, got, shape))
        sums.append(() if type(edge[0]) is AccumulateGrad else (shape,))
    return sums


def targets_of(wanted):
    """The nodes of the `wanted` tensors (a non-leaf's grad_fn, a leaf's accumulator; see Graph), or None
    for a whole backward."""
    if wanted is None:
        return None
    found = set()
    for t in wanted:
        if t._grad_fn is not None:
            found.add(t._grad_fn)
        elif t._accumulator is not None and t._accumulator() is not None:
            found.add(t._accumulator())
    return found


def _prune(nodes, leaves, targets, run_targets=False):
    """(nodes on a path to a target (and the targets' own with run_targets), the leaves that are targets,
    capture nodes)."""
    needed = set()
    for n in reversed(nodes):   # oldest first: a node's edges lead to nodes already decided
        if (run_targets and n in targets) or any(e is not None and (e[0] in targets or e[0] in needed)
                                                 for e in n.edges):
            needed.add(n)
    capture = frozenset(n for n in nodes if n in targets and n not in needed)
    # (a leaf that is not a target gets no gradient: its edges are wired to None, as PyTorch's engine runs
    # no AccumulateGrad but the inputs')
    return [n for n in nodes if n in needed or n in capture], [leaf for leaf in leaves if leaf in targets], capture


_seq = operator.attrgetter("seq")


def check_versions(node):
    """PyTorch's errors when a value the node's backward reads was detached or modified in place since."""
    for counter, version, index in node.checks:
        if index >= 0 and getattr(counter, "rebased", None) and _detached(node, index, counter):
            raise RuntimeError(DETACHED_SAVED)
        if counter.value != version:
            raise RuntimeError(_modified_message(node, index, counter, version))


def stops_backward(node, targets=None):
    """Whether the walk raises at `node` for a gradient its op has no derivative for (`targets`: the nodes
    the backward runs, None: all): PyTorch's engine raises there, and never reaches the nodes after it to
    unpack their saved values (a floor_divide on the path hides an in-place change of an earlier value)."""
    missing = missing_at(node.sig)
    if not missing:
        return False
    diff = SIGNATURES[node.sig][3]
    for k, _ in missing:
        e = node.edges[diff[k]]
        if e is not None and (targets is None or e[0] in targets):
            return True
    return False


DETACHED_SAVED = ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                  "This is not supported, please use out-of-place `.detach()` instead")


def _detached(node, index, counter):
    # PyTorch keeps a saved input (not a leaf) as the tensor itself and reads its grad_fn back, which a
    # detach_() since has cleared
    edge = node.edges[index] if index < len(node.edges) else None
    return edge is not None and isinstance(edge[0], Node) and counter.detached(*edge)


def _modified_message(node, index, counter, expected):
    if index < 0:
        shape, dtype = node.avals[-1 - index]
    else:
        shape, dtype = node.kept[index].shape, node.kept[index].dtype
        # PyTorch prints a saved argument's shape at the time of the error (a squeeze_ since changed it)
        edge = node.edges[index] if index < len(node.edges) else None
        if edge is not None and getattr(counter, "rebased", None):
            shape = counter.history_shape(*edge) or shape
    what = f"[{_type_name_of(dtype)} {list(shape)}]" + node.saved_description(index, counter)
    return (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {counter.value}; expected version {expected} instead. Hint: the tensor was "
            f"changed in place after it was used; use an out-of-place op (y = y + 1 instead of y += 1) or "
            f".clone() it before modifying.")


_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
               "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
               "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def _type_name_of(dtype):
    import numpy as np
    from .._dtypes import from_jax
    return "torch." + _TYPE_NAMES[from_jax(np.dtype(dtype)).name]

