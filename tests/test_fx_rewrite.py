"""tapegrad.fx.replace_pattern / replace_pattern_with_filters against torch.fx's subgraph rewriter: each
program, pattern and replacement is written once for a library `lib` and rewritten by both; the matches
(anchors, node maps), the rewritten graphs and their results are compared."""
import pytest

import tapegrad
import tapegrad.fx
from conftest import assert_close, from_torch
from test_fx_tracer import _same_graph


def _names(nodes_map):
    """A match's node map as pattern name -> graph name (literals as themselves)."""
    return {p.name: getattr(g, "name", g) for p, g in nodes_map.items()}


def _code(code):
    """Generated code's statements, spaces and PyTorch's `;  x = None` releases dropped, names spelled alike."""
    lines = [line.split(";")[0].replace(" ", "").replace("tapegrad.", "torch.") for line in code.splitlines()]
    return [line for line in lines if line]


def _rewrite(make, torch, inputs, filters=False):
    """make(lib) -> (module, pattern, replacement[, kwargs]); rewritten by both, compared; returns the matches."""
    results = []
    for lib in (tapegrad, torch):
        module, pattern, replacement, *extra = make(lib)
        gm = lib.fx.symbolic_trace(module)
        if filters:
            matches = lib.fx.subgraph_rewriter.replace_pattern_with_filters(gm, pattern, replacement, **extra[0])
        else:
            matches = lib.fx.replace_pattern(gm, pattern, replacement)
        gm.graph.lint()
        results.append((gm, matches))
    (gm, matches), (tgm, tmatches) = results
    assert len(matches) == len(tmatches)
    assert [m.anchor.name for m in matches] == [m.anchor.name for m in tmatches]
    assert [_names(m.nodes_map) for m in matches] == [_names(m.nodes_map) for m in tmatches]
    if filters:
        assert [[n.name for n in m.replacements] for m in matches] == \
            [[n.name for n in m.replacements] for m in tmatches]
    _same_graph(gm, tgm)
    assert _code(gm.code) == _code(tgm.code)
    ours, theirs = gm(*[from_torch(x) for x in inputs]), tgm(*inputs)
    ours, theirs = (ours, theirs) if isinstance(theirs, tuple) else ((ours,), (theirs,))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
    return matches


def _module(lib, forward):
    """The program traced: a plain function (both tracers name its parameters after its signature)."""
    return forward


def test_pattern_with_two_outputs(torch):
    """Each output's uses are rewired to the replacement's output at the same position."""
    def make(lib):
        def forward(x, y):
            a, b = lib.relu(x), lib.sigmoid(x)
            c, d = lib.relu(y), lib.sigmoid(y)
            return a + b * c - d, lib.sigmoid(a)

        def pattern(x):
            return lib.relu(x), lib.sigmoid(x)

        def replacement(x):
            return lib.neg(x), lib.tanh(x)
        return _module(lib, forward), pattern, replacement
    x, y = torch.randn(4), torch.randn(4)
    assert len(_rewrite(make, torch, (x, y))) == 2


def test_returned_node_read_inside_the_pattern(torch):
    """A returned value that the pattern reads too is no anchor, and may be read outside the match."""
    def make(lib):
        def forward(x):
            a = lib.relu(x)
            b = a.sigmoid()
            return a * 2 + b, lib.relu(b).sigmoid()

        def pattern(x):
            a = lib.relu(x)
            return a, a.sigmoid()

        def replacement(x):
            a = lib.tanh(x)
            return a, a.exp()
        return _module(lib, forward), pattern, replacement
    assert len(_rewrite(make, torch, (torch.randn(5),))) == 2


def test_intermediate_read_outside_is_no_match(torch):
    def make(lib):
        def forward(x):
            a = lib.exp(x)
            return lib.sigmoid(a), a.sum()
        return _module(lib, forward), lambda x: lib.sigmoid(lib.exp(x)), lambda x: lib.neg(x)
    assert len(_rewrite(make, torch, (torch.randn(3),))) == 0

    def make_two(lib):
        def forward(x, y):
            e, f = lib.exp(x), lib.exp(y)
            return lib.cos(e) + lib.sin(e), e.sum(), lib.cos(f) * lib.sin(f)

        def pattern(x):
            e = lib.exp(x)
            return lib.cos(e), lib.sin(e)
        return _module(lib, forward), pattern, lambda x: (lib.sin(x), lib.cos(x))
    assert len(_rewrite(make_two, torch, (torch.randn(3), torch.randn(3)))) == 1


