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

from ._lazy import READS, Pending, Plan, SCALAR_KINDS, computed, live_outputs, resolve_all, run_plan
from ._storage import Storage
from .autograd._node import AccumulateGrad as _AccumulateGrad

MAX_NODES = 4096  # bound what one segment keeps alive when no backward ever comes
# A segment without autograd nodes (a no_grad loop) is flushed -- its live values computed, as one program
# once the structure repeats -- when its anchor op (the same op from the same line) is recorded again at
# least FLUSH_MIN ops after it: windows then hold whole loop iterations and repeat exactly, so an
# evaluation loop keeps flat memory and compiles one program, not one per iteration. (The line alone is not
# enough: a loop written on one line records all its ops from it.) The anchor is the segment's first op;
# when that op does not come back (it was setup code before the loop: loading weights, a first batch) the
# anchor moves to the op recorded 2 * FLUSH_MIN ops later, then twice as far each time, so that a loop
# body of any length is found. A loop that reads a value (generation's next token, a printed loss) has it
# computed there: the anchor moves to the op after the read, where the next iteration starts.
FLUSH_MIN = 64


class Segment:
    __slots__ = ("nodes", "functions", "flat", "arrays", "scalars", "leaves", "leaf_pos", "check_writes",
                 "retained", "hooked", "ended", "recorded_grad", "first_where", "anchor", "anchor_pos",
                 "anchor_span", "reads", "__weakref__")

    def __init__(self):
        self.nodes = []          # weakrefs to Equations, by position (an op autograd records: its Node)
        self.functions = {}      # position -> weakref to an autograd.Function's node (beside its equation)
        self.flat = []           # the structure, as flat ints (see add)
        self.arrays = []         # input arrays (or older pending values) in code order
        self.scalars = {}        # Python scalars by kind, in code order
        self.leaves = []         # AccumulateGrad nodes reached by closed ops
        self.leaf_pos = {}
        self.check_writes = None  # storage write count when the first version check was recorded
        self.retained = []       # weakrefs to autograd nodes of this segment with retain_grad() outputs
        self.hooked = False
        self.ended = False
        self.recorded_grad = False   # whether any op of the segment was recorded by autograd
        self.first_where = None      # where its first op was recorded
        self.anchor = None           # (where, forward signature) of the op whose return flushes it (FLUSH_MIN)
        self.anchor_pos = 0          # that op's position
        self.anchor_span = 2 * FLUSH_MIN   # how far the anchor moves on when its op does not come back
        self.reads = READS[0]        # values read before its last op (_lazy.READS)


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
    seg.nodes = seg.flat = seg.arrays = seg.leaves = seg.retained = ()
    seg.scalars = seg.leaf_pos = seg.functions = {}
    _current.segment = Segment()


# The segment's structure is one flat list of ints (hashing and comparing a flat tuple of ints is
# far cheaper than nested tuples). Per op:
#   forward sid, number of inputs, one code per input, then
#   0 (no autograd node, or one whose graph leaves the segment) or 1 + backward sig followed by one
#   edge code per input.
# Input codes: producer position * OUTPUTS + output index (>= 0), or ARRAY / a scalar kind / NONE.
# Edge codes: producer position * OUTPUTS + output index (>= 0), NO_EDGE, or LEAF - j for leaf j.
OUTPUTS = 1 << 16
ARRAY, NONE = -1, -6
SCALAR_CODES = {"f": -2, "i": -3, "b": -4, "c": -5}
NO_EDGE, LEAF = -1, -2


