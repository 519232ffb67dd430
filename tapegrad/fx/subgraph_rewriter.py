"""replace_pattern (PyTorch's torch.fx.subgraph_rewriter): every non-overlapping match of a pattern's
graph in a GraphModule's graph replaced by the replacement's graph.

Matching is SubgraphMatcher's (passes/utils/matcher_utils.py). A pattern may return several values (a
tuple): each use of the i-th matched output is rewired to the replacement's i-th output. The
replacement goes just before the first node that reads any matched output, as torch.fx places it.
"""
import copy
from dataclasses import dataclass
from typing import NamedTuple

from ..nn import Module
from ._node import Node, _map_nodes
from .graph import Graph

__all__ = ["Match", "replace_pattern", "replace_pattern_with_filters", "ReplacedPatterns"]


class Match(NamedTuple):
    anchor: Node     # the pattern's node the match was found from
    nodes_map: dict  # pattern node -> graph node


@dataclass
class ReplacedPatterns:
    anchor: Node        # the pattern's node the match was found from
    nodes_map: dict     # pattern node -> graph node
    replacements: list  # the nodes added to the graph


def replace_pattern(gm, pattern, replacement):
    """Rewrite gm in place (and recompile it); returns the matches, in the order they were found."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                                 replacement_callback=None, node_name_match=""):
    """replace_pattern, keeping only matches every match_filter(match, graph, pattern_graph) accepts;
    replacement_callback(match, graph, pattern_graph) may build each match's replacement graph."""
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals, replacement_callback,
                            node_name_match)


def _graph_of(fn):
    from . import symbolic_trace
    from .graph_module import GraphModule
    if isinstance(fn, GraphModule):
        return fn.graph
    return fn if isinstance(fn, Graph) else symbolic_trace(fn).graph


def _replace_pattern(gm, pattern, replacement=None, match_filters=None, ignore_literals=False,
                     replacement_callback=None, node_name_match=""):
    from .passes.utils.matcher_utils import SubgraphMatcher
    graph, pattern_graph = gm.graph, _graph_of(pattern)
    matcher = SubgraphMatcher(pattern_graph, match_output=False, match_placeholder=False,
                              remove_overlapping_matches=True, ignore_literals=ignore_literals)
    matches = [m for m in matcher.match(graph, node_name_match=node_name_match)
               if all(keep(m, graph, pattern_graph) for keep in match_filters or [])]
    if replacement is None and replacement_callback is None:
        raise AssertionError("Must provide either a replacement GraphModule or a replacement callback; pass "
                             "replacement= or replacement_callback=.")
    common = _graph_of(replacement) if replacement is not None and replacement_callback is None else None
    changed = {}   # a graph node rewritten by an earlier match -> the node that replaced it
    done = []
    for match in matches:
        replacement_graph = common if common is not None else replacement_callback(match, graph, pattern_graph)
        done.append(_substitute(graph, pattern_graph, match, replacement_graph, changed))
    gm.recompile()
    if isinstance(replacement, Module):
        _replace_attributes(gm, replacement)
    return done


def _replace_attributes(gm, replacement):
    """Submodules and attributes the replacement's nodes name, deep-copied into gm where gm lacks them."""
    gm.delete_all_unused_submodules()
    for node in gm.graph.nodes:
        if node.op not in ("call_module", "get_attr"):
            continue
        if _try_get_attr(gm, node.target) is not None:   # gm's own attribute takes precedence
            continue
        value = _try_get_attr(replacement, node.target)
        if value is None:
            raise RuntimeError(f'Attempted to create a "{node.op}" node during subgraph rewriting with target '
                               f"{node.target}, but the referenced attribute does not exist in the replacement "
                               "GraphModule; give the replacement module that attribute.")
        if isinstance(value, Module):
            gm.add_submodule(node.target, copy.deepcopy(value))
        else:
            setattr(gm, node.target, copy.deepcopy(value))
    gm.graph.lint()


def _try_get_attr(module, target):
    path, _, name = target.rpartition(".")
    try:
        owner = module.get_submodule(path)
    except AttributeError:
        return None
    return getattr(owner, name, None)


def _substitute(graph, pattern_graph, match, replacement_graph, changed):
    placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(match.placeholder_nodes) != len(placeholders):
        raise AssertionError(f"Placeholder count mismatch: {len(match.placeholder_nodes)} vs {len(placeholders)}; "
                             "give the replacement the same parameters as the pattern.")
    val_map = {}
    for rn, gn in zip(placeholders, match.placeholder_nodes):
        if isinstance(gn, Node) and gn in changed:   # an input that an earlier match replaced
            new = changed[gn]
            match.placeholder_nodes[match.placeholder_nodes.index(gn)] = new
            key = next(p for p, g in match.nodes_map.items() if g is gn)
            match.nodes_map[key] = new
            gn = new
        val_map[rn] = gn
    with graph.inserting_before(_insert_point(graph, match.returning_nodes)):
        outputs = _graph_copy(graph, replacement_graph, val_map)
    if isinstance(outputs, Node):
        outputs = (outputs,)
    added = [v for v in val_map.values() if not any(v is p for p in match.placeholder_nodes)]
    if len(match.returning_nodes) != len(outputs):
        raise AssertionError(f"Returning nodes count mismatch: {len(match.returning_nodes)} vs {len(outputs)}; "
                             "the replacement must return as many values as the pattern.")
    for gn, new in zip(match.returning_nodes, outputs):
        gn.replace_all_uses_with(new)
        changed[gn] = new
    for node in reversed(pattern_graph.nodes):   # the matched nodes, now unused, last first
        if node.op not in ("placeholder", "output"):
            graph.erase_node(match.nodes_map[node])
    return ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map, replacements=added)


def _insert_point(graph, returning):
    """The first node that reads a matched output; without one, the node after the last matched output."""
    users = {user for node in returning for user in node.users}
    nodes = list(graph.nodes)
    if users:
        return next(n for n in nodes if n in users)
    last = max(i for i, n in enumerate(nodes) if any(n is r for r in returning))
    if last + 1 == len(nodes):
        raise AssertionError("The insert point can't be None")
    return nodes[last + 1]


def _graph_copy(graph, source, val_map):
    """source's nodes copied into graph (val_map seeds and collects the mapping); its output value."""
    for node in source.nodes:
        if node in val_map:
            continue
        if node.op == "output":
            return _map_nodes(node.args[0], val_map.__getitem__)
        val_map[node] = graph.node_copy(node, val_map.__getitem__)
    return None
