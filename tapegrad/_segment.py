"""Tape segments: the ops recorded since the last backward, keyed as they are recorded.

A training step records the same ops in the same order every time. So while
`apply` records an op it also appends, in O(1), the op's place in the current
segment: its signature, where each input comes from (an earlier op of the
segment, or an input array or scalar collected right there), and for ops that
autograd records, where gradient flows (an earlier op of the segment or a
leaf of the segment's leaf table).

When `backward()` starts from an op of the current segment whose whole graph
lies inside the segment ("closed"), the engine needs no graph walk: the
segment's key list is the structure and its collected inputs are the
arguments of one compiled program that runs the pending forward and the
backward together. Every backward ends the segment; anything unusual (hooks,
graphs reaching older segments, autograd.grad) takes the general path.
"""
import threading
import weakref

from ._lazy import Pending, SCALAR_KINDS

MAX_NODES = 4096  # bound what one segment keeps alive when no backward ever comes


class Segment:
    __slots__ = ("nodes", "anodes", "keys", "arrays", "scalars", "leaves", "leaf_pos", "check_writes",
                 "retained", "hooked", "ended", "__weakref__")

    def __init__(self):
        self.nodes = []          # weakrefs to LazyNodes, by position
        self.anodes = []         # weakrefs to autograd Nodes (None where the op was not recorded)
        self.keys = []           # per op: (forward sid, input codes, autograd key or None/False)
        self.arrays = []         # input arrays (or older pending values) in code order
        self.scalars = {}        # Python scalars by kind, in code order
        self.leaves = []         # AccumulateGrad nodes reached by closed ops
        self.leaf_pos = {}
        self.check_writes = None  # storage write count when the first version check was recorded
        self.retained = []       # weakrefs to autograd nodes of this segment with retain_grad() outputs
        self.hooked = False
        self.ended = False


class _Current(threading.local):
    def __init__(self):
        self.segment = Segment()


_current = _Current()


def current():
    return _current.segment


def end():
    """Close the current segment; later ops start a new one."""
    seg = _current.segment
    seg.ended = True
    # Drop what the segment collected: its nodes keep pointing at it, so it must not keep them
    # (or the inputs) alive.
    seg.nodes = seg.anodes = seg.keys = seg.arrays = seg.leaves = seg.retained = ()
    seg.scalars = seg.leaf_pos = {}
    _current.segment = Segment()


def add(lnode, values, anode):
    """Append one recorded op (its LazyNode and, if autograd recorded it, its Node)."""
    seg = _current.segment
    if len(seg.nodes) >= MAX_NODES:
        end()
        seg = _current.segment
    pos = len(seg.nodes)
    codes = []
    arrays = seg.arrays
    for a in values:
        t = type(a)
        if t is Pending:
            pn = a.node
            if pn.seg is seg:
                codes.append((pn.pos, a.index))
                continue
            r = pn.result
            if r is not None and r[a.index] is not None:
                a = r[a.index]
                t = type(a)
        if a is None:
            codes.append(None)
            continue
        kind = SCALAR_KINDS.get(t)
        if kind is None:
            arrays.append(a)    # an array, or an older segment's pending value (resolved at backward)
            codes.append(-1)
        else:
            lst = seg.scalars.get(kind)
            if lst is None:
                lst = seg.scalars[kind] = []
            lst.append(a)
            codes.append(kind)
    akey = None
    if anode is not None:
        akey = _autograd_key(seg, anode)
        anode.seg = seg
        anode.pos = pos
        if anode.checks and seg.check_writes is None:
            from ._storage import Storage
            seg.check_writes = Storage.writes
        seg.anodes.append(weakref.ref(anode))
    else:
        seg.anodes.append(None)
    lnode.seg = seg
    lnode.pos = pos
    seg.nodes.append(weakref.ref(lnode))
    seg.keys.append((lnode.sid, tuple(codes), akey))


def _autograd_key(seg, anode):
    """(backward signature, edge codes) when the node's whole graph lies in `seg`, else False."""
    codes = []
    for e in anode.edges:
        if e is None:
            codes.append(None)
            continue
        prod = e[0]
        if type(prod) is _AccumulateGrad:
            j = seg.leaf_pos.get(prod)
            if j is None:
                j = seg.leaf_pos[prod] = len(seg.leaves)
                seg.leaves.append(prod)
            codes.append(-1 - j)
        elif prod.seg is seg and prod.closed:
            codes.append((prod.pos, e[1]))
        else:
            anode.closed = False
            return False
    anode.closed = True
    return (anode.sig, tuple(codes), anode.out_avals if len(anode.out_avals) > 1 else None)


from .autograd._node import AccumulateGrad as _AccumulateGrad  # noqa: E402
