"""create_graph=True: the backward itself recorded on the tape, so it can be differentiated again.

The backward of a graph is one pure function: the engine's walk over each node's VJP
(`_walk.walk` with traced calls, exactly what the compiled backward runs) applied to the values
the nodes saved and to the seeds. With create_graph it is recorded as an op of its own. Its
inputs are the saved values, each connected to the node that produced it (or to its leaf), the
seeds given as tensors, and the results of the ops whose PyTorch backward reads them (exp, tanh...),
each connected to its op's own node (see _result_input); its VJP is `jax.vjp` of that function, as
for every op, so gradients of gradients work to any order without a rule of their own.

One lazy op computes every gradient; each gradient then gets an autograd node of its own, as in
PyTorch where every gradient is the result of its own formula. The node of gradient k
differentiates output k only, reads only the inputs that output depends on, and is named after the
last op of its formula. A gradient that depends on no input requiring grad (the gradient of a sum)
is a plain tensor, as in PyTorch.

Programs (the op, its per-gradient nodes' ops, names and dependencies) are cached by structure:
the graph key, which gradients are wanted, which seeds are given and the inputs' shapes and dtypes.
Graphs with tensor hooks are recorded node by node (one op per node signature), so each hook sees
its gradient as a tensor, and may replace it, before it flows further.

Inside a forward-AD level the values a backward reads may carry tangents (`forward_ad.saved_tangents`):
then the recorded op also takes those tangents and computes, by `jax.jvp` of the same function, the
tangent of every gradient (forward-over-reverse: a Hessian-vector product), which the gradient carries.
The tangents are outputs of the recorded op like the gradients, so they are differentiable in turn.
"""
import operator
import re

import jax
import jax.numpy as jnp

from .. import _dispatch, _lazy, _programs, _segment
from .._grad_mode import enable_grad
from .._memory_format import grad_like, keep_layout
from .._ops._registry import KEEP, Op, named_formula
from .._tensor import Tensor
from . import _saved, forward_ad
from ._backward_names import (NO_DERIVATIVE_ERRORS, UNDEFINED_TIE, no_derivative_name, output_crossings,
                              output_dependencies, output_names)
from ._engine import _hook_runner, _node_hooks, _with_retained
from ._walk import TRACED, Arith, node_backward, reads_result, result_backward, sum_to_dims, traced_call, walk
from ._graph import Graph, summed_roots, targets_of
from .graph import unpacked
from ._hooks import run_post_accumulate_hooks, through_gradient_hooks

_backward_ops = _programs.bounded_cache()   # structure key -> _Program

REFERENCE_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid "
    "this. If you have to use this function, make sure to reset the .grad fields of your parameters to None "
    "after use to break the cycle and avoid the leak.")


class _Program:
    """A recorded backward for one structure: the op computing every gradient, and per gradient
    (op of that gradient alone, positions of the inputs its node differentiates), or None when the
    gradient depends on no input that requires grad."""

    __slots__ = ("op", "avals", "outputs", "plans")

    def __init__(self, fn, nout, examples, edged):
        closed = jax.make_jaxpr(fn)(*examples)
        self.avals = tuple((tuple(a.shape), a.dtype) for a in closed.out_avals)
        names = output_names(closed)
        # the jaxpr's inputs are the arguments' leaves: a None argument (clamp's absent max) has none
        argument_of = [i for i, x in enumerate(examples) for _ in jax.tree_util.tree_leaves(x)]
        deps = [frozenset(argument_of[j] for j in d) for d in output_dependencies(closed)]
        flows = [frozenset(argument_of[j] for j in d) for d in output_dependencies(closed, through_ties=False)]
        crossings = [{argument_of[j]: error for j, error in c.items()} for c in output_crossings(closed)] \
            if NO_DERIVATIVE_ERRORS else [{}] * nout   # (no kernel without a derivative traced yet: no marks)
        single = nout == 1
        whole = fn if not single else (lambda *xs: fn(*xs)[0])
        self.op = Op("backward", whole, dtype_rule=KEEP, nout=nout, node_name=names[0])
        self.outputs = []
        for k in range(nout):
            diff = tuple(i for i in sorted(deps[k]) if edged[i])
            if not diff:
                self.outputs.append(None)
                continue
            # (where its path crosses a kernel PyTorch cannot differentiate, its derivative raises that error)
            missing = {i: crossings[k][i] for i in diff if i in crossings[k]} or None
            op_k = Op("backward", _output(fn, k), dtype_rule=KEEP, diff=diff, node_name=names[k],
                      no_derivative_at=missing)
            self.outputs.append((op_k, diff, tuple(i for i in diff if i in flows[k])))
        self.plans = [None] * nout