def add(lnode, values, anode):
    """Append one recorded op: its equation and, if autograd recorded it, its Node (the equation itself,
    but for an autograd.Function, whose node stands beside the equation that hands its outputs through)."""
    seg = _current.segment
    pos = len(seg.nodes)
    if pos >= FLUSH_MIN and not seg.recorded_grad and lnode.where is not None:
        if seg.reads != READS[0]:   # a value was read since the last op: anchor where the loop goes on
            seg.reads = READS[0]
            seg.anchor, seg.anchor_pos = (lnode.where, lnode.sid), pos
        elif lnode.where == seg.anchor[0] and lnode.sid == seg.anchor[1] and pos - seg.anchor_pos >= FLUSH_MIN:
            flush(seg)
            seg = _current.segment
            pos = len(seg.nodes)
        elif pos - seg.anchor_pos >= seg.anchor_span:   # the anchor did not come back: move it here
            seg.anchor, seg.anchor_pos = (lnode.where, lnode.sid), pos
            seg.anchor_span *= 2
    if pos >= MAX_NODES:
        end()
        seg, pos = _current.segment, 0
    flat = seg.flat
    flat.append(lnode.sid)
    flat.append(len(values))
    arrays = seg.arrays
    for a in values:
        t = type(a)
        if t is Pending:
            pn = a.node
            if pn.seg is seg:
                flat.append(pn.pos * OUTPUTS + a.index)
                continue
            if a.value is not None:
                a = computed(a)
                t = type(a)
        if a is None:
            flat.append(NONE)
            continue
        kind = SCALAR_KINDS.get(t)
        if kind is None:
            arrays.append(a)    # an array, or an older segment's pending value (resolved at backward)
            flat.append(ARRAY)
        else:
            lst = seg.scalars.get(kind)
            if lst is None:
                lst = seg.scalars[kind] = []
            lst.append(a)
            flat.append(SCALAR_CODES[kind])
    ref = weakref.ref(lnode)
    if anode is not None:
        seg.recorded_grad = True
        _add_autograd(seg, anode, flat)
        if anode.checks and seg.check_writes is None:
            seg.check_writes = Storage.writes
        if anode is not lnode:
            anode.seg = seg
            anode.pos = pos
            seg.functions[pos] = weakref.ref(anode)
    else:
        flat.append(0)
    lnode.seg = seg
    lnode.pos = pos
    if not pos:
        seg.first_where = lnode.where
        seg.anchor = (lnode.where, lnode.sid)
    seg.nodes.append(ref)


def autograd_refs(seg):
    """Weak references to the segment's autograd Nodes by position (at the positions of ops autograd
    recorded; elsewhere the equation's)."""
    functions = seg.functions
    return [functions.get(i) or ref for i, ref in enumerate(seg.nodes)] if functions else seg.nodes


class Structure(tuple):
    """A segment's flat structure as a program key, hashed once (a training step's is thousands of ints)."""

    def __hash__(self):
        return self.hash


_last_structure = [None]   # (flat list, its Structure) of the last call, swapped as one object (threads)


def structure(seg):
    """The segment's structure key: in a steady loop the very object of the last call, so that looking its
    program up compares it by identity rather than element by element."""
    last = _last_structure[0]
    if last is not None and seg.flat == last[0]:
        return last[1]
    key = Structure(seg.flat)
    key.hash = tuple.__hash__(key)
    _last_structure[0] = (list(seg.flat), key)
    return key


def flush(seg):
    """Compute the segment's values that tensors still hold (one plan), then start a new segment."""
    nodes = [ref() for ref in seg.nodes]
    codes = live_outputs(nodes)
    live = [nodes[i].outs[k]() for i, k in codes]
    plan = _window_plan(seg, nodes, codes, live) if live else None
    end()
    if plan is not None:
        run_plan(plan)
    elif live:
        resolve_all(live)
    if live:
        _current.segment.reads = READS[0]   # (computing a window is not a read of the loop's)


# A loop's windows repeat exactly: the plan of a window's live values (what _lazy.Plan finds by walking the
# graph back from them, ~1 us an op) follows from the segment's structure, once known. Per (structure, live
# outputs, ops gone): the plan's key (hashed once) and which of the segment's ops, arrays and scalars it
# takes; None where the walk found something the codes do not say (an op of an older segment).
_window_plans = {}
MAX_WINDOW_PLANS = 64


