"""The backward engine: one pure JAX function per graph structure, compiled once.

The first time a structure is seen the graph runs node by node (each node's
VJP jitted and cached per op signature), so one-off graphs never pay for a
whole-graph compile. When the same structure comes back it is compiled into
one `jax.jit` call that also accumulates into existing grads. Graphs with
tensor hooks always run node by node, so hooks see every gradient as in PyTorch.
"""
import contextlib

import jax

from . import _saved, anomaly_mode
from .. import _chunks, _faults, _host_values, _lazy, _meta, _programs, _segment
from .._tensor import Tensor
from .._memory_format import grad_like
from . import _chunked, _fast
from ._hooks import checked_result, run_post_accumulate_hooks, through_gradient_hooks, through_leaf_hooks
from ._graph import Graph, changed_shape, summed_roots, targets_of
from ._walk import EAGER, TRACED, eager_vjp, kernel_add, traced_call, walk


def backward_cache_info():
    """What the program caches did, as XLA saw it.

    hits / misses: structure lookups that found a compiled program / structures seen for the first time;
    compiles, compile_seconds: XLA compilations inside tapegrad (JAX's own compile events), kernels
    included; disk_loads: programs loaded instead from the compilation cache an earlier run left on disk;
    executions: programs and kernels run; entries / kernels: cached programs / per-op kernels;
    cache_bytes: the resident memory their compiles added; evictions: entries dropped by the caches'
    bounds (entries and bytes, least recently used first).
    """
    return _programs.info()


def clear_backward_cache():
    _programs.clear()


def _eager_calls(nodes):
    """Node by node: each node's VJP as a kernel; a Function run in Python as itself."""
    def call(i, sig, out_avals, kept, cts):
        custom = _saved.SIGNATURES[sig][0].custom
        if custom is not None and custom.python:
            return nodes[i].run_python(cts, False)
        return eager_vjp(sig, out_avals, kept, cts)
    if not anomaly_mode.is_anomaly_enabled():
        return call

    def checked_call(i, sig, out_avals, kept, cts):
        node = nodes[i]
        try:
            grads = call(i, sig, out_avals, kept, cts)
        except Exception:
            anomaly_mode.report(node, node.name())
            raise
        # PyTorch numbers a node's outputs over its tensor inputs
        inputs = [k for k, is_tensor in enumerate(node.tensor_args or ()) if is_tensor]
        anomaly_mode.checked(node, node.name(), grads, [inputs.index(k) if k in inputs else k
                                                         for k in _saved.SIGNATURES[sig][3]])
        return grads
    return checked_call


def _output_keys(key):
    node_keys, nleaves, _ = key
    keys = [-1 - j for j in range(nleaves)]
    for i, (_, _, retained, _) in enumerate(node_keys):
        keys.extend((i, k) for k in retained or ())
    return keys


def _compile(key, existing_keys, seed_pattern, plan_key):
    """One jitted program: the pending forward values, then the whole backward."""
    out_keys = _output_keys(key)
    nsaved = _count_saved(key)
    nexisting = len(existing_keys)

    def whole(inputs):
        resolved, live, _ = _lazy.evaluate(plan_key, inputs)
        saved, existing, seeds = _split(resolved, nsaved, nexisting, seed_pattern)
        results = walk(key, saved, seeds, dict(zip(existing_keys, existing)), traced_call, TRACED)
        return [results.get(k) for k in out_keys], live

    return whole, out_keys


def _chunk_program(subkey, carry_pattern):
    """One chunk of a long walk (see _chunked): seeds and carried sums in, the exits' sums out."""
    nexits = subkey[1]

    def run(kept, seeds, carried):
        carried = iter(carried)
        start = {-1 - e: next(carried) for e, c in enumerate(carry_pattern) if c}
        results = walk(subkey, kept, seeds, {}, traced_call, TRACED, carried=start)
        return [results.get(-1 - e) for e in range(nexits)]
    return run


def _run_compiled(program, out_keys, plan):
    outs, live = program(plan.packed_inputs())
    plan.write_back(live)
    return dict(zip(out_keys, outs))