def _output(fn, k):
    return lambda *xs: fn(*xs)[k]


def _program(key, make_fn, nout, inputs, edged):
    prog = _backward_ops.get(key)
    if prog is None:
        examples = [jax.ShapeDtypeStruct(v.shape, v.dtype) if hasattr(v, "dtype") else v for v in inputs]
        prog = _backward_ops.put(key, _Program(make_fn(), nout, examples, edged))
    return prog


def _kinds(values):
    return tuple((tuple(v.shape), v.dtype) if hasattr(v, "dtype") else type(v) for v in values)


# ---- recording one backward op -------------------------------------------------------------

def _record_backward(key, make, nout, inputs, edges, checks, tangents=None, unread=()):
    """Record the backward op that `make` builds on `inputs` (cached under `key`); one Tensor per gradient.
    tangents: per input its tangent at the active forward-AD level (or None): each gradient then carries
    the tangent the op computes beside it. unread: positions of results kept and version-checked although
    the op does not read them (see _guards_result)."""
    positions = () if tangents is None else tuple(i for i, t in enumerate(tangents) if t is not None)
    total = nout
    if positions:
        given = [tangents[i] for i in positions]
        key = key + (positions,)
        make = _forward_of(make, positions)
        inputs = inputs + [t._peek() for t in given]
        edges = edges + [t._edge() if t._requires_grad else None for t in given]
        total = 2 * nout
    kinds = _kinds(inputs)
    edged = tuple(e is not None for e in edges)
    prog = _program(key + (kinds, edged), make, total, inputs, edged)
    results = _record(prog, inputs, edges, checks, kinds, unread)
    if positions:
        for g, tangent in zip(results[:nout], results[nout:]):
            forward_ad.set_tangent(g, tangent)
    return results[:nout]


def _forward_of(make, positions):
    """make's function returning, after its results, their tangents given those of the inputs `positions`
    (passed after the inputs)."""
    def made():
        fn = make()

        def both(*xs):
            n = len(xs) - len(positions)
            values = list(xs[:n])

            def part(*diff):
                full = list(values)
                for i, x in zip(positions, diff):
                    full[i] = x
                return tuple(fn(*full))
            primals = [values[i] for i in positions]
            tangents = [jnp.asarray(t, p.dtype) for t, p in zip(xs[n:], primals)]
            out, tangent_out = jax.jvp(part, primals, tangents)
            return tuple(out) + tuple(tangent_out)
        return both
    return made


def _record(prog, inputs, edges, checks, kinds, unread=()):
    """Record prog's op on `inputs`; returns one Tensor per gradient, each with its own node."""
    op = prog.op
    if _dispatch.LAZY[0]:
        outs = _lazy.record(_lazy.forward_signature(op, (), None), inputs, prog.avals)
        _segment.add(outs[0].node, inputs, None)
    else:
        out = _dispatch.forward_fn(op, (), None)(*_lazy.resolve_all(inputs))
        outs = out if op.nout > 1 else (out,)
    results = []
    for k, value in enumerate(outs):
        t = Tensor._wrap(value)
        spec = prog.outputs[k]
        if spec is not None:
            t._attach(_node(prog, k, spec, inputs, edges, checks, kinds, unread), 0)
        results.append(t)
    return results


