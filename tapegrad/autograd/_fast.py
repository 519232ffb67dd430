"""Backward over a closed tape segment: no graph walk, one compiled program.

See `_segment`: when the root's whole graph was recorded in the current
segment, the segment's key list is the structure and its collected inputs are
the arguments. The program evaluates the segment's pending forward and the
backward from the root together (what the key says: _step_program). The first
time a key is seen the engine's general path runs instead (so one-off graphs
never compile a program); a key that comes back rents NumPy through the
evaluators its first sight's kernels built (_numpy_step) until it is compiled.
"""

import numpy as np

from .. import _faults, _lazy, _programs, _recompiles, _segment
from .._host_values import on_device
from .._lazy import Pending
from .._memory_format import grad_like
from .._storage import Storage
from .._tensor import Tensor
from ._graph import check_versions, stops_backward
from ._step_program import StepProgram, reachable
from ._walk import TRACED, traced_call
from . import _numpy_step

FIRST_SIGHT = "first sight"


def try_backward(root, seed, retain_graph):
    """Run the backward of `root` through its segment's program: True; False when the general path must;
    FIRST_SIGHT when the general path runs it this time, the segment's structure being new."""
    node = root._grad_fn
    seg = node.seg
    for leaf in seg.leaves:
        if leaf.variable._hooks:
            return False
    if seg.check_writes is not None and Storage.writes != seg.check_writes:
        _check_versions(seg, node.pos)
    extra = []

    def code_of(value):
        if type(value) is Pending:
            pn = value.node
            if pn.seg is seg:
                return (pn.pos, value.index)
        extra.append(value)
        return ("x", len(extra) - 1)

    existing = tuple(None if leaf.variable._grad is None else code_of(leaf.variable._grad._peek())
                     for leaf in seg.leaves)
    retained = []
    listed = set()   # (a node is listed once per retain_grad() of one of its outputs)
    for nref in seg.retained:
        n = nref()
        if n is None or not n.retained or n in listed:
            continue   # gone, or its retain_grad() moved on with an in-place op
        listed.add(n)
        for k, ref in sorted(n.retained.items()):
            t = ref()
            if t is not None:
                retained.append((n.pos, k, None if t._grad is None else code_of(t._grad._peek())))
    seed_code = None if seed is None else code_of(seed)
    nodes = [ref() for ref in seg.nodes]
    live = _lazy.live_outputs(nodes)
    implicit = (tuple(root.shape), root.dtype.np) if seed is None else None
    key = ("step", _segment.structure(seg), node.pos, root._out_idx, seed_code, implicit, existing, tuple(retained),
           live)
    if len(seg.nodes) > _programs.MAX_PROGRAM_OPS:
        return False   # too long to compile whole: the general path runs it op by op
    arrays = seg.arrays

    program = _programs.lookup(key, _programs.shapes_of(arrays) + _programs.shapes_of(extra),
                               lambda: _compile(key[1:]), count=False)
    if program is None:
        return FIRST_SIGHT   # of this structure with these shapes: the general path runs it op by op
    if program.assemble is None:   # its NumPy tier: the kernels its first sight ran, not a trace
        program.assemble = _numpy_step.assembler(key[1:])
    if program.announce is None:   # it may rent NumPy for a while: explain the compile when XLA is reached
        program.announce = lambda: _recompiles.step_compiled(seg, key[1])
    if any(type(a) is Pending for a in arrays):
        arrays = _lazy.resolve_all(arrays)
    if extra:
        extra = _lazy.resolve_all(extra)
    scalars = {k: np.asarray(v, _lazy._SCALAR_DTYPES[k]) for k, v in seg.scalars.items()}
    outputs = program.launch(arrays, scalars, extra)
    leaf_grads, retained_grads, live_values = outputs
    # committed once the program is known to have succeeded
    flight = _faults.Flight(_one_of(outputs), seg.nodes)
    _write_back(seg, live, live_values, flight)
    for j, g in leaf_grads.items():
        var = seg.leaves[j].variable
        if not var._requires_grad:
            continue   # detached in place (detach_) since: PyTorch's AccumulateGrad drops its gradient
        flight.remember_grad(var)
        if var._grad is None:
            var._grad = grad_like(var, g)   # in the leaf's strides
        else:
            var._grad._set_value(g)
    refs = _segment.autograd_refs(seg)
    for (pos, k, _), g in zip(retained, retained_grads):
        if g is None:
            continue
        t = refs[pos]().retained[k]()
        flight.retained.append((t, t._grad))
        t._grad = Tensor._wrap(g)
    _let_go(program.layout, nodes if refs is seg.nodes else [ref() for ref in refs], not retain_graph)
    flight.launched()
    return True


def _let_go(order, nodes, free):
    """Each node (of `nodes`, by position) frees its saved values (free: no retain_graph) and drops its forward
    inputs once no output can be asked for, in `order`: consumers first, so that what a node lets go of, its
    producers may then drop. (One loop over every op of the step: the common cases inline.)"""
    forget_inputs = _lazy.forget_inputs
    for n in [nodes[pos] for pos in order]:
        if n is None:
            continue
        if free and n.saves:
            n.release()   # (an autograd.Function's node lets go of its saved tensors too)
        if n.args is not None:
            outs = n.outs
            if len(outs) == 1:   # (most ops: forget_inputs, inline)
                p = outs[0]()
                if p is None or p.value is not None:
                    n.args = None
            else:
                forget_inputs(n)


def _check_versions(seg, root):
    # Only the nodes this backward runs: a value saved by an op off the root's path may be modified.
    refs = _segment.autograd_refs(seg)
    for pos in reachable(_segment.decode(seg.flat), root):
        n = refs[pos]()
        if n is not None:
            check_versions(n)
            if stops_backward(n):
                break


def _one_of(outputs):
    """One output of a program: all are ready, or failed, together."""
    for group in (outputs[2], outputs[0].values(), outputs[1]):
        for value in group:
            if value is not None:
                return value
    return None


def _write_back(seg, live, values, flight):
    for (pos, k), value in zip(live, values):
        ln = seg.nodes[pos]()
        if ln is not None:
            p = ln.outs[k]()
            if p is not None:
                flight.produce(p, on_device(value))   # (one that ran on NumPy goes to the device)


def _compile(key):
    step = StepProgram(key)

    def program(arrays, scalars, extra):
        results, args_of, _ = _lazy.run_forward(step.entries, (arrays, scalars))
        return step.backward(results, args_of, extra, traced_call, TRACED)

    return program, step.order