def _count_saved(key):
    return sum(len(_saved.kept_positions(sid)) for sid, wiring, *_ in key[0] if wiring is not None)


def _split(resolved, nsaved, nexisting, seed_pattern):
    saved = resolved[:nsaved]
    existing = resolved[nsaved:nsaved + nexisting]
    rest = iter(resolved[nsaved + nexisting:])
    seeds = [next(rest) if given else None for given in seed_pattern]
    return saved, existing, seeds


# ---- entry point --------------------------------------------------------------------

def run_backward(roots, seeds, retain_graph, wanted=None, accumulate=True):
    """Backpropagate from `roots` (tensors) with `seeds` (arrays or None for implicit ones).

    wanted: optional list of tensors whose gradients are returned instead of (or besides)
    accumulated; accumulate=False returns them without touching any .grad (autograd.grad).
    """
    _faults.confirm()   # the last step's program: its graph is freed (or not) once it has run
    try:
        fast = None
        if wanted is None and len(roots) == 1 and _fast_path_applies(roots[0]):
            fast = _fast.try_backward(roots[0], seeds[0], retain_graph)
            if fast is True:
                _faults.settle()
                return None
        result = _general_backward(roots, seeds, retain_graph, wanted, accumulate, fast is _fast.FIRST_SIGHT)
        _faults.settle()
        return result
    except _faults.RUNTIME_ERRORS as e:
        raise _faults.failed(e, _segment.where_recorded(_segment.current())) from None
    finally:
        _segment.end()   # every backward starts a new tape segment


def _fast_path_applies(root):
    node = root._grad_fn
    return (node is not None and node.closed and node.seg is _segment.current() and not node.seg.hooked
            and not anomaly_mode.is_anomaly_enabled()
            # (a root whose shape an in-place view op changed without history: its seed is summed back, see Graph)
            and changed_shape(root, (node, root._out_idx)) is None)


