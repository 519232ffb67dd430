"""What a closed segment's step key says (see _fast): the forward over the segment's entries, then the
backward from its root, as one function of (arrays, scalars, extra). Every tier of the step reads it
from here: traced into one XLA program (_fast), or run on the kernels' NumPy evaluators (_numpy_step).
"""
from .. import _segment
from . import _saved
from ._walk import walk


def reachable(keys, root):
    """Positions of the autograd nodes the root's gradient flows through, in backward order."""
    seen = {root}
    stack = [root]
    while stack:
        pos = stack.pop()
        for code in keys[pos][2][1]:
            if type(code) is tuple and code[0] not in seen:
                seen.add(code[0])
                stack.append(code[0])
    return sorted(seen, reverse=True)


class StepProgram:
    """The step key (less its "step" tag) decoded once: entries, the backward's node order and outputs."""

    __slots__ = ("entries", "order", "index", "retained_at", "root_out", "seed_code", "implicit", "existing",
                 "retained", "live")

    def __init__(self, key):
        flat, root, self.root_out, self.seed_code, self.implicit, self.existing, self.retained, self.live = key
        self.entries = _segment.decode(flat)
        self.order = reachable(self.entries, root)
        self.index = {pos: i for i, pos in enumerate(self.order)}
        self.retained_at = {}
        for pos, k, _ in self.retained:
            if pos in self.index:   # a retained tensor the root's gradient does not reach keeps its .grad
                self.retained_at.setdefault(self.index[pos], []).append(k)

    def backward(self, results, args_of, extra, call_node, arith):
        """The step's outputs from its forward's `results` and `args_of` (per entry): (leaf grads by leaf
        index, retained grads, live values). Values are whatever the tier computes with: tracers, NumPy
        arrays, or avals (a dry run); call_node and arith as `walk` takes them."""
        index = self.index

        def fetch(code):
            return extra[code[1]] if code[0] == "x" else results[code[0]][code[1]]

        # The segment in the engine's terms: its reachable nodes in backward order, as `Graph` keys a graph
        node_keys, saved = [], []
        for pos in self.order:
            bsig, edges = self.entries[pos][2]
            diff = _saved.SIGNATURES[bsig][3]
            wiring = tuple(-1 - edges[i] if type(edges[i]) is int else
                           index[edges[i][0]] if edges[i][1] == 0 else (index[edges[i][0]], edges[i][1])
                           for i in diff)
            outs = results[pos]
            node_keys.append((bsig, wiring, tuple(self.retained_at.get(index[pos], ())) or None,
                              tuple((tuple(o.shape), o.dtype) for o in outs) if len(outs) > 1 else None))
            saved += [args_of[pos][k] for k in _saved.kept_positions(bsig)]
        existing, retained = self.existing, self.retained
        walk_key = (tuple(node_keys), len(existing), ((0, self.root_out, self.implicit),))
        had = {-1 - j: fetch(code) for j, code in enumerate(existing) if code is not None}
        had.update({(index[pos], k): fetch(code) for pos, k, code in retained if pos in index and code is not None})
        seeds = [None if self.seed_code is None else fetch(self.seed_code)]
        grads = walk(walk_key, saved, seeds, had, call_node, arith)
        leaf_grads = {j: grads[-1 - j] for j in range(len(existing)) if -1 - j in grads}
        retained_grads = [grads.get((index[pos], k)) if pos in index else None for pos, k, _ in retained]
        return leaf_grads, retained_grads, [results[pos][k] for pos, k in self.live]
