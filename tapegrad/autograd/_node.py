"""Graph nodes: one `Node` per recorded op call, one `AccumulateGrad` per leaf.

A Node is data, not behaviour: the op call's equation on the tape (`_equation.Equation`: forward
signature, inputs, output avals, where it was recorded) with what its backward needs. The engine derives
the backward from `op.fn`.
"""
import re

from .._equation import Equation


def producer_name(node):
    """A node as PyTorch's version error names the producer of a saved tensor: its name without a last
    "Backward" and "0" (TanhBackward0: Tanh, SumBackward1: Sum1, MyFnBackward: MyFn; CopySlices and
    CopyBackwards as they are)."""
    return _BACKWARD.sub("", node.name())


_BACKWARD = re.compile(r"Backward(?:0$|(?=[0-9]*$))")


def _is_view_node(node):
    """Whether the outputs of `node` are views: of a view op, or a view's history regenerated through its base
    (view_replay, AsStridedBackward0); not an in-place view op's (y.t_() leaves y no view)."""
    from .._inplace import INPLACE_NAMES
    op = node.op
    return (op is not None and (op.view or op.name == "view_replay")
            and type(node).__name__ not in INPLACE_NAMES)


def _view_creation(node):
    """The mode a view whose history is `node` was made in, as `_view_info.make_view` decides it: its parent
    view's ("no_grad": a view with no history, made with grad mode off), else "multi_output" for an output of a
    function returning several views (unbind, split), else None."""
    from .._views import NOWHERE
    parent = node.edges[0] if node.edges else None
    if parent is not None:
        if parent[0] is NOWHERE:
            return "no_grad"
        if isinstance(parent[0], Node) and _is_view_node(parent[0]):
            creation = _view_creation(parent[0])
            if creation is not None:
                return creation
    return "multi_output" if node.op.several_views else None