def _general_backward(roots, seeds, retain_graph, wanted, accumulate, fast_first_sight=False):
    root_edges = [t._edge() for t in roots]
    implicit = ([(t.shape, t.dtype.np) for t in roots], [s is None for s in seeds])
    graph = Graph(root_edges, implicit, targets_of(wanted), summed_roots(roots, root_edges), run_targets=accumulate)
    nodes, leaves = graph.nodes, graph.leaves
    if _meta.USED[0] and (_meta.among(graph.saved) or _meta.among([t._peek() for t in roots])):
        return _meta_backward(graph, wanted, accumulate, retain_graph)

    # Targets whose grads come back: leaves, retained non-leaves, and `wanted` tensors.
    existing = {}
    if accumulate:
        for j, leaf in enumerate(leaves):
            g = leaf.variable._grad
            if g is not None:
                existing[-1 - j] = g._peek()
    want_keys = []
    if wanted is not None:
        leaf_index = {leaf.variable: -1 - j for j, leaf in enumerate(leaves)}
        node_index = {n: i for i, n in enumerate(nodes)}
        for t in wanted:
            if t._grad_fn is None:
                want_keys.append(leaf_index.get(t))
            else:
                want_keys.append((node_index.get(t._grad_fn), t._out_idx) if t._grad_fn in node_index else None)
    retained_extra = {}
    for k in want_keys:
        if type(k) is tuple and k[0] is not None:
            retained_extra.setdefault(k[0], set()).add(k[1])
    if retained_extra:
        graph.key = _with_retained(graph.key, retained_extra)
    if accumulate:
        for i in graph.retaining:
            for k, ref in nodes[i].retained.items():
                t = ref()
                if t is not None and t._grad is not None:
                    existing[(i, k)] = t._grad._peek()

    hooked = graph.hooked
    if hooked:
        # Leaf hooks see the new gradient before it is accumulated: accumulate in _write_grads.
        existing = {k: v for k, v in existing.items() if type(k) is tuple}
    existing_keys = tuple(sorted(existing, key=repr))
    seed_pattern = tuple(s is not None for s in seeds)
    # The roots' own values come along: they are usually wanted next (loss.item()).
    plan = _lazy.Plan(graph.saved + [existing[k] for k in existing_keys] + [s for s in seeds if s is not None]
                      + [t._peek() for t in roots])
    key = ("backward", graph.key, existing_keys, seed_pattern, plan.key)
    program = None
    plain = not (hooked or graph.python or anomaly_mode.is_anomaly_enabled())
    long_graph = plain and len(graph.nodes) + len(plan.nodes) > _programs.MAX_PROGRAM_OPS   # run in chunks
    # A graph whose segment's structure was new (fast_first_sight) will most often take the fast path next
    # time: the segment of a loop's first step also holds what ran before the loop (loading, setting up),
    # the next one only the step. Its own program is therefore looked up, and so compiled when it comes
    # back, only from its second such sighting on: a loop over a changing segment still compiles it.
    remember = not fast_first_sight or _programs.seen_before(("after first sight", key))
    # (seeds a transform traces, vmap's batch of grad_outputs: a program would hand tracers back as the values
    # of the graph's pending tensors, which live outside the trace; node by node, those are computed as they are)
    traced = any(isinstance(s, jax.core.Tracer) for s in seeds)
    if plain and not long_graph and remember and not traced:
        program = _programs.lookup(key, _programs.shapes_of(plan.inputs[0]),
                                   lambda: _compile(graph.key, existing_keys, seed_pattern, plan.key))
    if program is not None:
        results = _run_compiled(program, program.layout, plan)
    else:
        # Tier 1 (and hooked graphs): pending values first, then node by node. Without hooks or Python
        # nodes the values pass between kernels in host memory (see _host_values) until the grads leave.
        host = plain
        with _host_values.op_by_op() if host else contextlib.nullcontext():
            if traced:   # (the graph's own values computed outside the trace; the traced seeds as they are)
                own = graph.saved + [existing[k] for k in existing_keys]
                with jax.ensure_compile_time_eval():
                    computed = _lazy.resolve_all(own + [t._peek() for t in roots])
                resolved = computed[:len(own)] + [s for s in seeds if s is not None] + computed[len(own):]
            else:
                resolved = plan.run(count=False, host=host, remember=remember)
            _keep_root_values(roots, resolved[len(resolved) - len(roots):])
            saved, existing_values, seeds = _split(resolved, len(graph.saved), len(existing_keys), seed_pattern)
            existing = dict(zip(existing_keys, existing_values))
            results = None
            if long_graph and not (graph.retaining or wanted is not None):
                steady = _chunks.long_and_seen("backward-chunks", (graph.key, seed_pattern))
                if steady is not None:
                    grads = _chunked.walk(graph.key, saved, seeds, steady, _chunk_program, EAGER)
                    results = {j: g if existing.get(j) is None else kernel_add(existing[j], g)
                               for j, g in grads.items()}
            if results is None:
                results = walk(graph.key, saved, seeds, existing, _eager_calls(nodes), EAGER,
                               _hook_runner(nodes) if hooked else None, _node_hooks(nodes) if hooked else None)
        if host:
            results = {k: _host_values.on_device(g) for k, g in results.items()}
        jax.block_until_ready(list(results.values()))   # fail here, before any grad is written

    from .._func_checks import free_after_transforms
    freed_later = free_after_transforms(graph)   # (inside a transform: see there)
    graph.release(saved=not retain_graph and not freed_later)

    if wanted is not None and not accumulate:
        _accumulate_retained(results, nodes)   # PyTorch's retain_grad hooks fire in autograd.grad too
        if hooked:   # (and a wanted leaf's hooks: PyTorch runs them on the gradient it captures)
            results = through_leaf_hooks(leaves, results, Tensor._wrap)
        return [results.get(k) if k is not None else None for k in want_keys]
    _write_grads(results, leaves, nodes, hooked)
    if wanted is not None:
        return [results.get(k) if k is not None else None for k in want_keys]