def _window_plan(seg, nodes, codes, live):
    """The Plan of `live` (the window's live values) as _lazy.Plan(live) makes it, built from the segment's
    codes when every op of the window is pending and every input array computed; else None."""
    gone = []   # ops nothing can ask for any more: the walk leaves them out
    for i, n in enumerate(nodes):
        if n is None:
            gone.append(i)
            continue
        for ref in n.outs:
            p = ref()
            if p is not None and p.value is not None:
                return None   # (computed already: the walk takes its value as an input)
    arrays = [computed(a) if type(a) is Pending else a for a in seg.arrays]
    if any(type(a) is Pending for a in arrays):
        return None   # an older segment's pending value: its ops join the plan
    key = (structure(seg), codes, tuple(gone))
    known = _window_plans.get(key, False)
    if known is False:
        plan = Plan(live)
        known = _derive(seg, arrays, plan)
        if len(_window_plans) >= MAX_WINDOW_PLANS:
            _window_plans.clear()
        _window_plans[key] = known
        return plan
    if known is None:
        return None
    plan_key, positions, picked, scalars_picked = known
    plan = Plan.__new__(Plan)
    plan.values, plan.key, plan.slots, plan.live = live, plan_key, plan_key[1], plan_key[2]
    plan.nodes = [nodes[i] for i in positions]
    plan.inputs = ([arrays[j] for j in picked],
                   {kind: [seg.scalars[kind][j] for j in js] for kind, js in scalars_picked.items()})
    return plan


def _derive(seg, arrays, plan):
    """(hashed plan key, op positions, array and scalar picks) that rebuild `plan` from the segment, checked
    against it; None if they do not."""
    if any(n.seg is not seg for n in plan.nodes):
        return None
    uses = []   # per op: the segment's array indices, and (kind, index) of its scalars, in argument order
    counts = {}
    for _, codes, _ in decode(seg.flat):
        used = []
        for c in codes:
            if c == -1 or type(c) is str:
                used.append((c, counts.get(c, 0)))
                counts[c] = counts.get(c, 0) + 1
        uses.append(used)
    positions = tuple(n.pos for n in plan.nodes)
    picked, scalars_picked = [], {}
    for i in positions:
        for c, j in uses[i]:
            (picked if c == -1 else scalars_picked.setdefault(c, [])).append(j)
    plan_arrays, plan_scalars = plan.inputs
    if len(picked) != len(plan_arrays) or any(arrays[j] is not a for j, a in zip(picked, plan_arrays)):
        return None
    if {k: [seg.scalars[k][j] for j in js] for k, js in scalars_picked.items()} != plan_scalars:
        return None
    key = Structure(plan.key)
    key.hash = tuple.__hash__(key)
    plan.key = key
    return key, positions, tuple(picked), {k: tuple(js) for k, js in scalars_picked.items()}


def where_recorded(seg):
    """(file, line) of each op of the segment still alive, in recording order."""
    return [n.where for n in (ref() for ref in seg.nodes) if n is not None]


def _add_autograd(seg, anode, flat):
    # the tag, then the edge codes; taken back to a lone 0 where an edge leaves the segment
    mark = len(flat)
    flat.append(0)
    for e in anode.edges:
        if e is None:
            flat.append(NO_EDGE)
            continue
        prod = e[0]
        if type(prod) is _AccumulateGrad:
            j = seg.leaf_pos.get(prod)
            if j is None:
                j = seg.leaf_pos[prod] = len(seg.leaves)
                seg.leaves.append(prod)
            flat.append(LEAF - j)
        elif prod.seg is seg and prod.closed:
            flat.append(prod.pos * OUTPUTS + e[1])
        else:
            anode.closed = False
            del flat[mark + 1:]
            return
    anode.closed = True
    flat[mark] = 1 + anode.sig


def decode(flat):
    """The flat structure as [(sid, input codes, (backward sig, edge codes) or None)], with codes in
    the form `_lazy.run_forward` reads: (position, output), -1 (array), a scalar letter, None."""
    letters = {v: k for k, v in SCALAR_CODES.items()}
    entries = []
    i = 0
    while i < len(flat):
        sid, n = flat[i], flat[i + 1]
        raw = flat[i + 2:i + 2 + n]
        codes = tuple(divmod(c, OUTPUTS) if c >= 0 else (-1 if c == ARRAY else None if c == NONE else letters[c])
                      for c in raw)
        i += 2 + n
        tag = flat[i]
        i += 1
        akey = None
        if tag:
            edges = tuple(divmod(c, OUTPUTS) if c >= 0 else (None if c == NO_EDGE else LEAF - c)
                          for c in flat[i:i + n])
            akey = (tag - 1, edges)
            i += n
        entries.append((sid, codes, akey))
    return entries