def _node(prog, k, spec, inputs, edges, checks, kinds, unread=()):
    """The node of gradient k. It lists every input the gradient depends on (PyTorch's node for the formula
    has them all as inputs: spec's diff) and differentiates those a gradient flows back to (spec's flows):
    through an undefined tie none does, and what lies behind gets no gradient from it (PyTorch's undefined
    gradient: a leaf's .grad stays None, autograd.grad calls the input unused)."""
    op_k, diff, flows = spec
    plans = prog.plans[k]
    if plans is None:
        plans = prog.plans[k] = (_saved.plan(op_k, (), None, flows, inputs, kinds),
                                 _saved.plan(op_k, (), None, diff, inputs, kinds)[0])
    (_, sig, mask, _), needed = plans   # (a recorded backward frees what it keeps, whatever the formula)
    if unread:
        needed = [keep or i in unread for i, keep in enumerate(needed)]
    saved = [v if keep else None for v, keep in zip(inputs, needed)]   # (all its formula reads: checked)
    node_edges = [None] * len(inputs)
    for i in flows:
        node_edges[i] = edges[i]
    node_checks = [c for c in checks if needed[c[2]]]
    node = op_k.node_class(op_k, saved, node_edges, (prog.avals[k],), sig, node_checks, True, mask)
    if flows != diff:
        node.listed = [edges[i] if i in diff else None for i in range(len(inputs))]
    return node


# ---- the graph's inputs: saved values with where they came from ------------------------------

def _graph_inputs(graph, given_seeds):
    """Saved values of the graph's nodes (graph order), the given seeds, then the results of the nodes
    whose backward reads its result (see _result_input), with their edges and the version checks that
    guard them; the positions in the graph of those nodes; and the inputs' tangents (None where no
    tangent may be met: see forward_ad.carried)."""
    inputs, edges, checks, results, unread = [], [], [], [], []
    tangents = [] if forward_ad.carried() else None
    for i, n in enumerate(graph.nodes):
        if n in graph.capture:
            continue   # not run: nothing of it is read
        kept = []
        for value, edge, guard, tangent in kept_entries(n):
            if guard is not None:
                checks.append(guard + (len(inputs),))
                if type(guard) is SavedGuard:
                    unread.append(len(inputs))
            inputs.append(value)
            edges.append(edge)
            kept.append(value)
            if tangents is not None:
                tangents.append(tangent)
        if reads_result(n.sig) or _guards_result(n):
            results.append((i, _result_input(n, kept)))
    for s in given_seeds:
        checks.append((s._storage.counter, s._storage.version, len(inputs)))
        inputs.append(s._peek())
        edges.append(s._edge() if s._requires_grad else None)
        if tangents is not None:
            tangents.append(forward_ad.tangent_of(s))
    for i, (value, edge, guard) in results:
        if guard is not None:
            checks.append(guard + (len(inputs),))
        if not reads_result(graph.nodes[i].sig):
            unread.append(len(inputs))
        inputs.append(value)
        edges.append(edge)
        if tangents is not None:
            tangents.append(_output_tangent(graph.nodes[i], 0))
    return inputs, edges, checks, tuple(i for i, _ in results), tangents, tuple(unread)


def kept_entries(node):
    """(value, edge, version check or None, tangent or None) of each argument the node's backward reads:
    what a recorded backward takes of it (the tangent: see forward_ad.saved_tangents)."""
    guarded = {index: (ref, version) for ref, version, index in node.checks if index >= 0}
    noted = forward_ad.saved_tangents(node) or {}
    saves = node.op.recorded_saves
    if saves is None and node.op.fused_backward is True and node.op.no_double_backward is None:
        saves = range(len(node.kept))   # (PyTorch's x_backward kernel, recorded, saves what it is given)
    return [(unpacked(node.kept[i]), node.edges[i], _recorded_guard(guarded.get(i), i, saves), noted.get(i))
            for i in _saved.kept_positions(node.sig)]


class SavedGuard(tuple):
    """The guard of a kept value that PyTorch's recorded formula saves though JAX's does not read it: the
    recorded backward keeps and checks it all the same (an `unread` input of _record_backward)."""


def _recorded_guard(guard, position, saves):
    if saves is None or guard is None:
        return guard
    return SavedGuard(guard) if position in saves else None   # (Op.recorded_saves)


def _output_tangent(node, k):
    noted = forward_ad.saved_tangents(node)
    return None if noted is None else noted.get(-1 - k)


# PyTorch's backward of exp, tanh, relu... reads the op's result (Op.result_backward): recorded with
# create_graph, that formula takes the result as an input, connected to the op's own node, so the
# gradient's graph goes through that node again: the result's in-place changes, retained grad and hooks
# take part as in PyTorch. The node keeps its inputs, not its result: the result is the tape's pending
# output while something still holds it, else computed again from the inputs.
def _guards_result(node):
    """Whether PyTorch's formula reads the node's (one) result where the JAX VJP recorded for it does not
    (pow's exponent gradient: grad * result * log(self)): the result is an input of the recorded backward
    all the same, unread, so that an in-place change of it since makes the later backward fail as PyTorch's."""
    return node.op.nout == 1 and any(index == -1 for _, _, index in node.checks)