class Node(Equation):
    """A recorded op call that autograd differentiates.

    edges[i] is (producer, output_index) for argument i when gradient flows to it, else None.
    kept are the values passed to the op (arrays or Python scalars) that the backward reads; the
    others are None, so they are not kept alive.
    """

    __slots__ = ("op", "kept", "edges", "checks", "retained", "hooks", "saves", "sig", "closed", "tensor_args",
                 "fn_hooks", "view_nr", "listed")
    # view_nr: set only on the k-th piece of unbind/split, k > 0 (_numbered); listed: set only on a recorded
    # backward's node that lists inputs no gradient flows back to (autograd._higher._node), its edges as shown

    def __init__(self, op, kept, edges, avals, sig, checks, saves, tensor_args, sid=None, args=None, where=None):
        # sid, args, where: its forward part, when it is recorded lazily (else its outputs are computed already)
        Equation.__init__(self, sid, args, avals, where)
        self.op = op
        self.kept = kept
        self.edges = edges
        self.sig = sig            # interned backward signature (autograd._saved.SIGNATURES)
        self.checks = checks      # [(storage's VersionCounter, version, argument index or -1-output), ...]
        self.retained = None      # {output_index: weakref to a tensor that called retain_grad()}
        self.hooks = None         # {output_index: {id: hook}} from Tensor.register_hook
        self.fn_hooks = None      # ({id: pre-hook}, {id: post-hook}) on the node itself (_node_hooks)
        self.saves = saves        # holds saved values: a second backward after freeing them fails
        self.closed = False       # whether its whole graph lies inside its tape segment
        self.tensor_args = tensor_args   # which arguments PyTorch counts as graph inputs

    node_name = "Node"
    optional_inputs = ()   # positions PyTorch lists even when the argument is None (`Tensor? min`)
    saves_result = False   # its backward reads the op's result (PyTorch's saved `result`): set per op/overload
    wraps = None   # the argument whose producing node PyTorch's node holds inside it (CopySlices: the values)
    differentiable_edges_only = False   # next_functions leaves out the inputs that require no grad (NotImplemented)

    def name(self):
        return self.node_name

    @property
    def next_functions(self):
        # One entry per tensor argument, as PyTorch (Python scalars are not graph inputs).
        from .._views import NOWHERE   # (a gradient dropped: PyTorch's node has no edge there)
        optional = self.optional_inputs
        edges = getattr(self, "listed", self.edges)
        entries = tuple((e[0], e[1]) if e is not None and e[0] is not NOWHERE else (None, 0)
                        for i, (e, is_tensor) in enumerate(zip(edges, self.tensor_args or ()))
                        if (is_tensor or i in optional) and (e is not None or not self.differentiable_edges_only))
        if self.wraps is not None:
            # PyTorch's CopySlices runs the in-place op's node inside itself: its edges are the base's,
            # then that node's own past its first input (the view being written)
            wrapped = self.edges[self.wraps]
            if wrapped is not None and isinstance(wrapped[0], Node):
                return entries[:1] + wrapped[0].next_functions[1:]
        return entries

    @property
    def metadata(self):
        return {}

    # PyTorch's grad_fn._saved_<name> attributes for the names most ops share: the argument (by its
    # position in PyTorch's signature) or the result, as the node's backward reads them.
    _SAVED_POSITIONS = {"self": 0, "other": 1, "exponent": 1, "mat2": 1, "mat1": 0, "input": 0, "weight": 1}

    def __getattr__(self, name):
        raw = name.startswith("_raw_saved_")
        if not name.startswith("_saved_") and not raw:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        what = name[len("_raw_saved_" if raw else "_saved_"):]
        if raw:
            return self._raw_saved(what, name)
        if self.kept is None:
            from ._graph import FREED_GRAPH
            raise RuntimeError(FREED_GRAPH)
        from ._saved import SIGNATURES
        op, static, cast, _, placeholders = SIGNATURES[self.sig]
        if what == "result" and self.saves_result and op.nout == 1 and all(
                p is None or isinstance(p, type) for p in placeholders):
            return self._unpacked(-1, self.result_value())
        position = self._SAVED_POSITIONS.get(what)
        if position is not None and position < len(self.kept) and placeholders[position] is None:
            from .graph import unpacked
            value = unpacked(self.kept[position])
            return self._unpacked(position, value) if hasattr(value, "shape") else value
        statics = dict(static)
        if what in statics and what != "dtype":   # non-tensor arguments: _saved_dim, _saved_keepdim, ...
            return statics[what]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _raw_saved(self, what, name):
        from ._saved import SIGNATURES
        from .graph import SavedTensor
        position = self._SAVED_POSITIONS.get(what)
        placeholders = SIGNATURES[self.sig][4]
        if position is not None and position < len(placeholders) and placeholders[position] is None and (
                self.kept is None or hasattr(self.kept[position], "shape")):
            return SavedTensor(self, position)   # (after the graph was freed: its register_hooks says so)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _unpacked(self, index, value):
        """A saved tensor as PyTorch unpacks it (`index`: the argument's position, -1 the result): a leaf is
        the leaf itself, another input or the result a tensor whose grad_fn is the node that made it; the
        version error where it was changed in place since."""
        from .._tensor import Tensor
        for counter, version, i in self.checks:
            if i == index and counter.value != version:
                from ._graph import _modified_message
                raise RuntimeError(_modified_message(self, index, counter, version))
        edge = (self, 0) if index < 0 else self.edges[index] if index < len(self.edges) else None
        if edge is not None and isinstance(edge[0], AccumulateGrad) and isinstance(edge[0].variable, Tensor):
            return edge[0].variable
        t = Tensor._wrap(value)
        if edge is not None and isinstance(edge[0], Node):
            t._attach(*edge)
        return t

    def result_value(self, kept=None):
        """The node's (single) result, computed again from the inputs it keeps (`kept`: them unpacked, when
        the caller has them): PyTorch's saved `result` for a node that keeps every input."""
        from .._dispatch import compute
        from ._saved import SIGNATURES
        from .graph import unpacked
        op, static, cast, _, _ = SIGNATURES[self.sig]
        kept = [unpacked(a) for a in self.kept] if kept is None else kept
        return compute(op, static, kept if cast is None else
                       [a if a is None or not hasattr(a, "astype") else a.astype(cast) for a in kept])

    def saved_description(self, index, counter=None):
        """Where a saved value came from, as PyTorch's version error says it (index < 0: output -1-index):
        the node itself for its output; for an argument, that tensor's history at the time of the error
        (PyTorch's saved tensor's grad_fn), which in-place ops recorded on its storage (`counter`) since
        may have replaced. A view's is regenerated once its storage changed: AsStridedBackward0, or, for a
        view PyTorch will not regenerate, its error."""
        if index < 0:
            return f", which is output {-1 - index} of {producer_name(self)},"
        node, nr = self.edges[index] or (None, 0)
        if node is not None and not isinstance(node, Node):   # a leaf's accumulator, or a no_grad view's
            from .._views import NOWHERE, view_creation_message
            if node is NOWHERE:
                raise RuntimeError(view_creation_message("no_grad", None, nr, indirect=True))
            return ""
        if node is not None and _is_view_node(node):
            creation = _view_creation(node)
            if creation is not None:
                from .._views import view_creation_message
                if creation == "multi_output":   # one node per piece here: PyTorch numbers the pieces
                    nr = getattr(node, "view_nr", nr)
                raise RuntimeError(view_creation_message(creation, node, nr, indirect=True))
            return f", which is output {nr} of AsStrided,"
        name = counter.history_name(node, nr) if counter is not None else None
        if name is not None:
            return f", which is output {nr} of {_BACKWARD.sub('', name)},"
        return "" if node is None else f", which is output {nr} of {producer_name(node)},"

    def release(self):
        """Free the saved values (after a backward without retain_graph)."""
        self.kept = None

    def register_hook(self, hook):
        """hook(grad_inputs, grad_outputs) -> None or new grad_inputs, after the node ran."""
        from ._node_hooks import register
        return register(self, hook, 1)

    def register_prehook(self, hook):
        """hook(grad_outputs) -> None or new grad_outputs, before the node runs."""
        from ._node_hooks import register
        return register(self, hook, 0)

    repr_module = ""   # the node of a Python autograd.Function of PyTorch's prints its module (see _checkpoint_region)

    def __repr__(self):
        return f"<{self.repr_module}{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad:
    """The sink for a leaf tensor's gradient (PyTorch's AccumulateGrad node)."""

    __slots__ = ("variable", "seq", "shape", "__weakref__")

    def __init__(self, variable):
        self.variable = variable
        self.seq = -1
        # the shape PyTorch's node expects gradients of (its input metadata), the variable's when it is made
        shape = getattr(variable, "shape", None)
        self.shape = None if shape is None else tuple(shape)

    def name(self):
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self):
        return ()

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"


def node_class(name, optional_inputs=(), wraps=None, saves_result=False):
    """A Node subclass named after PyTorch's node (type(y.grad_fn).__name__ == 'MulBackward0').

    C++-only nodes print their namespace in name() but not in their class name
    ('torch::autograd::CopySlices' / CopySlices), as PyTorch.
    """
    return type(name.rsplit("::", 1)[-1], (Node,),
                {"__slots__": (), "node_name": name, "optional_inputs": tuple(optional_inputs), "wraps": wraps,
                 "saves_result": saves_result,
                 # PyTorch's NotImplemented node has edges for the inputs that require grad only
                 "differentiable_edges_only": name == "torch::autograd::NotImplemented"})