def _meta_backward(graph, wanted, accumulate, retain_graph):
    """A backward through meta tensors: no values, so every gradient is a meta tensor of its tensor's shape
    and dtype (hooks do not run)."""
    nodes, leaves = graph.nodes, graph.leaves
    results = {-1 - j: _meta.MetaArray(leaf.variable.shape, leaf.variable.dtype.np) for j, leaf in enumerate(leaves)}
    for i, n in enumerate(nodes):
        for k, (shape, dtype) in enumerate(n.avals):
            results[(i, k)] = _meta.MetaArray(shape, dtype)
    graph.release(saved=not retain_graph)
    if wanted is not None:
        reached = set(nodes) | {leaf.variable for leaf in leaves}
        return [_meta.MetaArray(t.shape, t.dtype.np) if (t._grad_fn or t) in reached else None for t in wanted]
    _write_grads(results, leaves, nodes, False)
    return None


def _keep_root_values(roots, values):
    for t, v in zip(roots, values):
        p = t._peek()
        if type(p) is _lazy.Pending:
            _lazy._set_results(p.node, (p.index,), (v,))


def _with_retained(key, extra):
    node_keys, nleaves, root_key = key
    nk = list(node_keys)
    for i, outs in extra.items():
        sig, wiring, retained, avals = nk[i]
        nk[i] = (sig, wiring, tuple(sorted(set(retained or ()) | outs)), avals)
    return (tuple(nk), nleaves, root_key)


def _write_grads(results, leaves, nodes, hooked):
    for j, leaf in enumerate(leaves):
        g = results.get(-1 - j)
        if g is None:
            continue
        var = leaf.variable
        if hooked:
            g = through_gradient_hooks(var, Tensor._wrap(g))._value
            if var._grad is not None:
                g = kernel_add(var._grad._value, g)
        if not var._requires_grad:
            continue   # detached in place (detach_) since: PyTorch's AccumulateGrad drops its gradient
        g = _committed(g)
        if var._grad is None:
            var._grad = grad_like(var, g)   # in the leaf's strides
        else:
            var._grad._set_value(g)
        if hooked:
            run_post_accumulate_hooks(var)
    for i, n in enumerate(nodes):
        if n.retained:
            for k, ref in n.retained.items():
                t = ref()
                g = results.get((i, k))
                if t is not None and g is not None:
                    t._grad = Tensor._wrap(g)


def _accumulate_retained(results, nodes):
    for i, n in enumerate(nodes):
        for k, ref in (n.retained or {}).items():
            t, g = ref(), results.get((i, k))
            if t is not None and g is not None:
                t._grad = Tensor._wrap(g if t._grad is None else kernel_add(t._grad._value, g))


def _committed(g):
    # Grads from kernels whose inputs were all uncommitted come out uncommitted; the step program
    # would compile once more when the same grad arrives committed, so commit them to their device.
    # A traced grad (a compiled function's backward) has no placement yet.
    if isinstance(g, jax.core.Tracer):
        return g
    return g if getattr(g, "committed", True) else jax.device_put(g, g.sharding)


def _node_hooks(nodes, as_tensor=None, from_tensor=None, record_vjp=None):
    from ._node_hooks import runner
    return runner(nodes, as_tensor or Tensor._wrap, from_tensor or (lambda t: t._value), record_vjp)


def _hook_runner(nodes, as_tensor=None, from_tensor=None):
    """Tensor hooks of each node's outputs, applied to its cotangents as they arrive. The eager walk
    passes arrays (wrapped for the hook, unwrapped after); a recording walk passes tensors as they are."""
    if as_tensor is None:
        as_tensor, from_tensor = Tensor._wrap, lambda t: t._value

    def run(i, node_cts):
        hooks = nodes[i].hooks
        if not hooks:
            return node_cts
        node_cts = dict(node_cts)
        for k, fns in hooks.items():
            if k in node_cts:
                for fn in fns.values():
                    before = as_tensor(node_cts[k])
                    out = fn(before)
                    if out is not None:
                        node_cts[k] = from_tensor(checked_result(fn, before, out))
        return node_cts
    return run