def _result_input(node, kept):
    """(the node's result, its edge, its version check) as an input of a recorded backward."""
    guard = next(((ref, version) for ref, version, index in node.checks if index == -1), None)
    pending = node.outs[0]() if node.outs else None
    return (node.result_value(kept) if pending is None else pending), (node, 0), guard


# A gradient through an op whose PyTorch backward is a fused kernel reading the input (Op.fused_backward)
# depends on that input; JAX's where() formula reads it through a comparison only (or not at all: prod
# over one element), which output_dependencies cuts: tie the gradient to the kept values, values unchanged.
# A formula on the result (relu's) is tied to the result it reads instead. An op whose PyTorch backward is
# one kernel of its own (layer_norm's: NativeLayerNormBackwardBackward0, avg_pool2d's) names every gradient it
# computes after that kernel's node (Op.backward_name); Op.tie_undefined: its tie passes no gradient back.
def _tied(sid, grads, kept, read=None):
    op = _saved.SIGNATURES[sid][0]
    fused = op.fused_backward
    tied = fused is True or (fused and fused(*kept))
    if tied:
        values = tuple(kept if read is None else read)
        if op.no_double_backward is not None:
            grads = _marked_tie(tuple(grads), values, no_derivative_name(op.no_double_backward))
        else:
            grads = (_undefined_tie if op.tie_undefined else _tie)(tuple(grads), values)
    name = op.backward_name
    if name is True:   # (the node of PyTorch's x_backward kernel, where one runs: see Op.backward_name)
        if not tied:
            return grads
        kinds = list(_saved.SIGNATURES[sid][4])   # (the kinds of what the node does not keep)
        for i, k in zip(_saved.kept_positions(sid), kept):
            kinds[i] = (tuple(k.shape), k.dtype) if hasattr(k, "shape") else type(k)
        static = _saved.SIGNATURES[sid][1]
        name = re.sub(r"Backward\d+$", "BackwardBackward0", op.node_class_for(static, tuple(kinds)).__name__)
    if name is not None:
        grads = named_formula(name, lambda *g: g)(*grads)
    return grads


def _tie(grads, values):
    """The gradients, depending on `values` too (their derivative: zeros, as PyTorch's formula gives)."""
    return jax.lax.optimization_barrier((grads, values))[0]


def _undefined_tie(grads, values):
    """_tie, where PyTorch's double backward gives the values no gradient at all (a fused kernel with a
    formula of its own: layer_norm's weight gets none from the weight's gradient): a call that
    output_dependencies(through_ties=False) looks through (see _backward_names.UNDEFINED_TIE)."""
    return _marked_tie(grads, values, UNDEFINED_TIE)


def _marked_tie(grads, values, name):
    """_tie as a call named `name`, which the dependency walks of _backward_names recognise."""
    n = len(jax.tree_util.tree_leaves(grads))

    def tie(*xs):
        return _tie(xs[:n], xs[n:])
    tie.__name__ = name
    return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(grads),
                                        jax.jit(tie)(*jax.tree_util.tree_leaves(grads), *values))


def _recorded_call(i, sid, out_avals, kept, cts):
    return _tied(sid, traced_call(i, sid, out_avals, kept, cts), kept)


def _on_result(sid, kept, result, cts):
    return _tied(sid, result_backward(sid)(kept, result, cts), kept, (result,))


def _whole_graph(gkey, targets, seed_pattern, nsaved, result_nodes):
    ngiven = sum(seed_pattern)

    def make():
        def backward(*xs):
            given = iter(xs[nsaved:nsaved + ngiven])
            seeds = [next(given) if g else None for g in seed_pattern]
            result_of = dict(zip(result_nodes, xs[nsaved + ngiven:]))

            def call(i, sid, out_avals, kept, cts):
                if i in result_of and reads_result(sid):
                    return _on_result(sid, kept, result_of[i], cts)
                return _recorded_call(i, sid, out_avals, kept, cts)
            results = walk(gkey, list(xs[:nsaved]), seeds, {}, call, TRACED)
            return tuple(results[t] for t in targets)
        return backward
    return make


