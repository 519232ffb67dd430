"""The tape's IR: one `Equation` per recorded op call, and `Pending`, a reference to one of its outputs.

An equation is what every interpreter reads: its forward signature (op-table entry, statics, computation
dtype, interned as `sid`), its inputs (arrays, Python scalars, or `Pending` outputs of earlier
equations), its output avals, and where in the user's code it was recorded. An op that autograd records
is one `autograd._node.Node`: the same equation, with its backward signature, the edges its gradients
flow along and the values its VJP reads; that node is the `grad_fn` users see.

Equations are numbered in recording order (`seq`, one counter for all of them), which is a topological
order of both the forward (a `_lazy.Plan`) and, reversed, the backward (`autograd._graph.Graph`).
"""
import itertools

_seq = itertools.count()

# Forward signatures (op, static, cast) interned to small ints: cheap structure keys.
SIGNATURES = []
_signature_ids = {}


def forward_signature(op, static, cast):
    key = (op, static, cast)
    sid = _signature_ids.get(key)
    if sid is None:
        sid = _signature_ids[key] = len(SIGNATURES)
        SIGNATURES.append(key)
    return sid


def next_seq():
    """The sequence number the next recorded op gets (taken: later ops get larger ones)."""
    return next(_seq)


class Equation:
    """One recorded op call. Its forward inputs are dropped once no output is left to compute."""

    __slots__ = ("sid", "args", "avals", "outs", "seq", "seg", "pos", "where", "__weakref__")

    def __init__(self, sid, args, avals, where=None):
        self.sid = sid        # interned (op, static, cast): see forward_signature()
        self.args = args      # forward inputs; None once computed (or for a node recorded without them)
        self.avals = avals    # ((shape, dtype), ...) of the outputs
        self.outs = ()        # weakrefs to the Pending outputs
        self.seq = next(_seq)
        self.seg = None       # the tape segment it was recorded in (see _segment), and its place
        self.pos = -1
        self.where = where    # (file, line) of the user's code that recorded it (for errors)


class Pending:
    """A value (one output of an Equation) with the array interface that metadata code reads. Once computed
    it holds the array, so a value lives exactly as long as something can ask for it."""

    __slots__ = ("node", "index", "shape", "dtype", "storage", "value", "__weakref__")

    def __init__(self, node, index, shape, dtype):
        self.node = node
        self.index = index
        self.shape = shape
        self.dtype = dtype
        self.storage = None   # weakref to the Storage holding this value, set by Storage
        self.value = None     # the array, once computed

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self):
        return f"Pending({SIGNATURES[self.node.sid][0].name}, {self.shape}, {self.dtype})"
