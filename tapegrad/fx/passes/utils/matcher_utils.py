"""SubgraphMatcher (PyTorch's torch.fx.passes.utils.matcher_utils): every place a pattern graph occurs
in a graph, as InternalMatch records.

The pattern's anchors are the nodes it returns that nothing else in it reads (a pattern returning a
tuple has several). Each anchor is tried against every graph node, walking data dependencies backwards
in both graphs at once; the anchors' walks must agree on shared nodes (backtracking over candidates,
as torch.fx). Pattern placeholders match any node or literal, but two pattern nodes never match the
same graph node. A match is kept when only the returned nodes are read from outside it, when fusing it
would not form a cycle, and (remove_overlapping_matches) when it shares no computed node with an
earlier match.
"""
import copy
from dataclasses import dataclass, field

from ..._node import Node
from ...graph import _impure

__all__ = ["SubgraphMatcher", "InternalMatch"]


@dataclass
class InternalMatch:
    anchors: list                                            # the pattern's anchor nodes
    nodes_map: dict = field(default_factory=dict)            # pattern node -> graph node (or literal)
    placeholder_nodes: list = field(default_factory=list)    # what the pattern's placeholders matched
    returning_nodes: list = field(default_factory=list)      # graph nodes matched by the pattern's outputs
    name_node_map: dict = field(default_factory=dict)

    def __copy__(self):
        return InternalMatch(anchors=self.anchors, nodes_map=self.nodes_map.copy(),
                             placeholder_nodes=self.placeholder_nodes.copy(),
                             returning_nodes=self.returning_nodes.copy())


class SubgraphMatcher:
    def __init__(self, pattern, match_output=False, match_placeholder=False, remove_overlapping_matches=True,
                 ignore_literals=False):
        self.pattern, self.match_output, self.match_placeholder = pattern, match_output, match_placeholder
        self.remove_overlapping_matches, self.ignore_literals = remove_overlapping_matches, ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern; trace a function "
                             "that computes something.")
        for node in pattern.nodes:
            if node.op not in ("output", "placeholder") and not _impure(node) and not node.users:
                raise AssertionError("SubgraphMatcher cannot be initialized with an pattern with dead code: "
                                     f"{node} is unused; drop it (or unused parameters) from the pattern.")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes = output_node.all_input_nodes
        if match_output:
            self.pattern_anchors = [output_node]
        else:   # graph sinks: returned nodes read by the output alone
            self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    def _nodes_are_equal(self, pn, gn, node_name_match=""):
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if node_name_match and node_name_match in gn.name:
            return True
        if pn.op != gn.op:
            return False
        if pn.op in ("placeholder", "output"):
            return True
        if pn.op == "get_attr":
            return _same_attribute_kind(pn, gn)
        return pn.target == gn.target

    def _is_contained(self, nodes_map):
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:   # returned values may be read anywhere
                continue
            if any(user not in lookup for user in gn.users):
                return False
        return True

    def _remove_overlapping_matches(self, matches):
        kept, taken = [], set()
        for match in matches:
            computed = [gn for pn, gn in match.nodes_map.items() if pn.op not in ("placeholder", "output")]
            if not any(gn in taken for gn in computed):
                kept.append(match)
                taken.update(computed)
        return kept

    def _match_literals(self, pn, gn, match):
        if isinstance(pn, Node):   # a placeholder stands for any literal too
            if pn.op != "placeholder":
                return False
            if pn in match.nodes_map:
                return match.nodes_map[pn] == gn
            match.nodes_map[pn] = gn
            return True
        if isinstance(gn, Node):
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn, gn, match, node_name_match=""):
        if pn in match.nodes_map:
            return match.nodes_map[pn] is gn
        if any(v is gn for v in match.nodes_map.values()):
            return False
        if not self._nodes_are_equal(pn, gn, node_name_match):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True
        if len(pn.args) != len(gn.args) or list(pn.kwargs) != list(gn.kwargs):
            return False
        return self._match_args([*pn.args, *pn.kwargs.values()], [*gn.args, *gn.kwargs.values()], match)

    def _match_args(self, args1, args2, match):
        if len(args1) != len(args2):
            return False
        for a1, a2 in zip(args1, args2):
            if isinstance(a1, Node) and isinstance(a2, Node):
                matched = self._match_nodes(a1, a2, match)
            elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                matched = self._match_args(a1, a2, match)
            else:
                matched = self._match_literals(a1, a2, match) or self.ignore_literals
            if not matched:
                return False
        return True

    def match(self, graph, node_name_match=""):
        """The matched subgraphs, self-contained (only placeholders' and returned nodes' values cross them)."""
        candidates = [(anchor, [n for n in graph.nodes if self._nodes_are_equal(anchor, n, node_name_match)])
                      for anchor in self.pattern_anchors]
        matches = []

        def backtrack(index, match):
            if index == len(candidates):
                unused = [pn.name for pn in self.pattern_placeholder_nodes if pn not in match.nodes_map]
                if unused:   # torch.fx's KeyError, with the reason
                    raise KeyError(f"{unused[0]}: the pattern's parameter {unused[0]} is never used; every "
                                   "parameter of a pattern must be used in it (drop the unused ones).")
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidates[index]
            for node in nodes:
                trial = copy.copy(match)
                if self._match_nodes(anchor, node, trial, node_name_match):
                    backtrack(index + 1, trial)

        if candidates and all(nodes for _, nodes in candidates):   # (torch.fx raises KeyError otherwise)
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        matches = [m for m in matches
                   if _acyclic([gn for pn, gn in m.nodes_map.items() if pn.op not in ("placeholder", "output")])]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping_matches(matches)
        return matches


def _same_attribute_kind(pn, gn):
    """get_attr nodes match when both name tensors (their values may differ), as torch.fx."""
    from ...._tensor import Tensor
    pv, gv = _get_attr(pn), _get_attr(gn)
    if type(pv) is not type(gv):
        return False
    if isinstance(pv, Tensor):
        return isinstance(gv, Tensor)
    raise RuntimeError(f"Unsupported type {pv} when matching attributes; a pattern's get_attr may only "
                       "name a tensor.")


def _get_attr(node):
    out = node.graph.owning_module
    for part in node.target.split("."):
        out = getattr(out, part)
    return out


def _acyclic(partition):
    """Fusing the partition would form no cycle: no path leaves it and comes back (validate_partition)."""
    inside = set(partition)
    queue = [user for node in inside for user in node.users if user not in inside]
    visited = set()
    while queue:
        current = queue.pop()
        visited.add(current)
        if current in inside:
            return False
        queue.extend(user for user in current.users if user not in visited)
    return True