# ---- entry point --------------------------------------------------------------------------

def run(roots, seeds, retain_graph, wanted=None, accumulate=False):
    """Record the backward from `roots` (seeds: Tensors, or None for implicit ones).

    Returns (graph, {target: Tensor}, want_keys): targets are -1-j for leaf j and (node, output)
    for retained or wanted non-leaves; want_keys maps `wanted` to targets (None: not in the graph).
    """
    try:
        with enable_grad():   # PyTorch runs a create_graph backward in grad mode
            return _run(roots, seeds, retain_graph, wanted, accumulate)
    finally:
        _segment.end()   # every backward starts a new tape segment


def _run(roots, seeds, retain_graph, wanted, accumulate):
    root_edges = [t._edge() for t in roots]
    implicit = ([(tuple(t.shape), t.dtype.np) for t in roots], [s is None for s in seeds])
    graph = Graph(root_edges, implicit, targets_of(wanted), summed_roots(roots, root_edges), run_targets=accumulate)
    gkey = graph.key
    want_keys = None
    if wanted is None:
        targets = [-1 - j for j in range(len(graph.leaves))]
        for i in graph.retaining:
            targets.extend((i, k) for k in (gkey[0][i][2] or ()))
    else:
        want_keys = _want_keys(graph, wanted)
        extra = {}
        for k in want_keys:
            if type(k) is tuple:
                extra.setdefault(k[0], set()).add(k[1])
        if extra:
            gkey = _with_retained(gkey, extra)
        targets = list(dict.fromkeys(k for k in want_keys if k is not None))
        # retain_grad() tensors on the way get their .grad in autograd.grad too (PyTorch's hooks fire)
        for i in graph.retaining:
            targets.extend(t for t in ((i, k) for k in (graph.key[0][i][2] or ())) if t not in targets)
    if graph.hooked or graph.custom:
        results = _node_by_node(graph, gkey, seeds, roots)
    elif targets:
        results = _as_one_op(graph, gkey, targets, seeds)
    else:
        results = {}
    if not retain_graph:
        graph.release()
    return graph, results, want_keys


def _want_keys(graph, wanted):
    leaf_index = {leaf.variable: -1 - j for j, leaf in enumerate(graph.leaves)}
    node_index = {n: i for i, n in enumerate(graph.nodes)}
    keys = []
    for t in wanted:
        if t._grad_fn is None:
            keys.append(leaf_index.get(t))
        else:
            i = node_index.get(t._grad_fn)
            keys.append(None if i is None else (i, t._out_idx))
    return keys


def _as_one_op(graph, gkey, targets, seeds):
    given = [s for s in seeds if s is not None]
    inputs, edges, checks, result_nodes, tangents, unread = _graph_inputs(graph, given)
    seed_pattern = tuple(s is not None for s in seeds)
    key = ("graph", gkey, tuple(targets), seed_pattern)
    make = _whole_graph(gkey, tuple(targets), seed_pattern, len(inputs) - len(given) - len(result_nodes),
                        result_nodes)
    return dict(zip(targets, _record_backward(key, make, len(targets), inputs, edges, checks, tangents, unread)))


# ---- graphs with hooks: one recorded op per node ---------------------------------------------

def _node_by_node(graph, gkey, seeds, roots):
    saved = []
    for n in graph.nodes:
        if n not in graph.capture:
            saved += kept_entries(n)
    seeds = [Tensor._wrap(jnp.ones(tuple(t.shape), t.dtype.np)) if s is None else s for t, s in zip(roots, seeds)]
    return walk(gkey, saved, seeds, {}, _node_recorder(graph.nodes), _ON_TENSORS,
                 _hook_runner(graph.nodes, _same, _same), _node_hooks(graph.nodes, _same, _same, _record_node))


def _same(t):
    return t


def _zeros_tensor(shape, dtype):
    from .._creation import zeros
    from .._dtypes import from_jax
    return zeros(tuple(shape), dtype=from_jax(dtype))


def _sum_to_tensor(g, shape):
    dims = sum_to_dims(tuple(g.shape), tuple(shape))
    return (g.sum(dims, keepdim=True) if dims else g).reshape(tuple(shape))


