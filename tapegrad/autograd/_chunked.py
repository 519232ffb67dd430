"""The backward walk of a long graph in bounded chunks (tapegrad/_chunks.py says why and where chunks end).

A chunk is a slice of the walk's node order, run as one program by the same `_walk` as a whole backward,
over a key of its own: its nodes renumbered from 0, and every gradient that leaves the chunk (toward a
node of a later chunk, or a leaf) sent to an exit, which the chunk returns. The sums for the chunk's own
nodes arrive complete, as its seeds. An exit whose target already holds a sum from earlier chunks gets
that sum as its starting value, so every gradient is summed in the same order as in the whole walk.
"""
from .. import _chunks, _programs
from . import _saved


def walk(key, saved, seeds, steady, make_chunk, arith):
    """{leaf target: grad} of a whole walk (existing grads not added), computed chunk by chunk.

    make_chunk(subkey, carry_pattern) -> f(kept, seeds, carried) -> the exits' sums; arith: the eager
    tier's seeds and sums (see _walk.Arith).
    """
    node_keys, _, root_key = key
    pending = {}   # (node, output) or leaf target -> the sum so far
    for root, seed in zip(root_key, seeds):
        target, out, aval = root[:3]
        if target is None:
            continue
        seed = arith.ones(*aval) if seed is None else seed
        if len(root) > 3:   # (see _walk.walk)
            seed = arith.sum_to(seed, root[3])
        code = (target, out)
        pending[code] = seed if code not in pending else arith.add(pending[code], seed)
    offsets = [0]
    for sid, wiring, _, _ in node_keys:
        offsets.append(offsets[-1] + (len(_saved.kept_positions(sid)) if wiring is not None else 0))

    for a, b in _chunks.cuts([k[0] for k in node_keys]):
        exits = {}
        local = []
        for sid, wiring, retained, out_avals in node_keys[a:b]:
            new = []
            for w in wiring:
                if w is None:
                    new.append(None)
                    continue
                target, out = (w, 0) if type(w) is int else w[:2]
                extra = () if type(w) is int else w[2:]   # (what to check the gradient against: see _walk.walk)
                if target < 0 or target >= b:
                    code = target if target < 0 else (target, out)
                    exit = -1 - exits.setdefault(code, len(exits))
                    new.append((exit, 0) + extra if extra else exit)
                else:
                    new.append(target - a if out == 0 and not extra else (target - a, out) + extra)
            local.append((sid, tuple(new), retained, out_avals))
        roots, root_values = [], []
        for code in sorted(c for c in pending if type(c) is tuple and a <= c[0] < b):
            i, out = code
            roots.append((i - a, out, None))   # (an aval is only read for an implicit seed)
            root_values.append(pending.pop(code))
        order = list(exits)
        carried = [pending[c] for c in order if c in pending]
        pattern = tuple(c in pending for c in order)
        subkey = (tuple(local), len(order), tuple(roots))
        kept = list(saved[offsets[a]:offsets[b]])
        program = _programs.lookup(("backward-chunk", subkey, pattern), _kinds(kept + root_values + carried),
                                   lambda: (make_chunk(subkey, pattern),), steady=steady)
        for code, g in zip(order, program(kept, root_values, carried)):
            if g is not None:
                pending[code] = g
    return {code: g for code, g in pending.items() if type(code) is int}


def _kinds(values):
    return tuple([(v.shape, v.dtype) if hasattr(v, "shape") else type(v) for v in values])
