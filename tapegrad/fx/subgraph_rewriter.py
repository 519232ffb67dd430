"""replace_pattern (PyTorch's torch.fx.subgraph_rewriter): every non-overlapping match of a pattern's
graph in a GraphModule's graph replaced by the replacement's graph.

A match follows data dependencies backwards from the node that computes the pattern's output: the
pattern's placeholders match any node, its other nodes a node with the same op, target and literal
arguments. A matched node other than the output must have no users outside the match (else
rewriting would lose a value), as in torch.fx.
"""
from typing import NamedTuple

from .graph import Node, _map_nodes

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Node     # the pattern's node the match was found from (its output value)
    nodes_map: dict  # pattern node -> graph node


def replace_pattern(gm, pattern, replacement):
    """Rewrite gm in place (and recompile it); returns the matches, in graph order."""
    from . import symbolic_trace
    from .graph_module import GraphModule
    pattern_graph = pattern.graph if isinstance(pattern, GraphModule) else symbolic_trace(pattern).graph
    replacement_graph = replacement.graph if isinstance(replacement, GraphModule) else \
        symbolic_trace(replacement).graph
    graph = gm.graph
    pattern_out = _single_output(pattern_graph, "pattern")
    pattern_inputs = [n for n in pattern_graph.nodes if n.op == "placeholder"]
    matches, taken = [], set()
    for node in list(graph.nodes):
        if node.op in ("placeholder", "output") or node in taken:
            continue
        mapping = {}
        if not _match(pattern_out, node, mapping):
            continue
        inner = [g for p, g in mapping.items() if p.op != "placeholder"]
        if any(g in taken for g in inner) or not _self_contained(inner, node):
            continue
        taken.update(inner)
        matches.append(Match(pattern_out, mapping))
    for match in matches:
        _substitute(graph, match, [match.nodes_map.get(p) for p in pattern_inputs], replacement_graph)
    gm.recompile()
    return matches


def _single_output(graph, what):
    out = next(n for n in graph.nodes if n.op == "output").args[0]
    if not isinstance(out, Node):
        raise NotImplementedError(f"tapegrad.fx.replace_pattern: the {what} must return one value computed by the "
                                  "graph; split a pattern with several outputs into one pattern per output.")
    return out


def _match(p, g, mapping):
    """Does pattern node p match graph node g (extending mapping)?"""
    if p in mapping:
        return mapping[p] is g
    if p.op == "placeholder":
        mapping[p] = g
        return True
    if p.op != g.op or p.target != g.target or len(p.args) != len(g.args) or set(p.kwargs) != set(g.kwargs):
        return False
    mapping[p] = g
    ok = all(_match_arg(a, b, mapping) for a, b in zip(p.args, g.args)) and \
        all(_match_arg(p.kwargs[k], g.kwargs[k], mapping) for k in p.kwargs)
    if not ok:
        del mapping[p]
    return ok


def _match_arg(a, b, mapping):
    if isinstance(a, Node):
        return isinstance(b, Node) and _match(a, b, mapping)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_match_arg(x, y, mapping) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(_match_arg(a[k], b[k], mapping) for k in a)
    return not isinstance(b, Node) and type(a) is type(b) and a == b


def _self_contained(inner, anchor):
    """Only the anchor's value leaves the match: other matched nodes are read by matched nodes alone."""
    inside = set(inner)
    return all(user in inside for g in inner if g is not anchor for user in g.users)


def _substitute(graph, match, inputs, replacement_graph):
    env = {}
    placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(inputs):
        raise ValueError(f"tapegrad.fx.replace_pattern: the replacement takes {len(placeholders)} inputs but the "
                         f"pattern {len(inputs)}; give both the same parameters.")
    env.update(zip(placeholders, inputs))
    result, anchor = None, match.nodes_map[match.anchor]
    order = {n: i for i, n in enumerate(graph.nodes)}
    first_user = min(anchor.users, key=order.__getitem__)   # as torch.fx: the replacement goes just before it
    with graph.inserting_before(first_user):
        for node in replacement_graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                result = _map_nodes(node.args[0], env.__getitem__)
                continue
            env[node] = graph.node_copy(node, env.__getitem__)
    anchor.replace_all_uses_with(result)
    matched = {g for p, g in match.nodes_map.items() if p.op != "placeholder"}
    for node in reversed(list(graph.nodes)):   # the matched nodes, now unused, last first
        if node in matched and not node.users:
            graph.erase_node(node)