# Node by node the walk sums recorded tensors, so its sums are recorded ops too.
_ON_TENSORS = Arith(None, _zeros_tensor, operator.add, _sum_to_tensor)


def _node_recorder(nodes):
    """Node by node: each node's VJP recorded as an op; a Function's backward run in grad mode, so its
    own ops are recorded (as PyTorch runs it with create_graph)."""
    def record(i, sid, out_avals, kept, cts):
        if _saved.SIGNATURES[sid][0].custom is not None:
            return nodes[i].run_python(cts, True)
        if reads_result(sid) or _guards_result(nodes[i]):
            value, edge, guard = _result_input(nodes[i], [v for v, _, _, _ in kept])
            return _record_node(sid, out_avals, kept, cts, (value, edge, guard, _output_tangent(nodes[i], 0)))
        return _record_node(sid, out_avals, kept, cts)
    return record


def _record_node(sid, out_avals, kept, cts, result=None):
    """One node's VJP recorded as an op: inputs are its kept values, its result when its formula reads it
    (_result_input), and the cotangents (tensors); kept and result are (value, edge, guard, tangent)."""
    cts = [c if isinstance(c, Tensor) else Tensor._wrap(c) for c in cts]
    nkept = len(kept)
    if result is not None:
        kept = kept + [result]
    inputs = [v for v, _, _, _ in kept] + [c._peek() for c in cts]
    edges = [e for _, e, _, _ in kept] + [c._edge() if c._requires_grad else None for c in cts]
    checks = [guard + (i,) for i, (_, _, guard, _) in enumerate(kept) if guard is not None]
    tangents = None
    if forward_ad.carried():
        tangents = [t for _, _, _, t in kept] + [forward_ad.tangent_of(c) for c in cts]
    nout = len(_saved.SIGNATURES[sid][3])

    def make():
        if result is not None and reads_result(sid):
            return lambda *xs: tuple(_on_result(sid, xs[:nkept], xs[nkept], list(xs[nkept + 1:])))
        backward = node_backward(sid, out_avals)
        first_ct = nkept + (result is not None)   # (a result only guarded: unread)
        return lambda *xs: tuple(_tied(sid, backward(list(xs[:nkept]), list(xs[first_ct:])), xs[:nkept]))
    unread = tuple(i for i, (_, _, guard, _) in enumerate(kept) if type(guard) is SavedGuard)
    if result is not None and not reads_result(sid):
        unread += (nkept,)
    return _record_backward(("node", sid, out_avals), make, nout, inputs, edges, checks, tangents, unread)


# ---- writing .grad ---------------------------------------------------------------------------

def accumulate(old, new, first=None, leaf=None):
    """PyTorch's AccumulateGrad in grad mode: a first gradient is copied (CopyBackwards; a retained
    non-leaf's is cloned), a later one is added out of place (AddBackward0), so .grad carries the
    history of both. A leaf's first gradient gets the leaf's strides (_memory_format.keep_layout)."""
    from .._ops import elementwise as E
    with enable_grad():
        if old is None:
            if not new._requires_grad:
                return new if leaf is None or leaf._view is None else grad_like(leaf, new._value)
            out = _dispatch.apply(E.clone, new) if first == "clone" else _dispatch.apply(E.copy, new.detach(), new)
            return out if leaf is None or leaf._view is None else keep_layout(out, leaf)
        return old + new


def write_grads(graph, results, hooked):
    """Accumulate recorded gradients into the leaves' and retained tensors' .grad."""
    for j, leaf in enumerate(graph.leaves):
        g = results.get(-1 - j)
        if g is None:
            continue
        var = leaf.variable
        if hooked:
            g = through_gradient_hooks(var, g)
        if not var._requires_grad:
            continue   # detached in place (detach_) since: PyTorch's AccumulateGrad drops its gradient
        var._grad = accumulate(var._grad, g, leaf=var)
        if hooked:
            run_post_accumulate_hooks(var)
    write_retained(graph, results)


def write_retained(graph, results):
    """Accumulate recorded gradients into the .grad of tensors that called retain_grad()."""
    for i, n in enumerate(graph.nodes):
        for k, ref in (n.retained or {}).items():
            t = ref()
            g = results.get((i, k))
            if t is not None and g is not None:
                t._grad = accumulate(t._grad, g, first="clone")