def test_cycle_and_shared_input_rules(torch):
    """No match whose fusion would form a cycle, and no two pattern inputs bound to one node (as torch.fx)."""
    def make(lib):
        def forward(x, z):
            a = lib.relu(x)
            u = a + 1.5
            b = lib.sigmoid(u)
            return b * 3, z + z, lib.relu(z), lib.sigmoid(x)

        def pattern(x, y):
            return lib.relu(x), lib.sigmoid(y)

        def replacement(x, y):
            return lib.neg(y), lib.exp(x)
        return _module(lib, forward), pattern, replacement
    assert len(_rewrite(make, torch, (torch.randn(3), torch.randn(3)))) == 1

    def make2(lib):
        return _module(lib, lambda x, y: (x + x) * (x + y)), lambda a, b: a + b, lambda a, b: a - b
    assert len(_rewrite(make2, torch, (torch.randn(3), torch.randn(3)))) == 1


def test_inputs_bound_to_literals_and_chained_matches(torch):
    """A pattern input matches a literal; a later match reads the output an earlier one replaced."""
    def make(lib):
        def forward(x):
            return lib.relu(lib.relu(x + 2.0) * 3.0)

        def pattern(a, b):
            return lib.relu(a * b)

        def replacement(a, b):
            return lib.sigmoid(a) - b
        return _module(lib, forward), pattern, replacement
    assert len(_rewrite(make, torch, (torch.randn(4),))) == 1

    def chain(lib):
        return _module(lib, lambda x: lib.relu(lib.relu(lib.relu(x)))), lambda a: lib.relu(a), \
            lambda a: lib.tanh(a)
    assert len(_rewrite(chain, torch, (torch.randn(4),))) == 3


def test_replace_pattern_with_filters(torch):
    """match_filters, ignore_literals, replacement_callback and node_name_match; ReplacedPatterns' replacements."""
    def make(lib):
        def forward(x, y):
            return lib.relu(x * 2.0), lib.relu(y * 3.0), lib.relu(x * y)

        def pattern(a):
            return lib.relu(a * 2.0)
        only_x = lambda m, g, p: m.placeholder_nodes[0].name == "x"
        return _module(lib, forward), pattern, lambda a: lib.tanh(a), \
            dict(match_filters=[only_x], ignore_literals=True)
    assert len(_rewrite(make, torch, (torch.randn(3), torch.randn(3)), filters=True)) == 2   # x * 2.0, x * y

    def make_callback(lib):
        def callback(match, graph, pattern_graph):
            op = lib.exp if match.placeholder_nodes[0].name == "x" else lib.cos
            return lib.fx.symbolic_trace(lambda a: op(a)).graph
        return _module(lib, lambda x, y: (lib.relu(x) + lib.relu(y)) * lib.relu(x + y)), \
            (lambda a: lib.relu(a)), None, dict(replacement_callback=callback)
    assert len(_rewrite(make_callback, torch, (torch.randn(3), torch.randn(3)), filters=True)) == 3

    def make_named(lib):
        return _module(lib, lambda x: lib.relu(x).sum() + lib.sigmoid(x).sum()), (lambda a: lib.exp(a)), \
            (lambda a: lib.neg(a)), dict(node_name_match="sigmoid")
    assert len(_rewrite(make_named, torch, (torch.randn(3),), filters=True)) == 1


def _errors(torch, forward, pattern, replacement, kind):
    """The error both libraries raise for replace_pattern(forward, pattern, replacement): (ours, theirs)."""
    errors = []
    for lib in (tapegrad, torch):
        gm = lib.fx.symbolic_trace(forward(lib))
        with pytest.raises(kind) as info:
            lib.fx.replace_pattern(gm, pattern(lib), replacement(lib))
        errors.append(str(info.value))
    return errors


def test_errors(torch):
    forward = lambda lib: lambda x: lib.relu(x) + lib.sigmoid(x)
    ours, theirs = _errors(torch, forward, lambda lib: lambda x: (lib.relu(x), lib.sigmoid(x)),
                           lambda lib: lambda x: lib.neg(x), AssertionError)
    assert ours.startswith(theirs) and "Returning nodes count mismatch" in theirs
    ours, theirs = _errors(torch, forward, lambda lib: lambda x: lib.relu(x),
                           lambda lib: lambda x, y: lib.neg(x), AssertionError)
    assert ours.startswith(theirs) and "Placeholder count mismatch" in theirs
    ours, theirs = _errors(torch, forward, lambda lib: lambda x, y: lib.relu(x),
                           lambda lib: lambda x, y: lib.neg(x), KeyError)
    assert ours.strip("'\"").startswith(theirs.strip("'"))

    def dead(lib):
        def pattern(x):
            lib.relu(x)
            return lib.sigmoid(x)
        return pattern
    ours, theirs = _errors(torch, forward, dead, lambda lib: lambda x: lib.neg(x), AssertionError)
    assert ours.startswith(theirs)


def test_output_without_candidates_is_no_match(torch):
    """Differs from torch.fx on purpose: a pattern output whose op the graph lacks gives no match
    (torch.fx raises KeyError while building the match from the other outputs)."""
    def make(lib):
        gm = lib.fx.symbolic_trace(lambda x: lib.relu(x) + 1)
        return gm, lambda x: (lib.relu(x), lib.sigmoid(x)), lambda x: (lib.neg(x), lib.neg(x))
    gm, pattern, replacement = make(torch)
    with pytest.raises(KeyError):
        torch.fx.replace_pattern(gm, pattern, replacement)
    gm, pattern, replacement = make(tapegrad)
    before = gm.code
    assert tapegrad.fx.replace_pattern(gm, pattern, replacement) == [] and gm.code == before


def test_replacement_module_submodules_copied_and_unused_dropped(torch):
    """A replacement GraphModule's submodules reach gm (deep copies); submodules nothing calls any more go."""
    torch.manual_seed(0)
    state = torch.nn.Linear(3, 3).state_dict()
    results = []
    for lib in (tapegrad, torch):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.act = lib.nn.ReLU()

            def forward(self, x):
                return self.act(x).sum(), lib.sigmoid(x)

        class Pattern(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.act = lib.nn.ReLU()

            def forward(self, x):
                return self.act(x), lib.sigmoid(x)

        class Replacement(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = lib.nn.Linear(3, 3)

            def forward(self, x):
                return self.proj(x), lib.tanh(x)
        replacement = Replacement()
        replacement.proj.load_state_dict({k: v if lib is torch else from_torch(v) for k, v in state.items()})
        gm = lib.fx.symbolic_trace(M())
        lib.fx.replace_pattern(gm, lib.fx.symbolic_trace(Pattern()), lib.fx.symbolic_trace(replacement))
        assert gm.proj is not replacement.proj
        results.append(gm)
    gm, tgm = results
    assert [n for n, _ in gm.named_modules()] == [n for n, _ in tgm.named_modules()] == ["", "proj"]
    _same_graph(gm, tgm)
    assert _code(gm.code) == _code(tgm.code)
    x = torch.randn(2, 3)
    for a, b in zip(gm(from_torch(x)), tgm(x)):
        assert_close(a, b)


@pytest.mark.parametrize("options", [{}, {"match_output": True}, {"match_placeholder": True},
                                     {"remove_overlapping_matches": False}])
def test_subgraph_matcher_options(torch, options):
    found = []
    for lib in (tapegrad, torch):
        from importlib import import_module
        matcher_utils = import_module(f"{lib.__name__}.fx.passes.utils.matcher_utils")
        graph = lib.fx.symbolic_trace(lambda x, y: lib.relu(lib.relu(x) + y) + lib.relu(y)).graph
        pattern = lib.fx.symbolic_trace(lambda a, b: lib.relu(a) + b).graph
        matches = matcher_utils.SubgraphMatcher(pattern, **options).match(graph)
        found.append([(_names(m.nodes_map), [n.name for n in m.placeholder_nodes],
                       [n.name for n in m.returning_nodes], [n.name for n in m.anchors]) for m in matches])
    assert found[0] == found[1]
